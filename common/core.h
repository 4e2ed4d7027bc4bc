/*
 * The read core, the .c files at common/'s root: the generic B-tree
 * reader driven by each tree's ops, inodes (loaded, decoded, seen through a version by
 * vinode_ops), file maps, directories and names, the atom table file,
 * the live bitmap and countmap, orphans, log scan and replay, and raw
 * access for editors.  It reads a volume and rebuilds its in-memory
 * state from the log; it changes nothing on disk.
 * May call: format/, io/.  Versions plug in through vinode_ops, set by
 * the open, so the core never names the version layer.
 */
#ifndef TUX3_CORE_H
#define TUX3_CORE_H

#include "format/format.h"

/* ---- btree.c ---- */
struct btree {
	struct tux3_volume *vol;
	struct root root;
	const struct btree_ops *ops;
	tux3_ino_t owner;	/* inode whose tree it is (0 for itree) */
};
struct cursor_level {
	uint64_t blocknr;
	uint8_t *buf;
	unsigned index;		/* entry taken at this level */
	unsigned count;
	uint64_t lo, hi;	/* key range of this node */
};
struct cursor {
	struct btree *btree;
	struct tux3_volume *vol;	/* whose spare buffers path[] takes */
	int depth;		/* levels in path (== root.depth) */
	struct cursor_level path[TUX3_MAX_DEPTH + 1];
};
int btree_probe(struct btree *bt, uint64_t key, struct cursor *c);
/* Advance to next leaf: 1 moved, 0 end of tree, <0 error */
int btree_next_leaf(struct cursor *c);
void cursor_release(struct cursor *c);
void cursor_leaf_range(struct cursor *c, uint64_t *lo, uint64_t *hi);
/* Where a node sits in a traversal (btree_visit.bad_at): its range, and
 * the index node above it with the entry that points at it. */
struct btree_pos {
	int level;		/* 0 = root */
	uint64_t blocknr;
	uint64_t lo, hi;	/* key range the parent gives it */
	uint64_t parent;	/* TUX3_NONE for the root */
	unsigned index;		/* entry in the parent */
	bool twice;		/* reached a second time in this tree (a
				 * cycle or a shared node): not read */
};
/* Whole-tree traversal (the walker's engine). Callbacks return 0 to go
 * on, >0 (bnode only) to skip the children, <0 to stop. */
struct btree_visit {
	int (*bnode)(void *ctx, struct btree *bt, int level, uint64_t blocknr,
		     const uint8_t *buf, uint64_t lo, uint64_t hi);
	int (*leaf)(void *ctx, struct btree *bt, uint64_t blocknr,
		    const uint8_t *buf, uint64_t lo, uint64_t hi);
	int (*bad)(void *ctx, struct btree *bt, int level, uint64_t blocknr,
		   int err);
	/* When set, called instead of bad, with where the node hangs. */
	int (*bad_at)(void *ctx, struct btree *bt,
		      const struct btree_pos *pos, int err);
};
int btree_traverse(struct btree *bt, const struct btree_visit *v, void *ctx);
static inline uint8_t *cursor_leaf(struct cursor *c)
{
	return c->path[c->depth - 1].buf;
}
static inline uint64_t cursor_leaf_block(struct cursor *c)
{
	return c->path[c->depth - 1].blocknr;
}

/* ---- filemap.c ---- */
/* filemap.c: extent iteration of an inode's data (direct or tree) */
struct extent {
	uint64_t logical, physical, count;	/* physical 0 = hole */
	uint32_t version;
	uint64_t leafblock;	/* dleaf, 0 for a direct extent */
};
typedef int (*extent_fn)(void *ctx, const struct extent *e);
void inode_readahead_map(struct tux3_volume *vol, uint64_t inum);
void inode_readahead_data(struct tux3_volume *vol, uint64_t inum);
int filemap_walk(struct tux3_volume *vol, const struct inode *inode,
		 uint64_t start, uint64_t end, extent_fn fn, void *ctx);
/* Map one logical block: *physical 0 = hole; *run = blocks mapped
 * contiguously (or hole length) from there. */
int filemap_lookup(struct tux3_volume *vol, const struct inode *inode,
		   uint64_t logical, uint64_t *physical, uint64_t *run);
/* Read a whole block of a file (holes read as zeros). */
/* The first mapped block (not a hole) in [from, end), or end. */
int filemap_next_mapped(struct tux3_volume *vol, const struct inode *inode,
			uint64_t from, uint64_t end, uint64_t *logical);
int filemap_read_block(struct tux3_volume *vol, const struct inode *inode,
		       uint64_t logical, uint8_t *buf);
int inode_read(struct tux3_volume *vol, const struct inode *inode, void *buf,
	       size_t len, uint64_t pos, size_t *done);

/* ---- inode.c ---- */
/*
 * How a volume with versions reads and changes its inodes and file data:
 * the version layer's table (version/vinode.c: vinode_ops), which the
 * open sets on every volume.  The core and the write path ask
 * vinode_applies() and call through it, so that they never name the
 * version layer that is built on them; NULL (a bare in-memory volume)
 * means the 2014 paths only.
 */
struct vinode_ops {
	/* inodes: the blob as the selected version reads it (a 2014 blob),
	 * and that view's changes merged back into every version's blob */
	int (*view)(struct tux3_volume *vol, tux3_ino_t inum,
		    const uint8_t *blob, unsigned len, uint8_t **view,
		    unsigned *vlen);
	int (*merge)(struct tux3_volume *vol, tux3_ino_t inum,
		     const uint8_t *disk, unsigned dlen, const uint8_t *view,
		     unsigned vlen, uint8_t **out, unsigned *olen);
	/* room for the store an operation ends with (-ENOSPC first) */
	int (*room)(struct tux3_volume *vol, tux3_ino_t inum);
	/* file data in the selected version */
	int (*write_data)(struct tux3_volume *vol, struct inode *inode,
			  const void *buf, size_t len, uint64_t pos);
	int (*truncate)(struct tux3_volume *vol, struct inode *inode,
			uint64_t size);
	int (*destroy)(struct tux3_volume *vol, struct inode *inode);
	/* the file's tree is one of versioned leaves; its extents as the
	 * selected version sees them */
	bool (*file_versioned)(struct tux3_volume *vol,
			       const struct inode *inode);
	int (*filemap_walk)(struct tux3_volume *vol, const struct inode *inode,
			    uint64_t start, uint64_t end, extent_fn fn,
			    void *ctx);
	/* the version table, changed by a write (an implicit child), saved
	 * with the delta */
	int (*table_save)(struct tux3_volume *vol);
	/* the version index's records the delta added (version/vindex.c) */
	int (*index_save)(struct tux3_volume *vol);
	/* the blob of every version, read and stored whole: the part past
	 * the leaf (format.md 17.3b) read and written with it */
	int (*blob_read)(struct tux3_volume *vol, tux3_ino_t inum,
			 uint8_t **blob, unsigned *len);
	int (*blob_store)(struct tux3_volume *vol, tux3_ino_t inum,
			  const uint8_t *blob, unsigned len);
};
/* The inode is seen through a version: the volume has a version table
 * and the inode is not internal. */
static inline bool vinode_applies(const struct tux3_volume *vol,
				  tux3_ino_t inum)
{
	return vol->vops && vol->vt && inum >= TUX3_ROOT_INO;
}
/* Room in the inode's blob for the store an operation ends with: on a
 * volume with versions, checked for every inode an operation changes
 * before it changes any (-ENOSPC, the volume untouched). */
static inline int inode_room(struct tux3_volume *vol, tux3_ino_t inum)
{
	return vinode_applies(vol, inum) ? vol->vops->room(vol, inum) : 0;
}
/* The inode's blob as its leaf stores it (malloc'd copy; *len 0: no
 * inode).  On a volume with versions that may be only a part of it:
 * vblob_read (version/vinode.h) gives the whole. */
int itree_blob(struct tux3_volume *vol, tux3_ino_t inum, uint8_t **blob,
	       unsigned *len);
int inode_load(struct tux3_volume *vol, tux3_ino_t inum, struct inode *inode);
/* inode_load past damage of the itree's index nodes (fsck's salvage). */
int inode_load_salvage(struct tux3_volume *vol, tux3_ino_t inum,
		       struct inode *inode);
/* The same for a directory: -ENOTDIR (nothing held) for another kind. */
int inode_load_dir(struct tux3_volume *vol, tux3_ino_t ino, struct inode *dir);
void inode_free(struct inode *inode);
int inode_from_blob(struct tux3_volume *vol, tux3_ino_t inum,
		    const uint8_t *blob, unsigned len, uint64_t leafblock,
		    struct inode *inode);
unsigned inode_dtype(uint32_t mode);

/* ---- dir.c ---- */
/* dir.c: every live record of a directory, through its file map */
int dir_iterate(struct tux3_volume *vol, const struct inode *dir,
		dirent_fn fn, void *ctx);
/* The records at byte position start or later (a resumed readdir). */
int dir_iterate_from(struct tux3_volume *vol, const struct inode *dir,
		     uint64_t start, dirent_fn fn, void *ctx);
/* The same, but a block whose records fail validation is reported to bad
 * (the error, its logical and physical block; the records before the
 * damage were passed to fn) and the walk goes on; bad's non-zero return
 * ends it.  For the checker. */
typedef int (*dirent_bad_fn)(void *ctx, const struct tux3_error *err,
			     uint64_t logical, uint64_t blocknr);
int dir_iterate_salvage(struct tux3_volume *vol, const struct inode *dir,
			dirent_fn fn, dirent_bad_fn bad, void *ctx);
/* Every block of a directory in order (holes skipped), read into one
 * buffer: fn gets it with the read's result; its non-zero return ends
 * the walk. */
typedef int (*dir_block_fn)(void *ctx, uint64_t logical, uint64_t physical,
			    const uint8_t *blk, int read_err);
int dir_walk_blocks(struct tux3_volume *vol, const struct inode *dir,
		    dir_block_fn fn, void *ctx);
/* The same from logical block first on. */
int dir_walk_blocks_from(struct tux3_volume *vol, const struct inode *dir,
			 uint64_t first, dir_block_fn fn, void *ctx);
/* One block of a directory by its logical number, counted in
 * vol->dir_block_reads as the walks count theirs. */
int dir_read_block(struct tux3_volume *vol, const struct inode *dir,
		   uint64_t logical, uint8_t *buf);

/* ---- dir_index.c ---- */
#include "dir_index.h"
/* ---- dirhash.c ---- */
#include "dirhash.h"
/* dir.c: find name through the on-disk index, else the in-memory one:
 * 0 and d (d->name may be NULL), -ENOENT, DIR_INDEX_NONE (take the
 * linear path), or a negative errno. */
int dir_lookup_indexed(struct tux3_volume *vol, const struct inode *dir,
		       const char *name, unsigned len, struct dirent_info *d);

/* ---- namei.c ---- */
void inode_to_stat(struct tux3_volume *vol, const struct inode *inode,
		   struct tux3_stat *st, uint64_t blocks);
int inode_count_blocks(struct tux3_volume *vol, const struct inode *inode,
		       uint64_t *blocks);

/* ---- atom.c ---- */
int atable_load(struct tux3_volume *vol);
const char *atom_name(struct tux3_volume *vol, unsigned atom);
int atom_refcount(struct tux3_volume *vol, unsigned atom, uint32_t *ref);
int atom_unatom(struct tux3_volume *vol, unsigned atom, uint64_t *val);
void atable_free(struct atom_table *at);

/* ---- bitmap.c ---- */
int bitmap_init(struct tux3_volume *vol);
/* After a bitmap_init that failed on the bitmap inode: read it with
 * inode_load_salvage (fsck). */
int bitmap_init_salvage(struct tux3_volume *vol);
void bitmap_free(struct bitmap *bm);
/* returns 1 set, 0 clear, <0 error */
int bitmap_test(struct tux3_volume *vol, uint64_t block);
/* Test-and-modify a run. Returns 0, or the number of blocks whose bit was
 * already in the target state (conflict), or <0 on error. Applies anyway. */
int64_t bitmap_modify(struct tux3_volume *vol, uint64_t start,
		      uint64_t count, bool set);
int bitmap_ondisk_chunk(struct tux3_volume *vol, uint64_t index,
			uint8_t *buf);
/* The live chunk (bitmap block) index, loaded on first use; NULL with
 * *err set when it cannot be read. */
uint8_t *bitmap_chunk(struct tux3_volume *vol, uint64_t index, int *err);
struct spacemap_chunk *bitmap_chunk_get(struct tux3_volume *vol,
					uint64_t index, int *err);
/* The first chunk at from or after that exists (in the bitmap file or
 * in memory), or nchunks: every other chunk is a hole, all free. */
int bitmap_next_chunk(struct tux3_volume *vol, uint64_t from,
		      uint64_t *index);
/* The same for the bitmap file alone. */
int bitmap_ondisk_next(struct tux3_volume *vol, uint64_t from,
		       uint64_t *index);
int bitmap_group_used(struct tux3_volume *vol, uint64_t group,
		      uint64_t *used);
typedef int (*bitmap_run_fn)(void *ctx, uint64_t chunk, uint64_t start,
			     uint64_t count, int stale);
int bitmap_runs(struct tux3_volume *vol, bitmap_run_fn fn, void *ctx);
int bitmap_count_used(struct tux3_volume *vol, uint64_t start, uint64_t count,
		      uint64_t *used);
int countmap_ondisk(struct tux3_volume *vol, uint64_t group, uint32_t *count);

/* ---- orphan.c ---- */
int orphan_add(struct orphan_set *s, tux3_ino_t inum);
bool orphan_del(struct orphan_set *s, tux3_ino_t inum);
bool orphan_has(const struct orphan_set *s, tux3_ino_t inum);
int otree_load(struct tux3_volume *vol, struct orphan_set *s);
int orphans_resolve(struct tux3_volume *vol);
/* orphans_resolve keeping what a damaged orphan table's readable leaves
 * hold (fsck). */
int orphans_resolve_salvage(struct tux3_volume *vol);
void orphan_set_free(struct orphan_set *s);

/* ---- replay.c ---- */
int defer_unify_add(struct tux3_volume *vol, uint64_t block, uint32_t count);
int replay_load_log(struct tux3_volume *vol);
void log_forget_loaded(struct tux3_volume *vol);
int replay_stage1(struct tux3_volume *vol);
int replay_stage2(struct tux3_volume *vol);
/* Salvage mode for the replay that follows (fsck only; see replay.c):
 * what is damaged or does not apply is skipped and counted in
 * vol->salvage instead of failing the replay. */
void replay_salvage_mode(struct tux3_volume *vol);
/* Another block with the bytes of log block 'block': 1 and *twin when
 * found (of two alike one is a copy), 0 when not, <0. */
int log_block_twin(struct tux3_volume *vol, uint64_t block,
		   const uint8_t *data, uint64_t *twin);
/* The same for n log blocks in one pass: twin[k] or TUX3_NONE each;
 * returns how many have one, <0. */
int log_blocks_twins(struct tux3_volume *vol, const uint64_t *blocks,
		     uint8_t *const *data, unsigned n, uint64_t *twin);
/* ---- replay_index.c ---- */
/* Salvage mode, after stage 1: the inode table's root bnode, when no
 * record left an image of it, rebuilt from the ileaves on the volume. */
int replay_salvage_index(struct tux3_volume *vol);

/* ---- raw.c ---- */
/* raw.c: 0, or -ERANGE (the volume error set) when len bytes at offset
 * run past the device end */
int raw_range(struct tux3_volume *vol, uint64_t offset, size_t len);

#endif

/*
 * common/write/: every change to a volume.  B-tree edits (copy-on-write,
 * logged), allocation and deferred frees, the log writer, commit and
 * unify (rollup), inode, file map, directory, orphan, atom and xattr
 * writes, fallocate, raw edits, mkfs's empty-volume layout, and the
 * repair primitives the check engine calls.  A change is logged in the
 * delta being built and made durable by delta_commit.
 * May call: the core, format/, io/; versions through vinode_ops.
 */
#ifndef TUX3_WRITE_H
#define TUX3_WRITE_H

#include "core.h"

/* ---- btree_edit.c ---- */
/* btree_edit.c: changing trees (copy-on-write, logged) */
struct wpath {
	int depth;
	struct { uint64_t block; unsigned index; uint64_t lo, hi; }
		lv[TUX3_MAX_DEPTH + 1];
};
int meta_alloc(struct tux3_volume *vol, uint64_t goal, unsigned flags,
	       uint64_t *block, uint8_t **img);
int btree_wprobe(struct btree *bt, uint64_t key, struct wpath *p,
		 bool *root_moved);
uint8_t *wpath_leaf(struct tux3_volume *vol, const struct wpath *p);
int btree_split_leaf(struct btree *bt, struct wpath *p, bool *root_moved);
int btree_split_leaf_by(struct btree *bt, struct wpath *p,
			leaf_split_fn split, bool *root_moved);
int btree_create_leaf(struct btree *bt, uint64_t goal);
/* A new empty leaf for the keys [at, hi) of the leaf at the end of p
 * (lo < at < hi), which keeps [lo, at). */
int btree_split_leaf_at(struct btree *bt, struct wpath *p, uint64_t at,
			bool *root_moved);
/* btree_edit.c: every node of the tree given back, logged (leaves BFREE,
 * bnodes BNODE_FREE); what the leaves map is the caller's. */
int btree_free_nodes(struct btree *bt);

/* ---- balloc.c ---- */
int extent_list_add(struct extent_list *l, uint64_t block, uint64_t count);
void extent_list_free(struct extent_list *l);
/* A reserved inode (below 64) loaded, or made fresh when it does not
 * exist yet (the bitmap, the countmap, the version table). */
int internal_inode(struct tux3_volume *vol, tux3_ino_t inum,
		   struct inode *inode);
int balloc_init(struct tux3_volume *vol);
void balloc_release_reserve(struct tux3_volume *vol);
uint64_t balloc_reserve_size(const struct tux3_volume *vol);
/* blocks the open delta freed, free once it is committed */
uint64_t balloc_deferred(const struct tux3_volume *vol);
/* Find and take up to count free blocks near goal: *block, *got (a run,
 * possibly shorter than count).  Ordinary allocations leave the reserve
 * free (-ENOSPC); privileged ones (unlink, truncate, commit) may use it. */
int balloc(struct tux3_volume *vol, uint64_t goal, uint64_t count,
	   bool privileged, uint64_t *block, uint64_t *got);
/* Give blocks back at once (never committed: e.g. an allocation undone
 * inside the delta that made it). */
int bfree_now(struct tux3_volume *vol, uint64_t block, uint64_t count);
/* Free after the current delta commits. */
int bfree_deferred(struct tux3_volume *vol, uint64_t block, uint64_t count);
/* The commit is durable: deferred frees become free space. */
/* Before the commit point: the delta's frees are all of used blocks,
 * none twice (-EUCLEAN, the volume untouched, when not). */
int balloc_commit_check(struct tux3_volume *vol);
int balloc_commit_done(struct tux3_volume *vol);
int bitmap_flush(struct tux3_volume *vol);
uint64_t balloc_dir_goal(struct tux3_volume *vol);

/* ---- log_write.c ---- */
int log_append(struct tux3_volume *vol, const struct logrec *rec);
int log_balloc(struct tux3_volume *vol, uint64_t block, uint64_t count);
int log_bfree(struct tux3_volume *vol, unsigned code, uint64_t block,
	      uint64_t count);
int log_redirect(struct tux3_volume *vol, unsigned code, uint64_t oldb,
		 uint64_t newb);
int log_bnode_change(struct tux3_volume *vol, unsigned code, uint64_t parent,
		     uint64_t child, uint64_t key);
int log_write_blocks(struct tux3_volume *vol);
void wlog_free(struct wlog *w);

/* ---- commit.c ---- */
int delta_commit(struct tux3_volume *vol, bool force_unify);
/* Before a volume's first change: the commit bounds and the allocator. */
int write_begin(struct tux3_volume *vol);

/* ---- inode_write.c ---- */
int inode_encode(const struct inode *inode, uint8_t *buf, unsigned cap,
		 unsigned *len);
int inode_store(struct tux3_volume *vol, struct inode *inode);
/* Give inode the ATIME attribute with this value, on a volume with the
 * atime feature (format.md 15.6); nothing elsewhere. */
void inode_atime_set(const struct tux3_volume *vol, struct inode *inode,
		     int64_t atime_ns);
int inode_delete(struct tux3_volume *vol, uint64_t inum);
int inum_alloc(struct tux3_volume *vol, uint64_t goal, uint64_t *inum);
/* inode_write.c: a blob stored as it is (len 0: the inode deleted); on a
 * volume with versions a whole blob, whose part past the leaf goes to its
 * chain (format.md 17.3b) */
int itree_store(struct tux3_volume *vol, uint64_t inum, const uint8_t *blob,
		unsigned len);
/* The leaf's part alone, as it is (vspill_store's own store). */
int itree_store_leaf(struct tux3_volume *vol, uint64_t inum,
		     const uint8_t *blob, unsigned len);
int ileaf_rebase_to(struct tux3_volume *vol, uint8_t *leaf, uint64_t inum);
int itable_set(struct tux3_volume *vol, struct btree *bt, struct root *home,
	       uint64_t inum, const uint8_t *blob, unsigned len);

/* ---- filemap_write.c ---- */
int filemap_set(struct tux3_volume *vol, struct inode *inode,
		uint64_t logical, uint64_t physical, uint64_t count);

/* ---- namei_write.c ---- */
/* Writable, and the delta committed first if it is full. */
int change_begin(struct tux3_volume *vol);
/* Last link gone: the inode, its xattrs' references and its blocks go. */
int inode_destroy(struct tux3_volume *vol, struct inode *inode);

/* ---- data_write.c ---- */
/* Where a write's blocks go, per kind of file.  in_place (may be NULL):
 * 1 with *physical when the block at logical is rewritten where it is,
 * 0 when it moves, <0 an error.  place: homes for up to *n blocks from
 * logical in phys[] (*n may shrink), the file's map updated to them. */
#define DATA_RUN_MAX 1024	/* blocks placed in one step */
struct data_placement {
	int (*in_place)(struct tux3_volume *vol, struct inode *inode,
			uint64_t logical, uint64_t *physical);
	int (*place)(struct tux3_volume *vol, struct inode *inode,
		     uint64_t logical, uint64_t *n, uint64_t *phys,
		     bool privileged);
};
int data_write(struct tux3_volume *vol, struct inode *inode, const void *buf,
	       size_t len, uint64_t pos, bool privileged,
	       const struct data_placement *pl);
int inode_write_data(struct tux3_volume *vol, struct inode *inode,
		     const void *buf, size_t len, uint64_t pos, bool privileged);
int inode_truncate(struct tux3_volume *vol, struct inode *inode,
		   uint64_t size);
/* Every block of an unversioned map given back. */
int inode_free_unversioned(struct tux3_volume *vol, struct inode *inode);

/* ---- dirhash_write.c: the on-disk directory index (format.md 15.5) ---- */
/* A directory of this many blocks gets an index on its next add. */
#define DIRHASH_MIN_BLOCKS	4
/* Build dir's index from its entries (an old one is replaced): 0,
 * DIRHASH_NONE (the feature is off, an entry block does not decode, or
 * the hashes cannot be split), or a negative errno. */
int dirhash_build(struct tux3_volume *vol, struct inode *dir);
/* name was added to, or removed from, entry block logical: its pair
 * follows; an index that cannot follow (stale, damaged, out of step) is
 * rebuilt.  0 or a negative errno. */
int dirhash_added(struct tux3_volume *vol, struct inode *dir,
		  const char *name, unsigned len, uint64_t logical);
int dirhash_removed(struct tux3_volume *vol, struct inode *dir,
		    const char *name, unsigned len, uint64_t logical);

/* ---- dir_compact.c: a directory packed (fsck.tux3 -D) ---- */
struct dir_compact_result {
	uint64_t entries, blocks_before, blocks_after;
	bool changed;		/* written (else already packed) */
};
/* Pack dir's live records from block 0 in their order, give back the
 * blocks left over, rebuild its on-disk index (DIR_INDEX); dir is
 * stored.  0, -EOPNOTSUPP (a directory of a versioned volume), -EUCLEAN
 * (a block does not decode: nothing written), or a negative errno. */
int dir_compact(struct tux3_volume *vol, struct inode *dir,
		struct dir_compact_result *res);

/* ---- orphan_write.c ---- */
int orphan_unify(struct tux3_volume *vol);
int orphan_begin(struct tux3_volume *vol, uint64_t inum);
int orphan_end(struct tux3_volume *vol, uint64_t inum);
/* Forget inum's orphan record, leaving the inode alone: ORPHAN_DEL is
 * logged and the unify takes the record out of the otree (or, if it was
 * added this cycle, it never gets there).  orphan_end does this after
 * destroying the inode; fsck for an orphan that is not one any more.
 * The one copy of that bookkeeping. */
int orphan_forget(struct tux3_volume *vol, tux3_ino_t inum);
int orphans_release(struct tux3_volume *vol);
unsigned inode_open_count(struct tux3_volume *vol, tux3_ino_t ino);

/* ---- atom_write.c ---- */
/* An atom's reverse-map entry (its name's dictionary position, or the
 * free-list link). */
int atom_set_unatom(struct tux3_volume *vol, unsigned atom, uint64_t val);
/* Delete the dictionary record at byte pos in place. */
int atom_dict_delete(struct tux3_volume *vol, uint64_t pos);
/* Read (holes read as zeroes) or write len bytes at pos of the atom
 * table, the inode stored after a write. */
int atable_rw(struct tux3_volume *vol, uint64_t pos, void *buf,
	      unsigned len, bool write);
/* Byte position of an atom's refcount half (low or high 16 bits). */
uint64_t atom_refcount_pos(const struct tux3_volume *vol, unsigned atom,
			   bool high);
int atom_find(struct tux3_volume *vol, const char *name, unsigned *atom);
int atom_get(struct tux3_volume *vol, const char *name, unsigned *atom);
int atom_put(struct tux3_volume *vol, unsigned atom);
int atom_ref_add(struct tux3_volume *vol, unsigned atom, unsigned n);

/* ---- xattr_write.c ---- */
int xattr_release_all(struct tux3_volume *vol, struct inode *inode);

/* ---- repair.c: repair primitives the check engine calls ---- */
/* fsck changes the volume only through these and the write path's own
 * building blocks: each is a logged change of the open delta, or
 * in-memory state that the unify of fsck_commit writes out. */

/* The repair open: a TUX3_OPEN_RDWR_NORECOVER volume made writable. */
int repair_begin_write(struct tux3_volume *vol);
/* Pass 2, replaying from a superblock repaired in memory: the device
 * reopened for writing; the no-replay open's state reset to sb's log
 * fields and roots before the replay steps, and marked replayed after
 * them; the superblock to be written for those fields. */
int repair_reopen_for_write(struct tux3_volume *vol, const char *path,
			    char *msg, size_t msglen);
void repair_reset_for_log_rebuild(struct tux3_volume *vol,
				  const struct disksuper *sb);
void repair_log_rebuilt(struct tux3_volume *vol);
void repair_keep_log_fields(struct tux3_volume *vol);
/* Pass 1, before any open succeeds: bytes from..from+len-1 of the
 * superblock area (sbraw, TUX3_SB_LEN bytes) written in place and
 * flushed, for a superblock no open accepts (restored from the
 * secondary copy, or a field recomputed).  msg says why on failure. */
int repair_super_area(const char *path, const uint8_t *sbraw, unsigned from,
		      unsigned len, char *msg, size_t msglen);
/* Pass 1's new extension record, written with the superblock. */
void repair_set_ident(struct tux3_volume *vol,
		      const struct tux3_identity *ident);
/* Pass 3: the root of the inode table (otree false) or orphan table
 * moved; the orphan table dropped whole. */
void repair_set_root_block(struct tux3_volume *vol, bool otree,
			   uint64_t block);
void repair_drop_otree(struct tux3_volume *vol);
/* Read or write bytes of the atom table (inode 4); holes read as 0. */
int repair_atom_rw(struct tux3_volume *vol, uint64_t pos, void *buf,
		   unsigned len, bool write);
/* An atom's reference count (old: its present value, so that only the
 * halves that change are written). */
int repair_atom_set_refcount(struct tux3_volume *vol, unsigned atom,
			     uint32_t old, uint32_t ref);
/* The free list made of every unnamed atom of at below at->count. */
int repair_atom_rebuild_freelist(struct tux3_volume *vol,
				 const struct atom_table *at);
/* The superblock's atomdictsize; its atomgen (freeatom kept below). */
void repair_set_atomdictsize(struct tux3_volume *vol, uint64_t size);
void repair_set_atomgen(struct tux3_volume *vol, uint32_t gen);
/* Free a named atom whose count is ref (vol->atoms must be loaded). */
int repair_atom_free(struct tux3_volume *vol, unsigned atom, uint32_t ref);
/* Remove inum's xattrs that use atom. */
int repair_xattr_drop(struct tux3_volume *vol, tux3_ino_t inum,
		      unsigned atom);
/* Make the commit's unify rewrite group's countmap entry. */
int repair_countmap_rewrite(struct tux3_volume *vol, uint64_t group);
void repair_set_freeblocks(struct tux3_volume *vol, uint64_t freeblocks);
void repair_set_usedinodes(struct tux3_volume *vol, uint64_t usedinodes);
/* Before fsck's commit: the delta's frees merged where two repairs
 * released one block. */
void repair_merge_frees(struct tux3_volume *vol);
/* An empty root directory (pass 5), an empty internal file (pass 6: the
 * atom table), made again when missing. */
int repair_make_root(struct tux3_volume *vol);
int repair_make_internal(struct tux3_volume *vol, tux3_ino_t inum);
/* Pass 1's recomputed hints: the superblock written at the commit. */
void repair_super_rewrite(struct tux3_volume *vol);
/* Pass 9: the versions magic and feature bit, both on or both off. */
void repair_set_version_marks(struct tux3_volume *vol, bool on);

#endif

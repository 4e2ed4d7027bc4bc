/*
 * libtux3 internals shared by the library's files (not installed).
 *
 * Map of on-disk structures to files:
 *   superblock, packed roots     super.c
 *   superblock extension record  superext.c
 *   bnode                        bnode.c
 *   generic B-tree reader        btree.c
 *   ileaf / oleaf                ileaf.c
 *   inode attributes             iattr.c
 *   dleaf, direct extents        dleaf.c, filemap.c
 *   directory records            dirent.c
 *   atom table, xattrs           atom.c, xattr.c
 *   bitmap, countmap             balloc.c
 *   log blocks and records       log.c
 *   replay                       replay.c
 *   orphans                      orphan.c
 *   volume open/close            volume.c
 *   the walker                   walk.c
 *   mkfs (empty volume layout)   mkfs.c
 *   secondary superblock         sb2.c
 */
#ifndef TUX3_INTERNAL_H
#define TUX3_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "tux3.h"
#include "format/endian.h"
#include "io/record.h"

#define TUX3_SB_OFFSET	4096
#define TUX3_SB_LEN	4096
#define TUX3_RESERVED_BYTES 8192
#define TUX3_MIN_BLOCKBITS 9
#define TUX3_MAX_BLOCKBITS 16
#define TUX3_MAX_BLOCK	((1ULL << 48) - 1)
#define TUX3_KEY_LIMIT	(1ULL << 48)
#define TUX3_MAX_DEPTH	30
#define TUX3_GROUPBITS	13

/* Block magics (first be16 of each metadata block) */
#define TUX3_MAGIC_BNODE 0xb4de
#define TUX3_MAGIC_ILEAF 0x90de
#define TUX3_MAGIC_OLEAF 0x6eaf
#define TUX3_MAGIC_DLEAF 0xbeaf
#define TUX3_MAGIC_LOG	 0x10ad

extern const uint8_t tux3_magic_2014[8];
extern const uint8_t tux3_magic_versions[8];
bool tux3_magic_ok(const uint8_t *magic);	/* either of the two */

/* ---- device.c ---- */
struct device {
	int fd;
	bool readonly;
	/* test hook: called before every write (no cost when unset) */
	void (*on_write)(void *ctx, uint64_t offset, size_t len);
	void *hook_ctx;
	/* the crash simulator's write recorder (record.h; NULL: none) */
	struct recorder *rec;
	bool blockdev;
	uint64_t size;		/* bytes */
	char *path;
	struct dev_cache *cache;	/* devcache.c; NULL: reads go to disk */
};
int dev_open(struct device *dev, const char *path, bool write, char *err,
	     size_t errlen);
void dev_close(struct device *dev);
int dev_pread(struct device *dev, void *buf, size_t len, uint64_t off);
int dev_pwrite(struct device *dev, const void *buf, size_t len, uint64_t off);
int dev_flush(struct device *dev);
/* The block cache (devcache.c): nslot blocks of 1 << blockbits bytes, 0
 * to disable.  dev_pread/dev_pwrite keep it coherent (dev_cache_write
 * with buf NULL drops the blocks a write touched). */
int dev_cache_enable(struct device *dev, unsigned blockbits, uint32_t nslot);
void dev_cache_disable(struct device *dev);
bool dev_cache_read(struct device *dev, void *buf, size_t len, uint64_t off);
void dev_cache_fill(struct device *dev, const void *buf, size_t len,
		    uint64_t off);
void dev_cache_write(struct device *dev, const void *buf, size_t len,
		     uint64_t off);
void dev_cache_stats(const struct device *dev, uint64_t *hits,
		     uint64_t *misses);
/* A mark from the library in the recorded trace (no cost unrecorded). */
static inline void dev_mark(struct device *dev, unsigned mark)
{
	if (dev->rec)
		rec_mark(dev->rec, mark, 0);
}

/* ---- the atom table inode's data (atom_write.c) ---- */
/* Read (holes read as zeroes) or write len bytes at pos of the atom
 * table, the inode stored after a write. */
int atable_rw(struct tux3_volume *vol, uint64_t pos, void *buf,
	      unsigned len, bool write);
/* Byte position of an atom's refcount half (low or high 16 bits). */
uint64_t atom_refcount_pos(const struct tux3_volume *vol, unsigned atom,
			   bool high);
/* An atom's reverse-map entry (its name's dictionary position, or the
 * free-list link). */
int atom_set_unatom(struct tux3_volume *vol, unsigned atom, uint64_t val);
/* Delete the dictionary record at byte pos in place. */
int atom_dict_delete(struct tux3_volume *vol, uint64_t pos);

/* ---- packed roots (super.c) ---- */
struct root {
	uint64_t block;
	unsigned depth;		/* tree depth, 0 = none */
	bool direct;
	unsigned count;		/* direct extent length */
};
struct root root_unpack(uint64_t packed);
uint64_t root_pack(struct root r);

struct disksuper {
	uint8_t magic[8];
	uint64_t birthdate, flags;
	unsigned blockbits;
	uint64_t volblocks;
	uint64_t iroot, oroot;
	uint64_t usedinodes, nextblock, atomdictsize;
	uint32_t freeatom, atomgen;
	uint64_t logchain;
	uint32_t logcount;
};

/* ---- blockset.c ---- */
struct blockset {
	uint64_t *slots;
	size_t count, cap;
};
int blockset_add(struct blockset *s, uint64_t v);
bool blockset_has(const struct blockset *s, uint64_t v);
void blockset_free(struct blockset *s);

/* ---- replay overlay: in-memory bnode images rebuilt from the log ---- */
struct overlay_ent {
	uint64_t block;
	uint8_t *data;		/* NULL = dropped (BNODE_FREE) */
	unsigned flags;		/* OV_* */
};
/* Why an image is in the overlay (none: rebuilt by replay only, as read) */
#define OV_UNIFY_DIRTY	1	/* bnode changed this unify cycle: written at unify */
#define OV_DELTA_DIRTY	2	/* leaf or other block of the open delta: written
				 * at its commit */
struct overlay {
	struct overlay_ent *ents;
	size_t count, cap;	/* open addressing, cap power of two */
};

/* ---- log.c ---- */
enum log_code {
	LOG_BALLOC = 0x33, LOG_BFREE, LOG_BFREE_ON_UNIFY, LOG_BFREE_RELOG,
	LOG_LEAF_REDIRECT, LOG_LEAF_FREE, LOG_BNODE_REDIRECT, LOG_BNODE_ROOT,
	LOG_BNODE_SPLIT, LOG_BNODE_ADD, LOG_BNODE_UPDATE, LOG_BNODE_MERGE,
	LOG_BNODE_DEL, LOG_BNODE_ADJUST, LOG_BNODE_FREE, LOG_ORPHAN_ADD,
	LOG_ORPHAN_DEL, LOG_FREEBLOCKS, LOG_UNIFY, LOG_DELTA,
	LOG_CODE_FIRST = LOG_BALLOC, LOG_CODE_LAST = LOG_DELTA,
};

struct logrec {
	unsigned code;
	unsigned offset;	/* of the code byte, in the block */
	uint32_t count;		/* BALLOC.., BNODE_ROOT(u8), BNODE_DEL(u16) */
	unsigned pos;		/* BNODE_SPLIT */
	unsigned version;	/* ORPHAN_* */
	uint64_t block;		/* BALLOC.., LEAF_FREE, BNODE_FREE, bnode */
	uint64_t oldb, newb;	/* *_REDIRECT */
	uint64_t src, dst;	/* SPLIT, MERGE */
	uint64_t parent, child, key;
	uint64_t root, left, right, rkey;
	uint64_t from, to;	/* ADJUST */
	uint64_t inum;
	uint64_t freeblocks;
};

struct loghead {
	unsigned magic, bytes;
	uint32_t unused;
	uint64_t logchain;
};

#define LOG_HEADER_SIZE 16
unsigned log_record_size(unsigned code);	/* 0 = invalid code */
const char *log_code_name(unsigned code);
int log_decode_head(const uint8_t *blk, unsigned blocksize,
		    struct loghead *head, char *why, size_t whylen);
/* Decodes the record at offset; returns its size or 0 if invalid. */
unsigned log_decode_record(const uint8_t *blk, unsigned offset, unsigned end,
			   struct logrec *rec);
/* Block numbers named by a record, for range checks: fills up to 4. */
unsigned log_record_blocks(const struct logrec *rec, uint64_t out[4],
			   uint32_t *count);
/* The bnodes whose disk image replay loads for a bnode record. */
unsigned log_record_bnodes(const struct logrec *rec, uint64_t out[3]);
int log_format_record(const struct logrec *rec, char *buf, size_t len);
struct tux3_logrec_info;
void log_record_info(const struct logrec *rec, unsigned offset,
		     unsigned size, int live, struct tux3_logrec_info *info);
/* Encoders (mkfs, the write path): log_encode_record writes rec at buf and
 * returns its size (0 = invalid code); log_encode_head fills the 16-byte
 * log block header. */
unsigned log_encode_record(uint8_t *buf, const struct logrec *rec);
void log_encode_head(uint8_t *blk, unsigned bytes, uint64_t logchain);
/* The log block CRC of the LOG_CRC feature (format.md 15.2): CRC32C of the
 * whole block with header bytes 4..7 taken as zero, seeded with the block
 * number (be64), so a block read from the wrong place fails too. */
#define LOG_CRC_OFFSET	4
uint32_t log_block_crc(const uint8_t *blk, unsigned blocksize,
		       uint64_t blocknr);

/* One log block of the current cycle, chronological index. */
struct logblk {
	uint64_t blocknr;
	uint8_t *data;
	struct loghead head;
};

/* ---- balloc.c : the live allocation bitmap ---- */
struct bitmap {
	uint64_t volblocks;
	unsigned blockbits;
	size_t nchunks;		/* one chunk = one bitmap block */
	uint8_t **chunks;	/* lazily loaded */
	uint8_t *dirty;		/* per chunk: changed since the disk copy */
	uint32_t *groupused;	/* live used count per 2^13-block group, once
				 * the allocator is ready (NULL before) */
	uint64_t ngroups;
};

/* Allocation (balloc.c).  Blocks freed by a delta may be reused only
 * once the commit that freed them is durable, so frees are deferred. */
struct extent_list {
	struct { uint64_t block, count; } *v;
	size_t count, cap;
};
int extent_list_add(struct extent_list *l, uint64_t block, uint64_t count);
void extent_list_free(struct extent_list *l);

/* ---- inode (inode.c / iattr.c) ---- */
enum {
	ATTR_RDEV = 0, ATTR_MODE_OWNER = 1, ATTR_DATA_BTREE = 2,
	ATTR_CTIME_SIZE = 3, ATTR_LINK_COUNT = 4, ATTR_MTIME = 5,
	ATTR_IDATA = 11, ATTR_XATTR = 12,
};

struct xattr_ref {
	unsigned atom;
	unsigned offset;	/* of the value inside inode->blob */
	unsigned size;
};

struct inode {
	tux3_ino_t inum;
	unsigned present;	/* bit per fixed attribute kind */
	uint32_t mode, uid, gid, nlink;
	uint64_t size;
	uint64_t rdev;		/* major << 20 | minor */
	int64_t ctime, mtime;
	uint64_t dtree;		/* packed root */
	uint8_t *blob;		/* copy of the on-disk attribute blob */
	unsigned bloblen;
	unsigned nxattr;
	struct xattr_ref *xattrs;
	uint64_t leafblock;	/* ileaf that holds it */
	bool orphan;
};

/* Attribute visitor used by the decoder (walker, printers, fsck). */
struct attr_info {
	unsigned kind, version;
	unsigned offset, size;	/* of the whole attribute in the blob */
	const uint8_t *payload;
	unsigned paylen;
};
typedef int (*attr_fn)(struct tux3_volume *vol, void *ctx,
		       const struct attr_info *a);
int iattr_decode(struct tux3_volume *vol, struct inode *inode,
		 attr_fn fn, void *ctx);
const char *iattr_kind_name(unsigned kind);
/* Encoders (iattr.c): fixed attributes by inode->present, then XATTRs. */
#define IATTR_FIXED_MAX 68	/* every fixed kind once: 6 heads + payloads */
unsigned iattr_encode_fixed(uint8_t *buf, const struct inode *inode);
unsigned iattr_encode_xattr(uint8_t *buf, unsigned atom, const void *value,
			    unsigned size);
uint64_t iattr_max_size(unsigned blockbits);	/* the format's, the
						 * internal inodes' size */
uint64_t iattr_max_data(unsigned blockbits);	/* what writes may reach */

/* ---- B-trees (btree.c) ---- */
/* Move the upper part of a full leaf into an empty one (newleaf) and
 * give the separator key. */
typedef int (*leaf_split_fn)(struct tux3_volume *vol, uint8_t *leaf,
			     uint8_t *newleaf, uint64_t *sep);

struct btree_ops {
	const char *name;
	unsigned leaf_magic;
	/* Validate a leaf covering keys [lo, hi); returns 0 or -EUCLEAN with
	 * the volume error set. */
	int (*leaf_check)(struct tux3_volume *vol, const uint8_t *leaf,
			  uint64_t blocknr, uint64_t lo, uint64_t hi);
	/* for writing: an empty leaf starting at key; move the upper part
	 * of a full leaf into an empty one and give the separator key */
	void (*leaf_init)(struct tux3_volume *vol, uint8_t *leaf,
			  uint64_t key);
	leaf_split_fn leaf_split;
};
extern const struct btree_ops itree_ops, otree_ops, dtree_ops;

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
	int depth;		/* levels in path (== root.depth) */
	struct cursor_level path[TUX3_MAX_DEPTH + 1];
};
int btree_probe(struct btree *bt, uint64_t key, struct cursor *c);
/* Advance to next leaf: 1 moved, 0 end of tree, <0 error */
int btree_next_leaf(struct cursor *c);
void cursor_release(struct cursor *c);
void cursor_leaf_range(struct cursor *c, uint64_t *lo, uint64_t *hi);

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
/* inode_write.c */
int inode_encode(const struct inode *inode, uint8_t *buf, unsigned cap,
		 unsigned *len);
int inode_store(struct tux3_volume *vol, struct inode *inode);
int inode_delete(struct tux3_volume *vol, uint64_t inum);
int inum_alloc(struct tux3_volume *vol, uint64_t goal, uint64_t *inum);
/* namei_write.c */
/* Writable, and the delta committed first if it is full (namei_write.c). */
int change_begin(struct tux3_volume *vol);
int inode_write_data(struct tux3_volume *vol, struct inode *inode,
		     const void *buf, size_t len, uint64_t pos, bool privileged);
int inode_truncate(struct tux3_volume *vol, struct inode *inode,
		   uint64_t size);
/* filemap_write.c */
int filemap_set(struct tux3_volume *vol, struct inode *inode,
		uint64_t logical, uint64_t physical, uint64_t count);

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
/* btree_edit.c: every node of the tree given back, logged (leaves BFREE,
 * bnodes BNODE_FREE); what the leaves map is the caller's. */
int btree_free_nodes(struct btree *bt);
static inline uint8_t *cursor_leaf(struct cursor *c)
{
	return c->path[c->depth - 1].buf;
}
static inline uint64_t cursor_leaf_block(struct cursor *c)
{
	return c->path[c->depth - 1].blocknr;
}

/* bnode.c */
#define BNODE_HEADER 8
#define BNODE_ENTRY 16
unsigned bnode_capacity(unsigned blocksize);
static inline unsigned bnode_count(const uint8_t *b) { return be32(b + 4); }
static inline uint64_t bnode_key(const uint8_t *b, unsigned i)
{ return be64(b + BNODE_HEADER + BNODE_ENTRY * i); }
static inline uint64_t bnode_child(const uint8_t *b, unsigned i)
{ return be64(b + BNODE_HEADER + BNODE_ENTRY * i + 8); }
int bnode_check(struct tux3_volume *vol, const uint8_t *b, uint64_t blocknr,
		uint64_t lo, uint64_t hi, bool is_root);
/* index of last entry with key <= k (0 if none) */
unsigned bnode_lookup(const uint8_t *b, uint64_t key);
/* editing (bnode.c): shared by the B-tree engine and log replay */
void bnode_init(uint8_t *b, unsigned blocksize);
int bnode_init_root(uint8_t *b, unsigned blocksize, unsigned count,
		    uint64_t left, uint64_t right, uint64_t rkey);
int bnode_add(uint8_t *b, unsigned blocksize, uint64_t key, uint64_t child);
int bnode_update(uint8_t *b, uint64_t key, uint64_t child);
int bnode_split(uint8_t *src, unsigned pos, uint8_t *dst, unsigned blocksize);
int bnode_merge(uint8_t *dst, const uint8_t *src, unsigned blocksize);
int bnode_del(uint8_t *b, uint64_t key, unsigned count);
int bnode_adjust(uint8_t *b, uint64_t from, uint64_t to);

/* ileaf.c */
#define ILEAF_HEADER 16
int ileaf_check(struct tux3_volume *vol, const uint8_t *leaf,
		uint64_t blocknr, uint64_t lo, uint64_t hi, unsigned magic);
/* Blob of inum in a checked leaf: 0 found (len may be 0 = absent). */
int ileaf_blob(const uint8_t *leaf, unsigned blocksize, uint64_t inum,
	       const uint8_t **blob, unsigned *len);
static inline unsigned ileaf_count(const uint8_t *l) { return be16(l + 2); }
static inline uint64_t ileaf_ibase(const uint8_t *l) { return be64(l + 8) & TUX3_MAX_BLOCK; }
/* Write side (pure buffer operations; errors are negative errno). */
/* A fresh, empty leaf (whole block zeroed) with this magic and ibase. */
void ileaf_init(uint8_t *leaf, unsigned blocksize, unsigned magic,
		uint64_t ibase);
/* Bytes left for blobs and new dictionary slots. */
unsigned ileaf_free_space(const uint8_t *leaf, unsigned blocksize);
/* Insert, replace or (len 0) delete the blob of inum.  The dictionary
 * grows to reach inum and drops trailing empty slots after a delete.
 * -ERANGE inum below ibase (or >= 2^48), -ENOSPC no room (leaf unchanged),
 * -ENOENT deleting an absent inode.  blob must not point into leaf. */
int ileaf_set_blob(uint8_t *leaf, unsigned blocksize, uint64_t inum,
		   const uint8_t *blob, unsigned len);
/* Move the upper inodes into newleaf (initialised here).  *newbase = the
 * first inum moved = newleaf's ibase = the separator key; the cut between
 * two live inodes minimises the larger half (blob bytes + 2 per slot).
 * -EINVAL if the leaf holds fewer than two inodes. */
int ileaf_split(uint8_t *leaf, uint8_t *newleaf, unsigned blocksize,
		uint64_t *newbase);
/* Move every inode into newleaf, whose ibase (*newbase, the separator)
 * is the first of them, leaving the leaf empty.  -EINVAL if it is empty
 * already. */
int ileaf_split_off(uint8_t *leaf, uint8_t *newleaf, unsigned blocksize,
		    uint64_t *newbase);
/* Whether the leaf holds no inode (its dictionary may still have
 * slots). */
bool ileaf_empty(const uint8_t *leaf, unsigned blocksize);
/* First inum >= goal in [ibase, limit) whose slot is empty (slots past
 * count are empty); -ENOENT if none. */
int ileaf_find_free_inum(const uint8_t *leaf, unsigned blocksize,
			 uint64_t goal, uint64_t limit, uint64_t *inum);

/* dleaf.c */
#define DLEAF_HEADER 8
#define DLEAF_ENTRY 16
struct dleaf_entry {
	uint64_t logical, physical;
	uint32_t version;
};
void dleaf_entry_get(const uint8_t *leaf, unsigned i, struct dleaf_entry *e);
static inline unsigned dleaf_count(const uint8_t *l) { return be16(l + 2); }
/* Write side (pure buffer operations; errors are negative errno).
 * freed(ctx, physical, count) reports blocks a change unmapped. */
typedef void (*dleaf_freed_fn)(void *ctx, uint64_t physical, uint64_t count);
/* An empty leaf: magic, count 0 (writes the 8-byte header only). */
void dleaf_init(uint8_t *leaf);
/* Map [logical, logical + count) to physical.. (physical 0 = hole) in a
 * leaf covering keys [lo, hi), replacing what overlapped and merging with
 * contiguous neighbours; old mappings of the range are reported to freed
 * (NULL allowed) except blocks that stay at the same logical address.
 * -ERANGE outside [lo, hi), -EINVAL count 0, -ENOSPC the entries would
 * not fit (leaf unchanged, nothing reported), -EUCLEAN not a dleaf. */
int dleaf_write_extent(uint8_t *leaf, unsigned blocksize, uint64_t logical,
		       uint64_t physical, uint64_t count, uint64_t lo,
		       uint64_t hi, dleaf_freed_fn freed, void *ctx);
/* Unmap everything at and beyond logical from (never needs room). */
int dleaf_chop(uint8_t *leaf, unsigned blocksize, uint64_t from,
	       dleaf_freed_fn freed, void *ctx);
/* Move the upper entries into newleaf (initialised here); returns the
 * separator (newleaf's first logical; the old leaf ends with a sentinel
 * there) or -EINVAL when no cut leaves a mapped extent on both sides. */
int64_t dleaf_split(uint8_t *leaf, uint8_t *newleaf, unsigned blocksize);

/* filemap.c: extent iteration of an inode's data (direct or tree) */
struct extent {
	uint64_t logical, physical, count;	/* physical 0 = hole */
	uint32_t version;
	uint64_t leafblock;	/* dleaf, 0 for a direct extent */
};
typedef int (*extent_fn)(void *ctx, const struct extent *e);
int filemap_walk(struct tux3_volume *vol, const struct inode *inode,
		 uint64_t start, uint64_t end, extent_fn fn, void *ctx);
/* Map one logical block: *physical 0 = hole; *run = blocks mapped
 * contiguously (or hole length) from there. */
int filemap_lookup(struct tux3_volume *vol, const struct inode *inode,
		   uint64_t logical, uint64_t *physical, uint64_t *run);
/* Read a whole block of a file (holes read as zeros). */
int filemap_read_block(struct tux3_volume *vol, const struct inode *inode,
		       uint64_t logical, uint8_t *buf);
int inode_read(struct tux3_volume *vol, const struct inode *inode, void *buf,
	       size_t len, uint64_t pos, size_t *done);

/* dirent.c */
#define DIRENT_HEADER 12
struct dirent_info {
	uint64_t inum;
	unsigned rec_len, name_len, type;
	const char *name;
	uint64_t pos;		/* byte offset in the directory */
	uint64_t blocknr;	/* block holding the record */
};
/* Check and iterate one directory-format block (also the atom dict).
 * fn gets live records only; returns fn's non-zero value, 0, or -EUCLEAN. */
typedef int (*dirent_fn)(void *ctx, const struct dirent_info *d);
int dirblock_iterate(struct tux3_volume *vol, const uint8_t *blk,
		     unsigned size, uint64_t base, uint64_t blocknr,
		     tux3_ino_t dir, dirent_fn fn, void *ctx);
/* dir.c: every live record of a directory, through its file map */
int dir_iterate(struct tux3_volume *vol, const struct inode *dir,
		dirent_fn fn, void *ctx);
/* The same, but a block whose records fail validation is reported to bad
 * (the error, its logical and physical block; the records before the
 * damage were passed to fn) and the walk goes on; bad's non-zero return
 * ends it.  For the checker. */
typedef int (*dirent_bad_fn)(void *ctx, const struct tux3_error *err,
			     uint64_t logical, uint64_t blocknr);
int dir_iterate_salvage(struct tux3_volume *vol, const struct inode *dir,
			dirent_fn fn, dirent_bad_fn bad, void *ctx);
/* Write side on one block of size bytes (pure; negative errno). */
/* A fresh block: one deleted record spanning it. */
void dirblock_init(uint8_t *blk, unsigned size);
/* Add a live record (first fit: a deleted record or a live record's
 * slack); returns its offset, -ENOSPC, -EEXIST (name live in this block),
 * -EINVAL (bad name, inum or type), -EUCLEAN (malformed block). */
int dirblock_add(uint8_t *blk, unsigned size, const char *name, unsigned len,
		 uint64_t inum, unsigned type);
/* Delete the live record at offset (the previous record absorbs it);
 * -ENOENT if no live record starts there. */
int dirblock_delete(uint8_t *blk, unsigned size, unsigned offset);
/* Offset of the live record named name, or -ENOENT. */
int dirblock_find(const uint8_t *blk, unsigned size, const char *name,
		  unsigned len);

/* atom.c */
#define ATOM_REFCOUNT_BASE (1ULL << 40)
#define ATOM_UNATOM_BASE ((1ULL << 40) + (1ULL << 34))
#define ATOM_FREE_MAGIC 0x6eadfceeULL
struct atom_table {
	bool loaded;
	unsigned count;		/* == atomgen */
	char **names;		/* by atom, NULL = none */
	uint64_t *dictpos;
};
int atable_load(struct tux3_volume *vol);
const char *atom_name(struct tux3_volume *vol, unsigned atom);
int atom_refcount(struct tux3_volume *vol, unsigned atom, uint32_t *ref);
int atom_unatom(struct tux3_volume *vol, unsigned atom, uint64_t *val);
void atable_free(struct atom_table *at);
/* atom_write.c */
#define ATOM_NAME_MAX 240	/* bytes of an xattr name in the dictionary */
int atom_find(struct tux3_volume *vol, const char *name, unsigned *atom);
int atom_get(struct tux3_volume *vol, const char *name, unsigned *atom);
int atom_put(struct tux3_volume *vol, unsigned atom);
int atom_ref_add(struct tux3_volume *vol, unsigned atom, unsigned n);
int xattr_release_all(struct tux3_volume *vol, struct inode *inode);

/* ---- superext.c: the superblock extension record (format.md 15) ----
 * Bytes 512..1023 of the 4 KiB superblock area (absolute 4608..5119),
 * which the reference writes back unchanged. */
#define SUPEREXT_OFFSET		512	/* in the superblock area */
#define SUPEREXT_SIZE		512
#define SUPEREXT_CRC_OFFSET	508
#define SUPEREXT_MAGIC		0x54335831u	/* "T3X1" */
#define SUPEREXT_VERSION	1
/* Feature bits this build knows; later features add their bits here. */
#define SUPEREXT_COMPAT_LOG_CRC		TUX3_FEATURE_COMPAT_LOG_CRC
#define SUPEREXT_COMPAT_KNOWN		(TUX3_FEATURE_COMPAT_LOG_CRC | \
					 TUX3_FEATURE_COMPAT_SB_BACKUP)
/* seal: how many of the newest log blocks carry our CRC (record byte 152) */
#define SUPEREXT_CRCLOG_OFFSET		152
#define SUPEREXT_RO_COMPAT_KNOWN	0u
#define SUPEREXT_INCOMPAT_KNOWN		TUX3_FEATURE_INCOMPAT_VERSIONS

/* The commit fields the record was sealed against, plus its sequence. */
struct superext_seal {
	uint64_t seq;
	uint64_t logchain;
	uint32_t logcount;
	uint64_t iroot, oroot;		/* packed, as on disk */
	uint32_t crclog;		/* newest log blocks with our CRC */
};

/* Decode the record from the 4096-byte superblock area.  Returns 1 and
 * fills id (present = 1, sealed = 0) and seal for a valid record; 0 if the
 * sector is all zero (no record); -EUCLEAN with the reason in why for a
 * sector that holds no usable record (bad magic, CRC, version or size),
 * which callers treat as absent.  id and seal are zeroed unless 1. */
int superext_decode(const uint8_t *sb4096, struct tux3_identity *id,
		    struct superext_seal *seal, char *why, size_t whylen);
/* Write a complete record into sb4096 (bytes 512..1023): id's features,
 * uuid, label (up to 64 bytes) and mkfs time; sealed against sb's
 * logchain, logcount, iroot and oroot with sequence seq; CRC last. */
void superext_encode(uint8_t *sb4096, const struct tux3_identity *id,
		     const struct disksuper *sb, uint64_t seq);
/* Does the seal match these superblock fields? */
bool superext_sealed(const struct superext_seal *seal,
		     const struct disksuper *sb);
/* Open-time step (volume_load): decode into vol->ident / vol->seal, warn
 * on a damaged record, -EOPNOTSUPP for unknown incompat features, -EROFS
 * for unknown ro_compat features in a writable mode. */
int superext_load(struct tux3_volume *vol);
/* Set the seal's log CRC count (byte 152) of an encoded record and
 * recompute its CRC (after superext_encode). */
void superext_set_crclog(uint8_t *sb4096, uint32_t crclog);
/* Log blocks whose CRC replay may verify: the seal's count when the LOG_CRC
 * feature is on and the seal matches vol->super, else 0. */
uint32_t log_crc_trusted(const struct tux3_volume *vol);

/* ---- sb2.c: the secondary superblock (SB_BACKUP, format.md 15.3) ----
 * Absolute bytes 1024..2559 of the reserved area: a copy of superblock-area
 * bytes 0..1023, then a trailer sector (magic "T3SB", version 1, copied
 * size 1024) whose last 4 bytes are the CRC32C of everything before. */
#define SUPEREXT_COMPAT_SB_BACKUP	TUX3_FEATURE_COMPAT_SB_BACKUP
#define SB2_OFFSET	1024
#define SB2_COPY	1024
#define SB2_LEN		1536
#define SB2_CRC_AT	(SB2_LEN - 4)
#define SB2_MAGIC	0x54335342u	/* "T3SB" */
void sb2_encode(uint8_t *out, const uint8_t *sb4096);
/* 0 and the 4096-byte superblock area (tail zero) for a good copy; else
 * -ENOENT (none) or -EUCLEAN, with the reason in why. */
int sb2_decode(const uint8_t *in, uint8_t *sb4096, char *why, size_t len);
/* Write vol->sbraw's copy and flush (the commit, before the primary). */
int sb2_write(struct tux3_volume *vol);

/* ---- log_write.c: records of the delta being built ---- */
struct wlog {
	uint8_t *buf;
	size_t len, cap;
};
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

/* ---- the volume ---- */
struct orphan_set {
	tux3_ino_t *inums;
	unsigned count, cap;
};

struct tux3_volume {
	struct device dev;
	enum tux3_open_mode mode;
	struct disksuper super;
	uint8_t sbraw[TUX3_SB_LEN];
	unsigned blockbits, blocksize;
	uint64_t volblocks;
	uint64_t reserved_blocks;	/* blocks covering bytes 0..8191 */
	struct root iroot, oroot;	/* live, after replay */
	uint64_t freeblocks;
	bool replayed;

	struct logblk *log;		/* chronological */
	unsigned logcount;
	int unify_index;		/* -1 = none in the chain */
	unsigned unify_offset;

	struct overlay overlay;
	struct bitmap bitmap;
	struct inode bitmap_inode;	/* valid if has_bitmap_inode */
	bool has_bitmap_inode;
	struct atom_table atoms;
	struct orphan_set orphans;	/* the live orphan list */
	struct orphan_set log_orphans;	/* ORPHAN_ADD not cancelled */
	struct orphan_set otree_deletes; /* ORPHAN_DEL of otree entries */
	uint64_t replay_conflicts;	/* bitmap conflicts met by replay */
#define REPLAY_CONFLICTS_KEPT 1024
	struct replay_conflict conflicts[REPLAY_CONFLICTS_KEPT];
	unsigned nconflicts;		/* the first ones, for fsck */
	struct extent_list defer_free;	/* freed by the delta being built */
	/* the write path (RDWR) */
	struct wlog wlog;		/* records of the open delta */
	bool delta_open;		/* records were logged since the commit */
	bool super_dirty;		/* superblock fields changed */
	/* a commit failed part way: what is in memory may not match what
	 * the disk holds, so nothing more is changed or committed (EROFS)
	 * until the volume is reopened and its log replayed */
	bool commit_failed;
	struct blockset fresh;		/* blocks allocated by the open delta:
					 * not referenced by the committed
					 * state, so rewritable in place */
	unsigned unify_log_limit;	/* unify when the cycle has this many
					 * log blocks ... */
	unsigned unify_bnode_limit;	/* ... or this many dirty bnodes */
	int64_t fixed_time;		/* SOURCE_DATE_EPOCH in ns ... */
	bool time_fixed;		/* ... when set */
	uint64_t inum_hint;		/* after the last inode number given */
	uint64_t alloc_cursor;		/* after the last block allocated */
	struct open_ref *open;		/* open handles per inode */
	unsigned nopen;
	/* test hook: called after each commit point (no cost when unset) */
	void (*on_commit)(struct tux3_volume *vol, void *ctx);
	void *commit_ctx;
	unsigned commit_bound;		/* commit when a delta logs this many
					 * records' worth of changes */
	uint64_t reserve_blocks;	/* kept for unlink/truncate at ENOSPC */
	/* deferred frees met in replay: log blocks and redirected bnodes */
	struct { uint64_t block; uint32_t count; } *deunify;
	unsigned ndeunify, deunify_cap;

	struct tux3_error error;
	char **warnings;
	uint8_t *warning_sources;	/* enum tux3_warning_source, per warning */
	unsigned nwarnings;
	enum tux3_warning_source warn_source;	/* of the step now running:
						 * what vol_warn records */
	uint8_t *scratch;		/* one block, short-lived use only */

	/* our superblock extension record (superext.c), as read at open */
	struct tux3_identity ident;	/* present == 0: none or unusable */
	struct superext_seal seal;
	/* LOG_CRC: the newest crclog blocks of the chain ending at
	 * crclog_chain carry our CRC (log_write.c) */
	uint32_t crclog;
	uint64_t crclog_chain;
	/* versions (vtable_inode.c): NULL on a volume without them */
	struct vtree *vt;
	struct vdelete_plan *vpending;	/* a delete to resume, or NULL */
	size_t write_done;		/* bytes the last inode_write_data
					 * wrote before it stopped */
	uint32_t vtag;			/* the selected version: its tag,
					 * 0 the live one (the origin) */
	bool vt_dirty;			/* vt changed by a write (an
					 * implicit child): saved at commit */
};

/* 0 when the volume may be changed: opened read-write, and no commit has
 * failed since; else -EROFS. */
static inline int vol_writable(const struct tux3_volume *vol)
{
	return vol->mode == TUX3_OPEN_RDWR && !vol->commit_failed ? 0
								   : -EROFS;
}

/* vtable_inode.c: the version table in inode 3 (format.md 17.2, 17.4) */
struct vtree;
int vtable_load(struct tux3_volume *vol);
int vtable_read(struct tux3_volume *vol);	/* without the marks' check */
/* At open: vtable_load, its failure a warning (the origin reads without
 * the table; fsck pass 9 reports it); -ENOMEM only. */
int vtable_open(struct tux3_volume *vol);
/* The magic or the feature bit says the volume has versions. */
bool vtable_marked(const struct tux3_volume *vol);
int vtable_save(struct tux3_volume *vol, const struct vtree *vt);
void vtable_unload(struct tux3_volume *vol);
/* vinode.c: inodes of a volume with versions, seen through the selected
 * version (vol->vtag).  applies: the volume has versions and the inode is
 * not internal.  view: the disk blob projected onto the version (a 2014
 * blob; -ENOENT when the inode does not exist in it).  merge: the
 * version's changed view written into the disk blob (*out malloc'd;
 * -ENOSPC when all versions no longer fit a leaf). */
bool vinode_applies(const struct tux3_volume *vol, tux3_ino_t inum);
int vol_label(struct tux3_volume *vol, unsigned *label);
int vinode_view(struct tux3_volume *vol, tux3_ino_t inum,
		const uint8_t *blob, unsigned len, uint8_t **view,
		unsigned *vlen);
int vinode_merge(struct tux3_volume *vol, tux3_ino_t inum,
		 const uint8_t *disk, unsigned dlen, const uint8_t *view,
		 unsigned vlen, uint8_t **out, unsigned *olen);
int vinode_read_by_any(struct tux3_volume *vol, tux3_ino_t inum,
		       const uint8_t *disk, unsigned dlen, bool *any);
int vinode_release_atoms(struct tux3_volume *vol, tux3_ino_t inum,
			 const uint8_t *disk, unsigned dlen);
/* vinode_data.c: inode_write_data, inode_truncate and inode_destroy of
 * an inode vinode_applies() to, in the selected version. */
int vinode_write_data(struct tux3_volume *vol, struct inode *inode,
		      const void *buf, size_t len, uint64_t pos);
int vinode_truncate(struct tux3_volume *vol, struct inode *inode,
		    uint64_t size);
int vinode_destroy(struct tux3_volume *vol, struct inode *inode);
/* Room in the inode's blob for the store a change ends with: checked
 * for every inode an operation changes before it changes any, so that
 * a change is never half made (-ENOSPC, the volume untouched). */
int vinode_room(struct tux3_volume *vol, tux3_ino_t inum);
struct vdelete_plan;
int vinode_apply_delete(struct tux3_volume *vol, tux3_ino_t inum,
			const struct vdelete_plan *plan);
/* fsck: the inode's element lists (attributes and data) repaired. */
int vinode_repair(struct tux3_volume *vol, tux3_ino_t inum);
/* inode_write.c: a blob stored as it is (len 0: the inode deleted) */
int itree_store(struct tux3_volume *vol, uint64_t inum, const uint8_t *blob,
		unsigned len);
/* namei_write.c: every block of an unversioned map given back. */
int inode_free_unversioned(struct tux3_volume *vol, struct inode *inode);
/* The inode's blob as stored (malloc'd copy; *len 0: no inode). */
int itree_blob(struct tux3_volume *vol, tux3_ino_t inum, uint8_t **blob,
	       unsigned *len);

/* version_ops.c: snapshots on a volume opened TUX3_OPEN_RDWR.  create: a snapshot named name of the
 * live version (of NULL) or of the snapshot named of.  delete: the plan
 * recorded and committed (begin), every inode's lists processed,
 * the labels freed and committed; resume finishes a recorded plan. */
struct vdelete_plan;
int version_create(struct tux3_volume *vol, const char *name,
		   const char *of, uint32_t *tag);
int version_delete(struct tux3_volume *vol, const char *name);
int version_delete_begin(struct tux3_volume *vol, const char *name,
			 struct vdelete_plan *plan);
int version_delete_resume(struct tux3_volume *vol);
/* fsck: vtree_repair made durable, its plan applied to every inode. */
int version_repair_table(struct tux3_volume *vol);

/* volume.c */
int vol_error(struct tux3_volume *vol, int err, uint64_t block,
	      uint64_t inum, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
/* A warning of the open; its source is vol->warn_source, which the open
 * sets at each step (volume_load). */
void vol_warn(struct tux3_volume *vol, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Read a metadata block, honouring the replay overlay. */
int vol_read_block(struct tux3_volume *vol, uint64_t block, uint8_t *buf);
int vol_pread_block(struct tux3_volume *vol, uint64_t block, uint8_t *buf);
int64_t vol_now(const struct tux3_volume *vol);	/* ns since the epoch */
int vol_read_blocks(struct tux3_volume *vol, uint64_t block, uint64_t count,
		    uint8_t *buf);
static inline bool vol_block_valid(const struct tux3_volume *vol, uint64_t b)
{
	return b < vol->volblocks;
}
static inline bool vol_extent_valid(const struct tux3_volume *vol, uint64_t b,
				    uint64_t n)
{
	return n > 0 && b < vol->volblocks && n <= vol->volblocks - b;
}

/* super.c */
int super_decode(const uint8_t *raw, struct disksuper *sb);
int super_check(struct tux3_volume *vol);
void super_encode(uint8_t *raw, const struct disksuper *sb);

/* overlay.c */
uint8_t *overlay_find(struct overlay *ov, uint64_t block, bool *dropped);
int overlay_put(struct overlay *ov, uint64_t block, unsigned size,
		uint8_t **data);
void overlay_drop(struct overlay *ov, uint64_t block);
void overlay_set_flags(struct overlay *ov, uint64_t block, unsigned flags);
unsigned overlay_flags(struct overlay *ov, uint64_t block);
/* Calls fn for every live image with any of the flags in mask. */
int overlay_for_each(struct overlay *ov, unsigned mask,
		     int (*fn)(void *ctx, uint64_t block, uint8_t *data,
			       unsigned *flags), void *ctx);
void overlay_free(struct overlay *ov);

/* inode.c */
int inode_load(struct tux3_volume *vol, tux3_ino_t inum, struct inode *inode);
void inode_free(struct inode *inode);
int inode_from_blob(struct tux3_volume *vol, tux3_ino_t inum,
		    const uint8_t *blob, unsigned len, uint64_t leafblock,
		    struct inode *inode);
unsigned inode_dtype(uint32_t mode);
void inode_to_stat(struct tux3_volume *vol, const struct inode *inode,
		   struct tux3_stat *st, uint64_t blocks);
int inode_count_blocks(struct tux3_volume *vol, const struct inode *inode,
		       uint64_t *blocks);

/* balloc.c */
int bitmap_init(struct tux3_volume *vol);
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
typedef int (*bitmap_run_fn)(void *ctx, uint64_t chunk, uint64_t start,
			     uint64_t count, int stale);
int bitmap_runs(struct tux3_volume *vol, bitmap_run_fn fn, void *ctx);
/* A reserved inode (below 64) loaded, or made fresh when it does not
 * exist yet (the bitmap, the countmap, the version table). */
int internal_inode(struct tux3_volume *vol, tux3_ino_t inum,
		   struct inode *inode);
int bitmap_count_used(struct tux3_volume *vol, uint64_t start, uint64_t count,
		      uint64_t *used);
int countmap_ondisk(struct tux3_volume *vol, uint64_t group, uint32_t *count);
int balloc_init(struct tux3_volume *vol);
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
int balloc_commit_done(struct tux3_volume *vol);
int bitmap_flush(struct tux3_volume *vol);
uint64_t balloc_dir_goal(struct tux3_volume *vol);
/* raw.c: 0, or -ERANGE (the volume error set) when len bytes at offset
 * run past the device end */
int raw_range(struct tux3_volume *vol, uint64_t offset, size_t len);
/* commit.c */
int delta_commit(struct tux3_volume *vol, bool force_unify);
/* Before a volume's first change: the commit bounds and the allocator. */
int write_begin(struct tux3_volume *vol);
/* check.c: blocks the committed state's on-disk contents matter for */
int committed_map(struct tux3_volume *vol, uint8_t **map);

/* replay.c */
int defer_unify_add(struct tux3_volume *vol, uint64_t block, uint32_t count);
int replay_load_log(struct tux3_volume *vol);
void log_forget_loaded(struct tux3_volume *vol);
int replay_stage1(struct tux3_volume *vol);
int replay_stage2(struct tux3_volume *vol);

/* orphan.c */
int orphan_add(struct orphan_set *s, tux3_ino_t inum);
bool orphan_del(struct orphan_set *s, tux3_ino_t inum);
bool orphan_has(const struct orphan_set *s, tux3_ino_t inum);
int otree_load(struct tux3_volume *vol, struct orphan_set *s);
int orphans_resolve(struct tux3_volume *vol);
/* orphan_write.c */
struct open_ref {
	tux3_ino_t inum;
	unsigned count;
};
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
int inode_destroy(struct tux3_volume *vol, struct inode *inode);
int ileaf_rebase_to(struct tux3_volume *vol, uint8_t *leaf, uint64_t inum);
int itable_set(struct tux3_volume *vol, struct btree *bt, struct root *home,
	       uint64_t inum, const uint8_t *blob, unsigned len);
void orphan_set_free(struct orphan_set *s);

/* ---- write/repair.c: repair primitives the check engine calls ---- */
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
/* Pass 9: the versions magic and feature bit, both on or both off. */
void repair_set_version_marks(struct tux3_volume *vol, bool on);

/* Device numbers as the reference userspace stores them: major << 20 |
 * minor (the kernel's internal dev_t), verified on the oracle volumes. */
static inline unsigned rdev_major(uint64_t d) { return (unsigned)((d >> 20) & 0xfff); }
static inline unsigned rdev_minor(uint64_t d) { return (unsigned)(d & 0xfffff); }

#endif

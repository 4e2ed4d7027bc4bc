/*
 * Versioned file data (doc/format.md section 17): a file's data tree of
 * versioned leaves (vleaf, magic 0xbe7a), read and changed per version.
 *
 * A file's data is either unversioned (no tree, a direct extent, or a
 * dtree of 2014 dleaves; every version reads it as the origin, label 0)
 * or a dtree whose every leaf is a vleaf.  vfilemap_update() converts an
 * unversioned file the first time it changes it; vfilemap_convert() does
 * it on demand.  A file with no data stays without a tree until its first
 * write creates an empty vleaf root.
 *
 * The changes go through the write path of the 2014 format (btree_edit.c):
 * leaves copied on write once per delta, bnodes redirected and logged,
 * data blocks allocated (BALLOC) and unmapped blocks logged as BFREE and
 * freed at once when this delta allocated them, else after the commit.
 * inode->dtree may change: the caller stores the inode (inode_store)
 * afterwards.  Nothing here touches inode->size or writes file data.
 */
#ifndef TUX3_VFILEMAP_H
#define TUX3_VFILEMAP_H

#include <stdbool.h>
#include <stdint.h>
#include "version/vinode.h"
#include "version/version.h"

/* The versioned data tree's ops (leaf_magic 0xbe7a) and its write half. */
extern const struct btree_ops vdtree_ops;

/* Is the file's data tree made of vleaves?  (false: no tree, a direct
 * extent, dleaves, or the tree cannot be read) */
int vfilemap_walk_selected(struct tux3_volume *vol, const struct inode *inode,
			   uint64_t start, uint64_t end, extent_fn fn,
			   void *ctx);
bool vfilemap_is_versioned(struct tux3_volume *vol,
			   const struct inode *inode);

/* The direct extent or the dleaf tree becomes a vleaf tree of label-0
 * records holding the same mapping (each leaf copied on write, an
 * over-full leaf split first).  No tree and a vleaf tree: nothing to do. */
int vfilemap_convert(struct tux3_volume *vol, struct inode *inode);

/* The extents version label reads in [start, end): mapped runs only
 * (holes omitted), cut to [start, end), in logical order, .version =
 * label, .leafblock = the leaf.  An unversioned file reads as label 0 for
 * every version (filemap_walk, whose extents may cross start and end and
 * include holes as physical 0).  fn's non-zero return stops the walk and
 * is returned. */
int vfilemap_walk(struct tux3_volume *vol, const struct inode *inode,
		  struct vtree *vt, unsigned label, uint64_t start,
		  uint64_t end, extent_fn fn, void *ctx);

/*
 * Write (VEXT_REDIRECT) or punch (VEXT_PUNCH) count blocks from logical in
 * version *label, converting the file first if needed.  A write gives
 * every block a new physical block (copy-on-write: the committed state
 * keeps the old one); the writer's old exclusive blocks are released.
 * written[i] (count entries) = the block the caller writes logical + i's
 * data to (0 for a punch).  *label may become an implicit child (the
 * writer is now it).  VEXT_IN_PLACE is refused (-EINVAL): it would
 * overwrite blocks the committed state references.
 * Errors: -EINVAL, -EFBIG (past 2^48 blocks), -EROFS, -ENOSPC (no data
 * block, or more elements of one logical block than a leaf holds: 255 at
 * 4 KiB, 31 at 512 bytes), -EUCLEAN (a damaged tree).  On an error the
 * leaves already done stay done (written[] is valid for them).
 */
int vfilemap_update(struct tux3_volume *vol, struct inode *inode,
		    struct vtree *vt, unsigned *label, uint64_t logical,
		    uint64_t count, enum vext_mode mode, uint64_t *written);

/* Apply a delete plan (vtree_delete) to every leaf of the file, releasing
 * the blocks it frees.  An unversioned file has nothing to do. */
int vfilemap_delete(struct tux3_volume *vol, struct inode *inode,
		    struct vtree *vt, const struct vdelete_plan *plan);

/* The whole tree goes, every version's data with it: for an inode no
 * version reads any more.  -EINVAL: not a vleaf tree. */
int vfilemap_destroy(struct tux3_volume *vol, struct inode *inode);

/* A vleaf tree whose records are all the origin's becomes the 2014 map
 * of the same blocks (the nodes freed, the data kept; *flattened counts
 * it).  Anything else is left alone; -EUCLEAN (nothing changed): a
 * record of another label. */
int vfilemap_flatten(struct tux3_volume *vol, struct inode *inode,
		     uint64_t *flattened);

/* fsck's repair: vext_repair on every leaf (elements of labels not in the
 * tree, second elements of a label and orphans dropped, their blocks
 * released). */
int vfilemap_repair(struct tux3_volume *vol, struct inode *inode,
		    struct vtree *vt);

/* vext_check over every leaf (records of each leaf: order and element
 * lists): the number of problems, or a negative error. */
int vfilemap_check(struct tux3_volume *vol, const struct inode *inode,
		   struct vtree *vt, vcheck_fn fn, void *ctx);

/* Data blocks only one version reads, added to exclusive[label] (an
 * array of VERSION_LABELS): what deleting that version would free. */
int vfilemap_exclusive(struct tux3_volume *vol, const struct inode *inode,
		       struct vtree *vt, uint64_t *exclusive);

/* fn(ctx, label) for the label of every record with a label other than
 * the origin's, leaf by leaf (a label may come more than once): which
 * versions read this file's data differently from their parents. */
int vfilemap_labels(struct tux3_volume *vol, const struct inode *inode,
		    void (*fn)(void *ctx, unsigned label), void *ctx);

/* Between vfilemap.c (reading) and vfilemap_write.c (changes). */
/* What a file's data is: none, a direct extent, or a tree whose leftmost
 * leaf's magic says 2014 dleaves or vleaves. */
enum vfilemap_kind { VFM_NONE, VFM_DIRECT, VFM_DLEAF, VFM_VLEAF };
int vfilemap_kind(struct tux3_volume *vol, const struct inode *inode,
		  enum vfilemap_kind *kind);
struct btree vfilemap_tree(struct tux3_volume *vol, const struct inode *inode,
			    const struct btree_ops *ops);
/* The physical block version label reads at logical in a leaf's
 * records (0: a hole); e has room for VERSION_LABELS elements. */
uint64_t vextents_read_at(struct vtree *vt, const struct vextents *x,
			  unsigned label, uint64_t logical, struct velem *e);
int vextents_alloc(struct vextents *x, unsigned cap);
int vdtree_leaf_split(struct tux3_volume *vol, uint8_t *leaf,
		      uint8_t *newleaf, uint64_t *sep);

/* ---- vechain.c: element lists past the leaf (format.md 17.3c) ---- */
/* A chain a leaf's load met: where, its blocks, its elements. */
struct vechain_old {
	uint64_t logical, first;
	uint64_t *blocks;
	struct vextent *elem;
	unsigned nblocks, nelem;
	bool kept;		/* the store named it again */
};
struct vechain_seen {
	struct vechain_old *v;
	unsigned n, cap;
};
void vechain_seen_reset(struct vechain_seen *s);
void vechain_seen_free(struct vechain_seen *s);
unsigned vechain_per_block(unsigned blocksize);
/* x->cap grown to need records at least. */
int vextents_reserve(struct vextents *x, unsigned need);
/* A leaf's records loaded into x (emptied first, grown as needed), an
 * ELIST record's chain read (every field checked: -EUCLEAN named) and
 * its elements put in its place as one-block records; the chains noted
 * in seen (may be NULL).  x then has room for one change. */
int vextents_load_vol(struct tux3_volume *vol, tux3_ino_t inum,
		      const uint8_t *leaf, struct vextents *x,
		      struct vechain_seen *seen);
/* One chain's elements (elem emptied first, grown) and blocks
 * (malloc'd). */
int vechain_blocks(struct tux3_volume *vol, tux3_ino_t inum,
		   uint64_t logical, uint64_t first, struct vextents *elem,
		   uint64_t **blocks, unsigned *nblocks);
/* A new chain of elem[0..nelem) (one-block records of logical, sorted by
 * label) written to blocks allocated near goal: *blocks (malloc'd, the
 * first one first) are the caller's to log (BALLOC) or give back. */
int vechain_write(struct tux3_volume *vol, tux3_ino_t inum, uint64_t logical,
		  const struct vextent *elem, unsigned nelem, uint64_t goal,
		  uint64_t **blocks, unsigned *nblocks);

#endif

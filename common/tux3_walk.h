/*
 * libtux3 volume walker: one traversal of everything reachable, shared by
 * fsck, tux3debug, tux3dot and the image tool.  Each tool is a visitor: it
 * fills the callbacks it cares about (all optional) and gets decoded
 * structures with the block they came from.
 *
 * Order: superblock; log chain (oldest first) and its records; inode table
 * (bnodes, ileaves, and for each inode its attributes, data tree, extents
 * and, for directories, entries); orphan table; atom table; bitmap runs.  A structure that fails
 * validation is reported through .error and skipped; the walk goes on.
 * A callback returning <0 stops the walk; an inode callback returning >0
 * skips that inode's children.
 */
#ifndef TUX3_WALK_H
#define TUX3_WALK_H

#include "tux3.h"

enum tux3_tree { TUX3_TREE_ITREE, TUX3_TREE_OTREE, TUX3_TREE_DTREE };

struct tux3_logrec_info {
	unsigned code;
	const char *name;
	unsigned offset, size;
	int live;		/* after the latest UNIFY: replayed */
	char text[160];		/* decoded, e.g. "BALLOC count 1, block 63" */
	/* bnode records: the blocks whose on-disk bnode image replay may
	 * load for it (a copy of the volume needs them even when no tree
	 * reaches them any more, e.g. the old block of a BNODE_REDIRECT) */
	unsigned nbnodes;
	tux3_block_t bnodes[3];
};

struct tux3_node_info {
	enum tux3_tree tree;
	tux3_ino_t owner;	/* inode of a dtree; 0 for itree/otree */
	tux3_block_t block;
	int level;		/* 0 = root */
	unsigned count;		/* entries */
	uint64_t lo, hi;	/* key range from the parent */
	int replayed;		/* image rebuilt from the log (disk copy stale) */
	unsigned used_bytes;
	const uint64_t *keys, *children;	/* bnodes only, count each */
};

/* tux3_walk_ops.extent's version for the blocks of an inode's attribute
 * chain (format.md 17.3b: versioned attributes past the leaf), logical
 * its place in the chain: metadata of the inode, not file data. */
#define TUX3_EXTENT_SPILL	0x10000u
/* The same for the blocks of an element chain (format.md 17.3c: the
 * elements of one logical block past its leaf), logical its place in the
 * chain; the elements themselves come as extents of their labels. */
#define TUX3_EXTENT_ELIST	0x10001u
/* Either: an inode's metadata outside its trees. */
#define TUX3_EXTENT_META(version)	((version) >= TUX3_EXTENT_SPILL)

struct tux3_attr_desc {
	unsigned kind, version, offset, size;
	const char *name;
};

/* Where a structure that failed validation sits (tux3_walk_ops.site_error):
 * what a checker needs to name the problem and to decide its repair. */
enum tux3_walk_site {
	TUX3_SITE_ROOT,		/* a tree's root pointer (bad depth) */
	TUX3_SITE_NODE,		/* a tree index node (bnode) */
	TUX3_SITE_LEAF,		/* a tree leaf (ileaf, oleaf, dleaf) */
	TUX3_SITE_INODE,	/* an inode's attributes */
	TUX3_SITE_DIRENT,	/* a directory's entries */
	TUX3_SITE_ATOM,		/* the atom table (inode 4's dictionary) */
	TUX3_SITE_BITMAP,	/* the bitmap (block: the bitmap block that
				 * failed, when known) */
};

struct tux3_walk_error {
	const struct tux3_error *err;
	enum tux3_walk_site site;
	enum tux3_tree tree;	/* ROOT, NODE and LEAF */
	tux3_ino_t owner;	/* the inode it belongs to (0: itree/otree) */
	int level;		/* NODE and LEAF: 0 = root */
	tux3_block_t block;	/* NODE and LEAF; TUX3_NONE otherwise */
	/* NODE and LEAF: where it hangs, for a repair that cuts it out */
	uint64_t lo, hi;	/* the key range its parent gives it */
	tux3_block_t parent;	/* the index node pointing at it (TUX3_NONE
				 * for a tree's root) ... */
	unsigned index;		/* ... and the entry there */
	int twice;		/* reached a second time in its tree (a cycle
				 * or a node shared within the tree): the
				 * block itself was not read */
};

struct tux3_walk_ops {
	int (*super)(void *ctx, const struct tux3_super_info *sb);
	int (*logblock)(void *ctx, unsigned index, tux3_block_t block,
			unsigned bytes, tux3_block_t logchain);
	int (*logrec)(void *ctx, tux3_block_t block,
		      const struct tux3_logrec_info *rec);
	int (*bnode)(void *ctx, const struct tux3_node_info *node);
	int (*leaf)(void *ctx, const struct tux3_node_info *leaf);
	int (*inode)(void *ctx, const struct tux3_stat *st,
		     tux3_block_t leafblock, unsigned bloblen);
	int (*attr)(void *ctx, tux3_ino_t ino,
		    const struct tux3_attr_desc *attr);
	int (*extent)(void *ctx, tux3_ino_t ino, uint64_t logical,
		      tux3_block_t physical, uint64_t count, uint32_t version,
		      tux3_block_t leafblock);
	int (*dirent)(void *ctx, tux3_ino_t dir, const char *name,
		      unsigned len, tux3_ino_t ino, unsigned type,
		      uint64_t pos, tux3_block_t block);
	int (*orphan)(void *ctx, tux3_ino_t ino, int in_otree);
	/* the atom table (inode 4), named atoms in atom order */
	int (*atom)(void *ctx, const struct tux3_atom *atom);
	/* the live bitmap: runs of blocks in use, in block order, never
	 * crossing a bitmap block (chunk = its index in inode 1).  stale: the
	 * on-disk copy of that bitmap block is out of date (the log holds
	 * the truth until the next unify). */
	int (*bitrun)(void *ctx, uint64_t chunk, tux3_block_t start,
		      uint64_t count, int stale);
	/* a structure failed validation; the walk skips it and goes on */
	int (*error)(void *ctx, const struct tux3_error *err);
	/* the same with the site; when set, called instead of .error */
	int (*site_error)(void *ctx, const struct tux3_walk_error *err);
};

/* Returns 0, the first callback's negative value, or -EUCLEAN if any
 * structure was skipped as invalid (after reporting it). */
int tux3_walk(struct tux3_volume *vol, const struct tux3_walk_ops *ops,
	      void *ctx);

/* One inode as tux3_walk() visits it (inode, attr, bnode, leaf, extent,
 * dirent and error callbacks), without the rest of the volume.  An inode
 * that cannot be loaded returns its error (pending in tux3_last_error). */
int tux3_walk_inode(struct tux3_volume *vol, tux3_ino_t ino,
		    const struct tux3_walk_ops *ops, void *ctx);

/* Only the atom table (atom callback), or only the bitmap runs (bitrun
 * callback), with their errors; nothing else is read. */
int tux3_walk_atoms(struct tux3_volume *vol, const struct tux3_walk_ops *ops,
		    void *ctx);
int tux3_walk_bitmap(struct tux3_volume *vol, const struct tux3_walk_ops *ops,
		     void *ctx);

/* Only the log chain and its records (logblock and logrec callbacks). */
int tux3_walk_log(struct tux3_volume *vol, const struct tux3_walk_ops *ops,
		  void *ctx);

/* The log chain read without replay, newest block first, stopping at the
 * first damage (reported through .error, and returned). For volumes opened
 * with TUX3_OPEN_NOREPLAY; record .live is 0 (replay status unknown). */
int tux3_scan_log_raw(struct tux3_volume *vol,
		      const struct tux3_walk_ops *ops, void *ctx);

/*
 * What the replay done at open changed, record by record, in the order it
 * applied them (read from the log the open loaded; nothing changes).
 * stages: bit 0 stage 0 (which log blocks and records are replayed), bit
 * 1 stage 1 (bnode images, the free count), bit 2 stage 2 (bitmap,
 * deferred frees, orphans, log blocks in use).  One record may give
 * several steps.  -EINVAL for a volume opened without replay, -ESTALE
 * after a unify of this session folded that log in.
 */
struct tux3_replay_step {
	unsigned stage;		/* 0, 1 or 2 */
	unsigned delta;		/* stages 1, 2: deltas begun so far in the
				 * replayed records (DELTA records) */
	unsigned index;		/* log block, oldest first */
	tux3_block_t logblock;
	unsigned offset;	/* of the record in the block; 0 for a step
				 * about the block itself */
	const char *record;	/* the record decoded, "" for such a step */
	char change[200];	/* what it changes */
	tux3_block_t block;	/* the block changed (TUX3_NONE: none) ... */
	uint64_t count;		/* ... and the run's length */
	int bits;		/* stage 2: +1 set in the bitmap, -1 cleared */
};
typedef int (*tux3_replay_step_fn)(void *ctx,
				   const struct tux3_replay_step *step);
int tux3_replay_steps(struct tux3_volume *vol, unsigned stages,
		      tux3_replay_step_fn fn, void *ctx);

/* Block ownership against the live bitmap (the checker's first pass).
 * Calls fn per problem; returns the number of problems or -errno. */
enum tux3_block_problem {
	TUX3_BLOCK_LEAKED,	/* marked in use, referenced by nothing */
	TUX3_BLOCK_FREE_IN_USE,	/* referenced, but free in the bitmap */
	TUX3_BLOCK_SHARED,	/* referenced twice */
	TUX3_BLOCK_OUTSIDE,	/* referenced beyond the volume */
	TUX3_BLOCK_UNREADABLE,	/* a structure there failed validation */
};
typedef void (*tux3_check_fn)(void *ctx, uint64_t block, uint64_t count,
			      enum tux3_block_problem what);
int tux3_check_alloc(struct tux3_volume *vol, tux3_check_fn fn, void *ctx);

/* The namespace from the root: every entry names an existing inode of
 * the entry's type, no directory has two names, every inode is reachable
 * (orphans aside), and link counts agree (a directory: 2 + its
 * subdirectories).  Returns the number of problems or -errno. */
enum tux3_ns_problem {
	TUX3_NS_DANGLING,	/* entry names no inode */
	TUX3_NS_TYPE,		/* entry type differs from the inode's */
	TUX3_NS_DIR_TWICE,	/* a directory reached under two names */
	TUX3_NS_UNREACHABLE,	/* inode named by no entry, not an orphan */
	TUX3_NS_NLINK,		/* link count differs: have, want */
	TUX3_NS_UNREADABLE,	/* a directory could not be read */
	TUX3_NS_NO_ROOT,	/* inode 63 missing or not a directory */
	TUX3_NS_ENTRY_BAD,	/* a damaged record in a directory block:
				 * have = its byte position in dir, want =
				 * the block (the error is still pending:
				 * tux3_last_error) */
};
typedef void (*tux3_ns_fn)(void *ctx, enum tux3_ns_problem what,
			   uint64_t inum, uint64_t dir, uint64_t have,
			   uint64_t want);
int tux3_check_namespace(struct tux3_volume *vol, tux3_ns_fn fn, void *ctx);

#endif

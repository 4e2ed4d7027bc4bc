/*
 * Versions by versioned pointers (issue 8; doc/format.md section 17).
 *
 * A version is a node of one tree of 12-bit labels.  Label 0 is the
 * origin: the live filesystem, always writable, never a ghost, with at
 * most one child (the root, the newest snapshot of the origin).  Every
 * other label is a snapshot, known from outside by a tag, or a ghost
 * (no tag) that exists only because two or more children still inherit
 * what was written to it before they were made.
 *
 * Data is kept per logical address as an element list: pairs [label,
 * phys] meaning "version label and the versions below it that have no
 * element of their own here read phys" (phys 0: a hole).  A version reads
 * the element of its nearest ancestor (itself included); the origin's
 * element, or a hole, when there is none.  Each block is owned by exactly
 * one element; no element on a ghost is unreadable (an orphan).
 *
 * vtree.c holds the tree, velist.c the operations on one element list.
 * Nothing here does I/O: the filesystem layers (versioned leaves, the
 * version table in inode 3) call these on lists they decode.
 */
#ifndef TUX3_VERSION_H
#define TUX3_VERSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VERSION_LABEL_BITS	12
#define VERSION_LABELS		(1u << VERSION_LABEL_BITS)
#define VERSION_ORIGIN		0u
#define VERSION_NONE		0xffffu

enum {
	VERSION_USED = 1,	/* the label is in the tree */
	VERSION_GHOST = 2,	/* no tag: not readable or writable */
	VERSION_DYING = 4,	/* removed by a delete whose element lists
				 * are not all processed: not reusable yet */
};

#define VERSION_NAME_MAX	39	/* bytes of a snapshot's name */

struct version {
	uint16_t parent;
	uint16_t flags;
	uint32_t tag;		/* unique among tagged versions, 0 = origin */
	int64_t birth_ns;
	uint16_t into, step;	/* DYING: the delete plan's step (vtable) */
	char name[VERSION_NAME_MAX + 1];	/* tagged: NUL-terminated */
};

/* A delete's effect on element lists, in the order it must be applied:
 * label gone, its elements freed (into = VERSION_NONE) or handed to the
 * child promoted into its place (into). */
struct vdelete_step {
	uint16_t label, into;
};

struct vdelete_plan {
	unsigned count;
	struct vdelete_step step[VERSION_LABELS];
};

struct vtree {
	struct version v[VERSION_LABELS];
	unsigned top;		/* every used label is below top */
	unsigned used, ghosts, dying;
	/* names read without their terminating NUL (kept truncated to
	 * VERSION_NAME_MAX bytes): damage that costs the name only */
	unsigned bad_names;
	/* derived from the parent links by vtree_derive() */
	bool derived;
	uint16_t nchild[VERSION_LABELS], first[VERSION_LABELS];
	uint16_t child[VERSION_LABELS];
	uint16_t depth[VERSION_LABELS];
	/* scratch for one element list at a time (velist.c) */
	uint16_t slot[VERSION_LABELS];	/* label -> index + 1 in the list */
	uint16_t stack[VERSION_LABELS];
	/* A delete recorded but not yet applied to every list (a crash
	 * between its two commits): velist_read reads each list as the
	 * plan will leave it, so that a child promoted into a dying label's
	 * place reads what it inherits.  Not stored; NULL normally. */
	const struct vdelete_plan *pending;
};

void vtree_init(struct vtree *vt);
int vtree_derive(struct vtree *vt);
int vtree_find_tag(const struct vtree *vt, uint32_t tag);
static inline bool vtree_used(const struct vtree *vt, unsigned label)
{
	return label < VERSION_LABELS && (vt->v[label].flags & VERSION_USED);
}
static inline bool vtree_ghost(const struct vtree *vt, unsigned label)
{
	return (vt->v[label].flags & VERSION_GHOST) != 0;
}
unsigned vtree_root(struct vtree *vt);
/* The live version alone: no snapshot, ghost or dying label. */
bool vtree_alone(const struct vtree *vt);
/* Children of label (after vtree_derive). */
static inline unsigned vtree_nchild(const struct vtree *vt, unsigned label)
{
	return vt->nchild[label];
}
static inline unsigned vtree_child(const struct vtree *vt, unsigned label,
				   unsigned i)
{
	return vt->child[vt->first[label] + i];
}
bool vtree_is_ancestor(struct vtree *vt, unsigned anc, unsigned label);

/* A snapshot of version `of` (a tagged label or the origin) named tag:
 * returns its label, -EEXIST (tag in use or 0), -ENOENT (of is not
 * readable), -ENOSPC (no free label). */
int vtree_snapshot(struct vtree *vt, unsigned of, uint32_t tag,
		   int64_t birth_ns);
/* Label `label` has children and is about to be written: a new child
 * takes its tag and it becomes a ghost.  Returns the child's label. */
int vtree_implicit_child(struct vtree *vt, unsigned label, int64_t birth_ns);
/* Delete the snapshot tagged tag: untag it, then remove every ghost left
 * with fewer than two children (promoting a single child into its place).
 * The removed labels stay DYING until vtree_delete_done(); plan says what
 * each element list must do (velist_delete()). */
int vtree_delete(struct vtree *vt, uint32_t tag, struct vdelete_plan *plan);
void vtree_delete_done(struct vtree *vt, const struct vdelete_plan *plan);
/* fsck's repair of a table whose parents are sound: a tag used twice
 * given a fresh one, every ghost with fewer than two children removed as
 * a delete removes it (plan: what element lists must do). */
int vtree_repair(struct vtree *vt, struct vdelete_plan *plan);

/*
 * The version table as stored in inode 3 (vtable.c, doc/format.md 17.2):
 * a 64-byte header and one 64-byte record per label below top, CRC32C
 * over all of it.  vtable_encode needs vtable_size() bytes; vtable_decode
 * validates every field (-EUCLEAN with the byte offset in *bad_at) and
 * rebuilds the derived arrays and a pending delete's plan.
 */
#define VTABLE_MAGIC		0x54335654u	/* "T3VT" */
#define VTABLE_HEADER		64
#define VTABLE_RECORD		64
size_t vtable_size(const struct vtree *vt);
void vtable_encode(const struct vtree *vt, uint8_t *buf);
int vtable_decode(struct vtree *vt, const uint8_t *buf, size_t len,
		  struct vdelete_plan *pending, size_t *bad_at);
/* The fallback when vtable_decode refuses a table (fsck pass 9 and the
 * open, doc/format.md 17.4): the records that decode on their own are
 * kept (a header and a CRC that are bad cost nothing more), the origin is
 * made sound, labels the origin does not reach go, as do the dying
 * labels unless they form a plan; snapshots without a tag or a usable
 * name get one.  Returns the number of labels dropped or fixed; the tree
 * may still break vtree_check's rules on ghosts and tags (vtree_repair's
 * business). */
unsigned vtable_salvage(struct vtree *vt, const uint8_t *buf, size_t len,
			struct vdelete_plan *pending);
/* The same on a tree already in memory (one that decodes but breaks
 * the rules). */
unsigned vtree_salvage(struct vtree *vt, struct vdelete_plan *pending);
/* Snapshots whose names cannot be selected (empty, with a '/', the name
 * of an earlier snapshot); fix: each given a fresh "lost-TAG-LABEL". */
unsigned vtree_names_bad(struct vtree *vt, bool fix);
/* Records the plan in the DYING labels (into, step), so that a delete
 * interrupted by a crash resumes from the table alone. */
void vtree_plan_record(struct vtree *vt, const struct vdelete_plan *plan);

/* Version-table invariants (fsck pass 9, VT1-VT4): calls fn once per
 * problem with a message; returns the number of problems. */
typedef void (*vcheck_fn)(void *ctx, unsigned label, const char *what);
unsigned vtree_check(struct vtree *vt, vcheck_fn fn, void *ctx);

/* ---- one element list (velist.c) ---- */
struct velem {
	uint16_t label;
	uint64_t phys;		/* 0: a hole */
};

/* The element version `label` reads: its index, or -1 (a hole). */
int velist_read(struct vtree *vt, const struct velem *e, unsigned n,
		unsigned label);
/* Non-ghost versions reading element i (the owner itself included). */
unsigned velist_heirs(struct vtree *vt, const struct velem *e, unsigned n,
		      unsigned i);

/* The only non-ghost version reading element i, or -1 (none, several):
 * whose deletion would free the element's block. */
int velist_sole_reader(struct vtree *vt, const struct velem *e, unsigned n,
		       unsigned i);

/*
 * Prepare a write by version *label at this address.  On return:
 *   >= 0  index of the element *label now owns exclusively: write there
 *         (an element with phys 0 needs a block: the caller sets phys);
 *   -ENOENT  no element to reuse: the caller allocates and appends
 *         [*label, phys] (velist_add);
 *   -ENOSPC  the list is full (cap), -EROFS *label is a ghost.
 * May first make an implicit child of *label (the writer becomes it, and
 * *label is updated), and may relabel or add elements for versions that
 * keep the old value (a write to the origin hands its old block to the
 * root).  It never frees a block: a write only adds or relabels.
 */
typedef void (*vfree_fn)(void *ctx, uint64_t phys);
int velist_write(struct vtree *vt, struct velem *e, unsigned *n, unsigned cap,
		 unsigned *label, int64_t birth_ns);
int velist_add(struct velem *e, unsigned *n, unsigned cap, unsigned label,
	       uint64_t phys);

/* Apply a delete plan to one list, then free orphans and redundant holes.
 * Returns the number of elements changed or freed. */
unsigned velist_delete(struct vtree *vt, const struct vdelete_plan *plan,
		       struct velem *e, unsigned *n, vfree_fn free_fn,
		       void *ctx);
/* Free every element on a ghost that no version reads, and hole elements
 * that repeat an inherited hole.  Returns how many went. */
unsigned velist_normalize(struct vtree *vt, struct velem *e, unsigned *n,
			  vfree_fn free_fn, void *ctx);

/* fsck's repair of one list: elements of labels not in the tree (or
 * dying) and second elements of a label dropped, then velist_normalize.
 * Returns how many went. */
unsigned velist_repair(struct vtree *vt, struct velem *e, unsigned *n,
		       vfree_fn free_fn, void *ctx);

/* Element-list invariants (EL1-EL3): returns the number of problems. */
unsigned velist_check(struct vtree *vt, const struct velem *e, unsigned n,
		      vcheck_fn fn, void *ctx);

/*
 * Versioned extents (vextent.c): runs of elements.  A record [logical,
 * count, label, phys] is the element [label, phys + i] at logical + i for
 * i < count (phys 0: a run of hole elements).  A set of records is kept
 * sorted by (logical, label); records of one label never overlap.  Each
 * operation works block by block on the element lists the records imply
 * (the proven single-address rules of velist.c), then merges neighbours
 * again, so that the per-block form is the reference for the extent form.
 */
struct vextent {
	uint64_t logical;
	uint32_t count;
	uint16_t label;
	uint64_t phys;
	uint8_t flags;		/* on disk only: VEXT_ELIST (vleaf.h) */
};

struct vextents {
	struct vextent *r;
	unsigned n, cap;
};

/* What version label reads at logical: the physical block (0: a hole). */
uint64_t vext_read(struct vtree *vt, const struct vextents *x,
		   unsigned label, uint64_t logical);
/* Write count (1..VEXT_WRITE_MAX) blocks from logical by version *label
 * (which may become an implicit child).  alloc gives a new block (0: no
 * space); written[i] receives the block that now holds logical + i.  On
 * -ENOSPC (no block, or more records than x->cap) the set is unchanged,
 * but blocks alloc gave are the caller's to free. */
#define VEXT_WRITE_MAX	65536	/* blocks per vext_write call */
typedef uint64_t (*valloc_fn)(void *ctx);
int vext_write(struct vtree *vt, struct vextents *x, unsigned *label,
	       uint64_t logical, uint32_t count, valloc_fn alloc,
	       void *ctx, uint64_t *written, int64_t birth_ns);
/*
 * The general form: VEXT_IN_PLACE is vext_write; VEXT_REDIRECT gives
 * every written block a new place, the writer's old blocks going to
 * free_fn (copy-on-write, as the commit needs); VEXT_PUNCH makes the range
 * a hole in version *label only (written[] all 0), freeing the writer's
 * exclusive blocks.  Frees happen only when the whole update succeeded.
 */
enum vext_mode { VEXT_IN_PLACE, VEXT_REDIRECT, VEXT_PUNCH };
int vext_update(struct vtree *vt, struct vextents *x, unsigned *label,
		uint64_t logical, uint32_t count, enum vext_mode mode,
		valloc_fn alloc, vfree_fn free_fn, void *ctx,
		uint64_t *written, int64_t birth_ns);
/* Blocks only one version reads, added to exclusive[that label]. */
void vext_exclusive(struct vtree *vt, const struct vextents *x,
		    uint64_t *exclusive);
/* A delete's plan applied to every block of the set. */
int vext_delete(struct vtree *vt, const struct vdelete_plan *plan,
		struct vextents *x, vfree_fn free_fn, void *ctx);
/* velist_repair on every block of the set (records out of order or
 * empty are sorted or dropped first). */
int vext_repair(struct vtree *vt, struct vextents *x, vfree_fn free_fn,
		void *ctx);
/* Records sorted, counts >= 1, same-label records disjoint, and every
 * implied element list valid (velist_check): the number of problems. */
unsigned vext_check(struct vtree *vt, const struct vextents *x,
		    vcheck_fn fn, void *ctx);

/*
 * Versioned attributes (vattr.c): an inode's blob holds the attributes of
 * every version, the head's 12-bit version field carrying the label.  One
 * attribute kind (an xattr: one atom) is one element list; an element is
 * an attribute, or the ABSENT marker (kind 10, payload be16 kind and be16
 * atom), a hole: "this version and the ones below it have none".  An
 * inode created after a snapshot is ABSENT in it by its MODE_OWNER.
 * Label-0 attributes are written first, in the 2014 order, so an inode of
 * a volume without versions encodes exactly as before.
 */
#define VATTR_KEY(kind, atom)	((uint32_t)(kind) << 16 | (atom))
#define VATTR_MAX	65536	/* attributes in one inode, all versions */

struct vattr {
	uint32_t key;		/* VATTR_KEY(kind, atom; 0 unless XATTR) */
	uint16_t label;
	bool absent;
	uint16_t len;		/* payload bytes (an XATTR's: value only) */
	uint8_t *data;
};

struct vattrs {
	struct vattr *a;
	unsigned n, cap;
};

/* Parse a blob: -EUCLEAN at the byte offset *bad_at for a head cut off,
 * an unknown kind, a short payload or a second element of one (key,
 * label); -ENOMEM. */
int vattrs_decode(const uint8_t *blob, unsigned len, struct vattrs *out,
		  unsigned *bad_at);
/* Whether a blob parses with every attribute of label 0 and none
 * ABSENT: an inode every version reads alike (false when it does not
 * parse: the caller takes its careful path). */
bool vattrs_plain(const uint8_t *blob, unsigned len);
/* fn(ctx, label) for the label of every attribute other than label 0's,
 * from the encoded blob, nothing allocated (the version index's note of
 * a store); fn's non-zero return stops the walk; -EUCLEAN: does not
 * parse. */
/* The data tree's packed root, which every version shares (one label-0
 * attribute; 0: none). */
uint64_t vattrs_dtree(const struct vattrs *x);
int vattrs_labels(const uint8_t *blob, unsigned len,
		  int (*fn)(void *ctx, unsigned label), void *ctx);
/* Encode into blob (cap bytes): the size, or -ENOSPC. */
int vattrs_encode(const struct vattrs *in, uint8_t *blob, unsigned cap);
void vattrs_free(struct vattrs *x);
/* What version label reads for key: the attribute, or NULL (none, or
 * ABSENT). */
const struct vattr *vattrs_get(struct vtree *vt, const struct vattrs *x,
			       unsigned label, uint32_t key);
/* Set key's value for version *label (data NULL: make it absent), by the
 * write rule of velist_write (*label may become an implicit child). */
int vattrs_set(struct vtree *vt, struct vattrs *x, unsigned *label,
	       uint32_t key, const void *data, unsigned len,
	       int64_t birth_ns);
/* key's value for every version alike: its elements replaced by one
 * label-0 attribute (data NULL: none).  For what all versions share, the
 * data tree root. */
int vattrs_set_shared(struct vattrs *x, uint32_t key, const void *data,
		      unsigned len);
/* Does a readable version (the origin, a tagged one) read the inode's
 * mode (kind 1), i.e. have the inode? */
bool vattrs_inode_live(struct vtree *vt, const struct vattrs *x);
/* Has a label a pending delete removes a mode of its own (the delete,
 * finished, may free the inode)? */
bool vattrs_inode_dying(struct vtree *vt, const struct vattrs *x);
/* A delete's plan applied to every key's list. */
int vattrs_delete(struct vtree *vt, const struct vdelete_plan *plan,
		  struct vattrs *x);
/* velist_repair on every key's list: the number of attributes dropped. */
unsigned vattrs_repair(struct vtree *vt, struct vattrs *x);
/* Every key's list valid (velist_check): the number of problems. */
unsigned vattrs_check(struct vtree *vt, const struct vattrs *x,
		      vcheck_fn fn, void *ctx);

/* qsort order of block and key numbers. */
static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

#endif

/*
 * The problem table of the check engine, e2fsck's way: every problem has
 * a code, a message template, whether preen (-p) may fix it unasked, and
 * what a yes does (NULL: it cannot be fixed).  The template is a printf
 * format; the pass that reports the problem passes its values, in the
 * order the template names them (every number is a uint64_t, "%s" a
 * string).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check/fsck_internal.h"

#define U PRIu64

static const struct tux3_fsck_problem_def table[P_COUNT + 1] = {
	/* ---- pass 1: superblock ---- */
	[P1_SUPER_BAD] = { "PASS1_SUPER_BAD", 1,
		"superblock unusable: %s", 0, NULL },
	[P1_SUPER_WARNING] = { "PASS1_SUPER_WARNING", 1,
		"superblock: %s", 0, NULL },
	[P1_EXT_BAD] = { "PASS1_EXTENSION_BAD", 1,
		"superblock extension record (bytes %" U "..%" U "): %s; %s",
		1, "rewrite the extension record" },
	[P1_FEATURES] = { "PASS1_FEATURES", 1,
		"unknown incompatible feature flags %#" PRIx64 " in the "
		"extension record: this build cannot use the volume", 0, NULL },
	[P1_MAGIC] = { "PASS1_MAGIC", 1,
		"superblock magic is %s, not 7475783320140506: not a Tux3 "
		"2014-05-06 volume", 0, NULL },
	[P1_BLOCKSIZE] = { "PASS1_BLOCKSIZE", 1,
		"superblock: block size 2^%" U " (blockbits) is outside "
		"2^9..2^16", 0, NULL },
	[P1_GEOMETRY] = { "PASS1_GEOMETRY", 1,
		"superblock: volblocks %" U " is not a possible volume size",
		0, NULL },
	[P1_VOLSIZE] = { "PASS1_VOLUME_SIZE", 1,
		"superblock: the volume has %" U " blocks, but the device holds "
		"only %" U " (truncated image or wrong device?)", 0, NULL },
	[P1_ROOT] = { "PASS1_ROOT", 1,
		"%s", 0, NULL },
	[P1_LOG_CHAIN] = { "PASS1_LOG_CHAIN", 1,
		"%s", 0, NULL },
	[P1_RO_FEATURES] = { "PASS1_RO_FEATURES", 1,
		"unknown read-only feature flags %#" PRIx64 " in the extension "
		"record: this build can only check the volume, not vouch for "
		"or repair it",
		0, NULL },
	[P1_HINT] = { "PASS1_HINT", 1,
		"superblock: the hint %s %" U " %s", 1,
		"recompute it" },
	[P1_SB2] = { "PASS1_SUPER_FROM_COPY", 1,
		"%s; the secondary superblock at byte 1024 is whole%s", 0,
		"restore the superblock from the secondary copy" },
	[P1_MAGIC_NEAR] = { "PASS1_MAGIC_DAMAGED", 1,
		"superblock magic is %s, %" U " bit%s away from %s, and every "
		"other field is valid", 0, "restore the magic" },
	[P1_RECOMPUTE] = { "PASS1_FIELD_RECOMPUTE", 1,
		"%s; no secondary superblock to take it from, but %s", 0,
		"recompute the field" },
	[P1_EXT_NEWER] = { "PASS1_EXTENSION_NEWER", 1,
		"superblock extension record (bytes %" U "..%" U "): %s; "
		"written by a newer tool, left as it is", 0, NULL },
	[P1_ATIME_MAGIC] = { "PASS1_ATIME_MAGIC", 1,
		"superblock magic is %s, but the extension record's "
		"incompatible features (%#" PRIx64 ") imply %s", 1,
		"set the magic the features imply" },
	/* ---- pass 2: log ---- */
	[P2_LOG_BAD] = { "PASS2_LOG_BAD", 2,
		"log block %" U " (%" U " of %" U "): %s; %s", 0,
		"truncate the log before the damaged delta" },
	[P2_REPLAY_FAILED] = { "PASS2_REPLAY_FAILED", 2,
		"log replay failed at log block %" U " (%" U " of %" U "): %s; "
		"%s", 0, "truncate the log before the failing delta" },
	[P2_LOGCOUNT] = { "PASS2_LOGCOUNT", 2,
		"superblock logcount is %" U ", but the log chain holds %" U
		" blocks since %s", 0, "set logcount to the chain's length" },
	[P2_STATE_BAD] = { "PASS2_STATE_UNREADABLE", 2,
		"after replay, %s cannot be read: %s", 0, NULL },
	[P2_LOG_PREMARK] = { "PASS2_LOG_BEFORE_UNIFY", 2,
		"log block %" U " (%" U " of %" U "): %s; it comes before the "
		"unify mark (in log block %" U "), so replay skips its records",
		0, "begin the log after it" },
	[P2_BITMAP_BAD] = { "PASS2_BITMAP_UNREADABLE", 2,
		"after replay, the bitmap inode (1) cannot be read: %s", 0,
		"read it past the damage (pass 3 repairs the inode table)" },
	[P2_ORPHANS_BAD] = { "PASS2_ORPHANS_UNREADABLE", 2,
		"after replay, the orphan table cannot be read: %s", 0,
		"keep the orphans that can be read (pass 3 cuts the damage out; "
		"pass 5 finds the lost orphans)" },
	[P2_LOG_SALVAGE] = { "PASS2_LOG_SALVAGE", 2,
		"log block %" U " (%" U " of %" U "): %s; %s; %s", 0,
		"replay what the log still holds" },
	[P2_INTERNAL_LOST] = { "PASS2_INTERNAL_LOST", 2,
		"the inode table leaf at block %" U ", which holds the volume's "
		"own inodes (bitmap, countmap, atom table, root directory), "
		"cannot be read (%s)", 0,
		"cut it out and make them anew (the bitmap and counts rebuilt, "
		"xattrs whose names are lost dropped, a new root directory "
		"with what it named in /lost+found)" },
	[P2_ITABLE_LOST] = { "PASS2_ITABLE_LOST", 2,
		"the inode table is the one leaf at block %" U ", and it cannot "
		"be read (%s): every inode is lost, the bitmap's, the root "
		"directory's and every file's", 0,
		"make the volume empty again (same UUID, label and features; "
		"a new root directory)" },
	[P2_STATE_FROM_COPY] = { "PASS2_STATE_FROM_COPY", 2,
		"the volume does not open from the superblock's %s (%s); the "
		"secondary superblock's (%s) opens it", 0,
		"take the roots and the log's head and count from the "
		"secondary superblock" },
	[P2_ROOT_FOUND] = { "PASS2_ROOT_FOUND", 2,
		"the volume does not open from the superblock's %s root %#"
		PRIx64 " (%s); of the roots it may be (its block at another "
		"depth, or one bit away), only %#" PRIx64 " opens it", 0,
		"take that root" },
	[P2_LOG_HEAD] = { "PASS2_LOG_HEAD", 2,
		"the superblock's log head, block %" U ", does not lead to a "
		"log that replays (%s); of the blocks it may be (the one "
		"before the allocator's next, the head one bit away), only "
		"block %" U " opens the volume", 0,
		"take it for the log's head" },
	[P2_REPLAY_SALVAGE] = { "PASS2_REPLAY_SALVAGE", 2,
		"log replay failed at log block %" U " (%" U " of %" U "): %s; "
		"%s; %s", 0, "replay what the log still holds, skipping the "
		"records that do not apply" },
	/* ---- pass 3: trees ---- */
	[P3_STRUCT_BAD] = { "PASS3_STRUCT_BAD", 3,
		"%s tree root: %s", 0, NULL },
	[P3_NODE_BAD] = { "PASS3_NODE_BAD", 3,
		"%s tree index node %" U " (level %" U "): %s%s", 0,
		"cut the node's subtree out of the tree" },
	[P3_LEAF_BAD] = { "PASS3_LEAF_BAD", 3,
		"%s tree leaf %" U ": %s%s", 0, "cut the leaf out of the tree" },
	[P3_LEAF_TRIM] = { "PASS3_LEAF_TRIM", 3,
		"%s tree leaf %" U ": %s; it cannot be cut out, and its "
		"dictionary still reads its first %" U " slots", 0,
		"keep the inodes it reads, drop the rest" },
	[P3_NODE_ENTRIES] = { "PASS3_NODE_ENTRIES", 3,
		"%s tree index node %" U " (level %" U "): %s%s", 0,
		"remove the bad entries (and their subtrees), or give one whose "
		"key alone is bad the first key its child holds" },
	[P3_DEPTH] = { "PASS3_DEPTH", 3,
		"%s tree block %" U " at level %" U " is %s, but the tree's "
		"depth of %" U " puts %s there%s", 0,
		"cut it out of the tree" },
	[P3_TWICE] = { "PASS3_BLOCK_TWICE", 3,
		"%s tree block %" U " is reached a second time (from index node "
		"%" U ", entry %" U "): a cycle or a node shared in the tree%s",
		0, "remove the second reference" },
	/* ---- pass 4: inodes ---- */
	[P4_INODE_BAD] = { "PASS4_INODE_BAD", 4,
		"inode %" U ": attributes unreadable: %s", 0,
		"clear the inode" },
	[P4_ATTR_DUP] = { "PASS4_ATTR_DUPLICATE", 4,
		"inode %" U ": attribute %s appears twice", 0,
		"keep the first" },
	[P4_ATTR_VERSION] = { "PASS4_ATTR_VERSION", 4,
		"inode %" U ": attribute %s at blob offset %" U " has version %"
		U ", which the 2014 format never writes", 1,
		"drop the attribute" },
	[P4_ATIME_STRAY] = { "PASS4_ATIME_STRAY", 4,
		"inode %" U ": ATIME attribute at blob offset %" U " %s", 1,
		"drop the attribute" },
	[P4_SPILL_BAD] = { "PASS4_SPILL_BAD", 4,
		"inode %" U ": the attributes of its versions past the leaf do "
		"not read: %s", 0,
		"drop them (those versions read their newer ones')" },
	[P4_XATTR_BAD] = { "PASS4_XATTR_BAD", 4,
		"inode %" U ": xattr record at blob offset %" U " is too short",
		0, "drop the xattr" },
	[P4_MODE_BAD] = { "PASS4_MODE_BAD", 4,
		"inode %" U ": mode %#" PRIo64 " has no valid file type", 0,
		"clear the inode" },
	[P4_ROOT_MODE] = { "PASS4_ROOT_MODE", 4,
		"the root directory (inode 63) has mode %#" PRIo64, 0,
		"make it a directory" },
	[P4_INTERNAL_MODE] = { "PASS4_INTERNAL_MODE", 4,
		"internal inode %" U " has mode %#" PRIo64 ": the format gives "
		"it no file type", 1, "clear the file type" },
	[P4_SIZE_SHORT] = { "PASS4_SIZE_SHORT", 4,
		"inode %" U ": size is %" U ", but its data reaches %" U, 1,
		"set the size" },
	[P4_SIZE_BIG] = { "PASS4_SIZE_BIG", 4,
		"inode %" U ": size %" U " exceeds the format's maximum %" U, 0,
		"set the size from its data" },
	[P4_DTREE_BAD] = { "PASS4_DTREE_BAD", 4,
		"inode %" U ": data tree block %" U ": %s", 0,
		"rebuild the data map from what is readable" },
	[P4_EXTENT_OUTSIDE] = { "PASS4_EXTENT_OUTSIDE", 4,
		"inode %" U ": extent %" U "+%" U " at logical block %" U
		" lies outside the volume", 0, "remove the extent" },
	[P4_EXTENT_SHARED] = { "PASS4_EXTENT_SHARED", 4,
		"inode %" U ": blocks %" U "+%" U " also belong to %s", 0,
		"give the inode its own copy" },
	[P4_DIR_SIZE] = { "PASS4_DIR_SIZE", 4,
		"directory inode %" U ": size %" U " is not a whole number "
		"of blocks", 1, "set the size to the end of its blocks" },
	[P4_SYMLINK_BAD] = { "PASS4_SYMLINK_BAD", 4,
		"symlink inode %" U ": %s", 0, "clear the inode" },
	[P4_SPECIAL_DATA] = { "PASS4_SPECIAL_DATA", 4,
		"inode %" U " (%s) has data blocks", 1, "release the data" },
	/* ---- pass 5: directories ---- */
	[P5_DANGLING] = { "PASS5_DANGLING_ENTRY", 5,
		"directory %" U " has an entry naming inode %" U
		", which does not exist", 1, "remove the entry" },
	[P5_TYPE] = { "PASS5_ENTRY_TYPE", 5,
		"directory %" U ": entry for inode %" U " has type %" U
		", the inode's is %" U, 1, "set the entry type from the inode" },
	[P5_DIR_TWICE] = { "PASS5_DIR_TWICE", 5,
		"directory inode %" U " has a second name in directory %" U,
		0, "remove the second name" },
	[P5_UNREACHABLE] = { "PASS5_UNREACHABLE", 5,
		"inode %" U " (link count %" U ") is not reachable from the "
		"root", 0, "connect it to /lost+found" },
	[P5_NLINK] = { "PASS5_LINK_COUNT", 5,
		"inode %" U ": link count is %" U ", should be %" U, 1,
		"set the link count" },
	[P5_DIR_UNREADABLE] = { "PASS5_DIR_UNREADABLE", 5,
		"directory inode %" U " cannot be read", 0, NULL },
	[P5_NO_ROOT] = { "PASS5_NO_ROOT", 5,
		"the root directory (inode 63) is missing or not a directory",
		0, "make an empty root directory (what it named goes to "
		"/lost+found)" },
	[P5_ENTRY_BAD] = { "PASS5_ENTRY_BAD", 5,
		"directory %" U " block %" U ": %s", 0,
		"clear the block from the damaged entry to its end" },
	[P5_LOST_FOUND] = { "PASS5_LOST_FOUND", 5,
		"/lost+found is not a directory", 0,
		"move it aside as /lost+found.INUM" },
	[P5_DIRHASH] = { "PASS5_DIR_INDEX", 5,
		"directory %" U ": its on-disk index does not match its "
		"entries: %s", 1, "rebuild the index from the entries" },
	/* ---- pass 6: atoms ---- */
	[P6_DICT_BAD] = { "PASS6_DICT_BAD", 6,
		"atom dictionary: %s", 0,
		"repair the dictionary (what cannot be read is dropped)" },
	[P6_REFCOUNT] = { "PASS6_REFCOUNT", 6,
		"atom %" U " (%s): reference count is %" U ", %" U
		" uses found", 1, "set the reference count" },
	[P6_UNKNOWN_ATOM] = { "PASS6_UNKNOWN_ATOM", 6,
		"inode %" U ": xattr names atom %" U ", which is not in the "
		"dictionary", 0, "remove the xattr" },
	[P6_REVERSE] = { "PASS6_REVERSE_MAP", 6,
		"atom %" U ": %s", 1, "rewrite the reverse map entry" },
	[P6_FREE_LIST] = { "PASS6_FREE_LIST", 6,
		"free-atom list: %s", 1, "rebuild the free list" },
	[P6_ATOM_UNUSED] = { "PASS6_ATOM_UNUSED", 6,
		"atom %" U " (%s) has a reference count of %" U
		", but no xattr uses it", 1, "free the atom" },
	/* ---- pass 7: orphans ---- */
	[P7_ORPHAN_LINKED] = { "PASS7_ORPHAN_LINKED", 7,
		"orphan record for inode %" U ", which is still linked (%s)",
		1, "remove the orphan record" },
	[P7_ORPHAN_GONE] = { "PASS7_ORPHAN_GONE", 7,
		"orphan record for inode %" U ", which does not exist", 1,
		"remove the orphan record" },
	/* ---- pass 8: free space ---- */
	[P8_LEAKED] = { "PASS8_BLOCK_LEAKED", 8,
		"block %" U " is marked in use but nothing references it",
		1, "clear its bitmap bit" },
	[P8_FREE_IN_USE] = { "PASS8_BLOCK_FREE_IN_USE", 8,
		"block %" U " is referenced but free in the bitmap", 1,
		"set its bitmap bit" },
	[P8_SHARED] = { "PASS8_BLOCK_SHARED", 8,
		"block %" U " is referenced twice", 0, NULL },
	[P8_OUTSIDE] = { "PASS8_BLOCK_OUTSIDE", 8,
		"blocks %" U "+%" U " referenced beyond the volume", 0, NULL },
	[P8_REPLAY_CONFLICT] = { "PASS8_REPLAY_CONFLICT", 8,
		"the bitmap disagrees with the log: %s", 1,
		"rewrite the bitmap from the replayed state" },
	[P8_COUNTMAP] = { "PASS8_COUNTMAP", 8,
		"group %" U ": countmap says %" U " blocks used, the bitmap %"
		U, 1, "set the group count" },
	[P8_FREEBLOCKS] = { "PASS8_FREEBLOCKS", 8,
		"free block count is %" U ", should be %" U, 1,
		"set the free block count" },
	[P8_USEDINODES] = { "PASS8_USEDINODES", 8,
		"used inode count is %" U ", should be %" U, 1,
		"set the used inode count" },
	/* ---- pass 9: versions ---- */
	[P9_GATE] = { "PASS9_VERSIONS_MARK", 9,
		"%s", 0, "mark the volume as the version table says" },
	[P9_VTABLE_LOST] = { "PASS9_VTABLE_LOST", 9,
		"the volume has versions (its superblock magic and VERSIONS "
		"bit), but its version table (inode 3) is gone", 0,
		"make a table of the live version alone (the snapshots are "
		"lost; every file keeps its live version)" },
	[P9_VTABLE_BAD] = { "PASS9_VTABLE_BAD", 9,
		"%s", 0, "rebuild the table from the records that decode "
		"(a bad record costs its snapshot)" },
	[P9_VTABLE_NAME] = { "PASS9_VTABLE_NAME", 9,
		"version table: %" U " snapshot name(s) empty, repeated or "
		"without a terminating NUL", 1,
		"rename them lost-TAG-LABEL and rewrite the table" },
	[P9_VTABLE_TREE] = { "PASS9_VTABLE_TREE", 9,
		"version table: %s", 0,
		"retag, remove the ghost as a delete would, or drop the "
		"labels the live version does not reach" },
	[P9_DELETE_PENDING] = { "PASS9_DELETE_PENDING", 9,
		"a snapshot delete was interrupted: %" U " labels are still "
		"dying", 1, "finish the delete" },
	[P9_STRAY_VTABLE] = { "PASS9_STRAY_VTABLE", 9,
		"inode 3 holds a version table, but the volume has no "
		"versions", 0, "remove inode 3" },
	[P9_ELEMENT_BAD] = { "PASS9_ELEMENT_BAD", 9,
		"inode %" U ": versioned data: %s", 0,
		"drop the bad elements" },
	[P9_ATTR_BAD] = { "PASS9_ATTR_BAD", 9,
		"inode %" U ": versioned attributes: %s", 0,
		"drop the bad elements" },
	[P9_NAMESPACE] = { "PASS9_NAMESPACE", 9,
		"snapshot %s: %s", 0,
		"repair it in the snapshot as pass 5 would" },
	[P9_NAMESPACE_LOST] = { "PASS9_NAMESPACE_LOST", 9,
		"snapshot %s: %s, which cannot be repaired in the snapshot", 0,
		"delete the snapshot" },
	[P9_VINDEX_BAD] = { "PASS9_VINDEX_BAD", 9,
		"%s", 1, "build the version index again from the elements" },
	[P9_VINDEX_MISSING] = { "PASS9_VINDEX_MISSING", 9,
		"version index: %s", 1,
		"build the version index again from the elements" },
	[P9_VINDEX_STRAY] = { "PASS9_VINDEX_STRAY", 9,
		"the VERSION_INDEX feature is set, but the volume has no "
		"versions", 1, "clear the feature" },
	[P_COUNT] = { NULL, 0, NULL, 0, NULL },
};

const struct tux3_fsck_problem_def *tux3_fsck_problem_table(void)
{
	return table;
}

int fsck_problem(struct fsck *f, unsigned id, bool fixable,
		 const struct fsck_at *at, ...)
{
	static const struct fsck_at none;
	struct tux3_fsck_problem p;
	va_list ap;

	if (f->stop || id >= P_COUNT)
		return 0;
	if (!at)
		at = &none;
	p = (struct tux3_fsck_problem){
		.def = &table[id], .block = at->block, .count = at->count,
		.inum = at->inum, .dir = at->dir, .have = at->have,
		.want = at->want,
		.fixable = fixable && table[id].fix && fsck_repairing(f),
	};
	va_start(ap, at);
	vsnprintf(p.text, sizeof(p.text), table[id].message, ap);
	va_end(ap);
	f->cur = (struct fsck_refusal){ .id = id, .block = at->block,
					.inum = at->inum, .dir = at->dir };
	if (p.fixable && f->refused && fsck_refusals_has(f->refused, &f->cur)) {
		/* its repair failed in an earlier round: left as it is in
		 * this one, tried again once the others are committed */
		size_t len = strlen(p.text);
		snprintf(p.text + len, sizeof(p.text) - len, " (its repair "
			 "failed in an earlier round: left for now)");
		p.fixable = 0;
		f->refused_hits++;
	}
	f->res->found++;
	int yes = f->ops->problem ? f->ops->problem(f->ctx, &p) : 0;
	if (yes < 0) {
		f->stop = -1;
		f->res->aborted = 1;
		return 0;
	}
	if (yes && p.fixable)
		return 1;
	f->res->unfixed++;
	return 0;
}

void fsck_info(struct fsck *f, const char *fmt, ...)
{
	char buf[600];
	va_list ap;
	if (!f->ops->info)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	f->ops->info(f->ctx, f->pass, buf);
}

/* Errors that say the machine, not the volume, failed: the run stops. */
static bool operational(int err)
{
	return err == -EIO || err == -ENOMEM;
}

static void repair_failed(struct fsck *f, int err,
			  const struct fsck_refusal *k)
{
	char why[sizeof(f->fail_msg)];
	f->res->unfixed++;
	if (operational(err)) {
		if (!f->err)
			f->err = err;
		return;
	}
	if (f->vol && f->vol->error.err)
		tux3_error_text(f->vol, why, sizeof(why));
	else
		snprintf(why, sizeof(why), "%s", strerror(-err));
	if (!f->failed.n)
		snprintf(f->fail_msg, sizeof(f->fail_msg), "%s", why);
	if (fsck_refusals_add(&f->failed, k) && !f->err)
		f->err = -ENOMEM;
	fsck_info(f, "  the repair failed: %s", why);
	if (f->vol)
		tux3_clear_error(f->vol);
}

void fsck_fixed(struct fsck *f, int err)
{
	if (!err && f->ops->repair_fault && f->cur.id < P_COUNT)
		err = f->ops->repair_fault(f->ctx, &table[f->cur.id]);
	if (err < 0) {
		repair_failed(f, err, &f->cur);
		return;
	}
	f->res->fixed++;
	f->res->modified = 1;
}

void fsck_fixed_inode(struct fsck *f, int err, tux3_ino_t inum)
{
	if (err < 0) {
		struct fsck_refusal k = { .id = P4_INODE_BAD, .inum = inum };
		repair_failed(f, err, &k);
		return;
	}
	f->res->fixed++;
	f->res->modified = 1;
}

bool fsck_refused_inode(const struct fsck *f, tux3_ino_t inum)
{
	struct fsck_refusal k = { .id = P4_INODE_BAD, .inum = inum };
	return f->refused && fsck_refusals_has(f->refused, &k);
}

static bool refusal_eq(const struct fsck_refusal *a,
		       const struct fsck_refusal *b)
{
	return a->id == b->id && a->block == b->block && a->inum == b->inum &&
	       a->dir == b->dir;
}

/* An open-addressed hash set: a round with many failed repairs stays
 * linear.  A slot is used when its id is not FSCK_NO_ID. */
#define FSCK_NO_ID (~0u)

static size_t refusal_slot(const struct fsck_refusals *r,
			   const struct fsck_refusal *k)
{
	uint64_t h = k->id * 0x9e3779b97f4a7c15ull;
	h ^= k->block + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
	h ^= k->inum + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h ^= k->dir + 0x85ebca6b2e0d3f4bull + (h << 6) + (h >> 2);
	size_t i = (size_t)h & (r->cap - 1);
	while (r->v[i].id != FSCK_NO_ID && !refusal_eq(&r->v[i], k))
		i = (i + 1) & (r->cap - 1);
	return i;
}

bool fsck_refusals_has(const struct fsck_refusals *r,
		       const struct fsck_refusal *k)
{
	return r->cap && r->v[refusal_slot(r, k)].id != FSCK_NO_ID;
}

static int refusals_grow(struct fsck_refusals *r)
{
	struct fsck_refusals bigger = { .cap = r->cap ? r->cap * 2 : 16 };
	bigger.v = malloc(bigger.cap * sizeof(*bigger.v));
	if (!bigger.v)
		return -ENOMEM;
	for (size_t i = 0; i < bigger.cap; i++)
		bigger.v[i].id = FSCK_NO_ID;
	for (size_t i = 0; i < r->cap; i++)
		if (r->v[i].id != FSCK_NO_ID)
			bigger.v[refusal_slot(&bigger, &r->v[i])] = r->v[i];
	bigger.n = r->n;
	free(r->v);
	*r = bigger;
	return 0;
}

int fsck_refusals_add(struct fsck_refusals *r, const struct fsck_refusal *k)
{
	if (fsck_refusals_has(r, k))
		return 0;
	if ((r->n + 1) * 2 > r->cap && refusals_grow(r))
		return -ENOMEM;
	r->v[refusal_slot(r, k)] = *k;
	r->n++;
	return 0;
}

int fsck_refusals_merge(struct fsck_refusals *dst,
			const struct fsck_refusals *src)
{
	for (size_t i = 0; i < src->cap; i++)
		if (src->v[i].id != FSCK_NO_ID &&
		    fsck_refusals_add(dst, &src->v[i]))
			return -ENOMEM;
	return 0;
}

void fsck_refusals_free(struct fsck_refusals *r)
{
	free(r->v);
	*r = (struct fsck_refusals){ 0 };
}

void fsck_progress(struct fsck *f, uint64_t cur, uint64_t max)
{
	if (f->ops->progress)
		f->ops->progress(f->ctx, f->pass, cur, max);
}

bool fsck_cancelled(struct fsck *f)
{
	if (!f->stop && f->ops->cancelled && f->ops->cancelled(f->ctx)) {
		f->stop = 1;
		f->res->cancelled = 1;
	}
	return f->stop != 0;
}

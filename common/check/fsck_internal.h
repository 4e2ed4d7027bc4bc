/*
 * Internals of the check engine (common/check/fsck*.c): the run state, the
 * problem codes, reporting helpers, the passes and the repair primitives.
 * One file per pass:
 *   fsck_problem.c  the problem table and reporting
 *   fsck.c          the run: opening, the pass table, the commit
 *   fsck_super.c    pass 1  superblock and extension record
 *   fsck_log.c      pass 2  log chain and records, replay
 *   fsck_tree.c     pass 3  tree nodes and leaves, shadow map
 *   fsck_inode.c    pass 4  inodes: attributes, sizes, extents, owners
 *   fsck_dir.c      pass 5  directories, connectivity, link counts
 *   fsck_atom.c     pass 6  xattr atoms
 *   fsck_orphan.c   pass 7  orphans
 *   fsck_space.c    pass 8  bitmap, countmap, superblock counters
 *   fsck_version.c  pass 9  versions: marks, table, element lists
 *   fsck_vnamespace.c       pass 9's snapshot namespaces by what differs
 *   fsck_repair.c   repairs shared by the passes
 *   check.c         the block-ownership and namespace checkers
 * Repairs work on a volume opened TUX3_OPEN_RDWR_NORECOVER and made
 * writable by repair_begin_write(); they gather in the open delta and
 * fsck_commit() commits it with a unify.  The check engine changes the
 * volume only through the write layer: the write path's building blocks
 * and the repair primitives of write/repair.c (write/write.h), never by
 * setting struct tux3_volume's fields itself.
 */
#ifndef TUX3_FSCK_INTERNAL_H
#define TUX3_FSCK_INTERNAL_H

#include <stdarg.h>
#include "internal.h"
#include "tux3_fsck.h"
#include "tux3_walk.h"

/* Problem codes: one per entry of the table in fsck_problem.c. */
enum fsck_problem_id {
	/* pass 1 */
	P1_SUPER_BAD, P1_SUPER_WARNING, P1_EXT_BAD, P1_FEATURES,
	P1_MAGIC, P1_BLOCKSIZE, P1_GEOMETRY, P1_VOLSIZE, P1_ROOT, P1_LOG_CHAIN,
	P1_RO_FEATURES, P1_HINT, P1_SB2, P1_MAGIC_NEAR, P1_RECOMPUTE,
	P1_EXT_NEWER, P1_ATIME_MAGIC,
	/* pass 2 */
	P2_LOG_BAD, P2_REPLAY_FAILED, P2_LOGCOUNT, P2_STATE_BAD,
	P2_LOG_PREMARK, P2_BITMAP_BAD, P2_ORPHANS_BAD, P2_LOG_SALVAGE,
	P2_REPLAY_SALVAGE, P2_ITABLE_LOST, P2_INTERNAL_LOST, P2_STATE_FROM_COPY,
	P2_ROOT_FOUND, P2_LOG_HEAD,
	/* pass 3 */
	P3_STRUCT_BAD, P3_NODE_BAD, P3_LEAF_BAD, P3_NODE_ENTRIES, P3_DEPTH,
	P3_TWICE, P3_LEAF_TRIM,
	/* pass 4 */
	P4_INODE_BAD, P4_ATTR_DUP, P4_MODE_BAD, P4_SIZE_SHORT, P4_DTREE_BAD,
	P4_EXTENT_OUTSIDE, P4_EXTENT_SHARED, P4_DIR_SIZE, P4_SYMLINK_BAD,
	P4_SPECIAL_DATA, P4_ATTR_VERSION, P4_XATTR_BAD, P4_SIZE_BIG,
	P4_ROOT_MODE, P4_INTERNAL_MODE, P4_ATIME_STRAY, P4_SPILL_BAD,
	/* pass 5 */
	P5_DANGLING, P5_TYPE, P5_DIR_TWICE, P5_UNREACHABLE, P5_NLINK,
	P5_DIR_UNREADABLE, P5_NO_ROOT, P5_ENTRY_BAD, P5_LOST_FOUND,
	P5_DIRHASH,
	/* pass 6 */
	P6_DICT_BAD, P6_REFCOUNT, P6_UNKNOWN_ATOM, P6_REVERSE, P6_FREE_LIST,
	P6_ATOM_UNUSED,
	/* pass 7 */
	P7_ORPHAN_LINKED, P7_ORPHAN_GONE,
	/* pass 8 */
	P8_LEAKED, P8_FREE_IN_USE, P8_SHARED, P8_OUTSIDE, P8_REPLAY_CONFLICT,
	P8_COUNTMAP, P8_FREEBLOCKS, P8_USEDINODES,
	/* pass 9 */
	P9_GATE, P9_VTABLE_LOST, P9_VTABLE_BAD, P9_VTABLE_NAME, P9_VTABLE_TREE, P9_DELETE_PENDING,
	P9_STRAY_VTABLE, P9_ELEMENT_BAD, P9_ATTR_BAD, P9_NAMESPACE,
	P9_NAMESPACE_LOST, P9_VINDEX_BAD, P9_VINDEX_MISSING, P9_VINDEX_STRAY,
	P_COUNT
};

/*
 * A repair that failed, by what it was about: the problem code and where
 * (the key fsck_problem was given), or for pass 4's deferred repairs the
 * inode alone (id P4_INODE_BAD).  A round in which a repair fails is
 * thrown away and run again with the failed repairs refused (fsck.c).
 */
struct fsck_refusal {
	unsigned id;
	uint64_t block, inum, dir;
};

struct fsck_refusals {
	struct fsck_refusal *v;
	size_t n, cap;
};

/* The run. */
struct fsck {
	const char *path;
	struct tux3_volume *vol;	/* open from pass 2 on */
	enum tux3_fsck_mode mode;
	bool optimize_dirs;	/* TUX3_FSCK_OPTIMIZE_DIRS (fsck.tux3 -D) */
	const struct tux3_fsck_ops *ops;
	void *ctx;
	struct tux3_fsck_result *res;
	struct tux3_fsck_result *total;	/* the caller's: the work counters
					 * add up there over the rounds */
	unsigned pass;
	int stop;		/* <0 aborted, >0 cancelled */
	int err;		/* first operational error of a repair */
	unsigned round;		/* 1, 2, ...: see fsck.c */
	/* the problem answered last, for a repair that fails */
	struct fsck_refusal cur;
	/* repairs that failed in this round, and the first one's reason */
	struct fsck_refusals failed;
	char fail_msg[300];
	/* repairs that failed in an earlier round: not tried again */
	const struct fsck_refusals *refused;
	unsigned refused_hits;	/* problems left so in this round */
	/* a repair changed what earlier passes checked against (pass 9
	 * dropped the version marks, or gave the table a new map whose old
	 * blocks pass 8 is to free): one more round after the commit */
	const char *again;	/* why (NULL: not) */
	/* pass 4 -> 9: the version table's map shares blocks with another
	 * owner (its rebuild then takes a map of its own) */
	bool vtable_shared;
	/* pass 4 -> 9: the inodes some version changed (blobs with an
	 * attribute of a label other than 0, or ABSENT) and the versioned
	 * data trees its walk met, and the repairs made by then: with none
	 * of either, and no repair since, pass 9 has no element to check */
	uint64_t vblobs, vtrees;
	bool vcounted;
	uint64_t vcounted_fixed;
	/* pass 9: the version index's damage, and its first missing pair */
	char vindex_bad[300];
	tux3_ino_t vindex_miss_inum;
	unsigned vindex_miss_label;
	bool unusable;		/* the volume cannot be checked further */
	/* pass 2: P2_ITABLE_LOST answered yes, the volume to make again
	 * (once the failed replay's handle is closed) */
	bool remake;
	struct tux3_mkfs_params remake_params;
	/* commits made inside the round to get space back
	 * (fsck_make_room), and the repairs counted fixed by then */
	unsigned checkpoints;
	uint64_t fixed_at_checkpoint;
	uint64_t progress, progress_max;
	char msg[600];		/* scratch for open errors */
	/* state the passes hand on */
	struct tux3_identity ext_ident;	/* pass 1 -> 2: the extension record
					 * to write (P1_EXT_BAD) ... */
	bool ext_rewrite;		/* ... when set */
	bool hints_rewrite;		/* pass 1 -> 2: P1_HINT answered yes */
	/* pass 2: what of the state after replay is read past damage
	 * (fsck_log.c's replay: FSCK_SALVAGE_*) */
	unsigned salvage;
	uint8_t *shadow;	/* pass 3/4: one bit per referenced block */
	/* from pass 4 to pass 8: blocks referenced but free in the bitmap,
	 * held in use so that no repair allocates them; let go by
	 * fsck_shield_off() when pass 8 begins */
	struct extent_list shield;
	void *inodes;		/* pass 4: struct fsck_inodes (fsck_inode.c) */
};

/* Where a problem is; what the caller sees besides the text. */
struct fsck_at {
	uint64_t block, count, inum, dir, have, want;
};
#define FSCK_AT(...) (&(const struct fsck_at){ __VA_ARGS__ })

/* Report problem id with the table's message filled from the varargs.
 * Returns 1 if the caller wants it fixed and it can be (fixable, the
 * table has a fix and the run is a repair), else 0. */
int fsck_problem(struct fsck *f, unsigned id, bool fixable,
		 const struct fsck_at *at, ...);
void fsck_info(struct fsck *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A repair's outcome: counts it fixed, or records the failure of the
 * problem answered last (the round is then run again without it); an
 * operational error (-EIO, -ENOMEM) stops the run. */
void fsck_fixed(struct fsck *f, int err);
/* The same for a repair made later than its problem was answered (pass
 * 4's per-inode repairs): the failure is the inode's. */
void fsck_fixed_inode(struct fsck *f, int err, tux3_ino_t inum);
/* Did inode inum's repair fail in an earlier round? */
bool fsck_refused_inode(const struct fsck *f, tux3_ino_t inum);
bool fsck_refusals_has(const struct fsck_refusals *r,
		       const struct fsck_refusal *k);
int fsck_refusals_add(struct fsck_refusals *r, const struct fsck_refusal *k);
int fsck_refusals_merge(struct fsck_refusals *dst,
			const struct fsck_refusals *src);
void fsck_refusals_free(struct fsck_refusals *r);
void fsck_progress(struct fsck *f, uint64_t cur, uint64_t max);
/* Polls the caller; true when the run must stop. */
bool fsck_cancelled(struct fsck *f);
static inline bool fsck_repairing(const struct fsck *f)
{
	return f->mode != TUX3_FSCK_CHECK;
}

/* Opening errors that mean damage (a problem), not an operational
 * failure of the device (fsck_super.c). */
bool fsck_open_damage(int err);
/* The superblock alone on the device opened read-only, decoded and
 * checked by super_check (no extension, log or trees): cheap, for
 * looking at the superblock's fields and the log chain.  0 and *volp;
 * or <0 with *volp kept (its error says why) when the check failed, NULL
 * when the device could not be read (f->msg says why). */
int fsck_open_super(struct fsck *f, struct tux3_volume **volp);
void fsck_close_super(struct tux3_volume *vol);
/* The blocks covering the boot area and superblock (bytes 0..8191) at
 * block size 2^bits. */
static inline uint64_t fsck_reserved_blocks(unsigned bits)
{
	return (TUX3_RESERVED_BYTES + (1ULL << bits) - 1) >> bits;
}
/* The magic (first two bytes) of the block at byte off of dev, 0 when
 * it cannot be read (fsck_super.c). */
unsigned fsck_magic_at(struct device *dev, uint64_t off);
/* The blocks that may be the log's head when the superblock's logchain
 * is wrong and no copy holds it (fsck_super.c): the block before the
 * allocator's next (the reference code allocates a delta's log block
 * last) and the damaged value with one bit flipped, inside the volume
 * past the reserved area; their count, at most max, in cand. */
unsigned fsck_log_head_candidates(const struct disksuper *sb,
				  uint64_t reserved, uint64_t *cand,
				  unsigned max);

/* The passes: 0 to go on, <0 operational error.  A pass that finds the
 * volume unusable sets f->unusable and returns 0. */
int fsck_pass1(struct fsck *f);
int fsck_pass2(struct fsck *f);
int fsck_pass3(struct fsck *f);
int fsck_pass4(struct fsck *f);
int fsck_pass5(struct fsck *f);
/* The end of pass 5: on-disk directory indexes (fsck_dirhash.c). */
int fsck_dirhash(struct fsck *f);
int fsck_pass6(struct fsck *f);
int fsck_pass7(struct fsck *f);
int fsck_pass8(struct fsck *f);
int fsck_pass9(struct fsck *f);

/* fsck_vnamespace.c: which snapshots' namespaces need the full check.
 * The index is filled while pass 9 reads every inode's element lists
 * (which inodes have elements of which label); vns_suspects then sets
 * suspect[label] (VERSION_LABELS bytes) for each tagged version whose
 * namespace may have a problem, and counts in *by_delta the ones its
 * changes proved sound.  0 or -ENOMEM. */
struct vns_index;
struct vattrs;
struct vns_index *vns_index_new(void);
void vns_index_free(struct vns_index *ix);
void vns_note_attrs(struct vns_index *ix, uint64_t inum,
		    const struct vattrs *x);
int vns_note_data(struct vns_index *ix, struct tux3_volume *vol,
		  const struct inode *inode);
int vns_suspects(struct tux3_volume *vol, struct vns_index *ix,
		 uint8_t *suspect, unsigned *by_delta);
int fsck_shield_off(struct fsck *f);

/* Pass 2: the state after replay read past damage (fsck_log.c). */
/* ..._INTERNAL: the inode table leaf holding the volume's own inodes
 * (below 64) is lost (PASS2_INTERNAL_LOST): the bitmap opens as absent,
 * pass 3 may cut that leaf, the later passes make them anew.
 * ..._REFMAP: with it, on a volume unified since mkfs (the log does not
 * hold every allocation), the bitmap is first every block the volume's
 * structures still reach (fsck_refmap.c), so that no repair allocates
 * one in use; pass 8 then rebuilds it exactly. */
enum { FSCK_SALVAGE_BITMAP = 1, FSCK_SALVAGE_ORPHANS = 2,
       FSCK_SALVAGE_INTERNAL = 4, FSCK_SALVAGE_REFMAP = 8 };
/* Mark in the live bitmap every block a walk of the volume reaches. */
int fsck_bitmap_from_refs(struct tux3_volume *vol);
/* The same for the blocks the bitmap has free, each kept in f->shield
 * (pass 3, before its repairs allocate). */
int fsck_shield_refs(struct fsck *f);
/* Frees what the passes kept in struct fsck. */
void fsck_inode_state_free(struct fsck *f);

/* ---- repair primitives (fsck_repair.c) ---- */

/* Remove entries of dir naming inum: all of them, or (last_only) the
 * last one in directory order.  Returns the number removed. */
int fsck_dir_remove_inum(struct tux3_volume *vol, tux3_ino_t dir,
			 tux3_ino_t inum, bool last_only);
/* Set the type byte of every entry of dir naming inum.  Returns the
 * number changed. */
int fsck_dir_retype(struct tux3_volume *vol, tux3_ino_t dir, tux3_ino_t inum,
		    unsigned type);
/* Cut a damaged directory block at byte position pos of dir: the
 * records from there to the block end become one deleted record. */
int fsck_dir_salvage(struct tux3_volume *vol, tux3_ino_t dir, uint64_t pos);
/* fsck_tree.c: an index node whose header can be followed (magic, a
 * count within the block). */
bool fsck_bnode_sane(const struct tux3_volume *vol, const uint8_t *b);
int fsck_set_nlink(struct tux3_volume *vol, tux3_ino_t inum, uint32_t nlink);
/* Name inum "#inum" in /lost+found (made when missing, mode 0700). */
int fsck_connect_lost(struct tux3_volume *vol, tux3_ino_t inum);
/* Does directory dir hold an entry naming inum?  1 yes, 0 no, <0 error. */
int fsck_dir_names(struct tux3_volume *vol, tux3_ino_t dir, tux3_ino_t inum);
/* Bitmap bits of a run: set or clear (returns conflicts like
 * bitmap_modify), or rewrite them as they are (mark the chunk dirty so
 * the unify writes it). */
int64_t fsck_bitmap_set(struct tux3_volume *vol, uint64_t block,
			uint64_t count, bool set);
int fsck_bitmap_touch(struct tux3_volume *vol, uint64_t block, uint64_t count);
int fsck_release_orphans(struct tux3_volume *vol);
/* Inodes [lo, hi) were removed by a repair: their orphan records go
 * too (the rule for every repair that removes an inode). */
int fsck_inodes_gone(struct tux3_volume *vol, tux3_ino_t lo, tux3_ino_t hi);
/* Commit the repairs with a unify. */
int fsck_commit(struct tux3_volume *vol);
/* Before a repair that allocates: commit the repairs so far when free
 * space ran low and the open delta's frees would give some back.
 * 0, or <0 when that commit failed. */
int fsck_make_room(struct fsck *f);

#endif

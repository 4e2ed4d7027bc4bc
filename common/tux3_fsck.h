/*
 * libtux3 check engine: the passes of fsck.tux3 (common/check/fsck*.c).
 *
 * The engine opens the volume, runs numbered passes on top of the walker
 * and the checkers (tux3_walk, tux3_check_namespace, tux3_check_alloc) and
 * hands every problem found to the caller, who answers whether to fix it.
 * Repairs go through the library's own commit path: they gather in one
 * delta, committed with a unify at the end (so a crash during repair
 * leaves either the old or the repaired volume).  The library never
 * prints.
 *
 * Passes (one file each, see fsck_internal.h):
 *   1 superblock    (open without replay: magic, geometry, roots, extension)
 *   2 log           (log chain and records, replay into memory)
 *   3 trees         (inode and orphan tree nodes and leaves)
 *   4 inodes        (attributes, modes, sizes, data trees and extents,
 *                    blocks with two owners)
 *   5 directories   (entries, types, reachability, directories under two
 *                    names, link counts)
 *   6 atoms         (xattr atom dictionary, refcounts, reverse map)
 *   7 orphans       (pending orphans are normal: reported, released on repair)
 *   8 free space    (bitmap against every reference, countmap, counters)
 *   9 versions      (the version marks and table, every inode's element
 *                    lists, a snapshot delete left half done)
 */
#ifndef TUX3_FSCK_H
#define TUX3_FSCK_H

#include "tux3.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TUX3_FSCK_PASSES 9	/* pass numbers 1..9 */

/* One entry of the problem table. */
struct tux3_fsck_problem_def {
	const char *code;	/* e.g. "PASS8_BLOCK_LEAKED" */
	unsigned pass;
	const char *message;	/* template, see tux3_fsck_problem.text */
	int preen_ok;		/* -p may fix it without asking */
	const char *fix;	/* what a yes does; NULL: cannot be fixed */
};

/* The whole table, terminated by a NULL code. */
const struct tux3_fsck_problem_def *tux3_fsck_problem_table(void);

/* One problem found. */
struct tux3_fsck_problem {
	const struct tux3_fsck_problem_def *def;
	char text[600];		/* the message with its values filled in */
	uint64_t block, count, inum, dir, have, want;
	int fixable;		/* this instance can be fixed (def->fix and
				 * the volume is open for repair) */
};

/* What the caller gets.  All optional but problem. */
struct tux3_fsck_ops {
	/* A pass begins / ends. */
	void (*pass_begin)(void *ctx, unsigned pass, const char *title);
	void (*pass_end)(void *ctx, unsigned pass);
	/* A problem: return 1 to fix it, 0 to leave it, <0 to abort the run
	 * (nothing is committed). Called with fixable 0 too (answer ignored
	 * unless <0). */
	int (*problem)(void *ctx, const struct tux3_fsck_problem *p);
	/* Information that is not a problem (pending orphans, replay). */
	void (*info)(void *ctx, unsigned pass, const char *text);
	/* Progress within a pass: current of max units. */
	void (*progress)(void *ctx, unsigned pass, uint64_t current,
			 uint64_t max);
	/* Polled between steps: non-zero cancels the run (nothing is
	 * committed, the volume stays as it was). */
	int (*cancelled)(void *ctx);
	/* The run starts again from pass 1 (round 2, 3, ...) because a
	 * repair failed or a failed one is tried again; why says which. */
	void (*restart)(void *ctx, unsigned round, const char *why);
	/* Fault injection for tests (as e2fsprogs' test I/O manager): called
	 * after a repair of problem p worked; a negative errno makes the
	 * engine treat that repair as failed (the round restarts). */
	int (*repair_fault)(void *ctx, const struct tux3_fsck_problem_def *p);
};

#define TUX3_FSCK_PASSES 9

struct tux3_fsck_result {
	unsigned found;		/* problems reported */
	unsigned fixed;		/* repaired (committed) */
	unsigned unfixed;	/* left as they were */
	int modified;		/* the volume was written (repairs, orphans) */
	int cancelled;		/* stopped by ops->cancelled */
	int aborted;		/* stopped by a problem callback < 0 */
	unsigned orphans;	/* pending orphans met (released if repair) */
	uint64_t files, blocks, usedblocks;	/* for the summary line */
	/* The work each pass did (index: the pass number), counted rather
	 * than timed: inodes loaded, and reads that reached the device
	 * (tests/scripts/fsck_scale.sh holds them linear in the file
	 * count).  Filled before ops->pass_end. */
	uint64_t inode_loads[TUX3_FSCK_PASSES + 1];
	uint64_t device_reads[TUX3_FSCK_PASSES + 1];
	/* bytes of the namespace check's per-inode state (pass 5) */
	uint64_t inode_state_bytes;
	/* TUX3_FSCK_OPTIMIZE_DIRS: directories packed (rewritten), and the
	 * blocks of every directory before and after */
	uint64_t dirs_optimized, dir_blocks_before, dir_blocks_after;
};

enum tux3_fsck_mode {
	TUX3_FSCK_CHECK,	/* read-only: the device is never written */
	TUX3_FSCK_REPAIR,	/* open for writing, fix what the caller wants */
	TUX3_FSCK_REPAIR_MOUNTED_RO,	/* repair, while a read-only user
					 * keeps the volume open */
};
/* Or'ed into a repair mode (fsck.tux3 -D): after pass 5 every directory
 * is packed and its on-disk index rebuilt (format.md 15.5). */
#define TUX3_FSCK_OPTIMIZE_DIRS	0x100

/*
 * Run every pass.  Returns 0 when the passes ran (problems or not: see
 * res), or a negative errno for an operational error (device cannot be
 * opened, out of memory, a write failed) with the reason in errbuf.
 * A volume that is not Tux3 or whose superblock or log cannot be used is
 * not an operational error: it is a problem of pass 1 or 2, and the run
 * stops there.
 */
int tux3_fsck_run(const char *path, enum tux3_fsck_mode mode,
		  const struct tux3_fsck_ops *ops, void *ctx,
		  struct tux3_fsck_result *res, char *errbuf, size_t errlen);

/* Skip test for fsck without -f: 1 if the volume carries our extension
 * record and its seal matches the live superblock (no foreign commit
 * since our last write), 0 if it must be checked, <0 on open error. */
int tux3_fsck_sealed(const char *path, struct tux3_fsck_result *summary);

#ifdef __cplusplus
}
#endif
/*
 * fsck.tux3 -b: the secondary superblock (SB_BACKUP, doc/format.md 15.3).
 * When the primary has no Tux3 magic and the copy at byte 1024 is good:
 * with write, the primary is rewritten from the copy (returns 0); without,
 * only reported (0).  1: nothing to do (the primary has its magic or
 * equals the copy).  Negative errno: no usable copy.  msg says what.
 */
int tux3_sb2_restore(const char *path, int write, char *msg, size_t len);

#endif

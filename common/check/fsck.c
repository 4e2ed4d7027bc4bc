/*
 * The check engine of fsck.tux3: the run (see tux3_fsck.h).  It opens
 * the volume, runs the numbered passes of the pass table in order (each
 * in its own file, see fsck_internal.h), and commits the repairs they
 * gathered as one delta with a unify.  A cancelled or aborted run
 * commits nothing.
 *
 * Memory: pass 3 keeps one bit per block (the shadow map); pass 4 keeps
 * compact per-inode state keyed sparsely (fsck_inode.c); pass 5 the
 * namespace check's per-inode records (check.c); pass 8 the bitmap
 * chunks the library loads.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "check/fsck_internal.h"

struct fsck_pass {
	unsigned number;
	const char *title;
	int (*run)(struct fsck *f);
};

static const struct fsck_pass passes[] = {
	{ 1, "Checking the superblock", fsck_pass1 },
	{ 2, "Checking and replaying the log", fsck_pass2 },
	{ 3, "Checking trees", fsck_pass3 },
	{ 4, "Checking inodes, attributes and extents", fsck_pass4 },
	{ 5, "Checking directories, connectivity and link counts",
	  fsck_pass5 },
	{ 6, "Checking xattr atoms", fsck_pass6 },
	{ 7, "Checking orphans", fsck_pass7 },
	{ 8, "Checking free space", fsck_pass8 },
	{ 9, "Checking versions", fsck_pass9 },
};

static void fsck_free(struct fsck *f)
{
	fsck_refusals_free(&f->failed);
	fsck_inode_state_free(f);
	free(f->shadow);
	f->shadow = NULL;
	extent_list_free(&f->shield);
	tux3_close(f->vol);
	f->vol = NULL;
}

static void summary(struct fsck *f)
{
	struct tux3_super_info si;
	tux3_super_info(f->vol, &si);
	f->res->files = si.usedinodes;
	f->res->blocks = si.volblocks;
	f->res->usedblocks = si.volblocks - si.freeblocks;
}

/* Errors of the machine rather than of the volume. */
static bool operational_error(int err)
{
	return err == -EIO || err == -ENOMEM;
}

/*
 * The commit of a round's repairs failed.  An operational error ends
 * the run (exit 8).  Damage the repairs left, which the commit met on
 * its way (an index node a plan could not rebuild, on the path to the
 * inodes it writes), costs the round instead: the superblock was not
 * written, so the volume is its last checkpoint's (the blocks the
 * commit wrote are free or the log's own targets there), and every
 * repair of the round counts as not made (exit 4), with why.
 */
static int commit_refused(struct fsck *f, int err)
{
	struct tux3_fsck_result *res = f->res;
	if (operational_error(err) || f->vol->failed_after_super)
		return err;
	char why[300];
	if (f->vol->error.err)
		tux3_error_text(f->vol, why, sizeof(why));
	else
		snprintf(why, sizeof(why), "%s", strerror(-err));
	tux3_clear_error(f->vol);
	fsck_info(f, "the repairs cannot be committed: %s; the superblock "
		  "was not written, so the volume is as %s left it (repair "
		  "failed)", why, f->checkpoints ? "the last checkpoint of "
		  "the repairs" : "the damage");
	res->unfixed += res->fixed - f->fixed_at_checkpoint;
	if (!res->unfixed)
		res->unfixed = 1;
	res->fixed = f->fixed_at_checkpoint;
	res->modified = f->checkpoints > 0;
	return 0;
}

/*
 * One round: the passes in order, then the commit of the repairs they
 * gathered.  0 when the round ran to its end (committed), was stopped or
 * cancelled (nothing committed), or lost a repair (f->failed, nothing
 * committed: the caller runs a new round); <0 for an operational error,
 * with f->msg saying why.
 */
/* The work of the pass just run, into the caller's result (where
 * ops->pass_end reads it), summed over the rounds; a pass that opened the
 * volume counts from zero. */
static void count_work(struct fsck *f, uint64_t loads, uint64_t reads)
{
	struct tux3_volume *vol = f->vol;
	struct tux3_fsck_result *t = f->total;
	t->inode_loads[f->pass] += vol->inode_loads >= loads ?
				   vol->inode_loads - loads : vol->inode_loads;
	t->device_reads[f->pass] += vol->dev.reads >= reads ?
				    vol->dev.reads - reads : vol->dev.reads;
	if (vol->ns_state_bytes > t->inode_state_bytes)
		t->inode_state_bytes = vol->ns_state_bytes;
}

static int fsck_round(struct fsck *f)
{
	struct tux3_fsck_result *res = f->res;
	int err = 0;

	for (size_t i = 0; i < sizeof(passes) / sizeof(passes[0]); i++) {
		f->pass = passes[i].number;
		f->progress = f->progress_max = 0;
		if (fsck_cancelled(f))
			break;
		if (f->ops->pass_begin)
			f->ops->pass_begin(f->ctx, f->pass, passes[i].title);
		uint64_t loads = f->vol ? f->vol->inode_loads : 0;
		uint64_t reads = f->vol ? f->vol->dev.reads : 0;
		err = passes[i].run(f);
		if (!err && f->err)
			err = f->err;
		/* a pass that stopped at a failed repair: the round is lost,
		 * not the run */
		if (err && f->failed.n && !operational_error(err))
			err = 0;
		if (err)
			return err;
		/* a pass that opened the volume counts from zero */
		if (f->vol && f->pass <= TUX3_FSCK_PASSES)
			count_work(f, loads, reads);
		if (f->ops->pass_end)
			f->ops->pass_end(f->ctx, f->pass);
		if (f->unusable || f->stop || f->failed.n)
			break;
	}
	if (f->stop || fsck_cancelled(f) || f->failed.n) {
		/* nothing of this round is committed past its last
		 * checkpoint (fsck_make_room) */
		res->modified = f->checkpoints > 0;
		res->fixed = f->fixed_at_checkpoint;
		return 0;
	}
	if (f->vol) {
		if (res->modified && (err = fsck_commit(f->vol)))
			return commit_refused(f, err);
		summary(f);
	}
	return 0;
}

static void restart(struct fsck *f, unsigned round, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void restart(struct fsck *f, unsigned round, const char *fmt, ...)
{
	char why[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (f->ops->restart)
		f->ops->restart(f->ctx, round, why);
}

/* What a finished round adds to the run's result. */
static void add_round(struct tux3_fsck_result *res,
		      const struct tux3_fsck_result *r)
{
	res->found += r->found;
	res->fixed += r->fixed;
	res->unfixed = r->unfixed;
	res->modified |= r->modified;
	res->cancelled = r->cancelled;
	res->aborted = r->aborted;
	res->orphans = r->orphans;
	res->files = r->files;
	/* -D: a later round finds the directories packed already */
	res->dirs_optimized += r->dirs_optimized;
	if (!res->dir_blocks_before)
		res->dir_blocks_before = r->dir_blocks_before;
	if (r->dir_blocks_after)
		res->dir_blocks_after = r->dir_blocks_after;
	res->blocks = r->blocks;
	res->usedblocks = r->usedblocks;
}

/*
 * The run, in rounds.  A repair that fails (its fine-grained fix meets
 * more damage, a refusal of the write path, no space) must not end the
 * run with nothing repaired, nor commit what it left half done: its
 * round is thrown away (nothing was written) and a new round starts from
 * the volume as it is on disk, with the failed repair refused: pass 4
 * clears an inode whose repair failed (the coarse fix), other problems
 * are left for that round.  When such a round commits, the problems it
 * left get one more round on the repaired volume, where the damage that
 * made their repair fail is gone.  Rounds are bounded; -n has one.
 */
#define FSCK_ROUNDS 6

int tux3_fsck_run(const char *path, enum tux3_fsck_mode mode,
		  const struct tux3_fsck_ops *ops, void *ctx,
		  struct tux3_fsck_result *res, char *errbuf, size_t errlen)
{
	struct fsck_refusals refused = { 0 };
	int err = 0;

	memset(res, 0, sizeof(*res));
	if (errlen)
		errbuf[0] = 0;
	for (unsigned round = 1; ; round++) {
		struct tux3_fsck_result r = { 0 };
		struct fsck f = { .path = path, .ops = ops,
				  .mode = mode & ~TUX3_FSCK_OPTIMIZE_DIRS,
				  .optimize_dirs =
					  (mode & TUX3_FSCK_OPTIMIZE_DIRS) != 0,
				  .ctx = ctx, .res = &r, .round = round,
				  .refused = &refused, .total = res };
		err = fsck_round(&f);
		if (err) {
			if (f.vol && f.vol->error.err)
				tux3_error_text(f.vol, f.msg, sizeof(f.msg));
			else if (!f.msg[0])
				snprintf(f.msg, sizeof(f.msg), "%s",
					 strerror(-err));
			snprintf(errbuf, errlen, "%s", f.msg);
			fsck_free(&f);
			break;
		}
		bool stopped = f.stop || r.cancelled || r.aborted;
		if (f.failed.n && !stopped && round < FSCK_ROUNDS) {
			err = fsck_refusals_merge(&refused, &f.failed);
			restart(&f, round + 1, "%zu repair%s failed (%s%s): "
				"nothing of this round was written; the run "
				"starts again and does %s the coarse way",
				f.failed.n, f.failed.n == 1 ? "" : "s",
				f.fail_msg, f.failed.n > 1 ? ", ..." : "",
				f.failed.n == 1 ? "it" : "them");
			fsck_free(&f);
			if (err)
				break;
			continue;
		}
		bool retry = f.refused_hits || f.again;
		bool again = !stopped && !f.failed.n && retry && r.modified &&
			     round < FSCK_ROUNDS;
		/* what the next round tries again it finds again */
		if (again)
			r.found -= f.refused_hits < r.found ?
				   f.refused_hits : r.found;
		add_round(res, &r);
		if (again && f.refused_hits)
			restart(&f, round + 1, "%u problem%s left by failed "
				"repairs %s tried again on the repaired volume",
				f.refused_hits, f.refused_hits == 1 ? "" : "s",
				f.refused_hits == 1 ? "is" : "are");
		else if (again)
			restart(&f, round + 1, "%s", f.again);
		fsck_free(&f);
		if (!again)
			break;
		fsck_refusals_free(&refused);
	}
	fsck_refusals_free(&refused);
	return err;
}

int tux3_fsck_sealed(const char *path, struct tux3_fsck_result *summary)
{
	struct tux3_volume *vol;
	struct tux3_identity id;
	int err = tux3_open(path, TUX3_OPEN_RDONLY, &vol);
	if (err)
		return err;
	memset(summary, 0, sizeof(*summary));
	int sealed = !tux3_identity(vol, &id) && id.present && id.sealed &&
		     !tux3_warning_count(vol) && !tux3_orphan_count(vol);
	struct tux3_super_info si;
	tux3_super_info(vol, &si);
	summary->files = si.usedinodes;
	summary->blocks = si.volblocks;
	summary->usedblocks = si.volblocks - si.freeblocks;
	tux3_close(vol);
	return sealed;
}

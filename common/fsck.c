/*
 * The check engine of fsck.tux3: the problem table and the passes (see
 * tux3_fsck.h).  Problems are reported through the caller's callback,
 * which answers; repairs gather in one delta committed with a unify.
 *
 * Memory: pass 3 and 8 use the walker and tux3_check_alloc (one bit per
 * block for the shadow map, the bitmap chunks loaded); pass 5 uses
 * tux3_check_namespace (one 32-byte record per inode >= 63 walked); the
 * repairs of pass 5 keep the problems found (64 bytes each, capped).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "fsck_internal.h"
#include "tux3_fsck.h"
#include "tux3_walk.h"

enum {
	P1_SUPER_BAD, P1_SUPER_WARNING, P2_LOG_BAD, P2_REPLAY_FAILED,
	P3_STRUCT_BAD, P5_DANGLING, P5_TYPE, P5_DIR_TWICE, P5_UNREACHABLE,
	P5_NLINK, P5_DIR_UNREADABLE, P5_NO_ROOT, P8_LEAKED, P8_FREE_IN_USE,
	P8_SHARED, P8_OUTSIDE, P8_REPLAY_CONFLICT, P_COUNT
};

static const struct tux3_fsck_problem_def table[P_COUNT + 1] = {
	[P1_SUPER_BAD] = { "PASS1_SUPER_BAD", 1,
		"superblock unusable: %s", 0, NULL },
	[P1_SUPER_WARNING] = { "PASS1_SUPER_WARNING", 1,
		"superblock: %s", 0, NULL },
	[P2_LOG_BAD] = { "PASS2_LOG_BAD", 2,
		"log damaged: %s", 0, NULL },
	[P2_REPLAY_FAILED] = { "PASS2_REPLAY_FAILED", 2,
		"log replay failed: %s", 0, NULL },
	[P3_STRUCT_BAD] = { "PASS3_STRUCT_BAD", 3,
		"invalid structure: %s", 0, NULL },
	[P5_DANGLING] = { "PASS5_DANGLING_ENTRY", 5,
		"directory %" PRIu64 " has an entry naming inode %" PRIu64
		", which does not exist", 1, "remove the entry" },
	[P5_TYPE] = { "PASS5_ENTRY_TYPE", 5,
		"directory %" PRIu64 ": entry for inode %" PRIu64 " has type %"
		PRIu64 ", the inode's is %" PRIu64, 1,
		"set the entry type from the inode" },
	[P5_DIR_TWICE] = { "PASS5_DIR_TWICE", 5,
		"directory inode %" PRIu64 " has a second name in directory %"
		PRIu64, 0, "remove the second name" },
	[P5_UNREACHABLE] = { "PASS5_UNREACHABLE", 5,
		"inode %" PRIu64 " (link count %" PRIu64 ") is not reachable "
		"from the root", 0, "connect it to /lost+found" },
	[P5_NLINK] = { "PASS5_LINK_COUNT", 5,
		"inode %" PRIu64 ": link count is %" PRIu64 ", should be %"
		PRIu64, 1, "set the link count" },
	[P5_DIR_UNREADABLE] = { "PASS5_DIR_UNREADABLE", 5,
		"directory inode %" PRIu64 " cannot be read", 0, NULL },
	[P5_NO_ROOT] = { "PASS5_NO_ROOT", 5,
		"the root directory (inode 63) is missing or not a directory",
		0, NULL },
	[P8_LEAKED] = { "PASS8_BLOCK_LEAKED", 8,
		"block %" PRIu64 " is marked in use but nothing references it",
		1, "clear its bitmap bit" },
	[P8_FREE_IN_USE] = { "PASS8_BLOCK_FREE_IN_USE", 8,
		"block %" PRIu64 " is referenced but free in the bitmap", 1,
		"set its bitmap bit" },
	[P8_SHARED] = { "PASS8_BLOCK_SHARED", 8,
		"block %" PRIu64 " is referenced twice", 0, NULL },
	[P8_OUTSIDE] = { "PASS8_BLOCK_OUTSIDE", 8,
		"blocks %" PRIu64 "+%" PRIu64 " referenced beyond the volume",
		0, NULL },
	[P8_REPLAY_CONFLICT] = { "PASS8_REPLAY_CONFLICT", 8,
		"the bitmap disagrees with the log: %s", 1,
		"rewrite the bitmap from the replayed state" },
	[P_COUNT] = { NULL, 0, NULL, 0, NULL },
};

const struct tux3_fsck_problem_def *tux3_fsck_problem_table(void)
{
	return table;
}

static const char *const pass_title[TUX3_FSCK_PASSES + 1] = {
	[1] = "Checking the superblock",
	[2] = "Checking and replaying the log",
	[3] = "Checking trees and inodes",
	[5] = "Checking directories, connectivity and link counts",
	[7] = "Checking orphans",
	[8] = "Checking free space",
};

struct fsck {
	struct tux3_volume *vol;
	enum tux3_fsck_mode mode;
	const struct tux3_fsck_ops *ops;
	void *ctx;
	struct tux3_fsck_result *res;
	unsigned pass;
	int stop;		/* <0 abort, >0 cancelled */
	int err;		/* operational error of a repair */
	uint64_t progress, progress_max;
};

/* Report; returns 1 if the caller wants it fixed (and it can be). */
static int problem(struct fsck *f, unsigned id, bool fixable,
		   uint64_t block, uint64_t count, uint64_t inum, uint64_t dir,
		   uint64_t have, uint64_t want, const char *text)
{
	struct tux3_fsck_problem p = {
		.def = &table[id], .block = block, .count = count,
		.inum = inum, .dir = dir, .have = have, .want = want,
		.fixable = fixable && table[id].fix &&
			   f->mode == TUX3_FSCK_REPAIR,
	};
	if (f->stop)
		return 0;
	f->res->found++;
	switch (id) {
	case P1_SUPER_BAD: case P1_SUPER_WARNING: case P2_LOG_BAD:
	case P2_REPLAY_FAILED: case P3_STRUCT_BAD: case P8_REPLAY_CONFLICT:
		snprintf(p.text, sizeof(p.text), table[id].message, text);
		break;
	case P5_DANGLING:
		snprintf(p.text, sizeof(p.text), table[id].message, dir, inum);
		break;
	case P5_TYPE:
		snprintf(p.text, sizeof(p.text), table[id].message, dir, inum,
			 have, want);
		break;
	case P5_DIR_TWICE:
		snprintf(p.text, sizeof(p.text), table[id].message, inum, dir);
		break;
	case P5_UNREACHABLE:
		snprintf(p.text, sizeof(p.text), table[id].message, inum, have);
		break;
	case P5_NLINK:
		snprintf(p.text, sizeof(p.text), table[id].message, inum, have,
			 want);
		break;
	case P5_DIR_UNREADABLE:
		snprintf(p.text, sizeof(p.text), table[id].message, inum);
		break;
	case P5_NO_ROOT:
		snprintf(p.text, sizeof(p.text), "%s", table[id].message);
		break;
	case P8_OUTSIDE:
		snprintf(p.text, sizeof(p.text), table[id].message, block,
			 count);
		break;
	default:
		snprintf(p.text, sizeof(p.text), table[id].message, block);
		break;
	}
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

static void info(struct fsck *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void info(struct fsck *f, const char *fmt, ...)
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

static bool check_cancel(struct fsck *f)
{
	if (!f->stop && f->ops->cancelled && f->ops->cancelled(f->ctx)) {
		f->stop = 1;
		f->res->cancelled = 1;
	}
	return f->stop != 0;
}

static bool pass_begin(struct fsck *f, unsigned pass)
{
	f->pass = pass;
	f->progress = 0;
	if (check_cancel(f))
		return false;
	if (f->ops->pass_begin)
		f->ops->pass_begin(f->ctx, pass, pass_title[pass]);
	return true;
}

static void pass_end(struct fsck *f)
{
	if (f->ops->pass_end)
		f->ops->pass_end(f->ctx, f->pass);
}

static void progress(struct fsck *f, uint64_t cur, uint64_t max)
{
	if (f->ops->progress)
		f->ops->progress(f->ctx, f->pass, cur, max);
}

static void fixed(struct fsck *f, int err)
{
	if (err < 0) {
		f->res->unfixed++;
		if (!f->err)
			f->err = err;
		return;
	}
	f->res->fixed++;
	f->res->modified = 1;
}

/* ---- pass 2 and 3: the walker's errors ---- */

static int walk_error(void *ctx, const struct tux3_error *e)
{
	struct fsck *f = ctx;
	char buf[400];
	struct tux3_error copy = *e;
	size_t n = 0;
	buf[0] = 0;
	if (copy.block != TUX3_NONE)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n,
				      "block %" PRIu64 ": ", copy.block);
	if (copy.inum != TUX3_NONE && n < sizeof(buf))
		n += (size_t)snprintf(buf + n, sizeof(buf) - n,
				      "inode %" PRIu64 ": ", copy.inum);
	if (n < sizeof(buf))
		snprintf(buf + n, sizeof(buf) - n, "%s", copy.what[0] ?
			 copy.what : strerror(-copy.err));
	problem(f, f->pass == 2 ? P2_LOG_BAD : P3_STRUCT_BAD, false,
		copy.block, 1, copy.inum, 0, 0, 0, buf);
	return f->stop ? -ECANCELED : 0;
}

static int walk_inode(void *ctx, const struct tux3_stat *st,
		      tux3_block_t leaf, unsigned len)
{
	struct fsck *f = ctx;
	(void)st; (void)leaf; (void)len;
	f->progress++;
	if ((f->progress & 1023) == 0) {
		progress(f, f->progress, f->progress_max);
		if (check_cancel(f))
			return -ECANCELED;
	}
	return 0;
}

/* ---- pass 5 ---- */

struct nsprob {
	enum tux3_ns_problem what;
	uint64_t inum, dir, have, want;
};

struct nslist {
	struct fsck *f;
	struct nsprob *v;
	size_t n, cap;
	bool overflow;
	bool only_nlink;	/* second round: link counts only */
};

#define NS_MAX_PROBLEMS (1u << 20)

static void ns_collect(void *ctx, enum tux3_ns_problem what, uint64_t inum,
		       uint64_t dir, uint64_t have, uint64_t want)
{
	struct nslist *l = ctx;
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 64;
		void *v = ncap <= NS_MAX_PROBLEMS ?
			  realloc(l->v, ncap * sizeof(*l->v)) : NULL;
		if (!v) {
			l->overflow = true;
			return;
		}
		l->v = v;
		l->cap = ncap;
	}
	l->v[l->n++] = (struct nsprob){ what, inum, dir, have, want };
}

static bool unreachable_named(struct fsck *f, struct nslist *l,
			      uint64_t inum)
{
	/* named by another unreachable directory: it comes back with it */
	for (size_t i = 0; i < l->n; i++) {
		struct nsprob *p = &l->v[i];
		struct tux3_stat st;
		if (p->what != TUX3_NS_UNREACHABLE || p->inum == inum)
			continue;
		if (tux3_stat(f->vol, p->inum, &st) || !S_ISDIR(st.mode)) {
			tux3_clear_error(f->vol);
			continue;
		}
		if (fsck_dir_names(f->vol, p->inum, inum) > 0)
			return true;
		tux3_clear_error(f->vol);
	}
	return false;
}

/* One round: report, and fix unless deferred. Returns structural fixes. */
static int ns_round(struct fsck *f, bool nlink_only, bool *nlink_deferred)
{
	struct nslist l = { .f = f };
	int structural = 0;
	int err = tux3_check_namespace(f->vol, ns_collect, &l);
	if (err < 0) {
		free(l.v);
		return err;
	}
	/* structural problems first; link counts after them */
	for (int phase = 0; phase < 2 && !f->stop; phase++) {
		for (size_t i = 0; i < l.n && !f->stop; i++) {
			struct nsprob *p = &l.v[i];
			bool is_nlink = p->what == TUX3_NS_NLINK;
			if (is_nlink != (phase == 1))
				continue;
			if (nlink_only && !is_nlink)
				continue;
			unsigned id;
			switch (p->what) {
			case TUX3_NS_DANGLING: id = P5_DANGLING; break;
			case TUX3_NS_TYPE: id = P5_TYPE; break;
			case TUX3_NS_DIR_TWICE: id = P5_DIR_TWICE; break;
			case TUX3_NS_UNREACHABLE: id = P5_UNREACHABLE; break;
			case TUX3_NS_NLINK: id = P5_NLINK; break;
			case TUX3_NS_UNREADABLE: id = P5_DIR_UNREADABLE; break;
			default: id = P5_NO_ROOT; break;
			}
			/* a link count found with structural repairs pending
			 * is counted again in the next round */
			if (is_nlink && structural) {
				*nlink_deferred = true;
				continue;
			}
			if (!problem(f, id, true, 0, 0, p->inum, p->dir,
				     p->have, p->want, NULL))
				continue;
			int r = 0;
			switch (p->what) {
			case TUX3_NS_DANGLING:
				r = fsck_dir_remove_inum(f->vol, p->dir,
							 p->inum, false);
				break;
			case TUX3_NS_TYPE:
				r = fsck_dir_retype(f->vol, p->dir, p->inum,
						    (unsigned)p->want);
				break;
			case TUX3_NS_DIR_TWICE:
				r = fsck_dir_remove_inum(f->vol, p->dir,
							 p->inum, true);
				break;
			case TUX3_NS_UNREACHABLE:
				if (unreachable_named(f, &l, p->inum))
					r = 0;
				else
					r = fsck_connect_lost(f->vol, p->inum);
				break;
			case TUX3_NS_NLINK:
				r = fsck_set_nlink(f->vol, p->inum,
						   (uint32_t)p->want);
				break;
			default:
				break;
			}
			fixed(f, r);
			if (r < 0)
				tux3_clear_error(f->vol);
			else if (!is_nlink)
				structural++;
		}
	}
	if (l.overflow)
		problem(f, P3_STRUCT_BAD, false, 0, 0, 0, 0, 0, 0,
			"too many namespace problems: the rest are not listed");
	free(l.v);
	return structural;
}

static int pass5(struct fsck *f)
{
	bool deferred = false;
	int s = ns_round(f, false, &deferred);
	/* after structural repairs the link counts are counted again; a
	 * third round catches what the second's repairs changed */
	for (int round = 0; s > 0 && round < 2 && !f->stop; round++) {
		deferred = false;
		s = ns_round(f, round == 0 ? true : false, &deferred);
	}
	return s < 0 ? s : 0;
}

/* ---- pass 8 ---- */

static void alloc_problem(void *ctx, uint64_t block, uint64_t count,
			  enum tux3_block_problem what)
{
	struct fsck *f = ctx;
	switch (what) {
	case TUX3_BLOCK_LEAKED:
		if (problem(f, P8_LEAKED, true, block, count, 0, 0, 0, 0,
			    NULL)) {
			int64_t r = fsck_bitmap_set(f->vol, block, count,
						    false);
			fixed(f, r < 0 ? (int)r : 0);
		}
		break;
	case TUX3_BLOCK_FREE_IN_USE:
		if (problem(f, P8_FREE_IN_USE, true, block, count, 0, 0, 0, 0,
			    NULL)) {
			int64_t r = fsck_bitmap_set(f->vol, block, count, true);
			fixed(f, r < 0 ? (int)r : 0);
		}
		break;
	case TUX3_BLOCK_SHARED:
		problem(f, P8_SHARED, false, block, count, 0, 0, 0, 0, NULL);
		break;
	case TUX3_BLOCK_OUTSIDE:
		problem(f, P8_OUTSIDE, false, block, count, 0, 0, 0, 0, NULL);
		break;
	case TUX3_BLOCK_UNREADABLE:
		break;		/* reported by pass 3 */
	}
}

static void pass8_conflicts(struct fsck *f)
{
	unsigned n = tux3_replay_conflict_count(f->vol);
	for (unsigned i = 0; i < n && !f->stop; i++) {
		const struct replay_conflict *c = tux3_replay_conflict(f->vol, i);
		char w[200];
		snprintf(w, sizeof(w), "log block %" PRIu64 " offset %u: "
			 "block %" PRIu64 " (%" PRIu64 " block%s) %s",
			 c->logblock, c->offset, c->block, c->count,
			 c->count == 1 ? "" : "s",
			 c->set ? "already allocated (double allocation)" :
			 "already free (double free)");
		if (problem(f, P8_REPLAY_CONFLICT, true, c->block, c->count, 0,
			    0, 0, 0, w))
			fixed(f, fsck_bitmap_touch(f->vol, c->block, c->count));
	}
}

/* ---- the run ---- */

static int open_error(struct fsck *f, unsigned id, int err, const char *msg)
{
	/* device-level failures are operational, damage is a problem */
	if (err == -EUCLEAN || err == -EINVAL || err == -EOPNOTSUPP ||
	    err == -EFBIG || err == -ERANGE || err == -EROFS) {
		problem(f, id, false, 0, 0, 0, 0, 0, 0, msg);
		return 0;
	}
	return err;
}

int tux3_fsck_run(const char *path, enum tux3_fsck_mode mode,
		  const struct tux3_fsck_ops *ops, void *ctx,
		  struct tux3_fsck_result *res, char *errbuf, size_t errlen)
{
	struct fsck f = { .mode = mode, .ops = ops, .ctx = ctx, .res = res };
	struct tux3_volume *vol = NULL;
	char msg[600];
	int err;

	memset(res, 0, sizeof(*res));
	if (errlen)
		errbuf[0] = 0;

	/* Pass 1: the superblock alone, without the log */
	if (!pass_begin(&f, 1))
		return 0;
	err = tux3_open_err(path, TUX3_OPEN_NOREPLAY, &vol, msg, sizeof(msg));
	if (err) {
		err = open_error(&f, P1_SUPER_BAD, err, msg);
		if (err)
			snprintf(errbuf, errlen, "%s", msg);
		pass_end(&f);
		return err;
	}
	/* of the no-replay open's warnings only the superblock's own are
	 * problems: trees the log has yet to build are the format's normal
	 * state between unifies (pass 2 replays and checks them) */
	for (unsigned i = 0; i < tux3_warning_count(vol); i++)
		if (!strncmp(tux3_warning(vol, i), "superblock", 10))
			problem(&f, P1_SUPER_WARNING, false, 0, 0, 0, 0, 0, 0,
				tux3_warning(vol, i));
	tux3_close(vol);
	vol = NULL;
	pass_end(&f);

	/* Pass 2: the log, replayed into memory */
	if (!pass_begin(&f, 2))
		return 0;
	err = tux3_open_err(path, mode == TUX3_FSCK_REPAIR ?
			    TUX3_OPEN_RDWR_NORECOVER : TUX3_OPEN_RDONLY,
			    &vol, msg, sizeof(msg));
	if (err) {
		err = open_error(&f, P2_REPLAY_FAILED, err, msg);
		if (err)
			snprintf(errbuf, errlen, "%s", msg);
		pass_end(&f);
		return err;
	}
	f.vol = vol;
	struct tux3_super_info si;
	tux3_super_info(vol, &si);
	info(&f, "log: %u block%s replayed, %" PRIu64 " blocks free",
	     si.logcount, si.logcount == 1 ? "" : "s", si.freeblocks);
	{
		struct tux3_walk_ops wops = { .error = walk_error };
		err = tux3_walk_log(vol, &wops, &f);
		if (err < 0 && err != -EUCLEAN && err != -ECANCELED)
			goto operational;
	}
	pass_end(&f);
	if (mode == TUX3_FSCK_REPAIR && (err = fsck_begin_write(vol)))
		goto operational;

	/* Pass 3: trees, nodes, inodes */
	if (!pass_begin(&f, 3))
		goto out;
	{
		struct tux3_walk_ops wops = { .error = walk_error,
					      .inode = walk_inode };
		f.progress_max = si.usedinodes;
		/* the log was checked by pass 2: its errors again here are
		 * not reported twice */
		unsigned before = res->found;
		(void)before;
		err = tux3_walk(vol, &wops, &f);
		if (err < 0 && err != -EUCLEAN && err != -ECANCELED)
			goto operational;
		progress(&f, f.progress, f.progress_max);
	}
	pass_end(&f);

	/* Pass 5: namespace */
	if (!pass_begin(&f, 5))
		goto out;
	if ((err = pass5(&f)) < 0)
		goto operational;
	pass_end(&f);

	/* Pass 7: orphans */
	if (!pass_begin(&f, 7))
		goto out;
	res->orphans = tux3_orphan_count(vol);
	for (unsigned i = 0; i < res->orphans; i++)
		info(&f, "inode %" PRIu64 ": orphan pending release (unlinked "
		     "while open; normal after a crash)%s", tux3_orphan(vol, i),
		     mode == TUX3_FSCK_REPAIR ? ": released" : "");
	if (mode == TUX3_FSCK_REPAIR && res->orphans) {
		if ((err = fsck_release_orphans(vol)))
			goto operational;
		res->modified = 1;
	}
	pass_end(&f);

	/* Pass 8: free space */
	if (!pass_begin(&f, 8))
		goto out;
	pass8_conflicts(&f);
	err = tux3_check_alloc(vol, alloc_problem, &f);
	if (err < 0)
		goto operational;
	progress(&f, vol->volblocks, vol->volblocks);
	pass_end(&f);
	if (f.err) {
		err = f.err;
		goto operational;
	}
	if (check_cancel(&f))
		goto out;

	if (res->modified) {
		if ((err = fsck_commit(vol)))
			goto operational;
	}
	tux3_super_info(vol, &si);
	res->files = si.usedinodes;
	res->blocks = si.volblocks;
	res->usedblocks = si.volblocks - si.freeblocks;
	tux3_close(vol);
	return 0;

out:
	/* cancelled or aborted: nothing is committed */
	if (res->modified)
		res->modified = 0;
	res->fixed = 0;
	tux3_close(vol);
	return 0;
operational:
	if (vol && vol->error.err)
		tux3_error_text(vol, msg, sizeof(msg));
	else
		snprintf(msg, sizeof(msg), "%s", strerror(-err));
	snprintf(errbuf, errlen, "%s", msg);
	tux3_close(vol);
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

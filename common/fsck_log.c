/*
 * Pass 2: the log chain and its records, replayed into memory.  From
 * here on the volume stays open (f->vol) for the other passes.
 */
#include <inttypes.h>
#include <stdio.h>
#include "fsck_internal.h"

static int log_error(void *ctx, const struct tux3_error *e)
{
	struct fsck *f = ctx;
	char buf[400];
	size_t n = 0;
	buf[0] = 0;
	if (e->block != TUX3_NONE)
		n += (size_t)snprintf(buf, sizeof(buf), "block %" PRIu64 ": ",
				      e->block);
	snprintf(buf + n, sizeof(buf) - n, "%s",
		 e->what[0] ? e->what : strerror(-e->err));
	fsck_problem(f, P2_LOG_BAD, false, FSCK_AT(.block = e->block), buf);
	return f->stop ? -ECANCELED : 0;
}

static enum tux3_open_mode open_mode(enum tux3_fsck_mode mode)
{
	switch (mode) {
	case TUX3_FSCK_CHECK:
		return TUX3_OPEN_RDONLY;
	case TUX3_FSCK_REPAIR_MOUNTED_RO:
		/* the read-only user keeps its shared lock */
		return TUX3_OPEN_RDWR_NORECOVER;
	case TUX3_FSCK_REPAIR:
	default:
		return TUX3_OPEN_RDWR_NORECOVER;
	}
}

int fsck_pass2(struct fsck *f)
{
	int err = tux3_open_err(f->path, open_mode(f->mode), &f->vol, f->msg,
				sizeof(f->msg));
	if (err) {
		f->vol = NULL;
		if (!fsck_open_damage(err))
			return err;
		fsck_problem(f, P2_REPLAY_FAILED, false, NULL, f->msg);
		f->msg[0] = 0;
		f->unusable = true;
		return 0;
	}
	struct tux3_super_info si;
	tux3_super_info(f->vol, &si);
	fsck_info(f, "log: %u block%s replayed, %" PRIu64 " blocks free",
		  si.logcount, si.logcount == 1 ? "" : "s", si.freeblocks);
	struct tux3_walk_ops wops = { .error = log_error };
	err = tux3_walk_log(f->vol, &wops, f);
	if (err < 0 && err != -EUCLEAN && err != -ECANCELED)
		return err;
	if (fsck_repairing(f) && (err = fsck_begin_write(f->vol)))
		return err;
	return 0;
}

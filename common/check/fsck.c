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

int tux3_fsck_run(const char *path, enum tux3_fsck_mode mode,
		  const struct tux3_fsck_ops *ops, void *ctx,
		  struct tux3_fsck_result *res, char *errbuf, size_t errlen)
{
	struct fsck f = { .path = path, .mode = mode, .ops = ops,
			  .ctx = ctx, .res = res };
	int err = 0;

	memset(res, 0, sizeof(*res));
	if (errlen)
		errbuf[0] = 0;
	for (size_t i = 0; i < sizeof(passes) / sizeof(passes[0]); i++) {
		f.pass = passes[i].number;
		f.progress = f.progress_max = 0;
		if (fsck_cancelled(&f))
			break;
		if (ops->pass_begin)
			ops->pass_begin(ctx, f.pass, passes[i].title);
		uint64_t loads = f.vol ? f.vol->inode_loads : 0;
		err = passes[i].run(&f);
		if (!err && f.err)
			err = f.err;
		if (err)
			goto operational;
		/* a pass that opened the volume counts from zero */
		if (f.vol && f.pass <= TUX3_FSCK_PASSES)
			res->inode_loads[f.pass] = f.vol->inode_loads >= loads ?
				f.vol->inode_loads - loads :
				f.vol->inode_loads;
		if (ops->pass_end)
			ops->pass_end(ctx, f.pass);
		if (f.unusable || f.stop)
			break;
	}
	if (f.stop || fsck_cancelled(&f)) {
		/* cancelled or aborted: nothing is committed */
		res->modified = 0;
		res->fixed = 0;
		fsck_free(&f);
		return 0;
	}
	if (f.vol) {
		if (res->modified && (err = fsck_commit(f.vol)))
			goto operational;
		summary(&f);
	}
	fsck_free(&f);
	return 0;

operational:
	if (f.vol && f.vol->error.err)
		tux3_error_text(f.vol, f.msg, sizeof(f.msg));
	else if (!f.msg[0])
		snprintf(f.msg, sizeof(f.msg), "%s", strerror(-err));
	snprintf(errbuf, errlen, "%s", f.msg);
	fsck_free(&f);
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

/*
 * Pass 4: every inode: attribute syntax, mode, data tree and extents.
 */
#include <inttypes.h>
#include <stdio.h>
#include "fsck_internal.h"

static int inode_error(void *ctx, const struct tux3_walk_error *e)
{
	struct fsck *f = ctx;
	const char *what = e->err->what[0] ? e->err->what :
			   strerror(-e->err->err);
	if (e->site == TUX3_SITE_DIRENT ||
	    (e->tree != TUX3_TREE_DTREE && e->site != TUX3_SITE_INODE))
		return 0;	/* pass 3 and 5 */
	if (e->site == TUX3_SITE_INODE)
		fsck_problem(f, P4_INODE_BAD, false, FSCK_AT(.inum = e->owner),
			     e->owner, what);
	else
		fsck_problem(f, P4_DTREE_BAD, false,
			     FSCK_AT(.inum = e->owner, .block = e->block),
			     e->owner, e->block, what);
	return f->stop ? -ECANCELED : 0;
}

static int inode_visit(void *ctx, const struct tux3_stat *st,
		       tux3_block_t leaf, unsigned len)
{
	struct fsck *f = ctx;
	(void)st; (void)leaf; (void)len;
	if ((++f->progress & 1023) == 0) {
		fsck_progress(f, f->progress, f->progress_max);
		if (fsck_cancelled(f))
			return -ECANCELED;
	}
	return 0;
}

int fsck_pass4(struct fsck *f)
{
	struct tux3_walk_ops wops = { .site_error = inode_error,
				      .inode = inode_visit };
	struct tux3_super_info si;
	tux3_super_info(f->vol, &si);
	f->progress_max = si.usedinodes;
	int err = tux3_walk(f->vol, &wops, f);
	if (err < 0 && err != -EUCLEAN && err != -ECANCELED)
		return err;
	fsck_progress(f, f->progress, f->progress_max);
	return 0;
}

void fsck_inode_state_free(struct fsck *f)
{
	f->inodes = NULL;
}

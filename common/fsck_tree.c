/*
 * Pass 3: the inode table and orphan table as trees: every index node
 * and leaf (magic, counts within the block, key order, keys inside the
 * parent's separator range, uniform depth, no cycle, no block reached
 * twice), through the walker.  Inode contents and data trees are pass
 * 4's; directory entries pass 5's.
 */
#include <inttypes.h>
#include <stdio.h>
#include "fsck_internal.h"

static const char *tree_name(enum tux3_tree tree)
{
	switch (tree) {
	case TUX3_TREE_ITREE: return "inode";
	case TUX3_TREE_OTREE: return "orphan";
	default: return "data";
	}
}

static int tree_error(void *ctx, const struct tux3_walk_error *e)
{
	struct fsck *f = ctx;
	const char *what = e->err->what[0] ? e->err->what :
			   strerror(-e->err->err);
	if (e->tree == TUX3_TREE_DTREE || e->site == TUX3_SITE_INODE ||
	    e->site == TUX3_SITE_DIRENT)
		return 0;	/* pass 4 and 5 */
	switch (e->site) {
	case TUX3_SITE_NODE:
		fsck_problem(f, P3_NODE_BAD, false,
			     FSCK_AT(.block = e->block, .count = 1),
			     tree_name(e->tree), e->block, what);
		break;
	case TUX3_SITE_LEAF:
		fsck_problem(f, P3_LEAF_BAD, false,
			     FSCK_AT(.block = e->block, .count = 1),
			     tree_name(e->tree), e->block, what);
		break;
	default:
		fsck_problem(f, P3_STRUCT_BAD, false, NULL, what);
		break;
	}
	return f->stop ? -ECANCELED : 0;
}

static int tree_inode(void *ctx, const struct tux3_stat *st,
		      tux3_block_t leaf, unsigned len)
{
	struct fsck *f = ctx;
	(void)st; (void)leaf; (void)len;
	if ((++f->progress & 1023) == 0) {
		fsck_progress(f, f->progress, f->progress_max);
		if (fsck_cancelled(f))
			return -ECANCELED;
	}
	return 1;	/* the inode's own structures are pass 4's */
}

int fsck_pass3(struct fsck *f)
{
	struct tux3_walk_ops wops = { .site_error = tree_error,
				      .inode = tree_inode };
	struct tux3_super_info si;
	tux3_super_info(f->vol, &si);
	f->progress_max = si.usedinodes;
	int err = tux3_walk(f->vol, &wops, f);
	if (err < 0 && err != -EUCLEAN && err != -ECANCELED)
		return err;
	fsck_progress(f, f->progress, f->progress_max);
	return 0;
}

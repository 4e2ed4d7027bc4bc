/*
 * Pass 7: orphans.  A pending orphan (unlinked while open, then a crash)
 * is the format's normal state, not an error: reported, and released
 * when repairing.  An orphan record is wrong when its inode does not
 * exist (PASS7_ORPHAN_GONE) or is still linked: named by a directory
 * entry, or one of the reserved inodes, which are never unlinked
 * (PASS7_ORPHAN_LINKED).  Releasing such an orphan would destroy a live
 * inode (or fail), so the repair removes the record and keeps the inode.
 *
 * Whether an orphan is named is a question for the directories: the
 * stored link count cannot tell, since a loaded orphan's count of 0
 * reads as 1 (as the reference loads them).  One walk over the
 * directories counts the entries naming each orphan; it runs only when
 * there are orphans.  Memory: 24 bytes per orphan.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "check/fsck_internal.h"

struct orphan_ref {
	tux3_ino_t inum;
	uint32_t names;		/* directory entries naming it */
};

static int ref_cmp(const void *a, const void *b)
{
	tux3_ino_t x = ((const struct orphan_ref *)a)->inum;
	tux3_ino_t y = ((const struct orphan_ref *)b)->inum;
	return x < y ? -1 : x > y;
}

struct name_walk {
	struct orphan_ref *refs;	/* sorted by inum */
	unsigned count;
};

static struct orphan_ref *ref_find(struct name_walk *w, tux3_ino_t inum)
{
	struct orphan_ref key = { .inum = inum };
	return bsearch(&key, w->refs, w->count, sizeof(key), ref_cmp);
}

static int walk_inode(void *ctx, const struct tux3_stat *st,
		      tux3_block_t leafblock, unsigned bloblen)
{
	(void)ctx; (void)leafblock; (void)bloblen;
	return S_ISDIR(st->mode) ? 0 : 1;	/* entries only */
}

static int walk_dirent(void *ctx, tux3_ino_t dir, const char *name,
		       unsigned len, tux3_ino_t ino, unsigned type,
		       uint64_t pos, tux3_block_t block)
{
	struct orphan_ref *r = ref_find(ctx, ino);
	(void)dir; (void)name; (void)len; (void)type; (void)pos; (void)block;
	if (r && r->names < UINT32_MAX)
		r->names++;
	return 0;
}

static int walk_error(void *ctx, const struct tux3_error *err)
{
	(void)ctx; (void)err;
	return 0;	/* passes 3 to 5 report damage */
}

/* Count the names of every orphan (refs sorted on return). */
static int count_names(struct tux3_volume *vol, struct name_walk *w)
{
	struct tux3_walk_ops ops = { .inode = walk_inode,
				     .dirent = walk_dirent,
				     .error = walk_error };
	if (w->count)
		qsort(w->refs, w->count, sizeof(*w->refs), ref_cmp);
	int err = walk_uncounted(vol, &ops, w);
	tux3_clear_error(vol);
	return err < 0 && err != -EUCLEAN ? err : 0;
}

/* The record goes; a named inode keeps the names' count if it was
 * stored as 0 (an orphan's count, which pass 5 read as 1). */
static int forget_linked(struct tux3_volume *vol, tux3_ino_t inum,
			 uint32_t names)
{
	struct inode inode;
	int err = orphan_forget(vol, inum);
	if (err || !names)
		return err;
	if ((err = inode_load(vol, inum, &inode)))
		return err;
	if (!inode.nlink && !S_ISDIR(inode.mode)) {
		inode.nlink = names;
		inode.present |= 1u << ATTR_LINK_COUNT;
		err = inode_store(vol, &inode);
	}
	inode_free(&inode);
	return err;
}

static void orphan_linked(struct fsck *f, tux3_ino_t inum, uint32_t names)
{
	char why[64];
	if (inum == TUX3_ROOT_INO)
		snprintf(why, sizeof(why), "the root directory");
	else if (inum < TUX3_NORMAL_INO)
		snprintf(why, sizeof(why), "a reserved inode");
	else
		snprintf(why, sizeof(why), "%" PRIu32 " name%s", names,
			 names == 1 ? "" : "s");
	if (fsck_problem(f, P7_ORPHAN_LINKED, true,
			 FSCK_AT(.inum = inum, .have = names), (uint64_t)inum,
			 why))
		fsck_fixed(f, forget_linked(f->vol, inum,
					    inum < TUX3_NORMAL_INO ? 0 : names));
}

int fsck_pass7(struct fsck *f)
{
	struct tux3_volume *vol = f->vol;
	struct name_walk w = { .count = tux3_orphan_count(vol) };
	unsigned pending = 0;
	int err = 0;

	f->res->orphans = 0;
	if (!w.count)
		return 0;
	/* the list in its own order (the repairs below change vol's) */
	tux3_ino_t *list = malloc(w.count * sizeof(*list));
	w.refs = calloc(w.count, sizeof(*w.refs));
	if (!list || !w.refs) {
		err = -ENOMEM;
		goto out;
	}
	for (unsigned i = 0; i < w.count; i++)
		list[i] = w.refs[i].inum = tux3_orphan(vol, i);
	if ((err = count_names(vol, &w)))
		goto out;
	for (unsigned i = 0; i < w.count && !f->stop; i++) {
		tux3_ino_t inum = list[i];
		uint32_t names = ref_find(&w, inum)->names;
		struct inode inode;
		err = inode_load(vol, inum, &inode);
		if (err == -ENOMEM)
			goto out;
		if (err == -ENOENT) {
			tux3_clear_error(vol);
			err = 0;
			if (fsck_problem(f, P7_ORPHAN_GONE, true,
					 FSCK_AT(.inum = inum), (uint64_t)inum))
				fsck_fixed(f, orphan_forget(vol, inum));
			continue;
		}
		if (err) {
			/* damaged attributes: pass 4's to report or clear */
			tux3_clear_error(vol);
			err = 0;
			fsck_info(f, "inode %" PRIu64 ": orphan left as it is "
				  "(its attributes cannot be read)", inum);
			continue;
		}
		inode_free(&inode);
		if (inum < TUX3_NORMAL_INO || names) {
			orphan_linked(f, inum, names);
			continue;
		}
		pending++;
		if (!fsck_repairing(f)) {
			fsck_info(f, "inode %" PRIu64 ": orphan pending release "
				  "(unlinked while open; normal after a "
				  "crash)", inum);
			continue;
		}
		err = orphan_end(vol, inum);
		if (err == -ENOMEM || err == -EIO)
			goto out;
		if (err) {
			/* e.g. an xattr naming an atom pass 6 was told to
			 * keep: what it cannot give back stays */
			char why[300];
			snprintf(why, sizeof(why), "%s", vol->error.what[0] ?
				 vol->error.what : strerror(-err));
			tux3_clear_error(vol);
			err = 0;
			fsck_info(f, "inode %" PRIu64 ": orphan pending release "
				  "(unlinked while open; normal after a "
				  "crash): cannot be released: %s", inum, why);
			continue;
		}
		fsck_info(f, "inode %" PRIu64 ": orphan pending release "
			  "(unlinked while open; normal after a crash): "
			  "released", inum);
		f->res->modified = 1;
	}
	f->res->orphans = pending;
out:
	free(list);
	free(w.refs);
	return err;
}

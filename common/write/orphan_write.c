/*
 * Orphans on the write side.  An inode whose last link goes while it is
 * still open stays, with nlink 0: ORPHAN_ADD is logged, and its space is
 * released when the last handle goes (ORPHAN_DEL).  At a unify the
 * orphans added in the cycle move into the otree (deletions first, as a
 * DEL and an ADD may name the same inode), so the log can be retired.  A
 * read-write open releases the orphans replay found, as a normal delta.
 *
 * Sets kept in the volume:
 *   orphans        every live orphan
 *   log_orphans    added in this unify cycle (not yet in the otree)
 *   otree_deletes  released in this cycle but still in the otree
 */
#include <inttypes.h>
#include <stdlib.h>
#include "write/write.h"

/* Insert (add) or remove an inode's ORPHAN record in the otree. */
static int otree_set(struct tux3_volume *vol, uint64_t inum, bool add)
{
	static const uint8_t orphan_blob[2] = { 0, 0 };	/* kind 0, version 0 */
	struct btree bt = { .vol = vol, .root = vol->oroot, .ops = &otree_ops };
	int err;

	if (!vol->oroot.depth) {
		if (!add)
			return 0;
		if ((err = btree_create_leaf(&bt, inum)))
			return err;
		vol->oroot = bt.root;
		vol->super_dirty = true;
	}
	err = itable_set(vol, &bt, &vol->oroot, inum, add ? orphan_blob : NULL,
			 add ? 2 : 0);
	return !add && err == -ENOENT ? 0 : err;
}

/* At unify: bring the otree up to date with the cycle's records. */
int orphan_unify(struct tux3_volume *vol)
{
	int err = 0;
	for (unsigned i = 0; i < vol->otree_deletes.count && !err; i++)
		err = otree_set(vol, vol->otree_deletes.inums[i], false);
	for (unsigned i = 0; i < vol->log_orphans.count && !err; i++)
		err = otree_set(vol, vol->log_orphans.inums[i], true);
	if (!err) {
		vol->otree_deletes.count = 0;
		vol->log_orphans.count = 0;
	}
	return err;
}

static int log_orphan(struct tux3_volume *vol, unsigned code, uint64_t inum)
{
	struct logrec r = { .code = code, .inum = inum };
	return log_append(vol, &r);
}

/* The last link of an open inode went: keep it as an orphan. */
int orphan_begin(struct tux3_volume *vol, uint64_t inum)
{
	int err = log_orphan(vol, LOG_ORPHAN_ADD, inum);
	if (!err)
		err = orphan_add(&vol->orphans, inum);
	if (!err)
		err = orphan_add(&vol->log_orphans, inum);
	return err;
}

/* An orphan's space goes: destroy it and log the end of the orphan. */
int orphan_end(struct tux3_volume *vol, uint64_t inum)
{
	struct inode inode;
	int err = inode_load(vol, inum, &inode);
	if (err)
		return err;
	inode.nlink = 0;
	err = inode_destroy(vol, &inode);
	inode_free(&inode);
	return err ? err : orphan_forget(vol, inum);
}

/* ORPHAN_DEL logged, inum out of the live set, and the otree's record
 * scheduled for deletion at the unify (none if it was added this cycle:
 * then it was never written there). */
int orphan_forget(struct tux3_volume *vol, tux3_ino_t inum)
{
	int err = log_orphan(vol, LOG_ORPHAN_DEL, inum);
	if (err)
		return err;
	orphan_del(&vol->orphans, inum);
	if (!orphan_del(&vol->log_orphans, inum))
		err = orphan_add(&vol->otree_deletes, inum);
	return err;
}

/* After replay, a read-write open destroys the orphans (they were open
 * only in a run that is over). */
int orphans_release(struct tux3_volume *vol)
{
	int err = 0;
	while (vol->orphans.count && !err)
		err = orphan_end(vol, vol->orphans.inums[0]);
	if (!err)
		err = delta_commit(vol, false);
	return err;
}

/* ---- open handles ---- */

static struct open_ref *find_ref(struct tux3_volume *vol, tux3_ino_t ino)
{
	for (unsigned i = 0; i < vol->nopen; i++)
		if (vol->open[i].inum == ino)
			return &vol->open[i];
	return NULL;
}

unsigned inode_open_count(struct tux3_volume *vol, tux3_ino_t ino)
{
	struct open_ref *r = find_ref(vol, ino);
	return r ? r->count : 0;
}

int tux3_iopen(struct tux3_volume *vol, tux3_ino_t ino)
{
	struct tux3_stat st;
	int err = tux3_stat(vol, ino, &st);
	if (err)
		return err;
	struct open_ref *r = find_ref(vol, ino);
	if (!r) {
		struct open_ref *n = realloc(vol->open,
					     (vol->nopen + 1) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		vol->open = n;
		r = &vol->open[vol->nopen++];
		r->inum = ino;
		r->count = 0;
	}
	r->count++;
	return 0;
}

int tux3_irelease(struct tux3_volume *vol, tux3_ino_t ino)
{
	struct open_ref *r = find_ref(vol, ino);
	if (!r || !r->count)
		return -EINVAL;
	if (--r->count)
		return 0;
	*r = vol->open[--vol->nopen];
	/* (after a failed commit the orphan stays, for the next open) */
	if (!vol_writable(vol) && orphan_has(&vol->orphans, ino))
		return orphan_end(vol, ino);
	return 0;
}

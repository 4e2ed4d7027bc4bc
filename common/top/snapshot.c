/*
 * Snapshot create and delete on a volume (doc/format.md 17.1): the tree
 * edit of vtree.c, made durable in the version table, and for a delete
 * the plan applied to every versioned file.
 *
 * A delete is two commits.  The first records the plan in the table (the
 * removed labels DYING, with their heirs): from then on the delete is
 * certain.  Then every file's element lists are processed and the second
 * commit frees the labels.  A crash in between leaves the plan in the
 * table; the next open by a writer of versions finishes it (processing a
 * list twice changes nothing the second time: the dying labels' elements
 * are gone after the first).  Read-only opens and fsck see it pending.
 *
 * Every inode takes part: its attribute lists, its data's lists, and
 * the inode itself when no version reads it any more.  The inodes are
 * found by the walker, as is every inode tux3_version_space counts the
 * blocks only one version reads of.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "tux3_walk.h"
#include "version/version.h"
#include "version/vfilemap.h"

int version_writer(struct tux3_volume *vol)
{
	tux3_clear_error(vol);
	if (vol->mode != TUX3_OPEN_RDWR)
		return vol_error(vol, -EROFS, TUX3_NONE, TUX3_NONE,
				 TUX3_NONE, "snapshots need a read-write "
				 "open");
	if (vol->commit_failed)
		return vol_error(vol, -EROFS, TUX3_NONE, TUX3_NONE, TUX3_NONE,
				 "an earlier commit failed: no change is taken "
				 "until the volume is reopened");
	return 0;
}

/* The table to edit: the volume's, or a fresh one (origin only). */
static struct vtree *table_copy(struct tux3_volume *vol)
{
	struct vtree *vt = malloc(sizeof(*vt));
	if (!vt)
		return NULL;
	if (vol->vt)
		memcpy(vt, vol->vt, sizeof(*vt));
	else
		vtree_init(vt);
	return vt;
}

/* An orphan of the live version (unlinked, still open) is not taken
 * into a snapshot of it: it has no name there, and would outlive its
 * release.  Its mode is made ABSENT on the new label. */
static int orphans_absent(struct tux3_volume *vol, struct vtree *vt,
			  unsigned *label)
{
	int err = 0;
	for (unsigned i = 0; i < vol->orphans.count && !err; i++) {
		tux3_ino_t inum = vol->orphans.inums[i];
		struct vattrs x;
		uint8_t *blob, *out = NULL;
		unsigned len, bad_at, l = *label;
		if (inum < TUX3_ROOT_INO ||
		    (err = vblob_read(vol, inum, &blob, &len)))
			continue;
		if (!len || vattrs_decode(blob, len, &x, &bad_at)) {
			free(blob);
			continue;	/* fsck's business */
		}
		/* the set may move the snapshot to an implicit child of
		 * its label (VERSION_GHOST left behind): the next orphan and
		 * the snapshot's name follow it there */
		err = vattrs_set(vt, &x, &l, VATTR_KEY(ATTR_MODE_OWNER, 0),
				 NULL, 0, vol_now(vol));
		if (!err)
			*label = l;
		int n = -ENOMEM;
		if (!err && (out = malloc(len + 64)))
			n = vattrs_encode(&x, out, len + 64);
		if (!err)
			err = n < 0 ? n : itree_store(vol, inum, out,
						      (unsigned)n);
		vattrs_free(&x);
		free(blob);
		free(out);
	}
	return err;
}

/* The orphans' new elements in the version index: orphans_absent wrote
 * them before the table existed (the first table starts the index
 * empty), so their blobs are noted again once it does. */
static int orphans_noted(struct tux3_volume *vol)
{
	int err = 0;
	for (unsigned i = 0; i < vol->orphans.count && !err; i++) {
		tux3_ino_t inum = vol->orphans.inums[i];
		uint8_t *blob;
		unsigned len;
		if (inum < TUX3_ROOT_INO || vblob_read(vol, inum, &blob, &len))
			continue;
		err = vindex_note_blob(vol, inum, blob, len);
		free(blob);
	}
	tux3_clear_error(vol);
	return err;
}

int version_create(struct tux3_volume *vol, const char *name,
		   const char *of, uint32_t *tagp)
{
	int err = version_writer(vol);
	if (err)
		return err;
	if (!name || !*name || strlen(name) > VERSION_NAME_MAX ||
	    strchr(name, '/'))
		return vol_error(vol, -EINVAL, TUX3_NONE, TUX3_NONE,
				 TUX3_NONE, "a snapshot name has 1 to %d bytes "
				 "and no '/'", VERSION_NAME_MAX);
	/* pending changes first: the snapshot takes what was written */
	if ((err = tux3_sync(vol)))
		return err;
	struct vtree *vt = table_copy(vol);
	if (!vt)
		return -ENOMEM;
	int parent = VERSION_ORIGIN;
	uint32_t tag = 1;
	for (unsigned l = 1; l < vt->top; l++) {
		if (!(vt->v[l].flags & VERSION_USED) || vtree_ghost(vt, l))
			continue;
		if (!strcmp(vt->v[l].name, name))
			err = -EEXIST;
		if (of && !strcmp(vt->v[l].name, of))
			parent = (int)l;
		if (vt->v[l].tag >= tag)
			tag = vt->v[l].tag + 1;
	}
	if (!err && of && parent == VERSION_ORIGIN)
		err = -ENOENT;
	int l = err ? err : vtree_snapshot(vt, (unsigned)parent, tag,
					   vol_now(vol));
	unsigned label = l >= 0 ? (unsigned)l : 0;
	if (l >= 0 && parent == VERSION_ORIGIN)
		err = orphans_absent(vol, vt, &label);
	if (l >= 0 && err)
		l = err;
	if (l >= 0) {
		snprintf(vt->v[label].name, sizeof(vt->v[label].name), "%s",
			 name);
		err = vtable_save(vol, vt);
		if (!err && parent == VERSION_ORIGIN)
			err = orphans_noted(vol);
		if (!err && tagp)
			*tagp = tag;
	} else {
		err = vol_error(vol, l, TUX3_NONE, TUX3_NONE, TUX3_NONE,
				"snapshot %s: %s", name, l == -EEXIST ?
				"the name is in use" : l == -ENOENT ?
				"no snapshot to take it of" : l == -ENOSPC ?
				"no free label (4,096 in use)" : strerror(-l));
	}
	free(vt);
	return err;
}

struct files {
	tux3_ino_t *ino;
	size_t n, cap;
};

static int collect_inode(void *ctx, const struct tux3_stat *st,
			 tux3_block_t leafblock, unsigned bloblen)
{
	struct files *f = ctx;
	(void)leafblock; (void)bloblen;
	if (st->ino >= TUX3_ROOT_INO) {
		if (f->n == f->cap) {
			size_t cap = f->cap ? f->cap * 2 : 64;
			void *p = realloc(f->ino, cap * sizeof(*f->ino));
			if (!p)
				return -ENOMEM;
			f->ino = p;
			f->cap = cap;
		}
		f->ino[f->n++] = st->ino;
	}
	return 1;	/* the inode's children are not needed */
}

int version_inodes(struct tux3_volume *vol, const char *why,
		   tux3_ino_t **ino, size_t *n)
{
	struct tux3_walk_ops ops = { .inode = collect_inode };
	struct files f = { 0 };
	int err = tux3_walk(vol, &ops, &f);
	if (err == -EUCLEAN && why)
		err = vol_error(vol, err, TUX3_NONE, TUX3_NONE, TUX3_NONE,
				"the volume has damage: run fsck.tux3 before "
				"%s", why);
	if (err) {
		free(f.ino);
		f.ino = NULL;
		f.n = 0;
	}
	*ino = f.ino;
	*n = f.n;
	return err;
}

/* The plan applied to every inode: attributes, data, and the inodes no
 * version reads any more. */
static int apply_plan(struct tux3_volume *vol, const struct vdelete_plan *plan)
{
	tux3_ino_t *ino;
	size_t n;
	int err = version_inodes(vol, "deleting a snapshot", &ino, &n);
	for (size_t i = 0; i < n && !err; i++)
		err = vinode_apply_delete(vol, ino[i], plan);
	free(ino);
	return err;
}

int tux3_version_space(struct tux3_volume *vol, uint64_t *exclusive,
		       unsigned n)
{
	struct files f = { 0 };
	uint64_t *all = calloc(VERSION_LABELS, sizeof(*all));
	int err = all ? 0 : -ENOMEM;

	tux3_clear_error(vol);
	if (!err && !vol->vt)
		err = vol_error(vol, -ENOENT, TUX3_NONE, TUX3_NONE,
				TUX3_NONE, "the volume has no snapshots");
	if (!err)
		err = version_inodes(vol, NULL, &f.ino, &f.n);
	for (size_t i = 0; i < f.n && !err; i++) {
		uint8_t *blob;
		unsigned len;
		struct vattrs x;
		unsigned bad_at;
		if ((err = vblob_read(vol, f.ino[i], &blob, &len)) || !len)
			continue;
		/* the data tree root: one label-0 attribute (vinode.c) */
		if (!(err = vattrs_decode(blob, len, &x, &bad_at))) {
			const struct vattr *t = vattrs_get(vol->vt, &x, 0,
				VATTR_KEY(ATTR_DATA_BTREE, 0));
			struct inode inode = { .inum = f.ino[i],
				.dtree = t && t->len == 8 ? be64(t->data) : 0 };
			vattrs_free(&x);
			if (inode.dtree && vfilemap_is_versioned(vol, &inode))
				err = vfilemap_exclusive(vol, &inode, vol->vt,
							 all);
			tux3_clear_error(vol);
		} else if (err == -EUCLEAN) {
			err = vol_error(vol, err, TUX3_NONE, f.ino[i], bad_at,
					"inode %" PRIu64 ": attribute blob "
					"damaged at byte %u", f.ino[i], bad_at);
		}
		free(blob);
	}
	for (unsigned l = 0; l < n && !err; l++)
		exclusive[l] = l < VERSION_LABELS ? all[l] : 0;
	free(all);
	free(f.ino);
	return err;
}

/* Phase 2: the lists, then the labels freed, committed.  When the
 * delete took the last snapshot (back_to_2014), the same commit takes the
 * volume back to the 2014 format (version_compact_delta); a volume it
 * refuses stays versioned, with no snapshot. */
int version_delete_finish(struct tux3_volume *vol,
			  const struct vdelete_plan *plan, bool back_to_2014)
{
	int err = apply_plan(vol, plan);
	if (err)
		return err;
	struct vtree *vt = table_copy(vol);
	if (!vt)
		return -ENOMEM;
	vtree_delete_done(vt, plan);
	err = vtable_save(vol, vt);
	free(vt);
	bool compacted = false;
	if (!err && back_to_2014 && vtree_alone(vol->vt)) {
		err = version_compact_delta(vol, NULL);
		compacted = !err;
		if (err == -EUCLEAN && !vol->commit_failed) {
			vol_warn(vol, "the last snapshot is gone but the volume "
				 "stays versioned: %s", vol->error.what);
			tux3_clear_error(vol);
			err = 0;
		}
	}
	if (!err)
		err = compacted ? tux3_unify(vol) : tux3_sync(vol);
	if (!err && vol->vpending) {
		free(vol->vpending);
		vol->vpending = NULL;
		if (vol->vt)
			vol->vt->pending = NULL;
	}
	return err;
}

int version_delete_begin(struct tux3_volume *vol, const char *name,
			 struct vdelete_plan *plan)
{
	int err = version_writer(vol);
	if (err)
		return err;
	if (!vol->vt || vol->vpending)
		return vol_error(vol, vol->vt ? -EBUSY : -ENOENT, TUX3_NONE,
				 TUX3_NONE, TUX3_NONE, vol->vt ?
				 "a delete is still pending" :
				 "the volume has no snapshots");
	struct vtree *vt = table_copy(vol);
	if (!vt)
		return -ENOMEM;
	uint32_t tag = 0;
	for (unsigned l = 1; l < vt->top && !tag; l++)
		if ((vt->v[l].flags & VERSION_USED) && !vtree_ghost(vt, l) &&
		    !strcmp(vt->v[l].name, name))
			tag = vt->v[l].tag;
	err = tag ? vtree_delete(vt, tag, plan) : -ENOENT;
	if (!err) {
		vtree_plan_record(vt, plan);
		err = vtable_save(vol, vt);
	} else {
		vol_error(vol, err, TUX3_NONE, TUX3_NONE, TUX3_NONE,
			  "snapshot %s: %s", name, err == -ENOENT ?
			  "no such snapshot" : strerror(-err));
	}
	free(vt);
	/* the plan is durable before any list changes */
	return err ? err : tux3_sync(vol);
}

int version_delete(struct tux3_volume *vol, const char *name,
		   bool back_to_2014)
{
	struct vdelete_plan *plan = malloc(sizeof(*plan));
	if (!plan)
		return -ENOMEM;
	int err = version_delete_begin(vol, name, plan);
	if (!err)
		err = version_delete_finish(vol, plan, back_to_2014);
	free(plan);
	return err;
}

int version_repair_table(struct tux3_volume *vol)
{
	struct vdelete_plan *plan = malloc(sizeof(*plan));
	struct vtree *vt = table_copy(vol);
	int err = plan && vt ? version_writer(vol) : -ENOMEM;
	if (!err)
		err = vtree_repair(vt, plan);
	if (!err) {
		vtree_plan_record(vt, plan);
		err = vtable_save(vol, vt);
	}
	if (!err)
		err = tux3_sync(vol);
	if (!err && plan->count)
		err = version_delete_finish(vol, plan, false);
	free(vt);
	free(plan);
	return err;
}

int version_delete_resume(struct tux3_volume *vol)
{
	if (!vol->vpending)
		return 0;
	int err = version_writer(vol);
	return err ? err : version_delete_finish(vol, vol->vpending, true);
}

int tux3_snapshot_create(struct tux3_volume *vol, const char *name,
			 const char *of)
{
	int err = version_create(vol, name, of && *of ? of : NULL, NULL);
	return err ? err : tux3_sync(vol);
}

int tux3_snapshot_delete(struct tux3_volume *vol, const char *name)
{
	uint32_t selected = vol->vtag;
	int err = version_writer(vol);
	if (!err && !(err = tux3_sync(vol)))
		err = version_delete(vol, name, true);
	/* a deleted selected snapshot leaves the live version selected */
	if (!err && selected && vol->vt &&
	    vtree_find_tag(vol->vt, selected) < 0)
		vol->vtag = 0;
	return err;
}

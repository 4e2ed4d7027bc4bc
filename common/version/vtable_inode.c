/*
 * The version table's home (doc/format.md 17.2, 17.4): the data of inode
 * 3, which the 2014 format reserves for it.  A volume has versions when
 * its superblock carries the versions magic and its extension record the
 * VERSIONS incompat feature; the two go together, so that the reference
 * code, which checks only the magic, refuses the volume.
 */
#include <stdlib.h>
#include "version/vinode.h"
#include "version/version.h"

static bool has_versions(const struct tux3_volume *vol)
{
	return !memcmp(vol->super.magic, tux3_magic_versions, 8);
}

/* The magic and the feature bit must agree (checked at open, before the
 * trees are read: a volume marked either way is versioned). */
static int gate_check(struct tux3_volume *vol)
{
	bool bit = vol->ident.present &&
		   (vol->ident.incompat & TUX3_FEATURE_INCOMPAT_VERSIONS);
	if (bit == has_versions(vol))
		return 0;
	/* The magic is in the commit sector; the bit in the extension
	 * record, the next sector.  A record not sealed against this
	 * superblock is from another commit (a torn superblock write, the
	 * first snapshot's commit among them): the magic decides, and the
	 * next commit writes the record to agree. */
	if (!vol->ident.present || !superext_sealed(&vol->seal, &vol->super)) {
		/* the version index's bit goes with the versions; one the
		 * record lacks stays off (the index is not known whole) */
		if (has_versions(vol)) {
			vol->ident.incompat |= TUX3_FEATURE_INCOMPAT_VERSIONS;
		} else {
			vol->ident.incompat &= ~TUX3_FEATURE_INCOMPAT_VERSIONS;
			vol->ident.ro_compat &=
				~TUX3_FEATURE_RO_COMPAT_VERSION_INDEX;
		}
		return 0;
	}
	return vol_error(vol, -EUCLEAN, TUX3_NONE, TUX3_NONE, TUX3_SB_OFFSET +
			 (bit ? 0 : SUPEREXT_OFFSET + 16),
			 bit ? "superblock: the extension record has the "
			 "versions feature but the magic is the 2014 one" :
			 "superblock: the magic says the volume has versions "
			 "but the extension record lacks the versions "
			 "feature (run fsck.tux3)");
}

int vtable_load(struct tux3_volume *vol)
{
	int err = gate_check(vol);
	return err || !has_versions(vol) ? err : vtable_read(vol);
}

/* Inode 3's table into vol->vt (and a pending delete into vol->vpending),
 * whatever the marks say (fsck pass 9 compares them). */
int vtable_read(struct tux3_volume *vol)
{
	struct inode inode;
	size_t done = 0, bad_at = 0;
	int err;

	vtable_unload(vol);
	if ((err = inode_load(vol, TUX3_VTABLE_INO, &inode)))
		return vol_error(vol, err == -ENOENT ? -EUCLEAN : err,
				 TUX3_NONE, TUX3_VTABLE_INO, TUX3_NONE,
				 "the volume has versions but no version "
				 "table (inode 3)");
	size_t max = VTABLE_HEADER + (size_t)VERSION_LABELS * VTABLE_RECORD;
	size_t len = inode.size < max ? (size_t)inode.size : max;
	uint8_t *buf = malloc(len ? len : 1);
	vol->vt = malloc(sizeof(*vol->vt));
	vol->vpending = malloc(sizeof(*vol->vpending));
	if (!buf || !vol->vt || !vol->vpending) {
		err = -ENOMEM;
		goto out;
	}
	if ((err = inode_read(vol, &inode, buf, len, 0, &done)))
		goto out;
	err = vtable_decode(vol->vt, buf, done, vol->vpending, &bad_at);
	if (err) {
		vol_error(vol, err, TUX3_NONE, TUX3_VTABLE_INO, bad_at,
			  "version table (inode 3): a field out of range or "
			  "a bad CRC at byte %zu", bad_at);
		/* the live version reads on through what the records
		 * still say (the origin's reads need none of them) */
		vol->vt_dropped = vtable_salvage(vol->vt, buf, done,
						 vol->vpending);
		vol->vt_bad = true;
	} else if (vol->vt->bad_names) {
		vol_warn(vol, "version table (inode 3): %u snapshot name%s "
			 "empty, repeated or without a terminating NUL "
			 "(fsck.tux3 renames them)", vol->vt->bad_names,
			 vol->vt->bad_names == 1 ? "" : "s");
	}
out:
	free(buf);
	inode_free(&inode);
	bool kept = !err || vol->vt_bad;
	if (kept && !vol->vpending->count) {
		free(vol->vpending);
		vol->vpending = NULL;
	}
	if (kept && vol->vpending)
		vol->vt->pending = vol->vpending;	/* read as it will be */
	if (!kept)
		vtable_unload(vol);
	return err;
}

int vtable_open(struct tux3_volume *vol)
{
	int err = vtable_load(vol);
	if (err == -ENOMEM)
		return err;
	if (err) {
		vol_warn(vol, "versions: %s; snapshots cannot be read%s (run "
			 "fsck.tux3)", vol->error.what, vol->vt_bad ?
			 ", the live version reads on" : "");
		tux3_clear_error(vol);
	}
	return 0;
}

int tux3_versions(struct tux3_volume *vol, tux3_version_fn fn, void *ctx)
{
	const struct vtree *vt = vol->vt;
	if (!vt || vol->vt_bad) {
		if (vtable_marked(vol))
			return vol_error(vol, -EUCLEAN, TUX3_NONE,
					 TUX3_VTABLE_INO, TUX3_NONE, "the volume "
					 "has versions but its version table "
					 "could not be read (run fsck.tux3)");
		struct tux3_version_info o = { .label = 0, .name = "",
					       .parent = TUX3_VERSION_NONE };
		return fn(ctx, &o);
	}
	for (unsigned l = 0; l < vt->top; l++) {
		const struct version *v = &vt->v[l];
		if (!v->flags)
			continue;
		struct tux3_version_info info = {
			.label = l, .parent = v->parent, .tag = v->tag,
			.name = v->name,
			.ghost = !!(v->flags & VERSION_GHOST),
			.dying = !!(v->flags & VERSION_DYING),
			.birth_ns = v->birth_ns,
			.children = v->flags & VERSION_DYING ? 0 :
				    vt->nchild[l],
		};
		int err = fn(ctx, &info);
		if (err)
			return err;
	}
	return 0;
}

struct vlist {
	struct tux3_version_info *v;
	unsigned n, cap;
};

static int vlist_add(void *ctx, const struct tux3_version_info *v)
{
	struct vlist *l = ctx;
	if (l->n == l->cap) {
		unsigned cap = l->cap ? l->cap * 2 : 16;
		void *a = realloc(l->v, cap * sizeof(*l->v));
		if (!a)
			return -ENOMEM;
		l->v = a;
		l->cap = cap;
	}
	l->v[l->n++] = *v;
	return 0;
}

int tux3_version_list(struct tux3_volume *vol,
		      struct tux3_version_info **list, unsigned *count)
{
	struct vlist l = { 0 };
	int err = tux3_versions(vol, vlist_add, &l);
	if (err) {
		free(l.v);
		l.v = NULL;
		l.n = 0;
	}
	*list = l.v;
	*count = l.n;
	return err;
}

void vtable_unload(struct tux3_volume *vol)
{
	vol->vt_bad = false;
	vol->vt_dropped = 0;
	free(vol->vt);
	free(vol->vpending);
	vol->vt = NULL;
	vol->vpending = NULL;
}

/* Write vt as the volume's table, in the open delta; the first table
 * also turns the gate (magic and feature bit, written by the commit). */
int vtable_save(struct tux3_volume *vol, const struct vtree *vt)
{
	struct inode inode;
	size_t size = vtable_size(vt);
	uint8_t *buf = malloc(size);
	int err;

	if (vol->mode != TUX3_OPEN_RDWR)
		return vol_error(vol, -EROFS, TUX3_NONE, TUX3_VTABLE_INO,
				 TUX3_NONE, "volume opened read-only");
	if (!buf)
		return -ENOMEM;
	if (!vol->ident.present &&
	    (err = tux3_set_identity(vol, NULL, NULL)))
		goto out_buf;
	vtable_encode(vt, buf);
	/* the first table starts the version index, empty and whole; a
	 * later one drops the pairs of the labels it frees */
	if (!vtable_marked(vol))
		err = vindex_begin(vol);
	else if (vindex_feature(vol))
		err = vindex_keep_labels(vol, vt);
	if (err || (err = internal_inode(vol, TUX3_VTABLE_INO, &inode)))
		goto out_buf;
	err = inode_write_data(vol, &inode, buf, size, 0, true);
	/* the index lies past the largest table: kept */
	if (!err && inode.size > size && !vindex_feature(vol))
		err = inode_truncate(vol, &inode, size);
	if (!err)
		err = inode_store(vol, &inode);
	inode_free(&inode);
	if (err)
		goto out_buf;
	if (!vol->vt && !(vol->vt = malloc(sizeof(*vol->vt)))) {
		err = -ENOMEM;
		goto out_buf;
	}
	if (vol->vt != vt)
		memcpy(vol->vt, vt, sizeof(*vt));
	vol->vt_bad = false;	/* the table on disk decodes again */
	vol->vt_dropped = 0;
	vol->ident.incompat |= TUX3_FEATURE_INCOMPAT_VERSIONS;
	memcpy(vol->super.magic, tux3_magic_for(vol->ident.incompat), 8);
	vol->super_dirty = true;
out_buf:
	free(buf);
	return err;
}

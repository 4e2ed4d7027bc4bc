/*
 * Inodes of a volume with versions (doc/format.md 17.3a, 17.7): one blob
 * in the inode table holds every version's attributes (vattr.c), and the
 * file operations see one version at a time, the volume's selected one.
 *
 * Loading projects the blob onto the selected version: the attributes it
 * reads, as a 2014 blob that inode_from_blob decodes like any other.
 * Storing (vinode_write.c) goes the other way: the 2014 blob of the changed inode is
 * compared key by key with what the version read, and only the keys that
 * differ are written through the version rules (vattrs_set), so that
 * every other version keeps what it saw.  The data tree root is the one
 * exception: every version shares the file's tree (its leaves carry the
 * labels), so it is one label-0 attribute that all versions read.
 *
 * Internal inodes (below the root directory) are never versioned.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "version/vinode.h"
#include "version/version.h"
#include "version/vfilemap.h"

#define KEY_MODE	VATTR_KEY(ATTR_MODE_OWNER, 0)

int vol_label(struct tux3_volume *vol, unsigned *label)
{
	*label = VERSION_ORIGIN;
	if (!vol->vtag || !vol->vt)
		return 0;
	int l = vtree_find_tag(vol->vt, vol->vtag);
	if (l < 0)
		return vol_error(vol, -ENOENT, TUX3_NONE, TUX3_VTABLE_INO,
				 TUX3_NONE, "the selected snapshot (tag %" PRIu32
				 ") no longer exists", vol->vtag);
	*label = (unsigned)l;
	return 0;
}

/* The blob as version label reads it, in the 2014 form; -ENOENT when the
 * inode does not exist in it (no mode), -EUCLEAN for a damaged blob. */
int vinode_project(struct tux3_volume *vol, tux3_ino_t inum,
		   const struct vattrs *x, unsigned label, uint8_t **view,
		   unsigned *vlen)
{
	struct vattrs v = { 0 };
	int err = 0;

	if (!vattrs_get(vol->vt, x, label, KEY_MODE))
		return -ENOENT;
	/* each key once, in the order of its first attribute */
	for (unsigned i = 0; i < x->n && !err; i++) {
		uint32_t key = x->a[i].key;
		bool first = true;
		for (unsigned j = 0; j < i && first; j++)
			first = x->a[j].key != key;
		if (!first)
			continue;
		const struct vattr *a = vattrs_get(vol->vt, x, label, key);
		if (a)
			err = vattrs_set_shared(&v, key, a->data ? a->data :
						(const void *)"", a->len);
	}
	unsigned cap = x->n * 8 + 64;
	for (unsigned i = 0; i < v.n; i++)
		cap += v.a[i].len;
	uint8_t *buf = err ? NULL : malloc(cap);
	if (!err && !buf)
		err = -ENOMEM;
	if (!err) {
		int n = vattrs_encode(&v, buf, cap);
		if (n < 0) {
			err = n;
			free(buf);
		} else {
			*view = buf;
			*vlen = (unsigned)n;
		}
	}
	vattrs_free(&v);
	if (err == -EUCLEAN || err == -ENOSPC)
		err = vol_error(vol, -EUCLEAN, TUX3_NONE, inum, TUX3_NONE,
				"inode %" PRIu64 ": versioned attributes "
				"cannot be projected", inum);
	return err;
}

int vinode_decode(struct tux3_volume *vol, tux3_ino_t inum,
		  const uint8_t *blob, unsigned len, struct vattrs *x)
{
	unsigned bad_at = 0;
	uint8_t *whole = NULL;
	int err;
	memset(x, 0, sizeof(*x));
	if (vspill_has(blob, len)) {
		/* the part past the leaf: its damage is named there */
		if ((err = vspill_expand(vol, inum, blob, len, &whole, &len)))
			return err;
		blob = whole;
	}
	err = vattrs_decode(blob, len, x, &bad_at);
	free(whole);
	if (err == -EUCLEAN)
		return vol_error(vol, err, TUX3_NONE, inum, bad_at, "inode %"
				 PRIu64 ": attribute blob damaged at byte %u",
				 inum, bad_at);
	return err;
}

int vinode_view(struct tux3_volume *vol, tux3_ino_t inum,
		const uint8_t *blob, unsigned len, uint8_t **view,
		unsigned *vlen)
{
	struct vattrs x;
	unsigned label;
	int err = vol_label(vol, &label);
	if (err)
		return err;
	if ((err = vinode_decode(vol, inum, blob, len, &x)))
		return err;
	err = vinode_project(vol, inum, &x, label, view, vlen);
	vattrs_free(&x);
	if (err == -ENOENT)
		err = vol_error(vol, -ENOENT, TUX3_NONE, inum, TUX3_NONE,
				"inode %" PRIu64 " does not exist in this "
				"version", inum);
	return err;
}

int vinode_read_by_any(struct tux3_volume *vol, tux3_ino_t inum,
		       const uint8_t *disk, unsigned dlen, bool *any)
{
	struct vattrs x;
	int err = vinode_decode(vol, inum, disk, dlen, &x);
	if (!err)
		*any = vattrs_inode_live(vol->vt, &x);
	vattrs_free(&x);
	return err;
}

/* ---- choosing the version (tux3.h) ---- */

int tux3_version_select(struct tux3_volume *vol, const char *name)
{
	tux3_clear_error(vol);
	if (!name || !*name) {
		vol->vtag = 0;
		return 0;
	}
	if (!vol->vt)
		return vol_error(vol, -ENOENT, TUX3_NONE, TUX3_NONE,
				 TUX3_NONE, "snapshot %s: the volume has no "
				 "snapshots", name);
	if (vol->vt_bad)
		return vol_error(vol, -EUCLEAN, TUX3_NONE, TUX3_VTABLE_INO,
				 TUX3_NONE, "snapshot %s: the version table "
				 "is damaged, only the live version reads "
				 "(run fsck.tux3)", name);
	struct vtree *vt = vol->vt;
	for (unsigned l = 1; l < vt->top; l++)
		if (vtree_used(vt, l) && !vtree_ghost(vt, l) &&
		    !(vt->v[l].flags & VERSION_DYING) &&
		    !strcmp(vt->v[l].name, name)) {
			vol->vtag = vt->v[l].tag;
			return 0;
		}
	return vol_error(vol, -ENOENT, TUX3_NONE, TUX3_NONE, TUX3_NONE,
			 "snapshot %s: no such snapshot", name);
}

int tux3_version_select_tag(struct tux3_volume *vol, uint32_t tag)
{
	tux3_clear_error(vol);
	if (!tag) {
		vol->vtag = 0;
		return 0;
	}
	int l = vol->vt && !vol->vt_bad ? vtree_find_tag(vol->vt, tag) : -1;
	if (l <= 0 || (vol->vt->v[l].flags & VERSION_DYING))
		return vol_error(vol, -ENOENT, TUX3_NONE, TUX3_NONE, TUX3_NONE,
				 "version tag %" PRIu32 ": no such snapshot",
				 tag);
	vol->vtag = tag;
	return 0;
}

uint32_t tux3_version_selected_tag(const struct tux3_volume *vol)
{
	return vol->vtag;
}

const char *tux3_version_selected(struct tux3_volume *vol)
{
	/* a getter: no error set or cleared */
	int l = vol->vtag && vol->vt ? vtree_find_tag(vol->vt, vol->vtag) : -1;
	return l > 0 ? vol->vt->v[l].name : "";
}

static int table_save(struct tux3_volume *vol)
{
	return vtable_save(vol, vol->vt);
}

/* Every version's blob stored, and the labels it holds noted in the
 * version index first (the delta writes both, or neither). */
static int blob_store(struct tux3_volume *vol, tux3_ino_t inum,
		      const uint8_t *blob, unsigned len)
{
	int err = vindex_note_blob(vol, inum, blob, len);
	return err ? err : vspill_store(vol, inum, blob, len);
}

const struct vinode_ops vinode_ops = {
	.view = vinode_view,
	.merge = vinode_merge,
	.room = vinode_room,
	.write_data = vinode_write_data,
	.truncate = vinode_truncate,
	.destroy = vinode_destroy,
	.file_versioned = vfilemap_is_versioned,
	.filemap_walk = vfilemap_walk_selected,
	.table_save = table_save,
	.blob_read = vblob_read,
	.blob_store = blob_store,
	.index_save = vindex_save,
};

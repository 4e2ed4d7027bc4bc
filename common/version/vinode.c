/*
 * Inodes of a volume with versions (doc/format.md 17.3a, 17.7): one blob
 * in the inode table holds every version's attributes (vattr.c), and the
 * file operations see one version at a time, the volume's selected one.
 *
 * Loading projects the blob onto the selected version: the attributes it
 * reads, as a 2014 blob that inode_from_blob decodes like any other.
 * Storing goes the other way: the 2014 blob of the changed inode is
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
#define KEY_DTREE	VATTR_KEY(ATTR_DATA_BTREE, 0)

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
static int project(struct tux3_volume *vol, tux3_ino_t inum,
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

static int decode(struct tux3_volume *vol, tux3_ino_t inum,
		  const uint8_t *blob, unsigned len, struct vattrs *x)
{
	unsigned bad_at = 0;
	int err = vattrs_decode(blob, len, x, &bad_at);
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
	if ((err = decode(vol, inum, blob, len, &x)))
		return err;
	err = project(vol, inum, &x, label, view, vlen);
	vattrs_free(&x);
	if (err == -ENOENT)
		err = vol_error(vol, -ENOENT, TUX3_NONE, inum, TUX3_NONE,
				"inode %" PRIu64 " does not exist in this "
				"version", inum);
	return err;
}

/* Non-absent XATTR attributes of atom: the references the atom table
 * counts for this inode (one per version's own value). */
static unsigned atom_uses(const struct vattrs *x, unsigned atom)
{
	unsigned n = 0;
	for (unsigned i = 0; i < x->n; i++)
		if (x->a[i].key == VATTR_KEY(ATTR_XATTR, atom) &&
		    !x->a[i].absent)
			n++;
	return n;
}

static bool has_key(const struct vattrs *x, uint32_t key)
{
	for (unsigned i = 0; i < x->n; i++)
		if (x->a[i].key == key && !x->a[i].absent)
			return true;
	return false;
}

/*
 * The atom table counts one reference per XATTR attribute of any version.
 * The caller (xattr.c) already took or gave back one reference for each
 * xattr that appeared in or left the version's view; what the version
 * rules did besides (an old value handed to a snapshot) is settled here.
 * Increments come first, so no count touches zero on the way.
 */
static int settle_atoms(struct tux3_volume *vol, const struct vattrs *before,
			const struct vattrs *after, const struct vattrs *oldv,
			const struct vattrs *newv)
{
	int err = 0;
	for (int pass = 0; pass < 2 && !err; pass++) {
		const struct vattrs *all[2] = { before, after };
		for (int s = 0; s < 2 && !err; s++)
			for (unsigned i = 0; i < all[s]->n && !err; i++) {
				uint32_t key = all[s]->a[i].key;
				if (key >> 16 != ATTR_XATTR)
					continue;
				unsigned atom = key & 0xffff;
				/* each atom once: its first occurrence */
				bool first = true;
				for (int t = 0; t <= s && first; t++)
					for (unsigned j = 0; j < (t < s ?
					     all[t]->n : i) && first; j++)
						first = all[t]->a[j].key != key;
				if (!first)
					continue;
				int de = (int)atom_uses(after, atom) -
					 (int)atom_uses(before, atom);
				int dv = (int)has_key(newv, key) -
					 (int)has_key(oldv, key);
				int extra = de - dv;
				if (pass == 0 && extra > 0)
					err = atom_ref_add(vol, atom,
							   (unsigned)extra);
				for (; pass == 1 && extra < 0 && !err; extra++)
					err = atom_put(vol, atom);
			}
	}
	return err;
}

/* The key's attribute in a decoded view (label 0 only). */
static const struct vattr *view_get(const struct vattrs *v, uint32_t key)
{
	for (unsigned i = 0; i < v->n; i++)
		if (v->a[i].key == key && !v->a[i].absent)
			return &v->a[i];
	return NULL;
}

static bool same_value(const struct vattr *a, const struct vattr *b)
{
	return a->len == b->len && (!a->len || !memcmp(a->data, b->data,
						       a->len));
}

/*
 * Write the version's new view (a 2014 blob) into the disk blob: the
 * merged blob in *out (malloc'd).  The selected version may become an
 * implicit child on the way (vol->vt changes, saved at the commit).
 */
int vinode_merge(struct tux3_volume *vol, tux3_ino_t inum,
		 const uint8_t *disk, unsigned dlen, const uint8_t *view,
		 unsigned vlen, uint8_t **out, unsigned *olen)
{
	struct vattrs x = { 0 }, before = { 0 }, oldv = { 0 }, newv = { 0 };
	unsigned label, start;
	uint8_t *old = NULL, *buf = NULL;
	unsigned oldlen = 0;
	int err = vol_label(vol, &label);

	start = label;
	if (!err && (err = decode(vol, inum, disk, dlen, &x)) == 0)
		err = decode(vol, inum, disk, dlen, &before);
	if (!err && dlen) {
		err = project(vol, inum, &x, label, &old, &oldlen);
		if (err == -ENOENT)
			err = 0;	/* created in this version */
	}
	if (!err && old)
		err = decode(vol, inum, old, oldlen, &oldv);
	if (!err)
		err = decode(vol, inum, view, vlen, &newv);
	int64_t now = vol_now(vol);
	/* keys the version reads now: changed or gone */
	for (unsigned i = 0; i < oldv.n && !err; i++) {
		const struct vattr *o = &oldv.a[i], *n = view_get(&newv, o->key);
		if (o->key == KEY_DTREE || (n && same_value(o, n)))
			continue;
		err = vattrs_set(vol->vt, &x, &label, o->key,
				 n ? (n->data ? n->data : (const void *)"")
				   : NULL, n ? n->len : 0, now);
	}
	/* keys new to the version */
	for (unsigned i = 0; i < newv.n && !err; i++) {
		const struct vattr *n = &newv.a[i];
		if (n->key == KEY_DTREE || view_get(&oldv, n->key))
			continue;
		err = vattrs_set(vol->vt, &x, &label, n->key,
				 n->data ? n->data : (const void *)"", n->len,
				 now);
	}
	/* the data tree: shared by every version, one label-0 attribute */
	if (!err) {
		const struct vattr *t = view_get(&newv, KEY_DTREE);
		err = vattrs_set_shared(&x, KEY_DTREE, t ? t->data : NULL,
					t ? t->len : 0);
	}
	if (label != start)
		vol->vt_dirty = true;	/* an implicit child was made (it
					 * stays even if the store fails) */
	unsigned cap = dlen + vlen + 4 * 6 * 16 + 64;
	if (!err && !(buf = malloc(cap)))
		err = -ENOMEM;
	if (!err) {
		int n = vattrs_encode(&x, buf, cap);
		if (n < 0)
			err = n;
		else
			*olen = (unsigned)n;
	}
	if (!err && *olen > vol->blocksize - ILEAF_HEADER - 2)
		err = vol_error(vol, -ENOSPC, TUX3_NONE, inum, TUX3_NONE,
				"inode %" PRIu64 ": the attributes of all its "
				"versions would take %u bytes, more than an "
				"inode-table leaf holds (%u): delete a "
				"snapshot first", inum, *olen,
				vol->blocksize - ILEAF_HEADER - 2);
	if (!err)
		err = settle_atoms(vol, &before, &x, &oldv, &newv);
	if (!err)
		*out = buf;
	else
		free(buf);
	free(old);
	vattrs_free(&x);
	vattrs_free(&before);
	vattrs_free(&oldv);
	vattrs_free(&newv);
	return err;
}

int vinode_read_by_any(struct tux3_volume *vol, tux3_ino_t inum,
		       const uint8_t *disk, unsigned dlen, bool *any)
{
	struct vattrs x;
	int err = decode(vol, inum, disk, dlen, &x);
	if (!err)
		*any = vattrs_inode_live(vol->vt, &x);
	vattrs_free(&x);
	return err;
}

/* The atoms of every XATTR attribute left in a blob no version reads:
 * their references go with the blob. */
int vinode_release_atoms(struct tux3_volume *vol, tux3_ino_t inum,
			 const uint8_t *disk, unsigned dlen)
{
	struct vattrs x;
	int err = decode(vol, inum, disk, dlen, &x);
	for (unsigned i = 0; i < x.n && !err; i++)
		if (x.a[i].key >> 16 == ATTR_XATTR && !x.a[i].absent)
			err = atom_put(vol, x.a[i].key & 0xffff);
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
};

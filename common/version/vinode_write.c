/*
 * Inodes of a volume with versions changed in the selected version: the
 * version's view of the attributes merged back into the blob of every
 * version (vinode_merge, the atom references settled), and file data:
 * writes
 * give every written block a new home in that version only (vfilemap_write.c,
 * redirect-on-write), truncates punch holes in that version only, and an
 * inode unlinked in one version lives on in the others.
 *
 * The inode must be stored after any change here (its data tree root
 * moves with each copied leaf).  That store may need room in the inode's
 * leaf for the version's new attributes, so a data change is refused
 * before it starts when the blob of all versions is too close to the
 * cap: a change is never made that its inode cannot record.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "version/vinode.h"
#include "version/version.h"
#include "version/vfilemap.h"

/* What one store can add to a blob: every fixed attribute of the version
 * written anew, and an ABSENT marker per kind for the snapshot the origin
 * hands its old values to. */
#define STORE_GROWTH	(IATTR_FIXED_MAX + 7 * 6)
#define KEY_DTREE	VATTR_KEY(ATTR_DATA_BTREE, 0)
#define RUN_BLOCKS	256	/* blocks per vfilemap_update call */

int vinode_room(struct tux3_volume *vol, tux3_ino_t inum)
{
	uint8_t *disk;
	unsigned dlen, cap = vol->blocksize - ILEAF_HEADER - 2;
	unsigned label0, total, grow0 = 0;
	if (!vinode_applies(vol, inum))
		return 0;
	int err = itree_blob(vol, inum, &disk, &dlen);
	if (!err) {
		vspill_sizes(disk, dlen, &label0, &total);
		grow0 = vspill_label0_growth(disk, dlen);
	}
	free(disk);
	/* the label-0 part stays in the leaf with the SPILL attribute, and
	 * grows only by the kinds it lacks; the rest may go to the chain
	 * (format.md 17.3b) */
	if (!err && label0 + 2 + VSPILL_PAYLOAD + grow0 > cap)
		err = vol_error(vol, -ENOSPC, TUX3_NONE, inum, TUX3_NONE,
				"inode %" PRIu64 ": the live version's "
				"attributes take %u bytes, and a change needs "
				"%u more beside them in its leaf of %u",
				inum, label0, 2 + VSPILL_PAYLOAD + grow0, cap);
	else if (!err && total + STORE_GROWTH > cap + VSPILL_MAX)
		err = vol_error(vol, -ENOSPC, TUX3_NONE, inum, TUX3_NONE,
				"inode %" PRIu64 ": its versions' attributes "
				"take %u of the %u bytes an inode may have: "
				"delete a snapshot first", inum, total,
				cap + VSPILL_MAX);
	return err;
}

/* Write n blocks of data from logical in the version; a label change (an
 * implicit child) is noted for the commit. */
static int update(struct tux3_volume *vol, struct inode *inode,
		  uint64_t logical, uint64_t n, enum vext_mode mode,
		  uint64_t *written)
{
	unsigned label, start;
	int err = vol_label(vol, &label);
	if (err)
		return err;
	start = label;
	err = vfilemap_update(vol, inode, vol->vt, &label, logical, n, mode,
			      written);
	if (label != start)
		vol->vt_dirty = true;
	if (inode->dtree)
		inode->present |= 1u << ATTR_DATA_BTREE;
	else
		inode->present &= ~(1u << ATTR_DATA_BTREE);
	return err;
}

/* A versioned file's placement: every block written goes through the
 * version rules, redirected where another version reads it. */
static int versioned_place(struct tux3_volume *vol, struct inode *inode,
			   uint64_t logical, uint64_t *n, uint64_t *phys,
			   bool privileged)
{
	(void)privileged;	/* the version rules allocate for themselves */
	if (*n > RUN_BLOCKS)
		*n = RUN_BLOCKS;
	return update(vol, inode, logical, *n, VEXT_REDIRECT, phys);
}

static const struct data_placement versioned_placement = {
	.place = versioned_place,
};

int vinode_write_data(struct tux3_volume *vol, struct inode *inode,
		      const void *buf, size_t len, uint64_t pos)
{
	unsigned bits = vol->blockbits;
	int err;

	if (!len)
		return 0;
	if (pos > iattr_max_data(bits) || len > iattr_max_data(bits) - pos)
		return -EFBIG;
	if ((err = vinode_room(vol, inode->inum)))
		return err;
	return data_write(vol, inode, buf, len, pos, false,
			  &versioned_placement);
}

struct end_ctx {
	uint64_t end;
};

static int mapped_end(void *ctx, const struct extent *x)
{
	struct end_ctx *e = ctx;
	if (x->physical && x->logical + x->count > e->end)
		e->end = x->logical + x->count;
	return 0;
}

int vinode_punch(struct tux3_volume *vol, struct inode *inode,
		 uint64_t logical, uint64_t count)
{
	uint64_t written[RUN_BLOCKS];
	int err = vinode_room(vol, inode->inum);
	while (count && !err) {
		uint64_t n = count < RUN_BLOCKS ? count : RUN_BLOCKS;
		err = update(vol, inode, logical, n, VEXT_PUNCH, written);
		logical += n;
		count -= n;
	}
	return err;
}

/* Punch every block the version maps from keep on. */
static int punch_from(struct tux3_volume *vol, struct inode *inode,
		      uint64_t keep)
{
	struct end_ctx e = { keep };
	uint64_t written[RUN_BLOCKS];
	int err = filemap_walk(vol, inode, keep, TUX3_KEY_LIMIT, mapped_end,
			       &e);
	for (uint64_t at = keep; at < e.end && !err;) {
		uint64_t n = e.end - at < RUN_BLOCKS ? e.end - at : RUN_BLOCKS;
		err = update(vol, inode, at, n, VEXT_PUNCH, written);
		at += n;
	}
	return err;
}

int vinode_truncate(struct tux3_volume *vol, struct inode *inode,
		    uint64_t size)
{
	unsigned bits = vol->blockbits, bs = vol->blocksize;
	int err = 0;

	if (size > iattr_max_data(bits))
		return -EFBIG;
	if (size < inode->size) {
		if ((err = vinode_room(vol, inode->inum)) ||
		    (err = punch_from(vol, inode, (size + bs - 1) >> bits)))
			return err;
		if (size & (bs - 1)) {
			/* the tail of the last block zeroed, as a later grow
			 * must read zeros there */
			uint64_t physical, run;
			err = filemap_lookup(vol, inode, size >> bits,
					     &physical, &run);
			uint8_t *zero = err || !physical ? NULL : calloc(1, bs);
			if (!err && physical && !zero)
				return -ENOMEM;
			if (zero)
				err = vinode_write_data(vol, inode, zero,
					bs - (unsigned)(size & (bs - 1)), size);
			free(zero);
		}
	}
	inode->size = size;
	return err;
}

/* The data of every version: the vleaf tree, or the unversioned map. */
static int free_all_data(struct tux3_volume *vol, struct inode *inode)
{
	if (!inode->dtree)
		return 0;
	if (vfilemap_is_versioned(vol, inode))
		return vfilemap_destroy(vol, inode);
	tux3_clear_error(vol);
	return inode_free_unversioned(vol, inode);
}

/*
 * The inode leaves the selected version: its data there punched, its
 * attributes made absent there.  When no version reads it any more, the
 * blob goes with every version's data and atoms, and its number is free.
 */
int vinode_destroy(struct tux3_volume *vol, struct inode *inode)
{
	int err = vinode_truncate(vol, inode, 0);
	if (err)
		return err;
	/* the view keeps only the shared data tree: every other key the
	 * version read becomes absent in it */
	struct inode gone = { .inum = inode->inum, .dtree = inode->dtree,
			      .present = inode->dtree ?
					 1u << ATTR_DATA_BTREE : 0 };
	if ((err = inode_store(vol, &gone)))
		goto out;
	/* the view's atom references (merge settled the others) */
	for (unsigned i = 0; i < inode->nxattr && !err; i++)
		err = atom_put(vol, inode->xattrs[i].atom);
	uint8_t *disk = NULL;
	unsigned dlen = 0;
	bool any = true;
	if (!err)
		err = vblob_read(vol, inode->inum, &disk, &dlen);
	if (!err && dlen)
		err = vinode_read_by_any(vol, inode->inum, disk, dlen, &any);
	if (!err && !dlen) {
		/* nothing left at all: the store removed the blob */
		vol->super.usedinodes--;
		vol->super_dirty = true;
	} else if (!err && !any) {
		/* read by no version: the whole inode goes */
		inode->dtree = gone.dtree;
		if (!(err = vinode_release_atoms(vol, inode->inum, disk,
						 dlen)) &&
		    !(err = free_all_data(vol, inode)) &&
		    !(err = inode_delete(vol, inode->inum))) {
			vol->super.usedinodes--;
			vol->super_dirty = true;
		}
	}
	free(disk);
out:
	inode_free(&gone);
	return err;
}

static unsigned xattr_uses(const struct vattrs *x, uint32_t key)
{
	unsigned n = 0;
	for (unsigned i = 0; i < x->n; i++)
		n += x->a[i].key == key && !x->a[i].absent;
	return n;
}

/* The atom references of the XATTR attributes a delete dropped: one per
 * attribute (vinode.c's rule); a delete only drops and relabels, so the
 * difference in count per atom is what went. */
static int put_dropped_atoms(struct tux3_volume *vol, const uint8_t *disk,
			     unsigned dlen, const struct vattrs *after)
{
	struct vattrs before;
	unsigned bad_at;
	int err = vattrs_decode(disk, dlen, &before, &bad_at);
	for (unsigned i = 0; i < before.n && !err; i++) {
		uint32_t key = before.a[i].key;
		bool first = true;
		for (unsigned j = 0; j < i && first; j++)
			first = before.a[j].key != key;
		if (key >> 16 != ATTR_XATTR || !first)
			continue;
		unsigned had = xattr_uses(&before, key);
		unsigned left = xattr_uses(after, key);
		for (unsigned k = left; k < had && !err; k++)
			err = atom_put(vol, key & 0xffff);
	}
	vattrs_free(&before);
	return err;
}

/* An inode no version has any more: its atoms, its data, its blob. */
static int drop_inode(struct tux3_volume *vol, const struct vattrs *x,
		      struct inode *data)
{
	int err = 0;
	for (unsigned i = 0; i < x->n && !err; i++)
		if (x->a[i].key >> 16 == ATTR_XATTR && !x->a[i].absent)
			err = atom_put(vol, x->a[i].key & 0xffff);
	if (!err)
		err = free_all_data(vol, data);
	if (!err)
		err = inode_delete(vol, data->inum);
	if (!err) {
		vol->super.usedinodes--;
		vol->super_dirty = true;
	}
	return err;
}

/*
 * One inode's element lists reworked, attributes and data alike: by a
 * snapshot delete's plan (plan set), or by fsck's repair (plan NULL:
 * elements of labels not in the tree, second elements of a label and
 * orphans dropped).  Blocks and atom references of what went are given
 * back, and the inode goes when no version has it any more.  Doing it a
 * second time changes nothing.
 */
static int rework(struct tux3_volume *vol, tux3_ino_t inum,
		  const struct vdelete_plan *plan)
{
	struct vattrs x = { 0 };
	uint8_t *disk = NULL, *buf = NULL;
	unsigned dlen = 0, bad_at = 0;
	int err = vblob_read(vol, inum, &disk, &dlen);
	if (err || !dlen)
		goto out;
	if ((err = vattrs_decode(disk, dlen, &x, &bad_at))) {
		if (err == -EUCLEAN)
			err = vol_error(vol, err, TUX3_NONE, inum, bad_at,
					"inode %" PRIu64 ": attribute blob "
					"damaged at byte %u", inum, bad_at);
		goto out;
	}
	if (plan)
		err = vattrs_delete(vol->vt, plan, &x);
	else
		vattrs_repair(vol->vt, &x);
	if (err || (err = put_dropped_atoms(vol, disk, dlen, &x)))
		goto out;
	/* the data tree's lists (the root is one shared attribute) */
	struct inode data = { .inum = inum };
	const struct vattr *t = vattrs_get(vol->vt, &x, VERSION_ORIGIN,
					   VATTR_KEY(ATTR_DATA_BTREE, 0));
	if (t && t->len == 8)
		data.dtree = be64(t->data);
	if (data.dtree && vfilemap_is_versioned(vol, &data)) {
		uint64_t before = data.dtree;
		err = plan ? vfilemap_delete(vol, &data, vol->vt, plan) :
			     vfilemap_repair(vol, &data, vol->vt);
		if (err)
			goto out;
		if (data.dtree != before) {
			uint8_t root[8];
			put_be64(root, data.dtree);
			err = vattrs_set_shared(&x, VATTR_KEY(ATTR_DATA_BTREE,
				0), data.dtree ? root : NULL, 8);
			if (err)
				goto out;
		}
	}
	tux3_clear_error(vol);
	if (!vattrs_inode_live(vol->vt, &x)) {
		err = drop_inode(vol, &x, &data);
		goto out;
	}
	unsigned cap = dlen + 64;
	if (!(buf = malloc(cap))) {
		err = -ENOMEM;
		goto out;
	}
	int n = vattrs_encode(&x, buf, cap);
	if (n < 0)
		err = n;
	else if ((unsigned)n != dlen || memcmp(buf, disk, dlen))
		err = itree_store(vol, inum, buf, (unsigned)n);
out:
	vattrs_free(&x);
	free(disk);
	free(buf);
	return err;
}


int vinode_apply_delete(struct tux3_volume *vol, tux3_ino_t inum,
			const struct vdelete_plan *plan)
{
	return rework(vol, inum, plan);
}

int vinode_repair(struct tux3_volume *vol, tux3_ino_t inum)
{
	return rework(vol, inum, NULL);
}

int vinode_drop_atom(struct tux3_volume *vol, tux3_ino_t inum, unsigned atom)
{
	struct vattrs x = { 0 };
	uint8_t *disk = NULL, *buf = NULL;
	unsigned dlen = 0, bad_at = 0, k = 0;
	uint32_t key = VATTR_KEY(ATTR_XATTR, atom);
	int err = vblob_read(vol, inum, &disk, &dlen);
	if (err || !dlen)
		goto out;
	if ((err = vattrs_decode(disk, dlen, &x, &bad_at))) {
		if (err == -EUCLEAN)
			err = vol_error(vol, err, TUX3_NONE, inum, bad_at,
					"inode %" PRIu64 ": attribute blob "
					"damaged at byte %u", inum, bad_at);
		goto out;
	}
	/* every version's element of the key, ABSENT markers included:
	 * the atom names nothing, so no version can keep a value of it
	 * (and the table holds no reference of it to give back) */
	for (unsigned i = 0; i < x.n; i++) {
		if (x.a[i].key == key)
			free(x.a[i].data);
		else
			x.a[k++] = x.a[i];
	}
	if (k == x.n)
		goto out;
	x.n = k;
	if (!(buf = malloc(dlen + 64))) {
		err = -ENOMEM;
		goto out;
	}
	int n = vattrs_encode(&x, buf, dlen + 64);
	err = n < 0 ? n : itree_store(vol, inum, buf, (unsigned)n);
out:
	vattrs_free(&x);
	free(disk);
	free(buf);
	return err;
}

/* ---- a version's view stored back into every version's blob ---- */

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
	if (!err && (err = vinode_decode(vol, inum, disk, dlen, &x)) == 0)
		err = vinode_decode(vol, inum, disk, dlen, &before);
	if (!err && dlen) {
		err = vinode_project(vol, inum, &x, label, &old, &oldlen);
		if (err == -ENOENT)
			err = 0;	/* created in this version */
	}
	if (!err && old)
		err = vinode_decode(vol, inum, old, oldlen, &oldv);
	if (!err)
		err = vinode_decode(vol, inum, view, vlen, &newv);
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
	if (!err && *olen > vol->blocksize - ILEAF_HEADER - 2 + VSPILL_MAX)
		err = vol_error(vol, -ENOSPC, TUX3_NONE, inum, TUX3_NONE,
				"inode %" PRIu64 ": the attributes of all its "
				"versions would take %u bytes, more than an "
				"inode may have (%u): delete a snapshot first",
				inum, *olen, vol->blocksize - ILEAF_HEADER - 2
				+ VSPILL_MAX);
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

/* The atoms of every XATTR attribute left in a blob no version reads:
 * their references go with the blob. */
int vinode_release_atoms(struct tux3_volume *vol, tux3_ino_t inum,
			 const uint8_t *disk, unsigned dlen)
{
	struct vattrs x;
	int err = vinode_decode(vol, inum, disk, dlen, &x);
	for (unsigned i = 0; i < x.n && !err; i++)
		if (x.a[i].key >> 16 == ATTR_XATTR && !x.a[i].absent)
			err = atom_put(vol, x.a[i].key & 0xffff);
	vattrs_free(&x);
	return err;
}

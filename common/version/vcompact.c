/*
 * One inode back to the 2014 form (doc/format.md 17.8): on a volume whose
 * version table holds the live version alone, every element is the
 * origin's, so the versioned forms say nothing the 2014 ones cannot.  The
 * vleaf tree becomes the 2014 map (a direct extent or dleaves) of the
 * same blocks, and the blob becomes the live version's projection.  The
 * data blocks stay where they are: only the tree's nodes and the blob
 * change.
 *
 * An element of another label here means the lists were not processed
 * (fsck's business): the inode is refused, nothing of it changed, so that
 * a compaction never drops what a version could still read.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "version/vinode.h"
#include "version/version.h"
#include "version/vleaf.h"
#include "version/vfilemap.h"

#define KEY_DTREE	VATTR_KEY(ATTR_DATA_BTREE, 0)
#define KEY_MODE	VATTR_KEY(ATTR_MODE_OWNER, 0)

struct runs {
	struct vextent *r;	/* label-0 mapped runs, merged, in order */
	size_t n, cap;
	uint64_t foreign_block;	/* a leaf with another label's record */
	unsigned foreign_label;
};

static int runs_add(struct runs *l, const struct vextent *e)
{
	if (l->n) {
		struct vextent *last = &l->r[l->n - 1];
		if (last->logical + last->count == e->logical &&
		    last->phys + last->count == e->phys &&
		    (uint64_t)last->count + e->count <= UINT32_MAX) {
			last->count += e->count;
			return 0;
		}
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		void *p = realloc(l->r, cap * sizeof(*l->r));
		if (!p)
			return -ENOMEM;
		l->r = p;
		l->cap = cap;
	}
	l->r[l->n++] = *e;
	return 0;
}

static int collect_leaf(void *ctx, struct btree *bt, uint64_t blocknr,
			const uint8_t *buf, uint64_t lo, uint64_t hi)
{
	struct runs *l = ctx;
	int err = 0;
	(void)bt; (void)lo; (void)hi;
	for (unsigned i = 0; i < vleaf_count(buf) && !err; i++) {
		struct vextent r;
		vleaf_get(buf, i, &r);
		if (r.label != VERSION_ORIGIN || (r.flags & VEXT_ELIST)) {
			l->foreign_block = blocknr;
			l->foreign_label = r.label;
			return -EUCLEAN;
		}
		if (r.phys)
			err = runs_add(l, &r);
	}
	return err;
}

int vfilemap_flatten(struct tux3_volume *vol, struct inode *inode,
		     uint64_t *flattened)
{
	enum vfilemap_kind kind;
	int err = vfilemap_kind(vol, inode, &kind);
	if (err || kind != VFM_VLEAF)
		return err;
	static const struct btree_visit visit = { .leaf = collect_leaf };
	struct btree bt = vfilemap_tree(vol, inode, &vdtree_ops);
	struct runs l = { 0 };
	err = btree_traverse(&bt, &visit, &l);
	if (err == -EUCLEAN && l.foreign_block)
		err = vol_error(vol, err, l.foreign_block, inode->inum,
				TUX3_NONE, "inode %" PRIu64 ": an element of "
				"label %u remains (run fsck.tux3)",
				inode->inum, l.foreign_label);
	/* the nodes go, the data blocks are mapped again as they are */
	if (!err)
		err = btree_free_nodes(&bt);
	if (!err) {
		*flattened = 1;
		inode->dtree = 0;
	}
	for (size_t i = 0; i < l.n && !err; i++)
		err = filemap_set(vol, inode, l.r[i].logical, l.r[i].phys,
				  l.r[i].count);
	/* a map half made must never be committed */
	if (err && *flattened)
		vol->commit_failed = true;
	free(l.r);
	return err;
}

/* Every attribute the origin's: anything else is refused. */
static int only_origin(struct tux3_volume *vol, tux3_ino_t inum,
		       const struct vattrs *x)
{
	for (unsigned i = 0; i < x->n; i++)
		if (x->a[i].label != VERSION_ORIGIN)
			return vol_error(vol, -EUCLEAN, TUX3_NONE, inum,
					 TUX3_NONE, "inode %" PRIu64 ": an "
					 "attribute of label %u remains (run "
					 "fsck.tux3)", inum, x->a[i].label);
	return 0;
}

int vinode_compact(struct tux3_volume *vol, tux3_ino_t inum,
		   struct vcompact_count *count)
{
	uint8_t *disk = NULL, *view = NULL;
	unsigned dlen, vlen;
	bool data_changed = false;
	struct vattrs x = { 0 };
	int err = vblob_read(vol, inum, &disk, &dlen);
	if (err || !dlen)
		goto out;
	if ((err = vinode_decode(vol, inum, disk, dlen, &x)) ||
	    (err = only_origin(vol, inum, &x)))
		goto out;
	if (!vattrs_get(vol->vt, &x, VERSION_ORIGIN, KEY_MODE)) {
		err = vol_error(vol, -EUCLEAN, TUX3_NONE, inum, TUX3_NONE,
				"inode %" PRIu64 ": the live version does not "
				"have it, yet no snapshot does (run "
				"fsck.tux3)", inum);
		goto out;
	}
	struct inode data = { .inum = inum };
	const struct vattr *t = vattrs_get(vol->vt, &x, VERSION_ORIGIN,
					   KEY_DTREE);
	if (t && t->len == 8)
		data.dtree = be64(t->data);
	uint64_t before = data.dtree, leaves = 0;
	if (data.dtree)
		err = vfilemap_flatten(vol, &data, &leaves);
	/* the data changed: from here every error is fatal */
	data_changed = leaves != 0;
	if (err)
		goto out;
	count->files += leaves;
	if (data.dtree != before) {
		uint8_t root[8];
		put_be64(root, data.dtree);
		if ((err = vattrs_set_shared(&x, KEY_DTREE, data.dtree ?
					     root : NULL, 8)))
			goto out;
	}
	if ((err = vinode_project(vol, inum, &x, VERSION_ORIGIN, &view,
				  &vlen)))
		goto out;
	if (vlen != dlen || memcmp(view, disk, dlen)) {
		err = itree_store(vol, inum, view, vlen);
		count->blobs++;
	}
out:
	if (err && data_changed)
		vol->commit_failed = true;	/* the blob must follow */
	vattrs_free(&x);
	free(disk);
	free(view);
	return err;
}

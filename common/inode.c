/*
 * Loading an inode: find its blob in the inode table, copy it, and decode
 * its attributes into struct inode with every field checked.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "core.h"

struct decode_state {
	struct inode *inode;
	unsigned cap;
};

static uint64_t max_file_bytes(const struct tux3_volume *vol)
{
	/* blocksize << 48, capped to what an off_t can hold */
	return vol->blockbits + 48 >= 63 ? (uint64_t)INT64_MAX :
	       1ULL << (vol->blockbits + 48);
}

static int check_dtree_root(struct tux3_volume *vol, struct inode *inode,
			    uint64_t packed, unsigned off)
{
	struct root r = root_unpack(packed);
	if (!packed)
		return 0;
	if (r.direct) {
		if (!r.count || !vol_extent_valid(vol, r.block, r.count) ||
		    r.block < vol->reserved_blocks)
			return vol_error(vol, -EUCLEAN, inode->leafblock,
					 inode->inum, off, "inode %" PRIu64
					 ": direct extent %" PRIu64 "+%u "
					 "outside the volume", inode->inum,
					 r.block, r.count);
		return 0;
	}
	if (r.depth < 1 || r.depth > TUX3_MAX_DEPTH ||
	    r.block < vol->reserved_blocks || r.block >= vol->volblocks)
		return vol_error(vol, -EUCLEAN, inode->leafblock, inode->inum,
				 off, "inode %" PRIu64 ": data tree root "
				 "0x%016" PRIx64 " invalid (depth %u, block %"
				 PRIu64 ")", inode->inum, packed, r.depth,
				 r.block);
	return 0;
}

static int decode_one(struct tux3_volume *vol, void *ctx,
		      const struct attr_info *a)
{
	struct decode_state *st = ctx;
	struct inode *inode = st->inode;
	const uint8_t *p = a->payload;

	if (a->version || a->kind == VATTR_ABSENT || a->kind == VATTR_SPILL)
		return 0;	/* another version's attribute: not ours */
	if (iattr_kind_fixed(a->kind)) {
		if (inode->present & (1u << a->kind))
			return vol_error(vol, -EUCLEAN, inode->leafblock,
					 inode->inum, a->offset, "inode %"
					 PRIu64 ": duplicate %s attribute",
					 inode->inum, iattr_kind_name(a->kind));
		inode->present |= 1u << a->kind;
	}
	switch (a->kind) {
	case ATTR_RDEV:
		inode->rdev = be64(p);
		break;
	case ATTR_MODE_OWNER:
		inode->mode = be32(p);
		inode->uid = be32(p + 4);
		inode->gid = be32(p + 8);
		break;
	case ATTR_DATA_BTREE:
		inode->dtree = be64(p);
		return check_dtree_root(vol, inode, inode->dtree, a->offset);
	case ATTR_CTIME_SIZE:
		inode->ctime = (int64_t)be64(p);
		inode->size = be64(p + 8);
		if (inode->size > max_file_bytes(vol))
			return vol_error(vol, -EUCLEAN, inode->leafblock,
					 inode->inum, a->offset, "inode %"
					 PRIu64 ": size %" PRIu64 " exceeds the "
					 "format's maximum", inode->inum,
					 inode->size);
		break;
	case ATTR_LINK_COUNT:
		inode->nlink = be32(p);
		break;
	case ATTR_MTIME:
		inode->mtime = (int64_t)be64(p);
		break;
	case ATTR_ATIME:
		if (!atime_marked(vol))
			return vol_error(vol, -EUCLEAN, inode->leafblock,
					 inode->inum, a->offset, "inode %"
					 PRIu64 ": ATIME attribute at blob "
					 "offset %u on a volume without the "
					 "atime feature", inode->inum,
					 a->offset);
		inode->atime = (int64_t)be64(p);
		break;
	case ATTR_IDATA:
		break;	/* declared by the format, never written */
	case ATTR_XATTR: {
		if (a->paylen < 4)
			return vol_error(vol, -EUCLEAN, inode->leafblock,
					 inode->inum, a->offset, "inode %"
					 PRIu64 ": xattr record too short",
					 inode->inum);
		if (inode->nxattr == st->cap) {
			unsigned ncap = st->cap ? st->cap * 2 : 8;
			struct xattr_ref *n = realloc(inode->xattrs,
						      ncap * sizeof(*n));
			if (!n)
				return -ENOMEM;
			inode->xattrs = n;
			st->cap = ncap;
		}
		struct xattr_ref *x = &inode->xattrs[inode->nxattr++];
		x->atom = be16(p + 2);
		x->offset = a->offset + 6;
		x->size = a->paylen - 4;
		break;
	}
	}
	return 0;
}

int inode_from_blob(struct tux3_volume *vol, tux3_ino_t inum,
		    const uint8_t *blob, unsigned len, uint64_t leafblock,
		    struct inode *inode)
{
	struct decode_state st = { .inode = inode };
	memset(inode, 0, sizeof(*inode));
	inode->inum = inum;
	inode->leafblock = leafblock;
	if (!len)
		return vol_error(vol, -ENOENT, leafblock, inum, TUX3_NONE,
				 "inode %" PRIu64 " does not exist", inum);
	inode->blob = malloc(len);
	if (!inode->blob)
		return -ENOMEM;
	memcpy(inode->blob, blob, len);
	inode->bloblen = len;
	int err = iattr_decode(vol, inode, decode_one, &st);
	if (err) {
		inode_free(inode);
		return err < 0 ? err : -EUCLEAN;
	}
	inode->orphan = orphan_has(&vol->orphans, inum);
	if (inode->orphan && !inode->nlink)
		inode->nlink = 1;	/* as the reference loads orphans */
	return 0;
}

int inode_load(struct tux3_volume *vol, tux3_ino_t inum, struct inode *inode)
{
	struct btree bt = { .vol = vol, .root = vol->iroot, .ops = &itree_ops };
	struct cursor c = { 0 };
	const uint8_t *blob;
	unsigned len;

	vol->inode_loads++;
	memset(inode, 0, sizeof(*inode));
	if (!inum || inum >= TUX3_KEY_LIMIT)
		return vol_error(vol, -ENOENT, TUX3_NONE, inum, TUX3_NONE,
				 "inode %" PRIu64 " is not a valid inode "
				 "number", inum);
	int err = btree_probe(&bt, inum, &c);
	if (!err) {
		ileaf_blob(cursor_leaf(&c), vol->blocksize, inum, &blob, &len);
		if (len && vinode_applies(vol, inum)) {
			/* the selected version's attributes */
			uint8_t *view = NULL;
			unsigned vlen = 0;
			err = vol->vops->view(vol, inum, blob, len, &view,
					      &vlen);
			if (!err)
				err = inode_from_blob(vol, inum, view, vlen,
						      cursor_leaf_block(&c),
						      inode);
			free(view);
		} else {
			err = inode_from_blob(vol, inum, blob, len,
					      cursor_leaf_block(&c), inode);
		}
	}
	cursor_release(&c);
	return err;
}

/*
 * inode_load for a damaged inode table (fsck's salvage of the state
 * after replay): the index nodes on the way down are trusted only for
 * the entry followed (magic, a count within the block, a child inside
 * the volume, else the nearest entry before it with one), so that
 * damage elsewhere in a node, which the probe refuses whole, does not
 * hide this inode.  So is the leaf: its
 * dictionary up to this inode (ileaf_check_prefix), so that damage in
 * the entries of later inodes does not hide it either.  No version
 * view: for the internal inodes.
 */
int inode_load_salvage(struct tux3_volume *vol, tux3_ino_t inum,
		       struct inode *inode)
{
	uint64_t block = vol->iroot.block;
	const uint8_t *blob;
	unsigned len;
	int err;

	memset(inode, 0, sizeof(*inode));
	if (!inum || inum >= TUX3_KEY_LIMIT || !vol->iroot.depth ||
	    vol->iroot.depth > TUX3_MAX_DEPTH)
		return vol_error(vol, -EUCLEAN, TUX3_NONE, inum, TUX3_NONE,
				 "inode %" PRIu64 ": no inode table to find "
				 "it in", inum);
	uint8_t *buf = malloc(vol->blocksize);
	if (!buf)
		return -ENOMEM;
	for (unsigned level = 0; level + 1 < vol->iroot.depth; level++) {
		if ((err = vol_read_block(vol, block, buf)))
			goto out;
		unsigned count = bnode_count(buf);
		if (be16(buf) != TUX3_MAGIC_BNODE || !count ||
		    count > bnode_capacity(vol->blocksize)) {
			err = vol_error(vol, -EUCLEAN, block, inum, TUX3_NONE,
					"bnode: not an index node on the way to "
					"inode %" PRIu64, inum);
			goto out;
		}
		/* an entry whose child lies outside the volume holds
		 * nothing: the one before it covers its range (pass 3
		 * drops it so) */
		unsigned at = bnode_lookup(buf, inum);
		uint64_t child = bnode_child(buf, at);
		while (at && !vol_node_child_valid(vol, child))
			child = bnode_child(buf, --at);
		if (!vol_node_child_valid(vol, child)) {
			err = vol_error(vol, -EUCLEAN, block, inum, TUX3_NONE,
					"bnode: the entry for inode %" PRIu64
					" points outside the volume", inum);
			goto out;
		}
		block = child;
	}
	if ((err = vol_read_block(vol, block, buf)) ||
	    (err = ileaf_check_prefix(vol, buf, block, inum)))
		goto out;
	ileaf_blob(buf, vol->blocksize, inum, &blob, &len);
	if (!len) {
		err = vol_error(vol, -ENOENT, block, inum, TUX3_NONE,
				"inode %" PRIu64 " is not in its leaf", inum);
		goto out;
	}
	err = inode_from_blob(vol, inum, blob, len, block, inode);
out:
	free(buf);
	return err;
}

int itree_blob(struct tux3_volume *vol, tux3_ino_t inum, uint8_t **blobp,
	       unsigned *lenp)
{
	struct btree bt = { .vol = vol, .root = vol->iroot, .ops = &itree_ops };
	struct cursor c = { 0 };
	const uint8_t *blob;
	unsigned len = 0;

	*blobp = NULL;
	*lenp = 0;
	int err = btree_probe(&bt, inum, &c);
	if (!err) {
		ileaf_blob(cursor_leaf(&c), vol->blocksize, inum, &blob, &len);
		if (len && !(*blobp = malloc(len)))
			err = -ENOMEM;
		else if (len)
			memcpy(*blobp, blob, len);
		*lenp = len;
	}
	cursor_release(&c);
	return err;
}

void inode_free(struct inode *inode)
{
	free(inode->blob);
	free(inode->xattrs);
	inode->blob = NULL;
	inode->xattrs = NULL;
	inode->nxattr = 0;
}

unsigned inode_dtype(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return TUX3_DT_REG;
	case S_IFDIR: return TUX3_DT_DIR;
	case S_IFCHR: return TUX3_DT_CHR;
	case S_IFBLK: return TUX3_DT_BLK;
	case S_IFIFO: return TUX3_DT_FIFO;
	case S_IFSOCK: return TUX3_DT_SOCK;
	case S_IFLNK: return TUX3_DT_LNK;
	}
	return TUX3_DT_UNKNOWN;
}

/* A directory's inode loaded; -ENOTDIR (nothing held) for another kind. */
int inode_load_dir(struct tux3_volume *vol, tux3_ino_t ino, struct inode *dir)
{
	int err = inode_load(vol, ino, dir);
	if (!err && !S_ISDIR(dir->mode)) {
		inode_free(dir);
		err = -ENOTDIR;
	}
	return err;
}

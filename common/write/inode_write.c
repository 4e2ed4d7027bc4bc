/*
 * Writing inodes: encode the attribute blob and store it in the inode
 * table (copy-on-write through btree_edit.c), allocate inode numbers.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "write/write.h"

/* The atime feature (format.md 15.6): every writer that sets an atime
 * comes here, and without the feature nothing is stored. */
void inode_atime_set(const struct tux3_volume *vol, struct inode *inode,
		     int64_t atime_ns)
{
	if (!atime_enabled(vol))
		return;
	inode->present |= 1u << ATTR_ATIME;
	inode->atime = atime_ns;
}

/* The blob of an inode: fixed attributes, then one XATTR per xattr. */
int inode_encode(const struct inode *inode, uint8_t *buf, unsigned cap,
		 unsigned *len)
{
	unsigned n = 0, need = IATTR_FIXED_MAX;
	for (unsigned i = 0; i < inode->nxattr; i++)
		need += 6 + inode->xattrs[i].size;
	if (need > cap)
		return -ENOSPC;
	n = iattr_encode_fixed(buf, inode);
	for (unsigned i = 0; i < inode->nxattr; i++) {
		const struct xattr_ref *x = &inode->xattrs[i];
		n += iattr_encode_xattr(buf + n, x->atom, inode->blob + x->offset,
					x->size);
	}
	*len = n;
	return 0;
}

/*
 * A leaf whose ibase is above inum (the reference trims leading empty
 * slots) is rebuilt with ibase = inum so the slot exists.
 */
int ileaf_rebase_to(struct tux3_volume *vol, uint8_t *leaf, uint64_t inum)
{
	unsigned bs = vol->blocksize;
	uint8_t *tmp = malloc(bs);
	uint64_t ibase = ileaf_ibase(leaf);
	unsigned count = ileaf_count(leaf);
	int err = 0;

	if (!tmp)
		return -ENOMEM;
	ileaf_init(tmp, bs, be16(leaf), inum);
	for (unsigned k = 0; k < count && !err; k++) {
		const uint8_t *blob;
		unsigned len;
		ileaf_blob(leaf, bs, ibase + k, &blob, &len);
		if (len)
			err = ileaf_set_blob(tmp, bs, ibase + k, blob, len);
	}
	if (!err)
		memcpy(leaf, tmp, bs);
	free(tmp);
	return err;
}

static int itree_leaf_split_off(struct tux3_volume *vol, uint8_t *leaf,
				uint8_t *newleaf, uint64_t *sep)
{
	return ileaf_split_off(leaf, newleaf, vol->blocksize, sep);
}

/*
 * Store (len > 0) or delete (len 0) inum's blob in a tree of ileaves (the
 * inode table, the orphan table), whose root is *home.  The leaf the
 * probe finds covers inum in its key range, and its ibase may be anywhere
 * in that range, so:
 *  - inum below the ibase: the leaf is rebuilt from inum when its inodes
 *    stay within the dictionary's reach, else they move to a leaf of
 *    their own (split off), which leaves this one empty;
 *  - an empty leaf whose dictionary does not reach inum is rebuilt from
 *    inum: splitting a leaf without inodes cannot make room;
 *  - a leaf with inodes whose dictionary does not reach inum (a sparse
 *    tree: the orphan table's inums are scattered) gives the range from
 *    inum up to a new empty leaf: splitting its inodes in halves would
 *    not bring the dictionary any nearer.
 * A full leaf splits as its tree's ops say.
 */
#define ITABLE_TRIES 8

int itable_set(struct tux3_volume *vol, struct btree *bt, struct root *home,
	       uint64_t inum, const uint8_t *blob, unsigned len)
{
	int err = 0;

	for (int tries = 0; tries < ITABLE_TRIES; tries++) {
		struct wpath p;
		bool moved;
		err = btree_wprobe(bt, inum, &p, &moved);
		if (moved) {
			*home = bt->root;
			vol->super_dirty = true;
		}
		if (err)
			return err;
		uint8_t *leaf = wpath_leaf(vol, &p);
		err = ileaf_set_blob(leaf, vol->blocksize, inum, blob, len);
		if (len && (err == -ERANGE ||
			    (err == -ENOSPC && ileaf_empty(leaf, vol->blocksize)))) {
			int e = ileaf_rebase_to(vol, leaf, inum);
			if (e && e != -ENOSPC)
				return e;
			err = e ? -ERANGE : ileaf_set_blob(leaf, vol->blocksize,
							   inum, blob, len);
		}
		if (!len || (err != -ENOSPC && err != -ERANGE))
			return err;
		if (err == -ERANGE)
			err = btree_split_leaf_by(bt, &p, itree_leaf_split_off,
						  &moved);
		else if (!ileaf_reaches(leaf, vol->blocksize, inum))
			err = btree_split_leaf_at(bt, &p, inum, &moved);
		else
			err = btree_split_leaf(bt, &p, &moved);
		if (moved) {
			*home = bt->root;
			vol->super_dirty = true;
		}
		if (err)
			return err;
	}
	/* every try split and still no room: refused, never claimed */
	return vol_error(vol, -ENOSPC, TUX3_NONE, inum, TUX3_NONE,
			 "%s: no room for inode %" PRIu64 " after %d splits",
			 bt->ops->name, inum, ITABLE_TRIES);
}

static int itree_set(struct tux3_volume *vol, uint64_t inum,
		     const uint8_t *blob, unsigned len)
{
	struct btree bt = { .vol = vol, .root = vol->iroot, .ops = &itree_ops };
	return itable_set(vol, &bt, &vol->iroot, inum, blob, len);
}

/* Room for the encoder's worst case; the leaf decides what fits.  The
 * volume keeps one such buffer: a bulk load stores an inode per file,
 * and a fresh allocation of more than a block each time cost it a
 * twentieth of its time in malloc's search of its free lists.  A store
 * made while another is under way (none is, today) gets its own. */
static uint8_t *encode_buf_get(struct tux3_volume *vol, unsigned cap)
{
	if (vol->encode_busy)
		return malloc(cap);
	if (!vol->encode_buf && !(vol->encode_buf = malloc(cap)))
		return NULL;
	vol->encode_busy = true;
	return vol->encode_buf;
}

static void encode_buf_put(struct tux3_volume *vol, uint8_t *buf)
{
	if (buf == vol->encode_buf)
		vol->encode_busy = false;
	else
		free(buf);
}

int inode_store(struct tux3_volume *vol, struct inode *inode)
{
	unsigned cap = vol->blocksize + IATTR_FIXED_MAX;
	uint8_t *buf = encode_buf_get(vol, cap);
	unsigned len;
	if (!buf)
		return -ENOMEM;
	/* an inode loaded without CTIME_SIZE (a damaged one; the format
	 * gives every inode one) keeps the size a write gave it */
	if (inode->size || inode->ctime)
		inode->present |= 1u << ATTR_CTIME_SIZE;
	int err = inode_encode(inode, buf, cap, &len);
	if (!err && len > vol->blocksize - ILEAF_HEADER - 2)
		err = -E2BIG;
	if (!err && vinode_applies(vol, inode->inum)) {
		/* the version's view, merged into every version's blob */
		uint8_t *disk = NULL, *merged = NULL;
		unsigned dlen = 0, mlen = 0;
		err = vol->vops->blob_read(vol, inode->inum, &disk, &dlen);
		if (!err)
			err = vol->vops->merge(vol, inode->inum, disk, dlen,
						buf, len, &merged, &mlen);
		if (!err)
			err = vol->vops->blob_store(vol, inode->inum, merged,
						    mlen);
		free(disk);
		free(merged);
	} else if (!err) {
		err = itree_set(vol, inode->inum, buf, len);
	}
	if (!err) {
		/* the inode's blob is now what we encoded */
		uint8_t *nb = realloc(inode->blob, len ? len : 1);
		if (!nb) {
			err = -ENOMEM;
		} else {
			unsigned off = iattr_encode_fixed(nb, inode);
			memcpy(nb, buf, len);
			inode->blob = nb;
			inode->bloblen = len;
			for (unsigned i = 0; i < inode->nxattr; i++) {
				inode->xattrs[i].offset = off + 6;
				off += 6 + inode->xattrs[i].size;
			}
		}
	}
	encode_buf_put(vol, buf);
	return err;
}

int itree_store(struct tux3_volume *vol, uint64_t inum, const uint8_t *blob,
		unsigned len)
{
	if (vinode_applies(vol, inum))
		return vol->vops->blob_store(vol, inum, blob, len);
	return itree_set(vol, inum, blob, len);
}

int itree_store_leaf(struct tux3_volume *vol, uint64_t inum,
		     const uint8_t *blob, unsigned len)
{
	return itree_set(vol, inum, blob, len);
}

int inode_delete(struct tux3_volume *vol, uint64_t inum)
{
	return itree_store(vol, inum, NULL, 0);
}

/* A free inode number at or after goal (never below the normal range). */
int inum_alloc(struct tux3_volume *vol, uint64_t goal, uint64_t *inum)
{
	struct btree bt = { .vol = vol, .root = vol->iroot, .ops = &itree_ops };
	if (goal < TUX3_NORMAL_INO)
		goal = TUX3_NORMAL_INO;
	/* inodes made one after another (mkfs -d, untar) go one after
	 * another: start past the last one handed out rather than rescan
	 * the full leaves below it each time */
	if (vol->inum_hint > goal)
		goal = vol->inum_hint;
	while (goal < TUX3_KEY_LIMIT) {
		struct cursor c = { 0 };
		uint64_t lo, hi;
		int err = btree_probe(&bt, goal, &c);
		if (err) {
			cursor_release(&c);
			return err;
		}
		cursor_leaf_range(&c, &lo, &hi);
		err = ileaf_find_free_inum(cursor_leaf(&c), vol->blocksize,
					   goal, hi, inum);
		cursor_release(&c);
		if (!err) {
			vol->inum_hint = *inum + 1;
			vol->super.usedinodes++;
			vol->super_dirty = true;
			return 0;
		}
		if (err != -ENOENT)
			return err;
		goal = hi;
	}
	return -ENOSPC;
}

int tux3_setattr(struct tux3_volume *vol, tux3_ino_t ino,
		 const struct tux3_setattr *sa)
{
	struct inode inode;
	int err;

	if ((err = change_begin(vol)))
		return err;
	if ((err = inode_load(vol, ino, &inode)))
		return err;
	if (sa->valid & TUX3_SET_MODE)
		inode.mode = (inode.mode & S_IFMT) | (sa->mode & 07777);
	if (sa->valid & TUX3_SET_UID)
		inode.uid = sa->uid;
	if (sa->valid & TUX3_SET_GID)
		inode.gid = sa->gid;
	if (sa->valid & TUX3_SET_MTIME)
		inode.mtime = sa->mtime_ns;
	if (sa->valid & TUX3_SET_ATIME)
		inode_atime_set(vol, &inode, sa->atime_ns);
	if (sa->valid & TUX3_SET_SIZE) {
		if (!S_ISREG(inode.mode))
			err = -EINVAL;
		else
			err = inode_truncate(vol, &inode, sa->size);
	}
	inode.ctime = sa->valid & TUX3_SET_CTIME ? sa->ctime_ns : vol_now(vol);
	if (!err)
		err = inode_store(vol, &inode);
	inode_free(&inode);
	return err;
}

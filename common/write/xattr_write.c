/*
 * Extended attributes changed: set and remove rebuild the inode's XATTR
 * attributes and store it, taking and dropping atom references; an inode
 * that goes gives all of its references back.  Reading them is xattr.c's.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "write/write.h"

/* Largest blob an inode may have: it must fit an otherwise empty leaf. */
static unsigned blob_limit(const struct tux3_volume *vol)
{
	return vol->blocksize - ILEAF_HEADER - 2;
}

static int xattr_index(const struct inode *inode, unsigned atom)
{
	for (unsigned i = 0; i < inode->nxattr; i++)
		if (inode->xattrs[i].atom == atom)
			return (int)i;
	return -1;
}

/* Replace the inode's xattr list: rebuild the blob with x[i] changed. */
static int xattr_rebuild(struct tux3_volume *vol, struct inode *inode,
			 int index, unsigned atom, const void *value,
			 unsigned size, bool remove)
{
	unsigned n = inode->nxattr, cap = n + 1;
	struct xattr_ref *nx = calloc(cap, sizeof(*nx));
	uint8_t *nb = malloc(vol->blocksize * 2);
	unsigned len = 0, k = 0;
	if (!nx || !nb) {
		free(nx);
		free(nb);
		return -ENOMEM;
	}
	/* values are copied into a scratch blob; offsets point there */
	for (unsigned i = 0; i < n; i++) {
		if ((int)i == index)
			continue;
		nx[k] = inode->xattrs[i];
		memcpy(nb + len, inode->blob + nx[k].offset, nx[k].size);
		nx[k].offset = len;
		len += nx[k].size;
		k++;
	}
	if (!remove) {
		nx[k] = (struct xattr_ref){ atom, len, size };
		memcpy(nb + len, value, size);
		len += size;
		k++;
	}
	free(inode->xattrs);
	free(inode->blob);
	inode->xattrs = nx;
	inode->nxattr = k;
	inode->blob = nb;
	inode->bloblen = len;
	uint8_t *probe = malloc(vol->blocksize * 2);
	unsigned bloblen;
	int err = probe ? inode_encode(inode, probe, vol->blocksize * 2,
				       &bloblen) : -ENOMEM;
	if (!err && bloblen > blob_limit(vol))
		err = -E2BIG;
	free(probe);
	return err;
}

int tux3_setxattr(struct tux3_volume *vol, tux3_ino_t ino, const char *name,
		  const void *value, size_t size, int flags)
{
	struct inode inode;
	unsigned atom;
	int err;

	if ((err = vol_writable(vol)))
		return err;
	if (!*name)
		return -EINVAL;
	if (strlen(name) > ATOM_NAME_MAX)
		return -ERANGE;
	if (size > vol->blocksize)
		return -E2BIG;
	if ((err = inode_load(vol, ino, &inode)))
		return err;
	int have = -1;
	if (!atom_find(vol, name, &atom))
		have = xattr_index(&inode, atom);
	tux3_clear_error(vol);
	if (have >= 0 && (flags & TUX3_XATTR_CREATE))
		err = -EEXIST;
	else if (have < 0 && (flags & TUX3_XATTR_REPLACE))
		err = -ENODATA;
	if (!err && have < 0)
		err = atom_get(vol, name, &atom);
	if (!err) {
		err = xattr_rebuild(vol, &inode, have, atom, value,
				    (unsigned)size, false);
		if (err == -E2BIG && have < 0)
			atom_put(vol, atom);	/* undo the new reference */
	}
	if (!err) {
		inode.ctime = vol_now(vol);
		err = inode_store(vol, &inode);
		if (err && have < 0)
			atom_put(vol, atom);	/* nothing took it */
	}
	inode_free(&inode);
	return err;
}

int tux3_removexattr(struct tux3_volume *vol, tux3_ino_t ino,
		     const char *name)
{
	struct inode inode;
	unsigned atom;
	int err;

	if ((err = vol_writable(vol)))
		return err;
	if ((err = inode_load(vol, ino, &inode)))
		return err;
	int have = atom_find(vol, name, &atom) ? -1 : xattr_index(&inode, atom);
	tux3_clear_error(vol);
	if (have < 0)
		err = -ENODATA;
	if (!err)
		err = xattr_rebuild(vol, &inode, have, 0, NULL, 0, true);
	if (!err) {
		/* stored before the reference goes: on a volume with
		 * versions, the store may hand the value to a snapshot,
		 * which keeps the reference (vinode.c) */
		inode.ctime = vol_now(vol);
		err = inode_store(vol, &inode);
	}
	if (!err)
		err = atom_put(vol, atom);
	inode_free(&inode);
	return err;
}

/* An inode going away gives back its atoms. */
int xattr_release_all(struct tux3_volume *vol, struct inode *inode)
{
	int err = 0;
	for (unsigned i = 0; i < inode->nxattr && !err; i++)
		err = atom_put(vol, inode->xattrs[i].atom);
	return err;
}

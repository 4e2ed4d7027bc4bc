/*
 * Extended attributes read: XATTR attributes in the inode blob ({be16
 * length, be16 atom, value}), names resolved through the atom table.
 * Changes are write/xattr_write.c's.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "core.h"

int tux3_listxattr(struct tux3_volume *vol, tux3_ino_t ino, tux3_xattr_fn fn,
		   void *ctx)
{
	struct inode inode;
	int err = inode_load(vol, ino, &inode);
	if (err)
		return err;
	for (unsigned i = 0; i < inode.nxattr && !err; i++) {
		struct xattr_ref *x = &inode.xattrs[i];
		const char *name = atom_name(vol, x->atom);
		if (!name) {
			if (!vol->error.err)
				vol_error(vol, -EUCLEAN, inode.leafblock, ino,
					  x->offset, "inode %" PRIu64 ": xattr "
					  "atom %u has no name in the atom "
					  "table", ino, x->atom);
			err = vol->error.err;
			break;
		}
		err = fn(ctx, name, inode.blob + x->offset, x->size);
	}
	inode_free(&inode);
	return err;
}

struct getx {
	const char *name;
	void *buf;
	size_t size;
	ssize_t result;
};

static int getx_one(void *ctx, const char *name, const void *value,
		    unsigned size)
{
	struct getx *g = ctx;
	if (strcmp(name, g->name))
		return 0;
	if (!g->size) {
		g->result = size;
	} else if (size > g->size) {
		g->result = -ERANGE;
	} else {
		memcpy(g->buf, value, size);
		g->result = size;
	}
	return 1;
}

ssize_t tux3_getxattr(struct tux3_volume *vol, tux3_ino_t ino,
		      const char *name, void *buf, size_t size)
{
	struct getx g = { name, buf, size, -ENODATA };
	int err = tux3_listxattr(vol, ino, getx_one, &g);
	if (err < 0)
		return err;
	return g.result;
}

/* ---- changing xattrs ---- */

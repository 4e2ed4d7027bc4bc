/*
 * Raw access for editors and printers (tux3debug, tux3image): blocks as
 * they are (or as replay rebuilt them), byte ranges of the device, and an
 * inode's attributes as stored.  The field tables that decode them are
 * format/fields.c's; raw writes are write/raw_write.c's.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "core.h"
#include "tux3_fields.h"

unsigned tux3_block_size(const struct tux3_volume *vol)
{
	return vol->blocksize;
}

int tux3_read_block(struct tux3_volume *vol, tux3_block_t block, void *buf,
		    int *replayed)
{
	bool dropped;
	if (replayed)
		*replayed = 0;
	if (block >= vol->volblocks)
		return vol_error(vol, -ERANGE, block, TUX3_NONE, TUX3_NONE,
				 "block %" PRIu64 " is outside the volume (%"
				 PRIu64 " blocks)", block, vol->volblocks);
	if (block >= vol->reserved_blocks &&
	    overlay_find(&vol->overlay, block, &dropped) && replayed)
		*replayed = 1;
	if (block >= vol->reserved_blocks)
		return vol_read_block(vol, block, buf);
	return vol_pread_block(vol, block, buf);
}

/* The byte range lies within the device. */
int raw_range(struct tux3_volume *vol, uint64_t offset, size_t len)
{
	if (offset > vol->dev.size || len > vol->dev.size - offset)
		return vol_error(vol, -ERANGE, TUX3_NONE, TUX3_NONE, offset,
				 "%zu bytes at byte %" PRIu64 " run past the "
				 "device end (%" PRIu64 " bytes)", len, offset,
				 vol->dev.size);
	return 0;
}

int tux3_read_raw(struct tux3_volume *vol, uint64_t offset, void *buf,
		  size_t len)
{
	int err = raw_range(vol, offset, len);
	if (!err && (err = dev_pread(&vol->dev, buf, len, offset)))
		return vol_error(vol, err, TUX3_NONE, TUX3_NONE, offset,
				 "cannot read: %s", strerror(-err));
	return err;
}

struct attrs_ctx {
	tux3_attr_raw_fn fn;
	void *ctx;
};

static int attr_adapter(struct tux3_volume *vol, void *ctx,
			const struct attr_info *a)
{
	struct attrs_ctx *c = ctx;
	struct tux3_attr_raw raw = {
		.kind = a->kind, .version = a->version, .offset = a->offset,
		.size = a->size, .name = iattr_name(vol, a->kind),
		.payload = a->payload, .paylen = a->paylen,
	};
	return c->fn(c->ctx, &raw);
}

int tux3_inode_attrs(struct tux3_volume *vol, tux3_ino_t ino,
		     tux3_block_t *leafblock, unsigned *bloblen,
		     tux3_attr_raw_fn fn, void *ctx)
{
	struct btree bt = { .vol = vol, .root = vol->iroot, .ops = &itree_ops };
	struct cursor c = { 0 };
	struct inode inode = { .inum = ino };
	const uint8_t *blob;
	unsigned len;

	if (!ino || ino >= TUX3_KEY_LIMIT)
		return vol_error(vol, -ENOENT, TUX3_NONE, ino, TUX3_NONE,
				 "inode %" PRIu64 " is not a valid inode "
				 "number", ino);
	int err = btree_probe(&bt, ino, &c);
	if (err) {
		cursor_release(&c);
		return err;
	}
	ileaf_blob(cursor_leaf(&c), vol->blocksize, ino, &blob, &len);
	inode.leafblock = cursor_leaf_block(&c);
	if (leafblock)
		*leafblock = inode.leafblock;
	if (bloblen)
		*bloblen = len;
	if (!len) {
		cursor_release(&c);
		return vol_error(vol, -ENOENT, inode.leafblock, ino, TUX3_NONE,
				 "inode %" PRIu64 " does not exist", ino);
	}
	if (!fn) {
		cursor_release(&c);
		return 0;
	}
	inode.blob = malloc(len);
	if (!inode.blob) {
		cursor_release(&c);
		return -ENOMEM;
	}
	memcpy(inode.blob, blob, len);
	inode.bloblen = len;
	cursor_release(&c);
	struct attrs_ctx ac = { fn, ctx };
	err = iattr_decode(vol, &inode, attr_adapter, &ac);
	free(inode.blob);
	return err;
}

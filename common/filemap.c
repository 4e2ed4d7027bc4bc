/*
 * File block maps: a direct extent in the inode, or a dtree of dleaves.
 * Logical and physical addresses are in blocks.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "core.h"

int filemap_walk(struct tux3_volume *vol, const struct inode *inode,
		 uint64_t start, uint64_t end, extent_fn fn, void *ctx)
{
	struct root r = root_unpack(inode->dtree);

	if (!inode->dtree || start >= end)
		return 0;
	/* on a volume with versions, a file of versioned leaves reads as
	 * the selected version sees it */
	if (!r.direct && vtable_marked(vol) && vol->vops &&
	    vol->vops->file_versioned(vol, inode))
		return vol->vops->filemap_walk(vol, inode, start, end, fn, ctx);
	tux3_clear_error(vol);
	if (r.direct) {
		struct extent x = { 0, r.block, r.count, 0, 0 };
		return start < r.count ? fn(ctx, &x) : 0;
	}
	struct btree bt = { .vol = vol, .root = r, .ops = &dtree_ops,
			    .owner = inode->inum };
	struct cursor c = { 0 };
	int err = btree_probe(&bt, start, &c);
	while (!err) {
		const uint8_t *leaf = cursor_leaf(&c);
		unsigned count = dleaf_count(leaf);
		struct dleaf_entry e, next;
		/* the extent holding start: the one before the first entry
		 * past it */
		unsigned first = dleaf_lower_bound(leaf, count, start + 1);
		for (unsigned i = first ? first - 1 : 0; i + 1 < count; i++) {
			dleaf_entry_get(leaf, i, &e);
			dleaf_entry_get(leaf, i + 1, &next);
			if (next.logical <= start)
				continue;
			if (e.logical >= end)
				goto done;
			struct extent x = {
				.logical = e.logical, .physical = e.physical,
				.count = next.logical - e.logical,
				.version = e.version,
				.leafblock = cursor_leaf_block(&c),
			};
			err = fn(ctx, &x);
			if (err)
				goto done;
		}
		uint64_t lo, hi;
		cursor_leaf_range(&c, &lo, &hi);
		if (hi >= end)
			break;
		err = btree_next_leaf(&c);
		if (err == 1)
			err = 0;
		else if (!err)
			break;
	}
done:
	cursor_release(&c);
	return err;
}

/* The inode's map will be read soon: start reading its direct extent
 * or the root of its data tree (a cold namespace walk asks for all the
 * subdirectories of a directory at once, before it reads the first). */
void inode_readahead_map(struct tux3_volume *vol, uint64_t inum)
{
	struct inode inode;
	/* a hint's loads and reads are not the walk's work (the work
	 * counters, which tests hold to the file count, would then depend
	 * on the cache) */
	uint64_t loads = vol->inode_loads, reads = vol->dev.reads;
	int err = inode_load(vol, inum, &inode);
	vol->inode_loads = loads;
	vol->dev.reads = reads;
	if (err) {
		tux3_clear_error(vol);	/* the walk itself reports it */
		return;
	}
	struct root r = root_unpack(inode.dtree);
	if (inode.dtree)
		vol_readahead(vol, r.block, r.direct ? r.count : 1);
	inode_free(&inode);
}

static int readahead_extent(void *ctx, const struct extent *x)
{
	if (x->physical)
		vol_readahead(ctx, x->physical, x->count);
	return 0;
}

/* Its data too (a directory's blocks): the map is read now, which
 * inode_readahead_map asked for earlier, and every extent asked for. */
void inode_readahead_data(struct tux3_volume *vol, uint64_t inum)
{
	struct inode inode;
	/* as above, the map's reads too */
	uint64_t loads = vol->inode_loads, reads = vol->dev.reads;
	int err = inode_load(vol, inum, &inode);
	if (!err) {
		uint64_t nblocks = (inode.size + vol->blocksize - 1) >>
				   vol->blockbits;
		err = filemap_walk(vol, &inode, 0, nblocks, readahead_extent,
				   vol);
		inode_free(&inode);
	}
	if (err)
		tux3_clear_error(vol);
	vol->inode_loads = loads;
	vol->dev.reads = reads;
}

struct lookup_ctx {
	uint64_t logical, physical, run;
	bool found;
};

static int lookup_one(void *ctx, const struct extent *x)
{
	struct lookup_ctx *l = ctx;
	if (x->logical > l->logical || x->logical + x->count <= l->logical)
		return 0;
	uint64_t skip = l->logical - x->logical;
	l->physical = x->physical ? x->physical + skip : 0;
	l->run = x->count - skip;
	l->found = true;
	return 1;
}

int filemap_lookup(struct tux3_volume *vol, const struct inode *inode,
		   uint64_t logical, uint64_t *physical, uint64_t *run)
{
	struct lookup_ctx l = { .logical = logical };
	int err = filemap_walk(vol, inode, logical, logical + 1, lookup_one,
			       &l);
	if (err < 0)
		return err;
	*physical = l.found ? l.physical : 0;
	*run = l.found ? l.run : 1;
	return 0;
}

struct first_mapped {
	uint64_t from, found;
};

static int first_mapped(void *ctx, const struct extent *x)
{
	struct first_mapped *m = ctx;
	if (!x->physical)
		return 0;	/* a hole */
	m->found = x->logical > m->from ? x->logical : m->from;
	return 1;
}

int filemap_next_mapped(struct tux3_volume *vol, const struct inode *inode,
			uint64_t from, uint64_t end, uint64_t *logical)
{
	struct first_mapped m = { .from = from, .found = end };
	int err = from < end ? filemap_walk(vol, inode, from, end,
					    first_mapped, &m) : 0;
	*logical = m.found;
	return err < 0 ? err : 0;
}

int filemap_read_block(struct tux3_volume *vol, const struct inode *inode,
		       uint64_t logical, uint8_t *buf)
{
	uint64_t physical, run;
	int err = filemap_lookup(vol, inode, logical, &physical, &run);
	if (err)
		return err;
	if (!physical) {
		memset(buf, 0, vol->blocksize);
		return 0;
	}
	return vol_read_block(vol, physical, buf);
}

struct read_ctx {
	struct tux3_volume *vol;
	const struct inode *inode;
	uint8_t *buf;
	uint64_t pos, len;	/* byte range wanted */
};

static int read_extent(void *ctx, const struct extent *x)
{
	struct read_ctx *r = ctx;
	unsigned bits = r->vol->blockbits;
	if (!x->physical)
		return 0;	/* the buffer is pre-zeroed */
	uint64_t xs = x->logical << bits, xe = (x->logical + x->count) << bits;
	uint64_t s = xs > r->pos ? xs : r->pos;
	uint64_t e = xe < r->pos + r->len ? xe : r->pos + r->len;
	if (s >= e)
		return 0;
	uint64_t devoff = (x->physical << bits) + (s - xs);
	int err = dev_pread(&r->vol->dev, r->buf + (s - r->pos), e - s,
			    devoff);
	if (err)
		return vol_error(r->vol, err, x->physical + ((s - xs) >> bits),
				 r->inode->inum, s, "cannot read data of "
				 "inode %" PRIu64, r->inode->inum);
	return 0;
}

int inode_read(struct tux3_volume *vol, const struct inode *inode, void *buf,
	       size_t len, uint64_t pos, size_t *done)
{
	*done = 0;
	if (pos >= inode->size)
		return 0;
	if (len > inode->size - pos)
		len = (size_t)(inode->size - pos);
	memset(buf, 0, len);
	struct read_ctx r = { vol, inode, buf, pos, len };
	uint64_t first = pos >> vol->blockbits;
	uint64_t last = (pos + len + vol->blocksize - 1) >> vol->blockbits;
	int err = filemap_walk(vol, inode, first, last, read_extent, &r);
	if (err < 0)
		return err;
	*done = len;
	return 0;
}

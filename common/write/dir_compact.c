/*
 * Packing a directory (fsck.tux3 -D): its live records written again in
 * the order they are listed, back to back from block 0, the blocks left
 * over given back, and with DIR_INDEX the on-disk index built again from
 * the packed entries (format.md 15.5).  The records are gathered first
 * and written after the walk, so the file map is never changed under
 * the walk that reads it.  Everything goes into the open delta.
 */
#include <stdlib.h>
#include <string.h>
#include "write/write.h"

struct packed_entry {
	uint64_t inum;
	size_t name_at;
	uint8_t len, type;
};

struct gather {
	struct tux3_volume *vol;
	const struct inode *dir;
	struct packed_entry *e;
	size_t n, cap;
	char *names;
	size_t nbytes, namecap;
	uint64_t entry_blocks;	/* blocks that held entry records */
	/* the packing, counted as write_packed will make it: a record
	 * goes into the last block while it has room, else a new one */
	uint64_t packed;	/* blocks */
	unsigned used;		/* bytes of the last block */
};

static int gather_entry(void *ctx, const struct dirent_info *d)
{
	struct gather *g = ctx;
	/* a name is at most 255 bytes: one doubling from 256 makes room */
	if (array_grow((void **)&g->e, &g->cap, g->n, sizeof(*g->e)) ||
	    array_grow((void **)&g->names, &g->namecap,
		       g->nbytes + d->name_len, 1))
		return -ENOMEM;
	memcpy(g->names + g->nbytes, d->name, d->name_len);
	g->e[g->n++] = (struct packed_entry){ d->inum, g->nbytes,
					      (uint8_t)d->name_len,
					      (uint8_t)d->type };
	g->nbytes += d->name_len;
	unsigned need = dirent_need(d->name_len);
	if (!g->packed || g->used + need > g->vol->blocksize) {
		g->packed++;
		g->used = 0;
	}
	g->used += need;
	return 0;
}

static int gather_block(void *ctx, uint64_t logical, uint64_t physical,
			const uint8_t *blk, int read_err)
{
	struct gather *g = ctx;
	struct tux3_volume *vol = g->vol;
	if (read_err)
		return read_err;
	if (dirhash_is_index(blk, vol->blocksize))
		return 0;
	g->entry_blocks++;
	return dirblock_iterate(vol, blk, vol->blocksize,
				logical << vol->blockbits, physical,
				g->dir->inum, gather_entry, g);
}

/* Write the gathered records from block 0 on; *blocks: how many. */
static int write_packed(struct tux3_volume *vol, struct inode *dir,
			const struct gather *g, uint64_t *blocks)
{
	unsigned bs = vol->blocksize;
	uint8_t *blk = malloc(bs);
	uint64_t out = 0;
	int err = blk ? 0 : -ENOMEM;
	bool open = false;
	for (size_t i = 0; !err && i < g->n; i++) {
		const struct packed_entry *e = &g->e[i];
		if (!open)
			dirblock_init(blk, bs);
		open = true;
		err = dirblock_add(blk, bs, g->names + e->name_at, e->len,
				   e->inum, e->type);
		if (err == -ENOSPC) {	/* full: write it, start the next */
			err = inode_write_data(vol, dir, blk, bs,
					       out++ << vol->blockbits, true);
			open = false;
			i--;
		}
		err = err < 0 ? err : 0;
	}
	if (!err && open)
		err = inode_write_data(vol, dir, blk, bs,
				       out++ << vol->blockbits, true);
	free(blk);
	*blocks = out;
	return err;
}

int dir_compact(struct tux3_volume *vol, struct inode *dir,
		struct dir_compact_result *res)
{
	struct gather g = { .vol = vol, .dir = dir };
	unsigned bs = vol->blocksize;
	uint64_t before = (dir->size + bs - 1) >> vol->blockbits;
	int err = vinode_applies(vol, dir->inum) ? -EOPNOTSUPP : 0;

	*res = (struct dir_compact_result){ .blocks_before = before,
					    .blocks_after = before };
	if (!err)
		err = dir_walk_blocks(vol, dir, gather_block, &g);
	/* rewritten when packing frees a block, when it has holes or
	 * index blocks, and always when it gets an index (rebuilt) */
	bool index = dirhash_feature(vol) && g.packed >= DIRHASH_MIN_BLOCKS;
	if (!err && (g.entry_blocks > g.packed || g.entry_blocks != before ||
		     index)) {
		uint64_t blocks;
		dir_index_forget(vol, dir->inum);
		err = write_packed(vol, dir, &g, &blocks);
		if (!err && blocks < before)
			err = inode_truncate(vol, dir, blocks << vol->blockbits);
		if (!err && index)
			err = dirhash_build(vol, dir);
		if (err == DIRHASH_NONE)
			err = 0;
		if (!err)
			err = inode_store(vol, dir);
		res->changed = !err;
		res->blocks_after = (dir->size + bs - 1) >> vol->blockbits;
	}
	res->entries = g.n;
	free(g.e);
	free(g.names);
	return err;
}

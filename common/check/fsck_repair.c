/*
 * Repairs shared by the check engine's passes (see fsck_internal.h).  They use
 * the write path's own building blocks (directory blocks rewritten with
 * inode_write_data, inodes with inode_store, the bitmap with
 * bitmap_modify), so every repair is an ordinary logged change of the
 * open delta.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "check/fsck_internal.h"

struct inum_pos {
	tux3_ino_t inum;
	uint64_t *pos;
	size_t n, cap;
};

static int collect_inum(void *ctx, const struct dirent_info *d)
{
	struct inum_pos *c = ctx;
	if (d->inum != c->inum)
		return 0;
	if (c->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 4;
		uint64_t *p = realloc(c->pos, ncap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		c->pos = p;
		c->cap = ncap;
	}
	c->pos[c->n++] = d->pos;
	return 0;
}

static int find_inum(struct tux3_volume *vol, struct inode *dir,
		     struct inum_pos *c)
{
	int err = dir_iterate(vol, dir, collect_inum, c);
	return err < 0 ? err : 0;
}

/* Read-modify-write the directory block holding pos. */
static int dir_edit(struct tux3_volume *vol, struct inode *dir, uint64_t pos,
		    int (*edit)(uint8_t *blk, unsigned bs, unsigned off,
				unsigned arg), unsigned arg)
{
	unsigned bs = vol->blocksize;
	uint64_t logical = pos >> vol->blockbits;
	uint8_t *blk = malloc(bs);
	if (!blk)
		return -ENOMEM;
	int err = filemap_read_block(vol, dir, logical, blk);
	if (!err)
		err = edit(blk, bs, (unsigned)(pos & (bs - 1)), arg);
	if (!err)
		err = inode_write_data(vol, dir, blk, bs,
				       logical << vol->blockbits, true);
	free(blk);
	return err;
}

static int edit_delete(uint8_t *blk, unsigned bs, unsigned off, unsigned arg)
{
	(void)arg;
	return dirblock_delete(blk, bs, off);
}

static int edit_type(uint8_t *blk, unsigned bs, unsigned off, unsigned type)
{
	if (off + DIRENT_HEADER > bs)
		return -EUCLEAN;
	blk[off + 11] = (uint8_t)type;
	return 0;
}

int fsck_dir_remove_inum(struct tux3_volume *vol, tux3_ino_t dirino,
			 tux3_ino_t inum, bool last_only)
{
	struct inode dir;
	struct inum_pos c = { .inum = inum };
	int err = inode_load_dir(vol, dirino, &dir);
	if (err)
		return err;
	if (!(err = find_inum(vol, &dir, &c))) {
		size_t first = last_only && c.n ? c.n - 1 : 0;
		/* from the end: deleting merges a record into the previous
		 * one, so earlier positions stay valid */
		for (size_t i = c.n; i > first && !err; i--)
			err = dir_edit(vol, &dir, c.pos[i - 1], edit_delete, 0);
		if (!err && c.n) {
			dir.mtime = dir.ctime = vol_now(vol);
			err = inode_store(vol, &dir);
		}
	}
	inode_free(&dir);
	free(c.pos);
	return err < 0 ? err : (int)(c.n - (last_only && c.n ? c.n - 1 : 0));
}

/* Cut the block at off (the first damaged record; the records before it
 * chain correctly up to off, the walk got there): from off to the end is
 * one deleted record, or, if too little room is left for a record header,
 * the last good record's rec_len reaches the end. */
static int edit_cut(uint8_t *blk, unsigned bs, unsigned off, unsigned arg)
{
	(void)arg;
	if (off % 8 || off >= bs)
		return -EUCLEAN;
	if (bs - off >= DIRENT_HEADER + 4) {
		memset(blk + off, 0, DIRENT_HEADER);
		unsigned len = bs - off;
		put_be16(blk + off + 8, (uint16_t)(len == 65536 ? 65535 : len));
		return 0;
	}
	unsigned prev = bs, pos = 0;
	while (pos < off) {
		unsigned len = be16(blk + pos + 8);
		if (len == 65535)
			len = 65536;
		if (len < 16 || len % 8)
			return -EUCLEAN;
		prev = pos;
		pos += len;
	}
	if (prev == bs || pos != off)
		return -EUCLEAN;
	unsigned len = bs - prev;
	put_be16(blk + prev + 8, (uint16_t)(len == 65536 ? 65535 : len));
	return 0;
}

int fsck_dir_salvage(struct tux3_volume *vol, tux3_ino_t dirino, uint64_t pos)
{
	struct inode dir;
	int err = inode_load_dir(vol, dirino, &dir);
	if (err)
		return err;
	err = dir_edit(vol, &dir, pos, edit_cut, 0);
	if (!err) {
		/* the block was rewritten elsewhere: the new pointer */
		dir.mtime = dir.ctime = vol_now(vol);
		err = inode_store(vol, &dir);
	}
	inode_free(&dir);
	return err;
}

int fsck_dir_retype(struct tux3_volume *vol, tux3_ino_t dirino,
		    tux3_ino_t inum, unsigned type)
{
	struct inode dir;
	struct inum_pos c = { .inum = inum };
	int err = inode_load_dir(vol, dirino, &dir);
	if (err)
		return err;
	if (!(err = find_inum(vol, &dir, &c))) {
		for (size_t i = 0; i < c.n && !err; i++)
			err = dir_edit(vol, &dir, c.pos[i], edit_type, type);
		if (!err && c.n)
			err = inode_store(vol, &dir);
	}
	inode_free(&dir);
	free(c.pos);
	return err < 0 ? err : (int)c.n;
}

int fsck_dir_names(struct tux3_volume *vol, tux3_ino_t dirino,
		   tux3_ino_t inum)
{
	struct inode dir;
	struct inum_pos c = { .inum = inum };
	int err = inode_load_dir(vol, dirino, &dir);
	if (err)
		return err;
	err = find_inum(vol, &dir, &c);
	inode_free(&dir);
	free(c.pos);
	return err < 0 ? err : c.n > 0;
}

int fsck_set_nlink(struct tux3_volume *vol, tux3_ino_t inum, uint32_t nlink)
{
	struct inode inode;
	int err = inode_load(vol, inum, &inode);
	if (err)
		return err;
	inode.nlink = nlink;
	inode.present |= 1u << ATTR_LINK_COUNT;
	err = inode_store(vol, &inode);
	inode_free(&inode);
	return err;
}

int fsck_connect_lost(struct tux3_volume *vol, tux3_ino_t inum)
{
	static const char lf[] = "lost+found";
	tux3_ino_t lost;
	struct inode inode;
	char name[32];
	int err = tux3_lookup(vol, TUX3_ROOT_INO, lf, sizeof(lf) - 1, &lost);
	if (err == -ENOENT) {
		tux3_clear_error(vol);
		err = tux3_mkdir(vol, TUX3_ROOT_INO, lf, sizeof(lf) - 1, 0700,
				 0, 0, &lost);
	}
	if (err)
		return err;
	if ((err = inode_load(vol, inum, &inode)))
		return err;
	uint32_t mode = inode.mode;
	inode_free(&inode);
	if (S_ISDIR(mode)) {
		/* tux3_link refuses directories: add the entry by hand */
		struct inode dir;
		if ((err = inode_load_dir(vol, lost, &dir)))
			return err;
		snprintf(name, sizeof(name), "#%" PRIu64, inum);
		unsigned bs = vol->blocksize;
		uint64_t nblocks = (dir.size + bs - 1) >> vol->blockbits;
		uint8_t *blk = malloc(bs);
		err = blk ? -ENOSPC : -ENOMEM;
		for (uint64_t i = 0; blk && i < nblocks && err == -ENOSPC;
		     i++) {
			if ((err = filemap_read_block(vol, &dir, i, blk)))
				break;
			err = dirblock_add(blk, bs, name, (unsigned)strlen(name),
					   inum, TUX3_DT_DIR);
			if (err >= 0)
				err = inode_write_data(vol, &dir, blk, bs,
						       i << vol->blockbits,
						       true);
		}
		if (blk && err == -ENOSPC) {
			dirblock_init(blk, bs);
			err = dirblock_add(blk, bs, name, (unsigned)strlen(name),
					   inum, TUX3_DT_DIR);
			if (err >= 0)
				err = inode_write_data(vol, &dir, blk, bs,
						       nblocks << vol->blockbits,
						       true);
		}
		free(blk);
		if (err >= 0) {
			dir.nlink++;
			err = inode_store(vol, &dir);
		}
		inode_free(&dir);
		return err < 0 ? err : 0;
	}
	snprintf(name, sizeof(name), "#%" PRIu64, inum);
	/* tux3_link counts the new name; pass 5 then sets the count from
	 * the names it finds */
	return tux3_link(vol, inum, lost, name, strlen(name));
}

int64_t fsck_bitmap_set(struct tux3_volume *vol, uint64_t block,
			uint64_t count, bool set)
{
	return bitmap_modify(vol, block, count, set);
}

int fsck_bitmap_touch(struct tux3_volume *vol, uint64_t block, uint64_t count)
{
	if (!vol_extent_valid(vol, block, count))
		return -ERANGE;
	for (uint64_t b = block; b < block + count; b++) {
		int used = bitmap_test(vol, b);
		if (used < 0)
			return used;
		int64_t r = bitmap_modify(vol, b, 1, !used);
		if (r >= 0)
			r = bitmap_modify(vol, b, 1, used);
		if (r < 0)
			return (int)r;
	}
	return 0;
}

/* The one rule for every repair that removes inodes (pass 3 cutting a
 * subtree of the inode table, pass 4 clearing one): an orphan record
 * left behind would name an inode that no longer exists, which the next
 * check reports (PASS7_ORPHAN_GONE), so it goes with the inode. */
int fsck_inodes_gone(struct tux3_volume *vol, tux3_ino_t lo, tux3_ino_t hi)
{
	unsigned i = 0;
	while (i < tux3_orphan_count(vol)) {
		tux3_ino_t inum = tux3_orphan(vol, i);
		if (inum < lo || inum >= hi) {
			i++;
			continue;
		}
		/* forgetting takes it off the list: index i is the next */
		int err = orphan_forget(vol, inum);
		if (err)
			return err;
	}
	return 0;
}

int fsck_release_orphans(struct tux3_volume *vol)
{
	int err = 0;
	while (vol->orphans.count && !err)
		err = orphan_end(vol, vol->orphans.inums[0]);
	return err;
}

int fsck_commit(struct tux3_volume *vol)
{
	repair_merge_frees(vol);
	return delta_commit(vol, true);
}

/*
 * Tux3 writes nothing in place: each repaired inode or directory copies
 * its leaf, and the blocks the copies replace are free only once the
 * delta that replaced them is committed.  On a volume that was full
 * when the damage happened, a long run of repairs (the entries of a
 * lost directory connected one by one to /lost+found) would run out of
 * space with the space it needs waiting in the open delta's frees.  So,
 * as the kernel commits its journal and retries at ENOSPC, the repairs
 * made so far (each one whole) are committed when free space falls
 * below the allocator's usual reserve and the delta holds at least a
 * quarter as many frees.  Only between two repairs of pass 5: pass 4's
 * repairs hold their copies' blocks outside the bitmap until the pass
 * ends.  The blocks pass 4 shields (referenced, free in the bitmap)
 * are then set in the bitmap a checkpoint writes: that is their true
 * state, and pass 8 settles them as before.
 */
int fsck_make_room(struct fsck *f)
{
	struct tux3_volume *vol = f->vol;
	uint64_t low = balloc_reserve_size(vol);
	if (!fsck_repairing(f) || vol->freeblocks >= low ||
	    balloc_deferred(vol) < low / 4)
		return 0;
	int err = fsck_commit(vol);
	if (err)
		return err;
	f->checkpoints++;
	f->fixed_at_checkpoint = f->res->fixed;
	fsck_info(f, "  (the repairs so far are committed: the volume "
		  "was full, and the blocks they replaced are free now)");
	return 0;
}

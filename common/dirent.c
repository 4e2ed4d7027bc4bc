/*
 * Directory records (ext2-style, big-endian), also used by the atom
 * dictionary: be64 inum, be16 rec_len (65535 encodes 65536), u8 name_len,
 * u8 type, name.  Records are 8-byte aligned and never cross a block end;
 * a record with name_len 0 is deleted.  There are no "." or ".." records.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "internal.h"

int dirblock_iterate(struct tux3_volume *vol, const uint8_t *blk,
		     unsigned size, uint64_t base, uint64_t blocknr,
		     tux3_ino_t dir, dirent_fn fn, void *ctx)
{
	unsigned off = 0;

	while (off < size) {
		const uint8_t *p = blk + off;
		if (size - off < DIRENT_HEADER + 4)
			return vol_error(vol, -EUCLEAN, blocknr, dir, base + off,
					 "directory record at offset %u cut "
					 "off by the block end", off);
		unsigned rec_len = be16(p + 8);
		if (rec_len == 65535)
			rec_len = 65536;
		unsigned name_len = p[10], type = p[11];
		if (rec_len < 16 || rec_len % 8 || rec_len > size - off)
			return vol_error(vol, -EUCLEAN, blocknr, dir, base + off,
					 "directory record at offset %u: bad "
					 "rec_len %u", off, rec_len);
		if (name_len && ((DIRENT_HEADER + name_len + 7) & ~7u) > rec_len)
			return vol_error(vol, -EUCLEAN, blocknr, dir, base + off,
					 "directory record at offset %u: name "
					 "of %u bytes does not fit rec_len %u",
					 off, name_len, rec_len);
		if (name_len) {
			struct dirent_info d = {
				.inum = be64(p), .rec_len = rec_len,
				.name_len = name_len, .type = type,
				.name = (const char *)p + DIRENT_HEADER,
				.pos = base + off, .blocknr = blocknr,
			};
			if (d.inum == 0 || d.inum >= TUX3_KEY_LIMIT)
				return vol_error(vol, -EUCLEAN, blocknr, dir,
						 base + off, "directory record "
						 "'%.*s': bad inode number %"
						 PRIu64, (int)name_len, d.name,
						 d.inum);
			if (type > TUX3_DT_LNK)
				return vol_error(vol, -EUCLEAN, blocknr, dir,
						 base + off, "directory record "
						 "'%.*s': bad type %u",
						 (int)name_len, d.name, type);
			if (memchr(d.name, '/', name_len) ||
			    memchr(d.name, 0, name_len) ||
			    (name_len == 1 && d.name[0] == '.') ||
			    (name_len == 2 && !memcmp(d.name, "..", 2)))
				return vol_error(vol, -EUCLEAN, blocknr, dir,
						 base + off, "directory record "
						 "at offset %u: invalid name",
						 off);
			int r = fn(ctx, &d);
			if (r)
				return r;
		}
		off += rec_len;
	}
	return 0;
}

struct dir_walk {
	struct tux3_volume *vol;
	const struct inode *dir;
	dirent_fn fn;
	void *ctx;
	uint8_t *buf;
};

static int dir_extent(void *ctx, const struct extent *x)
{
	struct dir_walk *w = ctx;
	struct tux3_volume *vol = w->vol;

	if (!x->physical)
		return 0;	/* a hole in a directory holds no entries */
	for (uint64_t i = 0; i < x->count; i++) {
		uint64_t logical = x->logical + i;
		if (logical << vol->blockbits >= w->dir->size)
			break;
		int r = vol_read_block(vol, x->physical + i, w->buf);
		if (!r)
			r = dirblock_iterate(vol, w->buf, vol->blocksize,
					     logical << vol->blockbits,
					     x->physical + i, w->dir->inum,
					     w->fn, w->ctx);
		if (r)
			return r;
	}
	return 0;
}

int dir_iterate(struct tux3_volume *vol, const struct inode *dir,
		dirent_fn fn, void *ctx)
{
	unsigned bs = vol->blocksize;
	uint64_t nblocks = (dir->size + bs - 1) >> vol->blockbits;
	struct dir_walk w = { vol, dir, fn, ctx, malloc(bs) };

	if (!w.buf)
		return -ENOMEM;
	int r = filemap_walk(vol, dir, 0, nblocks, dir_extent, &w);
	free(w.buf);
	return r;
}

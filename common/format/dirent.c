/*
 * Directory records (ext2-style, big-endian), also used by the atom
 * dictionary: be64 inum, be16 rec_len (65535 encodes 65536), u8 name_len,
 * u8 type, name.  Records are 8-byte aligned and never cross a block end;
 * a record with name_len 0 is deleted.  There are no "." or ".." records.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "format/format.h"

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

/*
 * ---- write side: pure operations on one directory-format block ----
 * size is the block size (512..65536).  Offsets are byte offsets in the
 * block.  A walk that meets a malformed record returns -EUCLEAN.
 */

static inline unsigned dirent_rec_len(const uint8_t *p)
{
	unsigned r = be16(p + 8);
	return r == 65535 ? 65536 : r;
}

static inline void dirent_set_rec_len(uint8_t *p, unsigned rec_len)
{
	put_be16(p + 8, (uint16_t)(rec_len >= 65535 ? 65535 : rec_len));
}

/* Is the record at off sane enough to step over?  (No name checks.) */
static bool dirent_sane(const uint8_t *blk, unsigned size, unsigned off)
{
	if (size - off < DIRENT_HEADER + 4)
		return false;
	unsigned rec_len = dirent_rec_len(blk + off), name_len = blk[off + 10];
	if (rec_len < 16 || rec_len % 8 || rec_len > size - off)
		return false;
	return !name_len || dirent_need(name_len) <= rec_len;
}

static bool dirent_name_ok(const char *name, unsigned len)
{
	if (len < 1 || len > 255 || memchr(name, '/', len) ||
	    memchr(name, 0, len))
		return false;
	return !(len == 1 && name[0] == '.') &&
	       !(len == 2 && name[0] == '.' && name[1] == '.');
}

void dirblock_init(uint8_t *blk, unsigned size)
{
	memset(blk, 0, size);
	dirent_set_rec_len(blk, size);
}

int dirblock_find(const uint8_t *blk, unsigned size, const char *name,
		  unsigned len)
{
	for (unsigned off = 0; off < size;) {
		if (!dirent_sane(blk, size, off))
			return -EUCLEAN;
		const uint8_t *p = blk + off;
		if (len && p[10] == len && !memcmp(p + DIRENT_HEADER, name, len))
			return (int)off;
		off += dirent_rec_len(p);
	}
	return -ENOENT;
}

/*
 * First fit in block order: a deleted record whose rec_len holds the new
 * one is taken whole (its slack stays with it); a live record with enough
 * slack after its own align8(12 + name_len) bytes is cut there and the
 * new record takes the rest of its rec_len.
 */
int dirblock_add(uint8_t *blk, unsigned size, const char *name, unsigned len,
		 uint64_t inum, unsigned type)
{
	if (!name || !dirent_name_ok(name, len))
		return -EINVAL;
	if (!inum || inum >= TUX3_KEY_LIMIT || type > TUX3_DT_LNK)
		return -EINVAL;
	if (dirhash_is_index(blk, size))
		return -ENOSPC;	/* an index block (format.md 15.5) */
	unsigned need = dirent_need(len), at = size, at_len = 0;
	bool split = false;
	for (unsigned off = 0; off < size;) {
		if (!dirent_sane(blk, size, off))
			return -EUCLEAN;
		const uint8_t *p = blk + off;
		unsigned rec_len = dirent_rec_len(p), nl = p[10];
		if (nl == len && !memcmp(p + DIRENT_HEADER, name, len))
			return -EEXIST;
		if (at == size) {
			if (!nl && rec_len >= need) {
				at = off;
				at_len = rec_len;
			} else if (nl && rec_len - dirent_need(nl) >= need) {
				at = off;
				at_len = rec_len;
				split = true;
			}
		}
		off += rec_len;
	}
	if (at == size)
		return -ENOSPC;
	if (split) {
		unsigned keep = dirent_need(blk[at + 10]);
		dirent_set_rec_len(blk + at, keep);
		at += keep;
		at_len -= keep;
	}
	uint8_t *p = blk + at;
	memset(p, 0, DIRENT_HEADER);
	put_be64(p, inum);
	dirent_set_rec_len(p, at_len);
	p[10] = (uint8_t)len;
	p[11] = (uint8_t)type;
	memcpy(p + DIRENT_HEADER, name, len);
	/* zero the alignment padding after the name */
	memset(p + DIRENT_HEADER + len, 0, need - DIRENT_HEADER - len);
	return (int)at;
}

/*
 * Delete the live record at offset: its inum, name_len, type and name
 * bytes become zero; the previous record in the block (if any) grows over
 * it, leaving the deleted record's rec_len behind as stale bytes.  The
 * first record of a block just stays, deleted, with its rec_len.
 */
int dirblock_delete(uint8_t *blk, unsigned size, unsigned offset)
{
	unsigned off = 0, prev = size;
	while (off < size && off < offset) {
		if (!dirent_sane(blk, size, off))
			return -EUCLEAN;
		prev = off;
		off += dirent_rec_len(blk + off);
	}
	if (off != offset || off >= size)
		return -ENOENT;
	if (!dirent_sane(blk, size, off))
		return -EUCLEAN;
	uint8_t *p = blk + off;
	unsigned name_len = p[10];
	if (!name_len)
		return -ENOENT;
	memset(p + DIRENT_HEADER, 0, name_len);
	memset(p, 0, 8);
	p[10] = 0;
	p[11] = 0;
	if (prev < size)
		dirent_set_rec_len(blk + prev, dirent_rec_len(blk + prev) +
					       dirent_rec_len(p));
	return 0;
}

int dirblock_room(const uint8_t *blk, unsigned size)
{
	unsigned room = 0;
	if (dirhash_is_index(blk, size))
		return 0;
	for (unsigned off = 0; off < size;) {
		if (!dirent_sane(blk, size, off))
			return -EUCLEAN;
		unsigned rec_len = dirent_rec_len(blk + off), nl = blk[off + 10];
		unsigned free = nl ? rec_len - dirent_need(nl) : rec_len;
		if (free > room)
			room = free;
		off += rec_len;
	}
	return (int)room;
}

int dirblock_record(const uint8_t *blk, unsigned size, unsigned offset,
		    uint64_t base, struct dirent_info *d)
{
	if (offset >= size || offset % 8 || !dirent_sane(blk, size, offset))
		return -EUCLEAN;
	const uint8_t *p = blk + offset;
	unsigned name_len = p[10];
	if (!name_len)
		return -ENOENT;
	*d = (struct dirent_info){
		.inum = be64(p), .rec_len = dirent_rec_len(p),
		.name_len = name_len, .type = p[11],
		.name = (const char *)p + DIRENT_HEADER, .pos = base + offset,
	};
	if (d->inum == 0 || d->inum >= TUX3_KEY_LIMIT || d->type > TUX3_DT_LNK ||
	    !dirent_name_ok(d->name, name_len))
		return -EUCLEAN;
	return 0;
}

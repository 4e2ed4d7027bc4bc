/*
 * Inode attributes.  A blob is a run of attributes, each a be16 head
 * (kind << 12 | version) and a payload whose size the kind fixes, except
 * XATTR and IDATA which carry their own be16 length.  Attributes whose
 * version is not 0 are skipped by their real length (the reference uses
 * the fixed table there, which misparses variable kinds).  An unknown kind
 * cannot be skipped safely, so it is an error rather than silent truncation.
 * ATIME (kind 15, our extension, format.md 15.6) always decodes as 8 bytes
 * so that a reader can name it, and drop it, where the volume lacks it.
 */
#include <inttypes.h>
#include "format/format.h"

static const int fixed_size[16] = {
	[ATTR_RDEV] = 8, [ATTR_MODE_OWNER] = 12, [ATTR_DATA_BTREE] = 8,
	[ATTR_CTIME_SIZE] = 16, [ATTR_LINK_COUNT] = 4, [ATTR_MTIME] = 8,
	[6] = -1, [7] = -1, [8] = -1, [9] = -1, [10] = -1,
	[ATTR_IDATA] = 0, [ATTR_XATTR] = 0,
	[13] = -1, [14] = -1, [ATTR_ATIME] = 8,
};

static const char *const kind_names[16] = {
	"RDEV", "MODE_OWNER", "DATA_BTREE", "CTIME_SIZE", "LINK_COUNT",
	"MTIME", "kind6", "kind7", "kind8", "kind9", "RESERVED1", "IDATA",
	"XATTR", "kind13", "kind14", "ATIME",
};

const char *iattr_kind_name(unsigned kind)
{
	return kind < 16 ? kind_names[kind] : "?";
}

/* On a volume with versions kind 10 is the ABSENT marker (format.md
 * 17.3a), not the 2014 format's reserved kind. */
const char *iattr_name(const struct tux3_volume *vol, unsigned kind)
{
	if (vtable_marked(vol) && kind == VATTR_ABSENT)
		return "ABSENT";
	if (vtable_marked(vol) && kind == VATTR_SPILL)
		return "SPILL";
	return iattr_kind_name(kind);
}

int iattr_decode(struct tux3_volume *vol, struct inode *inode,
		 attr_fn fn, void *ctx)
{
	const uint8_t *blob = inode->blob;
	unsigned len = inode->bloblen, off = 0;

	while (off < len) {
		if (len - off < 2)
			return vol_error(vol, -EUCLEAN, inode->leafblock,
					 inode->inum, off, "inode %" PRIu64
					 ": attribute head cut off at blob "
					 "offset %u", inode->inum, off);
		unsigned head = be16(blob + off);
		struct attr_info a = {
			.kind = head >> 12, .version = head & 0xfff,
			.offset = off,
		};
		int fixed = fixed_size[a.kind];
		unsigned paylen;

		/* the ABSENT marker of a version (format.md 17.3a): only on
		 * a volume with versions; readers of the live version skip
		 * it as they skip every labelled attribute */
		if (a.kind == VATTR_ABSENT && vtable_marked(vol))
			fixed = 4;
		/* and where the attributes past the leaf went (17.3b) */
		if (a.kind == VATTR_SPILL && vtable_marked(vol))
			fixed = VSPILL_PAYLOAD;
		if (fixed < 0)
			return vol_error(vol, -EUCLEAN, inode->leafblock,
					 inode->inum, off, "inode %" PRIu64
					 ": unknown attribute kind %u at blob "
					 "offset %u", inode->inum, a.kind, off);
		if (fixed > 0) {
			paylen = (unsigned)fixed;
		} else {
			/* XATTR and IDATA: be16 length of what follows it */
			if (len - off < 4)
				return vol_error(vol, -EUCLEAN,
						 inode->leafblock, inode->inum,
						 off, "inode %" PRIu64 ": %s "
						 "attribute cut off",
						 inode->inum,
						 kind_names[a.kind]);
			paylen = 2 + be16(blob + off + 2);
		}
		if (paylen > len - off - 2)
			return vol_error(vol, -EUCLEAN, inode->leafblock,
					 inode->inum, off, "inode %" PRIu64
					 ": %s attribute of %u bytes runs past "
					 "the end of the %u-byte inode",
					 inode->inum, kind_names[a.kind],
					 paylen + 2, len);
		a.payload = blob + off + 2;
		a.paylen = paylen;
		a.size = paylen + 2;
		int r = fn(vol, ctx, &a);
		if (r)
			return r;
		off += a.size;
	}
	return 0;
}

/*
 * Encoders (the write path's half).  iattr_encode_fixed() writes the
 * fixed attributes whose bit is set in inode->present, in ascending kind
 * order with version 0 (the reference's writing rules, format.md 6), and
 * returns the bytes written (at most IATTR_FIXED_MAX).  XATTRs follow,
 * one iattr_encode_xattr() each.
 */
unsigned iattr_encode_fixed(uint8_t *buf, const struct inode *inode)
{
	uint8_t *p = buf;

	for (unsigned kind = ATTR_RDEV; kind <= ATTR_MTIME; kind++) {
		if (!(inode->present & (1u << kind)))
			continue;
		put_be16(p, (uint16_t)(kind << 12));
		p += 2;
		switch (kind) {
		case ATTR_RDEV:
			put_be64(p, inode->rdev);
			break;
		case ATTR_MODE_OWNER:
			put_be32(p, inode->mode);
			put_be32(p + 4, inode->uid);
			put_be32(p + 8, inode->gid);
			break;
		case ATTR_DATA_BTREE:
			put_be64(p, inode->dtree);
			break;
		case ATTR_CTIME_SIZE:
			put_be64(p, (uint64_t)inode->ctime);
			put_be64(p + 8, inode->size);
			break;
		case ATTR_LINK_COUNT:
			put_be32(p, inode->nlink);
			break;
		case ATTR_MTIME:
			put_be64(p, (uint64_t)inode->mtime);
			break;
		}
		p += fixed_size[kind];
	}
	/* after MTIME, before the XATTRs: the fixed kinds stay ascending */
	if (inode->present & (1u << ATTR_ATIME)) {
		put_be16(p, (uint16_t)(ATTR_ATIME << 12));
		put_be64(p + 2, (uint64_t)inode->atime);
		p += 10;
	}
	return (unsigned)(p - buf);
}

/* One XATTR attribute: head, be16 N = 2 + size, be16 atom, value. */
unsigned iattr_encode_xattr(uint8_t *buf, unsigned atom, const void *value,
			    unsigned size)
{
	put_be16(buf, ATTR_XATTR << 12);
	put_be16(buf + 2, (uint16_t)(2 + size));
	put_be16(buf + 4, (uint16_t)atom);
	if (size)
		memcpy(buf + 6, value, size);
	return 6 + size;
}

/* Largest file size for a block size: blocksize << 48, capped at 2^63 - 1
 * (format.md 6; at 32 KiB and 64 KiB blocks the shift overflows). */
uint64_t iattr_max_size(unsigned blockbits)
{
	if (blockbits + 48 >= 63)
		return INT64_MAX;
	return 1ULL << (blockbits + 48);
}

uint64_t iattr_max_data(unsigned blockbits)
{
	if (blockbits + 48 >= 63)
		return INT64_MAX;
	/* logical blocks are 48 bits and a dleaf entry holds the end of
	 * the extent before it: the last block, 2^48 - 1, cannot be mapped
	 * (its end, 2^48, would wrap to 0) */
	return (1ULL << (blockbits + 48)) - (1ULL << blockbits);
}

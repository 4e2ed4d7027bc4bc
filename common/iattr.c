/*
 * Inode attributes.  A blob is a run of attributes, each a be16 head
 * (kind << 12 | version) and a payload whose size the kind fixes, except
 * XATTR and IDATA which carry their own be16 length.  Attributes whose
 * version is not 0 are skipped by their real length (the reference uses
 * the fixed table there, which misparses variable kinds).  An unknown kind
 * cannot be skipped safely, so it is an error rather than silent truncation.
 */
#include <inttypes.h>
#include "internal.h"

static const int fixed_size[16] = {
	[ATTR_RDEV] = 8, [ATTR_MODE_OWNER] = 12, [ATTR_DATA_BTREE] = 8,
	[ATTR_CTIME_SIZE] = 16, [ATTR_LINK_COUNT] = 4, [ATTR_MTIME] = 8,
	[6] = -1, [7] = -1, [8] = -1, [9] = -1, [10] = -1,
	[ATTR_IDATA] = 0, [ATTR_XATTR] = 0,
	[13] = -1, [14] = -1, [15] = -1,
};

static const char *const kind_names[16] = {
	"RDEV", "MODE_OWNER", "DATA_BTREE", "CTIME_SIZE", "LINK_COUNT",
	"MTIME", "kind6", "kind7", "kind8", "kind9", "RESERVED1", "IDATA",
	"XATTR", "kind13", "kind14", "kind15",
};

const char *iattr_kind_name(unsigned kind)
{
	return kind < 16 ? kind_names[kind] : "?";
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

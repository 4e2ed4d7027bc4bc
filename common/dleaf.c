/*
 * dleaf (file extent leaf, magic 0xbeaf).
 *   be16 magic, be16 count, be32 unused, then count 16-byte entries:
 *   word 0 = version_hi:16 | logical:48, word 1 = version_lo:16 | physical:48.
 * An extent runs from its logical address to the next entry's; physical 0
 * is a hole, and the last entry is a sentinel (physical 0) ending the
 * previous extent.
 */
#include <inttypes.h>
#include "internal.h"

void dleaf_entry_get(const uint8_t *leaf, unsigned i, struct dleaf_entry *e)
{
	const uint8_t *p = leaf + DLEAF_HEADER + DLEAF_ENTRY * i;
	uint64_t w0 = be64(p), w1 = be64(p + 8);
	e->logical = w0 & TUX3_MAX_BLOCK;
	e->physical = w1 & TUX3_MAX_BLOCK;
	e->version = (uint32_t)((w0 >> 48) << 16 | (w1 >> 48));
}

static int dleaf_check(struct tux3_volume *vol, const uint8_t *leaf,
		       uint64_t blocknr, uint64_t lo, uint64_t hi)
{
	unsigned count = dleaf_count(leaf);
	struct dleaf_entry e, next;

	if (be16(leaf) != TUX3_MAGIC_DLEAF)
		return vol_error(vol, -EUCLEAN, blocknr, TUX3_NONE, 0,
				 "dleaf: bad magic 0x%04x (expected 0x%04x)",
				 be16(leaf), TUX3_MAGIC_DLEAF);
	if (count > (vol->blocksize - DLEAF_HEADER) / DLEAF_ENTRY)
		return vol_error(vol, -EUCLEAN, blocknr, TUX3_NONE, 2,
				 "dleaf: count %u exceeds the block", count);
	if (!count)
		return 0;
	dleaf_entry_get(leaf, count - 1, &e);
	if (e.physical)
		return vol_error(vol, -EUCLEAN, blocknr, TUX3_NONE,
				 DLEAF_HEADER + DLEAF_ENTRY * (count - 1),
				 "dleaf: last entry is not a sentinel "
				 "(physical %" PRIu64 ")", e.physical);
	for (unsigned i = 0; i < count; i++) {
		unsigned off = DLEAF_HEADER + DLEAF_ENTRY * i;
		dleaf_entry_get(leaf, i, &e);
		if (e.version)
			return vol_error(vol, -EUCLEAN, blocknr, TUX3_NONE, off,
					 "dleaf: entry %u has version %u "
					 "(versioned extents are not part of "
					 "the 2014 format)", i, e.version);
		if (e.logical < lo || e.logical > hi ||
		    (i + 1 < count && e.logical == hi))
			return vol_error(vol, -EUCLEAN, blocknr, TUX3_NONE, off,
					 "dleaf: entry %u logical %" PRIu64
					 " outside the key range %" PRIu64
					 "..%" PRIu64, i, e.logical, lo, hi);
		if (i + 1 == count)
			break;
		dleaf_entry_get(leaf, i + 1, &next);
		if (next.logical <= e.logical)
			return vol_error(vol, -EUCLEAN, blocknr, TUX3_NONE,
					 off + DLEAF_ENTRY, "dleaf: entry %u "
					 "logical %" PRIu64 " not above the "
					 "previous %" PRIu64, i + 1,
					 next.logical, e.logical);
		if (e.physical &&
		    (e.physical < vol->reserved_blocks ||
		     !vol_extent_valid(vol, e.physical,
				       next.logical - e.logical)))
			return vol_error(vol, -EUCLEAN, blocknr, TUX3_NONE, off,
					 "dleaf: extent %" PRIu64 "+%" PRIu64
					 " at logical %" PRIu64 " outside the "
					 "volume", e.physical,
					 next.logical - e.logical, e.logical);
	}
	return 0;
}

const struct btree_ops dtree_ops = {
	.name = "data tree",
	.leaf_magic = TUX3_MAGIC_DLEAF,
	.leaf_check = dleaf_check,
};

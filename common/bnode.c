/*
 * bnode: the index node of every Tux3 B-tree.
 *   be16 magic 0xb4de, be16 unused, be32 count, then count entries of
 *   {be64 key, be64 child}.  Keys lie between pointers: entry i covers
 *   [key_i, key_i+1); entry 0's key is not used for search.
 */
#include <inttypes.h>
#include "internal.h"

unsigned bnode_capacity(unsigned blocksize)
{
	return (blocksize - BNODE_HEADER) / BNODE_ENTRY;
}

unsigned bnode_lookup(const uint8_t *b, uint64_t key)
{
	unsigned count = bnode_count(b), i;
	for (i = 1; i < count; i++)
		if (bnode_key(b, i) > key)
			break;
	return i - 1;
}

int bnode_check(struct tux3_volume *vol, const uint8_t *b, uint64_t blocknr,
		uint64_t lo, uint64_t hi, bool is_root)
{
	(void)is_root;
	unsigned magic = be16(b);
	if (magic != TUX3_MAGIC_BNODE)
		return vol_error(vol, -EUCLEAN, blocknr, TUX3_NONE, 0,
				 "bnode: bad magic 0x%04x (expected 0x%04x)",
				 magic, TUX3_MAGIC_BNODE);
	unsigned count = bnode_count(b);
	if (!count || count > bnode_capacity(vol->blocksize))
		return vol_error(vol, -EUCLEAN, blocknr, TUX3_NONE, 4,
				 "bnode: count %u out of range 1..%u", count,
				 bnode_capacity(vol->blocksize));
	uint64_t prev = lo;
	for (unsigned i = 0; i < count; i++) {
		uint64_t key = bnode_key(b, i), child = bnode_child(b, i);
		unsigned off = BNODE_HEADER + BNODE_ENTRY * i;
		if (i > 0) {
			if (key <= prev)
				return vol_error(vol, -EUCLEAN, blocknr,
						 TUX3_NONE, off, "bnode: key %"
						 PRIu64 " of entry %u not above "
						 "%" PRIu64 " (keys out of order "
						 "or below the parent's range)",
						 key, i, prev);
			if (key >= hi)
				return vol_error(vol, -EUCLEAN, blocknr,
						 TUX3_NONE, off, "bnode: key %"
						 PRIu64 " of entry %u beyond the "
						 "parent's limit %" PRIu64, key,
						 i, hi);
			prev = key;
		}
		if (child < vol->reserved_blocks || child >= vol->volblocks)
			return vol_error(vol, -EUCLEAN, blocknr, TUX3_NONE,
					 off + 8, "bnode: child block %" PRIu64
					 " of entry %u outside the volume",
					 child, i);
	}
	return 0;
}

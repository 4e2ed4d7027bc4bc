/*
 * ileaf (inode table leaf, magic 0x90de) and oleaf (orphan table leaf,
 * magic 0x6eaf): one layout.
 *   be16 magic, be16 count, be32 pad, be64 ibase, attribute blobs growing
 *   up from byte 16, and a dictionary of count be16 end offsets (relative
 *   to byte 16) growing down from the block end: entry k (1-based) at
 *   blocksize - 2k ends the blob of inum ibase + k - 1.
 */
#include <inttypes.h>
#include "internal.h"

static inline unsigned dict_end(const uint8_t *leaf, unsigned blocksize,
				unsigned k)
{
	return k ? be16(leaf + blocksize - 2 * k) : 0;
}

int ileaf_check(struct tux3_volume *vol, const uint8_t *leaf,
		uint64_t blocknr, uint64_t lo, uint64_t hi, unsigned magic)
{
	unsigned bs = vol->blocksize;
	const char *what = magic == TUX3_MAGIC_ILEAF ? "ileaf" : "oleaf";

	if (be16(leaf) != magic)
		return vol_error(vol, -EUCLEAN, blocknr, TUX3_NONE, 0,
				 "%s: bad magic 0x%04x (expected 0x%04x)", what,
				 be16(leaf), magic);
	unsigned count = ileaf_count(leaf);
	uint64_t ibase = be64(leaf + 8);
	if (count > (bs - ILEAF_HEADER) / 2)
		return vol_error(vol, -EUCLEAN, blocknr, TUX3_NONE, 2,
				 "%s: count %u exceeds the block", what, count);
	if (ibase >= TUX3_KEY_LIMIT || ibase < lo)
		return vol_error(vol, -EUCLEAN, blocknr, TUX3_NONE, 8,
				 "%s: ibase %" PRIu64 " below the key range "
				 "%" PRIu64 "..%" PRIu64, what, ibase, lo, hi);
	unsigned limit = bs - ILEAF_HEADER - 2 * count, prev = 0;
	uint64_t last_used = 0;
	bool any = false;
	for (unsigned k = 1; k <= count; k++) {
		unsigned end = dict_end(leaf, bs, k);
		if (end < prev || end > limit)
			return vol_error(vol, -EUCLEAN, blocknr,
					 ibase + k - 1, bs - 2 * k,
					 "%s: dictionary entry %u (offset %u) "
					 "out of order or past the free space "
					 "(previous %u, limit %u)", what, k,
					 end, prev, limit);
		if (end > prev) {
			last_used = ibase + k - 1;
			any = true;
		}
		prev = end;
	}
	if (any && last_used >= hi)
		return vol_error(vol, -EUCLEAN, blocknr, last_used, TUX3_NONE,
				 "%s: inode %" PRIu64 " beyond the key limit %"
				 PRIu64, what, last_used, hi);
	return 0;
}

int ileaf_blob(const uint8_t *leaf, unsigned blocksize, uint64_t inum,
	       const uint8_t **blob, unsigned *len)
{
	uint64_t ibase = ileaf_ibase(leaf);
	unsigned count = ileaf_count(leaf);

	*blob = NULL;
	*len = 0;
	if (inum < ibase || inum - ibase >= count)
		return 0;
	unsigned k = (unsigned)(inum - ibase) + 1;
	unsigned start = dict_end(leaf, blocksize, k - 1);
	unsigned end = dict_end(leaf, blocksize, k);
	*blob = leaf + ILEAF_HEADER + start;
	*len = end - start;
	return 0;
}

static int itree_leaf_check(struct tux3_volume *vol, const uint8_t *leaf,
			    uint64_t blocknr, uint64_t lo, uint64_t hi)
{
	return ileaf_check(vol, leaf, blocknr, lo, hi, TUX3_MAGIC_ILEAF);
}

static int otree_leaf_check(struct tux3_volume *vol, const uint8_t *leaf,
			    uint64_t blocknr, uint64_t lo, uint64_t hi)
{
	return ileaf_check(vol, leaf, blocknr, lo, hi, TUX3_MAGIC_OLEAF);
}

const struct btree_ops itree_ops = {
	.name = "inode table",
	.leaf_magic = TUX3_MAGIC_ILEAF,
	.leaf_check = itree_leaf_check,
};

const struct btree_ops otree_ops = {
	.name = "orphan table",
	.leaf_magic = TUX3_MAGIC_OLEAF,
	.leaf_check = otree_leaf_check,
};

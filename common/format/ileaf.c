/*
 * ileaf (inode table leaf, magic 0x90de) and oleaf (orphan table leaf,
 * magic 0x6eaf): one layout.
 *   be16 magic, be16 count, be32 pad, be64 ibase, attribute blobs growing
 *   up from byte 16, and a dictionary of count be16 end offsets (relative
 *   to byte 16) growing down from the block end: entry k (1-based) at
 *   blocksize - 2k ends the blob of inum ibase + k - 1.
 */
#include <inttypes.h>
#include "format/format.h"

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

unsigned ileaf_valid_prefix(const uint8_t *leaf, unsigned blocksize)
{
	unsigned count = ileaf_count(leaf);
	if (count > (blocksize - ILEAF_HEADER) / 2)
		return 0;
	unsigned limit = blocksize - ILEAF_HEADER - 2 * count, prev = 0, k;
	for (k = 1; k <= count; k++) {
		unsigned end = dict_end(leaf, blocksize, k);
		if (end < prev || end > limit)
			break;
		prev = end;
	}
	return k - 1;
}

int ileaf_check_prefix(struct tux3_volume *vol, const uint8_t *leaf,
		       uint64_t blocknr, uint64_t inum)
{
	unsigned bs = vol->blocksize;
	if (be16(leaf) != TUX3_MAGIC_ILEAF)
		return vol_error(vol, -EUCLEAN, blocknr, inum, 0, "ileaf: bad "
				 "magic 0x%04x (expected 0x%04x)", be16(leaf),
				 TUX3_MAGIC_ILEAF);
	unsigned count = ileaf_count(leaf);
	uint64_t ibase = be64(leaf + 8);
	if (count > (bs - ILEAF_HEADER) / 2 || ibase > inum)
		return vol_error(vol, -EUCLEAN, blocknr, inum, 2, "ileaf: "
				 "count %u or ibase %" PRIu64 " cannot hold "
				 "inode %" PRIu64, count, ibase, inum);
	unsigned valid = ileaf_valid_prefix(leaf, bs);
	if (valid < count && inum - ibase >= valid)
		return vol_error(vol, -EUCLEAN, blocknr, ibase + valid,
				 bs - 2 * (valid + 1), "ileaf: dictionary "
				 "entry %u out of order or past the free "
				 "space", valid + 1);
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

int ileaf_each(const uint8_t *leaf, unsigned blocksize, ileaf_blob_fn fn,
	       void *ctx)
{
	uint64_t ibase = ileaf_ibase(leaf);
	for (unsigned k = 0; k < ileaf_count(leaf); k++) {
		const uint8_t *blob;
		unsigned len;
		ileaf_blob(leaf, blocksize, ibase + k, &blob, &len);
		int r = len ? fn(ctx, ibase + k, blob, len) : 0;
		if (r)
			return r;
	}
	return 0;
}

static int itree_leaf_check(struct tux3_volume *vol, const uint8_t *leaf,
			    uint64_t blocknr, uint64_t lo, uint64_t hi)
{
	return ileaf_check(vol, leaf, blocknr, lo, hi, TUX3_MAGIC_ILEAF);
}

/* An orphan table leaf: an ileaf whose every record is one 2-byte
 * ORPHAN attribute head (kind 0, version 0), as the open reads it
 * (orphan.c), so that a walk finds the damage that would stop it. */
static int otree_leaf_check(struct tux3_volume *vol, const uint8_t *leaf,
			    uint64_t blocknr, uint64_t lo, uint64_t hi)
{
	int err = ileaf_check(vol, leaf, blocknr, lo, hi, TUX3_MAGIC_OLEAF);
	uint64_t ibase = ileaf_ibase(leaf);
	for (unsigned k = 0; !err && k < ileaf_count(leaf); k++) {
		const uint8_t *blob;
		unsigned len;
		ileaf_blob(leaf, vol->blocksize, ibase + k, &blob, &len);
		if (len && (len != 2 || be16(blob) != 0))
			err = vol_error(vol, -EUCLEAN, blocknr, ibase + k,
					TUX3_NONE, "oleaf: orphan %" PRIu64
					" has a %u-byte record (expected one "
					"2-byte ORPHAN head)", ibase + k, len);
	}
	return err;
}

static void itree_leaf_init(struct tux3_volume *vol, uint8_t *leaf,
			    uint64_t key)
{
	ileaf_init(leaf, vol->blocksize, TUX3_MAGIC_ILEAF, key);
}

static int itree_leaf_split(struct tux3_volume *vol, uint8_t *leaf,
			    uint8_t *newleaf, uint64_t *sep)
{
	return ileaf_split(leaf, newleaf, vol->blocksize, sep);
}

static void otree_leaf_init(struct tux3_volume *vol, uint8_t *leaf,
			    uint64_t key)
{
	ileaf_init(leaf, vol->blocksize, TUX3_MAGIC_OLEAF, key);
}

static int otree_leaf_split(struct tux3_volume *vol, uint8_t *leaf,
			    uint8_t *newleaf, uint64_t *sep)
{
	return ileaf_split(leaf, newleaf, vol->blocksize, sep);
}

const struct btree_ops itree_ops = {
	.name = "inode table",
	.leaf_magic = TUX3_MAGIC_ILEAF,
	.leaf_check = itree_leaf_check,
	.leaf_init = itree_leaf_init,
	.leaf_split = itree_leaf_split,
};

const struct btree_ops otree_ops = {
	.name = "orphan table",
	.leaf_magic = TUX3_MAGIC_OLEAF,
	.leaf_check = otree_leaf_check,
	.leaf_init = otree_leaf_init,
	.leaf_split = otree_leaf_split,
};

/*
 * ---- write side: pure buffer operations (no I/O, no logging) ----
 *
 * Every function below leaves a leaf that ileaf_check accepts (given the
 * key range the caller keeps for it), and keeps the free gap between the
 * blobs and the dictionary zeroed so that leaves are byte-deterministic.
 */

static inline void dict_set(uint8_t *leaf, unsigned blocksize, unsigned k,
			    unsigned end)
{
	put_be16(leaf + blocksize - 2 * k, (uint16_t)end);
}

/* Zero the gap between the blob area and the dictionary. */
static void ileaf_zero_gap(uint8_t *leaf, unsigned bs)
{
	unsigned count = ileaf_count(leaf);
	unsigned used = dict_end(leaf, bs, count);
	unsigned from = ILEAF_HEADER + used, to = bs - 2 * count;
	if (to > from)
		memset(leaf + from, 0, to - from);
}

void ileaf_init(uint8_t *leaf, unsigned blocksize, unsigned magic,
		uint64_t ibase)
{
	memset(leaf, 0, blocksize);
	put_be16(leaf, (uint16_t)magic);
	put_be64(leaf + 8, ibase & TUX3_MAX_BLOCK);
}

unsigned ileaf_free_space(const uint8_t *leaf, unsigned blocksize)
{
	unsigned count = ileaf_count(leaf);
	return blocksize - ILEAF_HEADER - dict_end(leaf, blocksize, count) -
	       2 * count;
}

/* Drop trailing empty slots so that count ends at the last live inode. */
static void ileaf_trim(uint8_t *leaf, unsigned bs)
{
	unsigned count = ileaf_count(leaf);
	while (count && dict_end(leaf, bs, count) ==
			dict_end(leaf, bs, count - 1)) {
		put_be16(leaf + bs - 2 * count, 0);
		count--;
	}
	put_be16(leaf + 2, (uint16_t)count);
}

int ileaf_set_blob(uint8_t *leaf, unsigned bs, uint64_t inum,
		   const uint8_t *blob, unsigned len)
{
	uint64_t ibase = ileaf_ibase(leaf);
	unsigned count = ileaf_count(leaf);

	if (inum < ibase || inum >= TUX3_KEY_LIMIT)
		return -ERANGE;
	if (len && !blob)
		return -EINVAL;
	if (inum - ibase >= (bs - ILEAF_HEADER) / 2)
		return len ? -ENOSPC : -ENOENT;
	unsigned k = (unsigned)(inum - ibase) + 1;
	unsigned used = dict_end(leaf, bs, count);

	if (k > count) {
		/* beyond the dictionary: a new slot (and empty ones between) */
		if (!len)
			return -ENOENT;
		if ((uint64_t)ILEAF_HEADER + used + len + 2 * k > bs)
			return -ENOSPC;
		memcpy(leaf + ILEAF_HEADER + used, blob, len);
		for (unsigned j = count + 1; j < k; j++)
			dict_set(leaf, bs, j, used);
		dict_set(leaf, bs, k, used + len);
		put_be16(leaf + 2, (uint16_t)k);
		return 0;
	}

	unsigned start = dict_end(leaf, bs, k - 1), end = dict_end(leaf, bs, k);
	unsigned old = end - start;
	if (!len && !old)
		return -ENOENT;
	if ((uint64_t)ILEAF_HEADER + used - old + len + 2 * count > bs)
		return -ENOSPC;
	/* shift the blobs above, then store the new one */
	memmove(leaf + ILEAF_HEADER + start + len, leaf + ILEAF_HEADER + end,
		used - end);
	if (len)
		memcpy(leaf + ILEAF_HEADER + start, blob, len);
	for (unsigned j = k; j <= count; j++)
		dict_set(leaf, bs, j, dict_end(leaf, bs, j) + len - old);
	if (!len)
		ileaf_trim(leaf, bs);
	ileaf_zero_gap(leaf, bs);
	return 0;
}

/*
 * Split rule: only live inodes move, and each half keeps at least one.
 * For every cut between two consecutive live inodes a < b, the left leaf
 * would keep slots ibase..a (its trailing empty slots trimmed) and the new
 * leaf would hold b..last live with ibase b (its leading empty slots
 * trimmed); each side costs its blob bytes plus 2 bytes per slot.  We take
 * the cut that minimises the larger side (the lowest such cut on a tie).
 * The separator, the new leaf's ibase, is b: the first inum moved.  The
 * free inums between a and b stay in the left leaf's key range.
 */
int ileaf_split(uint8_t *leaf, uint8_t *newleaf, unsigned bs,
		uint64_t *newbase)
{
	uint64_t ibase = ileaf_ibase(leaf);
	unsigned count = ileaf_count(leaf);
	unsigned used = dict_end(leaf, bs, count);
	unsigned best_a = 0, best_b = 0, best_cost = ~0u, prev_live = 0;

	for (unsigned k = 1; k <= count; k++) {
		if (dict_end(leaf, bs, k) == dict_end(leaf, bs, k - 1))
			continue;
		if (prev_live) {
			unsigned a = prev_live, b = k;
			unsigned left = dict_end(leaf, bs, a) + 2 * a;
			unsigned right = used - dict_end(leaf, bs, b - 1) +
					 2 * (count - b + 1);
			unsigned cost = left > right ? left : right;
			if (cost < best_cost) {
				best_cost = cost;
				best_a = a;
				best_b = b;
			}
		}
		prev_live = k;
	}
	if (!best_b && prev_live > 1) {
		/* one inode, above the leaf's base: it moves to a leaf of
		 * its own, and the range below it is left empty (an inode
		 * too big to share this leaf with it fits there) */
		unsigned from = dict_end(leaf, bs, prev_live - 1);
		ileaf_init(newleaf, bs, be16(leaf), ibase + prev_live - 1);
		memcpy(newleaf + ILEAF_HEADER, leaf + ILEAF_HEADER + from,
		       used - from);
		dict_set(newleaf, bs, 1, used - from);
		put_be16(newleaf + 2, 1);
		for (unsigned j = 1; j <= count; j++)
			put_be16(leaf + bs - 2 * j, 0);
		put_be16(leaf + 2, 0);
		ileaf_zero_gap(leaf, bs);
		*newbase = ibase + prev_live - 1;
		return 0;
	}
	if (!best_b && prev_live == 1 && ibase + 1 < TUX3_KEY_LIMIT) {
		/* one inode at the base: the range above it goes to an empty
		 * leaf, where an inode there has the room to itself */
		for (unsigned j = 2; j <= count; j++)
			put_be16(leaf + bs - 2 * j, 0);
		put_be16(leaf + 2, 1);
		ileaf_zero_gap(leaf, bs);
		ileaf_init(newleaf, bs, be16(leaf), ibase + 1);
		*newbase = ibase + 1;
		return 0;
	}
	if (!best_b)
		return -EINVAL;	/* no inode: nothing to split */

	unsigned from = dict_end(leaf, bs, best_b - 1);
	unsigned moved = count - best_b + 1;
	ileaf_init(newleaf, bs, be16(leaf), ibase + best_b - 1);
	memcpy(newleaf + ILEAF_HEADER, leaf + ILEAF_HEADER + from, used - from);
	for (unsigned j = 1; j <= moved; j++)
		dict_set(newleaf, bs, j,
			 dict_end(leaf, bs, best_b + j - 1) - from);
	put_be16(newleaf + 2, (uint16_t)moved);

	for (unsigned j = best_a + 1; j <= count; j++)
		put_be16(leaf + bs - 2 * j, 0);
	put_be16(leaf + 2, (uint16_t)best_a);
	ileaf_zero_gap(leaf, bs);
	*newbase = ibase + best_b - 1;
	return 0;
}

int ileaf_split_off(uint8_t *leaf, uint8_t *newleaf, unsigned bs,
		    uint64_t *newbase)
{
	uint64_t ibase = ileaf_ibase(leaf);
	unsigned count = ileaf_count(leaf), first = 0;
	unsigned used = dict_end(leaf, bs, count);

	for (unsigned k = 1; k <= count && !first; k++)
		if (dict_end(leaf, bs, k) > dict_end(leaf, bs, k - 1))
			first = k;
	if (!first)
		return -EINVAL;
	/* the slots before the first live inode are empty: its blob
	 * starts at offset 0 */
	unsigned moved = count - first + 1;
	ileaf_init(newleaf, bs, be16(leaf), ibase + first - 1);
	memcpy(newleaf + ILEAF_HEADER, leaf + ILEAF_HEADER, used);
	for (unsigned j = 1; j <= moved; j++)
		dict_set(newleaf, bs, j, dict_end(leaf, bs, first + j - 1));
	put_be16(newleaf + 2, (uint16_t)moved);
	for (unsigned j = 1; j <= count; j++)
		put_be16(leaf + bs - 2 * j, 0);
	put_be16(leaf + 2, 0);
	ileaf_zero_gap(leaf, bs);
	*newbase = ibase + first - 1;
	return 0;
}

bool ileaf_reaches(const uint8_t *leaf, unsigned bs, uint64_t inum)
{
	uint64_t ibase = ileaf_ibase(leaf);
	return inum >= ibase && inum - ibase < (bs - ILEAF_HEADER) / 2;
}

bool ileaf_empty(const uint8_t *leaf, unsigned bs)
{
	return dict_end(leaf, bs, ileaf_count(leaf)) == 0;
}

int ileaf_find_free_inum(const uint8_t *leaf, unsigned bs, uint64_t goal,
			 uint64_t limit, uint64_t *inum)
{
	uint64_t ibase = ileaf_ibase(leaf);
	unsigned count = ileaf_count(leaf);
	uint64_t at = goal < ibase ? ibase : goal;

	if (limit > TUX3_KEY_LIMIT)
		limit = TUX3_KEY_LIMIT;
	for (; at < limit; at++) {
		if (at - ibase >= count ||
		    dict_end(leaf, bs, (unsigned)(at - ibase) + 1) ==
		    dict_end(leaf, bs, (unsigned)(at - ibase))) {
			*inum = at;
			return 0;
		}
	}
	return -ENOENT;
}

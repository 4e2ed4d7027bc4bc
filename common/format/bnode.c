/*
 * bnode: the index node of every Tux3 B-tree.
 *   be16 magic 0xb4de, be16 unused, be32 count, then count entries of
 *   {be64 key, be64 child}.  Keys lie between pointers: entry i covers
 *   [key_i, key_i+1); entry 0's key is not used for search.
 */
#include <inttypes.h>
#include "format/format.h"

unsigned bnode_capacity(unsigned blocksize)
{
	return (blocksize - BNODE_HEADER) / BNODE_ENTRY;
}

/* The last entry whose key is not above key (entry 0's key is not
 * looked at), scanning from the front: on a node whose keys are out of
 * order (fsck's and replay's paths through a damaged tree) the answer is
 * the entry before the first key above key. */
unsigned bnode_lookup(const uint8_t *b, uint64_t key)
{
	unsigned count = bnode_count(b), i;
	for (i = 1; i < count; i++)
		if (bnode_key(b, i) > key)
			break;
	return i - 1;
}

/* bnode_lookup by halves, for a node whose keys bnode_check found in
 * order: an inode table grown in inode order has its newest leaves at
 * the end of a full index node, and the scan made every probe cost the
 * node's width. */
unsigned bnode_search(const uint8_t *b, uint64_t key)
{
	unsigned lo = 1, hi = bnode_count(b);	/* the answer + 1 in [lo, hi] */
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		if (bnode_key(b, mid) > key)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo - 1;
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

/*
 * Editing bnodes.  The same functions serve the B-tree engine when it
 * changes a tree and log replay when it applies the BNODE_* records that
 * describe those changes, so the two can never disagree.  Each checks the
 * image it is given and returns -ENOSPC, -ENOENT, -EEXIST or -EINVAL
 * rather than trusting it.
 */
static void bnode_set(uint8_t *b, unsigned i, uint64_t key, uint64_t child)
{
	put_be64(b + BNODE_HEADER + BNODE_ENTRY * i, key);
	put_be64(b + BNODE_HEADER + BNODE_ENTRY * i + 8, child);
}

static void bnode_move(uint8_t *b, unsigned to, unsigned from, unsigned n)
{
	memmove(b + BNODE_HEADER + BNODE_ENTRY * to,
		b + BNODE_HEADER + BNODE_ENTRY * from, (size_t)n * BNODE_ENTRY);
}

/* Index of the entry whose key is exactly key. */
static int bnode_find_exact(const uint8_t *b, uint64_t key, unsigned *index)
{
	unsigned count = bnode_count(b);
	unsigned i = count ? bnode_lookup(b, key) : 0;
	if (!count || bnode_key(b, i) != key)
		return -ENOENT;
	*index = i;
	return 0;
}

void bnode_init(uint8_t *b, unsigned blocksize)
{
	memset(b, 0, blocksize);
	put_be16(b, TUX3_MAGIC_BNODE);
}

/* A new root over one child (count 1) or two (count 2, split at rkey). */
int bnode_init_root(uint8_t *b, unsigned blocksize, unsigned count,
		    uint64_t left, uint64_t right, uint64_t rkey)
{
	if (count != 1 && count != 2)
		return -EINVAL;
	bnode_init(b, blocksize);
	put_be32(b + 4, count);
	bnode_set(b, 0, 0, left);
	if (count == 2)
		bnode_set(b, 1, rkey, right);
	return 0;
}

/* Insert {key -> child} after the entry covering key. */
int bnode_add(uint8_t *b, unsigned blocksize, uint64_t key, uint64_t child)
{
	unsigned n = bnode_count(b);
	if (n >= bnode_capacity(blocksize))
		return -ENOSPC;
	unsigned i = n ? bnode_lookup(b, key) + 1 : 0;
	if (i && bnode_key(b, i - 1) == key)
		return -EEXIST;
	bnode_move(b, i + 1, i, n - i);
	bnode_set(b, i, key, child);
	put_be32(b + 4, n + 1);
	return 0;
}

/* Point the entry with this exact key at another child. */
int bnode_update(uint8_t *b, uint64_t key, uint64_t child)
{
	unsigned i;
	int err = bnode_find_exact(b, key, &i);
	if (!err)
		bnode_set(b, i, key, child);
	return err;
}

/*
 * bnode_update for a node whose entry 0 has a damaged key (salvage): a
 * key that falls in entry 0's range (below entry 1's key) names entry 0,
 * whose key no lookup reads; the entry is set whole, key included.
 */
int bnode_update_first(uint8_t *b, uint64_t key, uint64_t child)
{
	unsigned count = bnode_count(b);
	if (!count || bnode_lookup(b, key) != 0)
		return -ENOENT;
	bnode_set(b, 0, key, child);
	return 0;
}

/* Move entries pos.. of src into the empty bnode dst. */
int bnode_split(uint8_t *src, unsigned pos, uint8_t *dst, unsigned blocksize)
{
	unsigned n = bnode_count(src);
	if (pos > n)
		return -EINVAL;
	bnode_init(dst, blocksize);
	memcpy(dst + BNODE_HEADER, src + BNODE_HEADER + BNODE_ENTRY * pos,
	       (size_t)(n - pos) * BNODE_ENTRY);
	put_be32(dst + 4, n - pos);
	put_be32(src + 4, pos);
	return 0;
}

/* Append all of src's entries to dst. */
int bnode_merge(uint8_t *dst, const uint8_t *src, unsigned blocksize)
{
	unsigned n = bnode_count(dst), m = bnode_count(src);
	if (n + m > bnode_capacity(blocksize))
		return -ENOSPC;
	memcpy(dst + BNODE_HEADER + BNODE_ENTRY * n, src + BNODE_HEADER,
	       (size_t)m * BNODE_ENTRY);
	put_be32(dst + 4, n + m);
	return 0;
}

/* Remove count entries starting at the one with this exact key. */
int bnode_del(uint8_t *b, uint64_t key, unsigned count)
{
	unsigned i, n = bnode_count(b);
	int err = bnode_find_exact(b, key, &i);
	if (err)
		return err;
	if (!count || count > n - i)
		return -EINVAL;
	bnode_move(b, i, i + count, n - i - count);
	put_be32(b + 4, n - count);
	return 0;
}

/* Change the separator key from -> to. */
int bnode_adjust(uint8_t *b, uint64_t from, uint64_t to)
{
	unsigned i;
	int err = bnode_find_exact(b, from, &i);
	if (!err)
		put_be64(b + BNODE_HEADER + BNODE_ENTRY * i, to);
	return err;
}

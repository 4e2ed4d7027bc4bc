/*
 * dleaf (file extent leaf, magic 0xbeaf).
 *   be16 magic, be16 count, be32 unused, then count 16-byte entries:
 *   word 0 = version_hi:16 | logical:48, word 1 = version_lo:16 | physical:48.
 * An extent runs from its logical address to the next entry's; physical 0
 * is a hole, and the last entry is a sentinel (physical 0) ending the
 * previous extent.
 */
#include <inttypes.h>
#include "format/format.h"

void dleaf_entry_get(const uint8_t *leaf, unsigned i, struct dleaf_entry *e)
{
	const uint8_t *p = leaf + DLEAF_HEADER + DLEAF_ENTRY * i;
	uint64_t w0 = be64(p), w1 = be64(p + 8);
	e->logical = w0 & TUX3_MAX_BLOCK;
	e->physical = w1 & TUX3_MAX_BLOCK;
	e->version = (uint32_t)((w0 >> 48) << 16 | (w1 >> 48));
}

unsigned dleaf_lower_bound(const uint8_t *leaf, unsigned n, uint64_t key)
{
	unsigned lo = 0, hi = n;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		const uint8_t *p = leaf + DLEAF_HEADER + DLEAF_ENTRY * mid;
		if ((be64(p) & TUX3_MAX_BLOCK) < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
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

static void dtree_leaf_init(struct tux3_volume *vol, uint8_t *leaf,
			    uint64_t key)
{
	(void)vol; (void)key;
	dleaf_init(leaf);
}

static int dtree_leaf_split(struct tux3_volume *vol, uint8_t *leaf,
			    uint8_t *newleaf, uint64_t *sep)
{
	int64_t s = dleaf_split(leaf, newleaf, vol->blocksize);
	if (s < 0)
		return (int)s;
	*sep = (uint64_t)s;
	return 0;
}

const struct btree_ops dtree_ops = {
	.name = "data tree",
	.leaf_magic = TUX3_MAGIC_DLEAF,
	.leaf_check = dleaf_check,
	.leaf_init = dtree_leaf_init,
	.leaf_split = dtree_leaf_split,
};

/*
 * ---- write side: pure buffer operations (no I/O, no logging) ----
 *
 * Canonical form produced here (given a canonical leaf to start from):
 *   - an all-hole leaf has count 0;
 *   - otherwise the first entry's logical is the leaf's lower key bound lo
 *     (a hole entry first when data starts later, as the reference does),
 *     the last entry is a sentinel (physical 0) at the end of the last
 *     mapped extent, no two neighbours are holes, and no extent continues
 *     its predecessor physically (such neighbours are merged).
 * Only the junctions a write creates are normalised; the entries it does
 * not touch are kept as they are.  Versions are always written as 0.
 */

static void dleaf_entry_put(uint8_t *leaf, unsigned i, uint64_t logical,
			    uint64_t physical)
{
	uint8_t *p = leaf + DLEAF_HEADER + DLEAF_ENTRY * i;
	put_be64(p, logical & TUX3_MAX_BLOCK);
	put_be64(p + 8, physical & TUX3_MAX_BLOCK);
}

static inline unsigned dleaf_capacity(unsigned blocksize)
{
	return (blocksize - DLEAF_HEADER) / DLEAF_ENTRY;
}

/* Physical block of logical x continuing extent e (0 if e is a hole). */
static inline uint64_t dleaf_cont(const struct dleaf_entry *e, uint64_t x)
{
	return e->physical ? e->physical + (x - e->logical) : 0;
}

/* Zero the entry slots from count up, so leaves are deterministic. */
static void dleaf_set_count(uint8_t *leaf, unsigned bs, unsigned count)
{
	put_be16(leaf + 2, (uint16_t)count);
	unsigned from = DLEAF_HEADER + DLEAF_ENTRY * count;
	if (from < bs)
		memset(leaf + from, 0, bs - from);
}

void dleaf_init(uint8_t *leaf)
{
	memset(leaf, 0, DLEAF_HEADER);
	put_be16(leaf, TUX3_MAGIC_DLEAF);
}

int dleaf_write_extent(uint8_t *leaf, unsigned bs, uint64_t logical,
		       uint64_t physical, uint64_t count, uint64_t lo,
		       uint64_t hi, dleaf_freed_fn freed, void *ctx)
{
	unsigned n = dleaf_count(leaf), cap = dleaf_capacity(bs);
	uint64_t L = logical, E = logical + count;

	if (be16(leaf) != TUX3_MAGIC_DLEAF || n > cap)
		return -EUCLEAN;
	if (!count)
		return -EINVAL;
	if (hi > TUX3_KEY_LIMIT || L < lo || count > hi - L)
		return -ERANGE;
	if (physical && (physical > TUX3_MAX_BLOCK ||
			 count > TUX3_MAX_BLOCK - physical + 1))
		return -EINVAL;

	/* prefix = old[0..i) (logical < L), dropped = old[i..s),
	 * suffix = old[s..n) (logical >= E) */
	unsigned i = dleaf_lower_bound(leaf, n, L);
	unsigned s = dleaf_lower_bound(leaf, n, E);
	struct dleaf_entry e, cover = { 0, 0, 0 };
	bool have_cover = false;	/* an extent (not the sentinel) covers E */
	if (s < i)
		s = i;	/* only on a leaf out of order */
	if (s > 0 && s < n) {
		dleaf_entry_get(leaf, s - 1, &cover);
		have_cover = true;
	}

	/* The middle entries, merged against what precedes them. */
	struct dleaf_entry mid[3], last;
	unsigned nmid = 0;
	bool have_last = false;
	if (i > 0) {
		dleaf_entry_get(leaf, i - 1, &last);
		have_last = true;
	}
	struct dleaf_entry cand[2];
	unsigned ncand = 0;
	cand[ncand++] = (struct dleaf_entry){ L, physical, 0 };
	uint64_t suffix_first = 0;
	bool suffix_at_E = false;
	if (s < n) {
		dleaf_entry_get(leaf, s, &e);
		suffix_first = e.logical;
		suffix_at_E = e.logical == E;
	}
	if (!suffix_at_E)
		cand[ncand++] = (struct dleaf_entry){
			E, have_cover ? dleaf_cont(&cover, E) : 0, 0 };
	/* with nothing before L, the leaf starts at lo */
	if (!have_last && L > lo) {
		mid[nmid++] = (struct dleaf_entry){ lo, 0, 0 };
		last = mid[0];
		have_last = true;
	}
	for (unsigned c = 0; c < ncand; c++) {
		if (have_last &&
		    cand[c].physical == dleaf_cont(&last, cand[c].logical))
			continue;
		mid[nmid++] = cand[c];
		last = cand[c];
		have_last = true;
	}
	/* does the first suffix entry continue what precedes it? */
	unsigned s2 = s;
	if (s < n) {
		dleaf_entry_get(leaf, s, &e);
		if (have_last && e.physical == dleaf_cont(&last, suffix_first))
			s2++;
	}
	unsigned newcount = i + nmid + (n - s2);
	if (newcount > cap)
		return -ENOSPC;

	/* report what the write unmaps, before touching the leaf */
	if (freed) {
		unsigned j = i ? i - 1 : 0;
		for (; j + 1 < n && j < s; j++) {
			struct dleaf_entry a, b;
			dleaf_entry_get(leaf, j, &a);
			dleaf_entry_get(leaf, j + 1, &b);
			uint64_t x0 = a.logical > L ? a.logical : L;
			uint64_t x1 = b.logical < E ? b.logical : E;
			if (!a.physical || x0 >= x1)
				continue;
			uint64_t p0 = dleaf_cont(&a, x0);
			if (physical && p0 == physical + (x0 - L))
				continue;	/* stays mapped as it was */
			freed(ctx, p0, x1 - x0);
		}
	}

	/* lay out: mid after the prefix, then the suffix from s2 */
	memmove(leaf + DLEAF_HEADER + DLEAF_ENTRY * (i + nmid),
		leaf + DLEAF_HEADER + DLEAF_ENTRY * s2,
		DLEAF_ENTRY * (n - s2));
	for (unsigned c = 0; c < nmid; c++)
		dleaf_entry_put(leaf, i + c, mid[c].logical, mid[c].physical);
	if (newcount == 1) {
		dleaf_entry_get(leaf, 0, &e);
		if (!e.physical)
			newcount = 0;	/* all hole */
	}
	dleaf_set_count(leaf, bs, newcount);
	return 0;
}

int dleaf_chop(uint8_t *leaf, unsigned bs, uint64_t from,
	       dleaf_freed_fn freed, void *ctx)
{
	unsigned n = dleaf_count(leaf);
	struct dleaf_entry a, b;

	if (be16(leaf) != TUX3_MAGIC_DLEAF || n > dleaf_capacity(bs))
		return -EUCLEAN;
	/* k = first entry at or beyond from */
	unsigned k = 0;
	while (k < n) {
		dleaf_entry_get(leaf, k, &a);
		if (a.logical >= from)
			break;
		k++;
	}
	if (k == n)
		return 0;	/* from is at or past the sentinel */
	if (freed) {
		for (unsigned j = k ? k - 1 : 0; j + 1 < n; j++) {
			dleaf_entry_get(leaf, j, &a);
			dleaf_entry_get(leaf, j + 1, &b);
			uint64_t x0 = a.logical > from ? a.logical : from;
			if (a.physical && x0 < b.logical)
				freed(ctx, dleaf_cont(&a, x0), b.logical - x0);
		}
	}
	unsigned newcount = k;
	if (k > 0) {
		dleaf_entry_get(leaf, k - 1, &a);
		if (a.physical)
			dleaf_entry_put(leaf, newcount++, from, 0);
		/* else the hole before from becomes the sentinel */
	}
	if (newcount == 1)
		newcount = 0;	/* only a hole is left */
	dleaf_set_count(leaf, bs, newcount);
	return 0;
}

/*
 * Split rule: the new leaf takes entries m..count-1 (the old sentinel
 * included) and the old leaf keeps 0..m-1 plus a new sentinel at
 * old[m].logical, which is the separator (the new leaf's lower bound and
 * first logical).  m is the cut nearest count/2 with 1 <= m <= count-2
 * whose preceding entry old[m-1] is mapped (not a hole), so the left
 * sentinel never follows a hole and each side keeps a mapped extent.
 */
int64_t dleaf_split(uint8_t *leaf, uint8_t *newleaf, unsigned bs)
{
	unsigned n = dleaf_count(leaf), m = 0;
	struct dleaf_entry e;

	if (be16(leaf) != TUX3_MAGIC_DLEAF || n > dleaf_capacity(bs))
		return -EUCLEAN;
	if (n < 3)
		return -EINVAL;
	for (unsigned d = 0; d < n && !m; d++) {
		unsigned c[2] = { n / 2 - d, n / 2 + d };
		for (unsigned t = 0; t < 2 && !m; t++) {
			if (c[t] < 1 || c[t] > n - 2)
				continue;
			dleaf_entry_get(leaf, c[t] - 1, &e);
			if (e.physical)
				m = c[t];
		}
	}
	if (!m)
		return -EINVAL;
	dleaf_entry_get(leaf, m, &e);
	uint64_t sep = e.logical;
	memset(newleaf, 0, bs);
	dleaf_init(newleaf);
	memcpy(newleaf + DLEAF_HEADER, leaf + DLEAF_HEADER + DLEAF_ENTRY * m,
	       DLEAF_ENTRY * (n - m));
	put_be16(newleaf + 2, (uint16_t)(n - m));
	dleaf_entry_put(leaf, m, sep, 0);
	dleaf_set_count(leaf, bs, m + 1);
	return (int64_t)sep;
}

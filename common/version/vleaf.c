/*
 * vleaf: the versioned data leaf (doc/format.md section 17), the disk form
 * of a set of versioned extents (struct vextents, version.h) inside one
 * leaf of a data btree.  Its own magic keeps it apart from the 2014 dleaf
 * (0xbeaf), whose lengths are implicit and which cannot hold two versions
 * of one block.
 *
 * | Off | Size    | Field                         |
 * |-----|---------|-------------------------------|
 * | 0   | 2       | magic 0xbe7a                  |
 * | 2   | 2       | count: number of records      |
 * | 4   | 4       | 0 (spare)                     |
 * | 8   | 16 x n  | records                       |
 *
 * A record is two be64 words:
 *
 * | Word           | Bits   | Field                                 |
 * |----------------|--------|---------------------------------------|
 * | 0 (bytes 0-7)  | 16-63  | logical block                         |
 * |                | 0-15   | count: blocks, 1..65535               |
 * | 1 (bytes 8-15) | 16-63  | physical block (0 = a hole element)   |
 * |                | 4-15   | label (the version, 12 bits)          |
 * |                | 0-3    | flags: 1 ELIST (format.md 17.3c)      |
 *
 * i.e. word 0 = logical << 16 | count, word 1 = physical << 16 |
 * label << 4 | flags.  The record is the element [label, physical + i]
 * (a hole element [label, 0] when physical is 0) at logical + i for every
 * i < count.
 *
 * Rules (vleaf_check), for a leaf covering the key range [lo, hi):
 *   - magic 0xbe7a; the spare word is 0;
 *   - count <= capacity = (blocksize - 8) / 16;
 *   - each record: count 1..65535, flags 0 or ELIST, lo <= logical and
 *     logical + count <= hi (a record never crosses a leaf boundary: a
 *     split cuts it in two);
 *   - records strictly increase in (logical, label);
 *   - records of one label do not overlap (one element per label per
 *     block);
 *   - a mapped record's blocks [physical, physical + count) lie inside
 *     the volume, [1, volblocks);
 *   - an ELIST record has count 1, label 0, a chain block inside the
 *     volume, and no other record covers its logical block.
 * Labels are not checked against the version table here; fsck does that
 * (17.5), together with the element-list rules across records.
 *
 * Limit: every element of one logical block is a record of its own (they
 * differ in label), and a leaf cannot be split inside one block, so a
 * leaf holds at most capacity elements of one logical block (255 at 4 KiB,
 * 31 at 512 bytes).  vleaf_split reports -ENOSPC for such a leaf.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "version/vinode.h"
#include "version/version.h"
#include "version/vleaf.h"

#define VLEAF_FLAGS_MASK	0xfu
#define VLEAF_LABEL_MASK	(VERSION_LABELS - 1)

unsigned vleaf_count(const uint8_t *leaf)
{
	return be16(leaf + 2);
}

unsigned vleaf_capacity(unsigned blocksize)
{
	return blocksize < VLEAF_HEADER ? 0 :
	       (blocksize - VLEAF_HEADER) / VLEAF_RECORD;
}

void vleaf_init(uint8_t *leaf)
{
	memset(leaf, 0, VLEAF_HEADER);
	put_be16(leaf, TUX3_MAGIC_VLEAF);
}

/* The raw fields of record i. */
struct vrec {
	uint64_t logical, physical;
	unsigned count, label, flags;
};

static void vrec_get(const uint8_t *leaf, unsigned i, struct vrec *r)
{
	const uint8_t *p = leaf + VLEAF_HEADER + VLEAF_RECORD * i;
	uint64_t w0 = be64(p), w1 = be64(p + 8);
	r->logical = w0 >> 16;
	r->count = (unsigned)(w0 & 0xffff);
	r->physical = w1 >> 16;
	r->label = (unsigned)(w1 >> 4) & VLEAF_LABEL_MASK;
	r->flags = (unsigned)w1 & VLEAF_FLAGS_MASK;
}

static void vrec_put(uint8_t *leaf, unsigned i, uint64_t logical,
		     unsigned count, unsigned label, uint64_t physical,
		     unsigned flags)
{
	uint8_t *p = leaf + VLEAF_HEADER + VLEAF_RECORD * i;
	put_be64(p, (logical & TUX3_MAX_BLOCK) << 16 | (count & 0xffff));
	put_be64(p + 8, (physical & TUX3_MAX_BLOCK) << 16 |
		 (uint64_t)(label & VLEAF_LABEL_MASK) << 4 |
		 (flags & VLEAF_FLAGS_MASK));
}

void vleaf_get(const uint8_t *leaf, unsigned i, struct vextent *r)
{
	struct vrec v;
	vrec_get(leaf, i, &v);
	r->logical = v.logical;
	r->count = v.count;
	r->label = (uint16_t)v.label;
	r->flags = (uint8_t)v.flags;
	r->phys = v.physical;
}

/* Set the count and zero the block past the records (deterministic). */
static void vleaf_set_count(uint8_t *leaf, unsigned bs, unsigned count)
{
	put_be16(leaf + 2, (uint16_t)count);
	unsigned from = VLEAF_HEADER + VLEAF_RECORD * count;
	if (from < bs)
		memset(leaf + from, 0, bs - from);
}

/*
 * The rules of the format.  With vol NULL: the structural rules only
 * (not the physical range) and no report, for the write side's sanity
 * checks of its input.
 */
static int vleaf_verify(struct tux3_volume *vol, const uint8_t *leaf,
			uint64_t blocknr, uint64_t lo, uint64_t hi,
			unsigned blocksize)
{
	unsigned count = vleaf_count(leaf);
	/* per label: index + 1 of its latest record (0: none yet) */
	uint16_t last[VERSION_LABELS];
	struct vrec r, prev = { 0 }, same;
	uint64_t reach = 0;	/* the end of every record so far */

#define BAD(off, ...) (vol ? vol_error(vol, -EUCLEAN, blocknr, TUX3_NONE, \
				       (off), __VA_ARGS__) : -EUCLEAN)
	if (be16(leaf) != TUX3_MAGIC_VLEAF)
		return BAD(0, "vleaf: bad magic 0x%04x (expected 0x%04x)",
			   be16(leaf), TUX3_MAGIC_VLEAF);
	if (be32(leaf + 4))
		return BAD(4, "vleaf: spare header word is 0x%08x, not 0",
			   be32(leaf + 4));
	if (count > vleaf_capacity(blocksize))
		return BAD(2, "vleaf: count %u exceeds the block (capacity %u)",
			   count, vleaf_capacity(blocksize));
	memset(last, 0, sizeof(last));
	for (unsigned i = 0; i < count; i++) {
		unsigned off = VLEAF_HEADER + VLEAF_RECORD * i;
		vrec_get(leaf, i, &r);
		if (!r.count)
			return BAD(off, "vleaf: record %u at logical %" PRIu64
				   " has count 0", i, r.logical);
		if (r.flags & ~VEXT_ELIST)
			return BAD(off + 8, "vleaf: record %u has flags 0x%x "
				   "(only 0x%x is defined)", i, r.flags,
				   VEXT_ELIST);
		if (r.flags && (r.count != 1 || r.label || !r.physical))
			return BAD(off, "vleaf: element-list record %u at "
				   "logical %" PRIu64 " has count %u, label "
				   "%u, chain %" PRIu64 " (must be 1, 0, a "
				   "block)", i, r.logical, r.count, r.label,
				   r.physical);
		if ((r.flags && reach > r.logical) ||
		    (i && (prev.flags & VEXT_ELIST) &&
		     r.logical == prev.logical))
			return BAD(off, "vleaf: record %u at logical %" PRIu64
				   " shares its block with an element-list "
				   "record", i, r.logical);
		if (r.logical < lo || r.logical + r.count > hi)
			return BAD(off, "vleaf: record %u %" PRIu64 "+%u "
				   "outside the key range %" PRIu64 "..%"
				   PRIu64, i, r.logical, r.count, lo, hi);
		if (i && (r.logical < prev.logical ||
			  (r.logical == prev.logical &&
			   r.label <= prev.label)))
			return BAD(off, "vleaf: record %u (logical %" PRIu64
				   ", label %u) not above the previous "
				   "(logical %" PRIu64 ", label %u)", i,
				   r.logical, r.label, prev.logical,
				   prev.label);
		if (last[r.label]) {
			/* sorted, and so far disjoint: only the label's
			 * latest record can reach this one */
			vrec_get(leaf, last[r.label] - 1u, &same);
			if (same.logical + same.count > r.logical)
				return BAD(off, "vleaf: record %u %" PRIu64
					   "+%u overlaps record %u %" PRIu64
					   "+%u of the same label %u", i,
					   r.logical, r.count,
					   last[r.label] - 1u, same.logical,
					   same.count, r.label);
		}
		if (vol && r.physical &&
		    !vol_extent_valid(vol, r.physical, r.count))
			return BAD(off + 8, "vleaf: record %u extent %" PRIu64
				   "+%u at logical %" PRIu64 " outside the "
				   "volume", i, r.physical, r.count,
				   r.logical);
		last[r.label] = (uint16_t)(i + 1);
		if (r.logical + r.count > reach)
			reach = r.logical + r.count;
		prev = r;
	}
	return 0;
#undef BAD
}

int vleaf_check(struct tux3_volume *vol, const uint8_t *leaf,
		uint64_t blocknr, uint64_t lo, uint64_t hi)
{
	return vleaf_verify(vol, leaf, blocknr, lo, hi, vol->blocksize);
}

int vleaf_load(const uint8_t *leaf, struct vextents *x)
{
	unsigned count = vleaf_count(leaf);
	if (count > x->cap - x->n)
		return -ENOSPC;
	for (unsigned i = 0; i < count; i++)
		vleaf_get(leaf, i, &x->r[x->n++]);
	return 0;
}

/* ---- write side ---- */

static int cmp_record(const void *a, const void *b)
{
	uint64_t xa = be64(a), xb = be64(b);
	uint64_t la = xa >> 16, lb = xb >> 16;
	if (la != lb)
		return la < lb ? -1 : 1;
	unsigned ea = (unsigned)(be64((const uint8_t *)a + 8) >> 4) &
		      VLEAF_LABEL_MASK;
	unsigned eb = (unsigned)(be64((const uint8_t *)b + 8) >> 4) &
		      VLEAF_LABEL_MASK;
	return ea < eb ? -1 : ea > eb;
}

static bool vextent_valid(const struct vextent *r)
{
	if (r->flags & ~VEXT_ELIST)
		return false;
	if (r->flags && (r->count != 1 || r->label || !r->phys))
		return false;
	return r->count && r->label < VERSION_LABELS &&
	       r->logical < TUX3_KEY_LIMIT &&
	       r->count <= TUX3_KEY_LIMIT - r->logical &&
	       (!r->phys || (r->phys <= TUX3_MAX_BLOCK &&
			     r->count <= TUX3_MAX_BLOCK - r->phys + 1));
}

/* The number of leaf records the part of r inside [lo, hi) takes; with
 * leaf, they are written there as records at, at + 1, ... */
static unsigned clip_records(const struct vextent *r, uint64_t lo,
			     uint64_t hi, uint8_t *leaf, unsigned at)
{
	uint64_t from = r->logical > lo ? r->logical : lo;
	uint64_t end = r->logical + r->count;
	unsigned n = 0;
	if (end > hi)
		end = hi;
	while (from < end) {
		uint64_t len = end - from;
		unsigned c = len > VLEAF_COUNT_MAX ? VLEAF_COUNT_MAX :
			     (unsigned)len;
		if (leaf)
			vrec_put(leaf, at + n, from, c, r->label, r->phys ?
				 r->phys + (from - r->logical) : 0, r->flags);
		n++;
		from += c;
	}
	return n;
}

uint64_t vleaf_store_count(const struct vextents *x, uint64_t lo,
			   uint64_t hi)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < x->n; i++)
		n += clip_records(&x->r[i], lo, hi, NULL, 0);
	return n;
}

int vleaf_store(uint8_t *leaf, unsigned blocksize, const struct vextents *x,
		uint64_t lo, uint64_t hi)
{
	unsigned cap = vleaf_capacity(blocksize);
	uint64_t n = 0;

	for (unsigned i = 0; i < x->n; i++) {
		if (!vextent_valid(&x->r[i]))
			return -EINVAL;
		n += clip_records(&x->r[i], lo, hi, NULL, 0);
	}
	if (n > cap)
		return -ENOSPC;
	vleaf_init(leaf);
	unsigned at = 0;
	for (unsigned i = 0; i < x->n; i++)
		at += clip_records(&x->r[i], lo, hi, leaf, at);
	/* records cut at lo (and pieces of over-long ones) move: re-sort */
	qsort(leaf + VLEAF_HEADER, at, VLEAF_RECORD, cmp_record);
	vleaf_set_count(leaf, blocksize, at);
	return 0;
}

/* Records of r[0..n) (sorted by logical) starting below key. */
static unsigned starts_below(const struct vextent *r, unsigned n,
			     uint64_t key)
{
	unsigned a = 0, b = n;
	while (a < b) {
		unsigned m = a + (b - a) / 2;
		if (r[m].logical < key)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* Ends of end[0..n) (sorted) at or below key. */
static unsigned ends_upto(const uint64_t *end, unsigned n, uint64_t key)
{
	unsigned a = 0, b = n;
	while (a < b) {
		unsigned m = a + (b - a) / 2;
		if (end[m] <= key)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/*
 * Split rule.  With separator s the left leaf keeps the records starting
 * below s (cut at s), the right leaf gets the records ending above s (cut
 * at s).  Both counts only change at a record's start + 1 or at its end,
 * so the candidates are every start, start + 1 and end strictly inside
 * (lo, hi).  A candidate must leave a record on each side and one side
 * with fewer records than the leaf had; the best has the smallest larger
 * side, then the fewest records cut, then comes first in the order
 * starts, ends, starts + 1 (so a cut inside records is the last resort).
 */
int64_t vleaf_split(uint8_t *leaf, uint8_t *newleaf, unsigned blocksize,
		    uint64_t lo, uint64_t hi)
{
	unsigned n = vleaf_count(leaf);
	int err;

	if ((err = vleaf_verify(NULL, leaf, 0, lo, hi, blocksize)))
		return err;
	if (n < 2)
		return -ENOSPC;
	struct vextent *r = malloc(n * sizeof(*r));
	uint64_t *end = malloc(n * sizeof(*end));
	if (!r || !end) {
		err = -ENOMEM;
		goto out;
	}
	for (unsigned i = 0; i < n; i++) {
		vleaf_get(leaf, i, &r[i]);
		end[i] = r[i].logical + r[i].count;
	}
	qsort(end, n, sizeof(*end), cmp_u64);

	uint64_t sep = 0;
	unsigned best_max = n + 1, best_sum = 0;
	for (unsigned kind = 0; kind < 3; kind++) {
		for (unsigned i = 0; i < n; i++) {
			uint64_t s = kind == 0 ? r[i].logical :
				     kind == 1 ? end[i] : r[i].logical + 1;
			if (s <= lo || s >= hi)
				continue;
			unsigned left = starts_below(r, n, s);
			unsigned right = n - ends_upto(end, n, s);
			if (!left || !right || (left == n && right == n))
				continue;
			unsigned mx = left > right ? left : right;
			unsigned sum = left + right;
			if (mx < best_max ||
			    (mx == best_max && sum < best_sum)) {
				best_max = mx;
				best_sum = sum;
				sep = s;
			}
		}
	}
	if (!sep) {
		err = -ENOSPC;
		goto out;
	}
	struct vextents x = { .r = r, .n = n, .cap = n };
	if ((err = vleaf_store(newleaf, blocksize, &x, sep, hi)) ||
	    (err = vleaf_store(leaf, blocksize, &x, lo, sep)))
		goto out;	/* cannot happen: each side has <= n records */
	err = 0;
out:
	free(r);
	free(end);
	return err ? err : (int64_t)sep;
}

/* ---- from the 2014 dleaf ---- */

int vleaf_from_dleaf(const uint8_t *dleaf, unsigned blocksize, uint64_t lo,
		     uint64_t hi, uint8_t *vleaf)
{
	unsigned n = dleaf_count(dleaf), cap = vleaf_capacity(blocksize);
	struct dleaf_entry e, next;

	if (be16(dleaf) != TUX3_MAGIC_DLEAF ||
	    n > (blocksize - DLEAF_HEADER) / DLEAF_ENTRY)
		return -EUCLEAN;
	/* pass 0 validates and counts, pass 1 writes */
	for (unsigned pass = 0; pass < 2; pass++) {
		uint64_t at = 0;
		if (pass)
			vleaf_init(vleaf);
		for (unsigned i = 0; i < n; i++) {
			dleaf_entry_get(dleaf, i, &e);
			if (e.version)
				return -EUCLEAN;
			if (i + 1 == n) {
				if (e.physical)	/* no sentinel */
					return -EUCLEAN;
				break;
			}
			dleaf_entry_get(dleaf, i + 1, &next);
			if (next.logical <= e.logical)
				return -EUCLEAN;
			if (!e.physical)
				continue;	/* a hole: no record */
			if (e.logical < lo || next.logical > hi ||
			    next.logical - e.logical >
			    TUX3_MAX_BLOCK - e.physical + 1)
				return -EUCLEAN;
			/* extents longer than a record can hold become
			 * several records */
			uint64_t logical = e.logical, phys = e.physical;
			uint64_t len = next.logical - e.logical;
			if (!pass) {
				at += (len + VLEAF_COUNT_MAX - 1) /
				      VLEAF_COUNT_MAX;
				if (at > cap)
					return -ENOSPC;
				continue;
			}
			while (len) {
				unsigned c = len > VLEAF_COUNT_MAX ?
					     VLEAF_COUNT_MAX : (unsigned)len;
				vrec_put(vleaf, (unsigned)at++, logical, c,
					 VERSION_ORIGIN, phys, 0);
				logical += c;
				phys += c;
				len -= c;
			}
		}
		if (pass)
			vleaf_set_count(vleaf, blocksize, (unsigned)at);
	}
	return 0;
}

/*
 * Layer: vleaf.c -- the versioned data leaf (magic 0xbe7a).
 *
 * Record sets come from a generator that drives vext_write/vext_delete on
 * a struct vtree (snapshots of the origin and of snapshots, writes by any
 * tagged version, deletes), so they carry the holes, relabels and
 * per-block element lists real files would.  Leaves are compared block by
 * block: every record expands to its (logical, label) -> phys elements,
 * and two leaves (or a leaf and a set) agree when the sorted expansions
 * are equal.
 */
#include "fixtures.h"
#include "version/version.h"
#include "version/vleaf.h"

#define VOLBLOCKS	(1u << 24)
#define MAXTAG		40
#define SETCAP		8192

/* ---- the record-set generator ---- */

struct gen {
	struct vtree vt;
	struct vdelete_plan plan;
	struct vextents x;
	uint32_t tag[MAXTAG];	/* tag[0] = 0: the origin */
	unsigned ntag;
	uint32_t nexttag;
	uint64_t nextphys, rng, base, span;
	unsigned maxcount;
};

static uint64_t rnd64(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s >> 11;
}

static unsigned rnd(struct gen *g, unsigned n)
{
	return (unsigned)(rnd64(&g->rng) % n);
}

static uint64_t gen_alloc(void *ctx)
{
	struct gen *g = ctx;
	if (rnd(g, 8) == 0)
		g->nextphys += 1 + rnd(g, 50);	/* not always contiguous */
	return g->nextphys++;
}

static struct gen *gen_new(uint64_t seed, uint64_t base, uint64_t span,
			   unsigned maxcount)
{
	struct gen *g = calloc(1, sizeof(*g));
	CHECK(g);
	vtree_init(&g->vt);
	g->x.r = calloc(SETCAP, sizeof(*g->x.r));
	CHECK(g->x.r);
	g->x.cap = SETCAP;
	g->ntag = 1;
	g->nexttag = 100;
	g->nextphys = 1000;
	g->rng = seed * 0x9e3779b97f4a7c15ull + 7;
	g->base = base;
	g->span = span;
	g->maxcount = maxcount;
	return g;
}

static void gen_free(struct gen *g)
{
	free(g->x.r);
	free(g);
}

static void fail_check(void *ctx, unsigned label, const char *what)
{
	(void)ctx;
	fprintf(stderr, "generated set: label %u: %s\n", label, what);
	exit(1);
}

/* One step: a snapshot, a delete or (mostly) a write of a few blocks. */
static void gen_step(struct gen *g)
{
	unsigned op = rnd(g, 100);
	if (op < 8 && g->ntag < MAXTAG) {
		unsigned of = rnd(g, g->ntag);
		int l = vtree_find_tag(&g->vt, g->tag[of]);
		CHECK(l >= 0);
		int s = vtree_snapshot(&g->vt, (unsigned)l, g->nexttag, 0);
		CHECK(s > 0);
		g->tag[g->ntag++] = g->nexttag++;
		return;
	}
	if (op < 11 && g->ntag > 2) {
		unsigned k = 1 + rnd(g, g->ntag - 1);
		CHECK_EQ(vtree_delete(&g->vt, g->tag[k], &g->plan), 0);
		CHECK_EQ(vext_delete(&g->vt, &g->plan, &g->x, NULL, NULL), 0);
		vtree_delete_done(&g->vt, &g->plan);
		g->tag[k] = g->tag[--g->ntag];
		return;
	}
	unsigned k = rnd(g, 3) == 0 ? 0 : rnd(g, g->ntag);
	int l = vtree_find_tag(&g->vt, g->tag[k]);
	CHECK(l >= 0);
	unsigned label = (unsigned)l;
	uint64_t off = rnd(g, (unsigned)g->span);
	uint64_t room = g->span - off;
	unsigned count = 1 + rnd(g, g->maxcount);
	if (count > room)
		count = (unsigned)room;
	static uint64_t written[VEXT_WRITE_MAX];
	int err = vext_write(&g->vt, &g->x, &label, g->base + off, count,
			     gen_alloc, g, written, 0);
	CHECK_EQ(err, 0);
}

/* ---- block-by-block expansion ---- */

struct blk {
	uint64_t logical, phys;
	unsigned label;
};

struct blks {
	struct blk *b;
	size_t n, cap;
};

static void blks_add_record(struct blks *s, const struct vextent *r,
			    uint64_t lo, uint64_t hi)
{
	for (uint64_t i = 0; i < r->count; i++) {
		uint64_t logical = r->logical + i;
		if (logical < lo || logical >= hi)
			continue;
		if (s->n == s->cap) {
			s->cap = s->cap ? 2 * s->cap : 1024;
			s->b = realloc(s->b, s->cap * sizeof(*s->b));
			CHECK(s->b);
		}
		s->b[s->n++] = (struct blk){ logical,
			r->phys ? r->phys + i : 0, r->label };
	}
}

static void blks_add_set(struct blks *s, const struct vextent *r, unsigned n,
			 uint64_t lo, uint64_t hi)
{
	for (unsigned i = 0; i < n; i++)
		blks_add_record(s, &r[i], lo, hi);
}

static void blks_add_leaf(struct blks *s, const uint8_t *leaf)
{
	for (unsigned i = 0; i < vleaf_count(leaf); i++) {
		struct vextent r;
		vleaf_get(leaf, i, &r);
		blks_add_record(s, &r, 0, UINT64_MAX);
	}
}

static int cmp_blk(const void *a, const void *b)
{
	const struct blk *x = a, *y = b;
	if (x->logical != y->logical)
		return x->logical < y->logical ? -1 : 1;
	if (x->label != y->label)
		return x->label < y->label ? -1 : 1;
	return x->phys < y->phys ? -1 : x->phys > y->phys;
}

static void blks_same(struct blks *a, struct blks *b)
{
	if (a->n)
		qsort(a->b, a->n, sizeof(*a->b), cmp_blk);
	if (b->n)
		qsort(b->b, b->n, sizeof(*b->b), cmp_blk);
	for (size_t i = 0; i < a->n && i < b->n; i++) {
		if (cmp_blk(&a->b[i], &b->b[i]))
			fprintf(stderr, "element %zu: (%" PRIu64 ", %u) -> %"
				PRIu64 " vs (%" PRIu64 ", %u) -> %" PRIu64
				"\n", i, a->b[i].logical, a->b[i].label,
				a->b[i].phys, b->b[i].logical, b->b[i].label,
				b->b[i].phys);
		CHECK(!cmp_blk(&a->b[i], &b->b[i]));
	}
	CHECK_EQ(a->n, b->n);
	free(a->b);
	free(b->b);
	*a = *b = (struct blks){ 0 };
}

/* ---- helpers ---- */

static void must_check(struct tux3_volume *vol, const uint8_t *leaf,
		       uint64_t lo, uint64_t hi)
{
	tux3_clear_error(vol);
	int r = vleaf_check(vol, leaf, 77, lo, hi);
	if (r)
		fprintf(stderr, "vleaf check [%" PRIu64 ", %" PRIu64 "): %s\n",
			lo, hi, vol->error.what);
	CHECK_EQ(r, 0);
}

static unsigned bits_of(unsigned bs)
{
	unsigned bits = 9;
	while ((1u << bits) < bs)
		bits++;
	return bits;
}

static void load_all(const uint8_t *leaf, struct vextents *x)
{
	x->n = 0;
	CHECK_EQ(vleaf_load(leaf, x), 0);
	CHECK_EQ(x->n, vleaf_count(leaf));
}

/* ---- layout and basics ---- */

TEST(layout)
{
	uint8_t l[512];
	memset(l, 0x5a, sizeof(l));
	vleaf_init(l);
	CHECK_EQ(be16(l), 0xbe7a);
	CHECK_EQ(be16(l + 2), 0);
	CHECK_EQ(be32(l + 4), 0);
	CHECK_EQ(l[8], 0x5a);	/* init writes the header only */
	CHECK_EQ(vleaf_capacity(512), 31);
	CHECK_EQ(vleaf_capacity(4096), 255);
	CHECK_EQ(vleaf_capacity(65536), 4095);

	struct vextent r[2] = {
		{ .logical = 0x123456789aull, .count = 7, .label = 0xabc,
		  .phys = 0x42 },
		{ .logical = TUX3_MAX_BLOCK - 65534, .count = 65535,
		  .label = 0, .phys = 0 },
	};
	struct vextents x = { r, 2, 2 };
	CHECK_EQ(vleaf_store(l, 512, &x, 0, TUX3_KEY_LIMIT), 0);
	CHECK_EQ(vleaf_count(l), 2);
	CHECK_EQ(be64(l + 8), 0x123456789aull << 16 | 7);
	CHECK_EQ(be64(l + 16), 0x42ull << 16 | 0xabcu << 4);
	CHECK_EQ(be64(l + 24), (TUX3_MAX_BLOCK - 65534) << 16 | 0xffff);
	CHECK_EQ(be64(l + 32), 0);
	for (unsigned i = 40; i < 512; i++)
		CHECK_EQ(l[i], 0);	/* the rest is zeroed */
	struct vextent g;
	vleaf_get(l, 0, &g);
	CHECK_EQ(g.logical, 0x123456789aull);
	CHECK_EQ(g.count, 7);
	CHECK_EQ(g.label, 0xabc);
	CHECK_EQ(g.phys, 0x42);
	vleaf_get(l, 1, &g);
	CHECK_EQ(g.logical, TUX3_MAX_BLOCK - 65534);
	CHECK_EQ(g.count, 65535);
	CHECK_EQ(g.phys, 0);
	struct tux3_volume *vol = fake_vol(9, VOLBLOCKS);
	must_check(vol, l, 0, TUX3_KEY_LIMIT);
	vleaf_init(l);
	must_check(vol, l, 5, 6);	/* empty: any range */
	fake_free(vol);
}

TEST(store_cuts_and_sorts)
{
	uint8_t l[512], copy[512];
	struct vextent r[] = {
		{ 5, 10, 3, 500, 0 },	/* crosses lo = 10 */
		{ 8, 4, 1, 0, 0 },		/* a hole crossing lo */
		{ 10, 2, 2, 700, 0 },
		{ 14, 20, 1, 800, 0 },	/* crosses hi = 20 */
	};
	struct vextents x = { r, 4, 4 };
	struct tux3_volume *vol = fake_vol(9, VOLBLOCKS);
	CHECK_EQ(vleaf_store(l, 512, &x, 10, 20), 0);
	must_check(vol, l, 10, 20);
	struct vextent want[] = {
		{ 10, 2, 1, 0, 0 }, { 10, 2, 2, 700, 0 }, { 10, 5, 3, 505, 0 },
		{ 14, 6, 1, 800, 0 },
	};
	CHECK_EQ(vleaf_count(l), 4);
	for (unsigned i = 0; i < 4; i++) {
		struct vextent g;
		vleaf_get(l, i, &g);
		CHECK_EQ(g.logical, want[i].logical);
		CHECK_EQ(g.count, want[i].count);
		CHECK_EQ(g.label, want[i].label);
		CHECK_EQ(g.phys, want[i].phys);
	}
	/* a record longer than 65535 blocks becomes several */
	struct vextent big = { 1000, 150000, 4, 2000000, 0 };
	struct vextents xb = { &big, 1, 1 };
	CHECK_EQ(vleaf_store(l, 512, &xb, 0, TUX3_KEY_LIMIT), 0);
	must_check(vol, l, 0, TUX3_KEY_LIMIT);
	CHECK_EQ(vleaf_count(l), 3);
	struct vextent g;
	vleaf_get(l, 2, &g);
	CHECK_EQ(g.logical, 1000 + 2 * 65535);
	CHECK_EQ(g.count, 150000 - 2 * 65535);
	CHECK_EQ(g.phys, 2000000 + 2 * 65535);
	/* bad input and no room leave the leaf alone */
	memcpy(copy, l, sizeof(l));
	struct vextent bad = { 1, 1, VERSION_LABELS, 5, 0 };
	struct vextents xbad = { &bad, 1, 1 };
	CHECK_EQ(vleaf_store(l, 512, &xbad, 0, 100), -EINVAL);
	bad = (struct vextent){ 1, 0, 1, 5, 0 };
	CHECK_EQ(vleaf_store(l, 512, &xbad, 0, 100), -EINVAL);
	struct vextent many[32];
	for (unsigned i = 0; i < 32; i++)
		many[i] = (struct vextent){ 7, 1, (uint16_t)i, 100 + i, 0 };
	struct vextents xm = { many, 32, 32 };
	CHECK_EQ(vleaf_store(l, 512, &xm, 0, 100), -ENOSPC);
	CHECK(!memcmp(l, copy, sizeof(l)));
	xm.n = 31;		/* exactly the capacity */
	CHECK_EQ(vleaf_store(l, 512, &xm, 0, 100), 0);
	must_check(vol, l, 0, 100);
	/* but outside the range they take no room */
	xm.n = 32;
	CHECK_EQ(vleaf_store(l, 512, &xm, 8, 100), 0);
	CHECK_EQ(vleaf_count(l), 0);
	/* load: no room, x unchanged */
	CHECK_EQ(vleaf_store(l, 512, &x, 0, 100), 0);
	struct vextent buf[4];
	struct vextents y = { buf, 1, 4 };
	CHECK_EQ(vleaf_load(l, &y), -ENOSPC);
	CHECK_EQ(y.n, 1);
	y.n = 0;
	CHECK_EQ(vleaf_load(l, &y), 0);
	CHECK_EQ(y.n, 4);
	fake_free(vol);
}

/* ---- round trips on generated sets ---- */

static void roundtrip(unsigned bs, uint64_t seed, unsigned steps,
		      unsigned *stored, unsigned *full)
{
	struct gen *g = gen_new(seed, 4096 + seed * 1000, 200 + seed % 300,
				1 + seed % 40);
	struct tux3_volume *vol = fake_vol(bits_of(bs), VOLBLOCKS);
	uint8_t *l = malloc(bs), *copy = malloc(bs);
	struct vextent *buf = calloc(SETCAP, sizeof(*buf));
	struct vextents y = { buf, 0, SETCAP };
	struct blks a = { 0 }, b = { 0 };
	CHECK(l && copy && buf);
	uint64_t lo = g->base, hi = g->base + g->span;
	vleaf_init(l);
	for (unsigned s = 0; s < steps; s++) {
		gen_step(g);
		CHECK_EQ(vext_check(&g->vt, &g->x, fail_check, NULL), 0);
		/* the whole set */
		memcpy(copy, l, bs);
		int err = vleaf_store(l, bs, &g->x, lo, hi);
		if (err) {
			CHECK_EQ(err, -ENOSPC);
			CHECK(g->x.n > vleaf_capacity(bs));
			CHECK(!memcmp(l, copy, bs));
			(*full)++;
		} else {
			must_check(vol, l, lo, hi);
			load_all(l, &y);
			CHECK_EQ(y.n, g->x.n);
			for (unsigned i = 0; i < y.n; i++) {
				CHECK_EQ(y.r[i].logical, g->x.r[i].logical);
				CHECK_EQ(y.r[i].count, g->x.r[i].count);
				CHECK_EQ(y.r[i].label, g->x.r[i].label);
				CHECK_EQ(y.r[i].phys, g->x.r[i].phys);
			}
			(*stored)++;
		}
		/* a random part of it */
		uint64_t a0 = lo + rnd(g, (unsigned)g->span);
		uint64_t a1 = a0 + 1 + rnd(g, (unsigned)(hi - a0));
		err = vleaf_store(l, bs, &g->x, a0, a1);
		if (err) {
			CHECK_EQ(err, -ENOSPC);
			continue;
		}
		must_check(vol, l, a0, a1);
		blks_add_set(&a, g->x.r, g->x.n, a0, a1);
		blks_add_leaf(&b, l);
		blks_same(&a, &b);
		load_all(l, &y);
		CHECK_EQ(vext_check(&g->vt, &y, fail_check, NULL), 0);
		/* every version reads the same through the part */
		for (unsigned k = 0; k < g->ntag; k++) {
			int lab = vtree_find_tag(&g->vt, g->tag[k]);
			CHECK(lab >= 0);
			for (uint64_t p = a0; p < a1; p++)
				CHECK_EQ(vext_read(&g->vt, &y, (unsigned)lab,
						   p),
					 vext_read(&g->vt, &g->x, (unsigned)lab,
						   p));
		}
	}
	free(buf);
	free(copy);
	free(l);
	fake_free(vol);
	gen_free(g);
}

TEST(roundtrip_random)
{
	unsigned stored = 0, full = 0;
	static const unsigned sizes[] = { 512, 1024, 4096 };
	for (uint64_t seed = 1; seed <= SANITIZER_SHARE(12u, 3); seed++)
		roundtrip(sizes[seed % 3], seed, 250, &stored, &full);
	/* both outcomes were exercised */
	CHECK(stored > 100);
	CHECK(full > 10);
}

/* ---- every rule of vleaf_check ---- */

static void raw_put(uint8_t *l, unsigned i, uint64_t logical, unsigned count,
		    unsigned label, uint64_t phys, unsigned flags)
{
	put_be64(l + 8 + 16 * i, logical << 16 | count);
	put_be64(l + 16 + 16 * i, phys << 16 | label << 4 | flags);
}

/* A valid leaf for [100, 200): four records. */
static void good_leaf(uint8_t *l, unsigned bs)
{
	memset(l, 0, bs);
	vleaf_init(l);
	raw_put(l, 0, 100, 5, 0, 1000, 0);
	raw_put(l, 1, 100, 3, 1, 2000, 0);
	raw_put(l, 2, 110, 2, 0, 0, 0);		/* a hole element run */
	raw_put(l, 3, 120, 10, 2, 3000, 0);
	put_be16(l + 2, 4);
}

static void expect_bad(struct tux3_volume *vol, const uint8_t *l,
		       uint64_t offset, const char *what)
{
	tux3_clear_error(vol);
	CHECK_EQ(vleaf_check(vol, l, 4242, 100, 200), -EUCLEAN);
	CHECK_EQ(vol->error.err, -EUCLEAN);
	CHECK_EQ(vol->error.block, 4242);
	if (vol->error.offset != offset || !strstr(vol->error.what, what))
		fprintf(stderr, "offset %" PRIu64 " \"%s\", expected %" PRIu64
			" \"%s\"\n", vol->error.offset, vol->error.what,
			offset, what);
	CHECK_EQ(vol->error.offset, offset);
	CHECK(strstr(vol->error.what, what));
}

TEST(check_rejects_each_rule)
{
	struct tux3_volume *vol = fake_vol(9, 100000);
	uint8_t l[512];
	good_leaf(l, 512);
	must_check(vol, l, 100, 200);

	good_leaf(l, 512);
	put_be16(l, 0xbeaf);
	expect_bad(vol, l, 0, "magic");

	good_leaf(l, 512);
	put_be32(l + 4, 1);
	expect_bad(vol, l, 4, "spare");

	good_leaf(l, 512);
	put_be16(l + 2, 32);	/* capacity 31 */
	expect_bad(vol, l, 2, "exceeds");

	good_leaf(l, 512);	/* order: logical goes down */
	raw_put(l, 0, 110, 2, 3, 0, 0);
	expect_bad(vol, l, 8 + 16, "not above");

	good_leaf(l, 512);	/* order: same logical, label goes down */
	raw_put(l, 0, 100, 3, 1, 2000, 0);
	raw_put(l, 1, 100, 5, 0, 1000, 0);
	expect_bad(vol, l, 8 + 16, "not above");

	good_leaf(l, 512);	/* order is strict: same (logical, label) */
	raw_put(l, 1, 100, 3, 0, 2000, 0);
	expect_bad(vol, l, 8 + 16, "not above");

	good_leaf(l, 512);	/* overlap of label 0, not neighbours */
	raw_put(l, 2, 104, 2, 0, 0, 0);
	expect_bad(vol, l, 8 + 32, "overlaps");

	good_leaf(l, 512);	/* touching is fine */
	raw_put(l, 2, 105, 2, 0, 0, 0);
	must_check(vol, l, 100, 200);

	good_leaf(l, 512);
	raw_put(l, 3, 120, 0, 2, 3000, 0);
	expect_bad(vol, l, 8 + 48, "count 0");

	good_leaf(l, 512);	/* below lo */
	raw_put(l, 0, 99, 5, 0, 1000, 0);
	expect_bad(vol, l, 8, "outside the key range");

	good_leaf(l, 512);	/* crosses hi */
	raw_put(l, 3, 195, 6, 2, 3000, 0);
	expect_bad(vol, l, 8 + 48, "outside the key range");

	good_leaf(l, 512);	/* ends exactly at hi */
	raw_put(l, 3, 195, 5, 2, 3000, 0);
	must_check(vol, l, 100, 200);

	good_leaf(l, 512);	/* past the volume's end */
	raw_put(l, 3, 120, 10, 2, 100000 - 9, 0);
	expect_bad(vol, l, 8 + 48 + 8, "outside the volume");

	good_leaf(l, 512);	/* up to the last block is fine */
	raw_put(l, 3, 120, 10, 2, 100000 - 10, 0);
	must_check(vol, l, 100, 200);

	good_leaf(l, 512);	/* a hole needs no blocks */
	raw_put(l, 3, 120, 10, 2, 0, 0);
	must_check(vol, l, 100, 200);

	/* an element-list record (format.md 17.3c): count 1, label 0, a
	 * chain block, alone on its logical block */
	good_leaf(l, 512);
	raw_put(l, 2, 110, 1, 0, 4000, VEXT_ELIST);
	must_check(vol, l, 100, 200);
	raw_put(l, 2, 110, 2, 0, 4000, VEXT_ELIST);
	expect_bad(vol, l, 8 + 32, "element-list");
	raw_put(l, 2, 110, 1, 3, 4000, VEXT_ELIST);
	expect_bad(vol, l, 8 + 32, "element-list");
	raw_put(l, 2, 110, 1, 0, 0, VEXT_ELIST);
	expect_bad(vol, l, 8 + 32, "element-list");
	raw_put(l, 2, 102, 1, 0, 4000, VEXT_ELIST);	/* under record 0 */
	raw_put(l, 3, 120, 10, 2, 3000, 0);
	expect_bad(vol, l, 8 + 32, "shares");
	raw_put(l, 2, 110, 1, 0, 4000, VEXT_ELIST);	/* one after it */
	raw_put(l, 3, 110, 10, 2, 3000, 0);
	expect_bad(vol, l, 8 + 48, "shares");
	for (unsigned f = 2; f < 16; f <<= 1) {
		good_leaf(l, 512);
		raw_put(l, 1, 100, 3, 1, 2000, f);
		expect_bad(vol, l, 8 + 16 + 8, "flags");
	}

	/* a full leaf passes; one label per record at one block */
	memset(l, 0, sizeof(l));
	vleaf_init(l);
	for (unsigned i = 0; i < 31; i++)
		raw_put(l, i, 150, 1, 4095 - 30 + i, 500 + i, 0);
	put_be16(l + 2, 31);
	must_check(vol, l, 100, 200);
	fake_free(vol);
}

/* ---- split ---- */

/* Split leaf (a copy of it stays in orig) and check everything. */
static int64_t split_and_check(struct tux3_volume *vol, uint8_t *leaf,
			       unsigned bs, uint64_t lo, uint64_t hi)
{
	uint8_t *orig = malloc(bs), *right = malloc(bs);
	CHECK(orig && right);
	memcpy(orig, leaf, bs);
	memset(right, 0x6b, bs);
	unsigned n = vleaf_count(leaf);
	int64_t sep = vleaf_split(leaf, right, bs, lo, hi);
	if (sep < 0) {
		CHECK(!memcmp(orig, leaf, bs));
		free(orig);
		free(right);
		return sep;
	}
	CHECK((uint64_t)sep > lo && (uint64_t)sep < hi);
	must_check(vol, leaf, lo, (uint64_t)sep);
	must_check(vol, right, (uint64_t)sep, hi);
	unsigned nl = vleaf_count(leaf), nr = vleaf_count(right);
	CHECK(nl >= 1 && nr >= 1);
	CHECK(nl < n || nr < n);	/* one side gained room */
	struct blks a = { 0 }, b = { 0 };
	blks_add_leaf(&a, orig);
	blks_add_leaf(&b, leaf);
	blks_add_leaf(&b, right);
	blks_same(&a, &b);
	free(orig);
	free(right);
	return sep;
}

TEST(split_random)
{
	static const unsigned sizes[] = { 512, 1024, 4096 };
	unsigned roomy = 0, total = 0;
	for (uint64_t seed = 1; seed <= SANITIZER_SHARE(30u, 3); seed++) {
		unsigned bs = sizes[seed % 3], cap = vleaf_capacity(bs);
		struct gen *g = gen_new(seed, 50000, cap + seed * 17,
					1 + seed % 20);
		struct tux3_volume *vol = fake_vol(bits_of(bs), VOLBLOCKS);
		for (unsigned s = 0; s < 20000 && (s < 150 || g->x.n < cap);
		     s++)
			gen_step(g);
		CHECK(g->x.n >= cap);
		/* a full leaf: cap consecutive records of the set (still
		 * sorted, one label's records disjoint), in a range around
		 * them */
		unsigned first = rnd(g, g->x.n - cap + 1);
		struct vextents full = { g->x.r + first, cap, cap };
		uint64_t lo = full.r[0].logical - rnd(g, 3), hi = 0;
		for (unsigned i = 0; i < cap; i++)
			if (full.r[i].logical + full.r[i].count > hi)
				hi = full.r[i].logical + full.r[i].count;
		hi += rnd(g, 5);
		uint8_t *leaf = malloc(bs);
		CHECK(leaf);
		CHECK_EQ(vleaf_store(leaf, bs, &full, lo, hi), 0);
		CHECK_EQ(vleaf_count(leaf), cap);
		must_check(vol, leaf, lo, hi);
		struct vextent *buf = calloc(2 * cap, sizeof(*buf));
		struct vextents y = { buf, 0, 2 * cap };
		uint8_t *right = malloc(bs), *left = malloc(bs);
		CHECK(buf && right && left);
		memcpy(left, leaf, bs);
		int64_t sep = split_and_check(vol, left, bs, lo, hi);
		CHECK(sep > 0);
		/* again, to read both halves back as one set */
		memcpy(left, leaf, bs);
		CHECK_EQ(vleaf_split(left, right, bs, lo, hi), sep);
		total++;
		if (vleaf_count(left) < cap && vleaf_count(right) < cap)
			roomy++;
		CHECK_EQ(vleaf_load(left, &y), 0);
		CHECK_EQ(vleaf_load(right, &y), 0);
		/* re-merged, every version reads what it read before */
		for (unsigned k = 0; k < g->ntag; k++) {
			int lab = vtree_find_tag(&g->vt, g->tag[k]);
			CHECK(lab >= 0);
			for (uint64_t p = lo; p < hi; p++)
				CHECK_EQ(vext_read(&g->vt, &y, (unsigned)lab,
						   p),
					 vext_read(&g->vt, &full,
						   (unsigned)lab, p));
		}
		/* and each half splits again while it can */
		uint64_t l2 = lo, h2 = (uint64_t)sep;
		for (unsigned depth = 0; depth < 4; depth++) {
			int64_t s2 = split_and_check(vol, left, bs, l2, h2);
			if (s2 < 0) {
				CHECK_EQ(s2, -ENOSPC);
				break;
			}
			h2 = (uint64_t)s2;
		}
		free(buf);
		free(left);
		free(right);
		free(leaf);
		fake_free(vol);
		gen_free(g);
	}
	/* near the middle: both halves have room in realistic leaves */
	CHECK_EQ(roomy, total);
}

/* Versions of one block only: snapshot, then the origin writes it. */
TEST(split_per_block_cap)
{
	unsigned bs = 512, cap = vleaf_capacity(bs);
	struct gen *g = gen_new(3, 700, 1, 1);
	struct tux3_volume *vol = fake_vol(9, VOLBLOCKS);
	static uint64_t written[1];
	unsigned label = 0;
	CHECK_EQ(vext_write(&g->vt, &g->x, &label, 700, 1, gen_alloc, g,
			    written, 0), 0);
	while (g->x.n < cap) {
		CHECK(vtree_snapshot(&g->vt, 0, g->nexttag++, 0) > 0);
		label = 0;
		CHECK_EQ(vext_write(&g->vt, &g->x, &label, 700, 1, gen_alloc,
				    g, written, 0), 0);
	}
	CHECK_EQ(g->x.n, cap);
	uint8_t leaf[512], right[512], copy[512];
	CHECK_EQ(vleaf_store(leaf, bs, &g->x, 0, 1000), 0);
	must_check(vol, leaf, 0, 1000);
	memcpy(copy, leaf, bs);
	memset(right, 0x33, bs);
	CHECK_EQ(vleaf_split(leaf, right, bs, 0, 1000), -ENOSPC);
	CHECK(!memcmp(leaf, copy, bs));
	for (unsigned i = 0; i < bs; i++)
		CHECK_EQ(right[i], 0x33);
	/* still -ENOSPC when the leaf's range starts at the block */
	CHECK_EQ(vleaf_split(leaf, right, bs, 700, 701), -ENOSPC);
	/* one more version does not fit: the per-block cap */
	CHECK(vtree_snapshot(&g->vt, 0, g->nexttag++, 0) > 0);
	label = 0;
	CHECK_EQ(vext_write(&g->vt, &g->x, &label, 700, 1, gen_alloc, g,
			    written, 0), 0);
	CHECK_EQ(vleaf_store(leaf, bs, &g->x, 0, 1000), -ENOSPC);
	fake_free(vol);
	gen_free(g);
}

TEST(split_cases)
{
	unsigned bs = 512, cap = vleaf_capacity(bs);
	struct tux3_volume *vol = fake_vol(9, VOLBLOCKS);
	struct vextent r[64];
	struct vextents x = { r, 0, 64 };
	uint8_t leaf[512], right[512];

	/* every record at one logical, one longer: cut after the block */
	for (unsigned i = 0; i < cap; i++)
		r[i] = (struct vextent){ 300, i == 5 ? 4 : 1, (uint16_t)i,
					 1000 + 10 * i, 0 };
	x.n = cap;
	CHECK_EQ(vleaf_store(leaf, bs, &x, 300, 400), 0);
	CHECK_EQ(split_and_check(vol, leaf, bs, 300, 400), 301);
	CHECK_EQ(vleaf_count(leaf), cap);
	struct vextent g;
	CHECK_EQ(vleaf_store(leaf, bs, &x, 300, 400), 0);
	CHECK_EQ(vleaf_split(leaf, right, bs, 300, 400), 301);
	CHECK_EQ(vleaf_count(right), 1);
	vleaf_get(right, 0, &g);
	CHECK_EQ(g.logical, 301);
	CHECK_EQ(g.count, 3);
	CHECK_EQ(g.label, 5);
	CHECK_EQ(g.phys, 1051);
	/* the same leaf with a range starting lower */
	CHECK_EQ(vleaf_store(leaf, bs, &x, 0, 400), 0);
	CHECK_EQ(split_and_check(vol, leaf, bs, 0, 400), 301);

	/* every record at one logical, all longer: cut at an end */
	for (unsigned i = 0; i < cap; i++)
		r[i] = (struct vextent){ 300, 2 + i, (uint16_t)i,
					 i % 2 ? 0 : 5000 + 100 * i, 0 };
	CHECK_EQ(vleaf_store(leaf, bs, &x, 300, 400), 0);
	int64_t sep = split_and_check(vol, leaf, bs, 300, 400);
	CHECK(sep > 301);

	/* every record covers the whole range: no side gains room */
	for (unsigned i = 0; i < cap; i++)
		r[i] = (struct vextent){ 300, 100, (uint16_t)i, 0, 0 };
	CHECK_EQ(vleaf_store(leaf, bs, &x, 300, 400), 0);
	CHECK_EQ(split_and_check(vol, leaf, bs, 300, 400), -ENOSPC);

	/* two logicals: split between them, no record cut */
	for (unsigned i = 0; i < cap; i++)
		r[i] = (struct vextent){ i < 15 ? 300 : 350, 3, (uint16_t)i,
					 2000 + 10 * i, 0 };
	CHECK_EQ(vleaf_store(leaf, bs, &x, 0, 1000), 0);
	CHECK_EQ(split_and_check(vol, leaf, bs, 0, 1000), 350);
	CHECK_EQ(vleaf_count(leaf), 15);

	/* a long record under many short ones is cut at the separator */
	r[0] = (struct vextent){ 0, 300, 0, 9000, 0 };
	for (unsigned i = 1; i < cap; i++)
		r[i] = (struct vextent){ 10 * i, 1, 1, 20000 + i, 0 };
	CHECK_EQ(vleaf_store(leaf, bs, &x, 0, 1000), 0);
	CHECK_EQ(vleaf_store(leaf, bs, &x, 0, 1000), 0);
	sep = vleaf_split(leaf, right, bs, 0, 1000);
	CHECK(sep > 0 && sep < 300);
	must_check(vol, leaf, 0, (uint64_t)sep);
	must_check(vol, right, (uint64_t)sep, 1000);
	vleaf_get(right, 0, &g);
	CHECK_EQ(g.logical, (uint64_t)sep);
	CHECK_EQ(g.label, 0);
	CHECK_EQ(g.count, 300 - (uint64_t)sep);
	CHECK_EQ(g.phys, 9000 + (uint64_t)sep);
	vleaf_get(leaf, 0, &g);
	CHECK_EQ(g.count, (uint64_t)sep);
	/* balanced: the long record counts on both sides */
	CHECK(vleaf_count(leaf) <= cap / 2 + 1);
	CHECK(vleaf_count(right) <= cap / 2 + 1);

	/* one record, and not a vleaf */
	x.n = 1;
	CHECK_EQ(vleaf_store(leaf, bs, &x, 0, 1000), 0);
	CHECK_EQ(vleaf_split(leaf, right, bs, 0, 1000), -ENOSPC);
	put_be16(leaf, 0xbeaf);
	CHECK_EQ(vleaf_split(leaf, right, bs, 0, 1000), -EUCLEAN);
	fake_free(vol);
}

/* ---- from the 2014 dleaf ---- */

static void check_converted(struct tux3_volume *vol, const uint8_t *dleaf,
			    unsigned bs, uint64_t lo, uint64_t hi,
			    const uint64_t *model, uint64_t span)
{
	uint8_t *v = malloc(bs);
	struct vextent *buf = calloc(vleaf_capacity(bs), sizeof(*buf));
	struct vextents x = { buf, 0, vleaf_capacity(bs) };
	struct vtree *vt = malloc(sizeof(*vt));
	CHECK(v && buf && vt);
	vtree_init(vt);
	memset(v, 0x77, bs);
	CHECK_EQ(vleaf_from_dleaf(dleaf, bs, lo, hi, v), 0);
	must_check(vol, v, lo, hi);
	CHECK_EQ(vleaf_load(v, &x), 0);
	for (unsigned i = 0; i < x.n; i++) {
		CHECK_EQ(x.r[i].label, VERSION_ORIGIN);
		CHECK(x.r[i].phys != 0);	/* holes are no records */
	}
	CHECK_EQ(vext_check(vt, &x, fail_check, NULL), 0);
	for (uint64_t p = 0; p < span; p++)
		CHECK_EQ(vext_read(vt, &x, VERSION_ORIGIN, lo + p), model[p]);
	free(vt);
	free(buf);
	free(v);
}

TEST(from_dleaf_random)
{
	static const unsigned sizes[] = { 512, 4096 };
	for (uint64_t seed = 1; seed <= SANITIZER_SHARE(16u, 4); seed++) {
		unsigned bs = sizes[seed % 2];
		uint64_t lo = 1000 * seed, span = 3000, hi = lo + span;
		uint64_t rng = seed * 0x2545f4914f6cdd1dull + 1;
		struct tux3_volume *vol = fake_vol(bits_of(bs), VOLBLOCKS);
		uint64_t *model = calloc(span, sizeof(*model));
		uint8_t *d = malloc(bs);
		CHECK(model && d);
		memset(d, 0, bs);
		dleaf_init(d);
		check_converted(vol, d, bs, lo, hi, model, span);
		for (unsigned s = 0; s < 300; s++) {
			uint64_t off = rnd64(&rng) % span;
			uint64_t count = 1 + rnd64(&rng) % 200;
			if (count > span - off)
				count = span - off;
			uint64_t phys = rnd64(&rng) % 5 == 0 ? 0 :
					10 + rnd64(&rng) % (VOLBLOCKS - 1000);
			int err = dleaf_write_extent(d, bs, lo + off, phys,
						     count, lo, hi, NULL,
						     NULL);
			if (err == -ENOSPC)
				continue;
			CHECK_EQ(err, 0);
			for (uint64_t i = 0; i < count; i++)
				model[off + i] = phys ? phys + i : 0;
			CHECK_EQ(dtree_ops.leaf_check(vol, d, 5, lo, hi), 0);
			check_converted(vol, d, bs, lo, hi, model, span);
		}
		free(d);
		free(model);
		fake_free(vol);
	}
}

TEST(from_dleaf_long_and_full)
{
	struct tux3_volume *vol = fake_vol(9, VOLBLOCKS);
	uint8_t d[512], v[512], copy[512];
	/* an extent of 200000 blocks: four records */
	dleaf_init(d);
	CHECK_EQ(dleaf_write_extent(d, 512, 10, 5000000, 200000, 0,
				    TUX3_KEY_LIMIT, NULL, NULL), 0);
	CHECK_EQ(vleaf_from_dleaf(d, 512, 0, TUX3_KEY_LIMIT, v), 0);
	must_check(vol, v, 0, TUX3_KEY_LIMIT);
	CHECK_EQ(vleaf_count(v), 4);
	struct vextent g;
	for (unsigned i = 0; i < 4; i++) {
		vleaf_get(v, i, &g);
		CHECK_EQ(g.logical, 10 + 65535ull * i);
		CHECK_EQ(g.count, i < 3 ? 65535 : 200000 - 3 * 65535);
		CHECK_EQ(g.phys, 5000000 + 65535ull * i);
		CHECK_EQ(g.label, 0);
	}
	/* a full dleaf of 30 abutting extents: 30 records fit... */
	dleaf_init(d);
	for (unsigned i = 0; i < 30; i++)
		CHECK_EQ(dleaf_write_extent(d, 512, 100 * i, 1000 + 1000 * i,
					    100, 0, TUX3_KEY_LIMIT, NULL,
					    NULL), 0);
	CHECK_EQ(dleaf_count(d), 31);
	CHECK_EQ(vleaf_from_dleaf(d, 512, 0, TUX3_KEY_LIMIT, v), 0);
	must_check(vol, v, 0, TUX3_KEY_LIMIT);
	CHECK_EQ(vleaf_count(v), 30);
	/* ...but not when they are 70000 blocks long: 60 records */
	dleaf_init(d);
	for (unsigned i = 0; i < 30; i++)
		CHECK_EQ(dleaf_write_extent(d, 512, 70000ull * i,
					    1000 + 100000ull * i, 70000, 0,
					    TUX3_KEY_LIMIT, NULL, NULL), 0);
	CHECK_EQ(dleaf_count(d), 31);
	memset(v, 0x42, sizeof(v));
	memcpy(copy, v, sizeof(v));
	CHECK_EQ(vleaf_from_dleaf(d, 512, 0, TUX3_KEY_LIMIT, v), -ENOSPC);
	CHECK(!memcmp(v, copy, sizeof(v)));
	/* an all-hole dleaf, an empty one */
	dleaf_init(d);
	CHECK_EQ(vleaf_from_dleaf(d, 512, 0, 100, v), 0);
	CHECK_EQ(vleaf_count(v), 0);
	must_check(vol, v, 0, 100);
	/* malformed dleaves */
	dleaf_init(d);
	CHECK_EQ(dleaf_write_extent(d, 512, 10, 5000, 5, 0, 100, NULL, NULL),
		 0);
	memcpy(copy, d, sizeof(d));
	put_be16(d, 0xbe7a);
	CHECK_EQ(vleaf_from_dleaf(d, 512, 0, 100, v), -EUCLEAN);
	memcpy(d, copy, sizeof(d));
	d[8 + 16] = 1;		/* a version in the first mapped entry */
	CHECK_EQ(vleaf_from_dleaf(d, 512, 0, 100, v), -EUCLEAN);
	memcpy(d, copy, sizeof(d));
	CHECK_EQ(vleaf_from_dleaf(d, 512, 0, 12, v), -EUCLEAN);	/* range */
	CHECK_EQ(vleaf_from_dleaf(d, 512, 0, 15, v), 0);
	fake_free(vol);
}

int main(void)
{
	return run_tests("vleaf");
}

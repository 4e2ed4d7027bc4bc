/* Layer: dleaf.c write side -- dleaf_init/write_extent/chop/split on
 * synthetic leaves, checked after every step with the dtree leaf check and
 * read back with dleaf_entry_get; randomized against a logical->physical
 * array. */
#include "fixtures.h"

struct ent { uint64_t logical, physical; };

static struct tux3_volume *vol_for(unsigned bs)
{
	unsigned bits = 9;
	while ((1u << bits) < bs)
		bits++;
	return fake_vol(bits, 1 << 24);
}

static void must_check(struct tux3_volume *vol, const uint8_t *l,
		       uint64_t lo, uint64_t hi)
{
	int r = dtree_ops.leaf_check(vol, l, 4, lo, hi);
	if (r)
		fprintf(stderr, "dleaf check: %s\n", vol->error.what);
	CHECK_EQ(r, 0);
}

static void expect_entries(const uint8_t *l, unsigned n, const struct ent *e)
{
	CHECK_EQ(dleaf_count(l), n);
	for (unsigned i = 0; i < n; i++) {
		struct dleaf_entry d;
		dleaf_entry_get(l, i, &d);
		if (d.logical != e[i].logical || d.physical != e[i].physical)
			fprintf(stderr, "entry %u: {%" PRIu64 ", %" PRIu64
				"} expected {%" PRIu64 ", %" PRIu64 "}\n", i,
				d.logical, d.physical, e[i].logical,
				e[i].physical);
		CHECK_EQ(d.logical, e[i].logical);
		CHECK_EQ(d.physical, e[i].physical);
		CHECK_EQ(d.version, 0);
	}
}

struct freelist {
	unsigned n;
	uint64_t phys[4096], count[4096];
};

static void on_freed(void *ctx, uint64_t physical, uint64_t count)
{
	struct freelist *f = ctx;
	CHECK(f->n < 4096);
	CHECK(count > 0);
	f->phys[f->n] = physical;
	f->count[f->n++] = count;
}

#define W(l, log, phys, cnt, lo, hi, f) \
	dleaf_write_extent(l, 4096, log, phys, cnt, lo, hi, on_freed, f)

TEST(init_and_first_write)
{
	struct tux3_volume *vol = vol_for(4096);
	uint8_t l[4096];
	struct freelist f = { 0 };
	memset(l, 0x77, sizeof(l));
	dleaf_init(l);
	CHECK_EQ(be16(l), TUX3_MAGIC_DLEAF);
	CHECK_EQ(dleaf_count(l), 0);
	CHECK_EQ(be32(l + 4), 0);
	must_check(vol, l, 0, TUX3_KEY_LIMIT);
	memset(l + 8, 0, 4096 - 8);
	/* data starting after the lower bound gets a leading hole entry */
	CHECK_EQ(W(l, 25600, 26136, 5, 0, TUX3_KEY_LIMIT, &f), 0);
	expect_entries(l, 3, (struct ent[]){ { 0, 0 }, { 25600, 26136 },
					     { 25605, 0 } });
	must_check(vol, l, 0, TUX3_KEY_LIMIT);
	/* at the lower bound: no hole entry */
	dleaf_init(l);
	CHECK_EQ(W(l, 384, 2000, 1, 384, 576, &f), 0);
	expect_entries(l, 2, (struct ent[]){ { 384, 2000 }, { 385, 0 } });
	must_check(vol, l, 384, 576);
	/* a hole into an empty leaf leaves it empty */
	dleaf_init(l);
	CHECK_EQ(W(l, 10, 0, 5, 0, 100, &f), 0);
	CHECK_EQ(dleaf_count(l), 0);
	CHECK_EQ(f.n, 0);
	fake_free(vol);
}

TEST(overwrite_split_merge)
{
	struct tux3_volume *vol = vol_for(4096);
	uint8_t l[4096];
	struct freelist f = { 0 };
	dleaf_init(l);
	CHECK_EQ(W(l, 0, 100, 10, 0, 1000, &f), 0);
	/* physically contiguous append merges */
	CHECK_EQ(W(l, 10, 110, 5, 0, 1000, &f), 0);
	expect_entries(l, 2, (struct ent[]){ { 0, 100 }, { 15, 0 } });
	CHECK_EQ(f.n, 0);
	/* overwrite the middle: the extent splits, the old blocks are freed */
	CHECK_EQ(W(l, 4, 500, 3, 0, 1000, &f), 0);
	expect_entries(l, 4, (struct ent[]){ { 0, 100 }, { 4, 500 },
					     { 7, 107 }, { 15, 0 } });
	CHECK_EQ(f.n, 1);
	CHECK_EQ(f.phys[0], 104);
	CHECK_EQ(f.count[0], 3);
	must_check(vol, l, 0, 1000);
	/* writing the old blocks back merges everything again */
	f.n = 0;
	CHECK_EQ(W(l, 4, 104, 3, 0, 1000, &f), 0);
	expect_entries(l, 2, (struct ent[]){ { 0, 100 }, { 15, 0 } });
	CHECK_EQ(f.n, 1);
	CHECK_EQ(f.phys[0], 500);
	/* rewriting the same mapping frees nothing */
	f.n = 0;
	CHECK_EQ(W(l, 2, 102, 10, 0, 1000, &f), 0);
	expect_entries(l, 2, (struct ent[]){ { 0, 100 }, { 15, 0 } });
	CHECK_EQ(f.n, 0);
	/* a hole in the middle, then over the tail */
	CHECK_EQ(W(l, 5, 0, 2, 0, 1000, &f), 0);
	expect_entries(l, 4, (struct ent[]){ { 0, 100 }, { 5, 0 },
					     { 7, 107 }, { 15, 0 } });
	CHECK_EQ(f.n, 1);
	CHECK_EQ(f.phys[0], 105);
	CHECK_EQ(f.count[0], 2);
	f.n = 0;
	CHECK_EQ(W(l, 7, 0, 20, 0, 1000, &f), 0);
	/* adjacent holes merge: the hole at 5 becomes the sentinel */
	expect_entries(l, 2, (struct ent[]){ { 0, 100 }, { 5, 0 } });
	CHECK_EQ(f.n, 1);
	CHECK_EQ(f.phys[0], 107);
	CHECK_EQ(f.count[0], 8);
	must_check(vol, l, 0, 1000);
	/* spanning several extents and holes */
	CHECK_EQ(W(l, 20, 300, 5, 0, 1000, &f), 0);
	CHECK_EQ(W(l, 40, 400, 5, 0, 1000, &f), 0);
	expect_entries(l, 6, (struct ent[]){ { 0, 100 }, { 5, 0 },
		{ 20, 300 }, { 25, 0 }, { 40, 400 }, { 45, 0 } });
	f.n = 0;
	CHECK_EQ(W(l, 3, 900, 40, 0, 1000, &f), 0);
	expect_entries(l, 4, (struct ent[]){ { 0, 100 }, { 3, 900 },
					     { 43, 403 }, { 45, 0 } });
	CHECK_EQ(f.n, 3);	/* 103+2, 300+5, 400+3 */
	CHECK_EQ(f.phys[0], 103);
	CHECK_EQ(f.count[0], 2);
	CHECK_EQ(f.phys[1], 300);
	CHECK_EQ(f.count[1], 5);
	CHECK_EQ(f.phys[2], 400);
	CHECK_EQ(f.count[2], 3);
	must_check(vol, l, 0, 1000);
	/* everything a hole: the leaf empties */
	f.n = 0;
	CHECK_EQ(W(l, 0, 0, 1000, 0, 1000, &f), 0);
	CHECK_EQ(dleaf_count(l), 0);
	CHECK_EQ(f.n, 3);
	must_check(vol, l, 0, 1000);
	fake_free(vol);
}

TEST(range_and_errors)
{
	uint8_t l[4096], ref[4096];
	struct freelist f = { 0 };
	dleaf_init(l);
	memset(l + 8, 0, sizeof(l) - 8);
	CHECK_EQ(W(l, 99, 100, 1, 100, 200, &f), -ERANGE);
	CHECK_EQ(W(l, 199, 100, 2, 100, 200, &f), -ERANGE);
	CHECK_EQ(W(l, 199, 100, 1, 100, 200, &f), 0);
	CHECK_EQ(W(l, 150, 100, 0, 100, 200, &f), -EINVAL);
	CHECK_EQ(W(l, 150, TUX3_MAX_BLOCK, 2, 100, 200, &f), -EINVAL);
	memcpy(ref, l, sizeof(l));
	put_be16(ref, 0x1eaf);
	CHECK_EQ(W(ref, 150, 100, 1, 100, 200, &f), -EUCLEAN);
	/* the sentinel may sit at hi */
	expect_entries(l, 3, (struct ent[]){ { 100, 0 }, { 199, 100 },
					     { 200, 0 } });
	/* full leaf: a write needing more entries fails and changes nothing */
	uint8_t s[512];
	struct tux3_volume *vol = vol_for(512);
	dleaf_init(s);
	unsigned cap = (512 - 8) / 16;	/* 31 */
	for (unsigned i = 0; i < 15; i++)
		CHECK_EQ(dleaf_write_extent(s, 512, 10 * i, 1000 + 100 * i, 5,
					    0, 1000, on_freed, &f), 0);
	/* 0 -> data, then 14 x {hole, data}, sentinel = 30 entries */
	CHECK_EQ(dleaf_count(s), 30);
	must_check(vol, s, 0, 1000);
	memcpy(ref, s, 512);
	f.n = 0;
	CHECK_EQ(dleaf_write_extent(s, 512, 2, 5000, 1, 0, 1000, on_freed, &f),
		 -ENOSPC);
	CHECK(!memcmp(ref, s, 512));
	CHECK_EQ(f.n, 0);
	/* past the sentinel costs two entries: no room either */
	CHECK_EQ(dleaf_write_extent(s, 512, 200, 5000, 1, 0, 1000, on_freed, &f),
		 -ENOSPC);
	CHECK(!memcmp(ref, s, 512));
	/* +1 entry still fits: data at the sentinel */
	CHECK_EQ(dleaf_write_extent(s, 512, 145, 5000, 1, 0, 1000, on_freed, &f),
		 0);
	CHECK_EQ(dleaf_count(s), cap);
	must_check(vol, s, 0, 1000);
	/* a write that shrinks a full leaf works */
	CHECK_EQ(dleaf_write_extent(s, 512, 0, 0, 100, 0, 1000, on_freed, &f), 0);
	/* {0 hole}, 5 x {data, hole} from 100, {145 data}, sentinel */
	CHECK_EQ(dleaf_count(s), 12);
	must_check(vol, s, 0, 1000);
	fake_free(vol);
}

TEST(chop)
{
	struct tux3_volume *vol = vol_for(4096);
	uint8_t l[4096];
	struct freelist f = { 0 };
	dleaf_init(l);
	CHECK_EQ(W(l, 0, 100, 10, 0, 1000, &f), 0);
	CHECK_EQ(W(l, 20, 200, 10, 0, 1000, &f), 0);
	CHECK_EQ(dleaf_chop(l, 4096, 500, on_freed, &f), 0);	/* beyond */
	CHECK_EQ(dleaf_count(l), 4);
	CHECK_EQ(f.n, 0);
	CHECK_EQ(dleaf_chop(l, 4096, 25, on_freed, &f), 0);
	expect_entries(l, 4, (struct ent[]){ { 0, 100 }, { 10, 0 },
					     { 20, 200 }, { 25, 0 } });
	CHECK_EQ(f.n, 1);
	CHECK_EQ(f.phys[0], 205);
	CHECK_EQ(f.count[0], 5);
	must_check(vol, l, 0, 1000);
	/* from inside a hole: the hole becomes the sentinel */
	f.n = 0;
	CHECK_EQ(dleaf_chop(l, 4096, 15, on_freed, &f), 0);
	expect_entries(l, 2, (struct ent[]){ { 0, 100 }, { 10, 0 } });
	CHECK_EQ(f.n, 1);
	CHECK_EQ(f.phys[0], 200);
	CHECK_EQ(f.count[0], 5);
	must_check(vol, l, 0, 1000);
	f.n = 0;
	CHECK_EQ(dleaf_chop(l, 4096, 3, NULL, NULL), 0);
	expect_entries(l, 2, (struct ent[]){ { 0, 100 }, { 3, 0 } });
	CHECK_EQ(dleaf_chop(l, 4096, 0, on_freed, &f), 0);
	CHECK_EQ(dleaf_count(l), 0);
	CHECK_EQ(f.n, 1);
	CHECK_EQ(f.phys[0], 100);
	CHECK_EQ(f.count[0], 3);
	must_check(vol, l, 0, 1000);
	/* a leading hole alone is an empty leaf */
	CHECK_EQ(W(l, 50, 100, 10, 0, 1000, &f), 0);
	CHECK_EQ(dleaf_chop(l, 4096, 40, on_freed, &f), 0);
	CHECK_EQ(dleaf_count(l), 0);
	fake_free(vol);
}

TEST(split)
{
	struct tux3_volume *vol = vol_for(4096);
	uint8_t l[4096], r[4096];
	struct freelist f = { 0 };
	dleaf_init(l);
	CHECK_EQ(dleaf_split(l, r, 4096), -EINVAL);
	CHECK_EQ(W(l, 5, 100, 10, 0, 1000, &f), 0);	/* hole, data, sent */
	CHECK_EQ(dleaf_split(l, r, 4096), -EINVAL);
	CHECK_EQ(W(l, 20, 200, 10, 0, 1000, &f), 0);
	CHECK_EQ(W(l, 40, 300, 10, 0, 1000, &f), 0);
	/* {0,0} {5,100} {15,0} {20,200} {30,0} {40,300} {50,0}: n/2 = 3
	 * follows the extent at 5, so the cut is at 15 */
	int64_t sep = dleaf_split(l, r, 4096);
	CHECK_EQ(sep, 15);
	expect_entries(l, 3, (struct ent[]){ { 0, 0 }, { 5, 100 }, { 15, 0 } });
	expect_entries(r, 5, (struct ent[]){ { 15, 0 }, { 20, 200 }, { 30, 0 },
					     { 40, 300 }, { 50, 0 } });
	must_check(vol, l, 0, (uint64_t)sep);
	must_check(vol, r, (uint64_t)sep, 1000);
	/* all-data leaf: cut at n/2 */
	dleaf_init(l);
	for (unsigned i = 0; i < 6; i++)
		CHECK_EQ(W(l, i, 100 + 10 * i, 1, 0, 1000, &f), 0);
	CHECK_EQ(dleaf_count(l), 7);
	sep = dleaf_split(l, r, 4096);
	CHECK_EQ(sep, 3);
	expect_entries(l, 4, (struct ent[]){ { 0, 100 }, { 1, 110 }, { 2, 120 },
					     { 3, 0 } });
	expect_entries(r, 4, (struct ent[]){ { 3, 130 }, { 4, 140 }, { 5, 150 },
					     { 6, 0 } });
	must_check(vol, l, 0, 3);
	must_check(vol, r, 3, 1000);
	/* writes go on in both halves */
	CHECK_EQ(W(r, 6, 160, 1, 3, 1000, &f), 0);
	CHECK_EQ(W(l, 0, 0, 1, 0, 3, &f), 0);
	must_check(vol, l, 0, 3);
	must_check(vol, r, 3, 1000);
	fake_free(vol);
}

/* ---- randomized: a row of leaves over [0, window), like a dtree ---- */

static uint64_t rnd_state;
static uint32_t rnd(void)
{
	rnd_state = rnd_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rnd_state >> 33);
}

struct leafrec {
	uint8_t *buf;
	uint64_t lo, hi;
};

/* The canonical entries of phys[lo..hi) (window W): count, into out. */
static unsigned canon(const uint64_t *phys, uint64_t W, uint64_t lo,
		      uint64_t hi, struct ent *out)
{
	uint64_t end = hi < W ? hi : W, last = lo;
	bool any = false;
	for (uint64_t x = lo; x < end; x++)
		if (phys[x]) {
			last = x + 1;
			any = true;
		}
	if (!any)
		return 0;
	unsigned n = 0;
	out[n++] = (struct ent){ lo, phys[lo] };
	for (uint64_t x = lo + 1; x < last; x++) {
		struct ent *p = &out[n - 1];
		uint64_t cont = p->physical ? p->physical + (x - p->logical) : 0;
		if (phys[x] != cont)
			out[n++] = (struct ent){ x, phys[x] };
	}
	out[n++] = (struct ent){ last, 0 };
	return n;
}

static int cmp64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* freed (expanded to blocks, sorted) equals want[0..nwant) sorted */
static void expect_freed(struct freelist *f, uint64_t *want, unsigned nwant)
{
	static uint64_t got[1 << 16];
	unsigned n = 0;
	for (unsigned i = 0; i < f->n; i++)
		for (uint64_t k = 0; k < f->count[i]; k++) {
			CHECK(n < (1u << 16));
			got[n++] = f->phys[i] + k;
		}
	CHECK_EQ(n, nwant);
	qsort(got, n, sizeof(got[0]), cmp64);
	qsort(want, nwant, sizeof(want[0]), cmp64);
	for (unsigned i = 0; i < n; i++)
		CHECK_EQ(got[i], want[i]);
}

static void verify_all(struct tux3_volume *vol, unsigned bs,
		       struct leafrec *lv, unsigned nleaf, const uint64_t *phys,
		       uint64_t W, struct ent *tmp)
{
	for (unsigned j = 0; j < nleaf; j++) {
		must_check(vol, lv[j].buf, lv[j].lo, lv[j].hi);
		unsigned n = canon(phys, W, lv[j].lo, lv[j].hi, tmp);
		expect_entries(lv[j].buf, n, tmp);
		/* unused entry slots are zero */
		for (unsigned i = DLEAF_HEADER + DLEAF_ENTRY * n; i < bs; i++)
			CHECK_EQ(lv[j].buf[i], 0);
	}
}

static void random_run(unsigned bs, uint64_t seed, unsigned steps)
{
	struct tux3_volume *vol = vol_for(bs);
	unsigned cap = (bs - 8) / 16;
	uint64_t W = bs == 512 ? 600 : 6000, next = 1000;
	unsigned maxlen = bs == 512 ? 600 / 16 : 8, chopfreq = bs == 512 ? 20 : 200;
	uint64_t *phys = calloc(W, sizeof(uint64_t));
	uint64_t *want = calloc(W, sizeof(uint64_t));
	struct ent *tmp = calloc(W + 2, sizeof(struct ent));
	struct leafrec lv[512];
	unsigned nleaf = 1, splits = 0, nospc = 0, chops = 0, merges = 0;
	static struct freelist f;
	uint8_t *before = malloc(bs);
	CHECK(phys && want && tmp && before);
	lv[0] = (struct leafrec){ malloc(bs), 0, TUX3_KEY_LIMIT };
	CHECK(lv[0].buf);
	memset(lv[0].buf, 0, bs);
	dleaf_init(lv[0].buf);
	rnd_state = seed;

	for (unsigned step = 0; step < steps; step++) {
		unsigned op = rnd() % chopfreq;
		if (op == 0) {
			/* truncate at from: chop every leaf reaching it */
			uint64_t from = rnd() % W;
			unsigned nwant = 0;
			for (uint64_t x = from; x < W; x++)
				if (phys[x])
					want[nwant++] = phys[x];
			f.n = 0;
			for (unsigned j = 0; j < nleaf; j++)
				if (lv[j].hi > from)
					CHECK_EQ(dleaf_chop(lv[j].buf, bs,
						 from > lv[j].lo ? from : lv[j].lo,
						 on_freed, &f), 0);
			expect_freed(&f, want, nwant);
			for (uint64_t x = from; x < W; x++)
				phys[x] = 0;
			chops++;
			verify_all(vol, bs, lv, nleaf, phys, W, tmp);
			continue;
		}
		uint64_t L = rnd() % W, cnt = 1 + rnd() % maxlen;
		if (cnt > W - L)
			cnt = W - L;
		uint64_t E = L + cnt, P;
		unsigned how = rnd() % 10;
		if (how < 2)
			P = 0;
		else if (how < 4 && L && phys[L - 1]) {
			P = phys[L - 1] + 1;	/* continue the left one */
			merges++;
		} else if (how < 5 && phys[L])
			P = phys[L];		/* same mapping again */
		else {
			P = next;
			next += cnt + rnd() % 3;
		}
		/* the caller splits the write at leaf boundaries */
		for (unsigned j = 0; j < nleaf; j++) {
			uint64_t a = L > lv[j].lo ? L : lv[j].lo;
			uint64_t b = E < lv[j].hi ? E : lv[j].hi;
			if (a >= b)
				continue;
			uint64_t pa = P ? P + (a - L) : 0;
			unsigned nwant = 0;
			for (uint64_t x = a; x < b; x++)
				if (phys[x] && phys[x] != (P ? pa + (x - a) : 0))
					want[nwant++] = phys[x];
			for (;;) {
				memcpy(before, lv[j].buf, bs);
				f.n = 0;
				int r = dleaf_write_extent(lv[j].buf, bs, a, pa,
							   b - a, lv[j].lo,
							   lv[j].hi, on_freed, &f);
				/* what the leaf should look like after */
				uint64_t *save = calloc(b - a, sizeof(uint64_t));
				CHECK(save);
				memcpy(save, phys + a, (b - a) * sizeof(uint64_t));
				for (uint64_t x = a; x < b; x++)
					phys[x] = P ? pa + (x - a) : 0;
				unsigned n = canon(phys, W, lv[j].lo, lv[j].hi,
						   tmp);
				if (r == -ENOSPC) {
					CHECK(n > cap);
					memcpy(phys + a, save,
					       (b - a) * sizeof(uint64_t));
					free(save);
					CHECK(!memcmp(before, lv[j].buf, bs));
					CHECK_EQ(f.n, 0);
					nospc++;
					CHECK(nleaf < 512);
					uint8_t *nb = malloc(bs);
					CHECK(nb);
					memset(nb, 0x5a, bs);
					int64_t sep = dleaf_split(lv[j].buf, nb, bs);
					CHECK(sep > (int64_t)lv[j].lo);
					CHECK(sep < (int64_t)lv[j].hi);
					memmove(&lv[j + 2], &lv[j + 1],
						(nleaf - j - 1) * sizeof(lv[0]));
					lv[j + 1] = (struct leafrec){
						nb, (uint64_t)sep, lv[j].hi };
					lv[j].hi = (uint64_t)sep;
					nleaf++;
					splits++;
					verify_all(vol, bs, lv, nleaf, phys, W,
						   tmp);
					/* redo this piece on the new row */
					j--;
					break;
				}
				free(save);
				CHECK_EQ(r, 0);
				CHECK(n <= cap);
				expect_freed(&f, want, nwant);
				break;
			}
		}
		verify_all(vol, bs, lv, nleaf, phys, W, tmp);
	}
	fprintf(stderr, "bs %u: %u leaves, %u splits, %u nospc, %u chops, "
		"%u merges\n", bs, nleaf, splits, nospc, chops, merges);
	CHECK(splits > 0 && chops > 0 && nospc > 0);
	for (unsigned j = 0; j < nleaf; j++)
		free(lv[j].buf);
	free(phys);
	free(want);
	free(tmp);
	free(before);
	fake_free(vol);
}

TEST(random_512) { random_run(512, 1, 3000); }
TEST(random_512_b) { random_run(512, 99, 3000); }
TEST(random_4096) { random_run(4096, 2, 2000); }
TEST(random_4096_b) { random_run(4096, 1234, 2000); }

/* one leaf, no splits: ENOSPC exactly when the canonical form overflows */
static void single_run(unsigned bs, uint64_t seed, unsigned steps)
{
	struct tux3_volume *vol = vol_for(bs);
	unsigned cap = (bs - 8) / 16, nospc = 0, ok = 0;
	uint64_t lo = 1000, hi = bs == 512 ? 1300 : 3000, W = hi, next = 5000;
	uint64_t *phys = calloc(W, sizeof(uint64_t));
	uint64_t *want = calloc(W, sizeof(uint64_t));
	uint64_t *save = calloc(W, sizeof(uint64_t));
	struct ent *tmp = calloc(W + 2, sizeof(struct ent));
	static struct freelist f;
	uint8_t *l = malloc(bs), *before = malloc(bs);
	CHECK(phys && want && save && tmp && l && before);
	memset(l, 0, bs);
	dleaf_init(l);
	rnd_state = seed;
	for (unsigned step = 0; step < steps; step++) {
		uint64_t L = lo + rnd() % (hi - lo), cnt = 1 + rnd() % 8;
		if (cnt > hi - L)
			cnt = hi - L;
		uint64_t P = rnd() % 4 == 0 ? 0 : next;
		next += cnt + 1;
		unsigned nwant = 0;
		for (uint64_t x = L; x < L + cnt; x++)
			if (phys[x])
				want[nwant++] = phys[x];
		memcpy(save, phys, W * sizeof(uint64_t));
		for (uint64_t x = L; x < L + cnt; x++)
			phys[x] = P ? P + (x - L) : 0;
		unsigned n = canon(phys, W, lo, hi, tmp);
		memcpy(before, l, bs);
		f.n = 0;
		int r = dleaf_write_extent(l, bs, L, P, cnt, lo, hi, on_freed, &f);
		if (n > cap) {
			CHECK_EQ(r, -ENOSPC);
			CHECK(!memcmp(before, l, bs));
			CHECK_EQ(f.n, 0);
			memcpy(phys, save, W * sizeof(uint64_t));
			nospc++;
		} else {
			CHECK_EQ(r, 0);
			expect_freed(&f, want, nwant);
			ok++;
		}
		must_check(vol, l, lo, hi);
		n = canon(phys, W, lo, hi, tmp);
		expect_entries(l, n, tmp);
	}
	CHECK(nospc > 10 && ok > 10);
	free(phys);
	free(want);
	free(save);
	free(tmp);
	free(l);
	free(before);
	fake_free(vol);
}

TEST(random_single_512) { single_run(512, 5, 4000); }
TEST(random_single_4096) { single_run(4096, 6, 4000); }

int main(void)
{
	return run_tests("dleaf_write");
}

/* Layer: ileaf.c write side -- ileaf_init/set_blob/split/find_free_inum on
 * synthetic leaves, checked after every step with ileaf_check and read back
 * with ileaf_blob; randomized against an in-memory model. */
#include "fixtures.h"

static struct tux3_volume *vol_for(unsigned bs)
{
	unsigned bits = 9;
	while ((1u << bits) < bs)
		bits++;
	return fake_vol(bits, 1 << 20);
}

static void must_check(struct tux3_volume *vol, const uint8_t *l,
		       uint64_t lo, uint64_t hi, unsigned magic)
{
	int r = ileaf_check(vol, l, 99, lo, hi, magic);
	if (r)
		fprintf(stderr, "ileaf_check: %s\n", vol->error.what);
	CHECK_EQ(r, 0);
}

static void expect_blob(const uint8_t *l, unsigned bs, uint64_t inum,
			const uint8_t *want, unsigned len)
{
	const uint8_t *blob;
	unsigned got;
	CHECK_EQ(ileaf_blob(l, bs, inum, &blob, &got), 0);
	CHECK_EQ(got, len);
	if (len)
		CHECK(!memcmp(blob, want, len));
}

/* the free gap between blobs and dictionary is all zero */
static void expect_zero_gap(const uint8_t *l, unsigned bs)
{
	unsigned count = ileaf_count(l);
	unsigned used = count ? be16(l + bs - 2 * count) : 0;
	for (unsigned i = ILEAF_HEADER + used; i < bs - 2 * count; i++)
		CHECK_EQ(l[i], 0);
}

TEST(init_and_free_space)
{
	struct tux3_volume *vol = vol_for(4096);
	uint8_t l[4096];
	memset(l, 0xaa, sizeof(l));
	ileaf_init(l, 4096, TUX3_MAGIC_ILEAF, 384);
	CHECK_EQ(be16(l), TUX3_MAGIC_ILEAF);
	CHECK_EQ(ileaf_count(l), 0);
	CHECK_EQ(ileaf_ibase(l), 384);
	CHECK_EQ(be32(l + 4), 0);
	CHECK_EQ(ileaf_free_space(l, 4096), 4096 - 16);
	must_check(vol, l, 384, 576, TUX3_MAGIC_ILEAF);
	ileaf_init(l, 512, TUX3_MAGIC_OLEAF, 0);
	CHECK_EQ(ileaf_free_space(l, 512), 512 - 16);
	must_check(vol, l, 0, TUX3_KEY_LIMIT, TUX3_MAGIC_OLEAF);
	fake_free(vol);
}

TEST(insert_replace_delete)
{
	struct tux3_volume *vol = vol_for(4096);
	uint8_t l[4096], a[48], b[100], c[10];
	memset(a, 0xa1, sizeof(a));
	memset(b, 0xb2, sizeof(b));
	memset(c, 0xc3, sizeof(c));
	ileaf_init(l, 4096, TUX3_MAGIC_ILEAF, 0);
	/* the empty-4k layout: inode 4 then 63 */
	CHECK_EQ(ileaf_set_blob(l, 4096, 4, a, 48), 0);
	CHECK_EQ(ileaf_count(l), 5);
	CHECK_EQ(ileaf_set_blob(l, 4096, 63, a, 48), 0);
	CHECK_EQ(ileaf_count(l), 64);
	CHECK_EQ(be16(l + 4096 - 8), 0);	/* slot 4 (inum 3) */
	CHECK_EQ(be16(l + 4096 - 10), 0x30);	/* slot 5 (inum 4) */
	CHECK_EQ(be16(l + 4096 - 126), 0x30);	/* slot 63 */
	CHECK_EQ(be16(l + 0xf80), 0x60);	/* slot 64, as on empty-4k */
	CHECK_EQ(ileaf_free_space(l, 4096), 4096 - 16 - 96 - 128);
	must_check(vol, l, 0, TUX3_KEY_LIMIT, TUX3_MAGIC_ILEAF);
	/* grow inode 4: inode 63 moves up */
	CHECK_EQ(ileaf_set_blob(l, 4096, 4, b, 100), 0);
	must_check(vol, l, 0, TUX3_KEY_LIMIT, TUX3_MAGIC_ILEAF);
	expect_blob(l, 4096, 4, b, 100);
	expect_blob(l, 4096, 63, a, 48);
	/* insert in the middle, into an empty slot */
	CHECK_EQ(ileaf_set_blob(l, 4096, 10, c, 10), 0);
	must_check(vol, l, 0, TUX3_KEY_LIMIT, TUX3_MAGIC_ILEAF);
	expect_blob(l, 4096, 10, c, 10);
	expect_blob(l, 4096, 63, a, 48);
	/* shrink inode 4 */
	CHECK_EQ(ileaf_set_blob(l, 4096, 4, c, 10), 0);
	expect_blob(l, 4096, 4, c, 10);
	expect_blob(l, 4096, 10, c, 10);
	expect_blob(l, 4096, 63, a, 48);
	expect_zero_gap(l, 4096);
	must_check(vol, l, 0, TUX3_KEY_LIMIT, TUX3_MAGIC_ILEAF);
	/* delete the last: trailing empty slots go, count stays minimal */
	CHECK_EQ(ileaf_set_blob(l, 4096, 63, NULL, 0), 0);
	CHECK_EQ(ileaf_count(l), 11);
	expect_zero_gap(l, 4096);
	for (unsigned k = 12; k <= 64; k++)
		CHECK_EQ(be16(l + 4096 - 2 * k), 0);
	must_check(vol, l, 0, TUX3_KEY_LIMIT, TUX3_MAGIC_ILEAF);
	/* delete a middle one: count unchanged */
	CHECK_EQ(ileaf_set_blob(l, 4096, 4, NULL, 0), 0);
	CHECK_EQ(ileaf_count(l), 11);
	expect_blob(l, 4096, 10, c, 10);
	/* deleting what is absent */
	CHECK_EQ(ileaf_set_blob(l, 4096, 4, NULL, 0), -ENOENT);
	CHECK_EQ(ileaf_set_blob(l, 4096, 500, NULL, 0), -ENOENT);
	CHECK_EQ(ileaf_set_blob(l, 4096, 10, NULL, 0), 0);
	CHECK_EQ(ileaf_count(l), 0);
	CHECK_EQ(ileaf_free_space(l, 4096), 4096 - 16);
	expect_zero_gap(l, 4096);
	must_check(vol, l, 0, TUX3_KEY_LIMIT, TUX3_MAGIC_ILEAF);
	fake_free(vol);
}

TEST(range_and_nospace)
{
	struct tux3_volume *vol = vol_for(512);
	uint8_t l[512], ref[512], big[600];
	memset(big, 7, sizeof(big));
	ileaf_init(l, 512, TUX3_MAGIC_OLEAF, 1000);
	CHECK_EQ(ileaf_set_blob(l, 512, 999, big, 2), -ERANGE);
	CHECK_EQ(ileaf_set_blob(l, 512, TUX3_KEY_LIMIT, big, 2), -ERANGE);
	/* exactly full: 16 + 494 + 2 = 512 */
	CHECK_EQ(ileaf_set_blob(l, 512, 1000, big, 495), -ENOSPC);
	CHECK_EQ(ileaf_set_blob(l, 512, 1000, big, 494), 0);
	CHECK_EQ(ileaf_free_space(l, 512), 0);
	must_check(vol, l, 1000, 1001, TUX3_MAGIC_OLEAF);
	memcpy(ref, l, 512);
	CHECK_EQ(ileaf_set_blob(l, 512, 1001, big, 1), -ENOSPC);
	CHECK_EQ(ileaf_set_blob(l, 512, 1000, big, 495), -ENOSPC);
	CHECK(!memcmp(ref, l, 512));	/* a failed write changes nothing */
	/* a dictionary too long for the block */
	ileaf_init(l, 512, TUX3_MAGIC_OLEAF, 0);
	CHECK_EQ(ileaf_set_blob(l, 512, 248, big, 2), -ENOSPC);
	CHECK_EQ(ileaf_set_blob(l, 512, 246, big, 2), 0);	/* 16+2+494 */
	CHECK_EQ(ileaf_count(l), 247);
	CHECK_EQ(ileaf_free_space(l, 512), 0);
	must_check(vol, l, 0, TUX3_KEY_LIMIT, TUX3_MAGIC_OLEAF);
	CHECK_EQ(ileaf_set_blob(l, 512, 247, big, 2), -ENOSPC);
	CHECK_EQ(ileaf_set_blob(l, 512, 0, big, 2), -ENOSPC);
	CHECK_EQ(ileaf_set_blob(l, 512, 246, big, 1), 0);
	CHECK_EQ(ileaf_set_blob(l, 512, 0, big, 1), 0);
	must_check(vol, l, 0, TUX3_KEY_LIMIT, TUX3_MAGIC_OLEAF);
	fake_free(vol);
}

TEST(split_by_bytes)
{
	struct tux3_volume *vol = vol_for(4096);
	uint8_t l[4096], r[4096], blob[400];
	uint64_t sep = 0;
	for (unsigned i = 0; i < sizeof(blob); i++)
		blob[i] = (uint8_t)i;
	ileaf_init(l, 4096, TUX3_MAGIC_ILEAF, 100);
	CHECK_EQ(ileaf_split(l, r, 4096, &sep), -EINVAL);
	CHECK_EQ(ileaf_set_blob(l, 4096, 105, blob, 10), 0);
	/* one inode above the base: it moves to a leaf of its own, the
	 * range below it left empty for an inode too big to share */
	CHECK_EQ(ileaf_split(l, r, 4096, &sep), 0);
	CHECK_EQ(sep, 105);
	CHECK_EQ(ileaf_ibase(r), 105);
	CHECK_EQ(ileaf_count(r), 1);
	CHECK_EQ(ileaf_count(l), 0);
	const uint8_t *got;
	unsigned gotlen;
	CHECK_EQ(ileaf_blob(r, 4096, 105, &got, &gotlen), 0);
	CHECK_EQ(gotlen, 10);
	CHECK(!memcmp(got, blob, 10));
	/* one inode at the base: the range above it goes to an empty leaf */
	CHECK_EQ(ileaf_split(r, l, 4096, &sep), 0);
	CHECK_EQ(sep, 106);
	CHECK_EQ(ileaf_count(r), 1);
	CHECK_EQ(ileaf_count(l), 0);
	/* back to the one leaf the rest of the case builds on */
	ileaf_init(l, 4096, TUX3_MAGIC_ILEAF, 100);
	CHECK_EQ(ileaf_set_blob(l, 4096, 105, blob, 10), 0);
	/* 105:10, 110:10, 120:400, 121:10 -> balance puts 120 on the right */
	CHECK_EQ(ileaf_set_blob(l, 4096, 110, blob, 10), 0);
	CHECK_EQ(ileaf_set_blob(l, 4096, 120, blob, 400), 0);
	CHECK_EQ(ileaf_set_blob(l, 4096, 121, blob, 10), 0);
	CHECK_EQ(ileaf_split(l, r, 4096, &sep), 0);
	CHECK_EQ(sep, 120);
	CHECK_EQ(ileaf_ibase(r), 120);
	CHECK_EQ(ileaf_count(r), 2);
	CHECK_EQ(ileaf_count(l), 11);	/* 100..110, trailing empties trimmed */
	must_check(vol, l, 100, sep, TUX3_MAGIC_ILEAF);
	must_check(vol, r, sep, 576, TUX3_MAGIC_ILEAF);
	expect_blob(l, 4096, 105, blob, 10);
	expect_blob(l, 4096, 110, blob, 10);
	expect_blob(r, 4096, 120, blob, 400);
	expect_blob(r, 4096, 121, blob, 10);
	expect_zero_gap(l, 4096);
	expect_zero_gap(r, 4096);
	/* the free inums between the halves belong to the left leaf */
	uint64_t inum = 0;
	CHECK_EQ(ileaf_find_free_inum(l, 4096, 111, sep, &inum), 0);
	CHECK_EQ(inum, 111);
	CHECK_EQ(ileaf_find_free_inum(l, 4096, 119, sep, &inum), 0);
	CHECK_EQ(inum, 119);
	CHECK_EQ(ileaf_find_free_inum(r, 4096, 0, 122, &inum), -ENOENT);
	CHECK_EQ(ileaf_find_free_inum(r, 4096, 0, 123, &inum), 0);
	CHECK_EQ(inum, 122);
	/* the oleaf magic is kept */
	ileaf_init(l, 4096, TUX3_MAGIC_OLEAF, 0);
	CHECK_EQ(ileaf_set_blob(l, 4096, 1, blob, 2), 0);
	CHECK_EQ(ileaf_set_blob(l, 4096, 2, blob, 2), 0);
	CHECK_EQ(ileaf_split(l, r, 4096, &sep), 0);
	CHECK_EQ(sep, 2);
	CHECK_EQ(be16(r), TUX3_MAGIC_OLEAF);
	must_check(vol, l, 0, 2, TUX3_MAGIC_OLEAF);
	must_check(vol, r, 2, TUX3_KEY_LIMIT, TUX3_MAGIC_OLEAF);
	fake_free(vol);
}

TEST(find_free_inum)
{
	uint8_t l[512], blob[4] = { 1, 2, 3, 4 };
	uint64_t inum = 0;
	ileaf_init(l, 512, TUX3_MAGIC_ILEAF, 64);
	CHECK_EQ(ileaf_find_free_inum(l, 512, 0, 100, &inum), 0);
	CHECK_EQ(inum, 64);	/* below ibase: start at ibase */
	for (uint64_t i = 64; i < 70; i++)
		CHECK_EQ(ileaf_set_blob(l, 512, i, blob, 4), 0);
	CHECK_EQ(ileaf_set_blob(l, 512, 67, NULL, 0), 0);
	CHECK_EQ(ileaf_find_free_inum(l, 512, 64, 100, &inum), 0);
	CHECK_EQ(inum, 67);
	CHECK_EQ(ileaf_find_free_inum(l, 512, 68, 100, &inum), 0);
	CHECK_EQ(inum, 70);	/* past count */
	CHECK_EQ(ileaf_find_free_inum(l, 512, 68, 70, &inum), -ENOENT);
	CHECK_EQ(ileaf_find_free_inum(l, 512, 100, 100, &inum), -ENOENT);
	CHECK_EQ(ileaf_find_free_inum(l, 512, 69, 71, &inum), 0);
	CHECK_EQ(inum, 70);
}

/* ---- randomized: a row of leaves covering [0, 2^48), like an itree ---- */

struct leafrec {
	uint8_t *buf;
	uint64_t lo, hi;
};

struct model {
	unsigned bs, window, maxblob, magic;
	uint8_t **blob;
	unsigned *len;
	struct leafrec leaf[256];
	unsigned nleaf;
	unsigned splits, nospc;
};

static uint64_t rnd_state;
static uint32_t rnd(void)
{
	rnd_state = rnd_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rnd_state >> 33);
}

static void model_verify(struct tux3_volume *vol, struct model *m)
{
	for (unsigned j = 0; j < m->nleaf; j++) {
		struct leafrec *lr = &m->leaf[j];
		must_check(vol, lr->buf, lr->lo, lr->hi, m->magic);
		expect_zero_gap(lr->buf, m->bs);
		unsigned count = ileaf_count(lr->buf);
		uint64_t ibase = ileaf_ibase(lr->buf);
		CHECK(ibase >= lr->lo);
		/* count minimal: the last slot is live */
		if (count) {
			const uint8_t *b;
			unsigned len;
			ileaf_blob(lr->buf, m->bs, ibase + count - 1, &b, &len);
			CHECK(len > 0);
		}
		/* used bytes = sum of the model's blobs in this leaf */
		unsigned sum = 0;
		for (uint64_t i = lr->lo; i < lr->hi && i < m->window; i++)
			sum += m->len[i];
		CHECK_EQ(ileaf_free_space(lr->buf, m->bs),
			 m->bs - 16 - sum - 2 * count);
	}
	for (uint64_t i = 0; i < m->window; i++) {
		unsigned j = 0;
		while (!(i >= m->leaf[j].lo && i < m->leaf[j].hi))
			j++;
		expect_blob(m->leaf[j].buf, m->bs, i, m->blob[i], m->len[i]);
	}
}

static unsigned leaf_of(struct model *m, uint64_t inum)
{
	for (unsigned j = 0; j < m->nleaf; j++)
		if (inum >= m->leaf[j].lo && inum < m->leaf[j].hi)
			return j;
	CHECK(0);
	return 0;
}

static void random_run(unsigned bs, unsigned magic, uint64_t seed,
		       unsigned steps)
{
	struct tux3_volume *vol = vol_for(bs);
	struct model m = { .bs = bs, .magic = magic };
	/* 16 + 2 * window + 2 * maxblob <= bs keeps every one-inode leaf
	 * able to take one more inode, so splitting always ends */
	m.window = bs == 512 ? 160 : 1200;
	m.maxblob = bs == 512 ? 60 : 500;
	m.blob = calloc(m.window, sizeof(*m.blob));
	m.len = calloc(m.window, sizeof(*m.len));
	CHECK(m.blob && m.len);
	for (unsigned i = 0; i < m.window; i++) {
		m.blob[i] = malloc(m.maxblob);
		CHECK(m.blob[i]);
	}
	m.leaf[0] = (struct leafrec){ malloc(bs), 0, TUX3_KEY_LIMIT };
	m.nleaf = 1;
	ileaf_init(m.leaf[0].buf, bs, magic, 0);
	rnd_state = seed;
	uint8_t newblob[512], *before = malloc(bs);
	CHECK(before);

	for (unsigned step = 0; step < steps; step++) {
		unsigned op = rnd() % 10;
		uint64_t inum = rnd() % m.window;
		if (op == 9) {
			/* find_free_inum in one leaf against the model */
			unsigned j = rnd() % m.nleaf;
			struct leafrec *lr = &m.leaf[j];
			uint64_t goal = lr->lo + rnd() % (m.window / 4 + 1);
			uint64_t limit = lr->hi < m.window ? lr->hi : m.window;
			uint64_t want = 0, got = 0;
			int wr = -ENOENT;
			uint64_t ib = ileaf_ibase(lr->buf);
			for (uint64_t i = goal < ib ? ib : goal; i < limit; i++)
				if (!m.len[i]) {
					want = i;
					wr = 0;
					break;
				}
			CHECK_EQ(ileaf_find_free_inum(lr->buf, bs, goal, limit,
						      &got), wr);
			if (!wr)
				CHECK_EQ(got, want);
			continue;
		}
		unsigned len = op < 3 ? 0 : 1 + rnd() % m.maxblob;
		for (unsigned i = 0; i < len; i++)
			newblob[i] = (uint8_t)rnd();
		for (;;) {
			unsigned j = leaf_of(&m, inum);
			struct leafrec *lr = &m.leaf[j];
			memcpy(before, lr->buf, bs);
			int r = ileaf_set_blob(lr->buf, bs, inum, newblob, len);
			if (r == -ENOENT) {
				CHECK_EQ(len, 0);
				CHECK_EQ(m.len[inum], 0);
				CHECK(!memcmp(before, lr->buf, bs));
				break;
			}
			if (r == -ERANGE) {
				/* below ibase: only after a split moved it */
				CHECK(inum < ileaf_ibase(lr->buf));
				CHECK(0);
			}
			if (r == -ENOSPC) {
				CHECK(len > 0);
				CHECK(!memcmp(before, lr->buf, bs));
				/* the model agrees it does not fit */
				unsigned count = ileaf_count(lr->buf);
				uint64_t ib = ileaf_ibase(lr->buf);
				unsigned slots = inum - ib + 1 > count ?
					(unsigned)(inum - ib + 1) : count;
				CHECK(16 + bs - 16 - ileaf_free_space(lr->buf, bs)
				      - 2 * count - m.len[inum] + len +
				      2 * slots > bs);
				m.nospc++;
				CHECK(m.nleaf < 256);
				uint8_t *nb = malloc(bs);
				uint64_t sep = 0;
				CHECK(nb);
				memset(nb, 0x5a, bs);
				CHECK_EQ(ileaf_split(lr->buf, nb, bs, &sep), 0);
				CHECK(sep > lr->lo && sep < lr->hi);
				memmove(&m.leaf[j + 2], &m.leaf[j + 1],
					(m.nleaf - j - 1) * sizeof(m.leaf[0]));
				m.leaf[j + 1] = (struct leafrec){ nb, sep,
								  m.leaf[j].hi };
				m.leaf[j].hi = sep;
				m.nleaf++;
				m.splits++;
				model_verify(vol, &m);
				continue;
			}
			CHECK_EQ(r, 0);
			memcpy(m.blob[inum], newblob, len);
			m.len[inum] = len;
			break;
		}
		model_verify(vol, &m);
	}
	/* the run exercised splits and full leaves */
	CHECK(m.splits > 0);
	fprintf(stderr, "bs %u: %u leaves, %u splits\n", bs, m.nleaf, m.splits);
	for (unsigned i = 0; i < m.window; i++)
		free(m.blob[i]);
	for (unsigned j = 0; j < m.nleaf; j++)
		free(m.leaf[j].buf);
	free(m.blob);
	free(m.len);
	free(before);
	fake_free(vol);
}

TEST(random_ileaf_512) { random_run(512, TUX3_MAGIC_ILEAF, 1, 4000); }
TEST(random_oleaf_512) { random_run(512, TUX3_MAGIC_OLEAF, 2, 4000); }
TEST(random_ileaf_4096) { random_run(4096, TUX3_MAGIC_ILEAF, 3, 3000); }
TEST(random_ileaf_4096_b) { random_run(4096, TUX3_MAGIC_ILEAF, 77, 3000); }

/* a single leaf, no splits: ENOSPC exactly when the model says so */
static void single_leaf_run(unsigned bs, uint64_t seed, unsigned steps)
{
	struct tux3_volume *vol = vol_for(bs);
	uint64_t ibase = 5000, window = (bs - 16) / 2 + 8;
	unsigned *len = calloc(window, sizeof(unsigned));
	uint8_t **blob = calloc(window, sizeof(uint8_t *));
	uint8_t *l = malloc(bs), *before = malloc(bs), nb[600];
	CHECK(len && blob && l && before);
	ileaf_init(l, bs, TUX3_MAGIC_ILEAF, ibase);
	rnd_state = seed;
	unsigned nospc = 0, ok = 0;
	for (unsigned step = 0; step < steps; step++) {
		uint64_t inum = ibase - 2 + rnd() % (window + 2);
		unsigned n = rnd() % 3 == 0 ? 0 : 1 + rnd() % (bs / 8);
		for (unsigned i = 0; i < n; i++)
			nb[i] = (uint8_t)rnd();
		memcpy(before, l, bs);
		/* the model's expectation */
		unsigned hiwant = 0, sum = 0;
		for (uint64_t i = 0; i < window; i++) {
			unsigned li = ibase + i == inum ? n : len[i];
			sum += li;
			if (li)
				hiwant = (unsigned)i + 1;
		}
		int want = 0;
		if (inum < ibase)
			want = -ERANGE;
		else if (!n && !len[inum - ibase])
			want = -ENOENT;
		else if (16 + sum + 2 * hiwant > bs)
			want = -ENOSPC;
		int r = ileaf_set_blob(l, bs, inum, nb, n);
		CHECK_EQ(r, want);
		if (r) {
			CHECK(!memcmp(before, l, bs));
			nospc += r == -ENOSPC;
		} else {
			ok++;
			uint64_t i = inum - ibase;
			free(blob[i]);
			blob[i] = malloc(n + 1);
			memcpy(blob[i], nb, n);
			len[i] = n;
			CHECK_EQ(ileaf_count(l), hiwant);
		}
		must_check(vol, l, ibase, TUX3_KEY_LIMIT, TUX3_MAGIC_ILEAF);
		expect_zero_gap(l, bs);
		for (uint64_t i = 0; i < window; i++)
			expect_blob(l, bs, ibase + i, blob[i], len[i]);
	}
	CHECK(nospc > 10 && ok > 10);
	for (uint64_t i = 0; i < window; i++)
		free(blob[i]);
	free(blob);
	free(len);
	free(l);
	free(before);
	fake_free(vol);
}

TEST(random_single_512) { single_leaf_run(512, 11, 5000); }
TEST(random_single_4096) { single_leaf_run(4096, 12, 3000); }

int main(void)
{
	return run_tests("ileaf_write");
}

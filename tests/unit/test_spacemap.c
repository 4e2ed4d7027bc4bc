/* Layer: io/spacemap.c -- space maps: bits over up to 2^48 blocks in
 * chunks materialised only where used, against a flat model. */
#include "harness.h"
#include "internal.h"

/* An empty map over 2^48 bits costs nothing and reads as zeroes. */
TEST(spacemap_empty_at_the_limit)
{
	struct spacemap sm;
	CHECK_EQ(spacemap_init(&sm, 15, 13, TUX3_KEY_LIMIT), 0);
	CHECK(!spacemap_test(&sm, 0));
	CHECK(!spacemap_test(&sm, TUX3_KEY_LIMIT - 1));
	CHECK(spacemap_next(&sm, 0) == NULL);
	CHECK_EQ(spacemap_count(&sm, 0, TUX3_KEY_LIMIT), 0);
	CHECK_EQ(sm.bytes, 0);
	CHECK_EQ(spacemap_init(&sm, 15, 13, TUX3_KEY_LIMIT + 1), -EINVAL);
	CHECK_EQ(spacemap_init(&sm, 15, 16, 100), -EINVAL);
}

/* Bits at both ends of a 2^48-bit map: two chunks, each with its own
 * path of radix nodes; next finds them in order, counts add up. */
TEST(spacemap_far_ends)
{
	struct spacemap sm;
	uint64_t last = TUX3_KEY_LIMIT - 1;
	CHECK_EQ(spacemap_init(&sm, 15, 13, TUX3_KEY_LIMIT), 0);
	CHECK_EQ(spacemap_set(&sm, 5, true), 0);
	CHECK_EQ(spacemap_set(&sm, 5, true), 1);	/* already set */
	CHECK_EQ(spacemap_set(&sm, last, true), 0);
	CHECK_EQ(sm.chunks, 2);
	CHECK(sm.bytes < 2 * (4096 + 64) + 12 * 512 + 1);
	struct spacemap_chunk *c = spacemap_next(&sm, 0);
	CHECK(c && c->index == 0);
	c = spacemap_next(&sm, 1);
	CHECK(c && c->index == last >> 15);
	CHECK(spacemap_next(&sm, (last >> 15) + 1) == NULL);
	CHECK_EQ(spacemap_count(&sm, 0, TUX3_KEY_LIMIT), 2);
	CHECK_EQ(spacemap_count(&sm, 6, last - 6), 0);
	CHECK_EQ(spacemap_count(&sm, 6, last - 5), 1);
	CHECK_EQ(c->count[(last & 32767) >> 13], 1);
	CHECK_EQ(spacemap_set(&sm, last, false), 1);
	CHECK_EQ(spacemap_count(&sm, 0, TUX3_KEY_LIMIT), 1);
	/* clearing a bit where no chunk is makes none */
	CHECK_EQ(spacemap_set(&sm, 1ULL << 40, false), 0);
	CHECK_EQ(sm.chunks, 2);
	spacemap_free(&sm);
	CHECK_EQ(sm.chunks, 0);
}

/* A chunk made from data counts its units; a unit smaller than a byte
 * (small chunk sizes) too. */
TEST(spacemap_make_from_data)
{
	struct spacemap sm;
	uint8_t data[512];
	for (unsigned i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 37 + 1);
	CHECK_EQ(spacemap_init(&sm, 12, 10, 1ULL << 30), 0);
	struct spacemap_chunk *c = spacemap_make(&sm, 77, data);
	CHECK(c != NULL);
	CHECK(spacemap_make(&sm, 77, NULL) == c);	/* already there */
	for (unsigned u = 0; u < 4; u++) {
		uint32_t n = 0;
		for (unsigned k = 0; k < 128; k++)
			n += (uint32_t)__builtin_popcount(data[u * 128 + k]);
		CHECK_EQ(c->count[u], n);
	}
	CHECK(spacemap_make(&sm, 1ULL << 30, NULL) == NULL);	/* beyond */
	spacemap_free(&sm);
	CHECK_EQ(spacemap_init(&sm, 4, 2, 1000), 0);
	uint8_t two[2] = { 0xf3, 0x81 };
	c = spacemap_make(&sm, 3, two);
	CHECK(c != NULL);
	CHECK_EQ(c->count[0], 2);
	CHECK_EQ(c->count[1], 4);
	CHECK_EQ(c->count[2], 1);
	CHECK_EQ(c->count[3], 1);
	CHECK_EQ(spacemap_count(&sm, 48, 16), 8);
	spacemap_free(&sm);
}

/* Random sets and clears against a flat model, with counts over random
 * ranges and the chunks in order. */
TEST(spacemap_against_model)
{
	enum { NBITS = 1 << 20 };
	static uint8_t model[NBITS / 8];
	struct spacemap sm;
	uint64_t seed = 12345;
	memset(model, 0, sizeof(model));
	CHECK_EQ(spacemap_init(&sm, 12, 10, NBITS), 0);
	for (unsigned i = 0; i < 200000; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		uint64_t n = (seed >> 20) % NBITS;
		if (i & 1)	/* clusters, as allocations are */
			n &= ~0x3ffffULL | 0xfff;
		bool set = (seed >> 60) & 3;
		bool was = model[n >> 3] >> (n & 7) & 1;
		CHECK_EQ(spacemap_set(&sm, n, set), was);
		if (set)
			model[n >> 3] |= (uint8_t)(1u << (n & 7));
		else
			model[n >> 3] &= (uint8_t)~(1u << (n & 7));
	}
	for (unsigned i = 0; i < 2000; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		uint64_t a = (seed >> 12) % NBITS, len = (seed >> 40) % 70000;
		uint64_t want = 0;
		for (uint64_t n = a; n < a + len && n < NBITS; n++)
			want += model[n >> 3] >> (n & 7) & 1;
		CHECK_EQ(spacemap_count(&sm, a, len), want);
		CHECK_EQ(spacemap_test(&sm, a), model[a >> 3] >> (a & 7) & 1);
	}
	uint64_t prev = 0, seen = 0;
	for (struct spacemap_chunk *c = spacemap_next(&sm, 0); c;
	     c = spacemap_next(&sm, c->index + 1), seen++) {
		CHECK(seen == 0 || c->index > prev);
		prev = c->index;
	}
	CHECK_EQ(seen, sm.chunks);
	spacemap_free(&sm);
}

int main(void)
{
	return run_tests("spacemap");
}

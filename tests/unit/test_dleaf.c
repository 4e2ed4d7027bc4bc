/* Layer: dleaf.c -- extent leaf entries and the dtree leaf check. */
#include "fixtures.h"

struct ent { uint64_t logical, physical; uint32_t version; };

static uint8_t *mkdleaf(unsigned bs, unsigned count, const struct ent *e)
{
	uint8_t *l = calloc(1, bs);
	CHECK(l);
	put_be16(l, TUX3_MAGIC_DLEAF);
	put_be16(l + 2, (uint16_t)count);
	for (unsigned i = 0; i < count; i++) {
		uint8_t *p = l + DLEAF_HEADER + DLEAF_ENTRY * i;
		put_be64(p, (uint64_t)(e[i].version >> 16) << 48 | e[i].logical);
		put_be64(p + 8, (uint64_t)(e[i].version & 0xffff) << 48 |
				e[i].physical);
	}
	return l;
}

static int check(struct tux3_volume *vol, const uint8_t *l, uint64_t lo,
		 uint64_t hi)
{
	return dtree_ops.leaf_check(vol, l, 4, lo, hi);
}

/* small-delta's atable dleaf at block 4 (verified) */
static const struct ent atable[] = {
	{ 0, 66, 0 }, { 1, 0, 0 }, { 1 << 28, 5, 0 }, { (1 << 28) + 1, 0, 0 },
	{ (1 << 28) + (1 << 22), 6, 0 }, { (1 << 28) + (1 << 22) + 1, 0, 0 },
};

/* l decodes as the six atable entries */
static void expect_atable(const uint8_t *l)
{
	CHECK_EQ(dleaf_count(l), 6);
	for (unsigned i = 0; i < 6; i++) {
		struct dleaf_entry e;
		dleaf_entry_get(l, i, &e);
		CHECK_EQ(e.logical, atable[i].logical);
		CHECK_EQ(e.physical, atable[i].physical);
		CHECK_EQ(e.version, 0);
	}
}

TEST(entry_decode)
{
	uint8_t *l = mkdleaf(4096, 6, atable);
	expect_atable(l);
	/* word 0 = logical, word 1 = physical */
	CHECK_EQ(be64(l + 8 + 32), 1 << 28);
	CHECK_EQ(be64(l + 8 + 40), 5);
	free(l);
}

TEST(entry_version_halves)
{
	const struct ent e[] = {
		{ TUX3_MAX_BLOCK, TUX3_MAX_BLOCK, 0xabcd1234u },
		{ 7, 9, 0x00010000u }, { 7, 9, 0x0000ffffu },
	};
	uint8_t *l = mkdleaf(4096, 3, e);
	struct dleaf_entry d;
	dleaf_entry_get(l, 0, &d);
	CHECK(d.logical == TUX3_MAX_BLOCK);
	CHECK(d.physical == TUX3_MAX_BLOCK);
	CHECK(d.version == 0xabcd1234u);
	CHECK_EQ(be16(l + 8), 0xabcd);	/* high half in word 0 */
	CHECK_EQ(be16(l + 16), 0x1234);	/* low half in word 1 */
	dleaf_entry_get(l, 1, &d);
	CHECK(d.version == 0x10000u);
	CHECK_EQ(d.logical, 7);
	dleaf_entry_get(l, 2, &d);
	CHECK(d.version == 0xffffu);
	CHECK_EQ(d.physical, 9);
	free(l);
}

TEST(check_valid)
{
	struct tux3_volume *vol = fake_vol(12, 32768);
	uint8_t *l = mkdleaf(4096, 6, atable);
	CHECK_EQ(check(vol, l, 0, TUX3_KEY_LIMIT), 0);
	CHECK_EQ(dtree_ops.leaf_magic, TUX3_MAGIC_DLEAF);
	free(l);
	/* a leading hole (tree-fuse /files/sparse) */
	const struct ent sparse[] = { { 0, 0, 0 }, { 25600, 26136, 0 },
				      { 25605, 26142, 0 }, { 25856, 0, 0 } };
	l = mkdleaf(4096, 4, sparse);
	CHECK_EQ(check(vol, l, 0, TUX3_KEY_LIMIT), 0);
	free(l);
	/* count 0: an empty leaf, all hole */
	l = mkdleaf(4096, 0, NULL);
	CHECK_EQ(check(vol, l, 0, TUX3_KEY_LIMIT), 0);
	free(l);
	/* sentinel only */
	l = mkdleaf(4096, 1, (struct ent[]){ { 5, 0, 0 } });
	CHECK_EQ(check(vol, l, 0, TUX3_KEY_LIMIT), 0);
	free(l);
	fake_free(vol);
}

TEST(check_magic_and_count)
{
	struct tux3_volume *vol = fake_vol(9, 4096);
	uint8_t *l = mkdleaf(512, 2, (struct ent[]){ { 0, 20, 0 }, { 1, 0, 0 } });
	put_be16(l, 0x1eaf);	/* the older dleaf magic is not valid */
	CHECK_EQ(check(vol, l, 0, TUX3_KEY_LIMIT), -EUCLEAN);
	CHECK_EQ(vol->error.offset, 0);
	CHECK_EQ(vol->error.block, 4);
	CHECK(strstr(vol->error.what, "magic"));
	tux3_clear_error(vol);
	put_be16(l, TUX3_MAGIC_DLEAF);
	CHECK_EQ(check(vol, l, 0, TUX3_KEY_LIMIT), 0);
	put_be16(l + 2, (512 - 8) / 16 + 1);
	CHECK_EQ(check(vol, l, 0, TUX3_KEY_LIMIT), -EUCLEAN);
	CHECK_EQ(vol->error.offset, 2);
	free(l);
	fake_free(vol);
}

/* A 4K leaf of these entries fails the check with what at offset. */
static void expect_bad(unsigned count, const struct ent *e, const char *what,
		       unsigned offset)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	uint8_t *l = mkdleaf(4096, count, e);
	CHECK_EQ(check(vol, l, 0, TUX3_KEY_LIMIT), -EUCLEAN);
	CHECK(strstr(vol->error.what, what));
	CHECK_EQ(vol->error.offset, offset);
	free(l);
	fake_free(vol);
}

TEST(check_sentinel)
{
	expect_bad(2, (struct ent[]){ { 0, 20, 0 }, { 1, 21, 0 } },
		   "sentinel", DLEAF_HEADER + DLEAF_ENTRY);
}

TEST(check_version_rejected)
{
	expect_bad(3, (struct ent[]){ { 0, 20, 0 }, { 1, 30, 1 }, { 2, 0, 0 } },
		   "version", DLEAF_HEADER + DLEAF_ENTRY);
}

TEST(check_order)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	/* equal neighbours (versions of one extent are not in this format) */
	uint8_t *l = mkdleaf(4096, 3, (struct ent[]){ { 0, 20, 0 },
		{ 0, 30, 0 }, { 2, 0, 0 } });
	CHECK_EQ(check(vol, l, 0, TUX3_KEY_LIMIT), -EUCLEAN);
	CHECK_EQ(vol->error.offset, DLEAF_HEADER + DLEAF_ENTRY);
	free(l);
	tux3_clear_error(vol);
	l = mkdleaf(4096, 3, (struct ent[]){ { 5, 20, 0 }, { 3, 30, 0 },
		{ 9, 0, 0 } });
	CHECK_EQ(check(vol, l, 0, TUX3_KEY_LIMIT), -EUCLEAN);
	CHECK(strstr(vol->error.what, "not above"));
	free(l);
	fake_free(vol);
}

TEST(check_key_range)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	const struct ent e[] = { { 100, 20, 0 }, { 110, 40, 0 }, { 120, 0, 0 } };
	uint8_t *l = mkdleaf(4096, 3, e);
	CHECK_EQ(check(vol, l, 100, 120), 0);	/* the sentinel may equal hi */
	CHECK_EQ(check(vol, l, 100, 200), 0);
	CHECK_EQ(check(vol, l, 101, 200), -EUCLEAN);
	CHECK(strstr(vol->error.what, "outside the key range"));
	CHECK_EQ(vol->error.offset, DLEAF_HEADER);
	tux3_clear_error(vol);
	CHECK_EQ(check(vol, l, 100, 119), -EUCLEAN);
	tux3_clear_error(vol);
	/* a non-sentinel entry must be below hi */
	CHECK_EQ(check(vol, l, 0, 110), -EUCLEAN);
	CHECK_EQ(vol->error.offset, DLEAF_HEADER + DLEAF_ENTRY);
	free(l);
	fake_free(vol);
}

TEST(check_extent_in_volume)
{
	struct tux3_volume *vol = fake_vol(12, 1000);
	/* 10 blocks at 990 fit exactly; at 991 they run past the end */
	uint8_t *l = mkdleaf(4096, 2, (struct ent[]){ { 0, 990, 0 }, { 10, 0, 0 } });
	CHECK_EQ(check(vol, l, 0, TUX3_KEY_LIMIT), 0);
	free(l);
	l = mkdleaf(4096, 2, (struct ent[]){ { 0, 991, 0 }, { 10, 0, 0 } });
	CHECK_EQ(check(vol, l, 0, TUX3_KEY_LIMIT), -EUCLEAN);
	CHECK(strstr(vol->error.what, "outside the volume"));
	free(l);
	tux3_clear_error(vol);
	/* an extent in the reserved area */
	l = mkdleaf(4096, 2, (struct ent[]){ { 0, 1, 0 }, { 1, 0, 0 } });
	CHECK_EQ(check(vol, l, 0, TUX3_KEY_LIMIT), -EUCLEAN);
	free(l);
	tux3_clear_error(vol);
	/* a hole may be any length */
	l = mkdleaf(4096, 3, (struct ent[]){ { 0, 0, 0 }, { 1ULL << 40, 5, 0 },
		{ (1ULL << 40) + 1, 0, 0 } });
	CHECK_EQ(check(vol, l, 0, TUX3_KEY_LIMIT), 0);
	free(l);
	fake_free(vol);
}

TEST(oracle_dleaves)
{
	struct tux3_volume *vol = open_oracle("small-delta");
	uint8_t *l = read_vol_block(vol, 4);
	expect_atable(l);
	CHECK_EQ(dtree_ops.leaf_check(vol, l, 4, 0, TUX3_KEY_LIMIT), 0);
	free(l);
	tux3_close(vol);
	vol = oracle_or_null("orphan");
	if (vol) {
		l = read_vol_block(vol, 65);
		CHECK_EQ(dleaf_count(l), 13);	/* 12 extents + sentinel */
		CHECK_EQ(dtree_ops.leaf_check(vol, l, 65, 0, TUX3_KEY_LIMIT), 0);
		free(l);
		tux3_close(vol);
	}
}

int main(void)
{
	return run_tests("dleaf");
}

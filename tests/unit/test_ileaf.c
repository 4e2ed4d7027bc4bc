/* Layer: ileaf.c -- inode/orphan table leaves: blob lookup and checks on
 * synthetic leaves (and the verified empty-4k leaf). */
#include "fixtures.h"

/* ends[k-1] = end offset of slot k; blob bytes are filled with the
 * low byte of their inum so a test can see which blob it got. */
static uint8_t *mkleaf(unsigned bs, unsigned magic, uint64_t ibase,
		       unsigned count, const unsigned *ends)
{
	uint8_t *l = calloc(1, bs);
	CHECK(l);
	put_be16(l, (uint16_t)magic);
	put_be16(l + 2, (uint16_t)count);
	put_be64(l + 8, ibase);
	unsigned prev = 0;
	for (unsigned k = 1; k <= count; k++) {
		put_be16(l + bs - 2 * k, (uint16_t)ends[k - 1]);
		if (ends[k - 1] > prev && ends[k - 1] <= bs - 16 - 2 * count)
			memset(l + ILEAF_HEADER + prev,
			       (int)((ibase + k - 1) & 0xff),
			       ends[k - 1] - prev);
		if (ends[k - 1] > prev)
			prev = ends[k - 1];
	}
	return l;
}

TEST(header_accessors)
{
	const unsigned ends[] = { 48 };
	uint8_t *l = mkleaf(4096, TUX3_MAGIC_ILEAF, 63, 1, ends);
	CHECK_EQ(ileaf_count(l), 1);
	CHECK_EQ(ileaf_ibase(l), 63);
	/* bits above 48 of the ibase word are not part of the inum */
	put_be64(l + 8, 0xffff000000000040ULL);
	CHECK_EQ(ileaf_ibase(l), 64);
	free(l);
}

TEST(blob_lookup)
{
	const unsigned ends[] = { 48, 48, 100 };
	uint8_t *l = mkleaf(4096, TUX3_MAGIC_ILEAF, 63, 3, ends);
	const uint8_t *blob;
	unsigned len;
	CHECK_EQ(ileaf_blob(l, 4096, 63, &blob, &len), 0);
	CHECK(blob == l + 16);
	CHECK_EQ(len, 48);
	CHECK_EQ(blob[0], 63);
	CHECK_EQ(ileaf_blob(l, 4096, 64, &blob, &len), 0);
	CHECK_EQ(len, 0);	/* empty slot: no inode */
	CHECK_EQ(ileaf_blob(l, 4096, 65, &blob, &len), 0);
	CHECK(blob == l + 16 + 48);
	CHECK_EQ(len, 52);
	CHECK_EQ(blob[0], 65);
	CHECK_EQ(blob[51], 65);
	/* outside the leaf's slots */
	CHECK_EQ(ileaf_blob(l, 4096, 62, &blob, &len), 0);
	CHECK(blob == NULL);
	CHECK_EQ(len, 0);
	CHECK_EQ(ileaf_blob(l, 4096, 66, &blob, &len), 0);
	CHECK(blob == NULL);
	CHECK_EQ(len, 0);
	CHECK_EQ(ileaf_blob(l, 4096, 0, &blob, &len), 0);
	CHECK_EQ(len, 0);
	free(l);
}

TEST(blob_leading_empty_slots)
{
	/* the empty-4k layout: ibase 0, count 64, inodes 4 and 63 */
	unsigned ends[64];
	for (unsigned k = 1; k <= 64; k++)
		ends[k - 1] = k <= 4 ? 0 : k < 64 ? 0x30 : 0x60;
	uint8_t *l = mkleaf(4096, TUX3_MAGIC_ILEAF, 0, 64, ends);
	const uint8_t *blob;
	unsigned len;
	for (uint64_t inum = 0; inum < 64; inum++) {
		ileaf_blob(l, 4096, inum, &blob, &len);
		if (inum == 4) {
			CHECK(blob == l + 16);
			CHECK_EQ(len, 48);
		} else if (inum == 63) {
			CHECK(blob == l + 16 + 48);
			CHECK_EQ(len, 48);
		} else {
			CHECK_EQ(len, 0);
		}
	}
	struct tux3_volume *vol = fake_vol(12, 16384);
	CHECK_EQ(ileaf_check(vol, l, 63, 0, TUX3_KEY_LIMIT, TUX3_MAGIC_ILEAF), 0);
	free(l);
	fake_free(vol);
}

TEST(blob_small_block)
{
	const unsigned ends[] = { 10, 30 };
	uint8_t *l = mkleaf(512, TUX3_MAGIC_OLEAF, 1000, 2, ends);
	const uint8_t *blob;
	unsigned len;
	ileaf_blob(l, 512, 1001, &blob, &len);
	CHECK(blob == l + 26);
	CHECK_EQ(len, 20);
	/* the dictionary is read from the block end given */
	CHECK_EQ(be16(l + 510), 10);
	CHECK_EQ(be16(l + 508), 30);
	free(l);
}

TEST(check_valid_and_magic)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	const unsigned ends[] = { 48, 48, 100 };
	uint8_t *l = mkleaf(4096, TUX3_MAGIC_ILEAF, 63, 3, ends);
	CHECK_EQ(ileaf_check(vol, l, 69, 0, TUX3_KEY_LIMIT, TUX3_MAGIC_ILEAF), 0);
	CHECK_EQ(vol->error.err, 0);
	/* through the itree ops too */
	CHECK_EQ(itree_ops.leaf_check(vol, l, 69, 0, TUX3_KEY_LIMIT), 0);
	CHECK_EQ(itree_ops.leaf_magic, TUX3_MAGIC_ILEAF);
	/* an ileaf is not an oleaf */
	CHECK_EQ(ileaf_check(vol, l, 69, 0, TUX3_KEY_LIMIT, TUX3_MAGIC_OLEAF),
		 -EUCLEAN);
	CHECK_EQ(vol->error.block, 69);
	CHECK_EQ(vol->error.offset, 0);
	CHECK(strstr(vol->error.what, "oleaf"));
	tux3_clear_error(vol);
	CHECK_EQ(otree_ops.leaf_check(vol, l, 69, 0, TUX3_KEY_LIMIT), -EUCLEAN);
	free(l);
	fake_free(vol);
}

TEST(check_count_limit)
{
	struct tux3_volume *vol = fake_vol(9, 4096);
	unsigned max = (512 - ILEAF_HEADER) / 2, ends[300] = { 0 };
	/* a full dictionary of empty slots leaves no blob space: valid */
	uint8_t *l = mkleaf(512, TUX3_MAGIC_ILEAF, 64, max, ends);
	CHECK_EQ(ileaf_check(vol, l, 9, 0, TUX3_KEY_LIMIT, TUX3_MAGIC_ILEAF), 0);
	put_be16(l + 2, (uint16_t)(max + 1));
	CHECK_EQ(ileaf_check(vol, l, 9, 0, TUX3_KEY_LIMIT, TUX3_MAGIC_ILEAF),
		 -EUCLEAN);
	CHECK_EQ(vol->error.offset, 2);
	CHECK(strstr(vol->error.what, "count"));
	free(l);
	fake_free(vol);
}

TEST(check_ibase_range)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	const unsigned ends[] = { 20 };
	uint8_t *l = mkleaf(4096, TUX3_MAGIC_ILEAF, 384, 1, ends);
	CHECK_EQ(ileaf_check(vol, l, 542, 384, 576, TUX3_MAGIC_ILEAF), 0);
	CHECK_EQ(ileaf_check(vol, l, 542, 385, 576, TUX3_MAGIC_ILEAF), -EUCLEAN);
	CHECK_EQ(vol->error.offset, 8);
	CHECK(strstr(vol->error.what, "ibase"));
	tux3_clear_error(vol);
	/* an ibase beyond the 48-bit inode space */
	put_be64(l + 8, 1ULL << 48);
	CHECK_EQ(ileaf_check(vol, l, 542, 0, TUX3_KEY_LIMIT, TUX3_MAGIC_ILEAF),
		 -EUCLEAN);
	free(l);
	fake_free(vol);
}

TEST(check_dictionary_order)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	const unsigned ends[] = { 48, 40, 100 };
	uint8_t *l = mkleaf(4096, TUX3_MAGIC_ILEAF, 63, 3, ends);
	CHECK_EQ(ileaf_check(vol, l, 70, 0, TUX3_KEY_LIMIT, TUX3_MAGIC_ILEAF),
		 -EUCLEAN);
	/* names slot 2: inum 64, at its dictionary offset */
	CHECK_EQ(vol->error.inum, 64);
	CHECK_EQ(vol->error.offset, 4096 - 4);
	CHECK(strstr(vol->error.what, "dictionary entry 2"));
	free(l);
	fake_free(vol);
}

TEST(check_dictionary_overflow)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	/* blob space limit = 4096 - 16 - 2 * count */
	unsigned ends[] = { 48, 4096 - 16 - 6 };
	uint8_t *l = mkleaf(4096, TUX3_MAGIC_ILEAF, 63, 3, (unsigned[]){ 48, 4074, 4074 });
	CHECK_EQ(ileaf_check(vol, l, 70, 0, TUX3_KEY_LIMIT, TUX3_MAGIC_ILEAF), 0);
	free(l);
	l = mkleaf(4096, TUX3_MAGIC_ILEAF, 63, 3, (unsigned[]){ 48, 4074, 4075 });
	CHECK_EQ(ileaf_check(vol, l, 70, 0, TUX3_KEY_LIMIT, TUX3_MAGIC_ILEAF),
		 -EUCLEAN);
	CHECK_EQ(vol->error.inum, 65);
	CHECK(strstr(vol->error.what, "limit 4074"));
	free(l);
	tux3_clear_error(vol);
	l = mkleaf(4096, TUX3_MAGIC_ILEAF, 63, 2, ends);
	CHECK_EQ(ileaf_check(vol, l, 70, 0, TUX3_KEY_LIMIT, TUX3_MAGIC_ILEAF), 0);
	put_be16(l + 4096 - 4, 0xffff);
	CHECK_EQ(ileaf_check(vol, l, 70, 0, TUX3_KEY_LIMIT, TUX3_MAGIC_ILEAF),
		 -EUCLEAN);
	free(l);
	fake_free(vol);
}

TEST(check_upper_key_bound)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	/* inums 100..109, only 100 and 104 live */
	const unsigned ends[] = { 10, 10, 10, 10, 20, 20, 20, 20, 20, 20 };
	uint8_t *l = mkleaf(4096, TUX3_MAGIC_ILEAF, 100, 10, ends);
	CHECK_EQ(ileaf_check(vol, l, 70, 100, 105, TUX3_MAGIC_ILEAF), 0);
	/* trailing empty slots past hi are not inodes */
	CHECK_EQ(ileaf_check(vol, l, 70, 100, 104, TUX3_MAGIC_ILEAF), -EUCLEAN);
	CHECK_EQ(vol->error.inum, 104);
	CHECK(strstr(vol->error.what, "beyond"));
	free(l);
	fake_free(vol);
}

TEST(oracle_empty_4k_leaf)
{
	struct tux3_volume *vol = open_oracle("empty-4k");
	uint8_t *l = read_vol_block(vol, 63);
	CHECK_EQ(be16(l), TUX3_MAGIC_ILEAF);
	CHECK_EQ(ileaf_count(l), 64);
	CHECK_EQ(ileaf_ibase(l), 0);
	CHECK_EQ(be16(l + 0xf80), 0x60);
	CHECK_EQ(ileaf_check(vol, l, 63, 0, TUX3_KEY_LIMIT, TUX3_MAGIC_ILEAF), 0);
	const uint8_t *blob;
	unsigned len;
	ileaf_blob(l, 4096, TUX3_ATABLE_INO, &blob, &len);
	CHECK_EQ(len, 48);
	ileaf_blob(l, 4096, TUX3_ROOT_INO, &blob, &len);
	CHECK_EQ(len, 48);
	CHECK(blob == l + 16 + 48);
	ileaf_blob(l, 4096, TUX3_BITMAP_INO, &blob, &len);
	CHECK_EQ(len, 0);
	free(l);
	tux3_close(vol);
}

int main(void)
{
	return run_tests("ileaf");
}

/* Layer: bnode.c -- index node lookup and validation, on synthetic
 * buffers (and the verified tree-fuse bnode). */
#include "fixtures.h"

static uint8_t *mkbnode(unsigned bs, unsigned count, const uint64_t *keys,
			const uint64_t *children)
{
	uint8_t *b = calloc(1, bs);
	CHECK(b);
	put_be16(b, TUX3_MAGIC_BNODE);
	put_be32(b + 4, count);
	for (unsigned i = 0; i < count; i++) {
		put_be64(b + BNODE_HEADER + BNODE_ENTRY * i, keys[i]);
		put_be64(b + BNODE_HEADER + BNODE_ENTRY * i + 8, children[i]);
	}
	return b;
}

static const uint64_t K[] = { 0, 384, 576, 704, 1216 };
static const uint64_t C[] = { 66, 542, 2002, 1893, 1924 };

TEST(capacity)
{
	CHECK_EQ(bnode_capacity(512), 31);
	CHECK_EQ(bnode_capacity(1024), 63);
	CHECK_EQ(bnode_capacity(4096), 255);
	CHECK_EQ(bnode_capacity(16384), 1023);
	CHECK_EQ(bnode_capacity(65536), 4095);
}

TEST(accessors)
{
	uint8_t *b = mkbnode(4096, 5, K, C);
	CHECK_EQ(bnode_count(b), 5);
	for (unsigned i = 0; i < 5; i++) {
		CHECK_EQ(bnode_key(b, i), K[i]);
		CHECK_EQ(bnode_child(b, i), C[i]);
	}
	/* key first, then child: bytes 8..15 are the key of entry 0 */
	CHECK_EQ(be64(b + 8 + 16), 384);
	CHECK_EQ(be64(b + 8 + 24), 542);
	free(b);
}

TEST(lookup_last_key_not_above)
{
	uint8_t *b = mkbnode(4096, 5, K, C);
	CHECK_EQ(bnode_lookup(b, 0), 0);
	CHECK_EQ(bnode_lookup(b, 383), 0);
	CHECK_EQ(bnode_lookup(b, 384), 1);
	CHECK_EQ(bnode_lookup(b, 385), 1);
	CHECK_EQ(bnode_lookup(b, 575), 1);
	CHECK_EQ(bnode_lookup(b, 576), 2);
	CHECK_EQ(bnode_lookup(b, 704), 3);
	CHECK_EQ(bnode_lookup(b, 1215), 3);
	CHECK_EQ(bnode_lookup(b, 1216), 4);
	CHECK_EQ(bnode_lookup(b, TUX3_MAX_BLOCK), 4);
	CHECK_EQ(bnode_lookup(b, UINT64_MAX), 4);
	free(b);
}

TEST(lookup_ignores_entry0_key)
{
	/* entry 0's key is not used for search: a key below it still maps
	 * to entry 0 */
	const uint64_t k[] = { 100, 200 }, c[] = { 10, 11 };
	uint8_t *b = mkbnode(512, 2, k, c);
	CHECK_EQ(bnode_lookup(b, 5), 0);
	CHECK_EQ(bnode_lookup(b, 199), 0);
	CHECK_EQ(bnode_lookup(b, 200), 1);
	free(b);
	/* a single entry takes every key */
	b = mkbnode(512, 1, k, c);
	CHECK_EQ(bnode_lookup(b, 0), 0);
	CHECK_EQ(bnode_lookup(b, 1ULL << 47), 0);
	free(b);
}

/* By halves (bnode_search) or from the front (bnode_lookup), the same
 * entry: every key between and around the separators of nodes of every
 * width up to a 4 KiB node's. */
TEST(lookup_same_as_a_scan)
{
	static uint64_t k[255], c[255];
	srand(5);
	for (unsigned count = 1; count <= 255; count++) {
		uint64_t key = (uint64_t)(rand() % 50);
		for (unsigned i = 0; i < count; i++) {
			k[i] = key;
			c[i] = i + 1;
			key += 1 + (uint64_t)(rand() % 40);
		}
		uint8_t *b = mkbnode(4096, count, k, c);
		for (uint64_t probe = 0; probe < key + 3; probe++) {
			unsigned want = 0;
			for (unsigned i = 1; i < count && k[i] <= probe; i++)
				want = i;
			CHECK_EQ(bnode_lookup(b, probe), want);
			CHECK_EQ(bnode_search(b, probe), want);
		}
		CHECK_EQ(bnode_search(b, UINT64_MAX), count - 1);
		free(b);
	}
}

TEST(check_valid)
{
	struct tux3_volume *vol = fake_vol(12, 32768);
	uint8_t *b = mkbnode(4096, 5, K, C);
	CHECK_EQ(bnode_check(vol, b, 10, 0, TUX3_KEY_LIMIT, true), 0);
	CHECK_EQ(vol->error.err, 0);
	/* inside a parent's range [0, 2000) */
	CHECK_EQ(bnode_check(vol, b, 10, 0, 2000, false), 0);
	/* the last key just below the upper bound */
	CHECK_EQ(bnode_check(vol, b, 10, 0, 1217, false), 0);
	/* a depth-1 node at the highest valid child block */
	CHECK_EQ(bnode_check(vol, b, 32767, 0, TUX3_KEY_LIMIT, false), 0);
	free(b);
	fake_free(vol);
}

TEST(check_bad_magic)
{
	struct tux3_volume *vol = fake_vol(12, 32768);
	uint8_t *b = mkbnode(4096, 5, K, C);
	put_be16(b, TUX3_MAGIC_ILEAF);
	CHECK_EQ(bnode_check(vol, b, 77, 0, TUX3_KEY_LIMIT, true), -EUCLEAN);
	CHECK_EQ(vol->error.err, -EUCLEAN);
	CHECK_EQ(vol->error.block, 77);
	CHECK_EQ(vol->error.offset, 0);
	CHECK(strstr(vol->error.what, "magic"));
	free(b);
	fake_free(vol);
}

TEST(check_count_limits)
{
	struct tux3_volume *vol = fake_vol(9, 4096);
	unsigned cap = bnode_capacity(512);
	uint64_t keys[32], kids[32];
	for (unsigned i = 0; i < 32; i++) {
		keys[i] = i * 10;
		kids[i] = 100 + i;
	}
	uint8_t *b = mkbnode(512, cap, keys, kids);
	CHECK_EQ(bnode_check(vol, b, 20, 0, TUX3_KEY_LIMIT, true), 0);
	put_be32(b + 4, cap + 1);
	CHECK_EQ(bnode_check(vol, b, 20, 0, TUX3_KEY_LIMIT, true), -EUCLEAN);
	CHECK_EQ(vol->error.offset, 4);
	CHECK(strstr(vol->error.what, "count"));
	tux3_clear_error(vol);
	put_be32(b + 4, 0);
	CHECK_EQ(bnode_check(vol, b, 20, 0, TUX3_KEY_LIMIT, true), -EUCLEAN);
	CHECK_EQ(vol->error.offset, 4);
	tux3_clear_error(vol);
	put_be32(b + 4, 0xffffffffu);
	CHECK_EQ(bnode_check(vol, b, 20, 0, TUX3_KEY_LIMIT, true), -EUCLEAN);
	free(b);
	fake_free(vol);
}

TEST(check_key_order)
{
	struct tux3_volume *vol = fake_vol(12, 32768);
	/* equal neighbours */
	const uint64_t k1[] = { 0, 384, 384, 704 };
	uint8_t *b = mkbnode(4096, 4, k1, C);
	CHECK_EQ(bnode_check(vol, b, 10, 0, TUX3_KEY_LIMIT, true), -EUCLEAN);
	CHECK_EQ(vol->error.offset, BNODE_HEADER + 2 * BNODE_ENTRY);
	CHECK_EQ(vol->error.block, 10);
	free(b);
	tux3_clear_error(vol);
	/* decreasing */
	const uint64_t k2[] = { 0, 384, 700, 600 };
	b = mkbnode(4096, 4, k2, C);
	CHECK_EQ(bnode_check(vol, b, 10, 0, TUX3_KEY_LIMIT, true), -EUCLEAN);
	CHECK_EQ(vol->error.offset, BNODE_HEADER + 3 * BNODE_ENTRY);
	free(b);
	fake_free(vol);
}

TEST(check_key_range)
{
	struct tux3_volume *vol = fake_vol(12, 32768);
	uint8_t *b = mkbnode(4096, 5, K, C);
	/* entry 1's key must be above the node's lower bound */
	CHECK_EQ(bnode_check(vol, b, 10, 384, TUX3_KEY_LIMIT, false), -EUCLEAN);
	CHECK_EQ(vol->error.offset, BNODE_HEADER + BNODE_ENTRY);
	tux3_clear_error(vol);
	CHECK_EQ(bnode_check(vol, b, 10, 383, TUX3_KEY_LIMIT, false), 0);
	/* the last key must be below the upper bound */
	CHECK_EQ(bnode_check(vol, b, 10, 0, 1216, false), -EUCLEAN);
	CHECK_EQ(vol->error.offset, BNODE_HEADER + 4 * BNODE_ENTRY);
	CHECK(strstr(vol->error.what, "limit"));
	free(b);
	fake_free(vol);
}

TEST(check_child_range)
{
	struct tux3_volume *vol = fake_vol(12, 2000);
	const uint64_t kids_lo[] = { 66, 1 }, kids_hi[] = { 66, 2000 },
		       kids_ok[] = { 2, 1999 }, keys[] = { 0, 10 };
	uint8_t *b = mkbnode(4096, 2, keys, kids_lo);
	CHECK_EQ(bnode_check(vol, b, 9, 0, TUX3_KEY_LIMIT, true), -EUCLEAN);
	CHECK_EQ(vol->error.offset, BNODE_HEADER + BNODE_ENTRY + 8);
	CHECK(strstr(vol->error.what, "child"));
	free(b);
	tux3_clear_error(vol);
	b = mkbnode(4096, 2, keys, kids_hi);
	CHECK_EQ(bnode_check(vol, b, 9, 0, TUX3_KEY_LIMIT, true), -EUCLEAN);
	free(b);
	tux3_clear_error(vol);
	b = mkbnode(4096, 2, keys, kids_ok);
	CHECK_EQ(bnode_check(vol, b, 9, 0, TUX3_KEY_LIMIT, true), 0);
	free(b);
	fake_free(vol);
}

TEST(first_error_kept)
{
	struct tux3_volume *vol = fake_vol(12, 32768);
	uint8_t *b = mkbnode(4096, 5, K, C);
	put_be16(b, 0);
	CHECK_EQ(bnode_check(vol, b, 1, 0, TUX3_KEY_LIMIT, true), -EUCLEAN);
	put_be16(b, TUX3_MAGIC_BNODE);
	put_be32(b + 4, 0);
	CHECK_EQ(bnode_check(vol, b, 2, 0, TUX3_KEY_LIMIT, true), -EUCLEAN);
	/* the volume keeps the first, most specific error */
	CHECK_EQ(vol->error.block, 1);
	CHECK_EQ(vol->error.offset, 0);
	free(b);
	fake_free(vol);
}

TEST(oracle_tree_fuse_bnodes)
{
	struct tux3_volume *vol = open_oracle("tree-fuse");
	uint8_t *b = malloc(vol->blocksize);
	CHECK(b);
	/* on-disk bytes of block 10: 118 entries, verified first entries */
	CHECK_EQ(dev_pread(&vol->dev, b, vol->blocksize, 10ULL << 12), 0);
	CHECK_EQ(be16(b), TUX3_MAGIC_BNODE);
	CHECK_EQ(bnode_count(b), 118);
	for (unsigned i = 0; i < 5; i++) {
		CHECK_EQ(bnode_key(b, i), K[i]);
		CHECK_EQ(bnode_child(b, i), C[i]);
	}
	CHECK_EQ(bnode_check(vol, b, 10, 0, TUX3_KEY_LIMIT, true), 0);
	CHECK_EQ(bnode_lookup(b, 700), 2);
	/* the stale on-disk block 5 holds 117 entries */
	CHECK_EQ(dev_pread(&vol->dev, b, vol->blocksize, 5ULL << 12), 0);
	CHECK_EQ(bnode_count(b), 117);
	CHECK_EQ(bnode_check(vol, b, 5, 0, TUX3_KEY_LIMIT, true), 0);
	free(b);
	tux3_close(vol);
}

int main(void)
{
	return run_tests("bnode");
}

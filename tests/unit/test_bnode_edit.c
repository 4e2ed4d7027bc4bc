/* Layer: bnode.c editing -- the operations shared by the B-tree engine
 * and log replay, against a model of sorted (key, child) pairs. */
#include "fixtures.h"

static void check_valid(uint8_t *b, unsigned bits)
{
	struct tux3_volume *vol = fake_vol(bits, 1 << 20);
	CHECK_EQ(bnode_check(vol, b, 100, 0, TUX3_KEY_LIMIT, true), 0);
	fake_free(vol);
}

TEST(root_one_and_two)
{
	uint8_t b[512];
	CHECK_EQ(bnode_init_root(b, 512, 1, 70, 0, 0), 0);
	CHECK_EQ(be16(b), TUX3_MAGIC_BNODE);
	CHECK_EQ(bnode_count(b), 1);
	CHECK_EQ(bnode_child(b, 0), 70);
	CHECK_EQ(bnode_init_root(b, 512, 2, 70, 71, 500), 0);
	CHECK_EQ(bnode_count(b), 2);
	CHECK_EQ(bnode_key(b, 1), 500);
	CHECK_EQ(bnode_child(b, 1), 71);
	CHECK_EQ(bnode_init_root(b, 512, 3, 70, 71, 500), -EINVAL);
	check_valid(b, 9);
}

TEST(add_update_adjust_del)
{
	uint8_t b[512];
	bnode_init_root(b, 512, 1, 70, 0, 0);
	CHECK_EQ(bnode_add(b, 512, 300, 72), 0);
	CHECK_EQ(bnode_add(b, 512, 100, 71), 0);
	CHECK_EQ(bnode_add(b, 512, 100, 99), -EEXIST);
	CHECK_EQ(bnode_count(b), 3);
	CHECK_EQ(bnode_key(b, 1), 100);
	CHECK_EQ(bnode_key(b, 2), 300);
	CHECK_EQ(bnode_update(b, 300, 80), 0);
	CHECK_EQ(bnode_child(b, 2), 80);
	CHECK_EQ(bnode_update(b, 301, 80), -ENOENT);
	CHECK_EQ(bnode_adjust(b, 300, 250), 0);
	CHECK_EQ(bnode_key(b, 2), 250);
	CHECK_EQ(bnode_adjust(b, 300, 260), -ENOENT);
	CHECK_EQ(bnode_del(b, 100, 3), -EINVAL);
	CHECK_EQ(bnode_del(b, 100, 2), 0);
	CHECK_EQ(bnode_count(b), 1);
	CHECK_EQ(bnode_del(b, 5, 1), -ENOENT);
	check_valid(b, 9);
}

TEST(full_node_refuses)
{
	uint8_t b[512];
	unsigned cap = bnode_capacity(512);
	bnode_init_root(b, 512, 1, 70, 0, 0);
	for (unsigned i = 1; i < cap; i++)
		CHECK_EQ(bnode_add(b, 512, i * 10, 100 + i), 0);
	CHECK_EQ(bnode_count(b), cap);
	CHECK_EQ(bnode_add(b, 512, 5, 99), -ENOSPC);
	check_valid(b, 9);
}

TEST(split_and_merge_roundtrip)
{
	uint8_t a[4096], c[4096], orig[4096];
	bnode_init_root(a, 4096, 1, 70, 0, 0);
	for (unsigned i = 1; i < 100; i++)
		CHECK_EQ(bnode_add(a, 4096, i * 7, 1000 + i), 0);
	memcpy(orig, a, sizeof(a));
	CHECK_EQ(bnode_split(a, 101, c, 4096), -EINVAL);
	CHECK_EQ(bnode_split(a, 40, c, 4096), 0);
	CHECK_EQ(bnode_count(a), 40);
	CHECK_EQ(bnode_count(c), 60);
	CHECK_EQ(bnode_key(c, 0), 40 * 7);
	CHECK_EQ(bnode_merge(a, c, 4096), 0);
	CHECK(!memcmp(a, orig, sizeof(a)));
	/* a merge that would overflow is refused and changes nothing */
	uint8_t big[512], other[512];
	bnode_init_root(big, 512, 1, 70, 0, 0);
	bnode_init_root(other, 512, 1, 71, 0, 0);
	for (unsigned i = 1; i < bnode_capacity(512); i++)
		bnode_add(big, 512, i, 100 + i);
	CHECK_EQ(bnode_merge(big, other, 512), -ENOSPC);
	CHECK_EQ(bnode_count(big), bnode_capacity(512));
}

/* Random adds and deletes against a sorted model. */
TEST(random_against_model)
{
	uint64_t keys[200], kids[200];
	unsigned n = 1;
	uint8_t b[4096];
	srand(7);
	keys[0] = 0;
	kids[0] = 64;
	bnode_init_root(b, 4096, 1, 64, 0, 0);
	for (int step = 0; step < 5000; step++) {
		uint64_t key = 1 + (uint64_t)(rand() % 1000);
		unsigned pos = 0;
		while (pos < n && keys[pos] < key)
			pos++;
		bool present = pos < n && keys[pos] == key;
		if (rand() % 2 && n < bnode_capacity(4096) && n < 200) {
			int err = bnode_add(b, 4096, key, key + 5000);
			CHECK_EQ(err, present ? -EEXIST : 0);
			if (!present) {
				memmove(keys + pos + 1, keys + pos,
					(n - pos) * sizeof(*keys));
				memmove(kids + pos + 1, kids + pos,
					(n - pos) * sizeof(*kids));
				keys[pos] = key;
				kids[pos] = key + 5000;
				n++;
			}
		} else if (n > 1) {
			int err = bnode_del(b, key, 1);
			CHECK_EQ(err, present ? 0 : -ENOENT);
			if (present) {
				memmove(keys + pos, keys + pos + 1,
					(n - pos - 1) * sizeof(*keys));
				memmove(kids + pos, kids + pos + 1,
					(n - pos - 1) * sizeof(*kids));
				n--;
			}
		}
		CHECK_EQ(bnode_count(b), n);
		for (unsigned i = 0; i < n; i++) {
			CHECK_EQ(bnode_key(b, i), keys[i]);
			CHECK_EQ(bnode_child(b, i), kids[i]);
		}
	}
	check_valid(b, 12);
}

int main(void)
{
	return run_tests("bnode_edit");
}

/* Layer: check/inode_state.c -- the namespace check's per-inode state,
 * against a plain model: codes kept as runs, then as nibbles, give the
 * same answers, and a tree made in order costs a few bytes a chunk. */
#include "fixtures.h"
#include "check/inode_state.h"

struct model {
	bool present;
	unsigned dtype;
	bool orphan;
	uint32_t nlink, count;
	unsigned dirnames;
};

static void check_same(struct inode_state *s, const struct model *m,
		       uint64_t n)
{
	for (uint64_t i = 1; i < n; i++) {
		struct ino_info info;
		bool got = inode_state_get(s, i, &info);
		CHECK_EQ(got, m[i].present);
		if (!got)
			continue;
		CHECK_EQ(info.dtype, m[i].dtype);
		CHECK_EQ(info.orphan, m[i].orphan);
		CHECK_EQ(info.nlink, m[i].nlink);
		CHECK_EQ(info.count, m[i].count);
		CHECK_EQ(info.dirnames, m[i].dirnames);
	}
}

/* The model of inode_state_named. */
static void model_named(struct model *m, uint64_t inum, uint64_t parent)
{
	if (!m[inum].present)
		return;
	if (m[inum].dtype != TUX3_DT_DIR) {
		m[inum].count++;
		return;
	}
	if (m[inum].dirnames < 3)
		m[inum].dirnames++;
	if (parent && m[parent].present)
		m[parent].count++;
}

struct each_ctx {
	uint64_t *seen, *last;
	const struct model *m;
};

static int each(void *ctx, uint64_t inum, const struct ino_info *info)
{
	struct each_ctx *c = ctx;
	CHECK(inum > *c->last);
	CHECK(c->m[inum].present);
	CHECK_EQ(info->dtype, c->m[inum].dtype);
	*c->last = inum;
	(*c->seen)++;
	return 0;
}

/* Random adds and names over a few chunks, in and out of order, with
 * every kind of inode: the state answers as the model does. */
TEST(same_as_a_model)
{
	enum { N = 5000 };
	static struct model m[N];
	struct inode_state s = { 0 };
	srand(3);
	memset(m, 0, sizeof(m));
	for (int step = 0; step < 40000; step++) {
		uint64_t inum = 1 + (uint64_t)rand() % (N - 1);
		if (rand() % 3 == 0) {
			/* runs, as a walker adds in order, or anywhere */
			unsigned dtype = rand() % 10 ? TUX3_DT_REG :
					 1 + (unsigned)rand() % 8;
			bool orphan = rand() % 50 == 0;
			uint32_t nlink = rand() % 20 ? 1 : (uint32_t)(rand() % 4);
			CHECK_EQ(inode_state_add(&s, inum, dtype, orphan, nlink),
				 0);
			if (!m[inum].present)
				m[inum] = (struct model){ .present = true,
					.dtype = dtype, .orphan = orphan,
					.nlink = nlink };
		} else {
			uint64_t parent = (uint64_t)rand() % N;
			CHECK_EQ(inode_state_named(&s, inum, parent), 0);
			model_named(m, inum, parent);
		}
	}
	check_same(&s, m, N);
	uint64_t seen = 0, last = 0;
	struct each_ctx x = { &seen, &last, m };
	CHECK_EQ(inode_state_each(&s, each, &x), 0);
	uint64_t want = 0;
	for (uint64_t i = 0; i < N; i++)
		want += m[i].present;
	CHECK_EQ(seen, want);
	inode_state_free(&s);
}

/* Inodes added and named in order, as in a tree made by one program (a
 * directory and a file of two links in every thousand): a few bytes a
 * chunk of 1,024, not half a byte an inode; the mixed chunks of a random
 * table fall back to nibbles and stay right. */
TEST(runs_cost_little)
{
	enum { N = 200000 };
	struct inode_state s = { 0 };
	for (uint64_t i = 2; i < N; i++) {
		unsigned dtype = i % 1000 == 0 ? TUX3_DT_DIR : TUX3_DT_REG;
		CHECK_EQ(inode_state_add(&s, i, dtype, false,
					 i % 1000 == 500 ? 2 : 1), 0);
	}
	for (uint64_t i = 2; i < N; i++)
		CHECK_EQ(inode_state_named(&s, i, i - i % 1000), 0);
	/* nibbles would be N / 2, and the exact counters of 400 inodes
	 * take 24 KiB */
	size_t bytes = inode_state_bytes(&s);
	CHECK(bytes < N / 4);
	struct ino_info info;
	CHECK(inode_state_get(&s, 12345, &info));
	CHECK_EQ(info.dtype, TUX3_DT_REG);
	CHECK_EQ(info.count, 1);
	CHECK(inode_state_get(&s, 12500, &info));
	CHECK_EQ(info.nlink, 2);
	CHECK(!inode_state_get(&s, N + 5, &info));
	/* every other inode gone: too many runs, nibbles */
	struct inode_state t = { 0 };
	for (uint64_t i = 2; i < 4096; i += 2)
		CHECK_EQ(inode_state_add(&t, i, 1 + (unsigned)(i / 2) % 7,
					 false, 1), 0);
	for (uint64_t i = 2; i < 4096; i++) {
		bool got = inode_state_get(&t, i, &info);
		CHECK_EQ(got, i % 2 == 0);
		if (got)
			CHECK_EQ(info.dtype, 1 + (unsigned)(i / 2) % 7);
	}
	CHECK(inode_state_bytes(&t) >= 4 * 512);
	inode_state_free(&s);
	inode_state_free(&t);
}

int main(void)
{
	return run_tests("inode_state");
}

/* Layer: dirent.c write side -- dirblock_init/add/delete/find on one
 * directory block, checked after every step with dirblock_iterate;
 * randomized against a list of names for 512, 4096 and 65536 byte blocks. */
#include "fixtures.h"

struct got {
	unsigned n;
	struct { uint64_t inum; unsigned off, type, len; char name[256]; } d[4096];
};

static int collect(void *ctx, const struct dirent_info *d)
{
	struct got *g = ctx;
	CHECK(g->n < 4096);
	g->d[g->n].inum = d->inum;
	g->d[g->n].off = (unsigned)d->pos;
	g->d[g->n].type = d->type;
	g->d[g->n].len = d->name_len;
	memcpy(g->d[g->n].name, d->name, d->name_len);
	g->n++;
	return 0;
}

static struct got *iterate_ok(struct tux3_volume *vol, const uint8_t *blk,
			      unsigned size)
{
	static struct got g;
	g.n = 0;
	int r = dirblock_iterate(vol, blk, size, 0, 70, 64, collect, &g);
	if (r)
		fprintf(stderr, "dirblock_iterate: %s\n", vol->error.what);
	CHECK_EQ(r, 0);
	return &g;
}

static unsigned rl(const uint8_t *blk, unsigned off)
{
	unsigned r = be16(blk + off + 8);
	return r == 65535 ? 65536 : r;
}

static int add(uint8_t *b, unsigned size, const char *name, uint64_t inum)
{
	return dirblock_add(b, size, name, (unsigned)strlen(name), inum,
			    TUX3_DT_REG);
}

TEST(init_and_first_add)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	uint8_t b[4096];
	memset(b, 0xee, sizeof(b));
	dirblock_init(b, 4096);
	CHECK_EQ(be64(b), 0);
	CHECK_EQ(be16(b + 8), 4096);
	CHECK_EQ(b[10], 0);
	CHECK_EQ(iterate_ok(vol, b, 4096)->n, 0);
	/* small-delta's root directory, record for record */
	CHECK_EQ(add(b, 4096, "hello.txt", 64), 0);
	CHECK_EQ(rl(b, 0), 4096);	/* a deleted record is taken whole */
	CHECK_EQ(add(b, 4096, "data.bin", 65), 24);
	CHECK_EQ(rl(b, 0), 24);
	CHECK_EQ(rl(b, 24), 4072);
	CHECK_EQ(be64(b + 24), 65);
	CHECK_EQ(b[24 + 10], 8);
	CHECK_EQ(b[24 + 11], TUX3_DT_REG);
	CHECK(!memcmp(b + 24 + 12, "data.bin", 8));
	struct got *g = iterate_ok(vol, b, 4096);
	CHECK_EQ(g->n, 2);
	CHECK(!strcmp(g->d[0].name, "hello.txt"));
	CHECK_EQ(dirblock_find(b, 4096, "data.bin", 8), 24);
	CHECK_EQ(dirblock_find(b, 4096, "hello.txt", 9), 0);
	CHECK_EQ(dirblock_find(b, 4096, "hello.tx", 8), -ENOENT);
	CHECK_EQ(dirblock_find(b, 4096, "nothere", 7), -ENOENT);
	fake_free(vol);
}

TEST(bad_arguments)
{
	uint8_t b[512], ref[512];
	char long_name[300];
	memset(long_name, 'x', sizeof(long_name));
	dirblock_init(b, 512);
	CHECK_EQ(add(b, 512, "a", 64), 0);
	memcpy(ref, b, 512);
	CHECK_EQ(add(b, 512, "a", 65), -EEXIST);
	CHECK_EQ(add(b, 512, ".", 65), -EINVAL);
	CHECK_EQ(add(b, 512, "..", 65), -EINVAL);
	CHECK_EQ(add(b, 512, "a/b", 65), -EINVAL);
	CHECK_EQ(dirblock_add(b, 512, "a\0b", 3, 65, 1), -EINVAL);
	CHECK_EQ(dirblock_add(b, 512, "", 0, 65, 1), -EINVAL);
	CHECK_EQ(dirblock_add(b, 512, long_name, 256, 65, 1), -EINVAL);
	CHECK_EQ(add(b, 512, "b", 0), -EINVAL);
	CHECK_EQ(add(b, 512, "b", TUX3_KEY_LIMIT), -EINVAL);
	CHECK_EQ(dirblock_add(b, 512, "b", 1, 65, 8), -EINVAL);
	CHECK(!memcmp(ref, b, 512));
	CHECK_EQ(dirblock_add(b, 512, long_name, 255, 65, 1), 16);
	CHECK_EQ(rl(b, 16), 512 - 16);
	CHECK_EQ(dirblock_delete(b, 512, 8), -ENOENT);	/* not a record */
	CHECK_EQ(dirblock_delete(b, 512, 600), -ENOENT);
	/* a malformed block is reported, not walked forever */
	put_be16(b + 8, 0);
	CHECK_EQ(add(b, 512, "c", 66), -EUCLEAN);
	CHECK_EQ(dirblock_find(b, 512, "c", 1), -EUCLEAN);
	CHECK_EQ(dirblock_delete(b, 512, 16), -EUCLEAN);
}

TEST(delete_absorbs_into_previous)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	uint8_t b[4096];
	dirblock_init(b, 4096);
	CHECK_EQ(add(b, 4096, "keep.txt", 64), 0);
	CHECK_EQ(add(b, 4096, "victim.bin", 65), 24);
	CHECK_EQ(add(b, 4096, "third", 66), 48);
	CHECK_EQ(dirblock_delete(b, 4096, 24), 0);
	/* the orphan image's layout: keep.txt covers the deleted record */
	CHECK_EQ(rl(b, 0), 48);
	CHECK_EQ(be64(b + 24), 0);
	CHECK_EQ(rl(b, 24), 24);	/* stale, left behind */
	CHECK_EQ(b[24 + 10], 0);
	CHECK_EQ(b[24 + 11], 0);
	for (unsigned i = 0; i < 10; i++)
		CHECK_EQ(b[24 + 12 + i], 0);
	CHECK_EQ(dirblock_delete(b, 4096, 24), -ENOENT);	/* swallowed */
	struct got *g = iterate_ok(vol, b, 4096);
	CHECK_EQ(g->n, 2);
	CHECK_EQ(g->d[1].off, 48);
	/* the slack now in keep.txt is reused */
	CHECK_EQ(add(b, 4096, "new", 67), 24);
	CHECK_EQ(rl(b, 0), 24);
	CHECK_EQ(rl(b, 24), 24);
	/* deleting the first record leaves it standalone */
	CHECK_EQ(dirblock_delete(b, 4096, 0), 0);
	CHECK_EQ(rl(b, 0), 24);
	CHECK_EQ(b[10], 0);
	CHECK_EQ(be64(b), 0);
	CHECK_EQ(dirblock_delete(b, 4096, 0), -ENOENT);
	CHECK_EQ(iterate_ok(vol, b, 4096)->n, 2);
	/* a deleted record that fits is taken whole */
	CHECK_EQ(add(b, 4096, "abcd", 68), 0);
	CHECK_EQ(rl(b, 0), 24);
	/* too long for it: goes to the slack of the last record */
	CHECK_EQ(add(b, 4096, "a-longer-name", 69), 72);
	CHECK_EQ(rl(b, 48), 24);
	CHECK_EQ(iterate_ok(vol, b, 4096)->n, 4);
	fake_free(vol);
}

TEST(block_65536)
{
	struct tux3_volume *vol = fake_vol(16, 1024);
	uint8_t *b = malloc(65536);
	CHECK(b);
	dirblock_init(b, 65536);
	CHECK_EQ(be16(b + 8), 65535);
	CHECK_EQ(iterate_ok(vol, b, 65536)->n, 0);
	CHECK_EQ(add(b, 65536, "only", 64), 0);
	CHECK_EQ(be16(b + 8), 65535);
	CHECK_EQ(iterate_ok(vol, b, 65536)->d[0].inum, 64);
	CHECK_EQ(add(b, 65536, "second", 65), 16);
	CHECK_EQ(rl(b, 16), 65536 - 16);
	/* the first record absorbs the rest again: 65536 -> 65535 */
	CHECK_EQ(dirblock_delete(b, 65536, 16), 0);
	CHECK_EQ(be16(b + 8), 65535);
	CHECK_EQ(iterate_ok(vol, b, 65536)->n, 1);
	CHECK_EQ(dirblock_delete(b, 65536, 0), 0);
	CHECK_EQ(be16(b + 8), 65535);
	CHECK_EQ(iterate_ok(vol, b, 65536)->n, 0);
	CHECK_EQ(dirblock_find(b, 65536, "only", 4), -ENOENT);
	free(b);
	fake_free(vol);
}

/* ---- randomized against a list of names ---- */

static uint64_t rnd_state;
static uint32_t rnd(void)
{
	rnd_state = rnd_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rnd_state >> 33);
}

struct mname {
	char name[256];
	unsigned len, off, type;
	uint64_t inum;
};

/* First-fit position for a name of len bytes, from the raw records. */
static int expect_fit(const uint8_t *b, unsigned size, unsigned len)
{
	unsigned need = (12 + len + 7) & ~7u;
	for (unsigned off = 0; off < size; off += rl(b, off)) {
		unsigned nl = b[off + 10], r = rl(b, off);
		if (!nl && r >= need)
			return (int)off;
		if (nl && r - ((12 + nl + 7) & ~7u) >= need)
			return (int)(off + ((12 + nl + 7) & ~7u));
	}
	return -ENOSPC;
}

static void random_run(unsigned size, uint64_t seed, unsigned steps)
{
	unsigned bits = 9;
	while ((1u << bits) < size)
		bits++;
	struct tux3_volume *vol = fake_vol(bits, 1024);
	uint8_t *b = malloc(size), *before = malloc(size);
	struct mname *m = calloc(4096, sizeof(*m));
	unsigned *at = calloc(size / 8, sizeof(unsigned));	/* off/8 -> k+1 */
	unsigned n = 0, adds = 0, dels = 0, nospc = 0, exists = 0;
	CHECK(b && before && m && at);
	dirblock_init(b, size);
	rnd_state = seed;
	for (unsigned step = 0; step < steps; step++) {
		unsigned op = rnd() % 10;
		if (op < 6) {
			struct mname x = { .inum = 64 + rnd() % 100000,
					   .type = 1 + rnd() % 7 };
			x.len = rnd() % 4 ? 1 + rnd() % 12 : 1 + rnd() % 255;
			for (unsigned i = 0; i < x.len; i++)
				x.name[i] = (char)('a' + rnd() % 4);
			if (x.len <= 2 && x.name[0] == '.')
				continue;
			/* sometimes re-add an existing name */
			if (n && rnd() % 8 == 0)
				x = m[rnd() % n];
			int dup = -1;
			for (unsigned i = 0; i < n; i++)
				if (m[i].len == x.len &&
				    !memcmp(m[i].name, x.name, x.len))
					dup = (int)i;
			int want = dup >= 0 ? -EEXIST : expect_fit(b, size, x.len);
			memcpy(before, b, size);
			int r = dirblock_add(b, size, x.name, x.len, x.inum,
					     x.type);
			CHECK_EQ(r, want);
			if (r < 0) {
				CHECK(!memcmp(before, b, size));
				nospc += r == -ENOSPC;
				exists += r == -EEXIST;
			} else {
				CHECK(n < 4096);
				x.off = (unsigned)r;
				m[n++] = x;
				adds++;
			}
		} else if (op < 9 && n) {
			unsigned i = rnd() % n;
			unsigned off = m[i].off;
			/* the record before it in the block, if any */
			unsigned prev = size, o = 0;
			while (o < off) {
				prev = o;
				o += rl(b, o);
			}
			CHECK_EQ(o, off);
			unsigned prev_len = prev < size ? rl(b, prev) : 0;
			unsigned my_len = rl(b, off);
			CHECK_EQ(dirblock_delete(b, size, off), 0);
			if (prev < size)
				CHECK_EQ(rl(b, prev), prev_len + my_len);
			CHECK_EQ(rl(b, off), my_len);
			CHECK_EQ(be64(b + off), 0);
			CHECK_EQ(b[off + 10], 0);
			CHECK_EQ(b[off + 11], 0);
			for (unsigned k = 0; k < m[i].len; k++)
				CHECK_EQ(b[off + 12 + k], 0);
			CHECK_EQ(dirblock_delete(b, size, off), -ENOENT);
			m[i] = m[--n];
			dels++;
		} else {
			/* find: a live name, or one that is not there */
			if (n && rnd() % 2) {
				unsigned i = rnd() % n;
				CHECK_EQ(dirblock_find(b, size, m[i].name,
						       m[i].len), (int)m[i].off);
			} else {
				CHECK_EQ(dirblock_find(b, size, "zz", 2),
					 -ENOENT);
			}
		}
		/* the block reads back as the model */
		struct got *g = iterate_ok(vol, b, size);
		CHECK_EQ(g->n, n);
		for (unsigned k = 0; k < n; k++)
			at[m[k].off / 8] = k + 1;
		for (unsigned i = 0; i < g->n; i++) {
			CHECK_EQ(g->d[i].off % 8, 0);
			unsigned k = at[g->d[i].off / 8] - 1;
			CHECK(k < n && m[k].off == g->d[i].off);
			CHECK_EQ(g->d[i].len, m[k].len);
			CHECK(!memcmp(g->d[i].name, m[k].name, m[k].len));
			CHECK_EQ(g->d[i].inum, m[k].inum);
			CHECK_EQ(g->d[i].type, m[k].type);
		}
		for (unsigned k = 0; k < n; k++)
			at[m[k].off / 8] = 0;
	}
	fprintf(stderr, "size %u: %u adds, %u dels, %u nospc, %u eexist\n",
		size, adds, dels, nospc, exists);
	CHECK(adds > 10 && dels > 10 && nospc > 0 && exists > 0);
	free(b);
	free(before);
	free(m);
	free(at);
	fake_free(vol);
}

TEST(random_512) { random_run(512, 1, 4000); }
TEST(random_4096) { random_run(4096, 2, 6000); }
TEST(random_4096_b) { random_run(4096, 42, 6000); }
TEST(random_65536) { random_run(65536, 3, 30000); }

int main(void)
{
	return run_tests("dirent_write");
}

/* Layer: dirent.c -- directory blocks (also the atom dictionary). */
#include "fixtures.h"

static void rec(uint8_t *blk, unsigned off, uint64_t inum, unsigned rec_len,
		const char *name, unsigned type)
{
	put_be64(blk + off, inum);
	put_be16(blk + off + 8, (uint16_t)(rec_len == 65536 ? 65535 : rec_len));
	unsigned n = (unsigned)strlen(name);
	blk[off + 10] = (uint8_t)n;
	blk[off + 11] = (uint8_t)type;
	memcpy(blk + off + 12, name, n);
}

struct got {
	unsigned n;
	struct dirent_info d[16];
	char names[16][256];
	int stop_at;
};

static int collect(void *ctx, const struct dirent_info *d)
{
	struct got *g = ctx;
	if (g->n < 16) {
		g->d[g->n] = *d;
		memcpy(g->names[g->n], d->name, d->name_len);
		g->names[g->n][d->name_len] = 0;
	}
	g->n++;
	return g->stop_at && (int)g->n == g->stop_at ? 7 : 0;
}

static int iterate(struct tux3_volume *vol, const uint8_t *blk, unsigned size,
		   struct got *g)
{
	memset(g, 0, sizeof(*g));
	return dirblock_iterate(vol, blk, size, 8192, 63, 100, collect, g);
}

TEST(live_records)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	uint8_t *b = calloc(1, 4096);
	struct got g;
	/* small-delta's root directory block (verified) */
	rec(b, 0, 64, 24, "hello.txt", TUX3_DT_REG);
	rec(b, 24, 65, 4072, "data.bin", TUX3_DT_REG);
	CHECK_EQ(iterate(vol, b, 4096, &g), 0);
	CHECK_EQ(g.n, 2);
	CHECK(!strcmp(g.names[0], "hello.txt"));
	CHECK_EQ(g.d[0].inum, 64);
	CHECK_EQ(g.d[0].rec_len, 24);
	CHECK_EQ(g.d[0].name_len, 9);
	CHECK_EQ(g.d[0].type, TUX3_DT_REG);
	CHECK_EQ(g.d[0].pos, 8192);
	CHECK_EQ(g.d[0].blocknr, 63);
	CHECK(!strcmp(g.names[1], "data.bin"));
	CHECK_EQ(g.d[1].inum, 65);
	CHECK_EQ(g.d[1].rec_len, 4072);
	CHECK_EQ(g.d[1].pos, 8192 + 24);
	free(b);
	fake_free(vol);
}

TEST(deleted_records)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	uint8_t *b = calloc(1, 4096);
	struct got g;
	/* a fresh block: one deleted record spanning it */
	rec(b, 0, 0, 4096, "", 0);
	CHECK_EQ(iterate(vol, b, 4096, &g), 0);
	CHECK_EQ(g.n, 0);
	/* deleted at the start (inum left non-zero: name_len decides) */
	rec(b, 0, 77, 24, "", 0);
	rec(b, 24, 70, 4072, "keep", TUX3_DT_DIR);
	CHECK_EQ(iterate(vol, b, 4096, &g), 0);
	CHECK_EQ(g.n, 1);
	CHECK(!strcmp(g.names[0], "keep"));
	CHECK_EQ(g.d[0].pos, 8192 + 24);
	/* orphan's root block: keep.txt covers the deleted victim.bin,
	 * whose stale bytes stay behind and are not visited */
	memset(b, 0, 4096);
	rec(b, 24, 0, 0x0fe8, "", 0);
	rec(b, 0, 64, 4096, "keep.txt", TUX3_DT_REG);
	CHECK_EQ(iterate(vol, b, 4096, &g), 0);
	CHECK_EQ(g.n, 1);
	CHECK(!strcmp(g.names[0], "keep.txt"));
	CHECK_EQ(g.d[0].rec_len, 4096);
	/* a deleted record in the middle with a live name behind it */
	memset(b, 0, 4096);
	rec(b, 0, 64, 16, "a", TUX3_DT_REG);
	rec(b, 16, 0, 32, "", 0);
	rec(b, 48, 66, 4048, "c", TUX3_DT_LNK);
	CHECK_EQ(iterate(vol, b, 4096, &g), 0);
	CHECK_EQ(g.n, 2);
	CHECK(!strcmp(g.names[1], "c"));
	CHECK_EQ(g.d[1].type, TUX3_DT_LNK);
	free(b);
	fake_free(vol);
}

TEST(rec_len_65536)
{
	struct tux3_volume *vol = fake_vol(16, 64);
	uint8_t *b = calloc(1, 65536);
	struct got g;
	rec(b, 0, 0, 65536, "", 0);
	CHECK_EQ(be16(b + 8), 65535);
	CHECK_EQ(iterate(vol, b, 65536, &g), 0);
	CHECK_EQ(g.n, 0);
	rec(b, 0, 64, 65536, "whole", TUX3_DT_REG);
	CHECK_EQ(iterate(vol, b, 65536, &g), 0);
	CHECK_EQ(g.n, 1);
	CHECK_EQ(g.d[0].rec_len, 65536);
	free(b);
	fake_free(vol);
}

static void expect_bad(struct tux3_volume *vol, uint8_t *b, unsigned size,
		       unsigned off, const char *what)
{
	struct got g;
	tux3_clear_error(vol);
	CHECK_EQ(iterate(vol, b, size, &g), -EUCLEAN);
	CHECK_EQ(vol->error.block, 63);
	CHECK_EQ(vol->error.inum, 100);
	CHECK_EQ(vol->error.offset, 8192 + off);
	if (!strstr(vol->error.what, what))
		fprintf(stderr, "'%s' lacks '%s'\n", vol->error.what, what);
	CHECK(strstr(vol->error.what, what));
}

TEST(bad_rec_len)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	uint8_t *b = calloc(1, 4096);
	static const unsigned bad[] = { 0, 8, 12, 20, 4097, 4104 };
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(b, 0, 4096);
		rec(b, 0, 64, 24, "x", TUX3_DT_REG);
		rec(b, 24, 65, bad[i], "y", TUX3_DT_REG);
		expect_bad(vol, b, 4096, 24, "bad rec_len");
	}
	/* records must tile the block: the last one reaches the end */
	memset(b, 0, 4096);
	rec(b, 0, 64, 4096 - 8, "x", TUX3_DT_REG);
	expect_bad(vol, b, 4096, 4088, "cut off");
	/* records never cross a block end */
	memset(b, 0, 4096);
	rec(b, 0, 64, 4080, "x", TUX3_DT_REG);
	rec(b, 4080, 65, 24, "y", TUX3_DT_REG);
	expect_bad(vol, b, 4096, 4080, "bad rec_len");
	free(b);
	fake_free(vol);
}

TEST(name_overflow)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	uint8_t *b = calloc(1, 4096);
	struct got g;
	/* 12 + 12 = 24 fits rec_len 24; 12 + 13 needs 32 */
	rec(b, 0, 64, 24, "abcdefghijkl", TUX3_DT_REG);
	rec(b, 24, 65, 4072, "y", TUX3_DT_REG);
	CHECK_EQ(iterate(vol, b, 4096, &g), 0);
	CHECK_EQ(g.n, 2);
	rec(b, 0, 64, 24, "abcdefghijklm", TUX3_DT_REG);
	/* the name ran into the next record's bytes: rewrite that one */
	rec(b, 24, 65, 4072, "y", TUX3_DT_REG);
	expect_bad(vol, b, 4096, 0, "does not fit");
	/* a 255-byte name in a 16-byte record */
	memset(b, 0, 4096);
	put_be64(b, 64);
	put_be16(b + 8, 16);
	b[10] = 255;
	b[11] = TUX3_DT_REG;
	memset(b + 12, 'n', 4);
	rec(b, 16, 65, 4080, "y", TUX3_DT_REG);
	expect_bad(vol, b, 4096, 0, "does not fit");
	/* a deleted record's stale name_len 0 is never a problem */
	free(b);
	fake_free(vol);
}

TEST(bad_live_fields)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	uint8_t *b = calloc(1, 4096);
	rec(b, 0, 0, 4096, "zero", TUX3_DT_REG);
	expect_bad(vol, b, 4096, 0, "bad inode number");
	rec(b, 0, 1ULL << 48, 4096, "huge", TUX3_DT_REG);
	expect_bad(vol, b, 4096, 0, "bad inode number");
	rec(b, 0, 64, 4096, "type", 8);
	expect_bad(vol, b, 4096, 0, "bad type");
	static const char *names[] = { "a/b", ".", ".." };
	for (unsigned i = 0; i < 3; i++) {
		memset(b, 0, 4096);
		rec(b, 0, 64, 4096, names[i], TUX3_DT_DIR);
		expect_bad(vol, b, 4096, 0, "invalid name");
	}
	memset(b, 0, 4096);
	rec(b, 0, 64, 4096, "nulX", TUX3_DT_REG);
	b[12 + 3] = 0;
	expect_bad(vol, b, 4096, 0, "invalid name");
	/* "..." and ".x" are ordinary names */
	struct got g;
	memset(b, 0, 4096);
	rec(b, 0, 64, 24, "...", TUX3_DT_REG);
	rec(b, 24, 65, 4072, ".x", TUX3_DT_REG);
	tux3_clear_error(vol);
	CHECK_EQ(iterate(vol, b, 4096, &g), 0);
	CHECK_EQ(g.n, 2);
	free(b);
	fake_free(vol);
}

TEST(callback_stops)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	uint8_t *b = calloc(1, 4096);
	struct got g;
	rec(b, 0, 64, 16, "a", TUX3_DT_REG);
	rec(b, 16, 65, 16, "b", TUX3_DT_REG);
	rec(b, 32, 66, 4064, "c", TUX3_DT_REG);
	memset(&g, 0, sizeof(g));
	g.stop_at = 2;
	CHECK_EQ(dirblock_iterate(vol, b, 4096, 0, 63, 100, collect, &g), 7);
	CHECK_EQ(g.n, 2);
	/* an error after the stop point is never reached */
	put_be16(b + 32 + 8, 3);
	memset(&g, 0, sizeof(g));
	g.stop_at = 2;
	CHECK_EQ(dirblock_iterate(vol, b, 4096, 0, 63, 100, collect, &g), 7);
	CHECK_EQ(vol->error.err, 0);
	free(b);
	fake_free(vol);
}

TEST(oracle_directories)
{
	struct tux3_volume *vol = open_oracle("orphan");
	uint8_t *b = read_vol_block(vol, 64);
	struct got g;
	/* verified: keep.txt rec_len 4096 over victim.bin's remains */
	CHECK_EQ(be16(b + 8), 4096);
	CHECK_EQ(be16(b + 24 + 8), 0x0fe8);
	CHECK_EQ(b[24 + 10], 0);
	CHECK_EQ(iterate(vol, b, 4096, &g), 0);
	CHECK_EQ(g.n, 1);
	CHECK(!strcmp(g.names[0], "keep.txt"));
	free(b);
	tux3_close(vol);
}

int main(void)
{
	return run_tests("dirent");
}

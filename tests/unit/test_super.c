/* Layer: super.c -- packed roots, superblock decode and validation
 * (through tux3_open on crafted images and on the oracle volumes). */
#include <fcntl.h>
#include <sys/stat.h>
#include "fixtures.h"

/* ---- packed roots ---- */

TEST(root_unpack_known_values)
{
	/* values verified in doc/format.md section 3 */
	struct root r = root_unpack(0x000100000000003fULL);
	CHECK(!r.direct);
	CHECK_EQ(r.depth, 1);
	CHECK_EQ(r.block, 63);
	CHECK_EQ(r.count, 0);

	r = root_unpack(0x0002000000000005ULL);
	CHECK(!r.direct);
	CHECK_EQ(r.depth, 2);
	CHECK_EQ(r.block, 5);

	r = root_unpack(0x8001000000000043ULL);
	CHECK(r.direct);
	CHECK_EQ(r.count, 1);
	CHECK_EQ(r.block, 67);
	CHECK_EQ(r.depth, 0);

	r = root_unpack(0x804a000000000046ULL);
	CHECK(r.direct);
	CHECK_EQ(r.count, 74);
	CHECK_EQ(r.block, 70);
}

TEST(root_unpack_zero_and_edges)
{
	struct root r = root_unpack(0);
	CHECK(!r.direct);
	CHECK_EQ(r.depth, 0);
	CHECK_EQ(r.block, 0);
	CHECK_EQ(r.count, 0);

	r = root_unpack(UINT64_MAX);
	CHECK(r.direct);
	CHECK_EQ(r.count, 0x7fff);
	CHECK(r.block == TUX3_MAX_BLOCK);

	r = root_unpack(0x7fffffffffffffffULL);
	CHECK(!r.direct);
	CHECK_EQ(r.depth, 0x7fff);
	CHECK(r.block == TUX3_MAX_BLOCK);

	/* direct bit alone: count 0 (invalid, but decoded faithfully) */
	r = root_unpack(1ULL << 63);
	CHECK(r.direct);
	CHECK_EQ(r.count, 0);
	CHECK_EQ(r.block, 0);
}

TEST(root_pack_tree_and_direct)
{
	struct root t = { .block = 5, .depth = 2 };
	CHECK(root_pack(t) == 0x0002000000000005ULL);
	struct root d = { .block = 70, .direct = true, .count = 74 };
	CHECK(root_pack(d) == 0x804a000000000046ULL);
	struct root z = { 0 };
	CHECK(root_pack(z) == 0);
	/* direct: depth is ignored, count used; tree: count ignored */
	struct root d2 = { .block = 1, .direct = true, .count = 3, .depth = 9 };
	CHECK(root_pack(d2) == 0x8003000000000001ULL);
	struct root t2 = { .block = 1, .depth = 3, .count = 9 };
	CHECK(root_pack(t2) == 0x0003000000000001ULL);
}

TEST(root_pack_masks_overflow)
{
	/* a block above 48 bits must not leak into the depth field */
	struct root r = { .block = (1ULL << 48) | 7, .depth = 1 };
	CHECK(root_pack(r) == 0x0001000000000007ULL);
	/* a 16-bit count must not flip the direct bit of a tree root */
	struct root t = { .block = 9, .depth = 0x8001 };
	uint64_t p = root_pack(t);
	CHECK((p >> 63) == 0);
	CHECK(root_unpack(p).depth == 1);
}

TEST(root_roundtrip)
{
	uint64_t blocks[] = { 0, 1, 63, 0xffffffffULL, TUX3_MAX_BLOCK };
	unsigned fields[] = { 1, 2, 30, 0x4000, 0x7fff };
	for (unsigned i = 0; i < 5; i++) {
		for (unsigned j = 0; j < 5; j++) {
			struct root t = { .block = blocks[i], .depth = fields[j] };
			struct root u = root_unpack(root_pack(t));
			CHECK(!u.direct);
			CHECK(u.block == blocks[i]);
			CHECK_EQ(u.depth, fields[j]);
			struct root d = { .block = blocks[i], .direct = true,
					  .count = fields[j] };
			u = root_unpack(root_pack(d));
			CHECK(u.direct);
			CHECK(u.block == blocks[i]);
			CHECK_EQ(u.count, fields[j]);
			CHECK(root_pack(u) == root_pack(d));
		}
	}
}

/* ---- super_decode ---- */

TEST(super_decode_fields)
{
	uint8_t raw[TUX3_SB_LEN];
	memset(raw, 0, sizeof(raw));
	memcpy(raw, tux3_magic_2014, 8);
	put_be64(raw + 8, 0x1111111111111111ULL);
	put_be64(raw + 16, 0x2222);
	put_be16(raw + 24, 12);
	put_be16(raw + 26, 0xffff);	/* padding: ignored */
	put_be64(raw + 32, 0x4000);
	put_be64(raw + 40, 0x0002000000000005ULL);
	put_be64(raw + 48, 0x0001000000000077ULL);
	put_be64(raw + 56, 3938);
	put_be64(raw + 64, 66);
	put_be64(raw + 72, 4096);
	put_be32(raw + 80, 9);
	put_be32(raw + 84, 11);
	put_be64(raw + 88, 65);
	put_be32(raw + 96, 3);
	struct disksuper sb;
	memset(&sb, 0xcc, sizeof(sb));
	CHECK_EQ(super_decode(raw, &sb), 0);
	CHECK(!memcmp(sb.magic, "tux3\x20\x14\x05\x06", 8));
	CHECK(sb.birthdate == 0x1111111111111111ULL);
	CHECK(sb.flags == 0x2222);
	CHECK_EQ(sb.blockbits, 12);
	CHECK(sb.volblocks == 0x4000);
	CHECK(sb.iroot == 0x0002000000000005ULL);
	CHECK(sb.oroot == 0x0001000000000077ULL);
	CHECK(sb.usedinodes == 3938);
	CHECK(sb.nextblock == 66);
	CHECK(sb.atomdictsize == 4096);
	CHECK_EQ(sb.freeatom, 9);
	CHECK_EQ(sb.atomgen, 11);
	CHECK(sb.logchain == 65);
	CHECK_EQ(sb.logcount, 3);
}

/* ---- crafted minimal volumes ---- */

struct img {
	uint8_t *buf;
	size_t len;
	unsigned bits, bs;
	uint64_t volblocks, reserved, leaf, logblk;
};

/* A minimal valid volume: superblock, one ileaf holding the root
 * directory (inode 63) and one log block (BALLOC reserved, DELTA,
 * BALLOC leaf), like mkfs output without the atable. */
static void img_build(struct img *m, unsigned bits, uint64_t volblocks)
{
	m->bits = bits;
	m->bs = 1u << bits;
	m->volblocks = volblocks;
	m->reserved = m->bs >= 8192 ? 1 : 8192 >> bits;
	m->leaf = m->reserved + 3;
	m->logblk = m->reserved + 5;
	m->len = (size_t)volblocks << bits;
	m->buf = calloc(1, m->len);
	CHECK(m->buf);
	uint8_t *sb = m->buf + 4096;
	memcpy(sb, tux3_magic_2014, 8);
	put_be16(sb + 24, (uint16_t)bits);
	put_be64(sb + 32, volblocks);
	put_be64(sb + 40, (1ULL << 48) | m->leaf);
	put_be64(sb + 56, 64);
	put_be64(sb + 64, m->logblk + 1);
	put_be32(sb + 84, 1);
	put_be64(sb + 88, m->logblk);
	put_be32(sb + 96, 1);

	uint8_t *l = m->buf + (m->leaf << bits);
	put_be16(l, TUX3_MAGIC_ILEAF);
	put_be16(l + 2, 1);
	put_be64(l + 8, TUX3_ROOT_INO);
	uint8_t *a = l + ILEAF_HEADER;
	put_be16(a, ATTR_MODE_OWNER << 12);
	put_be32(a + 2, 040755);
	a += 14;
	put_be16(a, ATTR_CTIME_SIZE << 12);
	put_be64(a + 2, 1000000000LL);
	a += 18;
	put_be16(a, ATTR_LINK_COUNT << 12);
	put_be32(a + 2, 2);
	a += 6;
	put_be16(a, ATTR_MTIME << 12);
	put_be64(a + 2, 2000000000LL);
	a += 10;
	put_be16(l + m->bs - 2, (uint16_t)(a - (l + ILEAF_HEADER)));

	uint8_t *g = m->buf + (m->logblk << bits);
	put_be16(g, TUX3_MAGIC_LOG);
	put_be16(g + 2, 23);
	uint8_t *r = g + LOG_HEADER_SIZE;
	r[0] = LOG_BALLOC;
	put_be32(r + 1, (uint32_t)m->reserved);
	put_be48(r + 5, 0);
	r[11] = LOG_DELTA;
	r[12] = LOG_BALLOC;
	put_be32(r + 13, 1);
	put_be48(r + 17, m->leaf);
}

static const char *img_write(struct img *m, size_t len)
{
	const char *path = scratch_image(m->buf, len);
	free(m->buf);
	m->buf = NULL;
	return path;
}

static int open_err(const char *path, char *msg, size_t len)
{
	struct tux3_volume *vol = (void *)1;
	int err = tux3_open_err(path, TUX3_OPEN_RDONLY, &vol, msg, len);
	if (!err)
		tux3_close(vol);
	else
		CHECK(vol == NULL);
	return err;
}

TEST(crafted_all_blockbits_accepted)
{
	for (unsigned bits = 9; bits <= 16; bits++) {
		struct img m;
		img_build(&m, bits, 32);
		uint64_t reserved = m.reserved, leaf = m.leaf, logblk = m.logblk;
		const char *path = img_write(&m, m.len);
		struct tux3_volume *vol;
		char msg[512];
		int err = tux3_open_err(path, TUX3_OPEN_RDONLY, &vol, msg,
					sizeof(msg));
		if (err)
			fprintf(stderr, "bits %u: %s\n", bits, msg);
		CHECK_EQ(err, 0);
		struct tux3_super_info si;
		tux3_super_info(vol, &si);
		CHECK_EQ(si.blockbits, bits);
		CHECK_EQ(si.blocksize, 1u << bits);
		CHECK_EQ(si.volblocks, 32);
		CHECK(si.replayed);
		struct tux3_statfs st;
		CHECK_EQ(tux3_statfs(vol, &st), 0);
		CHECK_EQ(st.bsize, 1u << bits);
		CHECK_EQ(st.blocks, 32);
		/* reserved + ileaf + the log block itself */
		CHECK_EQ(st.bfree, 32 - reserved - 2);
		CHECK_EQ(si.freeblocks, st.bfree);
		CHECK_EQ(tux3_block_is_used(vol, 0), 1);
		CHECK_EQ(tux3_block_is_used(vol, reserved - 1), 1);
		CHECK_EQ(tux3_block_is_used(vol, reserved), 0);
		CHECK_EQ(tux3_block_is_used(vol, leaf), 1);
		CHECK_EQ(tux3_block_is_used(vol, logblk), 1);
		CHECK_EQ(tux3_block_is_used(vol, logblk + 1), 0);
		CHECK(tux3_block_is_used(vol, 32) < 0);
		struct tux3_stat s;
		CHECK_EQ(tux3_stat(vol, TUX3_ROOT_INO, &s), 0);
		CHECK_EQ(s.mode, 040755);
		CHECK_EQ(s.nlink, 2);
		CHECK_EQ(s.size, 0);
		CHECK_EQ(s.ctime_ns, 1000000000LL);
		CHECK_EQ(s.mtime_ns, 2000000000LL);
		CHECK_EQ(s.blksize, 1u << bits);
		tux3_ino_t ino;
		CHECK_EQ(tux3_lookup_path(vol, "/", &ino), 0);
		CHECK_EQ(ino, TUX3_ROOT_INO);
		CHECK_EQ(tux3_lookup_path(vol, "/nothing", &ino), -ENOENT);
		CHECK_EQ(tux3_warning_count(vol), 0);
		tux3_close(vol);
		unlink(path);
	}
}

/* Write a 4K-block image with one superblock field patched. */
static const char *img_patched(unsigned off, unsigned width, uint64_t val)
{
	struct img m;
	img_build(&m, 12, 32);
	uint8_t *sb = m.buf + 4096;
	if (width == 2)
		put_be16(sb + off, (uint16_t)val);
	else if (width == 4)
		put_be32(sb + off, (uint32_t)val);
	else
		put_be64(sb + off, val);
	return img_write(&m, m.len);
}

TEST(crafted_baseline_ok)
{
	char msg[512];
	CHECK_EQ(open_err(img_patched(24, 2, 12), msg, sizeof(msg)), 0);
	CHECK_EQ(msg[0], 0);
}

TEST(blockbits_out_of_range_refused)
{
	unsigned bad[] = { 0, 1, 8, 17, 20, 63, 0xffff };
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char msg[512];
		const char *path = img_patched(24, 2, bad[i]);
		int err = open_err(path, msg, sizeof(msg));
		CHECK_EQ(err, -EUCLEAN);
		/* the error names the superblock field's byte offset */
		if (!strstr(msg, "offset 4120") || !strstr(msg, "blockbits"))
			fprintf(stderr, "bits %u: message '%s'\n", bad[i], msg);
		CHECK(strstr(msg, "offset 4120"));
		CHECK(strstr(msg, "blockbits"));
		CHECK(strstr(msg, path));
		unlink(path);
	}
}

TEST(bad_magic_refused)
{
	char msg[512];
	/* change the date byte of the magic: an older/newer format */
	const char *path = img_patched(6, 2, 0x0606);
	CHECK_EQ(open_err(path, msg, sizeof(msg)), -EUCLEAN);
	CHECK(strstr(msg, "offset 4096"));
	CHECK(strstr(msg, "magic"));
}

TEST(volblocks_validation)
{
	char msg[512];
	/* larger than the image: truncated */
	CHECK_EQ(open_err(img_patched(32, 8, 33), msg, sizeof(msg)), -EUCLEAN);
	CHECK(strstr(msg, "offset 4128"));
	CHECK(strstr(msg, "truncated"));
	/* not above reserved + 1 (reserved = 2 at 4K) */
	CHECK_EQ(open_err(img_patched(32, 8, 3), msg, sizeof(msg)), -EUCLEAN);
	CHECK(strstr(msg, "offset 4128"));
	/* beyond 2^48 - 1 */
	CHECK_EQ(open_err(img_patched(32, 8, 1ULL << 48), msg, sizeof(msg)),
		 -EUCLEAN);
	CHECK(strstr(msg, "offset 4128"));
}

TEST(short_image_refused)
{
	struct img m;
	img_build(&m, 12, 32);
	char msg[512];
	/* the superblock is there but the image is 16 blocks, not 32 */
	const char *path = img_write(&m, 16 << 12);
	CHECK_EQ(open_err(path, msg, sizeof(msg)), -EUCLEAN);
	CHECK(strstr(msg, "truncated"));
	/* an image too short to hold the superblock at all */
	img_build(&m, 12, 32);
	path = img_write(&m, 4200);
	CHECK(open_err(path, msg, sizeof(msg)) < 0);
	CHECK(strstr(msg, "offset 4096"));
}

TEST(iroot_validation)
{
	char msg[512];
	/* empty inode table root */
	CHECK_EQ(open_err(img_patched(40, 8, 0), msg, sizeof(msg)), -EUCLEAN);
	CHECK(strstr(msg, "offset 4136"));
	CHECK(strstr(msg, "empty"));
	/* direct extent used as a tree root */
	CHECK_EQ(open_err(img_patched(40, 8, 0x8001000000000005ULL), msg,
			  sizeof(msg)), -EUCLEAN);
	CHECK(strstr(msg, "direct"));
	/* depth 0 with a block, depth 31 */
	CHECK_EQ(open_err(img_patched(40, 8, 0x0000000000000005ULL), msg,
			  sizeof(msg)), -EUCLEAN);
	CHECK(strstr(msg, "depth"));
	CHECK_EQ(open_err(img_patched(40, 8, 0x001f000000000005ULL), msg,
			  sizeof(msg)), -EUCLEAN);
	CHECK(strstr(msg, "depth 31"));
	/* depth 30 is the limit: accepted by the superblock check, and the
	 * tree then fails to load (block 5 is a leaf, not a bnode) */
	CHECK(open_err(img_patched(40, 8, 0x001e000000000005ULL), msg,
		       sizeof(msg)) < 0);
	CHECK(!strstr(msg, "depth 30 out of range"));
	/* root in the reserved area, root beyond the volume */
	CHECK_EQ(open_err(img_patched(40, 8, 0x0001000000000001ULL), msg,
			  sizeof(msg)), -EUCLEAN);
	CHECK(strstr(msg, "outside"));
	CHECK_EQ(open_err(img_patched(40, 8, 0x0001000000000020ULL), msg,
			  sizeof(msg)), -EUCLEAN);
	CHECK(strstr(msg, "outside"));
}

TEST(oroot_validation)
{
	char msg[512];
	CHECK_EQ(open_err(img_patched(48, 8, 0x8001000000000005ULL), msg,
			  sizeof(msg)), -EUCLEAN);
	CHECK(strstr(msg, "orphan table"));
	CHECK_EQ(open_err(img_patched(48, 8, 0x0001000000000040ULL), msg,
			  sizeof(msg)), -EUCLEAN);
	CHECK(strstr(msg, "orphan table"));
}

TEST(other_field_validation)
{
	char msg[512];
	/* logchain outside the volume while logcount > 0 */
	CHECK_EQ(open_err(img_patched(88, 8, 32), msg, sizeof(msg)), -EUCLEAN);
	CHECK(strstr(msg, "logchain"));
	CHECK_EQ(open_err(img_patched(88, 8, 1), msg, sizeof(msg)), -EUCLEAN);
	CHECK(strstr(msg, "logchain"));
	/* logcount beyond the volume */
	CHECK_EQ(open_err(img_patched(96, 4, 33), msg, sizeof(msg)), -EUCLEAN);
	CHECK(strstr(msg, "logcount"));
	/* usedinodes above 2^48 */
	CHECK_EQ(open_err(img_patched(56, 8, (1ULL << 48) + 1), msg,
			  sizeof(msg)), -EUCLEAN);
	CHECK(strstr(msg, "usedinodes"));
	/* nextblock == volblocks is a possible hint */
	CHECK_EQ(open_err(img_patched(64, 8, 32), msg, sizeof(msg)), 0);
	/* atomdictsize reaching into the refcount table */
	CHECK_EQ(open_err(img_patched(72, 8, (1ULL << 40) + 1), msg,
			  sizeof(msg)), -EUCLEAN);
	CHECK(strstr(msg, "atomdictsize"));
}

static bool has_warning(const struct tux3_volume *vol, const char *what)
{
	for (unsigned i = 0; i < tux3_warning_count(vol); i++)
		if (strstr(tux3_warning(vol, i), what))
			return true;
	return false;
}

/* Hints are the writer's, not facts a reader needs: an impossible
 * nextblock or freeatom is dropped with a warning, never a reason to
 * refuse the volume. */
TEST(impossible_hints_dropped)
{
	char msg[512];
	struct tux3_volume *vol;
	struct tux3_super_info si;
	/* nextblock beyond the volume */
	CHECK_EQ(tux3_open_err(img_patched(64, 8, 33), TUX3_OPEN_RDONLY, &vol,
			       msg, sizeof(msg)), 0);
	tux3_super_info(vol, &si);
	CHECK_EQ(si.nextblock, 0);
	CHECK(has_warning(vol, "nextblock 33"));
	tux3_close(vol);
	/* freeatom not below atomgen (atomgen is 1) */
	CHECK_EQ(tux3_open_err(img_patched(80, 4, 1), TUX3_OPEN_RDONLY, &vol,
			       msg, sizeof(msg)), 0);
	tux3_super_info(vol, &si);
	CHECK_EQ(si.freeatom, 0);
	CHECK(has_warning(vol, "free-atom list head 1"));
	tux3_close(vol);
}

TEST(logcount_zero_opens_without_log)
{
	char msg[512];
	struct tux3_volume *vol;
	const char *path = img_patched(96, 4, 0);
	CHECK_EQ(tux3_open_err(path, TUX3_OPEN_RDONLY, &vol, msg, sizeof(msg)),
		 0);
	struct tux3_statfs st;
	tux3_statfs(vol, &st);
	CHECK_EQ(st.bfree, 32);	/* nothing known to be allocated */
	tux3_close(vol);
}

TEST(not_a_file)
{
	char msg[512];
	struct tux3_volume *vol = (void *)1;
	CHECK_EQ(tux3_open_err("/nonexistent/tux3.img", TUX3_OPEN_RDONLY,
			       &vol, msg, sizeof(msg)), -ENOENT);
	CHECK(vol == NULL);
	CHECK(strstr(msg, "/nonexistent/tux3.img"));
	CHECK_EQ(tux3_open_err("/", TUX3_OPEN_RDONLY, &vol, msg, sizeof(msg)),
		 -ENODEV);
}

/* ---- the oracle volumes' superblocks ---- */

struct sbexp {
	const char *name;
	unsigned bits;
	uint64_t volblocks, iroot, usedinodes, nextblock, atomdictsize;
	uint32_t freeatom, atomgen;
	uint64_t logchain;
	uint32_t logcount;
};

static const struct sbexp sbexp[] = {
	{ "empty-4k", 12, 16384, 0x000100000000003fULL, 64, 65, 0, 0, 1, 64, 1 },
	{ "empty-1k", 10, 32768, 0x000100000000003fULL, 64, 65, 0, 0, 1, 64, 1 },
	{ "empty-512", 9, 32768, 0x000100000000003fULL, 64, 65, 0, 0, 1, 64, 1 },
	{ "empty-16k", 14, 16384, 0x000100000000003fULL, 64, 65, 0, 0, 1, 64, 1 },
	{ "small-delta", 12, 16384, 0x0001000000000041ULL, 66, 8, 4096, 0, 2, 7, 4 },
	{ "small-unified", 12, 16384, 0x0001000000000045ULL, 66, 150, 4096, 0, 2, 149, 1 },
	{ "orphan", 12, 16384, 0x0001000000000045ULL, 66, 121, 0, 0, 1, 120, 5 },
	{ "corrupt-bitmap", 12, 16384, 0x0001000000000045ULL, 66, 150, 4096, 0, 2, 149, 1 },
	{ "corrupt-bitmap-alloc", 12, 16384, 0x0001000000000045ULL, 66, 150, 4096, 0, 2, 149, 1 },
	{ "tree-fuse", 12, 32768, 0x0002000000000005ULL, 3938, 66, 4096, 9, 11, 65, 3 },
};

TEST(oracle_superblocks)
{
	unsigned seen = 0;
	for (unsigned i = 0; i < sizeof(sbexp) / sizeof(sbexp[0]); i++) {
		const struct sbexp *e = &sbexp[i];
		char buf[1024];
		const char *path = oracle_image(e->name, buf, sizeof(buf));
		if (!path)
			continue;
		seen++;
		struct tux3_volume *vol;
		CHECK_EQ(tux3_open(path, TUX3_OPEN_RDONLY, &vol), 0);
		struct tux3_super_info si;
		tux3_super_info(vol, &si);
		CHECK(!memcmp(si.magic, tux3_magic_2014, 8));
		CHECK_EQ(si.birthdate, 0);
		CHECK_EQ(si.flags, 0);
		CHECK_EQ(si.blockbits, e->bits);
		CHECK_EQ(si.blocksize, 1u << e->bits);
		CHECK_EQ(si.volblocks, e->volblocks);
		if (e->iroot)
			CHECK(si.iroot == e->iroot);
		CHECK_EQ(si.oroot, 0);
		CHECK_EQ(si.usedinodes, e->usedinodes);
		CHECK_EQ(si.nextblock, e->nextblock);
		CHECK_EQ(si.atomdictsize, e->atomdictsize);
		CHECK_EQ(si.freeatom, e->freeatom);
		CHECK_EQ(si.atomgen, e->atomgen);
		CHECK_EQ(si.logchain, e->logchain);
		CHECK_EQ(si.logcount, e->logcount);
		CHECK(si.replayed);
		/* the superblock tail is zero on every reference volume */
		for (unsigned b = 100; b < TUX3_SB_LEN; b++)
			CHECK_EQ(vol->sbraw[b], 0);
		tux3_close(vol);
	}
	if (!seen)
		SKIP("TUX3_ORACLE_DIR not set or empty");
}

int main(void)
{
	return run_tests("super");
}

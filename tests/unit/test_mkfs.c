/* Layer: mkfs.c and the encoders it uses (log.c, iattr.c). */
#include "fixtures.h"

/* Every log code: encode a record with distinct fields, decode it back,
 * re-encode the decoded record: the bytes must be the same. */
TEST(log_encode_roundtrip)
{
	for (unsigned c = LOG_CODE_FIRST; c <= LOG_CODE_LAST; c++) {
		struct logrec r = {
			.code = c, .count = c == LOG_BNODE_ROOT ? 2 : 0x1234,
			.pos = 0x77, .version = 0x55, .block = 0x010203040506,
			.oldb = 0x0a0b0c0d0e0f, .newb = 0x111213141516,
			.src = 0x212223242526, .dst = 0x313233343536,
			.parent = 0x414243444546, .child = 0x515253545556,
			.key = 0x616263646566, .root = 0x717273747576,
			.left = 0x818283848586, .right = 0x919293949596,
			.rkey = 0xa1a2a3a4a5a6, .from = 0xb1b2b3b4b5b6,
			.to = 0xc1c2c3c4c5c6, .inum = 0xd1d2d3d4d5d6,
			.freeblocks = 0xe1e2e3e4e5e6,
		};
		uint8_t a[32], b[32];
		struct logrec d;
		unsigned n = log_encode_record(a, &r);
		CHECK_EQ(n, log_record_size(c));
		CHECK_EQ(a[0], c);
		CHECK_EQ(log_decode_record(a, 0, n, &d), n);
		CHECK_EQ(log_encode_record(b, &d), n);
		CHECK(!memcmp(a, b, n));
	}
	struct logrec bad = { .code = 0x47 };
	uint8_t buf[32];
	CHECK_EQ(log_encode_record(buf, &bad), 0);
}

/* The mkfs log block of empty-4k, byte for byte. */
TEST(log_encode_mkfs_block)
{
	static const uint8_t want[39] = {
		0x10, 0xad, 0x00, 0x17, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0x33, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0x46,
		0x33, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0x3f,
	};
	uint8_t blk[64] = { 0 };
	struct logrec r1 = { .code = LOG_BALLOC, .count = 2, .block = 0 };
	struct logrec r2 = { .code = LOG_DELTA };
	struct logrec r3 = { .code = LOG_BALLOC, .count = 1, .block = 63 };
	unsigned off = LOG_HEADER_SIZE;
	off += log_encode_record(blk + off, &r1);
	off += log_encode_record(blk + off, &r2);
	off += log_encode_record(blk + off, &r3);
	log_encode_head(blk, off - LOG_HEADER_SIZE, 0);
	CHECK_EQ(off, 39);
	CHECK(!memcmp(blk, want, sizeof(want)));
}

struct collect { unsigned kinds; };
static int collect_fn(struct tux3_volume *vol, void *ctx,
		      const struct attr_info *a)
{
	(void)vol;
	((struct collect *)ctx)->kinds |= 1u << a->kind;
	return 0;
}

/* Fixed attributes and an xattr encode to a blob the decoder accepts
 * with the same values. */
TEST(iattr_encode_roundtrip)
{
	struct tux3_volume *vol = fake_vol(12, 1000);
	struct inode in = {
		.inum = 70,
		.present = 0x3f, .mode = 020644, .uid = 5, .gid = 6,
		.nlink = 3, .size = 12345, .rdev = (1ULL << 20) | 3,
		.ctime = -5, .mtime = 1700000000123456789LL,
		.dtree = 0x8001000000000043ULL,
	};
	uint8_t blob[IATTR_FIXED_MAX + 16];
	unsigned n = iattr_encode_fixed(blob, &in);
	CHECK_EQ(n, IATTR_FIXED_MAX - 10);	/* the 2014 kinds: no ATIME */
	n += iattr_encode_xattr(blob + n, 1, "myvalue", 7);
	CHECK_EQ(n, IATTR_FIXED_MAX - 10 + 13);
	struct inode out;
	CHECK_EQ(inode_from_blob(vol, 70, blob, n, 0, &out), 0);
	CHECK_EQ(out.mode, in.mode);
	CHECK_EQ(out.uid, 5);
	CHECK_EQ(out.gid, 6);
	CHECK_EQ(out.nlink, 3);
	CHECK_EQ(out.size, 12345);
	CHECK_EQ(out.rdev, in.rdev);
	CHECK_EQ(out.ctime, -5);
	CHECK_EQ(out.mtime, in.mtime);
	CHECK_EQ(out.dtree, in.dtree);
	CHECK_EQ(out.nxattr, 1);
	struct collect c = { 0 };
	CHECK_EQ(iattr_decode(vol, &out, collect_fn, &c), 0);
	CHECK_EQ(c.kinds, 0x3f | 1u << ATTR_XATTR);
	inode_free(&out);
	fake_free(vol);
	CHECK_EQ(iattr_max_size(9), 1ULL << 57);
	CHECK_EQ(iattr_max_size(14), 1ULL << 62);
	CHECK_EQ(iattr_max_size(15), INT64_MAX);
	CHECK_EQ(iattr_max_size(16), INT64_MAX);
}

/* The block choice: fold 63 into the volume, first free from there. */
TEST(layout_rule)
{
	struct tux3_mkfs_layout l;
	char err[256];
	static const struct {
		unsigned bits;
		uint64_t volblocks, ileaf, logblock, nextblock;
	} cases[] = {
		{ 12, 16384, 63, 64, 65 }, { 9, 32768, 63, 64, 65 },
		{ 14, 16384, 63, 64, 65 }, { 12, 64, 63, 2, 3 },
		{ 12, 65, 63, 64, 0 }, { 12, 20, 15, 16, 17 },
		{ 12, 4, 3, 2, 3 }, { 9, 18, 16, 17, 0 },
		{ 16, 3, 1, 2, 0 }, { 10, 40, 31, 32, 33 },
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_EQ(tux3_mkfs_layout(cases[i].bits, cases[i].volblocks,
					  &l, err, sizeof(err)), 0);
		CHECK_EQ(l.ileaf, cases[i].ileaf);
		CHECK_EQ(l.logblock, cases[i].logblock);
		CHECK_EQ(l.nextblock, cases[i].nextblock);
	}
	CHECK_EQ(tux3_mkfs_layout(9, 17, &l, err, sizeof(err)), -ENOSPC);
	CHECK_EQ(tux3_mkfs_layout(12, 3, &l, err, sizeof(err)), -ENOSPC);
	CHECK_EQ(tux3_mkfs_layout(8, 100, &l, err, sizeof(err)), -EINVAL);
	CHECK_EQ(tux3_mkfs_layout(17, 100, &l, err, sizeof(err)), -EINVAL);
	CHECK_EQ(tux3_mkfs_layout(16, 1ULL << 48, &l, err, sizeof(err)),
		 -EFBIG);
}

/* tux3_mkfs on a scratch file opens with the identity asked for. */
TEST(mkfs_opens)
{
	const char *path = scratch_image("", 0);
	struct tux3_mkfs_params p = {
		.blockbits = 10, .volblocks = 2048, .label = "unit",
		.time_ns = 42, .uid = 7, .gid = 8, .root_mode = 0700,
	};
	char err[256];
	memset(p.uuid, 0xab, 16);
	CHECK_EQ(tux3_mkfs(path, &p, err, sizeof(err)), 0);
	struct tux3_volume *vol;
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDONLY, &vol), 0);
	struct tux3_stat st;
	CHECK_EQ(tux3_stat(vol, TUX3_ROOT_INO, &st), 0);
	CHECK_EQ(st.mode, 040700);
	CHECK_EQ(st.uid, 7);
	CHECK_EQ(st.gid, 8);
	CHECK_EQ(st.nlink, 2);
	CHECK_EQ(st.mtime_ns, 42);
	struct tux3_identity id;
	CHECK_EQ(tux3_identity(vol, &id), 0);
	CHECK(id.present && id.sealed);
	CHECK_EQ(id.seq, 1);
	CHECK(!strcmp(id.label, "unit"));
	CHECK_EQ(id.uuid[15], 0xab);
	CHECK_EQ(id.mkfs_time_ns, 42);
	struct tux3_statfs sf;
	CHECK_EQ(tux3_statfs(vol, &sf), 0);
	CHECK_EQ(sf.bfree, 2048 - 8 - 2);
	tux3_close(vol);
	/* bad parameters */
	p.compat = 0x80000000u;	/* unknown */
	CHECK_EQ(tux3_mkfs(path, &p, err, sizeof(err)), -EINVAL);
	p.compat = 0;
	p.root_mode = 010000;
	CHECK_EQ(tux3_mkfs(path, &p, err, sizeof(err)), -EINVAL);
}

int main(void)
{
	return run_tests("mkfs");
}

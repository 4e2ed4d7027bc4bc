/* Layer: iattr.c (and inode.c's decoder) -- inode attribute blobs. */
#include <sys/stat.h>
#include "fixtures.h"

struct blob {
	uint8_t b[2048];
	unsigned len;
};

static void head(struct blob *x, unsigned kind, unsigned version)
{
	put_be16(x->b + x->len, (uint16_t)(kind << 12 | version));
	x->len += 2;
}
static void u16(struct blob *x, uint16_t v) { put_be16(x->b + x->len, v); x->len += 2; }
static void u32(struct blob *x, uint32_t v) { put_be32(x->b + x->len, v); x->len += 4; }
static void u64(struct blob *x, uint64_t v) { put_be64(x->b + x->len, v); x->len += 8; }
static void bytes(struct blob *x, const void *p, unsigned n)
{
	memcpy(x->b + x->len, p, n);
	x->len += n;
}
static void xattr(struct blob *x, unsigned version, unsigned atom,
		  const char *val, unsigned n)
{
	head(x, ATTR_XATTR, version);
	u16(x, (uint16_t)(n + 2));
	u16(x, (uint16_t)atom);
	bytes(x, val, n);
}

/* A full inode as the reference writes it: fixed kinds in order, then
 * xattrs. */
static void full_inode(struct blob *x)
{
	x->len = 0;
	head(x, ATTR_RDEV, 0); u64(x, 0x100003);
	head(x, ATTR_MODE_OWNER, 0); u32(x, 020666); u32(x, 1000); u32(x, 2000);
	head(x, ATTR_DATA_BTREE, 0); u64(x, 0x8001000000000043ULL);
	head(x, ATTR_CTIME_SIZE, 0); u64(x, (uint64_t)-5); u64(x, 17);
	head(x, ATTR_LINK_COUNT, 0); u32(x, 3);
	head(x, ATTR_MTIME, 0); u64(x, 1234567890123456789ULL);
	xattr(x, 0, 1, "myvalue", 7);
	xattr(x, 0, 6, "", 0);
}

struct seen {
	unsigned n;
	struct attr_info a[32];
	int stop_at;
};

static int collect(struct tux3_volume *vol, void *ctx, const struct attr_info *a)
{
	(void)vol;
	struct seen *s = ctx;
	if (s->n < 32)
		s->a[s->n] = *a;
	s->n++;
	if (s->stop_at && (int)s->n == s->stop_at)
		return 42;
	return 0;
}

static int decode(struct tux3_volume *vol, struct blob *x, struct seen *s)
{
	struct inode in = { .inum = 99, .blob = x->b, .bloblen = x->len,
			    .leafblock = 12 };
	memset(s, 0, sizeof(*s));
	return iattr_decode(vol, &in, collect, s);
}

TEST(kind_names)
{
	CHECK(!strcmp(iattr_kind_name(ATTR_RDEV), "RDEV"));
	CHECK(!strcmp(iattr_kind_name(ATTR_MODE_OWNER), "MODE_OWNER"));
	CHECK(!strcmp(iattr_kind_name(ATTR_DATA_BTREE), "DATA_BTREE"));
	CHECK(!strcmp(iattr_kind_name(ATTR_CTIME_SIZE), "CTIME_SIZE"));
	CHECK(!strcmp(iattr_kind_name(ATTR_LINK_COUNT), "LINK_COUNT"));
	CHECK(!strcmp(iattr_kind_name(ATTR_MTIME), "MTIME"));
	CHECK(!strcmp(iattr_kind_name(ATTR_IDATA), "IDATA"));
	CHECK(!strcmp(iattr_kind_name(ATTR_XATTR), "XATTR"));
	CHECK(!strcmp(iattr_kind_name(16), "?"));
}

TEST(decode_all_kinds_raw)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	struct blob x;
	struct seen s;
	full_inode(&x);
	CHECK_EQ(decode(vol, &x, &s), 0);
	CHECK_EQ(s.n, 8);
	static const unsigned kinds[] = { 0, 1, 2, 3, 4, 5, 12, 12 };
	static const unsigned sizes[] = { 10, 14, 10, 18, 6, 10, 13, 6 };
	unsigned off = 0;
	for (unsigned i = 0; i < 8; i++) {
		CHECK_EQ(s.a[i].kind, kinds[i]);
		CHECK_EQ(s.a[i].version, 0);
		CHECK_EQ(s.a[i].offset, off);
		CHECK_EQ(s.a[i].size, sizes[i]);
		CHECK(s.a[i].payload == x.b + off + 2);
		CHECK_EQ(s.a[i].paylen, sizes[i] - 2);
		off += sizes[i];
	}
	CHECK_EQ(off, x.len);
	fake_free(vol);
}

TEST(decode_all_kinds_inode)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	struct blob x;
	struct inode in;
	full_inode(&x);
	CHECK_EQ(inode_from_blob(vol, 99, x.b, x.len, 12, &in), 0);
	CHECK_EQ(in.inum, 99);
	CHECK_EQ(in.leafblock, 12);
	CHECK_EQ(in.present, 0x3f);
	CHECK_EQ(in.rdev, 0x100003);
	CHECK_EQ(rdev_major(in.rdev), 1);
	CHECK_EQ(rdev_minor(in.rdev), 3);
	CHECK_EQ(in.mode, 020666);
	CHECK_EQ(in.uid, 1000);
	CHECK_EQ(in.gid, 2000);
	CHECK(in.dtree == 0x8001000000000043ULL);
	CHECK_EQ(in.ctime, -5);
	CHECK_EQ(in.size, 17);
	CHECK_EQ(in.nlink, 3);
	CHECK(in.mtime == 1234567890123456789LL);
	CHECK_EQ(in.nxattr, 2);
	CHECK_EQ(in.xattrs[0].atom, 1);
	CHECK_EQ(in.xattrs[0].size, 7);
	CHECK(!memcmp(in.blob + in.xattrs[0].offset, "myvalue", 7));
	CHECK_EQ(in.xattrs[1].atom, 6);
	CHECK_EQ(in.xattrs[1].size, 0);
	CHECK(!in.orphan);
	CHECK(in.bloblen == x.len);
	CHECK(in.blob != x.b);	/* a private copy */
	inode_free(&in);
	CHECK(in.blob == NULL && in.xattrs == NULL);
	fake_free(vol);
}

TEST(idata_skipped)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	struct blob x = { .len = 0 };
	struct seen s;
	head(&x, ATTR_MODE_OWNER, 0); u32(&x, 0100644); u32(&x, 0); u32(&x, 0);
	head(&x, ATTR_IDATA, 0); u16(&x, 5); bytes(&x, "abcde", 5);
	head(&x, ATTR_LINK_COUNT, 0); u32(&x, 1);
	CHECK_EQ(decode(vol, &x, &s), 0);
	CHECK_EQ(s.n, 3);
	CHECK_EQ(s.a[1].kind, ATTR_IDATA);
	CHECK_EQ(s.a[1].size, 9);	/* head + length + 5 */
	CHECK_EQ(s.a[2].offset, 14 + 9);
	struct inode in;
	CHECK_EQ(inode_from_blob(vol, 70, x.b, x.len, 5, &in), 0);
	CHECK_EQ(in.nlink, 1);
	CHECK_EQ(in.mode, 0100644);
	inode_free(&in);
	fake_free(vol);
}

TEST(version_nonzero_skipped_by_real_length)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	struct blob x = { .len = 0 };
	struct seen s;
	/* another version's MODE_OWNER, then ours: not a duplicate */
	head(&x, ATTR_MODE_OWNER, 5); u32(&x, 0100777); u32(&x, 9); u32(&x, 9);
	head(&x, ATTR_MODE_OWNER, 0); u32(&x, 0100600); u32(&x, 1); u32(&x, 2);
	/* a versioned XATTR whose length is not the fixed table's 0: the
	 * reference would misparse what follows */
	xattr(&x, 0xfff, 3, "0123456789", 10);
	/* a versioned IDATA */
	head(&x, ATTR_IDATA, 1); u16(&x, 3); bytes(&x, "xyz", 3);
	head(&x, ATTR_CTIME_SIZE, 7); u64(&x, 1); u64(&x, UINT64_MAX);
	head(&x, ATTR_CTIME_SIZE, 0); u64(&x, 2); u64(&x, 4096);
	head(&x, ATTR_LINK_COUNT, 0); u32(&x, 1);
	xattr(&x, 0, 2, "v", 1);
	CHECK_EQ(decode(vol, &x, &s), 0);
	CHECK_EQ(s.n, 8);
	CHECK_EQ(s.a[2].kind, ATTR_XATTR);
	CHECK_EQ(s.a[2].version, 0xfff);
	CHECK_EQ(s.a[2].size, 16);
	CHECK_EQ(s.a[3].version, 1);
	CHECK_EQ(s.a[3].size, 7);
	CHECK_EQ(s.a[4].version, 7);
	CHECK_EQ(s.a[6].kind, ATTR_LINK_COUNT);
	struct inode in;
	CHECK_EQ(inode_from_blob(vol, 70, x.b, x.len, 5, &in), 0);
	CHECK_EQ(in.mode, 0100600);
	CHECK_EQ(in.uid, 1);
	CHECK_EQ(in.gid, 2);
	CHECK_EQ(in.size, 4096);	/* the versioned huge size is not ours */
	CHECK_EQ(in.ctime, 2);
	CHECK_EQ(in.nxattr, 1);		/* the versioned xattr is not ours */
	CHECK_EQ(in.xattrs[0].atom, 2);
	CHECK_EQ(in.xattrs[0].size, 1);
	CHECK_EQ(in.blob[in.xattrs[0].offset], 'v');
	inode_free(&in);
	fake_free(vol);
}

TEST(unknown_kinds_are_errors)
{
	static const unsigned bad[] = { 6, 7, 8, 9, 10, 13, 14 };
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tux3_volume *vol = fake_vol(12, 16384);
		struct blob x = { .len = 0 };
		struct seen s;
		head(&x, ATTR_LINK_COUNT, 0); u32(&x, 1);
		head(&x, bad[i], 0); u64(&x, 0);
		CHECK_EQ(decode(vol, &x, &s), -EUCLEAN);
		CHECK_EQ(s.n, 1);	/* nothing after it was decoded */
		CHECK_EQ(vol->error.inum, 99);
		CHECK_EQ(vol->error.block, 12);
		CHECK_EQ(vol->error.offset, 6);
		CHECK(strstr(vol->error.what, "unknown attribute kind"));
		tux3_clear_error(vol);
		struct inode in;
		CHECK_EQ(inode_from_blob(vol, 70, x.b, x.len, 5, &in), -EUCLEAN);
		CHECK(in.blob == NULL);
		/* even with a non-zero version: the length is unknown */
		tux3_clear_error(vol);
		x.len = 0;
		head(&x, bad[i], 3);
		u64(&x, 0);
		CHECK_EQ(decode(vol, &x, &s), -EUCLEAN);
		fake_free(vol);
	}
}

/* ATIME (kind 15, format.md 15.6) decodes as 8 bytes everywhere, and an
 * inode holds it only on a volume with the atime feature */
TEST(atime_kind)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	struct blob x = { .len = 0 };
	struct seen s;
	struct inode in;
	head(&x, ATTR_MTIME, 0); u64(&x, 7);
	head(&x, ATTR_ATIME, 0); u64(&x, 5);
	CHECK_EQ(decode(vol, &x, &s), 0);
	CHECK_EQ(s.n, 2);
	CHECK_EQ(inode_from_blob(vol, 70, x.b, x.len, 5, &in), -EUCLEAN);
	CHECK(strstr(vol->error.what, "without the atime feature"));
	tux3_clear_error(vol);
	vol->ident.present = 1;
	vol->ident.incompat = TUX3_FEATURE_INCOMPAT_ATIME;
	CHECK_EQ(inode_from_blob(vol, 70, x.b, x.len, 5, &in), 0);
	CHECK_EQ(in.atime, 5);
	CHECK_EQ(inode_atime(&in), 5);
	/* encoded back after MTIME, before the xattrs */
	uint8_t buf[IATTR_FIXED_MAX];
	CHECK_EQ(iattr_encode_fixed(buf, &in), x.len);
	CHECK(!memcmp(buf, x.b, x.len));
	inode_free(&in);
	fake_free(vol);
}

TEST(truncated_xattr)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	struct blob x = { .len = 0 };
	struct seen s;
	head(&x, ATTR_LINK_COUNT, 0); u32(&x, 1);
	/* head plus one byte of the length */
	head(&x, ATTR_XATTR, 0);
	x.b[x.len++] = 0;
	CHECK_EQ(decode(vol, &x, &s), -EUCLEAN);
	CHECK_EQ(vol->error.offset, 6);
	CHECK(strstr(vol->error.what, "XATTR"));
	CHECK(strstr(vol->error.what, "cut off"));
	tux3_clear_error(vol);
	/* a length that runs past the blob */
	x.len = 6;
	xattr(&x, 0, 1, "myvalue", 7);
	x.len -= 1;
	CHECK_EQ(decode(vol, &x, &s), -EUCLEAN);
	CHECK(strstr(vol->error.what, "runs past"));
	CHECK_EQ(vol->error.offset, 6);
	tux3_clear_error(vol);
	/* a versioned XATTR is bounds-checked too */
	x.len = 6;
	xattr(&x, 2, 1, "myvalue", 7);
	x.len -= 3;
	CHECK_EQ(decode(vol, &x, &s), -EUCLEAN);
	fake_free(vol);
}

TEST(xattr_length_below_two)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	for (unsigned n = 0; n < 2; n++) {
		struct blob x = { .len = 0 };
		struct inode in;
		head(&x, ATTR_XATTR, 0);
		u16(&x, (uint16_t)n);
		if (n)
			x.b[x.len++] = 1;
		CHECK_EQ(inode_from_blob(vol, 80, x.b, x.len, 5, &in), -EUCLEAN);
		CHECK(strstr(vol->error.what, "too short"));
		tux3_clear_error(vol);
	}
	fake_free(vol);
}

TEST(truncated_heads_and_payloads)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	struct blob x = { .len = 0 };
	struct seen s;
	head(&x, ATTR_LINK_COUNT, 0); u32(&x, 1);
	x.b[x.len++] = 0x10;	/* one stray byte */
	CHECK_EQ(decode(vol, &x, &s), -EUCLEAN);
	CHECK(strstr(vol->error.what, "head cut off"));
	CHECK_EQ(vol->error.offset, 6);
	tux3_clear_error(vol);
	/* a fixed payload cut short */
	x.len = 0;
	head(&x, ATTR_MODE_OWNER, 0); u32(&x, 0100644); u32(&x, 0);
	CHECK_EQ(decode(vol, &x, &s), -EUCLEAN);
	CHECK(strstr(vol->error.what, "MODE_OWNER"));
	CHECK_EQ(s.n, 0);
	fake_free(vol);
}

TEST(duplicate_fixed_kind)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	struct blob x = { .len = 0 };
	struct inode in;
	head(&x, ATTR_LINK_COUNT, 0); u32(&x, 1);
	head(&x, ATTR_LINK_COUNT, 0); u32(&x, 2);
	CHECK_EQ(inode_from_blob(vol, 80, x.b, x.len, 5, &in), -EUCLEAN);
	CHECK(strstr(vol->error.what, "duplicate LINK_COUNT"));
	CHECK_EQ(vol->error.offset, 6);
	fake_free(vol);
}

TEST(dtree_root_validation)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	static const uint64_t bad[] = {
		0x8000000000000043ULL,	/* direct, count 0 */
		0x8001000000004000ULL,	/* direct at volblocks */
		0x8002000000003fffULL,	/* direct running past the end */
		0x8001000000000001ULL,	/* direct in the reserved area */
		0x0000000000000043ULL,	/* tree depth 0 */
		0x001f000000000043ULL,	/* tree depth 31 */
		0x0001000000004000ULL,	/* tree root outside */
	};
	static const uint64_t good[] = {
		0, 0x8001000000003fffULL, 0x8001000000000002ULL,
		0x001e000000000043ULL, 0x0001000000003fffULL,
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct blob x = { .len = 0 };
		struct inode in;
		head(&x, ATTR_LINK_COUNT, 0); u32(&x, 1);
		head(&x, ATTR_DATA_BTREE, 0); u64(&x, bad[i]);
		CHECK_EQ(inode_from_blob(vol, 80, x.b, x.len, 5, &in), -EUCLEAN);
		CHECK_EQ(vol->error.offset, 6);
		CHECK_EQ(vol->error.inum, 80);
		tux3_clear_error(vol);
	}
	for (unsigned i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct blob x = { .len = 0 };
		struct inode in;
		head(&x, ATTR_DATA_BTREE, 0); u64(&x, good[i]);
		CHECK_EQ(inode_from_blob(vol, 80, x.b, x.len, 5, &in), 0);
		CHECK(in.dtree == good[i]);
		inode_free(&in);
	}
	fake_free(vol);
}

TEST(size_limit)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	struct blob x = { .len = 0 };
	struct inode in;
	head(&x, ATTR_CTIME_SIZE, 0); u64(&x, 0); u64(&x, 1ULL << 60);
	CHECK_EQ(inode_from_blob(vol, 4, x.b, x.len, 5, &in), 0);
	CHECK(in.size == 1ULL << 60);	/* the internal inodes' size */
	inode_free(&in);
	x.len = 0;
	head(&x, ATTR_CTIME_SIZE, 0); u64(&x, 0); u64(&x, (1ULL << 60) + 1);
	CHECK_EQ(inode_from_blob(vol, 4, x.b, x.len, 5, &in), -EUCLEAN);
	CHECK(strstr(vol->error.what, "size"));
	fake_free(vol);
	/* 16K blocks: 2^62; 64K blocks: capped at 2^63 - 1 */
	vol = fake_vol(16, 64);
	x.len = 0;
	head(&x, ATTR_CTIME_SIZE, 0); u64(&x, 0); u64(&x, INT64_MAX);
	CHECK_EQ(inode_from_blob(vol, 4, x.b, x.len, 5, &in), 0);
	inode_free(&in);
	x.len = 0;
	head(&x, ATTR_CTIME_SIZE, 0); u64(&x, 0); u64(&x, 1ULL << 63);
	CHECK_EQ(inode_from_blob(vol, 4, x.b, x.len, 5, &in), -EUCLEAN);
	fake_free(vol);
}

TEST(empty_blob_and_callback_stop)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	struct inode in;
	uint8_t dummy[2] = { 0 };
	CHECK_EQ(inode_from_blob(vol, 77, dummy, 0, 5, &in), -ENOENT);
	CHECK_EQ(vol->error.inum, 77);
	tux3_clear_error(vol);
	struct blob x;
	full_inode(&x);
	struct inode raw = { .inum = 1, .blob = x.b, .bloblen = x.len };
	struct seen s = { .stop_at = 3 };
	CHECK_EQ(iattr_decode(vol, &raw, collect, &s), 42);
	CHECK_EQ(s.n, 3);
	/* an empty blob decodes to nothing */
	raw.bloblen = 0;
	memset(&s, 0, sizeof(s));
	CHECK_EQ(iattr_decode(vol, &raw, collect, &s), 0);
	CHECK_EQ(s.n, 0);
	fake_free(vol);
}

TEST(orphan_inode_reported_with_one_link)
{
	struct tux3_volume *vol = fake_vol(12, 16384);
	struct blob x = { .len = 0 };
	struct inode in;
	head(&x, ATTR_MODE_OWNER, 0); u32(&x, 0100644); u32(&x, 0); u32(&x, 0);
	head(&x, ATTR_LINK_COUNT, 0); u32(&x, 0);
	CHECK_EQ(orphan_add(&vol->orphans, 65), 0);
	CHECK_EQ(inode_from_blob(vol, 65, x.b, x.len, 5, &in), 0);
	CHECK(in.orphan);
	CHECK_EQ(in.nlink, 1);
	inode_free(&in);
	CHECK_EQ(inode_from_blob(vol, 66, x.b, x.len, 5, &in), 0);
	CHECK(!in.orphan);
	CHECK_EQ(in.nlink, 0);
	inode_free(&in);
	fake_free(vol);
}

TEST(oracle_inodes)
{
	struct tux3_volume *vol = open_oracle("small-delta");
	struct inode in;
	/* hello.txt: verified blob ending c000 0009 0001 "myvalue" */
	CHECK_EQ(inode_load(vol, 64, &in), 0);
	CHECK(in.bloblen >= 13);
	CHECK(!memcmp(in.blob + in.bloblen - 13,
		      "\xc0\x00\x00\x09\x00\x01myvalue", 13));
	CHECK_EQ(in.nxattr, 1);
	CHECK_EQ(in.xattrs[0].atom, 1);
	CHECK_EQ(in.xattrs[0].size, 7);
	CHECK(in.dtree == 0x8001000000000043ULL);
	CHECK_EQ(in.size, 17);
	CHECK_EQ(in.mode, 0100700);
	inode_free(&in);
	CHECK_EQ(inode_load(vol, 65, &in), 0);
	CHECK(in.dtree == 0x804a000000000046ULL);
	inode_free(&in);
	/* internal inode: mode 0, size blocksize << 48 */
	CHECK_EQ(inode_load(vol, TUX3_ATABLE_INO, &in), 0);
	CHECK_EQ(in.mode, 0);
	CHECK(in.size == 1ULL << 60);
	inode_free(&in);
	CHECK_EQ(inode_load(vol, 0, &in), -ENOENT);
	tux3_clear_error(vol);
	CHECK_EQ(inode_load(vol, 1ULL << 48, &in), -ENOENT);
	tux3_clear_error(vol);
	CHECK_EQ(inode_load(vol, 66, &in), -ENOENT);
	tux3_close(vol);

	vol = oracle_or_null("tree-fuse");
	if (!vol)
		return;
	tux3_ino_t ino;
	CHECK_EQ(tux3_lookup_path(vol, "/special/null", &ino), 0);
	CHECK_EQ(inode_load(vol, ino, &in), 0);
	CHECK_EQ(in.rdev, 0x100003);
	CHECK(S_ISCHR(in.mode));
	CHECK(in.present & (1u << ATTR_RDEV));
	inode_free(&in);
	CHECK_EQ(tux3_lookup_path(vol, "/special/loop0", &ino), 0);
	CHECK_EQ(inode_load(vol, ino, &in), 0);
	CHECK_EQ(in.rdev, 0x700000);
	inode_free(&in);
	/* multi: xattrs in creation order, atoms 2..7 */
	CHECK_EQ(tux3_lookup_path(vol, "/xattr/multi", &ino), 0);
	CHECK_EQ(inode_load(vol, ino, &in), 0);
	CHECK_EQ(in.nxattr, 6);
	for (unsigned i = 0; i < 6; i++)
		CHECK_EQ(in.xattrs[i].atom, i + 2);
	inode_free(&in);
	tux3_close(vol);
}

int main(void)
{
	return run_tests("iattr");
}

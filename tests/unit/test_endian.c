/* Layer: endian.h -- big-endian field access and 48-bit fields. */
#include "harness.h"
#include "internal.h"

TEST(be16_be32_read)
{
	const uint8_t b[] = { 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0 };
	CHECK_EQ(be16(b), 0x1234);
	CHECK_EQ(be16(b + 6), 0xdef0);
	CHECK_EQ(be32(b), 0x12345678u);
	CHECK_EQ(be32(b + 4), 0x9abcdef0u);
	/* high bit set must not sign-extend */
	const uint8_t ff[] = { 0xff, 0xff, 0xff, 0xff };
	CHECK(be16(ff) == 0xffff);
	CHECK(be32(ff) == 0xffffffffu);
}

TEST(be64_read)
{
	const uint8_t b[] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };
	CHECK(be64(b) == 0x0123456789abcdefULL);
	const uint8_t top[] = { 0x80, 0, 0, 0, 0, 0, 0, 1 };
	CHECK(be64(top) == 0x8000000000000001ULL);
	const uint8_t ff[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	CHECK(be64(ff) == UINT64_MAX);
}

TEST(be48_read)
{
	const uint8_t b[] = { 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xff };
	CHECK(be48(b) == 0x123456789abcULL);
	const uint8_t max[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	CHECK(be48(max) == TUX3_MAX_BLOCK);
	CHECK(be48(max) == (1ULL << 48) - 1);
	const uint8_t one[6] = { 0, 0, 0, 0, 0, 1 };
	CHECK(be48(one) == 1);
	const uint8_t hi[6] = { 0x80, 0, 0, 0, 0, 0 };
	CHECK(be48(hi) == 1ULL << 47);
	/* the verified log record: BALLOC 2 @ 0 then BALLOC 1 @ 63 */
	const uint8_t rec[] = { 0x33, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0x3f };
	CHECK(be32(rec + 1) == 1);
	CHECK(be48(rec + 5) == 63);
}

TEST(put_roundtrip)
{
	uint8_t b[16];
	memset(b, 0xaa, sizeof(b));
	put_be16(b, 0xb4de);
	CHECK(b[0] == 0xb4 && b[1] == 0xde && b[2] == 0xaa);
	CHECK_EQ(be16(b), 0xb4de);
	put_be32(b, 0xdeadbeef);
	CHECK(b[0] == 0xde && b[3] == 0xef && b[4] == 0xaa);
	CHECK(be32(b) == 0xdeadbeefu);
	put_be64(b, 0x0102030405060708ULL);
	for (int i = 0; i < 8; i++)
		CHECK_EQ(b[i], i + 1);
	CHECK(b[8] == 0xaa);
	CHECK(be64(b) == 0x0102030405060708ULL);
}

TEST(put_be48_exact_width)
{
	uint8_t b[10];
	memset(b, 0x55, sizeof(b));
	put_be48(b + 2, 0x0000a1b2c3d4e5f6ULL);
	CHECK(b[0] == 0x55 && b[1] == 0x55);	/* before: untouched */
	CHECK(b[2] == 0xa1 && b[3] == 0xb2 && b[7] == 0xf6);
	CHECK(b[8] == 0x55 && b[9] == 0x55);	/* after: untouched */
	CHECK(be48(b + 2) == 0xa1b2c3d4e5f6ULL);
	/* bits above 47 are dropped, not spilled */
	put_be48(b + 2, 0xffff000000000007ULL);
	CHECK(be48(b + 2) == 7);
	CHECK(b[8] == 0x55);
	uint64_t vals[] = { 0, 1, 0xff, 0x100, 0xffffffffULL, 0x100000000ULL,
			    TUX3_MAX_BLOCK, 1ULL << 47 };
	for (unsigned i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		put_be48(b, vals[i]);
		CHECK(be48(b) == vals[i]);
	}
}

TEST(unaligned_access)
{
	uint8_t buf[32];
	for (unsigned off = 0; off < 8; off++) {
		memset(buf, 0, sizeof(buf));
		put_be64(buf + off, 0xfedcba9876543210ULL);
		CHECK(be64(buf + off) == 0xfedcba9876543210ULL);
		put_be48(buf + off + 8, 0x123456789abcULL);
		CHECK(be48(buf + off + 8) == 0x123456789abcULL);
		put_be32(buf + off + 14, 0x80000001u);
		CHECK(be32(buf + off + 14) == 0x80000001u);
	}
}

TEST(field_split_48)
{
	/* 64-bit words carrying 48-bit values plus 16 bits of other data,
	 * as dleaf entries and packed roots do */
	uint8_t b[8];
	put_be64(b, 0xabcd000000001234ULL);
	CHECK((be64(b) & TUX3_MAX_BLOCK) == 0x1234);
	CHECK((be64(b) >> 48) == 0xabcd);
	CHECK(be16(b) == 0xabcd);
	CHECK(be48(b + 2) == 0x1234);
	CHECK(TUX3_KEY_LIMIT == TUX3_MAX_BLOCK + 1);
}

int main(void)
{
	return run_tests("endian");
}

/* Layer: superext.c -- CRC32C, the superblock extension record (encode,
 * decode, seal) and the feature rules tux3_open applies to it, on
 * scratch copies of the oracle volumes. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include "fixtures.h"

#define EXT_ABS (TUX3_SB_OFFSET + SUPEREXT_OFFSET)	/* 4608 */

/* ---- CRC32C ---- */

TEST(crc32c_known_vectors)
{
	uint8_t buf[32];
	CHECK_EQ(tux3_crc32c(0, "123456789", 9), 0xE3069283u);
	CHECK_EQ(tux3_crc32c(0, "", 0), 0);
	/* RFC 3720 (iSCSI) appendix B.4 */
	memset(buf, 0, sizeof(buf));
	CHECK_EQ(tux3_crc32c(0, buf, 32), 0x8A9136AAu);
	memset(buf, 0xff, sizeof(buf));
	CHECK_EQ(tux3_crc32c(0, buf, 32), 0x62A8AB43u);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)i;
	CHECK_EQ(tux3_crc32c(0, buf, 32), 0x46DD794Eu);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)(31 - i);
	CHECK_EQ(tux3_crc32c(0, buf, 32), 0x113FDB5Cu);
	/* chaining equals one pass */
	CHECK_EQ(tux3_crc32c(tux3_crc32c(0, "1234", 4), "56789", 5), 0xE3069283u);
}

/* The processor's instruction (where there is one) and the table agree
 * at every length and alignment, chained or not. */
TEST(crc32c_fast_path_is_the_table)
{
	uint8_t buf[4096 + 16];
	uint32_t x = 12345;
	for (size_t i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245 + 12345;
		buf[i] = (uint8_t)(x >> 16);
	}
	for (size_t off = 0; off < 16; off++)
		for (size_t len = 0; len < 80; len++)
			CHECK_EQ(tux3_crc32c(7, buf + off, len),
				 crc32c_portable(7, buf + off, len));
	CHECK_EQ(tux3_crc32c(0, buf + 3, 4096), crc32c_portable(0, buf + 3,
								 4096));
	CHECK_EQ(tux3_crc32c(tux3_crc32c(0, buf, 1001), buf + 1001, 3000),
		 crc32c_portable(0, buf, 4001));
}

/* ---- encode / decode on a buffer ---- */

static struct disksuper sample_super(void)
{
	struct disksuper sb;
	memset(&sb, 0, sizeof(sb));
	sb.logchain = 0x123456789aULL;
	sb.logcount = 77;
	sb.iroot = 0x000200000000abcdULL;
	sb.oroot = 0x0001000000000042ULL;
	return sb;
}

static struct tux3_identity sample_identity(void)
{
	struct tux3_identity id;
	memset(&id, 0, sizeof(id));
	for (int i = 0; i < 16; i++)
		id.uuid[i] = (uint8_t)(0xa0 + i);
	strcpy(id.label, "scratch-volume \xc3\xa9t\xc3\xa9");
	id.mkfs_time_ns = 1700000000123456789LL;
	id.compat = 0x11;
	id.ro_compat = 0x22;
	id.incompat = 0x33;
	return id;
}

TEST(encode_layout_and_round_trip)
{
	static uint8_t area[TUX3_SB_LEN];
	memset(area, 0x5a, sizeof(area));
	struct disksuper sb = sample_super();
	struct tux3_identity id = sample_identity(), back;
	struct superext_seal seal;

	superext_encode(area, &id, &sb, 999);
	/* bytes outside 512..1023 untouched */
	for (unsigned i = 0; i < TUX3_SB_LEN; i++)
		if (i < 512 || i >= 1024)
			CHECK_EQ(area[i], 0x5a);
	const uint8_t *r = area + 512;
	CHECK(!memcmp(r, "T3X1", 4));
	CHECK_EQ(be16(r + 4), 1);
	CHECK_EQ(be16(r + 6), 512);
	CHECK_EQ(be32(r + 8), 0x11);
	CHECK_EQ(be32(r + 12), 0x22);
	CHECK_EQ(be32(r + 16), 0x33);
	CHECK_EQ(be32(r + 20), 0);
	CHECK_EQ(r[24], 0xa0);
	CHECK_EQ(r[39], 0xaf);
	CHECK(!memcmp(r + 40, id.label, strlen(id.label)));
	for (unsigned i = 40 + strlen(id.label); i < 104; i++)
		CHECK_EQ(r[i], 0);
	CHECK(be64(r + 104) == 1700000000123456789ULL);
	CHECK_EQ(be64(r + 112), 999);
	CHECK(be64(r + 120) == 0x123456789aULL);
	CHECK_EQ(be32(r + 128), 77);
	CHECK_EQ(be32(r + 132), 0);
	CHECK(be64(r + 136) == 0x000200000000abcdULL);
	CHECK(be64(r + 144) == 0x0001000000000042ULL);
	for (unsigned i = 152; i < 508; i++)
		CHECK_EQ(r[i], 0);
	CHECK_EQ(be32(r + 508), tux3_crc32c(0, r, 508));

	char why[160];
	CHECK_EQ(superext_decode(area, &back, &seal, why, sizeof(why)), 1);
	CHECK_EQ(back.present, 1);
	CHECK_EQ(back.version, 1);
	CHECK(!memcmp(back.uuid, id.uuid, 16));
	CHECK(!strcmp(back.label, id.label));
	CHECK(back.mkfs_time_ns == id.mkfs_time_ns);
	CHECK_EQ(back.compat, 0x11);
	CHECK_EQ(back.ro_compat, 0x22);
	CHECK_EQ(back.incompat, 0x33);
	CHECK_EQ(back.seq, 999);
	CHECK_EQ(back.sealed, 0);	/* decode alone does not judge */
	CHECK_EQ(seal.seq, 999);
	CHECK(seal.logchain == sb.logchain);
	CHECK_EQ(seal.logcount, sb.logcount);
	CHECK(seal.iroot == sb.iroot);
	CHECK(seal.oroot == sb.oroot);
}

TEST(label_of_64_bytes_and_negative_time)
{
	static uint8_t area[TUX3_SB_LEN];
	struct disksuper sb = sample_super();
	struct tux3_identity id = sample_identity(), back;
	struct superext_seal seal;
	memset(id.label, 'L', TUX3_LABEL_MAX);
	id.label[TUX3_LABEL_MAX] = 0;
	id.mkfs_time_ns = -5;
	superext_encode(area, &id, &sb, 0);
	CHECK_EQ(area[512 + 103], 'L');
	CHECK_EQ(area[512 + 104], 0xff);	/* time, not a terminator */
	CHECK_EQ(superext_decode(area, &back, &seal, NULL, 0), 1);
	CHECK_EQ(strlen(back.label), TUX3_LABEL_MAX);
	CHECK(back.mkfs_time_ns == -5);
}

TEST(seal_match_and_mismatch)
{
	static uint8_t area[TUX3_SB_LEN];
	struct disksuper sb = sample_super(), other;
	struct tux3_identity id = sample_identity(), back;
	struct superext_seal seal;
	superext_encode(area, &id, &sb, 5);
	CHECK_EQ(superext_decode(area, &back, &seal, NULL, 0), 1);
	CHECK(superext_sealed(&seal, &sb));
	/* fields outside the seal do not matter */
	other = sb;
	other.usedinodes = 1234;
	other.nextblock = 99;
	other.atomgen = 7;
	CHECK(superext_sealed(&seal, &other));
	other = sb;
	other.logchain++;
	CHECK(!superext_sealed(&seal, &other));
	other = sb;
	other.logcount++;
	CHECK(!superext_sealed(&seal, &other));
	other = sb;
	other.iroot ^= 1;
	CHECK(!superext_sealed(&seal, &other));
	other = sb;
	other.oroot = 0;
	CHECK(!superext_sealed(&seal, &other));
}

TEST(decode_absent_and_damaged)
{
	static uint8_t area[TUX3_SB_LEN];
	struct disksuper sb = sample_super();
	struct tux3_identity id = sample_identity(), back;
	struct superext_seal seal;
	char why[160];

	memset(area, 0, sizeof(area));
	area[100] = 1;		/* the rest of the superblock is not ours */
	area[1024] = 1;
	CHECK_EQ(superext_decode(area, &back, &seal, why, sizeof(why)), 0);
	CHECK_EQ(back.present, 0);

	/* one flipped bit anywhere in 0..511 */
	for (unsigned bit = 0; bit < 512 * 8; bit += 97) {
		superext_encode(area, &id, &sb, 1);
		area[512 + bit / 8] ^= (uint8_t)(1 << (bit % 8));
		CHECK_EQ(superext_decode(area, &back, &seal, why,
					 sizeof(why)), -EUCLEAN);
		CHECK_EQ(back.present, 0);
		CHECK(why[0]);
	}
	superext_encode(area, &id, &sb, 1);
	area[512 + 200] ^= 1;
	CHECK_EQ(superext_decode(area, &back, &seal, why, sizeof(why)),
		 -EUCLEAN);
	CHECK(strstr(why, "CRC32C"));

	/* well-formed CRC, unknown version / wrong size */
	superext_encode(area, &id, &sb, 1);
	put_be16(area + 512 + 4, 2);
	put_be32(area + 1020, tux3_crc32c(0, area + 512, 508));
	CHECK_EQ(superext_decode(area, &back, &seal, why, sizeof(why)),
		 -EUCLEAN);
	CHECK(strstr(why, "version 2"));
	superext_encode(area, &id, &sb, 1);
	put_be16(area + 512 + 6, 256);
	put_be32(area + 1020, tux3_crc32c(0, area + 512, 508));
	CHECK_EQ(superext_decode(area, &back, &seal, why, sizeof(why)),
		 -EUCLEAN);
	CHECK(strstr(why, "size 256"));

	/* non-zero bytes without the magic */
	memset(area + 512, 0, 512);
	area[512 + 300] = 0x42;
	CHECK_EQ(superext_decode(area, &back, &seal, why, sizeof(why)),
		 -EUCLEAN);
	CHECK(strstr(why, "magic"));
}

/* ---- on volumes ---- */

/* A scratch copy of an oracle image with a record written by
 * superext_encode; mutate (may be NULL) edits the superblock area after
 * encoding, and recrc recomputes the CRC afterwards. */
static const char *image_with_record(const char *name,
				     const struct tux3_identity *id,
				     uint64_t seq, int logcount_delta,
				     void (*mutate)(uint8_t *area), bool recrc)
{
	static uint8_t area[TUX3_SB_LEN];
	const char *path = scratch_copy(name);
	int fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	CHECK(pread(fd, area, sizeof(area), TUX3_SB_OFFSET) ==
	      (ssize_t)sizeof(area));
	struct disksuper sb;
	super_decode(area, &sb);
	sb.logcount += (uint32_t)logcount_delta;
	superext_encode(area, id, &sb, seq);
	if (mutate)
		mutate(area);
	if (recrc)
		put_be32(area + 1020, tux3_crc32c(0, area + 512, 508));
	CHECK(pwrite(fd, area, sizeof(area), TUX3_SB_OFFSET) ==
	      (ssize_t)sizeof(area));
	close(fd);
	return path;
}

static int open_mode(const char *path, enum tux3_open_mode mode,
		     struct tux3_volume **vol, char *msg, size_t len)
{
	return tux3_open_err(path, mode, vol, msg, len);
}

static unsigned warnings_naming(struct tux3_volume *vol, const char *what)
{
	unsigned n = 0;
	for (unsigned i = 0; i < tux3_warning_count(vol); i++)
		if (strstr(tux3_warning(vol, i), what))
			n++;
	return n;
}

TEST(open_sealed_record_every_block_size)
{
	static const char *names[] = { "empty-512", "empty-1k", "empty-4k",
				       "empty-16k", "small-unified" };
	struct tux3_identity id = sample_identity(), got;
	id.compat = id.ro_compat = id.incompat = 0;
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *path = image_with_record(names[i], &id, 42, 0,
						     NULL, false);
		for (int m = 0; m < 3; m++) {
			enum tux3_open_mode mode = m == 0 ? TUX3_OPEN_RDONLY :
				m == 1 ? TUX3_OPEN_NOREPLAY :
				TUX3_OPEN_RDWR_NORECOVER;
			struct tux3_volume *vol = oracle_open_path(path, mode);
			CHECK_EQ(tux3_identity(vol, &got), 0);
			CHECK_EQ(got.present, 1);
			CHECK_EQ(got.sealed, 1);
			CHECK_EQ(got.version, 1);
			CHECK_EQ(got.seq, 42);
			CHECK(!memcmp(got.uuid, id.uuid, 16));
			CHECK(!strcmp(got.label, id.label));
			CHECK(got.mkfs_time_ns == id.mkfs_time_ns);
			CHECK_EQ(got.compat, 0);
			CHECK_EQ(warnings_naming(vol, "extension"), 0);
			tux3_close(vol);
		}
	}
}

TEST(open_unsealed_record)
{
	/* sealed against a logcount the superblock does not have: a
	 * writer unaware of the record committed after it */
	struct tux3_identity id = sample_identity(), got;
	id.compat = id.ro_compat = id.incompat = 0;
	const char *path = image_with_record("small-delta", &id, 7, 1, NULL,
					     false);
	struct tux3_volume *vol = oracle_open_path(path, TUX3_OPEN_RDONLY);
	tux3_identity(vol, &got);
	CHECK_EQ(got.present, 1);
	CHECK_EQ(got.sealed, 0);
	CHECK_EQ(got.seq, 7);
	CHECK(!strcmp(got.label, id.label));
	CHECK_EQ(warnings_naming(vol, "extension"), 0);
	tux3_close(vol);
}

static void flip_label_byte(uint8_t *area)
{
	area[512 + 41] ^= 0x20;
}

TEST(open_bad_crc_is_absent_with_warning)
{
	struct tux3_identity id = sample_identity(), got;
	id.compat = id.ro_compat = 0;
	id.incompat = 0x80000000u;	/* ignored: the record is not trusted */
	const char *path = image_with_record("empty-4k", &id, 1, 0,
					     flip_label_byte, false);
	struct tux3_volume *vol = oracle_open_path(path, TUX3_OPEN_RDONLY);
	tux3_identity(vol, &got);
	CHECK_EQ(got.present, 0);
	CHECK_EQ(got.sealed, 0);
	CHECK_EQ(warnings_naming(vol, "byte 4608"), 1);
	CHECK_EQ(warnings_naming(vol, "CRC32C"), 1);
	tux3_close(vol);
}

static void set_version_2(uint8_t *area)
{
	put_be16(area + 512 + 4, 2);
}

TEST(open_unknown_version_is_absent_with_warning)
{
	struct tux3_identity id = sample_identity(), got;
	id.compat = id.ro_compat = id.incompat = 0;
	const char *path = image_with_record("empty-1k", &id, 1, 0,
					     set_version_2, true);
	struct tux3_volume *vol = oracle_open_path(path, TUX3_OPEN_RDONLY);
	tux3_identity(vol, &got);
	CHECK_EQ(got.present, 0);
	CHECK_EQ(warnings_naming(vol, "byte 4608"), 1);
	tux3_close(vol);
}

TEST(open_unknown_incompat_refused)
{
	struct tux3_identity id = sample_identity();
	id.compat = 0x4;	/* unknown compat bits are fine */
	id.ro_compat = 0;
	id.incompat = 0x80000004u;
	const char *path = image_with_record("small-unified", &id, 3, 0, NULL,
					     false);
	enum tux3_open_mode modes[] = { TUX3_OPEN_RDONLY, TUX3_OPEN_NOREPLAY,
					TUX3_OPEN_RDWR_NORECOVER };
	for (unsigned i = 0; i < 3; i++) {
		struct tux3_volume *vol = (void *)1;
		char msg[512];
		CHECK_EQ(open_mode(path, modes[i], &vol, msg, sizeof(msg)),
			 -EOPNOTSUPP);
		CHECK(vol == NULL);
		CHECK(strstr(msg, "offset 4624"));
		CHECK(strstr(msg, "0x80000004"));
		CHECK(strstr(msg, "incompat"));
	}
}

TEST(open_unknown_ro_compat_read_only)
{
	struct tux3_identity id = sample_identity(), got;
	id.compat = 0;
	id.ro_compat = 0x00010000u;
	id.incompat = 0;
	const char *path = image_with_record("small-delta", &id, 3, 0, NULL,
					     false);
	struct tux3_volume *vol = oracle_open_path(path, TUX3_OPEN_RDONLY);
	tux3_identity(vol, &got);
	CHECK_EQ(got.present, 1);
	CHECK_EQ(got.ro_compat, 0x00010000u);
	CHECK_EQ(got.sealed, 1);
	tux3_close(vol);
	vol = oracle_open_path(path, TUX3_OPEN_NOREPLAY);
	tux3_close(vol);

	char msg[512];
	vol = (void *)1;
	CHECK_EQ(open_mode(path, TUX3_OPEN_RDWR_NORECOVER, &vol, msg,
			   sizeof(msg)), -EROFS);
	CHECK(vol == NULL);
	CHECK(strstr(msg, "offset 4620"));
	CHECK(strstr(msg, "0x00010000"));
	CHECK(strstr(msg, "ro_compat"));
	CHECK_EQ(open_mode(path, TUX3_OPEN_RDWR, &vol, msg, sizeof(msg)),
		 -EROFS);
}

TEST(oracle_images_have_no_record)
{
	const char *dir = getenv("TUX3_ORACLE_DIR");
	if (!dir)
		SKIP("oracle images missing (TUX3_ORACLE_DIR)");
	DIR *d = opendir(dir);
	CHECK(d);
	unsigned seen = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n < 5 || strcmp(e->d_name + n - 4, ".img"))
			continue;
		char path[1024];
		static uint8_t area[TUX3_SB_LEN];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		int fd = open(path, O_RDONLY);
		CHECK(fd >= 0);
		CHECK(pread(fd, area, sizeof(area), TUX3_SB_OFFSET) ==
		      (ssize_t)sizeof(area));
		close(fd);
		struct tux3_identity got;
		struct superext_seal seal;
		CHECK_EQ(superext_decode(area, &got, &seal, NULL, 0), 0);

		struct tux3_volume *vol = oracle_open_path(path,
							   TUX3_OPEN_RDONLY);
		CHECK_EQ(tux3_identity(vol, &got), 0);
		CHECK_EQ(got.present, 0);
		CHECK_EQ(got.sealed, 0);
		CHECK_EQ(warnings_naming(vol, "extension"), 0);
		tux3_close(vol);
		seen++;
	}
	closedir(d);
	CHECK(seen >= 8);
}

int main(void)
{
	return run_tests("superext");
}

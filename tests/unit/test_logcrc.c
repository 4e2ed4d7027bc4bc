/*
 * The LOG_CRC feature (format.md 15.2): a CRC32C in bytes 4..7 of every
 * log block our writer makes, verified by replay only while the extension
 * record's seal matches the live superblock (our commit was the last).
 */
#include <sys/stat.h>
#include "fixtures.h"
#include "internal.h"

#define BITS 9
#define BS (1u << BITS)
#define VOLBYTES (2u << 20)

static void make_volume(uint32_t compat)
{
	int fd = scratch_create();
	CHECK(ftruncate(fd, VOLBYTES) == 0);
	close(fd);
	struct tux3_mkfs_params p = { .blockbits = BITS,
				      .volblocks = VOLBYTES >> BITS,
				      .time_ns = 1, .compat = compat };
	char err[300];
	CHECK_EQ(tux3_mkfs(scratch_path(), &p, err, sizeof(err)), 0);
}

/* n commits of our writer, each creating a file */
static void commits(unsigned n, const char *prefix)
{
	struct tux3_volume *vol;
	CHECK_EQ(tux3_open(scratch_path(), TUX3_OPEN_RDWR, &vol), 0);
	for (unsigned i = 0; i < n; i++) {
		char name[32];
		tux3_ino_t ino;
		snprintf(name, sizeof(name), "%s%u", prefix, i);
		CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, name, strlen(name),
				     S_IFREG | 0644, 0, 0, &ino), 0);
		CHECK_EQ(tux3_sync(vol), 0);
	}
	tux3_close(vol);
}

static void pread_at(void *buf, size_t len, uint64_t off)
{
	int fd = open(scratch_path(), O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(pread(fd, buf, len, (off_t)off), (ssize_t)len);
	close(fd);
}

static void pwrite_at(const void *buf, size_t len, uint64_t off)
{
	int fd = open(scratch_path(), O_RDWR);
	CHECK(fd >= 0);
	CHECK_EQ(pwrite(fd, buf, len, (off_t)off), (ssize_t)len);
	close(fd);
}

/* The log chain, newest first; returns its length. */
static unsigned chain(uint64_t *out, unsigned max)
{
	uint8_t sb[TUX3_SB_LEN], blk[BS];
	pread_at(sb, sizeof(sb), TUX3_SB_OFFSET);
	uint64_t b = be64(sb + 88);
	unsigned n = be32(sb + 96);
	CHECK(n <= max);
	for (unsigned i = 0; i < n; i++) {
		out[i] = b;
		pread_at(blk, BS, b << BITS);
		b = be64(blk + 8);
	}
	return n;
}

static int open_rdonly(char *msg, size_t len)
{
	struct tux3_volume *vol;
	int err = tux3_open_err(scratch_path(), TUX3_OPEN_RDONLY, &vol, msg,
				len);
	if (!err)
		tux3_close(vol);
	return err;
}

static bool is_sealed(void)
{
	struct tux3_volume *vol;
	struct tux3_identity id;
	CHECK_EQ(tux3_open(scratch_path(), TUX3_OPEN_RDONLY, &vol), 0);
	CHECK_EQ(tux3_identity(vol, &id), 0);
	tux3_close(vol);
	return id.present && id.sealed;
}

/* A foreign commit leaves the record as it was while the live fields
 * move: here the seal's logcount copy is changed instead (same effect). */
static void unseal(void)
{
	uint8_t sb[TUX3_SB_LEN];
	pread_at(sb, sizeof(sb), TUX3_SB_OFFSET);
	uint8_t *r = sb + SUPEREXT_OFFSET;
	put_be32(r + 128, be32(r + 128) + 1);
	put_be32(r + SUPEREXT_CRC_OFFSET, tux3_crc32c(0, r, SUPEREXT_CRC_OFFSET));
	pwrite_at(sb, sizeof(sb), TUX3_SB_OFFSET);
	CHECK(!is_sealed());
}

/* Every byte of every log block of a sealed volume, flipped in turn,
 * makes the open fail with -EUCLEAN naming the block. */
static void every_byte_rejected(const uint64_t *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint8_t blk[BS];
		pread_at(blk, BS, b[i] << BITS);
		CHECK(be32(blk + LOG_CRC_OFFSET) != 0 ||
		      log_block_crc(blk, BS, b[i]) == 0);
		for (unsigned off = 0; off < BS; off++) {
			uint8_t x = blk[off] ^ 0x20;
			pwrite_at(&x, 1, (b[i] << BITS) + off);
			char msg[512];
			int err = open_rdonly(msg, sizeof(msg));
			if (err != -EUCLEAN)
				fprintf(stderr, "block %" PRIu64 " byte %u: "
					"%d\n", b[i], off, err);
			CHECK_EQ(err, -EUCLEAN);
			pwrite_at(blk + off, 1, (b[i] << BITS) + off);
		}
	}
	char msg[512];
	CHECK_EQ(open_rdonly(msg, sizeof(msg)), 0);
}

TEST(mkfs_block_carries_crc)
{
	make_volume(TUX3_FEATURE_COMPAT_LOG_CRC);
	uint64_t b[4];
	CHECK_EQ(chain(b, 4), 1);
	uint8_t blk[BS];
	pread_at(blk, BS, b[0] << BITS);
	CHECK_EQ(be32(blk + LOG_CRC_OFFSET), log_block_crc(blk, BS, b[0]));
	CHECK(is_sealed());
	/* the same block elsewhere fails: the block number is in the CRC */
	CHECK(log_block_crc(blk, BS, b[0]) != log_block_crc(blk, BS, b[0] + 1));
}

TEST(sealed_every_byte_flip_rejected)
{
	make_volume(TUX3_FEATURE_COMPAT_LOG_CRC);
	commits(3, "f");
	CHECK(is_sealed());
	uint64_t b[16];
	unsigned n = chain(b, 16);
	CHECK(n >= 3);
	every_byte_rejected(b, n);
	/* the message names the block and the CRC */
	uint8_t x;
	pread_at(&x, 1, (b[0] << BITS) + BS - 1);
	x ^= 1;
	pwrite_at(&x, 1, (b[0] << BITS) + BS - 1);
	char msg[512];
	CHECK_EQ(open_rdonly(msg, sizeof(msg)), -EUCLEAN);
	CHECK(strstr(msg, "CRC32C"));
	char want[32];
	snprintf(want, sizeof(want), "%" PRIu64, b[0]);
	CHECK(strstr(msg, want));
}

TEST(unsealed_not_verified)
{
	make_volume(TUX3_FEATURE_COMPAT_LOG_CRC);
	commits(2, "f");
	uint64_t b[16];
	unsigned n = chain(b, 16);
	unseal();
	/* what a reference commit leaves: CRC fields of 0 (it zeroes them in
	 * blocks it writes), and a stale CRC in ones it did not */
	static const uint8_t zero[4];
	for (unsigned i = 0; i < n; i++)
		pwrite_at(zero, 4, (b[i] << BITS) + LOG_CRC_OFFSET);
	uint8_t x = 0x5a;
	pwrite_at(&x, 1, (b[0] << BITS) + BS - 1);	/* past the payload */
	char msg[512];
	CHECK_EQ(open_rdonly(msg, sizeof(msg)), 0);
	x = 0;
	pwrite_at(&x, 1, (b[0] << BITS) + BS - 1);
	/* our next commit reseals and counts only its own blocks: the
	 * foreign ones (CRC 0) stay accepted, ours are verified */
	commits(1, "g");
	CHECK(is_sealed());
	uint64_t c[16];
	unsigned m = chain(c, 16);
	CHECK_EQ(m, n + 1);
	CHECK_EQ(open_rdonly(msg, sizeof(msg)), 0);
	every_byte_rejected(c, 1);
	x = 0x5a;
	pwrite_at(&x, 1, (c[1] << BITS) + BS - 1);	/* a foreign block */
	CHECK_EQ(open_rdonly(msg, sizeof(msg)), 0);
}

TEST(unify_restarts_the_count)
{
	make_volume(TUX3_FEATURE_COMPAT_LOG_CRC);
	commits(2, "f");
	struct tux3_volume *vol;
	CHECK_EQ(tux3_open(scratch_path(), TUX3_OPEN_RDWR, &vol), 0);
	CHECK_EQ(tux3_unify(vol), 0);
	tux3_close(vol);
	commits(2, "g");
	CHECK(is_sealed());
	uint64_t b[16];
	unsigned n = chain(b, 16);
	every_byte_rejected(b, n);
}

TEST(feature_off_not_verified)
{
	make_volume(0);
	commits(2, "f");
	uint64_t b[16];
	unsigned n = chain(b, 16);
	for (unsigned i = 0; i < n; i++) {
		uint8_t blk[BS];
		pread_at(blk, BS, b[i] << BITS);
		CHECK_EQ(be32(blk + LOG_CRC_OFFSET), 0);
	}
	uint8_t x = 0x5a;
	pwrite_at(&x, 1, (b[0] << BITS) + LOG_CRC_OFFSET);
	char msg[512];
	CHECK_EQ(open_rdonly(msg, sizeof(msg)), 0);
}

int main(void)
{
	return run_tests("logcrc");
}

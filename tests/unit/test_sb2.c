/*
 * The SB_BACKUP feature (format.md 15.3): a checksummed copy of the
 * superblock's first 1024 bytes at absolute byte 1024, written and
 * flushed before the primary on every commit.
 */
#include <sys/stat.h>
#include "fixtures.h"
#include "internal.h"
#include "tux3_fsck.h"

#define BITS 10
#define VOLBYTES (4u << 20)

/* write-order trace of the commit (the device hook) */
static uint64_t order[64];
static unsigned norder;

static void on_write(void *ctx, uint64_t off, size_t len)
{
	(void)ctx;
	(void)len;
	if (norder < 64)
		order[norder++] = off;
}

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

static void rw_at(bool write, void *buf, size_t len, uint64_t off)
{
	int fd = open(scratch_path(), O_RDWR);
	CHECK(fd >= 0);
	if (write)
		CHECK_EQ(pwrite(fd, buf, len, (off_t)off), (ssize_t)len);
	else
		CHECK_EQ(pread(fd, buf, len, (off_t)off), (ssize_t)len);
	close(fd);
}

/* the copy at 1024 equals the primary's first 1024 bytes, CRC good */
static void copy_matches(void)
{
	uint8_t prim[TUX3_SB_LEN], raw[SB2_LEN], copy[TUX3_SB_LEN];
	char why[200];
	rw_at(false, prim, sizeof(prim), TUX3_SB_OFFSET);
	rw_at(false, raw, sizeof(raw), SB2_OFFSET);
	CHECK_EQ(sb2_decode(raw, copy, why, sizeof(why)), 0);
	CHECK(!memcmp(prim, copy, SB2_COPY));
}

static void smash_primary(void)
{
	uint8_t junk[512];
	memset(junk, 0xa5, sizeof(junk));
	rw_at(true, junk, sizeof(junk), TUX3_SB_OFFSET);
}

TEST(mkfs_and_commits_keep_the_copy)
{
	make_volume(TUX3_FEATURE_COMPAT_SB_BACKUP);
	copy_matches();
	struct tux3_volume *vol;
	CHECK_EQ(tux3_open(scratch_path(), TUX3_OPEN_RDWR, &vol), 0);
	vol->dev.on_write = on_write;
	tux3_ino_t ino;
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "a", 1, S_IFREG | 0644, 0, 0,
			     &ino), 0);
	norder = 0;
	CHECK_EQ(tux3_sync(vol), 0);
	/* the copy is written before the primary, and the primary last */
	CHECK(norder >= 2);
	CHECK_EQ(order[norder - 1], TUX3_SB_OFFSET);
	CHECK_EQ(order[norder - 2], SB2_OFFSET);
	tux3_close(vol);
	copy_matches();
}

TEST(feature_off_writes_no_copy)
{
	make_volume(0);
	uint8_t raw[SB2_LEN], zero[SB2_LEN] = { 0 };
	rw_at(false, raw, sizeof(raw), SB2_OFFSET);
	CHECK(!memcmp(raw, zero, sizeof(raw)));
	smash_primary();
	char msg[300];
	CHECK_EQ(tux3_sb2_restore(scratch_path(), 1, msg, sizeof(msg)),
		 -ENOENT);
}

TEST(bad_primary_read_only_fallback_and_restore)
{
	make_volume(TUX3_FEATURE_COMPAT_SB_BACKUP | TUX3_FEATURE_COMPAT_LOG_CRC);
	struct tux3_volume *vol;
	CHECK_EQ(tux3_open(scratch_path(), TUX3_OPEN_RDWR, &vol), 0);
	tux3_ino_t ino;
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "a", 1, S_IFREG | 0644, 0, 0,
			     &ino), 0);
	CHECK_EQ(tux3_umount(vol), 0);
	uint8_t before[TUX3_SB_LEN];
	rw_at(false, before, sizeof(before), TUX3_SB_OFFSET);
	smash_primary();
	char msg[400];
	/* writable opens are refused, naming fsck.tux3 -b */
	CHECK_EQ(tux3_open_err(scratch_path(), TUX3_OPEN_RDWR, &vol, msg,
			       sizeof(msg)), -EUCLEAN);
	CHECK(strstr(msg, "fsck.tux3 -b"));
	/* read-only: the copy, with a warning; the file is there (the
	 * copy is sealed, so the log CRCs are checked too) */
	CHECK_EQ(tux3_open(scratch_path(), TUX3_OPEN_RDONLY, &vol), 0);
	CHECK(vol->nwarnings >= 1);
	CHECK(strstr(vol->warnings[0], "secondary"));
	struct tux3_identity id;
	CHECK_EQ(tux3_identity(vol, &id), 0);
	CHECK(id.sealed);
	tux3_ino_t found;
	CHECK_EQ(tux3_lookup(vol, TUX3_ROOT_INO, "a", 1, &found), 0);
	CHECK_EQ(found, ino);
	tux3_close(vol);
	/* report only, then restore */
	CHECK_EQ(tux3_sb2_restore(scratch_path(), 0, msg, sizeof(msg)), 0);
	uint8_t now[TUX3_SB_LEN];
	rw_at(false, now, sizeof(now), TUX3_SB_OFFSET);
	CHECK(memcmp(now, before, sizeof(now)));
	CHECK_EQ(tux3_sb2_restore(scratch_path(), 1, msg, sizeof(msg)), 0);
	rw_at(false, now, sizeof(now), TUX3_SB_OFFSET);
	CHECK(!memcmp(now, before, sizeof(now)));
	CHECK_EQ(tux3_sb2_restore(scratch_path(), 1, msg, sizeof(msg)), 1);
	CHECK_EQ(tux3_open(scratch_path(), TUX3_OPEN_RDWR, &vol), 0);
	CHECK_EQ(vol->nwarnings, 0);
	tux3_close(vol);
}

TEST(damaged_copy_not_used)
{
	make_volume(TUX3_FEATURE_COMPAT_SB_BACKUP);
	uint8_t x = 0x01;
	rw_at(true, &x, 1, SB2_OFFSET + 100);
	smash_primary();
	char msg[300];
	CHECK_EQ(tux3_sb2_restore(scratch_path(), 1, msg, sizeof(msg)),
		 -EUCLEAN);
	CHECK(strstr(msg, "CRC32C"));
	struct tux3_volume *vol;
	CHECK(tux3_open(scratch_path(), TUX3_OPEN_RDONLY, &vol) < 0);
}

TEST(good_primary_wins)
{
	make_volume(TUX3_FEATURE_COMPAT_SB_BACKUP);
	/* a stale copy (e.g. after a reference commit) is not used while
	 * the primary has its magic */
	uint8_t raw[SB2_LEN];
	rw_at(false, raw, sizeof(raw), SB2_OFFSET);
	put_be32(raw + 96, 7);		/* logcount */
	put_be32(raw + SB2_CRC_AT, tux3_crc32c(0, raw, SB2_CRC_AT));
	rw_at(true, raw, sizeof(raw), SB2_OFFSET);
	char msg[300];
	CHECK_EQ(tux3_sb2_restore(scratch_path(), 1, msg, sizeof(msg)), 1);
	struct tux3_volume *vol;
	CHECK_EQ(tux3_open(scratch_path(), TUX3_OPEN_RDWR, &vol), 0);
	tux3_close(vol);
}

int main(void)
{
	return run_tests("sb2");
}

/*
 * The on-disk directory index (DIR_INDEX, doc/format.md 15.5): its
 * blocks (format/dirhash.c), and a volume with the feature against the
 * linear path: every name found as the entries say through creates,
 * unlinks and renames that split buckets and double the table; a cold
 * lookup reads 4 directory blocks (vol->dir_block_reads, counted work),
 * and a cold create a few more, never the whole directory;
 * an index made stale by a foreign commit (the seal broken) is not used
 * and is rebuilt by the next create; fsck finds the volume clean.
 */
#include "fixtures.h"

#define ROOT TUX3_ROOT_INO

/* ---- the blocks ---- */

TEST(block_roundtrip_and_crc)
{
	static uint8_t blk[1024];
	struct dirhash_head h = { .kind = DIRHASH_BUCKET, .depth = 3,
				  .count = 2, .gen = 7 }, g;
	dirhash_init(blk, 1024, &h);
	dirhash_set_item(blk, 0, 0xdeadbeef);
	dirhash_set_item(blk, 1, 9);
	dirhash_seal(blk, 1024, 100, 5);
	CHECK(dirhash_is_index(blk, 1024));
	CHECK_EQ(dirhash_decode(blk, 1024, 100, 5, &g), 0);
	CHECK_EQ(g.kind, DIRHASH_BUCKET);
	CHECK_EQ(g.depth, 3);
	CHECK_EQ(g.count, 2);
	CHECK_EQ(g.gen, 7);
	CHECK_EQ(dirhash_item(blk, 0), 0xdeadbeef);
	/* the CRC names the directory and the place */
	CHECK_EQ(dirhash_decode(blk, 1024, 101, 5, &g), DIRHASH_BAD_CRC);
	CHECK_EQ(dirhash_decode(blk, 1024, 100, 6, &g), DIRHASH_BAD_CRC);
	blk[700] ^= 1;
	CHECK_EQ(dirhash_decode(blk, 1024, 100, 5, &g), DIRHASH_BAD_CRC);
	blk[700] ^= 1;
	/* a count past the capacity */
	dirhash_set_count(blk, dirhash_bucket_pairs(1024) + 1);
	dirhash_seal(blk, 1024, 100, 5);
	CHECK_EQ(dirhash_decode(blk, 1024, 100, 5, &g), DIRHASH_BAD_FIELD);
}

TEST(index_block_is_an_empty_entry_block)
{
	static uint8_t blk[4096];
	struct dirhash_head h = { .kind = DIRHASH_ROOT, .count = 1 };
	dirhash_init(blk, 4096, &h);
	dirhash_seal(blk, 4096, 64, 0);
	/* 2014 readers: one deleted record over the whole block */
	CHECK_EQ(be64(blk), 0);
	CHECK_EQ(be16(blk + 8), 4096);
	CHECK_EQ(blk[10], 0);
	/* our writers: no room in it */
	CHECK_EQ(dirblock_room(blk, 4096), 0);
	CHECK_EQ(dirblock_add(blk, 4096, "a", 1, 64, 1), -ENOSPC);
	/* a reference insert into it: no longer an index block */
	dirblock_init(blk, 4096);
	CHECK(!dirhash_is_index(blk, 4096));
	CHECK(dirhash_table_slots(512) == 64 && dirhash_table_slots(4096) == 512);
	CHECK_EQ(dirhash_bucket_pairs(4096), 507);
}

/* ---- a volume with the feature ---- */

static const char *indexed_volume(unsigned bits, uint64_t bytes)
{
	int fd = scratch_create();
	CHECK(ftruncate(fd, (off_t)bytes) == 0);
	close(fd);
	struct tux3_mkfs_params p = {
		.blockbits = bits, .volblocks = bytes >> bits, .time_ns = 1,
		.compat = TUX3_FEATURE_COMPAT_DEFAULT,
		.ro_compat = TUX3_FEATURE_RO_COMPAT_DIR_INDEX };
	memset(p.uuid, 0x5a, sizeof(p.uuid));
	char err[300];
	CHECK_EQ(tux3_mkfs(scratch_path(), &p, err, sizeof(err)), 0);
	return scratch_path();
}

static struct tux3_volume *open_mode(const char *path, int mode)
{
	struct tux3_volume *vol;
	CHECK_EQ(tux3_open(path, mode, &vol), 0);
	tux3_set_time(vol, 1000000000);
	return vol;
}

static unsigned name_of(char *buf, unsigned i, unsigned g)
{
	return (unsigned)sprintf(buf, "file-%u-%u%s", i, g,
				 i % 7 ? "" : "-with-a-longer-tail-to-vary");
}

#define N 12000
static unsigned gen[N];
static bool live[N];

/* The directory's inode and the on-disk index's answer for name. */
static int hashed(struct tux3_volume *vol, tux3_ino_t dirino,
		  const char *name, unsigned len, tux3_ino_t *ino)
{
	struct inode dir;
	struct dirent_info d;
	CHECK_EQ(inode_load_dir(vol, dirino, &dir), 0);
	int r = dirhash_find(vol, &dir, name, len, &d);
	inode_free(&dir);
	if (!r)
		*ino = d.inum;
	return r;
}

/* Every slot as the test made it: through the index when it has one. */
static void check_all(struct tux3_volume *vol, tux3_ino_t dir, bool indexed)
{
	char name[80];
	for (unsigned i = 0; i < N; i++) {
		unsigned len = name_of(name, i, gen[i]);
		tux3_ino_t ino;
		int r = hashed(vol, dir, name, len, &ino);
		if (indexed)
			CHECK_EQ(r, live[i] ? 0 : -ENOENT);
		else
			CHECK_EQ(r, DIRHASH_NONE);
		CHECK_EQ(tux3_lookup(vol, dir, name, len, &ino),
			 live[i] ? 0 : -ENOENT);
	}
}

static uint64_t rng = 99;
static unsigned rnd(unsigned n)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)((rng >> 33) % n);
}

static void churn(struct tux3_volume *vol, tux3_ino_t dir, unsigned steps)
{
	char a[80], b[80];
	tux3_ino_t ino;
	for (unsigned s = 0; s < steps; s++) {
		unsigned i = rnd(N), la = name_of(a, i, gen[i]);
		if (!live[i]) {
			CHECK_EQ(tux3_create(vol, dir, a, la, 0644, 0, 0,
					     &ino), 0);
			live[i] = true;
		} else if (rnd(2)) {
			CHECK_EQ(tux3_unlink(vol, dir, a, la), 0);
			live[i] = false;
		} else {
			unsigned lb = name_of(b, i, gen[i] + 1);
			CHECK_EQ(tux3_rename(vol, dir, a, la, dir, b, lb, 0), 0);
			gen[i]++;
		}
	}
}

static uint64_t cold_reads(const char *path, tux3_ino_t dir, unsigned i)
{
	struct tux3_volume *vol = open_mode(path, TUX3_OPEN_RDONLY);
	char name[80];
	unsigned len = name_of(name, i, gen[i]);
	tux3_ino_t ino;
	uint64_t before = vol->dir_block_reads;
	CHECK_EQ(tux3_lookup(vol, dir, name, len, &ino),
		 live[i] ? 0 : -ENOENT);
	uint64_t n = vol->dir_block_reads - before;
	CHECK_EQ(tux3_umount(vol), 0);
	return n;
}

/* Break the seal as a foreign commit does: the record's logchain copy
 * no longer matches (the record's own CRC made good again). */
static void break_seal(const char *path)
{
	int fd = open(path, O_RDWR);
	uint8_t r[512];
	CHECK(pread(fd, r, 512, 4608) == 512);
	r[127] ^= 1;
	put_be32(r + 508, tux3_crc32c(0, r, 508));
	CHECK(pwrite(fd, r, 512, 4608) == 512);
	close(fd);
}

static void indexed_run(unsigned bits)
{
	const char *path = indexed_volume(bits, 256ull << 20);
	struct tux3_volume *vol = open_mode(path, TUX3_OPEN_RDWR);
	tux3_ino_t dir;
	CHECK_EQ(tux3_mkdir(vol, ROOT, "big", 3, 0755, 0, 0, &dir), 0);
	memset(gen, 0, sizeof(gen));
	memset(live, 0, sizeof(live));
	churn(vol, dir, SANITIZER_SHARE(N * 2, 6));
	CHECK_EQ(tux3_sync(vol), 0);
	check_all(vol, dir, true);
	churn(vol, dir, SANITIZER_SHARE(N, 6));
	check_all(vol, dir, true);
	CHECK_EQ(tux3_umount(vol), 0);
	fsck_clean(path);

	/* cold: root, table block, bucket, entry block */
	uint64_t most = 0;
	for (unsigned i = 0; i < 200; i++) {
		uint64_t n = cold_reads(path, dir, rnd(N));
		most = n > most ? n : most;
	}
	printf("  %u-byte blocks: at most %llu directory blocks read by a "
	       "cold lookup\n", 1u << bits, (unsigned long long)most);
	CHECK(most <= 5);

	/* a cold create: the lookup, the last block, the index's path;
	 * not the whole directory to find a hole (it was hundreds) */
	most = 0;
	for (unsigned i = 0; i < 20; i++) {
		vol = open_mode(path, TUX3_OPEN_RDWR);
		char name[40];
		unsigned len = (unsigned)sprintf(name, "cold-create-%u", i);
		tux3_ino_t ino, found;
		uint64_t before = vol->dir_block_reads;
		CHECK_EQ(tux3_create(vol, dir, name, len, 0644, 0, 0, &ino), 0);
		uint64_t n = vol->dir_block_reads - before;
		most = n > most ? n : most;
		CHECK_EQ(tux3_umount(vol), 0);
		vol = open_mode(path, TUX3_OPEN_RDONLY);
		CHECK_EQ(tux3_lookup(vol, dir, name, len, &found), 0);
		CHECK_EQ(found, ino);
		CHECK_EQ(tux3_umount(vol), 0);
	}
	printf("  %u-byte blocks: at most %llu directory blocks read by a "
	       "cold create\n", 1u << bits, (unsigned long long)most);
	CHECK(most <= 12);
	fsck_clean(path);

	/* a foreign commit: every index stale, lookups still right */
	break_seal(path);
	fsck_clean(path);	/* stale is not damage: nothing uses it */
	vol = open_mode(path, TUX3_OPEN_RDONLY);
	check_all(vol, dir, false);
	CHECK_EQ(tux3_umount(vol), 0);
	vol = open_mode(path, TUX3_OPEN_RDWR);
	churn(vol, dir, 10);	/* a create or unlink rebuilds it */
	check_all(vol, dir, true);
	CHECK_EQ(tux3_umount(vol), 0);
	vol = open_mode(path, TUX3_OPEN_RDONLY);
	check_all(vol, dir, true);
	CHECK_EQ(tux3_umount(vol), 0);
	fsck_clean(path);
}

TEST(indexed_1k)
{
	indexed_run(10);
}

TEST(indexed_4k)
{
	indexed_run(12);
}

int main(void)
{
	return run_tests("dirhash");
}

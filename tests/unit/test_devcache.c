/* Layer: devcache.c -- the device's block cache, write-through and
 * write-back. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include "fixtures.h"

#define BITS 12
#define BS (1u << BITS)
#define NBLOCKS 64

/* A scratch file of NBLOCKS blocks of random bytes, opened read-write,
 * and the model of its contents. */
static void open_random_device(struct device *dev, uint8_t *model)
{
	int fd = scratch_create();
	for (size_t i = 0; i < (size_t)NBLOCKS * BS; i++)
		model[i] = (uint8_t)rand();
	CHECK(write(fd, model, (size_t)NBLOCKS * BS) ==
	      (ssize_t)NBLOCKS * BS);
	close(fd);
	char err[300];
	CHECK_EQ(dev_open(dev, scratch_path(), true, err, sizeof(err)), 0);
}

static bool block_is(struct device *dev, uint64_t block, const uint8_t *want)
{
	uint8_t buf[BS];
	CHECK_EQ(dev_pread(dev, buf, BS, block << BITS), 0);
	return !memcmp(buf, want, BS);
}

/* Random block reads, multi-block reads and writes of any alignment: every
 * read equals the model, with the cache far smaller than the device. */
TEST(coherent_under_random_io)
{
	static uint8_t model[NBLOCKS * BS], buf[NBLOCKS * BS];
	struct device dev;
	srand(7);
	open_random_device(&dev, model);
	CHECK_EQ(dev_cache_enable(&dev, BITS, 8), 0);
	for (int step = 0; step < 20000; step++) {
		unsigned op = (unsigned)rand() % 4;
		uint64_t block = (unsigned)rand() % NBLOCKS;
		if (op <= 1) {		/* one block, as metadata is read */
			CHECK(block_is(&dev, block, model + block * BS));
		} else if (op == 2) {	/* a range, as file data is read */
			size_t off = (unsigned)rand() % (NBLOCKS * BS - 1);
			size_t len = 1 + (unsigned)rand() %
				     (NBLOCKS * BS - off);
			if (len > 3 * BS)
				len = 3 * BS;
			CHECK_EQ(dev_pread(&dev, buf, len, off), 0);
			CHECK(!memcmp(buf, model + off, len));
		} else {		/* a write of any size and alignment */
			size_t off = (unsigned)rand() % (NBLOCKS * BS - 1);
			size_t len = 1 + (unsigned)rand() % (3 * BS);
			if (off + len > NBLOCKS * BS)
				len = NBLOCKS * BS - off;
			for (size_t i = 0; i < len; i++)
				buf[i] = (uint8_t)rand();
			CHECK_EQ(dev_pwrite(&dev, buf, len, off), 0);
			memcpy(model + off, buf, len);
		}
	}
	uint64_t hits, misses;
	dev_cache_stats(&dev, &hits, &misses);
	CHECK(hits > 0 && misses > 0);
	/* a write longer than the cache visits its slots, not the range */
	CHECK_EQ(dev_pwrite(&dev, model, (size_t)NBLOCKS * BS, 0), 0);
	for (uint64_t b = 0; b < NBLOCKS; b++)
		CHECK(block_is(&dev, b, model + b * BS));
	dev_close(&dev);
}

/* The least recently used block goes first; a hit makes a block recent. */
TEST(evicts_least_recently_used)
{
	static uint8_t model[NBLOCKS * BS];
	struct device dev;
	uint64_t hits, misses;
	open_random_device(&dev, model);
	CHECK_EQ(dev_cache_enable(&dev, BITS, 4), 0);
	for (uint64_t b = 0; b < 4; b++)
		CHECK(block_is(&dev, b, model + b * BS));
	CHECK(block_is(&dev, 0, model));		/* hit: 0 is recent */
	CHECK(block_is(&dev, 4, model + 4 * BS));	/* evicts 1 */
	dev_cache_stats(&dev, &hits, &misses);
	CHECK_EQ(hits, 1);
	CHECK_EQ(misses, 5);
	CHECK(block_is(&dev, 0, model));		/* still there */
	dev_cache_stats(&dev, &hits, &misses);
	CHECK_EQ(hits, 2);
	CHECK(block_is(&dev, 1, model + BS));		/* gone */
	dev_cache_stats(&dev, &hits, &misses);
	CHECK_EQ(misses, 6);
	dev_close(&dev);
}

/* Sizes the cache cannot take are refused, not looped on or overflowed. */
TEST(refuses_impossible_sizes)
{
	static uint8_t model[NBLOCKS * BS];
	struct device dev;
	open_random_device(&dev, model);
	CHECK_EQ(dev_cache_enable(&dev, BITS, UINT32_MAX - 1), -ENOMEM);
	CHECK(dev.cache == NULL);
	CHECK_EQ(dev_cache_enable(&dev, 8, 16), -EINVAL);
	CHECK_EQ(dev_cache_enable(&dev, BITS, 0), 0);	/* off */
	CHECK(dev.cache == NULL);
	CHECK(block_is(&dev, 1, model + BS));
	dev_close(&dev);
}

/* A write that fails leaves no cached copy of what it touched: the
 * device may hold the old bytes or part of the new. */
TEST(failed_write_drops_blocks)
{
	static uint8_t model[NBLOCKS * BS];
	uint8_t fresh[BS];
	struct device dev;
	uint64_t hits, misses;
	open_random_device(&dev, model);
	CHECK_EQ(dev_cache_enable(&dev, BITS, 16), 0);
	CHECK(block_is(&dev, 3, model + 3 * BS));
	/* the descriptor swapped for a read-only one: pwrite fails */
	int rw = dev.fd;
	dev.fd = open(scratch_path(), O_RDONLY);
	CHECK(dev.fd >= 0);
	memset(fresh, 0x5a, sizeof(fresh));
	CHECK_EQ(dev_pwrite(&dev, fresh, BS, 3 * BS), -EBADF);
	close(dev.fd);
	dev.fd = rw;
	dev_cache_stats(&dev, &hits, &misses);
	CHECK(block_is(&dev, 3, model + 3 * BS));	/* read again */
	uint64_t misses2;
	dev_cache_stats(&dev, &hits, &misses2);
	CHECK_EQ(misses2, misses + 1);
	/* a partial-block write drops the block; a whole one updates it */
	CHECK(block_is(&dev, 5, model + 5 * BS));
	CHECK_EQ(dev_pwrite(&dev, fresh, 100, 5 * BS + 7), 0);
	memcpy(model + 5 * BS + 7, fresh, 100);
	CHECK(block_is(&dev, 5, model + 5 * BS));
	CHECK_EQ(dev_pwrite(&dev, fresh, BS, 5 * BS), 0);
	dev_cache_stats(&dev, &hits, &misses);
	CHECK(block_is(&dev, 5, fresh));
	dev_cache_stats(&dev, &hits, &misses2);
	CHECK_EQ(misses2, misses);			/* a hit */
	dev_close(&dev);
}

/* One workload of namespace, data and xattr changes with commits. */
static void workload(struct tux3_volume *vol)
{
	tux3_ino_t dir, ino;
	char name[32], data[5000];
	memset(data, 'd', sizeof(data));
	CHECK_EQ(tux3_mkdir(vol, TUX3_ROOT_INO, "d", 1, 0755, 0, 0, &dir), 0);
	for (int i = 0; i < 400; i++) {
		snprintf(name, sizeof(name), "file-%d", i);
		CHECK_EQ(tux3_create(vol, dir, name, strlen(name), 0644, 0, 0,
				     &ino), 0);
		CHECK_EQ(tux3_write(vol, ino, data, (size_t)(i * 13) % 5000,
				    0), (i * 13) % 5000);
		snprintf(name, sizeof(name), "user.n%d", i % 7);
		CHECK_EQ(tux3_setxattr(vol, ino, name, "v", 1, 0), 0);
		if (i % 100 == 99)
			CHECK_EQ(tux3_sync(vol), 0);
	}
	for (int i = 0; i < 400; i += 3) {
		snprintf(name, sizeof(name), "file-%d", i);
		CHECK_EQ(tux3_unlink(vol, dir, name, strlen(name)), 0);
	}
	CHECK_EQ(tux3_rename(vol, dir, "file-1", 6, TUX3_ROOT_INO, "moved", 5,
			     0), 0);
}

static void run_workload(const char *path, size_t cache)
{
	struct tux3_volume *vol;
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDWR, &vol), 0);
	tux3_set_time(vol, 1000);
	CHECK_EQ(tux3_set_cache(vol, cache), 0);
	workload(vol);
	if (cache) {
		uint64_t hits, misses;
		tux3_cache_stats(vol, &hits, &misses);
		CHECK(hits > misses);
	}
	CHECK_EQ(tux3_umount(vol), 0);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	CHECK(fd >= 0 && fstat(fd, &st) == 0);
	uint8_t *buf = malloc((size_t)st.st_size);
	CHECK(buf);
	CHECK(read(fd, buf, (size_t)st.st_size) == st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

/* The cache changes no byte the library writes: the same workload with a
 * small cache (evicting all along) and with none makes the same image. */
TEST(volume_same_with_and_without_cache)
{
	size_t len_a, len_b;
	scratch_volume(12, 16 << 20, 0);
	run_workload(scratch_path(), 0);
	uint8_t *a = slurp(scratch_path(), &len_a);
	scratch_volume(12, 16 << 20, 0);
	run_workload(scratch_path(), 64 << 12);
	uint8_t *b = slurp(scratch_path(), &len_b);
	CHECK_EQ(len_a, len_b);
	CHECK(!memcmp(a, b, len_a));
	free(a);
	free(b);
}

/* What the file itself holds at block, read past the device. */
static bool on_disk_is(uint64_t block, const uint8_t *want)
{
	uint8_t buf[BS];
	int fd = open(scratch_path(), O_RDONLY);
	CHECK(fd >= 0);
	CHECK(pread(fd, buf, BS, (off_t)(block << BITS)) == BS);
	close(fd);
	return !memcmp(buf, want, BS);
}

/* A random device with a write-back cache of nslot blocks. */
static void open_writeback_device(struct device *dev, uint8_t *model,
				  uint32_t nslot)
{
	open_random_device(dev, model);
	CHECK_EQ(dev_cache_set_writeback(dev, true), -EINVAL);	/* no cache */
	CHECK_EQ(dev_cache_enable(dev, BITS, nslot), 0);
	CHECK_EQ(dev_cache_set_writeback(dev, true), 0);
}

static unsigned writes_seen;
static void count_writes(void *ctx, uint64_t off, size_t len)
{
	(void)ctx;
	(void)off;
	(void)len;
	writes_seen++;
}

/* Write-back: every read through the device equals the model under
 * random reads and writes of any alignment, while the file lags behind;
 * after a flush the file is the model. */
TEST(writeback_coherent_under_random_io)
{
	static uint8_t model[NBLOCKS * BS], buf[NBLOCKS * BS], disk[NBLOCKS * BS];
	struct device dev;
	srand(11);
	open_writeback_device(&dev, model, 8);
	unsigned lagging = 0;
	for (int step = 0; step < 8000; step++) {
		unsigned op = (unsigned)rand() % 5;
		uint64_t block = (unsigned)rand() % NBLOCKS;
		if (op == 0) {
			CHECK(block_is(&dev, block, model + block * BS));
		} else if (op == 1) {
			size_t off = (unsigned)rand() % (NBLOCKS * BS - 1);
			size_t len = 1 + (unsigned)rand() %
				     (NBLOCKS * BS - off);
			if (len > 3 * BS)
				len = 3 * BS;
			CHECK_EQ(dev_pread(&dev, buf, len, off), 0);
			CHECK(!memcmp(buf, model + off, len));
		} else if (op <= 3) {	/* whole blocks: kept */
			size_t n = 1 + (unsigned)rand() % 2;
			if (block + n > NBLOCKS)
				n = 1;
			for (size_t i = 0; i < n * BS; i++)
				buf[i] = (uint8_t)rand();
			CHECK_EQ(dev_pwrite(&dev, buf, n * BS, block << BITS),
				 0);
			memcpy(model + (block << BITS), buf, n * BS);
			lagging += !on_disk_is(block, buf);
		} else {		/* any size and alignment */
			size_t off = (unsigned)rand() % (NBLOCKS * BS - 1);
			size_t len = 1 + (unsigned)rand() % (3 * BS);
			if (off + len > NBLOCKS * BS)
				len = NBLOCKS * BS - off;
			for (size_t i = 0; i < len; i++)
				buf[i] = (uint8_t)rand();
			CHECK_EQ(dev_pwrite(&dev, buf, len, off), 0);
			memcpy(model + off, buf, len);
		}
	}
	CHECK(lagging > 500);	/* the writes were held back */
	CHECK_EQ(dev_flush(&dev), 0);
	CHECK_EQ(dev_cache_dirty(&dev), 0u);
	int fd = open(scratch_path(), O_RDONLY);
	CHECK(read(fd, disk, sizeof(disk)) == (ssize_t)sizeof(disk));
	close(fd);
	CHECK(!memcmp(disk, model, sizeof(disk)));
	dev_close(&dev);
}

/* A block rewritten again and again stays in memory; blocks written one
 * after another go out together, as one vectored write per run. */
TEST(writeback_gathers_runs)
{
	static uint8_t model[NBLOCKS * BS];
	uint8_t b[BS];
	struct device dev;
	open_writeback_device(&dev, model, 16);
	dev.on_write = count_writes;
	writes_seen = 0;
	for (unsigned i = 0; i < 48; i++) {
		memset(b, (int)i, BS);
		CHECK_EQ(dev_pwrite(&dev, b, BS, (uint64_t)(i + 8) << BITS), 0);
		memset(b, 0x77 + (int)i, BS);	/* the directory block */
		CHECK_EQ(dev_pwrite(&dev, b, BS, 2ull << BITS), 0);
		CHECK(block_is(&dev, 2, b));
	}
	/* 48 data blocks through 15 free slots: a few runs, no rewrites
	 * of block 2 */
	CHECK(writes_seen >= 2 && writes_seen <= 4);
	CHECK(!on_disk_is(2, b));
	CHECK_EQ(dev_flush(&dev), 0);
	CHECK(on_disk_is(2, b));
	for (unsigned i = 0; i < 48; i++) {
		memset(b, (int)i, BS);
		CHECK(on_disk_is(i + 8, b));
	}
	/* turned off, nothing is held */
	CHECK_EQ(dev_pwrite(&dev, b, BS, 60ull << BITS), 0);
	CHECK_EQ(dev_cache_set_writeback(&dev, false), 0);
	CHECK(on_disk_is(60, b));
	CHECK_EQ(dev_pwrite(&dev, model, BS, 61ull << BITS), 0);
	CHECK(on_disk_is(61, model));
	dev.on_write = NULL;
	dev_close(&dev);
}

/* A write-back that fails is reported, by the write that forced it or by
 * the next flush, and its blocks leave the cache (reads then see what
 * the device holds); nothing is lost silently. */
TEST(writeback_failure_is_reported)
{
	static uint8_t model[NBLOCKS * BS];
	uint8_t b[BS];
	struct device dev;
	open_writeback_device(&dev, model, 4);
	memset(b, 0x3c, BS);
	CHECK_EQ(dev_pwrite(&dev, b, BS, 1ull << BITS), 0);
	int rw = dev.fd;
	dev.fd = open(scratch_path(), O_RDONLY);
	CHECK(dev.fd >= 0);
	CHECK_EQ(dev_flush(&dev), -EBADF);
	CHECK_EQ(dev_cache_dirty(&dev), 0u);
	CHECK(block_is(&dev, 1, model + BS));	/* the device's bytes */
	/* eviction by a read's fill: reported at the next flush */
	CHECK_EQ(dev_pwrite(&dev, b, BS, 2ull << BITS), 0);
	for (uint64_t k = 10; k < 14; k++)
		CHECK(block_is(&dev, k, model + k * BS));
	close(dev.fd);
	dev.fd = rw;
	CHECK_EQ(dev_flush(&dev), -EBADF);
	CHECK_EQ(dev_flush(&dev), 0);
	/* two runs apart, the device failing: turning write-back off
	 * tries both and leaves neither in the cache as if written */
	CHECK_EQ(dev_pwrite(&dev, b, BS, 20ull << BITS), 0);
	CHECK_EQ(dev_pwrite(&dev, b, BS, 30ull << BITS), 0);
	dev.fd = open(scratch_path(), O_RDONLY);
	CHECK(dev.fd >= 0);
	CHECK_EQ(dev_cache_set_writeback(&dev, false), -EBADF);
	CHECK_EQ(dev_cache_dirty(&dev), 0u);
	CHECK(block_is(&dev, 20, model + 20 * BS));
	CHECK(block_is(&dev, 30, model + 30 * BS));
	close(dev.fd);
	dev.fd = rw;
	dev_close(&dev);
}

/* Lazy commits write through a write-back cache of their own: the image
 * is the same byte for byte as with commits that flush, and the umount
 * leaves nothing behind. */
static void run_lazy_workload(const char *path, int lazy)
{
	struct tux3_volume *vol;
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDWR, &vol), 0);
	tux3_set_time(vol, 1000);
	CHECK_EQ(tux3_set_lazy_commits(vol, lazy), 0);
	workload(vol);
	/* lazy: blocks are held past the commits; else none ever is */
	CHECK_EQ(dev_cache_dirty(&vol->dev) > 0, lazy != 0);
	CHECK_EQ(tux3_umount(vol), 0);
}

TEST(lazy_commits_same_image)
{
	size_t len_a, len_b;
	scratch_volume(12, 16 << 20, 0);
	run_lazy_workload(scratch_path(), 0);
	uint8_t *a = slurp(scratch_path(), &len_a);
	scratch_volume(12, 16 << 20, 0);
	run_lazy_workload(scratch_path(), 1);
	uint8_t *b = slurp(scratch_path(), &len_b);
	CHECK_EQ(len_a, len_b);
	CHECK(!memcmp(a, b, len_a));
	free(a);
	free(b);
}

int main(void)
{
	return run_tests("devcache");
}

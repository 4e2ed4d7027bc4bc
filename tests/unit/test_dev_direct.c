/* Layer: dev_direct.c -- long writes past the page cache, written
 * behind the caller. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include "fixtures.h"

#define DEV_BYTES (8u << 20)

static void random_bytes(uint8_t *b, size_t len)
{
	uint64_t x = (uint64_t)rand() << 32 | (unsigned)rand() | 1;
	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		b[i] = (uint8_t)(x >> 24);
	}
}

/* A scratch file of random bytes, opened read-write with direct writes
 * on (the case is skipped where the scratch directory's filesystem
 * takes no direct I/O), and its model. */
static void open_direct_device(struct device *dev, uint8_t *model)
{
	int fd = scratch_create();
	random_bytes(model, DEV_BYTES);
	CHECK(write(fd, model, DEV_BYTES) == (ssize_t)DEV_BYTES);
	close(fd);
	char err[300];
	CHECK_EQ(dev_open(dev, scratch_path(), true, err, sizeof(err)), 0);
	int e = dev_set_direct(dev, true);
	if (e == -EINVAL) {
		dev_close(dev);
		SKIP("the scratch filesystem takes no direct I/O");
	}
	CHECK_EQ(e, 0);
	CHECK_EQ(dev_set_direct(dev, true), 0);	/* already on */
}


static void file_is(const uint8_t *model)
{
	static uint8_t disk[DEV_BYTES];
	int fd = open(scratch_path(), O_RDONLY);
	CHECK(fd >= 0);
	CHECK(pread(fd, disk, DEV_BYTES, 0) == (ssize_t)DEV_BYTES);
	close(fd);
	CHECK(!memcmp(disk, model, DEV_BYTES));
}

/* Long aligned writes (queued), short or unaligned ones (through the
 * page cache) and reads of any range, overlapping at random: every read
 * equals the model, and after a flush so does the file. */
TEST(coherent_under_random_io)
{
	static uint8_t model[DEV_BYTES], buf[1u << 21];
	struct device dev;
	srand(5);
	open_direct_device(&dev, model);
	int steps = SANITIZER_SHARE(1000, 4);
	for (int step = 0; step < steps; step++) {
		unsigned op = (unsigned)rand() % 4;
		size_t off, len;
		if (op <= 1) {		/* long and aligned: queued */
			len = (16 + (unsigned)rand() % 241) * 4096;
			off = ((unsigned)rand() % (DEV_BYTES / 4096)) * 4096;
		} else {		/* any size and place */
			len = 1 + (unsigned)rand() % (300u << 10);
			off = (unsigned)rand() % DEV_BYTES;
		}
		if (off + len > DEV_BYTES)
			len = DEV_BYTES - off;
		if (op == 3) {
			CHECK_EQ(dev_pread(&dev, buf, len, off), 0);
			CHECK(!memcmp(buf, model + off, len));
			continue;
		}
		random_bytes(buf, len);
		/* two pieces, as the write-back cache hands over a run */
		struct iovec v[2] = {
			{ buf, len / 2 & ~(size_t)4095 },
			{ buf + (len / 2 & ~(size_t)4095),
			  len - (len / 2 & ~(size_t)4095) },
		};
		CHECK_EQ(dev_write_iov(&dev, v, 2, off), 0);
		memcpy(model + off, buf, len);
	}
	CHECK(dev.direct_writes > (uint64_t)steps / 4);
	CHECK_EQ(dev_flush(&dev), 0);
	file_is(model);
	CHECK_EQ(dev_set_direct(&dev, false), 0);
	CHECK(!dev.direct);
	dev_close(&dev);
}

/* A queued write that fails is reported once, by the next write, wait
 * or flush that finds it, not lost: here the file may not grow past its
 * size (RLIMIT_FSIZE), and a write past the end is refused with EFBIG
 * on the writer's thread. */
TEST(failure_is_reported)
{
	static uint8_t model[DEV_BYTES], buf[256 << 10];
	struct device dev;
	struct rlimit was, lim;
	srand(6);
	open_direct_device(&dev, model);
	CHECK_EQ(getrlimit(RLIMIT_FSIZE, &was), 0);
	signal(SIGXFSZ, SIG_IGN);
	lim = was;
	lim.rlim_cur = DEV_BYTES;
	CHECK_EQ(setrlimit(RLIMIT_FSIZE, &lim), 0);
	random_bytes(buf, sizeof(buf));
	struct iovec v = { buf, sizeof(buf) };
	CHECK_EQ(dev_write_iov(&dev, &v, 1, DEV_BYTES), 0);	/* queued */
	CHECK_EQ(dev_flush(&dev), -EFBIG);
	CHECK_EQ(dev_flush(&dev), 0);			/* reported once */
	CHECK_EQ(dev_write_iov(&dev, &v, 1, DEV_BYTES), 0);
	CHECK_EQ(dev_set_direct(&dev, false), -EFBIG);	/* at the end */
	CHECK_EQ(setrlimit(RLIMIT_FSIZE, &was), 0);
	/* what was queued before the failure reached the file */
	CHECK_EQ(dev_set_direct(&dev, true), 0);
	CHECK_EQ(dev_write_iov(&dev, &v, 1, 0), 0);
	memcpy(model, buf, sizeof(buf));
	CHECK_EQ(dev_set_direct(&dev, false), 0);
	file_is(model);
	dev_close(&dev);
}

int main(void)
{
	return run_tests("dev_direct");
}

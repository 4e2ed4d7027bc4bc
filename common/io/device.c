/*
 * Device layer: an image file or a block device, opened read-only or
 * read-write, always under a lock so that two writers, or a writer and a
 * reader, never share a volume.  A read-only device is opened O_RDONLY,
 * so no code path can write to it.  The one exception, fsck repairing a
 * volume mounted read-only (TUX3_OPEN_SHARED_LOCK), is built on top of a
 * read-only open in volume.c (dev_write_shared): that writer holds the
 * shared lock like its read-only user, plus an OFD lock against a second
 * such writer.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/uio.h>
#include <unistd.h>
#include "io/io.h"

/* systemd-udevd holds a shared lock on a block device while it handles an
 * event of it, such as the change event that follows every close after a
 * write (an unmount, a repair): a mount right after one would find the
 * volume in use.  udev lets go within milliseconds, a tool that has the
 * volume open does not, so a block device's lock is tried again for up
 * to this long before the volume is said to be in use. */
#define DEV_LOCK_WAIT_MS 3000
#define DEV_LOCK_POLL_MS 10

static int dev_lock(struct device *dev, bool write, char *err, size_t errlen)
{
	int op = (write ? LOCK_EX : LOCK_SH) | LOCK_NB;
	int tries = dev->blockdev ? DEV_LOCK_WAIT_MS / DEV_LOCK_POLL_MS : 0;
	while (flock(dev->fd, op) < 0) {
		if (errno != EWOULDBLOCK || tries-- <= 0)
			goto refused;
		struct timespec pause = { 0, DEV_LOCK_POLL_MS * 1000000L };
		nanosleep(&pause, NULL);
	}
	return 0;
refused:;
	int e = errno;
	if (e == EWOULDBLOCK) {
		snprintf(err, errlen, "%s: volume is in use (%s lock held by "
			 "another process)", dev->path,
			 write ? "a" : "an exclusive");
		return -EBUSY;
	}
	snprintf(err, errlen, "%s: cannot lock: %s", dev->path, strerror(e));
	return -e;
}

int dev_open(struct device *dev, const char *path, bool write, char *err,
	     size_t errlen)
{
	struct stat st;
	int flags = (write ? O_RDWR : O_RDONLY) | O_CLOEXEC;

	memset(dev, 0, sizeof(*dev));
	dev->fd = -1;
	if (stat(path, &st) < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	dev->blockdev = S_ISBLK(st.st_mode);
	if (!dev->blockdev && !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file or block device",
			 path);
		return -ENODEV;
	}
	/* O_EXCL on a block device fails while anything (a mount, another
	 * writer) holds it open exclusively. */
	if (dev->blockdev && write)
		flags |= O_EXCL;
	dev->fd = open(path, flags);
	if (dev->fd < 0) {
		int e = errno;
		if (e == EBUSY)
			snprintf(err, errlen, "%s: device is busy (mounted or "
				 "in use)", path);
		else
			snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	dev->path = strdup(path);
	if (!dev->path) {
		close(dev->fd);
		dev->fd = -1;
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	dev->readonly = !write;
	int rc = dev_lock(dev, write, err, errlen);
	if (rc < 0)
		goto fail;
	if (dev->blockdev) {
		uint64_t bytes;
		if (ioctl(dev->fd, BLKGETSIZE64, &bytes) < 0) {
			rc = -errno;
			snprintf(err, errlen, "%s: cannot get size: %s", path,
				 strerror(errno));
			goto fail;
		}
		dev->size = bytes;
	} else {
		dev->size = (uint64_t)st.st_size;
	}
	return 0;
fail:
	dev_close(dev);
	return rc;
}

void dev_close(struct device *dev)
{
	dev_cache_disable(dev);
	dev_set_direct(dev, false);
	if (dev->fd >= 0)
		close(dev->fd);	/* drops the lock */
	dev->fd = -1;
	free(dev->path);
	dev->path = NULL;
}

/* A read that took longer than this waited for the device, not the
 * page cache (a cached 4 KiB read takes a few microseconds, a device
 * read from tens to thousands).  When a quarter of a window of reads
 * waited, the cache is cold and readahead is on for good; a warm
 * cache on a loaded machine has a read preempted now and then, far
 * fewer. */
#define DEV_SLOW_READ_NS 50000
#define DEV_READ_WINDOW 64
#define DEV_SLOW_READS (DEV_READ_WINDOW / 4)

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void count_read(struct device *dev, int64_t ns)
{
	dev->slow_reads += ns > DEV_SLOW_READ_NS;
	if (++dev->window_reads < DEV_READ_WINDOW)
		return;
	if (dev->slow_reads >= DEV_SLOW_READS)
		dev->readahead_on = true;
	dev->window_reads = dev->slow_reads = 0;
}

int dev_pread(struct device *dev, void *buf, size_t len, uint64_t off)
{
	if (dev->cache) {
		if (dev_cache_read(dev, buf, len, off))
			return 0;
		int err = dev_cache_writeback(dev, off, len);
		if (err)
			return err;
	}
	if (dev->direct) {
		int err = dev_direct_wait(dev, off, len);
		if (err)
			return err;
	}
	uint8_t *p = buf;
	const uint64_t off0 = off;
	const size_t len0 = len;
	int64_t t0 = dev->readahead_on ? 0 : now_ns();
	dev->reads++;
	while (len) {
		ssize_t n = pread(dev->fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;	/* past the end of the device */
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	if (dev->cache)
		dev_cache_fill(dev, buf, len0, off0);
	if (!dev->readahead_on)
		count_read(dev, now_ns() - t0);
	return 0;
}

static void record_iov(struct device *dev, const struct iovec *iov, int n,
		       uint64_t off)
{
	for (int k = 0; k < n; off += iov[k].iov_len, k++)
		rec_write(dev->rec, off, iov[k].iov_base, iov[k].iov_len,
			  false);
}

/* Write iov[0, n) at off on the device itself, past the cache: the test
 * hook sees it before, the recorder after, as it was issued. */
int dev_write_iov(struct device *dev, const struct iovec *iov, int n,
		  uint64_t off)
{
	size_t total = 0, done = 0;	/* done: bytes of iov[i] written */
	uint64_t at = off;
	int i = 0;
	for (int k = 0; k < n; k++)
		total += iov[k].iov_len;
	if (dev->on_write)
		dev->on_write(dev->hook_ctx, off, total);
	if (dev->direct) {
		int d = dev_direct_write(dev, iov, n, off, total);
		if (d <= 0) {
			if (!d && dev->rec)
				record_iov(dev, iov, n, off);
			return d;
		}
		/* not taken: no direct write in flight overlaps it now */
	}
	while (i < n) {
		ssize_t w;
		if (!iov[i].iov_len) {
			i++;
			continue;
		}
		if (!done && n - i > 1)
			w = pwritev(dev->fd, iov + i, n - i, (off_t)at);
		else
			w = pwrite(dev->fd, (const uint8_t *)iov[i].iov_base +
				   done, iov[i].iov_len - done, (off_t)at);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		at += (uint64_t)w;
		for (size_t left = (size_t)w; left && i < n; ) {
			size_t rest = iov[i].iov_len - done;
			size_t step = left < rest ? left : rest;
			done += step;
			left -= step;
			if (done == iov[i].iov_len) {
				i++;
				done = 0;
			}
		}
	}
	if (dev->rec)
		record_iov(dev, iov, n, off);
	return 0;
}

int dev_pwrite(struct device *dev, const void *buf, size_t len, uint64_t off)
{
	if (dev->readonly)
		return -EROFS;	/* belt and braces: the fd is O_RDONLY too */
	node_memo_forget_bytes(dev->memo, off, len);
	if (dev->cache) {
		/* kept in a write-back cache, or what it covers written
		 * back first */
		int kept = dev_cache_absorb(dev, buf, len, off);
		if (kept)
			return kept < 0 ? kept : 0;
	}
	struct iovec v = { .iov_base = (void *)buf, .iov_len = len };
	int err = dev_write_iov(dev, &v, 1, off);
	if (dev->cache)	/* after a failure the device may hold either */
		dev_cache_write(dev, err ? NULL : buf, len, off);
	return err;
}

/* Start reading [off, off + len) into the host's page cache, without
 * waiting: a walk that knows which blocks it reads next overlaps their
 * I/O with its work on the ones it has.  A hint, given once reads have
 * been seen to wait for the device (dev_pread); errors are of no
 * consequence (the read itself reports them). */
void dev_readahead(struct device *dev, uint64_t off, uint64_t len)
{
	/* on a warm cache every read is a copy: a hint per block would
	 * only add system calls (a tenth of a warm fsck's time); the block
	 * cache reads one block at a time */
	if (!len || !dev->readahead_on || dev->cache)
		return;
	dev->readaheads++;
	(void)posix_fadvise(dev->fd, (off_t)off, (off_t)len,
			    POSIX_FADV_WILLNEED);
}

/* Make everything written so far durable (the commit barrier). */
int dev_flush(struct device *dev)
{
	if (dev->readonly)
		return 0;
	int err = dev_cache_writeback(dev, 0, UINT64_MAX);
	if (!err && dev->direct)
		err = dev_direct_wait(dev, 0, UINT64_MAX);
	if (err)
		return err;
	dev->flushes++;
	if (fdatasync(dev->fd) < 0)
		return -errno;
	if (dev->rec)
		rec_flush(dev->rec);
	return 0;
}

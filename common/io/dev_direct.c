/*
 * Direct writes behind the caller: a bulk load (lazy commits) writes
 * gigabytes that nobody reads back soon.  Through the host's page cache
 * each byte is first copied into a page allocated for it (on a virtual
 * machine often backed by the host only then), which costs more than
 * the device's own write: 4 GiB took 9 s of system time here against
 * 3.3 s on the device with O_DIRECT.  Written synchronously, though,
 * each write waits for the device; so a long aligned write is copied
 * into one of a few staging buffers and written by a thread of the
 * device's own while the caller goes on.
 *
 * Coherence: a queued write is in no cache, so a read of the device,
 * a buffered write or a flush that overlaps it waits for it first
 * (dev_direct_wait, called by device.c).  Writes reach the device in
 * the order they were issued, queued ones in queue order, and one that
 * overlaps a queued write is issued after it.  A failure is kept and
 * returned by the next write, wait or flush, as the write-back cache
 * returns its own (devcache.c).
 *
 * The second descriptor is the same open file (/proc/self/fd), so it
 * cannot name another; fdatasync of the first covers both, being of
 * the inode.  A filesystem that refuses direct I/O (EINVAL) at open
 * leaves the mode off; one that refuses a write has it, and every
 * write after it, go through the page cache.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "io/io.h"

/* Below this a write is left to the page cache: the copy it would save
 * costs less than the staging copy and the hand-over. */
#define DIRECT_MIN (64u << 10)
/* Staging buffers: one being written while the others fill.  A longer
 * write takes several, one after another. */
#define DIRECT_SLOTS 2
#define DIRECT_SLOT_BYTES (256u << 10)

struct direct_slot {
	uint8_t *buf;
	size_t len;
	uint64_t off;
};

struct dev_direct {
	int fd;			/* O_DIRECT, the device's open file */
	int buffered_fd;	/* the device's own, after a refusal */
	unsigned align;		/* of offsets, lengths and memory */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t queued;	/* a slot queued, or stop */
	pthread_cond_t done;	/* a slot written */
	struct direct_slot slot[DIRECT_SLOTS];
	unsigned head, count;	/* the queue: slot[head], ... */
	int err;		/* the first failure not yet reported */
	bool refused;		/* direct I/O refused: buffered from now
				 * (set under the lock; fits() reads it) */
	bool writer_refused;	/* the writer's own copy of it */
	bool stop;
};

/* The alignment a direct write's offset, length and memory need: what
 * the kernel says (statx STATX_DIOALIGN), else the logical sector of a
 * block device, else a page, which every device takes. */
static unsigned direct_alignment(const struct device *dev)
{
#ifdef STATX_DIOALIGN
	struct statx sx;
	if (!statx(dev->fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) &&
	    (sx.stx_mask & STATX_DIOALIGN) && sx.stx_dio_offset_align) {
		unsigned a = sx.stx_dio_offset_align;
		return sx.stx_dio_mem_align > a ? sx.stx_dio_mem_align : a;
	}
#endif
	int sector;
	if (dev->blockdev && !ioctl(dev->fd, BLKSSZGET, &sector) &&
	    sector >= 512)
		return (unsigned)sector;
	return 4096;
}

/* Write one slot whole; returns 0 or -errno. */
static int slot_write(struct dev_direct *d, const struct direct_slot *s)
{
	size_t done = 0;
	while (done < s->len) {
		int fd = d->writer_refused ? d->buffered_fd : d->fd;
		ssize_t w = pwrite(fd, s->buf + done, s->len - done,
				   (off_t)(s->off + done));
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EINVAL && !d->writer_refused) {
			/* the rest, and all after */
			d->writer_refused = true;
			continue;
		}
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		done += (size_t)w;
	}
	return 0;
}

static void *direct_writer(void *arg)
{
	struct dev_direct *d = arg;
	pthread_mutex_lock(&d->lock);
	for (;;) {
		while (!d->count && !d->stop)
			pthread_cond_wait(&d->queued, &d->lock);
		if (!d->count)
			break;
		struct direct_slot *s = &d->slot[d->head];
		pthread_mutex_unlock(&d->lock);
		int err = slot_write(d, s);
		pthread_mutex_lock(&d->lock);
		if (err && !d->err)
			d->err = err;
		d->refused = d->writer_refused;
		d->head = (d->head + 1) % DIRECT_SLOTS;
		d->count--;
		pthread_cond_broadcast(&d->done);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

static bool overlaps_queued(const struct dev_direct *d, uint64_t off,
			    uint64_t len)
{
	for (unsigned k = 0; k < d->count; k++) {
		const struct direct_slot *s =
			&d->slot[(d->head + k) % DIRECT_SLOTS];
		if (off < s->off + s->len && s->off < off + len)
			return true;
	}
	return false;
}

static int take_error(struct dev_direct *d)
{
	int err = d->err;
	d->err = 0;
	return err;
}

int dev_direct_wait(struct device *dev, uint64_t off, uint64_t len)
{
	struct dev_direct *d = dev->direct;
	if (!d)
		return 0;
	if (len > UINT64_MAX - off)
		len = UINT64_MAX - off;
	pthread_mutex_lock(&d->lock);
	while (overlaps_queued(d, off, len))
		pthread_cond_wait(&d->done, &d->lock);
	int err = take_error(d);
	pthread_mutex_unlock(&d->lock);
	return err;
}

static bool fits(const struct dev_direct *d, uint64_t off, size_t total)
{
	return !d->refused && total >= DIRECT_MIN &&
	       !((off | total) & (d->align - 1));
}

/* Wait for a free slot, or (take false) for no queued write to overlap
 * [off, off + len); returns the slot, NULL with *err a failure not yet
 * reported or none (the lock held throughout). */
static struct direct_slot *next_slot(struct dev_direct *d, bool take,
				     uint64_t off, size_t len, int *err)
{
	if (!take)
		while (overlaps_queued(d, off, len))
			pthread_cond_wait(&d->done, &d->lock);
	else
		while (d->count == DIRECT_SLOTS)
			pthread_cond_wait(&d->done, &d->lock);
	*err = take_error(d);
	/* the slot past the queue's end is the caller's until queued: the
	 * writer moves the head only past queued slots */
	return take && !*err ?
		&d->slot[(d->head + d->count) % DIRECT_SLOTS] : NULL;
}

int dev_direct_write(struct device *dev, const struct iovec *iov, int n,
		     uint64_t off, size_t total)
{
	struct dev_direct *d = dev->direct;
	int k = 0, err;
	size_t in = 0;	/* bytes of iov[k] already staged */
	pthread_mutex_lock(&d->lock);
	bool take = fits(d, off, total);
	pthread_mutex_unlock(&d->lock);
	while (total || !take) {
		size_t len = total < DIRECT_SLOT_BYTES ? total :
			     DIRECT_SLOT_BYTES;
		pthread_mutex_lock(&d->lock);
		struct direct_slot *s = next_slot(d, take, off, total, &err);
		pthread_mutex_unlock(&d->lock);
		if (!s)
			return err ? err : 1;
		for (size_t got = 0; got < len && k < n; ) {
			size_t step = iov[k].iov_len - in;
			if (step > len - got)
				step = len - got;
			memcpy(s->buf + got,
			       (const uint8_t *)iov[k].iov_base + in, step);
			got += step;
			in += step;
			if (in == iov[k].iov_len) {
				k++;
				in = 0;
			}
		}
		s->len = len;
		s->off = off;
		pthread_mutex_lock(&d->lock);
		d->count++;
		pthread_cond_signal(&d->queued);
		pthread_mutex_unlock(&d->lock);
		dev->direct_writes++;
		off += len;
		total -= len;
	}
	return 0;
}

static void direct_free(struct dev_direct *d)
{
	for (unsigned k = 0; k < DIRECT_SLOTS; k++)
		free(d->slot[k].buf);
	if (d->fd >= 0)
		close(d->fd);
	free(d);
}

static int direct_stop(struct device *dev)
{
	struct dev_direct *d = dev->direct;
	pthread_mutex_lock(&d->lock);
	d->stop = true;
	pthread_cond_signal(&d->queued);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->thread, NULL);	/* it empties the queue first */
	int err = take_error(d);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->queued);
	pthread_cond_destroy(&d->done);
	direct_free(d);
	dev->direct = NULL;
	return err;
}

static int direct_open(struct device *dev, struct dev_direct *d)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", dev->fd);
	d->fd = open(path, O_WRONLY | O_DIRECT | O_CLOEXEC);
	if (d->fd < 0)
		return -errno;
	struct stat a, b;
	if (fstat(d->fd, &a) || fstat(dev->fd, &b) || a.st_ino != b.st_ino ||
	    a.st_dev != b.st_dev || a.st_rdev != b.st_rdev)
		return -ESTALE;
	d->buffered_fd = dev->fd;
	d->align = direct_alignment(dev);
	if (d->align > 4096 || (d->align & (d->align - 1)))
		return -EINVAL;	/* no staging buffer is aligned for it */
	/* touched now: the mode's memory is the same from the start, not a
	 * cost that appears with the first long write */
	for (unsigned k = 0; k < DIRECT_SLOTS; k++) {
		if (posix_memalign((void **)&d->slot[k].buf, 4096,
				   DIRECT_SLOT_BYTES))
			return -ENOMEM;
		memset(d->slot[k].buf, 0, DIRECT_SLOT_BYTES);
	}
	return 0;
}

int dev_set_direct(struct device *dev, bool on)
{
	if (!on)
		return dev->direct ? direct_stop(dev) : 0;
	if (dev->readonly)
		return -EROFS;
	if (dev->direct)
		return 0;
	struct dev_direct *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->fd = -1;
	int err = direct_open(dev, d);
	if (!err) {
		pthread_mutex_init(&d->lock, NULL);
		pthread_cond_init(&d->queued, NULL);
		pthread_cond_init(&d->done, NULL);
		/* the writer takes no signal: the program's handlers run
		 * on its own threads */
		sigset_t all, was;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &was);
		err = -pthread_create(&d->thread, NULL, direct_writer, d);
		pthread_sigmask(SIG_SETMASK, &was, NULL);
		if (err) {
			pthread_mutex_destroy(&d->lock);
			pthread_cond_destroy(&d->queued);
			pthread_cond_destroy(&d->done);
		}
	}
	if (err) {
		direct_free(d);
		return err;
	}
	dev->direct = d;
	return 0;
}

/*
 * tux3image: write the collected blocks, in block order, either as the
 * compact file (header, runs, trailer; tux3image(8) FILE FORMAT) or as a
 * raw image of the volume's size with only those blocks written.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "image.h"
#include "format/endian.h"

/* The compact file is written through a buffer: a volume's metadata
 * lies in runs of a block or two (an inode-table leaf beside its files'
 * data), and a write per run header and per payload cost a million
 * system calls for a million files. */
#define OUT_BUF_BYTES (256u << 10)

struct out {
	struct image *im;
	int fd;
	uint64_t pos;		/* compact: bytes emitted so far */
	uint64_t seq;
	int created;
	uint8_t *buf;		/* compact: bytes [pos - used, pos) */
	size_t used;
};

static int write_all(int fd, const void *buf, size_t len, uint64_t pos)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)pos);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!n)
			return -EIO;
		p += n;
		pos += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

static int all_zero(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return 0;
	return 1;
}

static int out_flush(struct out *o)
{
	int e = o->used ? write_all(o->fd, o->buf, o->used, o->pos - o->used) : 0;
	o->used = 0;
	return e;
}

/* Append len bytes to the compact file (through the buffer when they
 * fit in it). */
static int out_append(struct out *o, const void *p, size_t len)
{
	int e = 0;
	if (o->used + len > OUT_BUF_BYTES)
		e = out_flush(o);
	if (!e && len > OUT_BUF_BYTES)
		e = write_all(o->fd, p, len, o->pos);
	if (!e && len <= OUT_BUF_BYTES) {
		memcpy(o->buf + o->used, p, len);
		o->used += len;
	}
	if (!e)
		o->pos += len;
	return e;
}

/* One run of the compact file: header, then (data runs) the payload. */
static int emit_compact(struct out *o, uint64_t start, uint64_t count,
			const uint8_t *data)
{
	struct image *im = o->im;
	uint8_t h[IMG_RUN_SIZE] = { 0 };
	size_t bytes = data ? (size_t)(count << im->blockbits) : 0;
	put_be32(h + IMG_R_MAGIC, IMG_RUN_MAGIC);
	put_be32(h + IMG_R_FLAGS, data ? 0 : IMG_RUN_ZERO);
	put_be64(h + IMG_R_START, start);
	put_be32(h + IMG_R_COUNT, (uint32_t)count);
	put_be32(h + IMG_R_DATACRC, data ? tux3_crc32c(0, data, bytes) : 0);
	put_be32(h + IMG_R_SEQ, (uint32_t)o->seq);
	put_be32(h + IMG_RUN_CRC_AT, tux3_crc32c(0, h, IMG_RUN_CRC_AT));
	int e = out_append(o, h, sizeof(h));
	if (!e && bytes)
		e = out_append(o, data, bytes);
	if (e)
		return e;
	o->seq++;
	im->out_runs++;
	im->out_blocks += count;
	if (!data)
		im->out_zero_blocks += count;
	return 0;
}

static int emit_raw(struct out *o, uint64_t start, uint64_t count,
		    const uint8_t *data)
{
	struct image *im = o->im;
	im->out_blocks += count;
	im->out_runs++;
	if (!data) {		/* a hole of the fresh file */
		im->out_zero_blocks += count;
		return 0;
	}
	return write_all(o->fd, data, (size_t)(count << im->blockbits),
			 start << im->blockbits);
}

static int emit(struct out *o, uint64_t start, uint64_t count,
		const uint8_t *data)
{
	return o->im->raw ? emit_raw(o, start, count, data) :
			    emit_compact(o, start, count, data);
}

/* Blocks [start, start + count) read into buf, transformed, and emitted
 * as runs of zero and non-zero blocks.  A block that cannot be read is
 * left out with a warning. */
static int emit_chunk(struct out *o, uint64_t start, uint64_t count,
		      uint8_t *buf)
{
	struct image *im = o->im;
	unsigned bs = im->blocksize;
	size_t len = (size_t)(count << im->blockbits);
	ssize_t n = pread(im->fd, buf, len, (off_t)(start << im->blockbits));
	uint8_t *ok = calloc(count, 1);
	int e = 0;
	if (!ok)
		return -ENOMEM;
	if (n == (ssize_t)len) {
		memset(ok, 1, count);
	} else {
		/* one block at a time, to leave out only the bad ones */
		for (uint64_t i = 0; i < count; i++) {
			n = pread(im->fd, buf + i * bs, bs,
				  (off_t)((start + i) << im->blockbits));
			if (n == (ssize_t)bs) {
				ok[i] = 1;
				continue;
			}
			im->unreadable++;
			image_warn(im, "block %" PRIu64 ": %s: left out of "
				   "the image", start + i, n < 0 ?
				   strerror(errno) : "short read");
		}
	}
	for (uint64_t i = 0; i < count && !e; i++)
		if (ok[i])
			e = image_transform(im, start + i, buf + i * bs);
	uint64_t i = 0;
	while (!e && i < count) {
		if (!ok[i]) {
			i++;
			continue;
		}
		int zero = all_zero(buf + i * bs, bs);
		uint64_t j = i + 1;
		while (j < count && ok[j] && all_zero(buf + j * bs, bs) == zero)
			j++;
		e = emit(o, start + i, j - i, zero ? NULL : buf + i * bs);
		i = j;
	}
	free(ok);
	return e;
}

static int emit_all(struct out *o)
{
	struct image *im = o->im;
	uint64_t max = IMG_RUN_MAX_BYTES >> im->blockbits;
	if (!max)
		max = 1;
	uint8_t *buf = malloc((size_t)(max << im->blockbits));
	int e = 0;
	if (!buf)
		return -ENOMEM;
	uint64_t b = blkmap_next(&im->all, 0);
	while (!e && b < im->volblocks) {
		uint64_t n = 1;
		while (n < max && b + n < im->volblocks &&
		       blkmap_test(&im->all, b + n))
			n++;
		e = emit_chunk(o, b, n, buf);
		b = blkmap_next(&im->all, b + n);
	}
	free(buf);
	return e;
}

static void fill_header(struct out *o, uint8_t *h)
{
	struct image *im = o->im;
	struct timespec ts;
	uint32_t flags = 0;
	memset(h, 0, IMG_HEADER_SIZE);
	if (im->scramble)
		flags |= IMG_F_SCRAMBLED;
	if (im->all_data)
		flags |= IMG_F_DATA;
	if (im->problems)
		flags |= IMG_F_DAMAGED;
	clock_gettime(CLOCK_REALTIME, &ts);
	memcpy(h + IMG_H_MAGIC, IMG_MAGIC, 8);
	put_be32(h + IMG_H_VERSION, IMG_VERSION);
	put_be32(h + IMG_H_HSIZE, IMG_HEADER_SIZE);
	put_be32(h + IMG_H_BLOCKBITS, im->blockbits);
	put_be32(h + IMG_H_FLAGS, flags);
	put_be64(h + IMG_H_VOLBLOCKS, im->volblocks);
	put_be64(h + IMG_H_BLOCKS, im->out_blocks);
	put_be64(h + IMG_H_RUNS, im->out_runs);
	put_be64(h + IMG_H_FILESIZE, o->pos);
	put_be64(h + IMG_H_TIME, (uint64_t)ts.tv_sec * 1000000000ull +
				 (uint64_t)ts.tv_nsec);
	memcpy(h + IMG_H_UUID, im->uuid, 16);
	put_be64(h + IMG_H_DATABLOCKS, im->out_blocks - im->out_zero_blocks);
	put_be32(h + IMG_HEADER_CRC_AT, tux3_crc32c(0, h, IMG_HEADER_CRC_AT));
}

static int write_compact(struct out *o)
{
	struct image *im = o->im;
	uint8_t h[IMG_HEADER_SIZE];
	int e;
	o->pos = IMG_HEADER_SIZE;
	if (!(o->buf = malloc(OUT_BUF_BYTES)))
		return -ENOMEM;
	e = emit_all(o);
	uint8_t t[IMG_TRAILER_SIZE] = { 0 };
	put_be32(t + IMG_T_MAGIC, IMG_TRAILER_MAGIC);
	put_be64(t + IMG_T_RUNS, im->out_runs);
	put_be64(t + IMG_T_BLOCKS, im->out_blocks);
	put_be32(t + IMG_TRAILER_CRC_AT, tux3_crc32c(0, t, IMG_TRAILER_CRC_AT));
	if (!e)
		e = out_append(o, t, sizeof(t));
	if (!e)
		e = out_flush(o);
	free(o->buf);
	o->buf = NULL;
	if (e)
		return e;
	/* the header last: a file cut short by a crash has none */
	fill_header(o, h);
	if ((e = write_all(o->fd, h, sizeof(h), 0)))
		return e;
	im->out_bytes = o->pos;
	return 0;
}

static int write_raw(struct out *o)
{
	struct image *im = o->im;
	uint64_t bytes = im->volblocks << im->blockbits;
	if (ftruncate(o->fd, (off_t)bytes))
		return -errno;
	int e = emit_all(o);
	im->out_bytes = bytes;
	return e;
}

int image_write(struct image *im)
{
	struct stat sd, so;
	struct out o = { .im = im, .fd = -1 };
	int e;

	if (fstat(im->fd, &sd))
		return -errno;
	if (!stat(im->output, &so) && so.st_dev == sd.st_dev &&
	    so.st_ino == sd.st_ino) {
		image_err("%s is the volume itself", im->output);
		return -EINVAL;
	}
	if (!stat(im->output, &so) && !S_ISREG(so.st_mode)) {
		image_err("%s: not a regular file", im->output);
		return -EINVAL;
	}
	o.fd = open(im->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		    0666);
	if (o.fd < 0) {
		e = -errno;
		image_err("cannot create %s: %s", im->output, strerror(-e));
		return e;
	}
	e = im->raw ? write_raw(&o) : write_compact(&o);
	if (!e && fsync(o.fd))
		e = -errno;
	if (close(o.fd) && !e)
		e = -errno;
	if (e) {
		if (e == -ENOMEM)
			image_err("out of memory");
		else
			image_err("%s: %s", im->output, strerror(-e));
		unlink(im->output);
	}
	return e;
}

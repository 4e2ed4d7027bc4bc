/*
 * tux3image -R IMAGEFILE DEVICE: the compact file written back.
 *
 * The whole file is checked first (header, every run header and payload
 * CRC, the trailer, the file size), so that a damaged or truncated image
 * leaves DEVICE untouched (not even created).  Then each run is read
 * again, checked again, and written at its place.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "image.h"
#include "format/endian.h"

struct rst {
	const char *path, *device;
	int fd, out;
	uint64_t size;		/* of the image file */
	unsigned blockbits, blocksize;
	uint64_t volblocks, blocks, runs;
	uint32_t flags;
	uint64_t keep_zero_from;	/* a fresh file: zero runs from here
					 * on stay holes */
	uint8_t *buf;
};

static int damaged(const struct rst *r, uint64_t offset, const char *fmt,
		   ...) __attribute__((format(printf, 3, 4)));

static int damaged(const struct rst *r, uint64_t offset, const char *fmt,
		   ...)
{
	va_list ap;
	fprintf(stderr, "%s: %s: damaged image file at byte %" PRIu64 ": ",
		image_prog, r->path, offset);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -EUCLEAN;
}

static int read_at(const struct rst *r, void *buf, size_t len, uint64_t pos,
		   const char *what)
{
	uint8_t *p = buf;
	size_t got = 0;
	if (pos > r->size || len > r->size - pos)
		return damaged(r, r->size, "truncated: the file ends here, "
			       "%s at byte %" PRIu64 " needs %zu bytes",
			       what, pos, len);
	while (got < len) {
		ssize_t n = pread(r->fd, p + got, len - got,
				  (off_t)(pos + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			image_err("%s: read error at byte %" PRIu64 ": %s",
				  r->path, pos + got, strerror(errno));
			return -EIO;
		}
		if (!n)
			return damaged(r, pos + got, "truncated: %s ends early",
				       what);
		got += (size_t)n;
	}
	return 0;
}

static int check_header(struct rst *r)
{
	uint8_t h[IMG_HEADER_SIZE];
	int e = read_at(r, h, sizeof(h), 0, "the header");
	if (e)
		return e;
	if (memcmp(h + IMG_H_MAGIC, IMG_MAGIC, 8))
		return damaged(r, IMG_H_MAGIC, "no tux3image magic (not a "
			       "compact image made by tux3image)");
	uint32_t crc = tux3_crc32c(0, h, IMG_HEADER_CRC_AT);
	if (be32(h + IMG_HEADER_CRC_AT) != crc)
		return damaged(r, IMG_HEADER_CRC_AT, "header CRC32C 0x%08x "
			       "does not match the stored 0x%08x", crc,
			       be32(h + IMG_HEADER_CRC_AT));
	if (be32(h + IMG_H_VERSION) != IMG_VERSION)
		return damaged(r, IMG_H_VERSION, "format version %u (this "
			       "tux3image reads %u)", be32(h + IMG_H_VERSION),
			       IMG_VERSION);
	if (be32(h + IMG_H_HSIZE) != IMG_HEADER_SIZE)
		return damaged(r, IMG_H_HSIZE, "header size %u, not %u",
			       be32(h + IMG_H_HSIZE), IMG_HEADER_SIZE);
	r->blockbits = be32(h + IMG_H_BLOCKBITS);
	if (r->blockbits < 9 || r->blockbits > 16)
		return damaged(r, IMG_H_BLOCKBITS, "block bits %u (9 to 16)",
			       r->blockbits);
	r->blocksize = 1u << r->blockbits;
	r->flags = be32(h + IMG_H_FLAGS);
	if (r->flags & ~IMG_F_KNOWN)
		return damaged(r, IMG_H_FLAGS, "unknown flags 0x%x",
			       r->flags & ~IMG_F_KNOWN);
	r->volblocks = be64(h + IMG_H_VOLBLOCKS);
	if (!r->volblocks || r->volblocks >= 1ull << 48)
		return damaged(r, IMG_H_VOLBLOCKS, "volume of %" PRIu64
			       " blocks", r->volblocks);
	r->blocks = be64(h + IMG_H_BLOCKS);
	r->runs = be64(h + IMG_H_RUNS);
	uint64_t fsize = be64(h + IMG_H_FILESIZE);
	if (fsize != r->size)
		return damaged(r, r->size < fsize ? r->size : IMG_H_FILESIZE,
			       "the file has %" PRIu64 " bytes, its header "
			       "says %" PRIu64 " (%s)", r->size, fsize,
			       r->size < fsize ? "truncated" : "extended");
	return 0;
}

/* One pass over the runs: check only, or check and write. */
static int pass(struct rst *r, int write)
{
	uint64_t pos = IMG_HEADER_SIZE, next = 0, blocks = 0;
	int e;
	for (uint64_t seq = 0; seq < r->runs; seq++) {
		uint8_t h[IMG_RUN_SIZE];
		if ((e = read_at(r, h, sizeof(h), pos, "a run header")))
			return e;
		if (be32(h + IMG_R_MAGIC) != IMG_RUN_MAGIC)
			return damaged(r, pos, "run %" PRIu64 ": bad magic",
				       seq);
		uint32_t crc = tux3_crc32c(0, h, IMG_RUN_CRC_AT);
		if (be32(h + IMG_RUN_CRC_AT) != crc)
			return damaged(r, pos + IMG_RUN_CRC_AT, "run %" PRIu64
				       ": header CRC32C 0x%08x does not match "
				       "the stored 0x%08x", seq, crc,
				       be32(h + IMG_RUN_CRC_AT));
		uint32_t flags = be32(h + IMG_R_FLAGS);
		uint64_t start = be64(h + IMG_R_START);
		uint64_t count = be32(h + IMG_R_COUNT);
		if (be32(h + IMG_R_SEQ) != (uint32_t)seq)
			return damaged(r, pos + IMG_R_SEQ, "run %" PRIu64
				       " is numbered %u (a run is missing or "
				       "repeated)", seq, be32(h + IMG_R_SEQ));
		if (flags & ~IMG_RUN_ZERO)
			return damaged(r, pos + IMG_R_FLAGS, "run %" PRIu64
				       ": unknown flags 0x%x", seq, flags);
		if (!count || start < next || start >= r->volblocks ||
		    count > r->volblocks - start)
			return damaged(r, pos + IMG_R_START, "run %" PRIu64
				       ": blocks %" PRIu64 "+%" PRIu64 " out "
				       "of order or outside the volume (%"
				       PRIu64 " blocks)", seq, start, count,
				       r->volblocks);
		uint64_t bytes = flags & IMG_RUN_ZERO ? 0 :
				 count << r->blockbits;
		if (bytes > IMG_RUN_MAX_BYTES)
			return damaged(r, pos + IMG_R_COUNT, "run %" PRIu64
				       ": %" PRIu64 " blocks, more than a run "
				       "holds", seq, count);
		if (!bytes && be32(h + IMG_R_DATACRC))
			return damaged(r, pos + IMG_R_DATACRC, "run %" PRIu64
				       ": a zero run with a payload CRC", seq);
		pos += sizeof(h);
		if (bytes) {
			if ((e = read_at(r, r->buf, (size_t)bytes, pos,
					 "a run's blocks")))
				return e;
			crc = tux3_crc32c(0, r->buf, (size_t)bytes);
			if (crc != be32(h + IMG_R_DATACRC))
				return damaged(r, pos, "run %" PRIu64 " (blocks "
					       "%" PRIu64 "-%" PRIu64 "): "
					       "payload CRC32C 0x%08x does not "
					       "match the stored 0x%08x%s",
					       seq, start, start + count - 1,
					       crc, be32(h + IMG_R_DATACRC),
					       write ? " (the file changed "
					       "during the restore: DEVICE "
					       "is partly written)" : "");
		}
		if (write) {
			uint64_t at = start << r->blockbits;
			if (bytes) {
				e = 0;
				for (size_t done = 0; done < bytes && !e;) {
					ssize_t n = pwrite(r->out, r->buf + done,
							   bytes - done,
							   (off_t)(at + done));
					if (n < 0 && errno == EINTR)
						continue;
					if (n <= 0)
						e = n < 0 ? -errno : -EIO;
					else
						done += (size_t)n;
				}
			} else if (at < r->keep_zero_from) {
				e = 0;
				memset(r->buf, 0, IMG_RUN_MAX_BYTES);
				uint64_t len = count << r->blockbits;
				for (uint64_t done = 0; done < len && !e;) {
					size_t n = len - done > IMG_RUN_MAX_BYTES ?
						   IMG_RUN_MAX_BYTES :
						   (size_t)(len - done);
					ssize_t w = pwrite(r->out, r->buf, n,
							   (off_t)(at + done));
					if (w < 0 && errno == EINTR)
						continue;
					if (w <= 0)
						e = w < 0 ? -errno : -EIO;
					else
						done += (uint64_t)w;
				}
			}
			if (e) {
				image_err("%s: write error at block %" PRIu64
					  ": %s", r->device, start,
					  strerror(-e));
				return e;
			}
		}
		pos += bytes;
		blocks += count;
		next = start + count;
	}
	uint8_t t[IMG_TRAILER_SIZE];
	if ((e = read_at(r, t, sizeof(t), pos, "the trailer")))
		return e;
	uint32_t crc = tux3_crc32c(0, t, IMG_TRAILER_CRC_AT);
	if (be32(t + IMG_T_MAGIC) != IMG_TRAILER_MAGIC)
		return damaged(r, pos, "no trailer after run %" PRIu64,
			       r->runs);
	if (be32(t + IMG_TRAILER_CRC_AT) != crc)
		return damaged(r, pos + IMG_TRAILER_CRC_AT, "trailer CRC32C "
			       "0x%08x does not match the stored 0x%08x", crc,
			       be32(t + IMG_TRAILER_CRC_AT));
	if (be64(t + IMG_T_RUNS) != r->runs || be64(t + IMG_T_BLOCKS) != blocks
	    || blocks != r->blocks)
		return damaged(r, pos, "the trailer counts %" PRIu64 " runs, %"
			       PRIu64 " blocks; the header %" PRIu64 ", %"
			       PRIu64 "; found %" PRIu64 " blocks",
			       be64(t + IMG_T_RUNS), be64(t + IMG_T_BLOCKS),
			       r->runs, r->blocks, blocks);
	if (pos + sizeof(t) != r->size)
		return damaged(r, pos + sizeof(t), "%" PRIu64 " bytes after "
			       "the trailer", r->size - pos - sizeof(t));
	return 0;
}

/* DEVICE: created, or extended to the volume's size (a file), or checked
 * to be large enough (a block device). */
static int open_target(struct rst *r)
{
	uint64_t bytes = r->volblocks << r->blockbits;
	struct stat st, si;
	if (fstat(r->fd, &si))
		return -errno;
	if (stat(r->device, &st)) {
		if (errno != ENOENT) {
			image_err("%s: %s", r->device, strerror(errno));
			return -errno;
		}
		r->out = open(r->device, O_WRONLY | O_CREAT | O_EXCL |
			      O_CLOEXEC, 0666);
		if (r->out < 0 || ftruncate(r->out, (off_t)bytes)) {
			int e = -errno;
			image_err("cannot create %s: %s", r->device,
				  strerror(-e));
			if (r->out >= 0) {
				close(r->out);
				r->out = -1;
				unlink(r->device);
			}
			return e;
		}
		r->keep_zero_from = 0;
		return 0;
	}
	if (st.st_dev == si.st_dev && st.st_ino == si.st_ino) {
		image_err("%s is the image file itself", r->device);
		return -EINVAL;
	}
	if (S_ISREG(st.st_mode)) {
		r->out = open(r->device, O_WRONLY | O_CLOEXEC);
		if (r->out < 0) {
			image_err("cannot open %s: %s", r->device,
				  strerror(errno));
			return -errno;
		}
		r->keep_zero_from = (uint64_t)st.st_size;
		if ((uint64_t)st.st_size < bytes &&
		    ftruncate(r->out, (off_t)bytes)) {
			image_err("cannot extend %s to %" PRIu64 " bytes: %s",
				  r->device, bytes, strerror(errno));
			return -errno;
		}
		return 0;
	}
	if (!S_ISBLK(st.st_mode)) {
		image_err("%s: not a regular file or block device", r->device);
		return -EINVAL;
	}
	r->out = open(r->device, O_WRONLY | O_EXCL | O_CLOEXEC);
	if (r->out < 0) {
		image_err("cannot open %s: %s", r->device, strerror(errno));
		return -errno;
	}
	uint64_t devsize = 0;
	if (ioctl(r->out, BLKGETSIZE64, &devsize)) {
		image_err("%s: cannot get its size: %s", r->device,
			  strerror(errno));
		return -errno;
	}
	r->keep_zero_from = UINT64_MAX;
	if (devsize < bytes) {
		image_err("%s: %" PRIu64 " bytes, the volume needs %" PRIu64,
			  r->device, devsize, bytes);
		return -ENOSPC;
	}
	return 0;
}

int image_restore(const char *imagefile, const char *device, int verbose)
{
	struct rst r = { .path = imagefile, .device = device, .fd = -1,
			 .out = -1 };
	struct stat st;
	int e;

	r.fd = open(imagefile, O_RDONLY | O_CLOEXEC);
	if (r.fd < 0 || fstat(r.fd, &st)) {
		image_err("cannot open %s: %s", imagefile, strerror(errno));
		e = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		image_err("%s: not a regular file", imagefile);
		e = -EINVAL;
		goto out;
	}
	r.size = (uint64_t)st.st_size;
	if (!(r.buf = malloc(IMG_RUN_MAX_BYTES))) {
		image_err("out of memory");
		e = -ENOMEM;
		goto out;
	}
	if ((e = check_header(&r)) || (e = pass(&r, 0)))
		goto out;
	if ((e = open_target(&r)) || (e = pass(&r, 1)))
		goto out;
	if (fsync(r.out)) {
		e = -errno;
		image_err("%s: %s", device, strerror(-e));
		goto out;
	}
	if (verbose)
		printf("%s: %" PRIu64 " blocks in %" PRIu64 " runs written to "
		       "%s (volume of %" PRIu64 " blocks of %u bytes%s%s)\n",
		       image_prog, r.blocks, r.runs, device, r.volblocks,
		       r.blocksize, r.flags & IMG_F_SCRAMBLED ?
		       ", scrambled" : "", r.flags & IMG_F_DATA ?
		       ", with file data" : "");
out:
	if (r.out >= 0 && close(r.out) && !e) {
		image_err("%s: %s", device, strerror(errno));
		e = -errno;
	}
	if (r.fd >= 0)
		close(r.fd);
	free(r.buf);
	return e;
}

/*
 * What every layer reports and reads through: the volume's error (the
 * first, most specific one of an operation), its warnings, the clock,
 * and metadata block reads that honour the replay overlay.  The bottom
 * of the library: it calls only the device and the overlay.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "io/io.h"

int vol_error(struct tux3_volume *vol, int err, uint64_t block,
	      uint64_t inum, uint64_t offset, const char *fmt, ...)
{
	va_list ap;
	/* keep the first, most specific, error of an operation */
	if (vol->error.err)
		return vol->error.err;
	vol->error.err = err < 0 ? err : -EIO;
	vol->error.block = block;
	vol->error.inum = inum;
	vol->error.offset = offset;
	va_start(ap, fmt);
	vsnprintf(vol->error.what, sizeof(vol->error.what), fmt, ap);
	va_end(ap);
	return vol->error.err;
}

void vol_warn(struct tux3_volume *vol, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	char **n = realloc(vol->warnings,
			   (vol->nwarnings + 1) * sizeof(*n));
	if (!n)
		return;
	vol->warnings = n;
	uint8_t *src = realloc(vol->warning_sources, vol->nwarnings + 1);
	if (!src)
		return;
	vol->warning_sources = src;
	vol->warnings[vol->nwarnings] = strdup(buf);
	if (vol->warnings[vol->nwarnings]) {
		src[vol->nwarnings] = (uint8_t)vol->warn_source;
		vol->nwarnings++;
	}
}

unsigned tux3_warning_count(const struct tux3_volume *vol)
{
	return vol->nwarnings;
}

const char *tux3_warning(const struct tux3_volume *vol, unsigned i)
{
	return i < vol->nwarnings ? vol->warnings[i] : NULL;
}

enum tux3_warning_source tux3_warning_source(const struct tux3_volume *vol,
					     unsigned i)
{
	return i < vol->nwarnings ?
	       (enum tux3_warning_source)vol->warning_sources[i] :
	       TUX3_WARN_OTHER;
}

const struct tux3_error *tux3_last_error(const struct tux3_volume *vol)
{
	return &vol->error;
}

/* Called per inode by the walks: the text is emptied, not zeroed. */
void tux3_clear_error(struct tux3_volume *vol)
{
	vol->error.err = 0;
	vol->error.block = vol->error.inum = vol->error.offset = TUX3_NONE;
	vol->error.what[0] = 0;
}

const char *tux3_format_error(const struct tux3_error *e, char *buf,
			      size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	if (e->block != TUX3_NONE)
		n += (size_t)snprintf(buf + n, len - n, "block %" PRIu64 ": ",
				      e->block);
	if (n < len && e->inum != TUX3_NONE)
		n += (size_t)snprintf(buf + n, len - n, "inode %" PRIu64 ": ",
				      e->inum);
	if (n < len && e->offset != TUX3_NONE)
		n += (size_t)snprintf(buf + n, len - n, "offset %" PRIu64 ": ",
				      e->offset);
	if (n < len)
		snprintf(buf + n, len - n, "%s", e->what[0] ? e->what :
			 strerror(-e->err));
	return buf;
}

const char *tux3_error_text(const struct tux3_volume *vol, char *buf,
			    size_t len)
{
	return tux3_format_error(&vol->error, buf, len);
}

uint8_t *vol_buf_get(struct tux3_volume *vol)
{
	if (vol->nspare_bufs)
		return vol->spare_bufs[--vol->nspare_bufs];
	return malloc(vol->blocksize);
}

void vol_buf_put(struct tux3_volume *vol, uint8_t *buf)
{
	if (!buf)
		return;
	if (vol->nspare_bufs < sizeof(vol->spare_bufs) /
			       sizeof(vol->spare_bufs[0]))
		vol->spare_bufs[vol->nspare_bufs++] = buf;
	else
		free(buf);
}

void vol_bufs_free(struct tux3_volume *vol)
{
	while (vol->nspare_bufs)
		free(vol->spare_bufs[--vol->nspare_bufs]);
}

int vol_barrier(struct tux3_volume *vol)
{
	if (vol->lazy_commits) {
		vol->unflushed = true;
		return 0;
	}
	vol->unflushed = false;
	return dev_flush(&vol->dev);
}

bool vol_readahead_on(const struct tux3_volume *vol)
{
	return vol->dev.readahead_on && !vol->dev.cache;
}

/* The set of hinted blocks is a bitmap in 4 KiB chunks (128 MiB of
 * volume each at 4 KiB blocks); past this much memory a hint is given
 * without being remembered. */
#define HINTED_CHUNK_BITS 15
#define HINTED_MAX_BYTES (8u << 20)

/* Marks [block, block + count) hinted; false if all of it already was
 * (nothing to ask for).  A set that cannot grow remembers nothing more
 * and lets every hint through. */
static bool hint_once(struct tux3_volume *vol, uint64_t block,
		      uint64_t count)
{
	struct spacemap *sm = &vol->hinted;
	if (!sm->chunkbits &&
	    spacemap_init(sm, HINTED_CHUNK_BITS, HINTED_CHUNK_BITS,
			  vol->volblocks))
		return true;
	bool fresh = false;
	for (uint64_t b = block; b < block + count; b++) {
		if (spacemap_test(sm, b))
			continue;
		fresh = true;
		if (sm->bytes >= HINTED_MAX_BYTES &&
		    !spacemap_get(sm, b >> HINTED_CHUNK_BITS))
			break;
		if (spacemap_set(sm, b, true) < 0)
			break;
	}
	return fresh;
}

void vol_readahead(struct tux3_volume *vol, uint64_t block, uint64_t count)
{
	if (block < vol->reserved_blocks || block >= vol->volblocks)
		return;
	if (count > vol->volblocks - block)
		count = vol->volblocks - block;
	if (!count || !vol_readahead_on(vol) || !hint_once(vol, block, count))
		return;
	dev_readahead(&vol->dev, block << vol->blockbits,
		      count << vol->blockbits);
}

int vol_read_block(struct tux3_volume *vol, uint64_t block, uint8_t *buf)
{
	bool dropped;
	if (block < vol->reserved_blocks || block >= vol->volblocks)
		return vol_error(vol, -EUCLEAN, block, TUX3_NONE, TUX3_NONE,
				 "block %" PRIu64 " is outside the volume's "
				 "usable range %" PRIu64 "..%" PRIu64, block,
				 vol->reserved_blocks, vol->volblocks - 1);
	const uint8_t *ov = overlay_find(&vol->overlay, block, &dropped);
	if (ov) {
		memcpy(buf, ov, vol->blocksize);
		return 0;
	}
	return vol_pread_block(vol, block, buf);
}

/* A block as the device has it (no overlay, no range rule). */
int vol_pread_block(struct tux3_volume *vol, uint64_t block, uint8_t *buf)
{
	int err = dev_pread(&vol->dev, buf, vol->blocksize,
			    block << vol->blockbits);
	if (err)
		return vol_error(vol, err, block, TUX3_NONE, TUX3_NONE,
				 "cannot read block: %s", strerror(-err));
	return 0;
}

int64_t vol_now(const struct tux3_volume *vol)
{
	struct timespec ts;
	if (vol->time_fixed)
		return vol->fixed_time;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

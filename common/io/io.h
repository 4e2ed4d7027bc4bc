/*
 * libtux3's bottom layer, common/io/: the device (reads, writes, flushes,
 * the write-through block cache, the crash simulator's recorder), block
 * sets, the replay overlay of rebuilt bnode images, CRC32C, and vol_io.c:
 * the volume's error and warnings, the clock, and metadata block reads
 * that honour the overlay.  Every layer above reports and reads through
 * it; it calls nothing above itself.
 */
#ifndef TUX3_IO_H
#define TUX3_IO_H

#include "volume.h"
#include "io/record.h"
#include <sys/uio.h>

/* ---- device.c ---- */
int dev_open(struct device *dev, const char *path, bool write, char *err,
	     size_t errlen);
void dev_close(struct device *dev);
int dev_pread(struct device *dev, void *buf, size_t len, uint64_t off);
int dev_pwrite(struct device *dev, const void *buf, size_t len, uint64_t off);
int dev_flush(struct device *dev);
/* The device itself, past the block cache. */
int dev_write_iov(struct device *dev, const struct iovec *iov, int n,
		  uint64_t off);
void dev_readahead(struct device *dev, uint64_t off, uint64_t len);

/* ---- dev_direct.c ---- */
/* Long aligned writes past the host's page cache, written behind the
 * caller (bulk loads); off again when on is false, after every queued
 * write is done.  Returns 0 or -errno (-EINVAL: the device or its
 * filesystem takes no direct I/O, and writes stay as they were), and
 * when turned off, the first failure not yet reported. */
int dev_set_direct(struct device *dev, bool on);
/* Queue the write iov[0, n) of total bytes at off: 0 when queued, 1
 * when it is not one to take (written by the caller through the page
 * cache, once no queued write overlaps it), or a failure of an earlier
 * queued write, not yet reported. */
int dev_direct_write(struct device *dev, const struct iovec *iov, int n,
		     uint64_t off, size_t total);
/* Wait until no queued write overlaps [off, off + len); returns the
 * first failure not yet reported. */
int dev_direct_wait(struct device *dev, uint64_t off, uint64_t len);
/* A mark from the library in the recorded trace (no cost unrecorded). */
static inline void dev_mark(struct device *dev, unsigned mark)
{
	if (dev->rec)
		rec_mark(dev->rec, mark, 0);
}

/* ---- devcache.c ---- */
/* The block cache (devcache.c): nslot blocks of 1 << blockbits bytes, 0
 * to disable.  dev_pread/dev_pwrite keep it coherent (dev_cache_write
 * with buf NULL drops the blocks a write touched). */
int dev_cache_enable(struct device *dev, unsigned blockbits, uint32_t nslot);
void dev_cache_disable(struct device *dev);
bool dev_cache_read(struct device *dev, void *buf, size_t len, uint64_t off);
void dev_cache_fill(struct device *dev, const void *buf, size_t len,
		    uint64_t off);
void dev_cache_write(struct device *dev, const void *buf, size_t len,
		     uint64_t off);
void dev_cache_stats(const struct device *dev, uint64_t *hits,
		     uint64_t *misses);
/* Write-back (a writer that need not survive a crash before its next
 * flush): whole-block writes stay in the cache, dirty, until their slot
 * is reused, a read or partial write covers them, or dev_flush.  Off
 * writes every dirty block back. */
int dev_cache_set_writeback(struct device *dev, bool on);
/* 1: the write is kept in the cache; 0: the caller writes it (what it
 * covers was written back first); or a write-back error. */
int dev_cache_absorb(struct device *dev, const void *buf, size_t len,
		     uint64_t off);
/* Write back the dirty blocks that meet [off, off + len); also reports
 * a failure of a write-back no caller saw. */
int dev_cache_writeback(struct device *dev, uint64_t off, uint64_t len);
uint32_t dev_cache_dirty(const struct device *dev);	/* dirty blocks */

/* ---- blockset.c ---- */
int blockset_add(struct blockset *s, uint64_t v);
int keyset_add(struct blockset *s, uint64_t v);
bool blockset_has(const struct blockset *s, uint64_t v);
void blockset_free(struct blockset *s);

/* ---- spacemap.c ---- */
/* An empty map of nbits bits in chunks of 2^chunkbits bits, counted per
 * 2^countbits bits. */
int spacemap_init(struct spacemap *sm, unsigned chunkbits,
		  unsigned countbits, uint64_t nbits);
void spacemap_free(struct spacemap *sm);
/* The chunk index, or NULL if it was never materialised. */
struct spacemap_chunk *spacemap_get(const struct spacemap *sm,
				    uint64_t index);
/* The chunk index, made (from data, or zeroed if data is NULL) if it
 * is not there yet; NULL on -ENOMEM or an index beyond the map. */
struct spacemap_chunk *spacemap_make(struct spacemap *sm, uint64_t index,
				     const uint8_t *data);
/* The first materialised chunk at index or after, NULL if none. */
struct spacemap_chunk *spacemap_next(const struct spacemap *sm,
				     uint64_t index);
/* Sets or clears bit (within c); returns its former value. */
bool spacemap_chunk_put(const struct spacemap *sm, struct spacemap_chunk *c,
			uint64_t bit, bool set);
/* Bit n of the map (0 where no chunk is); set bits materialise chunks:
 * spacemap_set returns the former value, or -ENOMEM. */
bool spacemap_test(const struct spacemap *sm, uint64_t n);
int spacemap_set(struct spacemap *sm, uint64_t n, bool set);
/* Set bits in [start, start + count). */
uint64_t spacemap_count(const struct spacemap *sm, uint64_t start,
			uint64_t count);

/* ---- crc32c.c (tux3_crc32c is public, in tux3.h) ---- */
/* The byte-at-a-time table's CRC32C, whatever the processor offers. */
uint32_t crc32c_portable(uint32_t crc, const void *buf, size_t len);

/* ---- node_memo.c ---- */
/* kind: what the block was checked as (a block reached both as a bnode
 * and as a leaf of a cross-linked tree must be checked as each) */
bool node_memo_has(struct node_memo *m, uint64_t block, uint64_t lo,
		   uint64_t hi, uintptr_t kind);
void node_memo_add(struct node_memo *m, uint64_t block, uint64_t lo,
		   uint64_t hi, uintptr_t kind);
/* Blocks [block, block + count) change (m NULL: nothing to do). */
void node_memo_forget(struct node_memo *m, uint64_t block, uint64_t count);
void node_memo_forget_bytes(struct node_memo *m, uint64_t off, size_t len);
void node_memo_clear(struct node_memo *m);

/* ---- overlay.c ---- */
/* The image of a block, to read; overlay_edit to change it (which
 * forgets what the memo knew of it). */
const uint8_t *overlay_find(struct overlay *ov, uint64_t block,
			    bool *dropped);
uint8_t *overlay_edit(struct overlay *ov, uint64_t block, bool *dropped);
int overlay_put(struct overlay *ov, uint64_t block, unsigned size,
		uint8_t **data);
void overlay_drop(struct overlay *ov, uint64_t block);
void overlay_forget(struct overlay *ov, uint64_t block);
void overlay_set_flags(struct overlay *ov, uint64_t block, unsigned flags);
unsigned overlay_flags(struct overlay *ov, uint64_t block);
/* Calls fn for every live image with any of the flags in mask. */
int overlay_for_each(struct overlay *ov, unsigned mask,
		     int (*fn)(void *ctx, uint64_t block, uint8_t *data,
			       unsigned *flags), void *ctx);
void overlay_free(struct overlay *ov);
/* After a commit: with more than keep entries, forget every image that is
 * the same as its block on disk (flags 0) and every drop mark, so the
 * overlay holds what is still to be written plus a bounded cache. */
void overlay_shed_clean(struct overlay *ov, size_t keep);

/* ---- vol_io.c ---- */
int vol_error(struct tux3_volume *vol, int err, uint64_t block,
	      uint64_t inum, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
/* A warning of the open; its source is vol->warn_source, which the open
 * sets at each step (volume_load). */
void vol_warn(struct tux3_volume *vol, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A block buffer, from those cursors gave back (a probe allocates
 * nothing once the volume is warm); NULL when out of memory. */
uint8_t *vol_buf_get(struct tux3_volume *vol);
void vol_buf_put(struct tux3_volume *vol, uint8_t *buf);
void vol_bufs_free(struct tux3_volume *vol);
/* Blocks [block, block + count) will be read soon: start their I/O
 * (a hint, only once reads were seen waiting for the device: see
 * dev_readahead; vol_readahead_on says whether it is). */
bool vol_readahead_on(const struct tux3_volume *vol);
/* A commit's barrier: the device flushed, unless the volume's commits
 * are lazy (tux3_set_lazy_commits), when the flush waits for the
 * unmount. */
int vol_barrier(struct tux3_volume *vol);
void vol_readahead(struct tux3_volume *vol, uint64_t block, uint64_t count);
/* Read a metadata block, honouring the replay overlay. */
int vol_read_block(struct tux3_volume *vol, uint64_t block, uint8_t *buf);
int vol_pread_block(struct tux3_volume *vol, uint64_t block, uint8_t *buf);
int64_t vol_now(const struct tux3_volume *vol);	/* ns since the epoch */

/* array.c: room for one more of n elements of size bytes in *v (*cap of
 * them), the capacity doubled when full; -ENOMEM. */
int array_grow(void **v, size_t *cap, size_t n, size_t size);

#endif

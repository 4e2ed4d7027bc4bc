/*
 * The device's block cache: a bounded, write-through cache of whole
 * blocks, for long-lived users of one volume (tux3fuse).  Every lookup
 * and create reads the directory's blocks and every xattr change reads
 * the atom table's refcount blocks; without a cache each of those reads
 * is a pread(2), which costs a FUSE request more than the library's own
 * work.  The one-shot tools (fsck, dump, dot) read most blocks once and
 * leave it off.
 *
 * Coherence is kept at the device layer, where every read and write of
 * the volume passes: a write updates the cached copy of every block it
 * covers whole and drops a block it covers in part, so the cache never
 * differs from the device.  Writes do not add blocks (file data written
 * once would only push out metadata); reads of one aligned block do.
 *
 * Storage is allocated once at enable: a slot array, a hash of chains and
 * an LRU list threaded through slot indices, so a lookup allocates
 * nothing.
 *
 * Write-back (dev_cache_set_writeback), for a writer that need not
 * survive a crash before its last flush (lazy commits): a write of whole
 * blocks is kept in the cache, dirty, and reaches the device when its
 * slot is reused, before any read or partial write that covers it goes
 * to the device, and at every flush.  A bulk load rewrites a
 * directory's last block once per entry and writes each new file's
 * blocks next to the last: the rewrites stay in memory, and a dirty
 * block goes out with the dirty blocks adjacent to it in one vectored
 * write.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include "io/io.h"

#define NIL UINT32_MAX
#define MAX_SLOTS (1u << 30)	/* 4 TiB of 4 KiB blocks */

struct dev_cache {
	unsigned blockbits;
	uint32_t nslot, used;
	uint32_t nhash;		/* a power of two */
	uint32_t *hash;		/* chain heads */
	uint32_t *chain;	/* next slot in a hash chain */
	uint32_t *prev, *next;	/* LRU: head is the most recent */
	uint32_t head, tail;
	uint64_t *block;
	uint8_t *data;
	uint64_t hits, misses;
	bool writeback;
	uint8_t *dirty;		/* per slot, in write-back mode */
	uint32_t ndirty;
	struct iovec *iov;	/* a run written back: up to nslot blocks */
	int wb_err;		/* a write-back failure not yet reported */
};

static uint32_t hash_block(const struct dev_cache *c, uint64_t block)
{
	return (uint32_t)((block * 0x9e3779b97f4a7c15ull) >> 32) &
	       (c->nhash - 1);
}

static uint8_t *slot_data(const struct dev_cache *c, uint32_t s)
{
	return c->data + ((size_t)s << c->blockbits);
}

static void lru_unlink(struct dev_cache *c, uint32_t s)
{
	if (c->prev[s] != NIL)
		c->next[c->prev[s]] = c->next[s];
	else
		c->head = c->next[s];
	if (c->next[s] != NIL)
		c->prev[c->next[s]] = c->prev[s];
	else
		c->tail = c->prev[s];
}

static void lru_push(struct dev_cache *c, uint32_t s)
{
	c->prev[s] = NIL;
	c->next[s] = c->head;
	if (c->head != NIL)
		c->prev[c->head] = s;
	c->head = s;
	if (c->tail == NIL)
		c->tail = s;
}

static uint32_t find_slot(const struct dev_cache *c, uint64_t block)
{
	for (uint32_t s = c->hash[hash_block(c, block)]; s != NIL;
	     s = c->chain[s])
		if (c->block[s] == block)
			return s;
	return NIL;
}

static void hash_remove(struct dev_cache *c, uint32_t s)
{
	uint32_t *p = &c->hash[hash_block(c, c->block[s])];
	while (*p != s)
		p = &c->chain[*p];
	*p = c->chain[s];
}

static void drop_slot(struct dev_cache *c, uint32_t s)
{
	hash_remove(c, s);
	lru_unlink(c, s);
	/* free slots are kept at the tail, where insert takes them */
	c->prev[s] = c->tail;
	c->next[s] = NIL;
	if (c->tail != NIL)
		c->next[c->tail] = s;
	else
		c->head = s;
	c->tail = s;
	c->block[s] = UINT64_MAX;
	c->used--;
	if (c->dirty && c->dirty[s]) {
		c->dirty[s] = 0;
		c->ndirty--;
	}
}

/* A slot for block, the least recently used one if the cache is full. */
static uint32_t insert_slot(struct dev_cache *c, uint64_t block)
{
	uint32_t s;
	if (c->used < c->nslot && c->block[c->tail] == UINT64_MAX) {
		s = c->tail;
		c->used++;
	} else {
		s = c->tail;
		hash_remove(c, s);
	}
	lru_unlink(c, s);
	lru_push(c, s);
	c->block[s] = block;
	uint32_t h = hash_block(c, block);
	c->chain[s] = c->hash[h];
	c->hash[h] = s;
	return s;
}

void dev_cache_disable(struct device *dev)
{
	struct dev_cache *c = dev->cache;
	if (!c)
		return;
	/* a caller that must see a write-back error flushes first */
	(void)dev_cache_writeback(dev, 0, UINT64_MAX);
	free(c->hash);
	free(c->chain);
	free(c->prev);
	free(c->next);
	free(c->block);
	free(c->data);
	free(c->dirty);
	free(c->iov);
	free(c);
	dev->cache = NULL;
}

int dev_cache_enable(struct device *dev, unsigned blockbits, uint32_t nslot)
{
	dev_cache_disable(dev);
	if (!nslot)
		return 0;
	if (blockbits < 9 || blockbits > 16)
		return -EINVAL;
	if (nslot > MAX_SLOTS)
		return -ENOMEM;	/* and the hash size would overflow */
	struct dev_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->blockbits = blockbits;
	c->nslot = nslot;
	c->nhash = 1;
	while (c->nhash < nslot)
		c->nhash <<= 1;
	c->hash = malloc(c->nhash * sizeof(*c->hash));
	c->chain = malloc(nslot * sizeof(*c->chain));
	c->prev = malloc(nslot * sizeof(*c->prev));
	c->next = malloc(nslot * sizeof(*c->next));
	c->block = malloc(nslot * sizeof(*c->block));
	c->data = malloc((size_t)nslot << blockbits);
	dev->cache = c;
	if (!c->hash || !c->chain || !c->prev || !c->next || !c->block ||
	    !c->data) {
		dev_cache_disable(dev);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < c->nhash; i++)
		c->hash[i] = NIL;
	c->head = c->tail = NIL;
	for (uint32_t s = 0; s < nslot; s++) {
		c->block[s] = UINT64_MAX;
		c->chain[s] = NIL;
		lru_push(c, s);	/* all free */
	}
	return 0;
}

/* Whether this read is one cached-size aligned block; its number then. */
static bool one_block(const struct dev_cache *c, size_t len, uint64_t off,
		      uint64_t *block)
{
	uint64_t bs = 1ull << c->blockbits;
	if (len != bs || (off & (bs - 1)))
		return false;
	*block = off >> c->blockbits;
	return true;
}

bool dev_cache_read(struct device *dev, void *buf, size_t len, uint64_t off)
{
	struct dev_cache *c = dev->cache;
	uint64_t block;
	if (!one_block(c, len, off, &block))
		return false;
	uint32_t s = find_slot(c, block);
	if (s == NIL) {
		c->misses++;
		return false;
	}
	c->hits++;
	lru_unlink(c, s);
	lru_push(c, s);
	memcpy(buf, slot_data(c, s), len);
	return true;
}

/* ---- write-back ---- */

/* The most blocks one vectored write takes (below IOV_MAX). */
#define WB_RUN_MAX 256u

static void set_clean(struct dev_cache *c, uint32_t s)
{
	if (c->dirty[s]) {
		c->dirty[s] = 0;
		c->ndirty--;
	}
}

static bool is_dirty(const struct dev_cache *c, uint64_t block)
{
	uint32_t s = find_slot(c, block);
	return s != NIL && c->dirty[s];
}

/* Write dirty slot s to the device with the dirty blocks adjacent to it,
 * in one vectored write.  On failure the run leaves the cache (reads go
 * to the device, which holds what it holds) and the error is returned. */
static int write_run(struct device *dev, uint32_t s)
{
	struct dev_cache *c = dev->cache;
	uint64_t lo = c->block[s], hi = lo;
	while (hi - lo + 1 < WB_RUN_MAX && lo && is_dirty(c, lo - 1))
		lo--;
	while (hi - lo + 1 < WB_RUN_MAX && is_dirty(c, hi + 1))
		hi++;
	int n = 0;
	for (uint64_t b = lo; b <= hi; b++)
		c->iov[n++] = (struct iovec){
			.iov_base = slot_data(c, find_slot(c, b)),
			.iov_len = (size_t)1 << c->blockbits };
	int err = dev_write_iov(dev, c->iov, n, lo << c->blockbits);
	for (uint64_t b = lo; b <= hi; b++) {
		uint32_t t = find_slot(c, b);
		set_clean(c, t);
		if (err)
			drop_slot(c, t);
	}
	return err;
}

/* A slot for block, the least recently used dirty one written first. */
static int take_slot(struct device *dev, uint64_t block, uint32_t *slot)
{
	struct dev_cache *c = dev->cache;
	if (c->dirty && c->tail != NIL && c->block[c->tail] != UINT64_MAX &&
	    c->dirty[c->tail]) {
		int err = write_run(dev, c->tail);
		if (err)
			return err;
	}
	*slot = insert_slot(c, block);
	return 0;
}

int dev_cache_set_writeback(struct device *dev, bool on)
{
	struct dev_cache *c = dev->cache;
	if (!c)
		return on ? -EINVAL : 0;
	if (!on) {
		int err = dev_cache_writeback(dev, 0, UINT64_MAX);
		free(c->dirty);
		free(c->iov);
		c->dirty = NULL;
		c->iov = NULL;
		c->writeback = false;
		return err;
	}
	if (c->writeback)
		return 0;
	c->dirty = calloc(c->nslot, 1);
	c->iov = calloc(WB_RUN_MAX, sizeof(*c->iov));
	if (!c->dirty || !c->iov) {
		free(c->dirty);
		free(c->iov);
		c->dirty = NULL;
		c->iov = NULL;
		return -ENOMEM;
	}
	c->writeback = true;
	return 0;
}

int dev_cache_writeback(struct device *dev, uint64_t off, uint64_t len)
{
	struct dev_cache *c = dev->cache;
	int err = 0;
	if (!c || !c->writeback)
		return 0;
	if (c->ndirty && len) {
		uint64_t first = off >> c->blockbits;
		uint64_t last = len > UINT64_MAX - off ? UINT64_MAX >> c->blockbits :
			(off + len - 1) >> c->blockbits;
		/* every run is tried, the first failure reported: a run
		 * that fails leaves the cache, so no dirty block is left
		 * behind to be taken for clean */
		if (last - first < c->nslot) {
			for (uint64_t b = first; b <= last && c->ndirty; b++) {
				uint32_t s = find_slot(c, b);
				int e = s != NIL && c->dirty[s] ?
					write_run(dev, s) : 0;
				err = err ? err : e;
			}
		} else {
			for (uint32_t s = 0; s < c->nslot && c->ndirty; s++) {
				int e = c->dirty[s] && c->block[s] >= first &&
					c->block[s] <= last ?
					write_run(dev, s) : 0;
				err = err ? err : e;
			}
		}
	}
	if (!err) {
		err = c->wb_err;
		c->wb_err = 0;
	}
	return err;
}

uint32_t dev_cache_dirty(const struct device *dev)
{
	return dev->cache ? dev->cache->ndirty : 0;
}

int dev_cache_absorb(struct device *dev, const void *buf, size_t len,
		     uint64_t off)
{
	struct dev_cache *c = dev->cache;
	uint64_t bs = 1ull << c->blockbits;
	if (!c->writeback || !len)
		return 0;
	/* a part of a block, or more than the cache should hold at once
	 * (file data in bulk): what it covers goes out first, then the
	 * write itself */
	if ((len | off) & (bs - 1) || (len >> c->blockbits) > c->nslot / 4)
		return dev_cache_writeback(dev, off, len);
	for (uint64_t b = off >> c->blockbits; len; b++, len -= bs) {
		uint32_t s = find_slot(c, b);
		if (s != NIL) {
			lru_unlink(c, s);
			lru_push(c, s);
		} else {
			int err = take_slot(dev, b, &s);
			if (err)
				return err;
		}
		memcpy(slot_data(c, s), buf, bs);
		buf = (const uint8_t *)buf + bs;
		if (!c->dirty[s]) {
			c->dirty[s] = 1;
			c->ndirty++;
		}
	}
	return 1;
}

void dev_cache_fill(struct device *dev, const void *buf, size_t len,
		    uint64_t off)
{
	struct dev_cache *c = dev->cache;
	uint64_t block;
	uint32_t s;
	if (!one_block(c, len, off, &block) || find_slot(c, block) != NIL)
		return;
	int err = take_slot(dev, block, &s);
	if (err) {
		if (!c->wb_err)	/* for the next flush to report */
			c->wb_err = err;
		return;
	}
	memcpy(slot_data(c, s), buf, len);
}

/* After a write of len bytes at off (buf NULL: a failed one, whose
 * blocks are dropped). */
void dev_cache_write(struct device *dev, const void *buf, size_t len,
		     uint64_t off)
{
	struct dev_cache *c = dev->cache;
	uint64_t bs = 1ull << c->blockbits;
	uint64_t first = off >> c->blockbits;
	uint64_t last = (off + len - 1) >> c->blockbits;
	if (!len || !c->used)
		return;
	if (last - first >= c->nslot) {
		/* a long write: visit the cached blocks, not the range */
		for (uint32_t s = 0; s < c->nslot; s++)
			if (c->block[s] != UINT64_MAX &&
			    c->block[s] >= first && c->block[s] <= last)
				drop_slot(c, s);
		return;
	}
	for (uint64_t b = first; b <= last; b++) {
		uint32_t s = find_slot(c, b);
		if (s == NIL)
			continue;
		uint64_t start = b << c->blockbits;
		if (buf && start >= off && start + bs <= off + len)
			memcpy(slot_data(c, s),
			       (const uint8_t *)buf + (start - off), bs);
		else
			drop_slot(c, s);
	}
}

void dev_cache_stats(const struct device *dev, uint64_t *hits,
		     uint64_t *misses)
{
	const struct dev_cache *c = dev->cache;
	*hits = c ? c->hits : 0;
	*misses = c ? c->misses : 0;
}

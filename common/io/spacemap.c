/*
 * Space maps: one bit per block over volumes of up to 2^48 blocks, in
 * memory that follows the space in use.  The bits are cut into chunks of
 * 2^chunkbits bits (the live bitmap uses one chunk per bitmap block, so a
 * chunk is what the bitmap file holds or leaves as a hole), and the
 * chunks hang from a radix tree of 64-way nodes: a chunk exists only
 * where the owner made one, and a missing chunk reads as zeroes.  Walks
 * go from one existing chunk to the next, so a huge empty region costs
 * nothing to cross.  Each chunk also keeps its set bits per unit of
 * 2^countbits bits, so that counts (the countmap's per-group counts, the
 * free count) never rescan the bits.
 *
 * Memory (doc/architecture.md): a chunk costs its 2^chunkbits / 8 bytes,
 * 4 bytes per unit and a 32-byte head; a radix node 512 bytes, shared by
 * 64 neighbouring chunks (less than 1% of a 4 KiB chunk's cost when the
 * chunks are together, up to 6 nodes for a chunk alone).
 */
#include <stdlib.h>
#include "io/io.h"

#define RADIX_BITS 6
#define RADIX_SLOTS (1u << RADIX_BITS)
#define RADIX_MASK (RADIX_SLOTS - 1)

int spacemap_init(struct spacemap *sm, unsigned chunkbits,
		  unsigned countbits, uint64_t nbits)
{
	memset(sm, 0, sizeof(*sm));
	if (chunkbits < 3 || chunkbits > 24 || countbits > chunkbits ||
	    nbits > TUX3_KEY_LIMIT)
		return -EINVAL;
	sm->chunkbits = chunkbits;
	sm->countbits = countbits;
	uint64_t nchunks = (nbits + (1ULL << chunkbits) - 1) >> chunkbits;
	sm->levels = 1;
	while (sm->levels * RADIX_BITS < 64 &&
	       nchunks > 1ULL << (sm->levels * RADIX_BITS))
		sm->levels++;
	return 0;
}

static void node_free(void **node, unsigned level)
{
	for (unsigned i = 0; i < RADIX_SLOTS && node; i++)
		if (node[i] && level)
			node_free(node[i], level - 1);
		else
			free(node[i]);
	free(node);
}

void spacemap_free(struct spacemap *sm)
{
	node_free(sm->root, sm->levels - 1);
	sm->root = NULL;
	sm->chunks = sm->bytes = 0;
}

static bool index_fits(const struct spacemap *sm, uint64_t index)
{
	return sm->levels * RADIX_BITS >= 64 ||
	       index < 1ULL << (sm->levels * RADIX_BITS);
}

struct spacemap_chunk *spacemap_get(const struct spacemap *sm, uint64_t index)
{
	void **node = sm->root;
	if (!index_fits(sm, index))
		return NULL;
	for (unsigned l = sm->levels - 1; node; l--) {
		void *child = node[(index >> (l * RADIX_BITS)) & RADIX_MASK];
		if (!l)
			return child;
		node = child;
	}
	return NULL;
}

static size_t chunk_size(const struct spacemap *sm)
{
	return sizeof(struct spacemap_chunk) +
	       (sizeof(uint32_t) << (sm->chunkbits - sm->countbits)) +
	       ((size_t)1 << (sm->chunkbits - 3));
}

static struct spacemap_chunk *chunk_new(struct spacemap *sm, uint64_t index,
					const uint8_t *data)
{
	size_t units = (size_t)1 << (sm->chunkbits - sm->countbits);
	size_t bytes = (size_t)1 << (sm->chunkbits - 3);
	struct spacemap_chunk *c = calloc(1, chunk_size(sm));
	if (!c)
		return NULL;
	c->index = index;
	c->count = (uint32_t *)(c + 1);
	c->bits = (uint8_t *)(c->count + units);
	if (!data)
		return c;
	memcpy(c->bits, data, bytes);
	size_t unit_bytes = bytes / units;
	for (size_t u = 0; u < units; u++) {
		/* a unit of less than a byte (tiny test maps) counts bits */
		if (!unit_bytes) {
			unsigned shift = (unsigned)(u << sm->countbits) & 7;
			unsigned mask = (1u << (1u << sm->countbits)) - 1;
			c->count[u] = (uint32_t)__builtin_popcount(
				(data[(u << sm->countbits) >> 3] >> shift) &
				mask);
			continue;
		}
		for (size_t k = 0; k < unit_bytes; k++)
			c->count[u] += (uint32_t)__builtin_popcount(
				data[u * unit_bytes + k]);
	}
	return c;
}

struct spacemap_chunk *spacemap_make(struct spacemap *sm, uint64_t index,
				     const uint8_t *data)
{
	if (!index_fits(sm, index))
		return NULL;
	void ***slot = (void ***)&sm->root;
	for (unsigned l = sm->levels; l > 0; l--) {
		if (!*slot) {
			*slot = calloc(RADIX_SLOTS, sizeof(void *));
			if (!*slot)
				return NULL;
			sm->bytes += RADIX_SLOTS * sizeof(void *);
		}
		slot = (void ***)&(*slot)[(index >> ((l - 1) * RADIX_BITS)) &
					  RADIX_MASK];
	}
	if (!*slot) {
		struct spacemap_chunk *c = chunk_new(sm, index, data);
		if (!c)
			return NULL;
		*slot = (void **)c;
		sm->chunks++;
		sm->bytes += chunk_size(sm);
	}
	return (struct spacemap_chunk *)*slot;
}

static struct spacemap_chunk *next_in(void **node, unsigned level,
				      uint64_t index)
{
	unsigned shift = level * RADIX_BITS;
	for (unsigned slot = (index >> shift) & RADIX_MASK; slot < RADIX_SLOTS;
	     slot++) {
		void *child = node[slot];
		if (child && !level)
			return child;
		if (child) {
			struct spacemap_chunk *c = next_in(child, level - 1,
							   index);
			if (c)
				return c;
		}
		/* the next slot's subtree starts at its first index */
		index = ((index >> shift) + 1) << shift;
	}
	return NULL;
}

struct spacemap_chunk *spacemap_next(const struct spacemap *sm, uint64_t index)
{
	if (!sm->root || !index_fits(sm, index))
		return NULL;
	return next_in(sm->root, sm->levels - 1, index);
}

bool spacemap_chunk_put(const struct spacemap *sm, struct spacemap_chunk *c,
			uint64_t bit, bool set)
{
	uint8_t mask = (uint8_t)(1u << (bit & 7));
	bool was = c->bits[bit >> 3] & mask;
	if (was == set)
		return was;
	if (set) {
		c->bits[bit >> 3] |= mask;
		c->count[bit >> sm->countbits]++;
	} else {
		c->bits[bit >> 3] &= (uint8_t)~mask;
		c->count[bit >> sm->countbits]--;
	}
	return was;
}

bool spacemap_test(const struct spacemap *sm, uint64_t n)
{
	struct spacemap_chunk *c = spacemap_get(sm, n >> sm->chunkbits);
	uint64_t bit = n & ((1ULL << sm->chunkbits) - 1);
	return c && (c->bits[bit >> 3] >> (bit & 7) & 1);
}

int spacemap_set(struct spacemap *sm, uint64_t n, bool set)
{
	uint64_t index = n >> sm->chunkbits;
	struct spacemap_chunk *c = set ? spacemap_make(sm, index, NULL) :
				   spacemap_get(sm, index);
	if (!c)
		return set ? -ENOMEM : 0;
	return spacemap_chunk_put(sm, c, n & ((1ULL << sm->chunkbits) - 1),
				  set);
}

/* Set bits of chunk c in its bits [lo, hi): whole units from their
 * counts, the edges bit by bit. */
static uint64_t chunk_count(const struct spacemap *sm,
			    const struct spacemap_chunk *c, uint64_t lo,
			    uint64_t hi)
{
	uint64_t unit = 1ULL << sm->countbits, n = 0;
	while (lo < hi) {
		if (!(lo & (unit - 1)) && hi - lo >= unit) {
			n += c->count[lo >> sm->countbits];
			lo += unit;
		} else {
			n += c->bits[lo >> 3] >> (lo & 7) & 1;
			lo++;
		}
	}
	return n;
}

uint64_t spacemap_count(const struct spacemap *sm, uint64_t start,
			uint64_t count)
{
	uint64_t end = start + count, n = 0, per = 1ULL << sm->chunkbits;
	if (end < start)
		end = UINT64_MAX;
	for (struct spacemap_chunk *c = spacemap_next(sm, start >> sm->chunkbits);
	     c && c->index << sm->chunkbits < end;
	     c = spacemap_next(sm, c->index + 1)) {
		uint64_t base = c->index << sm->chunkbits;
		uint64_t lo = start > base ? start - base : 0;
		uint64_t hi = end - base < per ? end - base : per;
		n += chunk_count(sm, c, lo, hi);
	}
	return n;
}

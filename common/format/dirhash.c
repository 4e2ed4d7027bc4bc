/*
 * The on-disk directory index's blocks (doc/format.md 15.5): root,
 * table and bucket blocks inside the directory file, each starting as
 * an empty entry block does, so that 2014 readers skip them.  Pure
 * encoders and checkers; the walk over them is dirhash.c's.
 */
#include "format/format.h"

/* FNV-1a with a seed and the murmur3 finaliser: the on-disk hash, and
 * the in-memory index's (with its own seed). */
uint32_t dirhash_name(uint32_t seed, const char *name, unsigned len)
{
	uint32_t h = 2166136261u ^ seed;
	for (unsigned i = 0; i < len; i++)
		h = (h ^ (uint8_t)name[i]) * 16777619u;
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	return h ^ (h >> 16);
}

unsigned dirhash_items(unsigned blocksize)
{
	return (blocksize - DIRHASH_HEADER) / 4;
}

unsigned dirhash_table_slots(unsigned blocksize)
{
	unsigned n = dirhash_items(blocksize), t = 1;
	while (t * 2 <= n)
		t *= 2;
	return t;
}

unsigned dirhash_bucket_pairs(unsigned blocksize)
{
	return (blocksize - DIRHASH_HEADER) / 8;
}

/* The limit on G: the root's table blocks times their slots. */
unsigned dirhash_max_depth(unsigned blocksize)
{
	unsigned slots = dirhash_table_slots(blocksize), d = 0;
	uint64_t max = (uint64_t)slots * dirhash_items(blocksize);
	while (d < 31 && (2ull << d) <= max)
		d++;
	return d;
}

uint32_t dirhash_crc(const uint8_t *blk, unsigned blocksize, tux3_ino_t dir,
		     uint64_t logical)
{
	static const uint8_t zero[4];
	uint8_t seed[16];

	put_be64(seed, dir);
	put_be64(seed + 8, logical);
	uint32_t c = tux3_crc32c(0, seed, sizeof(seed));
	c = tux3_crc32c(c, blk, DIRHASH_CRC_OFFSET);
	c = tux3_crc32c(c, zero, sizeof(zero));
	return tux3_crc32c(c, blk + DIRHASH_HEADER,
			   blocksize - DIRHASH_HEADER);
}

/* The empty entry record that covers the block, then the magic. */
bool dirhash_is_index(const uint8_t *blk, unsigned blocksize)
{
	unsigned rec_len = be16(blk + 8);
	if (rec_len == 65535)
		rec_len = 65536;
	return be64(blk) == 0 && rec_len == blocksize && !blk[10] &&
	       !blk[11] && be32(blk + 12) == 0 &&
	       be32(blk + 16) == DIRHASH_MAGIC;
}

void dirhash_init(uint8_t *blk, unsigned blocksize,
		  const struct dirhash_head *h)
{
	dirblock_init(blk, blocksize);
	put_be32(blk + 16, DIRHASH_MAGIC);
	blk[20] = (uint8_t)h->kind;
	blk[21] = (uint8_t)h->depth;
	put_be32(blk + 24, h->count);
	put_be32(blk + 28, h->gen);
	put_be32(blk + 32, h->seed);
}

void dirhash_seal(uint8_t *blk, unsigned blocksize, tux3_ino_t dir,
		  uint64_t logical)
{
	put_be32(blk + DIRHASH_CRC_OFFSET,
		 dirhash_crc(blk, blocksize, dir, logical));
}

/* The count of items a block of this kind may hold. */
static unsigned kind_capacity(unsigned kind, unsigned blocksize)
{
	switch (kind) {
	case DIRHASH_ROOT:
		return dirhash_items(blocksize);
	case DIRHASH_TABLE:
		return dirhash_table_slots(blocksize);
	case DIRHASH_BUCKET:
		return dirhash_bucket_pairs(blocksize);
	}
	return 0;
}

int dirhash_decode(const uint8_t *blk, unsigned blocksize, tux3_ino_t dir,
		   uint64_t logical, struct dirhash_head *h)
{
	if (!dirhash_is_index(blk, blocksize))
		return DIRHASH_NOT_INDEX;
	*h = (struct dirhash_head){
		.kind = blk[20], .depth = blk[21], .count = be32(blk + 24),
		.gen = be32(blk + 28), .seed = be32(blk + 32),
	};
	if (be32(blk + DIRHASH_CRC_OFFSET) !=
	    dirhash_crc(blk, blocksize, dir, logical))
		return DIRHASH_BAD_CRC;
	unsigned cap = kind_capacity(h->kind, blocksize);
	if (!cap || h->count > cap || be16(blk + 22) ||
	    h->depth > dirhash_max_depth(blocksize) ||
	    (h->kind != DIRHASH_ROOT && h->seed))
		return DIRHASH_BAD_FIELD;
	return 0;
}

uint32_t dirhash_item(const uint8_t *blk, unsigned i)
{
	return be32(blk + DIRHASH_HEADER + 4 * i);
}

void dirhash_set_item(uint8_t *blk, unsigned i, uint32_t v)
{
	put_be32(blk + DIRHASH_HEADER + 4 * i, v);
}

void dirhash_set_count(uint8_t *blk, uint32_t count)
{
	put_be32(blk + 24, count);
}

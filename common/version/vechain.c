/*
 * Element chains (doc/format.md 17.3c): the elements of one logical block
 * of a versioned file that do not fit a leaf.  A vleaf holds at most
 * (blocksize - 8) / 16 records, and a leaf cannot be split inside one
 * block, so a block rewritten in more versions than that (255 at 4 KiB,
 * 31 at 512 bytes) moves its whole element list out of the leaf: one
 * ELIST record (vleaf.h) stands for it there and names the chain's first
 * block.
 *
 * The version layer never sees an ELIST record: vfilemap loads a chain's
 * elements in its place as one-block records and, when a leaf it stores
 * does not fit, moves the busiest block's elements out again (reusing the
 * chain it read when the elements did not change).  Chains are written
 * copy-on-write to blocks of their own, like file data.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "version/vinode.h"
#include "version/version.h"
#include "version/vleaf.h"
#include "version/vfilemap.h"

#define VECHAIN_MAGIC	0x5433454cu	/* "T3EL" */
#define VECHAIN_HEADER	40
#define VECHAIN_ELEM	8

unsigned vechain_per_block(unsigned blocksize)
{
	return (blocksize - VECHAIN_HEADER) / VECHAIN_ELEM;
}

/* Blocks a chain of every label's element can take. */
static unsigned vechain_max_blocks(unsigned blocksize)
{
	unsigned per = vechain_per_block(blocksize);
	return (VERSION_LABELS + per - 1) / per;
}

int vextents_reserve(struct vextents *x, unsigned need)
{
	if (need <= x->cap)
		return 0;
	unsigned cap = x->cap ? x->cap : 16;
	while (cap < need)
		cap *= 2;
	struct vextent *r = realloc(x->r, cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	x->r = r;
	x->cap = cap;
	return 0;
}

void vchain_seal(uint8_t *b, unsigned blocksize)
{
	put_be32(b + 4, 0);
	put_be32(b + 4, tux3_crc32c(0, b, blocksize));
}

static int vchain_alloc(struct tux3_volume *vol, uint64_t goal, unsigned n,
			uint64_t *blocks)
{
	unsigned have = 0;
	int err = 0;
	while (have < n && !err) {
		uint64_t at, got;
		if ((err = balloc(vol, goal, n - have, false, &at, &got)))
			break;
		for (uint64_t k = 0; k < got; k++)
			blocks[have++] = at + k;
		goal = at + got;
	}
	for (unsigned i = 0; err && i < have; i++)
		bfree_now(vol, blocks[i], 1);
	return err;
}

static bool chain_crc_ok(const uint8_t *b, unsigned blocksize)
{
	uint8_t zero[4] = { 0 };
	uint32_t crc = tux3_crc32c(0, b, 4);
	crc = tux3_crc32c(crc, zero, 4);
	crc = tux3_crc32c(crc, b + 8, blocksize - 8);
	return crc == be32(b + 4);
}

/* The chain's elements appended to x as one-block records; its blocks
 * to blocks[] (vechain_max_blocks entries) when given. */
static int chain_read(struct tux3_volume *vol, tux3_ino_t inum,
		      uint64_t logical, uint64_t first, struct vextents *x,
		      uint64_t *blocks, unsigned *nblocks)
{
	unsigned per = vechain_per_block(vol->blocksize);
	unsigned max = vechain_max_blocks(vol->blocksize);
	uint8_t *b = vol_buf_get(vol);
	uint64_t block = first;
	int last = -1, err = 0;
	unsigned i;
	if (!b)
		return -ENOMEM;
#define BAD(fmt, ...) vol_error(vol, -EUCLEAN, block, inum, TUX3_NONE,      \
				"inode %" PRIu64 ": element chain of logical " \
				"block %" PRIu64 ", block %u (%" PRIu64 "): "  \
				fmt, inum, logical, i, block, ##__VA_ARGS__)
	for (i = 0; block && !err; i++) {
		if (i == max) {
			err = BAD("longer than %u blocks", max);
			break;
		}
		if (block < vol->reserved_blocks ||
		    !vol_block_valid(vol, block)) {
			err = BAD("outside the volume");
			break;
		}
		if ((err = dev_pread(&vol->dev, b, vol->blocksize,
				     block << vol->blockbits)))
			break;
		unsigned n = be32(b + 36);
		if (be32(b) != VECHAIN_MAGIC)
			err = BAD("no element-chain magic");
		else if (!chain_crc_ok(b, vol->blocksize))
			err = BAD("its CRC does not match");
		else if (be64(b + 8) != inum || be64(b + 16) != logical)
			err = BAD("it belongs to inode %" PRIu64 ", logical "
				  "block %" PRIu64, be64(b + 8), be64(b + 16));
		else if (be32(b + 32) != i)
			err = BAD("it says it is block %u", be32(b + 32));
		else if (!n || n > per)
			err = BAD("%u elements (1 to %u)", n, per);
		else
			err = vextents_reserve(x, x->n + n);
		for (unsigned k = 0; k < n && !err; k++) {
			uint64_t w = be64(b + VECHAIN_HEADER + k * VECHAIN_ELEM);
			uint64_t phys = w >> 16;
			unsigned label = (unsigned)(w >> 4) & 0xfff;
			if (w & 0xf)
				err = BAD("element %u has flags 0x%x", k,
					  (unsigned)(w & 0xf));
			else if ((int)label <= last)
				err = BAD("element %u (label %u) not above the "
					  "one before it", k, label);
			else if (phys && (phys < vol->reserved_blocks ||
					  !vol_block_valid(vol, phys)))
				err = BAD("element %u (label %u) points outside "
					  "the volume", k, label);
			else
				x->r[x->n++] = (struct vextent){
					.logical = logical, .count = 1,
					.label = (uint16_t)label, .phys = phys };
			last = (int)label;
		}
		if (blocks && !err)
			blocks[i] = block;
		if (!err)
			block = be64(b + 24);
	}
#undef BAD
	vol_buf_put(vol, b);
	if (!err && nblocks)
		*nblocks = i;
	return err;
}

int vchain_put(struct tux3_volume *vol, uint64_t goal, unsigned n,
	       vchain_fill_fn fill, void *ctx, uint64_t **blocksp)
{
	uint64_t *blocks = malloc(n * sizeof(*blocks) + 1);
	uint8_t *b = vol_buf_get(vol);
	int err = 0;
	*blocksp = NULL;
	if (!blocks || !b || !n) {
		err = n ? -ENOMEM : -EINVAL;
		goto out;
	}
	if ((err = vchain_alloc(vol, goal, n, blocks)))
		goto out;
	for (unsigned i = 0; i < n && !err; i++) {
		memset(b, 0, vol->blocksize);
		put_be64(b + 24, i + 1 < n ? blocks[i + 1] : 0);
		fill(ctx, i, b);
		vchain_seal(b, vol->blocksize);
		err = dev_pwrite(&vol->dev, b, vol->blocksize,
				 blocks[i] << vol->blockbits);
	}
	if (err) {
		for (unsigned i = 0; i < n; i++)
			bfree_now(vol, blocks[i], 1);
		goto out;
	}
	*blocksp = blocks;
	blocks = NULL;
out:
	if (b)
		vol_buf_put(vol, b);
	free(blocks);
	return err;
}

/* ---- the chains a leaf's load met (for its store) ---- */

void vechain_seen_reset(struct vechain_seen *s)
{
	for (unsigned i = 0; i < s->n; i++) {
		free(s->v[i].blocks);
		free(s->v[i].elem);
	}
	s->n = 0;
}

void vechain_seen_free(struct vechain_seen *s)
{
	vechain_seen_reset(s);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int seen_add(struct vechain_seen *s, uint64_t logical, uint64_t first,
		    const uint64_t *blocks, unsigned nblocks,
		    const struct vextent *elem, unsigned nelem)
{
	if (s->n == s->cap) {
		unsigned cap = s->cap ? s->cap * 2 : 4;
		struct vechain_old *v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	struct vechain_old *o = &s->v[s->n];
	*o = (struct vechain_old){ .logical = logical, .first = first,
				   .nblocks = nblocks, .nelem = nelem };
	o->blocks = malloc(nblocks * sizeof(*blocks) + 1);
	o->elem = malloc(nelem * sizeof(*elem) + 1);
	if (!o->blocks || !o->elem) {
		free(o->blocks);
		free(o->elem);
		return -ENOMEM;
	}
	memcpy(o->blocks, blocks, nblocks * sizeof(*blocks));
	memcpy(o->elem, elem, nelem * sizeof(*elem));
	s->n++;
	return 0;
}

int vextents_load_vol(struct tux3_volume *vol, tux3_ino_t inum,
		      const uint8_t *leaf, struct vextents *x,
		      struct vechain_seen *seen)
{
	unsigned n = vleaf_count(leaf);
	uint64_t *blocks = NULL;
	int err = vextents_reserve(x, n);
	x->n = 0;
	if (seen)
		vechain_seen_reset(seen);
	for (unsigned i = 0; i < n && !err; i++) {
		struct vextent r;
		vleaf_get(leaf, i, &r);
		if (!(r.flags & VEXT_ELIST)) {
			r.flags = 0;
			x->r[x->n++] = r;
			continue;
		}
		unsigned from = x->n, nb = 0;
		if (!blocks && !(blocks = malloc(vechain_max_blocks(
				vol->blocksize) * sizeof(*blocks)))) {
			err = -ENOMEM;
			break;
		}
		err = chain_read(vol, inum, r.logical, r.phys, x, blocks, &nb);
		if (!err && seen)
			err = seen_add(seen, r.logical, r.phys, blocks, nb,
				       x->r + from, x->n - from);
		/* later records may need room again */
		if (!err)
			err = vextents_reserve(x, x->n + (n - i));
	}
	free(blocks);
	/* room for what one change adds (vext_update's bound) */
	if (!err)
		err = vextents_reserve(x, x->n + vleaf_capacity(vol->blocksize)
					     + 16);
	return err;
}

int vechain_blocks(struct tux3_volume *vol, tux3_ino_t inum,
		   uint64_t logical, uint64_t first, struct vextents *elem,
		   uint64_t **blocks, unsigned *nblocks)
{
	*blocks = malloc(vechain_max_blocks(vol->blocksize) *
			 sizeof(**blocks));
	if (!*blocks)
		return -ENOMEM;
	elem->n = 0;
	int err = chain_read(vol, inum, logical, first, elem, *blocks,
			     nblocks);
	if (err) {
		free(*blocks);
		*blocks = NULL;
		*nblocks = 0;
	}
	return err;
}

/* ---- writing ---- */

struct elem_fill {
	tux3_ino_t inum;
	uint64_t logical;
	const struct vextent *elem;
	unsigned nelem, per;
};

static void elem_fill(void *ctx, unsigned i, uint8_t *b)
{
	const struct elem_fill *f = ctx;
	unsigned from = i * f->per;
	unsigned m = f->nelem - from < f->per ? f->nelem - from : f->per;
	put_be32(b, VECHAIN_MAGIC);
	put_be64(b + 8, f->inum);
	put_be64(b + 16, f->logical);
	put_be32(b + 32, i);
	put_be32(b + 36, m);
	for (unsigned k = 0; k < m; k++) {
		const struct vextent *e = &f->elem[from + k];
		put_be64(b + VECHAIN_HEADER + k * VECHAIN_ELEM,
			 e->phys << 16 | (uint64_t)e->label << 4);
	}
}

int vechain_write(struct tux3_volume *vol, tux3_ino_t inum, uint64_t logical,
		  const struct vextent *elem, unsigned nelem, uint64_t goal,
		  uint64_t **blocksp, unsigned *nblocksp)
{
	struct elem_fill f = { inum, logical, elem, nelem,
			       vechain_per_block(vol->blocksize) };
	unsigned n = (nelem + f.per - 1) / f.per;
	int err = vchain_put(vol, goal, n, elem_fill, &f, blocksp);
	*nblocksp = err ? 0 : n;
	return err;
}

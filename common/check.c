/*
 * Block ownership against the allocation bitmap: the first piece of the
 * checker that fsck.tux3 will be the front end of.  A visitor on the
 * walker marks every block the volume references (tree nodes, extents,
 * log blocks, the reserved area, blocks the log frees only at the next
 * unify) in a shadow map, then compares it with the live bitmap.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "internal.h"
#include "tux3_walk.h"

struct shadow {
	struct tux3_volume *vol;
	uint8_t *map;		/* one bit per block */
	tux3_check_fn report;
	void *ctx;
	unsigned problems;
};

static void report(struct shadow *s, uint64_t block, uint64_t count,
		   enum tux3_block_problem what)
{
	s->problems++;
	if (s->report)
		s->report(s->ctx, block, count, what);
}

static void mark(struct shadow *s, uint64_t block, uint64_t count)
{
	if (!vol_extent_valid(s->vol, block, count)) {
		report(s, block, count, TUX3_BLOCK_OUTSIDE);
		return;
	}
	for (uint64_t b = block; b < block + count; b++) {
		uint8_t bit = (uint8_t)(1u << (b & 7));
		if (s->map[b >> 3] & bit)
			report(s, b, 1, TUX3_BLOCK_SHARED);
		s->map[b >> 3] |= bit;
	}
}

static int on_node(void *ctx, const struct tux3_node_info *n)
{
	mark(ctx, n->block, 1);
	return 0;
}

static int on_logblock(void *ctx, unsigned index, tux3_block_t block,
		       unsigned bytes, tux3_block_t chain)
{
	(void)index; (void)bytes; (void)chain;
	mark(ctx, block, 1);
	return 0;
}

static int on_extent(void *ctx, tux3_ino_t ino, uint64_t logical,
		     tux3_block_t physical, uint64_t count, uint32_t version,
		     tux3_block_t leaf)
{
	(void)ino; (void)logical; (void)version; (void)leaf;
	if (physical)
		mark(ctx, physical, count);
	return 0;
}

static int on_error(void *ctx, const struct tux3_error *e)
{
	struct shadow *s = ctx;
	report(s, e->block, 1, TUX3_BLOCK_UNREADABLE);
	return 0;
}

int tux3_check_alloc(struct tux3_volume *vol, tux3_check_fn fn, void *ctx)
{
	struct shadow s = { .vol = vol, .report = fn, .ctx = ctx };
	struct tux3_walk_ops ops = {
		.bnode = on_node, .leaf = on_node, .logblock = on_logblock,
		.extent = on_extent, .error = on_error,
	};
	s.map = calloc((size_t)((vol->volblocks + 7) >> 3), 1);
	if (!s.map)
		return -ENOMEM;
	mark(&s, 0, vol->reserved_blocks);
	/* still in use until the next unify frees them */
	for (unsigned i = 0; i < vol->ndeunify; i++) {
		bool is_log = false;
		for (unsigned k = 0; k < vol->logcount; k++)
			if (vol->log && vol->log[k].blocknr ==
			    vol->deunify[i].block)
				is_log = true;
		if (!is_log)
			mark(&s, vol->deunify[i].block, vol->deunify[i].count);
	}
	/* freed by the open delta: in use until its commit is durable */
	for (size_t i = 0; i < vol->defer_free.count; i++)
		mark(&s, vol->defer_free.v[i].block, vol->defer_free.v[i].count);
	int err = tux3_walk(vol, &ops, &s);
	if (err < 0 && err != -EUCLEAN) {
		free(s.map);
		return err;
	}
	for (uint64_t b = 0; b < vol->volblocks; b++) {
		int used = bitmap_test(vol, b);
		if (used < 0) {
			free(s.map);
			return used;
		}
		bool ref = s.map[b >> 3] & (1u << (b & 7));
		if (used && !ref)
			report(&s, b, 1, TUX3_BLOCK_LEAKED);
		else if (!used && ref)
			report(&s, b, 1, TUX3_BLOCK_FREE_IN_USE);
	}
	free(s.map);
	return (int)s.problems;
}

/*
 * Replay overlay: bnode images rebuilt in memory by log replay.  Between
 * unifies the on-disk copy of a bnode is stale (or was never written), so
 * every metadata read looks here first.
 */
#include <stdlib.h>
#include "io/io.h"

static size_t slot_of(const struct overlay *ov, uint64_t block)
{
	uint64_t h = block * 0x9e3779b97f4a7c15ULL;
	return (size_t)(h >> 20) & (ov->cap - 1);
}

static struct overlay_ent *lookup(struct overlay *ov, uint64_t block)
{
	if (!ov->cap)
		return NULL;
	for (size_t i = slot_of(ov, block);; i = (i + 1) & (ov->cap - 1)) {
		struct overlay_ent *e = &ov->ents[i];
		if (!e->block)
			return NULL;
		if (e->block == block)
			return e;
	}
}

const uint8_t *overlay_find(struct overlay *ov, uint64_t block,
			    bool *dropped)
{
	struct overlay_ent *e = lookup(ov, block);
	if (dropped)
		*dropped = e && !e->data;
	return e ? e->data : NULL;
}

uint8_t *overlay_edit(struct overlay *ov, uint64_t block, bool *dropped)
{
	struct overlay_ent *e = lookup(ov, block);
	if (dropped)
		*dropped = e && !e->data;
	if (e && e->data)
		node_memo_forget(ov->memo, block, 1);
	return e ? e->data : NULL;
}

/* Move the entries into a table of ncap slots; without keep_clean, the
 * clean images and the drop marks are freed on the way. */
static int rebuild(struct overlay *ov, size_t ncap, bool keep_clean)
{
	struct overlay_ent *n = calloc(ncap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	struct overlay old = *ov;
	ov->ents = n;
	ov->cap = ncap;
	ov->count = 0;
	for (size_t i = 0; i < old.cap; i++) {
		struct overlay_ent *e = &old.ents[i];
		if (!e->block)
			continue;
		if (!keep_clean && (!e->data || !e->flags)) {
			free(e->data);
			continue;
		}
		size_t j = slot_of(ov, e->block);
		while (ov->ents[j].block)
			j = (j + 1) & (ov->cap - 1);
		ov->ents[j] = *e;
		ov->count++;
	}
	free(old.ents);
	return 0;
}

static int grow(struct overlay *ov)
{
	return rebuild(ov, ov->cap ? ov->cap * 2 : 64, true);
}

/* Get (creating if needed, zero-filled) the image of a block. Block 0 is
 * never a metadata block, so it doubles as the empty-slot marker. */
int overlay_put(struct overlay *ov, uint64_t block, unsigned size,
		uint8_t **data)
{
	if (!block)
		return -EINVAL;
	node_memo_forget(ov->memo, block, 1);	/* the caller changes it */
	struct overlay_ent *e = lookup(ov, block);
	if (!e) {
		if ((ov->count + 1) * 2 > ov->cap) {
			int err = grow(ov);
			if (err)
				return err;
		}
		size_t i = slot_of(ov, block);
		while (ov->ents[i].block)
			i = (i + 1) & (ov->cap - 1);
		e = &ov->ents[i];
		e->block = block;
		e->data = NULL;
		e->flags = 0;
		ov->count++;
	}
	if (!e->data) {
		e->data = calloc(1, size);
		if (!e->data)
			return -ENOMEM;
	}
	*data = e->data;
	return 0;
}

void overlay_drop(struct overlay *ov, uint64_t block)
{
	node_memo_forget(ov->memo, block, 1);
	struct overlay_ent *e = lookup(ov, block);
	if (e) {
		free(e->data);
		e->data = NULL;
		e->flags = 0;
	}
}

/* Remove a block's entry altogether, as if it had never been put (not a
 * drop, which is remembered): replay's salvage mode undoes a record that
 * did not apply.  Linear probing: the entries after the hole that could
 * have sat in it move back. */
void overlay_forget(struct overlay *ov, uint64_t block)
{
	node_memo_forget(ov->memo, block, 1);
	struct overlay_ent *e = lookup(ov, block);
	if (!e)
		return;
	free(e->data);
	size_t mask = ov->cap - 1, hole = (size_t)(e - ov->ents);
	ov->ents[hole] = (struct overlay_ent){ 0 };
	ov->count--;
	for (size_t i = (hole + 1) & mask; ov->ents[i].block;
	     i = (i + 1) & mask) {
		size_t home = slot_of(ov, ov->ents[i].block);
		/* the entry stays unless the hole lies on its probe path,
		 * cyclically between its home slot and where it is */
		bool stays = hole <= i ? home > hole && home <= i :
					 home > hole || home <= i;
		if (stays)
			continue;
		ov->ents[hole] = ov->ents[i];
		ov->ents[i] = (struct overlay_ent){ 0 };
		hole = i;
	}
}

/* Written images (write_block clears their flags) and images read
 * unchanged stay as a clean cache, and a drop mark stays until the
 * block is put again: without a bound the overlay would hold every
 * bnode and leaf a long session of writes touched (populate: ~13 KiB a
 * hundred files).  Rebuilt in one pass, only when over the bound, so
 * the cost per commit is amortized constant; none of them is needed,
 * as reads fall through to the disk, which has the same bytes (a drop
 * mark already reads through). */
void overlay_shed_clean(struct overlay *ov, size_t keep)
{
	if (ov->count <= keep)
		return;
	size_t live = 0, cap = 64;
	for (size_t i = 0; i < ov->cap; i++)
		if (ov->ents[i].block && ov->ents[i].data &&
		    ov->ents[i].flags)
			live++;
	while (cap < live * 2 + 2)
		cap *= 2;
	/* reads fall through to the disk now, which has the same bytes;
	 * the memo is forgotten all the same, as cheap and plainly right */
	node_memo_clear(ov->memo);
	rebuild(ov, cap, false);	/* no memory: keep the cache, larger */
}

void overlay_free(struct overlay *ov)
{
	struct node_memo *memo = ov->memo;
	for (size_t i = 0; i < ov->cap; i++)
		free(ov->ents[i].data);
	free(ov->ents);
	memset(ov, 0, sizeof(*ov));
	node_memo_clear(memo);
	ov->memo = memo;
}

void overlay_set_flags(struct overlay *ov, uint64_t block, unsigned flags)
{
	struct overlay_ent *e = lookup(ov, block);
	if (e)
		e->flags = flags;
}

unsigned overlay_flags(struct overlay *ov, uint64_t block)
{
	struct overlay_ent *e = lookup(ov, block);
	return e && e->data ? e->flags : 0;
}

int overlay_for_each(struct overlay *ov, unsigned mask,
		     int (*fn)(void *ctx, uint64_t block, uint8_t *data,
			       unsigned *flags), void *ctx)
{
	for (size_t i = 0; i < ov->cap; i++) {
		struct overlay_ent *e = &ov->ents[i];
		if (!e->block || !e->data || !(e->flags & mask))
			continue;
		node_memo_forget(ov->memo, e->block, 1);	/* fn may edit */
		int err = fn(ctx, e->block, e->data, &e->flags);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Keeping the on-disk directory index in step (doc/format.md 15.5):
 * a pair added with each name, removed with it, buckets split and the
 * table doubled as they fill; and the build from the entries, which a
 * directory gets when it reaches DIRHASH_MIN_BLOCKS blocks, or when its
 * index is stale or damaged.  Every block goes through inode_write_data
 * in the delta of the change, so the index is as crash-atomic as the
 * entries.
 */
#include <stdlib.h>
#include <string.h>
#include "write/write.h"

/* Seal and write one index block of dir. */
static int put_index(struct tux3_volume *vol, struct inode *dir, uint8_t *blk,
		     uint64_t logical)
{
	dirhash_seal(blk, vol->blocksize, dir->inum, logical);
	return inode_write_data(vol, dir, blk, vol->blocksize,
				logical << vol->blockbits, true);
}

static uint64_t dir_blocks(const struct tux3_volume *vol,
			   const struct inode *dir)
{
	return dir->size >> vol->blockbits;
}

/* ---- the table as one array (doubling, splits) ---- */

struct dx_table {
	uint32_t *slot;
	uint32_t nslots, nblocks;
	uint32_t *at;		/* logical block of each table block */
};

static void table_free(struct dx_table *t)
{
	free(t->slot);
	free(t->at);
}

static int table_load(struct tux3_volume *vol, const struct inode *dir,
		      const struct dirhash_path *p, uint8_t *blk,
		      struct dx_table *t)
{
	unsigned per = dirhash_table_slots(vol->blocksize);
	*t = (struct dx_table){ .nslots = 1u << p->root.depth,
				.nblocks = p->root.count };
	t->slot = malloc(sizeof(*t->slot) * (size_t)t->nslots * 2);
	t->at = malloc(sizeof(*t->at) * ((size_t)t->nblocks * 2 + 1));
	if (!t->slot || !t->at)
		return -ENOMEM;
	for (uint32_t b = 0; b < t->nblocks; b++) {
		struct dirhash_head h;
		t->at[b] = dirhash_item(p->rootblk, b);
		int err = dirhash_read(vol, dir, t->at[b], DIRHASH_TABLE, blk,
				       &h);
		if (err)
			return err;
		for (uint32_t i = 0; i < h.count; i++)
			if (b * per + i < t->nslots)
				t->slot[b * per + i] = dirhash_item(blk, i);
	}
	return 0;
}

/* Write the table blocks first..last-1 and the root (depth, blocks). */
static int table_store(struct tux3_volume *vol, struct inode *dir,
		       const struct dirhash_path *p, unsigned depth,
		       const struct dx_table *t, uint32_t first, uint32_t last,
		       uint8_t *blk)
{
	unsigned bs = vol->blocksize, per = dirhash_table_slots(bs);
	int err = 0;
	for (uint32_t b = first; b < last && !err; b++) {
		uint32_t n = t->nslots - b * per < per ? t->nslots - b * per
						       : per;
		struct dirhash_head h = { .kind = DIRHASH_TABLE, .count = n,
					  .gen = vol->dxgen };
		dirhash_init(blk, bs, &h);
		for (uint32_t i = 0; i < n; i++)
			dirhash_set_item(blk, i, t->slot[b * per + i]);
		err = put_index(vol, dir, blk, t->at[b]);
	}
	if (err)
		return err;
	struct dirhash_head r = { .kind = DIRHASH_ROOT, .depth = depth,
				  .count = t->nblocks, .gen = vol->dxgen,
				  .seed = p->root.seed };
	dirhash_init(blk, bs, &r);
	for (uint32_t b = 0; b < t->nblocks; b++)
		dirhash_set_item(blk, b, t->at[b]);
	return put_index(vol, dir, blk, 0);
}

/* G -> G + 1: every slot becomes two; new table blocks are appended. */
static int table_double(struct tux3_volume *vol, struct inode *dir,
			const struct dirhash_path *p, uint8_t *blk)
{
	unsigned per = dirhash_table_slots(vol->blocksize);
	struct dx_table t;
	int err = table_load(vol, dir, p, blk, &t);
	if (!err) {
		for (uint32_t s = t.nslots; s-- > 0;)
			t.slot[2 * s] = t.slot[2 * s + 1] = t.slot[s];
		t.nslots *= 2;
		uint32_t want = (t.nslots + per - 1) / per;
		uint32_t next = (uint32_t)dir_blocks(vol, dir);
		while (t.nblocks < want)
			t.at[t.nblocks++] = next++;
		err = table_store(vol, dir, p, p->root.depth + 1, &t, 0,
				  t.nblocks, blk);
	}
	table_free(&t);
	return err;
}

/* A full bucket of local depth L < G: the pairs with hash bit L set go
 * to a new bucket (appended), and the upper half of its slots names it. */
static int bucket_split(struct tux3_volume *vol, struct inode *dir,
			struct dirhash_path *p, uint8_t *blk)
{
	unsigned bs = vol->blocksize, l = p->bucket.depth, g = p->root.depth;
	uint32_t bit = 1u << (31 - l), keep = 0, moved = 0;
	uint64_t new_at = dir_blocks(vol, dir);
	struct dirhash_head h = { .kind = DIRHASH_BUCKET, .depth = l + 1,
				  .gen = vol->dxgen };
	dirhash_init(blk, bs, &h);
	for (uint32_t i = 0; i < p->bucket.count; i++) {
		uint32_t hash = dirhash_item(p->bucketblk, 2 * i);
		uint32_t at = dirhash_item(p->bucketblk, 2 * i + 1);
		uint8_t *to = hash & bit ? blk : p->bucketblk;
		uint32_t n = hash & bit ? moved++ : keep++;
		dirhash_set_item(to, 2 * n, hash);
		dirhash_set_item(to, 2 * n + 1, at);
	}
	dirhash_set_count(blk, moved);
	dirhash_set_count(p->bucketblk, keep);
	p->bucketblk[21] = (uint8_t)(l + 1);
	int err = put_index(vol, dir, blk, new_at);
	if (!err)
		err = put_index(vol, dir, p->bucketblk, p->bucket_at);
	if (err)
		return err;
	struct dx_table t;
	err = table_load(vol, dir, p, blk, &t);
	if (!err) {
		uint32_t span = 1u << (g - l - 1);
		uint32_t base = (p->slot >> (g - l)) << (g - l);
		for (uint32_t s = base + span; s < base + 2 * span; s++)
			t.slot[s] = (uint32_t)new_at;
		unsigned per = dirhash_table_slots(bs);
		err = table_store(vol, dir, p, g, &t, (base + span) / per,
				  (base + 2 * span - 1) / per + 1, blk);
	}
	table_free(&t);
	return err;
}

/* Add the pair of name in entry block logical: 0, DIRHASH_NONE (no
 * usable index, or it cannot take the pair), or a negative errno. */
static int pair_add(struct tux3_volume *vol, struct inode *dir,
		    const char *name, unsigned len, uint64_t logical)
{
	unsigned bs = vol->blocksize, cap = dirhash_bucket_pairs(bs);
	uint8_t *blk = malloc(bs);
	int err = blk ? DIRHASH_NONE : -ENOMEM;
	for (unsigned tries = 0; blk && tries < 70; tries++) {
		struct dirhash_path p;
		err = dirhash_walk(vol, dir, name, len, &p);
		if (!err && p.bucket.count < cap) {
			dirhash_set_item(p.bucketblk, 2 * p.bucket.count,
					 p.hash);
			dirhash_set_item(p.bucketblk, 2 * p.bucket.count + 1,
					 (uint32_t)logical);
			dirhash_set_count(p.bucketblk, p.bucket.count + 1);
			err = put_index(vol, dir, p.bucketblk, p.bucket_at);
			dirhash_path_free(&p);
			break;
		}
		if (!err && p.bucket.depth < p.root.depth)
			err = bucket_split(vol, dir, &p, blk);
		else if (!err && p.root.depth < dirhash_max_depth(bs))
			err = table_double(vol, dir, &p, blk);
		else if (!err)
			err = DIRHASH_NONE;	/* one hash fills a bucket */
		dirhash_path_free(&p);
		if (err)
			break;
	}
	free(blk);
	return err;
}

/* Drop the pair of name in entry block logical: 0, DIRHASH_NONE (no
 * usable index, or the pair is not there), or a negative errno. */
static int pair_remove(struct tux3_volume *vol, struct inode *dir,
		       const char *name, unsigned len, uint64_t logical)
{
	struct dirhash_path p;
	int err = dirhash_walk(vol, dir, name, len, &p);
	uint32_t n = p.bucket.count, i = 0;
	while (!err && i < n &&
	       (dirhash_item(p.bucketblk, 2 * i) != p.hash ||
		dirhash_item(p.bucketblk, 2 * i + 1) != logical))
		i++;
	if (!err && i == n)
		err = DIRHASH_NONE;
	if (!err) {
		dirhash_set_item(p.bucketblk, 2 * i,
				 dirhash_item(p.bucketblk, 2 * (n - 1)));
		dirhash_set_item(p.bucketblk, 2 * i + 1,
				 dirhash_item(p.bucketblk, 2 * n - 1));
		dirhash_set_count(p.bucketblk, n - 1);
		err = put_index(vol, dir, p.bucketblk, p.bucket_at);
	}
	dirhash_path_free(&p);
	return err;
}

/* ---- the build ---- */

struct dx_pair {
	uint32_t hash, block;
};

struct dx_build {
	struct tux3_volume *vol;
	uint32_t seed;
	struct dx_pair *pair;
	size_t npairs, paircap;
	uint32_t *spare;	/* old index blocks, to be used again */
	size_t nspare, sparecap;
	uint64_t logical;	/* of the block being read */
	bool move0;		/* block 0 holds entries: they move */
	uint8_t *block0;
};

static int build_entry(void *ctx, const struct dirent_info *d)
{
	struct dx_build *b = ctx;
	if (array_grow((void **)&b->pair, &b->paircap, b->npairs,
		       sizeof(*b->pair)))
		return -ENOMEM;
	b->pair[b->npairs++] = (struct dx_pair){
		dirhash_name(b->seed, d->name, d->name_len),
		(uint32_t)b->logical };
	if (!b->logical)
		b->move0 = true;
	return 0;
}

static int build_block(void *ctx, uint64_t logical, uint64_t physical,
		       const uint8_t *blk, int read_err)
{
	struct dx_build *b = ctx;
	struct tux3_volume *vol = b->vol;
	if (read_err)
		return read_err;
	if (dirhash_is_index(blk, vol->blocksize)) {
		if (!logical)
			return 0;
		if (array_grow((void **)&b->spare, &b->sparecap, b->nspare,
			       sizeof(*b->spare)))
			return -ENOMEM;
		b->spare[b->nspare++] = (uint32_t)logical;
		return 0;
	}
	b->logical = logical;
	int r = dirblock_iterate(vol, blk, vol->blocksize,
				 logical << vol->blockbits, physical, 0,
				 build_entry, b);
	if (!r && !logical && b->move0)
		memcpy(b->block0, blk, vol->blocksize);
	return r == -EUCLEAN ? DIRHASH_NONE : r;
}

static int pair_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct dx_pair *)a)->hash;
	uint32_t y = ((const struct dx_pair *)b)->hash;
	return x < y ? -1 : x > y;
}

/* The next block for the index: an old index block, else a new one. */
static uint32_t next_block(struct dx_build *b, uint64_t *append)
{
	if (b->nspare)
		return b->spare[--b->nspare];
	return (uint32_t)(*append)++;
}

/* The buckets of the sorted pairs [from, to), all of hash prefix of
 * depth l: split until each fits; returns the deepest bucket's depth
 * and appends each bucket as (first pair, depth) to out. */
struct dx_leaf {
	size_t from, to;
	unsigned depth;
};

static int plan_leaves(const struct dx_pair *pair, size_t from, size_t to,
		       unsigned l, unsigned cap, unsigned maxd,
		       struct dx_leaf **out, size_t *n, size_t *ncap)
{
	if (to - from <= cap) {
		if (array_grow((void **)out, ncap, *n, sizeof(**out)))
			return -ENOMEM;
		(*out)[(*n)++] = (struct dx_leaf){ from, to, l };
		return 0;
	}
	if (l >= maxd)
		return DIRHASH_NONE;
	size_t mid = from;
	uint32_t bit = 1u << (31 - l);
	while (mid < to && !(pair[mid].hash & bit))
		mid++;
	int err = plan_leaves(pair, from, mid, l + 1, cap, maxd, out, n, ncap);
	return err ? err : plan_leaves(pair, mid, to, l + 1, cap, maxd, out,
				       n, ncap);
}

static int write_index(struct dx_build *b, struct inode *dir,
		       const struct dx_leaf *leaf, size_t nleaves)
{
	struct tux3_volume *vol = b->vol;
	unsigned bs = vol->blocksize, per = dirhash_table_slots(bs), g = 0;
	uint64_t append = dir_blocks(vol, dir);
	uint8_t *blk = malloc(bs);
	int err = 0;
	for (size_t i = 0; i < nleaves; i++)
		if (leaf[i].depth > g)
			g = leaf[i].depth;
	struct dx_table t = { .nslots = 1u << g };
	t.nblocks = (t.nslots + per - 1) / per;
	t.slot = malloc(sizeof(*t.slot) * t.nslots);
	t.at = malloc(sizeof(*t.at) * t.nblocks);
	if (!blk || !t.slot || !t.at)
		err = -ENOMEM;
	if (!err && b->move0) {
		uint32_t to = next_block(b, &append);
		for (size_t i = 0; i < b->npairs; i++)
			if (!b->pair[i].block)
				b->pair[i].block = to;
		err = inode_write_data(vol, dir, b->block0, bs,
				       (uint64_t)to << vol->blockbits, false);
	}
	uint32_t slot = 0;
	for (size_t i = 0; i < nleaves && !err; i++) {
		uint32_t at = next_block(b, &append);
		struct dirhash_head h = { .kind = DIRHASH_BUCKET,
					  .depth = leaf[i].depth,
					  .count = (uint32_t)(leaf[i].to -
							      leaf[i].from),
					  .gen = vol->dxgen };
		dirhash_init(blk, bs, &h);
		for (size_t k = leaf[i].from; k < leaf[i].to; k++) {
			uint32_t n = (uint32_t)(k - leaf[i].from);
			dirhash_set_item(blk, 2 * n, b->pair[k].hash);
			dirhash_set_item(blk, 2 * n + 1, b->pair[k].block);
		}
		err = put_index(vol, dir, blk, at);
		for (uint32_t s = 0; s < 1u << (g - leaf[i].depth); s++)
			t.slot[slot++] = at;
	}
	for (uint32_t k = 0; k < t.nblocks; k++)
		t.at[k] = next_block(b, &append);
	struct dirhash_path p = { .root = { .seed = b->seed },
				  .rootblk = NULL };
	if (!err)
		err = table_store(vol, dir, &p, g, &t, 0, t.nblocks, blk);
	/* old index blocks left over become empty entry blocks */
	while (!err && b->nspare) {
		dirblock_init(blk, bs);
		err = inode_write_data(vol, dir, blk, bs,
				       (uint64_t)b->spare[--b->nspare]
					       << vol->blockbits, true);
	}
	table_free(&t);
	free(blk);
	return err;
}

int dirhash_build(struct tux3_volume *vol, struct inode *dir)
{
	struct dx_build b = { .vol = vol, .seed = dirhash_seed(vol, dir->inum),
			      .block0 = malloc(vol->blocksize) };
	struct dx_leaf *leaf = NULL;
	size_t nleaves = 0, leafcap = 0;
	int err = b.block0 ? 0 : -ENOMEM;

	if (!err && (!dirhash_feature(vol) || !dir->size))
		err = DIRHASH_NONE;
	if (!err)
		err = dir_walk_blocks(vol, dir, build_block, &b);
	if (err == DIRHASH_NONE || err == -EUCLEAN)
		tux3_clear_error(vol);
	if (!err) {
		qsort(b.pair, b.npairs, sizeof(*b.pair), pair_cmp);
		err = plan_leaves(b.pair, 0, b.npairs, 0,
				  dirhash_bucket_pairs(vol->blocksize),
				  dirhash_max_depth(vol->blocksize), &leaf,
				  &nleaves, &leafcap);
	}
	if (!err)
		err = write_index(&b, dir, leaf, nleaves);
	free(leaf);
	free(b.pair);
	free(b.spare);
	free(b.block0);
	return err == -EUCLEAN ? DIRHASH_NONE : err;
}

/* Is the directory's index one that gave up (a root of the current
 * generation naming no table)?  Then no build is tried on each add. */
static bool gave_up(struct tux3_volume *vol, const struct inode *dir)
{
	struct dirhash_head h;
	uint8_t *blk = malloc(vol->blocksize);
	bool r = blk && !dirhash_read(vol, dir, 0, DIRHASH_ROOT, blk, &h) &&
		 !h.count;
	free(blk);
	return r;
}

/* The index a directory cannot keep: a root that names no table. */
static int give_up(struct tux3_volume *vol, struct inode *dir)
{
	uint8_t *blk = malloc(vol->blocksize);
	if (!blk)
		return -ENOMEM;
	struct dirhash_head r = { .kind = DIRHASH_ROOT, .gen = vol->dxgen,
				  .seed = dirhash_seed(vol, dir->inum) };
	dirhash_init(blk, vol->blocksize, &r);
	int err = put_index(vol, dir, blk, 0);
	free(blk);
	return err;
}

/* Rebuild after the index could not follow; a directory whose names
 * cannot be indexed gets the root that says so. */
static int rebuild(struct tux3_volume *vol, struct inode *dir)
{
	int err = dirhash_build(vol, dir);
	if (err == DIRHASH_NONE && dir_blocks(vol, dir) &&
	    !gave_up(vol, dir)) {
		uint8_t *blk = malloc(vol->blocksize);
		/* block 0 must be free of entries for the root */
		err = blk ? dir_read_block(vol, dir, 0, blk) : -ENOMEM;
		if (!err && dirhash_is_index(blk, vol->blocksize))
			err = give_up(vol, dir);
		free(blk);
	}
	return err == DIRHASH_NONE ? 0 : err;
}

/* What a pair change answered: an index that could not follow is
 * rebuilt (a small directory, or one that gave up, goes without). */
static int follow(struct tux3_volume *vol, struct inode *dir, int err)
{
	if (err != DIRHASH_NONE)
		return err;
	if (dir_blocks(vol, dir) < DIRHASH_MIN_BLOCKS || gave_up(vol, dir))
		return 0;
	return rebuild(vol, dir);
}

int dirhash_added(struct tux3_volume *vol, struct inode *dir,
		  const char *name, unsigned len, uint64_t logical)
{
	if (!dirhash_feature(vol))
		return 0;
	return follow(vol, dir, pair_add(vol, dir, name, len, logical));
}

int dirhash_removed(struct tux3_volume *vol, struct inode *dir,
		    const char *name, unsigned len, uint64_t logical)
{
	if (!dirhash_feature(vol))
		return 0;
	return follow(vol, dir, pair_remove(vol, dir, name, len, logical));
}

/*
 * The in-memory directory index (see dir_index.h).  Per directory:
 *   - entries: one slot per live name (hash, block, offset), chained in
 *     a hash bucket and in its block's list; freed slots are reused;
 *   - buckets: heads of the hash chains, a power of two, at most one
 *     live name per bucket on average;
 *   - per block: the head of its list, and a max segment tree of each
 *     block's room, so the first block (lowest number, as the linear
 *     first fit) that takes a record is found in log(blocks) steps.
 * A block is indexed from its bytes, checked as the linear path checks
 * them: a directory with a block that does not decode, or a hole, gets
 * no index (the linear path then reports the damage as it always did).
 * A lookup reads the block a candidate names and compares the record
 * there, so a hash collision costs a read, never a wrong answer; a
 * record that is not what the index says drops the index.
 */
#include <stdlib.h>
#include <time.h>
#include "core.h"

#define NIL UINT32_MAX

enum ix_state {
	IX_READY,
	IX_DAMAGED,	/* a block does not decode, or a hole: linear */
	IX_TOO_BIG,	/* over the memory bound alone: linear */
};

struct dx_entry {
	uint32_t hash;
	uint32_t block;		/* NIL: a free slot */
	uint32_t next;		/* hash chain, or the free list */
	uint32_t bnext;		/* the block's list */
	uint16_t off;		/* records are < 65536 bytes into a block */
};

struct dir_index {
	tux3_ino_t inum;
	uint32_t vtag;		/* the version it was read in */
	uint64_t size;		/* the directory's size it is in step with */
	uint64_t last_use;
	enum ix_state state;
	struct dx_entry *ents;
	uint32_t nents, entcap, freelist, live;
	uint32_t *bucket;
	uint32_t nbucket;
	uint32_t nblocks, blockcap;
	uint32_t *bhead;	/* blockcap */
	uint32_t *room;		/* 2 * blockcap: a max tree, leaves at
				 * blockcap + block */
	size_t bytes;
};

struct dir_index_set {
	unsigned min_blocks;	/* 0: switched off */
	size_t max_bytes, bytes;
	uint64_t tick, builds;
	uint32_t seed;
	dir_index_hash_fn hash;
	struct dir_index *dirs[DIR_INDEX_MAX_DIRS];
	unsigned ndirs;
	uint8_t *buf;		/* one block, for the reads of a lookup */
};

/* The names are not ours, so their hash should not be predictable from
 * them alone: the on-disk index's hash with a per-volume seed. */
static uint32_t default_hash(uint32_t seed, const char *name, unsigned len)
{
	return dirhash_name(seed, name, len);
}

static struct dir_index_set *get_set(struct tux3_volume *vol)
{
	if (vol->dirindex)
		return vol->dirindex;
	struct dir_index_set *set = calloc(1, sizeof(*set));
	if (!set)
		return NULL;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	set->seed = (uint32_t)(t.tv_nsec ^ (uintptr_t)set ^
			       ((uintptr_t)set >> 32));
	set->min_blocks = DIR_INDEX_MIN_BLOCKS;
	set->max_bytes = DIR_INDEX_MAX_BYTES;
	set->hash = default_hash;
	vol->dirindex = set;
	return set;
}

/* ---- one directory's index ---- */

static void ix_account(struct dir_index_set *set, struct dir_index *ix)
{
	size_t b = sizeof(*ix) + (size_t)ix->entcap * sizeof(*ix->ents) +
		   (size_t)ix->nbucket * sizeof(*ix->bucket) +
		   (size_t)ix->blockcap * 3 * sizeof(uint32_t);
	set->bytes = set->bytes - ix->bytes + b;
	ix->bytes = b;
}

static void ix_release(struct dir_index *ix)
{
	free(ix->ents);
	free(ix->bucket);
	free(ix->bhead);
	free(ix->room);
	ix->ents = NULL;
	ix->bucket = ix->bhead = ix->room = NULL;
	ix->nents = ix->entcap = ix->live = ix->nbucket = 0;
	ix->nblocks = ix->blockcap = 0;
	ix->freelist = NIL;
}

static void ix_drop(struct dir_index_set *set, unsigned i)
{
	struct dir_index *ix = set->dirs[i];
	set->bytes -= ix->bytes;
	ix_release(ix);
	free(ix);
	set->dirs[i] = set->dirs[--set->ndirs];
}

/* Not an index any more, but remembered as one the linear path serves. */
static void ix_give_up(struct dir_index_set *set, struct dir_index *ix,
		       enum ix_state why)
{
	ix_release(ix);
	ix->state = why;
	ix_account(set, ix);
}

static void room_set(struct dir_index *ix, uint32_t block, uint32_t room)
{
	uint32_t k = ix->blockcap + block;
	ix->room[k] = room;
	for (k >>= 1; k; k >>= 1) {
		uint32_t l = ix->room[2 * k], r = ix->room[2 * k + 1];
		ix->room[k] = l > r ? l : r;
	}
}

/* The lowest block whose room is at least need, or nblocks. */
static uint32_t room_first(const struct dir_index *ix, uint32_t need)
{
	if (!ix->blockcap || ix->room[1] < need)
		return ix->nblocks;
	uint32_t k = 1;
	while (k < ix->blockcap)
		k = ix->room[2 * k] >= need ? 2 * k : 2 * k + 1;
	return k - ix->blockcap;
}

static int grow_blocks(struct dir_index *ix, uint32_t want)
{
	if (want <= ix->blockcap)
		return 0;
	uint32_t cap = ix->blockcap ? ix->blockcap : 16;
	while (cap < want) {
		if (cap > UINT32_MAX / 4)
			return -EFBIG;
		cap *= 2;
	}
	uint32_t *bhead = realloc(ix->bhead, cap * sizeof(*bhead));
	if (!bhead)
		return -ENOMEM;
	ix->bhead = bhead;
	uint32_t *room = calloc(2 * (size_t)cap, sizeof(*room));
	if (!room)
		return -ENOMEM;
	for (uint32_t b = ix->blockcap; b < cap; b++)
		bhead[b] = NIL;
	for (uint32_t b = 0; b < ix->nblocks; b++)
		room[cap + b] = ix->room[ix->blockcap + b];
	for (uint32_t k = cap - 1; k; k--)
		room[k] = room[2 * k] > room[2 * k + 1] ? room[2 * k]
							: room[2 * k + 1];
	free(ix->room);
	ix->room = room;
	ix->blockcap = cap;
	return 0;
}

static void bucket_link(struct dir_index *ix, uint32_t id)
{
	uint32_t *head = &ix->bucket[ix->ents[id].hash & (ix->nbucket - 1)];
	ix->ents[id].next = *head;
	*head = id;
}

/* Twice the buckets, every live name chained again. */
static int grow_buckets(struct dir_index *ix)
{
	uint32_t n = ix->nbucket ? ix->nbucket * 2 : 64;
	if (n < ix->nbucket)
		return -EFBIG;
	uint32_t *b = malloc(n * sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		b[i] = NIL;
	free(ix->bucket);
	ix->bucket = b;
	ix->nbucket = n;
	for (uint32_t blk = 0; blk < ix->nblocks; blk++)
		for (uint32_t id = ix->bhead[blk]; id != NIL;
		     id = ix->ents[id].bnext)
			bucket_link(ix, id);
	return 0;
}

static int ent_alloc(struct dir_index *ix, uint32_t *id)
{
	if (ix->freelist != NIL) {
		*id = ix->freelist;
		ix->freelist = ix->ents[*id].next;
		return 0;
	}
	if (ix->nents == ix->entcap) {
		uint32_t cap = ix->entcap ? ix->entcap * 2 : 256;
		if (cap < ix->entcap || cap == NIL)
			return -EFBIG;
		struct dx_entry *e = realloc(ix->ents, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		ix->ents = e;
		ix->entcap = cap;
	}
	*id = ix->nents++;
	return 0;
}

static int ent_add(struct dir_index *ix, uint32_t hash, uint32_t block,
		   unsigned off)
{
	uint32_t id;
	int err;
	if (ix->live >= ix->nbucket && (err = grow_buckets(ix)))
		return err;
	if ((err = ent_alloc(ix, &id)))
		return err;
	ix->ents[id] = (struct dx_entry){ .hash = hash, .block = block,
					  .off = (uint16_t)off,
					  .bnext = ix->bhead[block] };
	ix->bhead[block] = id;
	bucket_link(ix, id);
	ix->live++;
	return 0;
}

static void bucket_unlink(struct dir_index *ix, uint32_t id)
{
	uint32_t *pp = &ix->bucket[ix->ents[id].hash & (ix->nbucket - 1)];
	while (*pp != id)
		pp = &ix->ents[*pp].next;
	*pp = ix->ents[id].next;
}

/* Forget what block held: its names leave the hash chains. */
static void block_clear(struct dir_index *ix, uint32_t block)
{
	uint32_t id = ix->bhead[block];
	while (id != NIL) {
		uint32_t bnext = ix->ents[id].bnext;
		bucket_unlink(ix, id);
		ix->ents[id].block = NIL;
		ix->ents[id].next = ix->freelist;
		ix->freelist = id;
		ix->live--;
		id = bnext;
	}
	ix->bhead[block] = NIL;
	room_set(ix, block, 0);
}

struct index_ctx {
	struct dir_index_set *set;
	struct dir_index *ix;
	uint32_t block;
	unsigned blocksize;
};

static int index_entry(void *ctx, const struct dirent_info *d)
{
	struct index_ctx *c = ctx;
	return ent_add(c->ix, c->set->hash(c->set->seed, d->name, d->name_len),
		       c->block, (unsigned)(d->pos & (c->blocksize - 1)));
}

/*
 * Index one block from its bytes (the block after the last one appends
 * it).  The bytes are checked as the linear path checks them; an error
 * here is not the caller's, so the volume's error is left as it was.
 */
static int index_block(struct tux3_volume *vol, struct dir_index_set *set,
		       struct dir_index *ix, uint64_t logical,
		       const uint8_t *blk)
{
	if (logical > ix->nblocks || logical >= NIL)
		return -EUCLEAN;	/* a hole before it */
	uint32_t b = (uint32_t)logical;
	int err = grow_blocks(ix, b + 1);
	if (err)
		return err;
	if (b == ix->nblocks)
		ix->nblocks++;
	else
		block_clear(ix, b);
	int room = dirblock_room(blk, vol->blocksize);
	if (room < 0)
		return room;
	struct tux3_error saved = vol->error;
	struct index_ctx c = { set, ix, b, vol->blocksize };
	tux3_clear_error(vol);
	err = dirblock_iterate(vol, blk, vol->blocksize,
			       logical << vol->blockbits, TUX3_NONE, ix->inum,
			       index_entry, &c);
	vol->error = saved;
	if (err)
		return err < 0 ? err : -EUCLEAN;
	room_set(ix, b, (uint32_t)room);
	return 0;
}

/* ---- the set: which directories have one ---- */

static int find_slot(const struct dir_index_set *set, tux3_ino_t inum)
{
	for (unsigned i = 0; i < set->ndirs; i++)
		if (set->dirs[i]->inum == inum)
			return (int)i;
	return -1;
}

/* Make room under the bounds by dropping the least recently used
 * indexes other than keep. */
static void evict(struct dir_index_set *set, const struct dir_index *keep,
		  unsigned want_dirs)
{
	while (set->ndirs > want_dirs || set->bytes > set->max_bytes) {
		int lru = -1;
		for (unsigned i = 0; i < set->ndirs; i++)
			if (set->dirs[i] != keep &&
			    (lru < 0 ||
			     set->dirs[i]->last_use < set->dirs[lru]->last_use))
				lru = (int)i;
		if (lru < 0)
			return;
		ix_drop(set, (unsigned)lru);
	}
}

/* After a growth: within the bound, or this one gives up. */
static void bound(struct dir_index_set *set, struct dir_index *ix)
{
	ix_account(set, ix);
	if (set->bytes <= set->max_bytes)
		return;
	evict(set, ix, set->ndirs);
	if (set->bytes > set->max_bytes)
		ix_give_up(set, ix, IX_TOO_BIG);
}

struct build_ctx {
	struct tux3_volume *vol;
	struct dir_index_set *set;
	struct dir_index *ix;
	uint64_t next;		/* the logical block expected next */
};

static int build_block(void *ctx, uint64_t logical, uint64_t physical,
		       const uint8_t *blk, int read_err)
{
	struct build_ctx *c = ctx;
	(void)physical;
	if (read_err)
		return read_err;
	if (logical != c->next)
		return -EUCLEAN;	/* a hole: the linear create fails there */
	c->next++;
	int err = index_block(c->vol, c->set, c->ix, logical, blk);
	if (err)
		return err;
	bound(c->set, c->ix);
	return c->ix->state == IX_READY ? 0 : -E2BIG;
}

static struct dir_index *build(struct tux3_volume *vol,
			       struct dir_index_set *set,
			       const struct inode *dir, uint64_t nblocks)
{
	evict(set, NULL, DIR_INDEX_MAX_DIRS - 1);
	struct dir_index *ix = calloc(1, sizeof(*ix));
	if (!ix)
		return NULL;
	ix->inum = dir->inum;
	ix->vtag = vol->vtag;
	ix->size = dir->size;
	ix->freelist = NIL;
	set->dirs[set->ndirs++] = ix;
	set->builds++;
	ix_account(set, ix);
	struct build_ctx c = { vol, set, ix, 0 };
	struct tux3_error saved = vol->error;
	int err = dir_walk_blocks(vol, dir, build_block, &c);
	vol->error = saved;
	if (!err && c.next != nblocks)
		err = -EUCLEAN;		/* a hole at the end */
	if (err == -ENOMEM) {
		ix_drop(set, (unsigned)find_slot(set, dir->inum));
		return NULL;
	}
	if (err && ix->state == IX_READY)
		ix_give_up(set, ix, IX_DAMAGED);
	return ix;
}

/* The directory's index, built if it is large enough and has none: NULL
 * when the linear path serves it. */
static struct dir_index *index_of(struct tux3_volume *vol,
				  const struct inode *dir)
{
	struct dir_index_set *set = get_set(vol);
	if (!set || !set->min_blocks)
		return NULL;
	int i = find_slot(set, dir->inum);
	if (i >= 0 && set->dirs[i]->state != IX_TOO_BIG &&
	    (set->dirs[i]->vtag != vol->vtag ||
	     set->dirs[i]->size != dir->size)) {
		ix_drop(set, (unsigned)i);	/* changed behind its back */
		i = -1;
	}
	struct dir_index *ix = i >= 0 ? set->dirs[i] : NULL;
	if (!ix) {
		uint64_t nblocks = (dir->size + vol->blocksize - 1) >>
				   vol->blockbits;
		if (nblocks < set->min_blocks || nblocks >= NIL)
			return NULL;
		if (!(ix = build(vol, set, dir, nblocks)))
			return NULL;
	}
	ix->last_use = ++set->tick;
	return ix->state == IX_READY ? ix : NULL;
}

/* ---- the operations ---- */

int dir_index_find(struct tux3_volume *vol, const struct inode *dir,
		   const char *name, unsigned len, struct dirent_info *d)
{
	struct dir_index *ix = index_of(vol, dir);
	if (!ix)
		return DIR_INDEX_NONE;
	struct dir_index_set *set = vol->dirindex;
	if (!set->buf && !(set->buf = malloc(vol->blocksize)))
		return DIR_INDEX_NONE;
	if (!ix->nbucket)
		return -ENOENT;	/* blocks without a name: none made buckets */
	uint32_t hash = set->hash(set->seed, name, len), held = NIL;
	for (uint32_t id = ix->bucket[hash & (ix->nbucket - 1)]; id != NIL;
	     id = ix->ents[id].next) {
		const struct dx_entry *e = &ix->ents[id];
		if (e->hash != hash)
			continue;
		if (e->block != held) {
			int err = dir_read_block(vol, dir, e->block, set->buf);
			if (err)
				return err;
			held = e->block;
		}
		int r = dirblock_record(set->buf, vol->blocksize, e->off,
					(uint64_t)e->block << vol->blockbits,
					d);
		if (!r && d->name_len == len && !memcmp(d->name, name, len))
			return 0;
		if (r || set->hash(set->seed, d->name, d->name_len) != hash) {
			/* not the record it indexed: out of step */
			dir_index_forget(vol, dir->inum);
			return DIR_INDEX_NONE;
		}
	}
	return -ENOENT;
}

bool dir_index_cached(struct tux3_volume *vol, const struct inode *dir)
{
	struct dir_index_set *set = vol->dirindex;
	int i = set ? find_slot(set, dir->inum) : -1;
	return i >= 0 && set->dirs[i]->state == IX_READY &&
	       set->dirs[i]->vtag == vol->vtag;
}

int dir_index_room(struct tux3_volume *vol, const struct inode *dir,
		   unsigned len, uint64_t *logical)
{
	struct dir_index *ix = index_of(vol, dir);
	if (!ix)
		return DIR_INDEX_NONE;
	*logical = room_first(ix, dirent_need(len));
	return 0;
}

void dir_index_wrote(struct tux3_volume *vol, const struct inode *inode,
		     const void *buf, size_t len, uint64_t pos, int err)
{
	struct dir_index_set *set = vol->dirindex;
	int i = set ? find_slot(set, inode->inum) : -1;
	if (i < 0)
		return;
	struct dir_index *ix = set->dirs[i];
	if (ix->state == IX_TOO_BIG)
		return;		/* served linearly whatever it holds */
	unsigned bs = vol->blocksize;
	bool whole = !(pos & (bs - 1)) && !(len & (bs - 1));
	if (ix->state != IX_READY || err || !whole || ix->vtag != vol->vtag) {
		ix_drop(set, (unsigned)i);
		return;
	}
	for (size_t done = 0; done < len; done += bs) {
		uint64_t logical = (pos + done) >> vol->blockbits;
		int r = index_block(vol, set, ix, logical,
				    (const uint8_t *)buf + done);
		if (!r) {
			bound(set, ix);
			r = ix->state == IX_READY ? 0 : -E2BIG;
		}
		if (r) {
			if (ix->state == IX_READY)
				ix_drop(set, (unsigned)find_slot(set,
								 inode->inum));
			return;
		}
	}
	ix->size = inode->size;
}

void dir_index_forget(struct tux3_volume *vol, tux3_ino_t inum)
{
	struct dir_index_set *set = vol->dirindex;
	int i = set ? find_slot(set, inum) : -1;
	if (i >= 0)
		ix_drop(set, (unsigned)i);
}

void dir_index_forget_all(struct tux3_volume *vol)
{
	struct dir_index_set *set = vol->dirindex;
	while (set && set->ndirs)
		ix_drop(set, set->ndirs - 1);
}

void dir_index_free(struct tux3_volume *vol)
{
	struct dir_index_set *set = vol->dirindex;
	if (!set)
		return;
	dir_index_forget_all(vol);
	free(set->buf);
	free(set);
	vol->dirindex = NULL;
}

void dir_index_stats(const struct tux3_volume *vol, struct dir_index_stats *s)
{
	const struct dir_index_set *set = vol->dirindex;
	memset(s, 0, sizeof(*s));
	if (!set)
		return;
	for (unsigned i = 0; i < set->ndirs; i++)
		if (set->dirs[i]->state == IX_READY) {
			s->dirs++;
			s->entries += set->dirs[i]->live;
		}
	s->bytes = set->bytes;
	s->builds = set->builds;
}

int dir_index_set_hash(struct tux3_volume *vol, dir_index_hash_fn fn)
{
	struct dir_index_set *set = get_set(vol);
	if (!set)
		return -ENOMEM;
	dir_index_forget_all(vol);
	set->hash = fn ? fn : default_hash;
	return 0;
}

int tux3_set_dir_index(struct tux3_volume *vol, unsigned min_blocks,
		       size_t max_bytes)
{
	struct dir_index_set *set = get_set(vol);
	if (!set)
		return -ENOMEM;
	dir_index_forget_all(vol);
	set->min_blocks = min_blocks;
	set->max_bytes = max_bytes ? max_bytes : DIR_INDEX_MAX_BYTES;
	return 0;
}

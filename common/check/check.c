/*
 * Two checkers on the walker: block ownership against the allocation
 * bitmap (tux3_check_alloc, and committed_map for the tests), and the
 * namespace (tux3_check_namespace: reachability, link counts).  The
 * first marks every block the volume references (tree nodes, extents,
 * log blocks, the reserved area, blocks the log frees only at the next
 * unify) in a shadow map, then compares it with the live bitmap.  The
 * shadow map is a space map (io/spacemap.c) in chunks of the bitmap's
 * blocks, and the comparison visits only the chunks that either map
 * holds: its time and memory follow the space in use.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "internal.h"
#include "tux3_walk.h"
#include "check/inode_state.h"

struct shadow {
	struct tux3_volume *vol;
	struct spacemap map;	/* one bit per referenced block */
	tux3_check_fn report;
	void *ctx;
	unsigned problems;
	bool nomem;		/* the map could not grow */
	uint64_t inodes;	/* decoded, from TUX3_NORMAL_INO up */
	bool damaged;		/* the walk met something it could not read */
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
		int was = spacemap_set(&s->map, b, true);
		if (was < 0) {
			s->nomem = true;
			return;
		}
		if (was)
			report(s, b, 1, TUX3_BLOCK_SHARED);
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
	s->damaged = true;
	report(s, e->block, 1, TUX3_BLOCK_UNREADABLE);
	return 0;
}

static int on_inode(void *ctx, const struct tux3_stat *st,
		    tux3_block_t leafblock, unsigned bloblen)
{
	struct shadow *s = ctx;
	(void)leafblock; (void)bloblen;
	if (st->ino >= TUX3_NORMAL_INO)
		s->inodes++;
	return 0;
}

/* Every block the volume references, in s->map. */
static int shadow_build(struct shadow *s)
{
	struct tux3_volume *vol = s->vol;
	struct tux3_walk_ops ops = {
		.bnode = on_node, .leaf = on_node, .logblock = on_logblock,
		.extent = on_extent, .error = on_error, .inode = on_inode,
	};
	int err = spacemap_init(&s->map, vol->blockbits + 3,
				vol->blockbits + 3, vol->volblocks);
	if (err)
		return err;
	mark(s, 0, vol->reserved_blocks);
	/* still in use until the next unify frees them */
	for (unsigned i = 0; i < vol->ndeunify; i++) {
		bool is_log = false;
		for (unsigned k = 0; k < vol->logcount; k++)
			if (vol->log && vol->log[k].blocknr ==
			    vol->deunify[i].block)
				is_log = true;
		if (!is_log)
			mark(s, vol->deunify[i].block, vol->deunify[i].count);
	}
	/* freed by the open delta: in use until its commit is durable */
	for (size_t i = 0; i < vol->defer_free.count; i++)
		mark(s, vol->defer_free.v[i].block, vol->defer_free.v[i].count);
	err = walk_uncounted(vol, &ops, s);
	if (err == -EUCLEAN)
		s->damaged = true;
	if (!(err < 0 && err != -EUCLEAN) && s->nomem)
		err = -ENOMEM;
	if (err < 0 && err != -EUCLEAN) {
		spacemap_free(&s->map);
		return err;
	}
	return 0;
}

/*
 * The blocks whose on-disk contents the committed state depends on:
 * everything referenced, less the bnodes changed in this unify cycle
 * (replay rebuilds their images from the log, so their blocks are
 * written at unify).  For the write-ordering lint of the tests, on small
 * volumes: a flat map, one bit per block.
 */
int committed_map(struct tux3_volume *vol, uint8_t **map)
{
	struct shadow s = { .vol = vol };
	int err = shadow_build(&s);
	if (err)
		return err;
	for (size_t i = 0; i < vol->overlay.cap; i++) {
		struct overlay_ent *e = &vol->overlay.ents[i];
		if (e->block && e->data && (e->flags & OV_UNIFY_DIRTY) &&
		    e->block < vol->volblocks)
			spacemap_set(&s.map, e->block, false);
	}
	*map = calloc((size_t)((vol->volblocks + 7) >> 3), 1);
	for (uint64_t b = 0; *map && b < vol->volblocks; b++)
		if (spacemap_test(&s.map, b))
			(*map)[b >> 3] |= (uint8_t)(1u << (b & 7));
	spacemap_free(&s.map);
	return *map ? 0 : -ENOMEM;
}

/* One chunk: the live bitmap's bits against the references (ref NULL:
 * none there), block by block where their bytes differ. */
static void compare_chunk(struct shadow *s, uint64_t index,
			  const uint8_t *live, const uint8_t *ref)
{
	struct tux3_volume *vol = s->vol;
	unsigned shift = vol->blockbits + 3;
	uint64_t base = index << shift, bits = 1ULL << shift;
	if (bits > vol->volblocks - base)
		bits = vol->volblocks - base;
	for (uint64_t bit = 0; bit < bits; bit += 8) {
		uint8_t r = ref ? ref[bit >> 3] : 0, l = live[bit >> 3];
		if (l == r)
			continue;
		for (unsigned k = 0; k < 8 && bit + k < bits; k++) {
			bool used = l >> k & 1, refd = r >> k & 1;
			if (used && !refd)
				report(s, base + bit + k, 1, TUX3_BLOCK_LEAKED);
			else if (!used && refd)
				report(s, base + bit + k, 1,
				       TUX3_BLOCK_FREE_IN_USE);
		}
	}
}

/* The chunks to compare: those the references or the bitmap (its file
 * or this session) hold; everywhere else both say free. */
static int next_chunk(struct shadow *s, uint64_t from, uint64_t *index)
{
	struct spacemap_chunk *c = spacemap_next(&s->map, from);
	int err = bitmap_next_chunk(s->vol, from, index);
	if (c && c->index < *index)
		*index = c->index;
	return err;
}

int tux3_check_alloc(struct tux3_volume *vol, tux3_check_fn fn, void *ctx)
{
	uint64_t inodes;
	return check_alloc_counted(vol, fn, ctx, &inodes);
}

int check_alloc_counted(struct tux3_volume *vol, tux3_check_fn fn, void *ctx,
			uint64_t *inodes)
{
	struct shadow s = { .vol = vol, .report = fn, .ctx = ctx };
	uint64_t index;
	*inodes = UINT64_MAX;
	int err = shadow_build(&s);
	if (err)
		return err;
	err = next_chunk(&s, 0, &index);
	while (!err && index < vol->bitmap.nchunks) {
		uint8_t *live = bitmap_chunk(vol, index, &err);
		if (!live)
			break;
		struct spacemap_chunk *ref = spacemap_get(&s.map, index);
		compare_chunk(&s, index, live, ref ? ref->bits : NULL);
		err = next_chunk(&s, index + 1, &index);
	}
	spacemap_free(&s.map);
	*inodes = s.damaged ? UINT64_MAX : s.inodes;
	return err ? err : (int)s.problems;
}

/* ---- the namespace: links, types, reachability ---- */

/* Per inode >= 63: its entry type, the orphan flag, its link count, the
 * names of a non-directory or the subdirectories of a directory, and the
 * names of a directory (saturating at 3: more than one is a problem),
 * in the compact form of check/inode_state.c (about one byte an inode). */
struct nscheck {
	struct tux3_volume *vol;
	struct inode_state st;
	tux3_ns_fn report;
	void *ctx;
	unsigned problems;
	unsigned depth;
	bool cache_tried, own_cache;	/* ns_cache */
};

#define NS_CACHE_BYTES (8u << 20)

/* Inodes loaded by number probe the inode table: a block cache keeps its
 * nodes at hand, taken at the first such load (few volumes need it) and
 * only where the caller has none of its own. */
static void ns_cache(struct nscheck *c)
{
	if (c->cache_tried)
		return;
	c->cache_tried = true;
	c->own_cache = !c->vol->dev.cache &&
		       !tux3_set_cache(c->vol, NS_CACHE_BYTES);
}

static int ns_inode(void *ctx, const struct tux3_stat *st,
		    tux3_block_t leafblock, unsigned bloblen)
{
	struct nscheck *c = ctx;
	(void)leafblock; (void)bloblen;
	uint32_t mode = st->mode, nlink = st->nlink;
	if (st->ino < TUX3_ROOT_INO)
		return 1;	/* internal inodes have no names */
	if (vinode_applies(c->vol, st->ino) &&
	    !walk_blob_plain(c->vol, st->ino)) {
		/* the selected version's inode, or none in this version (an
		 * inode no version has changed reads alike in all) */
		struct inode inode;
		ns_cache(c);
		int err = inode_load(c->vol, st->ino, &inode);
		if (err == -ENOMEM)
			return err;
		tux3_clear_error(c->vol);
		if (err == -ENOENT)
			return 1;
		if (!err) {
			mode = inode.mode;
			nlink = inode.nlink;
			inode_free(&inode);
		}
	}
	int err = inode_state_add(&c->st, st->ino & (TUX3_KEY_LIMIT - 1),
				  inode_dtype(mode) & 15, st->orphan, nlink);
	return err ? err : 1;	/* names only: no need for its data tree */
}

static void ns_problem(struct nscheck *c, enum tux3_ns_problem what,
		       uint64_t inum, uint64_t dir, uint64_t have,
		       uint64_t want)
{
	c->problems++;
	if (c->report)
		c->report(c->ctx, what, inum, dir, have, want);
}

struct ns_dir {
	struct nscheck *c;
	uint64_t dir;
	uint64_t *subdirs;	/* directories to descend into */
	size_t nsub, capsub;
};

static int ns_entry(void *ctx, const struct dirent_info *d)
{
	struct ns_dir *w = ctx;
	struct nscheck *c = w->c;
	struct ino_info n;
	if (!inode_state_get(&c->st, d->inum, &n)) {
		ns_problem(c, TUX3_NS_DANGLING, d->inum, w->dir, 0, 0);
		return 0;
	}
	if (d->type != n.dtype)
		ns_problem(c, TUX3_NS_TYPE, d->inum, w->dir, d->type,
			   n.dtype);
	bool isdir = n.dtype == TUX3_DT_DIR;
	int err = inode_state_named(&c->st, d->inum, isdir ? w->dir : 0);
	if (err || !isdir)
		return err;
	if (n.dirnames >= 1) {	/* a directory under two names */
		ns_problem(c, TUX3_NS_DIR_TWICE, d->inum, w->dir,
			   n.dirnames < 3 ? n.dirnames + 1 : 3, 1);
		return 0;
	}
	if (w->nsub == w->capsub) {
		size_t ncap = w->capsub ? w->capsub * 2 : 16;
		uint64_t *s = realloc(w->subdirs, ncap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		w->subdirs = s;
		w->capsub = ncap;
	}
	w->subdirs[w->nsub++] = d->inum;
	return 0;
}

/* A damaged directory block: reported, the walk goes on. */
static int ns_bad_block(void *ctx, const struct tux3_error *e,
			uint64_t logical, uint64_t blocknr)
{
	struct ns_dir *w = ctx;
	uint64_t pos = e->offset != TUX3_NONE ? e->offset :
		       logical << w->c->vol->blockbits;
	ns_problem(w->c, TUX3_NS_ENTRY_BAD, 0, w->dir, pos, blocknr);
	return 0;
}

static int ns_dir(struct nscheck *c, uint64_t dir)
{
	struct ns_dir w = { .c = c, .dir = dir };
	struct inode inode;
	int err;

	if (c->depth > 65536)
		return 0;
	if ((err = inode_load(c->vol, dir, &inode))) {
		tux3_clear_error(c->vol);
		ns_problem(c, TUX3_NS_UNREADABLE, dir, 0, 0, 0);
		return 0;
	}
	err = dir_iterate_salvage(c->vol, &inode, ns_entry, ns_bad_block, &w);
	inode_free(&inode);
	if (err < 0 && err != -ENOMEM) {
		tux3_clear_error(c->vol);
		ns_problem(c, TUX3_NS_UNREADABLE, dir, 0, 0, 0);
		err = 0;
	}
	if (vol_readahead_on(c->vol)) {
		/* every map first, then (those arriving meanwhile) every
		 * directory's blocks, before the first is read */
		for (size_t i = 0; i < w.nsub; i++)
			inode_readahead_map(c->vol, w.subdirs[i]);
		for (size_t i = 0; i < w.nsub; i++)
			inode_readahead_data(c->vol, w.subdirs[i]);
	}
	c->depth++;
	for (size_t i = 0; i < w.nsub && !err; i++)
		err = ns_dir(c, w.subdirs[i]);
	c->depth--;
	free(w.subdirs);
	return err;
}

/* Links and reachability of one inode, once every directory is read. */
static int ns_settle(void *ctx, uint64_t inum, const struct ino_info *n)
{
	struct nscheck *c = ctx;
	bool isdir = n->dtype == TUX3_DT_DIR;
	bool named = isdir ? n->dirnames : n->count;
	if (!named) {
		if (!n->orphan)
			ns_problem(c, TUX3_NS_UNREACHABLE, inum, 0, n->nlink, 0);
		return 0;
	}
	uint64_t want = isdir ? 2 + (uint64_t)n->count : n->count;
	if (n->nlink != want)
		ns_problem(c, TUX3_NS_NLINK, inum, 0, n->nlink, want);
	return 0;
}

int tux3_check_namespace(struct tux3_volume *vol, tux3_ns_fn fn, void *ctx)
{
	struct nscheck c = { .vol = vol, .report = fn, .ctx = ctx };
	struct tux3_walk_ops ops = { .inode = ns_inode };
	struct ino_info root;
	int err = walk_uncounted(vol, &ops, &c);
	if (err < 0 && err != -EUCLEAN)
		goto out;
	if (!inode_state_get(&c.st, TUX3_ROOT_INO, &root) ||
	    root.dtype != TUX3_DT_DIR) {
		ns_problem(&c, TUX3_NS_NO_ROOT, TUX3_ROOT_INO, 0, 0, 0);
		err = 0;
		goto out;
	}
	/* the root is named by the volume */
	if ((err = inode_state_set_dirnames(&c.st, TUX3_ROOT_INO, 1)) ||
	    (err = ns_dir(&c, TUX3_ROOT_INO)) < 0)
		goto out;
	err = inode_state_each(&c.st, ns_settle, &c);
out:
	if (c.own_cache)
		tux3_set_cache(vol, 0);
	vol->ns_state_bytes = inode_state_bytes(&c.st);
	inode_state_free(&c.st);
	return err < 0 ? err : (int)c.problems;
}

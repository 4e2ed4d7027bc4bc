/*
 * Versioned file data on a writable volume (common/version/vfilemap.c): a
 * differential test of random snapshots, deletes, writes and punches in
 * random versions against a per-block model of every version's content,
 * with every version's every block read back after each step, the
 * records checked (vfilemap_check), every referenced block in use and
 * referenced once, and the allocation checked against the walker's view
 * at each commit; then a reopen.  Also: conversion of dleaf and direct
 * files, a punch in the origin under a snapshot, space coming back.
 */
#include "fixtures.h"
#include "tux3_walk.h"
#include "version/vfilemap.h"
#include "version/vleaf.h"

#define NLOG	300		/* logical blocks per file */
#define NFILES	3
#define MAXTAGS	9		/* the origin and up to 8 snapshots */

static unsigned rng_state;

static unsigned rnd(unsigned n)
{
	rng_state = rng_state * 1103515245 + 12345;
	return (rng_state >> 8) % n;
}

static const char *make_volume(unsigned bits, uint64_t bytes)
{
	return scratch_volume(bits, bytes, 0);
}

static struct tux3_volume *open_rw(const char *path)
{
	char msg[400];
	struct tux3_volume *vol = NULL;
	int err = tux3_open_err(path, TUX3_OPEN_RDWR |
				TUX3_OPEN_VERSIONED_WRITER, &vol, msg,
				sizeof(msg));
	if (err)
		fprintf(stderr, "open: %s\n", msg);
	CHECK_EQ(err, 0);
	return vol;
}

static tux3_ino_t new_file(struct tux3_volume *vol, const char *name)
{
	tux3_ino_t ino;
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, name, strlen(name), 0644, 0,
			     0, &ino), 0);
	return ino;
}

/* A data block's content: id in its first word. */
static void put_data(struct tux3_volume *vol, uint64_t block, uint32_t id)
{
	static uint8_t buf[1 << 16];
	memset(buf, (int)(id & 0xff), vol->blocksize);
	memcpy(buf, &id, 4);
	CHECK_EQ(dev_pwrite(&vol->dev, buf, vol->blocksize,
			    block << vol->blockbits), 0);
}

static uint32_t get_data(struct tux3_volume *vol, uint64_t block)
{
	uint32_t a;
	CHECK_EQ(dev_pread(&vol->dev, &a, 4, block << vol->blockbits), 0);
	return a;
}

/* ---- reading a version into a per-block map ---- */

struct map_ctx {
	uint64_t *phys;
	uint64_t n;
	uint64_t last_end;
};

static int map_extent(void *ctx, const struct extent *e)
{
	struct map_ctx *m = ctx;
	CHECK(e->count > 0);
	CHECK(e->logical >= m->last_end);	/* in order, disjoint */
	m->last_end = e->logical + e->count;
	for (uint64_t i = 0; i < e->count; i++) {
		uint64_t l = e->logical + i;
		if (l < m->n)
			m->phys[l] = e->physical ? e->physical + i : 0;
	}
	return 0;
}

static void read_map(struct tux3_volume *vol, const struct inode *inode,
		     struct vtree *vt, unsigned label, uint64_t *phys,
		     uint64_t n)
{
	struct map_ctx m = { phys, n, 0 };
	memset(phys, 0, n * sizeof(*phys));
	CHECK_EQ(vfilemap_walk(vol, inode, vt, label, 0, n, map_extent, &m),
		 0);
}

/* ---- the records of a versioned tree ---- */

typedef void (*rec_fn)(void *ctx, uint64_t leafblock, const struct vextent *r);

static unsigned for_each_record(struct tux3_volume *vol,
				const struct inode *inode, rec_fn fn,
				void *ctx)
{
	if (!inode->dtree || !vfilemap_is_versioned(vol, inode))
		return 0;
	struct btree bt = { .vol = vol, .root = root_unpack(inode->dtree),
			    .ops = &vdtree_ops, .owner = inode->inum };
	struct cursor c = { 0 };
	unsigned leaves = 0;
	int err = btree_probe(&bt, 0, &c);
	while (!err) {
		const uint8_t *leaf = cursor_leaf(&c);
		leaves++;
		fn(ctx, cursor_leaf_block(&c), NULL);
		for (unsigned i = 0; i < vleaf_count(leaf); i++) {
			struct vextent r;
			vleaf_get(leaf, i, &r);
			fn(ctx, cursor_leaf_block(&c), &r);
		}
		err = btree_next_leaf(&c);
		if (err == 1)
			err = 0;
		else if (!err)
			break;
	}
	cursor_release(&c);
	CHECK_EQ(err, 0);
	return leaves;
}

/* Every block of the file's tree (leaves and bnodes). */
static int tree_node(void *ctx, struct btree *bt, int level, uint64_t b,
		     const uint8_t *buf, uint64_t lo, uint64_t hi)
{
	(void)bt; (void)level; (void)buf; (void)lo; (void)hi;
	CHECK(blockset_add(ctx, b) == 1);
	return 0;
}

static int tree_leaf(void *ctx, struct btree *bt, uint64_t b,
		     const uint8_t *buf, uint64_t lo, uint64_t hi)
{
	return tree_node(ctx, bt, 0, b, buf, lo, hi);
}

static void tree_blocks(struct tux3_volume *vol, const struct inode *inode,
			struct blockset *s)
{
	struct root r = root_unpack(inode->dtree);
	if (!inode->dtree || r.direct)
		return;
	bool v = vfilemap_is_versioned(vol, inode);
	struct btree bt = { .vol = vol, .root = r,
			    .ops = v ? &vdtree_ops : &dtree_ops,
			    .owner = inode->inum };
	struct btree_visit visit = { .bnode = tree_node, .leaf = tree_leaf };
	CHECK_EQ(btree_traverse(&bt, &visit, s), 0);
}

struct refs {
	struct tux3_volume *vol;
	struct blockset seen;
	uint64_t data;
};

static void ref_record(void *ctx, uint64_t leafblock, const struct vextent *r)
{
	struct refs *f = ctx;
	if (!r) {
		CHECK(blockset_add(&f->seen, leafblock) == 1);
		CHECK_EQ(tux3_block_is_used(f->vol, leafblock), 1);
		return;
	}
	if (!r->phys)
		return;
	for (uint64_t i = 0; i < r->count; i++) {
		CHECK_EQ(tux3_block_is_used(f->vol, r->phys + i), 1);
		CHECK(blockset_add(&f->seen, r->phys + i) == 1);
		f->data++;
	}
}

static void report_problem(void *ctx, unsigned label, const char *what)
{
	(void)ctx;
	fprintf(stderr, "vfilemap_check: label %u: %s\n", label, what);
}

/* ---- allocation against the walker ----
 * The walker reads vleaves on a volume marked as having versions: every
 * block it reports is a problem.  (allowed: the blocks the file's records
 * and leaves name, kept for the message.) */
struct alloc_ctx {
	struct blockset *allowed;
	unsigned bad;
};

static void alloc_report(void *ctx, uint64_t b, uint64_t n,
			 enum tux3_block_problem what)
{
	struct alloc_ctx *a = ctx;
	for (uint64_t i = 0; i < n; i++) {
		fprintf(stderr, "check_alloc: block %" PRIu64 " problem %d%s\n",
			b + i, (int)what, blockset_has(a->allowed, b + i) ?
			" (a block of a versioned file)" : "");
		a->bad++;
		break;
	}
}

/* ---- the random model ---- */

struct vmodel {
	struct tux3_volume *vol;
	const char *path;
	struct vtree vt;
	tux3_ino_t ino[NFILES];
	unsigned nfiles;
	uint32_t tag[MAXTAGS];		/* tag[0] = 0: the origin */
	unsigned ntag;
	uint32_t nexttag, nextid;
	uint32_t expect[NFILES][MAXTAGS][NLOG];
	unsigned maxlabels;
	unsigned implicit, splits_seen;
	unsigned short_writes;
};

static unsigned label_of(struct vmodel *m, unsigned k)
{
	if (!k)
		return VERSION_ORIGIN;
	int l = vtree_find_tag(&m->vt, m->tag[k]);
	CHECK(l > 0);
	return (unsigned)l;
}

static void load(struct vmodel *m, unsigned f, struct inode *inode)
{
	CHECK_EQ(inode_load(m->vol, m->ino[f], inode), 0);
}

static void store(struct vmodel *m, struct inode *inode)
{
	CHECK_EQ(inode_store(m->vol, inode), 0);
	inode_free(inode);
}

/* The table goes to inode 3 with every change of the tree, as a tool
 * would write it: the volume is then marked as having versions, and the
 * walker (check_alloc) reads its vleaves. */
static void save_table(struct vmodel *m)
{
	CHECK_EQ(vtable_save(m->vol, &m->vt), 0);
}

static void verify(struct vmodel *m, bool alloc_check)
{
	static uint64_t phys[NLOG];
	struct blockset allowed = { 0 };
	for (unsigned f = 0; f < m->nfiles; f++) {
		struct inode inode;
		load(m, f, &inode);
		for (unsigned k = 0; k < m->ntag; k++) {
			read_map(m->vol, &inode, &m->vt, label_of(m, k), phys,
				 NLOG);
			for (unsigned i = 0; i < NLOG; i++) {
				uint32_t want = m->expect[f][k][i];
				if (!want) {
					CHECK_EQ(phys[i], 0);
					continue;
				}
				CHECK(phys[i] != 0);
				if (get_data(m->vol, phys[i]) != want)
					fprintf(stderr, "file %u version %u "
						"block %u\n", f, k, i);
				CHECK_EQ(get_data(m->vol, phys[i]), want);
			}
		}
		CHECK_EQ(vfilemap_check(m->vol, &inode, &m->vt, report_problem,
					NULL), 0);
		struct refs r = { .vol = m->vol };
		unsigned leaves = for_each_record(m->vol, &inode, ref_record,
						  &r);
		if (leaves > 1)
			m->splits_seen++;
		if (alloc_check) {
			for (size_t i = 0; i < r.seen.cap; i++)
				if (r.seen.slots[i])
					CHECK(blockset_add(&allowed,
						r.seen.slots[i] - 1) >= 0);
		}
		blockset_free(&r.seen);
		inode_free(&inode);
	}
	if (alloc_check) {
		struct alloc_ctx a = { &allowed, 0 };
		CHECK(tux3_check_alloc(m->vol, alloc_report, &a) >= 0);
		CHECK_EQ(a.bad, 0);
	}
	blockset_free(&allowed);
}

static void do_update(struct vmodel *m, unsigned f, unsigned k,
		      unsigned at, unsigned len, enum vext_mode mode)
{
	static uint64_t written[NLOG];
	struct inode inode;
	unsigned label = label_of(m, k), before = label;
	load(m, f, &inode);
	CHECK_EQ(vfilemap_update(m->vol, &inode, &m->vt, &label, at, len,
				 mode, written), 0);
	store(m, &inode);
	if (label != before) {
		save_table(m);
		m->implicit++;
		CHECK_EQ(m->vt.v[label].tag, m->tag[k]);
	}
	CHECK_EQ(label, label_of(m, k));
	for (unsigned i = 0; i < len; i++) {
		if (mode == VEXT_PUNCH) {
			CHECK_EQ(written[i], 0);
			m->expect[f][k][at + i] = 0;
			continue;
		}
		CHECK(written[i] != 0);
		uint32_t id = m->nextid++;
		put_data(m->vol, written[i], id);
		m->expect[f][k][at + i] = id;
	}
}

static void do_delete(struct vmodel *m, unsigned k)
{
	static struct vdelete_plan plan;
	CHECK_EQ(vtree_delete(&m->vt, m->tag[k], &plan), 0);
	for (unsigned f = 0; f < m->nfiles; f++) {
		struct inode inode;
		load(m, f, &inode);
		CHECK_EQ(vfilemap_delete(m->vol, &inode, &m->vt, &plan), 0);
		store(m, &inode);
	}
	vtree_delete_done(&m->vt, &plan);
	save_table(m);
	m->ntag--;
	m->tag[k] = m->tag[m->ntag];
	for (unsigned f = 0; f < m->nfiles; f++)
		memcpy(m->expect[f][k], m->expect[f][m->ntag],
		       sizeof(m->expect[f][k]));
}

static void step(struct vmodel *m)
{
	unsigned op = rnd(10);
	if (op == 0 && m->ntag < MAXTAGS &&
	    m->vt.used + 2 <= m->maxlabels) {
		unsigned of = rnd(3) == 0 ? 0 : rnd(m->ntag);
		int l = vtree_snapshot(&m->vt, label_of(m, of), m->nexttag, 0);
		CHECK(l > 0);
		save_table(m);
		m->tag[m->ntag] = m->nexttag++;
		for (unsigned f = 0; f < m->nfiles; f++)
			memcpy(m->expect[f][m->ntag], m->expect[f][of],
			       sizeof(m->expect[f][of]));
		m->ntag++;
	} else if (op <= 1 && m->ntag > 1) {
		do_delete(m, 1 + rnd(m->ntag - 1));
	} else {
		unsigned f = rnd(m->nfiles);
		/* writes on the origin mostly, as a live filesystem */
		unsigned k = rnd(3) == 0 ? 0 : rnd(m->ntag);
		/* short writes fragment the map (4 KiB leaves hold 255
		 * records: they split only then) */
		unsigned len = 1 + rnd(rnd(4) < m->short_writes ? 3 : 20);
		unsigned at = rnd(NLOG - len + 1);
		/* no writes to a version whose children would need more
		 * labels than the cap (an implicit child) */
		if (k && m->vt.nchild[label_of(m, k)] &&
		    m->vt.used + 1 > m->maxlabels)
			k = 0;
		do_update(m, f, k, at, len, op <= 3 ? VEXT_PUNCH :
			  VEXT_REDIRECT);
	}
}

static void run(unsigned bits, uint64_t bytes, unsigned seed, unsigned steps,
		unsigned nfiles)
{
	static struct vmodel m;
	memset(&m, 0, sizeof(m));
	rng_state = seed;
	m.path = make_volume(bits, bytes);
	m.vol = open_rw(m.path);
	vtree_init(&m.vt);
	save_table(&m);
	m.ntag = 1;
	m.nexttag = 1000;
	m.nextid = 1;
	m.nfiles = nfiles;
	/* every label can have an element at one block: keep them under
	 * what a leaf holds of one block */
	m.maxlabels = bits == 9 ? 20 : 24;
	m.short_writes = bits == 9 ? 1 : 3;
	for (unsigned f = 0; f < m.nfiles; f++) {
		char name[16];
		snprintf(name, sizeof(name), "v%u", f);
		m.ino[f] = new_file(m.vol, name);
	}
	CHECK_EQ(tux3_sync(m.vol), 0);
	for (unsigned s = 0; s < steps; s++) {
		step(&m);
		bool commit = rnd(25) == 0;
		if (commit)
			CHECK_EQ(tux3_sync(m.vol), 0);
		verify(&m, commit);
	}
	CHECK(m.implicit > 0);
	CHECK(m.splits_seen > 0);
	/* reopen after a commit without unify (replay rebuilds the bnodes
	 * from the log): what was committed reads the same (the version
	 * tree is kept in memory) */
	CHECK_EQ(tux3_sync(m.vol), 0);
	tux3_close(m.vol);
	m.vol = open_rw(m.path);
	verify(&m, true);
	/* a few more steps on the reopened volume */
	for (unsigned s = 0; s < steps / 10; s++) {
		step(&m);
		verify(&m, false);
	}
	CHECK_EQ(tux3_sync(m.vol), 0);
	verify(&m, true);
	/* everything goes: the files' blocks come back except their trees */
	while (m.ntag > 1)
		do_delete(&m, m.ntag - 1);
	for (unsigned f = 0; f < m.nfiles; f++)
		do_update(&m, f, 0, 0, NLOG, VEXT_PUNCH);
	CHECK_EQ(tux3_umount(m.vol), 0);
	m.vol = open_rw(m.path);
	verify(&m, true);
	for (unsigned f = 0; f < m.nfiles; f++) {
		struct inode inode;
		struct refs r = { .vol = m.vol };
		load(&m, f, &inode);
		for_each_record(m.vol, &inode, ref_record, &r);
		CHECK_EQ(r.data, 0);
		blockset_free(&r.seen);
		inode_free(&inode);
	}
	tux3_close(m.vol);
}

TEST(random_4k)
{
	for (unsigned seed = 1; seed <= SANITIZER_SHARE(3u, 3); seed++)
		run(12, 16 << 20, seed, 1000, 1);
}

TEST(random_512)
{
	for (unsigned seed = 11; seed <= 10 + SANITIZER_SHARE(3u, 3); seed++)
		run(9, 8 << 20, seed, 300, NFILES);
}

/* ---- conversion ---- */

static void conversion(unsigned bits)
{
	const char *path = make_volume(bits, 16 << 20);
	struct tux3_volume *vol = open_rw(path);
	unsigned bs = vol->blocksize;
	uint8_t *buf = malloc(bs), *back = malloc(bs);
	CHECK(buf && back);
	tux3_ino_t f = new_file(vol, "sparse"), d = new_file(vol, "direct");
	/* a sparse file: a dleaf tree of several leaves */
	for (unsigned i = 0; i < 200; i++) {
		unsigned at = (i * 7) % 400;
		memset(buf, (int)(i + 1), bs);
		CHECK_EQ(tux3_write(vol, f, buf, bs, (uint64_t)at * bs),
			 (ssize_t)bs);
	}
	for (unsigned i = 0; i < 5; i++) {
		memset(buf, (int)(0x40 + i), bs);
		CHECK_EQ(tux3_write(vol, d, buf, bs, (uint64_t)i * bs),
			 (ssize_t)bs);
	}
	CHECK_EQ(tux3_sync(vol), 0);

	struct vtree *vt = malloc(sizeof(*vt));
	CHECK(vt);
	vtree_init(vt);
	CHECK(vtree_snapshot(vt, 0, 7, 0) > 0);
	static uint64_t before[2][512], after[512];
	tux3_ino_t files[2] = { f, d };
	struct blockset oldleaves = { 0 };
	for (unsigned k = 0; k < 2; k++) {
		struct inode inode;
		CHECK_EQ(inode_load(vol, files[k], &inode), 0);
		CHECK(!vfilemap_is_versioned(vol, &inode));
		if (k == 0) {
			CHECK(root_unpack(inode.dtree).depth >= 2);
			tree_blocks(vol, &inode, &oldleaves);
		} else {
			CHECK(root_unpack(inode.dtree).direct);
		}
		/* an unversioned file reads as the origin in every version */
		read_map(vol, &inode, vt, 0, before[k], 512);
		read_map(vol, &inode, vt, 1, after, 512);
		CHECK(!memcmp(before[k], after, sizeof(after)));
		CHECK_EQ(vfilemap_convert(vol, &inode), 0);
		CHECK(vfilemap_is_versioned(vol, &inode));
		CHECK_EQ(vfilemap_check(vol, &inode, vt, report_problem, NULL),
			 0);
		for (unsigned l = 0; l < 2; l++) {
			read_map(vol, &inode, vt, l, after, 512);
			CHECK(!memcmp(before[k], after, sizeof(after)));
		}
		CHECK_EQ(inode_store(vol, &inode), 0);
		inode_free(&inode);
	}
	CHECK_EQ(tux3_sync(vol), 0);
	/* the dleaves were copied on write: their blocks are free now */
	for (size_t i = 0; i < oldleaves.cap; i++) {
		uint64_t b = oldleaves.slots[i];
		if (!b)
			continue;
		struct inode inode;
		struct blockset now = { 0 };
		CHECK_EQ(inode_load(vol, f, &inode), 0);
		tree_blocks(vol, &inode, &now);
		if (!blockset_has(&now, b - 1)) {
			uint8_t *blk = read_vol_block(vol, b - 1);
			/* a bnode stays; a leaf went */
			if (be16(blk) == TUX3_MAGIC_DLEAF)
				CHECK_EQ(tux3_block_is_used(vol, b - 1), 0);
			free(blk);
		}
		blockset_free(&now);
		inode_free(&inode);
	}
	blockset_free(&oldleaves);
	CHECK_EQ(tux3_umount(vol), 0);
	vol = open_rw(path);
	for (unsigned k = 0; k < 2; k++) {
		struct inode inode;
		CHECK_EQ(inode_load(vol, files[k], &inode), 0);
		CHECK(vfilemap_is_versioned(vol, &inode));
		for (unsigned l = 0; l < 2; l++) {
			read_map(vol, &inode, vt, l, after, 512);
			CHECK(!memcmp(before[k], after, sizeof(after)));
		}
		inode_free(&inode);
	}
	/* and the data reads back through the versioned map */
	for (unsigned i = 0; i < 200; i++) {
		unsigned at = (i * 7) % 400;
		if (!before[0][at])
			continue;
		CHECK_EQ(dev_pread(&vol->dev, back, bs,
				   before[0][at] << vol->blockbits), 0);
		CHECK(back[0] != 0);
	}
	tux3_close(vol);
	free(vt);
	free(buf);
	free(back);
}

TEST(convert_dleaf_4k) { conversion(12); }
TEST(convert_dleaf_512) { conversion(9); }

/* A punch in the origin leaves a snapshot's blocks alone; deleting the
 * snapshot and punching the rest gives every block back. */
static void punch_case(unsigned bits)
{
	const char *path = make_volume(bits, 8 << 20);
	struct tux3_volume *vol = open_rw(path);
	struct vtree *vt = malloc(sizeof(*vt));
	static struct vdelete_plan plan;
	uint64_t written[16], phys[16], snap[16];
	CHECK(vt);
	vtree_init(vt);
	tux3_ino_t f = new_file(vol, "p");
	CHECK_EQ(tux3_unify(vol), 0);
	CHECK_EQ(tux3_sync(vol), 0);
	uint64_t free0 = vol->freeblocks;

	struct inode inode;
	unsigned label = 0;
	CHECK_EQ(inode_load(vol, f, &inode), 0);
	CHECK_EQ(vfilemap_update(vol, &inode, vt, &label, 2, 10,
				 VEXT_REDIRECT, written), 0);
	CHECK_EQ(label, 0);
	for (unsigned i = 0; i < 10; i++)
		put_data(vol, written[i], 100 + i);
	CHECK_EQ(inode_store(vol, &inode), 0);
	CHECK(vfilemap_is_versioned(vol, &inode));
	CHECK_EQ(tux3_sync(vol), 0);
	int s = vtree_snapshot(vt, 0, 5, 0);
	CHECK(s > 0);
	/* origin punches 0..8: the snapshot keeps 2..12 */
	CHECK_EQ(vfilemap_update(vol, &inode, vt, &label, 0, 8, VEXT_PUNCH,
				 written), 0);
	CHECK_EQ(inode_store(vol, &inode), 0);
	read_map(vol, &inode, vt, 0, phys, 16);
	read_map(vol, &inode, vt, (unsigned)s, snap, 16);
	for (unsigned i = 0; i < 16; i++) {
		CHECK_EQ(written[i < 8 ? i : 0], 0);
		if (i < 2 || i >= 12) {
			CHECK_EQ(snap[i], 0);
			CHECK_EQ(phys[i], 0);
			continue;
		}
		CHECK_EQ(get_data(vol, snap[i]), 100 + i - 2);
		CHECK_EQ(tux3_block_is_used(vol, snap[i]), 1);
		if (i < 8)
			CHECK_EQ(phys[i], 0);
		else
			CHECK_EQ(phys[i], snap[i]);
	}
	/* the origin rewrites block 9: a new block, the snapshot keeps its */
	CHECK_EQ(vfilemap_update(vol, &inode, vt, &label, 9, 1, VEXT_REDIRECT,
				 written), 0);
	CHECK(written[0] != snap[9]);
	put_data(vol, written[0], 999);
	CHECK_EQ(inode_store(vol, &inode), 0);
	read_map(vol, &inode, vt, 0, phys, 16);
	CHECK_EQ(phys[9], written[0]);
	CHECK_EQ(get_data(vol, snap[9]), 107);
	CHECK_EQ(tux3_sync(vol), 0);
	/* the snapshot goes, the origin punches the rest */
	CHECK_EQ(vtree_delete(vt, 5, &plan), 0);
	CHECK_EQ(vfilemap_delete(vol, &inode, vt, &plan), 0);
	vtree_delete_done(vt, &plan);
	CHECK_EQ(inode_store(vol, &inode), 0);
	for (unsigned i = 2; i < 8; i++)
		CHECK_EQ(tux3_block_is_used(vol, snap[i]), 1);	/* deferred */
	CHECK_EQ(vfilemap_update(vol, &inode, vt, &label, 0, 16, VEXT_PUNCH,
				 written), 0);
	CHECK_EQ(inode.dtree, 0);	/* the empty tree went */
	CHECK(!vfilemap_is_versioned(vol, &inode));
	CHECK_EQ(inode_store(vol, &inode), 0);
	inode_free(&inode);
	CHECK_EQ(tux3_unify(vol), 0);
	CHECK_EQ(tux3_sync(vol), 0);
	for (unsigned i = 2; i < 12; i++)
		CHECK_EQ(tux3_block_is_used(vol, snap[i]), 0);
	CHECK_EQ(tux3_check_alloc(vol, NULL, NULL), 0);
	/* every block in use is referenced (check_alloc) and the file
	 * references none: all it had came back.  The free count itself may
	 * differ by a few blocks of the allocator's own files (the bitmap
	 * file's map grows from a direct extent to a dleaf tree when its
	 * blocks move at unify). */
	CHECK(vol->freeblocks <= free0 && vol->freeblocks + 4 >= free0);
	CHECK_EQ(tux3_umount(vol), 0);
	vol = open_rw(path);
	CHECK_EQ(tux3_check_alloc(vol, NULL, NULL), 0);
	CHECK(vol->freeblocks <= free0 && vol->freeblocks + 4 >= free0);
	tux3_close(vol);
	free(vt);
}

TEST(punch_origin_keeps_snapshot_4k) { punch_case(12); }
TEST(punch_origin_keeps_snapshot_512) { punch_case(9); }

/* Errors: no in-place mode, a ghost or unknown label, a read-only
 * volume; a punch of a file without data makes no tree. */
TEST(errors)
{
	const char *path = make_volume(12, 8 << 20);
	struct tux3_volume *vol = open_rw(path);
	struct vtree *vt = malloc(sizeof(*vt));
	uint64_t written[4];
	CHECK(vt);
	vtree_init(vt);
	tux3_ino_t f = new_file(vol, "e");
	struct inode inode;
	CHECK_EQ(inode_load(vol, f, &inode), 0);
	unsigned label = 0;
	CHECK_EQ(vfilemap_update(vol, &inode, vt, &label, 0, 4, VEXT_PUNCH,
				 written), 0);
	CHECK_EQ(inode.dtree, 0);
	CHECK_EQ(vfilemap_update(vol, &inode, vt, &label, 0, 4, VEXT_IN_PLACE,
				 written), -EINVAL);
	label = 77;
	CHECK_EQ(vfilemap_update(vol, &inode, vt, &label, 0, 4, VEXT_REDIRECT,
				 written), -EINVAL);
	label = 0;
	CHECK_EQ(vfilemap_update(vol, &inode, vt, &label, TUX3_KEY_LIMIT - 2,
				 4, VEXT_REDIRECT, written), -EFBIG);
	CHECK_EQ(vfilemap_check(vol, &inode, vt, NULL, NULL), 0);
	inode_free(&inode);
	tux3_close(vol);
	free(vt);
}

int main(void)
{
	return run_tests("vfilemap");
}

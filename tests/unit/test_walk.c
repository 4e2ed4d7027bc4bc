/* Layer: walk.c -- the volume walker on every oracle volume. */
#include <sys/stat.h>
#include "fixtures.h"
#include "tux3_walk.h"

struct counts {
	unsigned supers, logblocks, logrecs, live, bnodes, leaves, inodes,
		 attrs, extents, dirents, orphans, errors;
	unsigned itree_bnodes, itree_leaves, first_bnode_count;
	int first_bnode_replayed;
	tux3_block_t first_bnode_block;
	tux3_ino_t orphan_ino;
	int orphan_in_otree;
	struct blockset inos;
	int stop_inodes_after;	/* return -99 after this many inodes */
	tux3_ino_t skip_ino;	/* return 1 from inode() for it */
	unsigned skip_attrs;	/* attrs seen for skip_ino */
	char orphan_text[160];
};

static int c_super(void *ctx, const struct tux3_super_info *sb)
{
	struct counts *c = ctx;
	c->supers++;
	CHECK(sb->replayed);
	return 0;
}

static int c_logblock(void *ctx, unsigned index, tux3_block_t block,
		      unsigned bytes, tux3_block_t chain)
{
	struct counts *c = ctx;
	(void)block; (void)chain;
	CHECK_EQ(index, c->logblocks);
	CHECK(bytes > 0);
	c->logblocks++;
	return 0;
}

static int c_logrec(void *ctx, tux3_block_t block,
		    const struct tux3_logrec_info *r)
{
	struct counts *c = ctx;
	(void)block;
	c->logrecs++;
	c->live += r->live;
	CHECK_EQ(r->size, log_record_size(r->code));
	CHECK(!strcmp(r->name, log_code_name(r->code)));
	CHECK(!strncmp(r->text, r->name, strlen(r->name)));
	if (r->code == LOG_ORPHAN_ADD)
		snprintf(c->orphan_text, sizeof(c->orphan_text), "%s", r->text);
	return 0;
}

static int c_bnode(void *ctx, const struct tux3_node_info *n)
{
	struct counts *c = ctx;
	if (!c->bnodes++) {
		c->first_bnode_count = n->count;
		c->first_bnode_replayed = n->replayed;
		c->first_bnode_block = n->block;
	}
	if (n->tree == TUX3_TREE_ITREE)
		c->itree_bnodes++;
	CHECK(n->keys && n->children);
	for (unsigned i = 1; i < n->count; i++)
		CHECK(n->keys[i] > n->keys[i - 1]);
	return 0;
}

static int c_leaf(void *ctx, const struct tux3_node_info *n)
{
	struct counts *c = ctx;
	c->leaves++;
	if (n->tree == TUX3_TREE_ITREE)
		c->itree_leaves++;
	CHECK(n->lo < n->hi);
	CHECK(n->used_bytes > 0);
	return 0;
}

static int c_inode(void *ctx, const struct tux3_stat *st,
		   tux3_block_t leaf, unsigned bloblen)
{
	struct counts *c = ctx;
	(void)leaf;
	CHECK(bloblen > 0);
	c->inodes++;
	CHECK_EQ(blockset_add(&c->inos, st->ino), 1);	/* each inode once */
	if (c->stop_inodes_after && (int)c->inodes >= c->stop_inodes_after)
		return -99;
	return st->ino == c->skip_ino ? 1 : 0;
}

static int c_attr(void *ctx, tux3_ino_t ino, const struct tux3_attr_desc *a)
{
	struct counts *c = ctx;
	c->attrs++;
	if (ino == c->skip_ino)
		c->skip_attrs++;
	CHECK(a->name);
	return 0;
}

static int c_extent(void *ctx, tux3_ino_t ino, uint64_t logical,
		    tux3_block_t physical, uint64_t count, uint32_t version,
		    tux3_block_t leaf)
{
	struct counts *c = ctx;
	(void)ino; (void)logical; (void)physical; (void)leaf;
	CHECK(count > 0);
	CHECK_EQ(version, 0);
	c->extents++;
	return 0;
}

static int c_dirent(void *ctx, tux3_ino_t dir, const char *name,
		    unsigned len, tux3_ino_t ino, unsigned type, uint64_t pos,
		    tux3_block_t block)
{
	struct counts *c = ctx;
	(void)dir; (void)name; (void)ino; (void)pos; (void)block;
	CHECK(len > 0);
	CHECK(type >= 1 && type <= 7);
	c->dirents++;
	return 0;
}

static int c_orphan(void *ctx, tux3_ino_t ino, int in_otree)
{
	struct counts *c = ctx;
	c->orphans++;
	c->orphan_ino = ino;
	c->orphan_in_otree = in_otree;
	return 0;
}

static int c_error(void *ctx, const struct tux3_error *e)
{
	struct counts *c = ctx;
	c->errors++;
	fprintf(stderr, "walk error: %s\n", e->what);
	return 0;
}

static const struct tux3_walk_ops all_ops = {
	.super = c_super, .logblock = c_logblock, .logrec = c_logrec,
	.bnode = c_bnode, .leaf = c_leaf, .inode = c_inode, .attr = c_attr,
	.extent = c_extent, .dirent = c_dirent, .orphan = c_orphan,
	.error = c_error,
};

/* "(N blocks, M records)" from the info file, if the sources are known */
static bool info_log_counts(const char *image, unsigned *blocks,
			    unsigned *records)
{
	const char *src = getenv("TUX3_ORACLE_SRC");
	char path[1024], line[512];
	if (!src)
		return false;
	snprintf(path, sizeof(path), "%s/%s.info.txt", src, image);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool found = false;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "Log chain of the current cycle");
		if (p && (p = strchr(p, '(')) &&
		    sscanf(p, "(%u blocks, %u records)", blocks, records) == 2) {
			found = true;
			break;
		}
	}
	fclose(f);
	return found;
}

/* Every manifest path resolves to an inode the walker visited, and the
 * walker saw one directory entry per non-root path. */
static void check_manifest_inodes(struct tux3_volume *vol, const char *image,
				  struct counts *c)
{
	const char *src = getenv("TUX3_ORACLE_SRC");
	if (!src)
		return;
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s.manifest.tsv", src, image);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char *line = NULL;
	size_t cap = 0;
	unsigned rows = 0;
	while (getline(&line, &cap, f) > 0) {
		if (line[0] == '#')
			continue;
		*strchr(line, '\t') = 0;
		tux3_ino_t ino;
		CHECK_EQ(tux3_lookup_path(vol, line, &ino), 0);
		if (!blockset_has(&c->inos, ino))
			fprintf(stderr, "%s (inode %" PRIu64 ") not walked\n",
				line, ino);
		CHECK(blockset_has(&c->inos, ino));
		rows++;
	}
	free(line);
	fclose(f);
	CHECK_EQ(c->dirents, rows - 1);
}

struct expect {
	const char *name;
	unsigned logblocks, logrecs, live, min_inodes;
};

static const struct expect expect[] = {
	{ "empty-4k", 1, 3, 3, 2 },
	{ "empty-1k", 1, 3, 3, 2 },
	{ "empty-512", 1, 3, 3, 2 },
	{ "empty-16k", 1, 3, 3, 2 },
	{ "small-delta", 4, 18, 18, 4 },
	{ "small-unified", 1, 14, 12, 6 },
	{ "orphan", 5, 37, 33, 3 },
	{ "corrupt-bitmap", 1, 14, 12, 6 },
	{ "corrupt-bitmap-alloc", 1, 14, 12, 6 },
	{ "tree-fuse", 3, 47, 37, 3876 },
};

static void walk_image(const struct expect *e)
{
	struct tux3_volume *vol = open_oracle(e->name);
	struct counts c = { 0 };
	int r = tux3_walk(vol, &all_ops, &c);
	CHECK_EQ(r, 0);
	CHECK_EQ(c.errors, 0);
	CHECK_EQ(c.supers, 1);
	CHECK_EQ(c.logblocks, e->logblocks);
	CHECK_EQ(c.logrecs, e->logrecs);
	CHECK_EQ(c.live, e->live);
	unsigned ib, ir;
	if (info_log_counts(e->name, &ib, &ir)) {
		CHECK_EQ(c.logblocks, ib);
		CHECK_EQ(c.logrecs, ir);
	}
	CHECK(c.inodes >= e->min_inodes);
	CHECK(blockset_has(&c.inos, TUX3_ROOT_INO));
	CHECK(blockset_has(&c.inos, TUX3_ATABLE_INO));
	CHECK(c.attrs >= 4 * c.inodes - 8);
	check_manifest_inodes(vol, e->name, &c);
	if (!strcmp(e->name, "orphan")) {
		CHECK_EQ(c.orphans, 1);
		CHECK_EQ(c.orphan_ino, 65);
		CHECK_EQ(c.orphan_in_otree, 0);
		CHECK(blockset_has(&c.inos, 65));	/* still in the itree */
		CHECK(!strcmp(c.orphan_text, "ORPHAN_ADD version 0, inum 65"));
	} else {
		CHECK_EQ(c.orphans, 0);
	}
	if (!strcmp(e->name, "tree-fuse")) {
		CHECK_EQ(c.itree_bnodes, 1);
		CHECK_EQ(c.first_bnode_count, 119);
		CHECK_EQ(c.first_bnode_block, 5);
		CHECK(c.first_bnode_replayed);
		CHECK_EQ(c.itree_leaves, 119);
		/* 3876 paths, one a second hard link, plus inodes 1, 2 and 4 */
		CHECK_EQ(c.inodes, 3876 - 1 + 3);
	} else {
		CHECK_EQ(c.itree_bnodes, 0);
	}
	/* tux3_walk_log alone sees the same log */
	struct counts l = { 0 };
	struct tux3_walk_ops lops = { .logblock = c_logblock,
				      .logrec = c_logrec };
	CHECK_EQ(tux3_walk_log(vol, &lops, &l), 0);
	CHECK_EQ(l.logblocks, c.logblocks);
	CHECK_EQ(l.logrecs, c.logrecs);
	CHECK_EQ(l.live, c.live);
	blockset_free(&c.inos);
	tux3_close(vol);
}

TEST(walk_small_images)
{
	unsigned seen = 0;
	for (unsigned i = 0; i + 1 < sizeof(expect) / sizeof(expect[0]); i++) {
		char buf[1024];
		if (!oracle_image(expect[i].name, buf, sizeof(buf)))
			continue;
		seen++;
		walk_image(&expect[i]);
	}
	if (!seen)
		SKIP("TUX3_ORACLE_DIR not set");
}

TEST(walk_tree_fuse)
{
	walk_image(&expect[sizeof(expect) / sizeof(expect[0]) - 1]);
}

TEST(walk_stops_on_negative)
{
	struct tux3_volume *vol = open_oracle("tree-fuse");
	struct counts c = { .stop_inodes_after = 10 };
	CHECK_EQ(tux3_walk(vol, &all_ops, &c), -99);
	CHECK_EQ(c.inodes, 10);
	CHECK_EQ(c.orphans, 0);
	blockset_free(&c.inos);
	tux3_close(vol);
}

TEST(walk_skips_children)
{
	struct tux3_volume *vol = open_oracle("small-delta");
	struct counts c = { .skip_ino = TUX3_ROOT_INO };
	CHECK_EQ(tux3_walk(vol, &all_ops, &c), 0);
	CHECK_EQ(c.dirents, 0);		/* the root's entries skipped */
	CHECK_EQ(c.skip_attrs, 0);
	CHECK(blockset_has(&c.inos, 64));	/* other inodes still visited */
	blockset_free(&c.inos);
	tux3_close(vol);
}

TEST(walk_no_callbacks)
{
	struct tux3_volume *vol = open_oracle("tree-fuse");
	struct tux3_walk_ops none = { 0 };
	CHECK_EQ(tux3_walk(vol, &none, NULL), 0);
	tux3_close(vol);
}

TEST(walk_noreplay_reports_stale_tree)
{
	/* without replay the itree root is the stale block 5; the walk still
	 * completes, and whatever it skips is reported, never fatal */
	struct tux3_volume *vol = open_oracle_mode("tree-fuse", TUX3_OPEN_NOREPLAY);
	struct counts c = { 0 };
	struct tux3_walk_ops ops = all_ops;
	ops.super = NULL;
	int r = tux3_walk(vol, &ops, &c);
	CHECK(r == 0 || r == -EUCLEAN);
	CHECK_EQ(r == -EUCLEAN, c.errors > 0);
	CHECK_EQ(c.first_bnode_count, 117);
	CHECK(!c.first_bnode_replayed);
	blockset_free(&c.inos);
	tux3_close(vol);
}

struct runs {
	uint64_t start[32], count[32];
	unsigned n, stale, atoms, stop_after;
	char names[256];
};

static int c_bitrun(void *ctx, uint64_t chunk, tux3_block_t start,
		    uint64_t count, int stale)
{
	struct runs *r = ctx;
	CHECK_EQ(chunk, 0);	/* 16384 blocks: one bitmap block */
	CHECK(count > 0);
	if (r->n < 32) {
		r->start[r->n] = start;
		r->count[r->n] = count;
	}
	r->n++;
	r->stale += !!stale;
	return 0;
}

static int c_never(void *ctx, const struct tux3_stat *st,
		   tux3_block_t leafblock, unsigned bloblen)
{
	(void)ctx; (void)st; (void)leafblock; (void)bloblen;
	CHECK(!"inode visited");
	return 0;
}

static int c_never_node(void *ctx, const struct tux3_node_info *n)
{
	(void)ctx; (void)n;
	CHECK(!"leaf visited");
	return 0;
}

static int c_never_log(void *ctx, unsigned index, tux3_block_t block,
		       unsigned bytes, tux3_block_t chain)
{
	(void)ctx; (void)index; (void)block; (void)bytes; (void)chain;
	CHECK(!"log visited");
	return 0;
}

static int c_atom(void *ctx, const struct tux3_atom *a)
{
	struct runs *r = ctx;
	size_t len = strlen(r->names);
	snprintf(r->names + len, sizeof(r->names) - len, "%s%s=%u",
		 len ? " " : "", a->name, (unsigned)a->refcount);
	if (++r->atoms == r->stop_after)
		return -77;
	return 0;
}

TEST(walk_bitmap_runs_after_replay)
{
	/* the oracle's manifest: live used = 0-1, 4-6, 63, 66-67, 69-143,
	 * 147-149 after replaying what follows the UNIFY mark; the one bitmap
	 * block is stale on disk (it says 0-1, 4-7, 63-146) */
	static const uint64_t want[][2] = {
		{ 0, 2 }, { 4, 3 }, { 63, 1 }, { 66, 2 }, { 69, 75 },
		{ 147, 3 },
	};
	struct tux3_volume *vol = open_oracle("small-unified");
	struct tux3_walk_ops ops = { .bitrun = c_bitrun };
	struct runs r = { 0 };
	CHECK_EQ(tux3_walk(vol, &ops, &r), 0);
	CHECK_EQ(r.n, 6);
	for (unsigned i = 0; i < 6 && i < r.n; i++) {
		CHECK_EQ(r.start[i], want[i][0]);
		CHECK_EQ(r.count[i], want[i][1]);
	}
	CHECK_EQ(r.stale, r.n);
	tux3_close(vol);

	/* without replay: the disk copy, not stale */
	vol = open_oracle_mode("small-unified", TUX3_OPEN_NOREPLAY);
	memset(&r, 0, sizeof(r));
	CHECK_EQ(tux3_walk(vol, &ops, &r), 0);
	CHECK_EQ(r.n, 3);
	CHECK_EQ(r.start[2], 63);
	CHECK_EQ(r.count[2], 84);
	CHECK_EQ(r.stale, 0);
	tux3_close(vol);
}

TEST(walk_atoms)
{
	struct tux3_volume *vol = open_oracle("small-delta");
	struct tux3_walk_ops ops = { .atom = c_atom };
	struct runs r = { 0 };
	CHECK_EQ(tux3_walk(vol, &ops, &r), 0);
	CHECK_EQ(r.atoms, 1);
	CHECK(!strcmp(r.names, "user.foo=1"));
	memset(&r, 0, sizeof(r));
	r.stop_after = 1;
	CHECK_EQ(tux3_walk(vol, &ops, &r), -77);	/* a stop is not contained */
	/* the table alone: nothing else visited */
	struct tux3_walk_ops one = { .atom = c_atom, .inode = c_never,
				     .leaf = c_never_node,
				     .logblock = c_never_log };
	memset(&r, 0, sizeof(r));
	CHECK_EQ(tux3_walk_atoms(vol, &one, &r), 0);
	CHECK_EQ(r.atoms, 1);
	tux3_close(vol);
}

TEST(walk_bitmap_alone)
{
	struct tux3_volume *vol = open_oracle("small-unified");
	struct tux3_walk_ops ops = { .bitrun = c_bitrun, .inode = c_never,
				     .leaf = c_never_node,
				     .logblock = c_never_log };
	struct runs r = { 0 };
	CHECK_EQ(tux3_walk_bitmap(vol, &ops, &r), 0);
	CHECK_EQ(r.n, 6);
	tux3_close(vol);
}

int main(void)
{
	return run_tests("walk");
}

/*
 * Views of the volume's structures, each a visitor of the library's one
 * walker (tux3_walk, or tux3_walk_inode for one file): itree, otree and
 * dtree (tree shape), blocks (a file's blocks), icheck (block -> owner),
 * ncheck (inode -> paths), find_magic (blocks of a type), frag (file
 * fragmentation) and orphans.  Structures the walker finds damaged are
 * reported (naming block, inode, offset) and the command fails at the
 * end; the rest is still shown.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "debugfs.h"
#include "tux3_fields.h"

/* A structure the walker skipped as invalid: report it, go on. */
struct visit {
	struct shell *sh;
	const char *cmd;
	int failed;
};

static int visit_error(void *ctx, const struct tux3_error *e)
{
	struct visit *v = ctx;
	char text[400];
	(void)e;
	sh_err(v->sh, "%s: %s", v->cmd,
	       tux3_error_text(v->sh->vol, text, sizeof(text)));
	v->failed = 1;
	return 0;
}

/* After a walk: 0, or 1 with the error reported. */
static int walk_result(struct visit *v, int err)
{
	if (err == -EUCLEAN)
		return 1;	/* each skipped structure was reported */
	if (err < 0)
		return sh_volerr(v->sh, v->cmd, err);
	return v->failed;
}

static const char *tree_name(enum tux3_tree t)
{
	return t == TUX3_TREE_ITREE ? "itree" : t == TUX3_TREE_OTREE ?
	       "otree" : "dtree";
}

static const char *leaf_kind(enum tux3_tree t)
{
	return t == TUX3_TREE_ITREE ? "ileaf" : t == TUX3_TREE_OTREE ?
	       "oleaf" : "dleaf";
}

static const char *internal_name(tux3_ino_t ino)
{
	switch (ino) {
	case TUX3_BITMAP_INO: return "the bitmap";
	case TUX3_COUNTMAP_INO: return "the countmap";
	case TUX3_VTABLE_INO: return "the version table";
	case TUX3_ATABLE_INO: return "the atom table";
	case TUX3_VOLMAP_INO: return "the volume map";
	case TUX3_LOGMAP_INO: return "the log map";
	case TUX3_ROOT_INO: return "the root directory";
	}
	return NULL;
}

static int has_flag(int argc, char **argv, const char *flags, char *seen,
		    int *first)
{
	int c;
	optind = 0;
	while ((c = getopt(argc, argv, flags)) != -1) {
		if (c == '?' || c == ':')
			return -1;
		seen[(unsigned char)c] = 1;
	}
	*first = optind;
	return 0;
}

/* ---- itree, otree, dtree: the shape of a tree ---- */

struct level {
	uint64_t nodes, entries, bytes;
};

struct shape {
	struct visit v;
	enum tux3_tree tree;
	tux3_ino_t owner;	/* dtree: the inode */
	int verbose;
	unsigned blocksize;
	int depth;		/* levels seen */
	struct level lv[32];
};

static void fill(char *buf, size_t len, uint64_t used, uint64_t cap)
{
	if (!cap)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f%%", 100.0 * (double)used /
			 (double)cap);
}

static int shape_node(struct shape *s, const struct tux3_node_info *n,
		      int leaf)
{
	if (n->tree != s->tree || (s->tree == TUX3_TREE_DTREE &&
				   n->owner != s->owner))
		return 0;
	int l = n->level < 0 ? 0 : n->level > 31 ? 31 : n->level;
	s->lv[l].nodes++;
	s->lv[l].entries += n->count;
	s->lv[l].bytes += n->used_bytes;
	if (l + 1 > s->depth)
		s->depth = l + 1;
	if (s->verbose) {
		char f[16];
		fill(f, sizeof(f), n->used_bytes, s->blocksize);
		fprintf(s->v.sh->out, "  level %d block %" PRIu64 ": %s, %u "
			"%s, keys %" PRIu64 "-", n->level, n->block,
			leaf ? leaf_kind(n->tree) : "bnode", n->count,
			leaf && n->tree != TUX3_TREE_DTREE ? "slots" :
			"entries", n->lo);
		if (n->hi >= (1ULL << 48))
			fprintf(s->v.sh->out, "end");
		else
			fprintf(s->v.sh->out, "%" PRIu64, n->hi - 1);
		fprintf(s->v.sh->out, ", %u bytes used (%s)%s\n", n->used_bytes,
			f, n->replayed ? ", image from log replay" : "");
	}
	return 0;
}

static int shape_bnode(void *ctx, const struct tux3_node_info *n)
{
	return shape_node(ctx, n, 0);
}

static int shape_leaf(void *ctx, const struct tux3_node_info *n)
{
	return shape_node(ctx, n, 1);
}

static int skip_inode(void *ctx, const struct tux3_stat *st,
		      tux3_block_t leaf, unsigned len)
{
	(void)ctx; (void)st; (void)leaf; (void)len;
	return 1;	/* the inode table only: not each inode's data */
}

static void shape_report(struct shape *s)
{
	FILE *o = s->v.sh->out;
	uint64_t nodes = 0, bnodes = 0, leaves = 0, bytes = 0;
	char f[16];
	if (!s->depth) {
		fprintf(o, "no nodes\n");
		return;
	}
	fprintf(o, "%5s  %-5s %8s %10s %12s %7s\n", "level", "kind", "nodes",
		"entries", "bytes used", "fill");
	for (int l = 0; l < s->depth; l++) {
		struct level *lv = &s->lv[l];
		int leaf = l == s->depth - 1;
		fill(f, sizeof(f), lv->bytes, lv->nodes * s->blocksize);
		fprintf(o, "%5d  %-5s %8" PRIu64 " %10" PRIu64 " %12" PRIu64
			" %7s\n", l, leaf ? leaf_kind(s->tree) : "bnode",
			lv->nodes, lv->entries, lv->bytes, f);
		nodes += lv->nodes;
		bytes += lv->bytes;
		if (leaf)
			leaves += lv->nodes;
		else
			bnodes += lv->nodes;
	}
	fill(f, sizeof(f), bytes, nodes * s->blocksize);
	fprintf(o, "depth %d: %" PRIu64 " node%s (%" PRIu64 " bnode%s, %" PRIu64
		" lea%s), %" PRIu64 " bytes used of %" PRIu64 " (%s)\n",
		s->depth, nodes, nodes == 1 ? "" : "s", bnodes,
		bnodes == 1 ? "" : "s", leaves, leaves == 1 ? "f" : "ves",
		bytes, nodes * s->blocksize, f);
}

static int tree_shape(struct shell *sh, int argc, char **argv,
		      enum tux3_tree tree)
{
	char seen[256] = { 0 };
	int first;
	struct shape s = { .v = { sh, argv[0], 0 }, .tree = tree,
			   .blocksize = tux3_block_size(sh->vol) };
	if (has_flag(argc, argv, "v", seen, &first) || first != argc)
		return sh_err(sh, "usage: %s [-v]", argv[0]);
	s.verbose = seen['v'];
	struct tux3_super_info si;
	tux3_super_info(sh->vol, &si);
	uint64_t root = tree == TUX3_TREE_ITREE ? si.live_iroot : si.oroot;
	if (!root) {
		fprintf(sh->out, "%s: empty (no root)\n", tree_name(tree));
		return 0;
	}
	fprintf(sh->out, "%s: root block %" PRIu64 ", depth %" PRIu64 "\n",
		tree_name(tree), root & (uint64_t)0xffffffffffff,
		(root >> 48) & 0x7fff);
	struct tux3_walk_ops ops = { .bnode = shape_bnode, .leaf = shape_leaf,
				     .inode = skip_inode, .error = visit_error };
	int err = tux3_walk(sh->vol, &ops, &s);
	shape_report(&s);
	return walk_result(&s.v, err);
}

int cmd_itree(struct shell *sh, int argc, char **argv)
{
	return tree_shape(sh, argc, argv, TUX3_TREE_ITREE);
}

int cmd_otree(struct shell *sh, int argc, char **argv)
{
	return tree_shape(sh, argc, argv, TUX3_TREE_OTREE);
}

int cmd_dtree(struct shell *sh, int argc, char **argv)
{
	char seen[256] = { 0 };
	int first;
	struct shape s = { .v = { sh, argv[0], 0 }, .tree = TUX3_TREE_DTREE,
			   .blocksize = tux3_block_size(sh->vol) };
	struct tux3_stat st;
	if (has_flag(argc, argv, "v", seen, &first) || argc - first != 1)
		return sh_err(sh, "usage: dtree [-v] PATH|<inum>");
	s.verbose = seen['v'];
	const char *path = argv[first];
	if (sh_resolve(sh, path, &s.owner))
		return 1;
	int err = tux3_stat(sh->vol, s.owner, &st);
	if (err)
		return sh_volerr(sh, path, err);
	uint64_t root = st.dtree_root, block = root & (uint64_t)0xffffffffffff;
	if (!root) {
		fprintf(sh->out, "inode %" PRIu64 ": no data\n", s.owner);
		return 0;
	}
	if (root >> 63) {
		fprintf(sh->out, "inode %" PRIu64 ": a direct extent of %" PRIu64
			" blocks at %" PRIu64 " (no tree)\n", s.owner,
			(root >> 48) & 0x7fff, block);
		return 0;
	}
	fprintf(sh->out, "inode %" PRIu64 ": dtree root block %" PRIu64
		", depth %" PRIu64 "\n", s.owner, block, (root >> 48) & 0x7fff);
	struct tux3_walk_ops ops = { .bnode = shape_bnode, .leaf = shape_leaf,
				     .error = visit_error };
	err = tux3_walk_inode(sh->vol, s.owner, &ops, &s);
	shape_report(&s);
	return walk_result(&s.v, err);
}

/* ---- blocks: every block of one file ---- */

struct brun {
	uint64_t block, count;
	uint64_t logical;	/* data: the first logical block */
	int kind;		/* 0 data, 1 bnode, 2 dleaf */
	int level;
};

struct blocks {
	struct visit v;
	tux3_ino_t ino;
	struct brun *r;
	size_t count, cap;
	int nomem;
};

static void add_run(struct blocks *b, struct brun run)
{
	if (b->count == b->cap) {
		size_t ncap = b->cap ? b->cap * 2 : 64;
		void *n = realloc(b->r, ncap * sizeof(*b->r));
		if (!n) {
			b->nomem = 1;
			return;
		}
		b->r = n;
		b->cap = ncap;
	}
	b->r[b->count++] = run;
}

static int blocks_node(struct blocks *b, const struct tux3_node_info *n,
		       int kind)
{
	if (n->tree == TUX3_TREE_DTREE && n->owner == b->ino)
		add_run(b, (struct brun){ n->block, 1, 0, kind, n->level });
	return 0;
}

static int blocks_bnode(void *ctx, const struct tux3_node_info *n)
{
	return blocks_node(ctx, n, 1);
}

static int blocks_leaf(void *ctx, const struct tux3_node_info *n)
{
	return blocks_node(ctx, n, 2);
}

static int blocks_extent(void *ctx, tux3_ino_t ino, uint64_t logical,
			 tux3_block_t physical, uint64_t count,
			 uint32_t version, tux3_block_t leaf)
{
	struct blocks *b = ctx;
	(void)version; (void)leaf;
	if (ino == b->ino && physical)
		add_run(b, (struct brun){ physical, count, logical, 0, 0 });
	return 0;
}

static int cmp_run(const void *a, const void *b)
{
	const struct brun *x = a, *y = b;
	return x->block < y->block ? -1 : x->block > y->block;
}

int cmd_blocks(struct shell *sh, int argc, char **argv)
{
	char seen[256] = { 0 };
	int first;
	static struct blocks b;
	memset(&b, 0, sizeof(b));
	b.v = (struct visit){ sh, argv[0], 0 };
	if (has_flag(argc, argv, "v", seen, &first) || argc - first != 1)
		return sh_err(sh, "usage: blocks [-v] PATH|<inum>");
	const char *path = argv[first];
	if (sh_resolve(sh, path, &b.ino))
		return 1;
	struct tux3_walk_ops ops = { .bnode = blocks_bnode,
				     .leaf = blocks_leaf,
				     .extent = blocks_extent,
				     .error = visit_error };
	int err = tux3_walk_inode(sh->vol, b.ino, &ops, &b);
	if (err && err != -EUCLEAN) {
		free(b.r);
		return sh_volerr(sh, path, err);
	}
	FILE *o = sh->out;
	if (b.nomem)
		b.v.failed = sh_err(sh, "blocks: out of memory");
	if (seen['v']) {
		/* in the walker's order: tree nodes before their extents */
		for (size_t i = 0; i < b.count; i++) {
			struct brun *r = &b.r[i];
			if (r->kind)
				fprintf(o, "%" PRIu64 "  %s, level %d\n",
					r->block, r->kind == 1 ? "bnode" :
					"dleaf", r->level);
			else if (r->count == 1)
				fprintf(o, "%" PRIu64 "  data, logical %" PRIu64
					"\n", r->block, r->logical);
			else
				fprintf(o, "%" PRIu64 "-%" PRIu64 "  data, "
					"logical %" PRIu64 "-%" PRIu64 "\n",
					r->block, r->block + r->count - 1,
					r->logical, r->logical + r->count - 1);
		}
	} else {
		if (b.count)
			qsort(b.r, b.count, sizeof(*b.r), cmp_run);
		unsigned col = 0;
		uint64_t total = 0;
		for (size_t i = 0; i < b.count;) {
			uint64_t start = b.r[i].block, end = start + b.r[i].count;
			for (i++; i < b.count && b.r[i].block == end; i++)
				end += b.r[i].count;
			char word[64];
			int n = end - start == 1 ?
				snprintf(word, sizeof(word), "%" PRIu64, start) :
				snprintf(word, sizeof(word), "%" PRIu64 "-%"
					 PRIu64, start, end - 1);
			if (col && col + 1 + (unsigned)n > 72) {
				fputc('\n', o);
				col = 0;
			}
			fprintf(o, "%s%s", col ? " " : "", word);
			col += (col ? 1 : 0) + (unsigned)n;
			total += end - start;
		}
		if (col)
			fputc('\n', o);
		fprintf(o, "%" PRIu64 " block%s\n", total, total == 1 ? "" : "s");
	}
	free(b.r);
	return walk_result(&b.v, err);
}

/* ---- icheck: who owns a block ---- */

struct owner_query {
	tux3_block_t block;
	char **owners;
	unsigned n;
};

struct icheck {
	struct visit v;
	struct owner_query *q;
	unsigned n;
	int nomem;
};

static void owner_add(struct icheck *c, struct owner_query *q,
		      const char *text)
{
	char **n = realloc(q->owners, (q->n + 1) * sizeof(*n));
	char *copy = strdup(text);
	if (!n || !copy) {
		free(copy);
		if (n)
			q->owners = n;
		c->nomem = 1;
		return;
	}
	q->owners = n;
	q->owners[q->n++] = copy;
}

/* Blocks block..block+count-1 belong to what fmt says; an extent's
 * block gets its place in it. */
static void owned(struct icheck *c, uint64_t block, uint64_t count,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void owned(struct icheck *c, uint64_t block, uint64_t count,
		  const char *fmt, ...)
{
	for (unsigned i = 0; i < c->n; i++) {
		uint64_t b = c->q[i].block;
		if (b < block || b - block >= count)
			continue;
		char what[300];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(what, sizeof(what), fmt, ap);
		va_end(ap);
		owner_add(c, &c->q[i], what);
	}
}

static int icheck_node(void *ctx, const struct tux3_node_info *n, int leaf)
{
	struct icheck *c = ctx;
	if (n->tree == TUX3_TREE_DTREE)
		owned(c, n->block, 1, "inode %" PRIu64 " dtree %s, level %d",
		      n->owner, leaf ? "dleaf" : "bnode", n->level);
	else
		owned(c, n->block, 1, "%s %s, level %d",
		      n->tree == TUX3_TREE_ITREE ? "inode table" :
		      "orphan table", leaf ? leaf_kind(n->tree) : "bnode",
		      n->level);
	return 0;
}

static int icheck_bnode(void *ctx, const struct tux3_node_info *n)
{
	return icheck_node(ctx, n, 0);
}

static int icheck_leaf(void *ctx, const struct tux3_node_info *n)
{
	return icheck_node(ctx, n, 1);
}

static int icheck_extent(void *ctx, tux3_ino_t ino, uint64_t logical,
			 tux3_block_t physical, uint64_t count,
			 uint32_t version, tux3_block_t leaf)
{
	struct icheck *c = ctx;
	const char *name = internal_name(ino);
	(void)leaf;
	if (!physical)
		return 0;
	if (TUX3_EXTENT_META(version)) {
		for (unsigned i = 0; i < c->n; i++)
			if (c->q[i].block == physical) {
				char what[80];
				snprintf(what, sizeof(what), "inode %" PRIu64
					 " %s chain, block %" PRIu64, ino,
					 version == TUX3_EXTENT_SPILL ?
					 "attribute" : "element", logical);
				owner_add(c, &c->q[i], what);
			}
		return 0;
	}
	for (unsigned i = 0; i < c->n; i++) {
		uint64_t b = c->q[i].block;
		char what[300];
		if (b < physical || b - physical >= count)
			continue;
		snprintf(what, sizeof(what), "inode %" PRIu64 "%s%s%s data, "
			 "logical block %" PRIu64, ino, name ? " (" : "",
			 name ? name : "", name ? ")" : "",
			 logical + (b - physical));
		owner_add(c, &c->q[i], what);
	}
	return 0;
}

static int icheck_log(void *ctx, unsigned index, tux3_block_t block,
		      unsigned bytes, tux3_block_t chain)
{
	(void)bytes; (void)chain;
	owned(ctx, block, 1, "log block %u of the chain", index);
	return 0;
}

int cmd_icheck(struct shell *sh, int argc, char **argv)
{
	struct icheck c = { .v = { sh, argv[0], 0 } };
	unsigned bs = tux3_block_size(sh->vol);
	if (argc < 2)
		return sh_err(sh, "usage: icheck BLOCK...");
	c.q = calloc((size_t)argc, sizeof(*c.q));
	if (!c.q)
		return sh_err(sh, "out of memory");
	for (int i = 1; i < argc; i++) {
		if (parse_block(sh, argv[i], &c.q[c.n].block)) {
			free(c.q);
			return 1;
		}
		c.n++;
	}
	/* bytes 0..8191: the boot area and the superblock area */
	uint64_t reserved = (8192 + bs - 1) / bs;
	for (unsigned i = 0; i < c.n; i++)
		if (c.q[i].block < reserved)
			owner_add(&c, &c.q[i], "reserved: bytes 0-8191 (boot "
				  "area, superblock)");
	struct tux3_walk_ops ops = { .bnode = icheck_bnode,
				     .leaf = icheck_leaf,
				     .extent = icheck_extent,
				     .logblock = icheck_log,
				     .error = visit_error };
	int err = tux3_walk(sh->vol, &ops, &c);
	if (c.nomem)
		err = -ENOMEM;
	if (!err || err == -EUCLEAN)
		fprintf(sh->out, "%-10s %s\n", "Block", "Owner");
	for (unsigned i = 0; i < c.n && (!err || err == -EUCLEAN); i++) {
		struct owner_query *q = &c.q[i];
		for (unsigned k = 0; k < q->n; k++)
			fprintf(sh->out, "%-10" PRIu64 " %s\n", q->block,
				q->owners[k]);
		if (q->n > 1)
			fprintf(sh->out, "%-10" PRIu64 " (owned %u times: see "
				"check)\n", q->block, q->n);
		if (q->n)
			continue;
		int used = tux3_block_is_used(sh->vol, q->block);
		if (used < 0) {
			tux3_clear_error(sh->vol);
			fprintf(sh->out, "%-10" PRIu64 " not referenced (bitmap "
				"unreadable)\n", q->block);
		} else {
			fprintf(sh->out, "%-10" PRIu64 " %s\n", q->block,
				used ? "in use, but referenced by no structure "
				"(freed at the next unify, or leaked: see "
				"check)" : "free");
		}
	}
	for (unsigned i = 0; i < c.n; i++) {
		for (unsigned k = 0; k < c.q[i].n; k++)
			free(c.q[i].owners[k]);
		free(c.q[i].owners);
	}
	free(c.q);
	return walk_result(&c.v, err);
}

/* ---- ncheck: the names of an inode ---- */

struct dirname {
	tux3_ino_t ino, parent;
	char *name;
};

struct hit {
	tux3_ino_t ino, dir;
	char *name;
};

struct ncheck {
	struct visit v;
	tux3_ino_t *want;
	unsigned nwant;
	struct dirname *dirs;
	size_t ndirs, capdirs;
	struct hit *hits;
	size_t nhits, caphits;
	int nomem;
};

static int wanted(struct ncheck *c, tux3_ino_t ino)
{
	for (unsigned i = 0; i < c->nwant; i++)
		if (c->want[i] == ino)
			return 1;
	return 0;
}

static int ncheck_inode(void *ctx, const struct tux3_stat *st,
			tux3_block_t leaf, unsigned len)
{
	(void)ctx; (void)leaf; (void)len;
	return S_ISDIR(st->mode) ? 0 : 1;	/* entries of directories only */
}

static int ncheck_dirent(void *ctx, tux3_ino_t dir, const char *name,
			 unsigned len, tux3_ino_t ino, unsigned type,
			 uint64_t pos, tux3_block_t block)
{
	struct ncheck *c = ctx;
	(void)pos; (void)block;
	if (type == TUX3_DT_DIR) {
		if (c->ndirs == c->capdirs) {
			size_t ncap = c->capdirs ? c->capdirs * 2 : 256;
			void *n = realloc(c->dirs, ncap * sizeof(*c->dirs));
			if (!n)
				goto nomem;
			c->dirs = n;
			c->capdirs = ncap;
		}
		char *copy = strndup(name, len);
		if (!copy)
			goto nomem;
		c->dirs[c->ndirs++] = (struct dirname){ ino, dir, copy };
	}
	if (wanted(c, ino)) {
		if (c->nhits == c->caphits) {
			size_t ncap = c->caphits ? c->caphits * 2 : 16;
			void *n = realloc(c->hits, ncap * sizeof(*c->hits));
			if (!n)
				goto nomem;
			c->hits = n;
			c->caphits = ncap;
		}
		char *copy = strndup(name, len);
		if (!copy)
			goto nomem;
		c->hits[c->nhits++] = (struct hit){ ino, dir, copy };
	}
	return 0;
nomem:
	c->nomem = 1;
	return -ENOMEM;
}

static int cmp_dirname(const void *a, const void *b)
{
	const struct dirname *x = a, *y = b;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static const struct dirname *find_dir(struct ncheck *c, tux3_ino_t ino)
{
	struct dirname key = { .ino = ino };
	if (!c->ndirs)
		return NULL;
	return bsearch(&key, c->dirs, c->ndirs, sizeof(*c->dirs), cmp_dirname);
}

/* The path of name in dir, up to the root; "<dir>/..." when the chain
 * of names does not reach it (an unreachable or looping directory). */
static void print_path(struct ncheck *c, tux3_ino_t dir, const char *name)
{
	const char *parts[256];
	unsigned n = 0;
	tux3_ino_t at = dir;
	parts[n++] = name;
	while (at != TUX3_ROOT_INO && n < 256) {
		const struct dirname *d = find_dir(c, at);
		if (!d)
			break;
		parts[n++] = d->name;
		at = d->parent;
	}
	FILE *o = c->v.sh->out;
	if (at != TUX3_ROOT_INO)
		fprintf(o, "<%" PRIu64 ">", at);
	while (n)
		fprintf(o, "/%s", parts[--n]);
}

int cmd_ncheck(struct shell *sh, int argc, char **argv)
{
	static struct ncheck c;
	memset(&c, 0, sizeof(c));
	c.v = (struct visit){ sh, argv[0], 0 };
	if (argc < 2)
		return sh_err(sh, "usage: ncheck INUM...");
	c.want = calloc((size_t)argc, sizeof(*c.want));
	if (!c.want)
		return sh_err(sh, "out of memory");
	for (int i = 1; i < argc; i++) {
		uint64_t v;
		const char *s = argv[i];
		size_t len = strlen(s);
		char tmp[32];
		if (len > 2 && len < sizeof(tmp) && s[0] == '<' &&
		    s[len - 1] == '>') {
			memcpy(tmp, s + 1, len - 2);
			tmp[len - 2] = 0;
			s = tmp;
		}
		if (parse_number(s, &v) || !v || v >= (1ULL << 48)) {
			free(c.want);
			return sh_err(sh, "%s: bad inode number", argv[i]);
		}
		c.want[c.nwant++] = v;
	}
	struct tux3_walk_ops ops = { .inode = ncheck_inode,
				     .dirent = ncheck_dirent,
				     .error = visit_error };
	int err = tux3_walk(sh->vol, &ops, &c);
	if (c.nomem)
		err = -ENOMEM;
	if (c.ndirs)
		qsort(c.dirs, c.ndirs, sizeof(*c.dirs), cmp_dirname);
	if (!err || err == -EUCLEAN) {
		fprintf(sh->out, "%-10s %s\n", "Inode", "Pathname");
		for (unsigned i = 0; i < c.nwant; i++) {
			int named = 0;
			for (size_t k = 0; k < c.nhits; k++) {
				if (c.hits[k].ino != c.want[i])
					continue;
				fprintf(sh->out, "%-10" PRIu64 " ", c.want[i]);
				print_path(&c, c.hits[k].dir, c.hits[k].name);
				fputc('\n', sh->out);
				named = 1;
			}
			if (c.want[i] == TUX3_ROOT_INO) {
				fprintf(sh->out, "%-10d /\n", TUX3_ROOT_INO);
				named = 1;
			}
			if (!named)
				fprintf(sh->out, "%-10" PRIu64 " (no name)\n",
					c.want[i]);
		}
	}
	for (size_t k = 0; k < c.ndirs; k++)
		free(c.dirs[k].name);
	for (size_t k = 0; k < c.nhits; k++)
		free(c.hits[k].name);
	free(c.dirs);
	free(c.hits);
	free(c.want);
	return walk_result(&c.v, err);
}

/* ---- find_magic: blocks of a type ---- */

static const struct {
	const char *name;
	unsigned magic;
	enum tux3_block_type type;
} magics[] = {
	{ "bnode", 0xb4de, TUX3_BT_BNODE }, { "ileaf", 0x90de, TUX3_BT_ILEAF },
	{ "oleaf", 0x6eaf, TUX3_BT_OLEAF }, { "dleaf", 0xbeaf, TUX3_BT_DLEAF },
	{ "log", 0x10ad, TUX3_BT_LOG },
};

struct found {
	tux3_block_t block;
	char what[96];
};

struct magic_find {
	struct visit v;
	unsigned magic;
	struct found *f;
	size_t count, cap;
	int nomem;
};

static void found(struct magic_find *m, tux3_block_t block, unsigned magic,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void found(struct magic_find *m, tux3_block_t block, unsigned magic,
		  const char *fmt, ...)
{
	if (magic != m->magic)
		return;
	if (m->count == m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 64;
		void *n = realloc(m->f, ncap * sizeof(*m->f));
		if (!n) {
			m->nomem = 1;
			return;
		}
		m->f = n;
		m->cap = ncap;
	}
	struct found *f = &m->f[m->count++];
	f->block = block;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->what, sizeof(f->what), fmt, ap);
	va_end(ap);
}

static int magic_node(void *ctx, const struct tux3_node_info *n, int leaf)
{
	static const unsigned leafmagic[] = {
		[TUX3_TREE_ITREE] = 0x90de, [TUX3_TREE_OTREE] = 0x6eaf,
		[TUX3_TREE_DTREE] = 0xbeaf,
	};
	unsigned magic = leaf ? leafmagic[n->tree] : 0xb4de;
	if (n->tree == TUX3_TREE_DTREE)
		found(ctx, n->block, magic, "inode %" PRIu64 " dtree, level %d",
		      n->owner, n->level);
	else
		found(ctx, n->block, magic, "%s, level %d",
		      n->tree == TUX3_TREE_ITREE ? "inode table" :
		      "orphan table", n->level);
	return 0;
}

static int magic_bnode(void *ctx, const struct tux3_node_info *n)
{
	return magic_node(ctx, n, 0);
}

static int magic_leaf(void *ctx, const struct tux3_node_info *n)
{
	return magic_node(ctx, n, 1);
}

static int magic_log(void *ctx, unsigned index, tux3_block_t block,
		     unsigned bytes, tux3_block_t chain)
{
	(void)chain;
	found(ctx, block, 0x10ad, "log block %u of the chain, %u bytes",
	      index, bytes);
	return 0;
}

static int cmp_found(const void *a, const void *b)
{
	const struct found *x = a, *y = b;
	return x->block < y->block ? -1 : x->block > y->block;
}

int cmd_find_magic(struct shell *sh, int argc, char **argv)
{
	char seen[256] = { 0 };
	int first;
	static struct magic_find m;
	memset(&m, 0, sizeof(m));
	m.v = (struct visit){ sh, argv[0], 0 };
	if (has_flag(argc, argv, "a", seen, &first) || argc - first != 1)
		return sh_err(sh, "usage: find_magic [-a] bnode|ileaf|oleaf|"
			      "dleaf|log|0xNNNN");
	const char *arg = argv[first];
	uint64_t v = 0;
	int known = -1;
	for (unsigned i = 0; i < sizeof(magics) / sizeof(magics[0]); i++)
		if (!strcmp(arg, magics[i].name))
			v = magics[i].magic;
	if (!v && (parse_number(arg, &v) || !v || v > 0xffff))
		return sh_err(sh, "find_magic: '%s' is not a block type (bnode, "
			      "ileaf, oleaf, dleaf, log) or a 16-bit magic",
			      arg);
	for (unsigned i = 0; i < sizeof(magics) / sizeof(magics[0]); i++)
		if (magics[i].magic == v)
			known = (int)i;
	m.magic = (unsigned)v;
	struct tux3_walk_ops ops = { .bnode = magic_bnode, .leaf = magic_leaf,
				     .logblock = magic_log,
				     .error = visit_error };
	int err = tux3_walk(sh->vol, &ops, &m);
	if (err && err != -EUCLEAN) {
		free(m.f);
		return sh_volerr(sh, argv[0], err);
	}
	if (m.count)
		qsort(m.f, m.count, sizeof(*m.f), cmp_found);
	size_t reached = m.count;
	if (seen['a']) {
		/* every block, as the library reads it; those the walk did
		 * not reach are stale copies, free blocks or damage */
		unsigned bs = tux3_block_size(sh->vol);
		struct tux3_statfs sfs;
		tux3_statfs(sh->vol, &sfs);
		uint8_t *b = malloc(bs);
		if (!b) {
			free(m.f);
			return sh_err(sh, "out of memory");
		}
		for (uint64_t blk = 0; blk < sfs.blocks; blk++) {
			if (tux3_read_block(sh->vol, blk, b, NULL)) {
				char text[400];
				sh_err(sh, "find_magic: %s",
				       tux3_error_text(sh->vol, text,
						       sizeof(text)));
				tux3_clear_error(sh->vol);
				m.v.failed = 1;
				continue;
			}
			unsigned magic = (unsigned)b[0] << 8 | b[1];
			if (magic != m.magic)
				continue;
			struct found key = { .block = blk };
			if (reached && bsearch(&key, m.f, reached, sizeof(*m.f),
					       cmp_found))
				continue;
			enum tux3_block_type t = tux3_sniff_block(b, bs, blk);
			found(&m, blk, m.magic, "not reached by the walk (stale, "
			      "free or lost)%s", known >= 0 &&
			      t != magics[known].type ? "; the header does not "
			      "look valid" : "");
		}
		free(b);
		if (m.count)
			qsort(m.f, m.count, sizeof(*m.f), cmp_found);
	}
	if (m.nomem)
		m.v.failed = sh_err(sh, "find_magic: out of memory");
	for (size_t i = 0; i < m.count; i++)
		fprintf(sh->out, "%-10" PRIu64 " %s\n", m.f[i].block,
			m.f[i].what);
	fprintf(sh->out, "%zu block%s with magic 0x%04x%s%s\n", m.count,
		m.count == 1 ? "" : "s", m.magic, known >= 0 ? " " : "",
		known >= 0 ? magics[known].name : "");
	free(m.f);
	return walk_result(&m.v, err);
}

/* ---- frag: extents per file, seeks ---- */

struct frag {
	struct visit v;
	int verbose, all, header;
	tux3_ino_t only;	/* 0: every file */
	/* the inode being visited */
	tux3_ino_t ino;
	int counting;
	uint64_t extents, blocks, seeks, distance, prev_end;
	/* totals */
	uint64_t files, with_data, fragmented, t_extents, t_blocks, t_seeks,
		 t_distance, largest;
};

static void frag_done(struct frag *f)
{
	if (!f->counting)
		return;
	f->counting = 0;
	f->files++;
	if (!f->extents)
		return;
	f->with_data++;
	if (f->seeks)
		f->fragmented++;
	f->t_extents += f->extents;
	f->t_blocks += f->blocks;
	f->t_seeks += f->seeks;
	f->t_distance += f->distance;
	if (f->verbose) {
		if (!f->header++)
			fprintf(f->v.sh->out, "%-10s %8s %10s %7s %10s\n",
				"inode", "extents", "blocks", "seeks",
				"distance");
		fprintf(f->v.sh->out, "%-10" PRIu64 " %8" PRIu64 " %10" PRIu64
			" %7" PRIu64 " %10" PRIu64 "\n", f->ino, f->extents,
			f->blocks, f->seeks, f->distance);
	}
}

static int frag_inode(void *ctx, const struct tux3_stat *st,
		      tux3_block_t leaf, unsigned len)
{
	struct frag *f = ctx;
	(void)leaf; (void)len;
	frag_done(f);
	if ((f->only && st->ino != f->only) ||
	    (!f->only && !f->all && st->ino < TUX3_ROOT_INO))
		return 1;
	f->ino = st->ino;
	f->counting = 1;
	f->extents = f->blocks = f->seeks = f->distance = 0;
	return 0;
}

static int frag_extent(void *ctx, tux3_ino_t ino, uint64_t logical,
		       tux3_block_t physical, uint64_t count,
		       uint32_t version, tux3_block_t leaf)
{
	struct frag *f = ctx;
	(void)logical; (void)version; (void)leaf;
	if (!f->counting || ino != f->ino || !physical)
		return 0;
	if (f->extents && physical != f->prev_end) {
		f->seeks++;
		f->distance += physical > f->prev_end ?
			       physical - f->prev_end : f->prev_end - physical;
	}
	f->extents++;
	f->blocks += count;
	if (count > f->largest)
		f->largest = count;
	f->prev_end = physical + count;
	return 0;
}

int cmd_frag(struct shell *sh, int argc, char **argv)
{
	char seen[256] = { 0 };
	int first;
	struct frag f = { .v = { sh, argv[0], 0 } };
	if (has_flag(argc, argv, "va", seen, &first) || argc - first > 1)
		return sh_err(sh, "usage: frag [-v] [-a] [PATH|<inum>]");
	f.verbose = seen['v'];
	f.all = seen['a'];
	struct tux3_walk_ops ops = { .inode = frag_inode,
				     .extent = frag_extent,
				     .error = visit_error };
	int err;
	if (first < argc) {
		if (sh_resolve(sh, argv[first], &f.only))
			return 1;
		f.verbose = 1;
		err = tux3_walk_inode(sh->vol, f.only, &ops, &f);
		if (err && err != -EUCLEAN)
			return sh_volerr(sh, argv[first], err);
	} else {
		err = tux3_walk(sh->vol, &ops, &f);
	}
	frag_done(&f);
	if (err && err != -EUCLEAN)
		return walk_result(&f.v, err);
	FILE *o = sh->out;
	fprintf(o, "files: %" PRIu64 " (%" PRIu64 " with data)%s\n", f.files,
		f.with_data, f.all || f.only ? "" :
		"; inodes below 63 left out (-a: all)");
	if (f.with_data)
		fprintf(o, "fragmented: %" PRIu64 " of %" PRIu64 " (%.1f%% "
			"non-contiguous)\n", f.fragmented, f.with_data,
			100.0 * (double)f.fragmented / (double)f.with_data);
	fprintf(o, "extents: %" PRIu64, f.t_extents);
	if (f.with_data)
		fprintf(o, " (%.2f per file with data), largest %" PRIu64
			" block%s", (double)f.t_extents / (double)f.with_data,
			f.largest, f.largest == 1 ? "" : "s");
	fprintf(o, "\nblocks: %" PRIu64 "\nseeks: %" PRIu64 ", distance %"
		PRIu64 " block%s", f.t_blocks, f.t_seeks, f.t_distance,
		f.t_distance == 1 ? "" : "s");
	if (f.t_seeks)
		fprintf(o, " (%.1f per seek)", (double)f.t_distance /
			(double)f.t_seeks);
	fputc('\n', o);
	return walk_result(&f.v, err);
}

/* ---- orphans ---- */

struct orphans {
	struct visit v;
	unsigned count;
};

static int orphan_seen(void *ctx, tux3_ino_t ino, int in_otree)
{
	struct orphans *r = ctx;
	struct shell *sh = r->v.sh;
	struct tux3_stat st;
	int live = 0;
	for (unsigned i = 0; i < tux3_orphan_count(sh->vol); i++)
		if (tux3_orphan(sh->vol, i) == ino)
			live = 1;
	r->count++;
	fprintf(sh->out, "inode %-10" PRIu64 " %s", ino, in_otree ?
		"in the orphan table" : "logged since the last unify");
	if (!live)
		fprintf(sh->out, ", released since (ORPHAN_DEL in the log)");
	if (!tux3_stat(sh->vol, ino, &st))
		fprintf(sh->out, ": %c, %" PRIu64 " bytes, %u link%s\n",
			manifest_type(st.mode), st.size, st.nlink,
			st.nlink == 1 ? "" : "s");
	else {
		tux3_clear_error(sh->vol);
		fprintf(sh->out, ": the inode does not exist\n");
	}
	return 0;
}

int cmd_orphans(struct shell *sh, int argc, char **argv)
{
	struct orphans r = { .v = { sh, argv[0], 0 } };
	if (argc != 1)
		return sh_err(sh, "usage: orphans");
	struct tux3_walk_ops ops = { .inode = skip_inode,
				     .orphan = orphan_seen,
				     .error = visit_error };
	int err = tux3_walk(sh->vol, &ops, &r);
	if (!err || err == -EUCLEAN)
		fprintf(sh->out, "%u orphan%s\n", r.count,
			r.count == 1 ? "" : "s");
	return walk_result(&r.v, err);
}

/* ---- htree: a directory's on-disk index (format.md 15.5) ---- */

static int htree_bucket(void *ctx, const struct tux3_dir_bucket *b)
{
	struct shell *sh = ctx;
	fprintf(sh->out, "  slots %" PRIu64 "-%" PRIu64 ": bucket at logical %"
		PRIu64 ", depth %u, %u pairs\n", b->first_slot,
		b->first_slot + b->slots - 1, b->logical, b->depth, b->pairs);
	return 0;
}

int cmd_htree(struct shell *sh, int argc, char **argv)
{
	char seen[256] = { 0 };
	int first;
	tux3_ino_t ino;
	struct tux3_dir_index_info x;
	if (has_flag(argc, argv, "v", seen, &first) || argc - first != 1)
		return sh_err(sh, "usage: htree [-v] PATH|<inum>");
	const char *path = argv[first];
	if (sh_resolve(sh, path, &ino))
		return 1;
	int err = tux3_dir_index_info(sh->vol, ino, &x,
				      seen['v'] ? htree_bucket : NULL, sh);
	if (err)
		return sh_volerr(sh, path, err);
	fprintf(sh->out, "directory %" PRIu64 ": %" PRIu64 " blocks; volume "
		"%s dir_index, generation %u\n", ino, x.blocks,
		x.feature ? "has" : "does not have", x.volume_generation);
	if (!x.present) {
		fprintf(sh->out, "no index (block 0 holds entries)\n");
		return 0;
	}
	if (x.damaged && !x.depth && !x.table_blocks) {
		fprintf(sh->out, "index: damaged: %s\n", x.why);
		return 1;
	}
	fprintf(sh->out, "index: depth %u, %" PRIu64 " table blocks (%u slots "
		"each), generation %u (%s), seed %#x\n", x.depth,
		x.table_blocks, x.slots_per_table, x.generation,
		x.stale ? "stale: not used until rebuilt" : "current",
		x.seed);
	if (!x.table_blocks)
		fprintf(sh->out, "the index gave up (its names cannot be "
			"split)\n");
	else
		fprintf(sh->out, "buckets: %" PRIu64 ", pairs: %" PRIu64
			" (%.1f per bucket, at most %u)\n", x.buckets,
			x.pairs, x.buckets ? (double)x.pairs / x.buckets : 0.0,
			x.pairs_per_bucket);
	if (x.damaged)
		fprintf(sh->out, "damaged: %s\n", x.why);
	return x.damaged;
}

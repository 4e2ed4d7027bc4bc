/*
 * dotcount: counts for the tux3dot tests (tests/scripts/dot.sh).
 *
 *   dotcount FILE.dot     parse the dot text with libcgraph and print
 *       nodes PREFIX N        nodes by name prefix (the name up to '_')
 *       nodes total N
 *       edges TAIL HEAD N     edges by the prefixes of their ends
 *       edges total N
 *       summarised PREFIX N   what the summary nodes (more_*) say was left
 *                             out ("... 3 more ileaves, 1,204 inodes")
 *       summaries N
 *   dotcount --walk DEVICE
 *       what tux3_walk() visits, counted by this program's own visitor
 *       in the same format, as tux3dot draws it when nothing is left
 *       out (--tree all): one node per log block, bnode, leaf, inode,
 *       directory inode, bitmap block with runs; sb, atoms, version_0
 *       and, when there are orphans, orphans; an edge into each node
 *       but sb from what it hangs from.
 * Lines are sorted.  Exit 0, or 2 on a usage or read error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <graphviz/cgraph.h>
#include "tux3.h"
#include "tux3_walk.h"

#define MAX_KEYS 256

struct counter {
	char key[MAX_KEYS][64];
	uint64_t val[MAX_KEYS];
	unsigned n;
};

static void add(struct counter *c, const char *key, uint64_t v)
{
	for (unsigned i = 0; i < c->n; i++)
		if (!strcmp(c->key[i], key)) {
			c->val[i] += v;
			return;
		}
	if (c->n == MAX_KEYS)
		return;
	snprintf(c->key[c->n], sizeof(c->key[0]), "%s", key);
	c->val[c->n++] = v;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void print_sorted(struct counter *c)
{
	char *lines[MAX_KEYS];
	for (unsigned i = 0; i < c->n; i++) {
		lines[i] = malloc(96);
		if (!lines[i])
			exit(2);
		snprintf(lines[i], 96, "%s %" PRIu64, c->key[i], c->val[i]);
	}
	qsort(lines, c->n, sizeof(lines[0]), cmp_line);
	for (unsigned i = 0; i < c->n; i++) {
		puts(lines[i]);
		free(lines[i]);
	}
}

static void prefix_of(const char *name, char *out, size_t len)
{
	size_t n = strcspn(name, "_");
	if (n >= len)
		n = len - 1;
	memcpy(out, name, n);
	out[n] = 0;
}

/* Summary label nouns back to node name prefixes */
static const struct { const char *noun, *prefix; } nouns[] = {
	{ "log blocks", "log" }, { "log block", "log" },
	{ "bnodes", "bnode" }, { "bnode", "bnode" },
	{ "ileaves", "ileaf" }, { "ileaf", "ileaf" },
	{ "oleaves", "oleaf" }, { "oleaf", "oleaf" },
	{ "dleaves", "dleaf" }, { "dleaf", "dleaf" },
	{ "inodes", "inode" }, { "inode", "inode" },
	{ "directories", "dir" }, { "directory", "dir" },
	{ "bitmap blocks", "bitmap" }, { "bitmap block", "bitmap" },
	{ "orphan lists", "orphans" }, { "orphan list", "orphans" },
	{ "atom tables", "atoms" }, { "atom table", "atoms" },
	{ "versions", "version" }, { "version", "version" },
	{ "superblocks", "sb" }, { "superblock", "sb" },
	{ "errors", "error" }, { "error", "error" },
};

/* "... 3 more ileaves, 1,204 inodes" */
static void parse_summary(struct counter *c, const char *label)
{
	const char *p = label;
	while (*p) {
		while (*p && (*p < '0' || *p > '9'))
			p++;
		if (!*p)
			break;
		uint64_t v = 0;
		while ((*p >= '0' && *p <= '9') || *p == ',') {
			if (*p != ',')
				v = v * 10 + (uint64_t)(*p - '0');
			p++;
		}
		while (*p == ' ')
			p++;
		if (!strncmp(p, "more ", 5))
			p += 5;
		size_t len = strcspn(p, ",\\");
		char key[96];
		int found = 0;
		for (unsigned i = 0; i < sizeof(nouns) / sizeof(nouns[0]); i++)
			if (strlen(nouns[i].noun) == len &&
			    !strncmp(p, nouns[i].noun, len)) {
				snprintf(key, sizeof(key), "summarised %s",
					 nouns[i].prefix);
				add(c, key, v);
				found = 1;
				break;
			}
		if (!found)
			add(c, "summarised unknown", v);
		p += len;
	}
}

static int count_dot(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		perror(path);
		return 2;
	}
	Agraph_t *g = agread(f, NULL);
	fclose(f);
	if (!g) {
		fprintf(stderr, "%s: not a graph\n", path);
		return 2;
	}
	struct counter *c = calloc(1, sizeof(*c));
	if (!c)
		return 2;
	uint64_t nodes = 0, edges = 0, sums = 0;
	char key[128], a[48], b[48];
	for (Agnode_t *n = agfstnode(g); n; n = agnxtnode(g, n)) {
		prefix_of(agnameof(n), a, sizeof(a));
		snprintf(key, sizeof(key), "nodes %s", a);
		add(c, key, 1);
		nodes++;
		if (!strcmp(a, "more")) {
			const char *label = agget(n, "label");
			parse_summary(c, label ? label : "");
			sums++;
		}
		for (Agedge_t *e = agfstout(g, n); e; e = agnxtout(g, e)) {
			prefix_of(agnameof(agtail(e)), a, sizeof(a));
			prefix_of(agnameof(aghead(e)), b, sizeof(b));
			snprintf(key, sizeof(key), "edges %s %s", a, b);
			add(c, key, 1);
			edges++;
		}
	}
	add(c, "nodes total", nodes);
	add(c, "edges total", edges);
	add(c, "summaries", sums);
	print_sorted(c);
	free(c);
	agclose(g);
	return 0;
}

/* ---- --walk: the walker's own view ---- */
struct walk_count {
	struct counter c;
	uint64_t nodes, edges, orphans, last_chunk, logs;
	int have_chunk;
};

static void node(struct walk_count *w, const char *kind, const char *from)
{
	char key[96];
	snprintf(key, sizeof(key), "nodes %s", kind);
	add(&w->c, key, 1);
	w->nodes++;
	if (from) {
		snprintf(key, sizeof(key), "edges %s %s", from, kind);
		add(&w->c, key, 1);
		w->edges++;
	}
}

static int w_super(void *ctx, const struct tux3_super_info *sb)
{
	(void)sb;
	node(ctx, "sb", NULL);
	node(ctx, "atoms", "sb");
	return 0;
}

/* The version tree: label 0 under the superblock, the others under their
 * parents (dying labels are not drawn). */
static int w_version(void *ctx, const struct tux3_version_info *v)
{
	if (!v->dying)
		node(ctx, "version", v->label ? "version" : "sb");
	return 0;
}

static int w_logblock(void *ctx, unsigned index, tux3_block_t block,
		      unsigned bytes, tux3_block_t logchain)
{
	struct walk_count *w = ctx;
	(void)block, (void)bytes, (void)logchain;
	/* n blocks: n - 1 edges along the chain, one from sb (below) */
	node(w, "log", index ? "log" : NULL);
	w->logs++;
	return 0;
}

static int w_tree(void *ctx, const struct tux3_node_info *n, const char *kind)
{
	const char *from = n->level ? "bnode" :
			   n->tree == TUX3_TREE_DTREE ? "inode" : "sb";
	node(ctx, kind, from);
	return 0;
}

static int w_bnode(void *ctx, const struct tux3_node_info *n)
{
	return w_tree(ctx, n, "bnode");
}

static int w_leaf(void *ctx, const struct tux3_node_info *n)
{
	return w_tree(ctx, n, n->tree == TUX3_TREE_ITREE ? "ileaf" :
			      n->tree == TUX3_TREE_OTREE ? "oleaf" : "dleaf");
}

static int w_inode(void *ctx, const struct tux3_stat *st,
		   tux3_block_t leafblock, unsigned bloblen)
{
	(void)leafblock, (void)bloblen;
	node(ctx, "inode", "ileaf");
	if (S_ISDIR(st->mode))
		node(ctx, "dir", "inode");
	return 0;
}

static int w_orphan(void *ctx, tux3_ino_t ino, int in_otree)
{
	struct walk_count *w = ctx;
	(void)ino, (void)in_otree;
	if (!w->orphans++)
		node(w, "orphans", "sb");
	return 0;
}

static int w_bitrun(void *ctx, uint64_t chunk, tux3_block_t start,
		    uint64_t count, int stale)
{
	struct walk_count *w = ctx;
	(void)start, (void)count, (void)stale;
	if (!w->have_chunk || chunk != w->last_chunk)
		node(w, "bitmap", "sb");
	w->have_chunk = 1;
	w->last_chunk = chunk;
	return 0;
}

static int w_error(void *ctx, const struct tux3_walk_error *e)
{
	(void)e;
	node(ctx, "error", NULL);
	return 0;
}

static int count_walk(const char *device)
{
	static const struct tux3_walk_ops ops = {
		.super = w_super, .logblock = w_logblock, .bnode = w_bnode,
		.leaf = w_leaf, .inode = w_inode, .orphan = w_orphan,
		.bitrun = w_bitrun, .site_error = w_error,
	};
	struct tux3_volume *vol;
	char msg[256] = "";
	if (tux3_open_err(device, TUX3_OPEN_RDONLY, &vol, msg, sizeof(msg))) {
		fprintf(stderr, "%s: %s\n", device, msg);
		return 2;
	}
	struct walk_count *w = calloc(1, sizeof(*w));
	if (!w)
		return 2;
	int r = tux3_walk(vol, &ops, w);
	if (tux3_versions(vol, w_version, w))
		node(w, "version", "sb");	/* the origin alone */
	tux3_close(vol);
	if (w->logs) {
		add(&w->c, "edges sb log", 1);
		w->edges++;
	}
	add(&w->c, "nodes total", w->nodes);
	add(&w->c, "edges total", w->edges);
	print_sorted(&w->c);
	free(w);
	if (r < 0 && r != -EUCLEAN)
		fprintf(stderr, "%s: walk: %s\n", device, strerror(-r));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--walk"))
		return count_walk(argv[2]);
	if (argc == 2 && argv[1][0] != '-')
		return count_dot(argv[1]);
	fprintf(stderr, "usage: dotcount FILE.dot | dotcount --walk DEVICE\n");
	return 2;
}

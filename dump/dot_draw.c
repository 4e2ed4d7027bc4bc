/*
 * tux3dot: what is drawn, the Graphviz graph and its output.
 *
 * Nodes are taken breadth first from the roots (the superblock first, then
 * what hangs from it, level by level, in walk order) until --max-nodes are
 * drawn; tree nodes below --depth are left out.  What is left out is
 * counted, per kind, in one summary node per nearest ancestor drawn.
 * Error nodes are always drawn, and so is the path from the root to them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#include "dot.h"

struct style {
	const char *shape, *fill, *legend;
};

static const struct style styles[DK_NKINDS] = {
	[DK_SB] = { "box3d", "gold", "superblock: geometry, tree roots, log head" },
	[DK_LOG] = { "note", "lightyellow", "log block and its records, newest first; (unified): already in the trees" },
	[DK_BNODE] = { "box", "lightblue", "bnode: index node (keys -> child blocks)" },
	[DK_ILEAF] = { "box", "palegreen", "ileaf: inode table leaf" },
	[DK_OLEAF] = { "box", "plum", "oleaf: orphan table leaf" },
	[DK_DLEAF] = { "box", "lightcyan", "dleaf: data extents (logical -> block xcount)" },
	[DK_INODE] = { "box", "white", "inode with its attributes" },
	[DK_DIR] = { "folder", "wheat", "directory entries (name -> inode, type)" },
	[DK_ORPHANS] = { "box", "lightskyblue", "orphans (otree or log)" },
	[DK_ATOMS] = { "tab", "lavender", "atom table: xattr names" },
	[DK_BITMAP] = { "component", "gray90", "bitmap block: runs of blocks in use" },
	[DK_VERSION] = { "octagon", "khaki", "version (snapshot) tree" },
	[DK_ERROR] = { "octagon", "red", "structure that failed validation" },
};

#define STALE_FILL "salmon"
#define STALE_COLOR "red3"
#define ORPHAN_FILL "lightskyblue"

struct summary {
	int anchor;
	uint64_t count[DK_NKINDS];
};

struct pick {
	char *drawn;
	int *anchor;		/* hidden: the nearest ancestor drawn */
	int *from;		/* drawn: the node its edge comes from */
	int *sum;		/* index + 1 into sums, per anchor */
	struct summary *sums;
	unsigned nsums, global;	/* global: index + 1 of the rootless one */
	uint64_t drawn_count[DK_NKINDS], hidden_count[DK_NKINDS];
};

static void node_name(const struct dot_model *m, int i, char *buf,
		      size_t len)
{
	const struct dot_node *n = &m->node[i];
	if (dot_kind_has_id(n->kind))
		snprintf(buf, len, "%s_%" PRIu64, dot_kind_prefix(n->kind),
			 n->id);
	else
		snprintf(buf, len, "%s", dot_kind_prefix(n->kind));
}

/* Distance from a root, for the breadth-first choice. */
static int compute_depths(const struct dot_model *m, int *depth)
{
	unsigned n = m->count;
	int *stack = malloc((n ? n : 1) * sizeof(*stack));
	if (!stack)
		return -1;
	for (unsigned i = 0; i < n; i++)
		depth[i] = -1;
	for (unsigned i = 0; i < n; i++) {
		unsigned sp = 0;
		int j = (int)i;
		while (j >= 0 && depth[j] < 0 && sp < n) {
			stack[sp++] = j;
			j = m->node[j].parent;
		}
		int d = j >= 0 && depth[j] >= 0 ? depth[j] : -1;
		while (sp)
			depth[stack[--sp]] = ++d;
	}
	free(stack);
	return 0;
}

static struct summary *summary_of(struct pick *p, int anchor)
{
	unsigned *slot = anchor < 0 ? &p->global : (unsigned *)&p->sum[anchor];
	if (!*slot) {
		p->sums[p->nsums] = (struct summary){ .anchor = anchor };
		*slot = ++p->nsums;
	}
	return &p->sums[*slot - 1];
}

/* What the model only counted (dot_model.c) joins the summary of the
 * nearest node drawn */
static void add_dropped(struct pick *p, const uint64_t *hidden, int anchor)
{
	for (int k = 0; k < DK_NKINDS; k++) {
		if (!hidden[k])
			continue;
		summary_of(p, anchor)->count[k] += hidden[k];
		p->hidden_count[k] += hidden[k];
	}
}

static int choose(struct dot_model *m, const struct dot_opts *o,
		  struct pick *p)
{
	unsigned n = m->count;
	size_t sz = n ? n : 1;
	int *depth = malloc(sz * sizeof(int)), *order = malloc(sz * sizeof(int));
	unsigned *start = NULL;
	int ret = -1;

	p->drawn = calloc(sz, 1);
	p->anchor = malloc(sz * sizeof(int));
	p->from = malloc(sz * sizeof(int));
	p->sum = calloc(sz, sizeof(int));
	p->sums = calloc(sz + 1, sizeof(*p->sums));
	if (!depth || !order || !p->drawn || !p->anchor || !p->from ||
	    !p->sum || !p->sums || compute_depths(m, depth))
		goto out;
	/* counting sort by depth, walk order kept within a depth */
	int maxd = 0;
	for (unsigned i = 0; i < n; i++)
		if (depth[i] > maxd)
			maxd = depth[i];
	start = calloc((size_t)maxd + 2, sizeof(*start));
	if (!start)
		goto out;
	for (unsigned i = 0; i < n; i++)
		start[depth[i] + 1]++;
	for (int d = 0; d <= maxd; d++)
		start[d + 1] += start[d];
	for (unsigned i = 0; i < n; i++)
		order[start[depth[i]]++] = (int)i;

	/* what leads to an error is drawn whatever the budget (depth-first
	 * walk order: depth[] decides nothing here, the parent links do) */
	char *must = calloc(sz, 1);
	if (!must)
		goto out;
	for (unsigned i = 0; i < n; i++) {
		if (m->node[i].kind != DK_ERROR)
			continue;
		for (int j = m->node[i].parent; j >= 0 && !must[j];
		     j = m->node[j].parent)
			must[j] = 1;
	}
	uint64_t budget = o->max_nodes;
	for (unsigned k = 0; k < n; k++) {
		int i = order[k];
		const struct dot_node *nd = &m->node[i];
		int par = nd->parent;
		int pdrawn = par < 0 || p->drawn[par];
		int near = par < 0 ? -1 : p->drawn[par] ? par : p->anchor[par];
		int too_deep = o->depth >= 0 && nd->level > o->depth;
		if (nd->kind == DK_ERROR) {
			p->drawn[i] = 1;
			p->from[i] = near;
		} else if (pdrawn && ((budget && !too_deep) || must[i])) {
			p->drawn[i] = 1;
			p->from[i] = par;
			if (budget)
				budget--;
		} else {
			p->anchor[i] = near;
			summary_of(p, near)->count[nd->kind]++;
			p->hidden_count[nd->kind]++;
			add_dropped(p, nd->hidden, near);
			continue;
		}
		p->drawn_count[nd->kind]++;
		add_dropped(p, nd->hidden, i);
	}
	add_dropped(p, m->hidden, -1);
	free(must);
	ret = 0;
out:
	free(depth);
	free(order);
	free(start);
	return ret;
}

static void pick_free(struct pick *p)
{
	free(p->drawn);
	free(p->anchor);
	free(p->from);
	free(p->sum);
	free(p->sums);
}

struct syms {
	Agsym_t *shape, *style, *fill, *color, *label, *fontcolor;
	Agsym_t *estyle, *ecolor;
};

static Agnode_t *make_node(Agraph_t *g, const struct syms *s,
			   const char *name, const char *label,
			   const char *shape, const char *style,
			   const char *fill, const char *color)
{
	Agnode_t *n = agnode(g, (char *)name, 1);
	if (!n)
		return NULL;
	agxset(n, s->label, (char *)label);
	agxset(n, s->shape, (char *)shape);
	agxset(n, s->style, (char *)style);
	agxset(n, s->fill, (char *)fill);
	agxset(n, s->color, (char *)color);
	return n;
}

static void summary_label(const struct summary *sum, char *buf, size_t len)
{
	static const enum dot_kind order[] = {
		DK_LOG, DK_BNODE, DK_ILEAF, DK_OLEAF, DK_INODE, DK_DLEAF,
		DK_DIR, DK_BITMAP, DK_ORPHANS, DK_ATOMS, DK_VERSION, DK_SB,
	};
	size_t o = 0;
	char num[32];
	int first = 1;
	o += snprintf(buf, len, "\xe2\x80\xa6 ");
	for (unsigned k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		uint64_t c = sum->count[order[k]];
		if (!c || o >= len)
			continue;
		o += snprintf(buf + o, len - o, "%s%s%s %s", first ? "" : ", ",
			      dot_thousands(num, sizeof(num), c),
			      first ? " more" : "",
			      dot_kind_noun(order[k], c));
		first = 0;
	}
}

static Agraph_t *build(struct dot_model *m, const struct dot_opts *o,
		       struct pick *p)
{
	Agraph_t *g = agopen("tux3", Agdirected, NULL);
	struct syms s;
	char name[64], label[512];
	int used[DK_NKINDS] = { 0 }, stale = 0, orphan = 0, versioned = 0;
	Agnode_t **an = calloc(m->count ? m->count : 1, sizeof(*an));

	if (!g || !an)
		goto fail;
	(void)o;
	agattr(g, AGRAPH, "rankdir", "LR");
	agattr(g, AGRAPH, "fontname", "Helvetica");
	agattr(g, AGRAPH, "fontsize", "12");
	agattr(g, AGNODE, "fontname", "Courier");
	agattr(g, AGNODE, "fontsize", "10");
	s.shape = agattr(g, AGNODE, "shape", "box");
	s.style = agattr(g, AGNODE, "style", "filled");
	s.fill = agattr(g, AGNODE, "fillcolor", "white");
	s.color = agattr(g, AGNODE, "color", "black");
	s.fontcolor = agattr(g, AGNODE, "fontcolor", "black");
	s.label = agattr(g, AGNODE, "label", "\\N");
	s.estyle = agattr(g, AGEDGE, "style", "solid");
	s.ecolor = agattr(g, AGEDGE, "color", "black");

	for (unsigned i = 0; i < m->count; i++) {
		const struct dot_node *nd = &m->node[i];
		const struct style *st = &styles[nd->kind];
		if (!p->drawn[i])
			continue;
		used[nd->kind] = 1;
		const char *fill = st->fill, *style = "filled", *color = "black";
		if (nd->flags & DF_STALE) {
			fill = STALE_FILL;
			style = "dashed,filled";
			color = STALE_COLOR;
			stale = 1;
		} else if (nd->flags & DF_ORPHAN) {
			fill = ORPHAN_FILL;
			orphan = 1;
		}
		if (nd->flags & DF_VERSIONED)
			versioned = 1;
		if (nd->kind == DK_ERROR)
			style = "filled,bold";
		node_name(m, (int)i, name, sizeof(name));
		an[i] = make_node(g, &s, name, dot_label(m, (int)i), st->shape,
				  style, fill, color);
		if (!an[i])
			goto fail;
		if (nd->kind == DK_ERROR)
			agxset(an[i], s.fontcolor, "white");
	}
	for (unsigned i = 0; i < m->count; i++) {
		if (!p->drawn[i] || p->from[i] < 0 || !an[p->from[i]])
			continue;
		Agedge_t *e = agedge(g, an[p->from[i]], an[i], NULL, 1);
		if (!e)
			goto fail;
		if (m->node[i].kind == DK_ERROR)
			agxset(e, s.ecolor, "red");
	}
	for (unsigned k = 0; k < p->nsums; k++) {
		const struct summary *sum = &p->sums[k];
		summary_label(sum, label, sizeof(label));
		if (sum->anchor >= 0) {
			node_name(m, sum->anchor, name + 5, sizeof(name) - 5);
			memcpy(name, "more_", 5);
		} else {
			snprintf(name, sizeof(name), "more");
		}
		Agnode_t *n = make_node(g, &s, name, label, "box", "dotted",
					"white", "gray40");
		if (!n)
			goto fail;
		if (sum->anchor >= 0 && an[sum->anchor]) {
			Agedge_t *e = agedge(g, an[sum->anchor], n, NULL, 1);
			if (!e)
				goto fail;
			agxset(e, s.estyle, "dotted");
		}
	}

	/* the legend: every colour and shape used */
	Agraph_t *leg = agsubg(g, "cluster_legend", 1);
	if (!leg)
		goto fail;
	agsafeset(leg, "label", "legend", "");
	for (int k = 0; k < DK_NKINDS; k++) {
		if (!used[k])
			continue;
		snprintf(name, sizeof(name), "legend_%s", dot_kind_prefix(k));
		Agnode_t *n = make_node(leg, &s, name, styles[k].legend,
					styles[k].shape,
					k == DK_ERROR ? "filled,bold" : "filled",
					styles[k].fill, "black");
		if (!n)
			goto fail;
		if (k == DK_ERROR)
			agxset(n, s.fontcolor, "white");
	}
	if (stale && !make_node(leg, &s, "legend_stale",
				"dashed red outline, salmon: on-disk copy "
				"stale, the log holds the truth (rebuilt by "
				"replay until the next unify)", "box",
				"dashed,filled", STALE_FILL, STALE_COLOR))
		goto fail;
	if (orphan && !make_node(leg, &s, "legend_orphan",
				 "blue inode: orphan (no link, still holding "
				 "space)", "box", "filled", ORPHAN_FILL,
				 "black"))
		goto fail;
	if (versioned && !make_node(leg, &s, "legend_versions",
				    "attrs NAME@L: the attribute of version "
				    "label L, read by L and the versions below "
				    "it that have none of their own (no @: the "
				    "live version's); ABSENT@L: none of that "
				    "kind in L", "box",
				    "filled", "white", "black"))
		goto fail;
	if (p->nsums && !make_node(leg, &s, "legend_more",
				   "dotted: left out (--max-nodes, --depth), "
				   "counted per kind", "box", "dotted",
				   "white", "gray40"))
		goto fail;
	free(an);
	return g;
fail:
	free(an);
	if (g)
		agclose(g);
	return NULL;
}

static void report(const struct dot_model *m, const struct pick *p)
{
	uint64_t total = 0, hidden = 0;
	fprintf(stderr, "tux3dot: drawn:");
	for (int k = 0; k < DK_NKINDS; k++) {
		total += p->drawn_count[k];
		if (p->drawn_count[k])
			fprintf(stderr, " %" PRIu64 " %s,", p->drawn_count[k],
				dot_kind_noun(k, p->drawn_count[k]));
	}
	fprintf(stderr, " %" PRIu64 " nodes in all\n", total);
	for (int k = 0; k < DK_NKINDS; k++)
		hidden += p->hidden_count[k];
	if (!hidden) {
		fprintf(stderr, "tux3dot: nothing summarised\n");
	} else {
		fprintf(stderr, "tux3dot: summarised in %u node%s:", p->nsums,
			p->nsums == 1 ? "" : "s");
		for (int k = 0; k < DK_NKINDS; k++)
			if (p->hidden_count[k])
				fprintf(stderr, " %" PRIu64 " %s,",
					p->hidden_count[k],
					dot_kind_noun(k, p->hidden_count[k]));
		fprintf(stderr, " %" PRIu64 " nodes in all\n", hidden);
	}
	fprintf(stderr, "tux3dot: %" PRIu64 " nodes walked, %u kept in "
		"memory\n", m->walked, m->count);
	if (m->errors)
		fprintf(stderr, "tux3dot: %u error node%s\n", m->errors,
			m->errors == 1 ? "" : "s");
}

/* Flush and close the output (standard output when out is NULL): 0, or
 * -1 with a message naming it if any write failed (bad: one already did). */
static int finish_output(FILE *f, const char *out, int bad)
{
	int e = bad ? errno : 0;
	if (fflush(f)) {
		bad = 1;
		e = e ? e : errno;
	}
	bad |= ferror(f);
	if (out && fclose(f)) {
		bad = 1;
		e = e ? e : errno;
	}
	if (!bad)
		return 0;
	fprintf(stderr, "tux3dot: %s: write failed%s%s\n",
		out ? out : "standard output", e ? ": " : "",
		e ? strerror(e) : "");
	return -1;
}

int dot_draw(struct dot_model *m, const struct dot_opts *o,
	     const char *format, const char *out)
{
	struct pick p = { 0 };
	Agraph_t *g = NULL;
	int ret = -1;

	if (choose(m, o, &p)) {
		fprintf(stderr, "tux3dot: out of memory\n");
		goto out;
	}
	if (o->verbose)
		report(m, &p);
	if (!(g = build(m, o, &p))) {
		fprintf(stderr, "tux3dot: cannot build the graph\n");
		goto out;
	}
	FILE *f = out ? fopen(out, "w") : stdout;
	if (!f) {
		fprintf(stderr, "tux3dot: %s: %s\n", out, strerror(errno));
		goto out;
	}
	if (!strcmp(format, "dot")) {
		int bad = agwrite(g, f) != 0;
		ret = finish_output(f, out, bad);
		goto out;
	}
	GVC_t *gvc = gvContext();
	if (!gvc) {
		fprintf(stderr, "tux3dot: cannot start Graphviz\n");
		finish_output(f, out, 0);
		goto out;
	}
	if (gvLayout(gvc, g, "dot")) {
		fprintf(stderr, "tux3dot: Graphviz layout failed\n");
		finish_output(f, out, 0);
	} else {
		/* rendered in memory and written here: Graphviz's own writer
		 * exits the process on a write error */
		char *data = NULL;
		unsigned len = 0;
		if (gvRenderData(gvc, g, format, &data, &len) || !data) {
			fprintf(stderr, "tux3dot: rendering %s failed\n",
				format);
			finish_output(f, out, 0);
		} else {
			int bad = fwrite(data, 1, len, f) != len;
			ret = finish_output(f, out, bad);
		}
		gvFreeRenderData(data);
		gvFreeLayout(gvc, g);
	}
	agclose(g);
	g = NULL;
	gvFreeContext(gvc);
out:
	if (g)
		agclose(g);
	pick_free(&p);
	return ret;
}

/*
 * tux3dot: the picture of a Tux3 volume.
 *
 *   dot_model.c  the model: one node per thing drawn, its parent, its label
 *   dot_walk.c   the walker visitor that fills the model (tux3_walk)
 *   dot_draw.c   choosing what is drawn (--max-nodes, --depth), the
 *                Graphviz graph (libcgraph) and its rendering (libgvc)
 *   tux3dot.c    options, opening the volume, exit codes
 *
 * The model is a forest: every node has one parent (the edge drawn into
 * it), or none for a root (the superblock; the inode of --inode).  What
 * is left out for legibility is counted, per kind, into one summary node
 * hanging from the nearest ancestor drawn.
 */
#ifndef TUX3_DOT_H
#define TUX3_DOT_H

#include <stdint.h>
#include <stdio.h>
#include "tux3.h"

enum dot_kind {
	DK_SB, DK_LOG, DK_BNODE, DK_ILEAF, DK_OLEAF, DK_DLEAF, DK_INODE,
	DK_DIR, DK_ORPHANS, DK_ATOMS, DK_BITMAP, DK_VERSION, DK_ERROR,
	DK_NKINDS
};

/* Stable node names: PREFIX or PREFIX_ID (dot_kind_prefix) */
const char *dot_kind_prefix(enum dot_kind kind);
const char *dot_kind_noun(enum dot_kind kind, uint64_t count);
/* whether the name carries an id (sb, atoms, orphans: no) */
int dot_kind_has_id(enum dot_kind kind);

#define DOT_LABEL_LINES 40	/* at most, "... N more" included */
#define DOT_LABEL_BYTES 7600	/* below Graphviz's limits, with margin */
#define DOT_LINE_CHARS 110	/* one line cut beyond (in characters) */

/* A label under construction: lines ending in "\l" (left-justified),
 * text escaped for the dot escString syntax; lines past the limits are
 * counted, not stored. */
struct dot_text {
	char *buf;
	size_t len, cap;
	unsigned lines;
	uint64_t more;
	const char *more_what;	/* "entries", "records", ... */
};

enum {
	DF_STALE = 1,		/* on-disk copy stale: the log holds the truth */
	DF_ORPHAN = 2,		/* an orphan inode */
	DF_PARTIAL = 4,		/* some of its content failed validation */
	DF_VERSIONED = 8,	/* an inode with attributes of versions */
};

struct dot_node {
	enum dot_kind kind;
	uint64_t id;		/* block, inode, chunk, error number */
	int parent;		/* index, -1 for a root */
	int level;		/* tree nodes: 0 = root of its tree; else -1 */
	int depth;		/* distance from its root when it was added */
	unsigned flags;
	struct dot_text text;
	/* descendants never kept (they cannot be drawn), per kind: they go
	 * to the summary of the nearest ancestor drawn */
	uint64_t hidden[DK_NKINDS];
};

/*
 * Only nodes that may still be drawn are kept: the choice (dot_draw.c)
 * takes the first max_nodes nodes breadth first, so a node is dropped
 * when the nodes already met above its depth and before it at its depth
 * fill the budget; it and all it would hold are only counted, in the
 * nearest node kept.  The nodes kept are then at most the budget per
 * depth, whatever the volume holds.  A dropped node's handle is
 * DOT_HIDDEN(anchor) (below -1): a parent whose children are dropped too.
 * Kinds whose number does not grow with the files (superblock, log blocks,
 * versions, the atom table, orphans, errors) are always kept.
 */
#define DOT_HIDDEN(anchor)	(-3 - (anchor))
#define DOT_IS_HIDDEN(handle)	((handle) <= -2)
#define DOT_ANCHOR(handle)	(-3 - (handle))

struct dot_model {
	struct dot_node *node;
	unsigned count, cap;
	int *hash;		/* open addressing: index + 1, 0 = empty */
	unsigned hash_size;
	unsigned errors;	/* error nodes */
	int nomem;
	unsigned budget;	/* max_nodes; 0: keep everything */
	int max_level;		/* --depth: deeper tree nodes are left out */
	unsigned *seen;		/* nodes kept that count, per depth */
	unsigned seen_depths;
	uint64_t walked;	/* nodes met, kept or not */
	uint64_t hidden[DK_NKINDS];	/* dropped below no node kept */
};

void dot_model_init(struct dot_model *m);
/* Keep only what --max-nodes and --depth may draw (before any dot_add) */
void dot_model_limit(struct dot_model *m, unsigned budget, int max_level);
void dot_model_free(struct dot_model *m);
/* A new node (its text empty): its index, DOT_HIDDEN(anchor) when it is
 * only counted, -1 when out of memory (m->nomem set) */
int dot_add(struct dot_model *m, enum dot_kind kind, uint64_t id, int parent,
	    int level);
/* The first node of that kind and id, -1 if none */
int dot_find(const struct dot_model *m, enum dot_kind kind, uint64_t id);
/* Append one line (printf format); user text is escaped and cut. */
void dot_line(struct dot_model *m, int node, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same, for a line that must not be dropped (headers) */
void dot_head(struct dot_model *m, int node, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void dot_more_what(struct dot_model *m, int node, const char *what);
/* The finished label ("... N more" added); static until the next call */
const char *dot_label(struct dot_model *m, int node);
/* Escape text for a label line into out (escString, valid UTF-8, no
 * control characters, at most DOT_LINE_CHARS characters) */
void dot_escape(char *out, size_t outlen, const char *in, size_t inlen);

/* "12,345" */
const char *dot_thousands(char *buf, size_t len, uint64_t n);

/* ---- dot_walk.c ---- */
enum dot_tree {
	DT_ALL, DT_ITREE, DT_LOG, DT_FILES, DT_ATOMS, DT_BITMAP, DT_VERSIONS,
};

struct dot_opts {
	enum dot_tree tree;
	int have_inode;
	tux3_ino_t inode;
	const char *path;	/* --path, resolved into inode by main */
	int depth;		/* -1: no limit */
	unsigned max_nodes;
	int verbose;
	/* set when the volume could only be opened without replay: why */
	const char *noreplay_reason;
};

/* Fill the model from the volume; returns 0, 1 if some structures were
 * unreadable (drawn as error nodes), or a negative errno for a failure
 * that leaves no diagram (out of memory). */
int dot_walk_volume(struct tux3_volume *vol, const struct dot_opts *o,
		    struct dot_model *m);

/* ---- dot_draw.c ---- */
/* Choose, build and write the graph in format ("dot", "svg", "png",
 * "pdf") to out (NULL: stdout).  Returns 0, or -1 with the reason
 * printed on stderr. */
int dot_draw(struct dot_model *m, const struct dot_opts *o,
	     const char *format, const char *out);

#endif

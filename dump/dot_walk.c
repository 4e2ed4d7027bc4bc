/*
 * tux3dot: the visitor of the library walker (tux3_walk.h) that fills the
 * model.  No traversal of its own: the walk is depth-first pre-order, so
 * the parent of a tree node is the last node met one level up in the same
 * tree (kept per tree in a path), an inode hangs from its ileaf and a data
 * tree's root from its inode.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "dot.h"
#include <stdbool.h>
#include "tux3_walk.h"

#define MAX_LEVEL 64

struct ctx {
	struct dot_model *m;
	const struct dot_opts *o;
	struct tux3_volume *vol;
	unsigned want;		/* 1 << dot_kind */
	int want_ibnode, want_dbnode;	/* bnodes of the itree, of dtrees */
	int root;		/* sb, or -1 (--inode) */
	int ipath[MAX_LEVEL], opath[MAX_LEVEL], dpath[MAX_LEVEL];
	tux3_ino_t downer;
	int cur_inode, cur_dir, cur_dleaf, cur_log, bitmap, cur_ileaf;
	tux3_ino_t cur_ino;
	tux3_block_t cur_dleaf_block, cur_ileaf_block;
	uint64_t cur_chunk;
	unsigned dir_entries;
	char attrs[512];	/* names of the current inode's attributes */
	unsigned nattrs;
	int *logs;		/* oldest first */
	unsigned nlogs, logcap;
	int orphans, atoms;
	unsigned natoms;
};

static int wants(const struct ctx *c, enum dot_kind kind)
{
	return (c->want >> kind) & 1;
}

/* The parent for something hanging from the superblock */
static int top(const struct ctx *c)
{
	return c->root;
}

static int level_of(int level)
{
	return level < 0 ? 0 : level >= MAX_LEVEL ? MAX_LEVEL - 1 : level;
}

/* The pending attribute list and empty directory of the current inode. */
static void flush_inode(struct ctx *c)
{
	if (c->cur_inode >= 0 && c->nattrs)
		dot_head(c->m, c->cur_inode, "attrs: %s", c->attrs);
	if (c->cur_dir >= 0 && !c->dir_entries)
		dot_head(c->m, c->cur_dir, "(no entries)");
	c->nattrs = 0;
	c->attrs[0] = 0;
	c->cur_dir = -1;
	c->dir_entries = 0;
}

static void root_text(char *buf, size_t len, uint64_t packed)
{
	uint64_t block = packed & ((1ULL << 48) - 1);
	unsigned depth = (unsigned)(packed >> 48) & 0x7fff;
	if (!packed)
		snprintf(buf, len, "none");
	else if (packed >> 63)
		snprintf(buf, len, "direct extent, block %" PRIu64 " x%u",
			 block, depth);
	else
		snprintf(buf, len, "depth %u, block %" PRIu64, depth, block);
}

static void add_error(struct ctx *c, int parent, const char *head,
		      const struct tux3_error *err);
static int on_site_error(void *ctx, const struct tux3_walk_error *e);
/* the node of one file's versioned data, among the version nodes */
#define VERSION_FILE_ID	(1ull << 32)

/* The version tree (tux3_versions), drawn from label 0 down: parents are
 * added before their children, whatever the label order. */
struct vcollect {
	struct tux3_version_info *v;
	unsigned n;
};

static void add_version(struct ctx *c, const struct vcollect *l, unsigned i,
			int parent)
{
	struct dot_model *m = c->m;
	const struct tux3_version_info *v = &l->v[i];
	int n = dot_add(m, DK_VERSION, v->label, parent, -1);
	if (n < 0)
		return;
	if (!v->label)
		dot_head(m, n, "version 0: live (the origin)%s",
			 l->n == 1 ? ", no snapshots" : "");
	else if (v->ghost)
		dot_head(m, n, "version %u: ghost", v->label);
	else
		dot_head(m, n, "version %u: '%s' (tag %u)", v->label,
			 v->name, (unsigned)v->tag);
}

static void add_versions(struct ctx *c, int sb)
{
	struct vcollect l = { 0 };
	int err = tux3_version_list(c->vol, &l.v, &l.n);
	if (err == -ENOMEM) {
		c->m->nomem = 1;
	} else if (err || !l.n) {
		struct tux3_version_info o = { .parent = TUX3_VERSION_NONE,
					       .name = "" };
		struct vcollect one = { .v = &o, .n = 1 };
		add_version(c, &one, 0, sb);
		if (err)
			add_error(c, dot_find(c->m, DK_VERSION, 0), "the version "
				  "table cannot be read", tux3_last_error(c->vol));
		tux3_clear_error(c->vol);
	} else {
		/* breadth first: a label's parent is always drawn first */
		bool *done = calloc(l.n, sizeof(*done));
		unsigned added = 0;
		for (unsigned round = 0; done && round <= l.n &&
		     added < l.n; round++)
			for (unsigned i = 0; i < l.n; i++) {
				if (done[i])
					continue;
				if (l.v[i].dying) {	/* not drawn */
					done[i] = true;
					added++;
					continue;
				}
				int p = l.v[i].label ? dot_find(c->m, DK_VERSION,
								l.v[i].parent) : sb;
				if (p < 0 && l.v[i].label)
					continue;
				add_version(c, &l, i, p);
				done[i] = true;
				added++;
			}
		if (!done)
			c->m->nomem = 1;
		free(done);
	}
	free(l.v);
}

/*
 * --tree versions with --inode/--path: the version tree, and under it the
 * file's elements per logical block: every record of its data, whose
 * label says which version owns it (a 2014 file's extents are all the
 * live version's, label 0).
 */
static int file_extent(void *ctx, tux3_ino_t ino, uint64_t logical,
		       tux3_block_t physical, uint64_t count, uint32_t version,
		       tux3_block_t leafblock)
{
	struct ctx *c = ctx;
	int n = dot_find(c->m, DK_VERSION, VERSION_FILE_ID + ino);
	(void)leafblock;
	if (n < 0 || TUX3_EXTENT_META(version))
		return 0;
	if (physical)
		dot_line(c->m, n, "blocks %" PRIu64 "-%" PRIu64 ": version %"
			 PRIu32 " -> %" PRIu64 "-%" PRIu64, logical,
			 logical + count - 1, version, physical,
			 physical + count - 1);
	else
		dot_line(c->m, n, "blocks %" PRIu64 "-%" PRIu64 ": version %"
			 PRIu32 " -> hole", logical, logical + count - 1,
			 version);
	return c->m->nomem ? -ENOMEM : 0;
}

static int file_versions(struct ctx *c)
{
	struct tux3_walk_ops ops = { .extent = file_extent,
				     .error = NULL };
	add_versions(c, -1);
	int top = dot_find(c->m, DK_VERSION, 0);
	int n = dot_add(c->m, DK_VERSION, VERSION_FILE_ID + c->o->inode, top,
			-1);
	if (n < 0)
		return -ENOMEM;
	dot_head(c->m, n, "inode %" PRIu64 ": its data by version",
		 c->o->inode);
	dot_more_what(c->m, n, "records");
	ops.site_error = on_site_error;
	return tux3_walk_inode(c->vol, c->o->inode, &ops, c);
}

static int on_super(void *ctx, const struct tux3_super_info *sb)
{
	struct ctx *c = ctx;
	struct dot_model *m = c->m;
	char a[64], b[64], n1[32], n2[32];

	if (c->root >= 0 || c->o->have_inode)
		return 0;
	int s = c->root = dot_add(m, DK_SB, 0, -1, -1);
	dot_head(m, s, "superblock (byte 4096)");
	dot_head(m, s, "block size %u, %s blocks", sb->blocksize,
		 dot_thousands(n1, sizeof(n1), sb->volblocks));
	struct tux3_identity id;
	if (!tux3_identity(c->vol, &id) && id.present && id.label[0])
		dot_head(m, s, "label \"%s\"", id.label);
	root_text(a, sizeof(a), sb->live_iroot);
	root_text(b, sizeof(b), sb->iroot);
	if (sb->live_iroot != sb->iroot)
		dot_head(m, s, "itree root %s (on disk %s)", a, b);
	else
		dot_head(m, s, "itree root %s", a);
	if (sb->oroot) {
		root_text(a, sizeof(a), sb->oroot);
		dot_head(m, s, "otree root %s", a);
	}
	dot_head(m, s, "log chain %" PRIu64 ", %u blocks", sb->logchain,
		 sb->logcount);
	dot_head(m, s, "inodes %" PRIu64 ", next block %" PRIu64,
		 sb->usedinodes, sb->nextblock);
	dot_head(m, s, "atoms: dict %" PRIu64 " bytes, gen %u, free %u",
		 sb->atomdictsize, sb->atomgen, sb->freeatom);
	dot_head(m, s, "free blocks %s%s", dot_thousands(n2, sizeof(n2),
		 sb->freeblocks), sb->replayed ? " (after log replay)" : "");
	if (wants(c, DK_VERSION))
		add_versions(c, s);
	if (wants(c, DK_ATOMS)) {
		c->atoms = dot_add(m, DK_ATOMS, 0, s, -1);
		dot_head(m, c->atoms, "atom table (inode 4)");
		dot_more_what(m, c->atoms, "atoms");
	}
	return m->nomem ? -ENOMEM : 0;
}

static int on_logblock(void *ctx, unsigned index, tux3_block_t block,
		       unsigned bytes, tux3_block_t logchain)
{
	struct ctx *c = ctx;
	flush_inode(c);
	if (!wants(c, DK_LOG))
		return 0;
	if (c->nlogs == c->logcap) {
		unsigned cap = c->logcap ? c->logcap * 2 : 16;
		int *logs = realloc(c->logs, cap * sizeof(*logs));
		if (!logs)
			return -ENOMEM;
		c->logs = logs;
		c->logcap = cap;
	}
	int n = c->cur_log = dot_add(c->m, DK_LOG, block, top(c), -1);
	c->logs[c->nlogs++] = n;
	dot_head(c->m, n, "log block %" PRIu64 " (#%u from the oldest)", block,
		 index);
	dot_head(c->m, n, "%u bytes, chain -> %" PRIu64, bytes, logchain);
	dot_more_what(c->m, n, "records");
	return c->m->nomem ? -ENOMEM : 0;
}

static int on_logrec(void *ctx, tux3_block_t block,
		     const struct tux3_logrec_info *rec)
{
	struct ctx *c = ctx;
	(void)block;
	if (!wants(c, DK_LOG))
		return 0;
	dot_line(c->m, c->cur_log, "%s%s", rec->text,
		 rec->live ? "" : "  (unified)");
	return 0;
}

static const char *tree_name(enum tux3_tree t)
{
	return t == TUX3_TREE_ITREE ? "itree" : t == TUX3_TREE_OTREE ?
	       "otree" : "dtree";
}

static const char *hi_text(char *buf, size_t len, uint64_t hi)
{
	if (hi >= (1ULL << 48))
		snprintf(buf, len, "end");
	else
		snprintf(buf, len, "%" PRIu64, hi);
	return buf;
}

/* The node one level up, or what a tree's root hangs from. */
static int tree_parent(struct ctx *c, const struct tux3_node_info *n)
{
	int level = level_of(n->level);
	switch (n->tree) {
	case TUX3_TREE_ITREE:
		return level ? c->ipath[level - 1] : top(c);
	case TUX3_TREE_OTREE:
		return level ? c->opath[level - 1] : top(c);
	default:
		if (level && c->downer == n->owner)
			return c->dpath[level - 1];
		/* the inode just met (it may be counted only, not kept) */
		if (n->owner == c->cur_ino)
			return c->cur_inode;
		return dot_find(c->m, DK_INODE, n->owner);
	}
}

static int *tree_path(struct ctx *c, const struct tux3_node_info *n)
{
	if (n->tree == TUX3_TREE_ITREE)
		return c->ipath;
	if (n->tree == TUX3_TREE_OTREE)
		return c->opath;
	if (c->downer != n->owner) {
		for (int i = 0; i < MAX_LEVEL; i++)
			c->dpath[i] = -1;
		c->downer = n->owner;
	}
	return c->dpath;
}

static int on_bnode(void *ctx, const struct tux3_node_info *n)
{
	struct ctx *c = ctx;
	struct dot_model *m = c->m;
	char hi[32];
	int dtree = n->tree == TUX3_TREE_DTREE;
	int parent = tree_parent(c, n);
	int *path = tree_path(c, n);
	int level = level_of(n->level);

	if (dtree)
		c->cur_dleaf = -1;
	else
		flush_inode(c);
	path[level] = -1;
	if (dtree ? !c->want_dbnode : !c->want_ibnode ||
	    (n->tree == TUX3_TREE_OTREE && !wants(c, DK_OLEAF)))
		return 0;
	int b = path[level] = dot_add(m, DK_BNODE, n->block, parent,
				      n->level);
	if (dtree)
		dot_head(m, b, "bnode %" PRIu64 " (dtree of inode %" PRIu64
			 ", level %d)", n->block, n->owner, n->level);
	else
		dot_head(m, b, "bnode %" PRIu64 " (%s, level %d)", n->block,
			 tree_name(n->tree), n->level);
	dot_head(m, b, "%u children, keys %" PRIu64 "..%s", n->count, n->lo,
		 hi_text(hi, sizeof(hi), n->hi));
	if (n->replayed && b >= 0) {
		m->node[b].flags |= DF_STALE;
		dot_head(m, b, "stale on disk: rebuilt by log replay");
	}
	dot_more_what(m, b, "children");
	for (unsigned i = 0; i < n->count; i++)
		dot_line(m, b, "key %" PRIu64 " -> block %" PRIu64, n->keys[i],
			 n->children[i]);
	return m->nomem ? -ENOMEM : 0;
}

static int on_leaf(void *ctx, const struct tux3_node_info *n)
{
	struct ctx *c = ctx;
	struct dot_model *m = c->m;
	char hi[32];
	enum dot_kind kind = n->tree == TUX3_TREE_ITREE ? DK_ILEAF :
			     n->tree == TUX3_TREE_OTREE ? DK_OLEAF : DK_DLEAF;
	int parent = tree_parent(c, n);
	int *path = tree_path(c, n);
	int level = level_of(n->level);

	if (kind != DK_DLEAF)
		flush_inode(c);
	path[level] = -1;
	c->cur_dleaf = -1;
	c->cur_dleaf_block = n->block;
	if (kind == DK_ILEAF) {
		c->cur_ileaf = -1;
		c->cur_ileaf_block = n->block;
	}
	if (!wants(c, kind))
		return 0;
	int l = path[level] = dot_add(m, kind, n->block, parent, n->level);
	if (kind == DK_ILEAF)
		c->cur_ileaf = l;
	if (kind == DK_DLEAF) {
		c->cur_dleaf = l;
		dot_head(m, l, "dleaf %" PRIu64 " (inode %" PRIu64
			 ", level %d)", n->block, n->owner, n->level);
		dot_head(m, l, "%u entries, %u bytes used; logical %" PRIu64
			 "..%s", n->count, n->used_bytes, n->lo,
			 hi_text(hi, sizeof(hi), n->hi));
		dot_more_what(m, l, "extents");
	} else {
		dot_head(m, l, "%s %" PRIu64 " (%s, level %d)",
			 kind == DK_ILEAF ? "ileaf" : "oleaf", n->block,
			 tree_name(n->tree), n->level);
		dot_head(m, l, "inodes %" PRIu64 "..%s, %u slots, %u bytes "
			 "used", n->lo, hi_text(hi, sizeof(hi), n->hi),
			 n->count, n->used_bytes);
	}
	if (n->replayed && l >= 0) {
		m->node[l].flags |= DF_STALE;
		dot_head(m, l, "stale on disk: rebuilt by log replay");
	}
	return m->nomem ? -ENOMEM : 0;
}

static const char *mode_type(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return "regular file";
	case S_IFDIR: return "directory";
	case S_IFLNK: return "symlink";
	case S_IFCHR: return "char device";
	case S_IFBLK: return "block device";
	case S_IFIFO: return "fifo";
	case S_IFSOCK: return "socket";
	default: return "no type";
	}
}

/* A directory's on-disk index (DIR_INDEX, format.md 15.5), as
 * tux3debug htree sums it up, in the directory's head: asked of the
 * library only for a directory the drawing keeps. */
static void dir_index_head(struct ctx *c, tux3_ino_t ino)
{
	struct tux3_dir_index_info x;
	int err = tux3_dir_index_info(c->vol, ino, &x, NULL, NULL);
	/* a directory that cannot be read: the walk reports it */
	tux3_clear_error(c->vol);
	int d = c->cur_dir;
	if (err || !x.feature || !x.present)
		return;
	if (x.damaged && !x.depth && !x.table_blocks) {
		dot_head(c->m, d, "index: damaged: %s", x.why);
		return;
	}
	dot_head(c->m, d, "index: depth %u, %" PRIu64 " table blocks, "
		 "generation %u%s", x.depth, x.table_blocks, x.generation,
		 x.stale ? " (stale: not used until rebuilt)" : "");
	dot_head(c->m, d, "index: %" PRIu64 " buckets, %" PRIu64 " pairs%s%s",
		 x.buckets, x.pairs, x.damaged ? "; damaged: " : "",
		 x.damaged ? x.why : "");
}

static int on_inode(void *ctx, const struct tux3_stat *st,
		    tux3_block_t leafblock, unsigned bloblen)
{
	struct ctx *c = ctx;
	struct dot_model *m = c->m;
	char n1[32];

	flush_inode(c);
	c->cur_inode = -1;
	c->cur_ino = st->ino;
	c->cur_dleaf = -1;
	c->downer = TUX3_NONE;
	if (!wants(c, DK_INODE))
		return 0;
	int parent = c->o->have_inode ? -1 : top(c);
	if (wants(c, DK_ILEAF)) {
		/* the ileaf just met (it may be counted only, not kept) */
		int l = leafblock == c->cur_ileaf_block ? c->cur_ileaf :
			dot_find(m, DK_ILEAF, leafblock);
		if (l != -1)
			parent = l;
	}
	int i = c->cur_inode = dot_add(m, DK_INODE, st->ino, parent, -1);
	dot_head(m, i, "inode %" PRIu64 ": %s%s", st->ino,
		 mode_type(st->mode), st->orphan ? " (orphan)" : "");
	dot_head(m, i, "mode %04o, uid %u, gid %u, nlink %u",
		 st->mode & 07777, st->uid, st->gid, st->nlink);
	dot_head(m, i, "size %s, %" PRIu64 " sectors",
		 dot_thousands(n1, sizeof(n1), st->size), st->blocks);
	if (S_ISCHR(st->mode) || S_ISBLK(st->mode))
		dot_head(m, i, "rdev %u:%u", st->rdev_major, st->rdev_minor);
	if (st->xattr_count)
		dot_head(m, i, "%u xattrs", st->xattr_count);
	/* the atime feature (format.md 15.6): seconds since the epoch */
	if (tux3_atime_enabled(c->vol))
		dot_head(m, i, "atime %" PRId64, st->atime_ns / 1000000000);
	dot_head(m, i, "in ileaf %" PRIu64 ", %u bytes", leafblock, bloblen);
	if (st->orphan && i >= 0)
		m->node[i].flags |= DF_ORPHAN;
	if (S_ISDIR(st->mode) && wants(c, DK_DIR)) {
		c->cur_dir = dot_add(m, DK_DIR, st->ino, i, -1);
		dot_head(m, c->cur_dir, "directory %" PRIu64, st->ino);
		dot_more_what(m, c->cur_dir, "entries");
		if (c->cur_dir >= 0)
			dir_index_head(c, st->ino);
	}
	return m->nomem ? -ENOMEM : 0;
}

static int on_attr(void *ctx, tux3_ino_t ino,
		   const struct tux3_attr_desc *attr)
{
	struct ctx *c = ctx;
	size_t len = strlen(c->attrs);
	(void)ino;
	if (c->cur_inode < 0 || len + 40 > sizeof(c->attrs))
		return 0;
	/* an attribute of a version says which (its label), as the ABSENT
	 * marker does: NAME@LABEL */
	char ver[16] = "";
	if (attr->version) {
		snprintf(ver, sizeof(ver), "@%u", attr->version);
		c->m->node[c->cur_inode].flags |= DF_VERSIONED;
	}
	snprintf(c->attrs + len, sizeof(c->attrs) - len, "%s%s%s",
		 c->nattrs ? ", " : "", attr->name ? attr->name : "?", ver);
	c->nattrs++;
	return 0;
}

static int on_extent(void *ctx, tux3_ino_t ino, uint64_t logical,
		     tux3_block_t physical, uint64_t count, uint32_t version,
		     tux3_block_t leafblock)
{
	struct ctx *c = ctx;
	char ver[24] = "";
	if (TUX3_EXTENT_META(version)) {
		/* versioned attributes, or one block's elements, past the
		 * leaf (format.md 17.3b, 17.3c) */
		int i = ino == c->cur_ino ? c->cur_inode :
			dot_find(c->m, DK_INODE, ino);
		dot_line(c->m, i, "%s chain %" PRIu64 " -> block %" PRIu64,
			 version == TUX3_EXTENT_SPILL ? "attribute" : "element",
			 logical, physical);
		return 0;
	}
	if (version)
		snprintf(ver, sizeof(ver), " (version %u)", version);
	if (!leafblock) {
		/* a direct extent: the data tree root is the extent */
		int i = ino == c->cur_ino ? c->cur_inode :
			dot_find(c->m, DK_INODE, ino);
		dot_head(c->m, i, "data: direct extent %" PRIu64 " -> block %"
			 PRIu64 " x%" PRIu64, logical, physical, count);
		return 0;
	}
	int l = leafblock == c->cur_dleaf_block ? c->cur_dleaf : -1;
	if (physical)
		dot_line(c->m, l, "%" PRIu64 " -> %" PRIu64 " x%" PRIu64 "%s",
			 logical, physical, count, ver);
	else
		dot_line(c->m, l, "%" PRIu64 ": hole x%" PRIu64 "%s", logical,
			 count, ver);
	return 0;
}

static const char *dt_name(unsigned type)
{
	static const char *const names[] = {
		"?", "reg", "dir", "chr", "blk", "fifo", "sock", "lnk",
	};
	return type < 8 ? names[type] : "bad type";
}

static int on_dirent(void *ctx, tux3_ino_t dir, const char *name,
		     unsigned len, tux3_ino_t ino, unsigned type, uint64_t pos,
		     tux3_block_t block)
{
	struct ctx *c = ctx;
	(void)pos;
	(void)block;
	int d = dir == c->cur_ino ? c->cur_dir : dot_find(c->m, DK_DIR, dir);
	if (d < 0)
		return 0;
	c->dir_entries++;
	dot_line(c->m, d, "%.*s -> %" PRIu64 " (%s)", (int)len, name, ino,
		 dt_name(type));
	return 0;
}

static int on_orphan(void *ctx, tux3_ino_t ino, int in_otree)
{
	struct ctx *c = ctx;
	flush_inode(c);
	if (!wants(c, DK_ORPHANS))
		return 0;
	if (c->orphans < 0) {
		c->orphans = dot_add(c->m, DK_ORPHANS, 0, top(c), -1);
		dot_head(c->m, c->orphans, "orphans");
		dot_more_what(c->m, c->orphans, "orphans");
	}
	dot_line(c->m, c->orphans, "inode %" PRIu64 " (%s)", ino,
		 in_otree ? "otree" : "log");
	return c->m->nomem ? -ENOMEM : 0;
}

static int on_atom(void *ctx, const struct tux3_atom *atom)
{
	struct ctx *c = ctx;
	flush_inode(c);
	c->natoms++;
	dot_line(c->m, c->atoms, "atom %u: %s (refs %u)", atom->atom,
		 atom->name ? atom->name : "?", atom->refcount);
	return 0;
}

static int on_bitrun(void *ctx, uint64_t chunk, tux3_block_t start,
		     uint64_t count, int stale)
{
	struct ctx *c = ctx;
	struct dot_model *m = c->m;
	flush_inode(c);
	if (!wants(c, DK_BITMAP))
		return 0;
	if (c->bitmap == -1 || c->cur_chunk != chunk) {
		c->cur_chunk = chunk;
		c->bitmap = dot_add(m, DK_BITMAP, chunk, top(c), -1);
		dot_head(m, c->bitmap, "bitmap block %" PRIu64 " (inode 1)",
			 chunk);
		if (stale && c->bitmap >= 0) {
			m->node[c->bitmap].flags |= DF_STALE;
			dot_head(m, c->bitmap, "on-disk copy stale: the log "
				 "holds the truth");
		}
		dot_head(m, c->bitmap, "blocks in use:");
		dot_more_what(m, c->bitmap, "runs");
	}
	if (count == 1)
		dot_line(m, c->bitmap, "%" PRIu64, start);
	else
		dot_line(m, c->bitmap, "%" PRIu64 "-%" PRIu64 " (%" PRIu64 ")",
			 start, start + count - 1, count);
	return m->nomem ? -ENOMEM : 0;
}

static const char *site_name(const struct tux3_walk_error *e)
{
	switch (e->site) {
	case TUX3_SITE_ROOT: return "tree root";
	case TUX3_SITE_NODE: return "bnode";
	case TUX3_SITE_LEAF:
		return e->tree == TUX3_TREE_DTREE ? "dleaf" :
		       e->tree == TUX3_TREE_OTREE ? "oleaf" : "ileaf";
	case TUX3_SITE_INODE: return "inode";
	case TUX3_SITE_DIRENT: return "directory";
	case TUX3_SITE_ATOM: return "atom table";
	case TUX3_SITE_BITMAP: return "bitmap";
	}
	return "structure";
}

static int error_parent(struct ctx *c, const struct tux3_walk_error *e)
{
	struct dot_model *m = c->m;
	int p = -1;
	switch (e->site) {
	case TUX3_SITE_NODE:
	case TUX3_SITE_LEAF:
		if (e->parent != TUX3_NONE)
			p = dot_find(m, DK_BNODE, e->parent);
		/* fall through */
	case TUX3_SITE_ROOT:
		if (p < 0 && e->tree == TUX3_TREE_DTREE)
			p = dot_find(m, DK_INODE, e->owner);
		break;
	case TUX3_SITE_DIRENT:
		p = dot_find(m, DK_DIR, e->owner);
		if (p < 0)
			p = dot_find(m, DK_INODE, e->owner);
		break;
	case TUX3_SITE_INODE:
		p = dot_find(m, DK_INODE, e->owner);
		if (p < 0 && e->owner != TUX3_NONE && e->owner > 4)
			p = c->cur_ileaf;	/* its inode was not drawn */
		break;
	case TUX3_SITE_ATOM:
		p = c->atoms;
		break;
	case TUX3_SITE_BITMAP:
		p = c->bitmap;
		break;
	}
	return p != -1 ? p : top(c);
}

static void add_error(struct ctx *c, int parent, const char *head,
		      const struct tux3_error *err)
{
	struct dot_model *m = c->m;
	int n = dot_add(m, DK_ERROR, m->errors, parent, -1);
	dot_head(m, n, "%s", head);
	if (err) {
		dot_head(m, n, "%s", err->what[0] ? err->what :
			 strerror(err->err < 0 ? -err->err : EIO));
		if (err->inum != TUX3_NONE && err->inum)
			dot_head(m, n, "inode %" PRIu64, err->inum);
	}
}

static int on_site_error(void *ctx, const struct tux3_walk_error *e)
{
	struct ctx *c = ctx;
	char head[160];
	flush_inode(c);
	if (e->block != TUX3_NONE)
		snprintf(head, sizeof(head), "bad %s at block %" PRIu64 "%s",
			 site_name(e), e->block,
			 e->twice ? " (reached twice)" : "");
	else if (e->owner && e->owner != TUX3_NONE)
		snprintf(head, sizeof(head), "bad %s of inode %" PRIu64,
			 site_name(e), e->owner);
	else
		snprintf(head, sizeof(head), "bad %s (%s)", site_name(e),
			 tree_name(e->tree));
	add_error(c, error_parent(c, e), head, e->err);
	return c->m->nomem ? -ENOMEM : 0;
}

static void set_wants(struct ctx *c)
{
	const struct dot_opts *o = c->o;
	unsigned all = (1u << DK_NKINDS) - 1;
	c->want_ibnode = c->want_dbnode = 0;
	if (o->have_inode && o->tree == DT_VERSIONS) {
		c->want = 1u << DK_VERSION;
		return;
	}
	if (o->have_inode) {
		c->want = 1u << DK_INODE | 1u << DK_DLEAF | 1u << DK_DIR;
		c->want_dbnode = 1;
		return;
	}
	switch (o->tree) {
	case DT_ALL:
		c->want = all;
		c->want_ibnode = c->want_dbnode = 1;
		break;
	case DT_ITREE:
		c->want = 1u << DK_SB | 1u << DK_ILEAF | 1u << DK_INODE;
		c->want_ibnode = 1;
		break;
	case DT_FILES:
		c->want = 1u << DK_SB | 1u << DK_INODE | 1u << DK_DLEAF |
			  1u << DK_DIR;
		c->want_dbnode = 1;
		break;
	case DT_LOG:
		c->want = 1u << DK_SB | 1u << DK_LOG;
		break;
	case DT_ATOMS:
		c->want = 1u << DK_SB | 1u << DK_ATOMS;
		break;
	case DT_BITMAP:
		c->want = 1u << DK_SB | 1u << DK_BITMAP;
		break;
	case DT_VERSIONS:
		c->want = 1u << DK_SB | 1u << DK_VERSION;
		break;
	}
}

int dot_walk_volume(struct tux3_volume *vol, const struct dot_opts *o,
		    struct dot_model *m)
{
	struct tux3_walk_ops ops = {
		.site_error = on_site_error,
	};
	struct ctx c = {
		.m = m, .o = o, .vol = vol, .root = -1, .cur_inode = -1,
		.cur_dir = -1, .cur_dleaf = -1, .cur_ileaf = -1, .cur_log = -1, .bitmap = -1,
		.orphans = -1, .atoms = -1, .cur_ino = TUX3_NONE,
		.downer = TUX3_NONE, .cur_dleaf_block = TUX3_NONE,
		.cur_ileaf_block = TUX3_NONE,
	};
	struct tux3_super_info sb;
	int r;

	for (int i = 0; i < MAX_LEVEL; i++)
		c.ipath[i] = c.opath[i] = c.dpath[i] = -1;
	set_wants(&c);
	if (wants(&c, DK_INODE)) {
		ops.inode = on_inode;
		ops.attr = on_attr;
	}
	if (wants(&c, DK_ILEAF) || wants(&c, DK_DLEAF) || wants(&c, DK_OLEAF))
		ops.leaf = on_leaf;
	if (c.want_ibnode || c.want_dbnode)
		ops.bnode = on_bnode;
	if (wants(&c, DK_DLEAF))
		ops.extent = on_extent;
	if (wants(&c, DK_DIR))
		ops.dirent = on_dirent;
	if (wants(&c, DK_ORPHANS))
		ops.orphan = on_orphan;
	if (wants(&c, DK_ATOMS))
		ops.atom = on_atom;
	if (wants(&c, DK_BITMAP))
		ops.bitrun = on_bitrun;
	if (wants(&c, DK_LOG)) {
		ops.logblock = on_logblock;
		ops.logrec = on_logrec;
	}

	if (o->have_inode && o->tree == DT_VERSIONS) {
		r = file_versions(&c);
	} else if (o->have_inode) {
		r = tux3_walk_inode(vol, o->inode, &ops, &c);
		if (r < 0 && r != -EUCLEAN && !m->count) {
			if (r == -ENOENT || r == -ENOMEM)
				return r;
			add_error(&c, -1, "cannot load the inode",
				  tux3_last_error(vol));
			r = -EUCLEAN;
		}
	} else {
		tux3_super_info(vol, &sb);
		if ((r = on_super(&c, &sb)) < 0)
			goto out;
		if (o->noreplay_reason) {
			struct tux3_error e = { .err = -EUCLEAN,
						.inum = TUX3_NONE };
			snprintf(e.what, sizeof(e.what), "%s",
				 o->noreplay_reason);
			add_error(&c, c.root, "log not replayed: the on-disk "
				  "trees are drawn (they may be stale)", &e);
		}
		/* only what the picture needs is walked */
		if (o->tree == DT_VERSIONS)
			r = 0;
		else if (o->tree == DT_LOG)
			r = tux3_walk_log(vol, &ops, &c);
		else if (o->tree == DT_ATOMS)
			r = tux3_walk_atoms(vol, &ops, &c);
		else if (o->tree == DT_BITMAP)
			r = tux3_walk_bitmap(vol, &ops, &c);
		else
			r = tux3_walk(vol, &ops, &c);
	}
	flush_inode(&c);
	if (c.atoms >= 0 && !c.natoms)
		dot_head(m, c.atoms, "(no atoms)");
	/* the log chain: the superblock points at the newest block, each
	 * block at the one before it */
	for (unsigned i = 0; i + 1 < c.nlogs; i++)
		m->node[c.logs[i]].parent = c.logs[i + 1];
	if (r < 0 && r != -EUCLEAN && r != -ENOMEM && !m->nomem) {
		struct tux3_error e = { .err = r, .inum = TUX3_NONE };
		snprintf(e.what, sizeof(e.what), "%s", strerror(-r));
		add_error(&c, top(&c), "the walk stopped", &e);
		r = -EUCLEAN;
	}
out:
	free(c.logs);
	if (m->nomem || r == -ENOMEM)
		return -ENOMEM;
	if (r == -ENOENT)
		return r;
	return r == -EUCLEAN || m->errors ? 1 : 0;
}

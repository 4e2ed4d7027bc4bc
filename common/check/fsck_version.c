/*
 * Pass 9: versions (doc/format.md 17).  The two marks of a volume with
 * versions (the superblock magic and the VERSIONS incompat bit) must
 * agree with each other and with inode 3; the version table must decode
 * and obey the tree's rules (vtree_check: label 0, parents, no cycle,
 * ghost <=> no tag, unique tags, every ghost with two children); a delete
 * left half done is reported.
 *
 * Repairs: the marks are set from inode 3 when it holds a table that
 * decodes, or cleared when there is no inode 3; a table on a volume with
 * no mark is removed only while no versioned leaf can exist (this build
 * writes none), which is always the case today.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check/fsck_internal.h"
#include "version/version.h"
#include "version/vfilemap.h"

/* ---- the table replaced (the coarse repairs) ---- */

/* vt written as the table, then read back as any open reads it: 0 only
 * when what is on the volume now decodes. */
static int table_replace(struct tux3_volume *vol, const struct vtree *vt)
{
	struct vtree *copy = malloc(sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, vt, sizeof(*copy));
	copy->pending = NULL;
	copy->bad_names = 0;
	int err = vtable_save(vol, copy);
	free(copy);
	if (!err)
		err = vtable_read(vol);
	if (!err && vol->vt->bad_names)
		err = -EUCLEAN;
	return err;
}

/* The last resort, which always leaves a table that decodes: the live
 * version alone.  The elements and the inodes of the snapshots go after
 * it (check_elements: labels not in the tree). */
static int table_origin_only(struct fsck *f)
{
	struct tux3_volume *vol = f->vol;
	struct vtree *vt = malloc(sizeof(*vt));
	if (!vt)
		return -ENOMEM;
	tux3_clear_error(vol);
	vtree_init(vt);
	fsck_info(f, "version table: reduced to the live version, every "
		  "snapshot dropped");
	int err = table_replace(vol, vt);
	free(vt);
	return err;
}

/* Inode 3 given an empty data map, when the table cannot be written
 * through its own (a damaged leaf or node of it, which pass 4 leaves to
 * this pass): the old map's blocks are then leaks, which the next round's
 * pass 8 frees. */
static int table_fresh_map(struct fsck *f, const char *why)
{
	struct tux3_volume *vol = f->vol;
	struct inode inode;
	int err = inode_load(vol, TUX3_VTABLE_INO, &inode);
	if (err)
		return err;
	fsck_info(f, "version table: its data map %s; it gets a new one",
		  why);
	inode.dtree = 0;
	inode.size = 0;
	vindex_free(vol);	/* the version index went with the map: read
				 * again (and rebuilt) from what is there */
	inode.present &= ~(1u << ATTR_DATA_BTREE);
	inode.present |= 1u << ATTR_CTIME_SIZE;
	err = inode_store(vol, &inode);
	inode_free(&inode);
	if (!err)
		f->again = "the version table's old data map is let go: what "
			   "only it held is freed in a new round";
	return err;
}

/* vt (NULL: nothing worth keeping) as the table, or else the live
 * version alone; through a new data map when the old one does not
 * take it. */
static int table_rebuild(struct fsck *f, const struct vtree *vt)
{
	/* a read back frees vol->vt, which vt may be */
	struct vtree *keep = vt ? malloc(sizeof(*keep)) : NULL;
	if (vt && !keep)
		return -ENOMEM;
	if (keep)
		memcpy(keep, vt, sizeof(*keep));
	int err = keep ? table_replace(f->vol, keep) : -EUCLEAN;
	if (err && err != -ENOMEM)
		err = table_origin_only(f);
	if (err && err != -ENOMEM) {
		tux3_clear_error(f->vol);
		err = table_fresh_map(f, "does not read");
		if (!err)
			err = keep ? table_replace(f->vol, keep) : -EUCLEAN;
		if (err && err != -ENOMEM)
			err = table_origin_only(f);
	}
	free(keep);
	return err;
}

static bool tree_fixable(const struct vtree *vt);

/* What the salvage kept, if vtree_repair can finish it (a pending
 * delete and a tree to repair do not go together). */
static bool salvage_usable(const struct vtree *vt, bool pending)
{
	return vt && (!vtree_check((struct vtree *)vt, NULL, NULL) ||
		      (!pending && tree_fixable(vt)));
}

/* ---- the element lists of every inode ---- */

/* What one inode's lists show: the first problem and how many more. */
struct list_report {
	unsigned count;
	unsigned label;
	char first[200];
	char last[200];		/* an element is seen at every block it
				 * covers: counted once */
};

struct elements {
	struct fsck *f;
	tux3_ino_t inum;
	unsigned files;
	struct list_report data, attrs;
	tux3_ino_t *fix;	/* inodes to repair after the walk */
	size_t nfix, capfix;
	struct vns_index *ix;	/* which inodes have which labels (the
				 * first walk only) */
	/* the version index checked against the elements (first walk) */
	bool vindex;
	uint64_t missing;	/* (label, inode) pairs it lacks */
	tux3_ino_t miss_inum;
	unsigned miss_label;
};

/* An element of label on inode inum: the version index must name the
 * pair (it may name more). */
static void vindex_need(struct elements *e, unsigned label, tux3_ino_t inum)
{
	const struct vtree *vt = e->f->vol->vt;
	/* a label the table lacks is an element to drop (EL1), read by
	 * no version: no diff ever asks for it */
	if (!e->vindex || label >= vt->top || !vt->v[label].flags ||
	    vindex_has(e->f->vol, label, inum))
		return;
	if (!e->missing++) {
		e->miss_inum = inum;
		e->miss_label = label;
	}
}

static void vindex_data_label(void *ctx, unsigned label)
{
	struct elements *e = ctx;
	vindex_need(e, label, e->inum);
}

static void note(struct list_report *r, unsigned label, const char *what)
{
	if (!strcmp(r->last, what))
		return;
	snprintf(r->last, sizeof(r->last), "%s", what);
	if (!r->count++) {
		r->label = label;
		snprintf(r->first, sizeof(r->first), "%s", what);
	}
}

static void element_problem(void *ctx, unsigned label, const char *what)
{
	note(&((struct elements *)ctx)->data, label, what);
}

static void attr_problem(void *ctx, unsigned label, const char *what)
{
	note(&((struct elements *)ctx)->attrs, label, what);
}

/* One problem per inode and kind of list; yes to either repairs both. */
static bool report(struct elements *e, unsigned id, struct list_report *r)
{
	char text[260];
	if (!r->count)
		return false;
	if (r->count > 1)
		snprintf(text, sizeof(text), "%s (and %u more)", r->first,
			 r->count - 1);
	else
		snprintf(text, sizeof(text), "%s", r->first);
	return fsck_problem(e->f, id, true,
			    FSCK_AT(.inum = e->inum, .have = r->label),
			    (uint64_t)e->inum, text);
}

/* The attribute lists of one inode (EL1-EL3 per kind and atom), from
 * the blob the walk is at.  One whose attributes are all of label 0
 * has nothing to check or note (every version reads it alike): most of
 * a volume's inodes, so that this pass costs little more than the
 * walk where few files were changed between snapshots. */
static int check_attr_lists(struct elements *e, tux3_ino_t inum)
{
	struct tux3_volume *vol = e->f->vol;
	struct vattrs x;
	const uint8_t *blob;
	uint8_t *copy = NULL;
	unsigned len, bad_at;
	int err = 0;
	if (!walk_blob_of(vol, inum, &blob, &len)) {
		err = itree_blob(vol, inum, &copy, &len);
		blob = copy;
	}
	if (!err && len && !vattrs_plain(blob, len) &&
	    !(err = vattrs_decode_whole(vol, inum, blob, len, &x,
					&bad_at))) {
		vattrs_check(vol->vt, &x, attr_problem, e);
		if (e->ix)
			vns_note_attrs(e->ix, inum, &x);
		for (unsigned i = 0; e->vindex && i < x.n; i++)
			vindex_need(e, x.a[i].label, inum);
		vattrs_free(&x);
	}
	free(copy);
	tux3_clear_error(vol);
	return err == -ENOMEM ? err : 0;	/* damage: pass 4's */
}

static int element_inode(void *ctx, const struct tux3_stat *st,
			 tux3_block_t leafblock, unsigned bloblen)
{
	struct elements *e = ctx;
	struct tux3_volume *vol = e->f->vol;
	/* the data tree every version shares (its root is not versioned) */
	struct inode inode = { .inum = st->ino, .dtree = st->dtree_root };
	(void)leafblock; (void)bloblen;
	e->inum = st->ino;
	e->data = e->attrs = (struct list_report){ 0 };
	if (st->ino >= TUX3_ROOT_INO && check_attr_lists(e, st->ino))
		return -ENOMEM;
	if (st->dtree_root && vfilemap_is_versioned(vol, &inode)) {
		e->files++;
		int r = vfilemap_check(vol, &inode, vol->vt, element_problem, e);
		if (r != -ENOMEM && e->ix)
			r = vns_note_data(e->ix, vol, &inode);
		if (r != -ENOMEM && e->vindex)
			r = vfilemap_labels(vol, &inode, vindex_data_label, e);
		if (r == -ENOMEM)
			return r;
	}
	tux3_clear_error(vol);
	bool fix = report(e, P9_ATTR_BAD, &e->attrs);
	fix |= report(e, P9_ELEMENT_BAD, &e->data);
	if (fix && st->ino >= TUX3_ROOT_INO) {
		if (e->nfix == e->capfix) {
			size_t cap = e->capfix ? e->capfix * 2 : 16;
			void *p = realloc(e->fix, cap * sizeof(*e->fix));
			if (!p)
				return -ENOMEM;
			e->fix = p;
			e->capfix = cap;
		}
		e->fix[e->nfix++] = st->ino;
	}
	return 1;		/* its children are not needed */
}

static int element_error(void *ctx, const struct tux3_error *err)
{
	(void)ctx; (void)err;
	return 0;		/* passes 3 and 4 report damage */
}

/* EL1-EL3 of every inode's lists (labels used, one element per label per
 * address, no orphan element), repaired after the walk when wanted. */
static int check_elements(struct fsck *f, struct vns_index *ix,
			  uint64_t *vindex_missing)
{
	struct tux3_walk_ops ops = { .inode = element_inode,
				     .error = element_error };
	struct elements e = { .f = f, .ix = ix,
			      .vindex = vindex_missing != NULL };
	/* no inode of the volume has an element of a snapshot's label
	 * (pass 4 counted them) and nothing was repaired since: the lists
	 * hold nothing to check, and no snapshot's namespace differs */
	if (f->vcounted && !f->vblobs && !f->vtrees &&
	    f->res->fixed == f->vcounted_fixed) {
		fsck_info(f, "versions: 0 versioned files");
		return 0;
	}
	int err = walk_uncounted(f->vol, &ops, &e);
	tux3_clear_error(f->vol);
	if (err == -ENOMEM)
		goto out;
	err = 0;
	for (size_t i = 0; i < e.nfix && !err; i++) {
		int r = vinode_repair(f->vol, e.fix[i]);
		if (r == -ENOMEM)
			err = r;
		else if (r == -EUCLEAN)
			f->res->unfixed++;	/* a blob pass 4 left as is */
		else
			fsck_fixed(f, r);
		tux3_clear_error(f->vol);
	}
	fsck_info(f, "versions: %u versioned file%s", e.files,
		  e.files == 1 ? "" : "s");
	if (vindex_missing && e.missing) {
		*vindex_missing = e.missing;
		f->vindex_miss_inum = e.miss_inum;
		f->vindex_miss_label = e.miss_label;
	}
out:
	free(e.fix);
	return err;
}

/* ---- every snapshot's namespace ---- */

struct ns_prob {
	enum tux3_ns_problem what;
	uint64_t inum, dir, have, want;
};

struct ns_list {
	struct ns_prob *v;
	size_t n, cap;
	bool overflow;
};

static void ns_collect(void *ctx, enum tux3_ns_problem what, uint64_t inum,
		       uint64_t dir, uint64_t have, uint64_t want)
{
	struct ns_list *l = ctx;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		void *v = cap <= (1u << 20) ?
			  realloc(l->v, cap * sizeof(*l->v)) : NULL;
		if (!v) {
			l->overflow = true;
			return;
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = (struct ns_prob){ what, inum, dir, have, want };
}

static void ns_text(const struct ns_prob *p, char *text, size_t len)
{
	switch (p->what) {
	case TUX3_NS_DANGLING:
		snprintf(text, len, "directory %" PRIu64 " names inode %"
			 PRIu64 ", which it does not have", p->dir, p->inum);
		break;
	case TUX3_NS_TYPE:
		snprintf(text, len, "directory %" PRIu64 ": entry type %"
			 PRIu64 " for inode %" PRIu64 " of type %" PRIu64,
			 p->dir, p->have, p->inum, p->want);
		break;
	case TUX3_NS_DIR_TWICE:
		snprintf(text, len, "directory %" PRIu64 " has more than one "
			 "name", p->inum);
		break;
	case TUX3_NS_UNREACHABLE:
		snprintf(text, len, "inode %" PRIu64 " is not reachable from "
			 "the root", p->inum);
		break;
	case TUX3_NS_NLINK:
		snprintf(text, len, "inode %" PRIu64 ": link count %" PRIu64
			 ", should be %" PRIu64, p->inum, p->have, p->want);
		break;
	default:
		snprintf(text, len, "inode %" PRIu64 ": cannot be read "
			 "(directory %" PRIu64 ")", p->inum, p->dir);
		break;
	}
}

/* The repair pass 5 makes, here in the selected snapshot: an entry
 * removed or retyped, a link count set (0, or <0).  Others cannot be
 * fixed here (1). */
static int ns_fix(struct tux3_volume *vol, const struct ns_prob *p)
{
	int r;
	switch (p->what) {
	case TUX3_NS_DANGLING:
	case TUX3_NS_DIR_TWICE:
		r = fsck_dir_remove_inum(vol, p->dir, p->inum,
					 p->what == TUX3_NS_DIR_TWICE);
		return r < 0 ? r : 0;	/* >= 0: entries removed */
	case TUX3_NS_TYPE:
		return fsck_dir_retype(vol, p->dir, p->inum,
				       (unsigned)p->want);
	case TUX3_NS_NLINK:
		return fsck_set_nlink(vol, p->inum, (uint32_t)p->want);
	default:
		return 1;	/* not fixable */
	}
}

static bool ns_fixable(enum tux3_ns_problem what)
{
	return what == TUX3_NS_DANGLING || what == TUX3_NS_DIR_TWICE ||
	       what == TUX3_NS_TYPE || what == TUX3_NS_NLINK;
}

/* One snapshot: structural problems first, then (counted again after
 * them) link counts. */
static int check_namespace(struct fsck *f, const char *name)
{
	struct tux3_volume *vol = f->vol;
	bool lost = false;
	int err = 0;
	for (int round = 0; round < 2 && !err && !f->stop; round++) {
		struct ns_list l = { 0 };
		int r = tux3_check_namespace(vol, ns_collect, &l);
		tux3_clear_error(vol);
		if (r == -ENOMEM)
			err = r;
		unsigned structural = 0;
		for (size_t i = 0; i < l.n; i++)
			structural += l.v[i].what != TUX3_NS_NLINK;
		for (size_t i = 0; i < l.n && !err && !f->stop; i++) {
			struct ns_prob *p = &l.v[i];
			bool nlink = p->what == TUX3_NS_NLINK;
			/* round 0: all but link counts held back by
			 * structural repairs; round 1: those */
			if (round == 0 ? nlink && structural : !nlink)
				continue;
			char text[200];
			ns_text(p, text, sizeof(text));
			if (!ns_fixable(p->what)) {
				/* the coarse repair: the snapshot goes */
				if (fsck_problem(f, P9_NAMESPACE_LOST, true,
						 FSCK_AT(.inum = p->inum), name,
						 text))
					lost = true;
				break;
			}
			if (!fsck_problem(f, P9_NAMESPACE, true,
					  FSCK_AT(.inum = p->inum), name, text))
				continue;
			int fixed = ns_fix(vol, p);
			if (fixed == -ENOMEM)
				err = fixed;
			else if (!fixed)
				fsck_fixed(f, fixed);
			else
				lost = true;	/* a repair failed: the
						 * coarse one */
			tux3_clear_error(vol);
		}
		if (l.overflow)
			fsck_info(f, "snapshot %s: too many namespace problems "
				  "to list", name);
		free(l.v);
		if (lost || (round == 0 && !structural))
			break;	/* link counts were reported in round 0 */
	}
	return err ? err : lost;
}

/* A snapshot whose namespace cannot be repaired is deleted; when that
 * fails too, every snapshot goes (0, or -ENOMEM). */
static int drop_snapshot(struct fsck *f, const char *name, bool *all)
{
	struct tux3_volume *vol = f->vol;
	tux3_version_select(vol, NULL);
	/* no step back to 2014 here: pass 9 still walks the table */
	int err = version_delete(vol, name, false);
	if (err == -ENOMEM)
		return err;
	if (!err) {
		fsck_info(f, "snapshot %s deleted: its namespace could not be "
			  "repaired", name);
		fsck_fixed(f, 0);
		return 0;
	}
	fsck_info(f, "snapshot %s: the delete failed (%s)", name,
		  vol->error.what[0] ? vol->error.what : strerror(-err));
	tux3_clear_error(vol);
	*all = true;
	err = table_origin_only(f);
	if (err == -ENOMEM)
		return err;
	fsck_fixed(f, err);
	return 0;
}

/* Pass 5 checks the live version; the snapshots are checked here: by
 * what differs from their parents (fsck_vnamespace.c), and those that
 * may have a problem in full, each seen through the library as a reader
 * of that version sees it. */
static int check_namespaces(struct fsck *f, bool *all, struct vns_index *ix)
{
	struct tux3_volume *vol = f->vol;
	struct vtree *vt = vol->vt;
	unsigned checked = 0, by_delta = 0;
	uint8_t *suspect = malloc(VERSION_LABELS);
	int err = suspect ? vns_suspects(vol, ix, suspect, &by_delta) :
			    -ENOMEM;
	for (unsigned l = 1; l < vt->top && !err && !f->stop; l++) {
		if (!vtree_used(vt, l) || vtree_ghost(vt, l) ||
		    (vt->v[l].flags & VERSION_DYING) || !suspect[l])
			continue;
		/* a repair may move the name to an implicit child: copy */
		char name[VERSION_NAME_MAX + 1];
		snprintf(name, sizeof(name), "%s", vt->v[l].name);
		if ((err = tux3_version_select(vol, name)))
			break;
		err = check_namespace(f, name);
		checked++;
		if (err == 1)
			err = drop_snapshot(f, name, all);
		if (*all)
			break;	/* the table is the live version alone */
	}
	free(suspect);
	tux3_version_select(vol, NULL);
	tux3_clear_error(vol);
	if (err == -ENOMEM)
		return err;
	fsck_info(f, "versions: %u snapshot namespace%s checked in full, %u "
		  "by what differs", checked, checked == 1 ? "" : "s",
		  by_delta);
	return 0;
}

struct tree_report {
	struct fsck *f;
	bool fixable, yes;
};

static void tree_problem(void *ctx, unsigned label, const char *what)
{
	struct tree_report *r = ctx;
	r->yes |= fsck_problem(r->f, P9_VTABLE_TREE, r->fixable,
			       FSCK_AT(.inum = TUX3_VTABLE_INO, .have = label),
			       what);
}

/* vtree_repair answers every problem of this table (a tag used twice,
 * a ghost with fewer than two children), or not: tried on a copy. */
static bool tree_fixable(const struct vtree *vt)
{
	struct vtree *copy = malloc(sizeof(*copy));
	struct vdelete_plan *plan = malloc(sizeof(*plan));
	bool ok = copy && plan;
	if (ok) {
		memcpy(copy, vt, sizeof(*copy));
		ok = !vtree_repair(copy, plan) &&
		     !vtree_check(copy, NULL, NULL);
	}
	free(copy);
	free(plan);
	return ok;
}

/* The tree the fine repair cannot answer (a cycle, a parent not in
 * the tree, the origin wrong, a tagless snapshot, a pending delete):
 * vtree_salvage's tree, finished by vtree_repair, or the live version
 * alone. */
static int tree_coarse(struct fsck *f)
{
	struct tux3_volume *vol = f->vol;
	struct vtree *vt = malloc(sizeof(*vt));
	struct vdelete_plan *plan = malloc(sizeof(*plan));
	int err = vt && plan ? 0 : -ENOMEM;
	if (!err) {
		memcpy(vt, vol->vt, sizeof(*vt));
		vt->pending = NULL;
		unsigned n = vtree_salvage(vt, plan);
		bool usable = salvage_usable(vt, plan->count > 0);
		if (usable)
			fsck_info(f, "version table: %u label%s dropped or "
				  "fixed", n, n == 1 ? "" : "s");
		err = table_rebuild(f, usable ? vt : NULL);
	}
	if (!err && vtree_check(vol->vt, NULL, NULL)) {
		err = vol->vpending ? -EUCLEAN : version_repair_table(vol);
		if (err && err != -ENOMEM) {
			tux3_clear_error(vol);
			err = table_origin_only(f);
		}
	}
	free(vt);
	free(plan);
	return err;
}

/* The table's rules (VT1-VT4): 0 when the tree is sound (now). */
static int check_tree(struct fsck *f)
{
	struct tux3_volume *vol = f->vol;
	struct tree_report r = { f, false, false };
	if (!vtree_check(vol->vt, NULL, NULL))
		return 0;
	bool fine = !vol->vpending && tree_fixable(vol->vt);
	r.fixable = true;	/* at worst, the coarse repair */
	vtree_check(vol->vt, tree_problem, &r);
	if (!r.yes)
		return 1;
	int err = fine ? version_repair_table(vol) : -EUCLEAN;
	if (err == -ENOMEM)
		return err;
	tux3_clear_error(vol);
	if (err)
		err = tree_coarse(f);
	if (err == -ENOMEM)
		return err;
	fsck_fixed(f, err);
	/* which version each label reads changed with the tree: what the
	 * earlier passes checked under the old one is checked again */
	if (!err)
		f->again = "the version table's tree was repaired: the "
			   "volume is checked again with it";
	return err ? 1 : 0;
}

/* Inode 3 and what it holds: 1 a table that decodes, 0 none, -EUCLEAN a
 * damaged one (why says where), other <0 operational. */
static int read_table(struct tux3_volume *vol, char *why, size_t len)
{
	struct inode inode;
	int err = inode_load(vol, TUX3_VTABLE_INO, &inode);
	if (err == -ENOENT) {
		tux3_clear_error(vol);
		return 0;
	}
	if (err) {
		tux3_error_text(vol, why, len);
		tux3_clear_error(vol);
		return err == -ENOMEM ? err : -EUCLEAN;
	}
	inode_free(&inode);
	err = vtable_read(vol);
	if (err == -ENOMEM)
		return err;
	if (err) {
		snprintf(why, len, "%s", vol->error.what);
		tux3_clear_error(vol);
		return -EUCLEAN;
	}
	return 1;
}

/* The table that does not decode, replaced by what vtable_read's
 * salvage kept of it (vol->vt), or by the live version alone; its marks
 * set to agree. */
static int rebuild_table(struct fsck *f)
{
	struct tux3_volume *vol = f->vol;
	const struct vtree *vt = vol->vt;
	bool usable = salvage_usable(vt, vol->vpending != NULL);
	if (usable)
		fsck_info(f, "version table: rebuilt from the records that "
			  "decode, %u label%s dropped or fixed",
			  vol->vt_dropped, vol->vt_dropped == 1 ? "" : "s");
	tux3_clear_error(vol);
	/* a table whose map shares blocks with another owner (pass 4: a
	 * dleaf given another file's extents) would free that owner's
	 * blocks when written again through it: it gets a map of its own,
	 * and the old one's blocks no one else holds pass 8 frees next
	 * round */
	int err = 0;
	if (f->vtable_shared) {
		err = table_fresh_map(f, "shares blocks with another owner");
		if (err == -ENOMEM)
			return err;
		tux3_clear_error(vol);
	}
	err = table_rebuild(f, usable ? vt : NULL);
	if (!err && !vol->vt)
		err = -EUCLEAN;	/* no table reads back: never on */
	if (!err)
		repair_set_version_marks(vol, true);
	return err;
}

/*
 * A delete a crash interrupted is a normal state, as a pending orphan is:
 * its plan is in the table, and the next read-write open finishes it.
 * Checking reports it; repairing finishes it (its commits included).
 */
static int finish_delete(struct fsck *f)
{
	struct tux3_volume *vol = f->vol;
	uint64_t count = vol->vpending->count;
	if (!fsck_repairing(f)) {
		fsck_info(f, "a snapshot delete was interrupted: %" PRIu64
			  " labels are still dying (normal after a crash; "
			  "the next read-write open finishes it)", count);
		return 0;
	}
	if (!fsck_problem(f, P9_DELETE_PENDING, true,
			  FSCK_AT(.inum = TUX3_VTABLE_INO), count))
		return 0;
	int err = version_delete_resume(vol);
	if (err && err != -ENOMEM) {
		/* the coarse repair: no snapshot left to finish it for */
		fsck_info(f, "finishing the delete failed (%s)",
			  vol->error.what[0] ? vol->error.what :
			  strerror(-err));
		tux3_clear_error(vol);
		err = table_origin_only(f);
	}
	if (err == -ENOMEM)
		return err;
	fsck_fixed(f, err);
	return 0;
}

/* ---- the version index (format.md 17.11) ---- */

/* The index loaded for the element walk to check: 1 when it decodes, 0
 * when the volume keeps none or it is damaged (check_vindex reports
 * that). */
static int vindex_usable(struct fsck *f)
{
	struct tux3_volume *vol = f->vol;
	f->vindex_bad[0] = 0;
	if (!vindex_feature(vol))
		return 0;
	int err = vindex_load(vol);
	if (err == -EUCLEAN)
		snprintf(f->vindex_bad, sizeof(f->vindex_bad), "%s",
			 vol->error.what);
	tux3_clear_error(vol);
	return err == -ENOMEM ? err : !err;
}

static int vindex_repair(struct fsck *f)
{
	int err = version_index_rebuild(f->vol);
	if (err == -ENOMEM)
		return err;
	fsck_fixed(f, err);
	tux3_clear_error(f->vol);
	return 0;
}

/* A damaged index, or one without a pair an element makes: built again
 * from every inode's elements. */
static int check_vindex(struct fsck *f, uint64_t missing)
{
	char text[300];
	if (f->vindex_bad[0]) {
		if (fsck_problem(f, P9_VINDEX_BAD, true,
				 FSCK_AT(.inum = TUX3_VTABLE_INO),
				 f->vindex_bad))
			return vindex_repair(f);
		return 0;
	}
	if (!missing)
		return 0;
	snprintf(text, sizeof(text), "it lacks %" PRIu64 " (label, inode) "
		 "pair%s that elements make (the first: label %u of inode %"
		 PRIu64 ")", missing, missing == 1 ? "" : "s",
		 f->vindex_miss_label, f->vindex_miss_inum);
	if (fsck_problem(f, P9_VINDEX_MISSING, true,
			 FSCK_AT(.inum = f->vindex_miss_inum,
				 .have = f->vindex_miss_label), text))
		return vindex_repair(f);
	return 0;
}

/* The version table lost: the live version's alone, the marks set. */
static int live_table(struct fsck *f)
{
	int err = table_origin_only(f);
	if (!err)
		repair_set_version_marks(f->vol, true);
	return err;
}

/* Ask problem id (why: its text, where it takes one) and make the table
 * with make: 1 when there is a table now, 0 when not, -ENOMEM. */
static int table_repair(struct fsck *f, unsigned id, const char *why,
			int (*make)(struct fsck *f))
{
	if (!fsck_problem(f, id, true, FSCK_AT(.inum = TUX3_VTABLE_INO), why))
		return 0;
	int err = make(f);
	if (err == -ENOMEM)
		return err;
	fsck_fixed(f, err);
	return !err;
}

int fsck_pass9(struct fsck *f)
{
	struct tux3_volume *vol = f->vol;
	bool magic = !memcmp(vol->super.magic, tux3_magic_versions, 8);
	bool bit = vol->ident.present &&
		   (vol->ident.incompat & TUX3_FEATURE_INCOMPAT_VERSIONS);
	char why[300] = "";
	int table;

	if (f->unusable || !vol)
		return 0;
	table = read_table(vol, why, sizeof(why));
	if (table == -ENOMEM)
		return table;
	if (!magic && !bit) {
		if (vindex_feature(vol) &&
		    fsck_problem(f, P9_VINDEX_STRAY, true, FSCK_AT(0))) {
			vindex_end(vol);
			vol->super_dirty = true;
			fsck_fixed(f, 0);
		}
		if (table && fsck_problem(f, P9_STRAY_VTABLE, true,
					  FSCK_AT(.inum = TUX3_VTABLE_INO))) {
			struct inode inode;
			int err = inode_load(vol, TUX3_VTABLE_INO, &inode);
			if (!err) {
				/* every block, its map's nodes too (the
				 * version index leaves a hole in it) */
				err = inode_free_unversioned(vol, &inode);
				inode_free(&inode);
			}
			if (!err)
				err = inode_delete(vol, TUX3_VTABLE_INO);
			fsck_fixed(f, err);
		}
		vtable_unload(vol);
		return 0;
	}
	if (table == -EUCLEAN) {
		int made = table_repair(f, P9_VTABLE_BAD, why, rebuild_table);
		if (made <= 0)
			return made;
		table = 1;
		magic = bit = true;	/* the save set both */
	}
	if (!table && magic && bit) {
		/* both marks say versions: the table was lost (pass 4
		 * clears an inode 3 it cannot read), and the files' blobs
		 * and maps may hold elements, which without versions would
		 * not decode: a table of the live version keeps them, and
		 * the element checks below drop the snapshots' */
		int made = table_repair(f, P9_VTABLE_LOST, why, live_table);
		if (made <= 0)
			return made;
		table = 1;
	}
	if (magic != bit || !table) {
		char text[200];
		snprintf(text, sizeof(text), "the volume is marked as having "
			 "versions by its %s only%s",
			 magic ? "superblock magic" : "VERSIONS feature bit",
			 table ? "" : ", and has no version table (inode 3)");
		/* setting the bit needs the extension record */
		bool fixable = table == 0 || (table == 1 && vol->ident.present);
		if (fsck_problem(f, P9_GATE, fixable,
				 FSCK_AT(.inum = TUX3_VTABLE_INO), text)) {
			repair_set_version_marks(vol, table == 1);
			fsck_fixed(f, 0);
			/* without versions, pass 4 judges versioned data
			 * trees differently: it looks again */
			if (table != 1)
				f->again = "the volume has no versions any "
					   "more: its files are checked again "
					   "as such";
		}
	}
	if (table == 1 && vol->vt->bad_names &&
	    fsck_problem(f, P9_VTABLE_NAME, true,
			 FSCK_AT(.inum = TUX3_VTABLE_INO),
			 (uint64_t)vol->vt->bad_names)) {
		/* the table written again: every name with its NUL, and
		 * one of its own */
		vtree_names_bad(vol->vt, true);
		int err = table_rebuild(f, vol->vt);
		if (err == -ENOMEM)
			return err;
		fsck_fixed(f, err);
	}
	if (table == 1) {
		int tree_bad = check_tree(f);
		if (tree_bad < 0)
			return tree_bad;
		if (!tree_bad && vol->vpending && vol->vpending->count) {
			int err = finish_delete(f);
			if (err)
				return err;
		}
		fsck_info(f, "versions: %u labels, %u ghosts",
			  vol->vt->used, vol->vt->ghosts);
		/* the element rules need a sound tree */
		struct vns_index *ix = vns_index_new();
		if (!ix)
			return -ENOMEM;
		uint64_t missing = 0;
		int usable = tree_bad ? 0 : vindex_usable(f);
		if (usable < 0) {
			vns_index_free(ix);
			return usable;
		}
		int err = tree_bad ? 0 : check_elements(f, ix, usable ?
							&missing : NULL);
		bool all = false;
		if (!err && !tree_bad)
			err = check_namespaces(f, &all, ix);
		vns_index_free(ix);
		/* the snapshots dropped: their elements go */
		if (!err && all)
			err = check_elements(f, NULL, NULL);
		if (!err && !tree_bad)
			err = check_vindex(f, missing);
		return err;
	}
	return 0;
}

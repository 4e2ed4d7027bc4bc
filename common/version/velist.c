/*
 * Operations on one element list (common/version/version.h): the read rule, heirs,
 * the write rule with implicit versions and relabelling, and what a
 * delete does to a list.  Lists are independent: every function looks at
 * one address.  vt->slot maps label -> index + 1 while a function runs and
 * is all zero between calls.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "version/version.h"

static void slots_set(struct vtree *vt, const struct velem *e, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (e[i].label < VERSION_LABELS)
			vt->slot[e[i].label] = (uint16_t)(i + 1);
}

static void slots_clear(struct vtree *vt, const struct velem *e, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (e[i].label < VERSION_LABELS)
			vt->slot[e[i].label] = 0;
}

/* Nearest element on the path from label up to the origin (slots set). */
static int nearest(struct vtree *vt, unsigned label)
{
	for (unsigned steps = 0; label < VERSION_LABELS &&
	     steps <= VERSION_LABELS; steps++) {
		if (vt->slot[label])
			return vt->slot[label] - 1;
		label = vt->v[label].parent;
	}
	return -1;
}

static int read_now(struct vtree *vt, const struct velem *e, unsigned n,
		    unsigned label)
{
	slots_set(vt, e, n);
	int i = nearest(vt, label);
	slots_clear(vt, e, n);
	return i >= 0 && e[i].phys ? i : -1;
}

int velist_read(struct vtree *vt, const struct velem *e, unsigned n,
		unsigned label)
{
	if (!vt->pending || !n)
		return read_now(vt, e, n, label);
	/* the list as the pending delete leaves it; the element read is
	 * found again by its block (a delete relabels, never moves one) */
	struct velem after[VERSION_LABELS];
	unsigned m = n;
	const struct vdelete_plan *plan = vt->pending;
	memcpy(after, e, n * sizeof(*e));
	vt->pending = NULL;	/* velist_delete reads nothing */
	velist_delete(vt, plan, after, &m, NULL, NULL);
	vt->pending = plan;
	int i = read_now(vt, after, m, label);
	for (unsigned j = 0; i >= 0 && j < n; j++)
		if (e[j].phys == after[i].phys)
			return (int)j;
	return -1;
}

/* Non-ghost versions below label (not label itself) that inherit what
 * label reads: children without an element of their own, recursively.
 * A table read from disk may hold a cycle (fsck reports it): the visit
 * stops after as many labels as there can be, so it always ends. */
static unsigned heirs_below(struct vtree *vt, unsigned label)
{
	unsigned count = 0, sp = 0, pushed = 1;
	vt->stack[sp++] = (uint16_t)label;
	while (sp) {
		unsigned l = vt->stack[--sp];
		for (unsigned i = 0; i < vt->nchild[l]; i++) {
			unsigned c = vtree_child(vt, l, i);
			if (vt->slot[c])
				continue;
			count += !vtree_ghost(vt, c);
			if (pushed++ >= VERSION_LABELS || sp >= VERSION_LABELS)
				return count;
			vt->stack[sp++] = (uint16_t)c;
		}
	}
	return count;
}

static unsigned heirs_of(struct vtree *vt, unsigned label)
{
	return !vtree_ghost(vt, label) + heirs_below(vt, label);
}

unsigned velist_heirs(struct vtree *vt, const struct velem *e, unsigned n,
		      unsigned i)
{
	slots_set(vt, e, n);
	unsigned h = heirs_of(vt, e[i].label);
	slots_clear(vt, e, n);
	return h;
}

/* The one readable version below label (itself included) that inherits
 * what label reads, or -1 when none or several do (slots set). */
static int sole_heir(struct vtree *vt, unsigned label)
{
	int found = !vtree_ghost(vt, label) ? (int)label : -1;
	unsigned sp = 0, pushed = 1;
	vt->stack[sp++] = (uint16_t)label;
	while (sp) {
		unsigned l = vt->stack[--sp];
		for (unsigned i = 0; i < vt->nchild[l]; i++) {
			unsigned c = vtree_child(vt, l, i);
			if (vt->slot[c])
				continue;
			if (!vtree_ghost(vt, c)) {
				if (found >= 0)
					return -1;
				found = (int)c;
			}
			if (pushed++ >= VERSION_LABELS || sp >= VERSION_LABELS)
				return -1;
			vt->stack[sp++] = (uint16_t)c;
		}
	}
	return found;
}

int velist_sole_reader(struct vtree *vt, const struct velem *e, unsigned n,
		       unsigned i)
{
	slots_set(vt, e, n);
	int r = sole_heir(vt, e[i].label);
	slots_clear(vt, e, n);
	return r;
}

int velist_add(struct velem *e, unsigned *n, unsigned cap, unsigned label,
	       uint64_t phys)
{
	if (*n >= cap)
		return -ENOSPC;
	e[(*n)++] = (struct velem){ .label = (uint16_t)label, .phys = phys };
	return (int)*n - 1;
}

static void remove_at(struct velem *e, unsigned *n, unsigned i)
{
	memmove(e + i, e + i + 1, (*n - i - 1) * sizeof(*e));
	(*n)--;
}

/* The origin writes in place unless a snapshot still reads its value;
 * then that value is handed to the root (relabelled, or a hole element
 * recorded for it) and the origin gets a new block. */
static int write_origin(struct vtree *vt, struct velem *e, unsigned *n,
			unsigned cap)
{
	int own = vt->slot[VERSION_ORIGIN] ? vt->slot[VERSION_ORIGIN] - 1 : -1;
	if (!heirs_below(vt, VERSION_ORIGIN))
		return own >= 0 ? own : -ENOENT;
	unsigned root = vtree_root(vt);
	if (own >= 0) {
		vt->slot[VERSION_ORIGIN] = 0;
		e[own].label = (uint16_t)root;
		return -ENOENT;
	}
	int r = velist_add(e, n, cap, root, 0);
	return r < 0 ? r : -ENOENT;
}

int velist_write(struct vtree *vt, struct velem *e, unsigned *n, unsigned cap,
		 unsigned *label, int64_t birth_ns)
{
	unsigned t = *label;
	int r;

	if (!vtree_used(vt, t) || (vt->v[t].flags & VERSION_DYING) ||
	    vtree_ghost(vt, t))
		return -EROFS;
	slots_set(vt, e, *n);
	if (t == VERSION_ORIGIN) {
		r = write_origin(vt, e, n, cap);
		goto out;
	}
	r = vt->slot[t] ? vt->slot[t] - 1 : -1;
	if (r >= 0 && !heirs_below(vt, t))
		goto out;		/* exclusive: in place */
	if (vt->nchild[t]) {
		/* a write would leak into the children: write to a new
		 * child that takes the tag instead */
		int c = vtree_implicit_child(vt, t, birth_ns);
		if (c < 0) {
			r = c;
			goto out;
		}
		*label = t = (unsigned)c;
	}
	/* t has no children and no element: it reads its nearest ancestor's
	 * element, which it may take over if it is a ghost's and t its only
	 * heir (no other version can see the change) */
	r = nearest(vt, vt->v[t].parent);
	if (r >= 0 && e[r].label != VERSION_ORIGIN &&
	    vtree_ghost(vt, e[r].label) && heirs_of(vt, e[r].label) == 1) {
		vt->slot[e[r].label] = 0;
		e[r].label = (uint16_t)t;
		vt->slot[t] = (uint16_t)(r + 1);
		goto out;
	}
	r = -ENOENT;
out:
	slots_clear(vt, e, *n);
	return r;
}

/* Elements on ghosts that no version reads, and holes repeating an
 * inherited hole, go (slots set; removing one never lowers the heirs of
 * another: what it covered had no reader). */
unsigned velist_normalize(struct vtree *vt, struct velem *e, unsigned *n,
			  vfree_fn free_fn, void *ctx)
{
	unsigned gone = 0;
	slots_set(vt, e, *n);
	for (unsigned i = 0; i < *n;) {
		unsigned l = e[i].label;
		bool drop = false;
		if (vtree_ghost(vt, l) && !heirs_below(vt, l)) {
			drop = true;
		} else if (!e[i].phys) {
			int up = l == VERSION_ORIGIN ? -1 :
				 nearest(vt, vt->v[l].parent);
			drop = up < 0 || !e[up].phys;
		}
		if (!drop) {
			i++;
			continue;
		}
		if (e[i].phys && free_fn)
			free_fn(ctx, e[i].phys);
		slots_clear(vt, e, *n);
		remove_at(e, n, i);
		slots_set(vt, e, *n);
		gone++;
	}
	slots_clear(vt, e, *n);
	return gone;
}

static int find_label(const struct velem *e, unsigned n, unsigned label)
{
	for (unsigned i = 0; i < n; i++)
		if (e[i].label == label)
			return (int)i;
	return -1;
}

unsigned velist_delete(struct vtree *vt, const struct vdelete_plan *plan,
		       struct velem *e, unsigned *n, vfree_fn free_fn,
		       void *ctx)
{
	unsigned changed = 0;
	for (unsigned s = 0; s < plan->count; s++) {
		const struct vdelete_step *st = &plan->step[s];
		int i = find_label(e, *n, st->label);
		if (i < 0)
			continue;
		changed++;
		if (st->into != VERSION_NONE &&
		    find_label(e, *n, st->into) < 0) {
			e[i].label = st->into;	/* the heir inherits it */
			continue;
		}
		if (e[i].phys && free_fn)
			free_fn(ctx, e[i].phys);
		remove_at(e, n, (unsigned)i);
	}
	return changed + velist_normalize(vt, e, n, free_fn, ctx);
}

unsigned velist_repair(struct vtree *vt, struct velem *e, unsigned *n,
		       vfree_fn free_fn, void *ctx)
{
	unsigned gone = 0;
	for (unsigned i = 0; i < *n;) {
		unsigned l = e[i].label;
		bool bad = l >= vt->top || !vtree_used(vt, l) ||
			   (vt->v[l].flags & VERSION_DYING) ||
			   find_label(e, i, l) >= 0;
		if (!bad) {
			i++;
			continue;
		}
		if (e[i].phys && free_fn)
			free_fn(ctx, e[i].phys);
		remove_at(e, n, i);
		gone++;
	}
	return gone + velist_normalize(vt, e, n, free_fn, ctx);
}

/* While a delete is pending: does a dying label read element i (slots
 * set)?  Then the element is the plan's to hand on or drop when the list
 * is processed, as a dying label's own is, not an orphan. */
static bool read_by_dying(struct vtree *vt, unsigned i)
{
	for (unsigned d = 0; d < vt->top; d++)
		if ((vt->v[d].flags & VERSION_DYING) && nearest(vt, d) == (int)i)
			return true;
	return false;
}

unsigned velist_check(struct vtree *vt, const struct velem *e, unsigned n,
		      vcheck_fn fn, void *ctx)
{
	unsigned bad = 0;
	char msg[160];
	for (unsigned i = 0; i < n; i++) {
		unsigned l = e[i].label;
		const char *what = NULL;
		if (l >= vt->top || (!vtree_used(vt, l) &&
		    !(vt->pending && (vt->v[l].flags & VERSION_DYING))) ||
		    (!vt->pending && (vt->v[l].flags & VERSION_DYING)))
			what = "label not in the version tree";
		else if (find_label(e, i, l) >= 0)
			what = "second element of one label";
		if (what) {
			snprintf(msg, sizeof(msg), "element [%u, %llu]: %s", l,
				 (unsigned long long)e[i].phys, what);
			if (fn)
				fn(ctx, l, msg);
			bad++;
		}
	}
	if (bad)
		return bad;
	slots_set(vt, e, n);
	for (unsigned i = 0; i < n; i++) {
		unsigned l = e[i].label;
		if (vtree_ghost(vt, l) && !heirs_below(vt, l) &&
		    !(vt->pending && ((vt->v[l].flags & VERSION_DYING) ||
				      read_by_dying(vt, i)))) {
			snprintf(msg, sizeof(msg), "element [%u, %llu]: orphan "
				 "(a ghost's, read by no version)", l,
				 (unsigned long long)e[i].phys);
			if (fn)
				fn(ctx, l, msg);
			bad++;
		}
	}
	slots_clear(vt, e, n);
	return bad;
}

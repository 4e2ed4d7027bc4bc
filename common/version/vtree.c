/*
 * The version tree (common/version/version.h): labels, tags, ghosts, and the
 * tree edits of snapshot create, implicit child and delete.  Child lists
 * and depths are derived from the parent links after every edit (three
 * passes: count, prefix sums, fill), so the stored form is parent links
 * only and a damaged table cannot make the derived arrays overflow.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "version/version.h"

void vtree_init(struct vtree *vt)
{
	memset(vt, 0, sizeof(*vt));
	vt->v[VERSION_ORIGIN].parent = VERSION_NONE;
	vt->v[VERSION_ORIGIN].flags = VERSION_USED;
	vt->top = 1;
	vt->used = 1;
	vtree_derive(vt);
}

static bool in_tree(const struct vtree *vt, unsigned label)
{
	return (vt->v[label].flags & (VERSION_USED | VERSION_DYING)) ==
	       VERSION_USED;
}

/* Child lists and depths from the parent links.  -EUCLEAN when a used
 * label is not reachable from the origin (a cycle or a detached part):
 * the derived arrays then cover only what is reachable. */
int vtree_derive(struct vtree *vt)
{
	unsigned top = vt->top, pos = 0, reached = 0, head = 0, tail = 0;

	memset(vt->nchild, 0, sizeof(vt->nchild));
	for (unsigned l = 1; l < top; l++) {
		unsigned p = vt->v[l].parent;
		if (in_tree(vt, l) && p < top && p != l && in_tree(vt, p))
			vt->nchild[p]++;
	}
	for (unsigned l = 0; l < top; l++) {
		vt->first[l] = (uint16_t)pos;
		pos += vt->nchild[l];
		vt->nchild[l] = 0;
	}
	for (unsigned l = 1; l < top; l++) {
		unsigned p = vt->v[l].parent;
		if (in_tree(vt, l) && p < top && p != l && in_tree(vt, p))
			vt->child[vt->first[p] + vt->nchild[p]++] = (uint16_t)l;
	}
	/* breadth first from the origin: depths, and what is reachable */
	for (unsigned l = 0; l < top; l++)
		vt->depth[l] = UINT16_MAX;
	vt->depth[VERSION_ORIGIN] = 0;
	vt->stack[tail++] = VERSION_ORIGIN;
	while (head < tail) {
		unsigned l = vt->stack[head++];
		reached++;
		for (unsigned i = 0; i < vt->nchild[l]; i++) {
			unsigned c = vtree_child(vt, l, i);
			if (vt->depth[c] != UINT16_MAX)
				continue;
			vt->depth[c] = (uint16_t)(vt->depth[l] + 1);
			vt->stack[tail++] = (uint16_t)c;
		}
	}
	unsigned want = 0;
	for (unsigned l = 0; l < top; l++)
		want += in_tree(vt, l);
	vt->derived = reached == want;
	return vt->derived ? 0 : -EUCLEAN;
}

int vtree_find_tag(const struct vtree *vt, uint32_t tag)
{
	if (!tag)
		return VERSION_ORIGIN;
	for (unsigned l = 1; l < vt->top; l++)
		if (in_tree(vt, l) && !vtree_ghost(vt, l) &&
		    vt->v[l].tag == tag)
			return (int)l;
	return -ENOENT;
}

bool vtree_alone(const struct vtree *vt)
{
	for (unsigned l = 1; l < vt->top; l++)
		if (vt->v[l].flags)
			return false;
	return true;
}

unsigned vtree_root(struct vtree *vt)
{
	return vt->nchild[VERSION_ORIGIN] ?
	       vtree_child(vt, VERSION_ORIGIN, 0) : VERSION_ORIGIN;
}

/* anc is label or one of its ancestors (O(depth)). */
bool vtree_is_ancestor(struct vtree *vt, unsigned anc, unsigned label)
{
	if (vt->depth[label] == UINT16_MAX || vt->depth[anc] == UINT16_MAX ||
	    vt->depth[label] < vt->depth[anc])
		return false;
	for (unsigned d = vt->depth[label]; d > vt->depth[anc]; d--)
		label = vt->v[label].parent;
	return label == anc;
}

static int new_label(struct vtree *vt)
{
	for (unsigned l = 1; l < VERSION_LABELS; l++) {
		if (vt->v[l].flags)
			continue;
		if (l >= vt->top)
			vt->top = l + 1;
		vt->used++;
		return (int)l;
	}
	return -ENOSPC;
}

int vtree_snapshot(struct vtree *vt, unsigned of, uint32_t tag,
		   int64_t birth_ns)
{
	if (!tag || vtree_find_tag(vt, tag) >= 0)
		return -EEXIST;
	if (of >= vt->top || !in_tree(vt, of) || vtree_ghost(vt, of))
		return -ENOENT;
	int l = new_label(vt);
	if (l < 0)
		return l;
	struct version *v = &vt->v[l];
	*v = (struct version){ .parent = (uint16_t)of, .flags = VERSION_USED,
			       .tag = tag, .birth_ns = birth_ns };
	if (of == VERSION_ORIGIN) {
		/* the new snapshot of the origin becomes the root; the old
		 * root (older origin snapshots) hangs below it */
		unsigned old = vtree_root(vt);
		if (old != VERSION_ORIGIN)
			vt->v[old].parent = (uint16_t)l;
	}
	return vtree_derive(vt) ? -EUCLEAN : l;
}

int vtree_implicit_child(struct vtree *vt, unsigned label, int64_t birth_ns)
{
	if (label == VERSION_ORIGIN || label >= vt->top ||
	    !in_tree(vt, label) || vtree_ghost(vt, label))
		return -EINVAL;
	int c = new_label(vt);
	if (c < 0)
		return c;
	vt->v[c] = (struct version){ .parent = (uint16_t)label,
				     .flags = VERSION_USED,
				     .tag = vt->v[label].tag,
				     .birth_ns = birth_ns };
	memcpy(vt->v[c].name, vt->v[label].name, sizeof(vt->v[c].name));
	vt->v[label].flags |= VERSION_GHOST;
	vt->v[label].tag = 0;
	memset(vt->v[label].name, 0, sizeof(vt->v[label].name));
	vt->ghosts++;
	return vtree_derive(vt) ? -EUCLEAN : c;
}

static void plan_add(struct vdelete_plan *plan, unsigned label,
		     unsigned into)
{
	plan->step[plan->count++] = (struct vdelete_step){
		.label = (uint16_t)label, .into = (uint16_t)into };
}

static void remove_label(struct vtree *vt, unsigned label)
{
	if (vtree_ghost(vt, label))
		vt->ghosts--;
	vt->v[label].flags = VERSION_DYING;
	vt->v[label].tag = 0;
	vt->used--;
	vt->dying++;
}

/* A ghost with fewer than two children goes: removed, or its one child
 * promoted into its place; the plan says what the lists must do. */
static int prune_ghost(struct vtree *vt, unsigned x, struct vdelete_plan *plan)
{
	if (!vt->nchild[x]) {
		plan_add(plan, x, VERSION_NONE);
	} else {
		unsigned c = vtree_child(vt, x, 0);
		plan_add(plan, x, c);
		vt->v[c].parent = vt->v[x].parent;
	}
	remove_label(vt, x);
	return vtree_derive(vt);
}

int vtree_delete(struct vtree *vt, uint32_t tag, struct vdelete_plan *plan)
{
	int found = tag ? vtree_find_tag(vt, tag) : -EINVAL;
	if (found < 0)
		return found;
	unsigned x = (unsigned)found;

	plan->count = 0;
	vt->v[x].flags |= VERSION_GHOST;
	vt->v[x].tag = 0;
	memset(vt->v[x].name, 0, sizeof(vt->v[x].name));
	vt->ghosts++;
	/* a ghost keeps at least two children: a childless one goes (its
	 * parent may then drop to one child), a single child is promoted
	 * into its place (the parent's child count is then unchanged) */
	while (x != VERSION_ORIGIN && vtree_ghost(vt, x) &&
	       vt->nchild[x] < 2) {
		unsigned p = vt->v[x].parent;
		if (prune_ghost(vt, x, plan))
			return -EUCLEAN;
		x = p;
	}
	return 0;
}

int vtree_repair(struct vtree *vt, struct vdelete_plan *plan)
{
	uint32_t next = 1;
	plan->count = 0;
	if (vtree_derive(vt))
		return -EUCLEAN;
	/* a tag used twice: the later labels get fresh ones */
	for (unsigned l = 1; l < vt->top; l++)
		if (vtree_used(vt, l) && vt->v[l].tag >= next)
			next = vt->v[l].tag + 1;
	for (unsigned l = 1; l < vt->top; l++) {
		if (!vtree_used(vt, l) || vtree_ghost(vt, l))
			continue;
		for (unsigned k = 1; k < l; k++)
			if (vtree_used(vt, k) && !vtree_ghost(vt, k) &&
			    vt->v[k].tag == vt->v[l].tag) {
				vt->v[l].tag = next++;
				break;
			}
	}
	/* a ghost with fewer than two children goes, as a delete leaves
	 * it: removed, or its one child promoted into its place */
	for (bool again = true; again;) {
		again = false;
		for (unsigned x = 1; x < vt->top; x++) {
			if (!vtree_used(vt, x) || !vtree_ghost(vt, x) ||
			    vt->nchild[x] >= 2)
				continue;
			if (prune_ghost(vt, x, plan))
				return -EUCLEAN;
			again = true;
		}
	}
	return 0;
}

void vtree_delete_done(struct vtree *vt, const struct vdelete_plan *plan)
{
	vt->pending = NULL;
	for (unsigned i = 0; i < plan->count; i++) {
		struct version *v = &vt->v[plan->step[i].label];
		if (v->flags == VERSION_DYING) {
			memset(v, 0, sizeof(*v));
			vt->dying--;
		}
	}
	while (vt->top > 1 && !vt->v[vt->top - 1].flags)
		vt->top--;
}

static unsigned report(vcheck_fn fn, void *ctx, unsigned label,
		       const char *fmt, unsigned a, unsigned b)
{
	char msg[160];
	snprintf(msg, sizeof(msg), fmt, a, b);
	if (fn)
		fn(ctx, label, msg);
	return 1;
}

/* VT1-VT4 of doc/format.md section 17, from the parent links alone. */
unsigned vtree_check(struct vtree *vt, vcheck_fn fn, void *ctx)
{
	unsigned bad = 0, top = vt->top, tagged = 0, ghosts = 0;
	const struct version *o = &vt->v[VERSION_ORIGIN];

	if (!(o->flags & VERSION_USED) || (o->flags & VERSION_GHOST) ||
	    o->parent != VERSION_NONE)
		bad += report(fn, ctx, 0, "label 0 (origin): flags %#x, parent "
			      "%u: must be used, not a ghost, no parent",
			      o->flags, o->parent);
	vtree_derive(vt);
	if (vt->nchild[VERSION_ORIGIN] > 1)
		bad += report(fn, ctx, 0, "label 0 (origin) has %u children "
			      "(at most 1; the first is %u)",
			      vt->nchild[VERSION_ORIGIN], vtree_root(vt));
	for (unsigned l = 1; l < top; l++) {
		const struct version *v = &vt->v[l];
		if (!in_tree(vt, l))
			continue;
		if (v->parent >= top || v->parent == l ||
		    !in_tree(vt, v->parent))
			bad += report(fn, ctx, l, "label %u: parent %u is not "
				      "a used label", l, v->parent);
		else if (vt->depth[l] == UINT16_MAX)
			bad += report(fn, ctx, l, "label %u: not reachable from "
				      "the origin (cycle or detached, parent "
				      "%u)", l, v->parent);
		if (vtree_ghost(vt, l)) {
			ghosts++;
			if (v->tag)
				bad += report(fn, ctx, l, "label %u: ghost with "
					      "tag %u", l, v->tag);
			if (vt->nchild[l] < 2)
				bad += report(fn, ctx, l, "label %u: a ghost "
					      "with fewer than two children "
					      "(%u)", l, vt->nchild[l]);
		} else {
			tagged++;
			if (!v->tag)
				bad += report(fn, ctx, l, "label %u: snapshot "
					      "without a tag (parent %u)", l,
					      v->parent);
			for (unsigned k = 1; k < l; k++)
				if (in_tree(vt, k) && !vtree_ghost(vt, k) &&
				    vt->v[k].tag == v->tag && v->tag)
					bad += report(fn, ctx, l, "label %u: tag "
						      "also on label %u", l, k);
		}
	}
	(void)tagged;
	(void)ghosts;
	return bad;
}

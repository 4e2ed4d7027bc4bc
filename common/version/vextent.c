/*
 * Versioned extents (common/version/version.h): a set of [logical, count, label,
 * phys] records edited segment by segment.  A segment is a run of logical
 * blocks covered by the same records, so every block in it has the same
 * element list up to an offset in phys: the single-address rules of
 * velist.c decide once per segment, and the records are rebuilt from the
 * decisions, then sorted and merged.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "version/version.h"

static int cmp_label_logical(const void *a, const void *b)
{
	const struct vextent *x = a, *y = b;
	if (x->label != y->label)
		return x->label < y->label ? -1 : 1;
	return x->logical < y->logical ? -1 : x->logical > y->logical;
}

static int cmp_logical_label(const void *a, const void *b)
{
	const struct vextent *x = a, *y = b;
	if (x->logical != y->logical)
		return x->logical < y->logical ? -1 : 1;
	return x->label < y->label ? -1 : x->label > y->label;
}

static bool joins(const struct vextent *a, const struct vextent *b)
{
	if (a->label != b->label || a->logical + a->count != b->logical ||
	    (uint64_t)a->count + b->count > UINT16_MAX)
		return false;
	return a->phys ? a->phys + a->count == b->phys : !b->phys;
}

/* Sort, join neighbours of one label, sort back into (logical, label). */
static unsigned merge(struct vextent *r, unsigned n)
{
	unsigned out = 0;
	qsort(r, n, sizeof(*r), cmp_label_logical);
	for (unsigned i = 0; i < n; i++) {
		if (out && joins(&r[out - 1], &r[i]))
			r[out - 1].count += r[i].count;
		else
			r[out++] = r[i];
	}
	qsort(r, out, sizeof(*r), cmp_logical_label);
	return out;
}

/* The element list at logical (records covering it), with the index of
 * the record each element comes from. */
static unsigned elements_at(const struct vextents *x, uint64_t logical,
			    struct velem *e, unsigned cap)
{
	unsigned m = 0;
	for (unsigned i = 0; i < x->n && x->r[i].logical <= logical; i++) {
		const struct vextent *r = &x->r[i];
		if (logical >= r->logical + r->count || m == cap)
			continue;
		e[m].label = r->label;
		e[m].phys = r->phys ? r->phys + (logical - r->logical) : 0;
		m++;
	}
	return m;
}

uint64_t vext_read(struct vtree *vt, const struct vextents *x,
		   unsigned label, uint64_t logical)
{
	struct velem e[VERSION_LABELS];
	unsigned m = elements_at(x, logical, e, VERSION_LABELS);
	int i = velist_read(vt, e, m, label);
	return i < 0 ? 0 : e[i].phys;
}

/* The next segment boundary after pos below hi: a record start or end. */
static uint64_t next_boundary(const struct vextents *x, uint64_t pos,
			      uint64_t hi)
{
	uint64_t next = hi;
	for (unsigned i = 0; i < x->n; i++) {
		const struct vextent *r = &x->r[i];
		if (r->logical > pos && r->logical < next)
			next = r->logical;
		if (r->logical + r->count > pos && r->logical + r->count < next)
			next = r->logical + r->count;
	}
	return next;
}

struct rebuild {
	struct vextent *out;
	unsigned n, cap;
};

static int emit(struct rebuild *b, uint64_t logical, uint64_t count,
		unsigned label, uint64_t phys)
{
	while (count) {
		uint32_t c = count > UINT16_MAX ? UINT16_MAX : (uint32_t)count;
		if (b->n == b->cap)
			return -ENOSPC;
		b->out[b->n++] = (struct vextent){ .logical = logical,
			.count = c, .label = (uint16_t)label, .phys = phys };
		logical += c;
		phys = phys ? phys + c : 0;
		count -= c;
	}
	return 0;
}

/* The parts of every record outside [lo, hi), kept as they are. */
static int keep_outside(const struct vextents *x, uint64_t lo, uint64_t hi,
			struct rebuild *b)
{
	for (unsigned i = 0; i < x->n; i++) {
		const struct vextent *r = &x->r[i];
		uint64_t end = r->logical + r->count;
		int err = 0;
		if (r->logical < lo)
			err = emit(b, r->logical, (end < lo ? end : lo) -
				   r->logical, r->label, r->phys);
		if (!err && end > hi) {
			uint64_t from = r->logical > hi ? r->logical : hi;
			err = emit(b, from, end - from, r->label, r->phys ?
				   r->phys + (from - r->logical) : 0);
		}
		if (err)
			return err;
	}
	return 0;
}

static int finish(struct vextents *x, struct rebuild *b)
{
	unsigned n = merge(b->out, b->n);
	if (n > x->cap)
		return -ENOSPC;
	memcpy(x->r, b->out, n * sizeof(*x->r));
	x->n = n;
	return 0;
}

/* Room for the rebuilt set: every record can split in three around the
 * range, and each segment adds at most one element per label. */
static int rebuild_init(struct rebuild *b, const struct vextents *x,
			uint64_t count)
{
	size_t cap = (size_t)x->n * 3 + 2 * (size_t)(x->n + 1) *
		     (x->n + 2) + count + 16;
	b->out = malloc(cap * sizeof(*b->out));
	b->n = 0;
	b->cap = cap > UINT32_MAX ? UINT32_MAX : (unsigned)cap;
	return b->out ? 0 : -ENOMEM;
}

/* Frees decided while rebuilding, applied only once the new set is in. */
struct pending_free {
	struct { uint64_t phys, len; } *v;
	unsigned n, cap;
};

static int defer_free(struct pending_free *f, uint64_t phys, uint64_t len)
{
	if (f->n == f->cap) {
		unsigned cap = f->cap ? f->cap * 2 : 16;
		void *v = realloc(f->v, cap * sizeof(*f->v));
		if (!v)
			return -ENOMEM;
		f->v = v;
		f->cap = cap;
	}
	f->v[f->n].phys = phys;
	f->v[f->n++].len = len;
	return 0;
}

/* One segment [pos, pos + len) of an update, its element list decided
 * by velist_write (w: the writer's element, or -ENOENT). */
static int update_segment(struct vtree *vt, struct rebuild *b,
			  struct pending_free *f, struct velem *e, unsigned m,
			  int w, unsigned label, enum vext_mode mode,
			  uint64_t pos, uint64_t len, valloc_fn alloc,
			  void *ctx, uint64_t *written)
{
	int err = 0;
	uint64_t old = w >= 0 ? e[w].phys : 0;

	if (mode == VEXT_PUNCH) {
		/* the writer's element becomes a hole; one that repeats
		 * an inherited hole goes (velist_normalize) */
		if (old)
			err = defer_free(f, old, len);
		if (w >= 0)
			e[w].phys = 0;
		else if (velist_add(e, &m, VERSION_LABELS, label, 0) < 0)
			return -ENOSPC;
		velist_normalize(vt, e, &m, NULL, NULL);
		for (unsigned k = 0; k < m && !err; k++)
			err = emit(b, pos, len, e[k].label, e[k].phys);
		for (uint64_t i = 0; i < len; i++)
			written[i] = 0;
		return err;
	}
	/* every other element stays, perhaps relabelled */
	for (unsigned k = 0; k < m && !err; k++)
		if ((int)k != w)
			err = emit(b, pos, len, e[k].label, e[k].phys);
	if (err)
		return err;
	if (old && mode == VEXT_IN_PLACE) {
		for (uint64_t i = 0; i < len; i++)
			written[i] = old + i;
		return emit(b, pos, len, label, old);
	}
	if (old && (err = defer_free(f, old, len)))
		return err;
	for (uint64_t i = 0; i < len && !err; i++) {
		uint64_t p = alloc(ctx);
		if (!p)
			return -ENOSPC;
		written[i] = p;
		err = emit(b, pos + i, 1, label, p);
	}
	return err;
}

int vext_update(struct vtree *vt, struct vextents *x, unsigned *label,
		uint64_t logical, uint32_t count, enum vext_mode mode,
		valloc_fn alloc, vfree_fn free_fn, void *ctx,
		uint64_t *written, int64_t birth_ns)
{
	struct velem e[VERSION_LABELS];
	struct pending_free f = { 0 };
	struct rebuild b;
	uint64_t hi = logical + count;
	int err;

	if (!count || count > VEXT_WRITE_MAX)
		return -EINVAL;
	if ((err = rebuild_init(&b, x, count)))
		return err;
	if ((err = keep_outside(x, logical, hi, &b)))
		goto out;
	for (uint64_t pos = logical; pos < hi;) {
		uint64_t end = next_boundary(x, pos, hi), len = end - pos;
		unsigned m = elements_at(x, pos, e, VERSION_LABELS);
		int w = velist_write(vt, e, &m, VERSION_LABELS, label,
				     birth_ns);
		if (w < 0 && w != -ENOENT) {
			err = w;
			goto out;
		}
		err = update_segment(vt, &b, &f, e, m, w, *label, mode, pos,
				     len, alloc, ctx, written + (pos - logical));
		if (err)
			goto out;
		pos = end;
	}
	if ((err = finish(x, &b)))
		goto out;
	for (unsigned i = 0; i < f.n && free_fn; i++)
		for (uint64_t k = 0; k < f.v[i].len; k++)
			free_fn(ctx, f.v[i].phys + k);
out:
	free(f.v);
	free(b.out);
	return err;
}

int vext_write(struct vtree *vt, struct vextents *x, unsigned *label,
	       uint64_t logical, uint32_t count, valloc_fn alloc,
	       void *ctx, uint64_t *written, int64_t birth_ns)
{
	return vext_update(vt, x, label, logical, count, VEXT_IN_PLACE, alloc,
			   NULL, ctx, written, birth_ns);
}

/* One list operation applied to every segment's list, the records
 * rebuilt; blocks of elements that went are freed block by block. */
typedef unsigned (*list_op)(struct vtree *vt, const void *arg,
			    struct velem *e, unsigned *n);

static int transform(struct vtree *vt, struct vextents *x, list_op op,
		     const void *arg, vfree_fn free_fn, void *ctx)
{
	struct velem e[VERSION_LABELS];
	struct rebuild b;
	uint64_t lo = UINT64_MAX, hi = 0;
	int err;

	for (unsigned i = 0; i < x->n; i++) {
		if (x->r[i].logical < lo)
			lo = x->r[i].logical;
		if (x->r[i].logical + x->r[i].count > hi)
			hi = x->r[i].logical + x->r[i].count;
	}
	if (!x->n)
		return 0;
	if ((err = rebuild_init(&b, x, 0)))
		return err;
	for (uint64_t pos = lo; pos < hi && !err;) {
		uint64_t end = next_boundary(x, pos, hi), len = end - pos;
		unsigned m = elements_at(x, pos, e, VERSION_LABELS);
		struct velem before[VERSION_LABELS];
		unsigned m0 = m;
		memcpy(before, e, m * sizeof(*e));
		op(vt, arg, e, &m);
		for (unsigned k = 0; k < m0; k++) {
			bool kept = false;
			for (unsigned j = 0; j < m && !kept; j++)
				kept = e[j].phys == before[k].phys &&
				       before[k].phys;
			if (!kept && before[k].phys && free_fn)
				for (uint64_t i = 0; i < len; i++)
					free_fn(ctx, before[k].phys + i);
		}
		for (unsigned k = 0; k < m && !err; k++)
			err = emit(&b, pos, len, e[k].label, e[k].phys);
		pos = end;
	}
	if (!err)
		err = finish(x, &b);
	free(b.out);
	return err;
}

static unsigned delete_op(struct vtree *vt, const void *plan,
			  struct velem *e, unsigned *n)
{
	return velist_delete(vt, plan, e, n, NULL, NULL);
}

int vext_delete(struct vtree *vt, const struct vdelete_plan *plan,
		struct vextents *x, vfree_fn free_fn, void *ctx)
{
	return transform(vt, x, delete_op, plan, free_fn, ctx);
}

static unsigned repair_op(struct vtree *vt, const void *arg,
			  struct velem *e, unsigned *n)
{
	(void)arg;
	return velist_repair(vt, e, n, NULL, NULL);
}

int vext_repair(struct vtree *vt, struct vextents *x, vfree_fn free_fn,
		void *ctx)
{
	/* the segment sweep wants records in order, none empty */
	unsigned out = 0;
	for (unsigned i = 0; i < x->n; i++)
		if (x->r[i].count)
			x->r[out++] = x->r[i];
	x->n = out;
	qsort(x->r, x->n, sizeof(*x->r), cmp_logical_label);
	return transform(vt, x, repair_op, NULL, free_fn, ctx);
}

unsigned vext_check(struct vtree *vt, const struct vextents *x,
		    vcheck_fn fn, void *ctx)
{
	struct velem e[VERSION_LABELS];
	unsigned bad = 0;
	for (unsigned i = 0; i < x->n; i++) {
		const struct vextent *r = &x->r[i];
		if (!r->count || (i && cmp_logical_label(&x->r[i - 1], r) >= 0)) {
			if (fn)
				fn(ctx, r->label, "record empty or out of order");
			bad++;
		}
	}
	if (bad)
		return bad;
	/* element lists change only at record boundaries */
	for (unsigned i = 0; i < x->n; i++) {
		uint64_t at[2] = { x->r[i].logical,
				   x->r[i].logical + x->r[i].count - 1 };
		for (unsigned k = 0; k < (at[0] == at[1] ? 1u : 2u); k++) {
			unsigned m = elements_at(x, at[k], e, VERSION_LABELS);
			bad += velist_check(vt, e, m, fn, ctx);
		}
	}
	return bad;
}

void vext_exclusive(struct vtree *vt, const struct vextents *x,
		    uint64_t *exclusive)
{
	struct velem e[VERSION_LABELS];
	if (!x->n)
		return;
	uint64_t pos = x->r[0].logical, hi = 0;
	for (unsigned i = 0; i < x->n; i++)
		if (x->r[i].logical + x->r[i].count > hi)
			hi = x->r[i].logical + x->r[i].count;
	while (pos < hi) {
		uint64_t next = next_boundary(x, pos, hi);
		unsigned m = elements_at(x, pos, e, VERSION_LABELS);
		for (unsigned i = 0; i < m; i++) {
			int r = e[i].phys ? velist_sole_reader(vt, e, m, i) : -1;
			if (r >= 0)
				exclusive[r] += next - pos;
		}
		pos = next;
	}
}

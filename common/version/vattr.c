/*
 * Versioned attributes (common/version/version.h): the attributes of every
 * version in one inode blob.  Each key (an attribute kind; an xattr's
 * atom) is one element list whose elements are attributes: an element's
 * phys is the attribute's index + 1, never 0, and an ABSENT marker is an
 * attribute with the absent flag, so that velist.c's rules decide which
 * attribute a version reads and which one a write may take over, and this
 * file only maps the lists back onto the attributes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "format/format.h"
#include "version/version.h"

/* Payload sizes of the fixed kinds (-1: no such kind; 0: length-prefixed:
 * IDATA and XATTR). */
static const int kind_size[16] = {
	[0] = 8, [1] = 12, [2] = 8, [3] = 16, [4] = 4, [5] = 8,
	[6] = -1, [7] = -1, [8] = -1, [9] = -1, [VATTR_ABSENT] = 4,
	[11] = 0, [12] = 0, [13] = -1, [14] = -1, [ATTR_ATIME] = 8,
};
#define KIND_XATTR	12

void vattrs_free(struct vattrs *x)
{
	for (unsigned i = 0; i < x->n; i++)
		free(x->a[i].data);
	free(x->a);
	memset(x, 0, sizeof(*x));
}

static int add(struct vattrs *x, uint32_t key, unsigned label, bool absent,
	       const void *data, unsigned len)
{
	if (x->n == x->cap) {
		unsigned cap = x->cap ? x->cap * 2 : 16;
		if (cap > VATTR_MAX)
			cap = VATTR_MAX;
		if (x->n == cap)
			return -ENOSPC;
		void *a = realloc(x->a, cap * sizeof(*x->a));
		if (!a)
			return -ENOMEM;
		x->a = a;
		x->cap = cap;
	}
	struct vattr *v = &x->a[x->n];
	*v = (struct vattr){ .key = key, .label = (uint16_t)label,
			     .absent = absent, .len = (uint16_t)len };
	if (len && !(v->data = malloc(len)))
		return -ENOMEM;
	if (len)
		memcpy(v->data, data, len);
	x->n++;
	return (int)x->n - 1;
}

static void remove_at(struct vattrs *x, unsigned i)
{
	free(x->a[i].data);
	memmove(x->a + i, x->a + i + 1, (x->n - i - 1) * sizeof(*x->a));
	x->n--;
}

static int find(const struct vattrs *x, uint32_t key, unsigned label)
{
	for (unsigned i = 0; i < x->n; i++)
		if (x->a[i].key == key && x->a[i].label == label)
			return (int)i;
	return -1;
}

/* Two attributes of one (key, label): through a hash set, not pairwise
 * (an inode with a spill holds thousands, and every load decodes it). */
static bool has_twice(const struct vattrs *x)
{
	if (x->n < 2)
		return false;
	unsigned size = 64;
	while (size < 2 * x->n)
		size *= 2;
	uint64_t *set = x->n > 16 ? calloc(size, sizeof(*set)) : NULL;
	if (!set) {
		for (unsigned i = 1; i < x->n; i++)
			if (find(x, x->a[i].key, x->a[i].label) < (int)i)
				return true;
		return false;
	}
	bool twice = false;
	for (unsigned i = 0; i < x->n && !twice; i++) {
		/* + 1: never 0, the empty slot */
		uint64_t k = ((uint64_t)x->a[i].key << 16 | x->a[i].label) + 1;
		unsigned h = (unsigned)((k * 0x9e3779b97f4a7c15ull) >> 40);
		for (unsigned j = h & (size - 1);; j = (j + 1) & (size - 1)) {
			if (!set[j]) {
				set[j] = k;
				break;
			}
			if (set[j] == k) {
				twice = true;
				break;
			}
		}
	}
	free(set);
	return twice;
}

bool vattrs_plain(const uint8_t *blob, unsigned len)
{
	for (unsigned off = 0; off < len;) {
		if (len - off < 2)
			return false;
		unsigned head = be16(blob + off), kind = head >> 12;
		int fixed = kind_size[kind];
		if ((head & 0xfff) || kind == VATTR_ABSENT || fixed < 0)
			return false;
		unsigned size = (unsigned)fixed;
		if (!fixed) {
			if (len - off < 4)
				return false;
			size = 2 + be16(blob + off + 2);
		}
		if (len - off - 2 < size)
			return false;
		off += 2 + size;
	}
	return true;
}

uint64_t vattrs_dtree(const struct vattrs *x)
{
	for (unsigned i = 0; i < x->n; i++) {
		const struct vattr *a = &x->a[i];
		if (a->key == VATTR_KEY(ATTR_DATA_BTREE, 0) && !a->label &&
		    !a->absent && a->len == 8)
			return be64(a->data);
	}
	return 0;
}

int vattrs_labels(const uint8_t *blob, unsigned len,
		  int (*fn)(void *ctx, unsigned label), void *ctx)
{
	for (unsigned off = 0; off < len;) {
		if (len - off < 2)
			return -EUCLEAN;
		unsigned head = be16(blob + off), kind = head >> 12;
		int fixed = kind_size[kind];
		if (fixed < 0)
			return -EUCLEAN;
		unsigned size = (unsigned)fixed;
		if (!fixed) {
			if (len - off < 4)
				return -EUCLEAN;
			size = 2 + be16(blob + off + 2);
		}
		if (len - off - 2 < size)
			return -EUCLEAN;
		if (head & 0xfff) {
			int err = fn(ctx, head & 0xfff);
			if (err)
				return err;
		}
		off += 2 + size;
	}
	return 0;
}

/* each: look for an earlier attribute of the same (key, label) at each
 * one, which names the second; else the caller checks once at the end */
static int decode_all(const uint8_t *blob, unsigned len, struct vattrs *out,
		      unsigned *bad_at, bool each)
{
	memset(out, 0, sizeof(*out));
	for (unsigned off = 0; off < len;) {
		*bad_at = off;
		if (len - off < 2)
			goto bad;
		unsigned head = be16(blob + off), kind = head >> 12;
		unsigned label = head & 0xfff, atom = 0, size;
		int fixed = kind_size[kind];
		const uint8_t *p = blob + off + 2;
		bool absent = kind == VATTR_ABSENT;
		if (fixed < 0)
			goto bad;
		if (fixed) {
			size = (unsigned)fixed;
			if (len - off - 2 < size)
				goto bad;
		} else {
			if (len - off < 4)
				goto bad;
			size = be16(p);
			p += 2;
			off += 2;
			if (len - off - 2 < size ||
			    (kind == KIND_XATTR && size < 2))
				goto bad;
		}
		uint32_t key = VATTR_KEY(kind, 0);
		if (absent) {
			if (kind_size[be16(p) & 15] < 0 || be16(p) > 15 ||
			    be16(p) == VATTR_ABSENT ||
			    (be16(p) != KIND_XATTR && be16(p + 2)))
				goto bad;
			key = VATTR_KEY(be16(p), be16(p + 2));
			size = 4;
		} else if (kind == KIND_XATTR) {
			atom = be16(p);
			key = VATTR_KEY(kind, atom);
			p += 2;
			size -= 2;
			off += 2;
		}
		if (each && find(out, key, label) >= 0)
			goto bad;
		int r = add(out, key, label, absent, absent ? NULL : p,
			    absent ? 0 : size);
		if (r < 0) {
			vattrs_free(out);
			return r;
		}
		off += 2 + size;
	}
	return 0;
bad:
	vattrs_free(out);
	return -EUCLEAN;
}

int vattrs_decode(const uint8_t *blob, unsigned len, struct vattrs *out,
		  unsigned *bad_at)
{
	int err = decode_all(blob, len, out, bad_at, false);
	if (!err && has_twice(out)) {
		/* again, slowly, to name the attribute that repeats */
		vattrs_free(out);
		err = decode_all(blob, len, out, bad_at, true);
		if (!err) {
			vattrs_free(out);
			err = -EUCLEAN;
		}
	}
	return err;
}

static int put(const struct vattr *v, uint8_t *blob, unsigned cap,
	       unsigned *off)
{
	unsigned kind = v->key >> 16, atom = v->key & 0xffff;
	unsigned need = 2 + (v->absent ? 4 : kind == KIND_XATTR ? 4 + v->len :
			     kind == 11 ? 2 + v->len : v->len);
	if (cap - *off < need)
		return -ENOSPC;
	uint8_t *p = blob + *off;
	if (v->absent) {
		put_be16(p, (uint16_t)(VATTR_ABSENT << 12 | v->label));
		put_be16(p + 2, (uint16_t)kind);
		put_be16(p + 4, (uint16_t)atom);
	} else {
		put_be16(p, (uint16_t)(kind << 12 | v->label));
		p += 2;
		if (kind == KIND_XATTR) {
			put_be16(p, (uint16_t)(v->len + 2));
			put_be16(p + 2, (uint16_t)atom);
			p += 4;
		} else if (kind == 11) {
			put_be16(p, v->len);
			p += 2;
		}
		if (v->len)
			memcpy(p, v->data, v->len);
	}
	*off += need;
	return 0;
}

/* Label 0 first as the 2014 format orders it (fixed kinds ascending, then
 * xattrs in the order they were set), then every other label in turn. */
int vattrs_encode(const struct vattrs *in, uint8_t *blob, unsigned cap)
{
	unsigned off = 0;
	int err = 0;
	/* kinds 0-11, then ATIME (15): the order iattr_encode_fixed gives
	 * (no writer puts IDATA, 11, between them) */
	for (unsigned kind = 0; kind < 16 && !err;
	     kind = kind == 11 ? ATTR_ATIME : kind + 1)
		for (unsigned i = 0; i < in->n && !err; i++)
			if (!in->a[i].label && !in->a[i].absent &&
			    in->a[i].key == VATTR_KEY(kind, 0))
				err = put(&in->a[i], blob, cap, &off);
	for (unsigned i = 0; i < in->n && !err; i++)
		if (!in->a[i].label && (in->a[i].absent ||
		    in->a[i].key >> 16 == KIND_XATTR))
			err = put(&in->a[i], blob, cap, &off);
	/* then each other label, in label order, each label's attributes
	 * in array order: a counting sort by label */
	unsigned *start = NULL, *order = NULL;
	bool labelled = false;
	for (unsigned i = 0; i < in->n && !labelled; i++)
		labelled = in->a[i].label != 0;
	if (!err && labelled && (!(start = calloc(VERSION_LABELS + 1,
					       sizeof(*start))) ||
			      !(order = malloc(in->n * sizeof(*order)))))
		err = -ENOMEM;
	unsigned m = 0;
	if (!err && start) {
		for (unsigned i = 0; i < in->n; i++)
			if (in->a[i].label && in->a[i].label < VERSION_LABELS)
				start[in->a[i].label + 1]++;
		for (unsigned l = 1; l <= VERSION_LABELS; l++)
			start[l] += start[l - 1];
		m = start[VERSION_LABELS];
		for (unsigned i = 0; i < in->n; i++)
			if (in->a[i].label && in->a[i].label < VERSION_LABELS)
				order[start[in->a[i].label]++] = i;
	}
	for (unsigned k = 0; k < m && !err; k++)
		err = put(&in->a[order[k]], blob, cap, &off);
	free(start);
	free(order);
	return err ? err : (int)off;
}

/* The element list of key: phys = index + 1. */
static unsigned elements(const struct vattrs *x, uint32_t key,
			 struct velem *e)
{
	unsigned m = 0;
	for (unsigned i = 0; i < x->n; i++)
		if (x->a[i].key == key)
			e[m++] = (struct velem){ .label = x->a[i].label,
						 .phys = i + 1 };
	return m;
}

const struct vattr *vattrs_get(struct vtree *vt, const struct vattrs *x,
			       unsigned label, uint32_t key)
{
	struct velem e[VERSION_LABELS];
	unsigned m = elements(x, key, e);
	int i = velist_read(vt, e, m, label);
	if (i < 0 || x->a[e[i].phys - 1].absent)
		return NULL;
	return &x->a[e[i].phys - 1];
}

int vattrs_set(struct vtree *vt, struct vattrs *x, unsigned *label,
	       uint32_t key, const void *data, unsigned len, int64_t birth_ns)
{
	struct velem e[VERSION_LABELS];
	unsigned m0 = elements(x, key, e), m = m0;
	int w = velist_write(vt, e, &m, VERSION_LABELS, label, birth_ns);

	if (w < 0 && w != -ENOENT)
		return w;
	/* what the rule relabelled, and holes it recorded for the root */
	for (unsigned k = 0; k < m; k++) {
		if (k < m0) {
			x->a[e[k].phys - 1].label = e[k].label;
			continue;
		}
		int r = add(x, key, e[k].label, true, NULL, 0);
		if (r < 0)
			return r;
	}
	if (w >= 0) {
		unsigned i = (unsigned)(e[w].phys - 1);
		struct vattr *v = &x->a[i];
		if (!data && !v->label) {
			remove_at(x, i);	/* the origin, read by no one */
			return 0;
		}
		uint8_t *copy = len ? malloc(len) : NULL;
		if (len && !copy)
			return -ENOMEM;
		if (len)
			memcpy(copy, data, len);
		free(v->data);
		v->data = copy;
		v->len = (uint16_t)len;
		v->absent = !data;
		v->label = (uint16_t)*label;
		return 0;
	}
	if (!data && !*label)
		return 0;	/* the origin has none: nothing to write */
	int r = add(x, key, *label, !data, data, data ? len : 0);
	return r < 0 ? r : 0;
}

int vattrs_set_shared(struct vattrs *x, uint32_t key, const void *data,
		      unsigned len)
{
	for (unsigned i = x->n; i-- > 0;)
		if (x->a[i].key == key)
			remove_at(x, i);
	if (!data)
		return 0;
	int r = add(x, key, 0, false, data, len);
	return r < 0 ? r : 0;
}

/* Does any readable version (the origin, a tagged snapshot) read the
 * inode?  Ghosts and dying labels read nothing of their own. */
bool vattrs_inode_live(struct vtree *vt, const struct vattrs *x)
{
	for (unsigned l = 0; l < vt->top; l++)
		if (vtree_used(vt, l) && !vtree_ghost(vt, l) &&
		    !(vt->v[l].flags & VERSION_DYING) &&
		    vattrs_get(vt, x, l, VATTR_KEY(1, 0)))
			return true;
	return false;
}

bool vattrs_inode_dying(struct vtree *vt, const struct vattrs *x)
{
	/* the element itself: reads follow the plan (vt->pending), which
	 * has already taken it */
	for (unsigned i = 0; i < x->n; i++)
		if (x->a[i].key == VATTR_KEY(1, 0) && !x->a[i].absent &&
		    x->a[i].label < VERSION_LABELS &&
		    (vt->v[x->a[i].label].flags & VERSION_DYING))
			return true;
	return false;
}

struct gone {
	unsigned *idx;
	unsigned n;
};

static void note_gone(void *ctx, uint64_t phys)
{
	struct gone *g = ctx;
	g->idx[g->n++] = (unsigned)(phys - 1);
}

static int cmp_desc(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return x > y ? -1 : x < y;
}

/* Every key's list reworked: by a delete's plan (plan set, relabelling
 * what heirs inherit) or by fsck's repair; the attributes whose elements
 * went are removed.  Returns how many went, or -ENOMEM. */
static int rework_lists(struct vtree *vt, const struct vdelete_plan *plan,
			struct vattrs *x)
{
	struct velem e[VERSION_LABELS];
	struct gone g = { .idx = malloc((x->n + 1) * sizeof(unsigned)) };
	if (!g.idx)
		return -ENOMEM;
	/* each key once: the first attribute of it in array order */
	for (unsigned i = 0; i < x->n; i++) {
		bool first = true;
		for (unsigned j = 0; j < i && first; j++)
			first = x->a[j].key != x->a[i].key;
		if (!first)
			continue;
		unsigned m = elements(x, x->a[i].key, e);
		if (plan)
			velist_delete(vt, plan, e, &m, note_gone, &g);
		else
			velist_repair(vt, e, &m, note_gone, &g);
		for (unsigned k = 0; k < m; k++)
			x->a[e[k].phys - 1].label = e[k].label;
	}
	qsort(g.idx, g.n, sizeof(*g.idx), cmp_desc);
	for (unsigned k = 0; k < g.n; k++)
		remove_at(x, g.idx[k]);
	free(g.idx);
	return (int)g.n;
}

int vattrs_delete(struct vtree *vt, const struct vdelete_plan *plan,
		  struct vattrs *x)
{
	int n = rework_lists(vt, plan, x);
	return n < 0 ? n : 0;
}

unsigned vattrs_repair(struct vtree *vt, struct vattrs *x)
{
	int n = rework_lists(vt, NULL, x);
	return n < 0 ? 0 : (unsigned)n;
}

unsigned vattrs_check(struct vtree *vt, const struct vattrs *x,
		      vcheck_fn fn, void *ctx)
{
	struct velem e[VERSION_LABELS];
	unsigned bad = 0;
	for (unsigned i = 0; i < x->n; i++) {
		bool first = true;
		for (unsigned j = 0; j < i && first; j++)
			first = x->a[j].key != x->a[i].key;
		if (!first)
			continue;
		unsigned m = elements(x, x->a[i].key, e);
		bad += velist_check(vt, e, m, fn, ctx);
	}
	return bad;
}

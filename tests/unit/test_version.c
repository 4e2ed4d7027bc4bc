/*
 * Layer: vtree.c, velist.c -- versioned pointers against a per-block
 * reference model (the seed's fuzz test, over many addresses).
 *
 * Each step creates a snapshot (of the origin or of a snapshot), deletes
 * one, or writes one address of the origin or of a snapshot; then every
 * version reads every address and must see what the model says, and the
 * invariants hold: the version table's (VT1-VT4: label 0 rules, parents,
 * no cycle, ghost <=> no tag, tags unique, every ghost has two children),
 * every list's (valid labels, one element per label, no orphan), and the
 * blocks' (every block allocated is owned by exactly one element; no
 * leak).  TUX3_FUZZ_VERSIONS=N runs N steps per seed in the long case
 * (make fuzz-versions).
 */
#include <errno.h>
#include <stdlib.h>
#include "harness.h"
#include "tux3.h"
#include "format/endian.h"
#include "version/version.h"

#define NADDR	12
#define MAXSNAP	40
#define NBLOCKS	(NADDR * VERSION_LABELS + 16)

struct model {
	struct vtree vt;
	struct velem list[NADDR][VERSION_LABELS];
	unsigned n[NADDR];
	/* tagged versions: the origin (tag 0) first */
	uint32_t tag[MAXSNAP + 1];
	uint32_t expect[MAXSNAP + 1][NADDR];	/* 0: a hole */
	unsigned ntag;
	uint32_t nexttag, nextdata;
	/* the block store */
	uint32_t data[NBLOCKS];
	uint8_t allocated[NBLOCKS];
	unsigned nalloc;
	uint64_t rng;
	unsigned long steps, creates, deletes, writes, implicit, relabels;
};

static unsigned rnd(struct model *m, unsigned n)
{
	m->rng ^= m->rng << 13;
	m->rng ^= m->rng >> 7;
	m->rng ^= m->rng << 17;
	return (unsigned)((m->rng >> 11) % n);
}

static uint64_t alloc_block(struct model *m)
{
	for (unsigned tries = 0; tries < NBLOCKS; tries++) {
		uint64_t b = 1 + rnd(m, NBLOCKS - 1);
		if (!m->allocated[b]) {
			m->allocated[b] = 1;
			m->nalloc++;
			return b;
		}
	}
	for (uint64_t b = 1; b < NBLOCKS; b++)
		if (!m->allocated[b]) {
			m->allocated[b] = 1;
			m->nalloc++;
			return b;
		}
	CHECK(!"block store full");
	return 0;
}

static void free_block(void *ctx, uint64_t phys)
{
	struct model *m = ctx;
	CHECK(phys > 0 && phys < NBLOCKS);
	CHECK(m->allocated[phys]);
	m->allocated[phys] = 0;
	m->nalloc--;
}

static void fail_check(void *ctx, unsigned label, const char *what)
{
	struct model *m = ctx;
	fprintf(stderr, "step %lu: label %u: %s\n", m->steps, label, what);
	exit(1);
}

static void model_init(struct model *m, uint64_t seed)
{
	memset(m, 0, sizeof(*m));
	vtree_init(&m->vt);
	m->ntag = 1;		/* the origin */
	m->nexttag = 1000;
	m->nextdata = 1;
	m->rng = seed * 0x9e3779b97f4a7c15ull + 1;
}

static void do_create(struct model *m)
{
	unsigned of = rnd(m, 20) == 0 || m->ntag == 1 ? 0 : rnd(m, m->ntag);
	int of_label = vtree_find_tag(&m->vt, m->tag[of]);
	CHECK(of_label >= 0);
	uint32_t tag = m->nexttag++;
	int l = vtree_snapshot(&m->vt, (unsigned)of_label, tag, 0);
	CHECK(l > 0);
	m->tag[m->ntag] = tag;
	memcpy(m->expect[m->ntag], m->expect[of], sizeof(m->expect[0]));
	m->ntag++;
	m->creates++;
}

static void do_delete(struct model *m)
{
	static struct vdelete_plan plan;
	unsigned k = 1 + rnd(m, m->ntag - 1);
	CHECK_EQ(vtree_delete(&m->vt, m->tag[k], &plan), 0);
	for (unsigned a = 0; a < NADDR; a++)
		velist_delete(&m->vt, &plan, m->list[a], &m->n[a], free_block,
			      m);
	vtree_delete_done(&m->vt, &plan);
	m->ntag--;
	m->tag[k] = m->tag[m->ntag];
	memcpy(m->expect[k], m->expect[m->ntag], sizeof(m->expect[0]));
	m->deletes++;
}

static void do_write(struct model *m)
{
	unsigned k = rnd(m, 20) == 0 ? 0 : rnd(m, m->ntag);
	unsigned a = rnd(m, NADDR);
	int l = vtree_find_tag(&m->vt, m->tag[k]);
	CHECK(l >= 0);
	unsigned label = (unsigned)l, before = m->vt.used;
	int i = velist_write(&m->vt, m->list[a], &m->n[a], VERSION_LABELS,
			     &label, 0);
	if (i >= 0) {
		struct velem *e = &m->list[a][i];
		CHECK_EQ(e->label, label);
		if (!e->phys)
			e->phys = alloc_block(m);
	} else {
		CHECK_EQ(i, -ENOENT);
		i = velist_add(m->list[a], &m->n[a], VERSION_LABELS, label,
			       alloc_block(m));
		CHECK(i >= 0);
	}
	if (label != (unsigned)l) {
		CHECK(k != 0);
		CHECK_EQ(m->vt.used, before + 1);
		m->implicit++;
	}
	m->data[m->list[a][i].phys] = m->nextdata;
	m->expect[k][a] = m->nextdata++;
	m->writes++;
}

/* F1-F9 of reference/versioning.md section 5. */
static void check_all(struct model *m)
{
	static uint8_t owned[NBLOCKS];
	unsigned elements = 0, ghosts = 0;

	CHECK_EQ(vtree_check(&m->vt, fail_check, m), 0);
	for (unsigned l = 1; l < m->vt.top; l++)
		ghosts += vtree_used(&m->vt, l) && vtree_ghost(&m->vt, l);
	CHECK_EQ(m->vt.used, m->ntag + ghosts);
	CHECK(ghosts + 1 <= (m->ntag > 1 ? m->ntag - 1 : 1));
	memset(owned, 0, sizeof(owned));
	for (unsigned a = 0; a < NADDR; a++) {
		CHECK_EQ(velist_check(&m->vt, m->list[a], m->n[a], fail_check,
				      m), 0);
		for (unsigned i = 0; i < m->n[a]; i++) {
			uint64_t p = m->list[a][i].phys;
			if (!p)
				continue;
			CHECK(m->allocated[p]);
			CHECK(!owned[p]);
			owned[p] = 1;
			elements++;
		}
		for (unsigned k = 0; k < m->ntag; k++) {
			int l = vtree_find_tag(&m->vt, m->tag[k]);
			CHECK(l >= 0);
			int i = velist_read(&m->vt, m->list[a], m->n[a],
					    (unsigned)l);
			uint32_t got = i < 0 ? 0 : m->data[m->list[a][i].phys];
			if (got != m->expect[k][a]) {
				fprintf(stderr, "step %lu: tag %u (label %d) "
					"address %u reads %u, expected %u\n",
					m->steps, m->tag[k], l, a, got,
					m->expect[k][a]);
				exit(1);
			}
		}
	}
	CHECK_EQ(elements, m->nalloc);
}

static void xrun_long(unsigned long steps);
static void arun_long(unsigned long steps);

static void run(uint64_t seed, unsigned long steps, unsigned maxsnap,
		unsigned check_every)
{
	static struct model m;
	model_init(&m, seed);
	for (m.steps = 0; m.steps < steps; m.steps++) {
		if (rnd(&m, 5) == 0) {
			if (m.ntag == 1 ||
			    (m.ntag <= maxsnap && rnd(&m, 2)))
				do_create(&m);
			else
				do_delete(&m);
		} else {
			do_write(&m);
		}
		if (m.steps % check_every == 0)
			check_all(&m);
	}
	check_all(&m);
	CHECK(m.implicit > 0 && m.deletes > 0 && m.creates > 0);
}

TEST(version_fuzz_small_trees)
{
	for (uint64_t seed = 1; seed <= 20; seed++)
		run(seed, 2500, 4, 1);
}

TEST(version_fuzz)
{
	for (uint64_t seed = 100; seed < 105; seed++)
		run(seed, 10000, MAXSNAP - 1, 1);
}

/* make fuzz-versions: TUX3_FUZZ_VERSIONS=N steps on one address set, N/10
 * on versioned extents, instead of the ordinary cases. */
static int fuzz_long(const char *env)
{
	unsigned long steps = strtoul(env, NULL, 10);
	run(7, steps, MAXSNAP - 1, 1);
	xrun_long(steps / 10);
	arun_long(steps / 10);
	printf("PASS version/version_fuzz_long (%lu pointer, %lu extent, %lu "
	       "attribute steps)\n", steps, steps / 10, steps / 10);
	return 0;
}

/* The worked example of the seed (section "Examples"): C '1003' root, B
 * '1002' under it, A '1001' and the ghost D under B, ... with the list
 * [[A, p1], [B, p2]]: C reads the origin, A reads p1, the rest p2. */
TEST(version_seed_example)
{
	static struct vtree vt;
	vtree_init(&vt);
	int a = vtree_snapshot(&vt, 0, 1001, 0);
	int b = vtree_snapshot(&vt, 0, 1002, 0);
	int c = vtree_snapshot(&vt, 0, 1003, 0);
	CHECK(a > 0 && b > 0 && c > 0);
	CHECK_EQ(vtree_root(&vt), c);
	CHECK_EQ(vt.v[b].parent, c);
	CHECK_EQ(vt.v[a].parent, b);
	int e = vtree_snapshot(&vt, (unsigned)b, 1005, 0);
	struct velem list[8] = { { (uint16_t)a, 11 }, { (uint16_t)b, 22 } };
	unsigned n = 2;
	CHECK_EQ(velist_read(&vt, list, n, (unsigned)c), -1);
	CHECK_EQ(velist_read(&vt, list, n, (unsigned)a), 0);
	CHECK_EQ(velist_read(&vt, list, n, (unsigned)b), 1);
	CHECK_EQ(velist_read(&vt, list, n, (unsigned)e), 1);
	CHECK_EQ(velist_heirs(&vt, list, n, 1), 2);	/* B and E */
	CHECK_EQ(velist_heirs(&vt, list, n, 0), 1);	/* A alone */
	/* writing to B, which has children: an implicit child takes '1002' */
	unsigned w = (unsigned)b;
	CHECK_EQ(velist_write(&vt, list, &n, 8, &w, 0), -ENOENT);
	CHECK(w != (unsigned)b);
	CHECK(vtree_ghost(&vt, (unsigned)b));
	CHECK_EQ(vtree_find_tag(&vt, 1002), (int)w);
	CHECK_EQ(vtree_nchild(&vt, (unsigned)b), 3);
	CHECK_EQ(vtree_check(&vt, NULL, NULL), 0);
}

/* 2,048 snapshots and the live version fit in 12-bit labels whatever
 * the writes do to the tree (ghosts < tagged versions). */
TEST(version_label_capacity)
{
	static struct model m;
	model_init(&m, 42);
	for (unsigned s = 0; s < 2048; s++) {
		unsigned of = s && rnd(&m, 3) ? 1 + rnd(&m, s) : 0;
		int ofl = of ? vtree_find_tag(&m.vt, 1000 + of - 1) : 0;
		CHECK(ofl >= 0);
		CHECK(vtree_snapshot(&m.vt, (unsigned)ofl, 1000 + s, 0) > 0);
		/* a write to a random version with children */
		unsigned label = (unsigned)vtree_find_tag(&m.vt,
					1000 + rnd(&m, s + 1));
		unsigned a = rnd(&m, NADDR);
		int i = velist_write(&m.vt, m.list[a], &m.n[a],
				     VERSION_LABELS, &label, 0);
		CHECK(i >= -ENOENT);
		if (i == -ENOENT)
			CHECK(velist_add(m.list[a], &m.n[a], VERSION_LABELS,
					 label, 1 + s) >= 0);
	}
	CHECK(m.vt.used <= VERSION_LABELS);
	CHECK_EQ(vtree_check(&m.vt, NULL, NULL), 0);
	/* a 2,049th snapshot may or may not fit; the tree stays whole */
	int r = vtree_snapshot(&m.vt, 0, 99999, 0);
	CHECK(r > 0 || r == -ENOSPC);
	CHECK_EQ(vtree_check(&m.vt, NULL, NULL), 0);
}

/* The table round trips through its disk form, a pending delete's plan
 * with it; any flipped byte is refused with its offset. */
TEST(version_table_disk_form)
{
	static struct model m;
	static struct vtree back;
	static struct vdelete_plan plan, pending;
	static uint8_t buf[VTABLE_HEADER + VERSION_LABELS * VTABLE_RECORD];
	size_t at;

	model_init(&m, 5);
	for (m.steps = 0; m.steps < 3000; m.steps++) {
		if (rnd(&m, 4) == 0 && m.ntag < MAXSNAP)
			do_create(&m);
		else
			do_write(&m);
	}
	CHECK(m.vt.ghosts > 0);
	/* every snapshot named, as on a volume (a snapshot without a
	 * name cannot be selected: the decoder counts it in bad_names) */
	for (unsigned l = 1; l < m.vt.top; l++)
		if (vtree_used(&m.vt, l) && !vtree_ghost(&m.vt, l))
			snprintf(m.vt.v[l].name, sizeof(m.vt.v[l].name),
				 "s%u", l);
	snprintf(m.vt.v[1].name, sizeof(m.vt.v[1].name), "monday");
	size_t size = vtable_size(&m.vt);
	vtable_encode(&m.vt, buf);
	CHECK_EQ(vtable_decode(&back, buf, size, &pending, &at), 0);
	CHECK_EQ(pending.count, 0);
	CHECK_EQ(back.top, m.vt.top);
	CHECK_EQ(back.used, m.vt.used);
	CHECK_EQ(back.ghosts, m.vt.ghosts);
	for (unsigned l = 0; l < back.top; l++) {
		CHECK_EQ(back.v[l].parent, m.vt.v[l].parent);
		CHECK_EQ(back.v[l].flags, m.vt.v[l].flags);
		CHECK_EQ(back.v[l].tag, m.vt.v[l].tag);
		CHECK(!strcmp(back.v[l].name, m.vt.v[l].name));
	}
	CHECK_EQ(vtree_check(&back, NULL, NULL), 0);

	/* a delete stopped before its lists were processed */
	CHECK_EQ(vtree_delete(&m.vt, m.tag[1], &plan), 0);
	CHECK(plan.count >= 1);
	vtree_plan_record(&m.vt, &plan);
	size = vtable_size(&m.vt);
	vtable_encode(&m.vt, buf);
	CHECK_EQ(vtable_decode(&back, buf, size, &pending, &at), 0);
	CHECK_EQ(pending.count, plan.count);
	for (unsigned i = 0; i < plan.count; i++) {
		CHECK_EQ(pending.step[i].label, plan.step[i].label);
		CHECK_EQ(pending.step[i].into, plan.step[i].into);
	}
	for (size_t off = 0; off < size; off += 7) {
		buf[off] ^= 0x10;
		CHECK_EQ(vtable_decode(&back, buf, size, NULL, &at), -EUCLEAN);
		buf[off] ^= 0x10;
	}
	CHECK_EQ(vtable_decode(&back, buf, size - 1, NULL, &at), -EUCLEAN);
	CHECK_EQ(at, 8);

	/* a name without its NUL, the CRC good: the name read cut short,
	 * the table kept (it costs the name, not the table) */
	uint8_t *name = buf + VTABLE_HEADER + 24;
	for (unsigned l = 1; l < m.vt.top; l++)
		if (m.vt.v[l].flags) {
			name = buf + VTABLE_HEADER + (size_t)l * VTABLE_RECORD +
			       24;
			break;
		}
	memset(name, 'n', VERSION_NAME_MAX + 1);
	uint32_t crc = tux3_crc32c(0, buf, 12);
	crc = tux3_crc32c(crc, "\0\0\0\0", 4);
	crc = tux3_crc32c(crc, buf + 16, size - 16);
	put_be32(buf + 12, crc);
	CHECK_EQ(vtable_decode(&back, buf, size, NULL, &at), 0);
	CHECK_EQ(back.bad_names, 1);

	/* a parent at or above top, the CRC good: refused by the decoder
	 * (the read rule walks parent links; found by the fsck campaign) */
	uint8_t *rec = name - 24;
	put_be16(rec, (uint16_t)m.vt.top);
	crc = tux3_crc32c(0, buf, 12);
	crc = tux3_crc32c(crc, "\0\0\0\0", 4);
	crc = tux3_crc32c(crc, buf + 16, size - 16);
	put_be32(buf + 12, crc);
	CHECK_EQ(vtable_decode(&back, buf, size, NULL, &at), -EUCLEAN);
	CHECK_EQ(at, (size_t)(rec - buf));
}

/* ---- versioned extents against the per-block model ---- */
#define NLOG	48		/* logical blocks of the file */

struct xmodel {
	struct vtree vt;
	struct vextent rec[4096];
	struct vextents x;
	uint32_t tag[MAXSNAP + 1];
	uint32_t expect[MAXSNAP + 1][NLOG];
	unsigned ntag;
	uint32_t nexttag, nextdata;
	uint32_t data[NBLOCKS];
	uint8_t allocated[NBLOCKS];
	unsigned nalloc;
	struct model rng;	/* only its rng */
	unsigned long steps, implicit;
};

static uint64_t xalloc(void *ctx)
{
	struct xmodel *m = ctx;
	for (uint64_t b = 1 + rnd(&m->rng, 64), tries = 0; tries < NBLOCKS;
	     tries++, b = b % (NBLOCKS - 1) + 1)
		if (!m->allocated[b]) {
			m->allocated[b] = 1;
			m->nalloc++;
			return b;
		}
	return 0;
}

static void xfree(void *ctx, uint64_t phys)
{
	struct xmodel *m = ctx;
	CHECK(phys > 0 && phys < NBLOCKS && m->allocated[phys]);
	m->allocated[phys] = 0;
	m->nalloc--;
}

static void xfail(void *ctx, unsigned label, const char *what)
{
	struct xmodel *m = ctx;
	fprintf(stderr, "extent step %lu: label %u: %s\n", m->steps, label,
		what);
	exit(1);
}

static void xcheck(struct xmodel *m)
{
	static uint8_t owned[NBLOCKS];
	unsigned blocks = 0;
	CHECK_EQ(vtree_check(&m->vt, xfail, m), 0);
	CHECK_EQ(vext_check(&m->vt, &m->x, xfail, m), 0);
	memset(owned, 0, sizeof(owned));
	for (unsigned i = 0; i < m->x.n; i++) {
		const struct vextent *r = &m->x.r[i];
		CHECK(r->logical + r->count <= NLOG);
		for (unsigned k = 0; r->phys && k < r->count; k++) {
			CHECK(m->allocated[r->phys + k]);
			CHECK(!owned[r->phys + k]);
			owned[r->phys + k] = 1;
			blocks++;
		}
	}
	CHECK_EQ(blocks, m->nalloc);
	for (unsigned k = 0; k < m->ntag; k++) {
		int l = vtree_find_tag(&m->vt, m->tag[k]);
		CHECK(l >= 0);
		for (unsigned a = 0; a < NLOG; a++) {
			uint64_t p = vext_read(&m->vt, &m->x, (unsigned)l, a);
			uint32_t got = p ? m->data[p] : 0;
			if (got != m->expect[k][a]) {
				fprintf(stderr, "extent step %lu: tag %u block "
					"%u reads %u, expected %u\n", m->steps,
					m->tag[k], a, got, m->expect[k][a]);
				exit(1);
			}
		}
	}
}

static void xrun(uint64_t seed, unsigned long steps, unsigned maxsnap)
{
	static struct xmodel m;
	static struct vdelete_plan plan;
	uint64_t written[NLOG];

	memset(&m, 0, sizeof(m));
	vtree_init(&m.vt);
	m.x = (struct vextents){ .r = m.rec, .cap = 4096 };
	m.ntag = 1;
	m.nexttag = 1;
	m.nextdata = 1;
	m.rng.rng = seed * 0x9e3779b97f4a7c15ull + 3;
	struct model *r = &m.rng;
	for (m.steps = 0; m.steps < steps; m.steps++) {
		unsigned op = rnd(r, 6);
		if (op == 0 && (m.ntag == 1 || (m.ntag <= maxsnap && rnd(r, 2)))) {
			unsigned of = rnd(r, 4) == 0 ? 0 : rnd(r, m.ntag);
			int ofl = vtree_find_tag(&m.vt, m.tag[of]);
			CHECK(vtree_snapshot(&m.vt, (unsigned)ofl, m.nexttag,
					     0) > 0);
			m.tag[m.ntag] = m.nexttag++;
			memcpy(m.expect[m.ntag], m.expect[of],
			       sizeof(m.expect[0]));
			m.ntag++;
		} else if (op == 0) {
			unsigned k = 1 + rnd(r, m.ntag - 1);
			CHECK_EQ(vtree_delete(&m.vt, m.tag[k], &plan), 0);
			CHECK_EQ(vext_delete(&m.vt, &plan, &m.x, xfree, &m), 0);
			vtree_delete_done(&m.vt, &plan);
			m.ntag--;
			m.tag[k] = m.tag[m.ntag];
			memcpy(m.expect[k], m.expect[m.ntag],
			       sizeof(m.expect[0]));
		} else {
			unsigned k = rnd(r, 5) == 0 ? 0 : rnd(r, m.ntag);
			unsigned len = 1 + rnd(r, rnd(r, 4) ? 4 : 16);
			unsigned at = rnd(r, NLOG - len + 1);
			unsigned label = (unsigned)vtree_find_tag(&m.vt, m.tag[k]);
			unsigned before = label;
			enum vext_mode mode = op == 1 ? VEXT_PUNCH :
					      op == 2 ? VEXT_REDIRECT :
					      VEXT_IN_PLACE;
			CHECK_EQ(vext_update(&m.vt, &m.x, &label, at, len, mode,
					     xalloc, xfree, &m, written, 0), 0);
			m.implicit += label != before;
			for (unsigned i = 0; i < len; i++) {
				if (mode == VEXT_PUNCH) {
					CHECK_EQ(written[i], 0);
					m.expect[k][at + i] = 0;
					continue;
				}
				CHECK(written[i] && m.allocated[written[i]]);
				m.data[written[i]] = m.nextdata;
				m.expect[k][at + i] = m.nextdata++;
			}
		}
		xcheck(&m);
	}
	CHECK(m.implicit > 0);
}

static void xrun_long(unsigned long steps)
{
	xrun(11, steps, 12);
}

TEST(version_extents_fuzz)
{
	for (uint64_t seed = 1; seed <= SANITIZER_SHARE(10u, 3); seed++)
		xrun(seed, 2000, 8);
}

/* ---- versioned attributes against a per-key model ---- */
#define NKEY 6
static const uint32_t akeys[NKEY] = {
	VATTR_KEY(1, 0), VATTR_KEY(3, 0), VATTR_KEY(4, 0), VATTR_KEY(5, 0),
	VATTR_KEY(12, 1), VATTR_KEY(12, 7),
};
static const unsigned alen[NKEY] = { 12, 16, 4, 8, 0, 0 };

struct amodel {
	struct vtree vt;
	struct vattrs x;
	uint32_t tag[MAXSNAP + 1];
	uint32_t expect[MAXSNAP + 1][NKEY];	/* 0: none */
	unsigned ntag;
	uint32_t nexttag, nextval;
	struct model rng;
	unsigned long steps;
};

static void afail(void *ctx, unsigned label, const char *what)
{
	struct amodel *m = ctx;
	fprintf(stderr, "attr step %lu: label %u: %s\n", m->steps, label,
		what);
	exit(1);
}

static void acheck(struct amodel *m)
{
	CHECK_EQ(vtree_check(&m->vt, afail, m), 0);
	CHECK_EQ(vattrs_check(&m->vt, &m->x, afail, m), 0);
	for (unsigned k = 0; k < m->ntag; k++) {
		int l = vtree_find_tag(&m->vt, m->tag[k]);
		CHECK(l >= 0);
		for (unsigned a = 0; a < NKEY; a++) {
			const struct vattr *v = vattrs_get(&m->vt, &m->x,
							   (unsigned)l, akeys[a]);
			uint32_t got = 0;
			if (v) {
				CHECK(v->len >= 4);
				got = (uint32_t)v->data[0] << 24 |
				      (uint32_t)v->data[1] << 16 |
				      (uint32_t)v->data[2] << 8 | v->data[3];
			}
			if (got != m->expect[k][a]) {
				fprintf(stderr, "attr step %lu: tag %u key %u "
					"reads %u, expected %u\n", m->steps,
					m->tag[k], a, got, m->expect[k][a]);
				exit(1);
			}
		}
	}
}

/* Through the disk form: encode, decode, and the same attributes. */
static void around_trip(struct amodel *m)
{
	static uint8_t blob[1 << 17];
	struct vattrs back;
	unsigned bad;
	int size = vattrs_encode(&m->x, blob, sizeof(blob));
	CHECK(size >= 0);
	CHECK_EQ(vattrs_decode(blob, (unsigned)size, &back, &bad), 0);
	CHECK_EQ(back.n, m->x.n);
	for (unsigned i = 0; i < back.n; i++) {
		int j = -1;
		for (unsigned k = 0; k < m->x.n && j < 0; k++)
			if (m->x.a[k].key == back.a[i].key &&
			    m->x.a[k].label == back.a[i].label)
				j = (int)k;
		CHECK(j >= 0);
		CHECK_EQ(m->x.a[j].absent, back.a[i].absent);
		CHECK_EQ(m->x.a[j].len, back.a[i].len);
		CHECK(!back.a[i].len ||
		      !memcmp(m->x.a[j].data, back.a[i].data, back.a[i].len));
	}
	vattrs_free(&m->x);
	m->x = back;
	/* a cut blob is refused, never read past its end */
	if (size > 2) {
		CHECK_EQ(vattrs_decode(blob, (unsigned)size - 1, &back, &bad),
			 -EUCLEAN);
	}
}

static void arun(uint64_t seed, unsigned long steps, unsigned maxsnap)
{
	static struct amodel m;
	static struct vdelete_plan plan;
	uint8_t val[40];

	vattrs_free(&m.x);
	memset(&m, 0, sizeof(m));
	vtree_init(&m.vt);
	m.ntag = 1;
	m.nexttag = 1;
	m.nextval = 1;
	m.rng.rng = seed * 0x9e3779b97f4a7c15ull + 5;
	struct model *r = &m.rng;
	for (m.steps = 0; m.steps < steps; m.steps++) {
		unsigned op = rnd(r, 8);
		if (op == 0 && (m.ntag == 1 || (m.ntag <= maxsnap && rnd(r, 2)))) {
			unsigned of = rnd(r, 4) == 0 ? 0 : rnd(r, m.ntag);
			int ofl = vtree_find_tag(&m.vt, m.tag[of]);
			CHECK(vtree_snapshot(&m.vt, (unsigned)ofl, m.nexttag,
					     0) > 0);
			m.tag[m.ntag] = m.nexttag++;
			memcpy(m.expect[m.ntag], m.expect[of],
			       sizeof(m.expect[0]));
			m.ntag++;
		} else if (op == 0) {
			unsigned k = 1 + rnd(r, m.ntag - 1);
			CHECK_EQ(vtree_delete(&m.vt, m.tag[k], &plan), 0);
			CHECK_EQ(vattrs_delete(&m.vt, &plan, &m.x), 0);
			vtree_delete_done(&m.vt, &plan);
			m.ntag--;
			m.tag[k] = m.tag[m.ntag];
			memcpy(m.expect[k], m.expect[m.ntag],
			       sizeof(m.expect[0]));
		} else if (op == 1) {
			around_trip(&m);
		} else {
			unsigned k = rnd(r, 4) == 0 ? 0 : rnd(r, m.ntag);
			unsigned a = rnd(r, NKEY);
			unsigned label = (unsigned)vtree_find_tag(&m.vt, m.tag[k]);
			bool unset = rnd(r, 5) == 0;
			unsigned len = alen[a] ? alen[a] : 4 + rnd(r, 30);
			uint32_t v = m.nextval++;
			memset(val, 0xa5, sizeof(val));
			val[0] = (uint8_t)(v >> 24);
			val[1] = (uint8_t)(v >> 16);
			val[2] = (uint8_t)(v >> 8);
			val[3] = (uint8_t)v;
			CHECK_EQ(vattrs_set(&m.vt, &m.x, &label, akeys[a],
					    unset ? NULL : val, unset ? 0 : len,
					    0), 0);
			m.expect[k][a] = unset ? 0 : v;
		}
		acheck(&m);
	}
	vattrs_free(&m.x);
}

static void arun_long(unsigned long steps)
{
	arun(13, steps, 12);
}

TEST(version_attrs_fuzz)
{
	for (uint64_t seed = 1; seed <= 8; seed++)
		arun(seed, 2500, 8);
}

/* A volume without versions encodes its inodes as the 2014 format does:
 * fixed kinds ascending, then xattrs in the order they were set. */
TEST(version_attrs_2014_order)
{
	static struct vtree vt;
	struct vattrs x = { 0 };
	unsigned label = 0;
	uint8_t blob[256], mtime[8] = { 0 }, mode[12] = { 0 }, size[16] = { 0 };
	vtree_init(&vt);
	CHECK_EQ(vattrs_set(&vt, &x, &label, VATTR_KEY(12, 9), "\1\2\3", 3, 0),
		 0);
	CHECK_EQ(vattrs_set(&vt, &x, &label, VATTR_KEY(5, 0), mtime, 8, 0), 0);
	CHECK_EQ(vattrs_set(&vt, &x, &label, VATTR_KEY(12, 2), "", 0, 0), 0);
	CHECK_EQ(vattrs_set(&vt, &x, &label, VATTR_KEY(1, 0), mode, 12, 0), 0);
	CHECK_EQ(vattrs_set(&vt, &x, &label, VATTR_KEY(3, 0), size, 16, 0), 0);
	int n = vattrs_encode(&x, blob, sizeof(blob));
	static const uint8_t want_heads[][2] = {
		{ 0x10, 0x00 }, { 0x30, 0x00 }, { 0x50, 0x00 }, { 0xc0, 0x00 },
		{ 0xc0, 0x00 },
	};
	unsigned off = 0;
	for (unsigned i = 0; i < 5; i++) {
		CHECK(!memcmp(blob + off, want_heads[i], 2));
		unsigned kind = blob[off] >> 4;
		off += 2 + (kind == 1 ? 12 : kind == 3 ? 16 : kind == 5 ? 8 :
			    2 + (unsigned)(blob[off + 2] << 8 | blob[off + 3]));
	}
	CHECK_EQ(off, (unsigned)n);
	/* the xattrs in the order they were set: atom 9, then atom 2 */
	CHECK_EQ(blob[42] << 8 | blob[43], 12 << 12);
	CHECK_EQ(blob[46] << 8 | blob[47], 9);
	CHECK_EQ(blob[55] << 8 | blob[56], 2);
	vattrs_free(&x);
}

/* A table read from disk with a cycle (1 -> 2 -> 1): reported, and the
 * list rules still end. */
TEST(version_cycle_terminates)
{
	static struct vtree vt;
	vtree_init(&vt);
	vt.v[1] = (struct version){ .parent = 2, .flags = VERSION_USED |
				    VERSION_GHOST };
	vt.v[2] = (struct version){ .parent = 1, .flags = VERSION_USED |
				    VERSION_GHOST };
	vt.top = 3;
	vt.used = 3;
	CHECK_EQ(vtree_derive(&vt), -EUCLEAN);
	CHECK(vtree_check(&vt, NULL, NULL) >= 2);
	struct velem e[2] = { { 1, 5 }, { 0, 6 } };
	CHECK(velist_heirs(&vt, e, 2, 0) <= VERSION_LABELS);
	(void)velist_check(&vt, e, 2, NULL, NULL);
	CHECK_EQ(velist_read(&vt, e, 2, 2), 0);	/* nearest: label 1 */
}

/* A table the decoder refuses: the salvage keeps the records that
 * decode on their own, drops what the origin no longer reaches, and
 * always leaves a tree whose origin is sound; on any bytes at all. */
TEST(version_table_salvage)
{
	static struct vtree vt, back;
	static struct vdelete_plan plan;
	static uint8_t buf[VTABLE_HEADER + 8 * VTABLE_RECORD];
	vtree_init(&vt);
	int a = vtree_snapshot(&vt, 0, 7, 1);
	int b = vtree_snapshot(&vt, (unsigned)a, 8, 2);
	int c = vtree_snapshot(&vt, 0, 9, 3);	/* the root now; a below */
	CHECK(a > 0 && b > 0 && c > 0);
	snprintf(vt.v[a].name, sizeof(vt.v[a].name), "monday");
	snprintf(vt.v[b].name, sizeof(vt.v[b].name), "tuesday");
	snprintf(vt.v[c].name, sizeof(vt.v[c].name), "wednesday");
	size_t size = vtable_size(&vt);
	vtable_encode(&vt, buf);
	/* the header's format gone: every record kept */
	buf[5] = 0;
	CHECK_EQ(vtable_decode(&back, buf, size, NULL, NULL), -EUCLEAN);
	CHECK_EQ(vtable_salvage(&back, buf, size, &plan), 0);
	CHECK_EQ(back.used, 4);
	CHECK_EQ(vtree_check(&back, NULL, NULL), 0);
	/* monday's flags broken: monday and tuesday below it go */
	buf[VTABLE_HEADER + (size_t)a * VTABLE_RECORD + 3] = 9;
	CHECK_EQ(vtable_salvage(&back, buf, size, &plan), 2);
	CHECK_EQ(back.used, 2);
	CHECK(vtree_used(&back, (unsigned)c) && !vtree_used(&back, (unsigned)b));
	CHECK_EQ(vtree_check(&back, NULL, NULL), 0);
	/* an empty name: renamed, the snapshot kept */
	vtable_encode(&vt, buf);
	memset(buf + VTABLE_HEADER + (size_t)c * VTABLE_RECORD + 24, 0, 8);
	buf[12] ^= 1;
	CHECK_EQ(vtable_salvage(&back, buf, size, &plan), 1);
	CHECK(!strncmp(back.v[c].name, "lost-9-", 7));
	/* random bytes: an origin-sound tree, whatever they are */
	uint32_t x = 12345;
	for (int round = 0; round < 200; round++) {
		for (size_t i = 0; i < sizeof(buf); i++) {
			x = x * 1103515245u + 12345u;
			buf[i] = (uint8_t)(x >> 16);
		}
		vtable_salvage(&back, buf, sizeof(buf), &plan);
		CHECK(vtree_used(&back, 0) && !vtree_ghost(&back, 0));
		CHECK_EQ(back.v[0].parent, VERSION_NONE);
	}
}

int main(void)
{
	const char *env = getenv("TUX3_FUZZ_VERSIONS");
	if (env)
		return fuzz_long(env);
	return run_tests("version");
}

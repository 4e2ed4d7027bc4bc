/*
 * The version table on disk (inode 3's data; doc/format.md 17.2).
 *
 *   header, 64 bytes: magic "T3VT" be32, format be16 (1), label bits be16
 *     (12), top be32 (records that follow), CRC32C be32 of header and
 *     records with this field zero, 48 zero bytes
 *   record per label, 64 bytes: parent be16 (0xffff for label 0), flags
 *     be16 (USED 1, GHOST 2, DYING 4), tag be32, birth s64 ns, into be16
 *     and step be16 (a DYING label's place in the pending delete), 4 zero
 *     bytes, name 40 bytes NUL-padded
 *
 * A free label's record is all zero.  Decoding checks the syntax of each
 * record; the tree's invariants are vtree_check()'s (fsck pass 9).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "tux3.h"
#include "format/endian.h"
#include "version/version.h"

size_t vtable_size(const struct vtree *vt)
{
	return VTABLE_HEADER + (size_t)vt->top * VTABLE_RECORD;
}

void vtable_encode(const struct vtree *vt, uint8_t *buf)
{
	size_t size = vtable_size(vt);
	memset(buf, 0, size);
	put_be32(buf, VTABLE_MAGIC);
	put_be16(buf + 4, 1);
	put_be16(buf + 6, VERSION_LABEL_BITS);
	put_be32(buf + 8, vt->top);
	for (unsigned l = 0; l < vt->top; l++) {
		const struct version *v = &vt->v[l];
		uint8_t *r = buf + VTABLE_HEADER + (size_t)l * VTABLE_RECORD;
		if (!v->flags)
			continue;
		put_be16(r, v->parent);
		put_be16(r + 2, v->flags);
		put_be32(r + 4, v->tag);
		put_be64(r + 8, (uint64_t)v->birth_ns);
		if (v->flags & VERSION_DYING) {
			put_be16(r + 16, v->into);
			put_be16(r + 18, v->step);
		}
		memcpy(r + 24, v->name, strnlen(v->name, VERSION_NAME_MAX));
	}
	put_be32(buf + 12, tux3_crc32c(0, buf, size));
}

static int bad(size_t *bad_at, size_t off)
{
	if (bad_at)
		*bad_at = off;
	return -EUCLEAN;
}

static bool zero(const uint8_t *p, size_t len)
{
	while (len--)
		if (*p++)
			return false;
	return true;
}

int vtable_decode(struct vtree *vt, const uint8_t *buf, size_t len,
		  struct vdelete_plan *pending, size_t *bad_at)
{
	if (len < VTABLE_HEADER || be32(buf) != VTABLE_MAGIC)
		return bad(bad_at, 0);
	if (be16(buf + 4) != 1 || be16(buf + 6) != VERSION_LABEL_BITS)
		return bad(bad_at, 4);
	uint32_t top = be32(buf + 8);
	if (!top || top > VERSION_LABELS ||
	    len < VTABLE_HEADER + (size_t)top * VTABLE_RECORD)
		return bad(bad_at, 8);
	size_t size = VTABLE_HEADER + (size_t)top * VTABLE_RECORD;
	uint32_t crc = tux3_crc32c(0, buf, 12);
	crc = tux3_crc32c(crc, "\0\0\0\0", 4);
	crc = tux3_crc32c(crc, buf + 16, size - 16);
	if (crc != be32(buf + 12))
		return bad(bad_at, 12);
	if (!zero(buf + 16, VTABLE_HEADER - 16))
		return bad(bad_at, 16);

	memset(vt, 0, sizeof(*vt));
	vt->top = top;
	if (pending)
		pending->count = 0;
	for (unsigned l = 0; l < top; l++) {
		const uint8_t *r = buf + VTABLE_HEADER + (size_t)l * VTABLE_RECORD;
		size_t off = VTABLE_HEADER + (size_t)l * VTABLE_RECORD;
		struct version *v = &vt->v[l];
		v->flags = be16(r + 2);
		if (!v->flags) {
			if (!zero(r, VTABLE_RECORD))
				return bad(bad_at, off);
			continue;
		}
		if (v->flags & ~(VERSION_USED | VERSION_GHOST | VERSION_DYING) ||
		    !(v->flags & (VERSION_USED | VERSION_DYING)) ||
		    (v->flags & VERSION_USED && v->flags & VERSION_DYING))
			return bad(bad_at, off + 2);
		v->parent = be16(r);
		if (v->parent != VERSION_NONE && v->parent >= top)
			return bad(bad_at, off);
		v->tag = be32(r + 4);
		v->birth_ns = (int64_t)be64(r + 8);
		if (!zero(r + 20, 4))
			return bad(bad_at, off + 20);
		/* a name that lost its NUL costs the name, not the table:
		 * the live tree and the other snapshots read on */
		if (r[24 + VERSION_NAME_MAX])
			vt->bad_names++;
		memcpy(v->name, r + 24, VERSION_NAME_MAX);
		if (v->flags & VERSION_DYING) {
			v->into = be16(r + 16);
			v->step = be16(r + 18);
			/* the origin is nobody's child: never an heir */
			if ((v->into != VERSION_NONE && v->into >= top) ||
			    v->into == VERSION_ORIGIN || v->step >= 2)
				return bad(bad_at, off + 16);
			if (pending) {
				if (pending->count <= v->step)
					pending->count = v->step + 1u;
				pending->step[v->step] = (struct vdelete_step){
					.label = (uint16_t)l, .into = v->into };
			}
			vt->dying++;
		} else if (be32(r + 16)) {
			return bad(bad_at, off + 16);
		} else {
			vt->used++;
			vt->ghosts += !!(v->flags & VERSION_GHOST);
		}
	}
	if (pending && pending->count > vt->dying)
		return bad(bad_at, 0);	/* a gap in the plan's steps */
	vtree_derive(vt);
	vt->bad_names += vtree_names_bad(vt, false);
	return 0;
}

/* A snapshot's name is how users reach it: empty, with a '/', or one
 * another snapshot has already, it cannot be selected. */
static bool name_bad(const struct vtree *vt, unsigned label)
{
	const char *name = vt->v[label].name;
	if (!name[0] || strchr(name, '/'))
		return true;
	for (unsigned l = 1; l < label; l++)
		if (vtree_used(vt, l) && !vtree_ghost(vt, l) &&
		    !strcmp(vt->v[l].name, name))
			return true;
	return false;
}

unsigned vtree_names_bad(struct vtree *vt, bool fix)
{
	unsigned bad = 0;
	for (unsigned l = 1; l < vt->top; l++) {
		if (!vtree_used(vt, l) || vtree_ghost(vt, l) ||
		    !name_bad(vt, l))
			continue;
		bad++;
		/* a fresh name no other snapshot has: from the tag and the
		 * label, which are unique among used labels */
		for (unsigned n = 0; fix; n++) {
			snprintf(vt->v[l].name, sizeof(vt->v[l].name),
				 n ? "lost-%u-%u-%u" : "lost-%u-%u",
				 (unsigned)vt->v[l].tag, l, n);
			if (!name_bad(vt, l))
				break;
		}
	}
	return bad;
}

/* One record on its own (the rules of vtable_decode): false if it
 * cannot be kept. */
static bool record_salvage(struct version *v, const uint8_t *r, unsigned top,
			   unsigned label)
{
	memset(v, 0, sizeof(*v));
	uint16_t flags = be16(r + 2);
	if (!flags || flags & ~(VERSION_USED | VERSION_GHOST | VERSION_DYING) ||
	    !(flags & (VERSION_USED | VERSION_DYING)) ||
	    (flags & VERSION_USED && flags & VERSION_DYING) ||
	    !zero(r + 20, 4))
		return false;
	v->flags = flags;
	v->parent = be16(r);
	if (label && (v->parent >= top || v->parent == label))
		return false;
	v->tag = be32(r + 4);
	v->birth_ns = (int64_t)be64(r + 8);
	memcpy(v->name, r + 24, VERSION_NAME_MAX);
	if (flags & VERSION_DYING) {
		v->into = be16(r + 16);
		v->step = be16(r + 18);
		return (v->into == VERSION_NONE ||
			(v->into < top && v->into != VERSION_ORIGIN)) &&
		       v->step < 2;
	}
	return !be32(r + 16);
}

/* The dying labels form a plan (steps 0..count-1, each once, heirs in
 * the tree), or they all go. */
static unsigned plan_salvage(struct vtree *vt, struct vdelete_plan *pending)
{
	unsigned count = 0, dying = 0, seen = 0, dropped = 0;
	for (unsigned l = 0; l < vt->top; l++) {
		struct version *v = &vt->v[l];
		if (!(v->flags & VERSION_DYING))
			continue;
		dying++;
		if (v->into != VERSION_NONE && !vtree_used(vt, v->into))
			seen |= 4;	/* an heir that went */
		if (seen & (1u << v->step))
			seen |= 4;	/* a step twice */
		seen |= 1u << v->step;
		if (count <= v->step)
			count = v->step + 1u;
		if (pending)
			pending->step[v->step] = (struct vdelete_step){
				.label = (uint16_t)l, .into = v->into };
	}
	if (pending)
		pending->count = 0;
	if (!dying)
		return 0;
	if (!(seen & 4) && count == dying) {
		if (pending)
			pending->count = count;
		vt->dying = dying;
		return 0;
	}
	for (unsigned l = 0; l < vt->top; l++)
		if (vt->v[l].flags & VERSION_DYING) {
			memset(&vt->v[l], 0, sizeof(vt->v[l]));
			dropped++;
		}
	return dropped;
}

unsigned vtree_salvage(struct vtree *vt, struct vdelete_plan *pending)
{
	unsigned dropped = 0;
	struct version *o = &vt->v[VERSION_ORIGIN];
	/* the origin is always there: the live version reads through it */
	if (o->flags != VERSION_USED || o->parent != VERSION_NONE || o->tag ||
	    o->name[0])
		dropped++;
	*o = (struct version){ .parent = VERSION_NONE, .flags = VERSION_USED,
			       .birth_ns = o->birth_ns };
	/* what the origin does not reach goes (a parent that went, a
	 * cycle); the labels that stay all have parents in the tree */
	vtree_derive(vt);
	for (unsigned l = 1; l < vt->top; l++)
		if (vtree_used(vt, l) && !(vt->v[l].flags & VERSION_DYING) &&
		    vt->depth[l] == UINT16_MAX) {
			memset(&vt->v[l], 0, sizeof(vt->v[l]));
			dropped++;
		}
	uint32_t maxtag = 0;
	for (unsigned l = 1; l < vt->top; l++)
		if (vtree_used(vt, l) && vt->v[l].tag > maxtag)
			maxtag = vt->v[l].tag;
	for (unsigned l = 1; l < vt->top; l++) {
		struct version *v = &vt->v[l];
		if (!vtree_used(vt, l) || (v->flags & VERSION_DYING))
			continue;
		if (vtree_ghost(vt, l)) {
			/* a ghost has no tag and no name */
			dropped += v->tag || v->name[0];
			v->tag = 0;
			memset(v->name, 0, sizeof(v->name));
		} else if (!v->tag) {
			v->tag = ++maxtag ? maxtag : ++maxtag;
			dropped++;
		}
	}
	dropped += plan_salvage(vt, pending);
	dropped += vtree_names_bad(vt, true);
	vt->used = vt->ghosts = 0;
	for (unsigned l = 0; l < vt->top; l++)
		if (vtree_used(vt, l) && !(vt->v[l].flags & VERSION_DYING)) {
			vt->used++;
			vt->ghosts += vtree_ghost(vt, l);
		}
	vt->bad_names = 0;
	vt->pending = NULL;
	vtree_derive(vt);
	return dropped;
}

unsigned vtable_salvage(struct vtree *vt, const uint8_t *buf, size_t len,
			struct vdelete_plan *pending)
{
	/* the inode's size says how many records there are (the save
	 * truncates to the table): a header's top is no surer */
	size_t top = len >= VTABLE_HEADER + VTABLE_RECORD ?
		     (len - VTABLE_HEADER) / VTABLE_RECORD : 1;
	unsigned dropped = 0;
	if (top > VERSION_LABELS)
		top = VERSION_LABELS;
	memset(vt, 0, sizeof(*vt));
	vt->top = (unsigned)top;
	for (unsigned l = 0; l < vt->top; l++) {
		size_t off = VTABLE_HEADER + (size_t)l * VTABLE_RECORD;
		const uint8_t *r = off + VTABLE_RECORD <= len ? buf + off : NULL;
		if (r && !record_salvage(&vt->v[l], r, vt->top, l) &&
		    !zero(r, VTABLE_RECORD)) {
			memset(&vt->v[l], 0, sizeof(vt->v[l]));
			dropped += l > 0;	/* the origin is counted below */
		}
	}
	dropped += vtree_salvage(vt, pending);
	/* trailing free labels are not kept */
	while (vt->top > 1 && !vt->v[vt->top - 1].flags)
		vt->top--;
	return dropped;
}

void vtree_plan_record(struct vtree *vt, const struct vdelete_plan *plan)
{
	for (unsigned i = 0; i < plan->count; i++) {
		struct version *v = &vt->v[plan->step[i].label];
		v->into = plan->step[i].into;
		v->step = (uint16_t)i;
	}
}

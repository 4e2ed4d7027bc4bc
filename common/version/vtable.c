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
			if ((v->into != VERSION_NONE && v->into >= top) ||
			    v->step >= 2)
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
	return 0;
}

void vtree_plan_record(struct vtree *vt, const struct vdelete_plan *plan)
{
	for (unsigned i = 0; i < plan->count; i++) {
		struct version *v = &vt->v[plan->step[i].label];
		v->into = plan->step[i].into;
		v->step = (uint16_t)i;
	}
}

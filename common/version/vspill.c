/*
 * Versioned attributes past the inode-table leaf (doc/format.md 17.3b).
 *
 * On a volume with versions one blob holds the attributes of every
 * version, and an inode changed in many versions outgrows the leaf.  The
 * blob the version layer works on (the "logical" blob) is then stored in
 * two parts: in the leaf, its label-0 attributes and any others that fit,
 * ending with one SPILL attribute (kind 6, label 0); in a chain of spill
 * blocks, the rest.  The logical blob is the leaf part without the SPILL
 * attribute followed by the chain's bytes.
 *
 * A store keeps the chain as it is when every attribute in it is still in
 * the new blob unchanged and the rest fits the leaf, so an inode's old
 * versions are written again only when the leaf overflows, not at every
 * change of the live version.  Chains are copy-on-write: a new chain is
 * written to fresh blocks before the leaf names it, and the old one is
 * freed with the delta (logged BALLOC and BFREE, as file data is).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "version/vinode.h"
#include "version/version.h"

#define SPILL_MAGIC	0x54334153u	/* "T3AS" */
#define SPILL_HEADER	32

/* Bytes of attributes one spill block carries. */
static unsigned spill_room(const struct tux3_volume *vol)
{
	return vol->blocksize - SPILL_HEADER;
}

/* The size of the attribute at off in a versioned blob (head included),
 * or 0 when it is cut off or of an unknown kind. */
static unsigned attr_size(const uint8_t *blob, unsigned len, unsigned off)
{
	static const int size[16] = {
		[0] = 8, [1] = 12, [2] = 8, [3] = 16, [4] = 4, [5] = 8,
		[VATTR_SPILL] = VSPILL_PAYLOAD, [7] = -1, [8] = -1, [9] = -1,
		[VATTR_ABSENT] = 4, [11] = 0, [12] = 0, [13] = -1, [14] = -1,
		[ATTR_ATIME] = 8,
	};
	if (len - off < 2)
		return 0;
	int fixed = size[be16(blob + off) >> 12];
	unsigned n;
	if (fixed < 0)
		return 0;
	if (fixed) {
		n = 2 + (unsigned)fixed;
	} else {
		if (len - off < 4)
			return 0;
		n = 4 + be16(blob + off + 2);
	}
	return n <= len - off ? n : 0;
}

int vspill_find(const uint8_t *blob, unsigned len, struct vspill *sp)
{
	memset(sp, 0, sizeof(*sp));
	for (unsigned off = 0; off < len;) {
		unsigned n = attr_size(blob, len, off);
		if (!n)
			return 0;	/* the decoders name the damage */
		if (be16(blob + off) >> 12 == VATTR_SPILL) {
			const uint8_t *p = blob + off + 2;
			sp->at = off;
			sp->present = true;
			sp->block = be64(p);
			sp->bytes = be32(p + 8);
			sp->blocks = be32(p + 12);
			/* label 0, the last attribute of the leaf part;
			 * else no chain is named (at says where) */
			if ((be16(blob + off) & 0xfff) || off + n != len) {
				sp->present = false;
				return -EUCLEAN;
			}
			return 0;
		}
		off += n;
	}
	return 0;
}

bool vspill_has(const uint8_t *blob, unsigned len)
{
	struct vspill sp;
	return vspill_find(blob, len, &sp) || sp.present;
}

/* One block of the chain checked: -EUCLEAN named, else its next block. */
static int spill_block_check(struct tux3_volume *vol, tux3_ino_t inum,
			     uint64_t block, const uint8_t *b, unsigned index,
			     unsigned want, uint64_t *next)
{
	const char *why = NULL;
	uint32_t crc = be32(b + 4);
	uint8_t *copy = malloc(vol->blocksize);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, b, vol->blocksize);
	put_be32(copy + 4, 0);
	bool crc_ok = tux3_crc32c(0, copy, vol->blocksize) == crc;
	free(copy);
	if (be32(b) != SPILL_MAGIC)
		why = "no spill magic";
	else if (!crc_ok)
		why = "its CRC does not match";
	else if (be64(b + 8) != inum)
		why = "it belongs to another inode";
	else if (be32(b + 16) != index)
		why = "it is out of its place in the chain";
	else if (be32(b + 20) != want)
		why = "its byte count is wrong";
	if (why)
		return vol_error(vol, -EUCLEAN, block, inum, TUX3_NONE,
				 "inode %" PRIu64 ": spill block %u (block %"
				 PRIu64 "): %s", inum, index, block, why);
	*next = be64(b + 24);
	return 0;
}

int vspill_read(struct tux3_volume *vol, tux3_ino_t inum,
		const struct vspill *sp, uint8_t **bytes, uint64_t *blocks)
{
	unsigned room = spill_room(vol);
	*bytes = NULL;
	if (!sp->bytes || sp->bytes > VSPILL_MAX ||
	    sp->blocks != (sp->bytes + room - 1) / room)
		return vol_error(vol, -EUCLEAN, TUX3_NONE, inum, TUX3_NONE,
				 "inode %" PRIu64 ": spill of %" PRIu32
				 " bytes in %" PRIu32 " blocks: not a size "
				 "the format allows", inum, sp->bytes,
				 sp->blocks);
	uint8_t *out = malloc(sp->bytes), *b = vol_buf_get(vol);
	if (!out || !b) {
		free(out);
		if (b)
			vol_buf_put(vol, b);
		return -ENOMEM;
	}
	uint64_t block = sp->block;
	int err = 0;
	for (unsigned i = 0; i < sp->blocks && !err; i++) {
		unsigned want = i + 1 < sp->blocks ? room :
				sp->bytes - i * room;
		uint64_t next = 0;
		if (block < vol->reserved_blocks ||
		    !vol_block_valid(vol, block)) {
			err = vol_error(vol, -EUCLEAN, block, inum, TUX3_NONE,
					"inode %" PRIu64 ": spill block %u "
					"(block %" PRIu64 ") lies outside the "
					"volume", inum, i, block);
			break;
		}
		if ((err = dev_pread(&vol->dev, b, vol->blocksize,
				     block << vol->blockbits)))
			break;
		if ((err = spill_block_check(vol, inum, block, b, i, want,
					     &next)))
			break;
		if (i + 1 == sp->blocks && next)
			err = vol_error(vol, -EUCLEAN, block, inum, TUX3_NONE,
					"inode %" PRIu64 ": the last spill "
					"block (block %" PRIu64 ") names a "
					"next one", inum, block);
		if (blocks)
			blocks[i] = block;
		memcpy(out + (size_t)i * room, b + SPILL_HEADER, want);
		block = next;
	}
	vol_buf_put(vol, b);
	if (err)
		free(out);
	else
		*bytes = out;
	return err;
}

/* vspill_find, a misplaced SPILL attribute named (-EUCLEAN). */
static int find_named(struct tux3_volume *vol, tux3_ino_t inum,
		      const uint8_t *raw, unsigned rawlen, struct vspill *sp)
{
	int err = vspill_find(raw, rawlen, sp);
	if (err)
		return vol_error(vol, err, TUX3_NONE, inum, sp->at,
				 "inode %" PRIu64 ": its SPILL attribute is "
				 "not the last one of label 0", inum);
	return 0;
}

int vspill_expand(struct tux3_volume *vol, tux3_ino_t inum,
		  const uint8_t *raw, unsigned rawlen, uint8_t **out,
		  unsigned *outlen)
{
	struct vspill sp;
	uint8_t *bytes = NULL;
	*out = NULL;
	*outlen = 0;
	int err = find_named(vol, inum, raw, rawlen, &sp);
	if (err)
		return err;
	unsigned keep = sp.present ? sp.at : rawlen;
	if (sp.present && (err = vspill_read(vol, inum, &sp, &bytes, NULL)))
		return err;
	unsigned len = keep + (sp.present ? sp.bytes : 0);
	uint8_t *b = malloc(len ? len : 1);
	if (!b) {
		free(bytes);
		return -ENOMEM;
	}
	memcpy(b, raw, keep);
	if (sp.present)
		memcpy(b + keep, bytes, sp.bytes);
	free(bytes);
	*out = b;
	*outlen = len;
	return 0;
}

int vblob_read(struct tux3_volume *vol, tux3_ino_t inum, uint8_t **blob,
	       unsigned *len)
{
	uint8_t *raw;
	unsigned rawlen;
	int err = itree_blob(vol, inum, &raw, &rawlen);
	if (err || !rawlen || !vspill_has(raw, rawlen)) {
		*blob = raw;
		*len = rawlen;
		return err;
	}
	err = vspill_expand(vol, inum, raw, rawlen, blob, len);
	free(raw);
	return err;
}

/* ---- storing ---- */

/* The attributes of a blob as byte ranges. */
struct span {
	const uint8_t *p;
	unsigned len;
};

static uint32_t span_hash(const struct span *x)
{
	uint32_t h = 2166136261u;
	for (unsigned i = 0; i < x->len; i++)
		h = (h ^ x->p[i]) * 16777619u;
	return h;
}

static bool span_same(const struct span *x, const struct span *y)
{
	return x->len == y->len && !memcmp(x->p, y->p, x->len);
}

static int spans_of(const uint8_t *blob, unsigned len, struct span **out,
		    unsigned *n)
{
	unsigned cap = 64, k = 0;
	struct span *s = malloc(cap * sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (unsigned off = 0; off < len;) {
		unsigned size = attr_size(blob, len, off);
		if (!size) {
			free(s);
			return -EUCLEAN;
		}
		if (k == cap) {
			struct span *t = realloc(s, 2 * cap * sizeof(*s));
			if (!t) {
				free(s);
				return -ENOMEM;
			}
			s = t;
			cap *= 2;
		}
		s[k++] = (struct span){ blob + off, size };
		off += size;
	}
	*out = s;
	*n = k;
	return 0;
}

/*
 * The blob without the attributes of the old chain, when every one of
 * them is in it unchanged (1, *rest malloc'd), else 0: a store that does
 * not need to write the chain again.  The chain's attributes go into a
 * hash set of byte strings, and each of the blob's is looked up there (a
 * blob holds no attribute twice).
 */
static int without_chain(const uint8_t *blob, unsigned len,
			 const uint8_t *chain, unsigned clen, uint8_t **rest,
			 unsigned *restlen)
{
	struct span *a = NULL, *c = NULL;
	unsigned na = 0, nc = 0, found = 0, size = 64;
	unsigned *set = NULL;		/* index + 1 into c; 0 empty */
	bool *gone = NULL;
	int r = spans_of(blob, len, &a, &na);
	if (!r)
		r = spans_of(chain, clen, &c, &nc);
	while (!r && size < 2 * nc)
		size *= 2;
	if (!r && (!(set = calloc(size, sizeof(*set))) ||
		   !(gone = calloc(na + 1, sizeof(*gone)))))
		r = -ENOMEM;
	if (r)
		goto out;
	for (unsigned j = 0; j < nc; j++) {
		unsigned h = span_hash(&c[j]) & (size - 1);
		while (set[h])
			h = (h + 1) & (size - 1);
		set[h] = j + 1;
	}
	for (unsigned i = 0; i < na; i++) {
		unsigned h = span_hash(&a[i]) & (size - 1);
		for (; set[h]; h = (h + 1) & (size - 1))
			if (span_same(&a[i], &c[set[h] - 1])) {
				gone[i] = true;
				found++;
				break;
			}
	}
	if (found == nc) {
		uint8_t *b = malloc(len ? len : 1);
		unsigned off = 0;
		if (!b) {
			r = -ENOMEM;
			goto out;
		}
		for (unsigned k = 0; k < na; k++)
			if (!gone[k]) {
				memcpy(b + off, a[k].p, a[k].len);
				off += a[k].len;
			}
		*rest = b;
		*restlen = off;
		r = 1;
	}
out:
	free(a);
	free(c);
	free(set);
	free(gone);
	return r;
}

/* Blocks of a chain given back with the delta: logged, and freed at once
 * when this delta allocated them, else after the commit. */
static int spill_release(struct tux3_volume *vol, const uint64_t *blocks,
			 unsigned n)
{
	int err = 0;
	for (unsigned i = 0; i < n && !err; i++) {
		err = log_bfree(vol, LOG_BFREE, blocks[i], 1);
		if (!err)
			err = blockset_has(&vol->fresh, blocks[i]) ?
			      bfree_now(vol, blocks[i], 1) :
			      bfree_deferred(vol, blocks[i], 1);
	}
	return err;
}

/* A new chain holding bytes: its blocks allocated near goal, written,
 * logged (BALLOC) and fresh.  *first is its first block. */
struct spill_fill {
	tux3_ino_t inum;
	const uint8_t *bytes;
	unsigned len, room, n;
};

static void spill_fill(void *ctx, unsigned i, uint8_t *b)
{
	const struct spill_fill *f = ctx;
	unsigned part = i + 1 < f->n ? f->room : f->len - i * f->room;
	put_be32(b, SPILL_MAGIC);
	put_be64(b + 8, f->inum);
	put_be32(b + 16, i);
	put_be32(b + 20, part);
	memcpy(b + SPILL_HEADER, f->bytes + (size_t)i * f->room, part);
}

static int spill_write(struct tux3_volume *vol, tux3_ino_t inum,
		       const uint8_t *bytes, unsigned len, uint64_t goal,
		       uint64_t *first)
{
	unsigned room = spill_room(vol);
	struct spill_fill f = { inum, bytes, len, room,
				(len + room - 1) / room };
	uint64_t *blocks;
	int err = vchain_put(vol, goal, f.n, spill_fill, &f, &blocks);
	if (err)
		return err;
	for (unsigned i = 0; i < f.n && !err;) {
		unsigned j = i + 1;
		while (j < f.n && blocks[j] == blocks[j - 1] + 1)
			j++;
		err = log_balloc(vol, blocks[i], j - i);
		for (unsigned k = i; k < j && err >= 0; k++)
			err = blockset_add(&vol->fresh, blocks[k]);
		if (err > 0)
			err = 0;
		i = j;
	}
	*first = blocks[0];
	free(blocks);
	return err;
}

/* The leaf part: rest, then the SPILL attribute naming the chain. */
static uint8_t *leaf_part(const uint8_t *rest, unsigned restlen,
			  uint64_t first, unsigned bytes, unsigned blocks,
			  unsigned *len)
{
	uint8_t *b = malloc(restlen + 2 + VSPILL_PAYLOAD);
	if (!b)
		return NULL;
	memcpy(b, rest, restlen);
	uint8_t *p = b + restlen;
	put_be16(p, VATTR_SPILL << 12);
	put_be64(p + 2, first);
	put_be32(p + 10, bytes);
	put_be32(p + 14, blocks);
	*len = restlen + 2 + VSPILL_PAYLOAD;
	return b;
}

/* Where the label-0 attributes end: the first attribute of a label. */
static unsigned label0_end(const uint8_t *blob, unsigned len)
{
	unsigned off = 0;
	while (off < len && !(be16(blob + off) & 0xfff)) {
		unsigned n = attr_size(blob, len, off);
		if (!n)
			break;
		off += n;
	}
	return off;
}

int vspill_store(struct tux3_volume *vol, tux3_ino_t inum,
		 const uint8_t *blob, unsigned len)
{
	unsigned max = vol->blocksize - ILEAF_HEADER - 2;
	uint8_t *raw = NULL, *chain = NULL, *leaf = NULL;
	uint64_t *old = NULL;
	unsigned rawlen = 0, leaflen = 0;
	struct vspill sp = { 0 };
	int err = itree_blob(vol, inum, &raw, &rawlen);

	if (!err && rawlen && vspill_find(raw, rawlen, &sp))
		sp.present = false;	/* a misplaced one names no chain */
	if (!err && rawlen && sp.present) {
		/* the old chain: to keep, or to free once replaced (a chain
		 * that does not read, its size first, is left to fsck,
		 * which frees it) */
		if (sp.blocks > VSPILL_MAX / spill_room(vol) + 1)
			sp.present = false;
		else if (!(old = malloc(sp.blocks * sizeof(*old) + 1)))
			err = -ENOMEM;
		else if (vspill_read(vol, inum, &sp, &chain, old))
			sp.present = false;
		tux3_clear_error(vol);
	}
	if (err)
		goto out;
	if (len <= max) {
		err = itree_store_leaf(vol, inum, blob, len);
		if (!err && sp.present)
			err = spill_release(vol, old, sp.blocks);
		goto out;
	}
	uint8_t *rest = NULL;
	unsigned restlen = 0;
	if (sp.present) {
		int r = without_chain(blob, len, chain, sp.bytes, &rest,
				      &restlen);
		if (r < 0) {
			err = r;
			goto out;
		}
		if (r && restlen + 2 + VSPILL_PAYLOAD <= max) {
			/* the chain stays: only the leaf changes */
			leaf = leaf_part(rest, restlen, sp.block, sp.bytes,
					 sp.blocks, &leaflen);
			free(rest);
			err = leaf ? itree_store_leaf(vol, inum, leaf, leaflen)
				   : -ENOMEM;
			goto out;
		}
		free(rest);
	}
	/* a new chain: everything but label 0 goes there */
	unsigned cut = label0_end(blob, len), bytes = len - cut;
	unsigned room = spill_room(vol), blocks = (bytes + room - 1) / room;
	uint64_t first = 0;
	if (cut + 2 + VSPILL_PAYLOAD > max || bytes > VSPILL_MAX) {
		err = vol_error(vol, -ENOSPC, TUX3_NONE, inum, TUX3_NONE,
				"inode %" PRIu64 ": the attributes of all its "
				"versions take %u bytes, more than an inode "
				"may have (%u in its leaf, %u beyond): delete "
				"a snapshot first", inum, len, max,
				VSPILL_MAX);
		goto out;
	}
	if ((err = spill_write(vol, inum, blob + cut, bytes,
			       sp.present ? sp.block : vol->reserved_blocks,
			       &first)))
		goto out;
	leaf = leaf_part(blob, cut, first, bytes, blocks, &leaflen);
	err = leaf ? itree_store_leaf(vol, inum, leaf, leaflen) : -ENOMEM;
	if (!err && sp.present)
		err = spill_release(vol, old, sp.blocks);
	if (err && !sp.present) {
		/* the leaf does not name the new chain: give it back */
		struct vspill mine = { .block = first, .bytes = bytes,
				       .blocks = blocks, .present = true };
		uint64_t *nb = malloc(blocks * sizeof(*nb));
		uint8_t *tmp = NULL;
		if (nb && !vspill_read(vol, inum, &mine, &tmp, nb))
			for (unsigned i = 0; i < blocks; i++)
				bfree_now(vol, nb[i], 1);
		free(tmp);
		free(nb);
	}
out:
	free(raw);
	free(chain);
	free(old);
	free(leaf);
	return err;
}

int vspill_blocks(struct tux3_volume *vol, tux3_ino_t inum,
		  const uint8_t *raw, unsigned rawlen, uint64_t **blocks,
		  unsigned *n)
{
	struct vspill sp;
	uint8_t *bytes = NULL;
	*blocks = NULL;
	*n = 0;
	int err = find_named(vol, inum, raw, rawlen, &sp);
	if (err)
		return err;
	if (!sp.present)
		return 0;
	if (sp.blocks > VSPILL_MAX / spill_room(vol) + 1)
		return vol_error(vol, -EUCLEAN, TUX3_NONE, inum, TUX3_NONE,
				 "inode %" PRIu64 ": spill of %" PRIu32
				 " blocks: more than a chain may have", inum,
				 sp.blocks);
	uint64_t *b = malloc(sp.blocks * sizeof(*b) + 1);
	if (!b)
		return -ENOMEM;
	err = vspill_read(vol, inum, &sp, &bytes, b);
	free(bytes);
	if (err) {
		free(b);
		return err;
	}
	*blocks = b;
	*n = sp.blocks;
	return 0;
}

int vattrs_decode_whole(struct tux3_volume *vol, tux3_ino_t inum,
			const uint8_t *raw, unsigned rawlen,
			struct vattrs *x, unsigned *bad_at)
{
	struct vspill sp;
	uint8_t *whole = NULL;
	unsigned len;
	memset(x, 0, sizeof(*x));
	int err = vspill_find(raw, rawlen, &sp);
	if (!err && !sp.present)
		return vattrs_decode(raw, rawlen, x, bad_at);
	if (!err)
		err = vspill_expand(vol, inum, raw, rawlen, &whole, &len);
	if (err) {
		*bad_at = sp.at;	/* the SPILL attribute */
		return err == -ENOMEM ? err : -EUCLEAN;
	}
	err = vattrs_decode(whole, len, x, bad_at);
	if (err == -EUCLEAN && *bad_at >= sp.at)
		*bad_at = sp.at;	/* inside the chain */
	free(whole);
	return err;
}

void vspill_sizes(const uint8_t *raw, unsigned rawlen, unsigned *label0,
		  unsigned *total)
{
	struct vspill sp;
	*label0 = label0_end(raw, rawlen);
	*total = rawlen;
	if (!vspill_find(raw, rawlen, &sp) && sp.present) {
		/* a damaged count reads as a full chain (the store then
		 * reads the chain, which checks it) */
		*total = sp.at + (sp.bytes > VSPILL_MAX ? VSPILL_MAX :
				  sp.bytes);
		if (*label0 > sp.at)
			*label0 = sp.at;
	}
}

unsigned vspill_strip(uint8_t *blob, unsigned len)
{
	unsigned off = 0, out = 0;
	while (off < len) {
		unsigned n = attr_size(blob, len, off);
		if (!n) {
			/* the rest does not parse: kept as it is, for the
			 * decoders to name */
			memmove(blob + out, blob + off, len - off);
			out += len - off;
			break;
		}
		if (be16(blob + off) >> 12 != VATTR_SPILL) {
			memmove(blob + out, blob + off, n);
			out += n;
		}
		off += n;
	}
	return out;
}

unsigned vspill_label0_growth(const uint8_t *raw, unsigned rawlen)
{
	static const unsigned fixed[] = { 0, 1, 2, 3, 4, 5, ATTR_ATIME };
	unsigned have = 0, grow = 0;
	for (unsigned off = 0; off < rawlen;) {
		unsigned n = attr_size(raw, rawlen, off);
		unsigned head = n ? be16(raw + off) : 0;
		if (!n || (head & 0xfff))
			break;
		have |= 1u << (head >> 12);
		off += n;
	}
	for (unsigned i = 0; i < sizeof(fixed) / sizeof(*fixed); i++) {
		static const unsigned size[16] = {
			[0] = 8, [1] = 12, [2] = 8, [3] = 16, [4] = 4, [5] = 8,
			[ATTR_ATIME] = 8,
		};
		if (!(have & (1u << fixed[i])))
			grow += 2 + size[fixed[i]];
	}
	/* and an ABSENT marker of label 0 per kind, 8 kinds at most */
	return grow + 8 * 6;
}

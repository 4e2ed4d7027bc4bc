/*
 * tux3image -s: names and symlink targets scrambled.
 *
 * One map for the whole image: a name gets its scramble the first time it
 * is met, and keeps it everywhere (every directory, every symlink
 * component).  The map is injective (a scramble already given is never
 * given again), so no directory gets two equal names.  A scramble has the
 * length of the name (directory records keep their sizes), is made of
 * letters and digits while that space has room (then of printable ASCII,
 * then of any byte but '/' and NUL), is never "." or "..", and differs
 * from the name (unless a length has no other scramble left).  "lost+found" is kept (fsck's name);
 * "." and ".." and empty components in symlink targets too.  The bytes come
 * from SipHash-2-4 under a random key drawn per run: the same volume
 * scrambles differently each time, and a scramble cannot be checked
 * against a guessed name.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include "image.h"

static const char alnum[] =
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
#define NALNUM (sizeof(alnum) - 1)

/* ---- SipHash-2-4 ---- */
static uint64_t rotl(uint64_t x, int b)
{
	return x << b | x >> (64 - b);
}

#define SIPROUND do { \
	v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32); \
	v2 += v3; v3 = rotl(v3, 16); v3 ^= v2; \
	v0 += v3; v3 = rotl(v3, 21); v3 ^= v0; \
	v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32); \
} while (0)

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint64_t siphash(const uint64_t key[2], const uint8_t *in, size_t len)
{
	uint64_t v0 = 0x736f6d6570736575ull ^ key[0];
	uint64_t v1 = 0x646f72616e646f6dull ^ key[1];
	uint64_t v2 = 0x6c7967656e657261ull ^ key[0];
	uint64_t v3 = 0x7465646279746573ull ^ key[1];
	size_t i;
	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t m = le64(in + i);
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	uint64_t last = (uint64_t)(len & 0xff) << 56;
	for (size_t k = 0; i + k < len; k++)
		last |= (uint64_t)in[i + k] << (8 * k);
	v3 ^= last;
	SIPROUND;
	SIPROUND;
	v0 ^= last;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

/* ---- a table of byte strings ---- */
struct entry {
	uint8_t *key, *val;	/* val NULL: a set member */
	uint32_t len;
	uint64_t hash;
};

struct table {
	struct entry *slot;
	size_t cap, used;
};

static struct entry *table_find(struct table *t, const uint8_t *key,
				uint32_t len, uint64_t hash)
{
	if (!t->cap)
		return NULL;
	for (size_t i = hash & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		struct entry *e = &t->slot[i];
		if (!e->key)
			return NULL;
		if (e->hash == hash && e->len == len && !memcmp(e->key, key, len))
			return e;
	}
}

static int table_add(struct table *t, uint8_t *key, uint32_t len,
		     uint64_t hash, uint8_t *val)
{
	if ((t->used + 1) * 2 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct entry *slot = calloc(cap, sizeof(*slot));
		if (!slot)
			return -ENOMEM;
		for (size_t i = 0; i < t->cap; i++) {
			struct entry *e = &t->slot[i];
			if (!e->key)
				continue;
			size_t j = e->hash & (cap - 1);
			while (slot[j].key)
				j = (j + 1) & (cap - 1);
			slot[j] = *e;
		}
		free(t->slot);
		t->slot = slot;
		t->cap = cap;
	}
	size_t i = hash & (t->cap - 1);
	while (t->slot[i].key)
		i = (i + 1) & (t->cap - 1);
	t->slot[i] = (struct entry){ key, val, len, hash };
	t->used++;
	return 0;
}

struct scrambler {
	uint64_t key[2];	/* the secret */
	uint64_t tkey[2];	/* for the tables (not secret) */
	struct table map;	/* name -> scramble */
	struct table given;	/* scrambles given (and names kept) */
	uint8_t *tmp;
	size_t tmplen;
};

static const char *const kept[] = { "lost+found" };

static uint64_t thash(const struct scrambler *s, const uint8_t *p,
		      uint32_t len)
{
	return siphash(s->tkey, p, len);
}

struct scrambler *scrambler_new(void)
{
	struct scrambler *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	uint8_t seed[32];
	size_t got = 0;
	while (got < sizeof(seed)) {
		ssize_t n = getrandom(seed + got, sizeof(seed) - got, 0);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			free(s);
			return NULL;
		}
		got += (size_t)n;
	}
	s->key[0] = le64(seed);
	s->key[1] = le64(seed + 8);
	s->tkey[0] = le64(seed + 16);
	s->tkey[1] = le64(seed + 24);
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		uint32_t len = (uint32_t)strlen(kept[i]);
		uint8_t *k = malloc(len);
		if (!k) {
			scrambler_free(s);
			return NULL;
		}
		memcpy(k, kept[i], len);
		uint64_t h = thash(s, k, len);
		/* a kept name maps to itself: its val is its own key */
		if (table_add(&s->map, k, len, h, k) ||
		    table_add(&s->given, k, len, h, NULL)) {
			free(k);
			scrambler_free(s);
			return NULL;
		}
	}
	return s;
}

void scrambler_free(struct scrambler *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->map.cap; i++) {
		struct entry *e = &s->map.slot[i];
		if (!e->key)
			continue;
		if (e->val != e->key)
			free(e->val);	/* also the given set's key */
		free(e->key);
	}
	free(s->map.slot);
	free(s->given.slot);
	free(s->tmp);
	free(s);
}

uint64_t scrambler_names(const struct scrambler *s)
{
	return s->map.used - sizeof(kept) / sizeof(kept[0]);
}

static int forbidden(const uint8_t *c, unsigned len)
{
	return (len == 1 && c[0] == '.') ||
	       (len == 2 && c[0] == '.' && c[1] == '.');
}

/* Candidate `attempt` for a name: first letters and digits, then
 * printable ASCII but '/' (93 values). */
static int candidate(struct scrambler *s, const uint8_t *name, unsigned len,
		     unsigned attempt, uint8_t *out)
{
	size_t need = len + 16;
	if (need > s->tmplen) {
		uint8_t *t = realloc(s->tmp, need);
		if (!t)
			return -ENOMEM;
		s->tmp = t;
		s->tmplen = need;
	}
	memcpy(s->tmp, name, len);
	for (unsigned i = 0; i < len; i += 8) {
		uint8_t *tail = s->tmp + len;
		for (int k = 0; k < 4; k++)
			tail[k] = (uint8_t)(attempt >> (8 * k));
		for (int k = 0; k < 4; k++)
			tail[4 + k] = (uint8_t)(i >> (8 * k));
		uint64_t h = siphash(s->key, s->tmp, len + 8);
		for (unsigned k = 0; k < 8 && i + k < len; k++, h >>= 8) {
			unsigned v = (unsigned)(h & 0xff);
			out[i + k] = attempt < 16 ?
				(uint8_t)alnum[v % NALNUM] :
				(uint8_t)(v % 93 + 33 >= '/' ? v % 93 + 34 :
					  v % 93 + 33);
		}
	}
	return 0;
}

/* Next name in the 254-byte alphabet, as an odometer. */
static void odometer(uint8_t *c, unsigned len)
{
	for (unsigned i = len; i--;) {
		uint8_t v = c[i] == 255 ? 1 : (uint8_t)(c[i] + 1);
		if (v == '/')
			v++;
		c[i] = v;
		if (v != 1)
			return;
	}
}

int scramble_name(struct scrambler *s, uint8_t *name, unsigned len)
{
	if (!len)
		return 0;
	if (forbidden(name, len))
		return 0;	/* "." and ".." keep their meaning */
	uint64_t h = thash(s, name, len);
	struct entry *e = table_find(&s->map, name, len, h);
	if (e) {
		memcpy(name, e->val, len);
		return 0;
	}
	uint8_t *key = malloc(len), *out = malloc(len);
	if (!key || !out)
		goto nomem;
	memcpy(key, name, len);
	uint64_t oh = 0;
	unsigned attempt;
	int found = 0;
	/* never the name itself, unless nothing else is left */
	for (attempt = 0; attempt < 32 && !found; attempt++) {
		if (candidate(s, name, len, attempt, out))
			goto nomem;
		if (forbidden(out, len) || !memcmp(out, name, len))
			continue;
		oh = thash(s, out, len);
		found = !table_find(&s->given, out, len, oh);
	}
	/* a crowded length (short names): count on from the last try,
	 * through every byte but '/' and NUL */
	for (uint64_t n = 0; !found && n < (1u << 24); n++) {
		odometer(out, len);
		if (forbidden(out, len) || !memcmp(out, name, len))
			continue;
		oh = thash(s, out, len);
		found = !table_find(&s->given, out, len, oh);
	}
	if (!found) {
		memcpy(out, name, len);
		oh = thash(s, out, len);
		found = !table_find(&s->given, out, len, oh);
	}
	if (!found) {
		free(key);
		free(out);
		return -ENOSPC;
	}
	if (table_add(&s->map, key, len, h, out))
		goto nomem;
	if (table_add(&s->given, out, len, oh, NULL))
		return -ENOMEM;	/* key and out now belong to the map */
	memcpy(name, out, len);
	return 0;
nomem:
	free(key);
	free(out);
	return -ENOMEM;
}

int scramble_target(struct scrambler *s, uint8_t *t, size_t len)
{
	size_t i = 0;
	while (i < len) {
		size_t j = i;
		while (j < len && t[j] != '/')
			j++;
		if (j > i) {
			size_t n = j - i;
			int e;
			if (n > UINT32_MAX / 2)
				return -EINVAL;
			if ((e = scramble_name(s, t + i, (unsigned)n)))
				return e;
		}
		i = j + 1;
	}
	return 0;
}

/* format.md section 8: records of {inum be64, rec_len be16 (65535 means
 * 65536), name_len u8, type u8, name}. */
int scramble_dirblock(struct scrambler *s, uint8_t *blk, unsigned size,
		      unsigned *bad_offset)
{
	unsigned off = 0;
	while (off < size) {
		if (size - off < 16)
			goto bad;
		unsigned rec_len = (unsigned)blk[off + 8] << 8 | blk[off + 9];
		unsigned name_len = blk[off + 10];
		if (rec_len == 65535)
			rec_len = 65536;
		if (rec_len < 16 || rec_len % 8 || rec_len > size - off ||
		    12 + name_len > rec_len)
			goto bad;
		if (name_len) {
			int e = scramble_name(s, blk + off + 12, name_len);
			if (e)
				return e;
		}
		/* slack: remains of longer names, deleted records */
		memset(blk + off + 12 + name_len, 0, rec_len - 12 - name_len);
		off += rec_len;
	}
	return 0;
bad:
	*bad_offset = off;
	memset(blk + off, 0, size - off);
	return 1;
}

/* ---- the blocks changed by -s ---- */

static int ovr_cmp(const void *a, const void *b)
{
	const struct override *x = a, *y = b;
	return x->block < y->block ? -1 : x->block > y->block;
}

static struct override *ovr_find(struct image *im, uint64_t block)
{
	struct override key = { .block = block };
	if (!im->novr)
		return NULL;
	return bsearch(&key, im->ovr, im->novr, sizeof(*im->ovr), ovr_cmp);
}

/* A block of a symlink: its content is decided here. */
static uint8_t *ovr_get(struct image *im, uint64_t block)
{
	for (size_t i = 0; i < im->novr; i++)	/* unsorted while built */
		if (im->ovr[i].block == block)
			return im->ovr[i].data;
	return NULL;
}

#define LINK_MAX_BYTES (1u << 16)

static int prepare_link(struct image *im, const struct symlink_rec *l,
			uint8_t *buf, size_t buflen, struct table *seen)
{
	unsigned bs = im->blocksize;
	uint64_t size = l->size;
	if (size > buflen) {
		image_warn(im, "symlink inode %" PRIu64 ": size %" PRIu64
			   " is too large for a target: its blocks are "
			   "zeroed in the image", l->ino, size);
		size = 0;
	}
	uint64_t nlog = (size + bs - 1) / bs;
	memset(buf, 0, buflen);
	/* read what is mapped of the target */
	for (size_t k = 0; k < l->count; k++) {
		const struct lnk_extent *x = &im->lnk_ext[l->first + k];
		for (uint64_t i = 0; i < x->count; i++) {
			uint64_t lg = x->logical + i;
			if (lg >= nlog)
				break;
			if (pread(im->fd, buf + lg * bs, bs,
				  (off_t)((x->physical + i) << im->blockbits))
			    != (ssize_t)bs)
				memset(buf + lg * bs, 0, bs);
		}
	}
	/* the target without its trailing NUL; nothing after it */
	if (size > 1) {
		int e = scramble_target(im->scr, buf, size - 1);
		if (e)
			return e;
	}
	if (size)
		memset(buf + size, 0, nlog * bs - size);
	/* and back onto the blocks, in place of what the disk holds */
	for (size_t k = 0; k < l->count; k++) {
		const struct lnk_extent *x = &im->lnk_ext[l->first + k];
		for (uint64_t i = 0; i < x->count; i++) {
			uint64_t lg = x->logical + i, pb = x->physical + i;
			uint8_t key[8];
			for (int b = 0; b < 8; b++)
				key[b] = (uint8_t)(pb >> (8 * b));
			uint64_t h = siphash(im->scr->tkey, key, 8);
			uint8_t *d;
			if (table_find(seen, key, 8, h)) {
				d = ovr_get(im, pb);
			} else {
				uint8_t *kc = malloc(8);
				if (!kc)
					return -ENOMEM;
				memcpy(kc, key, 8);
				if (table_add(seen, kc, 8, h, NULL)) {
					free(kc);
					return -ENOMEM;
				}
				if (im->novr == im->ovr_cap) {
					size_t cap = im->ovr_cap ?
						     im->ovr_cap * 2 : 64;
					struct override *o = realloc(im->ovr,
						cap * sizeof(*o));
					if (!o)
						return -ENOMEM;
					im->ovr = o;
					im->ovr_cap = cap;
				}
				if (!(d = calloc(1, bs)))
					return -ENOMEM;
				im->ovr[im->novr++] = (struct override){ pb, d };
			}
			if (d && lg < nlog)
				memcpy(d, buf + lg * bs, bs);
		}
	}
	return 0;
}

int image_prepare_scramble(struct image *im)
{
	if (!im->scramble)
		return 0;
	if (!(im->scr = scrambler_new()))
		return -ENOMEM;
	size_t buflen = LINK_MAX_BYTES;
	if (buflen < im->blocksize)
		buflen = im->blocksize;
	uint8_t *buf = malloc(buflen);
	struct table seen = { 0 };
	int e = buf ? 0 : -ENOMEM;
	/* `seen` says which blocks already have an override; only a block
	 * shared by two symlinks (damage, or the two walks) looks its
	 * earlier copy up, with a linear scan */
	for (size_t i = 0; i < im->nlnk && !e; i++)
		e = prepare_link(im, &im->lnk[i], buf, buflen, &seen);
	for (size_t i = 0; i < seen.cap; i++)
		free(seen.slot[i].key);
	free(seen.slot);
	free(buf);
	if (!e && im->novr)
		qsort(im->ovr, im->novr, sizeof(*im->ovr), ovr_cmp);
	return e;
}

int image_transform(struct image *im, uint64_t block, uint8_t *buf)
{
	if (!im->scramble)
		return 0;
	struct override *o = ovr_find(im, block);
	if (o) {
		memcpy(buf, o->data, im->blocksize);
		return 0;
	}
	if (blkmap_test(&im->dirb, block)) {
		unsigned bad = 0;
		int r = scramble_dirblock(im->scr, buf, im->blocksize, &bad);
		if (r < 0)
			return r;
		if (r > 0)
			image_warn(im, "directory block %" PRIu64 ": records "
				   "do not tile the block from offset %u: the "
				   "rest is zeroed in the scrambled image",
				   block, bad);
	}
	return 0;
}

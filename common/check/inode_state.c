/*
 * The namespace check's per-inode state (inode_state.h).  A flat array
 * of a struct per inode costs 16 bytes an inode and a binary search per
 * directory entry; here an inode takes half a byte, a code:
 *
 *   0      no inode
 *   1      BIG: everything in the table of exact counters
 *   2..15  an inode of entry type 1..7 (TUX3_DT_*) and link count 1, not
 *          an orphan: (type - 1) * 2 + 2, plus 1 once one name was met
 *
 * A directory, an inode whose link count is not 1, an orphan, an inode
 * of no known type, and an inode met under a second name move to the
 * table of exact counters (an entry of 24 bytes, at most half full): in
 * the usual tree, about one inode in a hundred or a thousand.  Inode
 * numbers are grouped in chunks of 1,024 (512 bytes); a chunk is made
 * when one of its inodes is added, so a sparse table costs at most
 * 512 bytes (plus 16) for each inode far from the rest.  The walker adds
 * inodes in number order and a directory's entries mostly name inodes
 * made next to each other, so the chunk found last answers most lookups
 * without the binary search.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "tux3.h"
#include "check/inode_state.h"

#define CHUNK_BITS	10
#define CHUNK		(1u << CHUNK_BITS)
#define CHUNK_BYTES	(CHUNK / 2)

#define C_NONE		0
#define C_BIG		1
#define C_SMALL		2	/* the first code of a small inode */
#define C_ONE		1	/* in a small code: one name met */

static unsigned small_code(unsigned dtype)
{
	return (dtype - 1) * 2 + C_SMALL;
}

static unsigned small_dtype(unsigned code)
{
	return ((code - C_SMALL) >> 1) + 1;
}

/* ---- chunks ---- */

/* The index of the chunk holding inum, or where it would go (*found
 * false). */
static size_t chunk_index(struct inode_state *s, uint64_t inum, bool *found)
{
	uint64_t base = inum & ~(uint64_t)(CHUNK - 1);
	if (s->last < s->nchunks && s->chunks[s->last].base == base) {
		*found = true;
		return s->last;
	}
	size_t lo = 0, hi = s->nchunks;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->chunks[mid].base == base) {
			*found = true;
			s->last = mid;
			return mid;
		}
		if (s->chunks[mid].base < base)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

/* The byte holding inum's code (the low nibble for an even number), or
 * NULL when its chunk was never made. */
static uint8_t *byte_of(struct inode_state *s, uint64_t inum)
{
	bool found;
	size_t i = chunk_index(s, inum, &found);
	return found ? &s->chunks[i].bytes[(inum & (CHUNK - 1)) >> 1] : NULL;
}

static unsigned code_in(const uint8_t *b, uint64_t inum)
{
	return b ? (*b >> ((inum & 1) * 4)) & 15 : C_NONE;
}

static unsigned code_of(struct inode_state *s, uint64_t inum)
{
	return code_in(byte_of(s, inum), inum);
}

static void code_set(uint8_t *b, uint64_t inum, unsigned code)
{
	unsigned shift = (inum & 1) * 4;
	*b = (uint8_t)((*b & ~(15u << shift)) | (code << shift));
}

static uint8_t *byte_make(struct inode_state *s, uint64_t inum)
{
	bool found;
	size_t i = chunk_index(s, inum, &found);
	if (found)
		return &s->chunks[i].bytes[(inum & (CHUNK - 1)) >> 1];
	if (s->nchunks == s->capchunks) {
		size_t cap = s->capchunks ? s->capchunks * 2 : 64;
		struct ino_chunk *n = realloc(s->chunks, cap * sizeof(*n));
		if (!n)
			return NULL;
		s->chunks = n;
		s->capchunks = cap;
	}
	uint8_t *bytes = calloc(CHUNK_BYTES, 1);
	if (!bytes)
		return NULL;
	memmove(&s->chunks[i + 1], &s->chunks[i],
		(s->nchunks - i) * sizeof(*s->chunks));
	s->chunks[i] = (struct ino_chunk){
		.base = inum & ~(uint64_t)(CHUNK - 1), .bytes = bytes };
	s->nchunks++;
	s->last = i;
	return &bytes[(inum & (CHUNK - 1)) >> 1];
}

/* ---- exact counters ---- */

static size_t big_slot(uint64_t inum, size_t cap)
{
	uint64_t h = inum * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 32) & (cap - 1);
}

static struct ino_big *big_find(struct inode_state *s, uint64_t inum)
{
	if (!s->capbig)
		return NULL;
	for (size_t i = big_slot(inum, s->capbig);;
	     i = (i + 1) & (s->capbig - 1)) {
		if (s->big[i].inum == inum)
			return &s->big[i];
		if (!s->big[i].inum)
			return NULL;
	}
}

static void big_place(struct ino_big *table, size_t cap,
		      const struct ino_big *e)
{
	size_t i = big_slot(e->inum, cap);
	while (table[i].inum)
		i = (i + 1) & (cap - 1);
	table[i] = *e;
}

/* inum is never 0 here: inode numbers below the root's are not added */
static struct ino_big *big_add(struct inode_state *s,
			       const struct ino_big *e)
{
	if ((s->nbig + 1) * 2 > s->capbig) {
		size_t cap = s->capbig ? s->capbig * 2 : 256;
		struct ino_big *n = calloc(cap, sizeof(*n));
		if (!n)
			return NULL;
		for (size_t i = 0; i < s->capbig; i++)
			if (s->big[i].inum)
				big_place(n, cap, &s->big[i]);
		free(s->big);
		s->big = n;
		s->capbig = cap;
	}
	big_place(s->big, s->capbig, e);
	s->nbig++;
	return big_find(s, e->inum);
}

/* ---- the interface ---- */

int inode_state_add(struct inode_state *s, uint64_t inum, unsigned dtype,
		    bool orphan, uint32_t nlink)
{
	uint8_t *b = byte_make(s, inum);
	if (!b)
		return -ENOMEM;
	if (code_in(b, inum) != C_NONE)
		return 0;
	s->inodes++;
	if (dtype == TUX3_DT_DIR || nlink != 1 || orphan || dtype < 1 ||
	    dtype > 7) {
		if (!big_add(s, &(struct ino_big){ .inum = inum,
						   .nlink = nlink,
						   .dtype = (uint8_t)dtype,
						   .orphan = orphan }))
			return -ENOMEM;
		code_set(b, inum, C_BIG);
		return 0;
	}
	code_set(b, inum, small_code(dtype));
	return 0;
}

bool inode_state_get(struct inode_state *s, uint64_t inum,
		     struct ino_info *info)
{
	unsigned code = code_of(s, inum);
	if (code == C_NONE)
		return false;
	if (code != C_BIG) {
		*info = (struct ino_info){ .dtype = small_dtype(code),
					   .nlink = 1,
					   .count = (code - C_SMALL) & C_ONE };
		return true;
	}
	const struct ino_big *e = big_find(s, inum);
	*info = (struct ino_info){ .nlink = 1 };
	if (e)
		*info = (struct ino_info){ .dtype = e->dtype & 15,
					   .orphan = e->orphan,
					   .nlink = e->nlink, .count = e->count,
					   .dirnames = e->dirnames };
	return true;
}

/* The exact counters of a present inode, moving it there if need be. */
static struct ino_big *counters(struct inode_state *s, uint64_t inum)
{
	uint8_t *b = byte_of(s, inum);
	unsigned code = code_in(b, inum);
	if (code == C_NONE)
		return NULL;
	if (code == C_BIG)
		return big_find(s, inum);
	struct ino_big *e = big_add(s, &(struct ino_big){
		.inum = inum, .nlink = 1,
		.count = (code - C_SMALL) & C_ONE,
		.dtype = (uint8_t)small_dtype(code) });
	if (e)
		code_set(b, inum, C_BIG);
	return e;
}

int inode_state_named(struct inode_state *s, uint64_t inum, uint64_t parent)
{
	uint8_t *b = byte_of(s, inum);
	unsigned code = code_in(b, inum);
	if (code == C_NONE)
		return 0;
	/* the usual case: a first name (a small code is never a directory) */
	if (code != C_BIG && !((code - C_SMALL) & C_ONE)) {
		code_set(b, inum, code | C_ONE);
		return 0;
	}
	struct ino_big *e = counters(s, inum);
	if (!e)
		return -ENOMEM;
	if ((e->dtype & 15) != TUX3_DT_DIR) {
		if (e->count < UINT32_MAX)
			e->count++;
		return 0;
	}
	if (e->dirnames < 3)
		e->dirnames++;
	struct ino_big *p = parent ? counters(s, parent) : NULL;
	if (parent && !p)
		return code_of(s, parent) != C_NONE ? -ENOMEM : 0;
	if (p && p->count < UINT32_MAX)
		p->count++;
	return 0;
}

int inode_state_set_dirnames(struct inode_state *s, uint64_t inum,
			     unsigned dirnames)
{
	struct ino_big *e = counters(s, inum);
	if (!e)
		return code_of(s, inum) != C_NONE ? -ENOMEM : 0;
	e->dirnames = (uint8_t)dirnames;
	return 0;
}

int inode_state_each(struct inode_state *s,
		     int (*fn)(void *ctx, uint64_t inum,
			       const struct ino_info *info), void *ctx)
{
	for (size_t c = 0; c < s->nchunks; c++) {
		for (unsigned i = 0; i < CHUNK; i++) {
			uint64_t inum = s->chunks[c].base + i;
			struct ino_info info;
			if (code_in(&s->chunks[c].bytes[i >> 1], inum) ==
			    C_NONE || !inode_state_get(s, inum, &info))
				continue;
			int ret = fn(ctx, inum, &info);
			if (ret)
				return ret;
		}
	}
	return 0;
}

size_t inode_state_bytes(const struct inode_state *s)
{
	return s->nchunks * (CHUNK_BYTES + sizeof(*s->chunks)) +
	       (s->capchunks - s->nchunks) * sizeof(*s->chunks) +
	       s->capbig * sizeof(*s->big);
}

void inode_state_free(struct inode_state *s)
{
	for (size_t c = 0; c < s->nchunks; c++)
		free(s->chunks[c].bytes);
	free(s->chunks);
	free(s->big);
	memset(s, 0, sizeof(*s));
}

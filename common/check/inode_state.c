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
 * numbers are grouped in chunks of 1,024, made when one of their inodes
 * is added.  A chunk keeps its codes as runs (2 bytes a run of equal
 * codes) while that is the smaller form, and as 512 bytes of nibbles
 * past 64 runs: inodes made in order by one program are runs of a few
 * kinds (a volume of 1,000,000 small files in directories of 1,000:
 * about 7 runs, 14 bytes, a chunk), as e2fsck's red-black-tree bitmaps
 * keep runs of inodes, so the state grows with what differs, not with the
 * inode count; a sparse or mixed table costs at most 512 bytes (plus the
 * chunk's head) for each 1,024 numbers.  The walker adds inodes in number
 * order and a directory's entries mostly name inodes made next to each
 * other, so the chunk found last answers most lookups without the binary
 * search.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "tux3.h"
#include "check/inode_state.h"

#define CHUNK_BITS	10
#define CHUNK		(1u << CHUNK_BITS)
#define CHUNK_BYTES	(CHUNK / 2)
#define RUNS_MAX	64	/* 128 bytes: then the 512 of nibbles */

/* A run: its first offset in the chunk (10 bits) and its code (4). */
#define RUN(start, code)	((uint16_t)((start) << 4 | (code)))
#define RUN_START(r)		((unsigned)(r) >> 4)
#define RUN_CODE(r)		((unsigned)(r) & 15)

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

/* ---- one chunk: runs or nibbles ---- */

/* The run holding off (runs[0] starts at 0). */
static unsigned run_find(const struct ino_chunk *c, unsigned off)
{
	unsigned lo = 1, hi = c->nruns;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		if (RUN_START(c->runs[mid]) > off)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo - 1;
}

static unsigned chunk_get(const struct ino_chunk *c, uint64_t inum)
{
	unsigned off = (unsigned)(inum & (CHUNK - 1));
	if (c->bytes)
		return (c->bytes[off >> 1] >> ((off & 1) * 4)) & 15;
	return RUN_CODE(c->runs[run_find(c, off)]);
}

static void nibble_set(uint8_t *bytes, unsigned off, unsigned code)
{
	unsigned shift = (off & 1) * 4;
	uint8_t *b = &bytes[off >> 1];
	*b = (uint8_t)((*b & ~(15u << shift)) | (code << shift));
}

/* Append run (start, code) to t[0, *m), merged into the last if the code
 * is the same. */
static void run_push(uint16_t *t, unsigned *m, unsigned start, unsigned code)
{
	if (*m && RUN_CODE(t[*m - 1]) == code)
		return;
	t[(*m)++] = RUN(start, code);
}

/* The runs t[0, m) as nibbles. */
static uint8_t *runs_to_bytes(const uint16_t *t, unsigned m)
{
	uint8_t *bytes = calloc(CHUNK_BYTES, 1);
	if (!bytes)
		return NULL;
	for (unsigned k = 0; k < m; k++) {
		unsigned end = k + 1 < m ? RUN_START(t[k + 1]) : CHUNK;
		for (unsigned off = RUN_START(t[k]); off < end; off++)
			nibble_set(bytes, off, RUN_CODE(t[k]));
	}
	return bytes;
}

/* Set inum's code: the run holding it is cut in up to three and merged
 * with its neighbours; 0 or -ENOMEM (the chunk unchanged). */
static int chunk_set(struct ino_chunk *c, uint64_t inum, unsigned code)
{
	unsigned off = (unsigned)(inum & (CHUNK - 1));
	if (c->bytes) {
		nibble_set(c->bytes, off, code);
		return 0;
	}
	unsigned k = run_find(c, off), old = RUN_CODE(c->runs[k]);
	if (old == code)
		return 0;
	unsigned s = RUN_START(c->runs[k]);
	unsigned e = k + 1 < c->nruns ? RUN_START(c->runs[k + 1]) : CHUNK;
	uint16_t t[RUNS_MAX + 2];
	unsigned m = 0;
	for (unsigned i = 0; i < c->nruns; i++) {
		if (i != k) {
			run_push(t, &m, RUN_START(c->runs[i]),
				 RUN_CODE(c->runs[i]));
			continue;
		}
		if (off > s)
			run_push(t, &m, s, old);
		run_push(t, &m, off, code);
		if (off + 1 < e)
			run_push(t, &m, off + 1, old);
	}
	if (m > RUNS_MAX) {
		uint8_t *bytes = runs_to_bytes(t, m);
		if (!bytes)
			return -ENOMEM;
		free(c->runs);
		c->runs = NULL;
		c->nruns = c->capruns = 0;
		c->bytes = bytes;
		return 0;
	}
	if (m > c->capruns) {
		unsigned cap = c->capruns * 2;
		while (cap < m)
			cap *= 2;
		uint16_t *n = realloc(c->runs, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		c->runs = n;
		c->capruns = (uint16_t)cap;
	}
	memcpy(c->runs, t, m * sizeof(*t));
	c->nruns = (uint16_t)m;
	return 0;
}

static size_t chunk_bytes(const struct ino_chunk *c)
{
	return c->bytes ? CHUNK_BYTES : c->capruns * sizeof(*c->runs);
}

/* ---- the chunks ---- */

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

/* The chunk holding inum, NULL when it was never made. */
static struct ino_chunk *chunk_of(struct inode_state *s, uint64_t inum)
{
	bool found;
	size_t i = chunk_index(s, inum, &found);
	return found ? &s->chunks[i] : NULL;
}

static unsigned code_of(struct inode_state *s, uint64_t inum)
{
	struct ino_chunk *c = chunk_of(s, inum);
	return c ? chunk_get(c, inum) : C_NONE;
}

/* The chunk holding inum, made (all C_NONE) if need be; NULL: -ENOMEM.
 * It moves the chunks after it: a pointer to another chunk is stale. */
static struct ino_chunk *chunk_make(struct inode_state *s, uint64_t inum)
{
	bool found;
	size_t i = chunk_index(s, inum, &found);
	if (found)
		return &s->chunks[i];
	if (s->nchunks == s->capchunks) {
		size_t cap = s->capchunks ? s->capchunks * 2 : 64;
		struct ino_chunk *n = realloc(s->chunks, cap * sizeof(*n));
		if (!n)
			return NULL;
		s->chunks = n;
		s->capchunks = cap;
	}
	uint16_t *runs = malloc(4 * sizeof(*runs));
	if (!runs)
		return NULL;
	runs[0] = RUN(0, C_NONE);
	memmove(&s->chunks[i + 1], &s->chunks[i],
		(s->nchunks - i) * sizeof(*s->chunks));
	s->chunks[i] = (struct ino_chunk){
		.base = inum & ~(uint64_t)(CHUNK - 1), .runs = runs,
		.nruns = 1, .capruns = 4 };
	s->nchunks++;
	s->last = i;
	return &s->chunks[i];
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
	struct ino_chunk *c = chunk_make(s, inum);
	if (!c)
		return -ENOMEM;
	if (chunk_get(c, inum) != C_NONE)
		return 0;
	if (dtype == TUX3_DT_DIR || nlink != 1 || orphan || dtype < 1 ||
	    dtype > 7) {
		if (!big_find(s, inum) &&
		    !big_add(s, &(struct ino_big){ .inum = inum,
						   .nlink = nlink,
						   .dtype = (uint8_t)dtype,
						   .orphan = orphan }))
			return -ENOMEM;
		if (chunk_set(c, inum, C_BIG))
			return -ENOMEM;	/* (its counters stay, unused) */
		s->inodes++;
		return 0;
	}
	if (chunk_set(c, inum, small_code(dtype)))
		return -ENOMEM;
	s->inodes++;
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
	struct ino_chunk *c = chunk_of(s, inum);
	unsigned code = c ? chunk_get(c, inum) : C_NONE;
	if (code == C_NONE)
		return NULL;
	if (code == C_BIG)
		return big_find(s, inum);
	if (!big_find(s, inum) && !big_add(s, &(struct ino_big){
			.inum = inum, .nlink = 1,
			.count = (code - C_SMALL) & C_ONE,
			.dtype = (uint8_t)small_dtype(code) }))
		return NULL;
	/* (a failure leaves the counters made, unused until a retry) */
	return chunk_set(c, inum, C_BIG) ? NULL : big_find(s, inum);
}

int inode_state_named(struct inode_state *s, uint64_t inum, uint64_t parent)
{
	struct ino_chunk *c = chunk_of(s, inum);
	unsigned code = c ? chunk_get(c, inum) : C_NONE;
	if (code == C_NONE)
		return 0;
	/* the usual case: a first name (a small code is never a directory) */
	if (code != C_BIG && !((code - C_SMALL) & C_ONE))
		return chunk_set(c, inum, code | C_ONE);
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
			if (chunk_get(&s->chunks[c], inum) == C_NONE ||
			    !inode_state_get(s, inum, &info))
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
	size_t n = s->capchunks * sizeof(*s->chunks) +
		   s->capbig * sizeof(*s->big);
	for (size_t c = 0; c < s->nchunks; c++)
		n += chunk_bytes(&s->chunks[c]);
	return n;
}

void inode_state_free(struct inode_state *s)
{
	for (size_t c = 0; c < s->nchunks; c++) {
		free(s->chunks[c].bytes);
		free(s->chunks[c].runs);
	}
	free(s->chunks);
	free(s->big);
	memset(s, 0, sizeof(*s));
}

/*
 * The namespace check's per-inode state (inode_state.h).  A flat array
 * of a struct per inode costs 16 bytes an inode and a binary search per
 * directory entry; here an inode takes one byte:
 *
 *   bits 0-3  its directory-entry type (TUX3_DT_*)
 *   bit 4     ONE: one name met (an inode of link count 1)
 *   bit 5     BIG: its counters are in the table of exact counters
 *   bit 6     an orphan
 *   bit 7     present
 *
 * A directory, an inode whose link count is not 1 and an inode met
 * under a second name move to the table of exact counters (an entry of
 * 24 bytes, at most half full): in the usual tree, about one inode in a
 * hundred or a thousand.  Inode numbers are grouped in chunks of 1,024;
 * a chunk is made when one of its inodes is added, so a sparse table
 * costs at most 1 KiB (plus 16 bytes) for each inode far from the rest.
 * The walker adds inodes in number order and a directory's entries
 * mostly name inodes made next to each other, so the chunk found last
 * answers most lookups without the binary search.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "tux3.h"
#include "check/inode_state.h"

#define CHUNK_BITS	10
#define CHUNK		(1u << CHUNK_BITS)

#define S_TYPE		0x0f
#define S_ONE		0x10
#define S_BIG		0x20
#define S_ORPHAN	0x40
#define S_PRESENT	0x80

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

static uint8_t *byte_of(struct inode_state *s, uint64_t inum)
{
	bool found;
	size_t i = chunk_index(s, inum, &found);
	return found ? &s->chunks[i].bytes[inum & (CHUNK - 1)] : NULL;
}

static uint8_t *byte_make(struct inode_state *s, uint64_t inum)
{
	bool found;
	size_t i = chunk_index(s, inum, &found);
	if (found)
		return &s->chunks[i].bytes[inum & (CHUNK - 1)];
	if (s->nchunks == s->capchunks) {
		size_t cap = s->capchunks ? s->capchunks * 2 : 64;
		struct ino_chunk *n = realloc(s->chunks, cap * sizeof(*n));
		if (!n)
			return NULL;
		s->chunks = n;
		s->capchunks = cap;
	}
	uint8_t *bytes = calloc(CHUNK, 1);
	if (!bytes)
		return NULL;
	memmove(&s->chunks[i + 1], &s->chunks[i],
		(s->nchunks - i) * sizeof(*s->chunks));
	s->chunks[i] = (struct ino_chunk){
		.base = inum & ~(uint64_t)(CHUNK - 1), .bytes = bytes };
	s->nchunks++;
	s->last = i;
	return &bytes[inum & (CHUNK - 1)];
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
	if (*b & S_PRESENT)
		return 0;
	*b = (uint8_t)(S_PRESENT | (dtype & S_TYPE) | (orphan ? S_ORPHAN : 0));
	s->inodes++;
	if (dtype == TUX3_DT_DIR || nlink != 1) {
		if (!big_add(s, &(struct ino_big){ .inum = inum,
						   .nlink = nlink }))
			return -ENOMEM;
		*b |= S_BIG;
	}
	return 0;
}

bool inode_state_get(struct inode_state *s, uint64_t inum,
		     struct ino_info *info)
{
	const uint8_t *b = byte_of(s, inum);
	if (!b || !(*b & S_PRESENT))
		return false;
	*info = (struct ino_info){ .dtype = *b & S_TYPE,
				   .orphan = *b & S_ORPHAN, .nlink = 1,
				   .count = (*b & S_ONE) ? 1 : 0 };
	const struct ino_big *e = *b & S_BIG ? big_find(s, inum) : NULL;
	if (e) {
		info->nlink = e->nlink;
		info->count = e->count;
		info->dirnames = e->dirnames;
	}
	return true;
}

/* The exact counters of a present inode, moving it there if need be. */
static struct ino_big *counters(struct inode_state *s, uint64_t inum)
{
	uint8_t *b = byte_of(s, inum);
	if (!b || !(*b & S_PRESENT))
		return NULL;
	if (*b & S_BIG)
		return big_find(s, inum);
	struct ino_big *e = big_add(s, &(struct ino_big){
		.inum = inum, .nlink = 1, .count = (*b & S_ONE) ? 1 : 0 });
	if (e)
		*b = (uint8_t)((*b & ~S_ONE) | S_BIG);
	return e;
}

int inode_state_named(struct inode_state *s, uint64_t inum, uint64_t parent)
{
	uint8_t *b = byte_of(s, inum);
	if (!b || !(*b & S_PRESENT))
		return 0;
	if (!(*b & S_BIG) && !(*b & S_ONE) && (*b & S_TYPE) != TUX3_DT_DIR) {
		*b |= S_ONE;	/* the usual case: a first name */
		return 0;
	}
	struct ino_big *e = counters(s, inum);
	if (!e)
		return -ENOMEM;
	if ((*b & S_TYPE) != TUX3_DT_DIR) {
		if (e->count < UINT32_MAX)
			e->count++;
		return 0;
	}
	if (e->dirnames < 3)
		e->dirnames++;
	struct ino_big *p = parent ? counters(s, parent) : NULL;
	if (parent && !p)
		return byte_of(s, parent) ? -ENOMEM : 0;
	if (p && p->count < UINT32_MAX)
		p->count++;
	return 0;
}

int inode_state_set_dirnames(struct inode_state *s, uint64_t inum,
			     unsigned dirnames)
{
	struct ino_big *e = counters(s, inum);
	if (!e)
		return byte_of(s, inum) ? -ENOMEM : 0;
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
			if (!(s->chunks[c].bytes[i] & S_PRESENT) ||
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
	return s->nchunks * (CHUNK + sizeof(*s->chunks)) +
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

/* A set of block numbers (open addressing), used to refuse cycles and
 * blocks reached twice in tree traversals; keyset_add takes any 64-bit
 * key (blockset_has finds either). */
#include <stdlib.h>
#include "io/io.h"

static size_t slot(const struct blockset *s, uint64_t v)
{
	return (size_t)((v * 0x9e3779b97f4a7c15ULL) >> 17) & (s->cap - 1);
}

/* Returns 1 if added, 0 if already present, <0 on error. */
int blockset_add(struct blockset *s, uint64_t v)
{
	if (v >= TUX3_KEY_LIMIT)
		return -ERANGE;	/* block numbers are 48 bits */
	return keyset_add(s, v);
}

/* The same set of any key below 2^64 - 1 (the version index's pairs). */
int keyset_add(struct blockset *s, uint64_t v)
{
	if (v == UINT64_MAX)
		return -ERANGE;
	v++;	/* 0 marks an empty slot */
	if ((s->count + 1) * 2 > s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 256;
		uint64_t *n = calloc(ncap, sizeof(*n));
		if (!n)
			return -ENOMEM;
		uint64_t *old = s->slots;
		size_t ocap = s->cap;
		s->slots = n;
		s->cap = ncap;
		for (size_t i = 0; i < ocap; i++) {
			if (!old[i])
				continue;
			size_t j = slot(s, old[i]);
			while (s->slots[j])
				j = (j + 1) & (s->cap - 1);
			s->slots[j] = old[i];
		}
		free(old);
	}
	size_t i = slot(s, v);
	while (s->slots[i]) {
		if (s->slots[i] == v)
			return 0;
		i = (i + 1) & (s->cap - 1);
	}
	s->slots[i] = v;
	s->count++;
	return 1;
}

bool blockset_has(const struct blockset *s, uint64_t v)
{
	if (!s->cap || v == UINT64_MAX)
		return false;
	v++;
	for (size_t i = slot(s, v); s->slots[i]; i = (i + 1) & (s->cap - 1))
		if (s->slots[i] == v)
			return true;
	return false;
}

void blockset_free(struct blockset *s)
{
	free(s->slots);
	memset(s, 0, sizeof(*s));
}

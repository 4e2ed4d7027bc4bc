/*
 * The kernel's lookup counts: a hash table from inode number to the
 * number of lookups the kernel holds (see tux3fuse.h).  Chained buckets,
 * doubled when the load passes one entry per bucket.  A table of zeroes
 * is an empty one, given its buckets at its first entry (a snapshot's
 * view has one, most never used).
 */
#include <errno.h>
#include <stdlib.h>
#include "tux3fuse.h"

static size_t slot(const struct itable *t, tux3_ino_t ino)
{
	uint64_t h = ino * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 32) & (t->nbucket - 1);
}

int itab_init(struct itable *t)
{
	t->nbucket = 1024;
	t->count = 0;
	t->bucket = calloc(t->nbucket, sizeof(*t->bucket));
	return t->bucket ? 0 : -ENOMEM;
}

void itab_free(struct itable *t)
{
	for (size_t i = 0; i < t->nbucket; i++) {
		struct ientry *e = t->bucket[i];
		while (e) {
			struct ientry *next = e->next;
			free(e);
			e = next;
		}
	}
	free(t->bucket);
	t->bucket = NULL;
	t->nbucket = t->count = 0;
}

struct ientry *itab_find(struct itable *t, tux3_ino_t ino)
{
	if (!t->nbucket)
		return NULL;
	for (struct ientry *e = t->bucket[slot(t, ino)]; e; e = e->next)
		if (e->ino == ino)
			return e;
	return NULL;
}

static void grow(struct itable *t)
{
	size_t old = t->nbucket;
	struct ientry **ob = t->bucket;
	struct ientry **nb = calloc(old * 2, sizeof(*nb));
	if (!nb)
		return;		/* longer chains, still correct */
	t->bucket = nb;
	t->nbucket = old * 2;
	for (size_t i = 0; i < old; i++) {
		struct ientry *e = ob[i];
		while (e) {
			struct ientry *next = e->next;
			size_t s = slot(t, e->ino);
			e->next = nb[s];
			nb[s] = e;
			e = next;
		}
	}
	free(ob);
}

int itab_ref(struct itable *t, tux3_ino_t ino, tux3_ino_t parent, uint64_t n,
	     struct ientry **out)
{
	if (!t->nbucket && itab_init(t))
		return -ENOMEM;
	struct ientry *e = itab_find(t, ino);
	if (!e) {
		if (t->count >= t->nbucket)
			grow(t);
		e = calloc(1, sizeof(*e));
		if (!e)
			return -ENOMEM;
		e->ino = ino;
		size_t s = slot(t, ino);
		e->next = t->bucket[s];
		t->bucket[s] = e;
		t->count++;
	}
	e->nlookup += n;
	if (parent)
		e->parent = parent;
	if (out)
		*out = e;
	return 0;
}

int itab_unref(struct itable *t, tux3_ino_t ino, uint64_t n, bool *held)
{
	if (!t->nbucket)
		return -ENOENT;
	struct ientry **pp = &t->bucket[slot(t, ino)];
	while (*pp && (*pp)->ino != ino)
		pp = &(*pp)->next;
	struct ientry *e = *pp;
	if (!e)
		return -ENOENT;
	if (e->nlookup > n) {
		e->nlookup -= n;
		return 0;
	}
	*held = e->held;
	*pp = e->next;
	free(e);
	t->count--;
	return 1;
}

void itab_each(struct itable *t, void (*fn)(void *ctx, struct ientry *e),
	       void *ctx)
{
	for (size_t i = 0; i < t->nbucket; i++)
		for (struct ientry *e = t->bucket[i]; e; e = e->next)
			fn(ctx, e);
}

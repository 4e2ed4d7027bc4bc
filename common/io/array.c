/*
 * The library's growable arrays: room for one more element, the
 * capacity doubled when full.  One helper for every list built while a
 * tree is read (fsck's indexes, a rehash's moves, a diff's items).
 */
#include <errno.h>
#include <stdlib.h>
#include "io/io.h"

int array_grow(void **v, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 64;
	void *p = realloc(*v, ncap * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = ncap;
	return 0;
}

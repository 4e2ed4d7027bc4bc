/*
 * What the benches (tests/vbench.c, tests/dirbench.c) share: a monotonic
 * clock in seconds and a small deterministic random number source, so
 * that two runs do the same work.
 */
#ifndef TUX3_TESTS_BENCH_H
#define TUX3_TESTS_BENCH_H

#include <stdint.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t rng = 88172645463325252ull;
static unsigned rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

#endif

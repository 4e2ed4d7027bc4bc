/*
 * fuse_roundtrip FILE N: the cost of one FUSE round trip, measured as N
 * getxattr(2) calls of a name FILE does not have (the daemon answers
 * ENODATA at once, so the time is the kernel's and the scheduler's).
 * Prints "N calls: X us each".  Used by make bench beside the cp -a
 * figures; also meaningful on any filesystem, for comparison.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/xattr.h>
#include <time.h>

int main(int argc, char **argv)
{
	char buf[64];
	struct timespec a, z;
	long n = argc == 3 ? strtol(argv[2], NULL, 10) : 0;
	if (n <= 0) {
		fprintf(stderr, "usage: fuse_roundtrip FILE N\n");
		return 2;
	}
	/* the first call also checks that the answer is the expected one */
	if (getxattr(argv[1], "user.tux3-roundtrip", buf, sizeof(buf)) >= 0 ||
	    (errno != ENODATA && errno != ENOTSUP)) {
		perror(argv[1]);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		getxattr(argv[1], "user.tux3-roundtrip", buf, sizeof(buf));
	clock_gettime(CLOCK_MONOTONIC, &z);
	double us = ((double)(z.tv_sec - a.tv_sec) * 1e9 +
		     (double)(z.tv_nsec - a.tv_nsec)) / (double)n / 1000;
	printf("%ld calls: %.2f us each\n", n, us);
	return 0;
}

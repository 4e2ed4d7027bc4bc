/*
 * dirbench: one big directory through the library (make bench; not a
 * test).
 *
 *   dirbench IMAGE N [off]
 *
 * Makes a fresh 4K-block volume in IMAGE (sized for N files), then in its
 * root directory: creates N empty files (tux3_create), looks up N/4
 * random existing names and N/4 missing ones (tux3_lookup), renames N/4
 * within the directory and unlinks all N, committing every 1,000
 * changes.  Per phase: wall seconds, microseconds per operation and
 * directory blocks read per operation (the work counter
 * vol->dir_block_reads).  "off" disables the in-memory directory index
 * (tux3_set_dir_index(vol, 0, 0)): the linear path, for comparison.
 * Timestamps are fixed, so both leave the same image.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"
#include "bench.h"

static int name_of(char *buf, const char *prefix, unsigned i)
{
	return snprintf(buf, 64, "%s%08u.txt", prefix, i);
}

struct phase {
	const char *what;
	double t0;
	uint64_t reads0;
};

static void phase_start(struct phase *p, const char *what,
			const struct tux3_volume *vol)
{
	p->what = what;
	p->reads0 = vol->dir_block_reads;
	p->t0 = now();
}

static void phase_end(const struct phase *p, const struct tux3_volume *vol,
		      unsigned ops)
{
	double s = now() - p->t0;
	printf("%-14s %8u ops %9.3f s %9.2f us/op %10.2f dirblock reads/op\n",
	       p->what, ops, s, s * 1e6 / ops,
	       (double)(vol->dir_block_reads - p->reads0) / ops);
}

static void must(int err, const char *what, unsigned i)
{
	if (err) {
		fprintf(stderr, "dirbench: %s %u: %s\n", what, i,
			strerror(-err));
		exit(1);
	}
}

static void maybe_sync(struct tux3_volume *vol, unsigned i)
{
	if (i % 1000 == 999)
		must(tux3_sync(vol), "sync", i);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: dirbench IMAGE N [off]\n");
		return 2;
	}
	const char *img = argv[1];
	unsigned n = (unsigned)strtoul(argv[2], NULL, 10);
	bool off = argc > 3 && !strcmp(argv[3], "off");
	uint64_t bytes = (64ull << 20) + (uint64_t)n * 4096;
	int fd = open(img, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)bytes) || close(fd)) {
		perror(img);
		return 1;
	}
	struct tux3_mkfs_params mp = { .blockbits = 12,
				       .volblocks = bytes >> 12,
				       .time_ns = 1 };
	char err[300];
	if (tux3_mkfs(img, &mp, err, sizeof(err))) {
		fprintf(stderr, "dirbench: mkfs: %s\n", err);
		return 1;
	}
	struct tux3_volume *vol;
	if (tux3_open_err(img, TUX3_OPEN_RDWR, &vol, err, sizeof(err))) {
		fprintf(stderr, "dirbench: %s\n", err);
		return 1;
	}
	tux3_set_time(vol, 1000000000);	/* the same image with or without */
	if (off)
		tux3_set_dir_index(vol, 0, 0);
	char name[64], name2[64];
	struct phase p;
	tux3_ino_t ino;

	printf("dirbench: %u files in one directory, index %s\n", n,
	       off ? "off" : "on");
	phase_start(&p, "create", vol);
	for (unsigned i = 0; i < n; i++) {
		int len = name_of(name, "f", i);
		must(tux3_create(vol, TUX3_ROOT_INO, name, (size_t)len, 0644, 0,
				 0, &ino), "create", i);
		maybe_sync(vol, i);
	}
	phase_end(&p, vol, n);
	unsigned q = n / 4 ? n / 4 : 1;
	phase_start(&p, "lookup hit", vol);
	for (unsigned i = 0; i < q; i++) {
		int len = name_of(name, "f", rnd(n));
		must(tux3_lookup(vol, TUX3_ROOT_INO, name, (size_t)len, &ino),
		     "lookup", i);
	}
	phase_end(&p, vol, q);
	phase_start(&p, "lookup miss", vol);
	for (unsigned i = 0; i < q; i++) {
		int len = name_of(name, "m", rnd(n));
		if (tux3_lookup(vol, TUX3_ROOT_INO, name, (size_t)len, &ino) !=
		    -ENOENT)
			must(-EIO, "lookup miss", i);
		tux3_clear_error(vol);
	}
	phase_end(&p, vol, q);
	phase_start(&p, "rename", vol);
	for (unsigned i = 0; i < q; i++) {
		int len = name_of(name, "f", i);
		int len2 = name_of(name2, "r", i);
		must(tux3_rename(vol, TUX3_ROOT_INO, name, (size_t)len,
				 TUX3_ROOT_INO, name2, (size_t)len2, 0),
		     "rename", i);
		maybe_sync(vol, i);
	}
	phase_end(&p, vol, q);
	phase_start(&p, "unlink", vol);
	for (unsigned i = 0; i < n; i++) {
		int len = name_of(name, i < q ? "r" : "f", i);
		must(tux3_unlink(vol, TUX3_ROOT_INO, name, (size_t)len),
		     "unlink", i);
		maybe_sync(vol, i);
	}
	phase_end(&p, vol, n);
	must(tux3_umount(vol), "umount", 0);
	return 0;
}

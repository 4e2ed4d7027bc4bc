/*
 * vbench: figures for versions (make bench; not a test).
 *
 *   vbench read            ns per read of one block as the number of
 *                          versions grows to 2,000, for two tree shapes
 *   vbench create IMAGE    one snapshot made and committed on a volume:
 *                          time and blocks the commit allocated
 *   vbench change IMAGE PATH
 *                          one block of PATH rewritten in the live version
 *                          after a snapshot: blocks allocated (metadata
 *                          and data) by that commit
 *
 * create and change go through the public API (tux3_snapshot_create,
 * tux3_write, tux3_sync); they change the volume.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "internal.h"
#include "bench.h"
#include "version/version.h"
#include "version/vfilemap.h"

/* n snapshots: of the origin each time (a chain n deep: the worst path)
 * or of random snapshots (bushy).  Address A: every version wrote it (n
 * elements); address B: only the origin's block (the common case). */
static void read_cost(unsigned n, bool chain, double *ns_full,
		      double *ns_one)
{
	static struct vtree vt;
	static struct velem e[VERSION_LABELS], one[1];
	unsigned m = 0, labels[2100], nl = 0;
	vtree_init(&vt);
	for (unsigned i = 0; i < n; i++) {
		unsigned of = chain || !nl ? 0 : labels[rnd(nl)];
		int l = vtree_snapshot(&vt, of, 1000 + i, 0);
		if (l < 0) {
			fprintf(stderr, "vbench: snapshot %u: %d\n", i, l);
			exit(1);
		}
		labels[nl++] = (unsigned)l;
	}
	for (unsigned i = 0; i < nl; i++)
		e[m++] = (struct velem){ .label = (uint16_t)labels[i],
					 .phys = 100 + i };
	one[0] = (struct velem){ .label = 0, .phys = 7 };
	unsigned reps = 200000, sink = 0;
	double t = now();
	for (unsigned r = 0; r < reps; r++)
		sink += (unsigned)velist_read(&vt, e, m, labels[r % nl]);
	*ns_full = (now() - t) * 1e9 / reps;
	t = now();
	for (unsigned r = 0; r < reps; r++)
		sink += (unsigned)velist_read(&vt, one, 1, labels[r % nl]);
	*ns_one = (now() - t) * 1e9 / reps;
	if (sink == 12345)
		puts("");
}

static int cmd_read(void)
{
	static const unsigned ns[] = { 1, 10, 100, 500, 1000, 2000 };
	printf("%10s %16s %16s %16s %16s\n", "versions", "chain, n elems",
	       "chain, 1 elem", "bushy, n elems", "bushy, 1 elem");
	for (unsigned i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		double a, b, c, d;
		read_cost(ns[i], true, &a, &b);
		read_cost(ns[i], false, &c, &d);
		printf("%10u %13.0f ns %13.0f ns %13.0f ns %13.0f ns\n", ns[i],
		       a, b, c, d);
	}
	return 0;
}

/* Blocks written to the device (the superblock area counted apart). */
struct writes {
	unsigned bits;
	uint64_t blocks, super;
};

static void count_write(void *ctx, uint64_t offset, size_t len)
{
	struct writes *w = ctx;
	if (offset < 8192)
		w->super++;
	else
		w->blocks += (len + (1u << w->bits) - 1) >> w->bits;
}

static void watch(struct tux3_volume *vol, struct writes *w)
{
	*w = (struct writes){ .bits = vol->blockbits };
	vol->dev.on_write = count_write;
	vol->dev.hook_ctx = w;
}

static struct tux3_volume *open_writer(const char *path)
{
	struct tux3_volume *vol;
	char msg[512];
	if (tux3_open_err(path, TUX3_OPEN_RDWR,
			  &vol, msg, sizeof(msg))) {
		fprintf(stderr, "vbench: %s\n", msg);
		exit(1);
	}
	return vol;
}

static int cmd_create(const char *path)
{
	struct tux3_volume *vol = open_writer(path);
	struct writes w;
	watch(vol, &w);
	double t = now();
	if (tux3_snapshot_create(vol, "bench-create", NULL)) {
		fprintf(stderr, "vbench: snapshot failed\n");
		return 1;
	}
	t = now() - t;
	printf("snapshot create on %" PRIu64 " inodes: %.3f ms, %" PRIu64
	       " blocks written by its commit (+ the superblock)\n",
	       vol->super.usedinodes, t * 1e3, w.blocks);
	return tux3_umount(vol) ? 1 : 0;
}

/* Blocks the commit of a one-block rewrite at block `at` writes. */
static int change_one(struct tux3_volume *vol, tux3_ino_t ino, uint64_t at,
		      uint64_t *blocks)
{
	static uint8_t buf[65536];
	struct writes w;
	memset(buf, (int)(at & 0xff) + 1, vol->blocksize);
	watch(vol, &w);
	if (tux3_write(vol, ino, buf, vol->blocksize, at * vol->blocksize) !=
	    (ssize_t)vol->blocksize || tux3_sync(vol))
		return -1;
	*blocks = w.blocks;
	return 0;
}

static int cmd_change(const char *path, const char *file)
{
	struct tux3_volume *vol = open_writer(path);
	tux3_ino_t ino;
	uint64_t first, second;
	if (tux3_snapshot_create(vol, "bench-change", NULL) ||
	    tux3_lookup_path(vol, file, &ino)) {
		fprintf(stderr, "vbench: %s: cannot set up\n", file);
		return 1;
	}
	/* the first change converts the file's map to versioned leaves */
	if (change_one(vol, ino, 0, &first) || change_one(vol, ino, 1, &second)) {
		fprintf(stderr, "vbench: change failed\n");
		return 1;
	}
	printf("one block rewritten after a snapshot: %" PRIu64 " blocks "
	       "written by the commit (the first change of the file: its map "
	       "becomes versioned leaves), %" PRIu64 " for the next one-block "
	       "change, the data block included (+ the superblock)\n",
	       first, second);
	return tux3_umount(vol) ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "read"))
		return cmd_read();
	if (argc == 3 && !strcmp(argv[1], "create"))
		return cmd_create(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "change"))
		return cmd_change(argv[2], argv[3]);
	fprintf(stderr, "usage: vbench read | create IMAGE | change IMAGE "
		"PATH\n");
	return 2;
}

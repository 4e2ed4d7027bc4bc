/*
 * The allocation bitmap as the library holds it after replay (group
 * "Structures"): testb, ffb and freefrag.  Free space is the bitmap, not
 * a tree: testb and ffb read it block by block through
 * tux3_block_is_used() (as far as they were asked to go), freefrag takes
 * the gaps between its runs of used blocks from tux3_walk_bitmap() (holes
 * of a huge volume cost nothing).  What references each block is
 * icheck's and check's business.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "debugfs.h"

/* 1 used, 0 free; -1 reported */
static int used(struct shell *sh, uint64_t block)
{
	int u = tux3_block_is_used(sh->vol, block);
	if (u < 0) {
		sh_volerr(sh, "bitmap", u);
		return -1;
	}
	return u;
}

static void run_line(struct shell *sh, uint64_t start, uint64_t end, int u)
{
	if (end - start == 1)
		fprintf(sh->out, "block %" PRIu64 ": %s\n", start,
			u ? "marked in use" : "free");
	else
		fprintf(sh->out, "blocks %" PRIu64 "-%" PRIu64 ": %s\n", start,
			end - 1, u ? "marked in use" : "free");
}

int cmd_testb(struct shell *sh, int argc, char **argv)
{
	tux3_block_t block;
	uint64_t count = 1;
	struct tux3_statfs st;
	if (argc < 2 || argc > 3)
		return sh_err(sh, "usage: testb BLOCK [COUNT]");
	if (parse_block(sh, argv[1], &block))
		return 1;
	tux3_statfs(sh->vol, &st);
	if (argc == 3 && (parse_number(argv[2], &count) || !count ||
			  count > st.blocks - block))
		return sh_err(sh, "%s: bad count (1 to %" PRIu64 " from block %"
			      PRIu64 ")", argv[2], st.blocks - block, block);
	uint64_t start = block;
	int state = used(sh, block);
	if (state < 0)
		return 1;
	for (uint64_t b = block + 1; b < block + count; b++) {
		int u = used(sh, b);
		if (u < 0)
			return 1;
		if (u != state) {
			run_line(sh, start, b, state);
			start = b;
			state = u;
		}
	}
	run_line(sh, start, block + count, state);
	return 0;
}

/* ffb [COUNT [GOAL]]: the first COUNT free blocks from GOAL on, going
 * round to the start of the volume (not necessarily contiguous). */
int cmd_ffb(struct shell *sh, int argc, char **argv)
{
	uint64_t count = 1, goal = 0;
	struct tux3_statfs st;
	if (argc > 3)
		return sh_err(sh, "usage: ffb [COUNT [GOAL]]");
	tux3_statfs(sh->vol, &st);
	if (argc > 1 && (parse_number(argv[1], &count) || !count))
		return sh_err(sh, "%s: bad count", argv[1]);
	if (argc > 2 && parse_block(sh, argv[2], &goal))
		return 1;
	uint64_t got = 0, run = 0, runstart = 0;
	int any = 0;
	fprintf(sh->out, "free blocks from %" PRIu64 ":", goal);
	for (uint64_t i = 0; i < st.blocks && got < count; i++) {
		uint64_t b = (goal + i) % st.blocks;
		int u = used(sh, b);
		if (u < 0)
			return 1;
		if (!u && run && b == runstart + run) {
			run++;
		} else {
			if (run) {
				fprintf(sh->out, run == 1 ? " %" PRIu64 :
					" %" PRIu64 "-%" PRIu64, runstart,
					runstart + run - 1);
				any = 1;
			}
			run = 0;
			if (!u) {
				runstart = b;
				run = 1;
			}
		}
		got += !u;
	}
	if (run) {
		fprintf(sh->out, run == 1 ? " %" PRIu64 : " %" PRIu64 "-%" PRIu64,
			runstart, runstart + run - 1);
		any = 1;
	}
	fprintf(sh->out, "%s\n", any ? "" : " none");
	if (got < count)
		return sh_err(sh, "ffb: only %" PRIu64 " free block%s in the "
			      "volume", got, got == 1 ? "" : "s");
	return 0;
}

static void human(char *buf, size_t len, uint64_t bytes)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB",
					    "PiB", "EiB" };
	unsigned u = 0;
	while (bytes >= 1024 && !(bytes % 1024) && u < 6) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, len, "%" PRIu64 " %s", bytes, unit[u]);
}

/* freefrag's tally: the free extents are the gaps between the bitmap's
 * runs of blocks in use, so a volume's holes cost nothing to cross. */
struct frag {
	uint64_t next;		/* the first block after the last run */
	uint64_t hist_n[64], hist_b[64];
	uint64_t free_blocks, extents, smallest, largest;
};

static void frag_extent(struct frag *f, uint64_t len)
{
	unsigned k = 63 - (unsigned)__builtin_clzll(len);
	f->hist_n[k]++;
	f->hist_b[k] += len;
	f->free_blocks += len;
	f->extents++;
	if (!f->smallest || len < f->smallest)
		f->smallest = len;
	if (len > f->largest)
		f->largest = len;
}

static int frag_run(void *ctx, uint64_t chunk, tux3_block_t start,
		    uint64_t count, int stale)
{
	struct frag *f = ctx;
	(void)chunk;
	(void)stale;
	if (start > f->next)
		frag_extent(f, start - f->next);
	f->next = start + count;
	return 0;
}

int cmd_freefrag(struct shell *sh, int argc, char **argv)
{
	struct tux3_statfs st;
	struct frag f = { 0 };
	const struct tux3_walk_ops ops = { .bitrun = frag_run };
	(void)argv;
	if (argc != 1)
		return sh_err(sh, "usage: freefrag");
	tux3_statfs(sh->vol, &st);
	int err = tux3_walk_bitmap(sh->vol, &ops, &f);
	if (err)
		return sh_volerr(sh, "bitmap", err);
	if (f.next < st.blocks)
		frag_extent(&f, st.blocks - f.next);
	uint64_t *hist_n = f.hist_n, *hist_b = f.hist_b;
	uint64_t free_blocks = f.free_blocks, extents = f.extents;
	uint64_t smallest = f.smallest, largest = f.largest;
	FILE *o = sh->out;
	char a[32], b2[32];
	human(a, sizeof(a), st.bsize);
	fprintf(o, "blocks: %" PRIu64 " of %s\n", st.blocks, a);
	fprintf(o, "free blocks: %" PRIu64 " (%.1f%%) in %" PRIu64
		" free extent%s\n", free_blocks, st.blocks ? 100.0 *
		(double)free_blocks / (double)st.blocks : 0.0, extents,
		extents == 1 ? "" : "s");
	if (free_blocks != st.bfree)
		fprintf(o, "the free count of the volume says %" PRIu64
			" (differs from the bitmap)\n", st.bfree);
	if (!extents)
		return 0;
	fprintf(o, "free extent blocks: smallest %" PRIu64 ", largest %" PRIu64
		", average %.1f\n\n", smallest, largest,
		(double)free_blocks / (double)extents);
	fprintf(o, "%-23s %10s %12s %8s\n", "free extent size", "extents",
		"free blocks", "percent");
	for (unsigned k = 0; k < 64; k++) {
		if (!hist_n[k])
			continue;
		char range[80];
		human(a, sizeof(a), (1ULL << k) * st.bsize);
		human(b2, sizeof(b2), (2ULL << k) * st.bsize);
		snprintf(range, sizeof(range), "%s - %s", a, b2);
		fprintf(o, "%-23s %10" PRIu64 " %12" PRIu64 " %7.2f%%\n", range,
			hist_n[k], hist_b[k],
			100.0 * (double)hist_b[k] / (double)free_blocks);
	}
	return 0;
}

/*
 * tux3image: which blocks to copy.
 *
 * Two walks of the volume through the library walker: the live one
 * (TUX3_OPEN_RDONLY: the log replayed in memory) and the on-disk one
 * (TUX3_OPEN_NOREPLAY: the trees as of the last unify).  Replay reads the
 * on-disk bnodes the live walk no longer reaches, so the image holds the
 * union of both, plus the blocks named by the bnode records of the log
 * (the images replay loads from disk), the superblock area and the log.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "image.h"
#include "tux3_walk.h"

/* ---- messages ---- */

void image_err(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", image_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void image_warn(struct image *im, const char *fmt, ...)
{
	va_list ap;
	im->problems++;
	fprintf(stderr, "%s: warning: %s: ", image_prog, im->device);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- the block set ----
 *
 * Pages of one bit per block hang from a radix directory of three
 * levels, so memory follows the blocks marked: a volume of 2^48 blocks
 * with a small tree costs a few directory nodes and the pages it
 * touches, and the walks below step over a missing node's whole span. */

#define PAGE_BLOCKS (1ull << BLKMAP_PAGE_BITS)
#define PAGE_WORDS (PAGE_BLOCKS / 64)
#define DIR_SLOTS (1u << BLKMAP_DIR_BITS)

int blkmap_init(struct blkmap *bm, uint64_t nblocks)
{
	if (nblocks > 1ull << (BLKMAP_PAGE_BITS + BLKMAP_LEVELS *
					       BLKMAP_DIR_BITS))
		return -EFBIG;
	bm->nblocks = nblocks;
	bm->root = NULL;
	return 0;
}

static void dir_free(void **node, unsigned level)
{
	for (unsigned i = 0; node && i < DIR_SLOTS; i++)
		if (level)
			dir_free(node[i], level - 1);
		else
			free(node[i]);
	free(node);
}

void blkmap_free(struct blkmap *bm)
{
	dir_free(bm->root, BLKMAP_LEVELS - 1);
	bm->root = NULL;
}

static unsigned dir_slot(uint64_t page, unsigned level)
{
	return (unsigned)(page >> (level * BLKMAP_DIR_BITS)) & (DIR_SLOTS - 1);
}

/* The page holding block page << BLKMAP_PAGE_BITS; made (with the
 * directory nodes above it) when make is set, else NULL if absent. */
static uint64_t *page_of(struct blkmap *bm, uint64_t page, int make)
{
	void **slot = (void **)&bm->root;
	for (unsigned l = BLKMAP_LEVELS; l-- > 0;) {
		if (!*slot && make)
			*slot = calloc(DIR_SLOTS, sizeof(void *));
		if (!*slot)
			return NULL;
		slot = &((void **)*slot)[dir_slot(page, l)];
	}
	if (!*slot && make)
		*slot = calloc(PAGE_WORDS, sizeof(uint64_t));
	return *slot;
}

/* The first page from page on that exists, or NULL. */
static const uint64_t *page_next(const struct blkmap *bm, uint64_t *page)
{
	uint64_t last = (bm->nblocks - 1) >> BLKMAP_PAGE_BITS;
	while (bm->nblocks && *page <= last) {
		void **node = bm->root;
		unsigned l = BLKMAP_LEVELS;
		while (node && l-- > 0)
			node = node[dir_slot(*page, l)];
		if (node)
			return (const uint64_t *)node;
		/* node at level l is missing: skip its whole span */
		uint64_t span = 1ull << (l * BLKMAP_DIR_BITS);
		*page = (*page & ~(span - 1)) + span;
	}
	return NULL;
}

int blkmap_set_range(struct blkmap *bm, uint64_t start, uint64_t count)
{
	if (start >= bm->nblocks)
		return 0;
	if (count > bm->nblocks - start)
		count = bm->nblocks - start;
	while (count) {
		uint64_t in = start & (PAGE_BLOCKS - 1);
		uint64_t n = PAGE_BLOCKS - in < count ? PAGE_BLOCKS - in : count;
		uint64_t *w = page_of(bm, start >> BLKMAP_PAGE_BITS, 1);
		if (!w)
			return -ENOMEM;
		uint64_t b = in, end = in + n;
		while (b < end && (b & 63))
			w[b >> 6] |= 1ull << (b & 63), b++;
		while (b + 64 <= end)
			w[b >> 6] = ~0ull, b += 64;
		while (b < end)
			w[b >> 6] |= 1ull << (b & 63), b++;
		start += n;
		count -= n;
	}
	return 0;
}

int blkmap_test(const struct blkmap *bm, uint64_t block)
{
	if (block >= bm->nblocks)
		return 0;
	const uint64_t *w = page_of((struct blkmap *)bm,
				    block >> BLKMAP_PAGE_BITS, 0);
	uint64_t in = block & (PAGE_BLOCKS - 1);
	return w && (w[in >> 6] >> (in & 63)) & 1;
}

uint64_t blkmap_next(const struct blkmap *bm, uint64_t from)
{
	uint64_t p = from >> BLKMAP_PAGE_BITS;
	const uint64_t *w;
	while (from < bm->nblocks && (w = page_next(bm, &p))) {
		uint64_t base = p << BLKMAP_PAGE_BITS;
		uint64_t in = from > base ? from - base : 0;
		for (; in < PAGE_BLOCKS; in = (in & ~63ull) + 64) {
			uint64_t word = w[in >> 6] & (~0ull << (in & 63));
			if (word) {
				uint64_t b = base + (in & ~63ull) +
					     (uint64_t)__builtin_ctzll(word);
				return b < bm->nblocks ? b : bm->nblocks;
			}
		}
		from = base + PAGE_BLOCKS;
		p++;
	}
	return bm->nblocks;
}

uint64_t blkmap_count(const struct blkmap *bm)
{
	uint64_t n = 0, p = 0;
	for (const uint64_t *w; (w = page_next(bm, &p)); p++)
		for (size_t i = 0; i < PAGE_WORDS; i++)
			n += (uint64_t)__builtin_popcountll(w[i]);
	return n;
}

/* ---- the walks ---- */

enum kind { K_SKIP, K_DIR, K_LINK, K_META, K_DATA };

struct collect {
	struct image *im;
	struct tux3_volume *vol;
	int live;		/* this is the live (replayed) walk */
	int report;		/* problems of this walk count (exit 1) */
	/* the inode being visited */
	tux3_ino_t ino;
	enum kind kind;
	size_t lnk;		/* its symlink record */
};

static int mark(struct collect *c, uint64_t start, uint64_t count,
		const char *what)
{
	struct image *im = c->im;
	if (!count)
		return 0;
	if (start >= im->volblocks || count > im->volblocks - start) {
		if (c->report)
			image_warn(im, "%s at block %" PRIu64 " (%" PRIu64
				   " blocks) runs past the end of the volume "
				   "(%" PRIu64 " blocks): clipped", what, start,
				   count, im->volblocks);
		if (start >= im->volblocks)
			return 0;
		count = im->volblocks - start;
	}
	return blkmap_set_range(&im->all, start, count);
}

static int cb_super(void *ctx, const struct tux3_super_info *sb)
{
	(void)ctx;
	(void)sb;
	return 0;
}

static int cb_logblock(void *ctx, unsigned index, tux3_block_t block,
		       unsigned bytes, tux3_block_t logchain)
{
	struct collect *c = ctx;
	(void)index;
	(void)bytes;
	(void)logchain;
	return mark(c, block, 1, "log block");
}

/* The blocks a bnode record makes replay read from disk: the library
 * names them (tux3_logrec_info.bnodes), even those no tree reaches any
 * more, like the old block of a BNODE_REDIRECT. */
static int cb_logrec(void *ctx, tux3_block_t block,
		     const struct tux3_logrec_info *rec)
{
	struct collect *c = ctx;
	struct image *im = c->im;
	(void)block;
	/* the live walk knows which records replay applies; the raw scan
	 * does not (it is used alone only when the live open failed) */
	if (c->live && !rec->live)
		return 0;
	for (unsigned k = 0; k < rec->nbnodes; k++) {
		uint64_t b = rec->bnodes[k];
		if (b >= im->reserved && b < im->volblocks) {
			int e = blkmap_set_range(&im->all, b, 1);
			if (e)
				return e;
		}
	}
	return 0;
}

static int cb_node(void *ctx, const struct tux3_node_info *n)
{
	return mark(ctx, n->block, 1, "tree node");
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap * 2 : 64;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

static int cb_inode(void *ctx, const struct tux3_stat *st,
		    tux3_block_t leafblock, unsigned bloblen)
{
	struct collect *c = ctx;
	struct image *im = c->im;
	(void)leafblock;
	(void)bloblen;
	c->ino = st->ino;
	if (st->ino < TUX3_NORMAL_INO && !S_ISDIR(st->mode))
		c->kind = K_META;
	else if (S_ISDIR(st->mode))
		c->kind = K_DIR;
	else if (S_ISLNK(st->mode))
		c->kind = K_LINK;
	else if (im->all_data)
		c->kind = K_DATA;
	else
		c->kind = K_SKIP;
	if (c->kind == K_LINK) {
		if (grow((void **)&im->lnk, &im->lnk_cap, im->nlnk + 1,
			 sizeof(*im->lnk)))
			return -ENOMEM;
		c->lnk = im->nlnk++;
		im->lnk[c->lnk] = (struct symlink_rec){
			.ino = st->ino, .size = st->size,
			.first = im->nlnk_ext, .count = 0,
		};
	}
	return 0;
}

/* Blocks [physical, physical + count) of the current inode, clipped to
 * the volume: copied, and remembered as a directory's or a symlink's. */
static int add_extent(struct collect *c, uint64_t logical, uint64_t physical,
		      uint64_t count)
{
	struct image *im = c->im;
	int e;
	if (c->kind == K_DIR &&
	    (e = blkmap_set_range(&im->dirb, physical, count)))
		return e;
	if (c->kind == K_LINK) {
		if (grow((void **)&im->lnk_ext, &im->lnk_ext_cap,
			 im->nlnk_ext + 1, sizeof(*im->lnk_ext)))
			return -ENOMEM;
		im->lnk_ext[im->nlnk_ext++] = (struct lnk_extent){
			logical, physical, count };
		im->lnk[c->lnk].count++;
	}
	if (c->kind == K_DATA)
		im->data_blocks += count;
	return blkmap_set_range(&im->all, physical, count);
}

static int cb_extent(void *ctx, tux3_ino_t ino, uint64_t logical,
		     tux3_block_t physical, uint64_t count, uint32_t version,
		     tux3_block_t leafblock)
{
	struct collect *c = ctx;
	struct image *im = c->im;
	int e;
	(void)leafblock;
	/* an inode's attribute chain is metadata, whatever the inode */
	if (TUX3_EXTENT_META(version) && ino == c->ino && physical)
		return mark(c, physical, count, "metadata chain");
	if (ino != c->ino || !physical || c->kind == K_SKIP)
		return 0;
	if (physical >= im->volblocks) {
		if (c->report)
			image_warn(im, "inode %" PRIu64 ": extent at block %"
				   PRIu64 " is outside the volume: skipped",
				   ino, physical);
		return 0;
	}
	if (count > im->volblocks - physical) {
		if (c->report)
			image_warn(im, "inode %" PRIu64 ": extent at block %"
				   PRIu64 " (%" PRIu64 " blocks) runs past the "
				   "end of the volume: clipped", ino, physical,
				   count);
		count = im->volblocks - physical;
	}
	if (c->live || c->kind == K_DATA || c->kind == K_META)
		return add_extent(c, logical, physical, count);
	/* a block the live walk already took keeps the live walk's role
	 * (the on-disk walk may see a block that was freed and reused):
	 * only the runs not taken yet count as this inode's */
	for (uint64_t i = 0; i < count;) {
		if (blkmap_test(&im->all, physical + i)) {
			i++;
			continue;
		}
		uint64_t n = 1;
		while (i + n < count && !blkmap_test(&im->all, physical + i + n))
			n++;
		if ((e = add_extent(c, logical + i, physical + i, n)))
			return e;
		i += n;
	}
	return 0;
}

/* Not needed for the copy, but the walker checks directory records only
 * for a visitor of entries: a damaged directory is then warned about. */
static int cb_dirent(void *ctx, tux3_ino_t dir, const char *name,
		     unsigned len, tux3_ino_t ino, unsigned type, uint64_t pos,
		     tux3_block_t block)
{
	(void)ctx, (void)dir, (void)name, (void)len, (void)ino, (void)type;
	(void)pos, (void)block;
	return 0;
}

static int cb_site_error(void *ctx, const struct tux3_walk_error *e)
{
	struct collect *c = ctx;
	struct image *im = c->im;
	char text[400];
	if (!c->report) {
		im->noreplay_skipped++;
		return 0;
	}
	tux3_format_error(e->err, text, sizeof(text));
	image_warn(im, "%s: skipped", text);
	/* the damaged node itself goes into the image: it is what the
	 * image is for */
	if ((e->site == TUX3_SITE_NODE || e->site == TUX3_SITE_LEAF) &&
	    !e->twice && e->block >= im->reserved && e->block < im->volblocks)
		return blkmap_set_range(&im->all, e->block, 1);
	return 0;
}

/* tux3_scan_log_raw reports the damage that ended it here. */
static int cb_log_error(void *ctx, const struct tux3_error *err)
{
	struct collect *c = ctx;
	struct image *im = c->im;
	char text[400];
	if (err->block != TUX3_NONE && err->block < im->volblocks)
		blkmap_set_range(&im->all, err->block, 1);
	if (!c->report)
		return 0;
	tux3_format_error(err, text, sizeof(text));
	image_warn(im, "log: %s", text);
	return 0;
}

static const struct tux3_walk_ops walk_ops = {
	.super = cb_super, .logblock = cb_logblock, .logrec = cb_logrec,
	.bnode = cb_node, .leaf = cb_node, .inode = cb_inode,
	.extent = cb_extent, .dirent = cb_dirent,
	.site_error = cb_site_error,
};

static const struct tux3_walk_ops log_ops = {
	.logblock = cb_logblock, .logrec = cb_logrec, .error = cb_log_error,
};

static int geometry(struct image *im, struct tux3_volume *vol)
{
	struct tux3_super_info sb;
	struct tux3_identity id;
	tux3_super_info(vol, &sb);
	if (im->blocksize) {
		if (sb.blockbits != im->blockbits ||
		    sb.volblocks != im->volblocks) {
			image_warn(im, "the superblock read without replay "
				   "differs from the one replay used: the "
				   "on-disk walk is skipped");
			return 1;
		}
		return 0;
	}
	im->blockbits = sb.blockbits;
	im->blocksize = sb.blocksize;
	im->volblocks = sb.volblocks;
	im->reserved = sb.blocksize >= 8192 ? 1 : 8192 >> sb.blockbits;
	if (!tux3_identity(vol, &id) && id.present)
		memcpy(im->uuid, id.uuid, 16);
	int e;
	if ((e = blkmap_init(&im->all, im->volblocks)) ||
	    (e = blkmap_init(&im->dirb, im->volblocks)))
		return e;
	return blkmap_set_range(&im->all, 0, im->reserved);
}

static int walk_one(struct image *im, struct tux3_volume *vol, int live,
		    int report)
{
	struct collect c = { .im = im, .vol = vol, .live = live,
			     .report = report, .ino = TUX3_NONE };
	int r;
	if (!live) {
		/* the walker's log visit needs the replay's log: without
		 * replay, read the chain as it is */
		r = tux3_scan_log_raw(vol, &log_ops, &c);
		if (r < 0 && r != -EUCLEAN && r != -EIO && r != -ENOMEM)
			r = 0;	/* reported through .error */
		if (r == -ENOMEM)
			return r;
	}
	r = tux3_walk(vol, &walk_ops, &c);
	if (r == -EUCLEAN)
		r = 0;		/* each problem reported through site_error */
	if (r < 0 && r != -ENOMEM) {
		char text[400];
		if (report)
			image_warn(im, "walk ended early: %s",
				   tux3_error_text(vol, text, sizeof(text)));
		r = 0;
	}
	return r;
}

/* -v: the work of both walks, counted (tests compare it across sizes) */
static void work_report(const struct image *im, struct tux3_volume *live,
			struct tux3_volume *disk)
{
	uint64_t reads = 0, loads = 0, r, l;
	if (live) {
		tux3_work_counts(live, &r, &l);
		reads += r;
		loads += l;
	}
	if (disk) {
		tux3_work_counts(disk, &r, &l);
		reads += r;
		loads += l;
	}
	fprintf(stderr, "%s: %s: %" PRIu64 " device reads, %" PRIu64
		" inodes loaded\n", image_prog, im->device, reads, loads);
}

int image_collect(struct image *im)
{
	struct tux3_volume *live = NULL, *disk = NULL;
	char err_live[512] = "", err_disk[512] = "";
	int r;

	im->fd = open(im->device, O_RDONLY | O_CLOEXEC);
	if (im->fd < 0) {
		image_err("cannot open %s: %s", im->device, strerror(errno));
		return -errno;
	}
	int rl = tux3_open_err(im->device, TUX3_OPEN_RDONLY, &live, err_live,
			       sizeof(err_live));
	int rd = tux3_open_err(im->device, TUX3_OPEN_NOREPLAY, &disk,
			       err_disk, sizeof(err_disk));
	if (rl && rd) {
		image_err("cannot open %s: %s", im->device,
			  err_live[0] ? err_live : strerror(-rl));
		return rl;
	}
	im->live_ok = !rl;
	im->noreplay_ok = !rd;
	if (rl)
		image_warn(im, "cannot replay the log (%s): imaging the "
			   "on-disk trees only", err_live[0] ? err_live :
			   strerror(-rl));
	if (live) {
		for (unsigned i = 0; i < tux3_warning_count(live); i++)
			image_warn(im, "%s", tux3_warning(live, i));
		if ((r = geometry(im, live)))
			goto out;
		if ((r = walk_one(im, live, 1, 1)))
			goto out;
	}
	if (disk) {
		int g = geometry(im, disk);
		if (g < 0) {
			r = g;
			goto out;
		}
		if (!g && (r = walk_one(im, disk, 0, !live)))
			goto out;
	}
	r = 0;
	if (im->verbose)
		work_report(im, live, disk);
	if (im->verbose && im->noreplay_skipped)
		fprintf(stderr, "%s: %s: the on-disk walk (without replay) "
			"skipped %u stale structures\n", image_prog,
			im->device, im->noreplay_skipped);
out:
	if (r == -ENOMEM)
		image_err("out of memory");
	if (live)
		tux3_close(live);
	if (disk)
		tux3_close(disk);
	return r;
}

void image_release(struct image *im)
{
	blkmap_free(&im->all);
	blkmap_free(&im->dirb);
	free(im->lnk);
	free(im->lnk_ext);
	for (size_t i = 0; i < im->novr; i++)
		free(im->ovr[i].data);
	free(im->ovr);
	scrambler_free(im->scr);
	if (im->fd >= 0)
		close(im->fd);
}

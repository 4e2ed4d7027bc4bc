/*
 * corrupt: write damaged variants of a Tux3 image, for the robustness
 * tests (tests/scripts/robust.sh).
 *
 *   corrupt [-t TARGET] [-c CATEGORIES] SOURCE OUTDIR
 *
 * TARGET is the file whose inode, attributes and data tree get damaged (a
 * path such as /hello.txt, or <inum>); default /.  CATEGORIES is a comma
 * list of sb,trunc,log,bnode,ileaf,attr,dleaf,dir,atom (default: all that
 * the image offers).  Each variant is written as OUTDIR/NAME.img (sparse:
 * zero chunks are not written) and listed in OUTDIR/list as
 *   NAME <TAB> EXPECTED-BLOCK-or-- <TAB> description
 * where EXPECTED is the block that a reader's error message must name.
 *
 * Every structure is located with libtux3 itself: tux3_open() (the log as
 * replay loaded it, the live roots), the walker (bnodes, leaves, inodes,
 * attributes, extents, directory entries) and the lookup API.  No block
 * number is hard-coded.  The source image is read into memory, and every
 * field read from it is bounds-checked before it is used or modified.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"
#include "format/endian.h"
#include "tux3_walk.h"

#define CHUNK 4096

static struct {
	uint8_t *data;
	uint64_t size;			/* bytes in the file */
	unsigned bits, bs;
	uint64_t volblocks;
	uint8_t *nonzero;		/* per CHUNK of the source */
} img;

static const char *outdir;
static FILE *list;
static unsigned written, skipped;

/* ---- bounds-checked access to the in-memory image ---- */

static uint8_t *span(uint64_t off, uint64_t len)
{
	if (off > img.size || len > img.size - off)
		return NULL;
	return img.data + off;
}

static uint64_t boff(uint64_t block)
{
	return block << img.bits;
}

/* The bytes of a volume block, or NULL if outside volume or file. */
static uint8_t *blockp(uint64_t block)
{
	if (block >= img.volblocks || block > (UINT64_MAX >> img.bits))
		return NULL;
	return span(boff(block), img.bs);
}

static bool get(uint64_t off, unsigned width, uint64_t *v)
{
	const uint8_t *p = span(off, width);
	if (!p)
		return false;
	*v = 0;
	for (unsigned i = 0; i < width; i++)
		*v = *v << 8 | p[i];
	return true;
}

/* ---- patches: applied in memory, written out, then reverted ---- */

struct patch {
	uint64_t off;
	unsigned len;
	uint8_t old[8];
};
static struct patch patches[16];
static unsigned npatches;
static bool patch_failed;

/* Store v big-endian in width bytes (1..8) at off, remembering the old
 * bytes.  A failure (out of bounds) spoils the variant being built. */
static void poke(uint64_t off, unsigned width, uint64_t v)
{
	uint8_t *p = span(off, width);
	if (!p || width > 8 || npatches == sizeof(patches) / sizeof(*patches)) {
		patch_failed = true;
		return;
	}
	struct patch *pt = &patches[npatches++];
	pt->off = off;
	pt->len = width;
	memcpy(pt->old, p, width);
	for (unsigned i = width; i-- > 0; v >>= 8)
		p[i] = (uint8_t)v;
}

static void revert(void)
{
	while (npatches) {
		struct patch *pt = &patches[--npatches];
		memcpy(img.data + pt->off, pt->old, pt->len);
	}
	patch_failed = false;
}

static void skip(const char *name, const char *why)
{
	fprintf(stderr, "corrupt: %s: skipped (%s)\n", name, why);
	skipped++;
	revert();
}

static int write_image(const char *path, uint64_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -errno;
	uint64_t nchunks = (len + CHUNK - 1) / CHUNK;
	uint8_t *dirty = calloc(nchunks ? nchunks : 1, 1);
	if (!dirty) {
		close(fd);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < npatches; i++)
		for (uint64_t o = patches[i].off;
		     o < patches[i].off + patches[i].len; o++)
			if (o / CHUNK < nchunks)
				dirty[o / CHUNK] = 1;
	int err = 0;
	for (uint64_t c = 0; c < nchunks && !err; c++) {
		if (!img.nonzero[c] && !dirty[c])
			continue;	/* leave a hole: reads back as zeros */
		uint64_t off = c * CHUNK;
		size_t n = len - off < CHUNK ? (size_t)(len - off) : CHUNK;
		for (size_t done = 0; done < n;) {
			ssize_t w = pwrite(fd, img.data + off + done, n - done,
					   (off_t)(off + done));
			if (w < 0) {
				err = -errno;
				break;
			}
			done += (size_t)w;
		}
	}
	free(dirty);
	if (!err && ftruncate(fd, (off_t)len) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	return err;
}

/* Write the current patches as variant NAME (file length len, 0 = whole
 * image), list it, and restore the source bytes. */
static void emit(const char *name, uint64_t expect, uint64_t len,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void emit(const char *name, uint64_t expect, uint64_t len,
		 const char *fmt, ...)
{
	char path[4096], desc[512], exp[32];
	va_list ap;

	if (patch_failed) {
		skip(name, "a field lies outside the image");
		return;
	}
	va_start(ap, fmt);
	vsnprintf(desc, sizeof(desc), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s.img", outdir, name);
	int err = write_image(path, len ? len : img.size);
	revert();
	if (err) {
		fprintf(stderr, "corrupt: %s: %s\n", path, strerror(-err));
		exit(1);
	}
	if (expect == TUX3_NONE)
		snprintf(exp, sizeof(exp), "-");
	else
		snprintf(exp, sizeof(exp), "%" PRIu64, expect);
	fprintf(list, "%s\t%s\t%s\n", name, exp, desc);
	written++;
}

/* ---- what the library tells us about the source ---- */

#define MAXREC 4096
#define MAXATTR 64

struct recinfo {
	uint64_t block;		/* log block */
	unsigned index;		/* in the chain, oldest first */
	unsigned offset, size;
	bool live;
	struct logrec r;	/* decoded from the image bytes */
};

static struct {
	struct tux3_volume *vol;
	tux3_ino_t target;
	/* log */
	unsigned nlog;
	uint64_t *logblocks;	/* oldest first */
	struct recinfo recs[MAXREC];
	unsigned nrecs;
	/* itree root bnode (live image, after replay) */
	bool have_root;
	uint64_t root;
	unsigned rootcount;
	uint64_t *rootkeys;
	/* the target inode */
	bool have_target;
	uint64_t target_leaf;
	struct tux3_attr_desc attrs[MAXATTR];
	unsigned nattrs;
	bool have_dleaf;
	uint64_t dleaf;
	/* root directory's first block, atom dictionary's first block */
	uint64_t rootdir_block, dict_block;
	unsigned walk_errors;
} vi;

static int on_logblock(void *ctx, unsigned index, tux3_block_t block,
		       unsigned bytes, tux3_block_t chain)
{
	(void)ctx; (void)bytes; (void)chain;
	if (index < vi.nlog)
		vi.logblocks[index] = block;
	return 0;
}

static int on_logrec(void *ctx, tux3_block_t block,
		     const struct tux3_logrec_info *info)
{
	(void)ctx;
	if (vi.nrecs == MAXREC)
		return 0;
	const uint8_t *b = blockp(block);
	uint64_t bytes;
	if (!b || !get(boff(block) + 2, 2, &bytes) ||
	    bytes + LOG_HEADER_SIZE > img.bs || info->offset >= img.bs)
		return 0;
	struct recinfo *ri = &vi.recs[vi.nrecs];
	if (!log_decode_record(b, info->offset,
			       (unsigned)bytes + LOG_HEADER_SIZE, &ri->r))
		return 0;
	ri->block = block;
	ri->index = vi.nlog;
	for (unsigned i = 0; i < vi.nlog; i++)
		if (vi.logblocks[i] == block)
			ri->index = i;
	ri->offset = info->offset;
	ri->size = info->size;
	ri->live = info->live;
	vi.nrecs++;
	return 0;
}

static int on_bnode(void *ctx, const struct tux3_node_info *n)
{
	(void)ctx;
	if (n->tree != TUX3_TREE_ITREE || n->level != 0 || vi.have_root)
		return 0;
	vi.have_root = true;
	vi.root = n->block;
	vi.rootcount = n->count;
	vi.rootkeys = malloc((n->count ? n->count : 1) * sizeof(uint64_t));
	if (vi.rootkeys)
		memcpy(vi.rootkeys, n->keys, n->count * sizeof(uint64_t));
	else
		vi.rootcount = 0;
	return 0;
}

static int on_leaf(void *ctx, const struct tux3_node_info *n)
{
	(void)ctx;
	if (n->tree == TUX3_TREE_DTREE && n->owner == vi.target &&
	    !vi.have_dleaf) {
		vi.have_dleaf = true;
		vi.dleaf = n->block;
	}
	return 0;
}

static int on_inode(void *ctx, const struct tux3_stat *st,
		    tux3_block_t leafblock, unsigned bloblen)
{
	(void)ctx; (void)bloblen;
	if (st->ino == vi.target) {
		vi.have_target = true;
		vi.target_leaf = leafblock;
	}
	return 0;
}

static int on_attr(void *ctx, tux3_ino_t ino, const struct tux3_attr_desc *a)
{
	(void)ctx;
	if (ino == vi.target && vi.nattrs < MAXATTR)
		vi.attrs[vi.nattrs++] = *a;
	return 0;
}

static int on_extent(void *ctx, tux3_ino_t ino, uint64_t logical,
		     tux3_block_t physical, uint64_t count, uint32_t version,
		     tux3_block_t leafblock)
{
	(void)ctx; (void)count; (void)version; (void)leafblock;
	if (logical != 0 || !physical)
		return 0;
	if (ino == TUX3_ROOT_INO)
		vi.rootdir_block = physical;
	else if (ino == TUX3_ATABLE_INO)
		vi.dict_block = physical;
	return 0;
}

static int on_error(void *ctx, const struct tux3_error *e)
{
	(void)ctx;
	fprintf(stderr, "corrupt: source walk: %s\n", e->what);
	vi.walk_errors++;
	return 0;
}

/* ---- the variants ---- */

static bool want(const char *cats, const char *cat)
{
	if (!cats)
		return true;
	size_t n = strlen(cat);
	for (const char *p = cats; *p;) {
		size_t len = strcspn(p, ",");
		if (len == n && !strncmp(p, cat, n))
			return true;
		p += len;
		if (*p == ',')
			p++;
	}
	return false;
}

#define SB TUX3_SB_OFFSET

static void superblock_variants(void)
{
	struct disksuper *sb = &vi.vol->super;
	uint64_t devblocks = img.size >> img.bits;
	struct root r = vi.vol->iroot;

	poke(SB + 7, 1, sb->magic[7] ^ 0x01);
	emit("sb-bad-magic", TUX3_NONE, 0, "superblock: magic date byte "
	     "0x%02x changed to 0x%02x", sb->magic[7], sb->magic[7] ^ 0x01);
	poke(SB + 24, 2, TUX3_MIN_BLOCKBITS - 1);
	emit("sb-blockbits-low", TUX3_NONE, 0, "superblock: blockbits %u",
	     TUX3_MIN_BLOCKBITS - 1);
	poke(SB + 24, 2, TUX3_MAX_BLOCKBITS + 1);
	emit("sb-blockbits-high", TUX3_NONE, 0, "superblock: blockbits %u",
	     TUX3_MAX_BLOCKBITS + 1);
	poke(SB + 24, 2, 0xffff);
	emit("sb-blockbits-ffff", TUX3_NONE, 0, "superblock: blockbits 65535");
	poke(SB + 32, 8, devblocks + 1);
	emit("sb-volblocks-beyond", TUX3_NONE, 0, "superblock: volblocks %"
	     PRIu64 ", one more than the %" PRIu64 "-block image holds",
	     devblocks + 1, devblocks);
	poke(SB + 32, 8, UINT64_MAX);
	emit("sb-volblocks-huge", TUX3_NONE, 0, "superblock: volblocks "
	     "2^64-1 (beyond 48 bits)");
	poke(SB + 32, 8, 1);
	emit("sb-volblocks-tiny", TUX3_NONE, 0, "superblock: volblocks 1 "
	     "(smaller than the reserved area)");
	r.block = img.volblocks;
	poke(SB + 40, 8, root_pack(r));
	emit("sb-iroot-outside", TUX3_NONE, 0, "superblock: iroot block %"
	     PRIu64 " = volblocks", r.block);
	r = vi.vol->iroot;
	r.block = 0;
	poke(SB + 40, 8, root_pack(r));
	emit("sb-iroot-reserved", TUX3_NONE, 0, "superblock: iroot block 0 "
	     "(reserved area)");
	r = vi.vol->iroot;
	r.depth = TUX3_MAX_DEPTH + 1;
	poke(SB + 40, 8, root_pack(r));
	emit("sb-iroot-depth", TUX3_NONE, 0, "superblock: iroot depth %u",
	     TUX3_MAX_DEPTH + 1);
	if (sb->logcount) {
		poke(SB + 88, 8, img.volblocks + 1);
		emit("sb-logchain-outside", TUX3_NONE, 0, "superblock: logchain "
		     "%" PRIu64 " beyond the volume", img.volblocks + 1);
	}
	poke(SB + 96, 4, UINT32_MAX);
	emit("sb-logcount-huge", TUX3_NONE, 0, "superblock: logcount "
	     "4294967295");
	poke(SB + 84, 4, UINT32_MAX);
	emit("sb-atomgen-huge", TUX3_NONE, 0, "superblock: atomgen 4294967295 "
	     "(atoms are 16 bits on disk)");
}

static void truncation_variants(void)
{
	uint64_t half = boff(img.volblocks / 2);
	if (half > TUX3_RESERVED_BYTES && half < img.size)
		emit("truncated-half", TUX3_NONE, half, "image cut to %" PRIu64
		     " bytes, half of the %" PRIu64 "-block volume", half,
		     img.volblocks);
	if (img.size > TUX3_RESERVED_BYTES &&
	    img.size - 1 < boff(img.volblocks))
		emit("truncated-1byte", TUX3_NONE, img.size - 1, "image one "
		     "byte shorter than the volume");
}

/* The index-th record of log block `index` (negative: from the end). */
static struct recinfo *rec_in(unsigned blockindex, int which)
{
	struct recinfo *first = NULL, *last = NULL;
	int n = 0;
	for (unsigned i = 0; i < vi.nrecs; i++) {
		if (vi.recs[i].index != blockindex)
			continue;
		if (n++ == which)
			first = &vi.recs[i];
		last = &vi.recs[i];
	}
	return which < 0 ? last : first;
}

static struct recinfo *find_rec(unsigned code, bool live_only)
{
	for (unsigned i = vi.nrecs; i-- > 0;)
		if (vi.recs[i].r.code == code && (vi.recs[i].live || !live_only))
			return &vi.recs[i];
	return NULL;
}

static void log_variants(void)
{
	unsigned n = vi.nlog;
	char name[64];
	struct recinfo *ri;

	if (!n) {
		skip("log-*", "the image has no log");
		return;
	}
	uint64_t newest = vi.logblocks[n - 1], oldest = vi.logblocks[0];

	poke(boff(newest), 2, 0x10ae);
	emit("log-bad-magic", newest, 0, "newest log block %" PRIu64 ": magic "
	     "0x10ae", newest);
	poke(boff(newest) + 2, 2, img.bs - LOG_HEADER_SIZE + 1);
	emit("log-bytes-too-large", newest, 0, "newest log block %" PRIu64
	     ": bytes %u (header + payload one byte past the block)", newest,
	     img.bs - LOG_HEADER_SIZE + 1);
	poke(boff(newest) + 2, 2, 0xffff);
	emit("log-bytes-ffff", newest, 0, "newest log block %" PRIu64
	     ": bytes 65535", newest);

	static const struct { unsigned code; int blk, rec; } codes[] = {
		{ 0x00, -1, 0 }, { 0x47, 0, -1 }, { 0xff, -2, 1 }, { 0x32, -1, -1 },
	};
	for (unsigned i = 0; i < sizeof(codes) / sizeof(*codes); i++) {
		int bi = codes[i].blk < 0 ? (int)n + codes[i].blk : codes[i].blk;
		if (bi < 0)
			bi = 0;
		ri = rec_in((unsigned)bi, codes[i].rec);
		if (!ri)
			ri = rec_in((unsigned)bi, 0);
		snprintf(name, sizeof(name), "log-code-%02x", codes[i].code);
		if (!ri) {
			skip(name, "no record in that log block");
			continue;
		}
		poke(boff(ri->block) + ri->offset, 1, codes[i].code);
		emit(name, ri->block, 0, "log block %" PRIu64 " offset %u: code "
		     "0x%02x replaced by invalid 0x%02x", ri->block, ri->offset,
		     ri->r.code, codes[i].code);
	}

	/* a record cut by the payload end: the last record longer than 1 */
	ri = NULL;
	for (unsigned i = n; i-- > 0 && !ri;) {
		struct recinfo *last = rec_in(i, -1);
		if (last && last->size > 1)
			ri = last;
	}
	if (ri) {
		unsigned bytes = ri->offset + ri->size - 1 - LOG_HEADER_SIZE;
		poke(boff(ri->block) + 2, 2, bytes);
		emit("log-record-overrun", ri->block, 0, "log block %" PRIu64
		     ": bytes %u cuts the %u-byte %s at offset %u", ri->block,
		     bytes, ri->size, log_code_name(ri->r.code), ri->offset);
	} else {
		skip("log-record-overrun", "no multi-byte record");
	}

	if ((ri = find_rec(LOG_BALLOC, false))) {
		poke(boff(ri->block) + ri->offset + 5, 6, img.volblocks + 5);
		emit("log-block-beyond", ri->block, 0, "log block %" PRIu64
		     " offset %u: BALLOC block %" PRIu64 " beyond the volume",
		     ri->block, ri->offset, img.volblocks + 5);
		poke(boff(ri->block) + ri->offset + 1, 4, img.volblocks);
		emit("log-count-beyond", ri->block, 0, "log block %" PRIu64
		     " offset %u: BALLOC count %" PRIu64 " from block %" PRIu64
		     " runs past the volume", ri->block, ri->offset,
		     img.volblocks, ri->r.block);
		poke(boff(ri->block) + ri->offset + 1, 4, 0);
		emit("log-count-zero", ri->block, 0, "log block %" PRIu64
		     " offset %u: BALLOC count 0", ri->block, ri->offset);
	} else {
		skip("log-block-beyond", "no BALLOC record");
	}
	if ((ri = find_rec(LOG_LEAF_REDIRECT, false))) {
		poke(boff(ri->block) + ri->offset + 7, 6, img.volblocks + 7);
		emit("log-redirect-beyond", ri->block, 0, "log block %" PRIu64
		     " offset %u: LEAF_REDIRECT new %" PRIu64 " beyond the "
		     "volume", ri->block, ri->offset, img.volblocks + 7);
	}

	/* chain damage: only links that replay follows (not the oldest's) */
	if (n >= 2) {
		uint64_t b = vi.logblocks[1];
		poke(boff(b) + 8, 8, b);
		emit("log-cycle-self", b, 0, "log block %" PRIu64 " chains to "
		     "itself", b);
		poke(boff(b) + 8, 8, 0);
		emit("log-chain-zero", b, 0, "log block %" PRIu64 " chains to "
		     "0 although logcount says %u blocks", b, n);
	} else {
		skip("log-cycle-self", "needs two log blocks");
	}
	if (n >= 3) {
		uint64_t b = vi.logblocks[1];
		poke(boff(b) + 8, 8, newest);
		emit("log-cycle-newer", b, 0, "log block %" PRIu64 " chains to "
		     "the newest block %" PRIu64, b, newest);
	} else {
		skip("log-cycle-newer", "needs three log blocks");
	}
	poke(SB + 96, 4, n + 1);
	poke(boff(oldest) + 8, 8, 0);
	emit("log-chain-short", oldest, 0, "logcount %u but the oldest block %"
	     PRIu64 " ends the chain (logchain 0)", n + 1, oldest);
}

/* bnode: the live itree root, rebuilt by replay from an on-disk image */
static void bnode_variants(void)
{
	struct recinfo *redirect = NULL, *ri;
	uint64_t src;

	if (!vi.have_root || vi.vol->iroot.depth < 2 || !vi.rootcount) {
		skip("bnode-*", "the inode table has no bnode");
		return;
	}
	for (unsigned i = 0; i < vi.nrecs; i++)
		if (vi.recs[i].live && vi.recs[i].r.code == LOG_BNODE_REDIRECT &&
		    vi.recs[i].r.newb == vi.root)
			redirect = &vi.recs[i];
	src = redirect ? redirect->r.oldb : vi.root;
	uint8_t *b = blockp(src);
	uint64_t magic, count;
	if (!b || !get(boff(src), 2, &magic) || !get(boff(src) + 4, 4, &count) ||
	    magic != TUX3_MAGIC_BNODE || count < 2 ||
	    count > bnode_capacity(img.bs)) {
		skip("bnode-*", "the root's on-disk source is not a bnode");
		return;
	}
	char via[128] = "";
	if (redirect)
		snprintf(via, sizeof(via), " (copied to live root %" PRIu64
			 " by BNODE_REDIRECT in log block %" PRIu64 ")",
			 vi.root, redirect->block);

	poke(boff(src), 2, 0xb4df);
	emit("bnode-bad-magic", src, 0, "bnode %" PRIu64 "%s: magic 0xb4df",
	     src, via);
	poke(boff(src) + 4, 4, UINT32_MAX);
	emit("bnode-count-huge", src, 0, "bnode %" PRIu64 "%s: count "
	     "4294967295", src, via);
	poke(boff(src) + 4, 4, 0);
	emit("bnode-count-zero", src, 0, "bnode %" PRIu64 "%s: count 0",
	     src, via);

	/* The last entry: no live record touches it if every live key is
	 * below the key before it. */
	uint64_t last = BNODE_HEADER + BNODE_ENTRY * (count - 1);
	uint64_t prevkey, lastkey;
	bool untouched = get(boff(src) + last - BNODE_ENTRY, 8, &prevkey) &&
			 get(boff(src) + last, 8, &lastkey);
	for (unsigned i = 0; i < vi.nrecs && untouched; i++) {
		const struct logrec *r = &vi.recs[i].r;
		if (!vi.recs[i].live)
			continue;
		if (((r->code == LOG_BNODE_ADD || r->code == LOG_BNODE_UPDATE) &&
		     r->key >= prevkey) ||
		    r->code == LOG_BNODE_DEL || r->code == LOG_BNODE_ADJUST ||
		    r->code == LOG_BNODE_SPLIT || r->code == LOG_BNODE_MERGE)
			untouched = false;
	}
	if (untouched) {
		poke(boff(src) + last, 8, prevkey);
		emit("bnode-keys-order", vi.root, 0, "bnode %" PRIu64 "%s: last "
		     "entry's key %" PRIu64 " set to the previous key %" PRIu64,
		     src, via, lastkey, prevkey);
		poke(boff(src) + last + 8, 8, img.volblocks + 3);
		emit("bnode-child-outside", vi.root, 0, "bnode %" PRIu64 "%s: "
		     "last entry's child %" PRIu64 " beyond the volume", src,
		     via, img.volblocks + 3);
	} else {
		skip("bnode-keys-order", "the log touches the last entry");
	}

	/* a live BNODE_UPDATE whose key no longer names an entry */
	ri = NULL;
	for (unsigned i = 0; i < vi.nrecs && !ri; i++)
		if (vi.recs[i].live && vi.recs[i].r.code == LOG_BNODE_UPDATE &&
		    vi.recs[i].r.parent == vi.root)
			ri = &vi.recs[i];
	bool keyfree = ri != NULL;
	for (unsigned i = 0; i < vi.rootcount && keyfree; i++)
		if (vi.rootkeys[i] == ri->r.key + 1)
			keyfree = false;
	if (keyfree) {
		poke(boff(ri->block) + ri->offset + 13, 6, ri->r.key + 1);
		emit("bnode-update-key", ri->block, 0, "log block %" PRIu64
		     " offset %u: BNODE_UPDATE of bnode %" PRIu64 " key %"
		     PRIu64 " changed to %" PRIu64 ", which no entry has",
		     ri->block, ri->offset, ri->r.parent, ri->r.key,
		     ri->r.key + 1);
	} else {
		skip("bnode-update-key", "no live BNODE_UPDATE of the root");
	}

	/* a live BNODE_ADD of a key the bnode already has */
	ri = NULL;
	for (unsigned i = 0; i < vi.nrecs && !ri; i++)
		if (vi.recs[i].live && vi.recs[i].r.code == LOG_BNODE_ADD &&
		    vi.recs[i].r.parent == vi.root)
			ri = &vi.recs[i];
	uint64_t dup;
	bool present = false;
	if (ri && get(boff(src) + BNODE_HEADER + BNODE_ENTRY, 8, &dup))
		for (unsigned i = 0; i < vi.rootcount; i++)
			if (vi.rootkeys[i] == dup && dup < TUX3_KEY_LIMIT)
				present = true;
	if (present) {
		poke(boff(ri->block) + ri->offset + 13, 6, dup);
		emit("bnode-add-dupkey", ri->block, 0, "log block %" PRIu64
		     " offset %u: BNODE_ADD to bnode %" PRIu64 " of key %"
		     PRIu64 ", which it already has (was %" PRIu64 ")",
		     ri->block, ri->offset, ri->r.parent, dup, ri->r.key);
	} else {
		skip("bnode-add-dupkey", "no live BNODE_ADD of the root");
	}

	/* a BNODE_REDIRECT to block 0 (inside the volume, but reserved) */
	if (redirect) {
		poke(boff(redirect->block) + redirect->offset + 7, 6, 0);
		emit("log-redirect-block0", redirect->block, 0, "log block %"
		     PRIu64 " offset %u: BNODE_REDIRECT %" PRIu64 " -> 0 "
		     "(reserved block)", redirect->block, redirect->offset,
		     redirect->r.oldb);
	}

	/* a crafted BNODE_SPLIT / BNODE_MERGE of the root into itself,
	 * appended to the newest log block */
	uint64_t newest = vi.logblocks[vi.nlog - 1], bytes;
	if (get(boff(newest) + 2, 2, &bytes) &&
	    LOG_HEADER_SIZE + bytes + 15 <= img.bs) {
		uint64_t at = boff(newest) + LOG_HEADER_SIZE + bytes;
		poke(boff(newest) + 2, 2, bytes + 15);
		poke(at, 1, LOG_BNODE_SPLIT);
		poke(at + 1, 2, 1);
		poke(at + 3, 6, vi.root);
		poke(at + 9, 6, vi.root);
		emit("log-split-self", newest, 0, "log block %" PRIu64 ": "
		     "appended BNODE_SPLIT pos 1 of bnode %" PRIu64 " into "
		     "itself", newest, vi.root);
		poke(boff(newest) + 2, 2, bytes + 13);
		poke(at, 1, LOG_BNODE_MERGE);
		poke(at + 1, 6, vi.root);
		poke(at + 7, 6, vi.root);
		emit("log-merge-self", newest, 0, "log block %" PRIu64 ": "
		     "appended BNODE_MERGE of bnode %" PRIu64 " into itself",
		     newest, vi.root);
	}
}

/* Locate the target's blob in its ileaf: byte offset in the image. */
static bool target_blob(uint64_t *blob, unsigned *len, unsigned *slot,
			unsigned *prev_end)
{
	uint64_t leaf = boff(vi.target_leaf), magic, count, ibase, start = 0,
		 end;
	if (!blockp(vi.target_leaf) || !get(leaf, 2, &magic) ||
	    !get(leaf + 2, 2, &count) || !get(leaf + 8, 8, &ibase) ||
	    magic != TUX3_MAGIC_ILEAF || count > (img.bs - ILEAF_HEADER) / 2 ||
	    vi.target < ibase || vi.target - ibase >= count)
		return false;
	unsigned k = (unsigned)(vi.target - ibase) + 1;
	if (k > 1 && !get(leaf + img.bs - 2 * (k - 1), 2, &start))
		return false;
	if (!get(leaf + img.bs - 2 * k, 2, &end) || end < start ||
	    end > img.bs - ILEAF_HEADER - 2 * count)
		return false;
	*blob = leaf + ILEAF_HEADER + start;
	*len = (unsigned)(end - start);
	*slot = k;
	*prev_end = (unsigned)start;
	return true;
}

static void ileaf_variants(void)
{
	uint64_t leaf = boff(vi.target_leaf), blob, count;
	unsigned len, k, prev;

	if (!vi.have_target || !target_blob(&blob, &len, &k, &prev) ||
	    !get(leaf + 2, 2, &count)) {
		skip("ileaf-*", "target inode not found in an ileaf");
		return;
	}
	uint64_t L = vi.target_leaf;
	poke(leaf, 2, 0x90df);
	emit("ileaf-bad-magic", L, 0, "ileaf %" PRIu64 " (inode %" PRIu64 "): "
	     "magic 0x90df", L, vi.target);
	poke(leaf + 2, 2, 0xffff);
	emit("ileaf-count-past-end", L, 0, "ileaf %" PRIu64 ": count 65535 "
	     "(dictionary larger than the block)", L);
	poke(leaf + 2, 2, (img.bs - ILEAF_HEADER) / 2 + 1);
	emit("ileaf-count-one-past", L, 0, "ileaf %" PRIu64 ": count %u, one "
	     "more than fits", L, (img.bs - ILEAF_HEADER) / 2 + 1);
	if (prev > 0) {
		poke(leaf + img.bs - 2 * k, 2, prev - 1);
		emit("ileaf-dict-order", L, 0, "ileaf %" PRIu64 ": dictionary "
		     "entry %u (inode %" PRIu64 ") %u, below the previous %u",
		     L, k, vi.target, prev - 1, prev);
	} else {
		skip("ileaf-dict-order", "target's blob is the first");
	}
	poke(leaf + img.bs - 2 * count, 2, img.bs - ILEAF_HEADER);
	emit("ileaf-dict-past-free", L, 0, "ileaf %" PRIu64 ": last dictionary "
	     "entry %u past the free space", L, img.bs - ILEAF_HEADER);
	poke(leaf + 8, 8, TUX3_KEY_LIMIT);
	emit("ileaf-ibase-huge", L, 0, "ileaf %" PRIu64 ": ibase 2^48", L);
	poke(leaf + 8, 8, TUX3_KEY_LIMIT - 2);
	emit("ileaf-ibase-overflow", L, 0, "ileaf %" PRIu64 ": ibase 2^48-2, "
	     "so its %" PRIu64 " slots run past the inode number limit", L,
	     count);
}

static void attr_variants(void)
{
	uint64_t blob;
	unsigned len, k, prev;
	const struct tux3_attr_desc *x = NULL;

	if (!vi.have_target || !vi.nattrs || !target_blob(&blob, &len, &k, &prev)) {
		skip("attr-*", "target inode has no attributes");
		return;
	}
	uint64_t L = vi.target_leaf;
	const struct tux3_attr_desc *a = &vi.attrs[0];
	if (a->offset + 2 <= len) {
		poke(blob + a->offset, 2, 7u << 12 | a->version);
		emit("attr-unknown-kind", L, 0, "ileaf %" PRIu64 ", inode %"
		     PRIu64 ": %s attribute at blob offset %u turned into "
		     "kind 7", L, vi.target, a->name, a->offset);
		poke(blob + a->offset, 2, 15u << 12 | a->version);
		emit("attr-kind-15", L, 0, "ileaf %" PRIu64 ", inode %" PRIu64
		     ": %s attribute at blob offset %u turned into kind 15", L,
		     vi.target, a->name, a->offset);
	}
	for (unsigned i = 0; i < vi.nattrs && !x; i++)
		if (vi.attrs[i].kind == ATTR_XATTR)
			x = &vi.attrs[i];
	if (x && x->offset + 4 <= len) {
		poke(blob + x->offset + 2, 2, len - x->offset);
		emit("attr-xattr-overrun", L, 0, "ileaf %" PRIu64 ", inode %"
		     PRIu64 ": XATTR at blob offset %u claims %u bytes, past "
		     "the %u-byte blob", L, vi.target, x->offset,
		     len - x->offset, len);
		poke(blob + x->offset + 2, 2, 0xffff);
		emit("attr-xattr-ffff", L, 0, "ileaf %" PRIu64 ", inode %"
		     PRIu64 ": XATTR at blob offset %u length 65535", L,
		     vi.target, x->offset);
	} else {
		skip("attr-xattr-overrun", "target has no xattr");
	}
}

static void dleaf_variants(void)
{
	uint64_t D = vi.dleaf, d = boff(D), magic, count;

	if (!vi.have_dleaf || !blockp(D) || !get(d, 2, &magic) ||
	    !get(d + 2, 2, &count) || magic != TUX3_MAGIC_DLEAF || count < 3 ||
	    count > (img.bs - DLEAF_HEADER) / DLEAF_ENTRY) {
		skip("dleaf-*", "target has no dleaf with two extents");
		return;
	}
	uint64_t e0 = d + DLEAF_HEADER, w0, w1, l1, n0;
	uint64_t elast = d + DLEAF_HEADER + DLEAF_ENTRY * (count - 1);
	if (!get(e0, 8, &w0) || !get(e0 + 8, 8, &w1) ||
	    !get(e0 + DLEAF_ENTRY, 8, &l1) || !get(elast, 8, &n0)) {
		skip("dleaf-*", "dleaf entries outside the image");
		return;
	}
	poke(d, 2, 0x1eaf);
	emit("dleaf-bad-magic", D, 0, "dleaf %" PRIu64 " (inode %" PRIu64 "): "
	     "magic 0x1eaf (the pre-2014 dleaf)", D, vi.target);
	poke(d + 2, 2, 0xffff);
	emit("dleaf-count-past-end", D, 0, "dleaf %" PRIu64 ": count 65535", D);
	poke(d + 2, 2, (img.bs - DLEAF_HEADER) / DLEAF_ENTRY + 1);
	emit("dleaf-count-one-past", D, 0, "dleaf %" PRIu64 ": count %u, one "
	     "more than fits", D, (img.bs - DLEAF_HEADER) / DLEAF_ENTRY + 1);
	poke(elast + 8 + 2, 6, D);
	emit("dleaf-no-sentinel", D, 0, "dleaf %" PRIu64 ": last entry maps "
	     "physical %" PRIu64 " (no sentinel)", D, D);
	poke(d + 2, 2, count - 1);
	emit("dleaf-sentinel-dropped", D, 0, "dleaf %" PRIu64 ": count %"
	     PRIu64 " leaves out the sentinel", D, count - 1);
	poke(e0 + DLEAF_ENTRY + 2, 6, w0 & TUX3_MAX_BLOCK);
	emit("dleaf-keys-order", D, 0, "dleaf %" PRIu64 ": entry 1 logical %"
	     PRIu64 " set equal to entry 0's", D, (uint64_t)(l1 & TUX3_MAX_BLOCK));
	uint64_t run = (l1 & TUX3_MAX_BLOCK) - (w0 & TUX3_MAX_BLOCK);
	uint64_t phys = run >= 2 ? img.volblocks - 1 : img.volblocks;
	poke(e0 + 8 + 2, 6, phys);
	emit("dleaf-extent-beyond", D, 0, "dleaf %" PRIu64 ": entry 0 maps %"
	     PRIu64 " blocks at %" PRIu64 ", past the %" PRIu64 "-block "
	     "volume", D, run, phys, img.volblocks);
	poke(e0, 2, 1);
	emit("dleaf-version", D, 0, "dleaf %" PRIu64 ": entry 0 has a version "
	     "(not in the 2014 format)", D);
	(void)w1; (void)n0;
}

/* Walk a directory-format block in the image (bounds-checked); returns
 * the number of records found, their offsets in offs. */
static unsigned dir_records(uint64_t block, unsigned *offs, unsigned max)
{
	unsigned n = 0;
	if (!blockp(block))
		return 0;
	for (uint64_t off = 0; off + DIRENT_HEADER <= img.bs && n < max;) {
		uint64_t rec_len;
		if (!get(boff(block) + off + 8, 2, &rec_len))
			break;
		if (rec_len == 65535)
			rec_len = 65536;
		if (rec_len < 16 || rec_len % 8 || rec_len > img.bs - off)
			break;
		offs[n++] = (unsigned)off;
		off += rec_len;
	}
	return n;
}

static void dir_variants(void)
{
	unsigned offs[512], n;
	uint64_t B = vi.rootdir_block, rec_len, name_len;

	if (!B || !(n = dir_records(B, offs, 512))) {
		skip("dir-*", "no root directory block");
		return;
	}
	uint64_t r0 = boff(B) + offs[0], rl = boff(B) + offs[n - 1];
	poke(r0 + 8, 2, 0);
	emit("dir-reclen-zero", B, 0, "root directory block %" PRIu64 ": "
	     "first record's rec_len 0", B);
	if (img.bs + 8 < 65535) {
		poke(r0 + 8, 2, img.bs + 8);
		emit("dir-reclen-past-end", B, 0, "root directory block %"
		     PRIu64 ": first record's rec_len %u, 8 past the block "
		     "end", B, img.bs + 8);
	}
	/* the last record: a lookup that stops earlier never sees it */
	if (n > 1 && get(rl + 8, 2, &rec_len) &&
	    offs[n - 1] + rec_len == img.bs) {
		poke(rl + 8, 2, rec_len + 8);
		emit("dir-last-reclen-past-end", B, 0, "root directory block %"
		     PRIu64 ": last record (offset %u) rec_len %" PRIu64 ", 8 "
		     "past the block end", B, offs[n - 1], rec_len + 8);
	}
	poke(r0 + 8, 2, 12);
	emit("dir-reclen-short", B, 0, "root directory block %" PRIu64 ": "
	     "first record's rec_len 12 (below the 16-byte minimum)", B);
	poke(r0 + 8, 2, 20);
	emit("dir-reclen-unaligned", B, 0, "root directory block %" PRIu64
	     ": first record's rec_len 20 (not a multiple of 8)", B);
	/* the first live record whose rec_len a name can outgrow */
	for (unsigned i = 0; i < n; i++) {
		uint64_t r = boff(B) + offs[i];
		if (!get(r + 8, 2, &rec_len) || !get(r + 10, 1, &name_len) ||
		    !name_len || rec_len > 255 + DIRENT_HEADER)
			continue;
		unsigned nl = (unsigned)rec_len - DIRENT_HEADER + 1;
		poke(r + 10, 1, nl);
		emit("dir-namelen-gt-reclen", B, 0, "root directory block %"
		     PRIu64 ": record at offset %u name_len %u does not fit "
		     "rec_len %" PRIu64, B, offs[i], nl, rec_len);
		break;
	}
}

static void atom_variants(void)
{
	unsigned offs[512], n;
	uint64_t B = vi.dict_block, name_len;
	uint32_t atomgen = vi.vol->super.atomgen;

	if (!B || !vi.vol->super.atomdictsize ||
	    !(n = dir_records(B, offs, 512))) {
		skip("atom-*", "no atom dictionary");
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		uint64_t r = boff(B) + offs[i];
		if (!get(r + 10, 1, &name_len) || !name_len)
			continue;
		poke(r, 8, atomgen);
		emit("atom-ge-atomgen", B, 0, "atom dictionary block %" PRIu64
		     ": record at offset %u has atom %u = atomgen", B, offs[i],
		     atomgen);
		poke(r, 8, 0xffffffffffffULL);
		emit("atom-huge", B, 0, "atom dictionary block %" PRIu64
		     ": record at offset %u has atom 2^48-1", B, offs[i]);
		poke(r + 8, 2, 0);
		emit("atom-reclen-zero", B, 0, "atom dictionary block %" PRIu64
		     ": record at offset %u has rec_len 0", B, offs[i]);
		return;
	}
	skip("atom-*", "no live dictionary record");
}

/* ---- main ---- */

static int load_image(const char *path)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(path);
		return -1;
	}
	img.size = (uint64_t)st.st_size;
	img.data = malloc(img.size ? img.size : 1);
	uint64_t nchunks = (img.size + CHUNK - 1) / CHUNK;
	img.nonzero = calloc(nchunks ? nchunks : 1, 1);
	if (!img.data || !img.nonzero) {
		fprintf(stderr, "corrupt: %s: out of memory\n", path);
		close(fd);
		return -1;
	}
	for (uint64_t done = 0; done < img.size;) {
		ssize_t n = pread(fd, img.data + done, img.size - done,
				  (off_t)done);
		if (n <= 0) {
			fprintf(stderr, "corrupt: %s: short read\n", path);
			close(fd);
			return -1;
		}
		done += (uint64_t)n;
	}
	close(fd);
	for (uint64_t c = 0; c < nchunks; c++) {
		uint64_t off = c * CHUNK;
		size_t n = img.size - off < CHUNK ? (size_t)(img.size - off) : CHUNK;
		for (size_t i = 0; i < n; i++)
			if (img.data[off + i]) {
				img.nonzero[c] = 1;
				break;
			}
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: corrupt [-t TARGET] [-c CATEGORIES] SOURCE "
		"OUTDIR\n  CATEGORIES: comma list of sb,trunc,log,bnode,ileaf,"
		"attr,dleaf,dir,atom (default all)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *target = "/", *cats = NULL;
	char errbuf[512], path[4096];
	int c;

	while ((c = getopt(argc, argv, "t:c:")) != -1) {
		if (c == 't')
			target = optarg;
		else if (c == 'c')
			cats = optarg;
		else
			usage();
	}
	if (argc - optind != 2)
		usage();
	const char *src = argv[optind];
	outdir = argv[optind + 1];
	if (mkdir(outdir, 0755) < 0 && errno != EEXIST) {
		perror(outdir);
		return 1;
	}
	if (load_image(src))
		return 1;
	if (tux3_open_err(src, TUX3_OPEN_RDONLY, &vi.vol, errbuf,
			  sizeof(errbuf))) {
		fprintf(stderr, "corrupt: cannot open the source: %s\n", errbuf);
		return 1;
	}
	struct tux3_volume *vol = vi.vol;
	img.bits = vol->blockbits;
	img.bs = vol->blocksize;
	img.volblocks = vol->volblocks;
	if (boff(img.volblocks) > img.size) {
		fprintf(stderr, "corrupt: source image is truncated\n");
		return 1;
	}

	if (target[0] == '<') {
		char *end;
		vi.target = strtoull(target + 1, &end, 0);
		if (*end != '>' || end[1]) {
			fprintf(stderr, "corrupt: bad target %s\n", target);
			return 1;
		}
	} else if (tux3_lookup_path(vol, target, &vi.target)) {
		fprintf(stderr, "corrupt: %s: %s\n", target,
			tux3_error_text(vol, errbuf, sizeof(errbuf)));
		return 1;
	}

	/* the log, as replay loaded it */
	vi.nlog = vol->logcount;
	vi.logblocks = calloc(vi.nlog ? vi.nlog : 1, sizeof(uint64_t));
	if (!vi.logblocks)
		return 1;
	struct tux3_walk_ops logops = { .logblock = on_logblock,
					.logrec = on_logrec };
	if (tux3_walk_log(vol, &logops, NULL) < 0) {
		fprintf(stderr, "corrupt: cannot walk the log\n");
		return 1;
	}
	/* everything else: one walk of the whole volume */
	struct tux3_walk_ops ops = {
		.bnode = on_bnode, .leaf = on_leaf, .inode = on_inode,
		.attr = on_attr, .extent = on_extent, .error = on_error,
	};
	if (tux3_walk(vol, &ops, NULL) == -ENOMEM)
		return 1;
	if (vi.walk_errors)
		fprintf(stderr, "corrupt: warning: the source has %u invalid "
			"structures\n", vi.walk_errors);

	snprintf(path, sizeof(path), "%s/list", outdir);
	list = fopen(path, "w");
	if (!list) {
		perror(path);
		return 1;
	}
	if (want(cats, "sb"))
		superblock_variants();
	if (want(cats, "trunc"))
		truncation_variants();
	if (want(cats, "log"))
		log_variants();
	if (want(cats, "bnode"))
		bnode_variants();
	if (want(cats, "ileaf"))
		ileaf_variants();
	if (want(cats, "attr"))
		attr_variants();
	if (want(cats, "dleaf"))
		dleaf_variants();
	if (want(cats, "dir"))
		dir_variants();
	if (want(cats, "atom"))
		atom_variants();
	if (fclose(list)) {
		perror(path);
		return 1;
	}
	fprintf(stderr, "corrupt: %s: %u variants written to %s, %u skipped\n",
		src, written, outdir, skipped);
	tux3_close(vol);
	free(vi.logblocks);
	free(vi.rootkeys);
	free(img.data);
	free(img.nonzero);
	return 0;
}

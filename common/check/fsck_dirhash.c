/*
 * The end of pass 5: every directory's on-disk index (DIR_INDEX,
 * doc/format.md 15.5) against its entries, after the namespace repairs.
 * An index is rebuilt from the entries when it is damaged (a block fails
 * its CRC or its fields) or out of step (its pairs are not the entries'
 * pairs).  A stale one (another writer committed since it was written,
 * or a crash tore the superblock from its seal, which looks the same)
 * is no damage: nothing uses it, and the directory's next create
 * rebuilds it, so it is only told (and fsck -D rebuilds it).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "check/fsck_internal.h"

/* Pairs {hash, block} as a sorted list of 64-bit keys. */
struct dx_keys {
	uint64_t *v;
	size_t n, cap;
	uint32_t seed;
	uint64_t logical;
};

static int key_add(struct dx_keys *k, uint32_t hash, uint64_t block)
{
	if (k->n == k->cap) {
		size_t c = k->cap ? k->cap * 2 : 256;
		void *v = realloc(k->v, c * sizeof(*k->v));
		if (!v)
			return -ENOMEM;
		k->v = v;
		k->cap = c;
	}
	k->v[k->n++] = (uint64_t)hash << 32 | (block & 0xffffffffu);
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int entry_key(void *ctx, const struct dirent_info *d)
{
	struct dx_keys *k = ctx;
	return key_add(k, dirhash_name(k->seed, d->name, d->name_len),
		       k->logical);
}

/* One directory's check: what is wrong goes to why, and the checks
 * answer 0 sound (or no index), 1 a problem, DX_STALE a stale index,
 * <0 an error. */
#define DX_STALE 2
struct dx_check {
	struct tux3_volume *vol;
	struct inode *dir;
	uint8_t *blk;
	struct dx_keys have, want;
	char why[200];
};

static int entries_keys(struct dx_check *c)
{
	struct tux3_volume *vol = c->vol;
	struct dx_keys *k = &c->want;
	unsigned bs = vol->blocksize;
	uint64_t n = c->dir->size >> vol->blockbits;
	for (uint64_t b = 0; b < n; b++) {
		int err = dir_read_block(vol, c->dir, b, c->blk);
		if (err)
			return err;
		if (dirhash_is_index(c->blk, bs))
			continue;
		k->logical = b;
		err = dirblock_iterate(vol, c->blk, bs, b << vol->blockbits,
				       TUX3_NONE, c->dir->inum, entry_key, k);
		if (err)
			return err;
	}
	return 0;
}

static int bad(struct dx_check *c, const char *fmt, uint64_t a, uint64_t b)
{
	snprintf(c->why, sizeof(c->why), fmt, a, b);
	return 1;
}

/* A bucket named by two spans of slots: each lookup of either span
 * reads it, and the first split then loses the other span's names. */
static int buckets_shared(struct dx_check *c, struct dx_keys *seen)
{
	if (seen->n > 1)
		qsort(seen->v, seen->n, sizeof(uint64_t), key_cmp);
	for (size_t i = 1; i < seen->n; i++)
		if (seen->v[i] == seen->v[i - 1])
			return bad(c, "bucket at logical %" PRIu64 " is named "
				   "by two spans of slots", seen->v[i], 0);
	return 0;
}

/* Every bucket the table names, each once: its pairs, its depth against
 * the slots that name it.  Every slot is read: a bucket of local depth
 * L is named by all 2^(G-L) slots of its span, and a slot inside a span
 * that names another block would send its lookups there (to a bucket
 * that lacks their names), which no check of the buckets alone finds. */
static int index_keys(struct dx_check *c, const struct dirhash_head *root,
		      const uint8_t *rootblk)
{
	struct tux3_volume *vol = c->vol;
	unsigned per = dirhash_table_slots(vol->blocksize);
	uint64_t nslots = 1ull << root->depth, end = 0;
	uint8_t *tbl = malloc(vol->blocksize);
	struct dx_keys seen = { 0 };
	uint32_t cur = 0;	/* the bucket of the span ending at end */
	int err = tbl ? 0 : -ENOMEM;
	if (!err && root->count != (nslots + per - 1) / per)
		err = bad(c, "root names %" PRIu64 " table blocks for 2^%"
			  PRIu64 " slots", root->count, root->depth);
	for (uint64_t s = 0; !err && s < nslots; s++) {
		struct dirhash_head th, bh;
		if (s % per == 0 &&
		    dirhash_read(vol, c->dir, dirhash_item(rootblk, s / per),
				 DIRHASH_TABLE, tbl, &th)) {
			err = bad(c, "table block %" PRIu64 " (logical %" PRIu64
				  ") is not a sound index block", s / per,
				  dirhash_item(rootblk, s / per));
			break;
		}
		uint32_t at = dirhash_item(tbl, (unsigned)(s % per));
		if (s < end) {
			if (at != cur)
				err = bad(c, "slot %" PRIu64 " names logical "
					  "block %" PRIu64 ", not the bucket "
					  "of the rest of its span", s, at);
			continue;
		}
		if (dirhash_read(vol, c->dir, at, DIRHASH_BUCKET, c->blk,
				 &bh)) {
			err = bad(c, "slot %" PRIu64 " names logical block %"
				  PRIu64 ", not a sound bucket", s, at);
			break;
		}
		/* the depth before the shift: a bucket deeper than the root
		 * (a damaged header) would shift by more than 63 */
		uint64_t span = bh.depth > root->depth ? 0 :
				1ull << (root->depth - bh.depth);
		if (!span || s % span) {
			err = bad(c, "bucket at logical %" PRIu64 " has depth %"
				  PRIu64 ", which its slots do not match", at,
				  bh.depth);
			break;
		}
		for (uint32_t i = 0; i < bh.count && !err; i++) {
			uint32_t h = dirhash_item(c->blk, 2 * i);
			if (root->depth && (h >> (32 - root->depth)) / span !=
					   s / span)
				err = bad(c, "bucket at logical %" PRIu64
					  " holds hash %#" PRIx64 " of another "
					  "bucket", at, h);
			else
				err = key_add(&c->have, h,
					      dirhash_item(c->blk, 2 * i + 1));
		}
		if (!err)
			err = key_add(&seen, 0, at);
		cur = at;
		end = s + span;
	}
	if (!err)
		err = buckets_shared(c, &seen);
	free(seen.v);
	free(tbl);
	return err;
}

static int check_index(struct dx_check *c)
{
	struct tux3_volume *vol = c->vol;
	struct dirhash_head root;
	int err = dir_read_block(vol, c->dir, 0, c->blk);
	if (err || !dirhash_is_index(c->blk, vol->blocksize))
		return err;
	uint8_t *rootblk = malloc(vol->blocksize);
	if (!rootblk)
		return -ENOMEM;
	memcpy(rootblk, c->blk, vol->blocksize);
	int r = dirhash_decode(rootblk, vol->blocksize, c->dir->inum, 0, &root);
	if (r || root.kind != DIRHASH_ROOT)
		err = bad(c, "its root (logical block 0) fails its checks "
			  "(%" PRIu64 ", kind %" PRIu64 ")", (uint64_t)r,
			  r ? 0 : root.kind);
	else if (root.gen != vol->dxgen) {
		bad(c, "generation %" PRIu64 ", the volume's is %" PRIu64,
		    root.gen, vol->dxgen);
		err = DX_STALE;
	} else if (root.count) {
		c->want.seed = root.seed;
		err = index_keys(c, &root, rootblk);
	}
	if (!err && root.count) {
		if ((err = entries_keys(c)))
			goto out;
		if (c->have.n)
			qsort(c->have.v, c->have.n, sizeof(uint64_t), key_cmp);
		if (c->want.n)
			qsort(c->want.v, c->want.n, sizeof(uint64_t), key_cmp);
		if (c->have.n != c->want.n ||
		    (c->have.n && memcmp(c->have.v, c->want.v,
					 c->have.n * sizeof(uint64_t))))
			err = bad(c, "its %" PRIu64 " pairs are not the %" PRIu64
				  " entries' names and blocks", c->have.n,
				  c->want.n);
	}
out:
	free(rootblk);
	return err;
}

static int check_dir(struct fsck *f, tux3_ino_t inum, uint8_t *blk)
{
	struct tux3_volume *vol = f->vol;
	struct inode dir;
	int err = inode_load_dir(vol, inum, &dir);
	if (err) {
		tux3_clear_error(vol);
		return 0;	/* pass 5 has said what is wrong with it */
	}
	struct dx_check c = { .vol = vol, .dir = &dir, .blk = blk };
	err = dir.size >= vol->blocksize ? check_index(&c) : 0;
	if (err < 0) {
		tux3_clear_error(vol);
		err = 0;	/* an entry block pass 5 left: no verdict */
	}
	if (err == DX_STALE) {
		fsck_info(f, "directory %" PRIu64 ": its on-disk index is "
			  "stale (%s: another writer committed since); its "
			  "next create, or fsck -D, rebuilds it",
			  (uint64_t)inum, c.why);
		err = 0;
	}
	if (err > 0 &&
	    fsck_problem(f, P5_DIRHASH, true, FSCK_AT(.inum = inum, .dir = inum),
			 (uint64_t)inum, c.why)) {
		err = dirhash_build(vol, &dir);
		if (err == DIRHASH_NONE)
			err = 0;
		if (!err)
			err = inode_store(vol, &dir);
		fsck_fixed(f, err);
	}
	free(c.have.v);
	free(c.want.v);
	inode_free(&dir);
	return err < 0 && err != -EUCLEAN ? err : 0;
}

/* -D: one directory packed, its index rebuilt.  A directory pass 5
 * could not read, or one with a block that does not decode, is left as
 * it is (its problems were reported); a versioned volume's too. */
static int optimize_dir(struct fsck *f, tux3_ino_t inum)
{
	struct tux3_volume *vol = f->vol;
	struct tux3_fsck_result *res = f->res;
	struct dir_compact_result c;
	struct inode dir;
	int err = inode_load_dir(vol, inum, &dir);
	if (!err) {
		err = dir_compact(vol, &dir, &c);
		inode_free(&dir);
	}
	if (err == -EIO || err == -ENOMEM || err == -ENOSPC)
		return err;
	if (err) {
		tux3_clear_error(vol);
		fsck_info(f, "directory %" PRIu64 " is not optimized: %s",
			  (uint64_t)inum, strerror(-err));
		return 0;
	}
	res->dir_blocks_before += c.blocks_before;
	res->dir_blocks_after += c.blocks_after;
	if (c.changed) {
		res->dirs_optimized++;
		res->modified = 1;
	}
	return 0;
}

int fsck_dirhash(struct fsck *f)
{
	struct tux3_volume *vol = f->vol;
	tux3_ino_t *dirs = NULL;
	size_t n = 0;
	bool optimize = f->optimize_dirs && fsck_repairing(f);
	if (!vol || f->stop || (!dirhash_feature(vol) && !optimize))
		return 0;
	int err = volume_dirs(vol, &dirs, &n);
	/* damage the walk skipped (a data tree, a leaf) is the earlier
	 * passes' to report: the directories it could list are checked */
	if (err == -EUCLEAN)
		err = 0;
	tux3_clear_error(vol);
	uint8_t *blk = malloc(vol->blocksize);
	if (!blk)
		err = -ENOMEM;
	if (optimize)
		fsck_info(f, "Pass 5A: Optimizing directories");
	for (size_t i = 0; !err && optimize && i < n && !f->stop; i++)
		err = optimize_dir(f, dirs[i]);
	for (size_t i = 0; !err && dirhash_feature(vol) && i < n &&
			   !f->stop; i++)
		err = check_dir(f, dirs[i], blk);
	free(blk);
	free(dirs);
	return err;
}

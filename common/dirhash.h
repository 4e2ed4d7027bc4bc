/*
 * The on-disk directory index (DIR_INDEX, doc/format.md 15.5): an
 * extendible hash inside the directory file, root at logical block 0,
 * table blocks, buckets of {name hash, entry block} pairs.  dirhash.c
 * reads it (lookups, and the path to a bucket for the writer);
 * write/dirhash_write.c keeps it in step and builds it.
 * Part of the read core: may call format/ and io/ and the core.
 */
#ifndef TUX3_DIRHASH_H
#define TUX3_DIRHASH_H

#include "format/format.h"

/* "No usable on-disk index in this directory": the feature is off, the
 * directory has none, or its blocks are stale or damaged.  The same
 * value as DIR_INDEX_NONE, so a caller tries the next way. */
#define DIRHASH_NONE	1

/* The way from the root to the bucket of one hash, with the blocks read
 * on it (each a blocksize buffer the path owns). */
struct dirhash_path {
	struct dirhash_head root, table, bucket;
	uint32_t hash, slot;
	uint64_t table_at, bucket_at;	/* logical blocks */
	uint8_t *rootblk, *tableblk, *bucketblk;
};

bool dirhash_feature(const struct tux3_volume *vol);
/* The root's hash seed for dir (format.md 15.5). */
uint32_t dirhash_seed(const struct tux3_volume *vol, tux3_ino_t dir);
/* Check one index block of dir at logical as the walk needs it: sound,
 * of kind, of the volume's generation.  0 or DIRHASH_NONE. */
int dirhash_read(struct tux3_volume *vol, const struct inode *dir,
		 uint64_t logical, unsigned kind, uint8_t *blk,
		 struct dirhash_head *h);
/* Read the path to the bucket of name's hash (p->hash, with the root's
 * seed): 0, DIRHASH_NONE, or a negative errno of a read.
 * dirhash_path_free releases the buffers either way. */
int dirhash_walk(struct tux3_volume *vol, const struct inode *dir,
		 const char *name, unsigned len, struct dirhash_path *p);
void dirhash_path_free(struct dirhash_path *p);
/* Whether dir's on-disk index may be used: a sound root of the current
 * generation (blk: a scratch block). */
bool dirhash_current(struct tux3_volume *vol, const struct inode *dir,
		     uint8_t *blk);
/* Find name: 0 and its record in d (d->name is NULL: the block is
 * gone), -ENOENT (certainly absent), DIRHASH_NONE, or a negative errno. */
int dirhash_find(struct tux3_volume *vol, const struct inode *dir,
		 const char *name, unsigned len, struct dirent_info *d);

#endif

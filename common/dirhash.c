/*
 * Reading the on-disk directory index (see dirhash.h): root, one table
 * block and one bucket, then the entry blocks the bucket names for the
 * hash.  Every block read through it is checked (magic, CRC, kind,
 * generation); anything short of that is "no index" and the caller
 * takes the in-memory index or the linear path, never a wrong answer
 * from a damaged block.
 */
#include <stdlib.h>
#include "core.h"

bool dirhash_feature(const struct tux3_volume *vol)
{
	return vol->ident.present &&
	       (vol->ident.ro_compat & TUX3_FEATURE_RO_COMPAT_DIR_INDEX);
}

uint32_t dirhash_seed(const struct tux3_volume *vol, tux3_ino_t dir)
{
	uint8_t b[8];
	put_be64(b, dir);
	return tux3_crc32c(tux3_crc32c(0, b, sizeof(b)), vol->ident.uuid,
			   sizeof(vol->ident.uuid));
}

int dirhash_read(struct tux3_volume *vol, const struct inode *dir,
		 uint64_t logical, unsigned kind, uint8_t *blk,
		 struct dirhash_head *h)
{
	if (logical >= dir->size >> vol->blockbits)
		return DIRHASH_NONE;
	int err = dir_read_block(vol, dir, logical, blk);
	if (err)
		return err;
	if (dirhash_decode(blk, vol->blocksize, dir->inum, logical, h) ||
	    h->kind != kind || h->gen != vol->dxgen)
		return DIRHASH_NONE;
	return 0;
}

void dirhash_path_free(struct dirhash_path *p)
{
	free(p->rootblk);
	free(p->tableblk);
	free(p->bucketblk);
	p->rootblk = p->tableblk = p->bucketblk = NULL;
}

/* The root's shape: the table blocks it needs for 2^G slots. */
static bool root_sound(const struct tux3_volume *vol,
		       const struct dirhash_head *r)
{
	uint64_t slots = 1ull << r->depth;
	unsigned t = dirhash_table_slots(vol->blocksize);
	return r->count == (slots + t - 1) / t;
}

bool dirhash_current(struct tux3_volume *vol, const struct inode *dir,
		     uint8_t *blk)
{
	struct dirhash_head h;
	return dirhash_feature(vol) &&
	       !dirhash_read(vol, dir, 0, DIRHASH_ROOT, blk, &h) &&
	       root_sound(vol, &h);
}

int dirhash_walk(struct tux3_volume *vol, const struct inode *dir,
		 const char *name, unsigned len, struct dirhash_path *p)
{
	unsigned bs = vol->blocksize, t = dirhash_table_slots(bs);
	*p = (struct dirhash_path){ 0 };
	if (!dirhash_feature(vol) || dir->size < bs)
		return DIRHASH_NONE;
	p->rootblk = malloc(bs);
	p->tableblk = malloc(bs);
	p->bucketblk = malloc(bs);
	if (!p->rootblk || !p->tableblk || !p->bucketblk)
		return -ENOMEM;
	int err = dirhash_read(vol, dir, 0, DIRHASH_ROOT, p->rootblk,
			       &p->root);
	if (err)
		return err;
	if (!root_sound(vol, &p->root))
		return DIRHASH_NONE;
	p->hash = dirhash_name(p->root.seed, name, len);
	p->slot = p->root.depth ? p->hash >> (32 - p->root.depth) : 0;
	p->table_at = dirhash_item(p->rootblk, p->slot / t);
	err = dirhash_read(vol, dir, p->table_at, DIRHASH_TABLE, p->tableblk,
			   &p->table);
	if (err)
		return err;
	if (p->slot % t >= p->table.count)
		return DIRHASH_NONE;
	p->bucket_at = dirhash_item(p->tableblk, p->slot % t);
	err = dirhash_read(vol, dir, p->bucket_at, DIRHASH_BUCKET,
			   p->bucketblk, &p->bucket);
	if (err)
		return err;
	return p->bucket.depth > p->root.depth ? DIRHASH_NONE : 0;
}

/* The record named name in the entry block at logical, if it is there. */
static int find_in_block(struct tux3_volume *vol, const struct inode *dir,
			 uint64_t logical, const char *name, unsigned len,
			 uint8_t *blk, struct dirent_info *d)
{
	unsigned bs = vol->blocksize;
	if (logical >= dir->size >> vol->blockbits)
		return DIRHASH_NONE;
	int err = dir_read_block(vol, dir, logical, blk);
	if (err)
		return err;
	int off = dirblock_find(blk, bs, name, len);
	if (off == -ENOENT)
		return -ENOENT;
	if (off < 0 ||
	    dirblock_record(blk, bs, (unsigned)off, logical << vol->blockbits,
			    d))
		return DIRHASH_NONE;	/* the linear path reports it */
	d->name = NULL;
	return 0;
}

int dirhash_find(struct tux3_volume *vol, const struct inode *dir,
		 const char *name, unsigned len, struct dirent_info *d)
{
	struct dirhash_path p;
	int err = dirhash_walk(vol, dir, name, len, &p);
	for (uint32_t i = 0; !err && i < p.bucket.count; i++) {
		if (dirhash_item(p.bucketblk, 2 * i) != p.hash)
			continue;
		err = find_in_block(vol, dir,
				    dirhash_item(p.bucketblk, 2 * i + 1),
				    name, len, p.tableblk, d);
		if (!err)
			goto out;
		if (err == -ENOENT)
			err = 0;	/* another name of the same hash */
	}
	if (!err)
		err = -ENOENT;
out:
	dirhash_path_free(&p);
	return err;
}

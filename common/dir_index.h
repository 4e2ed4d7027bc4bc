/*
 * The in-memory directory index (dir_index.c): for a directory of
 * DIR_INDEX_MIN_BLOCKS blocks or more, a hash table of its names (name
 * hash -> logical block and offset of the record) and the largest room
 * in each block, built by the first lookup and kept in step by every
 * write of the directory's blocks (inode_write_data tells it), so that a
 * lookup, create or unlink reads one block, not the directory.  Nothing
 * of it is ever written: the disk is exactly what the linear path makes.
 * It hangs off the volume (vol->dirindex), is dropped with it, and is
 * bounded in bytes (the least recently used directories go first).
 * Part of the read core: may call format/ and io/ and the core.
 */
#ifndef TUX3_DIR_INDEX_H
#define TUX3_DIR_INDEX_H

#include "format/format.h"

/* The defaults tux3_set_dir_index changes. */
#define DIR_INDEX_MIN_BLOCKS	4
#define DIR_INDEX_MAX_BYTES	((size_t)64 << 20)
#define DIR_INDEX_MAX_DIRS	256

/* "No index for this directory (too small, damaged, over the bound or
 * switched off): take the linear path", as a return value. */
#define DIR_INDEX_NONE		1

/* Find name: 0 and its record in d (d->name points into a buffer the
 * next index call reuses), -ENOENT (certainly absent), DIR_INDEX_NONE,
 * or a negative errno of a block read.  Builds the index on first use. */
int dir_index_find(struct tux3_volume *vol, const struct inode *dir,
		   const char *name, unsigned len, struct dirent_info *d);
/* The first block (in block order, as the linear first fit takes it)
 * with room for a record of a name of len: 0 and *logical (the block
 * count when none has room), or DIR_INDEX_NONE (*logical untouched). */
/* Whether dir's in-memory index is built and current (no build). */
bool dir_index_cached(struct tux3_volume *vol, const struct inode *dir);
int dir_index_room(struct tux3_volume *vol, const struct inode *dir,
		   unsigned len, uint64_t *logical);
/* inode_write_data wrote len bytes of buf at pos of inode (err its
 * result): an indexed directory's blocks are indexed again, anything
 * else it cannot follow drops that index. */
void dir_index_wrote(struct tux3_volume *vol, const struct inode *inode,
		     const void *buf, size_t len, uint64_t pos, int err);
/* Drop one directory's index (its inode went or was truncated), or all
 * of them (a raw edit may have changed anything). */
void dir_index_forget(struct tux3_volume *vol, tux3_ino_t inum);
void dir_index_forget_all(struct tux3_volume *vol);
/* Free everything (the close). */
void dir_index_free(struct tux3_volume *vol);

/* What is held, for the tests and benches. */
struct dir_index_stats {
	unsigned dirs;		/* indexes held (usable ones) */
	uint64_t entries;	/* names in them */
	uint64_t bytes;		/* memory they take */
	uint64_t builds;	/* indexes built since the open */
};
void dir_index_stats(const struct tux3_volume *vol,
		     struct dir_index_stats *s);
/* Test hook: the name hash (NULL: the default), e.g. a weak one that
 * makes every name collide.  Drops every index. */
typedef uint32_t (*dir_index_hash_fn)(uint32_t seed, const char *name,
				      unsigned len);
int dir_index_set_hash(struct tux3_volume *vol, dir_index_hash_fn fn);

#endif

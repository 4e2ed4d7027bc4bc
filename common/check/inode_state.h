/*
 * Per-inode state of the namespace check (inode_state.c), kept compact
 * as e2fsck keeps its inode bitmaps and icount: half a byte per inode
 * number, in 1,024-inode chunks made only where inodes are, and exact
 * counters only for the few inodes that need them (directories, inodes
 * whose link count is not 1, orphans, inodes met under a second name).
 * A chunk whose inodes are runs of a few kinds keeps the runs instead.
 */
#ifndef TUX3_INODE_STATE_H
#define TUX3_INODE_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the check knows of one inode, unpacked. */
struct ino_info {
	unsigned dtype;		/* TUX3_DT_*, 4 bits */
	bool orphan;
	uint32_t nlink;		/* stored link count */
	uint32_t count;		/* names (non-directory) or subdirectories */
	unsigned dirnames;	/* names of a directory, saturating at 3 */
};

struct ino_chunk {
	uint64_t base;		/* first inode number, a multiple of 1,024 */
	uint8_t *bytes;		/* nibbles, or NULL: */
	uint16_t *runs;		/* runs of equal codes (inode_state.c) */
	uint16_t nruns, capruns;
};

struct ino_big {
	uint64_t inum;		/* 0: empty slot */
	uint32_t nlink, count;
	uint8_t dirnames;
	uint8_t dtype;		/* TUX3_DT_*, 4 bits */
	bool orphan;
};

struct inode_state {
	struct ino_chunk *chunks;	/* sorted by base */
	size_t nchunks, capchunks;
	size_t last;			/* the chunk found last: most lookups
					 * fall in the same one */
	struct ino_big *big;		/* open addressing */
	size_t nbig, capbig;
	uint64_t inodes;		/* inodes added */
};

/* Add inode inum (once); 0 or -ENOMEM. */
int inode_state_add(struct inode_state *s, uint64_t inum, unsigned dtype,
		    bool orphan, uint32_t nlink);
/* Is inum there; if so *info is filled. */
bool inode_state_get(struct inode_state *s, uint64_t inum,
		     struct ino_info *info);
/* A name of inum was met: counts it (as a subdirectory of parent when
 * inum is a directory: parent's count, inum's dirnames).  0 or -ENOMEM. */
int inode_state_named(struct inode_state *s, uint64_t inum, uint64_t parent);
/* Mark a directory named once (the root: named by the volume). */
int inode_state_set_dirnames(struct inode_state *s, uint64_t inum,
			     unsigned dirnames);
/* Every inode in number order; fn returns nonzero to stop. */
int inode_state_each(struct inode_state *s,
		     int (*fn)(void *ctx, uint64_t inum,
			       const struct ino_info *info), void *ctx);
/* Bytes held, for the tests (bytes per inode in fsck.tux3(8)). */
size_t inode_state_bytes(const struct inode_state *s);
void inode_state_free(struct inode_state *s);

#endif

/*
 * tux3image: a copy of a Tux3 volume's metadata (see doc/tux3image.8).
 *
 *   image_collect.c   which blocks: two walks of the volume (live and
 *                     on-disk), the superblock area, the log
 *   image_scramble.c  -s: the name map, directory blocks, symlink targets
 *   image_write.c     the compact file and the raw (sparse) image
 *   image_restore.c   -R: check a compact file, then write it to a device
 */
#ifndef TUX3IMAGE_H
#define TUX3IMAGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "tux3.h"

/* Exit codes (tux3image(8)). */
enum {
	IMAGE_EXIT_OK = 0,
	IMAGE_EXIT_DAMAGED = 1,	/* written, but the volume had problems */
	IMAGE_EXIT_ERROR = 8,	/* usage, I/O, open, damaged image file */
};

/* ---- the compact file (all integers big-endian) ---- */
#define IMG_MAGIC		"TUX3IMG\0"
#define IMG_VERSION		1
#define IMG_HEADER_SIZE		128
#define IMG_HEADER_CRC_AT	124
#define IMG_RUN_MAGIC		0x5433524eu	/* "T3RN" */
#define IMG_RUN_SIZE		32
#define IMG_RUN_CRC_AT		28
#define IMG_TRAILER_MAGIC	0x54334544u	/* "T3ED" */
#define IMG_TRAILER_SIZE	32
#define IMG_TRAILER_CRC_AT	28
#define IMG_RUN_MAX_BYTES	(1u << 20)	/* payload of one data run */
#define IMG_ZERO_RUN_MAX	0xffffffffu	/* blocks of one zero run */

/* header flags */
#define IMG_F_SCRAMBLED	0x1u	/* names and symlink targets scrambled */
#define IMG_F_DATA	0x2u	/* regular file data included (-a) */
#define IMG_F_DAMAGED	0x4u	/* the source had unreadable structures */
#define IMG_F_KNOWN	0x7u
/* run flags */
#define IMG_RUN_ZERO	0x1u	/* all-zero blocks, no payload */

/* Header byte offsets. */
enum {
	IMG_H_MAGIC = 0, IMG_H_VERSION = 8, IMG_H_HSIZE = 12,
	IMG_H_BLOCKBITS = 16, IMG_H_FLAGS = 20, IMG_H_VOLBLOCKS = 24,
	IMG_H_BLOCKS = 32, IMG_H_RUNS = 40, IMG_H_FILESIZE = 48,
	IMG_H_TIME = 56, IMG_H_UUID = 64, IMG_H_DATABLOCKS = 80,
};
/* Run header byte offsets. */
enum {
	IMG_R_MAGIC = 0, IMG_R_FLAGS = 4, IMG_R_START = 8, IMG_R_COUNT = 16,
	IMG_R_DATACRC = 20, IMG_R_SEQ = 24,
};
/* Trailer byte offsets. */
enum {
	IMG_T_MAGIC = 0, IMG_T_RUNS = 8, IMG_T_BLOCKS = 16,
};

/* ---- a sparse set of block numbers (one bit per block) ---- */
#define BLKMAP_PAGE_BITS 20	/* blocks per page (128 KiB of bits) */
#define BLKMAP_DIR_BITS 10	/* slots per directory node (8 KiB) */
#define BLKMAP_LEVELS 3		/* 2^50 blocks: past the 48-bit limit */
struct blkmap {
	uint64_t nblocks;
	void *root;		/* directory nodes, then pages; NULL: no bit
				 * set below */
};
int blkmap_init(struct blkmap *bm, uint64_t nblocks);
void blkmap_free(struct blkmap *bm);
int blkmap_set_range(struct blkmap *bm, uint64_t start, uint64_t count);
int blkmap_test(const struct blkmap *bm, uint64_t block);
/* First set block >= from, or nblocks. */
uint64_t blkmap_next(const struct blkmap *bm, uint64_t from);
uint64_t blkmap_count(const struct blkmap *bm);

/* ---- -s: the name map ---- */
struct scrambler;
struct scrambler *scrambler_new(void);
void scrambler_free(struct scrambler *s);
/* Scramble one name (len bytes, in place); 0 or -errno. */
int scramble_name(struct scrambler *s, uint8_t *name, unsigned len);
/* A directory block: names scrambled, slack and deleted records zeroed.
 * Returns 0, or 1 when the records do not tile the block (the part from
 * the damage on is zeroed); -errno on failure. */
int scramble_dirblock(struct scrambler *s, uint8_t *blk, unsigned size,
		      unsigned *bad_offset);
/* A symlink target, each component between '/' mapped (". and .."
 * kept). */
int scramble_target(struct scrambler *s, uint8_t *target, size_t len);
uint64_t scrambler_names(const struct scrambler *s);

/* ---- what to copy ---- */
struct symlink_rec {
	tux3_ino_t ino;
	uint64_t size;
	size_t first, count;	/* into image.lnk_ext */
};
struct lnk_extent {
	uint64_t logical, physical, count;
};
struct override {
	uint64_t block;
	uint8_t *data;
};

struct image {
	/* options */
	const char *device, *output;
	int raw, scramble, all_data, verbose;
	/* the source */
	int fd;
	unsigned blockbits, blocksize;
	uint64_t volblocks, reserved;
	uint8_t uuid[16];
	/* what the walks found */
	struct blkmap all;	/* every block to copy */
	struct blkmap dirb;	/* directory blocks (for -s) */
	struct symlink_rec *lnk;
	size_t nlnk, lnk_cap;
	struct lnk_extent *lnk_ext;
	size_t nlnk_ext, lnk_ext_cap;
	uint64_t data_blocks;	/* regular file data marked (-a) */
	unsigned problems;	/* warned: exit 1 */
	unsigned noreplay_skipped;	/* structures the on-disk walk could
					 * not read (not counted above) */
	int live_ok, noreplay_ok;	/* which opens worked */
	/* -s */
	struct scrambler *scr;
	struct override *ovr;
	size_t novr, ovr_cap;
	/* results */
	uint64_t out_blocks, out_runs, out_zero_blocks, out_bytes;
	uint64_t unreadable;
};

/* image_collect.c */
int image_collect(struct image *im);
void image_release(struct image *im);
void image_warn(struct image *im, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void image_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* image_scramble.c: build the symlink overrides (after collect) */
int image_prepare_scramble(struct image *im);
/* Transform one block read from the source (dir blocks, symlinks). */
int image_transform(struct image *im, uint64_t block, uint8_t *buf);

/* image_write.c */
int image_write(struct image *im);

/* image_restore.c */
int image_restore(const char *imagefile, const char *device, int verbose);

extern const char *image_prog;

#endif

/*
 * vleaf: the versioned data leaf (magic 0xbe7a), the disk form of a set
 * of versioned extents (struct vextents, version.h) inside one leaf's key
 * range.  The format and its rules are described at the top of vleaf.c.
 * Everything here works on buffers; only vleaf_check reports through the
 * volume (vol_error).
 */
#ifndef TUX3_VLEAF_H
#define TUX3_VLEAF_H

#include <stdint.h>
#include "version/version.h"

struct tux3_volume;

#define TUX3_MAGIC_VLEAF	0xbe7a
#define VLEAF_HEADER		8
#define VLEAF_RECORD		16
#define VLEAF_COUNT_MAX		65535u	/* blocks per record */
/* A record's flag: the elements of its one logical block are in an
 * element chain at phys (format.md 17.3c); count 1, label 0, and no other
 * record of the leaf covers that block.  Never in a set the vext_*
 * operations see: vfilemap loads the chain's elements in its place. */
#define VEXT_ELIST		1u

/* Every rule of the format for a leaf covering keys [lo, hi): -EUCLEAN
 * through vol_error (block blocknr, the byte offset, the rule broken).
 * Labels are not checked against the version table (fsck does that). */
int vleaf_check(struct tux3_volume *vol, const uint8_t *leaf,
		uint64_t blocknr, uint64_t lo, uint64_t hi);

/* An empty leaf: magic, count 0, spare 0 (writes the 8-byte header only). */
void vleaf_init(uint8_t *leaf);
unsigned vleaf_count(const uint8_t *leaf);
unsigned vleaf_capacity(unsigned blocksize);

/* Record i (i < vleaf_count) decoded. */
void vleaf_get(const uint8_t *leaf, unsigned i, struct vextent *r);

/* Append every record of the leaf to x (in leaf order, which is (logical,
 * label) order); -ENOSPC (x unchanged) if x->cap has no room for them. */
int vleaf_load(const uint8_t *leaf, struct vextents *x);

/* Encode the parts of x's records inside [lo, hi) as the whole leaf
 * (records crossing lo or hi are cut there; a mapped record's physical
 * moves with the cut, holes stay holes; records longer than 65535 blocks
 * become several).  The block past the records is zeroed.  -ENOSPC if
 * they do not fit, -EINVAL for a record x cannot hold (count 0, label of
 * more than 12 bits, addresses past 48 bits): the leaf is unchanged then.
 * x must be a valid set (sorted, one label's records disjoint). */
int vleaf_store(uint8_t *leaf, unsigned blocksize, const struct vextents *x,
		uint64_t lo, uint64_t hi);

/* The records vleaf_store would write for x inside [lo, hi). */
uint64_t vleaf_store_count(const struct vextents *x, uint64_t lo,
			   uint64_t hi);

/* Split the leaf covering [lo, hi): the records from the separator up
 * move to newleaf (fully written here), a record crossing the separator
 * is cut in two.  Returns the separator sep (lo < sep < hi); the leaves
 * then cover [lo, sep) and [sep, hi).  The separator balances the record
 * counts; when every record starts at one logical address it falls
 * inside the longer records.  -ENOSPC when no separator leaves either
 * side with fewer records than the leaf had (every record at one logical
 * block, count 1: a leaf holds at most vleaf_capacity() elements of one
 * logical block), -EUCLEAN not a vleaf, -ENOMEM; nothing changes then. */
int64_t vleaf_split(uint8_t *leaf, uint8_t *newleaf, unsigned blocksize,
		    uint64_t lo, uint64_t hi);

/* Convert a 2014 dleaf (magic 0xbeaf) covering [lo, hi) into a vleaf
 * (distinct buffers): every mapped extent becomes records of label 0 (the
 * origin; several when longer than 65535 blocks), holes become nothing.
 * -ENOSPC if the records do not fit, -EUCLEAN if the dleaf is malformed
 * (magic, count, order, sentinel, version, range); vleaf unchanged then. */
int vleaf_from_dleaf(const uint8_t *dleaf, unsigned blocksize, uint64_t lo,
		     uint64_t hi, uint8_t *vleaf);

#endif

/*
 * common/version/ on a volume: the version table file (inode 3), inodes
 * seen through the selected version (vinode.c), and changed in it, with
 * their data (vinode_write.c) (doc/format.md 17).  The pure version algebra is
 * version/version.h, versioned leaves version/vleaf.h, versioned file
 * maps version/vfilemap.h.  vinode_ops is this layer's table for the
 * core and the write path.
 * May call: write/, the core, format/, io/.
 */
#ifndef TUX3_VINODE_H
#define TUX3_VINODE_H

#include "write/write.h"
#include "version/version.h"

struct vtree;
struct vdelete_plan;

/* ---- vtable_inode.c: the version table in inode 3 (format.md 17.2, 17.4) */
int vtable_load(struct tux3_volume *vol);
int vtable_read(struct tux3_volume *vol);	/* without the marks' check */
/* At open: vtable_load, its failure a warning (the origin reads without
 * the table; fsck pass 9 reports it); -ENOMEM only. */
int vtable_open(struct tux3_volume *vol);
int vtable_save(struct tux3_volume *vol, const struct vtree *vt);
void vtable_unload(struct tux3_volume *vol);

/* ---- vindex.c: the inodes each label changed (format.md 17.11) ---- */
#define VINDEX_OFFSET		(512u << 10)	/* in inode 3, past the table */
#define VINDEX_HEADER		64
#define VINDEX_RECORD		8
#define VINDEX_MAX_RECORDS	(1u << 22)
/* The volume keeps the index (the VERSION_INDEX ro_compat bit). */
bool vindex_feature(const struct tux3_volume *vol);
/* Read at first use: 0; -ENOENT none kept or usable; -EUCLEAN damaged. */
int vindex_load(struct tux3_volume *vol);
void vindex_free(struct tux3_volume *vol);
/* The first table: the bit set and an empty index (whole: no element of
 * a snapshot's label exists yet); and the last table gone. */
int vindex_begin(struct tux3_volume *vol);
void vindex_end(struct tux3_volume *vol);
/* Every label other than the origin's that the store of inum writes:
 * its whole blob, or its data records in [lo, hi). */
int vindex_note_blob(struct tux3_volume *vol, tux3_ino_t inum,
		     const uint8_t *blob, unsigned len);
int vindex_note_extents(struct tux3_volume *vol, tux3_ino_t inum,
			const struct vextents *x, uint64_t lo, uint64_t hi);
/* Pairs of labels vt leaves free dropped (the table's save). */
int vindex_keep_labels(struct tux3_volume *vol, const struct vtree *vt);
/* A commit step: what the delta added appended (vinode_ops.index_save). */
int vindex_save(struct tux3_volume *vol);
/* The inodes with a pair of a label set in the bitmap differs, sorted
 * and unique; -ENOENT when the volume keeps no usable index. */
int vindex_inodes(struct tux3_volume *vol, const uint8_t *differs,
		  tux3_ino_t **ino, size_t *n);
/* fsck: the pair is in the loaded index; its pairs; a pair added; a
 * fresh empty index (top/snapshot_index.c fills it). */
bool vindex_has(const struct tux3_volume *vol, unsigned label,
		tux3_ino_t inum);
size_t vindex_count(const struct tux3_volume *vol);
int vindex_add(struct tux3_volume *vol, unsigned label, tux3_ino_t inum);
bool vindex_incomplete(const struct tux3_volume *vol);

/* ---- vinode.c: inodes seen through the selected version (vol->vtag) */
extern const struct vinode_ops vinode_ops;
/* The selected version's label (the origin's when none is selected). */
int vol_label(struct tux3_volume *vol, unsigned *label);
/* The blob decoded (-EUCLEAN, named, when damaged), and projected onto
 * version label as a 2014 blob (-ENOENT: the inode is not in it). */
int vinode_decode(struct tux3_volume *vol, tux3_ino_t inum,
		  const uint8_t *blob, unsigned len, struct vattrs *x);
int vinode_project(struct tux3_volume *vol, tux3_ino_t inum,
		   const struct vattrs *x, unsigned label, uint8_t **view,
		   unsigned *vlen);
/* The disk blob as the selected version reads it (vinode_ops.view). */
int vinode_view(struct tux3_volume *vol, tux3_ino_t inum,
		const uint8_t *blob, unsigned len, uint8_t **view,
		unsigned *vlen);
int vinode_read_by_any(struct tux3_volume *vol, tux3_ino_t inum,
		       const uint8_t *disk, unsigned dlen, bool *any);

/* ---- vinode_write.c: inodes and their data changed in the version */
/* The version's changed view written into the disk blob (*out malloc'd;
 * -ENOSPC when all versions no longer fit a leaf). */
int vinode_merge(struct tux3_volume *vol, tux3_ino_t inum,
		 const uint8_t *disk, unsigned dlen, const uint8_t *view,
		 unsigned vlen, uint8_t **out, unsigned *olen);
int vinode_release_atoms(struct tux3_volume *vol, tux3_ino_t inum,
			 const uint8_t *disk, unsigned dlen);
/* inode_write_data, inode_truncate and inode_destroy of an inode
 * vinode_applies() to, in the selected version. */
int vinode_write_data(struct tux3_volume *vol, struct inode *inode,
		      const void *buf, size_t len, uint64_t pos);
int vinode_truncate(struct tux3_volume *vol, struct inode *inode,
		    uint64_t size);
int vinode_destroy(struct tux3_volume *vol, struct inode *inode);
/* count blocks from logical made holes in the selected version (the
 * other versions keep what they read there). */
int vinode_punch(struct tux3_volume *vol, struct inode *inode,
		 uint64_t logical, uint64_t count);
/* Room in the inode's blob for the store a change ends with: checked
 * for every inode an operation changes before it changes any, so that
 * a change is never half made (-ENOSPC, the volume untouched). */
int vinode_room(struct tux3_volume *vol, tux3_ino_t inum);
int vinode_apply_delete(struct tux3_volume *vol, tux3_ino_t inum,
			const struct vdelete_plan *plan);
/* fsck: the inode's element lists (attributes and data) repaired. */
int vinode_repair(struct tux3_volume *vol, tux3_ino_t inum);
/* fsck pass 6: every version's XATTR attribute of an atom the table does
 * not name dropped, without the version rules (which would hand the live
 * version's value to a snapshot and count a reference the atom cannot
 * take). */
int vinode_drop_atom(struct tux3_volume *vol, tux3_ino_t inum, unsigned atom);

/* ---- vechain.c: what attribute and element chains share ---- */
/* A chain block's CRC32C (bytes 4-7, taken as zero) set. */
void vchain_seal(uint8_t *b, unsigned blocksize);
/* A new chain of n blocks near goal, written before anything names it:
 * each block zeroed, its next link (bytes 24-31) set, fill(ctx, i, b)
 * for the rest, sealed and written.  *blocks (malloc'd) are the caller's
 * to log (BALLOC); on an error none is kept. */
typedef void (*vchain_fill_fn)(void *ctx, unsigned i, uint8_t *b);
int vchain_put(struct tux3_volume *vol, uint64_t goal, unsigned n,
	       vchain_fill_fn fill, void *ctx, uint64_t **blocks);

/* ---- vspill.c: the blob past the inode-table leaf (format.md 17.3b) */
#define VSPILL_MAX	(1u << 20)	/* bytes of attributes in a chain */
struct vspill {
	bool present;
	unsigned at;		/* the SPILL attribute's offset in the leaf */
	uint64_t block;		/* the chain's first block */
	uint32_t bytes, blocks;
};
/* The SPILL attribute of a leaf's blob (sp->present false: none);
 * -EUCLEAN when it is not the last attribute or not of label 0. */
int vspill_find(const uint8_t *blob, unsigned len, struct vspill *sp);
bool vspill_has(const uint8_t *blob, unsigned len);
/* The chain's bytes (malloc'd), every block checked (magic, CRC, owner,
 * place, count: -EUCLEAN named); blocks[] (sp->blocks entries, or NULL)
 * gets the chain's block numbers. */
int vspill_read(struct tux3_volume *vol, tux3_ino_t inum,
		const struct vspill *sp, uint8_t **bytes, uint64_t *blocks);
/* The leaf's blob made whole: without its SPILL attribute, the chain's
 * bytes appended (a copy when it has none). */
int vspill_expand(struct tux3_volume *vol, tux3_ino_t inum,
		  const uint8_t *raw, unsigned rawlen, uint8_t **out,
		  unsigned *outlen);
/* The chain's blocks of a leaf's blob (*n 0: none; malloc'd). */
int vspill_blocks(struct tux3_volume *vol, tux3_ino_t inum,
		  const uint8_t *raw, unsigned rawlen, uint64_t **blocks,
		  unsigned *n);
/* Store a whole blob (len 0: the inode deleted): in the leaf when it
 * fits, else its label-0 part there and the rest in a chain; the old
 * chain kept when nothing in it changed, else freed with the delta. */
int vspill_store(struct tux3_volume *vol, tux3_ino_t inum,
		 const uint8_t *blob, unsigned len);
/* vattrs_decode of a leaf's blob made whole: a chain that does not
 * read, or damage inside it, is -EUCLEAN at the SPILL attribute. */
int vattrs_decode_whole(struct tux3_volume *vol, tux3_ino_t inum,
			const uint8_t *raw, unsigned rawlen,
			struct vattrs *x, unsigned *bad_at);
/* Sizes of a leaf's blob: its label-0 part, and the whole blob's
 * (the chain's bytes counted, without reading it). */
void vspill_sizes(const uint8_t *raw, unsigned rawlen, unsigned *label0,
		  unsigned *total);
/* Every SPILL attribute taken out of a leaf's blob, wherever it sits
 * (fsck's repair of a chain that does not read): the new length. */
unsigned vspill_strip(uint8_t *blob, unsigned len);
/* What one store can add to a leaf's label-0 part: the fixed kinds it
 * lacks, and an ABSENT marker per kind.  (The versions' old values a
 * store hands on may all go to the chain.) */
unsigned vspill_label0_growth(const uint8_t *raw, unsigned rawlen);
/* itree_blob made whole (vspill_expand). */
int vblob_read(struct tux3_volume *vol, tux3_ino_t inum, uint8_t **blob,
	       unsigned *len);

/* ---- vcompact.c: an inode back to the 2014 form (format.md 17.8) */
struct vcompact_count {
	uint64_t files;		/* vleaf trees made 2014 maps */
	uint64_t blobs;		/* attribute blobs rewritten */
};
/* On a table holding the origin alone: the inode's data map and blob
 * rewritten as the 2014 format has them (-EUCLEAN, nothing changed: an
 * element of another label remains). */
int vinode_compact(struct tux3_volume *vol, tux3_ino_t inum,
		   struct vcompact_count *count);

#endif

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

/*
 * common/version/ on a volume: the version table file (inode 3), inodes
 * seen through the selected version, and their data written, truncated
 * and destroyed in it (doc/format.md 17).  The pure version algebra is
 * version/version.h, versioned leaves version/vleaf.h, versioned file
 * maps version/vfilemap.h.  vinode_ops is this layer's table for the
 * core and the write path.
 * May call: write/, the core, format/, io/.
 */
#ifndef TUX3_VINODE_H
#define TUX3_VINODE_H

#include "write/write.h"
#include "version/version.h"

/* ---- vtable_inode.c ---- */
int vtable_load(struct tux3_volume *vol);
int vtable_read(struct tux3_volume *vol);	/* without the marks' check */
/* At open: vtable_load, its failure a warning (the origin reads without
 * the table; fsck pass 9 reports it); -ENOMEM only. */
int vtable_open(struct tux3_volume *vol);
int vtable_save(struct tux3_volume *vol, const struct vtree *vt);
void vtable_unload(struct tux3_volume *vol);

/* ---- vinode.c ---- */
extern const struct vinode_ops vinode_ops;
/* vtable_inode.c: the version table in inode 3 (format.md 17.2, 17.4) */
struct vtree;
/* vinode.c: inodes of a volume with versions, seen through the selected
 * version (vol->vtag).  applies: the volume has versions and the inode is
 * not internal.  view: the disk blob projected onto the version (a 2014
 * blob; -ENOENT when the inode does not exist in it).  merge: the
 * version's changed view written into the disk blob (*out malloc'd;
 * -ENOSPC when all versions no longer fit a leaf). */
int vol_label(struct tux3_volume *vol, unsigned *label);
int vinode_view(struct tux3_volume *vol, tux3_ino_t inum,
		const uint8_t *blob, unsigned len, uint8_t **view,
		unsigned *vlen);
int vinode_merge(struct tux3_volume *vol, tux3_ino_t inum,
		 const uint8_t *disk, unsigned dlen, const uint8_t *view,
		 unsigned vlen, uint8_t **out, unsigned *olen);
int vinode_read_by_any(struct tux3_volume *vol, tux3_ino_t inum,
		       const uint8_t *disk, unsigned dlen, bool *any);
int vinode_release_atoms(struct tux3_volume *vol, tux3_ino_t inum,
			 const uint8_t *disk, unsigned dlen);
struct vdelete_plan;

/* ---- vinode_data.c ---- */
/* vinode_data.c: inode_write_data, inode_truncate and inode_destroy of
 * an inode vinode_applies() to, in the selected version. */
int vinode_write_data(struct tux3_volume *vol, struct inode *inode,
		      const void *buf, size_t len, uint64_t pos);
int vinode_truncate(struct tux3_volume *vol, struct inode *inode,
		    uint64_t size);
int vinode_destroy(struct tux3_volume *vol, struct inode *inode);
/* Room in the inode's blob for the store a change ends with: checked
 * for every inode an operation changes before it changes any, so that
 * a change is never half made (-ENOSPC, the volume untouched). */
int vinode_room(struct tux3_volume *vol, tux3_ino_t inum);
int vinode_apply_delete(struct tux3_volume *vol, tux3_ino_t inum,
			const struct vdelete_plan *plan);
/* fsck: the inode's element lists (attributes and data) repaired. */
int vinode_repair(struct tux3_volume *vol, tux3_ino_t inum);

#endif

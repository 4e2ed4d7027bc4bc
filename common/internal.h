/*
 * libtux3 internals for the files above the layers and for the tests:
 * every layer's header, bottom to top, and the declarations of the top.
 *
 *   volume.h          what an open volume is (data only)
 *   io/io.h           device, cache, overlay, recorder, errors, reads
 *   format/format.h   one decoder/encoder per on-disk structure
 *   core.h            the read core (root): trees, inodes, maps, replay
 *   write/write.h     every change: edits, allocation, log, commit
 *   version/vinode.h  versions on a volume (vinode_ops)
 *   internal.h        the top: volume.c (open/close), walk.c (the one
 *                     walker), snapshot.c (snapshot operations)
 *   check/fsck_internal.h  the check engine, above everything
 */
#ifndef TUX3_INTERNAL_H
#define TUX3_INTERNAL_H

#include "version/vinode.h"
#include "version/vfilemap.h"
#include "version/vleaf.h"

/* ---- snapshot.c ---- */
/* Snapshots on a volume opened TUX3_OPEN_RDWR.  create: a snapshot named
 * name of the live version (of NULL) or of the snapshot named of.
 * delete: the plan recorded and committed (begin), every inode's lists
 * processed, the labels freed and committed; resume finishes a recorded
 * plan (the open calls it). */int version_create(struct tux3_volume *vol, const char *name,
		   const char *of, uint32_t *tag);
int version_delete(struct tux3_volume *vol, const char *name);
int version_delete_begin(struct tux3_volume *vol, const char *name,
			 struct vdelete_plan *plan);
int version_delete_resume(struct tux3_volume *vol);
/* fsck: vtree_repair made durable, its plan applied to every inode. */
int version_repair_table(struct tux3_volume *vol);

/* ---- check/check.c, for the tests' write-ordering lint ---- */
/* Blocks the committed state's on-disk contents matter for. */
int committed_map(struct tux3_volume *vol, uint8_t **map);

#endif

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
 *                     walker), snapshot.c (snapshot operations),
 *                     dirhash_feature.c (DIR_INDEX set or cleared)
 *   check/fsck_internal.h  the check engine, above everything
 */
#ifndef TUX3_INTERNAL_H
#define TUX3_INTERNAL_H

#include "version/vinode.h"
#include "version/vfilemap.h"
#include "version/vleaf.h"
#include "tux3_walk.h"

/* ---- volume.c ---- */
/* A read-only open, replay included, with the superblock area sbraw
 * (TUX3_SB_LEN bytes) in place of the device's: whether a superblock
 * repaired in memory would open, before anything is written. */
int volume_open_trial(const char *path, const uint8_t *sbraw,
		      struct tux3_volume **volp, char *errbuf, size_t errlen);

/* ---- dirhash_feature.c: DIR_INDEX set or cleared (tux3tune -O) ---- */
/* Every directory (volume_dirs) or every inode (volume_inodes) of the
 * volume, by the walker (the caller frees the array; on an error, it
 * holds those found before it). */
int volume_dirs(struct tux3_volume *vol, tux3_ino_t **dirs, size_t *n);
int volume_inodes(struct tux3_volume *vol, tux3_ino_t **inodes, size_t *n);

/* ---- snapshot.c ---- */
/* Snapshots on a volume opened TUX3_OPEN_RDWR.  create: a snapshot named
 * name of the live version (of NULL) or of the snapshot named of.
 * delete: the plan recorded and committed (begin), every inode's lists
 * processed, the labels freed and committed; resume finishes a recorded
 * plan (the open calls it). */int version_create(struct tux3_volume *vol, const char *name,
		   const char *of, uint32_t *tag);
/* back_to_2014: the last snapshot's delete also compacts (17.8); fsck's
 * drop of a snapshot it cannot repair does not, while it walks the table */
int version_delete(struct tux3_volume *vol, const char *name,
		   bool back_to_2014);
int version_delete_begin(struct tux3_volume *vol, const char *name,
			 struct vdelete_plan *plan);
int version_delete_resume(struct tux3_volume *vol);
/* Every snapshot operation starts here: a clean error, a read-write open
 * whose commits have not failed. */
int version_writer(struct tux3_volume *vol);
/* The delete's second phase; back_to_2014: when no snapshot is left, the
 * same commit takes the volume back to the 2014 format (false: fsck's
 * repairs, and volumes as a library without 17.8 left them). */
int version_delete_finish(struct tux3_volume *vol,
			  const struct vdelete_plan *plan, bool back_to_2014);
/* fsck: vtree_repair made durable, its plan applied to every inode. */
int version_repair_table(struct tux3_volume *vol);
/* Every inode from the root directory up, found by the walker (why: the
 * operation a damaged tree stops, for the message; NULL: no message). */
int version_inodes(struct tux3_volume *vol, const char *why,
		   tux3_ino_t **ino, size_t *n);

/* ---- snapshot_diff.c ---- */
/* The inodes whose attributes or data may read differently in labels
 * label_a and label_b, in inode order (*ino malloc'd): those with an
 * element of a label on one's ancestry and not the other's.  Found in
 * the version index where the volume keeps one (a superset: a pair may
 * outlive its elements), else from the blobs' element labels and the
 * vleaf trees' labels; no inode loaded. */
int version_differing(struct tux3_volume *vol, unsigned label_a,
		      unsigned label_b, tux3_ino_t **ino, size_t *n,
		      struct tux3_diff_count *count);

/* ---- snapshot_index.c ---- */
/* The version index made again from every inode's elements, written
 * with the next commit (the VERSION_INDEX bit set). */
int version_index_rebuild(struct tux3_volume *vol);

/* ---- snapshot_diff_inode.c: one inode in two versions ---- */
/* What differs about an inode (d.what 0: nothing); the arrays and the
 * names are the item's (diff_item_free). */
struct diff_item {
	struct tux3_diff_inode d;
	struct tux3_diff_range *ranges;
	char **xattrs;
	struct tux3_diff_entry *entries;
	size_t capr, capx, cape;
	char *path_a, *path_b;
};
/* The inode read in the versions tagged tag_a and tag_b (0: the live
 * one) and compared; the selected version is left as it was. */
int diff_inode(struct tux3_volume *vol, tux3_ino_t ino, uint32_t tag_a,
	       uint32_t tag_b, struct diff_item *it);
void diff_item_free(struct diff_item *it);

/* ---- walk.c ---- */
/* Every inode's blob in the inode table, undecoded, in inode order (the
 * itree's nodes and leaves read, nothing else).  fn's non-zero return
 * stops the walk and is returned. */
typedef int (*walk_blob_fn)(void *ctx, tux3_ino_t inum, const uint8_t *blob,
			    unsigned len, tux3_block_t leafblock);
int walk_inode_blobs(struct tux3_volume *vol, walk_blob_fn fn, void *ctx);
/* tux3_walk for a visitor that does not use tux3_stat.blocks (left 0):
 * the count is a walk of each inode's whole data map, which the
 * checkers that need only names, types and links do not pay for. */
int walk_uncounted(struct tux3_volume *vol, const struct tux3_walk_ops *ops,
		   void *ctx);
/* Inside a tux3_walk inode callback for inum: the blob as the inode
 * table holds it (true), valid until the callback returns. */
bool walk_blob_of(const struct tux3_volume *vol, tux3_ino_t inum,
		  const uint8_t **blob, unsigned *len);
/* ... and whether every version reads it as it stands: its attributes
 * are all of label 0, none ABSENT (doc/format.md 17.3a). */
bool walk_blob_plain(const struct tux3_volume *vol, tux3_ino_t inum);

/* ---- snapshot_compact.c (doc/format.md 17.8) ---- */
/* A volume whose table holds the live version alone taken back to the
 * 2014 format in the open delta: every inode rewritten (vinode_compact),
 * inode 3 gone, the 2014 magic and no VERSIONS bit; the caller commits
 * (tux3_unify).  -EUCLEAN before any change that matters: an inode
 * keeps an element of another label (the volume stays versioned).  Any
 * other error fails the volume's commits (commit_failed): the committed
 * versioned volume stays as it was. */
int version_compact_delta(struct tux3_volume *vol,
			  struct tux3_compact_report *rep);

/* ---- check/check.c, for the tests' write-ordering lint ---- */
/* Blocks the committed state's on-disk contents matter for. */
int committed_map(struct tux3_volume *vol, uint8_t **map);
/* tux3_check_alloc, and the inodes from TUX3_NORMAL_INO up that its walk
 * met: *inodes, or UINT64_MAX when the walk met damage (an inode it could
 * not decode is not counted: the caller counts the blobs itself). */
int check_alloc_counted(struct tux3_volume *vol, tux3_check_fn fn, void *ctx,
			uint64_t *inodes);

#endif

/*
 * Repair primitives of the check engine (common/fsck_repair.c), used by
 * common/fsck.c only.  They work on a volume opened
 * TUX3_OPEN_RDWR_NORECOVER and made writable by fsck_begin_write(), and
 * gather their changes in the open delta; fsck_commit() commits it with
 * a unify, so the on-disk bitmap and countmap are rewritten.
 */
#ifndef TUX3_FSCK_INTERNAL_H
#define TUX3_FSCK_INTERNAL_H

#include "internal.h"

/* The repair open: like TUX3_OPEN_RDWR, but accepts a replay that met
 * allocation conflicts (fsck repairs them) and keeps the orphans for
 * pass 7. */
int fsck_begin_write(struct tux3_volume *vol);
/* Remove entries of dir naming inum: all of them, or (last_only) the
 * last one in directory order.  Returns the number removed. */
int fsck_dir_remove_inum(struct tux3_volume *vol, tux3_ino_t dir,
			 tux3_ino_t inum, bool last_only);
/* Set the type byte of every entry of dir naming inum.  Returns the
 * number changed. */
int fsck_dir_retype(struct tux3_volume *vol, tux3_ino_t dir, tux3_ino_t inum,
		    unsigned type);
int fsck_set_nlink(struct tux3_volume *vol, tux3_ino_t inum, uint32_t nlink);
/* Name inum "#inum" in /lost+found (made when missing, mode 0700). */
int fsck_connect_lost(struct tux3_volume *vol, tux3_ino_t inum);
/* Does directory dir hold an entry naming inum?  1 yes, 0 no, <0 error. */
int fsck_dir_names(struct tux3_volume *vol, tux3_ino_t dir, tux3_ino_t inum);
/* Bitmap bits of a run: set or clear (returns conflicts like
 * bitmap_modify), or rewrite them as they are (mark the chunk dirty so
 * the unify writes it). */
int64_t fsck_bitmap_set(struct tux3_volume *vol, uint64_t block,
			uint64_t count, bool set);
int fsck_bitmap_touch(struct tux3_volume *vol, uint64_t block, uint64_t count);
int fsck_release_orphans(struct tux3_volume *vol);
/* Commit the repairs with a unify. */
int fsck_commit(struct tux3_volume *vol);

#endif

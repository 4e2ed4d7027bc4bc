/*
 * Is a device or image file mounted?  Shared by the tools that write a
 * volume offline (mkfs.tux3, tux3tune).
 */
#ifndef TUX3_MKFS_MOUNTED_H
#define TUX3_MKFS_MOUNTED_H

#include <stddef.h>
#include <sys/stat.h>

/* 1 if /proc/self/mountinfo names the block device (by its device
 * number, or a source path equal to path's real path) or the image file
 * path (a FUSE mount names its image), with the mount point copied to
 * mnt; 0 if not, or if mountinfo cannot be read. */
int device_mounted(const char *path, const struct stat *st, char *mnt,
		   size_t len);

#endif

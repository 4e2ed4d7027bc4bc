/*
 * mkfs.tux3 -d: populate a freshly made volume from a host directory.
 */
#ifndef MKFS_POPULATE_H
#define MKFS_POPULATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "tux3.h"

struct populate_params {
	const char *prog;	/* prefix of messages */
	bool progress;		/* "populating: N files" on stderr, in place */
	bool skip_self;		/* leave out the host file skip_dev:skip_ino */
	dev_t skip_dev;		/* (the image being written, if it lies */
	ino_t skip_ino;		/* inside the source tree) */
	int threads;		/* helpers reading the source tree ahead
				 * (-1: pf_default_threads()); the image does
				 * not depend on it */
};

struct populate_stats {
	uint64_t objects;	/* names created, the root not counted */
	uint64_t bytes;		/* file data bytes written */
	unsigned warnings;	/* entries skipped or attributes not copied */
};

/*
 * Copy the tree under rootdir into vol (opened TUX3_OPEN_RDWR, just made
 * by mkfs): every entry below rootdir, then rootdir's own mode, owner,
 * times and xattrs onto the volume's root directory.  Entries are taken
 * in strcmp order of their names, directory by directory, so that the
 * result depends only on the source tree.  Commits every ~1000 objects
 * and once at the end, but leaves vol open (the caller unmounts).
 * Errors are printed with the host path and the library's error text;
 * returns 0 or -1.
 */
int populate(struct tux3_volume *vol, const char *rootdir,
	     const struct populate_params *pp, struct populate_stats *stats);

#endif

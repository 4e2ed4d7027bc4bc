/*
 * mkfs.tux3 -d: reading the source tree ahead of the writer.
 *
 * populate() writes the volume from one thread, entry by entry, in a
 * fixed order.  What it needs from the host for each entry (lstat, the
 * open of a regular file, its data when small and without holes, whether
 * it has xattrs) does not depend on the volume, so helper threads fetch
 * it ahead while the writer is busy in the library.  The writer takes
 * the entries in the same order whether a helper or itself fetched them,
 * and makes the same library calls with the same values: the image is
 * byte-identical with any number of helpers, zero included.
 *
 * A helper only ever reports success: an entry whose lstat or open
 * failed on a helper is handed over unfetched, and the writer redoes
 * the call itself, so that errors (and their messages) come from the
 * writer's own attempt, as without helpers.
 */
#ifndef MKFS_PREFETCH_H
#define MKFS_PREFETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* Files of at most this many bytes are read whole by a helper. */
#define PF_DATA_MAX (64u << 10)

enum pf_data {
	PF_DATA_NONE,	/* not fetched: copy it through fd */
	PF_DATA_READY,	/* data[0..len) is the whole content; len 0: none
			 * to write (empty, or holes only) */
};

/* What the writer needs of one source entry. */
struct pf_entry {
	bool stat_ok;		/* st holds lstat(name) */
	struct stat st;
	int fd;			/* a regular file, opened and checked
				 * against st; -1: not opened */
	enum pf_data data;
	uint8_t *buf;		/* the data, when PF_DATA_READY */
	size_t len;
	bool no_xattrs;		/* fd has none (or the host has no xattrs) */
};

/* The directory whose entries are being fetched. */
struct pf_dir;
struct prefetch;

/* Start nthreads helpers (0: the writer fetches everything itself).
 * Returns NULL only when out of memory; fewer helpers than asked when
 * threads cannot be made. */
struct prefetch *pf_start(unsigned nthreads);
void pf_stop(struct prefetch *pf);

/* A directory entry's name as pf_dir_begin takes it: a copy of name
 * with the entry's d_type in the byte after its terminator, so that a
 * regular file is opened without an lstat first (DT_UNKNOWN: the type
 * is found by lstat).  Freed with free(). */
char *pf_name_dup(const char *name, unsigned char d_type);

/* The entries names[0..count) of the open host directory dfd, each made
 * by pf_name_dup (names and dfd stay valid until pf_dir_end);
 * directories nest, the newest is the one being written. */
struct pf_dir *pf_dir_begin(struct prefetch *pf, int dfd, char **names,
			    size_t count);
void pf_dir_end(struct pf_dir *dir);

/* Entry i, fetched; taken in order, each released before the next. */
struct pf_entry *pf_take(struct pf_dir *dir, size_t i);
void pf_release(struct pf_dir *dir, size_t i);

/* Open a regular file for reading its data, checked against st (the
 * lstat it was chosen by).  Returns the fd, or -1 with *err an errno or
 * PF_CHANGED: the name now refers to another file. */
#define PF_CHANGED (-1)
int pf_open_regular(int dfd, const char *name, const struct stat *st,
		    int *err);

/* The number of helpers a default populate uses on this machine. */
unsigned pf_default_threads(void);

#endif

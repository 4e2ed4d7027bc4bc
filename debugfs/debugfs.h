/* tux3debug: shared declarations of the shell's files. */
#ifndef TUX3DEBUG_H
#define TUX3DEBUG_H

#include <stdio.h>
#include "tux3.h"
#include "tux3_walk.h"

struct shell {
	struct tux3_volume *vol;
	char *device;
	enum tux3_open_mode mode;
	tux3_ino_t cwd;
	char cwdpath[4096];
	FILE *out;
	const char *where;	/* "script:12: " prefix for errors, or "" */
	int quit;		/* quit command seen */
	int vol_replayed;	/* the open volume's log was replayed */
	int batch;		/* -f/stdin: editing commands do not commit
				 * one by one; 'delta' and the end do */
	int dirty;		/* a batch holds uncommitted edits */
	int has_time;		/* SOURCE_DATE_EPOCH given */
	int64_t time_ns;	/* ... as ns since the epoch */
};

struct command {
	const char *name;
	const char *aliases;	/* space-separated, may be NULL */
	const char *group;
	const char *usage;
	const char *help;
	int needs_volume;
	int needs_write;	/* refused unless opened with -w */
	int (*run)(struct shell *sh, int argc, char **argv);
};

extern const struct command commands[];
const struct command *command_find(const char *name);
int shell_execute(struct shell *sh, char *line);

/* errors: print "tux3debug: [where]msg" and return 1 */
int sh_err(struct shell *sh, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int sh_volerr(struct shell *sh, const char *what, int err);
void sh_warn(struct shell *sh, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* PATH or <inum> to an inode number; relative paths from cwd */
int sh_resolve(struct shell *sh, const char *arg, tux3_ino_t *ino);
int sh_open(struct shell *sh, const char *device, enum tux3_open_mode mode);
/* Commits first when the volume is read-write; 1 if that failed. */
int sh_close(struct shell *sh);
/* Commit the open delta; 0 or 1 (reported). */
int sh_commit(struct shell *sh);
/* Join cwd and a path into a normalized absolute path. */
int join_path(struct shell *sh, const char *arg, char *out, size_t len);

/* Directories on the path from the top of a recursive walk: a corrupt
 * volume may link a directory into its own subtree. */
#define MAX_NEST 4096
struct ancestry {
	tux3_ino_t ino[MAX_NEST];
	unsigned depth;
};
/* 0 and pushed; 1 if ino is already an ancestor or nesting is too deep */
int ancestry_push(struct ancestry *a, tux3_ino_t ino);

/* edit.c: the editing commands and check */
int cmd_write(struct shell *sh, int argc, char **argv);
int cmd_mkdir(struct shell *sh, int argc, char **argv);
int cmd_rm(struct shell *sh, int argc, char **argv);
int cmd_rmdir(struct shell *sh, int argc, char **argv);
int cmd_mv(struct shell *sh, int argc, char **argv);
int cmd_setxattr(struct shell *sh, int argc, char **argv);
int cmd_rmxattr(struct shell *sh, int argc, char **argv);
int cmd_ln(struct shell *sh, int argc, char **argv);
int cmd_truncate(struct shell *sh, int argc, char **argv);
int cmd_chmod(struct shell *sh, int argc, char **argv);
int cmd_chown(struct shell *sh, int argc, char **argv);
int cmd_touch(struct shell *sh, int argc, char **argv);
int cmd_mknod(struct shell *sh, int argc, char **argv);
int cmd_delta(struct shell *sh, int argc, char **argv);
int cmd_unify(struct shell *sh, int argc, char **argv);
int cmd_check(struct shell *sh, int argc, char **argv);

/* raw.c: field-table inspection and raw editing */
int cmd_block(struct shell *sh, int argc, char **argv);
int cmd_inode(struct shell *sh, int argc, char **argv);
int cmd_set_super(struct shell *sh, int argc, char **argv);
int cmd_set_block(struct shell *sh, int argc, char **argv);
int cmd_set_inode(struct shell *sh, int argc, char **argv);
/* field names for completion: which 0 set_super, 1 set_inode; NULL ends */
const char *raw_field_name(int which, unsigned i);

/* manifest.c / rdump.c */
int cmd_manifest(struct shell *sh, int argc, char **argv);
int cmd_rdump(struct shell *sh, int argc, char **argv);
int cmd_dump(struct shell *sh, int argc, char **argv);
char manifest_type(unsigned mode);
int file_sha256(struct tux3_volume *vol, tux3_ino_t ino, uint64_t size,
		char hex[65]);

#endif

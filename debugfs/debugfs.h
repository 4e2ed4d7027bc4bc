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
};

struct command {
	const char *name;
	const char *aliases;	/* space-separated, may be NULL */
	const char *group;
	const char *usage;
	const char *help;
	int needs_volume;
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
void sh_close(struct shell *sh);

/* Directories on the path from the top of a recursive walk: a corrupt
 * volume may link a directory into its own subtree. */
#define MAX_NEST 4096
struct ancestry {
	tux3_ino_t ino[MAX_NEST];
	unsigned depth;
};
/* 0 and pushed; 1 if ino is already an ancestor or nesting is too deep */
int ancestry_push(struct ancestry *a, tux3_ino_t ino);

/* manifest.c / rdump.c */
int cmd_manifest(struct shell *sh, int argc, char **argv);
int cmd_rdump(struct shell *sh, int argc, char **argv);
int cmd_dump(struct shell *sh, int argc, char **argv);
char manifest_type(unsigned mode);
int file_sha256(struct tux3_volume *vol, tux3_ino_t ino, uint64_t size,
		char hex[65]);

#endif

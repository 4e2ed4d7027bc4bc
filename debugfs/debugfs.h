/* tux3debug: shared declarations of the shell's files.
 *
 *   tux3debug.c  main, options, sessions (open/close/commit), the
 *                interactive loop: readline, history, completion, pager
 *   table.c      the command table, line splitting, dispatch, help
 *   commands.c   navigation and files: ls, cd, pwd, stat, cat, readlink,
 *                xattrs, extents, bmap, find
 *   info.c       super, statfs, atoms, log, replay
 *   tree.c       walker visitors: itree/otree/dtree, blocks, icheck,
 *                ncheck, find_magic, frag, orphans
 *   space.c      the bitmap: testb, ffb, freefrag
 *   edit.c       editing commands (-w), cp, set_label/set_uuid, check
 *   raw.c        block, inode, set_super, set_inode, set_block
 *   versions.c   versions, snapshot list|create|delete (entering a
 *                version: join_path in commands.c)
 *   manifest.c, rdump.c   manifest; dump and rdump to the host
 *   json.c       --json output
 */
#ifndef TUX3DEBUG_H
#define TUX3DEBUG_H

#include <stdio.h>
#include "tux3.h"
#include "tux3_walk.h"

#define SH_VERSION_MAX 256	/* a snapshot name (the format: 39 bytes) */

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
	int time_read;		/* SOURCE_DATE_EPOCH looked at */
	/* Versions: the shell is in version[] ("" the live one; 'cd @TAG'
	 * enters a snapshot), cwdpath is a path inside it, and the library
	 * has it selected between commands.  A path @TAG/... of a command
	 * selects TAG for that command: path_version is the version the
	 * command's paths chose (path_chosen 0: none yet); one command works
	 * in one version ('cp' excepted).  shell_execute selects version[]
	 * again afterwards. */
	char version[SH_VERSION_MAX];
	char path_version[SH_VERSION_MAX];
	int path_chosen;
};

/* Completion of a command's words (table.c: struct command.args): one
 * letter per word after the command, options not counted; the last
 * letter repeats when followed by '*'. */
#define ARG_PATH	'v'	/* a path inside the volume */
#define ARG_HOST	'h'	/* a host file */
#define ARG_COMMAND	'c'	/* a command name */
#define ARG_SUPER	's'	/* a superblock field (set_super) */
#define ARG_INODE_FIELD	'i'	/* an inode field (set_inode) */
#define ARG_NONE	'.'	/* nothing to complete */

struct command {
	const char *name;
	const char *aliases;	/* space-separated, may be NULL */
	const char *group;
	const char *usage;
	const char *help;
	int needs_volume;
	int needs_write;	/* refused unless opened with -w */
	const char *args;	/* completion of the words (ARG_*) */
	const char *reserved;	/* not available yet: why (NULL: works) */
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
/* SOURCE_DATE_EPOCH for writers: 0, or 1 (reported) if it is no number */
int sh_read_time(struct shell *sh);
/* Join cwd and a path into a normalized absolute path inside the path's
 * version, which it selects: @TAG/... (TAG a snapshot, "" the live
 * version) is absolute in TAG, any other path in the shell's version.
 * 0, -ENAMETOOLONG, -ENOENT (no such snapshot: the library's error is
 * set) or -EXDEV (another version than the command's other paths). */
int join_path(struct shell *sh, const char *arg, char *out, size_t len);
/* join_path, its errors reported as "what: ..." (what NULL: arg) */
int sh_path(struct shell *sh, const char *arg, const char *what, char *out,
	    size_t len);
/* Select version name ("" live) for the command; 0 or negative */
int sh_select(struct shell *sh, const char *name);
/* After a command: the shell's version selected again (if it is gone,
 * the live version's root, with a warning). */
void sh_restore_version(struct shell *sh);
/* cd to PATH (@TAG/... enters snapshot TAG); 0 or 1 (reported) */
int sh_cd(struct shell *sh, const char *path);
/* The current directory as 'pwd' shows it: @TAG/path in a snapshot */
void sh_cwd_text(struct shell *sh, char *out, size_t len);
/* Numbers of the command line: decimal, 0x hex or 0 octal, no sign */
int parse_number(const char *s, uint64_t *v);
/* A block number inside the volume; 1 (reported) otherwise */
int parse_block(struct shell *sh, const char *s, tux3_block_t *block);

/* Directories on the path from the top of a recursive walk: a corrupt
 * volume may link a directory into its own subtree. */
#define MAX_NEST 4096
struct ancestry {
	tux3_ino_t ino[MAX_NEST];
	unsigned depth;
};
/* 0 and pushed; 1 if ino is already an ancestor or nesting is too deep */
int ancestry_push(struct ancestry *a, tux3_ino_t ino);

/* dirbatch.c: a directory read DIR_BATCH entries at a time */
#define DIR_BATCH 256
struct dir_batch_entry {
	tux3_ino_t ino;
	uint32_t name;		/* offset in names */
	unsigned type;		/* TUX3_DT_* */
};
struct dir_batch {
	tux3_ino_t dir;
	uint64_t resume;	/* byte position the next batch starts at */
	unsigned count, next;
	int done, err;
	/* the library's account of err, taken when it happened: the
	 * entries read before it are visited first, and the library calls
	 * that visit them clear its error */
	char err_text[512];
	char *names;		/* this batch's names, NUL-terminated */
	size_t used, namecap;
	struct dir_batch_entry e[DIR_BATCH];
};
/* One entry; name points into the batch, valid until the next call. */
struct dir_entry_ref {
	const char *name;
	tux3_ino_t ino;
	unsigned type;
};
void dir_batch_init(struct dir_batch *b, tux3_ino_t dir);
/* 1 and *out set; 0 at the end; or the error that stopped the read (the
 * entries read before it come first) */
int dir_batch_next(struct tux3_volume *vol, struct dir_batch *b,
		   struct dir_entry_ref *out);
void dir_batch_free(struct dir_batch *b);
/* Report the error dir_batch_next returned, for the directory at path;
 * returns 1. */
int dir_batch_report(struct shell *sh, const struct dir_batch *b,
		     const char *path, int err);

/* Text helpers (commands.c) */
void mode_string(uint32_t mode, char out[11]);
void time_string(int64_t ns, char *buf, size_t len);

/* json.c */
#define JSON_MAX_DEPTH 16
struct json {
	FILE *f;
	int depth;
	unsigned count[JSON_MAX_DEPTH + 1];
};
/* {"__header": {"version": "1"}, "command": [  ...  ]} */
void json_begin(struct json *j, FILE *f, const char *command);
void json_end(struct json *j);
/* bracket '{' or '['; key NULL inside an array */
void json_open(struct json *j, const char *key, char bracket);
void json_close(struct json *j, char bracket);
void json_key(struct json *j, const char *key);
void json_str(struct json *j, const char *key, const char *s);
void json_strn(struct json *j, const char *key, const char *s, size_t n);
void json_u64(struct json *j, const char *key, uint64_t v);
void json_i64(struct json *j, const char *key, int64_t v);
void json_bool(struct json *j, const char *key, int v);
void json_null(struct json *j, const char *key);
void json_hex(struct json *j, const char *key, const void *buf, size_t n);
/* commands.c: mode, nlink, uid, gid, size, mtime_ns of a stat */
void json_stat(struct json *j, const struct tux3_stat *st);

/* table.c */
int cmd_help(struct shell *sh, int argc, char **argv);
int cmd_quit(struct shell *sh, int argc, char **argv);
int cmd_snapshot(struct shell *sh, int argc, char **argv);
/* snapdiff.c: snapshot diff (called by cmd_snapshot) */
int snapshot_diff(struct shell *sh, int argc, char **argv);

/* tux3debug.c: sessions */
int cmd_open(struct shell *sh, int argc, char **argv);
int cmd_close(struct shell *sh, int argc, char **argv);

/* commands.c: navigation and files */
int cmd_ls(struct shell *sh, int argc, char **argv);
int cmd_cd(struct shell *sh, int argc, char **argv);
int cmd_pwd(struct shell *sh, int argc, char **argv);
int cmd_stat(struct shell *sh, int argc, char **argv);
int cmd_cat(struct shell *sh, int argc, char **argv);
int cmd_readlink(struct shell *sh, int argc, char **argv);
int cmd_xattrs(struct shell *sh, int argc, char **argv);
int cmd_extents(struct shell *sh, int argc, char **argv);
int cmd_bmap(struct shell *sh, int argc, char **argv);
int cmd_find(struct shell *sh, int argc, char **argv);

/* info.c */
int cmd_super(struct shell *sh, int argc, char **argv);
int cmd_statfs(struct shell *sh, int argc, char **argv);
int cmd_work(struct shell *sh, int argc, char **argv);
int cmd_atoms(struct shell *sh, int argc, char **argv);
int cmd_log(struct shell *sh, int argc, char **argv);
int cmd_replay(struct shell *sh, int argc, char **argv);

/* tree.c: visitors of the walker */
int cmd_itree(struct shell *sh, int argc, char **argv);
int cmd_otree(struct shell *sh, int argc, char **argv);
int cmd_dtree(struct shell *sh, int argc, char **argv);
int cmd_htree(struct shell *sh, int argc, char **argv);
int cmd_blocks(struct shell *sh, int argc, char **argv);
int cmd_icheck(struct shell *sh, int argc, char **argv);
int cmd_ncheck(struct shell *sh, int argc, char **argv);
int cmd_find_magic(struct shell *sh, int argc, char **argv);
int cmd_frag(struct shell *sh, int argc, char **argv);
int cmd_orphans(struct shell *sh, int argc, char **argv);
int cmd_versions(struct shell *sh, int argc, char **argv);

/* space.c: the allocation bitmap */
int cmd_testb(struct shell *sh, int argc, char **argv);
int cmd_ffb(struct shell *sh, int argc, char **argv);
int cmd_freefrag(struct shell *sh, int argc, char **argv);

/* edit.c: the editing commands and check */
int cmd_write(struct shell *sh, int argc, char **argv);
int cmd_mkdir(struct shell *sh, int argc, char **argv);
int cmd_rm(struct shell *sh, int argc, char **argv);
int cmd_rmdir(struct shell *sh, int argc, char **argv);
int cmd_mv(struct shell *sh, int argc, char **argv);
int cmd_cp(struct shell *sh, int argc, char **argv);
int cmd_setxattr(struct shell *sh, int argc, char **argv);
int cmd_rmxattr(struct shell *sh, int argc, char **argv);
int cmd_ln(struct shell *sh, int argc, char **argv);
int cmd_truncate(struct shell *sh, int argc, char **argv);
int cmd_chmod(struct shell *sh, int argc, char **argv);
int cmd_chown(struct shell *sh, int argc, char **argv);
int cmd_touch(struct shell *sh, int argc, char **argv);
int cmd_mknod(struct shell *sh, int argc, char **argv);
int cmd_set_label(struct shell *sh, int argc, char **argv);
int cmd_set_uuid(struct shell *sh, int argc, char **argv);
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

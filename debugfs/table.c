/*
 * The command table of tux3debug, and what runs a line: splitting into
 * words, lookup by name or alias, the volume and -w rules, commits.
 *
 * Each command is one row: name, aliases, group, usage, one-line help,
 * whether it needs an open volume and -w, how its words complete, and
 * (for commands reserved for later work) why it does not work yet.
 * Rows of a group are contiguous: 'help' prints them in this order.
 *
 * Snapshots: 'versions' and 'snapshot' (versions.c) show, make and
 * remove them; 'cd @TAG' enters one and a path @TAG/... names a file in
 * one (commands.c, join_path).  Every command runs in one version, which
 * shell_execute selects again afterwards.
 */
#include <stdlib.h>
#include <string.h>
#include "debugfs.h"

const struct command commands[] = {
	/* name, aliases, group, usage, help, needs_volume, needs_write,
	 * completion, reserved, run */
	/* ---- Files ---- */
	{ "ls", "list dir", "Files", "ls [-l] [-p] [-d] [--json] [PATH]",
	  "list a directory (-l long, -p parseable, -d deleted entries)",
	  1, 0, "v", NULL, cmd_ls },
	{ "cd", "chdir", "Files", "cd [PATH]",
	  "change the current directory (@TAG: into snapshot TAG, @: live)",
	  1, 0, "v", NULL, cmd_cd },
	{ "pwd", NULL, "Files", "pwd", "print the current directory", 1, 0,
	  ".", NULL, cmd_pwd },
	{ "stat", NULL, "Files", "stat [--json] PATH|<inum>",
	  "show an inode: attributes, xattrs and extents", 1, 0, "v", NULL,
	  cmd_stat },
	{ "cat", NULL, "Files", "cat PATH|<inum>",
	  "write a file's contents to standard output", 1, 0, "v", NULL,
	  cmd_cat },
	{ "readlink", NULL, "Files", "readlink PATH|<inum>",
	  "print a symbolic link's target", 1, 0, "v", NULL, cmd_readlink },
	{ "dump", "dump_inode", "Files", "dump [-p] PATH HOSTFILE",
	  "copy a file out to the host (-p: owner, mode, times too)", 1, 0,
	  "vh", NULL, cmd_dump },
	{ "rdump", NULL, "Files", "rdump PATH HOSTDIR",
	  "copy a subtree out to the host with all metadata", 1, 0, "vh",
	  NULL, cmd_rdump },
	{ "xattrs", "ea_list", "Files", "xattrs PATH|<inum>",
	  "list extended attributes", 1, 0, "v", NULL, cmd_xattrs },
	{ "find", NULL, "Files",
	  "find [PATH] [-name GLOB] [-type TYPE] [-inum N]",
	  "list the paths of a subtree, with tests as find(1)", 1,
	  0, "v", NULL, cmd_find },
	{ "manifest", NULL, "Files", "manifest [PATH]",
	  "print the subtree as a TSV manifest (oracle format)", 1, 0, "v",
	  NULL, cmd_manifest },
	/* ---- Structures ---- */
	{ "super", "stats show_super_stats", "Structures", "super [--json]",
	  "every superblock field, the extension record's too", 1, 0,
	  ".", NULL, cmd_super },
	{ "statfs", "df", "Structures", "statfs", "show free space and inodes",
	  1, 0, ".", NULL, cmd_statfs },
	{ "atoms", NULL, "Structures", "atoms",
	  "the xattr atom table: names, refcounts, free list", 1, 0, ".",
	  NULL, cmd_atoms },
	{ "itree", NULL, "Structures", "itree [-v]",
	  "the inode table's B-tree: depth, nodes, fill per level", 1, 0,
	  ".", NULL, cmd_itree },
	{ "otree", NULL, "Structures", "otree [-v]",
	  "the orphan table's B-tree, as itree", 1, 0, ".", NULL, cmd_otree },
	{ "dtree", NULL, "Structures", "dtree [-v] PATH|<inum>",
	  "a file's data tree: depth, nodes, fill per level", 1, 0, "v",
	  NULL, cmd_dtree },
	{ "htree", "dx_dump", "Structures", "htree [-v] PATH|<inum>",
	  "a directory's on-disk index: depth, buckets, pairs, stale or not",
	  1, 0, "v", NULL, cmd_htree },
	{ "extents", "ex dump_extents", "Structures",
	  "extents [--json] PATH|<inum>",
	  "a file's extents: logical, physical, count, version", 1, 0,
	  "v", NULL, cmd_extents },
	{ "bmap", NULL, "Structures", "bmap PATH|<inum> LOGICAL",
	  "the physical block of a logical block (0: a hole)", 1, 0,
	  "v.", NULL, cmd_bmap },
	{ "blocks", NULL, "Structures", "blocks [-v] PATH|<inum>",
	  "every block a file uses, its tree nodes included", 1, 0, "v",
	  NULL, cmd_blocks },
	{ "icheck", NULL, "Structures", "icheck BLOCK...",
	  "which inode or structure owns each block", 1, 0, ".", NULL,
	  cmd_icheck },
	{ "ncheck", NULL, "Structures", "ncheck INUM...",
	  "the paths of each inode", 1, 0, ".", NULL, cmd_ncheck },
	{ "testb", NULL, "Structures", "testb BLOCK [COUNT]",
	  "is a block (or run) marked in use in the bitmap", 1, 0, ".", NULL,
	  cmd_testb },
	{ "ffb", NULL, "Structures", "ffb [COUNT [GOAL]]",
	  "find free blocks from GOAL on", 1, 0, ".", NULL, cmd_ffb },
	{ "freefrag", NULL, "Structures", "freefrag",
	  "free space: extents by size, a histogram", 1, 0, ".", NULL,
	  cmd_freefrag },
	{ "frag", "filefrag", "Structures", "frag [-v] [-a] [PATH|<inum>]",
	  "file fragmentation: extents per file, seek distances", 1, 0,
	  "v", NULL, cmd_frag },
	{ "orphans", NULL, "Structures", "orphans",
	  "list the orphan inodes (unlinked while open)", 1, 0, ".", NULL,
	  cmd_orphans },
	{ "check", NULL, "Structures", "check",
	  "check block ownership and the namespace", 1, 0, ".",
	  NULL, cmd_check },
	{ "work", NULL, "Structures", "work",
	  "device reads and inode loads since the open (work counted)", 1,
	  0, ".", NULL, cmd_work },
	/* ---- Raw ---- */
	{ "block", "bd block_dump", "Raw", "block [-f] N",
	  "hex dump of a block, its type and every field decoded", 1, 0, ".", NULL, cmd_block },
	{ "inode", "inode_dump id", "Raw", "inode INUM|<inum>|PATH",
	  "the inode's attribute blob, decoded attribute by attribute", 1, 0,
	  "v", NULL, cmd_inode },
	{ "find_magic", NULL, "Raw", "find_magic [-a] MAGIC",
	  "the blocks of a type (-a: scan every block, not only the trees)", 1, 0, ".", NULL, cmd_find_magic },
	{ "set_super", "ssv", "Raw", "set_super [-c] FIELD VALUE",
	  "CORRUPTION TOOL: write a superblock field, not as a delta", 1, 1,
	  "s.", NULL, cmd_set_super },
	{ "set_inode", "sif", "Raw", "set_inode INUM FIELD VALUE",
	  "set an inode field as is (committed as a normal delta)", 1, 1, "vi.", NULL,
	  cmd_set_inode },
	{ "set_block", NULL, "Raw", "set_block N OFFSET HEXBYTES",
	  "CORRUPTION TOOL: write bytes into a block, bypassing the log", 1, 1, ".", NULL, cmd_set_block },
	/* ---- Log ---- */
	{ "log", "logdump", "Log", "log",
	  "show each log block and its decoded records", 1, 0, ".", NULL,
	  cmd_log },
	{ "replay", NULL, "Log", "replay [-s STAGE] [-q]",
	  "what the replay at open changed, record by record, by stage", 1, 0, ".", NULL,
	  cmd_replay },
	{ "delta", NULL, "Log", "delta",
	  "commit the changes made so far", 1, 1, ".", NULL, cmd_delta },
	{ "unify", NULL, "Log", "unify",
	  "commit, folding the log into the on-disk trees", 1, 1, ".", NULL,
	  cmd_unify },
	/* ---- Editing ---- */
	{ "write", NULL, "Editing", "write [-f] HOSTFILE PATH",
	  "copy a host file in (-f: replace an existing file)", 1, 1,
	  "hv", NULL, cmd_write },
	{ "mkdir", NULL, "Editing", "mkdir PATH", "make a directory", 1, 1,
	  "v", NULL, cmd_mkdir },
	{ "rm", "unlink", "Editing", "rm PATH",
	  "remove a name (not a directory)", 1, 1, "v", NULL, cmd_rm },
	{ "rmdir", NULL, "Editing", "rmdir PATH",
	  "remove an empty directory", 1, 1, "v", NULL, cmd_rmdir },
	{ "ln", "link", "Editing", "ln [-s] TARGET PATH",
	  "make a hard link to TARGET (-s: a symbolic link)", 1, 1, "vv", NULL,
	  cmd_ln },
	{ "mv", "rename", "Editing", "mv [-n|-x] OLD NEW",
	  "rename (-n: never replace, -x: exchange the two)", 1, 1, "vv", NULL,
	  cmd_mv },
	{ "cp", "copy", "Editing", "cp [-p] SOURCE TARGET",
	  "copy a file inside the volume (-p: owner, mtime, xattrs)", 1,
	  1, "vv", NULL, cmd_cp },
	{ "setxattr", "ea_set", "Editing", "setxattr PATH NAME VALUE",
	  "set an xattr (VALUE as text, or 0xHEX)", 1, 1, "v..", NULL,
	  cmd_setxattr },
	{ "rmxattr", "ea_rm", "Editing", "rmxattr PATH NAME",
	  "remove an xattr", 1, 1, "v.", NULL, cmd_rmxattr },
	{ "truncate", NULL, "Editing", "truncate PATH SIZE",
	  "set a regular file's size in bytes", 1, 1, "v.", NULL,
	  cmd_truncate },
	{ "chmod", NULL, "Editing", "chmod MODE PATH",
	  "set the permission bits (octal)", 1, 1, ".v", NULL, cmd_chmod },
	{ "chown", NULL, "Editing", "chown UID:GID PATH",
	  "set the numeric owner and group", 1, 1, ".v", NULL, cmd_chown },
	{ "touch", NULL, "Editing", "touch PATH",
	  "create an empty file, or set its mtime to now", 1, 1, "v", NULL,
	  cmd_touch },
	{ "mknod", NULL, "Editing", "mknod PATH p|c|b|s [MAJOR MINOR]",
	  "make a fifo, device node or socket", 1, 1, "v...", NULL, cmd_mknod },
	{ "set_label", NULL, "Editing", "set_label LABEL",
	  "set the volume label (up to 64 bytes; \"\" clears it)", 1, 1, ".",
	  NULL, cmd_set_label },
	{ "set_uuid", NULL, "Editing", "set_uuid UUID|random|time|clear",
	  "set the volume UUID", 1, 1, ".", NULL, cmd_set_uuid },
	/* ---- Snapshots ---- */
	{ "versions", NULL, "Snapshots", "versions",
	  "the version tree: the live version, snapshots and ghosts", 1, 0,
	  ".", NULL, cmd_versions },
	{ "snapshot", "snap", "Snapshots",
	  "snapshot list [-s] | create TAG [--of OTHER] | delete TAG | "
	  "compact | diff [--json] [--no-names] [--stats] A B [PATH]",
	  "list, make, remove or compare snapshots (@: the live version; "
	  "create, delete and compact: -w)", 1, 0,
	  ".", NULL, cmd_snapshot },
	/* ---- Shell ---- */
	{ "open", NULL, "Shell", "open [-w|-c] DEVICE",
	  "open a volume (-w read-write, -c without log replay)", 0, 0,
	  "h", NULL, cmd_open },
	{ "close", NULL, "Shell", "close",
	  "close the volume (committing what -w changed)", 1, 0, ".", NULL,
	  cmd_close },
	{ "help", "?", "Shell", "help [-n] [COMMAND]",
	  "list the commands, or show one (-n: names and aliases)", 0, 0, "c",
	  NULL, cmd_help },
	{ "quit", "q exit", "Shell", "quit", "leave the shell", 0, 0, ".", NULL,
	  cmd_quit },
	{ NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, NULL, NULL },
};

const struct command *command_find(const char *name)
{
	for (const struct command *c = commands; c->name; c++) {
		if (!strcmp(c->name, name))
			return c;
		if (c->aliases) {
			const char *a = c->aliases;
			size_t n = strlen(name);
			while (*a) {
				size_t len = strcspn(a, " ");
				if (len == n && !strncmp(a, name, n))
					return c;
				a += len;
				while (*a == ' ')
					a++;
			}
		}
	}
	return NULL;
}

int cmd_quit(struct shell *sh, int argc, char **argv)
{
	(void)argv;
	if (argc != 1)
		return sh_err(sh, "usage: quit");
	sh->quit = 1;
	return 0;
}

static void help_one(struct shell *sh, const struct command *c)
{
	FILE *o = sh->out;
	fprintf(o, "usage: %s\n%s\n", c->usage, c->help);
	if (c->aliases)
		fprintf(o, "aliases: %s\n", c->aliases);
	fprintf(o, "group: %s", c->group);
	if (c->needs_write)
		fprintf(o, "; needs a volume opened with -w");
	else if (c->needs_volume)
		fprintf(o, "; needs an open volume");
	fputc('\n', o);
	if (c->reserved)
		fprintf(o, "not available yet: %s\n", c->reserved);
}

int cmd_help(struct shell *sh, int argc, char **argv)
{
	int names = 0;
	if (argc > 1 && !strcmp(argv[1], "-n")) {
		names = 1;
		argc--;
		argv++;
	}
	if (argc > 2)
		return sh_err(sh, "usage: help [-n] [COMMAND]");
	if (argc == 2) {
		const struct command *c = command_find(argv[1]);
		if (!c)
			return sh_err(sh, "help: no command '%s'", argv[1]);
		if (names)
			fprintf(sh->out, "%s%s%s\n", c->name,
				c->aliases ? " " : "",
				c->aliases ? c->aliases : "");
		else
			help_one(sh, c);
		return 0;
	}
	const char *group = "";
	for (const struct command *c = commands; c->name; c++) {
		if (names) {
			fprintf(sh->out, "%s%s%s\n", c->name,
				c->aliases ? " " : "",
				c->aliases ? c->aliases : "");
			continue;
		}
		if (strcmp(group, c->group)) {
			group = c->group;
			fprintf(sh->out, "%s%s:\n", c == commands ? "" : "\n",
				group);
		}
		fprintf(sh->out, "  %-11s %s%s\n", c->name, c->help,
			c->reserved ? " (not yet)" : "");
	}
	if (!names)
		fprintf(sh->out, "\n'help COMMAND' shows its usage and "
			"aliases.\nPATH may be <inum>, or @TAG/PATH in snapshot "
			"TAG; editing needs -w.\n");
	return 0;
}

/* Split a line into words: blanks separate, "..." and '...' quote, \
 * escapes the next character. */
static int split_words(char *line, char **argv, int max)
{
	int argc = 0;
	char *r = line, *w;
	while (*r) {
		while (*r == ' ' || *r == '\t' || *r == '\n' || *r == '\r')
			r++;
		if (!*r || *r == '#')
			break;
		if (argc == max)
			return -1;
		argv[argc++] = w = r;
		char quote = 0;
		while (*r) {
			if (quote) {
				if (*r == quote) {
					quote = 0;
					r++;
					continue;
				}
			} else if (*r == '"' || *r == '\'') {
				quote = *r++;
				continue;
			} else if (*r == ' ' || *r == '\t' || *r == '\n' ||
				   *r == '\r') {
				break;
			}
			if (*r == '\\' && r[1])
				r++;
			*w++ = *r++;
		}
		if (*r)
			r++;
		*w = 0;
	}
	argv[argc] = NULL;
	return argc;
}

int shell_execute(struct shell *sh, char *line)
{
	char *argv[64];
	int argc = split_words(line, argv, 63);
	if (argc < 0)
		return sh_err(sh, "too many arguments");
	if (!argc)
		return 0;
	const struct command *c = command_find(argv[0]);
	if (!c)
		return sh_err(sh, "%s: no such command (try 'help')", argv[0]);
	if (c->reserved)
		return c->run(sh, argc, argv);
	if (c->needs_volume && !sh->vol)
		return sh_err(sh, "%s: no volume is open", argv[0]);
	if (c->needs_write && sh->mode != TUX3_OPEN_RDWR)
		return sh_err(sh, "%s: volume opened read-only (use -w)",
			      argv[0]);
	if (c->needs_write)
		sh->dirty = 1;	/* until committed (also if it failed) */
	sh_restore_version(sh);		/* paths choose afresh */
	int failed = c->run(sh, argc, argv);
	sh_restore_version(sh);
	/* Interactive and -R: each editing command is its own delta, also
	 * when it failed part way (what it did is not undone).  In -f and
	 * stdin batches, 'delta' and the end of the batch commit. */
	if (c->needs_write && !sh->batch && sh->vol)
		failed |= sh_commit(sh);
	return failed;
}

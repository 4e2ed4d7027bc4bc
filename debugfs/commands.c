/*
 * The command table of tux3debug and the inspection commands.  Each
 * command is a row: name, aliases, group, usage, one-line help, whether it
 * needs an open volume, handler.  Handlers return 0 or 1 (failed).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uuid/uuid.h>
#include "debugfs.h"

int sh_resolve(struct shell *sh, const char *arg, tux3_ino_t *ino)
{
	size_t len = strlen(arg);
	int err;

	if (len > 2 && arg[0] == '<' && arg[len - 1] == '>') {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(arg + 1, &end, 0);
		if (errno || end != arg + len - 1 || !v)
			return sh_err(sh, "%s: bad inode number", arg);
		*ino = v;
		return 0;
	}
	char full[8300];
	if (join_path(sh, arg, full, sizeof(full)))
		return sh_err(sh, "%s: path too long", arg);
	err = tux3_lookup_path(sh->vol, full, ino);
	if (err)
		return sh_volerr(sh, arg, err);
	return 0;
}

static void mode_string(uint32_t mode, char out[11])
{
	static const char types[] = "?pc?d?b?-?l?s???";
	out[0] = types[(mode >> 12) & 15];
	const char *rwx = "rwxrwxrwx";
	for (int i = 0; i < 9; i++)
		out[1 + i] = (mode & (1u << (8 - i))) ? rwx[i] : '-';
	if (mode & S_ISUID)
		out[3] = (mode & S_IXUSR) ? 's' : 'S';
	if (mode & S_ISGID)
		out[6] = (mode & S_IXGRP) ? 's' : 'S';
	if (mode & S_ISVTX)
		out[9] = (mode & S_IXOTH) ? 't' : 'T';
	out[10] = 0;
}

static void time_string(int64_t ns, char *buf, size_t len)
{
	time_t s = (time_t)(ns / 1000000000);
	long frac = (long)(ns % 1000000000);
	struct tm tm;
	if (frac < 0) {
		frac += 1000000000;
		s--;
	}
	gmtime_r(&s, &tm);
	size_t n = strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%09ld UTC", frac);
}

/* ---- ls ---- */

struct ls_ctx {
	struct shell *sh;
	int longfmt, err;
};

static int ls_entry(void *ctx, const char *name, unsigned len, tux3_ino_t ino,
		    unsigned type, uint64_t pos)
{
	struct ls_ctx *l = ctx;
	(void)type; (void)pos;
	if (!l->longfmt) {
		fprintf(l->sh->out, "%8" PRIu64 "  %.*s\n", ino, (int)len, name);
		return 0;
	}
	struct tux3_stat st;
	int err = tux3_stat(l->sh->vol, ino, &st);
	if (err) {
		char what[300];
		snprintf(what, sizeof(what), "%.*s", (int)len, name);
		sh_volerr(l->sh, what, err);
		l->err = 1;
		return 0;
	}
	char mode[11], tbuf[64];
	mode_string(st.mode, mode);
	time_string(st.mtime_ns, tbuf, sizeof(tbuf));
	fprintf(l->sh->out, "%8" PRIu64 " %s %3u %6u %6u %12" PRIu64 " %.19s %.*s\n",
		ino, mode, st.nlink, st.uid, st.gid, st.size, tbuf, (int)len,
		name);
	return 0;
}

static int cmd_ls(struct shell *sh, int argc, char **argv)
{
	struct ls_ctx l = { sh, 0, 0 };
	tux3_ino_t ino;
	int c;
	optind = 0;
	while ((c = getopt(argc, argv, "l")) != -1) {
		if (c != 'l')
			return sh_err(sh, "usage: ls [-l] [PATH]");
		l.longfmt = 1;
	}
	const char *path = optind < argc ? argv[optind] : sh->cwdpath;
	if (sh_resolve(sh, path, &ino))
		return 1;
	int err = tux3_readdir(sh->vol, ino, ls_entry, &l);
	if (err < 0)
		return sh_volerr(sh, path, err);
	return l.err;
}

/* ---- stat ---- */

static int print_xattr(void *ctx, const char *name, const void *value,
		       unsigned size)
{
	struct shell *sh = ctx;
	const unsigned char *v = value;
	int printable = 1;
	for (unsigned i = 0; i < size; i++)
		if (!isprint(v[i]))
			printable = 0;
	fprintf(sh->out, "  %s (%u) = ", name, size);
	if (printable) {
		fprintf(sh->out, "\"%.*s\"\n", (int)size, (const char *)v);
	} else {
		for (unsigned i = 0; i < size; i++)
			fprintf(sh->out, "%02x", v[i]);
		fputc('\n', sh->out);
	}
	return 0;
}

static int print_extent(void *ctx, uint64_t logical, tux3_block_t physical,
			uint64_t count, uint32_t version)
{
	struct shell *sh = ctx;
	if (!physical)
		fprintf(sh->out, "  %" PRIu64 "-%" PRIu64 ": hole\n", logical,
			logical + count - 1);
	else
		fprintf(sh->out, "  %" PRIu64 "-%" PRIu64 ": %" PRIu64 "-%" PRIu64
			" (%" PRIu64 " blocks, version %u)\n", logical,
			logical + count - 1, physical, physical + count - 1,
			count, version);
	return 0;
}

static int cmd_stat(struct shell *sh, int argc, char **argv)
{
	struct tux3_stat st;
	tux3_ino_t ino;
	char mode[11], ct[64], mt[64];

	if (argc != 2)
		return sh_err(sh, "usage: stat PATH|<inum>");
	if (sh_resolve(sh, argv[1], &ino))
		return 1;
	int err = tux3_stat(sh->vol, ino, &st);
	if (err)
		return sh_volerr(sh, argv[1], err);
	mode_string(st.mode, mode);
	time_string(st.ctime_ns, ct, sizeof(ct));
	time_string(st.mtime_ns, mt, sizeof(mt));
	FILE *o = sh->out;
	fprintf(o, "Inode: %" PRIu64 "   Type: %c   Mode: %04o (%s)%s\n", ino,
		manifest_type(st.mode), st.mode & 07777, mode,
		st.orphan ? "   ORPHAN" : "");
	fprintf(o, "User: %u   Group: %u   Links: %u   Size: %" PRIu64 "\n",
		st.uid, st.gid, st.nlink, st.size);
	if (S_ISCHR(st.mode) || S_ISBLK(st.mode))
		fprintf(o, "Device: %u:%u\n", st.rdev_major, st.rdev_minor);
	fprintf(o, "Blocks: %" PRIu64 " (512-byte units)   Block size: %u\n",
		st.blocks, st.blksize);
	fprintf(o, "ctime: %s\nmtime: %s\natime: (not stored; reported as "
		"mtime)\n", ct, mt);
	if (st.dtree_root >> 63)
		fprintf(o, "Data: direct extent, %" PRIu64 " blocks at %" PRIu64
			"\n", (st.dtree_root >> 48) & 0x7fff,
			st.dtree_root & (uint64_t)0xffffffffffff);
	else if (st.dtree_root)
		fprintf(o, "Data: tree of depth %" PRIu64 " rooted at block %"
			PRIu64 "\n", (st.dtree_root >> 48) & 0x7fff,
			st.dtree_root & (uint64_t)0xffffffffffff);
	else
		fprintf(o, "Data: none\n");
	if (st.xattr_count) {
		fprintf(o, "Extended attributes:\n");
		if ((err = tux3_listxattr(sh->vol, ino, print_xattr, sh)) < 0)
			return sh_volerr(sh, argv[1], err);
	}
	if (st.dtree_root) {
		fprintf(o, "Extents:\n");
		if ((err = tux3_map_extents(sh->vol, ino, print_extent, sh)) < 0)
			return sh_volerr(sh, argv[1], err);
	}
	return 0;
}

static int cmd_xattrs(struct shell *sh, int argc, char **argv)
{
	tux3_ino_t ino;
	if (argc != 2)
		return sh_err(sh, "usage: xattrs PATH|<inum>");
	if (sh_resolve(sh, argv[1], &ino))
		return 1;
	int err = tux3_listxattr(sh->vol, ino, print_xattr, sh);
	return err < 0 ? sh_volerr(sh, argv[1], err) : 0;
}

/* ---- cat ---- */

static int copy_out(struct shell *sh, tux3_ino_t ino, const char *name, FILE *f)
{
	struct tux3_stat st;
	static char buf[1 << 20];
	int err = tux3_stat(sh->vol, ino, &st);
	if (err)
		return sh_volerr(sh, name, err);
	for (uint64_t pos = 0; pos < st.size;) {
		ssize_t n = tux3_read(sh->vol, ino, buf, sizeof(buf), pos);
		if (n < 0)
			return sh_volerr(sh, name, (int)n);
		if (!n)
			break;
		if (fwrite(buf, 1, (size_t)n, f) != (size_t)n)
			return sh_err(sh, "%s: write error: %s", name,
				      strerror(errno));
		pos += (uint64_t)n;
	}
	return 0;
}

static int cmd_cat(struct shell *sh, int argc, char **argv)
{
	struct tux3_stat st;
	tux3_ino_t ino;
	if (argc != 2)
		return sh_err(sh, "usage: cat PATH|<inum>");
	if (sh_resolve(sh, argv[1], &ino))
		return 1;
	int err = tux3_stat(sh->vol, ino, &st);
	if (err)
		return sh_volerr(sh, argv[1], err);
	if (S_ISLNK(st.mode)) {
		char target[65537];
		ssize_t n = tux3_readlink(sh->vol, ino, target, sizeof(target));
		if (n < 0)
			return sh_volerr(sh, argv[1], (int)n);
		fprintf(sh->out, "%s\n", target);
		return 0;
	}
	if (!S_ISREG(st.mode))
		return sh_err(sh, "%s: not a regular file or symlink", argv[1]);
	return copy_out(sh, ino, argv[1], sh->out);
}

/* ---- cd, pwd ---- */

/* Join cwd and arg into a normalized absolute path ("." dropped). */
int join_path(struct shell *sh, const char *arg, char *out, size_t len)
{
	char tmp[8300];
	snprintf(tmp, sizeof(tmp), "%s/%s", arg[0] == '/' ? "" : sh->cwdpath,
		 arg);
	size_t n = 0;
	out[0] = 0;
	for (char *save, *w = strtok_r(tmp, "/", &save); w;
	     w = strtok_r(NULL, "/", &save)) {
		if (!strcmp(w, "."))
			continue;
		if (!strcmp(w, "..")) {
			/* no parent links on disk: go up by the path */
			char *slash = strrchr(out, '/');
			n = slash ? (size_t)(slash - out) : 0;
			out[n] = 0;
			continue;
		}
		int k = snprintf(out + n, len - n, "/%s", w);
		if (k < 0 || (size_t)k >= len - n)
			return -ENAMETOOLONG;
		n += (size_t)k;
	}
	if (!n)
		snprintf(out, len, "/");
	return 0;
}

static int cmd_cd(struct shell *sh, int argc, char **argv)
{
	char path[sizeof(sh->cwdpath)];
	struct tux3_stat st;
	tux3_ino_t ino;
	if (argc > 2)
		return sh_err(sh, "usage: cd [PATH]");
	if (join_path(sh, argc == 2 ? argv[1] : "/", path, sizeof(path)))
		return sh_err(sh, "%s: path too long", argv[1]);
	int err = tux3_lookup_path(sh->vol, path, &ino);
	if (!err)
		err = tux3_stat(sh->vol, ino, &st);
	if (err)
		return sh_volerr(sh, path, err);
	if (!S_ISDIR(st.mode))
		return sh_err(sh, "%s: not a directory", path);
	sh->cwd = ino;
	snprintf(sh->cwdpath, sizeof(sh->cwdpath), "%s", path);
	return 0;
}

static int cmd_pwd(struct shell *sh, int argc, char **argv)
{
	(void)argv;
	if (argc != 1)
		return sh_err(sh, "usage: pwd");
	fprintf(sh->out, "%s\n", sh->cwdpath);
	return 0;
}

static int cmd_quit(struct shell *sh, int argc, char **argv)
{
	(void)argc; (void)argv;
	sh->quit = 1;
	return 0;
}

/* ---- super, statfs ---- */

static void print_root(FILE *o, const char *name, uint64_t packed)
{
	if (!packed)
		fprintf(o, "%-14s 0x%016" PRIx64 " (none)\n", name, packed);
	else
		fprintf(o, "%-14s 0x%016" PRIx64 " (depth %" PRIu64 ", block %"
			PRIu64 ")\n", name, packed, (packed >> 48) & 0x7fff,
			packed & (uint64_t)0xffffffffffff);
}

static int cmd_super(struct shell *sh, int argc, char **argv)
{
	struct tux3_super_info s;
	(void)argv;
	if (argc != 1)
		return sh_err(sh, "usage: super");
	tux3_super_info(sh->vol, &s);
	FILE *o = sh->out;
	fprintf(o, "%-14s ", "magic");
	for (int i = 0; i < 8; i++)
		fprintf(o, "%02x", s.magic[i]);
	fprintf(o, " ('%.4s' + %02x%02x-%02x-%02x)\n", (const char *)s.magic,
		s.magic[4], s.magic[5], s.magic[6], s.magic[7]);
	fprintf(o, "%-14s %" PRIu64 "\n", "birthdate", s.birthdate);
	fprintf(o, "%-14s 0x%" PRIx64 "\n", "flags", s.flags);
	fprintf(o, "%-14s %u (block size %u)\n", "blockbits", s.blockbits,
		s.blocksize);
	fprintf(o, "%-14s %" PRIu64 "\n", "volblocks", s.volblocks);
	print_root(o, "iroot", s.iroot);
	print_root(o, "oroot", s.oroot);
	fprintf(o, "%-14s %" PRIu64 "\n", "usedinodes", s.usedinodes);
	fprintf(o, "%-14s %" PRIu64 "\n", "nextblock", s.nextblock);
	fprintf(o, "%-14s %" PRIu64 "\n", "atomdictsize", s.atomdictsize);
	fprintf(o, "%-14s %u\n", "freeatom", s.freeatom);
	fprintf(o, "%-14s %u\n", "atomgen", s.atomgen);
	fprintf(o, "%-14s %" PRIu64 "\n", "logchain", s.logchain);
	fprintf(o, "%-14s %u\n", "logcount", s.logcount);
	fprintf(o, "%-14s %" PRIu64 " (%s)\n", "freeblocks", s.freeblocks,
		s.replayed ? "after log replay" : "on-disk bitmap, no replay");
	fprintf(o, "%-14s %u\n", "orphans", tux3_orphan_count(sh->vol));

	/* our extension record (doc/format.md section 15) */
	struct tux3_identity id;
	tux3_identity(sh->vol, &id);
	if (!id.present) {
		fprintf(o, "%-14s none\n", "extension");
		return 0;
	}
	char uuid[37], when[64];
	uuid_unparse(id.uuid, uuid);
	time_string(id.mkfs_time_ns, when, sizeof(when));
	fprintf(o, "%-14s version %u\n", "extension", id.version);
	fprintf(o, "%-14s %s\n", "uuid", uuid);
	fprintf(o, "%-14s \"", "label");
	for (const unsigned char *p = (const unsigned char *)id.label; *p; p++) {
		if (*p < 0x20 || *p == 0x7f || *p == '"' || *p == '\\')
			fprintf(o, "\\x%02x", *p);
		else
			fputc(*p, o);
	}
	fprintf(o, "\"\n");
	fprintf(o, "%-14s %s (%" PRId64 " ns)\n", "mkfs time", when,
		id.mkfs_time_ns);
	fprintf(o, "%-14s 0x%08x\n", "compat", id.compat);
	fprintf(o, "%-14s 0x%08x\n", "ro_compat", id.ro_compat);
	fprintf(o, "%-14s 0x%08x\n", "incompat", id.incompat);
	fprintf(o, "%-14s %" PRIu64 "\n", "seq", id.seq);
	fprintf(o, "%-14s %s\n", "seal", id.sealed ? "sealed" :
		"not sealed (last commit by a writer that does not know the "
		"extension)");
	return 0;
}

static int cmd_statfs(struct shell *sh, int argc, char **argv)
{
	struct tux3_statfs st;
	(void)argv;
	if (argc != 1)
		return sh_err(sh, "usage: statfs");
	tux3_statfs(sh->vol, &st);
	fprintf(sh->out, "block size:         %u\n"
		"blocks:             %" PRIu64 "\n"
		"free blocks:        %" PRIu64 "\n"
		"inode numbers:      %" PRIu64 "\n"
		"free inode numbers: %" PRIu64 "\n"
		"name length:        %u\n", st.bsize, st.blocks, st.bfree,
		st.files, st.ffree, st.namelen);
	return 0;
}

/* ---- atoms ---- */

static int print_atom(void *ctx, const struct tux3_atom *a)
{
	struct shell *sh = ctx;
	fprintf(sh->out, "%6u %8u %10" PRIu64 "  %s\n", a->atom, a->refcount,
		a->dictpos, a->name);
	return 0;
}

static int print_free_atom(void *ctx, unsigned atom)
{
	struct shell *sh = ctx;
	fprintf(sh->out, " %u", atom);
	return 0;
}

static int cmd_atoms(struct shell *sh, int argc, char **argv)
{
	struct tux3_super_info s;
	(void)argv;
	if (argc != 1)
		return sh_err(sh, "usage: atoms");
	tux3_super_info(sh->vol, &s);
	fprintf(sh->out, "atomgen %u, freeatom %u, dictionary %" PRIu64
		" bytes\n  atom refcount  dict-pos  name\n", s.atomgen,
		s.freeatom, s.atomdictsize);
	int err = tux3_atoms(sh->vol, print_atom, sh);
	if (err)
		return sh_volerr(sh, "atoms", err);
	fprintf(sh->out, "free list:");
	err = tux3_atom_freelist(sh->vol, print_free_atom, sh);
	fputc('\n', sh->out);
	if (err)
		return sh_volerr(sh, "atoms: free list", err);
	return 0;
}

/* ---- log ---- */

static int log_block(void *ctx, unsigned index, tux3_block_t block,
		     unsigned bytes, tux3_block_t chain)
{
	struct shell *sh = ctx;
	fprintf(sh->out, "log block %u: block %" PRIu64 ", %u payload bytes, "
		"logchain -> %" PRIu64 "\n", index, block, bytes, chain);
	return 0;
}

static int log_rec(void *ctx, tux3_block_t block,
		   const struct tux3_logrec_info *rec)
{
	struct shell *sh = ctx;
	(void)block;
	fprintf(sh->out, "  %4u: %s%s\n", rec->offset, rec->text,
		rec->live || !sh->vol_replayed ? "" :
		"   (before the latest UNIFY: not replayed)");
	return 0;
}

static int cmd_log(struct shell *sh, int argc, char **argv)
{
	struct tux3_super_info s;
	struct tux3_walk_ops ops = { .logblock = log_block, .logrec = log_rec };
	int err;
	(void)argv;

	if (argc != 1)
		return sh_err(sh, "usage: log");
	tux3_super_info(sh->vol, &s);
	if (s.replayed) {
		fprintf(sh->out, "logchain %" PRIu64 ", logcount %u (oldest "
			"first)\n", s.logchain, s.logcount);
		err = tux3_walk_log(sh->vol, &ops, sh);
	} else {
		/* opened with -c: read the chain as far as it is readable */
		fprintf(sh->out, "logchain %" PRIu64 ", logcount %u (newest "
			"first, not replayed)\n", s.logchain, s.logcount);
		err = tux3_scan_log_raw(sh->vol, &ops, sh);
	}
	if (err < 0)
		return sh_volerr(sh, "log", err);
	for (unsigned i = 0; i < tux3_orphan_count(sh->vol); i++)
		fprintf(sh->out, "orphan: inode %" PRIu64 "\n",
			tux3_orphan(sh->vol, i));
	return 0;
}

/* ---- help ---- */

static int cmd_help(struct shell *sh, int argc, char **argv)
{
	if (argc > 1) {
		const struct command *c = command_find(argv[1]);
		if (!c)
			return sh_err(sh, "help: no command '%s'", argv[1]);
		fprintf(sh->out, "usage: %s\n%s\n", c->usage, c->help);
		if (c->aliases)
			fprintf(sh->out, "aliases: %s\n", c->aliases);
		return 0;
	}
	const char *group = "";
	for (const struct command *c = commands; c->name; c++) {
		if (strcmp(group, c->group)) {
			group = c->group;
			fprintf(sh->out, "%s:\n", group);
		}
		fprintf(sh->out, "  %-30s %s\n", c->usage, c->help);
	}
	return 0;
}

struct extent_print {
	FILE *out;
	uint64_t want;		/* bmap: the logical block; UINT64_MAX: all */
	int found;
};

static int extent_line(void *ctx, uint64_t logical, tux3_block_t physical,
			uint64_t count, uint32_t version)
{
	struct extent_print *p = ctx;
	if (p->want == UINT64_MAX) {
		fprintf(p->out, "%12" PRIu64 " %12" PRIu64 " %8" PRIu64
			" %7" PRIu32 "%s\n", logical, physical, count, version,
			physical ? "" : "  (hole)");
		return 0;
	}
	if (p->want >= logical && p->want - logical < count) {
		fprintf(p->out, "%" PRIu64 "\n",
			physical ? physical + (p->want - logical) : 0);
		p->found = 1;
		return 1;
	}
	return 0;
}

/* extents PATH: every extent of a file's data */
static int cmd_extents(struct shell *sh, int argc, char **argv)
{
	struct extent_print p = { sh->out, UINT64_MAX, 0 };
	tux3_ino_t ino;
	if (argc != 2)
		return sh_err(sh, "usage: extents PATH|<inum>");
	if (sh_resolve(sh, argv[1], &ino))
		return 1;
	fprintf(sh->out, "%12s %12s %8s %7s\n", "logical", "physical",
		"count", "version");
	int err = tux3_map_extents(sh->vol, ino, extent_line, &p);
	return err < 0 ? sh_volerr(sh, argv[1], err) : 0;
}

/* bmap PATH LOGICAL: the physical block of a logical block (0: hole) */
static int cmd_bmap(struct shell *sh, int argc, char **argv)
{
	struct extent_print p = { sh->out, 0, 0 };
	tux3_ino_t ino;
	char *end;
	if (argc != 3)
		return sh_err(sh, "usage: bmap PATH|<inum> LOGICAL");
	if (sh_resolve(sh, argv[1], &ino))
		return 1;
	errno = 0;
	p.want = strtoull(argv[2], &end, 0);
	if (errno || *end || !*argv[2] || argv[2][0] == '-' ||
	    p.want == UINT64_MAX)
		return sh_err(sh, "bmap: bad logical block '%s'", argv[2]);
	int err = tux3_map_extents(sh->vol, ino, extent_line, &p);
	if (err < 0)
		return sh_volerr(sh, argv[1], err);
	if (!p.found)
		fprintf(sh->out, "0\n");	/* beyond the last extent */
	return 0;
}

const struct command commands[] = {
	/* name, aliases, group, usage, help, needs_volume, needs_write, run */
	{ "ls", "list dir", "Files", "ls [-l] [PATH]",
	  "list a directory (-l: mode, links, owner, size, mtime)", 1, 0,
	  cmd_ls },
	{ "cd", "chdir", "Files", "cd [PATH]",
	  "change the current directory inside the volume", 1, 0, cmd_cd },
	{ "pwd", NULL, "Files", "pwd", "print the current directory", 1, 0,
	  cmd_pwd },
	{ "stat", NULL, "Files", "stat PATH|<inum>",
	  "show an inode: attributes, xattrs and extents", 1, 0, cmd_stat },
	{ "extents", NULL, "Files", "extents PATH|<inum>",
	  "list a file's extents: logical, physical, count, version", 1, 0,
	  cmd_extents },
	{ "bmap", NULL, "Files", "bmap PATH|<inum> LOGICAL",
	  "print the physical block of a logical block (0: a hole)", 1, 0,
	  cmd_bmap },
	{ "cat", NULL, "Files", "cat PATH|<inum>",
	  "write a file's contents to standard output", 1, 0, cmd_cat },
	{ "dump", "dump_inode", "Files", "dump [-p] PATH HOSTFILE",
	  "copy a file out to the host (-p: owner, mode, times too)", 1, 0,
	  cmd_dump },
	{ "rdump", NULL, "Files", "rdump PATH HOSTDIR",
	  "copy a subtree out to the host with all metadata", 1, 0, cmd_rdump },
	{ "xattrs", "ea_list", "Files", "xattrs PATH|<inum>",
	  "list extended attributes", 1, 0, cmd_xattrs },
	{ "manifest", NULL, "Files", "manifest [PATH]",
	  "print the subtree as a TSV manifest (oracle format)", 1, 0,
	  cmd_manifest },
	{ "write", NULL, "Editing", "write [-f] HOSTFILE PATH",
	  "copy a host file in as PATH (-f: replace an existing file)", 1, 1,
	  cmd_write },
	{ "mkdir", NULL, "Editing", "mkdir PATH", "make a directory", 1, 1,
	  cmd_mkdir },
	{ "rm", NULL, "Editing", "rm PATH",
	  "remove a name (not a directory)", 1, 1, cmd_rm },
	{ "rmdir", NULL, "Editing", "rmdir PATH",
	  "remove an empty directory", 1, 1, cmd_rmdir },
	{ "ln", NULL, "Editing", "ln [-s] TARGET PATH",
	  "make a hard link to TARGET (-s: a symbolic link)", 1, 1, cmd_ln },
	{ "mv", "rename", "Editing", "mv [-n|-x] OLD NEW",
	  "rename (-n: never replace, -x: exchange the two)", 1, 1, cmd_mv },
	{ "setxattr", "ea_set", "Editing", "setxattr PATH NAME VALUE",
	  "set an xattr (VALUE as text, or 0xHEX)", 1, 1, cmd_setxattr },
	{ "rmxattr", "ea_rm", "Editing", "rmxattr PATH NAME",
	  "remove an xattr", 1, 1, cmd_rmxattr },
	{ "truncate", NULL, "Editing", "truncate PATH SIZE",
	  "set a regular file's size in bytes", 1, 1, cmd_truncate },
	{ "chmod", NULL, "Editing", "chmod MODE PATH",
	  "set the permission bits (octal)", 1, 1, cmd_chmod },
	{ "chown", NULL, "Editing", "chown UID:GID PATH",
	  "set the numeric owner and group", 1, 1, cmd_chown },
	{ "touch", NULL, "Editing", "touch PATH",
	  "create an empty file, or set its mtime to now", 1, 1, cmd_touch },
	{ "mknod", NULL, "Editing", "mknod PATH p|c|b|s [MAJOR MINOR]",
	  "make a fifo, device node or socket", 1, 1, cmd_mknod },
	{ "delta", NULL, "Editing", "delta",
	  "commit the changes made so far", 1, 1, cmd_delta },
	{ "unify", NULL, "Editing", "unify",
	  "commit, folding the log into the on-disk trees", 1, 1, cmd_unify },
	{ "super", "stats show_super_stats", "Structures", "super",
	  "show every superblock field", 1, 0, cmd_super },
	{ "atoms", NULL, "Structures", "atoms",
	  "show the xattr atom table: names, refcounts, free list", 1, 0,
	  cmd_atoms },
	{ "statfs", "df", "Structures", "statfs", "show free space and inodes",
	  1, 0, cmd_statfs },
	{ "check", NULL, "Structures", "check",
	  "check block ownership and the namespace (links, types)", 1, 0,
	  cmd_check },
	{ "block", "bd block_dump", "Raw", "block [-f] N",
	  "hex dump of block N (-f: no squeezing), its type by magic and "
	  "every field decoded", 1, 0, cmd_block },
	{ "inode", "inode_dump", "Raw", "inode INUM|<inum>|PATH",
	  "the inode's attribute blob, decoded attribute by attribute", 1, 0,
	  cmd_inode },
	{ "set_super", "ssv", "Raw", "set_super [-c] FIELD VALUE",
	  "CORRUPTION TOOL: write one superblock field straight to the "
	  "device, not as a delta (-c: recompute the extension CRC)", 1, 1,
	  cmd_set_super },
	{ "set_inode", "sif", "Raw", "set_inode INUM FIELD VALUE",
	  "set a fixed inode field (mode uid gid size nlink ctime mtime rdev "
	  "dtree) as is, committed as a normal delta", 1, 1, cmd_set_inode },
	{ "set_block", NULL, "Raw", "set_block N OFFSET HEXBYTES",
	  "CORRUPTION TOOL: write bytes into block N on the device, bypassing "
	  "the log", 1, 1, cmd_set_block },
	{ "log", "logdump", "Log", "log",
	  "show each log block and its decoded records", 1, 0, cmd_log },
	{ "help", "?", "Shell", "help [COMMAND]", "list commands, or show one",
	  0, 0, cmd_help },
	{ "quit", "q exit", "Shell", "quit", "leave the shell", 0, 0, cmd_quit },
	{ NULL, NULL, NULL, NULL, NULL, 0, 0, NULL },
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
	if (c->needs_volume && !sh->vol)
		return sh_err(sh, "%s: no volume is open", argv[0]);
	if (c->needs_write && sh->mode != TUX3_OPEN_RDWR)
		return sh_err(sh, "%s: volume opened read-only (use -w)",
			      argv[0]);
	if (c->needs_write)
		sh->dirty = 1;	/* until committed (also if it failed) */
	int failed = c->run(sh, argc, argv);
	/* Interactive and -R: each editing command is its own delta, also
	 * when it failed part way (what it did is not undone).  In -f and
	 * stdin batches, 'delta' and the end of the batch commit. */
	if (c->needs_write && !sh->batch && sh->vol)
		failed |= sh_commit(sh);
	return failed;
}

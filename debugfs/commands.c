/*
 * Navigation and files (group "Files" and the file views of
 * "Structures"): ls, cd, pwd, stat, cat, readlink, xattrs, extents, bmap,
 * find; and the path and number parsing every command shares.
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "debugfs.h"
#include "tux3_fields.h"

int parse_number(const char *s, uint64_t *v)
{
	char *end;
	if (!*s || *s == '-' || *s == '+' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*v = x;
	return 0;
}

int parse_block(struct shell *sh, const char *s, tux3_block_t *block)
{
	struct tux3_statfs st;
	uint64_t v;
	if (parse_number(s, &v))
		return sh_err(sh, "%s: bad block number", s);
	tux3_statfs(sh->vol, &st);
	if (v >= st.blocks)
		return sh_err(sh, "%s: block outside the volume (%" PRIu64
			      " blocks)", s, st.blocks);
	*block = v;
	return 0;
}

int sh_resolve(struct shell *sh, const char *arg, tux3_ino_t *ino)
{
	size_t len = strlen(arg);
	int err;

	if (len > 2 && arg[0] == '<' && arg[len - 1] == '>') {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(arg + 1, &end, 0);
		if (errno || end != arg + len - 1 || !v || arg[1] == '-' ||
		    arg[1] == '+')
			return sh_err(sh, "%s: bad inode number", arg);
		*ino = v;
		return 0;
	}
	char full[8300];
	if (sh_path(sh, arg, NULL, full, sizeof(full)))
		return 1;
	err = tux3_lookup_path(sh->vol, full, ino);
	if (err)
		return sh_volerr(sh, arg, err);
	return 0;
}

void mode_string(uint32_t mode, char out[11])
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

void time_string(int64_t ns, char *buf, size_t len)
{
	time_t s = (time_t)(ns / 1000000000);
	long frac = (long)(ns % 1000000000);
	struct tm tm;
	if (frac < 0) {
		frac += 1000000000;
		s--;
	}
	size_t n = 0;
	if (gmtime_r(&s, &tm))
		n = strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	if (!n)
		n = (size_t)snprintf(buf, len, "%lld", (long long)s);
	if (n < len)
		snprintf(buf + n, len - n, ".%09ld UTC", frac);
}

static const char *dtype_name(unsigned type)
{
	static const char *const names[] = {
		[TUX3_DT_UNKNOWN] = "?", [TUX3_DT_REG] = "f",
		[TUX3_DT_DIR] = "d", [TUX3_DT_CHR] = "c", [TUX3_DT_BLK] = "b",
		[TUX3_DT_FIFO] = "p", [TUX3_DT_SOCK] = "s", [TUX3_DT_LNK] = "l",
	};
	return type < sizeof(names) / sizeof(names[0]) ? names[type] : "?";
}

/* ---- ls ---- */

enum { LS_SHORT, LS_LONG, LS_PARSE };

struct ls_ctx {
	struct shell *sh;
	int format, err;
	struct json *json;
};

void json_stat(struct json *j, const struct tux3_stat *st)
{
	json_u64(j, "mode", st->mode);
	json_u64(j, "nlink", st->nlink);
	json_u64(j, "uid", st->uid);
	json_u64(j, "gid", st->gid);
	json_u64(j, "size", st->size);
	json_i64(j, "mtime_ns", st->mtime_ns);
}

static void ls_line(struct ls_ctx *l, const char *name, unsigned len,
		    tux3_ino_t ino, unsigned type, int deleted)
{
	struct tux3_stat st;
	FILE *o = l->sh->out;
	int have = 0;
	if (l->format != LS_SHORT && !deleted) {
		int err = tux3_stat(l->sh->vol, ino, &st);
		if (err) {
			char what[300];
			snprintf(what, sizeof(what), "%.*s", (int)len, name);
			sh_volerr(l->sh, what, err);
			l->err = 1;
			return;
		}
		have = 1;
	}
	if (l->json) {
		json_open(l->json, NULL, '{');
		json_u64(l->json, "inode", ino);
		json_strn(l->json, "name", name, len);
		json_str(l->json, "type", dtype_name(type));
		if (deleted)
			json_bool(l->json, "deleted", 1);
		if (have)
			json_stat(l->json, &st);
		json_close(l->json, '}');
		return;
	}
	const char *lq = deleted ? "<" : "", *rq = deleted ? ">" : "";
	if (l->format == LS_PARSE) {
		if (have)
			fprintf(o, "/%" PRIu64 "/%06o/%u/%u/%.*s/%" PRIu64 "/\n",
				ino, st.mode, st.uid, st.gid, (int)len, name,
				st.size);
		else
			fprintf(o, "/%" PRIu64 "/%06o/%u/%u/%s%.*s%s//\n", ino,
				0, 0, 0, lq, (int)len, name, rq);
		return;
	}
	if (l->format == LS_SHORT || !have) {
		fprintf(o, "%8" PRIu64 "  %s%.*s%s\n", ino, lq, (int)len, name,
			rq);
		return;
	}
	char mode[11], tbuf[64];
	mode_string(st.mode, mode);
	time_string(st.mtime_ns, tbuf, sizeof(tbuf));
	fprintf(o, "%8" PRIu64 " %s %3u %6u %6u %12" PRIu64 " %.19s %.*s\n",
		ino, mode, st.nlink, st.uid, st.gid, st.size, tbuf, (int)len,
		name);
}

static int ls_entry(void *ctx, const char *name, unsigned len, tux3_ino_t ino,
		    unsigned type, uint64_t pos)
{
	(void)pos;
	ls_line(ctx, name, len, ino, type, 0);
	return 0;
}

/*
 * ls -d: deleted entries.  A directory block is a chain of records
 * (be64 inum, be16 rec_len, u8 name_len, u8 type, name; 8-byte aligned);
 * a delete zeroes the record's name and merges it into the previous
 * record, so what a delete leaves is slack after a live record's name.
 * The chain is followed as far as it is sound; in the slack of each
 * record, every 8-byte aligned place is tried as a record header, and
 * a header that is whole (inode number, rec_len, a name that fits and
 * holds no '/' or NUL, a known type) is shown as a deleted entry.  Names
 * are zeroed by this library's writer and the reference's, so on such
 * volumes nothing shows: this is for other writers and damaged blocks.
 */
#define DIRENT_HEAD 12

static unsigned rec_need(unsigned name_len)
{
	return (DIRENT_HEAD + name_len + 7) & ~7u;
}

static int plausible(const uint8_t *p, unsigned room)
{
	if (room < DIRENT_HEAD + 4)
		return 0;
	uint64_t inum = 0;
	for (int i = 0; i < 8; i++)
		inum = inum << 8 | p[i];
	unsigned rec_len = (unsigned)p[8] << 8 | p[9];
	unsigned name_len = p[10], type = p[11];
	if (!inum || inum >= (1ULL << 48) || !name_len || type > TUX3_DT_LNK)
		return 0;
	if (rec_len < 16 || rec_len % 8 || rec_need(name_len) > room)
		return 0;
	if (memchr(p + DIRENT_HEAD, '/', name_len) ||
	    memchr(p + DIRENT_HEAD, 0, name_len))
		return 0;
	return 1;
}

struct dir_extent {
	uint64_t logical, physical, count;
};

struct dir_extents {
	struct dir_extent *v;
	size_t count, cap;
};

static int add_dir_extent(void *ctx, uint64_t logical, tux3_block_t physical,
			  uint64_t count, uint32_t version)
{
	struct dir_extents *d = ctx;
	(void)version;
	if (!physical)
		return 0;
	if (d->count == d->cap) {
		size_t ncap = d->cap ? d->cap * 2 : 16;
		void *n = realloc(d->v, ncap * sizeof(*d->v));
		if (!n)
			return -ENOMEM;
		d->v = n;
		d->cap = ncap;
	}
	d->v[d->count++] = (struct dir_extent){ logical, physical, count };
	return 0;
}

static void ls_deleted_block(struct ls_ctx *l, const uint8_t *b, unsigned bs)
{
	unsigned off = 0;
	while (off + DIRENT_HEAD + 4 <= bs) {
		unsigned rec_len = (unsigned)b[off + 8] << 8 | b[off + 9];
		unsigned name_len = b[off + 10];
		if (rec_len == 65535)
			rec_len = 65536;
		if (rec_len < 16 || rec_len % 8 || rec_len > bs - off)
			break;	/* the chain ends here: nothing to trust */
		unsigned from = name_len ? rec_need(name_len) : 16;
		for (unsigned at = from; at + DIRENT_HEAD + 4 <= rec_len;) {
			const uint8_t *p = b + off + at;
			if (plausible(p, rec_len - at)) {
				uint64_t inum = 0;
				for (int i = 0; i < 8; i++)
					inum = inum << 8 | p[i];
				ls_line(l, (const char *)p + DIRENT_HEAD,
					p[10], inum, p[11], 1);
				at += rec_need(p[10]);
			} else {
				at += 8;
			}
		}
		off += rec_len;
	}
}

static int ls_deleted(struct ls_ctx *l, tux3_ino_t dir, const char *path)
{
	struct shell *sh = l->sh;
	struct dir_extents d = { 0 };
	struct tux3_stat st;
	unsigned bs = tux3_block_size(sh->vol);
	int err = tux3_stat(sh->vol, dir, &st);
	if (!err)
		err = tux3_map_extents(sh->vol, dir, add_dir_extent, &d);
	if (err < 0) {
		free(d.v);
		return sh_volerr(sh, path, err);
	}
	uint8_t *b = malloc(bs);
	if (!b) {
		free(d.v);
		return sh_err(sh, "out of memory");
	}
	for (size_t i = 0; i < d.count; i++)
		for (uint64_t k = 0; k < d.v[i].count; k++) {
			if ((d.v[i].logical + k) * bs >= st.size)
				break;
			err = tux3_read_block(sh->vol, d.v[i].physical + k, b,
					      NULL);
			if (err) {
				sh_volerr(sh, path, err);
				l->err = 1;
				continue;
			}
			ls_deleted_block(l, b, bs);
		}
	free(b);
	free(d.v);
	return 0;
}

int cmd_ls(struct shell *sh, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'J' }, { NULL, 0, NULL, 0 },
	};
	static const char usage[] = "usage: ls [-l] [-p] [-d] [--json] [PATH]";
	struct ls_ctx l = { sh, LS_SHORT, 0, NULL };
	struct json json;
	int deleted = 0, asjson = 0, c;
	tux3_ino_t ino;
	optind = 0;
	while ((c = getopt_long(argc, argv, "lpd", longopts, NULL)) != -1) {
		switch (c) {
		case 'l': l.format = LS_LONG; break;
		case 'p': l.format = LS_PARSE; break;
		case 'd': deleted = 1; break;
		case 'J': asjson = 1; break;
		default: return sh_err(sh, "%s", usage);
		}
	}
	if (argc - optind > 1)
		return sh_err(sh, "%s", usage);
	const char *path = optind < argc ? argv[optind] : sh->cwdpath;
	if (sh_resolve(sh, path, &ino))
		return 1;
	struct tux3_stat st;
	int err = tux3_stat(sh->vol, ino, &st);
	if (err)
		return sh_volerr(sh, path, err);
	if (!S_ISDIR(st.mode))
		return sh_err(sh, "%s: %s", path, strerror(ENOTDIR));
	if (asjson) {
		json_begin(&json, sh->out, "ls");
		l.json = &json;
	}
	err = tux3_readdir(sh->vol, ino, ls_entry, &l);
	if (err < 0)
		l.err = sh_volerr(sh, path, err);
	else if (deleted)
		l.err |= ls_deleted(&l, ino, path);
	if (asjson)
		json_end(&json);
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

static int json_xattr(void *ctx, const char *name, const void *value,
		      unsigned size)
{
	struct json *j = ctx;
	const unsigned char *v = value;
	int printable = 1;
	for (unsigned i = 0; i < size; i++)
		if (!isprint(v[i]))
			printable = 0;
	json_open(j, NULL, '{');
	json_str(j, "name", name);
	json_u64(j, "size", size);
	if (printable)
		json_strn(j, "value", value, size);
	json_hex(j, "hex", value, size);
	json_close(j, '}');
	return 0;
}

static int json_extent(void *ctx, uint64_t logical, tux3_block_t physical,
		       uint64_t count, uint32_t version)
{
	struct json *j = ctx;
	json_open(j, NULL, '{');
	json_u64(j, "logical", logical);
	json_u64(j, "physical", physical);
	json_u64(j, "count", count);
	json_u64(j, "version", version);
	json_bool(j, "hole", !physical);
	json_close(j, '}');
	return 0;
}

static void json_root(struct json *j, const char *key, uint64_t packed,
		      int data)
{
	json_open(j, key, '{');
	if (!packed) {
		json_str(j, "kind", "none");
	} else if (data && (packed >> 63)) {
		json_str(j, "kind", "direct");
		json_u64(j, "count", (packed >> 48) & 0x7fff);
		json_u64(j, "block", packed & (uint64_t)0xffffffffffff);
	} else {
		json_str(j, "kind", "tree");
		json_u64(j, "depth", (packed >> 48) & 0x7fff);
		json_u64(j, "block", packed & (uint64_t)0xffffffffffff);
	}
	json_u64(j, "packed", packed);
	json_close(j, '}');
}

static int stat_json(struct shell *sh, const char *arg, tux3_ino_t ino,
		     const struct tux3_stat *st)
{
	struct json j;
	char mode[11], type[2] = { manifest_type(st->mode), 0 };
	int err = 0;
	mode_string(st->mode, mode);
	json_begin(&j, sh->out, "stat");
	json_open(&j, NULL, '{');
	json_u64(&j, "inode", ino);
	json_str(&j, "type", type);
	json_u64(&j, "mode", st->mode);
	json_str(&j, "mode_text", mode);
	json_u64(&j, "uid", st->uid);
	json_u64(&j, "gid", st->gid);
	json_u64(&j, "nlink", st->nlink);
	json_u64(&j, "size", st->size);
	if (S_ISCHR(st->mode) || S_ISBLK(st->mode)) {
		json_u64(&j, "rdev_major", st->rdev_major);
		json_u64(&j, "rdev_minor", st->rdev_minor);
	}
	json_u64(&j, "blocks", st->blocks);
	json_u64(&j, "blksize", st->blksize);
	json_i64(&j, "ctime_ns", st->ctime_ns);
	json_i64(&j, "mtime_ns", st->mtime_ns);
	json_bool(&j, "orphan", st->orphan);
	json_root(&j, "data", st->dtree_root, 1);
	json_open(&j, "xattrs", '[');
	if (st->xattr_count)
		err = tux3_listxattr(sh->vol, ino, json_xattr, &j);
	json_close(&j, ']');
	json_open(&j, "extents", '[');
	if (!err && st->dtree_root)
		err = tux3_map_extents(sh->vol, ino, json_extent, &j);
	json_close(&j, ']');
	json_close(&j, '}');
	json_end(&j);
	return err < 0 ? sh_volerr(sh, arg, err) : 0;
}

int cmd_stat(struct shell *sh, int argc, char **argv)
{
	struct tux3_stat st;
	tux3_ino_t ino;
	char mode[11], ct[64], mt[64], at[64];
	int asjson = 0;

	if (argc == 3 && !strcmp(argv[1], "--json")) {
		asjson = 1;
		argv++;
		argc--;
	}
	if (argc != 2)
		return sh_err(sh, "usage: stat [--json] PATH|<inum>");
	if (sh_resolve(sh, argv[1], &ino))
		return 1;
	int err = tux3_stat(sh->vol, ino, &st);
	if (err)
		return sh_volerr(sh, argv[1], err);
	if (asjson)
		return stat_json(sh, argv[1], ino, &st);
	mode_string(st.mode, mode);
	time_string(st.ctime_ns, ct, sizeof(ct));
	time_string(st.mtime_ns, mt, sizeof(mt));
	time_string(st.atime_ns, at, sizeof(at));
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
	fprintf(o, "ctime: %s\nmtime: %s\n", ct, mt);
	/* the atime feature (format.md 15.6); else the format has none */
	if (tux3_atime_enabled(sh->vol))
		fprintf(o, "atime: %s\n", at);
	else
		fprintf(o, "atime: (not stored; reported as mtime)\n");
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

int cmd_xattrs(struct shell *sh, int argc, char **argv)
{
	tux3_ino_t ino;
	if (argc != 2)
		return sh_err(sh, "usage: xattrs PATH|<inum>");
	if (sh_resolve(sh, argv[1], &ino))
		return 1;
	int err = tux3_listxattr(sh->vol, ino, print_xattr, sh);
	return err < 0 ? sh_volerr(sh, argv[1], err) : 0;
}

/* ---- cat, readlink ---- */

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

static int print_link(struct shell *sh, tux3_ino_t ino, const char *arg)
{
	static char target[65537];
	ssize_t n = tux3_readlink(sh->vol, ino, target, sizeof(target));
	if (n < 0)
		return sh_volerr(sh, arg, (int)n);
	fprintf(sh->out, "%s\n", target);
	return 0;
}

int cmd_cat(struct shell *sh, int argc, char **argv)
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
	if (S_ISLNK(st.mode))
		return print_link(sh, ino, argv[1]);
	if (!S_ISREG(st.mode))
		return sh_err(sh, "%s: not a regular file or symlink", argv[1]);
	return copy_out(sh, ino, argv[1], sh->out);
}

int cmd_readlink(struct shell *sh, int argc, char **argv)
{
	struct tux3_stat st;
	tux3_ino_t ino;
	if (argc != 2)
		return sh_err(sh, "usage: readlink PATH|<inum>");
	if (sh_resolve(sh, argv[1], &ino))
		return 1;
	int err = tux3_stat(sh->vol, ino, &st);
	if (err)
		return sh_volerr(sh, argv[1], err);
	if (!S_ISLNK(st.mode))
		return sh_err(sh, "%s: not a symbolic link", argv[1]);
	return print_link(sh, ino, argv[1]);
}

/* ---- cd, pwd, versions ---- */

int sh_select(struct shell *sh, const char *name)
{
	if (!strcmp(tux3_version_selected(sh->vol), name))
		return 0;
	return tux3_version_select(sh->vol, name);
}

void sh_restore_version(struct shell *sh)
{
	sh->path_chosen = 0;
	if (!sh->vol) {
		sh->version[0] = 0;
		return;
	}
	if (!sh_select(sh, sh->version))
		return;
	tux3_clear_error(sh->vol);
	sh_warn(sh, "snapshot %s is gone: back in the live version at /",
		sh->version);
	sh->version[0] = 0;
	sh->cwd = TUX3_ROOT_INO;
	strcpy(sh->cwdpath, "/");
	tux3_version_select(sh->vol, NULL);
}

/* Join cwd and arg into a normalized absolute path ("." dropped), in the
 * version the path names (see debugfs.h). */
int join_path(struct shell *sh, const char *arg, char *out, size_t len)
{
	char tmp[8300], tag[SH_VERSION_MAX];
	const char *version = sh->version, *base = sh->cwdpath;
	if (arg[0] == '@') {
		size_t n = strcspn(arg + 1, "/");
		if (n >= sizeof(tag))
			return -ENAMETOOLONG;
		memcpy(tag, arg + 1, n);
		tag[n] = 0;
		version = tag;
		arg += 1 + n;
		base = "";
	} else if (arg[0] == '/') {
		base = "";
	}
	if (sh->path_chosen && strcmp(sh->path_version, version))
		return -EXDEV;
	if (sh->vol) {
		int err = sh_select(sh, version);
		if (err)
			return err;
	}
	if (!sh->path_chosen) {
		snprintf(sh->path_version, sizeof(sh->path_version), "%s",
			 version);
		sh->path_chosen = 1;
	}
	snprintf(tmp, sizeof(tmp), "%s/%s", base, arg);
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

static const char *version_text(const char *name, char *buf, size_t len)
{
	if (!*name)
		return "the live version";
	snprintf(buf, len, "snapshot %s", name);
	return buf;
}

int sh_path(struct shell *sh, const char *arg, const char *what, char *out,
	    size_t len)
{
	int err = join_path(sh, arg, out, len);
	if (!what)
		what = arg;
	if (err == -ENAMETOOLONG)
		return sh_err(sh, "%s: path too long", what);
	if (err == -EXDEV) {
		char a[SH_VERSION_MAX + 16], b[SH_VERSION_MAX + 16];
		const char *tag = arg + 1;
		size_t n = strcspn(tag, "/");
		char want[SH_VERSION_MAX];
		snprintf(want, sizeof(want), "%.*s", (int)n, tag);
		return sh_err(sh, "%s: in %s, but the command's other paths "
			      "are in %s: one command works in one version",
			      what, version_text(arg[0] == '@' ? want :
						 sh->version, a, sizeof(a)),
			      version_text(sh->path_version, b, sizeof(b)));
	}
	if (err)
		return sh_volerr(sh, what, err);
	return 0;
}

void sh_cwd_text(struct shell *sh, char *out, size_t len)
{
	snprintf(out, len, "%s%s%s", sh->version[0] ? "@" : "", sh->version,
		 sh->cwdpath);
}

int sh_cd(struct shell *sh, const char *arg)
{
	char path[sizeof(sh->cwdpath)], shown[sizeof(path) + SH_VERSION_MAX];
	struct tux3_stat st;
	tux3_ino_t ino;
	if (sh_path(sh, arg, NULL, path, sizeof(path)))
		return 1;
	snprintf(shown, sizeof(shown), "%s%s%s", sh->path_version[0] ? "@" :
		 "", sh->path_version, path);
	int err = tux3_lookup_path(sh->vol, path, &ino);
	if (!err)
		err = tux3_stat(sh->vol, ino, &st);
	if (err)
		return sh_volerr(sh, shown, err);
	if (!S_ISDIR(st.mode))
		return sh_err(sh, "%s: not a directory", shown);
	sh->cwd = ino;
	snprintf(sh->cwdpath, sizeof(sh->cwdpath), "%s", path);
	snprintf(sh->version, sizeof(sh->version), "%s", sh->path_version);
	return 0;
}

int cmd_cd(struct shell *sh, int argc, char **argv)
{
	if (argc > 2)
		return sh_err(sh, "usage: cd [PATH]");
	return sh_cd(sh, argc == 2 ? argv[1] : "/");
}

int cmd_pwd(struct shell *sh, int argc, char **argv)
{
	char text[sizeof(sh->cwdpath) + SH_VERSION_MAX];
	(void)argv;
	if (argc != 1)
		return sh_err(sh, "usage: pwd");
	sh_cwd_text(sh, text, sizeof(text));
	fprintf(sh->out, "%s\n", text);
	return 0;
}

/* ---- extents, bmap ---- */

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

/* The elements of a versioned file, as the walker gives its leaves'
 * records: every version's, labelled.  Nothing for an unversioned file
 * (all its extents are label 0, printed above). */
struct labelled {
	FILE *out;
	unsigned n, versioned;
	struct { uint64_t logical, physical, count; uint32_t label; } r[512];
	unsigned spill;			/* blocks of the attribute chain */
	uint64_t spill_first;
	unsigned echain;		/* blocks of element chains */
	uint64_t echain_first;
};

static int labelled_extent(void *ctx, tux3_ino_t ino, uint64_t logical,
			   tux3_block_t physical, uint64_t count,
			   uint32_t version, tux3_block_t leafblock)
{
	struct labelled *l = ctx;
	(void)ino; (void)leafblock;
	if (version == TUX3_EXTENT_SPILL) {
		if (!l->spill++)
			l->spill_first = physical;
		return 0;
	}
	if (version == TUX3_EXTENT_ELIST) {
		if (!l->echain++)
			l->echain_first = physical;
		return 0;
	}
	l->versioned |= version != 0;
	if (l->n < sizeof(l->r) / sizeof(l->r[0]))
		l->r[l->n] = (typeof(l->r[0])){ logical, physical, count,
						version };
	l->n++;
	return 0;
}

static void print_labelled(struct shell *sh, tux3_ino_t ino)
{
	static struct labelled l;
	struct tux3_walk_ops ops = { .extent = labelled_extent };
	memset(&l, 0, sizeof(l));
	if (tux3_walk_inode(sh->vol, ino, &ops, &l) < 0) {
		tux3_clear_error(sh->vol);
		return;
	}
	if (l.spill)
		fprintf(sh->out, "attributes past the leaf: a chain of %u "
			"block%s from block %" PRIu64 "\n", l.spill,
			l.spill == 1 ? "" : "s", l.spill_first);
	if (l.echain)
		fprintf(sh->out, "element lists past the leaf: %u chain "
			"block%s, the first at block %" PRIu64 "\n", l.echain,
			l.echain == 1 ? "" : "s", l.echain_first);
	if (!l.versioned)
		return;
	fprintf(sh->out, "elements of every version (label 0: live):\n");
	fprintf(sh->out, "%12s %12s %8s %7s\n", "logical", "physical",
		"count", "label");
	unsigned shown = l.n < 512 ? l.n : 512;
	for (unsigned i = 0; i < shown; i++)
		fprintf(sh->out, "%12" PRIu64 " %12" PRIu64 " %8" PRIu64
			" %7" PRIu32 "%s\n", l.r[i].logical, l.r[i].physical,
			l.r[i].count, l.r[i].label,
			l.r[i].physical ? "" : "  (hole)");
	if (l.n > shown)
		fprintf(sh->out, "... %u more\n", l.n - shown);
}

/* extents [--json] PATH: every extent of a file's data */
int cmd_extents(struct shell *sh, int argc, char **argv)
{
	struct extent_print p = { sh->out, UINT64_MAX, 0 };
	tux3_ino_t ino;
	int asjson = 0;
	if (argc == 3 && !strcmp(argv[1], "--json")) {
		asjson = 1;
		argv++;
		argc--;
	}
	if (argc != 2)
		return sh_err(sh, "usage: extents [--json] PATH|<inum>");
	if (sh_resolve(sh, argv[1], &ino))
		return 1;
	int err;
	if (asjson) {
		struct json j;
		json_begin(&j, sh->out, "extents");
		err = tux3_map_extents(sh->vol, ino, json_extent, &j);
		json_end(&j);
	} else {
		fprintf(sh->out, "%12s %12s %8s %7s\n", "logical", "physical",
			"count", "version");
		err = tux3_map_extents(sh->vol, ino, extent_line, &p);
		if (!err)
			print_labelled(sh, ino);
	}
	return err < 0 ? sh_volerr(sh, argv[1], err) : 0;
}

/* bmap PATH LOGICAL: the physical block of a logical block (0: hole) */
int cmd_bmap(struct shell *sh, int argc, char **argv)
{
	struct extent_print p = { sh->out, 0, 0 };
	tux3_ino_t ino;
	if (argc != 3)
		return sh_err(sh, "usage: bmap PATH|<inum> LOGICAL");
	if (sh_resolve(sh, argv[1], &ino))
		return 1;
	if (parse_number(argv[2], &p.want) || p.want == UINT64_MAX)
		return sh_err(sh, "bmap: bad logical block '%s'", argv[2]);
	int err = tux3_map_extents(sh->vol, ino, extent_line, &p);
	if (err < 0)
		return sh_volerr(sh, argv[1], err);
	if (!p.found)
		fprintf(sh->out, "0\n");	/* beyond the last extent */
	return 0;
}

/* ---- find ---- */

struct find {
	struct shell *sh;
	struct ancestry up;
	const char *name;	/* -name GLOB */
	int type;		/* -type: a TUX3_DT_*, or -1 */
	uint64_t inum;		/* -inum, 0: any */
	int failed;
};

static void find_visit(struct find *f, const char *path, const char *base,
		       tux3_ino_t ino, unsigned type)
{
	struct shell *sh = f->sh;
	if ((!f->name || !fnmatch(f->name, base, 0)) &&
	    (f->type < 0 || (unsigned)f->type == type) &&
	    (!f->inum || f->inum == ino))
		fprintf(sh->out, "%s\n", path);
	if (type != TUX3_DT_DIR)
		return;
	if (ancestry_push(&f->up, ino)) {
		sh_err(sh, "%s: directory inode %" PRIu64 " is its own "
		       "ancestor, or nesting is too deep: not descending", path,
		       ino);
		f->failed = 1;
		return;
	}
	struct dir_batch *batch = malloc(sizeof(*batch));
	if (!batch) {
		f->failed = sh_err(sh, "out of memory");
		f->up.depth--;
		return;
	}
	dir_batch_init(batch, ino);
	size_t plen = strlen(path);
	struct dir_entry_ref e;
	int r;
	while ((r = dir_batch_next(sh->vol, batch, &e)) > 0) {
		char *sub = malloc(plen + strlen(e.name) + 2);
		if (!sub) {
			f->failed = sh_err(sh, "out of memory");
			break;
		}
		sprintf(sub, "%s%s%s", path,
			plen && path[plen - 1] == '/' ? "" : "/", e.name);
		find_visit(f, sub, e.name, e.ino, e.type);
		free(sub);
	}
	if (r < 0)
		f->failed = dir_batch_report(sh, batch, path, r);
	dir_batch_free(batch);
	free(batch);
	f->up.depth--;
}

int cmd_find(struct shell *sh, int argc, char **argv)
{
	static const char usage[] = "usage: find [PATH] [-name GLOB] "
		"[-type f|d|l|p|c|b|s] [-inum N]";
	static struct find f;
	const char *path = NULL;
	memset(&f, 0, sizeof(f));
	f.sh = sh;
	f.type = -1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-name") && i + 1 < argc) {
			f.name = argv[++i];
		} else if (!strcmp(argv[i], "-type") && i + 1 < argc) {
			static const char types[] = "?fdcbpsl";
			const char *t = strchr(types + 1, argv[++i][0]);
			if (!t || !argv[i][0] || argv[i][1])
				return sh_err(sh, "find: bad type '%s' (one of "
					      "f d l p c b s)", argv[i]);
			f.type = (int)(t - types);
		} else if (!strcmp(argv[i], "-inum") && i + 1 < argc) {
			if (parse_number(argv[++i], &f.inum) || !f.inum)
				return sh_err(sh, "find: bad inode number "
					      "'%s'", argv[i]);
		} else if (argv[i][0] != '-' && !path) {
			path = argv[i];
		} else {
			return sh_err(sh, "%s", usage);
		}
	}
	if (!path)
		path = sh->cwdpath;
	tux3_ino_t ino;
	struct tux3_stat st;
	if (sh_resolve(sh, path, &ino))
		return 1;
	int err = tux3_stat(sh->vol, ino, &st);
	if (err)
		return sh_volerr(sh, path, err);
	static const unsigned dt[16] = {
		[S_IFREG >> 12] = TUX3_DT_REG, [S_IFDIR >> 12] = TUX3_DT_DIR,
		[S_IFCHR >> 12] = TUX3_DT_CHR, [S_IFBLK >> 12] = TUX3_DT_BLK,
		[S_IFIFO >> 12] = TUX3_DT_FIFO, [S_IFSOCK >> 12] = TUX3_DT_SOCK,
		[S_IFLNK >> 12] = TUX3_DT_LNK,
	};
	const char *base = strrchr(path, '/');
	base = base && base[1] ? base + 1 : path;
	find_visit(&f, path, base, ino, dt[(st.mode >> 12) & 15]);
	return f.failed;
}

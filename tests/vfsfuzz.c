/*
 * vfsfuzz: a differential fuzz test of versioned file operations at the
 * filesystem level (issue 8: every snapshot readable, writable, isolated).
 *
 *   vfsfuzz IMAGE [--ops N] [--seed S] [--files F] [--verify-every K]
 *                 [--blockbits B] [--max-blocks M] [--size MIB]
 *                 [--snapshots C] [--no-fsck] [-v]
 *
 * Makes a fresh volume in IMAGE (created or truncated to --size MiB,
 * default 256), opens it read-write and runs N random operations (default
 * 10000) against the library and against an in-memory model that keeps,
 * for the live filesystem and for every snapshot by name, a namespace
 * (the root and up to three directories d1..d3 in it) of up to F names
 * (default 24) for regular files and symlinks: each file's bytes (up to M
 * blocks, default 32, written at random and sparse offsets so that holes
 * happen), mode, owner, link count and up to three xattrs.
 *
 * Operations, in a random version each: write, truncate (tux3_truncate or
 * tux3_setattr SIZE), create, symlink, link, unlink, rename (within and
 * across directories, plain, NOREPLACE, EXCHANGE, replacing), mkdir, rmdir and
 * renaming a directory, setxattr (plain, CREATE, REPLACE), removexattr,
 * chmod/chown (tux3_setattr), reads, snapshot create (of the live
 * filesystem or of a snapshot, at most C at a time, default 12), delete
 * (one, or now and then all of them), rollback of the live filesystem to
 * a snapshot (the model's live version becomes a copy of it),
 * calls that must fail (existing names, absent names and snapshots),
 * tux3_sync, tux3_unify and close/reopen (replay; sometimes a read-only
 * open that verifies everything first).
 *
 * After every operation the touched files and directories are checked in
 * the version written and the same inode in one other version; every K
 * operations (default 200), after every reopen and at the end every
 * version is checked completely: each directory's listing (tux3_readdir),
 * lookups, each file's stat, bytes and xattrs; and tux3_snapshot_diff of
 * three pairs of versions against the two models (the diff oracle: every
 * inode it reports differs in the models as it says, and every inode
 * that differs there is reported).  An unexpected result from
 * the library is a failure: the op number, seed, op, version and error are
 * printed, exit 1.  At the end the volume is committed, closed and checked
 * by tux3_fsck_run (read-only) unless --no-fsck: exit 3 if it found
 * problems.  -v prints every operation (to reduce a failing seed: run with
 * --ops N --verify-every 1).  ENOSPC from the per-inode cap of versioned
 * attributes is allowed and must leave everything as it was (counted in
 * the summary).  Exit 2: bad usage or setup.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "tux3.h"
#include "tux3_fsck.h"

#define MAXV	32		/* live + snapshots */
#define NDIR	4		/* 0: root, 1..3: d1..d3 in the root */
#define MAXF	64		/* names (and inodes) per version */
#define NPOOL	12		/* file names per directory */
#define NXA	3		/* xattr names */
#define XMAX	48		/* bytes of an xattr value */

static const char *xnames[NXA] = { "user.a", "user.colour", "trusted.t" };

struct obj {
	bool used, symlink;	/* symlink: data is the target and a NUL */
	tux3_ino_t ino;
	uint32_t mode, uid, gid, nlink;
	uint64_t size;
	uint8_t *data;		/* maxsize bytes, zero beyond size */
	bool xset[NXA];
	uint8_t xlen[NXA];
	uint8_t xval[NXA][XMAX];
};

struct dent {
	bool used;
	unsigned dir, name, obj;	/* name: index in the pool */
};

struct mdir {
	bool exists;
	tux3_ino_t ino;
	uint32_t mode;
};

struct ver {
	bool used;
	char name[40];		/* "" for the live filesystem */
	struct mdir dir[NDIR];
	struct obj obj[MAXF];
	struct dent dent[MAXF];
	unsigned ndent;
};

/* ---- options and global state ---- */

static const char *image;
static uint64_t nops = 10000, seed = 1, verify_every = 200;
static unsigned nfiles = 24, blockbits = 12, maxblocks = 32, maxsnaps = 12;
static uint64_t size_mib = 256;
static bool verbose, do_fsck = true;
static size_t maxsize;		/* maxblocks << blockbits */

static struct tux3_volume *vol;
static struct ver ver[MAXV];
static unsigned snapcount;	/* snapshot names made so far */
static uint64_t opno;
static char opdesc[512];
static const char *opver = "";
static uint8_t *rbuf, *wbuf;

enum {
	OP_WRITE, OP_TRUNC, OP_CREATE, OP_SYMLINK, OP_LINK, OP_UNLINK,
	OP_RENAME, OP_MKDIR, OP_RMDIR, OP_RENAMEDIR, OP_SETX, OP_RMX,
	OP_SETATTR, OP_READ, OP_SNAP, OP_SNAPDEL, OP_SNAPCLEAR, OP_BAD,
	OP_SYNC, OP_UNIFY, OP_REOPEN, OP_ROLLBACK, OP_COUNT
};
static const char *opname[OP_COUNT] = {
	"write", "truncate", "create", "symlink", "link", "unlink", "rename",
	"mkdir", "rmdir", "renamedir", "setxattr", "removexattr", "setattr",
	"read", "snapshot", "snapdelete", "snapdeleteall", "mustfail", "sync",
	"unify", "reopen", "rollback",
};
/* weights in thousandths */
static const unsigned weight[OP_COUNT] = {
	[OP_WRITE] = 280, [OP_TRUNC] = 60, [OP_CREATE] = 70, [OP_SYMLINK] = 10,
	[OP_LINK] = 25,
	[OP_UNLINK] = 50, [OP_RENAME] = 60, [OP_MKDIR] = 8, [OP_RMDIR] = 8,
	[OP_RENAMEDIR] = 8, [OP_SETX] = 60, [OP_RMX] = 30, [OP_SETATTR] = 30,
	[OP_READ] = 100, [OP_SNAP] = 20, [OP_SNAPDEL] = 14,
	[OP_SNAPCLEAR] = 2, [OP_BAD] = 30,
	[OP_SYNC] = 20, [OP_UNIFY] = 4, [OP_REOPEN] = 3, [OP_ROLLBACK] = 5,
};
static uint64_t opcount[OP_COUNT], snaps_made, snaps_deleted, full_checks;
static uint64_t diffs_checked;	/* snapshot diff against the models */
static uint64_t nospace;	/* changes refused with ENOSPC */
static uint64_t rollbacks;	/* live version rolled back to a snapshot */

/* ---- random numbers (xorshift64*) ---- */

static uint64_t rng;
static uint64_t rnd64(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ull;
}
static unsigned rnd(unsigned n)
{
	return n ? (unsigned)(rnd64() % n) : 0;
}
static bool chance(unsigned percent)
{
	return rnd(100) < percent;
}

/* The checks' own choices, so that the operations depend on the seed
 * only, whatever --verify-every says. */
static uint64_t crng = 0x2545f4914f6cdd1dull;
static unsigned crnd(unsigned n)
{
	crng ^= crng << 13;
	crng ^= crng >> 7;
	crng ^= crng << 17;
	return n ? (unsigned)(crng % n) : 0;
}

/* ---- failures ---- */

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2),
						      noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;
	char why[600];
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	printf("vfsfuzz: FAIL at op %" PRIu64 " (seed %" PRIu64 "): %s "
	       "[version '%s']: %s\n", opno, seed, opdesc, opver, why);
	if (vol) {
		char buf[600];
		const struct tux3_error *e = tux3_last_error(vol);
		if (e->err)
			printf("vfsfuzz: library error: %s\n",
			       tux3_error_text(vol, buf, sizeof(buf)));
	}
	fflush(stdout);
	exit(1);
}

/* A call that must succeed. */
static long ok(long r, const char *what)
{
	if (r < 0)
		fail("%s: unexpected error %ld (%s)", what, r,
		     strerror((int)-r));
	return r;
}

/* A call that must return want (0 or a negative errno). */
static void expect(long r, long want, const char *what)
{
	if (r != want)
		fail("%s: returned %ld (%s), expected %ld (%s)", what, r,
		     r < 0 ? strerror((int)-r) : "ok", want,
		     want < 0 ? strerror((int)-want) : "ok");
}

static void describe(const char *fmt, ...) __attribute__((format(printf, 1,
								  2)));
static void describe(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(opdesc, sizeof(opdesc), fmt, ap);
	va_end(ap);
	if (verbose)
		printf("%" PRIu64 " [%s] %s\n", opno, opver, opdesc);
}

/*
 * ENOSPC: an inode whose blob holds its versions' attributes has a cap
 * (doc/format.md 17.3a; reached quickly at small block sizes): a change
 * that would not fit is refused whole.  The op then changes nothing in
 * the model and its checks verify that nothing changed.
 */
static bool refused(long r)
{
	if (r != -ENOSPC)
		return false;
	nospace++;
	if (verbose) {
		char buf[600];
		printf("%" PRIu64 " refused: %s\n", opno,
		       tux3_error_text(vol, buf, sizeof(buf)));
	}
	return true;
}

/* ---- names ---- */

static const char *fname(unsigned i, char *buf)
{
	/* every fourth name long, so that entries vary in size */
	if (i % 4 == 3)
		sprintf(buf, "file-with-a-rather-longer-name-number-%u", i);
	else
		sprintf(buf, "f%u", i);
	return buf;
}

static const char *dname(unsigned d)
{
	static const char *n[NDIR] = { "", "d1", "d2", "d3" };
	return n[d];
}

/* ---- model helpers ---- */

static void obj_free(struct obj *o)
{
	free(o->data);
	memset(o, 0, sizeof(*o));
}

static void ver_free(struct ver *v)
{
	for (unsigned i = 0; i < MAXF; i++)
		if (v->obj[i].used)
			obj_free(&v->obj[i]);
	memset(v, 0, sizeof(*v));
}

static void ver_copy(struct ver *to, const struct ver *from)
{
	*to = *from;
	for (unsigned i = 0; i < MAXF; i++)
		if (from->obj[i].used) {
			to->obj[i].data = malloc(maxsize);
			if (!to->obj[i].data) {
				perror("vfsfuzz");
				exit(2);
			}
			memcpy(to->obj[i].data, from->obj[i].data, maxsize);
		}
}

static int find_dent(const struct ver *v, unsigned dir, unsigned name)
{
	for (unsigned i = 0; i < MAXF; i++)
		if (v->dent[i].used && v->dent[i].dir == dir &&
		    v->dent[i].name == name)
			return (int)i;
	return -1;
}

static int find_ino(const struct ver *v, tux3_ino_t ino)
{
	for (unsigned i = 0; i < MAXF; i++)
		if (v->obj[i].used && v->obj[i].ino == ino)
			return (int)i;
	return -1;
}

static int free_slot_obj(const struct ver *v)
{
	for (unsigned i = 0; i < MAXF; i++)
		if (!v->obj[i].used)
			return (int)i;
	return -1;
}

static int free_slot_dent(const struct ver *v)
{
	for (unsigned i = 0; i < MAXF; i++)
		if (!v->dent[i].used)
			return (int)i;
	return -1;
}

/* A random used dentry, -1 if none. */
static int pick_dent(const struct ver *v)
{
	if (!v->ndent)
		return -1;
	unsigned k = rnd(v->ndent);
	for (unsigned i = 0; i < MAXF; i++)
		if (v->dent[i].used && !k--)
			return (int)i;
	return -1;
}

/* A random dentry of a regular file, -1 if none found. */
static int pick_file(const struct ver *v)
{
	for (unsigned tries = 0; tries < 4; tries++) {
		int di = pick_dent(v);
		if (di < 0 || !v->obj[v->dent[di].obj].symlink)
			return di;
	}
	return -1;
}

static unsigned pick_dir(const struct ver *v)
{
	unsigned d;
	do
		d = rnd(NDIR);
	while (!v->dir[d].exists);
	return d;
}

static unsigned dir_entries(const struct ver *v, unsigned d)
{
	unsigned n = 0;
	for (unsigned i = 0; i < MAXF; i++)
		n += v->dent[i].used && v->dent[i].dir == d;
	return n;
}

static unsigned nversions(void)
{
	unsigned n = 0;
	for (unsigned i = 0; i < MAXV; i++)
		n += ver[i].used;
	return n;
}

/* The live version 40% of the time, else a random snapshot. */
static unsigned pick_version(void)
{
	unsigned n = nversions();
	if (n == 1 || chance(40))
		return 0;
	unsigned k = rnd(n - 1);
	for (unsigned i = 1; i < MAXV; i++)
		if (ver[i].used && !k--)
			return i;
	return 0;
}

static void select_version(unsigned vi)
{
	opver = ver[vi].name;
	ok(tux3_version_select(vol, ver[vi].name), "tux3_version_select");
	const char *sel = tux3_version_selected(vol);
	if (strcmp(sel, ver[vi].name))
		fail("tux3_version_selected says '%s'", sel);
}

static void fill_random(uint8_t *p, size_t n)
{
	uint64_t x = rnd64() | 1;
	for (size_t i = 0; i < n; i++) {
		if (!(i & 7)) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		p[i] = (uint8_t)(x >> ((i & 7) * 8));
	}
}

/* ---- checks against the library ---- */

static void check_obj(unsigned vi, unsigned oi)
{
	const struct obj *o = &ver[vi].obj[oi];
	struct tux3_stat st;
	ok(tux3_stat(vol, o->ino, &st), "check: tux3_stat");
	if (st.mode != o->mode || st.uid != o->uid || st.gid != o->gid ||
	    st.nlink != o->nlink || st.size != o->size)
		fail("check inode %" PRIu64 " in '%s': mode %o uid %u gid %u "
		     "nlink %u size %" PRIu64 ", expected mode %o uid %u "
		     "gid %u nlink %u size %" PRIu64, o->ino, ver[vi].name,
		     st.mode, st.uid, st.gid, st.nlink, st.size, o->mode,
		     o->uid, o->gid, o->nlink, o->size);
	ssize_t n = tux3_read(vol, o->ino, rbuf, maxsize + 4096, 0);
	if (n != (ssize_t)o->size)
		fail("check inode %" PRIu64 " in '%s': read %zd bytes, "
		     "expected %" PRIu64, o->ino, ver[vi].name, n, o->size);
	if (o->symlink) {
		char link[1024];
		ssize_t l = tux3_readlink(vol, o->ino, link, sizeof(link));
		if (l != (ssize_t)o->size - 1 ||
		    memcmp(link, o->data, o->size))
			fail("check symlink %" PRIu64 " in '%s': readlink %zd",
			     o->ino, ver[vi].name, l);
	}
	if (memcmp(rbuf, o->data, o->size)) {
		size_t at = 0;
		while (rbuf[at] == o->data[at])
			at++;
		fail("check inode %" PRIu64 " in '%s': content differs at "
		     "byte %zu (block %zu): 0x%02x, expected 0x%02x", o->ino,
		     ver[vi].name, at, at >> blockbits, rbuf[at],
		     o->data[at]);
	}
	/* xattrs: getxattr each, then the listing */
	unsigned nset = 0;
	for (unsigned x = 0; x < NXA; x++) {
		uint8_t val[XMAX + 16];
		ssize_t r = tux3_getxattr(vol, o->ino, xnames[x], val,
					  sizeof(val));
		if (!o->xset[x]) {
			if (r != -ENODATA)
				fail("check inode %" PRIu64 " in '%s': xattr "
				     "%s: %zd, expected ENODATA", o->ino,
				     ver[vi].name, xnames[x], r);
			continue;
		}
		nset++;
		if (r != o->xlen[x] || memcmp(val, o->xval[x], o->xlen[x]))
			fail("check inode %" PRIu64 " in '%s': xattr %s: %zd "
			     "bytes, expected %u%s", o->ino, ver[vi].name,
			     xnames[x], r, o->xlen[x], r == o->xlen[x] ?
			     " (value differs)" : "");
	}
	if (st.xattr_count != nset)
		fail("check inode %" PRIu64 " in '%s': stat xattr_count %u, "
		     "expected %u", o->ino, ver[vi].name, st.xattr_count,
		     nset);
}

struct list_ctx {
	unsigned vi, x;
	const struct obj *o;
	unsigned seen;
};

static int list_one(void *ctx, const char *name, const void *value,
		    unsigned size)
{
	struct list_ctx *l = ctx;
	for (unsigned x = 0; x < NXA; x++)
		if (!strcmp(name, xnames[x])) {
			if (!l->o->xset[x] || size != l->o->xlen[x] ||
			    memcmp(value, l->o->xval[x], size))
				fail("listxattr of inode %" PRIu64 " in '%s':"
				     " %s (%u bytes) not as expected",
				     l->o->ino, ver[l->vi].name, name, size);
			if (l->seen & (1u << x))
				fail("listxattr of inode %" PRIu64 " in '%s':"
				     " %s twice", l->o->ino, ver[l->vi].name,
				     name);
			l->seen |= 1u << x;
			return 0;
		}
	fail("listxattr of inode %" PRIu64 " in '%s': unknown name %s",
	     l->o->ino, ver[l->vi].name, name);
}

static void check_xattr_list(unsigned vi, unsigned oi)
{
	struct list_ctx l = { .vi = vi, .o = &ver[vi].obj[oi] };
	ok(tux3_listxattr(vol, l.o->ino, list_one, &l), "tux3_listxattr");
	for (unsigned x = 0; x < NXA; x++)
		if (l.o->xset[x] && !(l.seen & (1u << x)))
			fail("listxattr of inode %" PRIu64 " in '%s': %s "
			     "missing", l.o->ino, ver[vi].name, xnames[x]);
}

struct rd_ctx {
	unsigned vi, d, n;
	char name[MAXF + NDIR][64];
	tux3_ino_t ino[MAXF + NDIR];
	unsigned type[MAXF + NDIR];
};

static int rd_one(void *ctx, const char *name, unsigned len, tux3_ino_t ino,
		  unsigned type, uint64_t pos)
{
	struct rd_ctx *r = ctx;
	(void)pos;
	if ((len == 1 && name[0] == '.') ||
	    (len == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	if (r->n == MAXF + NDIR || len >= 64)
		fail("readdir of %s in '%s': too many or too long entries",
		     r->d ? dname(r->d) : "/", ver[r->vi].name);
	memcpy(r->name[r->n], name, len);
	r->name[r->n][len] = 0;
	r->ino[r->n] = ino;
	r->type[r->n] = type;
	r->n++;
	return 0;
}

/* The listing of directory d in version vi, entry by entry, and a lookup
 * of every name (and of a name that is not there). */
static void check_dir(unsigned vi, unsigned d)
{
	const struct ver *v = &ver[vi];
	static struct rd_ctx r;
	char buf[64];
	r.vi = vi;
	r.d = d;
	r.n = 0;
	tux3_ino_t dino = v->dir[d].ino;
	ok(tux3_readdir(vol, dino, rd_one, &r), "check: tux3_readdir");
	unsigned want = 0;
	bool matched[MAXF + NDIR] = { false };
	for (unsigned i = 0; i < MAXF + (d == 0 ? NDIR : 0); i++) {
		const char *name;
		tux3_ino_t ino;
		unsigned type;
		if (i < MAXF) {
			if (!v->dent[i].used || v->dent[i].dir != d)
				continue;
			name = fname(v->dent[i].name, buf);
			ino = v->obj[v->dent[i].obj].ino;
			type = v->obj[v->dent[i].obj].symlink ? TUX3_DT_LNK :
				TUX3_DT_REG;
		} else {
			unsigned sd = i - MAXF;
			if (sd == 0 || !v->dir[sd].exists)
				continue;
			name = dname(sd);
			ino = v->dir[sd].ino;
			type = TUX3_DT_DIR;
		}
		want++;
		unsigned j;
		for (j = 0; j < r.n; j++)
			if (!strcmp(r.name[j], name))
				break;
		if (j == r.n)
			fail("readdir of %s in '%s': %s missing (%u entries)",
			     d ? dname(d) : "/", v->name, name, r.n);
		if (matched[j])
			fail("readdir of %s in '%s': %s twice",
			     d ? dname(d) : "/", v->name, name);
		matched[j] = true;
		if (r.ino[j] != ino || r.type[j] != type)
			fail("readdir of %s in '%s': %s is inode %" PRIu64
			     " type %u, expected %" PRIu64 " type %u",
			     d ? dname(d) : "/", v->name, name, r.ino[j],
			     r.type[j], ino, type);
		tux3_ino_t got;
		ok(tux3_lookup(vol, dino, name, strlen(name), &got),
		   "check: tux3_lookup");
		if (got != ino)
			fail("lookup of %s/%s in '%s': inode %" PRIu64
			     ", expected %" PRIu64, d ? dname(d) : "",
			     name, v->name, got, ino);
	}
	for (unsigned j = 0; j < r.n; j++)
		if (!matched[j])
			fail("readdir of %s in '%s': unexpected entry %s "
			     "(inode %" PRIu64 ")", d ? dname(d) : "/",
			     v->name, r.name[j], r.ino[j]);
	if (r.n != want)
		fail("readdir of %s in '%s': %u entries, expected %u",
		     d ? dname(d) : "/", v->name, r.n, want);
	/* a name that is not there */
	unsigned k = crnd(NPOOL);
	if (find_dent(v, d, k) < 0) {
		tux3_ino_t got;
		fname(k, buf);
		expect(tux3_lookup(vol, dino, buf, strlen(buf), &got),
		       -ENOENT, "lookup of an absent name");
	}
	/* the directory itself */
	struct tux3_stat st;
	unsigned subdirs = 0;
	if (!d)
		for (unsigned s = 1; s < NDIR; s++)
			subdirs += v->dir[s].exists;
	ok(tux3_stat(vol, dino, &st), "check: tux3_stat of a directory");
	if (st.mode != v->dir[d].mode || st.nlink != 2 + subdirs)
		fail("directory %s in '%s': mode %o nlink %u, expected mode "
		     "%o nlink %u", d ? dname(d) : "/", v->name, st.mode,
		     st.nlink, v->dir[d].mode, 2 + subdirs);
}

/* Everything in version vi. */
static void check_version(unsigned vi)
{
	const struct ver *v = &ver[vi];
	select_version(vi);
	for (unsigned d = 0; d < NDIR; d++) {
		char path[80];
		tux3_ino_t ino;
		snprintf(path, sizeof(path), "/%s", dname(d));
		int r = tux3_lookup_path(vol, path, &ino);
		if (!v->dir[d].exists) {
			expect(r, -ENOENT, "lookup_path of an absent dir");
			continue;
		}
		ok(r, "tux3_lookup_path of a directory");
		if (ino != v->dir[d].ino)
			fail("lookup_path %s: inode %" PRIu64 ", expected %"
			     PRIu64, path, ino, v->dir[d].ino);
		check_dir(vi, d);
	}
	for (unsigned i = 0; i < MAXF; i++)
		if (v->obj[i].used) {
			check_obj(vi, i);
			check_xattr_list(vi, i);
		}
	/* every path resolves */
	for (unsigned i = 0; i < MAXF; i++) {
		if (!v->dent[i].used)
			continue;
		char path[128], buf[64];
		tux3_ino_t ino;
		snprintf(path, sizeof(path), "%s%s/%s", v->dent[i].dir ? "/" :
			 "", dname(v->dent[i].dir), fname(v->dent[i].name, buf));
		ok(tux3_lookup_path(vol, path, &ino), "tux3_lookup_path");
		if (ino != v->obj[v->dent[i].obj].ino)
			fail("lookup_path %s: inode %" PRIu64 ", expected %"
			     PRIu64, path, ino, v->obj[v->dent[i].obj].ino);
	}
}

/* ---- the diff oracle: tux3_snapshot_diff against the two models ---- */

struct diffseen {
	unsigned n;
	tux3_ino_t ino[4 * MAXF];
	unsigned what[4 * MAXF];
};

static int diff_one(void *ctx, const struct tux3_diff_inode *d)
{
	struct diffseen *s = ctx;
	if (s->n == 4 * MAXF)
		fail("snapshot diff: more inodes differ than the models have");
	s->ino[s->n] = d->ino;
	s->what[s->n++] = d->what;
	return 0;
}

/* The model's object with inode ino in version v, or -1. */
static int model_obj(const struct ver *v, tux3_ino_t ino)
{
	for (unsigned i = 0; i < MAXF; i++)
		if (v->obj[i].used && v->obj[i].ino == ino)
			return (int)i;
	return -1;
}

static int model_dir(const struct ver *v, tux3_ino_t ino)
{
	for (unsigned d = 0; d < NDIR; d++)
		if (v->dir[d].exists && v->dir[d].ino == ino)
			return (int)d;
	return -1;
}

/* Does version v name ino as name in the directory of inode dino?  (A
 * name is its directory's inode and the name: renaming a directory
 * leaves the names in it as they are.) */
static bool has_name(const struct ver *v, tux3_ino_t dino, unsigned name,
		     tux3_ino_t ino)
{
	for (unsigned i = 0; i < MAXF; i++)
		if (v->dent[i].used && v->dir[v->dent[i].dir].ino == dino &&
		    v->dent[i].name == name && v->obj[v->dent[i].obj].ino == ino)
			return true;
	return false;
}

/* A name of ino in a that b lacks (files: dent; directories: the slot). */
static bool lost_name(const struct ver *a, const struct ver *b,
		      tux3_ino_t ino)
{
	for (unsigned i = 0; i < MAXF; i++) {
		const struct dent *e = &a->dent[i];
		if (e->used && a->obj[e->obj].ino == ino &&
		    !has_name(b, a->dir[e->dir].ino, e->name, ino))
			return true;
	}
	int d = model_dir(a, ino);
	return d > 0 && !(b->dir[d].exists && b->dir[d].ino == ino);
}

/* What differs about directory d's entries (names to inodes). */
static bool entries_differ(const struct ver *a, const struct ver *b,
			   unsigned da, unsigned db)
{
	for (unsigned pass = 0; pass < 2; pass++) {
		const struct ver *x = pass ? b : a, *y = pass ? a : b;
		unsigned dx = pass ? db : da, dy = pass ? da : db;
		for (unsigned i = 0; i < MAXF; i++) {
			const struct dent *e = &x->dent[i];
			if (e->used && e->dir == dx &&
			    !has_name(y, y->dir[dy].ino, e->name,
				      x->obj[e->obj].ino))
				return true;
		}
		if (dx == 0)
			for (unsigned sd = 1; sd < NDIR; sd++)
				if (x->dir[sd].exists &&
				    !(y->dir[sd].exists &&
				      y->dir[sd].ino == x->dir[sd].ino))
					return true;
	}
	return false;
}

static bool xattrs_differ(const struct obj *x, const struct obj *y)
{
	for (unsigned k = 0; k < NXA; k++)
		if (x->xset[k] != y->xset[k] ||
		    (x->xset[k] && (x->xlen[k] != y->xlen[k] ||
				    memcmp(x->xval[k], y->xval[k], x->xlen[k]))))
			return true;
	return false;
}

/* What the models say differs about ino, and (*data) whether its bytes
 * do; *mask: what the models can say. */
static unsigned model_diff(const struct ver *a, const struct ver *b,
			   tux3_ino_t ino, unsigned *mask, bool *data)
{
	int oa = model_obj(a, ino), ob = model_obj(b, ino);
	int da = model_dir(a, ino), db = model_dir(b, ino);
	bool ina = oa >= 0 || da >= 0, inb = ob >= 0 || db >= 0;
	unsigned what = 0;
	*data = false;
	*mask = TUX3_DIFF_CREATED | TUX3_DIFF_DELETED | TUX3_DIFF_RENAMED |
		TUX3_DIFF_MODE | TUX3_DIFF_ENTRIES;
	if (!ina || !inb) {
		/* (a directory's entries are listed too: not modelled) */
		*mask = TUX3_DIFF_CREATED | TUX3_DIFF_DELETED;
		return ina ? TUX3_DIFF_DELETED : inb ? TUX3_DIFF_CREATED : 0;
	}
	if (lost_name(a, b, ino) && lost_name(b, a, ino))
		what |= TUX3_DIFF_RENAMED;
	if (da >= 0) {
		if (db < 0 || a->dir[da].mode != b->dir[db].mode)
			what |= TUX3_DIFF_MODE;
		if (db >= 0 && entries_differ(a, b, (unsigned)da, (unsigned)db))
			what |= TUX3_DIFF_ENTRIES;
		return what;
	}
	const struct obj *x = &a->obj[oa], *y = &b->obj[ob];
	*mask |= TUX3_DIFF_OWNER | TUX3_DIFF_SIZE | TUX3_DIFF_NLINK |
		 TUX3_DIFF_XATTR;
	what |= (x->mode != y->mode ? TUX3_DIFF_MODE : 0) |
		(x->uid != y->uid || x->gid != y->gid ? TUX3_DIFF_OWNER : 0) |
		(x->size != y->size ? TUX3_DIFF_SIZE : 0) |
		(x->nlink != y->nlink ? TUX3_DIFF_NLINK : 0) |
		(xattrs_differ(x, y) ? TUX3_DIFF_XATTR : 0);
	uint64_t common = x->size < y->size ? x->size : y->size;
	*data = !x->symlink && memcmp(x->data, y->data, common);
	return what;
}

static void check_diff_names(unsigned vi, unsigned vj)
{
	const struct ver *a = &ver[vi], *b = &ver[vj];
	static struct diffseen s;
	s.n = 0;
	int r = tux3_snapshot_diff(vol, a->name, b->name, NULL,
				   TUX3_DIFF_NO_NAMES, diff_one, &s, NULL);
	if (r)
		fail("tux3_snapshot_diff '%s' '%s': %d", a->name, b->name, r);
	/* every inode the library reports, against the models */
	for (unsigned i = 0; i < s.n; i++) {
		unsigned mask;
		bool data;
		unsigned want = model_diff(a, b, s.ino[i], &mask, &data);
		if (model_obj(a, s.ino[i]) < 0 && model_dir(a, s.ino[i]) < 0 &&
		    model_obj(b, s.ino[i]) < 0 && model_dir(b, s.ino[i]) < 0)
			fail("snapshot diff '%s' '%s': inode %" PRIu64 " is "
			     "in neither model", a->name, b->name, s.ino[i]);
		if ((s.what[i] & mask) != want ||
		    (data && !(s.what[i] & TUX3_DIFF_DATA)))
			fail("snapshot diff '%s' '%s': inode %" PRIu64 ": what "
			     "%#x, the models say %#x (of %#x)%s", a->name,
			     b->name, s.ino[i], s.what[i], want, mask,
			     data ? ", data" : "");
	}
	/* every inode the models see differ is reported */
	for (unsigned side = 0; side < 2; side++) {
		const struct ver *v = side ? b : a;
		for (unsigned k = 0; k < MAXF + NDIR; k++) {
			tux3_ino_t ino = k < MAXF ? (v->obj[k].used ?
				v->obj[k].ino : 0) : (v->dir[k - MAXF].exists ?
				v->dir[k - MAXF].ino : 0);
			unsigned mask, seen = 0;
			bool data;
			if (!ino || (!model_diff(a, b, ino, &mask, &data) &&
				     !data))
				continue;
			for (unsigned i = 0; i < s.n; i++)
				seen |= s.ino[i] == ino;
			if (!seen)
				fail("snapshot diff '%s' '%s': inode %" PRIu64
				     " differs in the models, not reported",
				     a->name, b->name, ino);
		}
	}
}

/* A few pairs per full check, the live version and snapshots in turn
 * (chosen without the workload's random numbers). */
static void check_diffs(void)
{
	unsigned used[MAXV], n = 0;
	for (unsigned vi = 0; vi < MAXV; vi++)
		if (ver[vi].used)
			used[n++] = vi;
	for (unsigned k = 0; k < 3 && n > 1; k++) {
		unsigned i = (unsigned)((full_checks + k) % n);
		unsigned j = (unsigned)((full_checks * 7 + k * 3 + 1) % n);
		check_diff_names(used[i], used[j == i ? (j + 1) % n : j]);
		diffs_checked++;
	}
}

static void check_all(const char *why)
{
	full_checks++;
	if (verbose)
		printf("%" PRIu64 " check every version (%s)\n", opno, why);
	for (unsigned vi = 0; vi < MAXV; vi++)
		if (ver[vi].used)
			check_version(vi);
	check_diffs();
	/* the snapshot names the library knows are the model's */
	struct tux3_version_info *list;
	unsigned count, named = 0;
	ok(tux3_version_list(vol, &list, &count), "tux3_version_list");
	for (unsigned i = 0; i < count; i++) {
		if (list[i].label == 0 || list[i].ghost || list[i].dying)
			continue;
		named++;
		unsigned vi;
		for (vi = 1; vi < MAXV; vi++)
			if (ver[vi].used && !strcmp(ver[vi].name, list[i].name))
				break;
		if (vi == MAXV)
			fail("tux3_version_list: unexpected snapshot '%s'",
			     list[i].name);
	}
	free(list);
	if (named != nversions() - 1)
		fail("tux3_version_list: %u snapshots, expected %u", named,
		     nversions() - 1);
}

/* The same inode in one other version, if it has it (isolation), and a
 * directory there. */
static void check_other(unsigned vi, tux3_ino_t ino)
{
	unsigned n = nversions();
	if (n < 2)
		return;
	unsigned k = crnd(n - 1), wi, d;
	for (wi = 0; wi < MAXV; wi++)
		if (ver[wi].used && wi != vi && !k--)
			break;
	int oi = find_ino(&ver[wi], ino);
	select_version(wi);
	if (oi >= 0)
		check_obj(wi, (unsigned)oi);
	do
		d = crnd(NDIR);
	while (!ver[wi].dir[d].exists);
	check_dir(wi, d);
	select_version(vi);
}

/* ---- the volume ---- */

static void open_volume(enum tux3_open_mode mode)
{
	char msg[600];
	int err = tux3_open_err(image, mode, &vol, msg, sizeof(msg));
	if (err) {
		vol = NULL;
		fail("tux3_open(%s): %d: %s", image, err, msg);
	}
}

static void make_volume(void)
{
	FILE *f = fopen(image, "w");
	if (!f || ftruncate(fileno(f), (off_t)(size_mib << 20))) {
		perror(image);
		exit(2);
	}
	fclose(f);
	struct tux3_mkfs_params p = {
		.blockbits = blockbits,
		.volblocks = (size_mib << 20) >> blockbits,
		.time_ns = 1,
		.compat = TUX3_FEATURE_COMPAT_DEFAULT,
		.root_mode = 0755,
	};
	char err[300];
	int r = tux3_mkfs(image, &p, err, sizeof(err));
	if (r) {
		fprintf(stderr, "vfsfuzz: mkfs %s: %s\n", image, err);
		exit(2);
	}
	open_volume(TUX3_OPEN_RDWR);
	ver[0].used = true;
	ver[0].dir[0] = (struct mdir){ true, TUX3_ROOT_INO, 040755 };
	snprintf(opdesc, sizeof(opdesc), "setup");
	for (unsigned d = 1; d <= 2; d++) {
		tux3_ino_t ino;
		ok(tux3_mkdir(vol, TUX3_ROOT_INO, dname(d), 2, 040755, 0, 0,
			      &ino), "setup: tux3_mkdir");
		ver[0].dir[d] = (struct mdir){ true, ino, 040755 };
	}
}

static void reopen(void)
{
	if (chance(50)) {
		describe("reopen: tux3_umount");
		ok(tux3_umount(vol), "tux3_umount");
	} else {
		describe("reopen: tux3_sync, tux3_close");
		ok(tux3_sync(vol), "tux3_sync");
		tux3_close(vol);
	}
	vol = NULL;
	if (chance(30)) {
		/* a read-only open sees the same */
		open_volume(TUX3_OPEN_RDONLY);
		check_all("read-only open");
		tux3_close(vol);
		vol = NULL;
	}
	open_volume(TUX3_OPEN_RDWR);
	check_all("reopen");
}

/* ---- operations ---- */

static void op_write(unsigned vi)
{
	struct ver *v = &ver[vi];
	int di = pick_file(v);
	if (di < 0)
		return;
	struct obj *o = &v->obj[v->dent[di].obj];
	uint64_t off;
	size_t len, bs = (size_t)1 << blockbits;
	switch (rnd(4)) {
	case 0:
		len = 1 + rnd(200);
		break;
	case 1:
		len = 1 + rnd((unsigned)bs);
		break;
	case 2:
		len = bs * (1 + rnd(4));
		break;
	default:
		len = 1 + rnd((unsigned)(bs * 4));
	}
	if (len > maxsize)
		len = maxsize;
	switch (rnd(5)) {
	case 0:		/* append */
		off = o->size;
		break;
	case 1:		/* inside */
		off = o->size ? rnd((unsigned)o->size) : 0;
		break;
	case 2:		/* block aligned anywhere (holes) */
		off = (uint64_t)rnd(maxblocks) << blockbits;
		break;
	default:	/* anywhere */
		off = rnd((unsigned)maxsize);
	}
	if (off + len > maxsize)
		off = maxsize - len;
	describe("write %zu bytes at %" PRIu64 " to inode %" PRIu64 " (size %"
		 PRIu64 ")", len, off, o->ino, o->size);
	fill_random(wbuf, len);
	ssize_t r = tux3_write(vol, o->ino, wbuf, len, off);
	if (!refused(r)) {
		if (r != (ssize_t)len)
			fail("tux3_write: returned %zd, expected %zu", r, len);
		memcpy(o->data + off, wbuf, len);
		if (off + len > o->size)
			o->size = off + len;
	}
	check_obj(vi, v->dent[di].obj);
	check_other(vi, o->ino);
}

static void op_trunc(unsigned vi)
{
	struct ver *v = &ver[vi];
	int di = pick_file(v);
	if (di < 0)
		return;
	struct obj *o = &v->obj[v->dent[di].obj];
	uint64_t size;
	switch (rnd(5)) {
	case 0:
		size = 0;
		break;
	case 1:
		size = o->size ? rnd((unsigned)o->size) : 0;
		break;
	case 2:
		size = (uint64_t)rnd(maxblocks + 1) << blockbits;
		break;
	default:
		size = rnd((unsigned)maxsize + 1);
	}
	bool sa = chance(30);
	describe("%s inode %" PRIu64 " from %" PRIu64 " to %" PRIu64,
		 sa ? "setattr SIZE" : "truncate", o->ino, o->size, size);
	struct tux3_setattr s = { .valid = TUX3_SET_SIZE, .size = size };
	int r = sa ? tux3_setattr(vol, o->ino, &s) :
		tux3_truncate(vol, o->ino, size);
	if (!refused(r)) {
		ok(r, sa ? "tux3_setattr SIZE" : "tux3_truncate");
		if (size < o->size)
			memset(o->data + size, 0, o->size - size);
		o->size = size;
	}
	check_obj(vi, v->dent[di].obj);
	check_other(vi, o->ino);
}

static void op_create(unsigned vi)
{
	struct ver *v = &ver[vi];
	unsigned d = pick_dir(v), k = rnd(NPOOL);
	char buf[64];
	fname(k, buf);
	int have = find_dent(v, d, k);
	tux3_ino_t ino;
	uint32_t mode = S_IFREG | rnd(010000);
	uint32_t uid = rnd(3) ? 0 : rnd(70000), gid = rnd(3) ? 0 : rnd(70000);
	describe("create %s/%s mode %o", dname(d), buf, mode);
	if (have >= 0) {
		expect(tux3_create(vol, v->dir[d].ino, buf, strlen(buf), mode,
				   uid, gid, &ino), -EEXIST,
		       "tux3_create of an existing name");
		return;
	}
	if (v->ndent >= nfiles)
		return;
	int r = tux3_create(vol, v->dir[d].ino, buf, strlen(buf), mode, uid,
			    gid, &ino);
	if (refused(r)) {
		check_dir(vi, d);
		return;
	}
	ok(r, "tux3_create");
	if (find_ino(v, ino) >= 0)
		fail("tux3_create: inode %" PRIu64 " is in use", ino);
	int oi = free_slot_obj(v), di = free_slot_dent(v);
	struct obj *o = &v->obj[oi];
	*o = (struct obj){ .used = true, .ino = ino, .mode = mode, .uid = uid,
			   .gid = gid, .nlink = 1, .data = calloc(1, maxsize) };
	if (!o->data) {
		perror("vfsfuzz");
		exit(2);
	}
	v->dent[di] = (struct dent){ true, d, k, (unsigned)oi };
	v->ndent++;
	describe("create %s/%s mode %o: inode %" PRIu64, dname(d), buf, mode,
		 ino);
	check_obj(vi, (unsigned)oi);
	check_dir(vi, d);
	check_other(vi, ino);
}

static void op_symlink(unsigned vi)
{
	struct ver *v = &ver[vi];
	unsigned d = pick_dir(v), k = rnd(NPOOL);
	char buf[64], target[600];
	fname(k, buf);
	unsigned len = 1 + rnd(chance(20) ? 599 : 40);
	if (len >= maxsize)
		len = (unsigned)maxsize - 1;
	for (unsigned i = 0; i < len; i++)
		target[i] = (char)('!' + rnd(94));
	target[len] = 0;
	uint32_t uid = rnd(3) ? 0 : rnd(70000), gid = rnd(3) ? 0 : rnd(70000);
	tux3_ino_t ino;
	bool have = find_dent(v, d, k) >= 0;
	if (!have && v->ndent >= nfiles)
		return;
	describe("symlink %s/%s (%u bytes)", dname(d), buf, len);
	int r = tux3_symlink(vol, v->dir[d].ino, buf, strlen(buf), target, uid,
			     gid, &ino);
	if (have) {
		expect(r, -EEXIST, "tux3_symlink of an existing name");
		return;
	}
	if (refused(r)) {
		check_dir(vi, d);
		return;
	}
	ok(r, "tux3_symlink");
	if (find_ino(v, ino) >= 0)
		fail("tux3_symlink: inode %" PRIu64 " is in use", ino);
	int oi = free_slot_obj(v), di = free_slot_dent(v);
	struct obj *o = &v->obj[oi];
	*o = (struct obj){ .used = true, .symlink = true, .ino = ino,
			   .mode = S_IFLNK | 0777, .uid = uid, .gid = gid,
			   .nlink = 1, .size = len + 1,
			   .data = calloc(1, maxsize) };
	if (!o->data) {
		perror("vfsfuzz");
		exit(2);
	}
	memcpy(o->data, target, len + 1);
	v->dent[di] = (struct dent){ true, d, k, (unsigned)oi };
	v->ndent++;
	check_obj(vi, (unsigned)oi);
	check_dir(vi, d);
	check_other(vi, ino);
}

static void drop_link(struct ver *v, unsigned oi)
{
	if (!--v->obj[oi].nlink)
		obj_free(&v->obj[oi]);
}

static void op_link(unsigned vi)
{
	struct ver *v = &ver[vi];
	int di = pick_dent(v);
	if (di < 0)
		return;
	unsigned oi = v->dent[di].obj, d = pick_dir(v), k = rnd(NPOOL);
	char buf[64];
	fname(k, buf);
	describe("link inode %" PRIu64 " as %s/%s", v->obj[oi].ino, dname(d),
		 buf);
	if (find_dent(v, d, k) >= 0) {
		expect(tux3_link(vol, v->obj[oi].ino, v->dir[d].ino, buf,
				 strlen(buf)), -EEXIST,
		       "tux3_link to an existing name");
		return;
	}
	if (v->ndent >= nfiles)
		return;
	int r = tux3_link(vol, v->obj[oi].ino, v->dir[d].ino, buf,
			  strlen(buf));
	if (!refused(r)) {
		ok(r, "tux3_link");
		int ni = free_slot_dent(v);
		v->dent[ni] = (struct dent){ true, d, k, oi };
		v->ndent++;
		v->obj[oi].nlink++;
	}
	check_obj(vi, oi);
	check_dir(vi, d);
	check_other(vi, v->obj[oi].ino);
}

static void op_unlink(unsigned vi)
{
	struct ver *v = &ver[vi];
	int di = pick_dent(v);
	if (di < 0)
		return;
	unsigned oi = v->dent[di].obj, d = v->dent[di].dir;
	tux3_ino_t ino = v->obj[oi].ino;
	char buf[64];
	fname(v->dent[di].name, buf);
	describe("unlink %s/%s (inode %" PRIu64 ", nlink %u)", dname(d), buf,
		 ino, v->obj[oi].nlink);
	int r = tux3_unlink(vol, v->dir[d].ino, buf, strlen(buf));
	if (!refused(r)) {
		ok(r, "tux3_unlink");
		v->dent[di].used = false;
		v->ndent--;
		drop_link(v, oi);
	}
	if (v->obj[oi].used) {
		check_obj(vi, oi);
	} else {
		struct tux3_stat st;
		expect(tux3_stat(vol, ino, &st), -ENOENT,
		       "tux3_stat of an unlinked inode");
	}
	check_dir(vi, d);
	check_other(vi, ino);
}

static void op_rename(unsigned vi)
{
	struct ver *v = &ver[vi];
	int si = pick_dent(v);
	if (si < 0)
		return;
	unsigned sd = v->dent[si].dir, td = pick_dir(v), tk = rnd(NPOOL);
	unsigned flags = rnd(4) == 0 ? TUX3_RENAME_NOREPLACE :
		rnd(3) == 0 ? TUX3_RENAME_EXCHANGE : 0;
	char sb[64], tb[64];
	fname(v->dent[si].name, sb);
	fname(tk, tb);
	int ti = find_dent(v, td, tk);
	describe("rename %s/%s to %s/%s%s%s", dname(sd), sb, dname(td), tb,
		 flags == TUX3_RENAME_NOREPLACE ? " NOREPLACE" :
		 flags == TUX3_RENAME_EXCHANGE ? " EXCHANGE" : "",
		 ti < 0 ? "" : " (target exists)");
	int r = tux3_rename(vol, v->dir[sd].ino, sb, strlen(sb),
			    v->dir[td].ino, tb, strlen(tb), flags);
	unsigned so = v->dent[si].obj;
	if (refused(r)) {
		if (ti >= 0)
			check_obj(vi, v->dent[ti].obj);
	} else if (ti >= 0 && v->dent[ti].obj == so) {
		/* the same inode (the same name, or another link to it) */
		expect(r, 0, "tux3_rename to a link of the same inode");
	} else if (ti >= 0 && flags == TUX3_RENAME_NOREPLACE) {
		expect(r, -EEXIST, "tux3_rename NOREPLACE onto a name");
	} else if (ti < 0 && flags == TUX3_RENAME_EXCHANGE) {
		expect(r, -ENOENT, "tux3_rename EXCHANGE with no target");
	} else if (flags == TUX3_RENAME_EXCHANGE) {
		ok(r, "tux3_rename EXCHANGE");
		unsigned to = v->dent[ti].obj;
		v->dent[ti].obj = so;
		v->dent[si].obj = to;
		check_obj(vi, to);
	} else if (ti >= 0) {
		ok(r, "tux3_rename onto a name");
		unsigned to = v->dent[ti].obj;
		tux3_ino_t tino = v->obj[to].ino;
		v->dent[ti].obj = so;
		v->dent[si].used = false;
		v->ndent--;
		drop_link(v, to);
		if (v->obj[to].used) {
			check_obj(vi, to);
		} else {
			struct tux3_stat st;
			expect(tux3_stat(vol, tino, &st), -ENOENT,
			       "tux3_stat of a replaced inode");
		}
	} else {
		ok(r, "tux3_rename");
		v->dent[si].dir = td;
		v->dent[si].name = tk;
	}
	check_obj(vi, so);
	check_dir(vi, sd);
	if (td != sd)
		check_dir(vi, td);
	check_other(vi, v->obj[so].ino);
}

static void op_mkdir(unsigned vi)
{
	struct ver *v = &ver[vi];
	unsigned d = 1 + rnd(NDIR - 1);
	uint32_t mode = S_IFDIR | (0700 | rnd(01000));
	tux3_ino_t ino;
	describe("mkdir %s mode %o", dname(d), mode);
	int r = tux3_mkdir(vol, TUX3_ROOT_INO, dname(d), 2, mode, 0, 0, &ino);
	if (v->dir[d].exists) {
		expect(r, -EEXIST, "tux3_mkdir of an existing name");
		return;
	}
	if (refused(r)) {
		check_dir(vi, 0);
		return;
	}
	ok(r, "tux3_mkdir");
	v->dir[d] = (struct mdir){ true, ino, mode };
	check_dir(vi, d);
	check_dir(vi, 0);
	check_other(vi, ino);
}

static void op_rmdir(unsigned vi)
{
	struct ver *v = &ver[vi];
	unsigned d = 1 + rnd(NDIR - 1);
	describe("rmdir %s (%u entries)", dname(d), dir_entries(v, d));
	int r = tux3_rmdir(vol, TUX3_ROOT_INO, dname(d), 2);
	if (!v->dir[d].exists) {
		expect(r, -ENOENT, "tux3_rmdir of an absent name");
		return;
	}
	if (dir_entries(v, d)) {
		expect(r, -ENOTEMPTY, "tux3_rmdir of a non-empty directory");
		return;
	}
	if (refused(r)) {
		check_dir(vi, 0);
		check_dir(vi, d);
		return;
	}
	ok(r, "tux3_rmdir");
	tux3_ino_t ino = v->dir[d].ino;
	v->dir[d].exists = false;
	check_dir(vi, 0);
	struct tux3_stat st;
	expect(tux3_stat(vol, ino, &st), -ENOENT, "tux3_stat of a removed dir");
	check_other(vi, ino);
}

static void op_renamedir(unsigned vi)
{
	struct ver *v = &ver[vi];
	unsigned s = 1 + rnd(NDIR - 1), t = 1 + rnd(NDIR - 1);
	if (!v->dir[s].exists || s == t)
		return;
	unsigned flags = chance(30) ? TUX3_RENAME_EXCHANGE : 0;
	describe("rename directory %s to %s%s%s", dname(s), dname(t),
		 flags ? " EXCHANGE" : "", v->dir[t].exists ? " (exists)" : "");
	int r = tux3_rename(vol, TUX3_ROOT_INO, dname(s), 2, TUX3_ROOT_INO,
			    dname(t), 2, flags);
	if (flags && !v->dir[t].exists) {
		expect(r, -ENOENT, "tux3_rename EXCHANGE with no target");
		return;
	}
	if (!flags && v->dir[t].exists && dir_entries(v, t)) {
		expect(r, -ENOTEMPTY, "tux3_rename onto a non-empty dir");
		return;
	}
	if (refused(r)) {
		check_dir(vi, 0);
		check_dir(vi, s);
		return;
	}
	ok(r, "tux3_rename of a directory");
	struct mdir sdir = v->dir[s], tdir = v->dir[t];
	for (unsigned i = 0; i < MAXF; i++) {
		if (!v->dent[i].used)
			continue;
		if (v->dent[i].dir == s)
			v->dent[i].dir = t;
		else if (v->dent[i].dir == t)
			v->dent[i].dir = s;
	}
	v->dir[t] = sdir;
	v->dir[s] = tdir;
	if (!flags)
		v->dir[s].exists = false;	/* replaced (empty) or absent */
	check_dir(vi, 0);
	check_dir(vi, t);
	if (v->dir[s].exists)
		check_dir(vi, s);
	check_other(vi, sdir.ino);
}

static void op_setx(unsigned vi)
{
	struct ver *v = &ver[vi];
	int di = pick_dent(v);
	if (di < 0)
		return;
	unsigned oi = v->dent[di].obj, x = rnd(NXA);
	struct obj *o = &v->obj[oi];
	int flags = rnd(4) == 0 ? TUX3_XATTR_CREATE :
		rnd(3) == 0 ? TUX3_XATTR_REPLACE : 0;
	uint8_t val[XMAX];
	unsigned len = rnd(XMAX + 1);
	fill_random(val, len);
	describe("setxattr %s (%u bytes%s) on inode %" PRIu64, xnames[x], len,
		 flags == TUX3_XATTR_CREATE ? ", CREATE" :
		 flags == TUX3_XATTR_REPLACE ? ", REPLACE" : "", o->ino);
	int r = tux3_setxattr(vol, o->ino, xnames[x], val, len, flags);
	if (flags == TUX3_XATTR_CREATE && o->xset[x]) {
		expect(r, -EEXIST, "tux3_setxattr CREATE of an existing name");
	} else if (flags == TUX3_XATTR_REPLACE && !o->xset[x]) {
		expect(r, -ENODATA, "tux3_setxattr REPLACE of an absent name");
	} else if (!refused(r)) {
		ok(r, "tux3_setxattr");
		o->xset[x] = true;
		o->xlen[x] = (uint8_t)len;
		memcpy(o->xval[x], val, len);
	}
	check_obj(vi, oi);
	check_xattr_list(vi, oi);
	check_other(vi, o->ino);
}

static void op_rmx(unsigned vi)
{
	struct ver *v = &ver[vi];
	int di = pick_dent(v);
	if (di < 0)
		return;
	unsigned oi = v->dent[di].obj, x = rnd(NXA);
	struct obj *o = &v->obj[oi];
	describe("removexattr %s on inode %" PRIu64 "%s", xnames[x], o->ino,
		 o->xset[x] ? "" : " (absent)");
	int r = tux3_removexattr(vol, o->ino, xnames[x]);
	if (!o->xset[x]) {
		expect(r, -ENODATA, "tux3_removexattr of an absent name");
	} else if (!refused(r)) {
		ok(r, "tux3_removexattr");
		o->xset[x] = false;
	}
	check_obj(vi, oi);
	check_xattr_list(vi, oi);
	check_other(vi, o->ino);
}

static void op_setattr(unsigned vi)
{
	struct ver *v = &ver[vi];
	struct tux3_setattr s = { 0 };
	if (chance(15)) {
		/* a directory's mode */
		unsigned d = pick_dir(v);
		s.valid = TUX3_SET_MODE;
		s.mode = S_IFDIR | 0700 | rnd(01000);
		describe("chmod directory %s to %o", d ? dname(d) : "/",
			 s.mode);
		int r = tux3_setattr(vol, v->dir[d].ino, &s);
		if (!refused(r)) {
			ok(r, "tux3_setattr");
			v->dir[d].mode = s.mode;
		}
		check_dir(vi, d);
		check_other(vi, v->dir[d].ino);
		return;
	}
	int di = pick_dent(v);
	if (di < 0)
		return;
	unsigned oi = v->dent[di].obj;
	struct obj *o = &v->obj[oi];
	s.valid = rnd(3) ? TUX3_SET_MODE : TUX3_SET_UID | TUX3_SET_GID;
	s.mode = (o->mode & S_IFMT) | rnd(010000);
	s.uid = rnd(100000);
	s.gid = rnd(100000);
	describe("setattr inode %" PRIu64 ": %s", o->ino,
		 s.valid == TUX3_SET_MODE ? "mode" : "uid, gid");
	int r = tux3_setattr(vol, o->ino, &s);
	if (!refused(r)) {
		ok(r, "tux3_setattr");
		if (s.valid & TUX3_SET_MODE)
			o->mode = s.mode;
		if (s.valid & TUX3_SET_UID)
			o->uid = s.uid;
		if (s.valid & TUX3_SET_GID)
			o->gid = s.gid;
	}
	check_obj(vi, oi);
	check_other(vi, o->ino);
}

static void op_read(unsigned vi)
{
	struct ver *v = &ver[vi];
	int di = pick_dent(v);	/* a symlink reads its target */
	if (di < 0)
		return;
	struct obj *o = &v->obj[v->dent[di].obj];
	uint64_t pos = rnd((unsigned)maxsize + 100);
	size_t len = 1 + rnd((unsigned)maxsize);
	describe("read %zu bytes at %" PRIu64 " of inode %" PRIu64, len, pos,
		 o->ino);
	ssize_t r = tux3_read(vol, o->ino, rbuf, len, pos);
	size_t want = pos >= o->size ? 0 : o->size - pos < len ?
		o->size - pos : len;
	if (r != (ssize_t)want)
		fail("tux3_read: %zd bytes, expected %zu", r, want);
	if (want && memcmp(rbuf, o->data + pos, want))
		fail("tux3_read: content differs");
}

static int free_version(void)
{
	for (unsigned i = 1; i < MAXV; i++)
		if (!ver[i].used)
			return (int)i;
	return -1;
}

static void op_snap(void)
{
	unsigned n = nversions() - 1;
	if (n >= maxsnaps)
		return;
	unsigned of = chance(50) ? 0 : pick_version();
	int ni = free_version();
	struct ver *nv = &ver[ni];
	ver_copy(nv, &ver[of]);
	snprintf(nv->name, sizeof(nv->name), "%ssnap%u",
		 chance(20) ? "a-longer-snapshot-name-" : "", snapcount++);
	opver = ver[of].name;
	describe("snapshot %s of '%s'", nv->name, ver[of].name);
	ok(tux3_snapshot_create(vol, nv->name, of ? ver[of].name : NULL),
	   "tux3_snapshot_create");
	snaps_made++;
	/* the copy and its source agree on a file or two */
	for (unsigned k = 0; k < 2; k++) {
		int di = pick_dent(nv);
		if (di < 0)
			break;
		select_version((unsigned)ni);
		check_obj((unsigned)ni, nv->dent[di].obj);
		select_version(of);
		check_obj(of, nv->dent[di].obj);
	}
	select_version((unsigned)ni);
	check_dir((unsigned)ni, pick_dir(nv));
}

static void op_snapdel(void)
{
	unsigned vi = pick_version();
	if (!vi)
		return;
	opver = ver[vi].name;
	describe("delete snapshot %s", ver[vi].name);
	if (chance(50))
		select_version(vi);	/* delete the selected one */
	ok(tux3_snapshot_delete(vol, ver[vi].name), "tux3_snapshot_delete");
	snaps_deleted++;
	char name[40];
	strcpy(name, ver[vi].name);
	ver_free(&ver[vi]);
	expect(tux3_version_select(vol, name), -ENOENT,
	       "tux3_version_select of a deleted snapshot");
	/* a file in a few other versions */
	for (unsigned k = 0; k < 3; k++) {
		unsigned wi = pick_version();
		int di = pick_dent(&ver[wi]);
		select_version(wi);
		if (di >= 0)
			check_obj(wi, ver[wi].dent[di].obj);
	}
}

/* Every snapshot deleted, oldest name first: the volume keeps its table
 * with the live version alone. */
static void op_snapclear(void)
{
	for (unsigned vi = 1; vi < MAXV; vi++) {
		if (!ver[vi].used)
			continue;
		opver = ver[vi].name;
		describe("delete every snapshot: %s", ver[vi].name);
		ok(tux3_snapshot_delete(vol, ver[vi].name),
		   "tux3_snapshot_delete");
		snaps_deleted++;
		ver_free(&ver[vi]);
	}
	select_version(0);
	check_dir(0, pick_dir(&ver[0]));
}

/* The live version rolled back to a snapshot: the model's live version
 * becomes a copy of the snapshot's (inode numbers included), the
 * snapshot and the others stay as they were, and the diff of the two
 * is empty. */
static void op_rollback(void)
{
	unsigned vi = pick_version();
	if (!vi)
		return;
	opver = "";
	describe("roll the live version back to snapshot %s", ver[vi].name);
	long r = tux3_snapshot_rollback(vol, ver[vi].name, NULL);
	if (r == -ENOSPC) {
		nospace++;	/* refused before any change: the cap */
		check_version(0);
		return;
	}
	ok(r, "tux3_snapshot_rollback");
	rollbacks++;
	ver_free(&ver[0]);
	ver_copy(&ver[0], &ver[vi]);
	ver[0].name[0] = 0;
	check_version(0);
	check_version(vi);
	check_diff_names(0, vi);
	diffs_checked++;
}

/* Calls that must fail. */
static void op_bad(unsigned vi)
{
	struct ver *v = &ver[vi];
	char buf[64];
	tux3_ino_t ino;
	switch (rnd(6)) {
	case 0: {
		unsigned d = pick_dir(v), k = rnd(NPOOL);
		if (find_dent(v, d, k) >= 0)
			return;
		fname(k, buf);
		describe("unlink absent %s/%s", dname(d), buf);
		expect(tux3_unlink(vol, v->dir[d].ino, buf, strlen(buf)),
		       -ENOENT, "tux3_unlink of an absent name");
		check_dir(vi, d);
		return;
	}
	case 1: {
		unsigned d = pick_dir(v), k = rnd(NPOOL);
		if (find_dent(v, d, k) >= 0)
			return;
		fname(k, buf);
		describe("lookup absent %s/%s", dname(d), buf);
		expect(tux3_lookup(vol, v->dir[d].ino, buf, strlen(buf), &ino),
		       -ENOENT, "tux3_lookup of an absent name");
		return;
	}
	case 2: {
		describe("select absent snapshot");
		expect(tux3_version_select(vol, "no-such-snapshot"), -ENOENT,
		       "tux3_version_select of an absent snapshot");
		select_version(vi);
		return;
	}
	case 3: {
		unsigned wi = pick_version();
		if (!wi)
			return;
		describe("snapshot with an existing name %s", ver[wi].name);
		expect(tux3_snapshot_create(vol, ver[wi].name, NULL), -EEXIST,
		       "tux3_snapshot_create of an existing name");
		return;
	}
	case 4:
		describe("delete absent snapshot");
		expect(tux3_snapshot_delete(vol, "no-such-snapshot"), -ENOENT,
		       "tux3_snapshot_delete of an absent snapshot");
		select_version(vi);
		return;
	default: {
		/* unlink of a directory, rmdir of a file */
		int di = pick_dent(v);
		if (di < 0)
			return;
		fname(v->dent[di].name, buf);
		describe("rmdir of the file %s/%s", dname(v->dent[di].dir),
			 buf);
		expect(tux3_rmdir(vol, v->dir[v->dent[di].dir].ino, buf,
				  strlen(buf)), -ENOTDIR,
		       "tux3_rmdir of a file");
		check_dir(vi, v->dent[di].dir);
	}
	}
}

/* ---- main ---- */

static void usage(void)
{
	fprintf(stderr, "usage: vfsfuzz IMAGE [--ops N] [--seed S] "
		"[--files F] [--verify-every K] [--blockbits B] "
		"[--max-blocks M] [--size MIB] [--snapshots C] [--no-fsck] "
		"[-v]\n");
	exit(2);
}

static uint64_t num(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end || end == s)
		usage();
	return v;
}

static int fsck_problem(void *ctx, const struct tux3_fsck_problem *p)
{
	(void)ctx;
	printf("vfsfuzz: fsck: %s: %s\n", p->def->code, p->text);
	return 0;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool more = i + 1 < argc;
		if (!strcmp(a, "--ops") && more)
			nops = num(argv[++i]);
		else if (!strcmp(a, "--seed") && more)
			seed = num(argv[++i]);
		else if (!strcmp(a, "--files") && more)
			nfiles = (unsigned)num(argv[++i]);
		else if (!strcmp(a, "--verify-every") && more)
			verify_every = num(argv[++i]);
		else if (!strcmp(a, "--blockbits") && more)
			blockbits = (unsigned)num(argv[++i]);
		else if (!strcmp(a, "--max-blocks") && more)
			maxblocks = (unsigned)num(argv[++i]);
		else if (!strcmp(a, "--size") && more)
			size_mib = num(argv[++i]);
		else if (!strcmp(a, "--snapshots") && more)
			maxsnaps = (unsigned)num(argv[++i]);
		else if (!strcmp(a, "--no-fsck"))
			do_fsck = false;
		else if (!strcmp(a, "-v"))
			verbose = true;
		else if (a[0] != '-' && !image)
			image = a;
		else
			usage();
	}
	if (!image || !nfiles || nfiles > MAXF || blockbits < 9 ||
	    blockbits > 16 || !maxblocks || maxsnaps >= MAXV || !size_mib)
		usage();
	maxsize = (size_t)maxblocks << blockbits;
	rng = seed * 0x9e3779b97f4a7c15ull + 0x1234567;
	if (!rng)
		rng = 1;
	rbuf = malloc(maxsize + 8192);
	wbuf = malloc(maxsize);
	if (!rbuf || !wbuf) {
		perror("vfsfuzz");
		return 2;
	}
	double t0 = now();
	make_volume();

	unsigned total = 0;
	for (unsigned k = 0; k < OP_COUNT; k++)
		total += weight[k];
	for (opno = 1; opno <= nops; opno++) {
		unsigned w = rnd(total), op = 0;
		while (w >= weight[op])
			w -= weight[op++];
		opcount[op]++;
		unsigned vi = pick_version();
		snprintf(opdesc, sizeof(opdesc), "%s", opname[op]);
		if (op != OP_SNAP && op != OP_SNAPDEL && op != OP_SNAPCLEAR &&
		    op != OP_ROLLBACK)
			select_version(vi);
		switch (op) {
		case OP_WRITE: op_write(vi); break;
		case OP_TRUNC: op_trunc(vi); break;
		case OP_CREATE: op_create(vi); break;
		case OP_SYMLINK: op_symlink(vi); break;
		case OP_LINK: op_link(vi); break;
		case OP_UNLINK: op_unlink(vi); break;
		case OP_RENAME: op_rename(vi); break;
		case OP_MKDIR: op_mkdir(vi); break;
		case OP_RMDIR: op_rmdir(vi); break;
		case OP_RENAMEDIR: op_renamedir(vi); break;
		case OP_SETX: op_setx(vi); break;
		case OP_RMX: op_rmx(vi); break;
		case OP_SETATTR: op_setattr(vi); break;
		case OP_READ: op_read(vi); break;
		case OP_SNAP: op_snap(); break;
		case OP_SNAPDEL: op_snapdel(); break;
		case OP_SNAPCLEAR: op_snapclear(); break;
		case OP_BAD: op_bad(vi); break;
		case OP_SYNC:
			describe("sync");
			ok(tux3_sync(vol), "tux3_sync");
			break;
		case OP_UNIFY:
			describe("unify");
			ok(tux3_unify(vol), "tux3_unify");
			break;
		case OP_REOPEN: reopen(); break;
		case OP_ROLLBACK: op_rollback(); break;
		}
		if (verify_every && opno % verify_every == 0)
			check_all("periodic");
	}
	opno = nops;
	snprintf(opdesc, sizeof(opdesc), "end");
	check_all("end");
	ok(tux3_umount(vol), "tux3_umount");
	vol = NULL;
	open_volume(TUX3_OPEN_RDONLY);
	check_all("after the last umount");
	tux3_close(vol);
	vol = NULL;
	double t1 = now();

	printf("vfsfuzz: seed %" PRIu64 ": %" PRIu64 " ops in %.2f s (%.0f "
	       "ops/s), %" PRIu64 " full checks, %" PRIu64 " diffs checked, %"
	       PRIu64 " snapshots made, %"
	       PRIu64 " deleted, %u at the end, %" PRIu64 " rollbacks, %"
	       PRIu64 " changes refused (ENOSPC)\n", seed, nops, t1 - t0,
	       (double)nops / (t1 - t0 > 0 ? t1 - t0 : 1), full_checks,
	       diffs_checked, snaps_made, snaps_deleted, nversions() - 1,
	       rollbacks, nospace);
	printf("vfsfuzz: ops:");
	for (unsigned k = 0; k < OP_COUNT; k++)
		printf(" %s %" PRIu64, opname[k], opcount[k]);
	printf("\n");
	for (unsigned i = 0; i < MAXV; i++)
		ver_free(&ver[i]);
	free(rbuf);
	free(wbuf);

	if (!do_fsck)
		return 0;
	struct tux3_fsck_ops fops = { .problem = fsck_problem };
	struct tux3_fsck_result res;
	char err[600];
	int r = tux3_fsck_run(image, TUX3_FSCK_CHECK, &fops, NULL, &res, err,
			      sizeof(err));
	if (r) {
		printf("vfsfuzz: fsck: error %d: %s\n", r, err);
		return 3;
	}
	printf("vfsfuzz: fsck: %u problems, %" PRIu64 " files, %" PRIu64 "/%"
	       PRIu64 " blocks\n", res.found, res.files, res.usedblocks,
	       res.blocks);
	return res.found ? 3 : 0;
}

/*
 * crashsim: the recorded-write crash simulator (issue 5; the design notes
 * are ../shared/reference/crash-consistency.md, section 3).
 *
 *   crashsim [--workload ace|random] [--seed N] [--workloads N] [--ops N]
 *            [--max-states N] [--torn N] [--block-size N] [--shard I/N]
 *            [--every N] [--state WRITE:SUBSET:TORN [--recover
 *            WRITE:SUBSET:TORN]] [--print N] [--list] [--no-recovery]
 *            [--no-torn-super] [--features MASK] [--dir-index] [-v]
 *
 * --workload ace: the sequences numbered --seed to --seed + --workloads
 * - 1 (default: all) of 1 to --ops (default 3) operations; random:
 * --workloads (default 1) workloads of --ops (default 30) operations
 * from seed --seed (default 1).  --max-states: subset states per flush
 * epoch (default 1024); --torn: torn variants per write (default 16).
 * --every N takes one workload in N, --shard I/N one in N of those.
 *
 * A workload runs against a volume in a scratch image with the device's
 * write recorder attached (common/io/record.h): every write with its data,
 * every flush, the library's marks (superblock write, delta committed,
 * unify) and ours (operation k done, fsync returned).  An independent
 * in-memory model of the namespace, data and attributes runs beside it
 * (every operation's result must match the model's prediction) and is
 * snapshotted at each commit, as a canonical text.
 *
 * Crash states are then rebuilt from the trace, in memory, on top of the
 * image as it was before the workload:
 *   prefix  all writes up to write c (a crash just before write c+1,
 *           after the marks and flushes between: this covers the prefix
 *           at every mark, at every flush and at every write);
 *   subset  at the end of each flush epoch, subsets of its writes (every
 *           one when 2^m <= --max-states, else "only one", "all but one"
 *           and random ones up to --max-states);
 *   torn    write c landing as a mix of old and new 512-byte sectors
 *           (prefix and suffix cuts and random masks, --torn per write),
 *           after every earlier write of its epoch.
 * Every state is written to a scratch image (tmpfs: $TUX3_CRASH_SCRATCH,
 * else /dev/shm, else $TUX3_SCRATCH or /tmp), opened through the normal
 * open path (tux3_open read-only, which replays the log), checked with
 * the fsck engine (tux3_fsck_run, TUX3_FSCK_CHECK: no problem may be
 * found, but on a torn primary superblock its restore from the whole
 * secondary copy, doc/format.md 15.3) and compared with the model at
 * the newest delta whose commit write (the superblock) is in the
 * image: it must be that snapshot
 * exactly, never anything in between; the delta must cover every
 * operation an fsync returned for; a rename that differs is reported as
 * such (old-xor-new follows from the equality).  The same image with the
 * same expected snapshot is checked once (a 128-bit hash of both): the
 * ACE sequences share most of their prefixes.
 *
 * Orphans (files unlinked while open) stay in a crash image; the next
 * read-write open releases them, which writes a delta.  For every prefix
 * state with orphans that recovery is recorded too (the read-write open
 * path with the recorder attached before the orphans go) and crashed in
 * the same way, one level deep: each of its states must be the state
 * itself or the state without its orphans (--no-recovery: skip).
 *
 * --atime: the volume is made with the ATIME feature (mkfs -O atime) and
 * chmod also sets an access time, which the model and the image text
 * carry (at=) like mtime and ctime.
 * --snapshots (random workloads): operations also take snapshots s0..s3
 * of the live version or of another snapshot, delete them, select
 * one to write, overwrite, truncate, create or unlink a file in it, and
 * roll the live version back to one (when no file of it is open; the
 * live model becomes a copy of the snapshot's, in one commit).  Each
 * snapshot has its own model, a copy of its source's at the create; the
 * canonical text is the live tree, its orphans, "pending delete" while a
 * delete's plan is committed and its lists are not, then every snapshot
 * by name ("snapshot NAME" and its tree, read through
 * tux3_version_select).  A delete's first commit records its plan: the
 * snapshot is gone from that delta on.  A prefix state with a pending
 * delete gets its recovery (the read-write open finishing it) crashed
 * too, like orphans below: each state must be the state itself, or the
 * same without the pending line.
 *
 * --dir-index (random workloads, 512-byte, 1 KiB or 4 KiB blocks): the
 * volume is made with DIR_INDEX (doc/format.md 15.5) and the base holds a
 * directory D of three blocks of entries (47 at 512 B and 1 KiB, 191 at
 * 4 KiB; hard links of a few files), one short of filling them, so that
 * the create that opens the fourth block builds its on-disk index;
 * half the operations create, link, rename or unlink in D, with names
 * from a wider set, so that the delta that builds the index and the
 * ones that keep it in step (bucket splits, table growth) are crashed.
 * Each state's fsck checks the index against the entries (pass 5); the
 * states whose D has an index are counted.
 *
 * --compact: --snapshots with deletes as likely as creates, and every
 * workload ends deleting the snapshots left: the last delete takes the
 * volume back to the 2014 format in its second commit (doc/format.md
 * 17.8), which the model checks (no versions left at that commit), and
 * its crash states are each the versioned volume or the 2014 one.
 *
 * Trace lints run on every workload (no crash needed): no write to a
 * block the last durable state references (superblock aside; L1), the
 * commit write preceded and followed by a flush with no write in between
 * (L2), no write to a block the open delta freed (L3) or to a log block
 * of the durable unify cycle (L4) before the commit that frees it is
 * durable.  The references come from committed_map() on the durable image
 * itself at each commit.
 *
 * A failing state is named (workload seed, operation index, crash write
 * index, subset mask, torn mask) and printed as a ready-to-paste line for
 * tests/crash/regressions: "seed S op K write C subset M torn T" is the
 * crash right after write C of workload S (writes count from 1 in issue
 * order; K operations were done when it was issued), holding every write
 * before the last flush preceding C, the writes of C's flush epoch whose
 * bit is set in M (bit i: the epoch's i-th write; all of them: a prefix
 * state, which crashes just before write C+1, after the marks between)
 * and, with T non-zero, write C torn: only its 512-byte sectors whose bit
 * is set in T landed.  The ACE "seed" is the sequence number.
 *
 * The last line is "states: N ok, N bad"; the exit status is 0 only when
 * no state is bad, no lint fired and the library agreed with the model
 * on every operation.  In this library fsync is a sync (a full delta), so
 * the ACE sequences differing only by fsync/sync record the same writes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"
#include "version/version.h"
#include "tux3_fsck.h"

#define SECTOR 512
#define SB_SECTOR (TUX3_SB_OFFSET / SECTOR)

/* ------------------------------------------------------------------ */
/* options                                                             */

enum { WL_ACE, WL_RANDOM };

struct options {
	int workload;
	uint64_t seed, workloads;
	bool workloads_set;
	unsigned ops;
	bool ops_set;
	unsigned max_states;	/* subset states per epoch */
	unsigned torn;		/* torn masks per write */
	unsigned blockbits;
	unsigned shard, nshards;
	uint64_t every;		/* only every Nth workload */
	const char *state;	/* reproduce one state */
	const char *recover;	/* ... and one state of its recovery */
	bool no_recovery;	/* --no-recovery */
	bool list;		/* --list: every state and its result */
	unsigned print;		/* bad states printed in full */
	bool verbose;
	bool no_torn_super;	/* --no-torn-super: skip (counted) */
	uint32_t features;	/* --features: mkfs compat mask (default:
				 * TUX3_FEATURE_COMPAT_DEFAULT) */
	bool compact;		/* --compact: --snapshots, deletes as often
				 * as creates, and every workload ends
				 * deleting the snapshots left (back to the
				 * 2014 format, doc/format.md 17.8) */
	bool atime;		/* --atime: mkfs -O atime, chmod sets an
				 * atime too (doc/format.md 15.6) */
	bool snapshots;		/* --snapshots: random workloads take,
				 * delete and write snapshots */
	bool dir_index;		/* --dir-index: mkfs -O dir_index, a base
				 * directory near its index's threshold */
	unsigned vleaf_cap;	/* --vleaf-cap: versioned leaves split at
				 * that many records, and a block with more
				 * elements moves them to an element chain
				 * (format.md 17.3c): chains with the few
				 * versions a workload makes */
	unsigned xattr_max;	/* --xattr-max: longest xattr value set
				 * (default 32; above it, xattrs are set a
				 * third of the time: at 512-byte blocks a
				 * snapshot's old values then go past the
				 * leaf, to the attribute chain, format.md
				 * 17.3b) */
};

static void usage(void) __attribute__((noreturn));
static uint64_t num(const char *s);

static struct options opt = {
	.workload = WL_ACE, .max_states = 1024, .torn = 16, .blockbits = 12,
	.nshards = 1, .print = 10, .every = 1,
	.features = TUX3_FEATURE_COMPAT_DEFAULT, .xattr_max = 32,
};

/* ------------------------------------------------------------------ */
/* small tools                                                         */

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		fprintf(stderr, "crashsim: out of memory\n");
		exit(2);
	}
	return p;
}

static void *xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);
	if (!p) {
		fprintf(stderr, "crashsim: out of memory\n");
		exit(2);
	}
	return p;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fprintf(stderr, "crashsim: out of memory\n");
		exit(2);
	}
	return p;
}

static uint64_t rotl(uint64_t x, int r)
{
	return x << r | x >> (64 - r);
}

static uint64_t fmix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

struct h128 {
	uint64_t a, b;
};

/* Two independent 64-bit lanes: enough against accidental collisions
 * (this is a cache key, not a defence against an adversary). */
static struct h128 hash128(const void *p, size_t n, uint64_t seed)
{
	const uint8_t *b = p;
	uint64_t x = seed ^ 0x243f6a8885a308d3ULL, y = ~seed ^ 0x13198a2e03707344ULL;
	uint64_t len = n;
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, b, 8);
		x = rotl(x ^ w, 27) * 0x9e3779b97f4a7c15ULL;
		y = (rotl(y, 31) + w) * 0xc2b2ae3d27d4eb4fULL;
		b += 8;
		n -= 8;
	}
	uint64_t t = 0;
	memcpy(&t, b, n);
	x = rotl(x ^ t ^ len, 27) * 0x9e3779b97f4a7c15ULL;
	y = (rotl(y, 31) + t + len) * 0xc2b2ae3d27d4eb4fULL;
	return (struct h128){ fmix(x ^ rotl(y, 17)), fmix(y + rotl(x, 41)) };
}

static uint64_t hash64(const void *p, size_t n)
{
	return hash128(p, n, 0).a;
}

/* xorshift64*: the workloads' and samplers' random numbers */
struct rng {
	uint64_t s;
};

static void rng_seed(struct rng *r, uint64_t seed)
{
	r->s = fmix(seed + 0x9e3779b97f4a7c15ULL) | 1;
}

static uint64_t rng_next(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dULL;
}

static unsigned rnd(struct rng *r, unsigned n)
{
	return n ? (unsigned)(rng_next(r) % n) : 0;
}

static void fill_pattern(uint8_t *buf, size_t len, uint64_t seed)
{
	struct rng r;
	rng_seed(&r, seed);
	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = rng_next(&r);
		size_t n = len - i < 8 ? len - i : 8;
		memcpy(buf + i, &v, n);
	}
}

struct sbuf {
	char *p;
	size_t len, cap;
};

static void sb_printf(struct sbuf *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *s, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		size_t room = s->cap - s->len;
		int n = vsnprintf(s->p ? s->p + s->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if ((size_t)n < room) {
			s->len += (size_t)n;
			return;
		}
		s->cap = (s->cap + (size_t)n + 1) * 2;
		s->p = xrealloc(s->p, s->cap);
	}
}

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* hex bit strings: bit i of the mask is 1 << i of the printed number */
static void bits_print(char *out, size_t outlen, const uint8_t *bits,
		       size_t nbits)
{
	size_t nd = (nbits + 3) / 4, o = 0;
	if (outlen < 4)
		return;
	out[o++] = '0';
	out[o++] = 'x';
	bool started = false;
	for (size_t d = nd; d-- > 0;) {
		unsigned v = (bits[d / 2] >> ((d & 1) * 4)) & 15;
		if (!v && !started && d)
			continue;
		started = true;
		if (o + 2 >= outlen)
			break;
		out[o++] = "0123456789abcdef"[v];
	}
	if (!started)
		out[o++] = '0';
	out[o] = 0;
}

static int bits_parse(const char *s, size_t len, uint8_t *bits, size_t nbytes)
{
	memset(bits, 0, nbytes);
	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		len -= 2;
	}
	for (size_t i = 0; i < len; i++) {
		char ch = s[len - 1 - i];
		unsigned v;
		if (ch >= '0' && ch <= '9')
			v = (unsigned)(ch - '0');
		else if (ch >= 'a' && ch <= 'f')
			v = (unsigned)(ch - 'a' + 10);
		else if (ch >= 'A' && ch <= 'F')
			v = (unsigned)(ch - 'A' + 10);
		else
			return -EINVAL;
		if (i / 2 >= nbytes) {
			if (v)
				return -ERANGE;
			continue;
		}
		bits[i / 2] |= (uint8_t)(v << ((i & 1) * 4));
	}
	return 0;
}

static bool bit_get(const uint8_t *b, size_t i)
{
	return (b[i >> 3] >> (i & 7)) & 1;
}

static void bit_set(uint8_t *b, size_t i)
{
	b[i >> 3] |= (uint8_t)(1u << (i & 7));
}

/* ------------------------------------------------------------------ */
/* scratch files                                                       */

static char wpath[512], cpath[512], rpath[512], rcpath[512];

static void cleanup(void)
{
	if (wpath[0])
		unlink(wpath);
	if (cpath[0])
		unlink(cpath);
	if (rpath[0])
		unlink(rpath);
	if (rcpath[0])
		unlink(rcpath);
}

static void on_signal(int sig)
{
	cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Images left by a run that died without its exit handler (a sanitizer
 * abort, SIGKILL): crashsim.PID.* of a process that is gone. */
static void sweep_stale(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d))) {
		int pid, n = 0;
		if (sscanf(e->d_name, "crashsim.%d.%*[a-z].img%n", &pid, &n) < 1 ||
		    !n || e->d_name[n] || pid <= 0 || pid == (int)getpid())
			continue;
		if (kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		char p[600];
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	closedir(d);
}

static const char *scratch_dir(void)
{
	const char *d = getenv("TUX3_CRASH_SCRATCH");
	struct stat st;
	if (d && *d)
		return d;
	if (!stat("/dev/shm", &st) && S_ISDIR(st.st_mode) &&
	    !access("/dev/shm", W_OK))
		return "/dev/shm";
	d = getenv("TUX3_SCRATCH");
	return d && *d ? d : "/tmp";
}

static void write_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			perror("crashsim: pwrite");
			exit(2);
		}
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
}

static void read_all(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;
	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			fprintf(stderr, "crashsim: pread: %s\n",
				n ? strerror(errno) : "short file");
			exit(2);
		}
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
}

/* ------------------------------------------------------------------ */
/* the model                                                           */

#define MN 40			/* nodes */
#define ME 320			/* entries (--dir-index: D holds dx_base(),
				 * 191 of them at 4 KiB, and 53 more) */
#define NAME_MAX_CS 48		/* an entry's name and its NUL */
#define NX 3			/* xattr names, in strcmp order */
#define XMAX 160		/* bytes of an xattr value (--xattr-max) */
#define MAXDATA (48 * 1024)	/* bytes of a file */
static const char *const xnames[NX] = { "trusted.t", "user.k", "user.x" };

struct mnode {
	bool used;
	uint32_t mode, uid, gid;
	unsigned nlink, opens;
	uint8_t *data;		/* MAXDATA bytes for regular files */
	uint64_t size;
	char target[64];
	bool xhas[NX];
	unsigned xlen[NX];
	uint8_t xval[NX][XMAX];
	tux3_ino_t ino;
};

struct mentry {
	bool used;
	unsigned dir, node;
	char name[NAME_MAX_CS];
};

struct model {
	struct mnode n[MN];
	struct mentry e[ME];
};

static void model_free(struct model *m)
{
	for (unsigned i = 0; i < MN; i++)
		free(m->n[i].data);
	memset(m, 0, sizeof(*m));
}

static void model_copy(struct model *d, const struct model *s)
{
	model_free(d);
	*d = *s;
	for (unsigned i = 0; i < MN; i++) {
		if (!s->n[i].data)
			continue;
		d->n[i].data = xmalloc(MAXDATA);
		memcpy(d->n[i].data, s->n[i].data, MAXDATA);
	}
}

static void node_free(struct model *m, unsigned n)
{
	free(m->n[n].data);
	memset(&m->n[n], 0, sizeof(m->n[n]));
}

static int model_entry(const struct model *m, unsigned dir, const char *name)
{
	for (unsigned e = 0; e < ME; e++)
		if (m->e[e].used && m->e[e].dir == dir &&
		    !strcmp(m->e[e].name, name))
			return (int)e;
	return -1;
}

static int free_node(const struct model *m)
{
	for (unsigned i = 1; i < MN; i++)
		if (!m->n[i].used)
			return (int)i;
	return -1;
}

static int free_entry(const struct model *m)
{
	for (unsigned i = 0; i < ME; i++)
		if (!m->e[i].used)
			return (int)i;
	return -1;
}

static bool dir_empty(const struct model *m, unsigned dir)
{
	for (unsigned e = 0; e < ME; e++)
		if (m->e[e].used && m->e[e].dir == dir)
			return false;
	return true;
}

static bool in_subtree(const struct model *m, unsigned top, unsigned node)
{
	if (top == node)
		return true;
	for (unsigned e = 0; e < ME; e++)
		if (m->e[e].used && m->e[e].dir == top &&
		    S_ISDIR(m->n[m->e[e].node].mode) &&
		    in_subtree(m, m->e[e].node, node))
			return true;
	return false;
}

/* A name of a non-directory goes: an orphan while it is open. */
static void drop_link(struct model *m, unsigned n)
{
	if (--m->n[n].nlink == 0 && !m->n[n].opens)
		node_free(m, n);
}

/* ------------------------------------------------------------------ */
/* canonical texts: the model's and an image's, in the same format     */

struct xent {
	char name[256];
	unsigned len;
	uint64_t hash;
};

static int xent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct xent *)a)->name,
		      ((const struct xent *)b)->name);
}

static void emit_xattrs(struct sbuf *s, struct xent *x, unsigned n)
{
	if (n)
		qsort(x, n, sizeof(*x), xent_cmp);
	sb_printf(s, " x[");
	for (unsigned i = 0; i < n; i++)
		sb_printf(s, "%s%s=%u:%016" PRIx64, i ? "," : "", x[i].name,
			  x[i].len, x[i].hash);
	sb_printf(s, "]");
}

/* times are those of the live volume at the commit (see snapshot) */
struct mtimes {
	int64_t mt[MN], ct[MN], at[MN];
	int err[MN];
};

static void emit_model_node(struct sbuf *s, const struct model *m,
			    const struct mtimes *t, unsigned n,
			    const char *path)
{
	const struct mnode *x = &m->n[n];
	/* an orphan shows nlink 1, as the reference loads it (format.md
	 * section 11; fsck checks it is stored as 0) */
	sb_printf(s, "%s ino=%" PRIu64 " mode=%o uid=%u gid=%u nlink=%u", path,
		  x->ino, x->mode, x->uid, x->gid, x->nlink ? x->nlink : 1);
	if (S_ISREG(x->mode))
		sb_printf(s, " size=%" PRIu64 " data=%016" PRIx64, x->size,
			  hash64(x->data, x->size));
	else if (S_ISLNK(x->mode))
		sb_printf(s, " link=%s", x->target);
	struct xent xe[NX];
	unsigned nx = 0;
	for (unsigned i = 0; i < NX; i++) {
		if (!x->xhas[i])
			continue;
		snprintf(xe[nx].name, sizeof(xe[nx].name), "%s", xnames[i]);
		xe[nx].len = x->xlen[i];
		xe[nx].hash = hash64(x->xval[i], x->xlen[i]);
		nx++;
	}
	emit_xattrs(s, xe, nx);
	if (t->err[n])
		sb_printf(s, " stat=%d\n", t->err[n]);
	else
		sb_printf(s, " mt=%" PRId64 " ct=%" PRId64 " at=%" PRId64
			  "\n", t->mt[n], t->ct[n], t->at[n]);
}

struct nameidx {
	const char *name;
	unsigned idx;
};

static int nameidx_cmp(const void *a, const void *b)
{
	return strcmp(((const struct nameidx *)a)->name,
		      ((const struct nameidx *)b)->name);
}

static void model_text_dir(struct sbuf *s, const struct model *m,
			   const struct mtimes *t, unsigned dir,
			   const char *path, unsigned depth)
{
	struct nameidx v[ME];
	unsigned n = 0;
	for (unsigned e = 0; e < ME; e++)
		if (m->e[e].used && m->e[e].dir == dir)
			v[n++] = (struct nameidx){ m->e[e].name, e };
	if (n)
		qsort(v, n, sizeof(v[0]), nameidx_cmp);
	for (unsigned i = 0; i < n; i++) {
		char p[512];
		unsigned node = m->e[v[i].idx].node;
		snprintf(p, sizeof(p), "%s/%s", depth ? path : "", v[i].name);
		emit_model_node(s, m, t, node, p);
		if (S_ISDIR(m->n[node].mode) && depth < 16)
			model_text_dir(s, m, t, node, p, depth + 1);
	}
}

static int ino_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void model_text(struct sbuf *s, const struct model *m,
		       const struct mtimes *t)
{
	s->len = 0;
	emit_model_node(s, m, t, 0, "/");
	model_text_dir(s, m, t, 0, "/", 0);
	/* orphans: unlinked while open, by inode number */
	uint64_t o[MN][2];
	unsigned no = 0;
	for (unsigned i = 1; i < MN; i++)
		if (m->n[i].used && !m->n[i].nlink) {
			o[no][0] = m->n[i].ino;
			o[no++][1] = i;
		}
	if (no)
		qsort(o, no, sizeof(o[0]), ino_cmp);
	for (unsigned i = 0; i < no; i++)
		emit_model_node(s, m, t, (unsigned)o[i][1], "orphan");
	if (!s->p)
		sb_printf(s, "%s", "");
}

/*
 * After the live tree and its orphans: "pending delete" while a snapshot
 * delete's plan is recorded and its lists not yet processed, then each
 * snapshot in name order, "snapshot NAME" and its tree (orphans are the
 * live version's: a snapshot's model has none).
 */
static const char pending_line[] = "pending delete\n";

static void model_text_snap(struct sbuf *s, const struct model *m,
			    const struct mtimes *t, const char *name)
{
	sb_printf(s, "snapshot %s\n", name);
	emit_model_node(s, m, t, 0, "/");
	model_text_dir(s, m, t, 0, "/", 0);
}

/* The image side, through the library's read API. */
struct ientry {
	char name[256];
	tux3_ino_t ino;
};

struct icollect {
	struct ientry *v;
	unsigned n, cap;
};

static int collect_entry(void *ctx, const char *name, unsigned len,
			 tux3_ino_t ino, unsigned type, uint64_t pos)
{
	struct icollect *c = ctx;
	(void)type; (void)pos;
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 16;
		c->v = xrealloc(c->v, c->cap * sizeof(*c->v));
	}
	if (len > 255)
		len = 255;
	memcpy(c->v[c->n].name, name, len);
	c->v[c->n].name[len] = 0;
	c->v[c->n++].ino = ino;
	return c->n > 4096 ? 1 : 0;
}

static int ientry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ientry *)a)->name,
		      ((const struct ientry *)b)->name);
}

struct xcollect {
	struct xent v[16];
	unsigned n;
};

static int collect_xattr(void *ctx, const char *name, const void *value,
			 unsigned size)
{
	struct xcollect *c = ctx;
	if (c->n == 16)
		return 1;
	snprintf(c->v[c->n].name, sizeof(c->v[c->n].name), "%s", name);
	c->v[c->n].len = size;
	c->v[c->n++].hash = hash64(value, size);
	return 0;
}

static uint8_t *readbuf;

/* Returns the mode (0 when stat failed). */
static uint32_t emit_image_node(struct sbuf *s, struct tux3_volume *vol,
				tux3_ino_t ino, const char *path)
{
	struct tux3_stat st;
	int err = tux3_stat(vol, ino, &st);
	if (err) {
		sb_printf(s, "%s ino=%" PRIu64 " stat=%d\n", path, ino, err);
		tux3_clear_error(vol);
		return 0;
	}
	sb_printf(s, "%s ino=%" PRIu64 " mode=%o uid=%u gid=%u nlink=%u", path,
		  ino, st.mode, st.uid, st.gid, st.nlink);
	if (S_ISREG(st.mode)) {
		if (st.size > MAXDATA) {
			sb_printf(s, " size=%" PRIu64 " data=too-big", st.size);
		} else {
			ssize_t n = tux3_read(vol, ino, readbuf, st.size, 0);
			if (n != (ssize_t)st.size) {
				sb_printf(s, " size=%" PRIu64 " data=read%zd",
					  st.size, n);
				tux3_clear_error(vol);
			} else {
				sb_printf(s, " size=%" PRIu64 " data=%016" PRIx64,
					  st.size, hash64(readbuf, st.size));
			}
		}
	} else if (S_ISLNK(st.mode)) {
		char t[4200];
		ssize_t n = tux3_readlink(vol, ino, t, sizeof(t));
		if (n < 0) {
			sb_printf(s, " link=err%zd", n);
			tux3_clear_error(vol);
		} else {
			sb_printf(s, " link=%s", t);
		}
	}
	struct xcollect xc = { .n = 0 };
	err = tux3_listxattr(vol, ino, collect_xattr, &xc);
	if (err < 0) {
		sb_printf(s, " xattrs=err%d", err);
		tux3_clear_error(vol);
	}
	emit_xattrs(s, xc.v, xc.n);
	sb_printf(s, " mt=%" PRId64 " ct=%" PRId64 " at=%" PRId64 "\n",
		  st.mtime_ns, st.ctime_ns, st.atime_ns);
	return st.mode;
}

static void image_text_dir(struct sbuf *s, struct tux3_volume *vol,
			   tux3_ino_t dir, const char *path, unsigned depth)
{
	struct icollect c = { 0 };
	int err = tux3_readdir(vol, dir, collect_entry, &c);
	if (err < 0) {
		sb_printf(s, "%s readdir=%d\n", path, err);
		tux3_clear_error(vol);
	}
	if (c.n)
		qsort(c.v, c.n, sizeof(*c.v), ientry_cmp);
	for (unsigned i = 0; i < c.n; i++) {
		char p[512];
		snprintf(p, sizeof(p), "%s/%s", depth ? path : "", c.v[i].name);
		uint32_t mode = emit_image_node(s, vol, c.v[i].ino, p);
		if (S_ISDIR(mode) && depth < 16)
			image_text_dir(s, vol, c.v[i].ino, p, depth + 1);
	}
	free(c.v);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void image_text(struct sbuf *s, struct tux3_volume *vol)
{
	s->len = 0;
	tux3_version_select(vol, NULL);
	emit_image_node(s, vol, TUX3_ROOT_INO, "/");
	image_text_dir(s, vol, TUX3_ROOT_INO, "/", 0);
	unsigned no = tux3_orphan_count(vol);
	uint64_t *o = xcalloc(no + 1, sizeof(*o));
	for (unsigned i = 0; i < no; i++)
		o[i] = tux3_orphan(vol, i);
	if (no)
		qsort(o, no, sizeof(*o), ino_cmp);
	for (unsigned i = 0; i < no; i++)
		emit_image_node(s, vol, o[i], "orphan");
	free(o);
	if (vol->vpending && vol->vpending->count)
		sb_printf(s, "%s", pending_line);
	/* the snapshots: the named versions a select finds, by name */
	struct tux3_version_info *v = NULL;
	unsigned nv = 0;
	int err = tux3_version_list(vol, &v, &nv);
	if (err) {
		sb_printf(s, "versions=%d\n", err);
		tux3_clear_error(vol);
	}
	char **names = xcalloc(nv + 1, sizeof(*names));
	unsigned nn = 0;
	for (unsigned i = 0; i < nv; i++)
		if (v[i].name && v[i].name[0] && !v[i].ghost && !v[i].dying)
			names[nn++] = (char *)v[i].name;
	if (nn)
		qsort(names, nn, sizeof(*names), name_cmp);
	for (unsigned i = 0; i < nn; i++) {
		sb_printf(s, "snapshot %s\n", names[i]);
		if ((err = tux3_version_select(vol, names[i]))) {
			sb_printf(s, "select=%d\n", err);
			tux3_clear_error(vol);
			continue;
		}
		emit_image_node(s, vol, TUX3_ROOT_INO, "/");
		image_text_dir(s, vol, TUX3_ROOT_INO, "/", 0);
	}
	tux3_version_select(vol, NULL);
	free(names);
	free(v);
	if (!s->p)
		sb_printf(s, "%s", "");
}

/* First line that differs, for the report. */
static void first_diff(const char *want, const char *have, char *out,
		       size_t len)
{
	const char *a = want, *b = have;
	while (*a && *b) {
		const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
		size_t la = ea ? (size_t)(ea - a) : strlen(a);
		size_t lb = eb ? (size_t)(eb - b) : strlen(b);
		if (la != lb || memcmp(a, b, la)) {
			snprintf(out, len, "model: %.*s | image: %.*s",
				 (int)(la > 300 ? 300 : la), a,
				 (int)(lb > 300 ? 300 : lb), b);
			return;
		}
		a += la + (ea ? 1 : 0);
		b += lb + (eb ? 1 : 0);
	}
	if (*a)
		snprintf(out, len, "missing in the image: %.300s", a);
	else if (*b)
		snprintf(out, len, "not in the model: %.300s", b);
	else
		snprintf(out, len, "texts equal");
}

/* ------------------------------------------------------------------ */
/* operations                                                          */

enum {
	/* the ACE set, in this order */
	OP_CREATE, OP_MKDIR, OP_WRITE, OP_OVERWRITE, OP_TRUNCATE, OP_LINK,
	OP_UNLINK, OP_RENAME, OP_SYMLINK, OP_SETXATTR, OP_REMOVEXATTR,
	ACE_NOPS,
	/* more for the random workloads */
	OP_RMDIR = ACE_NOPS, OP_CHMOD, OP_IOPEN, OP_IRELEASE, OP_SYNC,
	OP_UNIFY,
	/* --snapshots: snapshot "s<vs>" of the live version or of "s<vof>";
	 * delete it; select it, do the operation "inner" in it (write,
	 * overwrite, truncate, create, unlink), select the live one again */
	OP_SNAPSHOT, OP_SNAPDELETE, OP_SNAPWRITE,
	/* the live version rolled back to "s<vs>" */
	OP_ROLLBACK, OP_NOPS
};

static const char *const op_names[OP_NOPS] = {
	"create", "mkdir", "write", "overwrite", "truncate", "link", "unlink",
	"rename", "symlink", "setxattr", "removexattr", "rmdir", "chmod",
	"iopen", "irelease", "sync", "unify", "snapshot", "snapdelete",
	"snapwrite", "rollback",
};

struct op {
	unsigned kind;
	unsigned dir;		/* model node of the directory */
	char name[NAME_MAX_CS];	/* the entry (created, or the file acted
				 * on) */
	unsigned dir2;		/* link, rename: the new name */
	char name2[NAME_MAX_CS];
	uint64_t pos, len;	/* write; truncate: pos is the size */
	unsigned xi, flags;	/* xattr name; rename flags; chmod mode */
	uint64_t seed;		/* data */
	char target[64];	/* symlink */
	int node;		/* irelease: the model node (no name) */
	unsigned vs, inner;	/* snapshot ops: the snapshot; snapwrite: the
				 * operation done in it */
	int vof;		/* snapshot: of "s<vof>", -1 the live one */
};

struct snap {
	char *text;
	size_t len;
	struct h128 h;
	unsigned ops_done;
	bool back2014;		/* committed after a compaction, 2014 again */
};

/* The model of a snapshot: a copy of the version it was taken of, at
 * its creation (without the orphans and open counts, the live version's
 * own), changed by the writes to it only. */
#define NSNAP 4			/* snapshots s0..s3 (name order: slot order) */
struct vsnap {
	bool used;
	struct model m;
	struct mtimes t;	/* its times at the last commit */
};

struct work {
	uint64_t id;
	struct tux3_volume *vol;
	struct model m;		/* the live version */
	struct vsnap vs[NSNAP];
	struct model *cur;	/* what the operations act on: m, or the
				 * model of the snapshot selected */
	/* a snapshot delete running: the snapshot + 1, and its commits (the
	 * first records the plan: the snapshot is gone from then on, its
	 * delete pending until the second) */
	unsigned deleting, del_commits;
	bool pending;
	struct recorder *rec;
	struct snap *snaps;
	size_t nsnaps;
	unsigned ops_done;
	unsigned errors;	/* library and model disagreed */
	bool dx_seen;		/* --dir-index: a state had D indexed */
	struct sbuf tmp;
	char desc[512];		/* the workload, for reports */
	/* renames done, for the diagnosis of a differing state */
	struct { tux3_ino_t ino; unsigned d1, d2; char n1[NAME_MAX_CS], n2[NAME_MAX_CS]; }
		renames[8];
	unsigned nrenames;
};

static void work_error(struct work *w, unsigned k, const struct op *o,
		       const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void work_error(struct work *w, unsigned k, const struct op *o,
		       const char *fmt, ...)
{
	char text[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (w->errors++ < 5)
		printf("WORKLOAD ERROR: workload %" PRIu64 " (%s) op %u %s %s: "
		       "%s\n", w->id, w->desc, k, op_names[o->kind], o->name,
		       text);
}

/* The tag of the snapshot named name in the volume's table (0: none):
 * what tux3_version_select finds, without touching the error state (a
 * commit inside an operation calls on_commit). */
static uint32_t snap_tag(struct tux3_volume *vol, const char *name)
{
	const struct vtree *vt = vol->vt;
	for (unsigned l = 1; vt && l < vt->top; l++)
		if (vtree_used(vt, l) && !vtree_ghost(vt, l) &&
		    !(vt->v[l].flags & VERSION_DYING) &&
		    !strcmp(vt->v[l].name, name))
			return vt->v[l].tag;
	return 0;
}

/* The times version tag (0: the live one) has for m's nodes. */
static void model_times(struct work *w, const struct model *m, uint32_t tag,
			struct mtimes *t)
{
	uint32_t selected = w->vol->vtag;
	w->vol->vtag = tag;
	memset(t, 0, sizeof(*t));
	for (unsigned i = 0; i < MN; i++) {
		struct tux3_stat st;
		if (!m->n[i].used)
			continue;
		int err = tux3_stat(w->vol, m->n[i].ino, &st);
		if (err) {
			t->err[i] = err;
			tux3_clear_error(w->vol);
			continue;
		}
		t->mt[i] = st.mtime_ns;
		t->ct[i] = st.ctime_ns;
		t->at[i] = st.atime_ns;	/* mtime without --atime */
	}
	w->vol->vtag = selected;
}

/* The snapshot of delta seq: the model as it stands (the operations
 * done) with the times the volume has, as a canonical text: the live
 * version, then every snapshot (see model_text_snap). */
static void model_now(struct work *w)
{
	struct mtimes t;
	model_times(w, &w->m, 0, &t);
	model_text(&w->tmp, &w->m, &t);
	if (w->pending)
		sb_printf(&w->tmp, "%s", pending_line);
	for (unsigned i = 0; i < NSNAP; i++) {
		char name[16];
		if (!w->vs[i].used)
			continue;
		snprintf(name, sizeof(name), "s%u", i);
		/* a delete changes no other snapshot: their times are those
		 * before it (what the library reads between its commits is
		 * not the model's business) */
		if (w->deleting) {
			model_text_snap(&w->tmp, &w->vs[i].m, &w->vs[i].t, name);
			continue;
		}
		uint32_t tag = snap_tag(w->vol, name);
		if (!tag) {
			struct op o = { .kind = OP_SNAPSHOT };
			snprintf(o.name, sizeof(o.name), "%s", name);
			work_error(w, w->ops_done, &o, "the model has the "
				   "snapshot, the volume's table does not");
		}
		model_times(w, &w->vs[i].m, tag, &w->vs[i].t);
		model_text_snap(&w->tmp, &w->vs[i].m, &w->vs[i].t, name);
	}
}

/* snapshot operations done (the library agreeing) */
static struct {
	uint64_t create, del, write, rollback, failed;
	uint64_t back2014;	/* deletes that took the volume back to the
				 * 2014 format (the last snapshot went) */
} snapst;

static void take_snapshot(struct work *w, uint64_t seq)
{
	model_now(w);
	if (seq >= w->nsnaps) {
		w->snaps = xrealloc(w->snaps, (seq + 1) * sizeof(*w->snaps));
		memset(w->snaps + w->nsnaps, 0,
		       (seq + 1 - w->nsnaps) * sizeof(*w->snaps));
		w->nsnaps = seq + 1;
	}
	struct snap *s = &w->snaps[seq];
	free(s->text);
	s->text = xmalloc(w->tmp.len + 1);
	memcpy(s->text, w->tmp.p, w->tmp.len);
	s->text[w->tmp.len] = 0;
	s->len = w->tmp.len;
	s->h = hash128(s->text, s->len, 7);
	s->ops_done = w->ops_done;
	s->back2014 = snapst.back2014 && w->vol && !vtable_marked(w->vol);
}

static void on_commit(struct tux3_volume *vol, void *ctx)
{
	struct work *w = ctx;
	/* a snapshot delete: its first commit records the plan, the point
	 * of no return (the snapshot can no longer be selected); the second
	 * finishes it */
	if (w->deleting && ++w->del_commits == 1) {
		struct vsnap *v = &w->vs[w->deleting - 1];
		model_free(&v->m);
		v->used = false;
		/* pending while the plan has labels to remove: a snapshot
		 * with two snapshots of its own only becomes a ghost, and
		 * nothing is left for the second commit to finish (the
		 * model keeps no label tree: the table says which) */
		w->pending = vol->vt && vol->vt->dying;
	} else if (w->deleting) {
		w->pending = false;
		/* the last snapshot gone: this commit is the 2014 format */
		bool any = false;
		for (unsigned i = 0; i < NSNAP; i++)
			any |= w->vs[i].used;
		if (!any && vtable_marked(vol)) {
			struct op o = { .kind = OP_SNAPDELETE };
			work_error(w, w->ops_done, &o, "commit %" PRIu64 ": no "
				   "snapshot is left, yet the volume keeps "
				   "its versions", w->rec->commits);
		}
		if (!any)
			snapst.back2014++;
	}
	/* (a delete running keeps its plan to itself: vol->vpending is the
	 * one an open found) */
	bool pending = vol->vt && vol->vt->dying;
	if (pending != w->pending) {
		struct op o = { .kind = OP_SNAPDELETE };
		work_error(w, w->ops_done, &o, "commit %" PRIu64 ": the volume "
			   "has %sa pending delete, the model %s",
			   w->rec->commits, pending ? "" : "no ",
			   w->pending ? "has" : "not");
	}
	take_snapshot(w, w->rec->commits);
}

/* Resolve (dir, name) in the model and in the library: they must agree.
 * Returns the model node, -1 when neither has it, -2 on disagreement. */
static int resolve(struct work *w, unsigned k, const struct op *o,
		   tux3_ino_t *ino)
{
	int e = model_entry(w->cur, o->dir, o->name);
	int err = tux3_lookup(w->vol, w->cur->n[o->dir].ino, o->name,
			      strlen(o->name), ino);
	tux3_clear_error(w->vol);
	if (e < 0) {
		if (err != -ENOENT) {
			work_error(w, k, o, "lookup gave %d, model: absent", err);
			return -2;
		}
		return -1;
	}
	unsigned n = w->cur->e[e].node;
	if (err || *ino != w->cur->n[n].ino) {
		work_error(w, k, o, "lookup gave %d ino %" PRIu64 ", model: "
			   "ino %" PRIu64, err, err ? 0 : *ino, w->cur->n[n].ino);
		return -2;
	}
	return (int)n;
}

static void check_result(struct work *w, unsigned k, const struct op *o,
			 long long got, long long want)
{
	if (got != want) {
		char text[300];
		tux3_error_text(w->vol, text, sizeof(text));
		work_error(w, k, o, "library returned %lld, model expects %lld "
			   "(%s)", got, want, text);
	}
	tux3_clear_error(w->vol);
}

static void do_rename(struct work *w, unsigned k, const struct op *o)
{
	struct model *m = w->cur;
	int e = model_entry(m, o->dir, o->name);
	int e2 = model_entry(m, o->dir2, o->name2);
	unsigned flags = o->flags;
	int err = tux3_rename(w->vol, m->n[o->dir].ino, o->name,
			      strlen(o->name), m->n[o->dir2].ino, o->name2,
			      strlen(o->name2), flags);
	int expect = 0;
	if (e < 0) {
		check_result(w, k, o, err, -ENOENT);
		return;
	}
	unsigned src = m->e[e].node;
	bool sdir = S_ISDIR(m->n[src].mode);
	bool ddir = e2 >= 0 && S_ISDIR(m->n[m->e[e2].node].mode);
	if (e2 >= 0 && m->e[e2].node == src)
		expect = 0;
	else if (e2 >= 0 && flags == TUX3_RENAME_NOREPLACE)
		expect = -EEXIST;
	else if (e2 < 0 && flags == TUX3_RENAME_EXCHANGE)
		expect = -ENOENT;
	else if (sdir && o->dir != o->dir2 && in_subtree(m, src, o->dir2))
		expect = -EINVAL;
	else if (flags == TUX3_RENAME_EXCHANGE && ddir && o->dir != o->dir2 &&
		 in_subtree(m, m->e[e2].node, o->dir))
		expect = -EINVAL;
	else if (flags != TUX3_RENAME_EXCHANGE && e2 >= 0 && ddir && !sdir)
		expect = -EISDIR;
	else if (flags != TUX3_RENAME_EXCHANGE && e2 >= 0 && !ddir && sdir)
		expect = -ENOTDIR;
	else if (flags != TUX3_RENAME_EXCHANGE && ddir &&
		 !dir_empty(m, m->e[e2].node))
		expect = -ENOTEMPTY;
	check_result(w, k, o, err, expect);
	if (err || expect || (e2 >= 0 && m->e[e2].node == src))
		return;
	if (w->nrenames < 8) {
		w->renames[w->nrenames].ino = m->n[src].ino;
		w->renames[w->nrenames].d1 = o->dir;
		w->renames[w->nrenames].d2 = o->dir2;
		strcpy(w->renames[w->nrenames].n1, o->name);
		strcpy(w->renames[w->nrenames].n2, o->name2);
		w->nrenames++;
	}
	if (flags == TUX3_RENAME_EXCHANGE) {
		unsigned dst = m->e[e2].node;
		m->e[e].node = dst;
		m->e[e2].node = src;
		if (o->dir != o->dir2 && sdir != ddir) {
			m->n[o->dir].nlink += ddir ? 1 : -1;
			m->n[o->dir2].nlink += sdir ? 1 : -1;
		}
		return;
	}
	if (e2 >= 0) {
		unsigned dst = m->e[e2].node;
		m->e[e2].node = src;
		m->e[e].used = false;
		if (ddir) {
			m->n[o->dir2].nlink--;
			node_free(m, dst);
		} else {
			drop_link(m, dst);
		}
	} else {
		m->e[e].dir = o->dir2;
		strcpy(m->e[e].name, o->name2);
	}
	if (sdir && o->dir != o->dir2) {
		m->n[o->dir].nlink--;
		m->n[o->dir2].nlink++;
	}
}

static void do_op(struct work *w, unsigned k, const struct op *o);


/*
 * Snapshot create and delete commit what is pending first (a sync), then
 * commit the table: the model takes or drops the snapshot there.  Create
 * commits once, with the snapshot; delete twice (see on_commit).
 */
static void do_snapshot_op(struct work *w, unsigned k, const struct op *o)
{
	struct tux3_volume *vol = w->vol;
	struct vsnap *v = &w->vs[o->vs];
	char name[16], of[16] = "";
	int err, expect;
	snprintf(name, sizeof(name), "s%u", o->vs);
	if (o->vof >= 0)
		snprintf(of, sizeof(of), "s%d", o->vof);
	switch (o->kind) {
	case OP_SNAPSHOT: {
		expect = v->used ? -EEXIST : o->vof >= 0 &&
			 !w->vs[o->vof].used ? -ENOENT : 0;
		check_result(w, k, o, tux3_sync(vol), 0);
		uint64_t commits = w->rec->commits;
		if (!expect) {
			const struct model *src = o->vof >= 0 ?
						  &w->vs[o->vof].m : &w->m;
			model_copy(&v->m, src);
			for (unsigned i = 0; i < MN; i++) {
				if (v->m.n[i].used && !v->m.n[i].nlink)
					node_free(&v->m, i);
				v->m.n[i].opens = 0;
			}
			v->used = true;
		}
		err = tux3_snapshot_create(vol, name, of[0] ? of : NULL);
		check_result(w, k, o, err, expect);
		if (err && !expect) {
			model_free(&v->m);
			v->used = false;
		}
		if (!err && w->rec->commits != commits + 1)
			work_error(w, k, o, "the create committed %" PRIu64
				   " deltas, the model expects 1",
				   w->rec->commits - commits);
		if (err)
			snapst.failed++;
		else
			snapst.create++;
		return;
	}
	case OP_ROLLBACK: {
		/* the generator picks it only with no file of the live
		 * version open: the live model becomes the snapshot's */
		struct model before = { 0 };
		expect = v->used ? 0 : -ENOENT;
		check_result(w, k, o, tux3_sync(vol), 0);
		uint64_t commits = w->rec->commits;
		model_copy(&before, &w->m);
		if (!expect)
			model_copy(&w->m, &v->m);
		err = tux3_snapshot_rollback(vol, name, NULL);
		check_result(w, k, o, err, expect);
		if (err)
			model_copy(&w->m, &before);
		model_free(&before);
		if (w->rec->commits > commits + 1)
			work_error(w, k, o, "the rollback committed %" PRIu64
				   " deltas, the model expects at most 1",
				   w->rec->commits - commits);
		if (err)
			snapst.failed++;
		else
			snapst.rollback++;
		return;
	}
	case OP_SNAPDELETE:
		expect = v->used ? 0 : -ENOENT;
		check_result(w, k, o, tux3_sync(vol), 0);
		model_now(w);	/* the snapshots' times before the delete */
		if (!expect) {
			w->deleting = o->vs + 1;
			w->del_commits = 0;
		}
		err = tux3_snapshot_delete(vol, name);
		check_result(w, k, o, err, expect);
		if (!expect && w->del_commits != 2)
			work_error(w, k, o, "the delete committed %u deltas, "
				   "the model expects 2", w->del_commits);
		if (!expect && v->used) {	/* no commit came */
			model_free(&v->m);
			v->used = false;
		}
		w->deleting = 0;
		w->pending = false;
		if (err)
			snapst.failed++;
		else
			snapst.del++;
		return;
	case OP_SNAPWRITE: {
		err = tux3_version_select(vol, name);
		check_result(w, k, o, err, v->used ? 0 : -ENOENT);
		if (err || !v->used) {
			snapst.failed++;
			return;
		}
		snapst.write++;
		struct op in = *o;
		in.kind = o->inner;
		w->cur = &v->m;
		do_op(w, k, &in);
		w->cur = &w->m;
		check_result(w, k, o, tux3_version_select(vol, NULL), 0);
		return;
	}
	}
}

/* Run operation k on the volume and on the model. */
static void do_op(struct work *w, unsigned k, const struct op *o)
{
	struct model *m = w->cur;
	struct tux3_volume *vol = w->vol;
	tux3_ino_t ino = 0;
	int n = -1, e = -1, err;
	static uint8_t buf[MAXDATA];

	switch (o->kind) {
	case OP_CREATE: case OP_MKDIR: case OP_SYMLINK: {
		bool exists = model_entry(m, o->dir, o->name) >= 0;
		if (!exists && ((n = free_node(m)) < 0 ||
				(e = free_entry(m)) < 0))
			return;	/* the model is full: not done */
		tux3_ino_t dino = m->n[o->dir].ino;
		if (o->kind == OP_CREATE)
			err = tux3_create(vol, dino, o->name, strlen(o->name),
					  0644, 10, 20, &ino);
		else if (o->kind == OP_MKDIR)
			err = tux3_mkdir(vol, dino, o->name, strlen(o->name),
					 0755, 10, 20, &ino);
		else
			err = tux3_symlink(vol, dino, o->name, strlen(o->name),
					   o->target, 10, 20, &ino);
		check_result(w, k, o, err, exists ? -EEXIST : 0);
		if (exists || err)
			return;
		struct mnode *x = &m->n[n];
		memset(x, 0, sizeof(*x));
		x->used = true;
		x->uid = 10;
		x->gid = 20;
		x->ino = ino;
		if (o->kind == OP_CREATE) {
			x->mode = S_IFREG | 0644;
			x->nlink = 1;
			x->data = xcalloc(1, MAXDATA);
		} else if (o->kind == OP_MKDIR) {
			x->mode = S_IFDIR | 0755;
			x->nlink = 2;
			m->n[o->dir].nlink++;
		} else {
			x->mode = S_IFLNK | 0777;
			x->nlink = 1;
			snprintf(x->target, sizeof(x->target), "%s", o->target);
		}
		m->e[e] = (struct mentry){ .used = true, .dir = o->dir,
					   .node = (unsigned)n };
		strcpy(m->e[e].name, o->name);
		return;
	}
	case OP_UNLINK: case OP_RMDIR: {
		e = model_entry(m, o->dir, o->name);
		tux3_ino_t dino = m->n[o->dir].ino;
		bool rmdir = o->kind == OP_RMDIR;
		err = rmdir ? tux3_rmdir(vol, dino, o->name, strlen(o->name)) :
			      tux3_unlink(vol, dino, o->name, strlen(o->name));
		if (e < 0) {
			check_result(w, k, o, err, -ENOENT);
			return;
		}
		n = (int)m->e[e].node;
		bool isdir = S_ISDIR(m->n[n].mode);
		int expect = rmdir ? (!isdir ? -ENOTDIR :
				      !dir_empty(m, (unsigned)n) ? -ENOTEMPTY : 0) :
				     (isdir ? -EISDIR : 0);
		check_result(w, k, o, err, expect);
		if (err || expect)
			return;
		m->e[e].used = false;
		if (isdir) {
			m->n[o->dir].nlink--;
			node_free(m, (unsigned)n);
		} else {
			drop_link(m, (unsigned)n);
		}
		return;
	}
	case OP_RENAME:
		do_rename(w, k, o);
		return;
	case OP_SYNC:
		check_result(w, k, o, tux3_sync(vol), 0);
		return;
	case OP_UNIFY:
		check_result(w, k, o, tux3_unify(vol), 0);
		return;
	case OP_IRELEASE: {
		n = o->node;
		if (n < 0 || !m->n[n].used || !m->n[n].opens)
			return;
		check_result(w, k, o, tux3_irelease(vol, m->n[n].ino), 0);
		if (!--m->n[n].opens && !m->n[n].nlink)
			node_free(m, (unsigned)n);
		return;
	}
	case OP_SNAPSHOT: case OP_SNAPDELETE: case OP_SNAPWRITE:
	case OP_ROLLBACK:
		do_snapshot_op(w, k, o);
		return;
	}

	/* the rest act on an existing name */
	n = resolve(w, k, o, &ino);
	if (n < 0)
		return;
	struct mnode *x = &m->n[n];
	switch (o->kind) {
	case OP_WRITE: case OP_OVERWRITE:
		if (!S_ISREG(x->mode) || o->pos + o->len > MAXDATA)
			return;
		fill_pattern(buf, o->len, o->seed);
		check_result(w, k, o, tux3_write(vol, ino, buf, o->len, o->pos),
			     (long long)o->len);
		memcpy(x->data + o->pos, buf, o->len);
		if (o->pos + o->len > x->size)
			x->size = o->pos + o->len;
		return;
	case OP_TRUNCATE:
		if (!S_ISREG(x->mode) || o->pos > MAXDATA)
			return;
		check_result(w, k, o, tux3_truncate(vol, ino, o->pos), 0);
		if (o->pos < x->size)
			memset(x->data + o->pos, 0, x->size - o->pos);
		x->size = o->pos;
		return;
	case OP_LINK: {
		bool exists = model_entry(m, o->dir2, o->name2) >= 0;
		if (!exists && (e = free_entry(m)) < 0)
			return;
		err = tux3_link(vol, ino, m->n[o->dir2].ino, o->name2,
				strlen(o->name2));
		int expect = S_ISDIR(x->mode) ? -EPERM : exists ? -EEXIST : 0;
		check_result(w, k, o, err, expect);
		if (err || expect)
			return;
		x->nlink++;
		m->e[e] = (struct mentry){ .used = true, .dir = o->dir2,
					   .node = (unsigned)n };
		strcpy(m->e[e].name, o->name2);
		return;
	}
	case OP_SETXATTR: {
		uint8_t v[XMAX];
		unsigned len = (unsigned)(o->len > XMAX ? XMAX : o->len);
		fill_pattern(v, len, o->seed);
		check_result(w, k, o, tux3_setxattr(vol, ino, xnames[o->xi], v,
						    len, 0), 0);
		x->xhas[o->xi] = true;
		x->xlen[o->xi] = len;
		memcpy(x->xval[o->xi], v, len);
		return;
	}
	case OP_REMOVEXATTR:
		check_result(w, k, o, tux3_removexattr(vol, ino, xnames[o->xi]),
			     x->xhas[o->xi] ? 0 : -ENODATA);
		x->xhas[o->xi] = false;
		return;
	case OP_CHMOD: {
		/* with --atime also an access time (a no-op elsewhere),
		 * which the model takes from the volume like the others */
		struct tux3_setattr sa = { .valid = TUX3_SET_MODE |
					   TUX3_SET_ATIME,
					   .mode = o->flags & 07777,
					   .atime_ns = 1700000000000000000LL +
						       (int64_t)o->flags };
		check_result(w, k, o, tux3_setattr(vol, ino, &sa), 0);
		x->mode = (x->mode & S_IFMT) | sa.mode;
		return;
	}
	case OP_IOPEN:
		if (!S_ISREG(x->mode))
			return;
		check_result(w, k, o, tux3_iopen(vol, ino), 0);
		x->opens++;
		return;
	}
}

/* ------------------------------------------------------------------ */
/* workloads                                                           */

#define T0 1700000000000000000LL	/* ns: every time is fixed */

enum { P_NONE, P_FSYNC, P_SYNC, P_COUNT };
static const char *const persist_names[P_COUNT] = { "none", "fsync", "sync" };

/* Model nodes of the ACE setup: / /A /B /A/foo /A/bar /B/foo /B/bar */
enum { N_ROOT, N_A, N_B };
/* --dir-index: the directory D (the node after the setup's six files),
 * its entries at the start (three blocks of entries, one short: the
 * create that opens the fourth block builds the index), the files they
 * link, the names the workload draws from for D.  The names are 15
 * bytes at 512-byte blocks (32-byte entries, 16 a block) and 47 from
 * 1 KiB (64-byte entries: 16 a block at 1 KiB, 64 at 4 KiB), so that a
 * four-block D fits the model at every block size. */
#define N_D 7
#define DX_FILES 6
static unsigned dx_entry_bytes(void)
{
	return opt.blockbits == 9 ? 32 : 64;
}

static unsigned dx_base(void)
{
	return 3 * ((1u << opt.blockbits) / dx_entry_bytes()) - 1;
}

/* A name the workload draws for D: one of 100, the last 47 of the
 * base's and 53 new ones, at every block size */
static unsigned dx_pick(struct rng *r)
{
	return dx_base() - 47 + rnd(r, 100);
}

static void dx_name(char *name, unsigned i)
{
	/* 12 bytes of entry head, the name, rounded up to 8 bytes */
	unsigned len = dx_entry_bytes() - 12 - 5;
	snprintf(name, NAME_MAX_CS, "dxentry%08u%.*s", i % 100000000u, len - 15,
		 "-----------------------------------------------");
}

/* Each ACE operation with its arguments, fixed. */
static const struct op ace_ops[ACE_NOPS] = {
	[OP_CREATE] = { .kind = OP_CREATE, .dir = N_B, .name = "new" },
	[OP_MKDIR] = { .kind = OP_MKDIR, .dir = N_A, .name = "sub" },
	/* foo holds 8 KiB: write extends it, overwrite stays inside */
	[OP_WRITE] = { .kind = OP_WRITE, .dir = N_A, .name = "foo",
		       .pos = 8192, .len = 9000, .seed = 11 },
	[OP_OVERWRITE] = { .kind = OP_OVERWRITE, .dir = N_A, .name = "foo",
			   .pos = 1000, .len = 3000, .seed = 12 },
	[OP_TRUNCATE] = { .kind = OP_TRUNCATE, .dir = N_A, .name = "foo",
			  .pos = 2500 },
	[OP_LINK] = { .kind = OP_LINK, .dir = N_A, .name = "foo", .dir2 = N_B,
		      .name2 = "lnk" },
	[OP_UNLINK] = { .kind = OP_UNLINK, .dir = N_A, .name = "bar" },
	/* across directories, replacing /B/bar */
	[OP_RENAME] = { .kind = OP_RENAME, .dir = N_A, .name = "foo",
			.dir2 = N_B, .name2 = "bar" },
	[OP_SYMLINK] = { .kind = OP_SYMLINK, .dir = N_B, .name = "sym",
			 .target = "../A/foo" },
	[OP_SETXATTR] = { .kind = OP_SETXATTR, .dir = N_A, .name = "bar",
			  .xi = 2, .len = 20, .seed = 13 },
	[OP_REMOVEXATTR] = { .kind = OP_REMOVEXATTR, .dir = N_A, .name = "bar",
			     .xi = 1 },
};

#define ACE_CHOICES (ACE_NOPS * P_COUNT)	/* per position */
#define ACE_MAXLEN 3

static uint64_t ace_total(unsigned maxlen)
{
	uint64_t t = 0, p = 1;
	for (unsigned l = 1; l <= maxlen; l++) {
		p *= ACE_CHOICES;
		t += p;
	}
	return t;
}

/* Sequence number id: its length and its (op, persistence) choices. */
static unsigned ace_decode(uint64_t id, unsigned *ops, unsigned *persist)
{
	uint64_t p = ACE_CHOICES;
	unsigned len = 1;
	while (id >= p) {
		id -= p;
		p *= ACE_CHOICES;
		len++;
	}
	for (unsigned i = len; i-- > 0;) {
		unsigned c = (unsigned)(id % ACE_CHOICES);
		id /= ACE_CHOICES;
		ops[i] = c / P_COUNT;
		persist[i] = c % P_COUNT;
	}
	return len;
}

struct base {
	uint8_t *img;
	uint64_t bytes;
	struct model m;
	unsigned blockbits;
	uint64_t volblocks;
	struct h128 *sh, h;	/* per-sector hashes and their XOR */
};

static struct tux3_volume *open_rw(const char *path)
{
	char msg[400];
	struct tux3_volume *vol = NULL;
	int err = tux3_open_err(path, TUX3_OPEN_RDWR, &vol, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "crashsim: open %s: %s\n", path, msg);
		exit(2);
	}
	return vol;
}

static void put_image(const char *path, const uint8_t *img, uint64_t bytes)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)bytes) < 0) {
		fprintf(stderr, "crashsim: %s: %s\n", path, strerror(errno));
		exit(2);
	}
	write_all(fd, img, bytes, 0);
	close(fd);
}

/*
 * The volume before any workload: mkfs, then the setup done through the
 * library with the model beside it, committed.  ACE: /A and /B with two
 * files each (foo 8 KiB, bar 3000 bytes with an xattr).  Random: the
 * same, larger volume.
 */
static void make_dx_base(struct work *w);

static void make_base(struct base *b, bool ace)
{
	unsigned bits = opt.blockbits;
	uint64_t bytes = ace ? (bits >= 12 ? 4ULL << 20 : 2ULL << 20) :
			       (bits >= 12 ? 8ULL << 20 : 4ULL << 20);
	if (bytes >> bits < 64)
		bytes = 64ULL << bits;
	b->blockbits = bits;
	b->volblocks = bytes >> bits;
	b->bytes = bytes;
	int fd = open(wpath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)bytes) < 0) {
		fprintf(stderr, "crashsim: %s: %s\n", wpath, strerror(errno));
		exit(2);
	}
	close(fd);
	struct tux3_mkfs_params p = { .blockbits = bits,
				      .volblocks = b->volblocks,
				      .time_ns = T0,
				      .compat = opt.features,
				      .ro_compat = opt.dir_index ?
					TUX3_FEATURE_RO_COMPAT_DIR_INDEX : 0,
				      .incompat = opt.atime ?
						  TUX3_FEATURE_INCOMPAT_ATIME :
						  0 };
	memcpy(p.uuid, "crashsim-uuid-01", 16);
	snprintf(p.label, sizeof(p.label), "crashsim");
	char err[300];
	if (tux3_mkfs(wpath, &p, err, sizeof(err))) {
		fprintf(stderr, "crashsim: mkfs: %s\n", err);
		exit(2);
	}
	struct work w = { .id = 0 };
	w.cur = &w.m;
	w.vol = open_rw(wpath);
	tux3_set_time(w.vol, T0);
	snprintf(w.desc, sizeof(w.desc), "setup");
	struct mnode *root = &w.m.n[0];
	root->used = true;
	root->mode = S_IFDIR | 0755;
	root->nlink = 2;
	root->ino = TUX3_ROOT_INO;
	struct tux3_stat st;
	if (!tux3_stat(w.vol, TUX3_ROOT_INO, &st))
		root->mode = st.mode, root->uid = st.uid, root->gid = st.gid;
	static const struct op setup[] = {
		{ .kind = OP_MKDIR, .dir = N_ROOT, .name = "A" },
		{ .kind = OP_MKDIR, .dir = N_ROOT, .name = "B" },
		{ .kind = OP_CREATE, .dir = N_A, .name = "foo" },
		{ .kind = OP_CREATE, .dir = N_A, .name = "bar" },
		{ .kind = OP_CREATE, .dir = N_B, .name = "foo" },
		{ .kind = OP_CREATE, .dir = N_B, .name = "bar" },
		{ .kind = OP_WRITE, .dir = N_A, .name = "foo", .len = 8192,
		  .seed = 1 },
		{ .kind = OP_WRITE, .dir = N_A, .name = "bar", .len = 3000,
		  .seed = 2 },
		{ .kind = OP_WRITE, .dir = N_B, .name = "foo", .len = 8192,
		  .seed = 3 },
		{ .kind = OP_WRITE, .dir = N_B, .name = "bar", .len = 3000,
		  .seed = 4 },
		{ .kind = OP_SETXATTR, .dir = N_A, .name = "bar", .xi = 1,
		  .len = 12, .seed = 5 },
		{ .kind = OP_SETXATTR, .dir = N_B, .name = "foo", .xi = 0,
		  .len = 7, .seed = 6 },
	};
	for (unsigned i = 0; i < sizeof(setup) / sizeof(setup[0]); i++)
		do_op(&w, i, &setup[i]);
	if (opt.dir_index)
		make_dx_base(&w);
	if (w.errors) {
		fprintf(stderr, "crashsim: the setup failed\n");
		exit(2);
	}
	if (tux3_umount(w.vol)) {
		fprintf(stderr, "crashsim: setup: commit failed\n");
		exit(2);
	}
	b->img = xmalloc(bytes);
	fd = open(wpath, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror("crashsim: open");
		exit(2);
	}
	read_all(fd, b->img, bytes, 0);
	close(fd);
	memset(&b->m, 0, sizeof(b->m));
	model_copy(&b->m, &w.m);
	model_free(&w.m);
	free(w.tmp.p);
}

/* --dir-index: D, DX_FILES files in it and links to them up to
 * dx_base() entries: three blocks of entries, one short of filling
 * them, so that the create that opens the fourth builds the index. */
static void make_dx_base(struct work *w)
{
	unsigned k = 100;
	struct op o = { .kind = OP_MKDIR, .dir = N_ROOT, .name = "D" };
	do_op(w, k++, &o);
	if (model_entry(&w->m, N_ROOT, "D") < 0 ||
	    w->m.e[model_entry(&w->m, N_ROOT, "D")].node != N_D) {
		fprintf(stderr, "crashsim: --dir-index: D is not node %u\n",
			N_D);
		exit(2);
	}
	for (unsigned i = 0; i < dx_base(); i++) {
		struct op c = { .dir = N_D, .dir2 = N_D };
		if (i < DX_FILES) {
			c.kind = OP_CREATE;
			dx_name(c.name, i);
		} else {
			c.kind = OP_LINK;
			dx_name(c.name, i % DX_FILES);
			dx_name(c.name2, i);
		}
		do_op(w, k++, &c);
	}
	struct tux3_dir_index_info info;
	if (!tux3_dir_index_info(w->vol, w->m.n[N_D].ino, &info, NULL, NULL) &&
	    (info.present || info.blocks >= 4)) {
		fprintf(stderr, "crashsim: --dir-index: the base's D already "
			"has %" PRIu64 " blocks%s\n", info.blocks,
			info.present ? " and an index" : "");
		exit(2);
	}
}

/* --dir-index: D has an index that is current. */
static int chain_extent(void *ctx, tux3_ino_t ino, uint64_t logical,
			tux3_block_t physical, uint64_t count,
			uint32_t version, tux3_block_t leafblock)
{
	bool *seen = ctx;
	(void)ino; (void)logical; (void)physical; (void)count;
	(void)leafblock;
	if (version == TUX3_EXTENT_SPILL)
		seen[0] = true;
	if (version == TUX3_EXTENT_ELIST)
		seen[1] = true;
	return 0;
}

/* Does an inode keep attributes (format.md 17.3b), or a block's
 * elements (17.3c), past its leaf? */
static void chains_present(struct tux3_volume *vol, bool *spill,
			   bool *elist)
{
	struct tux3_walk_ops ops = { .extent = chain_extent };
	bool seen[2] = { false, false };
	(void)tux3_walk(vol, &ops, seen);
	tux3_clear_error(vol);
	*spill = seen[0];
	*elist = seen[1];
}

static bool dx_present(struct tux3_volume *vol, tux3_ino_t dir)
{
	struct tux3_dir_index_info info;
	return !tux3_dir_index_info(vol, dir, &info, NULL, NULL) &&
	       info.present && !info.stale && !info.damaged;
}

/* Start a workload: the base image, the volume, recorder and model. */
static void work_begin(struct work *w, const struct base *b,
		       struct recorder *rec, uint64_t id)
{
	for (size_t i = 0; i < w->nsnaps; i++)
		free(w->snaps[i].text);
	free(w->snaps);
	struct sbuf tmp = w->tmp;
	model_free(&w->m);
	for (unsigned i = 0; i < NSNAP; i++)
		model_free(&w->vs[i].m);
	memset(w, 0, sizeof(*w));
	w->tmp = tmp;
	w->id = id;
	w->cur = &w->m;
	/* the work image: the base again (only what the last workload
	 * wrote differs from it) */
	static const struct base *wbase;
	if (wbase == b && !rec->err) {
		int fd = open(wpath, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			perror("crashsim: open");
			exit(2);
		}
		for (size_t i = 0; i < rec->count; i++)
			if (rec->ev[i].kind == REC_WRITE ||
			    rec->ev[i].kind == REC_FUA)
				write_all(fd, b->img + rec->ev[i].off,
					  rec->ev[i].len, rec->ev[i].off);
		close(fd);
	} else {
		put_image(wpath, b->img, b->bytes);
		wbase = b;
	}
	w->vol = open_rw(wpath);
	w->vol->vleaf_cap = opt.vleaf_cap;
	model_copy(&w->m, &b->m);
	rec_reset(rec);
	w->rec = rec;
	tux3_set_time(w->vol, T0);
	take_snapshot(w, 0);
	w->vol->dev.rec = rec;
	w->vol->on_commit = on_commit;
	w->vol->commit_ctx = w;
}

/* An fsync (a sync) returned: the last commit holds every operation
 * done, which a crash from now on must keep. */
static void fsync_returned(struct work *w, unsigned k)
{
	uint64_t seq = w->rec->commits;
	model_now(w);
	if (seq >= w->nsnaps || w->snaps[seq].len != w->tmp.len ||
	    memcmp(w->snaps[seq].text, w->tmp.p, w->tmp.len)) {
		struct op o = { .kind = OP_SYNC };
		work_error(w, k, &o, "the sync returned, but the delta it "
			   "committed (%" PRIu64 ") is not the model", seq);
	}
	rec_mark(w->rec, REC_MARK_FSYNC, k);
}

static void persist(struct work *w, unsigned k, unsigned how)
{
	if (how == P_NONE)
		return;
	int err = tux3_sync(w->vol);
	if (err) {
		struct op o = { .kind = OP_SYNC };
		check_result(w, k, &o, err, 0);
		return;
	}
	/* fsync and sync are both a full delta in this library */
	fsync_returned(w, k);
}

/* End: what is left commits (the unmount), then the volume goes. */
static void work_end(struct work *w)
{
	int err = tux3_sync(w->vol);
	if (err) {
		struct op o = { .kind = OP_SYNC };
		check_result(w, w->ops_done, &o, err, 0);
	} else {
		fsync_returned(w, w->ops_done);
	}
	w->vol->dev.rec = NULL;
	tux3_close(w->vol);
	w->vol = NULL;
}

static void print_op(unsigned k, const struct op *o)
{
	printf("op %u: %s", k, op_names[o->kind]);
	if (o->kind == OP_SNAPSHOT && o->vof < 0)
		printf(" s%u of live", o->vs);
	else if (o->kind == OP_SNAPSHOT)
		printf(" s%u of s%d", o->vs, o->vof);
	if (o->kind == OP_SNAPDELETE || o->kind == OP_ROLLBACK)
		printf(" s%u", o->vs);
	if (o->kind == OP_SNAPWRITE)
		printf(" s%u: %s", o->vs, op_names[o->inner]);
	if (o->kind < OP_SYNC || o->kind == OP_SNAPWRITE)
		printf(" dir node %u name %s pos %" PRIu64 " len %" PRIu64,
		       o->dir, o->name, o->pos, o->len);
	if (o->kind == OP_LINK || o->kind == OP_RENAME)
		printf(" -> dir node %u name %s flags %u", o->dir2, o->name2,
		       o->flags);
	if (o->kind == OP_IRELEASE)
		printf(" node %d", o->node);
	printf("\n");
}

static void run_op(struct work *w, const struct op *o)
{
	unsigned k = w->ops_done;
	if (opt.verbose && opt.state)
		print_op(k, o);
	tux3_set_time(w->vol, T0 + (int64_t)(k + 1) * 1000000007LL);
	do_op(w, k, o);
	w->ops_done = k + 1;
	rec_mark(w->rec, REC_MARK_OP, k);
}

static void run_ace(struct work *w, const struct base *b,
		    struct recorder *rec, uint64_t id)
{
	unsigned ops[ACE_MAXLEN], per[ACE_MAXLEN];
	unsigned len = ace_decode(id, ops, per);
	work_begin(w, b, rec, id);
	size_t o = 0;
	for (unsigned i = 0; i < len; i++)
		o += (size_t)snprintf(w->desc + o, sizeof(w->desc) - o, "%s%s+%s",
				      i ? ", " : "", op_names[ops[i]],
				      persist_names[per[i]]);
	for (unsigned i = 0; i < len; i++) {
		run_op(w, &ace_ops[ops[i]]);
		persist(w, i, per[i]);
	}
	work_end(w);
}

/* A random operation on what the model holds. */
static int pick_node(struct work *w, struct rng *r, bool dir)
{
	for (int tries = 0; tries < 30; tries++) {
		unsigned i = rnd(r, MN);
		if (w->cur->n[i].used && !!S_ISDIR(w->cur->n[i].mode) == dir &&
		    (dir || w->cur->n[i].nlink))
			return (int)i;
	}
	return dir ? 0 : -1;
}

/* a name of a node in the model (for acting on it by name) */
static bool name_of(struct work *w, unsigned node, struct op *o)
{
	for (unsigned e = 0; e < ME; e++)
		if (w->cur->e[e].used && w->cur->e[e].node == node) {
			o->dir = w->cur->e[e].dir;
			strcpy(o->name, w->cur->e[e].name);
			return true;
		}
	return false;
}

/*
 * --snapshots: a snapshot operation.  Create s0..s3 (one of them in use:
 * -EEXIST) of the live version or of another snapshot (maybe not there:
 * -ENOENT), delete one (maybe not there), or select one and change a
 * file in it.  Opening files is the live version's: an unlink in a
 * snapshot spares the files the live version has open.
 */
static void random_snapshot_op(struct work *w, struct rng *r, struct op *o)
{
	unsigned x = rnd(r, 100), nused = 0;
	for (unsigned i = 0; i < NSNAP; i++)
		nused += w->vs[i].used;
	o->vs = rnd(r, NSNAP);
	o->vof = -1;
	/* mostly snapshots that exist */
	for (unsigned tries = 0; tries < 4 && nused && !w->vs[o->vs].used;
	     tries++)
		o->vs = rnd(r, NSNAP);
	if (x < 30 || !nused) {
		o->kind = OP_SNAPSHOT;
		o->vs = rnd(r, NSNAP);
		if (rnd(r, 3) == 0)
			o->vof = (int)rnd(r, NSNAP);
		snprintf(o->name, sizeof(o->name), "s%u", o->vs);
		return;
	}
	if (x < (opt.compact ? 60 : 48)) {
		o->kind = OP_SNAPDELETE;
		snprintf(o->name, sizeof(o->name), "s%u", o->vs);
		return;
	}
	bool opened = false;
	for (unsigned i = 0; i < MN; i++)
		opened |= w->m.n[i].used && w->m.n[i].opens;
	if (x < (opt.compact ? 68 : 60) && !opened) {
		o->kind = OP_ROLLBACK;
		snprintf(o->name, sizeof(o->name), "s%u", o->vs);
		return;
	}
	o->kind = OP_SNAPWRITE;
	if (!w->vs[o->vs].used)
		return;	/* -ENOENT */
	w->cur = &w->vs[o->vs].m;
	o->dir = (unsigned)pick_node(w, r, true);
	int n = pick_node(w, r, false);
	unsigned y = rnd(r, 10);
	if (n < 0 || y < 2) {
		o->inner = OP_CREATE;
	} else if (y < 7) {
		name_of(w, (unsigned)n, o);
		o->inner = y < 4 ? OP_WRITE : OP_OVERWRITE;
		o->len = 1 + rnd(r, rnd(r, 4) ? 3000 : 16384);
		o->pos = rnd(r, (unsigned)(MAXDATA - o->len));
		if (y < 4 && w->cur->n[n].size + o->len <= MAXDATA)
			o->pos = w->cur->n[n].size;	/* append */
		else if (y >= 4 && w->cur->n[n].size > o->len)
			o->pos = rnd(r, (unsigned)(w->cur->n[n].size - o->len));
	} else if (y < 9) {
		name_of(w, (unsigned)n, o);
		o->inner = OP_TRUNCATE;
		o->pos = rnd(r, 2) ? rnd(r, MAXDATA / 2) : 0;
	} else {
		name_of(w, (unsigned)n, o);
		o->inner = OP_UNLINK;
		for (unsigned i = 0; i < MN; i++)
			if (w->m.n[i].used && w->m.n[i].opens &&
			    w->m.n[i].ino == w->cur->n[n].ino)
				o->inner = OP_TRUNCATE;
	}
	if (o->inner == OP_CREATE)
		snprintf(o->name, sizeof(o->name), "n%u", rnd(r, 12));
	w->cur = &w->m;
}

/* --dir-index: half the namespace operations act in D, with its names
 * (a link or rename: its new name; a rename also its old one, half the
 * time). */
static void dx_retarget(struct rng *r, struct op *o)
{
	switch (o->kind) {
	case OP_CREATE: case OP_MKDIR: case OP_SYMLINK: case OP_UNLINK:
		if (rnd(r, 2)) {
			o->dir = N_D;
			dx_name(o->name, dx_pick(r));
		}
		break;
	case OP_RENAME:
		if (rnd(r, 2)) {
			o->dir = N_D;
			dx_name(o->name, dx_pick(r));
		}
		/* fall through */
	case OP_LINK:
		if (rnd(r, 2)) {
			o->dir2 = N_D;
			dx_name(o->name2, dx_pick(r));
		}
		break;
	}
}

static void random_op(struct work *w, struct rng *r, struct op *o)
{
	if (opt.snapshots && rnd(r, 100) < 20) {
		memset(o, 0, sizeof(*o));
		o->node = -1;
		o->seed = rng_next(r);
		random_snapshot_op(w, r, o);
		return;
	}
	unsigned x = rnd(r, 100);
	/* --xattr-max: long values, set a third of the time, on the first
	 * file that has a name: its snapshots outgrow its leaf */
	bool hot = opt.xattr_max > 32 && rnd(r, 3) == 0;
	if (hot)
		x = 66;
	/* --vleaf-cap: small writes at the start of that file, a third of
	 * the time: one block with an element for many versions */
	bool hotw = opt.vleaf_cap && rnd(r, 3) == 0;
	if (hotw)
		x = 15;
	memset(o, 0, sizeof(*o));
	o->node = -1;
	o->dir = (unsigned)pick_node(w, r, true);
	snprintf(o->name, sizeof(o->name), "n%u", rnd(r, 12));
	o->seed = rng_next(r);
	if (x < 10) {
		o->kind = OP_CREATE;
	} else if (x < 15) {
		o->kind = OP_MKDIR;
	} else if (x < 35) {
		int n = pick_node(w, r, false);
		for (unsigned i = 0; hotw && i < MN; i++)
			if (w->cur->n[i].used && !S_ISDIR(w->cur->n[i].mode) &&
			    w->cur->n[i].nlink) {
				n = (int)i;
				break;
			}
		o->kind = OP_WRITE;
		if (n < 0 || !name_of(w, (unsigned)n, o))
			o->kind = OP_CREATE;
		unsigned big = rnd(r, 4) == 0;
		o->len = 1 + rnd(r, big ? 16384 : 3000);
		o->pos = rnd(r, (unsigned)(MAXDATA - o->len));
		if (hotw) {
			o->len = 1 + rnd(r, 64);
			o->pos = rnd(r, 64);
		}
		if (rnd(r, 3) == 0 && n >= 0 && w->cur->n[n].size + o->len <=
		    MAXDATA)
			o->pos = w->cur->n[n].size;	/* append */
	} else if (x < 41) {
		int n = pick_node(w, r, false);
		o->kind = OP_TRUNCATE;
		o->pos = rnd(r, 3) ? rnd(r, MAXDATA / 2) : 0;
		if (n < 0 || !name_of(w, (unsigned)n, o))
			o->kind = OP_CREATE;
	} else if (x < 46) {
		int n = pick_node(w, r, false);
		o->kind = OP_LINK;
		o->dir2 = (unsigned)pick_node(w, r, true);
		snprintf(o->name2, sizeof(o->name2), "n%u", rnd(r, 12));
		if (n < 0 || !name_of(w, (unsigned)n, o))
			o->kind = OP_CREATE;
	} else if (x < 54) {
		o->kind = rnd(r, 4) ? OP_UNLINK : OP_RMDIR;
		/* often the last name of an open file: an orphan */
		for (unsigned i = 0; i < MN && o->kind == OP_UNLINK; i++)
			if (w->m.n[i].used && w->m.n[i].opens &&
			    w->m.n[i].nlink && rnd(r, 2)) {
				name_of(w, i, o);
				break;
			}
	} else if (x < 62) {
		o->kind = OP_RENAME;
		o->dir2 = (unsigned)pick_node(w, r, true);
		snprintf(o->name2, sizeof(o->name2), "n%u", rnd(r, 12));
		unsigned f = rnd(r, 8);
		o->flags = f == 0 ? TUX3_RENAME_NOREPLACE :
			   f == 1 ? TUX3_RENAME_EXCHANGE : 0;
	} else if (x < 66) {
		o->kind = OP_SYMLINK;
		snprintf(o->target, sizeof(o->target), "t%u/%s", rnd(r, 100),
			 o->name);
	} else if (x < 75) {
		int n = pick_node(w, r, rnd(r, 4) == 0);
		for (unsigned i = 0; hot && i < MN; i++)
			if (w->cur->n[i].used && !S_ISDIR(w->cur->n[i].mode) &&
			    w->cur->n[i].nlink) {
				n = (int)i;
				break;
			}
		o->kind = x < 72 ? OP_SETXATTR : OP_REMOVEXATTR;
		o->xi = rnd(r, NX);
		o->len = rnd(r, opt.xattr_max + 1);
		if (n < 0 || !name_of(w, (unsigned)n, o))
			o->kind = OP_CREATE;
	} else if (x < 78) {
		int n = pick_node(w, r, rnd(r, 2));
		o->kind = OP_CHMOD;
		o->flags = rnd(r, 07777);
		if (n < 0 || !name_of(w, (unsigned)n, o))
			o->kind = OP_CREATE;
	} else if (x < 83) {
		int n = pick_node(w, r, false);
		o->kind = OP_IOPEN;
		if (n < 0 || !name_of(w, (unsigned)n, o))
			o->kind = OP_CREATE;
	} else if (x < 88) {
		o->kind = OP_IRELEASE;
		for (unsigned i = 0; i < MN; i++)
			if (w->m.n[i].used && w->m.n[i].opens &&
			    (o->node < 0 || rnd(r, 2)))
				o->node = (int)i;
	} else if (x < 97) {
		o->kind = OP_SYNC;
	} else {
		o->kind = OP_UNIFY;
	}
	if (opt.dir_index)
		dx_retarget(r, o);
}

static void run_random(struct work *w, const struct base *b,
		       struct recorder *rec, uint64_t seed, unsigned nops)
{
	struct rng r;
	rng_seed(&r, seed);
	work_begin(w, b, rec, seed);
	snprintf(w->desc, sizeof(w->desc), "random seed %" PRIu64 ", %u ops%s",
		 seed, nops, opt.snapshots ? ", snapshots" : "");
	/* unify by policy often, and sometimes commit inside operations */
	w->vol->unify_log_limit = 2 + rnd(&r, 6);
	if (rnd(&r, 2))
		w->vol->commit_bound = 16 + rnd(&r, 64);
	for (unsigned i = 0; i < nops; i++) {
		struct op o;
		random_op(w, &r, &o);
		run_op(w, &o);
		/* a snapshot create or delete returns committed */
		if (o.kind == OP_SYNC || o.kind == OP_UNIFY ||
		    o.kind == OP_SNAPSHOT || o.kind == OP_SNAPDELETE ||
		    o.kind == OP_ROLLBACK)
			fsync_returned(w, i);
	}
	/* --compact: the snapshots left go, the last delete compacts */
	for (unsigned i = 0; opt.compact && i < NSNAP; i++) {
		struct op o = { .kind = OP_SNAPDELETE, .node = -1, .vs = i,
				.vof = -1 };
		if (!w->vs[i].used)
			continue;
		snprintf(o.name, sizeof(o.name), "s%u", i);
		run_op(w, &o);
		fsync_returned(w, nops + i);
	}
	work_end(w);
}

/* ------------------------------------------------------------------ */
/* crash states                                                        */

/* An image: its bytes and a hash per sector (the image hash is their
 * XOR, so that a state's hash costs only its changed sectors). */
struct img {
	uint8_t *data;
	uint64_t bytes;
	size_t nsec;
	struct h128 *sh;
	struct h128 h;
};

static struct h128 sector_hash(const uint8_t *p, uint64_t s)
{
	return hash128(p, SECTOR, s);
}

static void img_load(struct img *im, const uint8_t *data, uint64_t bytes)
{
	if (im->bytes != bytes) {
		free(im->data);
		free(im->sh);
		im->data = xmalloc(bytes);
		im->sh = xmalloc((bytes / SECTOR) * sizeof(*im->sh));
		im->bytes = bytes;
		im->nsec = bytes / SECTOR;
	}
	memcpy(im->data, data, bytes);
}

static struct h128 sector_hash(const uint8_t *p, uint64_t s);

static void base_hash(struct base *b)
{
	size_t n = b->bytes / SECTOR;
	free(b->sh);
	b->sh = xmalloc(n * sizeof(*b->sh));
	b->h = (struct h128){ 0, 0 };
	for (size_t s = 0; s < n; s++) {
		b->sh[s] = sector_hash(b->img + s * SECTOR, s);
		b->h.a ^= b->sh[s].a;
		b->h.b ^= b->sh[s].b;
	}
}


/* The sectors a state changes, with their contents. */
struct ovl {
	size_t n, cap;
	uint64_t *sec;
	uint8_t *data;
	uint32_t *slot, *gen;	/* index: sector -> slot + 1 */
	size_t icap;
	uint32_t g;
};

static void ovl_clear(struct ovl *o)
{
	o->n = 0;
	o->g++;
}

static uint8_t *ovl_find(struct ovl *o, uint64_t s)
{
	if (!o->icap)
		return NULL;
	for (size_t i = (size_t)(fmix(s) & (o->icap - 1));;
	     i = (i + 1) & (o->icap - 1)) {
		if (o->gen[i] != o->g)
			return NULL;
		if (o->sec[o->slot[i]] == s)
			return o->data + (size_t)o->slot[i] * SECTOR;
	}
}

static uint8_t *ovl_get(struct ovl *o, const struct img *base, uint64_t s)
{
	uint8_t *p = ovl_find(o, s);
	if (p)
		return p;
	if ((o->n + 1) * 2 > o->icap) {
		size_t ncap = o->icap ? o->icap * 2 : 1024;
		free(o->slot);
		free(o->gen);
		o->slot = xcalloc(ncap, sizeof(*o->slot));
		o->gen = xcalloc(ncap, sizeof(*o->gen));
		o->icap = ncap;
		o->g = 1;
		for (size_t j = 0; j < o->n; j++) {
			size_t i = (size_t)(fmix(o->sec[j]) & (ncap - 1));
			while (o->gen[i] == o->g)
				i = (i + 1) & (ncap - 1);
			o->gen[i] = o->g;
			o->slot[i] = (uint32_t)j;
		}
	}
	if (o->n == o->cap) {
		o->cap = o->cap ? o->cap * 2 : 256;
		o->sec = xrealloc(o->sec, o->cap * sizeof(*o->sec));
		o->data = xrealloc(o->data, o->cap * SECTOR);
	}
	size_t i = (size_t)(fmix(s) & (o->icap - 1));
	while (o->gen[i] == o->g)
		i = (i + 1) & (o->icap - 1);
	o->gen[i] = o->g;
	o->slot[i] = (uint32_t)o->n;
	o->sec[o->n] = s;
	p = o->data + o->n * SECTOR;
	memcpy(p, base->data + s * SECTOR, SECTOR);
	o->n++;
	return p;
}

/* Apply a write; with torn, only the touched sectors whose bit is set
 * (bit i: the i-th sector the write touches). */
static void ovl_apply(struct ovl *o, const struct img *base,
		      const struct rec_event *e, const uint8_t *torn)
{
	uint64_t first = e->off / SECTOR, last = (e->off + e->len - 1) / SECTOR;
	for (uint64_t s = first; s <= last; s++) {
		if (torn && !bit_get(torn, (size_t)(s - first)))
			continue;
		uint8_t *p = ovl_get(o, base, s);
		uint64_t lo = s * SECTOR > e->off ? s * SECTOR : e->off;
		uint64_t hi = (s + 1) * SECTOR < e->off + e->len ?
			      (s + 1) * SECTOR : e->off + e->len;
		memcpy(p + (lo - s * SECTOR), e->data + (lo - e->off), hi - lo);
	}
}

static struct h128 ovl_hash(const struct ovl *o, const struct img *base)
{
	struct h128 h = base->h;
	for (size_t j = 0; j < o->n; j++) {
		struct h128 x = sector_hash(o->data + j * SECTOR, o->sec[j]);
		h.a ^= base->sh[o->sec[j]].a ^ x.a;
		h.b ^= base->sh[o->sec[j]].b ^ x.b;
	}
	return h;
}

/* the set of states already checked: (image, expected) -> result */
struct cache {
	struct h128 *k;
	uint8_t *v;		/* 0 empty, else 1 ok, 2 bad, | 4 recovered */
	size_t n, cap;
};

static int cache_get(struct cache *c, struct h128 k)
{
	if (!c->cap)
		return 0;
	for (size_t i = (size_t)(k.a & (c->cap - 1));; i = (i + 1) & (c->cap - 1)) {
		if (!c->v[i])
			return 0;
		if (c->k[i].a == k.a && c->k[i].b == k.b)
			return c->v[i];
	}
}

/* Update an entry in place: false if there is none. */
static bool cache_set(struct cache *c, struct h128 k, int v)
{
	if (!c->cap)
		return false;
	for (size_t i = (size_t)(k.a & (c->cap - 1));; i = (i + 1) & (c->cap - 1)) {
		if (!c->v[i])
			return false;
		if (c->k[i].a == k.a && c->k[i].b == k.b) {
			c->v[i] = (uint8_t)v;
			return true;
		}
	}
}

static void cache_put(struct cache *c, struct h128 k, int v)
{
	if ((c->n + 1) * 2 > c->cap) {
		if (c->cap >= (1u << 24)) {	/* bounded: start afresh */
			memset(c->v, 0, c->cap);
			c->n = 0;
		} else {
			struct cache n = { .cap = c->cap ? c->cap * 2 : 1 << 16 };
			n.k = xcalloc(n.cap, sizeof(*n.k));
			n.v = xcalloc(n.cap, 1);
			for (size_t i = 0; i < c->cap; i++)
				if (c->v[i])
					cache_put(&n, c->k[i], c->v[i]);
			free(c->k);
			free(c->v);
			*c = n;
		}
	}
	size_t i = (size_t)(k.a & (c->cap - 1));
	while (c->v[i])
		i = (i + 1) & (c->cap - 1);
	c->k[i] = k;
	c->v[i] = (uint8_t)v;
	c->n++;
}

enum gen { G_PREFIX, G_SUBSET, G_TORN, G_TORN_SUPER, G_COUNT };
static const char *const gen_names[G_COUNT] = {
	"prefix", "subset", "torn", "torn superblock" };

struct stats {
	uint64_t states, ok, bad, checked, cached;
	uint64_t gen[G_COUNT];
	uint64_t skipped_torn_super;
	uint64_t orphan_states;	/* the expected state has orphans */
	uint64_t recoveries;	/* recoveries recorded and crashed */
	uint64_t recovery_states;
	uint64_t snap_states;	/* the expected state has snapshots */
	uint64_t pending_states;	/* ... a pending snapshot delete */
	uint64_t delete_recoveries;	/* recoveries finishing a delete */
	uint64_t back2014_states;	/* the expected state is a volume
					 * back to the 2014 format */
	uint64_t dx_states, dx_workloads;	/* --dir-index: D indexed */
	uint64_t spill_states;	/* an inode had an attribute chain */
	uint64_t elist_states;	/* a block had an element chain */
	uint64_t from_copy;	/* torn superblocks fsck takes from the copy */
	uint64_t lints, work_errors, workloads, commits, unifies, writes;
	unsigned printed;
};

static struct stats st;
static struct cache cache;

/* A state, by name. */
struct state {
	size_t c;		/* crash write index (1-based; 0: none) */
	size_t ep;		/* first write of c's epoch */
	const uint8_t *mask;	/* over writes ep..c (bit i: write ep + i) */
	const uint8_t *torn;	/* NULL, or sectors of write c that land */
	size_t ntorn;		/* bits in torn */
	unsigned floor;		/* the delta the last fsync returned with */
	enum gen gen;
};

struct sim {
	struct work *w;
	const struct base *b;
	struct img dur;		/* the durable image: the C file has it */
	int cfd;
	struct ovl ov;
	size_t *wev;		/* event index of write c is wev[c - 1] */
	size_t nw, capw;
	unsigned *wops;		/* operations done when write c was issued */
	/* the superblock writes: write index and the delta they commit */
	struct { size_t c; uint64_t seq; } *sbw;
	size_t nsbw, capsbw;
	/* per durable delta: what the state references, its log blocks */
	uint8_t **maps, **logmaps;
	size_t nmaps;
	unsigned blockbits;
	uint64_t volblocks, reserved;
	/* reproducing one state */
	bool target;
	struct state want;
	uint8_t *want_mask, *want_torn;
	bool want_prefix;
	const struct base *dur_base;	/* dur is this base (between runs) */
	/* the crash image file */
	const char *cpath;
	/* 1: crash states of the recovery of a parent state (read-write
	 * open releasing its orphans), named after it */
	unsigned depth;
	char parent[800], parent_arg[700];
	bool found;
	int target_result;	/* 1 ok, 2 bad */
	struct sbuf text;
};

static const struct rec_event *wevent(struct sim *s, size_t c)
{
	return &s->w->rec->ev[s->wev[c - 1]];
}

static void state_name(struct sim *s, const struct state *x, char *out,
		       size_t len)
{
	char m[300], t[300];
	bits_print(m, sizeof(m), x->mask, x->c >= x->ep && x->c ?
		   x->c - x->ep + 1 : 0);
	if (x->torn)
		bits_print(t, sizeof(t), x->torn, x->ntorn);
	else
		snprintf(t, sizeof(t), "0");
	unsigned op = x->c ? s->wops[x->c - 1] : 0;
	if (s->depth)
		snprintf(out, len, "recovery of [%.300s]: write %zu subset "
			 "%.150s torn %.150s", s->parent, x->c, m, t);
	else
		snprintf(out, len, "seed %" PRIu64 " op %u write %zu subset %s "
			 "torn %s", s->w->id, op, x->c, m, t);
}

static void state_arg(const struct state *x, char *out, size_t len)
{
	char m[300], t[300];
	bits_print(m, sizeof(m), x->mask, x->c >= x->ep && x->c ?
		   x->c - x->ep + 1 : 0);
	if (x->torn)
		bits_print(t, sizeof(t), x->torn, x->ntorn);
	else
		snprintf(t, sizeof(t), "0");
	snprintf(out, len, "%zu:%s:%s", x->c, m, t);
}

static void print_regression(struct sim *s, const struct state *x)
{
	char a[700], b[1500];
	state_arg(x, a, sizeof(a));
	if (s->depth)
		snprintf(b, sizeof(b), "%.700s --recover %.700s", s->parent_arg,
			 a);
	else
		snprintf(b, sizeof(b), "%s", a);
	char ops[160] = "";
	if (opt.workload == WL_RANDOM)
		snprintf(ops, sizeof(ops), " --ops %u", opt.ops);
	if (opt.features != TUX3_FEATURE_COMPAT_DEFAULT)
		snprintf(ops + strlen(ops), sizeof(ops) - strlen(ops),
			 " --features 0x%x", opt.features);
	/* the options that change the workload or the volume */
	snprintf(ops + strlen(ops), sizeof(ops) - strlen(ops), "%s%s%s",
		 opt.compact ? " --compact" : opt.snapshots ? " --snapshots" : "",
		 opt.atime ? " --atime" : "",
		 opt.dir_index ? " --dir-index" : "");
	if (opt.xattr_max != 32)
		snprintf(ops + strlen(ops), sizeof(ops) - strlen(ops),
			 " --xattr-max %u", opt.xattr_max);
	if (opt.vleaf_cap)
		snprintf(ops + strlen(ops), sizeof(ops) - strlen(ops),
			 " --vleaf-cap %u", opt.vleaf_cap);
	printf("  regression (a line for tests/crash/regressions): "
	       "--workload %s --block-size %u --seed %" PRIu64 "%s "
	       "--state %s\n",
	       opt.workload == WL_ACE ? "ace" : "random", 1u << s->blockbits,
	       s->w->id, ops, b);
}

struct fsck_ctx {
	bool torn_super;	/* the state tore the primary superblock */
	unsigned n, from_copy;
	char first[3][300];
};

/*
 * A problem fsck found.  On a torn primary superblock whose copy (15.3)
 * is whole, fsck's pass 1 restores the primary from the copy when the
 * two differ in one field alone (PASS1_SUPER_FROM_COPY): the commit the
 * copy holds was written in full before it, so that is the design
 * working, not damage (the open reads the primary's older commit, also
 * whole); counted, not failed.
 */
static int fsck_problem(void *ctx, const struct tux3_fsck_problem *p)
{
	struct fsck_ctx *f = ctx;
	if (f->torn_super && !strcmp(p->def->code, "PASS1_SUPER_FROM_COPY")) {
		f->from_copy++;
		return 0;
	}
	if (f->n < 3)
		snprintf(f->first[f->n], sizeof(f->first[0]), "%.40s: %.250s",
			 p->def->code, p->text);
	f->n++;
	return 0;
}

/* The newest delta whose commit write the state holds: -1 none. */
static int64_t state_delta(struct sim *s, size_t c)
{
	const uint8_t *sb = ovl_find(&s->ov, SB_SECTOR);
	if (!sb)
		sb = s->dur.data + TUX3_SB_OFFSET;
	for (size_t i = s->nsbw; i-- > 0;) {
		if (s->sbw[i].c > c)
			continue;
		const struct rec_event *e = wevent(s, s->sbw[i].c);
		if (e->off == TUX3_SB_OFFSET && e->len >= SECTOR &&
		    !memcmp(e->data, sb, SECTOR))
			return (int64_t)s->sbw[i].seq;
	}
	if (!memcmp(s->b->img + TUX3_SB_OFFSET, sb, SECTOR))
		return 0;
	return -1;
}

/* Materialise the state in the C file, check it, put the file back. */
static void recovery(struct sim *s, const struct state *x,
		     const struct snap *want);

static bool has_orphans(const char *text)
{
	return strstr(text, "\norphan ") != NULL;
}

static bool has_pending(const char *text)
{
	return strstr(text, "\npending delete\n") != NULL;
}

/* A prefix state with orphans or a pending snapshot delete gets its
 * recovery crashed too. */
static bool needs_recovery(const struct sim *s, const struct state *x,
			   const struct snap *want)
{
	return !s->depth && !opt.no_recovery && x->gen == G_PREFIX &&
	       (has_orphans(want->text) || has_pending(want->text));
}

/* Write the state's sectors (from: the overlay) or put the durable image
 * back over them, in runs of adjacent sectors. */
static int sec_cmp(const void *a, const void *b)
{
	uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];
	return x < y ? -1 : x > y;
}

static uint64_t (*sync_order)[2];
static uint8_t *sync_stage;
static size_t sync_cap;

static void ovl_sync(struct sim *s, bool apply)
{
	struct ovl *o = &s->ov;
	if (!o->n)
		return;
	if (o->n > sync_cap) {
		free(sync_order);
		free(sync_stage);
		sync_cap = o->n * 2;
		sync_order = xmalloc(sync_cap * sizeof(*sync_order));
		sync_stage = xmalloc(sync_cap * SECTOR);
	}
	uint64_t (*order)[2] = sync_order;
	uint8_t *stage = sync_stage;
	for (size_t j = 0; j < o->n; j++) {
		order[j][0] = o->sec[j];
		order[j][1] = j;
	}
	qsort(order, o->n, sizeof(*order), sec_cmp);
	for (size_t j = 0; j < o->n;) {
		size_t k = j + 1;
		while (k < o->n && order[k][0] == order[k - 1][0] + 1)
			k++;
		uint64_t off = order[j][0] * SECTOR;
		size_t len = (k - j) * SECTOR;
		if (apply) {
			for (size_t i = j; i < k; i++)
				memcpy(stage + (i - j) * SECTOR,
				       o->data + order[i][1] * SECTOR, SECTOR);
			write_all(s->cfd, stage, len, off);
		} else {
			write_all(s->cfd, s->dur.data + off, len, off);
		}
		j = k;
	}
}

static int check_image(struct sim *s, const struct state *x,
		       const struct snap *want, char *why, size_t whylen)
{
	ovl_sync(s, true);
	int result = 1;
	struct tux3_volume *vol = NULL;
	char msg[400];
	int err = tux3_open_err(s->cpath, TUX3_OPEN_RDONLY, &vol, msg,
				sizeof(msg));
	if (err) {
		snprintf(why, whylen, "open failed: %s", msg);
		result = 2;
		goto restore;
	}
	image_text(&s->text, vol);
	if ((opt.xattr_max > 32 || opt.vleaf_cap) && opt.snapshots) {
		bool spill, elist;
		chains_present(vol, &spill, &elist);
		st.spill_states += spill;
		st.elist_states += elist;
	}
	if (opt.dir_index && s->w->m.n[N_D].used &&
	    dx_present(vol, s->w->m.n[N_D].ino)) {
		st.dx_states++;
		s->w->dx_seen = true;
	}
	if (s->text.len != want->len || memcmp(s->text.p, want->text,
					       want->len)) {
		char d[800];
		first_diff(want->text, s->text.p, d, sizeof(d));
		/* a rename that is neither old nor new */
		const char *kind = "differs from the model";
		struct work *w = s->w;
		for (unsigned i = 0; i < w->nrenames; i++) {
			char a[64];
			snprintf(a, sizeof(a), " ino=%" PRIu64 " ",
				 w->renames[i].ino);
			if (strstr(want->text, a) && !strstr(s->text.p, a))
				kind = "a renamed inode is under neither name";
		}
		snprintf(why, whylen, "image %s: %s", kind, d);
		result = 2;
	}
	tux3_close(vol);
	if (result == 1) {
		struct fsck_ctx f = { .torn_super = x->gen == G_TORN_SUPER };
		struct tux3_fsck_ops ops = { .problem = fsck_problem };
		struct tux3_fsck_result res;
		err = tux3_fsck_run(s->cpath, TUX3_FSCK_CHECK, &ops, &f, &res, msg,
				    sizeof(msg));
		st.from_copy += f.from_copy != 0;
		if (err) {
			snprintf(why, whylen, "fsck failed: %s", msg);
			result = 2;
		} else if (res.found > f.from_copy || f.n) {
			snprintf(why, whylen, "fsck found %u problem(s): %s%s%s%s%s",
				 res.found > f.from_copy ?
					res.found - f.from_copy : f.n,
				 f.first[0],
				 f.n > 1 ? "; " : "", f.n > 1 ? f.first[1] : "",
				 f.n > 2 ? "; " : "", f.n > 2 ? f.first[2] : "");
			result = 2;
		}
	}
	/* orphans: crash inside the recovery that releases them too */
	if ((result == 1 || (s->target && opt.recover)) &&
	    needs_recovery(s, x, want) && (!s->target || opt.recover))
		recovery(s, x, want);
restore:
	ovl_sync(s, false);
	return result;
}

static void eval_state(struct sim *s, const struct state *x)
{
	if (s->target)
		s->found = true;
	ovl_clear(&s->ov);
	if (x->c) {
		for (size_t i = 0; i <= x->c - x->ep; i++)
			if (bit_get(x->mask, i))
				ovl_apply(&s->ov, &s->dur, wevent(s, x->ep + i),
					  x->ep + i == x->c ? x->torn : NULL);
	}
	st.states++;
	st.gen[x->gen]++;
	if (s->depth)
		st.recovery_states++;
	char why[1200] = "";
	int result = 0;
	int64_t d = state_delta(s, x->c);
	const struct snap *want = NULL;
	if (d < 0) {
		snprintf(why, sizeof(why), "the superblock is none of the "
			 "commits written");
		result = 2;
	} else if ((size_t)d >= s->w->nsnaps || !s->w->snaps[d].text) {
		snprintf(why, sizeof(why), "no model snapshot for delta %" PRId64,
			 d);
		result = 2;
	} else {
		want = &s->w->snaps[d];
		if (has_orphans(want->text))
			st.orphan_states++;
		if (strstr(want->text, "\nsnapshot "))
			st.snap_states++;
		if (has_pending(want->text))
			st.pending_states++;
		if (want->back2014)
			st.back2014_states++;
		if ((uint64_t)d < x->floor) {
			snprintf(why, sizeof(why), "an fsync returned after "
				 "delta %u committed, but the image holds delta %"
				 PRId64 " (operations 0..%d)", x->floor, d,
				 (int)want->ops_done - 1);
			result = 2;
		}
	}
	if (!result) {
		struct h128 ih = ovl_hash(&s->ov, &s->dur);
		struct h128 key = { ih.a ^ rotl(want->h.a, 1),
				    ih.b ^ rotl(want->h.b, 3) };
		/* 1 ok, 2 bad, | 4: its recovery was crashed too */
		int v = s->target ? 0 : cache_get(&cache, key);
		bool recover = needs_recovery(s, x, want);
		if (v && !(recover && v == 1)) {
			result = v & 3;
			st.cached++;
			if (result == 2)
				snprintf(why, sizeof(why), "(same image as a bad "
					 "state above)");
		} else {
			st.checked++;
			result = check_image(s, x, want, why, sizeof(why));
			v = result | (recover && result == 1 ? 4 : 0);
			if (!cache_set(&cache, key, v))
				cache_put(&cache, key, v);
		}
	}
	if (s->target) {
		char name[700];
		state_name(s, x, name, sizeof(name));
		printf("state %s (%s, delta %" PRId64 "): %s%s%s\n", name,
		       gen_names[x->gen], d, result == 1 ? "ok" : "BAD",
		       why[0] ? ": " : "", why);
		s->target_result = result;
		if (opt.verbose && want) {
			printf("--- model at delta %" PRId64 ":\n%s", d, want->text);
			printf("--- image:\n%.*s", (int)s->text.len,
			       s->text.p ? s->text.p : "");
		}
	}
	if (opt.list && !s->target) {
		char name[800], arg[700];
		state_name(s, x, name, sizeof(name));
		state_arg(x, arg, sizeof(arg));
		printf("%s %s (%s; delta %" PRId64 "; --state %s)\n",
		       result == 1 ? "ok" : "bad", name, gen_names[x->gen], d, arg);
	}
	if (result == 1) {
		st.ok++;
		return;
	}
	st.bad++;
	if (!s->target && st.printed++ < opt.print) {
		char name[700];
		state_name(s, x, name, sizeof(name));
		printf("BAD state %s (%s; workload %s; delta %" PRId64 "%s): "
		       "%s\n", name, gen_names[x->gen], s->w->desc, d,
		       want && has_pending(want->text) ?
		       ", a snapshot delete pending" : "", why);
		print_regression(s, x);
	}
}

/* What the durable state references, at each commit (and the start). */
static void take_map(struct sim *s, uint64_t seq)
{
	struct tux3_volume *vol = NULL;
	char msg[400];
	if (seq >= s->nmaps) {
		s->maps = xrealloc(s->maps, (seq + 1) * sizeof(*s->maps));
		s->logmaps = xrealloc(s->logmaps, (seq + 1) * sizeof(*s->logmaps));
		for (size_t i = s->nmaps; i <= seq; i++)
			s->maps[i] = s->logmaps[i] = NULL;
		s->nmaps = seq + 1;
	}
	if (tux3_open_err(s->cpath, TUX3_OPEN_RDONLY, &vol, msg, sizeof(msg)))
		return;	/* the prefix state will report it */
	uint8_t *map = NULL;
	if (!committed_map(vol, &map)) {
		uint8_t *lm = xcalloc((size_t)((s->volblocks + 7) >> 3), 1);
		for (unsigned i = 0; i < vol->logcount && vol->log; i++)
			if (vol->log[i].blocknr < s->volblocks)
				bit_set(lm, (size_t)vol->log[i].blocknr);
		free(s->maps[seq]);
		free(s->logmaps[seq]);
		s->maps[seq] = map;
		s->logmaps[seq] = lm;
	}
	tux3_close(vol);
}

static void dur_apply(struct sim *s, const struct rec_event *e)
{
	memcpy(s->dur.data + e->off, e->data, e->len);
	write_all(s->cfd, e->data, e->len, e->off);
	for (uint64_t sec = e->off / SECTOR; sec <= (e->off + e->len - 1) / SECTOR;
	     sec++) {
		s->dur.h.a ^= s->dur.sh[sec].a;
		s->dur.h.b ^= s->dur.sh[sec].b;
		s->dur.sh[sec] = sector_hash(s->dur.data + sec * SECTOR, sec);
		s->dur.h.a ^= s->dur.sh[sec].a;
		s->dur.h.b ^= s->dur.sh[sec].b;
	}
}

/* Torn variants of write c (after every earlier write of its epoch). */
static void gen_torn(struct sim *s, size_t c, size_t ep, unsigned floor,
		     struct rng *r)
{
	const struct rec_event *e = wevent(s, c);
	size_t n = (size_t)((e->off + e->len - 1) / SECTOR - e->off / SECTOR + 1);
	if (n < 2 || !opt.torn)
		return;
	bool super = e->off == TUX3_SB_OFFSET;
	if (super && opt.no_torn_super) {
		st.skipped_torn_super++;
		return;
	}
	size_t nbytes = (n + 7) / 8;
	uint8_t *mask = xcalloc((c - ep + 1 + 7) / 8, 1);
	for (size_t i = 0; i <= c - ep; i++)
		bit_set(mask, i);
	uint8_t *t = xcalloc(nbytes, 1);
	unsigned budget = opt.torn, cuts = (unsigned)(n - 1);
	unsigned each = budget > 2 ? (budget - 2) / 2 : 1;
	if (cuts > each)
		cuts = each;
	struct state x = { .c = c, .ep = ep, .mask = mask, .torn = t,
			   .ntorn = n, .floor = floor,
			   .gen = super ? G_TORN_SUPER : G_TORN };
	/* prefix cuts: the first k sectors new; suffix: the last k */
	for (unsigned side = 0; side < 2; side++)
		for (unsigned j = 1; j <= cuts; j++) {
			size_t k = cuts == n - 1 ? j : 1 + (size_t)(j - 1) *
				   (n - 1) / cuts;
			memset(t, 0, nbytes);
			for (size_t i = 0; i < n; i++)
				if (side ? i >= n - k : i < k)
					bit_set(t, i);
			eval_state(s, &x);
		}
	for (unsigned j = 2 * cuts; j < budget; j++) {
		memset(t, 0, nbytes);
		size_t ones = 0;
		for (size_t i = 0; i < n; i++)
			if (rnd(r, 2)) {
				bit_set(t, i);
				ones++;
			}
		if (ones == 0 || ones == n)
			continue;
		eval_state(s, &x);
	}
	free(t);
	free(mask);
}

/* Subsets of the epoch ep..c, crashing after its last write (the
 * prefixes are prefix states of their own). */
static void gen_subsets(struct sim *s, size_t ep, size_t c, unsigned floor,
			struct rng *r)
{
	if (c < ep)
		return;
	size_t m = c - ep + 1, nbytes = (m + 7) / 8;
	uint8_t *mask = xcalloc(nbytes, 1);
	struct state x = { .c = c, .ep = ep, .mask = mask, .floor = floor,
			   .gen = G_SUBSET };
	if (m <= 20 && (1ULL << m) <= opt.max_states) {
		for (uint64_t v = 1; v < (1ULL << m); v++) {
			if (!(v & (v + 1)))
				continue;	/* a prefix */
			memset(mask, 0, nbytes);
			for (size_t i = 0; i < m; i++)
				if (v >> i & 1)
					bit_set(mask, i);
			eval_state(s, &x);
		}
		free(mask);
		return;
	}
	if (!opt.max_states) {
		free(mask);
		return;
	}
	/* only one, all but one, then random; no repeats, no prefixes */
	uint64_t *seen = xcalloc(opt.max_states * 2 + 2 * m + 2, sizeof(*seen));
	size_t nseen = 0, budget = opt.max_states;
	for (size_t pass = 0; pass < 3 && budget; pass++) {
		size_t tries = pass < 2 ? m : budget * 4;
		for (size_t j = 0; j < tries && budget; j++) {
			memset(mask, 0, nbytes);
			size_t ones = 0;
			for (size_t i = 0; i < m; i++) {
				bool on = pass == 0 ? i == j :
					  pass == 1 ? i != j : rnd(r, 2);
				if (on) {
					bit_set(mask, i);
					ones++;
				}
			}
			/* a prefix: bits 0..ones-1 exactly */
			bool prefix = true;
			for (size_t i = 0; i < m && prefix; i++)
				prefix = bit_get(mask, i) == (i < ones);
			if (prefix)
				continue;
			uint64_t h = hash64(mask, nbytes);
			bool dup = false;
			for (size_t i = 0; i < nseen && !dup; i++)
				dup = seen[i] == h;
			if (dup)
				continue;
			seen[nseen++] = h;
			eval_state(s, &x);
			budget--;
		}
	}
	free(seen);
	free(mask);
}

/* The trace lints (see the top of the file). */
static void lint(struct sim *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void lint(struct sim *s, const char *fmt, ...)
{
	st.lints++;
	if (st.lints > 20)
		return;
	char text[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	printf("LINT: workload %" PRIu64 " (%s): %s\n", s->w->id, s->w->desc,
	       text);
}

static void run_lints(struct sim *s)
{
	const struct recorder *rec = s->w->rec;
	size_t c = 0;
	for (size_t i = 0; i < rec->count; i++) {
		const struct rec_event *e = &rec->ev[i];
		if (e->kind == REC_MARK && e->mark == REC_MARK_SUPER) {
			size_t j = i;
			bool found = false;
			while (j > 0 && !found)
				found = rec->ev[--j].kind != REC_MARK;
			if (found && rec->ev[j].kind != REC_FLUSH)
				lint(s, "L2: the commit write of delta %" PRIu64
				     " (event %zu) is not preceded by a flush",
				     e->seq, i);
			if (i + 1 >= rec->count ||
			    rec->ev[i + 1].kind != REC_WRITE ||
			    rec->ev[i + 1].off != TUX3_SB_OFFSET)
				lint(s, "L2: the superblock mark of delta %" PRIu64
				     " is not followed by the superblock write",
				     e->seq);
			for (j = i + 2; j < rec->count &&
			     rec->ev[j].kind == REC_MARK; j++)
				;
			if (j >= rec->count || rec->ev[j].kind != REC_FLUSH)
				lint(s, "L2: the commit write of delta %" PRIu64
				     " is not followed by a flush", e->seq);
			continue;
		}
		if (e->kind != REC_WRITE && e->kind != REC_FUA)
			continue;
		c++;
		bool sbw = i && rec->ev[i - 1].kind == REC_MARK &&
			   rec->ev[i - 1].mark == REC_MARK_SUPER;
		/* SB_BACKUP: the secondary superblock (1024..2559), in a
		 * commit: flushed before the primary's mark (L2 above) */
		if (e->off == 1024 && e->len == 1536 && i + 1 < rec->count &&
		    rec->ev[i + 1].kind == REC_FLUSH)
			continue;
		if (e->off < TUX3_RESERVED_BYTES) {
			if (!sbw)
				lint(s, "write %zu at byte %" PRIu64 " (%u bytes) "
				     "in the reserved area outside a commit", c,
				     e->off, e->len);
			else if (e->off != TUX3_SB_OFFSET ||
				 e->len != TUX3_SB_LEN)
				lint(s, "the commit write %zu is at byte %" PRIu64
				     ", %u bytes", c, e->off, e->len);
			continue;
		}
		uint64_t seq = e->seq;	/* the durable delta */
		if (seq >= s->nmaps || !s->maps[seq])
			continue;
		const uint8_t *map = s->maps[seq], *lm = s->logmaps[seq];
		const uint8_t *next = seq + 1 < s->nmaps ? s->maps[seq + 1] : NULL;
		uint64_t first = e->off >> s->blockbits;
		uint64_t last = (e->off + e->len - 1) >> s->blockbits;
		for (uint64_t b = first; b <= last && b < s->volblocks; b++) {
			if (!bit_get(map, (size_t)b))
				continue;
			if (bit_get(lm, (size_t)b))
				lint(s, "L4: write %zu overwrites block %" PRIu64
				     ", a log block of the durable cycle (delta %"
				     PRIu64 ")", c, b, seq);
			else if (next && !bit_get(next, (size_t)b))
				lint(s, "L3: write %zu overwrites block %" PRIu64
				     ", freed by delta %" PRIu64 " before its "
				     "commit is durable", c, b, seq + 1);
			else
				lint(s, "L1: write %zu overwrites block %" PRIu64
				     " that durable delta %" PRIu64
				     " references", c, b, seq);
		}
	}
}

/* Reproducing one state, at its write c (epoch ep): a prefix state
 * waits for the next write (the marks and flushes before it count);
 * a subset or torn state is a crash right after write c. */
static void target_at_write(struct sim *s, size_t ep, unsigned floor)
{
	size_t c = s->want.c, m = c - ep + 1;
	for (size_t i = m; i < 4096 * 8; i++)
		if (bit_get(s->want_mask, i)) {
			printf("state %s: the subset mask has bits past the "
			       "%zu writes of the epoch\n", opt.state, m);
			return;
		}
	const struct rec_event *e = wevent(s, c);
	size_t n = (size_t)((e->off + e->len - 1) / SECTOR - e->off / SECTOR + 1);
	bool all = true;
	for (size_t i = 0; i < m; i++)
		all &= bit_get(s->want_mask, i);
	s->want.ep = ep;
	s->want_prefix = all && !s->want.torn;
	if (s->want_prefix)
		return;
	struct state x = { .c = c, .ep = ep, .mask = s->want_mask,
			   .floor = floor, .gen = G_SUBSET };
	if (s->want.torn) {
		for (size_t i = n; i < 4096 * 8; i++)
			if (bit_get(s->want_torn, i)) {
				printf("state %s: the torn mask has bits past "
				       "the %zu sectors of write %zu\n",
				       opt.state, n, c);
				return;
			}
		if (!bit_get(s->want_mask, m - 1)) {
			printf("state %s: a torn write must be in the subset\n",
			       opt.state);
			return;
		}
		x.torn = s->want_torn;
		x.ntorn = n;
		x.gen = e->off == TUX3_SB_OFFSET ? G_TORN_SUPER : G_TORN;
	}
	eval_state(s, &x);
}

/* Every crash state of the recorded workload (or the one wanted). */
static void simulate(struct sim *s)
{
	const struct recorder *rec = s->w->rec;
	struct rng r;
	if (rec->err) {
		printf("crashsim: workload %" PRIu64 ": the recorder failed\n",
		       s->w->id);
		st.work_errors++;
		return;
	}
	if (s->dur_base != s->b) {
		img_load(&s->dur, s->b->img, s->b->bytes);
		memcpy(s->dur.sh, s->b->sh, s->dur.nsec * sizeof(*s->dur.sh));
		s->dur.h = s->b->h;
		write_all(s->cfd, s->dur.data, s->dur.bytes, 0);
		s->dur_base = s->b;
	}
	s->nw = s->nsbw = 0;
	for (size_t i = 0; i < s->nmaps; i++) {
		free(s->maps[i]);
		free(s->logmaps[i]);
		s->maps[i] = s->logmaps[i] = NULL;
	}
	take_map(s, 0);
	unsigned floor = 0, ops = 0;
	size_t ep = 1, pending = 0, pending_ep = 0;
	uint8_t *pmask = NULL;
	struct state init = { .c = 0, .ep = 1, .mask = (const uint8_t *)"",
			      .gen = G_PREFIX };
	if (!s->target || !s->want.c)
		eval_state(s, &init);
	for (size_t i = 0; i <= rec->count; i++) {
		const struct rec_event *e = i < rec->count ? &rec->ev[i] : NULL;
		bool is_write = e && (e->kind == REC_WRITE || e->kind == REC_FUA);
		if ((is_write || !e) && pending) {
			/* the prefix up to write "pending", crashing just
			 * before the next write: the marks and flushes in
			 * between count */
			size_t nb = pending - pending_ep + 1;
			pmask = xrealloc(pmask, (nb + 7) / 8);
			memset(pmask, 0, (nb + 7) / 8);
			for (size_t b = 0; b < nb; b++)
				bit_set(pmask, b);
			struct state x = { .c = pending, .ep = pending_ep,
					   .mask = pmask, .floor = floor,
					   .gen = G_PREFIX };
			/* when a flush closed the epoch since, its writes
			 * are in dur already: applying them again over it
			 * changes nothing */
			if (!s->target || (pending == s->want.c &&
					   s->want_prefix))
				eval_state(s, &x);
			pending = 0;
		}
		if (!e) {
			rng_seed(&r, s->w->id * 1000003 + ep);
			if (!s->target)
				gen_subsets(s, ep, s->nw, floor, &r);
			break;
		}
		if (is_write) {
			if (s->nw == s->capw) {
				s->capw = s->capw ? s->capw * 2 : 256;
				s->wev = xrealloc(s->wev, s->capw * sizeof(*s->wev));
				s->wops = xrealloc(s->wops, s->capw * sizeof(*s->wops));
			}
			s->wev[s->nw] = i;
			s->wops[s->nw] = ops;
			s->nw++;
			if (!s->depth)
				st.writes++;
			if (i && rec->ev[i - 1].kind == REC_MARK &&
			    rec->ev[i - 1].mark == REC_MARK_SUPER) {
				if (s->nsbw == s->capsbw) {
					s->capsbw = s->capsbw ? s->capsbw * 2 : 16;
					s->sbw = xrealloc(s->sbw, s->capsbw *
							  sizeof(*s->sbw));
				}
				s->sbw[s->nsbw].c = s->nw;
				s->sbw[s->nsbw++].seq = rec->ev[i - 1].seq;
			}
			rng_seed(&r, s->w->id * 7919 + s->nw);
			if (!s->target)
				gen_torn(s, s->nw, ep, floor, &r);
			else if (s->nw == s->want.c)
				target_at_write(s, ep, floor);
			pending = s->nw;
			pending_ep = ep;
			if (e->kind == REC_FUA) {
				/* durable on its own; modelled as a write and
				 * a flush (the library issues none) */
				for (size_t c = ep; c <= s->nw; c++)
					dur_apply(s, wevent(s, c));
				ep = s->nw + 1;
			}
			continue;
		}
		if (e->kind == REC_FLUSH) {
			rng_seed(&r, s->w->id * 1000003 + ep);
			if (!s->target)
				gen_subsets(s, ep, s->nw, floor, &r);
			for (size_t c = ep; c <= s->nw; c++)
				dur_apply(s, wevent(s, c));
			ep = s->nw + 1;
			continue;
		}
		switch (e->mark) {
		case REC_MARK_COMMIT:
			if (!s->depth)
				st.commits++;
			if (!s->target)
				take_map(s, e->seq);
			break;
		case REC_MARK_UNIFY:
			if (!s->depth)
				st.unifies++;
			break;
		case REC_MARK_FSYNC:
			floor = (unsigned)e->seq;
			break;
		case REC_MARK_OP:
			ops = (unsigned)e->arg + 1;
			break;
		}
	}
	free(pmask);
	if (!s->target)
		run_lints(s);
	/* back to the base: undo what the trace wrote */
	for (size_t c = 1; c <= s->nw; c++) {
		const struct rec_event *e = wevent(s, c);
		memcpy(s->dur.data + e->off, s->b->img + e->off, e->len);
		write_all(s->cfd, s->b->img + e->off, e->len, e->off);
		for (uint64_t sec = e->off / SECTOR;
		     sec <= (e->off + e->len - 1) / SECTOR; sec++)
			s->dur.sh[sec] = s->b->sh[sec];
	}
	s->dur.h = s->b->h;
}

static void sim_free(struct sim *s)
{
	free(s->dur.data);
	free(s->dur.sh);
	free(s->ov.sec);
	free(s->ov.data);
	free(s->ov.slot);
	free(s->ov.gen);
	free(s->wev);
	free(s->wops);
	free(s->sbw);
	for (size_t i = 0; i < s->nmaps; i++) {
		free(s->maps[i]);
		free(s->logmaps[i]);
	}
	free(s->maps);
	free(s->logmaps);
	free(s->want_mask);
	free(s->want_torn);
	free(s->text.p);
}

static void work_free(struct work *w)
{
	for (size_t i = 0; i < w->nsnaps; i++)
		free(w->snaps[i].text);
	free(w->snaps);
	model_free(&w->m);
	for (unsigned i = 0; i < NSNAP; i++)
		model_free(&w->vs[i].m);
	free(w->tmp.p);
}

/* WRITE:SUBSET:TORN into the sim's target. */
static int parse_state(struct sim *s, const char *arg)
{
	const char *p1 = strchr(arg, ':');
	const char *p2 = p1 ? strchr(p1 + 1, ':') : NULL;
	if (!p1 || !p2)
		return -EINVAL;
	char cbuf[32];
	snprintf(cbuf, sizeof(cbuf), "%.*s", (int)(p1 - arg), arg);
	s->target = true;
	s->want.c = (size_t)num(cbuf);
	s->want_mask = xcalloc(4096, 1);
	s->want_torn = xcalloc(4096, 1);
	if (bits_parse(p1 + 1, (size_t)(p2 - p1 - 1), s->want_mask, 4096) ||
	    bits_parse(p2 + 1, strlen(p2 + 1), s->want_torn, 4096))
		return -EINVAL;
	bool torn = false;
	for (size_t i = 0; i < 4096; i++)
		torn |= s->want_torn[i] != 0;
	s->want.torn = torn ? s->want_torn : NULL;
	return 0;
}

/*
 * A prefix state with orphans: a read-write open releases them, which
 * writes a delta; with a pending snapshot delete, it finishes the delete,
 * one more delta.  Record that recovery (the open as volume.c's RDWR path
 * does it: replay, then the allocator, then version_delete_resume, then
 * orphans_release, with the recorder on in between) and crash inside it:
 * every state must be the state itself, or without its pending delete
 * (the same snapshots: the delete was certain), or without that and its
 * orphans, pass fsck, and the lints hold.
 */
static void recovery(struct sim *s, const struct state *x,
		     const struct snap *want)
{
	const struct base *pb = s->b;
	struct base b = { .bytes = pb->bytes, .blockbits = pb->blockbits,
			  .volblocks = pb->volblocks };
	char name[800], why[600] = "";
	bool orphans = has_orphans(want->text), pending = has_pending(want->text);
	state_name(s, x, name, sizeof(name));
	st.delete_recoveries += pending;
	b.img = xmalloc(b.bytes);
	memcpy(b.img, s->dur.data, b.bytes);
	for (size_t j = 0; j < s->ov.n; j++)
		memcpy(b.img + s->ov.sec[j] * SECTOR, s->ov.data + j * SECTOR,
		       SECTOR);
	put_image(rpath, b.img, b.bytes);
	base_hash(&b);
	struct recorder *rec = rec_new();
	struct tux3_volume *vol = NULL;
	char msg[400];
	int err = tux3_open_err(rpath, TUX3_OPEN_RDWR_NORECOVER, &vol, msg,
				sizeof(msg));
	if (err) {
		snprintf(why, sizeof(why), "read-write open failed: %s", msg);
	} else if (vol->replay_conflicts) {
		snprintf(why, sizeof(why), "replay met allocation conflicts");
	} else {
		vol->mode = TUX3_OPEN_RDWR;
		vol->unify_log_limit = 64;
		vol->unify_bnode_limit = 256;
		vol->commit_bound = 4096;
		tux3_set_time(vol, T0 + 999 * 1000000007LL);
		err = balloc_init(vol);
		vol->dev.rec = rec;
		if (!err && !vol->vpending != !pending)
			snprintf(why, sizeof(why), "the open found %sa pending "
				 "delete", vol->vpending ? "" : "no ");
		else if (!err && pending && (err = version_delete_resume(vol)))
			snprintf(why, sizeof(why), "finishing the snapshot "
				 "delete failed: %s",
				 tux3_error_text(vol, msg, sizeof(msg)));
		else if (!err && orphans && (err = orphans_release(vol)))
			snprintf(why, sizeof(why), "releasing the orphans failed: "
				 "%s", tux3_error_text(vol, msg, sizeof(msg)));
		else if (err)
			snprintf(why, sizeof(why), "the allocator: %s",
				 tux3_error_text(vol, msg, sizeof(msg)));
		vol->dev.rec = NULL;
		if (!why[0] && (rec->commits != (uint64_t)orphans + pending ||
				rec->err))
			snprintf(why, sizeof(why), "the recovery committed %"
				 PRIu64 " deltas, not %d", rec->commits,
				 orphans + pending);
	}
	tux3_close(vol);
	st.recoveries++;
	if (why[0]) {
		st.states++;
		st.bad++;
		if (st.printed++ < opt.print) {
			printf("BAD recovery of state %s (workload %s): %s\n",
			       name, s->w->desc, why);
			print_regression(s, x);
		}
		rec_free(rec);
		free(b.img);
		free(b.sh);
		return;
	}
	/* before: the state itself; after each commit: the same without the
	 * pending delete (the first, if any), then without the orphans */
	size_t ns = 1 + (size_t)orphans + pending;
	struct work w = { .id = s->w->id, .rec = rec, .nsnaps = ns };
	w.snaps = xcalloc(ns, sizeof(*w.snaps));
	for (size_t i = 0; i < ns; i++) {
		bool drop_pending = i && pending;
		bool drop_orphans = orphans && i && i == ns - 1;
		size_t n = 0;
		w.snaps[i].text = xmalloc(want->len + 1);
		for (const char *l = want->text; *l;) {
			const char *e = strchr(l, '\n');
			size_t len = e ? (size_t)(e - l) + 1 : strlen(l);
			if (!(drop_orphans && !strncmp(l, "orphan ", 7)) &&
			    !(drop_pending && !strncmp(l, pending_line, len))) {
				memcpy(w.snaps[i].text + n, l, len);
				n += len;
			}
			l += len;
		}
		w.snaps[i].text[n] = 0;
		w.snaps[i].len = n;
		w.snaps[i].h = hash128(w.snaps[i].text, n, 7);
	}
	snprintf(w.desc, sizeof(w.desc), "recovery after %.400s", s->w->desc);
	struct sim r;
	memset(&r, 0, sizeof(r));
	r.w = &w;
	r.b = &b;
	r.blockbits = s->blockbits;
	r.volblocks = s->volblocks;
	r.depth = 1;
	r.cpath = rcpath;
	snprintf(r.parent, sizeof(r.parent), "%s", name);
	state_arg(x, r.parent_arg, sizeof(r.parent_arg));
	r.cfd = open(rcpath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (r.cfd < 0 || ftruncate(r.cfd, (off_t)b.bytes) < 0) {
		fprintf(stderr, "crashsim: %s: %s\n", rcpath, strerror(errno));
		exit(2);
	}
	if (s->target && opt.recover && parse_state(&r, opt.recover))
		usage();
	simulate(&r);
	if (r.target && !r.found)
		printf("state %s: no such state in the recovery\n", opt.recover);
	close(r.cfd);
	sim_free(&r);
	work_free(&w);
	rec_free(rec);
	free(b.img);
	free(b.sh);
}

/* ------------------------------------------------------------------ */
/* main                                                                */

static void usage(void)
{
	fprintf(stderr,
		"usage: crashsim [--workload ace|random] [--seed N] "
		"[--workloads N] [--ops N]\n"
		"                [--max-states N] [--torn N] [--block-size N] "
		"[--every N] [--shard I/N]\n"
		"                [--state WRITE:SUBSET:TORN [--recover "
		"WRITE:SUBSET:TORN]] [--print N]\n"
		"                [--no-torn-super] [--no-recovery] [--list] "
		"[--features MASK] [--snapshots] [--compact] [--dir-index]\n"
		"                [--xattr-max N] [--vleaf-cap N]\n"
		"                [-v]\n");
	exit(2);
}

static uint64_t num(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end || end == s) {
		fprintf(stderr, "crashsim: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "-v")) {
			opt.verbose = true;
			continue;
		}
		if (!strcmp(a, "--no-torn-super")) {
			opt.no_torn_super = true;
			continue;
		}
		if (!strcmp(a, "--atime")) {
			opt.atime = true;
			continue;
		}
		if (!strcmp(a, "--list")) {
			opt.list = true;
			continue;
		}
		if (!strcmp(a, "--no-recovery")) {
			opt.no_recovery = true;
			continue;
		}
		if (!strcmp(a, "--snapshots")) {
			opt.snapshots = true;
			continue;
		}
		if (!strcmp(a, "--dir-index")) {
			opt.dir_index = true;
			continue;
		}
		if (!strcmp(a, "--compact")) {
			opt.snapshots = opt.compact = true;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--workload")) {
			if (!strcmp(v, "ace"))
				opt.workload = WL_ACE;
			else if (!strcmp(v, "random"))
				opt.workload = WL_RANDOM;
			else
				usage();
		} else if (!strcmp(a, "--seed")) {
			opt.seed = num(v);
		} else if (!strcmp(a, "--workloads")) {
			opt.workloads = num(v);
			opt.workloads_set = true;
		} else if (!strcmp(a, "--ops")) {
			opt.ops = (unsigned)num(v);
			opt.ops_set = true;
		} else if (!strcmp(a, "--vleaf-cap")) {
			opt.vleaf_cap = (unsigned)num(v);
			if (opt.vleaf_cap < 2)
				usage();
		} else if (!strcmp(a, "--xattr-max")) {
			opt.xattr_max = (unsigned)num(v);
			if (!opt.xattr_max || opt.xattr_max > XMAX)
				usage();
		} else if (!strcmp(a, "--max-states")) {
			opt.max_states = (unsigned)num(v);
		} else if (!strcmp(a, "--torn")) {
			opt.torn = (unsigned)num(v);
		} else if (!strcmp(a, "--block-size")) {
			uint64_t bs = num(v);
			unsigned bits = 0;
			while ((1ULL << bits) < bs)
				bits++;
			if ((1ULL << bits) != bs || bits < 9 || bits > 16)
				usage();
			opt.blockbits = bits;
		} else if (!strcmp(a, "--features")) {
			opt.features = (uint32_t)num(v);
		} else if (!strcmp(a, "--every")) {
			opt.every = num(v);
			if (!opt.every)
				usage();
		} else if (!strcmp(a, "--shard")) {
			if (sscanf(v, "%u/%u", &opt.shard, &opt.nshards) != 2 ||
			    !opt.nshards || opt.shard >= opt.nshards)
				usage();
		} else if (!strcmp(a, "--state")) {
			opt.state = v;
		} else if (!strcmp(a, "--recover")) {
			opt.recover = v;
		} else if (!strcmp(a, "--print")) {
			opt.print = (unsigned)num(v);
		} else {
			usage();
		}
	}
	if (opt.dir_index && (opt.workload != WL_RANDOM || opt.snapshots ||
			      (opt.blockbits != 9 && opt.blockbits != 10 &&
			       opt.blockbits != 12))) {
		fprintf(stderr, "crashsim: --dir-index needs --workload random "
			"and --block-size 512, 1024 or 4096 (a four-block "
			"directory must fit the model), without snapshots\n");
		exit(2);
	}
	unsigned acelen = ACE_MAXLEN;
	if (opt.workload == WL_ACE) {
		if (opt.ops_set) {
			if (opt.ops < 1 || opt.ops > ACE_MAXLEN)
				usage();
			acelen = opt.ops;
		}
		uint64_t total = ace_total(acelen);
		if (opt.state && !opt.workloads_set)
			opt.workloads = 1;
		else if (!opt.workloads_set || opt.seed + opt.workloads > total)
			opt.workloads = opt.seed < total ? total - opt.seed : 0;
	} else {
		if (!opt.ops_set)
			opt.ops = 30;
		if (!opt.workloads_set)
			opt.workloads = 1;
		if (!opt.seed)
			opt.seed = 1;
	}

	const char *dir = scratch_dir();
	sweep_stale(dir);
	snprintf(wpath, sizeof(wpath), "%s/crashsim.%d.work.img", dir,
		 (int)getpid());
	snprintf(cpath, sizeof(cpath), "%s/crashsim.%d.crash.img", dir,
		 (int)getpid());
	snprintf(rpath, sizeof(rpath), "%s/crashsim.%d.recover.img", dir,
		 (int)getpid());
	snprintf(rcpath, sizeof(rcpath), "%s/crashsim.%d.rcrash.img", dir,
		 (int)getpid());
	atexit(cleanup);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	readbuf = xmalloc(MAXDATA);

	struct base b;
	memset(&b, 0, sizeof(b));
	make_base(&b, opt.workload == WL_ACE);
	base_hash(&b);

	struct sim s;
	memset(&s, 0, sizeof(s));
	s.b = &b;
	s.blockbits = b.blockbits;
	s.volblocks = b.volblocks;
	s.cpath = cpath;
	s.cfd = open(cpath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (s.cfd < 0 || ftruncate(s.cfd, (off_t)b.bytes) < 0) {
		fprintf(stderr, "crashsim: %s: %s\n", cpath, strerror(errno));
		return 2;
	}
	if (opt.state && parse_state(&s, opt.state))
		usage();
	if (opt.recover && !opt.state)
		usage();

	struct recorder *rec = rec_new();
	struct work w;
	memset(&w, 0, sizeof(w));
	s.w = &w;
	double t0 = now_s();
	/* this run's share: every Nth of the range, then every shard-th */
	uint64_t picked = (opt.workloads + opt.every - 1) / opt.every;
	uint64_t mine = picked / opt.nshards +
			(opt.shard < picked % opt.nshards ? 1 : 0);
	char share[160] = "";
	if (opt.every > 1 || opt.nshards > 1)
		snprintf(share, sizeof(share), " (this run: %" PRIu64 " of them, "
			 "one in every %" PRIu64 ")", mine,
			 opt.every * opt.nshards);
	if (opt.workload == WL_ACE)
		printf("workloads: %" PRIu64 " ACE sequences from %" PRIu64
		       " (the full set: %" PRIu64 " sequences of 1 to %u "
		       "operations from %u, each followed by none, fsync or "
		       "sync)%s, block size %u\n", opt.workloads, opt.seed,
		       ace_total(acelen), acelen, ACE_NOPS, share,
		       1u << opt.blockbits);
	else
		printf("workloads: %" PRIu64 " random (seeds %" PRIu64 "..%" PRIu64
		       ", %u operations each)%s, block size %u\n",
		       opt.workloads, opt.seed, opt.seed + opt.workloads - 1,
		       opt.ops, share, 1u << opt.blockbits);
	for (uint64_t k = 0; k < opt.workloads; k += opt.every) {
		uint64_t id = opt.seed + k;
		if ((k / opt.every) % opt.nshards != opt.shard)
			continue;
		if (opt.workload == WL_ACE)
			run_ace(&w, &b, rec, id);
		else
			run_random(&w, &b, rec, id, opt.ops);
		st.workloads++;
		st.work_errors += w.errors;
		simulate(&s);
		st.dx_workloads += w.dx_seen;
		if (opt.verbose && !s.target)
			printf("workload %" PRIu64 " (%s): %zu events, %zu writes, "
			       "%" PRIu64 " states so far\n", id, w.desc,
			       rec->count, s.nw, st.states);
	}
	double dt = now_s() - t0, cpu = cpu_s();
	if (s.target && !s.found)
		printf("state %s: no such state in this workload\n",
		       opt.state);
	printf("recorded: %" PRIu64 " writes, %" PRIu64 " commits (%" PRIu64
	       " unifying)\n", st.writes, st.commits, st.unifies);
	printf("generators: %" PRIu64 " prefix, %" PRIu64 " subset, %" PRIu64
	       " torn, %" PRIu64 " torn superblock\n", st.gen[G_PREFIX],
	       st.gen[G_SUBSET], st.gen[G_TORN], st.gen[G_TORN_SUPER]);
	printf("states expecting orphans (unlinked while open): %" PRIu64
	       "; their recoveries recorded: %" PRIu64 ", crash states inside "
	       "them: %" PRIu64 "\n", st.orphan_states, st.recoveries,
	       st.recovery_states);
	if (opt.snapshots)
		printf("snapshots: %" PRIu64 " created, %" PRIu64 " deleted, %"
		       PRIu64 " writes in one, %" PRIu64 " rollbacks of the "
		       "live version (%" PRIu64 " refused as the "
		       "model expects); states expecting snapshots: %" PRIu64
		       ", a pending delete: %" PRIu64 " (recoveries finishing "
		       "it: %" PRIu64 "); back to the 2014 format: %" PRIu64
		       " deletes, %" PRIu64 " states\n", snapst.create,
		       snapst.del, snapst.write, snapst.rollback,
		       snapst.failed,
		       st.snap_states, st.pending_states,
		       st.delete_recoveries, snapst.back2014,
		       st.back2014_states);
	if (opt.xattr_max > 32 && opt.snapshots)
		printf("attribute chains: %" PRIu64 " states with one\n",
		       st.spill_states);
	if (opt.vleaf_cap && opt.snapshots)
		printf("element chains: %" PRIu64 " states with one\n",
		       st.elist_states);
	if (opt.dir_index)
		printf("dir index: %" PRIu64 " states with D indexed, in %"
		       PRIu64 " of %" PRIu64 " workloads\n", st.dx_states,
		       st.dx_workloads, st.workloads);
	if (st.from_copy)
		printf("torn superblocks that fsck restores from the secondary "
		       "copy: %" PRIu64 "\n", st.from_copy);
	if (st.skipped_torn_super)
		printf("skipped: superblock torn (needs the secondary "
		       "superblock): %" PRIu64 " writes\n",
		       st.skipped_torn_super);
	printf("images checked: %" PRIu64 " (open, fsck, model), %" PRIu64
	       " states with an image already checked\n", st.checked,
	       st.cached);
	printf("lint violations: %" PRIu64 "; workload errors: %" PRIu64 "\n",
	       st.lints, st.work_errors);
	printf("time: %.1f s (cpu %.1f s), %.0f states/s, %.0f images checked/s "
	       "(per cpu second)\n", dt, cpu,
	       cpu > 0 ? (double)st.states / cpu : 0,
	       cpu > 0 ? (double)st.checked / cpu : 0);
	printf("states: %" PRIu64 " ok, %" PRIu64 " bad\n", st.ok, st.bad);
	rec_free(rec);
	close(s.cfd);
	sim_free(&s);
	work_free(&w);
	model_free(&b.m);
	free(b.img);
	free(b.sh);
	free(sync_order);
	free(sync_stage);
	free(cache.k);
	free(cache.v);
	free(readbuf);
	if (s.target && !s.found)
		return 1;
	return st.bad || st.lints || st.work_errors ? 1 : 0;
}

/*
 * fsck.tux3: check and repair a Tux3 volume under the fsck(8) contract.
 * The passes and the problem table are the library's (common/check/fsck*.c);
 * this is the front end: options, questions, exit codes, progress,
 * timing, whether the volume is in use (mounted, or locked by another
 * process) and signals.
 *
 * In use, from /proc/self/mountinfo (FSCK_TUX3_MOUNTINFO for tests) and
 * the volume lock libtux3 takes (flock: shared for readers, exclusive for
 * writers):
 *   read-write (a rw mount, or an exclusive lock): never repaired (exit
 *     8); -n checks a rw mount with a warning, and cannot open a volume a
 *     writer has locked (exit 8).
 *   read-only (a ro mount, or only shared locks): repaired under the read-
 *     only user's shared lock (TUX3_FSCK_REPAIR_MOUNTED_RO); a repair adds
 *     2 to the exit code: that user still has the old state, reboot or
 *     remount.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include "tux3.h"
#include "tux3_fsck.h"

/* fsck(8): the exit code is the sum of these */
enum {
	EXIT_CLEAN = 0, EXIT_CORRECTED = 1, EXIT_REBOOT = 2,
	EXIT_UNCORRECTED = 4, EXIT_OPERATIONAL = 8, EXIT_USAGE = 16,
	EXIT_CANCELLED = 32, EXIT_LIBRARY = 128,
};

/* How another user has the volume. */
enum use { USE_NONE, USE_RO, USE_RW };

static volatile sig_atomic_t got_signal;

struct opts {
	int preen, no, yes, force, verbose, timing;
	int optimize;		/* -D: pack every directory */
	const struct tux3_fsck_result *res;	/* of the run, for -t */
	int backup;		/* -b: the secondary superblock */
	int progress_fd;	/* -1 none, 0 a bar on the terminal */
	const char *device;
	int interactive;
	FILE *tty;
	int unexpected;		/* -p met a problem it may not fix */
	int test_kill_pass;	/* FSCK_TUX3_TEST_SIGNAL_PASS=N[:TERM]: */
	int test_kill_sig;	/* raise SIGINT (SIGTERM) as pass N begins */
	const char *test_fail;	/* FSCK_TUX3_TEST_FAIL_REPAIR=CODE: the */
	int test_failed;	/* first repair of CODE fails (once) */
	/* -t */
	struct timespec t0, start;
	long rss0;		/* peak RSS when the previous pass ended */
	/* -C 0 */
	int bar;		/* drawing (stdout is a terminal) */
	int bar_shown;		/* a bar is on the screen now */
	int bar_len;		/* its width in characters */
	int bar_permille;	/* last drawn */
	struct timespec bar_time;
	unsigned pass, pass_base;	/* weight of the passes before */
};

/* Share of the whole run per pass, for the -C 0 bar (sums to 100). */
static const unsigned pass_weight[TUX3_FSCK_PASSES + 1] = {
	[1] = 2, [2] = 8, [3] = 20, [4] = 25, [5] = 20, [6] = 4, [7] = 3,
	[8] = 16, [9] = 2,
};

static void on_signal(int sig)
{
	(void)sig;
	got_signal = 1;
}

static void usage(void)
{
	fprintf(stderr, "Usage: fsck.tux3 [-a|-p] [-n] [-y] [-f] [-b] [-D] [-C fd] "
		"[-v] [-V] [-t] DEVICE\n"
		"  -p, -a   repair what is safe without questions\n"
		"  -n       check only: open read-only, answer no\n"
		"  -y       answer yes to every question\n"
		"  -f       check even a volume that looks clean\n"
		"  -b       restore a primary superblock without its magic\n"
		"           from the secondary copy (SB_BACKUP), then check\n"
		"  -D       pack every directory and rebuild its index\n"
		"  -C fd    progress lines \"pass current max device\" on fd;\n"
		"           -C 0: a progress bar on the terminal\n"
		"  -v       verbose\n"
		"  -V       print the version and exit\n"
		"  -t       time and peak memory per pass\n");
}

static double since(const struct timespec *a)
{
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a->tv_sec) +
	       (double)(b.tv_nsec - a->tv_nsec) / 1e9;
}

static long peak_rss(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;	/* KiB on Linux */
}

/* ---- the -C 0 progress bar ---- */

static void bar_clear(struct opts *o)
{
	if (!o->bar_shown)
		return;
	printf("\r%*s\r", o->bar_len, "");
	fflush(stdout);
	o->bar_shown = 0;
}

static void bar_draw(struct opts *o, int permille, bool force)
{
	if (!o->bar || got_signal)
		return;
	if (!force && o->bar_shown && (permille == o->bar_permille ||
	    (permille < 1000 && since(&o->bar_time) < 0.1)))
		return;
	struct winsize ws;
	int cols = 80;
	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_col >= 20)
		cols = ws.ws_col;
	/* "device: |====      | 45.0%", one column short of the line: the
	 * bar at least 10 wide, the name cut from the left if need be */
	const char *name = o->device;
	int namelen = (int)strlen(name), width;
	if (namelen > cols - 1 - 11 - 10) {
		name += namelen - (cols - 1 - 11 - 10);
		namelen = cols - 1 - 11 - 10;
	}
	width = cols - 1 - namelen - 11;
	if (width > 70)
		width = 70;
	if (permille < 0)
		permille = 0;
	if (permille > 1000)
		permille = 1000;
	char line[512];
	int n = snprintf(line, sizeof(line), "%s: |", name);
	int fill = width * permille / 1000;
	for (int i = 0; i < width && n < (int)sizeof(line) - 16; i++)
		line[n++] = i < fill ? '=' : ' ';
	n += snprintf(line + n, sizeof(line) - (size_t)n, "| %5.1f%%",
		      permille / 10.0);
	printf("\r%s", line);
	fflush(stdout);
	if (n > o->bar_len)
		o->bar_len = n;
	o->bar_shown = 1;
	o->bar_permille = permille;
	clock_gettime(CLOCK_MONOTONIC, &o->bar_time);
}

static int bar_permille(const struct opts *o, uint64_t cur, uint64_t max)
{
	unsigned w = o->pass <= TUX3_FSCK_PASSES ? pass_weight[o->pass] : 0;
	double in = max ? (double)(cur > max ? max : cur) / (double)max : 0;
	return (int)((o->pass_base + w * in) * 10);
}

/* Every line to stdout goes through here: the bar makes way. */
static void say(struct opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(struct opts *o, const char *fmt, ...)
{
	va_list ap;
	bool redraw = o->bar_shown;
	bar_clear(o);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
	if (redraw)
		bar_draw(o, o->bar_permille, true);
}

/* ---- engine callbacks ---- */

static int cancelled(void *ctx)
{
	(void)ctx;
	return got_signal;
}

static void pass_begin(void *ctx, unsigned pass, const char *title)
{
	struct opts *o = ctx;
	if (o->test_kill_pass && (int)pass == o->test_kill_pass)
		raise(o->test_kill_sig);
	clock_gettime(CLOCK_MONOTONIC, &o->t0);
	o->pass_base = 0;
	for (unsigned i = 1; i < pass && i <= TUX3_FSCK_PASSES; i++)
		o->pass_base += pass_weight[i];
	o->pass = pass;
	if (!o->preen)
		say(o, "Pass %u: %s\n", pass, title);
	bar_draw(o, bar_permille(o, 0, 0), true);
}

/* A repair failed: the engine runs the passes again (e2fsck's
 * "Restarting e2fsck from the beginning..."). */
static void restart(void *ctx, unsigned round, const char *why)
{
	struct opts *o = ctx;
	if (o->preen)
		say(o, "%s: restarting (round %u): %s\n", o->device, round,
		    why);
	else
		say(o, "\nRestarting from pass 1 (round %u): %s\n\n", round,
		    why);
}

/* The test hook FSCK_TUX3_TEST_FAIL_REPAIR: the first repair of that
 * problem code fails, as one meeting more damage would. */
static int repair_fault(void *ctx, const struct tux3_fsck_problem_def *p)
{
	struct opts *o = ctx;
	if (!o->test_fail || o->test_failed || strcmp(p->code, o->test_fail))
		return 0;
	o->test_failed = 1;
	return -EUCLEAN;
}

static void pass_end(void *ctx, unsigned pass)
{
	struct opts *o = ctx;
	bar_draw(o, bar_permille(o, 1, 1), false);
	if (!o->timing)
		return;
	/* growth since the previous pass ended: the passes add up */
	long rss = peak_rss();
	bool counted = pass <= TUX3_FSCK_PASSES;
	say(o, "Pass %u: time %.3f s, peak memory %ld KiB (+%ld KiB), "
	    "%" PRIu64 " inodes loaded, %" PRIu64 " device reads\n", pass,
	    since(&o->t0), rss, rss - o->rss0,
	    counted ? o->res->inode_loads[pass] : 0,
	    counted ? o->res->device_reads[pass] : 0);
	if (pass == 5 && o->res->inode_state_bytes)
		say(o, "Inode state: %" PRIu64 " KiB\n",
		    (o->res->inode_state_bytes + 1023) / 1024);
	o->rss0 = rss;
}

static void progress(void *ctx, unsigned pass, uint64_t cur, uint64_t max)
{
	struct opts *o = ctx;
	if (o->progress_fd < 0)
		return;
	if (o->progress_fd == 0) {
		bar_draw(o, bar_permille(o, cur, max), false);
		return;
	}
	if (dprintf(o->progress_fd, "%u %" PRIu64 " %" PRIu64 " %s\n", pass,
		    cur, max, o->device) < 0) {
		/* the reader went away (SIGPIPE is ignored): the check goes
		 * on without progress */
		fprintf(stderr, "fsck.tux3: -C %d: %s: no more progress\n",
			o->progress_fd, strerror(errno));
		o->progress_fd = -1;
	}
}

static void info(void *ctx, unsigned pass, const char *text)
{
	struct opts *o = ctx;
	(void)pass;
	/* pending orphans and failed repairs are always shown; replay
	 * details with -v */
	if (strstr(text, "orphan") || strstr(text, "repair failed") ||
	    strstr(text, "earlier round")) {
		if (o->preen)
			say(o, "%s: %s\n", o->device, text);
		else
			say(o, "%s\n", text);
	} else if (o->verbose) {
		say(o, "%s\n", text);
	}
}

/* The answer: -n no, -y yes, -p yes when preen-safe, else ask. */
static int problem(void *ctx, const struct tux3_fsck_problem *p)
{
	struct opts *o = ctx;
	if (o->preen) {
		if (!p->def->preen_ok || !p->fixable) {
			say(o, "%s: %s\n", o->device, p->text);
			o->unexpected = 1;
			return -1;
		}
		say(o, "%s: %s.  FIXED.\n", o->device, p->text);
		return 1;
	}
	say(o, "%s (%s)\n", p->text, p->def->code);
	if (!p->fixable && (!p->def->fix || !o->no)) {
		say(o, "  cannot be fixed\n");
		return 0;
	}
	if (o->no) {
		say(o, "  %s? no\n", p->def->fix);
		return 0;
	}
	if (o->yes) {
		say(o, "  %s? yes\n", p->def->fix);
		return 1;
	}
	bool redraw = o->bar_shown;
	bar_clear(o);
	int answer = -1;
	for (;;) {
		char line[64];
		fprintf(o->tty, "  %s<y>? ", p->def->fix);
		fflush(o->tty);
		if (!fgets(line, sizeof(line), o->tty) || got_signal)
			break;
		if (line[0] == '\n' || line[0] == 'y' || line[0] == 'Y') {
			answer = 1;
			break;
		}
		if (line[0] == 'n' || line[0] == 'N') {
			answer = 0;
			break;
		}
	}
	if (redraw)
		bar_draw(o, o->bar_permille, true);
	return answer;
}

/* ---- is the volume in use? ---- */

struct mount {
	enum use use;
	char point[PATH_MAX];	/* where (the first match of that kind) */
	char fstype[64];
};

/* mountinfo writes space, tab, newline and backslash as \ooo */
static void unescape(char *s)
{
	char *d = s;
	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				      (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = 0;
}

static bool has_option(const char *opts, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = opts; p && *p; p = strchr(p, ',') ?
	     strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == 0))
			return true;
	return false;
}

/* Is the block device rdev a loop device backed by the file real? */
static bool loop_backs(dev_t rdev, const char *real)
{
	char path[96], line[PATH_MAX + 16];
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/loop/backing_file",
		 major(rdev), minor(rdev));
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool same = false;
	if (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		same = real[0] && !strcmp(line, real);
	}
	fclose(f);
	return same;
}

/* Is the mount source src (device maj:min) the volume dst (path real)? */
static bool same_volume(const struct stat *dst, const char *real,
			unsigned maj, unsigned min, const char *src)
{
	struct stat sst;
	if (S_ISBLK(dst->st_mode) && major(dst->st_rdev) == maj &&
	    minor(dst->st_rdev) == min)
		return true;
	if (src[0] != '/')
		return false;
	if (real[0] && !strcmp(src, real))
		return true;
	if (stat(src, &sst))
		return false;
	if (S_ISBLK(dst->st_mode))
		return S_ISBLK(sst.st_mode) && sst.st_rdev == dst->st_rdev;
	if (S_ISREG(sst.st_mode))	/* a FUSE mount names its image */
		return sst.st_dev == dst->st_dev && sst.st_ino == dst->st_ino;
	if (S_ISBLK(sst.st_mode))	/* a loop device over the image */
		return loop_backs(sst.st_rdev, real);
	return false;
}

/*
 * Fields of a mountinfo line: id parent maj:min root mountpoint options
 * [optional fields...] - fstype source super-options.  Read-write needs
 * both the mount's options and the superblock's to say so.
 */
static void mount_state(const char *device, const struct stat *dst,
			struct mount *m)
{
	char real[PATH_MAX];
	const char *path = getenv("FSCK_TUX3_MOUNTINFO");

	memset(m, 0, sizeof(*m));
	if (!realpath(device, real))
		real[0] = 0;
	FILE *f = fopen(path && *path ? path : "/proc/self/mountinfo", "r");
	if (!f)
		return;
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		char *field[16], *save = NULL, *t;
		int n = 0, dash = -1;
		unsigned maj, min;
		line[strcspn(line, "\n")] = 0;
		for (t = strtok_r(line, " ", &save); t && n < 16;
		     t = strtok_r(NULL, " ", &save)) {
			if (dash < 0 && n >= 6 && !strcmp(t, "-"))
				dash = n;
			field[n++] = t;
		}
		if (dash < 0 || n < dash + 3 ||
		    sscanf(field[2], "%u:%u", &maj, &min) != 2)
			continue;
		char *point = field[4], *opts = field[5];
		char *fstype = field[dash + 1], *src = field[dash + 2];
		const char *sopts = n > dash + 3 ? field[dash + 3] : "";
		unescape(point);
		unescape(src);
		if (!same_volume(dst, real, maj, min, src))
			continue;
		enum use use = has_option(opts, "rw") &&
			       !has_option(sopts, "ro") ? USE_RW : USE_RO;
		if (use > m->use) {
			m->use = use;
			snprintf(m->point, sizeof(m->point), "%s", point);
			snprintf(m->fstype, sizeof(m->fstype), "%s", fstype);
		}
	}
	free(line);
	fclose(f);
}

/*
 * The volume lock, probed without keeping it: USE_RW if another process
 * holds it exclusively (a writer), USE_RO if only shared (readers; asked
 * only when readers matter: the exclusive probe would briefly turn a new
 * reader away), USE_NONE if free or unknown.
 */
static enum use lock_state(const char *device, bool want_readers)
{
	int fd = open(device, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	enum use use = USE_NONE;
	if (fd < 0)
		return USE_NONE;
	if (flock(fd, LOCK_SH | LOCK_NB))
		use = errno == EWOULDBLOCK ? USE_RW : USE_NONE;
	else if (want_readers && flock(fd, LOCK_EX | LOCK_NB))
		use = errno == EWOULDBLOCK ? USE_RO : USE_NONE;
	close(fd);
	return use;
}

/* ---- main ---- */

int main(int argc, char **argv)
{
	struct opts o = { .progress_fd = -1 };
	int c;

	/* first: a signal from now on cancels instead of killing */
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* a progress reader (-C fd) that goes away must not kill a repair */
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	clock_gettime(CLOCK_MONOTONIC, &o.start);
	o.rss0 = peak_rss();

	/* The library must be the one this was built with (exit 128, a
	 * shared-library error, as fsck(8) defines it).  Test hook:
	 * FSCK_TUX3_TEST_LIBRARY_VERSION claims another build version. */
	int built = TUX3_LIBRARY_VERSION;
	const char *hook = getenv("FSCK_TUX3_TEST_LIBRARY_VERSION");
	if (hook && *hook)
		built = atoi(hook);
	if (tux3_library_version() != built) {
		fprintf(stderr, "fsck.tux3: built for libtux3 interface %d, "
			"but libtux3 %s has interface %d: shared-library "
			"error\n", built, tux3_version(),
			tux3_library_version());
		return EXIT_LIBRARY;
	}

	opterr = 0;
	while ((c = getopt(argc, argv, "apnyfbDC:vVt")) != -1) {
		switch (c) {
		case 'a': case 'p': o.preen = 1; break;
		case 'n': o.no = 1; break;
		case 'y': o.yes = 1; break;
		case 'f': o.force = 1; break;
		case 'b': o.backup = 1; break;
		case 'D': o.optimize = o.force = 1; break;
		case 'v': o.verbose = 1; break;
		case 't': o.timing = 1; break;
		case 'V':
			printf("fsck.tux3 %s (libtux3 %s, interface %d)\n",
			       tux3_version(), tux3_version(),
			       tux3_library_version());
			return EXIT_CLEAN;
		case 'C': {
			/* a descriptor: decimal digits only, no sign */
			long fd = 0;
			const char *d = optarg;
			for (; *d >= '0' && *d <= '9' && fd <= INT_MAX; d++)
				fd = fd * 10 + (*d - '0');
			if (d == optarg || *d || fd > INT_MAX) {
				fprintf(stderr, "fsck.tux3: -C %s: not a file "
					"descriptor number (0 or more)\n",
					optarg);
				usage();
				return EXIT_USAGE;
			}
			o.progress_fd = (int)fd;
			break;
		}
		default:
			if (optopt == 'C')
				fprintf(stderr, "fsck.tux3: -C needs a file "
					"descriptor\n");
			else
				fprintf(stderr, "fsck.tux3: invalid option -- "
					"'%c'\n", optopt);
			usage();
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		usage();
		return EXIT_USAGE;
	}
	o.device = argv[optind];
	if (o.no + o.yes + o.preen > 1) {
		fprintf(stderr, "fsck.tux3: only one of -n, -y and -p may be "
			"given\n");
		return EXIT_USAGE;
	}
	if (o.optimize && o.no) {
		fprintf(stderr, "fsck.tux3: -D writes the directories: it "
			"cannot be given with -n\n");
		return EXIT_USAGE;
	}
	if (o.progress_fd > 0 && fcntl(o.progress_fd, F_GETFL) < 0) {
		fprintf(stderr, "fsck.tux3: -C %d: %s\n", o.progress_fd,
			strerror(errno));
		return EXIT_OPERATIONAL;
	}
	o.bar = o.progress_fd == 0 && isatty(STDOUT_FILENO);
	o.test_fail = getenv("FSCK_TUX3_TEST_FAIL_REPAIR");
	const char *k = getenv("FSCK_TUX3_TEST_SIGNAL_PASS");
	if (k) {
		o.test_kill_pass = atoi(k);
		o.test_kill_sig = strstr(k, ":TERM") ? SIGTERM : SIGINT;
	}

	struct stat st;
	if (stat(o.device, &st)) {
		fprintf(stderr, "fsck.tux3: %s: %s\n", o.device,
			strerror(errno));
		return EXIT_OPERATIONAL;
	}
	if (!o.no && !o.yes && !o.preen) {
		if (!isatty(STDIN_FILENO) ||
		    !(o.tty = fopen("/dev/tty", "r+"))) {
			fprintf(stderr, "fsck.tux3: need a terminal for "
				"interactive repairs (or give -n, -y or -p)\n");
			return EXIT_OPERATIONAL;
		}
		o.interactive = 1;
	}

	/* In use?  A mount first (it names a place), then the lock. */
	struct mount m;
	mount_state(o.device, &st, &m);
	enum use lock = lock_state(o.device, !o.no && m.use == USE_NONE);
	enum use use = m.use > lock ? m.use : lock;
	int status = EXIT_OPERATIONAL;
	if (lock == USE_RW) {
		/* a writer: the library would not even open it to read */
		fprintf(stderr, "fsck.tux3: %s is in use read-write: another "
			"process holds the volume lock exclusively; cannot "
			"%s it now\n", o.device, o.no ? "check" : "repair");
		goto out;
	} else if (use == USE_RW && !o.no) {
		fprintf(stderr, "fsck.tux3: %s is mounted read-write on %s "
			"(%s): cannot repair it (unmount it, or check it with "
			"-n)\n", o.device, m.point, m.fstype);
		goto out;
	} else if (use == USE_RW) {
		fprintf(stderr, "fsck.tux3: warning: %s is mounted read-write "
			"on %s (%s): it may change while it is checked, so the "
			"results may be inconsistent\n", o.device, m.point,
			m.fstype);
	} else if (use == USE_RO && !o.no && !o.preen) {
		if (m.use == USE_RO)
			fprintf(stderr, "fsck.tux3: %s is mounted read-only on "
				"%s (%s): repairs leave that mount with the "
				"old state until it is remounted\n", o.device,
				m.point, m.fstype);
		else
			fprintf(stderr, "fsck.tux3: %s is open read-only by "
				"another process: repairs leave it with the "
				"old state until it reopens the volume\n",
				o.device);
	}

	/* -b: the secondary superblock (format.md 15.3) stands in for a
	 * primary without its magic: reported with -n, written back
	 * otherwise, then the volume is checked in full */
	bool restored = false;
	if (o.backup) {
		char msg[400];
		int r = tux3_sb2_restore(o.device, !o.no, msg, sizeof(msg));
		if (r < 0) {
			fprintf(stderr, "fsck.tux3: -b: %s\n", msg);
		} else {
			printf("%s: %s\n", o.device, msg);
			if (!r && o.no) {
				status = EXIT_UNCORRECTED;
				goto out;
			}
			if (!r) {
				restored = true;
				o.force = 1;
			}
		}
	}

	struct tux3_fsck_result res;
	if (!o.force) {
		int sealed = tux3_fsck_sealed(o.device, &res);
		if (got_signal) {
			status = EXIT_CANCELLED;
			goto out;
		}
		if (sealed > 0) {
			printf("%s: clean, %" PRIu64 " files, %" PRIu64
			       "/%" PRIu64 " blocks\n", o.device, res.files,
			       res.usedblocks, res.blocks);
			status = EXIT_CLEAN;
			goto out;
		}
	}

	struct tux3_fsck_ops ops = {
		.pass_begin = pass_begin, .pass_end = pass_end,
		.problem = problem, .info = info, .progress = progress,
		.cancelled = cancelled, .restart = restart,
		.repair_fault = repair_fault,
	};
	enum tux3_fsck_mode mode = o.no ? TUX3_FSCK_CHECK :
		use == USE_RO ? TUX3_FSCK_REPAIR_MOUNTED_RO : TUX3_FSCK_REPAIR;
	if (o.optimize)
		mode |= TUX3_FSCK_OPTIMIZE_DIRS;
	char err[600];
	o.res = &res;
	int rc = tux3_fsck_run(o.device, mode, &ops, &o, &res, err,
			       sizeof(err));
	bar_clear(&o);
	if (rc < 0) {
		fprintf(stderr, "fsck.tux3: %s\n", err[0] ? err :
			strerror(-rc));
		status = EXIT_OPERATIONAL;
		goto out;
	}
	/* a signal after the engine's last poll came too late: the run
	 * finished (repairs committed), and its result stands; a signal
	 * that broke a question aborted the run: cancelled too */
	if (res.cancelled || (res.aborted && got_signal)) {
		printf("%s: cancelled; nothing was committed\n", o.device);
		status = EXIT_CANCELLED;
		goto out;
	}
	if (o.unexpected) {
		printf("\n%s: UNEXPECTED INCONSISTENCY; RUN fsck MANUALLY.\n"
		       "\t(i.e., without -a or -p options)\n", o.device);
		status = EXIT_UNCORRECTED;
		goto out;
	}
	if (res.aborted) {
		printf("%s: stopped; nothing was committed\n", o.device);
		status = EXIT_UNCORRECTED;
		goto out;
	}
	if (o.optimize)
		printf("%s: %" PRIu64 " director%s optimized; every directory: "
		       "%" PRIu64 " blocks before, %" PRIu64 " after\n",
		       o.device, res.dirs_optimized,
		       res.dirs_optimized == 1 ? "y" : "ies",
		       res.dir_blocks_before, res.dir_blocks_after);
	bool optimized = res.modified && res.dirs_optimized;
	if ((res.modified && res.fixed) || restored || optimized)
		printf("\n%s: ***** FILE SYSTEM WAS MODIFIED *****\n",
		       o.device);
	bool stale = res.modified && use == USE_RO;
	if (stale)
		printf("%s: ***** REBOOT SYSTEM *****\n"
		       "\t(%s still has the old state: remount it)\n",
		       o.device, m.use == USE_RO ? m.point :
		       "its read-only user");
	printf("%s: %" PRIu64 " files, %" PRIu64 "/%" PRIu64 " blocks",
	       o.device, res.files, res.usedblocks, res.blocks);
	if (res.found)
		printf(", %u problem%s found, %u fixed", res.found,
		       res.found == 1 ? "" : "s", res.fixed);
	printf("\n");
	status = res.unfixed ? EXIT_UNCORRECTED :
		 res.fixed || restored || optimized ? EXIT_CORRECTED :
		 EXIT_CLEAN;
	if (stale)
		status |= EXIT_REBOOT;
out:
	if (o.tty)
		fclose(o.tty);
	if (o.timing && status != EXIT_OPERATIONAL)
		printf("Total: time %.3f s, peak memory %ld KiB\n",
		       since(&o.start), peak_rss());
	return status;
}

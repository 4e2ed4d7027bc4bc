/*
 * fsck.tux3: check and repair a Tux3 volume under the fsck(8) contract.
 * The passes and the problem table are the library's (common/fsck.c);
 * this is the front end: options, questions, exit codes, progress,
 * timing, the mounted-device check and signals.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include "tux3.h"
#include "tux3_fsck.h"

enum {
	EXIT_CLEAN = 0, EXIT_CORRECTED = 1, EXIT_REBOOT = 2,
	EXIT_UNCORRECTED = 4, EXIT_OPERATIONAL = 8, EXIT_USAGE = 16,
	EXIT_CANCELLED = 32,
};

static volatile sig_atomic_t got_signal;

struct opts {
	int preen, no, yes, force, verbose, timing;
	int progress_fd;	/* -1 none */
	const char *device;
	int interactive;
	FILE *tty;
	int unexpected;		/* -p met a problem it may not fix */
	struct timespec t0;
	int test_kill_pass;	/* FSCK_TUX3_TEST_SIGNAL_PASS: raise SIGINT */
};

static void on_signal(int sig)
{
	(void)sig;
	got_signal = 1;
}

static void usage(void)
{
	fprintf(stderr, "Usage: fsck.tux3 [-a|-p] [-n] [-y] [-f] [-C fd] [-v] "
		"[-V] [-t] DEVICE\n"
		"  -p, -a   repair what is safe without questions\n"
		"  -n       check only: open read-only, answer no\n"
		"  -y       answer yes to every question\n"
		"  -f       check even a volume that looks clean\n"
		"  -C fd    progress lines \"pass current max device\" on fd\n"
		"  -v       verbose\n"
		"  -V       print the version and exit\n"
		"  -t       time and peak memory per pass\n");
}

static int cancelled(void *ctx)
{
	(void)ctx;
	return got_signal;
}

static void pass_begin(void *ctx, unsigned pass, const char *title)
{
	struct opts *o = ctx;
	if (o->test_kill_pass && (int)pass == o->test_kill_pass)
		raise(SIGINT);
	clock_gettime(CLOCK_MONOTONIC, &o->t0);
	if (!o->preen)
		printf("Pass %u: %s\n", pass, title);
	fflush(stdout);
}

static void pass_end(void *ctx, unsigned pass)
{
	struct opts *o = ctx;
	if (!o->timing)
		return;
	struct timespec t1;
	struct rusage ru;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	getrusage(RUSAGE_SELF, &ru);
	double s = (double)(t1.tv_sec - o->t0.tv_sec) +
		   (double)(t1.tv_nsec - o->t0.tv_nsec) / 1e9;
	printf("Pass %u: time %.3f s, peak memory %ld KiB\n", pass, s,
	       ru.ru_maxrss);
}

static void progress(void *ctx, unsigned pass, uint64_t cur, uint64_t max)
{
	struct opts *o = ctx;
	if (o->progress_fd < 0)
		return;
	if (o->progress_fd == 0) {
		if (isatty(1)) {
			printf("\rPass %u: %3u%%", pass, max ?
			       (unsigned)(cur * 100 / max) : 100);
			if (cur >= max)
				printf("\r              \r");
			fflush(stdout);
		}
		return;
	}
	dprintf(o->progress_fd, "%u %" PRIu64 " %" PRIu64 " %s\n", pass, cur,
		max, o->device);
}

static void info(void *ctx, unsigned pass, const char *text)
{
	struct opts *o = ctx;
	(void)pass;
	/* pending orphans are always shown; replay details with -v */
	if (strstr(text, "orphan"))
		printf(o->preen ? "%s: %s\n" : "%.0s%s\n", o->device, text);
	else if (o->verbose)
		printf("%s\n", text);
}

/* The answer: -n no, -y yes, -p yes when preen-safe, else ask. */
static int problem(void *ctx, const struct tux3_fsck_problem *p)
{
	struct opts *o = ctx;
	if (o->preen) {
		if (!p->def->preen_ok || !p->fixable) {
			printf("%s: %s\n", o->device, p->text);
			o->unexpected = 1;
			return -1;
		}
		printf("%s: %s.  FIXED.\n", o->device, p->text);
		return 1;
	}
	printf("%s (%s)\n", p->text, p->def->code);
	if (!p->fixable && (!p->def->fix || !o->no)) {
		printf("  cannot be fixed\n");
		return 0;
	}
	if (o->no) {
		printf("  %s? no\n", p->def->fix);
		return 0;
	}
	if (o->yes) {
		printf("  %s? yes\n", p->def->fix);
		return 1;
	}
	for (;;) {
		char line[64];
		fprintf(o->tty, "  %s<y>? ", p->def->fix);
		fflush(o->tty);
		if (!fgets(line, sizeof(line), o->tty) || got_signal)
			return -1;
		if (line[0] == '\n' || line[0] == 'y' || line[0] == 'Y')
			return 1;
		if (line[0] == 'n' || line[0] == 'N')
			return 0;
	}
}

/* 0 not mounted, 1 read-only, 2 read-write, <0 unknown */
static int mount_state(const char *device)
{
	struct stat dst, mst;
	char real[PATH_MAX];
	if (stat(device, &dst))
		return -errno;
	if (!realpath(device, real))
		real[0] = 0;
	FILE *f = fopen("/proc/self/mountinfo", "r");
	if (!f)
		return 0;
	char *line = NULL;
	size_t cap = 0;
	int state = 0;
	while (getline(&line, &cap, f) > 0) {
		unsigned maj, min;
		char opts[256], src[PATH_MAX];
		if (sscanf(line, "%*u %*u %u:%u %*s %*s %255s", &maj, &min,
			   opts) != 3)
			continue;
		char *dash = strstr(line, " - ");
		if (!dash || sscanf(dash, " - %*s %4095s", src) != 1)
			continue;
		bool match = false;
		if (S_ISBLK(dst.st_mode) && major(dst.st_rdev) == maj &&
		    minor(dst.st_rdev) == min)
			match = true;
		if (real[0] && !strcmp(src, real))
			match = true;
		if (!match && S_ISREG(dst.st_mode) && src[0] == '/' &&
		    !stat(src, &mst) && mst.st_ino == dst.st_ino &&
		    mst.st_dev == dst.st_dev)
			match = true;
		if (!match)
			continue;
		int rw = !strncmp(opts, "rw", 2) && (opts[2] == 0 ||
						     opts[2] == ',');
		if ((rw ? 2 : 1) > state)
			state = rw ? 2 : 1;
	}
	free(line);
	fclose(f);
	return state;
}

int main(int argc, char **argv)
{
	struct opts o = { .progress_fd = -1 };
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	opterr = 0;
	while ((c = getopt(argc, argv, "apnyfC:vVt")) != -1) {
		switch (c) {
		case 'a': case 'p': o.preen = 1; break;
		case 'n': o.no = 1; break;
		case 'y': o.yes = 1; break;
		case 'f': o.force = 1; break;
		case 'v': o.verbose = 1; break;
		case 't': o.timing = 1; break;
		case 'V':
			printf("fsck.tux3 %s (libtux3 %s)\n", tux3_version(),
			       tux3_version());
			return EXIT_CLEAN;
		case 'C': {
			char *end;
			long fd = strtol(optarg, &end, 10);
			if (*end || fd < 0 || fd > INT_MAX) {
				if (*end || fd > INT_MAX) {
					usage();
					return EXIT_USAGE;
				}
				fd = -1;	/* negative: hidden */
			}
			o.progress_fd = (int)fd;
			break;
		}
		default:
			fprintf(stderr, "fsck.tux3: invalid option -- '%c'\n",
				optopt);
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
	const char *k = getenv("FSCK_TUX3_TEST_SIGNAL_PASS");
	if (k)
		o.test_kill_pass = atoi(k);

	struct stat st;
	if (stat(o.device, &st)) {
		fprintf(stderr, "fsck.tux3: %s: %s\n", o.device,
			strerror(errno));
		return EXIT_OPERATIONAL;
	}
	if (!o.no && !o.yes && !o.preen) {
		if (!isatty(0) || !(o.tty = fopen("/dev/tty", "r+"))) {
			fprintf(stderr, "fsck.tux3: need a terminal for "
				"interactive repairs\n");
			return EXIT_OPERATIONAL;
		}
		o.interactive = 1;
	}
	int mounted = mount_state(o.device);
	if (mounted == 2 && !o.no) {
		fprintf(stderr, "fsck.tux3: %s is mounted read-write: cannot "
			"repair it\n", o.device);
		return EXIT_OPERATIONAL;
	}

	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	struct tux3_fsck_result res;
	if (!o.force) {
		int sealed = tux3_fsck_sealed(o.device, &res);
		if (sealed > 0) {
			printf("%s: clean, %" PRIu64 " files, %" PRIu64
			       "/%" PRIu64 " blocks\n", o.device, res.files,
			       res.usedblocks, res.blocks);
			return EXIT_CLEAN;
		}
	}

	struct tux3_fsck_ops ops = {
		.pass_begin = pass_begin, .pass_end = pass_end,
		.problem = problem, .info = info, .progress = progress,
		.cancelled = cancelled,
	};
	char err[600];
	int rc = tux3_fsck_run(o.device, o.no ? TUX3_FSCK_CHECK :
			       TUX3_FSCK_REPAIR, &ops, &o, &res, err,
			       sizeof(err));
	if (o.tty)
		fclose(o.tty);
	if (rc < 0) {
		fprintf(stderr, "fsck.tux3: %s\n", err[0] ? err :
			strerror(-rc));
		return EXIT_OPERATIONAL;
	}
	if (res.cancelled || got_signal) {
		printf("%s: cancelled; nothing was written\n", o.device);
		return EXIT_CANCELLED;
	}
	if (o.unexpected) {
		printf("\n%s: UNEXPECTED INCONSISTENCY; RUN fsck MANUALLY.\n"
		       "\t(i.e., without -a or -p options)\n", o.device);
		return EXIT_UNCORRECTED;
	}
	if (res.aborted) {
		printf("%s: stopped; nothing was written\n", o.device);
		return EXIT_UNCORRECTED;
	}
	if (res.modified && res.fixed)
		printf("\n%s: ***** FILE SYSTEM WAS MODIFIED *****\n",
		       o.device);
	printf("%s: %" PRIu64 " files, %" PRIu64 "/%" PRIu64 " blocks",
	       o.device, res.files, res.usedblocks, res.blocks);
	if (res.found)
		printf(", %u problem%s found, %u fixed", res.found,
		       res.found == 1 ? "" : "s", res.fixed);
	printf("\n");
	if (res.unfixed)
		return EXIT_UNCORRECTED;
	if (res.fixed)
		return EXIT_CORRECTED | (mounted == 1 ? EXIT_REBOOT : 0);
	return EXIT_CLEAN;
}

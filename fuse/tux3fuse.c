/*
 * tux3fuse [-o options] DEVICE MOUNTPOINT
 *
 * Mounts a Tux3 volume through FUSE (libfuse3, low-level API).  Our own
 * options (ro, snapshot=TAG, snapdir, commit=SECS, spin=USECS, cache=MIB,
 * cpu_latency=USECS, timeout=SECS, nowriteback, io_uring, relatime,
 * strictatime, noatime) are
 * taken out of the command line with fuse_opt_parse; the rest (-f, -d,
 * -s, -o allow_other, ...) go to libfuse.  The volume is opened before
 * the mount, so that a bad device is reported on the terminal, then the
 * process becomes a daemon (unless -f) and runs the request loop of
 * serve.c (-s: one thread).  Unmounting, SIGTERM, SIGINT and SIGHUP end
 * the loop; what is pending is then committed before the exit.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include "tux3fuse.h"

struct options {
	char *snapshot;
	unsigned commit;
	unsigned spin;			/* us */
	unsigned cache;			/* MiB */
	unsigned cpu_latency;		/* us; UINT_MAX: not asked for */
	unsigned timeout;		/* s, entry and attribute cache */
	int nowriteback;
	int io_uring;
	int snapdir;			/* T3F_SNAPDIR_* */
	int atime;			/* TUX3_ATIME_* or T3F_NOATIME */
	int ro, allow_other, default_permissions;
	int help, version;
	char *device;
	int nonopts;
};

enum {
	KEY_RO, KEY_RW, KEY_ALLOW_OTHER, KEY_DEFAULT_PERMISSIONS, KEY_HELP,
	KEY_VERSION, KEY_COMMIT, KEY_SPIN, KEY_CACHE, KEY_CPU_LATENCY,
	KEY_TIMEOUT, KEY_RELATIME, KEY_STRICTATIME, KEY_NOATIME, KEY_SNAPDIR,
	KEY_SNAPDIR_IS,
};

/* The numeric options are parsed here (libfuse's %u takes "-1", "5x" and
 * wraps what overflows): their largest values */
#define CPU_LATENCY_MAX 2000000000u
#define TIMEOUT_MAX (365u * 86400)

static const struct fuse_opt t3_opts[] = {
	{ "snapshot=%s", offsetof(struct options, snapshot), 0 },
	FUSE_OPT_KEY("commit=", KEY_COMMIT),
	FUSE_OPT_KEY("spin=", KEY_SPIN),
	FUSE_OPT_KEY("cache=", KEY_CACHE),
	FUSE_OPT_KEY("cpu_latency=", KEY_CPU_LATENCY),
	FUSE_OPT_KEY("timeout=", KEY_TIMEOUT),
	{ "nowriteback", offsetof(struct options, nowriteback), 1 },
	{ "io_uring", offsetof(struct options, io_uring), 1 },
	FUSE_OPT_KEY("snapdir", KEY_SNAPDIR),
	FUSE_OPT_KEY("snapdir=", KEY_SNAPDIR_IS),
	FUSE_OPT_KEY("relatime", KEY_RELATIME),
	FUSE_OPT_KEY("strictatime", KEY_STRICTATIME),
	FUSE_OPT_KEY("noatime", KEY_NOATIME),
	FUSE_OPT_KEY("ro", KEY_RO),
	FUSE_OPT_KEY("rw", KEY_RW),
	FUSE_OPT_KEY("allow_other", KEY_ALLOW_OTHER),
	FUSE_OPT_KEY("default_permissions", KEY_DEFAULT_PERMISSIONS),
	FUSE_OPT_KEY("-h", KEY_HELP),
	FUSE_OPT_KEY("--help", KEY_HELP),
	FUSE_OPT_KEY("-V", KEY_VERSION),
	FUSE_OPT_KEY("--version", KEY_VERSION),
	FUSE_OPT_END
};

/* NAME=VALUE, VALUE decimal digits only, at most max: 0 and *out set,
 * or -1 with a message naming the option */
static int number_opt(const char *arg, unsigned max, const char *unit,
		      unsigned *out)
{
	const char *s = strchr(arg, '=') + 1;
	unsigned long long v = 0;
	if (!*s)
		goto bad;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			goto bad;
		v = v * 10 + (unsigned)(*s - '0');
		if (v > max) {
			fprintf(stderr, "tux3fuse: %s: more than %u %s\n", arg,
				max, unit);
			return -1;
		}
	}
	*out = (unsigned)v;
	return 0;
bad:
	fprintf(stderr, "tux3fuse: %s: not a number of %s (decimal digits "
		"only)\n", arg, unit);
	return -1;
}

/* 1 keeps the argument for libfuse, 0 drops it, -1 is an error */
static int opt_proc(void *data, const char *arg, int key,
		    struct fuse_args *outargs)
{
	struct options *o = data;
	(void)outargs;
	switch (key) {
	case KEY_COMMIT:
		return number_opt(arg, UINT_MAX, "seconds", &o->commit);
	case KEY_SPIN:
		return number_opt(arg, UINT_MAX, "microseconds", &o->spin);
	case KEY_CACHE:
		return number_opt(arg, UINT_MAX, "MiB", &o->cache);
	case KEY_TIMEOUT:
		return number_opt(arg, TIMEOUT_MAX, "seconds", &o->timeout);
	case KEY_CPU_LATENCY:
		return number_opt(arg, CPU_LATENCY_MAX, "microseconds",
				  &o->cpu_latency);
	case KEY_SNAPDIR:
		o->snapdir = T3F_SNAPDIR_HIDDEN;
		return 0;
	case KEY_SNAPDIR_IS:
		if (!strcmp(arg, "snapdir=hidden"))
			o->snapdir = T3F_SNAPDIR_HIDDEN;
		else if (!strcmp(arg, "snapdir=visible"))
			o->snapdir = T3F_SNAPDIR_VISIBLE;
		else {
			fprintf(stderr, "tux3fuse: %s: hidden or visible\n",
				arg);
			return -1;
		}
		return 0;
	case KEY_RELATIME:
		o->atime = TUX3_ATIME_RELATIME;
		return 0;
	case KEY_STRICTATIME:
		o->atime = TUX3_ATIME_STRICT;
		return 0;
	case KEY_NOATIME:
		o->atime = T3F_NOATIME;
		return 1;	/* libfuse knows it: the kernel's flag too */
	case KEY_RO:
		o->ro = 1;
		return 1;	/* the kernel mounts read-only too */
	case KEY_RW:
		o->ro = 0;
		return 1;
	case KEY_ALLOW_OTHER:
		o->allow_other = 1;
		return 1;
	case KEY_DEFAULT_PERMISSIONS:
		o->default_permissions = 1;
		return 1;
	case KEY_HELP:
		o->help = 1;
		return 0;
	case KEY_VERSION:
		o->version = 1;
		return 0;
	case FUSE_OPT_KEY_NONOPT:
		/* DEVICE, then MOUNTPOINT (left to fuse_parse_cmdline) */
		if (o->nonopts++ == 0) {
			o->device = strdup(arg);
			return o->device ? 0 : -1;
		}
		if (o->nonopts == 2)
			return 1;
		fprintf(stderr, "tux3fuse: too many arguments: %s\n", arg);
		return -1;
	default:
		return 1;
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tux3fuse [-o options] DEVICE MOUNTPOINT\n"
		"\n"
		"tux3fuse options:\n"
		"    -o ro                  mount read-only (nothing is written)\n"
		"    -o snapshot=TAG        mount the snapshot named TAG\n"
		"    -o snapdir[=hidden|visible]\n"
		"                           every snapshot, read-only, under "
		"/.snapshots\n"
		"                           (listed in / with visible)\n"
		"    -o commit=SECS         commit a changed delta after SECS "
		"seconds\n"
		"                           (default 5, 0: only on fsync, by "
		"size and at unmount)\n"
		"    -o spin=USECS          poll the FUSE device for USECS after a "
		"request\n"
		"                           before sleeping (default 1000, 0: "
		"off)\n"
		"    -o cache=MIB           keep up to MIB of volume blocks in "
		"memory\n"
		"                           (default 32, 0: none)\n"
		"    -o cpu_latency=USECS   while busy, ask idle CPUs to wake "
		"within USECS\n"
		"                           (0: poll, not halt; costs power; "
		"default off)\n"
		"    -o timeout=SECS        the kernel keeps names and "
		"attributes SECS\n"
		"                           (default 86400: every change "
		"comes through it)\n"
		"    -o io_uring            requests through io_uring, a queue "
		"per CPU\n"
		"                           (Linux 6.14+, fuse enable_uring "
		"on)\n"
		"    -o nowriteback         no writeback cache: each write(2) "
		"reaches the\n"
		"                           daemon before it returns\n"
		"    -o relatime            a read updates atime when it is "
		"not newer than\n"
		"                           mtime and ctime, or a day old "
		"(default)\n"
		"    -o strictatime         every read updates atime\n"
		"    -o noatime             reads never update atime (always "
		"so on a\n"
		"                           volume made without -O atime)\n"
		"    -o allow_other         other users may use the mount "
		"(implies\n"
		"                           default_permissions)\n"
		"    -h, --help             this help\n"
		"    -V, --version          version\n"
		"\n");
}

/* "-ofsname=DEVICE" with commas and backslashes escaped */
static int add_fsname(struct fuse_args *args, const char *device)
{
	char *opt = NULL, *fsname = NULL;
	int err = -1;
	if (asprintf(&fsname, "fsname=%s", device) < 0)
		return -1;
	if (!fuse_opt_add_opt_escaped(&opt, fsname) &&
	    !fuse_opt_insert_arg(args, 1, "-o") &&
	    !fuse_opt_insert_arg(args, 2, opt) &&
	    !fuse_opt_insert_arg(args, 3, "-osubtype=tux3"))
		err = 0;
	free(opt);
	free(fsname);
	return err;
}

static int open_volume(struct t3f *fs, const struct options *o)
{
	char err[512];
	int r = tux3_open_err(fs->device,
			      o->ro ? TUX3_OPEN_RDONLY : TUX3_OPEN_RDWR,
			      &fs->vol, err, sizeof(err));
	if (r) {
		fprintf(stderr, "tux3fuse: %s: %s\n", fs->device, err);
		return r;
	}
	r = tux3_set_cache(fs->vol, (size_t)o->cache << 20);
	if (r) {
		fprintf(stderr, "tux3fuse: %s: cannot keep a cache of %u MiB: "
			"%s\n", fs->device, o->cache, strerror(-r));
		tux3_close(fs->vol);
		fs->vol = NULL;
		return r;
	}
	for (unsigned i = 0; i < tux3_warning_count(fs->vol); i++)
		fprintf(stderr, "tux3fuse: %s: warning: %s\n", fs->device,
			tux3_warning(fs->vol, i));
	if (o->snapshot) {
		r = tux3_version_select(fs->vol, o->snapshot);
		if (r) {
			char buf[512];
			if (r == -ENOENT)
				fprintf(stderr, "tux3fuse: %s: no snapshot "
					"named %s\n", fs->device, o->snapshot);
			else
				fprintf(stderr, "tux3fuse: %s: snapshot %s: "
					"%s\n", fs->device, o->snapshot,
					tux3_error_text(fs->vol, buf,
							sizeof(buf)));
			tux3_close(fs->vol);
			fs->vol = NULL;
			return r;
		}
	}
	return 0;
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct options o = { .commit = 5, .spin = 1000, .cache = 32,
			     .cpu_latency = UINT_MAX, .timeout = 86400 };
	struct cpu_latency latency = { .fd = -1 };
	struct fuse_cmdline_opts cmd = { 0 };
	struct fuse_session *se = NULL;
	struct t3f fs = { .timeout = 1.0 };
	int ret = 1;

	if (tux3_library_version() != TUX3_LIBRARY_VERSION) {
		fprintf(stderr, "tux3fuse: libtux3 interface %d, built for "
			"%d\n", tux3_library_version(), TUX3_LIBRARY_VERSION);
		return 1;
	}
	if (fuse_opt_parse(&args, &o, t3_opts, opt_proc) == -1)
		goto out_args;
	if (o.help) {
		usage(stdout);
		printf("FUSE options:\n");
		fuse_cmdline_help();
		fuse_lowlevel_help();
		ret = 0;
		goto out_args;
	}
	if (o.version) {
		printf("tux3fuse (tux3-tools, libtux3 %s), FUSE library %s\n",
		       tux3_version(), fuse_pkgversion());
		ret = 0;
		goto out_args;
	}
	if (o.nonopts != 2) {
		usage(stderr);
		goto out_args;
	}
	/* other users never bypass the modes: the kernel checks them */
	if (o.allow_other && !o.default_permissions &&
	    fuse_opt_add_arg(&args, "-odefault_permissions"))
		goto out_args;
	char *real = realpath(o.device, NULL);
	if (!real) {
		fprintf(stderr, "tux3fuse: %s: %s\n", o.device,
			strerror(errno));
		goto out_args;
	}
	free(o.device);
	o.device = real;
	if (add_fsname(&args, o.device))
		goto out_args;
	if (fuse_parse_cmdline(&args, &cmd) != 0)
		goto out_args;
	if (cmd.show_help || cmd.show_version || !cmd.mountpoint) {
		usage(stderr);
		goto out_cmd;
	}
	/* a snapshot's writes may move its name to a new version: the
	 * views are the version table of the mount's start */
	if (o.snapdir && o.snapshot && !o.ro) {
		fprintf(stderr, "tux3fuse: snapdir: not with a read-write "
			"snapshot mount (add -o ro)\n");
		goto out_cmd;
	}
	if (cmd.clone_fd) {
		/* serve.c reads one device descriptor, shared by its
		 * threads */
		fprintf(stderr, "tux3fuse: clone_fd is not supported\n");
		goto out_cmd;
	}

	fs.device = o.device;
	fs.snapshot = o.snapshot;
	fs.readonly = o.ro;
	fs.commit_secs = o.commit;
	fs.foreground = cmd.foreground;
	fs.timeout = o.timeout;
	fs.writeback = !o.nowriteback && !o.ro;
	fs.atime = o.atime;
	fs.snapdir = o.snapdir;
	fs.want_killpriv = !o.ro;
	fs.want_uring = o.io_uring;
	if (pthread_mutex_init(&fs.lock, NULL) || itab_init(&fs.itab)) {
		fprintf(stderr, "tux3fuse: out of memory\n");
		goto out_cmd;
	}
	if (o.cpu_latency != UINT_MAX) {
		int r = cpu_latency_open(&latency, o.cpu_latency);
		if (r == -EINVAL) {
			fprintf(stderr, "tux3fuse: cpu_latency=%u: more than "
				"2000000000 microseconds\n", o.cpu_latency);
			goto out_itab;
		}
		/* a tuning request: the mount is served without it */
		if (r < 0)
			fprintf(stderr, "tux3fuse: cpu_latency: cannot open "
				"/dev/cpu_dma_latency: %s; going on without\n",
				strerror(-r));
	}
	if (open_volume(&fs, &o))
		goto out_itab;
	/* a volume made without -O atime stores none: noatime, whatever
	 * was asked (tux3fuse(8)); a read-only mount writes none */
	if (!tux3_atime_enabled(fs.vol) || fs.readonly)
		fs.atime = T3F_NOATIME;

	if (fs.snapdir) {
		if (t3f_snapdir_init(&fs))
			goto out_vol;
		t3f_snapdir_ops_init();
	}
	se = fuse_session_new(&args, fs.snapdir ? &t3f_snapdir_ops : &t3f_ops,
			      sizeof(t3f_ops), &fs);
	if (!se)
		goto out_vol;
	fs.se = se;
	if (fuse_set_signal_handlers(se))
		goto out_session;
	if (fuse_session_mount(se, cmd.mountpoint))
		goto out_signals;
	int r = t3f_kernel_io(&fs);
	if (r)	/* a round trip per write more, and nothing worse */
		fprintf(stderr, "tux3fuse: cannot hook the FUSE device: %s\n",
			strerror(-r));
	if (!cmd.foreground)
		openlog("tux3fuse", LOG_PID, LOG_DAEMON);
	fuse_daemonize(cmd.foreground);

	struct serve_opts so = {
		.max_threads = cmd.singlethread ? 1 : cmd.max_threads,
		.max_idle = cmd.max_idle_threads == UINT_MAX
				    ? 10 : cmd.max_idle_threads,
		.spin_us = o.spin,
		.quiet_if = &fs.uring,
		.latency = latency.fd >= 0 ? &latency : NULL,
	};
	ret = t3f_serve(se, &so);
	t3f_uring_stop(&fs);
	if (ret < 0)
		t3f_log(&fs, "reading the FUSE device: %s", strerror(-ret));
	/* a signal ends the loop with its number: a clean exit all the same */
	ret = ret < 0 ? 1 : 0;
	fuse_session_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out_session:
	fuse_session_destroy(se);	/* runs destroy (the commit) */
out_vol:
	if (t3f_shutdown(&fs))
		ret = 1;
out_itab:
	cpu_latency_close(&latency);
	t3f_snapdir_free(&fs);
	itab_free(&fs.itab);
	pthread_mutex_destroy(&fs.lock);
out_cmd:
	free(cmd.mountpoint);
out_args:
	fuse_opt_free_args(&args);
	free(o.device);
	free(o.snapshot);
	return ret;
}

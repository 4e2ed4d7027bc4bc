/*
 * tux3dot: draw a Tux3 volume with Graphviz (see doc/tux3dot.8).
 *
 *   tux3dot [-o FILE] [-T dot|svg|png|pdf] [--inode N | --path P]
 *           [--tree all|itree|log|files|atoms|bitmap|versions]
 *           [--depth N] [--max-nodes N] [-v] DEVICE
 *
 * Exit: 0 written; 1 written, but some structures were unreadable (drawn
 * as error nodes); 8 operational error (options, open, render).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dot.h"

#define EXIT_DRAWN_ERRORS 1
#define EXIT_OPERATIONAL 8
#define DEFAULT_MAX_NODES 400

/* Quiet sanitizer report of the suppressions below */
const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
	return "print_suppressions=0";
}

/* Graphviz keeps some allocations of its plugin loader to the end of the
 * process: not ours to report in the sanitizer build. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libgvc.so\nleak:libcgraph.so\nleak:libgvplugin\n"
	       "leak:libltdl\nleak:libfontconfig\nleak:libcairo\n"
	       "leak:libpango\nleak:libglib\nleak:libgobject\n";
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: tux3dot [-o FILE] [-T dot|svg|png|pdf] [--inode N | --path P]\n"
"               [--tree all|itree|log|files|atoms|bitmap|versions]\n"
"               [--depth N] [--max-nodes N] [-v] DEVICE\n"
"  -o FILE          write to FILE (default: standard output)\n"
"  -T FORMAT        dot (default), svg, png or pdf; without -T, from the\n"
"                   extension of -o FILE\n"
"  --inode N        only inode N: attributes, data tree, extents, entries\n"
"  --path P         the same for the inode at path P in the volume\n"
"  --tree WHAT      what to draw (default all)\n"
"  --depth N        tree nodes down to level N (0 = root), deeper summarised\n"
"  --max-nodes N    draw at most N nodes (default %d), summarise the rest\n"
"  -v               print what was drawn and summarised on stderr\n"
"exit: 0 written, 1 written with unreadable structures, 8 error\n",
		DEFAULT_MAX_NODES);
}

static int bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "tux3dot: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	usage(stderr);
	return EXIT_OPERATIONAL;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	/* a digit first: strtoull would skip blanks and wrap " -5" */
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

static const char *format_of(const char *path)
{
	const char *dot = path ? strrchr(path, '.') : NULL;
	static const char *const known[] = { "dot", "svg", "png", "pdf" };
	if (!dot || strchr(dot, '/'))
		return "dot";
	for (unsigned i = 0; i < 4; i++)
		if (!strcasecmp(dot + 1, known[i]))
			return known[i];
	if (!strcasecmp(dot + 1, "gv"))
		return "dot";
	return "dot";
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "inode", required_argument, NULL, 'i' },
		{ "path", required_argument, NULL, 'p' },
		{ "tree", required_argument, NULL, 't' },
		{ "depth", required_argument, NULL, 'd' },
		{ "max-nodes", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const trees[] = {
		[DT_ALL] = "all", [DT_ITREE] = "itree", [DT_LOG] = "log",
		[DT_FILES] = "files", [DT_ATOMS] = "atoms",
		[DT_BITMAP] = "bitmap", [DT_VERSIONS] = "versions",
	};
	struct dot_opts o = { .tree = DT_ALL, .depth = -1,
			      .max_nodes = DEFAULT_MAX_NODES };
	const char *out = NULL, *format = NULL;
	uint64_t v;
	int c, tree_given = 0;

	if (tux3_library_version() != TUX3_LIBRARY_VERSION) {
		fprintf(stderr, "tux3dot: built for libtux3 interface %d, but "
			"libtux3 %s has interface %d\n",
			TUX3_LIBRARY_VERSION, tux3_version(),
			tux3_library_version());
		return EXIT_OPERATIONAL;
	}
	while ((c = getopt_long(argc, argv, "o:T:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'T':
			if (strcmp(optarg, "dot") && strcmp(optarg, "svg") &&
			    strcmp(optarg, "png") && strcmp(optarg, "pdf"))
				return bad_usage("unknown format '%s'", optarg);
			format = optarg;
			break;
		case 'i':
			if (o.have_inode || o.path)
				return bad_usage("%s: one --inode or --path",
						 optarg);
			if (parse_u64(optarg, UINT64_MAX - 1, &v) || !v)
				return bad_usage("bad inode number '%s'",
						 optarg);
			o.have_inode = 1;
			o.inode = v;
			break;
		case 'p':
			if (o.have_inode || o.path)
				return bad_usage("%s: one --inode or --path",
						 optarg);
			if (optarg[0] != '/')
				return bad_usage("--path %s: an absolute path "
						 "in the volume", optarg);
			o.path = optarg;
			break;
		case 't': {
			unsigned i;
			for (i = 0; i < sizeof(trees) / sizeof(trees[0]); i++)
				if (!strcmp(optarg, trees[i]))
					break;
			if (i == sizeof(trees) / sizeof(trees[0]))
				return bad_usage("unknown --tree '%s'", optarg);
			o.tree = (enum dot_tree)i;
			tree_given = 1;
			break;
		}
		case 'd':
			if (parse_u64(optarg, 1000000, &v))
				return bad_usage("bad depth '%s'", optarg);
			o.depth = (int)v;
			break;
		case 'm':
			if (parse_u64(optarg, 100000000, &v) || !v)
				return bad_usage("bad --max-nodes '%s'",
						 optarg);
			o.max_nodes = (unsigned)v;
			break;
		case 'v':
			o.verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_OPERATIONAL;
		}
	}
	if (optind + 1 != argc)
		return bad_usage("%s", optind >= argc ? "no DEVICE given" :
				 "one DEVICE only");
	if ((o.have_inode || o.path) && tree_given && o.tree != DT_ALL &&
	    o.tree != DT_FILES && o.tree != DT_VERSIONS)
		return bad_usage("--tree %s does not go with --inode or --path",
				 trees[o.tree]);
	if (!format)
		format = format_of(out);
	const char *device = argv[optind];

	struct tux3_volume *vol;
	char msg[512] = "";
	int err = tux3_open_err(device, TUX3_OPEN_RDONLY, &vol, msg,
				sizeof(msg));
	if (err && err != -ENOENT && err != -EACCES && err != -ENOMEM) {
		/* a damaged log or tree stops replay: draw what the disk
		 * holds without it, and say so in the picture */
		static char why[512];
		snprintf(why, sizeof(why), "%s", msg[0] ? msg : strerror(-err));
		if (!tux3_open_err(device, TUX3_OPEN_NOREPLAY, &vol, msg,
				   sizeof(msg))) {
			fprintf(stderr, "tux3dot: %s: %s; drawing the on-disk "
				"trees without replay\n", device, why);
			o.noreplay_reason = why;
			err = 0;
		}
	}
	if (err) {
		fprintf(stderr, "tux3dot: %s\n", msg[0] ? msg : strerror(-err));
		return EXIT_OPERATIONAL;
	}
	for (unsigned i = 0; i < tux3_warning_count(vol); i++)
		fprintf(stderr, "tux3dot: %s: %s\n", device,
			tux3_warning(vol, i));
	if (o.path) {
		tux3_ino_t ino;
		if ((err = tux3_lookup_path(vol, o.path, &ino))) {
			const struct tux3_error *e = tux3_last_error(vol);
			if (err == -ENOENT && !(e && e->err))
				fprintf(stderr, "tux3dot: --path %s: no such "
					"file or directory in the volume\n",
					o.path);
			else
				fprintf(stderr, "tux3dot: --path %s: %s\n",
					o.path, e && e->err ?
					tux3_error_text(vol, msg, sizeof(msg)) :
					strerror(-err));
			tux3_close(vol);
			return EXIT_OPERATIONAL;
		}
		o.have_inode = 1;
		o.inode = ino;
	}

	struct dot_model m;
	dot_model_init(&m);
	dot_model_limit(&m, o.max_nodes, o.depth);
	int r = dot_walk_volume(vol, &o, &m);
	if (r < 0) {
		if (r == -ENOENT)
			fprintf(stderr, "tux3dot: inode %" PRIu64 ": %s\n",
				o.inode, tux3_error_text(vol, msg,
							 sizeof(msg)));
		else
			fprintf(stderr, "tux3dot: %s\n", strerror(-r));
		dot_model_free(&m);
		tux3_close(vol);
		return EXIT_OPERATIONAL;
	}
	if (o.verbose) {
		uint64_t reads, loads;
		tux3_work_counts(vol, &reads, &loads);
		fprintf(stderr, "tux3dot: %" PRIu64 " device reads, %" PRIu64
			" inodes loaded\n", reads, loads);
	}
	tux3_close(vol);
	int drawn = dot_draw(&m, &o, format, out);
	dot_model_free(&m);
	if (drawn)
		return EXIT_OPERATIONAL;
	return r || o.noreplay_reason ? EXIT_DRAWN_ERRORS : 0;
}

/*
 * tux3debug: inspect a Tux3 volume, in batch (-R, -f, stdin) or
 * interactively; with -w, edit it.  Read-only without -w.
 *
 * Commits with -w: interactive and -R, each editing command commits its
 * own delta when it completes; in -f and stdin batches editing commands
 * gather in one delta until 'delta' (or 'unify'), and the end of the
 * batch commits what is left, also after failed lines (as debugfs applies
 * each command at once, a failed line does not undo the others).
 *
 * Interactive (a terminal on stdin): readline with history kept in
 * ~/.tux3debug_history, completion of command names, of paths inside the
 * volume, of host paths and of set_super/set_inode field names (the
 * command table says which word is which), and long output through a
 * pager when stdout is a terminal too (TUX3DEBUG_PAGER, else PAGER, else
 * less or more; an empty value turns it off).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <readline/history.h>
#include <readline/readline.h>
#include "debugfs.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: tux3debug [-c|-w] [-S TAG] [-R command] "
		"[-f script|-] [-V] [DEVICE]\n"
		"  -c          open without replaying the log (damaged log)\n"
		"  -w          open read-write: allow the editing commands\n"
		"  -S TAG      start in snapshot TAG (as 'cd @TAG')\n"
		"  -R command  run one command and exit\n"
		"  -f script   run the commands in script ('-' = stdin)\n"
		"  -V          print the version and exit\n");
}

int sh_err(struct shell *sh, const char *fmt, ...)
{
	va_list ap;
	fflush(sh->out);	/* what the command printed comes first */
	fflush(stdout);
	fprintf(stderr, "tux3debug: %s", sh->where ? sh->where : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

void sh_warn(struct shell *sh, const char *fmt, ...)
{
	va_list ap;
	fflush(sh->out);
	fflush(stdout);
	fprintf(stderr, "tux3debug: %swarning: ", sh->where ? sh->where : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int sh_volerr(struct shell *sh, const char *what, int err)
{
	char text[512];
	const struct tux3_error *e = sh->vol ? tux3_last_error(sh->vol) : NULL;
	if (e && e->err) {
		sh_err(sh, "%s: %s", what, tux3_error_text(sh->vol, text,
							     sizeof(text)));
		tux3_clear_error(sh->vol);
	} else {
		sh_err(sh, "%s: %s", what, strerror(-err));
	}
	return 1;
}

#define SH_CACHE_BYTES (8u << 20)

int sh_open(struct shell *sh, const char *device, enum tux3_open_mode mode)
{
	char msg[600];
	int err = tux3_open_err(device, mode, &sh->vol, msg, sizeof(msg));
	if (err) {
		sh_err(sh, "%s", msg[0] ? msg : strerror(-err));
		return 1;
	}
	for (unsigned i = 0; i < tux3_warning_count(sh->vol); i++)
		sh_warn(sh, "%s: %s", device, tux3_warning(sh->vol, i));
	free(sh->device);
	sh->device = strdup(device);
	sh->mode = mode;
	sh->vol_replayed = mode != TUX3_OPEN_NOREPLAY;
	if (sh->has_time)
		tux3_set_time(sh->vol, sh->time_ns);
	/* A walk over every file (manifest, rdump, find) loads each inode
	 * several times: without a cache each load reads the itree path
	 * again.  A fixed cache, whatever the volume's size; reads only. */
	if (mode != TUX3_OPEN_RDWR)
		tux3_set_cache(sh->vol, SH_CACHE_BYTES);
	sh->cwd = TUX3_ROOT_INO;
	strcpy(sh->cwdpath, "/");
	sh->version[0] = 0;
	return 0;
}

int sh_commit(struct shell *sh)
{
	if (!sh->vol || sh->mode != TUX3_OPEN_RDWR)
		return 0;
	int err = tux3_sync(sh->vol);
	if (err)
		return sh_volerr(sh, "commit", err);
	sh->dirty = 0;
	return 0;
}

/* A read-write volume is committed first.  The commit is tried with
 * tux3_sync() (so that the library's error text can be printed), then
 * tux3_umount() has nothing left to write; after a failed commit the
 * volume is closed without committing (the last good commit stands). */
int sh_close(struct shell *sh)
{
	int failed = 0;
	if (!sh->vol)
		return 0;
	if (sh->mode == TUX3_OPEN_RDWR) {
		const char *where = sh->where;
		sh->where = "";
		failed = sh_commit(sh);
		if (failed) {
			tux3_close(sh->vol);
		} else {
			int err = tux3_umount(sh->vol);
			if (err)
				failed = sh_err(sh, "%s: unmount: %s",
						sh->device, strerror(-err));
		}
		sh->where = where;
	} else {
		tux3_close(sh->vol);
	}
	sh->vol = NULL;
	free(sh->device);
	sh->device = NULL;
	return failed;
}

/* SOURCE_DATE_EPOCH: reproducible timestamps for everything the library
 * writes (read-only sessions write nothing and do not look at it). */
int sh_read_time(struct shell *sh)
{
	const char *epoch = getenv("SOURCE_DATE_EPOCH");
	if (sh->time_read)
		return 0;
	if (epoch && *epoch) {
		char *end;
		errno = 0;
		long long secs = strtoll(epoch, &end, 10);
		if (errno || *end || secs < -9223372036LL ||
		    secs > 9223372035LL)
			return sh_err(sh, "SOURCE_DATE_EPOCH: not a number of "
				      "seconds: %s", epoch);
		sh->has_time = 1;
		sh->time_ns = (int64_t)secs * 1000000000;
	}
	sh->time_read = 1;
	return 0;
}

/* open [-w|-c] DEVICE, inside a session */
int cmd_open(struct shell *sh, int argc, char **argv)
{
	enum tux3_open_mode mode = TUX3_OPEN_RDONLY;
	int c, w = 0, cat = 0;
	optind = 0;
	while ((c = getopt(argc, argv, "wc")) != -1) {
		if (c == 'w')
			w = 1;
		else if (c == 'c')
			cat = 1;
		else
			return sh_err(sh, "usage: open [-w|-c] DEVICE");
	}
	if (argc - optind != 1 || (w && cat))
		return sh_err(sh, "usage: open [-w|-c] DEVICE");
	if (sh->vol)
		return sh_err(sh, "open: %s is still open; close it first",
			      sh->device);
	if (w) {
		mode = TUX3_OPEN_RDWR;
		if (sh_read_time(sh))
			return 1;
	} else if (cat) {
		mode = TUX3_OPEN_NOREPLAY;
	}
	sh->dirty = 0;
	return sh_open(sh, argv[optind], mode);
}

int cmd_close(struct shell *sh, int argc, char **argv)
{
	(void)argv;
	if (argc != 1)
		return sh_err(sh, "usage: close");
	int failed = sh_close(sh);
	sh->cwd = TUX3_ROOT_INO;
	strcpy(sh->cwdpath, "/");
	sh->version[0] = 0;
	sh->dirty = 0;
	return failed;
}

static int run_stream(struct shell *sh, FILE *f, const char *name)
{
	char *line = NULL, where[300];
	size_t cap = 0;
	unsigned lineno = 0;
	int failed = 0;

	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		snprintf(where, sizeof(where), "%s:%u: ", name, lineno);
		sh->where = where;
		if (shell_execute(sh, line))
			failed = 1;
		if (sh->quit)
			break;
	}
	sh->where = "";
	if (!sh->quit && ferror(f)) {
		/* a directory given to -f, or a read error */
		sh_err(sh, "%s: cannot read: %s", name, strerror(errno));
		failed = 1;
	}
	free(line);
	return failed;
}

/* ---- tab completion ---- */

static struct shell *completing;

static char *complete_command(const char *text, int state)
{
	static const struct command *c;
	static size_t len;
	if (!state) {
		c = commands;
		len = strlen(text);
	}
	while (c->name) {
		const char *name = (c++)->name;
		if (!strncmp(name, text, len))
			return strdup(name);
	}
	return NULL;
}

struct matches {
	char **v;
	size_t count, cap;
	const char *prefix, *dir;
	size_t plen;
};

/* A match: before, name (len bytes), after */
static int add_text(struct matches *m, const char *before, const char *name,
		    unsigned len, const char *after)
{
	if (len < m->plen || strncmp(name, m->prefix, m->plen))
		return 0;
	if (m->count == m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 16;
		char **n = realloc(m->v, ncap * sizeof(*n));
		if (!n)
			return 1;
		m->v = n;
		m->cap = ncap;
	}
	char *full;
	if (asprintf(&full, "%s%.*s%s", before, (int)len, name, after) < 0)
		return 1;
	m->v[m->count++] = full;
	return 0;
}

static int add_match(void *ctx, const char *name, unsigned len,
		     tux3_ino_t ino, unsigned type, uint64_t pos)
{
	struct matches *m = ctx;
	(void)ino; (void)pos;
	return add_text(m, m->dir, name, len,
			type == TUX3_DT_DIR ? "/" : "");
}

/* A word @TAG without a '/' yet: "@/" (the live version) and @NAME/ of
 * every snapshot. */
static void add_versions(struct shell *sh, struct matches *m)
{
	struct tux3_version_info *v;
	unsigned n;
	add_text(m, "@", "", 0, "/");
	if (tux3_version_list(sh->vol, &v, &n))
		return;
	for (unsigned i = 0; i < n; i++)
		if (v[i].label && !v[i].ghost && !v[i].dying)
			add_text(m, "@", v[i].name,
				 (unsigned)strlen(v[i].name), "/");
	free(v);
}

/* Names inside the volume: a directory completes with '/', a single
 * other match with a space; @TAG/ names a version's root. */
static char *complete_path(const char *text, int state)
{
	static struct matches m;
	static size_t next;
	if (!state) {
		for (size_t i = next; i < m.count; i++)
			free(m.v[i]);
		free(m.v);
		memset(&m, 0, sizeof(m));
		next = 0;
		const char *slash = strrchr(text, '/');
		char dir[4096];
		snprintf(dir, sizeof(dir), "%.*s",
			 slash ? (int)(slash - text + 1) : 0, text);
		m.dir = strdup(dir);
		m.prefix = slash ? slash + 1 : text;
		m.plen = strlen(m.prefix);
		tux3_ino_t ino;
		struct shell *sh = completing;
		const char *lookup = dir[0] ? dir : ".";
		if (sh && sh->vol && m.dir && text[0] == '@' && !slash) {
			m.prefix = text + 1;
			m.plen = strlen(m.prefix);
			add_versions(sh, &m);
		} else if (sh && sh->vol && m.dir) {
			int err = 0;
			size_t dl = strlen(lookup);
			if (dl > 2 && lookup[0] == '<' &&
			    lookup[dl - 2] == '>' && lookup[dl - 1] == '/') {
				char *end;
				ino = strtoull(lookup + 1, &end, 0);
				err = end != lookup + dl - 2 || !ino;
			} else {
				char full[8300];
				err = join_path(sh, lookup, full, sizeof(full));
				if (!err)
					err = tux3_lookup_path(sh->vol, full,
							       &ino);
			}
			if (!err)
				tux3_readdir(sh->vol, ino, add_match, &m);
			tux3_clear_error(sh->vol);
			sh_restore_version(sh);
		}
		free((char *)m.dir);
		rl_completion_append_character =
			m.count == 1 && m.v[0][strlen(m.v[0]) - 1] != '/' ?
			' ' : '\0';
	}
	return next < m.count ? m.v[next++] : NULL;
}

/* Field names: set_super FIELD, set_inode INUM FIELD. */
static int completing_fields;	/* 0 set_super, 1 set_inode */

static char *complete_field(const char *text, int state)
{
	static unsigned i;
	static size_t len;
	const char *name;
	if (!state) {
		i = 0;
		len = strlen(text);
	}
	while ((name = raw_field_name(completing_fields, i++)))
		if (!strncmp(name, text, len))
			return strdup(name);
	return NULL;
}

/* The command (first word) and which of its other words, options not
 * counted, starts at start (0 = the first after the command). */
static int word_index(int start, char *cmd, size_t cmdlen)
{
	const char *line = rl_line_buffer;
	int words = 0, i = 0;
	cmd[0] = 0;
	while (i < start) {
		while (i < start && (line[i] == ' ' || line[i] == '\t'))
			i++;
		if (i >= start)
			break;
		int w = i;
		while (i < start && line[i] != ' ' && line[i] != '\t')
			i++;
		if (!words)
			snprintf(cmd, cmdlen, "%.*s", i - w, line + w);
		if (!words || line[w] != '-')
			words++;
	}
	return words - 1;
}

static char **complete(const char *text, int start, int end)
{
	(void)end;
	rl_attempted_completion_over = 1;
	rl_completion_append_character = ' ';
	int first = 1;
	for (int i = 0; i < start; i++)
		if (rl_line_buffer[i] != ' ' && rl_line_buffer[i] != '\t')
			first = 0;
	if (first)
		return rl_completion_matches(text, complete_command);
	char cmdname[64];
	int word = word_index(start, cmdname, sizeof(cmdname));
	const struct command *c = command_find(cmdname);
	if (!c || !c->args || text[0] == '-')
		return NULL;
	size_t n = strlen(c->args);
	char kind = (size_t)word < n ? c->args[word] : ARG_NONE;
	switch (kind) {
	case ARG_PATH:
		return rl_completion_matches(text, complete_path);
	case ARG_HOST:
		rl_attempted_completion_over = 0;
		return rl_completion_matches(text,
					     rl_filename_completion_function);
	case ARG_COMMAND:
		return rl_completion_matches(text, complete_command);
	case ARG_SUPER:
		completing_fields = 0;
		return rl_completion_matches(text, complete_field);
	case ARG_INODE_FIELD:
		completing_fields = 1;
		return rl_completion_matches(text, complete_field);
	}
	return NULL;
}

/* ---- the pager ---- */

static int in_path(const char *prog)
{
	const char *path = getenv("PATH");
	if (!path)
		return 0;
	while (*path) {
		size_t n = strcspn(path, ":");
		char full[4200];
		snprintf(full, sizeof(full), "%.*s/%s", (int)n, path, prog);
		if (n && !access(full, X_OK))
			return 1;
		path += n;
		if (*path)
			path++;
	}
	return 0;
}

/* TUX3DEBUG_PAGER, then PAGER (empty or "__none__": none), then less
 * or more if installed. */
static const char *pager_command(void)
{
	const char *p = getenv("TUX3DEBUG_PAGER");
	if (!p)
		p = getenv("PAGER");
	if (p)
		return *p && strcmp(p, "__none__") ? p : NULL;
	if (in_path("less"))
		return "less";
	if (in_path("more"))
		return "more";
	return NULL;
}

static void copy_stream(FILE *from, FILE *to)
{
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), from)) > 0)
		if (fwrite(buf, 1, n, to) != n)
			break;
	fflush(to);
}

/* A command's output, held in tmp: through the pager when it is longer
 * than the terminal, else straight out. */
static void page_output(FILE *tmp, const char *pager)
{
	struct winsize ws;
	unsigned rows = 24, lines = 0;
	int c;
	if (!ioctl(1, TIOCGWINSZ, &ws) && ws.ws_row)
		rows = ws.ws_row;
	fflush(tmp);
	rewind(tmp);
	while (lines < rows && (c = getc(tmp)) != EOF)
		lines += c == '\n';
	rewind(tmp);
	FILE *p = lines >= rows - 1 ? popen(pager, "w") : NULL;
	if (p) {
		copy_stream(tmp, p);
		pclose(p);
	} else {
		copy_stream(tmp, stdout);
	}
}

/* ---- the interactive shell ---- */

static int run_interactive(struct shell *sh)
{
	char *line, *histfile = NULL;
	const char *home = getenv("HOME");
	const char *pager = isatty(1) ? pager_command() : NULL;
	int failed = 0;

	if (home && *home &&
	    asprintf(&histfile, "%s/.tux3debug_history", home) < 0)
		histfile = NULL;
	stifle_history(1000);
	if (histfile && read_history(histfile) == ENOENT)
		write_history(histfile);	/* created, for append_history */
	if (pager) {
		setenv("LESS", "FRX", 0);	/* quit on one screen, keep it */
		signal(SIGPIPE, SIG_IGN);	/* a pager quit early */
	}
	completing = sh;
	rl_readline_name = "tux3debug";
	rl_basic_word_break_characters = " \t\n\"'";
	rl_attempted_completion_function = complete;
	for (;;) {
		char prompt[SH_VERSION_MAX + 16];
		snprintf(prompt, sizeof(prompt), "tux3debug%s%s: ",
			 sh->version[0] ? " @" : "", sh->version);
		if (!(line = readline(prompt)))
			break;
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		size_t n = strlen(p);	/* completion leaves a blank */
		while (n && (p[n - 1] == ' ' || p[n - 1] == '\t') &&
		       (n < 2 || p[n - 2] != '\\'))
			p[--n] = 0;
		if (*p) {
			HIST_ENTRY *last = history_length ?
				history_get(history_base + history_length - 1) :
				NULL;
			if (!last || strcmp(last->line, p)) {
				add_history(p);
				if (histfile)
					append_history(1, histfile);
			}
			FILE *tmp = pager ? tmpfile() : NULL;
			if (tmp)
				sh->out = tmp;
			failed |= shell_execute(sh, p);
			if (tmp) {
				sh->out = stdout;
				page_output(tmp, pager);
				fclose(tmp);
			}
		}
		free(line);
		if (sh->quit)
			break;
	}
	if (!line)
		putchar('\n');	/* end of file: leave the prompt's line */
	if (histfile) {
		history_truncate_file(histfile, 1000);
		free(histfile);
	}
	return failed;
}

int main(int argc, char **argv)
{
	struct shell sh = { .out = stdout, .where = "", .cwd = TUX3_ROOT_INO };
	enum tux3_open_mode mode = TUX3_OPEN_RDONLY;
	const char *request = NULL, *script = NULL, *snapshot = NULL;
	int c, status = 0;

	strcpy(sh.cwdpath, "/");
	if (tux3_library_version() != TUX3_LIBRARY_VERSION) {
		fprintf(stderr, "tux3debug: built for libtux3 interface %d, but "
			"libtux3 %s has interface %d\n",
			TUX3_LIBRARY_VERSION, tux3_version(),
			tux3_library_version());
		return 1;
	}
	int cflag = 0, wflag = 0;
	opterr = 1;	/* the command line's own errors, then none: */
	while ((c = getopt(argc, argv, "cwS:R:f:Vh")) != -1) {
		switch (c) {
		case 'c': mode = TUX3_OPEN_NOREPLAY; cflag = 1; break;
		case 'w': mode = TUX3_OPEN_RDWR; wflag = 1; break;
		case 'S': snapshot = optarg; break;
		case 'R': request = optarg; break;
		case 'f': script = optarg; break;
		case 'V':
			printf("tux3debug %s (libtux3 %s)\n", tux3_version(),
			       tux3_version());
			return 0;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind + 1 < argc || (request && script) || (cflag && wflag) ||
	    (snapshot && optind == argc)) {
		usage(stderr);
		return 2;
	}
	opterr = 0;	/* commands print their own usage on a bad option */
	if (wflag && sh_read_time(&sh))
		return 1;
	if (optind < argc && sh_open(&sh, argv[optind], mode))
		return 1;
	sh.mode = mode;
	if (snapshot) {
		char *at = malloc(strlen(snapshot) + 2);
		int failed = !at;
		if (at) {
			sprintf(at, "@%s", snapshot);
			failed = sh_cd(&sh, at);
			sh_restore_version(&sh);
			free(at);
		}
		if (failed) {
			sh_close(&sh);
			return 1;
		}
	}
	sh.batch = !request && (script || !isatty(0));
	if (request) {
		char *line = strdup(request);
		status = line ? shell_execute(&sh, line) : 1;
		free(line);
	} else if (script) {
		FILE *f = strcmp(script, "-") ? fopen(script, "r") : stdin;
		if (!f) {
			sh_err(&sh, "%s: %s", script, strerror(errno));
			status = 1;
		} else {
			status = run_stream(&sh, f, strcmp(script, "-") ?
					    script : "stdin");
			if (f != stdin)
				fclose(f);
		}
	} else if (isatty(0)) {
		status = run_interactive(&sh);
	} else {
		status = run_stream(&sh, stdin, "stdin");
	}
	if (sh_close(&sh))
		status = 1;
	errno = 0;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "tux3debug: standard output: write failed%s%s\n",
			errno ? ": " : "", errno ? strerror(errno) : "");
		status = 1;
	}
	return status;
}

/*
 * tux3debug: inspect a Tux3 volume, in batch (-R, -f, stdin) or
 * interactively; with -w, edit it.  Read-only without -w.
 *
 * Commits with -w: interactive and -R, each editing command commits its
 * own delta when it completes; in -f and stdin batches editing commands
 * gather in one delta until 'delta' (or 'unify'), and the end of the
 * batch commits what is left, also after failed lines (as debugfs applies
 * each command at once, a failed line does not undo the others).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <readline/history.h>
#include <readline/readline.h>
#include "debugfs.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: tux3debug [-c|-w] [-R command] [-f script|-] [-V] "
		"[DEVICE]\n"
		"  -c          open without replaying the log (damaged log)\n"
		"  -w          open read-write: allow the editing commands\n"
		"  -R command  run one command and exit\n"
		"  -f script   run the commands in script ('-' = stdin)\n"
		"  -V          print the version and exit\n");
}

int sh_err(struct shell *sh, const char *fmt, ...)
{
	va_list ap;
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
	sh->cwd = TUX3_ROOT_INO;
	strcpy(sh->cwdpath, "/");
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
	free(line);
	return failed;
}

/* Tab completion: command names for the first word, names inside the
 * volume for the others. */
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

static int add_match(void *ctx, const char *name, unsigned len,
		     tux3_ino_t ino, unsigned type, uint64_t pos)
{
	struct matches *m = ctx;
	(void)ino; (void)pos;
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
	if (asprintf(&full, "%s%.*s%s", m->dir, (int)len, name,
		     type == TUX3_DT_DIR ? "/" : "") < 0)
		return 1;
	m->v[m->count++] = full;
	return 0;
}

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
		if (sh && sh->vol) {
			const char *saved = sh->where;
			int err = 0;
			if (lookup[0] == '/')
				err = tux3_lookup_path(sh->vol, lookup, &ino);
			else {
				char full[8300];
				snprintf(full, sizeof(full), "%s/%s",
					 sh->cwdpath, lookup);
				err = tux3_lookup_path(sh->vol, full, &ino);
			}
			if (!err)
				tux3_readdir(sh->vol, ino, add_match, &m);
			tux3_clear_error(sh->vol);
			sh->where = saved;
		}
		free((char *)m.dir);
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

/* Which word (0 = the command) starts at start, and the command. */
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
		words++;
	}
	return words;
}

static char **complete(const char *text, int start, int end)
{
	(void)end;
	rl_attempted_completion_over = 1;
	if (start == 0)
		return rl_completion_matches(text, complete_command);
	char cmdname[64];
	int word = word_index(start, cmdname, sizeof(cmdname));
	const struct command *c = command_find(cmdname);
	if (c && c->run == cmd_set_super) {
		int opts = 0;
		/* skip a -c before FIELD */
		if (strstr(rl_line_buffer, " -c ") &&
		    strstr(rl_line_buffer, " -c ") < rl_line_buffer + start)
			opts = 1;
		if (word == 1 + opts && text[0] != '-') {
			completing_fields = 0;
			return rl_completion_matches(text, complete_field);
		}
		return NULL;
	}
	if (c && c->run == cmd_set_inode) {
		if (word == 2) {
			completing_fields = 1;
			return rl_completion_matches(text, complete_field);
		}
		if (word > 2)
			return NULL;
	}
	rl_completion_append_character = '\0';
	return rl_completion_matches(text, complete_path);
}

static int run_interactive(struct shell *sh)
{
	char *line, *histfile = NULL;
	const char *home = getenv("HOME");
	int failed = 0;

	if (home && asprintf(&histfile, "%s/.tux3debug_history", home) < 0)
		histfile = NULL;
	if (histfile)
		read_history(histfile);
	completing = sh;
	rl_attempted_completion_function = complete;
	while ((line = readline("tux3debug: ")) != NULL) {
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p) {
			add_history(p);
			failed |= shell_execute(sh, p);
		}
		free(line);
		if (sh->quit)
			break;
	}
	if (histfile) {
		write_history(histfile);
		free(histfile);
	}
	return failed;
}

int main(int argc, char **argv)
{
	struct shell sh = { .out = stdout, .where = "", .cwd = TUX3_ROOT_INO };
	enum tux3_open_mode mode = TUX3_OPEN_RDONLY;
	const char *request = NULL, *script = NULL;
	int c, status = 0;

	strcpy(sh.cwdpath, "/");
	int cflag = 0, wflag = 0;
	while ((c = getopt(argc, argv, "cwR:f:Vh")) != -1) {
		switch (c) {
		case 'c': mode = TUX3_OPEN_NOREPLAY; cflag = 1; break;
		case 'w': mode = TUX3_OPEN_RDWR; wflag = 1; break;
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
	if (optind + 1 < argc || (request && script) || (cflag && wflag)) {
		usage(stderr);
		return 2;
	}
	/* Reproducible timestamps for everything the library writes
	 * (read-only sessions write nothing and ignore it) */
	const char *epoch = getenv("SOURCE_DATE_EPOCH");
	if (wflag && epoch && *epoch) {
		char *end;
		errno = 0;
		long long secs = strtoll(epoch, &end, 10);
		if (errno || *end || secs < -9223372036LL ||
		    secs > 9223372035LL) {
			sh_err(&sh, "SOURCE_DATE_EPOCH: not a number of seconds: "
			       "%s", epoch);
			return 1;
		}
		sh.has_time = 1;
		sh.time_ns = (int64_t)secs * 1000000000;
	}
	if (optind < argc && sh_open(&sh, argv[optind], mode))
		return 1;
	sh.mode = mode;
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
	if (fflush(stdout) != 0)
		status = 1;
	return status;
}

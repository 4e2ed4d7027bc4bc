/*
 * ptydrive: run a program on a pseudo-terminal and drive it from a
 * script, as a user at the keyboard would (for the interactive tests of
 * tux3debug: prompt, tab completion, history, pager).
 *
 *   ptydrive [-t SECONDS] [-r ROWS] SCRIPT PROGRAM [ARG...]
 *
 * Script lines (blank lines and lines starting with # are skipped):
 *   send TEXT     type TEXT; escapes \n \r \t \e (ESC) \\ \xHH
 *   expect TEXT   wait until the screen text since the last match holds
 *                 TEXT (same escapes); the match moves past it
 *   wait STATUS   wait for the program to exit with STATUS
 * The "screen text" is what the program wrote with terminal control
 * sequences, carriage returns and bells taken out.  On success exit 0;
 * on a failed step the step, what was seen and exit 1; 77 when no
 * pseudo-terminal can be had (the caller skips).  -v prints the screen
 * text at the end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static char *screen;		/* cleaned text */
static size_t slen, scap;
static int esc_state;		/* 0 text, 1 after ESC, 2 CSI, 3 OSC, 4 one more */

static void put(char c)
{
	if (slen + 2 > scap) {
		scap = scap ? scap * 2 : 65536;
		screen = realloc(screen, scap);
		if (!screen) {
			perror("ptydrive");
			exit(1);
		}
	}
	screen[slen++] = c;
	screen[slen] = 0;
}

static void clean(const char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)buf[i];
		switch (esc_state) {
		case 1:
			esc_state = c == '[' ? 2 : c == ']' ? 3 :
				    (c == '(' || c == ')' || c == '#') ? 4 : 0;
			continue;
		case 2:
			if (c >= 0x40 && c <= 0x7e)
				esc_state = 0;
			continue;
		case 3:
			if (c == 7)
				esc_state = 0;
			else if (c == 0x1b)
				esc_state = 1;
			continue;
		case 4:
			esc_state = 0;
			continue;
		}
		if (c == 0x1b)
			esc_state = 1;
		else if (c == '\b') {
			if (slen && screen[slen - 1] != '\n')
				screen[--slen] = 0;
		} else if (c != '\r' && c != 7)
			put((char)c);
	}
}

static size_t unescape(const char *s, char *out)
{
	size_t n = 0;
	while (*s) {
		if (*s != '\\' || !s[1]) {
			out[n++] = *s++;
			continue;
		}
		s++;
		switch (*s) {
		case 'n': out[n++] = '\n'; s++; break;
		case 'r': out[n++] = '\r'; s++; break;
		case 't': out[n++] = '\t'; s++; break;
		case 'e': out[n++] = 0x1b; s++; break;
		case 'x': {
			unsigned v = 0;
			int k = 0;
			for (s++; k < 2 && *s && strchr("0123456789abcdefABCDEF",
							 *s); k++, s++)
				v = v * 16 + (unsigned)(*s <= '9' ? *s - '0' :
					(*s | 0x20) - 'a' + 10);
			out[n++] = (char)v;
			break;
		}
		default: out[n++] = *s++; break;
		}
	}
	out[n] = 0;
	return n;
}

static int master = -1;
static pid_t child;
static int child_status = -1;

/* Read what is there, waiting up to ms: 2 read something, 1 nothing
 * came, 0 end of file (the program left). */
static int pump(int ms)
{
	struct pollfd p = { .fd = master, .events = POLLIN };
	int r = poll(&p, 1, ms);
	if (r <= 0)
		return 1;
	char buf[4096];
	ssize_t n = read(master, buf, sizeof(buf));
	if (n <= 0)
		return 0;	/* EIO: the slave side is closed */
	clean(buf, (size_t)n);
	return 2;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void show(const char *why, const char *step, size_t mark)
{
	fprintf(stderr, "ptydrive: %s: %s\n--- screen since the last match "
		"---\n%s\n--- end ---\n", why, step, screen ? screen + mark : "");
}

int main(int argc, char **argv)
{
	double timeout = 10;
	unsigned short rows = 24;
	int verbose = 0, c;
	while ((c = getopt(argc, argv, "+t:r:v")) != -1) {
		switch (c) {
		case 't': timeout = atof(optarg); break;
		case 'r': rows = (unsigned short)atoi(optarg); break;
		case 'v': verbose = 1; break;
		default: return 2;
		}
	}
	if (argc - optind < 2) {
		fprintf(stderr, "usage: ptydrive [-t SECONDS] [-r ROWS] [-v] "
			"SCRIPT PROGRAM [ARG...]\n");
		return 2;
	}
	FILE *script = fopen(argv[optind], "r");
	if (!script) {
		perror(argv[optind]);
		return 2;
	}
	master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master < 0 || grantpt(master) || unlockpt(master)) {
		fprintf(stderr, "ptydrive: no pseudo-terminal: %s\n",
			strerror(errno));
		return 77;
	}
	const char *slave = ptsname(master);
	int sfd = slave ? open(slave, O_RDWR | O_NOCTTY) : -1;
	if (sfd < 0) {
		fprintf(stderr, "ptydrive: cannot open the pty slave: %s\n",
			strerror(errno));
		return 77;
	}
	struct winsize ws = { .ws_row = rows, .ws_col = 80 };
	ioctl(sfd, TIOCSWINSZ, &ws);
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (!child) {
		setsid();
		ioctl(sfd, TIOCSCTTY, 0);
		dup2(sfd, 0);
		dup2(sfd, 1);
		dup2(sfd, 2);
		if (sfd > 2)
			close(sfd);
		close(master);
		execvp(argv[optind + 1], argv + optind + 1);
		perror(argv[optind + 1]);
		_exit(127);
	}
	close(sfd);
	signal(SIGPIPE, SIG_IGN);

	char *line = NULL, text[8192];
	size_t cap = 0, mark = 0;
	int failed = 0, lineno = 0, open = 1;
	while (!failed && getline(&line, &cap, script) >= 0) {
		lineno++;
		line[strcspn(line, "\n")] = 0;
		if (!line[0] || line[0] == '#')
			continue;
		char *arg = strchr(line, ' ');
		arg = arg ? arg + 1 : line + strlen(line);
		if (!strncmp(line, "send ", 5)) {
			size_t n = unescape(arg, text);
			int r;
			while (open && (r = pump(0)) == 2)
				;
			if (open && !r)
				open = 0;
			if (write(master, text, n) != (ssize_t)n) {
				show("cannot send", line, mark);
				failed = 1;
			}
			/* let the program read it before the next step */
			for (int i = 0; open && i < 5; i++)
				open = pump(20);
		} else if (!strncmp(line, "expect ", 7)) {
			unescape(arg, text);
			double end = now() + timeout;
			char *at;
			while (!(at = screen ? strstr(screen + mark, text) :
				 NULL) && open && now() < end)
				open = pump(50);
			if (!at && screen)
				at = strstr(screen + mark, text);
			if (!at) {
				show(open ? "timed out" : "the program left",
				     line, mark);
				failed = 1;
			} else {
				mark = (size_t)(at - screen) + strlen(text);
			}
		} else if (!strncmp(line, "wait ", 5)) {
			int want = atoi(arg), st;
			double end = now() + timeout;
			pid_t w = 0;
			while ((w = waitpid(child, &st, WNOHANG)) == 0 &&
			       now() < end) {
				if (open)
					open = pump(50);
				else
					usleep(20000);
			}
			if (w != child) {
				show("did not exit", line, mark);
				failed = 1;
			} else {
				child_status = WIFEXITED(st) ? WEXITSTATUS(st) :
					       128 + WTERMSIG(st);
				if (child_status != want) {
					char why[64];
					snprintf(why, sizeof(why), "exit status "
						 "%d", child_status);
					show(why, line, mark);
					failed = 1;
				}
			}
		} else {
			fprintf(stderr, "ptydrive: %s:%d: unknown step '%s'\n",
				argv[optind], lineno, line);
			failed = 1;
		}
	}
	free(line);
	fclose(script);
	if (child_status < 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	if (verbose && screen)
		fputs(screen, stdout);
	return failed;
}

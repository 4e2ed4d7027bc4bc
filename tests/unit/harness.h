/*
 * Minimal unit-test harness: each case runs in a forked child, so a crash
 * or a sanitizer abort fails that case only.  Output, one line per case:
 *   PASS suite/case | FAIL suite/case: reason | SKIP suite/case: reason
 * tests/run.sh counts these lines.
 *
 *   TEST(name) { CHECK(expr); CHECK_EQ(a, b); SKIP("why"); }
 *   int main(void) { return run_tests("suite"); }
 */
#ifndef TUX3_TEST_HARNESS_H
#define TUX3_TEST_HARNESS_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

typedef void (*test_fn)(void);
struct test_case {
	const char *name;
	test_fn fn;
};

#define MAX_TESTS 256
static struct test_case test_cases[MAX_TESTS];
static unsigned test_count;

#define TEST(name) \
	static void test_##name(void); \
	__attribute__((constructor)) static void register_##name(void) \
	{ \
		if (test_count < MAX_TESTS) \
			test_cases[test_count++] = \
				(struct test_case){ #name, test_##name }; \
	} \
	static void test_##name(void)

/* exit codes of a child: 0 pass, 77 skip, anything else fail */
#define CHECK(expr) do { if (!(expr)) { \
	fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #expr); \
	exit(1); } } while (0)
#define CHECK_EQ(a, b) do { long long _a = (long long)(a), _b = (long long)(b); \
	if (_a != _b) { fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", \
		__FILE__, __LINE__, #a, _a, #b, _b); exit(1); } } while (0)
#define SKIP(why) do { fprintf(stderr, "%s\n", why); exit(77); } while (0)

/* The sanitizer build runs the long randomised cases at a share of their
 * length (SANITIZER_SHARE(n, d): n/d there, n elsewhere, never 0): the
 * same code paths for its memory checks, a fraction of the time; the
 * normal build runs them whole. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif
#ifndef UNDER_SANITIZER
#define UNDER_SANITIZER 0
#endif
#define SANITIZER_SHARE(n, d) \
	(UNDER_SANITIZER ? ((n) / (d) ? (n) / (d) : 1) : (n))

/* A case that took a second of CPU or more says so (in the job's log), to
 * find what makes a test program long, under a sanitizer especially. */
static inline void report_case_cpu(const char *suite, const char *name,
				   const struct rusage *ru)
{
	long ms = (long)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000 +
		  (long)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1000;
	if (ms >= 1000)
		printf("# %s/%s: %ld ms of CPU\n", suite, name, ms);
}

static inline int run_tests(const char *suite)
{
	int failed = 0;
	for (unsigned i = 0; i < test_count; i++) {
		int pipefd[2];
		char reason[512] = "";
		if (pipe(pipefd) < 0)
			return 2;
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			close(pipefd[0]);
			dup2(pipefd[1], 2);
			test_cases[i].fn();
			exit(0);
		}
		close(pipefd[1]);
		ssize_t n = read(pipefd[0], reason, sizeof(reason) - 1);
		char drain[256];
		while (read(pipefd[0], drain, sizeof(drain)) > 0)
			;
		close(pipefd[0]);
		reason[n > 0 ? n : 0] = 0;
		char *nl = strchr(reason, '\n');
		if (nl)
			*nl = 0;
		int status;
		struct rusage ru;
		if (wait4(pid, &status, 0, &ru) < 0)
			return 2;
		report_case_cpu(suite, test_cases[i].name, &ru);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			printf("PASS %s/%s\n", suite, test_cases[i].name);
		} else if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
			printf("SKIP %s/%s: %s\n", suite, test_cases[i].name,
			       reason);
		} else {
			failed = 1;
			if (WIFSIGNALED(status))
				printf("FAIL %s/%s: signal %d %s\n", suite,
				       test_cases[i].name, WTERMSIG(status),
				       reason);
			else
				printf("FAIL %s/%s: %s\n", suite,
				       test_cases[i].name, reason);
		}
	}
	return failed;
}

/* Path of a decompressed oracle image, or NULL (then the test skips).
 * tests/run.sh decompresses them into $TUX3_ORACLE_DIR. */
static inline const char *oracle_image(const char *name, char *buf, size_t len)
{
	const char *dir = getenv("TUX3_ORACLE_DIR");
	if (!dir)
		return NULL;
	snprintf(buf, len, "%s/%s.img", dir, name);
	return access(buf, R_OK) == 0 ? buf : NULL;
}

#endif

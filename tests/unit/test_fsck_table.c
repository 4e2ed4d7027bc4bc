/* Layer: fsck_problem.c -- the problem table of the check engine: codes
 * unique and named after their pass, every template and fix present, and
 * doc/fsck.tux3.8 listing exactly the table (so the man page stays true).
 * TUX3_PRINT_PROBLEMS=1 prints the man page's lines instead. */
#include <stdio.h>
#include "fixtures.h"
#include "tux3_fsck.h"

static void problem_line(const struct tux3_fsck_problem_def *d, char *buf,
			 size_t len)
{
	snprintf(buf, len, "%-28s (%s) %s", d->code,
		 d->preen_ok ? "preen" : "ask",
		 d->fix ? d->fix : "cannot be repaired");
}

TEST(table_codes_unique_and_named_by_pass)
{
	const struct tux3_fsck_problem_def *t = tux3_fsck_problem_table();
	unsigned n = 0;
	for (; t[n].code; n++) {
		char want[8];
		CHECK(t[n].pass >= 1 && t[n].pass <= TUX3_FSCK_PASSES);
		snprintf(want, sizeof(want), "PASS%u_", t[n].pass);
		CHECK(!strncmp(t[n].code, want, strlen(want)));
		CHECK(t[n].message && t[n].message[0]);
		CHECK(!t[n].preen_ok || t[n].fix);	/* preen needs a fix */
		for (unsigned k = 0; k < n; k++)
			CHECK(strcmp(t[k].code, t[n].code));
	}
	CHECK(n >= 40);
}

TEST(man_page_lists_the_table)
{
	const struct tux3_fsck_problem_def *t = tux3_fsck_problem_table();
	FILE *f = fopen("doc/fsck.tux3.8", "r");
	if (!f)
		SKIP("doc/fsck.tux3.8 not found (run from the top directory)");
	static char page[1 << 20];
	size_t len = fread(page, 1, sizeof(page) - 1, f);
	fclose(f);
	page[len] = 0;
	if (getenv("TUX3_PRINT_PROBLEMS")) {
		char line[300];
		for (unsigned i = 0; t[i].code; i++) {
			problem_line(&t[i], line, sizeof(line));
			printf("%s\n", line);
		}
	}
	for (unsigned i = 0; t[i].code; i++) {
		char line[300];
		problem_line(&t[i], line, sizeof(line));
		if (!strstr(page, line))
			fprintf(stderr, "doc/fsck.tux3.8 lacks: %s\n", line);
		CHECK(strstr(page, line) != NULL);
	}
	/* and no code the table does not have */
	for (const char *p = page; (p = strstr(p, "\nPASS")); p++) {
		char code[64];
		if (sscanf(p + 1, "%63[A-Z0-9_]", code) != 1)
			continue;
		bool known = false;
		for (unsigned i = 0; t[i].code && !known; i++)
			known = !strcmp(t[i].code, code);
		if (!known)
			fprintf(stderr, "doc/fsck.tux3.8 lists unknown %s\n",
				code);
		CHECK(known);
	}
}

int main(void)
{
	return run_tests("fsck_table");
}

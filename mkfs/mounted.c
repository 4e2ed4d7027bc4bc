/*
 * The mounted-device check of the offline writers: /proc/self/mountinfo
 * read line by line (fields: id parent maj:min root mountpoint ... -
 * fstype source superoptions).
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include "mounted.h"

int device_mounted(const char *path, const struct stat *st, char *mnt,
		   size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[8192], real[PATH_MAX];
	bool have_real = realpath(path, real) != NULL;
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned maj, min;
		char at[4096] = "";
		if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &maj, &min,
			   at) < 2)
			continue;
		char *sep = strstr(line, " - ");
		char src[4096] = "";
		if (sep)
			sscanf(sep + 3, "%*s %4095s", src);
		if (S_ISBLK(st->st_mode) && makedev(maj, min) == st->st_rdev)
			found = 1;
		else if (have_real && !strcmp(src, real))
			found = 1;
		if (found && len)
			snprintf(mnt, len, "%s", at);
	}
	fclose(f);
	return found;
}

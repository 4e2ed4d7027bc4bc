/*
 * mkvtable: give a test volume a version table (fsck pass 9's cases).
 *
 *   mkvtable IMAGE ok|ghost1|dying|dup-tag
 *
 * ok: two snapshots, 'monday' (tag 7, of the origin) and 'tuesday' (tag 8,
 * of monday).  The others break one rule of the table on purpose: a
 * ghost with one child, a delete left half done, one tag on two labels.
 * The volume must not have versions yet (the library writes the first
 * table of a volume only).
 */
#include <stdio.h>
#include <string.h>
#include "internal.h"
#include "version.h"

int main(int argc, char **argv)
{
	static struct vtree vt;
	static struct vdelete_plan plan;
	struct tux3_volume *vol;
	char msg[512];

	if (argc != 3) {
		fprintf(stderr, "usage: mkvtable IMAGE ok|ghost1|dying|dup-tag\n");
		return 2;
	}
	if (tux3_open_err(argv[1], TUX3_OPEN_RDWR, &vol, msg, sizeof(msg))) {
		fprintf(stderr, "mkvtable: %s\n", msg);
		return 1;
	}
	vtree_init(&vt);
	int a = vtree_snapshot(&vt, 0, 7, 1);
	int b = vtree_snapshot(&vt, (unsigned)a, 8, 2);
	snprintf(vt.v[a].name, sizeof(vt.v[a].name), "monday");
	snprintf(vt.v[b].name, sizeof(vt.v[b].name), "tuesday");
	if (!strcmp(argv[2], "ghost1")) {
		vt.v[a].flags |= VERSION_GHOST;
		vt.v[a].tag = 0;
		memset(vt.v[a].name, 0, sizeof(vt.v[a].name));
	} else if (!strcmp(argv[2], "dying")) {
		if (vtree_delete(&vt, 8, &plan))
			return 1;
		vtree_plan_record(&vt, &plan);
	} else if (!strcmp(argv[2], "dup-tag")) {
		vt.v[b].tag = 7;
	} else if (strcmp(argv[2], "ok")) {
		fprintf(stderr, "mkvtable: unknown table %s\n", argv[2]);
		return 2;
	}
	if (vtable_save(vol, &vt) || tux3_umount(vol)) {
		fprintf(stderr, "mkvtable: %s\n",
			tux3_error_text(vol, msg, sizeof(msg)));
		return 1;
	}
	return 0;
}

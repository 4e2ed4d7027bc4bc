/*
 * Versions: 'versions' draws the version tree (labels, tags, names,
 * ghosts) and 'snapshot list' lists the snapshots, both from the library's
 * version list (tux3_versions).  Making and removing snapshots, and
 * 'cd @TAG', wait for versioned file data in the write path.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "debugfs.h"

#define NOT_YET "making, removing and entering snapshots need versioned " \
	"file data in the write path, which is not done yet"

struct vlist {
	struct tux3_version_info *v;
	unsigned n;
};

static int load(struct shell *sh, const char *cmd, struct vlist *l)
{
	int err = tux3_version_list(sh->vol, &l->v, &l->n);
	if (err) {
		char text[400];
		return sh_err(sh, "%s: %s", cmd,
			      tux3_error_text(sh->vol, text, sizeof(text)));
	}
	return 0;
}

static void describe(struct shell *sh, const struct vlist *l, unsigned i)
{
	const struct tux3_version_info *v = &l->v[i];
	char when[64];
	FILE *o = sh->out;
	fprintf(o, "label %u: ", v->label);
	if (!v->label)
		fprintf(o, "live (the origin)");
	else if (v->dying)
		fprintf(o, "dying (a delete in progress)");
	else if (v->ghost)
		fprintf(o, "ghost");
	else
		fprintf(o, "'%s' tag %" PRIu32, v->name, v->tag);
	if (v->label && !v->dying) {
		time_string(v->birth_ns, when, sizeof(when));
		fprintf(o, ", made %s", when);
	}
	if (v->children)
		fprintf(o, ", %u child%s", v->children,
			v->children == 1 ? "" : "ren");
	fputc('\n', o);
}

/* Depth first from label, children in label order; depth bounded by the
 * number of labels (the table's tree has no cycle once loaded, but the
 * bound keeps a bad list from looping). */
static void draw(struct shell *sh, const struct vlist *l, unsigned label,
		 unsigned depth)
{
	for (unsigned i = 0; i < l->n; i++) {
		if (l->v[i].label != label)
			continue;
		fprintf(sh->out, "%*s", 2 * depth, "");
		describe(sh, l, i);
	}
	if (depth >= l->n)
		return;
	for (unsigned i = 0; i < l->n; i++)
		if (l->v[i].parent == label && !l->v[i].dying &&
		    l->v[i].label != label)
			draw(sh, l, l->v[i].label, depth + 1);
}

int cmd_versions(struct shell *sh, int argc, char **argv)
{
	struct vlist l = { 0 };
	unsigned tagged = 0, ghosts = 0;
	if (argc != 1)
		return sh_err(sh, "usage: versions");
	int err = load(sh, argv[0], &l);
	if (!err) {
		draw(sh, &l, 0, 0);
		for (unsigned i = 0; i < l.n; i++) {
			tagged += l.v[i].label && !l.v[i].ghost &&
				  !l.v[i].dying;
			ghosts += l.v[i].ghost && !l.v[i].dying;
			if (l.v[i].dying) {
				fprintf(sh->out, "dying: ");
				describe(sh, &l, i);
			}
		}
		fprintf(sh->out, "%u snapshot%s, %u ghost%s\n", tagged,
			tagged == 1 ? "" : "s", ghosts, ghosts == 1 ? "" : "s");
	}
	free(l.v);
	return err;
}

int cmd_snapshot(struct shell *sh, int argc, char **argv)
{
	if (argc < 2)
		return sh_err(sh, "usage: snapshot list | create TAG | "
			      "delete TAG");
	if (strcmp(argv[1], "list"))
		return sh_err(sh, "%s %s: not available yet: %s", argv[0],
			      argv[1], NOT_YET);
	if (argc != 2)
		return sh_err(sh, "usage: snapshot list");
	struct vlist l = { 0 };
	int err = load(sh, argv[0], &l);
	for (unsigned i = 0; !err && i < l.n; i++)
		if (l.v[i].label && !l.v[i].ghost && !l.v[i].dying) {
			char when[64];
			time_string(l.v[i].birth_ns, when, sizeof(when));
			fprintf(sh->out, "%-20s tag %-6" PRIu32 " label %-5u "
				"%s\n", l.v[i].name, l.v[i].tag, l.v[i].label,
				when);
		}
	free(l.v);
	return err;
}

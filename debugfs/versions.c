/*
 * Versions: 'versions' draws the version tree (labels, tags, names,
 * ghosts) from the library's version list (tux3_versions); 'snapshot'
 * lists, makes and removes snapshots.  Entering one ('cd @TAG') and paths
 * in one (@TAG/PATH) are commands.c's join_path.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "debugfs.h"

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

/* The tag and label a snapshot was given, for the message */
static void created(struct shell *sh, const char *name, const char *of)
{
	struct vlist l = { 0 };
	fprintf(sh->out, "snapshot %s created", name);
	if (!tux3_version_list(sh->vol, &l.v, &l.n))
		for (unsigned i = 0; i < l.n; i++)
			if (l.v[i].label && !l.v[i].ghost && !l.v[i].dying &&
			    !strcmp(l.v[i].name, name))
				fprintf(sh->out, " (tag %" PRIu32 ", label %u)",
					l.v[i].tag, l.v[i].label);
	tux3_clear_error(sh->vol);
	free(l.v);
	if (of && *of)
		fprintf(sh->out, " of snapshot %s\n", of);
	else
		fprintf(sh->out, " of the live version\n");
}

/* snapshot create TAG [--of OTHER] */
static int snapshot_create(struct shell *sh, int argc, char **argv)
{
	static const char usage[] = "usage: snapshot create TAG [--of OTHER]";
	const char *name = NULL, *of = NULL;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--of") && i + 1 < argc && !of)
			of = argv[++i];
		else if (!strncmp(argv[i], "--of=", 5) && !of)
			of = argv[i] + 5;
		else if (!name && strcmp(argv[i], "--of"))
			name = argv[i];
		else
			return sh_err(sh, "%s", usage);
	}
	if (!name)
		return sh_err(sh, "%s", usage);
	if (sh->mode != TUX3_OPEN_RDWR)
		return sh_err(sh, "snapshot create: volume opened read-only "
			      "(use -w)");
	if (strchr(name, '/'))
		return sh_err(sh, "snapshot create: %s: a snapshot name holds "
			      "no '/' (@TAG/PATH names a path in snapshot "
			      "TAG)", name);
	int err = tux3_snapshot_create(sh->vol, name, of);
	if (err)
		return sh_volerr(sh, "snapshot create", err);
	sh->dirty = 0;		/* committed, with what came before */
	created(sh, name, of);
	return 0;
}

/* snapshot delete TAG: the shell in it goes back to the live version */
static int snapshot_delete(struct shell *sh, int argc, char **argv)
{
	if (argc != 3)
		return sh_err(sh, "usage: snapshot delete TAG");
	if (sh->mode != TUX3_OPEN_RDWR)
		return sh_err(sh, "snapshot delete: volume opened read-only "
			      "(use -w)");
	const char *name = argv[2];
	int err = tux3_snapshot_delete(sh->vol, name);
	if (err)
		return sh_volerr(sh, "snapshot delete", err);
	sh->dirty = 0;
	fprintf(sh->out, "snapshot %s deleted\n", name);
	if (sh->version[0] && !strcmp(sh->version, name)) {
		sh->version[0] = 0;
		sh->cwd = TUX3_ROOT_INO;
		strcpy(sh->cwdpath, "/");
		fprintf(sh->out, "the shell was in it: now in the live "
			"version at /\n");
	}
	return 0;
}

/* snapshot compact: back to the 2014 format (no snapshot left) */
static int snapshot_compact(struct shell *sh, int argc, char **argv)
{
	(void)argv;
	if (argc != 2)
		return sh_err(sh, "usage: snapshot compact");
	if (sh->mode != TUX3_OPEN_RDWR)
		return sh_err(sh, "snapshot compact: volume opened read-only "
			      "(use -w)");
	struct tux3_compact_report rep;
	int err = tux3_snapshot_compact(sh->vol, &rep);
	if (err)
		return sh_volerr(sh, "snapshot compact", err);
	sh->dirty = 0;
	if (rep.already) {
		fprintf(sh->out, "the volume has no versions: it is already "
			"in the 2014 format\n");
		return 0;
	}
	fprintf(sh->out, "back to the 2014 format: %" PRIu64 " inode%s "
		"looked at, %" PRIu64 " versioned data tree%s and %" PRIu64
		" attribute blob%s rewritten, the version table (inode 3, %"
		PRIu64 " block%s) freed\n", rep.inodes,
		rep.inodes == 1 ? "" : "s", rep.files,
		rep.files == 1 ? "" : "s", rep.blobs,
		rep.blobs == 1 ? "" : "s", rep.table_blocks,
		rep.table_blocks == 1 ? "" : "s");
	return 0;
}

/* snapshot rollback TAG: the live version made to read what TAG reads */
static int snapshot_rollback(struct shell *sh, int argc, char **argv)
{
	if (argc != 3)
		return sh_err(sh, "usage: snapshot rollback TAG");
	if (sh->mode != TUX3_OPEN_RDWR)
		return sh_err(sh, "snapshot rollback: volume opened read-only "
			      "(use -w)");
	struct tux3_rollback_report rep;
	int err = tux3_snapshot_rollback(sh->vol, argv[2], &rep);
	if (err)
		return sh_volerr(sh, "snapshot rollback", err);
	sh->dirty = 0;
	fprintf(sh->out, "live version rolled back to snapshot %s: %" PRIu64
		" inode%s looked at, %" PRIu64 " changed, %" PRIu64
		" brought back, %" PRIu64 " removed; %" PRIu64 " block%s "
		"copied, %" PRIu64 " punched\n", argv[2], rep.inodes,
		rep.inodes == 1 ? "" : "s", rep.changed, rep.restored,
		rep.removed, rep.blocks_copied,
		rep.blocks_copied == 1 ? "" : "s", rep.blocks_punched);
	return 0;
}

int cmd_snapshot(struct shell *sh, int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "rollback"))
		return snapshot_rollback(sh, argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "diff"))
		return snapshot_diff(sh, argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "compact"))
		return snapshot_compact(sh, argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "create"))
		return snapshot_create(sh, argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "delete"))
		return snapshot_delete(sh, argc, argv);
	if (argc < 2 || strcmp(argv[1], "list"))
		return sh_err(sh, "usage: snapshot list [-s] | create TAG "
			      "[--of OTHER] | delete TAG | rollback TAG | "
			      "compact | diff A B [PATH]");
	bool space = argc == 3 && !strcmp(argv[2], "-s");
	if (argc != 2 && !space)
		return sh_err(sh, "usage: snapshot list [-s]");
	struct vlist l = { 0 };
	int err = load(sh, argv[0], &l);
	/* -s: the data blocks only each snapshot reads (a scan of every
	 * versioned file): what deleting it gives back */
	uint64_t *excl = NULL;
	if (!err && space && l.n) {
		unsigned top = 0;
		for (unsigned i = 0; i < l.n; i++)
			if (l.v[i].label >= top)
				top = l.v[i].label + 1;
		excl = calloc(top, sizeof(*excl));
		if (!excl)
			err = sh_err(sh, "snapshot list: out of memory");
		else if ((err = tux3_version_space(sh->vol, excl, top)))
			err = sh_volerr(sh, "snapshot list", err);
	}
	for (unsigned i = 0; !err && i < l.n; i++)
		if (l.v[i].label && !l.v[i].ghost && !l.v[i].dying) {
			char when[64];
			time_string(l.v[i].birth_ns, when, sizeof(when));
			fprintf(sh->out, "%-20s tag %-6" PRIu32 " label %-5u "
				"%s", l.v[i].name, l.v[i].tag, l.v[i].label,
				when);
			if (excl)
				fprintf(sh->out, "  %" PRIu64 " blocks only "
					"it reads", excl[l.v[i].label]);
			fputc('\n', sh->out);
		}
	if (excl && !err)
		fprintf(sh->out, "live version: %" PRIu64 " blocks only it "
			"reads\n", excl[0]);
	free(excl);
	free(l.v);
	return err;
}

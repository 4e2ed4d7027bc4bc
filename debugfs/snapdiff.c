/*
 * snapshot diff [--json] [--no-names] [--stats] A B [PATH]: what differs
 * between two versions (A, B: snapshot names, @ the live version), as
 * tux3_snapshot_diff finds it in the element lists.  One line per inode:
 *   +  PATH                       created in B
 *   -  PATH                       deleted in B
 *   M  PATH  what ...             modified
 *   R  OLD -> NEW  what ...       renamed (the same inode)
 * with the data's changed block ranges, the size, the xattrs and the
 * entries of a directory named.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "debugfs.h"

struct diffout {
	struct shell *sh;
	struct json *json;
	uint64_t created, deleted, modified;
};

static const char *version_arg(const char *s)
{
	return !strcmp(s, "@") ? "" : s[0] == '@' ? s + 1 : s;
}

static const struct { unsigned bit; const char *name; } what_names[] = {
	{ TUX3_DIFF_CREATED, "created" }, { TUX3_DIFF_DELETED, "deleted" },
	{ TUX3_DIFF_RENAMED, "renamed" }, { TUX3_DIFF_DATA, "data" },
	{ TUX3_DIFF_SIZE, "size" }, { TUX3_DIFF_MODE, "mode" },
	{ TUX3_DIFF_OWNER, "owner" }, { TUX3_DIFF_TIMES, "times" },
	{ TUX3_DIFF_NLINK, "links" }, { TUX3_DIFF_XATTR, "xattrs" },
	{ TUX3_DIFF_TARGET, "target" }, { TUX3_DIFF_ENTRIES, "entries" },
};

static void print_path(FILE *o, const char *path, tux3_ino_t ino)
{
	if (path)
		fputs(path, o);
	else
		fprintf(o, "<inode %" PRIu64 ">", ino);
}

static void text_details(FILE *o, const struct tux3_diff_inode *d)
{
	if (d->what & TUX3_DIFF_DATA) {
		fputs("  data", o);
		for (unsigned i = 0; i < d->nranges; i++) {
			const struct tux3_diff_range *r = &d->ranges[i];
			fprintf(o, "%s%" PRIu64, i ? "," : " ", r->block);
			if (r->count > 1)
				fprintf(o, "-%" PRIu64, r->block + r->count - 1);
		}
	}
	if (d->what & TUX3_DIFF_SIZE)
		fprintf(o, "  size %" PRIu64 " -> %" PRIu64, d->a.size,
			d->b.size);
	if (d->what & TUX3_DIFF_MODE)
		fprintf(o, "  mode %o -> %o", d->a.mode, d->b.mode);
	if (d->what & TUX3_DIFF_OWNER)
		fprintf(o, "  owner %u:%u -> %u:%u", d->a.uid, d->a.gid,
			d->b.uid, d->b.gid);
	if (d->what & TUX3_DIFF_NLINK)
		fprintf(o, "  links %u -> %u", d->a.nlink, d->b.nlink);
	if (d->what & TUX3_DIFF_TIMES)
		fputs("  times", o);
	if (d->what & TUX3_DIFF_TARGET)
		fputs("  target", o);
	for (unsigned i = 0; i < d->nxattrs; i++)
		fprintf(o, "%s%s", i ? "," : "  xattrs ", d->xattrs[i]);
	for (unsigned i = 0; i < d->nentries; i++) {
		const struct tux3_diff_entry *e = &d->entries[i];
		fprintf(o, "%s%c%s", i ? "," : "  entries ",
			!e->ino_a ? '+' : !e->ino_b ? '-' : '~', e->name);
	}
}

static void text_line(struct diffout *out, const struct tux3_diff_inode *d)
{
	FILE *o = out->sh->out;
	if (d->what & (TUX3_DIFF_CREATED | TUX3_DIFF_DELETED)) {
		bool created = d->what & TUX3_DIFF_CREATED;
		fprintf(o, "%c  ", created ? '+' : '-');
		print_path(o, created ? d->path_b : d->path_a, d->ino);
		if (d->nentries)
			text_details(o, d);
	} else if (d->what & TUX3_DIFF_RENAMED) {
		fputs("R  ", o);
		print_path(o, d->path_a, d->ino);
		fputs(" -> ", o);
		print_path(o, d->path_b, d->ino);
		text_details(o, d);
	} else {
		fputs("M  ", o);
		print_path(o, d->path_b, d->ino);
		text_details(o, d);
	}
	fputc('\n', o);
}

static void json_side(struct json *j, const char *key,
		      const struct tux3_stat *st, const char *path)
{
	json_open(j, key, '{');
	if (path)
		json_str(j, "path", path);
	else
		json_null(j, "path");
	json_stat(j, st);
	json_i64(j, "ctime_ns", st->ctime_ns);
	json_close(j, '}');
}

static void json_item(struct json *j, const struct tux3_diff_inode *d)
{
	json_open(j, NULL, '{');
	json_u64(j, "inode", d->ino);
	json_open(j, "what", '[');
	for (size_t i = 0; i < sizeof(what_names) / sizeof(*what_names); i++)
		if (d->what & what_names[i].bit)
			json_str(j, NULL, what_names[i].name);
	json_close(j, ']');
	if (d->in_a)
		json_side(j, "a", &d->a, d->path_a);
	if (d->in_b)
		json_side(j, "b", &d->b, d->path_b);
	json_open(j, "ranges", '[');
	for (unsigned i = 0; i < d->nranges; i++) {
		json_open(j, NULL, '{');
		json_u64(j, "block", d->ranges[i].block);
		json_u64(j, "count", d->ranges[i].count);
		json_close(j, '}');
	}
	json_close(j, ']');
	json_open(j, "xattrs", '[');
	for (unsigned i = 0; i < d->nxattrs; i++)
		json_str(j, NULL, d->xattrs[i]);
	json_close(j, ']');
	json_open(j, "entries", '[');
	for (unsigned i = 0; i < d->nentries; i++) {
		json_open(j, NULL, '{');
		json_str(j, "name", d->entries[i].name);
		json_u64(j, "inode_a", d->entries[i].ino_a);
		json_u64(j, "inode_b", d->entries[i].ino_b);
		json_close(j, '}');
	}
	json_close(j, ']');
	json_close(j, '}');
}

static int one(void *ctx, const struct tux3_diff_inode *d)
{
	struct diffout *out = ctx;
	out->created += !!(d->what & TUX3_DIFF_CREATED);
	out->deleted += !!(d->what & TUX3_DIFF_DELETED);
	out->modified += !(d->what & (TUX3_DIFF_CREATED | TUX3_DIFF_DELETED));
	if (out->json)
		json_item(out->json, d);
	else
		text_line(out, d);
	return 0;
}

static void stats(struct diffout *out, const struct tux3_diff_count *c)
{
	if (out->json) {
		json_open(out->json, NULL, '{');
		json_u64(out->json, "created", out->created);
		json_u64(out->json, "deleted", out->deleted);
		json_u64(out->json, "modified", out->modified);
		json_u64(out->json, "blobs", c->blobs);
		json_u64(out->json, "roots", c->roots);
		json_u64(out->json, "trees", c->trees);
		json_u64(out->json, "compared", c->compared);
		json_u64(out->json, "dirs_named", c->dirs_named);
		json_close(out->json, '}');
		return;
	}
	fprintf(out->sh->out, "%" PRIu64 " created, %" PRIu64 " deleted, %"
		PRIu64 " modified: %" PRIu64 " inode blobs scanned, %" PRIu64
		" data tree roots and %" PRIu64 " versioned data trees read, %"
		PRIu64 " inodes compared, %" PRIu64 " directories read for "
		"names\n", out->created, out->deleted, out->modified, c->blobs,
		c->roots, c->trees, c->compared, c->dirs_named);
}

int snapshot_diff(struct shell *sh, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "no-names", no_argument, NULL, 'N' },
		{ "stats", no_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	static const char usage[] = "usage: snapshot diff [--json] "
		"[--no-names] [--stats] A B [PATH] (@: the live version)";
	struct diffout out = { .sh = sh };
	struct tux3_diff_count count;
	struct json json;
	unsigned flags = 0;
	int c, with_stats = 0;
	optind = 0;
	while ((c = getopt_long(argc - 1, argv + 1, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'J': out.json = &json; break;
		case 'N': flags |= TUX3_DIFF_NO_NAMES; break;
		case 'S': with_stats = 1; break;
		default: return sh_err(sh, "%s", usage);
		}
	}
	int n = argc - 1 - optind;
	char **arg = argv + 1 + optind;
	if (n < 2 || n > 3)
		return sh_err(sh, "%s", usage);
	if (out.json) {
		json_begin(&json, sh->out, "snapshot diff");
	}
	int err = tux3_snapshot_diff(sh->vol, version_arg(arg[0]),
				     version_arg(arg[1]), n == 3 ? arg[2] : NULL,
				     flags, one, &out, &count);
	if (!err && with_stats)
		stats(&out, &count);
	if (out.json)
		json_end(&json);
	return err ? sh_volerr(sh, "snapshot diff", err) : 0;
}

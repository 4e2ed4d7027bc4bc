/*
 * Volume-wide views (groups "Structures" and "Log"): super, statfs,
 * atoms, log, and replay (what the replay at open changed, step by step).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>
#include "debugfs.h"
#include "tux3_fields.h"

/* ---- super ---- */

static void print_root(FILE *o, const char *name, uint64_t packed)
{
	if (!packed)
		fprintf(o, "%-14s 0x%016" PRIx64 " (none)\n", name, packed);
	else
		fprintf(o, "%-14s 0x%016" PRIx64 " (depth %" PRIu64 ", block %"
			PRIu64 ")\n", name, packed, (packed >> 48) & 0x7fff,
			packed & (uint64_t)0xffffffffffff);
}

static void json_tree_root(struct json *j, const char *key, uint64_t packed)
{
	if (!packed) {
		json_null(j, key);
		return;
	}
	json_open(j, key, '{');
	json_u64(j, "packed", packed);
	json_u64(j, "depth", (packed >> 48) & 0x7fff);
	json_u64(j, "block", packed & (uint64_t)0xffffffffffff);
	json_close(j, '}');
}

static int super_json(struct shell *sh, const struct tux3_super_info *s)
{
	struct tux3_identity id;
	struct json j;
	tux3_identity(sh->vol, &id);
	json_begin(&j, sh->out, "super");
	json_open(&j, NULL, '{');
	json_hex(&j, "magic", s->magic, 8);
	json_u64(&j, "birthdate", s->birthdate);
	json_u64(&j, "flags", s->flags);
	json_u64(&j, "blockbits", s->blockbits);
	json_u64(&j, "blocksize", s->blocksize);
	json_u64(&j, "volblocks", s->volblocks);
	json_tree_root(&j, "iroot", s->iroot);
	json_tree_root(&j, "oroot", s->oroot);
	json_u64(&j, "usedinodes", s->usedinodes);
	json_u64(&j, "nextblock", s->nextblock);
	json_u64(&j, "atomdictsize", s->atomdictsize);
	json_u64(&j, "freeatom", s->freeatom);
	json_u64(&j, "atomgen", s->atomgen);
	json_u64(&j, "logchain", s->logchain);
	json_u64(&j, "logcount", s->logcount);
	json_u64(&j, "freeblocks", s->freeblocks);
	json_bool(&j, "replayed", s->replayed);
	json_u64(&j, "orphans", tux3_orphan_count(sh->vol));
	if (!id.present) {
		json_null(&j, "extension");
	} else {
		char uuid[37];
		static const uint8_t zero[16];
		uuid_unparse(id.uuid, uuid);
		json_open(&j, "extension", '{');
		json_u64(&j, "version", id.version);
		if (memcmp(id.uuid, zero, 16))
			json_str(&j, "uuid", uuid);
		else
			json_null(&j, "uuid");
		json_str(&j, "label", id.label);
		json_i64(&j, "mkfs_time_ns", id.mkfs_time_ns);
		json_u64(&j, "compat", id.compat);
		json_u64(&j, "ro_compat", id.ro_compat);
		json_u64(&j, "incompat", id.incompat);
		json_u64(&j, "seq", id.seq);
		json_bool(&j, "sealed", id.sealed);
		json_close(&j, '}');
	}
	json_close(&j, '}');
	json_end(&j);
	return 0;
}

/* The work the commands so far did, counted rather than timed: a test
 * compares it across volume sizes (tests/scripts/fsck_scale.sh). */
int cmd_work(struct shell *sh, int argc, char **argv)
{
	uint64_t reads, loads, hits, misses;
	(void)argv;
	if (argc != 1)
		return sh_err(sh, "usage: work");
	tux3_work_counts(sh->vol, &reads, &loads);
	tux3_cache_stats(sh->vol, &hits, &misses);
	fprintf(sh->out, "device reads   %" PRIu64 "\n", reads);
	fprintf(sh->out, "inode loads    %" PRIu64 "\n", loads);
	fprintf(sh->out, "cache hits     %" PRIu64 ", misses %" PRIu64 "\n",
		hits, misses);
	return 0;
}

int cmd_super(struct shell *sh, int argc, char **argv)
{
	struct tux3_super_info s;
	int asjson = argc == 2 && !strcmp(argv[1], "--json");
	if (argc != 1 && !asjson)
		return sh_err(sh, "usage: super [--json]");
	tux3_super_info(sh->vol, &s);
	if (asjson)
		return super_json(sh, &s);
	FILE *o = sh->out;
	fprintf(o, "%-14s ", "magic");
	for (int i = 0; i < 8; i++)
		fprintf(o, "%02x", s.magic[i]);
	fprintf(o, " ('");
	for (int i = 0; i < 4; i++)
		fputc(s.magic[i] >= 0x20 && s.magic[i] < 0x7f ? s.magic[i] :
		      '.', o);
	if (!memcmp(s.magic + 4, "ver1", 4))
		fprintf(o, "' + 'ver1': with versions)\n");
	else
		fprintf(o, "' + %02x%02x-%02x-%02x)\n", s.magic[4],
			s.magic[5], s.magic[6], s.magic[7]);
	fprintf(o, "%-14s %" PRIu64 "\n", "birthdate", s.birthdate);
	fprintf(o, "%-14s 0x%" PRIx64 "\n", "flags", s.flags);
	fprintf(o, "%-14s %u (block size %u)\n", "blockbits", s.blockbits,
		s.blocksize);
	fprintf(o, "%-14s %" PRIu64 "\n", "volblocks", s.volblocks);
	print_root(o, "iroot", s.iroot);
	print_root(o, "oroot", s.oroot);
	fprintf(o, "%-14s %" PRIu64 "\n", "usedinodes", s.usedinodes);
	fprintf(o, "%-14s %" PRIu64 "\n", "nextblock", s.nextblock);
	fprintf(o, "%-14s %" PRIu64 "\n", "atomdictsize", s.atomdictsize);
	fprintf(o, "%-14s %u\n", "freeatom", s.freeatom);
	fprintf(o, "%-14s %u\n", "atomgen", s.atomgen);
	fprintf(o, "%-14s %" PRIu64 "\n", "logchain", s.logchain);
	fprintf(o, "%-14s %u\n", "logcount", s.logcount);
	fprintf(o, "%-14s %" PRIu64 " (%s)\n", "freeblocks", s.freeblocks,
		s.replayed ? "after log replay" : "on-disk bitmap, no replay");
	fprintf(o, "%-14s %u\n", "orphans", tux3_orphan_count(sh->vol));

	/* our extension record (doc/format.md section 15) */
	struct tux3_identity id;
	tux3_identity(sh->vol, &id);
	if (!id.present) {
		fprintf(o, "%-14s none\n", "extension");
		return 0;
	}
	char uuid[37], when[64];
	uuid_unparse(id.uuid, uuid);
	time_string(id.mkfs_time_ns, when, sizeof(when));
	fprintf(o, "%-14s version %u\n", "extension", id.version);
	fprintf(o, "%-14s %s\n", "uuid", uuid);
	fprintf(o, "%-14s \"", "label");
	for (const unsigned char *p = (const unsigned char *)id.label; *p; p++) {
		if (*p < 0x20 || *p == 0x7f || *p == '"' || *p == '\\')
			fprintf(o, "\\x%02x", *p);
		else
			fputc(*p, o);
	}
	fprintf(o, "\"\n");
	fprintf(o, "%-14s %s (%" PRId64 " ns)\n", "mkfs time", when,
		id.mkfs_time_ns);
	fprintf(o, "%-14s 0x%08x\n", "compat", id.compat);
	fprintf(o, "%-14s 0x%08x\n", "ro_compat", id.ro_compat);
	fprintf(o, "%-14s 0x%08x\n", "incompat", id.incompat);
	fprintf(o, "%-14s %" PRIu64 "\n", "seq", id.seq);
	fprintf(o, "%-14s %s\n", "seal", id.sealed ? "sealed" :
		"not sealed (last commit by a writer that does not know the "
		"extension)");
	return 0;
}

int cmd_statfs(struct shell *sh, int argc, char **argv)
{
	struct tux3_statfs st;
	(void)argv;
	if (argc != 1)
		return sh_err(sh, "usage: statfs");
	tux3_statfs(sh->vol, &st);
	fprintf(sh->out, "block size:         %u\n"
		"blocks:             %" PRIu64 "\n"
		"free blocks:        %" PRIu64 "\n"
		"inode numbers:      %" PRIu64 "\n"
		"free inode numbers: %" PRIu64 "\n"
		"name length:        %u\n", st.bsize, st.blocks, st.bfree,
		st.files, st.ffree, st.namelen);
	return 0;
}

/* ---- atoms ---- */

static int print_atom(void *ctx, const struct tux3_atom *a)
{
	struct shell *sh = ctx;
	fprintf(sh->out, "%6u %8u %10" PRIu64 "  %s\n", a->atom, a->refcount,
		a->dictpos, a->name);
	return 0;
}

static int print_free_atom(void *ctx, unsigned atom)
{
	struct shell *sh = ctx;
	fprintf(sh->out, " %u", atom);
	return 0;
}

int cmd_atoms(struct shell *sh, int argc, char **argv)
{
	struct tux3_super_info s;
	(void)argv;
	if (argc != 1)
		return sh_err(sh, "usage: atoms");
	tux3_super_info(sh->vol, &s);
	fprintf(sh->out, "atomgen %u, freeatom %u, dictionary %" PRIu64
		" bytes\n  atom refcount  dict-pos  name\n", s.atomgen,
		s.freeatom, s.atomdictsize);
	int err = tux3_atoms(sh->vol, print_atom, sh);
	if (err)
		return sh_volerr(sh, "atoms", err);
	fprintf(sh->out, "free list:");
	err = tux3_atom_freelist(sh->vol, print_free_atom, sh);
	fputc('\n', sh->out);
	if (err)
		return sh_volerr(sh, "atoms: free list", err);
	return 0;
}

/* ---- log ---- */

static int log_block(void *ctx, unsigned index, tux3_block_t block,
		     unsigned bytes, tux3_block_t chain)
{
	struct shell *sh = ctx;
	fprintf(sh->out, "log block %u: block %" PRIu64 ", %u payload bytes, "
		"logchain -> %" PRIu64 "\n", index, block, bytes, chain);
	return 0;
}

static int log_rec(void *ctx, tux3_block_t block,
		   const struct tux3_logrec_info *rec)
{
	struct shell *sh = ctx;
	(void)block;
	fprintf(sh->out, "  %4u: %s%s\n", rec->offset, rec->text,
		rec->live || !sh->vol_replayed ? "" :
		"   (before the latest UNIFY: not replayed)");
	return 0;
}

int cmd_log(struct shell *sh, int argc, char **argv)
{
	struct tux3_super_info s;
	struct tux3_walk_ops ops = { .logblock = log_block, .logrec = log_rec
				     };
	int err;
	(void)argv;

	if (argc != 1)
		return sh_err(sh, "usage: log");
	tux3_super_info(sh->vol, &s);
	if (s.replayed) {
		fprintf(sh->out, "logchain %" PRIu64 ", logcount %u (oldest "
			"first)\n", s.logchain, s.logcount);
		err = tux3_walk_log(sh->vol, &ops, sh);
	} else {
		/* opened with -c: read the chain as far as it is readable */
		fprintf(sh->out, "logchain %" PRIu64 ", logcount %u (newest "
			"first, not replayed)\n", s.logchain, s.logcount);
		err = tux3_scan_log_raw(sh->vol, &ops, sh);
	}
	if (err < 0)
		return sh_volerr(sh, "log", err);
	for (unsigned i = 0; i < tux3_orphan_count(sh->vol); i++)
		fprintf(sh->out, "orphan: inode %" PRIu64 "\n",
			tux3_orphan(sh->vol, i));
	return 0;
}

/* ---- replay ---- */

struct replay_view {
	struct shell *sh;
	int quiet;
	unsigned stage;		/* the stage being printed */
	unsigned steps;
	/* stage 1: bnode blocks changed; stage 2: totals */
	tux3_block_t *blocks;
	size_t nblocks, cap;
	uint64_t set, cleared, deferred;
};

static const char *const stage_title[] = {
	/* parenthesized: one literal split over two lines, not a lost comma */
	("stage 0: the log chain, oldest block first (records before the "
	 "latest UNIFY are already in the on-disk trees)"),
	"stage 1: bnode images rebuilt in memory, and the free block count",
	"stage 2: the allocation bitmap, deferred frees and orphans",
};

static void remember_block(struct replay_view *v, tux3_block_t b)
{
	for (size_t i = 0; i < v->nblocks; i++)
		if (v->blocks[i] == b)
			return;
	if (v->nblocks == v->cap) {
		size_t ncap = v->cap ? v->cap * 2 : 16;
		void *n = realloc(v->blocks, ncap * sizeof(*v->blocks));
		if (!n)
			return;
		v->blocks = n;
		v->cap = ncap;
	}
	v->blocks[v->nblocks++] = b;
}

static int replay_step(void *ctx, const struct tux3_replay_step *s)
{
	struct replay_view *v = ctx;
	FILE *o = v->sh->out;
	v->steps++;
	if (s->stage == 1 && s->block != TUX3_NONE)
		remember_block(v, s->block);
	if (s->stage == 2) {
		if (s->bits > 0)
			v->set += s->count;
		else if (s->bits < 0)
			v->cleared += s->count;
		else if (s->block != TUX3_NONE)
			v->deferred += s->count;
	}
	if (v->quiet)
		return 0;
	if (!s->record[0])
		fprintf(o, "  %s\n", s->change);
	else if (s->delta)
		fprintf(o, "  block %" PRIu64 "+%u (delta %u): %s\n      -> %s\n",
			s->logblock, s->offset, s->delta, s->record, s->change);
	else
		fprintf(o, "  block %" PRIu64 "+%u: %s\n      -> %s\n",
			s->logblock, s->offset, s->record, s->change);
	return 0;
}

static int stage_summary(struct replay_view *v)
{
	struct shell *sh = v->sh;
	FILE *o = sh->out;
	struct tux3_super_info si;
	tux3_super_info(sh->vol, &si);
	if (v->stage == 0) {
		fprintf(o, "  %u log block%s (logchain %" PRIu64 ", logcount "
			"%u)\n", si.logcount, si.logcount == 1 ? "" : "s",
			si.logchain, si.logcount);
		return 0;
	}
	if (v->stage == 1) {
		unsigned bs = tux3_block_size(sh->vol);
		uint8_t *b = malloc(bs);
		if (!b)
			return sh_err(sh, "out of memory");
		fprintf(o, "  %u step%s; bnode images in memory now:", v->steps,
			v->steps == 1 ? "" : "s");
		if (!v->nblocks)
			fprintf(o, " none");
		fputc('\n', o);
		for (size_t i = 0; i < v->nblocks; i++) {
			int replayed = 0;
			uint64_t count = 0;
			const struct tux3_field *f =
				tux3_field_find(&tux3_fields_bnode, "count");
			int err = tux3_read_block(sh->vol, v->blocks[i], b,
						  &replayed);
			if (err) {
				tux3_clear_error(sh->vol);
				fprintf(o, "    block %" PRIu64 ": unreadable\n",
					v->blocks[i]);
				continue;
			}
			tux3_field_get(f, b, &count);
			if (replayed)
				fprintf(o, "    block %" PRIu64 ": bnode of %"
					PRIu64 " entries (the disk copy is "
					"stale)\n", v->blocks[i], count);
			else
				fprintf(o, "    block %" PRIu64 ": no image "
					"(dropped, or freed since)\n",
					v->blocks[i]);
		}
		free(b);
		return 0;
	}
	fprintf(o, "  %u step%s; bitmap: %" PRIu64 " block%s set, %" PRIu64
		" cleared; %" PRIu64 " to be freed at the next unify\n",
		v->steps, v->steps == 1 ? "" : "s", v->set,
		v->set == 1 ? "" : "s", v->cleared, v->deferred);
	fprintf(o, "  free blocks after replay: %" PRIu64 "\n", si.freeblocks);
	unsigned n = tux3_replay_conflict_count(sh->vol);
	fprintf(o, "  allocation conflicts: %u\n", n);
	for (unsigned i = 0; i < n; i++) {
		const struct replay_conflict *c = tux3_replay_conflict(sh->vol,
								       i);
		fprintf(o, "    log block %" PRIu64 " offset %u: blocks %" PRIu64
			"-%" PRIu64 " %s\n", c->logblock, c->offset, c->block,
			c->block + c->count - 1, c->set ? "already allocated" :
			"already free");
	}
	fprintf(o, "  orphans after replay:");
	for (unsigned i = 0; i < tux3_orphan_count(sh->vol); i++)
		fprintf(o, " %" PRIu64, tux3_orphan(sh->vol, i));
	if (!tux3_orphan_count(sh->vol))
		fprintf(o, " none");
	fputc('\n', o);
	return 0;
}

int cmd_replay(struct shell *sh, int argc, char **argv)
{
	static const char usage[] = "usage: replay [-s 0|1|2] [-q]";
	unsigned stages = 7;
	int quiet = 0, c;
	optind = 0;
	while ((c = getopt(argc, argv, "s:q")) != -1) {
		if (c == 'q') {
			quiet = 1;
		} else if (c == 's' && optarg[0] >= '0' && optarg[0] <= '2' &&
			   !optarg[1]) {
			stages = 1u << (optarg[0] - '0');
		} else if (c == 's') {
			return sh_err(sh, "replay: bad stage '%s' (0, 1 or 2)",
				      optarg);
		} else {
			return sh_err(sh, "%s", usage);
		}
	}
	if (optind != argc)
		return sh_err(sh, "%s", usage);
	if (!sh->vol_replayed)
		return sh_err(sh, "replay: the volume was opened with -c: no "
			      "replay was done (see 'log' for the records)");
	int failed = 0, err = tux3_replay_steps(sh->vol, 0, replay_step, NULL);
	if (err)
		return sh_volerr(sh, "replay", err);	/* nothing to show */
	for (unsigned stage = 0; stage < 3; stage++) {
		if (!(stages & (1u << stage)))
			continue;
		struct replay_view v = { .sh = sh, .quiet = quiet,
					 .stage = stage };
		fprintf(sh->out, "%s\n", stage_title[stage]);
		err = tux3_replay_steps(sh->vol, 1u << stage, replay_step,
					    &v);
		if (err) {
			free(v.blocks);
			return sh_volerr(sh, "replay", err);
		}
		failed |= stage_summary(&v);
		free(v.blocks);
	}
	return failed;
}

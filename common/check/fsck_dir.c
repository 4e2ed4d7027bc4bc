/*
 * Pass 5: directories from the root (tux3_check_namespace): entries
 * naming inodes that exist, entry types, every inode reachable (else
 * connected to /lost+found), no directory under two names, link counts.
 * Structural repairs come first; link counts are counted again after
 * them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "check/fsck_internal.h"

struct nsprob {
	enum tux3_ns_problem what;
	uint64_t inum, dir, have, want;
	char *why;		/* TUX3_NS_ENTRY_BAD: the damage */
};

struct nslist {
	struct fsck *f;
	struct nsprob *v;
	size_t n, cap;
	bool overflow;
	bool only_nlink;	/* second round: link counts only */
};

#define NS_MAX_PROBLEMS (1u << 20)

static void ns_collect(void *ctx, enum tux3_ns_problem what, uint64_t inum,
		       uint64_t dir, uint64_t have, uint64_t want)
{
	struct nslist *l = ctx;
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 64;
		void *v = ncap <= NS_MAX_PROBLEMS ?
			  realloc(l->v, ncap * sizeof(*l->v)) : NULL;
		if (!v) {
			l->overflow = true;
			return;
		}
		l->v = v;
		l->cap = ncap;
	}
	char *why = NULL;
	if (what == TUX3_NS_ENTRY_BAD)	/* the error is still pending */
		why = strdup(tux3_last_error(l->f->vol)->what);
	l->v[l->n++] = (struct nsprob){ what, inum, dir, have, want, why };
}

static void ns_free(struct nslist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].why);
	free(l->v);
}

/*
 * The inodes named inside unreachable directories: they come back with
 * the directory that names them, so only the top of each lost subtree is
 * reported.  Built once per round, each unreachable directory read once,
 * so that a lost directory of N entries costs N, not N squared.
 */
struct named_ctx {
	struct blockset *set;
	tux3_ino_t dir;
	int err;
};

static int note_named(void *ctx, const struct dirent_info *d)
{
	struct named_ctx *c = ctx;
	if (d->inum != c->dir) {
		int r = blockset_add(c->set, d->inum);
		if (r < 0) {
			c->err = r;
			return r;
		}
	}
	return 0;
}

static int unreachable_named_build(struct fsck *f, struct nslist *l,
				   struct blockset *set)
{
	for (size_t i = 0; i < l->n; i++) {
		struct nsprob *p = &l->v[i];
		struct named_ctx c = { set, p->inum, 0 };
		struct inode dir;
		if (p->what != TUX3_NS_UNREACHABLE)
			continue;
		if (inode_load_dir(f->vol, p->inum, &dir)) {
			tux3_clear_error(f->vol);
			continue;
		}
		/* a damaged block ends what this directory can name */
		dir_iterate(f->vol, &dir, note_named, &c);
		inode_free(&dir);
		tux3_clear_error(f->vol);
		if (c.err == -ENOMEM)
			return c.err;
	}
	return 0;
}

/* The table's message for each namespace problem takes its own values. */
static int report(struct fsck *f, unsigned id, const struct nsprob *p)
{
	const struct fsck_at *at = FSCK_AT(.inum = p->inum, .dir = p->dir,
					   .have = p->have, .want = p->want);
	switch (id) {
	case P5_DANGLING:
		return fsck_problem(f, id, true, at, p->dir, p->inum);
	case P5_TYPE:
		return fsck_problem(f, id, true, at, p->dir, p->inum, p->have,
				    p->want);
	case P5_DIR_TWICE:
		return fsck_problem(f, id, true, at, p->inum, p->dir);
	case P5_UNREACHABLE:
		return fsck_problem(f, id, true, at, p->inum, p->have);
	case P5_NLINK:
		return fsck_problem(f, id, true, at, p->inum, p->have, p->want);
	case P5_DIR_UNREADABLE:
		return fsck_problem(f, id, true, at, p->inum);
	case P5_ENTRY_BAD:
		at = FSCK_AT(.dir = p->dir, .block = p->want, .count = 1);
		return fsck_problem(f, id, true, at, p->dir, p->want,
				    p->why ? p->why : "damaged entry");
	default:
		return fsck_problem(f, id, true, at);
	}
}

/*
 * Unreachable inodes go to /lost+found.  A /lost+found that is not a
 * directory is moved aside (lost+found.INUM) so the repair can make one;
 * false if there is none to use.
 */
static bool lost_found_usable(struct fsck *f, struct nslist *l)
{
	static const char lf[] = "lost+found";
	struct tux3_stat st;
	tux3_ino_t ino;
	bool unreachable = false;
	for (size_t i = 0; i < l->n && !unreachable; i++)
		unreachable = l->v[i].what == TUX3_NS_UNREACHABLE;
	if (!unreachable)
		return true;
	if (tux3_lookup(f->vol, TUX3_ROOT_INO, lf, sizeof(lf) - 1, &ino) ||
	    tux3_stat(f->vol, ino, &st)) {
		tux3_clear_error(f->vol);
		return true;	/* made when needed */
	}
	if (S_ISDIR(st.mode))
		return true;
	if (!fsck_problem(f, P5_LOST_FOUND, true, FSCK_AT(.inum = ino)))
		return false;
	char aside[40];
	int n = snprintf(aside, sizeof(aside), "lost+found.%" PRIu64, ino);
	int err = tux3_rename(f->vol, TUX3_ROOT_INO, lf, sizeof(lf) - 1,
			      TUX3_ROOT_INO, aside, (size_t)n,
			      TUX3_RENAME_NOREPLACE);
	fsck_fixed(f, err);
	if (err)
		tux3_clear_error(f->vol);
	return !err;
}

/* One round: report, and fix unless deferred. Returns structural fixes. */
/* Problems the caller declined: not asked again in a later round. */
/* The problems the caller declined, asked once per run: a hash set on
 * (what, inum, dir), so that a run with many problems stays linear. */
struct declined {
	struct declined_ent {
		uint64_t inum, dir;
		unsigned what;
		bool used;
	} *v;
	size_t n, cap;		/* cap: a power of two, or 0 */
};

static size_t declined_slot(const struct declined *d, unsigned what,
			    uint64_t inum, uint64_t dir)
{
	uint64_t h = (inum * 0x9e3779b97f4a7c15ULL) ^
		     (dir * 0xc2b2ae3d27d4eb4fULL) ^ what;
	size_t i = (size_t)(h ^ (h >> 29)) & (d->cap - 1);
	while (d->v[i].used && !(d->v[i].what == what &&
				 d->v[i].inum == inum && d->v[i].dir == dir))
		i = (i + 1) & (d->cap - 1);
	return i;
}

static bool was_declined(const struct declined *d, const struct nsprob *p)
{
	return d->cap &&
	       d->v[declined_slot(d, p->what, p->inum, p->dir)].used;
}

static void decline(struct declined *d, const struct nsprob *p)
{
	if ((d->n + 1) * 2 > d->cap) {
		size_t ncap = d->cap ? d->cap * 2 : 64;
		struct declined old = *d;
		if (ncap > 2 * (size_t)NS_MAX_PROBLEMS)
			return;	/* at worst asked again */
		d->v = calloc(ncap, sizeof(*d->v));
		if (!d->v) {
			*d = old;
			return;
		}
		d->cap = ncap;
		for (size_t i = 0; i < old.cap; i++)
			if (old.v[i].used)
				d->v[declined_slot(d, old.v[i].what,
						   old.v[i].inum,
						   old.v[i].dir)] = old.v[i];
		free(old.v);
	}
	size_t i = declined_slot(d, p->what, p->inum, p->dir);
	if (!d->v[i].used) {
		d->v[i] = (struct declined_ent){ p->inum, p->dir, p->what,
						 true };
		d->n++;
	}
}

static int ns_round(struct fsck *f, struct declined *declined)
{
	struct nslist l = { .f = f };
	int structural = 0;
	int err = tux3_check_namespace(f->vol, ns_collect, &l);
	if (err < 0) {
		ns_free(&l);
		return err;
	}
	bool lost_ok = lost_found_usable(f, &l);
	struct blockset named = { 0 };	/* unreachable_named_build's */
	bool named_ready = false;
	/* damaged entries first (an entry's removal or retype edits
	 * blocks that must read), other structural problems next, link
	 * counts after them */
	for (int phase = 0; phase < 3 && !f->stop; phase++) {
		for (size_t i = 0; i < l.n && !f->stop; i++) {
			struct nsprob *p = &l.v[i];
			bool is_nlink = p->what == TUX3_NS_NLINK;
			int want = p->what == TUX3_NS_ENTRY_BAD ? 0 :
				   is_nlink ? 2 : 1;
			if (want != phase)
				continue;
			if (was_declined(declined, p))
				continue;
			unsigned id;
			switch (p->what) {
			case TUX3_NS_DANGLING: id = P5_DANGLING; break;
			case TUX3_NS_TYPE: id = P5_TYPE; break;
			case TUX3_NS_DIR_TWICE: id = P5_DIR_TWICE; break;
			case TUX3_NS_UNREACHABLE: id = P5_UNREACHABLE; break;
			case TUX3_NS_NLINK: id = P5_NLINK; break;
			case TUX3_NS_UNREADABLE: id = P5_DIR_UNREADABLE; break;
			case TUX3_NS_ENTRY_BAD: id = P5_ENTRY_BAD; break;
			default: id = P5_NO_ROOT; break;
			}
			/* a link count found with structural repairs pending
			 * is counted again in the next round */
			if (is_nlink && structural)
				continue;
			/* an inode named inside another unreachable directory
			 * comes back with it: only the top one is reported */
			if (p->what == TUX3_NS_UNREACHABLE && !named_ready) {
				named_ready = true;
				err = unreachable_named_build(f, &l, &named);
				if (err) {
					blockset_free(&named);
					ns_free(&l);
					return err;
				}
			}
			if (p->what == TUX3_NS_UNREACHABLE &&
			    blockset_has(&named, p->inum))
				continue;
			if (!report(f, id, p)) {
				decline(declined, p);
				continue;
			}
			/* a failed commit is this repair's failure */
			int r = fsck_make_room(f);
			if (!r) switch (p->what) {
			case TUX3_NS_DANGLING:
				r = fsck_dir_remove_inum(f->vol, p->dir,
							 p->inum, false);
				break;
			case TUX3_NS_TYPE:
				r = fsck_dir_retype(f->vol, p->dir, p->inum,
						    (unsigned)p->want);
				break;
			case TUX3_NS_DIR_TWICE:
				r = fsck_dir_remove_inum(f->vol, p->dir,
							 p->inum, true);
				break;
			case TUX3_NS_UNREACHABLE:
				if (!lost_ok) {
					f->res->unfixed++;	/* nowhere to go */
					continue;
				}
				else
					r = fsck_connect_lost(f->vol, p->inum);
				break;
			case TUX3_NS_ENTRY_BAD:
				r = fsck_dir_salvage(f->vol, p->dir, p->have);
				break;
			case TUX3_NS_NLINK:
				r = fsck_set_nlink(f->vol, p->inum,
						   (uint32_t)p->want);
				break;
			case TUX3_NS_NO_ROOT:
				/* the next round finds everything unreachable
				 * and connects it to /lost+found */
				r = repair_make_root(f->vol);
				break;
			default:
				break;
			}
			fsck_fixed(f, r);
			if (r < 0)
				tux3_clear_error(f->vol);
			else if (!is_nlink)
				structural++;
		}
	}
	if (l.overflow)
		fsck_problem(f, P3_STRUCT_BAD, false, NULL,
			     "too many namespace problems: the rest are not "
			     "listed");
	blockset_free(&named);
	ns_free(&l);
	return structural;
}

/*
 * Rounds until one repairs nothing structural: a repair can bring back
 * what the last round could not see (a directory connected to
 * /lost+found has its entries checked in the next round) and changes
 * link counts, which are counted after the structure settles.
 */
#define NS_MAX_ROUNDS 8

int fsck_pass5(struct fsck *f)
{
	struct declined declined = { 0 };
	int s = 1;
	for (int round = 0; s > 0 && round < NS_MAX_ROUNDS && !f->stop;
	     round++)
		s = ns_round(f, &declined);
	free(declined.v);
	if (s > 0)
		fsck_info(f, "directories still changing after %d rounds of "
			  "repair: run fsck again", NS_MAX_ROUNDS);
	return s < 0 ? s : fsck_dirhash(f);
}

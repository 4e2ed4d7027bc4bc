/*
 * Pass 6: the xattr atom table (inode 4) against the uses found.
 *
 *   dictionary   every live record within atomdictsize names one atom
 *                below atomgen (<= 65536, atoms are 16 bits), none twice;
 *                atomdictsize is a whole number of blocks and ends with
 *                the atom table's last dictionary block, with no hole
 *                before it (PASS6_DICT_BAD: damaged blocks are rewritten
 *                from the records read before the damage, holes filled
 *                with empty blocks, stray records deleted, atomdictsize
 *                rounded up or cut back, atomgen raised over the names
 *                or brought back to 16 bits)
 *   uses         every XATTR attribute of every inode names an atom with
 *                a name (PASS6_UNKNOWN_ATOM: the xattr is removed)
 *   refcounts    a named atom's count is its number of uses
 *                (PASS6_REFCOUNT), and a named atom nothing uses is freed
 *                (PASS6_ATOM_UNUSED); a free atom's count is 0
 *   reverse map  a named atom's entry is its record's byte offset
 *                (PASS6_REVERSE_MAP)
 *   free list    from the superblock's freeatom, links marked 0x6eadfcee,
 *                below atomgen, no loop, no named atom, and every unnamed
 *                atom in [1, atomgen) on it (PASS6_FREE_LIST: rebuilt)
 *
 * Counts are checked only when every inode could be read: an inode
 * skipped would make its atoms look less used than they are.
 *
 * Memory: 4 bytes per atom below atomgen for the uses and a bit per atom
 * for the free list (at most 264 KiB, atoms being 16 bits), the names
 * the library keeps, three blocks of the atom table, and 16 bytes per
 * xattr naming an unknown atom.  The dictionary check, when the library
 * cannot load the dictionary, keeps its own copy of the names.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "check/fsck_internal.h"
#include "version/version.h"
#include "version/vinode.h"

#define ATOM_LIMIT 65536	/* atoms are 16 bits in XATTR attributes */

struct unknown_use {
	tux3_ino_t inum;
	unsigned atom;
};

struct pass6 {
	struct fsck *f;
	struct tux3_volume *vol;
	struct atom_table own;		/* the dictionary as salvaged */
	struct atom_table *at;		/* the table checked */
	uint32_t *uses;			/* per atom below at->count */
	uint8_t *onlist;		/* bit per atom: on the free list */
	bool incomplete;		/* some inode could not be read */
	struct unknown_use *unknown;
	size_t nunknown, capunknown;
	/* reading the refcounts and reverse map, a block at a time */
	struct inode atable;
	int atable_state;		/* 0 not loaded, 1 loaded, 2 absent */
	uint8_t *blk[3];
	uint64_t blkno[3];
};

enum { RD_LO, RD_HI, RD_UNATOM };

static void reader_reset(struct pass6 *p)
{
	if (p->atable_state == 1)
		inode_free(&p->atable);
	p->atable_state = 0;
	for (int i = 0; i < 3; i++)
		p->blkno[i] = UINT64_MAX;
}

/* The logical block of inode 4 in slot (read once while it stays). */
static int reader_get(struct pass6 *p, int slot, uint64_t logical,
		      const uint8_t **out)
{
	struct tux3_volume *vol = p->vol;
	int err;
	if (!p->atable_state) {
		err = inode_load(vol, TUX3_ATABLE_INO, &p->atable);
		if (err == -ENOENT) {
			tux3_clear_error(vol);
			p->atable_state = 2;
		} else if (err) {
			return err;
		} else {
			p->atable_state = 1;
		}
	}
	if (!p->blk[slot] && !(p->blk[slot] = malloc(vol->blocksize)))
		return -ENOMEM;
	if (p->blkno[slot] != logical) {
		if (p->atable_state == 2)
			memset(p->blk[slot], 0, vol->blocksize);
		else if ((err = filemap_read_block(vol, &p->atable, logical,
						   p->blk[slot])))
			return err;
		p->blkno[slot] = logical;
	}
	*out = p->blk[slot];
	return 0;
}

static int read_refcount(struct pass6 *p, unsigned atom, uint32_t *ref)
{
	struct tux3_volume *vol = p->vol;
	unsigned per = vol->blocksize / 2;
	uint64_t pair = (ATOM_REFCOUNT_BASE >> vol->blockbits) +
			2 * (uint64_t)(atom / per);
	const uint8_t *lo, *hi;
	int err = reader_get(p, RD_LO, pair, &lo);
	if (!err)
		err = reader_get(p, RD_HI, pair + 1, &hi);
	if (!err)
		*ref = (uint32_t)be16(hi + 2 * (atom % per)) << 16 |
		       be16(lo + 2 * (atom % per));
	return err;
}

static int read_unatom(struct pass6 *p, unsigned atom, uint64_t *val)
{
	struct tux3_volume *vol = p->vol;
	unsigned per = vol->blocksize / 8;
	const uint8_t *b;
	int err = reader_get(p, RD_UNATOM, (ATOM_UNATOM_BASE >>
					    vol->blockbits) + atom / per, &b);
	if (!err)
		*val = be64(b + 8 * (atom % per));
	return err;
}

/* A repair wrote the atom table: what the reader holds is stale. */
static void repaired(struct pass6 *p, int err)
{
	reader_reset(p);
	fsck_fixed(p->f, err);
}

/* ---- the dictionary ---- */

static int table_grow(struct atom_table *t, unsigned count)
{
	if (count <= t->count)
		return 0;
	unsigned ncount = t->count ? t->count : 64;
	while (ncount < count)
		ncount *= 2;
	if (ncount > ATOM_LIMIT)
		ncount = ATOM_LIMIT;
	char **n = realloc(t->names, ncount * sizeof(*n));
	if (!n)
		return -ENOMEM;
	t->names = n;
	uint64_t *d = realloc(t->dictpos, ncount * sizeof(*d));
	if (!d)
		return -ENOMEM;
	t->dictpos = d;
	for (unsigned i = t->count; i < ncount; i++) {
		t->names[i] = NULL;
		t->dictpos[i] = 0;
	}
	t->count = ncount;
	return 0;
}

struct dict_rec {
	uint64_t atom, pos;
	const char *name;	/* in the block buffer */
	unsigned len;
};

struct dict_block {
	struct dict_rec *recs;
	unsigned n, cap;
	uint64_t size;		/* records at or past it are not valid */
};

static int collect_rec(void *ctx, const struct dirent_info *d)
{
	struct dict_block *b = ctx;
	if (d->pos >= b->size)
		return 0;
	if (b->n == b->cap) {
		unsigned ncap = b->cap ? b->cap * 2 : 64;
		struct dict_rec *r = realloc(b->recs, ncap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		b->recs = r;
		b->cap = ncap;
	}
	b->recs[b->n++] = (struct dict_rec){ d->inum, d->pos, d->name,
					     d->name_len };
	return 0;
}

/* What the accepted DICT_BAD repairs will do. */
struct dict_fix {
	unsigned accepted, declined;
	bool size;			/* atomdictsize becomes newsize */
	uint64_t newsize;
	uint64_t *rewrite;		/* blocks rebuilt from their records */
	size_t nrewrite;
	uint64_t *del;			/* records deleted in place */
	size_t ndel;
	bool gen;
	uint32_t newgen;
	bool make_table;		/* inode 4 made again, empty */
};

static int u64_push(uint64_t **v, size_t *n, uint64_t x)
{
	uint64_t *nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!nv)
		return -ENOMEM;
	*v = nv;
	(*v)[(*n)++] = x;
	return 0;
}

static bool dict_problem(struct pass6 *p, struct dict_fix *fx, bool fixable,
			 const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static bool dict_problem(struct pass6 *p, struct dict_fix *fx, bool fixable,
			 const char *fmt, ...)
{
	char why[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (fsck_problem(p->f, P6_DICT_BAD, fixable,
			 FSCK_AT(.inum = TUX3_ATABLE_INO), why)) {
		fx->accepted++;
		return true;
	}
	fx->declined++;
	return false;
}

/* Rebuild dictionary block i from the salvaged names that lie in it;
 * a reverse-map entry that pointed at a moved record follows it. */
static int rewrite_block(struct pass6 *p, uint64_t i)
{
	struct tux3_volume *vol = p->vol;
	struct atom_table *t = &p->own;
	unsigned bs = vol->blocksize;
	uint8_t *blk = malloc(bs);
	int err = 0;
	if (!blk)
		return -ENOMEM;
	dirblock_init(blk, bs);
	for (unsigned a = 1; a < t->count && !err; a++) {
		if (!t->names[a] || t->dictpos[a] >> vol->blockbits != i)
			continue;
		int off = dirblock_add(blk, bs, t->names[a],
				       (unsigned)strlen(t->names[a]), a, 0);
		if (off < 0) {
			/* cannot be stored again: the atom loses its name */
			free(t->names[a]);
			t->names[a] = NULL;
			continue;
		}
		uint64_t pos = (i << vol->blockbits) + (unsigned)off, val;
		if ((err = read_unatom(p, a, &val)))
			break;
		if (val == t->dictpos[a] && pos != val) {
			err = atom_set_unatom(vol, a, pos);
			reader_reset(p);
		}
		t->dictpos[a] = pos;
	}
	if (!err)
		err = repair_atom_rw(vol, i << vol->blockbits, blk, bs, true);
	free(blk);
	reader_reset(p);
	return err;
}

static int u64_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x > y ? -1 : x < y;
}

static int dict_apply(struct pass6 *p, struct dict_fix *fx)
{
	struct tux3_volume *vol = p->vol;
	int err = 0;
	if (fx->make_table)
		err = repair_make_internal(vol, TUX3_ATABLE_INO);
	if (fx->size)
		repair_set_atomdictsize(vol, fx->newsize);
	for (size_t i = 0; i < fx->nrewrite && !err; i++)
		err = rewrite_block(p, fx->rewrite[i]);
	/* from the end: a deletion merges the record into the previous
	 * one, so the offsets before it stay valid */
	if (fx->ndel)
		qsort(fx->del, fx->ndel, sizeof(*fx->del), u64_desc);
	for (size_t i = 0; i < fx->ndel && !err; i++)
		err = atom_dict_delete(vol, fx->del[i]);
	/* (freeatom kept below atomgen; the free list check rebuilds
	 * the list) */
	if (!err && fx->gen)
		repair_set_atomgen(vol, fx->newgen);
	reader_reset(p);
	return err;
}

/* The mapped runs of the atom table below block nblocks, in order. */
struct range {
	uint64_t start, end, physical;
};

struct range_list {
	struct range *v;
	size_t n, cap;
	uint64_t limit;
};

static int range_add(void *ctx, const struct extent *e)
{
	struct range_list *l = ctx;
	if (!e->physical || e->logical >= l->limit)
		return 0;
	uint64_t end = e->count > l->limit - e->logical ? l->limit :
		       e->logical + e->count;
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 16;
		struct range *v = realloc(l->v, ncap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = ncap;
	}
	l->v[l->n++] = (struct range){ e->logical, end, e->physical };
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct range *)a)->start;
	uint64_t y = ((const struct range *)b)->start;
	return x < y ? -1 : x > y;
}

/* One dictionary block: its records into p->own, the problems of the
 * block and of its records reported. */
static int scan_block(struct pass6 *p, struct dict_fix *fx,
		      struct dict_block *db, uint8_t *buf, uint64_t i,
		      uint64_t physical, uint64_t *maxatom)
{
	struct tux3_volume *vol = p->vol;
	unsigned bs = vol->blocksize;
	bool rewrite = false;
	int err = vol_read_block(vol, physical, buf);
	if (err)
		return err;
	db->n = 0;
	int r = dirblock_iterate(vol, buf, bs, i * bs, physical,
				 TUX3_ATABLE_INO, collect_rec, db);
	if (r == -ENOMEM)
		return r;
	if (r) {
		char why[300];
		snprintf(why, sizeof(why), "%s", vol->error.what[0] ?
			 vol->error.what : strerror(-r));
		tux3_clear_error(vol);
		rewrite = dict_problem(p, fx, true, "dictionary block %" PRIu64
				       " (block %" PRIu64 "): %s", i, physical,
				       why);
		if (rewrite && (err = u64_push(&fx->rewrite, &fx->nrewrite,
					       i)))
			return err;
	}
	for (unsigned k = 0; k < db->n && !err; k++) {
		struct dict_rec *d = &db->recs[k];
		bool del;
		if (d->atom >= ATOM_LIMIT) {
			del = dict_problem(p, fx, true, "record '%.*s' at byte %"
					   PRIu64 " names atom %" PRIu64
					   " (atoms are 16 bits)", (int)d->len,
					   d->name, d->pos, d->atom);
		} else if ((err = table_grow(&p->own, (unsigned)d->atom + 1))) {
			break;
		} else if (p->own.names[d->atom]) {
			del = dict_problem(p, fx, true, "atom %" PRIu64 " is "
					   "named twice ('%s' at byte %" PRIu64
					   ", '%.*s' at byte %" PRIu64 ")",
					   d->atom, p->own.names[d->atom],
					   p->own.dictpos[d->atom], (int)d->len,
					   d->name, d->pos);
		} else {
			char *n = strndup(d->name, d->len);
			if (!n)
				return -ENOMEM;
			p->own.names[d->atom] = n;
			p->own.dictpos[d->atom] = d->pos;
			if (d->atom > *maxatom)
				*maxatom = d->atom;
			continue;
		}
		/* a rebuilt block leaves the record out anyway */
		if (del && !rewrite)
			err = u64_push(&fx->del, &fx->ndel, d->pos);
	}
	return err;
}

/* Holes inside the dictionary are filled with empty blocks, as many as a
 * dictionary may sensibly need; a larger gap is the atom table's data
 * tree gone wrong (pass 4's), and not repaired here. */
#define DICT_FILL_MAX 4096

/* The blocks of the dictionary: holes, and each block's records. */
static int scan_blocks(struct pass6 *p, struct dict_fix *fx,
		       struct dict_block *db, const struct inode *atable,
		       uint64_t *maxatom)
{
	struct tux3_volume *vol = p->vol;
	struct range_list maps = { .limit = db->size >> vol->blockbits };
	uint64_t nblocks = maps.limit, i = 0, filled = 0;
	uint8_t *buf = malloc(vol->blocksize);
	int err = buf ? filemap_walk(vol, atable, 0, nblocks, range_add, &maps)
		      : -ENOMEM;
	if (err)
		goto out;
	if (maps.n)
		qsort(maps.v, maps.n, sizeof(*maps.v), range_cmp);
	uint64_t last = 0;
	for (size_t m = 0; m < maps.n; m++)
		if (maps.v[m].end > last)
			last = maps.v[m].end;
	/* the dictionary ends with its last block (a check run reads what
	 * the repair would leave) */
	if (last < nblocks) {
		if (dict_problem(p, fx, true, "atomdictsize %" PRIu64 " reaches "
				 "%" PRIu64 " block%s past the dictionary's "
				 "end", db->size, nblocks - last,
				 nblocks - last == 1 ? "" : "s") ||
		    !fsck_repairing(p->f)) {
			fx->size = true;
			fx->newsize = last << vol->blockbits;
		}
		db->size = last << vol->blockbits;
		nblocks = last;
	}
	for (size_t m = 0; m <= maps.n && !err && !p->f->stop; m++) {
		uint64_t start = m < maps.n ? maps.v[m].start : nblocks;
		if (start > i) {
			uint64_t n = start - i;
			bool fill = filled + n <= DICT_FILL_MAX;
			if (n == 1)
				fill = dict_problem(p, fx, fill, "dictionary "
						    "block %" PRIu64 " is a "
						    "hole", i) && fill;
			else
				fill = dict_problem(p, fx, fill, "dictionary "
						    "blocks %" PRIu64 " to %"
						    PRIu64 " are holes", i,
						    start - 1) && fill;
			for (uint64_t b = i; fill && b < start && !err; b++)
				err = u64_push(&fx->rewrite, &fx->nrewrite, b);
			if (fill)
				filled += n;
			i = start;
		}
		if (m == maps.n)
			break;
		for (; i < maps.v[m].end && !err && !p->f->stop; i++)
			err = scan_block(p, fx, db, buf, i, maps.v[m].physical +
					 (i - maps.v[m].start), maxatom);
	}
out:
	free(buf);
	free(maps.v);
	return err;
}

/*
 * The dictionary read record by record, as far as it can be: a damaged
 * block keeps the records before the damage, stray records are left
 * out.  Each problem is reported; the repairs accepted are made at the
 * end.  A check run goes on with the table a repair would leave.
 * Returns 0 with p->at set, 1 when the rest of the pass cannot run, or
 * <0.
 */
static int dict_salvage(struct pass6 *p)
{
	struct tux3_volume *vol = p->vol;
	const struct disksuper *sb = &vol->super;
	unsigned bs = vol->blocksize;
	struct dict_fix fx = { 0 };
	struct dict_block db = { 0 };
	uint64_t maxatom = 0;
	int err = 0, ret = 0;

	db.size = sb->atomdictsize;
	if (db.size & (bs - 1)) {
		uint64_t up = (db.size + bs - 1) & ~(uint64_t)(bs - 1);
		if (dict_problem(p, &fx, true, "atomdictsize %" PRIu64 " is not "
				 "a whole number of blocks", sb->atomdictsize) ||
		    !fsck_repairing(p->f)) {
			fx.size = true;
			fx.newsize = up;
		}
		db.size = up;
	}
	if (db.size) {
		struct inode atable;
		err = inode_load(vol, TUX3_ATABLE_INO, &atable);
		if (err == -ENOENT) {
			/* gone (its leaf cut out, or cleared): made again
			 * empty, every atom's name lost with it */
			tux3_clear_error(vol);
			err = 0;
			if (dict_problem(p, &fx, true, "the atom table (inode "
					 "4) is missing: every atom's name is "
					 "lost")) {
				fx.make_table = fx.size = fx.gen = true;
				fx.newsize = 0;
				fx.newgen = 1;
			}
		} else if (err) {
			if (err == -ENOMEM)
				return err;
			tux3_clear_error(vol);
			dict_problem(p, &fx, false, "the atom table (inode 4) "
				     "cannot be read: %s", strerror(-err));
			return 1;
		} else {
			err = scan_blocks(p, &fx, &db, &atable, &maxatom);
			inode_free(&atable);
		}
	}
	free(db.recs);
	if (err) {
		if (err != -ENOMEM && err != -EIO) {
			/* the atom table's data tree: pass 4 reports it */
			tux3_clear_error(vol);
			ret = 1;
			err = 0;
		}
		goto out;
	}
	uint32_t gen = sb->atomgen, want = gen;
	const char *why = NULL;
	if (gen == 0)
		why = "atoms start at 1";
	else if (gen > ATOM_LIMIT)
		why = "atoms are 16 bits";
	if (why || maxatom >= gen) {
		want = (uint32_t)maxatom + 1;
		bool yes = why ? dict_problem(p, &fx, true, "atomgen %" PRIu32
					      " (%s), should be %" PRIu32, gen,
					      why, want) :
			   dict_problem(p, &fx, true, "atom %" PRIu64 " is "
					"named, but atomgen is %" PRIu32
					" (should be %" PRIu32 ")", maxatom,
					gen, want);
		if (yes) {
			fx.gen = true;
			fx.newgen = want;
		}
	}
	/* the table covers exactly the atoms below the (new) atomgen */
	if ((err = table_grow(&p->own, want)))
		goto out;
	for (unsigned a = want; a < p->own.count; a++) {
		free(p->own.names[a]);
		p->own.names[a] = NULL;
	}
	p->own.count = want;
	p->own.loaded = true;
	if (!fsck_repairing(p->f)) {
		p->at = &p->own;
		goto out;
	}
	if (fx.declined) {
		fsck_info(p->f, "atom reference counts, reverse map and free "
			  "list not checked: the dictionary is damaged");
		ret = 1;
		goto out;
	}
	int fixerr = dict_apply(p, &fx);
	for (unsigned i = 0; i < fx.accepted; i++)
		fsck_fixed(p->f, fixerr);
	if (fixerr == -ENOMEM) {
		err = fixerr;
		goto out;
	}
	atable_free(&vol->atoms);
	if (fixerr || (fixerr = atable_load(vol))) {
		/* counted as unfixed above, or a repair that did not take */
		if (!fixerr)
			fsck_fixed(p->f, -EUCLEAN);
		tux3_clear_error(vol);
		ret = 1;
		goto out;
	}
	p->at = &vol->atoms;
out:
	free(fx.rewrite);
	free(fx.del);
	return err ? err : ret;
}

/* 0 with p->at set, 1 to stop the pass, <0 error. */
static int check_dict(struct pass6 *p)
{
	struct tux3_volume *vol = p->vol;
	const struct disksuper *sb = &vol->super;
	if (!(sb->atomdictsize & (vol->blocksize - 1)) && sb->atomgen) {
		int err = atable_load(vol);
		if (!err) {
			p->at = &vol->atoms;
			return 0;
		}
		if (err == -ENOMEM)
			return err;
		tux3_clear_error(vol);
	}
	return dict_salvage(p);
}

/* ---- the uses ---- */

static int unknown_add(struct pass6 *p, tux3_ino_t inum, unsigned atom)
{
	if (p->nunknown == p->capunknown) {
		size_t ncap = p->capunknown ? p->capunknown * 2 : 16;
		void *n = realloc(p->unknown, ncap * sizeof(*p->unknown));
		if (!n)
			return -ENOMEM;
		p->unknown = n;
		p->capunknown = ncap;
	}
	p->unknown[p->nunknown++] = (struct unknown_use){ inum, atom };
	return 0;
}

/* On a volume with versions an atom has one reference per XATTR
 * attribute of any version (vinode.c): every label's value counts. */
static int versioned_uses(struct pass6 *p, tux3_ino_t inum,
			  const uint8_t *blob, unsigned len)
{
	struct vattrs x;
	unsigned bad_at;
	int err = vattrs_decode_whole(p->f->vol, inum, blob, len, &x,
				      &bad_at);
	tux3_clear_error(p->f->vol);
	if (err == -ENOMEM)
		return err;
	if (err) {
		p->incomplete = true;
		return 0;
	}
	for (unsigned i = 0; i < x.n && !err; i++) {
		unsigned atom = x.a[i].key & 0xffff;
		if (x.a[i].key >> 16 != ATTR_XATTR || x.a[i].absent)
			continue;
		if (atom < p->at->count && p->at->names[atom]) {
			if (p->uses[atom] < UINT32_MAX)
				p->uses[atom]++;
		} else if (!x.a[i].label) {
			/* the live version's: removable as ever */
			err = unknown_add(p, inum, atom);
		}
	}
	vattrs_free(&x);
	return err;
}

static int use_leaf(void *ctx, struct btree *bt, uint64_t blocknr,
		    const uint8_t *leaf, uint64_t lo, uint64_t hi)
{
	struct pass6 *p = ctx;
	struct tux3_volume *vol = p->vol;
	uint64_t ibase = ileaf_ibase(leaf);
	unsigned count = ileaf_count(leaf);
	(void)lo; (void)hi; (void)bt;
	for (unsigned k = 0; k < count; k++) {
		const uint8_t *blob;
		unsigned len;
		struct inode inode;
		if (ileaf_blob(leaf, vol->blocksize, ibase + k, &blob, &len) ||
		    !len)
			continue;
		/* by the version rule on a volume with either mark of
		 * versions too (pass 9 sets the other): its blobs hold
		 * every version's xattrs, and so do the references */
		if (vtable_marked(vol) &&
		    ibase + k >= TUX3_ROOT_INO) {
			int err = versioned_uses(p, ibase + k, blob, len);
			if (err)
				return err;
			continue;
		}
		int err = inode_from_blob(vol, ibase + k, blob, len, blocknr,
					  &inode);
		if (err == -ENOMEM)
			return err;
		if (err) {
			tux3_clear_error(vol);
			p->incomplete = true;
			continue;
		}
		for (unsigned i = 0; i < inode.nxattr && !err; i++) {
			unsigned atom = inode.xattrs[i].atom;
			if (atom < p->at->count && p->at->names[atom]) {
				if (p->uses[atom] < UINT32_MAX)
					p->uses[atom]++;
				continue;
			}
			err = unknown_add(p, ibase + k, atom);
		}
		inode_free(&inode);
		if (err)
			return err;
	}
	return 0;
}

static int use_bad(void *ctx, struct btree *bt, int level, uint64_t blocknr,
		   int err)
{
	struct pass6 *p = ctx;
	(void)bt; (void)level; (void)blocknr; (void)err;
	tux3_clear_error(p->vol);
	p->incomplete = true;
	return 0;
}

static int count_uses(struct pass6 *p)
{
	static const struct btree_visit visit = { .leaf = use_leaf,
						  .bad = use_bad };
	struct btree bt = { .vol = p->vol, .root = p->vol->iroot,
			    .ops = &itree_ops };
	int err = btree_traverse(&bt, &visit, p);
	if (err == -ENOMEM)
		return err;
	if (err) {
		tux3_clear_error(p->vol);
		p->incomplete = true;
	}
	return 0;
}

static void check_unknown(struct pass6 *p)
{
	for (size_t i = 0; i < p->nunknown && !p->f->stop; i++) {
		struct unknown_use *u = &p->unknown[i];
		/* several xattrs of one inode with one unknown atom: one
		 * report, one removal */
		if (i && u->inum == u[-1].inum && u->atom == u[-1].atom)
			continue;
		if (fsck_problem(p->f, P6_UNKNOWN_ATOM, true,
				 FSCK_AT(.inum = u->inum, .have = u->atom),
				 (uint64_t)u->inum, (uint64_t)u->atom))
			fsck_fixed(p->f, vinode_applies(p->vol, u->inum) ?
				   vinode_drop_atom(p->vol, u->inum, u->atom) :
				   repair_xattr_drop(p->vol, u->inum,
						     u->atom));
	}
}

/* ---- counts and reverse map, atom by atom ---- */

struct to_free {
	unsigned atom;
	uint32_t ref;
};

static int check_atoms(struct pass6 *p, struct to_free **freeq, size_t *nfree)
{
	struct tux3_volume *vol = p->vol;
	struct atom_table *at = p->at;
	int err = 0;
	for (unsigned a = 1; a < at->count && !err && !p->f->stop; a++) {
		uint32_t ref;
		uint64_t val;
		if ((err = read_refcount(p, a, &ref)) ||
		    (err = read_unatom(p, a, &val)))
			break;
		const char *name = at->names[a];
		if (!name) {
			/* free: its count is 0 (and its uses were unknown) */
			if (ref && fsck_problem(p->f, P6_REFCOUNT, true,
						FSCK_AT(.have = ref, .want = 0),
						(uint64_t)a, "free",
						(uint64_t)ref, (uint64_t)0))
				repaired(p, repair_atom_set_refcount(vol, a,
								     ref, 0));
			continue;
		}
		if (val != at->dictpos[a]) {
			char why[160];
			if (val >> 32 == ATOM_FREE_MAGIC)
				snprintf(why, sizeof(why), "the reverse map "
					 "marks it free (next %" PRIu64 "), but "
					 "it names '%s' at byte %" PRIu64,
					 val & 0xffffffff, name,
					 at->dictpos[a]);
			else
				snprintf(why, sizeof(why), "the reverse map "
					 "says byte %" PRIu64 ", but its name "
					 "'%s' is at byte %" PRIu64, val, name,
					 at->dictpos[a]);
			if (fsck_problem(p->f, P6_REVERSE, true,
					 FSCK_AT(.have = val,
						 .want = at->dictpos[a]),
					 (uint64_t)a, why))
				repaired(p, atom_set_unatom(vol, a,
							    at->dictpos[a]));
		}
		if (p->incomplete)
			continue;
		if (!p->uses[a]) {
			if (fsck_problem(p->f, P6_ATOM_UNUSED, true,
					 FSCK_AT(.have = ref, .want = 0),
					 (uint64_t)a, name, (uint64_t)ref)) {
				/* after the free list is checked: freeing
				 * links the atom into it */
				void *n = realloc(*freeq, (*nfree + 1) *
						  sizeof(**freeq));
				if (!n)
					return -ENOMEM;
				*freeq = n;
				(*freeq)[(*nfree)++] = (struct to_free){ a, ref };
			}
		} else if (p->uses[a] != ref &&
			   fsck_problem(p->f, P6_REFCOUNT, true,
					FSCK_AT(.have = ref, .want = p->uses[a]),
					(uint64_t)a, name, (uint64_t)ref,
					(uint64_t)p->uses[a])) {
			repaired(p, repair_atom_set_refcount(vol, a, ref,
							     p->uses[a]));
		}
	}
	return err;
}

/* ---- the free list ---- */

static int check_free_list(struct pass6 *p)
{
	struct tux3_volume *vol = p->vol;
	struct atom_table *at = p->at;
	uint32_t atom = vol->super.freeatom, prev = 0;
	char why[300];
	int err = 0;

	why[0] = 0;
	while (atom && !why[0]) {
		uint64_t val;
		if (atom >= at->count) {
			if (prev)
				snprintf(why, sizeof(why), "atom %" PRIu32
					 " links to atom %" PRIu32 ", not below "
					 "atomgen %u", prev, atom, at->count);
			else
				snprintf(why, sizeof(why), "its head, atom %"
					 PRIu32 ", is not below atomgen %u",
					 atom, at->count);
			break;
		}
		if (p->onlist[atom >> 3] & (1u << (atom & 7))) {
			snprintf(why, sizeof(why), "atom %" PRIu32 " is on it "
				 "twice (the list loops)", atom);
			break;
		}
		p->onlist[atom >> 3] |= (uint8_t)(1u << (atom & 7));
		if ((err = read_unatom(p, atom, &val)))
			return err;
		if (at->names[atom])
			snprintf(why, sizeof(why), "atom %" PRIu32 " is on it, "
				 "but names '%s'", atom, at->names[atom]);
		else if (val >> 32 != ATOM_FREE_MAGIC)
			snprintf(why, sizeof(why), "atom %" PRIu32 " is not "
				 "marked free (reverse map 0x%016" PRIx64 ")",
				 atom, val);
		prev = atom;
		atom = (uint32_t)val;
	}
	if (!why[0]) {
		unsigned missing = 0, first = 0;
		for (unsigned a = 1; a < at->count; a++)
			if (!at->names[a] &&
			    !(p->onlist[a >> 3] & (1u << (a & 7))) &&
			    !missing++)
				first = a;
		if (missing == 1)
			snprintf(why, sizeof(why), "atom %u is neither named "
				 "nor on it", first);
		else if (missing)
			snprintf(why, sizeof(why), "atom %u and %u more are "
				 "neither named nor on it", first, missing - 1);
	}
	if (why[0] && fsck_problem(p->f, P6_FREE_LIST, true,
				   FSCK_AT(.inum = TUX3_ATABLE_INO), why))
		repaired(p, repair_atom_rebuild_freelist(vol, at));
	return 0;
}

int fsck_pass6(struct fsck *f)
{
	struct pass6 p = { .f = f, .vol = f->vol };
	struct to_free *freeq = NULL;
	size_t nfree = 0;
	reader_reset(&p);
	int err = check_dict(&p);
	if (err) {
		err = err > 0 ? 0 : err;
		goto out;
	}
	unsigned count = p.at->count ? p.at->count : 1;
	p.uses = calloc(count, sizeof(*p.uses));
	p.onlist = calloc((count + 7) / 8, 1);
	if (!p.uses || !p.onlist) {
		err = -ENOMEM;
		goto out;
	}
	if ((err = count_uses(&p)))
		goto out;
	if (p.incomplete)
		fsck_info(f, "atom reference counts not checked: some inodes "
			  "cannot be read");
	check_unknown(&p);
	if ((err = check_atoms(&p, &freeq, &nfree)) ||
	    (err = check_free_list(&p)))
		goto out;
	for (size_t i = 0; i < nfree; i++)
		repaired(&p, repair_atom_free(f->vol, freeq[i].atom,
					      freeq[i].ref));
out:
	if (err && err != -ENOMEM && err != -EIO) {
		/* the atom table's data tree is damaged: pass 4's */
		tux3_clear_error(f->vol);
		fsck_info(f, "atom table checks stopped: %s", strerror(-err));
		err = 0;
	}
	reader_reset(&p);
	for (int i = 0; i < 3; i++)
		free(p.blk[i]);
	free(p.uses);
	free(p.onlist);
	free(p.unknown);
	free(freeq);
	atable_free(&p.own);
	return err;
}

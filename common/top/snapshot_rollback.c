/*
 * Rollback (doc/format.md 17.10): the live version made to read exactly
 * what a snapshot reads, every other version unchanged.
 *
 * The origin cannot share a snapshot's blocks: a version reads its
 * nearest ancestor's element, and the snapshots are the origin's
 * descendants, never its ancestors.  So the live version is written, as
 * any write to it is, through the version rules (its old values handed
 * to the newest snapshot where one still reads them): each block where
 * the two read different blocks gets a copy of the snapshot's, each block
 * the snapshot has as a hole is punched, and the inode's attributes
 * become the snapshot's.  Only the inodes that may differ are touched,
 * found as snapshot diff finds them (version_differing): the cost follows
 * what changed since the snapshot, not the volume's size.
 *
 * Inode numbers are shared by the versions, so a file the live version
 * deleted comes back with its number, and one created since goes (its
 * number stays taken while a snapshot has it).  It is one delta and one
 * commit: a crash leaves the live version as it was or rolled back, and
 * an error part way fails the volume's commits (commit_failed) so that
 * nothing of a half-made rollback reaches the disk.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "dir_index.h"
#include "version/vinode.h"
#include "version/vfilemap.h"

#define COPY_BLOCKS	64	/* blocks copied per write */

struct runs {
	struct extent *x;
	size_t n, cap;
};

struct rollback {
	struct tux3_volume *vol;
	uint32_t tag;		/* the snapshot's */
	unsigned label;
	struct runs runs[2];	/* 0: the snapshot's map, 1: the live one */
	uint8_t *buf;		/* COPY_BLOCKS blocks */
	struct tux3_rollback_report *rep;
};

static int add_run(void *ctx, const struct extent *e)
{
	struct runs *r = ctx;
	if (!e->physical || !e->count)
		return 0;	/* a hole */
	if (array_grow((void **)&r->x, &r->cap, r->n, sizeof(*r->x)))
		return -ENOMEM;
	r->x[r->n++] = *e;
	return 0;
}

/* The mapped runs a label reads, in logical order. */
static int read_map(struct rollback *rb, const struct inode *inode,
		    unsigned label, struct runs *r)
{
	r->n = 0;
	return vfilemap_walk(rb->vol, inode, rb->vol->vt, label, 0,
			     TUX3_KEY_LIMIT, add_run, r);
}

/* Where the run list maps logical: *phys (0: a hole) and how many blocks
 * from there keep that state (the next run's start, or limit). */
static void map_at(const struct runs *r, size_t *i, uint64_t logical,
		   uint64_t limit, uint64_t *phys, uint64_t *len)
{
	while (*i < r->n && r->x[*i].logical + r->x[*i].count <= logical)
		(*i)++;
	if (*i < r->n && r->x[*i].logical <= logical) {
		const struct extent *e = &r->x[*i];
		*phys = e->physical + (logical - e->logical);
		*len = e->logical + e->count - logical;
	} else {
		*phys = 0;
		*len = (*i < r->n ? r->x[*i].logical : limit) - logical;
	}
}

/* Write blocks [from, to) of the chunk in rb->buf to the live version. */
static int write_run(struct rollback *rb, struct inode *live,
		     uint64_t logical, unsigned from, unsigned to)
{
	unsigned bits = rb->vol->blockbits;
	if (from == to)
		return 0;
	int err = vinode_write_data(rb->vol, live,
				    rb->buf + ((size_t)from << bits),
				    (size_t)(to - from) << bits,
				    (logical + from) << bits);
	rb->rep->blocks_copied += err ? 0 : to - from;
	return err;
}

/*
 * count blocks of the snapshot's data from sphys written to the live
 * version at logical, where the live version maps lphys (0: a hole).  A
 * block whose bytes are the snapshot's already (a rollback run before)
 * is left alone.
 */
static int copy_blocks(struct rollback *rb, struct inode *live,
		       uint64_t logical, uint64_t sphys, uint64_t lphys,
		       uint64_t count)
{
	struct tux3_volume *vol = rb->vol;
	unsigned bits = vol->blockbits;
	uint8_t *mine = rb->buf + ((size_t)COPY_BLOCKS << bits);
	int err = 0;
	while (count && !err) {
		unsigned n = count < COPY_BLOCKS ? (unsigned)count : COPY_BLOCKS;
		unsigned from = 0;
		for (unsigned i = 0; i < n && !err; i++) {
			uint8_t *b = rb->buf + ((size_t)i << bits);
			if ((err = vol_read_block(vol, sphys + i, b)))
				break;
			bool same = lphys &&
				    !(err = vol_read_block(vol, lphys + i, mine)) &&
				    !memcmp(b, mine, vol->blocksize);
			if (!err && same) {
				/* the run so far goes; this block stays */
				err = write_run(rb, live, logical, from, i);
				from = i + 1;
			}
		}
		if (!err)
			err = write_run(rb, live, logical, from, n);
		logical += n;
		sphys += n;
		lphys += lphys ? n : 0;
		count -= n;
	}
	return err;
}

/*
 * The live version's data made the snapshot's: both maps read first (the
 * writes change only the live one's), then every stretch where the two
 * read different blocks is copied or punched.
 */
static int rollback_data(struct rollback *rb, struct inode *live)
{
	struct runs *s = &rb->runs[0], *l = &rb->runs[1];
	int err = read_map(rb, live, rb->label, s);
	if (!err)
		err = read_map(rb, live, VERSION_ORIGIN, l);
	uint64_t end = 0;
	if (s->n)
		end = s->x[s->n - 1].logical + s->x[s->n - 1].count;
	if (l->n && l->x[l->n - 1].logical + l->x[l->n - 1].count > end)
		end = l->x[l->n - 1].logical + l->x[l->n - 1].count;
	size_t si = 0, li = 0;
	for (uint64_t at = 0; at < end && !err;) {
		uint64_t sp, sn, lp, ln;
		map_at(s, &si, at, end, &sp, &sn);
		map_at(l, &li, at, end, &lp, &ln);
		uint64_t n = sn < ln ? sn : ln;
		if (sp != lp && !sp) {
			err = vinode_punch(rb->vol, live, at, n);
			rb->rep->blocks_punched += err ? 0 : n;
		} else if (sp != lp) {
			err = copy_blocks(rb, live, at, sp, lp, n);
		}
		at += n;
	}
	return err;
}

static bool has_atom(const struct inode *inode, unsigned atom)
{
	for (unsigned i = 0; i < inode->nxattr; i++)
		if (inode->xattrs[i].atom == atom)
			return true;
	return false;
}

/* The atom references of the live view's xattrs (xattr.c's share of the
 * counting; vinode_merge settles what the version rules do besides): one
 * taken for each xattr the view gains before the store, one given back
 * for each it loses after it, as setxattr and removexattr order them, so
 * that no count the store still moves touches zero. */
static int atom_refs(struct tux3_volume *vol, const struct inode *has,
		     const struct inode *lacks, bool take)
{
	int err = 0;
	for (unsigned i = 0; i < has->nxattr && !err; i++) {
		unsigned atom = has->xattrs[i].atom;
		if (!has_atom(lacks, atom))
			err = take ? atom_ref_add(vol, atom, 1) :
				     atom_put(vol, atom);
	}
	return err;
}

/* One inode as the two versions read it (ENOENT: not in that one). */
static int load_in(struct rollback *rb, uint32_t tag, tux3_ino_t inum,
		   struct inode *inode, bool *present)
{
	rb->vol->vtag = tag;
	int err = inode_load(rb->vol, inum, inode);
	rb->vol->vtag = 0;
	*present = !err;
	if (err == -ENOENT) {
		tux3_clear_error(rb->vol);
		memset(inode, 0, sizeof(*inode));
		inode->inum = inum;
		err = 0;
	}
	return err;
}

static int rollback_inode(struct rollback *rb, tux3_ino_t inum)
{
	struct tux3_volume *vol = rb->vol;
	struct inode snap, live;
	bool in_snap, in_live;
	int err = load_in(rb, rb->tag, inum, &snap, &in_snap);
	if (err)
		return err;
	if ((err = load_in(rb, 0, inum, &live, &in_live))) {
		inode_free(&snap);
		return err;
	}
	if (in_live && !in_snap) {
		/* created since: it leaves the live version */
		err = vinode_destroy(vol, &live);
		rb->rep->removed += !err;
	} else if (in_snap) {
		/* the data tree is shared: the live inode carries it, its
		 * root moving with each leaf the writes copy */
		uint64_t blocks = rb->rep->blocks_copied +
				  rb->rep->blocks_punched;
		bool same = in_live && live.bloblen == snap.bloblen &&
			    !memcmp(live.blob, snap.blob, snap.bloblen);
		live.dtree = snap.dtree;
		err = rollback_data(rb, &live);
		/* data written moves the shared tree's root: stored then */
		same &= blocks == rb->rep->blocks_copied +
				  rb->rep->blocks_punched;
		if (!err && !same)
			err = atom_refs(vol, &snap, &live, true);
		if (!err && !same) {
			snap.dtree = live.dtree;
			if (snap.dtree)
				snap.present |= 1u << ATTR_DATA_BTREE;
			else
				snap.present &= ~(1u << ATTR_DATA_BTREE);
			err = inode_store(vol, &snap);
		}
		if (!err && !same)
			err = atom_refs(vol, &live, &snap, false);
		if (!err && !in_live)
			rb->rep->restored++;
		else if (!err && !same)
			rb->rep->changed++;
	}
	/* its blocks changed under the in-memory index, if it had one */
	dir_index_forget(vol, inum);
	inode_free(&snap);
	inode_free(&live);
	return err;
}

static int rollback_run(struct rollback *rb, const char *name)
{
	struct tux3_volume *vol = rb->vol;
	int err = tux3_version_select(vol, name);
	if (!err)
		err = vol_label(vol, &rb->label);
	rb->tag = vol->vtag;
	vol->vtag = 0;
	if (err)
		return err;
	if (vol->orphans.count)
		return vol_error(vol, -EBUSY, TUX3_NONE, vol->orphans.inums[0],
				 TUX3_NONE, "inode %" PRIu64 " is unlinked but "
				 "still open: roll back once it is closed",
				 vol->orphans.inums[0]);
	if ((err = tux3_sync(vol)))
		return err;
	tux3_ino_t *ino;
	size_t n;
	err = version_differing(vol, rb->label, VERSION_ORIGIN, &ino, &n,
				&rb->rep->scan);
	if (err == -EUCLEAN) {
		struct tux3_error e = vol->error;
		err = vol_error(vol, err, e.block, e.inum, e.offset, "%s: run "
				"fsck.tux3 before rolling back", e.what);
	}
	/* the per-inode cap of versioned attributes checked for every
	 * inode before any change: refused whole, not half made */
	for (size_t i = 0; i < n && !err; i++)
		err = vinode_room(vol, ino[i]);
	bool started = !err && n;
	for (size_t i = 0; i < n && !err; i++) {
		err = rollback_inode(rb, ino[i]);
		rb->rep->inodes++;
	}
	free(ino);
	if (!err)
		err = tux3_sync(vol);
	else if (started)
		vol->commit_failed = true;	/* a half-made rollback stays
						 * out of the volume */
	return err;
}

int tux3_snapshot_rollback(struct tux3_volume *vol, const char *name,
			   struct tux3_rollback_report *rep)
{
	struct tux3_rollback_report none;
	struct rollback rb = { .vol = vol, .rep = rep ? rep : &none };
	uint32_t selected = vol->vtag;
	memset(rb.rep, 0, sizeof(*rb.rep));
	int err = version_writer(vol);
	if (err)
		return err;
	if (!name || !*name)
		return vol_error(vol, -EINVAL, TUX3_NONE, TUX3_NONE, TUX3_NONE,
				 "rolling back needs a snapshot's name");
	if (vol->vpending)
		return vol_error(vol, -EBUSY, TUX3_NONE, TUX3_NONE, TUX3_NONE,
				 "a snapshot delete is pending: run fsck.tux3 "
				 "or reopen the volume read-write first");
	/* the snapshot's blocks, and one of the live version's */
	if (!(rb.buf = malloc(((size_t)COPY_BLOCKS + 1) << vol->blockbits)))
		return -ENOMEM;
	err = rollback_run(&rb, name);
	for (unsigned i = 0; i < 2; i++)
		free(rb.runs[i].x);
	free(rb.buf);
	vol->vtag = selected;	/* live writes make no implicit child */
	return err;
}

/*
 * Pass 2: the log chain and its records, replayed into memory.  From
 * here on the volume stays open (f->vol) for the other passes.
 *
 * The chain is read here first, on its own and tolerantly, newest block
 * first: every block's magic and byte count, every record's code, size
 * and block numbers, and where the log's cycle begins: the block of the
 * delta holding the latest UNIFY, or (never unified) the block mkfs
 * wrote, whose link is 0.  That finds a wrong logcount (the chain's cycle
 * is shorter or longer than the superblock says) and the oldest damage.
 * Then the volume is opened and replayed as usual.
 *
 * Repairing a damaged log.  Going back to the last unify (an empty log)
 * is not safe in this format, so it is not offered:
 *  - a leaf redirected since the unify is freed when its delta commits
 *    (btree_edit.c leaf_cow -> bfree_deferred -> balloc_commit_done, and
 *    replay frees LEAF_REDIRECT's old block at once), and so are data
 *    blocks a delta frees (BFREE): the next delta may reuse them, and the
 *    reference does (see the oracle volumes' logs: small-delta reuses
 *    block 65 one delta after freeing it).  Only bnodes and log blocks
 *    wait for the next unify (defer_unify_add).  So the leaves the
 *    unified bnodes point at may have been overwritten;
 *  - the superblock's roots are rewritten at every delta commit
 *    (commit.c), and name bnodes that reach the disk only at the next
 *    unify: the roots of the unified state are in the log alone.
 * What is safe is to cut the log back to the end of the last intact
 * delta before the damage (the state that delta's commit left), when
 * that state can be shown to be intact: every block of it is still as
 * that commit left it.  The damaged delta's own writes only landed on
 * blocks free in that state (a commit never overwrites what the last
 * committed state uses); the deltas after it could have reused blocks
 * the damaged delta freed, so the cut is offered only when:
 *  1. the log's blocks before the cut can all be read and replay (the
 *     cut state is replayed in memory and must open cleanly);
 *  2. nothing after the damaged block is unreadable (every later block
 *     and allocation is known);
 *  3. every block a discarded delta allocated (its records and its log
 *     blocks) is free in the cut state: none was reused over it;
 *  4. the cut state's tree roots are known: the superblock's, mapped
 *     back through the discarded records that moved them, must be in use
 *     in the cut state (a root moved by an unreadable record maps to a
 *     block allocated after the cut, which is free there).
 * Two smaller repairs: a logcount that disagrees with the chain's cycle
 * is set to it, and damage in a block wholly before the unify mark
 * (whose records replay skips) is left out by beginning the log after
 * it.
 *
 * When no cut can be shown safe (the damage is in the first delta of the
 * cycle, or the state before it does not open), the last resort is a
 * salvage replay (replay.c's salvage mode, in the same replay): what the
 * log still holds is replayed, the damage and the records that do not
 * apply skipped.  Nothing is overwritten before a unify, so the blocks a
 * lost record would have changed keep older, valid contents; the later
 * passes repair what the lost records leave inconsistent (pass 8
 * rebuilds the bitmap from what the trees reference).
 * Every log repair changes only the superblock's log fields (logchain,
 * logcount, roots), in memory: the volume is replayed from them, the
 * run goes on on that state (what lost deltas leave behind, leaked
 * blocks and counters, is later passes' business), and the final
 * commit, a unify, writes the superblock and begins a new log.  So a
 * cancelled run, or one that stops because the volume still does not
 * open, writes nothing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "check/fsck_internal.h"

#define LOG_RECORD_MAX 26	/* the largest record (BNODE_ROOT) */

/* One block of the chain as read. */
struct sblk {
	uint64_t blocknr;
	uint8_t *data;
	uint64_t logchain;	/* as stored, even in a damaged header */
	unsigned bytes;
	bool head_ok;		/* magic and byte count */
	bool damaged;		/* its header or a record */
	bool partial;		/* some records could not be decoded */
	bool starts_delta;	/* first record is DELTA */
	bool has_unify;
	unsigned decoded;	/* records decoded up to this offset */
	unsigned why_off;	/* of the first damage */
	char why[200];
};

struct scan {
	struct sblk *b;		/* newest first */
	unsigned n, cap;
	int start;		/* index (newest first) of the cycle's first
				 * block, -1 if not found */
	char stop[200];		/* why the scan stopped short of a start */
};

static void scan_free(struct scan *s)
{
	for (unsigned i = 0; i < s->n; i++)
		free(s->b[i].data);
	free(s->b);
	memset(s, 0, sizeof(*s));
}

/* Chronological index c (0 = the cycle's first block) to the block. */
static struct sblk *chrono(struct scan *s, unsigned c)
{
	return &s->b[(unsigned)s->start - c];
}

static bool record_blocks_valid(struct tux3_volume *vol,
				const struct logrec *rec)
{
	uint64_t blocks[4];
	uint32_t count;
	unsigned n = log_record_blocks(rec, blocks, &count);
	for (unsigned i = 0; i < n; i++)
		if (!vol_extent_valid(vol, blocks[i], i ? 1 : count))
			return false;
	return true;
}

static void damage(struct sblk *b, unsigned off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void damage(struct sblk *b, unsigned off, const char *fmt, ...)
{
	va_list ap;
	if (b->damaged)
		return;
	b->damaged = true;
	b->why_off = off;
	va_start(ap, fmt);
	vsnprintf(b->why, sizeof(b->why), fmt, ap);
	va_end(ap);
}

/* Does block hold a log block's header?  (A link into a block that
 * does not is the linking block's damage, not the log's end.) */
static bool holds_log_head(struct tux3_volume *vol, uint64_t block)
{
	uint8_t *buf = malloc(vol->blocksize);
	struct loghead head;
	char why[128];
	bool yes = buf && !dev_pread(&vol->dev, buf, vol->blocksize,
				     block << vol->blockbits) &&
		   !log_decode_head(buf, vol->blocksize, &head, why,
				    sizeof(why));
	free(buf);
	return yes;
}

/* Header and records of one block. */
static void scan_block(struct tux3_volume *vol, struct sblk *b)
{
	struct loghead head;
	char why[128];

	b->logchain = be64(b->data + 8);
	b->decoded = LOG_HEADER_SIZE;
	if (log_decode_head(b->data, vol->blocksize, &head, why,
			    sizeof(why))) {
		damage(b, 0, "%s", why);
		b->partial = true;
		return;
	}
	b->head_ok = true;
	b->bytes = head.bytes;
	unsigned end = LOG_HEADER_SIZE + head.bytes, off = LOG_HEADER_SIZE;
	while (off < end) {
		struct logrec rec;
		char text[160];
		unsigned size = log_decode_record(b->data, off, end, &rec);
		if (!size) {
			if (!log_record_size(rec.code))
				damage(b, off, "invalid log code 0x%02x at "
				       "offset %u", rec.code, off);
			else
				damage(b, off, "log record %s at offset %u "
				       "runs past the payload end %u",
				       log_code_name(rec.code), off, end);
			b->partial = true;
			break;
		}
		if (off == LOG_HEADER_SIZE && rec.code == LOG_DELTA)
			b->starts_delta = true;
		if (rec.code == LOG_UNIFY)
			b->has_unify = true;
		if (!record_blocks_valid(vol, &rec)) {
			log_format_record(&rec, text, sizeof(text));
			damage(b, off, "log record %s at offset %u: block "
			       "range outside the volume", text, off);
		}
		off += size;
	}
	b->decoded = off;
}

/*
 * The chain began the cycle in fewer blocks than the count: one of its
 * blocks may be a copy of an older log block, whose link skipped the
 * blocks between (the original, its twin, is one of them).  Each block
 * another block of the volume holds byte for byte is damage, so that
 * the count is not cut to the chain (the salvage replay finds the block
 * that continues it instead).
 */
static int mark_copies(struct tux3_volume *vol, struct scan *s)
{
	uint64_t *blocks = calloc(s->n + 1, sizeof(*blocks));
	uint64_t *twin = calloc(s->n + 1, sizeof(*twin));
	uint8_t **data = calloc(s->n + 1, sizeof(*data));
	unsigned n = 0;
	int err = blocks && twin && data ? 0 : -ENOMEM;
	for (unsigned i = 0; !err && i < s->n; i++)
		if (s->b[i].head_ok && s->b[i].data) {
			blocks[n] = s->b[i].blocknr;
			data[n++] = s->b[i].data;
		}
	if (!err && (err = log_blocks_twins(vol, blocks, data, n, twin)) > 0)
		err = 0;
	for (unsigned i = 0, k = 0; !err && i < s->n; i++) {
		struct sblk *b = &s->b[i];
		if (!b->head_ok || !b->data)
			continue;
		if (twin[k] != TUX3_NONE) {
			damage(b, 8, "it holds the bytes of block %" PRIu64
			       ": a copy of another log block, whose link "
			       "skips the blocks between", twin[k]);
			b->head_ok = false;
			b->partial = true;
		}
		k++;
	}
	free(blocks);
	free(twin);
	free(data);
	return err;
}

/*
 * Follow the chain from sb's logchain (the superblock's, or pass 2's
 * repaired fields; sb's logcount too), newest first, until the cycle's
 * first block (a block holding UNIFY begins the cycle with the first
 * block of its delta; mkfs's block links to 0; the block the count ends
 * at, if its link leads out of the volume), a link out of the volume,
 * a loop, an unreadable block or two damaged headers in a row (a damaged
 * header's link is followed once, to find what lies behind it).
 */
static int scan_chain(struct tux3_volume *vol, const struct disksuper *sb,
		      struct scan *s)
{
	uint64_t chain = sb->logchain;
	struct blockset seen = { 0 };
	bool unify = false, partial = false;
	unsigned bad_heads = 0;
	int err = 0;

	s->start = -1;
	if (!sb->logcount)
		return 0;
	while (s->n < vol->volblocks) {
		if (chain < vol->reserved_blocks || chain >= vol->volblocks) {
			snprintf(s->stop, sizeof(s->stop), "log block %" PRIu64
				 " links to block %" PRIu64 ", outside the "
				 "volume", s->n ? s->b[s->n - 1].blocknr : 0,
				 chain);
			break;
		}
		if ((err = blockset_add(&seen, chain)) < 0)
			break;
		if (!err) {
			snprintf(s->stop, sizeof(s->stop), "the log chain "
				 "loops back to block %" PRIu64, chain);
			err = 0;
			break;
		}
		err = 0;
		if (s->n == s->cap) {
			unsigned ncap = s->cap ? s->cap * 2 : 16;
			struct sblk *nb = realloc(s->b, ncap * sizeof(*nb));
			if (!nb) {
				err = -ENOMEM;
				break;
			}
			s->b = nb;
			s->cap = ncap;
		}
		struct sblk *b = &s->b[s->n];
		memset(b, 0, sizeof(*b));
		b->blocknr = chain;
		if (!(b->data = malloc(vol->blocksize))) {
			err = -ENOMEM;
			break;
		}
		s->n++;
		if (dev_pread(&vol->dev, b->data, vol->blocksize,
			      chain << vol->blockbits)) {
			damage(b, 0, "cannot read the block");
			b->partial = true;
			break;
		}
		scan_block(vol, b);
		if (b->head_ok && (b->logchain == b->blocknr ||
				   (blockset_has(&seen, b->logchain) &&
				    (s->n < sb->logcount || !b->has_unify)))) {
			/* each block links to an older one (the cycle's
			 * oldest, with its unify mark, into the retired
			 * cycle, whose blocks may be reused): this one holds
			 * a copy of a newer log block (replay.c's
			 * copied_logblock) */
			damage(b, 8, "it links back to block %" PRIu64 ", newer "
			       "in the chain: it holds a copy of another log "
			       "block", b->logchain);
			b->head_ok = false;
			b->partial = true;
		}
		uint64_t twin;
		if (b->head_ok && !b->logchain && s->n < sb->logcount) {
			/* mkfs's block, with older ones by the count: a
			 * copy of another log block when one is alike */
			int r = log_block_twin(vol, b->blocknr, b->data, &twin);
			if (r < 0) {
				err = r;
				break;
			}
			if (r) {
				damage(b, 8, "it holds the bytes of block %"
				       PRIu64 " (a first log block, linking to "
				       "none): it holds a copy of another log "
				       "block", twin);
				b->head_ok = false;
				b->partial = true;
			}
		}
		unify |= b->has_unify;
		partial |= b->partial;
		/* mkfs's block is unmistakable; so is the block beginning
		 * the unify delta, as long as nothing unreadable lies between
		 * (past damage, the superblock's count is the better guide).
		 * A count that ends after the unify mark but before its
		 * delta's first block is fine too: replay skips what comes
		 * before the mark (pass 2 itself may leave it out). */
		bool ends = s->n == sb->logcount;
		/* the block the count ends at, linking nowhere: its link is
		 * damaged (mkfs's block links to 0), the count decides */
		bool nowhere = b->logchain < vol->reserved_blocks ||
			       b->logchain >= vol->volblocks;
		/* ... or to a block that is no log block, before any unify
		 * mark: the count's oldest block is mkfs's, its link
		 * damaged (mkfs's links to 0) */
		if (ends && !nowhere && b->head_ok && !unify &&
		    !holds_log_head(vol, b->logchain))
			nowhere = true;
		if ((b->head_ok && !b->logchain) || (ends && nowhere) ||
		    (partial ? ends :
			       unify && (b->starts_delta || ends))) {
			s->start = (int)s->n - 1;
			break;
		}
		bad_heads = b->head_ok ? 0 : bad_heads + 1;
		if (bad_heads == 2) {
			snprintf(s->stop, sizeof(s->stop), "two damaged log "
				 "blocks in a row");
			break;
		}
		chain = b->logchain;
	}
	blockset_free(&seen);
	if (!err && s->start >= 0 && (unsigned)s->start + 1 < sb->logcount)
		err = mark_copies(vol, s);
	return err;
}

/* ---- replaying a superblock of our choosing, in memory ---- */

/* Where a replay of our own failed: loading the chain, applying its
 * records, or reading what they lead to. */
enum replay_step { STEP_OPEN, STEP_LOAD, STEP_REPLAY, STEP_BITMAP,
		   STEP_ORPHANS };

/* ---- the state after replay: the bitmap inode and the orphan table ---- */

/* The bitmap inode as the open reads it, or, once the repair was
 * accepted (P2_BITMAP_BAD), past damage of the inode table's index
 * nodes on the way to it, which pass 3 then repairs. */
static int state_bitmap(struct fsck *f, struct tux3_volume *vol)
{
	int err = bitmap_init(vol);
	if (err && err != -ENOMEM && (f->salvage & FSCK_SALVAGE_BITMAP))
		err = bitmap_init_salvage(vol);
	if (err == -EUCLEAN && (f->salvage & FSCK_SALVAGE_INTERNAL)) {
		/* its leaf is lost (PASS2_INTERNAL_LOST): the bitmap is
		 * what the log alone says, and pass 8 rebuilds it */
		tux3_clear_error(vol);
		vol->has_bitmap_inode = false;
		err = 0;
	}
	return err;
}

/* The orphans as the open reads them, or, once the repair was accepted
 * (P2_ORPHANS_BAD), those the readable part of the orphan table holds
 * and the log's; pass 3 cuts the damaged part out, and an orphan lost
 * with it is an inode of link count 0 that no directory names, which
 * pass 5 connects to /lost+found. */
static int state_orphans(struct fsck *f, struct tux3_volume *vol)
{
	int err = orphans_resolve(vol);
	if (err && err != -ENOMEM && (f->salvage & FSCK_SALVAGE_ORPHANS))
		err = orphans_resolve_salvage(vol);
	return err;
}

/* Can the bitmap inode be read past the damage?  Tried on rv, the
 * replay that failed on it (its bitmap state is thrown away with it). */
static bool bitmap_salvageable(struct tux3_volume *rv)
{
	struct inode inode;
	tux3_clear_error(rv);
	int err = inode_load_salvage(rv, TUX3_BITMAP_INO, &inode);
	tux3_clear_error(rv);
	if (!err)
		inode_free(&inode);
	/* no bitmap inode: never unified, the bitmap is the log's alone */
	return !err || err == -ENOENT;
}

/* The leaf of the inode table the bitmap inode's entries lead to (through
 * index nodes that read), or 0. */
static uint64_t bitmap_leaf(struct tux3_volume *rv)
{
	uint64_t block = rv->iroot.block;
	uint8_t *buf = malloc(rv->blocksize);
	for (unsigned l = 0; buf && block && l + 1 < rv->iroot.depth; l++) {
		if (vol_read_block(rv, block, buf) || !fsck_bnode_sane(rv, buf))
			block = 0;
		else
			block = bnode_child(buf, bnode_lookup(buf,
							     TUX3_BITMAP_INO));
	}
	free(buf);
	return buf ? block : 0;
}

/* The log reaches back to mkfs's block, no unify since: every block
 * the volume uses was allocated by a record of it, so the bitmap is
 * whole without the bitmap file. */
static bool log_since_mkfs(const struct tux3_volume *rv)
{
	return rv->logcount && rv->log[0].data && rv->unify_index < 0 &&
	       rv->log[0].head.magic == TUX3_MAGIC_LOG &&
	       !rv->log[0].head.logchain && !rv->salvage.lost;
}

/* The inode table has index nodes, and the leaf of the volume's own
 * inodes is what does not read: those inodes are lost, the files of
 * the other leaves are not.  On a volume whose log holds every
 * allocation since mkfs the log gives the bitmap; elsewhere the bitmap
 * file lost with the leaf was the only record of what is in use, and
 * a walk of what the volume still reaches stands in for it
 * (FSCK_SALVAGE_REFMAP), so that the repairs before pass 8 allocate no
 * block in use. */
static bool internal_leaf_lost(struct tux3_volume *rv)
{
	if (rv->iroot.depth < 2 || rv->error.err != -EUCLEAN)
		return false;
	uint64_t block = rv->error.block;
	tux3_clear_error(rv);
	return block != TUX3_NONE && block == bitmap_leaf(rv);
}

/*
 * PASS2_INTERNAL_LOST: the leaf goes (pass 3 cuts it), and with it the
 * bitmap, countmap, atom table and root directory inodes and the files
 * it held.  What they were is made again from the rest: pass 8 rebuilds
 * the bitmap and the counts (the next unify writes them in new internal
 * files), pass 6 drops the xattrs whose names are gone, pass 5 makes an
 * empty root directory and connects what it named to /lost+found.
 * Returns 1 when the answer was yes (open again), 0 when the run stops.
 */
static int internal_lost(struct fsck *f, struct tux3_volume *rv,
			 uint64_t leaf, const char *text)
{
	if (!fsck_problem(f, P2_INTERNAL_LOST, fsck_repairing(f), NULL, leaf,
			  text))
		return 0;
	f->salvage |= FSCK_SALVAGE_BITMAP | FSCK_SALVAGE_INTERNAL;
	if (!log_since_mkfs(rv))
		f->salvage |= FSCK_SALVAGE_REFMAP;
	fsck_fixed(f, 0);
	return 1;
}

/* The inode table is one leaf, the root itself, and that is the block
 * that does not read: nothing of any inode is left, the internal ones
 * (bitmap, countmap, atom table, versions) included, and no other
 * structure names them. */
static bool itable_lost(const struct tux3_volume *rv)
{
	/* damage only: never a failed read of the device */
	return rv->iroot.depth == 1 && rv->error.block == rv->iroot.block &&
	       rv->error.err == -EUCLEAN;
}

/*
 * Every inode is gone with the inode table's one leaf: what is left is
 * a volume without a root directory, a bitmap or an atom table, which
 * no repair of a part can give back (e2fsck, when the whole inode table
 * is lost, ends with an empty file system as well).  The volume is made
 * again empty, as mkfs.tux3 would with its identity (UUID, label, mkfs
 * time, features less VERSIONS: the version table went with the rest);
 * the blocks the lost files held are free.  Returns 2 when the answer
 * was yes (the caller makes it once the failed replay is closed), 0
 * when the run must stop.
 */
static int itable_remake(struct fsck *f, struct tux3_volume *rv,
			 const char *text)
{
	/* never under a read-only mount: its reader would keep reading
	 * a volume made anew under it */
	bool fixable = fsck_repairing(f) &&
		       f->mode != TUX3_FSCK_REPAIR_MOUNTED_RO;
	if (!fsck_problem(f, P2_ITABLE_LOST, fixable, NULL, rv->iroot.block,
			  rv->error.what[0] ? rv->error.what : text))
		return 0;
	struct tux3_mkfs_params *p = &f->remake_params;
	struct tux3_identity id;
	memset(p, 0, sizeof(*p));
	p->blockbits = rv->blockbits;
	p->volblocks = rv->volblocks;
	p->time_ns = vol_now(rv);
	if (!tux3_identity(rv, &id) && id.present) {
		memcpy(p->uuid, id.uuid, sizeof(p->uuid));
		snprintf(p->label, sizeof(p->label), "%s", id.label);
		if (id.mkfs_time_ns > 0)
			p->time_ns = id.mkfs_time_ns;
		p->compat = id.compat;
		p->ro_compat = id.ro_compat;
		p->incompat = id.incompat & ~TUX3_FEATURE_INCOMPAT_VERSIONS;
	}
	f->remake = true;
	return 2;
}

/* P2_ITABLE_LOST's repair: written at once, as pass 1's are (no open
 * accepts the volume before it). */
static int remake_volume(struct fsck *f)
{
	char why[300];
	f->remake = false;
	int err = tux3_mkfs(f->path, &f->remake_params, why, sizeof(why));
	if (err)
		fsck_info(f, "  making the volume again failed: %s", why);
	fsck_fixed(f, err);
	return err;
}

/*
 * The replay went through but what it leads to cannot be read: the
 * bitmap inode (through the inode table) or the orphan table.  Offer
 * to read past the damage (later passes repair it).  Returns 1 when
 * the answer was yes (open again), 0 when the run must stop.
 */
static int state_unreadable(struct fsck *f, struct tux3_volume *rv,
			    enum replay_step step, const char *text)
{
	bool bitmap = step == STEP_BITMAP;
	unsigned flag = bitmap ? FSCK_SALVAGE_BITMAP : FSCK_SALVAGE_ORPHANS;
	/* a leaf that still reads in part keeps what it reads (pass 3
	 * trims it); only one that reads nothing is the end of every inode */
	if (bitmap && !(f->salvage & flag) && itable_lost(rv) &&
	    !bitmap_salvageable(rv))
		return itable_remake(f, rv, text);
	uint64_t leaf = rv->error.block;
	if (bitmap && !(f->salvage & flag) && internal_leaf_lost(rv) &&
	    !bitmap_salvageable(rv))
		return internal_lost(f, rv, leaf, text);
	/* asked once: if reading past the damage failed too, that's it */
	bool fixable = !(f->salvage & flag) && fsck_repairing(f) &&
		       (!bitmap || bitmap_salvageable(rv));
	if (!fsck_problem(f, bitmap ? P2_BITMAP_BAD : P2_ORPHANS_BAD, fixable,
			  NULL, text))
		return 0;
	f->salvage |= flag;
	fsck_fixed(f, 0);
	return 1;
}

/*
 * Open the volume without replay, then replay it as volume_load does,
 * but with logchain, logcount and roots taken from sb: the state a
 * repaired superblock would give, without writing anything.  On failure
 * *volp (if not NULL) keeps the error (block, offset, text) and *step
 * says which step failed.
 */
static int replay_as(struct fsck *f, const struct disksuper *sb, bool write,
		     bool salvage, struct tux3_volume **volp,
		     enum replay_step *step)
{
	struct tux3_volume *vol;
	int err = tux3_open_err(f->path, TUX3_OPEN_NOREPLAY, &vol, f->msg,
				sizeof(f->msg));
	*volp = NULL;
	*step = STEP_OPEN;
	if (err)
		return err;
	f->msg[0] = 0;
	if (write) {
		/* the repair's volume: the device again, for writing */
		err = repair_reopen_for_write(vol, f->path, f->msg,
					      sizeof(f->msg));
		if (err) {
			tux3_close(vol);
			return err;
		}
	}
	repair_reset_for_log_rebuild(vol, sb);
	if (salvage)
		replay_salvage_mode(vol);
	*volp = vol;
	*step = STEP_LOAD;
	if ((err = replay_load_log(vol)))
		return err;
	*step = STEP_REPLAY;
	if ((err = replay_stage1(vol)))
		return err;
	*step = STEP_BITMAP;
	if ((err = state_bitmap(f, vol)))
		return err;
	*step = STEP_REPLAY;
	if ((err = replay_stage2(vol)))
		return err;
	*step = STEP_ORPHANS;
	if ((err = state_orphans(f, vol)))
		return err;
	/* the version table, as the open reads it after replay: the
	 * no-replay open read it from the unreplayed trees (on a volume
	 * with snapshots, inodes read without it come out wrong) */
	if ((err = vtable_open(vol)))
		return err;
	repair_log_rebuilt(vol);
	return 0;
}

/* Index of log block blocknr in the scan (chronological), or -1. */
static int chrono_of(struct scan *s, uint64_t blocknr)
{
	for (int c = 0; s->start >= 0 && c <= s->start; c++)
		if (chrono(s, (unsigned)c)->blocknr == blocknr)
			return c;
	return -1;
}

/* Does chronological block c begin a delta?  When it cannot be read,
 * it does if the block before it was not full (a delta's records fill
 * each of its blocks but the last, up to room for one more record). */
static bool begins_delta(struct scan *s, unsigned c, unsigned blocksize)
{
	if (!c)
		return true;
	struct sblk *b = chrono(s, c);
	if (b->head_ok && b->decoded > LOG_HEADER_SIZE)
		return b->starts_delta;
	struct sblk *prev = chrono(s, c - 1);
	return prev->head_ok && !prev->partial &&
	       prev->bytes + LOG_RECORD_MAX <= blocksize - LOG_HEADER_SIZE;
}

/* Map a packed root back through the records of blocks [from, n) that
 * moved it, newest first.  Returns 0 and *packed, or -ENOMEM. */
static int map_root_back(struct scan *s, unsigned from, unsigned n,
			 unsigned blocksize, uint64_t *packed)
{
	struct root r = root_unpack(*packed);
	unsigned *at = malloc((blocksize / 7 + 1) * sizeof(*at));
	if (!at)
		return -ENOMEM;
	for (unsigned c = n; *packed && c-- > from;) {
		struct sblk *b = chrono(s, c);
		struct logrec rec;
		unsigned nrec = 0;
		/* the offsets of the records that move roots, then those
		 * records from the last one back */
		for (unsigned off = LOG_HEADER_SIZE; off < b->decoded;) {
			unsigned size = log_decode_record(b->data, off,
							  b->decoded, &rec);
			if (!size)
				break;
			if (rec.code == LOG_LEAF_REDIRECT ||
			    rec.code == LOG_BNODE_REDIRECT ||
			    rec.code == LOG_BNODE_ROOT)
				at[nrec++] = off;
			off += size;
		}
		while (nrec--) {
			log_decode_record(b->data, at[nrec], b->decoded, &rec);
			if (rec.code == LOG_LEAF_REDIRECT && r.depth == 1 &&
			    r.block == rec.newb)
				r.block = rec.oldb;
			else if (rec.code == LOG_BNODE_REDIRECT &&
				 r.depth > 1 && r.block == rec.newb)
				r.block = rec.oldb;
			else if (rec.code == LOG_BNODE_ROOT &&
				 r.block == rec.root && r.depth > 1) {
				r.block = rec.left;
				r.depth--;
			}
		}
	}
	free(at);
	if (*packed)
		*packed = root_pack(r);
	return 0;
}

struct plan {
	bool ok;
	char text[400];		/* what the fix does, or why it cannot */
	struct disksuper sb;	/* the superblock to write */
};

/* Is a block allocated by the discarded part in use in the cut state?
 * Returns the first such block, or TUX3_NONE. */
static uint64_t reused_block(struct tux3_volume *vol, uint64_t block,
			     uint64_t count)
{
	if (!vol_extent_valid(vol, block, count))
		return TUX3_NONE;	/* such a record allocated nothing */
	for (uint64_t b = block; b < block + count; b++)
		if (bitmap_test(vol, b) != 0)
			return b;
	return TUX3_NONE;
}

/* Check conditions 3 and 4 (see the top) on the cut state rv. */
static bool cut_state_intact(struct scan *s, unsigned keep, unsigned n,
			     struct tux3_volume *rv, struct plan *p)
{
	uint64_t roots[2] = { p->sb.iroot, p->sb.oroot };
	for (int i = 0; i < 2; i++) {
		struct root r = root_unpack(roots[i]);
		if (!roots[i])
			continue;
		if (!vol_block_valid(rv, r.block) ||
		    bitmap_test(rv, r.block) != 1) {
			snprintf(p->text, sizeof(p->text), "the log cannot be "
				 "truncated safely: the %s root before the "
				 "damage is not known (the damaged part may have "
				 "moved it)", i ? "orphan table" : "inode table");
			return false;
		}
	}
	for (unsigned c = keep; c < n; c++) {
		struct sblk *b = chrono(s, c);
		uint64_t hit = reused_block(rv, b->blocknr, 1), from = b->blocknr;
		for (unsigned off = LOG_HEADER_SIZE;
		     hit == TUX3_NONE && off < b->decoded;) {
			struct logrec rec;
			unsigned size = log_decode_record(b->data, off,
							  b->decoded, &rec);
			if (!size)
				break;
			switch (rec.code) {
			case LOG_BALLOC:
				hit = reused_block(rv, rec.block, rec.count);
				break;
			case LOG_LEAF_REDIRECT: case LOG_BNODE_REDIRECT:
				hit = reused_block(rv, rec.newb, 1);
				break;
			case LOG_BNODE_ROOT:
				hit = reused_block(rv, rec.root, 1);
				break;
			case LOG_BNODE_SPLIT:
				hit = reused_block(rv, rec.dst, 1);
				break;
			}
			off += size;
		}
		if (hit != TUX3_NONE) {
			snprintf(p->text, sizeof(p->text), "the log cannot be "
				 "truncated safely: block %" PRIu64 ", in use "
				 "before the damage, was allocated again by the "
				 "later log block %" PRIu64 " (its old contents "
				 "are gone)", hit, from);
			return false;
		}
	}
	return true;
}

/*
 * Find the cut for damage in chronological block dmg and show it safe
 * (see the top).  p->ok and p->sb when it is, else p->text says why not.
 */
static int plan_cut(struct fsck *f, struct scan *s,
		    const struct disksuper *disk, unsigned dmg,
		    struct plan *p)
{
	unsigned n = (unsigned)s->start + 1, bs = 1u << disk->blockbits;
	memset(p, 0, sizeof(*p));
	for (;;) {
		/* what the later deltas allocated must all be known */
		for (unsigned c = dmg + 1; c < n; c++)
			if (chrono(s, c)->partial) {
				snprintf(p->text, sizeof(p->text), "the log "
					 "cannot be truncated safely: log block "
					 "%" PRIu64 " (%u of %u) cannot be read "
					 "either", chrono(s, c)->blocknr, c + 1,
					 n);
				return 0;
			}
		unsigned keep = dmg;
		while (!begins_delta(s, keep, bs))
			keep--;
		if (!keep) {
			snprintf(p->text, sizeof(p->text), "the log cannot be "
				 "truncated: the damage is in the first delta "
				 "of the log's cycle, with no earlier state to "
				 "go back to");
			return 0;
		}
		p->sb = *disk;
		p->sb.logcount = keep;
		p->sb.logchain = chrono(s, keep - 1)->blocknr;
		int err = map_root_back(s, keep, n, bs, &p->sb.iroot);
		if (!err)
			err = map_root_back(s, keep, n, bs, &p->sb.oroot);
		if (err)
			return err;
		struct tux3_volume *rv;
		enum replay_step step;
		err = replay_as(f, &p->sb, false, false, &rv, &step);
		if (err && !rv)
			return err;
		if (err == -ENOMEM) {
			tux3_close(rv);
			return err;
		}
		if (err) {
			int older = step == STEP_LOAD || step == STEP_REPLAY ?
				    chrono_of(s, rv->error.block) : -1;
			char text[300];
			tux3_error_text(rv, text, sizeof(text));
			tux3_close(rv);
			if (older >= 0 && (unsigned)older < keep) {
				dmg = (unsigned)older;	/* damage further back */
				continue;
			}
			snprintf(p->text, sizeof(p->text), "the log cannot be "
				 "truncated safely: the state before the damage "
				 "does not open: %s", text);
			return 0;
		}
		bool intact = cut_state_intact(s, keep, n, rv, p);
		tux3_close(rv);
		if (!intact)
			return 0;
		p->ok = true;
		snprintf(p->text, sizeof(p->text), "the log can be cut back to "
			 "its first %u of %u blocks (the changes logged in the "
			 "last %u are lost)", keep, n, n - keep);
		return 0;
	}
}

/* The log can be repaired: the volume is opened for writing here (not
 * under a read-only user, whose lock the repair's own open cannot share). */
static bool can_repair_log(const struct fsck *f)
{
	return f->mode == TUX3_FSCK_REPAIR;
}

/* Drop "log block N of M: " that the library puts before header errors:
 * the problem's own message names the block. */
static const char *strip_block_prefix(const char *text)
{
	unsigned a, b;
	int n = 0;
	if (sscanf(text, "log block %u of %u: %n", &a, &b, &n) == 2 && n > 0)
		return text + n;
	return text;
}

/* Damage in a block wholly before the unify mark: its records are folded
 * into the on-disk trees already, and replay skips them, so the log can
 * begin after it (the blocks left out were never in the on-disk bitmap:
 * they stay free).  Returns 1 when cur now says so, 0 when the rule does
 * not apply or the answer was no (*asked then says which). */
static int skip_before_unify(struct fsck *f, struct scan *s,
			     struct disksuper *cur, unsigned dmg,
			     const char *why, bool *asked)
{
	unsigned n = (unsigned)s->start + 1;
	int u = -1;
	*asked = false;
	for (unsigned c = n; c-- > 0 && u < 0;)
		if (chrono(s, c)->has_unify)
			u = (int)c;
	if (u < 0 || dmg >= (unsigned)u)
		return 0;
	struct sblk *b = chrono(s, dmg);
	*asked = true;
	if (!fsck_problem(f, P2_LOG_PREMARK, can_repair_log(f),
			  FSCK_AT(.block = b->blocknr, .count = 1), b->blocknr,
			  (uint64_t)dmg + 1, (uint64_t)n,
			  strip_block_prefix(b->damaged ? b->why : why),
			  chrono(s, (unsigned)u)->blocknr))
		return 0;
	cur->logcount = n - dmg - 1;
	fsck_fixed(f, 0);
	return 1;
}

static enum tux3_open_mode open_mode(enum tux3_fsck_mode mode)
{
	switch (mode) {
	case TUX3_FSCK_CHECK:
		return TUX3_OPEN_RDONLY;
	case TUX3_FSCK_REPAIR_MOUNTED_RO:
		/* the read-only user keeps its shared lock */
		return (enum tux3_open_mode)(TUX3_OPEN_RDWR_NORECOVER |
					     TUX3_OPEN_SHARED_LOCK);
	case TUX3_FSCK_REPAIR:
	default:
		return TUX3_OPEN_RDWR_NORECOVER;
	}
}

/*
 * The chain's length against logcount.  Returns 1 when disk->logcount
 * was set to it (in memory), 0 when there is nothing to do, -1 when the
 * run must stop (a wrong logcount left as it is).
 */
static int check_logcount(struct fsck *f, struct scan *s,
			  struct disksuper *disk)
{
	if (s->start < 0)
		return 0;
	unsigned n = (unsigned)s->start + 1;
	for (unsigned c = 0; c < n; c++)
		if (chrono(s, c)->damaged)
			return 0;	/* damage: the open tells, see below */
	if (n == disk->logcount)
		return 0;
	if (!fsck_problem(f, P2_LOGCOUNT, can_repair_log(f),
			  FSCK_AT(.have = disk->logcount, .want = n),
			  (uint64_t)disk->logcount, (uint64_t)n,
			  chrono(s, 0)->has_unify ? "the last unify" :
			  "the volume was made"))
		return -1;
	disk->logcount = n;
	fsck_fixed(f, 0);
	return 1;
}

/* What a salvage replay left out, for the problem's message. */
static void salvage_summary(const struct replay_salvage *sv, char *text,
			    size_t len)
{
	size_t n = (size_t)snprintf(text, len, "a replay of what the log "
				    "still holds");
	char blocks[40] = "the damaged log block";
	if (sv->cut > 1)
		snprintf(blocks, sizeof(blocks), "the %u damaged log blocks",
			 sv->cut);
	if (sv->cut && sv->cut_bytes && n < len)
		n += (size_t)snprintf(text + n, len - n, " leaves out %u byte%s "
				      "of %s", sv->cut_bytes,
				      sv->cut_bytes == 1 ? "" : "s", blocks);
	else if (sv->cut && n < len)
		n += (size_t)snprintf(text + n, len - n, " keeps every record "
				      "of %s (each one validates)", blocks);
	if (sv->lost && n < len)
		n += (size_t)snprintf(text + n, len - n, "%s the %u older "
				      "block%s the chain no longer reaches (%s)",
				      sv->cut ? " and" : " leaves out",
				      sv->lost, sv->lost == 1 ? "" : "s",
				      strip_block_prefix(sv->first_cut.what));
	if (sv->skipped && n < len) {
		const struct tux3_error *e = &sv->first_skip;
		n += (size_t)snprintf(text + n, len - n, "%s skips %u record%s "
				      "that do%s not apply (the first: %s)",
				      sv->cut || sv->lost ? ", and" : "",
				      sv->skipped, sv->skipped == 1 ? "" : "s",
				      sv->skipped == 1 ? "es" : "",
				      strip_block_prefix(e->what));
	}
	if (sv->index_leaves && n < len)
		n += (size_t)snprintf(text + n, len - n, "; the inode table's "
				      "lost index is rebuilt over the %u "
				      "inode table leaves found on the volume",
				      sv->index_leaves);
	if (sv->bridged && n < len)
		n += (size_t)snprintf(text + n, len - n, " (the chain's lost "
				      "link found again: block %" PRIu64 ")",
				      sv->bridged);
	if (!sv->cut && !sv->lost && !sv->skipped && !sv->index_leaves &&
	    n < len)
		snprintf(text + n, len - n, " leaves nothing out");
}

/*
 * The last resort when the log can be neither replayed nor cut back:
 * replay what it still holds (replay.c's salvage mode), in memory.
 * Returns 1 and text (what that replay leaves out) when that state
 * opens, 0 and text (why not) when it does not either, <0.
 */
static int plan_salvage(struct fsck *f, const struct disksuper *disk,
			char *text, size_t len)
{
	struct tux3_volume *rv;
	enum replay_step step;
	int err = replay_as(f, disk, false, true, &rv, &step);
	if (err && !rv)
		return err;
	if (err == -ENOMEM) {
		tux3_close(rv);
		return err;
	}
	/* the log replays; what it leads to (the bitmap inode, the orphan
	 * table) is state_unreadable's, asked once this replay is chosen */
	if (err && step != STEP_BITMAP && step != STEP_ORPHANS) {
		char why[300];
		tux3_error_text(rv, why, sizeof(why));
		tux3_close(rv);
		snprintf(text, len, "a replay of what the log still holds "
			 "fails too: %s", why);
		return 0;
	}
	salvage_summary(&rv->salvage, text, len);
	tux3_close(rv);
	return 1;
}

/* The secondary superblock (sb_backup) decoded into out: false when
 * the volume has none, or it does not decode. */
static bool copy_fields(struct fsck *f, struct disksuper *out)
{
	struct tux3_volume *nv;
	bool ok = false;
	if (!fsck_open_super(f, &nv)) {
		uint8_t buf[SB2_LEN], raw[TUX3_SB_LEN];
		char why[160];
		ok = !dev_pread(&nv->dev, buf, SB2_LEN, SB2_OFFSET) &&
		     !sb2_decode(buf, raw, why, sizeof(why));
		if (ok)
			super_decode(raw, out);
	}
	fsck_close_super(nv);
	f->msg[0] = 0;
	return ok;
}

static void state_text(const struct disksuper *sb, char *text, size_t len)
{
	snprintf(text, len, "iroot %#" PRIx64 ", oroot %#" PRIx64 ", log "
		 "head %" PRIu64 " of %u block%s", sb->iroot, sb->oroot,
		 sb->logchain, sb->logcount, sb->logcount == 1 ? "" : "s");
}

/*
 * The volume does not open from disk's roots and log: when the
 * secondary superblock (of the same geometry) names others and the
 * state they lead to opens, take them.  That is damage of the primary
 * in fields no single-field repair of pass 1 could tell (a root moved
 * to another block inside the volume, a count set to 0, with the
 * extension record hit too, so the copy differs in more than one
 * field); a copy left behind by commits of code that does not keep it
 * names an older state, taken only when the newer one does not open.
 * Returns 1 when taken (look again), 0 when not, <0.
 */
static int state_from_copy(struct fsck *f, struct disksuper *disk,
			   const char *why)
{
	struct disksuper c;
	if (!copy_fields(f, &c) || c.blockbits != disk->blockbits ||
	    c.volblocks != disk->volblocks ||
	    (c.iroot == disk->iroot && c.oroot == disk->oroot &&
	     c.logchain == disk->logchain && c.logcount == disk->logcount))
		return 0;
	struct tux3_volume *rv;
	enum replay_step step;
	int err = replay_as(f, &c, false, false, &rv, &step);
	if (err && !rv)
		return err == -ENOMEM ? err : 0;
	tux3_close(rv);
	f->msg[0] = 0;
	if (err)
		return err == -ENOMEM ? err : 0;
	char have[160], want[160];
	state_text(disk, have, sizeof(have));
	state_text(&c, want, sizeof(want));
	if (!fsck_problem(f, P2_STATE_FROM_COPY, can_repair_log(f), NULL,
			  have, why, want))
		return 0;
	disk->iroot = c.iroot;
	disk->oroot = c.oroot;
	disk->logchain = c.logchain;
	disk->logcount = c.logcount;
	fsck_fixed(f, 0);
	return 1;
}

/* Does the volume open, log replayed, from sb's roots and log, with no
 * record at odds with the bitmap?  1, 0, or -ENOMEM.  An older state (a
 * root or log head of before the last unify) often opens too; its
 * bitmap then disagrees with what the log frees and allocates. */
static int replays_from(struct fsck *f, const struct disksuper *sb)
{
	struct tux3_volume *rv;
	enum replay_step step;
	int err = replay_as(f, sb, false, false, &rv, &step);
	bool clean = !err && rv && !rv->replay_conflicts;
	if (rv)
		tux3_close(rv);
	return err == -ENOMEM ? err : clean;
}

/* The magic of block (its first two bytes), 0 when it cannot be read. */
static unsigned block_magic(struct fsck *f, uint64_t block)
{
	struct tux3_volume *nv;
	unsigned m = 0;
	if (!fsck_open_super(f, &nv))
		m = fsck_magic_at(&nv->dev, block << nv->blockbits);
	fsck_close_super(nv);
	f->msg[0] = 0;
	return m;
}

/*
 * The volume does not open from disk's roots: when one of them, at
 * another depth and the same block, or at the same depth with its
 * block one bit away, opens it (and exactly one such root does), that
 * root.  A depth is a possible value however wrong (pass 1 passes it),
 * and a wrong one reads a leaf as an index node or the other way round
 * from the root down; a root block one bit away reads another node, at
 * best one of the tree's own (then some inodes are missing, and the
 * replay or the bitmap's load fails).  No secondary superblock is
 * needed to tell the right one.  Returns 1 when taken, 0, <0.
 */
static int root_found(struct fsck *f, struct disksuper *disk,
		      const char *why)
{
	uint64_t reserved = fsck_reserved_blocks(disk->blockbits);
	for (int i = 0; i < 2; i++) {
		uint64_t *field = i ? &disk->oroot : &disk->iroot;
		uint64_t have = *field, found = 0;
		if (!have)
			continue;	/* an empty table has no depth */
		struct root r = root_unpack(have);
		/* candidates 1..MAX_DEPTH: depths; then 48 bit flips of
		 * the block, unless it holds a node of the tree's kind (then
		 * it is the root, damaged: pass 3's) */
		unsigned m = block_magic(f, r.block);
		bool ours = m == TUX3_MAGIC_BNODE ||
			    m == (i ? TUX3_MAGIC_OLEAF : TUX3_MAGIC_ILEAF);
		unsigned last = TUX3_MAX_DEPTH + (ours ? 0 : 48);
		for (unsigned k = 1; k <= last; k++) {
			struct root t = r;
			if (k <= TUX3_MAX_DEPTH)
				t.depth = k;
			else
				t.block ^= 1ULL << (k - TUX3_MAX_DEPTH - 1);
			if ((k <= TUX3_MAX_DEPTH && k == r.depth) ||
			    t.block < reserved || t.block >= disk->volblocks)
				continue;
			struct disksuper d = *disk;
			*(i ? &d.oroot : &d.iroot) = root_pack(t);
			int ok = replays_from(f, &d);
			if (ok < 0)
				return ok;
			if (!ok)
				continue;
			if (found)
				return 0;	/* two open: nothing says which */
			found = root_pack(t);
		}
		f->msg[0] = 0;
		if (!found)
			continue;
		if (!fsck_problem(f, P2_ROOT_FOUND, can_repair_log(f), NULL,
				  i ? "orphan table" : "inode table", have, why,
				  found))
			return 0;
		*field = found;
		fsck_fixed(f, 0);
		return 1;
	}
	return 0;
}

/* Does the chain from t's head hold exactly t's count of blocks since
 * its cycle began, passing through block old on the way? */
static bool chain_through(struct fsck *f, const struct disksuper *t,
			  uint64_t old)
{
	struct tux3_volume *nv;
	struct scan s = { 0 };
	bool through = false;
	if (!fsck_open_super(f, &nv) && !scan_chain(nv, t, &s) &&
	    s.start >= 0 && (unsigned)s.start + 1 == t->logcount)
		for (unsigned k = 1; k < s.n && !through; k++)
			through = s.b[k].blocknr == old;
	scan_free(&s);
	fsck_close_super(nv);
	f->msg[0] = 0;
	return through;
}

/*
 * The superblock's log head leads to no log that replays, and no copy
 * names another: of the blocks it may be (fsck_log_head_candidates), the
 * one from which the volume opens, when exactly one does.
 *  - older false: the head is no log block (a log block there is the
 *    head, damaged, or of a chain whose count is wrong: the log's
 *    repairs).  The count is kept; pass 2 counts the chain again.
 *  - older true: the chain from the head holds fewer blocks than the
 *    count, and a candidate must begin a chain of exactly the count's
 *    length through the head: the head was moved to an older block of
 *    its own cycle's chain, and taking the shorter count would lose
 *    every delta after it (of two consistent histories of one cycle,
 *    the one that keeps more).
 * Returns 1 when taken, 0, <0.
 */
static int log_head(struct fsck *f, struct disksuper *disk, const char *why,
		    bool older)
{
	if (!older && block_magic(f, disk->logchain) == TUX3_MAGIC_LOG)
		return 0;
	uint64_t cand[72];
	unsigned n = fsck_log_head_candidates(disk, fsck_reserved_blocks(disk->blockbits), cand,
					      72);
	int found = -1;
	for (unsigned i = 0; i < n; i++) {
		struct disksuper t = *disk;
		t.logchain = cand[i];
		if (older && !chain_through(f, &t, disk->logchain))
			continue;
		int ok = replays_from(f, &t);
		if (ok < 0)
			return ok;
		if (!ok)
			continue;
		if (found >= 0)
			return 0;	/* two open: nothing says which */
		found = (int)i;
	}
	f->msg[0] = 0;
	if (found < 0 ||
	    !fsck_problem(f, P2_LOG_HEAD, can_repair_log(f), NULL,
			  disk->logchain, why, cand[found]))
		return 0;
	disk->logchain = cand[found];
	fsck_fixed(f, 0);
	return 1;
}

/*
 * The volume did not open: find out why on a replay of our own (the
 * error keeps its block and offset), report it and, for damage of the
 * log, offer the truncation if it can be shown safe (or beginning the
 * log after a block before the unify mark); when it cannot be, offer
 * the salvage replay (*salvage).  Once that is chosen, what its replay
 * leads to and cannot read (the bitmap inode, the orphan table) is
 * offered in turn.  Returns 1 when disk's log fields were changed, the
 * salvage was chosen or a read past damage was (look again), 0 when the
 * run must stop, <0.
 */
static int open_failed(struct fsck *f, struct scan *s,
		       struct disksuper *disk, bool *salvage)
{
	char text[400];
	struct tux3_volume *rv;
	enum replay_step step;
	bool chosen = *salvage;	/* the salvage, in an earlier round */
	int err = replay_as(f, disk, false, chosen, &rv, &step);
	if (err && !rv)
		return err;
	if (err == -ENOMEM) {
		tux3_close(rv);
		return err;
	}
	if (!err) {
		/* our replay works where the open did not (a mode of its
		 * own refused it): say what the open said */
		tux3_close(rv);
		fsck_problem(f, P2_STATE_BAD, false, NULL, "the volume",
			     f->msg);
		return 0;
	}
	/* the block and what is wrong with it (the inode the library adds
	 * is the tree's owner, 0 for these tables: not worth saying) */
	if (rv->error.block != TUX3_NONE)
		snprintf(text, sizeof(text), "block %" PRIu64 ": %s",
			 rv->error.block, rv->error.what);
	else
		tux3_error_text(rv, text, sizeof(text));
	/* the secondary superblock's state first, when it differs and
	 * opens: no repair of the primary's can do better */
	if (!chosen) {
		err = state_from_copy(f, disk, text);
		/* a root's depth is read from the replay on, never by
		 * the log's own load */
		if (!err && step != STEP_LOAD)
			err = root_found(f, disk, text);
		/* the head itself is no log block of this volume's */
		if (!err && step == STEP_LOAD &&
		    rv->error.block == disk->logchain)
			err = log_head(f, disk, text, false);
		if (err) {
			tux3_close(rv);
			return err;
		}
	}
	if (step == STEP_BITMAP || step == STEP_ORPHANS) {
		err = state_unreadable(f, rv, step, text);
		tux3_close(rv);
		return err;
	}
	if (chosen) {
		/* the salvage replay itself no longer opens: nothing else
		 * to offer */
		tux3_close(rv);
		return 0;
	}
	/* the log: the block the library names, or the oldest damage the
	 * scan found within the cycle if that is older */
	uint64_t where = rv->error.block != TUX3_NONE ? rv->error.block :
			 disk->logchain;
	snprintf(text, sizeof(text), "%s", strip_block_prefix(
		 rv->error.what[0] ? rv->error.what : strerror(-err)));
	tux3_close(rv);
	struct plan p = { 0 };
	int c = chrono_of(s, where);
	if (s->start < 0) {
		snprintf(p.text, sizeof(p.text), "the log cannot be "
			 "truncated: its beginning cannot be found (%s)",
			 s->stop[0] ? s->stop : "no block begins the cycle");
	} else {
		int dmg = c;
		for (unsigned k = 0; k <= (unsigned)s->start; k++)
			if (chrono(s, k)->damaged) {
				if (dmg < 0 || (int)k < dmg)
					dmg = (int)k;
				break;
			}
		if (dmg >= 0 && dmg != c && chrono(s, (unsigned)dmg)->damaged) {
			/* older damage than the library met first (it reads
			 * newest first): that one decides, name it */
			struct sblk *b = chrono(s, (unsigned)dmg);
			where = b->blocknr;
			snprintf(text, sizeof(text), "%s",
				 strip_block_prefix(b->why));
			c = dmg;
			step = STEP_LOAD;
		}
		bool asked = false;
		if (dmg >= 0 && step == STEP_LOAD) {
			err = skip_before_unify(f, s, disk, (unsigned)dmg,
						text, &asked);
			if (err || asked)
				return err;
		}
		if (dmg < 0)
			snprintf(p.text, sizeof(p.text), "the log cannot be "
				 "truncated: the damaged block is not in the "
				 "log's cycle");
		else if ((err = plan_cut(f, s, disk, (unsigned)dmg, &p)) < 0)
			return err;
	}
	unsigned n = s->start >= 0 ? (unsigned)s->start + 1 : disk->logcount;
	uint64_t idx = c >= 0 ? (uint64_t)c + 1 : 0;
	/* no beginning found: count from the newest, as the superblock does */
	for (unsigned j = 0; c < 0 && j < s->n && j < n; j++)
		if (s->b[j].blocknr == where)
			idx = n - j;
	/* No cut: what the log still holds, replayed, is the state to
	 * repair from (later passes mend what the lost records leave). */
	char salv[400] = "", why[sizeof(p.text) + sizeof(salv) + 2];
	int salvaged = p.ok ? 0 : plan_salvage(f, disk, salv, sizeof(salv));
	if (salvaged < 0)
		return salvaged;
	if (salvaged) {
		if (!fsck_problem(f, step == STEP_REPLAY ? P2_REPLAY_SALVAGE :
				  P2_LOG_SALVAGE, can_repair_log(f),
				  FSCK_AT(.block = where, .count = 1), where,
				  idx, (uint64_t)n, text, p.text, salv))
			return 0;
		*salvage = true;
		fsck_fixed(f, 0);
		return 1;
	}
	snprintf(why, sizeof(why), "%s%s%s", p.text, salv[0] ? "; " : "",
		 salv);
	/* A load error is damage of the log itself; a replay error is a
	 * record that does not apply to the state before it. */
	int yes = fsck_problem(f, step == STEP_REPLAY ? P2_REPLAY_FAILED :
			       P2_LOG_BAD, p.ok && can_repair_log(f),
			       FSCK_AT(.block = where, .count = 1), where,
			       idx, (uint64_t)n, text, why);
	if (!yes)
		return 0;
	disk->logcount = p.sb.logcount;
	disk->logchain = p.sb.logchain;
	disk->iroot = p.sb.iroot;
	disk->oroot = p.sb.oroot;
	fsck_fixed(f, 0);
	return 1;
}

/* The counted blocks are readable but none begins the log's cycle, and
 * the chain beyond them does not reach a beginning either. */
static void no_beginning(struct fsck *f, struct scan *s,
			 const struct disksuper *disk)
{
	unsigned n = disk->logcount < s->n ? disk->logcount : s->n;
	char text[300];
	if (!n)
		return;
	struct sblk *oldest = &s->b[n - 1];
	snprintf(text, sizeof(text), "the log's cycle does not begin here "
		 "(no unify mark, and it links back to block %" PRIu64 ")",
		 oldest->logchain);
	fsck_problem(f, P2_LOG_BAD, false,
		     FSCK_AT(.block = oldest->blocknr, .count = 1),
		     oldest->blocknr, (uint64_t)1, (uint64_t)disk->logcount,
		     text, s->stop[0] ? s->stop : "its beginning cannot be "
		     "found");
}

/* After a replay that worked the chain was checked already: this is a
 * guard, should the walker find something replay did not. */
static int log_error(void *ctx, const struct tux3_error *e)
{
	struct fsck *f = ctx;
	fsck_problem(f, P2_LOG_BAD, false, FSCK_AT(.block = e->block),
		     e->block, (uint64_t)0, (uint64_t)0,
		     e->what[0] ? e->what : strerror(-e->err),
		     "found after replay");
	return f->stop ? -ECANCELED : 0;
}

/* Pass 1's recomputed hints: the open already dropped the impossible
 * ones; the final commit writes the superblock with what replaced them. */
static void apply_hints(struct fsck *f)
{
	if (!f->hints_rewrite)
		return;
	f->hints_rewrite = false;
	if (!f->vol || f->vol->mode != TUX3_OPEN_RDWR) {
		f->res->unfixed++;
		return;
	}
	repair_super_rewrite(f->vol);
	fsck_fixed(f, 0);
}

/* Pass 1 decided to rewrite the extension record: put it on the volume;
 * the final commit writes it with the superblock. */
static void apply_extension(struct fsck *f)
{
	if (!f->ext_rewrite)
		return;
	f->ext_rewrite = false;
	if (!f->vol || f->vol->mode != TUX3_OPEN_RDWR) {
		f->res->unfixed++;
		return;
	}
	repair_set_ident(f->vol, &f->ext_ident);
	fsck_fixed(f, 0);
}

/* Open the volume for the later passes: as it is, or, once a log
 * repair changed the superblock's log fields (in cur, not yet on disk:
 * the final commit writes them), replayed from those.  0, or <0 with
 * f->msg set (damage: fsck_open_damage). */
static int open_volume(struct fsck *f, const struct disksuper *cur,
		       bool repaired, bool salvage)
{
	if (!repaired)
		return tux3_open_err(f->path, open_mode(f->mode), &f->vol,
				     f->msg, sizeof(f->msg));
	enum replay_step step;
	int err = replay_as(f, cur, fsck_repairing(f), salvage, &f->vol,
			    &step);
	if (err && f->vol) {
		tux3_error_text(f->vol, f->msg, sizeof(f->msg));
		tux3_close(f->vol);
		f->vol = NULL;
	}
	return err;
}

int fsck_pass2(struct fsck *f)
{
	struct scan s = { 0 };
	struct disksuper cur;	/* the superblock, with the log repairs */
	bool repaired = false, salvage = false;
	unsigned fixed_before = f->res->fixed;
	int err = 0;

	/* A log repair changes the superblock's log fields in cur only, and
	 * the chain is looked at again with them: a wrong logcount, blocks
	 * before the unify mark, a truncation, one after the other.  The
	 * volume is then replayed from cur, and the final commit (a unify,
	 * which begins a new log) writes the superblock: a cancelled run
	 * leaves the volume as it was. */
	for (int round = 0; round < 8; round++) {
		/* the chain alone (on the superblock alone, which pass 1
		 * checked), then the open */
		struct tux3_volume *nv;
		err = fsck_open_super(f, &nv);
		if (!err) {
			if (!repaired)
				cur = nv->super;
			scan_free(&s);
			err = scan_chain(nv, &cur, &s);
		} else if (nv) {
			tux3_error_text(nv, f->msg, sizeof(f->msg));
		}
		fsck_close_super(nv);
		if (err)
			goto out;
		f->msg[0] = 0;
		bool counted_ok = s.n >= cur.logcount;
		for (unsigned i = 0; i < cur.logcount && i < s.n; i++)
			counted_ok &= !s.b[i].damaged;
		if (s.start < 0 && cur.logcount && counted_ok) {
			/* a head of another cycle, or of nothing */
			err = log_head(f, &cur, "its cycle's beginning cannot "
				       "be found", false);
			if (err < 0)
				goto out;
			if (err > 0) {
				repaired = true;
				continue;
			}
			no_beginning(f, &s, &cur);
			f->unusable = true;
			goto out;
		}
		if (s.start >= 0 && (unsigned)s.start + 1 < cur.logcount &&
		    (err = log_head(f, &cur, "an older block of its own "
				    "chain: the chain from it is shorter "
				    "than the count", true))) {
			if (err < 0)
				goto out;
			repaired = true;
			continue;
		}
		err = check_logcount(f, &s, &cur);
		if (err == -1) {
			err = 0;
			f->unusable = true;
			goto out;
		}
		if (err < 0)
			goto out;
		if (err > 0) {
			repaired = true;
			continue;
		}
		err = open_volume(f, &cur, repaired, salvage);
		if (!err && (f->salvage & FSCK_SALVAGE_REFMAP) &&
		    (err = fsck_bitmap_from_refs(f->vol))) {
			tux3_close(f->vol);	/* out of memory, or I/O */
			f->vol = NULL;
			goto out;
		}
		if (!err && fsck_repairing(f))
			balloc_release_reserve(f->vol);
		if (!err)
			break;
		f->vol = NULL;
		if (!fsck_open_damage(err))
			goto out;
		err = round < 7 ? open_failed(f, &s, &cur, &salvage) : 0;
		f->msg[0] = 0;
		if (err > 0 && f->remake) {
			/* a new volume: its own superblock from now on */
			if ((err = remake_volume(f)))
				goto out;
			repaired = false;
			continue;
		}
		if (err > 0) {
			repaired = true;
			continue;
		}
		if (err == 0)
			f->unusable = true;
		goto out;
	}
	if (!f->vol) {
		f->unusable = true;
		goto out;
	}
	struct tux3_super_info si;
	tux3_super_info(f->vol, &si);
	fsck_info(f, "log: %u block%s replayed, %" PRIu64 " blocks free",
		  si.logcount, si.logcount == 1 ? "" : "s", si.freeblocks);
	struct tux3_walk_ops wops = { .error = log_error };
	err = tux3_walk_log(f->vol, &wops, f);
	if (err < 0 && err != -EUCLEAN && err != -ECANCELED)
		goto out;
	err = 0;
	if (fsck_repairing(f) && (err = repair_begin_write(f->vol)))
		goto out;
	if (repaired)
		repair_keep_log_fields(f->vol);
	apply_extension(f);
	apply_hints(f);
out:
	if (f->ext_rewrite) {
		f->ext_rewrite = false;
		f->res->unfixed++;
	}
	if (f->hints_rewrite) {
		f->hints_rewrite = false;
		f->res->unfixed++;
	}
	if (!f->vol && f->res->fixed > fixed_before) {
		/* the log repairs were to be written by the final commit,
		 * which a volume that still does not open never reaches:
		 * nothing was repaired */
		unsigned undone = f->res->fixed - fixed_before;
		f->res->fixed -= undone;
		f->res->unfixed += undone;
		if (!f->res->fixed)
			f->res->modified = 0;
	}
	scan_free(&s);
	return err;
}

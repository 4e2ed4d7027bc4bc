/*
 * Log replay, as the reference mount does it, in memory only:
 *  load    follow logchain back logcount blocks, check every block and
 *          record, find the latest UNIFY (records before it are already in
 *          the on-disk bnodes and bitmap);
 *  stage 1 (physical) rebuild dirty bnode images in the overlay, and take
 *          freeblocks from FREEBLOCKS;
 *  stage 2 (logical) apply allocation records to the bitmap, collect the
 *          orphan records, then mark every log block of the chain in use.
 * Records are promises against exact block images, so each is applied
 * once, in order.  Nothing is written to the device.
 *
 * Salvage mode (replay_salvage_mode; fsck's repair of a log that neither
 * replays nor can be cut back, never an ordinary open): a damaged block
 * is read up to its first record that does not validate (its header
 * and CRC are not trusted, but every record is checked as usual), the
 * chain is followed as far as its links can be, and a record that does
 * not apply (a bnode without the key, a redirect of a block that is not
 * a bnode, ...) is undone and skipped.  The blocks such records would
 * have changed keep their older, valid contents (nothing is overwritten
 * before a unify), and fsck's later passes repair what the lost records
 * leave inconsistent.  The one replay path serves both: the mode only
 * turns errors into notes in vol->salvage.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "core.h"

#define LOGERR(vol, lb, off, ...) \
	vol_error(vol, -EUCLEAN, (lb)->blocknr, TUX3_NONE, off, __VA_ARGS__)

static int check_record_blocks(struct tux3_volume *vol, struct logblk *lb,
			       const struct logrec *rec)
{
	uint64_t blocks[4];
	uint32_t count;
	unsigned n = log_record_blocks(rec, blocks, &count);
	char text[160];

	/* Leaves and bnodes never live in the reserved area; only the
	 * BALLOC family may name it (mkfs logs the reserved blocks).  Block
	 * 0 would otherwise reach overlay_put(), where it marks an empty
	 * slot, and fail with a bare -EINVAL that names no block. */
	bool tree_block = rec->code >= LOG_LEAF_REDIRECT &&
			  rec->code <= LOG_BNODE_FREE;

	for (unsigned i = 0; i < n; i++) {
		uint32_t len = i == 0 ? count : 1;
		if (!len || !vol_extent_valid(vol, blocks[i], len)) {
			log_format_record(rec, text, sizeof(text));
			return LOGERR(vol, lb, rec->offset, "log record %s: "
				      "block range outside the volume (%"
				      PRIu64 " blocks)", text, vol->volblocks);
		}
		if (tree_block && blocks[i] < vol->reserved_blocks) {
			log_format_record(rec, text, sizeof(text));
			return LOGERR(vol, lb, rec->offset, "log record %s: "
				      "block %" PRIu64 " is in the reserved "
				      "area", text, blocks[i]);
		}
	}
	switch (rec->code) {
	/* A bnode moved, split or merged onto itself is not a promise any
	 * writer makes; stage 1 would memcpy an image over itself
	 * (overlapping ranges for SPLIT) or drop the merged result. */
	case LOG_BNODE_REDIRECT:
		if (rec->oldb == rec->newb)
			return LOGERR(vol, lb, rec->offset, "log record "
				      "BNODE_REDIRECT: old and new are both "
				      "block %" PRIu64, rec->oldb);
		break;
	case LOG_BNODE_SPLIT: case LOG_BNODE_MERGE:
		if (rec->src == rec->dst)
			return LOGERR(vol, lb, rec->offset, "log record %s: "
				      "source and destination are both block %"
				      PRIu64, log_code_name(rec->code),
				      rec->src);
		break;
	case LOG_BNODE_ROOT:
		if (rec->count != 1 && rec->count != 2)
			return LOGERR(vol, lb, rec->offset, "log record "
				      "BNODE_ROOT: count %u is not 1 or 2",
				      rec->count);
		break;
	case LOG_BNODE_DEL:
		if (!rec->count)
			return LOGERR(vol, lb, rec->offset, "log record "
				      "BNODE_DEL: count 0");
		break;
	case LOG_ORPHAN_ADD: case LOG_ORPHAN_DEL:
		if (!rec->inum)
			return LOGERR(vol, lb, rec->offset, "log record %s: "
				      "inode 0", log_code_name(rec->code));
		break;
	case LOG_FREEBLOCKS:
		if (rec->freeblocks > vol->volblocks)
			return LOGERR(vol, lb, rec->offset, "log record "
				      "FREEBLOCKS %" PRIu64 " exceeds the "
				      "volume", rec->freeblocks);
		break;
	}
	return 0;
}

/* Salvage: the error just met is noted (the first of its kind kept for
 * the report) and forgotten, so that the replay goes on. */
static void salvage_note(struct tux3_volume *vol, struct tux3_error *first)
{
	if (!first->err)
		*first = vol->error;
	tux3_clear_error(vol);
}

/* Records in a row that validate from a new start: enough to trust it
 * when the payload's end is not reached first (more damage further on
 * is stepped over in its turn). */
#define RESYNC_RUN 8

/* Salvage: do the records from off on decode and validate, ending at
 * end exactly or RESYNC_RUN of them in a row?  (From a wrong start they
 * rarely do: the high bytes of block numbers are zero, which is no
 * record code.) */
static bool records_valid(struct tux3_volume *vol, struct logblk *lb,
			  unsigned off, unsigned end)
{
	struct logrec rec;
	for (unsigned n = 0; off < end && n < RESYNC_RUN; n++) {
		unsigned size = log_decode_record(lb->data, off, end, &rec);
		if (!size)
			return false;
		if (check_record_blocks(vol, lb, &rec)) {
			tux3_clear_error(vol);
			return false;
		}
		off += size;
	}
	return true;
}

/* How far past damage at off the records are looked for again. */
#define RESYNC_WINDOW 256

/* Salvage: the record at off of chronological block index does not
 * validate.  The records after it are found again when, from some
 * offset a little further on, the records validate (up to the payload's
 * end, or RESYNC_RUN of them); the bytes between are left out (a gap
 * that replay steps over).  Else the block is read only up to off.
 * Returns where to go on in *next. */
static int salvage_damage(struct tux3_volume *vol, struct logblk *lb,
			  unsigned index, unsigned off, unsigned end,
			  unsigned *next)
{
	struct replay_salvage *sv = &vol->salvage;
	salvage_note(vol, &sv->first_cut);
	unsigned r = off + 1;
	while (r < end && r <= off + RESYNC_WINDOW &&
	       !records_valid(vol, lb, r, end))
		r++;
	if (r >= end || r > off + RESYNC_WINDOW) {
		sv->cut_bytes += end - off;
		lb->head.bytes = off - LOG_HEADER_SIZE;
		*next = off;
		return 0;
	}
	if (sv->ngaps == sv->gapcap) {
		unsigned ncap = sv->gapcap ? sv->gapcap * 2 : 8;
		void *n = realloc(sv->gaps, ncap * sizeof(*sv->gaps));
		if (!n)
			return -ENOMEM;
		sv->gaps = n;
		sv->gapcap = ncap;
	}
	sv->gaps[sv->ngaps].index = index;
	sv->gaps[sv->ngaps].from = off;
	sv->gaps[sv->ngaps].to = r;
	sv->ngaps++;
	sv->cut_bytes += r - off;
	*next = r;
	return 0;
}

/* Salvage: where the records go on after offset off of block index
 * (off itself unless a gap begins there). */
static unsigned salvage_step_over(const struct tux3_volume *vol,
				  unsigned index, unsigned off)
{
	const struct replay_salvage *sv = &vol->salvage;
	for (unsigned g = 0; g < sv->ngaps; g++)
		if (sv->gaps[g].index == index && sv->gaps[g].from == off)
			return sv->gaps[g].to;
	return off;
}

/* Check one log block's header and every record in it.  In salvage mode
 * a damaged header leaves the payload to be bounded by the records that
 * validate (*bad_head says so), and damage within the payload is
 * stepped over when the records after it can be found again, else the
 * block is cut there. */
static int check_logblock(struct tux3_volume *vol, struct logblk *lb,
			  unsigned index, bool *bad_head)
{
	char why[128];
	struct logrec rec;
	bool salvage = vol->salvage.on, damaged = false;

	*bad_head = false;
	if (log_decode_head(lb->data, vol->blocksize, &lb->head, why,
			    sizeof(why))) {
		int err = LOGERR(vol, lb, 0, "log block %u of %u: %s",
				 index + 1, vol->logcount, why);
		if (!salvage)
			return err;
		*bad_head = damaged = true;
		if (lb->head.bytes + LOG_HEADER_SIZE > vol->blocksize)
			lb->head.bytes = vol->blocksize - LOG_HEADER_SIZE;
		salvage_note(vol, &vol->salvage.first_cut);
	}
	unsigned end = LOG_HEADER_SIZE + lb->head.bytes;
	for (unsigned off = LOG_HEADER_SIZE; off < end;) {
		unsigned size = log_decode_record(lb->data, off, end, &rec);
		int err = 0;
		if (!size && !log_record_size(rec.code))
			err = LOGERR(vol, lb, off, "invalid log code 0x%02x "
				     "at offset %u", rec.code, off);
		else if (!size)
			err = LOGERR(vol, lb, off, "log record %s at offset %u "
				     "runs past the payload end %u",
				     log_code_name(rec.code), off, end);
		else
			err = check_record_blocks(vol, lb, &rec);
		if (err && !salvage)
			return err;
		if (err && *bad_head) {
			/* a bad header's payload ends at its first invalid
			 * record: zero padding is no more damage */
			if (lb->data[off])
				vol->salvage.cut_bytes += end - off;
			salvage_note(vol, &vol->salvage.first_cut);
			lb->head.bytes = off - LOG_HEADER_SIZE;
			break;
		}
		if (err) {
			damaged = true;
			if ((err = salvage_damage(vol, lb, index, off, end,
						  &off)))
				return err;
			end = LOG_HEADER_SIZE + lb->head.bytes;
			continue;
		}
		if (rec.code == LOG_UNIFY && vol->unify_index < 0) {
			vol->unify_index = (int)index;
			vol->unify_offset = off;
		}
		off += size;
	}
	vol->salvage.cut += damaged;
	return 0;
}

/* Does the block's payload hold a UNIFY record (as far as it decodes)? */
static bool holds_unify(const uint8_t *data, const struct loghead *head)
{
	struct logrec rec;
	unsigned end = LOG_HEADER_SIZE + head->bytes, size;
	for (unsigned off = LOG_HEADER_SIZE; off < end; off += size) {
		if (!(size = log_decode_record(data, off, end, &rec)))
			break;
		if (rec.code == LOG_UNIFY)
			return true;
	}
	return false;
}

/*
 * A block whose header reads but whose link leads back into the chain:
 * to itself, or to a block the walk from the newest has passed.  No log
 * block of the chain does that, each links to an older one, except the
 * cycle's oldest when it begins the cycle with a unify mark: its link
 * points into the retired cycle, whose blocks a newer log block may
 * reuse.  (The oldest without the mark is mkfs's, linking to 0.)  It is
 * a copy of a newer log block,
 * written where this one was (a misdirected write), and replaying its
 * records would apply them twice.  So is a block linking to none (as
 * mkfs's) with older blocks before it by the count, when another block
 * holds the same bytes (log_block_twin): its records are mkfs's, which
 * replayed again would make the first tree anew.  Salvage mode drops
 * its records and does not trust its link (*bad_head).
 */
static int copied_logblock(struct tux3_volume *vol, struct logblk *lb,
			   unsigned index, const struct blockset *seen,
			   bool *bad_head)
{
	struct loghead head;
	char why[128];
	uint64_t twin;
	int err;
	*bad_head = false;
	if (log_decode_head(lb->data, vol->blocksize, &head, why, sizeof(why)))
		return 0;
	if (blockset_has(&vol->salvage.copies, lb->blocknr)) {
		/* salvage_find_copies: a copy of an older block */
		err = LOGERR(vol, lb, 8, "log block %u of %u holds the bytes "
			     "of another log block, whose link skips the "
			     "blocks between: it holds a copy", index + 1,
			     vol->logcount);
	} else if (!head.logchain && index) {
		/* mkfs's block, with older ones before it by the count */
		if ((err = log_block_twin(vol, lb->blocknr, lb->data,
					  &twin)) <= 0)
			return err;
		err = LOGERR(vol, lb, 8, "log block %u of %u holds the bytes "
			     "of block %" PRIu64 " (a first log block, linking "
			     "to none): it holds a copy of another log block",
			     index + 1, vol->logcount, twin);
	} else if (head.logchain == lb->blocknr ||
		   (blockset_has(seen, head.logchain) &&
		    (index || !holds_unify(lb->data, &head)))) {
		err = LOGERR(vol, lb, 8, "log block %u of %u links back to "
			     "block %" PRIu64 ", newer in the chain: it holds "
			     "a copy of another log block", index + 1,
			     vol->logcount, head.logchain);
	} else {
		return 0;
	}
	if (!vol->salvage.on)
		return err;
	salvage_note(vol, &vol->salvage.first_cut);
	vol->salvage.cut++;
	vol->salvage.cut_bytes += head.bytes;
	lb->head = head;
	lb->head.bytes = 0;
	*bad_head = true;
	return 0;
}

/* The largest volume looked through for a log block's twin. */
#define TWIN_MAX_BLOCKS (1ULL << 22)

struct twin_key {
	uint8_t head[16];	/* a log block's first bytes: magic, count,
				 * link */
	unsigned k;
};

static int by_head(const void *a, const void *b)
{
	return memcmp(((const struct twin_key *)a)->head,
		      ((const struct twin_key *)b)->head, 16);
}

/*
 * Which of the n log blocks blocks[k] (bytes data[k]) another block of
 * the volume holds byte for byte: a log block is written once, in one
 * place, so of two alike one is a copy (a misdirected write), and the
 * chain's block is the copy when its twin is the original that the
 * chain, misled by the copy's link, no longer reaches.  One pass over
 * the volume, its blocks' first 16 bytes looked up among the n.
 * twin[k] (TUX3_NONE: none) for each; returns how many have one, 0
 * when the volume is too large to look through, <0.
 */
int log_blocks_twins(struct tux3_volume *vol, const uint64_t *blocks,
		     uint8_t *const *data, unsigned n, uint64_t *twin)
{
	for (unsigned k = 0; k < n; k++)
		twin[k] = TUX3_NONE;
	if (!n || vol->volblocks > TWIN_MAX_BLOCKS)
		return 0;
	struct twin_key *keys = malloc(n * sizeof(*keys)), probe;
	uint8_t *buf = malloc(vol->blocksize);
	int found = 0;
	if (!keys || !buf) {
		free(keys);
		free(buf);
		return -ENOMEM;
	}
	for (unsigned k = 0; k < n; k++) {
		memcpy(keys[k].head, data[k], 16);
		keys[k].k = k;
	}
	qsort(keys, n, sizeof(*keys), by_head);
	for (uint64_t b = vol->reserved_blocks; b < vol->volblocks; b++) {
		if (dev_pread(&vol->dev, probe.head, 16, b << vol->blockbits))
			continue;
		struct twin_key *hit = bsearch(&probe, keys, n, sizeof(*keys),
					       by_head);
		if (!hit)
			continue;
		/* the first of a run of equal heads, then each of them */
		while (hit > keys && !by_head(hit - 1, &probe))
			hit--;
		bool read = false;
		for (; hit < keys + n && !by_head(hit, &probe); hit++) {
			unsigned k = hit->k;
			if (b == blocks[k] || twin[k] != TUX3_NONE)
				continue;
			if (!read && dev_pread(&vol->dev, buf, vol->blocksize,
					       b << vol->blockbits))
				break;
			read = true;
			if (!memcmp(buf, data[k], vol->blocksize)) {
				twin[k] = b;
				found++;
			}
		}
	}
	free(keys);
	free(buf);
	return found;
}

int log_block_twin(struct tux3_volume *vol, uint64_t block,
		   const uint8_t *data, uint64_t *twin)
{
	uint8_t *d = (uint8_t *)data;
	return log_blocks_twins(vol, &block, &d, 1, twin);
}

/* The most chain blocks salvage_find_copies holds to compare. */
#define COPIES_MAX_BLOCKS 4096

/*
 * Salvage, before the load: follow the chain from the superblock's head
 * as far as headers read.  When it begins the cycle (mkfs's block, or
 * a unify mark) in fewer blocks than the count, one of them may be a
 * copy of an older log block, whose link skipped the blocks between
 * (its twin, the original, among them): such blocks go to
 * salvage.copies, and the load drops their records and looks for the
 * block that continues the chain instead of their link.
 */
static int salvage_find_copies(struct tux3_volume *vol)
{
	uint32_t logcount = vol->super.logcount;
	uint64_t chain = vol->super.logchain;
	unsigned n = 0, cap = logcount < COPIES_MAX_BLOCKS ? logcount :
			     COPIES_MAX_BLOCKS;
	uint64_t *blocks = calloc(cap + 1, sizeof(*blocks));
	uint64_t *twin = calloc(cap + 1, sizeof(*twin));
	uint8_t **data = calloc(cap + 1, sizeof(*data));
	bool begins = false;
	int err = blocks && twin && data ? 0 : -ENOMEM;
	while (!err && n < cap && chain >= vol->reserved_blocks &&
	       chain < vol->volblocks) {
		struct loghead head;
		char why[128];
		bool loop = false;
		for (unsigned k = 0; k < n && !loop; k++)
			loop = blocks[k] == chain;
		if (loop || !(data[n] = malloc(vol->blocksize)))
			break;
		blocks[n] = chain;
		if (dev_pread(&vol->dev, data[n], vol->blocksize,
			      chain << vol->blockbits) ||
		    log_decode_head(data[n], vol->blocksize, &head, why,
				    sizeof(why)))
			break;
		n++;
		if (!head.logchain || holds_unify(data[n - 1], &head)) {
			begins = true;
			break;
		}
		chain = head.logchain;
	}
	if (!err && begins && n < logcount &&
	    (err = log_blocks_twins(vol, blocks, data, n, twin)) > 0) {
		err = 0;
		for (unsigned k = 0; k < n && !err; k++)
			if (twin[k] != TUX3_NONE &&
			    blockset_add(&vol->salvage.copies, blocks[k]) < 0)
				err = -ENOMEM;
	}
	for (unsigned k = 0; data && k <= n && k <= cap; k++)
		free(data[k]);
	free(blocks);
	free(twin);
	free(data);
	return err < 0 ? err : 0;
}

/* Salvage: the chain could not be followed past chronological block
 * stop (not loaded): the blocks after it are the log, renumbered from
 * 0.  The error that stopped it is kept as damage. */
static void salvage_keep_newer(struct tux3_volume *vol, unsigned stop)
{
	unsigned kept = vol->logcount - stop - 1;
	vol->salvage.lost += stop + 1;
	salvage_note(vol, &vol->salvage.first_cut);
	free(vol->log[stop].data);
	memmove(vol->log, vol->log + stop + 1, kept * sizeof(*vol->log));
	memset(vol->log + kept, 0, (stop + 1) * sizeof(*vol->log));
	vol->logcount = kept;
	vol->unify_index = vol->unify_index > (int)stop ?
			   vol->unify_index - (int)stop - 1 : -1;
	/* the gaps found in the blocks kept, renumbered with them */
	struct replay_salvage *sv = &vol->salvage;
	unsigned n = 0;
	for (unsigned g = 0; g < sv->ngaps; g++)
		if (sv->gaps[g].index > stop) {
			sv->gaps[n] = sv->gaps[g];
			sv->gaps[n++].index -= stop + 1;
		}
	sv->ngaps = n;
}

/* Salvage: does chronological block 'need - 1' on, read from block b,
 * make a chain of exactly need log blocks (valid headers, none already
 * in seen) that begins the cycle: the last one is mkfs's (link 0), or a
 * UNIFY is among them? */
static bool salvage_chain_from(struct tux3_volume *vol,
			       const struct blockset *seen, uint64_t b,
			       uint32_t need, uint8_t *buf)
{
	struct blockset path = { 0 };
	bool ok = false, unify = false;
	for (uint32_t k = 0; k < need; k++) {
		struct loghead h;
		struct logrec rec;
		char why[128];
		if (b < vol->reserved_blocks || b >= vol->volblocks ||
		    blockset_has(seen, b) || blockset_add(&path, b) <= 0 ||
		    dev_pread(&vol->dev, buf, vol->blocksize,
			      b << vol->blockbits) ||
		    log_decode_head(buf, vol->blocksize, &h, why, sizeof(why)))
			break;
		unsigned end = LOG_HEADER_SIZE + h.bytes, size;
		for (unsigned off = LOG_HEADER_SIZE; off < end && !unify;
		     off += size) {
			if (!(size = log_decode_record(buf, off, end, &rec)))
				break;
			unify = rec.code == LOG_UNIFY;
		}
		if (k + 1 == need)
			ok = !h.logchain || unify;
		b = h.logchain;
	}
	blockset_free(&path);
	return ok;
}

/* The largest volume whose blocks salvage looks through for a lost
 * link of the log chain. */
#define BRIDGE_MAX_BLOCKS (1ULL << 22)

/* The most blocks that may continue a lost link that salvage weighs. */
#define BRIDGE_MAX_CANDIDATES 256

/*
 * Salvage: the link to chronological block need - 1 is lost (a damaged
 * header, or a link outside the volume or back into the chain).  Look
 * through the volume for the block that continues the chain: a log
 * block from which exactly the need blocks the superblock's logcount
 * leaves make a chain that begins the cycle.  More than one may: every
 * block of the older part, when the cycle's unify mark is in it and the
 * cycle before left blocks on the volume, and a stale chain down to
 * mkfs's block.  The block sought was linked to only by the lost link,
 * so of those that do, the one no log block on the volume links to.
 * 1 and *found when exactly one is left, 0 when none or several, <0.
 */
static int salvage_bridge(struct tux3_volume *vol, const struct blockset *seen,
			  uint32_t need, uint64_t *found)
{
	if (vol->volblocks > BRIDGE_MAX_BLOCKS)
		return 0;
	uint8_t *buf = malloc(vol->blocksize);
	uint64_t cand[BRIDGE_MAX_CANDIDATES];
	struct blockset linked = { 0 };
	unsigned n = 0;
	int err = 0;
	if (!buf)
		return -ENOMEM;
	for (uint64_t b = vol->reserved_blocks; b < vol->volblocks; b++) {
		struct loghead h;
		char why[128];
		/* the magic first: most blocks are no log block */
		if (dev_pread(&vol->dev, buf, 2, b << vol->blockbits) ||
		    be16(buf) != TUX3_MAGIC_LOG ||
		    dev_pread(&vol->dev, buf, vol->blocksize,
			      b << vol->blockbits) ||
		    log_decode_head(buf, vol->blocksize, &h, why, sizeof(why)))
			continue;
		/* a link outside the volume (damage) names no candidate */
		if (h.logchain >= vol->reserved_blocks &&
		    h.logchain < vol->volblocks &&
		    (err = blockset_add(&linked, h.logchain)) < 0)
			break;
		if (blockset_has(seen, b) ||
		    !salvage_chain_from(vol, seen, b, need, buf))
			continue;
		if (n == BRIDGE_MAX_CANDIDATES) {
			err = 0;
			n = 0;	/* too many to weigh: none taken */
			break;
		}
		cand[n++] = b;
	}
	unsigned heads = 0;
	for (unsigned i = 0; i < n && err >= 0; i++)
		if (!blockset_has(&linked, cand[i])) {
			*found = cand[i];
			heads++;
		}
	free(buf);
	blockset_free(&linked);
	return err < 0 ? err : heads == 1;
}

/* Salvage: is the chain broken at link 'chain' to chronological block
 * need - 1, read after a block whose header was damaged (bad_head) or
 * whose CRC failed (crc_bad)?  <0 when memory runs out. */
static int salvage_link_lost(struct tux3_volume *vol,
			     const struct blockset *seen, uint64_t chain,
			     uint32_t need, bool bad_head, bool crc_bad)
{
	uint8_t head[2];
	if (chain < vol->reserved_blocks || chain >= vol->volblocks ||
	    blockset_has(seen, chain))
		return 1;
	/* a chain of one block proves too little to look elsewhere: a
	 * stale block holding a unify mark would do (then the link is
	 * followed, as it always was) */
	if (!bad_head && (!crc_bad || need < 2))
		return 0;
	/* a damaged header's link is trusted only to another log block */
	if (dev_pread(&vol->dev, head, 2, chain << vol->blockbits) ||
	    be16(head) != TUX3_MAGIC_LOG)
		return 1;
	if (need < 2)
		return 0;
	/* and only if the rest of the count makes a chain from it that
	 * begins the cycle: a changed link may name a stale log block */
	uint8_t *buf = malloc(vol->blocksize);
	if (!buf)
		return -ENOMEM;
	bool ok = salvage_chain_from(vol, seen, chain, need, buf);
	free(buf);
	return !ok;
}

int replay_load_log(struct tux3_volume *vol)
{
	uint32_t logcount = vol->super.logcount;
	uint64_t chain = vol->super.logchain;
	struct blockset seen = { 0 };
	int err = 0;

	vol->unify_index = -1;
	vol->logcount = logcount;
	if (!logcount)
		return 0;
	if (vol->salvage.on && (err = salvage_find_copies(vol)))
		return err;
	/* LOG_CRC: the newest 'verify' blocks carry our CRC (sealed only) */
	uint32_t verify = log_crc_trusted(vol);
	bool newer_bad_head = false, bridged = false, copy_link = false;
	bool newer_crc_bad = false;	/* its link is as suspect */
	uint32_t at = logcount;		/* the block being loaded */
	vol->log = calloc(logcount, sizeof(*vol->log));
	if (!vol->log)
		return -ENOMEM;
	/* newest first: the chain runs backwards in time */
	for (uint32_t i = logcount; i-- > 0;) {
		struct logblk *lb = &vol->log[i];
		uint64_t from = i + 1 < logcount ? vol->log[i + 1].blocknr :
			        TUX3_NONE;
		at = i;
		/* salvage: a lost link is looked for once */
		int lost = vol->salvage.on && !bridged && !copy_link ?
			   salvage_link_lost(vol, &seen, chain, i + 1,
					     newer_bad_head, newer_crc_bad) : 0;
		if (lost < 0) {
			err = lost;
			break;
		}
		if (vol->salvage.on && !bridged && (copy_link || lost)) {
			bridged = true;
			err = salvage_bridge(vol, &seen, i + 1, &chain);
			if (err < 0)
				break;
			if (err) {
				vol->salvage.bridged = chain;
				newer_bad_head = newer_crc_bad = false;
			}
			err = 0;
		}
		if (chain < vol->reserved_blocks || chain >= vol->volblocks) {
			err = vol_error(vol, -EUCLEAN, from, TUX3_NONE, 8,
					"log chain: %u of %u blocks read, then "
					"link to block %" PRIu64 " outside the "
					"volume", logcount - 1 - i, logcount,
					chain);
			break;
		}
		err = blockset_add(&seen, chain);
		if (err <= 0) {
			if (!err)
				err = vol_error(vol, -EUCLEAN, from, TUX3_NONE,
						8, "log chain loops back to "
						"block %" PRIu64 " after %u of "
						"%u blocks", chain,
						logcount - 1 - i, logcount);
			break;
		}
		lb->blocknr = chain;
		lb->data = malloc(vol->blocksize);
		if (!lb->data) {
			err = -ENOMEM;
			break;
		}
		err = dev_pread(&vol->dev, lb->data, vol->blocksize,
				chain << vol->blockbits);
		if (err) {
			err = vol_error(vol, err, chain, TUX3_NONE, TUX3_NONE,
					"cannot read log block");
			break;
		}
		/* (a bad magic is reported as such by check_logblock) */
		bool crc_bad = false;
		if (i >= logcount - verify &&
		    be16(lb->data) == TUX3_MAGIC_LOG) {
			uint32_t want = be32(lb->data + LOG_CRC_OFFSET);
			uint32_t got = log_block_crc(lb->data, vol->blocksize,
						     chain);
			if (want != got) {
				err = vol_error(vol, -EUCLEAN, chain,
						TUX3_NONE, LOG_CRC_OFFSET,
						"log block CRC32C 0x%08x does "
						"not match the stored 0x%08x "
						"(a torn, stale or damaged "
						"write)", got, want);
				if (!vol->salvage.on)
					break;
				/* its records are checked one by one */
				salvage_note(vol, &vol->salvage.first_cut);
				crc_bad = true;
				err = 0;
			}
		}
		/* the latest UNIFY is in the newest block holding one */
		bool bad_head;
		unsigned cut = vol->salvage.cut;
		err = copied_logblock(vol, lb, i, &seen, &bad_head);
		if (!err && !bad_head)
			err = check_logblock(vol, lb, i, &bad_head);
		if (err)
			break;
		if (crc_bad && cut == vol->salvage.cut)
			vol->salvage.cut++;	/* all its records validate */
		/* salvage: the link of a damaged header is followed once;
		 * a second damaged header in a row is no log block */
		if (bad_head && newer_bad_head) {
			err = LOGERR(vol, lb, 0, "a second damaged log block "
				     "header in a row: not followed further");
			break;
		}
		newer_bad_head = bad_head;
		newer_crc_bad = crc_bad;
		/* a copy's link skips blocks: the one that continues the
		 * chain is looked for instead */
		copy_link = blockset_has(&vol->salvage.copies, lb->blocknr);
		chain = lb->head.logchain;
	}
	blockset_free(&seen);
	if (err && err != -ENOMEM && vol->salvage.on) {
		/* the blocks before this one cannot be reached */
		salvage_keep_newer(vol, at);
		err = 0;
	}
	return err;
}

/* Start offset of block i for replay, or 0 if it is before the unify. */
static unsigned replay_start(struct tux3_volume *vol, unsigned i)
{
	if (vol->unify_index >= 0 && (int)i < vol->unify_index)
		return 0;
	if ((int)i == vol->unify_index)
		return vol->unify_offset;
	return LOG_HEADER_SIZE;
}

/* The bnode image a record applies to: the overlay's, else the disk's. */
static int bnode_get(struct tux3_volume *vol, struct logblk *lb,
		     const struct logrec *rec, uint64_t block, bool fresh,
		     uint8_t **data)
{
	bool dropped;
	uint8_t *d = overlay_edit(&vol->overlay, block, &dropped);
	int err;

	if (d && !fresh) {
		*data = d;
		return 0;
	}
	err = overlay_put(&vol->overlay, block, vol->blocksize, &d);
	if (err)
		return err;
	/* an image a record changes is written at the next unify; the
	 * source of a redirect is not (it is freed after that unify) */
	if (rec->code != LOG_BNODE_REDIRECT)
		overlay_set_flags(&vol->overlay, block, OV_UNIFY_DIRTY);
	if (fresh) {
		memset(d, 0, vol->blocksize);
		put_be16(d, TUX3_MAGIC_BNODE);
	} else {
		err = dev_pread(&vol->dev, d, vol->blocksize,
				block << vol->blockbits);
		if (err)
			return vol_error(vol, err, block, TUX3_NONE, TUX3_NONE,
					 "cannot read bnode");
	}
	unsigned count = bnode_count(d);
	/* a bnode read from disk has at least one entry (only a fresh
	 * BNODE_ROOT/SPLIT image starts empty) */
	if (be16(d) != TUX3_MAGIC_BNODE ||
	    count > bnode_capacity(vol->blocksize) || (!fresh && !count))
		return LOGERR(vol, lb, rec->offset, "log record %s names block "
			      "%" PRIu64 ", which is not a valid bnode (magic "
			      "0x%04x, count %u)", log_code_name(rec->code),
			      block, be16(d), count);
	*data = d;
	return 0;
}

/* An edit that the record promised would fit did not: the log was not
 * written against this image. */
static int edit_failed(struct tux3_volume *vol, struct logblk *lb,
		       const struct logrec *r, uint64_t block, int err)
{
	char text[160];
	const char *why = err == -ENOENT ? "has no entry with the key" :
			  err == -EEXIST ? "already has an entry with the key" :
			  err == -ENOSPC ? "has no room for the entries" :
			  "does not have the entries the record names";
	log_format_record(r, text, sizeof(text));
	return LOGERR(vol, lb, r->offset, "log record %s: bnode %" PRIu64
		      " %s", text, block, why);
}

static int stage1_record(struct tux3_volume *vol, struct logblk *lb,
			 const struct logrec *r)
{
	unsigned bs = vol->blocksize;
	uint8_t *b, *d;
	int err = 0;

	switch (r->code) {
	case LOG_BNODE_REDIRECT:
		if ((err = bnode_get(vol, lb, r, r->oldb, false, &b)))
			return err;
		if ((err = overlay_put(&vol->overlay, r->newb, bs, &d)))
			return err;
		overlay_set_flags(&vol->overlay, r->newb, OV_UNIFY_DIRTY);
		b = overlay_edit(&vol->overlay, r->oldb, NULL);
		memcpy(d, b, bs);
		return 0;
	case LOG_BNODE_ROOT:
		if ((err = bnode_get(vol, lb, r, r->root, true, &b)))
			return err;
		err = bnode_init_root(b, bs, r->count, r->left, r->right,
				      r->rkey);
		return err ? edit_failed(vol, lb, r, r->root, err) : 0;
	case LOG_BNODE_SPLIT:
		if ((err = bnode_get(vol, lb, r, r->src, false, &b)) ||
		    (err = bnode_get(vol, lb, r, r->dst, true, &d)))
			return err;
		b = overlay_edit(&vol->overlay, r->src, NULL);
		err = bnode_split(b, r->pos, d, bs);
		return err ? edit_failed(vol, lb, r, r->src, err) : 0;
	case LOG_BNODE_ADD:
		if ((err = bnode_get(vol, lb, r, r->parent, false, &b)))
			return err;
		err = bnode_add(b, bs, r->key, r->child);
		return err ? edit_failed(vol, lb, r, r->parent, err) : 0;
	case LOG_BNODE_UPDATE:
		if ((err = bnode_get(vol, lb, r, r->parent, false, &b)))
			return err;
		err = bnode_update(b, r->key, r->child);
		/* salvage: a damaged key of entry 0, which lookups never
		 * read, does not cost the update (and is made good) */
		if (err == -ENOENT && vol->salvage.on)
			err = bnode_update_first(b, r->key, r->child);
		return err ? edit_failed(vol, lb, r, r->parent, err) : 0;
	case LOG_BNODE_MERGE:
		if ((err = bnode_get(vol, lb, r, r->src, false, &b)) ||
		    (err = bnode_get(vol, lb, r, r->dst, false, &d)))
			return err;
		b = overlay_edit(&vol->overlay, r->src, NULL);
		err = bnode_merge(d, b, bs);
		return err ? edit_failed(vol, lb, r, r->dst, err) : 0;
	case LOG_BNODE_DEL:
		if ((err = bnode_get(vol, lb, r, r->block, false, &b)))
			return err;
		err = bnode_del(b, r->key, r->count);
		return err ? edit_failed(vol, lb, r, r->block, err) : 0;
	case LOG_BNODE_ADJUST:
		if ((err = bnode_get(vol, lb, r, r->block, false, &b)))
			return err;
		err = bnode_adjust(b, r->from, r->to);
		return err ? edit_failed(vol, lb, r, r->block, err) : 0;
	case LOG_BNODE_FREE:
		overlay_drop(&vol->overlay, r->block);
		return 0;
	case LOG_FREEBLOCKS:
		vol->freeblocks = r->freeblocks;
		return 0;
	}
	return 0;
}

static int stage2_record(struct tux3_volume *vol, struct logblk *lb,
			 const struct logrec *r);

/* The images a record's stage 1 may change, as they were before it:
 * salvage mode puts them back when the record does not apply. */
struct undo {
	unsigned n;
	struct { uint64_t block; uint8_t *data; unsigned flags;
		 bool present, dropped; } b[4];
};

static int undo_save(struct tux3_volume *vol, const struct logrec *r,
		     struct undo *u)
{
	uint64_t blocks[4];
	uint32_t count;
	memset(u, 0, sizeof(*u));
	if (r->code < LOG_BNODE_REDIRECT || r->code > LOG_BNODE_ADJUST)
		return 0;
	u->n = log_record_blocks(r, blocks, &count);
	for (unsigned k = 0; k < u->n; k++) {
		bool dropped;
		uint8_t *d = overlay_edit(&vol->overlay, blocks[k], &dropped);
		u->b[k].block = blocks[k];
		u->b[k].present = d || dropped;
		u->b[k].dropped = dropped;
		u->b[k].flags = overlay_flags(&vol->overlay, blocks[k]);
		if (d && !(u->b[k].data = malloc(vol->blocksize)))
			return -ENOMEM;
		if (d)
			memcpy(u->b[k].data, d, vol->blocksize);
	}
	return 0;
}

static void undo_free(struct undo *u)
{
	for (unsigned k = 0; k < u->n; k++)
		free(u->b[k].data);
}

/* Put the saved images back, newest change first (a record naming one
 * block twice restores the oldest image last). */
static int undo_apply(struct tux3_volume *vol, struct undo *u)
{
	for (unsigned k = u->n; k-- > 0;) {
		uint64_t block = u->b[k].block;
		uint8_t *d;
		if (!u->b[k].present) {
			overlay_forget(&vol->overlay, block);
		} else if (u->b[k].dropped) {
			overlay_drop(&vol->overlay, block);
		} else {
			int err = overlay_put(&vol->overlay, block,
					      vol->blocksize, &d);
			if (err)
				return err;
			memcpy(d, u->b[k].data, vol->blocksize);
			overlay_set_flags(&vol->overlay, block, u->b[k].flags);
		}
	}
	return 0;
}

/* Salvage: remember that the record at (index, offset) was skipped by
 * stage 1, so that stage 2 skips it too. */
static int salvage_skip(struct tux3_volume *vol, unsigned index,
			unsigned offset)
{
	struct replay_salvage *sv = &vol->salvage;
	sv->skipped++;
	salvage_note(vol, &sv->first_skip);
	if (sv->nskips == sv->cap) {
		unsigned ncap = sv->cap ? sv->cap * 2 : 16;
		void *n = realloc(sv->skips, ncap * sizeof(*sv->skips));
		if (!n)
			return -ENOMEM;
		sv->skips = n;
		sv->cap = ncap;
	}
	sv->skips[sv->nskips].index = index;
	sv->skips[sv->nskips].offset = offset;
	sv->nskips++;
	return 0;
}

/* Salvage, stage 2: was this record skipped by stage 1?  (Both stages
 * walk the records in the same order.) */
static bool salvage_skipped(struct tux3_volume *vol, unsigned index,
			    unsigned offset)
{
	struct replay_salvage *sv = &vol->salvage;
	if (sv->next < sv->nskips && sv->skips[sv->next].index == index &&
	    sv->skips[sv->next].offset == offset) {
		sv->next++;
		return true;
	}
	return false;
}

/* One record of stage 1; in salvage mode, one that does not apply is
 * undone and skipped. */
static int stage1_apply(struct tux3_volume *vol, unsigned index,
			const struct logrec *r)
{
	struct logblk *lb = &vol->log[index];
	struct undo u;
	if (!vol->salvage.on)
		return stage1_record(vol, lb, r);
	int err = undo_save(vol, r, &u);
	if (!err)
		err = stage1_record(vol, lb, r);
	if (err && err != -ENOMEM) {
		err = undo_apply(vol, &u);
		if (!err)
			err = salvage_skip(vol, index, r->offset);
	}
	undo_free(&u);
	return err;
}

/* One record of stage 2: in salvage mode, not one stage 1 skipped, and
 * an allocation that fails is skipped (pass 8 of fsck rebuilds the
 * bitmap from what the trees reference). */
static int stage2_apply(struct tux3_volume *vol, unsigned index,
			const struct logrec *r)
{
	if (!vol->salvage.on)
		return stage2_record(vol, &vol->log[index], r);
	if (salvage_skipped(vol, index, r->offset))
		return 0;
	int err = stage2_record(vol, &vol->log[index], r);
	if (err && err != -ENOMEM) {
		vol->salvage.skipped++;
		salvage_note(vol, &vol->salvage.first_skip);
		err = 0;
	}
	return err;
}

static int for_each_live_record(struct tux3_volume *vol,
				int (*fn)(struct tux3_volume *vol,
					  unsigned index,
					  const struct logrec *r))
{
	struct logrec rec;
	for (unsigned i = 0; i < vol->logcount; i++) {
		struct logblk *lb = &vol->log[i];
		unsigned off = replay_start(vol, i);
		unsigned end = LOG_HEADER_SIZE + lb->head.bytes;
		if (!off)
			continue;
		while (off < end) {
			if (vol->salvage.ngaps &&
			    (off = salvage_step_over(vol, i, off)) >= end)
				break;
			unsigned size = log_decode_record(lb->data, off, end,
							  &rec);
			if (!size)	/* checked at load; cannot happen */
				return LOGERR(vol, lb, off, "bad record");
			int err = fn(vol, i, &rec);
			if (err)
				return err;
			off += size;
		}
	}
	return 0;
}

int replay_stage1(struct tux3_volume *vol)
{
	int err = for_each_live_record(vol, stage1_apply);
	return err ? err : replay_salvage_index(vol);
}

void replay_salvage_mode(struct tux3_volume *vol)
{
	free(vol->salvage.skips);
	free(vol->salvage.gaps);
	blockset_free(&vol->salvage.copies);
	blockset_free(&vol->salvage.kept);
	memset(&vol->salvage, 0, sizeof(vol->salvage));
	vol->salvage.on = true;
}

int defer_unify_add(struct tux3_volume *vol, uint64_t block, uint32_t count)
{
	if (vol->ndeunify == vol->deunify_cap) {
		unsigned ncap = vol->deunify_cap ? vol->deunify_cap * 2 : 32;
		void *n = realloc(vol->deunify, ncap * sizeof(*vol->deunify));
		if (!n)
			return -ENOMEM;
		vol->deunify = n;
		vol->deunify_cap = ncap;
	}
	vol->deunify[vol->ndeunify].block = block;
	vol->deunify[vol->ndeunify].count = count;
	vol->ndeunify++;
	return 0;
}

/* Test-and-modify as the reference does; a conflict is kept as a warning
 * naming the record, so a volume with a damaged bitmap can still be read
 * (fsck reports it as a problem). */
static int apply_bits(struct tux3_volume *vol, struct logblk *lb,
		      const struct logrec *r, uint64_t block, uint64_t count,
		      bool set)
{
	int64_t conflicts = bitmap_modify(vol, block, count, set);
	if (conflicts < 0)
		return vol_error(vol, (int)conflicts, lb->blocknr, TUX3_NONE,
				 r->offset, "replay of %s failed",
				 log_code_name(r->code));
	if (conflicts) {
		if (vol->nconflicts < REPLAY_CONFLICTS_KEPT) {
			struct replay_conflict *c =
				&vol->conflicts[vol->nconflicts++];
			c->block = block;
			c->count = count;
			c->set = set;
			c->logblock = lb->blocknr;
			c->offset = r->offset;
		}
		vol_warn(vol, "log block %" PRIu64 " offset %u: %s of block %"
			 PRIu64 " count %" PRIu64 ": %s (%" PRId64 " block%s)",
			 lb->blocknr, r->offset,
			 r->code ? log_code_name(r->code) : "log block itself",
			 block,
			 count, set ? "already allocated" : "double free",
			 conflicts, conflicts == 1 ? "" : "s");
		vol->replay_conflicts += (uint64_t)conflicts;
	}
	return 0;
}

static int stage2_record(struct tux3_volume *vol, struct logblk *lb,
			 const struct logrec *r)
{
	int err = 0;

	switch (r->code) {
	case LOG_BALLOC:
		return apply_bits(vol, lb, r, r->block, r->count, true);
	case LOG_BFREE: case LOG_BFREE_RELOG:
		return apply_bits(vol, lb, r, r->block, r->count, false);
	case LOG_BFREE_ON_UNIFY:
		return defer_unify_add(vol, r->block, r->count);
	case LOG_LEAF_REDIRECT:
		if ((err = apply_bits(vol, lb, r, r->newb, 1, true)))
			return err;
		return apply_bits(vol, lb, r, r->oldb, 1, false);
	case LOG_BNODE_REDIRECT:
		if ((err = apply_bits(vol, lb, r, r->newb, 1, true)))
			return err;
		return defer_unify_add(vol, r->oldb, 1);
	case LOG_LEAF_FREE: case LOG_BNODE_FREE:
		return apply_bits(vol, lb, r, r->block, 1, false);
	case LOG_BNODE_ROOT:
		return apply_bits(vol, lb, r, r->root, 1, true);
	case LOG_BNODE_SPLIT:
		return apply_bits(vol, lb, r, r->dst, 1, true);
	case LOG_BNODE_MERGE:
		overlay_drop(&vol->overlay, r->src);
		return apply_bits(vol, lb, r, r->src, 1, false);
	case LOG_ORPHAN_ADD:
		return orphan_add(&vol->log_orphans, r->inum);
	case LOG_ORPHAN_DEL:
		/* cancels an ADD of this cycle, else deletes from the otree */
		if (!orphan_del(&vol->log_orphans, r->inum))
			return orphan_add(&vol->otree_deletes, r->inum);
		return 0;
	}
	return 0;
}

/* Salvage: the redirect sources the rebuilt index took for its nodes
 * (salvage.kept) are not freed at the unify: each deferred range that
 * holds one is cut around it. */
static int salvage_keep_nodes(struct tux3_volume *vol)
{
	const struct blockset *kept = &vol->salvage.kept;
	for (unsigned i = 0; kept->count && i < vol->ndeunify;) {
		uint64_t block = vol->deunify[i].block;
		uint32_t count = vol->deunify[i].count, k = 0;
		while (k < count && !blockset_has(kept, block + k))
			k++;
		if (k == count) {
			i++;
			continue;
		}
		/* [block, block+k) stays at i (none: the last entry takes
		 * its place); the blocks after the kept one go to the end,
		 * looked at again there */
		int err = k + 1 < count ? defer_unify_add(vol, block + k + 1,
							  count - k - 1) : 0;
		if (err)
			return err;
		if (k)
			vol->deunify[i++].count = k;
		else
			vol->deunify[i] = vol->deunify[--vol->ndeunify];
	}
	return 0;
}

int replay_stage2(struct tux3_volume *vol)
{
	vol->salvage.next = 0;
	int err = for_each_live_record(vol, stage2_apply);
	if (!err && vol->salvage.on)
		err = salvage_keep_nodes(vol);
	if (err)
		return err;
	/* Every log block of the chain is in use until the next unify,
	 * those before the unify mark too. */
	for (unsigned i = 0; i < vol->logcount; i++) {
		struct logblk *lb = &vol->log[i];
		struct logrec r = { .code = 0, .offset = 0 };
		if ((err = apply_bits(vol, lb, &r, lb->blocknr, 1, true)) ||
		    (err = defer_unify_add(vol, lb->blocknr, 1)))
			return err;
	}
	return 0;
}

/* After a unify the chain loaded at open is no longer the log: forget it
 * (its blocks were relogged as frees).  Log blocks written since the open
 * are tracked on the unify list, not here. */
void log_forget_loaded(struct tux3_volume *vol)
{
	for (unsigned i = 0; i < vol->logcount && vol->log; i++)
		free(vol->log[i].data);
	free(vol->log);
	vol->log = NULL;
	vol->logcount = 0;
	vol->unify_index = -1;
}

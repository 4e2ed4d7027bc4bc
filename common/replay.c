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

/* Check one log block's header and every record in it. */
static int check_logblock(struct tux3_volume *vol, struct logblk *lb,
			  unsigned index)
{
	char why[128];
	struct logrec rec;

	if (log_decode_head(lb->data, vol->blocksize, &lb->head, why,
			    sizeof(why)))
		return LOGERR(vol, lb, 0, "log block %u of %u: %s", index + 1,
			      vol->logcount, why);
	unsigned end = LOG_HEADER_SIZE + lb->head.bytes;
	for (unsigned off = LOG_HEADER_SIZE; off < end;) {
		unsigned size = log_decode_record(lb->data, off, end, &rec);
		if (!size) {
			if (!log_record_size(rec.code))
				return LOGERR(vol, lb, off, "invalid log code "
					      "0x%02x at offset %u", rec.code,
					      off);
			return LOGERR(vol, lb, off, "log record %s at offset "
				      "%u runs past the payload end %u",
				      log_code_name(rec.code), off, end);
		}
		int err = check_record_blocks(vol, lb, &rec);
		if (err)
			return err;
		if (rec.code == LOG_UNIFY && vol->unify_index < 0) {
			vol->unify_index = (int)index;
			vol->unify_offset = off;
		}
		off += size;
	}
	return 0;
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
	/* LOG_CRC: the newest 'verify' blocks carry our CRC (sealed only) */
	uint32_t verify = log_crc_trusted(vol);
	vol->log = calloc(logcount, sizeof(*vol->log));
	if (!vol->log)
		return -ENOMEM;
	/* newest first: the chain runs backwards in time */
	for (uint32_t i = logcount; i-- > 0;) {
		struct logblk *lb = &vol->log[i];
		uint64_t from = i + 1 < logcount ? vol->log[i + 1].blocknr :
			        TUX3_NONE;
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
				break;
			}
		}
		/* the latest UNIFY is in the newest block holding one */
		err = check_logblock(vol, lb, i);
		if (err)
			break;
		chain = lb->head.logchain;
	}
	blockset_free(&seen);
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
	uint8_t *d = overlay_find(&vol->overlay, block, &dropped);
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
		b = overlay_find(&vol->overlay, r->oldb, NULL);
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
		b = overlay_find(&vol->overlay, r->src, NULL);
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
		return err ? edit_failed(vol, lb, r, r->parent, err) : 0;
	case LOG_BNODE_MERGE:
		if ((err = bnode_get(vol, lb, r, r->src, false, &b)) ||
		    (err = bnode_get(vol, lb, r, r->dst, false, &d)))
			return err;
		b = overlay_find(&vol->overlay, r->src, NULL);
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

typedef int (*record_fn)(struct tux3_volume *vol, struct logblk *lb,
			 const struct logrec *rec);

static int for_each_live_record(struct tux3_volume *vol, record_fn fn)
{
	struct logrec rec;
	for (unsigned i = 0; i < vol->logcount; i++) {
		struct logblk *lb = &vol->log[i];
		unsigned off = replay_start(vol, i);
		unsigned end = LOG_HEADER_SIZE + lb->head.bytes;
		if (!off)
			continue;
		while (off < end) {
			unsigned size = log_decode_record(lb->data, off, end,
							  &rec);
			if (!size)	/* checked at load; cannot happen */
				return LOGERR(vol, lb, off, "bad record");
			int err = fn(vol, lb, &rec);
			if (err)
				return err;
			off += size;
		}
	}
	return 0;
}

int replay_stage1(struct tux3_volume *vol)
{
	return for_each_live_record(vol, stage1_record);
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

int replay_stage2(struct tux3_volume *vol)
{
	int err = for_each_live_record(vol, stage2_record);
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

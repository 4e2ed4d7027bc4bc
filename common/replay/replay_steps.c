/*
 * Replay explained: the log the open replayed, record by record, with
 * what each record changes in each stage (see replay.c, which does the
 * changes).  For tux3debug 'replay'.  Nothing here changes the volume:
 * the records are read from the chain the open loaded, and the effects
 * are described from the record codes, in the order replay applies them:
 *   stage 0 (load)  which log blocks and records are replayed (those
 *                   after the latest UNIFY);
 *   stage 1         the bnode images rebuilt in memory and the free count;
 *   stage 2         the allocation bitmap, deferred frees and orphans,
 *                   then every log block of the chain marked in use.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include "core.h"
#include "tux3_walk.h"

struct steps {
	struct tux3_volume *vol;
	tux3_replay_step_fn fn;
	void *ctx;
	struct tux3_replay_step s;
	char record[160];
};

static int emit(struct steps *st, tux3_block_t block, uint64_t count,
		int bits, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static int emit(struct steps *st, tux3_block_t block, uint64_t count,
		int bits, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(st->s.change, sizeof(st->s.change), fmt, ap);
	va_end(ap);
	st->s.block = block;
	st->s.count = count;
	st->s.bits = bits;
	return st->fn(st->ctx, &st->s);
}

static int stage1(struct steps *st, const struct logrec *r)
{
	switch (r->code) {
	case LOG_BNODE_REDIRECT:
		return emit(st, r->newb, 1, 0, "bnode %" PRIu64 ": a copy of "
			    "the image of bnode %" PRIu64, r->newb, r->oldb);
	case LOG_BNODE_ROOT:
		if (r->count < 2)
			return emit(st, r->root, 1, 0, "bnode %" PRIu64 ": new "
				    "root, one entry -> %" PRIu64, r->root,
				    r->left);
		return emit(st, r->root, 1, 0, "bnode %" PRIu64 ": new root, "
			    "entries -> %" PRIu64 " and key %" PRIu64 " -> %"
			    PRIu64, r->root, r->left, r->rkey, r->right);
	case LOG_BNODE_SPLIT:
		return emit(st, r->dst, 1, 0, "bnode %" PRIu64 ": entries from "
			    "index %u on move to new bnode %" PRIu64, r->src,
			    r->pos, r->dst);
	case LOG_BNODE_ADD:
		return emit(st, r->parent, 1, 0, "bnode %" PRIu64 ": entry key %"
			    PRIu64 " -> %" PRIu64 " added", r->parent, r->key,
			    r->child);
	case LOG_BNODE_UPDATE:
		return emit(st, r->parent, 1, 0, "bnode %" PRIu64 ": entry key %"
			    PRIu64 " now -> %" PRIu64, r->parent, r->key,
			    r->child);
	case LOG_BNODE_MERGE:
		return emit(st, r->dst, 1, 0, "bnode %" PRIu64 ": the entries of "
			    "bnode %" PRIu64 " appended", r->dst, r->src);
	case LOG_BNODE_DEL:
		return emit(st, r->block, 1, 0, "bnode %" PRIu64 ": %u entr%s "
			    "from key %" PRIu64 " deleted", r->block, r->count,
			    r->count == 1 ? "y" : "ies", r->key);
	case LOG_BNODE_ADJUST:
		return emit(st, r->block, 1, 0, "bnode %" PRIu64 ": key %" PRIu64
			    " becomes %" PRIu64, r->block, r->from, r->to);
	case LOG_BNODE_FREE:
		return emit(st, r->block, 1, 0, "bnode %" PRIu64 ": image "
			    "dropped", r->block);
	case LOG_FREEBLOCKS:
		return emit(st, TUX3_NONE, 0, 0, "free block count set to %"
			    PRIu64, r->freeblocks);
	}
	return 0;	/* no stage 1 effect */
}

static int bits(struct steps *st, uint64_t block, uint64_t count, bool set,
		const char *why)
{
	if (count == 1)
		return emit(st, block, 1, set ? 1 : -1, "bitmap: block %" PRIu64
			    " %s%s", block, set ? "set" : "cleared", why);
	return emit(st, block, count, set ? 1 : -1, "bitmap: blocks %" PRIu64
		    "-%" PRIu64 " %s%s", block, block + count - 1,
		    set ? "set" : "cleared", why);
}

static int stage2(struct steps *st, const struct logrec *r)
{
	int err;
	switch (r->code) {
	case LOG_BALLOC:
		return bits(st, r->block, r->count, true, "");
	case LOG_BFREE: case LOG_BFREE_RELOG:
		return bits(st, r->block, r->count, false, "");
	case LOG_BFREE_ON_UNIFY:
		return emit(st, r->block, r->count, 0, "blocks %" PRIu64 "-%"
			    PRIu64 " to be freed at the next unify", r->block,
			    r->block + r->count - 1);
	case LOG_LEAF_REDIRECT:
		if ((err = bits(st, r->newb, 1, true, " (the leaf's new "
				"place)")))
			return err;
		return bits(st, r->oldb, 1, false, " (the leaf's old place)");
	case LOG_BNODE_REDIRECT:
		if ((err = bits(st, r->newb, 1, true, " (the bnode's new "
				"place)")))
			return err;
		return emit(st, r->oldb, 1, 0, "block %" PRIu64 " (the bnode's "
			    "old place) to be freed at the next unify", r->oldb);
	case LOG_LEAF_FREE:
		return bits(st, r->block, 1, false, " (leaf freed)");
	case LOG_BNODE_FREE:
		return bits(st, r->block, 1, false, " (bnode freed)");
	case LOG_BNODE_ROOT:
		return bits(st, r->root, 1, true, " (new root bnode)");
	case LOG_BNODE_SPLIT:
		return bits(st, r->dst, 1, true, " (new bnode of the split)");
	case LOG_BNODE_MERGE:
		return bits(st, r->src, 1, false, " (merged bnode, image "
			    "dropped)");
	case LOG_ORPHAN_ADD:
		return emit(st, TUX3_NONE, 0, 0, "orphans: inode %" PRIu64
			    " added", r->inum);
	case LOG_ORPHAN_DEL:
		return emit(st, TUX3_NONE, 0, 0, "orphans: inode %" PRIu64
			    " removed (an addition of this cycle cancelled, "
			    "else deleted from the orphan table)", r->inum);
	}
	return 0;	/* no stage 2 effect */
}

/* Where replay starts in log block i (replay.c replay_start): 0 none. */
static unsigned start_of(const struct tux3_volume *vol, unsigned i)
{
	if (vol->unify_index >= 0 && (int)i < vol->unify_index)
		return 0;
	if ((int)i == vol->unify_index)
		return vol->unify_offset;
	return LOG_HEADER_SIZE;
}

static int for_each(struct steps *st, unsigned stage,
		    int (*fn)(struct steps *st, const struct logrec *r))
{
	struct tux3_volume *vol = st->vol;
	struct logrec rec;
	unsigned delta = 0;
	for (unsigned i = 0; i < vol->logcount; i++) {
		struct logblk *lb = &vol->log[i];
		unsigned end = LOG_HEADER_SIZE + lb->head.bytes;
		unsigned off = start_of(vol, i);
		if (!off)
			continue;
		for (; off < end;) {
			unsigned size = log_decode_record(lb->data, off, end,
							  &rec);
			if (!size)
				break;	/* checked when the log was loaded */
			if (rec.code == LOG_DELTA)
				delta++;
			log_format_record(&rec, st->record,
					  sizeof(st->record));
			st->s = (struct tux3_replay_step){
				.stage = stage, .delta = delta, .index = i,
				.logblock = lb->blocknr, .offset = off,
				.record = st->record,
			};
			int err = fn(st, &rec);
			if (err)
				return err;
			off += size;
		}
	}
	return 0;
}

static int stage0(struct steps *st)
{
	struct tux3_volume *vol = st->vol;
	for (unsigned i = 0; i < vol->logcount; i++) {
		struct logblk *lb = &vol->log[i];
		unsigned records = 0, end = LOG_HEADER_SIZE + lb->head.bytes;
		struct logrec rec;
		for (unsigned off = LOG_HEADER_SIZE, size; off < end;
		     off += size, records++)
			if (!(size = log_decode_record(lb->data, off, end,
						       &rec)))
				break;
		unsigned from = start_of(vol, i);
		st->s = (struct tux3_replay_step){
			.stage = 0, .index = i, .logblock = lb->blocknr,
			.record = "",
		};
		int err;
		if (!from)
			err = emit(st, lb->blocknr, 1, 0, "log block %u (block %"
				   PRIu64 "): %u record%s, all before the "
				   "latest UNIFY: not replayed", i, lb->blocknr,
				   records, records == 1 ? "" : "s");
		else if (from > LOG_HEADER_SIZE)
			err = emit(st, lb->blocknr, 1, 0, "log block %u (block %"
				   PRIu64 "): %u record%s, replayed from the "
				   "latest UNIFY at offset %u", i, lb->blocknr,
				   records, records == 1 ? "" : "s", from);
		else
			err = emit(st, lb->blocknr, 1, 0, "log block %u (block %"
				   PRIu64 "): %u record%s, all replayed", i,
				   lb->blocknr, records, records == 1 ? "" : "s");
		if (err)
			return err;
	}
	return 0;
}

int tux3_replay_steps(struct tux3_volume *vol, unsigned stages,
		      tux3_replay_step_fn fn, void *ctx)
{
	struct steps st = { .vol = vol, .fn = fn, .ctx = ctx };
	int err = 0;
	if (!vol->replayed)
		return vol_error(vol, -EINVAL, TUX3_NONE, TUX3_NONE, TUX3_NONE,
				 "the volume was opened without replay");
	if (!vol->log && vol->super.logcount)
		return vol_error(vol, -ESTALE, TUX3_NONE, TUX3_NONE, TUX3_NONE,
				 "the log replayed at open has been folded into "
				 "the trees by a unify since");
	if ((stages & 1) && (err = stage0(&st)))
		return err;
	if ((stages & 2) && (err = for_each(&st, 1, stage1)))
		return err;
	if (stages & 4) {
		if ((err = for_each(&st, 2, stage2)))
			return err;
		/* every block of the chain, those before the unify too */
		for (unsigned i = 0; i < vol->logcount; i++) {
			struct logblk *lb = &vol->log[i];
			st.s = (struct tux3_replay_step){
				.stage = 2, .index = i, .logblock = lb->blocknr,
				.record = "",
			};
			if ((err = bits(&st, lb->blocknr, 1, true, " (log "
					"block, in use until the next unify)")))
				return err;
		}
	}
	return 0;
}

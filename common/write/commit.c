/*
 * The atomic commit of a delta, as the 2014 format defines it:
 *   1. the delta's records are already in the log buffer (DELTA first);
 *      at a unify, UNIFY, FREEBLOCKS and the relogged frees follow, the
 *      dirty bnodes are written in place and the bitmap and countmap are
 *      flushed (their own allocations land after the UNIFY mark);
 *   2. the delta's leaves are written to their new blocks (file data was
 *      written when it was allocated);
 *   3. the log blocks are written;
 *   4. the delta's frees checked against the bitmap (a double free
 *      stops the commit here, the last one still the volume); flush;
 *      [SB_BACKUP: the secondary copy at byte 1024; flush;] the
 *      superblock (the commit point); flush;
 *   5. the delta's freed blocks become free space.
 * Nothing the last committed state references is overwritten before 4.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "write/write.h"

/* Overlay entries a commit leaves before it sheds the clean ones: the
 * bnodes of a unify cycle (unify_bnode_limit) and a delta's leaves stay
 * regardless; this bounds the clean cache (1 MiB of 4 KiB blocks). */
#define OVERLAY_CLEAN_KEEP 256

static int write_block(void *ctx, uint64_t block, uint8_t *data,
		       unsigned *flags)
{
	struct tux3_volume *vol = ctx;
	int err = dev_pwrite(&vol->dev, data, vol->blocksize,
			     block << vol->blockbits);
	if (err)
		return vol_error(vol, err, block, TUX3_NONE, TUX3_NONE,
				 "cannot write block");
	*flags = 0;	/* the image stays as a clean cache */
	return 0;
}

/* The unify: fold the log into the on-disk bnodes, bitmap and countmap,
 * so that the log can start a new cycle. */
static int unify(struct tux3_volume *vol)
{
	struct logrec r = { .code = LOG_UNIFY };
	int err = log_append(vol, &r);
	if (err)
		return err;
	dev_mark(&vol->dev, REC_MARK_UNIFY);
	r = (struct logrec){ .code = LOG_FREEBLOCKS,
			     .freeblocks = vol->freeblocks };
	if ((err = log_append(vol, &r)))
		return err;
	/* Frees pending on this unify, and the delta's own deferred frees
	 * (their records precede the mark, so replay will skip them): logged
	 * again after the mark, applied after this commit. */
	for (size_t i = 0; i < vol->defer_free.count; i++)
		if ((err = log_bfree(vol, LOG_BFREE_RELOG,
				     vol->defer_free.v[i].block,
				     vol->defer_free.v[i].count)))
			return err;
	for (unsigned i = 0; i < vol->ndeunify; i++) {
		if ((err = log_bfree(vol, LOG_BFREE_RELOG,
				     vol->deunify[i].block,
				     vol->deunify[i].count)) ||
		    (err = bfree_deferred(vol, vol->deunify[i].block,
					  vol->deunify[i].count)))
			return err;
	}
	vol->ndeunify = 0;
	/* bnodes changed in this cycle go to their (new) blocks now */
	if ((err = overlay_for_each(&vol->overlay, OV_UNIFY_DIRTY,
				    write_block, vol)))
		return err;
	/* the allocation maps as of the mark; everything allocated from here
	 * on is logged after the mark and replayed on top of them */
	if ((err = bitmap_flush(vol)))
		return err;
	/* the cycle's orphans into the otree (deletions first) */
	if ((err = orphan_unify(vol)))
		return err;
	/* a new cycle: this commit's log blocks are its first; the blocks of
	 * the cycle replay loaded are retired (relogged above) */
	vol->super.logcount = 0;
	log_forget_loaded(vol);
	r = (struct logrec){ .code = LOG_DELTA };
	return log_append(vol, &r);
}

/* When the log or the set of dirty bnodes grows past a bound, a commit
 * also unifies (the reference: every third delta). */
static bool unify_due(struct tux3_volume *vol)
{
	unsigned dirty = 0;
	for (size_t i = 0; i < vol->overlay.cap; i++)
		if (vol->overlay.ents[i].data &&
		    (vol->overlay.ents[i].flags & OV_UNIFY_DIRTY))
			dirty++;
	return vol->super.logcount >= vol->unify_log_limit ||
	       dirty >= vol->unify_bnode_limit;
}

static int commit_steps(struct tux3_volume *vol, bool force_unify)
{
	int err;

	if (vol->vt_dirty) {
		/* a write made an implicit child: the table goes with it */
		if ((err = vol->vops->table_save(vol)))
			return err;
		vol->vt_dirty = false;
	}
	if (vol->vindex && (err = vol->vops->index_save(vol)))
		return err;
	if (force_unify || unify_due(vol)) {
		if ((err = unify(vol)))
			return err;
	}
	if ((err = overlay_for_each(&vol->overlay, OV_DELTA_DIRTY, write_block,
				    vol)))
		return err;
	if ((err = log_write_blocks(vol)) < 0)
		return err;
	if ((err = balloc_commit_check(vol)))
		return err;
	if ((err = vol_barrier(vol)))
		return vol_error(vol, err, TUX3_NONE, TUX3_NONE, TUX3_NONE,
				 "cannot flush the device before the commit");
	vol->super.iroot = root_pack(vol->iroot);
	vol->super.oroot = vol->oroot.depth ? root_pack(vol->oroot) : 0;
	super_encode(vol->sbraw, &vol->super);
	if (vol->ident.present) {
		superext_encode(vol->sbraw, &vol->ident, &vol->super,
				++vol->ident.seq);
		/* LOG_CRC: how many of the newest log blocks carry our CRC */
		uint32_t n = vol->crclog_chain == vol->super.logchain ?
			     vol->crclog : 0;
		superext_set_crclog(vol->sbraw, n < vol->super.logcount ? n :
				    vol->super.logcount);
		/* 0 without the feature (tux3tune -O ^dir_index) */
		superext_set_dxgen(vol->sbraw, vol->ident.ro_compat &
				   TUX3_FEATURE_RO_COMPAT_DIR_INDEX ?
				   vol->dxgen : 0);
	}
	/* SB_BACKUP: the secondary copy of this commit, written and flushed
	 * before the primary, so a torn primary leaves a whole copy */
	if (vol->ident.present &&
	    (vol->ident.compat & SUPEREXT_COMPAT_SB_BACKUP) &&
	    (err = sb2_write(vol)))
		return err;
	dev_mark(&vol->dev, REC_MARK_SUPER);
	if ((err = dev_pwrite(&vol->dev, vol->sbraw, TUX3_SB_LEN,
			      TUX3_SB_OFFSET)))
		return vol_error(vol, err, TUX3_NONE, TUX3_NONE, TUX3_SB_OFFSET,
				 "cannot write the superblock");
	if ((err = vol_barrier(vol)))
		return vol_error(vol, err, TUX3_NONE, TUX3_NONE, TUX3_NONE,
				 "cannot flush the superblock");
	dev_mark(&vol->dev, REC_MARK_COMMIT);
	/* durable: what the delta freed may be reused */
	if ((err = balloc_commit_done(vol))) {
		vol->failed_after_super = true;
		return err;
	}
	blockset_free(&vol->fresh);
	overlay_shed_clean(&vol->overlay, OVERLAY_CLEAN_KEEP);
	vol->delta_open = false;
	vol->super_dirty = false;
	if (vol->on_commit)
		vol->on_commit(vol, vol->commit_ctx);
	return 0;
}

/* Before a volume's first change: the bounds its commits keep to (a
 * commit unifies when the cycle's log reaches unify_log_limit blocks or
 * unify_bnode_limit bnodes are dirty, see unify_due; a delta commits once
 * it logged commit_bound records' worth, see namei_write.c) and the
 * allocator's state.  A read-write open begins so, and fsck's repair. */
int write_begin(struct tux3_volume *vol)
{
	vol->unify_log_limit = 64;
	vol->unify_bnode_limit = 256;
	vol->commit_bound = 4096;
	return balloc_init(vol);
}

/* A commit that fails part way may have written some of the delta's
 * blocks and changed the in-memory maps; the disk still holds the last
 * whole commit, so the volume takes nothing more until it is reopened. */
int delta_commit(struct tux3_volume *vol, bool force_unify)
{
	if (vol->commit_failed) {
		vol_error(vol, -EIO, TUX3_NONE, TUX3_NONE, TUX3_NONE,
			  "an earlier commit failed: nothing more is committed "
			  "until the volume is reopened");
		return -EIO;
	}
	if (!vol->delta_open && !vol->super_dirty && !force_unify)
		return 0;
	int err = commit_steps(vol, force_unify);
	if (err)
		vol->commit_failed = true;
	return err;
}

int tux3_sync(struct tux3_volume *vol)
{
	if (vol->mode != TUX3_OPEN_RDWR)
		return -EROFS;
	return delta_commit(vol, false);
}

int tux3_unify(struct tux3_volume *vol)
{
	if (vol->mode != TUX3_OPEN_RDWR)
		return -EROFS;
	return delta_commit(vol, true);
}

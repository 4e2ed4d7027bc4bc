/*
 * The volume: open (superblock, then replay, orphans, versions) and close,
 * and the settings of an open volume (time, cache).  Above every layer: errors and block reads are in
 * io/vol_io.c.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"

#ifndef TUX3_VERSION
#define TUX3_VERSION "0.1"
#endif

const char *tux3_version(void)
{
	return TUX3_VERSION;
}

int tux3_library_version(void)
{
	return TUX3_LIBRARY_VERSION;
}

static int count_free_ondisk(struct tux3_volume *vol)
{
	/* without replay, free space is what the on-disk bitmap says */
	uint64_t used;
	int err = bitmap_count_used(vol, 0, vol->volblocks, &used);
	if (!err)
		vol->freeblocks = vol->volblocks - used;
	return err;
}

/*
 * A read-write open writes on top of the replayed state, so that state
 * must be sound: a replay that met allocation conflicts means a damaged
 * bitmap, which fsck must repair first.
 */
static int volume_ready_to_write(struct tux3_volume *vol)
{
	if (vol->replay_conflicts)
		return vol_error(vol, -EUCLEAN, TUX3_NONE, TUX3_NONE,
				 TUX3_NONE, "replay met %" PRIu64 " allocation "
				 "conflicts; run fsck.tux3 before writing",
				 vol->replay_conflicts);
	int err = write_begin(vol);
	/* a snapshot delete a crash interrupted is finished first: the
	 * orphans' release writes through the version rules, which need
	 * the tree the delete leaves */
	if (!err && vol->vpending)
		err = version_delete_resume(vol);
	if (!err && vol->orphans.count)
		err = orphans_release(vol);
	return err;
}

/*
 * Without replay the on-disk trees may not be usable yet: bnodes reach
 * the disk only at a unify, so between unifies the superblock can name a
 * root the log has yet to build.  That is the format, not damage: the
 * open goes on, with what could not be read reported as warnings (the
 * commands that need those trees then fail naming the block).
 */
static int volume_load_noreplay(struct tux3_volume *vol)
{
	char text[400];
	int err = bitmap_init(vol);
	if (!err)
		err = count_free_ondisk(vol);
	if (err == -ENOMEM)
		return err;
	if (err) {
		vol_warn(vol, "free space unknown without replay: %s",
			 tux3_error_text(vol, text, sizeof(text)));
		tux3_clear_error(vol);
		vol->freeblocks = 0;
	}
	err = orphans_resolve(vol);
	if (err == -ENOMEM)
		return err;
	if (err) {
		vol_warn(vol, "orphans unknown without replay: %s",
			 tux3_error_text(vol, text, sizeof(text)));
		tux3_clear_error(vol);
	}
	return 0;
}

/* SB_BACKUP: the primary has no Tux3 magic.  A good secondary copy
 * (format.md 15.3) may stand in for a read-only open, with a warning;
 * writing needs fsck.tux3 -b first.  A no-replay open (fsck, tux3debug
 * -c) sees the primary as it is.  Without a copy, the primary's own
 * checks report the damage (0). */
static int volume_try_sb2(struct tux3_volume *vol)
{
	uint8_t raw[SB2_LEN], copy[TUX3_SB_LEN];
	char why[200];
	if (vol->mode == TUX3_OPEN_NOREPLAY ||
	    dev_pread(&vol->dev, raw, sizeof(raw), SB2_OFFSET) ||
	    sb2_decode(raw, copy, why, sizeof(why)))
		return 0;
	if (vol->mode == TUX3_OPEN_RDWR ||
	    vol->mode == TUX3_OPEN_RDWR_NORECOVER)
		return vol_error(vol, -EUCLEAN, TUX3_NONE, TUX3_NONE,
				 TUX3_SB_OFFSET, "the superblock has no Tux3 "
				 "magic; its secondary copy at byte %u is "
				 "good: run fsck.tux3 -b to restore it",
				 SB2_OFFSET);
	memcpy(vol->sbraw, copy, TUX3_SB_LEN);
	vol_warn(vol, "the superblock at byte %u has no Tux3 magic: using "
		 "the secondary copy at byte %u (read-only; fsck.tux3 -b "
		 "restores the primary)", TUX3_SB_OFFSET, SB2_OFFSET);
	return 0;
}

/* sbraw: the superblock area to open with, or NULL for the device's */
static int volume_load(struct tux3_volume *vol, const uint8_t *sbraw)
{
	int err = 0;
	if (sbraw)
		memcpy(vol->sbraw, sbraw, TUX3_SB_LEN);
	else
		err = dev_pread(&vol->dev, vol->sbraw, TUX3_SB_LEN,
				TUX3_SB_OFFSET);
	if (err)
		return vol_error(vol, err, TUX3_NONE, TUX3_NONE, TUX3_SB_OFFSET,
				 "cannot read the superblock (device too "
				 "small?)");
	/* each step's warnings carry the step as their source */
	vol->warn_source = TUX3_WARN_SUPER;
	if (!tux3_magic_ok(vol->sbraw) &&
	    (err = volume_try_sb2(vol)))
		return err;
	super_decode(vol->sbraw, &vol->super);
	if ((err = super_check(vol)))
		return err;
	vol->warn_source = TUX3_WARN_EXTENSION;
	if ((err = superext_load(vol)))
		return err;
	vol->crclog = log_crc_trusted(vol);
	vol->crclog_chain = vol->super.logchain;
	vol->warn_source = TUX3_WARN_SUPER;
	vol->iroot = root_unpack(vol->super.iroot);
	vol->oroot = root_unpack(vol->super.oroot);
	vol->freeblocks = vol->volblocks;
	/* the geometry is known: bnodes checked from here on are memoized,
	 * and every write through the device or the overlay forgets */
	node_memo_clear(&vol->memo);
	vol->memo.blockbits = vol->blockbits;
	vol->dev.memo = &vol->memo;
	vol->overlay.memo = &vol->memo;
	vol->scratch = malloc(vol->blocksize);
	if (!vol->scratch)
		return -ENOMEM;

	if (vol->mode == TUX3_OPEN_NOREPLAY) {
		vol->warn_source = TUX3_WARN_NOREPLAY;
		err = volume_load_noreplay(vol);
		vol->warn_source = TUX3_WARN_OTHER;
		return err ? err : vtable_open(vol);
	}
	vol->warn_source = TUX3_WARN_REPLAY;
	if ((err = replay_load_log(vol)) || (err = replay_stage1(vol)) ||
	    (err = bitmap_init(vol)) || (err = replay_stage2(vol)) ||
	    (err = orphans_resolve(vol)) || (err = vtable_open(vol)))
		return err;
	vol->warn_source = TUX3_WARN_OTHER;
	vol->replayed = true;
	if (vol->mode == TUX3_OPEN_RDWR && vtable_marked(vol) &&
	    (!vol->vt || vol->vt_bad))
		/* without the table, writes would leak into snapshots */
		return vol_error(vol, -EROFS, TUX3_NONE, TUX3_VTABLE_INO,
				 TUX3_NONE, "the volume has versions but its "
				 "version table cannot be read: run fsck.tux3");
	if (vol->mode == TUX3_OPEN_RDWR)
		return volume_ready_to_write(vol);
	return 0;
}

/*
 * TUX3_OPEN_SHARED_LOCK: the device was opened read-only under the shared
 * lock (so without O_EXCL on a block device); make it writable without
 * ever dropping that lock: a second, writable, descriptor of the same
 * file takes the shared lock too, then replaces the first (dup3 closes
 * the old description, and the old lock with it).  An OFD write lock on
 * the first byte keeps two such writers apart; flock and OFD locks are
 * independent, so readers and exclusive writers are unaffected.
 */
static int dev_write_shared(struct device *dev, char *err, size_t errlen)
{
	struct stat a, b;
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = 0, .l_len = 1 };
	int e, fd = open(dev->path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "%s: cannot open for writing: %s",
			 dev->path, strerror(e));
		return -e;
	}
	if (fstat(fd, &a) < 0 || fstat(dev->fd, &b) < 0) {
		e = errno;
		snprintf(err, errlen, "%s: %s", dev->path, strerror(e));
		goto fail;
	}
	if (a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		e = ESTALE;
		snprintf(err, errlen, "%s: replaced while being opened",
			 dev->path);
		goto fail;
	}
	if (flock(fd, LOCK_SH | LOCK_NB) < 0) {
		e = errno;
		snprintf(err, errlen, "%s: volume is in use (an exclusive lock "
			 "held by another process)", dev->path);
		goto fail;
	}
	if (fcntl(fd, F_OFD_SETLK, &fl) < 0) {
		e = errno == EAGAIN || errno == EACCES ? EBUSY : errno;
		snprintf(err, errlen, "%s: another process is already writing "
			 "it under a shared lock", dev->path);
		goto fail;
	}
	if (dup3(fd, dev->fd, O_CLOEXEC) < 0) {
		e = errno;
		snprintf(err, errlen, "%s: %s", dev->path, strerror(e));
		goto fail;
	}
	close(fd);
	dev->readonly = false;
	return 0;
fail:
	close(fd);
	return -e;
}

static int volume_open(const char *path, enum tux3_open_mode mode,
		       const uint8_t *sbraw, struct tux3_volume **volp,
		       char *errbuf, size_t errlen)
{
	char devmsg[512] = "";
	struct tux3_volume *vol;
	bool shared = mode & TUX3_OPEN_SHARED_LOCK;
	int err;

	*volp = NULL;
	if (errlen)
		errbuf[0] = 0;
	/* the flags are the open's business; the volume keeps the mode */
	mode &= TUX3_OPEN_MODE_MASK;
	bool write = mode == TUX3_OPEN_RDWR_NORECOVER ||
		     mode == TUX3_OPEN_RDWR;
	vol = calloc(1, sizeof(*vol));
	if (!vol)
		return -ENOMEM;
	vol->mode = mode;
	vol->vops = &vinode_ops;	/* versions plug in here */
	tux3_clear_error(vol);
	err = dev_open(&vol->dev, path, write && !shared, devmsg,
		       sizeof(devmsg));
	if (!err && write && shared) {
		err = dev_write_shared(&vol->dev, devmsg, sizeof(devmsg));
		if (err)
			dev_close(&vol->dev);
	}
	if (err) {
		snprintf(errbuf, errlen, "%s", devmsg);
		free(vol);
		return err;
	}
	err = volume_load(vol, sbraw);
	if (err) {
		char text[400];
		snprintf(errbuf, errlen, "%s: %s", path,
			 vol->error.err ? tux3_error_text(vol, text,
							  sizeof(text)) :
			 strerror(-err));
		tux3_close(vol);
		return err;
	}
	*volp = vol;
	return 0;
}

int tux3_open_err(const char *path, enum tux3_open_mode mode,
		  struct tux3_volume **volp, char *errbuf, size_t errlen)
{
	return volume_open(path, mode, NULL, volp, errbuf, errlen);
}

int volume_open_trial(const char *path, const uint8_t *sbraw,
		      struct tux3_volume **volp, char *errbuf, size_t errlen)
{
	return volume_open(path, TUX3_OPEN_RDONLY, sbraw, volp, errbuf,
			   errlen);
}

int tux3_open(const char *path, enum tux3_open_mode mode,
	      struct tux3_volume **volp)
{
	char msg[8];
	return tux3_open_err(path, mode, volp, msg, sizeof(msg));
}

int tux3_umount(struct tux3_volume *vol)
{
	int err = 0;
	if (vol && vol->mode == TUX3_OPEN_RDWR) {
		vol->lazy_commits = false;	/* the last commit is durable */
		err = delta_commit(vol, false);
		/* nothing left to commit, or blocks still in a write-back
		 * cache */
		if (!err && (vol->unflushed || dev_cache_dirty(&vol->dev)))
			err = vol_barrier(vol);
	}
	tux3_close(vol);
	return err;
}

/* The write-back cache of lazy commits: a bulk load rewrites a
 * directory's last block per entry and writes each file's first blocks
 * next to the last file's; 256 KiB hold the one and gather the others
 * into runs long enough to go out as direct writes (dev_direct.c). */
#define LAZY_CACHE_BYTES (256u << 10)

int tux3_set_lazy_commits(struct tux3_volume *vol, int lazy)
{
	int err = 0;
	if (vol->mode != TUX3_OPEN_RDWR)
		return -EROFS;
	vol->lazy_commits = lazy != 0;
	if (lazy && !vol->dev.cache) {
		uint32_t n = LAZY_CACHE_BYTES >> vol->blockbits;
		err = dev_cache_enable(&vol->dev, vol->blockbits,
				       n < 16 ? 16 : n);
		vol->lazy_cache = !err;
	}
	if (lazy && vol->dev.cache)
		err = dev_cache_set_writeback(&vol->dev, true);
	if (lazy && !err)
		(void)dev_set_direct(&vol->dev, true);	/* a hint */
	if (!lazy && vol->dev.cache) {
		err = dev_cache_set_writeback(&vol->dev, false);
		if (vol->lazy_cache)
			dev_cache_disable(&vol->dev);
	}
	if (!lazy) {
		int e = dev_set_direct(&vol->dev, false);
		err = err ? err : e;
		vol->lazy_cache = false;
	}
	if (!lazy && vol->unflushed) {
		int e = vol_barrier(vol);
		err = err ? err : e;
	}
	return err;
}

void tux3_set_time(struct tux3_volume *vol, int64_t ns)
{
	vol->fixed_time = ns;
	vol->time_fixed = true;
}

int tux3_set_cache(struct tux3_volume *vol, size_t bytes)
{
	size_t n = bytes >> vol->blockbits;
	if (n > UINT32_MAX - 1)
		n = UINT32_MAX - 1;	/* refused as too large below */
	int err = dev_cache_writeback(&vol->dev, 0, UINT64_MAX);
	if (!err)
		err = dev_cache_enable(&vol->dev, vol->blockbits, (uint32_t)n);
	vol->lazy_cache = false;
	if (!err && vol->lazy_commits && vol->dev.cache)
		err = dev_cache_set_writeback(&vol->dev, true);
	return err;
}

void tux3_cache_stats(const struct tux3_volume *vol, uint64_t *hits,
		      uint64_t *misses)
{
	dev_cache_stats(&vol->dev, hits, misses);
}

void tux3_work_counts(const struct tux3_volume *vol, uint64_t *device_reads,
		      uint64_t *inode_loads)
{
	*device_reads = vol->dev.reads;
	*inode_loads = vol->inode_loads;
}

void tux3_close(struct tux3_volume *vol)
{
	if (!vol)
		return;
	wlog_free(&vol->wlog);
	dir_index_free(vol);
	free(vol->open);
	blockset_free(&vol->fresh);
	for (unsigned i = 0; i < vol->logcount && vol->log; i++)
		free(vol->log[i].data);
	free(vol->log);
	free(vol->salvage.skips);
	free(vol->salvage.gaps);
	blockset_free(&vol->salvage.copies);
	blockset_free(&vol->salvage.kept);
	overlay_free(&vol->overlay);
	bitmap_free(&vol->bitmap);
	if (vol->has_bitmap_inode)
		inode_free(&vol->bitmap_inode);
	atable_free(&vol->atoms);
	vtable_unload(vol);
	vindex_free(vol);
	orphan_set_free(&vol->orphans);
	orphan_set_free(&vol->log_orphans);
	orphan_set_free(&vol->otree_deletes);
	free(vol->deunify);
	extent_list_free(&vol->defer_free);
	for (unsigned i = 0; i < vol->nwarnings; i++)
		free(vol->warnings[i]);
	free(vol->warnings);
	free(vol->warning_sources);
	free(vol->scratch);
	free(vol->encode_buf);
	vol_bufs_free(vol);
	spacemap_free(&vol->hinted);
	dev_close(&vol->dev);
	free(vol);
}

unsigned tux3_replay_conflict_count(const struct tux3_volume *vol)
{
	return vol->nconflicts;
}

const struct replay_conflict *tux3_replay_conflict(
	const struct tux3_volume *vol, unsigned i)
{
	return i < vol->nconflicts ? &vol->conflicts[i] : NULL;
}

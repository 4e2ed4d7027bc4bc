/*
 * The repair primitives the check engine (common/check/) calls: every
 * change fsck makes to struct tux3_volume's own state goes through here
 * or through the write path's building blocks, never a field written in
 * check/.  This file owns:
 *   - the repair open (repair_begin_write), and pass 2's rebuild of a
 *     volume from log fields it repaired in memory: the device reopened
 *     for writing, the no-replay state reset before the replay and the
 *     volume marked replayed after it, the superblock kept dirty;
 *   - the superblock fields fsck repairs: the extension record (pass 1),
 *     the inode and orphan table roots (pass 3), usedinodes (passes 4
 *     and 8), atomdictsize, atomgen and freeatom (pass 6), the version
 *     marks (pass 9), and the free block count the unify logs (pass 8);
 *   - the atom table repairs of pass 6 (reference counts written half by
 *     half, the free list rebuilt, unused atoms freed, xattrs dropped)
 *     and the countmap rewrite of pass 8.
 * The atom table is ordinary data of inode 4 (inode_write_data, logged
 * and copy-on-write); the rest is in-memory state that the unify of
 * fsck_commit() writes out (the superblock, the FREEBLOCKS record,
 * bitmap_flush for the countmap).  Orphan records are forgotten with
 * orphan_write.c's orphan_forget, as the write path forgets them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "write/write.h"

/* ---- starting the repair, and pass 2's rebuild from the log ---- */

/*
 * The repair open: like a read-write open (write_begin), but from a
 * volume opened TUX3_OPEN_RDWR_NORECOVER, which accepts a replay that
 * met allocation conflicts (fsck repairs them) and keeps the orphans for
 * pass 7.  From here the repairs gather in the open delta.
 */
int repair_begin_write(struct tux3_volume *vol)
{
	if (vol->mode == TUX3_OPEN_RDWR)
		return 0;
	if (vol->mode != TUX3_OPEN_RDWR_NORECOVER || !vol->replayed)
		return -EROFS;
	vol->mode = TUX3_OPEN_RDWR;
	return write_begin(vol);
}

/*
 * Pass 2's volume for a log repair is opened without replay, read-only;
 * the repair writes it: the device again, for writing under the
 * exclusive lock (the shared one goes first: a process cannot hold both
 * on two descriptions of one file), in the mode repair_begin_write takes.
 * On failure the device is left closed, for tux3_close.
 */
int repair_reopen_for_write(struct tux3_volume *vol, const char *path,
			    char *msg, size_t msglen)
{
	dev_close(&vol->dev);
	int err = dev_open(&vol->dev, path, true, msg, msglen);
	if (err) {
		memset(&vol->dev, 0, sizeof(vol->dev));
		vol->dev.fd = -1;
		return err;
	}
	vol->mode = TUX3_OPEN_RDWR_NORECOVER;
	return 0;
}

/*
 * Pass 2 replays a volume opened without replay from a superblock it
 * repaired in memory (sb): what the no-replay open built and warned
 * about goes, the superblock takes sb's log fields and roots, and the
 * warnings from here on are replay's.  The replay steps follow, then
 * repair_log_rebuilt; the final commit writes these fields (see
 * repair_keep_log_fields).
 */
void repair_reset_for_log_rebuild(struct tux3_volume *vol,
				  const struct disksuper *sb)
{
	for (unsigned i = 0; i < vol->nwarnings; i++)
		free(vol->warnings[i]);
	vol->nwarnings = 0;
	bitmap_free(&vol->bitmap);
	if (vol->has_bitmap_inode)
		inode_free(&vol->bitmap_inode);
	vol->has_bitmap_inode = false;
	orphan_set_free(&vol->orphans);
	vol->super.logchain = sb->logchain;
	vol->super.logcount = sb->logcount;
	vol->super.iroot = sb->iroot;
	vol->super.oroot = sb->oroot;
	vol->iroot = root_unpack(sb->iroot);
	vol->oroot = root_unpack(sb->oroot);
	vol->freeblocks = vol->volblocks;
	tux3_clear_error(vol);
	vol->warn_source = TUX3_WARN_REPLAY;
}

/* The rebuild's replay went through: the volume is a replayed one, as
 * an open leaves it (repair_begin_write takes no other). */
void repair_log_rebuilt(struct tux3_volume *vol)
{
	vol->warn_source = TUX3_WARN_OTHER;
	vol->replayed = true;
}

/* The log fields repaired in memory (repair_reset_for_log_rebuild) reach
 * the disk only with the superblock: the commit must write it. */
void repair_keep_log_fields(struct tux3_volume *vol)
{
	vol->super_dirty = true;
}

/* Pass 1's new extension record (the identity) is written with the
 * superblock by the final commit. */
/* The one repair made without an open volume: pass 1 finds a
 * superblock that every open refuses, so there is no delta to carry the
 * change; the bytes go straight to the device, flushed, and pass 1 opens
 * the volume again. */
int repair_super_area(const char *path, const uint8_t *sbraw, unsigned from,
		      unsigned len, char *msg, size_t msglen)
{
	struct device dev;
	if (from > TUX3_SB_LEN || len > TUX3_SB_LEN - from)
		return -EINVAL;
	int err = dev_open(&dev, path, true, msg, msglen);
	if (err)
		return err;
	if ((err = dev_pwrite(&dev, sbraw + from, len,
			      (uint64_t)TUX3_SB_OFFSET + from)) ||
	    (err = dev_flush(&dev)))
		snprintf(msg, msglen, "cannot write the superblock at byte %u: "
			 "%s", TUX3_SB_OFFSET + from, strerror(-err));
	dev_close(&dev);
	return err;
}

void repair_set_ident(struct tux3_volume *vol,
		      const struct tux3_identity *ident)
{
	vol->ident = *ident;
	vol->ident.present = 1;
	vol->super_dirty = true;
}

/* ---- pass 3: the roots of the inode and orphan tables ---- */

/* A repair moved the root bnode of the inode table (otree false) or of
 * the orphan table: redirected on the way up, or rebuilt.  The commit
 * packs vol->iroot and vol->oroot into the superblock. */
void repair_set_root_block(struct tux3_volume *vol, bool otree,
			   uint64_t block)
{
	(otree ? &vol->oroot : &vol->iroot)->block = block;
}

/* The cut removed the whole orphan table: the commit writes a
 * superblock without one (oroot 0). */
void repair_drop_otree(struct tux3_volume *vol)
{
	vol->oroot = (struct root){ 0 };
	vol->super_dirty = true;
}

/* ---- pass 6: the atom table ---- */

int repair_atom_rw(struct tux3_volume *vol, uint64_t pos, void *buf,
		   unsigned len, bool write)
{
	return atable_rw(vol, pos, buf, len, write);
}

/* Only the halves that change are written: the high half is usually a
 * hole (as the reference leaves it), and stays one. */
int repair_atom_set_refcount(struct tux3_volume *vol, unsigned atom,
			     uint32_t old, uint32_t ref)
{
	uint8_t b[2];
	int err = 0;
	if ((uint16_t)old != (uint16_t)ref) {
		put_be16(b, (uint16_t)ref);
		err = repair_atom_rw(vol, atom_refcount_pos(vol, atom, false),
				     b, 2, true);
	}
	if (!err && old >> 16 != ref >> 16) {
		put_be16(b, (uint16_t)(ref >> 16));
		err = repair_atom_rw(vol, atom_refcount_pos(vol, atom, true),
				     b, 2, true);
	}
	return err;
}

/*
 * Every atom in [1, count) without a name, linked in ascending order,
 * one reverse-map block at a time (a block is written only if it
 * changes); then the superblock's head.
 */
int repair_atom_rebuild_freelist(struct tux3_volume *vol,
				 const struct atom_table *at)
{
	unsigned bs = vol->blocksize, per = bs / 8;
	uint8_t *blk = malloc(bs);
	uint32_t next = 0;
	int err = 0;
	if (!blk)
		return -ENOMEM;
	if (at->count > 1) {
		for (uint64_t b = (at->count - 1) / per + 1; b-- > 0 && !err;) {
			uint64_t pos = ATOM_UNATOM_BASE + b * bs;
			bool changed = false;
			if ((err = repair_atom_rw(vol, pos, blk, bs, false)))
				break;
			for (unsigned k = per; k-- > 0;) {
				uint64_t atom = b * per + k;
				if (!atom || atom >= at->count ||
				    at->names[atom])
					continue;
				uint64_t val = ATOM_FREE_MAGIC << 32 | next;
				if (be64(blk + 8 * k) != val) {
					put_be64(blk + 8 * k, val);
					changed = true;
				}
				next = (uint32_t)atom;
			}
			if (changed)
				err = repair_atom_rw(vol, pos, blk, bs, true);
		}
	}
	free(blk);
	if (!err && vol->super.freeatom != next) {
		vol->super.freeatom = next;
		vol->super_dirty = true;
	}
	return err;
}

/* The superblock's atomdictsize, the bytes of inode 4 that hold the
 * dictionary (atom.c reads names up to it), written by the commit. */
void repair_set_atomdictsize(struct tux3_volume *vol, uint64_t size)
{
	vol->super.atomdictsize = size;
	vol->super_dirty = true;
}

/* The superblock's atomgen, the first atom never handed out, written by
 * the commit.  freeatom must stay below it: a head at or past it is
 * dropped (0, an empty list), for the free list check to rebuild. */
void repair_set_atomgen(struct tux3_volume *vol, uint32_t gen)
{
	vol->super.atomgen = gen;
	if (vol->super.freeatom >= vol->super.atomgen)
		vol->super.freeatom = 0;
	vol->super_dirty = true;
}

/* A named atom that nothing uses goes the way the write path frees one:
 * atom_put of its last reference (so the count is made 1 first). */
int repair_atom_free(struct tux3_volume *vol, unsigned atom, uint32_t ref)
{
	int err = repair_atom_set_refcount(vol, atom, ref, 1);
	return err ? err : atom_put(vol, atom);
}

/* Drop every XATTR attribute of inum that uses atom (values stay in the
 * blob copy; the encoder writes only the listed ones). */
int repair_xattr_drop(struct tux3_volume *vol, tux3_ino_t inum,
		      unsigned atom)
{
	struct inode inode;
	int err = inode_load(vol, inum, &inode);
	if (err)
		return err;
	unsigned k = 0;
	for (unsigned i = 0; i < inode.nxattr; i++)
		if (inode.xattrs[i].atom != atom)
			inode.xattrs[k++] = inode.xattrs[i];
	if (k != inode.nxattr) {
		inode.nxattr = k;
		err = inode_store(vol, &inode);
	}
	inode_free(&inode);
	return err;
}

/* ---- passes 4 and 8: the countmap and the superblock counters ---- */

/*
 * The unify writes the countmap blocks of the groups whose bitmap chunks
 * changed, from the live per-group counts; marking one chunk of the
 * group dirty makes it rewrite the group's countmap block (and the
 * chunk, unchanged).  Groups past the volume's end share the countmap
 * block of the last group.
 */
int repair_countmap_rewrite(struct tux3_volume *vol, uint64_t group)
{
	uint64_t ngroups = (vol->volblocks + (1ULL << TUX3_GROUPBITS) - 1) >>
			   TUX3_GROUPBITS;
	if (!ngroups)
		return -ERANGE;
	if (group >= ngroups)
		group = ngroups - 1;
	uint64_t block = group << TUX3_GROUPBITS;
	int err;
	struct spacemap_chunk *c = bitmap_chunk_get(vol, block >>
						    (vol->blockbits + 3), &err);
	if (!c)
		return err;
	c->flags |= BITMAP_DIRTY;
	return 0;
}

/* The unify logs this count as its FREEBLOCKS record. */
void repair_set_freeblocks(struct tux3_volume *vol, uint64_t freeblocks)
{
	vol->freeblocks = freeblocks;
}

/* The superblock's count of inode numbers in use, written by the commit
 * (pass 8 sets the count it made; pass 4 takes one off per inode it
 * clears, as inode_destroy does). */
void repair_set_usedinodes(struct tux3_volume *vol, uint64_t usedinodes)
{
	vol->super.usedinodes = usedinodes;
	vol->super_dirty = true;
}

/* ---- passes 5 and 6: internal inodes made again ---- */

/* One more inode in use (the commit writes the count). */
static void usedinodes_inc(struct tux3_volume *vol)
{
	vol->super.usedinodes++;
	vol->super_dirty = true;
}

/* A missing root directory made again, empty, as mkfs makes it (mode
 * 040755, owned by root, two links): pass 5 then connects what it named
 * to /lost+found.  A root that is there but unusable is replaced (its
 * blocks go to pass 8). */
int repair_make_root(struct tux3_volume *vol)
{
	struct inode root = {
		.inum = TUX3_ROOT_INO,
		.present = 1u << ATTR_MODE_OWNER | 1u << ATTR_CTIME_SIZE |
			   1u << ATTR_LINK_COUNT | 1u << ATTR_MTIME,
		.mode = 0040755, .nlink = 2,
	};
	struct inode old;
	bool existed = !inode_load(vol, TUX3_ROOT_INO, &old);
	if (existed)
		inode_free(&old);
	tux3_clear_error(vol);
	root.ctime = root.mtime = vol_now(vol);
	inode_atime_set(vol, &root, root.mtime);
	int err = inode_store(vol, &root);
	inode_free(&root);	/* inode_store left the encoded blob on it */
	if (!err && !existed)
		usedinodes_inc(vol);
	return err;
}

/* A missing internal file (the atom table) made again, empty: mode 0,
 * one link, the largest size, as mkfs and the first unify make them. */
int repair_make_internal(struct tux3_volume *vol, tux3_ino_t inum)
{
	struct inode inode;
	struct inode old;
	bool existed = !inode_load(vol, inum, &old);
	if (existed)
		inode_free(&old);
	tux3_clear_error(vol);
	int err = internal_inode(vol, inum, &inode);
	if (err)
		return err;
	err = inode_store(vol, &inode);
	inode_free(&inode);
	if (!err && !existed)
		usedinodes_inc(vol);
	return err;
}

/* ---- pass 9: the version marks ---- */

/* A volume has versions when its superblock has the versions magic and
 * its extension record the VERSIONS incompat feature; pass 9 makes the
 * two agree (on: both, off: neither), and the commit writes them. */
void repair_set_version_marks(struct tux3_volume *vol, bool on)
{
	superext_set_incompat(vol, TUX3_FEATURE_INCOMPAT_VERSIONS, on);
}

/* The superblock written at the commit as the open left it in memory
 * (e.g. with the hints it recomputed). */
void repair_super_rewrite(struct tux3_volume *vol)
{
	vol->super_dirty = true;
}

/* ---- the commit of the repairs ---- */

static int cmp_free(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;	/* { block, count }: block first */
	return *x < *y ? -1 : *x > *y;
}

/*
 * Two repairs may release one block (a leaf cut out of its tree whose
 * extents a later pass releases with the inode): the volume needs it
 * free once.  The delta's frees are merged where they overlap before the
 * commit checks them (balloc_commit_check refuses a block freed twice,
 * which outside fsck is a fault of the write path).
 */
void repair_merge_frees(struct tux3_volume *vol)
{
	struct extent_list *l = &vol->defer_free;
	if (l->count < 2)
		return;
	qsort(l->v, l->count, sizeof(l->v[0]), cmp_free);
	size_t k = 0;
	for (size_t i = 1; i < l->count; i++) {
		uint64_t end = l->v[k].block + l->v[k].count;
		if (l->v[i].block <= end) {
			uint64_t iend = l->v[i].block + l->v[i].count;
			if (iend > end)
				l->v[k].count = iend - l->v[k].block;
		} else {
			l->v[++k] = l->v[i];
		}
	}
	l->count = k + 1;
}

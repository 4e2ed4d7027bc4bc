/*
 * Orphans: inodes unlinked while open, whose space is still in use.  They
 * live in the otree (oleaf blobs of one ORPHAN attribute head) after a
 * unify, and as ORPHAN_ADD/ORPHAN_DEL records before.  The live list is
 * (otree entries - ORPHAN_DEL'd ones) + uncancelled ORPHAN_ADDs.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "core.h"

int orphan_add(struct orphan_set *s, tux3_ino_t inum)
{
	if (orphan_has(s, inum))
		return 0;
	if (s->count == s->cap) {
		unsigned ncap = s->cap ? s->cap * 2 : 16;
		tux3_ino_t *n = realloc(s->inums, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		s->inums = n;
		s->cap = ncap;
	}
	s->inums[s->count++] = inum;
	return 0;
}

bool orphan_del(struct orphan_set *s, tux3_ino_t inum)
{
	for (unsigned i = 0; i < s->count; i++) {
		if (s->inums[i] == inum) {
			s->inums[i] = s->inums[--s->count];
			return true;
		}
	}
	return false;
}

bool orphan_has(const struct orphan_set *s, tux3_ino_t inum)
{
	for (unsigned i = 0; i < s->count; i++)
		if (s->inums[i] == inum)
			return true;
	return false;
}

void orphan_set_free(struct orphan_set *s)
{
	free(s->inums);
	memset(s, 0, sizeof(*s));
}

static int oleaf_collect(void *ctx, struct btree *bt, uint64_t blocknr,
			 const uint8_t *leaf, uint64_t lo, uint64_t hi)
{
	struct orphan_set *s = ctx;
	uint64_t ibase = ileaf_ibase(leaf);
	unsigned count = ileaf_count(leaf);
	(void)lo; (void)hi;

	for (unsigned k = 0; k < count; k++) {
		const uint8_t *blob;
		unsigned len;
		ileaf_blob(leaf, bt->vol->blocksize, ibase + k, &blob, &len);
		if (!len)
			continue;
		if (len != 2 || be16(blob) != 0)
			return vol_error(bt->vol, -EUCLEAN, blocknr, ibase + k,
					 TUX3_NONE, "oleaf: orphan %" PRIu64
					 " has a %u-byte record (expected one "
					 "2-byte ORPHAN head)", ibase + k, len);
		int err = orphan_add(s, ibase + k);
		if (err)
			return err;
	}
	return 0;
}

int otree_load(struct tux3_volume *vol, struct orphan_set *s)
{
	static const struct btree_visit visit = { .leaf = oleaf_collect };
	struct btree bt = { .vol = vol, .root = vol->oroot, .ops = &otree_ops };

	if (!vol->super.oroot)
		return 0;
	return btree_traverse(&bt, &visit, s);
}

/* Build the live orphan list after replay. */
int orphans_resolve(struct tux3_volume *vol)
{
	int err = otree_load(vol, &vol->orphans);
	if (err)
		return err;
	for (unsigned i = 0; i < vol->otree_deletes.count; i++)
		orphan_del(&vol->orphans, vol->otree_deletes.inums[i]);
	for (unsigned i = 0; i < vol->log_orphans.count; i++)
		if ((err = orphan_add(&vol->orphans, vol->log_orphans.inums[i])))
			return err;
	return 0;
}

/* fsck's salvage of a damaged orphan table: what the readable leaves
 * hold, a record of the wrong size skipped, a damaged node or leaf
 * passed by (fsck's pass 3 cuts it out; the orphans it held are found
 * as unreachable inodes). */
static int oleaf_salvage(void *ctx, struct btree *bt, uint64_t blocknr,
			 const uint8_t *leaf, uint64_t lo, uint64_t hi)
{
	struct orphan_set *s = ctx;
	uint64_t ibase = ileaf_ibase(leaf);
	(void)blocknr; (void)lo; (void)hi;

	for (unsigned k = 0; k < ileaf_count(leaf); k++) {
		const uint8_t *blob;
		unsigned len;
		ileaf_blob(leaf, bt->vol->blocksize, ibase + k, &blob, &len);
		if (len != 2 || be16(blob) != 0)
			continue;
		int err = orphan_add(s, ibase + k);
		if (err)
			return err;
	}
	return 0;
}

static int otree_pass_by(void *ctx, struct btree *bt, int level,
			 uint64_t blocknr, int err)
{
	(void)ctx; (void)level; (void)blocknr;
	tux3_clear_error(bt->vol);
	return err == -ENOMEM ? err : 0;
}

int orphans_resolve_salvage(struct tux3_volume *vol)
{
	static const struct btree_visit visit = { .leaf = oleaf_salvage,
						  .bad = otree_pass_by };
	struct btree bt = { .vol = vol, .root = vol->oroot, .ops = &otree_ops };
	int err = 0;

	orphan_set_free(&vol->orphans);
	tux3_clear_error(vol);
	if (vol->super.oroot)
		err = btree_traverse(&bt, &visit, &vol->orphans);
	if (err == -ENOMEM)
		return err;
	tux3_clear_error(vol);
	for (unsigned i = 0; i < vol->otree_deletes.count; i++)
		orphan_del(&vol->orphans, vol->otree_deletes.inums[i]);
	for (unsigned i = 0; i < vol->log_orphans.count; i++)
		if ((err = orphan_add(&vol->orphans, vol->log_orphans.inums[i])))
			return err;
	return 0;
}

unsigned tux3_orphan_count(const struct tux3_volume *vol)
{
	return vol->orphans.count;
}

tux3_ino_t tux3_orphan(const struct tux3_volume *vol, unsigned i)
{
	return i < vol->orphans.count ? vol->orphans.inums[i] : 0;
}

/*
 * The atom table (inode 4): xattr names are stored once, as "atoms".
 *   dictionary    logical byte 0: directory-format records, the atom number
 *                 in the inum field; valid up to the superblock's
 *                 atomdictsize
 *   refcounts     byte 2^40: pairs of blocks, be16 low halves in the even
 *                 block and high halves in the odd one, blocksize/2 atoms
 *                 per pair
 *   reverse map   byte 2^40 + 2^34: be64 per atom, the dictionary offset of
 *                 its name, or 0x6eadfcee << 32 | next free atom
 */
#include <inttypes.h>
#include <stdlib.h>
#include "core.h"

struct dict_load {
	struct tux3_volume *vol;
	struct atom_table *at;
	uint64_t blocknr;
};

static int dict_record(void *ctx, const struct dirent_info *d)
{
	struct dict_load *l = ctx;
	struct tux3_volume *vol = l->vol;
	struct atom_table *at = l->at;

	if (d->pos >= vol->super.atomdictsize)
		return 0;	/* beyond the dictionary's valid size */
	if (d->inum >= at->count)
		return vol_error(vol, -EUCLEAN, l->blocknr, TUX3_ATABLE_INO,
				 d->pos, "atom dictionary: record '%.*s' has "
				 "atom %" PRIu64 ", not below atomgen %u",
				 (int)d->name_len, d->name, d->inum,
				 at->count);
	if (at->names[d->inum])
		return vol_error(vol, -EUCLEAN, l->blocknr, TUX3_ATABLE_INO,
				 d->pos, "atom dictionary: atom %" PRIu64
				 " defined twice ('%s' and '%.*s')", d->inum,
				 at->names[d->inum], (int)d->name_len, d->name);
	at->names[d->inum] = strndup(d->name, d->name_len);
	if (!at->names[d->inum])
		return -ENOMEM;
	at->dictpos[d->inum] = d->pos;
	return 0;
}

/* Reads the atable data as a directory of atomdictsize bytes. */
int atable_load(struct tux3_volume *vol)
{
	struct atom_table *at = &vol->atoms;
	struct inode atable;
	int err;

	if (at->loaded)
		return 0;
	/* Atoms are 16 bits in an XATTR attribute, so atomgen (the next
	 * atom) is at most 65536.  A larger value is corruption, and
	 * trusting it would size the tables below by up to 2^32 entries. */
	if (vol->super.atomgen > 65536)
		return vol_error(vol, -EUCLEAN, TUX3_NONE, TUX3_ATABLE_INO,
				 TUX3_SB_OFFSET + 84, "superblock: atomgen %u "
				 "exceeds 65536 (atoms are 16 bits on disk)",
				 vol->super.atomgen);
	at->count = vol->super.atomgen;
	at->names = calloc(at->count ? at->count : 1, sizeof(*at->names));
	at->dictpos = calloc(at->count ? at->count : 1, sizeof(*at->dictpos));
	if (!at->names || !at->dictpos) {
		atable_free(at);
		return -ENOMEM;
	}
	if (!vol->super.atomdictsize) {
		at->loaded = true;
		return 0;
	}
	err = inode_load(vol, TUX3_ATABLE_INO, &atable);
	if (err)
		goto fail;
	uint8_t *buf = malloc(vol->blocksize);
	if (!buf) {
		inode_free(&atable);
		err = -ENOMEM;
		goto fail;
	}
	uint64_t nblocks = (vol->super.atomdictsize + vol->blocksize - 1) >>
			   vol->blockbits;
	for (uint64_t i = 0; i < nblocks && !err; i++) {
		uint64_t physical, run;
		err = filemap_lookup(vol, &atable, i, &physical, &run);
		if (err)
			break;
		if (!physical) {
			err = vol_error(vol, -EUCLEAN, TUX3_NONE,
					TUX3_ATABLE_INO, i << vol->blockbits,
					"atom dictionary block %" PRIu64
					" is a hole", i);
			break;
		}
		struct dict_load l = { vol, at, physical };
		err = vol_read_block(vol, physical, buf);
		if (!err)
			err = dirblock_iterate(vol, buf, vol->blocksize,
					       i << vol->blockbits, physical,
					       TUX3_ATABLE_INO, dict_record,
					       &l);
	}
	free(buf);
	inode_free(&atable);
	if (err)
		goto fail;
	at->loaded = true;
	return 0;
fail:
	atable_free(at);
	return err < 0 ? err : -EUCLEAN;
}

const char *atom_name(struct tux3_volume *vol, unsigned atom)
{
	if (atable_load(vol) || atom >= vol->atoms.count)
		return NULL;
	return vol->atoms.names[atom];
}

static int atable_read_be(struct tux3_volume *vol, uint64_t bytepos,
			  unsigned width, uint64_t *val)
{
	struct inode atable;
	int err = inode_load(vol, TUX3_ATABLE_INO, &atable);
	if (err)
		return err;
	uint8_t *buf = malloc(vol->blocksize);
	if (!buf) {
		inode_free(&atable);
		return -ENOMEM;
	}
	err = filemap_read_block(vol, &atable, bytepos >> vol->blockbits, buf);
	if (!err) {
		const uint8_t *p = buf + (bytepos & (vol->blocksize - 1));
		*val = width == 2 ? be16(p) : be64(p);
	}
	free(buf);
	inode_free(&atable);
	return err;
}

int atom_refcount(struct tux3_volume *vol, unsigned atom, uint32_t *ref)
{
	unsigned per = vol->blocksize / 2;
	uint64_t pair = atom / per, slot = atom % per;
	uint64_t base = ATOM_REFCOUNT_BASE + (pair * 2 << vol->blockbits);
	uint64_t lo, hi;
	int err = atable_read_be(vol, base + slot * 2, 2, &lo);
	if (!err)
		err = atable_read_be(vol, base + vol->blocksize + slot * 2, 2,
				     &hi);
	if (!err)
		*ref = (uint32_t)(hi << 16 | lo);
	return err;
}

int atom_unatom(struct tux3_volume *vol, unsigned atom, uint64_t *val)
{
	return atable_read_be(vol, ATOM_UNATOM_BASE + (uint64_t)atom * 8, 8,
			      val);
}

void atable_free(struct atom_table *at)
{
	if (at->names)
		for (unsigned i = 0; i < at->count; i++)
			free(at->names[i]);
	free(at->names);
	free(at->dictpos);
	memset(at, 0, sizeof(*at));
}

int tux3_atoms(struct tux3_volume *vol, tux3_atom_fn fn, void *ctx)
{
	int err = atable_load(vol);
	if (err)
		return err;
	for (unsigned atom = 0; atom < vol->atoms.count; atom++) {
		struct tux3_atom a = { .atom = atom };
		if (!vol->atoms.names[atom])
			continue;
		a.name = vol->atoms.names[atom];
		a.dictpos = vol->atoms.dictpos[atom];
		if ((err = atom_refcount(vol, atom, &a.refcount)) ||
		    (err = atom_unatom(vol, atom, &a.unatom)))
			return err;
		if ((err = fn(ctx, &a)))
			return err;
	}
	return 0;
}

/*
 * The free list: superblock freeatom, then each free atom's reverse-map
 * entry holds 0x6eadfcee << 32 | next.  It ends at 0 and can hold at
 * most atomgen atoms, which bounds the walk even on a looping list.
 */
int tux3_atom_freelist(struct tux3_volume *vol, int (*fn)(void *ctx,
		       unsigned atom), void *ctx)
{
	uint32_t atom = vol->super.freeatom, steps = 0;
	int err = atable_load(vol);
	if (err)
		return err;
	while (atom) {
		uint64_t val;
		uint64_t off = ATOM_UNATOM_BASE + (uint64_t)atom * 8;
		if (atom >= vol->atoms.count || ++steps > vol->atoms.count)
			return vol_error(vol, -EUCLEAN, TUX3_NONE,
					 TUX3_ATABLE_INO, off, "atom free list: "
					 "atom %u %s", atom,
					 atom >= vol->atoms.count ?
					 "not below atomgen" : "loops");
		if ((err = atom_unatom(vol, atom, &val)))
			return err;
		if (val >> 32 != ATOM_FREE_MAGIC)
			return vol_error(vol, -EUCLEAN, TUX3_NONE,
					 TUX3_ATABLE_INO, off, "atom free list: "
					 "atom %u is not marked free (reverse "
					 "map 0x%016" PRIx64 ")", atom, val);
		if (vol->atoms.names[atom])
			return vol_error(vol, -EUCLEAN, TUX3_NONE,
					 TUX3_ATABLE_INO, off, "atom free list: "
					 "atom %u is free but still names '%s'",
					 atom, vol->atoms.names[atom]);
		if ((err = fn(ctx, atom)))
			return err;
		atom = (uint32_t)val;
	}
	return 0;
}

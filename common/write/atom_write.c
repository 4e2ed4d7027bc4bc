/*
 * Changing the atom table (inode 4): new atoms (from the free list, else
 * atomgen), reference counts, and atoms freed when their count reaches
 * zero.  All of it is ordinary file data of inode 4, written through the
 * copy-on-write data path; the superblock carries atomdictsize, freeatom
 * and atomgen.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "write/write.h"

#define ATOM_LIMIT 65536	/* atoms are 16 bits in XATTR attributes */

int atable_rw(struct tux3_volume *vol, uint64_t pos, void *buf,
	      unsigned len, bool write)
{
	struct inode atable;
	int err = inode_load(vol, TUX3_ATABLE_INO, &atable);
	if (err)
		return err;
	if (write) {
		err = inode_write_data(vol, &atable, buf, len, pos, true);
		if (!err)
			err = inode_store(vol, &atable);
	} else {
		size_t done;
		err = inode_read(vol, &atable, buf, len, pos, &done);
		if (!err && done < len)
			memset((uint8_t *)buf + done, 0, len - done);
	}
	inode_free(&atable);
	return err;
}

uint64_t atom_refcount_pos(const struct tux3_volume *vol, unsigned atom,
			   bool high)
{
	unsigned per = vol->blocksize / 2;
	uint64_t pair = atom / per;
	return ATOM_REFCOUNT_BASE + ((pair * 2 + (high ? 1 : 0)) <<
				     vol->blockbits) + (atom % per) * 2;
}

static int refcount_set(struct tux3_volume *vol, unsigned atom, uint32_t ref)
{
	uint8_t lo[2], hi[2];
	put_be16(lo, (uint16_t)ref);
	put_be16(hi, (uint16_t)(ref >> 16));
	int err = atable_rw(vol, atom_refcount_pos(vol, atom, false), lo, 2,
			    true);
	if (!err)
		err = atable_rw(vol, atom_refcount_pos(vol, atom, true), hi, 2,
				true);
	return err;
}

/* An atom's reverse-map entry: its name's byte position in the
 * dictionary, or the free-list link. */
int atom_set_unatom(struct tux3_volume *vol, unsigned atom, uint64_t val)
{
	uint8_t b[8];
	put_be64(b, val);
	return atable_rw(vol, ATOM_UNATOM_BASE + (uint64_t)atom * 8, b, 8, true);
}

static int names_grow(struct atom_table *at, unsigned count)
{
	if (count <= at->count)
		return 0;
	char **n = realloc(at->names, count * sizeof(*n));
	if (!n)
		return -ENOMEM;
	at->names = n;
	uint64_t *d = realloc(at->dictpos, count * sizeof(*d));
	if (!d)
		return -ENOMEM;
	at->dictpos = d;
	for (unsigned i = at->count; i < count; i++) {
		at->names[i] = NULL;
		at->dictpos[i] = 0;
	}
	at->count = count;
	return 0;
}

/* Put the name's record in the dictionary: the first block with room,
 * else a new block at the end (atomdictsize grows by whole blocks). */
static int dict_add(struct tux3_volume *vol, const char *name, unsigned len,
		    unsigned atom, uint64_t *pos)
{
	unsigned bs = vol->blocksize;
	uint64_t nblocks = vol->super.atomdictsize >> vol->blockbits;
	uint8_t *blk = malloc(bs);
	int err = -ENOSPC;

	if (!blk)
		return -ENOMEM;
	for (uint64_t i = 0; i <= nblocks && err == -ENOSPC; i++) {
		if (i < nblocks) {
			err = atable_rw(vol, i << vol->blockbits, blk, bs,
					false);
			if (err)
				break;
		} else {
			dirblock_init(blk, bs);
		}
		int off = dirblock_add(blk, bs, name, len, atom, 0);
		if (off < 0) {
			err = off;
			continue;
		}
		err = atable_rw(vol, i << vol->blockbits, blk, bs, true);
		*pos = (i << vol->blockbits) + (unsigned)off;
		if (!err && i == nblocks) {
			vol->super.atomdictsize += bs;
			vol->super_dirty = true;
		}
	}
	free(blk);
	return err;
}

/* The dictionary record at byte pos is deleted in place. */
int atom_dict_delete(struct tux3_volume *vol, uint64_t pos)
{
	unsigned bs = vol->blocksize;
	uint8_t *blk = malloc(bs);
	uint64_t base = pos & ~(uint64_t)(bs - 1);
	if (!blk)
		return -ENOMEM;
	int err = atable_rw(vol, base, blk, bs, false);
	if (!err)
		err = dirblock_delete(blk, bs, (unsigned)(pos - base));
	if (!err)
		err = atable_rw(vol, base, blk, bs, true);
	free(blk);
	return err;
}

int atom_find(struct tux3_volume *vol, const char *name, unsigned *atom)
{
	int err = atable_load(vol);
	if (err)
		return err;
	for (unsigned a = 1; a < vol->atoms.count; a++)
		if (vol->atoms.names[a] && !strcmp(vol->atoms.names[a], name)) {
			*atom = a;
			return 0;
		}
	return -ENOENT;
}

/* The atom of a name, made if new; its reference count goes up by one. */
int atom_get(struct tux3_volume *vol, const char *name, unsigned *atomp)
{
	struct atom_table *at = &vol->atoms;
	unsigned len = (unsigned)strlen(name), atom;
	uint32_t ref;
	int err = atom_find(vol, name, &atom);

	if (err == -ENOENT) {
		if (!len || len > ATOM_NAME_MAX)
			return -ERANGE;
		uint64_t next = 0;
		if (vol->super.freeatom) {
			atom = vol->super.freeatom;
			if ((err = atom_unatom(vol, atom, &next)))
				return err;
			if (next >> 32 != ATOM_FREE_MAGIC)
				return vol_error(vol, -EUCLEAN, TUX3_NONE,
						 TUX3_ATABLE_INO,
						 ATOM_UNATOM_BASE + atom * 8ULL,
						 "atom free list: atom %u is "
						 "not marked free", atom);
		} else {
			if (vol->super.atomgen >= ATOM_LIMIT)
				return -ENOSPC;
			atom = vol->super.atomgen;
		}
		uint64_t pos = 0;
		if ((err = names_grow(at, atom + 1)) ||
		    (err = dict_add(vol, name, len, atom, &pos)) ||
		    (err = atom_set_unatom(vol, atom, pos)) ||
		    (err = refcount_set(vol, atom, 0)))
			return err;
		if (vol->super.freeatom == atom)
			vol->super.freeatom = (uint32_t)next;
		else
			vol->super.atomgen = atom + 1;
		vol->super_dirty = true;
		if (!(at->names[atom] = strdup(name)))
			return -ENOMEM;
		at->dictpos[atom] = pos;
	} else if (err) {
		return err;
	}
	if ((err = atom_refcount(vol, atom, &ref)) ||
	    (err = refcount_set(vol, atom, ref + 1)))
		return err;
	*atomp = atom;
	return 0;
}

/* n more references to an atom in use (versions keeping old values). */
/* The reference count of an atom in use; -EINVAL for one that is not. */
static int live_refcount(struct tux3_volume *vol, unsigned atom, uint32_t *ref)
{
	struct atom_table *at = &vol->atoms;
	int err = atable_load(vol);
	if (err)
		return err;
	if (atom >= at->count || !at->names[atom])
		return -EINVAL;
	return atom_refcount(vol, atom, ref);
}

int atom_ref_add(struct tux3_volume *vol, unsigned atom, unsigned n)
{
	uint32_t ref;
	int err = live_refcount(vol, atom, &ref);
	if (err)
		return err;
	if (ref > UINT32_MAX - n)
		return -EOVERFLOW;
	return refcount_set(vol, atom, ref + n);
}

/* One reference fewer; at zero the atom's name goes and the atom joins
 * the free list. */
int atom_put(struct tux3_volume *vol, unsigned atom)
{
	struct atom_table *at = &vol->atoms;
	uint32_t ref;
	int err = live_refcount(vol, atom, &ref);
	if (err)
		return err;
	if (ref > 1)
		return refcount_set(vol, atom, ref - 1);
	if ((err = refcount_set(vol, atom, 0)) ||
	    (err = atom_dict_delete(vol, at->dictpos[atom])) ||
	    (err = atom_set_unatom(vol, atom, ATOM_FREE_MAGIC << 32 |
				   vol->super.freeatom)))
		return err;
	vol->super.freeatom = atom;
	vol->super_dirty = true;
	free(at->names[atom]);
	at->names[atom] = NULL;
	return 0;
}

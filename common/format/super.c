/*
 * Superblock (at byte 4096 for every block size) and packed roots.
 * The reference trusts everything after the magic; we validate every
 * field before anything else uses it.
 */
#include <inttypes.h>
#include "format/format.h"

const uint8_t tux3_magic_2014[8] = { 't', 'u', 'x', '3', 0x20, 0x14, 0x05, 0x06 };
/* A volume with versions (format.md 17.4): the reference compares the
 * eight magic bytes and nothing else, so it refuses this one. */
const uint8_t tux3_magic_versions[8] = { 't', 'u', 'x', '3', 'v', 'e', 'r', '1' };

/* A volume with an incompat feature other than versions (today ATIME,
 * format.md 15.6): the layout is the 2014 one plus what the extension
 * record's incompat bits announce; the reference refuses it likewise. */
const uint8_t tux3_magic_features[8] = { 't', 'u', 'x', '3', 'i', 'n', 'c', '1' };

bool tux3_magic_ok(const uint8_t *magic)
{
	return !memcmp(magic, tux3_magic_2014, 8) ||
	       !memcmp(magic, tux3_magic_versions, 8) ||
	       !memcmp(magic, tux3_magic_features, 8);
}

const uint8_t *tux3_magic_for(uint32_t incompat)
{
	if (incompat & TUX3_FEATURE_INCOMPAT_VERSIONS)
		return tux3_magic_versions;
	return incompat ? tux3_magic_features : tux3_magic_2014;
}

struct root root_unpack(uint64_t packed)
{
	struct root r = { 0 };
	r.block = packed & TUX3_MAX_BLOCK;
	r.direct = (packed >> 63) & 1;
	unsigned field = (unsigned)((packed >> 48) & 0x7fff);
	if (r.direct)
		r.count = field;
	else
		r.depth = field;
	return r;
}

uint64_t root_pack(struct root r)
{
	uint64_t field = r.direct ? r.count : r.depth;
	return ((uint64_t)r.direct << 63) | ((field & 0x7fff) << 48) |
	       (r.block & TUX3_MAX_BLOCK);
}

int super_decode(const uint8_t *raw, struct disksuper *sb)
{
	memcpy(sb->magic, raw, 8);
	sb->birthdate = be64(raw + 8);
	sb->flags = be64(raw + 16);
	sb->blockbits = be16(raw + 24);
	sb->volblocks = be64(raw + 32);
	sb->iroot = be64(raw + 40);
	sb->oroot = be64(raw + 48);
	sb->usedinodes = be64(raw + 56);
	sb->nextblock = be64(raw + 64);
	sb->atomdictsize = be64(raw + 72);
	sb->freeatom = be32(raw + 80);
	sb->atomgen = be32(raw + 84);
	sb->logchain = be64(raw + 88);
	sb->logcount = be32(raw + 96);
	return 0;
}

/* Errors name the byte offset of the field at fault (the superblock
 * area starts at TUX3_SB_OFFSET), so that a checker can tell them apart
 * without reading the text. */
static int check_tree_root(struct tux3_volume *vol, uint64_t packed,
			   const char *name, unsigned field, bool required)
{
	struct root r = root_unpack(packed);
	uint64_t at = TUX3_SB_OFFSET + field;

	if (!packed) {
		if (required)
			return vol_error(vol, -EUCLEAN, TUX3_NONE, TUX3_NONE, at,
					 "superblock: %s root is empty", name);
		return 0;
	}
	if (r.direct)
		return vol_error(vol, -EUCLEAN, TUX3_NONE, TUX3_NONE, at,
				 "superblock: %s root 0x%016" PRIx64
				 " is marked direct", name, packed);
	if (r.depth < 1 || r.depth > TUX3_MAX_DEPTH)
		return vol_error(vol, -EUCLEAN, TUX3_NONE, TUX3_NONE, at,
				 "superblock: %s root depth %u out of range "
				 "1..%u", name, r.depth, TUX3_MAX_DEPTH);
	if (r.block < vol->reserved_blocks || r.block >= vol->volblocks)
		return vol_error(vol, -EUCLEAN, TUX3_NONE, TUX3_NONE, at,
				 "superblock: %s root block %" PRIu64
				 " outside the volume (%" PRIu64 " blocks)",
				 name, r.block, vol->volblocks);
	return 0;
}

/* Validate the decoded superblock against itself and the device. */
int super_check(struct tux3_volume *vol)
{
	struct disksuper *sb = &vol->super;
	int err;

	if (!tux3_magic_ok(sb->magic))
		return vol_error(vol, -EUCLEAN, TUX3_NONE, TUX3_NONE,
				 TUX3_SB_OFFSET, "bad superblock magic "
				 "%02x%02x%02x%02x%02x%02x%02x%02x (not a Tux3 "
				 "2014-05-06 volume, nor one with versions)", sb->magic[0],
				 sb->magic[1], sb->magic[2], sb->magic[3],
				 sb->magic[4], sb->magic[5], sb->magic[6],
				 sb->magic[7]);
	if (sb->blockbits < TUX3_MIN_BLOCKBITS ||
	    sb->blockbits > TUX3_MAX_BLOCKBITS)
		return vol_error(vol, -EUCLEAN, TUX3_NONE, TUX3_NONE,
				 TUX3_SB_OFFSET + 24, "superblock: blockbits %u"
				 " out of range %u..%u", sb->blockbits,
				 TUX3_MIN_BLOCKBITS, TUX3_MAX_BLOCKBITS);
	vol->blockbits = sb->blockbits;
	vol->blocksize = 1u << sb->blockbits;
	vol->reserved_blocks = vol->blocksize >= TUX3_RESERVED_BYTES ? 1 :
			       TUX3_RESERVED_BYTES >> sb->blockbits;
	uint64_t devblocks = vol->dev.size >> sb->blockbits;
	if (sb->volblocks > TUX3_MAX_BLOCK ||
	    sb->volblocks <= vol->reserved_blocks + 1)
		return vol_error(vol, -EUCLEAN, TUX3_NONE, TUX3_NONE,
				 TUX3_SB_OFFSET + 32, "superblock: volblocks %"
				 PRIu64 " is not a possible volume size",
				 sb->volblocks);
	if (sb->volblocks > devblocks)
		return vol_error(vol, -EUCLEAN, TUX3_NONE, TUX3_NONE,
				 TUX3_SB_OFFSET + 32, "superblock: volume has %"
				 PRIu64 " blocks but the device holds only %"
				 PRIu64 " (truncated image?)", sb->volblocks,
				 devblocks);
	if (vol->volblocks != sb->volblocks)	/* checks bound by it go */
		node_memo_clear(&vol->memo);
	vol->volblocks = sb->volblocks;
	if ((err = check_tree_root(vol, sb->iroot, "inode table", 40, true)))
		return err;
	if ((err = check_tree_root(vol, sb->oroot, "orphan table", 48,
				   false)))
		return err;
	if (sb->logcount > vol->volblocks)
		return vol_error(vol, -EUCLEAN, TUX3_NONE, TUX3_NONE,
				 TUX3_SB_OFFSET + 96,
				 "superblock: logcount %u exceeds the volume",
				 sb->logcount);
	if (sb->logcount && (sb->logchain < vol->reserved_blocks ||
			     sb->logchain >= vol->volblocks))
		return vol_error(vol, -EUCLEAN, TUX3_NONE, TUX3_NONE,
				 TUX3_SB_OFFSET + 88,
				 "superblock: logchain %" PRIu64
				 " outside the volume", sb->logchain);
	if (sb->usedinodes > TUX3_KEY_LIMIT)
		return vol_error(vol, -EUCLEAN, TUX3_NONE, TUX3_NONE,
				 TUX3_SB_OFFSET + 56,
				 "superblock: usedinodes %" PRIu64
				 " exceeds 2^48", sb->usedinodes);
	if (sb->atomdictsize > ATOM_REFCOUNT_BASE)
		return vol_error(vol, -EUCLEAN, TUX3_NONE, TUX3_NONE,
				 TUX3_SB_OFFSET + 72,
				 "superblock: atomdictsize %" PRIu64
				 " overlaps the refcount table", sb->atomdictsize);
	super_drop_bad_hints(vol);
	return 0;
}

/* The hints a writer keeps for itself, not facts a reader needs: where to
 * allocate next, and the head of the free-atom list.  An impossible one
 * is dropped (the writer recomputes it: no goal, an empty free list whose
 * atoms fsck.tux3 gives back) and never refuses the volume.  Returns the
 * hints dropped (SUPER_HINT_*). */
unsigned super_drop_bad_hints(struct tux3_volume *vol)
{
	struct disksuper *sb = &vol->super;
	unsigned dropped = super_bad_hints(sb, vol->volblocks);
	enum tux3_warning_source src = vol->warn_source;
	vol->warn_source = TUX3_WARN_OTHER;	/* not superblock damage */
	if (dropped & SUPER_HINT_NEXTBLOCK) {
		vol_warn(vol, "superblock: the allocation hint nextblock %"
			 PRIu64 " is outside the volume: ignored",
			 sb->nextblock);
		sb->nextblock = 0;
	}
	if (dropped & SUPER_HINT_FREEATOM) {
		vol_warn(vol, "superblock: the free-atom list head %u is not "
			 "below atomgen %u: the list is ignored",
			 sb->freeatom, sb->atomgen);
		sb->freeatom = 0;
	}
	vol->warn_source = src;
	return dropped;
}

/* Which hints of sb are impossible on a volume of volblocks. */
unsigned super_bad_hints(const struct disksuper *sb, uint64_t volblocks)
{
	unsigned bad = 0;
	if (sb->nextblock > volblocks)
		bad |= SUPER_HINT_NEXTBLOCK;
	if (sb->freeatom && sb->freeatom >= sb->atomgen)
		bad |= SUPER_HINT_FREEATOM;
	return bad;
}

/* The inverse of super_decode: fields only; the rest of the 4 KiB area
 * (our extension record, and whatever else is there) is kept as it is. */
void super_encode(uint8_t *raw, const struct disksuper *sb)
{
	memcpy(raw, sb->magic, 8);
	put_be64(raw + 8, sb->birthdate);
	put_be64(raw + 16, sb->flags);
	put_be16(raw + 24, (uint16_t)sb->blockbits);
	put_be64(raw + 32, sb->volblocks);
	put_be64(raw + 40, sb->iroot);
	put_be64(raw + 48, sb->oroot);
	put_be64(raw + 56, sb->usedinodes);
	put_be64(raw + 64, sb->nextblock);
	put_be64(raw + 72, sb->atomdictsize);
	put_be32(raw + 80, sb->freeatom);
	put_be32(raw + 84, sb->atomgen);
	put_be64(raw + 88, sb->logchain);
	put_be32(raw + 96, sb->logcount);
}

void tux3_super_info(const struct tux3_volume *vol,
		     struct tux3_super_info *info)
{
	const struct disksuper *sb = &vol->super;
	memcpy(info->magic, sb->magic, 8);
	info->birthdate = sb->birthdate;
	info->flags = sb->flags;
	info->blockbits = sb->blockbits;
	info->blocksize = vol->blocksize;
	info->volblocks = sb->volblocks;
	info->iroot = sb->iroot;
	info->oroot = sb->oroot;
	info->usedinodes = sb->usedinodes;
	info->nextblock = sb->nextblock;
	info->atomdictsize = sb->atomdictsize;
	info->freeatom = sb->freeatom;
	info->atomgen = sb->atomgen;
	info->logchain = sb->logchain;
	info->logcount = sb->logcount;
	info->freeblocks = vol->freeblocks;
	info->live_iroot = root_pack(vol->iroot);
	info->replayed = vol->replayed;
}

int tux3_statfs(struct tux3_volume *vol, struct tux3_statfs *st)
{
	st->bsize = vol->blocksize;
	st->blocks = vol->volblocks;
	st->bfree = vol->freeblocks;
	st->files = TUX3_KEY_LIMIT;	/* inode numbers are 48 bits */
	st->ffree = TUX3_KEY_LIMIT - vol->super.usedinodes;
	st->namelen = 255;
	return 0;
}

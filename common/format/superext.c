/*
 * The superblock extension record (doc/format.md section 15): identity,
 * feature masks and a seal, in the second 512-byte sector of the
 * superblock area, bytes the reference Tux3 code writes back unchanged.
 *
 * The record is one sector so that a torn write cannot leave half of an
 * old record beside half of a new one; its CRC32C covers bytes 0..507.
 */
#include <stdio.h>
#include "format/format.h"

static bool all_zero(const uint8_t *p, size_t len)
{
	while (len--)
		if (*p++)
			return false;
	return true;
}

int superext_decode(const uint8_t *sb4096, struct tux3_identity *id,
		    struct superext_seal *seal, char *why, size_t whylen)
{
	const uint8_t *r = sb4096 + SUPEREXT_OFFSET;

	memset(id, 0, sizeof(*id));
	memset(seal, 0, sizeof(*seal));
	if (whylen)
		why[0] = 0;
	if (be32(r) != SUPEREXT_MAGIC) {
		if (all_zero(r, SUPEREXT_SIZE))
			return 0;
		snprintf(why, whylen, "bytes are not zero but carry no "
			 "extension magic (0x%08x)", be32(r));
		return -EUCLEAN;
	}
	uint32_t want = be32(r + SUPEREXT_CRC_OFFSET);
	uint32_t got = tux3_crc32c(0, r, SUPEREXT_CRC_OFFSET);
	if (want != got) {
		snprintf(why, whylen, "CRC32C 0x%08x does not match the "
			 "stored 0x%08x", got, want);
		return -EUCLEAN;
	}
	unsigned version = be16(r + 4), size = be16(r + 6);
	if (version != SUPEREXT_VERSION) {
		snprintf(why, whylen, "record version %u is not known (this "
			 "build reads version %u)", version, SUPEREXT_VERSION);
		return -EUCLEAN;
	}
	if (size != SUPEREXT_SIZE) {
		snprintf(why, whylen, "record size %u, expected %u", size,
			 SUPEREXT_SIZE);
		return -EUCLEAN;
	}
	id->present = 1;
	id->version = version;
	id->compat = be32(r + 8);
	id->ro_compat = be32(r + 12);
	id->incompat = be32(r + 16);
	memcpy(id->uuid, r + 24, 16);
	memcpy(id->label, r + 40, TUX3_LABEL_MAX);
	id->label[TUX3_LABEL_MAX] = 0;
	id->mkfs_time_ns = (int64_t)be64(r + 104);
	id->seq = be64(r + 112);
	seal->seq = id->seq;
	seal->logchain = be64(r + 120);
	seal->logcount = be32(r + 128);
	seal->iroot = be64(r + 136);
	seal->oroot = be64(r + 144);
	seal->crclog = be32(r + SUPEREXT_CRCLOG_OFFSET);
	seal->dxgen = be32(r + SUPEREXT_DXGEN_OFFSET);
	return 1;
}

void superext_encode(uint8_t *sb4096, const struct tux3_identity *id,
		     const struct disksuper *sb, uint64_t seq)
{
	uint8_t *r = sb4096 + SUPEREXT_OFFSET;

	memset(r, 0, SUPEREXT_SIZE);
	put_be32(r, SUPEREXT_MAGIC);
	put_be16(r + 4, SUPEREXT_VERSION);
	put_be16(r + 6, SUPEREXT_SIZE);
	put_be32(r + 8, id->compat);
	put_be32(r + 12, id->ro_compat);
	put_be32(r + 16, id->incompat);
	memcpy(r + 24, id->uuid, 16);
	memcpy(r + 40, id->label, strnlen(id->label, TUX3_LABEL_MAX));
	put_be64(r + 104, (uint64_t)id->mkfs_time_ns);
	put_be64(r + 112, seq);
	put_be64(r + 120, sb->logchain);
	put_be32(r + 128, sb->logcount);
	put_be64(r + 136, sb->iroot);
	put_be64(r + 144, sb->oroot);
	put_be32(r + SUPEREXT_CRC_OFFSET, tux3_crc32c(0, r, SUPEREXT_CRC_OFFSET));
}

bool superext_sealed(const struct superext_seal *seal,
		     const struct disksuper *sb)
{
	return seal->logchain == sb->logchain &&
	       seal->logcount == sb->logcount &&
	       seal->iroot == sb->iroot && seal->oroot == sb->oroot;
}

int tux3_identity(const struct tux3_volume *vol, struct tux3_identity *id)
{
	*id = vol->ident;
	/* the seal as last read or written: a commit of this session
	 * re-encodes the record in sbraw (vol->seal is the one of the open) */
	struct tux3_identity now;
	struct superext_seal seal = vol->seal;
	char why[8];
	if (vol->ident.present &&
	    superext_decode(vol->sbraw, &now, &seal, why, sizeof(why)) != 1)
		seal = vol->seal;
	id->sealed = vol->ident.present && superext_sealed(&seal, &vol->super);
	return 0;
}

/* At open, right after super_check: read the record, apply the feature
 * rules.  Damage only costs the record (warning); unknown incompat
 * features refuse the volume, unknown ro_compat ones refuse writing. */
int superext_load(struct tux3_volume *vol)
{
	char why[160];
	int ret = superext_decode(vol->sbraw, &vol->ident, &vol->seal, why,
				  sizeof(why));
	if (ret < 0) {
		vol_warn(vol, "superblock extension at byte %u: %s; treated "
			 "as absent", TUX3_SB_OFFSET + SUPEREXT_OFFSET, why);
		return 0;
	}
	if (!ret)
		return 0;
	struct tux3_identity *id = &vol->ident;
	uint32_t unknown = id->incompat & ~SUPEREXT_INCOMPAT_KNOWN;
	if (unknown)
		return vol_error(vol, -EOPNOTSUPP, TUX3_NONE, TUX3_NONE,
				 TUX3_SB_OFFSET + SUPEREXT_OFFSET + 16,
				 "superblock extension: unknown incompat "
				 "features 0x%08x (this build knows 0x%08x); "
				 "cannot open the volume", unknown,
				 SUPEREXT_INCOMPAT_KNOWN);
	unknown = id->ro_compat & ~SUPEREXT_RO_COMPAT_KNOWN;
	if (unknown && (vol->mode == TUX3_OPEN_RDWR ||
			vol->mode == TUX3_OPEN_RDWR_NORECOVER))
		return vol_error(vol, -EROFS, TUX3_NONE, TUX3_NONE,
				 TUX3_SB_OFFSET + SUPEREXT_OFFSET + 12,
				 "superblock extension: unknown ro_compat "
				 "features 0x%08x (this build knows 0x%08x); "
				 "the volume may only be opened read-only",
				 unknown, SUPEREXT_RO_COMPAT_KNOWN);
	id->sealed = superext_sealed(&vol->seal, &vol->super);
	vol->dxgen = dirhash_gen_at_open(vol);
	return 0;
}

/* Label and UUID, as tune2fs -L / -U do for ext4: committed with the
 * next delta (the commit reseals the record from vol->ident). */
int tux3_set_identity(struct tux3_volume *vol, const char *label,
		      const uint8_t *uuid)
{
	if (vol->mode != TUX3_OPEN_RDWR)
		return vol_error(vol, -EROFS, TUX3_NONE, TUX3_NONE, TUX3_NONE,
				 "volume opened read-only");
	if (vol->commit_failed)
		return vol_error(vol, -EROFS, TUX3_NONE, TUX3_NONE, TUX3_NONE,
				 "an earlier commit failed: no change is taken "
				 "until the volume is reopened");
	if (label && strlen(label) > TUX3_LABEL_MAX)
		return vol_error(vol, -ERANGE, TUX3_NONE, TUX3_NONE, TUX3_NONE,
				 "label of %zu bytes is longer than %d",
				 strlen(label), TUX3_LABEL_MAX);
	if (!vol->ident.present) {
		struct tux3_identity id;
		struct superext_seal seal;
		char why[160];
		if (superext_decode(vol->sbraw, &id, &seal, why,
				    sizeof(why)) < 0)
			return vol_error(vol, -EUCLEAN, TUX3_NONE, TUX3_NONE,
					 TUX3_SB_OFFSET + SUPEREXT_OFFSET,
					 "superblock extension: %s; run "
					 "fsck.tux3 first", why);
		memset(&vol->ident, 0, sizeof(vol->ident));
		memset(&vol->seal, 0, sizeof(vol->seal));
		vol->ident.present = 1;
		vol->ident.version = SUPEREXT_VERSION;
	}
	if (label) {
		memset(vol->ident.label, 0, sizeof(vol->ident.label));
		memcpy(vol->ident.label, label, strlen(label));
	}
	if (uuid)
		memcpy(vol->ident.uuid, uuid, 16);
	vol->super_dirty = true;
	return 0;
}

static void set_seal_field(uint8_t *sb4096, unsigned off, uint32_t v)
{
	uint8_t *r = sb4096 + SUPEREXT_OFFSET;

	put_be32(r + off, v);
	put_be32(r + SUPEREXT_CRC_OFFSET, tux3_crc32c(0, r, SUPEREXT_CRC_OFFSET));
}

void superext_set_crclog(uint8_t *sb4096, uint32_t crclog)
{
	set_seal_field(sb4096, SUPEREXT_CRCLOG_OFFSET, crclog);
}

void superext_set_dxgen(uint8_t *sb4096, uint32_t gen)
{
	set_seal_field(sb4096, SUPEREXT_DXGEN_OFFSET, gen);
}

/* DIR_INDEX: an index is used only when it carries this generation.
 * A record that is not sealed means another writer committed since our
 * last commit and may have changed any directory: every index is stale,
 * and our next commit writes the new generation. */
uint32_t dirhash_gen_at_open(const struct tux3_volume *vol)
{
	return vol->seal.dxgen +
	       !superext_sealed(&vol->seal, &vol->super);
}

/* The magic or the feature bit says the volume has versions (the two
 * must agree; the version layer checks that at open). */
bool atime_enabled(const struct tux3_volume *vol)
{
	return vol->ident.present &&
	       (vol->ident.incompat & TUX3_FEATURE_INCOMPAT_ATIME);
}

void superext_set_incompat(struct tux3_volume *vol, uint32_t bit, bool on)
{
	if (on)
		vol->ident.incompat |= bit;
	else
		vol->ident.incompat &= ~bit;
	memcpy(vol->super.magic, tux3_magic_for(vol->ident.incompat), 8);
	vol->super_dirty = true;
}

bool atime_marked(const struct tux3_volume *vol)
{
	return atime_enabled(vol) ||
	       !memcmp(vol->super.magic, tux3_magic_features, 8);
}

bool vtable_marked(const struct tux3_volume *vol)
{
	return !memcmp(vol->super.magic, tux3_magic_versions, 8) ||
	       (vol->ident.present &&
		(vol->ident.incompat & TUX3_FEATURE_INCOMPAT_VERSIONS));
}

/* How many of the newest log blocks carry our CRC: what the sealed
 * record says, when the LOG_CRC feature is on and the seal matches the
 * superblock, else 0. */
uint32_t log_crc_trusted(const struct tux3_volume *vol)
{
	if (!vol->ident.present ||
	    !(vol->ident.compat & SUPEREXT_COMPAT_LOG_CRC) ||
	    !superext_sealed(&vol->seal, &vol->super))
		return 0;
	return vol->seal.crclog < vol->super.logcount ? vol->seal.crclog :
	       vol->super.logcount;
}

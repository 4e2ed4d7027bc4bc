/*
 * The secondary superblock (SB_BACKUP feature, doc/format.md 15.3): a
 * checksummed copy of superblock-area bytes 0..1023 (the base fields and
 * our extension record) in the reserved area, absolute bytes 1024..2559,
 * which the reference never writes after mkfs.  Our commit writes and
 * flushes it before the primary, so a torn primary write leaves a whole
 * copy of the same commit.
 */
#include <stdio.h>
#include <stdlib.h>
#include "format/format.h"
#include "tux3_fsck.h"

void sb2_encode(uint8_t *out, const uint8_t *sb4096)
{
	memset(out, 0, SB2_LEN);
	memcpy(out, sb4096, SB2_COPY);
	uint8_t *t = out + SB2_COPY;
	put_be32(t, SB2_MAGIC);
	put_be16(t + 4, 1);			/* version */
	put_be16(t + 6, SB2_COPY);		/* bytes copied */
	put_be32(out + SB2_CRC_AT, tux3_crc32c(0, out, SB2_CRC_AT));
}

int sb2_decode(const uint8_t *in, uint8_t *sb4096, char *why, size_t len)
{
	const uint8_t *t = in + SB2_COPY;
	if (be32(t) != SB2_MAGIC) {
		snprintf(why, len, "no secondary superblock at byte %u (magic "
			 "0x%08x)", SB2_OFFSET, be32(t));
		return -ENOENT;
	}
	uint32_t want = be32(in + SB2_CRC_AT), got = tux3_crc32c(0, in, SB2_CRC_AT);
	if (want != got) {
		snprintf(why, len, "secondary superblock at byte %u: CRC32C "
			 "0x%08x does not match the stored 0x%08x", SB2_OFFSET,
			 got, want);
		return -EUCLEAN;
	}
	if (be16(t + 4) != 1 || be16(t + 6) != SB2_COPY) {
		snprintf(why, len, "secondary superblock at byte %u: version "
			 "%u, size %u not known", SB2_OFFSET, be16(t + 4),
			 be16(t + 6));
		return -EUCLEAN;
	}
	if (!tux3_magic_ok(in)) {
		snprintf(why, len, "secondary superblock at byte %u: the copy "
			 "has no Tux3 magic", SB2_OFFSET);
		return -EUCLEAN;
	}
	memset(sb4096, 0, TUX3_SB_LEN);
	memcpy(sb4096, in, SB2_COPY);
	return 0;
}

int sb2_write(struct tux3_volume *vol)
{
	uint8_t buf[SB2_LEN];
	sb2_encode(buf, vol->sbraw);
	int err = dev_pwrite(&vol->dev, buf, SB2_LEN, SB2_OFFSET);
	if (err)
		return vol_error(vol, err, TUX3_NONE, TUX3_NONE, SB2_OFFSET,
				 "cannot write the secondary superblock");
	if ((err = vol_barrier(vol)))
		return vol_error(vol, err, TUX3_NONE, TUX3_NONE, TUX3_NONE,
				 "cannot flush the secondary superblock");
	return 0;
}

int tux3_sb2_restore(const char *path, int write, char *msg, size_t len)
{
	struct device dev;
	uint8_t prim[TUX3_SB_LEN], sb2raw[SB2_LEN], copy[TUX3_SB_LEN];
	char why[200];
	int err = dev_open(&dev, path, write, msg, len);

	if (err)
		return err;
	if ((err = dev_pread(&dev, prim, sizeof(prim), TUX3_SB_OFFSET)) ||
	    (err = dev_pread(&dev, sb2raw, sizeof(sb2raw), SB2_OFFSET))) {
		snprintf(msg, len, "cannot read the superblocks: %s",
			 strerror(-err));
		goto out;
	}
	if ((err = sb2_decode(sb2raw, copy, why, sizeof(why)))) {
		snprintf(msg, len, "%s", why);
		goto out;
	}
	if (!memcmp(prim, copy, SB2_COPY)) {
		snprintf(msg, len, "the primary superblock equals the "
			 "secondary copy");
		err = 1;
		goto out;
	}
	if (tux3_magic_ok(prim)) {
		/* a primary with its magic is the newer one (it is written
		 * after the copy): leave it to the normal checks */
		snprintf(msg, len, "the primary superblock has its magic; "
			 "the secondary copy is not used");
		err = 1;
		goto out;
	}
	if (!write) {
		snprintf(msg, len, "the primary superblock has no Tux3 magic; "
			 "the secondary copy at byte %u is good (fsck.tux3 -b "
			 "-y restores it)", SB2_OFFSET);
		err = 0;
		goto out;
	}
	if ((err = dev_pwrite(&dev, copy, TUX3_SB_LEN, TUX3_SB_OFFSET)) ||
	    (err = dev_flush(&dev))) {
		snprintf(msg, len, "cannot write the primary superblock: %s",
			 strerror(-err));
		goto out;
	}
	snprintf(msg, len, "the primary superblock had no Tux3 magic; "
		 "restored from the secondary copy at byte %u", SB2_OFFSET);
out:
	dev_close(&dev);
	return err;
}

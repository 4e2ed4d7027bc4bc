/*
 * A Tux3 prober for libblkid (util-linux), so that blkid, lsblk, udev's
 * builtin blkid, fsck(8) and mount(8) know Tux3 volumes without the
 * tux3probe stand-in.  Written for tux3-tools; the layout it reads is
 * described in tux3-tools' doc/format.md (sections 2.2 and 15.1).
 *
 * This file may be redistributed under the terms of the GNU Lesser
 * General Public License, as the rest of libblkid.
 *
 * The superblock lies at byte 4096 for every block size and starts with
 * an 8-byte magic: "tux3" + 20 14 05 06 (the 2014-05-06 format) or
 * "tux3ver1" (the same volume with snapshots).  The 2014 format has no
 * identity; tux3-tools keep UUID and label in an extension record in the
 * superblock's second sector (byte 4608), guarded by a CRC32C.  A volume
 * without a record (made by the 2014 code) is reported with its type
 * and version only.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "superblocks.h"
#include "crc32c.h"

#define TUX3_SB_KBOFF		4		/* byte 4096 */
#define TUX3_EXT_OFFSET		4608		/* extension record */
#define TUX3_EXT_SIZE		512
#define TUX3_MAX_BLOCK		(1ULL << 48)

/* The 2014 superblock's leading fields; integers are big-endian. */
struct tux3_super_block {
	uint8_t		magic[8];
	uint64_t	birthdate;
	uint64_t	flags;
	uint16_t	blockbits;
	uint8_t		pad[6];
	uint64_t	volblocks;
} __attribute__((packed));

/* The extension record; big-endian too. */
struct tux3_super_ext {
	uint8_t		magic[4];		/* "T3X1" */
	uint16_t	version;		/* 1 */
	uint16_t	size;			/* 512 */
	uint32_t	compat;
	uint32_t	ro_compat;
	uint32_t	incompat;
	uint32_t	reserved;
	uint8_t		uuid[16];
	uint8_t		label[64];
	uint8_t		rest[TUX3_EXT_SIZE - 104 - 4];
	uint32_t	crc;			/* CRC32C of bytes 0-507 */
} __attribute__((packed));

#define TUX3_INCOMPAT_VERSIONS	0x1

/* The record, if its magic, CRC, version and size hold; else NULL, and
 * the volume is shown without identity, as tux3-tools read it. */
static const struct tux3_super_ext *tux3_ext(blkid_probe pr)
{
	const struct tux3_super_ext *ext;
	uint32_t crc;

	ext = (const struct tux3_super_ext *)
		blkid_probe_get_buffer(pr, TUX3_EXT_OFFSET, TUX3_EXT_SIZE);
	if (!ext || memcmp(ext->magic, "T3X1", 4))
		return NULL;
	crc = ~crc32c(~0U, (const unsigned char *)ext,
		      offsetof(struct tux3_super_ext, crc));
	if (crc != be32_to_cpu(ext->crc))
		return NULL;
	if (be16_to_cpu(ext->version) != 1 ||
	    be16_to_cpu(ext->size) != TUX3_EXT_SIZE)
		return NULL;
	return ext;
}

static int probe_tux3(blkid_probe pr, const struct blkid_idmag *mag)
{
	const struct tux3_super_block *sb;
	const struct tux3_super_ext *ext;
	unsigned int bits;
	uint64_t blocks;
	int versions;

	sb = blkid_probe_get_sb(pr, mag, struct tux3_super_block);
	if (!sb)
		return errno ? -errno : BLKID_PROBE_NONE;

	/* The magic alone is 8 bytes of chance; the geometry must be one
	 * a Tux3 reader accepts too. */
	bits = be16_to_cpu(sb->blockbits);
	blocks = be64_to_cpu(sb->volblocks);
	if (bits < 9 || bits > 16 || blocks < 2 || blocks >= TUX3_MAX_BLOCK)
		return BLKID_PROBE_NONE;

	versions = !memcmp(sb->magic, "tux3ver1", 8);
	ext = tux3_ext(pr);
	if (ext) {
		if (be32_to_cpu(ext->incompat) & TUX3_INCOMPAT_VERSIONS)
			versions = 1;
		blkid_probe_set_uuid(pr, ext->uuid);
		if (ext->label[0])
			blkid_probe_set_label(pr, ext->label,
					      sizeof(ext->label));
	}
	blkid_probe_set_version(pr, versions ? "2014.05.06+versions" :
					       "2014.05.06");
	blkid_probe_set_block_size(pr, 1U << bits);
	return BLKID_PROBE_OK;
}

const struct blkid_idinfo tux3_idinfo =
{
	.name		= "tux3",
	.usage		= BLKID_USAGE_FILESYSTEM,
	.probefunc	= probe_tux3,
	.minsz		= 8192,
	.magics		=
	{
		{ .magic = "tux3\x20\x14\x05\x06", .len = 8,
		  .kboff = TUX3_SB_KBOFF, .sboff = 0 },
		{ .magic = "tux3ver1", .len = 8,
		  .kboff = TUX3_SB_KBOFF, .sboff = 0 },
		{ NULL }
	}
};

/*
 * mkfs: an empty volume, laid out exactly as the reference mkfs leaves it
 * (doc/format.md 2.1), plus our superblock extension record:
 *
 *   bytes 0-4095      zero
 *   byte 4096         superblock (iroot depth 1 at the ileaf, usedinodes 64,
 *                     atomgen 1, one log block); extension at 4608..5119
 *   ileaf             inodes 4 (atom table) and 63 (root directory)
 *   log block         BALLOC of the reserved blocks, DELTA, BALLOC ileaf
 *   last block        zeroed (the reference clears it of other magics)
 *
 * Block choice follows the reference allocator: flushing inode 63 aims
 * the allocation goal at its inum folded into the volume (fold_goal: the
 * inum masked to the next power of two above volblocks, minus half that
 * power when it still lands past the end); the ileaf takes the first free
 * block from the goal on (wrapping to 0), the log block the next one.
 * 63 on any volume of 64 blocks or more.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "write/write.h"

static uint64_t reserved_blocks(unsigned blockbits)
{
	return blockbits >= 13 ? 1 : TUX3_RESERVED_BYTES >> blockbits;
}

static uint64_t fold_goal(uint64_t volblocks, uint64_t goal)
{
	uint64_t mask = 1;
	while (mask < volblocks)
		mask <<= 1;
	mask -= 1;		/* roundup_pow_of_two(volblocks) - 1 */
	goal &= mask;
	if (goal >= volblocks)
		goal -= (mask + 1) >> 1;
	return goal;
}

/* First free block from goal on, wrapping; blocks below reserved and
 * the ones in used[] are taken.  The caller guarantees one is free. */
static uint64_t alloc_from(uint64_t volblocks, uint64_t reserved,
			   uint64_t goal, const uint64_t *used, unsigned nused)
{
	for (uint64_t i = 0; i < volblocks; i++) {
		uint64_t b = (goal + i) % volblocks;
		bool taken = b < reserved;
		for (unsigned k = 0; k < nused; k++)
			taken |= used[k] == b;
		if (!taken)
			return b;
	}
	return 0;
}

int tux3_mkfs_layout(unsigned blockbits, uint64_t volblocks,
		     struct tux3_mkfs_layout *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (blockbits < TUX3_MIN_BLOCKBITS || blockbits > TUX3_MAX_BLOCKBITS) {
		snprintf(err, errlen, "block size 2^%u is outside 512..65536",
			 blockbits);
		return -EINVAL;
	}
	out->blocksize = 1u << blockbits;
	out->reserved = reserved_blocks(blockbits);
	out->min_volblocks = out->reserved + 2;
	out->volblocks = volblocks;
	if (volblocks < out->min_volblocks) {
		snprintf(err, errlen, "a volume of %" PRIu64 " blocks of %u "
			 "bytes is too small: it needs at least %" PRIu64
			 " (%" PRIu64 " bytes)", volblocks, out->blocksize,
			 out->min_volblocks,
			 out->min_volblocks << blockbits);
		return -ENOSPC;
	}
	if (volblocks > TUX3_MAX_BLOCK) {
		snprintf(err, errlen, "a volume of %" PRIu64 " blocks is "
			 "larger than the format allows (block numbers have "
			 "48 bits: at most %" PRIu64 " blocks, %" PRIu64
			 " bytes with %u-byte blocks)", volblocks,
			 (uint64_t)TUX3_MAX_BLOCK,
			 (uint64_t)TUX3_MAX_BLOCK << blockbits,
			 out->blocksize);
		return -EFBIG;
	}
	/* at 64 KiB blocks 48 bits of blocks pass the largest file offset */
	if (volblocks > ((uint64_t)INT64_MAX >> blockbits)) {
		snprintf(err, errlen, "a volume of %" PRIu64 " blocks of %u "
			 "bytes is larger than a device or file can be (2^63 "
			 "bytes): at most %" PRIu64 " blocks at this block "
			 "size", volblocks, out->blocksize,
			 (uint64_t)INT64_MAX >> blockbits);
		return -EFBIG;
	}
	uint64_t goal = fold_goal(volblocks, TUX3_ROOT_INO);
	out->ileaf = alloc_from(volblocks, out->reserved, goal, NULL, 0);
	goal = out->ileaf + 1 == volblocks ? 0 : out->ileaf + 1;
	out->logblock = alloc_from(volblocks, out->reserved, goal,
				   &out->ileaf, 1);
	out->nextblock = out->logblock + 1 == volblocks ? 0 :
			 out->logblock + 1;
	out->freeblocks = volblocks - out->reserved - 2;
	return 0;
}

/* The ileaf: slots for inums 0..63 (ibase 0), blobs of inodes 4 and 63. */
static void build_ileaf(uint8_t *leaf, unsigned blocksize,
			const struct tux3_mkfs_params *p)
{
	struct inode atable = {
		.inum = TUX3_ATABLE_INO,
		.present = 1u << ATTR_MODE_OWNER | 1u << ATTR_CTIME_SIZE |
			   1u << ATTR_LINK_COUNT | 1u << ATTR_MTIME,
		.mode = 0, .uid = 0, .gid = 0, .nlink = 1,
		.size = iattr_max_size(p->blockbits),
		.ctime = p->time_ns, .mtime = p->time_ns,
	};
	struct inode root = atable;
	root.inum = TUX3_ROOT_INO;
	root.mode = 0040000 | ((p->root_mode ? p->root_mode : 0755) & 07777);
	root.uid = p->uid;
	root.gid = p->gid;
	root.nlink = 2;
	root.size = 0;
	/* the atime feature (format.md 15.6): the root has one from the
	 * start; the atom table, an internal file, never does */
	if (p->incompat & TUX3_FEATURE_INCOMPAT_ATIME) {
		root.present |= 1u << ATTR_ATIME;
		root.atime = p->time_ns;
	}

	const unsigned count = TUX3_ROOT_INO + 1;	/* ibase 0 */
	unsigned end = 0;

	memset(leaf, 0, blocksize);
	put_be16(leaf, TUX3_MAGIC_ILEAF);
	put_be16(leaf + 2, count);
	put_be64(leaf + 8, 0);
	for (unsigned inum = 0; inum < count; inum++) {
		const struct inode *in = inum == TUX3_ATABLE_INO ? &atable :
					 inum == TUX3_ROOT_INO ? &root : NULL;
		if (in)
			end += iattr_encode_fixed(leaf + ILEAF_HEADER + end, in);
		put_be16(leaf + blocksize - 2 * (inum + 1), (uint16_t)end);
	}
}

static unsigned build_log(uint8_t *blk, unsigned blocksize,
			  const struct tux3_mkfs_layout *l)
{
	struct logrec recs[3] = {
		{ .code = LOG_BALLOC, .count = (uint32_t)l->reserved, .block = 0 },
		{ .code = LOG_DELTA },
		{ .code = LOG_BALLOC, .count = 1, .block = l->ileaf },
	};
	unsigned off = LOG_HEADER_SIZE;

	memset(blk, 0, blocksize);
	for (unsigned i = 0; i < 3; i++)
		off += log_encode_record(blk + off, &recs[i]);
	log_encode_head(blk, off - LOG_HEADER_SIZE, 0);
	return off;
}

static void build_super(uint8_t *sb, const struct tux3_mkfs_params *p,
			const struct tux3_mkfs_layout *l)
{
	struct disksuper ds = {
		.blockbits = p->blockbits,
		.volblocks = p->volblocks,
		.iroot = root_pack((struct root){ .block = l->ileaf,
						  .depth = 1 }),
		.oroot = 0,
		.usedinodes = TUX3_NORMAL_INO,
		.nextblock = l->nextblock,
		.atomgen = 1,
		.logchain = l->logblock,
		.logcount = 1,
	};
	memcpy(ds.magic, tux3_magic_for(p->incompat), 8);

	memset(sb, 0, TUX3_SB_LEN);
	memcpy(sb, ds.magic, 8);
	put_be64(sb + 8, 0);		/* birthdate: the reference leaves 0 */
	put_be64(sb + 16, 0);		/* flags */
	put_be16(sb + 24, (uint16_t)ds.blockbits);
	put_be64(sb + 32, ds.volblocks);
	put_be64(sb + 40, ds.iroot);
	put_be64(sb + 48, ds.oroot);
	put_be64(sb + 56, ds.usedinodes);
	put_be64(sb + 64, ds.nextblock);
	put_be64(sb + 72, 0);		/* atomdictsize */
	put_be32(sb + 80, 0);		/* freeatom */
	put_be32(sb + 84, ds.atomgen);
	put_be64(sb + 88, ds.logchain);
	put_be32(sb + 96, ds.logcount);

	/* Our extension record (format.md 15), sealed against this first
	 * commit with sequence 1. */
	struct tux3_identity id = {
		.present = 1,
		.version = SUPEREXT_VERSION,
		.mkfs_time_ns = p->time_ns,
		.compat = p->compat,
		.ro_compat = p->ro_compat,
		.incompat = p->incompat,
	};
	memcpy(id.uuid, p->uuid, 16);
	memcpy(id.label, p->label, strnlen(p->label, TUX3_LABEL_MAX));
	superext_encode(sb, &id, &ds, 1);
	/* LOG_CRC: the only log block carries our CRC (build_log) */
	if (p->compat & SUPEREXT_COMPAT_LOG_CRC)
		superext_set_crclog(sb, 1);
}

int tux3_mkfs(const char *path, const struct tux3_mkfs_params *p, char *err,
	      size_t errlen)
{
	struct tux3_mkfs_layout l;
	struct device dev;
	uint8_t *buf = NULL, *sb = NULL;
	int rc;

	if ((rc = tux3_mkfs_layout(p->blockbits, p->volblocks, &l, err,
				   errlen)))
		return rc;
	if (memchr(p->label, 0, sizeof(p->label)) == NULL) {
		snprintf(err, errlen, "label longer than %d bytes",
			 TUX3_LABEL_MAX);
		return -EINVAL;
	}
	if ((p->compat & ~SUPEREXT_COMPAT_KNOWN) ||
	    (p->ro_compat & ~SUPEREXT_RO_COMPAT_KNOWN) ||
	    (p->incompat & ~SUPEREXT_INCOMPAT_KNOWN)) {
		snprintf(err, errlen, "unknown extension features requested "
			 "(compat 0x%x, ro_compat 0x%x, incompat 0x%x)",
			 p->compat, p->ro_compat, p->incompat);
		return -EINVAL;
	}
	/* versions come with a version table, which only a snapshot makes */
	if (p->incompat & TUX3_FEATURE_INCOMPAT_VERSIONS) {
		snprintf(err, errlen, "a new volume has no versions (incompat "
			 "0x%x)", p->incompat);
		return -EINVAL;
	}
	if (p->root_mode & ~07777u) {
		snprintf(err, errlen, "root mode %o has bits outside 07777",
			 p->root_mode);
		return -EINVAL;
	}

	unsigned bs = l.blocksize;
	uint64_t bytes = p->volblocks << p->blockbits;

	if ((rc = dev_open(&dev, path, true, err, errlen)))
		return rc;
	if (dev.size < bytes) {
		if (dev.blockdev) {
			snprintf(err, errlen, "%s: the device holds %" PRIu64
				 " bytes, less than the %" PRIu64 " asked for",
				 path, dev.size, bytes);
			rc = -ENOSPC;
			goto out;
		}
		if (ftruncate(dev.fd, (off_t)bytes) < 0) {
			rc = -errno;
			snprintf(err, errlen, "%s: cannot extend to %" PRIu64
				 " bytes: %s", path, bytes, strerror(errno));
			goto out;
		}
		dev.size = bytes;
	}

	buf = calloc(1, bs > TUX3_SB_LEN ? bs : TUX3_SB_LEN);
	sb = calloc(1, TUX3_SB_LEN);
	if (!buf || !sb) {
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto out;
	}

	const char *what;
	/* Clear other filesystems' magics like the reference: bytes
	 * 0..4095 and the last block. */
	what = "clear the first 4 KiB";
	if ((rc = dev_pwrite(&dev, buf, TUX3_SB_OFFSET, 0)))
		goto ioerr;
	what = "clear the last block";
	if ((rc = dev_pwrite(&dev, buf, bs, (p->volblocks - 1) << p->blockbits)))
		goto ioerr;
	what = "write the inode table leaf";
	build_ileaf(buf, bs, p);
	if ((rc = dev_pwrite(&dev, buf, bs, l.ileaf << p->blockbits)))
		goto ioerr;
	what = "write the log block";
	build_log(buf, bs, &l);
	if (p->compat & SUPEREXT_COMPAT_LOG_CRC)
		put_be32(buf + LOG_CRC_OFFSET,
			 log_block_crc(buf, bs, l.logblock));
	if ((rc = dev_pwrite(&dev, buf, bs, l.logblock << p->blockbits)))
		goto ioerr;
	what = "flush";
	if ((rc = dev_flush(&dev)))
		goto ioerr;
	/* The superblock is the commit point: written last, between
	 * flushes. */
	build_super(sb, p, &l);
	if (p->compat & SUPEREXT_COMPAT_SB_BACKUP) {
		/* the secondary copy first (format.md 15.3), flushed */
		what = "write the secondary superblock";
		sb2_encode(buf, sb);
		if ((rc = dev_pwrite(&dev, buf, SB2_LEN, SB2_OFFSET)) ||
		    (rc = dev_flush(&dev)))
			goto ioerr;
	}
	what = "write the superblock";
	if ((rc = dev_pwrite(&dev, sb, TUX3_SB_LEN, TUX3_SB_OFFSET)))
		goto ioerr;
	what = "flush the superblock";
	if ((rc = dev_flush(&dev)))
		goto ioerr;
	rc = 0;
	goto out;
ioerr:
	snprintf(err, errlen, "%s: cannot %s: %s", path, what, strerror(-rc));
out:
	free(buf);
	free(sb);
	dev_close(&dev);
	return rc;
}

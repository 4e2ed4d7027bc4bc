/*
 * The probe: is there a Tux3 volume on a device, and what are its UUID
 * and label?  What udev, tux3probe and mount.tux3 ask of every block
 * device, so it must be safe and fast on anything: one read of the first
 * 8 KiB, no lock (a mounted or busy volume is probed too), no replay, no
 * trust in any field (doc/format.md 2.2, 15.1, 15.3).
 *
 * The primary superblock is the truth while it has its magic; without
 * it, a secondary copy that decodes (magic, CRC, version, size, a Tux3
 * magic inside) stands in, as the read-only open and fsck pass 1 use it.
 * Identity comes from the extension record of the superblock used, or
 * from the copy's when the primary's record is damaged: label and UUID
 * change only through writers that write the copy first.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core.h"

static bool geometry_ok(const struct disksuper *sb)
{
	if (sb->blockbits < TUX3_MIN_BLOCKBITS ||
	    sb->blockbits > TUX3_MAX_BLOCKBITS)
		return false;
	uint64_t reserved = TUX3_RESERVED_BYTES >> sb->blockbits;
	if (!reserved)
		reserved = 1;
	return sb->volblocks <= TUX3_MAX_BLOCK &&
	       sb->volblocks > reserved + 1;
}

/* The record of a 4 KiB superblock area, if it decodes. */
static bool identity_of(const uint8_t *sb4096, struct tux3_identity *id)
{
	struct superext_seal seal;
	char why[8];

	return superext_decode(sb4096, id, &seal, why, sizeof(why)) == 1;
}

static void describe(const uint8_t *sb4096, enum tux3_probe_source src,
		     struct tux3_probe *p)
{
	struct disksuper sb;

	super_decode(sb4096, &sb);
	p->super = src;
	p->geometry_ok = geometry_ok(&sb);
	p->blockbits = sb.blockbits;
	p->volblocks = sb.volblocks;
	p->versions = !memcmp(sb.magic, tux3_magic_versions, 8);
}

int tux3_probe_head(const uint8_t *head, size_t len, struct tux3_probe *p)
{
	uint8_t backup[TUX3_SB_LEN];
	char why[160];
	bool have_backup;

	memset(p, 0, sizeof(*p));
	if (len < TUX3_PROBE_HEAD)
		return 0;
	const uint8_t *primary = head + TUX3_SB_OFFSET;
	have_backup = !sb2_decode(head + SB2_OFFSET, backup, why, sizeof(why));
	if (tux3_magic_ok(primary))
		describe(primary, TUX3_PROBE_PRIMARY, p);
	else if (have_backup)
		describe(backup, TUX3_PROBE_SECONDARY, p);
	else
		return 0;
	const uint8_t *used = p->super == TUX3_PROBE_PRIMARY ? primary :
			      backup;
	if (identity_of(used, &p->id))
		p->ident = p->super;
	else if (p->super == TUX3_PROBE_PRIMARY && have_backup &&
		 identity_of(backup, &p->id))
		p->ident = TUX3_PROBE_SECONDARY;
	if (p->id.present &&
	    (p->id.incompat & TUX3_FEATURE_INCOMPAT_VERSIONS))
		p->versions = 1;
	return 1;
}

/* Whole reads of len bytes at 0, through EINTR and short reads; a
 * device or file shorter than that gives the bytes it has. */
static ssize_t read_head(int fd, uint8_t *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, buf + done, len - done, (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

int tux3_probe(const char *path, struct tux3_probe *p)
{
	uint8_t head[TUX3_PROBE_HEAD];
	struct stat st;

	memset(p, 0, sizeof(*p));
	/* O_NONBLOCK: a FIFO or a terminal named by mistake must not
	 * hang the probe before fstat can refuse it. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode)) {
		close(fd);
		return -ENODEV;
	}
	ssize_t n = read_head(fd, head, sizeof(head));
	close(fd);
	if (n < 0)
		return (int)n;
	return tux3_probe_head(head, (size_t)n, p);
}

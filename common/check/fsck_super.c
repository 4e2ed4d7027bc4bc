/*
 * Pass 1: the superblock alone, opened without the log: magic, geometry,
 * roots and log chain inside the volume, the extension record (UUID,
 * label, feature flags).
 *
 * A superblock the library refuses stops the run; the refusal is told
 * apart by the field at fault (super_check names its byte offset), each
 * kind with its own problem code.  None of those is repaired: a wrong
 * magic, block size or volume size has no second copy to take the right
 * value from.  The extension record is ours and holds nothing the
 * volume's consistency depends on, so a damaged one is rewritten from
 * what can still be read (pass 2 applies it once the volume is open for
 * writing; the final commit writes it).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include "check/fsck_internal.h"

/* Opening errors that mean damage (a problem), not an operational
 * failure of the device. */
bool fsck_open_damage(int err)
{
	return err == -EUCLEAN || err == -EINVAL || err == -EOPNOTSUPP ||
	       err == -EFBIG || err == -ERANGE || err == -EROFS;
}

int fsck_open_super(struct fsck *f, struct tux3_volume **volp)
{
	struct tux3_volume *v = calloc(1, sizeof(*v));
	int err;

	*volp = NULL;
	if (!v)
		return -ENOMEM;
	tux3_clear_error(v);
	err = dev_open(&v->dev, f->path, false, f->msg, sizeof(f->msg));
	if (err) {
		free(v);
		return err;
	}
	*volp = v;
	err = dev_pread(&v->dev, v->sbraw, TUX3_SB_LEN, TUX3_SB_OFFSET);
	if (err)
		return vol_error(v, err, TUX3_NONE, TUX3_NONE, TUX3_SB_OFFSET,
				 "cannot read the superblock at byte %u "
				 "(device too small?)", TUX3_SB_OFFSET);
	super_decode(v->sbraw, &v->super);
	return super_check(v);
}

void fsck_close_super(struct tux3_volume *vol)
{
	if (vol)
		tux3_close(vol);
}

/*
 * The superblock was refused: take it apart again on the superblock
 * alone to find which check failed (super_check names the field's byte
 * offset), and report that.  Returns 0, or <0 for an operational error.
 */
static int classify_refusal(struct fsck *f, int open_err)
{
	char msg[sizeof(f->msg)];
	struct tux3_volume *v;
	int err;

	snprintf(msg, sizeof(msg), "%s", f->msg);
	err = fsck_open_super(f, &v);
	if (err && !v)
		return err;
	f->msg[0] = 0;
	const struct disksuper *sb = &v->super;
	if (err && v->error.offset == TUX3_SB_OFFSET &&
	    v->error.err != -EUCLEAN) {
		fsck_problem(f, P1_SUPER_BAD, false, NULL, v->error.what);
	} else if (err) {
		const char *what = v->error.what;
		switch (v->error.offset == TUX3_NONE ? 0 :
			v->error.offset - TUX3_SB_OFFSET) {
		case 0: {
			char hex[17];
			for (int i = 0; i < 8; i++)
				snprintf(hex + 2 * i, 3, "%02x", sb->magic[i]);
			fsck_problem(f, P1_MAGIC, false, NULL, hex);
			break;
		}
		case 24:
			fsck_problem(f, P1_BLOCKSIZE, false, NULL,
				     (uint64_t)sb->blockbits);
			break;
		case 32:
			if (sb->volblocks <= TUX3_MAX_BLOCK &&
			    sb->volblocks > v->reserved_blocks + 1)
				fsck_problem(f, P1_VOLSIZE, false,
					     FSCK_AT(.have = v->dev.size >>
						     sb->blockbits,
						     .want = sb->volblocks),
					     sb->volblocks,
					     v->dev.size >> sb->blockbits);
			else
				fsck_problem(f, P1_GEOMETRY, false, NULL,
					     sb->volblocks);
			break;
		case 40: case 48:
			fsck_problem(f, P1_ROOT, false, NULL, what);
			break;
		case 88: case 96:
			fsck_problem(f, P1_LOG_CHAIN, false, NULL, what);
			break;
		default:
			fsck_problem(f, P1_SUPER_BAD, false, NULL, what);
			break;
		}
	} else {
		/* the fields are sound: the extension record's features
		 * refused it */
		struct tux3_identity id;
		struct superext_seal seal;
		char why[160];
		int ext = superext_decode(v->sbraw, &id, &seal, why,
					  sizeof(why));
		if (ext == 1 && (id.incompat & ~SUPEREXT_INCOMPAT_KNOWN))
			fsck_problem(f, P1_FEATURES, false, NULL,
				     (uint64_t)(id.incompat &
						~SUPEREXT_INCOMPAT_KNOWN));
		else if (ext == 1 && open_err == -EROFS)
			fsck_problem(f, P1_RO_FEATURES, false, NULL,
				     (uint64_t)(id.ro_compat &
						~SUPEREXT_RO_COMPAT_KNOWN));
		else
			fsck_problem(f, P1_SUPER_BAD, false, NULL, msg);
	}
	fsck_close_super(v);
	return 0;
}

/* A fresh random (version 4) UUID. */
static int new_uuid(uint8_t uuid[16])
{
	size_t got = 0;
	while (got < 16) {
		ssize_t n = getrandom(uuid + got, 16 - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)n;
	}
	uuid[6] = (uint8_t)((uuid[6] & 0x0f) | 0x40);
	uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80);
	return 0;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

/* A label field is readable when it is text padded with NULs. */
static bool label_readable(const uint8_t *l)
{
	size_t n = strnlen((const char *)l, TUX3_LABEL_MAX);
	for (size_t i = 0; i < n; i++)
		if (l[i] < 0x20 || l[i] == 0x7f)
			return false;
	return all_zero(l + n, TUX3_LABEL_MAX - n);
}

/*
 * The extension record (superblock bytes 512..1023).  All zero means
 * none (volumes of the reference mkfs): fine.  Otherwise it must decode;
 * a damaged one is rewritten from what is known: the UUID, label and
 * mkfs time when the record's frame (magic, version, size) still holds
 * and they look sane, else a fresh UUID and no label.  A record with a
 * good CRC but an unknown version or size is a newer tool's: left alone.
 */
static void check_extension(struct fsck *f, const uint8_t *sbraw)
{
	const uint8_t *r = sbraw + SUPEREXT_OFFSET;
	uint64_t from = TUX3_SB_OFFSET + SUPEREXT_OFFSET;
	uint64_t to = from + SUPEREXT_SIZE - 1;
	struct tux3_identity id;
	struct superext_seal seal;
	char why[160], plan[200];

	if (superext_decode(sbraw, &id, &seal, why, sizeof(why)) >= 0)
		return;
	bool framed = be32(r) == SUPEREXT_MAGIC;
	bool crc_ok = framed && be32(r + SUPEREXT_CRC_OFFSET) ==
				tux3_crc32c(0, r, SUPEREXT_CRC_OFFSET);
	if (crc_ok) {
		/* its own CRC vouches for it: a version we do not know */
		fsck_problem(f, P1_EXT_BAD, false, NULL,
			     from, to, why, "written by a newer tool, left as "
			     "it is");
		return;
	}
	memset(&id, 0, sizeof(id));
	id.present = 1;
	id.version = SUPEREXT_VERSION;
	bool keep = framed && be16(r + 4) == SUPEREXT_VERSION &&
		    be16(r + 6) == SUPEREXT_SIZE && !all_zero(r + 24, 16) &&
		    label_readable(r + 40);
	if (keep) {
		/* features are not kept: a damaged record cannot vouch for
		 * them, and every bit this build knows is 0 */
		memcpy(id.uuid, r + 24, 16);
		memcpy(id.label, r + 40, TUX3_LABEL_MAX);
		id.mkfs_time_ns = (int64_t)be64(r + 104);
		char uuid[37];
		snprintf(uuid, sizeof(uuid), "%02x%02x%02x%02x-%02x%02x-%02x%02x"
			 "-%02x%02x-%02x%02x%02x%02x%02x%02x", id.uuid[0],
			 id.uuid[1], id.uuid[2], id.uuid[3], id.uuid[4],
			 id.uuid[5], id.uuid[6], id.uuid[7], id.uuid[8],
			 id.uuid[9], id.uuid[10], id.uuid[11], id.uuid[12],
			 id.uuid[13], id.uuid[14], id.uuid[15]);
		snprintf(plan, sizeof(plan), "its UUID %s and label \"%s\" "
			 "are still readable", uuid, id.label);
	} else {
		snprintf(plan, sizeof(plan), "its UUID and label are lost (a "
			 "new UUID will be made)");
	}
	if (!fsck_problem(f, P1_EXT_BAD, true, NULL,
			  from, to, why, plan))
		return;
	if (!keep) {
		int err = new_uuid(id.uuid);
		if (err) {
			fsck_fixed(f, err);
			return;
		}
	}
	/* written by the final commit (pass 2 puts it on the volume) */
	f->ext_ident = id;
	f->ext_rewrite = true;
}

/*
 * Hints are recomputed, never trusted: the open dropped an impossible
 * nextblock or freeatom (super_drop_bad_hints); the repair writes the
 * superblock with the values the writer recomputed (no goal, an empty
 * free list whose atoms pass 6 gives back).
 */
static void check_hints(struct fsck *f, const struct tux3_volume *vol)
{
	struct disksuper raw;
	super_decode(vol->sbraw, &raw);
	unsigned bad = super_bad_hints(&raw, vol->volblocks);
	if ((bad & SUPER_HINT_NEXTBLOCK) &&
	    fsck_problem(f, P1_HINT, true, NULL, "nextblock", raw.nextblock,
			 "is outside the volume"))
		f->hints_rewrite = true;
	char why[64];
	snprintf(why, sizeof(why), "is not below atomgen %u", raw.atomgen);
	if ((bad & SUPER_HINT_FREEATOM) &&
	    fsck_problem(f, P1_HINT, true, NULL, "freeatom",
			 (uint64_t)raw.freeatom, why))
		f->hints_rewrite = true;
}

int fsck_pass1(struct fsck *f)
{
	struct tux3_volume *vol;
	int err = tux3_open_err(f->path, TUX3_OPEN_NOREPLAY, &vol, f->msg,
				sizeof(f->msg));
	if (err) {
		if (!fsck_open_damage(err))
			return err;
		f->unusable = true;
		return classify_refusal(f, err);
	}
	/* Of the no-replay open's warnings only the superblock's own are
	 * problems: trees the log has yet to build are the format's normal
	 * state between unifies (pass 2 replays and checks them), and the
	 * extension record's is checked below with its reason. */
	for (unsigned i = 0; i < tux3_warning_count(vol); i++)
		if (tux3_warning_source(vol, i) == TUX3_WARN_SUPER)
			fsck_problem(f, P1_SUPER_WARNING, false, NULL,
				     tux3_warning(vol, i));
	check_extension(f, vol->sbraw);
	check_hints(f, vol);
	/* unknown ro_compat features: this build cannot vouch for the
	 * volume, so both modes report it (exit 4); a check goes on
	 * reading, a repair writes nothing */
	uint32_t ro = vol->ident.present ?
		      vol->ident.ro_compat & ~SUPEREXT_RO_COMPAT_KNOWN : 0;
	if (ro) {
		fsck_problem(f, P1_RO_FEATURES, false, NULL, (uint64_t)ro);
		if (fsck_repairing(f))
			f->unusable = true;
	}
	tux3_close(vol);
	return 0;
}

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

/* ---- the secondary superblock (format.md 15.3) ---- */

/* What pass 1 knows of the secondary copy, and the repair it is to
 * write once the volume is closed (the open holds the device's lock). */
struct sbcopy {
	bool ok;		/* decodes, and an open would accept it */
	bool ext;		/* ... with an extension record */
	uint8_t raw[TUX3_SB_LEN];
	uint8_t fix[TUX3_SB_LEN];	/* the repaired superblock area */
	unsigned from, len;		/* the bytes of it to write */
};

/*
 * Would an open accept the superblock area raw on this device: its
 * fields (super_check), and an extension record that decodes with
 * features this build knows?  0, or <0 with why filled.  *ext says
 * whether raw holds a record.
 */
static int super_usable(struct fsck *f, const uint8_t *raw, bool *ext,
			char *why, size_t len)
{
	struct tux3_volume *v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	tux3_clear_error(v);
	int err = dev_open(&v->dev, f->path, false, why, len);
	if (err) {
		free(v);
		return err;
	}
	memcpy(v->sbraw, raw, TUX3_SB_LEN);
	super_decode(v->sbraw, &v->super);
	if ((err = super_check(v))) {
		tux3_error_text(v, why, len);
	} else {
		struct tux3_identity id;
		struct superext_seal seal;
		int r = superext_decode(v->sbraw, &id, &seal, why, len);
		if (r < 0)
			err = r;
		else if (r == 1 &&
			 ((id.incompat & ~SUPEREXT_INCOMPAT_KNOWN) ||
			  (id.ro_compat & ~SUPEREXT_RO_COMPAT_KNOWN)))
			err = -EOPNOTSUPP;
		if (ext)
			*ext = r == 1;
	}
	tux3_close(v);
	return err;
}

/* Read the secondary copy: c->ok when it decodes (magic, CRC, version)
 * and an open would accept it on this device. */
static void copy_load(struct fsck *f, struct device *dev, struct sbcopy *c)
{
	uint8_t buf[SB2_LEN];
	char why[200];
	c->ok = c->ext = false;
	if (dev_pread(dev, buf, SB2_LEN, SB2_OFFSET) ||
	    sb2_decode(buf, c->raw, why, sizeof(why)))
		return;
	c->ok = !super_usable(f, c->raw, &c->ext, why, sizeof(why));
}

/* The superblock's fields, superblock-relative, for telling which of
 * them differ between the primary and the copy. */
static const struct { unsigned off, len; } sb_fields[] = {
	{ 0, 8 }, { 8, 8 }, { 16, 8 }, { 24, 2 }, { 26, 6 }, { 32, 8 },
	{ 40, 8 }, { 48, 8 }, { 56, 8 }, { 64, 8 }, { 72, 8 }, { 80, 4 },
	{ 84, 4 }, { 88, 8 }, { 96, 4 }, { 100, 412 },
	{ SUPEREXT_OFFSET, SUPEREXT_SIZE },
};

/* Does the copy differ from the primary in the field at off alone?  The
 * copy is then of the same commit (a reference commit changes several
 * fields and never the copy), and the field is damage. */
static bool copy_agrees(const uint8_t *prim, const uint8_t *copy,
			unsigned off)
{
	for (size_t i = 0; i < sizeof(sb_fields) / sizeof(sb_fields[0]); i++) {
		unsigned o = sb_fields[i].off, n = sb_fields[i].len;
		if (memcmp(prim + o, copy + o, n) &&
		    (off < o || off >= o + n))
			return false;
	}
	return true;
}

/* The copy's extension record, rather than the primary's: the copy
 * holds one this build reads, it differs, and it is of the primary's
 * commit or a later one (every writer that keeps SB_BACKUP writes the
 * copy first, with the same bytes; a record with a bad CRC has no
 * commit number to trust). */
static bool copy_record_wins(const uint8_t *prim, const struct sbcopy *c,
			     bool prim_crc_ok)
{
	const uint8_t *p = prim + SUPEREXT_OFFSET;
	const uint8_t *q = c->raw + SUPEREXT_OFFSET;
	if (!c->ok || !c->ext || !memcmp(p, q, SUPEREXT_SIZE))
		return false;
	return !prim_crc_ok || be64(q + 112) >= be64(p + 112);
}

enum { NOT_MINE, REPORTED, FIXED };

/* Bytes from..from+len-1 of raw are to be written over the primary
 * (by write_fix, once the volume is closed). */
static int write_super(struct sbcopy *c, const uint8_t *raw, unsigned from,
		       unsigned len)
{
	if (raw != c->fix)
		memcpy(c->fix, raw, TUX3_SB_LEN);
	c->from = from;
	c->len = len;
	return FIXED;
}

/* The repair write_super planned: a fix made, or an operational error. */
static int write_fix(struct fsck *f, struct sbcopy *c)
{
	int err = repair_super_area(f->path, c->fix, c->from, c->len, f->msg,
				    sizeof(f->msg));
	fsck_fixed(f, err);
	return err;
}

/* Restore the whole primary (both sectors) from the copy when the
 * field at off is what the open refused and the copy agrees with the
 * primary everywhere else (anything goes for a primary without a Tux3
 * magic, as with fsck.tux3 -b). */
static int from_copy(struct fsck *f, const uint8_t *prim,
		     struct sbcopy *c, unsigned off, const char *what)
{
	bool nomagic = !tux3_magic_ok(prim);
	if (!c->ok || !(nomagic || copy_agrees(prim, c->raw, off)))
		return NOT_MINE;
	if (!fsck_problem(f, P1_SB2, true, NULL, what, nomagic ? "" :
			  " and agrees with the primary in every other field"))
		return REPORTED;
	return write_super(c, c->raw, 0, SB2_COPY);
}

/* Bits that differ between two 8-byte magics. */
static unsigned magic_distance(const uint8_t *a, const uint8_t *b)
{
	unsigned d = 0;
	for (int i = 0; i < 8; i++)
		d += (unsigned)__builtin_popcount((unsigned)(a[i] ^ b[i]));
	return d;
}

static void magic_hex(const uint8_t *m, char hex[17])
{
	for (int i = 0; i < 8; i++)
		snprintf(hex + 2 * i, 3, "%02x", m[i]);
}

/* A magic a bit or two from one this build knows, everything else
 * valid: a flipped bit, not another file system. */
static int magic_near(struct fsck *f, const uint8_t *prim, struct sbcopy *c)
{
	const uint8_t *known[] = { tux3_magic_2014, tux3_magic_versions,
				   tux3_magic_features };
	uint8_t *raw = c->fix;
	char why[200], have[17], want[17];
	for (size_t i = 0; i < sizeof(known) / sizeof(*known); i++) {
		unsigned d = magic_distance(prim, known[i]);
		if (d > 2)
			continue;
		memcpy(raw, prim, TUX3_SB_LEN);
		memcpy(raw, known[i], 8);
		if (super_usable(f, raw, NULL, why, sizeof(why)))
			return NOT_MINE;
		magic_hex(prim, have);
		magic_hex(known[i], want);
		if (!fsck_problem(f, P1_MAGIC_NEAR, true, NULL, have,
				  (uint64_t)d, d == 1 ? "" : "s", want))
			return REPORTED;
		return write_super(c, raw, 0, 8);
	}
	return NOT_MINE;
}

/* Without a copy, a field later passes recompute anyway: set to a
 * valid value they start from.  The orphan table emptied (its orphans
 * are unlinked inodes pass 5 finds again; its blocks pass 8 frees),
 * usedinodes (pass 8 counts the inodes), atomdictsize at its limit
 * (pass 6 cuts it back to the dictionary's last block). */
static int recompute(struct fsck *f, const uint8_t *prim, unsigned off,
		     const char *what, struct sbcopy *c)
{
	uint8_t *raw = c->fix;
	char why[200];
	const char *how;
	memcpy(raw, prim, TUX3_SB_LEN);
	switch (off) {
	case 48:
		put_be64(raw + 48, 0);
		how = "an empty orphan table is safe (later passes find its "
		      "orphans as unlinked inodes)";
		break;
	case 56:
		put_be64(raw + 56, TUX3_NORMAL_INO);
		how = "pass 8 counts the inodes in use";
		break;
	case 72:
		put_be64(raw + 72, ATOM_REFCOUNT_BASE);
		how = "pass 6 finds the atom dictionary's end";
		break;
	case 96:
		/* a count the volume can hold: pass 2 counts the chain's
		 * blocks since the last unify and sets it */
		put_be32(raw + 96, 1);
		how = "pass 2 counts the log chain's blocks since the last "
		      "unify";
		break;
	default:
		return NOT_MINE;
	}
	if (super_usable(f, raw, NULL, why, sizeof(why)))
		return NOT_MINE;
	if (!fsck_problem(f, P1_RECOMPUTE, true, NULL, what, how))
		return REPORTED;
	return write_super(c, raw, off, 8);
}

/* Would the whole volume open, log replayed, with the superblock area
 * raw, and no log record at odds with the bitmap?  The test of a value
 * no copy vouches for. */
static bool opens_with(struct fsck *f, const uint8_t *raw)
{
	char why[200];
	struct tux3_volume *v;
	if (super_usable(f, raw, NULL, why, sizeof(why)))
		return false;
	if (volume_open_trial(f->path, raw, &v, why, sizeof(why)))
		return false;
	/* an older state (a log head or root of before the last unify)
	 * may open too; its bitmap then disagrees with the log */
	bool clean = !v->replay_conflicts;
	tux3_close(v);
	return clean;
}

static bool in_list(const uint64_t *v, unsigned n, uint64_t x)
{
	for (unsigned i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

unsigned fsck_log_head_candidates(const struct disksuper *sb,
				  uint64_t reserved, uint64_t *cand,
				  unsigned max)
{
	unsigned n = 0;
	uint64_t have = sb->logchain;
	if (sb->nextblock > reserved && sb->nextblock - 1 < sb->volblocks &&
	    sb->nextblock - 1 != have)
		cand[n++] = sb->nextblock - 1;
	for (unsigned k = 0; k < 64 && n < max; k++) {
		uint64_t b = have ^ (1ULL << k);
		if (b >= reserved && b < sb->volblocks && !in_list(cand, n, b))
			cand[n++] = b;
	}
	return n;
}

/* The candidates for the field at off that derive_field tries: at most
 * max of them, in cand; their count. */
static unsigned derive_candidates(const struct tux3_volume *v, unsigned off,
				  uint64_t *cand, unsigned max)
{
	const uint8_t *prim = v->sbraw;
	unsigned n = 0;
	switch (off) {
	case 32:	/* not a possible size: the device's */
		if (v->super.blockbits >= 9 && v->super.blockbits <= 16)
			cand[n++] = v->dev.size >> v->super.blockbits;
		break;
	case 88:
		n = fsck_log_head_candidates(&v->super, v->reserved_blocks,
					     cand, max);
		break;
	case 24:	/* every block size the format has */
		for (unsigned b = 9; b <= 16 && n < max; b++)
			if (b != be16(prim + off))
				cand[n++] = b;
		break;
	case 40: case 48: {	/* the root's block, at every depth */
		struct root r = root_unpack(be64(prim + off));
		for (unsigned d = 1; d <= TUX3_MAX_DEPTH && n < max; d++) {
			uint64_t p = root_pack((struct root){ .block = r.block,
							      .depth = d });
			if (p != be64(prim + off))
				cand[n++] = p;
		}
		break;
	}
	}
	return n;
}

unsigned fsck_magic_at(struct device *dev, uint64_t off)
{
	uint8_t m[2];
	return dev_pread(dev, m, 2, off) ? 0 : (unsigned)m[0] << 8 | m[1];
}

/*
 * The block size under which the log's head is a log block and the
 * inode table's root a node of the kind its depth says, when exactly
 * one has both: the structure alone, for a volume that does not open
 * under any block size because of damage elsewhere (which the later
 * passes repair), as e2fsck probes every block size for a superblock.
 * 0 when none or several.
 */
static unsigned block_size_probe(struct fsck *f, const struct tux3_volume *v)
{
	const struct disksuper *sb = &v->super;
	struct root r = root_unpack(sb->iroot);
	unsigned found = 0;
	struct tux3_volume *nv;
	if (!sb->logcount || !sb->iroot || r.direct || !r.depth)
		return 0;
	fsck_open_super(f, &nv);
	f->msg[0] = 0;
	if (!nv)
		return 0;
	for (unsigned b = TUX3_MIN_BLOCKBITS; b <= TUX3_MAX_BLOCKBITS; b++) {
		uint64_t reserved = fsck_reserved_blocks(b);
		if (sb->volblocks > nv->dev.size >> b ||
		    sb->logchain < reserved || sb->logchain >= sb->volblocks ||
		    r.block < reserved || r.block >= sb->volblocks ||
		    fsck_magic_at(&nv->dev, sb->logchain << b) != TUX3_MAGIC_LOG ||
		    fsck_magic_at(&nv->dev, r.block << b) != (r.depth > 1 ?
		    TUX3_MAGIC_BNODE : TUX3_MAGIC_ILEAF))
			continue;
		if (found) {
			found = 0;
			break;
		}
		found = b;
	}
	fsck_close_super(nv);
	return found;
}

/*
 * Without a copy to take it from, a field the volume itself shows: of
 * the values it may have (every block size; the root's block at every
 * depth, not direct), the one with which the whole volume opens, log
 * replayed, when exactly one does.  A wrong block size reads the log
 * and the trees at the wrong places, a wrong depth reads a leaf as an
 * index node or the other way round: neither replays and loads the
 * bitmap.  With two that open, nothing says which: left as it is.
 */
static int derive_field(struct fsck *f, const struct tux3_volume *v,
			unsigned off, const char *what, struct sbcopy *c)
{
	const uint8_t *prim = v->sbraw;
	uint64_t cand[72];
	/* a wrong block size shows as a volume larger than the device
	 * (off 32) as often as one outside the format's; a possible
	 * volume larger than its device is not shrunk (a truncated image
	 * would lose what lies past), one no volume can have is */
	uint64_t vb = v->super.volblocks;
	if (off == 32 && vb > v->reserved_blocks + 1 && vb <= TUX3_MAX_BLOCK)
		off = 24;
	unsigned len = off == 24 ? 2 : 8;
	unsigned n = derive_candidates(v, off, cand, 72);
	uint8_t raw[TUX3_SB_LEN];
	int found = -1;
	for (unsigned i = 0; i < n; i++) {
		memcpy(raw, prim, TUX3_SB_LEN);
		if (len == 2)
			put_be16(raw + off, (uint16_t)cand[i]);
		else
			put_be64(raw + off, cand[i]);
		if (!opens_with(f, raw))
			continue;
		if (found >= 0)
			return NOT_MINE;
		found = (int)i;
	}
	f->msg[0] = 0;
	char how[160];
	if (found < 0 && off == 24 && (cand[0] = block_size_probe(f, v))) {
		found = 0;
		snprintf(how, sizeof(how), "only under blockbits %" PRIu64
			 " is the log's head a log block and the inode "
			 "table's root a node", cand[0]);
	} else if (found >= 0) {
		const char *name = off == 24 ? "blockbits" : off == 32 ?
				   "volblocks" : off == 88 ? "logchain" :
				   off == 40 ? "the inode table root" :
				   "the orphan table root";
		snprintf(how, sizeof(how), len == 2 || off == 32 ||
			 off == 88 ? "of the values %s may have, only %"
			 PRIu64 " opens the volume with its log replayed" :
			 "of the values %s may have, only %#" PRIx64 " opens "
			 "the volume with its log replayed", name,
			 cand[found]);
	}
	if (found < 0)
		return NOT_MINE;
	if (!fsck_problem(f, P1_RECOMPUTE, true, NULL, what, how))
		return REPORTED;
	memcpy(c->fix, prim, TUX3_SB_LEN);
	if (len == 2)
		put_be16(c->fix + off, (uint16_t)cand[found]);
	else
		put_be64(c->fix + off, cand[found]);
	return write_super(c, c->fix, off, len);
}

/* The field at fault (superblock-relative offset off) reported with its
 * own problem code: nothing to repair it from. */
static void report_field(struct fsck *f, const struct tux3_volume *v,
			 unsigned off, const char *what)
{
	const struct disksuper *sb = &v->super;
	char hex[17];
	switch (off) {
	case 0:
		magic_hex(sb->magic, hex);
		fsck_problem(f, P1_MAGIC, false, NULL, hex);
		break;
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
}

/*
 * A field that differs from the secondary copy while every other byte
 * of the superblock, the extension record with its seal included,
 * agrees: the copy is of the same commit, and the field is damage.
 * The geometry (blockbits, volblocks) no commit changes; a wrong but
 * possible value passes every check of the superblock alone, and the
 * open then reads the log and the trees at the wrong places.  The
 * roots and the log's head change at every commit, but never alone: a
 * commit writes a new log block (logchain) and counts it (logcount),
 * and a foreign (reference) commit, which leaves the copy as it was,
 * changes at least those two.  A wrong root or log head that still
 * points inside the volume passes the superblock's checks, and the
 * replay then finds a tree or a log that is not there.
 */
/* The geometry field at off (blockbits, volblocks) from the secondary
 * copy, alone, the rest of the primary kept: its other differences are
 * other repairs' (or a newer commit's). */
static int geometry_from_copy(struct fsck *f, const uint8_t *prim,
			      struct sbcopy *c, unsigned off, unsigned len,
			      const char *name)
{
	uint8_t *raw = c->fix;
	char why[200], what[200];
	memcpy(raw, prim, TUX3_SB_LEN);
	memcpy(raw + off, c->raw + off, len);
	if (super_usable(f, raw, NULL, why, sizeof(why)))
		return NOT_MINE;
	uint64_t have = len == 2 ? be16(prim + off) : be64(prim + off);
	uint64_t want = len == 2 ? be16(c->raw + off) : be64(c->raw + off);
	snprintf(what, sizeof(what), "superblock: %s %" PRIu64 " differs from "
		 "the secondary copy's %" PRIu64 " (no commit changes it)",
		 name, have, want);
	if (!fsck_problem(f, P1_SB2, true, NULL, what, ", and the field "
			  "alone is taken from it"))
		return REPORTED;
	return write_super(c, raw, off, len);
}

static int field_from_copy(struct fsck *f, const uint8_t *prim,
			   struct sbcopy *c)
{
	static const struct { unsigned off, len; const char *name, *why; }
	g[] = {
		{ 24, 2, "blockbits", "no commit changes it" },
		{ 32, 8, "volblocks", "no commit changes it" },
		{ 40, 8, "iroot", "a commit changes it with the log's head" },
		{ 48, 8, "oroot", "a commit changes it with the log's head" },
		{ 88, 8, "logchain", "a commit changes it with logcount" },
		{ 96, 4, "logcount", "a commit changes it with logchain" },
	};
	/* the roots are packed (depth and block): shown in hex */
	for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
		unsigned off = g[i].off, len = g[i].len;
		if (!c->ok || !memcmp(prim + off, c->raw + off, len))
			continue;
		if (!copy_agrees(prim, c->raw, off)) {
			/* no commit changes the geometry, so the copy's is
			 * right however else the two differ */
			if (off == 24 || off == 32) {
				int r = geometry_from_copy(f, prim, c, off,
							   len, g[i].name);
				if (r != NOT_MINE)
					return r;
			}
			continue;
		}
		uint64_t have = len == 2 ? be16(prim + off) : len == 4 ?
				be32(prim + off) : be64(prim + off);
		uint64_t want = len == 2 ? be16(c->raw + off) : len == 4 ?
				be32(c->raw + off) : be64(c->raw + off);
		char what[200];
		bool root = off == 40 || off == 48;
		snprintf(what, sizeof(what), root ? "superblock: %s %#" PRIx64
			 " differs from the secondary copy's %#" PRIx64 " (%s)" :
			 "superblock: %s %" PRIu64 " differs from the secondary "
			 "copy's %" PRIu64 " (%s)", g[i].name, have, want,
			 g[i].why);
		return from_copy(f, prim, c, off, what);
	}
	return NOT_MINE;
}

/*
 * The last resort for a primary the open refuses and no single field of
 * which can be mended: the whole secondary copy, when it opens, though
 * it differs in more fields than the damaged one (several fields hit
 * at once, or commits since the copy by code that does not keep it,
 * which are then lost), as e2fsck -b takes a backup superblock.
 */
static int whole_copy(struct fsck *f, const uint8_t *prim, struct sbcopy *c,
		      const char *what)
{
	unsigned n = 0;
	char note[160];
	if (!c->ok)
		return NOT_MINE;
	for (size_t i = 0; i < sizeof(sb_fields) / sizeof(sb_fields[0]); i++)
		n += !!memcmp(prim + sb_fields[i].off,
			      c->raw + sb_fields[i].off, sb_fields[i].len);
	if (!n)
		return NOT_MINE;
	snprintf(note, sizeof(note), " and opens, though it differs from the "
		 "primary in %u field%s (what was committed since the copy "
		 "is lost)", n, n == 1 ? "" : "s");
	if (!fsck_problem(f, P1_SB2, true, NULL, what, note))
		return REPORTED;
	return write_super(c, c->raw, 0, SB2_COPY);
}

/*
 * A volume smaller than its device that does not open, log replayed:
 * when with the device's size it does (volblocks was made smaller: the
 * log and the trees name blocks past it), or with another block size
 * (blockbits made smaller: the same count of smaller blocks fits the
 * device), and exactly one of these does, it is written back.  Left as
 * it is, the later passes would cut every extent past the false end
 * out of its file, or read the log and trees at the wrong places.
 */
static int geometry_short(struct fsck *f, const struct tux3_volume *vol,
			  struct sbcopy *c)
{
	uint64_t device = vol->dev.size >> vol->blockbits;
	if (vol->super.volblocks >= device || device > TUX3_MAX_BLOCK ||
	    opens_with(f, vol->sbraw))
		return NOT_MINE;
	uint8_t raw[TUX3_SB_LEN];
	unsigned found = 0, off = 0;
	uint64_t value = 0;
	/* candidate 8: the device's size; 9..16: a block size */
	for (unsigned k = 8; k <= 16; k++) {
		memcpy(raw, vol->sbraw, TUX3_SB_LEN);
		if (k == 8) {
			put_be64(raw + 32, device);
		} else {
			if (k == vol->blockbits ||
			    vol->super.volblocks > vol->dev.size >> k)
				continue;
			put_be16(raw + 24, (uint16_t)k);
		}
		if (!opens_with(f, raw))
			continue;
		if (found++)
			break;
		off = k == 8 ? 32 : 24;
		value = k == 8 ? device : k;
	}
	f->msg[0] = 0;
	if (found != 1)
		return NOT_MINE;
	char what[160], how[160];
	snprintf(what, sizeof(what), "superblock: the volume of %" PRIu64
		 " blocks of 2^%u bytes does not open on a device of %" PRIu64
		 " bytes", vol->super.volblocks, vol->blockbits,
		 vol->dev.size);
	snprintf(how, sizeof(how), "with %s %" PRIu64 " it opens with its "
		 "log replayed", off == 32 ? "volblocks" : "blockbits", value);
	if (!fsck_problem(f, P1_RECOMPUTE, true, NULL, what, how))
		return REPORTED;
	memcpy(c->fix, vol->sbraw, TUX3_SB_LEN);
	if (off == 32)
		put_be64(c->fix + 32, value);
	else
		put_be16(c->fix + 24, (uint16_t)value);
	return write_super(c, c->fix, off, off == 32 ? 8 : 2);
}

/* Are the bitmap's bits for blocks [from, to) all clear, on volume t
 * (opened with from blocks)?  Past the bitmap file's end, or in a hole,
 * they are. */
static bool bitmap_clear_past(struct tux3_volume *t, uint64_t from,
			      uint64_t to)
{
	uint8_t buf[4096];
	uint64_t pos = from >> 3, end = (to + 7) >> 3;
	while (pos < end) {
		size_t want = end - pos < sizeof(buf) ? (size_t)(end - pos) :
			      sizeof(buf);
		ssize_t got = tux3_read(t, TUX3_BITMAP_INO, buf, want, pos);
		/* no bitmap file yet (never unified): the log alone says
		 * what is in use, and it replayed inside the device */
		if (got == -ENOENT)
			return true;
		if (got < 0)
			return false;
		if (!got)
			return true;
		for (ssize_t i = 0; i < got; i++) {
			uint8_t b = buf[i];
			if (pos + (uint64_t)i == from >> 3)
				b &= (uint8_t)(0xff << (from & 7));
			if (pos + (uint64_t)i == end - 1 && (to & 7))
				b &= (uint8_t)(0xff >> (8 - (to & 7)));
			if (b)
				return false;
		}
		pos += (uint64_t)got;
	}
	return true;
}

/* A bitmap read past the device's end of at most this many blocks (a
 * size several bits off reads a few MiB of holes). */
#define SHRINK_CHECK_MAX (1ULL << 27)

/*
 * A possible volume size larger than the device, with no copy to take
 * the right one from: shrunk to the device only when that loses
 * nothing, that is when with the device's size the volume opens, log
 * replayed, with no record at odds with the bitmap (a log that names a
 * block past the end does not replay), and the bitmap marks no block
 * at or past the device's end in use.  A truncated image, or the wrong
 * device, has blocks in use past its end, and is left as it is.
 */
static int shrink_to_device(struct fsck *f, const struct tux3_volume *v,
			    const char *what, struct sbcopy *c)
{
	uint64_t device = v->dev.size >> v->blockbits;
	uint64_t claimed = v->super.volblocks;
	char why[200];
	if (claimed <= device || claimed - device > SHRINK_CHECK_MAX ||
	    device <= v->reserved_blocks + 1)
		return NOT_MINE;
	uint8_t *raw = c->fix;
	memcpy(raw, v->sbraw, TUX3_SB_LEN);
	put_be64(raw + 32, device);
	struct tux3_volume *t;
	if (super_usable(f, raw, NULL, why, sizeof(why)) ||
	    volume_open_trial(f->path, raw, &t, why, sizeof(why)))
		return NOT_MINE;
	bool lossless = !t->replay_conflicts &&
			bitmap_clear_past(t, device, claimed);
	tux3_close(t);
	f->msg[0] = 0;
	if (!lossless)
		return NOT_MINE;
	char how[200];
	snprintf(how, sizeof(how), "the bitmap marks no block past the "
		 "device's end in use, and with the device's size (volblocks %"
		 PRIu64 ") the volume opens with its log replayed", device);
	if (!fsck_problem(f, P1_RECOMPUTE, true, NULL, what, how))
		return REPORTED;
	return write_super(c, raw, 32, 8);
}

/* A field the open refused: from the secondary copy if it has the same
 * commit, else recomputed when it can be, else the whole copy when it
 * opens, else reported as it is. */
static int refused_field(struct fsck *f, const struct tux3_volume *v,
			 struct sbcopy *c)
{
	const char *what = v->error.what;
	unsigned off = v->error.offset == TUX3_NONE ? 0 :
		       (unsigned)(v->error.offset - TUX3_SB_OFFSET);
	int r = from_copy(f, v->sbraw, c, off, what);
	/* the check that refused names a field other than the damaged one
	 * (a wrong blockbits shows as a volume larger than the device) */
	if (r == NOT_MINE)
		r = field_from_copy(f, v->sbraw, c);
	if (r == NOT_MINE && off == 0)
		r = magic_near(f, v->sbraw, c);
	if (r == NOT_MINE)
		r = recompute(f, v->sbraw, off, what, c);
	if (r == NOT_MINE)
		r = whole_copy(f, v->sbraw, c, what);
	if (r == NOT_MINE)
		r = derive_field(f, v, off, what, c);
	if (r == NOT_MINE && off == 32)
		r = shrink_to_device(f, v, what, c);
	/* a root or the log's head past a volume smaller than its device:
	 * the size may be what is wrong (the geometry passed the checks
	 * before these fields') */
	if (r == NOT_MINE && off >= 40)
		r = geometry_short(f, v, c);
	if (r == NOT_MINE)
		report_field(f, v, off, what);
	return r;
}

/* Feature bits the copy of the same commit does not have: the record
 * changed outside a commit (damage), restored from the copy. */
static int features_refuted(struct fsck *f, const uint8_t *prim,
			    struct sbcopy *c, const char *which,
			    uint32_t bits)
{
	if (!copy_record_wins(prim, c, true))
		return NOT_MINE;
	char why[200];
	snprintf(why, sizeof(why), "unknown %s feature flags %#x, which the "
		 "secondary superblock of the same or a later commit does not "
		 "have (the record changed outside a commit)", which, bits);
	if (!fsck_problem(f, P1_EXT_BAD, true, NULL,
			  (uint64_t)TUX3_SB_OFFSET + SUPEREXT_OFFSET,
			  (uint64_t)TUX3_SB_OFFSET + SUPEREXT_OFFSET +
			  SUPEREXT_SIZE - 1, why,
			  "the secondary copy at byte 1024 holds it whole"))
		return REPORTED;
	return write_super(c, c->raw, SUPEREXT_OFFSET, SUPEREXT_SIZE);
}

/*
 * The superblock was refused: take it apart again on the superblock
 * alone to find which check failed (super_check names the field's byte
 * offset), and repair it from the secondary copy or recompute it when
 * that can be done, else report it.  Returns FIXED when the primary was
 * rewritten (pass 1 opens it again), else 0; <0 for an operational
 * error.
 */
static int classify_refusal(struct fsck *f, int open_err, struct sbcopy *c)
{
	char msg[sizeof(f->msg)];
	struct tux3_volume *v;
	int err, r = 0;

	snprintf(msg, sizeof(msg), "%s", f->msg);
	err = fsck_open_super(f, &v);
	if (err && !v)
		return err;
	f->msg[0] = 0;
	copy_load(f, &v->dev, c);
	if (err && v->error.offset == TUX3_SB_OFFSET &&
	    v->error.err != -EUCLEAN) {
		fsck_problem(f, P1_SUPER_BAD, false, NULL, v->error.what);
	} else if (err) {
		r = refused_field(f, v, c);
	} else {
		/* the fields are sound: the extension record's features
		 * refused it */
		struct tux3_identity id;
		struct superext_seal seal;
		char why[160];
		int ext = superext_decode(v->sbraw, &id, &seal, why,
					  sizeof(why));
		uint32_t inc = id.incompat & ~SUPEREXT_INCOMPAT_KNOWN;
		uint32_t ro = id.ro_compat & ~SUPEREXT_RO_COMPAT_KNOWN;
		if (ext == 1 && inc &&
		    !(r = features_refuted(f, v->sbraw, c, "incompatible",
					   inc)))
			fsck_problem(f, P1_FEATURES, false, NULL, (uint64_t)inc);
		else if (ext == 1 && !inc && open_err == -EROFS &&
			 !(r = features_refuted(f, v->sbraw, c, "read-only",
						ro)))
			fsck_problem(f, P1_RO_FEATURES, false, NULL,
				     (uint64_t)ro);
		else if (ext != 1)
			fsck_problem(f, P1_SUPER_BAD, false, NULL, msg);
	}
	fsck_close_super(v);
	return r < 0 ? r : r == FIXED ? FIXED : 0;
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

/* The UUID in its usual text form. */
static void uuid_text(const uint8_t *u, char out[37])
{
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4],
		 u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
		 u[14], u[15]);
}

/* Could a newer tool have written this record (its CRC good)?  A
 * later version at least our size, or ours grown; never a version
 * below 1 or a size below ours, nor one past the superblock area. */
static bool record_newer(unsigned version, unsigned size)
{
	if (size > TUX3_SB_LEN - SUPEREXT_OFFSET)
		return false;
	return (version > SUPEREXT_VERSION && size >= SUPEREXT_SIZE) ||
	       (version == SUPEREXT_VERSION && size > SUPEREXT_SIZE);
}

/*
 * What can be kept of a damaged record r, in id: with a good CRC (only
 * its version or size impossible) every field, features this build
 * knows included; with a bad one the identity when the frame holds and
 * it looks sane (features are not kept: a damaged record cannot vouch
 * for them).  plan says what is kept.  Returns false when nothing is.
 */
static bool record_salvage(const uint8_t *r, bool crc_ok,
			   struct tux3_identity *id, char *plan, size_t len)
{
	bool keep = be32(r) == SUPEREXT_MAGIC && !all_zero(r + 24, 16) &&
		    label_readable(r + 40) &&
		    (crc_ok || (be16(r + 4) == SUPEREXT_VERSION &&
				be16(r + 6) == SUPEREXT_SIZE));
	if (!keep) {
		snprintf(plan, len, "its UUID and label are lost (a new UUID "
			 "will be made)");
		return false;
	}
	memcpy(id->uuid, r + 24, 16);
	memcpy(id->label, r + 40, TUX3_LABEL_MAX);
	id->mkfs_time_ns = (int64_t)be64(r + 104);
	if (crc_ok) {
		id->compat = be32(r + 8) & SUPEREXT_COMPAT_KNOWN;
		id->ro_compat = be32(r + 12) & SUPEREXT_RO_COMPAT_KNOWN;
		id->incompat = be32(r + 16) & SUPEREXT_INCOMPAT_KNOWN;
	}
	char uuid[37];
	uuid_text(id->uuid, uuid);
	snprintf(plan, len, "its UUID %s%s label \"%s\"%s are still "
		 "readable", uuid, crc_ok ? "," : " and", id->label,
		 crc_ok ? " and features" : "");
	return true;
}

/*
 * The extension record (superblock bytes 512..1023).  All zero means
 * none (volumes of the reference mkfs): fine.  Otherwise it must decode.
 * A damaged one is taken from the secondary copy when that holds it
 * (written at once: FIXED, pass 1 opens the volume again), else
 * rewritten from what can be read of it (pass 2 puts it on the volume).
 * A record with a good CRC that a newer tool could have written (a
 * later version, a larger size) is left alone; a version below 1 or a
 * size below ours no tool writes: damage.
 */
static int check_extension(struct fsck *f, const uint8_t *sbraw,
			   struct sbcopy *c)
{
	const uint8_t *r = sbraw + SUPEREXT_OFFSET;
	uint64_t from = TUX3_SB_OFFSET + SUPEREXT_OFFSET;
	uint64_t to = from + SUPEREXT_SIZE - 1;
	struct tux3_identity id;
	struct superext_seal seal;
	char why[160], plan[200];

	if (superext_decode(sbraw, &id, &seal, why, sizeof(why)) >= 0)
		return 0;
	bool framed = be32(r) == SUPEREXT_MAGIC;
	bool crc_ok = framed && be32(r + SUPEREXT_CRC_OFFSET) ==
				tux3_crc32c(0, r, SUPEREXT_CRC_OFFSET);
	if (copy_record_wins(sbraw, c, crc_ok)) {
		if (!fsck_problem(f, P1_EXT_BAD, true, NULL, from, to, why,
				  "the secondary copy at byte 1024 holds it "
				  "whole"))
			return REPORTED;
		return write_super(c, c->raw, SUPEREXT_OFFSET, SUPEREXT_SIZE);
	}
	if (crc_ok && record_newer(be16(r + 4), be16(r + 6))) {
		fsck_problem(f, P1_EXT_NEWER, false, NULL, from, to, why);
		return REPORTED;
	}
	memset(&id, 0, sizeof(id));
	id.present = 1;
	id.version = SUPEREXT_VERSION;
	bool keep = record_salvage(r, crc_ok, &id, plan, sizeof(plan));
	if (!fsck_problem(f, P1_EXT_BAD, true, NULL, from, to, why, plan))
		return REPORTED;
	if (!keep) {
		int err = new_uuid(id.uuid);
		if (err) {
			fsck_fixed(f, err);
			return err;
		}
	}
	/* written by the final commit (pass 2 puts it on the volume) */
	f->ext_ident = id;
	f->ext_rewrite = true;
	return REPORTED;
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

/* The volume opened: its superblock warnings, the extension record,
 * the hints and unknown ro_compat features.  FIXED when the primary was
 * rewritten from the copy (opened again), else 0, or <0. */
/* The 2014 magic and "tux3inc1" against the record's incompat bits
 * (format.md 15.6): a volume with ATIME under the 2014 magic would be
 * opened by the reference, which misreads access times; "tux3inc1"
 * over a record without the bit is refused by it for nothing (a torn
 * write of tux3tune -O's two marks leaves either).  The record, which
 * a CRC guards, decides.  The versions magic and bit are pass 9's. */
static int atime_magic(struct fsck *f, const struct tux3_volume *vol,
		       struct sbcopy *c)
{
	const uint8_t *sb = vol->sbraw;
	uint32_t incompat = vol->ident.incompat;
	if (!vol->ident.present ||
	    (incompat & TUX3_FEATURE_INCOMPAT_VERSIONS) ||
	    !memcmp(sb, tux3_magic_versions, 8))
		return NOT_MINE;
	const uint8_t *want = tux3_magic_for(incompat);
	if (!memcmp(sb, want, 8))
		return NOT_MINE;
	char have_hex[17], want_hex[17];
	magic_hex(sb, have_hex);
	magic_hex(want, want_hex);
	if (!fsck_problem(f, P1_ATIME_MAGIC, true, NULL, have_hex,
			  (uint64_t)incompat, want_hex))
		return REPORTED;
	memcpy(c->fix, sb, TUX3_SB_LEN);
	memcpy(c->fix, want, 8);
	return write_super(c, c->fix, 0, 8);
}

static int check_open(struct fsck *f, struct tux3_volume *vol,
		      struct sbcopy *c)
{
	/* Of the no-replay open's warnings only the superblock's own are
	 * problems: trees the log has yet to build are the format's normal
	 * state between unifies (pass 2 replays and checks them), and the
	 * extension record's is checked below with its reason. */
	for (unsigned i = 0; i < tux3_warning_count(vol); i++)
		if (tux3_warning_source(vol, i) == TUX3_WARN_SUPER)
			fsck_problem(f, P1_SUPER_WARNING, false, NULL,
				     tux3_warning(vol, i));
	copy_load(f, &vol->dev, c);
	int r = field_from_copy(f, vol->sbraw, c);
	if (r == NOT_MINE)
		r = geometry_short(f, vol, c);
	if (r != NOT_MINE)
		goto out;
	r = check_extension(f, vol->sbraw, c);
	if (r == FIXED || r < 0)
		goto out;
	r = atime_magic(f, vol, c);
	if (r == FIXED || r < 0)
		goto out;
	check_hints(f, vol);
	/* unknown ro_compat features: this build cannot vouch for the
	 * volume, so both modes report it (exit 4), unless the copy of
	 * the same commit shows them to be damage; a check goes on
	 * reading, a repair writes nothing */
	uint32_t ro = vol->ident.present ?
		      vol->ident.ro_compat & ~SUPEREXT_RO_COMPAT_KNOWN : 0;
	if (ro && (r = features_refuted(f, vol->sbraw, c, "read-only",
					ro)) == NOT_MINE) {
		fsck_problem(f, P1_RO_FEATURES, false, NULL, (uint64_t)ro);
		if (fsck_repairing(f))
			f->unusable = true;
	} else if (ro && r == REPORTED && fsck_repairing(f)) {
		f->unusable = true;
	}
out:
	return r == FIXED ? FIXED : r < 0 ? r : 0;
}

/*
 * Pass 1.  A repair of the superblock made here is written at once (no
 * open accepts the volume before it, so no delta can carry it), and the
 * volume is opened again; at most once per kind of repair, so a repair
 * that did not take cannot loop.
 */
int fsck_pass1(struct fsck *f)
{
	struct sbcopy *c = malloc(sizeof(*c));
	int r = 0;
	if (!c)
		return -ENOMEM;
	for (int round = 0; ; round++) {
		struct tux3_volume *vol;
		int err = tux3_open_err(f->path, TUX3_OPEN_NOREPLAY, &vol,
					f->msg, sizeof(f->msg));
		if (err) {
			if (!fsck_open_damage(err)) {
				r = err;
				break;
			}
			r = classify_refusal(f, err, c);
		} else {
			r = check_open(f, vol, c);
			tux3_close(vol);
		}
		if (r == FIXED && (r = write_fix(f, c)) == 0 && round < 3)
			continue;
		if (err && r >= 0)
			f->unusable = true;
		break;
	}
	free(c);
	return r < 0 ? r : 0;
}

/*
 * The version index (doc/format.md 17.11): for each label other than the
 * origin's, the inodes with an element of it, attribute or data.  Two
 * versions read alike wherever no element of a label on one's ancestor
 * chain and not the other's lies (17.9), and the origin is on every
 * chain, so these pairs alone name every inode that may differ between
 * two versions: `snapshot diff` and rollback read the index, not the
 * whole inode table.
 *
 * It lives in the version table's file (inode 3) from VINDEX_OFFSET on,
 * past the largest table, as a header and (label, inode) records in the
 * order they were made.  The index is a superset: a pair is added by the
 * store that writes the inode's first element of the label (the blob
 * store and the versioned leaf store note every label they write, a set
 * in memory drops the pairs already there), and pairs of labels a delete
 * freed go when the table is saved; a pair whose inode lost its elements
 * since stays, harmless (the inode compares equal).  The records a delta
 * adds are appended when it commits, in the same delta as the elements.
 *
 * The volume says it keeps the index with the VERSION_INDEX ro_compat
 * bit, set by the commit that makes the first table (no element of a
 * snapshot's label exists yet, so the empty index is whole) and cleared
 * with the table.  A volume versioned without it, an index that does not
 * decode, or one that outgrew VINDEX_MAX_RECORDS is not used: readers
 * scan as before, and fsck.tux3 builds it again (pass 9).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "version/vinode.h"
#include "version/version.h"
#include "version/vfilemap.h"

#define VINDEX_MAGIC	0x54335658u	/* "T3VX" */
#define VINDEX_FORMAT	1
#define VINDEX_FLAG_INCOMPLETE 0x1u	/* outgrew the bound: not used */
/* records read or written per step */
#define VINDEX_CHUNK	4096

struct vindex {
	bool bad;		/* did not decode: unused until rebuilt */
	bool incomplete;	/* over VINDEX_MAX_RECORDS: unused */
	bool rewrite;		/* written whole at the next commit */
	struct blockset keys;	/* the pairs, as vindex_key */
	uint64_t *rec;		/* the pairs in file order */
	size_t n, cap;
	size_t ondisk;		/* rec[0, ondisk) are on disk */
	uint32_t crc;		/* of the records on disk */
	struct tux3_error why;	/* what did not decode (bad) */
};

static uint64_t vindex_key(unsigned label, tux3_ino_t inum)
{
	return (uint64_t)inum << VERSION_LABEL_BITS | label;
}

static unsigned key_label(uint64_t key)
{
	return (unsigned)(key & (VERSION_LABELS - 1));
}

static tux3_ino_t key_inum(uint64_t key)
{
	return key >> VERSION_LABEL_BITS;
}

bool vindex_feature(const struct tux3_volume *vol)
{
	return vol->ident.present &&
	       (vol->ident.ro_compat & TUX3_FEATURE_RO_COMPAT_VERSION_INDEX);
}

void vindex_free(struct tux3_volume *vol)
{
	struct vindex *ix = vol->vindex;
	if (!ix)
		return;
	blockset_free(&ix->keys);
	free(ix->rec);
	free(ix);
	vol->vindex = NULL;
}

static void put_record(uint8_t *r, uint64_t key)
{
	put_be16(r, (uint16_t)key_label(key));
	uint64_t inum = key_inum(key);
	put_be16(r + 2, (uint16_t)(inum >> 32));
	put_be32(r + 4, (uint32_t)inum);
}

static int add_key(struct vindex *ix, uint64_t key)
{
	if (array_grow((void **)&ix->rec, &ix->cap, ix->n, sizeof(*ix->rec)))
		return -ENOMEM;
	int r = keyset_add(&ix->keys, key);
	if (r <= 0)
		return r;
	ix->rec[ix->n++] = key;
	return 0;
}

static int decode_records(struct tux3_volume *vol, struct vindex *ix,
			  const uint8_t *buf, size_t count, size_t first)
{
	for (size_t i = 0; i < count; i++) {
		const uint8_t *r = buf + i * VINDEX_RECORD;
		unsigned label = be16(r);
		tux3_ino_t inum = (uint64_t)be16(r + 2) << 32 | be32(r + 4);
		uint64_t at = VINDEX_OFFSET + VINDEX_HEADER +
			      (first + i) * VINDEX_RECORD;
		if (!label || label >= VERSION_LABELS || inum < TUX3_ROOT_INO)
			return vol_error(vol, -EUCLEAN, TUX3_NONE,
					 TUX3_VTABLE_INO, at, "version index "
					 "(inode 3): record %zu names label %u "
					 "of inode %" PRIu64 " at byte %" PRIu64,
					 first + i, label, inum, at);
		int err = add_key(ix, vindex_key(label, inum));
		if (err)
			return err;
	}
	return 0;
}

/* The index header at VINDEX_OFFSET checked: its record count. */
static int decode_header(struct tux3_volume *vol, const uint8_t *h,
			 uint64_t size, uint32_t *count, uint32_t *crc,
			 bool *incomplete)
{
	static const uint8_t zero[VINDEX_HEADER];
	unsigned flags = be16(h + 6);
	*count = be32(h + 8);
	*crc = be32(h + 12);
	*incomplete = flags & VINDEX_FLAG_INCOMPLETE;
	const char *what = NULL;
	unsigned at = 0;
	if (be32(h) != VINDEX_MAGIC)
		what = "magic";
	else if (be16(h + 4) != VINDEX_FORMAT)
		what = "format", at = 4;
	else if (flags & ~VINDEX_FLAG_INCOMPLETE)
		what = "flags", at = 6;
	else if (*count > VINDEX_MAX_RECORDS ||
		 VINDEX_OFFSET + VINDEX_HEADER +
		 (uint64_t)*count * VINDEX_RECORD > size)
		what = "record count", at = 8;
	else if (memcmp(h + 16, zero, VINDEX_HEADER - 16))
		what = "reserved bytes", at = 16;
	if (!what)
		return 0;
	return vol_error(vol, -EUCLEAN, TUX3_NONE, TUX3_VTABLE_INO,
			 VINDEX_OFFSET + at, "version index (inode 3): bad %s "
			 "at byte %" PRIu64, what, (uint64_t)VINDEX_OFFSET + at);
}

static int short_read(struct tux3_volume *vol, uint64_t at)
{
	return vol_error(vol, -EUCLEAN, TUX3_NONE, TUX3_VTABLE_INO, at,
			 "version index (inode 3): the file reads short at "
			 "byte %" PRIu64, at);
}

/* The index read from inode 3 into ix; -EUCLEAN named when it does not
 * decode. */
static int read_index(struct tux3_volume *vol, struct vindex *ix)
{
	struct inode inode;
	uint8_t h[VINDEX_HEADER];
	uint8_t *buf = NULL;
	size_t done = 0;
	uint32_t count, crc;
	bool incomplete;
	int err = inode_load(vol, TUX3_VTABLE_INO, &inode);
	if (err)
		return err;
	if (inode.size < VINDEX_OFFSET + VINDEX_HEADER) {
		err = vol_error(vol, -EUCLEAN, TUX3_NONE, TUX3_VTABLE_INO,
				VINDEX_OFFSET, "version index (inode 3): the "
				"feature is set but the file ends at byte %"
				PRIu64, inode.size);
		goto out;
	}
	if ((err = inode_read(vol, &inode, h, sizeof(h), VINDEX_OFFSET,
			      &done)))
		goto out;
	if (done != sizeof(h)) {
		err = short_read(vol, VINDEX_OFFSET);
		goto out;
	}
	if ((err = decode_header(vol, h, inode.size, &count, &crc,
				 &incomplete)))
		goto out;
	ix->incomplete = incomplete;
	if (!(buf = malloc(VINDEX_CHUNK * VINDEX_RECORD))) {
		err = -ENOMEM;
		goto out;
	}
	uint32_t sum = 0;
	for (size_t at = 0; at < count && !err; ) {
		size_t k = count - at < VINDEX_CHUNK ? count - at : VINDEX_CHUNK;
		err = inode_read(vol, &inode, buf, k * VINDEX_RECORD,
				 VINDEX_OFFSET + VINDEX_HEADER +
				 at * VINDEX_RECORD, &done);
		if (!err && done != k * VINDEX_RECORD)
			err = short_read(vol, VINDEX_OFFSET + VINDEX_HEADER +
					 at * VINDEX_RECORD);
		if (!err) {
			sum = tux3_crc32c(sum, buf, done);
			err = decode_records(vol, ix, buf, k, at);
		}
		at += k;
	}
	if (!err && sum != crc)
		err = vol_error(vol, -EUCLEAN, TUX3_NONE, TUX3_VTABLE_INO,
				VINDEX_OFFSET + 12, "version index (inode 3): "
				"its records fail their CRC");
	if (!err && ix->n != count)
		err = vol_error(vol, -EUCLEAN, TUX3_NONE, TUX3_VTABLE_INO,
				VINDEX_OFFSET + 8, "version index (inode 3): a "
				"pair recorded twice");
	ix->ondisk = ix->n;
	ix->crc = sum;
out:
	free(buf);
	inode_free(&inode);
	return err;
}

/* The index in memory, read at its first use: 0, -ENOENT when the volume
 * keeps none (or it cannot be used), -EUCLEAN (named) when it is
 * damaged, -ENOMEM. */
int vindex_load(struct tux3_volume *vol)
{
	if (!vindex_feature(vol) || !vol->vt || vol->vt_bad)
		return -ENOENT;
	if (vol->vindex) {
		const struct vindex *ix = vol->vindex;
		/* named again: a caller since the first load may have
		 * cleared the error (fsck's pass 4, whose repairs store
		 * inodes and so note their labels, loads the index before
		 * pass 9 asks) */
		if (ix->bad)
			return vol_error(vol, -EUCLEAN, ix->why.block,
					 ix->why.inum, ix->why.offset, "%s",
					 ix->why.what);
		return ix->incomplete ? -ENOENT : 0;
	}
	struct vindex *ix = calloc(1, sizeof(*ix));
	if (!ix)
		return -ENOMEM;
	int err = read_index(vol, ix);
	if (err == -ENOMEM) {
		blockset_free(&ix->keys);
		free(ix->rec);
		free(ix);
		return err;
	}
	if (err) {
		/* kept as it is on disk until something rebuilds it */
		blockset_free(&ix->keys);
		free(ix->rec);
		ix->rec = NULL;
		ix->n = ix->cap = ix->ondisk = 0;
		ix->bad = true;
		ix->why = vol->error;
		if (!ix->why.what[0])
			snprintf(ix->why.what, sizeof(ix->why.what),
				 "version index (inode 3): %s",
				 strerror(-err));
	}
	vol->vindex = ix;
	return ix->bad ? -EUCLEAN : ix->incomplete ? -ENOENT : 0;
}

/* A fresh empty index, written whole by the next commit. */
static int vindex_start(struct tux3_volume *vol)
{
	vindex_free(vol);
	struct vindex *ix = calloc(1, sizeof(*ix));
	if (!ix)
		return -ENOMEM;
	ix->rewrite = true;
	vol->vindex = ix;
	return 0;
}

int vindex_begin(struct tux3_volume *vol)
{
	vol->ident.ro_compat |= TUX3_FEATURE_RO_COMPAT_VERSION_INDEX;
	return vindex_start(vol);
}

void vindex_end(struct tux3_volume *vol)
{
	vol->ident.ro_compat &= ~TUX3_FEATURE_RO_COMPAT_VERSION_INDEX;
	vindex_free(vol);
}

/* The pair (label, inum) in the index, appended with the delta. */
int vindex_add(struct tux3_volume *vol, unsigned label,
		      tux3_ino_t inum)
{
	if (label == VERSION_ORIGIN || label >= VERSION_LABELS)
		return 0;
	int err = vindex_load(vol);
	if (err)
		return err == -ENOMEM ? err : 0;	/* none kept: nothing */
	struct vindex *ix = vol->vindex;
	uint64_t key = vindex_key(label, inum);
	if (blockset_has(&ix->keys, key))
		return 0;
	if (ix->n >= VINDEX_MAX_RECORDS) {
		/* past the bound the index says it is incomplete, and
		 * readers scan: it is written once more, empty */
		blockset_free(&ix->keys);
		ix->n = 0;
		ix->incomplete = ix->rewrite = true;
		return 0;
	}
	return add_key(ix, key);
}

struct blob_note {
	struct tux3_volume *vol;
	tux3_ino_t inum;
};

static int note_label(void *ctx, unsigned label)
{
	struct blob_note *b = ctx;
	return vindex_add(b->vol, label, b->inum);
}

int vindex_note_blob(struct tux3_volume *vol, tux3_ino_t inum,
		     const uint8_t *blob, unsigned len)
{
	struct blob_note b = { vol, inum };
	if (!vindex_feature(vol) || !len)
		return 0;
	int err = vattrs_labels(blob, len, note_label, &b);
	return err == -EUCLEAN ? 0 : err;	/* the store refuses it */
}

int vindex_note_extents(struct tux3_volume *vol, tux3_ino_t inum,
			const struct vextents *x, uint64_t lo, uint64_t hi)
{
	int err = 0;
	if (!vindex_feature(vol))
		return 0;
	for (unsigned i = 0; i < x->n && !err; i++)
		if (x->r[i].logical >= lo && x->r[i].logical < hi)
			err = vindex_add(vol, x->r[i].label, inum);
	return err;
}

/* Pairs of labels the table vt no longer uses dropped (a delete freed
 * them: a later snapshot may take the label again). */
int vindex_keep_labels(struct tux3_volume *vol, const struct vtree *vt)
{
	int err = vindex_load(vol);
	if (err)
		return err == -ENOMEM ? err : 0;
	struct vindex *ix = vol->vindex;
	size_t k = 0;
	for (size_t i = 0; i < ix->n; i++) {
		unsigned label = key_label(ix->rec[i]);
		if (label < vt->top && vt->v[label].flags)
			ix->rec[k++] = ix->rec[i];
	}
	if (k == ix->n)
		return 0;
	ix->n = k;
	ix->rewrite = true;
	blockset_free(&ix->keys);
	for (size_t i = 0; i < ix->n && !err; i++)
		err = keyset_add(&ix->keys, ix->rec[i]) < 0 ? -ENOMEM : 0;
	return err;
}

/* ---- written with the delta ---- */

static int write_records(struct tux3_volume *vol, struct inode *inode,
			 struct vindex *ix, size_t from)
{
	uint8_t *buf = malloc(VINDEX_CHUNK * VINDEX_RECORD);
	int err = buf ? 0 : -ENOMEM;
	for (size_t at = from; at < ix->n && !err; ) {
		size_t k = ix->n - at < VINDEX_CHUNK ? ix->n - at : VINDEX_CHUNK;
		for (size_t i = 0; i < k; i++)
			put_record(buf + i * VINDEX_RECORD, ix->rec[at + i]);
		ix->crc = tux3_crc32c(ix->crc, buf, k * VINDEX_RECORD);
		err = inode_write_data(vol, inode, buf, k * VINDEX_RECORD,
				       VINDEX_OFFSET + VINDEX_HEADER +
				       at * VINDEX_RECORD, true);
		at += k;
	}
	free(buf);
	return err;
}

/* The records added since the last commit appended, or the whole index
 * written again, and its header; a commit step (vinode_ops.index_save). */
int vindex_save(struct tux3_volume *vol)
{
	struct vindex *ix = vol->vindex;
	if (!ix || ix->bad || (!ix->rewrite && ix->ondisk == ix->n) ||
	    !vindex_feature(vol))
		return 0;
	struct inode inode;
	int err = internal_inode(vol, TUX3_VTABLE_INO, &inode);
	if (err)
		return err;
	size_t from = ix->rewrite ? 0 : ix->ondisk;
	if (ix->rewrite)
		ix->crc = 0;
	err = write_records(vol, &inode, ix, from);
	uint64_t end = VINDEX_OFFSET + VINDEX_HEADER +
		       (uint64_t)ix->n * VINDEX_RECORD;
	if (!err) {
		uint8_t h[VINDEX_HEADER] = { 0 };
		put_be32(h, VINDEX_MAGIC);
		put_be16(h + 4, VINDEX_FORMAT);
		put_be16(h + 6, ix->incomplete ? VINDEX_FLAG_INCOMPLETE : 0);
		put_be32(h + 8, (uint32_t)ix->n);
		put_be32(h + 12, ix->crc);
		err = inode_write_data(vol, &inode, h, sizeof(h),
				       VINDEX_OFFSET, true);
	}
	if (!err && inode.size > end)
		err = inode_truncate(vol, &inode, end);
	if (!err)
		err = inode_store(vol, &inode);
	inode_free(&inode);
	if (!err) {
		ix->ondisk = ix->n;
		ix->rewrite = false;
	}
	return err;
}

/* ---- read by diff and rollback ---- */

static int cmp_inum(const void *a, const void *b)
{
	tux3_ino_t x = *(const tux3_ino_t *)a, y = *(const tux3_ino_t *)b;
	return x < y ? -1 : x > y;
}

int vindex_inodes(struct tux3_volume *vol, const uint8_t *differs,
		  tux3_ino_t **ino, size_t *n)
{
	*ino = NULL;
	*n = 0;
	int err = vindex_load(vol);
	if (err)
		return err == -EUCLEAN ? (tux3_clear_error(vol), -ENOENT) : err;
	struct vindex *ix = vol->vindex;
	size_t k = 0, cap = 0;
	tux3_ino_t *v = NULL;
	for (size_t i = 0; i < ix->n; i++) {
		unsigned label = key_label(ix->rec[i]);
		if (!(differs[label / 8] >> (label & 7) & 1))
			continue;
		if (array_grow((void **)&v, &cap, k, sizeof(*v))) {
			free(v);
			return -ENOMEM;
		}
		v[k++] = key_inum(ix->rec[i]);
	}
	if (k)
		qsort(v, k, sizeof(*v), cmp_inum);
	size_t u = 0;
	for (size_t i = 0; i < k; i++)
		if (!u || v[u - 1] != v[i])
			v[u++] = v[i];
	*ino = v;
	*n = u;
	return 0;
}

/* ---- fsck ---- */

bool vindex_has(const struct tux3_volume *vol, unsigned label,
		tux3_ino_t inum)
{
	const struct vindex *ix = vol->vindex;
	return label == VERSION_ORIGIN || label >= VERSION_LABELS ||
	       (ix && !ix->bad && !ix->incomplete &&
		blockset_has(&ix->keys, vindex_key(label, inum)));
}

size_t vindex_count(const struct tux3_volume *vol)
{
	return vol->vindex ? vol->vindex->n : 0;
}

bool vindex_incomplete(const struct tux3_volume *vol)
{
	return vol->vindex && vol->vindex->incomplete;
}

/*
 * common/format/: one decoder and encoder per on-disk structure of the
 * 2014 format and our extensions (doc/format.md): the superblock, its
 * extension record and second copy, bnodes, ileaves/oleaves, dleaves,
 * inode attributes, directory records, log blocks and records, and the
 * field tables of the public tux3_fields.h.  Pure buffer work and
 * validation: decoders check every field before use and report through
 * io/ (vol_error); they read no files and change nothing.  The tree ops
 * tables (itree_ops, otree_ops, dtree_ops) live with their leaf formats.
 * May call: io/.
 */
#ifndef TUX3_FORMAT_H
#define TUX3_FORMAT_H

#include "io/io.h"
#include "format/endian.h"

/* ---- super.c ---- */
/* Block magics (first be16 of each metadata block) */
#define TUX3_MAGIC_BNODE 0xb4de
#define TUX3_MAGIC_ILEAF 0x90de
#define TUX3_MAGIC_OLEAF 0x6eaf
#define TUX3_MAGIC_DLEAF 0xbeaf
#define TUX3_MAGIC_LOG	 0x10ad
extern const uint8_t tux3_magic_2014[8];
extern const uint8_t tux3_magic_versions[8];
extern const uint8_t tux3_magic_features[8];
bool tux3_magic_ok(const uint8_t *magic);	/* any of the three */
/* The magic a volume with these incompat bits carries: versions, else
 * features (any other bit), else 2014 (format.md 15.6). */
const uint8_t *tux3_magic_for(uint32_t incompat);
struct root root_unpack(uint64_t packed);
uint64_t root_pack(struct root r);
int super_decode(const uint8_t *raw, struct disksuper *sb);
int super_check(struct tux3_volume *vol);
/* Impossible hints (nextblock outside the volume, freeatom not below
 * atomgen): found, or dropped from vol->super with a warning. */
#define SUPER_HINT_NEXTBLOCK	1
#define SUPER_HINT_FREEATOM	2
unsigned super_bad_hints(const struct disksuper *sb, uint64_t volblocks);
unsigned super_drop_bad_hints(struct tux3_volume *vol);
void super_encode(uint8_t *raw, const struct disksuper *sb);
/* Device numbers as the reference userspace stores them: major << 20 |
 * minor (the kernel's internal dev_t), verified on the oracle volumes. */
static inline unsigned rdev_major(uint64_t d) { return (unsigned)((d >> 20) & 0xfff); }
static inline unsigned rdev_minor(uint64_t d) { return (unsigned)(d & 0xfffff); }

/* ---- superext.c ---- */
/* ---- superext.c: the superblock extension record (format.md 15) ----
 * Bytes 512..1023 of the 4 KiB superblock area (absolute 4608..5119),
 * which the reference writes back unchanged. */
#define SUPEREXT_OFFSET		512	/* in the superblock area */
#define SUPEREXT_SIZE		512
#define SUPEREXT_CRC_OFFSET	508
#define SUPEREXT_MAGIC		0x54335831u	/* "T3X1" */
#define SUPEREXT_VERSION	1
/* Feature bits this build knows; later features add their bits here. */
#define SUPEREXT_COMPAT_LOG_CRC		TUX3_FEATURE_COMPAT_LOG_CRC
#define SUPEREXT_COMPAT_KNOWN		(TUX3_FEATURE_COMPAT_LOG_CRC | \
					 TUX3_FEATURE_COMPAT_SB_BACKUP)
/* seal: how many of the newest log blocks carry our CRC (record byte 152) */
#define SUPEREXT_CRCLOG_OFFSET		152
#define SUPEREXT_RO_COMPAT_KNOWN	(TUX3_FEATURE_RO_COMPAT_DIR_INDEX | \
					 TUX3_FEATURE_RO_COMPAT_VERSION_INDEX)
/* seal: the DIR_INDEX generation (record byte 156) */
#define SUPEREXT_DXGEN_OFFSET		156
#define SUPEREXT_INCOMPAT_KNOWN		(TUX3_FEATURE_INCOMPAT_VERSIONS | \
					 TUX3_FEATURE_INCOMPAT_ATIME)
/* Decode the record from the 4096-byte superblock area.  Returns 1 and
 * fills id (present = 1, sealed = 0) and seal for a valid record; 0 if the
 * sector is all zero (no record); -EUCLEAN with the reason in why for a
 * sector that holds no usable record (bad magic, CRC, version or size),
 * which callers treat as absent.  id and seal are zeroed unless 1. */
int superext_decode(const uint8_t *sb4096, struct tux3_identity *id,
		    struct superext_seal *seal, char *why, size_t whylen);
/* Write a complete record into sb4096 (bytes 512..1023): id's features,
 * uuid, label (up to 64 bytes) and mkfs time; sealed against sb's
 * logchain, logcount, iroot and oroot with sequence seq; CRC last. */
void superext_encode(uint8_t *sb4096, const struct tux3_identity *id,
		     const struct disksuper *sb, uint64_t seq);
/* Does the seal match these superblock fields? */
bool superext_sealed(const struct superext_seal *seal,
		     const struct disksuper *sb);
/* Open-time step (volume_load): decode into vol->ident / vol->seal, warn
 * on a damaged record, -EOPNOTSUPP for unknown incompat features, -EROFS
 * for unknown ro_compat features in a writable mode. */
int superext_load(struct tux3_volume *vol);
/* Set the seal's log CRC count (byte 152) of an encoded record and
 * recompute its CRC (after superext_encode). */
void superext_set_crclog(uint8_t *sb4096, uint32_t crclog);
/* The same for the DIR_INDEX generation (byte 156), and the generation
 * an open uses (format.md 15.5). */
void superext_set_dxgen(uint8_t *sb4096, uint32_t gen);
uint32_t dirhash_gen_at_open(const struct tux3_volume *vol);
/* Log blocks whose CRC replay may verify: the seal's count when the LOG_CRC
 * feature is on and the seal matches vol->super, else 0. */
uint32_t log_crc_trusted(const struct tux3_volume *vol);
/* The magic or the feature bit says the volume has versions. */
bool vtable_marked(const struct tux3_volume *vol);
/* The ATIME feature (format.md 15.6): the record's bit, or the features
 * magic of a volume whose record was lost (its inodes may hold ATIME). */
bool atime_marked(const struct tux3_volume *vol);
/* The volume stores atime: the bit in a present record. */
bool atime_enabled(const struct tux3_volume *vol);
/* An incompat feature bit set or cleared in the record, the magic the
 * bits then imply with it (format.md 15.6, 17.4), for the next commit. */
void superext_set_incompat(struct tux3_volume *vol, uint32_t bit, bool on);

/* ---- sb2.c ---- */
/* ---- sb2.c: the secondary superblock (SB_BACKUP, format.md 15.3) ----
 * Absolute bytes 1024..2559 of the reserved area: a copy of superblock-area
 * bytes 0..1023, then a trailer sector (magic "T3SB", version 1, copied
 * size 1024) whose last 4 bytes are the CRC32C of everything before. */
#define SUPEREXT_COMPAT_SB_BACKUP	TUX3_FEATURE_COMPAT_SB_BACKUP
#define SB2_OFFSET	1024
#define SB2_COPY	1024
#define SB2_LEN		1536
#define SB2_CRC_AT	(SB2_LEN - 4)
#define SB2_MAGIC	0x54335342u	/* "T3SB" */
void sb2_encode(uint8_t *out, const uint8_t *sb4096);
/* 0 and the 4096-byte superblock area (tail zero) for a good copy; else
 * -ENOENT (none) or -EUCLEAN, with the reason in why. */
int sb2_decode(const uint8_t *in, uint8_t *sb4096, char *why, size_t len);
/* Write vol->sbraw's copy and flush (the commit, before the primary). */
int sb2_write(struct tux3_volume *vol);

/* ---- bnode.c ---- */
/* Move the upper part of a full leaf into an empty one (newleaf) and
 * give the separator key. */
typedef int (*leaf_split_fn)(struct tux3_volume *vol, uint8_t *leaf,
			     uint8_t *newleaf, uint64_t *sep);
struct btree_ops {
	const char *name;
	unsigned leaf_magic;
	/* Validate a leaf covering keys [lo, hi); returns 0 or -EUCLEAN with
	 * the volume error set. */
	int (*leaf_check)(struct tux3_volume *vol, const uint8_t *leaf,
			  uint64_t blocknr, uint64_t lo, uint64_t hi);
	/* for writing: an empty leaf starting at key; move the upper part
	 * of a full leaf into an empty one and give the separator key */
	void (*leaf_init)(struct tux3_volume *vol, uint8_t *leaf,
			  uint64_t key);
	leaf_split_fn leaf_split;
};
#define BNODE_HEADER 8
#define BNODE_ENTRY 16
unsigned bnode_capacity(unsigned blocksize);
static inline unsigned bnode_count(const uint8_t *b) { return be32(b + 4); }
static inline uint64_t bnode_key(const uint8_t *b, unsigned i)
{ return be64(b + BNODE_HEADER + BNODE_ENTRY * i); }
static inline uint64_t bnode_child(const uint8_t *b, unsigned i)
{ return be64(b + BNODE_HEADER + BNODE_ENTRY * i + 8); }
int bnode_check(struct tux3_volume *vol, const uint8_t *b, uint64_t blocknr,
		uint64_t lo, uint64_t hi, bool is_root);
/* index of last entry with key <= k (0 if none) */
unsigned bnode_lookup(const uint8_t *b, uint64_t key);
unsigned bnode_search(const uint8_t *b, uint64_t key);	/* a checked node */
/* editing (bnode.c): shared by the B-tree engine and log replay */
void bnode_init(uint8_t *b, unsigned blocksize);
int bnode_init_root(uint8_t *b, unsigned blocksize, unsigned count,
		    uint64_t left, uint64_t right, uint64_t rkey);
int bnode_add(uint8_t *b, unsigned blocksize, uint64_t key, uint64_t child);
int bnode_update(uint8_t *b, uint64_t key, uint64_t child);
int bnode_update_first(uint8_t *b, uint64_t key, uint64_t child);
int bnode_split(uint8_t *src, unsigned pos, uint8_t *dst, unsigned blocksize);
int bnode_merge(uint8_t *dst, const uint8_t *src, unsigned blocksize);
int bnode_del(uint8_t *b, uint64_t key, unsigned count);
int bnode_adjust(uint8_t *b, uint64_t from, uint64_t to);

/* ---- ileaf.c ---- */
extern const struct btree_ops itree_ops, otree_ops, dtree_ops;
#define ILEAF_HEADER 16
int ileaf_check(struct tux3_volume *vol, const uint8_t *leaf,
		uint64_t blocknr, uint64_t lo, uint64_t hi, unsigned magic);
/* The ileaf's header and its dictionary up to inum's entry, for reading
 * inum past damage further on (fsck's salvage): 0, or -EUCLEAN with the
 * volume error set. */
int ileaf_check_prefix(struct tux3_volume *vol, const uint8_t *leaf,
		       uint64_t blocknr, uint64_t inum);
/* How many dictionary entries, from the first, are in order and within
 * the free space (0 when the count itself cannot be). */
unsigned ileaf_valid_prefix(const uint8_t *leaf, unsigned blocksize);
/* Blob of inum in a checked leaf: 0 found (len may be 0 = absent). */
int ileaf_blob(const uint8_t *leaf, unsigned blocksize, uint64_t inum,
	       const uint8_t **blob, unsigned *len);
/* Every inode a checked leaf holds (len > 0), in inode order; fn's
 * non-zero return stops the loop and is returned. */
typedef int (*ileaf_blob_fn)(void *ctx, uint64_t inum, const uint8_t *blob,
			     unsigned len);
int ileaf_each(const uint8_t *leaf, unsigned blocksize, ileaf_blob_fn fn,
	       void *ctx);
static inline unsigned ileaf_count(const uint8_t *l) { return be16(l + 2); }
static inline uint64_t ileaf_ibase(const uint8_t *l) { return be64(l + 8) & TUX3_MAX_BLOCK; }
/* Write side (pure buffer operations; errors are negative errno). */
/* A fresh, empty leaf (whole block zeroed) with this magic and ibase. */
void ileaf_init(uint8_t *leaf, unsigned blocksize, unsigned magic,
		uint64_t ibase);
/* Bytes left for blobs and new dictionary slots. */
unsigned ileaf_free_space(const uint8_t *leaf, unsigned blocksize);
/* Insert, replace or (len 0) delete the blob of inum.  The dictionary
 * grows to reach inum and drops trailing empty slots after a delete.
 * -ERANGE inum below ibase (or >= 2^48), -ENOSPC no room (leaf unchanged),
 * -ENOENT deleting an absent inode.  blob must not point into leaf. */
int ileaf_set_blob(uint8_t *leaf, unsigned blocksize, uint64_t inum,
		   const uint8_t *blob, unsigned len);
/* Move the upper inodes into newleaf (initialised here).  *newbase = the
 * first inum moved = newleaf's ibase = the separator key; the cut between
 * two live inodes minimises the larger half (blob bytes + 2 per slot).
 * -EINVAL if the leaf holds fewer than two inodes. */
int ileaf_split(uint8_t *leaf, uint8_t *newleaf, unsigned blocksize,
		uint64_t *newbase);
/* Move every inode into newleaf, whose ibase (*newbase, the separator)
 * is the first of them, leaving the leaf empty.  -EINVAL if it is empty
 * already. */
/* Whether the leaf's dictionary can hold a slot for inum (ibase <= inum
 * and less than a dictionary's worth above it). */
bool ileaf_reaches(const uint8_t *leaf, unsigned blocksize, uint64_t inum);
int ileaf_split_off(uint8_t *leaf, uint8_t *newleaf, unsigned blocksize,
		    uint64_t *newbase);
/* Whether the leaf holds no inode (its dictionary may still have
 * slots). */
bool ileaf_empty(const uint8_t *leaf, unsigned blocksize);
/* First inum >= goal in [ibase, limit) whose slot is empty (slots past
 * count are empty); -ENOENT if none. */
int ileaf_find_free_inum(const uint8_t *leaf, unsigned blocksize,
			 uint64_t goal, uint64_t limit, uint64_t *inum);

/* ---- dleaf.c ---- */
#define DLEAF_HEADER 8
#define DLEAF_ENTRY 16
struct dleaf_entry {
	uint64_t logical, physical;
	uint32_t version;
};
void dleaf_entry_get(const uint8_t *leaf, unsigned i, struct dleaf_entry *e);
/* The first of the leaf's first n entries whose logical address is key or
 * more (n if none), by binary search: the addresses increase in a leaf
 * dleaf_check passed.  On one that does not, a wrong index, never one
 * out of [0, n]. */
unsigned dleaf_lower_bound(const uint8_t *leaf, unsigned n, uint64_t key);
static inline unsigned dleaf_count(const uint8_t *l) { return be16(l + 2); }
/* Write side (pure buffer operations; errors are negative errno).
 * freed(ctx, physical, count) reports blocks a change unmapped. */
typedef void (*dleaf_freed_fn)(void *ctx, uint64_t physical, uint64_t count);
/* An empty leaf: magic, count 0 (writes the 8-byte header only). */
void dleaf_init(uint8_t *leaf);
/* Map [logical, logical + count) to physical.. (physical 0 = hole) in a
 * leaf covering keys [lo, hi), replacing what overlapped and merging with
 * contiguous neighbours; old mappings of the range are reported to freed
 * (NULL allowed) except blocks that stay at the same logical address.
 * -ERANGE outside [lo, hi), -EINVAL count 0, -ENOSPC the entries would
 * not fit (leaf unchanged, nothing reported), -EUCLEAN not a dleaf. */
int dleaf_write_extent(uint8_t *leaf, unsigned blocksize, uint64_t logical,
		       uint64_t physical, uint64_t count, uint64_t lo,
		       uint64_t hi, dleaf_freed_fn freed, void *ctx);
/* Unmap everything at and beyond logical from (never needs room). */
int dleaf_chop(uint8_t *leaf, unsigned blocksize, uint64_t from,
	       dleaf_freed_fn freed, void *ctx);
/* Move the upper entries into newleaf (initialised here); returns the
 * separator (newleaf's first logical; the old leaf ends with a sentinel
 * there) or -EINVAL when no cut leaves a mapped extent on both sides. */
int64_t dleaf_split(uint8_t *leaf, uint8_t *newleaf, unsigned blocksize);

/* ---- iattr.c ---- */
enum {
	ATTR_RDEV = 0, ATTR_MODE_OWNER = 1, ATTR_DATA_BTREE = 2,
	ATTR_CTIME_SIZE = 3, ATTR_LINK_COUNT = 4, ATTR_MTIME = 5,
	ATTR_IDATA = 11, ATTR_XATTR = 12,
	ATTR_ATIME = 15,	/* our extension (format.md 15.6): atime s64 ns,
				 * on a volume with the ATIME feature only */
	VATTR_ABSENT = 10,	/* versions: the marker of an attribute a
				 * version does not have (format.md 17.3a) */
	VATTR_SPILL = 6,	/* versions: where the attributes that do not
				 * fit the leaf went (format.md 17.3b) */
};
#define VSPILL_PAYLOAD	16	/* be64 first block, be32 bytes, be32 blocks */
/* Attribute visitor used by the decoder (walker, printers, fsck). */
struct attr_info {
	unsigned kind, version;
	unsigned offset, size;	/* of the whole attribute in the blob */
	const uint8_t *payload;
	unsigned paylen;
};
typedef int (*attr_fn)(struct tux3_volume *vol, void *ctx,
		       const struct attr_info *a);
int iattr_decode(struct tux3_volume *vol, struct inode *inode,
		 attr_fn fn, void *ctx);
const char *iattr_kind_name(unsigned kind);
/* The same, ABSENT for kind 10 on a volume with versions. */
const char *iattr_name(const struct tux3_volume *vol, unsigned kind);
/* Encoders (iattr.c): fixed attributes by inode->present, then XATTRs. */
#define IATTR_FIXED_MAX 78	/* every fixed kind once: 7 heads + payloads */
/* A kind stored in inode->present (the fixed kinds and ATIME). */
static inline bool iattr_kind_fixed(unsigned kind)
{
	return kind < ATTR_IDATA || kind == ATTR_ATIME;
}
unsigned iattr_encode_fixed(uint8_t *buf, const struct inode *inode);
unsigned iattr_encode_xattr(uint8_t *buf, unsigned atom, const void *value,
			    unsigned size);
uint64_t iattr_max_size(unsigned blockbits);	/* the format's, the
						 * internal inodes' size */
uint64_t iattr_max_data(unsigned blockbits);	/* what writes may reach */

/* ---- dirent.c ---- */
#define DIRENT_HEADER 12
struct dirent_info {
	uint64_t inum;
	unsigned rec_len, name_len, type;
	const char *name;
	uint64_t pos;		/* byte offset in the directory */
	uint64_t blocknr;	/* block holding the record */
};
/* Check and iterate one directory-format block (also the atom dict).
 * fn gets live records only; returns fn's non-zero value, 0, or -EUCLEAN. */
typedef int (*dirent_fn)(void *ctx, const struct dirent_info *d);
int dirblock_iterate(struct tux3_volume *vol, const uint8_t *blk,
		     unsigned size, uint64_t base, uint64_t blocknr,
		     tux3_ino_t dir, dirent_fn fn, void *ctx);
/* Write side on one block of size bytes (pure; negative errno). */
/* A fresh block: one deleted record spanning it. */
void dirblock_init(uint8_t *blk, unsigned size);
/* Add a live record (first fit: a deleted record or a live record's
 * slack); returns its offset, -ENOSPC, -EEXIST (name live in this block),
 * -EINVAL (bad name, inum or type), -EUCLEAN (malformed block). */
int dirblock_add(uint8_t *blk, unsigned size, const char *name, unsigned len,
		 uint64_t inum, unsigned type);
/* Delete the live record at offset (the previous record absorbs it);
 * -ENOENT if no live record starts there. */
int dirblock_delete(uint8_t *blk, unsigned size, unsigned offset);
/* Offset of the live record named name, or -ENOENT. */
int dirblock_find(const uint8_t *blk, unsigned size, const char *name,
		  unsigned len);
/* The bytes a record of a name of name_len takes: 12 + name, 8-aligned. */
static inline unsigned dirent_need(unsigned name_len)
{
	return (DIRENT_HEADER + name_len + 7) & ~7u;
}
/* The largest record dirblock_add could place in the block (a name of
 * len fits when dirent_need(len) <= it; 0: none), or -EUCLEAN if a
 * record cannot be stepped over.  What the in-memory directory index
 * keeps per block so that a create finds room without reading. */
int dirblock_room(const uint8_t *blk, unsigned size);
/* The record that starts at offset, as dirblock_iterate would pass it:
 * 0 live and valid (d filled, pos = base + offset), -ENOENT deleted,
 * -EUCLEAN malformed.  Pure: no error is recorded. */
int dirblock_record(const uint8_t *blk, unsigned size, unsigned offset,
		    uint64_t base, struct dirent_info *d);

/* ---- dirhash.c: the on-disk directory index's blocks (format.md 15.5) ---- */
#define DIRHASH_MAGIC		0x54334458u	/* "T3DX" */
#define DIRHASH_HEADER		40
#define DIRHASH_CRC_OFFSET	36
enum { DIRHASH_ROOT = 1, DIRHASH_TABLE = 2, DIRHASH_BUCKET = 3 };
/* dirhash_decode's answers beside 0 (a sound header). */
enum { DIRHASH_NOT_INDEX = 1, DIRHASH_BAD_CRC, DIRHASH_BAD_FIELD };
struct dirhash_head {
	unsigned kind, depth;
	uint32_t count, gen, seed;
};
uint32_t dirhash_name(uint32_t seed, const char *name, unsigned len);
/* Capacities: be32 items after the header; table slots (a power of
 * two); bucket pairs; the largest global depth the root can address. */
unsigned dirhash_items(unsigned blocksize);
unsigned dirhash_table_slots(unsigned blocksize);
unsigned dirhash_bucket_pairs(unsigned blocksize);
unsigned dirhash_max_depth(unsigned blocksize);
/* Does the block start as an index block (empty record, magic)?  Such a
 * block has no room for entries (dirblock_add, dirblock_room). */
bool dirhash_is_index(const uint8_t *blk, unsigned blocksize);
uint32_t dirhash_crc(const uint8_t *blk, unsigned blocksize, tux3_ino_t dir,
		     uint64_t logical);
/* A fresh index block with header h and no items; seal stores the CRC
 * (after the items are in). */
void dirhash_init(uint8_t *blk, unsigned blocksize,
		  const struct dirhash_head *h);
void dirhash_seal(uint8_t *blk, unsigned blocksize, tux3_ino_t dir,
		  uint64_t logical);
/* 0 and h for a sound index block at logical of dir, else one of
 * DIRHASH_NOT_INDEX, DIRHASH_BAD_CRC, DIRHASH_BAD_FIELD. */
int dirhash_decode(const uint8_t *blk, unsigned blocksize, tux3_ino_t dir,
		   uint64_t logical, struct dirhash_head *h);
uint32_t dirhash_item(const uint8_t *blk, unsigned i);
void dirhash_set_item(uint8_t *blk, unsigned i, uint32_t v);
void dirhash_set_count(uint8_t *blk, uint32_t count);

/* ---- the atom table's layout (inode 4; read by atom.c) ---- */
#define ATOM_REFCOUNT_BASE (1ULL << 40)
#define ATOM_UNATOM_BASE ((1ULL << 40) + (1ULL << 34))
#define ATOM_FREE_MAGIC 0x6eadfceeULL
#define ATOM_NAME_MAX 240	/* bytes of an xattr name in the dictionary */

/* ---- log.c ---- */
enum log_code {
	LOG_BALLOC = 0x33, LOG_BFREE, LOG_BFREE_ON_UNIFY, LOG_BFREE_RELOG,
	LOG_LEAF_REDIRECT, LOG_LEAF_FREE, LOG_BNODE_REDIRECT, LOG_BNODE_ROOT,
	LOG_BNODE_SPLIT, LOG_BNODE_ADD, LOG_BNODE_UPDATE, LOG_BNODE_MERGE,
	LOG_BNODE_DEL, LOG_BNODE_ADJUST, LOG_BNODE_FREE, LOG_ORPHAN_ADD,
	LOG_ORPHAN_DEL, LOG_FREEBLOCKS, LOG_UNIFY, LOG_DELTA,
	LOG_CODE_FIRST = LOG_BALLOC, LOG_CODE_LAST = LOG_DELTA,
};
struct logrec {
	unsigned code;
	unsigned offset;	/* of the code byte, in the block */
	uint32_t count;		/* BALLOC.., BNODE_ROOT(u8), BNODE_DEL(u16) */
	unsigned pos;		/* BNODE_SPLIT */
	unsigned version;	/* ORPHAN_* */
	uint64_t block;		/* BALLOC.., LEAF_FREE, BNODE_FREE, bnode */
	uint64_t oldb, newb;	/* *_REDIRECT */
	uint64_t src, dst;	/* SPLIT, MERGE */
	uint64_t parent, child, key;
	uint64_t root, left, right, rkey;
	uint64_t from, to;	/* ADJUST */
	uint64_t inum;
	uint64_t freeblocks;
};
#define LOG_HEADER_SIZE 16
unsigned log_record_size(unsigned code);	/* 0 = invalid code */
const char *log_code_name(unsigned code);
int log_decode_head(const uint8_t *blk, unsigned blocksize,
		    struct loghead *head, char *why, size_t whylen);
/* Decodes the record at offset; returns its size or 0 if invalid. */
unsigned log_decode_record(const uint8_t *blk, unsigned offset, unsigned end,
			   struct logrec *rec);
/* Block numbers named by a record, for range checks: fills up to 4. */
unsigned log_record_blocks(const struct logrec *rec, uint64_t out[4],
			   uint32_t *count);
/* The bnodes whose disk image replay loads for a bnode record. */
unsigned log_record_bnodes(const struct logrec *rec, uint64_t out[3]);
int log_format_record(const struct logrec *rec, char *buf, size_t len);
struct tux3_logrec_info;
void log_record_info(const struct logrec *rec, unsigned offset,
		     unsigned size, int live, struct tux3_logrec_info *info);
/* Encoders (mkfs, the write path): log_encode_record writes rec at buf and
 * returns its size (0 = invalid code); log_encode_head fills the 16-byte
 * log block header. */
unsigned log_encode_record(uint8_t *buf, const struct logrec *rec);
void log_encode_head(uint8_t *blk, unsigned bytes, uint64_t logchain);
/* The log block CRC of the LOG_CRC feature (format.md 15.2): CRC32C of the
 * whole block with header bytes 4..7 taken as zero, seeded with the block
 * number (be64), so a block read from the wrong place fails too. */
#define LOG_CRC_OFFSET	4
uint32_t log_block_crc(const uint8_t *blk, unsigned blocksize,
		       uint64_t blocknr);

#endif

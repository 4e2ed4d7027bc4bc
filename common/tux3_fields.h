/*
 * libtux3 field tables: one table per on-disk structure, shared by the
 * raw printers (tux3debug 'block', 'inode'), the raw editors ('set_super',
 * 'set_inode') and tests that make corruptions on purpose.
 *
 * A field is {name, offset, width in bytes, kind, description}.  Offsets
 * are relative to the structure: the superblock table to byte 4096 of the
 * device (the 4 KiB superblock area, our extension record included), block
 * tables to the block, entry tables to one entry, attribute tables to the
 * attribute's payload (after its be16 head).  All integers are big-endian.
 *
 * Decoders hand every line to a callback (tux3_field_fn); the library
 * never prints.
 */
#ifndef TUX3_FIELDS_H
#define TUX3_FIELDS_H

#include <stddef.h>
#include <stdint.h>
#include "tux3.h"

#ifdef __cplusplus
extern "C" {
#endif

enum tux3_field_kind {
	TUX3_FIELD_UINT,	/* unsigned integer (1, 2, 4 or 8 bytes), decimal */
	TUX3_FIELD_HEX,		/* unsigned integer shown in hex */
	TUX3_FIELD_OCTAL,	/* unsigned integer shown in octal (modes) */
	TUX3_FIELD_MAGIC,	/* magic number (2 or 4 bytes) or magic bytes (8) */
	TUX3_FIELD_ROOT,	/* packed root, 8 bytes (format.md 3) */
	TUX3_FIELD_TIME,	/* signed ns since the epoch, 8 bytes */
	TUX3_FIELD_BE48,	/* unsigned 48-bit integer, 6 bytes */
	TUX3_FIELD_BYTES,	/* byte array, shown in hex (UUID, ...) */
	TUX3_FIELD_TEXT,	/* NUL-padded text (label) */
	TUX3_FIELD_PAD,		/* padding / reserved bytes (expected zero) */
};

struct tux3_field {
	const char *name;
	unsigned offset;	/* in the structure */
	unsigned width;		/* bytes */
	enum tux3_field_kind kind;
	const char *desc;	/* one line */
};

struct tux3_field_table {
	const char *name;	/* "super", "bnode", "bnode.entry", ... */
	const struct tux3_field *fields;
	unsigned count;
	unsigned size;		/* header size, or an entry's stride */
};

/* The tables.  Attribute tables cover the payload after the be16 head. */
extern const struct tux3_field_table tux3_fields_super;	/* 4096 bytes */
extern const struct tux3_field_table tux3_fields_bnode;
extern const struct tux3_field_table tux3_fields_bnode_entry;
extern const struct tux3_field_table tux3_fields_ileaf;	/* also oleaf */
extern const struct tux3_field_table tux3_fields_ileaf_dict;
extern const struct tux3_field_table tux3_fields_dleaf;
extern const struct tux3_field_table tux3_fields_dleaf_entry;
extern const struct tux3_field_table tux3_fields_log;
extern const struct tux3_field_table tux3_fields_dirent;
extern const struct tux3_field_table tux3_fields_attr_head;
extern const struct tux3_field_table tux3_fields_attr_rdev;
extern const struct tux3_field_table tux3_fields_attr_mode_owner;
extern const struct tux3_field_table tux3_fields_attr_data_btree;
extern const struct tux3_field_table tux3_fields_attr_ctime_size;
extern const struct tux3_field_table tux3_fields_attr_link_count;
extern const struct tux3_field_table tux3_fields_attr_mtime;
extern const struct tux3_field_table tux3_fields_attr_atime;
extern const struct tux3_field_table tux3_fields_attr_xattr;
/* Every table above, NULL-terminated. */
extern const struct tux3_field_table *const tux3_field_tables[];

const struct tux3_field_table *tux3_field_table_find(const char *name);
/* The payload table of a fixed attribute kind (0..5) or XATTR (12);
 * NULL for other kinds. */
const struct tux3_field_table *tux3_attr_table(unsigned kind);
const struct tux3_field *tux3_field_find(const struct tux3_field_table *t,
					 const char *name);

/* The value of an integer field (any kind but BYTES, TEXT, PAD and the
 * 8-byte MAGIC); -EINVAL for those.  base points at the structure. */
int tux3_field_get(const struct tux3_field *f, const uint8_t *base,
		   uint64_t *value);
/* The field as text ("16384", "0x90de", "0x0001000000000041 (depth 1,
 * block 65)", ...); returns what snprintf returns. */
int tux3_field_format(const struct tux3_field *f, const uint8_t *base,
		      char *buf, size_t len);
/*
 * Set a field from text, with range checks: integers in decimal, 0x hex or
 * (leading 0, and always for OCTAL fields) octal, and no larger than the
 * field's width allows (48 bits for BE48, signed 64 for TIME); BYTES, PAD
 * and the 8-byte MAGIC take up to width bytes of hex (the rest of the
 * field is zeroed); TEXT takes up to width bytes of text.  Returns 0,
 * -EINVAL (not a value of that kind) or -ERANGE, with the reason in err.
 */
int tux3_field_set(const struct tux3_field *f, uint8_t *base,
		   const char *value, char *err, size_t errlen);
/* The same by name: -ENOENT if the table has no such field. */
int tux3_field_set_named(const struct tux3_field_table *t, uint8_t *base,
			 const char *name, const char *value, char *err,
			 size_t errlen);

/* One decoded line: a field, an entry or a record.  offset is relative
 * to what the decoder was given (the block, or the superblock area);
 * desc may be NULL.  A non-zero return stops the decoder. */
typedef int (*tux3_field_fn)(void *ctx, const char *name, unsigned offset,
			     unsigned width, const char *value,
			     const char *desc);
/* Every field of a table; names get prefix ("" for none), offsets get
 * base_offset added.  avail = bytes readable at base: fields past it are
 * left out. */
int tux3_fields_decode(const struct tux3_field_table *t, const uint8_t *base,
		       unsigned avail, const char *prefix,
		       unsigned base_offset, tux3_field_fn fn, void *ctx);

/* ---- blocks ---- */
enum tux3_block_type {
	TUX3_BT_DATA,	/* no known magic */
	TUX3_BT_BNODE,
	TUX3_BT_ILEAF,
	TUX3_BT_OLEAF,
	TUX3_BT_DLEAF,
	TUX3_BT_LOG,
	TUX3_BT_SUPER,	/* holds part of the superblock area */
	TUX3_BT_RESERVED,	/* below byte 4096 (boot area) */
};
const char *tux3_block_type_name(enum tux3_block_type t);
/* Guess a block's type from its magic (and, so that data which happens
 * to start with a magic is not taken for metadata, a count that fits the
 * block); blocks overlapping bytes 0..8191 are RESERVED or SUPER. */
enum tux3_block_type tux3_sniff_block(const uint8_t *buf, unsigned blocksize,
				      uint64_t blocknr);
/* Decode a block as its sniffed type: header fields, then bnode entries
 * (key -> child), dleaf entries (logical -> physical, version), the live
 * ileaf/oleaf dictionary slots (inum -> offset, length), log records, or
 * the superblock fields inside the block.  Data blocks give no lines. */
int tux3_decode_block(const uint8_t *buf, unsigned blocksize,
		      uint64_t blocknr, tux3_field_fn fn, void *ctx);
/* The superblock area (4096 bytes read at byte 4096). */
int tux3_decode_super(const uint8_t *sb4096, tux3_field_fn fn, void *ctx);
/* Recompute the CRC of the extension record in a superblock area (after
 * changing one of its fields on purpose). */
void tux3_superext_fix_crc(uint8_t *sb4096);

/* ---- raw volume access (inspection and deliberate corruption) ---- */
unsigned tux3_block_size(const struct tux3_volume *vol);
/* Block N as the library sees it: a bnode image rebuilt by log replay
 * (the overlay) if there is one, else the device.  *replayed (may be
 * NULL) tells which. */
int tux3_read_block(struct tux3_volume *vol, tux3_block_t block, void *buf,
		    int *replayed);
/* Bytes of the device, bypassing everything.  Writing needs a volume
 * opened for writing (-EROFS otherwise), goes straight to the device and
 * flushes: it is not logged, and the open volume does not see it (close
 * without committing and reopen). */
int tux3_read_raw(struct tux3_volume *vol, uint64_t offset, void *buf,
		  size_t len);
int tux3_write_raw(struct tux3_volume *vol, uint64_t offset,
		   const void *buf, size_t len);

/* ---- inode attributes, raw ---- */
struct tux3_attr_raw {
	unsigned kind, version;
	unsigned offset, size;	/* of the whole attribute in the blob */
	const char *name;	/* "MODE_OWNER", ... */
	const uint8_t *payload;	/* after the be16 head */
	unsigned paylen;
};
typedef int (*tux3_attr_raw_fn)(void *ctx, const struct tux3_attr_raw *a);
/* The attribute blob of ino, attribute by attribute, as stored (nothing
 * checked but the attribute framing); *leafblock and *bloblen (may be
 * NULL) tell where it is (fn NULL: only that).  -ENOENT if the inode has
 * no blob.  Framing
 * damage stops the walk with -EUCLEAN after the good attributes. */
int tux3_inode_attrs(struct tux3_volume *vol, tux3_ino_t ino,
		     tux3_block_t *leafblock, unsigned *bloblen,
		     tux3_attr_raw_fn fn, void *ctx);
/* Each payload field of one attribute (by its kind's table). */
int tux3_decode_attr(const struct tux3_attr_raw *a, tux3_field_fn fn,
		     void *ctx);

/* Fixed inode fields settable with tux3_set_inode_field, NULL-ended:
 * mode uid gid size nlink ctime mtime rdev dtree. */
extern const char *const tux3_inode_field_names[];
/* Load ino, set one fixed field to value (raw: no truncation, no type
 * check; the attribute is added if absent), store it as a normal delta
 * of the write path.  Volume opened RDWR (-EROFS otherwise); -ENOENT
 * unknown field, -EINVAL / -ERANGE bad value (reason in err). */
int tux3_set_inode_field(struct tux3_volume *vol, tux3_ino_t ino,
			 const char *field, const char *value, char *err,
			 size_t errlen);

#ifdef __cplusplus
}
#endif
#endif

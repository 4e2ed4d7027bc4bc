/*
 * Field tables: one table per on-disk structure (tux3_fields.h), and the
 * generic code that formats, parses and decodes with them.  The layouts
 * are those of doc/format.md (sections 2.2, 5, 6, 8, 12 and 15.1).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "format/format.h"
#include "tux3_fields.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define TABLE(var, tname, arr, sz) \
	const struct tux3_field_table var = { tname, arr, N(arr), sz }

/* ---- the tables ---- */

#define X(off) (SUPEREXT_OFFSET + (off))
static const struct tux3_field super_fields[] = {
	{ "magic", 0, 8, TUX3_FIELD_MAGIC, "tux3 + BCD date 2014-05-06" },
	{ "birthdate", 8, 8, TUX3_FIELD_UINT, "never set by the reference" },
	{ "flags", 16, 8, TUX3_FIELD_HEX, "unassigned, 0" },
	{ "blockbits", 24, 2, TUX3_FIELD_UINT, "log2 of the block size, 9..16" },
	{ "pad26", 26, 6, TUX3_FIELD_PAD, "padding" },
	{ "volblocks", 32, 8, TUX3_FIELD_UINT, "volume size in blocks" },
	{ "iroot", 40, 8, TUX3_FIELD_ROOT, "inode table root" },
	{ "oroot", 48, 8, TUX3_FIELD_ROOT, "orphan table root, 0 = empty" },
	{ "usedinodes", 56, 8, TUX3_FIELD_UINT, "inode numbers in use" },
	{ "nextblock", 64, 8, TUX3_FIELD_UINT, "allocation goal" },
	{ "atomdictsize", 72, 8, TUX3_FIELD_UINT, "atom dictionary bytes" },
	{ "freeatom", 80, 4, TUX3_FIELD_UINT, "free-atom list head" },
	{ "atomgen", 84, 4, TUX3_FIELD_UINT, "next never-used atom" },
	{ "logchain", 88, 8, TUX3_FIELD_UINT, "newest log block" },
	{ "logcount", 96, 4, TUX3_FIELD_UINT, "log blocks in this cycle" },
	{ "tail100", 100, SUPEREXT_OFFSET - 100, TUX3_FIELD_PAD,
	  "superblock tail before the extension record" },
	{ "ext.magic", X(0), 4, TUX3_FIELD_MAGIC, "extension record, T3X1" },
	{ "ext.version", X(4), 2, TUX3_FIELD_UINT, "record version, 1" },
	{ "ext.size", X(6), 2, TUX3_FIELD_UINT, "record size, 512" },
	{ "ext.compat", X(8), 4, TUX3_FIELD_HEX, "features a reader may ignore" },
	{ "ext.ro_compat", X(12), 4, TUX3_FIELD_HEX,
	  "features a writer must know" },
	{ "ext.incompat", X(16), 4, TUX3_FIELD_HEX,
	  "features every reader must know" },
	{ "ext.reserved20", X(20), 4, TUX3_FIELD_PAD, "reserved" },
	{ "ext.uuid", X(24), 16, TUX3_FIELD_BYTES, "volume UUID" },
	{ "ext.label", X(40), TUX3_LABEL_MAX, TUX3_FIELD_TEXT,
	  "volume label, NUL-padded" },
	{ "ext.mkfs_time", X(104), 8, TUX3_FIELD_TIME, "mkfs time" },
	{ "ext.seq", X(112), 8, TUX3_FIELD_UINT, "seal: commit sequence" },
	{ "ext.logchain", X(120), 8, TUX3_FIELD_UINT, "seal: logchain copy" },
	{ "ext.logcount", X(128), 4, TUX3_FIELD_UINT, "seal: logcount copy" },
	{ "ext.reserved132", X(132), 4, TUX3_FIELD_PAD, "reserved" },
	{ "ext.iroot", X(136), 8, TUX3_FIELD_ROOT, "seal: iroot copy" },
	{ "ext.oroot", X(144), 8, TUX3_FIELD_ROOT, "seal: oroot copy" },
	{ "ext.reserved152", X(152), SUPEREXT_CRC_OFFSET - 152, TUX3_FIELD_PAD,
	  "reserved" },
	{ "ext.crc", X(SUPEREXT_CRC_OFFSET), 4, TUX3_FIELD_HEX,
	  "CRC32C of record bytes 0..507" },
	{ "tail1024", SUPEREXT_OFFSET + SUPEREXT_SIZE,
	  TUX3_SB_LEN - SUPEREXT_OFFSET - SUPEREXT_SIZE, TUX3_FIELD_PAD,
	  "rest of the superblock area" },
};
#undef X
TABLE(tux3_fields_super, "super", super_fields, TUX3_SB_LEN);

static const struct tux3_field bnode_fields[] = {
	{ "magic", 0, 2, TUX3_FIELD_MAGIC, "bnode 0xb4de" },
	{ "unused", 2, 2, TUX3_FIELD_PAD, "0" },
	{ "count", 4, 4, TUX3_FIELD_UINT, "entries" },
};
TABLE(tux3_fields_bnode, "bnode", bnode_fields, BNODE_HEADER);

static const struct tux3_field bnode_entry_fields[] = {
	{ "key", 0, 8, TUX3_FIELD_UINT, "lowest key of the child" },
	{ "child", 8, 8, TUX3_FIELD_UINT, "child block" },
};
TABLE(tux3_fields_bnode_entry, "bnode.entry", bnode_entry_fields, BNODE_ENTRY);

static const struct tux3_field ileaf_fields[] = {
	{ "magic", 0, 2, TUX3_FIELD_MAGIC, "ileaf 0x90de or oleaf 0x6eaf" },
	{ "count", 2, 2, TUX3_FIELD_UINT, "dictionary slots" },
	{ "unused", 4, 4, TUX3_FIELD_PAD, "0" },
	{ "ibase", 8, 8, TUX3_FIELD_UINT, "inode number of slot 1" },
};
TABLE(tux3_fields_ileaf, "ileaf", ileaf_fields, ILEAF_HEADER);

/* Slot k sits at blocksize - 2k: the table describes one slot. */
static const struct tux3_field ileaf_dict_fields[] = {
	{ "end", 0, 2, TUX3_FIELD_UINT, "end of the blob, from byte 16" },
};
TABLE(tux3_fields_ileaf_dict, "ileaf.dict", ileaf_dict_fields, 2);

static const struct tux3_field dleaf_fields[] = {
	{ "magic", 0, 2, TUX3_FIELD_MAGIC, "dleaf 0xbeaf" },
	{ "count", 2, 2, TUX3_FIELD_UINT, "entries, sentinel included" },
	{ "unused", 4, 4, TUX3_FIELD_PAD, "0" },
};
TABLE(tux3_fields_dleaf, "dleaf", dleaf_fields, DLEAF_HEADER);

static const struct tux3_field dleaf_entry_fields[] = {
	{ "version_hi", 0, 2, TUX3_FIELD_UINT, "high 16 bits of the version" },
	{ "logical", 2, 6, TUX3_FIELD_BE48, "logical block" },
	{ "version_lo", 8, 2, TUX3_FIELD_UINT, "low 16 bits of the version" },
	{ "physical", 10, 6, TUX3_FIELD_BE48, "physical block, 0 = hole" },
};
TABLE(tux3_fields_dleaf_entry, "dleaf.entry", dleaf_entry_fields, DLEAF_ENTRY);

static const struct tux3_field log_fields[] = {
	{ "magic", 0, 2, TUX3_FIELD_MAGIC, "log block 0x10ad" },
	{ "bytes", 2, 2, TUX3_FIELD_UINT, "payload bytes after the header" },
	{ "unused", 4, 4, TUX3_FIELD_PAD, "0" },
	{ "logchain", 8, 8, TUX3_FIELD_UINT, "previous (older) log block" },
};
TABLE(tux3_fields_log, "log", log_fields, LOG_HEADER_SIZE);

static const struct tux3_field dirent_fields[] = {
	{ "inum", 0, 8, TUX3_FIELD_UINT, "inode number" },
	{ "rec_len", 8, 2, TUX3_FIELD_UINT, "bytes to the next record" },
	{ "name_len", 10, 1, TUX3_FIELD_UINT, "0 = deleted" },
	{ "type", 11, 1, TUX3_FIELD_UINT, "TUX3_DT_*" },
};
TABLE(tux3_fields_dirent, "dirent", dirent_fields, DIRENT_HEADER);

static const struct tux3_field attr_head_fields[] = {
	{ "head", 0, 2, TUX3_FIELD_HEX, "kind << 12 | version" },
};
TABLE(tux3_fields_attr_head, "attr", attr_head_fields, 2);

static const struct tux3_field attr_rdev_fields[] = {
	{ "rdev", 0, 8, TUX3_FIELD_HEX, "major << 20 | minor" },
};
TABLE(tux3_fields_attr_rdev, "attr.rdev", attr_rdev_fields, 8);

static const struct tux3_field attr_mode_owner_fields[] = {
	{ "mode", 0, 4, TUX3_FIELD_OCTAL, "type and permissions" },
	{ "uid", 4, 4, TUX3_FIELD_UINT, "owner" },
	{ "gid", 8, 4, TUX3_FIELD_UINT, "group" },
};
TABLE(tux3_fields_attr_mode_owner, "attr.mode_owner", attr_mode_owner_fields,
      12);

static const struct tux3_field attr_data_btree_fields[] = {
	{ "dtree", 0, 8, TUX3_FIELD_ROOT, "data tree root or direct extent" },
};
TABLE(tux3_fields_attr_data_btree, "attr.data_btree", attr_data_btree_fields,
      8);

static const struct tux3_field attr_ctime_size_fields[] = {
	{ "ctime", 0, 8, TUX3_FIELD_TIME, "change time" },
	{ "size", 8, 8, TUX3_FIELD_UINT, "size in bytes" },
};
TABLE(tux3_fields_attr_ctime_size, "attr.ctime_size", attr_ctime_size_fields,
      16);

static const struct tux3_field attr_link_count_fields[] = {
	{ "nlink", 0, 4, TUX3_FIELD_UINT, "links" },
};
TABLE(tux3_fields_attr_link_count, "attr.link_count", attr_link_count_fields,
      4);

static const struct tux3_field attr_mtime_fields[] = {
	{ "mtime", 0, 8, TUX3_FIELD_TIME, "modification time" },
};
TABLE(tux3_fields_attr_mtime, "attr.mtime", attr_mtime_fields, 8);

static const struct tux3_field attr_atime_fields[] = {
	{ "atime", 0, 8, TUX3_FIELD_TIME, "access time (ATIME feature)" },
};
TABLE(tux3_fields_attr_atime, "attr.atime", attr_atime_fields, 8);

static const struct tux3_field attr_xattr_fields[] = {
	{ "len", 0, 2, TUX3_FIELD_UINT, "bytes after this field: 2 + value" },
	{ "atom", 2, 2, TUX3_FIELD_UINT, "name's atom" },
};
TABLE(tux3_fields_attr_xattr, "attr.xattr", attr_xattr_fields, 4);

const struct tux3_field_table *const tux3_field_tables[] = {
	&tux3_fields_super, &tux3_fields_bnode, &tux3_fields_bnode_entry,
	&tux3_fields_ileaf, &tux3_fields_ileaf_dict, &tux3_fields_dleaf,
	&tux3_fields_dleaf_entry, &tux3_fields_log, &tux3_fields_dirent,
	&tux3_fields_attr_head, &tux3_fields_attr_rdev,
	&tux3_fields_attr_mode_owner, &tux3_fields_attr_data_btree,
	&tux3_fields_attr_ctime_size, &tux3_fields_attr_link_count,
	&tux3_fields_attr_mtime, &tux3_fields_attr_atime,
	&tux3_fields_attr_xattr, NULL,
};

const struct tux3_field_table *tux3_field_table_find(const char *name)
{
	for (unsigned i = 0; tux3_field_tables[i]; i++)
		if (!strcmp(tux3_field_tables[i]->name, name))
			return tux3_field_tables[i];
	return NULL;
}

const struct tux3_field_table *tux3_attr_table(unsigned kind)
{
	switch (kind) {
	case ATTR_RDEV: return &tux3_fields_attr_rdev;
	case ATTR_MODE_OWNER: return &tux3_fields_attr_mode_owner;
	case ATTR_DATA_BTREE: return &tux3_fields_attr_data_btree;
	case ATTR_CTIME_SIZE: return &tux3_fields_attr_ctime_size;
	case ATTR_LINK_COUNT: return &tux3_fields_attr_link_count;
	case ATTR_MTIME: return &tux3_fields_attr_mtime;
	case ATTR_ATIME: return &tux3_fields_attr_atime;
	case ATTR_XATTR: return &tux3_fields_attr_xattr;
	}
	return NULL;
}

const struct tux3_field *tux3_field_find(const struct tux3_field_table *t,
					 const char *name)
{
	for (unsigned i = 0; i < t->count; i++)
		if (!strcmp(t->fields[i].name, name))
			return &t->fields[i];
	return NULL;
}

/* ---- values ---- */

static bool is_integer(const struct tux3_field *f)
{
	switch (f->kind) {
	case TUX3_FIELD_BYTES: case TUX3_FIELD_TEXT: case TUX3_FIELD_PAD:
		return false;
	case TUX3_FIELD_MAGIC:
		return f->width <= 4;
	default:
		return f->width >= 1 && f->width <= 8;
	}
}

static uint64_t get_be(const uint8_t *p, unsigned width)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < width; i++)
		v = v << 8 | p[i];
	return v;
}

static void put_be(uint8_t *p, unsigned width, uint64_t v)
{
	for (unsigned i = width; i-- > 0; v >>= 8)
		p[i] = (uint8_t)v;
}

int tux3_field_get(const struct tux3_field *f, const uint8_t *base,
		   uint64_t *value)
{
	if (!is_integer(f))
		return -EINVAL;
	*value = get_be(base + f->offset, f->width);
	return 0;
}

static uint64_t field_max(const struct tux3_field *f)
{
	if (f->kind == TUX3_FIELD_TIME)
		return INT64_MAX;
	return f->width >= 8 ? UINT64_MAX : (1ULL << (8 * f->width)) - 1;
}

static const char *magic_name(unsigned width, uint64_t v)
{
	if (width == 2) {
		switch (v) {
		case TUX3_MAGIC_BNODE: return "bnode";
		case TUX3_MAGIC_ILEAF: return "ileaf";
		case TUX3_MAGIC_OLEAF: return "oleaf";
		case TUX3_MAGIC_DLEAF: return "dleaf";
		case TUX3_MAGIC_LOG: return "log";
		}
	} else if (width == 4 && v == SUPEREXT_MAGIC) {
		return "T3X1";
	}
	return "unknown magic";
}

static int format_time(int64_t ns, char *buf, size_t len)
{
	time_t s = (time_t)(ns / 1000000000);
	long frac = (long)(ns % 1000000000);
	struct tm tm;
	char when[40] = "?";
	if (frac < 0) {
		frac += 1000000000;
		s--;
	}
	if (gmtime_r(&s, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	return snprintf(buf, len, "%" PRId64 " (%s.%09ld UTC)", ns, when, frac);
}

static int format_bytes(const uint8_t *p, unsigned width, bool pad,
			char *buf, size_t len)
{
	unsigned nonzero = 0, first = 0;
	for (unsigned i = 0; i < width; i++)
		if (p[i] && !nonzero++)
			first = i;
	if (pad && !nonzero)
		return snprintf(buf, len, "zero (%u bytes)", width);
	if (!pad && width <= 32) {
		size_t n = 0;
		for (unsigned i = 0; i < width && n + 3 < len; i++)
			n += (size_t)snprintf(buf + n, len - n, "%02x", p[i]);
		return (int)n;
	}
	int n = snprintf(buf, len, "%u of %u bytes non-zero, first at +%u:",
			 nonzero, width, first);
	for (unsigned i = first; i < width && i < first + 16 && n > 0 &&
	     (size_t)n + 4 < len; i++)
		n += snprintf(buf + n, len - (size_t)n, " %02x", p[i]);
	return n;
}

int tux3_field_format(const struct tux3_field *f, const uint8_t *base,
		      char *buf, size_t len)
{
	const uint8_t *p = base + f->offset;
	uint64_t v = is_integer(f) ? get_be(p, f->width) : 0;

	switch (f->kind) {
	case TUX3_FIELD_UINT: case TUX3_FIELD_BE48:
		return snprintf(buf, len, "%" PRIu64, v);
	case TUX3_FIELD_HEX:
		return snprintf(buf, len, "0x%0*" PRIx64, (int)(2 * f->width), v);
	case TUX3_FIELD_OCTAL:
		return snprintf(buf, len, "0%" PRIo64, v);
	case TUX3_FIELD_MAGIC:
		if (f->width == 8) {
			int n = format_bytes(p, 8, false, buf, len);
			return n + snprintf(buf + n, len > (size_t)n ?
					    len - (size_t)n : 0, " (%s)",
					    !memcmp(p, tux3_magic_2014, 8) ?
					    "tux3 2014-05-06" :
					    !memcmp(p, tux3_magic_versions, 8) ?
					    "tux3 with versions" :
					    !memcmp(p, tux3_magic_features, 8) ?
					    "tux3 with incompat features" :
					    "not a Tux3 magic");
		}
		return snprintf(buf, len, "0x%0*" PRIx64 " (%s)",
				(int)(2 * f->width), v, magic_name(f->width, v));
	case TUX3_FIELD_ROOT: {
		struct root r = root_unpack(v);
		if (!v)
			return snprintf(buf, len, "0x%016" PRIx64 " (none)", v);
		if (r.direct)
			return snprintf(buf, len, "0x%016" PRIx64 " (direct, %u "
					"blocks at %" PRIu64 ")", v, r.count,
					r.block);
		return snprintf(buf, len, "0x%016" PRIx64 " (depth %u, block %"
				PRIu64 ")", v, r.depth, r.block);
	}
	case TUX3_FIELD_TIME:
		return format_time((int64_t)v, buf, len);
	case TUX3_FIELD_BYTES:
		return format_bytes(p, f->width, false, buf, len);
	case TUX3_FIELD_PAD:
		return format_bytes(p, f->width, true, buf, len);
	case TUX3_FIELD_TEXT: {
		size_t n = 0;
		unsigned end = f->width;
		while (end && !p[end - 1])
			end--;
		n += (size_t)snprintf(buf, len, "\"");
		for (unsigned i = 0; i < end && n + 6 < len; i++) {
			if (p[i] < 0x20 || p[i] >= 0x7f || p[i] == '"' ||
			    p[i] == '\\')
				n += (size_t)snprintf(buf + n, len - n, "\\x%02x",
						      p[i]);
			else
				buf[n++] = (char)p[i];
		}
		if (n + 2 <= len) {
			buf[n++] = '"';
			buf[n] = 0;
		}
		return (int)n;
	}
	}
	return snprintf(buf, len, "?");
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Hex digits (optional 0x) into up to max bytes; returns the count or
 * -EINVAL / -ERANGE. */
static int parse_hex_bytes(const char *s, uint8_t *out, unsigned max)
{
	if (!strncmp(s, "0x", 2) || !strncmp(s, "0X", 2))
		s += 2;
	size_t n = strlen(s);
	if (!n || n % 2)
		return -EINVAL;
	if (n / 2 > max)
		return -ERANGE;
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return (int)(n / 2);
}

static int parse_value(const struct tux3_field *f, const char *s,
		       uint64_t *v, char *err, size_t errlen)
{
	char *end;
	if (f->kind == TUX3_FIELD_TIME) {
		errno = 0;
		long long x = strtoll(s, &end, 10);
		if (!*s || *end) {
			snprintf(err, errlen, "%s: '%s' is not a number of "
				 "nanoseconds", f->name, s);
			return -EINVAL;
		}
		if (errno == ERANGE) {
			snprintf(err, errlen, "%s: %s does not fit 64 signed "
				 "bits", f->name, s);
			return -ERANGE;
		}
		*v = (uint64_t)x;
		return 0;
	}
	int base = 0;
	if (f->kind == TUX3_FIELD_OCTAL && strncmp(s, "0x", 2) &&
	    strncmp(s, "0X", 2))
		base = 8;
	if (!*s || *s == '-' || *s == '+' || *s == ' ') {
		snprintf(err, errlen, "%s: '%s' is not an unsigned number",
			 f->name, s);
		return -EINVAL;
	}
	errno = 0;
	unsigned long long x = strtoull(s, &end, base);
	if (*end) {
		snprintf(err, errlen, "%s: '%s' is not an unsigned %s number",
			 f->name, s, base == 8 ? "octal" : "");
		return -EINVAL;
	}
	uint64_t max = f->kind == TUX3_FIELD_BE48 ? TUX3_MAX_BLOCK :
		       field_max(f);
	if (errno == ERANGE || x > max) {
		snprintf(err, errlen, "%s: %s out of range 0..%" PRIu64
			 " (%u-byte field at offset %u)", f->name, s, max,
			 f->width, f->offset);
		return -ERANGE;
	}
	*v = x;
	return 0;
}

int tux3_field_set(const struct tux3_field *f, uint8_t *base,
		   const char *value, char *err, size_t errlen)
{
	uint8_t *p = base + f->offset;
	char dummy[1];
	if (!errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = 0;
	if (is_integer(f)) {
		uint64_t v;
		int ret = parse_value(f, value, &v, err, errlen);
		if (ret)
			return ret;
		put_be(p, f->width, v);
		return 0;
	}
	if (f->kind == TUX3_FIELD_TEXT) {
		size_t n = strlen(value);
		if (n > f->width) {
			snprintf(err, errlen, "%s: text of %zu bytes does not "
				 "fit %u", f->name, n, f->width);
			return -ERANGE;
		}
		memset(p, 0, f->width);
		memcpy(p, value, n);
		return 0;
	}
	/* BYTES, PAD, 8-byte MAGIC: hex, the rest zeroed */
	uint8_t *tmp = malloc(f->width);
	if (!tmp)
		return -ENOMEM;
	int n = parse_hex_bytes(value, tmp, f->width);
	if (n == -EINVAL)
		snprintf(err, errlen, "%s: '%s' is not an even number of hex "
			 "digits", f->name, value);
	else if (n == -ERANGE)
		snprintf(err, errlen, "%s: more than %u bytes of hex", f->name,
			 f->width);
	if (n >= 0) {
		memset(p, 0, f->width);
		memcpy(p, tmp, (size_t)n);
	}
	free(tmp);
	return n < 0 ? n : 0;
}

int tux3_field_set_named(const struct tux3_field_table *t, uint8_t *base,
			 const char *name, const char *value, char *err,
			 size_t errlen)
{
	const struct tux3_field *f = tux3_field_find(t, name);
	if (!f) {
		snprintf(err, errlen, "%s has no field '%s'", t->name, name);
		return -ENOENT;
	}
	return tux3_field_set(f, base, value, err, errlen);
}

int tux3_fields_decode(const struct tux3_field_table *t, const uint8_t *base,
		       unsigned avail, const char *prefix,
		       unsigned base_offset, tux3_field_fn fn, void *ctx)
{
	char value[200], name[96];
	for (unsigned i = 0; i < t->count; i++) {
		const struct tux3_field *f = &t->fields[i];
		if (f->offset + f->width > avail)
			continue;
		tux3_field_format(f, base, value, sizeof(value));
		snprintf(name, sizeof(name), "%s%s", prefix, f->name);
		int r = fn(ctx, name, base_offset + f->offset, f->width, value,
			   f->desc);
		if (r)
			return r;
	}
	return 0;
}

/* ---- blocks ---- */

const char *tux3_block_type_name(enum tux3_block_type t)
{
	static const char *const names[] = {
		[TUX3_BT_DATA] = "data", [TUX3_BT_BNODE] = "bnode",
		[TUX3_BT_ILEAF] = "ileaf", [TUX3_BT_OLEAF] = "oleaf",
		[TUX3_BT_DLEAF] = "dleaf", [TUX3_BT_LOG] = "log",
		[TUX3_BT_SUPER] = "superblock", [TUX3_BT_RESERVED] = "reserved",
	};
	return (unsigned)t < N(names) ? names[t] : "?";
}

enum tux3_block_type tux3_sniff_block(const uint8_t *buf, unsigned blocksize,
				      uint64_t blocknr)
{
	uint64_t start = blocknr * blocksize;
	if (blocknr < (TUX3_RESERVED_BYTES >> 9) &&
	    start < TUX3_SB_OFFSET + TUX3_SB_LEN) {
		if (start + blocksize <= TUX3_SB_OFFSET)
			return TUX3_BT_RESERVED;
		return TUX3_BT_SUPER;
	}
	unsigned magic = be16(buf);
	unsigned cap = (blocksize - BNODE_HEADER) / BNODE_ENTRY;
	switch (magic) {
	case TUX3_MAGIC_BNODE:
		if (bnode_count(buf) >= 1 && bnode_count(buf) <= cap)
			return TUX3_BT_BNODE;
		break;
	case TUX3_MAGIC_ILEAF: case TUX3_MAGIC_OLEAF:
		if (ileaf_count(buf) <= (blocksize - ILEAF_HEADER) / 2)
			return magic == TUX3_MAGIC_ILEAF ? TUX3_BT_ILEAF :
			       TUX3_BT_OLEAF;
		break;
	case TUX3_MAGIC_DLEAF:
		if (dleaf_count(buf) <= (blocksize - DLEAF_HEADER) / DLEAF_ENTRY)
			return TUX3_BT_DLEAF;
		break;
	case TUX3_MAGIC_LOG:
		if ((unsigned)be16(buf + 2) + LOG_HEADER_SIZE <= blocksize)
			return TUX3_BT_LOG;
		break;
	}
	return TUX3_BT_DATA;
}

static int decode_bnode(const uint8_t *b, unsigned bs, tux3_field_fn fn,
			void *ctx)
{
	unsigned count = bnode_count(b), cap = bnode_capacity(bs);
	char name[32], value[160];
	int r;
	if (count > cap) {
		snprintf(value, sizeof(value), "count %u exceeds the capacity "
			 "%u: showing %u", count, cap, cap);
		if ((r = fn(ctx, "entries", BNODE_HEADER, 0, value, NULL)))
			return r;
		count = cap;
	}
	for (unsigned i = 0; i < count; i++) {
		snprintf(name, sizeof(name), "entry[%u]", i);
		snprintf(value, sizeof(value), "key %" PRIu64 " -> child %"
			 PRIu64, bnode_key(b, i), bnode_child(b, i));
		if ((r = fn(ctx, name, BNODE_HEADER + BNODE_ENTRY * i,
			    BNODE_ENTRY, value, NULL)))
			return r;
	}
	return 0;
}

static int decode_ileaf(const uint8_t *b, unsigned bs, tux3_field_fn fn,
			void *ctx)
{
	unsigned count = ileaf_count(b), cap = (bs - ILEAF_HEADER) / 2;
	uint64_t ibase = be64(b + 8);
	char name[32], value[160];
	unsigned prev = 0, live = 0;
	int r;
	if (count > cap)
		count = cap;
	for (unsigned k = 1; k <= count; k++) {
		unsigned end = be16(b + bs - 2 * k);
		if (end == prev)
			continue;
		snprintf(name, sizeof(name), "dict[%u]", k);
		if (end < prev)
			snprintf(value, sizeof(value), "inum %" PRIu64 ": end %u "
				 "below the previous %u (damaged)",
				 ibase + k - 1, end, prev);
		else {
			snprintf(value, sizeof(value), "inum %" PRIu64 " -> "
				 "offset %u, %u bytes", ibase + k - 1,
				 ILEAF_HEADER + prev, end - prev);
			live++;
		}
		if ((r = fn(ctx, name, bs - 2 * k, 2, value, NULL)))
			return r;
		prev = end;
	}
	snprintf(value, sizeof(value), "%u slots, %u inodes, %u bytes of "
		 "blobs", ileaf_count(b), live, prev);
	return fn(ctx, "dictionary", bs - 2 * count, 2 * count, value, NULL);
}

static int decode_dleaf(const uint8_t *b, unsigned bs, tux3_field_fn fn,
			void *ctx)
{
	unsigned count = dleaf_count(b), cap = (bs - DLEAF_HEADER) / DLEAF_ENTRY;
	char name[32], value[160];
	int r;
	if (count > cap)
		count = cap;
	for (unsigned i = 0; i < count; i++) {
		struct dleaf_entry e;
		dleaf_entry_get(b, i, &e);
		snprintf(name, sizeof(name), "entry[%u]", i);
		if (e.physical)
			snprintf(value, sizeof(value), "logical %" PRIu64
				 " -> physical %" PRIu64 ", version %u",
				 e.logical, e.physical, e.version);
		else
			snprintf(value, sizeof(value), "logical %" PRIu64
				 " -> hole%s, version %u", e.logical,
				 i + 1 == count ? " (sentinel)" : "", e.version);
		if ((r = fn(ctx, name, DLEAF_HEADER + DLEAF_ENTRY * i,
			    DLEAF_ENTRY, value, NULL)))
			return r;
	}
	return 0;
}

static int decode_log(const uint8_t *b, unsigned bs, tux3_field_fn fn,
		      void *ctx)
{
	unsigned end = LOG_HEADER_SIZE + be16(b + 2), i = 0;
	char name[32], value[200];
	int r;
	if (end > bs)
		end = bs;
	for (unsigned off = LOG_HEADER_SIZE; off < end; i++) {
		struct logrec rec;
		unsigned size = log_decode_record(b, off, end, &rec);
		snprintf(name, sizeof(name), "record[%u]", i);
		if (!size) {
			snprintf(value, sizeof(value), "invalid or cut-off "
				 "record, code 0x%02x (%s)", b[off],
				 log_code_name(b[off]));
			return fn(ctx, name, off, end - off, value, NULL);
		}
		log_format_record(&rec, value, sizeof(value));
		if ((r = fn(ctx, name, off, size, value, NULL)))
			return r;
		off += size;
	}
	return 0;
}

/* The superblock-area fields that lie wholly inside the block. */
static int decode_super_part(const uint8_t *b, unsigned bs, uint64_t blocknr,
			     tux3_field_fn fn, void *ctx)
{
	uint64_t start = blocknr * bs, end = start + bs;
	uint64_t lo = start > TUX3_SB_OFFSET ? start : TUX3_SB_OFFSET;
	uint64_t hi = end < TUX3_SB_OFFSET + TUX3_SB_LEN ? end :
		      TUX3_SB_OFFSET + TUX3_SB_LEN;
	uint8_t sb[TUX3_SB_LEN] = { 0 };
	char value[200];
	memcpy(sb + (lo - TUX3_SB_OFFSET), b + (lo - start), hi - lo);
	for (unsigned i = 0; i < tux3_fields_super.count; i++) {
		const struct tux3_field *f = &tux3_fields_super.fields[i];
		uint64_t at = TUX3_SB_OFFSET + f->offset;
		if (at < lo || at + f->width > hi)
			continue;
		tux3_field_format(f, sb, value, sizeof(value));
		int r = fn(ctx, f->name, (unsigned)(at - start), f->width,
			   value, f->desc);
		if (r)
			return r;
	}
	return 0;
}

int tux3_decode_block(const uint8_t *buf, unsigned blocksize,
		      uint64_t blocknr, tux3_field_fn fn, void *ctx)
{
	enum tux3_block_type t = tux3_sniff_block(buf, blocksize, blocknr);
	int r;
	switch (t) {
	case TUX3_BT_BNODE:
		if ((r = tux3_fields_decode(&tux3_fields_bnode, buf, blocksize,
					    "", 0, fn, ctx)))
			return r;
		return decode_bnode(buf, blocksize, fn, ctx);
	case TUX3_BT_ILEAF: case TUX3_BT_OLEAF:
		if ((r = tux3_fields_decode(&tux3_fields_ileaf, buf, blocksize,
					    "", 0, fn, ctx)))
			return r;
		return decode_ileaf(buf, blocksize, fn, ctx);
	case TUX3_BT_DLEAF:
		if ((r = tux3_fields_decode(&tux3_fields_dleaf, buf, blocksize,
					    "", 0, fn, ctx)))
			return r;
		return decode_dleaf(buf, blocksize, fn, ctx);
	case TUX3_BT_LOG:
		if ((r = tux3_fields_decode(&tux3_fields_log, buf, blocksize,
					    "", 0, fn, ctx)))
			return r;
		return decode_log(buf, blocksize, fn, ctx);
	case TUX3_BT_SUPER:
		return decode_super_part(buf, blocksize, blocknr, fn, ctx);
	default:
		return 0;
	}
}

int tux3_decode_super(const uint8_t *sb4096, tux3_field_fn fn, void *ctx)
{
	return tux3_fields_decode(&tux3_fields_super, sb4096, TUX3_SB_LEN, "",
				  0, fn, ctx);
}

void tux3_superext_fix_crc(uint8_t *sb4096)
{
	uint8_t *r = sb4096 + SUPEREXT_OFFSET;
	put_be32(r + SUPEREXT_CRC_OFFSET, tux3_crc32c(0, r, SUPEREXT_CRC_OFFSET));
}

int tux3_decode_attr(const struct tux3_attr_raw *a, tux3_field_fn fn,
		     void *ctx)
{
	const struct tux3_field_table *t = a->version ? NULL :
					   tux3_attr_table(a->kind);
	char value[200];
	unsigned off = a->offset + 2, done = 0;
	int r;
	if (t && a->paylen >= t->size) {
		if ((r = tux3_fields_decode(t, a->payload, a->paylen, "", off,
					    fn, ctx)))
			return r;
		done = t->size;
	}
	if (done >= a->paylen)
		return 0;
	/* the rest: an xattr's value, IDATA, or another version's payload */
	const uint8_t *p = a->payload + done;
	unsigned n = a->paylen - done;
	bool text = true;
	for (unsigned i = 0; i < n; i++)
		if (p[i] < 0x20 || p[i] >= 0x7f)
			text = false;
	if (text && n <= 150)
		snprintf(value, sizeof(value), "\"%.*s\"", (int)n,
			 (const char *)p);
	else {
		struct tux3_field f = { "value", 0, n, TUX3_FIELD_BYTES, NULL };
		tux3_field_format(&f, p, value, sizeof(value));
	}
	return fn(ctx, a->kind == ATTR_XATTR ? "value" : "payload", off + done,
		  n, value, NULL);
}

/* ---- the fixed inode fields tux3_set_inode_field sets (write/raw_write.c) ---- */

const char *const tux3_inode_field_names[] = {
	"mode", "uid", "gid", "size", "nlink", "ctime", "mtime", "rdev",
	"dtree", NULL,
};

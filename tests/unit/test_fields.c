/* Field tables (common/format/fields.c): layout of the tables, decoding the
 * oracle superblocks against their info files, set/get of every field,
 * range errors, the block sniffer and decoders, raw inode attributes and
 * tux3_set_inode_field. */
#include <sys/stat.h>
#include "fixtures.h"
#include "tux3_fields.h"

/* Tables: fields in offset order, no overlap, inside the table's size;
 * the superblock table tiles all 4096 bytes (padding included). */
TEST(table_layout)
{
	for (unsigned t = 0; tux3_field_tables[t]; t++) {
		const struct tux3_field_table *tab = tux3_field_tables[t];
		unsigned end = 0;
		CHECK(tab->count > 0);
		CHECK(tux3_field_table_find(tab->name) == tab);
		for (unsigned i = 0; i < tab->count; i++) {
			const struct tux3_field *f = &tab->fields[i];
			CHECK(f->width > 0);
			CHECK(f->offset >= end);
			end = f->offset + f->width;
			CHECK(end <= tab->size);
			CHECK(tux3_field_find(tab, f->name) == f);
			if (tab == &tux3_fields_super)
				CHECK_EQ(f->offset, i ? tab->fields[i - 1].offset +
					 tab->fields[i - 1].width : 0);
		}
		if (tab == &tux3_fields_super)
			CHECK_EQ(end, 4096);
	}
	CHECK(tux3_field_table_find("nosuch") == NULL);
	CHECK(tux3_attr_table(ATTR_MODE_OWNER) == &tux3_fields_attr_mode_owner);
	CHECK(tux3_attr_table(ATTR_IDATA) == NULL);
	/* the extension fields sit where superext.c puts them */
	CHECK_EQ(tux3_field_find(&tux3_fields_super, "ext.crc")->offset,
		 SUPEREXT_OFFSET + SUPEREXT_CRC_OFFSET);
	CHECK_EQ(tux3_field_find(&tux3_fields_super, "ext.oroot")->offset,
		 SUPEREXT_OFFSET + 144);
}

/* "name value" pairs of the "Superblock decoded" lines of an info file */
static int info_value(const char *name, const char *key, char *out,
		      size_t len)
{
	const char *src = getenv("TUX3_ORACLE_SRC");
	char path[1024], line[1024];
	if (!src)
		return -1;
	snprintf(path, sizeof(path), "%s/%s.info.txt", src, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int in = 0, found = -1;
	while (fgets(line, sizeof(line), f) && found) {
		if (strstr(line, "Superblock decoded")) {
			in = 1;
			continue;
		}
		if (!in)
			continue;
		if (line[0] != ' ')
			break;
		for (char *save, *seg = strtok_r(line, ",\n", &save); seg;
		     seg = strtok_r(NULL, ",\n", &save)) {
			char k[64], v[64];
			if (sscanf(seg, " %63s %63s", k, v) == 2 &&
			    !strcmp(k, key)) {
				snprintf(out, len, "%s", v);
				found = 0;
			}
		}
	}
	fclose(f);
	return found;
}

static void oracle_super(const char *name)
{
	static const char *const keys[] = {
		"birthdate", "flags", "blockbits", "volblocks", "iroot",
		"oroot", "usedinodes", "nextblock", "atomdictsize",
		"freeatom", "atomgen", "logchain", "logcount", NULL,
	};
	char v[64];
	if (!getenv("TUX3_ORACLE_SRC") || info_value(name, "volblocks", v,
						      sizeof(v)))
		SKIP("oracle info files absent (TUX3_ORACLE_SRC)");
	struct tux3_volume *vol = open_oracle(name);
	uint8_t sb[4096];
	CHECK_EQ(tux3_read_raw(vol, 4096, sb, sizeof(sb)), 0);
	for (unsigned i = 0; keys[i]; i++) {
		const struct tux3_field *f = tux3_field_find(&tux3_fields_super,
							     keys[i]);
		uint64_t got;
		CHECK(f);
		CHECK_EQ(info_value(name, keys[i], v, sizeof(v)), 0);
		CHECK_EQ(tux3_field_get(f, sb, &got), 0);
		if (got != strtoull(v, NULL, 0))
			fprintf(stderr, "%s: %s = %" PRIu64 ", info says %s\n",
				name, keys[i], got, v);
		CHECK_EQ(got, strtoull(v, NULL, 0));
	}
	/* magic: the info file gives it as 16 hex digits */
	char hex[32], text[200];
	CHECK_EQ(info_value(name, "magic", v, sizeof(v)), 0);
	tux3_field_format(tux3_field_find(&tux3_fields_super, "magic"), sb,
			  text, sizeof(text));
	snprintf(hex, sizeof(hex), "%.16s", text);
	CHECK(!strcmp(hex, v));
	/* reference volumes: zero padding and no extension record */
	tux3_field_format(tux3_field_find(&tux3_fields_super, "tail100"), sb,
			  text, sizeof(text));
	CHECK(!strcmp(text, "zero (412 bytes)"));
	tux3_field_format(tux3_field_find(&tux3_fields_super, "ext.magic"), sb,
			  text, sizeof(text));
	CHECK(!strncmp(text, "0x00000000", 10));
	tux3_close(vol);
}

TEST(oracle_super_empty_4k) { oracle_super("empty-4k"); }
TEST(oracle_super_small_delta) { oracle_super("small-delta"); }

struct lines {
	unsigned count;
	char text[256][200];
	unsigned offset[256];
};

static int collect(void *ctx, const char *name, unsigned offset,
		   unsigned width, const char *value, const char *desc)
{
	struct lines *l = ctx;
	(void)width; (void)desc;
	if (l->count < 256) {
		snprintf(l->text[l->count], 200, "%s=%s", name, value);
		l->offset[l->count] = offset;
		l->count++;
	}
	return 0;
}

static int has_line(const struct lines *l, const char *text)
{
	for (unsigned i = 0; i < l->count; i++)
		if (!strcmp(l->text[i], text))
			return 1;
	return 0;
}

/* The decoder reports every superblock field once (padding included). */
TEST(decode_super_all_fields)
{
	uint8_t sb[4096] = { 0 };
	struct lines l = { 0 };
	memcpy(sb, tux3_magic_2014, 8);
	put_be64(sb + 32, 16384);
	CHECK_EQ(tux3_decode_super(sb, collect, &l), 0);
	CHECK_EQ(l.count, tux3_fields_super.count);
	CHECK(has_line(&l, "volblocks=16384"));
	CHECK(has_line(&l, "magic=7475783320140506 (tux3 2014-05-06)"));
	CHECK(has_line(&l, "tail1024=zero (3072 bytes)"));
}

/* Every field of every table: set then get (and format then set again
 * gives the same bytes); neighbouring bytes are not touched. */
TEST(set_get_every_field)
{
	static uint8_t a[4096], b[4096];
	char err[300], text[300], value[300];
	for (unsigned t = 0; tux3_field_tables[t]; t++) {
		const struct tux3_field_table *tab = tux3_field_tables[t];
		for (unsigned i = 0; i < tab->count; i++) {
			const struct tux3_field *f = &tab->fields[i];
			uint64_t got;
			memset(a, 0xaa, sizeof(a));
			int integer = tux3_field_get(f, a, &got) == 0;
			if (integer) {
				uint64_t want;
				if (f->kind == TUX3_FIELD_TIME) {
					want = (uint64_t)-1234567890123LL;
					snprintf(value, sizeof(value), "%lld",
						 -1234567890123LL);
				} else {
					want = f->width >= 8 ? UINT64_MAX - 1 :
					       (1ULL << (8 * f->width)) - 2;
					snprintf(value, sizeof(value),
						 f->kind == TUX3_FIELD_OCTAL ?
						 "%" PRIo64 : "%" PRIu64, want);
				}
				CHECK_EQ(tux3_field_set(f, a, value, err,
							sizeof(err)), 0);
				CHECK_EQ(tux3_field_get(f, a, &got), 0);
				CHECK(got == want);
				/* format, then set from the first word */
				tux3_field_format(f, a, text, sizeof(text));
				char *sp = strchr(text, ' ');
				if (sp && f->kind != TUX3_FIELD_MAGIC)
					*sp = 0;
				if (f->kind == TUX3_FIELD_MAGIC)
					snprintf(text, sizeof(text), "%" PRIu64,
						 want);
				memset(b, 0xaa, sizeof(b));
				CHECK_EQ(tux3_field_set(f, b, text, err,
							sizeof(err)), 0);
				CHECK(!memcmp(a, b, sizeof(a)));
			} else if (f->kind == TUX3_FIELD_TEXT) {
				CHECK_EQ(tux3_field_set(f, a, "label", err,
							sizeof(err)), 0);
				CHECK(!memcmp(a + f->offset, "label", 6));
				tux3_field_format(f, a, text, sizeof(text));
				CHECK(!strcmp(text, "\"label\""));
			} else {
				/* hex bytes: 01 02 03 ... up to 16 */
				unsigned n = f->width < 16 ? f->width : 16;
				for (unsigned k = 0; k < n; k++)
					sprintf(value + 2 * k, "%02x", k + 1);
				CHECK_EQ(tux3_field_set(f, a, value, err,
							sizeof(err)), 0);
				for (unsigned k = 0; k < f->width; k++)
					CHECK_EQ(a[f->offset + k],
						 k < n ? k + 1 : 0);
			}
			for (unsigned k = 0; k < sizeof(a); k++)
				if (k < f->offset || k >= f->offset + f->width)
					CHECK_EQ(a[k], 0xaa);
		}
	}
	/* by name */
	memset(a, 0, sizeof(a));
	CHECK_EQ(tux3_field_set_named(&tux3_fields_super, a, "volblocks",
				      "0x4000", err, sizeof(err)), 0);
	CHECK_EQ(be64(a + 32), 16384);
	CHECK_EQ(tux3_field_set_named(&tux3_fields_attr_mode_owner, a, "mode",
				      "40755", err, sizeof(err)), 0);
	CHECK_EQ(be32(a), 040755);
}

TEST(range_errors)
{
	uint8_t a[4096] = { 0 };
	char err[300];
	const struct tux3_field_table *s = &tux3_fields_super;
#define SET(tab, name, v) tux3_field_set_named(tab, a, name, v, err, sizeof(err))
	CHECK_EQ(SET(s, "blockbits", "65536"), -ERANGE);
	CHECK(strstr(err, "blockbits") && strstr(err, "65535"));
	CHECK_EQ(SET(s, "blockbits", "65535"), 0);
	CHECK_EQ(SET(s, "logcount", "4294967296"), -ERANGE);
	CHECK_EQ(SET(s, "volblocks", "18446744073709551616"), -ERANGE);
	CHECK_EQ(SET(s, "volblocks", "-1"), -EINVAL);
	CHECK_EQ(SET(s, "volblocks", "12abc"), -EINVAL);
	CHECK_EQ(SET(s, "volblocks", ""), -EINVAL);
	CHECK_EQ(SET(s, "ext.mkfs_time", "9223372036854775808"), -ERANGE);
	CHECK_EQ(SET(s, "ext.mkfs_time", "-9223372036854775808"), 0);
	CHECK_EQ(SET(s, "ext.mkfs_time", "soon"), -EINVAL);
	CHECK_EQ(SET(s, "ext.uuid", "0102030405060708090a0b0c0d0e0f1011"),
		 -ERANGE);
	CHECK_EQ(SET(s, "ext.uuid", "123"), -EINVAL);
	CHECK_EQ(SET(s, "ext.uuid", "zz"), -EINVAL);
	CHECK_EQ(SET(s, "magic", "747578332014050600"), -ERANGE);
	CHECK_EQ(SET(s, "ext.label", "x12345678901234567890123456789012345678"
		     "90123456789012345678901234567890"), -ERANGE);
	CHECK_EQ(SET(s, "nosuch", "1"), -ENOENT);
	CHECK_EQ(SET(&tux3_fields_dirent, "name_len", "256"), -ERANGE);
	CHECK_EQ(SET(&tux3_fields_dleaf_entry, "logical", "281474976710656"),
		 -ERANGE);
	CHECK_EQ(SET(&tux3_fields_dleaf_entry, "logical", "281474976710655"), 0);
	CHECK_EQ(SET(&tux3_fields_attr_mode_owner, "mode", "9"), -EINVAL);
	CHECK_EQ(SET(&tux3_fields_attr_mode_owner, "mode", "040000000000"),
		 -ERANGE);
#undef SET
}

TEST(sniff_synthetic)
{
	static uint8_t b[4096];
	memset(b, 0, sizeof(b));
	CHECK_EQ(tux3_sniff_block(b, 4096, 100), TUX3_BT_DATA);
	CHECK_EQ(tux3_sniff_block(b, 4096, 0), TUX3_BT_RESERVED);
	CHECK_EQ(tux3_sniff_block(b, 4096, 1), TUX3_BT_SUPER);
	CHECK_EQ(tux3_sniff_block(b, 512, 7), TUX3_BT_RESERVED);
	CHECK_EQ(tux3_sniff_block(b, 512, 9), TUX3_BT_SUPER);
	CHECK_EQ(tux3_sniff_block(b, 512, 16), TUX3_BT_DATA);
	CHECK_EQ(tux3_sniff_block(b, 16384, 0), TUX3_BT_SUPER);
	put_be16(b, 0xb4de);
	CHECK_EQ(tux3_sniff_block(b, 4096, 100), TUX3_BT_DATA);	/* count 0 */
	put_be32(b + 4, 2);
	CHECK_EQ(tux3_sniff_block(b, 4096, 100), TUX3_BT_BNODE);
	put_be32(b + 4, 256);
	CHECK_EQ(tux3_sniff_block(b, 4096, 100), TUX3_BT_DATA);
	memset(b, 0, 8);
	put_be16(b, 0x90de);
	CHECK_EQ(tux3_sniff_block(b, 4096, 100), TUX3_BT_ILEAF);
	put_be16(b, 0x6eaf);
	CHECK_EQ(tux3_sniff_block(b, 4096, 100), TUX3_BT_OLEAF);
	put_be16(b, 0xbeaf);
	CHECK_EQ(tux3_sniff_block(b, 4096, 100), TUX3_BT_DLEAF);
	put_be16(b, 0x10ad);
	put_be16(b + 2, 4080);
	CHECK_EQ(tux3_sniff_block(b, 4096, 100), TUX3_BT_LOG);
	put_be16(b + 2, 4081);
	CHECK_EQ(tux3_sniff_block(b, 4096, 100), TUX3_BT_DATA);
	CHECK(!strcmp(tux3_block_type_name(TUX3_BT_ILEAF), "ileaf"));
}

TEST(decode_synthetic_bnode_dleaf)
{
	static uint8_t b[4096];
	struct lines l = { 0 };
	memset(b, 0, sizeof(b));
	bnode_init(b, 4096);
	CHECK_EQ(bnode_init_root(b, 4096, 2, 70, 71, 500), 0);
	CHECK_EQ(tux3_decode_block(b, 4096, 100, collect, &l), 0);
	CHECK(has_line(&l, "magic=0xb4de (bnode)"));
	CHECK(has_line(&l, "count=2"));
	CHECK(has_line(&l, "entry[0]=key 0 -> child 70"));
	CHECK(has_line(&l, "entry[1]=key 500 -> child 71"));
	memset(b, 0, sizeof(b));
	memset(&l, 0, sizeof(l));
	dleaf_init(b);
	CHECK_EQ(dleaf_write_extent(b, 4096, 0, 300, 5, 0, TUX3_KEY_LIMIT,
				    NULL, NULL), 0);
	CHECK_EQ(tux3_decode_block(b, 4096, 100, collect, &l), 0);
	CHECK(has_line(&l, "entry[0]=logical 0 -> physical 300, version 0"));
	CHECK(has_line(&l, "entry[1]=logical 5 -> hole (sentinel), version 0"));
	/* the entry table reads the same words */
	uint64_t v;
	CHECK_EQ(tux3_field_get(tux3_field_find(&tux3_fields_dleaf_entry,
						"physical"), b + 8, &v), 0);
	CHECK_EQ(v, 300);
}

TEST(decode_oracle_blocks)
{
	struct tux3_volume *vol = open_oracle("empty-4k");
	uint8_t *b = malloc(4096);
	struct lines l = { 0 };
	int replayed;
	CHECK_EQ(tux3_read_block(vol, 63, b, &replayed), 0);
	CHECK_EQ(tux3_sniff_block(b, 4096, 63), TUX3_BT_ILEAF);
	CHECK_EQ(tux3_decode_block(b, 4096, 63, collect, &l), 0);
	CHECK(has_line(&l, "count=64"));
	CHECK(has_line(&l, "dict[5]=inum 4 -> offset 16, 48 bytes"));
	CHECK(has_line(&l, "dict[64]=inum 63 -> offset 64, 48 bytes"));
	memset(&l, 0, sizeof(l));
	CHECK_EQ(tux3_read_block(vol, 64, b, NULL), 0);
	CHECK_EQ(tux3_sniff_block(b, 4096, 64), TUX3_BT_LOG);
	CHECK_EQ(tux3_decode_block(b, 4096, 64, collect, &l), 0);
	CHECK(has_line(&l, "bytes=23"));
	CHECK(has_line(&l, "record[0]=BALLOC count 2, block 0"));
	CHECK(has_line(&l, "record[1]=DELTA"));
	CHECK(has_line(&l, "record[2]=BALLOC count 1, block 63"));
	/* the superblock's block decodes as the superblock */
	memset(&l, 0, sizeof(l));
	CHECK_EQ(tux3_read_block(vol, 1, b, NULL), 0);
	CHECK_EQ(tux3_decode_block(b, 4096, 1, collect, &l), 0);
	CHECK(has_line(&l, "iroot=0x000100000000003f (depth 1, block 63)"));
	CHECK(tux3_read_block(vol, 16384, b, NULL) < 0);
	free(b);
	tux3_close(vol);
}

struct attrs {
	unsigned count, kinds;
	struct lines l;
};

static int attr_cb(void *ctx, const struct tux3_attr_raw *a)
{
	struct attrs *s = ctx;
	s->count++;
	s->kinds |= 1u << a->kind;
	return tux3_decode_attr(a, collect, &s->l);
}

TEST(inode_attrs_oracle)
{
	struct tux3_volume *vol = open_oracle("empty-4k");
	struct attrs s = { 0 };
	tux3_block_t leaf;
	unsigned len;
	CHECK_EQ(tux3_inode_attrs(vol, 63, &leaf, &len, attr_cb, &s), 0);
	CHECK_EQ(leaf, 63);
	CHECK_EQ(len, 48);
	CHECK(s.kinds & (1u << ATTR_MODE_OWNER));
	CHECK(has_line(&s.l, "mode=040755"));
	CHECK(has_line(&s.l, "nlink=2"));
	CHECK(tux3_inode_attrs(vol, 70, NULL, NULL, attr_cb, &s) == -ENOENT);
	tux3_close(vol);
	/* xattr value decoded on small-delta's hello.txt (inode 64) */
	vol = oracle_or_null("small-delta");
	if (vol) {
		memset(&s, 0, sizeof(s));
		CHECK_EQ(tux3_inode_attrs(vol, 64, NULL, NULL, attr_cb, &s), 0);
		CHECK(has_line(&s.l, "atom=1"));
		CHECK(has_line(&s.l, "value=\"myvalue\""));
		tux3_close(vol);
	}
}

TEST(set_inode_field_write_path)
{
	const char *path = scratch_copy("empty-4k");
	struct tux3_volume *vol = oracle_open_path(path, TUX3_OPEN_RDWR);
	char err[300];
	struct tux3_stat st;
	CHECK_EQ(tux3_set_inode_field(vol, 63, "mode", "040700", err,
				      sizeof(err)), 0);
	CHECK_EQ(tux3_set_inode_field(vol, 63, "uid", "1000", err,
				      sizeof(err)), 0);
	CHECK_EQ(tux3_set_inode_field(vol, 63, "nlink", "3", err,
				      sizeof(err)), 0);
	CHECK_EQ(tux3_set_inode_field(vol, 63, "mtime", "-5", err,
				      sizeof(err)), 0);
	CHECK_EQ(tux3_set_inode_field(vol, 63, "gid", "4294967296", err,
				      sizeof(err)), -ERANGE);
	CHECK(strstr(err, "gid"));
	CHECK_EQ(tux3_set_inode_field(vol, 63, "colour", "1", err,
				      sizeof(err)), -ENOENT);
	CHECK_EQ(tux3_set_inode_field(vol, 63, "rdev", "4096:0", err,
				      sizeof(err)), -ERANGE);
	CHECK_EQ(tux3_umount(vol), 0);
	vol = oracle_open_path(path, TUX3_OPEN_RDONLY);
	CHECK_EQ(tux3_stat(vol, 63, &st), 0);
	CHECK_EQ(st.mode, 040700);
	CHECK_EQ(st.uid, 1000);
	CHECK_EQ(st.nlink, 3);
	CHECK_EQ(st.mtime_ns, -5);
	CHECK_EQ(tux3_set_inode_field(vol, 63, "mode", "0755", err,
				      sizeof(err)), -EROFS);
	uint8_t byte = 0;
	CHECK_EQ(tux3_write_raw(vol, 4096, &byte, 1), -EROFS);
	tux3_close(vol);
}

TEST(raw_write_roundtrip)
{
	const char *path = scratch_copy("empty-4k");
	struct tux3_volume *vol = oracle_open_path(path, TUX3_OPEN_RDWR);
	uint8_t sb[4096];
	char err[300];
	CHECK_EQ(tux3_read_raw(vol, 4096, sb, sizeof(sb)), 0);
	CHECK_EQ(tux3_field_set_named(&tux3_fields_super, sb, "volblocks",
				      "99999999", err, sizeof(err)), 0);
	CHECK_EQ(tux3_write_raw(vol, 4096, sb, sizeof(sb)), 0);
	CHECK(tux3_write_raw(vol, 67108864 - 1, sb, 2) < 0);
	tux3_close(vol);
	struct tux3_volume *v2 = NULL;
	char msg[512];
	CHECK(tux3_open_err(path, TUX3_OPEN_RDONLY, &v2, msg, sizeof(msg)) < 0);
	CHECK(strstr(msg, "99999999") && strstr(msg, "offset 4128"));
}

int main(void)
{
	return run_tests("fields");
}

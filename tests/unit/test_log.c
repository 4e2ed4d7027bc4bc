/* Layer: log.c -- log block header and record decoding. */
#include "fixtures.h"

static const unsigned sizes[] = { 11, 11, 11, 11, 13, 7, 13, 26, 15, 19,
				  19, 13, 15, 19, 7, 9, 9, 7, 1, 1 };
static const char *const names[] = {
	"BALLOC", "BFREE", "BFREE_ON_UNIFY", "BFREE_RELOG", "LEAF_REDIRECT",
	"LEAF_FREE", "BNODE_REDIRECT", "BNODE_ROOT", "BNODE_SPLIT",
	"BNODE_ADD", "BNODE_UPDATE", "BNODE_MERGE", "BNODE_DEL",
	"BNODE_ADJUST", "BNODE_FREE", "ORPHAN_ADD", "ORPHAN_DEL",
	"FREEBLOCKS", "UNIFY", "DELTA",
};

TEST(record_sizes_and_names)
{
	CHECK_EQ(LOG_CODE_FIRST, 0x33);
	CHECK_EQ(LOG_CODE_LAST, 0x46);
	for (unsigned c = 0x33; c <= 0x46; c++) {
		CHECK_EQ(log_record_size(c), sizes[c - 0x33]);
		CHECK(!strcmp(log_code_name(c), names[c - 0x33]));
	}
	static const unsigned invalid[] = { 0, 1, 0x32, 0x47, 0x80, 0xff,
					    0x100, 0x133 };
	for (unsigned i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
		CHECK_EQ(log_record_size(invalid[i]), 0);
		CHECK(!strcmp(log_code_name(invalid[i]), "INVALID"));
	}
}

/* Put one record of `code` with distinct field bytes at the end of an
 * exactly sized heap buffer (so any over-read trips the sanitizer), then
 * decode it. */
static uint8_t *record(unsigned code, unsigned *end)
{
	unsigned size = log_record_size(code);
	uint8_t *b = malloc(LOG_HEADER_SIZE + size);
	CHECK(b);
	memset(b, 0, LOG_HEADER_SIZE);
	b[LOG_HEADER_SIZE] = (uint8_t)code;
	for (unsigned i = 1; i < size; i++)
		b[LOG_HEADER_SIZE + i] = (uint8_t)(0x10 + i);
	*end = LOG_HEADER_SIZE + size;
	return b;
}

/* The big-endian value of payload bytes [from, from + n) as record()
 * fills them: byte i (1-based from the code) holds 0x10 + i. */
static uint64_t field(unsigned from, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v = v << 8 | (uint8_t)(0x10 + from + i);
	return v;
}

TEST(decode_every_code)
{
	for (unsigned code = 0x33; code <= 0x46; code++) {
		unsigned end;
		uint8_t *b = record(code, &end);
		struct logrec r;
		memset(&r, 0xa5, sizeof(r));
		unsigned got = log_decode_record(b, LOG_HEADER_SIZE, end, &r);
		CHECK_EQ(got, sizes[code - 0x33]);
		CHECK_EQ(r.code, code);
		CHECK_EQ(r.offset, LOG_HEADER_SIZE);
		switch (code) {
		case LOG_BALLOC: case LOG_BFREE: case LOG_BFREE_ON_UNIFY:
		case LOG_BFREE_RELOG:
			CHECK(r.count == field(1, 4));
			CHECK(r.block == field(5, 6));
			break;
		case LOG_LEAF_REDIRECT: case LOG_BNODE_REDIRECT:
			CHECK(r.oldb == field(1, 6));
			CHECK(r.newb == field(7, 6));
			break;
		case LOG_LEAF_FREE: case LOG_BNODE_FREE:
			CHECK(r.block == field(1, 6));
			break;
		case LOG_BNODE_ROOT:
			CHECK(r.count == field(1, 1));
			CHECK(r.root == field(2, 6));
			CHECK(r.left == field(8, 6));
			CHECK(r.right == field(14, 6));
			CHECK(r.rkey == field(20, 6));
			break;
		case LOG_BNODE_SPLIT:
			CHECK(r.pos == field(1, 2));
			CHECK(r.src == field(3, 6));
			CHECK(r.dst == field(9, 6));
			break;
		case LOG_BNODE_ADD: case LOG_BNODE_UPDATE:
			CHECK(r.parent == field(1, 6));
			CHECK(r.child == field(7, 6));
			CHECK(r.key == field(13, 6));
			break;
		case LOG_BNODE_MERGE:
			CHECK(r.src == field(1, 6));
			CHECK(r.dst == field(7, 6));
			break;
		case LOG_BNODE_DEL:
			CHECK(r.count == field(1, 2));
			CHECK(r.block == field(3, 6));
			CHECK(r.key == field(9, 6));
			break;
		case LOG_BNODE_ADJUST:
			CHECK(r.block == field(1, 6));
			CHECK(r.from == field(7, 6));
			CHECK(r.to == field(13, 6));
			break;
		case LOG_ORPHAN_ADD: case LOG_ORPHAN_DEL:
			CHECK(r.version == field(1, 2));
			CHECK(r.inum == field(3, 6));
			break;
		case LOG_FREEBLOCKS:
			CHECK(r.freeblocks == field(1, 6));
			break;
		case LOG_UNIFY: case LOG_DELTA:
			CHECK_EQ(r.block, 0);	/* cleared, no fields */
			CHECK_EQ(r.count, 0);
			break;
		}
		/* one byte short of the record: refused */
		CHECK_EQ(log_decode_record(b, LOG_HEADER_SIZE, end - 1, &r), 0);
		CHECK_EQ(r.code, code);
		free(b);
	}
}

TEST(invalid_codes)
{
	static const unsigned bad[] = { 0x32, 0x47, 0x00, 0xff };
	for (unsigned i = 0; i < 4; i++) {
		uint8_t b[64] = { 0 };
		struct logrec r;
		b[16] = (uint8_t)bad[i];
		CHECK_EQ(log_decode_record(b, 16, 64, &r), 0);
		CHECK_EQ(r.code, bad[i]);
		CHECK_EQ(r.offset, 16);
	}
}

TEST(verified_records)
{
	/* empty-4k block 64 payload (verified) */
	static const uint8_t mkfs[] = {
		0x33, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0,
		0x46,
		0x33, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0x3f,
	};
	struct logrec r;
	CHECK_EQ(log_decode_record(mkfs, 0, 23, &r), 11);
	CHECK_EQ(r.code, LOG_BALLOC);
	CHECK_EQ(r.count, 2);
	CHECK_EQ(r.block, 0);
	CHECK_EQ(log_decode_record(mkfs, 11, 23, &r), 1);
	CHECK_EQ(r.code, LOG_DELTA);
	CHECK_EQ(log_decode_record(mkfs, 12, 23, &r), 11);
	CHECK_EQ(r.count, 1);
	CHECK_EQ(r.block, 63);
	/* tree-fuse BNODE_UPDATE and BNODE_REDIRECT, orphan ORPHAN_ADD,
	 * small-unified FREEBLOCKS */
	static const uint8_t upd[] = { 0x3d, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 7,
				       0x65, 0, 0, 0, 0, 2, 0xc0 };
	CHECK_EQ(log_decode_record(upd, 0, sizeof(upd), &r), 19);
	CHECK_EQ(r.parent, 5);
	CHECK_EQ(r.child, 1893);
	CHECK_EQ(r.key, 704);
	static const uint8_t redir[] = { 0x39, 0, 0, 0, 0, 0, 0x0a, 0, 0, 0, 0,
					 0, 5 };
	CHECK_EQ(log_decode_record(redir, 0, sizeof(redir), &r), 13);
	CHECK_EQ(r.oldb, 10);
	CHECK_EQ(r.newb, 5);
	static const uint8_t orph[] = { 0x42, 0, 0, 0, 0, 0, 0, 0, 0x41 };
	CHECK_EQ(log_decode_record(orph, 0, 9, &r), 9);
	CHECK_EQ(r.version, 0);
	CHECK_EQ(r.inum, 65);
	static const uint8_t fb[] = { 0x44, 0, 0, 0, 0, 0x3f, 0xa6 };
	CHECK_EQ(log_decode_record(fb, 0, 7, &r), 7);
	CHECK_EQ(r.freeblocks, 16294);
}

TEST(format_records)
{
	struct logrec r = { .code = LOG_BALLOC, .count = 1, .block = 63 };
	char buf[160];
	log_format_record(&r, buf, sizeof(buf));
	CHECK(!strcmp(buf, "BALLOC count 1, block 63"));
	r = (struct logrec){ .code = LOG_ORPHAN_ADD, .inum = 65 };
	log_format_record(&r, buf, sizeof(buf));
	CHECK(!strcmp(buf, "ORPHAN_ADD version 0, inum 65"));
	r = (struct logrec){ .code = LOG_BNODE_UPDATE, .parent = 5,
			     .child = 1893, .key = 704 };
	log_format_record(&r, buf, sizeof(buf));
	CHECK(!strcmp(buf, "BNODE_UPDATE parent 5, child 1893, key 704"));
	r = (struct logrec){ .code = LOG_BNODE_REDIRECT, .oldb = 10, .newb = 5 };
	log_format_record(&r, buf, sizeof(buf));
	CHECK(!strcmp(buf, "BNODE_REDIRECT old 10, new 5"));
	r = (struct logrec){ .code = LOG_FREEBLOCKS, .freeblocks = 28177 };
	log_format_record(&r, buf, sizeof(buf));
	CHECK(!strcmp(buf, "FREEBLOCKS freeblocks 28177"));
	r = (struct logrec){ .code = LOG_UNIFY };
	log_format_record(&r, buf, sizeof(buf));
	CHECK(!strcmp(buf, "UNIFY"));
	r = (struct logrec){ .code = 0x47 };
	log_format_record(&r, buf, sizeof(buf));
	CHECK(!strcmp(buf, "INVALID"));
	/* every code formats to text starting with its name */
	for (unsigned c = 0x33; c <= 0x46; c++) {
		r = (struct logrec){ .code = c };
		CHECK(log_format_record(&r, buf, sizeof(buf)) > 0);
		CHECK(!strncmp(buf, names[c - 0x33], strlen(names[c - 0x33])));
	}
	/* truncation is safe */
	r = (struct logrec){ .code = LOG_BNODE_ROOT, .count = 2 };
	CHECK(log_format_record(&r, buf, 8) > 8);
	CHECK_EQ(strlen(buf), 7);
}

TEST(record_blocks)
{
	uint64_t out[4];
	uint32_t count;
	struct logrec r = { .code = LOG_BFREE, .count = 9, .block = 100 };
	CHECK_EQ(log_record_blocks(&r, out, &count), 1);
	CHECK_EQ(out[0], 100);
	CHECK_EQ(count, 9);
	r = (struct logrec){ .code = LOG_LEAF_REDIRECT, .oldb = 1, .newb = 2 };
	CHECK_EQ(log_record_blocks(&r, out, &count), 2);
	CHECK(out[0] == 1 && out[1] == 2);
	CHECK_EQ(count, 1);
	r = (struct logrec){ .code = LOG_BNODE_ROOT, .count = 1, .root = 3,
			     .left = 4, .right = 5 };
	CHECK_EQ(log_record_blocks(&r, out, &count), 2);
	r.count = 2;
	CHECK_EQ(log_record_blocks(&r, out, &count), 3);
	CHECK(out[0] == 3 && out[1] == 4 && out[2] == 5);
	r = (struct logrec){ .code = LOG_BNODE_ADD, .parent = 7, .child = 8 };
	CHECK_EQ(log_record_blocks(&r, out, &count), 2);
	CHECK(out[0] == 7 && out[1] == 8);
	r = (struct logrec){ .code = LOG_BNODE_SPLIT, .src = 7, .dst = 9 };
	CHECK_EQ(log_record_blocks(&r, out, &count), 2);
	CHECK(out[1] == 9);
	r = (struct logrec){ .code = LOG_BNODE_DEL, .count = 3, .block = 11 };
	CHECK_EQ(log_record_blocks(&r, out, &count), 1);
	CHECK_EQ(out[0], 11);
	CHECK_EQ(count, 1);	/* count of entries, not of blocks */
	static const unsigned none[] = { LOG_ORPHAN_ADD, LOG_ORPHAN_DEL,
					 LOG_FREEBLOCKS, LOG_UNIFY, LOG_DELTA };
	for (unsigned i = 0; i < 5; i++) {
		r = (struct logrec){ .code = none[i], .inum = 5 };
		CHECK_EQ(log_record_blocks(&r, out, &count), 0);
	}
}

TEST(decode_head)
{
	uint8_t b[512] = { 0 };
	struct loghead h;
	char why[128];
	put_be16(b, TUX3_MAGIC_LOG);
	put_be16(b + 2, 23);
	put_be32(b + 4, 0x11223344);
	put_be64(b + 8, 146);
	CHECK_EQ(log_decode_head(b, 512, &h, why, sizeof(why)), 0);
	CHECK_EQ(h.magic, TUX3_MAGIC_LOG);
	CHECK_EQ(h.bytes, 23);
	CHECK(h.unused == 0x11223344u);
	CHECK_EQ(h.logchain, 146);
	/* payload exactly filling the block */
	put_be16(b + 2, 512 - 16);
	CHECK_EQ(log_decode_head(b, 512, &h, why, sizeof(why)), 0);
	put_be16(b + 2, 512 - 15);
	CHECK_EQ(log_decode_head(b, 512, &h, why, sizeof(why)), -EUCLEAN);
	CHECK(strstr(why, "exceeds"));
	put_be16(b + 2, 0);
	put_be16(b, TUX3_MAGIC_BNODE);
	CHECK_EQ(log_decode_head(b, 512, &h, why, sizeof(why)), -EUCLEAN);
	CHECK(strstr(why, "magic 0xb4de"));
}

TEST(oracle_log_blocks)
{
	struct tux3_volume *vol = open_oracle("empty-4k");
	CHECK_EQ(vol->logcount, 1);
	CHECK_EQ(vol->log[0].blocknr, 64);
	CHECK_EQ(vol->log[0].head.bytes, 23);
	CHECK_EQ(vol->log[0].head.logchain, 0);
	CHECK_EQ(vol->unify_index, -1);
	struct logrec r;
	unsigned codes[3], n = 0;
	for (unsigned off = 16; off < 16 + 23;) {
		unsigned size = log_decode_record(vol->log[0].data, off, 39, &r);
		CHECK(size);
		CHECK(n < 3);
		codes[n++] = r.code;
		off += size;
	}
	CHECK_EQ(n, 3);
	CHECK_EQ(codes[0], LOG_BALLOC);
	CHECK_EQ(codes[1], LOG_DELTA);
	CHECK_EQ(codes[2], LOG_BALLOC);
	tux3_close(vol);
	/* small-unified: the UNIFY is in the only block, after a DELTA and
	 * a LEAF_REDIRECT */
	vol = oracle_or_null("small-unified");
	if (!vol)
		return;
	CHECK_EQ(vol->logcount, 1);
	CHECK_EQ(vol->log[0].blocknr, 149);
	CHECK_EQ(vol->log[0].head.logchain, 146);
	CHECK_EQ(vol->unify_index, 0);
	CHECK_EQ(vol->unify_offset, 16 + 1 + 13);
	CHECK_EQ(vol->log[0].data[vol->unify_offset], LOG_UNIFY);
	tux3_close(vol);
}

int main(void)
{
	return run_tests("log");
}

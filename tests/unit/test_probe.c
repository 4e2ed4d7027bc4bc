/*
 * The probe (common/probe.c): Tux3 or not, from which superblock, and
 * the identity, on volumes of every block size and on damage: the
 * primary gone (the copy stands in), the primary's record damaged (the
 * copy's identity), both gone (not Tux3), short buffers, and random
 * mutations of the first 8 KiB that must never crash, never name a
 * foreign UUID, and never lose a volume whose primary magic survived.
 */
#include <stdlib.h>
#include "fixtures.h"
#include "internal.h"

static const uint8_t test_uuid[16] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab,
				       0xcd, 0xef, 0x01, 0x23, 0x45, 0x67,
				       0x89, 0xab, 0xcd, 0xef };

/* A fresh volume whose label and UUID are then set by a commit, as
 * tux3tune sets them (the copy written before the primary). */
static void make_volume(unsigned bits, uint32_t compat, const char *label)
{
	struct tux3_volume *vol;

	scratch_volume(bits, 4u << 20, compat);
	CHECK_EQ(tux3_open(scratch_path(), TUX3_OPEN_RDWR, &vol), 0);
	CHECK_EQ(tux3_set_identity(vol, label, test_uuid), 0);
	CHECK_EQ(tux3_umount(vol), 0);
}

static void read_head(uint8_t *head)
{
	int fd = open(scratch_path(), O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(pread(fd, head, TUX3_PROBE_HEAD, 0), TUX3_PROBE_HEAD);
	close(fd);
}

TEST(every_block_size)
{
	for (unsigned bits = 9; bits <= 16; bits++) {
		struct tux3_probe p;
		make_volume(bits, TUX3_FEATURE_COMPAT_DEFAULT, "vol");
		CHECK_EQ(tux3_probe(scratch_path(), &p), 1);
		CHECK_EQ(p.super, TUX3_PROBE_PRIMARY);
		CHECK_EQ(p.ident, TUX3_PROBE_PRIMARY);
		CHECK(p.geometry_ok);
		CHECK_EQ(p.blockbits, bits);
		CHECK_EQ(p.volblocks, (4u << 20) >> bits);
		CHECK(!p.versions);
		CHECK(!memcmp(p.id.uuid, test_uuid, 16));
		CHECK(!strcmp(p.id.label, "vol"));
	}
}

TEST(primary_gone_copy_stands_in)
{
	uint8_t head[TUX3_PROBE_HEAD];
	struct tux3_probe p;
	make_volume(12, TUX3_FEATURE_COMPAT_DEFAULT, "backup");
	read_head(head);
	memset(head + TUX3_SB_OFFSET, 0, 8);
	CHECK_EQ(tux3_probe_head(head, sizeof(head), &p), 1);
	CHECK_EQ(p.super, TUX3_PROBE_SECONDARY);
	CHECK_EQ(p.ident, TUX3_PROBE_SECONDARY);
	CHECK(!strcmp(p.id.label, "backup"));
	/* the copy damaged too: not Tux3 */
	head[SB2_OFFSET + 100] ^= 1;
	CHECK_EQ(tux3_probe_head(head, sizeof(head), &p), 0);
}

TEST(primary_record_damaged_copy_identity)
{
	uint8_t head[TUX3_PROBE_HEAD];
	struct tux3_probe p;
	make_volume(12, TUX3_FEATURE_COMPAT_DEFAULT, "id");
	read_head(head);
	head[TUX3_SB_OFFSET + SUPEREXT_OFFSET + 40] ^= 0x40;	/* label */
	CHECK_EQ(tux3_probe_head(head, sizeof(head), &p), 1);
	CHECK_EQ(p.super, TUX3_PROBE_PRIMARY);
	CHECK_EQ(p.ident, TUX3_PROBE_SECONDARY);
	CHECK(!strcmp(p.id.label, "id"));
}

TEST(no_copy_no_record)
{
	uint8_t head[TUX3_PROBE_HEAD];
	struct tux3_probe p;
	make_volume(10, 0, "");
	read_head(head);
	memset(head + TUX3_SB_OFFSET + SUPEREXT_OFFSET, 0, SUPEREXT_SIZE);
	CHECK_EQ(tux3_probe_head(head, sizeof(head), &p), 1);
	CHECK_EQ(p.ident, TUX3_PROBE_NONE);
	CHECK(!p.id.present);
	memset(head + TUX3_SB_OFFSET, 0xff, 8);
	CHECK_EQ(tux3_probe_head(head, sizeof(head), &p), 0);
}

TEST(versions_magic)
{
	uint8_t head[TUX3_PROBE_HEAD];
	struct tux3_probe p;
	make_volume(12, 0, "");
	read_head(head);
	memcpy(head + TUX3_SB_OFFSET, tux3_magic_versions, 8);
	CHECK_EQ(tux3_probe_head(head, sizeof(head), &p), 1);
	CHECK(p.versions);
}

TEST(short_and_foreign)
{
	static uint8_t zero[TUX3_PROBE_HEAD];
	uint8_t head[TUX3_PROBE_HEAD];
	struct tux3_probe p;
	CHECK_EQ(tux3_probe_head(zero, sizeof(zero), &p), 0);
	make_volume(12, TUX3_FEATURE_COMPAT_DEFAULT, "");
	read_head(head);
	for (size_t len = 0; len < TUX3_PROBE_HEAD; len += 509)
		CHECK_EQ(tux3_probe_head(head, len, &p), 0);
	CHECK_EQ(tux3_probe("/dev/null", &p), -ENODEV);
	CHECK_EQ(tux3_probe("/nonexistent/probe", &p), -ENOENT);
	/* a file shorter than 8 KiB holding a real superblock's bytes */
	CHECK(scratch_image(head, 6000) != NULL);
	CHECK_EQ(tux3_probe(scratch_path(), &p), 0);
}

/* Random damage to the first 8 KiB: bytes, runs and whole sectors, in
 * the copy, the primary's base fields and the record.  TUX3_PROBE_FUZZ
 * sets the number of rounds (default 100000). */
TEST(fuzz_first_8k)
{
	uint8_t good[TUX3_PROBE_HEAD], head[TUX3_PROBE_HEAD];
	const char *env = getenv("TUX3_PROBE_FUZZ");
	unsigned rounds = env ? (unsigned)atoi(env) : 100000;
	unsigned found = 0;
	struct tux3_probe p;

	make_volume(12, TUX3_FEATURE_COMPAT_DEFAULT, "fuzz");
	read_head(good);
	srand(1);
	for (unsigned i = 0; i < rounds; i++) {
		memcpy(head, good, sizeof(head));
		unsigned edits = 1 + (unsigned)rand() % 8;
		for (unsigned e = 0; e < edits; e++) {
			/* aim at the copy or the superblock's first sector
			 * and record, sometimes anywhere */
			unsigned base = (unsigned[]){ SB2_OFFSET, TUX3_SB_OFFSET,
				TUX3_SB_OFFSET + SUPEREXT_OFFSET, 0 }[rand() % 4];
			unsigned span = base ? 1536 : TUX3_PROBE_HEAD;
			unsigned at = base + (unsigned)rand() % span;
			unsigned len = rand() % 4 ? 1 : 1 + (unsigned)rand() % 64;
			for (unsigned k = 0; k < len && at + k < sizeof(head); k++)
				head[at + k] = (uint8_t)rand();
		}
		size_t len = rand() % 16 ? sizeof(head) :
			     (size_t)rand() % sizeof(head);
		int rc = tux3_probe_head(head, len, &p);
		CHECK(rc == 0 || rc == 1);
		if (len == sizeof(head) && tux3_magic_ok(head + TUX3_SB_OFFSET))
			CHECK_EQ(rc, 1);
		if (rc == 1) {
			found++;
			/* an identity is this volume's, whatever the damage
			 * left; a CRC forged by chance would show here */
			CHECK(!p.id.present || !memcmp(p.id.uuid, test_uuid, 16));
			CHECK(p.super == TUX3_PROBE_PRIMARY ||
			      p.super == TUX3_PROBE_SECONDARY);
		}
	}
	CHECK(found > 0);
}

int main(void)
{
	return run_tests("probe");
}

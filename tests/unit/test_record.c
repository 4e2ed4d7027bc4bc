/*
 * The write recorder (common/io/record.c) and what the commit path tells it:
 * every write with its data, the flushes around the superblock, and the
 * library's marks, in the order the crash simulator relies on.
 */
#include "fixtures.h"

static const char *make_volume(unsigned bits, uint64_t bytes)
{
	return scratch_volume(bits, bytes, 0);
}

/* index of the next event of a kind (and mark) from i, or count */
static size_t next(const struct recorder *r, size_t i, unsigned kind,
		   unsigned mark)
{
	for (; i < r->count; i++)
		if (r->ev[i].kind == kind &&
		    (kind != REC_MARK || r->ev[i].mark == mark))
			return i;
	return r->count;
}

TEST(events_and_data)
{
	struct recorder *r = rec_new();
	CHECK(r);
	uint8_t buf[100];
	memset(buf, 0x5a, sizeof(buf));
	rec_write(r, 4096, buf, sizeof(buf), false);
	buf[0] = 1;	/* the recorder keeps its own copy */
	rec_flush(r);
	rec_mark(r, REC_MARK_SUPER, 0);
	rec_mark(r, REC_MARK_COMMIT, 0);
	rec_mark(r, REC_MARK_OP, 7);
	rec_write(r, 0, buf, 1, true);
	CHECK_EQ(r->err, 0);
	CHECK_EQ(r->count, 6);
	CHECK_EQ(r->ev[0].kind, REC_WRITE);
	CHECK_EQ(r->ev[0].off, 4096);
	CHECK_EQ(r->ev[0].len, 100);
	CHECK_EQ(r->ev[0].data[0], 0x5a);
	CHECK_EQ(r->ev[1].kind, REC_FLUSH);
	CHECK_EQ(r->ev[2].seq, 1);	/* the delta being committed */
	CHECK_EQ(r->ev[3].seq, 1);	/* committed */
	CHECK_EQ(r->commits, 1);
	CHECK_EQ(r->ev[4].arg, 7);
	CHECK_EQ(r->ev[4].seq, 1);
	CHECK_EQ(r->ev[5].kind, REC_FUA);
	CHECK_EQ(r->bytes, 101);
	CHECK(!strcmp(rec_mark_name(REC_MARK_FSYNC), "fsync"));
	rec_reset(r);
	CHECK_EQ(r->count, 0);
	CHECK_EQ(r->commits, 0);
	rec_free(r);
}

/* A commit: the delta's writes, a flush, the superblock (the commit
 * point) marked just before it, a flush, then "committed". */
static void commit_order(unsigned bits)
{
	const char *path = make_volume(bits, 16 << 20);
	struct tux3_volume *vol = NULL;
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDWR, &vol), 0);
	struct recorder *r = rec_new();
	vol->dev.rec = r;
	tux3_ino_t ino;
	static uint8_t data[20000];
	memset(data, 7, sizeof(data));
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "f", 1, 0644, 0, 0, &ino), 0);
	CHECK_EQ(tux3_write(vol, ino, data, sizeof(data), 0), sizeof(data));
	CHECK_EQ(tux3_sync(vol), 0);
	CHECK_EQ(tux3_unify(vol), 0);
	vol->dev.rec = NULL;
	CHECK_EQ(tux3_umount(vol), 0);
	CHECK_EQ(r->err, 0);
	CHECK_EQ(r->commits, 2);
	/* the file data went out when it was written, before any flush */
	size_t f = next(r, 0, REC_FLUSH, 0);
	uint64_t data_bytes = 0;
	for (size_t i = 0; i < f; i++)
		for (uint32_t k = 0; r->ev[i].kind == REC_WRITE &&
		     r->ev[i].data[0] == 7 && k < r->ev[i].len; k++)
			data_bytes += r->ev[i].data[k] == 7;
	CHECK(data_bytes >= sizeof(data));
	size_t at = 0;
	for (unsigned d = 1; d <= 2; d++) {
		size_t sup = next(r, at, REC_MARK, REC_MARK_SUPER);
		CHECK(sup < r->count);
		CHECK_EQ(r->ev[sup].seq, d);
		CHECK(sup > 0 && r->ev[sup - 1].kind == REC_FLUSH);
		CHECK_EQ(r->ev[sup + 1].kind, REC_WRITE);
		CHECK_EQ(r->ev[sup + 1].off, TUX3_SB_OFFSET);
		CHECK_EQ(r->ev[sup + 1].len, TUX3_SB_LEN);
		CHECK_EQ(r->ev[sup + 2].kind, REC_FLUSH);
		CHECK_EQ(r->ev[sup + 3].kind, REC_MARK);
		CHECK_EQ(r->ev[sup + 3].mark, REC_MARK_COMMIT);
		CHECK_EQ(r->ev[sup + 3].seq, d);
		at = sup + 4;
	}
	/* the second delta unified */
	size_t u = next(r, 0, REC_MARK, REC_MARK_UNIFY);
	CHECK(u < r->count);
	CHECK_EQ(r->ev[u].seq, 2);
	rec_free(r);
}

TEST(commit_order_4k) { commit_order(12); }
TEST(commit_order_512) { commit_order(9); }

/* Without a recorder nothing is kept (and nothing breaks). */
TEST(no_recorder)
{
	const char *path = make_volume(12, 16 << 20);
	struct tux3_volume *vol = NULL;
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDWR, &vol), 0);
	CHECK(vol->dev.rec == NULL);
	tux3_ino_t ino;
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "f", 1, 0644, 0, 0, &ino), 0);
	CHECK_EQ(tux3_umount(vol), 0);
}

int main(void)
{
	return run_tests("record");
}

/* Layer: overlay.c and blockset.c -- the replay overlay of bnode images
 * and the block set used to refuse cycles. */
#include "harness.h"
#include "internal.h"

TEST(overlay_empty)
{
	struct overlay ov = { 0 };
	bool dropped = true;
	CHECK(overlay_find(&ov, 5, &dropped) == NULL);
	CHECK(!dropped);
	CHECK(overlay_find(&ov, 5, NULL) == NULL);
	overlay_drop(&ov, 5);	/* nothing to drop: no-op */
	CHECK(overlay_find(&ov, 5, &dropped) == NULL);
	CHECK(!dropped);
	overlay_free(&ov);
}

TEST(overlay_put_find)
{
	struct overlay ov = { 0 };
	uint8_t *d, *d2;
	CHECK_EQ(overlay_put(&ov, 0, 4096, &d), -EINVAL);
	CHECK_EQ(overlay_put(&ov, 10, 4096, &d), 0);
	CHECK(d);
	for (unsigned i = 0; i < 4096; i++)
		CHECK_EQ(d[i], 0);	/* zero-filled */
	memset(d, 0x5a, 4096);
	bool dropped = true;
	CHECK(overlay_find(&ov, 10, &dropped) == d);
	CHECK(!dropped);
	/* putting again returns the same image, contents kept */
	CHECK_EQ(overlay_put(&ov, 10, 4096, &d2), 0);
	CHECK(d2 == d);
	CHECK_EQ(d2[4095], 0x5a);
	CHECK_EQ(ov.count, 1);
	CHECK(overlay_find(&ov, 11, NULL) == NULL);
	CHECK(overlay_find(&ov, 9, NULL) == NULL);
	overlay_free(&ov);
	CHECK_EQ(ov.count, 0);
	CHECK_EQ(ov.cap, 0);
	CHECK(ov.ents == NULL);
}

TEST(overlay_drop_and_revive)
{
	struct overlay ov = { 0 };
	uint8_t *d;
	bool dropped;
	CHECK_EQ(overlay_put(&ov, 5, 512, &d), 0);
	memset(d, 1, 512);
	CHECK_EQ(overlay_put(&ov, 6, 512, &d), 0);
	overlay_drop(&ov, 5);
	CHECK(overlay_find(&ov, 5, &dropped) == NULL);
	CHECK(dropped);			/* known, and dropped (BNODE_FREE) */
	CHECK(overlay_find(&ov, 6, &dropped) != NULL);
	CHECK(!dropped);
	/* a dropped block can get a fresh image again */
	CHECK_EQ(overlay_put(&ov, 5, 512, &d), 0);
	CHECK_EQ(d[0], 0);
	CHECK(overlay_find(&ov, 5, &dropped) == d);
	CHECK(!dropped);
	CHECK_EQ(ov.count, 2);
	overlay_drop(&ov, 6);
	overlay_free(&ov);	/* frees dropped and live entries alike */
}

TEST(overlay_growth)
{
	struct overlay ov = { 0 };
	const unsigned n = 3000;
	for (unsigned i = 1; i <= n; i++) {
		uint8_t *d;
		/* spread and clustered block numbers */
		uint64_t b = i % 2 ? i : (uint64_t)i << 30;
		CHECK_EQ(overlay_put(&ov, b, 16, &d), 0);
		put_be64(d, b);
		put_be32(d + 8, i);
	}
	CHECK_EQ(ov.count, n);
	CHECK((ov.cap & (ov.cap - 1)) == 0);
	CHECK(ov.count * 2 <= ov.cap);
	for (unsigned i = 1; i <= n; i++) {
		uint64_t b = i % 2 ? i : (uint64_t)i << 30;
		const uint8_t *d = overlay_find(&ov, b, NULL);
		CHECK(d);
		CHECK(be64(d) == b);
		CHECK_EQ(be32(d + 8), i);
	}
	CHECK(overlay_find(&ov, n + 2, NULL) == NULL);
	CHECK(overlay_find(&ov, TUX3_MAX_BLOCK, NULL) == NULL);
	overlay_free(&ov);
}

TEST(blockset_basic)
{
	struct blockset s = { 0 };
	CHECK(!blockset_has(&s, 0));
	CHECK(!blockset_has(&s, 7));
	CHECK_EQ(blockset_add(&s, 7), 1);
	CHECK_EQ(blockset_add(&s, 7), 0);
	CHECK(blockset_has(&s, 7));
	CHECK(!blockset_has(&s, 8));
	/* block 0 is a value like any other (0 marks empty slots inside) */
	CHECK(!blockset_has(&s, 0));
	CHECK_EQ(blockset_add(&s, 0), 1);
	CHECK(blockset_has(&s, 0));
	CHECK_EQ(blockset_add(&s, 0), 0);
	CHECK_EQ(blockset_add(&s, TUX3_MAX_BLOCK), 1);
	CHECK(blockset_has(&s, TUX3_MAX_BLOCK));
	/* only 48-bit block numbers are members */
	CHECK_EQ(blockset_add(&s, TUX3_KEY_LIMIT), -ERANGE);
	CHECK_EQ(blockset_add(&s, UINT64_MAX), -ERANGE);
	CHECK(!blockset_has(&s, UINT64_MAX));
	CHECK_EQ(s.count, 3);
	blockset_free(&s);
	CHECK_EQ(s.count, 0);
	CHECK(s.slots == NULL);
	CHECK(!blockset_has(&s, 7));
}

TEST(blockset_growth)
{
	struct blockset s = { 0 };
	const uint64_t n = 20000;
	for (uint64_t i = 0; i < n; i++)
		CHECK_EQ(blockset_add(&s, i * 3), 1);
	CHECK_EQ(s.count, n);
	CHECK((s.cap & (s.cap - 1)) == 0);
	CHECK(s.count * 2 <= s.cap);
	for (uint64_t i = 0; i < n * 3; i++)
		CHECK_EQ(blockset_has(&s, i), i % 3 == 0);
	for (uint64_t i = 0; i < n; i += 97)
		CHECK_EQ(blockset_add(&s, i * 3), 0);
	CHECK_EQ(s.count, n);
	blockset_free(&s);
}

/* overlay_forget removes an entry as if never put: every other entry is
 * still found (the probe chains it sat in are closed up), dropped
 * entries stay dropped, and the count follows. */
TEST(overlay_forget)
{
	struct overlay ov = { 0 };
	const uint64_t n = 500;
	uint8_t *d;
	for (uint64_t b = 1; b <= n; b++) {
		CHECK_EQ(overlay_put(&ov, b, 16, &d), 0);
		d[0] = (uint8_t)b;
	}
	overlay_drop(&ov, 7);
	for (uint64_t b = 2; b <= n; b += 3)
		overlay_forget(&ov, b);
	overlay_forget(&ov, n + 10);	/* absent: nothing happens */
	uint64_t left = 0;
	for (uint64_t b = 1; b <= n; b++) {
		bool dropped;
		d = overlay_edit(&ov, b, &dropped);
		if (b % 3 == 2) {
			CHECK(d == NULL);
			CHECK(!dropped);
			continue;
		}
		left++;
		if (b == 7) {
			CHECK(d == NULL);
			CHECK(dropped);
		} else {
			CHECK(d != NULL);
			CHECK_EQ(d[0], (uint8_t)b);
		}
	}
	CHECK_EQ(ov.count, left);
	/* a forgotten block can be put again, fresh */
	CHECK_EQ(overlay_put(&ov, 2, 16, &d), 0);
	CHECK_EQ(d[0], 0);
	overlay_free(&ov);
}

int main(void)
{
	return run_tests("overlay");
}

/*
 * Layer: io/node_memo.c, the memo of bnodes found valid, and the hooks
 * that forget a block when its bytes change: the device's writes, the
 * overlay's put, edit, drop and forget.  Last, the point of it all: a
 * probe that follows a memoized root still refuses that root once it
 * is damaged through the device.
 */
#include "fixtures.h"

TEST(memo_remembers_block_and_range)
{
	struct node_memo m = { .blockbits = 12 };
	CHECK(!node_memo_has(&m, 10, 0, 100, NODE_MEMO_BNODE));
	node_memo_add(&m, 10, 0, 100, NODE_MEMO_BNODE);
	CHECK(node_memo_has(&m, 10, 0, 100, NODE_MEMO_BNODE));
	CHECK(!node_memo_has(&m, 10, 0, 99, NODE_MEMO_BNODE));	/* another range */
	CHECK(!node_memo_has(&m, 10, 1, 100, NODE_MEMO_BNODE));
	CHECK(!node_memo_has(&m, 11, 0, 100, NODE_MEMO_BNODE));
	node_memo_add(&m, 10, 5, 50, NODE_MEMO_BNODE);		/* the range moved */
	CHECK(node_memo_has(&m, 10, 5, 50, NODE_MEMO_BNODE));
	CHECK(!node_memo_has(&m, 10, 0, 100, NODE_MEMO_BNODE));
}

/* A block remembered as checked as one kind is not taken as checked as
 * another: a cross-linked tree reaching one block as a bnode and as a
 * leaf, or as two kinds of leaf, has it checked as each. */
TEST(memo_remembers_the_kind)
{
	struct node_memo m = { .blockbits = 12 };
	node_memo_add(&m, 10, 0, 100, NODE_MEMO_BNODE);
	CHECK(!node_memo_has(&m, 10, 0, 100, (uintptr_t)&dtree_ops));
	node_memo_add(&m, 10, 0, 100, (uintptr_t)&dtree_ops);
	CHECK(node_memo_has(&m, 10, 0, 100, (uintptr_t)&dtree_ops));
	CHECK(!node_memo_has(&m, 10, 0, 100, NODE_MEMO_BNODE));
	CHECK(!node_memo_has(&m, 10, 0, 100, (uintptr_t)&itree_ops));
}

TEST(memo_forgets_what_is_written)
{
	struct node_memo m = { .blockbits = 12 };
	for (uint64_t b = 100; b < 110; b++)
		node_memo_add(&m, b, b, b + 1, NODE_MEMO_BNODE);
	node_memo_forget(&m, 103, 2);
	for (uint64_t b = 100; b < 110; b++)
		CHECK_EQ(node_memo_has(&m, b, b, b + 1, NODE_MEMO_BNODE), b < 103 || b > 104);
	/* bytes: the last byte of block 100 to the first of block 102 */
	node_memo_forget_bytes(&m, (101 << 12) - 1, 4096 + 2);
	CHECK(!node_memo_has(&m, 100, 100, 101, NODE_MEMO_BNODE));
	CHECK(!node_memo_has(&m, 101, 101, 102, NODE_MEMO_BNODE));
	CHECK(!node_memo_has(&m, 102, 102, 103, NODE_MEMO_BNODE));
	CHECK(node_memo_has(&m, 105, 105, 106, NODE_MEMO_BNODE));
	/* a range wider than the memo: every slot looked at */
	node_memo_forget(&m, 0, (uint64_t)NODE_MEMO_SLOTS * 1000);
	for (uint64_t b = 100; b < 110; b++)
		CHECK(!node_memo_has(&m, b, b, b + 1, NODE_MEMO_BNODE));
	node_memo_add(&m, 7, 0, 1, NODE_MEMO_BNODE);
	node_memo_forget(&m, 8, (uint64_t)NODE_MEMO_SLOTS * 2);
	CHECK(node_memo_has(&m, 7, 0, 1, NODE_MEMO_BNODE));	/* below the range */
	node_memo_clear(&m);
	CHECK(!node_memo_has(&m, 7, 0, 1, NODE_MEMO_BNODE));
	node_memo_forget(NULL, 1, 1);		/* no memo: nothing */
	node_memo_forget_bytes(NULL, 0, 1);
}

TEST(memo_forgets_overlay_changes)
{
	struct node_memo m = { .blockbits = 12 };
	struct overlay ov = { .memo = &m };
	uint8_t *d;
	CHECK_EQ(overlay_put(&ov, 20, 4096, &d), 0);
	node_memo_add(&m, 20, 0, 1, NODE_MEMO_BNODE);
	CHECK(overlay_find(&ov, 20, NULL) == d);
	CHECK(node_memo_has(&m, 20, 0, 1, NODE_MEMO_BNODE));	/* reading keeps it */
	CHECK(overlay_edit(&ov, 20, NULL) == d);
	CHECK(!node_memo_has(&m, 20, 0, 1, NODE_MEMO_BNODE));	/* an edit forgets */
	node_memo_add(&m, 20, 0, 1, NODE_MEMO_BNODE);
	CHECK_EQ(overlay_put(&ov, 20, 4096, &d), 0);
	CHECK(!node_memo_has(&m, 20, 0, 1, NODE_MEMO_BNODE));
	node_memo_add(&m, 20, 0, 1, NODE_MEMO_BNODE);
	overlay_drop(&ov, 20);
	CHECK(!node_memo_has(&m, 20, 0, 1, NODE_MEMO_BNODE));
	CHECK_EQ(overlay_put(&ov, 21, 4096, &d), 0);
	node_memo_add(&m, 21, 0, 1, NODE_MEMO_BNODE);
	overlay_forget(&ov, 21);
	CHECK(!node_memo_has(&m, 21, 0, 1, NODE_MEMO_BNODE));
	node_memo_add(&m, 22, 0, 1, NODE_MEMO_BNODE);
	overlay_free(&ov);
	CHECK(ov.memo == &m);			/* still connected */
	CHECK(!node_memo_has(&m, 22, 0, 1, NODE_MEMO_BNODE));
}

TEST(probe_refuses_a_memoized_root_damaged_through_the_device)
{
	const char *path = scratch_volume(9, 16 << 20,
					  TUX3_FEATURE_COMPAT_DEFAULT);
	struct tux3_volume *vol;
	char name[32];
	tux3_ino_t ino = 0;
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDWR, &vol), 0);
	for (unsigned i = 0; i < 600; i++) {
		snprintf(name, sizeof(name), "f%u", i);
		CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, name, strlen(name),
				     0100644, 0, 0, &ino), 0);
	}
	CHECK_EQ(tux3_unify(vol), 0);	/* the bnodes on disk, none in memory */
	CHECK_EQ(tux3_umount(vol), 0);

	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDWR, &vol), 0);
	CHECK(vol->iroot.depth >= 2);
	uint64_t root = vol->iroot.block;
	CHECK(overlay_find(&vol->overlay, root, NULL) == NULL);
	struct tux3_stat st;
	CHECK_EQ(tux3_stat(vol, ino, &st), 0);
	CHECK(node_memo_has(&vol->memo, root, 0, TUX3_KEY_LIMIT, NODE_MEMO_BNODE));
	CHECK_EQ(tux3_stat(vol, ino, &st), 0);	/* through the memo */

	/* a bad magic in the root, written through the library's device */
	uint8_t *b = read_vol_block(vol, root);
	put_be16(b, 0x1234);
	CHECK_EQ(dev_pwrite(&vol->dev, b, vol->blocksize,
			    root << vol->blockbits), 0);
	free(b);
	CHECK(!node_memo_has(&vol->memo, root, 0, TUX3_KEY_LIMIT, NODE_MEMO_BNODE));
	tux3_clear_error(vol);
	CHECK_EQ(tux3_stat(vol, ino, &st), -EUCLEAN);
	CHECK_EQ(vol->error.block, root);
	tux3_close(vol);
}

/* The same for a leaf: the inode table leaf a stat memoized is refused
 * once a bad magic is written into it through the device. */
static bool memo_holds(const struct node_memo *m, uint64_t block,
		       uintptr_t kind)
{
	for (unsigned i = 0; i < NODE_MEMO_SLOTS; i++)
		if (m->ent[i].block == block && m->ent[i].kind == kind)
			return true;
	return false;
}

TEST(probe_refuses_a_memoized_leaf_damaged_through_the_device)
{
	const char *path = scratch_volume(12, 16 << 20,
					  TUX3_FEATURE_COMPAT_DEFAULT);
	struct tux3_volume *vol;
	tux3_ino_t ino = 0;
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDWR, &vol), 0);
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "f", 1, 0100644, 0, 0, &ino),
		 0);
	CHECK_EQ(tux3_umount(vol), 0);

	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDWR, &vol), 0);
	struct inode inode;
	CHECK_EQ(inode_load(vol, ino, &inode), 0);
	uint64_t leaf = inode.leafblock;
	inode_free(&inode);
	struct tux3_stat st;
	CHECK_EQ(tux3_stat(vol, ino, &st), 0);
	CHECK(memo_holds(&vol->memo, leaf, (uintptr_t)&itree_ops));
	uint8_t *b = read_vol_block(vol, leaf);
	put_be16(b, 0x1234);
	CHECK_EQ(dev_pwrite(&vol->dev, b, vol->blocksize,
			    leaf << vol->blockbits), 0);
	free(b);
	CHECK(!memo_holds(&vol->memo, leaf, (uintptr_t)&itree_ops));
	tux3_clear_error(vol);
	CHECK_EQ(tux3_stat(vol, ino, &st), -EUCLEAN);
	CHECK_EQ(vol->error.block, leaf);
	tux3_close(vol);
}

int main(void)
{
	return run_tests("node_memo");
}

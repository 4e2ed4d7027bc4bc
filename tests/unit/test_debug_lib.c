/* Layer: the library calls added for tux3debug (issue 6):
 * tux3_walk_inode (walk.c) visits one inode exactly as tux3_walk does;
 * tux3_replay_steps (replay_steps.c) explains the replay done at open;
 * tux3_set_identity (superext.c) changes label and UUID, committed and
 * sealed by the next delta. */
#include "fixtures.h"
#include "tux3_fields.h"
#include "tux3_walk.h"

/* ---- tux3_walk_inode ---- */

struct tally {
	tux3_ino_t only;	/* 0: every inode */
	unsigned inodes, nodes, extents, dirents;
	uint64_t blocks;	/* sum of data extents */
	uint64_t nodesum;	/* sum of node block numbers */
};

static int t_inode(void *ctx, const struct tux3_stat *st, tux3_block_t leaf,
		   unsigned len)
{
	struct tally *t = ctx;
	(void)leaf; (void)len;
	if (t->only && st->ino != t->only)
		return 1;
	t->inodes++;
	return 0;
}

static int t_node(void *ctx, const struct tux3_node_info *n)
{
	struct tally *t = ctx;
	if (n->tree == TUX3_TREE_DTREE && (!t->only || n->owner == t->only)) {
		t->nodes++;
		t->nodesum += n->block;
	}
	return 0;
}

static int t_extent(void *ctx, tux3_ino_t ino, uint64_t logical,
		    tux3_block_t physical, uint64_t count, uint32_t version,
		    tux3_block_t leaf)
{
	struct tally *t = ctx;
	(void)logical; (void)version; (void)leaf;
	if ((!t->only || ino == t->only) && physical) {
		t->extents++;
		t->blocks += count;
	}
	return 0;
}

static int t_dirent(void *ctx, tux3_ino_t dir, const char *name, unsigned len,
		    tux3_ino_t ino, unsigned type, uint64_t pos,
		    tux3_block_t block)
{
	struct tally *t = ctx;
	(void)name; (void)len; (void)ino; (void)type; (void)pos; (void)block;
	if (!t->only || dir == t->only)
		t->dirents++;
	return 0;
}

static void same_as_walk(const char *image, tux3_ino_t ino)
{
	struct tux3_volume *vol = open_oracle(image);
	struct tux3_walk_ops ops = { .inode = t_inode, .bnode = t_node,
				     .leaf = t_node, .extent = t_extent,
				     .dirent = t_dirent };
	struct tally whole = { .only = ino }, one = { .only = ino };
	CHECK_EQ(tux3_walk(vol, &ops, &whole), 0);
	CHECK_EQ(tux3_walk_inode(vol, ino, &ops, &one), 0);
	CHECK_EQ(whole.inodes, 1);
	CHECK_EQ(one.inodes, 1);
	CHECK_EQ(one.nodes, whole.nodes);
	CHECK_EQ(one.nodesum, whole.nodesum);
	CHECK_EQ(one.extents, whole.extents);
	CHECK_EQ(one.blocks, whole.blocks);
	CHECK_EQ(one.dirents, whole.dirents);
	tux3_close(vol);
}

TEST(walk_inode_dtree_file)
{
	/* the orphan's data: a dleaf with 12 extents, 49 blocks */
	struct tux3_volume *vol = open_oracle("orphan");
	struct tux3_walk_ops ops = { .inode = t_inode, .bnode = t_node,
				     .leaf = t_node, .extent = t_extent };
	struct tally t = { 0 };
	CHECK_EQ(tux3_walk_inode(vol, 65, &ops, &t), 0);
	CHECK_EQ(t.nodes, 1);
	CHECK_EQ(t.extents, 12);
	CHECK_EQ(t.blocks, 49);
	tux3_close(vol);
	same_as_walk("orphan", 65);
}

TEST(walk_inode_directory_and_direct)
{
	same_as_walk("small-delta", TUX3_ROOT_INO);
	same_as_walk("small-delta", 65);
	same_as_walk("tree-fuse", TUX3_ROOT_INO);
}

TEST(walk_inode_skip_and_missing)
{
	struct tux3_volume *vol = open_oracle("orphan");
	struct tux3_walk_ops ops = { .inode = t_inode, .extent = t_extent };
	struct tally t = { .only = 1 };	/* another inode: skipped */
	CHECK_EQ(tux3_walk_inode(vol, 65, &ops, &t), 0);
	CHECK_EQ(t.inodes, 0);
	CHECK_EQ(t.extents, 0);
	t = (struct tally){ 0 };
	CHECK_EQ(tux3_walk_inode(vol, 9999, &ops, &t), -ENOENT);
	CHECK_EQ(tux3_last_error(vol)->err, -ENOENT);	/* pending */
	CHECK_EQ(t.inodes, 0);
	tux3_close(vol);
}

/* ---- tux3_replay_steps ---- */

struct steps {
	unsigned count[3], orphan_adds, bad;
	int64_t net;		/* blocks set minus blocks cleared */
	unsigned last_stage;
};

static int s_step(void *ctx, const struct tux3_replay_step *s)
{
	struct steps *st = ctx;
	if (s->stage > 2 || s->stage < st->last_stage || !s->change[0])
		st->bad++;
	st->last_stage = s->stage;
	st->count[s->stage < 3 ? s->stage : 0]++;
	if (strstr(s->change, "orphans: inode 65 added"))
		st->orphan_adds++;
	if (s->stage == 2)
		st->net += s->bits * (int64_t)s->count;
	return 0;
}

TEST(replay_steps_orphan)
{
	struct tux3_volume *vol = open_oracle("orphan");
	struct tux3_super_info si;
	struct steps st = { { 0 }, 0, 0, 0, 0 };
	tux3_super_info(vol, &si);
	CHECK_EQ(tux3_replay_steps(vol, 7, s_step, &st), 0);
	CHECK_EQ(st.bad, 0);
	CHECK_EQ(st.count[0], si.logcount);
	CHECK(st.count[2] > 0);
	CHECK_EQ(st.orphan_adds, 1);
	/* one stage at a time gives the same steps */
	struct steps one = { { 0 }, 0, 0, 0, 0 };
	CHECK_EQ(tux3_replay_steps(vol, 4, s_step, &one), 0);
	CHECK_EQ(one.count[2], st.count[2]);
	CHECK_EQ(one.count[0], 0);
	CHECK_EQ(one.net, st.net);
	tux3_close(vol);
}

TEST(replay_steps_small_delta)
{
	/* every step well formed, stages in order, some bnode or bitmap
	 * change */
	struct tux3_volume *vol = open_oracle("small-delta");
	struct steps st = { { 0 }, 0, 0, 0, 0 };
	CHECK_EQ(tux3_replay_steps(vol, 7, s_step, &st), 0);
	CHECK_EQ(st.bad, 0);
	CHECK(st.count[1] + st.count[2] > 0);
	tux3_close(vol);
}

TEST(replay_steps_refused_without_replay)
{
	struct tux3_volume *vol = open_oracle_mode("small-delta",
						   TUX3_OPEN_NOREPLAY);
	struct steps st = { { 0 }, 0, 0, 0, 0 };
	CHECK_EQ(tux3_replay_steps(vol, 7, s_step, &st), -EINVAL);
	CHECK_EQ(st.count[0] + st.count[1] + st.count[2], 0);
	tux3_close(vol);
}

/* ---- tux3_set_identity ---- */

TEST(set_identity_creates_and_seals)
{
	const char *path = scratch_copy("empty-4k");	/* no record */
	struct tux3_volume *vol = oracle_open_path(path, TUX3_OPEN_RDONLY);
	struct tux3_identity id;
	uint8_t uuid[16];
	for (int i = 0; i < 16; i++)
		uuid[i] = (uint8_t)(0xa0 + i);
	CHECK_EQ(tux3_set_identity(vol, "x", NULL), -EROFS);
	tux3_close(vol);

	vol = oracle_open_path(path, TUX3_OPEN_RDWR);
	tux3_identity(vol, &id);
	CHECK(!id.present);
	char big[TUX3_LABEL_MAX + 2];
	memset(big, 'l', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	CHECK_EQ(tux3_set_identity(vol, big, NULL), -ERANGE);
	tux3_clear_error(vol);
	CHECK_EQ(tux3_set_identity(vol, "data disk", uuid), 0);
	CHECK_EQ(tux3_sync(vol), 0);
	tux3_identity(vol, &id);
	CHECK(id.present && id.sealed);
	CHECK_EQ(tux3_umount(vol), 0);

	vol = oracle_open_path(path, TUX3_OPEN_RDONLY);
	tux3_identity(vol, &id);
	CHECK(id.present);
	CHECK(id.sealed);
	CHECK(!strcmp(id.label, "data disk"));
	CHECK(!memcmp(id.uuid, uuid, 16));
	CHECK_EQ(id.mkfs_time_ns, 0);
	CHECK_EQ(id.compat | id.ro_compat | id.incompat, 0);
	tux3_close(vol);

	/* a label of exactly 64 bytes, then the UUID alone: both kept */
	vol = oracle_open_path(path, TUX3_OPEN_RDWR);
	big[TUX3_LABEL_MAX] = 0;
	CHECK_EQ(tux3_set_identity(vol, big, NULL), 0);
	memset(uuid, 0, sizeof(uuid));
	CHECK_EQ(tux3_set_identity(vol, NULL, uuid), 0);
	CHECK_EQ(tux3_umount(vol), 0);
	vol = oracle_open_path(path, TUX3_OPEN_RDONLY);
	tux3_identity(vol, &id);
	CHECK_EQ(strlen(id.label), TUX3_LABEL_MAX);
	CHECK(!memcmp(id.uuid, uuid, 16));
	CHECK(id.sealed);
	tux3_close(vol);
}

TEST(set_identity_refuses_damaged_record)
{
	const char *path = scratch_copy("empty-4k");
	struct tux3_volume *vol = oracle_open_path(path, TUX3_OPEN_RDWR);
	uint8_t junk[16];
	memset(junk, 0x5a, sizeof(junk));
	/* bytes in the extension sector without its magic: a damaged
	 * record, which the open treats as absent (with a warning) */
	CHECK_EQ(tux3_write_raw(vol, 4096 + 512 + 40, junk, sizeof(junk)), 0);
	tux3_close(vol);
	vol = oracle_open_path(path, TUX3_OPEN_RDWR);
	CHECK(tux3_warning_count(vol) > 0);
	CHECK_EQ(tux3_set_identity(vol, "x", NULL), -EUCLEAN);
	CHECK(strstr(tux3_last_error(vol)->what, "fsck") != NULL);
	tux3_close(vol);
}

int main(void)
{
	return run_tests("debug_lib");
}

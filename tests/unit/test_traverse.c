/*
 * Layer: btree.c's traversal and the set of nodes it has reached, which
 * becomes a bitmap of the volume's blocks past 4,096 nodes: an inode
 * table of more leaves than that is walked whole and clean, and a node
 * reached a second time after the switch is still refused (a bnode
 * entry pointed back at the first leaf).
 */
#include "fixtures.h"

struct seen_count {
	unsigned leaves, bad;
	uint64_t first_leaf;
};

static int count_leaf(void *ctx, struct btree *bt, uint64_t blocknr,
		      const uint8_t *buf, uint64_t lo, uint64_t hi)
{
	struct seen_count *c = ctx;
	(void)bt; (void)buf; (void)lo; (void)hi;
	if (!c->leaves++)
		c->first_leaf = blocknr;
	return 0;
}

static int count_bad(void *ctx, struct btree *bt, int level,
		     uint64_t blocknr, int err)
{
	struct seen_count *c = ctx;
	(void)level; (void)blocknr; (void)err;
	c->bad++;
	tux3_clear_error(bt->vol);
	return 0;
}

static struct seen_count walk_itree(struct tux3_volume *vol)
{
	static const struct btree_visit visit = { .leaf = count_leaf,
						  .bad = count_bad };
	struct seen_count c = { 0 };
	struct btree bt = { .vol = vol, .root = vol->iroot, .ops = &itree_ops };
	btree_traverse(&bt, &visit, &c);
	return c;
}

/* The last bnode of the level above the leaves: its last entry's block. */
static uint64_t last_index_node(struct tux3_volume *vol)
{
	uint64_t b = vol->iroot.block;
	for (unsigned l = 0; l + 2 < vol->iroot.depth; l++) {
		uint8_t *buf = read_vol_block(vol, b);
		b = bnode_child(buf, bnode_count(buf) - 1);
		free(buf);
	}
	return b;
}

TEST(many_nodes_walk_clean_and_twice_is_refused)
{
	const char *path = scratch_volume(9, 64 << 20,
					  TUX3_FEATURE_COMPAT_DEFAULT);
	struct tux3_volume *vol;
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDWR, &vol), 0);
	char name[32];
	tux3_ino_t dir = 0, ino;
	for (unsigned i = 0; i < 30000; i++) {
		if (i % 1000 == 0) {
			snprintf(name, sizeof(name), "d%u", i / 1000);
			CHECK_EQ(tux3_mkdir(vol, TUX3_ROOT_INO, name,
					    strlen(name), 040755, 0, 0, &dir),
				 0);
		}
		snprintf(name, sizeof(name), "f%u", i);
		CHECK_EQ(tux3_create(vol, dir, name, strlen(name), 0100644,
				     0, 0, &ino), 0);
	}
	CHECK_EQ(tux3_umount(vol), 0);

	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDONLY, &vol), 0);
	struct seen_count c = walk_itree(vol);
	printf("  %u inode-table leaves, depth %u\n", c.leaves,
	       vol->iroot.depth);
	CHECK(c.leaves > 4096);	/* past the switch to the bitmap */
	CHECK_EQ(c.bad, 0);
	CHECK(vol->iroot.depth >= 3);
	uint64_t node = last_index_node(vol);
	CHECK_EQ(tux3_umount(vol), 0);

	/* the last entry of the last index node names the first leaf */
	int fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	uint8_t b[512];
	CHECK(pread(fd, b, sizeof(b), (off_t)(node << 9)) == sizeof(b));
	unsigned last = bnode_count(b) - 1;
	put_be64(b + BNODE_HEADER + BNODE_ENTRY * last + 8, c.first_leaf);
	CHECK(pwrite(fd, b, sizeof(b), (off_t)(node << 9)) == sizeof(b));
	close(fd);

	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDONLY, &vol), 0);
	struct seen_count d = walk_itree(vol);
	CHECK_EQ(d.bad, 1);
	CHECK_EQ(d.leaves, c.leaves - 1);
	CHECK_EQ(tux3_umount(vol), 0);
}

/* A traversal asks for a bnode's children before it reads them, once
 * reads were seen waiting for the device: one hint per run of adjacent
 * children, never more than one per leaf; none on a warm cache. */
TEST(traversal_reads_ahead_only_when_cold)
{
	const char *path = scratch_volume(9, 16 << 20,
					  TUX3_FEATURE_COMPAT_DEFAULT);
	struct tux3_volume *vol;
	char name[32];
	tux3_ino_t ino;
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDWR, &vol), 0);
	for (unsigned i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "f%u", i);
		CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, name, strlen(name),
				     0100644, 0, 0, &ino), 0);
	}
	CHECK_EQ(tux3_umount(vol), 0);

	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDONLY, &vol), 0);
	CHECK(vol->iroot.depth >= 2);
	vol->dev.readahead_on = false;	/* as on a warm cache */
	struct seen_count warm = walk_itree(vol);
	CHECK_EQ(vol->dev.readaheads, 0);
	vol->dev.readahead_on = true;	/* as once reads waited */
	struct seen_count cold = walk_itree(vol);
	printf("  %" PRIu64 " hints for %u leaves\n", vol->dev.readaheads,
	       cold.leaves);
	CHECK(vol->dev.readaheads > 0);
	CHECK(vol->dev.readaheads <= cold.leaves + vol->iroot.depth);
	CHECK_EQ(cold.leaves, warm.leaves);
	CHECK_EQ(cold.bad, 0);
	/* a second walk (a later fsck pass) finds every block hinted
	 * already, cached or in flight: no hint is asked for again */
	uint64_t first = vol->dev.readaheads;
	struct seen_count again = walk_itree(vol);
	CHECK_EQ(vol->dev.readaheads, first);
	CHECK_EQ(again.leaves, cold.leaves);
	CHECK_EQ(tux3_umount(vol), 0);
}

int main(void)
{
	return run_tests("traverse");
}

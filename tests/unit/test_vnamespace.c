/*
 * Layer: fsck pass 9's snapshot namespaces by what differs
 * (check/fsck_vnamespace.c).  Counted work, not time: the inodes pass 9
 * loads stay flat as snapshots of an unchanged tree grow from 0 to 64,
 * (and pass 5 reads no inode again that no version changed), and grow
 * with the changes, not with files x snapshots, when files are
 * created, rewritten, renamed and removed between snapshots (in the live
 * version and in snapshots, which makes ghosts).  A link count made wrong
 * in one snapshot only is still found there.
 */
#include "fixtures.h"
#include "check/fsck_internal.h"

#define FILES	300

static struct tux3_volume *open_rw(const char *path)
{
	return oracle_open_path(path, TUX3_OPEN_RDWR);
}

static tux3_ino_t dirs[4];

/* FILES files in four directories. */
static const char *tree(void)
{
	const char *path = scratch_volume(12, 64 << 20,
					  TUX3_FEATURE_COMPAT_DEFAULT);
	struct tux3_volume *vol = open_rw(path);
	char name[32];
	for (unsigned d = 0; d < 4; d++) {
		snprintf(name, sizeof(name), "d%u", d);
		CHECK_EQ(tux3_mkdir(vol, TUX3_ROOT_INO, name, strlen(name),
				    040755, 0, 0, &dirs[d]), 0);
	}
	for (unsigned i = 0; i < FILES; i++) {
		tux3_ino_t ino;
		snprintf(name, sizeof(name), "f%u", i);
		CHECK_EQ(tux3_create(vol, dirs[i % 4], name, strlen(name),
				     0100644, 0, 0, &ino), 0);
		CHECK_EQ(tux3_write(vol, ino, name, strlen(name), 0),
			 (long long)strlen(name));
	}
	CHECK_EQ(tux3_umount(vol), 0);
	return path;
}

/* A few changes of every kind in the selected version, round r. */
static void change(struct tux3_volume *vol, unsigned r)
{
	char name[32], to[32];
	tux3_ino_t ino;
	snprintf(name, sizeof(name), "f%u", r % FILES);
	if (!tux3_lookup(vol, dirs[r % 4], name, strlen(name), &ino))
		CHECK_EQ(tux3_write(vol, ino, "changed", 7, 0), 7);
	snprintf(name, sizeof(name), "new%u", r);
	CHECK_EQ(tux3_create(vol, dirs[(r + 1) % 4], name, strlen(name),
			     0100644, 0, 0, &ino), 0);
	snprintf(name, sizeof(name), "f%u", (r + 7) % FILES);
	snprintf(to, sizeof(to), "moved%u", r);
	int err = tux3_rename(vol, dirs[(r + 7) % 4], name, strlen(name),
			      dirs[(r + 2) % 4], to, strlen(to), 0);
	CHECK(!err || err == -ENOENT);	/* gone in an earlier round */
	snprintf(name, sizeof(name), "f%u", (r + 13) % FILES);
	err = tux3_unlink(vol, dirs[(r + 13) % 4], name, strlen(name));
	CHECK(!err || err == -ENOENT);
	tux3_clear_error(vol);
}

/* n snapshots of the live version, each after a round of changes when
 * asked; every fourth round also changes the newest snapshot. */
static void snapshots(const char *path, unsigned n, bool changes)
{
	struct tux3_volume *vol = open_rw(path);
	char name[32];
	for (unsigned i = 0; i < n; i++) {
		if (changes)
			change(vol, 2 * i);
		snprintf(name, sizeof(name), "s%u", i);
		CHECK_EQ(tux3_snapshot_create(vol, name, NULL), 0);
		if (changes && i % 4 == 3) {
			CHECK_EQ(tux3_version_select(vol, name), 0);
			change(vol, 2 * i + 1);
			CHECK_EQ(tux3_version_select(vol, NULL), 0);
		}
	}
	CHECK_EQ(tux3_umount(vol), 0);
}

static struct tux3_fsck_result check(const char *path)
{
	struct tux3_fsck_result res;
	static const struct tux3_fsck_ops ops = {
		.problem = fsck_show_problem,
	};
	char msg[256];
	CHECK_EQ(tux3_fsck_run(path, TUX3_FSCK_CHECK, &ops, NULL, &res, msg,
			       sizeof(msg)), 0);
	return res;
}

/* fsck's result on a fresh tree with n snapshots, which checks clean. */
static struct tux3_fsck_result result_with(unsigned n, bool changes)
{
	const char *path = tree();
	snapshots(path, n, changes);
	struct tux3_fsck_result res = check(path);
	CHECK_EQ(res.found, 0);
	return res;
}

/* Pass 9's inode loads on that volume. */
static uint64_t loads_with(unsigned n, bool changes)
{
	return result_with(n, changes).inode_loads[9];
}

TEST(unchanged_tree_costs_nothing_per_snapshot)
{
	struct tux3_fsck_result r0 = result_with(0, false),
				r16 = result_with(16, false),
				r64 = result_with(64, false);
	uint64_t l0 = r0.inode_loads[9], l16 = r16.inode_loads[9],
		 l64 = r64.inode_loads[9];
	printf("pass 9 inode loads, %u files: %llu, %llu, %llu (0, 16, 64 "
	       "snapshots)\n", FILES, (unsigned long long)l0,
	       (unsigned long long)l16, (unsigned long long)l64);
	/* before: every snapshot's namespace walked, FILES loads each */
	CHECK(l64 <= l0 + 16);
	CHECK(l16 <= l0 + 16);
	/* pass 5 and pass 9 read no inode again that no version changed
	 * (before: pass 5 loaded every inode through its projection, and
	 * pass 9 probed every blob by number, with any snapshot at all) */
	printf("pass 5 inode loads: %llu, %llu; device reads of passes 5 "
	       "and 9: %llu, %llu (0, 64 snapshots)\n",
	       (unsigned long long)r0.inode_loads[5],
	       (unsigned long long)r64.inode_loads[5],
	       (unsigned long long)(r0.device_reads[5] + r0.device_reads[9]),
	       (unsigned long long)(r64.device_reads[5] +
				    r64.device_reads[9]));
	CHECK(r64.inode_loads[5] <= r0.inode_loads[5] + 16);
	/* and pass 9 walks no inode: pass 4 saw none that a version
	 * changed (before: a walk of the whole inode table) */
	printf("pass 9 device reads: %llu, %llu (pass 4: %llu)\n",
	       (unsigned long long)r0.device_reads[9],
	       (unsigned long long)r64.device_reads[9],
	       (unsigned long long)r64.device_reads[4]);
	CHECK(r64.device_reads[9] <= r0.device_reads[9] + 8);
}

TEST(changes_cost_what_they_change)
{
	uint64_t l16 = loads_with(16, true), l64 = loads_with(64, true);
	printf("pass 9 inode loads with changes: %llu, %llu (16, 64 "
	       "snapshots)\n", (unsigned long long)l16,
	       (unsigned long long)l64);
	/* the live version once (~FILES), then a few inodes per change;
	 * files x snapshots would be 64 x FILES */
	CHECK(l64 < 4 * FILES);
	CHECK(l64 - l16 < 48 * 40);
}

TEST(a_problem_in_one_snapshot_is_found)
{
	const char *path = tree();
	snapshots(path, 12, true);
	struct tux3_volume *vol = open_rw(path);
	tux3_ino_t ino;
	CHECK_EQ(tux3_version_select(vol, "s5"), 0);
	CHECK_EQ(tux3_lookup(vol, dirs[3], "f3", 2, &ino), 0);
	CHECK_EQ(fsck_set_nlink(vol, ino, 3), 0);
	CHECK_EQ(tux3_version_select(vol, NULL), 0);
	CHECK_EQ(tux3_umount(vol), 0);
	struct tux3_fsck_result res = check(path);
	CHECK_EQ(res.found, 1);
}

int main(void)
{
	return run_tests("vnamespace");
}

/*
 * The in-memory directory index (common/dir_index.c) against the linear
 * path: the same operations with and without it give the same answers
 * and bit-identical images; in a 20,000-entry directory every lookup,
 * create, unlink and rename reads a constant number of directory blocks
 * (vol->dir_block_reads, counted work, not time); colliding hashes,
 * names of every length 1..255, damaged blocks and the memory bound.
 */
#include "fixtures.h"
#include "tux3_fields.h"

#define ROOT TUX3_ROOT_INO

/* ---- names: slot i, generation g (a rename makes g + 1) ---- */

static const char b62[] =
	"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

static unsigned put_b62(char *p, unsigned v)
{
	char tmp[8];
	unsigned n = 0;
	do {
		tmp[n++] = b62[v % 62];
		v /= 62;
	} while (v);
	for (unsigned i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

/* Unique per (i, g): the digits of i, '~' and those of g when g > 0,
 * then '-' up to a length that runs through 1..255 as i grows. */
static unsigned name_of(char *buf, unsigned i, unsigned g)
{
	unsigned n = put_b62(buf, i);
	if (g) {
		buf[n++] = '~';
		n += put_b62(buf + n, g);
	}
	unsigned want = 1 + (i + g * 97) % 255;
	while (n < want)
		buf[n++] = '-';
	return n;
}

/* ---- the linear path, read directly ---- */

struct find { const char *name; unsigned len; tux3_ino_t ino; };

static int find_one(void *ctx, const struct dirent_info *d)
{
	struct find *f = ctx;
	if (d->name_len != f->len || memcmp(d->name, f->name, f->len))
		return 0;
	f->ino = d->inum;
	return 1;
}

static tux3_ino_t linear_lookup(struct tux3_volume *vol, tux3_ino_t dirino,
				const char *name, unsigned len)
{
	struct inode dir;
	struct find f = { name, len, 0 };
	CHECK_EQ(inode_load_dir(vol, dirino, &dir), 0);
	int r = dir_iterate(vol, &dir, find_one, &f);
	inode_free(&dir);
	CHECK(r >= 0);
	return f.ino;
}

/* ---- two volumes, one with the index and one without ---- */

static char path_b[640];

static void remove_b(void)
{
	if (path_b[0])
		unlink(path_b);
}

static void copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY), out = open(to, O_RDWR | O_CREAT |
						  O_TRUNC, 0600);
	CHECK(in >= 0 && out >= 0);
	static char buf[1 << 16];
	ssize_t n;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		CHECK(write(out, buf, (size_t)n) == n);
	close(in);
	close(out);
}

static bool same_files(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	CHECK(fa && fb);
	int ca, cb;
	do {
		ca = getc(fa);
		cb = getc(fb);
	} while (ca == cb && ca != EOF);
	fclose(fa);
	fclose(fb);
	return ca == cb;
}

static struct tux3_volume *open_rw(const char *path)
{
	struct tux3_volume *vol;
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDWR, &vol), 0);
	tux3_set_time(vol, 1000000000);
	return vol;
}

static uint64_t rng_state = 12345;
static unsigned rnd(unsigned n)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)((rng_state >> 33) % n);
}

#define SLOTS 6000
static tux3_ino_t slot_ino[SLOTS];
static unsigned slot_gen[SLOTS];

/* One random step on both volumes: the same result from each. */
static void step_both(struct tux3_volume *a, struct tux3_volume *b,
		      tux3_ino_t dir)
{
	char name[300], name2[300];
	unsigned i = rnd(SLOTS), what = rnd(10);
	unsigned len = name_of(name, i, slot_gen[i]);
	tux3_ino_t ia = 0, ib = 0;
	int ra, rb;

	if (!slot_ino[i] && what < 6) {
		ra = tux3_create(a, dir, name, len, 0644, 0, 0, &ia);
		rb = tux3_create(b, dir, name, len, 0644, 0, 0, &ib);
		CHECK_EQ(ra, 0);
		CHECK_EQ(rb, 0);
		CHECK_EQ(ia, ib);
		slot_ino[i] = ia;
	} else if (!slot_ino[i]) {
		ra = tux3_lookup(a, dir, name, len, &ia);
		rb = tux3_lookup(b, dir, name, len, &ib);
		CHECK_EQ(ra, -ENOENT);
		CHECK_EQ(rb, -ENOENT);
		tux3_clear_error(a);
		tux3_clear_error(b);
	} else if (what < 2) {
		ra = tux3_unlink(a, dir, name, len);
		rb = tux3_unlink(b, dir, name, len);
		CHECK_EQ(ra, 0);
		CHECK_EQ(rb, 0);
		slot_ino[i] = 0;
		slot_gen[i]++;	/* a new name for the next create */
	} else if (what < 4) {
		unsigned len2 = name_of(name2, i, slot_gen[i] + 1);
		ra = tux3_rename(a, dir, name, len, dir, name2, len2, 0);
		rb = tux3_rename(b, dir, name, len, dir, name2, len2, 0);
		CHECK_EQ(ra, 0);
		CHECK_EQ(rb, 0);
		slot_gen[i]++;
	} else if (what < 5) {
		unsigned j = rnd(SLOTS);
		if (slot_ino[j])
			return;
		unsigned len2 = name_of(name2, j, slot_gen[j]);
		ra = tux3_link(a, slot_ino[i], dir, name2, len2);
		rb = tux3_link(b, slot_ino[i], dir, name2, len2);
		CHECK_EQ(ra, 0);
		CHECK_EQ(rb, 0);
		slot_ino[j] = slot_ino[i];
	} else {
		ra = tux3_lookup(a, dir, name, len, &ia);
		rb = tux3_lookup(b, dir, name, len, &ib);
		CHECK_EQ(ra, 0);
		CHECK_EQ(rb, 0);
		CHECK_EQ(ia, slot_ino[i]);
		CHECK_EQ(ib, slot_ino[i]);
	}
}

/* The same steps on a volume with the index (a) and one without (b):
 * the same answers, then the same bytes on disk. */
static void identical_images(unsigned bits, unsigned min_blocks,
			     dir_index_hash_fn hash, unsigned steps)
{
	const char *pa = scratch_volume(bits, 256ull << 20, 0);
	snprintf(path_b, sizeof(path_b), "%s.b", pa);
	atexit(remove_b);
	copy_file(pa, path_b);
	struct tux3_volume *a = open_rw(pa), *b = open_rw(path_b);
	CHECK_EQ(tux3_set_dir_index(a, min_blocks, 0), 0);
	CHECK_EQ(dir_index_set_hash(a, hash), 0);
	CHECK_EQ(tux3_set_dir_index(b, 0, 0), 0);
	tux3_ino_t da, db;
	CHECK_EQ(tux3_mkdir(a, ROOT, "big", 3, 0755, 0, 0, &da), 0);
	CHECK_EQ(tux3_mkdir(b, ROOT, "big", 3, 0755, 0, 0, &db), 0);
	CHECK_EQ(da, db);
	for (unsigned s = 0; s < steps; s++) {
		step_both(a, b, da);
		if (s % 2000 == 1999) {
			CHECK_EQ(tux3_sync(a), 0);
			CHECK_EQ(tux3_sync(b), 0);
		}
	}
	struct dir_index_stats st;
	dir_index_stats(a, &st);
	CHECK(st.dirs >= 1);	/* the index served the run */
	dir_index_stats(b, &st);
	CHECK_EQ(st.dirs, 0);
	CHECK_EQ(tux3_umount(a), 0);
	CHECK_EQ(tux3_umount(b), 0);
	CHECK(same_files(pa, path_b));
	fsck_clean(pa);
}

TEST(identical_images_4k)
{
	identical_images(12, DIR_INDEX_MIN_BLOCKS, NULL,
			 SANITIZER_SHARE(12000, 2));
}

TEST(identical_images_1k_every_dir)
{
	identical_images(10, 1, NULL, SANITIZER_SHARE(8000, 3));
}

/* Every name of a length hashes the same: 255 long chains. */
static uint32_t hash_by_length(uint32_t seed, const char *name, unsigned len)
{
	(void)seed;
	(void)name;
	return len;
}

/* Every name hashes the same: one chain holds the directory. */
static uint32_t hash_constant(uint32_t seed, const char *name, unsigned len)
{
	(void)seed;
	(void)name;
	(void)len;
	return 7;
}

TEST(identical_images_colliding_hash)
{
	identical_images(12, 1, hash_by_length,
			 SANITIZER_SHARE(6000, 2));
}

TEST(one_hash_for_every_name)
{
	const char *p = scratch_volume(12, 64ull << 20, 0);
	struct tux3_volume *vol = open_rw(p);
	CHECK_EQ(tux3_set_dir_index(vol, 1, 0), 0);
	CHECK_EQ(dir_index_set_hash(vol, hash_constant), 0);
	char name[300];
	tux3_ino_t ino, got;
	for (unsigned i = 0; i < 600; i++) {
		unsigned len = name_of(name, i, 0);
		CHECK_EQ(tux3_create(vol, ROOT, name, len, 0644, 0, 0, &ino),
			 0);
		CHECK_EQ(tux3_create(vol, ROOT, name, len, 0644, 0, 0, &got),
			 -EEXIST);
		CHECK_EQ(tux3_lookup(vol, ROOT, name, len, &got), 0);
		CHECK_EQ(got, ino);
	}
	for (unsigned i = 0; i < 600; i += 2) {
		unsigned len = name_of(name, i, 0);
		CHECK_EQ(tux3_unlink(vol, ROOT, name, len), 0);
		CHECK_EQ(tux3_lookup(vol, ROOT, name, len, &got), -ENOENT);
		tux3_clear_error(vol);
	}
	for (unsigned i = 1; i < 600; i += 2) {
		unsigned len = name_of(name, i, 0);
		CHECK_EQ(tux3_lookup(vol, ROOT, name, len, &got), 0);
		CHECK_EQ(got, linear_lookup(vol, ROOT, name, len));
	}
	CHECK_EQ(tux3_umount(vol), 0);
	fsck_clean(p);
}

/* ---- counted work in a 20,000-entry directory ---- */

#define BIG 20000

struct cost { uint64_t max, total, ops; };

static void cost_add(struct cost *c, uint64_t reads)
{
	c->max = reads > c->max ? reads : c->max;
	c->total += reads;
	c->ops++;
}

/* Directory blocks each kind of operation read, over a window of
 * operations at the directory's current size. */
struct window { struct cost create, hit, miss, rename, unlink; };

static void measure(struct tux3_volume *vol, unsigned first, unsigned n,
		    struct window *w)
{
	char name[300], name2[300];
	tux3_ino_t ino;
	memset(w, 0, sizeof(*w));
	for (unsigned k = 0; k < n; k++) {
		unsigned i = first + k, len = name_of(name, i, 0);
		uint64_t r0 = vol->dir_block_reads;
		CHECK_EQ(tux3_create(vol, ROOT, name, len, 0644, 0, 0, &ino),
			 0);
		cost_add(&w->create, vol->dir_block_reads - r0);
		len = name_of(name, rnd(i + 1), 0);
		r0 = vol->dir_block_reads;
		CHECK_EQ(tux3_lookup(vol, ROOT, name, len, &ino), 0);
		cost_add(&w->hit, vol->dir_block_reads - r0);
		len = name_of(name, i, 9);
		r0 = vol->dir_block_reads;
		CHECK_EQ(tux3_lookup(vol, ROOT, name, len, &ino), -ENOENT);
		tux3_clear_error(vol);
		cost_add(&w->miss, vol->dir_block_reads - r0);
	}
	/* rename the window's names and back, unlink and make them again */
	for (unsigned k = 0; k < n; k++) {
		unsigned i = first + k, len = name_of(name, i, 0);
		unsigned len2 = name_of(name2, i, 5);
		uint64_t r0 = vol->dir_block_reads;
		CHECK_EQ(tux3_rename(vol, ROOT, name, len, ROOT, name2, len2,
				     0), 0);
		cost_add(&w->rename, vol->dir_block_reads - r0);
		CHECK_EQ(tux3_rename(vol, ROOT, name2, len2, ROOT, name, len,
				     0), 0);
		r0 = vol->dir_block_reads;
		CHECK_EQ(tux3_unlink(vol, ROOT, name, len), 0);
		cost_add(&w->unlink, vol->dir_block_reads - r0);
		CHECK_EQ(tux3_create(vol, ROOT, name, len, 0644, 0, 0, &ino),
			 0);
	}
	CHECK_EQ(tux3_sync(vol), 0);
}

static void show(const char *what, const struct cost *c)
{
	fprintf(stderr, "%-8s max %" PRIu64 " mean %.2f\n", what, c->max,
		(double)c->total / (double)c->ops);
}

TEST(reads_constant_as_the_directory_grows)
{
	const char *p = scratch_volume(12, 512ull << 20, 0);
	struct tux3_volume *vol = open_rw(p);
	char name[300];
	tux3_ino_t ino;
	/* past the index's threshold, then a first window at ~1,000 names */
	for (unsigned i = 0; i < 1000; i++) {
		unsigned len = name_of(name, i, 0);
		CHECK_EQ(tux3_create(vol, ROOT, name, len, 0644, 0, 0, &ino),
			 0);
	}
	struct window small, large;
	measure(vol, 1000, 200, &small);
	for (unsigned i = 1200; i < BIG - 200; i++) {
		unsigned len = name_of(name, i, 0);
		CHECK_EQ(tux3_create(vol, ROOT, name, len, 0644, 0, 0, &ino),
			 0);
		if (i % 2000 == 0)
			CHECK_EQ(tux3_sync(vol), 0);
	}
	measure(vol, BIG - 200, 200, &large);
	show("create", &large.create);
	show("hit", &large.hit);
	show("miss", &large.miss);
	show("rename", &large.rename);
	show("unlink", &large.unlink);
	/* one block to find a name, none to miss, one for the block a create
	 * fills, each block a rename or unlink changes: at 1,000 names as at
	 * 20,000 (a hash collision may add one read) */
	const struct window *w[2] = { &small, &large };
	for (int k = 0; k < 2; k++) {
		CHECK(w[k]->hit.max <= 2);
		CHECK(w[k]->miss.max <= 1);
		CHECK(w[k]->create.max <= 2);
		CHECK(w[k]->rename.max <= 4);
		CHECK(w[k]->unlink.max <= 3);
	}
	CHECK(large.hit.total <= small.hit.total + 2);
	CHECK(large.miss.total <= small.miss.total + 2);
	struct dir_index_stats st;
	dir_index_stats(vol, &st);
	CHECK_EQ(st.dirs, 1);
	CHECK_EQ(st.entries, BIG);
	CHECK_EQ(st.builds, 1);	/* built once, kept in step since */
	fprintf(stderr, "index: %" PRIu64 " bytes, %.1f per entry\n",
		st.bytes, (double)st.bytes / (double)st.entries);
	CHECK(st.bytes / st.entries <= 64);
	/* the linear path agrees on a sample, and the index on every name */
	for (unsigned i = 0; i < BIG; i++) {
		unsigned len = name_of(name, i, 0);
		CHECK_EQ(tux3_lookup(vol, ROOT, name, len, &ino), 0);
		if (i % 97 == 0)
			CHECK_EQ(ino, linear_lookup(vol, ROOT, name, len));
	}
	CHECK_EQ(tux3_umount(vol), 0);
}

/* ---- damage: a block that does not decode ---- */

struct first_extent { uint64_t logical, physical; };

static int extent_at(void *ctx, uint64_t logical, uint64_t physical,
		     uint64_t count, uint32_t version)
{
	struct first_extent *f = ctx;
	(void)version;
	if (physical && f->logical >= logical && f->logical < logical + count) {
		f->physical = physical + (f->logical - logical);
		return 1;
	}
	return 0;
}

/* A fresh 4 KiB volume at p with /d holding n names (slots 0..n-1):
 * the directory's inode in *dir, the volume left open. */
static struct tux3_volume *volume_with_dir(const char **p, unsigned n,
					   tux3_ino_t *dir)
{
	*p = scratch_volume(12, 64ull << 20, 0);
	struct tux3_volume *vol = open_rw(*p);
	char name[300];
	tux3_ino_t ino;
	CHECK_EQ(tux3_mkdir(vol, ROOT, "d", 1, 0755, 0, 0, dir), 0);
	for (unsigned i = 0; i < n; i++) {
		unsigned len = name_of(name, i, 0);
		CHECK_EQ(tux3_create(vol, *dir, name, len, 0644, 0, 0, &ino),
			 0);
	}
	return vol;
}

TEST(damaged_block_served_as_linear)
{
	const char *p;
	char name[300];
	tux3_ino_t dir, ino;
	struct tux3_volume *vol = volume_with_dir(&p, 400, &dir);
	CHECK_EQ(tux3_umount(vol), 0);
	vol = open_rw(p);
	/* a bad rec_len in the directory's third block */
	struct first_extent f = { 2, 0 };
	CHECK(tux3_map_extents(vol, dir, extent_at, &f) >= 0);
	CHECK(f.physical);
	uint8_t bad[2] = { 0x00, 0x05 };
	CHECK_EQ(tux3_write_raw(vol, (f.physical << 12) + 8, bad, 2), 0);
	CHECK_EQ(tux3_umount(vol), 0);
	/* with and without the index: the same answers, no crash */
	for (int on = 0; on < 2; on++) {
		vol = open_rw(p);
		CHECK_EQ(tux3_set_dir_index(vol, on ? 1 : 0, 0), 0);
		for (unsigned i = 0; i < 400; i++) {
			unsigned len = name_of(name, i, 0);
			int r = tux3_lookup(vol, dir, name, len, &ino);
			tux3_clear_error(vol);
			int want = 0;
			struct inode d;
			CHECK_EQ(inode_load_dir(vol, dir, &d), 0);
			struct find fi = { name, len, 0 };
			want = dir_iterate(vol, &d, find_one, &fi);
			inode_free(&d);
			tux3_clear_error(vol);
			want = want > 0 ? 0 : want == 0 ? -ENOENT : want;
			CHECK_EQ(r, want);
		}
		CHECK_EQ(tux3_create(vol, dir, "new", 3, 0644, 0, 0, &ino),
			 -EUCLEAN);
		struct dir_index_stats st;
		dir_index_stats(vol, &st);
		CHECK_EQ(st.dirs, 0);	/* no index over a damaged block */
		tux3_close(vol);
	}
}

/* A directory of many blocks whose names are all gone: its index has
 * no hash buckets (none was ever needed); a lookup there crashed fsck
 * (pass 5 asking the emptied root for lost+found). */
TEST(every_name_gone)
{
	const char *p;
	char name[300];
	tux3_ino_t dir, ino;
	struct tux3_volume *vol = volume_with_dir(&p, 400, &dir);
	for (unsigned i = 0; i < 400; i++) {
		unsigned len = name_of(name, i, 0);
		CHECK_EQ(tux3_unlink(vol, dir, name, len), 0);
	}
	CHECK_EQ(tux3_umount(vol), 0);
	vol = open_rw(p);
	CHECK_EQ(tux3_lookup(vol, dir, "lost+found", 10, &ino), -ENOENT);
	CHECK_EQ(tux3_lookup(vol, dir, "x", 1, &ino), -ENOENT);
	struct dir_index_stats st;
	dir_index_stats(vol, &st);
	CHECK_EQ(st.dirs, 1);	/* built, over blocks without a name */
	CHECK_EQ(tux3_create(vol, dir, "x", 1, 0644, 0, 0, &ino), 0);
	tux3_ino_t got;
	CHECK_EQ(tux3_lookup(vol, dir, "x", 1, &got), 0);
	CHECK_EQ(got, ino);
	CHECK_EQ(tux3_umount(vol), 0);
}

/* ---- the memory bound ---- */

TEST(bound_drops_least_recently_used)
{
	const char *p = scratch_volume(12, 64ull << 20, 0);
	struct tux3_volume *vol = open_rw(p);
	char name[300];
	tux3_ino_t d1, d2, ino;
	CHECK_EQ(tux3_mkdir(vol, ROOT, "one", 3, 0755, 0, 0, &d1), 0);
	CHECK_EQ(tux3_mkdir(vol, ROOT, "two", 3, 0755, 0, 0, &d2), 0);
	for (unsigned i = 0; i < 1000; i++) {
		unsigned len = name_of(name, i, 0);
		CHECK_EQ(tux3_create(vol, d1, name, len, 0644, 0, 0, &ino), 0);
		CHECK_EQ(tux3_create(vol, d2, name, len, 0644, 0, 0, &ino), 0);
	}
	struct dir_index_stats st;
	dir_index_stats(vol, &st);
	CHECK_EQ(st.dirs, 2);
	uint64_t both = st.bytes;
	/* room for one: the other goes, the answers stay */
	CHECK_EQ(tux3_set_dir_index(vol, 1, both * 2 / 3), 0);
	for (unsigned i = 0; i < 1000; i++) {
		unsigned len = name_of(name, i, 0);
		CHECK_EQ(tux3_lookup(vol, d1, name, len, &ino), 0);
		CHECK_EQ(tux3_lookup(vol, d2, name, len, &ino), 0);
	}
	dir_index_stats(vol, &st);
	CHECK_EQ(st.dirs, 1);
	CHECK(st.bytes <= both * 2 / 3);
	/* room for none: served linearly */
	CHECK_EQ(tux3_set_dir_index(vol, 1, 4096), 0);
	for (unsigned i = 0; i < 1000; i += 50) {
		unsigned len = name_of(name, i, 0);
		CHECK_EQ(tux3_lookup(vol, d1, name, len, &ino), 0);
		CHECK_EQ(ino, linear_lookup(vol, d1, name, len));
	}
	dir_index_stats(vol, &st);
	CHECK_EQ(st.dirs, 0);
	CHECK(st.bytes <= 4096);
	CHECK_EQ(tux3_umount(vol), 0);
}

int main(void)
{
	return run_tests("dir_index");
}

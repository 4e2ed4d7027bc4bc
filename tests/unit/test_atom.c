/* The atom table: dictionary, refcounts, reverse map and free list. */
#include "fixtures.h"
#include "tux3_walk.h"

struct seen {
	unsigned count;
	char names[16][64];
	uint32_t refs[16];
	uint64_t unatom[16];
	uint64_t dictpos[16];
};

static int collect(void *ctx, const struct tux3_atom *a)
{
	struct seen *s = ctx;
	CHECK(s->count < 16);
	snprintf(s->names[s->count], 64, "%s", a->name);
	s->refs[s->count] = a->refcount;
	s->unatom[s->count] = a->unatom;
	s->dictpos[s->count] = a->dictpos;
	s->count++;
	return 0;
}

static int collect_free(void *ctx, unsigned atom)
{
	unsigned *list = ctx;
	list[++list[0]] = atom;
	return 0;
}

/* tree-fuse: 10 atoms allocated, atom 9 freed; user.a on multi and on
 * every 4th of 40 shared files, user.shared on 41 inodes. */
TEST(tree_fuse_atoms)
{
	struct tux3_volume *vol = open_oracle("tree-fuse");
	struct seen s = { 0 };
	unsigned freelist[8] = { 0 };
	CHECK_EQ(tux3_atoms(vol, collect, &s), 0);
	CHECK_EQ(s.count, 9);
	CHECK(!strcmp(s.names[1], "user.a"));
	CHECK_EQ(s.refs[1], 11);
	CHECK(!strcmp(s.names[5], "user.shared"));
	CHECK_EQ(s.refs[5], 41);
	/* the reverse map names each atom's dictionary record */
	for (unsigned i = 0; i < s.count; i++)
		CHECK_EQ(s.unatom[i], s.dictpos[i]);
	CHECK_EQ(tux3_atom_freelist(vol, collect_free, freelist), 0);
	CHECK_EQ(freelist[0], 1);
	CHECK_EQ(freelist[1], 9);
	tux3_close(vol);
}

struct refcount_check {
	struct tux3_volume *vol;
	unsigned uses[65536];
};

static int count_name(void *ctx, const char *name, const void *v, unsigned n)
{
	struct refcount_check *r = ctx;
	(void)v; (void)n;
	for (unsigned a = 1; a < 65536; a++) {
		const char *an = atom_name(r->vol, a);
		if (an && !strcmp(an, name)) {
			r->uses[a]++;
			return 0;
		}
	}
	CHECK(!"xattr name without an atom");
	return 0;
}

static int count_inode(void *ctx, const struct tux3_stat *st,
		       tux3_block_t leaf, unsigned len)
{
	struct refcount_check *r = ctx;
	(void)leaf; (void)len;
	if (st->xattr_count)
		CHECK_EQ(tux3_listxattr(r->vol, st->ino, count_name, r), 0);
	return 0;
}

static int check_ref(void *ctx, const struct tux3_atom *a)
{
	struct refcount_check *r = ctx;
	CHECK_EQ(a->refcount, r->uses[a->atom]);
	return 0;
}

/* Every refcount equals the number of inodes using the name. */
TEST(refcounts_match_use)
{
	static const char *names[] = { "small-delta", "small-unified",
				       "tree-fuse" };
	for (unsigned i = 0; i < 3; i++) {
		static struct refcount_check r;
		memset(&r, 0, sizeof(r));
		r.vol = open_oracle(names[i]);
		struct tux3_walk_ops ops = { .inode = count_inode };
		CHECK_EQ(tux3_walk(r.vol, &ops, &r), 0);
		CHECK_EQ(tux3_atoms(r.vol, check_ref, &r), 0);
		tux3_close(r.vol);
	}
}

TEST(empty_table)
{
	struct tux3_volume *vol = open_oracle("empty-4k");
	struct seen s = { 0 };
	unsigned freelist[8] = { 0 };
	CHECK_EQ(tux3_atoms(vol, collect, &s), 0);
	CHECK_EQ(s.count, 0);
	CHECK_EQ(tux3_atom_freelist(vol, collect_free, freelist), 0);
	CHECK_EQ(freelist[0], 0);
	tux3_close(vol);
}

/* A free list entry that is not marked free is reported with the
 * reverse-map offset. */
TEST(freelist_bad_entry)
{
	struct tux3_volume *vol = open_oracle("tree-fuse");
	unsigned freelist[8] = { 0 };
	vol->super.freeatom = 2;	/* atom 2 (user.a) is in use */
	CHECK_EQ(tux3_atom_freelist(vol, collect_free, freelist), -EUCLEAN);
	CHECK_EQ(tux3_last_error(vol)->offset, ATOM_UNATOM_BASE + 16);
	CHECK_EQ(tux3_last_error(vol)->inum, TUX3_ATABLE_INO);
	tux3_close(vol);
}

int main(void)
{
	return run_tests("atom");
}

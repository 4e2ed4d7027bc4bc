/*
 * The write path against an in-memory model: random sequences of every
 * operation, commits, unifies, and close/reopen (which replays the log)
 * at random points; after each reopen the whole tree (names, types,
 * modes, owners, sizes, link counts, data, symlink targets) must equal
 * the model, and every block must be owned exactly once
 * (tux3_check_alloc).  Bounded here; longer runs with TUX3_SOAK=N.
 */
#include <sys/stat.h>
#include "fixtures.h"
#include "tux3_walk.h"

#define MAXNODES 64
#define MAXDATA (96 * 1024)

#define NXNAMES 6
static const char *xnames[NXNAMES] = { "user.a", "user.b", "user.long-name",
	"trusted.t", "user.e", "security.s" };

struct mnode {
	bool used;
	unsigned opens;		/* handles held (tux3_iopen) */
	bool xhas[NXNAMES];
	unsigned xlen[NXNAMES];
	uint8_t xval[NXNAMES][40];
	uint32_t mode, uid, gid;
	uint8_t *data;
	uint64_t size;
	char target[64];
	unsigned nlink;
	tux3_ino_t ino;
};

struct mentry {
	bool used;
	unsigned dir, node;	/* model node indexes */
	char name[16];
};

static struct mnode nodes[MAXNODES];
static struct mentry ents[MAXNODES * 2];
static unsigned rng_state;

static unsigned rnd(unsigned n)
{
	rng_state = rng_state * 1103515245 + 12345;
	return (rng_state >> 8) % n;
}

static const char *make_volume(unsigned bits, uint64_t bytes)
{
	return scratch_volume(bits, bytes, 0);
}

/*
 * The write-ordering lint: between two commit points, no write may land
 * on a block whose contents the last committed state depends on (the
 * superblock aside, which is the commit point itself).
 */
static bool lint_enabled;
static uint8_t *lint_map;
static unsigned lint_bits;
static uint64_t lint_volblocks, lint_reserved;
static unsigned lint_violations;

static void lint_commit(struct tux3_volume *vol, void *ctx)
{
	(void)ctx;
	free(lint_map);
	lint_map = NULL;
	CHECK_EQ(committed_map(vol, &lint_map), 0);
}

static void lint_write(void *ctx, uint64_t off, size_t len)
{
	(void)ctx;
	uint64_t first = off >> lint_bits, last = (off + len - 1) >> lint_bits;
	if (first < lint_reserved) {
		/* only the superblock area may be written there */
		if (off < 4096 || off + len > 8192) {
			fprintf(stderr, "lint: write at byte %llu in the "
				"reserved area\n", (unsigned long long)off);
			lint_violations++;
		}
		return;
	}
	for (uint64_t b = first; b <= last && b < lint_volblocks; b++) {
		if (lint_map && (lint_map[b >> 3] >> (b & 7)) & 1) {
			fprintf(stderr, "lint: block %llu of the committed "
				"state overwritten\n", (unsigned long long)b);
			lint_violations++;
		}
	}
}

static void lint_install(struct tux3_volume *vol)
{
	lint_bits = vol->blockbits;
	lint_volblocks = vol->volblocks;
	lint_reserved = vol->reserved_blocks;
	vol->dev.on_write = lint_write;
	vol->on_commit = lint_commit;
	lint_commit(vol, NULL);
}

/* A reopen loses every handle: orphans are released by the open. */
static void model_drop_handles(void)
{
	for (unsigned n = 1; n < MAXNODES; n++) {
		if (!nodes[n].used)
			continue;
		nodes[n].opens = 0;
		if (!nodes[n].nlink) {
			free(nodes[n].data);
			memset(&nodes[n], 0, sizeof(nodes[n]));
		}
	}
}

static struct tux3_volume *reopen(struct tux3_volume *vol, const char *path,
				  bool commit)
{
	model_drop_handles();
	if (vol) {
		if (commit)
			CHECK_EQ(tux3_umount(vol), 0);
		else
			tux3_close(vol);
	}
	char msg[400];
	struct tux3_volume *nv = NULL;
	int err = tux3_open_err(path, TUX3_OPEN_RDWR, &nv, msg, sizeof(msg));
	if (err)
		fprintf(stderr, "reopen: %s\n", msg);
	CHECK_EQ(err, 0);
	if (lint_enabled)
		lint_install(nv);
	return nv;
}

static void report_block(void *ctx, uint64_t b, uint64_t n,
			 enum tux3_block_problem w)
{
	(void)ctx;
	fprintf(stderr, "block %llu+%llu problem %d\n", (unsigned long long)b,
		(unsigned long long)n, (int)w);
}

static int count_entry(void *ctx, const char *name, unsigned len,
		       tux3_ino_t ino, unsigned type, uint64_t pos)
{
	(void)name; (void)len; (void)ino; (void)type; (void)pos;
	(*(unsigned *)ctx)++;
	return 0;
}

static int atom_refs(void *ctx, const struct tux3_atom *a)
{
	unsigned *refs = ctx;
	for (unsigned x = 0; x < NXNAMES; x++)
		if (!strcmp(a->name, xnames[x]))
			refs[x] = a->refcount;
	return 0;
}

static void report_ns(void *ctx, enum tux3_ns_problem what, uint64_t inum,
		      uint64_t dir, uint64_t have, uint64_t want)
{
	(void)ctx;
	fprintf(stderr, "namespace problem %d: inode %llu dir %llu have %llu "
		"want %llu\n", (int)what, (unsigned long long)inum,
		(unsigned long long)dir, (unsigned long long)have,
		(unsigned long long)want);
}

/* The volume equals the model, and block ownership is exact. */
static void compare(struct tux3_volume *vol)
{
	static uint8_t buf[MAXDATA];
	for (unsigned i = 0; i < MAXNODES; i++) {
		struct mnode *m = &nodes[i];
		struct tux3_stat st;
		if (!m->used)
			continue;
		CHECK_EQ(tux3_stat(vol, m->ino, &st), 0);
		CHECK_EQ(st.mode, m->mode);
		CHECK_EQ(st.uid, m->uid);
		CHECK_EQ(st.nlink, m->nlink);
		for (unsigned x = 0; x < NXNAMES; x++) {
			uint8_t v[64];
			ssize_t n = tux3_getxattr(vol, m->ino, xnames[x], v,
						  sizeof(v));
			if (!m->xhas[x]) {
				CHECK_EQ(n, -ENODATA);
				continue;
			}
			CHECK_EQ(n, (long long)m->xlen[x]);
			CHECK(!memcmp(v, m->xval[x], m->xlen[x]));
		}
		if (S_ISREG(m->mode)) {
			CHECK_EQ(st.size, m->size);
			CHECK_EQ(tux3_read(vol, m->ino, buf, sizeof(buf), 0),
				 (long long)m->size);
			CHECK(!memcmp(buf, m->data, m->size));
		} else if (S_ISLNK(m->mode)) {
			char t[100];
			CHECK_EQ(tux3_readlink(vol, m->ino, t, sizeof(t)),
				 (long long)strlen(m->target));
			CHECK(!strcmp(t, m->target));
		}
	}
	for (unsigned e = 0; e < MAXNODES * 2; e++) {
		tux3_ino_t ino;
		if (!ents[e].used)
			continue;
		int err = tux3_lookup(vol, nodes[ents[e].dir].ino, ents[e].name,
				      strlen(ents[e].name), &ino);
		if (err) {
			char text[400];
			fprintf(stderr, "lookup %s: %s\n", ents[e].name,
				tux3_error_text(vol, text, sizeof(text)));
		}
		CHECK_EQ(err, 0);
		CHECK_EQ(ino, nodes[ents[e].node].ino);
	}
	/* no name survives that the model does not have */
	for (unsigned i = 0; i < MAXNODES; i++) {
		unsigned have = 0, want = 0;
		if (!nodes[i].used || !S_ISDIR(nodes[i].mode))
			continue;
		CHECK_EQ(tux3_readdir(vol, nodes[i].ino, count_entry, &have), 0);
		for (unsigned e = 0; e < MAXNODES * 2; e++)
			want += ents[e].used && ents[e].dir == i;
		CHECK_EQ(have, want);
	}
	CHECK_EQ(tux3_check_alloc(vol, report_block, NULL), 0);
	CHECK_EQ(tux3_check_namespace(vol, report_ns, NULL), 0);
	/* each name's atom counts the inodes that use it; unused atoms are
	 * freed (a later use may take them from the free list) */
	unsigned refs[NXNAMES] = { 0 }, uses[NXNAMES] = { 0 };
	CHECK_EQ(tux3_atoms(vol, atom_refs, refs), 0);
	for (unsigned i = 0; i < MAXNODES; i++)
		for (unsigned x = 0; x < NXNAMES; x++)
			uses[x] += nodes[i].used && nodes[i].xhas[x];
	for (unsigned x = 0; x < NXNAMES; x++)
		CHECK_EQ(refs[x], uses[x]);
}

static int free_node(void)
{
	for (unsigned i = 1; i < MAXNODES; i++)
		if (!nodes[i].used)
			return (int)i;
	return -1;
}

static int free_ent(void)
{
	for (unsigned i = 0; i < MAXNODES * 2; i++)
		if (!ents[i].used)
			return (int)i;
	return -1;
}

static int pick(bool dir)
{
	for (int tries = 0; tries < 20; tries++) {
		unsigned i = rnd(MAXNODES);
		if (nodes[i].used && !!S_ISDIR(nodes[i].mode) == dir)
			return (int)i;
	}
	return dir ? 0 : -1;
}

static int entry_of(unsigned dir, const char *name)
{
	for (unsigned e = 0; e < MAXNODES * 2; e++)
		if (ents[e].used && ents[e].dir == dir &&
		    !strcmp(ents[e].name, name))
			return (int)e;
	return -1;
}

static bool dir_empty(unsigned dir)
{
	for (unsigned e = 0; e < MAXNODES * 2; e++)
		if (ents[e].used && ents[e].dir == dir)
			return false;
	return true;
}

static void drop_link(unsigned n)
{
	if (!S_ISDIR(nodes[n].mode) && nodes[n].nlink == 1 && nodes[n].opens) {
		nodes[n].nlink = 0;	/* an orphan until released */
		return;
	}
	if (--nodes[n].nlink == 0 ||
	    (S_ISDIR(nodes[n].mode) && nodes[n].nlink <= 1)) {
		free(nodes[n].data);
		memset(&nodes[n], 0, sizeof(nodes[n]));
	}
}

/* Is node inside the subtree of top (or top itself)? */
static bool model_in_subtree(unsigned top, unsigned node)
{
	if (top == node)
		return true;
	for (unsigned e = 0; e < MAXNODES * 2; e++)
		if (ents[e].used && ents[e].dir == top &&
		    S_ISDIR(nodes[ents[e].node].mode) &&
		    model_in_subtree(ents[e].node, node))
			return true;
	return false;
}

static void model_rename(struct tux3_volume *vol, int d, const char *name)
{
	int e = entry_of((unsigned)d, name), nd = pick(true);
	char nn[16];
	unsigned flags = rnd(4) == 0 ? TUX3_RENAME_NOREPLACE :
			 rnd(4) == 0 ? TUX3_RENAME_EXCHANGE : 0;
	snprintf(nn, sizeof(nn), "n%u", rnd(24));
	if (e < 0)
		return;
	unsigned src = ents[e].node;
	int e2 = entry_of((unsigned)nd, nn);
	int err = tux3_rename(vol, nodes[d].ino, name, strlen(name),
			      nodes[nd].ino, nn, strlen(nn), flags);
	int expect = 0;
	bool sdir = S_ISDIR(nodes[src].mode);
	bool ddir = e2 >= 0 && S_ISDIR(nodes[ents[e2].node].mode);
	if (e2 >= 0 && ents[e2].node == src)
		expect = 0;
	else if (e2 >= 0 && flags == TUX3_RENAME_NOREPLACE)
		expect = -EEXIST;
	else if (e2 < 0 && flags == TUX3_RENAME_EXCHANGE)
		expect = -ENOENT;
	else if (sdir && d != nd && model_in_subtree(src, (unsigned)nd))
		expect = -EINVAL;
	else if (flags == TUX3_RENAME_EXCHANGE && ddir && d != nd &&
		 model_in_subtree(ents[e2].node, (unsigned)d))
		expect = -EINVAL;
	else if (flags != TUX3_RENAME_EXCHANGE && e2 >= 0 && ddir && !sdir)
		expect = -EISDIR;
	else if (flags != TUX3_RENAME_EXCHANGE && e2 >= 0 && !ddir && sdir)
		expect = -ENOTDIR;
	else if (flags != TUX3_RENAME_EXCHANGE && ddir &&
		 !dir_empty(ents[e2].node))
		expect = -ENOTEMPTY;
	CHECK_EQ(err, expect);
	if (err || (e2 >= 0 && ents[e2].node == src))
		return;
	if (flags == TUX3_RENAME_EXCHANGE) {
		unsigned dst = ents[e2].node;
		ents[e].node = dst;
		ents[e2].node = src;
		if (d != nd && sdir != ddir) {
			nodes[d].nlink += ddir ? 1 : -1;
			nodes[nd].nlink += sdir ? 1 : -1;
		}
		return;
	}
	if (e2 >= 0) {
		unsigned dst = ents[e2].node;
		ents[e2].node = src;
		ents[e].used = false;
		if (ddir) {
			nodes[nd].nlink--;
			free(nodes[dst].data);
			memset(&nodes[dst], 0, sizeof(nodes[dst]));
		} else {
			drop_link(dst);
		}
	} else {
		ents[e].dir = (unsigned)nd;
		strcpy(ents[e].name, nn);
	}
	if (sdir && d != nd) {
		nodes[d].nlink--;
		nodes[nd].nlink++;
	}
}

static void step(struct tux3_volume *vol)
{
	unsigned op = rnd(16);
	int d = pick(true), n, e;
	char name[16];
	snprintf(name, sizeof(name), "n%u", rnd(24));
	switch (op) {
	case 0: case 1: {	/* create or mkdir */
		if (entry_of((unsigned)d, name) >= 0 || (n = free_node()) < 0 ||
		    (e = free_ent()) < 0)
			return;
		bool isdir = op == 1;
		uint32_t mode = isdir ? 0755 : 0640;
		tux3_ino_t ino;
		int err = isdir ? tux3_mkdir(vol, nodes[d].ino, name,
					     strlen(name), mode, 7, 8, &ino) :
				  tux3_create(vol, nodes[d].ino, name,
					      strlen(name), mode, 7, 8, &ino);
		CHECK_EQ(err, 0);
		nodes[n] = (struct mnode){ .used = true,
			.mode = (isdir ? S_IFDIR : S_IFREG) | mode, .uid = 7,
			.gid = 8, .nlink = isdir ? 2 : 1, .ino = ino };
		if (isdir)
			nodes[d].nlink++;
		else
			nodes[n].data = calloc(1, MAXDATA);
		ents[e] = (struct mentry){ true, (unsigned)d, (unsigned)n, "" };
		strcpy(ents[e].name, name);
		return;
	}
	case 2: case 3: {	/* write at a random place */
		if ((n = pick(false)) < 0 || !S_ISREG(nodes[n].mode))
			return;
		uint64_t pos = rnd(MAXDATA / 2), len = 1 + rnd(MAXDATA / 4);
		static uint8_t buf[MAXDATA];
		for (uint64_t i = 0; i < len; i++)
			buf[i] = (uint8_t)rnd(256);
		CHECK_EQ(tux3_write(vol, nodes[n].ino, buf, len, pos),
			 (long long)len);
		memcpy(nodes[n].data + pos, buf, len);
		if (pos + len > nodes[n].size)
			nodes[n].size = pos + len;
		return;
	}
	case 4: {		/* truncate */
		if ((n = pick(false)) < 0 || !S_ISREG(nodes[n].mode))
			return;
		uint64_t size = rnd(MAXDATA);
		CHECK_EQ(tux3_truncate(vol, nodes[n].ino, size), 0);
		if (size < nodes[n].size)
			memset(nodes[n].data + size, 0, nodes[n].size - size);
		nodes[n].size = size;
		return;
	}
	case 5: {		/* unlink or rmdir */
		if ((e = entry_of((unsigned)d, name)) < 0)
			return;
		n = (int)ents[e].node;
		if (S_ISDIR(nodes[n].mode)) {
			int err = tux3_rmdir(vol, nodes[d].ino, name,
					     strlen(name));
			if (!dir_empty((unsigned)n)) {
				CHECK_EQ(err, -ENOTEMPTY);
				return;
			}
			CHECK_EQ(err, 0);
			nodes[d].nlink--;
			free(nodes[n].data);
			memset(&nodes[n], 0, sizeof(nodes[n]));
		} else {
			CHECK_EQ(tux3_unlink(vol, nodes[d].ino, name,
					     strlen(name)), 0);
			drop_link((unsigned)n);
		}
		ents[e].used = false;
		return;
	}
	case 6: {		/* hard link */
		if ((n = pick(false)) < 0 || S_ISDIR(nodes[n].mode) ||
		    !nodes[n].nlink ||
		    entry_of((unsigned)d, name) >= 0 || (e = free_ent()) < 0)
			return;
		CHECK_EQ(tux3_link(vol, nodes[n].ino, nodes[d].ino, name,
				   strlen(name)), 0);
		nodes[n].nlink++;
		ents[e] = (struct mentry){ true, (unsigned)d, (unsigned)n, "" };
		strcpy(ents[e].name, name);
		return;
	}
	case 7: {		/* symlink */
		if (entry_of((unsigned)d, name) >= 0 || (n = free_node()) < 0 ||
		    (e = free_ent()) < 0)
			return;
		char target[64];
		snprintf(target, sizeof(target), "target-%u/%s", rnd(1000),
			 name);
		tux3_ino_t ino;
		CHECK_EQ(tux3_symlink(vol, nodes[d].ino, name, strlen(name),
				      target, 0, 0, &ino), 0);
		nodes[n] = (struct mnode){ .used = true, .mode = S_IFLNK | 0777,
					   .nlink = 1, .ino = ino };
		strcpy(nodes[n].target, target);
		ents[e] = (struct mentry){ true, (unsigned)d, (unsigned)n, "" };
		strcpy(ents[e].name, name);
		return;
	}
	case 8: {		/* chmod, chown */
		if ((n = pick(rnd(2))) < 0)
			return;
		struct tux3_setattr sa = { .valid = TUX3_SET_MODE | TUX3_SET_UID,
					   .mode = rnd(07777), .uid = rnd(5000) };
		CHECK_EQ(tux3_setattr(vol, nodes[n].ino, &sa), 0);
		nodes[n].mode = (nodes[n].mode & S_IFMT) | sa.mode;
		nodes[n].uid = sa.uid;
		return;
	}
	case 9:
		CHECK_EQ(tux3_sync(vol), 0);
		return;
	case 12: case 13:
		model_rename(vol, d, name);
		return;
	case 14:		/* open a handle on a file */
		if ((n = pick(false)) < 0 || !S_ISREG(nodes[n].mode))
			return;
		CHECK_EQ(tux3_iopen(vol, nodes[n].ino), 0);
		nodes[n].opens++;
		return;
	case 15:		/* release one */
		for (n = 1; n < MAXNODES; n++) {
			if (!nodes[n].used || !nodes[n].opens)
				continue;
			CHECK_EQ(tux3_irelease(vol, nodes[n].ino), 0);
			if (!--nodes[n].opens && !nodes[n].nlink) {
				free(nodes[n].data);
				memset(&nodes[n], 0, sizeof(nodes[n]));
			}
			return;
		}
		return;
	case 10: case 11: {	/* set or remove an xattr */
		if ((n = pick(rnd(2))) < 0)
			return;
		unsigned x = rnd(NXNAMES);
		if (op == 11) {
			int err = tux3_removexattr(vol, nodes[n].ino, xnames[x]);
			CHECK_EQ(err, nodes[n].xhas[x] ? 0 : -ENODATA);
			nodes[n].xhas[x] = false;
			return;
		}
		unsigned len = rnd(40);
		for (unsigned i = 0; i < len; i++)
			nodes[n].xval[x][i] = (uint8_t)rnd(256);
		CHECK_EQ(tux3_setxattr(vol, nodes[n].ino, xnames[x],
				       nodes[n].xval[x], len, 0), 0);
		nodes[n].xhas[x] = true;
		nodes[n].xlen[x] = len;
		return;
	}
	}
}

static void run(unsigned bits, uint64_t bytes, unsigned seed, unsigned steps)
{
	const char *path = make_volume(bits, bytes);
	struct tux3_volume *vol = reopen(NULL, path, false);
	memset(nodes, 0, sizeof(nodes));
	memset(ents, 0, sizeof(ents));
	nodes[0] = (struct mnode){ .used = true, .mode = S_IFDIR | 0755,
				   .nlink = 2, .ino = TUX3_ROOT_INO };
	rng_state = seed;
	for (unsigned i = 0; i < steps; i++) {
		step(vol);
		unsigned r = rnd(100);
		if (r < 2) {
			CHECK_EQ(tux3_unify(vol), 0);
		} else if (r < 6) {
			vol = reopen(vol, path, true);
			compare(vol);
		}
	}
	vol = reopen(vol, path, true);
	compare(vol);
	CHECK_EQ(tux3_unify(vol), 0);
	vol = reopen(vol, path, true);
	compare(vol);
	tux3_close(vol);
	for (unsigned i = 0; i < MAXNODES; i++)
		free(nodes[i].data);
}

static unsigned soak(void)
{
	const char *s = getenv("TUX3_SOAK");
	return s ? (unsigned)atoi(s) : 1;
}

TEST(model_512)   { for (unsigned i = 0; i < soak(); i++) run(9, 8 << 20, 1 + i, 400); }
TEST(model_1k)    { for (unsigned i = 0; i < soak(); i++) run(10, 16 << 20, 100 + i, 400); }
TEST(model_4k)    { for (unsigned i = 0; i < soak(); i++) run(12, 32 << 20, 200 + i, 500); }
TEST(model_16k)   { for (unsigned i = 0; i < soak(); i++) run(14, 64 << 20, 300 + i, 300); }
/* volumes the reference cannot use, but ours must handle */
TEST(model_64k)   { for (unsigned i = 0; i < soak(); i++) run(16, 128 << 20, 400 + i, 200); }

/* Every write of a long random run keeps the committed state intact. */
TEST(lint_commit_never_overwrites)
{
	lint_enabled = true;
	run(12, 32 << 20, 777, 600);
	run(9, 8 << 20, 778, 400);
	CHECK_EQ(lint_violations, 0);
}

/* Closing without a commit loses exactly the uncommitted delta. */
TEST(uncommitted_delta_is_lost)
{
	const char *path = make_volume(12, 16 << 20);
	struct tux3_volume *vol = reopen(NULL, path, false);
	tux3_ino_t a, b;
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "kept", 4, 0644, 0, 0, &a), 0);
	CHECK_EQ(tux3_sync(vol), 0);
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "lost", 4, 0644, 0, 0, &b), 0);
	vol = reopen(vol, path, false);
	CHECK_EQ(tux3_lookup(vol, TUX3_ROOT_INO, "kept", 4, &a), 0);
	CHECK_EQ(tux3_lookup(vol, TUX3_ROOT_INO, "lost", 4, &b), -ENOENT);
	CHECK_EQ(tux3_check_alloc(vol, report_block, NULL), 0);
	tux3_close(vol);
}

/* A write the volume cannot hold whole is short, as write(2): it returns
 * what it wrote, which stays; the next write meets ENOSPC. */
TEST(short_write_when_full)
{
	const char *path = make_volume(12, 4 << 20);
	struct tux3_volume *vol = reopen(NULL, path, false);
	static uint8_t buf[8 << 20];
	tux3_ino_t f;
	memset(buf, 'w', sizeof(buf));
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "big", 3, 0644, 0, 0, &f), 0);
	ssize_t n = tux3_write(vol, f, buf, sizeof(buf), 0);
	CHECK(n > 0);
	CHECK(n < (ssize_t)sizeof(buf));
	CHECK_EQ(tux3_write(vol, f, buf, sizeof(buf), (uint64_t)n), -ENOSPC);
	tux3_clear_error(vol);
	struct tux3_stat st;
	CHECK_EQ(tux3_stat(vol, f, &st), 0);
	CHECK_EQ(st.size, (uint64_t)n);
	CHECK_EQ(tux3_sync(vol), 0);
	CHECK_EQ(tux3_check_alloc(vol, report_block, NULL), 0);
	tux3_close(vol);
}

/* A create, mkdir, symlink or link that runs out of space for the
 * directory's new block changes nothing: no inode is left without a
 * name, no link count is raised, the inode count stays, and fsck finds
 * nothing. */
TEST(namespace_change_when_full_is_whole_or_nothing)
{
	const char *path = make_volume(12, 4 << 20);
	struct tux3_volume *vol = reopen(NULL, path, false);
	static uint8_t buf[8 << 20];
	tux3_ino_t d, f, x;
	CHECK_EQ(tux3_mkdir(vol, TUX3_ROOT_INO, "d", 1, 0755, 0, 0, &d), 0);
	CHECK_EQ(tux3_create(vol, d, "f", 1, 0644, 0, 0, &f), 0);
	/* committed: the directory's block is rewritten elsewhere */
	CHECK_EQ(tux3_sync(vol), 0);
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "big", 3, 0644, 0, 0, &x), 0);
	CHECK(tux3_write(vol, x, buf, sizeof(buf), 0) > 0);
	tux3_clear_error(vol);
	struct tux3_statfs before, after;
	struct tux3_stat fst;
	CHECK_EQ(tux3_statfs(vol, &before), 0);
	CHECK_EQ(tux3_create(vol, d, "g", 1, 0644, 0, 0, &x), -ENOSPC);
	tux3_clear_error(vol);
	CHECK_EQ(tux3_mkdir(vol, d, "s", 1, 0755, 0, 0, &x), -ENOSPC);
	tux3_clear_error(vol);
	CHECK_EQ(tux3_symlink(vol, d, "l", 1, "target", 0, 0, &x), -ENOSPC);
	tux3_clear_error(vol);
	CHECK_EQ(tux3_link(vol, f, d, "h", 1), -ENOSPC);
	tux3_clear_error(vol);
	CHECK_EQ(tux3_statfs(vol, &after), 0);
	CHECK_EQ(after.ffree, before.ffree);
	CHECK_EQ(tux3_stat(vol, f, &fst), 0);
	CHECK_EQ(fst.nlink, 1);
	CHECK_EQ(tux3_lookup(vol, d, "g", 1, &x), -ENOENT);
	tux3_clear_error(vol);
	CHECK_EQ(tux3_umount(vol), 0);
	fsck_clean(path);
}

/* Whether bytes [off, off+len) of ino read as model's. */
static bool reads_as(struct tux3_volume *vol, tux3_ino_t ino,
		     const uint8_t *model, uint64_t off, size_t len)
{
	static uint8_t got[1 << 20];
	CHECK(len <= sizeof(got));
	CHECK_EQ(tux3_read(vol, ino, got, len, off), (ssize_t)len);
	return !memcmp(got, model + off, len);
}

/* fallocate: holes filled with zeroes and data kept, the size raised
 * (mode 0) or kept (KEEP_SIZE, only within the size's blocks); punching
 * zeroes the range and frees its whole blocks, a direct extent's middle
 * and edges within one block included; every step read back against a
 * model, fsck clean at the end. */
TEST(fallocate_and_punch)
{
	const char *path = make_volume(12, 64 << 20);
	struct tux3_volume *vol = reopen(NULL, path, false);
	static uint8_t model[1 << 20];
	tux3_ino_t f;
	struct tux3_stat st;
	struct tux3_statfs s0, s1;
	for (size_t i = 0; i < sizeof(model); i++)
		model[i] = (uint8_t)(i * 7 + 1);
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "f", 1, 0644, 0, 0, &f), 0);
	/* data at 0..12 KiB and 40..48 KiB, a hole between */
	CHECK_EQ(tux3_write(vol, f, model, 12288, 0), 12288);
	CHECK_EQ(tux3_write(vol, f, model + 40960, 8192, 40960), 8192);
	memset(model + 12288, 0, 40960 - 12288);
	CHECK_EQ(tux3_sync(vol), 0);
	CHECK_EQ(tux3_statfs(vol, &s0), 0);
	/* mode 0 past the end: the hole and the new tail allocated */
	CHECK_EQ(tux3_fallocate(vol, f, 4096, 100000, 0), 0);
	CHECK_EQ(tux3_stat(vol, f, &st), 0);
	CHECK_EQ(st.size, 104096);
	memset(model + 49152, 0, 104096 - 49152);
	CHECK(reads_as(vol, f, model, 0, 104096));
	CHECK_EQ(tux3_statfs(vol, &s1), 0);
	CHECK(s0.bfree - s1.bfree >= (104096 + 4095) / 4096 - 5);
	/* KEEP_SIZE within the size; beyond it, refused */
	CHECK_EQ(tux3_fallocate(vol, f, 0, 104096, TUX3_FALLOC_KEEP_SIZE), 0);
	CHECK_EQ(tux3_fallocate(vol, f, 100000, 10000, TUX3_FALLOC_KEEP_SIZE),
		 -EOPNOTSUPP);
	tux3_clear_error(vol);
	CHECK_EQ(tux3_stat(vol, f, &st), 0);
	CHECK_EQ(st.size, 104096);
	/* punch: a partial head and tail, whole blocks between */
	CHECK_EQ(tux3_write(vol, f, model + 12288, 40960 - 12288, 12288),
		 40960 - 12288);
	for (size_t i = 12288; i < 40960; i++)
		model[i] = (uint8_t)(i * 7 + 1);
	CHECK_EQ(tux3_write(vol, f, model + 12288, 40960 - 12288, 12288),
		 40960 - 12288);
	CHECK_EQ(tux3_sync(vol), 0);
	CHECK_EQ(tux3_statfs(vol, &s0), 0);
	CHECK_EQ(tux3_fallocate(vol, f, 5000, 30000,
				TUX3_FALLOC_PUNCH_HOLE | TUX3_FALLOC_KEEP_SIZE), 0);
	memset(model + 5000, 0, 30000);
	CHECK(reads_as(vol, f, model, 0, 104096));
	CHECK_EQ(tux3_sync(vol), 0);
	CHECK_EQ(tux3_statfs(vol, &s1), 0);
	CHECK(s1.bfree > s0.bfree);	/* 8192..32767: 6 blocks */
	/* within one block; past the size, nothing */
	CHECK_EQ(tux3_fallocate(vol, f, 41000, 100,
				TUX3_FALLOC_PUNCH_HOLE | TUX3_FALLOC_KEEP_SIZE), 0);
	memset(model + 41000, 0, 100);
	CHECK_EQ(tux3_fallocate(vol, f, 200000, 4096,
				TUX3_FALLOC_PUNCH_HOLE | TUX3_FALLOC_KEEP_SIZE), 0);
	CHECK(reads_as(vol, f, model, 0, 104096));
	CHECK_EQ(tux3_stat(vol, f, &st), 0);
	CHECK_EQ(st.size, 104096);
	/* a punch must keep the size; other modes; bad ranges */
	CHECK_EQ(tux3_fallocate(vol, f, 0, 10, TUX3_FALLOC_PUNCH_HOLE),
		 -EOPNOTSUPP);
	CHECK_EQ(tux3_fallocate(vol, f, 0, 10, 0x10), -EOPNOTSUPP);
	CHECK_EQ(tux3_fallocate(vol, f, 0, 0, 0), -EINVAL);
	CHECK_EQ(tux3_fallocate(vol, TUX3_ROOT_INO, 0, 10, 0), -EISDIR);
	tux3_clear_error(vol);
	/* a small file in one direct extent, punched in its middle */
	tux3_ino_t g;
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "g", 1, 0644, 0, 0, &g), 0);
	for (size_t i = 0; i < 16384; i++)
		model[i] = (uint8_t)(i * 13 + 5);
	CHECK_EQ(tux3_write(vol, g, model, 16384, 0), 16384);
	CHECK_EQ(tux3_sync(vol), 0);
	CHECK_EQ(tux3_fallocate(vol, g, 4096, 8192,
				TUX3_FALLOC_PUNCH_HOLE | TUX3_FALLOC_KEEP_SIZE), 0);
	memset(model + 4096, 0, 8192);
	CHECK(reads_as(vol, g, model, 0, 16384));
	CHECK_EQ(tux3_umount(vol), 0);
	fsck_clean(path);
	vol = reopen(NULL, path, false);
	CHECK(reads_as(vol, g, model, 0, 16384));
	tux3_close(vol);
}

/* A file whose map is a deep tree (one extent per block, two files
 * interleaved) gives back every node when it goes: no block leaks, and
 * the bnodes go with BNODE_FREE so that a reopen replays cleanly. */
TEST(deep_tree_freed_whole)
{
	const char *path = make_volume(9, 16 << 20);
	struct tux3_volume *vol = reopen(NULL, path, false);
	static uint8_t buf[512];
	tux3_ino_t a, b;
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "a", 1, 0644, 0, 0, &a), 0);
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "b", 1, 0644, 0, 0, &b), 0);
	for (unsigned i = 0; i < 3000; i++) {
		CHECK_EQ(tux3_write(vol, a, buf, 512, (uint64_t)i * 512), 512);
		CHECK_EQ(tux3_write(vol, b, buf, 512, (uint64_t)i * 512), 512);
	}
	CHECK_EQ(tux3_sync(vol), 0);
	struct tux3_stat st;
	CHECK_EQ(tux3_stat(vol, a, &st), 0);
	CHECK(root_unpack(st.dtree_root).depth >= 3);
	CHECK_EQ(tux3_unlink(vol, TUX3_ROOT_INO, "a", 1), 0);
	CHECK_EQ(tux3_check_alloc(vol, report_block, NULL), 0);
	vol = reopen(vol, path, false);
	CHECK_EQ(tux3_check_alloc(vol, report_block, NULL), 0);
	tux3_close(vol);
}

/* The last logical block (2^48 - 1) cannot be mapped: its extent's end
 * would wrap to 0 in a dleaf.  A write there is EFBIG; one byte before
 * it works, and the file stays sound. */
TEST(last_logical_block_refused)
{
	const char *path = make_volume(12, 16 << 20);
	struct tux3_volume *vol = reopen(NULL, path, false);
	uint64_t last = (1ULL << 60) - 4096;	/* block 2^48 - 1 at 4 KiB */
	tux3_ino_t f;
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "f", 1, 0644, 0, 0, &f), 0);
	CHECK_EQ(tux3_write(vol, f, "x", 1, last), -EFBIG);
	tux3_clear_error(vol);
	CHECK_EQ(tux3_write(vol, f, "x", 1, last - 1), 1);
	CHECK_EQ(tux3_truncate(vol, f, last + 1), -EFBIG);
	tux3_clear_error(vol);
	CHECK_EQ(tux3_truncate(vol, f, 0), 0);
	CHECK_EQ(tux3_sync(vol), 0);
	CHECK_EQ(tux3_check_alloc(vol, report_block, NULL), 0);
	tux3_close(vol);
}

/* Errors: names, types, existence. */
TEST(namespace_errors)
{
	const char *path = make_volume(12, 16 << 20);
	struct tux3_volume *vol = reopen(NULL, path, false);
	char longname[300];
	tux3_ino_t f, d;
	memset(longname, 'x', sizeof(longname));
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, longname, 256, 0644, 0, 0,
			     &f), -ENAMETOOLONG);
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, longname, 255, 0644, 0, 0,
			     &f), 0);
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "a/b", 3, 0644, 0, 0, &f),
		 -EINVAL);
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "f", 1, 0644, 0, 0, &f), 0);
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "f", 1, 0644, 0, 0, &d),
		 -EEXIST);
	CHECK_EQ(tux3_mkdir(vol, f, "x", 1, 0755, 0, 0, &d), -ENOTDIR);
	CHECK_EQ(tux3_mkdir(vol, TUX3_ROOT_INO, "d", 1, 0755, 0, 0, &d), 0);
	CHECK_EQ(tux3_create(vol, d, "in", 2, 0644, 0, 0, &f), 0);
	CHECK_EQ(tux3_rmdir(vol, TUX3_ROOT_INO, "d", 1), -ENOTEMPTY);
	CHECK_EQ(tux3_unlink(vol, TUX3_ROOT_INO, "d", 1), -EISDIR);
	CHECK_EQ(tux3_rmdir(vol, TUX3_ROOT_INO, "f", 1), -ENOTDIR);
	CHECK_EQ(tux3_unlink(vol, TUX3_ROOT_INO, "nope", 4), -ENOENT);
	CHECK_EQ(tux3_link(vol, d, TUX3_ROOT_INO, "dl", 2), -EPERM);
	char target[4097];
	memset(target, 't', 4096);
	target[4096] = 0;
	CHECK_EQ(tux3_symlink(vol, TUX3_ROOT_INO, "s", 1, target, 0, 0, &f),
		 -ENAMETOOLONG);
	target[4095] = 0;	/* 4095 bytes: spans blocks at 512-byte sizes */
	CHECK_EQ(tux3_symlink(vol, TUX3_ROOT_INO, "s", 1, target, 0, 0, &f), 0);
	vol = reopen(vol, path, true);
	char back[4200];
	CHECK_EQ(tux3_lookup(vol, TUX3_ROOT_INO, "s", 1, &f), 0);
	CHECK_EQ(tux3_readlink(vol, f, back, sizeof(back)), 4095);
	CHECK_EQ(tux3_check_alloc(vol, report_block, NULL), 0);
	tux3_close(vol);
	/* a read-only volume refuses changes */
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDONLY, &vol), 0);
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "g", 1, 0644, 0, 0, &f),
		 -EROFS);
	tux3_close(vol);
}

/* Unlinked while open: an orphan, kept by a crash and by read-only
 * opens, released by the last release or by the next read-write open;
 * with and without a unify that moves it into the otree. */
static void orphan_case(bool unify_between)
{
	static char buf[200000];
	const char *path = make_volume(12, 32 << 20);
	struct tux3_volume *vol = reopen(NULL, path, false);
	tux3_ino_t victim, v2, x;
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "victim", 6, 0644, 0, 0,
			     &victim), 0);
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "v2", 2, 0644, 0, 0, &v2), 0);
	CHECK_EQ(tux3_write(vol, victim, buf, sizeof(buf), 0), sizeof(buf));
	CHECK_EQ(tux3_write(vol, v2, buf, 5000, 0), 5000);
	CHECK_EQ(tux3_iopen(vol, victim), 0);
	CHECK_EQ(tux3_iopen(vol, v2), 0);
	CHECK_EQ(tux3_unlink(vol, TUX3_ROOT_INO, "victim", 6), 0);
	CHECK_EQ(tux3_unlink(vol, TUX3_ROOT_INO, "v2", 2), 0);
	CHECK_EQ(tux3_lookup(vol, TUX3_ROOT_INO, "v2", 2, &x), -ENOENT);
	CHECK_EQ(tux3_read(vol, v2, buf, 10, 0), 10);	/* still readable */
	if (unify_between)
		CHECK_EQ(tux3_unify(vol), 0);
	CHECK_EQ(tux3_irelease(vol, v2), 0);
	CHECK_EQ(tux3_irelease(vol, v2), -EINVAL);
	CHECK_EQ(tux3_sync(vol), 0);
	tux3_close(vol);	/* a crash with victim open */
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDONLY, &vol), 0);
	CHECK_EQ(tux3_orphan_count(vol), 1);
	CHECK_EQ(tux3_orphan(vol, 0), victim);
	CHECK_EQ(tux3_check_alloc(vol, report_block, NULL), 0);
	struct tux3_stat st;
	CHECK_EQ(tux3_stat(vol, v2, &st), -ENOENT);
	tux3_close(vol);
	vol = reopen(NULL, path, false);	/* releases the orphan */
	CHECK_EQ(tux3_orphan_count(vol), 0);
	vol = reopen(vol, path, true);
	CHECK_EQ(tux3_orphan_count(vol), 0);
	CHECK_EQ(tux3_stat(vol, victim, &st), -ENOENT);
	CHECK_EQ(tux3_check_alloc(vol, report_block, NULL), 0);
	tux3_close(vol);
}

/* A full volume: writes stop with ENOSPC, the volume stays consistent,
 * and unlink and truncate still work from the reserve. */
TEST(enospc_full_volume)
{
	static char buf[64 * 1024];
	const char *path = make_volume(12, 4 << 20);	/* 1024 blocks */
	struct tux3_volume *vol = reopen(NULL, path, false);
	tux3_ino_t f[64];
	int err = 0, n = 0;
	memset(buf, 0x5a, sizeof(buf));
	for (; n < 64 && !err; n++) {
		char name[16];
		snprintf(name, sizeof(name), "f%d", n);
		CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, name, strlen(name),
				     0644, 0, 0, &f[n]), 0);
		for (int k = 0; k < 4 && !err; k++) {
			ssize_t w = tux3_write(vol, f[n], buf, sizeof(buf),
					       (uint64_t)k * sizeof(buf));
			if (w < 0)
				err = (int)w;
		}
	}
	CHECK_EQ(err, -ENOSPC);
	CHECK_EQ(tux3_sync(vol), 0);
	vol = reopen(vol, path, true);
	CHECK_EQ(tux3_check_alloc(vol, report_block, NULL), 0);
	/* truncate and unlink work on the full volume */
	CHECK_EQ(tux3_truncate(vol, f[0], 100), 0);
	CHECK_EQ(tux3_unlink(vol, TUX3_ROOT_INO, "f1", 2), 0);
	CHECK_EQ(tux3_sync(vol), 0);
	vol = reopen(vol, path, true);
	CHECK_EQ(tux3_check_alloc(vol, report_block, NULL), 0);
	/* and the space is usable again */
	CHECK_EQ(tux3_write(vol, f[0], buf, 4096, 0), 4096);
	tux3_close(vol);
}

/* Xattr limits of the format and their errors. */
TEST(xattr_limits)
{
	const char *path = make_volume(12, 16 << 20);
	struct tux3_volume *vol = reopen(NULL, path, false);
	char name[300], value[4096];
	tux3_ino_t f;
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "f", 1, 0644, 0, 0, &f), 0);
	memset(name, 'n', sizeof(name));
	memcpy(name, "user.", 5);
	name[240] = 0;
	CHECK_EQ(tux3_setxattr(vol, f, name, "v", 1, 0), 0);
	name[240] = 'n';
	name[241] = 0;
	CHECK_EQ(tux3_setxattr(vol, f, name, "v", 1, 0), -ERANGE);
	memset(value, 'v', sizeof(value));
	/* the inode with its xattrs must fit one leaf */
	/* 48 bytes of fixed attributes + 7 for the xattr above + 6 + value
	 * <= 4096 - 18 */
	CHECK_EQ(tux3_setxattr(vol, f, "user.big", value, 4018, 0), -E2BIG);
	CHECK_EQ(tux3_setxattr(vol, f, "user.big", value, 4017, 0), 0);
	CHECK_EQ(tux3_setxattr(vol, f, "user.big", value, 3000, 0), 0);
	CHECK_EQ(tux3_setxattr(vol, f, "user.big2", value, 3000, 0), -E2BIG);
	CHECK_EQ(tux3_setxattr(vol, f, "user.big", value, 1, TUX3_XATTR_CREATE),
		 -EEXIST);
	CHECK_EQ(tux3_setxattr(vol, f, "user.none", value, 1,
			       TUX3_XATTR_REPLACE), -ENODATA);
	CHECK_EQ(tux3_removexattr(vol, f, "user.none"), -ENODATA);
	vol = reopen(vol, path, true);
	CHECK_EQ(tux3_getxattr(vol, f, "user.big", value, sizeof(value)), 3000);
	CHECK_EQ(tux3_getxattr(vol, f, "user.big2", value, sizeof(value)),
		 -ENODATA);
	CHECK_EQ(tux3_check_alloc(vol, report_block, NULL), 0);
	tux3_close(vol);
}

TEST(orphans) { orphan_case(false); }
TEST(orphans_across_unify) { orphan_case(true); }

/*
 * Orphans far apart in inode numbers, across unifies: when the next one
 * is added, the orphan table's leaf has been emptied by the cycle's
 * deletions (0), holds one orphan far below it (1) or far above it (2),
 * beyond the dictionary's reach (248 slots at 512-byte blocks).  The first
 * made every commit fail with EINVAL (stress-ng through tux3fuse); the
 * third failed with ENOSPC.
 */
static void far_orphan_case(int order)
{
	enum { N = 600 };
	const char *path = make_volume(9, 8 << 20);
	struct tux3_volume *vol = reopen(NULL, path, false);
	tux3_ino_t ino[N];
	char name[16];
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "o%d", i);
		CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, name, strlen(name),
				     0644, 0, 0, &ino[i]), 0);
	}
	CHECK(ino[N - 1] > ino[0] + 300);
	int a = order == 2 ? N - 1 : 0, b = order == 2 ? 0 : N - 1;
	snprintf(name, sizeof(name), "o%d", a);
	CHECK_EQ(tux3_iopen(vol, ino[a]), 0);
	CHECK_EQ(tux3_unlink(vol, TUX3_ROOT_INO, name, strlen(name)), 0);
	CHECK_EQ(tux3_unify(vol), 0);		/* a into the otree */
	if (order == 0)
		CHECK_EQ(tux3_irelease(vol, ino[a]), 0);
	snprintf(name, sizeof(name), "o%d", b);
	CHECK_EQ(tux3_iopen(vol, ino[b]), 0);
	CHECK_EQ(tux3_unlink(vol, TUX3_ROOT_INO, name, strlen(name)), 0);
	CHECK_EQ(tux3_unify(vol), 0);		/* b, and a's deletion */
	CHECK_EQ(tux3_sync(vol), 0);
	tux3_close(vol);			/* a crash with them open */
	fsck_clean(path);
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDONLY, &vol), 0);
	unsigned want = order == 0 ? 1 : 2;
	CHECK_EQ(tux3_orphan_count(vol), want);
	bool seen_a = false, seen_b = false;
	for (unsigned i = 0; i < tux3_orphan_count(vol); i++) {
		seen_a |= tux3_orphan(vol, i) == ino[a];
		seen_b |= tux3_orphan(vol, i) == ino[b];
	}
	CHECK(seen_b);
	CHECK_EQ(seen_a, order != 0);
	tux3_close(vol);
	vol = reopen(NULL, path, false);	/* releases the orphans */
	CHECK_EQ(tux3_orphan_count(vol), 0);
	CHECK_EQ(tux3_unify(vol), 0);		/* and empties the otree */
	vol = reopen(vol, path, true);
	CHECK_EQ(tux3_orphan_count(vol), 0);
	CHECK_EQ(tux3_check_alloc(vol, report_block, NULL), 0);
	tux3_close(vol);
	fsck_clean(path);
}

/* A commit that fails part way (here the device refuses every write)
 * stops the volume: no change is taken (EROFS) and nothing is committed
 * (EIO) until it is reopened, and the disk keeps the last whole commit. */
TEST(failed_commit_stops_changes)
{
	const char *path = make_volume(12, 16 << 20);
	struct tux3_volume *vol = reopen(NULL, path, false);
	tux3_ino_t f, g;
	char buf[8];
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "kept", 4, 0644, 0, 0, &f), 0);
	CHECK_EQ(tux3_write(vol, f, "kept", 4, 0), 4);
	CHECK_EQ(tux3_sync(vol), 0);
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "lost", 4, 0644, 0, 0, &g), 0);
	int ro = open(path, O_RDONLY);
	CHECK(ro >= 0);
	CHECK_EQ(dup2(ro, vol->dev.fd), vol->dev.fd);
	close(ro);
	CHECK(tux3_sync(vol) < 0);
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "more", 4, 0644, 0, 0, &g),
		 -EROFS);
	CHECK_EQ(tux3_unlink(vol, TUX3_ROOT_INO, "kept", 4), -EROFS);
	CHECK_EQ(tux3_setxattr(vol, f, "user.a", "b", 1, 0), -EROFS);
	CHECK_EQ(tux3_sync(vol), -EIO);
	CHECK_EQ(tux3_read(vol, f, buf, 4, 0), 4);	/* reads go on */
	CHECK_EQ(tux3_umount(vol), -EIO);
	fsck_clean(path);
	vol = reopen(NULL, path, false);
	CHECK_EQ(tux3_lookup(vol, TUX3_ROOT_INO, "kept", 4, &g), 0);
	CHECK_EQ(tux3_read(vol, g, buf, 8, 0), 4);
	CHECK(!memcmp(buf, "kept", 4));
	CHECK_EQ(tux3_lookup(vol, TUX3_ROOT_INO, "lost", 4, &g), -ENOENT);
	tux3_close(vol);
}

TEST(orphans_far_apart_after_release) { far_orphan_case(0); }
TEST(orphans_far_apart_above) { far_orphan_case(1); }
TEST(orphans_far_apart_below) { far_orphan_case(2); }

/* The namespace checker sees a wrong link count and a dangling entry. */
TEST(namespace_check_finds_damage)
{
	const char *path = make_volume(12, 16 << 20);
	struct tux3_volume *vol = reopen(NULL, path, false);
	tux3_ino_t f, g;
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "f", 1, 0644, 0, 0, &f), 0);
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "g", 1, 0644, 0, 0, &g), 0);
	CHECK_EQ(tux3_check_namespace(vol, report_ns, NULL), 0);
	/* an inode that claims two links but has one name */
	struct inode inode;
	CHECK_EQ(inode_load(vol, f, &inode), 0);
	inode.nlink = 2;
	CHECK_EQ(inode_store(vol, &inode), 0);
	inode_free(&inode);
	/* an entry whose inode is gone */
	CHECK_EQ(inode_delete(vol, g), 0);
	CHECK_EQ(tux3_check_namespace(vol, NULL, NULL), 2);
	tux3_close(vol);
}

/* Lazy commits (mkfs.tux3 -d): commits wait for no device flush until
 * the unmount, which flushes once; the volume is whole after it. */
TEST(lazy_commits_flush_at_unmount)
{
	const char *path = scratch_volume(12, 16 << 20, 0);
	struct tux3_volume *vol;
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDWR, &vol), 0);
	CHECK_EQ(tux3_set_lazy_commits(vol, 1), 0);
	uint64_t before = vol->dev.flushes;
	char name[32];
	for (unsigned i = 0; i < 50; i++) {
		tux3_ino_t ino;
		unsigned len = (unsigned)sprintf(name, "f%u", i);
		CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, name, len, 0644, 0, 0,
				     &ino), 0);
		CHECK_EQ(tux3_write(vol, ino, name, len, 0), (ssize_t)len);
		if (i % 10 == 9)
			CHECK_EQ(tux3_sync(vol), 0);
	}
	CHECK_EQ(vol->dev.flushes, before);	/* five commits, no flush */
	CHECK_EQ(tux3_set_lazy_commits(vol, 0), 0);
	CHECK_EQ(vol->dev.flushes, before + 1);	/* the skipped ones, once */
	CHECK_EQ(tux3_set_lazy_commits(vol, 0), 0);
	CHECK_EQ(vol->dev.flushes, before + 1);	/* nothing more owed */
	CHECK_EQ(tux3_set_lazy_commits(vol, 1), 0);
	CHECK_EQ(tux3_sync(vol), 0);	/* nothing to commit */
	tux3_ino_t ino;
	CHECK_EQ(tux3_create(vol, TUX3_ROOT_INO, "last", 4, 0644, 0, 0, &ino),
		 0);
	CHECK_EQ(tux3_sync(vol), 0);
	CHECK_EQ(vol->dev.flushes, before + 1);
	CHECK_EQ(tux3_umount(vol), 0);	/* lazy still on: it flushes */
	fsck_clean(path);
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDONLY, &vol), 0);
	CHECK_EQ(tux3_set_lazy_commits(vol, 1), -EROFS);
	CHECK_EQ(tux3_lookup(vol, TUX3_ROOT_INO, "last", 4, &ino), 0);
	char buf[8];
	for (unsigned i = 0; i < 50; i++) {
		unsigned len = (unsigned)sprintf(name, "f%u", i);
		CHECK_EQ(tux3_lookup(vol, TUX3_ROOT_INO, name, len, &ino), 0);
		CHECK_EQ(tux3_read(vol, ino, buf, sizeof(buf), 0), (ssize_t)len);
		CHECK(!memcmp(buf, name, len));
	}
	tux3_close(vol);
}

/* An unmount after lazy commits with nothing left to commit still
 * flushes what they wrote: the device's last event is a flush, and it
 * is the only one. */
TEST(lazy_commits_unmount_flushes_without_a_delta)
{
	const char *path = scratch_volume(12, 16 << 20, 0);
	struct tux3_volume *vol;
	struct recorder *rec = rec_new();
	CHECK(rec != NULL);
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDWR, &vol), 0);
	vol->dev.rec = rec;
	CHECK_EQ(tux3_set_lazy_commits(vol, 1), 0);
	tux3_ino_t ino;
	CHECK_EQ(tux3_mkdir(vol, TUX3_ROOT_INO, "d", 1, 0755, 0, 0, &ino), 0);
	CHECK_EQ(tux3_sync(vol), 0);
	CHECK(vol->unflushed);
	CHECK_EQ(tux3_umount(vol), 0);
	unsigned flushes = 0, writes = 0;
	for (size_t i = 0; i < rec->count; i++) {
		flushes += rec->ev[i].kind == REC_FLUSH;
		writes += rec->ev[i].kind == REC_WRITE;
	}
	CHECK(writes > 0);
	CHECK_EQ(flushes, 1u);
	CHECK(rec->count > 0 && rec->ev[rec->count - 1].kind == REC_FLUSH);
	rec_free(rec);
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDONLY, &vol), 0);
	CHECK_EQ(tux3_lookup(vol, TUX3_ROOT_INO, "d", 1, &ino), 0);
	tux3_close(vol);
}

int main(void)
{
	return run_tests("write");
}

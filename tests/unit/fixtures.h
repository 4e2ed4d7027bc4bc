/*
 * Shared setup helpers for the unit tests:
 *
 *   fake_vol(bits, volblocks) / fake_free(vol)
 *       an in-memory volume (no device) for checks on synthetic blocks
 *   open_oracle(name) / open_oracle_mode(name, mode)
 *       open a decompressed oracle image, or SKIP the case if it is absent
 *   read_vol_block(vol, block)
 *       a malloc'd copy of one block of an opened volume
 *   oracle_or_null(name)
 *       the same read-only open, but NULL when the image is absent (for
 *       optional second images inside one case)
 *   scratch_copy(name)
 *       a writable, sparse copy of an oracle image (the oracle copies are
 *       read-only) in $TUX3_SCRATCH, removed at exit
 *   scratch_image(buf, len)
 *       a crafted image written to $TUX3_SCRATCH, removed at exit
 *   scratch_volume(bits, bytes, compat)
 *       a fresh volume made by tux3_mkfs in the scratch file
 *
 * scratch_copy and scratch_image share one scratch file: each call
 * replaces the previous one.
 */
#ifndef TUX3_TEST_FIXTURES_H
#define TUX3_TEST_FIXTURES_H

#include <fcntl.h>
#include <sys/stat.h>
#include "harness.h"
#include "internal.h"
#include "tux3_fsck.h"

/* ---- in-memory volumes ---- */

static inline struct tux3_volume *fake_vol(unsigned bits, uint64_t volblocks)
{
	struct tux3_volume *vol = calloc(1, sizeof(*vol));
	CHECK(vol);
	vol->dev.fd = -1;
	vol->vops = &vinode_ops;
	vol->blockbits = bits;
	vol->blocksize = 1u << bits;
	vol->volblocks = volblocks;
	vol->reserved_blocks = vol->blocksize >= 8192 ? 1 : 8192 >> bits;
	tux3_clear_error(vol);
	return vol;
}

static inline void fake_free(struct tux3_volume *vol)
{
	for (unsigned i = 0; i < vol->nwarnings; i++)
		free(vol->warnings[i]);
	free(vol->warnings);
	orphan_set_free(&vol->orphans);
	free(vol);
}

/* ---- oracle images ---- */

static inline struct tux3_volume *oracle_open_path(const char *path,
						   enum tux3_open_mode mode)
{
	struct tux3_volume *vol = NULL;
	char msg[512];
	int err = tux3_open_err(path, mode, &vol, msg, sizeof(msg));
	if (err)
		fprintf(stderr, "%s: %s\n", path, msg);
	CHECK_EQ(err, 0);
	return vol;
}

/* The oracle image's path in buf; SKIPs the case when it is absent. */
static inline const char *oracle_image_or_skip(const char *name, char *buf,
					       size_t len)
{
	const char *path = oracle_image(name, buf, len);
	if (!path) {
		fprintf(stderr, "oracle image %s missing (TUX3_ORACLE_DIR)\n",
			name);
		exit(77);
	}
	return path;
}

static inline struct tux3_volume *open_oracle_mode(const char *name,
						   enum tux3_open_mode mode)
{
	char buf[1024];
	return oracle_open_path(oracle_image_or_skip(name, buf, sizeof(buf)),
				mode);
}

static inline struct tux3_volume *open_oracle(const char *name)
{
	return open_oracle_mode(name, TUX3_OPEN_RDONLY);
}

static inline struct tux3_volume *oracle_or_null(const char *name)
{
	char buf[1024];
	const char *path = oracle_image(name, buf, sizeof(buf));
	return path ? oracle_open_path(path, TUX3_OPEN_RDONLY) : NULL;
}

/* A freshly allocated copy of one block of vol (free it). */
static inline uint8_t *read_vol_block(struct tux3_volume *vol, uint64_t block)
{
	uint8_t *b = malloc(vol->blocksize);
	CHECK(b);
	CHECK_EQ(vol_read_block(vol, block, b), 0);
	return b;
}

/* ---- fsck ---- */

static inline int fsck_show_problem(void *ctx,
				    const struct tux3_fsck_problem *p)
{
	(void)ctx;
	fprintf(stderr, "fsck: %s\n", p->text);
	return 0;
}

/* fsck's checking engine runs on path and finds nothing (what it finds is
 * printed). */
static inline void fsck_clean(const char *path)
{
	struct tux3_fsck_result res;
	static const struct tux3_fsck_ops ops = {
		.problem = fsck_show_problem,
	};
	char msg[256];
	int rc = tux3_fsck_run(path, TUX3_FSCK_CHECK, &ops, NULL, &res, msg,
			       sizeof(msg));
	if (rc || res.found)
		fprintf(stderr, "fsck: rc %d, %u problems: %s\n", rc,
			(unsigned)res.found, rc ? msg : "");
	CHECK_EQ(rc, 0);
	CHECK_EQ(res.found, 0);
}

/* ---- scratch files ---- */

static inline char *scratch_path(void)
{
	static char path[600];
	return path;
}

static inline void scratch_remove(void)
{
	if (scratch_path()[0])
		unlink(scratch_path());
}

/* A new empty scratch file (replacing the previous one); returns its fd. */
static inline int scratch_create(void)
{
	static int registered;
	char *path = scratch_path();
	const char *dir = getenv("TUX3_SCRATCH");
	if (path[0])
		unlink(path);
	else if (!registered++)
		atexit(scratch_remove);
	snprintf(path, 600, "%s/tux3-test-XXXXXX", dir ? dir : "/tmp");
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	return fd;
}

/* A fresh volume of bytes in the scratch file, made by tux3_mkfs (every
 * timestamp 1 ns, extension features compat). */
static inline const char *scratch_volume(unsigned bits, uint64_t bytes,
					 uint32_t compat)
{
	int fd = scratch_create();
	CHECK(ftruncate(fd, (off_t)bytes) == 0);
	close(fd);
	struct tux3_mkfs_params p = { .blockbits = bits,
				      .volblocks = bytes >> bits,
				      .time_ns = 1, .compat = compat };
	char err[300];
	CHECK_EQ(tux3_mkfs(scratch_path(), &p, err, sizeof(err)), 0);
	return scratch_path();
}

static inline const char *scratch_image(const void *buf, size_t len)
{
	int fd = scratch_create();
	CHECK(write(fd, buf, len) == (ssize_t)len);
	close(fd);
	return scratch_path();
}

static inline const char *scratch_copy(const char *name)
{
	char buf[1024];
	const char *src = oracle_image_or_skip(name, buf, sizeof(buf));
	int out = scratch_create();
	int in = open(src, O_RDONLY);
	CHECK(in >= 0);
	struct stat st;
	CHECK(fstat(in, &st) == 0);
	CHECK(ftruncate(out, st.st_size) == 0);
	static char data[1 << 16];
	for (off_t pos = 0; pos < st.st_size;) {
		off_t d = lseek(in, pos, SEEK_DATA);
		if (d < 0)
			break;
		off_t h = lseek(in, d, SEEK_HOLE);
		for (off_t o = d; o < h;) {
			size_t n = h - o < (off_t)sizeof(data) ? (size_t)(h - o)
							       : sizeof(data);
			CHECK(pread(in, data, n, o) == (ssize_t)n);
			CHECK(pwrite(out, data, n, o) == (ssize_t)n);
			o += (off_t)n;
		}
		pos = h;
	}
	close(in);
	close(out);
	return scratch_path();
}

/* A regular file made in dir and written with buf (the versions tests). */
static inline tux3_ino_t file_made(struct tux3_volume *vol, tux3_ino_t dir,
				   const char *name, const void *buf,
				   size_t len)
{
	tux3_ino_t ino = 0;
	CHECK_EQ(tux3_create(vol, dir, name, strlen(name), 0100644, 0, 0,
			     &ino), 0);
	CHECK_EQ(tux3_write(vol, ino, buf, len, 0), (ssize_t)len);
	return ino;
}

#endif

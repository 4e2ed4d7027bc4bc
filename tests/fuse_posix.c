/*
 * fuse_posix: our POSIX conformance list for the namespace operations,
 * run inside a mounted directory (issue 9: tux3fuse).
 *
 *   fuse_posix DIR [--user UID:GID]
 *
 * Works in a fresh subdirectory of DIR and prints one PASS or FAIL line
 * per case ("PASS posix/rename/file-over-dir"), then exits 0 if every
 * case passed, 1 otherwise (2: bad usage or setup).  The cases come from
 * the POSIX specification of each call (its ERRORS section) and the Linux
 * man pages, where Linux chooses among the errors POSIX allows (EISDIR for
 * unlink of a directory, ENOTEMPTY for a non-empty directory, EBUSY for a
 * mount point) or adds its own (renameat2 flags).
 *
 * Run as root it checks rename, renameat2 (RENAME_NOREPLACE and
 * RENAME_EXCHANGE), link, unlink, rmdir (DIR itself must be the mount
 * point for rmdir/mount-point), mkdir, open flags, truncate, symlink,
 * chmod/chown (set-ID bits cleared by chown) and utimensat.  With
 * --user UID:GID it then makes root-owned fixtures and, in a child that
 * has dropped to UID:GID (setgroups to none), checks the permission
 * cases: EACCES for writes to directories and files it may not write,
 * EPERM for chmod/chown/utimensat of files it does not own and for the
 * sticky bit, set-group-ID dropped by chmod for a group it is not in,
 * set-user-ID cleared by its write.  The mount must then allow other
 * users (allow_other, which with tux3fuse brings default_permissions).
 *
 * --atime MODE says what the mount does with access times, and the
 * atime cases check it: "relatime" (the default of a volume made with
 * mkfs.tux3 -O atime: utimensat sets atime, UTIME_NOW and UTIME_OMIT
 * work on it alone, and a read updates it only when it is not newer
 * than mtime and ctime or is a day old), "strict" (-o strictatime:
 * every read), "noatime" (-o noatime: reads never) and "none" (the
 * default: a volume without the feature, where atime reads as mtime).
 * --only-atime runs the atime cases alone (a second mount's options).
 * --atime-set FILE and --atime-get FILE leave a known atime on FILE and
 * check it after the caller remounts.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static int failures, cases;
/* what the mount does with access times (--atime MODE) */
enum atime_mode { AT_NONE, AT_RELATIME, AT_STRICT, AT_NOATIME };
static enum atime_mode atime_mode = AT_NONE;

static void result(bool ok, const char *name, const char *fmt, ...)
{
	cases++;
	if (ok) {
		printf("PASS posix/%s\n", name);
	} else {
		failures++;
		printf("FAIL posix/%s", name);
		if (fmt) {
			va_list ap;
			va_start(ap, fmt);
			printf(": ");
			vprintf(fmt, ap);
			va_end(ap);
		}
		printf("\n");
	}
	fflush(stdout);
}

static const char *ename(int e)
{
	static char buf[32];
	switch (e) {
	case 0: return "success";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EACCES: return "EACCES";
	case EBUSY: return "EBUSY";
	case EEXIST: return "EEXIST";
	case ENOTDIR: return "ENOTDIR";
	case EISDIR: return "EISDIR";
	case EINVAL: return "EINVAL";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case ENOTEMPTY: return "ENOTEMPTY";
	case ELOOP: return "ELOOP";
	case EBADF: return "EBADF";
	case EXDEV: return "EXDEV";
	case EROFS: return "EROFS";
	case ENOSYS: return "ENOSYS";
	default:
		snprintf(buf, sizeof(buf), "errno %d", e);
		return buf;
	}
}

/* ret is a call's result: it must fail with e1 (or e2 when not 0) */
static void expect_err(const char *name, long ret, int e1, int e2)
{
	int e = errno;
	if (ret != -1)
		result(false, name, "succeeded, expected %s", ename(e1));
	else
		result(e == e1 || (e2 && e == e2), name, "%s, expected %s%s%s",
		       ename(e), ename(e1), e2 ? " or " : "",
		       e2 ? ename(e2) : "");
}

static void expect_ok(const char *name, long ret)
{
	int e = errno;
	result(ret != -1, name, "failed: %s", ename(e));
}

/* Setup steps that must work: a failure here is a broken fixture. */
static void must(long ret, const char *what)
{
	if (ret == -1) {
		fprintf(stderr, "fuse_posix: setup: %s: %s\n", what,
			strerror(errno));
		exit(2);
	}
}

static void put(const char *path, const char *data, mode_t mode)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, mode);
	must(fd, path);
	size_t len = strlen(data);
	must(write(fd, data, len) == (ssize_t)len ? 0 : -1, path);
	must(close(fd), path);
}

/* the file's content ("" if unreadable), at most 255 bytes */
static const char *get(const char *path)
{
	static char buf[256];
	int fd = open(path, O_RDONLY);
	buf[0] = 0;
	if (fd < 0)
		return buf;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	close(fd);
	return buf;
}

static bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

static mode_t mode_of(const char *path)
{
	struct stat st;
	return lstat(path, &st) ? (mode_t)-1 : st.st_mode;
}

static long renameat2_(const char *a, const char *b, unsigned flags)
{
	return syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, flags);
}

/* n times c (n <= PATH_MAX), in one of four static buffers */
static char *repeat(int c, size_t n)
{
	static char buf[4][PATH_MAX + 1];
	static unsigned next;
	char *s = buf[next++ % 4];
	memset(s, c, n);
	s[n] = 0;
	return s;
}

/* ---- rename and renameat2 ---- */

/* RENAME_WHITEOUT (overlayfs): the source moves, a character device 0:0
 * takes its name; over an existing target too.  Needs CAP_MKNOD. */
static void test_whiteout(void)
{
	struct stat st;
	if (geteuid() != 0) {
		printf("SKIP renameat2/whiteout not root\n");
		return;
	}
	put("w", "w", 0644);
	put("wt", "old", 0644);
	expect_ok("renameat2/whiteout", renameat2_("w", "w2",
						   RENAME_WHITEOUT));
	result(lstat("w", &st) == 0 && S_ISCHR(st.st_mode) &&
	       st.st_rdev == 0 && !strcmp(get("w2"), "w"),
	       "renameat2/whiteout-result", "mode %o",
	       (unsigned)mode_of("w"));
	expect_ok("renameat2/whiteout-over-file",
		  renameat2_("w2", "wt", RENAME_WHITEOUT));
	result(S_ISCHR(mode_of("w2")) && !strcmp(get("wt"), "w"),
	       "renameat2/whiteout-over-file-result", NULL);
	expect_err("renameat2/whiteout-exchange",
		   renameat2_("wt", "w", RENAME_WHITEOUT | RENAME_EXCHANGE),
		   EINVAL, 0);
	expect_err("renameat2/whiteout-missing",
		   renameat2_("nosuch", "wx", RENAME_WHITEOUT), ENOENT, 0);
	result(!exists(".tux3fuse-whiteout.0"), "renameat2/whiteout-no-temp",
	       "the temporary name is left");
}

static void test_rename(void)
{
	must(mkdir("r", 0755), "r");
	must(chdir("r"), "r");
	put("f", "f", 0644);
	put("g", "g", 0644);
	must(mkdir("d", 0755), "d");
	must(mkdir("full", 0755), "full");
	put("full/x", "x", 0644);
	must(mkdir("empty", 0755), "empty");
	must(mkdir("d/sub", 0755), "d/sub");

	expect_err("rename/dir-over-nonempty-dir", rename("d", "full"),
		   ENOTEMPTY, EEXIST);
	expect_err("rename/file-over-dir", rename("f", "d"), EISDIR, 0);
	expect_err("rename/dir-over-file", rename("d", "f"), ENOTDIR, 0);
	expect_err("rename/into-own-subtree", rename("d", "d/sub/x"),
		   EINVAL, 0);
	expect_err("rename/onto-own-child", rename("d", "d/sub"),
		   EINVAL, ENOTEMPTY);
	expect_err("rename/missing-source", rename("nosuch", "x"), ENOENT, 0);
	expect_err("rename/missing-target-dir", rename("f", "nodir/x"),
		   ENOENT, 0);
	expect_err("rename/path-through-file", rename("f", "g/x"),
		   ENOTDIR, 0);
	expect_err("rename/source-through-file", rename("f/x", "y"),
		   ENOTDIR, 0);
	expect_err("rename/dot", rename("d/.", "x"), EBUSY, EINVAL);
	expect_err("rename/dotdot", rename("d/sub/..", "x"), EBUSY, EINVAL);
	expect_err("rename/name-too-long",
		   rename("f", repeat('n', NAME_MAX + 1)), ENAMETOOLONG, 0);

	/* two names of one file: POSIX says nothing happens */
	must(link("f", "f2"), "f2");
	expect_ok("rename/hard-links-same-file", rename("f", "f2"));
	result(exists("f") && exists("f2"), "rename/hard-links-both-stay",
	       "a name went away");
	must(unlink("f2"), "f2");

	expect_ok("rename/file-over-file", rename("g", "f"));
	result(!exists("g") && !strcmp(get("f"), "g"),
	       "rename/file-over-file-content", "f holds \"%s\"", get("f"));
	expect_ok("rename/dir-over-empty-dir", rename("empty", "d/sub"));
	result(!exists("empty") && S_ISDIR(mode_of("d/sub")),
	       "rename/dir-over-empty-dir-result", NULL);
	struct stat a, b;
	must(stat(".", &a), ".");
	must(mkdir("m", 0755), "m");
	must(rename("m", "d/m"), "m");
	must(stat(".", &b), ".");
	result(b.st_nlink == a.st_nlink, "rename/dir-across-nlink",
	       "parent nlink %lu then %lu", (unsigned long)a.st_nlink,
	       (unsigned long)b.st_nlink);

	/* renameat2 (Linux) */
	put("p", "p", 0644);
	put("q", "q", 0644);
	long r = renameat2_("p", "q", RENAME_NOREPLACE);
	if (r == -1 && errno == ENOSYS) {
		printf("SKIP posix/renameat2 no renameat2 system call\n");
	} else {
		errno = r == -1 ? errno : 0;
		expect_err("renameat2/noreplace-existing", r, EEXIST, 0);
		result(!strcmp(get("p"), "p") && !strcmp(get("q"), "q"),
		       "renameat2/noreplace-unchanged", NULL);
		expect_ok("renameat2/noreplace-new",
			  renameat2_("p", "p2", RENAME_NOREPLACE));
		result(!exists("p") && !strcmp(get("p2"), "p"),
		       "renameat2/noreplace-new-result", NULL);
		expect_ok("renameat2/exchange",
			  renameat2_("p2", "q", RENAME_EXCHANGE));
		result(!strcmp(get("p2"), "q") && !strcmp(get("q"), "p"),
		       "renameat2/exchange-result", NULL);
		expect_ok("renameat2/exchange-file-dir",
			  renameat2_("q", "d", RENAME_EXCHANGE));
		result(S_ISDIR(mode_of("q")) && S_ISREG(mode_of("d")) &&
		       S_ISDIR(mode_of("q/sub")),
		       "renameat2/exchange-file-dir-result", NULL);
		expect_err("renameat2/exchange-missing",
			   renameat2_("p2", "nosuch", RENAME_EXCHANGE),
			   ENOENT, 0);
		expect_err("renameat2/noreplace-and-exchange",
			   renameat2_("p2", "q",
				      RENAME_NOREPLACE | RENAME_EXCHANGE),
			   EINVAL, 0);
		expect_err("renameat2/unknown-flag",
			   renameat2_("p2", "z", 1u << 30), EINVAL, 0);
		test_whiteout();
	}
	must(chdir(".."), "..");
}

/* ---- link, unlink ---- */
static void test_link_unlink(void)
{
	struct stat a, b;
	must(mkdir("l", 0755), "l");
	must(chdir("l"), "l");
	put("f", "f", 0644);
	put("g", "g", 0644);
	must(mkdir("d", 0755), "d");

	expect_err("link/existing-target", link("f", "g"), EEXIST, 0);
	expect_err("link/directory", link("d", "d2"), EPERM, 0);
	expect_err("link/missing-source", link("nosuch", "x"), ENOENT, 0);
	expect_err("link/missing-target-dir", link("f", "nodir/x"),
		   ENOENT, 0);
	expect_err("link/target-through-file", link("f", "g/x"), ENOTDIR, 0);
	expect_ok("link/ok", link("f", "d/f2"));
	must(stat("f", &a), "f");
	must(stat("d/f2", &b), "d/f2");
	result(a.st_ino == b.st_ino && a.st_nlink == 2 && b.st_nlink == 2,
	       "link/nlink", "ino %lu/%lu nlink %lu/%lu",
	       (unsigned long)a.st_ino, (unsigned long)b.st_ino,
	       (unsigned long)a.st_nlink, (unsigned long)b.st_nlink);

	expect_err("unlink/directory", unlink("d"), EISDIR, EPERM);
	expect_err("unlink/missing", unlink("nosuch"), ENOENT, 0);
	expect_err("unlink/path-through-file", unlink("f/x"), ENOTDIR, 0);
	expect_err("unlink/missing-dir", unlink("nodir/x"), ENOENT, 0);
	expect_ok("unlink/one-of-two", unlink("f"));
	must(stat("d/f2", &b), "d/f2");
	result(b.st_nlink == 1 && !strcmp(get("d/f2"), "f"),
	       "unlink/other-name-stays", NULL);
	/* an open file outlives its last name */
	int fd = open("g", O_RDWR);
	must(fd, "g");
	expect_ok("unlink/open-file", unlink("g"));
	char buf[8] = { 0 };
	must(fstat(fd, &a), "fstat");
	result(pwrite(fd, "G", 1, 0) == 1 && pread(fd, buf, 4, 0) == 1 &&
	       buf[0] == 'G' && a.st_nlink == 0 && !exists("g"),
	       "unlink/open-file-usable", "nlink %lu, read \"%s\"",
	       (unsigned long)a.st_nlink, buf);
	close(fd);
	must(chdir(".."), "..");
}

/* ---- rmdir, mkdir ---- */
static void test_dirs(const char *top)
{
	struct stat a, b;
	must(mkdir("m", 0755), "m");
	must(chdir("m"), "m");
	must(mkdir("full", 0755), "full");
	put("full/x", "x", 0644);
	put("f", "f", 0644);
	must(mkdir("e", 0755), "e");

	expect_err("rmdir/not-empty", rmdir("full"), ENOTEMPTY, EEXIST);
	expect_err("rmdir/file", rmdir("f"), ENOTDIR, 0);
	expect_err("rmdir/dot", rmdir("e/."), EINVAL, EBUSY);
	expect_err("rmdir/dotdot", rmdir("e/.."), ENOTEMPTY, EEXIST);
	expect_err("rmdir/missing", rmdir("nosuch"), ENOENT, 0);
	expect_err("rmdir/path-through-file", rmdir("f/x"), ENOTDIR, 0);
	if (top) {
		expect_err("rmdir/mount-point", rmdir(top), EBUSY, 0);
	}
	must(stat(".", &a), ".");
	expect_ok("rmdir/empty", rmdir("e"));
	must(stat(".", &b), ".");
	result(b.st_nlink == a.st_nlink - 1 && !exists("e"),
	       "rmdir/parent-nlink", "%lu then %lu",
	       (unsigned long)a.st_nlink, (unsigned long)b.st_nlink);

	expect_err("mkdir/existing-dir", mkdir("full", 0755), EEXIST, 0);
	expect_err("mkdir/existing-file", mkdir("f", 0755), EEXIST, 0);
	expect_err("mkdir/missing-parent", mkdir("nodir/x", 0755), ENOENT, 0);
	expect_err("mkdir/path-through-file", mkdir("f/x", 0755), ENOTDIR, 0);
	expect_err("mkdir/name-too-long", mkdir(repeat('m', NAME_MAX + 1),
						0755), ENAMETOOLONG, 0);
	char *longest = repeat('m', NAME_MAX);
	expect_ok("mkdir/name-max", mkdir(longest, 0755));
	result(S_ISDIR(mode_of(longest)), "mkdir/name-max-there", NULL);
	must(stat(".", &a), ".");
	mode_t old = umask(022);
	expect_ok("mkdir/ok", mkdir("n", 0777));
	umask(old);
	must(stat(".", &b), ".");
	struct stat n;
	must(stat("n", &n), "n");
	result((n.st_mode & 07777) == 0755 && n.st_nlink == 2 &&
	       b.st_nlink == a.st_nlink + 1, "mkdir/mode-umask-nlink",
	       "mode %o nlink %lu parent %lu then %lu",
	       (unsigned)n.st_mode & 07777, (unsigned long)n.st_nlink,
	       (unsigned long)a.st_nlink, (unsigned long)b.st_nlink);
	must(chdir(".."), "..");
}

/* ---- open flags ---- */
static void test_open(void)
{
	struct stat st;
	char buf[64] = { 0 };
	must(mkdir("o", 0755), "o");
	must(chdir("o"), "o");
	put("f", "hello", 0644);
	must(mkdir("d", 0755), "d");
	must(symlink("nowhere", "dangling"), "dangling");
	must(symlink("f", "lnk"), "lnk");

	expect_err("open/creat-excl-existing",
		   open("f", O_CREAT | O_EXCL | O_WRONLY, 0644), EEXIST, 0);
	expect_err("open/creat-excl-dangling-symlink",
		   open("dangling", O_CREAT | O_EXCL | O_WRONLY, 0644),
		   EEXIST, 0);
	result(!exists("nowhere"), "open/creat-excl-no-follow", NULL);
	expect_err("open/directory-on-file", open("f", O_RDONLY | O_DIRECTORY),
		   ENOTDIR, 0);
	expect_err("open/dir-for-write", open("d", O_WRONLY), EISDIR, 0);
	expect_err("open/dir-for-rdwr", open("d", O_RDWR), EISDIR, 0);
	expect_err("open/creat-on-dir", open("d", O_CREAT | O_WRONLY, 0644),
		   EISDIR, 0);
	expect_err("open/missing", open("nosuch", O_RDONLY), ENOENT, 0);
	expect_err("open/creat-missing-dir",
		   open("nodir/x", O_CREAT | O_WRONLY, 0644), ENOENT, 0);
	expect_err("open/path-through-file", open("f/x", O_RDONLY),
		   ENOTDIR, 0);
	expect_err("open/nofollow-symlink", open("lnk", O_RDONLY | O_NOFOLLOW),
		   ELOOP, 0);
	expect_err("open/name-too-long",
		   open(repeat('o', NAME_MAX + 1), O_CREAT | O_WRONLY, 0644),
		   ENAMETOOLONG, 0);
	int fd = open("d", O_RDONLY | O_DIRECTORY);
	expect_ok("open/directory-on-dir", fd);
	if (fd >= 0)
		close(fd);

	/* O_CREAT through a dangling symlink creates its target */
	fd = open("dangling", O_CREAT | O_WRONLY, 0644);
	expect_ok("open/creat-through-dangling-symlink", fd);
	if (fd >= 0)
		close(fd);
	result(S_ISREG(mode_of("nowhere")), "open/creat-made-target", NULL);

	mode_t old = umask(027);
	fd = open("new", O_CREAT | O_EXCL | O_WRONLY, 0666);
	umask(old);
	expect_ok("open/creat-excl-new", fd);
	if (fd >= 0)
		close(fd);
	must(stat("new", &st), "new");
	result((st.st_mode & 07777) == 0640 && st.st_size == 0,
	       "open/creat-mode-umask", "mode %o", (unsigned)st.st_mode & 07777);

	fd = open("f", O_WRONLY | O_TRUNC);
	expect_ok("open/trunc", fd);
	if (fd >= 0)
		close(fd);
	must(stat("f", &st), "f");
	result(st.st_size == 0, "open/trunc-size", "size %lld",
	       (long long)st.st_size);

	put("a", "12345", 0644);
	fd = open("a", O_WRONLY | O_APPEND);
	must(fd, "a");
	must(lseek(fd, 0, SEEK_SET), "lseek");
	ssize_t w1 = write(fd, "ab", 2);
	off_t pos = lseek(fd, 0, SEEK_CUR);
	ssize_t w2 = pwrite(fd, "Z", 1, 0);	/* Linux: appends too */
	close(fd);
	result(w1 == 2 && pos == 7 && w2 == 1 && !strcmp(get("a"), "12345abZ"),
	       "open/append", "file \"%s\", offset after write %lld",
	       get("a"), (long long)pos);

	/* reading a write-only descriptor, writing a read-only one */
	fd = open("a", O_WRONLY);
	must(fd, "a");
	expect_err("open/read-write-only-fd", read(fd, buf, 1), EBADF, 0);
	close(fd);
	fd = open("a", O_RDONLY);
	must(fd, "a");
	expect_err("open/write-read-only-fd", write(fd, "x", 1), EBADF, 0);
	close(fd);
	must(chdir(".."), "..");
}

/* ---- truncate ---- */
static void test_truncate(void)
{
	struct stat st;
	must(mkdir("t", 0755), "t");
	must(chdir("t"), "t");
	must(mkdir("d", 0755), "d");
	put("f", "0123456789", 0644);

	expect_err("truncate/dir", truncate("d", 0), EISDIR, 0);
	expect_err("truncate/negative", truncate("f", -1), EINVAL, 0);
	expect_err("truncate/missing", truncate("nosuch", 0), ENOENT, 0);
	expect_err("truncate/path-through-file", truncate("f/x", 0),
		   ENOTDIR, 0);
	int fd = open("f", O_RDONLY);
	must(fd, "f");
	expect_err("ftruncate/read-only-fd", ftruncate(fd, 0), EINVAL, EBADF);
	close(fd);

	expect_ok("truncate/shrink", truncate("f", 4));
	expect_ok("truncate/grow", truncate("f", 8192));
	char buf[8192];
	fd = open("f", O_RDONLY);
	must(fd, "f");
	ssize_t n = read(fd, buf, sizeof(buf));
	close(fd);
	bool zeros = n == 8192 && !memcmp(buf, "0123", 4);
	for (ssize_t i = 4; zeros && i < n; i++)
		zeros = buf[i] == 0;
	result(zeros, "truncate/grow-reads-zeros",
	       "read %zd bytes, old data or garbage past 4", n);
	must(stat("f", &st), "f");
	result(st.st_size == 8192, "truncate/size", "size %lld",
	       (long long)st.st_size);
	must(chdir(".."), "..");
}

/* ---- symlink, readlink ---- */
static void test_symlink(void)
{
	struct stat st;
	char buf[PATH_MAX + 16];
	must(mkdir("s", 0755), "s");
	must(chdir("s"), "s");
	put("f", "f", 0644);

	expect_err("symlink/existing", symlink("x", "f"), EEXIST, 0);
	expect_err("symlink/name-too-long",
		   symlink("x", repeat('s', NAME_MAX + 1)), ENAMETOOLONG, 0);
	expect_err("symlink/target-too-long",
		   symlink(repeat('t', PATH_MAX), "big"), ENAMETOOLONG, 0);
	expect_err("symlink/missing-dir", symlink("x", "nodir/l"), ENOENT, 0);
	char *longest = repeat('t', PATH_MAX - 1);	/* 4095 bytes */
	expect_ok("symlink/target-path-max", symlink(longest, "long"));
	ssize_t n = readlink("long", buf, sizeof(buf));
	result(n == PATH_MAX - 1 && !memcmp(buf, longest, (size_t)n),
	       "symlink/readlink-long", "readlink gave %zd bytes", n);
	must(lstat("long", &st), "long");
	result(S_ISLNK(st.st_mode) && st.st_size == PATH_MAX - 1,
	       "symlink/lstat-size", "size %lld", (long long)st.st_size);
	expect_err("readlink/not-symlink", readlink("f", buf, sizeof(buf)),
		   EINVAL, 0);
	expect_err("readlink/missing", readlink("nosuch", buf, sizeof(buf)),
		   ENOENT, 0);
	must(symlink("nowhere", "dangling"), "dangling");
	expect_err("symlink/dangling-stat", stat("dangling", &st), ENOENT, 0);
	/* a loop of links */
	must(symlink("loop2", "loop1"), "loop1");
	must(symlink("loop1", "loop2"), "loop2");
	expect_err("symlink/loop", stat("loop1", &st), ELOOP, 0);
	must(chdir(".."), "..");
}

/* ---- chmod, chown (root) ---- */
static void test_chmod_chown(void)
{
	struct stat a, b;
	must(mkdir("c", 0755), "c");
	must(chdir("c"), "c");
	put("f", "f", 0644);

	expect_ok("chmod/setuid", chmod("f", 04755));
	result((mode_of("f") & 07777) == 04755, "chmod/mode", "mode %o",
	       (unsigned)mode_of("f") & 07777);
	expect_err("chmod/missing", chmod("nosuch", 0644), ENOENT, 0);
	must(stat("f", &a), "f");
	expect_ok("chown/ok", chown("f", 1234, 5678));
	must(stat("f", &b), "f");
	/* Linux clears set-user-ID (and set-group-ID with group execute)
	 * of a file whose owner changes, even for root: the kernel sends
	 * the mode with the owner */
	result(b.st_uid == 1234 && b.st_gid == 5678 &&
	       (b.st_mode & 07777) == 0755, "chown/clears-setuid",
	       "uid %u gid %u mode %o", (unsigned)b.st_uid,
	       (unsigned)b.st_gid, (unsigned)b.st_mode & 07777);
	must(chmod("f", 02755), "chmod");
	must(chown("f", 1235, -1), "chown");
	result((mode_of("f") & 07777) == 0755, "chown/clears-setgid",
	       "mode %o", (unsigned)mode_of("f") & 07777);
	must(chmod("f", 02745), "chmod");	/* no group execute: a lock */
	must(chown("f", 1236, -1), "chown");
	result((mode_of("f") & 07777) == 02745,
	       "chown/keeps-setgid-without-group-exec", "mode %o",
	       (unsigned)mode_of("f") & 07777);
	must(stat("f", &a), "f");
	expect_ok("chown/minus-one", chown("f", (uid_t)-1, (gid_t)-1));
	must(stat("f", &b), "f");
	result(a.st_uid == b.st_uid && a.st_gid == b.st_gid &&
	       a.st_mode == b.st_mode, "chown/minus-one-unchanged", NULL);
	expect_err("chown/missing", chown("nosuch", 1, 1), ENOENT, 0);
	must(symlink("f", "l"), "l");
	expect_ok("lchown/symlink", lchown("l", 42, 43));
	must(lstat("l", &a), "l");
	must(stat("f", &b), "f");
	result(a.st_uid == 42 && a.st_gid == 43 && b.st_uid == 1236,
	       "lchown/link-not-target", NULL);
	/* chmod changes ctime, not mtime */
	struct timespec old[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
	must(utimensat(AT_FDCWD, "f", old, 0), "utimensat");
	must(stat("f", &a), "f");
	must(chmod("f", 0600), "chmod");
	must(stat("f", &b), "f");
	result(b.st_mtim.tv_sec == 1000000000 &&
	       (b.st_ctim.tv_sec > a.st_ctim.tv_sec ||
		(b.st_ctim.tv_sec == a.st_ctim.tv_sec &&
		 b.st_ctim.tv_nsec >= a.st_ctim.tv_nsec)) &&
	       b.st_ctim.tv_sec > 1000000000, "chmod/ctime", NULL);
	must(chdir(".."), "..");
}

static int64_t ns(struct timespec t)
{
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* ---- utimensat ---- */
static void test_utimensat(void)
{
	struct stat a, b;
	struct timespec before, after;
	must(mkdir("u", 0755), "u");
	must(chdir("u"), "u");
	put("f", "f", 0644);

	struct timespec t[2] = { { 1234567890, 123456789 },
				 { 1300000000, 987654321 } };
	expect_ok("utimensat/times", utimensat(AT_FDCWD, "f", t, 0));
	must(stat("f", &a), "f");
	result(a.st_mtim.tv_sec == 1300000000 &&
	       a.st_mtim.tv_nsec == 987654321, "utimensat/mtime-ns",
	       "mtime %lld.%09ld", (long long)a.st_mtim.tv_sec,
	       a.st_mtim.tv_nsec);
	/* the atime given (or, without the feature, the mtime) */
	result(ns(a.st_atim) == (atime_mode == AT_NONE ? ns(a.st_mtim) :
				 ns(t[0])), "utimensat/atime", NULL);

	struct timespec omit[2] = { { 0, UTIME_NOW }, { 0, UTIME_OMIT } };
	clock_gettime(CLOCK_REALTIME, &before);
	expect_ok("utimensat/omit-mtime", utimensat(AT_FDCWD, "f", omit, 0));
	must(stat("f", &b), "f");
	result(ns(b.st_mtim) == ns(a.st_mtim) &&
	       ns(b.st_ctim) >= ns(before) - 1000000000,
	       "utimensat/omit-keeps-mtime-sets-ctime", NULL);

	struct timespec both_omit[2] = { { 0, UTIME_OMIT },
					 { 0, UTIME_OMIT } };
	must(stat("f", &a), "f");
	expect_ok("utimensat/both-omit",
		  utimensat(AT_FDCWD, "f", both_omit, 0));
	must(stat("f", &b), "f");
	result(ns(b.st_mtim) == ns(a.st_mtim), "utimensat/both-omit-nothing",
	       NULL);

	struct timespec now[2] = { { 0, UTIME_NOW }, { 0, UTIME_NOW } };
	clock_gettime(CLOCK_REALTIME, &before);
	expect_ok("utimensat/now", utimensat(AT_FDCWD, "f", now, 0));
	clock_gettime(CLOCK_REALTIME, &after);
	must(stat("f", &b), "f");
	/* (the kernel's clock is coarse: a tick of slack) */
	result(ns(b.st_mtim) >= ns(before) - 20000000 &&
	       ns(b.st_mtim) <= ns(after) + 20000000, "utimensat/now-mtime",
	       "mtime %lld.%09ld not in [%lld, %lld]",
	       (long long)b.st_mtim.tv_sec, b.st_mtim.tv_nsec,
	       (long long)before.tv_sec, (long long)after.tv_sec);
	expect_ok("utimensat/null", utimensat(AT_FDCWD, "f", NULL, 0));

	struct timespec bad[2] = { { 0, 1000000000 }, { 0, 0 } };
	expect_err("utimensat/bad-nsec", utimensat(AT_FDCWD, "f", bad, 0),
		   EINVAL, 0);
	expect_err("utimensat/missing", utimensat(AT_FDCWD, "nosuch", t, 0),
		   ENOENT, 0);
	must(symlink("f", "l"), "l");
	struct timespec lt[2] = { { 1111111111, 0 }, { 1111111111, 0 } };
	expect_ok("utimensat/nofollow",
		  utimensat(AT_FDCWD, "l", lt, AT_SYMLINK_NOFOLLOW));
	must(lstat("l", &a), "l");
	must(stat("f", &b), "f");
	result(a.st_mtim.tv_sec == 1111111111 &&
	       b.st_mtim.tv_sec != 1111111111, "utimensat/nofollow-link-only",
	       NULL);
	/* a write changes mtime and ctime */
	must(utimensat(AT_FDCWD, "f", t, 0), "utimensat");
	int fd = open("f", O_WRONLY);
	must(fd, "f");
	must(write(fd, "x", 1), "write");
	close(fd);
	must(stat("f", &b), "f");
	result(b.st_mtim.tv_sec > 1300000000, "write/updates-mtime", NULL);
	must(chdir(".."), "..");
}

/* ---- access time (--atime MODE) ---- */

static int64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return ns(t);
}

static struct timespec ts_of(int64_t v)
{
	return (struct timespec){ v / 1000000000, v % 1000000000 };
}

/* atime and mtime of f set to now - a_ago and now - m_ago seconds */
static void set_times(const char *f, int64_t a_ago, int64_t m_ago)
{
	int64_t now = now_ns();
	struct timespec t[2] = { ts_of(now - a_ago * 1000000000),
				 ts_of(now - m_ago * 1000000000) };
	must(utimensat(AT_FDCWD, f, t, 0), f);
}

static int64_t atime_of(const char *f)
{
	struct stat st;
	must(stat(f, &st), f);
	return ns(st.st_atim);
}

/* one read of f's first byte; whether its atime then moved to now */
static bool read_updates(const char *f)
{
	char c;
	int64_t before = atime_of(f), start = now_ns() - 20000000;
	int fd = open(f, O_RDONLY);
	must(fd, f);
	must(read(fd, &c, 1), "read");
	close(fd);
	int64_t after = atime_of(f);
	return after != before && after >= start;
}

static void test_atime_utimensat(void)
{
	struct timespec t[2] = { { 1234567890, 123456789 },
				 { 1300000000, 987654321 } };
	must(utimensat(AT_FDCWD, "f", t, 0), "f");
	int64_t a = atime_of("f");
	if (atime_mode == AT_NONE) {
		result(a == 1300000000987654321LL, "atime/none-reads-mtime",
		       "atime %lld", (long long)a);
		return;
	}
	result(a == 1234567890123456789LL, "atime/utimensat-times",
	       "atime %lld", (long long)a);
	/* UTIME_OMIT for atime keeps it while mtime changes */
	struct timespec keep[2] = { { 0, UTIME_OMIT }, { 1400000000, 0 } };
	must(utimensat(AT_FDCWD, "f", keep, 0), "f");
	struct stat st;
	must(stat("f", &st), "f");
	result(ns(st.st_atim) == 1234567890123456789LL &&
	       st.st_mtim.tv_sec == 1400000000, "atime/utimensat-omit",
	       "atime %lld mtime %lld", (long long)ns(st.st_atim),
	       (long long)st.st_mtim.tv_sec);
	/* UTIME_NOW for atime alone: now, mtime kept */
	int64_t before = now_ns() - 20000000;
	struct timespec now[2] = { { 0, UTIME_NOW }, { 0, UTIME_OMIT } };
	must(utimensat(AT_FDCWD, "f", now, 0), "f");
	must(stat("f", &st), "f");
	result(ns(st.st_atim) >= before && ns(st.st_atim) <= now_ns() +
	       20000000 && st.st_mtim.tv_sec == 1400000000,
	       "atime/utimensat-now", "atime %lld", (long long)ns(st.st_atim));
}

static void test_atime(void)
{
	must(mkdir("at", 0755), "at");
	must(chdir("at"), "at");
	put("f", "data", 0644);
	test_atime_utimensat();
	bool never = atime_mode == AT_NONE || atime_mode == AT_NOATIME;
	bool strict = atime_mode == AT_STRICT;

	/* atime older than mtime: relatime and strictatime update */
	set_times("f", 200, 100);
	result(read_updates("f") == !never, "atime/read-older-than-mtime",
	       never ? "a read changed the atime" : "atime kept");
	/* atime newer than mtime and ctime (utimensat made ctime now: so
	 * an atime ahead of the clock) and recent: only strictatime */
	set_times("f", -100, 200);
	result(read_updates("f") == strict, "atime/read-recent",
	       strict ? "atime kept" : "a read changed the atime");
	/* a day old: relatime updates too */
	set_times("f", 25 * 3600, 48 * 3600);
	result(read_updates("f") == !never, "atime/read-day-old",
	       never ? "a read changed the atime" : "atime kept");
	/* a second read right after (relatime: atime now newer) */
	if (atime_mode == AT_RELATIME)
		result(!read_updates("f"), "atime/read-again-relatime",
		       "the second read changed the atime");
	/* readdir is a read of the directory */
	must(mkdir("d", 0755), "d");
	set_times("d", 200, 100);
	int64_t before = atime_of("d");
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "ls d >/dev/null");
	must(system(cmd), "ls");
	result((atime_of("d") != before) == !never, "atime/readdir", NULL);
	must(chdir(".."), "..");
}

/* ---- as another user (--user) ---- */

/* Root makes the fixtures in "p" (the caller's uid/gid given) */
static void user_fixtures(uid_t uid, gid_t gid)
{
	must(mkdir("p", 0755), "p");
	must(mkdir("p/rodir", 0755), "rodir");
	must(mkdir("p/rodir/sub", 0755), "rodir/sub");
	put("p/rodir/f", "f", 0644);
	put("p/rofile", "ro", 0644);
	put("p/rwfile", "rw", 0666);
	must(chmod("p/rwfile", 0666), "chmod rwfile");
	put("p/suid", "suid", 06777);
	must(chmod("p/suid", 06777), "chmod suid");
	must(mkdir("p/secret", 0700), "secret");
	put("p/secret/x", "x", 0644);
	must(mkdir("p/sticky", 01777), "sticky");
	must(chmod("p/sticky", 01777), "chmod sticky");
	put("p/sticky/roots", "r", 0666);
	must(mkdir("p/mine", 0755), "mine");
	must(chown("p/mine", uid, gid), "chown mine");
	put("p/rootgroup", "g", 0644);
	must(chown("p/rootgroup", uid, 0), "chown rootgroup");
}

static void user_cases(void)
{
	struct stat st;
	must(chdir("p"), "p");
	/* writes into a directory one may not write */
	expect_err("user/create-in-readonly-dir",
		   open("rodir/new", O_CREAT | O_WRONLY, 0644), EACCES, 0);
	expect_err("user/unlink-in-readonly-dir", unlink("rodir/f"),
		   EACCES, 0);
	expect_err("user/rename-out-of-readonly-dir",
		   rename("rodir/f", "mine/f"), EACCES, 0);
	expect_err("user/mkdir-in-readonly-dir", mkdir("rodir/x", 0755),
		   EACCES, 0);
	expect_err("user/rmdir-in-readonly-dir", rmdir("rodir/sub"),
		   EACCES, 0);
	expect_err("user/symlink-in-readonly-dir", symlink("x", "rodir/l"),
		   EACCES, 0);
	expect_err("user/link-into-readonly-dir", link("rofile", "rodir/l"),
		   EACCES, EPERM);
	expect_err("user/search-denied", stat("secret/x", &st), EACCES, 0);
	/* files one may not write or does not own */
	expect_err("user/open-write-denied", open("rofile", O_WRONLY),
		   EACCES, 0);
	expect_err("user/truncate-denied", truncate("rofile", 0), EACCES, 0);
	expect_err("user/chmod-not-owner", chmod("rofile", 0777), EPERM, 0);
	expect_err("user/chown-not-owner", chown("rofile", getuid(), -1),
		   EPERM, 0);
	struct timespec t[2] = { { 1234567890, 0 }, { 1234567890, 0 } };
	expect_err("user/utimensat-times-not-owner",
		   utimensat(AT_FDCWD, "rwfile", t, 0), EPERM, 0);
	expect_ok("user/utimensat-now-writable",
		  utimensat(AT_FDCWD, "rwfile", NULL, 0));
	expect_err("user/utimensat-now-not-writable",
		   utimensat(AT_FDCWD, "rofile", NULL, 0), EACCES, 0);
	/* the sticky bit */
	expect_err("user/sticky-unlink-others", unlink("sticky/roots"),
		   EPERM, EACCES);
	expect_err("user/sticky-rename-others",
		   rename("sticky/roots", "sticky/x"), EPERM, EACCES);
	put("sticky/own", "own", 0644);
	expect_ok("user/sticky-unlink-own", unlink("sticky/own"));
	/* one's own files */
	put("mine/f", "f", 0644);
	expect_ok("user/chmod-own", chmod("mine/f", 0600));
	expect_err("user/chown-own-to-root", chown("mine/f", 0, -1), EPERM, 0);
	expect_err("user/chgrp-not-member", chown("mine/f", -1, 0), EPERM, 0);
	expect_ok("user/utimensat-own", utimensat(AT_FDCWD, "mine/f", t, 0));
	/* chmod g+s: kept for a file of one's own group; of a group one
	 * is not in, Linux drops S_ISGID silently (POSIX allows it) */
	put("mine/g", "g", 0644);
	expect_ok("user/chmod-setgid-own-group", chmod("mine/g", 02755));
	result((mode_of("mine/g") & 07777) == 02755,
	       "user/chmod-setgid-own-group-kept", "mode %o",
	       (unsigned)mode_of("mine/g") & 07777);
	expect_ok("user/chmod-setgid-other-group", chmod("rootgroup", 02755));
	result((mode_of("rootgroup") & 07777) == 0755,
	       "user/chmod-setgid-other-group-dropped", "mode %o",
	       (unsigned)mode_of("rootgroup") & 07777);
	/* writing a set-user-ID file clears the bit (another's file) */
	int fd = open("suid", O_WRONLY);
	bool wrote = fd >= 0 && write(fd, "x", 1) == 1;
	if (fd >= 0)
		close(fd);
	result(wrote && (mode_of("suid") & 06000) == 0,
	       "user/write-clears-setuid", "wrote %d, mode %o", wrote,
	       (unsigned)mode_of("suid") & 07777);
	must(chdir(".."), "..");
}

int main(int argc, char **argv)
{
	const char *top = NULL;
	uid_t uid = 0;
	gid_t gid = 0;
	bool user = false, only_atime = false;
	char dir[64];

	if (argc < 2) {
		fprintf(stderr, "usage: fuse_posix DIR [--user UID:GID] "
			"[--atime MODE] [--only-atime] [--atime-set FILE] [--atime-get FILE]\n");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		unsigned u, g;
		if (!strcmp(argv[i], "--user") && i + 1 < argc &&
		    sscanf(argv[i + 1], "%u:%u", &u, &g) == 2) {
			uid = u;
			gid = g;
			user = true;
			i++;
		} else if (!strcmp(argv[i], "--atime") && i + 1 < argc) {
			const char *m = argv[++i];
			atime_mode = !strcmp(m, "relatime") ? AT_RELATIME :
				     !strcmp(m, "strict") ? AT_STRICT :
				     !strcmp(m, "noatime") ? AT_NOATIME :
				     AT_NONE;
		} else if (!strcmp(argv[i], "--only-atime")) {
			only_atime = true;
		} else if (!strcmp(argv[i], "--atime-set") && i + 1 < argc) {
			/* a known atime (and mtime) on a file, for later */
			struct timespec t[2] = { { 1234567890, 5 },
						 { 1200000000, 7 } };
			put(argv[++i], "remount", 0644);
			must(utimensat(AT_FDCWD, argv[i], t, 0), argv[i]);
			return 0;
		} else if (!strcmp(argv[i], "--atime-get") && i + 1 < argc) {
			int64_t a = atime_of(argv[++i]);
			int64_t want = atime_mode == AT_NONE ?
				       1200000000000000007LL :
				       1234567890000000005LL;
			result(a == want, "atime/after-remount",
			       "atime %lld, wanted %lld", (long long)a,
			       (long long)want);
			return failures ? 1 : 0;
		} else {
			fprintf(stderr, "fuse_posix: bad argument %s\n",
				argv[i]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	top = argv[1];
	must(chdir(top), top);
	snprintf(dir, sizeof(dir), "posix.%d", (int)getpid());
	must(mkdir(dir, 0755), dir);
	must(chdir(dir), dir);
	umask(022);

	bool root = geteuid() == 0;
	test_atime();
	if (only_atime) {
		fprintf(stderr, "fuse_posix: %d cases, %d failed\n", cases,
			failures);
		return failures ? 1 : 0;
	}
	test_rename();
	test_link_unlink();
	test_dirs(top[0] == '/' ? top : NULL);
	test_open();
	test_truncate();
	test_symlink();
	if (root)
		test_chmod_chown();
	else
		printf("SKIP posix/chmod-chown not root\n");
	test_utimensat();

	if (user) {
		if (!root) {
			printf("SKIP posix/user --user needs root\n");
		} else {
			user_fixtures(uid, gid);
			fflush(stdout);
			pid_t pid = fork();
			must(pid, "fork");
			if (pid == 0) {
				failures = 0;
				if (setgroups(0, NULL) || setgid(gid) ||
				    setuid(uid)) {
					perror("fuse_posix: drop privileges");
					_exit(2);
				}
				user_cases();
				fflush(stdout);
				_exit(failures ? 1 : 0);
			}
			int status;
			must(waitpid(pid, &status, 0), "waitpid");
			if (!WIFEXITED(status) || WEXITSTATUS(status) > 1) {
				result(false, "user/child", "status %d",
				       status);
			} else if (WEXITSTATUS(status) == 1) {
				failures++;
			}
		}
	}
	fprintf(stderr, "fuse_posix: %d cases, %d failed\n", cases, failures);
	return failures ? 1 : 0;
}

/*
 * mkfs.tux3: make a Tux3 (2014-05-06 format) volume on a block device or
 * an image file.  The layout is libtux3's tux3_mkfs(); this file is the
 * command line, the safety checks (existing signatures via libblkid, an
 * existing Tux3 volume, mounted devices), signature wiping, and discard.
 * With -d ROOTDIR the new volume is then populated from a host directory
 * through the library's write path (populate.c).
 *
 * Exit status: 0 success, 1 error (including a refusal), 2 usage error.
 */
#include <blkid.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uuid.h>
#include "tux3.h"
#include "mounted.h"
#include "populate.h"
#include "uuid_arg.h"

#define PROG "mkfs.tux3"
#define EXIT_USAGE 2
#define REFERENCE_MAX_BLOCKSIZE 16384

static int quiet, verbose;

static void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " [-b blocksize] [-L label] [-U uuid|random|time|clear]\n"
"                 [-O feature,...]\n"
"                 [-E discard|nodiscard,root_owner=UID:GID,threads=N]\n"
"                 [-d ROOTDIR] [-F] [-n] [-q] [-v] [-V] DEVICE [size]\n"
"  size: bytes, or with a suffix k, m, g, t, p, e (powers of 1024)\n");
}

static void __attribute__((format(printf, 1, 2))) error(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void __attribute__((format(printf, 1, 2))) info(const char *fmt, ...)
{
	va_list ap;
	if (quiet)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

/* ---- -O: extension features, table-driven ---- */
struct feature {
	const char *name;
	int mask;		/* 0 compat, 1 ro_compat, 2 incompat */
	uint32_t bit;
};
static const struct feature features[] = {
	{ "log_crc", 0, TUX3_FEATURE_COMPAT_LOG_CRC },
	{ "sb_backup", 0, TUX3_FEATURE_COMPAT_SB_BACKUP },
	{ "dir_index", 1, TUX3_FEATURE_RO_COMPAT_DIR_INDEX },
	{ "atime", 2, TUX3_FEATURE_INCOMPAT_ATIME },
	{ NULL, 0, 0 },
};

static void list_features(FILE *f)
{
	int n = 0;
	fprintf(f, "known features:");
	for (const struct feature *ft = features; ft->name; ft++, n++)
		fprintf(f, " %s", ft->name);
	fprintf(f, "%s\n", n ? "" : " (none)");
}

static int parse_features(char *list, uint32_t masks[3])
{
	for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		bool clear = tok[0] == '^';
		const char *name = tok + clear;
		const struct feature *ft;
		if (!*name)
			continue;
		for (ft = features; ft->name; ft++)
			if (!strcmp(ft->name, name))
				break;
		if (!ft->name) {
			error("unknown feature '%s'", name);
			list_features(stderr);
			return -1;
		}
		if (clear)
			masks[ft->mask] &= ~ft->bit;
		else
			masks[ft->mask] |= ft->bit;
	}
	return 0;
}

/* ---- -E: extended options ---- */
static int parse_u32(const char *s, uint32_t *v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	/* a digit first: strtoull would take blanks and a sign */
	if (errno || !isdigit((unsigned char)s[0]) || *end || x > UINT32_MAX)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

static int parse_extended(char *list, int *discard, uint32_t *uid,
			  uint32_t *gid, int *threads)
{
	for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		if (!strcmp(tok, "discard")) {
			*discard = 1;
		} else if (!strcmp(tok, "nodiscard")) {
			*discard = 0;
		} else if (!strncmp(tok, "root_owner=", 11)) {
			char *v = tok + 11, *colon = strchr(v, ':');
			if (!colon) {
				error("root_owner needs UID:GID, got '%s'", v);
				return -1;
			}
			*colon = 0;
			if (parse_u32(v, uid) || parse_u32(colon + 1, gid)) {
				error("bad root_owner '%s:%s'", v, colon + 1);
				return -1;
			}
		} else if (!strncmp(tok, "threads=", 8)) {
			uint32_t n;
			if (parse_u32(tok + 8, &n) || n > 64) {
				error("bad threads '%s' (0 to 64)", tok + 8);
				return -1;
			}
			*threads = (int)n;
		} else {
			error("unknown extended option '%s' (known: discard, "
			      "nodiscard, root_owner=UID:GID, threads=N)", tok);
			return -1;
		}
	}
	return 0;
}

/* Size argument: bytes, or k/m/g/t/p/e suffix (powers of 1024). */
static int parse_size(const char *s, uint64_t *bytes)
{
	char *end;
	if (!isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	unsigned shift = 0;
	if (*end) {
		switch (tolower((unsigned char)*end)) {
		case 'k': shift = 10; break;
		case 'm': shift = 20; break;
		case 'g': shift = 30; break;
		case 't': shift = 40; break;
		case 'p': shift = 50; break;
		case 'e': shift = 60; break;
		default: return -1;
		}
		if (end[1])
			return -1;
	}
	if (shift && v > (UINT64_MAX >> shift))
		return -1;
	*bytes = (uint64_t)v << shift;
	return 0;
}

static void format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char *unit[] = { "bytes", "KiB", "MiB", "GiB", "TiB",
				      "PiB", "EiB" };
	int u = 0;
	double v = (double)bytes;
	while (v >= 1024 && u < 6) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%" PRIu64 " bytes", bytes);
	else
		snprintf(buf, len, "%.4g %s", v, unit[u]);
}

/* ---- safety checks ---- */

/* Is the block device (rdev), or the image file (path), mounted? */
static int check_mounted(const char *path, const struct stat *st)
{
	char mnt[4096];

	if (!device_mounted(path, st, mnt, sizeof(mnt)))
		return 0;
	error("%s is mounted on %s", path, mnt);
	return 1;
}

/* An existing Tux3 volume: our magic at byte 4096. */
static int has_tux3_magic(int fd)
{
	static const uint8_t magic[8] = { 't', 'u', 'x', '3',
					  0x20, 0x14, 0x05, 0x06 };
	uint8_t buf[8];
	if (pread(fd, buf, 8, 4096) != 8)
		return 0;
	if (!memcmp(buf, magic, 8))
		return 2;	/* this format */
	if (!memcmp(buf, "tux3ver1", 8))
		return 3;	/* this format, with versions (snapshots) */
	return !memcmp(buf, magic, 4);	/* another Tux3 format date */
}

/* Probe with libblkid (filesystems, RAID members, partition tables).
 * Fills what[] with a description of everything found; with wipe set,
 * erases each signature as it is found.  Returns the number found, or -1
 * if the probe could not run. */
static int probe_signatures(int fd, bool wipe, char *what, size_t len)
{
	blkid_probe pr = blkid_new_probe();
	int n = 0;

	what[0] = 0;
	if (!pr)
		return -1;
	if (blkid_probe_set_device(pr, fd, 0, 0)) {
		blkid_free_probe(pr);
		return -1;
	}
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE |
					  BLKID_SUBLKS_USAGE |
					  BLKID_SUBLKS_LABEL |
					  BLKID_SUBLKS_MAGIC |
					  BLKID_SUBLKS_BADCSUM);
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC |
					 BLKID_PARTS_FORCE_GPT);
	while (blkid_do_probe(pr) == 0) {
		const char *type = NULL, *usage = NULL, *label = NULL;
		char one[256];
		if (!blkid_probe_lookup_value(pr, "TYPE", &type, NULL)) {
			blkid_probe_lookup_value(pr, "USAGE", &usage, NULL);
			if (blkid_probe_lookup_value(pr, "LABEL", &label, NULL))
				label = NULL;
			snprintf(one, sizeof(one), "%s%s %s%s%s%s",
				 n ? ", " : "", type,
				 usage && !strcmp(usage, "raid") ?
				 "RAID member" : usage &&
				 !strcmp(usage, "filesystem") ? "file system" :
				 usage ? usage : "signature",
				 label ? " labelled '" : "",
				 label ? label : "", label ? "'" : "");
		} else if (!blkid_probe_lookup_value(pr, "PTTYPE", &type,
						     NULL)) {
			snprintf(one, sizeof(one), "%s%s partition table",
				 n ? ", " : "", type);
		} else {
			continue;
		}
		n++;
		if (strlen(what) + strlen(one) < len)
			strcat(what, one);
		if (wipe && blkid_do_wipe(pr, 0)) {
			error("cannot erase the %s signature", type);
			blkid_free_probe(pr);
			return -1;
		}
	}
	blkid_free_probe(pr);
	return n;
}

static bool ask_proceed(void)
{
	char answer[64];
	fprintf(stderr, "Proceed anyway? (y,N) ");
	fflush(stderr);
	if (!fgets(answer, sizeof(answer), stdin))
		return false;
	return answer[0] == 'y' || answer[0] == 'Y';
}

static void discard_volume(int fd, bool blockdev, uint64_t bytes)
{
	if (blockdev) {
		uint64_t range[2] = { 0, bytes };
		if (ioctl(fd, BLKDISCARD, range) == 0) {
			if (verbose)
				info("Discarded %" PRIu64 " bytes\n", bytes);
		} else if (verbose) {
			info("Discard not done: %s\n", strerror(errno));
		}
		return;
	}
	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
		      (off_t)bytes) == 0) {
		if (verbose)
			info("Punched holes over %" PRIu64 " bytes\n", bytes);
	} else if (verbose) {
		info("Hole punching not done: %s\n", strerror(errno));
	}
}

static int get_time(int64_t *ns)
{
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	if (sde && *sde) {
		char *end;
		errno = 0;
		long long s = strtoll(sde, &end, 10);
		if (errno || *end || s < 0 || s > INT64_MAX / 1000000000LL) {
			error("SOURCE_DATE_EPOCH '%s' is not a number of "
			      "seconds", sde);
			return -1;
		}
		*ns = s * 1000000000LL;
		return 0;
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	*ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	return 0;
}

/* -d: open the volume just made, copy the tree in, commit, unmount. */
static int fill_volume(const char *path, const char *rootdir, int threads,
		       bool fixed_time, int64_t time_ns, uint64_t *freeblocks)
{
	struct tux3_volume *vol;
	char err[512];
	int rc = tux3_open_err(path, TUX3_OPEN_RDWR, &vol, err, sizeof(err));
	if (rc) {
		error("%s: cannot open the new volume: %s", path,
		      err[0] ? err : strerror(-rc));
		return -1;
	}
	if (fixed_time)
		tux3_set_time(vol, time_ns);
	/* the copy commits to bound memory, not for a crash: an interrupted
	 * mkfs is run again, so only the unmount waits for the device */
	tux3_set_lazy_commits(vol, 1);

	struct populate_params pp = {
		.prog = PROG,
		.progress = !quiet && isatty(2),
		.threads = threads,
	};
	struct stat st;
	if (!stat(path, &st) && S_ISREG(st.st_mode)) {
		pp.skip_self = true;
		pp.skip_dev = st.st_dev;
		pp.skip_ino = st.st_ino;
	}
	struct populate_stats ps;
	if (populate(vol, rootdir, &pp, &ps)) {
		tux3_close(vol);	/* the last commit stands */
		return -1;
	}
	struct tux3_statfs sf;
	if (!tux3_statfs(vol, &sf))
		*freeblocks = sf.bfree;
	rc = tux3_umount(vol);
	if (rc) {
		error("%s: cannot commit the volume: %s", path, strerror(-rc));
		return -1;
	}
	if (!quiet) {
		char sizebuf[64];
		format_size(ps.bytes, sizebuf, sizeof(sizebuf));
		printf("Populated from %s: %" PRIu64 " files, %s of data",
		       rootdir, ps.objects, sizebuf);
		if (ps.warnings)
			printf(", %u warning%s", ps.warnings,
			       ps.warnings == 1 ? "" : "s");
		printf("\n");
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct tux3_mkfs_params p = { .blockbits = 12, .root_mode = 0755 };
	const char *uuid_arg = "random", *label = "", *rootdir = NULL;
	uint32_t masks[3] = { TUX3_FEATURE_COMPAT_DEFAULT, 0, 0 };
	int force = 0, dry = 0, discard = -1, threads = -1, c;
	unsigned long blocksize = 4096;

	if (tux3_library_version() != TUX3_LIBRARY_VERSION) {
		fprintf(stderr, "%s: built for libtux3 interface %d, but "
			"libtux3 %s has interface %d\n", PROG,
			TUX3_LIBRARY_VERSION, tux3_version(),
			tux3_library_version());
		return 1;
	}
	while ((c = getopt(argc, argv, "b:L:U:O:E:d:FnqvVh")) != -1) {
		switch (c) {
		case 'b': {
			char *end;
			errno = 0;
			blocksize = strtoul(optarg, &end, 10);
			if (errno || *end || !isdigit((unsigned char)*optarg) ||
			    blocksize < 512 ||
			    blocksize > 65536 || (blocksize & (blocksize - 1))) {
				error("block size '%s' is not a power of two "
				      "from 512 to 65536", optarg);
				return EXIT_USAGE;
			}
			break;
		}
		case 'L':
			if (strlen(optarg) > TUX3_LABEL_MAX) {
				error("label '%s' is longer than %d bytes",
				      optarg, TUX3_LABEL_MAX);
				return EXIT_USAGE;
			}
			label = optarg;
			break;
		case 'U':
			uuid_arg = optarg;
			break;
		case 'O':
			if (parse_features(optarg, masks))
				return EXIT_USAGE;
			break;
		case 'E':
			if (parse_extended(optarg, &discard, &p.uid, &p.gid,
					   &threads))
				return EXIT_USAGE;
			break;
		case 'd':
			rootdir = optarg;
			break;
		case 'F': force = 1; break;
		case 'n': dry = 1; break;
		case 'q': quiet = 1; verbose = 0; break;
		case 'v': verbose = 1; quiet = 0; break;
		case 'V':
			printf(PROG " (tux3-tools) %s\n", tux3_version());
			return 0;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind >= argc || argc - optind > 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *path = argv[optind];
	const char *size_arg = argc - optind == 2 ? argv[optind + 1] : NULL;
	uint64_t size_bytes = 0;
	if (size_arg && parse_size(size_arg, &size_bytes)) {
		error("bad size '%s' (bytes, or a number with k, m, g, t, p or e)",
		      size_arg);
		return EXIT_USAGE;
	}

	/* UUID */
	if (uuid_from_arg(uuid_arg, p.uuid)) {
		error("bad UUID '%s'", uuid_arg);
		return EXIT_USAGE;
	}
	snprintf(p.label, sizeof(p.label), "%s", label);
	p.compat = masks[0];
	p.ro_compat = masks[1];
	p.incompat = masks[2];
	p.blockbits = (unsigned)__builtin_ctzl(blocksize);
	if (get_time(&p.time_ns))
		return 1;
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	bool fixed_time = sde && *sde;

	/* The source tree: a directory we can read, checked before the
	 * device is touched. */
	if (rootdir) {
		struct stat rst;
		if (stat(rootdir, &rst)) {
			error("%s: %s", rootdir, strerror(errno));
			return 1;
		}
		if (!S_ISDIR(rst.st_mode)) {
			error("%s is not a directory", rootdir);
			return 1;
		}
	}

	if (blocksize > REFERENCE_MAX_BLOCKSIZE && !quiet)
		fprintf(stderr, PROG ": warning: %lu-byte blocks are valid in "
			"the format, but the reference Tux3 code cannot use a "
			"volume with blocks above %d bytes\n", blocksize,
			REFERENCE_MAX_BLOCKSIZE);

	/* The device or image */
	struct stat st;
	bool exists = stat(path, &st) == 0, blockdev = false;
	if (!exists && errno != ENOENT) {
		error("%s: %s", path, strerror(errno));
		return 1;
	}
	if (exists) {
		blockdev = S_ISBLK(st.st_mode);
		if (!blockdev && !S_ISREG(st.st_mode)) {
			error("%s is not a block device or a regular file",
			      path);
			return 1;
		}
	} else if (!size_arg) {
		error("%s does not exist (give a size to create an image "
		      "file)", path);
		return 1;
	}

	uint64_t avail = 0;	/* bytes there now */
	int fd = -1;
	if (exists) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			error("%s: %s", path, strerror(errno));
			return 1;
		}
		if (blockdev) {
			if (ioctl(fd, BLKGETSIZE64, &avail) < 0) {
				error("%s: cannot get the size: %s", path,
				      strerror(errno));
				close(fd);
				return 1;
			}
		} else {
			avail = (uint64_t)st.st_size;
		}
	}
	uint64_t bytes = size_arg ? size_bytes : avail;
	if (blockdev && bytes > avail) {
		error("%s holds %" PRIu64 " bytes, less than the %" PRIu64
		      " asked for", path, avail, bytes);
		close(fd);
		return 1;
	}
	p.volblocks = bytes >> p.blockbits;

	struct tux3_mkfs_layout l;
	char err[512];
	if (tux3_mkfs_layout(p.blockbits, p.volblocks, &l, err,
			     sizeof(err))) {
		error("%s: %s", path, err);
		if (fd >= 0)
			close(fd);
		return 1;
	}

	/* Safety checks on what is there now */
	if (exists) {
		if (check_mounted(path, &st)) {
			close(fd);
			return 1;
		}
		char what[1024];
		int tux = has_tux3_magic(fd);
		int n = probe_signatures(fd, false, what, sizeof(what));
		if (n < 0)
			n = 0, what[0] = 0;	/* cannot probe: no blkid view */
		if (tux) {
			char one[128];
			snprintf(one, sizeof(one), "%sTux3 %s", n ? ", " : "",
				 tux == 2 ? "volume" : tux == 3 ? "volume with "
				 "snapshots" : "volume of another format date");
			if (strlen(what) + strlen(one) < sizeof(what))
				strcat(what, one);
			n++;
		}
		if (n && dry) {
			info("%s contains: %s (would need -F)\n", path, what);
		} else if (n && !force) {
			fprintf(stderr, PROG ": %s contains: %s\n", path, what);
			if (!isatty(0) || !ask_proceed()) {
				error("not overwriting %s without -F", path);
				close(fd);
				return 1;
			}
			force = 1;	/* the user said yes */
		} else if (n && verbose) {
			info("Overwriting: %s\n", what);
		}
		close(fd);
		fd = -1;
	}

	char sizebuf[64], uuidstr[37];
	format_size(p.volblocks << p.blockbits, sizebuf, sizeof(sizebuf));
	uuid_unparse_lower(p.uuid, uuidstr);
	if (!quiet) {
		printf("%s Tux3 volume on %s\n", dry ? "Would create a" :
		       "Creating a", path);
		printf("  block size %u, %" PRIu64 " blocks (%s)\n",
		       l.blocksize, l.volblocks, sizebuf);
		printf("  UUID %s, label '%s'\n", uuidstr, p.label);
		if (dry || verbose) {
			printf("  reserved: block%s 0-%" PRIu64 " (the first "
			       "8 KiB; superblock at byte 4096)\n",
			       l.reserved > 1 ? "s" : "", l.reserved - 1);
			printf("  inode table leaf at block %" PRIu64
			       ", log block at block %" PRIu64
			       ", next allocation goal %" PRIu64 "\n",
			       l.ileaf, l.logblock, l.nextblock);
			printf("  free blocks %" PRIu64 "\n", l.freeblocks);
			if (!rootdir)
				printf("  root directory mode %04o, owner "
				       "%u:%u\n", p.root_mode, p.uid, p.gid);
		}
		if (rootdir)
			printf("  %s from %s\n", dry ? "would populate" :
			       "populating", rootdir);
	}
	if (dry)
		return 0;

	/* Create the image if needed; erase old signatures; discard. */
	bool created = false;
	if (!exists) {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0) {
			error("cannot create %s: %s", path, strerror(errno));
			return 1;
		}
		close(fd);
		created = true;
	} else {
		fd = open(path, O_RDWR | O_CLOEXEC | (blockdev ? O_EXCL : 0));
		if (fd < 0) {
			error("%s: %s%s", path, strerror(errno),
			      errno == EBUSY ? " (mounted or in use)" : "");
			return 1;
		}
		if (force) {
			char what[1024];
			if (probe_signatures(fd, true, what, sizeof(what)) < 0) {
				close(fd);
				return 1;
			}
		}
		if (discard != 0)
			discard_volume(fd, blockdev,
				       p.volblocks << p.blockbits);
		fsync(fd);
		close(fd);
	}

	int rc = tux3_mkfs(path, &p, err, sizeof(err));
	if (rc) {
		error("%s", err);
		if (created)
			unlink(path);
		return 1;
	}
	uint64_t freeblocks = l.freeblocks;
	if (rootdir) {
		if (!quiet)
			fflush(stdout);	/* before the progress on stderr */
		if (fill_volume(path, rootdir, threads, fixed_time, p.time_ns,
				&freeblocks)) {
			if (created)
				unlink(path);
			return 1;
		}
	}
	if (!quiet)
		printf("Done: %" PRIu64 " blocks free\n", freeblocks);
	return 0;
}

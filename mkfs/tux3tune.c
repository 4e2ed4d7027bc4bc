/*
 * tux3tune: a volume's identity, listed and changed offline, as tune2fs
 * -l, -L, -U and -O dir_index do for ext4.  Label and UUID live in our superblock
 * extension record (doc/format.md 15.1); a change is one commit through
 * libtux3 (tux3_set_identity, then tux3_umount), which writes the
 * secondary superblock before the primary, so tux3probe and udev see the
 * new identity from either copy.  A mounted volume is refused
 * (/proc/self/mountinfo), and so is one another process holds (the
 * library's exclusive lock, O_EXCL on a block device).
 *
 * Exit status: 0 success, 1 error (including a refusal), 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <uuid.h>
#include "tux3.h"
#include "mounted.h"
#include "uuid_arg.h"

#define PROG "tux3tune"
#define EXIT_ERROR 1
#define EXIT_USAGE 2

struct request {
	const char *device;
	const char *label;	/* NULL: keep */
	uint8_t uuid[16];
	int set_uuid;
	int list;
	int dir_index;		/* -O: 1 set, -1 clear, 0 keep */
	int atime;		/* the same */
	int version_index;	/* the same */
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " [-l] [-L label] [-U uuid|random|time|clear]\n"
"                [-O [^]dir_index,[^]atime,[^]version_index] DEVICE\n");
}

/* -O's list, as tune2fs takes it: names separated by commas, each with
 * ^ to clear; the features that can change on a volume. */
static int parse_features(const char *arg, struct request *r)
{
	char *list = strdup(arg), *save = NULL;
	if (!list) {
		fprintf(stderr, PROG ": out of memory\n");
		return -1;
	}
	for (char *f = strtok_r(list, ",", &save); f;
	     f = strtok_r(NULL, ",", &save)) {
		int value = f[0] == '^' ? -1 : 1;
		const char *name = f + (f[0] == '^');
		if (!strcmp(name, "dir_index")) {
			r->dir_index = value;
		} else if (!strcmp(name, "atime")) {
			r->atime = value;
		} else if (!strcmp(name, "version_index")) {
			r->version_index = value;
		} else {
			fprintf(stderr, PROG ": -O %s: only dir_index, atime "
				"and version_index (each with ^ to clear) can "
				"be changed\n", f);
			free(list);
			return -1;
		}
	}
	free(list);
	if (!r->dir_index && !r->atime && !r->version_index) {
		fprintf(stderr, PROG ": -O '%s': no feature named\n", arg);
		return -1;
	}
	return 0;
}

static void feature_names(const struct tux3_identity *id, char *buf,
			  size_t len)
{
	snprintf(buf, len, "%s%s%s%s%s%s",
		 id->compat & TUX3_FEATURE_COMPAT_LOG_CRC ? " log_crc" : "",
		 id->compat & TUX3_FEATURE_COMPAT_SB_BACKUP ? " sb_backup" : "",
		 id->ro_compat & TUX3_FEATURE_RO_COMPAT_DIR_INDEX ?
		 " dir_index" : "",
		 id->ro_compat & TUX3_FEATURE_RO_COMPAT_VERSION_INDEX ?
		 " version_index" : "",
		 id->incompat & TUX3_FEATURE_INCOMPAT_VERSIONS ?
		 " versions" : "",
		 id->incompat & TUX3_FEATURE_INCOMPAT_ATIME ? " atime" : "");
	if (!buf[0])
		snprintf(buf, len, " (none)");
}

static void print_time(const char *what, int64_t ns)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;
	char when[64];

	if (ns && gmtime_r(&t, &tm) &&
	    strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm))
		printf("%-26s%s\n", what, when);
	else
		printf("%-26s%s\n", what, "unknown");
}

/* -l: what tune2fs -l shows that a Tux3 volume has. */
static void list(struct tux3_volume *vol)
{
	struct tux3_super_info s;
	struct tux3_identity id;
	static const uint8_t zero[16];
	char uuid[37] = "<none>", feats[64];

	tux3_super_info(vol, &s);
	tux3_identity(vol, &id);
	if (id.present && memcmp(id.uuid, zero, 16))
		uuid_unparse_lower(id.uuid, uuid);
	printf("%-26s%s\n", "Filesystem volume name:",
	       id.present && id.label[0] ? id.label : "<none>");
	printf("%-26s%s\n", "Filesystem UUID:", uuid);
	printf("%-26s%.4s %s\n", "Filesystem magic:", (const char *)s.magic,
	       s.magic[4] == 'v' ? "ver1 (with versions)" : "2014-05-06");
	if (id.present) {
		feature_names(&id, feats, sizeof(feats));
		printf("%-26s%s\n", "Filesystem features:", feats + 1);
		printf("%-26sversion %u, commit %" PRIu64 ", %s\n",
		       "Extension record:", id.version, id.seq,
		       id.sealed ? "sealed" : "not sealed");
		print_time("Filesystem created:", id.mkfs_time_ns);
	} else {
		printf("%-26s%s\n", "Extension record:",
		       "none (a volume made by the reference mkfs)");
	}
	printf("%-26s%u\n", "Block size:", s.blocksize);
	printf("%-26s%" PRIu64 "\n", "Block count:", s.volblocks);
	printf("%-26s%" PRIu64 "\n", "Free blocks:", s.freeblocks);
	printf("%-26s%" PRIu64 "\n", "Inodes in use:", s.usedinodes);
}

static int fail(struct tux3_volume *vol, const char *what)
{
	char msg[512];
	fprintf(stderr, PROG ": %s: %s\n", what,
		tux3_error_text(vol, msg, sizeof(msg)));
	return EXIT_ERROR;
}

/* -L, -U: one commit, then -l shows the result. */
static int change(const struct request *r)
{
	struct tux3_volume *vol;
	char msg[512], mnt[4096];
	struct stat st;

	if (stat(r->device, &st) < 0) {
		fprintf(stderr, PROG ": %s: %s\n", r->device, strerror(errno));
		return EXIT_ERROR;
	}
	if (device_mounted(r->device, &st, mnt, sizeof(mnt))) {
		fprintf(stderr, PROG ": %s is mounted on %s; unmount it "
			"first\n", r->device, mnt);
		return EXIT_ERROR;
	}
	if (tux3_open_err(r->device, TUX3_OPEN_RDWR, &vol, msg, sizeof(msg))) {
		fprintf(stderr, PROG ": %s\n", msg);
		return EXIT_ERROR;
	}
	uint64_t dirs = 0, inodes = 0, pairs = 0;
	if (tux3_set_identity(vol, r->label, r->set_uuid ? r->uuid : NULL) ||
	    (r->dir_index && tux3_set_dir_index_feature(vol, r->dir_index > 0,
							&dirs)) ||
	    (r->atime && tux3_set_atime_feature(vol, r->atime > 0,
						&inodes)) ||
	    (r->version_index &&
	     tux3_set_version_index_feature(vol, r->version_index > 0,
					    &pairs)) ||
	    tux3_sync(vol)) {
		int rc = fail(vol, r->device);
		tux3_close(vol);
		return rc;
	}
	if (r->dir_index)
		printf("dir_index %s: %" PRIu64 " director%s %s\n",
		       r->dir_index > 0 ? "set" : "cleared", dirs,
		       dirs == 1 ? "y" : "ies",
		       r->dir_index > 0 ? "indexed" : "packed, their index "
		       "blocks dropped");
	if (r->atime > 0)
		printf("atime set: the volume now needs a reader that knows "
		       "the atime feature\n");
	else if (r->atime < 0)
		printf("atime cleared: %" PRIu64 " inode%s lost %s access "
		       "time\n", inodes, inodes == 1 ? "" : "s",
		       inodes == 1 ? "its" : "their");
	if (r->version_index > 0)
		printf("version_index set: %" PRIu64 " (label, inode) "
		       "pair%s\n", pairs, pairs == 1 ? "" : "s");
	else if (r->version_index < 0)
		printf("version_index cleared: snapshot diff reads the inode "
		       "table\n");
	if (r->list)
		list(vol);
	if (tux3_umount(vol)) {
		fprintf(stderr, PROG ": %s: the commit at unmount failed\n",
			r->device);
		return EXIT_ERROR;
	}
	return 0;
}

static int list_only(const char *device)
{
	struct tux3_volume *vol;
	char msg[512];

	if (tux3_open_err(device, TUX3_OPEN_RDONLY, &vol, msg, sizeof(msg))) {
		fprintf(stderr, PROG ": %s\n", msg);
		return EXIT_ERROR;
	}
	for (unsigned i = 0; i < tux3_warning_count(vol); i++)
		fprintf(stderr, PROG ": warning: %s\n", tux3_warning(vol, i));
	list(vol);
	tux3_close(vol);
	return 0;
}

int main(int argc, char **argv)
{
	struct request r = { 0 };
	int c;

	if (tux3_library_version() != TUX3_LIBRARY_VERSION) {
		fprintf(stderr, PROG ": built for libtux3 interface %d, but "
			"libtux3 %s has interface %d\n", TUX3_LIBRARY_VERSION,
			tux3_version(), tux3_library_version());
		return EXIT_ERROR;
	}
	while ((c = getopt(argc, argv, "lL:U:O:hV")) != -1) {
		switch (c) {
		case 'l': r.list = 1; break;
		case 'L':
			if (strlen(optarg) > TUX3_LABEL_MAX) {
				fprintf(stderr, PROG ": label '%s' is longer "
					"than %d bytes\n", optarg,
					TUX3_LABEL_MAX);
				return EXIT_USAGE;
			}
			r.label = optarg;
			break;
		case 'U':
			if (uuid_from_arg(optarg, r.uuid)) {
				fprintf(stderr, PROG ": bad UUID '%s' (8-4-4-"
					"4-12 hex digits, random, time or "
					"clear)\n", optarg);
				return EXIT_USAGE;
			}
			r.set_uuid = 1;
			break;
		case 'O':
			if (parse_features(optarg, &r))
				return EXIT_USAGE;
			break;
		case 'h': usage(stdout); return 0;
		case 'V':
			printf(PROG " (tux3-tools) %s\n", tux3_version());
			return 0;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || (!r.list && !r.label && !r.set_uuid &&
				    !r.dir_index && !r.atime && !r.version_index)) {
		usage(stderr);
		return EXIT_USAGE;
	}
	r.device = argv[optind];
	if (r.label || r.set_uuid || r.dir_index || r.atime ||
	    r.version_index)
		return change(&r);
	return list_only(r.device);
}

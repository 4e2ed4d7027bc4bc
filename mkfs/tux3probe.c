/*
 * tux3probe: blkid's job for Tux3, which libblkid does not know.  Says
 * whether a device holds a Tux3 volume and prints its UUID and label:
 * as blkid lines; as udev properties (-o udev, imported by the udev rule
 * 59-tux3.rules so that /dev/disk/by-uuid, by-label and lsblk -f see the
 * volume; nothing when libblkid knows the device); or as device names
 * (-o device, with -t UUID=... to find a volume as findfs does).
 * Read-only and lock-free: libtux3's tux3_probe() reads the first 8 KiB
 * and trusts no field.
 *
 * Exit status (blkid's): 0 a Tux3 volume found, 2 none (not Tux3, no
 * match, or unreadable), 4 usage.
 */
#include <blkid.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <uuid.h>
#include "tux3.h"

#define PROG "tux3probe"
#define EXIT_FOUND 0
#define EXIT_NONE 2
#define EXIT_USAGE 4

enum output { OUT_FULL, OUT_UDEV, OUT_DEVICE };

/* What one Tux3 volume says about itself, as text. */
struct found {
	const char *dev;
	char uuid[37];		/* empty: no record, or the UUID is clear */
	char label[TUX3_LABEL_MAX + 1];
	const char *version;
	unsigned blocksize;	/* 0: the stored size is impossible */
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " [-o full|udev|device] [-t NAME=VALUE] [DEVICE...]\n"
"       " PROG " --export DEVICE     (the same as -o udev)\n"
"  NAME is UUID, LABEL or TYPE; without DEVICE, -t looks at every block\n"
"  device in /proc/partitions\n");
}

static bool all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

/* 1 Tux3 (f filled), 0 not; an unreadable device is said on stderr
 * when the user named it (quiet: a scan). */
static int look(const char *dev, struct found *f, bool quiet)
{
	struct tux3_probe p;
	int rc = tux3_probe(dev, &p);

	if (rc < 0 && !quiet)
		fprintf(stderr, PROG ": %s: %s\n", dev, rc == -ENODEV ?
			"not a block device or regular file" : strerror(-rc));
	if (rc <= 0)
		return 0;
	memset(f, 0, sizeof(*f));
	f->dev = dev;
	if (p.id.present && !all_zero(p.id.uuid, 16))
		uuid_unparse_lower(p.id.uuid, f->uuid);
	if (p.id.present)
		snprintf(f->label, sizeof(f->label), "%s", p.id.label);
	f->version = p.versions ? "2014.05.06+versions" : "2014.05.06";
	f->blocksize = p.geometry_ok ? 1u << p.blockbits : 0;
	return 1;
}

/* Does libblkid see a filesystem or a partition table here?  Then udev
 * has its properties from libblkid, and ours must not mix with them
 * (a Tux3 superblock left under a newer filesystem). */
static bool known_to_libblkid(const char *dev)
{
	blkid_probe pr = blkid_new_probe_from_filename(dev);
	int rc;

	if (!pr)
		return false;
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE);
	blkid_probe_enable_partitions(pr, 1);
	rc = blkid_do_safeprobe(pr);	/* 0 found, -2 ambivalent */
	blkid_free_probe(pr);
	return rc == 0 || rc == -2;
}

/* -t NAME=VALUE */
static bool matches(const struct found *f, const char *tag)
{
	const char *eq = strchr(tag, '=');
	size_t n = (size_t)(eq - tag);

	if (n == 4 && !strncasecmp(tag, "UUID", 4))
		return f->uuid[0] && !strcasecmp(f->uuid, eq + 1);
	if (n == 5 && !strncasecmp(tag, "LABEL", 5))
		return f->label[0] && !strcmp(f->label, eq + 1);
	if (n == 4 && !strncasecmp(tag, "TYPE", 4))
		return !strcmp(eq + 1, "tux3");
	return false;
}

static bool tag_ok(const char *tag)
{
	const char *eq = tag ? strchr(tag, '=') : NULL;
	if (!eq)
		return false;
	size_t n = (size_t)(eq - tag);
	return (n == 4 && !strncasecmp(tag, "UUID", 4)) ||
	       (n == 5 && !strncasecmp(tag, "LABEL", 5)) ||
	       (n == 4 && !strncasecmp(tag, "TYPE", 4));
}

/* A value as blkid's output quotes it: " and \ escaped. */
static void print_quoted(const char *name, const char *v)
{
	printf(" %s=\"", name);
	for (; *v; v++) {
		if (*v == '"' || *v == '\\')
			putchar('\\');
		putchar(*v);
	}
	putchar('"');
}

static void print_full(const struct found *f)
{
	printf("%s:", f->dev);
	if (f->label[0])
		print_quoted("LABEL", f->label);
	if (f->uuid[0])
		print_quoted("UUID", f->uuid);
	if (f->blocksize)
		printf(" BLOCK_SIZE=\"%u\"", f->blocksize);
	printf(" TYPE=\"tux3\"\n");
}

/* KEY=value and KEY_ENC=value: the plain value made safe as udev's
 * blkid builtin makes it (blkid_safe_string), the _ENC one encoded with
 * blkid_encode_string, as the persistent-storage rules name links. */
static void print_udev_pair(const char *key, const char *v)
{
	char safe[4 * TUX3_LABEL_MAX + 8], enc[4 * TUX3_LABEL_MAX + 8];

	if (blkid_safe_string(v, safe, sizeof(safe)) ||
	    blkid_encode_string(v, enc, sizeof(enc)))
		return;
	printf("%s=%s\n%s_ENC=%s\n", key, safe, key, enc);
}

static void print_udev(const struct found *f)
{
	printf("ID_FS_TYPE=tux3\nID_FS_USAGE=filesystem\n"
	       "ID_FS_VERSION=%s\n", f->version);
	if (f->uuid[0])
		print_udev_pair("ID_FS_UUID", f->uuid);
	if (f->label[0])
		print_udev_pair("ID_FS_LABEL", f->label);
	if (f->blocksize)
		printf("ID_FS_BLOCK_SIZE=%u\n", f->blocksize);
}

static void print_found(const struct found *f, enum output out)
{
	if (out == OUT_UDEV)
		print_udev(f);
	else if (out == OUT_DEVICE)
		printf("%s\n", f->dev);
	else
		print_full(f);
}

/* Every block device the kernel lists, as /dev/NAME. */
static int scan(const char *tag, enum output out)
{
	FILE *pf = fopen("/proc/partitions", "re");
	char line[256], name[128], dev[160];
	int hits = 0;

	if (!pf) {
		fprintf(stderr, PROG ": /proc/partitions: %s\n",
			strerror(errno));
		return EXIT_NONE;
	}
	while (fgets(line, sizeof(line), pf)) {
		struct found f;
		unsigned maj, min;
		unsigned long long blocks;
		if (sscanf(line, "%u %u %llu %127s", &maj, &min, &blocks,
			   name) != 4)
			continue;
		snprintf(dev, sizeof(dev), "/dev/%s", name);
		if (look(dev, &f, true) && matches(&f, tag)) {
			print_found(&f, out);
			hits++;
		}
	}
	fclose(pf);
	return hits ? EXIT_FOUND : EXIT_NONE;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "export", no_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	enum output out = OUT_FULL;
	const char *tag = NULL;
	int c;

	/* blkid's 4 is also its status for an error of its own */
	if (tux3_library_version() != TUX3_LIBRARY_VERSION) {
		fprintf(stderr, PROG ": built for libtux3 interface %d, but "
			"libtux3 %s has interface %d\n", TUX3_LIBRARY_VERSION,
			tux3_version(), tux3_library_version());
		return EXIT_USAGE;
	}
	while ((c = getopt_long(argc, argv, "o:t:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!strcmp(optarg, "full"))
				out = OUT_FULL;
			else if (!strcmp(optarg, "udev") ||
				 !strcmp(optarg, "export"))
				out = OUT_UDEV;
			else if (!strcmp(optarg, "device"))
				out = OUT_DEVICE;
			else {
				fprintf(stderr, PROG ": unknown output "
					"format '%s'\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'x': out = OUT_UDEV; break;
		case 't':
			if (!tag_ok(optarg)) {
				fprintf(stderr, PROG ": -t wants UUID=, LABEL= "
					"or TYPE=, not '%s'\n", optarg);
				return EXIT_USAGE;
			}
			tag = optarg;
			break;
		case 'h': usage(stdout); return EXIT_FOUND;
		case 'V':
			printf(PROG " (tux3-tools) %s\n", tux3_version());
			return EXIT_FOUND;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind == argc && !tag) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (out == OUT_UDEV && argc - optind != 1) {
		fprintf(stderr, PROG ": -o udev probes exactly one DEVICE\n");
		return EXIT_USAGE;
	}
	if (optind == argc)
		return scan(tag, out);
	int hits = 0;
	for (int i = optind; i < argc; i++) {
		struct found f;
		if (look(argv[i], &f, false) && (!tag || matches(&f, tag)) &&
		    !(out == OUT_UDEV && known_to_libblkid(argv[i]))) {
			print_found(&f, out);
			hits++;
		}
	}
	return hits ? EXIT_FOUND : EXIT_NONE;
}

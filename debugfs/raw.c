/*
 * Raw inspection and editing (group "Raw"): 'block' and 'inode' decode
 * on-disk bytes with the library's field tables (common/tux3_fields.h);
 * 'set_super', 'set_block' and 'set_inode' change them.  set_super and
 * set_block write the device directly, bypassing the log: they exist to
 * make corruptions on purpose.  After such a write the volume is closed
 * without committing and opened again, so that what follows sees the
 * change (or the open fails, and says why).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "debugfs.h"
#include "tux3_fields.h"

#define SB_OFFSET 4096
#define SB_LEN 4096

static int parse_num(const char *s, uint64_t *v)
{
	char *end;
	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*v = x;
	return 0;
}

/* INUM, <INUM> or a PATH */
static int parse_inode(struct shell *sh, const char *arg, tux3_ino_t *ino)
{
	uint64_t v;
	if (arg[0] >= '0' && arg[0] <= '9' && !parse_num(arg, &v)) {
		if (!v)
			return sh_err(sh, "%s: bad inode number", arg);
		*ino = v;
		return 0;
	}
	return sh_resolve(sh, arg, ino);
}

static int print_field(void *ctx, const char *name, unsigned offset,
		       unsigned width, const char *value, const char *desc)
{
	struct shell *sh = ctx;
	(void)width;
	fprintf(sh->out, "  %04x  %-16s %s", offset, name, value);
	if (desc)
		fprintf(sh->out, "   [%s]", desc);
	fputc('\n', sh->out);
	return 0;
}

/* xxd layout: hex offset, 8 groups of 2 bytes, text.  Unless full, runs
 * of zero lines after the first print as one "*" (the last line is
 * always shown). */
static void hexdump(FILE *o, const uint8_t *b, unsigned len, int full)
{
	static const uint8_t zero[16];
	int squeezed = 0;
	for (unsigned off = 0; off < len; off += 16) {
		unsigned n = len - off < 16 ? len - off : 16;
		if (!full && off && off + 16 < len && n == 16 &&
		    !memcmp(b + off, zero, 16) && !memcmp(b + off - 16, zero, 16)) {
			if (!squeezed++)
				fprintf(o, "*\n");
			continue;
		}
		squeezed = 0;
		fprintf(o, "%08x: ", off);
		for (unsigned i = 0; i < 16; i++) {
			if (i < n)
				fprintf(o, "%02x", b[off + i]);
			else
				fprintf(o, "  ");
			if (i & 1)
				fputc(' ', o);
		}
		fputc(' ', o);
		for (unsigned i = 0; i < n; i++) {
			uint8_t c = b[off + i];
			fputc(c >= 0x20 && c < 0x7f ? c : '.', o);
		}
		fputc('\n', o);
	}
}

/* ---- block N ---- */

int cmd_block(struct shell *sh, int argc, char **argv)
{
	static const char usage[] = "usage: block [-f] N";
	int full = 0, c;
	uint64_t n;
	optind = 0;
	while ((c = getopt(argc, argv, "f")) != -1) {
		if (c != 'f')
			return sh_err(sh, "%s", usage);
		full = 1;
	}
	if (argc - optind != 1)
		return sh_err(sh, "%s", usage);
	if (parse_num(argv[optind], &n))
		return sh_err(sh, "%s: bad block number", argv[optind]);
	unsigned bs = tux3_block_size(sh->vol);
	uint8_t *buf = malloc(bs);
	if (!buf)
		return sh_err(sh, "out of memory");
	int replayed, err = tux3_read_block(sh->vol, n, buf, &replayed);
	if (err) {
		free(buf);
		return sh_volerr(sh, argv[optind], err);
	}
	FILE *o = sh->out;
	fprintf(o, "block %" PRIu64 ": %u bytes at byte %" PRIu64 "%s\n", n, bs,
		n * bs, replayed ? " (image rebuilt by log replay; the disk "
		"copy is stale)" : "");
	hexdump(o, buf, bs, full);
	enum tux3_block_type t = tux3_sniff_block(buf, bs, n);
	fprintf(o, "type: %s", tux3_block_type_name(t));
	if (t == TUX3_BT_DATA)
		fprintf(o, " (no metadata magic: data, a free block or a "
			"stale image)");
	else if (t == TUX3_BT_SUPER)
		fprintf(o, " area (bytes %d..%d of the device)", SB_OFFSET,
			SB_OFFSET + SB_LEN - 1);
	else if (t == TUX3_BT_RESERVED)
		fprintf(o, " (boot area, not used by Tux3)");
	else
		fprintf(o, " (magic 0x%02x%02x)", buf[0], buf[1]);
	fputc('\n', o);
	err = tux3_decode_block(buf, bs, n, print_field, sh);
	free(buf);
	return err ? 1 : 0;
}

/* ---- inode INUM ---- */

static int print_attr(void *ctx, const struct tux3_attr_raw *a)
{
	struct shell *sh = ctx;
	fprintf(sh->out, "attribute %s: kind %u, version %u, offset %u, %u "
		"bytes\n", a->name, a->kind, a->version, a->offset, a->size);
	return tux3_decode_attr(a, print_field, sh);
}

int cmd_inode(struct shell *sh, int argc, char **argv)
{
	tux3_ino_t ino;
	tux3_block_t leaf = 0;
	unsigned len = 0;
	if (argc != 2)
		return sh_err(sh, "usage: inode INUM|<inum>|PATH");
	if (parse_inode(sh, argv[1], &ino))
		return 1;
	/* where first (fn NULL: only find the blob), then each attribute */
	int err = tux3_inode_attrs(sh->vol, ino, &leaf, &len, NULL, NULL);
	if (err)
		return sh_volerr(sh, argv[1], err);
	fprintf(sh->out, "inode %" PRIu64 ": %u-byte attribute blob in ileaf "
		"block %" PRIu64 "\n", ino, len, leaf);
	err = tux3_inode_attrs(sh->vol, ino, NULL, NULL, print_attr, sh);
	if (err)
		return sh_volerr(sh, argv[1], err);
	return 0;
}

/* ---- raw writes ---- */

/* Close without committing and open again; a failed open is reported
 * (that is what a corruption is for) and leaves no volume open. */
static void reopen(struct shell *sh)
{
	char *device = strdup(sh->device);
	tux3_ino_t cwd = sh->cwd;
	char cwdpath[sizeof(sh->cwdpath)], version[sizeof(sh->version)];
	memcpy(cwdpath, sh->cwdpath, sizeof(cwdpath));
	memcpy(version, sh->version, sizeof(version));
	tux3_close(sh->vol);
	sh->vol = NULL;
	sh->dirty = 0;
	if (!device) {
		sh_err(sh, "out of memory: volume closed");
		return;
	}
	if (sh_open(sh, device, sh->mode)) {
		sh_warn(sh, "the volume no longer opens (see above); no "
			"volume is open");
		free(sh->device);
		sh->device = NULL;
	} else {
		sh->cwd = cwd;
		memcpy(sh->cwdpath, cwdpath, sizeof(cwdpath));
		/* selected again after the command (sh_restore_version) */
		memcpy(sh->version, version, sizeof(version));
	}
	free(device);
}

int cmd_set_super(struct shell *sh, int argc, char **argv)
{
	static const char usage[] = "usage: set_super [-c] FIELD VALUE";
	int fixcrc = 0, c;
	uint8_t sb[SB_LEN];
	char why[300];
	optind = 0;
	while ((c = getopt(argc, argv, "c")) != -1) {
		if (c != 'c')
			return sh_err(sh, "%s", usage);
		fixcrc = 1;
	}
	if (argc - optind != 2)
		return sh_err(sh, "%s", usage);
	const char *field = argv[optind], *value = argv[optind + 1];
	const struct tux3_field *f = tux3_field_find(&tux3_fields_super, field);
	if (!f)
		return sh_err(sh, "set_super: no superblock field '%s' (see "
			      "'help set_super')", field);
	/* what the batch did so far goes first, as a normal commit */
	if (sh_commit(sh))
		return 1;
	int err = tux3_read_raw(sh->vol, SB_OFFSET, sb, sizeof(sb));
	if (err)
		return sh_volerr(sh, "set_super", err);
	err = tux3_field_set(f, sb, value, why, sizeof(why));
	if (err)
		return sh_err(sh, "set_super: %s", why);
	if (fixcrc)
		tux3_superext_fix_crc(sb);
	err = tux3_write_raw(sh->vol, SB_OFFSET, sb, sizeof(sb));
	if (err)
		return sh_volerr(sh, "set_super", err);
	char shown[200];
	tux3_field_format(f, sb, shown, sizeof(shown));
	fprintf(sh->out, "superblock %s (byte %u, %u bytes) = %s%s\n", f->name,
		SB_OFFSET + f->offset, f->width, shown,
		fixcrc ? "; extension CRC recomputed" : "");
	reopen(sh);
	return 0;
}

int cmd_set_block(struct shell *sh, int argc, char **argv)
{
	uint64_t n, off;
	if (argc != 4)
		return sh_err(sh, "usage: set_block N OFFSET HEXBYTES");
	if (parse_num(argv[1], &n))
		return sh_err(sh, "%s: bad block number", argv[1]);
	unsigned bs = tux3_block_size(sh->vol);
	if (parse_num(argv[2], &off) || off >= bs)
		return sh_err(sh, "%s: bad offset (0..%u, in the block)",
			      argv[2], bs - 1);
	const char *hex = argv[3];
	if (!strncmp(hex, "0x", 2))
		hex += 2;
	size_t digits = strlen(hex);
	if (!digits || digits % 2)
		return sh_err(sh, "%s: not an even number of hex digits",
			      argv[3]);
	size_t len = digits / 2;
	if (len > bs - off)
		return sh_err(sh, "%zu bytes at offset %" PRIu64 " run past "
			      "the end of the %u-byte block", len, off, bs);
	uint8_t *bytes = malloc(len);
	if (!bytes)
		return sh_err(sh, "out of memory");
	for (size_t i = 0; i < len; i++) {
		unsigned v;
		char two[3] = { hex[2 * i], hex[2 * i + 1], 0 };
		char *end;
		v = (unsigned)strtoul(two, &end, 16);
		if (*end || two[0] == '-' || two[0] == '+' || two[0] == ' ') {
			free(bytes);
			return sh_err(sh, "%s: not hex", argv[3]);
		}
		bytes[i] = (uint8_t)v;
	}
	struct tux3_super_info si;
	tux3_super_info(sh->vol, &si);
	if (n >= si.volblocks) {
		free(bytes);
		return sh_err(sh, "%s: block outside the volume (%" PRIu64
			      " blocks)", argv[1], si.volblocks);
	}
	if (sh_commit(sh)) {
		free(bytes);
		return 1;
	}
	int err = tux3_write_raw(sh->vol, n * bs + off, bytes, len);
	free(bytes);
	if (err)
		return sh_volerr(sh, "set_block", err);
	fprintf(sh->out, "block %" PRIu64 ": wrote %zu bytes at offset %"
		PRIu64 " (byte %" PRIu64 ")\n", n, len, off, n * bs + off);
	reopen(sh);
	return 0;
}

int cmd_set_inode(struct shell *sh, int argc, char **argv)
{
	tux3_ino_t ino;
	char why[300];
	if (argc != 4)
		return sh_err(sh, "usage: set_inode INUM FIELD VALUE");
	if (parse_inode(sh, argv[1], &ino))
		return 1;
	int err = tux3_set_inode_field(sh->vol, ino, argv[2], argv[3], why,
				       sizeof(why));
	if (err && why[0])
		return sh_err(sh, "set_inode: %s", why);
	if (err)
		return sh_volerr(sh, argv[1], err);
	return 0;
}

/* For tab completion: field names of set_super (which 0) or set_inode. */
const char *raw_field_name(int which, unsigned i)
{
	if (which == 0)
		return i < tux3_fields_super.count ?
		       tux3_fields_super.fields[i].name : NULL;
	return tux3_inode_field_names[i];
}

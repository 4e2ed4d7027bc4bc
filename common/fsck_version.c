/*
 * Pass 9: versions (doc/format.md 17).  The two marks of a volume with
 * versions (the superblock magic and the VERSIONS incompat bit) must
 * agree with each other and with inode 3; the version table must decode
 * and obey the tree's rules (vtree_check: label 0, parents, no cycle,
 * ghost <=> no tag, unique tags, every ghost with two children); a delete
 * left half done is reported.
 *
 * Repairs: the marks are set from inode 3 when it holds a table that
 * decodes, or cleared when there is no inode 3; a table on a volume with
 * no mark is removed only while no versioned leaf can exist (this build
 * writes none), which is always the case today.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "fsck_internal.h"
#include "version.h"

struct tree_report {
	struct fsck *f;
};

static void tree_problem(void *ctx, unsigned label, const char *what)
{
	struct tree_report *r = ctx;
	fsck_problem(r->f, P9_VTABLE_TREE, false,
		     FSCK_AT(.inum = TUX3_VTABLE_INO, .have = label), what);
}

static void set_marks(struct tux3_volume *vol, bool on)
{
	memcpy(vol->super.magic, on ? tux3_magic_versions : tux3_magic_2014,
	       8);
	if (on)
		vol->ident.incompat |= TUX3_FEATURE_INCOMPAT_VERSIONS;
	else
		vol->ident.incompat &= ~TUX3_FEATURE_INCOMPAT_VERSIONS;
	vol->super_dirty = true;
}

/* Inode 3 and what it holds: 1 a table that decodes, 0 none, -EUCLEAN a
 * damaged one (why says where), other <0 operational. */
static int read_table(struct tux3_volume *vol, char *why, size_t len)
{
	struct inode inode;
	int err = inode_load(vol, TUX3_VTABLE_INO, &inode);
	if (err == -ENOENT) {
		tux3_clear_error(vol);
		return 0;
	}
	if (err) {
		tux3_error_text(vol, why, len);
		tux3_clear_error(vol);
		return err == -ENOMEM ? err : -EUCLEAN;
	}
	inode_free(&inode);
	/* vtable_load decodes it, marks aside */
	uint8_t magic[8];
	uint32_t incompat = vol->ident.incompat;
	memcpy(magic, vol->super.magic, 8);
	memcpy(vol->super.magic, tux3_magic_versions, 8);
	vol->ident.incompat |= TUX3_FEATURE_INCOMPAT_VERSIONS;
	bool present = vol->ident.present;
	vol->ident.present = true;
	vtable_unload(vol);
	err = vtable_load(vol);
	memcpy(vol->super.magic, magic, 8);
	vol->ident.incompat = incompat;
	vol->ident.present = present;
	if (err == -ENOMEM)
		return err;
	if (err) {
		snprintf(why, len, "%s", vol->error.what);
		tux3_clear_error(vol);
		return -EUCLEAN;
	}
	return 1;
}

int fsck_pass9(struct fsck *f)
{
	struct tux3_volume *vol = f->vol;
	bool magic = !memcmp(vol->super.magic, tux3_magic_versions, 8);
	bool bit = vol->ident.present &&
		   (vol->ident.incompat & TUX3_FEATURE_INCOMPAT_VERSIONS);
	char why[300] = "";
	int table;

	if (f->unusable || !vol)
		return 0;
	table = read_table(vol, why, sizeof(why));
	if (table == -ENOMEM)
		return table;
	if (!magic && !bit) {
		if (table && fsck_problem(f, P9_STRAY_VTABLE, true,
					  FSCK_AT(.inum = TUX3_VTABLE_INO))) {
			struct inode inode;
			int err = inode_load(vol, TUX3_VTABLE_INO, &inode);
			if (!err) {
				err = inode_truncate(vol, &inode, 0);
				inode_free(&inode);
			}
			if (!err)
				err = inode_delete(vol, TUX3_VTABLE_INO);
			fsck_fixed(f, err);
		}
		vtable_unload(vol);
		return 0;
	}
	if (magic != bit || !table) {
		char text[200];
		snprintf(text, sizeof(text), "the volume is marked as having "
			 "versions by its %s only%s",
			 magic ? "superblock magic" : "VERSIONS feature bit",
			 table ? "" : ", and has no version table (inode 3)");
		/* setting the bit needs the extension record */
		bool fixable = table == 0 || (table == 1 && vol->ident.present);
		if (fsck_problem(f, P9_GATE, fixable,
				 FSCK_AT(.inum = TUX3_VTABLE_INO), text)) {
			set_marks(vol, table == 1);
			fsck_fixed(f, 0);
		}
	}
	if (table == -EUCLEAN) {
		fsck_problem(f, P9_VTABLE_BAD, false,
			     FSCK_AT(.inum = TUX3_VTABLE_INO), why);
		return 0;
	}
	if (table == 1) {
		struct tree_report r = { f };
		vtree_check(vol->vt, tree_problem, &r);
		if (vol->vpending && vol->vpending->count)
			fsck_problem(f, P9_DELETE_PENDING, false,
				     FSCK_AT(.inum = TUX3_VTABLE_INO),
				     (uint64_t)vol->vpending->count);
		fsck_info(f, "versions: %u labels, %u ghosts",
			  vol->vt->used, vol->vt->ghosts);
	}
	return 0;
}

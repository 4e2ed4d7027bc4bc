/*
 * Raw changes for editors (tux3debug's set_* and raw commands): bytes of
 * the device written as given, and one field of an inode's attributes
 * set and the inode stored through the write path.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "write/write.h"
#include "tux3_fields.h"

/* Each settable field: the attribute that holds it and its table. */
static const struct {
	const char *name;
	unsigned kind;
	const struct tux3_field_table *table;
} inode_fields[] = {
	{ "mode", ATTR_MODE_OWNER, &tux3_fields_attr_mode_owner },
	{ "uid", ATTR_MODE_OWNER, &tux3_fields_attr_mode_owner },
	{ "gid", ATTR_MODE_OWNER, &tux3_fields_attr_mode_owner },
	{ "size", ATTR_CTIME_SIZE, &tux3_fields_attr_ctime_size },
	{ "nlink", ATTR_LINK_COUNT, &tux3_fields_attr_link_count },
	{ "ctime", ATTR_CTIME_SIZE, &tux3_fields_attr_ctime_size },
	{ "mtime", ATTR_MTIME, &tux3_fields_attr_mtime },
	{ "rdev", ATTR_RDEV, &tux3_fields_attr_rdev },
	{ "dtree", ATTR_DATA_BTREE, &tux3_fields_attr_data_btree },
	{ "atime", ATTR_ATIME, &tux3_fields_attr_atime },
};

int tux3_write_raw(struct tux3_volume *vol, uint64_t offset,
		   const void *buf, size_t len)
{
	if (vol->dev.readonly || (vol->mode != TUX3_OPEN_RDWR &&
				  vol->mode != TUX3_OPEN_RDWR_NORECOVER))
		return vol_error(vol, -EROFS, TUX3_NONE, TUX3_NONE, offset,
				 "raw write refused: volume opened read-only");
	int err = raw_range(vol, offset, len);
	dir_index_forget_all(vol);	/* any block may be a directory's */
	if (!err && (err = dev_pwrite(&vol->dev, buf, len, offset)))
		return vol_error(vol, err, TUX3_NONE, TUX3_NONE, offset,
				 "cannot write: %s", strerror(-err));
	if (!err && (err = dev_flush(&vol->dev)))
		return vol_error(vol, err, TUX3_NONE, TUX3_NONE, offset,
				 "cannot flush: %s", strerror(-err));
	return err;
}

int tux3_set_inode_field(struct tux3_volume *vol, tux3_ino_t ino,
			 const char *field, const char *value, char *err,
			 size_t errlen)
{
	unsigned i;
	uint64_t v;
	char dummy[1];
	if (!errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = 0;
	for (i = 0; i < (sizeof(inode_fields) / sizeof(inode_fields[0])); i++)
		if (!strcmp(inode_fields[i].name, field))
			break;
	if (i == (sizeof(inode_fields) / sizeof(inode_fields[0]))) {
		snprintf(err, errlen, "no inode field '%s' (mode uid gid size "
			 "nlink ctime mtime rdev dtree atime)", field);
		return -ENOENT;
	}
	const struct tux3_field *f = tux3_field_find(inode_fields[i].table,
						     field);
	/* rdev also as MAJOR:MINOR */
	const char *colon = strchr(value, ':');
	if (inode_fields[i].kind == ATTR_RDEV && colon) {
		char *end;
		errno = 0;
		unsigned long long ma = strtoull(value, &end, 0);
		bool bad = end != colon || errno || *value == '-';
		unsigned long long mi = strtoull(colon + 1, &end, 0);
		bad |= *end || errno || !colon[1] || colon[1] == '-';
		if (bad) {
			snprintf(err, errlen, "rdev: '%s' is not MAJOR:MINOR",
				 value);
			return -EINVAL;
		}
		if (ma > 0xfff || mi > 0xfffff) {
			snprintf(err, errlen, "rdev: %s out of range (major "
				 "0..4095, minor 0..1048575)", value);
			return -ERANGE;
		}
		v = ma << 20 | mi;
	} else {
		uint8_t tmp[16] = { 0 };
		int ret = tux3_field_set(f, tmp, value, err, errlen);
		if (ret)
			return ret;
		tux3_field_get(f, tmp, &v);
	}
	if (!strcmp(field, "size") && v > iattr_max_size(vol->blockbits)) {
		snprintf(err, errlen, "size: %" PRIu64 " exceeds the format's "
			 "maximum %" PRIu64, v, iattr_max_size(vol->blockbits));
		return -ERANGE;
	}
	if (vol->mode != TUX3_OPEN_RDWR) {
		snprintf(err, errlen, "volume opened read-only");
		return -EROFS;
	}
	if (inode_fields[i].kind == ATTR_ATIME && !atime_enabled(vol)) {
		snprintf(err, errlen, "atime: the volume has no atime feature "
			 "(mkfs.tux3 -O atime)");
		return -EOPNOTSUPP;
	}
	struct inode inode;
	dir_index_forget(vol, ino);	/* its size or tree may change */
	int ret = inode_load(vol, ino, &inode);
	if (ret)
		return ret;
	switch (i) {
	case 0: inode.mode = (uint32_t)v; break;
	case 1: inode.uid = (uint32_t)v; break;
	case 2: inode.gid = (uint32_t)v; break;
	case 3: inode.size = v; break;
	case 4: inode.nlink = (uint32_t)v; break;
	case 5: inode.ctime = (int64_t)v; break;
	case 6: inode.mtime = (int64_t)v; break;
	case 7: inode.rdev = v; break;
	case 8: inode.dtree = v; break;
	case 9: inode.atime = (int64_t)v; break;
	}
	inode.present |= 1u << inode_fields[i].kind;
	ret = inode_store(vol, &inode);
	inode_free(&inode);
	return ret;
}

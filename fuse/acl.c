/*
 * POSIX ACLs as the kernel passes them in system.posix_acl_access (the
 * posix_acl_xattr form: a 4-byte version 2, then 8-byte entries of tag,
 * permission and id, little-endian).  An ACL of the three base entries
 * only says no more than the mode's permission bits, so, as the kernel's
 * own filesystems do, tux3fuse stores it as the mode and keeps no xattr:
 * cp -a and tar set one on every file they copy.
 */
#include <string.h>
#include "tux3fuse.h"

enum {
	ACL_XATTR_VERSION = 2,
	TAG_USER_OBJ = 0x01, TAG_GROUP_OBJ = 0x04, TAG_OTHER = 0x20,
};

static unsigned le16(const unsigned char *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8;
}

bool t3f_acl_is_mode(const void *value, size_t size, uint32_t *perm)
{
	const unsigned char *p = value;
	unsigned seen = 0;
	uint32_t bits = 0;
	if (size != 4 + 3 * 8 ||
	    (le16(p) | (unsigned)le16(p + 2) << 16) != ACL_XATTR_VERSION)
		return false;
	for (p += 4; p < (const unsigned char *)value + size; p += 8) {
		unsigned tag = le16(p), e = le16(p + 2);
		unsigned shift;
		if (e > 7)
			return false;
		switch (tag) {
		case TAG_USER_OBJ:
			shift = 6;
			break;
		case TAG_GROUP_OBJ:
			shift = 3;
			break;
		case TAG_OTHER:
			shift = 0;
			break;
		default:
			return false;	/* named users, groups, a mask */
		}
		if (seen & tag)
			return false;
		seen |= tag;
		bits |= (uint32_t)e << shift;
	}
	*perm = bits;
	return true;
}

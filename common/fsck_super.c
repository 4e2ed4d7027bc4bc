/*
 * Pass 1: the superblock alone, opened without the log: magic, geometry,
 * roots and log chain inside the volume, the extension record.
 */
#include <inttypes.h>
#include <stdio.h>
#include "fsck_internal.h"

/* Opening errors that mean damage (a problem), not an operational
 * failure of the device. */
bool fsck_open_damage(int err)
{
	return err == -EUCLEAN || err == -EINVAL || err == -EOPNOTSUPP ||
	       err == -EFBIG || err == -ERANGE || err == -EROFS;
}

int fsck_pass1(struct fsck *f)
{
	struct tux3_volume *vol;
	int err = tux3_open_err(f->path, TUX3_OPEN_NOREPLAY, &vol, f->msg,
				sizeof(f->msg));
	if (err) {
		if (!fsck_open_damage(err))
			return err;
		fsck_problem(f, P1_SUPER_BAD, false, NULL, f->msg);
		f->msg[0] = 0;
		f->unusable = true;
		return 0;
	}
	/* of the no-replay open's warnings only the superblock's own are
	 * problems: trees the log has yet to build are the format's normal
	 * state between unifies (pass 2 replays and checks them) */
	for (unsigned i = 0; i < tux3_warning_count(vol); i++)
		if (!strncmp(tux3_warning(vol, i), "superblock", 10))
			fsck_problem(f, P1_SUPER_WARNING, false, NULL,
				     tux3_warning(vol, i));
	tux3_close(vol);
	return 0;
}

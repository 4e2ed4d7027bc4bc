/*
 * Pass 7: orphans.  A pending orphan (unlinked while open, then a crash)
 * is the format's normal state, not an error: reported, and released
 * when repairing.
 */
#include <inttypes.h>
#include <stdio.h>
#include "fsck_internal.h"

int fsck_pass7(struct fsck *f)
{
	struct tux3_volume *vol = f->vol;
	f->res->orphans = tux3_orphan_count(vol);
	for (unsigned i = 0; i < f->res->orphans; i++)
		fsck_info(f, "inode %" PRIu64 ": orphan pending release "
			  "(unlinked while open; normal after a crash)%s",
			  tux3_orphan(vol, i),
			  fsck_repairing(f) ? ": released" : "");
	if (fsck_repairing(f) && f->res->orphans) {
		int err = fsck_release_orphans(vol);
		if (err)
			return err;
		f->res->modified = 1;
	}
	return 0;
}

/*
 * A tolerant reading of the log chain for volumes opened without replay
 * (tux3debug -c): it shows every block and record it can decode, newest
 * first, and stops at the first damage, reporting it through .error.
 * Nothing here feeds replay; it is for looking at a damaged log.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "core.h"
#include "tux3_walk.h"

int tux3_scan_log_raw(struct tux3_volume *vol,
		      const struct tux3_walk_ops *ops, void *ctx)
{
	uint64_t chain = vol->super.logchain;
	uint32_t logcount = vol->super.logcount;
	struct blockset seen = { 0 };
	uint8_t *buf = malloc(vol->blocksize);
	int r = 0;

	if (!buf)
		return -ENOMEM;
	tux3_clear_error(vol);
	for (uint32_t n = 0; n < logcount; n++) {
		struct loghead head;
		char why[128];
		if (chain < vol->reserved_blocks || chain >= vol->volblocks) {
			r = vol_error(vol, -EUCLEAN, TUX3_NONE, TUX3_NONE,
				      TUX3_NONE, "log chain: link %u of %u "
				      "points to block %" PRIu64 ", outside "
				      "the volume", n + 1, logcount, chain);
			break;
		}
		if ((r = blockset_add(&seen, chain)) <= 0) {
			if (!r)
				r = vol_error(vol, -EUCLEAN, chain, TUX3_NONE,
					      TUX3_NONE, "log chain loops back "
					      "to this block");
			break;
		}
		if ((r = dev_pread(&vol->dev, buf, vol->blocksize,
				   chain << vol->blockbits))) {
			r = vol_error(vol, r, chain, TUX3_NONE, TUX3_NONE,
				      "cannot read log block");
			break;
		}
		if (log_decode_head(buf, vol->blocksize, &head, why,
				    sizeof(why))) {
			r = vol_error(vol, -EUCLEAN, chain, TUX3_NONE, 0, "%s",
				      why);
			break;
		}
		if (ops->logblock &&
		    (r = ops->logblock(ctx, logcount - 1 - n, chain, head.bytes,
				       head.logchain)) < 0)
			break;
		unsigned end = LOG_HEADER_SIZE + head.bytes;
		for (unsigned off = LOG_HEADER_SIZE; off < end;) {
			struct logrec rec;
			unsigned size = log_decode_record(buf, off, end, &rec);
			if (!size) {
				r = vol_error(vol, -EUCLEAN, chain, TUX3_NONE,
					      off, "%s log record 0x%02x at "
					      "offset %u",
					      log_record_size(rec.code) ?
					      "truncated" : "invalid",
					      rec.code, off);
				goto out;
			}
			struct tux3_logrec_info info;
			log_record_info(&rec, off, size, 0, &info);
			if (ops->logrec && (r = ops->logrec(ctx, chain, &info)) < 0)
				goto out;
			off += size;
		}
		chain = head.logchain;
	}
out:
	if (r < 0 && vol->error.err && ops->error)
		ops->error(ctx, &vol->error);
	free(buf);
	blockset_free(&seen);
	return r < 0 ? r : 0;
}

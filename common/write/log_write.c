/*
 * Writing the log.  Every change of a delta appends its records here as
 * it happens (the first one of a delta is preceded by DELTA); at commit
 * they are packed into log blocks, which get physical blocks only then,
 * are chained to the previous logchain, and extend the current unify
 * cycle (logcount).  A log block is not logged as an allocation: replay
 * marks every block of the chain in use, and frees it after the next
 * unify, so we put it on that list too.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "write/write.h"

int log_append(struct tux3_volume *vol, const struct logrec *rec)
{
	struct wlog *w = &vol->wlog;
	unsigned size = log_record_size(rec->code);

	if (!size)
		return -EINVAL;
	if (!vol->delta_open && rec->code != LOG_DELTA) {
		struct logrec delta = { .code = LOG_DELTA };
		vol->delta_open = true;
		int err = log_append(vol, &delta);
		if (err)
			return err;
	}
	vol->delta_open = true;
	if (w->len + size > w->cap) {
		size_t ncap = w->cap ? w->cap * 2 : 4096;
		while (ncap < w->len + size)
			ncap *= 2;
		uint8_t *n = realloc(w->buf, ncap);
		if (!n)
			return -ENOMEM;
		w->buf = n;
		w->cap = ncap;
	}
	log_encode_record(w->buf + w->len, rec);
	w->len += size;
	return 0;
}

int log_balloc(struct tux3_volume *vol, uint64_t block, uint64_t count)
{
	struct logrec r = { .code = LOG_BALLOC, .block = block,
			    .count = (uint32_t)count };
	return log_append(vol, &r);
}

int log_bfree(struct tux3_volume *vol, unsigned code, uint64_t block,
	      uint64_t count)
{
	struct logrec r = { .code = code, .block = block,
			    .count = (uint32_t)count };
	return log_append(vol, &r);
}

int log_redirect(struct tux3_volume *vol, unsigned code, uint64_t oldb,
		 uint64_t newb)
{
	struct logrec r = { .code = code, .oldb = oldb, .newb = newb };
	return log_append(vol, &r);
}

int log_bnode_change(struct tux3_volume *vol, unsigned code, uint64_t parent,
		     uint64_t child, uint64_t key)
{
	struct logrec r = { .code = code, .parent = parent, .child = child,
			    .key = key };
	return log_append(vol, &r);
}

/* Records must not straddle log blocks: find where the payload that
 * starts at offset `from` of the buffer must end to fit one block. */
static size_t pack_end(const uint8_t *buf, size_t from, size_t len,
		       size_t room)
{
	size_t at = from;
	while (at < len) {
		unsigned size = log_record_size(buf[at]);
		if (at + size - from > room)
			break;
		at += size;
	}
	return at;
}

/*
 * Give the delta's records physical log blocks and write them.  Returns
 * the number of blocks written; vol->super.logchain/logcount move on.
 */
int log_write_blocks(struct tux3_volume *vol)
{
	struct wlog *w = &vol->wlog;
	size_t room = vol->blocksize - LOG_HEADER_SIZE;
	uint8_t *blk = vol->scratch;
	int written = 0;
	bool crc = vol->ident.present &&
		   (vol->ident.compat & SUPEREXT_COMPAT_LOG_CRC);

	/* our CRC count holds for the chain it was counted on only */
	if (!crc || vol->crclog_chain != vol->super.logchain)
		vol->crclog = 0;
	for (size_t at = 0; at < w->len;) {
		size_t end = pack_end(w->buf, at, w->len, room);
		uint64_t block, got;
		int err = balloc(vol, vol->super.logchain + 1, 1, true, &block,
				 &got);
		if (err)
			return err;
		memset(blk, 0, vol->blocksize);
		log_encode_head(blk, (unsigned)(end - at), vol->super.logchain);
		memcpy(blk + LOG_HEADER_SIZE, w->buf + at, end - at);
		if (crc)
			put_be32(blk + LOG_CRC_OFFSET,
				 log_block_crc(blk, vol->blocksize, block));
		err = dev_pwrite(&vol->dev, blk, vol->blocksize,
				 block << vol->blockbits);
		if (err)
			return vol_error(vol, err, block, TUX3_NONE, TUX3_NONE,
					 "cannot write log block");
		if ((err = defer_unify_add(vol, block, 1)))
			return err;
		vol->super.logchain = block;
		vol->super.logcount++;
		written++;
		if (crc)
			vol->crclog++;
		at = end;
	}
	w->len = 0;
	vol->crclog_chain = vol->super.logchain;
	return written;
}

void wlog_free(struct wlog *w)
{
	free(w->buf);
	memset(w, 0, sizeof(*w));
}

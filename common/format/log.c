/*
 * Log blocks (magic 0x10ad) and their records.
 *   header: be16 magic, be16 bytes (payload after the 16-byte header),
 *   be32 unused, be64 logchain (the previous, older, log block).
 *   payload: records back to back, a code byte then fixed big-endian
 *   fields whose layout the code implies.
 */
#include <inttypes.h>
#include <stdio.h>
#include "format/format.h"
#include "tux3_walk.h"

static const struct {
	const char *name;
	unsigned size;
} logtab[LOG_CODE_LAST - LOG_CODE_FIRST + 1] = {
	{ "BALLOC", 11 }, { "BFREE", 11 }, { "BFREE_ON_UNIFY", 11 },
	{ "BFREE_RELOG", 11 }, { "LEAF_REDIRECT", 13 }, { "LEAF_FREE", 7 },
	{ "BNODE_REDIRECT", 13 }, { "BNODE_ROOT", 26 }, { "BNODE_SPLIT", 15 },
	{ "BNODE_ADD", 19 }, { "BNODE_UPDATE", 19 }, { "BNODE_MERGE", 13 },
	{ "BNODE_DEL", 15 }, { "BNODE_ADJUST", 19 }, { "BNODE_FREE", 7 },
	{ "ORPHAN_ADD", 9 }, { "ORPHAN_DEL", 9 }, { "FREEBLOCKS", 7 },
	{ "UNIFY", 1 }, { "DELTA", 1 },
};

unsigned log_record_size(unsigned code)
{
	if (code < LOG_CODE_FIRST || code > LOG_CODE_LAST)
		return 0;
	return logtab[code - LOG_CODE_FIRST].size;
}

const char *log_code_name(unsigned code)
{
	if (code < LOG_CODE_FIRST || code > LOG_CODE_LAST)
		return "INVALID";
	return logtab[code - LOG_CODE_FIRST].name;
}

int log_decode_head(const uint8_t *blk, unsigned blocksize,
		    struct loghead *head, char *why, size_t whylen)
{
	head->magic = be16(blk);
	head->bytes = be16(blk + 2);
	head->unused = be32(blk + 4);
	head->logchain = be64(blk + 8);
	if (head->magic != TUX3_MAGIC_LOG) {
		snprintf(why, whylen, "bad log block magic 0x%04x (expected "
			 "0x%04x)", head->magic, TUX3_MAGIC_LOG);
		return -EUCLEAN;
	}
	if (head->bytes + LOG_HEADER_SIZE > blocksize) {
		snprintf(why, whylen, "log block payload of %u bytes exceeds "
			 "the block", head->bytes);
		return -EUCLEAN;
	}
	return 0;
}

unsigned log_decode_record(const uint8_t *blk, unsigned offset, unsigned end,
			   struct logrec *rec)
{
	const uint8_t *p = blk + offset + 1;
	unsigned code = blk[offset], size = log_record_size(code);

	memset(rec, 0, sizeof(*rec));
	rec->code = code;
	rec->offset = offset;
	if (!size || size > end - offset)
		return 0;
	switch (code) {
	case LOG_BALLOC: case LOG_BFREE: case LOG_BFREE_ON_UNIFY:
	case LOG_BFREE_RELOG:
		rec->count = be32(p);
		rec->block = be48(p + 4);
		break;
	case LOG_LEAF_REDIRECT: case LOG_BNODE_REDIRECT:
		rec->oldb = be48(p);
		rec->newb = be48(p + 6);
		break;
	case LOG_LEAF_FREE: case LOG_BNODE_FREE:
		rec->block = be48(p);
		break;
	case LOG_BNODE_ROOT:
		rec->count = p[0];
		rec->root = be48(p + 1);
		rec->left = be48(p + 7);
		rec->right = be48(p + 13);
		rec->rkey = be48(p + 19);
		break;
	case LOG_BNODE_SPLIT:
		rec->pos = be16(p);
		rec->src = be48(p + 2);
		rec->dst = be48(p + 8);
		break;
	case LOG_BNODE_ADD: case LOG_BNODE_UPDATE:
		rec->parent = be48(p);
		rec->child = be48(p + 6);
		rec->key = be48(p + 12);
		break;
	case LOG_BNODE_MERGE:
		rec->src = be48(p);
		rec->dst = be48(p + 6);
		break;
	case LOG_BNODE_DEL:
		rec->count = be16(p);
		rec->block = be48(p + 2);
		rec->key = be48(p + 8);
		break;
	case LOG_BNODE_ADJUST:
		rec->block = be48(p);
		rec->from = be48(p + 6);
		rec->to = be48(p + 12);
		break;
	case LOG_ORPHAN_ADD: case LOG_ORPHAN_DEL:
		rec->version = be16(p);
		rec->inum = be48(p + 2);
		break;
	case LOG_FREEBLOCKS:
		rec->freeblocks = be48(p);
		break;
	}
	return size;
}

unsigned log_record_blocks(const struct logrec *rec, uint64_t out[4],
			   uint32_t *count)
{
	*count = 1;
	switch (rec->code) {
	case LOG_BALLOC: case LOG_BFREE: case LOG_BFREE_ON_UNIFY:
	case LOG_BFREE_RELOG:
		*count = rec->count;
		/* fallthrough */
	case LOG_LEAF_FREE: case LOG_BNODE_FREE: case LOG_BNODE_DEL:
	case LOG_BNODE_ADJUST:
		out[0] = rec->block;
		return 1;
	case LOG_LEAF_REDIRECT: case LOG_BNODE_REDIRECT:
		out[0] = rec->oldb;
		out[1] = rec->newb;
		return 2;
	case LOG_BNODE_ROOT:
		out[0] = rec->root;
		out[1] = rec->left;
		if (rec->count < 2)
			return 2;
		out[2] = rec->right;
		return 3;
	case LOG_BNODE_SPLIT: case LOG_BNODE_MERGE:
		out[0] = rec->src;
		out[1] = rec->dst;
		return 2;
	case LOG_BNODE_ADD: case LOG_BNODE_UPDATE:
		out[0] = rec->parent;
		out[1] = rec->child;
		return 2;
	}
	return 0;
}

unsigned log_record_bnodes(const struct logrec *rec, uint64_t out[3])
{
	uint64_t b[4];
	uint32_t count;
	unsigned n;

	if (rec->code < LOG_BNODE_REDIRECT || rec->code > LOG_BNODE_ADJUST)
		return 0;
	n = log_record_blocks(rec, b, &count);
	/* ADD and UPDATE name a child too, which replay does not load */
	if (rec->code == LOG_BNODE_ADD || rec->code == LOG_BNODE_UPDATE)
		n = 1;
	for (unsigned i = 0; i < n && i < 3; i++)
		out[i] = b[i];
	return n < 3 ? n : 3;
}

int log_format_record(const struct logrec *r, char *buf, size_t len)
{
	const char *n = log_code_name(r->code);
	switch (r->code) {
	case LOG_BALLOC: case LOG_BFREE: case LOG_BFREE_ON_UNIFY:
	case LOG_BFREE_RELOG:
		return snprintf(buf, len, "%s count %u, block %" PRIu64, n,
				r->count, r->block);
	case LOG_LEAF_REDIRECT: case LOG_BNODE_REDIRECT:
		return snprintf(buf, len, "%s old %" PRIu64 ", new %" PRIu64,
				n, r->oldb, r->newb);
	case LOG_LEAF_FREE: case LOG_BNODE_FREE:
		return snprintf(buf, len, "%s block %" PRIu64, n, r->block);
	case LOG_BNODE_ROOT:
		return snprintf(buf, len, "%s count %u, root %" PRIu64 ", left %"
				PRIu64 ", right %" PRIu64 ", rkey %" PRIu64, n,
				r->count, r->root, r->left, r->right, r->rkey);
	case LOG_BNODE_SPLIT:
		return snprintf(buf, len, "%s pos %u, src %" PRIu64 ", dst %"
				PRIu64, n, r->pos, r->src, r->dst);
	case LOG_BNODE_ADD: case LOG_BNODE_UPDATE:
		return snprintf(buf, len, "%s parent %" PRIu64 ", child %" PRIu64
				", key %" PRIu64, n, r->parent, r->child,
				r->key);
	case LOG_BNODE_MERGE:
		return snprintf(buf, len, "%s src %" PRIu64 ", dst %" PRIu64, n,
				r->src, r->dst);
	case LOG_BNODE_DEL:
		return snprintf(buf, len, "%s count %u, bnode %" PRIu64 ", key %"
				PRIu64, n, r->count, r->block, r->key);
	case LOG_BNODE_ADJUST:
		return snprintf(buf, len, "%s bnode %" PRIu64 ", from %" PRIu64
				", to %" PRIu64, n, r->block, r->from, r->to);
	case LOG_ORPHAN_ADD: case LOG_ORPHAN_DEL:
		return snprintf(buf, len, "%s version %u, inum %" PRIu64, n,
				r->version, r->inum);
	case LOG_FREEBLOCKS:
		return snprintf(buf, len, "%s freeblocks %" PRIu64, n,
				r->freeblocks);
	}
	return snprintf(buf, len, "%s", n);
}

/*
 * Encoder, the inverse of log_decode_record(): writes rec at buf (code
 * byte first) and returns the record's size, or 0 for an invalid code.
 * buf must have log_record_size(rec->code) bytes.  Used by mkfs and the
 * write path.
 */
unsigned log_encode_record(uint8_t *buf, const struct logrec *rec)
{
	unsigned size = log_record_size(rec->code);
	uint8_t *p = buf + 1;

	if (!size)
		return 0;
	memset(buf, 0, size);
	buf[0] = (uint8_t)rec->code;
	switch (rec->code) {
	case LOG_BALLOC: case LOG_BFREE: case LOG_BFREE_ON_UNIFY:
	case LOG_BFREE_RELOG:
		put_be32(p, rec->count);
		put_be48(p + 4, rec->block);
		break;
	case LOG_LEAF_REDIRECT: case LOG_BNODE_REDIRECT:
		put_be48(p, rec->oldb);
		put_be48(p + 6, rec->newb);
		break;
	case LOG_LEAF_FREE: case LOG_BNODE_FREE:
		put_be48(p, rec->block);
		break;
	case LOG_BNODE_ROOT:
		p[0] = (uint8_t)rec->count;
		put_be48(p + 1, rec->root);
		put_be48(p + 7, rec->left);
		put_be48(p + 13, rec->right);
		put_be48(p + 19, rec->rkey);
		break;
	case LOG_BNODE_SPLIT:
		put_be16(p, (uint16_t)rec->pos);
		put_be48(p + 2, rec->src);
		put_be48(p + 8, rec->dst);
		break;
	case LOG_BNODE_ADD: case LOG_BNODE_UPDATE:
		put_be48(p, rec->parent);
		put_be48(p + 6, rec->child);
		put_be48(p + 12, rec->key);
		break;
	case LOG_BNODE_MERGE:
		put_be48(p, rec->src);
		put_be48(p + 6, rec->dst);
		break;
	case LOG_BNODE_DEL:
		put_be16(p, (uint16_t)rec->count);
		put_be48(p + 2, rec->block);
		put_be48(p + 8, rec->key);
		break;
	case LOG_BNODE_ADJUST:
		put_be48(p, rec->block);
		put_be48(p + 6, rec->from);
		put_be48(p + 12, rec->to);
		break;
	case LOG_ORPHAN_ADD: case LOG_ORPHAN_DEL:
		put_be16(p, (uint16_t)rec->version);
		put_be48(p + 2, rec->inum);
		break;
	case LOG_FREEBLOCKS:
		put_be48(p, rec->freeblocks);
		break;
	}
	return size;
}

/* Log block header (the inverse of log_decode_head). */
void log_encode_head(uint8_t *blk, unsigned bytes, uint64_t logchain)
{
	put_be16(blk, TUX3_MAGIC_LOG);
	put_be16(blk + 2, (uint16_t)bytes);
	put_be32(blk + 4, 0);
	put_be64(blk + 8, logchain);
}

uint32_t log_block_crc(const uint8_t *blk, unsigned blocksize,
		       uint64_t blocknr)
{
	static const uint8_t zero[4];
	uint8_t seed[8];

	put_be64(seed, blocknr);
	uint32_t c = tux3_crc32c(0, seed, sizeof(seed));
	c = tux3_crc32c(c, blk, LOG_CRC_OFFSET);
	c = tux3_crc32c(c, zero, sizeof(zero));
	return tux3_crc32c(c, blk + LOG_CRC_OFFSET + 4,
		      blocksize - LOG_CRC_OFFSET - 4);
}

/* The walker's view of a decoded record (walk.c, logscan.c). */
void log_record_info(const struct logrec *rec, unsigned offset,
		     unsigned size, int live, struct tux3_logrec_info *info)
{
	uint64_t bn[3];
	*info = (struct tux3_logrec_info){
		.code = rec->code, .name = log_code_name(rec->code),
		.offset = offset, .size = size, .live = live,
	};
	log_format_record(rec, info->text, sizeof(info->text));
	info->nbnodes = log_record_bnodes(rec, bn);
	for (unsigned k = 0; k < info->nbnodes; k++)
		info->bnodes[k] = bn[k];
}

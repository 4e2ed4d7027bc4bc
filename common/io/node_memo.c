/*
 * The memo of checked bnodes (struct node_memo in volume.h).
 *
 * Every probe of a B-tree loads the nodes on its path and checks them
 * (format/bnode.c), as disk data is untrusted.  A write path probes the
 * same trees for every operation (populate: about seven probes of the
 * inode table per file), so the same unchanged root and index nodes
 * were checked again and again, a full scan of up to a block of entries
 * each time.  The memo remembers, per block, the key range a bnode was
 * last found valid for; a probe that loads the same block for the same
 * range skips the scan.  It is forgotten by every write of the block to
 * the device and every change of its image in the overlay, so what is
 * skipped is always the very bytes that were checked.
 */
#include "io/io.h"

static struct node_memo_ent *slot(struct node_memo *m, uint64_t block)
{
	return &m->ent[(block * 0x9e3779b97f4a7c15ULL) >>
		       (64 - NODE_MEMO_BITS)];
}

bool node_memo_has(struct node_memo *m, uint64_t block, uint64_t lo,
		   uint64_t hi, uintptr_t kind)
{
	const struct node_memo_ent *e = slot(m, block);
	return e->block == block && e->lo == lo && e->hi == hi &&
	       e->kind == kind;
}

void node_memo_add(struct node_memo *m, uint64_t block, uint64_t lo,
		   uint64_t hi, uintptr_t kind)
{
	*slot(m, block) = (struct node_memo_ent){ block, lo, hi, kind };
}

void node_memo_forget(struct node_memo *m, uint64_t block, uint64_t count)
{
	if (!m)
		return;
	if (count >= NODE_MEMO_SLOTS) {	/* cheaper to look at every slot */
		for (unsigned i = 0; i < NODE_MEMO_SLOTS; i++)
			if (m->ent[i].block >= block &&
			    m->ent[i].block - block < count)
				m->ent[i].block = 0;
		return;
	}
	for (uint64_t b = block; b < block + count; b++) {
		struct node_memo_ent *e = slot(m, b);
		if (e->block == b)
			e->block = 0;
	}
}

/* Bytes [off, off + len) of the device change. */
void node_memo_forget_bytes(struct node_memo *m, uint64_t off, size_t len)
{
	if (!m || !len)
		return;
	uint64_t first = off >> m->blockbits;
	uint64_t last = (off + len - 1) >> m->blockbits;
	node_memo_forget(m, first, last - first + 1);
}

void node_memo_clear(struct node_memo *m)
{
	if (m)
		for (unsigned i = 0; i < NODE_MEMO_SLOTS; i++)
			m->ent[i].block = 0;
}

/*
 * What an open volume is: struct tux3_volume and the plain state it is
 * made of (the device, the superblock as read, the replay overlay, the
 * live bitmap, the atom table, orphans, the delta being built), with the
 * volume's geometry constants.  Data only, and three inline questions
 * about it (writable, block and extent in range): every layer of
 * libtux3 reads it, so it sits below them all and includes nothing of
 * theirs.  Each member's code lives in the layer its comment names.
 */
#ifndef TUX3_VOLUME_H
#define TUX3_VOLUME_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "tux3.h"

/* The volume's geometry (doc/format.md). */
#define TUX3_SB_OFFSET	4096
#define TUX3_SB_LEN	4096
#define TUX3_RESERVED_BYTES 8192
#define TUX3_MIN_BLOCKBITS 9
#define TUX3_MAX_BLOCKBITS 16
#define TUX3_MAX_BLOCK	((1ULL << 48) - 1)
#define TUX3_KEY_LIMIT	(1ULL << 48)
#define TUX3_MAX_DEPTH	30
#define TUX3_GROUPBITS	13

/*
 * B-tree nodes known valid (io/node_memo.c): a node checked once is not
 * checked again on every probe while its bytes, its parent's range for
 * it and the kind it was checked as stay the same.  Every change of a
 * block's bytes through the device or the overlay forgets it.
 */
#define NODE_MEMO_BITS 10
#define NODE_MEMO_SLOTS (1u << NODE_MEMO_BITS)	/* direct-mapped by block */
struct node_memo_ent {
	uint64_t block;		/* 0: empty (block 0 is never a node) */
	uint64_t lo, hi;	/* the key range it was checked against */
	uintptr_t kind;		/* NODE_MEMO_BNODE, or the leaf's ops */
};
#define NODE_MEMO_BNODE 0
struct node_memo {
	struct node_memo_ent ent[NODE_MEMO_SLOTS];
	unsigned blockbits;
};

/* The device a volume is on (io/device.c, io/devcache.c). */
struct device {
	int fd;
	bool readonly;
	/* test hook: called before every write (no cost when unset) */
	void (*on_write)(void *ctx, uint64_t offset, size_t len);
	void *hook_ctx;
	/* the crash simulator's write recorder (record.h; NULL: none) */
	struct recorder *rec;
	bool blockdev;
	uint64_t size;		/* bytes */
	char *path;
	struct dev_cache *cache;	/* devcache.c; NULL: reads go to disk */
	struct dev_direct *direct;	/* dev_direct.c; NULL: off */
	uint64_t direct_writes;	/* work counter: writes that took it */
	uint64_t flushes;	/* work counter: dev_flush calls */
	uint64_t reads;		/* work counter: reads that reached the
				 * device (past the cache) */
	struct node_memo *memo;	/* forgets what is written; NULL: none */
	/* readahead (dev_readahead) once reads were seen waiting */
	unsigned window_reads, slow_reads;
	bool readahead_on;
	uint64_t readaheads;	/* work counter: hints given */
};

/* A tree root, unpacked from its on-disk form (format/super.c). */
struct root {
	uint64_t block;
	unsigned depth;		/* tree depth, 0 = none */
	bool direct;
	unsigned count;		/* direct extent length */
};

/* The superblock's fields as decoded (format/super.c). */
struct disksuper {
	uint8_t magic[8];
	uint64_t birthdate, flags;
	unsigned blockbits;
	uint64_t volblocks;
	uint64_t iroot, oroot;
	uint64_t usedinodes, nextblock, atomdictsize;
	uint32_t freeatom, atomgen;
	uint64_t logchain;
	uint32_t logcount;
};

/* A set of block numbers (io/blockset.c). */
struct blockset {
	uint64_t *slots;
	size_t count, cap;
};

/*
 * A space map (io/spacemap.c): a bitmap over up to 2^48 bits held as a
 * radix tree of fixed-size chunks, materialised only where the caller
 * puts one (a chunk with a set bit, or one it loaded), so its size
 * follows the space in use, not the volume.  Each chunk keeps the count
 * of its set bits per unit of 2^countbits bits, and a byte of flags for
 * its owner (the live bitmap's dirty mark).
 */
struct spacemap_chunk {
	uint64_t index;		/* chunk number: bits index << chunkbits.. */
	uint8_t flags;		/* the owner's */
	uint32_t *count;	/* set bits per unit */
	uint8_t *bits;		/* 2^chunkbits bits, LSB first */
};

struct spacemap {
	unsigned chunkbits;	/* bits per chunk, log2 */
	unsigned countbits;	/* bits per counted unit, log2 (<= chunkbits) */
	unsigned levels;	/* radix levels above the chunks */
	void **root;
	uint64_t chunks;	/* materialised */
	uint64_t bytes;		/* memory held, nodes and chunks */
};

/* The replay overlay: in-memory bnode images rebuilt from the log
 * (io/overlay.c). */
struct overlay_ent {
	uint64_t block;
	uint8_t *data;		/* NULL = dropped (BNODE_FREE) */
	unsigned flags;		/* OV_* */
};

/* Why an image is in the overlay (none: rebuilt by replay only, as read) */
#define OV_UNIFY_DIRTY	1	/* bnode changed this unify cycle: written at unify */

#define OV_DELTA_DIRTY	2	/* leaf or other block of the open delta: written
				 * at its commit */

struct overlay {
	struct overlay_ent *ents;
	size_t count, cap;	/* open addressing, cap power of two */
	struct node_memo *memo;	/* forgets what is changed; NULL: none */
};

/* A log block's header (format/log.c). */
struct loghead {
	unsigned magic, bytes;
	uint32_t unused;
	uint64_t logchain;
};

/* One log block of the current cycle, chronological index. */
struct logblk {
	uint64_t blocknr;
	uint8_t *data;
	struct loghead head;
};

/* The live allocation bitmap (bitmap.c; allocation is write/balloc.c). */
struct bitmap {
	uint64_t volblocks;
	unsigned blockbits;
	uint64_t nchunks;	/* one chunk = one bitmap block */
	struct spacemap map;	/* the chunks loaded (a hole on disk loads
				 * as zeroes), each with its used count per
				 * group (or per chunk when a chunk is less
				 * than a group); flag BITMAP_DIRTY: changed
				 * since the disk copy */
	bool ready;		/* the allocator's reserve is set */
	uint64_t ngroups;
};
#define BITMAP_DIRTY 1

/* Allocation (balloc.c).  Blocks freed by a delta may be reused only
 * once the commit that freed them is durable, so frees are deferred. */
struct extent_list {
	struct { uint64_t block, count; } *v;
	size_t count, cap;
};

/* One xattr of an inode: its atom and where its value sits in the blob. */
struct xattr_ref {
	unsigned atom;
	unsigned offset;	/* of the value inside inode->blob */
	unsigned size;
};

/* An inode in memory, decoded from its attribute blob (inode.c,
 * format/iattr.c). */
struct inode {
	tux3_ino_t inum;
	unsigned present;	/* bit per fixed attribute kind */
	uint32_t mode, uid, gid, nlink;
	uint64_t size;
	uint64_t rdev;		/* major << 20 | minor */
	int64_t ctime, mtime;
	int64_t atime;		/* ATIME attribute (format.md 15.6), when
				 * present; else reads as mtime */
	uint64_t dtree;		/* packed root */
	uint8_t *blob;		/* copy of the on-disk attribute blob */
	unsigned bloblen;
	unsigned nxattr;
	struct xattr_ref *xattrs;
	uint64_t leafblock;	/* ileaf that holds it */
	bool orphan;
};

/* The atime an inode reads as: its ATIME attribute (kind 15, format.md
 * 15.6), or mtime where it has none (the 2014 format's noatime). */
static inline int64_t inode_atime(const struct inode *inode)
{
	return inode->present & (1u << 15) ? inode->atime : inode->mtime;
}

/* The atom table's names, loaded once (atom.c). */
struct atom_table {
	bool loaded;
	unsigned count;		/* == atomgen */
	char **names;		/* by atom, NULL = none */
	uint64_t *dictpos;
};

/* The commit fields the record was sealed against, plus its sequence. */
struct superext_seal {
	uint64_t seq;
	uint64_t logchain;
	uint32_t logcount;
	uint64_t iroot, oroot;		/* packed, as on disk */
	uint32_t crclog;		/* newest log blocks with our CRC */
	uint32_t dxgen;			/* DIR_INDEX generation */
};

/* The records of the delta being built (write/log_write.c). */
struct wlog {
	uint8_t *buf;
	size_t len, cap;
};

/* A set of orphan inode numbers (orphan.c). */
struct orphan_set {
	tux3_ino_t *inums;
	unsigned count, cap;
};

/* Replay's salvage mode (replay.c, replay_salvage_mode): fsck's last
 * resort for a log that neither replays nor can be cut back.  Damaged
 * log blocks are read up to their first record that does not validate,
 * the chain is followed as far as it can be, and records that do not
 * apply are skipped; what happened is counted here for the report. */
struct replay_salvage {
	bool on;
	unsigned cut;		/* log blocks read only in part (or their
				 * CRC did not match) */
	unsigned cut_bytes;	/* payload bytes left out of them */
	unsigned lost;		/* blocks of the chain not reached */
	uint64_t bridged;	/* a lost link found again: the block it
				 * leads to (0 none) */
	unsigned skipped;	/* records that did not apply */
	unsigned index_leaves;	/* the inode table's index rebuilt over
				 * these many leaves found on the volume
				 * (replay_index.c), 0 not */
	struct tux3_error first_cut, first_skip;	/* the first of each */
	/* the records stage 1 skipped (chronological block, offset), in
	 * log order: stage 2 skips them too */
	struct { unsigned index, offset; } *skips;
	unsigned nskips, cap, next;
	/* damaged bytes within a block's payload, records found again
	 * after them: replay steps from 'from' to 'to' */
	struct { unsigned index, from, to; } *gaps;
	unsigned ngaps, gapcap;
	/* log blocks holding a copy of an older one (replay.c's
	 * salvage_find_copies): their records dropped, their link not
	 * followed */
	struct blockset copies;
	/* redirect sources the rebuilt index took for its nodes
	 * (replay_index.c): stage 2 does not free them at the unify */
	struct blockset kept;
};

/* The in-memory directory indexes (dir_index.c): private to it. */
struct dir_index_set;

/* An open volume: the handle of the public API (tux3.h). */
struct tux3_volume {
	struct device dev;
	/* blocks already hinted for readahead (vol_readahead): a later
	 * walk over the same blocks finds them cached or in flight, and a
	 * hint per block would only cost a system call each */
	struct spacemap hinted;
	enum tux3_open_mode mode;
	struct disksuper super;
	uint8_t sbraw[TUX3_SB_LEN];
	unsigned blockbits, blocksize;
	uint64_t volblocks;
	uint64_t reserved_blocks;	/* blocks covering bytes 0..8191 */
	struct root iroot, oroot;	/* live, after replay */
	uint64_t freeblocks;
	bool replayed;

	struct logblk *log;		/* chronological */
	unsigned logcount;
	int unify_index;		/* -1 = none in the chain */
	unsigned unify_offset;
	struct replay_salvage salvage;	/* off but for fsck's salvage */

	struct overlay overlay;
	struct node_memo memo;		/* bnodes checked, for probes */
	struct bitmap bitmap;
	struct inode bitmap_inode;	/* valid if has_bitmap_inode */
	bool has_bitmap_inode;
	struct atom_table atoms;
	struct orphan_set orphans;	/* the live orphan list */
	struct orphan_set log_orphans;	/* ORPHAN_ADD not cancelled */
	struct orphan_set otree_deletes; /* ORPHAN_DEL of otree entries */
	uint64_t replay_conflicts;	/* bitmap conflicts met by replay */
#define REPLAY_CONFLICTS_KEPT 1024
	struct replay_conflict conflicts[REPLAY_CONFLICTS_KEPT];
	unsigned nconflicts;		/* the first ones, for fsck */
	struct extent_list defer_free;	/* freed by the delta being built */
	/* the write path (RDWR) */
	struct wlog wlog;		/* records of the open delta */
	bool delta_open;		/* records were logged since the commit */
	bool super_dirty;		/* superblock fields changed */
	/* a commit failed part way: what is in memory may not match what
	 * the disk holds, so nothing more is changed or committed (EROFS)
	 * until the volume is reopened and its log replayed */
	bool commit_failed;
	/* ... after its superblock write, the commit point: the disk
	 * holds the new state (fsck tells a failure before it from one
	 * after) */
	bool failed_after_super;
	struct blockset fresh;		/* blocks allocated by the open delta:
					 * not referenced by the committed
					 * state, so rewritable in place */
	unsigned unify_log_limit;	/* unify when the cycle has this many
					 * log blocks ... */
	unsigned unify_bnode_limit;	/* ... or this many dirty bnodes */
	/* tux3_set_lazy_commits: commits skip the device flush (vol_barrier)
	 * until tux3_umount; unflushed says one was skipped */
	bool lazy_commits, unflushed;
	bool lazy_cache;	/* the block cache is lazy commits' own */
	int64_t fixed_time;		/* SOURCE_DATE_EPOCH in ns ... */
	bool time_fixed;		/* ... when set */
	uint64_t inum_hint;		/* after the last inode number given */
	uint64_t alloc_cursor;		/* after the last block allocated */
	/* records a versioned leaf is filled to before it splits and its
	 * busiest block's elements go to a chain (0: all it holds); a knob
	 * of the crash simulator's, which makes chains (format.md 17.3c)
	 * with a few versions */
	unsigned vleaf_cap;
	struct open_ref *open;		/* open handles per inode */
	unsigned nopen;
	/* test hook: called after each commit point (no cost when unset) */
	void (*on_commit)(struct tux3_volume *vol, void *ctx);
	void *commit_ctx;
	unsigned commit_bound;		/* commit when a delta logs this many
					 * records' worth of changes */
	uint64_t reserve_blocks;	/* kept for unlink/truncate at ENOSPC */
	bool reserve_released;		/* fsck -y: most of it is free to use */
	/* deferred frees met in replay: log blocks and redirected bnodes */
	struct { uint64_t block; uint32_t count; } *deunify;
	unsigned ndeunify, deunify_cap;

	uint64_t inode_loads;		/* work counter: inode_load calls */
	uint64_t dir_block_reads;	/* work counter: directory blocks read
					 * (dir.c) */
	uint64_t ns_state_bytes;	/* the last namespace check's per-inode
					 * state (check.c), for fsck -t */
	/* the blob tux3_walk's inode callback is called for (walk.c,
	 * walk_blob_of), so that the library's own visitors can look at
	 * its version labels without reading the inode again */
	const uint8_t *walk_blob;
	unsigned walk_bloblen;
	tux3_ino_t walk_ino;
	struct dir_index_set *dirindex;	/* dir_index.c; NULL until used */
	struct tux3_error error;
	char **warnings;
	uint8_t *warning_sources;	/* enum tux3_warning_source, per warning */
	unsigned nwarnings;
	enum tux3_warning_source warn_source;	/* of the step now running:
						 * what vol_warn records */
	uint8_t *scratch;		/* one block, short-lived use only */
	/* inode_store's encoding buffer, kept from one store to the next
	 * (inode_write.c); busy while a store uses it */
	uint8_t *encode_buf;
	bool encode_busy;
	/* block buffers cursors are done with, for the next probe
	 * (io/vol_io.c: vol_buf_get, vol_buf_put) */
	uint8_t *spare_bufs[2 * (TUX3_MAX_DEPTH + 1)];
	unsigned nspare_bufs;

	/* our superblock extension record (superext.c), as read at open */
	struct tux3_identity ident;	/* present == 0: none or unusable */
	struct superext_seal seal;
	/* LOG_CRC: the newest crclog blocks of the chain ending at
	 * crclog_chain carry our CRC (log_write.c) */
	uint32_t crclog;
	uint64_t crclog_chain;
	/* DIR_INDEX (format.md 15.5): the generation an index must carry
	 * to be used, the seal's, plus one when the seal does not match */
	uint32_t dxgen;
	/* versions (vtable_inode.c): NULL on a volume without them */
	struct vtree *vt;
	const struct vinode_ops *vops;	/* set by the open (see vinode_ops) */
	struct vdelete_plan *vpending;	/* a delete to resume, or NULL */
	size_t write_done;		/* bytes the last inode_write_data
					 * wrote before it stopped */
	uint32_t vtag;			/* the selected version: its tag,
					 * 0 the live one (the origin) */
	bool vt_dirty;			/* vt changed by a write (an
					 * implicit child): saved at commit */
	/* vt is what vtable_salvage kept of a table that does not decode
	 * (format.md 17.4): the live version reads through it, snapshots
	 * are not selectable, and only fsck's repair writes (vtable_save
	 * clears it) */
	bool vt_bad;
	unsigned vt_dropped;		/* labels the salvage dropped */
	struct vindex *vindex;		/* the version index, once read
					 * (version/vindex.c) */
};

/* 0 when the volume may be changed: opened read-write, and no commit has
 * failed since; else -EROFS. */
static inline int vol_writable(const struct tux3_volume *vol)
{
	return vol->mode == TUX3_OPEN_RDWR && !vol->commit_failed ? 0
								   : -EROFS;
}

static inline bool vol_block_valid(const struct tux3_volume *vol, uint64_t b)
{
	return b < vol->volblocks;
}

/* A block an index node may point to: inside the volume, past the
 * reserved area. */
static inline bool vol_node_child_valid(const struct tux3_volume *vol,
					uint64_t b)
{
	return b >= vol->reserved_blocks && b < vol->volblocks;
}

static inline bool vol_extent_valid(const struct tux3_volume *vol, uint64_t b,
				    uint64_t n)
{
	return n > 0 && b < vol->volblocks && n <= vol->volblocks - b;
}

/* Open handles of an inode (write/orphan_write.c). */
struct open_ref {
	tux3_ino_t inum;
	unsigned count;
};

#endif

/*
 * libtux3 public API.
 *
 * One opaque volume handle carries all state; there is no global mutable
 * state.  Every function that can fail returns a negative errno; the volume
 * then keeps the context of the failure (block, inode, offset, text) which a
 * caller prints with tux3_error_text().  The library never prints.
 */
#ifndef TUX3_H
#define TUX3_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint64_t tux3_ino_t;
typedef uint64_t tux3_block_t;

/* Reserved inode numbers of the 2014 format. */
enum {
	TUX3_BITMAP_INO = 1,
	TUX3_COUNTMAP_INO = 2,
	TUX3_VTABLE_INO = 3,
	TUX3_ATABLE_INO = 4,
	TUX3_VOLMAP_INO = 61,
	TUX3_LOGMAP_INO = 62,
	TUX3_ROOT_INO = 63,
	TUX3_NORMAL_INO = 64,
};

/*
 * Open modes.
 *  RDONLY          replays the log in memory, keeps orphans, never writes
 *                  (the device is opened O_RDONLY under a shared lock).
 *  RDWR_NORECOVER  replays in memory like RDONLY but takes the exclusive
 *                  lock and opens the device for writing: what fsck uses
 *                  before it decides what to repair.
 *  RDWR            read-write: changes gather in a delta, committed by
 *                  tux3_sync(), tux3_umount() or when the delta grows past
 *                  a bound.  Refused (-EUCLEAN) when replay met allocation
 *                  conflicts.  The open finishes what a crash left: a
 *                  snapshot delete half done, then the orphans found by
 *                  replay (inodes unlinked while open in a run that is
 *                  over) are destroyed and their space given back, in a
 *                  commit of their own.
 *  NOREPLAY        reads only the superblock and on-disk trees, without the
 *                  log: to inspect a volume whose log is damaged.  Bnodes and
 *                  free space may then be stale.
 */
enum tux3_open_mode {
	TUX3_OPEN_RDONLY,
	TUX3_OPEN_RDWR_NORECOVER,
	TUX3_OPEN_RDWR,
	TUX3_OPEN_NOREPLAY,
	/* Flag bits ORed into a mode (the mode proper is the low byte). */
	TUX3_OPEN_MODE_MASK = 0xff,
	/*
	 * SHARED_LOCK, with a writable mode: open the device for writing
	 * under the shared volume lock instead of the exclusive one, and
	 * without O_EXCL on a block device, so that a read-only user (a
	 * read-only mount, a reader such as tux3debug) keeps its own shared
	 * lock.  Writers using the flag still exclude one another (an OFD
	 * write lock on the first byte).  Only for fsck repairing a volume
	 * mounted read-only: the read-only user keeps its old view and must
	 * remount.  No effect on RDONLY and NOREPLAY, which lock shared
	 * anyway.
	 */
	TUX3_OPEN_SHARED_LOCK = 0x100,
	/*
	 * VERSIONED_WRITER: kept for callers built against interface 1; the
	 * write path knows versions, so it changes nothing.
	 */
	TUX3_OPEN_VERSIONED_WRITER = 0x200,
};

struct tux3_volume;

/* Where and what went wrong last (UINT64_MAX means "not known"). */
struct tux3_error {
	int err;		/* negative errno, 0 if none */
	tux3_block_t block;
	tux3_ino_t inum;
	uint64_t offset;
	char what[256];
};

#define TUX3_NONE UINT64_MAX

int tux3_open(const char *path, enum tux3_open_mode mode,
	      struct tux3_volume **volp);
/* Like tux3_open(), but on failure keeps the error text in errbuf. */
int tux3_open_err(const char *path, enum tux3_open_mode mode,
		  struct tux3_volume **volp, char *errbuf, size_t errlen);
/* Close without committing: like a crash, the next open replays the
 * last committed state. */
void tux3_close(struct tux3_volume *vol);
/* Commit what is pending, then close; the device is flushed. */
int tux3_umount(struct tux3_volume *vol);
/* Lazy commits do everything a commit does but wait for no device
 * flush, so the device may hold their blocks in any order: a crash can
 * leave any mix of them.  Only for a writer whose states before the
 * unmount need not survive a crash (mkfs.tux3 -d: an interrupted copy
 * is made again).  Bounds memory as commits do.  tux3_umount, or this
 * call with false, flushes.  -EROFS unless read-write. */
int tux3_set_lazy_commits(struct tux3_volume *vol, int lazy);
/* Keep up to bytes of recently read blocks in memory (0: none, the
 * default), for a long-lived user such as tux3fuse.  Write-through: the
 * device never differs from it. */
int tux3_set_cache(struct tux3_volume *vol, size_t bytes);
/* The in-memory directory index: a directory of min_blocks blocks or
 * more gets a hash index of its names at its first lookup, so lookups,
 * creates and unlinks in it read one block; all indexes together are
 * kept under max_bytes (0: the default, 64 MiB), the least recently used
 * dropped first.  min_blocks 0 switches it off.  The default is on, 4
 * blocks.  Nothing on disk depends on it. */
int tux3_set_dir_index(struct tux3_volume *vol, unsigned min_blocks,
		       size_t max_bytes);
/* Reads of one block the cache answered, and those it did not. */
void tux3_cache_stats(const struct tux3_volume *vol, uint64_t *hits,
		      uint64_t *misses);
/* Work done since the open, for tests that count work instead of timing
 * it: reads that reached the device (past the cache) and inode loads. */
void tux3_work_counts(const struct tux3_volume *vol, uint64_t *device_reads,
		      uint64_t *inode_loads);
/* Use this time (ns since the epoch) for every timestamp written, e.g.
 * from SOURCE_DATE_EPOCH, instead of the clock. */
void tux3_set_time(struct tux3_volume *vol, int64_t ns);

const struct tux3_error *tux3_last_error(const struct tux3_volume *vol);
/* "block 65: inode 64: offset 12: what" */
const char *tux3_error_text(const struct tux3_volume *vol, char *buf,
			    size_t len);
void tux3_clear_error(struct tux3_volume *vol);
/* CRC32C (Castagnoli, as iSCSI/ext4): tux3_crc32c(0, "123456789", 9) is
 * 0xE3069283.  Chain calls by passing the previous result. */
uint32_t tux3_crc32c(uint32_t crc, const void *buf, size_t len);
/* The same text for any error record (e.g. one a walk reported). */
const char *tux3_format_error(const struct tux3_error *err, char *buf,
			      size_t len);

/* Non-fatal problems found while opening (e.g. allocation conflicts met
 * by a tolerant replay).  Index 0..count-1. */
unsigned tux3_warning_count(const struct tux3_volume *vol);
const char *tux3_warning(const struct tux3_volume *vol, unsigned i);
/* What a warning is about: the step of the open that made it, so that a
 * caller (fsck) can tell the superblock's own warnings from what replay
 * or a no-replay open met, without reading the text. */
enum tux3_warning_source {
	TUX3_WARN_SUPER,	/* the superblock fields */
	TUX3_WARN_EXTENSION,	/* our extension record (then treated as
				 * absent) */
	TUX3_WARN_REPLAY,	/* log replay (allocation conflicts) */
	TUX3_WARN_NOREPLAY,	/* what a no-replay open could not read
				 * (trees, free space, orphans) */
	TUX3_WARN_OTHER,	/* after the open */
};
/* The source of warning i (TUX3_WARN_OTHER when i is out of range). */
enum tux3_warning_source tux3_warning_source(const struct tux3_volume *vol,
					     unsigned i);

/* Allocation conflicts replay met (a record setting a bit already set,
 * or clearing a clear one): the first 1024 of them. */
struct replay_conflict {
	tux3_block_t block;
	uint64_t count;
	int set;		/* 1: already allocated, 0: double free */
	tux3_block_t logblock;	/* the record's log block ... */
	unsigned offset;	/* ... and offset */
};
unsigned tux3_replay_conflict_count(const struct tux3_volume *vol);
const struct replay_conflict *tux3_replay_conflict(
	const struct tux3_volume *vol, unsigned i);

/* Geometry and superblock */
struct tux3_super_info {
	uint8_t magic[8];
	uint64_t birthdate, flags;
	unsigned blockbits, blocksize;
	uint64_t volblocks;
	uint64_t iroot, oroot;		/* packed, as on disk */
	uint64_t usedinodes, nextblock, atomdictsize;
	uint32_t freeatom, atomgen;
	uint64_t logchain;
	uint32_t logcount;
	/* derived by replay */
	uint64_t freeblocks;
	uint64_t live_iroot;		/* packed root after replay */
	int replayed;
};
void tux3_super_info(const struct tux3_volume *vol,
		     struct tux3_super_info *info);

/*
 * Identity and features: our superblock extension record (see
 * doc/format.md, "Extensions"), kept in superblock bytes the reference
 * Tux3 code preserves without reading.
 */
#define TUX3_LABEL_MAX 64	/* bytes, NUL-padded, not NUL-terminated */

struct tux3_identity {
	int present;		/* the volume carries a valid record */
	unsigned version;
	uint8_t uuid[16];
	char label[TUX3_LABEL_MAX + 1];	/* NUL-terminated copy */
	int64_t mkfs_time_ns;
	uint32_t compat, ro_compat, incompat;
	uint64_t seq;		/* commit sequence number of the seal */
	int sealed;		/* the seal matches the live superblock */
};
int tux3_identity(const struct tux3_volume *vol, struct tux3_identity *id);
/* Change the label (NULL: keep; up to TUX3_LABEL_MAX bytes, -ERANGE
 * beyond) and the UUID (NULL: keep) in the extension record, written by
 * the next commit (a volume opened TUX3_OPEN_RDWR, -EROFS otherwise).  A
 * volume without a record gets one (features 0, mkfs time 0: unknown);
 * a damaged record is refused (-EUCLEAN: fsck first). */
int tux3_set_identity(struct tux3_volume *vol, const char *label,
		      const uint8_t *uuid);
/* The DIR_INDEX feature (doc/format.md 15.5) set (on) or cleared, as
 * tune2fs -O dir_index does: setting builds the on-disk index of every
 * directory of 4 blocks or more now; clearing packs every directory
 * that has one, so no index block is left.  *dirs: the directories
 * changed.  Committed by tux3_sync or tux3_umount.  -EOPNOTSUPP on a
 * volume with snapshots. */
int tux3_set_dir_index_feature(struct tux3_volume *vol, int on,
			       uint64_t *dirs);
/* ATIME (doc/format.md 15.6) set (on) or cleared: setting changes only
 * the record's incompat bit and the magic; clearing first drops the
 * attribute from every inode that has one (*inodes: how many), then the
 * bit, and the magic falls back to the 2014 one.  Committed by tux3_sync
 * or tux3_umount.  Clearing is -EOPNOTSUPP on a volume with snapshots. */
int tux3_set_atime_feature(struct tux3_volume *vol, int on,
			   uint64_t *inodes);
/* VERSION_INDEX (doc/format.md 17.11) set (on): the index built from
 * every inode's elements, *pairs its (label, inode) pairs; a volume
 * versioned before the index gains one this way (the first snapshot of
 * a volume starts it by itself).  Cleared: the bit and the index go,
 * and snapshot diff reads the inode table.  Committed by tux3_sync or
 * tux3_umount.  -ENOENT on a volume without versions. */
int tux3_set_version_index_feature(struct tux3_volume *vol, int on,
				   uint64_t *pairs);

/* A directory's on-disk index (tux3debug htree; doc/format.md 15.5). */
struct tux3_dir_bucket {
	uint64_t first_slot, slots;	/* the slots that name it */
	uint64_t logical;		/* its block in the directory */
	unsigned depth;			/* local depth L */
	uint32_t pairs;
};
struct tux3_dir_index_info {
	int feature;		/* the volume has DIR_INDEX */
	int present;		/* block 0 is an index block */
	int stale;		/* of another generation than the volume's */
	int damaged;		/* a block failed its checks: why */
	char why[96];
	unsigned depth;		/* global depth G */
	uint32_t generation, volume_generation, seed;
	uint64_t blocks;	/* of the directory */
	uint64_t table_blocks, buckets, pairs;
	unsigned pairs_per_bucket, slots_per_table;
};
typedef int (*tux3_dir_bucket_fn)(void *ctx, const struct tux3_dir_bucket *b);
/* info filled; fn (may be NULL) called for each bucket in slot order.
 * 0 or a negative errno (the inode is not a directory, a read failed). */
int tux3_dir_index_info(struct tux3_volume *vol, tux3_ino_t ino,
			struct tux3_dir_index_info *info,
			tux3_dir_bucket_fn fn, void *ctx);

/*
 * The probe (common/probe.c): is there a Tux3 volume on path, and what
 * are its UUID and label?  One read of the first TUX3_PROBE_HEAD bytes,
 * without the volume lock (a mounted volume is probed too), without
 * replay, trusting no field: what udev rules and mount helpers run on
 * every device.  The primary superblock counts while it has a Tux3
 * magic, else a secondary copy that decodes (doc/format.md 15.3).  The
 * identity is the extension record of the superblock used, or the
 * copy's when the primary's record is damaged.  Returns 1 for Tux3 (p
 * filled), 0 for anything else (too short, no magic, no copy), or a
 * negative errno (cannot open or read; -ENODEV: neither a regular file
 * nor a block device).
 */
#define TUX3_PROBE_HEAD 8192
enum tux3_probe_source {
	TUX3_PROBE_NONE,
	TUX3_PROBE_PRIMARY,	/* the superblock at byte 4096 */
	TUX3_PROBE_SECONDARY,	/* its copy at byte 1024 (SB_BACKUP) */
};
struct tux3_probe {
	enum tux3_probe_source super;	/* the superblock that said Tux3 */
	enum tux3_probe_source ident;	/* where id came from (NONE: none) */
	int versions;		/* a volume with versions (format.md 17.4) */
	int geometry_ok;	/* blockbits and volblocks are possible */
	unsigned blockbits;	/* as stored */
	uint64_t volblocks;	/* as stored */
	struct tux3_identity id;	/* id.present 0 without a record */
};
int tux3_probe(const char *path, struct tux3_probe *p);
/* The same on bytes already read from offset 0 (len < TUX3_PROBE_HEAD:
 * not Tux3). */
int tux3_probe_head(const uint8_t *head, size_t len, struct tux3_probe *p);

/*
 * mkfs (common/write/mkfs.c): write an empty volume exactly as the reference
 * mkfs lays it out (doc/format.md 2.1), plus our extension record.
 * path must exist (an image file is extended to volblocks << blockbits;
 * a block device must be at least that large).  The device is opened
 * for writing under the exclusive lock.  Returns 0 or a negative errno
 * with the reason in err.  Discarding and signature wiping are the
 * caller's business (mkfs.tux3 does them before calling this).
 */
struct tux3_mkfs_params {
	unsigned blockbits;		/* 9..16 */
	uint64_t volblocks;
	uint8_t uuid[16];
	char label[TUX3_LABEL_MAX + 1];	/* NUL-terminated, up to 64 bytes */
	int64_t time_ns;		/* every timestamp mkfs writes */
	uint32_t uid, gid;		/* owner of the root directory */
	unsigned root_mode;		/* permission bits; 0 means 0755 */
	uint32_t compat, ro_compat, incompat;	/* extension features */
};
/* Compat feature bits of the extension record (doc/format.md 15.2-15.3);
 * mkfs.tux3 sets TUX3_FEATURE_COMPAT_DEFAULT unless told otherwise. */
#define TUX3_FEATURE_COMPAT_LOG_CRC	0x1u	/* CRC32C in log blocks */
#define TUX3_FEATURE_COMPAT_SB_BACKUP	0x2u	/* secondary superblock */
/* Ro_compat feature bits (doc/format.md 15.5): older tools may read, not
 * write. */
#define TUX3_FEATURE_RO_COMPAT_DIR_INDEX 0x1u	/* on-disk directory index */
#define TUX3_FEATURE_RO_COMPAT_VERSION_INDEX 0x2u	/* which inodes each
						 * label changed (17.11) */
/* Incompat feature bits: set together with the changed superblock magic
 * (doc/format.md 17.4), so that the reference code refuses the volume. */
#define TUX3_FEATURE_INCOMPAT_VERSIONS	0x1u	/* version table, vleaves */
#define TUX3_FEATURE_INCOMPAT_ATIME	0x2u	/* ATIME inode attribute
						 * (doc/format.md 15.6) */
#define TUX3_FEATURE_COMPAT_DEFAULT	(TUX3_FEATURE_COMPAT_LOG_CRC | \
					 TUX3_FEATURE_COMPAT_SB_BACKUP)

/* Where mkfs puts things, for a geometry (no I/O). */
struct tux3_mkfs_layout {
	unsigned blocksize;
	uint64_t volblocks;
	uint64_t reserved;		/* blocks 0..reserved-1 */
	uint64_t ileaf;			/* the inode table's only leaf */
	uint64_t logblock;		/* the only log block */
	uint64_t nextblock;		/* allocation goal left in the superblock */
	uint64_t freeblocks;		/* free after replay */
	uint64_t min_volblocks;		/* smallest volume for this block size */
};
int tux3_mkfs_layout(unsigned blockbits, uint64_t volblocks,
		     struct tux3_mkfs_layout *out, char *err, size_t errlen);
int tux3_mkfs(const char *path, const struct tux3_mkfs_params *p, char *err,
	      size_t errlen);

struct tux3_stat {
	tux3_ino_t ino;
	uint32_t mode;		/* S_IFMT | permission bits */
	uint32_t uid, gid;
	uint32_t nlink;
	uint64_t size;		/* i_size as stored: a symlink's is its
				 * target with the NUL (length + 1), the
				 * format's convention */
	unsigned rdev_major, rdev_minor;
	int64_t ctime_ns, mtime_ns;
	int64_t atime_ns;	/* the ATIME attribute on a volume with the
				 * atime feature (doc/format.md 15.6); mtime
				 * where none is stored */
	uint64_t blocks;	/* 512-byte units of data blocks mapped */
	unsigned blksize;
	uint64_t dtree_root;	/* packed DATA_BTREE attribute, 0 if none */
	unsigned xattr_count;
	int orphan;		/* inode is on the orphan list */
};

struct tux3_statfs {
	unsigned bsize;
	uint64_t blocks, bfree;
	uint64_t files, ffree;
	unsigned namelen;
};

int tux3_statfs(struct tux3_volume *vol, struct tux3_statfs *st);

/* Namespace. Paths are absolute inside the volume ("/" is the root). */
int tux3_lookup(struct tux3_volume *vol, tux3_ino_t dir, const char *name,
		size_t len, tux3_ino_t *ino);
int tux3_lookup_path(struct tux3_volume *vol, const char *path,
		     tux3_ino_t *ino);
int tux3_stat(struct tux3_volume *vol, tux3_ino_t ino, struct tux3_stat *st);

/* Directory entry types as stored on disk. */
enum {
	TUX3_DT_UNKNOWN = 0, TUX3_DT_REG = 1, TUX3_DT_DIR = 2, TUX3_DT_CHR = 3,
	TUX3_DT_BLK = 4, TUX3_DT_FIFO = 5, TUX3_DT_SOCK = 6, TUX3_DT_LNK = 7,
};

/* Called per live entry; a non-zero return stops the walk and is
 * returned by tux3_readdir().  pos is the entry's byte offset. */
typedef int (*tux3_filldir_t)(void *ctx, const char *name, unsigned len,
			      tux3_ino_t ino, unsigned type, uint64_t pos);
int tux3_readdir(struct tux3_volume *vol, tux3_ino_t dir,
		 tux3_filldir_t filldir, void *ctx);
/* The entries at byte position start or later: a walk stopped by
 * filldir resumes at the last pos it was given plus one, so that a
 * client reading a directory in batches holds one batch at a time. */
int tux3_readdir_from(struct tux3_volume *vol, tux3_ino_t dir,
		      uint64_t start, tux3_filldir_t filldir, void *ctx);

ssize_t tux3_read(struct tux3_volume *vol, tux3_ino_t ino, void *buf,
		  size_t len, uint64_t pos);
/* Target without the stored trailing NUL; result NUL-terminated. */
ssize_t tux3_readlink(struct tux3_volume *vol, tux3_ino_t ino, char *buf,
		      size_t len);

/* File map: one call per extent or hole run, in logical order. physical 0
 * means a hole.  Stops early on a non-zero return. */
typedef int (*tux3_extent_fn)(void *ctx, uint64_t logical,
			      tux3_block_t physical, uint64_t count,
			      uint32_t version);
int tux3_map_extents(struct tux3_volume *vol, tux3_ino_t ino,
		     tux3_extent_fn fn, void *ctx);

/* Xattrs: names are full ("user.foo"). */
typedef int (*tux3_xattr_fn)(void *ctx, const char *name,
			     const void *value, unsigned size);
int tux3_listxattr(struct tux3_volume *vol, tux3_ino_t ino,
		   tux3_xattr_fn fn, void *ctx);
ssize_t tux3_getxattr(struct tux3_volume *vol, tux3_ino_t ino,
		      const char *name, void *buf, size_t size);

/* The atom table: xattr names shared by all inodes. */
struct tux3_atom {
	unsigned atom;
	const char *name;
	uint32_t refcount;
	uint64_t dictpos;	/* byte offset of its dictionary record */
	uint64_t unatom;	/* its reverse-map entry as stored */
};
typedef int (*tux3_atom_fn)(void *ctx, const struct tux3_atom *atom);
/* Every named atom, in atom order. */
int tux3_atoms(struct tux3_volume *vol, tux3_atom_fn fn, void *ctx);
/* The free atoms, in list order, checked as they are followed. */
int tux3_atom_freelist(struct tux3_volume *vol,
		       int (*fn)(void *ctx, unsigned atom), void *ctx);

/*
 * Versions (doc/format.md 17): label 0 is the live filesystem (the
 * origin); a volume without versions has only it.  Called in label order
 * for every label in the tree or dying.  -EUCLEAN when the volume is
 * marked as having versions but its table could not be loaded.
 */
#define TUX3_VERSION_NONE 0xffffu
struct tux3_version_info {
	unsigned label;
	unsigned parent;	/* TUX3_VERSION_NONE for label 0 */
	uint32_t tag;		/* 0: the origin, or a ghost */
	const char *name;	/* "" for the origin and ghosts */
	int ghost, dying;
	int64_t birth_ns;
	unsigned children;
};
typedef int (*tux3_version_fn)(void *ctx,
			       const struct tux3_version_info *v);
int tux3_versions(struct tux3_volume *vol, tux3_version_fn fn, void *ctx);
/* The same as an array (free() it); names stay valid while the volume is
 * open and its table unchanged. */
int tux3_version_list(struct tux3_volume *vol,
		      struct tux3_version_info **list, unsigned *count);

/* Data blocks each version alone reads (what deleting it would give
 * back), by label: exclusive[label] for label < n.  Scans every file with
 * versioned data.  -ENOENT: no snapshots. */
int tux3_version_space(struct tux3_volume *vol, uint64_t *exclusive,
		       unsigned n);

/*
 * The version later calls read and write: the snapshot named name, or the
 * live filesystem (NULL or "").  Every read and write call of this header
 * then works in that version only.  A write to a snapshot that has
 * snapshots of its own moves its name to a new child version (the old one
 * stays, unnamed, for them): the name stays selected.  -ENOENT: no such
 * snapshot.  tux3_version_selected: the selected name ("" the live one).
 */
int tux3_version_select(struct tux3_volume *vol, const char *name);
const char *tux3_version_selected(struct tux3_volume *vol);
/* The same by tag (tux3_version_info.tag; 0 the live version), for a
 * caller that moves between versions often (tux3fuse's snapdir): no name
 * search.  -ENOENT: no snapshot has the tag.  Since interface 1.1. */
int tux3_version_select_tag(struct tux3_volume *vol, uint32_t tag);
uint32_t tux3_version_selected_tag(const struct tux3_volume *vol);
/*
 * Snapshots (volume opened TUX3_OPEN_RDWR): create names a snapshot of
 * the live filesystem (of NULL) or of the snapshot named of, committed;
 * it costs one table record whatever the volume's size.  delete removes
 * the snapshot named name and gives back every block no other version
 * reads, in two commits (a crash in between is finished at the next
 * read-write open).  -EEXIST name in use, -ENOENT no such snapshot,
 * -ENOSPC no free label, -EINVAL a bad name (1 to 39 bytes, no '/').
 */
int tux3_snapshot_create(struct tux3_volume *vol, const char *name,
			 const char *of);
int tux3_snapshot_delete(struct tux3_volume *vol, const char *name);
/*
 * Back to the 2014 format (doc/format.md 17.8): a volume with versions
 * but no snapshot, ghost or pending delete loses its version table
 * (inode 3), its versioned leaves and attributes are rewritten as the live
 * version reads them, and the 2014 magic comes back without the VERSIONS
 * bit, in one commit.  The delete of the last snapshot does it by itself;
 * this does it explicitly (a volume a delete left versioned).  rep (may be
 * NULL) says what was rewritten.  -EBUSY snapshots remain, -EUCLEAN an
 * element of another label remains (fsck.tux3 first), nothing changed
 * then.  A volume without versions: 0, rep->already set.
 */
struct tux3_compact_report {
	uint64_t inodes;	/* inodes looked at */
	uint64_t files;		/* versioned data trees made 2014 maps */
	uint64_t blobs;		/* attribute blobs rewritten */
	uint64_t table_blocks;	/* the version table's blocks freed */
	int already;		/* the volume had no versions */
};
int tux3_snapshot_compact(struct tux3_volume *vol,
			  struct tux3_compact_report *rep);

/*
 * What differs between two versions (doc/format.md 17.9): a and b are
 * snapshot names, NULL or "" the live version.  A version reads, at
 * every key, the element of its nearest ancestor, so two versions read
 * alike wherever no element carries a label on one's ancestor chain and
 * not on the other's: only the inodes with such an element (an
 * attribute, or a record of a versioned data tree) are loaded and
 * compared, in both versions.  fn is called once per inode that differs,
 * in inode order, with everything that differs about it.  path (NULL:
 * the whole volume) keeps the inodes named under that directory in
 * either version; TUX3_DIFF_NO_NAMES skips naming them (the search of
 * the namespace the format needs for a name: it has no parent pointers).
 */
enum {
	TUX3_DIFF_CREATED = 1 << 0,	/* in b only */
	TUX3_DIFF_DELETED = 1 << 1,	/* in a only */
	TUX3_DIFF_DATA = 1 << 2,	/* data blocks differ: ranges */
	TUX3_DIFF_SIZE = 1 << 3,
	TUX3_DIFF_MODE = 1 << 4,	/* type or permissions */
	TUX3_DIFF_OWNER = 1 << 5,	/* uid or gid */
	TUX3_DIFF_TIMES = 1 << 6,	/* mtime or ctime */
	TUX3_DIFF_NLINK = 1 << 7,
	TUX3_DIFF_XATTR = 1 << 8,	/* xattrs: names */
	TUX3_DIFF_TARGET = 1 << 9,	/* a symlink's target, a device's rdev */
	TUX3_DIFF_ENTRIES = 1 << 10,	/* a directory's entries: entries */
	TUX3_DIFF_RENAMED = 1 << 11,	/* in both, under other names */
};
#define TUX3_DIFF_NO_NAMES 1u
struct tux3_diff_range {
	uint64_t block, count;		/* logical blocks */
};
struct tux3_diff_entry {
	const char *name;
	tux3_ino_t ino_a, ino_b;	/* what the name is in a and b (0: none) */
};
struct tux3_diff_inode {
	tux3_ino_t ino;
	unsigned what;			/* TUX3_DIFF_* */
	int in_a, in_b;
	struct tux3_stat a, b;		/* valid where it exists */
	const char *path_a, *path_b;	/* NULL: not named (an orphan, or
					 * TUX3_DIFF_NO_NAMES) */
	unsigned nranges, nxattrs, nentries;
	const struct tux3_diff_range *ranges;
	const char *const *xattrs;	/* names of the xattrs that differ */
	const struct tux3_diff_entry *entries;	/* sorted by name */
};
/* The work done, for the tests and the benchmark: it follows the
 * elements that differ, save for the inode table's leaves and one path
 * down each data tree (a file or directory of more than one extent). */
struct tux3_diff_count {
	uint64_t blobs;		/* inode blobs looked at (undecoded: all) */
	uint64_t roots;		/* data trees whose first leaf was read to
				 * tell a 2014 map from a versioned one */
	uint64_t trees;		/* versioned data trees whose labels were read */
	uint64_t compared;	/* inodes loaded in both versions */
	uint64_t dirs_named;	/* directories read to name the inodes */
};
typedef int (*tux3_diff_fn)(void *ctx, const struct tux3_diff_inode *d);
int tux3_snapshot_diff(struct tux3_volume *vol, const char *a, const char *b,
		       const char *path, unsigned flags, tux3_diff_fn fn,
		       void *ctx, struct tux3_diff_count *count);

/*
 * Rollback (doc/format.md 17.10): the live version made to read what the
 * snapshot named name reads, every snapshot left as it was (the live
 * version's old contents stay readable wherever a snapshot reads them).
 * Only the inodes that may differ are touched; blocks that differ are
 * copied from the snapshot, holes punched, attributes set, files created
 * since removed and files deleted since brought back with their numbers.
 * One delta, one commit: a crash leaves the live version as it was or
 * rolled back.  -ENOENT no such snapshot, -EBUSY a delete is pending or
 * an unlinked file is still open, -EUCLEAN damage (fsck.tux3 first),
 * -ENOSPC an inode's versioned attributes at their cap (refused before
 * any change).  Another error part way keeps the committed volume as it
 * was and fails its later commits until it is reopened.
 */
struct tux3_rollback_report {
	uint64_t inodes;	/* inodes that may differ, looked at */
	uint64_t changed;	/* in both: data or attributes set */
	uint64_t restored;	/* deleted since the snapshot, back */
	uint64_t removed;	/* created since the snapshot, gone */
	uint64_t blocks_copied, blocks_punched;
	struct tux3_diff_count scan;	/* the search for what differs */
};
int tux3_snapshot_rollback(struct tux3_volume *vol, const char *name,
			   struct tux3_rollback_report *rep);

/* Orphans found by replay (inodes with no link still holding space). */
unsigned tux3_orphan_count(const struct tux3_volume *vol);
tux3_ino_t tux3_orphan(const struct tux3_volume *vol, unsigned i);

/* Free space after replay */
int tux3_block_is_used(struct tux3_volume *vol, tux3_block_t block);
/* Blocks in use in a group of 2^13 blocks: as the on-disk countmap says
 * (0 before the first unify) and as the live bitmap counts them. */
int tux3_group_counts(struct tux3_volume *vol, uint64_t group,
		      uint32_t *ondisk, uint32_t *live);

/* ---- the write path (volumes opened TUX3_OPEN_RDWR) ---- */
/* Commit the open delta (atomically; the superblock is the commit
 * point).  tux3_unify also folds the log into the on-disk trees.  After
 * a commit fails the volume is stopped: changes give -EROFS and commits
 * -EIO until it is closed and opened again (which replays the log to the
 * last whole commit). */
int tux3_sync(struct tux3_volume *vol);
int tux3_unify(struct tux3_volume *vol);

/* Namespace and data changes (negative errno on failure). */
int tux3_create(struct tux3_volume *vol, tux3_ino_t dir, const char *name,
		size_t len, uint32_t mode, uint32_t uid, uint32_t gid,
		tux3_ino_t *ino);
int tux3_mkdir(struct tux3_volume *vol, tux3_ino_t dir, const char *name,
	       size_t len, uint32_t mode, uint32_t uid, uint32_t gid,
	       tux3_ino_t *ino);
/* mode carries the type: S_IFREG, S_IFIFO, S_IFSOCK, S_IFCHR, S_IFBLK */
int tux3_mknod(struct tux3_volume *vol, tux3_ino_t dir, const char *name,
	       size_t len, uint32_t mode, uint32_t uid, uint32_t gid,
	       unsigned major, unsigned minor, tux3_ino_t *ino);
/* Bulk append (e.g. mkfs -d): the caller guarantees name is not in dir,
 * so there is no duplicate scan and the entry goes into the last block:
 * filling a directory costs linear time.  Any mode type, as tux3_mknod. */
int tux3_mknod_append(struct tux3_volume *vol, tux3_ino_t dir,
		      const char *name, size_t len, uint32_t mode, uint32_t uid,
		      uint32_t gid, unsigned major, unsigned minor,
		      tux3_ino_t *ino);
int tux3_symlink(struct tux3_volume *vol, tux3_ino_t dir, const char *name,
		 size_t len, const char *target, uint32_t uid, uint32_t gid,
		 tux3_ino_t *ino);
/* The bulk-append form of tux3_symlink (name known to be absent). */
int tux3_symlink_append(struct tux3_volume *vol, tux3_ino_t dir,
			const char *name, size_t len, const char *target,
			uint32_t uid, uint32_t gid, tux3_ino_t *ino);
int tux3_link(struct tux3_volume *vol, tux3_ino_t ino, tux3_ino_t dir,
	      const char *name, size_t len);
/* The bulk-append form of tux3_link (name known to be absent from dir). */
int tux3_link_append(struct tux3_volume *vol, tux3_ino_t ino, tux3_ino_t dir,
		     const char *name, size_t len);
int tux3_unlink(struct tux3_volume *vol, tux3_ino_t dir, const char *name,
		size_t len);
int tux3_rmdir(struct tux3_volume *vol, tux3_ino_t dir, const char *name,
	       size_t len);
/* Within or across directories; replacing an existing target (an empty
 * directory by a directory, a non-directory by a non-directory); never a
 * directory into its own subtree (-EINVAL). */
#define TUX3_RENAME_NOREPLACE 1	/* -EEXIST if the target exists */
#define TUX3_RENAME_EXCHANGE 2	/* swap the two names */
int tux3_rename(struct tux3_volume *vol, tux3_ino_t olddir,
		const char *oldname, size_t oldlen, tux3_ino_t newdir,
		const char *newname, size_t newlen, unsigned flags);
/* len, or as write(2) the bytes written before an error (ENOSPC, say)
 * stopped it, or a negative errno when it wrote nothing. */
ssize_t tux3_write(struct tux3_volume *vol, tux3_ino_t ino, const void *buf,
		   size_t len, uint64_t pos);
int tux3_truncate(struct tux3_volume *vol, tux3_ino_t ino, uint64_t size);
/* fallocate(2) of a regular file (fallocate.c).  0: every block of
 * [off, off+len) allocated (holes written with zeroes: the format has no
 * unwritten extents) and the size raised to off+len if below it.
 * KEEP_SIZE: the same without the size change, within the size's blocks
 * only (-EOPNOTSUPP beyond).  PUNCH_HOLE|KEEP_SIZE: the range reads as
 * zeroes and its whole blocks are freed.  -EOPNOTSUPP on a versioned
 * volume.  A preallocation that runs out of space keeps what it did. */
#define TUX3_FALLOC_KEEP_SIZE 1
#define TUX3_FALLOC_PUNCH_HOLE 2
int tux3_fallocate(struct tux3_volume *vol, tux3_ino_t ino, uint64_t off,
		   uint64_t len, unsigned flags);

/* Open handles: an inode whose last link goes while it is open becomes
 * an orphan (logged); its space is released by the last release. */
int tux3_iopen(struct tux3_volume *vol, tux3_ino_t ino);
int tux3_irelease(struct tux3_volume *vol, tux3_ino_t ino);

/* Xattrs: names up to 240 bytes (-ERANGE beyond), the whole inode with
 * its xattrs must fit one inode-table leaf (-E2BIG), at most 65535 names
 * on a volume (-ENOSPC: atoms are 16 bits on disk). */
#define TUX3_XATTR_CREATE 1	/* fail if it exists (-EEXIST) */
#define TUX3_XATTR_REPLACE 2	/* fail if it does not (-ENODATA) */
int tux3_setxattr(struct tux3_volume *vol, tux3_ino_t ino, const char *name,
		  const void *value, size_t size, int flags);
int tux3_removexattr(struct tux3_volume *vol, tux3_ino_t ino,
		     const char *name);

enum {
	TUX3_SET_MODE = 1, TUX3_SET_UID = 2, TUX3_SET_GID = 4,
	TUX3_SET_SIZE = 8, TUX3_SET_MTIME = 16, TUX3_SET_CTIME = 32,
	TUX3_SET_ATIME = 64,	/* stored only on a volume with the atime
				 * feature; elsewhere ignored (noatime) */
};
struct tux3_setattr {
	unsigned valid;		/* TUX3_SET_* */
	uint32_t mode, uid, gid;
	uint64_t size;
	int64_t mtime_ns, ctime_ns;
	int64_t atime_ns;	/* last: read only with TUX3_SET_ATIME */
};
int tux3_setattr(struct tux3_volume *vol, tux3_ino_t ino,
		 const struct tux3_setattr *sa);

/*
 * Access time (the atime feature, TUX3_FEATURE_INCOMPAT_ATIME,
 * doc/format.md 15.6).  tux3_atime_enabled: the volume stores atime.
 * tux3_atime_due: whether a read at now_ns changes st's atime: always
 * under TUX3_ATIME_STRICT; under TUX3_ATIME_RELATIME (Linux's relatime)
 * only when atime <= mtime, atime <= ctime or atime is at least
 * TUX3_RELATIME_NS old, so that reading is not a stream of inode writes.
 * tux3_atime_touch: a read of ino at now_ns; stores the new atime when
 * it is due on a volume with the feature opened read-write.  Returns 1
 * when it stored one, 0 when not, or a negative errno.
 */
enum { TUX3_ATIME_RELATIME = 0, TUX3_ATIME_STRICT = 1 };
#define TUX3_RELATIME_NS (24LL * 3600 * 1000000000)
int tux3_atime_enabled(const struct tux3_volume *vol);
int tux3_atime_due(const struct tux3_stat *st, int mode, int64_t now_ns);
int tux3_atime_touch(struct tux3_volume *vol, tux3_ino_t ino, int mode,
		     int64_t now_ns);

const char *tux3_version(void);
/* The interface version this header describes (tux3.h, tux3_walk.h,
 * tux3_fsck.h: their functions, structures and constants); it changes
 * whenever one changes incompatibly.  A tool compares what it was built
 * with, TUX3_LIBRARY_VERSION, against what the library it runs with
 * returns, tux3_library_version(): a mismatch is a shared-library error
 * (fsck(8) exit 128). */
#define TUX3_LIBRARY_VERSION 1
int tux3_library_version(void);

#ifdef __cplusplus
}
#endif
#endif

/*
 * tux3fuse: a Tux3 volume mounted through libfuse3's low-level API.
 *
 *   tux3fuse.c      command line, the volume, the session and its loop
 *   fuse_ops.c      the low-level operations
 *   inode_table.c   the kernel's lookup counts (ino -> nlookup)
 *   commit_timer.c  the periodic commit of a dirty delta
 *   serve.c         the request loop: threads, and polling the device
 *   acl.c           POSIX ACLs that are only a mode
 *   kernel_io.c     the device's reads and writes: protocol flags that
 *                   libfuse 3.14 does not carry (KILLPRIV_V2)
 *   snapdir.c       -o snapdir: every snapshot, read-only, under
 *                   /.snapshots/NAME beside the live tree
 *
 * Locking: libtux3 is not thread-safe (one volume handle carries all its
 * state), so every library call, and every access to the inode table and
 * the dirty state, happens under the one mutex of the mount, t3f.lock.
 * The request loop (serve.c) then overlaps with the library only what
 * runs outside it: fsync's wait for the disk, large copies, replies.
 */
#ifndef TUX3FUSE_H
#define TUX3FUSE_H

#define FUSE_USE_VERSION 312

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "tux3.h"

/* ---- inode_table.c ---- */
/*
 * One entry per inode the kernel holds (nlookup > 0): each reply of
 * lookup, create, mknod, mkdir, symlink, link and each readdirplus entry
 * other than "." and ".." adds one; forget takes away what the kernel
 * says.  parent is the directory an entry was last found in (used for
 * ".." of directories: the format has no parent links).  held says that
 * the library holds the inode open (tux3_iopen) so that its space
 * outlives its last link until the last forget.
 */
struct ientry {
	tux3_ino_t ino, parent;
	uint64_t nlookup;
	bool held;
	/* a write the kernel's page cache had accepted (FUSE_WRITE_CACHE)
	 * failed: every fsync of the inode reports wb_err until the bytes
	 * [wb_lo, wb_hi) are written again or truncated away */
	int wb_err;
	uint64_t wb_lo, wb_hi;
	/* ... and the next write(2) is to fail with it: the kernel asks
	 * for the attributes before a cached write once they are stale */
	bool wb_tell_writer;
	struct ientry *next;
};

struct itable {
	struct ientry **bucket;
	size_t nbucket, count;
};

int itab_init(struct itable *t);
void itab_free(struct itable *t);
struct ientry *itab_find(struct itable *t, tux3_ino_t ino);
/* Add n lookups of ino (creating its entry); -ENOMEM. */
int itab_ref(struct itable *t, tux3_ino_t ino, tux3_ino_t parent, uint64_t n,
	     struct ientry **out);
/* Take n lookups away.  Returns 1 when the count reached zero (the entry
 * is then gone; *held says whether it was held), 0 otherwise, -ENOENT for
 * an unknown inode. */
int itab_unref(struct itable *t, tux3_ino_t ino, uint64_t n, bool *held);
/* Call fn for every entry (fn must not change the table). */
void itab_each(struct itable *t, void (*fn)(void *ctx, struct ientry *e),
	       void *ctx);

/* ---- snapdir.c: the snapshots' views ---- */
/*
 * With -o snapdir, a FUSE inode number is the view's slot in its top 16
 * bits and the volume's inode number (under 2^48) below: slot 0 is the
 * mounted version, SNAPDIR_SLOT the directory /.snapshots itself, and
 * each snapshot has its own slot: its tag when under 0x8000 (so the same
 * across mounts), else one handed out at mount.  The snapshots are read
 * once at mount: nothing changes the version table while the daemon has
 * the volume (a snapshot mounted read-write, whose writes may move its
 * name to a new version, takes no snapdir).
 */
#define T3F_SLOT_SHIFT 48
#define T3F_INO_MASK ((((fuse_ino_t)1) << T3F_SLOT_SHIFT) - 1)
#define T3F_SLOT(ino) ((unsigned)((ino) >> T3F_SLOT_SHIFT))
#define SNAPDIR_SLOT 0xffffu
#define SNAPDIR_NAME ".snapshots"

enum { T3F_SNAPDIR_OFF, T3F_SNAPDIR_HIDDEN, T3F_SNAPDIR_VISIBLE };

struct snap_view {
	unsigned slot;
	uint32_t tag;
	char *name;
	struct itable itab;	/* the kernel's lookups in this view */
};

/* The view the request on this thread works in (NULL: the mounted
 * version): set by snapdir.c's operations around the ones of
 * fuse_ops.c, which then select its version when they take the lock,
 * answer EROFS to every change, count lookups in its table and give out
 * its inode numbers. */
extern __thread struct snap_view *t3f_view;

struct t3f;
/* Read the snapshots (before the session starts).  0 or a negative
 * errno, told on stderr. */
int t3f_snapdir_init(struct t3f *fs);
void t3f_snapdir_free(struct t3f *fs);
/* The view of a FUSE inode number's slot; NULL for slot 0, the snapdir
 * and a slot no snapshot has. */
struct snap_view *t3f_view_of(struct t3f *fs, fuse_ino_t ino);
/* The operations with snapdir: fuse_ops.c's, each first finding the
 * view its inode numbers belong to. */
extern struct fuse_lowlevel_ops t3f_snapdir_ops;
void t3f_snapdir_ops_init(void);

/* ---- the mount ---- */
struct dirh;

struct t3f {
	struct tux3_volume *vol;
	struct fuse_session *se;	/* for notifications to the kernel */
	pthread_mutex_t lock;		/* guards vol, itab, dirty state */
	struct itable itab;
	/* open directory handles (fuse_ops.c), under lock: freed at exit
	 * when the kernel had not released them yet */
	struct dirh *open_dirs;
	bool readonly;
	const char *device;
	const char *snapshot;
	double timeout;			/* entry and attribute cache, s */
	bool writeback;			/* the kernel's writeback cache */
	int atime;			/* TUX3_ATIME_RELATIME (default),
					 * TUX3_ATIME_STRICT or T3F_NOATIME;
					 * noatime where the volume stores
					 * no atime (t3f_atime_mode) */
	bool want_killpriv;		/* ask for KILLPRIV_V2 */
	int snapdir;			/* T3F_SNAPDIR_* */
	struct snap_view *views;	/* snapdir.c, sorted by slot */
	unsigned nviews;
	int64_t snapdir_ns;		/* its times: the mount's */
	struct snap_view *lock_view;	/* the view the lock was taken in */
	uint32_t outer_tag;		/* the version lock() leaves for a
					 * view's, taken back by unlock() */
	bool foreground;
	bool closed;			/* t3f_shutdown ran */
	int close_err;			/* ... and what it returned */

	/* commit_timer.c */
	unsigned commit_secs;		/* 0: no periodic commit */
	bool dirty;			/* changes since the last commit */
	bool may_free;			/* ... of which one succeeded (and
					 * may have freed blocks: the
					 * copy on write of any change) */
	bool commit_failed;		/* and so the volume is stopped */
	int64_t dirty_since;		/* CLOCK_MONOTONIC ns */
	pthread_t timer;
	pthread_cond_t timer_cond;
	bool timer_running, timer_stop;

	/* kernel_io.c */
	uint64_t init_unique;		/* the INIT request, until replied */
	bool kernel_killpriv_v2;	/* the kernel offers it */
	bool killpriv_v2;		/* and the mount has it */
	bool want_uring;		/* -o io_uring */
	bool kernel_uring;		/* the kernel offers it */
	bool uring_asked;		/* the INIT reply took it */
	size_t uring_payload;		/* its largest request's payload */

	/* uring.c */
	struct t3f_uring *uring;	/* NULL: /dev/fuse only */
};

#define T3F_NOATIME (-1)

/* kernel_io.c: what a request tells before libfuse sees it (the INIT's
 * offer, the kill flags of a write or setattr), for the thread that
 * then processes it; whether read from /dev/fuse or from io_uring. */
void t3f_note_request(struct t3f *fs, const void *buf, size_t len);

/* uring.c: FUSE over io_uring, started by kernel_io.c once the INIT
 * reply that asks for it is written; stopped when the session ends. */
struct iovec;
int t3f_uring_start(struct t3f *fs, size_t payload);
void t3f_uring_stop(struct t3f *fs);
/* A reply to the request this thread serves from io_uring: taken (true,
 * *ret the bytes or a negative errno), else false (for /dev/fuse). */
bool t3f_uring_reply(const struct iovec *iov, int count, ssize_t *ret);

/* fuse_ops.c */
extern const struct fuse_lowlevel_ops t3f_ops;
/* Release what the kernel still holds and commit and close the volume
 * (idempotent).  Returns 0 or a negative errno. */
int t3f_shutdown(struct t3f *fs);
/* Message to stderr, and to syslog when running as a daemon. */
void t3f_log(struct t3f *fs, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* acl.c: whether an ACL xattr value holds the three base entries only;
 * then *perm is the permission bits (0777) it means. */
bool t3f_acl_is_mode(const void *value, size_t size, uint32_t *perm);

/* cpu_latency.c: a CPU wake-up latency request (PM QoS), held while
 * requests arrive (-o cpu_latency=USECS). */
struct cpu_latency {
	int fd;				/* /dev/cpu_dma_latency, or -1 */
	int32_t us;			/* the value held */
	bool held;
};
/* Open the request (it has no effect until held).  0 or a negative
 * errno; l is closed (fd -1) on failure. */
int cpu_latency_open(struct cpu_latency *l, unsigned us);
void cpu_latency_hold(struct cpu_latency *l);
void cpu_latency_release(struct cpu_latency *l);
void cpu_latency_close(struct cpu_latency *l);

/* kernel_io.c: the session's device I/O through our hooks (after
 * fuse_session_mount).  0 or a negative errno. */
int t3f_kernel_io(struct t3f *fs);
/* Whether the request being processed on this thread asks to clear
 * set-user-ID and set-group-ID (KILLPRIV_V2's kill flags). */
bool t3f_request_kills_suidgid(void);

/* serve.c */
struct serve_opts {
	unsigned max_threads;		/* 1: single-threaded */
	unsigned max_idle;		/* threads kept waiting */
	unsigned spin_us;		/* poll the device after a request */
	/* while *quiet_if is not NULL (uring.c's queues are up), requests
	 * come through io_uring and the device carries only forgets and
	 * interrupts: no polling, which would take the CPU a queue's
	 * thread and its caller share */
	struct t3f_uring *const *quiet_if;
	struct cpu_latency *latency;	/* NULL: none */
};
/* Run the session until unmount or a signal.  0 or a negative errno. */
int t3f_serve(struct fuse_session *se, const struct serve_opts *o);

/* commit_timer.c (called with fs->lock held, except start/stop) */
void t3f_mark_dirty(struct t3f *fs);
/* A change that failed but may have left something to commit. */
void t3f_mark_failed(struct t3f *fs);
/* What went wrong: the library's error record, else strerror(-err). */
const char *t3f_error_text(struct t3f *fs, int err, char *buf, size_t len);
int t3f_commit(struct t3f *fs);
int t3f_timer_start(struct t3f *fs);
void t3f_timer_stop(struct t3f *fs);

#endif

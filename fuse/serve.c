/*
 * tux3fuse's request loop, on libfuse's session API (receive a request,
 * process it) in place of fuse_session_loop_mt.
 *
 * Why its own loop: a FUSE request is a round trip between the caller
 * and this daemon, and on virtual machines without guest halt polling
 * the cost of the round trip is mostly the wake-up of an idle virtual CPU
 * on each side, several times the library's work for a lookup or a
 * setattr.  So the thread that reads the device keeps polling it (a
 * non-blocking read) for up to spin microseconds after each request
 * before it sleeps in poll(2): during a burst of requests, such as cp -a
 * of a tree, the daemon's CPU never goes idle and the caller's request
 * needs no wake-up on this side.  spin=0 turns this off.  The caller's
side is cpu_latency.c's business: the reader holds its latency request
(when one was asked for) from a request until LATENCY_QUIET_MS pass
without one.
 *
 * Threads (leader and followers): one thread at a time reads the device.
 * The library runs one call at a time under the mount's mutex (see
 * tux3fuse.h), so a short request is processed by the reader itself,
 * which then reads on; only a request that may take long outside the
 * library (fsync, which waits for the disk, and large reads and writes,
 * whose copies run unlocked) passes the reading role to an idle thread,
 * or a new one, up to max_threads, before it is processed.  -s is one
 * thread.
 */
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tux3fuse.h"

/* A request this large may copy long enough to be worth another thread. */
#define LARGE_IO (64 * 1024)
/* Quiet time after which the CPU latency request is given back: long
 * enough that a program's pauses between calls (cp's between files)
 * do not drop and retake it, since each change wakes every idle CPU. */
#define LATENCY_QUIET_MS 10

struct server {
	struct fuse_session *se;
	int fd;
	uint64_t spin_ns;
	struct t3f_uring *const *quiet_if;	/* serve_opts */
	unsigned max_threads, max_idle;
	struct cpu_latency *latency;	/* used by the reader only */
	pthread_mutex_t lock;		/* guards the fields below */
	pthread_cond_t turn;		/* followers wait for the reader role */
	pthread_cond_t done;		/* the last thread has ended */
	bool reading;			/* some thread holds the reader role */
	unsigned threads, idle;
	/* the last follower that left, not joined yet: each leaving
	 * follower joins the one before it, and t3f_serve the last, so
	 * that every follower has ended (its thread-specific data, such
	 * as libfuse's per-thread splice pipe, freed) before the session
	 * is destroyed and the process exits.  Detached followers still
	 * exiting then are the likely source of a LeakSanitizer report
	 * seen once in CI after SIGTERM (not reproduced here) */
	pthread_t left;
	bool has_left;
	int error;			/* the first read error, negative */
	/* threads processing a long request: while there are any, the
	 * reader does not poll, since the caller may need the CPU */
	_Atomic unsigned working;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool uring_up(const struct server *s)
{
	return s->quiet_if && __atomic_load_n(s->quiet_if, __ATOMIC_RELAXED);
}

/*
 * The next request into buf: > 0 its size, 0 when the session has ended
 * (unmount, signal), or a negative errno.  Polls for spin_ns, then
 * sleeps in poll(2), waking now and then to see whether a signal ended
 * the session while another thread received it.
 */
static int receive_one(struct server *s, struct fuse_buf *buf)
{
	uint64_t since = s->spin_ns ? mono_ns() : 0;
	for (;;) {
		if (fuse_session_exited(s->se))
			return 0;
		int res = fuse_session_receive_buf(s->se, buf);
		if (res >= 0) {
			if (res > 0 && s->latency)
				cpu_latency_hold(s->latency);
			return res;
		}
		if (res == -EINTR)
			continue;
		if (res != -EAGAIN)
			return res;
		if (s->spin_ns && !s->working && !uring_up(s) &&
		    mono_ns() - since < s->spin_ns) {
			/* a caller woken on this CPU runs now, not after
			 * the poll (gaps of up to spin_ns were seen) */
			sched_yield();
			continue;
		}
		bool held = s->latency && s->latency->held;
		struct pollfd p = { .fd = s->fd, .events = POLLIN };
		int n = poll(&p, 1, held ? LATENCY_QUIET_MS : 250);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n == 0 && held)
			cpu_latency_release(s->latency);
		if (s->spin_ns)
			since = mono_ns();
	}
}

/* Whether the request may take long outside the library's mutex. */
static bool is_long(const struct fuse_buf *buf)
{
	if (buf->flags & FUSE_BUF_IS_FD)
		return true;	/* spliced: its header is not in memory */
	if (buf->size < sizeof(struct fuse_in_header))
		return false;
	const struct fuse_in_header *in = buf->mem;
	switch (in->opcode) {
	case FUSE_FSYNC:
	case FUSE_FSYNCDIR:
		return true;
	case FUSE_WRITE:
		return in->len >= LARGE_IO;
	case FUSE_READ:
		if (buf->size < sizeof(*in) + sizeof(struct fuse_read_in))
			return false;
		return ((const struct fuse_read_in *)(in + 1))->size >=
		       LARGE_IO;
	default:
		return false;
	}
}

static void *follower_main(void *arg);

/* A new follower, when none is idle and the pool may grow.  Locked. */
static void add_follower(struct server *s)
{
	pthread_t t;
	if (s->threads < s->max_threads &&
	    pthread_create(&t, NULL, follower_main, s) == 0)
		s->threads++;
}

/* The session is over: every thread leaves.  Locked. */
static void end_session(struct server *s, int res)
{
	if (res < 0 && !s->error)
		s->error = res;
	fuse_session_exit(s->se);
	s->reading = false;
	pthread_cond_broadcast(&s->turn);
}

/* Hold the reader role: read and process until a long request, which
 * another thread's reading may overlap, or the end.  Locked on entry and
 * on return. */
static void lead(struct server *s, struct fuse_buf *buf)
{
	s->reading = true;
	pthread_mutex_unlock(&s->lock);
	for (;;) {
		int res = receive_one(s, buf);
		if (res <= 0) {
			pthread_mutex_lock(&s->lock);
			end_session(s, res);
			return;
		}
		if (!is_long(buf)) {
			fuse_session_process_buf(s->se, buf);
			continue;
		}
		pthread_mutex_lock(&s->lock);
		s->reading = false;
		if (s->idle)
			pthread_cond_signal(&s->turn);
		else
			add_follower(s);
		s->working++;
		pthread_mutex_unlock(&s->lock);
		fuse_session_process_buf(s->se, buf);
		s->working--;
		pthread_mutex_lock(&s->lock);
		return;
	}
}

/* Lead or follow until the session ends or enough threads are idle. */
static void work(struct server *s)
{
	struct fuse_buf buf = { 0 };
	pthread_mutex_lock(&s->lock);
	while (!fuse_session_exited(s->se)) {
		if (!s->reading) {
			lead(s, &buf);
			continue;
		}
		if (s->idle >= s->max_idle)
			break;	/* enough threads wait already */
		s->idle++;
		pthread_cond_wait(&s->turn, &s->lock);
		s->idle--;
	}
	pthread_mutex_unlock(&s->lock);
	free(buf.mem);
}

/* One thread fewer.  Locked. */
static void leave(struct server *s)
{
	if (--s->threads == 0)
		pthread_cond_signal(&s->done);
}

static void *follower_main(void *arg)
{
	struct server *s = arg;
	work(s);
	pthread_mutex_lock(&s->lock);
	pthread_t before = s->left;
	bool join = s->has_left;
	s->left = pthread_self();
	s->has_left = true;
	leave(s);
	pthread_mutex_unlock(&s->lock);
	if (join)
		pthread_join(before, NULL);
	return NULL;
}

int t3f_serve(struct fuse_session *se, const struct serve_opts *o)
{
	struct server s = {
		.se = se,
		.fd = fuse_session_fd(se),
		.spin_ns = (uint64_t)o->spin_us * 1000,
		.quiet_if = o->quiet_if,
		.max_threads = o->max_threads ? o->max_threads : 1,
		.max_idle = o->max_idle ? o->max_idle : 1,
		.latency = o->latency,
	};
	int fl = fcntl(s.fd, F_GETFL);
	if (fl < 0 || fcntl(s.fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	if (pthread_mutex_init(&s.lock, NULL))
		return -ENOMEM;
	if (pthread_cond_init(&s.turn, NULL)) {
		pthread_mutex_destroy(&s.lock);
		return -ENOMEM;
	}
	if (pthread_cond_init(&s.done, NULL)) {
		pthread_cond_destroy(&s.turn);
		pthread_mutex_destroy(&s.lock);
		return -ENOMEM;
	}
	/* this thread is the first worker; it waits for the others at the
	 * end, since they use s */
	pthread_mutex_lock(&s.lock);
	s.threads = 1;
	pthread_mutex_unlock(&s.lock);
	work(&s);
	pthread_mutex_lock(&s.lock);
	leave(&s);
	while (s.threads)
		pthread_cond_wait(&s.done, &s.lock);
	pthread_mutex_unlock(&s.lock);
	if (s.has_left)	/* which joined the one before it, and so on */
		pthread_join(s.left, NULL);
	pthread_cond_destroy(&s.done);
	pthread_cond_destroy(&s.turn);
	pthread_mutex_destroy(&s.lock);
	if (s.latency)
		cpu_latency_release(s.latency);
	fuse_session_reset(se);
	return s.error;
}

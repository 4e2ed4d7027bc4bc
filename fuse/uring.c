/*
 * FUSE over io_uring (-o io_uring; Linux 6.14 and later, with the fuse
 * module's enable_uring parameter on).
 *
 * Why: through /dev/fuse every request wakes this daemon's reading
 * thread, usually on another CPU than the caller's, and on a virtual
 * machine the wake-up of a halted vCPU is most of a round trip.  Over
 * io_uring the kernel keeps one queue per CPU and hands a request to the
 * queue of the CPU that made it; each queue here has its own thread,
 * pinned to that CPU, so the caller sleeps and this thread runs where it
 * was, and the reply and the wait for the next request are one system
 * call (COMMIT_AND_FETCH).
 *
 * The protocol (the kernel's Documentation/filesystems/fuse-io-uring.rst):
 * the INIT reply asks for it (FUSE_OVER_IO_URING, patched in by
 * kernel_io.c, as libfuse 3.14 does not know it); then each queue
 * registers entries, each a header buffer (struct fuse_uring_req_header)
 * and a payload buffer of the connection's largest request, with a
 * URING_CMD on the /dev/fuse descriptor.  The command completes when a
 * request is in the entry: its fuse_in_header in the header's in_out,
 * its first argument (the per-opcode header) in op_in, the rest in the
 * payload.  The reply goes back the same way (fuse_out_header in in_out,
 * every out argument in the payload) with COMMIT_AND_FETCH, which also
 * hands the entry back for the next request.  Forgets, interrupts and
 * the daemon's notifications still use /dev/fuse (serve.c's loop).
 *
 * libfuse processes the request as if read from the device: the header
 * and op_in are copied in front of the payload, which is registered past
 * room for them, so the message is contiguous without copying the data;
 * its reply reaches kernel_io.c's writev, which hands it here
 * (t3f_uring_reply) when it answers the request this thread is on.
 */
#include <errno.h>
#include <liburing.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include "tux3fuse.h"

/* The kernel's interface (include/uapi/linux/fuse.h, protocol 7.42),
 * newer than the headers of Debian 12. */
#ifndef FUSE_URING_IN_OUT_HEADER_SZ
#define FUSE_URING_IN_OUT_HEADER_SZ 128
#define FUSE_URING_OP_IN_OUT_SZ 128
struct fuse_uring_ent_in_out {
	uint64_t flags;
	uint64_t commit_id;	/* what the commit of this request names */
	uint32_t payload_sz;	/* bytes used in the payload buffer */
	uint32_t padding;
	uint64_t reserved;
};
struct fuse_uring_req_header {
	char in_out[FUSE_URING_IN_OUT_HEADER_SZ];
	char op_in[FUSE_URING_OP_IN_OUT_SZ];
	struct fuse_uring_ent_in_out ring_ent_in_out;
};
#define FUSE_IO_URING_CMD_REGISTER 1
#define FUSE_IO_URING_CMD_COMMIT_AND_FETCH 2
struct fuse_uring_cmd_req {	/* in the SQE's command area */
	uint64_t flags;
	uint64_t commit_id;
	uint16_t qid;
	uint8_t padding[6];
};
#endif

#define URING_DEPTH 4		/* entries (requests in flight) a queue */
#define URING_WAIT_MS 200	/* a queue thread looks at the stop flag */
#define MSG_ROOM (sizeof(struct fuse_in_header) + FUSE_URING_OP_IN_OUT_SZ)

struct uring_queue;

struct uring_ent {
	struct uring_queue *q;
	struct fuse_uring_req_header hdr;
	struct iovec iov[2];	/* hdr, payload: what REGISTER gives */
	uint8_t *mem;		/* MSG_ROOM, then the payload */
	uint8_t *payload;
	size_t payload_cap;
	uint64_t unique;	/* of the request being served */
	bool replied;
};

struct uring_queue {
	struct t3f_uring *u;
	unsigned qid;
	struct io_uring ring;
	bool ring_ok;
	pthread_t thread;
	bool started;
	struct uring_ent ents[URING_DEPTH];
};

struct t3f_uring {
	struct t3f *fs;
	int fd;
	unsigned nqueues;
	size_t payload;
	atomic_bool stop;
	atomic_ulong served;
	atomic_uint registered;	/* queues whose entries were taken */
	atomic_int error;	/* the first a queue met, negative */
	struct uring_queue *queues;
};

/* the entry whose request this thread is processing */
static _Thread_local struct uring_ent *current;

/* ---- replies ---- */

/* A reply libfuse wrote (out header, then its arguments): into the entry
 * when it answers this thread's request; false for anything else (a
 * notification, or a request read from /dev/fuse), which goes to the
 * device. */
bool t3f_uring_reply(const struct iovec *iov, int count, ssize_t *ret)
{
	struct uring_ent *e = current;
	if (!e || e->replied || count < 1 ||
	    iov[0].iov_len < sizeof(struct fuse_out_header))
		return false;
	const struct fuse_out_header *out = iov[0].iov_base;
	if (out->unique != e->unique)
		return false;
	size_t len = 0;
	for (int i = 1; i < count; i++) {
		if (iov[i].iov_len > e->payload_cap - len) {
			*ret = -EINVAL;	/* cannot happen: max_write bounds */
			return true;
		}
		memcpy(e->payload + len, iov[i].iov_base, iov[i].iov_len);
		len += iov[i].iov_len;
	}
	struct fuse_out_header *h = (void *)e->hdr.in_out;
	*h = *out;
	h->len = (uint32_t)(sizeof(*h) + len);
	e->hdr.ring_ent_in_out.payload_sz = (uint32_t)len;
	e->replied = true;
	*ret = (ssize_t)(sizeof(*h) + len);
	return true;
}

static void reply_error(struct uring_ent *e, int err)
{
	struct fuse_out_header *h = (void *)e->hdr.in_out;
	*h = (struct fuse_out_header){ .len = sizeof(*h), .error = err,
				       .unique = e->unique };
	e->hdr.ring_ent_in_out.payload_sz = 0;
	e->replied = true;
}

/* ---- one request ---- */

static void serve_entry(struct uring_ent *e)
{
	struct t3f_uring *u = e->q->u;
	struct fuse_in_header in;
	memcpy(&in, e->hdr.in_out, sizeof(in));
	uint32_t psz = e->hdr.ring_ent_in_out.payload_sz;
	e->unique = in.unique;
	e->replied = false;
	if (psz > e->payload_cap || in.len < sizeof(in) + psz ||
	    in.len - sizeof(in) - psz > FUSE_URING_OP_IN_OUT_SZ) {
		reply_error(e, -EPROTO);
		return;
	}
	size_t oplen = in.len - sizeof(in) - psz;
	uint8_t *msg = e->payload - oplen - sizeof(in);
	memcpy(msg, &in, sizeof(in));
	memcpy(msg + sizeof(in), e->hdr.op_in, oplen);
	struct fuse_buf buf = { .mem = msg, .size = in.len };
	t3f_note_request(u->fs, msg, in.len);
	current = e;
	fuse_session_process_buf(u->fs->se, &buf);
	current = NULL;
	atomic_fetch_add(&u->served, 1);
	if (!e->replied)	/* every request over io_uring has a reply */
		reply_error(e, -EIO);
}

/* ---- a queue ---- */

static int queue_cmd(struct uring_queue *q, struct uring_ent *e, unsigned op)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);
	if (!sqe)
		return -EBUSY;	/* the ring holds URING_DEPTH * 2 */
	memset(sqe, 0, 2 * sizeof(*sqe));	/* SQE128 */
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = q->u->fd;
	sqe->cmd_op = op;
	io_uring_sqe_set_data(sqe, e);
	struct fuse_uring_cmd_req *req = (void *)sqe->cmd;
	req->qid = (uint16_t)q->qid;
	if (op == FUSE_IO_URING_CMD_REGISTER) {
		sqe->addr = (uintptr_t)e->iov;
		sqe->len = 2;
	} else {
		req->commit_id = e->hdr.ring_ent_in_out.commit_id;
	}
	return 0;
}

static void queue_failed(struct uring_queue *q, int err)
{
	int none = 0;
	atomic_compare_exchange_strong(&q->u->error, &none, err);
	atomic_store(&q->u->stop, true);
}

static void *queue_main(void *arg)
{
	struct uring_queue *q = arg;
	struct t3f_uring *u = q->u;
	cpu_set_t cpus;
	CPU_ZERO(&cpus);
	CPU_SET(q->qid, &cpus);
	/* an offline CPU's queue serves nobody; its thread may run anywhere */
	(void)pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);

	/* the ring is this thread's alone: its completions run here when it
	 * asks for them, not as work pushed at it (a wake-up each) */
	int err = io_uring_queue_init(URING_DEPTH * 2, &q->ring,
				      IORING_SETUP_SQE128 |
				      IORING_SETUP_SINGLE_ISSUER |
				      IORING_SETUP_DEFER_TASKRUN);
	if (err == -EINVAL)	/* before Linux 6.1 */
		err = io_uring_queue_init(URING_DEPTH * 2, &q->ring,
					  IORING_SETUP_SQE128);
	if (err) {
		queue_failed(q, err);
		return NULL;
	}
	q->ring_ok = true;
	for (unsigned i = 0; i < URING_DEPTH && !err; i++)
		err = queue_cmd(q, &q->ents[i], FUSE_IO_URING_CMD_REGISTER);
	if (!err && (err = io_uring_submit(&q->ring)) >= 0)
		err = 0;
	if (err) {
		queue_failed(q, err);
		return NULL;
	}
	atomic_fetch_add(&u->registered, 1);
	while (!atomic_load(&u->stop)) {
		struct io_uring_cqe *cqe;
		struct __kernel_timespec ts = {
			.tv_nsec = URING_WAIT_MS * 1000000LL,
		};
		int r = io_uring_submit_and_wait_timeout(&q->ring, &cqe, 1,
							 &ts, NULL);
		if (r == -ETIME || r == -EINTR)
			continue;
		if (r < 0) {
			queue_failed(q, r);
			break;
		}
		unsigned head, n = 0;
		io_uring_for_each_cqe(&q->ring, head, cqe) {
			struct uring_ent *e = io_uring_cqe_get_data(cqe);
			n++;
			if (cqe->res < 0) {
				/* ENOTCONN, ECONNABORTED at unmount; the
				 * entry is the kernel's no more */
				if (cqe->res != -ENOTCONN &&
				    cqe->res != -ECONNABORTED &&
				    cqe->res != -ECANCELED)
					queue_failed(q, cqe->res);
				atomic_store(&u->stop, true);
				continue;
			}
			serve_entry(e);
			if ((r = queue_cmd(q, e,
					  FUSE_IO_URING_CMD_COMMIT_AND_FETCH)))
				queue_failed(q, r);
		}
		io_uring_cq_advance(&q->ring, n);
	}
	return NULL;
}

/* The possible CPUs, as the kernel counts its queues: the highest
 * number in /sys/devices/system/cpu/possible, plus one. */
static unsigned possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	unsigned n = 0;
	if (f) {
		char line[256];
		if (fgets(line, sizeof(line), f)) {
			char *p = strrchr(line, '-'), *q = strrchr(line, ',');
			char *last = p > q ? p : q;
			n = (unsigned)strtoul(last ? last + 1 : line, NULL, 10)
			    + 1;
		}
		fclose(f);
	}
	return n ? n : (unsigned)sysconf(_SC_NPROCESSORS_CONF);
}

static int queue_init(struct t3f_uring *u, struct uring_queue *q,
		      unsigned qid)
{
	q->u = u;
	q->qid = qid;
	for (unsigned i = 0; i < URING_DEPTH; i++) {
		struct uring_ent *e = &q->ents[i];
		e->q = q;
		e->mem = malloc(MSG_ROOM + u->payload);
		if (!e->mem)
			return -ENOMEM;
		e->payload = e->mem + MSG_ROOM;
		e->payload_cap = u->payload;
		e->iov[0] = (struct iovec){ &e->hdr, sizeof(e->hdr) };
		e->iov[1] = (struct iovec){ e->payload, u->payload };
	}
	return 0;
}

static void uring_free(struct t3f_uring *u)
{
	for (unsigned i = 0; i < u->nqueues; i++) {
		struct uring_queue *q = &u->queues[i];
		if (q->started)
			pthread_join(q->thread, NULL);
		if (q->ring_ok)
			io_uring_queue_exit(&q->ring);
		for (unsigned k = 0; k < URING_DEPTH; k++)
			free(q->ents[k].mem);
	}
	free(u->queues);
	free(u);
}

/* After the INIT reply that asked for io_uring: one queue per possible
 * CPU, each registering its entries on its own thread.  payload: the
 * largest request the connection may carry. */
int t3f_uring_start(struct t3f *fs, size_t payload)
{
	struct t3f_uring *u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->fs = fs;
	u->fd = fuse_session_fd(fs->se);
	u->payload = payload;
	u->nqueues = possible_cpus();
	u->queues = calloc(u->nqueues, sizeof(*u->queues));
	if (!u->queues) {
		free(u);
		return -ENOMEM;
	}
	int err = 0;
	for (unsigned i = 0; i < u->nqueues && !err; i++) {
		if ((err = queue_init(u, &u->queues[i], i)))
			break;
		err = -pthread_create(&u->queues[i].thread, NULL, queue_main,
				      &u->queues[i]);
		u->queues[i].started = !err;
	}
	if (err) {
		atomic_store(&u->stop, true);
		uring_free(u);
		return err;
	}
	__atomic_store_n(&fs->uring, u, __ATOMIC_RELEASE);
	return 0;
}

/* The session is over: the queue threads stop (within URING_WAIT_MS),
 * and what they served is told under -d and -f. */
void t3f_uring_stop(struct t3f *fs)
{
	struct t3f_uring *u = fs->uring;
	if (!u)
		return;
	atomic_store(&u->stop, true);
	fs->uring = NULL;
	int err = atomic_load(&u->error);
	unsigned long served = atomic_load(&u->served);
	unsigned queues = u->nqueues;
	uring_free(u);
	if (err)
		t3f_log(fs, "io_uring: %s (requests went through /dev/fuse "
			"after it)", strerror(-err));
	if (fs->foreground)
		fprintf(stderr, "tux3fuse: io_uring: %lu requests served by "
			"%u queues\n", served, queues);
}

/*
 * The write recorder (record.c): dm-log-writes done in userspace, for the
 * crash simulator (tests/crash/crashsim.c).  A device with a recorder
 * attached (struct device.rec, set by the caller after the open; NULL, the
 * default, costs one pointer check per write or flush) logs every write
 * with a copy of its data, every flush, and marks: the library's (a
 * superblock commit write follows, delta committed and durable, this
 * delta unifies) and the caller's (operation k done, fsync returned).
 * Events are in issue order; a recorder belongs to its creator, never to
 * the device.  Not part of the installed API.
 */
#ifndef TUX3_RECORD_H
#define TUX3_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum rec_kind {
	REC_WRITE,	/* data at off, len bytes (durable after a flush) */
	REC_FUA,	/* a write that is durable on its own */
	REC_FLUSH,	/* every earlier write is durable */
	REC_MARK,
};

enum rec_mark {
	/* from the library (commit.c) */
	REC_MARK_SUPER = 1,	/* the next write is the commit point of
				 * delta seq (the superblock) */
	REC_MARK_COMMIT,	/* delta seq is committed and flushed */
	REC_MARK_UNIFY,		/* delta seq (being committed) unifies */
	/* from the user of the volume */
	REC_MARK_OP,		/* operation arg is done */
	REC_MARK_FSYNC,		/* an fsync (a sync) returned after op arg */
	REC_MARK_USER,		/* anything else, arg as the user likes */
};

struct rec_event {
	unsigned kind;		/* enum rec_kind */
	unsigned mark;		/* enum rec_mark, for REC_MARK */
	uint64_t off;		/* byte offset of a write */
	uint32_t len;		/* its length */
	uint8_t *data;		/* a copy of what was written */
	uint64_t arg;		/* a mark's argument */
	uint64_t seq;		/* deltas committed when the event was
				 * recorded (for SUPER and UNIFY: the delta
				 * being committed, one more) */
};

struct recorder {
	struct rec_event *ev;
	size_t count, cap;
	uint64_t commits;	/* REC_MARK_COMMIT marks so far */
	uint64_t bytes;		/* data held */
	int err;		/* first failure (-ENOMEM): the trace is
				 * incomplete and must not be used */
};

struct recorder *rec_new(void);
/* Drop every event (the recorder is reused); commits starts at 0. */
void rec_reset(struct recorder *rec);
void rec_free(struct recorder *rec);
void rec_write(struct recorder *rec, uint64_t off, const void *buf,
	       size_t len, bool fua);
void rec_flush(struct recorder *rec);
void rec_mark(struct recorder *rec, unsigned mark, uint64_t arg);
const char *rec_mark_name(unsigned mark);

#endif

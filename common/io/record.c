/*
 * The write recorder (see record.h): an append-only event log with a copy
 * of every write's data.  A failed allocation sets rec->err and stops the
 * recording (the trace would be a lie from there on).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "io/record.h"

struct recorder *rec_new(void)
{
	return calloc(1, sizeof(struct recorder));
}

void rec_reset(struct recorder *rec)
{
	for (size_t i = 0; i < rec->count; i++)
		free(rec->ev[i].data);
	rec->count = 0;
	rec->commits = 0;
	rec->bytes = 0;
	rec->err = 0;
}

void rec_free(struct recorder *rec)
{
	if (!rec)
		return;
	rec_reset(rec);
	free(rec->ev);
	free(rec);
}

static struct rec_event *rec_add(struct recorder *rec, unsigned kind)
{
	if (rec->err)
		return NULL;
	if (rec->count == rec->cap) {
		size_t ncap = rec->cap ? rec->cap * 2 : 256;
		struct rec_event *n = realloc(rec->ev, ncap * sizeof(*n));
		if (!n) {
			rec->err = -ENOMEM;
			return NULL;
		}
		rec->ev = n;
		rec->cap = ncap;
	}
	struct rec_event *e = &rec->ev[rec->count++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->seq = rec->commits;
	return e;
}

void rec_write(struct recorder *rec, uint64_t off, const void *buf,
	       size_t len, bool fua)
{
	uint8_t *copy = malloc(len ? len : 1);
	if (!copy || len > UINT32_MAX) {
		free(copy);
		rec->err = -ENOMEM;
		return;
	}
	struct rec_event *e = rec_add(rec, fua ? REC_FUA : REC_WRITE);
	if (!e) {
		free(copy);
		return;
	}
	memcpy(copy, buf, len);
	e->off = off;
	e->len = (uint32_t)len;
	e->data = copy;
	rec->bytes += len;
}

void rec_flush(struct recorder *rec)
{
	rec_add(rec, REC_FLUSH);
}

void rec_mark(struct recorder *rec, unsigned mark, uint64_t arg)
{
	struct rec_event *e = rec_add(rec, REC_MARK);
	if (!e)
		return;
	e->mark = mark;
	e->arg = arg;
	if (mark == REC_MARK_SUPER || mark == REC_MARK_UNIFY)
		e->seq = rec->commits + 1;
	else if (mark == REC_MARK_COMMIT)
		e->seq = ++rec->commits;
}

const char *rec_mark_name(unsigned mark)
{
	static const char *const names[] = {
		[REC_MARK_SUPER] = "super", [REC_MARK_COMMIT] = "commit",
		[REC_MARK_UNIFY] = "unify", [REC_MARK_OP] = "op",
		[REC_MARK_FSYNC] = "fsync", [REC_MARK_USER] = "user",
	};
	return mark < sizeof(names) / sizeof(names[0]) && names[mark] ?
	       names[mark] : "?";
}

/*
 * mkfs.tux3 -d: helper threads that read the source tree ahead of the
 * writer (see prefetch.h for what is fetched and why the image does not
 * depend on it).
 *
 * The directories being written form a stack, the newest on top.  Each
 * holds a ring of slots for the entries fetched ahead of the writer:
 * entry i lives in slot i % nslots, and may be fetched once entries
 * below i - nslots are released.  An entry is claimed by whoever gets
 * to it first, a helper or the writer itself (taking an entry nobody
 * has claimed yet), so the writer never waits for a helper that has not
 * started.  Helpers work on the newest directory first, then on those
 * below it that still have entries to come.  The number of entries held
 * fetched (with their open files) and of data buffers is bounded, so
 * memory does not grow with the tree.
 *
 * Waking a sleeping thread costs more than fetching an entry (on a
 * virtual machine, an idle vCPU is halted), so nobody is woken per
 * entry: a helper that finds the window full sleeps until half of it
 * is free again, and the writer is woken only when it waits.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "prefetch.h"

#define PF_WINDOW 64		/* entries fetched ahead in one directory */
#define PF_HELD_MAX 256		/* entries held fetched in all */
#define PF_BUFS 128		/* data buffers of PF_DATA_MAX bytes */
/* Helpers by default: they mostly wait for the source's disk, so their
 * number follows the reads a device serves at once, not the CPUs (1M
 * small files, cold, 2 CPUs: 106 s with none, 97 s with 1, 37 s with 4,
 * 35 s with 8; warm, the same 15 s with 1 or 4). */
#define PF_THREADS_DEFAULT 4

enum slot_state { SLOT_FREE, SLOT_BUSY, SLOT_READY };

struct pf_slot {
	size_t index;
	enum slot_state state;
	struct pf_entry e;
};

struct pf_dir {
	struct prefetch *pf;
	struct pf_dir *parent;	/* the directory written before this one */
	int dfd;
	char **names;
	size_t count;
	size_t next;		/* the first entry nobody has claimed */
	size_t released;	/* entries the writer is done with */
	unsigned busy;		/* entries being fetched by helpers */
	unsigned nslots;
	bool ended;
	struct pf_slot slots[];
};

struct prefetch {
	pthread_mutex_t lock;
	pthread_cond_t work;	/* helpers: something to fetch, or quit */
	pthread_cond_t done;	/* writer: a helper finished an entry */
	struct pf_dir *top;
	unsigned held;		/* entries claimed and not yet released */
	unsigned sleeping;	/* helpers waiting for work */
	unsigned waiting;	/* the writer waits for a helper */
	uint8_t *free_bufs[PF_BUFS];
	unsigned nfree, nmade;
	bool quit;
	unsigned nthreads;
	pthread_t threads[];
};

/* ---- data buffers ---- */

static uint8_t *buf_get(struct prefetch *pf)
{
	uint8_t *b = NULL;
	pthread_mutex_lock(&pf->lock);
	if (pf->nfree)
		b = pf->free_bufs[--pf->nfree];
	else if (pf->nmade < PF_BUFS && (b = malloc(PF_DATA_MAX)))
		pf->nmade++;
	pthread_mutex_unlock(&pf->lock);
	return b;
}

/* with the lock held */
static void buf_put(struct prefetch *pf, uint8_t *b)
{
	if (b)
		pf->free_bufs[pf->nfree++] = b;
}

/* ---- fetching one entry ---- */

int pf_open_regular(int dfd, const char *name, const struct stat *st,
		    int *err)
{
	int flags = O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC;
	int fd = openat(dfd, name, flags | O_NOATIME);
	if (fd < 0 && errno == EPERM)	/* O_NOATIME on a file not ours */
		fd = openat(dfd, name, flags);
	if (fd < 0) {
		*err = errno;
		return -1;
	}
	struct stat now;
	if (fstat(fd, &now) || now.st_ino != st->st_ino ||
	    now.st_dev != st->st_dev) {
		close(fd);
		*err = PF_CHANGED;
		return -1;
	}
	return fd;
}

char *pf_name_dup(const char *name, unsigned char d_type)
{
	size_t len = strlen(name);
	char *s = malloc(len + 2);
	if (s) {
		memcpy(s, name, len + 1);
		s[len + 1] = (char)d_type;
	}
	return s;
}

static unsigned char name_type(const char *name)
{
	return (unsigned char)name[strlen(name) + 1];
}

/* The whole content of a small file, read as the writer's copy_data()
 * reads a file of at most PF_DATA_MAX bytes: one read of size bytes
 * from offset 0, holes and all (they read as zeros, and zeros are left
 * out of the volume like holes). */
static void fetch_data(struct prefetch *pf, struct pf_entry *e)
{
	size_t size = (size_t)e->st.st_size;
	if (!size) {
		e->data = PF_DATA_READY;	/* nothing to write */
		return;
	}
	uint8_t *b = buf_get(pf);
	if (!b)
		return;
	size_t got = 0;
	while (got < size) {
		ssize_t n = pread(e->fd, b + got, size - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			pthread_mutex_lock(&pf->lock);
			buf_put(pf, b);
			pthread_mutex_unlock(&pf->lock);
			return;	/* the writer meets the error itself */
		}
		if (!n)
			break;	/* it shrank: the rest reads as zeros */
		got += (size_t)n;
	}
	e->buf = b;
	e->len = got;
	e->data = PF_DATA_READY;
}

/* An entry the directory says is a regular file is opened first and
 * its fstat taken for the lstat: one path lookup, not two.  O_NOFOLLOW
 * and the fstat make it the lstat of whatever the name is now; should
 * it no longer be a regular file (O_NONBLOCK: a FIFO does not block
 * the open), the descriptor is closed and the stat kept. */
static bool open_as_listed(int dfd, const char *name, struct pf_entry *e)
{
	int flags = O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC |
		    O_NONBLOCK;
	int fd = openat(dfd, name, flags | O_NOATIME);
	if (fd < 0 && errno == EPERM)	/* O_NOATIME on a file not ours */
		fd = openat(dfd, name, flags);
	if (fd < 0)
		return false;	/* the lstat says why, or what it is */
	if (fstat(fd, &e->st)) {
		close(fd);
		return false;
	}
	e->stat_ok = true;
	if (S_ISREG(e->st.st_mode))
		e->fd = fd;
	else
		close(fd);
	return true;
}

static void fetch(struct prefetch *pf, int dfd, const char *name,
		  struct pf_entry *e)
{
	*e = (struct pf_entry){ .fd = -1, .data = PF_DATA_NONE };
	if (name_type(name) != DT_REG || !open_as_listed(dfd, name, e)) {
		e->stat_ok = !fstatat(dfd, name, &e->st, AT_SYMLINK_NOFOLLOW);
		if (!e->stat_ok || !S_ISREG(e->st.st_mode))
			return;
		int err;
		e->fd = pf_open_regular(dfd, name, &e->st, &err);
	}
	if (e->fd < 0)
		return;
	ssize_t n = flistxattr(e->fd, NULL, 0);
	e->no_xattrs = !n || (n < 0 && errno == ENOTSUP);
	if (e->st.st_size <= (off_t)PF_DATA_MAX)
		fetch_data(pf, e);
}

/* ---- claiming entries (the lock held) ---- */

static struct pf_dir *claimable(struct prefetch *pf)
{
	if (pf->held >= PF_HELD_MAX)
		return NULL;
	for (struct pf_dir *d = pf->top; d; d = d->parent)
		if (!d->ended && d->next < d->count &&
		    d->next < d->released + d->nslots)
			return d;
	return NULL;
}

/* Worth waking a helper for: a directory with half its window free (or
 * its last entries to come). */
static bool worth_waking(struct prefetch *pf)
{
	if (!pf->sleeping || pf->held > PF_HELD_MAX / 2)
		return false;
	struct pf_dir *d = claimable(pf);
	if (!d)
		return false;
	size_t room = d->released + d->nslots - d->next;
	return room >= (d->nslots + 1) / 2 || d->next + room >= d->count;
}

static struct pf_slot *claim(struct pf_dir *d)
{
	size_t i = d->next++;
	struct pf_slot *s = &d->slots[i % d->nslots];
	s->index = i;
	s->state = SLOT_BUSY;
	d->pf->held++;
	return s;
}

static void slot_free(struct prefetch *pf, struct pf_slot *s)
{
	if (s->e.fd >= 0)
		close(s->e.fd);
	buf_put(pf, s->e.buf);
	s->e.fd = -1;
	s->e.buf = NULL;
	s->state = SLOT_FREE;
	pf->held--;
}

static void *helper(void *arg)
{
	struct prefetch *pf = arg;
	pthread_mutex_lock(&pf->lock);
	while (!pf->quit) {
		struct pf_dir *d = claimable(pf);
		if (!d) {
			pf->sleeping++;
			pthread_cond_wait(&pf->work, &pf->lock);
			pf->sleeping--;
			continue;
		}
		struct pf_slot *s = claim(d);
		d->busy++;
		pthread_mutex_unlock(&pf->lock);
		fetch(pf, d->dfd, d->names[s->index], &s->e);
		pthread_mutex_lock(&pf->lock);
		s->state = SLOT_READY;
		d->busy--;
		if (pf->waiting)
			pthread_cond_broadcast(&pf->done);
	}
	pthread_mutex_unlock(&pf->lock);
	return NULL;
}

/* ---- the writer's side ---- */

struct pf_entry *pf_take(struct pf_dir *d, size_t i)
{
	struct prefetch *pf = d->pf;
	struct pf_slot *s = &d->slots[i % d->nslots];
	pthread_mutex_lock(&pf->lock);
	if (d->next == i) {	/* no helper got to it: fetch it here */
		claim(d);
		pthread_mutex_unlock(&pf->lock);
		fetch(pf, d->dfd, d->names[i], &s->e);
		pthread_mutex_lock(&pf->lock);
		s->state = SLOT_READY;
	}
	while (s->state != SLOT_READY) {
		pf->waiting++;
		pthread_cond_wait(&pf->done, &pf->lock);
		pf->waiting--;
	}
	pthread_mutex_unlock(&pf->lock);
	return &s->e;
}

void pf_release(struct pf_dir *d, size_t i)
{
	struct prefetch *pf = d->pf;
	struct pf_slot *s = &d->slots[i % d->nslots];
	/* the writer's own until released: no helper claims it before, so
	 * its file is closed outside the lock the helpers wait on */
	if (s->e.fd >= 0)
		close(s->e.fd);
	s->e.fd = -1;
	pthread_mutex_lock(&pf->lock);
	slot_free(pf, s);
	d->released = i + 1;
	if (worth_waking(pf))
		pthread_cond_broadcast(&pf->work);
	pthread_mutex_unlock(&pf->lock);
}

struct pf_dir *pf_dir_begin(struct prefetch *pf, int dfd, char **names,
			    size_t count)
{
	unsigned nslots = count < PF_WINDOW ? (count ? (unsigned)count : 1) :
			  PF_WINDOW;
	struct pf_dir *d = calloc(1, sizeof(*d) + nslots * sizeof(d->slots[0]));
	if (!d)
		return NULL;
	*d = (struct pf_dir){ .pf = pf, .dfd = dfd, .names = names,
			      .count = count, .nslots = nslots };
	for (unsigned k = 0; k < nslots; k++)
		d->slots[k].e.fd = -1;
	pthread_mutex_lock(&pf->lock);
	d->parent = pf->top;
	pf->top = d;
	if (pf->sleeping)
		pthread_cond_broadcast(&pf->work);
	pthread_mutex_unlock(&pf->lock);
	return d;
}

/* The writer is done with the directory (all of it, or it stops on an
 * error): wait for the helpers still fetching its entries, drop what
 * was fetched and not taken. */
void pf_dir_end(struct pf_dir *d)
{
	struct prefetch *pf = d->pf;
	pthread_mutex_lock(&pf->lock);
	d->ended = true;
	while (d->busy) {
		pf->waiting++;
		pthread_cond_wait(&pf->done, &pf->lock);
		pf->waiting--;
	}
	for (unsigned k = 0; k < d->nslots; k++)
		if (d->slots[k].state == SLOT_READY)
			slot_free(pf, &d->slots[k]);
	pf->top = d->parent;
	if (pf->sleeping)
		pthread_cond_broadcast(&pf->work);
	pthread_mutex_unlock(&pf->lock);
	free(d);
}

/* ---- helpers ---- */

unsigned pf_default_threads(void)
{
	return PF_THREADS_DEFAULT;
}

struct prefetch *pf_start(unsigned nthreads)
{
	struct prefetch *pf = calloc(1, sizeof(*pf) +
				     nthreads * sizeof(pf->threads[0]));
	if (!pf)
		return NULL;
	pthread_mutex_init(&pf->lock, NULL);
	pthread_cond_init(&pf->work, NULL);
	pthread_cond_init(&pf->done, NULL);
	for (unsigned k = 0; k < nthreads; k++) {
		if (pthread_create(&pf->threads[k], NULL, helper, pf))
			break;
		pf->nthreads++;
	}
	return pf;
}

void pf_stop(struct prefetch *pf)
{
	if (!pf)
		return;
	pthread_mutex_lock(&pf->lock);
	pf->quit = true;
	pthread_cond_broadcast(&pf->work);
	pthread_mutex_unlock(&pf->lock);
	for (unsigned k = 0; k < pf->nthreads; k++)
		pthread_join(pf->threads[k], NULL);
	for (unsigned k = 0; k < pf->nfree; k++)
		free(pf->free_bufs[k]);
	pthread_cond_destroy(&pf->done);
	pthread_cond_destroy(&pf->work);
	pthread_mutex_destroy(&pf->lock);
	free(pf);
}

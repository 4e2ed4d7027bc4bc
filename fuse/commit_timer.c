/*
 * When a delta is committed.  The library commits by itself when a delta
 * grows past its bound; fsync, fsyncdir and unmount commit; and, like
 * ext4's commit= interval, this thread commits a delta that has held
 * changes for commit_secs seconds (option commit=SECS, 0 turns it off),
 * so that at most that much work is lost by a crash or a SIGKILL.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "tux3fuse.h"

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void t3f_mark_dirty(struct t3f *fs)
{
	if (!fs->dirty) {
		fs->dirty = true;
		fs->dirty_since = mono_ns();
	}
	fs->may_free = true;
}

void t3f_mark_failed(struct t3f *fs)
{
	bool may_free = fs->may_free;
	t3f_mark_dirty(fs);
	fs->may_free = may_free;
}

const char *t3f_error_text(struct t3f *fs, int err, char *buf, size_t len)
{
	/* the library's record names the block; a path that returned an
	 * errno without one still has its errno told */
	if (tux3_last_error(fs->vol)->err)
		return tux3_error_text(fs->vol, buf, len);
	snprintf(buf, len, "%s", strerror(-err));
	return buf;
}

int t3f_commit(struct t3f *fs)
{
	if (fs->readonly || !fs->vol)
		return 0;
	int err = tux3_sync(fs->vol);
	if (err && !fs->commit_failed) {
		/* the library takes no more changes after a failed commit:
		 * say so once, and stop the timer's retries */
		char buf[512];
		t3f_log(fs, "commit failed: %s; the volume takes no more "
			"changes (EROFS) until it is mounted again, which "
			"replays its log", t3f_error_text(fs, err, buf,
							  sizeof(buf)));
		fs->commit_failed = true;
		fs->dirty = false;
	}
	if (err) {
		tux3_clear_error(fs->vol);
	} else {
		fs->dirty = false;
		fs->may_free = false;
	}
	return err;
}

static void *timer_main(void *arg)
{
	struct t3f *fs = arg;
	pthread_mutex_lock(&fs->lock);
	while (!fs->timer_stop) {
		struct timespec until;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += 1;
		pthread_cond_timedwait(&fs->timer_cond, &fs->lock, &until);
		if (fs->timer_stop)
			break;
		if (fs->dirty && mono_ns() - fs->dirty_since >=
		    (int64_t)fs->commit_secs * 1000000000)
			t3f_commit(fs);
	}
	pthread_mutex_unlock(&fs->lock);
	return NULL;
}

int t3f_timer_start(struct t3f *fs)
{
	if (!fs->commit_secs || fs->readonly || fs->timer_running)
		return 0;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	int err = pthread_cond_init(&fs->timer_cond, &ca);
	pthread_condattr_destroy(&ca);
	if (err)
		return -err;
	fs->timer_stop = false;
	err = pthread_create(&fs->timer, NULL, timer_main, fs);
	if (err) {
		pthread_cond_destroy(&fs->timer_cond);
		return -err;
	}
	fs->timer_running = true;
	return 0;
}

void t3f_timer_stop(struct t3f *fs)
{
	if (!fs->timer_running)
		return;
	pthread_mutex_lock(&fs->lock);
	fs->timer_stop = true;
	pthread_cond_signal(&fs->timer_cond);
	pthread_mutex_unlock(&fs->lock);
	pthread_join(fs->timer, NULL);
	pthread_cond_destroy(&fs->timer_cond);
	fs->timer_running = false;
}

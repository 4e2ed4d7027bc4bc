/*
 * The FUSE device as libfuse's custom I/O (fuse_session_custom_io), for
 * three things of the kernel protocol that libfuse 3.14 does not carry:
 *
 *  - FUSE_HANDLE_KILLPRIV_V2 in the INIT reply.  With it the kernel marks
 *    the mount SB_NOSEC and stops asking for security.capability before
 *    every write (a round trip per write(2)); in exchange this daemon
 *    clears set-user-ID and set-group-ID where the kernel tells it to:
 *  - the kill flags of a request, FUSE_WRITE_KILL_SUIDGID in a write and
 *    FATTR_KILL_SUIDGID in a setattr, which libfuse 3.14 drops.  They are
 *    noted when the request is read, for the thread that then processes
 *    it (serve.c reads and processes a request on the same thread), and
 *    asked for by fuse_ops.c with t3f_request_kills_suidgid;
 *  - FUSE_OVER_IO_URING in the INIT reply, under -o io_uring when the
 *    kernel offers it, and the start of uring.c's queues once the kernel
 *    has the reply; the replies to requests served from io_uring go
 *    there instead of to the device.
 *
 * Everything else passes through unchanged.
 */
#include <errno.h>
#include <linux/fuse.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include "tux3fuse.h"

/* the kill flag of the request this thread is processing */
static _Thread_local bool request_kills;

bool t3f_request_kills_suidgid(void)
{
	return request_kills;
}

/* FUSE_OVER_IO_URING (protocol 7.42), newer than Debian 12's headers;
 * a flag of the second word (flags2) */
#define T3F_OVER_IO_URING_FLAGS2 (1u << (41 - 32))

void t3f_note_request(struct t3f *fs, const void *buf, size_t len)
{
	const struct fuse_in_header *in = buf;
	request_kills = false;
	if (len < sizeof(*in))
		return;
	const void *arg = in + 1;
	size_t alen = len - sizeof(*in);
	switch (in->opcode) {
	case FUSE_INIT:
		if (alen >= offsetof(struct fuse_init_in, flags) +
			    sizeof(uint32_t)) {
			const struct fuse_init_in *ii = arg;
			fs->init_unique = in->unique;
			fs->kernel_killpriv_v2 =
				(ii->flags & FUSE_HANDLE_KILLPRIV_V2) != 0;
			fs->kernel_uring =
				alen >= offsetof(struct fuse_init_in,
						 flags2) + sizeof(uint32_t) &&
				(ii->flags & FUSE_INIT_EXT) &&
				(ii->flags2 & T3F_OVER_IO_URING_FLAGS2);
		}
		break;
	case FUSE_WRITE:
		if (alen >= sizeof(struct fuse_write_in))
			request_kills = (((const struct fuse_write_in *)arg)
					 ->write_flags &
					 FUSE_WRITE_KILL_SUIDGID) != 0;
		break;
	case FUSE_SETATTR:
		if (alen >= sizeof(struct fuse_setattr_in))
			request_kills = (((const struct fuse_setattr_in *)arg)
					 ->valid & FATTR_KILL_SUIDGID) != 0;
		break;
	default:
		break;
	}
}

static ssize_t dev_read(int fd, void *buf, size_t len, void *userdata)
{
	ssize_t n = read(fd, buf, len);
	if (n > 0)
		t3f_note_request(userdata, buf, (size_t)n);
	return n;
}

/* The INIT reply (header, then fuse_init_out) gains KILLPRIV_V2 when the
 * kernel offered it and the mount takes it. */
static void patch_init_reply(struct t3f *fs, struct iovec *iov, int count)
{
	if (!fs->init_unique || count < 2 ||
	    iov[0].iov_len < sizeof(struct fuse_out_header))
		return;
	struct fuse_out_header *out = iov[0].iov_base;
	if (out->unique != fs->init_unique)
		return;
	fs->init_unique = 0;
	if (out->error || iov[1].iov_len < offsetof(struct fuse_init_out,
						    flags) + sizeof(uint32_t))
		return;
	struct fuse_init_out *io = iov[1].iov_base;
	if (fs->kernel_killpriv_v2 && fs->want_killpriv) {
		io->flags |= FUSE_HANDLE_KILLPRIV_V2;
		/* v2 replaces v1: the kernel then sends the kill flags */
		io->flags &= ~(uint32_t)FUSE_HANDLE_KILLPRIV;
		fs->killpriv_v2 = true;
	}
	if (fs->want_uring && !fs->kernel_uring)
		t3f_log(fs, "io_uring: the kernel does not offer it (Linux "
			"6.14 or later, with /sys/module/fuse/parameters/"
			"enable_uring on): requests go through /dev/fuse");
	if (fs->want_uring && fs->kernel_uring &&
	    iov[1].iov_len >= offsetof(struct fuse_init_out, max_pages) +
			      sizeof(uint16_t)) {
		io->flags |= FUSE_INIT_EXT;
		io->flags2 |= T3F_OVER_IO_URING_FLAGS2;
		/* the kernel's payload size: the largest of these */
		size_t pages = (size_t)io->max_pages *
			       (size_t)sysconf(_SC_PAGESIZE);
		size_t payload = io->max_write > 8192 ? io->max_write : 8192;
		fs->uring_payload = pages > payload ? pages : payload;
		fs->uring_asked = true;
	}
}

static ssize_t dev_writev(int fd, struct iovec *iov, int count,
			  void *userdata)
{
	struct t3f *fs = userdata;
	ssize_t n;
	if (t3f_uring_reply(iov, count, &n))
		return n;
	bool init = fs->init_unique != 0;
	if (init)
		patch_init_reply(fs, iov, count);
	n = writev(fd, iov, count);
	if (init && n >= 0 && fs->uring_asked && !fs->uring) {
		/* the kernel took the INIT reply: its queues wait */
		int err = t3f_uring_start(fs, fs->uring_payload);
		if (err)
			t3f_log(fs, "io_uring: cannot start: %s (requests "
				"go through /dev/fuse)", strerror(-err));
	}
	return n;
}

int t3f_kernel_io(struct t3f *fs)
{
	static const struct fuse_custom_io io = {
		.read = dev_read,
		.writev = dev_writev,
	};
	int fd = fuse_session_fd(fs->se);
	if (fd < 0)
		return -EBADF;
	return fuse_session_custom_io(fs->se, &io, fd);
}

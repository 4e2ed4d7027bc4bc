/*
 * The FUSE device as libfuse's custom I/O (fuse_session_custom_io), for
 * two things of the kernel protocol that libfuse 3.14 does not carry:
 *
 *  - FUSE_HANDLE_KILLPRIV_V2 in the INIT reply.  With it the kernel marks
 *    the mount SB_NOSEC and stops asking for security.capability before
 *    every write (a round trip per write(2)); in exchange this daemon
 *    clears set-user-ID and set-group-ID where the kernel tells it to:
 *  - the kill flags of a request, FUSE_WRITE_KILL_SUIDGID in a write and
 *    FATTR_KILL_SUIDGID in a setattr, which libfuse 3.14 drops.  They are
 *    noted when the request is read, for the thread that then processes
 *    it (serve.c reads and processes a request on the same thread), and
 *    asked for by fuse_ops.c with t3f_request_kills_suidgid.
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

/* What a request read from the device tells: the INIT's offer, the kill
 * flags of a write or setattr. */
static void note_request(struct t3f *fs, const void *buf, size_t len)
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
		note_request(userdata, buf, (size_t)n);
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
}

static ssize_t dev_writev(int fd, struct iovec *iov, int count,
			  void *userdata)
{
	struct t3f *fs = userdata;
	if (fs->init_unique)
		patch_init_reply(fs, iov, count);
	return writev(fd, iov, count);
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

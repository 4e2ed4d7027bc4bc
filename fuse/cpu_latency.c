/*
 * -o cpu_latency=USECS: a CPU wake-up latency request (the kernel's PM
 * QoS interface, /dev/cpu_dma_latency) held while requests arrive.
 *
 * Why: a FUSE request puts its caller to sleep until the reply.  When
 * the caller's CPU has nothing else to run it goes idle, and on virtual
 * machines whose kernel does not poll before halting an idle vCPU (guest
 * halt polling off, as on this project's test machines) the reply's
 * wake-up is an exit to the host and back, most of a round trip's cost.
 * A latency request of 0 makes idle CPUs poll instead of halting, so the
 * caller wakes at once.  The price is that idle CPUs burn power while it
 * is held, which is why it is an option, and why it is held only while
 * the daemon is busy: taken at the first request after a quiet spell,
 * given back after LATENCY_QUIET_MS without one.
 *
 * The request lives as long as the open file: closing it (or the
 * daemon's death) removes it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>
#include "tux3fuse.h"

/* no constraint: the kernel's PM_QOS_CPU_LATENCY_DEFAULT_VALUE */
#define LATENCY_NONE 2000000000

static bool latency_write(struct cpu_latency *l, int32_t us)
{
	/* four bytes: the binary form of the request's value */
	if (write(l->fd, &us, sizeof(us)) != sizeof(us)) {
		close(l->fd);	/* which removes the request */
		l->fd = -1;	/* the mount goes on without it */
		l->held = false;
		return false;
	}
	return true;
}

int cpu_latency_open(struct cpu_latency *l, unsigned us)
{
	l->fd = -1;
	l->held = false;
	if (us > LATENCY_NONE)
		return -EINVAL;
	l->us = (int32_t)us;
	l->fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
	return l->fd < 0 ? -errno : 0;
}

void cpu_latency_hold(struct cpu_latency *l)
{
	if (l->fd >= 0 && !l->held)
		l->held = latency_write(l, l->us);
}

void cpu_latency_release(struct cpu_latency *l)
{
	if (l->fd >= 0 && l->held && latency_write(l, LATENCY_NONE))
		l->held = false;
}

void cpu_latency_close(struct cpu_latency *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	l->held = false;
}

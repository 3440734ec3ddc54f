// SPDX-License-Identifier: GPL-2.0
/* What the test and benchmark tools share: see tool.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tool.h"

static void __attribute__((noreturn))
vdie(int code, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", program_invocation_short_name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	exit(code);
}

void netagg_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdie(NETAGG_EXIT_FAIL, fmt, ap);
}

void netagg_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdie(NETAGG_EXIT_USAGE, fmt, ap);
}

void *netagg_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p)
		netagg_die("out of memory");
	return p;
}

void netagg_pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		netagg_die("--cpu %d: sched_setaffinity: %s (is CPU %d online?)",
			   cpu, strerror(errno), cpu);
}

void netagg_rx_overflow(struct msghdr *mh, uint32_t *drops)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL)
			memcpy(drops, CMSG_DATA(c), sizeof(*drops));
}

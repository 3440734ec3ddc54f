// SPDX-License-Identifier: GPL-2.0
/* What the test and benchmark tools share: see tool.h. */
#define _GNU_SOURCE
#include <arpa/inet.h>
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

struct netagg_inet netagg_tool_addr(const char *what, const char *s)
{
	struct netagg_inet a = netagg_parse_inet(what, s);

	if (a.family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&a.v6))
		netagg_usage_error("invalid %s \"%s\" (an IPv4-mapped address:"
				   " give the IPv4 address)", what, s);
	return a;
}

const char *netagg_family_name(int family)
{
	return family == AF_INET6 ? "IPv6" : "IPv4";
}

bool netagg_inet_any(const struct netagg_inet *a)
{
	if (a->family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(&a->v6);
	return a->v4.s_addr == htonl(INADDR_ANY);
}

socklen_t netagg_sockaddr(union netagg_sockaddr *sa,
			  const struct netagg_inet *a, uint16_t port)
{
	memset(sa, 0, sizeof(*sa));
	if (a->family == AF_INET6) {
		sa->sin6.sin6_family = AF_INET6;
		sa->sin6.sin6_addr = a->v6;
		sa->sin6.sin6_port = htons(port);
		return sizeof(sa->sin6);
	}
	sa->sin.sin_family = AF_INET;
	sa->sin.sin_addr = a->v4;
	sa->sin.sin_port = htons(port);
	return sizeof(sa->sin);
}

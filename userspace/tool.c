// SPDX-License-Identifier: GPL-2.0
/* What the test and benchmark tools share: see tool.h. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netagg.h>
#include "tool.h"

void netagg_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

uint64_t netagg_parse_num(const char *opt, const char *s, uint64_t max)
{
	int base = (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? 16 : 10;
	unsigned long long v;
	char *end;

	/* strtoull alone would take "-1", " 1" and "" */
	if (!isxdigit((unsigned char)s[base == 16 ? 2 : 0]) ||
	    (base == 10 && !isdigit((unsigned char)s[0])))
		netagg_die("%s: \"%s\" is not a number", opt, s);
	errno = 0;
	v = strtoull(s, &end, base);
	if (*end)
		netagg_die("%s: \"%s\" is not a number", opt, s);
	if (errno == ERANGE || v > max)
		netagg_die("%s: %s is out of range (0-%" PRIu64 ")", opt, s, max);
	return v;
}

struct in_addr netagg_parse_addr(const char *opt, const char *s)
{
	struct in_addr in;

	if (inet_pton(AF_INET, s, &in) != 1)
		netagg_die("%s: invalid IPv4 address \"%s\"", opt, s);
	return in;
}

uint64_t netagg_parse_range(const char *opt, const char *s, uint64_t min,
			    uint64_t max)
{
	uint64_t v = netagg_parse_num(opt, s, UINT64_MAX);

	if (v < min || v > max)
		netagg_die("%s: %s is out of range (%" PRIu64 "-%" PRIu64 ")",
			   opt, s, min, max);
	return v;
}

uint8_t netagg_parse_dtype(const char *opt, const char *s)
{
	if (!strcmp(s, "f32"))
		return NETAGG_DTYPE_F32;
	if (!strcmp(s, "i32"))
		return NETAGG_DTYPE_I32;
	netagg_die("%s: \"%s\" is not f32 or i32", opt, s);
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

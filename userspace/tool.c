// SPDX-License-Identifier: GPL-2.0
/* What the test tools (netagg-send, netagg-fuzz) share: errors and values. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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

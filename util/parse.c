// SPDX-License-Identifier: GPL-2.0
/* The value parsers every netagg program shares: see parse.h. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netagg.h>

#include "parse.h"

const char *const netagg_dtype_names[] = {
	[NETAGG_DTYPE_F32] = "f32",
	[NETAGG_DTYPE_I32] = "i32",
	[NETAGG_DTYPE_F16] = "f16",
	[NETAGG_DTYPE_BF16] = "bf16",
};
const size_t netagg_dtype_count = sizeof(netagg_dtype_names) /
				  sizeof(netagg_dtype_names[0]);

enum { NUM_OK, NUM_NOT, NUM_OVERFLOW };

/* The number in s[0, len): decimal, or with @hex also 0x-prefixed. */
static int digits(const char *s, size_t len, bool hex, uint64_t *v)
{
	const char *set = "0123456789";
	int base = 10;
	char buf[32];

	if (hex && len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		set = "0123456789abcdefABCDEF";
		base = 16;
		s += 2;
		len -= 2;
	}
	/* strtoull alone would take "-1", " 1", "+1" and "" */
	if (!len || len >= sizeof(buf) || strspn(s, set) < len)
		return NUM_NOT;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	*v = strtoull(buf, NULL, base);
	return errno == ERANGE ? NUM_OVERFLOW : NUM_OK;
}

static void __attribute__((noreturn))
out_of_range(const char *what, const char *s, uint64_t min, uint64_t max)
{
	netagg_usage_error("%s %s is out of range (%" PRIu64 "-%" PRIu64 ")",
			   what, s, min, max);
}

uint64_t netagg_parse_num(const char *what, const char *s, uint64_t min,
			  uint64_t max)
{
	uint64_t v;

	switch (digits(s, strlen(s), true, &v)) {
	case NUM_NOT:
		netagg_usage_error("%s \"%s\" is not a number", what, s);
	case NUM_OVERFLOW:
		out_of_range(what, s, min, max);
	}
	if (v < min || v > max)
		out_of_range(what, s, min, max);
	return v;
}

uint64_t netagg_parse_size(const char *what, const char *s, uint64_t min,
			   uint64_t max)
{
	static const char suffixes[] = "KMG";
	size_t len = strlen(s);
	unsigned int shift = 0;
	const char *p;
	uint64_t v;

	if (len > 1 && (p = strchr(suffixes, toupper((unsigned char)s[len - 1])))) {
		shift = 10 * (p - suffixes + 1);
		len--;
	}
	switch (digits(s, len, false, &v)) {
	case NUM_NOT:
		netagg_usage_error("%s \"%s\" is not a size", what, s);
	case NUM_OVERFLOW:
		out_of_range(what, s, min, max);
	}
	if (v > (max >> shift) || (v << shift) < min)
		out_of_range(what, s, min, max);
	return v << shift;
}

struct in_addr netagg_parse_addr(const char *what, const char *s)
{
	struct in_addr in;

	if (inet_pton(AF_INET, s, &in) != 1)
		netagg_usage_error("invalid %s \"%s\" (not an IPv4 address)", what, s);
	return in;
}

struct in_addr netagg_parse_endpoint(const char *what, const char *s,
				     uint16_t *port)
{
	const char *colon = strchr(s, ':');
	char addr[INET_ADDRSTRLEN];

	*port = 0;
	if (!colon)
		return netagg_parse_addr(what, s);
	if ((size_t)(colon - s) >= sizeof(addr))
		netagg_usage_error("invalid %s \"%s\" (not ADDR or ADDR:PORT)", what, s);
	memcpy(addr, s, colon - s);
	addr[colon - s] = '\0';
	*port = netagg_parse_num("port", colon + 1, 1, UINT16_MAX);
	return netagg_parse_addr(what, addr);
}

struct netagg_inet netagg_parse_inet(const char *what, const char *s)
{
	struct netagg_inet a = { .family = AF_INET };
	char buf[INET6_ADDRSTRLEN];
	size_t len = strlen(s);

	if (inet_pton(AF_INET, s, &a.v4) == 1)
		return a;
	a.family = AF_INET6;
	if (len > 2 && s[0] == '[' && s[len - 1] == ']' && len - 2 < sizeof(buf)) {
		memcpy(buf, s + 1, len - 2);
		buf[len - 2] = '\0';
		s = buf;
	}
	if (inet_pton(AF_INET6, s, &a.v6) != 1)
		netagg_usage_error("invalid %s \"%s\" (not an IPv4 or IPv6 address)",
				   what, s);
	return a;
}

struct netagg_inet netagg_parse_inet_endpoint(const char *what, const char *s,
					      uint16_t *port)
{
	const char *colon = strrchr(s, ':'), *close = strchr(s, ']');
	char addr[INET6_ADDRSTRLEN + 2];

	*port = 0;
	/* A colon is a port's only after an IPv4 address or a bracket. */
	if (!colon || (s[0] == '[' ? !close || colon != close + 1 :
				     strchr(s, ':') != colon))
		return netagg_parse_inet(what, s);
	if ((size_t)(colon - s) >= sizeof(addr))
		netagg_usage_error("invalid %s \"%s\" (not ADDR, ADDR:PORT or [ADDR]:PORT)",
				   what, s);
	memcpy(addr, s, colon - s);
	addr[colon - s] = '\0';
	*port = netagg_parse_num("port", colon + 1, 1, UINT16_MAX);
	return netagg_parse_inet(what, addr);
}

const char *netagg_inet_str(const struct netagg_inet *a, char *buf)
{
	return inet_ntop(a->family, a->family == AF_INET6 ?
			 (const void *)&a->v6 : (const void *)&a->v4, buf,
			 INET6_ADDRSTRLEN);
}

unsigned int netagg_parse_name(const char *what, const char *s,
			       const char *const *names, size_t n, bool numbers)
{
	char list[96] = "";
	size_t last = n;

	if (numbers && isdigit((unsigned char)s[0]))
		return netagg_parse_num(what, s, 0, UINT8_MAX);
	for (size_t i = 0; i < n; i++) {
		if (!names[i])
			continue;
		if (!strcmp(s, names[i]))
			return i;
		last = i;
	}
	for (size_t i = 0; i < n; i++)
		if (names[i])
			snprintf(list + strlen(list), sizeof(list) - strlen(list),
				 "%s%s", !list[0] ? "" : i == last ? " or " : ", ",
				 names[i]);
	netagg_usage_error("unknown %s \"%s\" (%s)", what, s, list);
}

int netagg_getopt(int argc, char **argv, const char *shortopts,
		  const struct option *opts, char *name, size_t size)
{
	int opt, idx;

	opterr = 0;
	opt = getopt_long(argc, argv, shortopts, opts, &idx);
	snprintf(name, size, "--%s", opt >= NETAGG_OPT_LONG ? opts[idx].name : "");
	return opt;
}

void netagg_bad_option(char **argv, int opt)
{
	const char *word = argv[optind - 1];

	if (!strncmp(word, "--", 2)) {
		if (opt == ':')
			netagg_usage_error("option \"%s\" needs a value", word);
		netagg_usage_error("unknown option \"%s\" (see --help)", word);
	}
	if (opt == ':')
		netagg_usage_error("option \"-%c\" needs a value", optopt);
	netagg_usage_error("unknown option \"-%c\" (see --help)", optopt);
}

void netagg_no_operands(int argc, char **argv)
{
	if (optind < argc)
		netagg_usage_error("unexpected argument \"%s\"", argv[optind]);
}

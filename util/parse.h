/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The value parsers of every netagg program: numbers, sizes, IPv4 and IPv6
 * addresses and names from a table. A value that does not parse is a usage
 * error, reported through netagg_usage_error() with a message that names
 * the value as the caller calls it (@what: "JID", "--count").
 */
#ifndef NETAGG_PARSE_H
#define NETAGG_PARSE_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Each program defines it: say "PROGRAM: message" and exit with
 * NETAGG_EXIT_USAGE, or (the CLI in batch mode) give up only the line.
 */
void __attribute__((noreturn, format(printf, 1, 2)))
netagg_usage_error(const char *fmt, ...);

/* A decimal or 0x-prefixed hexadecimal number in [min, max]. */
uint64_t netagg_parse_num(const char *what, const char *s, uint64_t min,
			  uint64_t max);
/* A decimal number of bytes with an optional binary K, M or G suffix. */
uint64_t netagg_parse_size(const char *what, const char *s, uint64_t min,
			   uint64_t max);
struct in_addr netagg_parse_addr(const char *what, const char *s);
/* "ADDR" (*@port set to 0) or "ADDR:PORT" (1-65535). */
struct in_addr netagg_parse_endpoint(const char *what, const char *s,
				     uint16_t *port);

/* An IPv4 or an IPv6 address. */
struct netagg_inet {
	int family;		/* AF_INET or AF_INET6 */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	};
};

/* An IPv4 address, or an IPv6 one, bracketed ("[2001:db8::1]") or not. */
struct netagg_inet netagg_parse_inet(const char *what, const char *s);
/*
 * netagg_parse_inet()'s, or with a port (1-65535): "ADDR:PORT",
 * "[IPV6ADDR]:PORT". *@port is 0 without one.
 */
struct netagg_inet netagg_parse_inet_endpoint(const char *what, const char *s,
					      uint16_t *port);
/* @a as text (IPv6 ones bare), in @buf of INET6_ADDRSTRLEN bytes. */
const char *netagg_inet_str(const struct netagg_inet *a, char *buf);
/*
 * The index of @s in @names (NULL entries are gaps); with @numbers, also
 * any number up to 255, passed as is for the kernel (or a test) to judge,
 * like iproute2. Unknown names get the list of known ones.
 */
unsigned int netagg_parse_name(const char *what, const char *s,
			       const char *const *names, size_t n,
			       bool numbers);

/*
 * getopt_long() for a program's option loop, errors worded by the program
 * (opterr 0; ':' first in @shortopts). Long options without a short form
 * have codes from NETAGG_OPT_LONG up; for those @name gets the option as
 * spelt, "--count", for messages (else "").
 */
#define NETAGG_OPT_LONG	256
struct option;
int netagg_getopt(int argc, char **argv, const char *shortopts,
		  const struct option *opts, char *name, size_t size);
/*
 * What getopt_long() could not take (called with opterr 0 and ':' first in
 * its option string): @opt ':' is an option without its value, anything
 * else an unknown one. Names the option as typed: "--long" whole, "-x"
 * alone even out of "-jx".
 */
void __attribute__((noreturn)) netagg_bad_option(char **argv, int opt);
/* After the options: a program that takes no operands refuses the first. */
void netagg_no_operands(int argc, char **argv);

/* The element types' names, indexed by enum netagg_dtype. */
extern const char *const netagg_dtype_names[];
extern const size_t netagg_dtype_count;

#endif /* NETAGG_PARSE_H */

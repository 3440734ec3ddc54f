/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the test and benchmark tools (netagg-send, netagg-fuzz, netagg-blast,
 * netagg-uagg, netagg-bench-core, netagg-badmsg) share beyond the product's
 * parsers (parse.h) and output layer (output.h): errors, addresses and small
 * chores.
 */
#ifndef NETAGG_TOOL_H
#define NETAGG_TOOL_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "exitcode.h"
#include "parse.h"

/*
 * "PROGRAM: message" on stderr, then exit NETAGG_EXIT_FAIL; a wrong command
 * line is netagg_usage_error()'s (parse.h), which tool.c defines for them.
 */
void __attribute__((noreturn, format(printf, 1, 2)))
netagg_die(const char *fmt, ...);

/* calloc(), or die saying the memory ran out. */
void *netagg_xcalloc(size_t n, size_t size);
/* Run on CPU @cpu only (a --cpu option), or die saying why not. */
void netagg_pin_cpu(int cpu);
/*
 * The socket's SO_RXQ_OVFL drop count into *drops, if @mh carries one. It
 * is cumulative: read it from the last message of a batch.
 */
void netagg_rx_overflow(struct msghdr *mh, uint32_t *drops);

/*
 * An address a tool sends to or from: netagg_parse_inet()'s (IPv4, or IPv6
 * bracketed or not), but never an IPv4-mapped IPv6 one, which a socket
 * would send as IPv4 (give the IPv4 address). A usage error names @what.
 */
struct netagg_inet netagg_tool_addr(const char *what, const char *s);
/* "IPv4" or "IPv6", for messages. */
const char *netagg_family_name(int family);
/* Whether @a is the unspecified address of its family (0.0.0.0, ::). */
bool netagg_inet_any(const struct netagg_inet *a);

/* A socket address of either family, for bind(), connect() and sendto(). */
union netagg_sockaddr {
	struct sockaddr sa;
	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;
};

/* @a and @port (host order) into *@sa; returns the length to pass with it. */
socklen_t netagg_sockaddr(union netagg_sockaddr *sa,
			  const struct netagg_inet *a, uint16_t port);

#endif /* NETAGG_TOOL_H */

/* SPDX-License-Identifier: GPL-2.0 */
/* What the test tools (netagg-send, netagg-fuzz) share: errors and values. */
#ifndef NETAGG_TOOL_H
#define NETAGG_TOOL_H

#include <netinet/in.h>
#include <stdint.h>

/* "PROGRAM: message" on stderr, then exit 1. */
void __attribute__((noreturn, format(printf, 1, 2)))
netagg_die(const char *fmt, ...);

/*
 * A decimal or 0x-prefixed hexadecimal number of at most @max, or an IPv4
 * address; @opt is the option as the user spelled it, for the error.
 */
uint64_t netagg_parse_num(const char *opt, const char *s, uint64_t max);
struct in_addr netagg_parse_addr(const char *opt, const char *s);

#endif /* NETAGG_TOOL_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the test and benchmark tools (netagg-send, netagg-fuzz, netagg-blast,
 * netagg-uagg, netagg-bench-core) share: errors, values, small chores.
 */
#ifndef NETAGG_TOOL_H
#define NETAGG_TOOL_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* "PROGRAM: message" on stderr, then exit 1. */
void __attribute__((noreturn, format(printf, 1, 2)))
netagg_die(const char *fmt, ...);

/*
 * A decimal or 0x-prefixed hexadecimal number of at most @max, or an IPv4
 * address; @opt is the option as the user spelled it, for the error.
 */
uint64_t netagg_parse_num(const char *opt, const char *s, uint64_t max);
struct in_addr netagg_parse_addr(const char *opt, const char *s);
/* A number in [min, max]: netagg_parse_num() knows no lower bound. */
uint64_t netagg_parse_range(const char *opt, const char *s, uint64_t min,
			    uint64_t max);
/* "f32" or "i32": NETAGG_DTYPE_F32 or NETAGG_DTYPE_I32. */
uint8_t netagg_parse_dtype(const char *opt, const char *s);

/* calloc(), or die saying the memory ran out. */
void *netagg_xcalloc(size_t n, size_t size);
/* Run on CPU @cpu only (a --cpu option), or die saying why not. */
void netagg_pin_cpu(int cpu);
/*
 * The socket's SO_RXQ_OVFL drop count into *drops, if @mh carries one. It
 * is cumulative: read it from the last message of a batch.
 */
void netagg_rx_overflow(struct msghdr *mh, uint32_t *drops);

#endif /* NETAGG_TOOL_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the test and benchmark tools (netagg-send, netagg-fuzz, netagg-blast,
 * netagg-uagg, netagg-bench-core, netagg-badmsg) share beyond the product's
 * parsers (parse.h) and output layer (output.h): errors and small chores.
 */
#ifndef NETAGG_TOOL_H
#define NETAGG_TOOL_H

#include <netinet/in.h>
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

#endif /* NETAGG_TOOL_H */

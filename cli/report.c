// SPDX-License-Identifier: GPL-2.0
/*
 * How the netagg CLI reports what went wrong, on stderr: usage errors
 * (exit code 2, or back to the batch loop), failures outside the command
 * line (exit code 1), and in batch mode the line each is about.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "exitcode.h"
#include "parse.h"

/* The batch's line being run (0 outside batch mode), and where a usage
 * error goes back to: the batch loop, which reports it and, with -force,
 * goes on with the next line.
 */
static unsigned long lineno;
static jmp_buf *usage_jmp;

void netagg_report_line(unsigned long line)
{
	lineno = line;
}

void netagg_report_jump(jmp_buf *env)
{
	usage_jmp = env;
}

/* In batch mode every message to stderr first says which line it is about. */
void netagg_line_prefix(void)
{
	if (lineno)
		fprintf(stderr, "netagg: line %lu: ", lineno);
}

void netagg_usage_error(const char *fmt, ...)
{
	va_list ap;

	if (lineno)
		netagg_line_prefix();
	else
		fputs("netagg: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (usage_jmp)
		longjmp(*usage_jmp, 1);
	exit(NETAGG_EXIT_USAGE);
}

/* They end a batch even with -force: no memory or no socket (no module)
 * would fail the next lines too.
 */
void netagg_fatal(const char *msg)
{
	netagg_line_prefix();
	fprintf(stderr, "Error: %s\n", msg);
	exit(NETAGG_EXIT_FAIL);
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The KTAP lines of the library's test programs (libcheck.c,
 * libcheck-old.c): one line per check, numbered, and the count of those
 * that failed for the exit code.
 */
#ifndef NETAGG_TEST_KTAP_H
#define NETAGG_TEST_KTAP_H

#include <stdio.h>
#include <string.h>

static int n, failed;

static void ok(int cond, const char *what)
{
	printf("%sok %d %s\n", cond ? "" : "not ", ++n, what);
	failed += !cond;
}

/* A library message that says @want. */
static int says(const char *got, const char *want)
{
	return got && strstr(got, want);
}

#endif

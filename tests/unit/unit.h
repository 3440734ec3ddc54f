/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the native unit tests share: KTAP results with their mismatches
 * counted and the first few printed, checks, a reproducible random source, and
 * float32 bit patterns.
 */
#ifndef _NETAGG_UNIT_H
#define _NETAGG_UNIT_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "reduce_deps.h"

#define MAX_REPORT	5	/* mismatches printed per test */

static unsigned int passed, failed, skipped;
static unsigned long bad;	/* mismatches in the current test */

/* "ok N what" or "not ok N what (M mismatches)"; the next test starts. */
static inline __attribute__((format(printf, 1, 2))) void result(const char *fmt, ...)
{
	va_list ap;

	printf("%s %u ", bad ? "not ok" : "ok", passed + failed + skipped + 1);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (bad)
		printf(" (%lu mismatches)", bad);
	putchar('\n');
	fflush(stdout);
	if (bad)
		failed++;
	else
		passed++;
	bad = 0;
}

static inline __attribute__((format(printf, 1, 2))) void mismatch(const char *fmt, ...)
{
	va_list ap;

	if (bad++ >= MAX_REPORT)
		return;
	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* Tests made of CHECK()s: each counted, a failed one a mismatch. */
static unsigned long checked;

#define CHECK(cond, ...) do {			\
	checked++;				\
	if (!(cond))				\
		mismatch(__VA_ARGS__);		\
} while (0)

/* The current test's result, with its checks counted. */
static inline void done(const char *what)
{
	result("%s (%lu checks)", what, checked);
	checked = 0;
}

/* xorshift64*: fast, and good enough to pick bit patterns */
static u64 rng_state = 0x9e3779b97f4a7c15ull;

static inline u64 rnd64(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static inline u32 rnd32(void)
{
	return rnd64() >> 32;
}

static inline u32 f2u(float f)
{
	u32 u;

	memcpy(&u, &f, 4);
	return u;
}

static inline float u2f(u32 u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static inline int is_nan(u32 x)
{
	return (x & 0x7fffffff) > 0x7f800000;
}

#endif /* _NETAGG_UNIT_H */

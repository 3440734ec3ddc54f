// SPDX-License-Identifier: GPL-2.0
/*
 * Native unit tests of kmod/half.h, the float16 and bfloat16 conversions,
 * against references computed another way: the compiler's _Float16 (GCC's
 * soft-fp conversions, round to nearest even) for float16, and exact
 * arithmetic in double for bfloat16. Widening: all 65,536 inputs of each
 * type. Narrowing: every value of the narrow type and, around each, the
 * float32 values that decide its rounding (the midpoints to its
 * neighbours, one ulp either side of them, one ulp either side of the
 * value), then random bit patterns. A NaN must give a NaN of its sign,
 * quiet; everything else the reference's bits.
 *
 * Output: KTAP under the plan 1..HALF_CASES, then "# half: P passed, F
 * failed, 0 skipped"; exit status 1 if anything failed.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "half.h"

#define HALF_CASES	6
#define RANDOM		20000000
#define MAX_REPORT	5

static unsigned int passed, failed;
static unsigned long bad, checked;

static void result(const char *what)
{
	printf("%s %u %s (%lu values)", bad ? "not ok" : "ok", passed + failed + 1, what,
	       checked);
	if (bad)
		printf(", %lu mismatches", bad);
	putchar('\n');
	fflush(stdout);
	if (bad)
		failed++;
	else
		passed++;
	bad = checked = 0;
}

static void mismatch(const char *fmt, ...)
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

static u32 bits_of(float f)
{
	u32 u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static float float_of(u32 u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

static bool f32_nan(u32 f)
{
	return (f & 0x7fffffff) > 0x7f800000;
}

/* xorshift64*: reproducible random bit patterns. */
static u32 next_random(void)
{
	static u64 s = 0x9e3779b97f4a7c15ULL;

	s ^= s >> 12;
	s ^= s << 25;
	s ^= s >> 27;
	return (s * 0x2545f4914f6cdd1dULL) >> 32;
}

static u32 ref_f16_to_f32(u16 h)
{
	_Float16 v;

	memcpy(&v, &h, sizeof(v));
	return bits_of((float)v);
}

static u16 ref_f32_to_f16(u32 f)
{
	_Float16 v = (_Float16)float_of(f);
	u16 h;

	memcpy(&h, &v, sizeof(h));
	return h;
}

/* The value of a bfloat16, computed from its fields in double. */
static double bf16_value(u16 b)
{
	int exp = (b >> 7) & 0xff, man = b & 0x7f;
	double v = exp ? ldexp(1.0 + man / 128.0, exp - 127) : ldexp(man / 128.0, -126);

	return (b & 0x8000) ? -v : v;
}

/*
 * float32 to bfloat16 by exact arithmetic: of the two bfloat16 around the
 * value (truncated, and the next one away from zero), the nearer, the even
 * one on a tie; infinity past the largest finite as IEEE rounds (at or
 * above its value plus half an ulp).
 */
static u16 ref_f32_to_bf16(u32 f)
{
	u16 lo = f >> 16, hi = lo + 1;
	double v = float_of(f), dl, dh;

	if ((f & 0x7fffffff) == 0x7f800000 || (lo & 0x7fff) == 0x7f7f) {
		/* hi would be infinity: compare with the half-ulp boundary. */
		double max = bf16_value(0x7f7f), ulp = ldexp(1.0, 127 - 7);

		if (isinf(v) || fabs(v) >= max + ulp / 2)
			return (f & 0x80000000) ? 0xff80 : 0x7f80;
		if (fabs(v) == max + ulp / 2)
			return (f & 0x80000000) ? 0xff80 : 0x7f80;
		return lo;
	}
	dl = fabs(v - bf16_value(lo));
	dh = fabs(bf16_value(hi) - v);
	if (dl < dh || (dl == dh && !(lo & 1)))
		return lo;
	return hi;
}

static void check_f16(u32 f)
{
	u16 got = netagg_f32_to_f16(f), want = ref_f32_to_f16(f);

	checked++;
	if (f32_nan(f)) {
		if ((got & 0x7c00) != 0x7c00 || !(got & 0x3ff) || !(got & 0x200) ||
		    (got & 0x8000) != ((f >> 16) & 0x8000))
			mismatch("f32 %08x (NaN) -> f16 %04x: not a quiet NaN of its sign", f, got);
		return;
	}
	if (got != want)
		mismatch("f32 %08x (%.9g) -> f16 %04x, want %04x", f, float_of(f), got, want);
}

static void check_bf16(u32 f)
{
	u16 got = netagg_f32_to_bf16(f), want;

	checked++;
	if (f32_nan(f)) {
		if ((got & 0x7f80) != 0x7f80 || !(got & 0x7f) || !(got & 0x40) ||
		    (got & 0x8000) != ((f >> 16) & 0x8000))
			mismatch("f32 %08x (NaN) -> bf16 %04x: not a quiet NaN of its sign", f, got);
		return;
	}
	want = ref_f32_to_bf16(f);
	if (got != want)
		mismatch("f32 %08x (%.9g) -> bf16 %04x, want %04x", f, float_of(f), got, want);
}

/*
 * The float32 values that decide how @w (a narrow value widened) rounds:
 * it, its neighbours, the midpoints to the next narrow values (@up and
 * @down, widened) and their neighbours.
 */
static void around(u32 w, u32 up, u32 down, void (*check)(u32))
{
	u32 mids[2], i;
	int d;

	mids[0] = bits_of((float)(((double)float_of(w) + float_of(up)) / 2));
	mids[1] = bits_of((float)(((double)float_of(w) + float_of(down)) / 2));
	for (d = -1; d <= 1; d++)
		check(w + d);
	for (i = 0; i < 2; i++)
		for (d = -1; d <= 1; d++)
			check(mids[i] + d);
}

int main(void)
{
	u32 h, f, i;

	printf("KTAP version 1\n1..%d\n", HALF_CASES);

	for (h = 0; h < 0x10000; h++) {
		u32 got = netagg_f16_to_f32(h), want = ref_f16_to_f32(h);

		checked++;
		if ((f32_nan(want) && (!f32_nan(got) || !(got & NETAGG_F32_QUIET) ||
				       (got ^ want) & 0x80000000)) ||
		    (!f32_nan(want) && got != want))
			mismatch("f16 %04x -> f32 %08x, want %08x", h, got, want);
	}
	result("float16 to float32: all 65536 inputs, exact (NaNs: quiet, sign kept)");

	for (h = 0; h < 0x10000; h++) {
		u32 w = netagg_f16_to_f32(h);

		if ((h & 0x7c00) == 0x7c00) {
			check_f16(w);
			continue;
		}
		/* The neighbours in magnitude; past the largest, infinity. */
		around(w, (h & 0x7fff) == 0x7bff ? (w | 0x7f800000) : netagg_f16_to_f32(h + 1),
		       (h & 0x7fff) ? netagg_f16_to_f32(h - 1) : (w ^ 0x80000000), check_f16);
	}
	result("float32 to float16: every float16 value, the midpoints around it, one ulp either side");

	for (i = 0; i < RANDOM; i++)
		check_f16(next_random());
	result("float32 to float16: random bit patterns");

	for (h = 0; h < 0x10000; h++) {
		u32 got = netagg_bf16_to_f32(h);
		double want = bf16_value(h);

		checked++;
		if ((h & 0x7f80) == 0x7f80) {
			if ((h & 0x7f) ? !f32_nan(got) || (got >> 16) != h
				       : got != ((u32)(h & 0x8000) << 16 | 0x7f800000))
				mismatch("bf16 %04x -> f32 %08x: not the same infinity or NaN", h, got);
		} else if (float_of(got) != want || (got >> 31) != (u32)(h >> 15)) {
			mismatch("bf16 %04x -> f32 %08x (%.9g), want %.9g", h, got, float_of(got), want);
		}
	}
	result("bfloat16 to float32: all 65536 inputs, exact");

	for (h = 0; h < 0x10000; h++) {
		u32 w = netagg_bf16_to_f32(h);

		if ((h & 0x7f80) == 0x7f80) {
			check_bf16(w);
			continue;
		}
		around(w, (h & 0x7fff) == 0x7f7f ? (w | 0x7f800000) : netagg_bf16_to_f32(h + 1),
		       (h & 0x7fff) ? netagg_bf16_to_f32(h - 1) : (w ^ 0x80000000), check_bf16);
	}
	result("float32 to bfloat16: every bfloat16 value, the midpoints around it, one ulp either side");

	for (i = 0; i < RANDOM; i++) {
		f = next_random();
		check_bf16(f);
	}
	result("float32 to bfloat16: random bit patterns");

	printf("# half: %u passed, %u failed, 0 skipped\n", passed, failed);
	return failed ? 1 : 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Native unit tests of core/half.h, the float16 and bfloat16 conversions,
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
#include <stdio.h>
#include <string.h>
#include "half.h"
#include "unit.h"

#define HALF_CASES	6
#define RANDOM		20000000

static u32 ref_f16_to_f32(u16 h)
{
	_Float16 v;

	memcpy(&v, &h, sizeof(v));
	return f2u((float)v);
}

static u16 ref_f32_to_f16(u32 f)
{
	_Float16 v = (_Float16)u2f(f);
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
	double v = u2f(f), dl, dh;

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
	if (is_nan(f)) {
		if ((got & 0x7c00) != 0x7c00 || !(got & 0x3ff) || !(got & 0x200) ||
		    (got & 0x8000) != ((f >> 16) & 0x8000))
			mismatch("f32 %08x (NaN) -> f16 %04x: not a quiet NaN of its sign", f, got);
		return;
	}
	if (got != want)
		mismatch("f32 %08x (%.9g) -> f16 %04x, want %04x", f, u2f(f), got, want);
}

static void check_bf16(u32 f)
{
	u16 got = netagg_f32_to_bf16(f), want;

	checked++;
	if (is_nan(f)) {
		if ((got & 0x7f80) != 0x7f80 || !(got & 0x7f) || !(got & 0x40) ||
		    (got & 0x8000) != ((f >> 16) & 0x8000))
			mismatch("f32 %08x (NaN) -> bf16 %04x: not a quiet NaN of its sign", f, got);
		return;
	}
	want = ref_f32_to_bf16(f);
	if (got != want)
		mismatch("f32 %08x (%.9g) -> bf16 %04x, want %04x", f, u2f(f), got, want);
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

	mids[0] = f2u((float)(((double)u2f(w) + u2f(up)) / 2));
	mids[1] = f2u((float)(((double)u2f(w) + u2f(down)) / 2));
	for (d = -1; d <= 1; d++)
		check(w + d);
	for (i = 0; i < 2; i++)
		for (d = -1; d <= 1; d++)
			check(mids[i] + d);
}

/*
 * Narrowing around every value of a narrow type (@widen its widening, @inf
 * its exponent mask): infinities and NaNs as they are, every finite value
 * with its neighbours in magnitude (past the largest, infinity).
 */
static void every_value(u32 (*widen)(u16), u32 inf, void (*check)(u32))
{
	u32 h, w;

	for (h = 0; h < 0x10000; h++) {
		w = widen(h);
		if ((h & inf) == inf) {
			check(w);
			continue;
		}
		around(w, (h & 0x7fff) == inf - 1 ? (w | 0x7f800000) : widen(h + 1),
		       (h & 0x7fff) ? widen(h - 1) : (w ^ 0x80000000), check);
	}
}

int main(void)
{
	u32 h, i;

	printf("KTAP version 1\n1..%d\n", HALF_CASES);

	for (h = 0; h < 0x10000; h++) {
		u32 got = netagg_f16_to_f32(h), want = ref_f16_to_f32(h);

		checked++;
		if ((is_nan(want) && (!is_nan(got) || !(got & NETAGG_F32_QUIET) ||
				       (got ^ want) & 0x80000000)) ||
		    (!is_nan(want) && got != want))
			mismatch("f16 %04x -> f32 %08x, want %08x", h, got, want);
	}
	done("float16 to float32: all 65536 inputs, exact (NaNs: quiet, sign kept)");

	every_value(netagg_f16_to_f32, 0x7c00, check_f16);
	done("float32 to float16: every float16 value, the midpoints around it, one ulp either side");

	for (i = 0; i < RANDOM; i++)
		check_f16(rnd32());
	done("float32 to float16: random bit patterns");

	for (h = 0; h < 0x10000; h++) {
		u32 got = netagg_bf16_to_f32(h);
		double want = bf16_value(h);

		checked++;
		if ((h & 0x7f80) == 0x7f80) {
			if ((h & 0x7f) ? !is_nan(got) || (got >> 16) != h
				       : got != ((u32)(h & 0x8000) << 16 | 0x7f800000))
				mismatch("bf16 %04x -> f32 %08x: not the same infinity or NaN", h, got);
		} else if (u2f(got) != want || (got >> 31) != (u32)(h >> 15)) {
			mismatch("bf16 %04x -> f32 %08x (%.9g), want %.9g", h, got, u2f(got), want);
		}
	}
	done("bfloat16 to float32: all 65536 inputs, exact");

	every_value(netagg_bf16_to_f32, 0x7f80, check_bf16);
	done("float32 to bfloat16: every bfloat16 value, the midpoints around it, one ulp either side");

	for (i = 0; i < RANDOM; i++)
		check_bf16(rnd32());
	done("float32 to bfloat16: random bit patterns");

	printf("# half: %u passed, %u failed, 0 skipped\n", passed, failed);
	return failed ? 1 : 0;
}

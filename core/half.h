/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * IEEE binary16 (float16) and bfloat16 to and from binary32, on bit
 * patterns: integer code only, so usable where the FPU is not (softirq
 * outside kernel_fpu_begin()), and the same in the native unit tests.
 *
 * Widening is exact. Narrowing rounds to nearest, ties to even, as IEEE
 * 754's default and the hardware (F16C, AVX512-BF16) do: a value too large
 * becomes an infinity, one too small a (signed) zero. Infinities stay
 * infinite; a NaN stays a NaN of its sign, quieted, the high bits of its
 * payload kept (what x86's conversions give).
 */
#ifndef _NETAGG_HALF_H
#define _NETAGG_HALF_H

#include "reduce_deps.h"

#define NETAGG_F32_QUIET	0x00400000U

static inline u32 netagg_f16_to_f32(u16 h)
{
	u32 sign = (u32)(h & 0x8000) << 16;
	u32 exp = (h >> 10) & 0x1f;
	u32 man = h & 0x3ff;

	if (exp == 0x1f)
		return sign | 0x7f800000 | (man ? NETAGG_F32_QUIET | man << 13 : 0);
	if (exp)
		return sign | (exp + 127 - 15) << 23 | man << 13;
	if (!man)
		return sign;
	/* Subnormal, man x 2^-24: shift the leading one into place. */
	exp = 127 - 14;
	do {
		man <<= 1;
		exp--;
	} while (!(man & 0x400));
	return sign | exp << 23 | (man & 0x3ff) << 13;
}

/*
 * @m shifted right by @s (1 to 31), rounded to nearest, ties to even: the
 * bits shifted out against half the last place kept.
 */
static inline u32 netagg_shift_rne(u32 m, unsigned int s)
{
	u32 rest = m & ((1U << s) - 1), half = 1U << (s - 1);

	m >>= s;
	if (rest > half || (rest == half && (m & 1)))
		m++;
	return m;
}

static inline u16 netagg_f32_to_f16(u32 f)
{
	u16 sign = (f >> 16) & 0x8000;
	int exp = (f >> 23) & 0xff;
	u32 man = f & 0x7fffff;

	if (exp == 0xff)
		return sign | 0x7c00 | (man ? 0x200 | man >> 13 : 0);
	exp -= 127 - 15;
	/* 65520 and above round to infinity: the carry below gets there. */
	if (exp >= 0x1f)
		return sign | 0x7c00;
	if (exp > 0)
		/* A mantissa carry moves into the exponent, up to infinity. */
		return sign | netagg_shift_rne((u32)exp << 23 | man, 13);
	/* Subnormal or zero: (1.man) x 2^(exp - 15) in units of 2^-24. */
	if (exp < -10)
		return sign;	/* below half of 2^-24, or f32 subnormal */
	return sign | netagg_shift_rne(man | 0x800000, 14 - exp);
}

static inline u32 netagg_bf16_to_f32(u16 b)
{
	return (u32)b << 16;
}

static inline u16 netagg_f32_to_bf16(u32 f)
{
	if ((f & 0x7fffffff) > 0x7f800000)
		return (f >> 16) | (NETAGG_F32_QUIET >> 16);
	/* Infinity stays; the largest finite values round up to it. */
	return netagg_shift_rne(f, 16);
}

#endif /* _NETAGG_HALF_H */

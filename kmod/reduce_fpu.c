// SPDX-License-Identifier: GPL-2.0
/*
 * The SSE versions of the float reductions: the one object built with FP
 * code enabled (see Kbuild). In the kernel it runs only between
 * kernel_fpu_begin() and kernel_fpu_end(), which netagg_sum() and
 * netagg_scale() in reduce.c provide; it must include nothing that could
 * pull FP code into other objects or kernel FPU state handling into this one.
 *
 * Elements are loaded and stored with 4-byte memcpy()s: the source is an
 * skb payload with no alignment at all, and a float * would let the compiler
 * assume 4-byte alignment (and, vectorising, maybe peel to 16 and use
 * aligned SSE loads). The memcpy()s compile to plain or movups loads.
 */

#include "reduce.h"

void netagg_reduce_f32_fpu(void *dst, const void *src, unsigned int n)
{
	const u8 *s = src;
	u8 *d = dst;
	float a, b;
	size_t i;	/* not unsigned int: 4 * i must not wrap, to vectorise */

	for (i = 0; i < n; i++) {
		__builtin_memcpy(&a, d + 4 * i, 4);
		__builtin_memcpy(&b, s + 4 * i, 4);
		a += b;
		__builtin_memcpy(d + 4 * i, &a, 4);
	}
}

void netagg_div_f32_fpu(void *dst, unsigned int n, u32 divisor)
{
	float a, f = divisor;	/* exact: divisor < 2^24 */
	u8 *d = dst;
	size_t i;

	/* A true division: multiplying by 1/f would round twice. */
	for (i = 0; i < n; i++) {
		__builtin_memcpy(&a, d + 4 * i, 4);
		a /= f;
		__builtin_memcpy(d + 4 * i, &a, 4);
	}
}

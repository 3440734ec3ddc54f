// SPDX-License-Identifier: GPL-2.0
/*
 * The vector reductions, SSE2 and AVX2: the one object built with FP code
 * enabled (see Kbuild). In the kernel it runs only between
 * kernel_fpu_begin() and kernel_fpu_end(), which reduce.c provides; it must
 * include nothing that could pull FP code into other objects or kernel FPU
 * state handling into this one.
 *
 * GCC vector types rather than <immintrin.h>, which the kernel cannot
 * include: the code is the same for both widths, and the AVX2 functions are
 * the same code compiled for that target. Vectors are loaded and stored
 * with memcpy()s, which compile to unaligned moves (movups, vmovups): a
 * source is an skb payload with no alignment at all, and a vector pointer
 * would let the compiler assume the vector's alignment.
 *
 * The float code adds (and divides) lane by lane with addps/divps, which
 * round each lane exactly as addss/divss do: every implementation gives the
 * same bits.
 */

#include "reduce.h"

/* v from or to element i of p (a u8 *), unaligned, whatever v's size. */
#define NETAGG_VLOAD(v, p, i)	__builtin_memcpy(&(v), (p) + 4 * (i), sizeof(v))
#define NETAGG_VSTORE(p, i, v)	__builtin_memcpy((p) + 4 * (i), &(v), sizeof(v))

/*
 * dst = a + b. Four vectors a step, all loaded before any is stored:
 * independent adds keep the units busy while the loads stream. Then one
 * vector at a time, then the elements left one at a time. @a may be @dst
 * itself (a sum in place): each step reads its elements before it writes
 * them. Unsigned integers wrap instead of overflowing.
 */
#define NETAGG_DEFINE_REDUCE(name, elem, width, target)			\
target void name(void *dst, const void *a, const void *b,		\
		 unsigned int n)					\
{									\
	elem __attribute__((vector_size(width))) a0, a1, a2, a3;	\
	elem __attribute__((vector_size(width))) b0, b1, b2, b3;	\
	const unsigned int lanes = width / sizeof(elem);		\
	const u8 *pa = a, *pb = b;					\
	u8 *d = dst;							\
	unsigned int i;							\
	elem x, y;							\
									\
	for (i = 0; i + 4 * lanes <= n; i += 4 * lanes) {		\
		NETAGG_VLOAD(a0, pa, i);				\
		NETAGG_VLOAD(a1, pa, i + lanes);			\
		NETAGG_VLOAD(a2, pa, i + 2 * lanes);			\
		NETAGG_VLOAD(a3, pa, i + 3 * lanes);			\
		NETAGG_VLOAD(b0, pb, i);				\
		NETAGG_VLOAD(b1, pb, i + lanes);			\
		NETAGG_VLOAD(b2, pb, i + 2 * lanes);			\
		NETAGG_VLOAD(b3, pb, i + 3 * lanes);			\
		a0 += b0;						\
		a1 += b1;						\
		a2 += b2;						\
		a3 += b3;						\
		NETAGG_VSTORE(d, i, a0);				\
		NETAGG_VSTORE(d, i + lanes, a1);			\
		NETAGG_VSTORE(d, i + 2 * lanes, a2);			\
		NETAGG_VSTORE(d, i + 3 * lanes, a3);			\
	}								\
	for (; i + lanes <= n; i += lanes) {				\
		NETAGG_VLOAD(a0, pa, i);				\
		NETAGG_VLOAD(b0, pb, i);				\
		a0 += b0;						\
		NETAGG_VSTORE(d, i, a0);				\
	}								\
	for (; i < n; i++) {						\
		NETAGG_VLOAD(x, pa, i);					\
		NETAGG_VLOAD(y, pb, i);					\
		x += y;							\
		NETAGG_VSTORE(d, i, x);					\
	}								\
}

/* A true division: multiplying by 1 / divisor would round twice. */
#define NETAGG_DEFINE_DIV(name, width, target)				\
target void name(void *dst, unsigned int n, u32 divisor)		\
{									\
	float __attribute__((vector_size(width))) a;			\
	const unsigned int lanes = width / sizeof(float);		\
	const float f = divisor;	/* exact: divisor < 2^24 */	\
	u8 *d = dst;							\
	unsigned int i;							\
	float x;							\
									\
	for (i = 0; i + lanes <= n; i += lanes) {			\
		NETAGG_VLOAD(a, d, i);					\
		a /= f;							\
		NETAGG_VSTORE(d, i, a);					\
	}								\
	for (; i < n; i++) {						\
		NETAGG_VLOAD(x, d, i);					\
		x /= f;							\
		NETAGG_VSTORE(d, i, x);					\
	}								\
}

/*
 * @len bytes of @src into each of the @n buffers of @dst: the source is
 * read once, four vectors a step, and stored to every buffer from the
 * registers. Then one vector at a time, then the last vector of the buffer
 * (what it overlaps is written again with the same bytes), or the bytes of
 * a buffer shorter than a vector.
 */
#define NETAGG_DEFINE_BROADCAST(name, width, target)			\
target void name(void *const *dst, unsigned int n, const void *src,	\
		 unsigned int len)					\
{									\
	u8 __attribute__((vector_size(width))) v0, v1, v2, v3;		\
	const u8 *s = src;						\
	unsigned int i, j, k;						\
	u8 *d;								\
									\
	for (i = 0; i + 4 * width <= len; i += 4 * width) {		\
		__builtin_memcpy(&v0, s + i, width);			\
		__builtin_memcpy(&v1, s + i + width, width);		\
		__builtin_memcpy(&v2, s + i + 2 * width, width);	\
		__builtin_memcpy(&v3, s + i + 3 * width, width);	\
		for (j = 0; j < n; j++) {				\
			d = (u8 *)dst[j] + i;				\
			__builtin_memcpy(d, &v0, width);		\
			__builtin_memcpy(d + width, &v1, width);	\
			__builtin_memcpy(d + 2 * width, &v2, width);	\
			__builtin_memcpy(d + 3 * width, &v3, width);	\
		}							\
	}								\
	for (; i + width <= len; i += width) {				\
		__builtin_memcpy(&v0, s + i, width);			\
		for (j = 0; j < n; j++)					\
			__builtin_memcpy((u8 *)dst[j] + i, &v0, width);	\
	}								\
	if (i < len && len >= width) {					\
		/* The last vector again, overlapping: no byte loop. */	\
		__builtin_memcpy(&v0, s + len - width, width);		\
		for (j = 0; j < n; j++)					\
			__builtin_memcpy((u8 *)dst[j] + len - width, &v0, \
					 width);			\
		i = len;						\
	}								\
	for (j = 0; j < n; j++)						\
		for (k = i; k < len; k++)				\
			((u8 *)dst[j])[k] = s[k];			\
}

/* x86-64 always has SSE2; AVX2 only in the functions that ask for it. */
#define NETAGG_SSE2
#define NETAGG_AVX2	__attribute__((target("avx2")))

NETAGG_DEFINE_REDUCE(netagg_reduce_f32_sse2, float, 16, NETAGG_SSE2)
NETAGG_DEFINE_REDUCE(netagg_reduce_i32_sse2, u32, 16, NETAGG_SSE2)
NETAGG_DEFINE_DIV(netagg_div_f32_sse2, 16, NETAGG_SSE2)
NETAGG_DEFINE_REDUCE(netagg_reduce_f32_avx2, float, 32, NETAGG_AVX2)
NETAGG_DEFINE_REDUCE(netagg_reduce_i32_avx2, u32, 32, NETAGG_AVX2)
NETAGG_DEFINE_DIV(netagg_div_f32_avx2, 32, NETAGG_AVX2)
NETAGG_DEFINE_BROADCAST(netagg_broadcast_sse2, 16, NETAGG_SSE2)
NETAGG_DEFINE_BROADCAST(netagg_broadcast_avx2, 32, NETAGG_AVX2)

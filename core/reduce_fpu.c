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
 * same bits. The half types convert lane by lane to exactly the bits of
 * half.h's scalar conversions, and finish the elements left over with them.
 */

#include "half.h"
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

/*
 * float16 and bfloat16: W wire elements (u16, at byte 2 * i) against W
 * float32 accumulators (at byte 4 * i). Conversions per width, as integer
 * lanes; comparisons give lanes of all ones or zeros, used as masks.
 */
typedef u16 u16x4 __attribute__((vector_size(8)));
typedef u32 u32x4 __attribute__((vector_size(16)));
typedef u16 u16x8 __attribute__((vector_size(16)));
typedef u32 u32x8 __attribute__((vector_size(32)));
#define NETAGG_F32X(w)	float __attribute__((vector_size(4 * (w))))

#define NETAGG_DEFINE_BF16_CONV(w, target)				\
static inline target u32x##w bf16_widen_##w(u16x##w h)		\
{									\
	return __builtin_convertvector(h, u32x##w) << 16;		\
}									\
									\
/* Round to nearest even by a carry out of the low half; NaN quieted. */\
static inline target u16x##w bf16_narrow_##w(u32x##w x)		\
{									\
	u32x##w nan = (u32x##w)((x & 0x7fffffff) > 0x7f800000);		\
	u32x##w r = (x + 0x7fff + ((x >> 16) & 1)) >> 16;		\
									\
	r = (r & ~nan) | (((x >> 16) | 0x40) & nan);			\
	return __builtin_convertvector(r, u16x##w);			\
}

/*
 * float16 without F16C (which comes with AVX only), four lanes: widening
 * rebiases the exponent by 112, infinity and NaN by 112 more (and quiets
 * NaN), and makes a subnormal 2^-14 x (1 + m / 1024) less 2^-14, exact.
 */
static inline u32x4 f16_widen_4(u16x4 h)
{
	NETAGG_F32X(4) f;
	u32x4 x = __builtin_convertvector(h, u32x4);
	u32x4 em = x & 0x7fff, e = (em << 13) & 0x0f800000;
	u32x4 inf = (u32x4)(e == 0x0f800000);
	u32x4 sub = (u32x4)(e == 0);
	u32x4 o = (em << 13) + (112 << 23);

	o += inf & (112 << 23);
	o |= (u32x4)(em > 0x7c00) & 0x400000;
	o += sub & (1 << 23);
	f = (NETAGG_F32X(4))o - (NETAGG_F32X(4))(sub & (113 << 23));
	return (u32x4)f | (x & 0x8000) << 16;
}

/*
 * Normal results: rebias and round to nearest even by a carry out of the
 * 13 bits dropped. Below 2^-14 the FPU rounds: adding 0.5 leaves units of
 * 2^-24 in the mantissa. From 2^16 on: infinity, or NaN.
 */
static inline u16x4 f16_narrow_4(u32x4 x)
{
	u32x4 sign = x & 0x80000000, a = x ^ sign;
	u32x4 big = (u32x4)(a >= (143U << 23));
	u32x4 small = (u32x4)(a < (113U << 23));
	u32x4 nan = (u32x4)(a > 0x7f800000);
	u32x4 r, sub, norm;

	sub = (u32x4)((NETAGG_F32X(4))a + 0.5f) - (126U << 23);
	norm = (a - (112U << 23) + 0xfff + ((a >> 13) & 1)) >> 13;
	r = (0x7c00 | (nan & (0x200 | ((a >> 13) & 0x3ff)))) & big;
	r |= (sub & small) | (norm & ~(big | small));
	return __builtin_convertvector(r | sign >> 16, u16x4);
}

/* F16C: vcvtph2ps, and vcvtps2ph with imm 0, round to nearest even. */
#define NETAGG_AVX2_F16C	__attribute__((target("avx2,f16c")))

static inline NETAGG_AVX2_F16C u32x8 f16c_widen_8(u16x8 h)
{
	return (u32x8)__builtin_ia32_vcvtph2ps256((short __attribute__((vector_size(16))))h);
}

static inline NETAGG_AVX2_F16C u16x8 f16c_narrow_8(u32x8 x)
{
	return (u16x8)__builtin_ia32_vcvtps2ph256((NETAGG_F32X(8))x, 0);
}

/*
 * Widen, narrow and reduce (acc = a + widen(b)) of one type, w lanes a
 * step, then element by element with half.h. Narrowing may be in place:
 * each step loads its accumulators before it stores, behind them.
 */
#define NETAGG_DEFINE_HALF(type, isa, w, widen, narrow, target)	\
target void netagg_widen_##type##_##isa(void *dst, const void *src,	\
					unsigned int n)			\
{									\
	const u8 *s = src;						\
	u8 *d = dst;							\
	unsigned int i;							\
	u16x##w h;							\
	u32x##w x;							\
	u16 v;								\
	u32 e;								\
									\
	for (i = 0; i + w <= n; i += w) {				\
		__builtin_memcpy(&h, s + 2 * i, sizeof(h));		\
		x = widen(h);						\
		__builtin_memcpy(d + 4 * i, &x, sizeof(x));		\
	}								\
	for (; i < n; i++) {						\
		__builtin_memcpy(&v, s + 2 * i, 2);			\
		e = netagg_##type##_to_f32(v);				\
		__builtin_memcpy(d + 4 * i, &e, 4);			\
	}								\
}									\
									\
target void netagg_narrow_##type##_##isa(void *dst, const void *src,	\
					 unsigned int n)		\
{									\
	const u8 *s = src;						\
	u8 *d = dst;							\
	unsigned int i;							\
	u16x##w h;							\
	u32x##w x;							\
	u16 v;								\
	u32 e;								\
									\
	for (i = 0; i + w <= n; i += w) {				\
		__builtin_memcpy(&x, s + 4 * i, sizeof(x));		\
		h = narrow(x);						\
		__builtin_memcpy(d + 2 * i, &h, sizeof(h));		\
	}								\
	for (; i < n; i++) {						\
		__builtin_memcpy(&e, s + 4 * i, 4);			\
		v = netagg_f32_to_##type(e);				\
		__builtin_memcpy(d + 2 * i, &v, 2);			\
	}								\
}									\
									\
target void netagg_reduce_##type##_##isa(void *dst, const void *a,	\
					 const void *b, unsigned int n)	\
{									\
	const u8 *pa = a, *pb = b;					\
	u8 *d = dst;							\
	NETAGG_F32X(w) x, y;						\
	unsigned int i;							\
	u16x##w h;							\
	float fx, fy;							\
	u16 v;								\
	u32 e;								\
									\
	for (i = 0; i + w <= n; i += w) {				\
		__builtin_memcpy(&x, pa + 4 * i, sizeof(x));		\
		__builtin_memcpy(&h, pb + 2 * i, sizeof(h));		\
		y = (NETAGG_F32X(w))widen(h);				\
		x += y;							\
		__builtin_memcpy(d + 4 * i, &x, sizeof(x));		\
	}								\
	for (; i < n; i++) {						\
		__builtin_memcpy(&fx, pa + 4 * i, 4);			\
		__builtin_memcpy(&v, pb + 2 * i, 2);			\
		e = netagg_##type##_to_f32(v);				\
		__builtin_memcpy(&fy, &e, 4);				\
		fx += fy;						\
		__builtin_memcpy(d + 4 * i, &fx, 4);			\
	}								\
}

NETAGG_DEFINE_BF16_CONV(4, NETAGG_SSE2)
NETAGG_DEFINE_BF16_CONV(8, NETAGG_AVX2)

NETAGG_DEFINE_HALF(f16, sse2, 4, f16_widen_4, f16_narrow_4, NETAGG_SSE2)
NETAGG_DEFINE_HALF(bf16, sse2, 4, bf16_widen_4, bf16_narrow_4, NETAGG_SSE2)
NETAGG_DEFINE_HALF(f16, avx2, 8, f16c_widen_8, f16c_narrow_8,
		   NETAGG_AVX2_F16C)
NETAGG_DEFINE_HALF(bf16, avx2, 8, bf16_widen_8, bf16_narrow_8,
		   NETAGG_AVX2_F16C)

/*
 * K inputs summed in one pass, dst = src[0] + src[1] + ... + src[k - 1]
 * left to right, element by element: four vectors of dst a step, loaded
 * from src[0] into registers, the other inputs added to them in order,
 * stored once. The four are independent chains of additions, so they
 * overlap while each waits on its last. Then one vector at a time, then
 * the last vector of dst again, overlapping (dst is apart from every
 * input, so an element summed twice is summed again from the same inputs
 * in the same order), or, if n is less than a vector, element by element.
 *
 * load(v, p, i) gives the vector of float32 (or int32) lanes of input p
 * from element i, widened for the half types; load1(x, p, i) one element.
 * dst holds 4-byte elements whatever the inputs are.
 */
#define NETAGG_DEFINE_ADD_MANY(name, elem, width, load, load1, target)	\
target void name(void *dst, const void *const *src, unsigned int k,	\
		 unsigned int n)					\
{									\
	elem __attribute__((vector_size(width))) a0, a1, a2, a3;	\
	elem __attribute__((vector_size(width))) b0, b1, b2, b3;	\
	const unsigned int lanes = width / sizeof(elem);		\
	const u8 *s0 = src[0], *p;					\
	unsigned int i, j;						\
	u8 *d = dst;							\
	elem x, y;							\
									\
	for (i = 0; i + 4 * lanes <= n; i += 4 * lanes) {		\
		load(a0, s0, i);					\
		load(a1, s0, i + lanes);				\
		load(a2, s0, i + 2 * lanes);				\
		load(a3, s0, i + 3 * lanes);				\
		for (j = 1; j < k; j++) {				\
			p = src[j];					\
			load(b0, p, i);					\
			load(b1, p, i + lanes);				\
			load(b2, p, i + 2 * lanes);			\
			load(b3, p, i + 3 * lanes);			\
			a0 += b0;					\
			a1 += b1;					\
			a2 += b2;					\
			a3 += b3;					\
		}							\
		NETAGG_VSTORE(d, i, a0);				\
		NETAGG_VSTORE(d, i + lanes, a1);			\
		NETAGG_VSTORE(d, i + 2 * lanes, a2);			\
		NETAGG_VSTORE(d, i + 3 * lanes, a3);			\
	}								\
	for (; i < n && n >= lanes; i += lanes) {			\
		/* The last step overlaps the one before it, if need be. */ \
		if (i + lanes > n)					\
			i = n - lanes;					\
		load(a0, s0, i);					\
		for (j = 1; j < k; j++) {				\
			p = src[j];					\
			load(b0, p, i);					\
			a0 += b0;					\
		}							\
		NETAGG_VSTORE(d, i, a0);				\
	}								\
	for (; i < n; i++) {						\
		load1(x, s0, i);					\
		for (j = 1; j < k; j++) {				\
			p = src[j];					\
			load1(y, p, i);					\
			x += y;						\
		}							\
		NETAGG_VSTORE(d, i, x);					\
	}								\
}

/* Inputs of 4-byte elements: loaded as they are. */
#define NETAGG_LOAD_32(v, p, i)		NETAGG_VLOAD(v, p, i)

/* Half inputs: w wire elements from byte 2 * i, widened by widen(). */
#define NETAGG_LOAD_HALF(w, widen, v, p, i)				\
	do {								\
		u16x##w h_;						\
									\
		__builtin_memcpy(&h_, (const u8 *)(p) + 2 * (i), sizeof(h_)); \
		(v) = (NETAGG_F32X(w))widen(h_);			\
	} while (0)

#define NETAGG_LOAD_HALF1(type, x, p, i)				\
	do {								\
		u16 h_;							\
		u32 e_;							\
									\
		__builtin_memcpy(&h_, (const u8 *)(p) + 2 * (i), 2);	\
		e_ = netagg_##type##_to_f32(h_);			\
		__builtin_memcpy(&(x), &e_, 4);				\
	} while (0)

#define NETAGG_LOAD_F16_4(v, p, i)	NETAGG_LOAD_HALF(4, f16_widen_4, v, p, i)
#define NETAGG_LOAD_BF16_4(v, p, i)	NETAGG_LOAD_HALF(4, bf16_widen_4, v, p, i)
#define NETAGG_LOAD_F16_8(v, p, i)	NETAGG_LOAD_HALF(8, f16c_widen_8, v, p, i)
#define NETAGG_LOAD_BF16_8(v, p, i)	NETAGG_LOAD_HALF(8, bf16_widen_8, v, p, i)
#define NETAGG_LOAD_F16_1(x, p, i)	NETAGG_LOAD_HALF1(f16, x, p, i)
#define NETAGG_LOAD_BF16_1(x, p, i)	NETAGG_LOAD_HALF1(bf16, x, p, i)

NETAGG_DEFINE_ADD_MANY(netagg_add_many_f32_sse2, float, 16, NETAGG_LOAD_32,
		       NETAGG_LOAD_32, NETAGG_SSE2)
NETAGG_DEFINE_ADD_MANY(netagg_add_many_i32_sse2, u32, 16, NETAGG_LOAD_32,
		       NETAGG_LOAD_32, NETAGG_SSE2)
NETAGG_DEFINE_ADD_MANY(netagg_add_many_f16_sse2, float, 16, NETAGG_LOAD_F16_4,
		       NETAGG_LOAD_F16_1, NETAGG_SSE2)
NETAGG_DEFINE_ADD_MANY(netagg_add_many_bf16_sse2, float, 16,
		       NETAGG_LOAD_BF16_4, NETAGG_LOAD_BF16_1, NETAGG_SSE2)
NETAGG_DEFINE_ADD_MANY(netagg_add_many_f32_avx2, float, 32, NETAGG_LOAD_32,
		       NETAGG_LOAD_32, NETAGG_AVX2)
NETAGG_DEFINE_ADD_MANY(netagg_add_many_i32_avx2, u32, 32, NETAGG_LOAD_32,
		       NETAGG_LOAD_32, NETAGG_AVX2)
NETAGG_DEFINE_ADD_MANY(netagg_add_many_f16_avx2, float, 32, NETAGG_LOAD_F16_8,
		       NETAGG_LOAD_F16_1, NETAGG_AVX2_F16C)
NETAGG_DEFINE_ADD_MANY(netagg_add_many_bf16_avx2, float, 32,
		       NETAGG_LOAD_BF16_8, NETAGG_LOAD_BF16_1, NETAGG_AVX2_F16C)

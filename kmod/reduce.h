/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reduction core: element-wise sums and averages of payloads.
 *
 * Buffers hold little-endian elements (see uapi/linux/netagg.h) and the core
 * reads them natively, so it assumes a little-endian CPU. Sources may be
 * misaligned (an skb payload): x86 loads them fine, and the vector code in
 * reduce_fpu.c uses unaligned loads only.
 *
 * Both files build in the kernel and natively (tests/unit, the userspace
 * aggregator and the core benchmark): reduce.c is integer only and chooses
 * the implementation; reduce_fpu.c is the one object with vector code.
 */
#ifndef _NETAGG_REDUCE_H
#define _NETAGG_REDUCE_H

#include "reduce_deps.h"

/* dst[i] += src[i], two's complement, wrapping. */
void netagg_reduce_i32(u32 *dst, const u32 *src, unsigned int n);
/* dst[i] /= divisor as s32, truncating toward zero; divisor 1..65535. */
void netagg_div_i32(u32 *dst, unsigned int n, u32 divisor);

/*
 * IEEE-754 binary32 on bit patterns, integer arithmetic only: the same bits
 * as x86 SSE in round to nearest without FTZ/DAZ (addss/divss with dst as
 * the destination: a NaN in dst wins over one in src, quieted).
 */
void netagg_reduce_f32_soft(u32 *dst, const u32 *src, unsigned int n);
void netagg_div_f32_soft(u32 *dst, unsigned int n, u32 divisor);

/*
 * float16 and bfloat16 are summed in float32: a sum of them is an
 * accumulator of n float32 elements (4 bytes each), the packets' elements
 * are 2 bytes. Widening is exact, so a sum of two elements rounds once, as
 * in float32, and only netagg_narrow() rounds to the wire type again.
 */
static inline bool netagg_dtype_half(u8 dtype)
{
	return dtype == NETAGG_DTYPE_F16 || dtype == NETAGG_DTYPE_BF16;
}

/* dst[i] = dst[i] + widen(src[i]): accumulators plus wire elements. */
void netagg_reduce_f16_soft(u32 *dst, const u16 *src, unsigned int n);
void netagg_reduce_bf16_soft(u32 *dst, const u16 *src, unsigned int n);

/*
 * K inputs summed in one pass (see netagg_add_many()): dst[i] = src[0][i] +
 * ... + src[k - 1][i], left to right, each input read once and dst written
 * once; 1 <= k <= NETAGG_CHILDREN_MAX, dst apart from every input. Integer
 * code only; the inputs may be misaligned. For the half types src are wire
 * elements, each widened (exact) and added in float32, dst accumulators.
 */
void netagg_add_many_i32(u32 *dst, const void *const *src, unsigned int k,
			 unsigned int n);
void netagg_add_many_f32_soft(u32 *dst, const void *const *src,
			      unsigned int k, unsigned int n);
void netagg_add_many_f16_soft(u32 *dst, const void *const *src,
			      unsigned int k, unsigned int n);
void netagg_add_many_bf16_soft(u32 *dst, const void *const *src,
			       unsigned int k, unsigned int n);

/*
 * The implementations, slowest first. SCALAR is reduce.c's integer code,
 * usable anywhere; the others are reduce_fpu.c's vector code, each usable
 * when the CPU has the instructions and, in the kernel, only between
 * kernel_fpu_begin() and kernel_fpu_end().
 */
enum netagg_simd {
	NETAGG_SIMD_SCALAR,
	NETAGG_SIMD_SSE2,
	NETAGG_SIMD_AVX2,
	NETAGG_SIMD_NUM,
};

extern const char *const netagg_simd_names[NETAGG_SIMD_NUM];

/*
 * The vector code; a reduction is dst = a + b, a being dst or apart from
 * it, b apart from both. Buffers are void * on purpose: this header is
 * included by objects built without FP support, so no float type crosses
 * it, and a payload is raw bytes of any alignment. Float bits match the soft versions
 * but for one case: when both addends are NaN, either payload comes out
 * (the compiler may put either operand first).
 */
/**
 * netagg_reduce_f32_sse2() - dst = a + b over float32 elements, SSE2.
 * @dst: the sum
 * @a: the first addend, @dst or apart from it
 * @b: the second, apart from both
 * @n: elements
 */
void netagg_reduce_f32_sse2(void *dst, const void *a, const void *b,
			    unsigned int n);
/**
 * netagg_reduce_i32_sse2() - dst = a + b over int32 elements, SSE2, wrapping.
 * @dst: the sum
 * @a: the first addend, @dst or apart from it
 * @b: the second, apart from both
 * @n: elements
 */
void netagg_reduce_i32_sse2(void *dst, const void *a, const void *b,
			    unsigned int n);
/**
 * netagg_div_f32_sse2() - dst /= divisor over float32 elements, SSE2.
 * @dst: the elements, divided in place
 * @n: elements
 * @divisor: 1..65535
 */
void netagg_div_f32_sse2(void *dst, unsigned int n, u32 divisor);
/**
 * netagg_reduce_f32_avx2() - dst = a + b over float32 elements, AVX2.
 * @dst: the sum
 * @a: the first addend, @dst or apart from it
 * @b: the second, apart from both
 * @n: elements
 */
void netagg_reduce_f32_avx2(void *dst, const void *a, const void *b,
			    unsigned int n);
/**
 * netagg_reduce_i32_avx2() - dst = a + b over int32 elements, AVX2, wrapping.
 * @dst: the sum
 * @a: the first addend, @dst or apart from it
 * @b: the second, apart from both
 * @n: elements
 */
void netagg_reduce_i32_avx2(void *dst, const void *a, const void *b,
			    unsigned int n);
/**
 * netagg_div_f32_avx2() - dst /= divisor over float32 elements, AVX2.
 * @dst: the elements, divided in place
 * @n: elements
 * @divisor: 1..65535
 */
void netagg_div_f32_avx2(void *dst, unsigned int n, u32 divisor);
/**
 * netagg_broadcast_sse2() - Copy one buffer into several, SSE2.
 * @dst: the buffers, none overlapping @src
 * @n: how many
 * @src: the bytes, read once
 * @len: how many bytes
 */
void netagg_broadcast_sse2(void *const *dst, unsigned int n, const void *src,
			   unsigned int len);
/**
 * netagg_broadcast_avx2() - Copy one buffer into several, AVX2.
 * @dst: the buffers, none overlapping @src
 * @n: how many
 * @src: the bytes, read once
 * @len: how many bytes
 */
void netagg_broadcast_avx2(void *const *dst, unsigned int n, const void *src,
			   unsigned int len);

/*
 * The half types: reduce is acc = a + widen(b) (a accumulators, b wire
 * elements), widen fills accumulators from wire elements, narrow rounds
 * accumulators to wire elements and may write over its source (dst == src).
 * SSE2 converts with integer and float lane operations; AVX2 converts
 * float16 with F16C (see netagg_simd_best()) and bfloat16 by shifts.
 */
/**
 * netagg_reduce_f16_sse2() - acc = a + widen(b) over float16 elements, SSE2.
 * @dst: the float32 accumulators of the sum
 * @a: the first addend, accumulators, @dst or apart from it
 * @b: the second, float16 wire elements, apart from both
 * @n: elements
 */
void netagg_reduce_f16_sse2(void *dst, const void *a, const void *b,
			    unsigned int n);
/**
 * netagg_reduce_bf16_sse2() - acc = a + widen(b) over bfloat16 elements, SSE2.
 * @dst: the float32 accumulators of the sum
 * @a: the first addend, accumulators, @dst or apart from it
 * @b: the second, bfloat16 wire elements, apart from both
 * @n: elements
 */
void netagg_reduce_bf16_sse2(void *dst, const void *a, const void *b,
			     unsigned int n);
/**
 * netagg_widen_f16_sse2() - Fill float32 accumulators from float16 elements, SSE2.
 * @dst: the accumulators
 * @src: the wire elements
 * @n: elements
 */
void netagg_widen_f16_sse2(void *dst, const void *src, unsigned int n);
/**
 * netagg_widen_bf16_sse2() - Fill float32 accumulators from bfloat16 elements, SSE2.
 * @dst: the accumulators
 * @src: the wire elements
 * @n: elements
 */
void netagg_widen_bf16_sse2(void *dst, const void *src, unsigned int n);
/**
 * netagg_narrow_f16_sse2() - Round float32 accumulators to float16, SSE2.
 * @dst: the wire elements; may be @src
 * @src: the accumulators
 * @n: elements
 */
void netagg_narrow_f16_sse2(void *dst, const void *src, unsigned int n);
/**
 * netagg_narrow_bf16_sse2() - Round float32 accumulators to bfloat16, SSE2.
 * @dst: the wire elements; may be @src
 * @src: the accumulators
 * @n: elements
 */
void netagg_narrow_bf16_sse2(void *dst, const void *src, unsigned int n);
/**
 * netagg_reduce_f16_avx2() - acc = a + widen(b) over float16 elements, AVX2.
 * @dst: the float32 accumulators of the sum
 * @a: the first addend, accumulators, @dst or apart from it
 * @b: the second, float16 wire elements, apart from both
 * @n: elements
 */
void netagg_reduce_f16_avx2(void *dst, const void *a, const void *b,
			    unsigned int n);
/**
 * netagg_reduce_bf16_avx2() - acc = a + widen(b) over bfloat16 elements, AVX2.
 * @dst: the float32 accumulators of the sum
 * @a: the first addend, accumulators, @dst or apart from it
 * @b: the second, bfloat16 wire elements, apart from both
 * @n: elements
 */
void netagg_reduce_bf16_avx2(void *dst, const void *a, const void *b,
			     unsigned int n);
/**
 * netagg_widen_f16_avx2() - Fill float32 accumulators from float16 elements, AVX2.
 * @dst: the accumulators
 * @src: the wire elements
 * @n: elements
 */
void netagg_widen_f16_avx2(void *dst, const void *src, unsigned int n);
/**
 * netagg_widen_bf16_avx2() - Fill float32 accumulators from bfloat16 elements, AVX2.
 * @dst: the accumulators
 * @src: the wire elements
 * @n: elements
 */
void netagg_widen_bf16_avx2(void *dst, const void *src, unsigned int n);
/**
 * netagg_narrow_f16_avx2() - Round float32 accumulators to float16, AVX2.
 * @dst: the wire elements; may be @src
 * @src: the accumulators
 * @n: elements
 */
void netagg_narrow_f16_avx2(void *dst, const void *src, unsigned int n);
/**
 * netagg_narrow_bf16_avx2() - Round float32 accumulators to bfloat16, AVX2.
 * @dst: the wire elements; may be @src
 * @src: the accumulators
 * @n: elements
 */
void netagg_narrow_bf16_avx2(void *dst, const void *src, unsigned int n);

/*
 * K inputs summed in one pass, dst = src[0] + src[1] + ... + src[k - 1],
 * left to right for every element: a vector of dst loaded from src[0],
 * the other inputs added to it in order, stored once. dst is apart from
 * every input; 1 <= k <= NETAGG_CHILDREN_MAX. The half types widen each
 * input as the reductions above do and add in float32 accumulators. When
 * a NaN meets a NaN, either payload comes out, as in the two-input sums.
 */
/**
 * netagg_add_many_f32_sse2() - Sum k inputs of float32 elements, SSE2.
 * @dst: the sum, apart from every input
 * @src: the @k inputs
 * @k: 1..NETAGG_CHILDREN_MAX
 * @n: elements
 */
void netagg_add_many_f32_sse2(void *dst, const void *const *src,
			      unsigned int k, unsigned int n);
/**
 * netagg_add_many_i32_sse2() - Sum k inputs of int32 elements, wrapping, SSE2.
 * @dst: the sum, apart from every input
 * @src: the @k inputs
 * @k: 1..NETAGG_CHILDREN_MAX
 * @n: elements
 */
void netagg_add_many_i32_sse2(void *dst, const void *const *src,
			      unsigned int k, unsigned int n);
/**
 * netagg_add_many_f16_sse2() - Sum k inputs of float16 elements, SSE2.
 * @dst: the float32 accumulators of the sum, apart from every input
 * @src: the @k inputs, float16 wire elements
 * @k: 1..NETAGG_CHILDREN_MAX
 * @n: elements
 */
void netagg_add_many_f16_sse2(void *dst, const void *const *src,
			      unsigned int k, unsigned int n);
/**
 * netagg_add_many_bf16_sse2() - Sum k inputs of bfloat16 elements, SSE2.
 * @dst: the float32 accumulators of the sum, apart from every input
 * @src: the @k inputs, bfloat16 wire elements
 * @k: 1..NETAGG_CHILDREN_MAX
 * @n: elements
 */
void netagg_add_many_bf16_sse2(void *dst, const void *const *src,
			       unsigned int k, unsigned int n);
/**
 * netagg_add_many_f32_avx2() - Sum k inputs of float32 elements, AVX2.
 * @dst: the sum, apart from every input
 * @src: the @k inputs
 * @k: 1..NETAGG_CHILDREN_MAX
 * @n: elements
 */
void netagg_add_many_f32_avx2(void *dst, const void *const *src,
			      unsigned int k, unsigned int n);
/**
 * netagg_add_many_i32_avx2() - Sum k inputs of int32 elements, wrapping, AVX2.
 * @dst: the sum, apart from every input
 * @src: the @k inputs
 * @k: 1..NETAGG_CHILDREN_MAX
 * @n: elements
 */
void netagg_add_many_i32_avx2(void *dst, const void *const *src,
			      unsigned int k, unsigned int n);
/**
 * netagg_add_many_f16_avx2() - Sum k inputs of float16 elements, AVX2.
 * @dst: the float32 accumulators of the sum, apart from every input
 * @src: the @k inputs, float16 wire elements
 * @k: 1..NETAGG_CHILDREN_MAX
 * @n: elements
 */
void netagg_add_many_f16_avx2(void *dst, const void *const *src,
			      unsigned int k, unsigned int n);
/**
 * netagg_add_many_bf16_avx2() - Sum k inputs of bfloat16 elements, AVX2.
 * @dst: the float32 accumulators of the sum, apart from every input
 * @src: the @k inputs, bfloat16 wire elements
 * @k: 1..NETAGG_CHILDREN_MAX
 * @n: elements
 */
void netagg_add_many_bf16_avx2(void *dst, const void *const *src,
			       unsigned int k, unsigned int n);

/*
 * dst[i] += src[i] over n elements of dtype (enum netagg_dtype), dst[i] =
 * a[i] + b[i] (a first, as in dst += src; a may be dst), and dst[i] /=
 * divisor, with the implementation simd; the caller makes sure it may be
 * used. Every implementation gives the same bits. An unknown dtype returns
 * -EINVAL and leaves dst alone.
 *
 * For the half types (netagg_dtype_half()) dst and a are float32
 * accumulators and src and b wire elements; netagg_div() divides
 * accumulators; netagg_widen() fills n accumulators from wire elements and
 * netagg_narrow() rounds them back (dst may be src). Those two return
 * -EINVAL for any other dtype.
 */
int netagg_reduce(enum netagg_simd simd, u8 dtype, void *dst,
		  const void *src, unsigned int n);
int netagg_add(enum netagg_simd simd, u8 dtype, void *dst, const void *a,
	       const void *b, unsigned int n);
int netagg_div(enum netagg_simd simd, u8 dtype, void *dst, unsigned int n,
	       u32 divisor);
int netagg_widen(enum netagg_simd simd, u8 dtype, void *dst, const void *src,
		 unsigned int n);
int netagg_narrow(enum netagg_simd simd, u8 dtype, void *dst, const void *src,
		  unsigned int n);
/*
 * dst[i] = src[0][i] + src[1][i] + ... + src[k - 1][i], added left to right
 * for every element (((s0 + s1) + s2) + ...), k >= 1: the same bits as
 * k - 1 two-input sums in that order, in every implementation (both
 * addends NaN: either payload, as above). One pass: each input read once,
 * dst written once; dst apart from every input, k at most
 * NETAGG_CHILDREN_MAX. For the half types src are wire elements and dst
 * float32 accumulators (each input widened, exact, then added in float32);
 * k == 1 copies (widens). -EINVAL for an unknown dtype or k == 0, dst left
 * alone. With it a node can sum every child's contribution of a VID at
 * once, in a fixed order: the float sum's bits then do not depend on the
 * order the contributions arrived in.
 */
int netagg_add_many(enum netagg_simd simd, u8 dtype, void *dst,
		    const void *const *src, unsigned int k, unsigned int n);
/*
 * @len bytes of @src into each of the @n buffers of @dst (none overlapping
 * @src), with the implementation simd: a result written once per child.
 */
void netagg_broadcast(enum netagg_simd simd, void *const *dst, unsigned int n,
		      const void *src, unsigned int len);

/*
 * The fastest implementation this CPU supports: cpuid and the OS's
 * saving of the vector registers (XCR0), by the kernel's own view of them
 * in a module, by the compiler runtime's natively. AVX2 counts with F16C
 * only, which every CPU with AVX2 has.
 */
enum netagg_simd netagg_simd_best(void);

#ifdef __KERNEL__
/*
 * The datapath's entry points: dtype is enum netagg_dtype, n the element
 * count. They use the implementation chosen at load (netagg_reduce_init(),
 * the "simd" module parameter) when the context may use the FPU, else the
 * scalar code; all give the same bits. netagg_scale() divides by the
 * contributor count for NETAGG_OP_AVG; divisor 0 or 1 leaves data alone.
 * netagg_copy() copies @len bytes into each of @n buffers.
 */
int netagg_reduce_init(void);
/* dst = src[0] + ... + src[k - 1], as netagg_add_many(), left to right. */
void netagg_sum_many(u8 dtype, void *dst, const void *const *src,
		     unsigned int k, unsigned int n);
void netagg_scale(u8 dtype, void *dst, unsigned int n, u32 divisor);
/* n float32 accumulators of a half dtype rounded to wire elements in place. */
void netagg_from_acc(u8 dtype, void *acc, unsigned int n);
void netagg_copy(void *const *dst, unsigned int n, const void *src,
		 unsigned int len);
#endif

#endif /* _NETAGG_REDUCE_H */

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
 * The vector code. Buffers are void * on purpose: this header is included
 * by objects built without FP support, so no float type crosses it, and a
 * payload is raw bytes of any alignment. Float bits match the soft
 * versions but for one case: when both addends are NaN, either payload
 * comes out (the compiler may put either operand first).
 *
 * Each operation has an SSE2 and an AVX2 function of the same arguments:
 *
 * netagg_reduce_<t>_<isa>(dst, a, b, n): dst = a + b over n elements,
 * a being dst or apart from it, b apart from both; int32 wraps. For a half
 * type t (f16, bf16), dst and a are float32 accumulators and b wire
 * elements: acc = a + widen(b).
 *
 * netagg_div_f32_<isa>(dst, n, divisor): dst /= divisor in place, divisor
 * 1..65535.
 *
 * netagg_add_many_<t>_<isa>(dst, src, k, n): dst = src[0] + ... +
 * src[k - 1] (netagg_add_many()), dst apart from every input, k 1..NETAGG_CHILDREN_MAX;
 * for a half type, dst float32 accumulators and src wire elements.
 *
 * netagg_widen_<t>_<isa>(dst, src, n): n float32 accumulators filled from
 * wire elements of a half type; netagg_narrow_<t>_<isa>(dst, src, n): the
 * accumulators rounded to wire elements, dst may be src.
 *
 * netagg_broadcast_<isa>(dst, n, src, len): len bytes of src, read once,
 * into each of the n buffers of dst, none overlapping src.
 *
 * SSE2 converts the half types with integer and float lane operations;
 * AVX2 converts float16 with F16C (see netagg_simd_best()) and bfloat16 by
 * shifts.
 */
void netagg_reduce_f32_sse2(void *dst, const void *a, const void *b,
			    unsigned int n);
void netagg_reduce_i32_sse2(void *dst, const void *a, const void *b,
			    unsigned int n);
void netagg_reduce_f16_sse2(void *dst, const void *a, const void *b,
			    unsigned int n);
void netagg_reduce_bf16_sse2(void *dst, const void *a, const void *b,
			     unsigned int n);
void netagg_div_f32_sse2(void *dst, unsigned int n, u32 divisor);
void netagg_add_many_f32_sse2(void *dst, const void *const *src,
			      unsigned int k, unsigned int n);
void netagg_add_many_i32_sse2(void *dst, const void *const *src,
			      unsigned int k, unsigned int n);
void netagg_add_many_f16_sse2(void *dst, const void *const *src,
			      unsigned int k, unsigned int n);
void netagg_add_many_bf16_sse2(void *dst, const void *const *src,
			       unsigned int k, unsigned int n);
void netagg_widen_f16_sse2(void *dst, const void *src, unsigned int n);
void netagg_widen_bf16_sse2(void *dst, const void *src, unsigned int n);
void netagg_narrow_f16_sse2(void *dst, const void *src, unsigned int n);
void netagg_narrow_bf16_sse2(void *dst, const void *src, unsigned int n);
void netagg_broadcast_sse2(void *const *dst, unsigned int n, const void *src,
			   unsigned int len);

void netagg_reduce_f32_avx2(void *dst, const void *a, const void *b,
			    unsigned int n);
void netagg_reduce_i32_avx2(void *dst, const void *a, const void *b,
			    unsigned int n);
void netagg_reduce_f16_avx2(void *dst, const void *a, const void *b,
			    unsigned int n);
void netagg_reduce_bf16_avx2(void *dst, const void *a, const void *b,
			     unsigned int n);
void netagg_div_f32_avx2(void *dst, unsigned int n, u32 divisor);
void netagg_add_many_f32_avx2(void *dst, const void *const *src,
			      unsigned int k, unsigned int n);
void netagg_add_many_i32_avx2(void *dst, const void *const *src,
			      unsigned int k, unsigned int n);
void netagg_add_many_f16_avx2(void *dst, const void *const *src,
			      unsigned int k, unsigned int n);
void netagg_add_many_bf16_avx2(void *dst, const void *const *src,
			       unsigned int k, unsigned int n);
void netagg_widen_f16_avx2(void *dst, const void *src, unsigned int n);
void netagg_widen_bf16_avx2(void *dst, const void *src, unsigned int n);
void netagg_narrow_f16_avx2(void *dst, const void *src, unsigned int n);
void netagg_narrow_bf16_avx2(void *dst, const void *src, unsigned int n);
void netagg_broadcast_avx2(void *const *dst, unsigned int n, const void *src,
			   unsigned int len);

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


#endif /* _NETAGG_REDUCE_H */

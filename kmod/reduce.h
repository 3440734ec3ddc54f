/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reduction core: element-wise sums and averages of payloads.
 *
 * Buffers hold little-endian elements (see uapi/linux/netagg.h) and the core
 * reads them natively, so it assumes a little-endian CPU. Sources may be
 * misaligned (an skb payload): x86 loads them fine, and the SSE code in
 * reduce_fpu.c loads bytes, so the compiler never assumes alignment there.
 *
 * reduce.c is integer only and builds both in the kernel and natively for
 * tests/unit; reduce_fpu.c is the one object compiled with SSE enabled.
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
 * The same with SSE, from reduce_fpu.c. In the kernel, call them only
 * between kernel_fpu_begin() and kernel_fpu_end(). Buffers are void * on
 * purpose: this header is included by objects built without FP support, so
 * no float type crosses it, and the payload is raw bytes of any alignment.
 * Bits match the soft versions but for one case: when both addends are
 * NaN, the compiler may put either first, so either payload comes out.
 */
void netagg_reduce_f32_fpu(void *dst, const void *src, unsigned int n);
void netagg_div_f32_fpu(void *dst, unsigned int n, u32 divisor);

#ifdef __KERNEL__
/*
 * The datapath's entry points: dtype is enum netagg_dtype, n the element
 * count. F32 uses SSE when the context allows it, else the soft code; both
 * give the same bits. netagg_scale() divides by the contributor count for
 * NETAGG_OP_AVG; divisor 0 or 1 leaves the data alone.
 */
void netagg_sum(u8 dtype, void *dst, const void *src, unsigned int n);
void netagg_scale(u8 dtype, void *dst, unsigned int n, u32 divisor);
#endif

#endif /* _NETAGG_REDUCE_H */

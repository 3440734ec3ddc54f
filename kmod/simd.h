/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_SIMD_H
#define _NETAGG_SIMD_H

#include <linux/types.h>

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

#endif /* _NETAGG_SIMD_H */

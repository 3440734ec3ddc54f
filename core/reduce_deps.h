/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Everything the reduction core (reduce.c, reduce_fpu.c) takes from its
 * environment, as lib/zstd's zstd_deps.h does: the kernel's fixed-width
 * types, or the same names over <stdint.h> for the native unit tests in
 * tests/unit, plus errno values, memcpy() and the uapi header's dtypes. The
 * core uses nothing else from the kernel.
 */
#ifndef _NETAGG_REDUCE_DEPS_H
#define _NETAGG_REDUCE_DEPS_H

#ifdef __KERNEL__

#include <linux/errno.h>
#include <linux/string.h>
#include <linux/types.h>

#else

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;

#endif

/* enum netagg_dtype: the uapi header builds on both sides. */
#include <linux/netagg.h>

#endif /* _NETAGG_REDUCE_DEPS_H */

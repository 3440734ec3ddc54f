/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Everything the window core (window.c, window.h) takes from its
 * environment beyond the reduction core's (reduce_deps.h: fixed-width
 * types, the uapi header): a 64-bit population count, BIT_ULL() and
 * U16_MAX. In the kernel its own; natively, for tests/unit and the
 * userspace aggregator, the same names over the compiler's builtins.
 * Kept apart from reduce_deps.h so that reduce_fpu.c, built with vector
 * code, includes no more of the kernel than it did.
 */
#ifndef _NETAGG_WINDOW_DEPS_H
#define _NETAGG_WINDOW_DEPS_H

#include "reduce_deps.h"

#ifdef __KERNEL__

#include <linux/bitops.h>
#include <linux/limits.h>

#else

#define BIT_ULL(nr)	(1ULL << (nr))
#define U16_MAX		UINT16_MAX

static inline unsigned int hweight64(u64 w)
{
	return __builtin_popcountll(w);
}

#endif

#endif /* _NETAGG_WINDOW_DEPS_H */

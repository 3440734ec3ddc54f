/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Bounds of a timed region, for the instruction count of make profile and
 * make bench (lab/profile/insn-profile.c, a QEMU plugin): each is one no-op
 * instruction that the plugin recognises by its bytes, as a USDT probe is
 * a no-op a tracer finds. On hardware, or in a VM without the plugin, it
 * does nothing and costs one instruction. The programs that time an
 * allreduce (netagg-allreduce, and the peers of make bench) put one
 * before and one after the call they time.
 */
#ifndef NETAGG_MARK_H
#define NETAGG_MARK_H

#if defined(__x86_64__)
/* nopl 0x6e610001(%rax), nopl 0x6e610002(%rax): 0f 1f 80 and the number. */
static inline void netagg_mark_begin(void)
{
	__asm__ volatile("nopl 0x6e610001(%%rax)" ::: "memory");
}

static inline void netagg_mark_end(void)
{
	__asm__ volatile("nopl 0x6e610002(%%rax)" ::: "memory");
}
#else
static inline void netagg_mark_begin(void) {}
static inline void netagg_mark_end(void) {}
#endif

#endif

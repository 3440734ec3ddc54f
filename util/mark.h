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

#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NETAGG_MARK_BEGIN	0x6e610001
#define NETAGG_MARK_END		0x6e610002

/*
 * With NETAGG_MARK_SYSCALL in the environment, each mark is also a
 * close() of its number, which no descriptor has (it fails at once with
 * EBADF): a tracer of system calls sees it, as make profile's wall-time
 * section (lab/profile/wall.py) does through perf, which cannot see a
 * no-op. Off by default: the timed call keeps its one instruction.
 */
static inline void netagg_mark_syscall(long mark)
{
	static int on = -1;

	if (on < 0)
		on = getenv("NETAGG_MARK_SYSCALL") != NULL;
	if (on)
		syscall(SYS_close, mark);
}

#if defined(__x86_64__)
/* nopl 0x6e610001(%rax), nopl 0x6e610002(%rax): 0f 1f 80 and the number. */
static inline void netagg_mark_begin(void)
{
	netagg_mark_syscall(NETAGG_MARK_BEGIN);
	__asm__ volatile("nopl 0x6e610001(%%rax)" ::: "memory");
}

static inline void netagg_mark_end(void)
{
	__asm__ volatile("nopl 0x6e610002(%%rax)" ::: "memory");
	netagg_mark_syscall(NETAGG_MARK_END);
}
#else
static inline void netagg_mark_begin(void)
{
	netagg_mark_syscall(NETAGG_MARK_BEGIN);
}

static inline void netagg_mark_end(void)
{
	netagg_mark_syscall(NETAGG_MARK_END);
}
#endif

#endif

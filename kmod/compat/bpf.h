/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What xdp.c takes from the BPF headers that 6.1 names otherwise or not at
 * all: later kernels' __bpf_kfunc is __used noinline (a global function is
 * kept anyway, and must not be inlined out of its BTF), with
 * __bpf_kfunc_start_defs() around the kfuncs; a kfunc set is
 * BTF_KFUNCS_START() where 6.1 has BTF_SET8_START().
 */
#ifndef _NETAGG_COMPAT_BPF_H
#define _NETAGG_COMPAT_BPF_H

#include <linux/btf.h>
#include <linux/btf_ids.h>

#ifndef __bpf_kfunc
#define __bpf_kfunc noinline
#endif
#ifndef __bpf_kfunc_start_defs
#define __bpf_kfunc_start_defs()
#define __bpf_kfunc_end_defs()
#endif

#ifndef BTF_KFUNCS_START
#define BTF_KFUNCS_START(name)	BTF_SET8_START(name)
#define BTF_KFUNCS_END(name)	BTF_SET8_END(name)
#endif

#endif /* _NETAGG_COMPAT_BPF_H */

# SPDX-License-Identifier: GPL-2.0
#
# What Kbuild does differently for the kernels the module builds for
# (6.1, 6.12), in one place; kmod/Kbuild includes it. The C side is beside
# it: genl.[ch] (the netlink op table), bpf.h (the XDP kfunc's names).

# The generated op table is split, which kernels before 6.2 do not know:
# compat/genl.h then declares struct genl_split_ops and compat/genl.c folds
# the table into 6.1's (netlink-gen.c is generated: it is given the header).
ifeq ($(shell grep -qs 'struct genl_split_ops {' $(srctree)/include/net/genetlink.h && echo y),)
ccflags-y += -DNETAGG_GENL_FOLD_SPLIT_OPS
endif
CFLAGS_netlink-gen.o += -include $(src)/compat/genl.h

# $(FPU_OBJ) is the only object with SSE code (the float reductions, run
# between kernel_fpu_begin() and kernel_fpu_end()). Kernels that define
# CC_FLAGS_FPU (6.12) say how; 6.1 does not, so do what amdgpu's dml Makefile
# does on x86 there. Either way drop the kernel's flags forbidding SSE and
# x87 rather than rely on a later -msse overriding an earlier -mno-sse.
ifdef CC_FLAGS_FPU
CFLAGS_$(FPU_OBJ) += $(CC_FLAGS_FPU)
CFLAGS_REMOVE_$(FPU_OBJ) += $(CC_FLAGS_NO_FPU)
else
CFLAGS_$(FPU_OBJ) += -msse -msse2
endif
CFLAGS_REMOVE_$(FPU_OBJ) += -mno-sse -mno-sse2 -mno-80387 -mno-fp-ret-in-387

// SPDX-License-Identifier: GPL-2.0
/*
 * The reduction core in the module: which implementation the datapath
 * uses (the fastest this CPU has, timed at load, or the one the "simd"
 * parameter names), and the datapath's calls into the core, each inside an
 * FPU section when the context allows one, else with the scalar code, which
 * gives the same bits. The core itself (core/reduce.c, reduce_fpu.c) is
 * pure C, built natively too.
 */

#include <linux/bug.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/moduleparam.h>
#include <linux/printk.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#ifdef CONFIG_X86
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>
#include <asm/simd.h>
#endif
#include "reduce.h"
#include "simd.h"

/**
 * netagg_simd_best() - The fastest implementation this CPU supports.
 *
 * By cpuid and the OS's saving of the vector registers (XCR0): the kernel's
 * own view of them in a module, the compiler runtime's natively. AVX2 counts
 * with F16C only, which every CPU with AVX2 has.
 *
 * Return: the implementation.
 */
enum netagg_simd netagg_simd_best(void)
{
#ifdef CONFIG_X86_64
	/*
	 * As the AVX2 crypto glue code asks: the CPU and the saved state.
	 * F16C came before AVX2 on every x86 line; the float16 code uses it.
	 */
	if (boot_cpu_has(X86_FEATURE_AVX) && boot_cpu_has(X86_FEATURE_AVX2) &&
	    boot_cpu_has(X86_FEATURE_F16C) &&
	    cpu_has_xfeatures(XFEATURE_MASK_SSE | XFEATURE_MASK_YMM, NULL))
		return NETAGG_SIMD_AVX2;
	return NETAGG_SIMD_SSE2;
#else
	return NETAGG_SIMD_SCALAR;
#endif
}

/*
 * The implementation the datapath uses, chosen once at load: the fastest
 * (netagg_simd_calibrate()), or the one the "simd" module parameter names
 * (to compare them, or to rule the vector code out). -1 until then: "auto".
 */
static int netagg_simd = -1;

static int netagg_simd_param_set(const char *val, const struct kernel_param *kp)
{
	int i;

	if (sysfs_streq(val, "auto")) {
		netagg_simd = -1;
		return 0;
	}
	i = sysfs_match_string(netagg_simd_names, val);
	if (i < 0)
		return -EINVAL;
	netagg_simd = i;
	return 0;
}

static int netagg_simd_param_get(char *buf, const struct kernel_param *kp)
{
	if (netagg_simd < 0)
		return sysfs_emit(buf, "auto\n");
	return sysfs_emit(buf, "%s\n", netagg_simd_names[netagg_simd]);
}

static const struct kernel_param_ops netagg_simd_param_ops = {
	.set = netagg_simd_param_set,
	.get = netagg_simd_param_get,
};

module_param_cb(simd, &netagg_simd_param_ops, NULL, 0444);
MODULE_PARM_DESC(simd, "reduction code: auto (default), scalar, sse2 or avx2");

/*
 * The vector code when this context may touch the FPU (softirq mostly may,
 * unless it interrupted a kernel FPU section); else the scalar code, which
 * gives the same bits: kernel_fpu_begin() loads the default MXCSR, round to
 * nearest without FTZ/DAZ, whatever the interrupted task had set.
 */
static enum netagg_simd netagg_fpu_begin(enum netagg_simd want)
{
#ifdef CONFIG_X86
	if (want > NETAGG_SIMD_SCALAR && may_use_simd()) {
		kernel_fpu_begin();
		return want;
	}
#endif
	return NETAGG_SIMD_SCALAR;
}

static void netagg_fpu_end(enum netagg_simd simd)
{
#ifdef CONFIG_X86
	if (simd != NETAGG_SIMD_SCALAR)
		kernel_fpu_end();
#endif
}

/*
 * Load time: the fastest of the implementations this CPU has, by timing
 * each on what the datapath runs, a VID's sum of four children's packets,
 * FPU section included, as crypto/xor.c calibrates xor_blocks(). The widest
 * is not always the fastest: an emulated CPU may run AVX2 slower than SSE2,
 * and some CPUs clock down for it.
 */
#define NETAGG_CALIBRATE_ELEMS	512	/* 2 KiB: a packet's payload */
#define NETAGG_CALIBRATE_INPUTS	4
#define NETAGG_CALIBRATE_RUNS	8

static u64 netagg_simd_time(enum netagg_simd simd, u32 *dst,
			    const void *const *src)
{
	u64 t, best = U64_MAX;
	int i;

	for (i = 0; i < NETAGG_CALIBRATE_RUNS; i++) {
		t = ktime_get_ns();
		/* Module init may use the FPU: simd comes back unchanged. */
		simd = netagg_fpu_begin(simd);
		netagg_add_many(simd, NETAGG_DTYPE_F32, dst, src,
				NETAGG_CALIBRATE_INPUTS, NETAGG_CALIBRATE_ELEMS);
		netagg_fpu_end(simd);
		best = min(best, ktime_get_ns() - t);
	}
	return best;
}

static int netagg_simd_calibrate(enum netagg_simd best)
{
	const void *src[NETAGG_CALIBRATE_INPUTS];
	u64 ns[NETAGG_SIMD_NUM] = {};
	enum netagg_simd simd;
	char times[64] = "";
	int i, len = 0;
	u32 *buf;

	buf = kmalloc_array(NETAGG_CALIBRATE_INPUTS + 1,
			    NETAGG_CALIBRATE_ELEMS * sizeof(u32), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	/* Ordinary numbers: 1.0 and 2^-10, no special-case paths. */
	for (i = 0; i < NETAGG_CALIBRATE_ELEMS; i++)
		buf[i] = i & 1 ? 0x3a800000 : 0x3f800000;
	for (i = 0; i < NETAGG_CALIBRATE_INPUTS; i++) {
		memcpy(buf + (i + 1) * NETAGG_CALIBRATE_ELEMS, buf,
		       NETAGG_CALIBRATE_ELEMS * sizeof(u32));
		src[i] = buf + (i + 1) * NETAGG_CALIBRATE_ELEMS;
	}
	netagg_simd = NETAGG_SIMD_SCALAR;
	for (simd = NETAGG_SIMD_SCALAR; simd <= best; simd++) {
		ns[simd] = netagg_simd_time(simd, buf, src);
		if (ns[simd] < ns[netagg_simd])
			netagg_simd = simd;
		len += scnprintf(times + len, sizeof(times) - len, "%s%s %llu ns",
				 len ? ", " : "", netagg_simd_names[simd],
				 ns[simd]);
	}
	kfree(buf);
	pr_info("sums with %s code (4 x 2 KiB of f32: %s)\n",
		netagg_simd_names[netagg_simd], times);
	return 0;
}

/**
 * netagg_reduce_init() - Choose the implementation, at module load.
 *
 * The "simd" parameter's, or the fastest of those the CPU has on a sum of
 * four 2 KiB payloads.
 *
 * Return: 0, -EINVAL if the CPU lacks the one asked for, or -ENOMEM.
 */
int netagg_reduce_init(void)
{
	enum netagg_simd best = netagg_simd_best();

	if (netagg_simd > (int)best) {
		pr_err("simd=%s: this CPU has no more than %s\n",
		       netagg_simd_names[netagg_simd], netagg_simd_names[best]);
		return -EINVAL;
	}
	if (netagg_simd < 0)
		return netagg_simd_calibrate(best);
	pr_info("sums with %s code, as told\n",
		netagg_simd_names[netagg_simd]);
	return 0;
}

/**
 * netagg_sum_many() - dst = src[0] + ... + src[k - 1] in the datapath.
 * @dtype: enum netagg_dtype, checked by the hook
 * @dst: the sum, apart from every input; float32 accumulators for a half type
 * @src: the @k inputs, wire elements
 * @k: 1..NETAGG_CHILDREN_MAX
 * @n: elements
 *
 * Every child's contribution of a VID at once, in the order given: the same
 * bits whatever order they came in. With the implementation chosen at load
 * when the context may use the FPU, else the scalar code: the same bits.
 */
void netagg_sum_many(u8 dtype, void *dst, const void *const *src,
		     unsigned int k, unsigned int n)
{
	enum netagg_simd simd = netagg_fpu_begin(netagg_simd);

	WARN_ON_ONCE(netagg_add_many(simd, dtype, dst, src, k, n));
	netagg_fpu_end(simd);
}

/**
 * netagg_copy() - Copy a payload into one or several buffers.
 * @dst: the buffers
 * @n: how many
 * @src: the payload
 * @len: its bytes
 *
 * A payload into its slot, or a result into every child's packet: one read of
 * it, and no FPU section per packet. Vector moves, where the kernel's
 * memcpy() may move eight bytes at a time.
 */
void netagg_copy(void *const *dst, unsigned int n, const void *src,
		 unsigned int len)
{
	enum netagg_simd simd = netagg_fpu_begin(netagg_simd);

	netagg_broadcast(simd, dst, n, src, len);
	netagg_fpu_end(simd);
}

/**
 * netagg_from_acc() - Float32 accumulators rounded to half elements in place.
 * @dtype: NETAGG_DTYPE_F16 or NETAGG_DTYPE_BF16
 * @acc: the accumulators; the wire elements afterwards
 * @n: elements
 */
void netagg_from_acc(u8 dtype, void *acc, unsigned int n)
{
	enum netagg_simd simd = netagg_fpu_begin(netagg_simd);

	WARN_ON_ONCE(netagg_narrow(simd, dtype, acc, acc, n));
	netagg_fpu_end(simd);
}

/**
 * netagg_scale() - Divide a sum by its contributors (op avg), in the datapath.
 * @dtype: enum netagg_dtype
 * @dst: the sum; float32 accumulators for a half type
 * @n: elements
 * @divisor: the contributors; 0 or 1 leaves @dst alone
 */
void netagg_scale(u8 dtype, void *dst, unsigned int n, u32 divisor)
{
	enum netagg_simd simd;

	if (divisor <= 1)
		return;
	simd = netagg_fpu_begin(netagg_simd);
	WARN_ON_ONCE(netagg_div(simd, dtype, dst, n, divisor));
	netagg_fpu_end(simd);
}

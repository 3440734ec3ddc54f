// SPDX-License-Identifier: GPL-2.0
/*
 * The reduction core, integer only. The kernel builds without FP registers
 * (-mno-sse -mno-80387), so the soft float below is the fallback whenever
 * SSE is unusable; it is also built natively by tests/unit, which holds it
 * bit for bit against the hardware.
 */

#include "half.h"
#include "reduce.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "netagg reads little-endian payload elements natively"
#endif

/**
 * netagg_reduce_i32() - Sum int32 elements, wrapping.
 * @dst: the sum, added to
 * @src: what is added
 * @n: elements
 *
 * dst[i] += src[i], in two's complement.
 */
void netagg_reduce_i32(u32 *dst, const u32 *src, unsigned int n)
{
	unsigned int i;

	/* Unsigned, so that overflow wraps instead of being undefined. */
	for (i = 0; i < n; i++)
		dst[i] += src[i];
}

/**
 * netagg_div_i32() - Divide int32 elements.
 * @dst: the elements, divided in place
 * @n: elements
 * @divisor: 1..65535
 *
 * As s32, truncating toward zero.
 */
void netagg_div_i32(u32 *dst, unsigned int n, u32 divisor)
{
	unsigned int i;

	/* divisor <= 65535: no S32_MIN / -1 overflow. */
	for (i = 0; i < n; i++)
		dst[i] = (s32)dst[i] / (s32)divisor;
}

/*
 * binary32: sign bit 31, biased exponent 30..23, fraction 22..0. Values are
 * handled as a sign, an exponent e and an integer mantissa m with
 * |x| = m * 2^(e - 150), the implicit bit being bit 23 of m. Subnormals
 * (exponent field 0) have the scale of field 1 without the implicit bit.
 */
#define F32_SIGN	0x80000000u
#define F32_INF		0x7f800000u
#define F32_QUIET	0x00400000u
#define F32_DEFAULT_NAN	0xffc00000u	/* what SSE returns for inf - inf */

static bool f32_is_nan(u32 x)
{
	return (x & ~F32_SIGN) > F32_INF;
}

/*
 * m >> n, with any 1 shifted out kept in bit 0 ("sticky"). With the 39 or
 * more guard bits below, no lost bit can decide a rounding of these sums
 * and quotients; jamming keeps them right by construction all the same.
 */
static u64 shr_jam(u64 m, unsigned int n)
{
	if (!n)
		return m;
	if (n < 64)
		return m >> n | !!(m << (64 - n));
	return !!m;
}

/*
 * Round to nearest even and pack |x| = m * 2^(e - 190), m normalised to bit
 * 63, carrying a sticky bit in bit 0 if the true value had more bits. The
 * 40 bits below the 24 kept ones give the rounding direction; the sticky
 * bit only decides between "exactly half" and "above half".
 */
static u32 f32_pack(u32 sign, int e, u64 m)
{
	u64 rest;
	u32 r;

	if (e >= 255)
		return sign | F32_INF;
	if (e < 1) {
		/* Subnormal: fewer bits are left for the mantissa. */
		m = shr_jam(m, 1 - e);
		e = 1;
	}
	r = m >> 40;
	rest = m & ((1ull << 40) - 1);
	if (rest > 1ull << 39 || (rest == 1ull << 39 && (r & 1)))
		r++;
	/*
	 * Adding (e - 1) << 23 to r, whose bit 23 is the implicit bit, sets
	 * the exponent field to e; a subnormal r (no bit 23) gets field 0. A
	 * rounding carry out of the mantissa bumps the exponent, up to inf.
	 */
	return sign | (((u32)(e - 1) << 23) + r);
}

/* Exponent field and mantissa with the implicit bit, subnormals as field 1 */
static u32 f32_unpack(u32 x, int *e)
{
	u32 m = x & 0x7fffff;

	*e = x >> 23 & 0xff;
	if (*e)
		return m | 0x800000;
	*e = 1;
	return m;
}

/* a + b in round to nearest even, as x86 addss with a as the destination. */
static u32 f32_add(u32 a, u32 b)
{
	int ea, eb, lz;
	u64 ma, mb, m;
	u32 t;

	/* SSE returns the first NaN operand, quieted. */
	if (f32_is_nan(a))
		return a | F32_QUIET;
	if (f32_is_nan(b))
		return b | F32_QUIET;
	/* |a| >= |b|: the result has a's sign, and if b is inf so is a. */
	if ((a & ~F32_SIGN) < (b & ~F32_SIGN)) {
		t = a;
		a = b;
		b = t;
	}
	if ((a & ~F32_SIGN) == F32_INF)
		return (b & ~F32_SIGN) == F32_INF && a != b ? F32_DEFAULT_NAN : a;

	/* Bit 62 for the implicit bit leaves bit 63 for the carry. */
	ma = (u64)f32_unpack(a, &ea) << 39;
	mb = (u64)f32_unpack(b, &eb) << 39;
	mb = shr_jam(mb, ea - eb);
	m = (a ^ b) & F32_SIGN ? ma - mb : ma + mb;
	/* Exact cancellation is +0 in round to nearest; -0 + -0 stays -0. */
	if (!m)
		return a & b & F32_SIGN;
	lz = __builtin_clzll(m);
	return f32_pack(a & F32_SIGN, ea + 1 - lz, m << lz);
}

/* a / d for an integer 1 <= d <= 65535, as x86 divss by (float)d. */
static u32 f32_div(u32 a, u32 d)
{
	int e, lz;
	u64 m, q;

	if (f32_is_nan(a))
		return a | F32_QUIET;
	/* inf and zero divided by a positive number keep their value. */
	if ((a & ~F32_SIGN) == F32_INF || !(a & ~F32_SIGN))
		return a;

	m = f32_unpack(a, &e);
	lz = __builtin_clzll(m);
	m <<= lz;
	/*
	 * m >= 2^63 and d < 2^16 leave q at least 48 significant bits, plenty
	 * for 24 bits and the rounding; a remainder only sets the sticky bit.
	 * A u64 by u32 division is one instruction on x86-64.
	 */
	q = m / d;
	q |= m % d != 0;
	e += 40 - lz;
	lz = __builtin_clzll(q);
	return f32_pack(a & F32_SIGN, e - lz, q << lz);
}

/**
 * netagg_reduce_f32_soft() - Sum float32 elements, integer code only.
 * @dst: the sum, added to
 * @src: what is added
 * @n: elements
 *
 * The same bits as SSE's addss with @dst first, in round to nearest without
 * FTZ or DAZ.
 */
void netagg_reduce_f32_soft(u32 *dst, const u32 *src, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		dst[i] = f32_add(dst[i], src[i]);
}

/**
 * netagg_div_f32_soft() - Divide float32 elements, integer code only.
 * @dst: the elements, divided in place
 * @n: elements
 * @divisor: 1..65535
 *
 * The same bits as SSE's divss.
 */
void netagg_div_f32_soft(u32 *dst, unsigned int n, u32 divisor)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		dst[i] = f32_div(dst[i], divisor);
}

/**
 * netagg_reduce_f16_soft() - Add float16 elements to float32 accumulators.
 * @dst: the accumulators
 * @src: the float16 elements
 * @n: elements
 *
 * dst[i] = dst[i] + widen(src[i]), one rounding per addition.
 */
void netagg_reduce_f16_soft(u32 *dst, const u16 *src, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		dst[i] = f32_add(dst[i], netagg_f16_to_f32(src[i]));
}

/**
 * netagg_reduce_bf16_soft() - Add bfloat16 elements to float32 accumulators.
 * @dst: the accumulators
 * @src: the bfloat16 elements
 * @n: elements
 *
 * dst[i] = dst[i] + widen(src[i]), one rounding per addition.
 */
void netagg_reduce_bf16_soft(u32 *dst, const u16 *src, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		dst[i] = f32_add(dst[i], netagg_bf16_to_f32(src[i]));
}

static void netagg_widen_soft(u8 dtype, u32 *dst, const u16 *src,
			      unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		dst[i] = dtype == NETAGG_DTYPE_F16 ? netagg_f16_to_f32(src[i]) :
						     netagg_bf16_to_f32(src[i]);
}

/* Front to back: element i is read (bytes 4i..) before 2i.. is written. */
static void netagg_narrow_soft(u8 dtype, u16 *dst, const u32 *src,
			       unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		dst[i] = dtype == NETAGG_DTYPE_F16 ? netagg_f32_to_f16(src[i]) :
						     netagg_f32_to_bf16(src[i]);
}

/* Element i of 4-byte (get32) or 2-byte (get16) elements at p, any alignment. */
static u32 get32(const void *p, unsigned int i)
{
	u32 x;

	memcpy(&x, (const u8 *)p + 4 * i, 4);
	return x;
}

static u16 get16(const void *p, unsigned int i)
{
	u16 x;

	memcpy(&x, (const u8 *)p + 2 * i, 2);
	return x;
}

/**
 * netagg_add_many_i32() - Sum k inputs of int32 elements in one pass, wrapping.
 * @dst: the sum, apart from every input
 * @src: the @k inputs
 * @k: 1..NETAGG_CHILDREN_MAX
 * @n: elements
 *
 * dst[i] = src[0][i] + ... + src[k - 1][i], in two's complement: four
 * elements a step, each input read once, @dst written once.
 */
void netagg_add_many_i32(u32 *dst, const void *const *src, unsigned int k,
			 unsigned int n)
{
	u32 a0, a1, a2, a3;
	unsigned int i, j;
	const void *p;

	for (i = 0; i + 4 <= n; i += 4) {
		a0 = get32(src[0], i);
		a1 = get32(src[0], i + 1);
		a2 = get32(src[0], i + 2);
		a3 = get32(src[0], i + 3);
		for (j = 1; j < k; j++) {
			p = src[j];
			a0 += get32(p, i);
			a1 += get32(p, i + 1);
			a2 += get32(p, i + 2);
			a3 += get32(p, i + 3);
		}
		dst[i] = a0;
		dst[i + 1] = a1;
		dst[i + 2] = a2;
		dst[i + 3] = a3;
	}
	for (; i < n; i++) {
		a0 = get32(src[0], i);
		for (j = 1; j < k; j++)
			a0 += get32(src[j], i);
		dst[i] = a0;
	}
}

/**
 * netagg_add_many_f32_soft() - Sum k inputs of float32 elements, integer code.
 * @dst: the sum, apart from every input
 * @src: the @k inputs
 * @k: 1..NETAGG_CHILDREN_MAX
 * @n: elements
 *
 * dst[i] = ((src[0][i] + src[1][i]) + src[2][i]) + ..., each addition
 * rounded as netagg_reduce_f32_soft() rounds it.
 */
void netagg_add_many_f32_soft(u32 *dst, const void *const *src,
			      unsigned int k, unsigned int n)
{
	unsigned int i, j;
	u32 acc;

	for (i = 0; i < n; i++) {
		acc = get32(src[0], i);
		for (j = 1; j < k; j++)
			acc = f32_add(acc, get32(src[j], i));
		dst[i] = acc;
	}
}

/**
 * netagg_add_many_f16_soft() - Sum k inputs of float16 elements in float32.
 * @dst: the float32 accumulators of the sum, apart from every input
 * @src: the @k inputs, float16 wire elements
 * @k: 1..NETAGG_CHILDREN_MAX
 * @n: elements
 *
 * Each element widened, exact, then summed as netagg_add_many_f32_soft().
 */
void netagg_add_many_f16_soft(u32 *dst, const void *const *src,
			      unsigned int k, unsigned int n)
{
	unsigned int i, j;
	u32 acc;

	for (i = 0; i < n; i++) {
		acc = netagg_f16_to_f32(get16(src[0], i));
		for (j = 1; j < k; j++)
			acc = f32_add(acc, netagg_f16_to_f32(get16(src[j], i)));
		dst[i] = acc;
	}
}

/**
 * netagg_add_many_bf16_soft() - Sum k inputs of bfloat16 elements in float32.
 * @dst: the float32 accumulators of the sum, apart from every input
 * @src: the @k inputs, bfloat16 wire elements
 * @k: 1..NETAGG_CHILDREN_MAX
 * @n: elements
 *
 * Each element widened, exact, then summed as netagg_add_many_f32_soft().
 */
void netagg_add_many_bf16_soft(u32 *dst, const void *const *src,
			       unsigned int k, unsigned int n)
{
	unsigned int i, j;
	u32 acc;

	for (i = 0; i < n; i++) {
		acc = netagg_bf16_to_f32(get16(src[0], i));
		for (j = 1; j < k; j++)
			acc = f32_add(acc, netagg_bf16_to_f32(get16(src[j], i)));
		dst[i] = acc;
	}
}

const char *const netagg_simd_names[NETAGG_SIMD_NUM] = {
	[NETAGG_SIMD_SCALAR] = "scalar",
	[NETAGG_SIMD_SSE2] = "sse2",
	[NETAGG_SIMD_AVX2] = "avx2",
};

/**
 * netagg_add() - dst = a + b, element by element.
 * @simd: the implementation; the caller makes sure it may be used
 * @dtype: enum netagg_dtype; for a half type @dst and @a are float32
 *         accumulators, @b wire elements
 * @dst: the sum
 * @a: the first addend, @dst or apart from it
 * @b: the second, apart from both
 * @n: elements
 *
 * Every implementation gives the same bits.
 *
 * Return: 0, or -EINVAL for an unknown dtype (@dst left alone).
 */
int netagg_add(enum netagg_simd simd, u8 dtype, void *dst, const void *a,
	       const void *b, unsigned int n)
{
	if (dtype == NETAGG_DTYPE_UNSPEC || dtype > NETAGG_DTYPE_MAX)
		return -EINVAL;
	/*
	 * The scalar code sums in place: the fallback, not worth a copy of
	 * it. a is 32-bit elements for every dtype (accumulators for halves).
	 */
	if (simd == NETAGG_SIMD_SCALAR && dst != a)
		memcpy(dst, a, n * sizeof(u32));
	switch (dtype) {
	case NETAGG_DTYPE_F32:
		if (simd == NETAGG_SIMD_AVX2)
			netagg_reduce_f32_avx2(dst, a, b, n);
		else if (simd == NETAGG_SIMD_SSE2)
			netagg_reduce_f32_sse2(dst, a, b, n);
		else
			netagg_reduce_f32_soft(dst, b, n);
		break;
	case NETAGG_DTYPE_I32:
		if (simd == NETAGG_SIMD_AVX2)
			netagg_reduce_i32_avx2(dst, a, b, n);
		else if (simd == NETAGG_SIMD_SSE2)
			netagg_reduce_i32_sse2(dst, a, b, n);
		else
			netagg_reduce_i32(dst, b, n);
		break;
	case NETAGG_DTYPE_F16:
		if (simd == NETAGG_SIMD_AVX2)
			netagg_reduce_f16_avx2(dst, a, b, n);
		else if (simd == NETAGG_SIMD_SSE2)
			netagg_reduce_f16_sse2(dst, a, b, n);
		else
			netagg_reduce_f16_soft(dst, b, n);
		break;
	case NETAGG_DTYPE_BF16:
		if (simd == NETAGG_SIMD_AVX2)
			netagg_reduce_bf16_avx2(dst, a, b, n);
		else if (simd == NETAGG_SIMD_SSE2)
			netagg_reduce_bf16_sse2(dst, a, b, n);
		else
			netagg_reduce_bf16_soft(dst, b, n);
		break;
	}
	return 0;
}

/**
 * netagg_reduce() - dst += src, element by element.
 * @simd: the implementation; the caller makes sure it may be used
 * @dtype: enum netagg_dtype; for a half type @dst holds float32 accumulators
 * @dst: the sum, added to
 * @src: what is added
 * @n: elements
 *
 * Return: 0, or -EINVAL for an unknown dtype (@dst left alone).
 */
int netagg_reduce(enum netagg_simd simd, u8 dtype, void *dst,
		  const void *src, unsigned int n)
{
	return netagg_add(simd, dtype, dst, dst, src, n);
}

/**
 * netagg_add_many() - dst = src[0] + ... + src[k - 1], element by element.
 * @simd: the implementation; the caller makes sure it may be used
 * @dtype: enum netagg_dtype; for a half type @dst holds float32
 *         accumulators, @src wire elements
 * @dst: the sum, apart from every input
 * @src: the @k inputs
 * @k: 1..NETAGG_CHILDREN_MAX; 1 copies (widens) @src[0]
 * @n: elements
 *
 * Added left to right, (((s0 + s1) + s2) + ...): the same bits as k - 1
 * two-input sums in that order, in every implementation.
 *
 * Return: 0, or -EINVAL for an unknown dtype or k 0 (@dst left alone).
 */
int netagg_add_many(enum netagg_simd simd, u8 dtype, void *dst,
		    const void *const *src, unsigned int k, unsigned int n)
{
	if (dtype == NETAGG_DTYPE_UNSPEC || dtype > NETAGG_DTYPE_MAX || !k)
		return -EINVAL;
	switch (dtype) {
	case NETAGG_DTYPE_F32:
		if (simd == NETAGG_SIMD_AVX2)
			netagg_add_many_f32_avx2(dst, src, k, n);
		else if (simd == NETAGG_SIMD_SSE2)
			netagg_add_many_f32_sse2(dst, src, k, n);
		else
			netagg_add_many_f32_soft(dst, src, k, n);
		break;
	case NETAGG_DTYPE_I32:
		if (simd == NETAGG_SIMD_AVX2)
			netagg_add_many_i32_avx2(dst, src, k, n);
		else if (simd == NETAGG_SIMD_SSE2)
			netagg_add_many_i32_sse2(dst, src, k, n);
		else
			netagg_add_many_i32(dst, src, k, n);
		break;
	case NETAGG_DTYPE_F16:
		if (simd == NETAGG_SIMD_AVX2)
			netagg_add_many_f16_avx2(dst, src, k, n);
		else if (simd == NETAGG_SIMD_SSE2)
			netagg_add_many_f16_sse2(dst, src, k, n);
		else
			netagg_add_many_f16_soft(dst, src, k, n);
		break;
	case NETAGG_DTYPE_BF16:
		if (simd == NETAGG_SIMD_AVX2)
			netagg_add_many_bf16_avx2(dst, src, k, n);
		else if (simd == NETAGG_SIMD_SSE2)
			netagg_add_many_bf16_sse2(dst, src, k, n);
		else
			netagg_add_many_bf16_soft(dst, src, k, n);
		break;
	}
	return 0;
}

/**
 * netagg_div() - dst /= divisor, element by element.
 * @simd: the implementation; the caller makes sure it may be used
 * @dtype: enum netagg_dtype; for a half type @dst holds float32 accumulators
 * @dst: the elements, divided in place
 * @n: elements
 * @divisor: 1..65535
 *
 * Return: 0, or -EINVAL for an unknown dtype (@dst left alone).
 */
int netagg_div(enum netagg_simd simd, u8 dtype, void *dst, unsigned int n,
	       u32 divisor)
{
	switch (dtype) {
	case NETAGG_DTYPE_F32:
	case NETAGG_DTYPE_F16:
	case NETAGG_DTYPE_BF16:
		/* The half types are divided as their float32 accumulators. */
		if (simd == NETAGG_SIMD_AVX2)
			netagg_div_f32_avx2(dst, n, divisor);
		else if (simd == NETAGG_SIMD_SSE2)
			netagg_div_f32_sse2(dst, n, divisor);
		else
			netagg_div_f32_soft(dst, n, divisor);
		return 0;
	case NETAGG_DTYPE_I32:
		/* No vector integer division on x86: always the scalar one. */
		netagg_div_i32(dst, n, divisor);
		return 0;
	}
	return -EINVAL;
}

/**
 * netagg_widen() - Fill float32 accumulators from half elements.
 * @simd: the implementation; the caller makes sure it may be used
 * @dtype: NETAGG_DTYPE_F16 or NETAGG_DTYPE_BF16
 * @dst: the accumulators
 * @src: the wire elements
 * @n: elements
 *
 * Return: 0, or -EINVAL for any other dtype.
 */
int netagg_widen(enum netagg_simd simd, u8 dtype, void *dst, const void *src,
		 unsigned int n)
{
	if (!netagg_dtype_half(dtype))
		return -EINVAL;
	if (simd == NETAGG_SIMD_AVX2)
		(dtype == NETAGG_DTYPE_F16 ? netagg_widen_f16_avx2 :
					     netagg_widen_bf16_avx2)(dst, src, n);
	else if (simd == NETAGG_SIMD_SSE2)
		(dtype == NETAGG_DTYPE_F16 ? netagg_widen_f16_sse2 :
					     netagg_widen_bf16_sse2)(dst, src, n);
	else
		netagg_widen_soft(dtype, dst, src, n);
	return 0;
}

/**
 * netagg_narrow() - Round float32 accumulators to half elements.
 * @simd: the implementation; the caller makes sure it may be used
 * @dtype: NETAGG_DTYPE_F16 or NETAGG_DTYPE_BF16
 * @dst: the wire elements; may be @src
 * @src: the accumulators
 * @n: elements
 *
 * To nearest even; NaNs stay NaNs, quiet.
 *
 * Return: 0, or -EINVAL for any other dtype.
 */
int netagg_narrow(enum netagg_simd simd, u8 dtype, void *dst, const void *src,
		  unsigned int n)
{
	if (!netagg_dtype_half(dtype))
		return -EINVAL;
	if (simd == NETAGG_SIMD_AVX2)
		(dtype == NETAGG_DTYPE_F16 ? netagg_narrow_f16_avx2 :
					     netagg_narrow_bf16_avx2)(dst, src, n);
	else if (simd == NETAGG_SIMD_SSE2)
		(dtype == NETAGG_DTYPE_F16 ? netagg_narrow_f16_sse2 :
					     netagg_narrow_bf16_sse2)(dst, src, n);
	else
		netagg_narrow_soft(dtype, dst, src, n);
	return 0;
}

/**
 * netagg_broadcast() - Copy one buffer into several.
 * @simd: the implementation; the caller makes sure it may be used
 * @dst: the buffers, none overlapping @src
 * @n: how many
 * @src: the bytes
 * @len: how many bytes
 *
 * A result written once per child, read once.
 */
void netagg_broadcast(enum netagg_simd simd, void *const *dst, unsigned int n,
		      const void *src, unsigned int len)
{
	unsigned int i;

	if (simd == NETAGG_SIMD_AVX2) {
		netagg_broadcast_avx2(dst, n, src, len);
	} else if (simd == NETAGG_SIMD_SSE2) {
		netagg_broadcast_sse2(dst, n, src, len);
	} else {
		for (i = 0; i < n; i++)
			memcpy(dst[i], src, len);
	}
}

/* Natively (tests/unit, tests/tools); the module's is in simd.c. */
#ifndef __KERNEL__

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
#if defined(__x86_64__)
	/* libgcc checks XCR0 too: AVX2 only if the OS saves the YMM state. */
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c"))
		return NETAGG_SIMD_AVX2;
	return NETAGG_SIMD_SSE2;
#else
	return NETAGG_SIMD_SCALAR;
#endif
}

#endif /* !__KERNEL__ */

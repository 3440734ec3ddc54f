// SPDX-License-Identifier: GPL-2.0
/*
 * Native unit tests of the reduction core: core/reduce.c and
 * core/reduce_fpu.c built for userspace. The soft float is held bit for bit
 * against the host's SSE (addss/divss through inline asm, so the compiler
 * can neither fold nor reorder the operands and the x86 NaN rule is what is
 * compared), in round to nearest with FTZ and DAZ off; then every vector
 * implementation the host can run (SSE2, AVX2) is held against the scalar
 * one, f32 and i32, at every length and byte misalignment. The half types
 * (f16, bf16: float32 accumulators, 2-byte wire elements) are held, in
 * every implementation, against half.h's conversions (which test_half.c
 * holds against references) and the soft float32 sum: widening all 65,536
 * inputs, narrowing the values that decide roundings, and sums. The K-input
 * sums (netagg_add_many()), every dtype and implementation, are held
 * against K - 1 two-input sums of the scalar code in the same order, bit
 * for bit, on data where another order gives other bits.
 *
 * Output: KTAP, "ok N what" / "not ok N what" under the plan "1..UNIT_CASES"
 * (an implementation this CPU lacks skips each of its cases, with the
 * reason), then "# unit: P passed, F failed, S skipped"; the exit status is
 * 1 if anything failed.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "half.h"
#include "reduce.h"
#include "unit.h"

#define MXCSR_DEFAULT	0x1f80	/* all exceptions masked, RN, no FTZ/DAZ */

/*
 * The plan: what test_simd() runs per vector implementation, and the rest.
 * A case added or removed without changing these fails the suite.
 */
#define SIMD_CASES	7
#define HALF_CASES	6	/* per implementation, scalar too */
#define MANY_CASES	4	/* per implementation, scalar too: each dtype */
#define UNIT_CASES	(18 + HALF_CASES + MANY_CASES + \
			 (SIMD_CASES + HALF_CASES + MANY_CASES) * \
			 (NETAGG_SIMD_NUM - 1))

/* The hardware: addss/divss with the destination first, as the spec says. */
static u32 hw_add(u32 a, u32 b)
{
	float x = u2f(a), y = u2f(b);

	asm("addss %1, %0" : "+x" (x) : "x" (y));
	return f2u(x);
}

static u32 hw_div(u32 a, u32 d)
{
	float x = u2f(a), y = (float)d;

	asm("divss %1, %0" : "+x" (x) : "x" (y));
	return f2u(x);
}

static u32 soft_add(u32 a, u32 b)
{
	netagg_reduce_f32_soft(&a, &b, 1);
	return a;
}

static u32 soft_div(u32 a, u32 d)
{
	netagg_div_f32_soft(&a, 1, d);
	return a;
}

static unsigned long checks;

/* Bit-exact, NaNs included: the quieted NaN of the first NaN operand. */
static void check_add(u32 a, u32 b)
{
	u32 s = soft_add(a, b), h = hw_add(a, b);

	checks++;
	if (s != h)
		mismatch("%08x + %08x: soft %08x, sse %08x", a, b, s, h);
}

static void check_div(u32 a, u32 d)
{
	u32 s = soft_div(a, d), h = hw_div(a, d);

	checks++;
	if (s != h)
		mismatch("%08x / %u: soft %08x, sse %08x", a, d, s, h);
}

static const u32 specials[] = {
	0x00000000, 0x00000001, 0x00000002, 0x00000003, 0x003fffff,
	0x00400000, 0x007ffffe, 0x007fffff,		/* subnormals */
	0x00800000, 0x00800001, 0x00ffffff, 0x01000000,	/* smallest normals */
	0x33800000, 0x33800001, 0x34000000,		/* 2^-24, 2^-23 */
	0x3f7fffff, 0x3f800000, 0x3f800001, 0x3fffffff,	/* around 1 */
	0x4b000000, 0x4b7fffff, 0x4b800000,		/* 2^23, 2^24 */
	0x7effffff, 0x7f000000, 0x7f7ffffe, 0x7f7fffff,	/* largest normals */
	0x7f800000,					/* inf */
	0x7f800001, 0x7fbfffff,				/* signalling NaNs */
	0x7fc00000, 0x7fc00001, 0x7fffffff,		/* quiet NaNs */
};

#define NSPEC	(2 * sizeof(specials) / sizeof(specials[0]))

static u32 special(unsigned int i)
{
	/* Each value with both signs. */
	return specials[i / 2] | (i & 1 ? 0x80000000 : 0);
}

static u32 mk(u32 sign, u32 exp, u32 mant)
{
	return sign << 31 | exp << 23 | (mant & 0x7fffff);
}

/* A gradient-like value: |x| in about [1e-9, 0.25), either sign. */
static u32 gradient(void)
{
	u64 r = rnd64();

	return mk(r & 1, 97 + (r >> 1) % 28, r >> 32);
}

static void test_host(void)
{
	u32 csr;

	__builtin_ia32_ldmxcsr(MXCSR_DEFAULT);
	csr = __builtin_ia32_stmxcsr();
	if ((csr & 0xffc0) != MXCSR_DEFAULT)	/* RC, FTZ, DAZ, masks */
		mismatch("MXCSR %08x", csr);
	/* And the C compiler's float agrees with the asm (no x87, no FTZ). */
	if (f2u(u2f(0x00800000) * 0.5f) != 0x00400000 ||
	    f2u(u2f(0x3f800000) + u2f(0x33800000)) != 0x3f800000)
		mismatch("C float arithmetic is not IEEE binary32");
	result("host SSE: binary32, round to nearest, no FTZ/DAZ");
}

static void test_add_specials(void)
{
	unsigned int i, j;
	int di, dj;
	u32 a, b;

	checks = 0;
	/* Every pair of specials and of their neighbours in bit order. */
	for (i = 0; i < NSPEC; i++)
		for (j = 0; j < NSPEC; j++)
			for (di = -1; di <= 1; di++)
				for (dj = -1; dj <= 1; dj++) {
					a = special(i) + di;
					b = special(j) + dj;
					check_add(a, b);
				}
	result("add: special values and neighbours, all pairs (%lu)", checks);

	/* The rules spelt out, in case the host itself were wrong. */
	if (soft_add(0x7f800000, 0xff800000) != 0xffc00000 ||
	    soft_add(0x80000000, 0x80000000) != 0x80000000 ||
	    soft_add(0x80000000, 0x00000000) != 0x00000000 ||
	    soft_add(0x3f800000, 0xbf800000) != 0x00000000 ||
	    soft_add(0x7f800001, 0xffc00002) != 0x7fc00001 ||
	    soft_add(0x3f800000, 0xff800003) != 0xffc00003 ||
	    soft_add(0x7f7fffff, 0x7f7fffff) != 0x7f800000 ||
	    soft_add(0x00000001, 0x80000001) != 0x00000000)
		mismatch("a spelt-out IEEE/x86 rule");
	result("add: inf-inf is 0xffc00000, dst NaN wins, x-x=+0, -0+-0=-0");
}

static void test_add_sweep(void)
{
	static const u32 exps[] = { 1, 2, 3, 23, 24, 25, 26, 100, 127, 128,
				    200, 253, 254 };
	static const u32 fixed[] = { 0, 1, 2, 3, 0x7fffff, 0x7ffffe, 0x400000,
				     0x400001, 0x3fffff, 0x200000, 0xfff,
				     0x7ff000 };
	u32 mant[20], ea, eb, a, b;
	unsigned int d, i, j, k, s;

	checks = 0;
	for (d = 0; d <= 40; d++) {
		for (k = 0; k < sizeof(exps) / sizeof(exps[0]); k++) {
			ea = exps[k];
			if (ea < d)
				continue;
			eb = ea - d;	/* 0: b is subnormal */
			memcpy(mant, fixed, sizeof(fixed));
			for (i = sizeof(fixed) / 4; i < 20; i++)
				mant[i] = rnd32();
			for (i = 0; i < 20; i++)
				for (j = 0; j < 20; j++)
					for (s = 0; s < 4; s++) {
						a = mk(s & 1, ea, mant[i]);
						b = mk(s >> 1, eb, mant[j]);
						check_add(a, b);
						check_add(b, a);
					}
		}
	}
	result("add: exponent differences 0..40, edge and random mantissas (%lu)",
	       checks);
}

static void test_add_ties(void)
{
	unsigned int i, d;
	u32 ea, mb, r;

	/*
	 * b's significand bits below a's last place are exactly 100...0: a
	 * tie, unless the operation moves a's last place by a bit.
	 */
	checks = 0;
	for (i = 0; i < 1000000; i++) {
		d = 1 + i % 24;
		ea = 30 + rnd32() % 200;
		mb = (rnd32() | 0x800000) & ~((1u << d) - 1);
		mb |= 1u << (d - 1);
		r = rnd32();
		check_add(mk(r & 1, ea, rnd32()), mk(r >> 1 & 1, ea - d, mb));
	}
	result("add: ties to even, same and opposite signs (%lu)", checks);

	/* Two worked ties: 1 + 2^-24 stays 1, (1 + 2^-23) + 2^-24 goes up. */
	if (soft_add(0x3f800000, 0x33800000) != 0x3f800000 ||
	    soft_add(0x3f800001, 0x33800000) != 0x3f800002)
		mismatch("1 + 2^-24 ties");
	result("add: 1 + 2^-24 = 1, (1 + 2^-23) + 2^-24 = 1 + 2^-22");
}

static void test_add_random(void)
{
	unsigned int i;
	u32 a, b;

	checks = 0;
	for (i = 0; i < 10000000; i++)
		check_add(rnd32(), rnd32());
	result("add: random bit patterns (%lu)", checks);

	/* Random patterns mostly differ in exponent by far: bring them close */
	checks = 0;
	for (i = 0; i < 5000000; i++) {
		a = rnd32();
		b = (a & 0x7f800000) + ((rnd32() % 61) << 23) - (30u << 23);
		b = (rnd32() & 0x807fffff) | (b & 0x7f800000);
		check_add(a, b);
	}
	result("add: random, exponents within 30 (%lu)", checks);
}

static void test_add_gradients(void)
{
	unsigned int i;
	u32 acc = 0, g;

	/* Running sums of up to 64 contributions, as a tree slot sees them. */
	checks = 0;
	for (i = 0; checks < 10000000; i++) {
		g = gradient();
		if (i % 64 == 0) {
			acc = g;
			continue;
		}
		check_add(acc, g);
		acc = hw_add(acc, g);
	}
	result("add: realistic gradients, running sums of 64 (%lu)", checks);
}

static void test_div(void)
{
	unsigned int i, j, k, d;
	u32 a;

	checks = 0;
	for (i = 0; i < NSPEC; i++)
		for (d = 1; d <= 65535; d++)
			check_div(special(i), d);
	result("div: special values by every divisor 1..65535 (%lu)", checks);

	/* Small and subnormal results: exponents 0..40, divisors near 2^k */
	checks = 0;
	for (i = 0; i <= 40; i++)
		for (j = 0; j < 259; j++) {
			/* mantissas 0, 1, all ones, then random */
			a = j == 0 ? 0 : j == 1 ? 1 : j == 2 ? 0x7fffff : rnd32();
			a = mk(rnd32() & 1, i, a);
			for (k = 0; k < 16; k++) {
				check_div(a, (1u << k));
				check_div(a, (1u << k) + 1);
				if (k)
					check_div(a, (1u << k) - 1);
			}
			check_div(a, 65535);
		}
	/* Every small subnormal by 1..64: exact ties like 3 * 2^-149 / 2 */
	for (i = 0; i < 65536; i++)
		for (d = 1; d <= 64; d++)
			check_div(i, d);
	result("div: subnormal results and ties, exponents 0..40 (%lu)", checks);

	checks = 0;
	for (i = 0; i < 4000000; i++)
		check_div(rnd32(), 1 + rnd32() % 65535);
	for (i = 0; i < 1000000; i++)
		check_div(gradient(), 1 + rnd32() % 65535);
	result("div: random bit patterns and gradients, random divisors (%lu)",
	       checks);

	if (soft_div(0xff800000, 3) != 0xff800000 ||
	    soft_div(0x80000000, 3) != 0x80000000 ||
	    soft_div(0x7f800001, 1) != 0x7fc00001 ||
	    soft_div(0x00000001, 2) != 0x00000000 ||
	    soft_div(0x00000003, 2) != 0x00000002)
		mismatch("a spelt-out div rule");
	result("div: -inf/3 = -inf, -0/3 = -0, sNaN quieted, 2^-149 / 2 = 0");
}

static void test_i32(void)
{
	static const u32 add[][3] = {
		{ 0x7fffffff, 1, 0x80000000 },
		{ 0x80000000, 0x80000000, 0 },
		{ 0xffffffff, 0xffffffff, 0xfffffffe },
		{ (u32)-5, 3, (u32)-2 },
	};
	static const s32 div[][3] = {
		{ -7, 2, -3 }, { 7, 2, 3 }, { -1, 65535, 0 }, { 65534, 65535, 0 },
		{ -2147483647 - 1, 1, -2147483647 - 1 },
		{ -2147483647 - 1, 65535, -32768 },
		{ 2147483647, 65535, 32768 }, { -65535, 65535, -1 },
		{ -131069, 65535, -1 },
	};
	unsigned int i;
	u32 x, y;
	s64 q;

	for (i = 0; i < sizeof(add) / sizeof(add[0]); i++) {
		x = add[i][0];
		netagg_reduce_i32(&x, &add[i][1], 1);
		if (x != add[i][2])
			mismatch("%08x + %08x = %08x", add[i][0], add[i][1], x);
	}
	for (i = 0; i < 1000000; i++) {
		x = rnd32();
		y = rnd32();
		q = (u64)x + y;
		netagg_reduce_i32(&x, &y, 1);
		if (x != (u32)q)
			mismatch("random i32 sum");
	}
	result("i32 sum wraps around (%u)", i);

	for (i = 0; i < sizeof(div) / sizeof(div[0]); i++) {
		x = div[i][0];
		netagg_div_i32(&x, 1, div[i][1]);
		if ((s32)x != div[i][2])
			mismatch("%d / %d = %d", div[i][0], div[i][1], (s32)x);
	}
	/* Truncation toward zero, computed from magnitudes in 64 bits. */
	for (i = 0; i < 1000000; i++) {
		x = rnd32();
		y = 1 + rnd32() % 65535;
		q = (s32)x < 0 ? -(-(s64)(s32)x / y) : (s64)(s32)x / y;
		netagg_div_i32(&x, 1, y);
		if ((s32)x != q)
			mismatch("random i32 div");
	}
	result("i32 division truncates toward zero (%u)", i);
}

/* A value for the FPU tests: mostly gradients, some specials. */
static u32 fpu_value(void)
{
	u32 r = rnd32();

	return r % 8 ? gradient() : special(r % NSPEC);
}

#define GUARD	16
#define NMAX	300	/* past AVX2's unrolled step (32) several times */

/* dst, with guard bytes around it; src; each at a byte offset 0..3 */
struct bufs {
	u8 dst[GUARD + 4 * NMAX + 3 + GUARD], ref[GUARD + 4 * NMAX + 3 + GUARD];
	u8 src[4 * NMAX + 3];
};

static u32 get32(const u8 *p, unsigned int i)
{
	u32 x;

	memcpy(&x, p + 4 * i, 4);
	return x;
}

/*
 * Every implementation against the scalar one, bit for bit: in place
 * (netagg_reduce(), dst += src) or, @apart, into a third buffer
 * (netagg_add(), dst = a + src, with a the values dst had, now in ref).
 */
/*
 * The sum under test, dst at b->dst + GUARD + od, src at b->src + os: in
 * place (dst += src), or apart (dst = ref + src, ref a copy of what dst
 * held, dst overwritten first: what it held must not matter). b->ref keeps
 * the inputs for the check either way.
 */
static void sum_once(struct bufs *b, enum netagg_simd simd, u8 dtype,
		     unsigned int od, unsigned int os, unsigned int n, bool apart)
{
	u8 *d = b->dst + GUARD + od;
	unsigned int i;
	int err;

	memcpy(b->ref, b->dst, sizeof(b->dst));
	if (apart) {
		for (i = 0; i < 4 * n; i++)
			d[i] = rnd32();
		err = netagg_add(simd, dtype, d, b->ref + GUARD + od, b->src + os, n);
	} else {
		err = netagg_reduce(simd, dtype, d, b->src + os, n);
	}
	if (err)
		mismatch("%s: the sum failed", netagg_simd_names[simd]);
}

static void test_simd_sum(struct bufs *b, enum netagg_simd simd, u8 dtype,
			  bool apart)
{
	unsigned int n, od, os, i;
	u32 x, y, r, want;
	u8 *d;

	for (n = 0; n <= NMAX; n += n < 100 ? 1 : 37)
		for (od = 0; od < 4; od++)
			for (os = 0; os < 4; os++) {
				d = b->dst + GUARD + od;
				for (i = 0; i < sizeof(b->dst); i++)
					b->dst[i] = rnd32();
				for (i = 0; i < n; i++) {
					x = dtype == NETAGG_DTYPE_F32 ? fpu_value() : rnd32();
					memcpy(d + 4 * i, &x, 4);
					x = dtype == NETAGG_DTYPE_F32 ? fpu_value() : rnd32();
					memcpy(b->src + os + 4 * i, &x, 4);
				}
				sum_once(b, simd, dtype, od, os, n, apart);
				for (i = 0; i < n; i++) {
					x = get32(b->ref + GUARD + od, i);
					y = get32(b->src + os, i);
					r = get32(d, i);
					if (dtype == NETAGG_DTYPE_I32)
						want = x + y;
					else
						want = soft_add(x, y);
					/*
					 * Two NaNs: the compiler may swap the
					 * operands of +, so either comes out.
					 */
					if (dtype == NETAGG_DTYPE_F32 && is_nan(x) && is_nan(y) ?
					    !is_nan(r) || !(r & 0x400000) : r != want)
						mismatch("%s add n %u [%u]: %08x + %08x = %08x, not %08x",
							 netagg_simd_names[simd], n, i, x, y, r, want);
					memcpy(b->ref + GUARD + od + 4 * i, &r, 4);
				}
				if (memcmp(b->ref, b->dst, sizeof(b->dst)))
					mismatch("%s add wrote outside n %u",
						 netagg_simd_names[simd], n);
			}
	result("%s %s sum%s = scalar sum, n 0..%u, every byte misalignment",
	       netagg_simd_names[simd], dtype == NETAGG_DTYPE_F32 ? "f32" : "i32",
	       apart ? " into a third buffer" : "", NMAX);
}

static void test_simd_div(struct bufs *b, enum netagg_simd simd, u8 dtype)
{
	unsigned int n, od, i, dv;
	u32 x, r, want;
	u8 *d;

	for (n = 0; n <= NMAX; n += n < 100 ? 1 : 37)
		for (od = 0; od < 4; od++) {
			dv = 1 + rnd32() % (n % 2 ? 65535 : 64);
			d = b->dst + GUARD + od;
			for (i = 0; i < sizeof(b->dst); i++)
				b->dst[i] = rnd32();
			for (i = 0; i < n; i++) {
				x = dtype == NETAGG_DTYPE_F32 ? fpu_value() : rnd32();
				memcpy(d + 4 * i, &x, 4);
			}
			memcpy(b->ref, b->dst, sizeof(b->dst));
			if (netagg_div(simd, dtype, d, n, dv))
				mismatch("%s: netagg_div() failed", netagg_simd_names[simd]);
			for (i = 0; i < n; i++) {
				x = get32(b->ref + GUARD + od, i);
				r = get32(d, i);
				want = x;
				if (dtype == NETAGG_DTYPE_F32)
					netagg_div_f32_soft(&want, 1, dv);
				else
					netagg_div_i32(&want, 1, dv);
				if (r != want)
					mismatch("%s div n %u [%u]: %08x / %u = %08x, not %08x",
						 netagg_simd_names[simd], n, i, x, dv, r, want);
				memcpy(b->ref + GUARD + od + 4 * i, &r, 4);
			}
			if (memcmp(b->ref, b->dst, sizeof(b->dst)))
				mismatch("%s div wrote outside n %u",
					 netagg_simd_names[simd], n);
		}
	result("%s %s div = scalar div, n 0..%u, every byte misalignment",
	       netagg_simd_names[simd], dtype == NETAGG_DTYPE_F32 ? "f32" : "i32",
	       NMAX);
}

/*
 * A result into up to 9 packets (more than one batch of the datapath's 8),
 * every length up to NMAX elements and misalignment: the same bytes as
 * memcpy() into each, nothing written around them, the source untouched.
 */
#define NDST	9

static void test_broadcast(enum netagg_simd simd)
{
	static u8 dst[NDST][GUARD + 4 * NMAX + 3 + GUARD], ref[NDST][sizeof(dst[0])];
	static u8 src[4 * NMAX + 3], src_ref[sizeof(src)];
	unsigned int n, len, i, j, od, os;
	void *d[NDST];

	for (n = 1; n <= NDST; n += n < 3 ? 1 : 3)
		for (len = 0; len <= 4 * NMAX; len += len < 300 ? 1 : 131)
			for (od = 0; od < 4; od += 3)
				for (os = 0; os < 4; os++) {
					for (j = 0; j < n; j++) {
						for (i = 0; i < sizeof(dst[j]); i++)
							dst[j][i] = rnd32();
						memcpy(ref[j], dst[j], sizeof(dst[j]));
						d[j] = dst[j] + GUARD + (od + j) % 4;
					}
					for (i = 0; i < sizeof(src); i++)
						src[i] = rnd32();
					memcpy(src_ref, src, sizeof(src));
					for (j = 0; j < n; j++)
						memcpy(ref[j] + GUARD + (od + j) % 4, src + os, len);
					netagg_broadcast(simd, d, n, src + os, len);
					for (j = 0; j < n; j++)
						if (memcmp(dst[j], ref[j], sizeof(dst[j])))
							mismatch("%s broadcast to %u, %u bytes: packet %u differs",
								 netagg_simd_names[simd], n, len, j);
					if (memcmp(src, src_ref, sizeof(src)))
						mismatch("%s broadcast wrote its source",
							 netagg_simd_names[simd]);
				}
	result("%s broadcast = memcpy into each of 1..%u, 0..%u bytes, misaligned",
	       netagg_simd_names[simd], NDST, 4 * NMAX);
}

static const char *half_name(u8 dtype)
{
	return dtype == NETAGG_DTYPE_F16 ? "f16" : "bf16";
}

static u32 half_widen(u8 dtype, u16 h)
{
	return dtype == NETAGG_DTYPE_F16 ? netagg_f16_to_f32(h) :
					   netagg_bf16_to_f32(h);
}

static u16 half_narrow(u8 dtype, u32 f)
{
	return dtype == NETAGG_DTYPE_F16 ? netagg_f32_to_f16(f) :
					   netagg_f32_to_bf16(f);
}

/*
 * Runs of 1..RUN_MAX elements cover every vector step and every tail; a run
 * of 0 elements in between must write nothing.
 */
#define RUN_MAX		40
#define HALF_VALUES	0x10000

/* All 65,536 wire values widened, in runs, at every misalignment. */
static void test_half_widen(enum netagg_simd simd, u8 dtype)
{
	static u8 src[2 * HALF_VALUES + 1];
	static u8 dst[GUARD + 4 * HALF_VALUES + 3 + GUARD], ref[sizeof(dst)];
	unsigned int i, n, od, at;
	u32 want, got;
	u16 h;

	for (i = 0; i < HALF_VALUES; i++) {
		h = i;
		memcpy(src + 1 + 2 * i, &h, 2);
	}
	for (od = 0; od < 4; od++) {
		for (i = 0; i < sizeof(dst); i++)
			dst[i] = rnd32();
		memcpy(ref, dst, sizeof(dst));
		for (at = 0; at < HALF_VALUES; at += n) {
			n = 1 + at % RUN_MAX;
			n = n < HALF_VALUES - at ? n : HALF_VALUES - at;
			if (netagg_widen(simd, dtype, dst + GUARD + od + 4 * at,
					 src + 1 + 2 * at, 0) ||
			    netagg_widen(simd, dtype, dst + GUARD + od + 4 * at,
					 src + 1 + 2 * at, n))
				mismatch("%s: widen failed", netagg_simd_names[simd]);
		}
		for (i = 0; i < HALF_VALUES; i++) {
			want = half_widen(dtype, i);
			got = get32(dst + GUARD + od, i);
			if (got != want)
				mismatch("%s %s widen %04x = %08x, not %08x",
					 netagg_simd_names[simd], half_name(dtype), i,
					 got, want);
			memcpy(ref + GUARD + od + 4 * i, &got, 4);
		}
		if (memcmp(ref, dst, sizeof(dst)))
			mismatch("%s widen wrote outside", netagg_simd_names[simd]);
	}
	result("%s %s widen = half.h: all 65536 inputs, runs of 0..%u, misaligned",
	       netagg_simd_names[simd], half_name(dtype), RUN_MAX);
}

/*
 * The float32 values that decide narrowings: every wire value widened, one
 * bit pattern either side, the midpoint to the next value up and one
 * either side of it; the overflow threshold; random patterns, half of them
 * within the type's exponents.
 */
#define NARROW_RANDOM	(1 << 20)
#define NARROW_MAX	(7 * HALF_VALUES + 6 + NARROW_RANDOM)

static unsigned int narrow_inputs(u8 dtype, u32 *in)
{
	unsigned int i, n = 0, ulp_up = dtype == NETAGG_DTYPE_F16 ? 0x1000 : 0x8000;
	u32 w, r, top = dtype == NETAGG_DTYPE_F16 ? 0x477fe000 : 0x7f7f0000;

	for (i = 0; i < HALF_VALUES; i++) {
		w = half_widen(dtype, i);
		in[n++] = w;
		in[n++] = w - 1;
		in[n++] = w + 1;
		if (is_nan(w) || (w & 0x7fffffff) == 0x7f800000)
			continue;
		/* Midpoint to the next value up in magnitude, by float maths. */
		r = (i & 0x7fff) == (dtype == NETAGG_DTYPE_F16 ? 0x7bff : 0x7f7f) ?
		    (w & 0x80000000) | (top + ulp_up) :
		    f2u((u2f(w) + u2f(half_widen(dtype, i + 1))) * 0.5f);
		in[n++] = r;
		in[n++] = r - 1;
		in[n++] = r + 1;
		in[n++] = r ^ 0x80000000;
	}
	for (i = 0; i < NARROW_RANDOM; i++) {
		r = rnd32();
		if (i & 1)	/* exponent of 2^-26 .. 2^17 */
			r = (r & 0x807fffff) | (101 + r % 44) << 23;
		in[n++] = r;
	}
	return n;
}

/* Narrowed in runs, apart and in place (dst == src), at every misalignment. */
static void test_half_narrow(enum netagg_simd simd, u8 dtype)
{
	static u32 in[NARROW_MAX];
	static u8 buf[GUARD + 4 * NARROW_MAX + 3 + GUARD], out[sizeof(buf)];
	unsigned int total = narrow_inputs(dtype, in), i, n, at, o, inplace;
	u16 got, want;
	u8 *src, *dst;

	for (inplace = 0; inplace < 2; inplace++)
		for (o = 0; o < 4; o += inplace + 1) {
			src = buf + GUARD + o;
			dst = inplace ? src : out + GUARD + (o + 1) % 4;
			memcpy(src, in, 4 * total);
			for (at = 0; at < total; at += n) {
				n = 1 + at % RUN_MAX;
				n = n < total - at ? n : total - at;
				/* In place, each run is its own buffer. */
				if (netagg_narrow(simd, dtype,
						  inplace ? src + 4 * at : dst + 2 * at,
						  src + 4 * at, n))
					mismatch("%s: narrow failed", netagg_simd_names[simd]);
			}
			for (at = 0; at < total; at += n) {
				n = 1 + at % RUN_MAX;
				n = n < total - at ? n : total - at;
				for (i = at; i < at + n; i++) {
					memcpy(&got, inplace ? src + 4 * at + 2 * (i - at) :
							       dst + 2 * i, 2);
					want = half_narrow(dtype, in[i]);
					if (got != want)
						mismatch("%s %s narrow%s %08x = %04x, not %04x",
							 netagg_simd_names[simd],
							 half_name(dtype),
							 inplace ? " in place" : "", in[i],
							 got, want);
				}
			}
		}
	result("%s %s narrow = half.h: %u values deciding roundings, runs of 1..%u, in place and apart, misaligned",
	       netagg_simd_names[simd], half_name(dtype), total, RUN_MAX);
}

/* A wire value for the sum tests: mostly ordinary, some inf and NaN. */
static u16 half_value(u8 dtype)
{
	u32 r = rnd32();

	if (r % 16)
		return half_narrow(dtype, gradient());
	return r >> 16;
}

/* acc + widen(wire) against the soft float32 sum, in place and apart. */
static void test_half_sum(struct bufs *b, enum netagg_simd simd, u8 dtype)
{
	unsigned int n, od, os, i, apart;
	u32 x, y, r, want;
	u16 h;
	u8 *d;

	for (apart = 0; apart < 2; apart++)
		for (n = 0; n <= NMAX; n += n < 100 ? 1 : 37)
			for (od = 0; od < 4; od++)
				for (os = 0; os < 2; os++) {
					d = b->dst + GUARD + od;
					for (i = 0; i < sizeof(b->dst); i++)
						b->dst[i] = rnd32();
					for (i = 0; i < n; i++) {
						x = fpu_value();
						memcpy(d + 4 * i, &x, 4);
						h = half_value(dtype);
						memcpy(b->src + os + 2 * i, &h, 2);
					}
					sum_once(b, simd, dtype, od, os, n, apart);
					for (i = 0; i < n; i++) {
						x = get32(b->ref + GUARD + od, i);
						memcpy(&h, b->src + os + 2 * i, 2);
						y = half_widen(dtype, h);
						r = get32(d, i);
						want = soft_add(x, y);
						if (is_nan(x) && is_nan(y) ?
						    !is_nan(r) || !(r & 0x400000) : r != want)
							mismatch("%s %s add n %u [%u]: %08x + %04x = %08x, not %08x",
								 netagg_simd_names[simd], half_name(dtype),
								 n, i, x, h, r, want);
						memcpy(b->ref + GUARD + od + 4 * i, &r, 4);
					}
					if (memcmp(b->ref, b->dst, sizeof(b->dst)))
						mismatch("%s %s add wrote outside n %u",
							 netagg_simd_names[simd], half_name(dtype), n);
				}
	result("%s %s sum = soft float32 sum of the widened element, n 0..%u, in place and apart, misaligned",
	       netagg_simd_names[simd], half_name(dtype), NMAX);
}

static void test_half(struct bufs *b, enum netagg_simd simd)
{
	u8 dtype;

	for (dtype = NETAGG_DTYPE_F16; dtype <= NETAGG_DTYPE_BF16; dtype++) {
		test_half_widen(simd, dtype);
		test_half_narrow(simd, dtype);
		test_half_sum(b, simd, dtype);
	}
}

/*
 * K-input sums: netagg_add_many() against K - 1 two-input sums of the
 * scalar code in the same order (netagg_widen() or a copy, then
 * netagg_reduce()), for K of 1 (a copy, or widening) to 64
 * (NETAGG_CHILDREN_MAX), n of 0..MANY_SMALL and some hundreds (1472-byte
 * payloads among them), every input at a byte misalignment of its own, dst
 * cache-line aligned as the datapath's slots are.
 */
#define MANY_K		64
#define MANY_SMALL	70
#define MANY_NMAX	736	/* 1472 bytes of a half type */
#define MANY_TRIALS	3

static const unsigned int many_ks[] = { 1, 2, 3, 5, 8, MANY_K };
static const unsigned int many_big[] = { 100, 127, 128, 129, 255, 256, 257,
					 300, 367, 368, 369, 511, MANY_NMAX };

/*
 * An input element: what kind of values a column (element i of every
 * input) holds is drawn per column, or a sum of 64 would nearly always
 * meet a NaN. Kind 0: specials (inf, NaN, -0, subnormals, the largest
 * normals) among ordinary values; 1: near the largest finite value (sums
 * overflow to infinity, or cancel); 2: subnormals; 3: magnitudes from
 * 2^-37 to 2^32; else within 2^±6 of a centre @c (roundings and
 * cancellation, where order tells). Either sign throughout.
 */
static u32 many_f32(unsigned int kind, unsigned int c)
{
	u32 r = rnd32();

	switch (kind) {
	case 0:
		if (r % 2)
			return special(r / 2 % NSPEC);
		return mk(r >> 8 & 1, 90 + r % 70, rnd32());
	case 1:
		return mk(r & 1, 250 + (r >> 1) % 5, rnd32());
	case 2:
		return mk(r & 1, 0, rnd32());
	case 3:
		return mk(r & 1, 90 + (r >> 1) % 70, rnd32());
	}
	return mk(r & 1, c - 6 + (r >> 1) % 13, rnd32());
}

/* A half wire element, as many_f32(): e exponent bits, m mantissa bits. */
static u16 many_half(u8 dtype, unsigned int kind, unsigned int c)
{
	unsigned int e = dtype == NETAGG_DTYPE_F16 ? 5 : 8, m = 15 - e;
	u32 r = rnd32(), emax = (1u << e) - 1, exp;
	u16 man = rnd32() & ((1u << m) - 1);

	switch (kind) {
	case 0:
		if (r % 2) {
			static const u16 sp[] = { 0, 1, 0x3f, 0x7f };

			if (r / 2 % 3)	/* inf, or a NaN: quiet, signalling */
				man = (r / 6 % 3 == 0) ? 0 : (r / 6 % 3 == 1) ?
				      1u << (m - 1) | man : man | 1;
			else
				man &= sp[r / 6 % 4];
			exp = r / 2 % 3 ? emax : r / 24 % 2 ? emax - 1 : 0;
		} else {
			exp = 1 + r % (emax - 1);
		}
		break;
	case 1:
		exp = emax - 1 - (r >> 1) % 3;
		break;
	case 2:
		exp = 0;
		break;
	case 3:
		exp = 1 + (r >> 1) % (emax - 1);
		break;
	default:
		exp = c - 3 + (r >> 1) % 7;
		break;
	}
	return (r & 1) << 15 | exp << m | man;
}

/* Input element i widened to the 32 bits the sum is in. */
static u32 many_in(u8 dtype, const u8 *p, unsigned int i)
{
	u16 h;

	if (!netagg_dtype_half(dtype))
		return get32(p, i);
	memcpy(&h, p + 2 * i, 2);
	return half_widen(dtype, h);
}

static const char *dtype_name(u8 dtype)
{
	return dtype == NETAGG_DTYPE_F32 ? "f32" : dtype == NETAGG_DTYPE_I32 ?
	       "i32" : half_name(dtype);
}

#define MANY_LINE	64	/* dst's alignment, and its guard either side */

static void test_add_many(enum netagg_simd simd, u8 dtype)
{
	static u8 in[MANY_K][4 * MANY_NMAX + 3], in_copy[MANY_K][sizeof(in[0])];
	static u8 dbuf[MANY_LINE + 4 * MANY_NMAX + MANY_LINE]
		__attribute__((aligned(MANY_LINE)));
	static u8 dcopy[sizeof(dbuf)];
	static u8 ref[4 * MANY_NMAX] __attribute__((aligned(MANY_LINE)));
	static u8 rev[sizeof(ref)] __attribute__((aligned(MANY_LINE)));
	static u32 kind[MANY_NMAX], centre[MANY_NMAX];
	unsigned long diff[sizeof(many_ks) / sizeof(many_ks[0])] = { 0 };
	unsigned long elems = 0, nans = 0, rev_diff = 0;
	const bool flt = dtype != NETAGG_DTYPE_I32;
	const void *src[MANY_K], *src_rev[MANY_K];
	unsigned int ki, k, ni, n, t, i, j;
	u32 acc, x, r, want;
	u8 *d = dbuf + MANY_LINE;
	bool nan2, ok;
	char buf[200];
	int len = 0;

	for (ki = 0; ki < sizeof(many_ks) / sizeof(many_ks[0]); ki++)
		for (ni = 0; ni <= MANY_SMALL + sizeof(many_big) / sizeof(many_big[0]); ni++)
			for (t = 0; t < MANY_TRIALS; t++) {
				k = many_ks[ki];
				n = ni <= MANY_SMALL ? ni : many_big[ni - MANY_SMALL - 1];
				for (i = 0; i < n; i++) {
					kind[i] = rnd32() % 8;
					centre[i] = dtype == NETAGG_DTYPE_F16 ? 4 + rnd32() % 23 :
						    100 + rnd32() % 50;
				}
				for (j = 0; j < k; j++) {
					/* Each input at a byte offset 0..3 of its own. */
					src[j] = in[j] + rnd32() % 4;
					src_rev[k - 1 - j] = src[j];
					for (i = 0; i < sizeof(in[j]); i++)
						in[j][i] = rnd32();
					for (i = 0; i < n; i++) {
						if (dtype == NETAGG_DTYPE_I32) {
							x = kind[i] ? rnd32() : rnd32() % 2 ?
							    0x80000000 - rnd32() % 3 : rnd32() % 3 - 1;
							memcpy((u8 *)src[j] + 4 * i, &x, 4);
						} else if (dtype == NETAGG_DTYPE_F32) {
							x = many_f32(kind[i], centre[i]);
							memcpy((u8 *)src[j] + 4 * i, &x, 4);
						} else {
							u16 h = many_half(dtype, kind[i], centre[i]);

							memcpy((u8 *)src[j] + 2 * i, &h, 2);
						}
					}
					memcpy(in_copy[j], in[j], sizeof(in[j]));
				}
				/* The reference: k - 1 two-input sums, scalar. */
				if (netagg_dtype_half(dtype))
					netagg_widen(NETAGG_SIMD_SCALAR, dtype, ref, src[0], n);
				else
					memcpy(ref, src[0], 4 * n);
				for (j = 1; j < k; j++)
					netagg_reduce(NETAGG_SIMD_SCALAR, dtype, ref, src[j], n);
				/* The same inputs the other way round, scalar. */
				if (netagg_add_many(NETAGG_SIMD_SCALAR, dtype, rev, src_rev, k, n))
					mismatch("scalar K-input sum failed");

				for (i = 0; i < sizeof(dbuf); i++)
					dbuf[i] = rnd32();
				memcpy(dcopy, dbuf, sizeof(dbuf));
				if (netagg_add_many(simd, dtype, d, src, k, n))
					mismatch("%s %s: K-input sum failed",
						 netagg_simd_names[simd], dtype_name(dtype));

				for (i = 0; i < n; i++) {
					/* The chain again, noting a NaN meeting a NaN. */
					acc = many_in(dtype, src[0], i);
					nan2 = false;
					for (j = 1; j < k; j++) {
						x = many_in(dtype, src[j], i);
						nan2 |= flt && is_nan(acc) && is_nan(x);
						acc = flt ? soft_add(acc, x) : acc + x;
					}
					want = get32(ref, i);
					r = get32(d, i);
					elems++;
					if (acc != want)
						mismatch("%s K %u n %u [%u]: reference %08x, chain %08x",
							 dtype_name(dtype), k, n, i, want, acc);
					/*
					 * Where two NaNs met, the vector code may
					 * keep either (the compiler may swap the
					 * operands of +): any NaN input's, quieted,
					 * or the default NaN (inf - inf) may end up.
					 */
					ok = r == want;
					if (!ok && nan2 && simd != NETAGG_SIMD_SCALAR &&
					    is_nan(r) && (r & 0x400000)) {
						ok = r == 0xffc00000;
						for (j = 0; j < k && !ok; j++) {
							x = many_in(dtype, src[j], i);
							ok = is_nan(x) && (x | 0x400000) == r;
						}
					}
					nans += nan2;
					if (!ok)
						mismatch("%s %s K %u n %u [%u]: %08x, not %08x",
							 netagg_simd_names[simd], dtype_name(dtype),
							 k, n, i, r, want);
					/* Reversed: other bits for floats, not for ints. */
					x = get32(rev, i);
					if (flt && !is_nan(r) && !is_nan(x) && x != r)
						diff[ki]++;
					if (!flt && x != r)
						rev_diff++;
				}
				for (i = 0; i < 4 * n; i++)
					dcopy[MANY_LINE + i] = d[i];
				if (memcmp(dbuf, dcopy, sizeof(dbuf)))
					mismatch("%s %s K %u n %u: wrote outside dst",
						 netagg_simd_names[simd], dtype_name(dtype), k, n);
				for (j = 0; j < k; j++)
					if (memcmp(in[j], in_copy[j], sizeof(in[j])))
						mismatch("%s %s K %u n %u: input %u changed",
							 netagg_simd_names[simd], dtype_name(dtype),
							 k, n, j);
			}

	if (rev_diff)
		mismatch("i32: %lu sums differ reversed", rev_diff);
	for (ki = 0; ki < sizeof(many_ks) / sizeof(many_ks[0]); ki++) {
		/* Two addends commute: order tells from three on. */
		if (flt && many_ks[ki] >= 3 && !diff[ki])
			mismatch("%s K %u: no sum differs reversed: the data cannot tell order",
				 dtype_name(dtype), many_ks[ki]);
		if (flt && many_ks[ki] >= 3)
			len += snprintf(buf + len, sizeof(buf) - len, "%sK %u %lu",
					len ? ", " : "", many_ks[ki], diff[ki]);
	}
	result("%s %s K-input sum = K - 1 scalar two-input sums in order, K 1..%u, n 0..%u and to %u, misaligned (%lu elements, %lu with NaN + NaN; %s)",
	       netagg_simd_names[simd], dtype_name(dtype), MANY_K, MANY_SMALL,
	       MANY_NMAX, elems, nans,
	       flt ? buf : "reversed: the same bits, as integers must");
}

static void test_many(enum netagg_simd simd)
{
	u8 dtype;

	for (dtype = NETAGG_DTYPE_F32; dtype <= NETAGG_DTYPE_MAX; dtype++)
		test_add_many(simd, dtype);
}

static void test_simd(void)
{
	static struct bufs b;
	enum netagg_simd best = netagg_simd_best(), simd;
	u32 x = 1, y = 2;
	const void *ys[1] = { &y };

	/* The scalar code sums in place; into a third buffer it copies first. */
	test_simd_sum(&b, NETAGG_SIMD_SCALAR, NETAGG_DTYPE_F32, true);
	test_simd_sum(&b, NETAGG_SIMD_SCALAR, NETAGG_DTYPE_I32, true);
	test_half(&b, NETAGG_SIMD_SCALAR);
	test_many(NETAGG_SIMD_SCALAR);
	for (simd = NETAGG_SIMD_SSE2; simd < NETAGG_SIMD_NUM; simd++) {
		if (simd > best) {
			/* Not a pass: this host cannot run that code. */
			for (int i = 0; i < SIMD_CASES + HALF_CASES + MANY_CASES; i++)
				printf("ok %u %s, case %d # SKIP this CPU has no %s\n",
				       passed + failed + ++skipped, netagg_simd_names[simd],
				       i + 1, netagg_simd_names[simd]);
			continue;
		}
		test_simd_sum(&b, simd, NETAGG_DTYPE_F32, false);
		test_simd_sum(&b, simd, NETAGG_DTYPE_I32, false);
		test_simd_sum(&b, simd, NETAGG_DTYPE_F32, true);
		test_simd_sum(&b, simd, NETAGG_DTYPE_I32, true);
		test_simd_div(&b, simd, NETAGG_DTYPE_F32);
		test_simd_div(&b, simd, NETAGG_DTYPE_I32);
		test_broadcast(simd);
		test_half(&b, simd);
		test_many(simd);
	}

	for (simd = NETAGG_SIMD_SCALAR; simd <= best; simd++)
		if (netagg_reduce(simd, NETAGG_DTYPE_UNSPEC, &x, &y, 1) != -EINVAL ||
		    netagg_div(simd, NETAGG_DTYPE_MAX + 1, &x, 1, 2) != -EINVAL ||
		    netagg_widen(simd, NETAGG_DTYPE_F32, &x, &y, 1) != -EINVAL ||
		    netagg_narrow(simd, NETAGG_DTYPE_I32, &x, &y, 1) != -EINVAL ||
		    netagg_add_many(simd, NETAGG_DTYPE_UNSPEC, &x, ys, 1, 1) != -EINVAL ||
		    netagg_add_many(simd, NETAGG_DTYPE_MAX + 1, &x, ys, 1, 1) != -EINVAL ||
		    netagg_add_many(simd, NETAGG_DTYPE_F32, &x, ys, 0, 1) != -EINVAL ||
		    x != 1)
			mismatch("%s: an unknown dtype is not -EINVAL, or was summed",
				 netagg_simd_names[simd]);
	result("every implementation rejects an unknown dtype (and widening or narrowing a 32-bit one, a K-input sum of K 0), touching nothing");
	printf("# best implementation on this host: %s\n", netagg_simd_names[best]);
}

int main(void)
{
	clock_t t0 = clock();

	printf("KTAP version 1\n1..%d\n", UNIT_CASES);
	test_host();
	test_add_specials();
	test_add_sweep();
	test_add_ties();
	test_add_random();
	test_add_gradients();
	test_div();
	test_i32();
	test_simd();
	printf("# %.1f s CPU\n", (double)(clock() - t0) / CLOCKS_PER_SEC);
	printf("# unit: %u passed, %u failed, %u skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}

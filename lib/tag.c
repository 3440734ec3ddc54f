// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Poly1305 (RFC 8439, in base 2^64 with 128-bit products) and
 * SipHash-2-4 (Aumasson and Bernstein, as the kernel's siphash()), and the
 * tag made of the two (tag.h).
 */
#include <endian.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "tag.h"

typedef unsigned __int128 u128;

static uint64_t le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

/* r clamped as RFC 8439 says, in two 64-bit limbs; r[2] = r1 + r1 / 4. */
static void poly_key(uint64_t r[3], const uint8_t k[16])
{
	r[0] = le64(k) & 0x0ffffffc0fffffffULL;
	r[1] = le64(k + 8) & 0x0ffffffc0ffffffcULL;
	r[2] = r[1] + (r[1] >> 2);
}

/* 1 if a + b carried, from their sum @a, in constant time. */
static uint64_t carry(uint64_t a, uint64_t b)
{
	return (a ^ ((a ^ b) | ((a - b) ^ b))) >> 63;
}

/*
 * h = (h + m) * r mod 2^130 - 5, partly reduced, over whole blocks; @hibit
 * the block's bit 128 (0 for a last block padded here). h in base 2^64
 * (h[2] a few bits), r's clamp keeping every product within 128 bits: as
 * OpenSSL's and the kernel's x86 scalar code.
 */
static void poly_blocks(uint64_t h[3], const uint64_t r[3], const uint8_t *m,
			size_t len, uint64_t hibit)
{
	const uint64_t r0 = r[0], r1 = r[1], s1 = r[2];
	uint64_t h0 = h[0], h1 = h[1], h2 = h[2], c;
	u128 d0, d1;

	for (; len >= 16; m += 16, len -= 16) {
		h0 = (uint64_t)(d0 = (u128)h0 + le64(m));
		h1 = (uint64_t)(d1 = (u128)h1 + (uint64_t)(d0 >> 64) + le64(m + 8));
		h2 += (uint64_t)(d1 >> 64) + hibit;

		d0 = (u128)h0 * r0 + (u128)h1 * s1;
		d1 = (u128)h0 * r1 + (u128)h1 * r0 + h2 * s1;
		h2 *= r0;

		h0 = (uint64_t)d0;
		h1 = (uint64_t)(d1 += (uint64_t)(d0 >> 64));
		h2 += (uint64_t)(d1 >> 64);
		c = (h2 >> 2) + (h2 & ~3ULL);	/* 5 * (h >> 130) */
		h2 &= 3;
		h0 += c;
		h1 += (c = carry(h0, c));
		h2 += carry(h1, c);
	}
	h[0] = h0;
	h[1] = h1;
	h[2] = h2;
}

/* A number below about 2^131, in base 2^64 as poly_blocks() keeps h, in five 26-bit limbs. */
static void to_limbs26(uint64_t l[5], const uint64_t h[3])
{
	l[0] = h[0] & 0x3ffffff;
	l[1] = (h[0] >> 26) & 0x3ffffff;
	l[2] = ((h[0] >> 52) | (h[1] << 12)) & 0x3ffffff;
	l[3] = (h[1] >> 14) & 0x3ffffff;
	l[4] = (h[1] >> 40) | (h[2] << 24);
}

#if defined(__x86_64__)
#define NETAGG_TAG_AVX2	__attribute__((target("avx2")))

/* d = a * r mod 2^130 - 5 in four lanes of 26-bit limbs, partly reduced; s = 5 r. */
NETAGG_TAG_AVX2 static inline __attribute__((always_inline)) void
mul4(__m256i a[5], const uint64_t (*rs)[4])
{
	const __m256i mask = _mm256_set1_epi64x(0x3ffffff);
	__m256i d[5], c;

#define r(i)		_mm256_loadu_si256((const __m256i *)rs[i])
#define s(i)		_mm256_loadu_si256((const __m256i *)rs[5 + (i)])
#define MUL(x, y)	_mm256_mul_epu32(x, y)
#define ADD(x, y)	_mm256_add_epi64(x, y)
	/* Each sum in turn, so that few of them are in registers at once. */
	d[0] = MUL(a[0], r(0));
	d[0] = ADD(d[0], MUL(a[1], s(4)));
	d[0] = ADD(d[0], MUL(a[2], s(3)));
	d[0] = ADD(d[0], MUL(a[3], s(2)));
	d[0] = ADD(d[0], MUL(a[4], s(1)));
	d[1] = MUL(a[0], r(1));
	d[1] = ADD(d[1], MUL(a[1], r(0)));
	d[1] = ADD(d[1], MUL(a[2], s(4)));
	d[1] = ADD(d[1], MUL(a[3], s(3)));
	d[1] = ADD(d[1], MUL(a[4], s(2)));
	d[2] = MUL(a[0], r(2));
	d[2] = ADD(d[2], MUL(a[1], r(1)));
	d[2] = ADD(d[2], MUL(a[2], r(0)));
	d[2] = ADD(d[2], MUL(a[3], s(4)));
	d[2] = ADD(d[2], MUL(a[4], s(3)));
	d[3] = MUL(a[0], r(3));
	d[3] = ADD(d[3], MUL(a[1], r(2)));
	d[3] = ADD(d[3], MUL(a[2], r(1)));
	d[3] = ADD(d[3], MUL(a[3], r(0)));
	d[3] = ADD(d[3], MUL(a[4], s(4)));
	d[4] = MUL(a[0], r(4));
	d[4] = ADD(d[4], MUL(a[1], r(3)));
	d[4] = ADD(d[4], MUL(a[2], r(2)));
	d[4] = ADD(d[4], MUL(a[3], r(1)));
	d[4] = ADD(d[4], MUL(a[4], r(0)));
	/* Limbs below 2^59: carried once round, each then below 2^27. */
	c = _mm256_srli_epi64(d[0], 26);
	d[1] = ADD(d[1], c);
	d[0] = _mm256_and_si256(d[0], mask);
	c = _mm256_srli_epi64(d[1], 26);
	d[2] = ADD(d[2], c);
	d[1] = _mm256_and_si256(d[1], mask);
	c = _mm256_srli_epi64(d[2], 26);
	d[3] = ADD(d[3], c);
	d[2] = _mm256_and_si256(d[2], mask);
	c = _mm256_srli_epi64(d[3], 26);
	d[4] = ADD(d[4], c);
	d[3] = _mm256_and_si256(d[3], mask);
	c = _mm256_srli_epi64(d[4], 26);
	d[0] = ADD(d[0], ADD(c, _mm256_slli_epi64(c, 2)));
	d[4] = _mm256_and_si256(d[4], mask);
	c = _mm256_srli_epi64(d[0], 26);
	a[1] = ADD(d[1], c);
	a[0] = _mm256_and_si256(d[0], mask);
	a[2] = d[2];
	a[3] = d[3];
	a[4] = d[4];
#undef r
#undef s
#undef MUL
#undef ADD
}

/*
 * poly_blocks() over @len bytes, a multiple of 64, four blocks at a time:
 * four lanes each take every fourth block, Horner's rule with r^4, and
 * are multiplied by r^4, r^3, r^2 and r at the end and summed: the same
 * polynomial (Goll and Gueron's vectorization, as the kernel's AVX2 code).
 * The lanes are in 26-bit limbs so that 32 x 32-bit products suffice.
 */
NETAGG_TAG_AVX2 static void poly_blocks_avx2(uint64_t h[3], const struct netagg_tag_key *k,
					     const uint8_t *m, size_t len)
{
	const __m256i mask = _mm256_set1_epi64x(0x3ffffff);
	const __m256i hibit = _mm256_set1_epi64x(1 << 24);
	uint64_t l[5], sum[5], c;
	const uint64_t (*rs)[4];
	__m256i a[5], lo, hi, x, y;
	u128 t;
	int i;

	to_limbs26(l, h);
	for (i = 0; i < 5; i++)
		a[i] = _mm256_setr_epi64x(l[i], 0, 0, 0);
	for (;;) {
		/* Lanes 0 to 3 hold blocks 0, 2, 1 and 3 of the 64 bytes. */
		x = _mm256_loadu_si256((const __m256i *)m);
		y = _mm256_loadu_si256((const __m256i *)(m + 32));
		lo = _mm256_unpacklo_epi64(x, y);
		hi = _mm256_unpackhi_epi64(x, y);
		a[0] = _mm256_add_epi64(a[0], _mm256_and_si256(lo, mask));
		a[1] = _mm256_add_epi64(a[1], _mm256_and_si256(_mm256_srli_epi64(lo, 26), mask));
		a[2] = _mm256_add_epi64(a[2], _mm256_and_si256(_mm256_or_si256(_mm256_srli_epi64(lo, 52),
									       _mm256_slli_epi64(hi, 12)),
							       mask));
		a[3] = _mm256_add_epi64(a[3], _mm256_and_si256(_mm256_srli_epi64(hi, 14), mask));
		a[4] = _mm256_add_epi64(a[4], _mm256_or_si256(_mm256_srli_epi64(hi, 40), hibit));
		m += 64;
		len -= 64;
		if (!len)
			break;
		/*
		 * r^4 read from memory by each multiply: kept in registers, it
		 * leaves too few for the sums, which the compiler then spills.
		 */
		rs = k->r4;
		__asm__("" : "+r"(rs));
		mul4(a, rs);
	}
	mul4(a, k->rlanes);
	for (i = 0; i < 5; i++) {
		_mm256_storeu_si256((__m256i *)l, a[i]);
		sum[i] = l[0] + l[1] + l[2] + l[3];
	}
	/* Limbs below 2^29: carried into 26 bits each, then into base 2^64. */
	for (i = 0; i < 4; i++) {
		sum[i + 1] += sum[i] >> 26;
		sum[i] &= 0x3ffffff;
	}
	c = sum[4] >> 26;
	sum[4] &= 0x3ffffff;
	sum[0] += c * 5;
	sum[1] += sum[0] >> 26;
	sum[0] &= 0x3ffffff;
	t = sum[0] + ((u128)sum[1] << 26) + ((u128)sum[2] << 52);
	h[0] = (uint64_t)t;
	t = (t >> 64) + ((u128)sum[3] << 14) + ((u128)sum[4] << 40);
	h[1] = (uint64_t)t;
	h[2] = (uint64_t)(t >> 64);
}
#endif

/*
 * poly_blocks() with the job's key, four blocks at a time where the CPU
 * can and the run is long enough to pay for the lanes' setting up.
 */
static void poly_run(uint64_t h[3], const struct netagg_tag_key *k, const uint8_t *m,
		     size_t len, uint64_t hibit)
{
#if defined(__x86_64__)
	size_t wide = len & ~(size_t)63;

	if (k->vec && hibit && wide >= NETAGG_TAG_VEC_MIN) {
		poly_blocks_avx2(h, k, m, wide);
		m += wide;
		len -= wide;
	}
#endif
	poly_blocks(h, k->r, m, len, hibit);
}

/* h reduced mod 2^130 - 5, plus the pad @s, mod 2^128, into @out. */
static void poly_finish(uint8_t out[16], const uint64_t h[3], const uint8_t s[16])
{
	uint64_t h0 = h[0], h1 = h[1], g0, g1, g2, mask;
	u128 t;

	/* h + 5 - 2^130: taken if it does not go below 0 (constant time). */
	g0 = (uint64_t)(t = (u128)h0 + 5);
	g1 = (uint64_t)(t = (u128)h1 + (uint64_t)(t >> 64));
	g2 = h[2] + (uint64_t)(t >> 64);
	mask = 0 - (g2 >> 2);
	h0 = (h0 & ~mask) | (g0 & mask);
	h1 = (h1 & ~mask) | (g1 & mask);

	h0 = (uint64_t)(t = (u128)h0 + le64(s));
	h1 = (uint64_t)((u128)h1 + le64(s + 8) + (uint64_t)(t >> 64));
	h0 = htole64(h0);
	h1 = htole64(h1);
	memcpy(out, &h0, 8);
	memcpy(out + 8, &h1, 8);
}

#define ROTL(x, b)	(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND							\
	do {								\
		v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32); \
		v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;		\
		v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;		\
		v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32); \
	} while (0)

uint64_t netagg_siphash24(const uint64_t key[2], const void *data, size_t len)
{
	uint64_t v0 = 0x736f6d6570736575ULL ^ key[0];
	uint64_t v1 = 0x646f72616e646f6dULL ^ key[1];
	uint64_t v2 = 0x6c7967656e657261ULL ^ key[0];
	uint64_t v3 = 0x7465646279746573ULL ^ key[1];
	const uint8_t *p = data;
	uint64_t b = (uint64_t)len << 56, m;
	uint8_t last[8] = { 0 };

	for (; len >= 8; p += 8, len -= 8) {
		m = le64(p);
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	memcpy(last, p, len);
	b |= le64(last);
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

/*
 * Poly1305's r, r^2, r^3 and r^4 (partly reduced) in 26-bit limbs, and
 * five times each, as the four lanes take them: r^4 in every lane while
 * they run; r^4, r^2, r^3 and r at the end (lanes 0 to 3 hold blocks 0,
 * 2, 1 and 3).
 */
static void poly_powers(struct netagg_tag_key *k)
{
	static const uint8_t zero[16];
	static const int lane_pow[4] = { 4, 2, 3, 1 };
	uint64_t h[3] = { k->r[0], k->r[1], 0 }, pow[4][5];

	to_limbs26(pow[0], h);
	for (int i = 1; i < 4; i++) {
		poly_blocks(h, k->r, zero, 16, 0);
		to_limbs26(pow[i], h);
	}
	for (int i = 0; i < 5; i++) {
		for (int lane = 0; lane < 4; lane++) {
			k->r4[i][lane] = pow[3][i];
			k->r4[5 + i][lane] = 5 * pow[3][i];
			k->rlanes[i][lane] = pow[lane_pow[lane] - 1][i];
			k->rlanes[5 + i][lane] = 5 * pow[lane_pow[lane] - 1][i];
		}
	}
}

static int have_avx2(void)
{
#if defined(__x86_64__)
	/* libgcc checks XCR0 too: AVX2 only if the OS saves the YMM state. */
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
#else
	return 0;
#endif
}

void netagg_poly1305(uint8_t out[16], const uint8_t key[32], const void *m, size_t len)
{
	struct netagg_tag_key k;
	uint64_t h[3] = { 0 };
	uint8_t last[16] = { 0 };
	size_t whole = len & ~(size_t)15;

	netagg_tag_key_init(&k, key);
	poly_run(h, &k, m, whole, 1);
	if (len > whole) {
		memcpy(last, (const uint8_t *)m + whole, len - whole);
		last[len - whole] = 1;
		poly_blocks(h, k.r, last, 16, 0);
	}
	poly_finish(out, h, key + 16);
}

void netagg_tag_key_init(struct netagg_tag_key *k, const uint8_t key[NETAGG_TAG_KEY_BYTES])
{
	poly_key(k->r, key);
	poly_powers(k);
	k->sip[0] = le64(key + 16);
	k->sip[1] = le64(key + 24);
	k->vec = have_avx2();
}

void netagg_tag_begin(struct netagg_tag_ctx *c, const struct netagg_tag_key *k)
{
	c->key = k;
	c->h[0] = c->h[1] = c->h[2] = 0;
	c->fill = 0;
}

void netagg_tag_update(struct netagg_tag_ctx *c, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t n, whole;

	if (c->fill) {
		n = 16 - c->fill < len ? 16 - c->fill : len;
		memcpy(c->buf + c->fill, p, n);
		c->fill += n;
		p += n;
		len -= n;
		if (c->fill < 16)
			return;
		poly_blocks(c->h, c->key->r, c->buf, 16, 1);
		c->fill = 0;
	}
	whole = len & ~(size_t)15;
	poly_run(c->h, c->key, p, whole, 1);
	memcpy(c->buf, p + whole, len - whole);
	c->fill = len - whole;
}

uint64_t netagg_tag_end(struct netagg_tag_ctx *c)
{
	static const uint8_t no_pad[16];
	uint8_t hash[16];

	if (c->fill) {
		memset(c->buf + c->fill, 0, 16 - c->fill);
		c->buf[c->fill] = 1;
		poly_blocks(c->h, c->key->r, c->buf, 16, 0);
	}
	poly_finish(hash, c->h, no_pad);
	return netagg_siphash24(c->key->sip, hash, sizeof(hash));
}

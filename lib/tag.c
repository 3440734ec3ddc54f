// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Poly1305 (RFC 8439, in base 2^64 with 128-bit products) and
 * SipHash-2-4 (Aumasson and Bernstein, as the kernel's siphash()), and the
 * tag made of the two (tag.h).
 */
#include <endian.h>
#include <string.h>

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

void netagg_poly1305(uint8_t out[16], const uint8_t key[32], const void *m, size_t len)
{
	uint64_t r[3], h[3] = { 0 };
	uint8_t last[16] = { 0 };
	size_t whole = len & ~(size_t)15;

	poly_key(r, key);
	poly_blocks(h, r, m, whole, 1);
	if (len > whole) {
		memcpy(last, (const uint8_t *)m + whole, len - whole);
		last[len - whole] = 1;
		poly_blocks(h, r, last, 16, 0);
	}
	poly_finish(out, h, key + 16);
}

void netagg_tag_key_init(struct netagg_tag_key *k, const uint8_t key[NETAGG_TAG_KEY_BYTES])
{
	poly_key(k->r, key);
	k->sip[0] = le64(key + 16);
	k->sip[1] = le64(key + 24);
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
	poly_blocks(c->h, c->key->r, p, whole, 1);
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

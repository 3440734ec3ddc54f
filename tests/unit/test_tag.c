// SPDX-License-Identifier: GPL-2.0
/*
 * The library's packet tag (lib/tag.c): SipHash-2-4 and Poly1305 against
 * their published vectors (the SipHash paper's reference code, RFC 8439),
 * the tag against the two primitives composed, whatever pieces a packet
 * is fed in, a change of one bit of the packet or the key changing it, and
 * the four-lane Poly1305 (AVX2) giving the one-block code's hash.
 *
 * Output: KTAP, under the plan "1..TAG_CASES".
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "unit.h"
#include "tag.h"

#define TAG_CASES	7

static void siphash_vectors(void)
{
	/* The reference's vectors_sip64[0], [1] and [15]: key 00..0f, message 00..len-1. */
	static const struct { size_t len; uint64_t want; } v[] = {
		{ 0, 0x726fdb47dd0e0e31ULL },
		{ 1, 0x74f839c593dc67fdULL },
		{ 15, 0xa129ca6149be45e5ULL },
	};
	uint64_t key[2] = { 0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL };
	uint8_t m[16];

	for (unsigned int i = 0; i < sizeof(m); i++)
		m[i] = i;
	for (unsigned int i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		CHECK(netagg_siphash24(key, m, v[i].len) == v[i].want,
		      "siphash of %zu bytes: %016llx, want %016llx", v[i].len,
		      (unsigned long long)netagg_siphash24(key, m, v[i].len),
		      (unsigned long long)v[i].want);
	done("SipHash-2-4: the reference's vectors (0, 1 and 15 bytes)");
}

static void poly1305_vectors(void)
{
	/* RFC 8439, 2.5.2 */
	static const uint8_t key[32] = {
		0x85, 0xd6, 0xbe, 0x78, 0x57, 0x55, 0x6d, 0x33, 0x7f, 0x44, 0x52, 0xfe,
		0x42, 0xd5, 0x06, 0xa8, 0x01, 0x03, 0x80, 0x8a, 0xfb, 0x0d, 0xb2, 0xfd,
		0x4a, 0xbf, 0xf6, 0xaf, 0x41, 0x49, 0xf5, 0x1b,
	};
	static const uint8_t want[16] = {
		0xa8, 0x06, 0x1d, 0xc1, 0x30, 0x51, 0x36, 0xc6, 0xc2, 0x2b, 0x8b, 0xaf,
		0x0c, 0x01, 0x27, 0xa9,
	};
	static const char msg[] = "Cryptographic Forum Research Group";
	uint8_t got[16], zeros[64] = { 0 }, zkey[32] = { 0 };

	netagg_poly1305(got, key, msg, strlen(msg));
	CHECK(!memcmp(got, want, 16), "RFC 8439 2.5.2: tag differs");
	/* RFC 8439, A.3 #1: a key and 64 bytes of zeros, a tag of zeros. */
	netagg_poly1305(got, zkey, zeros, sizeof(zeros));
	CHECK(!memcmp(got, zeros, 16), "RFC 8439 A.3 #1: tag not zero");
	done("Poly1305: RFC 8439's 2.5.2 and A.3 #1");
}

static void fill(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = rnd64();
}

static uint64_t tag_whole(const struct netagg_tag_key *k, const uint8_t *m, size_t len)
{
	struct netagg_tag_ctx c;

	netagg_tag_begin(&c, k);
	netagg_tag_update(&c, m, len);
	return netagg_tag_end(&c);
}

static void tag_composed(void)
{
	uint8_t key[32], poly_key[32] = { 0 }, m[1600], hash[16];
	struct netagg_tag_key k;
	uint64_t sip[2];

	for (unsigned int i = 0; i < 200; i++) {
		size_t len = rnd64() % sizeof(m);

		fill(key, sizeof(key));
		fill(m, len);
		netagg_tag_key_init(&k, key);
		memcpy(poly_key, key, 16);
		memcpy(sip, key + 16, 16);
		netagg_poly1305(hash, poly_key, m, len);
		CHECK(tag_whole(&k, m, len) == netagg_siphash24(sip, hash, 16),
		      "%zu bytes: the tag is not SipHash of the Poly1305 hash", len);
	}
	done("the tag is SipHash-2-4 (key's second half) of Poly1305 (its first half, no pad)");
}

/* The tag of @m fed in pieces of 0 to @most - 1 bytes. */
static uint64_t tag_pieces_of(const struct netagg_tag_key *k, const uint8_t *m, size_t len,
			      unsigned int most)
{
	struct netagg_tag_ctx c;
	size_t off = 0, n;

	netagg_tag_begin(&c, k);
	while (off < len) {
		n = rnd64() % most;
		n = n < len - off ? n : len - off;
		netagg_tag_update(&c, m + off, n);
		off += n;
	}
	return netagg_tag_end(&c);
}

static void tag_pieces(void)
{
	uint8_t key[32], m[1600];
	struct netagg_tag_key k;

	for (unsigned int i = 0; i < 200; i++) {
		size_t len = rnd64() % sizeof(m);

		fill(key, sizeof(key));
		fill(m, len);
		netagg_tag_key_init(&k, key);
		CHECK(tag_pieces_of(&k, m, len, 40) == tag_whole(&k, m, len),
		      "%zu bytes in pieces: another tag", len);
	}
	done("a packet fed in pieces of 0 to 39 bytes: the tag of it whole");
}

static void tag_bits(void)
{
	uint8_t key[32], m[200];
	struct netagg_tag_key k;
	uint64_t t;

	fill(key, sizeof(key));
	fill(m, sizeof(m));
	netagg_tag_key_init(&k, key);
	t = tag_whole(&k, m, sizeof(m));
	for (unsigned int bit = 0; bit < 8 * sizeof(m); bit++) {
		m[bit / 8] ^= 1 << (bit % 8);
		CHECK(tag_whole(&k, m, sizeof(m)) != t, "packet bit %u flipped: the same tag", bit);
		m[bit / 8] ^= 1 << (bit % 8);
	}
	CHECK(tag_whole(&k, m, sizeof(m) - 1) != t, "a byte shorter: the same tag");
	/* Poly1305's clamp leaves 22 bits of r out: flip only those it keeps. */
	for (unsigned int bit = 0; bit < 8 * sizeof(key); bit++) {
		struct netagg_tag_key k2;

		key[bit / 8] ^= 1 << (bit % 8);
		netagg_tag_key_init(&k2, key);
		if (memcmp(k2.r, k.r, sizeof(k.r)) || memcmp(k2.sip, k.sip, sizeof(k.sip)))
			CHECK(tag_whole(&k2, m, sizeof(m)) != t, "key bit %u flipped: the same tag", bit);
		key[bit / 8] ^= 1 << (bit % 8);
	}
	done("one bit of the packet or the key flipped, or a byte less: another tag");
}

/* The four-lane code against the one-block code, on one message. */
static void vec_one(uint8_t *key, const uint8_t *m, size_t len)
{
	struct netagg_tag_key vec, one;

	netagg_tag_key_init(&vec, key);
	one = vec;
	one.vec = 0;
	CHECK(tag_whole(&vec, m, len) == tag_whole(&one, m, len),
	      "%zu bytes: the four lanes' tag differs from one block's", len);
	CHECK(tag_pieces_of(&vec, m, len, 700) == tag_whole(&one, m, len),
	      "%zu bytes in pieces: the four lanes' tag differs from one block's", len);
}

static void tag_vector(void)
{
	static const size_t edge[] = { 0, 63, 64, 127, NETAGG_TAG_VEC_MIN, 129, 191, 192,
				       255, 256, 1448, 1472, 9000 };
	uint8_t key[32], m[9100];
	struct netagg_tag_key k;

	fill(key, sizeof(key));
	netagg_tag_key_init(&k, key);
	if (!k.vec) {
		printf("ok %u the four-lane Poly1305 # SKIP this CPU has no AVX2\n",
		       passed + failed + skipped + 1);
		skipped++;
		return;
	}
	for (unsigned int i = 0; i < 300; i++) {
		size_t len = i < 13 ? edge[i] : rnd64() % sizeof(m);

		fill(key, sizeof(key));
		fill(m, len);
		vec_one(key, m, len);
	}
	/* The largest limbs there are: every bit r's clamp keeps, a message of ones. */
	memset(key, 0xff, sizeof(key));
	memset(m, 0xff, sizeof(m));
	vec_one(key, m, sizeof(m));
	vec_one(key, m, 1448);
	done("the four-lane Poly1305 (AVX2): one block's tag, whole and in pieces");
}

/*
 * A tag as tests/wire.py computes it (Python's integers, from the RFCs'
 * definitions), which the scripted peers of the VM tests send: a result's,
 * and a contribution's bound to 10.0.1.1 port 40001.
 */
static void tag_python(void)
{
	static const uint8_t sender[18] = { [10] = 0xff, [11] = 0xff, [12] = 10, [14] = 1, [15] = 1,
					    [16] = 40001 >> 8, [17] = 40001 & 0xff };
	uint8_t key[32], m[100];
	struct netagg_tag_key k;
	struct netagg_tag_ctx c;

	for (unsigned int i = 0; i < sizeof(key); i++)
		key[i] = i;
	for (unsigned int i = 0; i < sizeof(m); i++)
		m[i] = i;
	netagg_tag_key_init(&k, key);
	CHECK(tag_whole(&k, m, sizeof(m)) == 0x2ff7bee806d01ef3ULL, "a result's tag differs");
	netagg_tag_begin(&c, &k);
	netagg_tag_update(&c, m, sizeof(m));
	netagg_tag_update(&c, sender, sizeof(sender));
	CHECK(netagg_tag_end(&c) == 0xd7bb9a79164d2c4eULL, "a contribution's tag differs");
	done("tags as tests/wire.py makes them: a result's, a contribution's");
}

int main(void)
{
	printf("KTAP version 1\n1..%d\n", TAG_CASES);
	siphash_vectors();
	poly1305_vectors();
	tag_composed();
	tag_pieces();
	tag_bits();
	tag_python();
	tag_vector();
	return failed ? 1 : 0;
}

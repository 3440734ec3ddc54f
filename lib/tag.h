/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * A keyed job's packet tag, as the library makes and checks it: the same
 * construction the module computes with the kernel's lib/crypto (uapi's
 * linux/netagg.h, "Tags", says what and why). A 64-bit tag is SipHash-2-4,
 * keyed with the job key's second half, of the Poly1305 hash (the
 * polynomial alone, no one-time pad added) keyed with its first half, of
 * the packet (header and payload) and, for a contribution, its sender:
 *
 *	tag = SipHash-2-4(k[16..31], Poly1305-hash(k[0..15],
 *	          netagg header || payload [|| saddr (16 bytes, IPv4 mapped)
 *	          || sport (2, network order)]))
 *
 * fed to netagg_tag_update() in that order.
 */
#ifndef NETAGG_LIB_TAG_H
#define NETAGG_LIB_TAG_H

#include <stddef.h>
#include <stdint.h>

#define NETAGG_TAG_KEY_BYTES	32

/* Bytes from which Poly1305 runs four blocks at a time, where it can. */
#define NETAGG_TAG_VEC_MIN	128

/*
 * A job key, ready to use: Poly1305's r (two limbs, and r1 + r1 / 4); for
 * the four-lane code, which @vec says this CPU runs (AVX2), r's powers in
 * 26-bit limbs and five times them, lane by lane (tag.c's poly_powers());
 * SipHash's key.
 */
struct netagg_tag_key {
	uint64_t r[3];
	uint64_t r4[10][4];
	uint64_t rlanes[10][4];
	uint64_t sip[2];
	int vec;
};

/* One tag being computed: the Poly1305 state and a partial block. */
struct netagg_tag_ctx {
	const struct netagg_tag_key *key;
	uint64_t h[3];
	uint8_t buf[16];
	size_t fill;
};

void netagg_tag_key_init(struct netagg_tag_key *k, const uint8_t key[NETAGG_TAG_KEY_BYTES]);
void netagg_tag_begin(struct netagg_tag_ctx *c, const struct netagg_tag_key *k);
void netagg_tag_update(struct netagg_tag_ctx *c, const void *p, size_t len);
uint64_t netagg_tag_end(struct netagg_tag_ctx *c);

/* The primitives alone, for their published test vectors. */
void netagg_poly1305(uint8_t out[16], const uint8_t key[32], const void *m, size_t len);
uint64_t netagg_siphash24(const uint64_t key[2], const void *m, size_t len);

#endif

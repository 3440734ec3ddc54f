/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A keyed job's packet tags (linux/netagg.h, "Tags"): checked on every
 * packet of the job received, made on every packet sent.
 */
#ifndef _NETAGG_TAG_H
#define _NETAGG_TAG_H

#include <crypto/poly1305.h>
#include <linux/in6.h>
#include <linux/siphash.h>
#include <linux/skbuff.h>
#include <linux/netagg.h>

struct netagg_pkt;

/* A job's key as the hash and the PRF take it. */
struct netagg_tag_key {
	u8 poly[POLY1305_KEY_SIZE];	/* r, then a pad of 0: the hash alone */
	siphash_key_t sip;
};

void netagg_tag_key_init(struct netagg_tag_key *k, const u8 *key);
bool netagg_tag_pkt_ok(const struct netagg_tag_key *k,
		       const struct netagg_pkt *pkt, unsigned int off,
		       unsigned int len);
void netagg_tag_buf(const struct netagg_tag_key *k, void *data,
		    unsigned int len);
int netagg_tag_skb(const struct netagg_tag_key *k, struct sk_buff *skb,
		   const struct in6_addr *saddr, __be16 sport);

#endif /* _NETAGG_TAG_H */

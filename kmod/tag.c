// SPDX-License-Identifier: GPL-2.0
/*
 * A keyed job's packet tags (linux/netagg.h, "Tags"), with the kernel's
 * lib/crypto (Poly1305, SipHash) as WireGuard's datapath uses it: checked
 * over the bytes where they lie, in an skb's head and fragments or in an
 * XDP frame; made once a result for every child, or once a sum for the
 * parent, after routing has said the address the parent knows this node by.
 */

#include <crypto/algapi.h>
#include "pkt.h"
#include "tag.h"

void netagg_tag_key_init(struct netagg_tag_key *k, const u8 *key)
{
	__le64 sip[2];

	memcpy(k->poly, key, 16);
	memset(k->poly + 16, 0, 16);
	memcpy(sip, key + 16, sizeof(sip));
	k->sip.key[0] = le64_to_cpu(sip[0]);
	k->sip.key[1] = le64_to_cpu(sip[1]);
}

/*
 * The tag, of what @desc hashed so far: a contribution's or a sum's (not a
 * result, NETAGG_F_RESULT clear) ends with its sender's address and port.
 */
static __le64 netagg_tag_end(const struct netagg_tag_key *k,
			     struct poly1305_desc_ctx *desc, bool up,
			     const struct in6_addr *saddr, __be16 sport)
{
	u8 hash[POLY1305_DIGEST_SIZE];

	if (up) {
		poly1305_update(desc, saddr->s6_addr, sizeof(*saddr));
		poly1305_update(desc, (const u8 *)&sport, sizeof(sport));
	}
	poly1305_final(desc, hash);
	return cpu_to_le64(siphash(hash, sizeof(hash), &k->sip));
}

/*
 * @len bytes of @skb from @off hashed, where they lie: its head, its
 * fragments. skb_seq_read() gives a block as far as the skb's goes, not
 * only to the end asked for: cut there.
 */
static void netagg_tag_update_skb(struct poly1305_desc_ctx *desc,
				  struct sk_buff *skb, unsigned int off,
				  unsigned int len)
{
	unsigned int consumed = 0, n;
	struct skb_seq_state st;
	const u8 *data;

	skb_prepare_seq_read(skb, off, off + len, &st);
	while (consumed < len && (n = skb_seq_read(consumed, &data, &st))) {
		n = min(n, len - consumed);
		poly1305_update(desc, data, n);
		consumed += n;
	}
	skb_abort_seq_read(&st);
}

/**
 * netagg_tag_pkt_ok() - Whether a received packet's tag is right.
 * @k: its job's key
 * @pkt: the packet, its header read (@pkt->hdr), @pkt->saddr and
 *	 @pkt->sport its sender's
 * @off: where its aggregation header is, from its IP header
 * @len: the header's and the payload's bytes, the tag after them
 *
 * Return: true if it is.
 */
bool netagg_tag_pkt_ok(const struct netagg_tag_key *k,
		       const struct netagg_pkt *pkt, unsigned int off,
		       unsigned int len)
{
	struct poly1305_desc_ctx desc;
	const __le64 *tag;
	__le64 want, _tag;

	poly1305_init(&desc, k->poly);
	if (pkt->skb)
		netagg_tag_update_skb(&desc, pkt->skb, off, len);
	else
		poly1305_update(&desc, pkt->frame + off, len);
	want = netagg_tag_end(k, &desc, !(pkt->hdr.flags & NETAGG_F_RESULT),
			      &pkt->saddr, pkt->sport);
	tag = netagg_pkt_bytes(pkt, off + len, sizeof(_tag), &_tag);
	return tag && !crypto_memneq(tag, &want, sizeof(want));
}

/**
 * netagg_tag_buf() - Tag a result, or an answer, where it was written.
 * @k: its job's key
 * @data: its header, then its payload, then room for the tag
 * @len: the header's and the payload's bytes
 *
 * Results bind no address: one tag serves every child they go to.
 */
void netagg_tag_buf(const struct netagg_tag_key *k, void *data,
		    unsigned int len)
{
	struct poly1305_desc_ctx desc;
	__le64 tag;

	poly1305_init(&desc, k->poly);
	poly1305_update(&desc, data, len);
	tag = netagg_tag_end(k, &desc, false, NULL, 0);
	memcpy(data + len, &tag, sizeof(tag));
}

/**
 * netagg_tag_skb() - Tag the sums an skb carries to the parent.
 * @k: the job's key
 * @skb: the packet, its aggregation header at skb->data, a super-packet's
 *	 segments gso_size bytes each: every one ends in room for its tag
 * @saddr: the address it leaves from
 * @sport: the port it leaves from
 *
 * Return: 0, or -EFAULT if a segment is shorter than a header and a tag.
 */
int netagg_tag_skb(const struct netagg_tag_key *k, struct sk_buff *skb,
		   const struct in6_addr *saddr, __be16 sport)
{
	unsigned int seg = skb_shinfo(skb)->gso_size ?: skb->len, off, n;
	struct poly1305_desc_ctx desc;
	__le64 tag;

	for (off = 0; off < skb->len; off += seg) {
		n = min(seg, skb->len - off);
		if (n < sizeof(struct netagg_hdr) + sizeof(tag))
			return -EFAULT;
		n -= sizeof(tag);
		poly1305_init(&desc, k->poly);
		netagg_tag_update_skb(&desc, skb, off, n);
		tag = netagg_tag_end(k, &desc, true, saddr, sport);
		if (skb_store_bits(skb, off + n, &tag, sizeof(tag)))
			return -EFAULT;
	}
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A received aggregation packet as the datapath sees it: an skb, or, from
 * the XDP entry, a frame that is no skb and is its driver's again once the
 * hook returns. hook.c fills the view; agg.c and reuse.c read the packet
 * only through it (its bytes, its payload where a reference can keep it, a
 * copy of it, what keeping it costs, its checksum, letting it go), so that
 * they have one way for both.
 */
#ifndef _NETAGG_PKT_H
#define _NETAGG_PKT_H

#include <linux/in6.h>
#include <linux/skbuff.h>
#include <linux/string.h>
#include <linux/types.h>
#include <linux/netagg.h>
#include <net/dst.h>

struct netagg_pkt {
	struct netagg_hdr hdr;
	struct sk_buff *skb;	/* the packet, or NULL: an XDP frame */
	const u8 *frame;	/* the frame's IP header, else NULL; a frame
				 * is linear, @off + @len bytes from there at
				 * least (the entry checked)
				 */
	unsigned int ip_hlen;	/* IP header length, IPv6 extensions too */
	unsigned int off;	/* payload offset from the IP header */
	unsigned int len;	/* payload bytes: count * element size */
	struct in6_addr saddr;	/* addr.h: IPv4 ones IPv4-mapped */
	__be16 sport;
	u8 ecn;
	u8 tag_len;		/* bytes after the payload: a keyed job's tag */
	bool csum;		/* the UDP checksum is in use */
	bool csum_missing;	/* 0 in an IPv6 packet, which must have one */
	bool ipv6;		/* an IPv6 packet */
};

const void *netagg_skb_in_place(const struct sk_buff *skb, unsigned int off,
				unsigned int len);
const void *netagg_skb_pointer(const struct sk_buff *skb, unsigned int off,
			       unsigned int len, void *buf);
bool netagg_pkt_csum_bad(const struct netagg_pkt *pkt);

/*
 * @len bytes at @off from the packet's IP header: in place if they can be,
 * else copied into @buf. NULL: the packet is shorter. A frame's lie in
 * place, as far as the hook found it long.
 */
static inline const void *netagg_pkt_bytes(const struct netagg_pkt *pkt,
					   unsigned int off, unsigned int len,
					   void *buf)
{
	if (!pkt->skb)
		return pkt->frame + off;
	return netagg_skb_pointer(pkt->skb, off, len, buf);
}

/*
 * The payload where it lies, if a reference to the packet can keep it
 * there (netagg_pkt_hold()); NULL if not: a frame goes back to its driver,
 * and a payload split between page fragments cannot be read in place.
 */
static inline const void *netagg_pkt_in_place(const struct netagg_pkt *pkt)
{
	if (!pkt->skb)
		return NULL;
	return netagg_skb_in_place(pkt->skb, pkt->off, pkt->len);
}

/*
 * A reference that keeps the packet, whose payload netagg_pkt_in_place()
 * found in place, until consume_skb(). It may be kept for as long as its
 * VID takes: what only its reception needed (a route, conntrack, a socket),
 * which a device or namespace going away would wait for, is let go now.
 */
static inline struct sk_buff *netagg_pkt_hold(const struct netagg_pkt *pkt)
{
	struct sk_buff *skb = pkt->skb;

	if (!skb_shared(skb)) {
		skb_orphan(skb);
		skb_dst_drop(skb);
		nf_reset_ct(skb);
	}
	return skb_get(skb);
}

/* The payload copied to @to: false if the packet is shorter. */
static inline bool netagg_pkt_copy(const struct netagg_pkt *pkt, void *to)
{
	if (!pkt->skb) {
		memcpy(to, pkt->frame + pkt->off, pkt->len);
		return true;
	}
	return !skb_copy_bits(pkt->skb, pkt->off, to, pkt->len);
}

/* What keeping the whole packet charges a tree: a frame is never kept. */
static inline u32 netagg_pkt_truesize(const struct netagg_pkt *pkt)
{
	return pkt->skb ? pkt->skb->truesize : 0;
}

/* Done with the packet: an skb consumed; a frame is left to its driver. */
static inline void netagg_pkt_consume(const struct netagg_pkt *pkt)
{
	consume_skb(pkt->skb);
}

#endif /* _NETAGG_PKT_H */

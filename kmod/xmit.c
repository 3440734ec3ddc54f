// SPDX-License-Identifier: GPL-2.0
/*
 * Building and sending the packets a node emits: partial sums to its parent
 * and results to its children. Like nf_dup_ipv4, they are routed and sent
 * with ip_local_out() straight from the netfilter hook.
 */

#include <linux/ip.h>
#include <linux/netdevice.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/route.h>
#include <net/inet_ecn.h>
#include <net/udp.h>
#include "route.h"
#include "xmit.h"

#define NETAGG_HEADROOM	(LL_MAX_HEADER + sizeof(struct iphdr) + \
			 sizeof(struct udphdr))

/**
 * netagg_xmit_alloc() - A new packet to send a header and payload in.
 * @len: bytes of payload
 *
 * Room for a netagg header and @len bytes, both for the caller to write; IP
 * and UDP headers are added by netagg_xmit().
 *
 * Return: the packet, or NULL without memory.
 */
struct sk_buff *netagg_xmit_alloc(unsigned int len)
{
	struct sk_buff *skb;

	skb = alloc_skb(NETAGG_HEADROOM + sizeof(struct netagg_hdr) + len,
			GFP_ATOMIC);
	if (!skb)
		return NULL;
	skb_reserve(skb, NETAGG_HEADROOM);
	skb_put(skb, sizeof(struct netagg_hdr) + len);
	return skb;
}

/**
 * netagg_xmit_alloc_head() - A new packet with room for headers only.
 *
 * Its payload is page fragments.
 *
 * Return: the packet, or NULL without memory.
 */
struct sk_buff *netagg_xmit_alloc_head(void)
{
	struct sk_buff *skb;

	skb = alloc_skb(NETAGG_HEADROOM, GFP_ATOMIC);
	if (skb)
		skb_reserve(skb, NETAGG_HEADROOM);
	return skb;
}

/**
 * netagg_xmit() - Send a packet to a parent or child.
 * @net: the namespace
 * @skb: the packet, netagg header first; consumed
 * @daddr: where it goes
 * @dport: at which port
 * @ecn: its ECN field
 * @route: @daddr's route cache
 *
 * From the netagg port, DSCP 56 with @ecn, routed by @route (softirq or BHs
 * off: inside an RCU read section, which the route it lends without a
 * reference needs). The source address is the one routing picks towards
 * @daddr: the address the receiving node knows this one by.
 *
 * Return: 0, or the error of routing or ip_local_out().
 */
int netagg_xmit(struct net *net, struct sk_buff *skb, __be32 daddr,
		__be16 dport, u8 ecn, struct netagg_route *route)
{
	struct flowi4 fl4 = {
		.daddr = daddr,
		.flowi4_proto = IPPROTO_UDP,
		.fl4_sport = htons(NETAGG_UDP_PORT),
		.fl4_dport = dport,
	};
	unsigned int ulen = skb->len + sizeof(struct udphdr);
	struct udphdr *uh;
	struct iphdr *iph;
	struct rtable *rt;
	int err;

	rt = netagg_route_get(net, route, &fl4);
	if (IS_ERR(rt)) {
		kfree_skb(skb);
		return PTR_ERR(rt);
	}
	/* As a forwarded packet's: whoever keeps it past here takes a ref. */
	skb_dst_set_noref(skb, &rt->dst);

	uh = skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh->source = htons(NETAGG_UDP_PORT);
	uh->dest = dport;
	uh->len = htons(ulen);
	uh->check = 0;

	iph = skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = (NETAGG_DSCP << 2) | (ecn & INET_ECN_MASK);
	iph->tot_len = htons(skb->len);
	/*
	 * Sized for the job's MTU, never to be fragmented (a node would pass
	 * fragments on unsummed). DF also spares ip_select_ident() its hash
	 * per packet: the ID of a DF packet is 0.
	 */
	iph->frag_off = htons(IP_DF);
	iph->ttl = ip4_dst_hoplimit(&rt->dst);
	iph->protocol = IPPROTO_UDP;
	iph->saddr = fl4.saddr;
	iph->daddr = daddr;
	ip_select_ident(net, skb, NULL);

	skb->protocol = htons(ETH_P_IP);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	/*
	 * What udp_set_csum() does for a packet not yet partial, and
	 * udp_send_skb() for a GSO one: the pseudo header's sum of the whole
	 * length, which segmentation adjusts per segment. The device or the
	 * receiver completes the checksum from here.
	 */
	skb->ip_summed = CHECKSUM_PARTIAL;
	skb->csum_start = skb_transport_header(skb) - skb->head;
	skb->csum_offset = offsetof(struct udphdr, check);
	uh->check = ~udp_v4_check(ulen, fl4.saddr, daddr, 0);
	/* net_xmit_eval() evaluates its argument twice. */
	err = ip_local_out(net, NULL, skb);
	return net_xmit_eval(err);
}

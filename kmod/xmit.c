// SPDX-License-Identifier: GPL-2.0
/*
 * Building and sending the packets a node emits: partial sums to its parent
 * and results to its children. Like nf_dup_ipv4 and nf_dup_ipv6, they are
 * routed and sent with ip_local_out() or ip6_local_out() straight from the
 * netfilter hook.
 */

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/route.h>
#include <net/inet_ecn.h>
#include <net/ip6_checksum.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/udp.h>
#include "addr.h"
#include "route.h"
#include "tag.h"
#include "xmit.h"

#define NETAGG_HEADROOM	(LL_MAX_HEADER + sizeof(struct ipv6hdr) + \
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

/*
 * What udp_set_csum() does for a packet not yet partial, and udp_send_skb()
 * for a GSO one: the checksum left for the device or the receiver to
 * complete, the pseudo header's sum of the whole length (@csum), which
 * segmentation adjusts per segment.
 */
static void netagg_xmit_csum(struct sk_buff *skb, struct udphdr *uh,
			     __sum16 csum)
{
	skb->ip_summed = CHECKSUM_PARTIAL;
	skb->csum_start = skb_transport_header(skb) - skb->head;
	skb->csum_offset = offsetof(struct udphdr, check);
	uh->check = ~csum;
}

/* The UDP header, from @sport to @dport. */
static struct udphdr *netagg_xmit_udp(struct sk_buff *skb, __be16 sport,
				      __be16 dport)
{
	struct udphdr *uh = skb_push(skb, sizeof(*uh));

	skb_reset_transport_header(skb);
	uh->source = sport;
	uh->dest = dport;
	uh->len = htons(skb->len);
	uh->check = 0;
	return uh;
}

static int netagg_xmit4(struct net *net, struct sk_buff *skb, __be32 daddr,
			__be16 sport, __be16 dport, u8 tos,
			struct netagg_route *route,
			const struct netagg_tag_key *seal)
{
	struct flowi4 fl4 = {
		.daddr = daddr,
		.flowi4_proto = IPPROTO_UDP,
		.fl4_sport = sport,
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
	if (seal) {
		struct in6_addr saddr;

		netagg_addr_from_v4(&saddr, fl4.saddr);
		if (netagg_tag_skb(seal, skb, &saddr, sport)) {
			kfree_skb(skb);
			return -EINVAL;
		}
	}

	uh = netagg_xmit_udp(skb, sport, dport);
	iph = skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = tos;
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
	netagg_xmit_csum(skb, uh, udp_v4_check(ulen, fl4.saddr, daddr, 0));
	/* net_xmit_eval() evaluates its argument twice. */
	err = ip_local_out(net, NULL, skb);
	return net_xmit_eval(err);
}

static int netagg_xmit6(struct net *net, struct sk_buff *skb,
			const struct in6_addr *daddr, __be16 sport,
			__be16 dport, u8 tclass, struct netagg_route *route,
			const struct netagg_tag_key *seal)
{
	struct flowi6 fl6 = {
		.daddr = *daddr,
		.flowi6_proto = IPPROTO_UDP,
		.fl6_sport = sport,
		.fl6_dport = dport,
	};
	unsigned int ulen = skb->len + sizeof(struct udphdr);
	struct dst_entry *dst;
	struct ipv6hdr *ip6h;
	struct udphdr *uh;
	int err;

	dst = netagg_route_get6(net, route, &fl6);
	if (IS_ERR(dst)) {
		kfree_skb(skb);
		return PTR_ERR(dst);
	}
	skb_dst_set_noref(skb, dst);
	if (seal && netagg_tag_skb(seal, skb, &fl6.saddr, sport)) {
		kfree_skb(skb);
		return -EINVAL;
	}

	uh = netagg_xmit_udp(skb, sport, dport);
	ip6h = skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6_flow_hdr(ip6h, tclass, 0);
	ip6h->payload_len = htons(ulen);
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = ip6_dst_hoplimit(dst);
	ip6h->saddr = fl6.saddr;
	ip6h->daddr = *daddr;

	skb->protocol = htons(ETH_P_IPV6);
	/*
	 * Never fragmented either: a packet over the path's MTU is dropped
	 * by the IPv6 output path (ignore_df unset), not cut up.
	 */
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	netagg_xmit_csum(skb, uh, csum_ipv6_magic(&fl6.saddr, daddr, ulen,
						  IPPROTO_UDP, 0));
	err = ip6_local_out(net, NULL, skb);
	return net_xmit_eval(err);
}

/**
 * netagg_xmit() - Send a packet to a parent or child.
 * @net: the namespace
 * @skb: the packet, netagg header first; consumed
 * @daddr: where it goes (addr.h: IPv4 or IPv6)
 * @sport: from which port: the namespace's
 * @dport: at which port
 * @tos: its TOS byte (IPv6: traffic class): the namespace's DSCP, an ECN
 *	 field
 * @route: @daddr's route cache
 * @seal: the job's key if the packet is a keyed job's sum for its parent,
 *	  tagged here, bound to the source address routing picks; else NULL
 *
 * Routed by @route (softirq or BHs off: inside an RCU read section, which
 * the route it lends without a reference needs). The source address is
 * the one routing picks towards @daddr: the address the receiving node
 * knows this one by.
 *
 * Return: 0, or the error of routing or of the IP layer's output.
 */
int netagg_xmit(struct net *net, struct sk_buff *skb,
		const struct in6_addr *daddr, __be16 sport, __be16 dport,
		u8 tos, struct netagg_route *route,
		const struct netagg_tag_key *seal)
{
	if (netagg_addr_is_v4(daddr))
		return netagg_xmit4(net, skb, netagg_addr_v4(daddr), sport,
				    dport, tos, route, seal);
	return netagg_xmit6(net, skb, daddr, sport, dport, tos, route, seal);
}

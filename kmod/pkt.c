// SPDX-License-Identifier: GPL-2.0
/*
 * The view of a received packet (pkt.h) where it is more than a few
 * loads: bytes of an skb read where they lie, which for a super-packet's
 * segments is in page fragments, and the UDP checksum checked, of an skb
 * or of an XDP frame.
 */

#include <linux/highmem.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/mm.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <linux/skbuff.h>
#include <net/checksum.h>
#include <net/ip6_checksum.h>
#include "pkt.h"

/**
 * netagg_skb_in_place() - Bytes of a packet where they lie, if they can be.
 * @skb: the packet
 * @off: where they start
 * @len: how many
 *
 * In its head, or within one page fragment. skb_header_pointer() would
 * copy every payload of a super-packet, whose segments lie in page
 * fragments.
 *
 * Return: the bytes, or NULL if they are split (or the packet is shorter).
 */
const void *netagg_skb_in_place(const struct sk_buff *skb, unsigned int off,
				unsigned int len)
{
	unsigned int head = skb_headlen(skb), at, i;
	const skb_frag_t *frag;

	if (likely(off + len <= head))
		return skb->data + off;
	if (off < head)
		return NULL;
	at = off - head;
	for (i = 0; i < skb_shinfo(skb)->nr_frags; i++) {
		frag = &skb_shinfo(skb)->frags[i];
		if (at >= skb_frag_size(frag)) {
			at -= skb_frag_size(frag);
			continue;
		}
		if (at + len <= skb_frag_size(frag) &&
		    !PageHighMem(skb_frag_page(frag)))
			return skb_frag_address(frag) + at;
		break;
	}
	return NULL;
}

/**
 * netagg_skb_pointer() - Bytes of a packet, in place if they can be.
 * @skb: the packet
 * @off: where they start
 * @len: how many
 * @buf: where to copy them otherwise, @len bytes
 *
 * Return: the bytes, or NULL if the packet is shorter.
 */
const void *netagg_skb_pointer(const struct sk_buff *skb, unsigned int off,
			       unsigned int len, void *buf)
{
	return netagg_skb_in_place(skb, off, len) ?:
	       skb_header_pointer(skb, off, len, buf);
}

/**
 * netagg_pkt_csum_bad() - Whether a packet's UDP checksum is wrong.
 * @pkt: the packet, its header checked (netagg_hdr_check()): the payload
 *	 ends the datagram
 *
 * An skb's as a device or the sender vouched for it, or computed; an XDP
 * frame's computed, no device's word reaching XDP.
 *
 * Return: true if it is wrong, or missing where it must be.
 */
bool netagg_pkt_csum_bad(const struct netagg_pkt *pkt)
{
	const struct ipv6hdr *ip6h = (const struct ipv6hdr *)pkt->frame;
	const struct iphdr *iph = (const struct iphdr *)pkt->frame;
	unsigned int len = pkt->off + pkt->len - pkt->ip_hlen;
	__wsum csum;

	if (pkt->csum_missing)
		return true;
	if (pkt->skb)
		return pkt->ipv6 ?
		       nf_ip6_checksum(pkt->skb, NF_INET_PRE_ROUTING,
				       pkt->ip_hlen, IPPROTO_UDP) :
		       nf_ip_checksum(pkt->skb, NF_INET_PRE_ROUTING,
				      pkt->ip_hlen, IPPROTO_UDP);
	csum = csum_partial(pkt->frame + pkt->ip_hlen, len, 0);
	if (pkt->ipv6)
		return csum_ipv6_magic(&ip6h->saddr, &ip6h->daddr, len,
				       IPPROTO_UDP, csum);
	return csum_tcpudp_magic(iph->saddr, iph->daddr, len, IPPROTO_UDP,
				 csum);
}

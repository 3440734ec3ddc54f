/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_PKT_H
#define _NETAGG_PKT_H

#include <linux/in6.h>
#include <linux/types.h>
#include <linux/netagg.h>

/*
 * An aggregation packet the hook has checked, as the datapath needs it:
 * filled by hook.c, read by agg.c and reuse.c. The packet is an skb, which
 * the datapath is given beside this, or, from the XDP entry, a frame that
 * is no skb: then @frame is where its IP header lies, and the frame is
 * linear, @off + @len bytes from there at least (the entry checked).
 */
struct netagg_pkt {
	struct netagg_hdr hdr;
	const u8 *frame;	/* the IP header of an XDP frame, else NULL */
	unsigned int ip_hlen;	/* IP header length, IPv6 extensions too */
	unsigned int off;	/* payload offset from the IP header */
	unsigned int len;	/* payload bytes: count * element size */
	struct in6_addr saddr;	/* addr.h: IPv4 ones IPv4-mapped */
	__be16 sport;
	u8 ecn;
	bool csum;		/* the UDP checksum is in use */
	bool csum_missing;	/* 0 in an IPv6 packet, which must have one */
	bool ipv6;		/* an IPv6 packet */
};

#endif /* _NETAGG_PKT_H */

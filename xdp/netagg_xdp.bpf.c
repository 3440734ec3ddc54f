// SPDX-License-Identifier: GPL-2.0
/*
 * netagg's XDP program: on a node's ports, it hands the frames that may be
 * aggregation packets (IPv4 or IPv6, UDP, DSCP 56) to the module's kfunc, which
 * checks them whole and sums them (kmod/xdp.c); every other frame passes
 * on to the stack after a few loads and compares. "netagg xdp attach DEV"
 * loads and attaches it (cli/xdp.c, which embeds it).
 */

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <linux/netagg.h>

/* The module's: XDP_DROP if it took the frame, else XDP_PASS. */
extern int netagg_xdp_rx(struct xdp_md *ctx) __ksym;

SEC("xdp")
int netagg_xdp(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct ethhdr *eth = data;
	struct ipv6hdr *ip6h = data + sizeof(*eth);
	struct iphdr *iph = data + sizeof(*eth);

	if ((void *)(iph + 1) > data_end)
		return XDP_PASS;
	if (eth->h_proto == bpf_htons(ETH_P_IP))
		return iph->protocol != IPPROTO_UDP ||
		       (iph->tos >> 2) != NETAGG_DSCP ? XDP_PASS :
		       netagg_xdp_rx(ctx);
	/* The traffic class straddles the first two bytes. */
	if (eth->h_proto != bpf_htons(ETH_P_IPV6) ||
	    (void *)(ip6h + 1) > data_end || ip6h->nexthdr != IPPROTO_UDP ||
	    ((ip6h->priority << 2) | (ip6h->flow_lbl[0] >> 6)) != NETAGG_DSCP)
		return XDP_PASS;
	return netagg_xdp_rx(ctx);
}

char _license[] SEC("license") = "GPL";

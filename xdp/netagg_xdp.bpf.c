// SPDX-License-Identifier: GPL-2.0
/*
 * netagg's XDP program: on a node's ports, it hands the frames that may be
 * aggregation packets (IPv4 or IPv6, UDP) to the module's kfunc, which
 * checks them whole, the namespace's DSCP and port first, and sums them
 * (kmod/xdp.c); every other frame passes on to the stack after a few loads
 * and compares. The DSCP is the kfunc's to check, not the program's: it is
 * the namespace's ("netagg set dscp N"), which may change while the program
 * runs. "netagg xdp attach DEV" loads and attaches it (cli/xdp.c, which
 * embeds it).
 */

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

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
		return iph->protocol != IPPROTO_UDP ? XDP_PASS :
		       netagg_xdp_rx(ctx);
	if (eth->h_proto != bpf_htons(ETH_P_IPV6) ||
	    (void *)(ip6h + 1) > data_end || ip6h->nexthdr != IPPROTO_UDP)
		return XDP_PASS;
	return netagg_xdp_rx(ctx);
}

char _license[] SEC("license") = "GPL";

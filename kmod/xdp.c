// SPDX-License-Identifier: GPL-2.0
/*
 * The XDP hook: aggregation before any skb is built. An XDP program on a
 * node's ports (xdp/netagg_xdp.bpf.c, attached by "netagg xdp attach")
 * hands each UDP frame, IPv4 or IPv6, to netagg_xdp_rx(), a kfunc: floats
 * cannot be summed in BPF, so the sums stay in the module, and the DSCP
 * that marks aggregation packets is the namespace's, which may change
 * while the program runs. The frame is checked here as the stack checks a
 * packet before the netfilter hook sees it, then goes to that hook's own
 * code (netagg_hook_frame()): one datapath, two entries.
 *
 * What the datapath does not take goes on to the stack untouched
 * (XDP_PASS), where the netfilter hook sees it, so a packet is aggregated
 * once whichever hooks are on. What it takes it consumes (XDP_DROP): the
 * frame goes back to its driver, what the datapath keeps of it copied, and
 * what the node sends leaves by the transmit path the netfilter hook's
 * packets use (xmit.c), as new packets.
 */

#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/etherdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <net/dsfield.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/xdp.h>
#include "compat/bpf.h"
#include "state.h"
#include "hook.h"
#include "netns.h"
#include "xdp.h"

/*
 * For this host, as ip_rcv() would have it: to the port's address, or, on
 * a bridge port, to the bridge's (a frame bridged on to another host is
 * never seen by the netfilter hook either). Multicast is left to the stack.
 */
static bool netagg_xdp_for_us(const struct net_device *dev,
			      const struct ethhdr *eth)
{
	const struct net_device *master;

	if (ether_addr_equal_64bits(eth->h_dest, dev->dev_addr))
		return true;
	if (!netif_is_bridge_port(dev))
		return false;
	master = netdev_master_upper_dev_get_rcu((struct net_device *)dev);
	return master && ether_addr_equal_64bits(eth->h_dest, master->dev_addr);
}

/*
 * veth: its frames are what a sender in the peer's namespace handed its
 * stack, checksums perhaps left for a device to fill (netagg_hook_frame()).
 */
static bool netagg_xdp_local(const struct net_device *dev)
{
	return dev->rtnl_link_ops && !strcmp(dev->rtnl_link_ops->kind, "veth");
}

/*
 * The frame's IPv4 header and IP length if the stack would hand it to the
 * netfilter hook as an aggregation packet's candidate: its header whole
 * with a good checksum, its length within the frame; UDP, marked @dscp.
 */
static const struct iphdr *netagg_xdp_ip(const struct xdp_buff *xdp, u8 dscp,
					 unsigned int *iplen)
{
	const struct ethhdr *eth = xdp->data;
	unsigned int len = xdp->data_end - xdp->data, ihl;
	const struct iphdr *iph;

	if (len < ETH_HLEN + sizeof(*iph))
		return NULL;
	iph = (const struct iphdr *)(eth + 1);
	len -= ETH_HLEN;
	ihl = iph->ihl * 4;
	if (iph->version != 4 || ihl < sizeof(*iph) || ihl > len ||
	    iph->protocol != IPPROTO_UDP || (iph->tos >> 2) != dscp)
		return NULL;
	*iplen = ntohs(iph->tot_len);
	if (*iplen < ihl || *iplen > len || ip_fast_csum(iph, iph->ihl))
		return NULL;
	if (!netagg_xdp_for_us(xdp->rxq->dev, eth))
		return NULL;
	return iph;
}

/*
 * The same for IPv6: version 6, its payload length within the frame, UDP
 * right after the header, marked @dscp. Extension headers go to the
 * stack, where the netfilter hook skips them.
 */
static const struct ipv6hdr *netagg_xdp_ip6(const struct xdp_buff *xdp,
					    u8 dscp, unsigned int *iplen)
{
	const struct ethhdr *eth = xdp->data;
	unsigned int len = xdp->data_end - xdp->data;
	const struct ipv6hdr *ip6h;

	if (len < ETH_HLEN + sizeof(*ip6h))
		return NULL;
	ip6h = (const struct ipv6hdr *)(eth + 1);
	len -= ETH_HLEN;
	if (ip6h->version != 6 || ip6h->nexthdr != IPPROTO_UDP ||
	    (ipv6_get_dsfield(ip6h) >> 2) != dscp)
		return NULL;
	*iplen = sizeof(*ip6h) + ntohs(ip6h->payload_len);
	/* A jumbogram's payload length is 0: the stack's to take. */
	if (!ip6h->payload_len || *iplen > len)
		return NULL;
	if (!netagg_xdp_for_us(xdp->rxq->dev, eth))
		return NULL;
	return ip6h;
}

__bpf_kfunc_start_defs();

/**
 * netagg_xdp_rx() - Aggregate an XDP frame, if it is an aggregation packet.
 * @ctx: the XDP program's context: the frame
 *
 * For XDP programs. The frame is checked whole here: the program need not
 * have looked at it.
 *
 * Return: XDP_DROP if the frame was taken (summed, passed on, answered, or
 * dropped and counted as malformed), else XDP_PASS: it goes on, untouched,
 * to the stack.
 */
__bpf_kfunc int netagg_xdp_rx(struct xdp_md *ctx)
{
	struct xdp_buff *xdp = (struct xdp_buff *)ctx;
	const struct ethhdr *eth = xdp->data;
	const struct ipv6hdr *ip6h = NULL;
	const struct iphdr *iph = NULL;
	unsigned int iplen, verdict;
	struct netagg_net *nn;
	int act = XDP_PASS;
	struct net *net;
	bool local;

	/* A frame in pages of its own: the stack builds it whole. */
	if (xdp_buff_has_frags(xdp))
		return XDP_PASS;
	/* The hook's context: an RCU read section, bottom halves off. */
	local_bh_disable();
	rcu_read_lock();
	if (xdp->data + ETH_HLEN > xdp->data_end)
		goto out;
	net = dev_net(xdp->rxq->dev);
	nn = netagg_pernet(net);
	/* Set before the namespace's state goes; read in an RCU section. */
	if (READ_ONCE(nn->exiting))
		goto out;
	if (eth->h_proto == htons(ETH_P_IP))
		iph = netagg_xdp_ip(xdp, READ_ONCE(nn->dscp), &iplen);
	else if (eth->h_proto == htons(ETH_P_IPV6))
		ip6h = netagg_xdp_ip6(xdp, READ_ONCE(nn->dscp), &iplen);
	if (!iph && !ip6h)
		goto out;
	local = netagg_xdp_local(xdp->rxq->dev);
	verdict = iph ? netagg_hook_frame(net, nn, iph, iplen, local) :
			netagg_hook_frame6(net, nn, ip6h, iplen, local);
	if (verdict != NF_ACCEPT)
		act = XDP_DROP;
out:
	rcu_read_unlock();
	local_bh_enable();
	return act;
}

__bpf_kfunc_end_defs();

BTF_KFUNCS_START(netagg_xdp_kfunc_ids)
BTF_ID_FLAGS(func, netagg_xdp_rx)
BTF_KFUNCS_END(netagg_xdp_kfunc_ids)

static const struct btf_kfunc_id_set netagg_xdp_kfunc_set = {
	.owner = THIS_MODULE,
	.set = &netagg_xdp_kfunc_ids,
};

/**
 * netagg_xdp_init() - Offer the XDP hook's kfunc to XDP programs.
 *
 * A kfunc set cannot be withdrawn: it goes with the module's BTF. Without
 * BTF (a kernel without CONFIG_DEBUG_INFO_BTF_MODULES, or a module built
 * where the kernel's BTF was not to be had: scripts/kbuild-btf), the
 * netfilter hook works as ever and "netagg xdp attach" says why it cannot.
 */
void netagg_xdp_init(void)
{
	int err;

	/*
	 * resolve_btfids counts the set and fills its IDs in at build time:
	 * a count of 0 if it did not run. Without CONFIG_DEBUG_INFO_BTF the
	 * set is its header alone, so its entries are read only past a count.
	 */
	if (!netagg_xdp_kfunc_ids.cnt || !netagg_xdp_kfunc_ids.pairs[0].id) {
		pr_info("no XDP hook: the module was built without BTF IDs\n");
		return;
	}
	err = register_btf_kfunc_id_set(BPF_PROG_TYPE_XDP,
					&netagg_xdp_kfunc_set);
	if (err)
		pr_info("no XDP hook: its kfunc cannot be registered (%d)\n",
			err);
}

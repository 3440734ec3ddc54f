// SPDX-License-Identifier: GPL-2.0
/*
 * The netfilter hook. At IPv4 PRE_ROUTING it sees both the packets addressed
 * to this node and those forwarded through it. A packet that is not an
 * aggregation packet costs a few loads and compares; an aggregation packet
 * of a job this namespace does not know passes on untouched; one of a known
 * job is checked and handed to the datapath (agg.c), or dropped with its
 * reason when malformed. The XDP entry (xdp.c) hands its frames to the same
 * code (netagg_hook_frame()): one path, with the packet an skb or a frame.
 */

#include <linux/ip.h>
#include <linux/netfilter_ipv4.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include "state.h"
#include "agg.h"
#include "reduce.h"
#include "hdr.h"
#include "hook.h"
#include "super.h"

/*
 * The job's place in the cache, else xa_load() without its own RCU read
 * section: netfilter runs hooks inside one already, and on this path every
 * instruction counts.
 */
static struct netagg_job *netagg_job_find(struct netagg_net *nn, u32 jid)
{
	struct netagg_job *job;
	XA_STATE(xas, &nn->jobs, jid);
	void *entry;

	job = rcu_dereference(*netagg_job_cache_place(nn, jid));
	if (likely(job && job->jid == jid))
		return job;
	do {
		entry = xas_load(&xas);
	} while (xas_retry(&xas, entry));
	return entry;
}

static unsigned int netagg_drop(struct netagg_stats *stats,
				enum netagg_stat reason)
{
	netagg_stats_inc(stats, reason);
	return NF_DROP;
}

/*
 * A packet of a known job: check its header, find its tree, hand it to the
 * datapath. @pkt has the addresses and offsets; the header is read here.
 * @skb is NULL for an XDP frame. What an XDP frame passes on to the stack
 * goes uncounted here: the netfilter hook sees it next and counts it.
 */
static __always_inline unsigned int
netagg_job_rx(struct net *net, struct netagg_net *nn, struct netagg_job *job,
	      struct sk_buff *skb, struct netagg_pkt *pkt)
{
	struct netagg_tree *tree;
	enum netagg_stat res;
	u16 tid;

	res = netagg_hdr_check(job, skb, pkt);
	tid = ntohs(pkt->hdr.tid);
	tree = tid < NETAGG_TREES_MAX ? rcu_dereference(job->trees[tid]) : NULL;
	if (!res && !tree) {
		/* Trees of a job take different paths: not ours to touch. */
		if (skb) {
			netagg_stats_inc(&job->stats, NETAGG_STAT_RX);
			netagg_stats_inc(&job->stats, NETAGG_STAT_NO_TREE);
		}
		return NF_ACCEPT;
	}
	if (!skb) {
		netagg_stats_inc(&nn->stats, NETAGG_STAT_NS_SEEN);
		netagg_stats_inc(&nn->stats, NETAGG_STAT_NS_XDP);
	}
	netagg_stats_inc(&job->stats, NETAGG_STAT_RX);
	if (res) {
		/* A worker probing with the wrong dtype is told the job's. */
		if (unlikely(res == NETAGG_STAT_DROP_DTYPE) && tree)
			netagg_tree_dtype_answer(net, job, tree, pkt);
		return netagg_drop(&job->stats, res);
	}
	return netagg_tree_rx(net, job, tree, skb, pkt);
}

/*
 * A super-packet of a known job: its first segment names the tree, and
 * every segment is checked on its own (netagg_tree_rx_super()). Counted
 * segment by segment, as the packets they stand for.
 */
static unsigned int netagg_job_rx_super(struct net *net,
					struct netagg_job *job,
					struct sk_buff *skb,
					struct netagg_pkt *pkt)
{
	const struct skb_shared_info *shinfo = skb_shinfo(skb);
	unsigned int gso = shinfo->gso_size, segs;
	struct netagg_tree *tree;
	__be16 _tid;
	const __be16 *tid;

	if (!(shinfo->gso_type & SKB_GSO_UDP_L4) || !gso) {
		netagg_stats_inc(&job->stats, NETAGG_STAT_RX);
		return netagg_drop(&job->stats, NETAGG_STAT_DROP_SEGMENT);
	}
	segs = DIV_ROUND_UP(pkt->len, gso);
	/* Seen once by the hook; recognised as the packets it stands for. */
	netagg_stats_add(&job->nn->stats, NETAGG_STAT_NS_SEEN, segs - 1);
	tid = min(gso, pkt->len) < sizeof(struct netagg_hdr) ? NULL :
	      skb_header_pointer(skb, pkt->off + offsetof(struct netagg_hdr, tid),
				 sizeof(_tid), &_tid);
	if (!tid) {
		netagg_stats_add(&job->stats, NETAGG_STAT_RX, segs);
		netagg_stats_add(&job->stats, NETAGG_STAT_DROP_SHORT, segs);
		return NF_DROP;
	}
	tree = ntohs(*tid) < NETAGG_TREES_MAX ?
	       rcu_dereference(job->trees[ntohs(*tid)]) : NULL;
	if (!tree) {
		netagg_stats_add(&job->stats, NETAGG_STAT_RX, segs);
		netagg_stats_add(&job->stats, NETAGG_STAT_NO_TREE, segs);
		return NF_ACCEPT;
	}
	return netagg_tree_rx_super(net, job, tree, skb, pkt, gso);
}

/* The UDP checksum field a device is left to complete: the pseudo-header's. */
static __sum16 netagg_csum_partial(const struct iphdr *iph, unsigned int len)
{
	return ~csum_tcpudp_magic(iph->saddr, iph->daddr, len, IPPROTO_UDP, 0);
}

/*
 * @len bytes at @off from the IP header: of @skb, or, @skb NULL, of the XDP
 * frame at @iph, @iplen bytes long. NULL if the packet is shorter.
 */
static const void *netagg_hook_bytes(const struct sk_buff *skb,
				     const struct iphdr *iph, unsigned int iplen,
				     unsigned int off, unsigned int len,
				     void *buf)
{
	if (skb)
		return skb_header_pointer(skb, off, len, buf);
	return off + len <= iplen ? (const u8 *)iph + off : NULL;
}

/*
 * A UDP packet marked DSCP 56: an aggregation packet if it is to our port.
 * @skb, or, @skb NULL, an XDP frame: @iph its IP header, checked as
 * ip_rcv() checks it, and @iplen its IP length; @local, the frame is from
 * a sender on this host (netagg_hook_frame()). Inlined into each entry,
 * so that neither pays for the other's tests. An XDP frame passed on to the
 * stack goes uncounted: the netfilter hook sees it next and counts it.
 */
static __always_inline unsigned int
netagg_hook_marked(struct net *net, struct netagg_net *nn, struct sk_buff *skb,
		   const struct iphdr *iph, unsigned int iplen, bool local)
{
	unsigned int ihl = iph->ihl * 4, off, len;
	const struct udphdr *uh;
	struct netagg_job *job;
	struct netagg_pkt pkt;
	struct udphdr _uh;
	const __be32 *jid;
	__be32 _jid;

	/* Only the first fragment has a port: DSCP 56 marks them all ours. */
	if (ip_is_fragment(iph)) {
		if (skb) {
			netagg_stats_inc(&nn->stats, NETAGG_STAT_NS_SEEN);
			netagg_stats_inc(&nn->stats, NETAGG_STAT_NS_FRAGMENT);
		}
		return NF_ACCEPT;
	}
	uh = netagg_hook_bytes(skb, iph, iplen, ihl, sizeof(_uh), &_uh);
	if (!uh || uh->dest != htons(NETAGG_UDP_PORT))
		return NF_ACCEPT;

	if (skb)
		netagg_stats_inc(&nn->stats, NETAGG_STAT_NS_SEEN);
	/* The IP length is checked; the UDP length is still the sender's. */
	len = ntohs(uh->len);
	if (len < sizeof(*uh) + offsetofend(struct netagg_hdr, jid) ||
	    len > iplen - ihl) {
		if (skb)
			netagg_stats_inc(&nn->stats, NETAGG_STAT_NS_SHORT);
		return NF_ACCEPT;
	}
	off = ihl + sizeof(*uh);
	len -= sizeof(*uh);
	jid = netagg_hook_bytes(skb, iph, iplen,
				off + offsetof(struct netagg_hdr, jid),
				sizeof(_jid), &_jid);
	job = jid ? netagg_job_find(nn, ntohl(*jid)) : NULL;
	if (!job) {
		if (skb)
			netagg_stats_inc(&nn->stats, NETAGG_STAT_NS_UNKNOWN_JOB);
		return NF_ACCEPT;
	}
	pkt = (struct netagg_pkt) {
		.frame = skb ? NULL : (const u8 *)iph,
		.ip_hlen = ihl,
		.off = off,
		.len = len,
		.saddr = iph->saddr,
		.sport = uh->source,
		.ecn = iph->tos & INET_ECN_MASK,
		.csum = uh->check != 0,
	};
	/*
	 * A local sender's checksum may have been left for a device to fill
	 * (CHECKSUM_PARTIAL: the field holds the pseudo-header's sum), and
	 * the stack takes such a packet as checked; an XDP frame no longer
	 * says so, but its field does.
	 */
	if (!skb && local && pkt.csum &&
	    uh->check == netagg_csum_partial(iph, ntohs(uh->len)))
		pkt.csum = false;
	if (unlikely(skb && skb_is_gso(skb)))
		return netagg_job_rx_super(net, job, skb, &pkt);
	return netagg_job_rx(net, nn, job, skb, &pkt);
}

/**
 * netagg_hook_frame() - An XDP frame marked for aggregation, to the datapath.
 * @net: the namespace it came in
 * @nn: its netagg state
 * @iph: the frame's IP header, version 4, its length, header length and
 *	 checksum checked as ip_rcv() checks them; UDP, DSCP 56
 * @iplen: its IP length, all of it in the frame
 * @local: it comes from a sender on this host (a veth peer's), whose UDP
 *	   checksum may have been left for a device to fill, as the stack
 *	   leaves it for one: then it is taken as checked, as the stack takes
 *	   it. From a wire, every checksum is computed.
 *
 * Called within an RCU read section, bottom halves off.
 *
 * Return: NF_ACCEPT if the frame is to go on to the stack (not ours, or
 * not this node's to aggregate); else it is consumed: summed, passed on,
 * answered, or dropped and counted.
 */
unsigned int netagg_hook_frame(struct net *net, struct netagg_net *nn,
			       const struct iphdr *iph, unsigned int iplen,
			       bool local)
{
	return netagg_hook_marked(net, nn, NULL, iph, iplen, local);
}

/*
 * Every IPv4 packet the namespace receives or forwards: what is not ours
 * leaves after two compares, before anything is set up for the rest.
 */
static unsigned int netagg_hook(void *priv, struct sk_buff *skb,
				const struct nf_hook_state *state)
{
	const struct iphdr *iph = ip_hdr(skb);

	if (likely(iph->protocol != IPPROTO_UDP ||
		   (iph->tos >> 2) != NETAGG_DSCP))
		return NF_ACCEPT;
	/* ip_rcv() checked the header and trimmed the packet to its length. */
	return netagg_hook_marked(state->net, priv, skb, iph, skb->len, false);
}

/**
 * netagg_hook_register() - Hook a namespace's IPv4 PRE_ROUTING.
 * @net: the namespace
 * @nn: its netagg state, which holds the hook
 *
 * Return: 0, or nf_register_net_hook()'s error.
 */
int netagg_hook_register(struct net *net, struct netagg_net *nn)
{
	nn->hook_ops = (struct nf_hook_ops) {
		.hook = netagg_hook,
		.priv = nn,
		.pf = NFPROTO_IPV4,
		.hooknum = NF_INET_PRE_ROUTING,
		/* Ahead of defrag and conntrack: aggregation is stateless. */
		.priority = NF_IP_PRI_RAW_BEFORE_DEFRAG,
	};
	return nf_register_net_hook(net, &nn->hook_ops);
}

/**
 * netagg_hook_unregister() - Unhook a namespace.
 * @net: the namespace
 * @nn: its netagg state
 */
void netagg_hook_unregister(struct net *net, struct netagg_net *nn)
{
	nf_unregister_net_hook(net, &nn->hook_ops);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The netfilter hooks. At IPv4's and IPv6's PRE_ROUTING they see both the
 * packets addressed to this node and those forwarded through it. A packet
 * that is not an
 * aggregation packet costs a few loads and compares; an aggregation packet
 * of a job this namespace does not know passes on untouched; one of a known
 * job is checked and handed to the datapath (agg.c), or dropped with its
 * reason when malformed. The XDP entry (xdp.c) hands its frames to the same
 * code (netagg_hook_frame()): one path, with the packet an skb or a frame,
 * each entry's tests inlined into it. What it hands the datapath is one
 * view of either (pkt.h).
 */

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/dsfield.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/ipv6.h>
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

	res = netagg_hdr_check(job, pkt);
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
	return netagg_tree_rx(net, job, tree, pkt);
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
	return netagg_tree_rx_super(net, job, tree, pkt, gso);
}

/*
 * The UDP checksum field a device is left to complete: the pseudo-header's
 * sum, for a datagram of @len bytes.
 */
static __sum16 netagg_csum_partial(const struct netagg_pkt *pkt,
				   unsigned int len)
{
	const struct ipv6hdr *ip6h = (const struct ipv6hdr *)pkt->frame;
	const struct iphdr *iph = (const struct iphdr *)pkt->frame;

	if (pkt->ipv6)
		return ~csum_ipv6_magic(&ip6h->saddr, &ip6h->daddr, len,
					IPPROTO_UDP, 0);
	return ~csum_tcpudp_magic(iph->saddr, iph->daddr, len, IPPROTO_UDP, 0);
}

/*
 * @len bytes at @off from the IP header: of @skb, or, @skb NULL, of the XDP
 * frame at @frame, @iplen bytes long. NULL if the packet is shorter.
 */
static const void *netagg_hook_bytes(const struct sk_buff *skb,
				     const u8 *frame, unsigned int iplen,
				     unsigned int off, unsigned int len,
				     void *buf)
{
	if (skb)
		return skb_header_pointer(skb, off, len, buf);
	return off + len <= iplen ? frame + off : NULL;
}

/*
 * A UDP datagram marked our DSCP: an aggregation packet if it is to our
 * port. @skb, or, @skb NULL, an XDP frame, @iplen bytes from its IP
 * header; @pkt says what its IP header does: where that is in a frame,
 * where the UDP header is (@pkt->ip_hlen), the source, the ECN field and
 * the family. @local, the frame is from a sender on this host
 * (netagg_hook_frame()). Inlined into each entry, so that none pays for
 * another's tests. An XDP frame passed on to the stack goes uncounted: the
 * netfilter hook sees it next and counts it.
 */
static __always_inline unsigned int
netagg_hook_udp(struct net *net, struct netagg_net *nn, struct sk_buff *skb,
		struct netagg_pkt *pkt, unsigned int iplen, bool local)
{
	unsigned int hlen = pkt->ip_hlen, len;
	const struct udphdr *uh;
	struct netagg_job *job;
	struct udphdr _uh;
	const __be32 *jid;
	__be32 _jid;

	uh = netagg_hook_bytes(skb, pkt->frame, iplen, hlen, sizeof(_uh), &_uh);
	if (!uh || uh->dest != READ_ONCE(nn->port))
		return NF_ACCEPT;

	if (skb) {
		netagg_stats_inc(&nn->stats, NETAGG_STAT_NS_SEEN);
		if (pkt->ipv6 && hlen != sizeof(struct ipv6hdr))
			netagg_stats_inc(&nn->stats, NETAGG_STAT_NS_EXTHDR);
	}
	/* The IP length is checked; the UDP length is still the sender's. */
	len = ntohs(uh->len);
	if (len < sizeof(*uh) + offsetofend(struct netagg_hdr, jid) ||
	    len > iplen - hlen) {
		if (skb)
			netagg_stats_inc(&nn->stats, NETAGG_STAT_NS_SHORT);
		return NF_ACCEPT;
	}
	pkt->off = hlen + sizeof(*uh);
	pkt->len = len - sizeof(*uh);
	jid = netagg_hook_bytes(skb, pkt->frame, iplen,
				pkt->off + offsetof(struct netagg_hdr, jid),
				sizeof(_jid), &_jid);
	job = jid ? netagg_job_find(nn, ntohl(*jid)) : NULL;
	if (!job) {
		if (skb)
			netagg_stats_inc(&nn->stats, NETAGG_STAT_NS_UNKNOWN_JOB);
		return NF_ACCEPT;
	}
	pkt->sport = uh->source;
	/* Over IPv6 it is never optional: one without is refused (agg.c). */
	pkt->csum = uh->check != 0 || pkt->ipv6;
	pkt->csum_missing = !uh->check && pkt->ipv6;
	/*
	 * A local sender's checksum may have been left for a device to fill
	 * (CHECKSUM_PARTIAL: the field holds the pseudo-header's sum), and
	 * the stack takes such a packet as checked; an XDP frame no longer
	 * says so, but its field does.
	 */
	if (!skb && local && uh->check &&
	    uh->check == netagg_csum_partial(pkt, len))
		pkt->csum = false;
	if (unlikely(skb && skb_is_gso(skb)))
		return netagg_job_rx_super(net, job, skb, pkt);
	return netagg_job_rx(net, nn, job, skb, pkt);
}

/*
 * An IPv4 packet marked our DSCP, UDP: @skb, or, @skb NULL, an XDP frame
 * whose IP header @iph is checked as ip_rcv() checks it, @iplen its IP
 * length.
 */
static __always_inline unsigned int
netagg_hook_marked(struct net *net, struct netagg_net *nn, struct sk_buff *skb,
		   const struct iphdr *iph, unsigned int iplen, bool local)
{
	struct netagg_pkt pkt;

	/* Only the first fragment has a port: our DSCP marks them all ours. */
	if (ip_is_fragment(iph)) {
		if (skb) {
			netagg_stats_inc(&nn->stats, NETAGG_STAT_NS_SEEN);
			netagg_stats_inc(&nn->stats, NETAGG_STAT_NS_FRAGMENT);
		}
		return NF_ACCEPT;
	}
	pkt.skb = skb;
	pkt.frame = skb ? NULL : (const u8 *)iph;
	pkt.ip_hlen = iph->ihl * 4;
	netagg_addr_from_v4(&pkt.saddr, iph->saddr);
	pkt.ecn = iph->tos & INET_ECN_MASK;
	pkt.ipv6 = false;
	return netagg_hook_udp(net, nn, skb, &pkt, iplen, local);
}

/*
 * netagg_hook_marked() for IPv6: @ip6h marked our DSCP, its UDP header
 * @hlen bytes from it, past any extension headers.
 */
static __always_inline unsigned int
netagg_hook_marked6(struct net *net, struct netagg_net *nn,
		    struct sk_buff *skb, const struct ipv6hdr *ip6h,
		    unsigned int hlen, unsigned int iplen, bool local)
{
	struct netagg_pkt pkt;

	pkt.skb = skb;
	pkt.frame = skb ? NULL : (const u8 *)ip6h;
	pkt.ip_hlen = hlen;
	pkt.saddr = ip6h->saddr;
	pkt.ecn = ipv6_get_dsfield(ip6h) & INET_ECN_MASK;
	pkt.ipv6 = true;
	return netagg_hook_udp(net, nn, skb, &pkt, iplen, local);
}

/**
 * netagg_hook_frame() - An XDP frame marked for aggregation, to the datapath.
 * @net: the namespace it came in
 * @nn: its netagg state
 * @iph: the frame's IP header, version 4, its length, header length and
 *	 checksum checked as ip_rcv() checks them; UDP, our DSCP
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

/**
 * netagg_hook_frame6() - netagg_hook_frame() for IPv6.
 * @net: the namespace it came in
 * @nn: its netagg state
 * @ip6h: the frame's IPv6 header, UDP right after it, our DSCP
 * @iplen: its IP length (header and payload), all of it in the frame
 * @local: as netagg_hook_frame()'s
 *
 * Return: as netagg_hook_frame().
 */
unsigned int netagg_hook_frame6(struct net *net, struct netagg_net *nn,
				const struct ipv6hdr *ip6h, unsigned int iplen,
				bool local)
{
	return netagg_hook_marked6(net, nn, NULL, ip6h, sizeof(*ip6h), iplen,
				   local);
}

/*
 * Every IPv4 packet the namespace receives or forwards: what is not ours
 * leaves after two compares, before anything is set up for the rest.
 */
static unsigned int netagg_hook(void *priv, struct sk_buff *skb,
				const struct nf_hook_state *state)
{
	const struct iphdr *iph = ip_hdr(skb);
	struct netagg_net *nn = priv;

	if (likely(iph->protocol != IPPROTO_UDP ||
		   (iph->tos >> 2) != READ_ONCE(nn->dscp)))
		return NF_ACCEPT;
	/* ip_rcv() checked the header and trimmed the packet to its length. */
	return netagg_hook_marked(state->net, nn, skb, iph, skb->len, false);
}

/*
 * Every IPv6 packet the namespace receives or forwards: what is not marked
 * our DSCP leaves after one compare. The UDP header may come after
 * extension headers, which are skipped (an aggregation packet so is
 * counted: NS_EXTHDR); a chain that does not lead to an upper layer (cut
 * short, or "no next header") is the stack's to drop. A UDP fragment, its
 * header found so, goes on untouched, as an IPv4 one does.
 */
static unsigned int netagg_hook6(void *priv, struct sk_buff *skb,
				 const struct nf_hook_state *state)
{
	const struct ipv6hdr *ip6h = ipv6_hdr(skb);
	struct netagg_net *nn = priv;
	unsigned int hlen = sizeof(*ip6h);
	u8 nexthdr = ip6h->nexthdr;
	const struct frag_hdr *fh;
	__be16 frag_off = 0;
	struct frag_hdr _fh;
	int off;

	if (likely((ipv6_get_dsfield(ip6h) >> 2) != READ_ONCE(nn->dscp)))
		return NF_ACCEPT;
	if (unlikely(nexthdr != IPPROTO_UDP)) {
		if (!ipv6_ext_hdr(nexthdr))
			return NF_ACCEPT;
		off = ipv6_skip_exthdr(skb, hlen, &nexthdr, &frag_off);
		if (off < 0)
			return NF_ACCEPT;
		/* Past the first fragment, the walk stops at its header. */
		if (frag_off && nexthdr == NEXTHDR_FRAGMENT) {
			fh = skb_header_pointer(skb, off, sizeof(_fh), &_fh);
			if (!fh)
				return NF_ACCEPT;
			nexthdr = fh->nexthdr;
		}
		if (nexthdr != IPPROTO_UDP)
			return NF_ACCEPT;
		/* Only the first fragment has a port: our DSCP marks them all. */
		if (frag_off) {
			netagg_stats_inc(&nn->stats, NETAGG_STAT_NS_SEEN);
			netagg_stats_inc(&nn->stats, NETAGG_STAT_NS_FRAGMENT);
			return NF_ACCEPT;
		}
		hlen = off;
	}
	/* ipv6_rcv() trimmed the packet to its payload length. */
	return netagg_hook_marked6(state->net, nn, skb, ip6h, hlen, skb->len,
				   false);
}

/**
 * netagg_hook_register() - Hook a namespace's IPv4 and IPv6 PRE_ROUTING.
 * @net: the namespace
 * @nn: its netagg state, which holds the hooks
 *
 * Return: 0, or nf_register_net_hooks()'s error.
 */
int netagg_hook_register(struct net *net, struct netagg_net *nn)
{
	/* Ahead of defrag and conntrack: aggregation is stateless. */
	nn->hook_ops[0] = (struct nf_hook_ops) {
		.hook = netagg_hook,
		.priv = nn,
		.pf = NFPROTO_IPV4,
		.hooknum = NF_INET_PRE_ROUTING,
		.priority = NF_IP_PRI_RAW_BEFORE_DEFRAG,
	};
	nn->hook_ops[1] = (struct nf_hook_ops) {
		.hook = netagg_hook6,
		.priv = nn,
		.pf = NFPROTO_IPV6,
		.hooknum = NF_INET_PRE_ROUTING,
		.priority = NF_IP6_PRI_RAW_BEFORE_DEFRAG,
	};
	return nf_register_net_hooks(net, nn->hook_ops,
				     ARRAY_SIZE(nn->hook_ops));
}

/**
 * netagg_hook_unregister() - Unhook a namespace.
 * @net: the namespace
 * @nn: its netagg state
 */
void netagg_hook_unregister(struct net *net, struct netagg_net *nn)
{
	nf_unregister_net_hooks(net, nn->hook_ops, ARRAY_SIZE(nn->hook_ops));
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The netfilter hook. At IPv4 PRE_ROUTING it sees both the packets addressed
 * to this node and those forwarded through it. A packet that is not an
 * aggregation packet costs a few loads and compares; an aggregation packet
 * of a job this namespace does not know passes on untouched; one of a known
 * job is checked and handed to the datapath (agg.c), or dropped with its
 * reason when malformed.
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
 */
static unsigned int netagg_job_rx(struct net *net, struct netagg_job *job,
				  struct sk_buff *skb, struct netagg_pkt *pkt)
{
	struct netagg_tree *tree;
	enum netagg_stat res;
	u16 tid;

	res = netagg_hdr_check(job, skb, pkt);
	tid = ntohs(pkt->hdr.tid);
	tree = tid < NETAGG_TREES_MAX ? rcu_dereference(job->trees[tid]) : NULL;
	if (res) {
		/* A worker probing with the wrong dtype is told the job's. */
		if (unlikely(res == NETAGG_STAT_DROP_DTYPE) && tree)
			netagg_tree_dtype_answer(net, job, tree, pkt);
		return netagg_drop(&job->stats, res);
	}
	if (!tree) {
		/* Trees of a job take different paths: not ours to touch. */
		netagg_stats_inc(&job->stats, NETAGG_STAT_NO_TREE);
		return NF_ACCEPT;
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

/* A UDP packet marked DSCP 56: an aggregation packet if it is to our port. */
static unsigned int netagg_hook_marked(struct netagg_net *nn,
				       struct sk_buff *skb,
				       const struct nf_hook_state *state)
{
	const struct iphdr *iph = ip_hdr(skb);
	const struct udphdr *uh;
	struct netagg_job *job;
	struct netagg_pkt pkt;
	struct udphdr _uh;
	unsigned int off, len;
	const __be32 *jid;
	__be32 _jid;

	/* Only the first fragment has a port: DSCP 56 marks them all ours. */
	if (ip_is_fragment(iph)) {
		netagg_stats_inc(&nn->stats, NETAGG_STAT_NS_SEEN);
		netagg_stats_inc(&nn->stats, NETAGG_STAT_NS_FRAGMENT);
		return NF_ACCEPT;
	}
	off = ip_hdrlen(skb);
	uh = skb_header_pointer(skb, off, sizeof(_uh), &_uh);
	if (!uh || uh->dest != htons(NETAGG_UDP_PORT))
		return NF_ACCEPT;

	netagg_stats_inc(&nn->stats, NETAGG_STAT_NS_SEEN);
	/* ip_rcv() checked the IP length; the UDP length is still the sender's. */
	len = ntohs(uh->len);
	if (len < sizeof(*uh) + offsetofend(struct netagg_hdr, jid) ||
	    len > skb->len - off) {
		netagg_stats_inc(&nn->stats, NETAGG_STAT_NS_SHORT);
		return NF_ACCEPT;
	}
	off += sizeof(*uh);
	len -= sizeof(*uh);
	jid = skb_header_pointer(skb, off + offsetof(struct netagg_hdr, jid),
				 sizeof(_jid), &_jid);
	job = jid ? netagg_job_find(nn, ntohl(*jid)) : NULL;
	if (!job) {
		netagg_stats_inc(&nn->stats, NETAGG_STAT_NS_UNKNOWN_JOB);
		return NF_ACCEPT;
	}
	pkt = (struct netagg_pkt) {
		.ip_hlen = ip_hdrlen(skb),
		.off = off,
		.len = len,
		.saddr = iph->saddr,
		.sport = uh->source,
		.ecn = iph->tos & INET_ECN_MASK,
		.csum = uh->check != 0,
	};
	if (unlikely(skb_is_gso(skb)))
		return netagg_job_rx_super(state->net, job, skb, &pkt);
	netagg_stats_inc(&job->stats, NETAGG_STAT_RX);
	return netagg_job_rx(state->net, job, skb, &pkt);
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
	return netagg_hook_marked(priv, skb, state);
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

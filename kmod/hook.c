// SPDX-License-Identifier: GPL-2.0
/*
 * The netfilter hook. At IPv4 PRE_ROUTING it sees both the packets addressed
 * to this node and those forwarded through it. A packet that is not an
 * aggregation packet costs a few loads and compares; an aggregation packet
 * of a job this namespace does not know passes on untouched; one of a known
 * job is checked and counted, and dropped with a reason when malformed.
 */

#include <linux/ip.h>
#include <linux/netfilter_ipv4.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/ip.h>
#include "netns.h"
#include "job.h"
#include "hook.h"

static unsigned int netagg_drop(struct netagg_stats *stats,
				enum netagg_stat reason)
{
	netagg_stats_inc(stats, reason);
	return NF_DROP;
}

/* @off and @len: where the aggregation header starts, and the UDP payload. */
static unsigned int netagg_job_rx(struct netagg_job *job, struct sk_buff *skb,
				  unsigned int off, unsigned int len)
{
	const struct netagg_hdr *ah;
	struct netagg_hdr _ah;
	struct netagg_tree *tree;
	u16 tid;

	if (len < sizeof(*ah))
		return netagg_drop(&job->stats, NETAGG_STAT_DROP_SHORT);
	ah = skb_header_pointer(skb, off, sizeof(_ah), &_ah);
	if (!ah)
		return netagg_drop(&job->stats, NETAGG_STAT_DROP_SHORT);
	if (ah->version != NETAGG_PROTO_VERSION)
		return netagg_drop(&job->stats, NETAGG_STAT_DROP_VERSION);
	if (ah->dtype != job->dtype)
		return netagg_drop(&job->stats, NETAGG_STAT_DROP_DTYPE);
	len -= sizeof(*ah);
	if (len != ntohs(ah->count) * netagg_dtype_size(job->dtype) ||
	    len > job->payload_max)
		return netagg_drop(&job->stats, NETAGG_STAT_DROP_LENGTH);
	tid = ntohs(ah->tid);
	tree = tid < NETAGG_TREES_MAX ? rcu_dereference(job->trees[tid]) : NULL;
	if (!tree)
		return netagg_drop(&job->stats, NETAGG_STAT_DROP_NO_TREE);

	netagg_stats_inc(&tree->stats, NETAGG_STAT_RX);
	/* No summation in the module yet: a valid packet goes on its way. */
	return NF_ACCEPT;
}

static unsigned int netagg_hook(void *priv, struct sk_buff *skb,
				const struct nf_hook_state *state)
{
	struct netagg_net *nn = priv;
	const struct iphdr *iph = ip_hdr(skb);
	const struct udphdr *uh;
	struct netagg_job *job;
	struct udphdr _uh;
	unsigned int off, len;
	const __be32 *jid;
	__be32 _jid;

	if (likely(iph->protocol != IPPROTO_UDP ||
		   (iph->tos >> 2) != NETAGG_DSCP))
		return NF_ACCEPT;
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
	job = jid ? xa_load(&nn->jobs, ntohl(*jid)) : NULL;
	if (!job) {
		netagg_stats_inc(&nn->stats, NETAGG_STAT_NS_UNKNOWN_JOB);
		return NF_ACCEPT;
	}
	netagg_stats_inc(&job->stats, NETAGG_STAT_RX);
	return netagg_job_rx(job, skb, off, len);
}

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

void netagg_hook_unregister(struct net *net, struct netagg_net *nn)
{
	nf_unregister_net_hook(net, &nn->hook_ops);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The aggregation datapath of one tree, in softirq.
 *
 * A child's contribution for VID v is summed into v's slot of the window.
 * When every child in the bitmap has contributed to the slot of
 * expected_vid, the sum leaves (from an aggregator up to the parent, from
 * the root down to every child) and expected_vid advances: sums leave in
 * VID order. A result from the parent is fanned out to the children. The
 * tree's lock covers only the slot work and building the packets that
 * leave; they are routed and sent after it is released.
 */

#include <linux/percpu.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <net/inet_ecn.h>
#include "job.h"
#include "agg.h"
#include "reduce.h"
#include "xmit.h"

/* Where the payload of a nonlinear packet is gathered: one per CPU. */
static void __percpu *netagg_bounce;

int __init netagg_agg_init(void)
{
	netagg_bounce = __alloc_percpu(NETAGG_MTU_MAX, SMP_CACHE_BYTES);
	return netagg_bounce ? 0 : -ENOMEM;
}

void netagg_agg_exit(void)
{
	free_percpu(netagg_bounce);
}

struct netagg_cb {
	u8 ecn;
};

#define NETAGG_CB(skb) ((struct netagg_cb *)(skb)->cb)

/* Packets built under the tree's lock, and where they go once it is free. */
struct netagg_out {
	struct sk_buff_head skbs;	/* one per sum or result, in VID order */
	__be32 addr[NETAGG_CHILDREN_MAX];
	__be16 port[NETAGG_CHILDREN_MAX];
	unsigned int n;
	enum netagg_stat sent;		/* EMITTED_UP or FANNED_OUT */
};

/* Congestion seen by any input is seen by the sum. */
static u8 netagg_ecn_merge(u8 a, u8 b)
{
	if (a == INET_ECN_CE || b == INET_ECN_CE)
		return INET_ECN_CE;
	return a ?: b;
}

static int netagg_child_bit(const struct netagg_tree *tree, __be32 addr)
{
	u64 bits = tree->bitmap;
	int bit;

	while (bits) {
		bit = __ffs64(bits);
		if (tree->children[bit] == addr)
			return bit;
		bits &= bits - 1;
	}
	return -1;
}

/* Queue a packet carrying @hdr and @len bytes copied from @data. */
static void netagg_queue(struct netagg_tree *tree, struct netagg_out *out,
			 const struct netagg_hdr *hdr, const void *data,
			 unsigned int len, u8 ecn)
{
	struct sk_buff *skb = netagg_xmit_alloc(hdr, len);

	if (!skb) {
		netagg_stats_inc(&tree->stats, NETAGG_STAT_DROP_NOMEM);
		return;
	}
	memcpy(skb->data + sizeof(*hdr), data, len);
	NETAGG_CB(skb)->ecn = ecn;
	__skb_queue_tail(&out->skbs, skb);
}

/*
 * The slot at the head is complete: send its sum on, free it, advance.
 * Returns true when it was the job's last VID and the tree restarted.
 */
static bool netagg_complete(struct netagg_job *job, struct netagg_tree *tree,
			    struct netagg_slot *slot, void *data,
			    struct netagg_out *out)
{
	bool root = tree->role == NETAGG_ROLE_ROOT;
	struct netagg_hdr hdr = {
		.version = NETAGG_PROTO_VERSION,
		.flags = (root ? NETAGG_F_RESULT : 0) |
			 (slot->fin ? NETAGG_F_FIN : 0),
		.dtype = job->dtype,
		.jid = htonl(job->jid),
		.vid = htonl(slot->vid),
		.tid = htons(tree->tid),
		.count = htons(slot->count),
		.contributors = htons(slot->contributors),
	};

	/* Only the root divides: aggregators pass sums and their counts up. */
	if (root && job->op == NETAGG_OP_AVG)
		netagg_scale(job->dtype, data, slot->count, slot->contributors);
	netagg_queue(tree, out, &hdr, data,
		     slot->count * netagg_dtype_size(job->dtype), slot->ecn);

	if (slot->fin) {
		/* The job's last VID on this tree: start over at VID 0. */
		netagg_tree_restart(tree);
		return true;
	}
	slot->busy = false;
	tree->expected_vid++;
	if (++tree->head == tree->window)
		tree->head = 0;
	return false;
}

static void netagg_drain(struct netagg_job *job, struct netagg_tree *tree,
			 struct netagg_out *out)
{
	struct netagg_slot *slot;

	for (;;) {
		slot = &tree->slots[tree->head];
		if (!slot->busy || (slot->seen & tree->bitmap) != tree->bitmap)
			return;
		if (netagg_complete(job, tree, slot,
				    tree->data + tree->head * tree->stride, out))
			return;
	}
}

static enum netagg_stat netagg_contribution(struct netagg_job *job,
					    struct netagg_tree *tree,
					    struct sk_buff *skb,
					    const struct netagg_pkt *pkt,
					    struct netagg_out *out)
{
	u32 vid = ntohl(pkt->hdr.vid);
	u16 count = ntohs(pkt->hdr.count);
	u32 ahead = vid - tree->expected_vid;
	struct netagg_slot *slot;
	const void *src;
	void *data;
	int bit;
	u32 i;

	bit = netagg_child_bit(tree, pkt->saddr);
	if (bit < 0)
		return NETAGG_STAT_DROP_NOT_CHILD;
	if (ahead >= tree->window) {
		/* A VID just completed comes again: a retransmission. */
		if (tree->expected_vid - vid <= tree->window)
			return NETAGG_STAT_DUPLICATE;
		return NETAGG_STAT_DROP_WINDOW;
	}

	i = (tree->head + ahead) % tree->window;
	slot = &tree->slots[i];
	data = tree->data + i * tree->stride;
	if (!slot->busy) {
		/* The first contribution is copied, not added to zeros. */
		if (skb_copy_bits(skb, pkt->off, data, pkt->len))
			return NETAGG_STAT_DROP_LENGTH;
		*slot = (struct netagg_slot) {
			.vid = vid,
			.count = count,
			.ecn = pkt->ecn,
			.busy = true,
		};
	} else {
		if (slot->seen & BIT_ULL(bit))
			return NETAGG_STAT_DUPLICATE;
		if (slot->count != count)
			return NETAGG_STAT_DROP_LENGTH;
		src = skb_header_pointer(skb, pkt->off, pkt->len,
					 this_cpu_ptr(netagg_bounce));
		if (!src)
			return NETAGG_STAT_DROP_LENGTH;
		netagg_sum(job->dtype, data, src, count);
		slot->ecn = netagg_ecn_merge(slot->ecn, pkt->ecn);
	}
	slot->seen |= BIT_ULL(bit);
	slot->contributors = min_t(u32, U16_MAX, slot->contributors +
				   ntohs(pkt->hdr.contributors));
	slot->fin |= !!(pkt->hdr.flags & NETAGG_F_FIN);
	tree->child_port[bit] = pkt->sport;
	netagg_drain(job, tree, out);
	return NETAGG_STAT_AGGREGATED;
}

static enum netagg_stat netagg_result(struct netagg_tree *tree,
				      struct sk_buff *skb,
				      const struct netagg_pkt *pkt,
				      struct netagg_out *out)
{
	const void *src;

	if (tree->role != NETAGG_ROLE_AGGREGATOR || pkt->saddr != tree->parent)
		return NETAGG_STAT_DROP_NOT_PARENT;
	src = skb_header_pointer(skb, pkt->off, pkt->len,
				 this_cpu_ptr(netagg_bounce));
	if (!src)
		return NETAGG_STAT_DROP_LENGTH;
	netagg_queue(tree, out, &pkt->hdr, src, pkt->len, pkt->ecn);
	return NETAGG_STAT_RESULTS_RX;
}

/* Under the tree's lock: who gets what was queued. */
static void netagg_out_dests(struct netagg_tree *tree, struct netagg_out *out,
			     bool down)
{
	u64 bits = tree->bitmap;
	int bit;

	if (!down) {
		out->addr[0] = tree->parent;
		out->port[0] = htons(NETAGG_UDP_PORT);
		out->n = 1;
		out->sent = NETAGG_STAT_EMITTED_UP;
		return;
	}
	out->n = 0;
	while (bits) {
		bit = __ffs64(bits);
		out->addr[out->n] = tree->children[bit];
		out->port[out->n++] = tree->child_port[bit];
		bits &= bits - 1;
	}
	out->sent = NETAGG_STAT_FANNED_OUT;
}

static void netagg_out_send(struct net *net, struct netagg_tree *tree,
			    struct netagg_out *out)
{
	struct sk_buff *skb, *copy;
	unsigned int i;
	u8 ecn;

	while ((skb = __skb_dequeue(&out->skbs))) {
		ecn = NETAGG_CB(skb)->ecn;
		for (i = 0; i < out->n; i++) {
			/* The last destination gets the original. */
			copy = i + 1 < out->n ? skb_copy(skb, GFP_ATOMIC) : skb;
			if (copy && !netagg_xmit(net, copy, out->addr[i],
						 out->port[i], ecn))
				netagg_stats_inc(&tree->stats, out->sent);
			else
				netagg_stats_inc(&tree->stats,
						 NETAGG_STAT_DROP_NOMEM);
		}
		if (!out->n)
			kfree_skb(skb);
	}
}

/*
 * After a live bitmap change (process context, config lock held): slots
 * that were waiting only for a removed child are complete now, and no packet
 * may come to complete them if every other child waits for their results.
 */
void netagg_tree_kick(struct net *net, struct netagg_job *job,
		      struct netagg_tree *tree)
{
	struct netagg_out out;

	__skb_queue_head_init(&out.skbs);
	out.n = 0;
	/* The packet path's context: BHs off for the per-CPU counters. */
	local_bh_disable();
	spin_lock(&tree->lock);
	netagg_drain(job, tree, &out);
	if (!skb_queue_empty(&out.skbs))
		netagg_out_dests(tree, &out, tree->role == NETAGG_ROLE_ROOT);
	spin_unlock(&tree->lock);
	netagg_out_send(net, tree, &out);
	local_bh_enable();
}

/*
 * A checked aggregation packet of @tree. Consumed (NF_STOLEN) when it was
 * summed or passed on as a result; dropped with its reason otherwise.
 */
unsigned int netagg_tree_rx(struct net *net, struct netagg_job *job,
			    struct netagg_tree *tree, struct sk_buff *skb,
			    const struct netagg_pkt *pkt)
{
	bool down = tree->role == NETAGG_ROLE_ROOT ||
		    (pkt->hdr.flags & NETAGG_F_RESULT);
	struct netagg_out out;
	enum netagg_stat res;

	netagg_stats_inc(&tree->stats, NETAGG_STAT_RX);
	if (pkt->csum && nf_ip_checksum(skb, NF_INET_PRE_ROUTING, pkt->ip_hlen,
					IPPROTO_UDP)) {
		netagg_stats_inc(&tree->stats, NETAGG_STAT_DROP_CSUM);
		return NF_DROP;
	}

	__skb_queue_head_init(&out.skbs);
	out.n = 0;
	spin_lock(&tree->lock);
	if (pkt->hdr.flags & NETAGG_F_RESULT)
		res = netagg_result(tree, skb, pkt, &out);
	else
		res = netagg_contribution(job, tree, skb, pkt, &out);
	if (!skb_queue_empty(&out.skbs))
		netagg_out_dests(tree, &out, down);
	spin_unlock(&tree->lock);

	netagg_stats_inc(&tree->stats, res);
	if (res != NETAGG_STAT_AGGREGATED && res != NETAGG_STAT_RESULTS_RX)
		return NF_DROP;
	if (pkt->hdr.flags & NETAGG_F_FIN)
		netagg_stats_inc(&tree->stats, NETAGG_STAT_FIN);
	netagg_out_send(net, tree, &out);
	consume_skb(skb);
	return NF_STOLEN;
}

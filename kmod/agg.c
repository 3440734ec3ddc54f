// SPDX-License-Identifier: GPL-2.0
/*
 * The aggregation datapath of one tree, in softirq.
 *
 * A child's contribution for VID v of the current round is summed into v's
 * slot of the window. When every child in the bitmap has contributed to the
 * slot of expected_vid, the sum leaves (from an aggregator up to the parent,
 * from the root down to every child) and expected_vid advances: sums leave
 * in VID order. The slot keeps the sum, and on an aggregator then the
 * parent's result, until its place in the ring is needed two windows later:
 * by then every child has had that result, since a worker sends VID v + w
 * only after it has v's. So a retransmission (NETAGG_F_RETRY) of a
 * contribution already summed is answered from the slot, never summed.
 *
 * The tree's lock covers only the slot work and building the packets that
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
	/* The tree's set, kept valid by RCU until the packets are sent. */
	struct dst_cache *route[NETAGG_CHILDREN_MAX];
	unsigned int n;
	enum netagg_stat sent;		/* EMITTED_UP, FANNED_OUT or RESENT */
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

/* The tree's routes: under its lock, which every change of them takes. */
static struct netagg_routes *netagg_routes(struct netagg_tree *tree)
{
	return rcu_dereference_check(tree->routes,
				     lockdep_is_held(&tree->lock));
}

static void netagg_out_to_one(struct netagg_out *out, __be32 addr,
			      __be16 port, struct dst_cache *route,
			      enum netagg_stat sent)
{
	out->addr[0] = addr;
	out->port[0] = port;
	out->route[0] = route;
	out->n = 1;
	out->sent = sent;
}

/* To child @bit of the tree, only. */
static void netagg_out_to_child(struct netagg_tree *tree,
				struct netagg_out *out, int bit, __be16 port,
				enum netagg_stat sent)
{
	netagg_out_to_one(out, tree->children[bit], port,
			  &netagg_routes(tree)->child[bit], sent);
}

static void netagg_out_to_parent(struct netagg_tree *tree,
				 struct netagg_out *out, enum netagg_stat sent)
{
	netagg_out_to_one(out, tree->parent, htons(NETAGG_UDP_PORT),
			  &netagg_routes(tree)->parent, sent);
}

static void netagg_out_to_children(struct netagg_tree *tree,
				   struct netagg_out *out)
{
	struct netagg_routes *routes = netagg_routes(tree);
	u64 bits = tree->bitmap;
	int bit;

	out->n = 0;
	while (bits) {
		bit = __ffs64(bits);
		out->addr[out->n] = tree->children[bit];
		out->port[out->n] = tree->child_port[bit];
		out->route[out->n++] = &routes->child[bit];
		bits &= bits - 1;
	}
	out->sent = NETAGG_STAT_FANNED_OUT;
}

static void *netagg_slot_data(const struct netagg_tree *tree,
			      const struct netagg_slot *slot)
{
	return tree->data + (slot - tree->slots) * tree->stride;
}

/*
 * Queue a packet with the slot's sum or result, for the destinations
 * already in @out: one that goes to several gets its payload in pages of
 * its own, which every destination's copy then shares.
 */
static void netagg_queue(struct netagg_job *job, struct netagg_tree *tree,
			 struct netagg_out *out, const struct netagg_slot *slot,
			 u8 flags)
{
	unsigned int len = slot->count * netagg_dtype_size(job->dtype);
	struct netagg_hdr hdr = {
		.version = NETAGG_PROTO_VERSION,
		.flags = flags | (slot->fin ? NETAGG_F_FIN : 0),
		.dtype = job->dtype,
		.jid = htonl(job->jid),
		.vid = htonl(slot->vid),
		.tid = htons(tree->tid),
		.count = htons(slot->count),
		.contributors = htons(slot->contributors),
		.round = htons(slot->round),
	};
	struct sk_buff *skb;

	skb = netagg_xmit_alloc(&hdr, netagg_slot_data(tree, slot), len,
				out->n > 1);
	if (!skb) {
		netagg_stats_inc(&tree->stats, NETAGG_STAT_DROP_NOMEM);
		return;
	}
	NETAGG_CB(skb)->ecn = slot->ecn;
	__skb_queue_tail(&out->skbs, skb);
}

/*
 * Complete the head slot while every child in the bitmap is in it: the sum
 * goes up (aggregator) or down to every child (root), and is kept.
 */
static void netagg_drain(struct netagg_job *job, struct netagg_tree *tree,
			 struct netagg_out *out)
{
	bool root = tree->role == NETAGG_ROLE_ROOT;
	struct netagg_slot *slot;

	while (tree->in_round && !tree->ended) {
		slot = &tree->slots[tree->head];
		if (slot->state != NETAGG_SLOT_FILLING ||
		    slot->pos != tree->base + tree->expected_vid ||
		    (slot->seen & tree->bitmap) != tree->bitmap)
			return;
		/* Only the root divides: aggregators pass sums and counts up. */
		if (root && job->op == NETAGG_OP_AVG)
			netagg_scale(job->dtype, netagg_slot_data(tree, slot),
				     slot->count, slot->contributors);
		slot->state = root ? NETAGG_SLOT_DONE : NETAGG_SLOT_UP;
		if (root)
			netagg_out_to_children(tree, out);
		else
			netagg_out_to_parent(tree, out, NETAGG_STAT_EMITTED_UP);
		netagg_queue(job, tree, out, slot, root ? NETAGG_F_RESULT : 0);
		tree->expected_vid++;
		if (++tree->head == tree->ring)
			tree->head = 0;
		tree->ended = slot->fin;
	}
}

/*
 * A round the tree is not in starts: the current one becomes the previous,
 * whose kept results still answer retransmissions. A current round that has
 * not ended is given up; its sums in the window are skipped, not reused.
 */
static void netagg_round_start(struct netagg_tree *tree, u16 round)
{
	u32 skip = 0;

	if (tree->in_round) {
		if (!tree->ended) {
			skip = tree->window;
			netagg_stats_inc(&tree->stats, NETAGG_STAT_ABANDONED);
		}
		tree->prev_round = tree->round;
		tree->prev_base = tree->base;
		tree->prev_end = tree->expected_vid;
		tree->has_prev = true;
	}
	tree->base += tree->expected_vid + skip;
	tree->head = (tree->head + skip) % tree->ring;
	tree->expected_vid = 0;
	tree->round = round;
	tree->in_round = true;
	tree->ended = false;
	netagg_stats_inc(&tree->stats, NETAGG_STAT_ROUNDS);
}

/*
 * The position of @vid in @round, if the tree holds that round: the
 * current one (*cur set) or the previous one, up to the VIDs it completed.
 */
static bool netagg_pos(const struct netagg_tree *tree, u16 round, u32 vid,
		       u32 *pos, bool *cur)
{
	*cur = tree->in_round && round == tree->round;
	if (*cur) {
		*pos = tree->base + vid;
		return true;
	}
	if (tree->has_prev && round == tree->prev_round &&
	    vid < tree->prev_end) {
		*pos = tree->prev_base + vid;
		return true;
	}
	return false;
}

/* The completed slot of @pos behind the window, if it is still kept. */
static struct netagg_slot *netagg_kept(struct netagg_tree *tree, u32 pos)
{
	u32 back = tree->base + tree->expected_vid - pos;
	struct netagg_slot *slot;

	if (!back || back >= tree->ring)
		return NULL;
	slot = &tree->slots[(tree->head + tree->ring - back) % tree->ring];
	if (slot->pos != pos || (slot->state != NETAGG_SLOT_UP &&
				 slot->state != NETAGG_SLOT_DONE))
		return NULL;
	return slot;
}

/*
 * A contribution already summed. Sent again on purpose (RETRY), it asks
 * for what the sender is missing: the kept result, to that child only, or,
 * while the parent's result has not come, the kept sum sent up again.
 */
static enum netagg_stat netagg_retry(struct netagg_job *job,
				     struct netagg_tree *tree,
				     struct netagg_slot *slot, int bit,
				     const struct netagg_pkt *pkt,
				     struct netagg_out *out)
{
	if (!(pkt->hdr.flags & NETAGG_F_RETRY))
		return NETAGG_STAT_DUPLICATE;
	if (slot->state == NETAGG_SLOT_DONE) {
		netagg_out_to_child(tree, out, bit, pkt->sport,
				    NETAGG_STAT_RESENT);
		netagg_queue(job, tree, out, slot, NETAGG_F_RESULT);
	} else if (slot->state == NETAGG_SLOT_UP) {
		netagg_out_to_parent(tree, out, NETAGG_STAT_RESENT);
		netagg_queue(job, tree, out, slot, NETAGG_F_RETRY);
	}
	return NETAGG_STAT_DUPLICATE;
}

static enum netagg_stat netagg_contribution(struct netagg_job *job,
					    struct netagg_tree *tree,
					    struct sk_buff *skb,
					    const struct netagg_pkt *pkt,
					    struct netagg_out *out)
{
	u16 round = ntohs(pkt->hdr.round);
	u32 vid = ntohl(pkt->hdr.vid);
	u16 count = ntohs(pkt->hdr.count);
	struct netagg_slot *slot;
	const void *src;
	u32 pos, ahead;
	void *data;
	bool cur;
	int bit;

	bit = netagg_child_bit(tree, pkt->saddr);
	if (bit < 0)
		return NETAGG_STAT_DROP_NOT_CHILD;
	if (!netagg_pos(tree, round, vid, &pos, &cur)) {
		/* Another round: its workers have all left the last one. */
		if ((tree->has_prev && round == tree->prev_round) ||
		    vid >= tree->window)
			return NETAGG_STAT_DROP_ROUND;
		netagg_round_start(tree, round);
		pos = tree->base + vid;
		cur = true;
	}

	ahead = pos - (tree->base + tree->expected_vid);
	if (!cur || tree->ended || ahead >= tree->window) {
		slot = netagg_kept(tree, pos);
		if (!slot || !(slot->seen & BIT_ULL(bit)))
			return NETAGG_STAT_DROP_WINDOW;
		return netagg_retry(job, tree, slot, bit, pkt, out);
	}

	slot = &tree->slots[(tree->head + ahead) % tree->ring];
	data = netagg_slot_data(tree, slot);
	if (slot->state != NETAGG_SLOT_FILLING || slot->pos != pos) {
		/* The first contribution is copied, not added to zeros. */
		if (skb_copy_bits(skb, pkt->off, data, pkt->len))
			return NETAGG_STAT_DROP_LENGTH;
		*slot = (struct netagg_slot) {
			.pos = pos,
			.vid = vid,
			.round = round,
			.count = count,
			.ecn = pkt->ecn,
			.state = NETAGG_SLOT_FILLING,
		};
	} else {
		/* Not complete yet: the result will reach the sender anyway. */
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

/* The parent's result for a sum this aggregator sent up: keep it, fan out. */
static enum netagg_stat netagg_result(struct netagg_job *job,
				      struct netagg_tree *tree,
				      struct sk_buff *skb,
				      const struct netagg_pkt *pkt,
				      struct netagg_out *out)
{
	struct netagg_slot *slot;
	bool cur;
	u32 pos;

	if (tree->role != NETAGG_ROLE_AGGREGATOR || pkt->saddr != tree->parent)
		return NETAGG_STAT_DROP_NOT_PARENT;
	if (!netagg_pos(tree, ntohs(pkt->hdr.round), ntohl(pkt->hdr.vid),
			&pos, &cur))
		return NETAGG_STAT_DROP_ROUND;
	slot = netagg_kept(tree, pos);
	if (!slot)
		return NETAGG_STAT_DROP_ROUND;
	if (slot->state == NETAGG_SLOT_DONE)
		return NETAGG_STAT_DUPLICATE;
	if (slot->count != ntohs(pkt->hdr.count))
		return NETAGG_STAT_DROP_LENGTH;
	if (skb_copy_bits(skb, pkt->off, netagg_slot_data(tree, slot), pkt->len))
		return NETAGG_STAT_DROP_LENGTH;
	slot->state = NETAGG_SLOT_DONE;
	slot->contributors = ntohs(pkt->hdr.contributors);
	slot->ecn = pkt->ecn;
	netagg_out_to_children(tree, out);
	netagg_queue(job, tree, out, slot, NETAGG_F_RESULT);
	return NETAGG_STAT_RESULTS_RX;
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
			/*
			 * The last destination gets the original; the others
			 * a copy of the headers, sharing the payload's pages.
			 */
			copy = i + 1 < out->n ? pskb_copy(skb, GFP_ATOMIC) : skb;
			if (copy && !netagg_xmit(net, copy, out->addr[i],
						 out->port[i], ecn,
						 out->route[i]))
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
		res = netagg_result(job, tree, skb, pkt, &out);
	else
		res = netagg_contribution(job, tree, skb, pkt, &out);
	spin_unlock(&tree->lock);

	netagg_stats_inc(&tree->stats, res);
	if (res != NETAGG_STAT_AGGREGATED && res != NETAGG_STAT_RESULTS_RX) {
		/* Refused, or a duplicate: a RETRY may have been answered. */
		netagg_out_send(net, tree, &out);
		return NF_DROP;
	}
	if (pkt->hdr.flags & NETAGG_F_FIN)
		netagg_stats_inc(&tree->stats, NETAGG_STAT_FIN);
	netagg_out_send(net, tree, &out);
	consume_skb(skb);
	return NF_STOLEN;
}

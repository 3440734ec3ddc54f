// SPDX-License-Identifier: GPL-2.0
/*
 * What a tree sends, the outgoing half of the datapath (agg.c and
 * complete.c decide, this builds and sends): sums up to the parent, results down to the
 * children, answers to resends and probes. Built under the tree's lock
 * into a struct netagg_out, in VID order; sent by netagg_out_send() once
 * the lock is free. Where they can be, the packets that leave are packets
 * that came in (reuse.c); the payload of a super-packet received leaves in
 * super-packets (struct netagg_gather).
 */

#include <linux/skbuff.h>
#include <net/inet_ecn.h>
#include "state.h"
#include "hdr.h"
#include "out.h"
#include "reduce.h"
#include "simd.h"
#include "reuse.h"
#include "super.h"
#include "xmit.h"

/* A packet to send and where it goes, in its cb until it is sent. */
struct netagg_cb {
	struct netagg_route *route;	/* in the tree's set, kept by RCU */
	struct in6_addr addr;		/* addr.h */
	__be16 port;			/* a child's, or NETAGG_OUT_NODE_PORT */
	u8 ecn;
	u8 sent;			/* its counter: EMITTED_UP, FANNED_OUT
					 * or RESENT; none (0) for a probe's
					 * answer
					 */
	u16 segs;			/* segments it carries, counted so */
};

/*
 * A parent's port: the namespace's, the one every node of a tree shares,
 * read when the packet leaves. A child's is the source port its
 * contributions came from, which a socket never has 0 (one that did would
 * have its results sent to the namespace's port at its address).
 */
#define NETAGG_OUT_NODE_PORT	0

#define NETAGG_CB(skb) ((struct netagg_cb *)(skb)->cb)
static_assert(sizeof(struct netagg_cb) <= sizeof_field(struct sk_buff, cb));

/*
 * @skb with the slot's sum or result: written into it if it is a packet
 * reused, else a new one. NULL: no memory.
 */
static struct sk_buff *netagg_build(struct netagg_job *job,
				    struct netagg_tree *tree,
				    const struct netagg_slot *slot, u8 flags,
				    struct sk_buff *skb)
{
	unsigned int len = netagg_slot_len(job, slot);
	struct netagg_hdr hdr;
	void *payload;

	if (skb)
		netagg_stats_inc(&tree->stats, NETAGG_STAT_REUSED);
	else
		skb = netagg_xmit_alloc(len + netagg_tag_len(job));
	if (!skb)
		return NULL;
	netagg_hdr_fill(&hdr, job, tree, slot, flags);
	memcpy(skb->data, &hdr, sizeof(hdr));
	payload = skb->data + sizeof(hdr);
	netagg_copy(&payload, 1, netagg_slot_data(tree, slot), len);
	/* A sum up is tagged once routing has said where it leaves from. */
	if (job->keyed && (flags & NETAGG_F_RESULT))
		netagg_tag_buf(&job->key, skb->data, sizeof(hdr) + len);
	return skb;
}

/**
 * netagg_out_add() - Queue a packet to send once the tree's lock is free.
 * @tree: the tree, its lock held
 * @out: what the packet received makes the tree send
 * @skb: the packet, of @segs segments; NULL: it could not be built
 * @addr: where it goes
 * @port: at this UDP port
 * @route: the tree's route there
 * @ecn: its ECN field
 * @sent: the counter it adds to when sent (NETAGG_STAT_UNSPEC: none)
 * @segs: the segments it carries
 */
void netagg_out_add(struct netagg_tree *tree, struct netagg_out *out,
			   struct sk_buff *skb, const struct in6_addr *addr,
			   __be16 port,
			   struct netagg_route *route, u8 ecn,
			   enum netagg_stat sent, unsigned int segs)
{
	if (!skb) {
		netagg_stats_add(&tree->stats, NETAGG_STAT_DROP_NOMEM, segs);
		return;
	}
	*NETAGG_CB(skb) = (struct netagg_cb) {
		.route = route,
		.addr = *addr,
		.port = port,
		.ecn = ecn,
		.sent = sent,
		.segs = segs,
	};
	__skb_queue_tail(&out->skbs, skb);
}

static void netagg_out_child(struct netagg_tree *tree, struct netagg_out *out,
			     struct sk_buff *skb, int bit, __be16 port,
			     const struct netagg_slot *slot,
			     enum netagg_stat sent)
{
	netagg_out_add(tree, out, skb, &tree->children[bit].addr, port,
		       &netagg_tree_routes(tree)->child[bit], slot->ecn, sent, 1);
}

/**
 * netagg_gather_flush() - Queue what a gather holds, a packet a destination.
 * @tree: the tree, its lock held
 * @out: what the packet received makes the tree send
 * @g: @out's gather up or down
 */
void netagg_gather_flush(struct netagg_tree *tree,
				struct netagg_out *out,
				struct netagg_gather *g)
{
	unsigned int segs = g->sp.segs;
	struct sk_buff *skb;
	__be16 port;
	u64 mask;
	int bit;

	if (!segs)
		return;
	if (g == out->up) {
		netagg_out_add(tree, out, netagg_super_skb(&g->sp),
			       &tree->parent, NETAGG_OUT_NODE_PORT,
			       &netagg_tree_routes(tree)->parent, g->ecn, g->sent,
			       segs);
	}
	for (mask = g == out->up ? 0 : g->mask; mask; mask &= mask - 1) {
		bit = __ffs64(mask);
		port = g->port ?: tree->child_port[bit];
		skb = netagg_super_skb(&g->sp);
		netagg_out_add(tree, out, skb, &tree->children[bit].addr, port,
			       &netagg_tree_routes(tree)->child[bit], g->ecn,
			       g->sent, segs);
	}
	netagg_super_reset(&g->sp);
}

/*
 * The slot's sum or result as the next segment of @g, for @mask (down) at
 * @port: what @g gathered for other destinations or counters leaves first.
 */
static void netagg_gather_add(struct netagg_job *job, struct netagg_tree *tree,
			      struct netagg_out *out, struct netagg_gather *g,
			      const struct netagg_slot *slot, u8 flags,
			      u64 mask, __be16 port, enum netagg_stat sent)
{
	unsigned int len = netagg_slot_len(job, slot);
	unsigned int seg = sizeof(struct netagg_hdr) + len + netagg_tag_len(job);
	struct netagg_hdr hdr;
	void *p, *start;

	if (g->sp.segs && (g->mask != mask || g->port != port ||
			   g->sent != sent))
		netagg_gather_flush(tree, out, g);
	p = netagg_super_reserve(&g->sp, seg, &tree->scache);
	if (p == ERR_PTR(-ENOSPC)) {
		netagg_gather_flush(tree, out, g);
		p = netagg_super_reserve(&g->sp, seg, &tree->scache);
	}
	if (IS_ERR(p)) {
		netagg_stats_add(&tree->stats, NETAGG_STAT_DROP_NOMEM,
				 g == out->up ? 1 : hweight64(mask));
		return;
	}
	if (g->sp.segs == 1) {
		g->mask = mask;
		g->port = port;
		g->sent = sent;
		g->ecn = slot->ecn;
	} else {
		g->ecn = netagg_ecn_merge(g->ecn, slot->ecn);
	}
	netagg_hdr_fill(&hdr, job, tree, slot, flags);
	start = p;
	memcpy(p, &hdr, sizeof(hdr));
	/* Vector moves, as every payload copy of the module (netagg_copy()). */
	p += sizeof(hdr);
	netagg_copy(&p, 1, netagg_slot_data(tree, slot), len);
	/* One tag for every child the segment goes to; up: see netagg_build(). */
	if (job->keyed && g != out->up)
		netagg_tag_buf(&job->key, start, sizeof(hdr) + len);
}

/**
 * netagg_resend_down() - A kept result to one child, answering its resend.
 * @job: the tree's job
 * @tree: the tree, its lock held
 * @out: what the packet received makes the tree send; it carries the
 *       result if it can
 * @slot: the completed slot
 * @bit: the child
 * @port: at this port
 * @flags: NETAGG_F_* besides RESULT and the slot's own
 */
void netagg_resend_down(struct netagg_job *job, struct netagg_tree *tree,
			       struct netagg_out *out, struct netagg_slot *slot,
			       int bit, __be16 port, u8 flags)
{
	struct sk_buff *skb;

	flags |= NETAGG_F_RESULT;
	if (out->down) {
		netagg_gather_add(job, tree, out, out->down, slot, flags,
				  BIT_ULL(bit), port, NETAGG_STAT_RESENT);
		return;
	}
	skb = netagg_reuse_claim(&out->in, out->pkt,
				 netagg_slot_len(job, slot));
	skb = netagg_build(job, tree, slot, flags, skb);
	netagg_out_child(tree, out, skb, bit, port, slot, NETAGG_STAT_RESENT);
}

/**
 * netagg_send_up() - A slot's sum to the parent.
 * @job: the tree's job
 * @tree: the tree, its lock held
 * @out: what the packet received makes the tree send
 * @slot: the slot
 * @flags: NETAGG_F_* besides the slot's own (RETRY for a resend)
 * @sent: the counter it adds to
 *
 * In the packet received, or one the slot holds (the children then get the
 * parent's result in another), or a new one.
 */
void netagg_send_up(struct netagg_job *job, struct netagg_tree *tree,
			   struct netagg_out *out, struct netagg_slot *slot,
			   u8 flags, enum netagg_stat sent)
{
	struct sk_buff *skb;
	int bit;

	/* Packets the slot holds stay there, for the parent's result. */
	if (out->up) {
		netagg_gather_add(job, tree, out, out->up, slot, flags, 0, 0,
				  sent);
		return;
	}
	skb = netagg_reuse_claim(&out->in, out->pkt,
				 netagg_slot_len(job, slot));
	if (!skb)
		skb = netagg_reuse_pop(tree, slot, &bit);
	skb = netagg_build(job, tree, slot, flags, skb);
	netagg_out_add(tree, out, skb, &tree->parent, NETAGG_OUT_NODE_PORT,
		       &netagg_tree_routes(tree)->parent, slot->ecn, sent, 1);
}

/*
 * Children's packets written together: the result is read once for up to
 * this many, inside one FPU section.
 */
#define NETAGG_FAN_BATCH	8

struct netagg_fan {
	struct sk_buff *skb[NETAGG_FAN_BATCH];
	void *payload[NETAGG_FAN_BATCH];
	u8 bit[NETAGG_FAN_BATCH];
	unsigned int n;
};

/* Write the batch's packets and queue them. */
static void netagg_fan_flush(struct netagg_job *job, struct netagg_tree *tree,
			     struct netagg_out *out,
			     const struct netagg_slot *slot,
			     struct netagg_fan *fan)
{
	unsigned int len = netagg_slot_len(job, slot);
	struct netagg_hdr hdr;
	unsigned int i;

	if (!fan->n)
		return;
	netagg_copy(fan->payload, fan->n, netagg_slot_data(tree, slot), len);
	netagg_hdr_fill(&hdr, job, tree, slot, NETAGG_F_RESULT);
	for (i = 0; i < fan->n; i++) {
		memcpy(fan->skb[i]->data, &hdr, sizeof(hdr));
		/* Tagged once: every child's copy is the same bytes. */
		if (job->keyed && !i)
			netagg_tag_buf(&job->key, fan->skb[0]->data,
				       sizeof(hdr) + len);
		else if (job->keyed)
			memcpy(fan->skb[i]->data + sizeof(hdr) + len,
			       fan->skb[0]->data + sizeof(hdr) + len,
			       NETAGG_TAG_LEN);
		netagg_out_child(tree, out, fan->skb[i], fan->bit[i],
				 tree->child_port[fan->bit[i]], slot,
				 NETAGG_STAT_FANNED_OUT);
	}
	fan->n = 0;
}

/* @skb, with room for the header and the result, to carry it to @bit. */
static void netagg_fan_add(struct netagg_job *job, struct netagg_tree *tree,
			   struct netagg_out *out,
			   const struct netagg_slot *slot,
			   struct netagg_fan *fan, struct sk_buff *skb, int bit)
{
	fan->skb[fan->n] = skb;
	fan->payload[fan->n] = skb->data + sizeof(struct netagg_hdr);
	fan->bit[fan->n] = bit;
	if (++fan->n == NETAGG_FAN_BATCH)
		netagg_fan_flush(job, tree, out, slot, fan);
}

/**
 * netagg_fan_out() - A slot's result to the children in it.
 * @job: the tree's job
 * @tree: the tree, its lock held
 * @out: what the packet received makes the tree send
 * @slot: the completed slot
 *
 * To every child that contributed to it and is still a child: on an
 * aggregator the children may have changed since its sum went up, and a
 * child that joined since is not in the result. Each child whose
 * contribution the slot holds gets it back, rewritten; the packet received
 * goes to another; the rest get new packets. Packets of children that left
 * the tree are freed.
 */
void netagg_fan_out(struct netagg_job *job, struct netagg_tree *tree,
			   struct netagg_out *out, struct netagg_slot *slot)
{
	unsigned int len = netagg_slot_len(job, slot);
	u64 missing = slot->ws.seen & tree->bitmap;
	struct netagg_fan fan;
	struct sk_buff *skb;
	int bit;

	/* In a super-packet, the result is written once for them all. */
	if (out->down) {
		netagg_reuse_release(tree, slot);
		if (missing)
			netagg_gather_add(job, tree, out, out->down, slot,
					  NETAGG_F_RESULT, missing, 0,
					  NETAGG_STAT_FANNED_OUT);
		return;
	}
	fan.n = 0;
	while ((skb = netagg_reuse_pop(tree, slot, &bit))) {
		if (!(missing & BIT_ULL(bit))) {
			consume_skb(skb);
			continue;
		}
		missing &= ~BIT_ULL(bit);
		netagg_stats_inc(&tree->stats, NETAGG_STAT_REUSED);
		netagg_fan_add(job, tree, out, slot, &fan, skb, bit);
	}
	skb = missing ? netagg_reuse_claim(&out->in, out->pkt, len) : NULL;
	if (skb) {
		bit = __ffs64(missing);
		missing &= missing - 1;
		netagg_stats_inc(&tree->stats, NETAGG_STAT_REUSED);
		netagg_fan_add(job, tree, out, slot, &fan, skb, bit);
	}
	for (; missing; missing &= missing - 1) {
		skb = netagg_xmit_alloc(len + netagg_tag_len(job));
		if (!skb) {
			netagg_stats_inc(&tree->stats, NETAGG_STAT_DROP_NOMEM);
			continue;
		}
		netagg_fan_add(job, tree, out, slot, &fan, skb,
			       __ffs64(missing));
	}
	netagg_fan_flush(job, tree, out, slot, &fan);
}

/**
 * netagg_out_answer() - Queue the answer to a child's probe.
 * @tree: the tree, its lock held
 * @out: what the packet received makes the tree send
 * @probe: the probe: its header, address and port
 * @bit: the child's bit
 * @dtype: the job's
 * @payload: what follows the header, elements of @dtype (NULL: nothing)
 * @len: its bytes
 *
 * The probe's own header flagged an answer (netagg_hdr_answer()), to the
 * child only: no amplification, no reflection. Not counted as sent: the
 * probe was counted PROBED when it came.
 *
 * Return: false if there was no memory for it.
 */
bool netagg_out_answer(struct netagg_tree *tree, struct netagg_out *out,
		       const struct netagg_pkt *probe, int bit, u8 dtype,
		       const void *payload, unsigned int len)
{
	const struct netagg_job *job = tree->job;
	struct netagg_hdr hdr;
	struct sk_buff *skb;

	skb = netagg_xmit_alloc(len + netagg_tag_len(job));
	if (!skb)
		return false;
	netagg_hdr_answer(&hdr, &probe->hdr, dtype,
			  len / netagg_dtype_size(dtype));
	memcpy(skb->data, &hdr, sizeof(hdr));
	if (len)
		memcpy(skb->data + sizeof(hdr), payload, len);
	if (job->keyed)
		netagg_tag_buf(&job->key, skb->data, sizeof(hdr) + len);
	netagg_out_add(tree, out, skb, &probe->saddr, probe->sport,
		       &netagg_tree_routes(tree)->child[bit], 0,
		       NETAGG_STAT_UNSPEC, 1);
	return true;
}

/**
 * netagg_out_send() - Send what a packet made the tree send.
 * @net: the tree's namespace
 * @job: the tree's job
 * @tree: the tree, its lock not held
 * @out: what was queued, in order; each counted as it leaves
 *
 * From the namespace's port, marked with its DSCP, as they are when the
 * batch leaves ("netagg set" may change them at any time).
 */
void netagg_out_send(struct net *net, const struct netagg_job *job,
		     struct netagg_tree *tree, struct netagg_out *out)
{
	__be16 port = READ_ONCE(job->nn->port);
	u8 dscp = READ_ONCE(job->nn->dscp);
	const struct netagg_tag_key *seal;
	struct netagg_cb cb;
	struct sk_buff *skb;

	while ((skb = __skb_dequeue(&out->skbs))) {
		cb = *NETAGG_CB(skb);	/* the IP layer's cb from here on */
		/* To the parent: a sum, its tag bound to where it leaves from. */
		seal = NULL;
		if (cb.port == NETAGG_OUT_NODE_PORT) {
			cb.port = port;
			seal = job->keyed ? &job->key : NULL;
		}
		if (netagg_xmit(net, skb, &cb.addr, port, cb.port,
				dscp << 2 | (cb.ecn & INET_ECN_MASK), cb.route,
				seal)) {
			netagg_stats_add(&tree->stats, NETAGG_STAT_DROP_NOMEM,
					 cb.segs);
			continue;
		}
		if (cb.sent)
			netagg_stats_add(&tree->stats, cb.sent, cb.segs);
		if (cb.segs > 1)
			netagg_stats_inc(&tree->stats, NETAGG_STAT_SUPER_TX);
	}
}


// SPDX-License-Identifier: GPL-2.0
/*
 * The aggregation datapath of one tree, in softirq: what a packet is to the
 * tree, and what the tree does with it.
 *
 * A child's contribution for VID v of the current round is kept in v's slot
 * of the window. When every child in the bitmap has contributed to the slot
 * of expected_vid, the VID completes (complete.c): summed in one pass, in
 * the tree's order of its children (by address, then port;
 * linux/netagg.h), sent on, expected_vid advanced. The slot keeps the sum, and on an aggregator then the parent's result, until
 * its place in the ring is needed two windows later: by then every child
 * has had that result, since a worker sends VID v + w only after it has
 * v's. So a retransmission (NETAGG_F_RETRY) of a contribution already
 * summed is answered from the slot, never summed.
 *
 * The contributions are kept where they came (reuse.c), not copied; and the
 * packets that leave (out.c) are, where they can be, packets that came in:
 * each child's contribution, kept in its slot, carries the result back to
 * it, and the packet just received carries a sum up or a resend. The
 * tree's lock covers only the slot work and writing the packets that
 * leave; they are routed and sent after it is released.
 *
 * The packet's way: hook.c -> agg.c (this file: what the packet is, what
 * the tree does) -> complete.c (which VIDs complete) -> out.c (what
 * leaves) -> xmit.c (routed and sent).
 */

#include <linux/percpu.h>
#include <net/ip.h>
#include <net/inet_ecn.h>
#include "state.h"
#include "agg.h"
#include "complete.h"
#include "events.h"
#include "hdr.h"
#include "out.h"
#include "simd.h"
#include "reuse.h"
#include "window.h"

/* Where the payload of a nonlinear packet is gathered: one per CPU. */
static void __percpu *netagg_bounce;

/**
 * netagg_agg_init() - Allocate the datapath's per-CPU bounce buffers.
 *
 * Return: 0, or -ENOMEM.
 */
int __init netagg_agg_init(void)
{
	netagg_bounce = __alloc_percpu(NETAGG_MTU_MAX, SMP_CACHE_BYTES);
	return netagg_bounce ? 0 : -ENOMEM;
}

/**
 * netagg_agg_exit() - Free what netagg_agg_init() allocated.
 */
void netagg_agg_exit(void)
{
	free_percpu(netagg_bounce);
}

static int netagg_child_bit(const struct netagg_tree *tree,
			    const struct in6_addr *addr, __be16 port)
{
	const struct netagg_child *child;
	u32 h = netagg_child_hash(addr);
	unsigned int entry;

	/* The table is never full: an empty entry ends the probe. */
	while ((entry = tree->child_index[h])) {
		child = &tree->children[entry - 1];
		if (ipv6_addr_equal(&child->addr, addr) &&
		    (!child->port || child->port == port))
			return entry - 1;
		h = (h + 1) % NETAGG_CHILD_HASH;
	}
	return -1;
}

/*
 * What the packet carries, where the hook found it: in place when it is
 * linear (an XDP frame always is), else gathered into this CPU's bounce
 * buffer. NULL: it is shorter.
 */
static const void *netagg_payload(const struct netagg_pkt *pkt)
{
	return netagg_pkt_bytes(pkt, pkt->off, pkt->len,
				this_cpu_ptr(netagg_bounce));
}

/* @len bytes of @src as the slot's sum or result. */
static void netagg_slot_fill(const struct netagg_tree *tree,
			     const struct netagg_slot *slot, const void *src,
			     unsigned int len)
{
	void *data = netagg_slot_data(tree, slot);

	netagg_copy(&data, 1, src, len);
}

/* Note when a slot's quorum came in: the straggler delay runs from then. */
static void netagg_slot_quorate(const struct netagg_tree *tree,
				struct netagg_slot *slot)
{
	if (netagg_win_partial(tree->quorum, tree->quorum_pct) &&
	    !slot->quorum_at &&
	    netagg_win_quorate(slot->ws.seen, tree->bitmap, tree->quorum,
			       tree->quorum_pct))
		slot->quorum_at = jiffies | 1;
}

/* The completed slot of @pos behind the window, if it is still kept. */
static struct netagg_slot *netagg_kept(struct netagg_tree *tree, u32 pos)
{
	struct netagg_slot *slot;
	u32 i;

	if (!netagg_win_behind(&tree->win, pos, &i))
		return NULL;
	slot = &tree->slots[i];
	return netagg_win_slot_kept(&slot->ws, pos) ? slot : NULL;
}

/*
 * What child @bit (at @port) is missing of the completed @slot: the kept
 * result, to that child only, or, while the parent's result has not come,
 * the kept sum sent up again.
 */
static void netagg_answer_kept(struct netagg_job *job, struct netagg_tree *tree,
			       struct netagg_slot *slot, int bit, __be16 port,
			       struct netagg_out *out)
{
	if (slot->ws.state == NETAGG_SLOT_DONE)
		netagg_resend_down(job, tree, out, slot, bit, port, 0);
	else if (slot->ws.state == NETAGG_SLOT_UP)
		netagg_send_up(job, tree, out, slot, NETAGG_F_RETRY,
			       NETAGG_STAT_RESENT);
}

/*
 * A contribution already summed. Sent again on purpose (RETRY), it asks
 * for what the sender is missing; without the flag it is a network
 * duplicate.
 */
static enum netagg_stat netagg_retry(struct netagg_job *job,
				     struct netagg_tree *tree,
				     struct netagg_slot *slot, int bit,
				     const struct netagg_pkt *pkt,
				     struct netagg_out *out)
{
	if (pkt->hdr.flags & NETAGG_F_RETRY)
		netagg_answer_kept(job, tree, slot, bit, pkt->sport, out);
	return NETAGG_STAT_DUPLICATE;
}

/*
 * A contribution to a VID its quorum completed without it: never added to
 * a sum already sent. A root answers with the kept result, so that the
 * straggler goes on; an aggregator still waiting for its parent's result
 * has none to give yet (the child asks again).
 */
static enum netagg_stat netagg_late(struct netagg_job *job,
				    struct netagg_tree *tree,
				    struct netagg_slot *slot, int bit,
				    const struct netagg_pkt *pkt,
				    struct netagg_out *out)
{
	if (slot->ws.state == NETAGG_SLOT_DONE)
		netagg_resend_down(job, tree, out, slot, bit, pkt->sport,
				   NETAGG_F_LATE);
	return NETAGG_STAT_DROP_LATE;
}

/*
 * What the slot of @pos (of the current round if @cur) has of child @bit:
 * BIT(0) its contribution, summing or completed; BIT(1) its result, sent
 * to the child already (completed, not waiting for the parent). A sum sent
 * up whose result has not come is sent up again, as a RETRY would have it:
 * the parent's answer, or the sum, may have been lost.
 */
static unsigned int netagg_probe_vid(struct netagg_job *job,
				     struct netagg_tree *tree, u32 pos,
				     bool cur, int bit, struct netagg_out *out)
{
	struct netagg_slot *slot;
	u32 i;

	if (cur && netagg_win_open(&tree->win, pos, &i)) {
		slot = &tree->slots[i];
		return netagg_win_slot_filling(&slot->ws, pos) &&
		       netagg_win_slot_has(&slot->ws, bit);
	}
	slot = netagg_kept(tree, pos);
	if (!slot || !netagg_win_slot_has(&slot->ws, bit))
		return 0;
	if (slot->ws.state == NETAGG_SLOT_DONE)
		return BIT(0) | BIT(1);
	if (slot->ws.state == NETAGG_SLOT_UP)
		netagg_send_up(job, tree, out, slot, NETAGG_F_RETRY,
			       NETAGG_STAT_RESENT);
	return BIT(0);
}

/*
 * A child's probe (NETAGG_F_PROBE): the maps of the next NETAGG_PROBE_VIDS
 * VIDs whose contribution arrived and whose result was sent go back to it. No
 * result is sent again: the child asks with a RETRY for one it has not had a
 * reordering window after the answer (the answer may overtake it, leaving from
 * another CPU). Results resent for a probe would double what is queued on a
 * slow path, where probes come without any loss. Never starts a round: a probe
 * that came before the child's first contribution must not give up the round
 * the other children are still in.
 */
static enum netagg_stat netagg_probe(struct netagg_job *job,
				     struct netagg_tree *tree, int bit,
				     const struct netagg_pkt *pkt,
				     struct netagg_out *out)
{
	u32 session = ntohl(pkt->hdr.session);
	u16 round = ntohs(pkt->hdr.round);
	u32 vid = ntohl(pkt->hdr.vid);
	unsigned int i, n, has;
	__le64 map[2];
	u64 held = 0, done = 0;
	bool cur;
	u32 pos;

	if (pkt->len)
		return NETAGG_STAT_DROP_PROBE;
	/* Of the last round, only the VIDs it completed are its own. */
	n = netagg_win_probe(&tree->win, session, round, vid, &pos, &cur);
	for (i = 0; i < n; i++) {
		has = netagg_probe_vid(job, tree, pos + i, cur, bit, out);
		if (has & BIT(0))
			held |= BIT_ULL(i);
		if (has & BIT(1))
			done |= BIT_ULL(i);
	}

	map[0] = cpu_to_le64(held);
	map[1] = cpu_to_le64(done);
	if (!netagg_out_answer(tree, out, pkt, bit, job->dtype, map,
			       sizeof(map)))
		netagg_stats_inc(&tree->stats, NETAGG_STAT_DROP_NOMEM);
	return NETAGG_STAT_PROBED;
}

/*
 * A packet of a child the tree evicted. It is alive: back in the tree when
 * the next round starts. Until then nothing of it is summed (the VIDs
 * complete without it); a probe is answered as ever, and a contribution to
 * a VID completed without it gets the kept result, LATE, as a straggler's
 * does, so that the child can end its round.
 */
static enum netagg_stat netagg_evicted(struct netagg_job *job,
				       struct netagg_tree *tree, int bit,
				       const struct netagg_pkt *pkt,
				       struct netagg_out *out)
{
	struct netagg_slot *slot;
	bool cur;
	u32 pos;

	tree->rejoin |= BIT_ULL(bit);
	if (pkt->hdr.flags & NETAGG_F_PROBE)
		return netagg_probe(job, tree, bit, pkt, out);
	if (!netagg_win_pos(&tree->win, ntohl(pkt->hdr.session),
			    ntohs(pkt->hdr.round), ntohl(pkt->hdr.vid), &pos, &cur))
		return NETAGG_STAT_DROP_EVICTED;
	slot = netagg_kept(tree, pos);
	if (slot && netagg_win_slot_has(&slot->ws, bit))
		return netagg_retry(job, tree, slot, bit, pkt, out);
	if (slot)
		netagg_late(job, tree, slot, bit, pkt, out);
	return NETAGG_STAT_DROP_EVICTED;
}

static enum netagg_stat netagg_contribution(struct netagg_job *job,
					    struct netagg_tree *tree,
					    const struct netagg_pkt *pkt,
					    struct netagg_out *out)
{
	u32 session = ntohl(pkt->hdr.session);
	u16 round = ntohs(pkt->hdr.round);
	u32 vid = ntohl(pkt->hdr.vid);
	u16 count = ntohs(pkt->hdr.count);
	struct netagg_slot *slot;
	u32 pos, i;
	bool cur;
	int bit;

	bit = netagg_child_bit(tree, &pkt->saddr, pkt->sport);
	if (bit < 0)
		return NETAGG_STAT_DROP_NOT_CHILD;
	tree->heard[bit] = jiffies;
	if (unlikely(tree->evicted & BIT_ULL(bit)))
		return netagg_evicted(job, tree, bit, pkt, out);
	if (pkt->hdr.flags & NETAGG_F_PROBE)
		return netagg_probe(job, tree, bit, pkt, out);
	if (!netagg_win_pos(&tree->win, session, round, vid, &pos, &cur)) {
		/* Another round: its workers have all left the last one. */
		if (!netagg_win_new_round(&tree->win, session, round, vid))
			return NETAGG_STAT_DROP_ROUND;
		out->rejoined |= netagg_round_start(tree, session, round);
		pos = tree->win.base + vid;
		cur = true;
	}

	if (!netagg_win_summing(&tree->win, pos, cur, &i)) {
		slot = netagg_kept(tree, pos);
		if (slot && slot->partial && !netagg_win_slot_has(&slot->ws, bit))
			return netagg_late(job, tree, slot, bit, pkt, out);
		if (!slot || !netagg_win_slot_has(&slot->ws, bit))
			return NETAGG_STAT_DROP_WINDOW;
		return netagg_retry(job, tree, slot, bit, pkt, out);
	}

	slot = &tree->slots[i];
	if (!netagg_win_slot_filling(&slot->ws, pos)) {
		/* Packets of a result that never came. */
		netagg_reuse_release(tree, slot);
		*slot = (struct netagg_slot) {
			.ws = netagg_win_slot_new(pos, vid, round, count),
			.since = jiffies,
		};
	} else {
		/* Not complete yet: the result will reach the sender anyway. */
		if (netagg_win_slot_has(&slot->ws, bit))
			return NETAGG_STAT_DUPLICATE;
		if (slot->ws.count != count)
			return NETAGG_STAT_DROP_LENGTH;
	}
	/* Kept where it came until the VID completes: summed then. */
	if (!netagg_reuse_keep(tree, slot, bit, &out->in, pkt, out->charge))
		return NETAGG_STAT_DROP_NOMEM;
	slot->ecn = netagg_ecn_merge(slot->ecn, pkt->ecn);
	netagg_win_slot_add(&slot->ws, bit, ntohs(pkt->hdr.contributors),
			    pkt->hdr.flags);
	netagg_slot_quorate(tree, slot);
	/* A child's own children changed: so did this round's. */
	if (pkt->hdr.flags & NETAGG_F_REGROUPED)
		netagg_tree_regroup(tree);
	tree->child_port[bit] = pkt->sport;
	netagg_drain(job, tree, out);
	return NETAGG_STAT_AGGREGATED;
}

/* The parent's result for a sum this aggregator sent up: keep it, fan out. */
static enum netagg_stat netagg_result(struct netagg_job *job,
				      struct netagg_tree *tree,
				      const struct netagg_pkt *pkt,
				      struct netagg_out *out)
{
	struct netagg_slot *slot;
	const void *src;
	bool cur;
	u32 pos;

	if (tree->role != NETAGG_ROLE_AGGREGATOR ||
	    !ipv6_addr_equal(&pkt->saddr, &tree->parent))
		return NETAGG_STAT_DROP_NOT_PARENT;
	tree->parent_heard = jiffies;
	if (unlikely(tree->parent_lost)) {
		tree->parent_lost = false;
		out->parent_back = true;
	}
	/* An answer to a probe: nodes do not probe. */
	if (pkt->hdr.flags & NETAGG_F_PROBE)
		return NETAGG_STAT_DROP_PROBE;
	if (!netagg_win_pos(&tree->win, ntohl(pkt->hdr.session),
			    ntohs(pkt->hdr.round), ntohl(pkt->hdr.vid), &pos, &cur))
		return NETAGG_STAT_DROP_ROUND;
	slot = netagg_kept(tree, pos);
	if (!slot)
		return NETAGG_STAT_DROP_ROUND;
	if (slot->ws.state == NETAGG_SLOT_DONE)
		return NETAGG_STAT_DUPLICATE;
	if (slot->ws.count != ntohs(pkt->hdr.count))
		return NETAGG_STAT_DROP_LENGTH;
	src = netagg_payload(pkt);
	if (!src)
		return NETAGG_STAT_DROP_LENGTH;
	netagg_slot_fill(tree, slot, src, pkt->len);
	slot->ws.state = NETAGG_SLOT_DONE;
	slot->ws.contributors = ntohs(pkt->hdr.contributors);
	slot->ecn = pkt->ecn;
	/*
	 * LATE: the sum sent up is not in it, nor any child's; MEAN: the
	 * root averaged it.
	 */
	slot->ws.flags |= pkt->hdr.flags & (NETAGG_F_REGROUPED | NETAGG_F_LATE |
					    NETAGG_F_MEAN);
	netagg_fan_out(job, tree, out, slot);
	return NETAGG_STAT_RESULTS_RX;
}

/* Evicted children back, or a parent lost answering: say so, unlocked. */
static void netagg_announce(struct net *net, struct netagg_tree *tree,
				const struct netagg_out *out)
{
	if (out->rejoined)
		netagg_event_announce(net, tree, NETAGG_EVENT_CHILD_REJOINED,
				      out->rejoined, NULL);
	if (out->parent_back)
		netagg_event_announce(net, tree, NETAGG_EVENT_PARENT_BACK, 0,
				      NULL);
}

/**
 * netagg_tree_dtype_answer() - Tell a child probing with another dtype the job's.
 * @net: the namespace it came in
 * @job: its job
 * @tree: its tree
 * @pkt: a packet the hook dropped for its dtype (DROP_DTYPE), header read
 *
 * A worker whose dtype is not the job's has nothing summed and would only
 * time out: its probe is answered with the job's dtype (linux/netagg.h,
 * NETAGG_F_PROBE), so that it fails saying why. A header for a header, to
 * children only: no amplification, no reflection.
 */
void netagg_tree_dtype_answer(struct net *net, struct netagg_job *job,
			      struct netagg_tree *tree,
			      const struct netagg_pkt *pkt)
{
	struct netagg_out out;
	int bit;

	if (!(pkt->hdr.flags & NETAGG_F_PROBE) ||
	    pkt->hdr.flags & NETAGG_F_RESULT || pkt->hdr.count ||
	    pkt->len != sizeof(struct netagg_hdr))
		return;
	__skb_queue_head_init(&out.skbs);
	spin_lock(&tree->lock);
	bit = netagg_child_bit(tree, &pkt->saddr, pkt->sport);
	/* Without memory it goes unsaid: the worker times out as before. */
	if (bit >= 0)
		netagg_out_answer(tree, &out, pkt, bit, job->dtype, NULL, 0);
	spin_unlock(&tree->lock);
	netagg_out_send(net, job, tree, &out);
}

/**
 * netagg_tree_rx() - A checked aggregation packet of a tree.
 * @net: the namespace it came in
 * @job: its job
 * @tree: its tree
 * @pkt: the packet (pkt.h), an skb or an XDP frame, which is the driver's
 *	again on return: what of it is kept is copied
 *
 * Return: NF_STOLEN when it was summed, passed on as a result or answered as
 * a probe (held by a slot, sent on, or consumed); NF_DROP, counted with its
 * reason, otherwise.
 */
unsigned int netagg_tree_rx(struct net *net, struct netagg_job *job,
			    struct netagg_tree *tree,
			    const struct netagg_pkt *pkt)
{
	struct netagg_out out;
	enum netagg_stat res;
	bool ok;

	netagg_stats_inc(&tree->stats, NETAGG_STAT_RX);
	if (pkt->csum && netagg_pkt_csum_bad(pkt)) {
		netagg_stats_inc(&tree->stats, NETAGG_STAT_DROP_CSUM);
		return NF_DROP;
	}
	/* Within the job's bound, but past an IPv6 tree's: it would not fit. */
	if (unlikely(pkt->len > tree->payload_max)) {
		netagg_stats_inc(&tree->stats, NETAGG_STAT_DROP_LENGTH);
		return NF_DROP;
	}

	__skb_queue_head_init(&out.skbs);
	out.in = pkt->skb;
	out.pkt = pkt;
	out.charge = netagg_pkt_truesize(pkt);
	out.up = NULL;
	out.down = NULL;
	out.rejoined = 0;
	out.parent_back = false;
	spin_lock(&tree->lock);
	if (pkt->hdr.flags & NETAGG_F_RESULT)
		res = netagg_result(job, tree, pkt, &out);
	else
		res = netagg_contribution(job, tree, pkt, &out);
	spin_unlock(&tree->lock);

	netagg_stats_inc(&tree->stats, res);
	ok = res == NETAGG_STAT_AGGREGATED || res == NETAGG_STAT_RESULTS_RX;
	if (ok && (pkt->hdr.flags & NETAGG_F_FIN))
		netagg_stats_inc(&tree->stats, NETAGG_STAT_FIN);
	netagg_out_send(net, job, tree, &out);
	if (unlikely(out.rejoined || out.parent_back))
		netagg_announce(net, tree, &out);
	/* Claimed: held by a slot, or carrying what was sent. */
	if (out.in != pkt->skb)
		return NF_STOLEN;
	/* Refused, or a duplicate (a RETRY may have been answered). */
	if (!ok && res != NETAGG_STAT_PROBED)
		return NF_DROP;
	netagg_pkt_consume(pkt);
	return NF_STOLEN;
}

/**
 * netagg_tree_rx_super() - A super-packet of a tree.
 * @net: the namespace it came in
 * @job: its job
 * @tree: its tree, named by the first segment
 * @pkt: the packet as a whole (an skb): its payload is every segment
 * @gso: bytes of each segment but the last
 *
 * Each segment is checked and summed, or answered, as a packet of its own
 * would be, all under one hold of the lock; what they make the tree send
 * leaves in super-packets.
 *
 * Return: NF_STOLEN (consumed) if a segment was summed, passed on or answered
 * (a probe); NF_DROP if none was.
 */
unsigned int netagg_tree_rx_super(struct net *net, struct netagg_job *job,
				  struct netagg_tree *tree,
				  const struct netagg_pkt *pkt, unsigned int gso)
{
	struct sk_buff *skb = pkt->skb;
	unsigned int end = pkt->off + pkt->len, segs, ok = 0, off;
	struct netagg_gather up = {}, down = {};
	struct netagg_pkt seg;
	enum netagg_stat res;
	struct netagg_out out;

	segs = DIV_ROUND_UP(pkt->len, gso);
	netagg_stats_add(&job->stats, NETAGG_STAT_RX, segs);
	/* One checksum for all: only a device or a sender can vouch for it. */
	if (pkt->csum_missing ||
	    (pkt->csum && skb->ip_summed != CHECKSUM_PARTIAL &&
	     skb->ip_summed != CHECKSUM_UNNECESSARY)) {
		netagg_stats_add(&tree->stats, NETAGG_STAT_RX, segs);
		netagg_stats_add(&tree->stats, NETAGG_STAT_DROP_CSUM, segs);
		return NF_DROP;
	}
	netagg_stats_inc(&tree->stats, NETAGG_STAT_SUPER_RX);

	__skb_queue_head_init(&out.skbs);
	/* Not claimed whole: a segment is kept by a reference to the packet. */
	out.in = NULL;
	out.pkt = NULL;
	/* A segment kept by reference is charged its share of the packet. */
	out.charge = DIV_ROUND_UP(skb->truesize, segs);
	out.up = &up;
	out.down = &down;
	out.rejoined = 0;
	out.parent_back = false;
	spin_lock(&tree->lock);
	for (off = pkt->off; off < end; off += gso) {
		seg = *pkt;
		seg.off = off;
		seg.len = min(gso, end - off);
		res = netagg_hdr_check(job, &seg);
		if (!res && (ntohl(seg.hdr.jid) != job->jid ||
			     ntohs(seg.hdr.tid) != tree->tid))
			res = NETAGG_STAT_DROP_SEGMENT;
		if (res) {
			netagg_stats_inc(&job->stats, res);
			continue;
		}
		netagg_stats_inc(&tree->stats, NETAGG_STAT_RX);
		if (unlikely(seg.len > tree->payload_max)) {
			netagg_stats_inc(&tree->stats, NETAGG_STAT_DROP_LENGTH);
			continue;
		}
		if (seg.hdr.flags & NETAGG_F_RESULT)
			res = netagg_result(job, tree, &seg, &out);
		else
			res = netagg_contribution(job, tree, &seg, &out);
		netagg_stats_inc(&tree->stats, res);
		if (res == NETAGG_STAT_PROBED)
			ok++;
		if (res != NETAGG_STAT_AGGREGATED &&
		    res != NETAGG_STAT_RESULTS_RX)
			continue;
		ok++;
		if (seg.hdr.flags & NETAGG_F_FIN)
			netagg_stats_inc(&tree->stats, NETAGG_STAT_FIN);
	}
	netagg_gather_flush(tree, &out, &up);
	netagg_gather_flush(tree, &out, &down);
	spin_unlock(&tree->lock);

	netagg_out_send(net, job, tree, &out);
	if (unlikely(out.rejoined || out.parent_back))
		netagg_announce(net, tree, &out);
	if (!ok)
		return NF_DROP;
	netagg_pkt_consume(pkt);
	return NF_STOLEN;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * What completes a VID of a tree, under its lock. When every child in the
 * bitmap has contributed to the slot of expected_vid (or its quorum has,
 * and the straggler delay has passed), the contributions are summed in
 * one pass, in the tree's order of its children: the sum is the same bits
 * whatever order they came in, whichever CPU and code sums them. It leaves
 * (from an aggregator up to the parent, from the root down to every child)
 * and expected_vid advances: sums leave in VID order. agg.c completes what
 * a packet made ready; netagg_tree_kick() what a change of members or the
 * end of a straggler delay did, with no packet. Here too: what a new round
 * does to the slots of the last.
 */

#include <linux/bitops.h>
#include <linux/jiffies.h>
#include <linux/skbuff.h>
#include <linux/timer.h>
#include "state.h"
#include "complete.h"
#include "out.h"
#include "reduce.h"
#include "reuse.h"
#include "simd.h"
#include "window.h"

/*
 * The slot's sum, made in one pass of its kept contributions in the tree's
 * order: the same bits whatever order they came in. A half type's is
 * float32 accumulators. The packets the contributions shared are let go.
 */
static void netagg_slot_sum(const struct netagg_job *job,
			    struct netagg_tree *tree, struct netagg_slot *slot)
{
	const struct netagg_input *inputs = netagg_slot_inputs(tree, slot);
	const void *src[NETAGG_CHILDREN_MAX];
	unsigned int k = 0, i;
	u8 bit;

	for (i = 0; i < tree->norder; i++) {
		bit = tree->order[i];
		if (netagg_win_slot_has(&slot->ws, bit))
			src[k++] = inputs[bit].data;
	}
	/* Every bit a slot holds is a child's, in the order. */
	WARN_ON_ONCE(k != hweight64(slot->ws.seen));
	netagg_sum_many(job->dtype, netagg_slot_data(tree, slot), src, k,
			slot->ws.count);
	netagg_reuse_unpin(tree, slot);
}

/*
 * Whether the head slot completes: every child is in, or the quorum is and
 * the straggler delay has passed since. While only the delay is missing,
 * the tree's timer is set to complete it then (no packet may come).
 */
static bool netagg_slot_ready(struct netagg_tree *tree,
			      struct netagg_slot *slot)
{
	unsigned long due;

	switch (netagg_win_ready(&slot->ws, tree->bitmap, tree->quorum,
				 tree->quorum_pct)) {
	case NETAGG_WIN_ALL:
		return true;
	case NETAGG_WIN_WAIT:
		return false;
	case NETAGG_WIN_QUORUM:
		break;
	}
	/* The quorum came down to what it holds (tree set): from now. */
	if (!slot->quorum_at)
		slot->quorum_at = jiffies | 1;
	due = slot->quorum_at + tree->straggler;
	if (!tree->straggler || time_after_eq(jiffies, due)) {
		slot->partial = true;
		return true;
	}
	timer_reduce(&tree->straggler_timer, due);
	return false;
}

/**
 * netagg_drain() - Complete the VIDs that are ready, in order.
 * @job: the tree's job
 * @tree: the tree, its lock held
 * @out: where what the tree sends is written
 *
 * The head slot completes while it is ready (every child in the bitmap is
 * in it, or its quorum with the straggler delay passed): the sum goes up
 * (aggregator) or down to every child in it (root), and is kept.
 */
void netagg_drain(struct netagg_job *job, struct netagg_tree *tree,
		  struct netagg_out *out)
{
	bool root = tree->role == NETAGG_ROLE_ROOT;
	struct netagg_slot *slot;

	while (netagg_win_live(&tree->win)) {
		slot = &tree->slots[tree->win.head];
		if (!netagg_win_slot_due(&tree->win, &slot->ws))
			return;
		if (!netagg_slot_ready(tree, slot)) {
			/* Its missing children may be silent for good. */
			if (tree->evict)
				netagg_watch_arm(tree, slot->since + tree->evict);
			return;
		}
		if (slot->partial)
			netagg_stats_inc(&tree->stats, NETAGG_STAT_PARTIAL);
		netagg_slot_sum(job, tree, slot);
		/* Only the root divides: aggregators pass sums and counts up. */
		if (root && job->op == NETAGG_OP_AVG) {
			netagg_scale(job->dtype, netagg_slot_data(tree, slot),
				     slot->ws.count, slot->ws.contributors);
			slot->ws.flags |= NETAGG_F_MEAN;
		}
		/*
		 * Rounded once to the packets' type, in place: from here on
		 * the slot holds what is sent and kept, as for other types.
		 */
		if (netagg_dtype_half(job->dtype))
			netagg_from_acc(job->dtype, netagg_slot_data(tree, slot),
					slot->ws.count);
		if (tree->regrouped)
			slot->ws.flags |= NETAGG_F_REGROUPED;
		slot->ws.state = root ? NETAGG_SLOT_DONE : NETAGG_SLOT_UP;
		slot->since = jiffies;
		if (root) {
			netagg_fan_out(job, tree, out, slot);
		} else {
			netagg_send_up(job, tree, out, slot, 0,
				       NETAGG_STAT_EMITTED_UP);
			/* Past the budget, the result goes in new packets. */
			if (tree->held > tree->held_max)
				netagg_reuse_release(tree, slot);
			/* The parent may not answer: see timers.c. */
			if (tree->evict)
				netagg_watch_arm(tree, slot->since +
						 2 * tree->evict);
		}
		netagg_win_advance(&tree->win, &slot->ws);
	}
}

/*
 * The sums of a round given up never complete: what their slots keep is let
 * go now, so that the contributions kept stay within one window's.
 */
static void netagg_abandon(struct netagg_tree *tree)
{
	struct netagg_slot *slot;
	u32 i;

	for (i = 0; i < tree->win.ring; i++) {
		slot = &tree->slots[i];
		if (slot->ws.state != NETAGG_SLOT_FILLING)
			continue;
		netagg_reuse_release(tree, slot);
		slot->ws.state = NETAGG_SLOT_FREE;
	}
}

/**
 * netagg_round_start() - Start a round the tree is not in.
 * @tree: the tree, its lock held
 * @session: the round's session
 * @round: and its number
 *
 * The current round becomes the previous, whose kept results still answer
 * retransmissions. A current round that has not ended is given up; its
 * sums in the window are skipped, not reused.
 *
 * Return: the bits of evicted children heard from since, back now.
 */
u64 netagg_round_start(struct netagg_tree *tree, u32 session, u16 round)
{
	u64 rejoined = tree->rejoin;

	if (netagg_win_start(&tree->win, session, round)) {
		netagg_stats_inc(&tree->stats, NETAGG_STAT_ABANDONED);
		netagg_abandon(tree);
	}
	tree->regrouped = false;
	netagg_stats_inc(&tree->stats, NETAGG_STAT_ROUNDS);
	if (unlikely(rejoined)) {
		tree->bitmap |= rejoined;
		tree->evicted &= ~rejoined;
		tree->rejoin = 0;
		netagg_stats_add(&tree->stats, NETAGG_STAT_REJOINED,
				 hweight64(rejoined));
	}
	return rejoined;
}

/**
 * netagg_tree_kick() - Complete the slots that are ready without a packet.
 * @net: the tree's namespace
 * @job: its job
 * @tree: the tree, its lock not held
 *
 * After a live change of the children or the quorum (process context, config
 * lock held), or when a straggler delay ends (the tree's timer): slots that
 * were waiting only for a removed child, or for the delay, are complete now,
 * and no packet may come to complete them if every other child waits for
 * their results.
 */
void netagg_tree_kick(struct net *net, struct netagg_job *job,
		      struct netagg_tree *tree)
{
	struct netagg_out out = {};

	__skb_queue_head_init(&out.skbs);
	/* The packet path's context: BHs off for the per-CPU counters. */
	local_bh_disable();
	spin_lock(&tree->lock);
	netagg_drain(job, tree, &out);
	spin_unlock(&tree->lock);
	netagg_out_send(net, job, tree, &out);
	local_bh_enable();
}

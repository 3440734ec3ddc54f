// SPDX-License-Identifier: GPL-2.0
/*
 * A tree's timers. Both are shut down before the tree is unlinked from its
 * job (job.c), so the tree and its job are there whenever they run.
 *
 * The straggler timer ends the wait of a head VID its quorum is in for the
 * rest of its children (partial aggregation): complete.c sets it.
 *
 * The failure timer ("Eviction" in linux/netagg.h) looks at what waits:
 * the children missing from the head VID, and, on an aggregator, the sums
 * sent up that the parent has not answered. A child silent for the tree's
 * eviction time while the others in the head VID waited as long is taken
 * out, as tree set without it would take it out; a parent is reported. It
 * all runs in the timer's softirq under the tree's lock: nothing sleeps,
 * only events allocate (GFP_ATOMIC).
 */

#include <linux/bitops.h>
#include <linux/jiffies.h>
#include "state.h"
#include "complete.h"
#include "events.h"
#include "membership.h"
#include "timers.h"

/* One run: its time, and when the next is due. */
struct netagg_watch {
	unsigned long now;
	unsigned long next;
	bool again;		/* next is set */
};

static void netagg_watch_due(struct netagg_watch *w, unsigned long due)
{
	if (!w->again || time_before(due, w->next))
		w->next = due;
	w->again = true;
}

static unsigned long netagg_later(unsigned long a, unsigned long b)
{
	return time_after(a, b) ? a : b;
}

/*
 * The children to evict: missing from the head VID, silent for the
 * eviction time since it began to wait (with a child of the tree in it:
 * others wait for them).
 */
static u64 netagg_watch_children(struct netagg_tree *tree,
				 struct netagg_watch *w)
{
	struct netagg_slot *slot = &tree->slots[tree->win.head];
	unsigned long due;
	u64 silent = 0, b;
	int bit;

	if (!netagg_win_live(&tree->win) ||
	    !netagg_win_slot_due(&tree->win, &slot->ws) ||
	    !(slot->ws.seen & tree->bitmap))
		return 0;
	for (b = tree->bitmap & ~slot->ws.seen; b; b &= b - 1) {
		bit = __ffs64(b);
		due = netagg_later(tree->heard[bit], slot->since) + tree->evict;
		if (time_after_eq(w->now, due))
			silent |= BIT_ULL(bit);
		else
			netagg_watch_due(w, due);
	}
	return silent;
}

/* What tree set without @bits would do, keeping their bits for them. */
static void netagg_watch_evict(struct netagg_tree *tree, u64 bits)
{
	u64 filling;

	netagg_tree_held(tree, &filling);
	tree->bitmap &= ~bits;
	tree->evicted |= bits;
	netagg_tree_changed(tree, bits, filling);
	netagg_stats_add(&tree->stats, NETAGG_STAT_EVICTED, hweight64(bits));
}

/*
 * Whether the parent is now lost: a sum of this round sent up has waited
 * 2 x the eviction time for its result, and nothing came from the parent
 * in that time.
 */
static bool netagg_watch_parent(struct netagg_tree *tree,
				struct netagg_watch *w)
{
	u32 back, done = min(tree->win.expected_vid, tree->win.ring);
	const struct netagg_slot *slot;
	unsigned long oldest = 0, due;
	bool up = false;

	if (tree->role != NETAGG_ROLE_AGGREGATOR || tree->parent_lost ||
	    !tree->win.in_round)
		return false;
	/* The round's completed VIDs, behind the head; sums went up in order. */
	for (back = done; back; back--) {
		slot = &tree->slots[netagg_win_back(&tree->win, back)];
		if (slot->ws.state == NETAGG_SLOT_UP &&
		    slot->ws.pos == netagg_win_next(&tree->win) - back) {
			oldest = slot->since;
			up = true;
			break;
		}
	}
	if (!up)
		return false;
	due = netagg_later(tree->parent_heard, oldest) + 2 * tree->evict;
	if (time_before(w->now, due)) {
		netagg_watch_due(w, due);
		return false;
	}
	tree->parent_lost = true;
	netagg_stats_inc(&tree->stats, NETAGG_STAT_PARENT_LOST);
	return true;
}

/**
 * netagg_tree_watch() - The tree's failure timer.
 * @t: the timer, in its tree
 *
 * Evicts the children silent for the eviction time while the head VID waits
 * for them, and reports a parent lost; arms itself again while something
 * still waits.
 */
void netagg_tree_watch(struct timer_list *t)
{
	struct netagg_tree *tree = from_timer(tree, t, watch_timer);
	struct netagg_watch w = { .now = jiffies };
	struct net *net = tree->job->nn->net;
	struct netagg_notice waited;
	bool lost = false;
	u64 evicted = 0;

	/* The packet path's context: BHs off for the per-CPU counters. */
	local_bh_disable();
	spin_lock(&tree->lock);
	if (tree->evict) {
		evicted = netagg_watch_children(tree, &w);
		if (evicted) {
			/* The VID that waited for them, completed below. */
			netagg_event_where(tree, &waited);
			netagg_watch_evict(tree, evicted);
		}
		lost = netagg_watch_parent(tree, &w);
		if (w.again)
			mod_timer(&tree->watch_timer, w.next);
	}
	spin_unlock(&tree->lock);
	if (evicted) {
		/* VIDs that waited only for them are complete now. */
		netagg_tree_kick(net, tree->job, tree);
		netagg_event_announce(net, tree, NETAGG_EVENT_CHILD_EVICTED,
				      evicted, &waited);
	}
	if (lost)
		netagg_event_announce(net, tree, NETAGG_EVENT_PARENT_LOST, 0,
				      NULL);
	local_bh_enable();
}

/**
 * netagg_tree_straggler() - The tree's straggler timer.
 * @t: the timer, in its tree
 *
 * The straggler delay of the tree's head VID has passed (softirq): complete it
 * with the quorum it has. The timer is shut down before the tree is unlinked
 * from its job, so both are still there.
 */
void netagg_tree_straggler(struct timer_list *t)
{
	struct netagg_tree *tree = from_timer(tree, t, straggler_timer);

	netagg_tree_kick(tree->job->nn->net, tree->job, tree);
}

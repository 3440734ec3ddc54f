// SPDX-License-Identifier: GPL-2.0
/*
 * Events of a tree's children and parent (NETAGG_CMD_EVENT on the "events"
 * group, linux/netagg.h): what each says, read under the tree's lock, and
 * its multicast to the namespace's listeners.
 */

#include <net/genetlink.h>
#include "state.h"
#include "events.h"

/*
 * The family events go out on, while it is registered: NULL before and
 * after. Events are sent from timers and the packet path, so its group ids
 * must not be reused by another family's before every sender saw it
 * cleared, an RCU grace period later.
 */
static const struct genl_family *netagg_events_family;

/**
 * netagg_events_start() - Events may be sent: their family is registered.
 * @family: the family, whose group NETAGG_NL_MCGRP_EVENTS they go to
 */
void netagg_events_start(const struct genl_family *family)
{
	WRITE_ONCE(netagg_events_family, family);
}

/**
 * netagg_events_stop() - No event is sent from now, none is in flight after.
 *
 * Process context: it waits for the senders that saw the family.
 */
void netagg_events_stop(void)
{
	WRITE_ONCE(netagg_events_family, NULL);
	synchronize_rcu();
}

static int netagg_event_fill(struct sk_buff *skb,
			     const struct genl_family *family,
			     const struct netagg_notice *ev)
{
	void *hdr;

	hdr = genlmsg_put(skb, 0, 0, family, 0, NETAGG_CMD_EVENT);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u8(skb, NETAGG_A_EVENT, ev->event) ||
	    nla_put_u32(skb, NETAGG_A_JOB_ID, ev->jid) ||
	    nla_put_u16(skb, NETAGG_A_TREE_ID, ev->tid) ||
	    (netagg_addr_set(&ev->child) &&
	     netagg_addr_put(skb, NETAGG_A_CHILD, NETAGG_A_CHILD_IPV6,
			     &ev->child)) ||
	    (ev->child_port && nla_put_be16(skb, NETAGG_A_CHILD_PORT,
					    ev->child_port)) ||
	    (netagg_addr_set(&ev->parent) &&
	     netagg_addr_put(skb, NETAGG_A_PARENT, NETAGG_A_PARENT_IPV6,
			     &ev->parent)) ||
	    (ev->silent_ms && nla_put_u32(skb, NETAGG_A_SILENT_MS,
					  ev->silent_ms)) ||
	    (ev->in_round && (nla_put_u16(skb, NETAGG_A_ROUND, ev->round) ||
			      nla_put_u32(skb, NETAGG_A_SESSION, ev->session) ||
			      nla_put_u32(skb, NETAGG_A_EXPECTED_VID,
					  ev->vid)))) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/*
 * Multicast an event to a namespace's listeners. Any context: timers and
 * the packet path send events, so nothing here sleeps. An event that
 * cannot be built is lost, as netlink loses one a full listener cannot
 * take.
 */
static void netagg_event_send(struct net *net, const struct netagg_notice *ev)
{
	const struct genl_family *family;
	struct sk_buff *skb;

	rcu_read_lock();
	family = READ_ONCE(netagg_events_family);
	if (!family ||
	    !genl_has_listeners(family, net, NETAGG_NL_MCGRP_EVENTS))
		goto out;
	skb = genlmsg_new(nla_total_size(sizeof(u8)) +		/* EVENT */
			  4 * nla_total_size(sizeof(u32)) +	/* JOB_ID,
								 * SILENT_MS,
								 * SESSION,
								 * EXPECTED_VID
								 */
			  2 * nla_total_size(sizeof(u16)) +	/* TREE_ID, ROUND */
			  /* CHILD, PARENT or their _IPV6 */
			  2 * nla_total_size(sizeof(struct in6_addr)) +
			  nla_total_size(sizeof(__be16)),	/* CHILD_PORT */
			  GFP_ATOMIC);
	if (!skb)
		goto out;
	if (netagg_event_fill(skb, family, ev)) {
		nlmsg_free(skb);
		goto out;
	}
	genlmsg_multicast_netns(family, net, skb, 0, NETAGG_NL_MCGRP_EVENTS,
				GFP_ATOMIC);
out:
	rcu_read_unlock();
}

/**
 * netagg_event_announce() - Announce an event of a tree.
 * @net: the tree's namespace
 * @tree: the tree, its lock not held
 * @event: enum netagg_event
 * @bits: the children it is about, one event each; 0 for the parent's
 * @at: where the tree was when it happened; NULL: where it is now
 *
 * What the events say is read under the tree's lock, one at a time.
 */
void netagg_event_announce(struct net *net, struct netagg_tree *tree,
			   u8 event, u64 bits, const struct netagg_notice *at)
{
	bool parent = event == NETAGG_EVENT_PARENT_LOST ||
		      event == NETAGG_EVENT_PARENT_BACK;
	struct netagg_notice ev = {
		.event = event,
		.jid = tree->job->jid,
		.tid = tree->tid,
	};
	unsigned long heard;
	int bit;

	do {
		spin_lock_bh(&tree->lock);
		if (parent) {
			ev.parent = tree->parent;
			heard = tree->parent_heard;
		} else {
			bit = __ffs64(bits);
			ev.child = tree->children[bit].addr;
			ev.child_port = tree->children[bit].port;
			heard = tree->heard[bit];
		}
		netagg_event_where(tree, &ev);
		spin_unlock_bh(&tree->lock);
		if (at) {
			ev.in_round = at->in_round;
			ev.round = at->round;
			ev.session = at->session;
			ev.vid = at->vid;
		}
		/* Silence is news only when it is what the event is about. */
		if (event == NETAGG_EVENT_CHILD_EVICTED ||
		    event == NETAGG_EVENT_PARENT_LOST)
			ev.silent_ms = jiffies_to_msecs(jiffies - heard);
		netagg_event_send(net, &ev);
		bits &= bits - 1;
	} while (bits);
}

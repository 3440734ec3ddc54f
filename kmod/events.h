/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_EVENTS_H
#define _NETAGG_EVENTS_H

#include <linux/types.h>
#include <linux/in6.h>

struct genl_family;
struct net;

/* The family's multicast groups, by index. */
enum netagg_nl_mcgrp {
	NETAGG_NL_MCGRP_EVENTS,
};

/* What a NETAGG_CMD_EVENT message says. */
struct netagg_notice {
	u8 event;		/* enum netagg_event */
	u32 jid;
	u16 tid;
	struct in6_addr child;	/* whom it is about: a child (and its */
	__be16 child_port;	/* port, if it has one), */
	struct in6_addr parent;	/* or the parent (addr.h) */
	u32 silent_ms;		/* 0: not said */
	bool in_round;		/* session, round and vid are the tree's */
	u32 session;
	u16 round;
	u32 vid;
};

/* Where @tree is, for an event: its session, round and next VID. */
static inline void netagg_event_where(const struct netagg_tree *tree,
				      struct netagg_notice *ev)
{
	ev->in_round = tree->win.in_round;
	ev->round = tree->win.round;
	ev->session = tree->win.session;
	ev->vid = tree->win.expected_vid;
}

void netagg_events_start(const struct genl_family *family);
void netagg_events_stop(void);
void netagg_event_announce(struct net *net, struct netagg_tree *tree,
			   u8 event, u64 bits, const struct netagg_notice *at);

#endif /* _NETAGG_EVENTS_H */

/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_NETLINK_H
#define _NETAGG_NETLINK_H

#include <linux/types.h>

struct net;

/* What a NETAGG_CMD_EVENT message says. */
struct netagg_notice {
	u8 event;		/* enum netagg_event */
	u32 jid;
	u16 tid;
	__be32 child;		/* whom it is about: a child (and its port, */
	__be16 child_port;	/* if it has one), */
	__be32 parent;		/* or the parent */
	u32 silent_ms;		/* 0: not said */
	bool in_round;		/* session, round and vid are the tree's */
	u32 session;
	u16 round;
	u32 vid;
};

int netagg_genl_register(void);
void netagg_genl_unregister(void);
void netagg_nl_notify(struct net *net, const struct netagg_notice *ev);

#endif /* _NETAGG_NETLINK_H */

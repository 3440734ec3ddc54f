/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_OUT_H
#define _NETAGG_OUT_H

#include <linux/skbuff.h>
#include <net/inet_ecn.h>
#include "pkt.h"
#include "stats.h"
#include "super.h"

struct net;
struct netagg_job;
struct netagg_route;
struct netagg_slot;
struct netagg_tree;

/*
 * Sums or results gathered into a super-packet, and where it goes: to the
 * parent, or to every child of @mask, at @port or, if 0, at the port each
 * last sent from. Segments of one kind (@sent) only.
 */
struct netagg_gather {
	struct netagg_super sp;
	u64 mask;
	__be16 port;
	u8 ecn;
	u8 sent;
};

/*
 * What one received packet makes the tree send: built under the tree's
 * lock, sent once it is free. The packet received may carry one of them.
 * For a super-packet, what goes up and what goes down is gathered into
 * super-packets (@up, @down; NULL for a plain packet).
 */
struct netagg_out {
	struct sk_buff_head skbs;	/* in VID order, each with its cb */
	struct sk_buff *in;		/* the packet received, until taken */
	const struct netagg_pkt *pkt;	/* what the hook read of it */
	u32 charge;			/* what keeping a contribution by a
					 * reference to the packet is charged
					 */
	struct netagg_gather *up, *down;
	u64 rejoined;			/* evicted children back: to announce */
	bool parent_back;		/* the parent lost answered: likewise */
};


/* Congestion seen by any input is seen by the sum. */
static inline u8 netagg_ecn_merge(u8 a, u8 b)
{
	if (a == INET_ECN_CE || b == INET_ECN_CE)
		return INET_ECN_CE;
	return a ?: b;
}

void netagg_out_add(struct netagg_tree *tree, struct netagg_out *out,
		    struct sk_buff *skb, const struct in6_addr *addr,
		    __be16 port, struct netagg_route *route, u8 ecn,
		    enum netagg_stat sent, unsigned int segs);
void netagg_gather_flush(struct netagg_tree *tree, struct netagg_out *out,
			 struct netagg_gather *g);
void netagg_resend_down(struct netagg_job *job, struct netagg_tree *tree,
			struct netagg_out *out, struct netagg_slot *slot,
			int bit, __be16 port, u8 flags);
void netagg_send_up(struct netagg_job *job, struct netagg_tree *tree,
		    struct netagg_out *out, struct netagg_slot *slot,
		    u8 flags, enum netagg_stat sent);
void netagg_fan_out(struct netagg_job *job, struct netagg_tree *tree,
		    struct netagg_out *out, struct netagg_slot *slot);
bool netagg_out_answer(struct netagg_tree *tree, struct netagg_out *out,
		       const struct netagg_pkt *probe, int bit, u8 dtype,
		       const void *payload, unsigned int len);
void netagg_out_send(struct net *net, const struct netagg_job *job,
		     struct netagg_tree *tree, struct netagg_out *out);

#endif /* _NETAGG_OUT_H */

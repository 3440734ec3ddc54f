/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_ROUTE_H
#define _NETAGG_ROUTE_H

#include <linux/gfp.h>
#include <linux/percpu.h>
#include <net/dst.h>
#include <net/flow.h>
#include <net/route.h>

struct netagg_route_pcpu {
	struct dst_entry *dst;	/* holding a reference */
	__be32 saddr;		/* the source address it gave */
};

/* The route to one destination, cached per CPU. */
struct netagg_route {
	struct netagg_route_pcpu __percpu *pcpu;
};

int netagg_route_init(struct netagg_route *route, gfp_t gfp);
void netagg_route_destroy(struct netagg_route *route);
struct rtable *netagg_route_lookup(struct net *net,
				   struct netagg_route_pcpu *cached,
				   struct flowi4 *fl4);

/*
 * The route for @fl4 and, in @fl4->saddr, the source address it gives.
 * Without a reference: valid until the caller's RCU read section ends.
 * Softirq or BHs off, for this CPU's entry. An ERR_PTR if there is none.
 * Inline: it is on every packet sent, and a cached route is the rule.
 */
static inline struct rtable *netagg_route_get(struct net *net,
					      struct netagg_route *route,
					      struct flowi4 *fl4)
{
	struct netagg_route_pcpu *cached = this_cpu_ptr(route->pcpu);
	struct dst_entry *dst = cached->dst;

	/* IPv4 routes are checked against the routing tables' generation. */
	if (likely(dst && dst_check(dst, 0))) {
		fl4->saddr = cached->saddr;
		return container_of(dst, struct rtable, dst);
	}
	return netagg_route_lookup(net, cached, fl4);
}

#endif /* _NETAGG_ROUTE_H */

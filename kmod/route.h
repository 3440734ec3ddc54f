/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_ROUTE_H
#define _NETAGG_ROUTE_H

#include <linux/gfp.h>
#include <linux/percpu.h>
#include <net/dst.h>
#include <net/flow.h>
#include <net/route.h>
#include <linux/netagg.h>

struct netagg_route_pcpu {
	struct dst_entry *dst;	/* holding a reference */
	union {			/* the source address it gave */
		__be32 saddr;
		struct in6_addr saddr6;
	};
	u32 cookie;		/* an IPv6 route's, to check it by */
};

/* The route to one destination, cached per CPU. */
struct netagg_route {
	struct netagg_route_pcpu __percpu *pcpu;
};

/*
 * Routes to a tree's parent and children, cached per CPU, so a packet
 * sent is not a route lookup. A set is for one parent and one child per
 * bit: when they change, the tree gets a new set, and the old one is
 * freed after a grace period, since packets being sent may still use it.
 */
struct netagg_routes {
	struct rcu_head rcu;
	u64 bitmap;			/* the child[] that are initialised */
	bool has_parent;
	struct netagg_route parent;
	struct netagg_route child[NETAGG_CHILDREN_MAX];
};

int netagg_route_init(struct netagg_route *route, gfp_t gfp);
void netagg_route_destroy(struct netagg_route *route);
struct rtable *netagg_route_lookup(struct net *net,
				   struct netagg_route_pcpu *cached,
				   struct flowi4 *fl4);
struct dst_entry *netagg_route_lookup6(struct net *net,
				       struct netagg_route_pcpu *cached,
				       struct flowi6 *fl6);
struct netagg_routes *netagg_routes_alloc(bool parent, unsigned int n);
void netagg_routes_place(struct netagg_routes *routes, const u8 *bits,
			 unsigned int n);
void netagg_routes_free(struct netagg_routes *routes);
void netagg_routes_free_rcu(struct rcu_head *rcu);

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

/*
 * The same for IPv6: the route for @fl6 and, in @fl6->saddr, the source
 * address it gives.
 */
static inline struct dst_entry *netagg_route_get6(struct net *net,
						  struct netagg_route *route,
						  struct flowi6 *fl6)
{
	struct netagg_route_pcpu *cached = this_cpu_ptr(route->pcpu);
	struct dst_entry *dst = cached->dst;

	/* IPv6 routes are checked against their own cookie. */
	if (likely(dst && dst_check(dst, cached->cookie))) {
		fl6->saddr = cached->saddr6;
		return dst;
	}
	return netagg_route_lookup6(net, cached, fl6);
}

#endif /* _NETAGG_ROUTE_H */

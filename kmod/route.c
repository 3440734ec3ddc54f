// SPDX-License-Identifier: GPL-2.0
/*
 * Routes of the packets a node sends, cached per CPU as dst_cache does,
 * but lent without a reference: the cache holds one, and a cached route
 * replaced or destroyed is freed only after an RCU grace period (dst's own
 * rule), so it stays valid for a packet sent inside the sender's RCU read
 * section. That is what forwarding does with its input route, and it
 * spares every packet a reference taken and dropped on a shared counter.
 */

#include "route.h"

/**
 * netagg_route_init() - An empty per-CPU route cache.
 * @route: the cache
 * @gfp: how to allocate it
 *
 * Return: 0, or -ENOMEM.
 */
int netagg_route_init(struct netagg_route *route, gfp_t gfp)
{
	route->pcpu = alloc_percpu_gfp(struct netagg_route_pcpu, gfp);
	return route->pcpu ? 0 : -ENOMEM;
}

/**
 * netagg_route_destroy() - Free a route cache and the routes it holds.
 * @route: the cache, initialised, no packet being sent with it any more
 */
void netagg_route_destroy(struct netagg_route *route)
{
	int cpu;

	for_each_possible_cpu(cpu)
		dst_release(per_cpu_ptr(route->pcpu, cpu)->dst);
	free_percpu(route->pcpu);
}

/**
 * netagg_route_lookup() - Look a route up and cache it on this CPU.
 * @net: the namespace
 * @cached: this CPU's entry of the cache
 * @fl4: the flow; its source address is set
 *
 * On a miss, or a route gone stale. The lookup's reference becomes the
 * cache's.
 *
 * Return: the route, without a reference of the caller's, or an ERR_PTR.
 */
struct rtable *netagg_route_lookup(struct net *net,
				   struct netagg_route_pcpu *cached,
				   struct flowi4 *fl4)
{
	struct rtable *rt;

	rt = ip_route_output_key(net, fl4);
	if (IS_ERR(rt))
		return rt;
	/* The lookup's reference becomes the cache's. */
	dst_release(cached->dst);
	cached->dst = &rt->dst;
	cached->saddr = fl4->saddr;
	return rt;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Routes of the packets a node sends, cached per CPU as dst_cache does,
 * but lent without a reference: the cache holds one, and a cached route
 * replaced or destroyed is freed only after an RCU grace period (dst's own
 * rule), so it stays valid for a packet sent inside the sender's RCU read
 * section. That is what forwarding does with its input route, and it
 * spares every packet a reference taken and dropped on a shared counter.
 * A tree has a set of them, one for its parent and one a child.
 */

#include <linux/slab.h>
#include <net/ip6_fib.h>
#include <net/ip6_route.h>
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

/**
 * netagg_route_lookup6() - netagg_route_lookup() for IPv6.
 * @net: the namespace
 * @cached: this CPU's entry of the cache
 * @fl6: the flow; its source address is set
 *
 * Return: the route, without a reference of the caller's, or an ERR_PTR.
 */
struct dst_entry *netagg_route_lookup6(struct net *net,
				       struct netagg_route_pcpu *cached,
				       struct flowi6 *fl6)
{
	struct dst_entry *dst;

	/* Picks the source address too, as a socket's first send does. */
	dst = ip6_dst_lookup_flow(net, NULL, fl6, NULL);
	if (IS_ERR(dst))
		return dst;
	dst_release(cached->dst);
	cached->dst = dst;
	cached->saddr6 = fl6->saddr;
	cached->cookie = rt6_get_cookie(dst_rt6_info(dst));
	return dst;
}

/**
 * netagg_routes_free() - Free a tree's set of route caches.
 * @routes: the set, no packet using it any more; NULL: none
 */
void netagg_routes_free(struct netagg_routes *routes)
{
	u64 bits;

	if (!routes)
		return;
	for (bits = routes->bitmap; bits; bits &= bits - 1)
		netagg_route_destroy(&routes->child[__ffs64(bits)]);
	if (routes->has_parent)
		netagg_route_destroy(&routes->parent);
	kfree(routes);
}

/**
 * netagg_routes_free_rcu() - netagg_routes_free() after a grace period.
 * @rcu: the set's
 */
void netagg_routes_free_rcu(struct rcu_head *rcu)
{
	netagg_routes_free(container_of(rcu, struct netagg_routes, rcu));
}

/**
 * netagg_routes_alloc() - A set of empty route caches for a tree.
 * @parent: the tree has a parent
 * @n: its children
 *
 * The children's are child[0] to child[n - 1] until netagg_routes_place()
 * moves each to its child's bit. Process context.
 *
 * Return: the set, or NULL: no memory.
 */
struct netagg_routes *netagg_routes_alloc(bool parent, unsigned int n)
{
	struct netagg_routes *routes;
	unsigned int i;

	routes = kzalloc(sizeof(*routes), GFP_KERNEL_ACCOUNT);
	if (!routes)
		return NULL;
	if (parent) {
		if (netagg_route_init(&routes->parent, GFP_KERNEL_ACCOUNT))
			goto fail;
		routes->has_parent = true;
	}
	for (i = 0; i < n; i++) {
		if (netagg_route_init(&routes->child[i], GFP_KERNEL_ACCOUNT))
			goto fail;
		routes->bitmap |= BIT_ULL(i);
	}
	return routes;

fail:
	netagg_routes_free(routes);
	return NULL;
}

/**
 * netagg_routes_place() - Move each child's cache to its child's bit.
 * @routes: the set netagg_routes_alloc() made for @n children
 * @bits: child i's bit, bits[i]
 * @n: the children
 */
void netagg_routes_place(struct netagg_routes *routes, const u8 *bits,
			 unsigned int n)
{
	struct netagg_route cache[NETAGG_CHILDREN_MAX];
	unsigned int i;

	memcpy(cache, routes->child, n * sizeof(cache[0]));
	memset(routes->child, 0, sizeof(routes->child));
	routes->bitmap = 0;
	for (i = 0; i < n; i++) {
		routes->child[bits[i]] = cache[i];
		routes->bitmap |= BIT_ULL(bits[i]);
	}
}

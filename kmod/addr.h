/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The addresses of a tree's parent and children, IPv4 or IPv6, held as
 * one type: an IPv6 address, IPv4 ones IPv4-mapped (::ffff:a.b.c.d), as a
 * dual-stack socket holds its peer. The unspecified address (::) is none.
 * A tree's addresses are all of one family (job.c).
 */
#ifndef _NETAGG_ADDR_H
#define _NETAGG_ADDR_H

#include <linux/hash.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/socket.h>
#include <net/ipv6.h>
#include <net/netlink.h>

static inline void netagg_addr_from_v4(struct in6_addr *addr, __be32 v4)
{
	ipv6_addr_set_v4mapped(v4, addr);
}

static inline bool netagg_addr_is_v4(const struct in6_addr *addr)
{
	return ipv6_addr_v4mapped(addr);
}

/* The IPv4 address of an IPv4-mapped one. */
static inline __be32 netagg_addr_v4(const struct in6_addr *addr)
{
	return addr->s6_addr32[3];
}

/* An IPv4 one that names one host: not 0.0.0.0/8, multicast or broadcast. */
static inline bool netagg_addr_v4_unicast(const struct in6_addr *addr)
{
	__be32 v4 = netagg_addr_v4(addr);

	return !ipv4_is_zeronet(v4) && !ipv4_is_multicast(v4) &&
	       !ipv4_is_lbcast(v4);
}

static inline bool netagg_addr_set(const struct in6_addr *addr)
{
	return !ipv6_addr_any(addr);
}

static inline int netagg_addr_family(const struct in6_addr *addr)
{
	return netagg_addr_is_v4(addr) ? AF_INET : AF_INET6;
}

/*
 * The order sums take children in (linux/netagg.h): the address's bytes,
 * network order first; for IPv4-mapped ones the IPv4 address as a number.
 */
static inline int netagg_addr_cmp(const struct in6_addr *a,
				  const struct in6_addr *b)
{
	return memcmp(a, b, sizeof(*a));
}

static inline u32 netagg_addr_hash(const struct in6_addr *addr,
				   unsigned int bits)
{
	return hash_32(ipv6_addr_hash(addr), bits);
}

/* @addr in a message: as attribute @v4type if IPv4, else @v6type. */
static inline int netagg_addr_put(struct sk_buff *skb, int v4type, int v6type,
				  const struct in6_addr *addr)
{
	if (netagg_addr_is_v4(addr))
		return nla_put_in_addr(skb, v4type, netagg_addr_v4(addr));
	return nla_put_in6_addr(skb, v6type, addr);
}

#endif /* _NETAGG_ADDR_H */

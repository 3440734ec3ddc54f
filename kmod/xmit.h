/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_XMIT_H
#define _NETAGG_XMIT_H

#include <linux/in6.h>
#include <linux/skbuff.h>
#include <linux/netagg.h>

struct netagg_tag_key;

struct net;
struct netagg_route;

struct sk_buff *netagg_xmit_alloc(unsigned int len);
struct sk_buff *netagg_xmit_alloc_head(void);
int netagg_xmit(struct net *net, struct sk_buff *skb,
		const struct in6_addr *daddr, __be16 sport, __be16 dport,
		u8 tos, struct netagg_route *route,
		const struct netagg_tag_key *seal);

#endif /* _NETAGG_XMIT_H */

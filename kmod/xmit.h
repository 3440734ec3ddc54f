/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_XMIT_H
#define _NETAGG_XMIT_H

#include <linux/skbuff.h>
#include <linux/netagg.h>

struct net;
struct dst_cache;

struct sk_buff *netagg_xmit_alloc(unsigned int len);
int netagg_xmit(struct net *net, struct sk_buff *skb, __be32 daddr,
		__be16 dport, u8 ecn, struct dst_cache *route);

#endif /* _NETAGG_XMIT_H */

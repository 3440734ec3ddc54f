/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_HOOK_H
#define _NETAGG_HOOK_H

#include <linux/netagg.h>

struct iphdr;
struct ipv6hdr;
struct net;
struct netagg_net;

int netagg_hook_register(struct net *net, struct netagg_net *nn);
void netagg_hook_unregister(struct net *net, struct netagg_net *nn);
unsigned int netagg_hook_frame(struct net *net, struct netagg_net *nn,
			       const struct iphdr *iph, unsigned int iplen,
			       bool local);
unsigned int netagg_hook_frame6(struct net *net, struct netagg_net *nn,
				const struct ipv6hdr *ip6h, unsigned int iplen,
				bool local);

#endif /* _NETAGG_HOOK_H */

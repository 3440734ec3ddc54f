/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_HOOK_H
#define _NETAGG_HOOK_H

#include <linux/netagg.h>

struct net;
struct netagg_net;
struct netagg_job;
struct netagg_pkt;
struct sk_buff;

int netagg_hook_register(struct net *net, struct netagg_net *nn);
void netagg_hook_unregister(struct net *net, struct netagg_net *nn);
enum netagg_stat netagg_hdr_check(const struct netagg_job *job,
				  const struct sk_buff *skb,
				  struct netagg_pkt *pkt);

#endif /* _NETAGG_HOOK_H */

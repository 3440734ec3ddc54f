/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_NETNS_H
#define _NETAGG_NETNS_H

struct net;
struct netagg_net;

struct netagg_net *netagg_pernet(const struct net *net);
int netagg_netns_register(void);
void netagg_netns_unregister(void);

#endif /* _NETAGG_NETNS_H */

/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_HOOK_H
#define _NETAGG_HOOK_H

#include <linux/netagg.h>

struct net;
struct netagg_net;

int netagg_hook_register(struct net *net, struct netagg_net *nn);
void netagg_hook_unregister(struct net *net, struct netagg_net *nn);

#endif /* _NETAGG_HOOK_H */

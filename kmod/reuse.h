/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_REUSE_H
#define _NETAGG_REUSE_H

#include <linux/skbuff.h>
#include "pkt.h"

struct netagg_tree;
struct netagg_slot;

u64 netagg_reuse_budget(u32 window, u32 mtu, unsigned int children);
struct sk_buff *netagg_reuse_claim(struct sk_buff **in,
				   const struct netagg_pkt *pkt,
				   unsigned int len);
const void *netagg_reuse_keep(struct netagg_tree *tree,
			      struct netagg_slot *slot, int bit,
			      struct sk_buff **in, const struct netagg_pkt *pkt,
			      u32 charge);
void netagg_reuse_unpin(struct netagg_tree *tree, struct netagg_slot *slot);
struct sk_buff *netagg_reuse_pop(struct netagg_tree *tree,
				 struct netagg_slot *slot, int *bit);
void netagg_reuse_release(struct netagg_tree *tree, struct netagg_slot *slot);
void netagg_reuse_release_all(struct netagg_tree *tree);

#endif /* _NETAGG_REUSE_H */

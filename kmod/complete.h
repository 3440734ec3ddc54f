/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_COMPLETE_H
#define _NETAGG_COMPLETE_H

#include <linux/types.h>

struct net;
struct netagg_job;
struct netagg_out;
struct netagg_tree;

/* Which VIDs of a tree complete, and a round's start (complete.c). */
void netagg_drain(struct netagg_job *job, struct netagg_tree *tree,
		  struct netagg_out *out);
u64 netagg_round_start(struct netagg_tree *tree, u32 session, u16 round);
void netagg_tree_kick(struct net *net, struct netagg_job *job,
		      struct netagg_tree *tree);

#endif /* _NETAGG_COMPLETE_H */

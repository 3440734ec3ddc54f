/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_AGG_H
#define _NETAGG_AGG_H

#include <linux/skbuff.h>
#include <linux/netagg.h>
#include "pkt.h"

struct net;
struct netagg_job;
struct netagg_tree;

int netagg_agg_init(void);
void netagg_agg_exit(void);
unsigned int netagg_tree_rx(struct net *net, struct netagg_job *job,
			    struct netagg_tree *tree,
			    const struct netagg_pkt *pkt);
void netagg_tree_dtype_answer(struct net *net, struct netagg_job *job,
			      struct netagg_tree *tree,
			      const struct netagg_pkt *pkt);
unsigned int netagg_tree_rx_super(struct net *net, struct netagg_job *job,
				  struct netagg_tree *tree,
				  const struct netagg_pkt *pkt, unsigned int gso);

#endif /* _NETAGG_AGG_H */

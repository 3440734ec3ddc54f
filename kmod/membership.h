/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_MEMBERSHIP_H
#define _NETAGG_MEMBERSHIP_H

#include <linux/types.h>

struct in6_addr;
struct netlink_ext_ack;
struct netagg_child;
struct netagg_tree;

/* Who a tree's parent and children are, and their bits (membership.c). */
int netagg_tree_check(u8 role, int family, const struct in6_addr *parent,
		      const struct netagg_child *children, unsigned int n_children,
		      struct netlink_ext_ack *extack);
unsigned int netagg_tree_members(const struct netagg_tree *tree,
				 struct netagg_child *list);
void netagg_tree_order(struct netagg_tree *tree);
u64 netagg_tree_held(const struct netagg_tree *tree, u64 *filling);
void netagg_tree_changed(struct netagg_tree *tree, u64 removed, u64 filling);
int netagg_tree_assign(struct netagg_tree *tree, const struct in6_addr *parent,
		       const struct netagg_child *list, unsigned int n,
		       struct netlink_ext_ack *extack);

#endif /* _NETAGG_MEMBERSHIP_H */

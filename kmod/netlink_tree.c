// SPDX-License-Identifier: GPL-2.0
/*
 * The family's tree requests: tree new, tree set and tree del. A request's
 * tree ID, parent, children (each with its port, if it has one), quorum,
 * straggler delay and eviction time are read and checked here, each
 * rejection with an extack message saying what was wrong; job.c applies
 * them. Like every do of the family (netlink.c), these run between
 * netagg_nl_pre_doit_job() and netagg_nl_post_doit(): the namespace's
 * configuration lock held, the job in info->user_ptr[0].
 */

#include <linux/in.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <net/genetlink.h>
#include <net/ipv6.h>
#include <net/netlink.h>
#include "job.h"
#include "compat/genl.h"
#include "netlink-gen.h"
#include "netlink.h"

/* One message of a parent or of a child: @what after the name. */
#define NETAGG_NL_ADDR_ERR(info, attr, parent, what)			\
	do {								\
		if (parent)						\
			NL_SET_ERR_MSG_ATTR((info)->extack, attr,	\
					    "parent " what);		\
		else							\
			NL_SET_ERR_MSG_ATTR((info)->extack, attr,	\
					    "child " what);		\
	} while (0)

/*
 * The address @attr gives: of PARENT or CHILD an IPv4 one, IPv4-mapped
 * (addr.h); of PARENT_IPV6 or CHILD_IPV6 an IPv6 one. Either must be an
 * address a tree's packets can be sent to and come from: unicast, and an
 * IPv6 one not link-local (which names no interface to send by) nor
 * IPv4-mapped (an IPv4 address, given as one).
 */
static int netagg_nl_get_addr(struct genl_info *info,
			      const struct nlattr *attr, bool parent,
			      struct in6_addr *addr)
{
	int type;

	if (nla_type(attr) == NETAGG_A_PARENT ||
	    nla_type(attr) == NETAGG_A_CHILD) {
		netagg_addr_from_v4(addr, nla_get_in_addr(attr));
		if (netagg_addr_v4_unicast(addr))
			return 0;
		NETAGG_NL_ADDR_ERR(info, attr, parent,
				   "must be a unicast IPv4 address");
		return -EINVAL;
	}
	if (nla_len(attr) != sizeof(*addr)) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "an IPv6 address is 16 bytes");
		return -EINVAL;
	}
	*addr = nla_get_in6_addr(attr);
	type = ipv6_addr_type(addr);
	if (type & IPV6_ADDR_MAPPED) {
		NETAGG_NL_ADDR_ERR(info, attr, parent,
				   "is IPv4-mapped: give it as an IPv4 address");
		return -EINVAL;
	}
	if (type & IPV6_ADDR_LINKLOCAL) {
		NETAGG_NL_ADDR_ERR(info, attr, parent,
				   "is link-local, which names no interface to send by: give a global or unique local address");
		return -EINVAL;
	}
	if (!(type & IPV6_ADDR_UNICAST)) {
		NETAGG_NL_ADDR_ERR(info, attr, parent,
				   "must be a unicast IPv6 address");
		return -EINVAL;
	}
	return 0;
}

/*
 * Whether child @n of @cfg clashes with one listed before it: the same
 * address and port (1), or the same address with and without a port (2: a
 * packet would not know its child); 0 if not.
 */
static int netagg_nl_child_clash(const struct netagg_tree_cfg *cfg,
				 unsigned int n)
{
	const struct netagg_child *c = &cfg->children[n];
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (!ipv6_addr_equal(&cfg->children[i].addr, &c->addr))
			continue;
		if (cfg->children[i].port == c->port)
			return 1;
		if (!cfg->children[i].port || !c->port)
			return 2;
	}
	return 0;
}

/*
 * Every NETAGG_A_CHILD and _CHILD_IPV6 of the request, in order (child n
 * is listed n-th), each with the NETAGG_A_CHILD_PORT right after it, if
 * one is. @at: where each was, for the errors.
 */
static int netagg_nl_parse_children(struct genl_info *info,
				    struct netagg_tree_cfg *cfg,
				    const struct nlattr **at)
{
	const struct nlattr *attr;
	struct netagg_child *child = NULL;
	struct in6_addr addr;
	unsigned int i;
	int rem, err;

	nlmsg_for_each_attr(attr, info->nlhdr, GENL_HDRLEN, rem) {
		if (nla_type(attr) == NETAGG_A_CHILD_PORT) {
			if (!child || child->port) {
				NL_SET_ERR_MSG_ATTR(info->extack, attr,
						    "a child port comes right after its child");
				return -EINVAL;
			}
			child->port = nla_get_be16(attr);
			if (!child->port) {
				NL_SET_ERR_MSG_ATTR(info->extack, attr,
						    "child port must be 1 to 65535");
				return -EINVAL;
			}
			continue;
		}
		child = NULL;
		if (nla_type(attr) != NETAGG_A_CHILD &&
		    nla_type(attr) != NETAGG_A_CHILD_IPV6)
			continue;
		if (cfg->n_children == NETAGG_CHILDREN_MAX) {
			NL_SET_ERR_MSG_ATTR(info->extack, attr,
					    "too many children (at most "
					    __stringify(NETAGG_CHILDREN_MAX) ")");
			return -E2BIG;
		}
		err = netagg_nl_get_addr(info, attr, false, &addr);
		if (err)
			return err;
		at[cfg->n_children] = attr;
		child = &cfg->children[cfg->n_children++];
		*child = (struct netagg_child) { .addr = addr };
	}
	for (i = 1; i < cfg->n_children; i++) {
		switch (netagg_nl_child_clash(cfg, i)) {
		case 0:
			continue;
		case 1:
			NL_SET_ERR_MSG_ATTR(info->extack, at[i],
					    "child listed twice");
			return -EINVAL;
		default:
			NL_SET_ERR_MSG_ATTR(info->extack, at[i],
					    "an address is a child with ports or without one, not both");
			return -EINVAL;
		}
	}
	cfg->set_children = cfg->n_children > 0;
	return 0;
}

/*
 * Partial aggregation: QUORUM or QUORUM_PCT, and STRAGGLER_MS; failure
 * handling: EVICT_MS.
 */
static int netagg_nl_parse_quorum(struct genl_info *info,
				  struct netagg_tree_cfg *cfg)
{
	struct nlattr **attrs = info->attrs;

	if (attrs[NETAGG_A_QUORUM] && attrs[NETAGG_A_QUORUM_PCT]) {
		NL_SET_ERR_MSG_ATTR(info->extack, attrs[NETAGG_A_QUORUM_PCT],
				    "give the quorum as a count or as a percentage, not both");
		return -EINVAL;
	}
	if (attrs[NETAGG_A_QUORUM]) {
		cfg->quorum = nla_get_u16(attrs[NETAGG_A_QUORUM]);
		if (cfg->quorum > NETAGG_CHILDREN_MAX) {
			NL_SET_ERR_MSG_ATTR(info->extack, attrs[NETAGG_A_QUORUM],
					    "quorum must be 0 (every child) to "
					    __stringify(NETAGG_CHILDREN_MAX));
			return -EINVAL;
		}
		cfg->set_quorum = true;
	}
	if (attrs[NETAGG_A_QUORUM_PCT]) {
		cfg->quorum_pct = nla_get_u8(attrs[NETAGG_A_QUORUM_PCT]);
		if (!cfg->quorum_pct || cfg->quorum_pct > 100) {
			NL_SET_ERR_MSG_ATTR(info->extack, attrs[NETAGG_A_QUORUM_PCT],
					    "quorum percentage must be 1 to 100");
			return -EINVAL;
		}
		cfg->set_quorum = true;
	}
	if (attrs[NETAGG_A_STRAGGLER_MS]) {
		cfg->straggler_ms = nla_get_u32(attrs[NETAGG_A_STRAGGLER_MS]);
		if (cfg->straggler_ms > NETAGG_STRAGGLER_MS_MAX) {
			NL_SET_ERR_MSG_ATTR(info->extack, attrs[NETAGG_A_STRAGGLER_MS],
					    "straggler delay must be at most "
					    __stringify(NETAGG_STRAGGLER_MS_MAX) " ms");
			return -EINVAL;
		}
		cfg->set_straggler = true;
	}
	if (attrs[NETAGG_A_EVICT_MS]) {
		cfg->evict_ms = nla_get_u32(attrs[NETAGG_A_EVICT_MS]);
		if (cfg->evict_ms > NETAGG_EVICT_MS_MAX) {
			NL_SET_ERR_MSG_ATTR(info->extack, attrs[NETAGG_A_EVICT_MS],
					    "eviction time must be at most "
					    __stringify(NETAGG_EVICT_MS_MAX) " ms");
			return -EINVAL;
		}
		cfg->set_evict = true;
	}
	return 0;
}

static int netagg_nl_parse_tree(struct genl_info *info,
				struct netagg_tree_cfg *cfg)
{
	const struct nlattr *at[NETAGG_CHILDREN_MAX];
	struct nlattr **attrs = info->attrs, *parent;
	int err;

	err = netagg_nl_require(info, NETAGG_A_TREE_ID, "missing tree id");
	if (err)
		return err;
	cfg->tid = nla_get_u16(attrs[NETAGG_A_TREE_ID]);
	if (cfg->tid >= NETAGG_TREES_MAX) {
		NL_SET_ERR_MSG_ATTR(info->extack, attrs[NETAGG_A_TREE_ID],
				    "tree id must be below "
				    __stringify(NETAGG_TREES_MAX));
		return -EINVAL;
	}
	if (attrs[NETAGG_A_PARENT] && attrs[NETAGG_A_PARENT_IPV6]) {
		NL_SET_ERR_MSG_ATTR(info->extack, attrs[NETAGG_A_PARENT_IPV6],
				    "a tree has one parent: IPv4 or IPv6, not both");
		return -EINVAL;
	}
	parent = attrs[NETAGG_A_PARENT] ?: attrs[NETAGG_A_PARENT_IPV6];
	if (parent) {
		err = netagg_nl_get_addr(info, parent, true, &cfg->parent);
		if (err)
			return err;
		cfg->set_parent = true;
	}
	err = netagg_nl_parse_quorum(info, cfg);
	if (err)
		return err;
	return netagg_nl_parse_children(info, cfg, at);
}

/* A tree's configuration: too big for the stack, with IPv6 addresses. */
static struct netagg_tree_cfg *netagg_nl_tree_cfg(struct genl_info *info)
{
	struct netagg_tree_cfg *cfg = kzalloc(sizeof(*cfg), GFP_KERNEL);

	if (!cfg)
		NL_SET_ERR_MSG(info->extack, "no memory for the request");
	return cfg;
}

int netagg_nl_tree_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **attrs = info->attrs;
	struct netagg_tree_cfg *cfg;
	int err;

	cfg = netagg_nl_tree_cfg(info);
	if (!cfg)
		return -ENOMEM;
	err = netagg_nl_parse_tree(info, cfg) ?:
	      netagg_nl_require(info, NETAGG_A_ROLE,
				"missing role (root or aggregator)");
	if (err)
		goto out;
	cfg->role = nla_get_u8(attrs[NETAGG_A_ROLE]);
	if (cfg->role != NETAGG_ROLE_ROOT &&
	    cfg->role != NETAGG_ROLE_AGGREGATOR) {
		NL_SET_ERR_MSG_ATTR(info->extack, attrs[NETAGG_A_ROLE],
				    "unknown role (root or aggregator)");
		err = -EINVAL;
		goto out;
	}
	err = netagg_tree_create(info->user_ptr[0], cfg, info->extack);
out:
	kfree(cfg);
	return err;
}

int netagg_nl_tree_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct netagg_tree_cfg *cfg;
	int err;

	cfg = netagg_nl_tree_cfg(info);
	if (!cfg)
		return -ENOMEM;
	err = netagg_nl_parse_tree(info, cfg);
	if (err)
		goto out;
	if (info->attrs[NETAGG_A_ROLE]) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[NETAGG_A_ROLE],
				    "the role of a tree cannot change: delete the tree and add it again");
		err = -EINVAL;
		goto out;
	}
	err = netagg_tree_update(info->user_ptr[0], cfg, info->extack);
out:
	kfree(cfg);
	return err;
}

int netagg_nl_tree_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	int err;

	err = netagg_nl_require(info, NETAGG_A_TREE_ID, "missing tree id");
	if (err)
		return err;
	return netagg_tree_delete(info->user_ptr[0],
				  nla_get_u16(info->attrs[NETAGG_A_TREE_ID]),
				  info->extack);
}

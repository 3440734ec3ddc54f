/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	uapi/netagg.yaml */
/* YNL-GEN kernel header */

#ifndef _LINUX_NETAGG_GEN_H
#define _LINUX_NETAGG_GEN_H

#include <net/netlink.h>
#include <net/genetlink.h>

#include <uapi/linux/netagg_nl.h>

/* Ops table for netagg */
extern const struct genl_split_ops netagg_nl_ops[11];

int netagg_nl_pre_doit(const struct genl_split_ops *ops, struct sk_buff *skb,
		       struct genl_info *info);
int netagg_nl_pre_doit_job(const struct genl_split_ops *ops,
			   struct sk_buff *skb, struct genl_info *info);
void
netagg_nl_post_doit(const struct genl_split_ops *ops, struct sk_buff *skb,
		    struct genl_info *info);
int netagg_nl_dump_start(struct netlink_callback *cb);

int netagg_nl_job_new_doit(struct sk_buff *skb, struct genl_info *info);
int netagg_nl_job_del_doit(struct sk_buff *skb, struct genl_info *info);
int netagg_nl_job_get_doit(struct sk_buff *skb, struct genl_info *info);
int netagg_nl_job_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int netagg_nl_tree_new_doit(struct sk_buff *skb, struct genl_info *info);
int netagg_nl_tree_set_doit(struct sk_buff *skb, struct genl_info *info);
int netagg_nl_tree_del_doit(struct sk_buff *skb, struct genl_info *info);
int netagg_nl_stats_get_dumpit(struct sk_buff *skb,
			       struct netlink_callback *cb);
int netagg_nl_reset_doit(struct sk_buff *skb, struct genl_info *info);
int netagg_nl_ns_get_doit(struct sk_buff *skb, struct genl_info *info);
int netagg_nl_ns_set_doit(struct sk_buff *skb, struct genl_info *info);

#endif /* _LINUX_NETAGG_GEN_H */

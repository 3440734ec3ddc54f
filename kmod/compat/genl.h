/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The family's op table as ynl-gen-c.py renders it (kmod/netlink-gen.c):
 * split, a do and a dump of a command each with its own policy and hooks.
 * Kernels from 6.2 take it as it is, but for the ops without a policy,
 * which netagg_genl_set_ops() gives the core's reject-all one (the core
 * would parse none of their attributes). 6.1 has no split ops: this
 * declares struct genl_split_ops as 6.12 has it, and netagg_genl_set_ops()
 * folds the table into the one genl_ops per command that 6.1 takes.
 */
#ifndef _NETAGG_COMPAT_GENL_H
#define _NETAGG_COMPAT_GENL_H

#include <net/genetlink.h>

/* Set by compat/compat.mk when the kernel's genetlink.h has no split ops. */
#ifdef NETAGG_GENL_FOLD_SPLIT_OPS
struct genl_split_ops {
	union {
		struct {
			int (*pre_doit)(const struct genl_split_ops *ops,
					struct sk_buff *skb,
					struct genl_info *info);
			int (*doit)(struct sk_buff *skb,
				    struct genl_info *info);
			void (*post_doit)(const struct genl_split_ops *ops,
					  struct sk_buff *skb,
					  struct genl_info *info);
		};
		struct {
			int (*start)(struct netlink_callback *cb);
			int (*dumpit)(struct sk_buff *skb,
				      struct netlink_callback *cb);
			int (*done)(struct netlink_callback *cb);
		};
	};
	const struct nla_policy *policy;
	unsigned int maxattr;
	u8 cmd;
	u8 internal_flags;
	u8 flags;
	u8 validate;
};
#endif

void netagg_genl_set_ops(struct genl_family *family,
			 const struct genl_split_ops *ops, unsigned int n_ops);

#endif /* _NETAGG_COMPAT_GENL_H */

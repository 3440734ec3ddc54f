// SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause)
/* Do not edit directly, auto-generated from: */
/*	uapi/netagg.yaml */
/* YNL-GEN kernel source */

#include <net/netlink.h>
#include <net/genetlink.h>

#include "netlink-gen.h"

#include <uapi/linux/netagg_nl.h>

/* NETAGG_CMD_JOB_NEW - do */
static const struct nla_policy netagg_job_new_nl_policy[NETAGG_A_KEY + 1] = {
	[NETAGG_A_JOB_ID] = { .type = NLA_U32, },
	[NETAGG_A_DTYPE] = { .type = NLA_U8, },
	[NETAGG_A_OP] = { .type = NLA_U8, },
	[NETAGG_A_WINDOW] = { .type = NLA_U32, },
	[NETAGG_A_MTU] = { .type = NLA_U32, },
	[NETAGG_A_MEM_CAP] = { .type = NLA_U64, },
	[NETAGG_A_KEY] = { .type = NLA_BINARY, },
};

/* NETAGG_CMD_JOB_DEL - do */
static const struct nla_policy netagg_job_del_nl_policy[NETAGG_A_JOB_ID + 1] = {
	[NETAGG_A_JOB_ID] = { .type = NLA_U32, },
};

/* NETAGG_CMD_JOB_GET - do */
static const struct nla_policy netagg_job_get_nl_policy[NETAGG_A_JOB_ID + 1] = {
	[NETAGG_A_JOB_ID] = { .type = NLA_U32, },
};

/* NETAGG_CMD_TREE_NEW - do */
static const struct nla_policy netagg_tree_new_nl_policy[NETAGG_A_CHILD_IPV6 + 1] = {
	[NETAGG_A_JOB_ID] = { .type = NLA_U32, },
	[NETAGG_A_TREE_ID] = { .type = NLA_U16, },
	[NETAGG_A_ROLE] = { .type = NLA_U8, },
	[NETAGG_A_PARENT] = { .type = NLA_U32, },
	[NETAGG_A_PARENT_IPV6] = { .type = NLA_BINARY, },
	[NETAGG_A_CHILD] = { .type = NLA_U32, },
	[NETAGG_A_CHILD_IPV6] = { .type = NLA_BINARY, },
	[NETAGG_A_CHILD_PORT] = { .type = NLA_U16, },
	[NETAGG_A_QUORUM] = { .type = NLA_U16, },
	[NETAGG_A_QUORUM_PCT] = { .type = NLA_U8, },
	[NETAGG_A_STRAGGLER_MS] = { .type = NLA_U32, },
	[NETAGG_A_EVICT_MS] = { .type = NLA_U32, },
};

/* NETAGG_CMD_TREE_SET - do */
static const struct nla_policy netagg_tree_set_nl_policy[NETAGG_A_CHILD_IPV6 + 1] = {
	[NETAGG_A_JOB_ID] = { .type = NLA_U32, },
	[NETAGG_A_TREE_ID] = { .type = NLA_U16, },
	[NETAGG_A_ROLE] = { .type = NLA_U8, },
	[NETAGG_A_PARENT] = { .type = NLA_U32, },
	[NETAGG_A_PARENT_IPV6] = { .type = NLA_BINARY, },
	[NETAGG_A_CHILD] = { .type = NLA_U32, },
	[NETAGG_A_CHILD_IPV6] = { .type = NLA_BINARY, },
	[NETAGG_A_CHILD_PORT] = { .type = NLA_U16, },
	[NETAGG_A_QUORUM] = { .type = NLA_U16, },
	[NETAGG_A_QUORUM_PCT] = { .type = NLA_U8, },
	[NETAGG_A_STRAGGLER_MS] = { .type = NLA_U32, },
	[NETAGG_A_EVICT_MS] = { .type = NLA_U32, },
};

/* NETAGG_CMD_TREE_DEL - do */
static const struct nla_policy netagg_tree_del_nl_policy[NETAGG_A_TREE_ID + 1] = {
	[NETAGG_A_JOB_ID] = { .type = NLA_U32, },
	[NETAGG_A_TREE_ID] = { .type = NLA_U16, },
};

/* NETAGG_CMD_RESET - do */
static const struct nla_policy netagg_reset_nl_policy[NETAGG_A_TREE_ID + 1] = {
	[NETAGG_A_JOB_ID] = { .type = NLA_U32, },
	[NETAGG_A_TREE_ID] = { .type = NLA_U16, },
};

/* NETAGG_CMD_NS_SET - do */
static const struct nla_policy netagg_ns_set_nl_policy[NETAGG_A_PORT + 1] = {
	[NETAGG_A_MAX_JOBS] = { .type = NLA_U32, },
	[NETAGG_A_MEM_LIMIT] = { .type = NLA_U64, },
	[NETAGG_A_DSCP] = { .type = NLA_U8, },
	[NETAGG_A_PORT] = { .type = NLA_U16, },
};

/* Ops table for netagg */
const struct genl_split_ops netagg_nl_ops[11] = {
	{
		.cmd		= NETAGG_CMD_JOB_NEW,
		.pre_doit	= netagg_nl_pre_doit,
		.doit		= netagg_nl_job_new_doit,
		.post_doit	= netagg_nl_post_doit,
		.policy		= netagg_job_new_nl_policy,
		.maxattr	= NETAGG_A_KEY,
		.flags		= GENL_UNS_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= NETAGG_CMD_JOB_DEL,
		.pre_doit	= netagg_nl_pre_doit_job,
		.doit		= netagg_nl_job_del_doit,
		.post_doit	= netagg_nl_post_doit,
		.policy		= netagg_job_del_nl_policy,
		.maxattr	= NETAGG_A_JOB_ID,
		.flags		= GENL_UNS_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= NETAGG_CMD_JOB_GET,
		.pre_doit	= netagg_nl_pre_doit_job,
		.doit		= netagg_nl_job_get_doit,
		.post_doit	= netagg_nl_post_doit,
		.policy		= netagg_job_get_nl_policy,
		.maxattr	= NETAGG_A_JOB_ID,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd	= NETAGG_CMD_JOB_GET,
		.start	= netagg_nl_dump_start,
		.dumpit	= netagg_nl_job_get_dumpit,
		.flags	= GENL_CMD_CAP_DUMP,
	},
	{
		.cmd		= NETAGG_CMD_TREE_NEW,
		.pre_doit	= netagg_nl_pre_doit_job,
		.doit		= netagg_nl_tree_new_doit,
		.post_doit	= netagg_nl_post_doit,
		.policy		= netagg_tree_new_nl_policy,
		.maxattr	= NETAGG_A_CHILD_IPV6,
		.flags		= GENL_UNS_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= NETAGG_CMD_TREE_SET,
		.pre_doit	= netagg_nl_pre_doit_job,
		.doit		= netagg_nl_tree_set_doit,
		.post_doit	= netagg_nl_post_doit,
		.policy		= netagg_tree_set_nl_policy,
		.maxattr	= NETAGG_A_CHILD_IPV6,
		.flags		= GENL_UNS_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= NETAGG_CMD_TREE_DEL,
		.pre_doit	= netagg_nl_pre_doit_job,
		.doit		= netagg_nl_tree_del_doit,
		.post_doit	= netagg_nl_post_doit,
		.policy		= netagg_tree_del_nl_policy,
		.maxattr	= NETAGG_A_TREE_ID,
		.flags		= GENL_UNS_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd	= NETAGG_CMD_STATS_GET,
		.start	= netagg_nl_dump_start,
		.dumpit	= netagg_nl_stats_get_dumpit,
		.flags	= GENL_CMD_CAP_DUMP,
	},
	{
		.cmd		= NETAGG_CMD_RESET,
		.pre_doit	= netagg_nl_pre_doit,
		.doit		= netagg_nl_reset_doit,
		.post_doit	= netagg_nl_post_doit,
		.policy		= netagg_reset_nl_policy,
		.maxattr	= NETAGG_A_TREE_ID,
		.flags		= GENL_UNS_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= NETAGG_CMD_NS_GET,
		.pre_doit	= netagg_nl_pre_doit,
		.doit		= netagg_nl_ns_get_doit,
		.post_doit	= netagg_nl_post_doit,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= NETAGG_CMD_NS_SET,
		.pre_doit	= netagg_nl_pre_doit,
		.doit		= netagg_nl_ns_set_doit,
		.post_doit	= netagg_nl_post_doit,
		.policy		= netagg_ns_set_nl_policy,
		.maxattr	= NETAGG_A_PORT,
		.flags		= GENL_UNS_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
};

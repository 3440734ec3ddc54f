// SPDX-License-Identifier: GPL-2.0
/* Do not edit directly, auto-generated from: */
/*	uapi/netagg.yaml */
/* by scripts/netlink-gen.sh */

#include <netlink/attr.h>
#include <linux/netagg.h>
#include "cli.h"

/* What the CLI reads of the replies: every attribute, typed. */
struct nla_policy netagg_reply_policy[NETAGG_A_MAX + 1] = {
	[NETAGG_A_JOB_ID] = { .type = NLA_U32 },
	[NETAGG_A_DTYPE] = { .type = NLA_U8 },
	[NETAGG_A_OP] = { .type = NLA_U8 },
	[NETAGG_A_WINDOW] = { .type = NLA_U32 },
	[NETAGG_A_MTU] = { .type = NLA_U32 },
	[NETAGG_A_MEM_CAP] = { .type = NLA_U64 },
	[NETAGG_A_MEM_USED] = { .type = NLA_U64 },
	[NETAGG_A_TREE_ID] = { .type = NLA_U16 },
	[NETAGG_A_ROLE] = { .type = NLA_U8 },
	[NETAGG_A_PARENT] = { .type = NLA_U32 },
	[NETAGG_A_CHILD] = { .type = NLA_U32 },
	[NETAGG_A_BITMAP] = { .type = NLA_U64 },
	[NETAGG_A_EXPECTED_VID] = { .type = NLA_U32 },
	[NETAGG_A_TREE] = { .type = NLA_NESTED },
	[NETAGG_A_STATS] = { .type = NLA_NESTED },
	[NETAGG_A_MAX_JOBS] = { .type = NLA_U32 },
	[NETAGG_A_NUM_JOBS] = { .type = NLA_U32 },
	[NETAGG_A_MEM_LIMIT] = { .type = NLA_U64 },
	[NETAGG_A_ROUND] = { .type = NLA_U16 },
	[NETAGG_A_ROUND_ENDED] = { .type = NLA_FLAG },
	[NETAGG_A_ROUND_REGROUPED] = { .type = NLA_FLAG },
	[NETAGG_A_QUORUM] = { .type = NLA_U16 },
	[NETAGG_A_QUORUM_PCT] = { .type = NLA_U8 },
	[NETAGG_A_STRAGGLER_MS] = { .type = NLA_U32 },
	[NETAGG_A_EVICT_MS] = { .type = NLA_U32 },
	[NETAGG_A_EVICTED] = { .type = NLA_U32 },
	[NETAGG_A_PARENT_LOST] = { .type = NLA_FLAG },
	[NETAGG_A_EVENT] = { .type = NLA_U8 },
	[NETAGG_A_SILENT_MS] = { .type = NLA_U32 },
	[NETAGG_A_SESSION] = { .type = NLA_U32 },
	[NETAGG_A_CHILD_PORT] = { .type = NLA_U16 },
};

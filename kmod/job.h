/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_JOB_H
#define _NETAGG_JOB_H

#include <linux/netlink.h>
#include "state.h"

struct netagg_job_cfg {
	u32 jid;
	u8 dtype;
	u8 op;
	u32 window;
	u32 mtu;
	u64 mem_cap;
	const u8 *key;		/* NETAGG_KEY_LEN bytes, or NULL: unkeyed */
};

struct netagg_tree_cfg {
	u16 tid;
	u8 role;
	struct in6_addr parent;	/* :: for none */
	bool set_parent;
	bool set_children;
	unsigned int n_children;
	struct netagg_child children[NETAGG_CHILDREN_MAX];
	bool set_quorum;	/* quorum and quorum_pct given (one of them) */
	u16 quorum;
	u8 quorum_pct;
	bool set_straggler;
	u32 straggler_ms;
	bool set_evict;
	u32 evict_ms;
};

u64 netagg_tree_mem(u32 window, u32 mtu, u8 dtype, unsigned int children);
int netagg_job_create(struct netagg_net *nn, const struct netagg_job_cfg *cfg,
		      struct netlink_ext_ack *extack);
void netagg_job_delete(struct netagg_job *job);
struct netagg_job *netagg_job_get(struct netagg_net *nn, u32 jid,
				  struct netlink_ext_ack *extack);
int netagg_tree_create(struct netagg_job *job, const struct netagg_tree_cfg *cfg,
		       struct netlink_ext_ack *extack);
int netagg_tree_update(struct netagg_job *job, const struct netagg_tree_cfg *cfg,
		       struct netlink_ext_ack *extack);
int netagg_tree_delete(struct netagg_job *job, u16 tid,
		       struct netlink_ext_ack *extack);
struct netagg_tree *netagg_tree_locked(struct netagg_job *job, u16 tid);
struct netagg_tree *netagg_tree_get(struct netagg_job *job, u16 tid,
				    struct netlink_ext_ack *extack);
void netagg_tree_reset(struct netagg_tree *tree);
void netagg_job_reset(struct netagg_job *job);
void netagg_jobs_flush(struct netagg_net *nn);
void netagg_job_leak_check(void);

#endif /* _NETAGG_JOB_H */

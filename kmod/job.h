/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_JOB_H
#define _NETAGG_JOB_H

#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/netlink.h>
#include <linux/netagg.h>
#include "stats.h"

struct netagg_net;

/* One in-flight VID of a tree: the running sum and who is in it. */
struct netagg_slot {
	u32 vid;
	u16 count;		/* elements in the sum */
	u16 contributors;	/* worker contributions summed so far */
	u64 seen;		/* children bits that contributed */
	u8 ecn;			/* ECN of the inputs, merged */
	bool busy;		/* holds a sum of VID @vid */
	bool fin;		/* a contribution had NETAGG_F_FIN */
};

struct netagg_tree {
	struct rcu_head rcu;
	u16 tid;
	u8 role;
	/* Aggregation state; children and parent change under it too. */
	spinlock_t lock;
	__be32 parent;			/* 0 for a root */
	u64 bitmap;			/* bits of children[] in use */
	__be32 children[NETAGG_CHILDREN_MAX];
	/* Results go back to the port each child last sent from. */
	__be16 child_port[NETAGG_CHILDREN_MAX];
	u32 expected_vid;
	u32 head;			/* slot of expected_vid */
	u32 window;
	u32 stride;			/* bytes between slot payloads */
	struct netagg_slot *slots;	/* window of them */
	void *data;			/* window * stride bytes of sums */
	u64 mem;			/* bytes accounted to the job */
	struct netagg_stats stats;
};

struct netagg_job {
	struct rcu_head rcu;
	struct netagg_net *nn;
	u32 jid;
	u8 dtype;
	u8 op;
	u32 window;
	u32 mtu;
	u32 payload_max;		/* largest payload a packet can carry */
	u64 mem_cap;
	u64 mem_used;
	struct netagg_stats stats;
	struct netagg_tree __rcu *trees[NETAGG_TREES_MAX];
};

struct netagg_job_cfg {
	u32 jid;
	u8 dtype;
	u8 op;
	u32 window;
	u32 mtu;
	u64 mem_cap;
};

struct netagg_tree_cfg {
	u16 tid;
	u8 role;
	__be32 parent;
	bool set_parent;
	bool set_children;
	unsigned int n_children;
	__be32 children[NETAGG_CHILDREN_MAX];
};

u64 netagg_tree_mem(u32 window, u32 mtu);
int netagg_job_create(struct netagg_net *nn, const struct netagg_job_cfg *cfg,
		      struct netlink_ext_ack *extack);
int netagg_job_delete(struct netagg_net *nn, u32 jid,
		      struct netlink_ext_ack *extack);
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
void netagg_tree_restart(struct netagg_tree *tree);
void netagg_tree_reset(struct netagg_tree *tree);
void netagg_job_reset(struct netagg_job *job);
void netagg_jobs_flush(struct netagg_net *nn);
void netagg_job_leak_check(void);

static inline unsigned int netagg_dtype_size(u8 dtype)
{
	switch (dtype) {
	case NETAGG_DTYPE_F32:
	case NETAGG_DTYPE_I32:
		return 4;
	default:
		return 0;
	}
}

#endif /* _NETAGG_JOB_H */

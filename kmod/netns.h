/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_NETNS_H
#define _NETAGG_NETNS_H

#include <linux/mutex.h>
#include <linux/netfilter.h>
#include <linux/xarray.h>
#include "stats.h"

struct netagg_job;

/*
 * In front of the jobs' xarray, the job last created at each place JID mod
 * NETAGG_JOB_CACHE: the few jobs a switch runs are found by a packet with
 * one load and one compare, any other through the xarray as before.
 */
#define NETAGG_JOB_CACHE	64

/* Everything netagg knows about one network namespace. */
struct netagg_net {
	struct net *net;		/* whose state this is */
	struct mutex lock;		/* serialises configuration changes */
	struct xarray jobs;		/* JID -> struct netagg_job, RCU reads */
	struct netagg_job __rcu *job_cache[NETAGG_JOB_CACHE];	/* under lock */
	u32 max_jobs;
	u32 num_jobs;
	u64 mem_limit;
	u64 mem_used;			/* bytes held by all trees of all jobs */
	struct netagg_stats stats;	/* what the hook recognised */
	struct nf_hook_ops hook_ops;
};

/* Where the job of @jid is cached, if it is. */
static inline struct netagg_job __rcu **
netagg_job_cache_place(struct netagg_net *nn, u32 jid)
{
	return &nn->job_cache[jid % NETAGG_JOB_CACHE];
}

struct netagg_net *netagg_pernet(const struct net *net);
int netagg_netns_register(void);
void netagg_netns_unregister(void);

#endif /* _NETAGG_NETNS_H */

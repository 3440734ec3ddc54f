// SPDX-License-Identifier: GPL-2.0
/*
 * The "netagg" generic netlink family: jobs, trees, caps and counters of the
 * caller's network namespace. Its policies and op table are generated from
 * uapi/netagg.yaml (netlink-gen.c): attribute types are checked by strict
 * per-op policies; values and relations are checked here, each rejection
 * with an extack message saying what was wrong. Every do runs between
 * netagg_nl_pre_doit*() and netagg_nl_post_doit(), the namespace's
 * configuration lock held, its job looked up once where it names one. The
 * tree requests are netlink_tree.c's.
 */

#include <linux/kernel.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <net/sock.h>
#include "netns.h"
#include "job.h"
#include "reduce.h"
#include "events.h"
#include "compat/genl.h"
#include "netlink-gen.h"
#include "netlink.h"

static struct genl_family netagg_genl_family;

static struct netagg_net *netagg_nl_pernet(struct genl_info *info)
{
	return netagg_pernet(genl_info_net(info));
}

/* Worst-case size of one job message: every tree with every child. */
static size_t netagg_nl_job_size(void)
{
	size_t stats = nla_total_size(0) +
		       (__NETAGG_STAT_MAX - 1) * nla_total_size_64bit(sizeof(u64));
	size_t tree_cfg = nla_total_size(sizeof(u8)) +		/* ROLE */
			  nla_total_size(sizeof(struct in6_addr)) + /* PARENT */
			  2 * nla_total_size_64bit(sizeof(u64)) + /* BITMAP, MEM_USED */
			  nla_total_size(sizeof(u32)) +		/* EXPECTED_VID */
			  nla_total_size(sizeof(u16)) +		/* ROUND */
			  nla_total_size(sizeof(u32)) +		/* SESSION */
			  2 * nla_total_size(0) +	/* ROUND_ENDED, _REGROUPED */
			  nla_total_size(sizeof(u16)) +	/* QUORUM or QUORUM_PCT */
			  nla_total_size(sizeof(u32)) +	/* STRAGGLER_MS */
			  nla_total_size(sizeof(u32)) +	/* EVICT_MS */
			  nla_total_size(0) +		/* PARENT_LOST */
			  /* CHILD or EVICTED (_IPV6), and CHILD_PORT, a bit */
			  NETAGG_CHILDREN_MAX *
			  (nla_total_size(sizeof(struct in6_addr)) +
			   nla_total_size(sizeof(__be16)));
	size_t job_cfg = 2 * nla_total_size(sizeof(u8)) +	/* DTYPE, OP */
			 2 * nla_total_size(sizeof(u32)) +	/* WINDOW, MTU */
			 2 * nla_total_size_64bit(sizeof(u64));	/* MEM_* */
	size_t tree = nla_total_size(0) + nla_total_size(sizeof(u16)) +
		      max(stats, tree_cfg);

	return nla_total_size(sizeof(u32)) + max(stats, job_cfg) +
	       NETAGG_TREES_MAX * tree;
}

/* The counters of one level (@mask: NETAGG_STATS_NS, _JOB or _TREE). */
static int netagg_nl_put_stats(struct sk_buff *skb,
			       const struct netagg_stats *stats, u64 mask)
{
	u64 val[__NETAGG_STAT_MAX];
	struct nlattr *nest;
	int i;

	netagg_stats_read(stats, val);
	nest = nla_nest_start(skb, NETAGG_A_STATS);
	if (!nest)
		return -EMSGSIZE;
	for (i = NETAGG_STAT_UNSPEC + 1; i < __NETAGG_STAT_MAX; i++) {
		if (!(mask & BIT_ULL(i)))
			continue;
		if (nla_put_u64_64bit(skb, i, val[i], NETAGG_STAT_UNSPEC)) {
			nla_nest_cancel(skb, nest);
			return -EMSGSIZE;
		}
	}
	nla_nest_end(skb, nest);
	return 0;
}

static int netagg_nl_put_tree_cfg(struct sk_buff *skb,
				  struct netagg_tree *tree)
{
	bool in_round, ended, regrouped, parent_lost;
	u32 expected_vid, straggler_ms, evict_ms, session;
	struct netagg_child *children;
	struct in6_addr parent;
	u64 bitmap, evicted;
	u16 round, quorum;
	u8 quorum_pct;
	int bit, err = -EMSGSIZE;

	/* Too big for the stack, with IPv6 addresses. */
	children = kmalloc_array(NETAGG_CHILDREN_MAX, sizeof(*children),
				 GFP_KERNEL);
	if (!children)
		return -ENOMEM;
	/* A consistent snapshot: the packet path changes these under lock. */
	spin_lock_bh(&tree->lock);
	parent = tree->parent;
	bitmap = tree->bitmap;
	expected_vid = tree->win.expected_vid;
	in_round = tree->win.in_round;
	round = tree->win.round;
	session = tree->win.session;
	ended = tree->win.ended;
	regrouped = tree->regrouped;
	quorum = tree->quorum;
	quorum_pct = tree->quorum_pct;
	straggler_ms = tree->straggler_ms;
	evict_ms = tree->evict_ms;
	evicted = tree->evicted;
	parent_lost = tree->parent_lost;
	memcpy(children, tree->children,
	       NETAGG_CHILDREN_MAX * sizeof(*children));
	spin_unlock_bh(&tree->lock);

	if (nla_put_u8(skb, NETAGG_A_ROLE, tree->role) ||
	    (netagg_addr_set(&parent) &&
	     netagg_addr_put(skb, NETAGG_A_PARENT, NETAGG_A_PARENT_IPV6,
				&parent)) ||
	    nla_put_u64_64bit(skb, NETAGG_A_BITMAP, bitmap, NETAGG_A_PAD) ||
	    nla_put_u64_64bit(skb, NETAGG_A_MEM_USED, tree->mem, NETAGG_A_PAD) ||
	    nla_put_u32(skb, NETAGG_A_EXPECTED_VID, expected_vid) ||
	    (in_round && nla_put_u16(skb, NETAGG_A_ROUND, round)) ||
	    (in_round && nla_put_u32(skb, NETAGG_A_SESSION, session)) ||
	    (in_round && ended && nla_put_flag(skb, NETAGG_A_ROUND_ENDED)) ||
	    (in_round && regrouped &&
	     nla_put_flag(skb, NETAGG_A_ROUND_REGROUPED)) ||
	    (quorum_pct ? nla_put_u8(skb, NETAGG_A_QUORUM_PCT, quorum_pct) :
			  nla_put_u16(skb, NETAGG_A_QUORUM, quorum)) ||
	    nla_put_u32(skb, NETAGG_A_STRAGGLER_MS, straggler_ms) ||
	    nla_put_u32(skb, NETAGG_A_EVICT_MS, evict_ms) ||
	    (parent_lost && nla_put_flag(skb, NETAGG_A_PARENT_LOST)))
		goto out;
	for (bit = 0; bit < NETAGG_CHILDREN_MAX; bit++) {
		if (!((bitmap | evicted) & BIT_ULL(bit)))
			continue;
		if ((bitmap & BIT_ULL(bit) ?
		     netagg_addr_put(skb, NETAGG_A_CHILD, NETAGG_A_CHILD_IPV6,
					&children[bit].addr) :
		     netagg_addr_put(skb, NETAGG_A_EVICTED,
					NETAGG_A_EVICTED_IPV6,
					&children[bit].addr)) ||
		    (children[bit].port &&
		     nla_put_be16(skb, NETAGG_A_CHILD_PORT, children[bit].port)))
			goto out;
	}
	err = 0;
out:
	kfree(children);
	return err;
}

static int netagg_nl_put_tree(struct sk_buff *skb, struct netagg_tree *tree,
			      u8 cmd)
{
	struct nlattr *nest;
	int err;

	nest = nla_nest_start(skb, NETAGG_A_TREE);
	if (!nest)
		return -EMSGSIZE;
	err = nla_put_u16(skb, NETAGG_A_TREE_ID, tree->tid);
	if (!err && cmd == NETAGG_CMD_STATS_GET)
		err = netagg_nl_put_stats(skb, &tree->stats, NETAGG_STATS_TREE);
	else if (!err)
		err = netagg_nl_put_tree_cfg(skb, tree);
	if (err) {
		nla_nest_cancel(skb, nest);
		return err;
	}
	nla_nest_end(skb, nest);
	return 0;
}

static int netagg_nl_put_job_cfg(struct sk_buff *skb, struct netagg_job *job)
{
	if (nla_put_u8(skb, NETAGG_A_DTYPE, job->dtype) ||
	    nla_put_u8(skb, NETAGG_A_OP, job->op) ||
	    nla_put_u32(skb, NETAGG_A_WINDOW, job->window) ||
	    nla_put_u32(skb, NETAGG_A_MTU, job->mtu) ||
	    nla_put_u64_64bit(skb, NETAGG_A_MEM_CAP, job->mem_cap,
			      NETAGG_A_PAD) ||
	    nla_put_u64_64bit(skb, NETAGG_A_MEM_USED, job->mem_used,
			      NETAGG_A_PAD) ||
	    (job->keyed && nla_put_flag(skb, NETAGG_A_KEYED)))
		return -EMSGSIZE;
	return 0;
}

/* One message per job: its configuration (JOB_GET) or counters (STATS_GET). */
static int netagg_nl_fill_job(struct sk_buff *skb, struct netagg_job *job,
			      u32 portid, u32 seq, int flags, u8 cmd)
{
	struct netagg_tree *tree;
	void *hdr;
	int tid;

	hdr = genlmsg_put(skb, portid, seq, &netagg_genl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, NETAGG_A_JOB_ID, job->jid))
		goto cancel;
	if (cmd == NETAGG_CMD_STATS_GET ?
	    netagg_nl_put_stats(skb, &job->stats, NETAGG_STATS_JOB) :
	    netagg_nl_put_job_cfg(skb, job))
		goto cancel;
	for (tid = 0; tid < NETAGG_TREES_MAX; tid++) {
		tree = netagg_tree_locked(job, tid);
		if (tree && netagg_nl_put_tree(skb, tree, cmd))
			goto cancel;
	}
	genlmsg_end(skb, hdr);
	return 0;

cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/**
 * netagg_nl_pre_doit() - Before a do: take the namespace's config lock.
 * @ops: the do
 * @skb: the request
 * @info: the request, parsed
 *
 * Return: 0.
 */
int netagg_nl_pre_doit(const struct genl_split_ops *ops, struct sk_buff *skb,
		       struct genl_info *info)
{
	mutex_lock(&netagg_nl_pernet(info)->lock);
	return 0;
}

/**
 * netagg_nl_pre_doit_job() - Before a do on a job: take the namespace's
 * config lock and look up the job JOB_ID names, for the do's info->user_ptr[0].
 * @ops: the do
 * @skb: the request
 * @info: the request, parsed
 *
 * Return: 0 (the lock held), or -EINVAL without JOB_ID, -ENOENT without
 * such a job (the lock not held: no post_doit follows a failed pre_doit).
 */
int netagg_nl_pre_doit_job(const struct genl_split_ops *ops,
			   struct sk_buff *skb, struct genl_info *info)
{
	struct netagg_net *nn = netagg_nl_pernet(info);
	struct netagg_job *job;
	int err;

	err = netagg_nl_require(info, NETAGG_A_JOB_ID, "missing job id");
	if (err)
		return err;
	mutex_lock(&nn->lock);
	job = netagg_job_get(nn, nla_get_u32(info->attrs[NETAGG_A_JOB_ID]),
			     info->extack);
	if (!job) {
		mutex_unlock(&nn->lock);
		return -ENOENT;
	}
	info->user_ptr[0] = job;
	return 0;
}

/**
 * netagg_nl_post_doit() - After a do: drop the namespace's config lock.
 * @ops: the do
 * @skb: the request
 * @info: the request, parsed
 */
void netagg_nl_post_doit(const struct genl_split_ops *ops, struct sk_buff *skb,
			 struct genl_info *info)
{
	mutex_unlock(&netagg_nl_pernet(info)->lock);
}

int netagg_nl_job_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct netagg_net *nn = netagg_nl_pernet(info);
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **attrs = info->attrs;
	struct netagg_job_cfg cfg = {
		.dtype = NETAGG_DTYPE_F32,
		.op = NETAGG_OP_SUM,
		.window = NETAGG_WINDOW_DEFAULT,
		.mtu = NETAGG_MTU_DEFAULT,
		.mem_cap = NETAGG_MEM_CAP_DEFAULT,
	};
	int err;

	err = netagg_nl_require(info, NETAGG_A_JOB_ID, "missing job id");
	if (err)
		return err;
	cfg.jid = nla_get_u32(attrs[NETAGG_A_JOB_ID]);

	if (attrs[NETAGG_A_DTYPE]) {
		cfg.dtype = nla_get_u8(attrs[NETAGG_A_DTYPE]);
		if (!netagg_dtype_size(cfg.dtype)) {
			NL_SET_ERR_MSG_ATTR(extack, attrs[NETAGG_A_DTYPE],
					    "unknown dtype (f32, i32, f16 or bf16)");
			return -EINVAL;
		}
	}
	if (attrs[NETAGG_A_OP]) {
		cfg.op = nla_get_u8(attrs[NETAGG_A_OP]);
		if (cfg.op != NETAGG_OP_SUM && cfg.op != NETAGG_OP_AVG) {
			NL_SET_ERR_MSG_ATTR(extack, attrs[NETAGG_A_OP],
					    "unknown op (sum or avg)");
			return -EINVAL;
		}
	}
	if (attrs[NETAGG_A_WINDOW]) {
		cfg.window = nla_get_u32(attrs[NETAGG_A_WINDOW]);
		if (!cfg.window || cfg.window > NETAGG_WINDOW_MAX) {
			NL_SET_ERR_MSG_ATTR(extack, attrs[NETAGG_A_WINDOW],
					    "window must be 1 to "
					    __stringify(NETAGG_WINDOW_MAX));
			return -EINVAL;
		}
	}
	if (attrs[NETAGG_A_MTU]) {
		cfg.mtu = nla_get_u32(attrs[NETAGG_A_MTU]);
		if (cfg.mtu < NETAGG_MTU_MIN || cfg.mtu > NETAGG_MTU_MAX) {
			NL_SET_ERR_MSG_ATTR(extack, attrs[NETAGG_A_MTU],
					    "mtu must be "
					    __stringify(NETAGG_MTU_MIN) " to "
					    __stringify(NETAGG_MTU_MAX));
			return -EINVAL;
		}
	}
	if (attrs[NETAGG_A_MEM_CAP])
		cfg.mem_cap = nla_get_u64(attrs[NETAGG_A_MEM_CAP]);
	if (attrs[NETAGG_A_KEY]) {
		if (nla_len(attrs[NETAGG_A_KEY]) != NETAGG_KEY_LEN) {
			NL_SET_ERR_MSG_ATTR(extack, attrs[NETAGG_A_KEY],
					    "key must be "
					    __stringify(NETAGG_KEY_LEN) " bytes");
			return -EINVAL;
		}
		cfg.key = nla_data(attrs[NETAGG_A_KEY]);
	}
	return netagg_job_create(nn, &cfg, extack);
}

int netagg_nl_job_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	netagg_job_delete(info->user_ptr[0]);
	return 0;
}

int netagg_nl_job_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	int err;

	msg = genlmsg_new(netagg_nl_job_size(), GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	err = netagg_nl_fill_job(msg, info->user_ptr[0], info->snd_portid,
				 info->snd_seq, 0, NETAGG_CMD_JOB_GET);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

/**
 * netagg_nl_dump_start() - Before a dump of jobs.
 * @cb: the dump
 *
 * A job message is never split: make room for the largest one.
 *
 * Return: 0.
 */
int netagg_nl_dump_start(struct netlink_callback *cb)
{
	cb->min_dump_alloc = nlmsg_total_size(genlmsg_msg_size(netagg_nl_job_size()));
	return 0;
}

/* cb->args[0]: next JID to dump; cb->args[1]: set once every job was sent. */
static int netagg_nl_dump_jobs(struct sk_buff *skb, struct netlink_callback *cb,
			       u8 cmd)
{
	struct netagg_net *nn = netagg_pernet(sock_net(skb->sk));
	struct netagg_job *job;
	unsigned long jid;
	int err = 0;

	if (cb->args[1])
		return 0;
	mutex_lock(&nn->lock);
	xa_for_each_start(&nn->jobs, jid, job, cb->args[0]) {
		err = netagg_nl_fill_job(skb, job, NETLINK_CB(cb->skb).portid,
					 cb->nlh->nlmsg_seq, NLM_F_MULTI, cmd);
		if (err)
			break;
		cb->args[0] = jid + 1;
	}
	mutex_unlock(&nn->lock);
	if (!err)
		cb->args[1] = 1;
	else if (skb->len)
		return skb->len;	/* full: continue in the next skb */
	else
		return err;
	return skb->len;
}

int netagg_nl_job_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return netagg_nl_dump_jobs(skb, cb, NETAGG_CMD_JOB_GET);
}

int netagg_nl_stats_get_dumpit(struct sk_buff *skb,
			       struct netlink_callback *cb)
{
	return netagg_nl_dump_jobs(skb, cb, NETAGG_CMD_STATS_GET);
}

int netagg_nl_reset_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct netagg_net *nn = netagg_nl_pernet(info);
	struct nlattr **attrs = info->attrs;
	struct netagg_tree *tree;
	struct netagg_job *job;

	if (!attrs[NETAGG_A_JOB_ID] && attrs[NETAGG_A_TREE_ID]) {
		NL_SET_ERR_MSG_ATTR(info->extack, attrs[NETAGG_A_TREE_ID],
				    "tree id given without a job id");
		NL_SET_ERR_ATTR_MISS(info->extack, NULL, NETAGG_A_JOB_ID);
		return -EINVAL;
	}
	if (!attrs[NETAGG_A_JOB_ID]) {
		netagg_jobs_flush(nn);
		netagg_stats_reset(&nn->stats);
		return 0;
	}
	job = netagg_job_get(nn, nla_get_u32(attrs[NETAGG_A_JOB_ID]),
			     info->extack);
	if (!job)
		return -ENOENT;
	if (!attrs[NETAGG_A_TREE_ID]) {
		netagg_job_reset(job);
		return 0;
	}
	tree = netagg_tree_get(job, nla_get_u16(attrs[NETAGG_A_TREE_ID]),
			       info->extack);
	if (!tree)
		return -ENOENT;
	netagg_tree_reset(tree);
	return 0;
}

int netagg_nl_ns_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct netagg_net *nn = netagg_nl_pernet(info);
	struct sk_buff *msg;
	void *hdr;
	int err = -EMSGSIZE;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &netagg_genl_family, 0,
				NETAGG_CMD_NS_GET);
	if (!hdr)
		goto free;

	if (!nla_put_string(msg, NETAGG_A_VERSION, NETAGG_VERSION) &&
	    !nla_put_u32(msg, NETAGG_A_MAX_JOBS, nn->max_jobs) &&
	    !nla_put_u32(msg, NETAGG_A_NUM_JOBS, nn->num_jobs) &&
	    !nla_put_u64_64bit(msg, NETAGG_A_MEM_LIMIT, nn->mem_limit,
			       NETAGG_A_PAD) &&
	    !nla_put_u64_64bit(msg, NETAGG_A_MEM_USED, nn->mem_used,
			       NETAGG_A_PAD) &&
	    !nla_put_u8(msg, NETAGG_A_DSCP, nn->dscp) &&
	    !nla_put_u16(msg, NETAGG_A_PORT, ntohs(nn->port)))
		err = netagg_nl_put_stats(msg, &nn->stats, NETAGG_STATS_NS);
	if (err)
		goto free;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

free:
	nlmsg_free(msg);
	return err;
}

int netagg_nl_ns_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct netagg_net *nn = netagg_nl_pernet(info);
	struct nlattr *max_jobs = info->attrs[NETAGG_A_MAX_JOBS];
	struct nlattr *mem_limit = info->attrs[NETAGG_A_MEM_LIMIT];
	struct nlattr *dscp = info->attrs[NETAGG_A_DSCP];
	struct nlattr *port = info->attrs[NETAGG_A_PORT];
	u64 limit = 0;
	u32 cap = 0;

	if (!max_jobs && !mem_limit && !dscp && !port) {
		NL_SET_ERR_MSG(info->extack,
			       "nothing to set: give a job cap, a memory limit, a DSCP or a port");
		return -EINVAL;
	}
	/* 0 is every unmarked packet's: each would have to be looked at. */
	if (dscp && (!nla_get_u8(dscp) || nla_get_u8(dscp) > 63)) {
		NL_SET_ERR_MSG_ATTR(info->extack, dscp, "DSCP must be 1 to 63");
		return -EINVAL;
	}
	if (port && !nla_get_u16(port)) {
		NL_SET_ERR_MSG_ATTR(info->extack, port, "port must be 1 to 65535");
		return -EINVAL;
	}
	if (max_jobs) {
		cap = nla_get_u32(max_jobs);
		if (!cap || cap > NETAGG_JOBS_MAX) {
			NL_SET_ERR_MSG_ATTR(info->extack, max_jobs,
					    "job cap must be 1 to "
					    __stringify(NETAGG_JOBS_MAX));
			return -EINVAL;
		}
	}
	if (mem_limit) {
		limit = nla_get_u64(mem_limit);
		if (!limit || limit > NETAGG_MEM_LIMIT_MAX) {
			NL_SET_ERR_MSG_ATTR(info->extack, mem_limit,
					    "memory limit must be 1 byte to 64 GiB");
			return -EINVAL;
		}
	}

	if (max_jobs && cap < nn->num_jobs) {
		NL_SET_ERR_MSG_ATTR(info->extack, max_jobs,
				    "job cap is below the number of jobs: delete jobs first");
		return -EBUSY;
	}
	if (mem_limit && limit < nn->mem_used) {
		NL_SET_ERR_MSG_ATTR(info->extack, mem_limit,
				    "memory limit is below the memory in use: delete trees first");
		return -EBUSY;
	}
	if (max_jobs)
		nn->max_jobs = cap;
	if (mem_limit)
		nn->mem_limit = limit;
	if (dscp)
		WRITE_ONCE(nn->dscp, nla_get_u8(dscp));
	if (port)
		WRITE_ONCE(nn->port, htons(nla_get_u16(port)));
	return 0;
}

static const struct genl_multicast_group netagg_nl_mcgrps[] = {
	[NETAGG_NL_MCGRP_EVENTS] = { .name = NETAGG_MCGRP_EVENTS },
};

static struct genl_family netagg_genl_family __ro_after_init = {
	.name = NETAGG_GENL_NAME,
	.version = NETAGG_GENL_VERSION,
	.maxattr = NETAGG_A_MAX,
	.netnsok = true,
	.module = THIS_MODULE,
	.mcgrps = netagg_nl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(netagg_nl_mcgrps),
};

/**
 * netagg_genl_register() - Register the generic netlink family.
 *
 * Return: 0, or genl_register_family()'s error.
 */
int __init netagg_genl_register(void)
{
	int err;

	netagg_genl_set_ops(&netagg_genl_family, netagg_nl_ops,
			    ARRAY_SIZE(netagg_nl_ops));
	err = genl_register_family(&netagg_genl_family);
	if (!err)
		netagg_events_start(&netagg_genl_family);
	return err;
}

/**
 * netagg_genl_unregister() - Unregister the family, no event in flight.
 */
void netagg_genl_unregister(void)
{
	netagg_events_stop();
	genl_unregister_family(&netagg_genl_family);
}

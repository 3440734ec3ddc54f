// SPDX-License-Identifier: GPL-2.0
/*
 * Jobs and their trees. Configuration changes them under the namespace's
 * config lock; the packet path finds them under RCU and works on a tree's
 * aggregation state under the tree's lock. All memory a tree will ever use
 * is allocated when it is created, against the job's and the namespace's
 * caps, and the received packets it may hold are charged there too: no
 * packet can make a tree grow. Who a tree's members are, and their bits,
 * is membership.c's.
 */

#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/cache.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/udp.h>
#include "job.h"
#include "complete.h"
#include "membership.h"
#include "reduce.h"
#include "reuse.h"
#include "timers.h"

/* Jobs and trees alive in all namespaces: zero again at module unload. */
static atomic_t netagg_objects = ATOMIC_INIT(0);

/*
 * The largest payload a packet of @mtu bytes carries: over IPv4 the job's
 * bound, which every packet is checked against; over IPv6, whose header is
 * 20 bytes longer, an IPv6 tree's. A keyed job's packets end in a tag.
 */
static u32 netagg_payload_max(u32 mtu, int family, bool keyed)
{
	u32 ip = family == AF_INET6 ? sizeof(struct ipv6hdr) :
				      sizeof(struct iphdr);

	return (mtu - ip - sizeof(struct udphdr) - sizeof(struct netagg_hdr) -
		(keyed ? NETAGG_TAG_LEN : 0)) & ~3U;
}

/*
 * Each slot's sum starts on a cache line, so vector loads stay aligned. A
 * sum of a half type is float32 accumulators: twice the payload.
 */
static u32 netagg_stride(u32 mtu, u8 dtype)
{
	u32 len = netagg_payload_max(mtu, AF_INET, false);

	if (netagg_dtype_half(dtype))
		len *= 2;
	return ALIGN(len, SMP_CACHE_BYTES);
}

/**
 * netagg_tree_mem() - The memory a tree is charged.
 * @window: the job's window
 * @mtu: the job's MTU
 * @dtype: the job's dtype
 * @children: the tree's children
 *
 * Two windows of slots: the VIDs in flight and the results kept behind;
 * where the window's slots find their contributions; the received
 * packets they keep (reuse.c), which grow with the children; and the pages
 * its super-packets are gathered in (super.h).
 *
 * Return: the bytes.
 */
u64 netagg_tree_mem(u32 window, u32 mtu, u8 dtype, unsigned int children)
{
	return sizeof(struct netagg_tree) +
	       2ULL * window * (sizeof(struct netagg_slot) +
				netagg_stride(mtu, dtype)) +
	       (u64)window * NETAGG_CHILDREN_MAX * sizeof(struct netagg_input) +
	       netagg_reuse_budget(window, mtu, children) +
	       NETAGG_SUPER_CACHE * (PAGE_SIZE << PAGE_ALLOC_COSTLY_ORDER);
}

/* Whether @job and its namespace can take @mem more bytes. */
static int netagg_mem_check(struct netagg_job *job, u64 mem,
			    struct netlink_ext_ack *extack)
{
	if (job->mem_used + mem > job->mem_cap) {
		NL_SET_ERR_MSG(extack, "tree would exceed the job's memory cap");
		return -ENOSPC;
	}
	if (job->nn->mem_used + mem > job->nn->mem_limit) {
		NL_SET_ERR_MSG(extack,
			       "tree would exceed the namespace's memory limit");
		return -ENOSPC;
	}
	return 0;
}

/**
 * netagg_job_get() - A job of a namespace, its config lock held.
 * @nn: the namespace's netagg state
 * @jid: the job
 * @extack: where to say there is none
 *
 * Return: the job, or NULL.
 */
struct netagg_job *netagg_job_get(struct netagg_net *nn, u32 jid,
				  struct netlink_ext_ack *extack)
{
	struct netagg_job *job;

	lockdep_assert_held(&nn->lock);
	job = xa_load(&nn->jobs, jid);
	if (!job)
		NL_SET_ERR_MSG(extack, "no such job");
	return job;
}

/**
 * netagg_tree_locked() - A tree of a job, the namespace's config lock held.
 * @job: the job
 * @tid: the tree, below NETAGG_TREES_MAX
 *
 * Return: the tree, or NULL.
 */
struct netagg_tree *netagg_tree_locked(struct netagg_job *job, u16 tid)
{
	return rcu_dereference_protected(job->trees[tid],
					 lockdep_is_held(&job->nn->lock));
}

/**
 * netagg_tree_get() - A tree of a job by its TID, as a request names it.
 * @job: the job, the namespace's config lock held
 * @tid: the tree, any value
 * @extack: where to say there is none
 *
 * Return: the tree, or NULL.
 */
struct netagg_tree *netagg_tree_get(struct netagg_job *job, u16 tid,
				    struct netlink_ext_ack *extack)
{
	struct netagg_tree *tree = NULL;

	if (tid < NETAGG_TREES_MAX)
		tree = netagg_tree_locked(job, tid);
	if (!tree)
		NL_SET_ERR_MSG(extack, "no such tree in this job");
	return tree;
}

static void netagg_tree_free(struct netagg_tree *tree)
{
	/* After a grace period: no packet uses the routes any more. */
	netagg_routes_free(rcu_dereference_protected(tree->routes, true));
	netagg_reuse_release_all(tree);
	netagg_super_cache_free(&tree->scache);
	netagg_stats_free(&tree->stats);
	kvfree(tree->inputs);
	kvfree(tree->data);
	kvfree(tree->slots);
	kfree(tree);
	atomic_dec(&netagg_objects);
}

static void netagg_tree_free_rcu(struct rcu_head *rcu)
{
	netagg_tree_free(container_of(rcu, struct netagg_tree, rcu));
}

static void netagg_job_free_rcu(struct rcu_head *rcu)
{
	struct netagg_job *job = container_of(rcu, struct netagg_job, rcu);

	netagg_stats_free(&job->stats);
	kfree_sensitive(job);
	atomic_dec(&netagg_objects);
}

/**
 * netagg_job_create() - Create a job in a namespace.
 * @nn: the namespace's netagg state, its config lock held
 * @cfg: the job
 * @extack: why it was refused
 *
 * Return: 0, or -EEXIST, -ENOSPC, -EINVAL or -ENOMEM with the reason in
 * @extack.
 */
int netagg_job_create(struct netagg_net *nn, const struct netagg_job_cfg *cfg,
		      struct netlink_ext_ack *extack)
{
	struct netagg_job *job;
	int err;

	lockdep_assert_held(&nn->lock);
	if (xa_load(&nn->jobs, cfg->jid)) {
		NL_SET_ERR_MSG(extack, "job already exists");
		return -EEXIST;
	}
	if (nn->num_jobs >= nn->max_jobs) {
		NL_SET_ERR_MSG(extack, "job cap of this namespace reached");
		return -ENOSPC;
	}
	if (netagg_tree_mem(cfg->window, cfg->mtu, cfg->dtype, 1) > cfg->mem_cap) {
		NL_SET_ERR_MSG(extack,
			       "memory cap is below what one tree needs (window x mtu)");
		return -EINVAL;
	}

	job = kzalloc(sizeof(*job), GFP_KERNEL_ACCOUNT);
	if (!job) {
		NL_SET_ERR_MSG(extack, "no memory for the job");
		return -ENOMEM;
	}
	job->nn = nn;
	job->jid = cfg->jid;
	job->dtype = cfg->dtype;
	job->op = cfg->op;
	job->window = cfg->window;
	job->mtu = cfg->mtu;
	job->mem_cap = cfg->mem_cap;
	if (cfg->key) {
		netagg_tag_key_init(&job->key, cfg->key);
		job->keyed = true;
	}
	job->payload_max = netagg_payload_max(cfg->mtu, AF_INET, job->keyed);
	err = netagg_stats_init(&job->stats);
	if (err) {
		NL_SET_ERR_MSG(extack, "no memory for the job's counters");
		goto free_job;
	}
	/* Not -EBUSY: the JID was checked free under the same lock. */
	err = xa_insert(&nn->jobs, cfg->jid, job, GFP_KERNEL_ACCOUNT);
	if (err) {
		NL_SET_ERR_MSG(extack, "no memory to index the job");
		goto free_stats;
	}
	rcu_assign_pointer(*netagg_job_cache_place(nn, job->jid), job);
	nn->num_jobs++;
	atomic_inc(&netagg_objects);
	return 0;

free_stats:
	netagg_stats_free(&job->stats);
free_job:
	kfree_sensitive(job);
	return err;
}

static void netagg_tree_unlink(struct netagg_job *job, struct netagg_tree *tree)
{
	/* Wait for their runs: the callbacks use the tree and the job. */
	timer_shutdown_sync(&tree->straggler_timer);
	timer_shutdown_sync(&tree->watch_timer);
	RCU_INIT_POINTER(job->trees[tree->tid], NULL);
	job->mem_used -= tree->mem;
	job->nn->mem_used -= tree->mem;
	/* Packets may still be summing into it: free after they are done. */
	call_rcu(&tree->rcu, netagg_tree_free_rcu);
}

/**
 * netagg_job_delete() - Delete a job and its trees.
 * @job: the job, its namespace's config lock held
 *
 * Unpublished at once, freed after an RCU grace period.
 */
void netagg_job_delete(struct netagg_job *job)
{
	struct netagg_net *nn = job->nn;
	struct netagg_job __rcu **cached;
	struct netagg_tree *tree;
	int tid;

	/* Left empty: another job of this place is found in the xarray. */
	cached = netagg_job_cache_place(nn, job->jid);
	if (rcu_access_pointer(*cached) == job)
		RCU_INIT_POINTER(*cached, NULL);
	xa_erase(&nn->jobs, job->jid);
	nn->num_jobs--;
	for (tid = 0; tid < NETAGG_TREES_MAX; tid++) {
		tree = netagg_tree_locked(job, tid);
		if (tree)
			netagg_tree_unlink(job, tree);
	}
	call_rcu(&job->rcu, netagg_job_free_rcu);
}

/**
 * netagg_jobs_flush() - Delete every job of a namespace.
 * @nn: the namespace's netagg state, its config lock held
 */
void netagg_jobs_flush(struct netagg_net *nn)
{
	struct netagg_job *job;
	unsigned long jid;

	lockdep_assert_held(&nn->lock);
	xa_for_each(&nn->jobs, jid, job)
		netagg_job_delete(job);
}

/*
 * A quorum counted in children, the one @cfg gives or else the tree's
 * (@old), must be met by the @n children the tree will have.
 */
static int netagg_quorum_check(const struct netagg_tree_cfg *cfg, u16 old,
			       unsigned int n, struct netlink_ext_ack *extack)
{
	if ((cfg->set_quorum ? cfg->quorum : old) <= n)
		return 0;
	if (cfg->set_quorum)
		NL_SET_ERR_MSG(extack, "quorum exceeds the tree's children");
	else
		NL_SET_ERR_MSG(extack,
			       "the tree's quorum exceeds the children: set a quorum too");
	return -EINVAL;
}

/*
 * The quorum, straggler delay and eviction time of @cfg, those given;
 * under the tree's lock.
 */
static void netagg_tree_options_apply(struct netagg_tree *tree,
				      const struct netagg_tree_cfg *cfg)
{
	if (cfg->set_quorum) {
		tree->quorum = cfg->quorum;
		tree->quorum_pct = cfg->quorum_pct;
	}
	if (cfg->set_straggler) {
		tree->straggler_ms = cfg->straggler_ms;
		tree->straggler = msecs_to_jiffies(cfg->straggler_ms);
	}
	if (cfg->set_evict) {
		tree->evict_ms = cfg->evict_ms;
		tree->evict = msecs_to_jiffies(cfg->evict_ms);
	}
}

/**
 * netagg_tree_create() - Create a tree of a job.
 * @job: the job, the namespace's config lock held
 * @cfg: the tree
 * @extack: why it was refused
 *
 * Every byte the tree will use is allocated here, and charged.
 *
 * Return: 0, or a negative errno with the reason in @extack.
 */
int netagg_tree_create(struct netagg_job *job, const struct netagg_tree_cfg *cfg,
		       struct netlink_ext_ack *extack)
{
	struct netagg_net *nn = job->nn;
	struct netagg_tree *tree;
	u64 mem;
	int err;

	lockdep_assert_held(&nn->lock);
	if (netagg_tree_locked(job, cfg->tid)) {
		NL_SET_ERR_MSG(extack, "tree already exists in this job");
		return -EEXIST;
	}
	err = netagg_tree_check(cfg->role, 0, &cfg->parent, cfg->children,
				cfg->n_children, extack) ?:
	      netagg_quorum_check(cfg, 0, cfg->n_children, extack);
	if (err)
		return err;
	mem = netagg_tree_mem(job->window, job->mtu, job->dtype,
			      cfg->n_children);
	err = netagg_mem_check(job, mem, extack);
	if (err)
		return err;

	tree = kzalloc(sizeof(*tree), GFP_KERNEL_ACCOUNT);
	if (!tree) {
		NL_SET_ERR_MSG(extack, "no memory for the tree");
		return -ENOMEM;
	}
	spin_lock_init(&tree->lock);
	timer_setup(&tree->straggler_timer, netagg_tree_straggler, 0);
	timer_setup(&tree->watch_timer, netagg_tree_watch, 0);
	tree->job = job;
	netagg_tree_options_apply(tree, cfg);
	tree->tid = cfg->tid;
	tree->role = cfg->role;
	tree->family = netagg_addr_family(&cfg->children[0].addr);
	tree->payload_max = netagg_payload_max(job->mtu, tree->family,
					       job->keyed);
	tree->parent = cfg->parent;
	tree->parent_heard = jiffies;
	netagg_win_init(&tree->win, job->window);
	tree->stride = netagg_stride(job->mtu, job->dtype);
	tree->held_max = netagg_reuse_budget(job->window, job->mtu,
					     cfg->n_children);
	tree->mem = mem;
	/* Sized by the request: its failure is an answer, not a warning. */
	tree->slots = kvcalloc(tree->win.ring, sizeof(*tree->slots),
			       GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	tree->data = kvzalloc((size_t)tree->win.ring * tree->stride,
			      GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	tree->inputs = kvcalloc((size_t)job->window * NETAGG_CHILDREN_MAX,
				sizeof(*tree->inputs),
				GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!tree->slots || !tree->data || !tree->inputs) {
		NL_SET_ERR_MSG(extack, "no memory for the tree's window");
		err = -ENOMEM;
		goto free;
	}
	err = netagg_stats_init(&tree->stats);
	if (err) {
		NL_SET_ERR_MSG(extack, "no memory for the tree's counters");
		goto free;
	}
	err = netagg_tree_assign(tree, &cfg->parent, cfg->children,
				 cfg->n_children, extack);
	if (err) {
		netagg_stats_free(&tree->stats);
		goto free;
	}

	job->mem_used += mem;
	nn->mem_used += mem;
	atomic_inc(&netagg_objects);
	rcu_assign_pointer(job->trees[cfg->tid], tree);
	return 0;

free:
	kvfree(tree->inputs);
	kvfree(tree->data);
	kvfree(tree->slots);
	kfree(tree);
	return err;
}

/* netagg_tree_update() but for the slots it makes ready. */
static int netagg_tree_change(struct netagg_job *job, struct netagg_tree *tree,
			      const struct netagg_tree_cfg *cfg,
			      struct netlink_ext_ack *extack)
{
	const struct netagg_child *children = cfg->children;
	struct netagg_child *members = NULL;
	struct in6_addr parent;
	unsigned int n;
	u64 mem;
	int err;

	if (!cfg->set_parent && !cfg->set_children && !cfg->set_quorum &&
	    !cfg->set_straggler && !cfg->set_evict) {
		NL_SET_ERR_MSG(extack,
			       "nothing to change: give a parent, children, a quorum, a straggler delay or an eviction time");
		return -EINVAL;
	}

	/*
	 * Check the tree as it will be, the unchanged parts as they are:
	 * its members, evicted ones too, change only here.
	 */
	if (cfg->set_children) {
		n = cfg->n_children;
	} else {
		/* Too big for the stack, with IPv6 addresses. */
		members = kmalloc_array(NETAGG_CHILDREN_MAX, sizeof(*members),
					GFP_KERNEL);
		if (!members) {
			NL_SET_ERR_MSG(extack, "no memory to change the tree");
			return -ENOMEM;
		}
		spin_lock_bh(&tree->lock);
		n = netagg_tree_members(tree, members);
		spin_unlock_bh(&tree->lock);
		children = members;
	}
	parent = cfg->set_parent ? cfg->parent : tree->parent;
	err = netagg_tree_check(tree->role, tree->family, &parent, children,
				n, extack) ?:
	      netagg_quorum_check(cfg, tree->quorum, n, extack);
	kfree(members);
	if (err)
		return err;
	if (!cfg->set_parent && !cfg->set_children) {
		spin_lock_bh(&tree->lock);
		netagg_tree_options_apply(tree, cfg);
		spin_unlock_bh(&tree->lock);
		return 0;
	}
	/* Its packet budget follows the number of children. */
	mem = netagg_tree_mem(job->window, job->mtu, job->dtype, n);
	if (mem > tree->mem) {
		err = netagg_mem_check(job, mem - tree->mem, extack);
		if (err)
			return err;
	}

	err = netagg_tree_assign(tree, &parent,
				 cfg->set_children ? cfg->children : NULL, n,
				 extack);
	if (err)
		return err;
	job->mem_used = job->mem_used - tree->mem + mem;
	job->nn->mem_used = job->nn->mem_used - tree->mem + mem;
	tree->mem = mem;
	/* What is held over a smaller budget goes as its slots complete. */
	spin_lock_bh(&tree->lock);
	tree->held_max = netagg_reuse_budget(job->window, job->mtu, n);
	netagg_tree_options_apply(tree, cfg);
	spin_unlock_bh(&tree->lock);
	return 0;
}

/**
 * netagg_tree_update() - Change a tree while it runs (tree set).
 * @job: the job, the namespace's config lock held
 * @cfg: what changes: children, parent, quorum, straggler, eviction
 * @extack: why it was refused
 *
 * Slots that were waiting only for a child removed, or for more than the
 * quorum now asked, are complete after it: no packet may come to complete
 * them if every other child waits for their results.
 *
 * Return: 0, or a negative errno with the reason in @extack.
 */
int netagg_tree_update(struct netagg_job *job, const struct netagg_tree_cfg *cfg,
		       struct netlink_ext_ack *extack)
{
	struct netagg_tree *tree = netagg_tree_get(job, cfg->tid, extack);
	int err;

	if (!tree)
		return -ENOENT;
	err = netagg_tree_change(job, tree, cfg, extack);
	if (!err)
		netagg_tree_kick(job->nn->net, job, tree);
	return err;
}

/**
 * netagg_tree_delete() - Delete a tree of a job.
 * @job: the job, the namespace's config lock held
 * @tid: the tree
 * @extack: why it was refused
 *
 * Return: 0, or -ENOENT.
 */
int netagg_tree_delete(struct netagg_job *job, u16 tid,
		       struct netlink_ext_ack *extack)
{
	struct netagg_tree *tree = netagg_tree_get(job, tid, extack);

	if (!tree)
		return -ENOENT;
	netagg_tree_unlink(job, tree);
	return 0;
}

/**
 * netagg_tree_reset() - Forget every round, sum and kept result of a tree.
 * @tree: the tree, its lock not held
 *
 * The next contribution starts a round whatever its number. Evicted children
 * are back, their silence and the parent's counted from now.
 */
void netagg_tree_reset(struct netagg_tree *tree)
{
	unsigned long now = jiffies;
	int bit;

	spin_lock_bh(&tree->lock);
	tree->bitmap |= tree->evicted;
	tree->evicted = 0;
	tree->rejoin = 0;
	for (bit = 0; bit < NETAGG_CHILDREN_MAX; bit++)
		tree->heard[bit] = now;
	tree->parent_heard = now;
	tree->parent_lost = false;
	netagg_win_reset(&tree->win);
	tree->regrouped = false;
	netagg_reuse_release_all(tree);
	memset(tree->slots, 0, tree->win.ring * sizeof(*tree->slots));
	/* No slot holds a contribution now: removed children's bits are free. */
	for (; tree->retired; tree->retired &= tree->retired - 1)
		tree->children[__ffs64(tree->retired)] = (struct netagg_child) {};
	netagg_tree_order(tree);
	spin_unlock_bh(&tree->lock);
	netagg_stats_reset(&tree->stats);
}

/**
 * netagg_job_reset() - Reset every tree of a job, and its counters.
 * @job: the job, the namespace's config lock held
 */
void netagg_job_reset(struct netagg_job *job)
{
	struct netagg_tree *tree;
	int tid;

	for (tid = 0; tid < NETAGG_TREES_MAX; tid++) {
		tree = netagg_tree_locked(job, tid);
		if (tree)
			netagg_tree_reset(tree);
	}
	netagg_stats_reset(&job->stats);
}

/**
 * netagg_job_leak_check() - Warn if a job or tree is still alive.
 *
 * At module unload, after rcu_barrier(): every object must be gone.
 */
void netagg_job_leak_check(void)
{
	int n = atomic_read(&netagg_objects);

	WARN(n, "netagg: %d jobs or trees leaked\n", n);
}

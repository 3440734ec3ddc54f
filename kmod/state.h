/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the module keeps: a namespace's state, its jobs, their trees, a
 * tree's slots, inputs and children. Types and the accessors inline on
 * them, nothing of a .c file: every file that works on them includes
 * this, and the functions on them are declared by the file that has them
 * (job.h: created, changed, deleted; agg.h: a packet's way).
 */
#ifndef _NETAGG_STATE_H
#define _NETAGG_STATE_H

#include <linux/hash.h>
#include <linux/mutex.h>
#include <linux/netfilter.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/xarray.h>
#include <linux/netagg.h>
#include "addr.h"
#include "route.h"
#include "stats.h"
#include "super.h"
#include "tag.h"
#include "window.h"

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
	u8 dscp;			/* that marks aggregation packets */
	__be16 port;			/* their UDP port; both set under lock,
					 * READ_ONCE() on the packet path
					 */
	struct netagg_stats stats;	/* what the hook recognised */
	struct nf_hook_ops hook_ops[2];	/* IPv4's, IPv6's */
	bool exiting;			/* going away: XDP frames pass */
};

/* Where the job of @jid is cached, if it is. */
static inline struct netagg_job __rcu **
netagg_job_cache_place(struct netagg_net *nn, u32 jid)
{
	return &nn->job_cache[jid % NETAGG_JOB_CACHE];
}

/*
 * One VID of a tree: its sum, then its result, and who is in it (@ws, the
 * window core's part), and what the module keeps beside.
 */
struct netagg_slot {
	struct netagg_win_slot ws;
	u8 ecn;			/* ECN of the inputs, merged */
	bool partial;		/* completed by its quorum, not every child */
	unsigned long quorum_at;	/* jiffies | 1 when the quorum was in,
					 * 0 before
					 */
	unsigned long since;	/* jiffies it took its state: its first
				 * contribution came, or its sum went up
				 */
	struct sk_buff *held;	/* packets kept whole: contributions, then
				 * carriers of the result back
				 */
};

/*
 * A child's contribution to a VID, kept until the VID completes: its
 * payload, in a packet of the slot's held list, or in one it holds a
 * reference to (@pin: a super-packet or a clone, shared), charged @charge
 * bytes of the tree's held ones.
 */
struct netagg_input {
	const void *data;
	struct sk_buff *pin;
	u32 charge;
};

/*
 * A child: the address its packets come from and, if it has one, the UDP
 * port (several workers behind one address, each a child by its port; 0:
 * any port). An address is listed either once without a port or only with
 * ports, so the first entry that matches a packet is its child.
 */
struct netagg_child {
	struct in6_addr addr;	/* addr.h: IPv4 ones IPv4-mapped */
	__be16 port;
};

static inline bool netagg_child_eq(const struct netagg_child *a,
				   const struct netagg_child *b)
{
	return ipv6_addr_equal(&a->addr, &b->addr) && a->port == b->port;
}

/*
 * Children are found by address in an open-addressed table of their bits,
 * at most half full, so a packet's lookup costs the same whatever the
 * fan-in: entries are bit + 1, 0 is empty. Children of one address hash
 * alike: a lookup goes on past those whose port is not the packet's.
 */
#define NETAGG_CHILD_HASH_BITS	7
#define NETAGG_CHILD_HASH	(1 << NETAGG_CHILD_HASH_BITS)
static_assert(NETAGG_CHILD_HASH >= 2 * NETAGG_CHILDREN_MAX);

static inline u32 netagg_child_hash(const struct in6_addr *addr)
{
	return netagg_addr_hash(addr, NETAGG_CHILD_HASH_BITS);
}

struct netagg_tree {
	struct rcu_head rcu;
	u16 tid;
	u8 role;
	/* AF_INET or AF_INET6: its parent's and children's, set at creation. */
	u8 family;
	/* The largest payload its packets can carry, at the family's MTU. */
	u32 payload_max;
	/* Aggregation state; children and parent change under it too. */
	spinlock_t lock;
	struct in6_addr parent;		/* :: for a root */
	u64 bitmap;			/* bits of children[] in use */
	/*
	 * Bits of children removed whose contributions slots still hold:
	 * no other address may take them (tree set), the same may again.
	 */
	u64 retired;
	struct netagg_child children[NETAGG_CHILDREN_MAX];	/* of bitmap and
								 * retired
								 */
	u8 child_index[NETAGG_CHILD_HASH];
	/* Results go back to the port each child last sent from. */
	__be16 child_port[NETAGG_CHILDREN_MAX];
	struct netagg_routes __rcu *routes;	/* replaced under lock */
	/* The rounds and the ring of slots (window.h). */
	struct netagg_window win;
	bool regrouped;			/* the round's sums from now on carry
					 * NETAGG_F_REGROUPED
					 */
	u32 stride;			/* bytes between slot payloads */
	struct netagg_slot *slots;	/* ring of them */
	void *data;			/* ring * stride bytes of sums */
	/* window * NETAGG_CHILDREN_MAX: netagg_slot_inputs() */
	struct netagg_input *inputs;
	/*
	 * The order sums are made in: children's bits by address, then
	 * port (those of bitmap, evicted and retired).
	 */
	u8 order[NETAGG_CHILDREN_MAX];
	u8 norder;
	u64 held;			/* bytes of the packets kept */
	u64 held_max;			/* what they may reach with results
					 * kept to carry (aggregators)
					 */
	u64 mem;			/* bytes accounted to the job */
	/* Partial aggregation: a VID completes with quorum children in. */
	u16 quorum;			/* children, 0: every child */
	u8 quorum_pct;			/* or this share of them, 0: unset */
	u32 straggler_ms;		/* wait for the rest after the quorum */
	unsigned long straggler;	/* the same in jiffies */
	struct timer_list straggler_timer;	/* the head VID's wait */
	struct netagg_job *job;		/* its job, for the timers */
	/* Failure handling (timers.c). */
	u32 evict_ms;			/* evict a child silent this long */
	unsigned long evict;		/* the same in jiffies, 0: never */
	u64 evicted;			/* bits of children evicted: known,
					 * not in bitmap
					 */
	u64 rejoin;			/* of those, heard from since: back at
					 * the next round
					 */
	unsigned long heard[NETAGG_CHILDREN_MAX];	/* jiffies of each
							 * child's last packet
							 */
	unsigned long parent_heard;	/* of the parent's last result */
	bool parent_lost;		/* reported, until it answers */
	struct timer_list watch_timer;
	/* Pages its super-packets are gathered in, under lock. */
	struct netagg_super_cache scache;
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
	bool keyed;
	struct netagg_tag_key key;	/* never in a reply; zeroed with the
					 * job (kfree_sensitive())
					 */
};

/*
 * A slot's kept contributions, indexed by child bit. Only the window's
 * slots keep any, one slot for each position modulo the window: two slots
 * a window apart share their inputs, the later one summing while the
 * earlier one keeps its result.
 */
static inline struct netagg_input *
netagg_slot_inputs(const struct netagg_tree *tree,
		   const struct netagg_slot *slot)
{
	return tree->inputs + ((slot - tree->slots) % tree->win.window) *
			      NETAGG_CHILDREN_MAX;
}

/* The slot's sum or result: its payload in the tree's ring of them. */
static inline void *netagg_slot_data(const struct netagg_tree *tree,
				     const struct netagg_slot *slot)
{
	return tree->data + (slot - tree->slots) * tree->stride;
}

static inline unsigned int netagg_slot_len(const struct netagg_job *job,
					   const struct netagg_slot *slot)
{
	return slot->ws.count * netagg_dtype_size(job->dtype);
}

/* The tree's routes: under its lock, which every change of them takes. */
static inline struct netagg_routes *
netagg_tree_routes(struct netagg_tree *tree)
{
	return rcu_dereference_check(tree->routes,
				     lockdep_is_held(&tree->lock));
}

/* From now on the round's sums and results say its workers changed. */
static inline void netagg_tree_regroup(struct netagg_tree *tree)
{
	if (tree->regrouped)
		return;
	tree->regrouped = true;
	netagg_stats_inc(&tree->stats, NETAGG_STAT_REGROUPED);
}

/*
 * Something of @tree waits and is to be looked at by @due: the head VID
 * for its missing children, or a sum sent up for the parent's result. An
 * earlier run is kept (timer_reduce() then costs a compare, no lock): it
 * looks at everything and sets the next. Under the tree's lock, as the
 * run is, so that the two are in order.
 */
static inline void netagg_watch_arm(struct netagg_tree *tree,
				    unsigned long due)
{
	timer_reduce(&tree->watch_timer, due);
}

#endif /* _NETAGG_STATE_H */

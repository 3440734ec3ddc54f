// SPDX-License-Identifier: GPL-2.0
/*
 * A tree's members: who its parent and children are, the bits its
 * children are known by in every slot they contributed to, the order
 * their contributions are summed in, and what a change of them does to
 * the round under way. job.c creates and changes a tree through these,
 * under the namespace's config lock; the eviction timer (timers.c) takes
 * a child out through them, in softirq. Bits and order change under the
 * tree's lock, where no packet can set a bit.
 */

#include <linux/bitops.h>
#include <linux/jiffies.h>
#include <linux/netlink.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "state.h"
#include "membership.h"

/**
 * netagg_tree_check() - Check a tree's shape.
 * @role: the tree's role
 * @family: the tree's family, 0 for a new tree
 * @parent: its parent, :: for none
 * @children: its children
 * @n_children: how many
 * @extack: why it was refused
 *
 * A root has no parent, an aggregator has one, there is at least one
 * child, and the parent is not among the children. Its addresses are all
 * of one family, @family if the tree has one already (0: a new tree, whose
 * first child's is its own): a worker sizes its packets for its first
 * hop's family, and they keep their size up the tree.
 *
 * Return: 0, or -EINVAL with the reason in @extack.
 */
int netagg_tree_check(u8 role, int family, const struct in6_addr *parent,
		      const struct netagg_child *children, unsigned int n_children,
		      struct netlink_ext_ack *extack)
{
	bool has_parent = netagg_addr_set(parent);
	unsigned int i;

	if (role == NETAGG_ROLE_ROOT && has_parent) {
		NL_SET_ERR_MSG(extack, "a root has no parent");
		return -EINVAL;
	}
	if (role == NETAGG_ROLE_AGGREGATOR && !has_parent) {
		NL_SET_ERR_MSG(extack, "an aggregator needs a parent");
		return -EINVAL;
	}
	if (!n_children) {
		NL_SET_ERR_MSG(extack, "a tree needs at least one child");
		return -EINVAL;
	}
	if (!family)
		family = netagg_addr_family(&children[0].addr);
	for (i = 0; i < n_children; i++) {
		if (ipv6_addr_equal(&children[i].addr, parent)) {
			NL_SET_ERR_MSG(extack, "the parent cannot also be a child");
			return -EINVAL;
		}
		if (netagg_addr_family(&children[i].addr) != family)
			break;
	}
	if (i < n_children ||
	    (has_parent && netagg_addr_family(parent) != family)) {
		if (family == AF_INET)
			NL_SET_ERR_MSG(extack,
				       "the tree is IPv4: its parent and children are all IPv4 addresses (an IPv6 tree for IPv6 ones)");
		else
			NL_SET_ERR_MSG(extack,
				       "the tree is IPv6: its parent and children are all IPv6 addresses (an IPv4 tree for IPv4 ones)");
		return -EINVAL;
	}
	return 0;
}

/**
 * netagg_tree_members() - The tree's children, evicted ones too, in bit order.
 * @tree: the tree, its lock held
 * @list: where to put them, NETAGG_CHILDREN_MAX of them
 *
 * Return: how many.
 */
unsigned int netagg_tree_members(const struct netagg_tree *tree,
				 struct netagg_child *list)
{
	unsigned int n = 0;
	u64 b;

	for (b = tree->bitmap | tree->evicted; b; b &= b - 1)
		list[n++] = tree->children[__ffs64(b)];
	return n;
}

/* Whether child @a comes before @b in sums: by address, then port. */
static bool netagg_child_before(const struct netagg_child *a,
				const struct netagg_child *b)
{
	int cmp = netagg_addr_cmp(&a->addr, &b->addr);

	if (cmp)
		return cmp < 0;
	return ntohs(a->port) < ntohs(b->port);
}

/**
 * netagg_tree_order() - Set the order the tree sums contributions in.
 * @tree: the tree, its lock held
 *
 * The order of linux/netagg.h: every bit a slot may hold, by address, then
 * port.
 */
void netagg_tree_order(struct netagg_tree *tree)
{
	unsigned int n = 0, i;
	u64 b;
	u8 bit;

	for (b = tree->bitmap | tree->evicted | tree->retired; b; b &= b - 1) {
		bit = __ffs64(b);
		for (i = n; i && netagg_child_before(&tree->children[bit],
						     &tree->children[tree->order[i - 1]]);
		     i--)
			tree->order[i] = tree->order[i - 1];
		tree->order[i] = bit;
		n++;
	}
	tree->norder = n;
}

/**
 * netagg_tree_held() - Child bits that slots can still be asked about.
 * @tree: the tree, its lock held
 * @filling: set to the bits of those sums not yet complete
 *
 * Of the VIDs being summed and of the results kept behind them: all
 * netagg_contribution() and netagg_kept() can reach.
 *
 * Return: the bits of every child whose contribution a reachable slot holds.
 */
u64 netagg_tree_held(const struct netagg_tree *tree, u64 *filling)
{
	const struct netagg_win_slot *ws;
	u64 held = 0;
	u32 i;

	*filling = 0;
	for (i = 0; i < tree->win.ring; i++) {
		ws = &tree->slots[i].ws;
		if (ws->state == NETAGG_SLOT_FREE)
			continue;
		switch (netagg_win_reach(&tree->win, ws->pos)) {
		case NETAGG_WIN_IN:
			held |= ws->seen;
			if (ws->state == NETAGG_SLOT_FILLING)
				*filling |= ws->seen;
			break;
		case NETAGG_WIN_BEHIND:
			held |= ws->seen;
			break;
		case NETAGG_WIN_GONE:
			break;
		}
	}
	return held;
}

/**
 * netagg_tree_changed() - Tree set changed the children or the parent.
 * @tree: the tree, its lock held
 * @removed: the bits of the children that left
 * @filling: netagg_tree_held()'s, from before the change
 *
 * If the round under way already made sums with the old ones, or a sum still
 * to complete holds a contribution of a child that left, its results will not
 * all sum one set of workers: the round is marked regrouped.
 */
void netagg_tree_changed(struct netagg_tree *tree, u64 removed, u64 filling)
{
	if (netagg_win_live(&tree->win) &&
	    (tree->win.expected_vid || (filling & removed)))
		netagg_tree_regroup(tree);
}

/**
 * netagg_tree_assign() - Install a parent and a child list.
 * @tree: the tree, its lock not held
 * @parent: the parent, :: for none
 * @list: the children, or NULL: the children as they are, evicted ones
 *	staying so
 * @n: how many
 * @extack: why it was refused
 *
 * With routes for them. A bit names a child in the seen bitmap of every
 * slot it contributed to, so a bit never names two addresses while a slot
 * that can still be reached holds it: children that stay keep their bit; a
 * child removed keeps its bit, retired, and gets it back if added again; a
 * new child takes a bit no such slot holds. Else a new child would be taken
 * for having contributed what the old one did. The bits are chosen under
 * the tree's lock, where no packet can set one. A list given is the tree's
 * children as they will be: an evicted child in it is back.
 *
 * Return: 0, or -ENOMEM or -EBUSY (no bit free) with the reason in @extack,
 * changing nothing.
 */
int netagg_tree_assign(struct netagg_tree *tree, const struct in6_addr *parent,
		       const struct netagg_child *list, unsigned int n,
		       struct netlink_ext_ack *extack)
{
	/* Too big for the stack, with IPv6 addresses: 2.5 KiB. */
	struct {
		struct netagg_child children[NETAGG_CHILDREN_MAX];
		struct netagg_child same[NETAGG_CHILDREN_MAX];
	} *scratch;
	struct netagg_child *children;
	u8 index[NETAGG_CHILD_HASH] = {};
	u8 bits[NETAGG_CHILDREN_MAX];
	struct netagg_routes *routes, *old;
	u64 bitmap = 0, kept, held, filling, known, free, retired, evicted = 0;
	unsigned long now = jiffies;
	const struct netagg_child *addrs = list;
	bool new_parent;
	unsigned int i, bit;
	u64 b;
	u32 h;

	scratch = kzalloc(sizeof(*scratch), GFP_KERNEL);
	/* Only configuration, serialised with this, changes how many. */
	routes = scratch ? netagg_routes_alloc(netagg_addr_set(parent), n) :
			   NULL;
	if (!routes) {
		kfree(scratch);
		NL_SET_ERR_MSG(extack, "no memory for the tree's routes");
		return -ENOMEM;
	}
	children = scratch->children;

	spin_lock_bh(&tree->lock);
	if (!list) {
		addrs = scratch->same;
		netagg_tree_members(tree, scratch->same);
		evicted = tree->evicted;
	}
	held = netagg_tree_held(tree, &filling);
	known = tree->bitmap | tree->retired | tree->evicted;
	for (i = 0; i < n; i++) {
		bits[i] = NETAGG_CHILDREN_MAX;
		for (b = known; b; b &= b - 1) {
			bit = __ffs64(b);
			if (netagg_child_eq(&tree->children[bit], &addrs[i])) {
				bits[i] = bit;
				bitmap |= BIT_ULL(bit);
				break;
			}
		}
	}
	kept = bitmap & tree->bitmap;
	free = ~(bitmap | held);
	for (i = 0; i < n; i++) {
		if (bits[i] < NETAGG_CHILDREN_MAX)
			continue;
		if (!free) {
			spin_unlock_bh(&tree->lock);
			netagg_routes_free(routes);
			kfree(scratch);
			NL_SET_ERR_MSG(extack,
				       "no child bit free: removed children's are held by VIDs in flight or kept (reset the tree to free them)");
			return -EBUSY;
		}
		bit = __ffs64(free);
		free &= free - 1;
		bits[i] = bit;
		bitmap |= BIT_ULL(bit);
	}
	/* held only ever has bits of children: all known. */
	retired = held & ~bitmap;
	for (b = retired; b; b &= b - 1)
		children[__ffs64(b)] = tree->children[__ffs64(b)];
	for (i = 0; i < n; i++) {
		children[bits[i]] = addrs[i];
		h = netagg_child_hash(&addrs[i].addr);
		while (index[h])
			h = (h + 1) % NETAGG_CHILD_HASH;
		index[h] = bits[i] + 1;
	}
	netagg_routes_place(routes, bits, n);

	/* Those kept evicted are known by the same bits: still out. */
	bitmap &= ~evicted;
	/* A bit that was free may have gone to another address: not kept. */
	new_parent = !ipv6_addr_equal(parent, &tree->parent);
	if (bitmap != kept || tree->bitmap != kept || new_parent)
		netagg_tree_changed(tree, tree->bitmap & ~kept, filling);
	/* New members' silence counts from now, as the parent's. */
	for (b = bitmap & ~kept; b; b &= b - 1)
		tree->heard[__ffs64(b)] = now;
	if (new_parent) {
		tree->parent_heard = now;
		tree->parent_lost = false;
	}
	memcpy(tree->children, children, sizeof(scratch->children));
	memcpy(tree->child_index, index, sizeof(index));
	tree->bitmap = bitmap;
	tree->evicted = evicted;
	tree->rejoin &= evicted;
	tree->retired = retired;
	tree->parent = *parent;
	netagg_tree_order(tree);
	old = rcu_replace_pointer(tree->routes, routes,
				  lockdep_is_held(&tree->lock));
	spin_unlock_bh(&tree->lock);
	if (old)
		call_rcu(&old->rcu, netagg_routes_free_rcu);
	kfree(scratch);
	return 0;
}

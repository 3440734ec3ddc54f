// SPDX-License-Identifier: GPL-2.0
/*
 * Received packets reused to carry what a node sends. A result goes back to
 * exactly the children that contributed, in packets of the same size, so
 * the contributions themselves can carry it: a slot holds each child's
 * packet until the result is known, and each is rewritten and sent back to
 * its sender. Like forwarding, that costs no allocation and no free per
 * packet. The packet just received can carry a sum up or a resend too.
 *
 * A packet is reused only when it is the node's alone to write: not cloned
 * (a tap may read the clone), linear, not GSO, not from the emergency
 * reserves. What a tree holds is bounded by a budget charged at tree add
 * and again at tree set; over it, the packet is freed and its result gets
 * a new one.
 */

#include <linux/log2.h>
#include <linux/moduleparam.h>
#include <linux/skbuff.h>
#include "job.h"
#include "reuse.h"

/* A held packet's cb: whose it is and what it counts against the tree. */
struct netagg_reuse_cb {
	u32 truesize;
	u8 bit;
};

#define NETAGG_REUSE_CB(skb) ((struct netagg_reuse_cb *)(skb)->cb)

/* Off, every packet sent is a new one: what reuse saves can be measured. */
static bool reuse = true;
module_param(reuse, bool, 0444);
MODULE_PARM_DESC(reuse, "send in the packets received where possible (default: yes)");

/*
 * A tree holds at most one packet per child for each VID of the window.
 * Packets of the job's MTU come in buffers of a power of two (kmalloc,
 * page fragments): so many of those, up to a limit per tree; past it, the
 * results that find no packet held go out in new ones.
 */
#define NETAGG_REUSE_TREE_MAX	(4ULL << 20)

/**
 * netagg_reuse_budget() - Bytes of packets a tree may hold.
 * @window: the job's window
 * @mtu: the job's MTU
 * @children: the tree's children
 *
 * One packet per child for each VID of the window, each in a buffer of a
 * power of two, up to a limit per tree.
 *
 * Return: the budget, 0 with reuse off.
 */
u64 netagg_reuse_budget(u32 window, u32 mtu, unsigned int children)
{
	if (!reuse)
		return 0;
	return min_t(u64, (u64)window * children *
			  SKB_TRUESIZE(roundup_pow_of_two(mtu)),
		     NETAGG_REUSE_TREE_MAX);
}

static bool netagg_reusable(const struct sk_buff *skb)
{
	return reuse && !skb_cloned(skb) && !skb_is_nonlinear(skb) &&
	       !skb_is_gso(skb) && !skb_pfmemalloc(skb);
}

/**
 * netagg_reuse_claim() - Take the packet received to carry a payload.
 * @in: the packet received; set to NULL when it is taken
 * @pkt: what the hook read of it
 * @len: bytes of payload it is to carry
 *
 * Stripped to its netagg header and payload, with the state of its
 * reception cleared as a packet forwarded has it. Its flow hash stays, as a
 * forwarded packet's does: what it carries back is of the same flow, and a
 * receiver steering by the hash (RPS) need not dissect the packet to compute
 * another.
 *
 * Return: the packet, or NULL (and *@in left) if it cannot be written or is
 * not that size.
 */
struct sk_buff *netagg_reuse_claim(struct sk_buff **in,
				   const struct netagg_pkt *pkt,
				   unsigned int len)
{
	struct sk_buff *skb = *in;

	BUILD_BUG_ON(sizeof(struct netagg_reuse_cb) > sizeof(skb->cb));
	if (!skb || pkt->len != len || !netagg_reusable(skb))
		return NULL;
	*in = NULL;
	/* The hook sees the packet at its IP header. */
	__skb_pull(skb, skb_network_offset(skb) + pkt->off -
		   sizeof(struct netagg_hdr));
	__skb_trim(skb, sizeof(struct netagg_hdr) + len);
	skb_orphan(skb);
	skb_scrub_packet(skb, false);
	skb_clear_tstamp(skb);
	skb->ip_summed = CHECKSUM_NONE;
	skb->priority = 0;
	skb->mark = 0;
	skb->dev = NULL;
	return skb;
}

/**
 * netagg_reuse_hold() - Keep a child's contribution in its slot.
 * @tree: the tree, its lock held
 * @slot: the slot
 * @bit: the child
 * @in: the contribution; set to NULL when it is kept
 * @pkt: what the hook read of it
 *
 * To carry the slot's result back to the child, if the packet can be reused
 * and the tree's budget has room. Its payload stays where it was.
 *
 * Return: true if kept.
 */
bool netagg_reuse_hold(struct netagg_tree *tree, struct netagg_slot *slot,
		       int bit, struct sk_buff **in,
		       const struct netagg_pkt *pkt)
{
	struct sk_buff *skb = *in;

	if (!skb || tree->held + skb->truesize > tree->held_max)
		return false;
	skb = netagg_reuse_claim(in, pkt, pkt->len);
	if (!skb)
		return false;
	NETAGG_REUSE_CB(skb)->truesize = skb->truesize;
	NETAGG_REUSE_CB(skb)->bit = bit;
	tree->held += skb->truesize;
	skb->next = slot->held;
	slot->held = skb;
	return true;
}

/**
 * netagg_reuse_pop() - One of the packets a slot holds.
 * @tree: the tree, its lock held
 * @slot: the slot
 * @bit: set to the child that sent it
 *
 * Return: the packet, or NULL if the slot holds none.
 */
struct sk_buff *netagg_reuse_pop(struct netagg_tree *tree,
				 struct netagg_slot *slot, int *bit)
{
	struct sk_buff *skb = slot->held;

	if (!skb)
		return NULL;
	slot->held = skb->next;
	skb->next = NULL;
	tree->held -= NETAGG_REUSE_CB(skb)->truesize;
	*bit = NETAGG_REUSE_CB(skb)->bit;
	return skb;
}

/**
 * netagg_reuse_release() - Free the packets a slot holds.
 * @tree: the tree, its lock held
 * @slot: the slot: its result went out in other packets, or never
 */
void netagg_reuse_release(struct netagg_tree *tree, struct netagg_slot *slot)
{
	struct sk_buff *skb;
	int bit;

	while ((skb = netagg_reuse_pop(tree, slot, &bit)))
		kfree_skb(skb);
}

/**
 * netagg_reuse_release_all() - Free the packets every slot holds.
 * @tree: the tree: at reset (its lock held) and when it is freed
 */
void netagg_reuse_release_all(struct netagg_tree *tree)
{
	u32 i;

	for (i = 0; i < tree->win.ring; i++)
		netagg_reuse_release(tree, &tree->slots[i]);
	WARN_ON_ONCE(tree->held);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Received packets kept: each child's contribution until its VID completes,
 * so that the VID is summed in one pass, in the tree's order, whatever the
 * order the contributions came in (complete.c); then, rewritten, to carry the
 * result back to the child that sent it. Like forwarding, that costs no
 * allocation, no free and no copy per packet. The packet just received can
 * carry a sum up or a resend too.
 *
 * A contribution is kept where it lies. A plain packet that is the node's
 * alone to write (not cloned, linear, not GSO, not from the emergency
 * reserves) is kept whole, on its slot's list. One shared (a super-packet's
 * segment, or a clone a tap also reads) is kept by a reference, its payload
 * read in place. Only a payload split across page fragments is copied, into
 * a packet of its own, kept whole; and one of an XDP frame, which is its
 * driver's again once the hook returns.
 *
 * A tree keeps at most one contribution per child for each VID of its
 * window: the VIDs past it are not summed (agg.c), and those of a round
 * given up are let go when the next round starts. So what contributions
 * keep is bounded by the window and the children; it is charged to the tree
 * when it is made and when its children change (job.c). On an aggregator, a
 * packet may then stay to carry the parent's result, within a budget of its
 * own; past it, the result goes out in a new packet.
 */

#include <linux/log2.h>
#include <linux/moduleparam.h>
#include <linux/skbuff.h>
#include "state.h"
#include "reuse.h"
#include "xmit.h"

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
 * Packets of the job's MTU come in buffers of a power of two (kmalloc,
 * page fragments). What results to carry may keep on an aggregator has a
 * limit per tree.
 */
#define NETAGG_REUSE_TREE_MAX	(4ULL << 20)

static u64 netagg_reuse_packets(u32 window, u32 mtu, unsigned int children)
{
	return (u64)window * children * SKB_TRUESIZE(roundup_pow_of_two(mtu));
}

/**
 * netagg_reuse_budget() - Bytes of packets a tree may keep.
 * @window: the job's window
 * @mtu: the job's MTU
 * @children: the tree's children
 *
 * A packet per child for each VID of the window, for the contributions
 * being summed; and, with reuse on, as much again, up to a limit per tree,
 * for the packets that wait on an aggregator to carry the parent's result.
 *
 * Return: the budget.
 */
u64 netagg_reuse_budget(u32 window, u32 mtu, unsigned int children)
{
	u64 packets = netagg_reuse_packets(window, mtu, children);

	if (!reuse)
		return packets;
	return packets + min_t(u64, packets, NETAGG_REUSE_TREE_MAX);
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
	/* A keyed job's tag goes after the payload it carries back. */
	__skb_trim(skb, sizeof(struct netagg_hdr) + len + pkt->tag_len);
	skb_orphan(skb);
	skb_scrub_packet(skb, false);
	skb_clear_tstamp(skb);
	skb->ip_summed = CHECKSUM_NONE;
	skb->priority = 0;
	skb->mark = 0;
	skb->dev = NULL;
	return skb;
}

/* Keep @skb whole on the slot's list, for child @bit. */
static void netagg_reuse_list(struct netagg_tree *tree, struct netagg_slot *slot,
			      int bit, struct sk_buff *skb)
{
	NETAGG_REUSE_CB(skb)->truesize = skb->truesize;
	NETAGG_REUSE_CB(skb)->bit = bit;
	tree->held += skb->truesize;
	skb->next = slot->held;
	slot->held = skb;
}

/**
 * netagg_reuse_keep() - Keep a child's contribution until its VID completes.
 * @tree: the tree, its lock held
 * @slot: the contribution's slot
 * @bit: the child
 * @in: the packet received if the contribution is all of it (a plain
 *	packet), else NULL; set to NULL when it is kept whole
 * @pkt: the packet the contribution lies in (pkt.h): kept by a reference
 *	where it lies if it can be, else copied
 * @charge: bytes a reference to the packet is charged: its share of it
 *
 * Return: the payload as kept, or NULL (without memory, or the packet is
 * shorter than the hook found it).
 */
const void *netagg_reuse_keep(struct netagg_tree *tree,
			      struct netagg_slot *slot, int bit,
			      struct sk_buff **in, const struct netagg_pkt *pkt,
			      u32 charge)
{
	struct netagg_input *input = &netagg_slot_inputs(tree, slot)[bit];
	const void *data;
	struct sk_buff *own;

	own = netagg_reuse_claim(in, pkt, pkt->len);
	if (own) {
		netagg_reuse_list(tree, slot, bit, own);
		data = own->data + sizeof(struct netagg_hdr);
		*input = (struct netagg_input) { .data = data };
		return data;
	}
	data = netagg_pkt_in_place(pkt);
	if (data) {
		*input = (struct netagg_input) {
			.data = data,
			.pin = netagg_pkt_hold(pkt),
			.charge = charge,
		};
		tree->held += charge;
		return data;
	}
	own = netagg_xmit_alloc(pkt->len + pkt->tag_len);
	if (!own)
		return NULL;
	data = own->data + sizeof(struct netagg_hdr);
	if (!netagg_pkt_copy(pkt, (void *)data)) {
		kfree_skb(own);
		return NULL;
	}
	netagg_reuse_list(tree, slot, bit, own);
	*input = (struct netagg_input) { .data = data };
	return data;
}

/**
 * netagg_reuse_unpin() - Let go of the packets a slot's inputs share.
 * @tree: the tree, its lock held
 * @slot: the slot, still summing: its sum is made, or it is given up
 *
 * Those kept whole stay on its list, to carry the result.
 */
void netagg_reuse_unpin(struct netagg_tree *tree, struct netagg_slot *slot)
{
	struct netagg_input *inputs, *in;
	u64 b;

	/* A slot keeps inputs while it sums (see netagg_slot_inputs()). */
	if (slot->ws.state != NETAGG_SLOT_FILLING)
		return;
	inputs = netagg_slot_inputs(tree, slot);
	for (b = slot->ws.seen; b; b &= b - 1) {
		in = &inputs[__ffs64(b)];
		if (!in->pin)
			continue;
		tree->held -= in->charge;
		consume_skb(in->pin);
		in->pin = NULL;
	}
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
 * netagg_reuse_release() - Free the packets a slot keeps.
 * @tree: the tree, its lock held
 * @slot: the slot: its result went out in other packets, or never; or it
 *	is taken for another VID
 */
void netagg_reuse_release(struct netagg_tree *tree, struct netagg_slot *slot)
{
	struct sk_buff *skb;
	int bit;

	netagg_reuse_unpin(tree, slot);
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

// SPDX-License-Identifier: GPL-2.0
/*
 * Super-packets: a UDP GSO packet whose segments are aggregation packets.
 * A worker's socket sends one with UDP_SEGMENT; veth passes it whole, and a
 * NIC's GRO builds one; so the stack, the hook and the tree's lock are paid
 * once for up to 64 KiB of gradient, as TCP pays them once a socket buffer.
 *
 * Here: reading a segment where it lies, and gathering what a node sends
 * into super-packets. A node's result is the same for every child it goes
 * to, so it is written once, into pages that each child's packet refers
 * to: only the headers in front of it are per child.
 */

#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/udp.h>
#include "xmit.h"
#include "super.h"

/*
 * A page for segments of @seg bytes: 32 KiB, the largest order the page
 * allocator keeps per CPU, else the least that holds one segment.
 */
static struct page *netagg_super_page(unsigned int seg, unsigned int *order)
{
	const gfp_t gfp = GFP_ATOMIC | __GFP_COMP | __GFP_NOWARN;
	struct page *page;

	*order = max(PAGE_ALLOC_COSTLY_ORDER, get_order(seg));
	page = alloc_pages(gfp | __GFP_NORETRY, *order);
	if (page || *order == get_order(seg))
		return page;
	*order = get_order(seg);
	return alloc_pages(gfp, *order);
}

/*
 * Room for @seg bytes in @cache's current page: the next page when it is
 * full, recycled if no packet holds it any more, else a new one. False
 * without memory.
 */
static bool netagg_super_cache_room(struct netagg_super_cache *cache,
				    unsigned int seg)
{
	unsigned int next = cache->cur, order;
	struct page *page = cache->page[next];

	if (page && cache->used + seg <= cache->room[next])
		return true;
	if (page)
		next = (next + 1) % NETAGG_SUPER_CACHE;
	page = cache->page[next];
	if (page && page_ref_count(page) == 1 && seg <= cache->room[next])
		goto take;
	if (page)
		put_page(page);
	page = netagg_super_page(seg, &order);
	cache->page[next] = page;
	if (!page)
		return false;
	cache->room[next] = PAGE_SIZE << order;
take:
	cache->cur = next;
	cache->used = 0;
	return true;
}

/**
 * netagg_super_reserve() - Room for one more segment of a super-packet.
 * @sp: the super-packet being gathered
 * @seg: the segment's bytes, header and payload
 * @cache: the tree's pages, to carve it from
 *
 * Return: where to write the segment; ERR_PTR(-ENOSPC) when the super-packet
 * cannot take it (it is full, or of segments of another size: send it, reset
 * it, and try again), ERR_PTR(-ENOMEM) when a page could not be had.
 */
void *netagg_super_reserve(struct netagg_super *sp, unsigned int seg,
			   struct netagg_super_cache *cache)
{
	unsigned int i = sp->pages - 1;
	struct page *page;

	if (sp->segs) {
		if (sp->last || seg > sp->seg || sp->segs == UDP_MAX_SEGMENTS ||
		    sp->len + seg > NETAGG_SUPER_MAX)
			return ERR_PTR(-ENOSPC);
	} else {
		sp->seg = seg;
	}
	page = cache->page[cache->cur];
	/* Not right after its last segment in the current page: a new frag. */
	if (!sp->pages || sp->page[i] != page ||
	    sp->off[i] + sp->used[i] != cache->used ||
	    cache->used + seg > cache->room[cache->cur]) {
		if (sp->pages == NETAGG_SUPER_PAGES)
			return ERR_PTR(-ENOSPC);
		if (!netagg_super_cache_room(cache, seg))
			return sp->segs ? ERR_PTR(-ENOSPC) : ERR_PTR(-ENOMEM);
		page = cache->page[cache->cur];
		get_page(page);
		i = sp->pages++;
		sp->page[i] = page;
		sp->off[i] = cache->used;
		sp->used[i] = 0;
	}
	sp->used[i] += seg;
	cache->used += seg;
	sp->len += seg;
	sp->segs++;
	sp->last = seg < sp->seg;
	return page_address(page) + sp->off[i] + sp->used[i] - seg;
}

/**
 * netagg_super_cache_free() - Give a tree's pages back.
 * @cache: the tree's pages; packets made of them keep theirs
 */
void netagg_super_cache_free(struct netagg_super_cache *cache)
{
	unsigned int i;

	for (i = 0; i < NETAGG_SUPER_CACHE; i++)
		if (cache->page[i])
			put_page(cache->page[i]);
}

/**
 * netagg_super_skb() - A packet of what a super-packet gathered.
 * @sp: the super-packet
 *
 * For one destination: the pages are shared with the others, headers are its
 * own. A single segment is a plain packet.
 *
 * Return: the packet, or NULL without memory.
 */
struct sk_buff *netagg_super_skb(const struct netagg_super *sp)
{
	struct sk_buff *skb;
	unsigned int i;

	skb = netagg_xmit_alloc_head();
	if (!skb)
		return NULL;
	for (i = 0; i < sp->pages; i++) {
		get_page(sp->page[i]);
		skb_fill_page_desc(skb, i, sp->page[i], sp->off[i], sp->used[i]);
	}
	skb->len += sp->len;
	skb->data_len = sp->len;
	/*
	 * Charged as the page-fragment allocators charge: the bytes it
	 * carries. Every child's packet shares the pages, and a socket that
	 * were charged whole 32 KiB pages for a few segments would drop
	 * results with its buffer far from full of them.
	 */
	skb->truesize += sp->len;
	if (sp->segs > 1) {
		skb_shinfo(skb)->gso_size = sp->seg;
		skb_shinfo(skb)->gso_type = SKB_GSO_UDP_L4;
		skb_shinfo(skb)->gso_segs = sp->segs;
	}
	return skb;
}

/**
 * netagg_super_reset() - Empty a super-packet again.
 * @sp: the super-packet; the packets made of its pages keep them
 */
void netagg_super_reset(struct netagg_super *sp)
{
	unsigned int i;

	for (i = 0; i < sp->pages; i++)
		put_page(sp->page[i]);
	memset(sp, 0, sizeof(*sp));
}

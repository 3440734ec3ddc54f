/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_SUPER_H
#define _NETAGG_SUPER_H

#include <linux/skbuff.h>

/* Pages a super-packet is gathered in: a 64 KiB one in two 32 KiB pages. */
#define NETAGG_SUPER_PAGES	4
/* Bytes of segments in one: what the UDP and IPv4 lengths can count. */
#define NETAGG_SUPER_MAX	(0xffff - 20 - 8)

/*
 * A super-packet being gathered: segments of one size (the last one may be
 * shorter) written one after the other into pages, each segment whole in
 * one page. The pages are shared by every packet made of them.
 */
struct netagg_super {
	struct page *page[NETAGG_SUPER_PAGES];
	u32 off[NETAGG_SUPER_PAGES];	/* where in each its segments start */
	u32 used[NETAGG_SUPER_PAGES];	/* bytes written in each */
	u16 pages;
	u16 segs;
	u32 seg;			/* size of the first segment */
	u32 len;			/* bytes written in all */
	bool last;			/* a shorter segment ended it */
};

/* Pages a tree keeps to gather its super-packets in (32 KiB each). */
#define NETAGG_SUPER_CACHE	4

/*
 * The pages a tree gathers its super-packets in, written again once no
 * packet refers to them. A page from the allocator comes cleared
 * (init_on_alloc, on by default in Debian's kernels: a counted instruction a
 * byte under TCG), and a page of its own for each super-packet, however few
 * its segments, cleared far more than it carried. Segments are carved one
 * after the other from the current page; when it is full, the next one is
 * written from its start if the cache holds the only reference left to
 * it, else given up for a new one. Under the tree's lock.
 */
struct netagg_super_cache {
	struct page *page[NETAGG_SUPER_CACHE];
	u32 room[NETAGG_SUPER_CACHE];	/* bytes of each */
	u32 used;			/* bytes given out of the current one */
	u8 cur;
};

void *netagg_super_reserve(struct netagg_super *sp, unsigned int seg,
			   struct netagg_super_cache *cache);
struct sk_buff *netagg_super_skb(const struct netagg_super *sp);
void netagg_super_reset(struct netagg_super *sp);
void netagg_super_cache_free(struct netagg_super_cache *cache);

#endif /* _NETAGG_SUPER_H */

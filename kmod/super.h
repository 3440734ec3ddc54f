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
	u32 used[NETAGG_SUPER_PAGES];	/* bytes written in each */
	u32 room;			/* bytes of the last page */
	u16 pages;
	u16 segs;
	u32 seg;			/* size of the first segment */
	u32 len;			/* bytes written in all */
	bool last;			/* a shorter segment ended it */
};

const void *netagg_skb_in_place(const struct sk_buff *skb, unsigned int off,
				unsigned int len);
const void *netagg_skb_pointer(const struct sk_buff *skb, unsigned int off,
			       unsigned int len, void *buf);
void *netagg_super_reserve(struct netagg_super *sp, unsigned int seg);
struct sk_buff *netagg_super_skb(const struct netagg_super *sp);
void netagg_super_reset(struct netagg_super *sp);

#endif /* _NETAGG_SUPER_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The aggregation packet's header (linux/netagg.h), read and written: every
 * header the module checks or sends goes through these. Inline: each runs
 * once a packet.
 */
#ifndef _NETAGG_HDR_H
#define _NETAGG_HDR_H

#include <linux/skbuff.h>
#include <linux/netagg.h>
#include "state.h"
#include "pkt.h"
#include "stats.h"

/**
 * netagg_hdr_check() - Read and check an aggregation packet's header.
 * @job: the job it names
 * @pkt: the packet or segment at @pkt->off, @pkt->len bytes with its
 *       payload; on success it describes the payload
 *
 * Return: 0, or the counter of why it is dropped.
 */
static inline enum netagg_stat netagg_hdr_check(const struct netagg_job *job,
						struct netagg_pkt *pkt)
{
	const struct netagg_hdr *hdr;

	/* In place where it can be: a super-packet's lie in page fragments. */
	hdr = pkt->len < sizeof(*hdr) ? NULL :
	      netagg_pkt_bytes(pkt, pkt->off, sizeof(*hdr), &pkt->hdr);
	if (!hdr)
		return NETAGG_STAT_DROP_SHORT;
	/* A copy: the packet may be rewritten while the header is still read. */
	if (hdr != &pkt->hdr)
		pkt->hdr = *hdr;
	if (pkt->hdr.version != NETAGG_PROTO_VERSION)
		return NETAGG_STAT_DROP_VERSION;
	/* Before anything the packet says is acted on: DTYPE is answered. */
	pkt->tag_len = 0;
	if (job->keyed) {
		if (pkt->len < sizeof(pkt->hdr) + NETAGG_TAG_LEN ||
		    !netagg_tag_pkt_ok(&job->key, pkt, pkt->off,
				       pkt->len - NETAGG_TAG_LEN))
			return NETAGG_STAT_DROP_TAG;
		pkt->len -= NETAGG_TAG_LEN;
		pkt->tag_len = NETAGG_TAG_LEN;
	}
	if (pkt->hdr.dtype != job->dtype)
		return NETAGG_STAT_DROP_DTYPE;
	pkt->off += sizeof(pkt->hdr);
	pkt->len -= sizeof(pkt->hdr);
	if (pkt->len != ntohs(pkt->hdr.count) * netagg_dtype_size(job->dtype) ||
	    pkt->len > job->payload_max)
		return NETAGG_STAT_DROP_LENGTH;
	return 0;
}

/* The bytes a packet of @job carries after its payload: its tag, if keyed. */
static inline unsigned int netagg_tag_len(const struct netagg_job *job)
{
	return job->keyed ? NETAGG_TAG_LEN : 0;
}

/* The header of what the node sends of @slot: its sum or its result. */
static inline void netagg_hdr_fill(struct netagg_hdr *hdr,
				   const struct netagg_job *job,
				   const struct netagg_tree *tree,
				   const struct netagg_slot *slot, u8 flags)
{
	*hdr = (struct netagg_hdr) {
		.version = NETAGG_PROTO_VERSION,
		.flags = flags | slot->ws.flags,
		.dtype = job->dtype,
		.jid = htonl(job->jid),
		.vid = htonl(slot->ws.vid),
		.tid = htons(tree->tid),
		.count = htons(slot->ws.count),
		.contributors = htons(slot->ws.contributors),
		.round = htons(slot->ws.round),
		.session = htonl(netagg_win_session(&tree->win, &slot->ws)),
	};
}

/*
 * The header of an answer to @probe (linux/netagg.h, NETAGG_F_PROBE): the
 * probe's own, flagged an answer, of the job's @dtype, with @count elements
 * of payload after it.
 */
static inline void netagg_hdr_answer(struct netagg_hdr *hdr,
				     const struct netagg_hdr *probe, u8 dtype,
				     u16 count)
{
	*hdr = *probe;
	hdr->flags = NETAGG_F_PROBE | NETAGG_F_RESULT;
	hdr->dtype = dtype;
	hdr->reserved = 0;
	hdr->count = htons(count);
	hdr->contributors = 0;
}

#endif /* _NETAGG_HDR_H */

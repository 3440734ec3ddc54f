// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Contributions and probes out: queued into a batch of messages, sent with
 * one sendmmsg().
 *
 * Super-packets: a message of a send batch carries up to segs_max
 * consecutive chunks of one tree, header and payload of each in the iovec,
 * sent as one UDP GSO packet (UDP_SEGMENT of one whole chunk's size: only
 * the buffer's last chunk can be shorter, and it ends its message).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "worker.h"

/* The segment size of a message of several chunks, for the kernel. */
static void tx_segment(struct netagg_worker *w, unsigned int m)
{
	struct msghdr *mh = &w->smsg[m].msg_hdr;
	struct cmsghdr *cm;

	mh->msg_iovlen = w->siov_per * w->ssegs[m];
	if (w->ssegs[m] < 2) {
		mh->msg_control = NULL;
		mh->msg_controllen = 0;
		return;
	}
	mh->msg_control = w->sctl[m].buf;
	mh->msg_controllen = sizeof(w->sctl[m].buf);
	cm = CMSG_FIRSTHDR(mh);
	cm->cmsg_level = SOL_UDP;
	cm->cmsg_type = UDP_SEGMENT;
	cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
	*(uint16_t *)CMSG_DATA(cm) = (uint16_t)w->pkt_max;
}

/* A message sent: count its chunks. */
static void tx_sent(struct netagg_worker *w, unsigned int m)
{
	const struct netagg_hdr *h = w->shdr + (size_t)m * w->sstride;

	if (h->flags & NETAGG_F_PROBE) {
		w->info.probes++;
		return;
	}
	for (unsigned int i = 0; i < w->ssegs[m]; i++)
		if (h[i].flags & NETAGG_F_RETRY)
			w->info.retransmits++;
	w->info.packets_sent += w->ssegs[m];
	w->info.sends++;
	if (w->ssegs[m] > 1)
		w->info.super_sent++;
}

/* Send what is queued. */
int netagg_tx_flush(struct netagg_worker *w)
{
	unsigned int done = 0, n = w->sn;

	w->sn = 0;
	for (unsigned int m = 0; m < n; m++)
		tx_segment(w, m);
	/* Blocking socket: waits for send buffer space, not for peers. */
	while (done < n) {
		int r = sendmmsg(w->fd, w->smsg + done, n - done, 0);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			/*
			 * A full device queue loses the packet as the wire
			 * would: it is resent on timeout.
			 */
			if (errno == ENOBUFS) {
				done++;
				continue;
			}
			/*
			 * A path that cannot take a GSO send (no checksum
			 * offload, a smaller MTU): plain packets from now
			 * on; these chunks are resent on timeout.
			 */
			if (w->ssegs[done] > 1 && (errno == EIO || errno == EINVAL ||
						   errno == EMSGSIZE)) {
				w->super = false;
				w->segs_max = 1;
				done++;
				continue;
			}
			/* No way to the tree's node: as one that stopped answering. */
			if (errno == ENETUNREACH || errno == EHOSTUNREACH || errno == ENETDOWN) {
				w->info.silent_tid = w->cfg.trees[w->stree[done]].tid;
				return -EHOSTUNREACH;
			}
			return -errno;
		}
		for (int i = 0; i < r; i++)
			tx_sent(w, done + i);
		done += r;
	}
	return 0;
}

/*
 * A keyed job's chunk (or probe) in @iov, header and payload: its tag
 * (linux/netagg.h, "Tags") into @tag, the third iovec, bound to where it
 * leaves from towards tree @t's node.
 */
static void tag_chunk(struct netagg_worker *w, unsigned int t, struct iovec *iov,
		      uint64_t *tag)
{
	struct netagg_tag_ctx c;

	netagg_tag_begin(&c, &w->key);
	netagg_tag_update(&c, iov[0].iov_base, iov[0].iov_len);
	if (iov[1].iov_len)
		netagg_tag_update(&c, iov[1].iov_base, iov[1].iov_len);
	netagg_tag_update(&c, &w->tag_src[t], sizeof(w->tag_src[t]));
	netagg_tag_update(&c, &w->tag_sport, sizeof(w->tag_sport));
	*tag = htole64(netagg_tag_end(&c));
	iov[2].iov_base = tag;
	iov[2].iov_len = NETAGG_TAG_LEN;
}

/*
 * Queue the contribution of a tree's VID: in the message being filled if it
 * is of that tree and can take it, else in a new one (a full batch goes out
 * first). With NETAGG_F_PROBE in @flags, a probe from @vid instead: a
 * header alone, in a message of its own.
 */
int netagg_tx_queue(struct netagg_worker *w, unsigned int t, uint64_t vid, uint8_t flags)
{
	bool probe = flags & NETAGG_F_PROBE;
	size_t c = vid * w->cfg.ntrees + t, cnt = probe ? 0 : chunk_count(w, c);
	unsigned int m = w->sn - 1, k;
	struct netagg_hdr *h;
	struct iovec *iov;
	int err;

	/* A message ending in a chunk shorter than a whole one takes no more. */
	if (probe || !w->sn || w->stree[m] != t || w->ssegs[m] >= w->segs_max ||
	    w->smsg[m].msg_hdr.msg_iov[w->siov_per * (w->ssegs[m] - 1) + 1].iov_len !=
	    w->pkt_max - HDR_LEN - w->tag_len) {
		if (w->sn == BATCH) {
			err = netagg_tx_flush(w);
			if (err)
				return err;
		}
		m = w->sn++;
		w->stree[m] = t;
		w->ssegs[m] = 0;
		w->smsg[m].msg_hdr.msg_name = &w->dst[t];
	}
	k = w->ssegs[m]++;
	h = w->shdr + (size_t)m * w->sstride + k;
	iov = w->smsg[m].msg_hdr.msg_iov + w->siov_per * k;

	/* The tree's last VID ends the round; a resend of it too. */
	if (!probe && vid + 1 == w->ts[t].nchunks)
		flags |= NETAGG_F_FIN;
	/* A join's sums must hold every rank: no quorum completes them. */
	if (!probe && w->joining)
		flags |= NETAGG_F_WHOLE;
	memset(h, 0, sizeof(*h));
	h->version = NETAGG_PROTO_VERSION;
	h->flags = flags;
	h->dtype = w->cfg.dtype;
	h->jid = htonl(w->cfg.jid);
	h->vid = htonl((uint32_t)vid);
	h->tid = htons(w->cfg.trees[t].tid);
	h->count = htons((uint16_t)cnt);
	h->contributors = htons(!probe);
	h->round = htons(w->cur_round);
	h->session = htonl(w->ts[t].cur_session);
	iov[0].iov_base = h;
	iov[0].iov_len = HDR_LEN;
	iov[1].iov_base = probe ? NULL : w->buf + c * w->epp * w->esize;
	iov[1].iov_len = cnt * w->esize;
	if (w->tag_len)
		tag_chunk(w, t, iov, w->stag + (size_t)m * w->sstride + k);
	return 0;
}

/*
 * Send every chunk the windows allow, round robin over the trees, up to a
 * super-packet of each at a turn: the trees of a path share its window
 * (cc.h), each within its ring of cfg.window slots.
 */
int netagg_send_ready(struct netagg_worker *w)
{
	unsigned int nt = w->cfg.ntrees;
	uint64_t now = 0;
	bool any = true;
	int err;

	while (any) {
		any = false;
		for (unsigned int t = 0; t < nt; t++) {
			struct tree_state *ts = &w->ts[t];

			for (unsigned int k = 0; k < w->segs_max; k++) {
				struct slot *s;

				if (ts->next >= ts->nchunks ||
				    ts->next >= ts->low + w->cfg.window ||
				    !netagg_cc_admits(ts->cc, ts->next == ts->low))
					break;
				/* Once a batch: sending may block for buffer space. */
				if (!w->sn)
					now = now_us();
				s = slot_of(w, t, ts->next);
				s->seq = netagg_cc_sent(ts->cc, now, ts->rto_us > IDLE_MIN_US ?
								     ts->rto_us : IDLE_MIN_US);
				s->counted = true;
				s->state = SLOT_SENT;
				s->tries = 1;
				s->probed = false;
				s->shift = ts->backoff;
				s->sent_us = now;
				s->first_us = now;
				if (now + chunk_rto(ts, s) < w->next_check)
					w->next_check = now + chunk_rto(ts, s);
				err = netagg_tx_queue(w, t, ts->next, 0);
				if (err)
					return err;
				ts->next++;
				any = true;
			}
		}
	}
	return netagg_tx_flush(w);
}

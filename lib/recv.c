// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Results and probe answers in: read in batches with recvmmsg(), each
 * packet validated before its payload is written over its chunk. With
 * UDP_GRO on the socket, a super-packet of results arrives whole, its
 * segment size in a control message, and is taken segment by segment.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netinet/ip.h>
#include <string.h>

#include "worker.h"
#include "half.h"

/*
 * A result the caller accepts: of cfg.workers contributions and not
 * regrouped, or with a quorum below workers, of quorum to workers.
 */
static bool accepted(const struct netagg_worker *w, unsigned int contrib, bool regrouped)
{
	if (w->cfg.quorum == w->cfg.workers)
		return contrib == w->cfg.workers && !regrouped;
	return contrib >= w->cfg.quorum && contrib <= w->cfg.workers;
}

/*
 * A node's answer to a probe (linux/netagg.h, NETAGG_F_PROBE). A chunk
 * the probe asked for whose contribution the node lacks is resent now. One
 * whose result the node says it sent and that has not come was lost, or
 * is overtaken by the answer (they leave from different CPUs): it is
 * asked for again (RETRY, answered from the node's kept result) after the
 * reordering window, as a chunk a later result passed; at once if it was
 * fast-retransmitted already, for then no window would ask again. One the
 * node holds otherwise waits on (its timer restarted when the probe left).
 * Chunks not overdue when the probe left may still be on their way to the
 * node: not resent. An answer of an older node has the held map alone (it
 * sent its kept results again first). 1, 0 if it is not an answer to a
 * probe of ours, or -errno.
 */
static int take_probe(struct netagg_worker *w, const uint8_t *pkt, size_t len, uint64_t now)
{
	const struct netagg_hdr *h = (const struct netagg_hdr *)pkt;
	uint64_t map[2] = { 0, 0 };	/* held, done */
	struct tree_state *ts;
	size_t maps;
	uint64_t held, done, vid;
	uint16_t tid;
	int t, err;

	if (len < HDR_LEN || h->version != NETAGG_PROTO_VERSION ||
	    h->flags != (NETAGG_F_PROBE | NETAGG_F_RESULT) ||
	    ntohl(h->jid) != w->cfg.jid || ntohs(h->round) != w->cur_round)
		return 0;
	tid = ntohs(h->tid);
	if (tid >= NETAGG_TREES_MAX || (t = w->tree_of_tid[tid]) < 0 ||
	    ntohl(h->session) != w->ts[t].cur_session)
		return 0;
	/* The job is of another dtype: nothing of ours is summed, ever. */
	if (len == HDR_LEN && !h->count && h->dtype != w->cfg.dtype) {
		w->mismatch = true;
		w->info.job_dtype = h->dtype;
		return 1;
	}
	maps = len - HDR_LEN;
	if ((maps != sizeof(map) && maps != sizeof(map[0])) || h->dtype != w->cfg.dtype ||
	    ntohs(h->count) * w->esize != maps)
		return 0;
	ts = &w->ts[t];
	ts->heard_us = now;
	/*
	 * The node answers a probe at once, waiting for no other worker: the
	 * round trip a tree without a sample (a join's results wait for every
	 * rank to start) starts its estimate from, rather than RTO_INIT_US.
	 * Only the answer of the only round of probes out: which round an
	 * answer is of is unknown otherwise.
	 */
	if (!ts->have_rtt && ts->probe_us && !ts->probes_unanswered && now > ts->probe_us)
		netagg_rtt_sample(w, ts, now - ts->probe_us, now);
	memcpy(map, pkt + HDR_LEN, maps);
	held = le64toh(map[0]);
	done = le64toh(map[1]);
	ts->probe_us = 0;
	ts->probes_unanswered = 0;
	vid = ntohl(h->vid);
	for (unsigned int i = 0; i < NETAGG_PROBE_VIDS && vid + i < ts->next; i++) {
		struct slot *s = slot_of(w, t, vid + i);

		if (vid + i < ts->low || s->state != SLOT_SENT || !s->probed)
			continue;
		s->probed = false;
		if ((held >> i & 1) && !(done >> i & 1))
			continue;
		/* Its result may still come: resent after the reordering window. */
		if ((done >> i & 1) && vid + i >= ts->fast_upto) {
			netagg_reo_passed(ts, vid + i, now);
			continue;
		}
		/* Not at the node, or its result asked for again and lost again. */
		netagg_cc_loss(ts->cc, s->seq);
		err = netagg_resend(w, t, vid + i, now);
		if (err)
			return err;
	}
	return 1;
}

/* Element @i of a little-endian buffer of the worker's type, as a float. */
static float elem_get(const struct netagg_worker *w, const uint8_t *p, size_t i)
{
	uint32_t bits;
	float f;

	if (w->esize == 2) {
		uint16_t h = le16toh(((const uint16_t *)p)[i]);

		bits = w->cfg.dtype == NETAGG_DTYPE_F16 ? netagg_f16_to_f32(h) :
		       netagg_bf16_to_f32(h);
	} else {
		bits = le32toh(((const uint32_t *)p)[i]);
	}
	memcpy(&f, &bits, sizeof(f));
	return f;
}

static void elem_put(const struct netagg_worker *w, uint8_t *p, size_t i, float f)
{
	uint32_t bits;

	memcpy(&bits, &f, sizeof(bits));
	if (w->esize == 2)
		((uint16_t *)p)[i] = htole16(w->cfg.dtype == NETAGG_DTYPE_F16 ?
					     netagg_f32_to_f16(bits) :
					     netagg_f32_to_bf16(bits));
	else
		((uint32_t *)p)[i] = htole32(bits);
}

/*
 * A result of @cnt elements, summing @contrib contributions, into its
 * chunk @dst: as it is, or as a mean (cfg.mean; see libnetagg.h). Each
 * element is x * num / den, computed in double (exact product) and rounded
 * once to float32: as for a quotient of floats, rounding the double again
 * changes nothing, so the same result gives the same bits everywhere.
 */
static void write_result(const struct netagg_worker *w, uint8_t *dst, const uint8_t *src,
			 size_t cnt, unsigned int contrib, uint8_t flags)
{
	unsigned int num = 1, den = 1;

	if (w->cfg.mean == NETAGG_MEAN_AFTER && !(flags & NETAGG_F_MEAN))
		den = contrib;
	else if (w->cfg.mean == NETAGG_MEAN_BEFORE)
		num = w->cfg.workers, den = flags & NETAGG_F_MEAN ? 1 : contrib;
	if (num == den || !den) {
		memcpy(dst, src, cnt * w->esize);
		return;
	}
	for (size_t i = 0; i < cnt; i++)
		elem_put(w, dst, i, (float)((double)elem_get(w, src, i) * num / den));
}

/*
 * Validate one received packet; if it is a result we wait for, copy it over
 * its chunk, or, if the caller does not accept it, count it refused. @ce:
 * it came marked CE.
 */
static bool take_result(struct netagg_worker *w, const uint8_t *pkt, size_t len, bool ce,
			uint64_t now)
{
	const struct netagg_hdr *h = (const struct netagg_hdr *)pkt;
	unsigned int nt = w->cfg.ntrees;
	struct tree_state *ts;
	uint16_t tid, cnt, contrib;
	bool take = true;
	uint64_t since;
	struct slot *s;
	uint32_t vid;
	size_t c;
	int t;

	if (len < HDR_LEN || h->version != NETAGG_PROTO_VERSION ||
	    !(h->flags & NETAGG_F_RESULT) || h->dtype != w->cfg.dtype ||
	    ntohl(h->jid) != w->cfg.jid || ntohs(h->round) != w->cur_round)
		return false;
	tid = ntohs(h->tid);
	if (tid >= NETAGG_TREES_MAX || (t = w->tree_of_tid[tid]) < 0 ||
	    ntohl(h->session) != w->ts[t].cur_session)
		return false;
	ts = &w->ts[t];
	vid = ntohl(h->vid);
	if (vid >= ts->next)	/* not sent */
		return false;
	c = (size_t)vid * nt + t;
	cnt = ntohs(h->count);
	contrib = ntohs(h->contributors);
	if (cnt != chunk_count(w, c) || len != HDR_LEN + (size_t)cnt * w->esize ||
	    contrib == 0)
		return false;
	s = slot_of(w, t, vid);
	if (vid < ts->low || s->state != SLOT_SENT) {	/* taken already */
		netagg_result_again(ts, vid);
		return false;
	}

	if (w->joining) {
		/* Who is in a join's sum shows in the vector itself: see join(). */
		contrib = 0;
	} else {
		if (h->flags & NETAGG_F_MEAN)
			w->info.averaged++;
		if (h->flags & NETAGG_F_REGROUPED)
			w->info.regrouped++;
		if (h->flags & NETAGG_F_LATE)
			w->info.late++;
		take = accepted(w, contrib, h->flags & NETAGG_F_REGROUPED);
		if (!take) {
			w->info.refused++;
			w->refused = true;
		}
	}
	if (take)
		write_result(w, w->buf + c * w->epp * w->esize, pkt + HDR_LEN, cnt,
			     contrib, h->flags);
	s->state = SLOT_DONE;
	since = s->first_us > ts->heard_us ? s->first_us : ts->heard_us;
	if (now > since)
		netagg_stall_sample(ts, now - since, now);
	ts->heard_us = now;
	ts->progress_us = now;
	/*
	 * Karn: after a resend, which send a result answers is unknown. A
	 * join's result waits for every rank to start: no round trip.
	 */
	if (s->tries == 1 && now > s->sent_us && !w->joining)
		netagg_rtt_sample(w, ts, now - s->sent_us, now);
	ce = ce && !w->cfg.no_ecn;
	if (ce)
		w->info.ce++;
	slot_gone(ts->cc, s);
	netagg_cc_result(ts->cc, s->seq, ce, now);
	w->remaining--;
	w->info.packets_received++;
	if (contrib && (!w->info.min_contributors || contrib < w->info.min_contributors))
		w->info.min_contributors = contrib;
	if (contrib > w->info.max_contributors)
		w->info.max_contributors = contrib;
	/* Results may come out of order: slide past every finished VID. */
	while (ts->low < ts->next && slot_of(w, t, ts->low)->state == SLOT_DONE)
		ts->low++;
	netagg_reo_result(ts, vid, s->sent_us, now);
	return true;
}

/*
 * Whether a keyed job's result or probe answer of @len bytes, its tag
 * last, carries the right tag (linux/netagg.h, "Tags"): one bound to no
 * address, RESULT set. Anything else a worker is sent is no packet of its.
 */
static bool tag_ok(const struct netagg_worker *w, const uint8_t *pkt, size_t len)
{
	struct netagg_tag_ctx c;
	uint64_t tag;

	if (len < HDR_LEN + NETAGG_TAG_LEN || !(pkt[1] & NETAGG_F_RESULT))
		return false;
	len -= NETAGG_TAG_LEN;
	netagg_tag_begin(&c, &w->key);
	netagg_tag_update(&c, pkt, len);
	memcpy(&tag, pkt + len, sizeof(tag));
	return le64toh(tag) == netagg_tag_end(&c);
}

/*
 * The segment size of a received message, its UDP_GRO else all of it,
 * and whether it came marked CE (its IP_TOS, or its IPV6_TCLASS over
 * IPv6). GRO merges only packets of one TOS or traffic class: the mark
 * is every segment's.
 */
static size_t rx_meta(const struct msghdr *mh, size_t len, bool *ce)
{
	size_t seg = len;

	*ce = false;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR((struct msghdr *)mh, cm)) {
		int gso, tclass;

		if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_TOS &&
		    cm->cmsg_len >= CMSG_LEN(1)) {
			*ce = (*CMSG_DATA(cm) & IPTOS_ECN_MASK) == IPTOS_ECN_CE;
			continue;
		}
		/* An int, unlike IP_TOS's byte. */
		if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_TCLASS &&
		    cm->cmsg_len >= CMSG_LEN(sizeof(tclass))) {
			memcpy(&tclass, CMSG_DATA(cm), sizeof(tclass));
			*ce = (tclass & IPTOS_ECN_MASK) == IPTOS_ECN_CE;
			continue;
		}
		if (cm->cmsg_level != SOL_UDP || cm->cmsg_type != UDP_GRO ||
		    cm->cmsg_len < CMSG_LEN(sizeof(gso)))
			continue;
		memcpy(&gso, CMSG_DATA(cm), sizeof(gso));
		if (gso > 0)
			seg = gso;
	}
	return seg;
}

/*
 * Read what is queued, without blocking. Returns the number of results
 * taken (>= 0), -EAGAIN when nothing at all was queued, or -errno.
 * With take false, everything read is discarded as ignored. A
 * super-packet counts as the packets it carries.
 */
int netagg_recv_batch(struct netagg_worker *w, bool take)
{
	int n, taken = 0;
	uint64_t now;

	for (unsigned int i = 0; i < w->rbatch; i++) {
		struct msghdr *mh = &w->rmsg[i].msg_hdr;

		mh->msg_flags = 0;
		mh->msg_control = w->rctl[i].buf;
		mh->msg_controllen = sizeof(w->rctl[i].buf);
	}
	do
		n = recvmmsg(w->fd, w->rmsg, w->rbatch, MSG_DONTWAIT, NULL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		/* ICMP errors on an unconnected socket: nothing to read */
		return errno == EWOULDBLOCK || errno == ECONNREFUSED ? -EAGAIN : -errno;
	now = now_us();		/* when the batch arrived, for round trips */
	for (int i = 0; i < n; i++) {
		struct mmsghdr *m = &w->rmsg[i];
		const uint8_t *p = w->riov[i].iov_base;
		bool ce;
		size_t len = m->msg_len, seg = rx_meta(&m->msg_hdr, len, &ce);

		/* A truncated packet is longer than any result of ours. */
		if (!take || (m->msg_hdr.msg_flags & MSG_TRUNC) || !len) {
			w->info.packets_ignored++;
			continue;
		}
		for (size_t off = 0; off < len; off += seg) {
			size_t l = len - off < seg ? len - off : seg;
			int r;

			/* Not a byte of a packet is believed before its tag. */
			if (w->tag_len) {
				if (!tag_ok(w, p + off, l)) {
					w->info.bad_tags++;
					w->info.packets_ignored++;
					continue;
				}
				l -= w->tag_len;
			}

			if (l >= HDR_LEN && (p[off + 1] & NETAGG_F_PROBE)) {
				r = take_probe(w, p + off, l, now);
				if (r < 0)
					return r;
				if (r)
					continue;
			} else if (take_result(w, p + off, l, ce, now)) {
				taken++;
				continue;
			}
			w->info.packets_ignored++;
		}
	}
	return taken;
}

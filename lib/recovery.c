// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * What the worker does about results that do not come: the round-trip and
 * stall estimates that time them out, probes and resends of overdue
 * chunks, fast retransmission of chunks overtaken by later results, and
 * which of these were losses, for the path's congestion window (cc.h).
 * See libnetagg.h, "Loss" and "Congestion".
 *
 * Retransmission: each VID in flight has a slot with the time of its last
 * send and how often it was sent. Rather than scanning the windows after
 * every batch, the loop keeps the earliest time any slot can be overdue
 * (next_check), scans the in-flight VIDs only once that has passed, and
 * sleeps in ppoll() until then at most.
 */
#define _GNU_SOURCE
#include "worker.h"

/*
 * A result came @wait after the later of its chunk's first send and the
 * last packet of its node: how long the node was silent while the chunk
 * waited. A node is silent when it, or a worker that every result waits
 * for, gets no CPU for a while, which round trips sampled from the
 * results that flow do not show; the longest recent silence says how long
 * a node that answers nothing may be only stalled (probe_again()). It
 * counts half once STALL_DECAY_US passed without a longer one. A wait
 * that a probe's answer broke is the node waiting for another worker's
 * resend, not a stall: were it counted, each loss recovered by a timeout
 * would lengthen the timeout of the next.
 */
/*
 * The longest of recent samples (capped at RTO_MAX_US) in *@max, seen at
 * *@at: halved once STALL_DECAY_US passed without a longer one.
 */
static void recent_max(uint64_t *max, uint64_t *at, uint64_t sample, uint64_t now)
{
	if (now - *at > STALL_DECAY_US) {
		*max /= 2;
		*at = now;
	}
	if (sample > *max) {
		*max = sample < RTO_MAX_US ? sample : RTO_MAX_US;
		*at = now;
	}
}

void netagg_stall_sample(struct tree_state *ts, uint64_t wait, uint64_t now)
{
	recent_max(&ts->stall_us, &ts->stall_at_us, wait, now);
}

/*
 * RFC 6298, section 2, in microseconds; r is a round trip of a chunk sent
 * once, or of a probe, taken at @now: new chunks' timeouts no longer backed
 * off (Karn). Unlike TCP's, a result also waits for every other worker, and for
 * their retransmissions: such delays grow with the RTO itself, and under
 * heavy loss would push it to the maximum. So a sample counts for at most
 * twice SRTT: a real rise of the round trip still lifts SRTT by an eighth
 * a sample.
 */
void netagg_rtt_sample(const struct netagg_worker *w, struct tree_state *ts, uint64_t r,
		       uint64_t now)
{
	uint64_t var;

	if (ts->have_rtt && r > 2 * ts->srtt_us)
		r = 2 * ts->srtt_us;
	/* Keeps the sums small; anything longer already gives the largest RTO. */
	if (r > RTO_MAX_US)
		r = RTO_MAX_US;
	if (!ts->have_rtt) {
		ts->srtt_us = r;
		ts->rttvar_us = r / 2;
		ts->have_rtt = true;
	} else {
		uint64_t delta = ts->srtt_us > r ? ts->srtt_us - r : r - ts->srtt_us;

		ts->rttvar_us = (3 * ts->rttvar_us + delta) / 4;
		ts->srtt_us = (7 * ts->srtt_us + r) / 8;
	}
	var = 4 * ts->rttvar_us;
	ts->rto_us = ts->srtt_us + (var > RTO_G_US ? var : RTO_G_US);
	if (ts->rto_us < w->rto_min_us)
		ts->rto_us = w->rto_min_us;
	if (ts->rto_us > RTO_MAX_US)
		ts->rto_us = RTO_MAX_US;
	ts->backoff = 0;
	ts->sampled_us = now;
}

/*
 * Whether overdue chunks are asked for with a probe (or resent): yes when
 * the last probes were answered (or there were none). Unanswered, they are
 * sent again, a few rounds running, while the node has sent nothing since
 * they left (it is stalled: a node without CPU for a while answers nothing,
 * and what it has queued includes the probe) or has sent the result of the
 * first chunk they asked for (it is catching up on a backlog, and reaches
 * the probes after the contributions queued before them): resending to it
 * only adds to what it has to get through. Past those rounds, a node still
 * silent is probed on while its silence is shorter than twice the longest
 * it had lately (netagg_stall_sample()): it was only stalled then too. A
 * node heard since, without the result the probes asked for first, lost
 * them or their answer: then the chunks are resent.
 */
static bool probe_again(const struct tree_state *ts, uint64_t now)
{
	bool silent = ts->heard_us < ts->probe_us;

	if (!ts->probe_us)
		return true;
	if (ts->probes_unanswered >= PROBES_UNANSWERED_MAX)
		return silent && now - ts->heard_us < 2 * ts->stall_us;
	return silent || ts->low > ts->probe_from;
}

/* A chunk resent as lost: note the cut its loss made or joined. */
static void lost_note(struct tree_state *ts, uint64_t vid, uint64_t cut)
{
	ts->lost[ts->lost_next++ % LOST_KEPT] = (struct lost_resend){ vid, cut };
}

/*
 * The chunks of VIDs @from to @to (excluded) were sent again, or asked for
 * by a probe, which has a node older than the probe's done map send again
 * the results it kept: a second result of those proves nothing now.
 */
void netagg_lost_forget(struct tree_state *ts, uint64_t from, uint64_t to)
{
	for (unsigned int i = 0; i < LOST_KEPT; i++)
		if (ts->lost[i].vid >= from && ts->lost[i].vid < to)
			ts->lost[i].cut = 0;
}

/*
 * A result of @vid came that the tree has already taken: if the chunk was
 * sent twice, the second time as lost, both sends were answered, so the
 * first one's result was late, not lost (TCP learns it from a DSACK).
 * Once every loss its cut was for is found so, the cut is undone.
 */
void netagg_result_again(struct tree_state *ts, uint64_t vid)
{
	for (unsigned int i = 0; i < LOST_KEPT; i++) {
		if (ts->lost[i].vid != vid || !ts->lost[i].cut)
			continue;
		netagg_cc_spurious(ts->cc, ts->lost[i].cut);
		ts->lost[i].cut = 0;
	}
}

/*
 * Ask again for every chunk in flight whose result is overdue, with its
 * timeout doubled, and find when the next one will be. Asking is probing
 * first: a probe (NETAGG_F_PROBE) from the lowest overdue VID, one per
 * NETAGG_PROBE_VIDS of them, has the node say which contributions it holds and
 * which results it sent; only the chunks it lacks, and those whose result was
 * sent and lost (after the reordering window), are then resent (take_probe()).
 * A result is overdue without any loss when another worker is late to the
 * allreduce (the node holds every contribution and waits for that worker's):
 * then nothing is resent at all. A node that did not answer the last probes by
 * the next timeout gets the chunks resent, with NETAGG_F_RETRY, once
 * probe_again() says so.
 * When a first send times out and no sample came since it was sent, the
 * RTO may be below the round trip: then the tree's new chunks start from
 * the doubled timeout too, until the next sample (Karn; RFC 6298, 5.5);
 * otherwise every chunk would be resent, and no sample would ever raise the
 * RTO. Not for losses while samples flow, nor for chunks resent over and
 * over while some worker is slow: those say nothing about the round trip.
 */
int netagg_resend_overdue(struct netagg_worker *w)
{
	uint64_t now = now_us(), next = UINT64_MAX;
	int err;

	for (unsigned int t = 0; t < w->cfg.ntrees; t++) {
		struct tree_state *ts = &w->ts[t];
		bool probe = probe_again(ts, now), asked = false;
		uint64_t first = 0, from = 0;	/* of the first and last probe */
		/*
		 * Resent because the node, heard from since the probes left,
		 * never answered them: they or their answers were lost. Not
		 * a node that has been silent: it may only be stalled.
		 */
		bool lost = !probe && ts->probe_us && ts->heard_us >= ts->probe_us;

		for (uint64_t vid = ts->low; vid < ts->next; vid++) {
			struct slot *s = slot_of(w, t, vid);
			uint64_t due;

			if (s->state != SLOT_SENT)
				continue;
			due = (s->sent_us > ts->progress_us ? s->sent_us : ts->progress_us) +
			      chunk_rto(ts, s);
			if (due > now) {
				if (due < next)
					next = due;
				continue;
			}
			slot_gone(ts->cc, s);
			if (s->tries == 1 && ts->sampled_us < s->sent_us &&
			    s->shift >= ts->backoff)
				ts->backoff = s->shift < BACKOFF_MAX ? s->shift + 1 : BACKOFF_MAX;
			if (!w->sn)
				now = now_us();
			s->sent_us = now;
			if (s->shift < BACKOFF_MAX)
				s->shift++;
			if (s->tries < UINT8_MAX)
				s->tries++;
			due = now + chunk_rto(ts, s);
			if (due < next)
				next = due;
			s->probed = probe;
			netagg_lost_forget(ts, vid, vid + 1);
			if (probe && asked && vid < from + NETAGG_PROBE_VIDS)
				continue;	/* the last probe asks for it */
			if (lost) {
				uint64_t cut = netagg_cc_loss(ts->cc, s->seq);

				if (s->tries == 2)
					lost_note(ts, vid, cut);
			}
			err = netagg_tx_queue(w, t, vid, probe ? NETAGG_F_PROBE : NETAGG_F_RETRY);
			if (err)
				return err;
			if (probe)
				netagg_lost_forget(ts, vid, vid + NETAGG_PROBE_VIDS);
			if (!asked)
				first = vid;
			asked = true;
			from = vid;
		}
		if (asked) {
			ts->probes_unanswered = probe && ts->probe_us ?
						ts->probes_unanswered + 1 : 0;
			ts->probe_us = probe ? now : 0;
			ts->probe_from = first;
		}
	}
	w->next_check = next;
	return netagg_tx_flush(w);
}

/* Send chunk @vid of tree @t again now, with NETAGG_F_RETRY; its timer restarts. */
int netagg_resend(struct netagg_worker *w, unsigned int t, uint64_t vid, uint64_t now)
{
	struct slot *s = slot_of(w, t, vid);

	s->sent_us = now;
	s->probed = false;
	netagg_lost_forget(&w->ts[t], vid, vid + 1);
	if (s->tries < UINT8_MAX)
		s->tries++;
	return netagg_tx_queue(w, t, vid, NETAGG_F_RETRY);
}

/*
 * Fast retransmit: the result of VID u means the node completed every VID
 * below u (in order), so a chunk still waiting there lost its result on the
 * way, or its result was overtaken: results of one tree leave the node from
 * whichever CPU completed them, and cross veth or a multiqueue NIC through
 * per-CPU queues, so reordering by a few milliseconds is common. As in
 * TCP's RACK, such a chunk is taken for lost only once it has waited the
 * reordering window since a later result passed it: a quarter of SRTT, or
 * twice the longest such wait that still ended in its result, whichever is
 * longer (learnt, and halved after STALL_DECAY_US without a longer one),
 * never above the RTO. Then it is asked for again (the node answers from
 * its kept copy), once: its timeout covers the rest.
 */
static uint64_t reo_wnd(const struct tree_state *ts)
{
	uint64_t wnd = ts->srtt_us / 4;

	if (wnd < 2 * ts->reo_late_us)
		wnd = 2 * ts->reo_late_us;
	if (wnd < RTO_G_US)
		wnd = RTO_G_US;
	return wnd < ts->rto_us ? wnd : ts->rto_us;
}

/*
 * The result of @vid, last sent at @sent, came at @now: note what it
 * passed, or how long it was overtaken. A result that comes within half a
 * round trip of a fast retransmission may answer the first send: the
 * reordering window grows by that much. Whether it did shows only when a
 * second result comes (netagg_result_again()): timing proves nothing here,
 * for a node answers a resend at once from its kept copy, sooner than any
 * round trip that waited for the other workers, and a cut drains the
 * queue, so that the answer also beats round trips measured through the
 * full one.
 */
void netagg_reo_result(struct tree_state *ts, uint64_t vid, uint64_t sent,
		       uint64_t now)
{
	uint64_t from = ts->fast_upto > ts->low ? ts->fast_upto : ts->low;

	if (vid < ts->fast_upto && now >= sent && now - sent < ts->srtt_us / 2)
		recent_max(&ts->reo_late_us, &ts->reo_late_at_us,
			   reo_wnd(ts) + now - sent, now);
	else if (vid < ts->reo_hi && ts->reo_at_us && now > ts->reo_at_us)
		recent_max(&ts->reo_late_us, &ts->reo_late_at_us,
			   now - ts->reo_at_us, now);
	if (vid >= ts->reo_hi)
		ts->reo_hi = vid + 1;
	if (from >= ts->reo_hi)
		ts->reo_at_us = 0;	/* nothing overtaken waits */
	else if (!ts->reo_at_us && from < vid)
		ts->reo_at_us = now;
}

/*
 * A probe's answer says the node sent the result of @vid, which has not
 * come: the answer overtook it, as a later result can (it leaves from the
 * probe's CPU, the result from the one that completed it), or it was lost.
 * Either way it waits the reordering window, as if a later result had
 * passed it.
 */
void netagg_reo_passed(struct tree_state *ts, uint64_t vid, uint64_t now)
{
	if (vid >= ts->reo_hi)
		ts->reo_hi = vid + 1;
	if (!ts->reo_at_us)
		ts->reo_at_us = now;
}

/* When the next overtaken chunk is due for a fast retransmission. */
uint64_t netagg_reo_due(const struct netagg_worker *w)
{
	uint64_t due = UINT64_MAX;

	for (unsigned int t = 0; t < w->cfg.ntrees; t++) {
		const struct tree_state *ts = &w->ts[t];

		if (ts->reo_at_us && ts->reo_at_us + reo_wnd(ts) < due)
			due = ts->reo_at_us + reo_wnd(ts);
	}
	return due;
}

/* Resend, once, the chunks overtaken for longer than the reordering window. */
int netagg_fast_retransmit(struct netagg_worker *w, uint64_t now)
{
	for (unsigned int t = 0; t < w->cfg.ntrees; t++) {
		struct tree_state *ts = &w->ts[t];
		uint64_t v = ts->fast_upto > ts->low ? ts->fast_upto : ts->low;
		uint64_t cut;
		int err;

		if (!ts->reo_at_us || now < ts->reo_at_us + reo_wnd(ts))
			continue;
		for (; v < ts->reo_hi; v++) {
			struct slot *s = slot_of(w, t, v);

			if (s->state != SLOT_SENT)
				continue;
			/* Overtaken longer than reordering explains: lost. */
			slot_gone(ts->cc, s);
			cut = netagg_cc_loss(ts->cc, s->seq);
			err = netagg_resend(w, t, v, now);
			if (err)
				return err;
			if (s->tries == 2)
				lost_note(ts, v, cut);
		}
		ts->fast_upto = ts->reo_hi;
		ts->reo_at_us = 0;
	}
	return netagg_tx_flush(w);
}

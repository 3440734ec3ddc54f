// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* One allreduce of a buffer: send, receive, recover and wait, to its end. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>

#include "worker.h"

/*
 * Failing fast (libnetagg.h): when the first node of a tree that results
 * are due from will have been silent node_timeout_ms, its probes
 * unanswered; that tree's ID in info.silent_tid.
 */
static uint64_t node_silent(struct netagg_worker *w)
{
	uint64_t due = UINT64_MAX, limit = w->cfg.node_timeout_ms * 1000ULL;

	for (unsigned int t = 0; t < w->cfg.ntrees; t++) {
		const struct tree_state *ts = &w->ts[t];

		if (ts->low < ts->next && ts->heard_us + limit < due) {
			due = ts->heard_us + limit;
			w->info.silent_tid = w->cfg.trees[t].tid;
		}
	}
	return due;
}

int netagg_run(struct netagg_worker *w)
{
	uint64_t timeout_us = w->cfg.timeout_ms * 1000ULL;
	unsigned int nt = w->cfg.ntrees;
	uint64_t last_progress;
	int err;

	w->nchunks = w->count / w->epp + (w->count % w->epp != 0);
	/* VIDs are 32 bits and must not wrap within one round. */
	if ((w->nchunks + nt - 1) / nt > (uint64_t)UINT32_MAX + 1)
		return -E2BIG;
	for (unsigned int t = 0; t < nt; t++) {
		/* Chunk c is on tree c % nt: the first nchunks % nt trees get one more. */
		w->ts[t].nchunks = w->nchunks / nt + (t < w->nchunks % nt);
		w->ts[t].next = 0;
		w->ts[t].low = 0;
		w->ts[t].fast_upto = 0;
		w->ts[t].reo_hi = 0;
		netagg_lost_forget(&w->ts[t], 0, UINT64_MAX);
		w->ts[t].reo_at_us = 0;
		w->ts[t].progress_us = 0;
		w->ts[t].probe_us = 0;
		w->ts[t].probes_unanswered = 0;
	}
	for (unsigned int p = 0; p < w->npaths; p++)
		netagg_cc_forget(&w->paths[p]);
	w->remaining = w->nchunks;
	w->mismatch = false;
	w->next_check = UINT64_MAX;
	w->sn = 0;
	w->refused = false;

	/*
	 * Anything already queued predates this allreduce (stray or late
	 * packets of an earlier one) and must not be taken for its results.
	 * Bounded, so that a flood cannot keep us here.
	 */
	for (int i = 0; i < DRAIN_BATCHES; i++) {
		err = netagg_recv_batch(w, false);
		if (err == -EAGAIN)
			break;
		if (err < 0)
			return err;
	}

	last_progress = now_us();
	for (unsigned int t = 0; t < nt; t++)
		w->ts[t].heard_us = last_progress;
	for (;;) {
		struct pollfd pfd = { .fd = w->fd, .events = POLLIN };
		uint64_t now, wake, silent;
		struct timespec tmo;
		int got;

		err = netagg_send_ready(w);
		if (err)
			return err;
		if (!w->remaining)
			return w->refused ? -EREMOTEIO : 0;
		got = netagg_recv_batch(w, true);
		if (got < 0 && got != -EAGAIN)
			return got;
		if (w->mismatch)
			return -EPROTOTYPE;
		now = now_us();
		if (got > 0)
			last_progress = now;
		/* Checked even while junk arrives, so that it cannot hold off the timeout. */
		else if (now - last_progress >= timeout_us)
			return w->refused ? -EREMOTEIO : -ETIMEDOUT;
		silent = node_silent(w);
		if (now >= silent)
			return -EHOSTUNREACH;
		/*
		 * Not while results are being read: after a while without
		 * CPU, those of every tree may be queued, and a chunk whose
		 * result is among the unread is not overdue.
		 */
		if (got <= 0 && now >= netagg_reo_due(w)) {
			err = netagg_fast_retransmit(w, now);
			if (err)
				return err;
		}
		if (got <= 0 && now >= w->next_check) {
			err = netagg_resend_overdue(w);
			if (err)
				return err;
		}
		if (got != -EAGAIN)	/* more may be queued */
			continue;

		/* Nothing queued: wait for a result, the next resend, or the end. */
		wake = last_progress + timeout_us;
		if (w->next_check < wake)
			wake = w->next_check;
		if (netagg_reo_due(w) < wake)
			wake = netagg_reo_due(w);
		if (silent < wake)
			wake = silent;
		now = now_us();
		wake = wake > now ? wake - now : 0;
		tmo.tv_sec = wake / 1000000;
		tmo.tv_nsec = wake % 1000000 * 1000;
		if (ppoll(&pfd, 1, &tmo, NULL) < 0 && errno != EINTR)
			return -errno;
	}
}

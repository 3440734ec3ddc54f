// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* A path's congestion window: see cc.h. */
#include "cc.h"

/**
 * netagg_cc_init() - A path's controller, before its first chunk.
 * @cc: the controller
 * @max: the most chunks its trees' rings can have in flight
 * @dctcp: cut by the fraction of results marked, not by half
 */
void netagg_cc_init(struct netagg_cc *cc, unsigned int max, bool dctcp)
{
	*cc = (struct netagg_cc) {
		.cwnd = max < NETAGG_CC_INIT ? max : NETAGG_CC_INIT,
		.max = max,
		.ssthresh = max,
		.dctcp = dctcp,
		/* RFC 8257: from 1, the most cautious, down to what it sees. */
		.alpha = NETAGG_CC_ALPHA_ONE,
		.epoch_end = max < NETAGG_CC_INIT ? max : NETAGG_CC_INIT,
		.cut_min = max,
	};
}

/**
 * netagg_cc_sent() - A chunk sent for the first time.
 * @cc: the path's controller
 * @now: the time, microseconds
 * @idle_us: nothing in flight for longer than this: the path may have
 *	changed since (the retransmission timeout)
 *
 * Return: the chunk's number on the path, for netagg_cc_result() and
 * netagg_cc_loss() (a resend keeps it).
 */
uint64_t netagg_cc_sent(struct netagg_cc *cc, uint64_t now, uint64_t idle_us)
{
	if (!cc->inflight && cc->active_us && now - cc->active_us > idle_us) {
		unsigned int kept = cc->cwnd - cc->cwnd / 4;

		if (cc->ssthresh < kept)
			cc->ssthresh = kept;
		if (cc->cwnd > NETAGG_CC_INIT)
			cc->cwnd = NETAGG_CC_INIT;
		cc->acc = 0;
		cc->epoch = false;
	}
	cc->inflight++;
	cc->active_us = now;
	return cc->sent++;
}

/* The window after a cut to @want: never below NETAGG_CC_MIN (or max). */
static void cut_to(struct netagg_cc *cc, unsigned int want)
{
	unsigned int least = cc->max < NETAGG_CC_MIN ? cc->max : NETAGG_CC_MIN;

	cc->cwnd = want > least ? want : least;
	cc->ssthresh = cc->cwnd;
	cc->acc = 0;
	cc->recover = cc->sent;
	if (cc->cwnd < cc->cut_min)
		cc->cut_min = cc->cwnd;
}

/*
 * CUBIC's cut (RFC 9438 4.6, 4.7): to beta of the window, W_max noted; a
 * window cut again before it regained W_max takes W_max lower still (fast
 * convergence), leaving room to a flow that joined.
 */
static void cubic_cut(struct netagg_cc *cc)
{
	uint64_t cwnd = cc->cwnd;

	cc->w_max = cc->cwnd < cc->w_max ?
		    (unsigned int)(cwnd * (1024 + NETAGG_CC_BETA) / 2048) : cc->cwnd;
	cc->epoch = false;
	cut_to(cc, (unsigned int)(cwnd * NETAGG_CC_BETA / 1024));
}

/* The integer cube root of @x, rounded down. */
static uint64_t cbrt_u64(uint64_t x)
{
	uint64_t lo = 0, hi = 2642245;	/* the largest whose cube fits */

	while (lo < hi) {
		uint64_t mid = (lo + hi + 1) / 2;

		if (mid * mid * mid <= x)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/*
 * C (RFC 9438: 0.4 chunks a second cubed) as the milliseconds cubed that
 * make a chunk: 1 / 0.4e-9.
 */
#define CUBIC_MS3	2500000000ull
#define CUBIC_T_MAX	100000		/* ms past K: the window is capped long before */
/* Reno's growth at the same mean rate, of 1024: 3 (1 - beta) / (1 + beta). */
#define RENO_ALPHA	(3ull * (1024 - NETAGG_CC_BETA) * 1024 / (1024 + NETAGG_CC_BETA))

/*
 * CUBIC's growth by one result, congestion avoidance (RFC 9438 4.2-4.4):
 * towards W_cubic(t) = C (t - K)^3 + origin, t since the first result
 * after the cut, at most half a window more a round trip, and never slower
 * than Reno's window over the same results (W_est: 3 (1 - beta) / (1 +
 * beta) of a chunk a round trip, so 1 with beta a half, and 1 once past
 * W_max), which rules where round trips are short.
 */
static void cubic_grow(struct netagg_cc *cc, uint64_t now)
{
	uint64_t t_ms, d, target, cnt, est;

	if (!cc->epoch) {
		cc->epoch = true;
		cc->epoch_us = now;
		cc->acc = 0;
		cc->w_est = (uint64_t)cc->cwnd << 16;
		cc->origin = cc->cwnd < cc->w_max ? cc->w_max : cc->cwnd;
		cc->k_ms = cbrt_u64((uint64_t)(cc->origin - cc->cwnd) * CUBIC_MS3);
	}
	t_ms = now > cc->epoch_us ? (now - cc->epoch_us) / 1000 : 0;
	if (t_ms < cc->k_ms) {
		d = cc->k_ms - t_ms;
		target = cc->origin - d * d * d / CUBIC_MS3;
	} else {
		d = t_ms - cc->k_ms;
		if (d > CUBIC_T_MAX)
			d = CUBIC_T_MAX;
		target = cc->origin + d * d * d / CUBIC_MS3;
	}
	if (target > cc->cwnd + cc->cwnd / 2)
		target = cc->cwnd + cc->cwnd / 2;
	cnt = target > cc->cwnd ? cc->cwnd / (target - cc->cwnd) : 100ull * cc->cwnd;
	cc->w_est += ((cc->w_est >> 16) >= cc->w_max ? 1024ull : RENO_ALPHA) * 64 / cc->cwnd;
	est = cc->w_est >> 16;
	if (est > cc->cwnd && cnt > cc->cwnd / (est - cc->cwnd))
		cnt = cc->cwnd / (est - cc->cwnd);
	if (++cc->acc >= cnt) {
		cc->cwnd++;
		cc->acc = 0;
	}
}

/*
 * Whether chunk @seq left before the last cut: a signal about it is that
 * cut's congestion event (or one before it), and its result says nothing
 * of the window since.
 */
static bool before_cut(const struct netagg_cc *cc, uint64_t seq)
{
	return seq < cc->recover;
}

/*
 * DCTCP's observation window, a window of chunks: once a result of a chunk
 * sent after it began comes, alpha moves by g towards the fraction of
 * results marked in it.
 */
static void observe(struct netagg_cc *cc, uint64_t seq, bool ce)
{
	cc->results++;
	cc->marked += ce;
	if (seq < cc->epoch_end)
		return;
	cc->alpha += ((cc->marked * NETAGG_CC_ALPHA_ONE / cc->results) >> NETAGG_CC_G_SHIFT) -
		     (cc->alpha >> NETAGG_CC_G_SHIFT);
	cc->results = 0;
	cc->marked = 0;
	cc->epoch_end = cc->sent;
}

/**
 * netagg_cc_result() - A chunk's result came.
 * @cc: the path's controller
 * @seq: the chunk's number (netagg_cc_sent())
 * @ce: it came marked CE
 * @now: the time, microseconds
 *
 * A mark cuts the window, once a window; any other result grows it: by one
 * in slow start, along CUBIC's curve after (with dctcp, by one a window of
 * results). The chunk left the count in flight first, if it was in it
 * (netagg_cc_gone()).
 */
void netagg_cc_result(struct netagg_cc *cc, uint64_t seq, bool ce, uint64_t now)
{
	cc->active_us = now;
	observe(cc, seq, ce);
	if (ce) {
		if (before_cut(cc, seq))
			return;
		if (cc->dctcp)
			cut_to(cc, cc->cwnd - (unsigned int)((uint64_t)cc->cwnd * cc->alpha /
							     (2 * NETAGG_CC_ALPHA_ONE)));
		else
			cubic_cut(cc);
		cc->ce_cuts++;
		cc->undo = false;
		return;
	}
	if (cc->cwnd >= cc->max || before_cut(cc, seq))
		return;
	if (cc->cwnd < cc->ssthresh) {
		cc->cwnd++;
	} else if (!cc->dctcp) {
		cubic_grow(cc, now);
	} else if (++cc->acc >= cc->cwnd) {
		cc->cwnd++;
		cc->acc = 0;
	}
}

/**
 * netagg_cc_loss() - A chunk was lost on the path.
 * @cc: the path's controller
 * @seq: the chunk's number (netagg_cc_sent())
 *
 * The window halves (as CUBIC's cut, and DCTCP's on a loss), once a
 * window; what it was is kept for netagg_cc_spurious(), which must then
 * find every loss of the cut spurious.
 *
 * Return: the cut this loss belongs to, for netagg_cc_spurious(); never 0.
 */
uint64_t netagg_cc_loss(struct netagg_cc *cc, uint64_t seq)
{
	if (before_cut(cc, seq)) {
		if (cc->undo)
			cc->undo_left++;
		return cc->recover;
	}
	cc->undo = true;
	cc->undo_left = 1;
	cc->undo_cwnd = cc->cwnd;
	cc->undo_ssthresh = cc->ssthresh;
	cc->undo_w_max = cc->w_max;
	if (cc->dctcp)
		cut_to(cc, cc->cwnd / 2);
	else
		cubic_cut(cc);
	cc->loss_cuts++;
	return cc->recover;
}

/**
 * netagg_cc_spurious() - A loss was none: the chunk's result came after all.
 * @cc: the path's controller
 * @cut: what netagg_cc_loss() returned for it
 *
 * Once every loss of the last cut, if it was for losses, is found so, the
 * cut is undone. One of an earlier cut changes nothing.
 */
void netagg_cc_spurious(struct netagg_cc *cc, uint64_t cut)
{
	if (!cc->undo || cut != cc->recover || --cc->undo_left)
		return;
	cc->undo = false;
	if (cc->cwnd < cc->undo_cwnd)
		cc->cwnd = cc->undo_cwnd;
	if (cc->ssthresh < cc->undo_ssthresh)
		cc->ssthresh = cc->undo_ssthresh;
	cc->w_max = cc->undo_w_max;
	cc->epoch = false;
	cc->undone++;
}

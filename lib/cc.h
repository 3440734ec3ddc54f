/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The congestion controller of one path: the chunks a worker may have in
 * flight to one node, whatever the number of the job's trees that node
 * roots or relays for this worker. Pure: no socket, no clock (the caller
 * gives the time), so that tests/unit/test_cc.c checks it natively. See
 * docs/design.md, "Congestion control", for why it is built so.
 *
 * One window a path, as TCP has one a connection: a job is one flow to the
 * network on each path it uses, not one flow a tree. It starts small and
 * doubles each round trip (slow start) up to the first signal, then grows
 * as CUBIC does (RFC 9438), as the Linux TCP flows it meets do: along a
 * cubic of the time since the last cut, back to the window before it
 * within K = cbrt(W_max * (1 - beta) / 0.4) seconds, never slower than
 * Reno would (W_est). Its cut, beta, is a half, not CUBIC's 0.7: measured
 * against a cubic flow (docs/design.md), 0.7 took the job 57-71 % of the
 * link. With dctcp it grows as Reno does, one chunk a round trip, as
 * DCTCP flows do. Signals, each answered once a window: a signal about a
 * chunk sent before the last cut is that cut's congestion event, as TCP's
 * recovery point makes it (chunks are numbered as they are first sent:
 * netagg_cc_sent()):
 *  - results marked CE: the window halves (classic ECN, RFC 3168), or,
 *    with dctcp, shrinks by alpha / 2, alpha the moving average (a window
 *    a step) of the fraction of results marked (DCTCP, RFC 8257);
 *  - a chunk lost (netagg_cc_loss(): the caller tells a loss from a late
 *    result): the window halves, both ways;
 *  - a loss found spurious after the fact (every chunk the caller resent
 *    for the cut's losses was answered twice: the first send's result came
 *    after all): the cut is undone, as TCP undoes one once DSACKs cover
 *    every retransmission of its recovery.
 * After a long idle (nothing in flight for longer than the caller's
 * retransmission timeout), the window restarts from its initial size, its
 * threshold kept at three quarters of where it was (RFC 2861): the next
 * allreduce finds its way back in a few round trips without sending a
 * whole window into a path it has not heard from.
 */
#ifndef NETAGG_CC_H
#define NETAGG_CC_H

#include <stdbool.h>
#include <stdint.h>

#define NETAGG_CC_INIT		10	/* the first window, chunks (TCP's IW10) */
#define NETAGG_CC_MIN		2	/* the least a cut leaves */
#define NETAGG_CC_ALPHA_ONE	1024	/* alpha of 1, fixed point */
#define NETAGG_CC_G_SHIFT	4	/* DCTCP's gain g = 1/16 */
#define NETAGG_CC_BETA		512	/* the cut, of 1024: a half */

struct netagg_cc {
	unsigned int cwnd;		/* chunks that may be in flight */
	unsigned int max;		/* ... at most: the trees' rings */
	unsigned int ssthresh;		/* slow start below it */
	unsigned int acc;		/* results since the window last grew */
	unsigned int inflight;		/* chunks sent, neither answered nor
					 * overdue
					 */
	bool dctcp;			/* cut by alpha / 2 on marks */
	uint64_t sent;			/* chunks first sent: the next one's number */
	uint64_t recover;		/* sent at the last cut: signals about chunks
					 * before it are that cut's
					 */
	unsigned int alpha;		/* of NETAGG_CC_ALPHA_ONE */
	unsigned int results, marked;	/* in the window observed */
	uint64_t epoch_end;		/* a result of a chunk from here on ends it */
	uint64_t active_us;		/* the last send or result */
	/* CUBIC's epoch: from the first result after a cut. */
	bool epoch;
	uint64_t epoch_us;		/* its start */
	uint64_t k_ms;			/* when the cubic is back at origin */
	unsigned int origin;		/* W_max, or the window at the start */
	unsigned int w_max;		/* the window before the last cut */
	uint64_t w_est;			/* Reno's window since, of 65536 */
	/* What a cut for loss undoes, while undo is set. */
	bool undo;
	unsigned int undo_cwnd, undo_ssthresh, undo_w_max;
	unsigned int undo_left;		/* its losses not yet found spurious */
	/* Counted for the caller, which resets them. */
	unsigned int cut_min;		/* the least a cut left; max if none */
	uint64_t ce_cuts, loss_cuts, undone;
};

void netagg_cc_init(struct netagg_cc *cc, unsigned int max, bool dctcp);
uint64_t netagg_cc_sent(struct netagg_cc *cc, uint64_t now, uint64_t idle_us);
void netagg_cc_result(struct netagg_cc *cc, uint64_t seq, bool ce, uint64_t now);
uint64_t netagg_cc_loss(struct netagg_cc *cc, uint64_t seq);
void netagg_cc_spurious(struct netagg_cc *cc, uint64_t cut);

/**
 * netagg_cc_open() - Whether the window takes one more chunk.
 * @cc: the path's controller
 *
 * Return: true while fewer chunks than the window are in flight.
 */
static inline bool netagg_cc_open(const struct netagg_cc *cc)
{
	return cc->inflight < cc->cwnd;
}

/**
 * netagg_cc_admits() - Whether a tree of the path may send a chunk now.
 * @cc: the path's controller
 * @tree_idle: the tree has nothing in flight
 *
 * A tree with nothing in flight sends past a full window: every worker then
 * sends each tree's next VID, so that the VIDs of one tree, which the
 * nodes complete in order, never wait for those of another that some
 * worker's window holds back. So a window never holds less than a chunk a
 * tree.
 *
 * Return: true if the window has room, or @tree_idle.
 */
static inline bool netagg_cc_admits(const struct netagg_cc *cc, bool tree_idle)
{
	return netagg_cc_open(cc) || tree_idle;
}

/**
 * netagg_cc_gone() - A chunk counted in flight is no longer.
 * @cc: the path's controller
 *
 * Its result came (before netagg_cc_result()), or it is overdue: lost, or
 * held at its node for another worker's contribution. Either way it is not
 * in the network, as TCP's pipe stops counting a segment an RTO took for
 * lost; a resend is not counted again. So chunks a node holds for a late
 * worker, or that a node will never answer (their VIDs completed without
 * this worker), keep no window from the VIDs that can complete.
 */
static inline void netagg_cc_gone(struct netagg_cc *cc)
{
	if (cc->inflight)
		cc->inflight--;
}

/**
 * netagg_cc_forget() - Chunks in flight that no result will answer.
 * @cc: the path's controller
 *
 * A call ended with chunks in flight (it failed): the next one sends its
 * own from nothing in flight.
 */
static inline void netagg_cc_forget(struct netagg_cc *cc)
{
	cc->inflight = 0;
}

#endif /* NETAGG_CC_H */

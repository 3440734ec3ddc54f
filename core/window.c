// SPDX-License-Identifier: GPL-2.0
/*
 * The window core's decisions that are not made per packet: starting and
 * forgetting rounds, what a probe covers, the quorum. The per-packet ones
 * are inline in window.h. Built in the kernel and natively (tests/unit,
 * tests/tools/netagg-uagg).
 */

#include "window.h"

/**
 * netagg_win_init() - A window in no round.
 * @w: the window
 * @window: VIDs summed at once (the job's window)
 */
void netagg_win_init(struct netagg_window *w, u32 window)
{
	*w = (struct netagg_window) {
		.window = window,
		.ring = 2 * window,
	};
}

/**
 * netagg_win_reset() - Forget every round.
 * @w: the window
 *
 * The next contribution starts a round whatever its number, at position 0;
 * the callers forget their slots with it.
 */
void netagg_win_reset(struct netagg_window *w)
{
	netagg_win_init(w, w->window);
}

/**
 * netagg_win_start() - Start a round the window is not in.
 * @w: the window
 * @session: the new round's session
 * @round: the new round (netagg_win_new_round())
 *
 * The current round becomes the previous one, whose completed VIDs keep
 * their results for retransmissions. A current round that has not ended is
 * given up: its window of positions is skipped, its slots never reused for
 * the new round's VIDs of the same position. A new session leaves the
 * current one for good (netagg_win_new_round()), but session 0.
 *
 * Return: true if an unended round was given up.
 */
bool netagg_win_start(struct netagg_window *w, u32 session, u16 round)
{
	bool abandoned = false;
	u32 skip = 0;

	if (w->in_round) {
		if (!w->ended) {
			skip = w->window;
			abandoned = true;
		}
		/* Session 0, where runs meet, is never left for good. */
		if (session != w->session && w->session) {
			w->left = w->session;
			w->has_left = true;
		}
		w->prev_round = w->round;
		w->prev_session = w->session;
		w->prev_base = w->base;
		w->prev_end = w->expected_vid;
		w->has_prev = true;
	}
	w->base += w->expected_vid + skip;
	w->head = (w->head + skip) % w->ring;
	w->expected_vid = 0;
	w->round = round;
	w->session = session;
	w->in_round = true;
	w->ended = false;
	return abandoned;
}

/**
 * netagg_win_probe() - The VIDs a child's probe asks about.
 * @w: the window
 * @session: the probe's session
 * @round: the probe's round
 * @vid: its first VID
 * @pos: set to @vid's position, if the round is held
 * @cur: set to whether the probe's round is the current round
 *
 * A probe never starts a round.
 *
 * Return: how many VIDs from @vid the answer covers: NETAGG_PROBE_VIDS of
 * the current round; of the previous round, only those it completed; 0 of
 * any other.
 */
u32 netagg_win_probe(const struct netagg_window *w, u32 session, u16 round,
		     u32 vid, u32 *pos, bool *cur)
{
	if (!netagg_win_pos(w, session, round, vid, pos, cur))
		return 0;
	if (*cur || w->prev_end - vid > NETAGG_PROBE_VIDS)
		return NETAGG_PROBE_VIDS;
	return w->prev_end - vid;
}

/**
 * netagg_win_quorum() - How many children complete a VID.
 * @bitmap: the tree's children
 * @quorum: the quorum in children, 0: every child
 * @quorum_pct: or in percent of them (rounded up), 0: @quorum
 *
 * Return: the quorum, at least 1 and at most the children of @bitmap
 * (0 without children).
 */
unsigned int netagg_win_quorum(u64 bitmap, u16 quorum, u8 quorum_pct)
{
	unsigned int n = hweight64(bitmap), q;

	if (quorum_pct)
		q = (n * quorum_pct + 99) / 100;
	else
		q = quorum ? quorum : n;
	if (q < 1)
		q = 1;
	return q > n ? n : q;
}

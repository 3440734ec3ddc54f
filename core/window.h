/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The window core: a tree's rounds, where each of its VIDs is summed or
 * kept, which VID completes next and when a round ends. Pure C, as the
 * reduction core is: the module's datapath (agg.c, complete.c, timers.c,
 * job.c) and the userspace aggregator (tests/tools/netagg-uagg.c) both
 * decide by it, and tests/unit/test_window.c checks it natively. It only decides: the
 * callers own the slots' sums and packets, and lock, count and send.
 *
 * A round is named by its session and its number (see linux/netagg.h).
 * VIDs of successive rounds take successive positions, and a VID's slot is
 * its position modulo ring = 2 x window: the window of VIDs being summed
 * and, behind it, the window of results a worker may still ask for again.
 * The current round's VID 0 is at position base; the previous round's at
 * prev_base, and its kept VIDs are below prev_end. So a slot's position
 * says whose it is: the current round's from base on, the previous one's
 * before (netagg_win_session()).
 *
 * The callers keep the slots, each with a struct netagg_win_slot in it, in
 * an array of ring entries: the core names slots by their index in it.
 */
#ifndef _NETAGG_WINDOW_H
#define _NETAGG_WINDOW_H

#include "window_deps.h"

enum netagg_slot_state {
	NETAGG_SLOT_FREE,
	NETAGG_SLOT_FILLING,	/* summing the children's contributions */
	NETAGG_SLOT_UP,		/* aggregator: sum sent up, kept for a resend */
	NETAGG_SLOT_DONE,	/* holds the result, kept for a resend */
};

/* One VID of a tree, as the core sees it: where it is and who is in it. */
struct netagg_win_slot {
	u32 pos;		/* position in the tree's VIDs of all rounds */
	u32 vid;
	u16 round;
	u16 count;		/* elements in the sum */
	u16 contributors;	/* worker contributions summed */
	u8 state;		/* enum netagg_slot_state */
	u8 flags;		/* NETAGG_F_FIN and NETAGG_F_WHOLE of a
				 * contribution, and NETAGG_F_REGROUPED: what
				 * it sends carries
				 */
	u64 seen;		/* children bits that contributed */
};

/* A tree's rounds and their place in its ring of slots. */
struct netagg_window {
	u32 expected_vid;	/* of the current round */
	u32 head;		/* slot of expected_vid */
	u32 base;		/* position of the current round's VID 0 */
	u32 prev_base;		/* and of the previous round's */
	u32 prev_end;		/* VIDs the previous round completed */
	u32 session;		/* of the current round */
	u32 prev_session;	/* of the previous round */
	u32 left;		/* the session last left for another one,
				 * not 0
				 */
	u16 round;
	u16 prev_round;
	bool in_round;		/* round is valid */
	bool has_prev;		/* prev_round is valid */
	bool has_left;		/* left is valid */
	bool ended;		/* the round's FIN VID completed */
	u32 window;		/* VIDs summed at once */
	u32 ring;		/* slots: 2 x window */
};

/* What netagg_win_ready() finds of a VID's contributions. */
enum netagg_win_ready {
	NETAGG_WIN_WAIT,	/* not complete */
	NETAGG_WIN_QUORUM,	/* its quorum is in, not every child */
	NETAGG_WIN_ALL,		/* every child is in */
};

/* Where netagg_win_reach() finds a position. */
enum netagg_win_reach {
	NETAGG_WIN_GONE,	/* nowhere a packet can reach */
	NETAGG_WIN_IN,		/* in the window being summed */
	NETAGG_WIN_BEHIND,	/* behind it, where results are kept */
};

void netagg_win_init(struct netagg_window *w, u32 window);
void netagg_win_reset(struct netagg_window *w);
bool netagg_win_start(struct netagg_window *w, u32 session, u16 round);
u32 netagg_win_probe(const struct netagg_window *w, u32 session, u16 round,
		     u32 vid, u32 *pos, bool *cur);
unsigned int netagg_win_quorum(u64 bitmap, u16 quorum, u8 quorum_pct);

/**
 * netagg_win_next() - The position of the VID the window waits for.
 * @w: the window
 *
 * Return: the position of the current round's expected_vid.
 */
static inline u32 netagg_win_next(const struct netagg_window *w)
{
	return w->base + w->expected_vid;
}

/**
 * netagg_win_live() - Whether a round is under way.
 * @w: the window
 *
 * Return: true while the window is in a round whose FIN VID has not
 * completed: its VIDs may still complete.
 */
static inline bool netagg_win_live(const struct netagg_window *w)
{
	return w->in_round && !w->ended;
}

/**
 * netagg_win_pos() - The position of a VID of a round the tree holds.
 * @w: the window
 * @session: the packet's session
 * @round: the packet's round
 * @vid: the packet's VID
 * @pos: set to the VID's position, if the round is held
 * @cur: set to whether @session and @round are the current round
 *
 * The current round holds every VID; the previous one only those it
 * completed.
 *
 * Return: true if the round is the current one, or the previous one and
 * @vid is below its end; false if neither holds the VID.
 */
static inline bool netagg_win_pos(const struct netagg_window *w, u32 session,
				  u16 round, u32 vid, u32 *pos, bool *cur)
{
	*cur = w->in_round && round == w->round && session == w->session;
	if (*cur) {
		*pos = w->base + vid;
		return true;
	}
	if (w->has_prev && round == w->prev_round &&
	    session == w->prev_session && vid < w->prev_end) {
		*pos = w->prev_base + vid;
		return true;
	}
	return false;
}

/**
 * netagg_win_new_round() - Whether a contribution starts a round.
 * @w: the window
 * @session: its session
 * @round: its round, one netagg_win_pos() found no VID of
 * @vid: its VID
 *
 * Another round than those held starts when a contribution of it comes:
 * its workers have all left the last one. Not the previous round (its VIDs
 * not completed are gone), not a round of the session the window last left
 * for another (that run was replaced; session 0, where workers agree one,
 * excepted), and only with a VID of its first window.
 *
 * Return: true if the contribution starts that round.
 */
static inline bool netagg_win_new_round(const struct netagg_window *w,
					u32 session, u16 round, u32 vid)
{
	if (w->has_prev && round == w->prev_round && session == w->prev_session)
		return false;
	if (w->has_left && session == w->left && session)
		return false;
	return vid < w->window;
}

/**
 * netagg_win_session() - The session of a slot's round.
 * @w: the window
 * @s: a slot of the current or the previous round
 *
 * Return: the current round's session for a position from its VID 0 on,
 * else the previous round's.
 */
static inline u32 netagg_win_session(const struct netagg_window *w,
				     const struct netagg_win_slot *s)
{
	return (s32)(s->pos - w->base) >= 0 ? w->session : w->prev_session;
}

/**
 * netagg_win_open() - The slot of a position in the window being summed.
 * @w: the window
 * @pos: a position
 * @idx: set to its slot, if it is in the window
 *
 * Return: true if @pos is one of the window's VIDs, expected_vid and those
 * after it.
 */
static inline bool netagg_win_open(const struct netagg_window *w, u32 pos,
				   u32 *idx)
{
	u32 ahead = pos - netagg_win_next(w);

	if (ahead >= w->window)
		return false;
	*idx = (w->head + ahead) % w->ring;
	return true;
}

/**
 * netagg_win_summing() - The slot a contribution is summed in.
 * @w: the window
 * @pos: its position (netagg_win_pos())
 * @cur: whether it is of the current round
 * @idx: set to the slot, if it is summed
 *
 * Return: true if a contribution at @pos is summed: of the current round,
 * not ended, in the window. False: it can only be one already summed, and
 * kept behind the window (netagg_win_behind()).
 */
static inline bool netagg_win_summing(const struct netagg_window *w, u32 pos,
				      bool cur, u32 *idx)
{
	return cur && !w->ended && netagg_win_open(w, pos, idx);
}

/**
 * netagg_win_back() - The slot some VIDs behind the head.
 * @w: the window
 * @back: how many positions behind expected_vid's, 1 to ring
 *
 * Return: the index of that slot.
 */
static inline u32 netagg_win_back(const struct netagg_window *w, u32 back)
{
	return (w->head + w->ring - back) % w->ring;
}

/**
 * netagg_win_behind() - The slot a completed position is kept in.
 * @w: the window
 * @pos: a position before expected_vid's
 * @idx: set to the slot that would keep it
 *
 * The slot keeps @pos's result only while no later position took it:
 * netagg_win_slot_kept() says.
 *
 * Return: true if @pos is within a ring behind the head.
 */
static inline bool netagg_win_behind(const struct netagg_window *w, u32 pos,
				     u32 *idx)
{
	u32 back = netagg_win_next(w) - pos;

	if (!back || back >= w->ring)
		return false;
	*idx = netagg_win_back(w, back);
	return true;
}

/**
 * netagg_win_reach() - Whether a slot's position can still be asked about.
 * @w: the window
 * @pos: the position a slot holds
 *
 * Return: NETAGG_WIN_IN for the window being summed, NETAGG_WIN_BEHIND for
 * the results kept behind it, NETAGG_WIN_GONE otherwise.
 */
static inline enum netagg_win_reach
netagg_win_reach(const struct netagg_window *w, u32 pos)
{
	u32 next = netagg_win_next(w);

	if (pos - next < w->window)
		return NETAGG_WIN_IN;
	if (next - pos < w->ring)
		return NETAGG_WIN_BEHIND;
	return NETAGG_WIN_GONE;
}

/**
 * netagg_win_slot_new() - A slot's state for the first contribution of a VID.
 * @pos: its position
 * @vid: its VID
 * @round: its round
 * @count: its elements
 *
 * Return: the slot, summing, with nobody in it yet (netagg_win_slot_add()).
 */
static inline struct netagg_win_slot netagg_win_slot_new(u32 pos, u32 vid,
							 u16 round, u16 count)
{
	return (struct netagg_win_slot) {
		.pos = pos,
		.vid = vid,
		.round = round,
		.count = count,
		.state = NETAGG_SLOT_FILLING,
	};
}

/**
 * netagg_win_slot_filling() - Whether a slot is summing a position.
 * @s: the slot
 * @pos: the position
 *
 * Return: true if @s sums @pos, not yet complete; false if it is another
 * position's (of a round given up, or two windows back) or complete.
 */
static inline bool netagg_win_slot_filling(const struct netagg_win_slot *s,
					   u32 pos)
{
	return s->state == NETAGG_SLOT_FILLING && s->pos == pos;
}

/**
 * netagg_win_slot_kept() - Whether a slot keeps a position's sum or result.
 * @s: the slot (netagg_win_behind())
 * @pos: the position
 *
 * Return: true if @s completed @pos and keeps it: its sum, sent up, or its
 * result.
 */
static inline bool netagg_win_slot_kept(const struct netagg_win_slot *s,
					u32 pos)
{
	return s->pos == pos && (s->state == NETAGG_SLOT_UP ||
				 s->state == NETAGG_SLOT_DONE);
}

/**
 * netagg_win_slot_has() - Whether a child's contribution is in a slot.
 * @s: the slot
 * @bit: the child's bit
 *
 * Return: true if child @bit contributed to the slot's sum.
 */
static inline bool netagg_win_slot_has(const struct netagg_win_slot *s,
				       unsigned int bit)
{
	return s->seen & BIT_ULL(bit);
}

/**
 * netagg_win_slot_add() - Count a child's contribution in a slot.
 * @s: the slot, summing
 * @bit: the child's bit
 * @contributors: the workers the contribution sums
 * @flags: its header's flags: NETAGG_F_FIN and NETAGG_F_WHOLE are kept
 */
static inline void netagg_win_slot_add(struct netagg_win_slot *s,
				       unsigned int bit, u16 contributors,
				       u8 flags)
{
	u32 n = (u32)s->contributors + contributors;

	s->seen |= BIT_ULL(bit);
	s->contributors = n > U16_MAX ? U16_MAX : n;
	s->flags |= flags & (NETAGG_F_FIN | NETAGG_F_WHOLE);
}

/**
 * netagg_win_slot_due() - Whether the head slot holds the VID waited for.
 * @w: the window
 * @s: the slot at @w->head
 *
 * Return: true if @s is summing expected_vid: it completes when ready
 * (netagg_win_ready()), then netagg_win_advance().
 */
static inline bool netagg_win_slot_due(const struct netagg_window *w,
				       const struct netagg_win_slot *s)
{
	return netagg_win_slot_filling(s, netagg_win_next(w));
}

/**
 * netagg_win_advance() - The head slot completed: wait for the next VID.
 * @w: the window
 * @s: the slot at @w->head, completed
 *
 * A FIN VID's completion ends the round.
 */
static inline void netagg_win_advance(struct netagg_window *w,
				      const struct netagg_win_slot *s)
{
	w->expected_vid++;
	if (++w->head == w->ring)
		w->head = 0;
	w->ended = s->flags & NETAGG_F_FIN;
}

/**
 * netagg_win_partial() - Whether VIDs may complete without every child.
 * @quorum: the tree's quorum in children, 0: none
 * @quorum_pct: or in percent of them, 0: none
 *
 * Return: true if a quorum is set.
 */
static inline bool netagg_win_partial(u16 quorum, u8 quorum_pct)
{
	return quorum || quorum_pct;
}

/**
 * netagg_win_quorate() - Whether a VID's quorum is in.
 * @seen: the children in its slot
 * @bitmap: the tree's children
 * @quorum: the tree's quorum in children
 * @quorum_pct: or in percent of them
 *
 * Return: true if at least netagg_win_quorum() of the children are in.
 */
static inline bool netagg_win_quorate(u64 seen, u64 bitmap, u16 quorum,
				      u8 quorum_pct)
{
	return hweight64(seen & bitmap) >=
	       netagg_win_quorum(bitmap, quorum, quorum_pct);
}

/**
 * netagg_win_ready() - Whether a VID may complete.
 * @s: its slot
 * @bitmap: the tree's children
 * @quorum: the tree's quorum in children, 0: none
 * @quorum_pct: or in percent of them, 0: none
 *
 * Return: NETAGG_WIN_ALL when every child of @bitmap is in;
 * NETAGG_WIN_QUORUM when a quorum is set and is in (the caller may wait
 * for the stragglers), and no contribution asked for every child
 * (NETAGG_F_WHOLE); NETAGG_WIN_WAIT otherwise.
 */
static inline enum netagg_win_ready
netagg_win_ready(const struct netagg_win_slot *s, u64 bitmap, u16 quorum,
		 u8 quorum_pct)
{
	u64 seen = s->seen;

	if ((seen & bitmap) == bitmap)
		return NETAGG_WIN_ALL;
	if (s->flags & NETAGG_F_WHOLE)
		return NETAGG_WIN_WAIT;
	if (!netagg_win_partial(quorum, quorum_pct) ||
	    !netagg_win_quorate(seen, bitmap, quorum, quorum_pct))
		return NETAGG_WIN_WAIT;
	return NETAGG_WIN_QUORUM;
}

#endif /* _NETAGG_WINDOW_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * Native unit tests of the window core: core/window.c and core/window.h
 * built for userspace, the rounds, positions, slots and kept results that
 * the module's datapath (kmod/agg.c) and the userspace aggregator
 * (tests/tools/netagg-uagg.c) both decide by. Each function is held against
 * what docs/design.md says of it; then a small root built on the core, as
 * netagg-uagg's is, is driven by workers that lose, duplicate and resend
 * packets, and every result is checked.
 *
 * Output: KTAP, "ok N what" / "not ok N what" under the plan
 * "1..WINDOW_CASES", then "# window: P passed, F failed, 0 skipped"; the
 * exit status is 1 if anything failed.
 */
#include <stdio.h>
#include "window.h"
#include "unit.h"

#define WINDOW_CASES	14

#define W	4		/* the window of most cases */
#define RING	(2 * W)

/* @n VIDs of the current round complete, the last with @fin. */
static void complete(struct netagg_window *w, u32 n, bool fin)
{
	struct netagg_win_slot s = { .flags = 0 };
	u32 i;

	for (i = 0; i < n; i++) {
		s.flags = fin && i == n - 1 ? NETAGG_F_FIN : 0;
		netagg_win_advance(w, &s);
	}
}

static void test_init(void)
{
	struct netagg_window w;
	u32 pos = 0, v;
	bool cur = true;

	netagg_win_init(&w, W);
	CHECK(w.window == W && w.ring == RING, "window %u ring %u", w.window, w.ring);
	CHECK(!w.in_round && !w.has_prev && !netagg_win_live(&w), "in a round at init");
	for (v = 0; v < 3 * W; v++) {
		CHECK(!netagg_win_pos(&w, 0, 0, v, &pos, &cur), "VID %u held at init", v);
		CHECK(netagg_win_new_round(&w, 0, 5, v) == (v < W),
		      "VID %u starts a round: %d", v, netagg_win_new_round(&w, 0, 5, v));
	}
	done("init: no round held; a round starts with a VID of its first window only");
}

static void test_start(void)
{
	struct netagg_window w;
	u32 pos, v, i;
	bool cur;

	netagg_win_init(&w, W);
	CHECK(!netagg_win_start(&w, 0, 7), "first round abandons one");
	CHECK(w.in_round && w.round == 7 && !w.has_prev && netagg_win_live(&w),
	      "not in round 7");
	CHECK(netagg_win_next(&w) == 0 && w.head == 0, "next %u head %u",
	      netagg_win_next(&w), w.head);
	for (v = 0; v < 100; v++) {
		pos = ~0u;
		cur = false;
		CHECK(netagg_win_pos(&w, 0, 7, v, &pos, &cur) && cur && pos == v,
		      "round 7 VID %u: pos %u cur %d", v, pos, cur);
		CHECK(!netagg_win_pos(&w, 0, 8, v, &pos, &cur), "round 8 VID %u held", v);
	}
	/* The head walks the ring, one slot per VID completed. */
	for (i = 0; i < 3 * RING; i++) {
		CHECK(w.expected_vid == i && w.head == i % RING,
		      "after %u VIDs: expected %u head %u", i, w.expected_vid, w.head);
		CHECK(netagg_win_open(&w, netagg_win_next(&w), &v) && v == w.head,
		      "expected_vid's slot %u, head %u", v, w.head);
		complete(&w, 1, false);
		CHECK(netagg_win_live(&w), "round ended without FIN");
	}
	done("start: round at position 0, VID v at v; expected_vid and head advance, head wraps at 2 x window");
}

static void test_next_round(void)
{
	struct netagg_window w;
	u32 pos, v;
	bool cur;

	netagg_win_init(&w, W);
	netagg_win_start(&w, 0, 1);
	complete(&w, 5, true);
	CHECK(w.ended && !netagg_win_live(&w), "FIN did not end the round");
	CHECK(!netagg_win_start(&w, 0, 2), "an ended round was abandoned");
	CHECK(w.round == 2 && w.prev_round == 1 && w.has_prev && !w.ended,
	      "round %u prev %u has_prev %d ended %d", w.round, w.prev_round,
	      w.has_prev, w.ended);
	CHECK(w.base == 5 && w.prev_base == 0 && w.prev_end == 5 &&
	      w.expected_vid == 0 && w.head == 5,
	      "base %u prev_base %u prev_end %u expected %u head %u", w.base,
	      w.prev_base, w.prev_end, w.expected_vid, w.head);
	for (v = 0; v < 2 * W; v++) {
		CHECK(netagg_win_pos(&w, 0, 2, v, &pos, &cur) && cur && pos == 5 + v,
		      "round 2 VID %u: pos %u", v, pos);
		CHECK(netagg_win_pos(&w, 0, 1, v, &pos, &cur) == (v < 5),
		      "round 1 VID %u held: %d", v, v < 5);
		if (v < 5)
			CHECK(pos == v && !cur, "round 1 VID %u: pos %u cur %d", v, pos, cur);
	}
	/* Never the previous round again; another, with a VID of its window. */
	CHECK(!netagg_win_new_round(&w, 0, 1, 0), "the previous round starts again");
	CHECK(!netagg_win_new_round(&w, 0, 1, 7), "the previous round starts again");
	CHECK(netagg_win_new_round(&w, 0, 3, W - 1) && !netagg_win_new_round(&w, 0, 3, W),
	      "round 3 starts with VIDs 0..%u only", W - 1);

	/* A third round: the first is forgotten. */
	complete(&w, 3, true);
	netagg_win_start(&w, 0, 3);
	CHECK(w.prev_round == 2 && w.prev_base == 5 && w.prev_end == 3 && w.base == 8,
	      "prev %u prev_base %u prev_end %u base %u", w.prev_round,
	      w.prev_base, w.prev_end, w.base);
	CHECK(!netagg_win_pos(&w, 0, 1, 0, &pos, &cur), "round 1 still held");
	CHECK(netagg_win_new_round(&w, 0, 1, 0), "round 1 cannot start again");
	done("rounds: FIN ends one, the next takes the following positions, the previous keeps its completed VIDs");
}

/*
 * Sessions: a round is its session and its number. A new run's round of
 * the same number is another round, whatever the last run's state; a
 * session left for another never starts a round again, but session 0.
 */
static void test_session(void)
{
	struct netagg_window w;
	struct netagg_win_slot s;
	u32 pos;
	bool cur;

	netagg_win_init(&w, W);
	netagg_win_start(&w, 0xaaaa, 15);
	complete(&w, 2, false);		/* a run dies mid-round */
	CHECK(!netagg_win_pos(&w, 0xbbbb, 15, 0, &pos, &cur),
	      "another session's round 15 taken for the current one");
	CHECK(netagg_win_new_round(&w, 0xbbbb, 15, 0),
	      "another session's round 15 does not start");
	CHECK(netagg_win_start(&w, 0xbbbb, 15), "the dead run's round not given up");
	CHECK(w.session == 0xbbbb && w.prev_session == 0xaaaa && w.has_left &&
	      w.left == 0xaaaa, "session %#x prev %#x left %#x (%d)", w.session,
	      w.prev_session, w.left, w.has_left);
	CHECK(netagg_win_pos(&w, 0xbbbb, 15, 1, &pos, &cur) && cur &&
	      pos == 2 + W + 1, "the new round's VID 1 at %u", pos);
	CHECK(netagg_win_pos(&w, 0xaaaa, 15, 1, &pos, &cur) && !cur && pos == 1,
	      "the dead run's completed VID 1 not kept at its own place: %u", pos);
	CHECK(!netagg_win_pos(&w, 0xaaaa, 15, 2, &pos, &cur),
	      "the dead run's VID 2, never completed, held");
	/* The left session never comes back: its late packets are refused. */
	CHECK(!netagg_win_new_round(&w, 0xaaaa, 16, 0), "the left session starts round 16");
	complete(&w, 1, true);
	netagg_win_start(&w, 0xbbbb, 16);
	CHECK(!netagg_win_new_round(&w, 0xaaaa, 17, 0) && w.left == 0xaaaa,
	      "the left session forgotten after a round of the new one");
	/* Whose a slot is: by its position. */
	s = netagg_win_slot_new(w.base + 3, 3, 16, 1);
	CHECK(netagg_win_session(&w, &s) == 0xbbbb, "current slot's session %#x",
	      netagg_win_session(&w, &s));
	s = netagg_win_slot_new(w.prev_base, 0, 15, 1);
	CHECK(netagg_win_session(&w, &s) == 0xbbbb, "previous slot's session %#x",
	      netagg_win_session(&w, &s));
	/*
	 * Session 0, where runs meet to join, is never left: a run that
	 * joins in between does not make the node forget the one it replaced.
	 */
	netagg_win_start(&w, 0, 0);
	complete(&w, 1, true);
	CHECK(w.left == 0xbbbb, "the session left before a join: %#x", w.left);
	netagg_win_start(&w, 0x1234, 0);
	CHECK(w.left == 0xbbbb && netagg_win_new_round(&w, 0, 1, 0) &&
	      !netagg_win_new_round(&w, 0xbbbb, 1, 0),
	      "session 0 left refuses a new round of it, or the run it replaced is forgotten: left %#x",
	      w.left);
	s = netagg_win_slot_new(w.prev_base, 0, 0, 1);
	CHECK(netagg_win_session(&w, &s) == 0, "previous slot's session %#x",
	      netagg_win_session(&w, &s));
	CHECK(netagg_win_probe(&w, 0, 0, 0, &pos, &cur) == 1 && !cur,
	      "a probe of the previous session's round");
	done("sessions: a round is (session, number); a new run's round 15 is not the dead run's; a left session never starts again, but session 0");
}

static void test_abandon(void)
{
	struct netagg_window w;
	u32 idx = 0, v, a;
	bool cur;

	netagg_win_init(&w, W);
	netagg_win_start(&w, 0, 1);
	complete(&w, 3, false);
	CHECK(netagg_win_start(&w, 0, 2), "an unended round was not given up");
	CHECK(w.prev_end == 3 && w.base == 3 + W && w.head == (3 + W) % RING,
	      "prev_end %u base %u head %u", w.prev_end, w.base, w.head);
	/* The new round's window shares no slot with the one given up. */
	for (v = 0; v < W; v++) {
		CHECK(netagg_win_pos(&w, 0, 2, v, &idx, &cur) &&
		      netagg_win_open(&w, idx, &idx), "VID %u not in the window", v);
		for (a = 0; a < W; a++)
			CHECK(idx != (3 + a) % RING,
			      "VID %u takes slot %u of the window given up", v, idx);
	}
	/* Given up at once, twice: each skips a window. */
	CHECK(netagg_win_start(&w, 0, 3) && w.base == 3 + 2 * W && w.prev_end == 0,
	      "base %u prev_end %u", w.base, w.prev_end);
	done("round given up: its window of positions skipped, its slots not the new round's");
}

static void test_window(void)
{
	struct netagg_window w;
	u32 next, pos, idx;
	int ahead;
	bool in;

	netagg_win_init(&w, W);
	netagg_win_start(&w, 0, 1);
	complete(&w, 6, false);
	next = netagg_win_next(&w);
	for (ahead = -3 * W; ahead < 3 * W; ahead++) {
		pos = next + ahead;
		in = ahead >= 0 && ahead < W;
		idx = ~0u;
		CHECK(netagg_win_summing(&w, pos, true, &idx) == in,
		      "ahead %d summed: %d", ahead, !in);
		if (in)
			CHECK(idx == (w.head + ahead) % RING, "ahead %d: slot %u", ahead, idx);
		CHECK(!netagg_win_summing(&w, pos, false, &idx),
		      "ahead %d of the previous round summed", ahead);
		CHECK(netagg_win_reach(&w, pos) ==
		      (in ? NETAGG_WIN_IN : ahead < 0 && ahead > -RING ?
		       NETAGG_WIN_BEHIND : NETAGG_WIN_GONE),
		      "ahead %d: reach %d", ahead, netagg_win_reach(&w, pos));
	}
	complete(&w, 1, true);
	for (ahead = -3 * W; ahead < 3 * W; ahead++)
		CHECK(!netagg_win_summing(&w, netagg_win_next(&w) + ahead, true, &idx),
		      "ahead %d summed after FIN", ahead);
	done("window: VIDs expected_vid..+window-1 of the current round summed, in slot (head + ahead) mod ring; none after FIN");
}

static void test_behind(void)
{
	struct netagg_window w;
	u32 next, idx;
	int back;

	netagg_win_init(&w, W);
	netagg_win_start(&w, 0, 1);
	complete(&w, 3 * RING + 3, false);
	next = netagg_win_next(&w);
	for (back = -W; back <= 2 * RING; back++) {
		bool want = back >= 1 && back < RING;

		idx = ~0u;
		CHECK(netagg_win_behind(&w, next - back, &idx) == want,
		      "back %d behind: %d", back, !want);
		if (want)
			CHECK(idx == (w.head + RING - back) % RING &&
			      idx == netagg_win_back(&w, back), "back %d: slot %u", back, idx);
	}
	done("behind: positions 1..ring-1 behind expected_vid's, in the slots behind the head");
}

/* A root on the core, as tests/tools/netagg-uagg.c is: no sums, a log. */
enum { AGGREGATED, DUPLICATE, RESENT, DROP_ROUND, DROP_WINDOW };

struct done_vid {
	u32 pos, vid;
	u16 round, contributors;
	bool fin;
};

struct root {
	struct netagg_window w;
	struct netagg_win_slot slots[RING];
	u64 all;
	u16 quorum;
	struct done_vid log[4096];
	unsigned int nlog;
	const struct netagg_win_slot *resent;	/* the last kept result resent */
};

static void root_init(struct root *r, unsigned int children)
{
	memset(r, 0, sizeof(*r));
	netagg_win_init(&r->w, W);
	r->all = (1ULL << children) - 1;
}

static void root_drain(struct root *r)
{
	struct netagg_win_slot *s;

	while (netagg_win_live(&r->w)) {
		s = &r->slots[r->w.head];
		if (!netagg_win_slot_due(&r->w, s) ||
		    netagg_win_ready(s, r->all, r->quorum, 0) == NETAGG_WIN_WAIT)
			return;
		s->state = NETAGG_SLOT_DONE;
		if (r->nlog < sizeof(r->log) / sizeof(r->log[0]))
			r->log[r->nlog++] = (struct done_vid) {
				s->pos, s->vid, s->round, s->contributors,
				s->flags & NETAGG_F_FIN,
			};
		netagg_win_advance(&r->w, s);
	}
}

static struct netagg_win_slot *root_kept(struct root *r, u32 pos)
{
	u32 i;

	if (!netagg_win_behind(&r->w, pos, &i) ||
	    !netagg_win_slot_kept(&r->slots[i], pos))
		return NULL;
	return &r->slots[i];
}

static int root_rx(struct root *r, u16 round, u32 vid, unsigned int bit, u8 flags)
{
	struct netagg_win_slot *s;
	u32 pos, i;
	bool cur;

	r->resent = NULL;
	if (!netagg_win_pos(&r->w, 0, round, vid, &pos, &cur)) {
		if (!netagg_win_new_round(&r->w, 0, round, vid))
			return DROP_ROUND;
		netagg_win_start(&r->w, 0, round);
		pos = r->w.base + vid;
		cur = true;
	}
	if (!netagg_win_summing(&r->w, pos, cur, &i)) {
		s = root_kept(r, pos);
		if (!s || !netagg_win_slot_has(s, bit))
			return DROP_WINDOW;
		if (!(flags & NETAGG_F_RETRY))
			return DUPLICATE;
		r->resent = s;
		return RESENT;
	}
	s = &r->slots[i];
	if (!netagg_win_slot_filling(s, pos))
		*s = netagg_win_slot_new(pos, vid, round, 1);
	else if (netagg_win_slot_has(s, bit))
		return DUPLICATE;
	netagg_win_slot_add(s, bit, 1, flags);
	root_drain(r);
	return AGGREGATED;
}

static void test_order(void)
{
	struct root r;
	unsigned int c, i;
	u32 v;

	/* Sent W-1 .. 0 by each child: they leave 0 .. W-1. */
	root_init(&r, 3);
	for (c = 0; c < 3; c++)
		for (v = W; v-- > 0;)
			CHECK(root_rx(&r, 1, v, c, v == W - 1 ? NETAGG_F_FIN : 0) ==
			      AGGREGATED, "child %u VID %u not summed", c, v);
	CHECK(r.nlog == W, "%u VIDs completed, want %u", r.nlog, W);
	for (i = 0; i < r.nlog; i++)
		CHECK(r.log[i].vid == i && r.log[i].contributors == 3 &&
		      r.log[i].fin == (i == W - 1), "result %u: VID %u contributors %u fin %d",
		      i, r.log[i].vid, r.log[i].contributors, r.log[i].fin);
	CHECK(!netagg_win_live(&r.w), "round not ended by its FIN VID");
	/* Out of the window, or of no round held: not summed. */
	root_init(&r, 2);
	CHECK(root_rx(&r, 1, W, 0, 0) == DROP_ROUND, "round started beyond its first window");
	CHECK(root_rx(&r, 1, 0, 0, 0) == AGGREGATED, "VID 0 not summed");
	CHECK(root_rx(&r, 1, W, 0, 0) == DROP_WINDOW, "VID %u beyond the window summed", W);
	CHECK(root_rx(&r, 1, W - 1, 0, 0) == AGGREGATED, "VID %u not summed", W - 1);
	CHECK(root_rx(&r, 1, 0, 0, 0) == DUPLICATE, "a duplicate summed");
	CHECK(r.nlog == 0, "completed without child 1");
	done("root on the core: results leave in VID order, FIN ends the round; beyond the window and duplicates refused");
}

static void test_kept(void)
{
	struct root r;
	u32 v, p, next;

	/* One child: each VID completes as it comes. */
	root_init(&r, 1);
	for (v = 0; v < 3 * RING; v++) {
		root_rx(&r, 1, v, 0, 0);
		next = netagg_win_next(&r.w);
		for (p = 0; p <= v + 1; p++) {
			bool want = p < next && next - p < RING;
			struct netagg_win_slot *s = root_kept(&r, p);

			CHECK(!!s == want, "after VID %u: VID %u kept %d", v, p, !want);
			if (s)
				CHECK(s->vid == p && s->pos == p, "VID %u: slot of VID %u", p, s->vid);
		}
	}
	/*
	 * Two children, child 0 ahead by a window: its contributions take
	 * the slots of the results a window behind, which are then gone.
	 */
	root_init(&r, 2);
	for (v = 0; v < 10; v++) {
		root_rx(&r, 1, v, 0, 0);
		root_rx(&r, 1, v, 1, 0);
	}
	for (p = 3; p < 10; p++)
		CHECK(root_kept(&r, p), "VID %u not kept", p);
	for (v = 10; v < 10 + W; v++)
		CHECK(root_rx(&r, 1, v, 0, 0) == AGGREGATED, "VID %u not summed", v);
	for (p = 0; p < 10; p++) {
		bool want = p >= 10 + W - RING;

		CHECK(!!root_kept(&r, p) == want, "VID %u kept %d with VID %u summing",
		      p, !want, p + RING);
		if (p >= 3)
			CHECK(netagg_win_behind(&r.w, p, &v), "VID %u not behind", p);
	}
	/* A RETRY finds the kept result; a plain duplicate only counts. */
	CHECK(root_rx(&r, 1, 9, 1, NETAGG_F_RETRY) == RESENT && r.resent &&
	      r.resent->vid == 9, "RETRY of VID 9 not answered");
	CHECK(root_rx(&r, 1, 9, 1, 0) == DUPLICATE, "duplicate of VID 9");
	CHECK(root_rx(&r, 1, 3, 1, NETAGG_F_RETRY) == DROP_WINDOW,
	      "RETRY of VID 3 answered after its slot was reused");
	done("kept results: found while their slot is not reused (1..ring-1 behind), not after");
}

static void test_slot(void)
{
	struct netagg_win_slot s = netagg_win_slot_new(12, 4, 3, 100);
	unsigned int bit;

	CHECK(s.pos == 12 && s.vid == 4 && s.round == 3 && s.count == 100 &&
	      s.state == NETAGG_SLOT_FILLING && !s.seen && !s.contributors &&
	      !s.flags, "new slot");
	CHECK(netagg_win_slot_filling(&s, 12) && !netagg_win_slot_filling(&s, 12 + RING),
	      "filling");
	CHECK(!netagg_win_slot_kept(&s, 12), "a filling slot is kept");
	netagg_win_slot_add(&s, 5, 2, NETAGG_F_RETRY | NETAGG_F_PROBE | NETAGG_F_RESULT |
			    NETAGG_F_REGROUPED);
	CHECK(s.seen == 1ULL << 5 && s.contributors == 2 && !s.flags,
	      "seen %llx contributors %u flags %x", (unsigned long long)s.seen,
	      s.contributors, s.flags);
	netagg_win_slot_add(&s, 63, U16_MAX - 1, NETAGG_F_FIN);
	CHECK(s.contributors == U16_MAX && s.flags == NETAGG_F_FIN,
	      "contributors %u flags %x", s.contributors, s.flags);
	for (bit = 0; bit < 64; bit++)
		CHECK(netagg_win_slot_has(&s, bit) == (bit == 5 || bit == 63),
		      "bit %u", bit);
	s.state = NETAGG_SLOT_UP;
	CHECK(netagg_win_slot_kept(&s, 12) && !netagg_win_slot_kept(&s, 4), "up kept");
	s.state = NETAGG_SLOT_DONE;
	CHECK(netagg_win_slot_kept(&s, 12) && !netagg_win_slot_filling(&s, 12), "done kept");
	s.state = NETAGG_SLOT_FREE;
	CHECK(!netagg_win_slot_kept(&s, 12) && !netagg_win_slot_filling(&s, 12), "free");
	done("slots: FIN kept of a contribution's flags, contributors saturate, filling and kept states");
}

static void test_ready(void)
{
	static const struct {
		u64 seen, bitmap;
		u16 quorum;
		u8 pct;
		unsigned int q;		/* netagg_win_quorum() */
		enum netagg_win_ready want;
	} c[] = {
		{ 0x7, 0x7, 0, 0, 3, NETAGG_WIN_ALL },
		{ 0x3, 0x7, 0, 0, 3, NETAGG_WIN_WAIT },
		{ 0xf, 0x7, 0, 0, 3, NETAGG_WIN_ALL },		/* a removed child's too */
		{ 0x8, 0x7, 0, 0, 3, NETAGG_WIN_WAIT },
		{ 0x0, 0x0, 0, 0, 0, NETAGG_WIN_ALL },		/* no children */
		{ 0x3, 0x7, 2, 0, 2, NETAGG_WIN_QUORUM },
		{ 0x1, 0x7, 2, 0, 2, NETAGG_WIN_WAIT },
		{ 0x9, 0x7, 2, 0, 2, NETAGG_WIN_WAIT },		/* not a child's */
		{ 0x7, 0x7, 2, 0, 2, NETAGG_WIN_ALL },
		{ 0x3, 0x7, 9, 0, 3, NETAGG_WIN_WAIT },		/* at most all */
		{ 0x1, 0x7, 0, 50, 2, NETAGG_WIN_WAIT },	/* 1.5 rounds up */
		{ 0x5, 0x7, 0, 50, 2, NETAGG_WIN_QUORUM },
		{ 0x1, 0x7, 0, 1, 1, NETAGG_WIN_QUORUM },	/* at least 1 */
		{ 0x0, 0x7, 0, 1, 1, NETAGG_WIN_WAIT },
		{ 0xff, 0xffff, 0, 50, 8, NETAGG_WIN_QUORUM },
		{ 0x7f, 0xffff, 0, 50, 8, NETAGG_WIN_WAIT },
		{ 0x7f, 0xffff, 7, 50, 8, NETAGG_WIN_WAIT },	/* percent first */
		{ ~0ull >> 1, ~0ull, 63, 0, 63, NETAGG_WIN_QUORUM },
		{ ~0ull >> 1, ~0ull, 0, 100, 64, NETAGG_WIN_WAIT },
	};
	unsigned int i, q;

	struct netagg_win_slot s = { .flags = 0 };
	enum netagg_win_ready got;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		q = netagg_win_quorum(c[i].bitmap, c[i].quorum, c[i].pct);
		CHECK(q == c[i].q, "case %u: quorum %u, want %u", i, q, c[i].q);
		s.seen = c[i].seen;
		s.flags = 0;
		got = netagg_win_ready(&s, c[i].bitmap, c[i].quorum, c[i].pct);
		CHECK(got == c[i].want, "case %u: ready %d, want %d", i, got, c[i].want);
		/* A contribution that asked for every child: no quorum. */
		netagg_win_slot_add(&s, 63, 1, NETAGG_F_WHOLE);
		s.seen = c[i].seen;
		got = netagg_win_ready(&s, c[i].bitmap, c[i].quorum, c[i].pct);
		CHECK(got == (c[i].want == NETAGG_WIN_QUORUM ? NETAGG_WIN_WAIT : c[i].want),
		      "case %u, WHOLE: ready %d", i, got);
		CHECK(netagg_win_partial(c[i].quorum, c[i].pct) == (c[i].quorum || c[i].pct),
		      "case %u: partial", i);
	}
	done("readiness: every child, or a quorum (children or percent, 1..all) when one is set and no contribution asked for all (WHOLE)");
}

static void test_probe(void)
{
	struct netagg_window w;
	u32 pos;
	bool cur;

	netagg_win_init(&w, W);
	CHECK(netagg_win_probe(&w, 0, 1, 0, &pos, &cur) == 0, "probe starts a round");
	CHECK(!w.in_round, "probe started a round");
	netagg_win_start(&w, 0, 1);
	complete(&w, 100, true);
	netagg_win_start(&w, 0, 2);
	CHECK(netagg_win_probe(&w, 0, 2, 5, &pos, &cur) == NETAGG_PROBE_VIDS && cur &&
	      pos == 105, "current round: pos %u", pos);
	CHECK(netagg_win_probe(&w, 0, 2, 99, &pos, &cur) == NETAGG_PROBE_VIDS && cur &&
	      pos == 199, "current round, VID 99: pos %u", pos);
	CHECK(netagg_win_probe(&w, 0, 1, 10, &pos, &cur) == NETAGG_PROBE_VIDS && !cur &&
	      pos == 10, "previous round, 90 VIDs left");
	CHECK(netagg_win_probe(&w, 0, 1, 60, &pos, &cur) == 40 && pos == 60,
	      "previous round, 40 VIDs left");
	CHECK(netagg_win_probe(&w, 0, 1, 99, &pos, &cur) == 1, "previous round, its last VID");
	CHECK(netagg_win_probe(&w, 0, 1, 100, &pos, &cur) == 0, "previous round beyond its end");
	CHECK(netagg_win_probe(&w, 0, 3, 0, &pos, &cur) == 0, "another round");
	done("probes: 64 VIDs of the current round, the completed ones of the previous, none of another");
}

static void test_reset(void)
{
	struct netagg_window w;
	u32 pos;
	bool cur;

	netagg_win_init(&w, W);
	netagg_win_start(&w, 0, 1);
	complete(&w, 7, true);
	netagg_win_start(&w, 0, 2);
	complete(&w, 2, false);
	netagg_win_reset(&w);
	CHECK(w.window == W && w.ring == RING, "window %u ring %u", w.window, w.ring);
	CHECK(!w.in_round && !w.has_prev && !w.ended && w.base == 0 && w.head == 0 &&
	      w.expected_vid == 0, "a round left after reset");
	CHECK(!netagg_win_pos(&w, 0, 1, 0, &pos, &cur) && !netagg_win_pos(&w, 0, 2, 0, &pos, &cur),
	      "a round held after reset");
	CHECK(netagg_win_new_round(&w, 0, 1, 0) && !netagg_win_start(&w, 0, 1) && w.base == 0,
	      "round 1 after reset");
	done("reset: every round forgotten, any starts again at position 0");
}

/*
 * Workers as libnetagg's: at most W VIDs in flight, VID v + W only after
 * v's result; results lost, packets duplicated, RETRY for a result that
 * did not come. Every result must be the VID asked for, of its round, with
 * every child in it, and every worker must get all of them.
 */
#define SIM_CHILDREN	3
#define SIM_VIDS	(3 * RING + 1)
#define SIM_ROUNDS	4
#define SIM_STEPS	200000

struct worker {
	u16 round;
	u32 sent;			/* VIDs sent of the round */
	bool got[SIM_VIDS];
	u32 ngot, low;			/* results had; lowest missing */
};

static void deliver(struct worker *wk, const struct done_vid *d, u16 round, u32 *bad_results)
{
	if (d->round != round || d->vid >= SIM_VIDS ||
	    d->contributors != SIM_CHILDREN || d->fin != (d->vid == SIM_VIDS - 1)) {
		(*bad_results)++;
		return;
	}
	if (wk->round != round || wk->got[d->vid])
		return;
	wk->got[d->vid] = true;
	wk->ngot++;
	while (wk->low < SIM_VIDS && wk->got[wk->low])
		wk->low++;
}

static void test_sim(void)
{
	static struct root r;
	struct worker wk[SIM_CHILDREN] = {};
	u32 step, bad = 0, c, v, results = 0, i, finished = 0;
	unsigned int res;

	root_init(&r, SIM_CHILDREN);
	for (c = 0; c < SIM_CHILDREN; c++)
		wk[c].round = 1;
	for (step = 0; step < SIM_STEPS && finished < SIM_CHILDREN * SIM_ROUNDS; step++) {
		struct worker *w;
		unsigned int before = r.nlog;
		u8 flags = 0;

		c = rnd32() % SIM_CHILDREN;
		w = &wk[c];
		if (w->round > SIM_ROUNDS)
			continue;
		if (w->ngot == SIM_VIDS) {
			/* Round done: the next, from VID 0. */
			memset(w->got, 0, sizeof(w->got));
			w->ngot = w->sent = w->low = 0;
			w->round++;
			finished++;
			continue;
		}
		if (w->sent < SIM_VIDS && w->sent < w->low + W && rnd32() % 4) {
			v = w->sent++;
		} else if (w->sent > w->low) {
			/* A VID in flight again: resent, or duplicated by the network. */
			v = w->low + rnd32() % (w->sent - w->low);
			flags = rnd32() % 2 ? NETAGG_F_RETRY : 0;
		} else {
			continue;
		}
		if (v == SIM_VIDS - 1)
			flags |= NETAGG_F_FIN;
		res = root_rx(&r, w->round, v, c, flags);
		if (res == RESENT) {
			struct done_vid d = {
				r.resent->pos, r.resent->vid, r.resent->round,
				r.resent->contributors, r.resent->flags & NETAGG_F_FIN,
			};

			if (d.vid != v)
				bad++;
			if (rnd32() % 4)
				deliver(w, &d, w->round, &bad);
		} else if (res == DROP_ROUND || res == DROP_WINDOW) {
			/* A worker's own VID in flight is always held. */
			mismatch("step %u: child %u round %u VID %u refused (%u)", step, c,
				 w->round, v, res);
		}
		/* New results to every child, each lost one time in four. */
		for (i = before; i < r.nlog; i++) {
			results++;
			if (i && r.log[i].pos != r.log[i - 1].pos + 1 &&
			    r.log[i].vid != 0)
				bad++;
			for (c = 0; c < SIM_CHILDREN; c++)
				if (rnd32() % 4)
					deliver(&wk[c], &r.log[i], r.log[i].round, &bad);
		}
		checked++;
	}
	if (r.nlog == sizeof(r.log) / sizeof(r.log[0]))
		mismatch("log full");
	CHECK(finished == SIM_CHILDREN * SIM_ROUNDS, "%u of %u worker rounds finished in %u steps",
	      finished, SIM_CHILDREN * SIM_ROUNDS, step);
	CHECK(!bad, "%u wrong results", bad);
	CHECK(results == SIM_VIDS * SIM_ROUNDS, "%u VIDs completed, want %u", results,
	      SIM_VIDS * SIM_ROUNDS);
	done("root on the core with lossy, duplicating, resending workers: every result right, each VID once, every round finished");
}

int main(void)
{
	printf("KTAP version 1\n1..%d\n", WINDOW_CASES);
	test_init();
	test_start();
	test_next_round();
	test_session();
	test_abandon();
	test_window();
	test_behind();
	test_order();
	test_kept();
	test_slot();
	test_ready();
	test_probe();
	test_reset();
	test_sim();
	printf("# window: %u passed, %u failed, 0 skipped\n", passed, failed);
	return failed ? 1 : 0;
}

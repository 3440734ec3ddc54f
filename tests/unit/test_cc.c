// SPDX-License-Identifier: GPL-2.0
/*
 * Native unit tests of libnetagg's congestion controller (lib/cc.c, one
 * window a path): slow start, CUBIC's growth, cuts (by half) for marks
 * and losses, DCTCP's alpha / 2, once a window, a loss found spurious
 * undone, the restart after an idle path, the window's floor; then a
 * bottleneck simulated packet by packet, where a job of four trees on one
 * path meets a TCP flow (Reno with ECN, RFC 5681 and 3168, and CUBIC, RFC
 * 9438, written here apart from lib/cc.c, in floating point as the RFCs
 * put them): the two split the link about evenly on a drop-tail queue and
 * on marking ones, which four windows of their own (one a tree, as the
 * library had before) do not.
 *
 * Output: KTAP, "ok N what" / "not ok N what" under the plan "1..CC_CASES",
 * then "# cc: P passed, F failed, 0 skipped"; the exit status is 1 if
 * anything failed.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include "cc.h"
#include "unit.h"

#define CC_CASES	16
#define RTT		1000	/* microseconds, a round trip */

/* The chunks in flight, in the order sent: their numbers. */
static uint64_t fifo[4096];
static unsigned int fifo_head, fifo_len;
static uint64_t now = 1;	/* microseconds: each result a microsecond on */

/* @n chunks sent now, as send.c does. */
static void send_n(struct netagg_cc *cc, unsigned int n)
{
	for (unsigned int i = 0; i < n && fifo_len < 4096; i++)
		fifo[(fifo_head + fifo_len++) % 4096] = netagg_cc_sent(cc, now, 200000);
}

/* The results of the @n oldest chunks in flight, @marked of them CE. */
static void results(struct netagg_cc *cc, unsigned int n, unsigned int marked)
{
	for (unsigned int i = 0; i < n && fifo_len; i++) {
		netagg_cc_gone(cc);
		netagg_cc_result(cc, fifo[fifo_head], i < marked, ++now);
		fifo_head = (fifo_head + 1) % 4096;
		fifo_len--;
	}
}

/* A round trip: @n chunks sent, then their results, @marked of them CE. */
static void round_trip(struct netagg_cc *cc, unsigned int n, unsigned int marked)
{
	send_n(cc, n);
	now += RTT;
	results(cc, n, marked);
}

/* A fresh controller, nothing in flight. */
static void fresh(struct netagg_cc *cc, unsigned int max, bool dctcp)
{
	netagg_cc_init(cc, max, dctcp);
	fifo_head = 0;
	fifo_len = 0;
}

static void test_init(void)
{
	struct netagg_cc cc;

	fresh(&cc, 256, false);
	CHECK(cc.cwnd == NETAGG_CC_INIT && cc.ssthresh == 256 && cc.cut_min == 256 &&
	      !cc.inflight, "starts at %u (ssthresh %u, cut_min %u)", cc.cwnd, cc.ssthresh,
	      cc.cut_min);
	fresh(&cc, 4, false);
	CHECK(cc.cwnd == 4, "a path of 4 slots starts at %u", cc.cwnd);
	fresh(&cc, 1, false);
	send_n(&cc, 1);
	CHECK(!netagg_cc_open(&cc) && netagg_cc_admits(&cc, true) && !netagg_cc_admits(&cc, false),
	      "full: only an idle tree may send");
	CHECK(cc.sent == 1 && fifo[0] == 0, "chunks numbered from 0 (%" PRIu64 " sent)", cc.sent);
	done("init: 10 chunks (or the rings' room), slow start up to it");
}

/* Slow start: every result adds one, so a window's results double it. */
static void test_slow_start(void)
{
	struct netagg_cc cc;
	unsigned int rounds = 0;

	fresh(&cc, 256, false);
	while (cc.cwnd < 256 && rounds < 20) {
		unsigned int w = cc.cwnd;

		CHECK(netagg_cc_open(&cc), "round %u: the window is open", rounds);
		send_n(&cc, w);
		CHECK(!netagg_cc_open(&cc), "round %u: %u in flight fill it", rounds, w);
		now += RTT;
		results(&cc, w, 0);
		CHECK(cc.cwnd == (2 * w < 256 ? 2 * w : 256), "round %u: %u -> %u", rounds, w,
		      cc.cwnd);
		rounds++;
	}
	CHECK(rounds == 5, "10 to 256 in %u round trips", rounds);
	round_trip(&cc, 256, 0);
	CHECK(cc.cwnd == 256, "never past the rings' room: %u", cc.cwnd);
	done("slow start doubles a round trip, up to the rings' room");
}

/*
 * A mark halves the window, once a window: marks on chunks sent before
 * the cut are its event. Then it grows; round trips of a millisecond are
 * Reno's part of CUBIC, a chunk each.
 */
static void test_ce_classic(void)
{
	struct netagg_cc cc;
	unsigned int before;

	fresh(&cc, 256, false);
	round_trip(&cc, 10, 0);
	round_trip(&cc, 20, 0);
	round_trip(&cc, 40, 0);
	round_trip(&cc, 20, 0);
	CHECK(cc.cwnd == 100, "grown to %u", cc.cwnd);
	send_n(&cc, 100);
	results(&cc, 5, 5);
	CHECK(cc.cwnd == 50 && cc.ssthresh == 50 && cc.w_max == 100 && cc.ce_cuts == 1,
	      "five marks of one window: one cut, to %u (W_max %u, %" PRIu64 " cuts)", cc.cwnd,
	      cc.w_max, cc.ce_cuts);
	results(&cc, 45, 45);
	results(&cc, 50, 0);
	CHECK(cc.cwnd == 50 && cc.ce_cuts == 1,
	      "the rest of that window, marked or not: no cut, no growth (%u)", cc.cwnd);
	for (int i = 0; i < 10; i++)
		round_trip(&cc, cc.cwnd, 0);
	CHECK(cc.cwnd >= 58 && cc.cwnd <= 60, "10 round trips of 1 ms after: %u (Reno: 60)",
	      cc.cwnd);
	before = cc.cwnd;
	round_trip(&cc, 1, 1);
	CHECK(cc.cwnd == before / 2 && cc.w_max == before * 3 / 4 &&
	      cc.ce_cuts == 2 && cc.cut_min == cc.cwnd,
	      "a mark of a chunk sent after the cut: %u -> %u, W_max %u (fast convergence)",
	      before, cc.cwnd, cc.w_max);
	for (int i = 0; i < 10; i++)
		round_trip(&cc, 1, 1);
	CHECK(cc.cwnd == NETAGG_CC_MIN && cc.cut_min == NETAGG_CC_MIN,
	      "never below %u: %u", NETAGG_CC_MIN, cc.cwnd);
	done("CE, classic: halved once a window, then CUBIC's growth");
}

/* DCTCP: alpha follows the fraction marked; a cut takes alpha / 2. */
static void test_ce_dctcp(void)
{
	struct netagg_cc cc;

	fresh(&cc, 1000, true);
	/* 100 windows of 100 results, a quarter marked: alpha -> 1/4. */
	for (int i = 0; i < 100; i++) {
		cc.cwnd = 200;	/* held, to see the cut alpha gives */
		send_n(&cc, 100);
		results(&cc, 75, 0);
		results(&cc, 25, 25);
	}
	CHECK(cc.alpha > NETAGG_CC_ALPHA_ONE / 4 - 16 && cc.alpha < NETAGG_CC_ALPHA_ONE / 4 + 16,
	      "alpha %u/1024 after a quarter marked", cc.alpha);
	cc.cwnd = 200;
	round_trip(&cc, 1, 1);
	CHECK(cc.cwnd >= 174 && cc.cwnd <= 176, "one mark: 200 -> %u (by alpha / 2)", cc.cwnd);
	/* No marks for long: alpha decays, a mark then cuts little. */
	for (int i = 0; i < 100; i++)
		round_trip(&cc, 100, 0);
	CHECK(cc.alpha < 16, "alpha %u/1024 after 100 windows unmarked", cc.alpha);
	cc.cwnd = 200;
	round_trip(&cc, 1, 1);
	CHECK(cc.cwnd >= 198, "a rare mark: 200 -> %u", cc.cwnd);
	fresh(&cc, 1000, true);
	cc.cwnd = 200;
	round_trip(&cc, 1, 1);
	CHECK(cc.cwnd == 100, "before any window observed alpha is 1: 200 -> %u", cc.cwnd);
	done("CE, DCTCP: cut by alpha / 2, alpha the fraction marked (g = 1/16)");
}

/* A loss halves; another of the same window is the same event. */
static void test_loss(void)
{
	struct netagg_cc cc;
	uint64_t a, b;

	fresh(&cc, 256, false);
	round_trip(&cc, 10, 0);
	round_trip(&cc, 20, 0);
	round_trip(&cc, 40, 0);
	CHECK(cc.cwnd == 80, "grown to %u", cc.cwnd);
	a = netagg_cc_sent(&cc, now, 200000);
	b = netagg_cc_sent(&cc, now, 200000);
	netagg_cc_loss(&cc, a);
	netagg_cc_loss(&cc, b);
	CHECK(cc.cwnd == 40 && cc.w_max == 80 && cc.loss_cuts == 1,
	      "two losses of a window: one cut, 80 -> %u", cc.cwnd);
	a = netagg_cc_sent(&cc, now, 200000);
	netagg_cc_loss(&cc, a);
	CHECK(cc.cwnd == 20 && cc.w_max == 30 && cc.loss_cuts == 2,
	      "a loss of a chunk sent after it: 40 -> %u, W_max %u", cc.cwnd, cc.w_max);
	CHECK(cc.ce_cuts == 0 && cc.cut_min == 20, "counted as losses (%" PRIu64 " CE cuts)",
	      cc.ce_cuts);
	fresh(&cc, 256, true);
	cc.cwnd = 80;
	a = netagg_cc_sent(&cc, now, 200000);
	netagg_cc_loss(&cc, a);
	CHECK(cc.cwnd == 40, "with dctcp a loss halves, as DCTCP's does: 80 -> %u", cc.cwnd);
	done("loss: halved once a window");
}

/*
 * The results of the chunks taken for lost came after all: the cut is
 * undone once every loss it was for is found spurious, and not for one of
 * an earlier cut.
 */
static void test_spurious(void)
{
	struct netagg_cc cc;
	uint64_t a, b, cut, cut_b;

	fresh(&cc, 256, false);
	round_trip(&cc, 10, 0);
	round_trip(&cc, 20, 0);
	round_trip(&cc, 40, 0);
	a = netagg_cc_sent(&cc, now, 200000);
	b = netagg_cc_sent(&cc, now, 200000);
	cut = netagg_cc_loss(&cc, a);
	cut_b = netagg_cc_loss(&cc, b);
	CHECK(cc.cwnd == 40 && cc.w_max == 80 && cut && cut_b == cut,
	      "two losses, one cut: %u", cc.cwnd);
	netagg_cc_spurious(&cc, cut);
	CHECK(cc.cwnd == 40 && cc.undone == 0, "one of its two losses spurious: kept, %u",
	      cc.cwnd);
	netagg_cc_spurious(&cc, cut_b);
	CHECK(cc.cwnd == 80 && cc.ssthresh == 256 && cc.w_max == 0 && cc.undone == 1,
	      "both: undone, %u (ssthresh %u, W_max %u)", cc.cwnd, cc.ssthresh, cc.w_max);
	netagg_cc_spurious(&cc, cut);
	CHECK(cc.cwnd == 80 && cc.undone == 1, "once: %u", cc.cwnd);
	a = netagg_cc_sent(&cc, now, 200000);
	cut = netagg_cc_loss(&cc, a);
	round_trip(&cc, 1, 1);
	netagg_cc_spurious(&cc, cut);
	CHECK(cc.cwnd == 20 && cc.undone == 1,
	      "not after a mark since: the mark's cut stands, %u", cc.cwnd);
	round_trip(&cc, 20, 0);
	a = netagg_cc_sent(&cc, now, 200000);
	b = netagg_cc_loss(&cc, a);
	round_trip(&cc, 20, 0);
	a = netagg_cc_sent(&cc, now, 200000);
	cut = netagg_cc_loss(&cc, a);
	netagg_cc_spurious(&cc, b);
	CHECK(cut != b && cc.undone == 1, "a loss of the cut before: the last cut stands, %u",
	      cc.cwnd);
	done("losses found spurious (reordering): their cut undone");
}

/*
 * CUBIC's curve in a path's own time: round trips of @rtt_us, one window
 * each, from a cut at 100 until @until_us after it; cwnd[s] the window at
 * each tenth of a second.
 */
static void cubic_run(struct netagg_cc *cc, uint64_t rtt_us, uint64_t until_us,
		      unsigned int *cwnd, unsigned int *most_step)
{
	uint64_t start, a;

	fresh(cc, 1000, false);
	cc->cwnd = 100;
	cc->ssthresh = 100;
	a = netagg_cc_sent(cc, now, 1u << 30);
	netagg_cc_gone(cc);
	netagg_cc_loss(cc, a);
	start = now;
	*most_step = 0;
	while (now - start < until_us) {
		unsigned int w = cc->cwnd;
		uint64_t begin = now;

		cwnd[(now - start) / 100000] = w;
		round_trip(cc, w, 0);
		if (now < begin + rtt_us)
			now = begin + rtt_us;
		if (cc->cwnd - w > *most_step)
			*most_step = cc->cwnd - w;
	}
}

/*
 * Round trips of 200 ms: from 50 back to W_max = 100 K = cbrt(100 x 0.5 /
 * 0.4) = 5 s after the cut, flat around it, faster past it (probing for
 * more): W_cubic(t) = 0.4 (t - 5)^3 + 100, ahead of Reno's 50 + 5 t.
 */
static void test_cubic(void)
{
	static unsigned int cwnd[100];
	struct netagg_cc cc;
	unsigned int step, lo = 1000, hi = 0;

	cubic_run(&cc, 200000, 9000000, cwnd, &step);
	CHECK(cc.w_max == 100 && cc.k_ms == 5000, "cut at 100: W_max %u, K %" PRIu64 " ms",
	      cc.w_max, cc.k_ms);
	/* A window behind the curve: it follows W_cubic(t), not t + RTT. */
	CHECK(cwnd[10] >= 66 && cwnd[10] <= 76, "at 1 s: %u (the cubic: 74, Reno: 55)",
	      cwnd[10]);
	for (int i = 44; i <= 56; i += 2) {
		lo = cwnd[i] < lo ? cwnd[i] : lo;
		hi = cwnd[i] > hi ? cwnd[i] : hi;
	}
	CHECK(lo >= 97 && hi <= 102, "4.4 to 5.6 s, around K: %u to %u", lo, hi);
	CHECK(cwnd[80] >= 105 && cwnd[80] <= 113, "at 8 s: %u (the cubic: 111)", cwnd[80]);
	CHECK(step <= 60, "never more than half a window a round trip (at most +%u)", step);
	done("CUBIC: back to W_max in K = cbrt(W_max x (1 - beta) / 0.4) s, then past it");
}

/*
 * Round trips of 2 ms: in 100 of them (0.2 s) the cubic has barely moved,
 * and Reno's window, a chunk a round trip, leads.
 */
static void test_cubic_reno(void)
{
	static unsigned int cwnd[100];
	struct netagg_cc cc;
	unsigned int step;

	cubic_run(&cc, 2 * RTT, 60 * 2 * RTT, cwnd, &step);
	CHECK(cc.cwnd >= 106 && cc.cwnd <= 110, "60 round trips: %u (Reno: 110)", cc.cwnd);
	cubic_run(&cc, 2 * RTT, 100 * 2 * RTT, cwnd, &step);
	CHECK(cc.cwnd >= 146 && cc.cwnd <= 150, "100 round trips: %u (Reno: 150)", cc.cwnd);
	done("CUBIC's Reno-friendly region: short round trips grow as Reno's would");
}

/* An idle path starts again from 10, towards three quarters of its window. */
static void test_idle(void)
{
	struct netagg_cc cc;

	fresh(&cc, 256, false);
	round_trip(&cc, 1, 0);
	cc.cwnd = 100;
	cc.ssthresh = 50;
	now += 100000;
	send_n(&cc, 1);
	CHECK(cc.cwnd == 100, "idle 100 ms (of 200): kept, %u", cc.cwnd);
	results(&cc, 1, 0);
	now += 300000;
	send_n(&cc, 1);
	CHECK(cc.cwnd == NETAGG_CC_INIT && cc.ssthresh == 75,
	      "idle 300 ms: from %u, slow start to %u", cc.cwnd, cc.ssthresh);
	now += 300000;
	send_n(&cc, 1);
	CHECK(cc.cwnd == NETAGG_CC_INIT && cc.inflight == 2,
	      "not idle while a chunk is in flight: %u", cc.cwnd);
	netagg_cc_forget(&cc);
	CHECK(!cc.inflight, "forgotten: nothing in flight");
	done("restart after idle (RFC 2861)");
}

/*
 * Chunks overdue leave the count in flight: a window full of chunks that a
 * node holds for a late worker, or will never answer, lets the next go.
 */
static void test_gone(void)
{
	struct netagg_cc cc;

	fresh(&cc, 256, false);
	send_n(&cc, NETAGG_CC_INIT);
	CHECK(!netagg_cc_open(&cc), "a window in flight: closed");
	for (int i = 0; i < NETAGG_CC_INIT; i++)
		netagg_cc_gone(&cc);
	CHECK(netagg_cc_open(&cc) && !cc.inflight && cc.cwnd == NETAGG_CC_INIT,
	      "all overdue: open, the window unchanged (%u)", cc.cwnd);
	netagg_cc_gone(&cc);
	CHECK(!cc.inflight, "never below nothing in flight");
	done("chunks overdue are not in flight (TCP's pipe after an RTO)");
}

/*
 * A bottleneck, packet by packet: it serves one packet a tick, behind a
 * queue of QUEUE; packets cross the path in BASE ticks each way. Each flow
 * sends whatever its windows admit, round robin over its trees, as
 * send.c does; a packet dropped is found lost one round trip later and
 * sent again; a result carries its packet's mark. Every event comes a
 * fixed 2 x BASE after its cause: they wait in a FIFO.
 */
#define BASE		20	/* ticks one way: a round trip of 40 + the queue */
#define QUEUE		60
#define TICKS		300000
#define TREES_MAX	4
#define EVENTS		4096	/* a round trip's results and losses, at most */

enum aqm { DROPTAIL, STEP, RED };

struct pkt {
	uint8_t flow, tree;
	bool marked;
	uint64_t sent;
	uint64_t seq;			/* its number: the TCP flow's, or netagg_cc_sent()'s */
	bool resent;			/* netagg's: out of the count in flight */
};

/*
 * The TCP flow, with ECN, in segments: slow start from 10, then Reno (one
 * a window of ACKs; a cut halves) or CUBIC (RFC 9438 as written: W_cubic,
 * W_est, fast convergence; a cut to 0.7). A loss or an ECN-Echo cuts,
 * once a window (the segments sent before the cut are the same event:
 * snd_nxt at the cut), and it does not grow until they are acked.
 */
struct tcp {
	bool cubic;
	double cwnd, ssthresh;
	double w_max, origin, k, w_est, epoch_s;
	bool epoch;
	unsigned int inflight;
	uint64_t sent, recover;		/* segments sent; snd_nxt at the last cut */
};

static void tcp_cut(struct tcp *r, uint64_t seq)
{
	if (seq < r->recover)
		return;
	if (r->cubic) {
		r->w_max = r->cwnd < r->w_max ? r->cwnd * 0.85 : r->cwnd;
		r->cwnd *= 0.7;
		r->epoch = false;
	} else {
		r->cwnd /= 2;
	}
	r->cwnd = r->cwnd > 2 ? floor(r->cwnd) : 2;
	r->ssthresh = r->cwnd;
	r->recover = r->sent;
}

static void tcp_ack(struct tcp *r, bool ece, uint64_t seq, double t)
{
	double target;

	r->inflight--;
	if (ece) {
		tcp_cut(r, seq);
		return;
	}
	/* In recovery (CWR) until what was sent before the cut is acked. */
	if (seq < r->recover)
		return;
	if (r->cwnd < r->ssthresh) {
		r->cwnd++;
		return;
	}
	if (!r->cubic) {
		r->cwnd += 1 / r->cwnd;
		return;
	}
	if (!r->epoch) {
		r->epoch = true;
		r->epoch_s = t;
		r->w_est = r->cwnd;
		r->origin = r->cwnd < r->w_max ? r->w_max : r->cwnd;
		r->k = cbrt((r->origin - r->cwnd) / 0.4);
	}
	target = 0.4 * pow(t - r->epoch_s - r->k, 3) + r->origin;
	if (target > 1.5 * r->cwnd)
		target = 1.5 * r->cwnd;
	r->w_est += (r->w_est >= r->w_max ? 1 : 0.53) / r->cwnd;
	if (target < r->w_est)
		target = r->w_est;
	if (target > r->cwnd)
		r->cwnd += (target - r->cwnd) / r->cwnd;
}

struct flow {
	unsigned int ntrees, npaths;
	struct netagg_cc cc[TREES_MAX];	/* a path each, or one for all */
	struct tcp *tcp;		/* instead: the TCP flow */
	unsigned int tree_inflight[TREES_MAX];
	unsigned int turn;
	uint64_t delivered;		/* in the second half */
	uint64_t srtt;
};

struct event {
	uint64_t at;
	struct pkt p;
	bool lost;
};

static struct event events[EVENTS];
static unsigned int ehead, nevents, overflows;
static struct pkt queue[QUEUE];
static unsigned int qhead, qlen;

static void event_add(uint64_t at, struct pkt p, bool lost)
{
	if (nevents == EVENTS) {
		overflows++;
		return;
	}
	events[(ehead + nevents++) % EVENTS] = (struct event){ .at = at, .p = p, .lost = lost };
}

static struct netagg_cc *cc_of(struct flow *f, unsigned int tree)
{
	return &f->cc[f->npaths == 1 ? 0 : tree];
}

static void enqueue(struct flow *f, struct pkt p, enum aqm aqm, uint64_t now)
{
	if (qlen == QUEUE) {
		event_add(now + 2 * BASE, p, true);
		return;
	}
	/* STEP marks above a shallow threshold (DCTCP's K); RED from 15 to 45. */
	if (aqm == STEP)
		p.marked = qlen > 15;
	else if (aqm == RED)
		p.marked = qlen > 15 && rnd64() % 300 < qlen - 15;
	queue[(qhead + qlen++) % QUEUE] = p;
	(void)f;
}

static void flow_send(struct flow *f, unsigned int id, enum aqm aqm, uint64_t now,
		      unsigned int tick_us)
{
	while (f->tcp && f->tcp->inflight < (unsigned int)f->tcp->cwnd) {
		struct pkt p = { .flow = id, .sent = now, .seq = f->tcp->sent++ };

		f->tcp->inflight++;
		enqueue(f, p, aqm, now);
	}
	for (unsigned int k = 0; k < f->ntrees && !f->tcp; k++) {
		unsigned int t = (f->turn + k) % f->ntrees;
		struct netagg_cc *cc = cc_of(f, t);

		while (netagg_cc_admits(cc, !f->tree_inflight[t]) && f->tree_inflight[t] < 64) {
			struct pkt p = { .flow = id, .tree = t, .sent = now };

			p.seq = netagg_cc_sent(cc, now * tick_us, 1u << 30);
			f->tree_inflight[t]++;
			enqueue(f, p, aqm, now);
		}
	}
	f->turn++;
}

/*
 * Share of the link the first flow (a job of @ntrees trees, @npaths
 * windows; dctcp) takes against the TCP flow (@cubic, or Reno) over the
 * second half of the run, a tick @tick_us microseconds (the time a packet
 * takes on the link).
 */
static double share(unsigned int ntrees, unsigned int npaths, bool dctcp, enum aqm aqm,
		    bool cubic, unsigned int tick_us)
{
	struct tcp tcp = { .cubic = cubic, .cwnd = 10, .ssthresh = 1e9 };
	struct flow flows[2] = {
		{ .ntrees = ntrees, .npaths = npaths },
		{ .tcp = &tcp },
	};

	nevents = 0;
	ehead = 0;
	qhead = 0;
	qlen = 0;
	for (unsigned int p = 0; p < npaths; p++)
		netagg_cc_init(&flows[0].cc[p], 64 * ntrees / npaths, dctcp);
	for (uint64_t now = 1; now <= TICKS; now++) {
		/* Alternate who sends first: neither always finds the queue emptier. */
		for (unsigned int i = 0; i < 2; i++) {
			unsigned int id = (now + i) & 1;

			flow_send(&flows[id], id, aqm, now, tick_us);
		}
		if (qlen) {
			struct pkt p = queue[qhead];

			qhead = (qhead + 1) % QUEUE;
			qlen--;
			event_add(now + 2 * BASE, p, false);
		}
		while (nevents && events[ehead].at == now) {
			struct event ev = events[ehead];
			struct flow *f = &flows[ev.p.flow];
			struct netagg_cc *cc = cc_of(f, ev.p.tree);

			ehead = (ehead + 1) % EVENTS;
			nevents--;
			if (ev.lost) {
				if (f->tcp)
					tcp_cut(f->tcp, ev.p.seq);
				else if (!ev.p.resent)
					netagg_cc_gone(cc);
				if (!f->tcp)
					netagg_cc_loss(cc, ev.p.seq);
				ev.p.resent = true;
				ev.p.sent = now;
				enqueue(f, ev.p, aqm, now);	/* resent */
				continue;
			}
			f->srtt = f->srtt ? (7 * f->srtt + now - ev.p.sent) / 8 : now - ev.p.sent;
			if (f->tcp) {
				tcp_ack(f->tcp, ev.p.marked, ev.p.seq, now * tick_us / 1e6);
			} else {
				f->tree_inflight[ev.p.tree]--;
				if (!ev.p.resent)
					netagg_cc_gone(cc);
				netagg_cc_result(cc, ev.p.seq, ev.p.marked, now * tick_us);
			}
			if (now > TICKS / 2)
				f->delivered++;
		}
	}
	return (double)flows[0].delivered / (flows[0].delivered + flows[1].delivered);
}

/*
 * Against Reno a tick is a microsecond: round trips of 40 to 100 us, where
 * CUBIC is its Reno part. Against CUBIC, a link of 20 Mbit/s (a 1500-byte
 * packet a 600 us tick, round trips of 24 to 60 ms, 180 s of it): the
 * job's own CUBIC, in the library's integer arithmetic and its time,
 * neither takes more than a CUBIC flow nor yields to it.
 */
static void test_share(const char *what, enum aqm aqm, bool cubic)
{
	unsigned int tick_us = cubic ? 600 : 1;
	double one = share(4, 1, false, aqm, cubic, tick_us);
	double single = share(1, 1, false, aqm, cubic, tick_us);
	double each = share(4, 4, false, aqm, cubic, tick_us);
	const char *tcp = cubic ? "CUBIC" : "Reno";

	printf("# %s, against %s: 4 trees on one window %.2f, 1 tree %.2f, a window a tree %.2f\n",
	       what, tcp, one, single, each);
	CHECK(one >= 0.4 && one <= 0.6, "4 trees, one window: share %.2f", one);
	CHECK(single >= 0.4 && single <= 0.6, "1 tree: share %.2f", single);
	CHECK(each > 0.6, "the simulation tells: a window a tree takes %.2f", each);
	CHECK(!overflows, "no event lost by the simulation (%u)", overflows);
	result("a job of 4 trees on one path is one flow against %s: %s (%lu checks)", tcp,
	       what, checked);
	checked = 0;
}

static void test_share_dctcp(void)
{
	double step = share(4, 1, true, STEP, false, 1);

	printf("# DCTCP against Reno on a step-marking queue: %.2f\n", step);
	CHECK(step > 0.6, "DCTCP takes more than its share of a classic flow: %.2f", step);
	done("DCTCP is for fabrics of DCTCP flows: against a classic one it takes more");
}

int main(void)
{
	printf("KTAP version 1\n1..%d\n", CC_CASES);
	test_init();
	test_slow_start();
	test_ce_classic();
	test_ce_dctcp();
	test_loss();
	test_spurious();
	test_cubic();
	test_cubic_reno();
	test_idle();
	test_gone();
	test_share("drop-tail", DROPTAIL, false);
	test_share("RED with ECN", RED, false);
	test_share("a step-marking queue", STEP, false);
	test_share("drop-tail", DROPTAIL, true);
	test_share("RED with ECN", RED, true);
	test_share_dctcp();
	printf("# cc: %u passed, %u failed, 0 skipped\n", passed, failed);
	return failed ? 1 : 0;
}

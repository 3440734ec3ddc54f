/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libnetagg's private header: the worker's state, and what its parts call
 * of each other. The parts, each calling only those after it:
 *   api.c       the calls of libnetagg.h: open, close, allreduce, join
 *   join.c      agreeing the run's session with the other ranks
 *   run.c       one allreduce's loop: send, receive, recover, wait
 *   recv.c      results and probe answers taken from the socket
 *   recovery.c  timeouts, probes, fast retransmit, what is a loss
 *   send.c      contributions and probes queued and sent in batches
 *   cc.c        a path's congestion window (cc.h): called by the above,
 *               calls nothing
 *   tag.c       a keyed job's packet tags (tag.h): called by the above,
 *               calls nothing
 *   key.c       a key file read (netagg_key_read()), on its own
 *
 * One UDP socket per worker, of its trees' family (IPv4 or IPv6):
 * contributions leave from it to each tree's node (cfg.port, marked
 * cfg.dscp), and the nodes send the
 * results back to its address and port. Sends and receives are batched
 * (sendmmsg/recvmmsg); results are received into a staging area and copied
 * over their chunk only once the packet has been fully validated.
 */
#ifndef NETAGG_WORKER_H
#define NETAGG_WORKER_H

#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "cc.h"
#include "libnetagg.h"
#include "tag.h"

_Static_assert(sizeof(struct netagg_hdr) == 24, "netagg_hdr is 24 bytes");

#define HDR_LEN		sizeof(struct netagg_hdr)
#define BATCH		64	/* messages per sendmmsg/recvmmsg call */
#define RBATCH_SUPER	16	/* ... per recvmmsg call of 64 KiB each */
#define SEGS_MAX	64	/* chunks in one super-packet (the kernel's
				 * UDP_MAX_SEGMENTS is 64 or more)
				 */
/*
 * UDP payload bytes of a super-packet sent: IPv4's limit (the IPv4 total
 * length counts the IP and UDP headers), the lower of the two families';
 * one received takes up to IPv6's (its payload length counts only UDP's).
 */
#define SUPER_MAX	(65535 - 20 - 8)
#define RECV_MAX	(65535 - 8)
#ifndef UDP_SEGMENT
#define UDP_SEGMENT	103
#endif
#ifndef UDP_GRO
#define UDP_GRO		104
#endif
#define DRAIN_BATCHES	64	/* stale packets discarded at most: x BATCH */
#define STR_(x)		#x
#define STR(x)		STR_(x)
/* Receive buffer bytes per packet in flight, beyond the packet: the skb. */
#define SKB_OVERHEAD	1024

#define offsetofend(TYPE, MEMBER) \
	(offsetof(TYPE, MEMBER) + sizeof(((TYPE *)0)->MEMBER))
/*
 * The sz pattern (libnetagg.h, "Sizes"): the least sz a caller may give,
 * the end of each structure's first soname-4 layout. These never move: a
 * field added later goes after, and the library reads it as 0 from a
 * program built before it.
 */
#define CFG_SZ_MIN	offsetofend(struct netagg_worker_cfg, trees)
#define INFO_SZ_MIN	offsetofend(struct netagg_allreduce_info, join_missing_rank)
/*
 * The configuration's last field, which a field appended replaces here.
 * No padding after it: an older program's sz (its sizeof) then never
 * takes in bytes it left unset where a later field lies, and the bytes
 * beyond this library's sizeof that it checks are all a newer program's
 * fields (libbpf's last-field rule). A field appended keeps it so
 * (explicit padding if need be).
 */
#define CFG_LAST	key
_Static_assert(sizeof(struct netagg_worker_cfg) ==
	       offsetofend(struct netagg_worker_cfg, CFG_LAST), "cfg ends without padding");

/* Retransmission timeout (RTO), microseconds. */
#define RTO_INIT_US	200000		/* before the first round-trip sample */
#define RTO_MIN_MS_DEFAULT	5
#define RTO_MAX_US	1000000		/* also caps the backed-off timeout */
#define RTO_G_US	1000		/* timer and scheduling granularity */
#define PROBES_UNANSWERED_MAX	3	/* rounds of probes to a silent or busy node
					 * before resending
					 */
#define BACKOFF_MAX	6		/* doublings of the RTO at most */
#define STALL_DECAY_US	10000000	/* a stall seen counts half after it */
/*
 * A path idle this long, or its RTO if longer, starts its window again
 * (cc.h): TCP's least RTO, what a TCP flow on the path would wait.
 */
#define IDLE_MIN_US	200000

/*
 * State of a VID in flight, in its tree's ring of `window` slots: VID v
 * uses slot v % window, which is unique within [low, next). A slot is
 * written when its VID is first sent, so slots outside [low, next) are
 * never read and need no reset between allreduces.
 */
enum slot_state { SLOT_SENT = 1, SLOT_DONE };

struct slot {
	uint64_t sent_us;	/* last send, CLOCK_MONOTONIC */
	uint64_t first_us;	/* first send */
	uint64_t seq;		/* its number on the path (netagg_cc_sent()) */
	uint8_t state;
	uint8_t tries;		/* sends so far, saturating */
	uint8_t shift;		/* its timeout is the RTO << shift */
	bool probed;		/* overdue, asked for by a probe not yet
				 * answered
				 */
	bool counted;		/* in its path's count in flight: sent, neither
				 * answered nor overdue yet
				 */
};

/*
 * A chunk sent twice, the second time as lost: the cut its loss made or
 * joined, which a second result of it would show spurious. A tree keeps
 * the last LOST_KEPT, past its window's slots, for the first send's result
 * may come after the window has moved on; a cut for more losses than that
 * on one tree is never undone.
 */
#define LOST_KEPT	8
struct lost_resend {
	uint64_t vid;
	uint64_t cut;		/* 0: none */
};

/* A chunk leaves its path's count in flight, if it is in it. */
static inline void slot_gone(struct netagg_cc *cc, struct slot *s)
{
	if (s->counted)
		netagg_cc_gone(cc);
	s->counted = false;
}

/* Per tree. VIDs [low, next) are in flight. */
struct tree_state {
	uint64_t nchunks;	/* chunks (VIDs) this tree carries */
	uint64_t next;		/* next VID to send */
	uint64_t low;		/* lowest VID without a result */
	struct slot *slots;	/* window of them */
	/* RFC 6298 estimator, kept across allreduces: trees may take different paths. */
	bool have_rtt;
	uint64_t srtt_us, rttvar_us, rto_us;
	unsigned int backoff;	/* shift of first sends, until the next sample */
	uint64_t sampled_us;	/* when the last sample was taken */
	uint64_t progress_us;	/* when the last result came */
	uint64_t stall_us;	/* longest silence of its node seen lately */
	uint64_t stall_at_us;	/* when it was seen, or last halved */
	uint64_t fast_upto;	/* VIDs below were fast-retransmitted */
	/* Reordering (see fast retransmit): */
	uint64_t reo_hi;	/* highest VID with a result, or said sent by
				 * a probe's answer, plus one
				 */
	uint64_t reo_at_us;	/* when a result first passed a chunk still
				 * waiting above fast_upto; 0: none does
				 */
	uint64_t reo_late_us;	/* longest such wait that ended in its result */
	uint64_t reo_late_at_us;	/* when it was seen, or last halved */
	struct lost_resend lost[LOST_KEPT];
	unsigned int lost_next;	/* the next of them to fill */
	uint64_t probe_us;	/* when probes left that no answer has
				 * followed yet; 0: none
				 */
	uint64_t probe_from;	/* the lowest VID they asked for */
	unsigned int probes_unanswered;	/* rounds of them the node has let
					 * pass without an answer
					 */
	uint64_t heard_us;	/* when its node last sent (a result, an
				 * answer), or the call began
				 */
	uint32_t session;	/* the run's on this tree, once joined */
	uint32_t cur_session;	/* of the call under way */
	/* The window of the path to its node, kept across allreduces. */
	struct netagg_cc *cc;
};

/* A tree's node, as sendmmsg() takes it. */
union sockaddr_inx {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
};

struct netagg_worker {
	int fd;
	struct netagg_worker_cfg cfg;	/* the caller's, sz its own; defaults filled in */
	int family;			/* the trees': AF_INET or AF_INET6 */
	unsigned int esize;		/* bytes per element: netagg_dtype_size() */
	unsigned int epp;		/* elements per packet */
	size_t pkt_max;			/* HDR_LEN + epp * esize + tag_len */
	unsigned int tag_len;		/* keyed: NETAGG_TAG_LEN, else 0 */
	struct netagg_tag_key key;	/* keyed: the job's */
	struct in6_addr tag_src[NETAGG_TREES_MAX];	/* keyed: the address
					 * each tree's node knows this worker
					 * by, IPv4-mapped, which its chunks'
					 * tags bind
					 */
	uint16_t tag_sport;		/* ... and its port, network order */
	size_t rstride;			/* receive slot size, cache line aligned */
	uint64_t rto_min_us;
	uint16_t round;			/* of the next allreduce */
	bool joined;			/* each tree has the run's session */
	uint32_t session_rounds;	/* allreduces in the session so far */
	int8_t tree_of_tid[NETAGG_TREES_MAX];	/* -1: not ours */
	union sockaddr_inx dst[NETAGG_TREES_MAX];	/* by tree index */
	socklen_t dst_len;		/* of the family's sockaddr */
	struct tree_state ts[NETAGG_TREES_MAX];
	struct slot *slots;		/* ntrees x window */
	/* One congestion window a node the trees go to: see cc.h. */
	struct netagg_cc paths[NETAGG_TREES_MAX];
	unsigned int npaths;

	/* The allreduce under way. */
	uint8_t *buf;
	size_t count, nchunks, remaining;
	uint16_t cur_round;
	bool joining;			/* a join's allreduce: every result is
					 * written as it comes, judged after
					 */
	uint64_t next_check;		/* no slot is overdue before this */
	bool refused;			/* a result was not accepted: -EREMOTEIO */
	bool mismatch;			/* a node said the job's dtype is another:
					 * -EPROTOTYPE
					 */
	struct netagg_allreduce_info info;

	bool super;			/* super-packets: see send.c */
	unsigned int segs_max;		/* chunks a message: 1 without */
	unsigned int sstride;		/* room for chunks a message */
	unsigned int sn;		/* messages queued in smsg */
	struct mmsghdr smsg[BATCH];
	unsigned int siov_per;		/* iovecs a chunk: 2, 3 keyed */
	struct iovec *siov;		/* BATCH x siov_per x segs_max: header,
					 * payload in the buffer, tag, a chunk
					 */
	struct netagg_hdr *shdr;	/* BATCH x segs_max */
	uint64_t *stag;			/* BATCH x segs_max: keyed, their tags */
	unsigned int ssegs[BATCH];	/* chunks in each message */
	unsigned int stree[BATCH];	/* the tree they are of */
	union {
		char buf[CMSG_SPACE(sizeof(uint16_t))];
		struct cmsghdr align;
	} sctl[BATCH];			/* UDP_SEGMENT */

	unsigned int rbatch;		/* messages a recvmmsg call */
	size_t rlen;			/* bytes each can take */
	struct mmsghdr rmsg[BATCH];
	struct iovec riov[BATCH];
	union {
		char buf[2 * CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} rctl[BATCH];			/* UDP_GRO: the segment size; IP_TOS
					 * or IPV6_TCLASS (an int)
					 */
	uint8_t *rbuf;			/* rbatch x rstride bytes */
};

static inline uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static inline size_t chunk_count(const struct netagg_worker *w, size_t c)
{
	size_t off = c * w->epp;

	return w->count - off < w->epp ? w->count - off : w->epp;
}

static inline struct slot *slot_of(const struct netagg_worker *w, unsigned int t, uint64_t vid)
{
	return &w->ts[t].slots[vid % w->cfg.window];
}

/*
 * How long after its last send, or the tree's last result, a chunk is
 * overdue: the RTO, backed off. Overdue, it is probed for first, which
 * costs a header; how long a stalled node is given before anything is
 * resent to it is probe_again()'s.
 */
static inline uint64_t chunk_rto(const struct tree_state *ts, const struct slot *s)
{
	uint64_t rto = ts->rto_us << s->shift;

	return rto < RTO_MAX_US ? rto : RTO_MAX_US;
}

/* api.c calls */
int netagg_agree_session(struct netagg_worker *w);

/* api.c and join.c call */
int netagg_run(struct netagg_worker *w);

/* run.c calls */
int netagg_recv_batch(struct netagg_worker *w, bool take);
int netagg_send_ready(struct netagg_worker *w);
uint64_t netagg_reo_due(const struct netagg_worker *w);
int netagg_fast_retransmit(struct netagg_worker *w, uint64_t now);
int netagg_resend_overdue(struct netagg_worker *w);

/* recv.c calls */
void netagg_stall_sample(struct tree_state *ts, uint64_t wait, uint64_t now);
void netagg_rtt_sample(const struct netagg_worker *w, struct tree_state *ts, uint64_t r,
		       uint64_t now);
void netagg_reo_result(struct tree_state *ts, uint64_t vid, uint64_t sent, uint64_t now);
void netagg_reo_passed(struct tree_state *ts, uint64_t vid, uint64_t now);
void netagg_result_again(struct tree_state *ts, uint64_t vid);
void netagg_lost_forget(struct tree_state *ts, uint64_t from, uint64_t to);
int netagg_resend(struct netagg_worker *w, unsigned int t, uint64_t vid, uint64_t now);

/* recovery.c calls */
int netagg_tx_queue(struct netagg_worker *w, unsigned int t, uint64_t vid, uint8_t flags);
int netagg_tx_flush(struct netagg_worker *w);

#endif /* NETAGG_WORKER_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * libnetagg - the worker side of netagg. See libnetagg.h for the contract.
 *
 * One UDP socket per worker: contributions leave from it to each tree's node
 * (port NETAGG_UDP_PORT, DSCP NETAGG_DSCP), and the nodes send the results
 * back to its address and port. Sends and receives are batched
 * (sendmmsg/recvmmsg); results are received into a staging area and copied
 * over their chunk only once the packet has been fully validated.
 *
 * Super-packets: a message of a send batch carries up to segs_max
 * consecutive chunks of one tree, header and payload of each in the iovec,
 * sent as one UDP GSO packet (UDP_SEGMENT of one whole chunk's size: only
 * the buffer's last chunk can be shorter, and it ends its message). With
 * UDP_GRO on the socket, a super-packet of results arrives whole, its
 * segment size in a control message, and is taken segment by segment.
 *
 * Retransmission: each VID in flight has a slot with the time of its last
 * send and how often it was sent. Rather than scanning the windows after
 * every batch, the loop keeps the earliest time any slot can be overdue
 * (next_check), scans the in-flight VIDs only once that has passed, and
 * sleeps in ppoll() until then at most.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "libnetagg.h"
#include "half.h"

_Static_assert(sizeof(struct netagg_hdr) == 24, "netagg_hdr is 24 bytes");

#define HDR_LEN		sizeof(struct netagg_hdr)
#define BATCH		64	/* messages per sendmmsg/recvmmsg call */
#define RBATCH_SUPER	16	/* ... per recvmmsg call of 64 KiB each */
#define SEGS_MAX	64	/* chunks in one super-packet (the kernel's
				 * UDP_MAX_SEGMENTS is 64 or more)
				 */
#define SUPER_MAX	(65535 - 20 - 8)	/* bytes the UDP length counts */
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

/* Retransmission timeout (RTO), microseconds. */
#define RTO_INIT_US	200000		/* before the first round-trip sample */
#define RTO_MIN_MS_DEFAULT	5
#define RTO_MAX_US	1000000		/* also caps the backed-off timeout */
#define RTO_G_US	1000		/* timer and scheduling granularity */
#define PROBES_SILENT_MAX	3	/* rounds of probes to a silent node before resending */
#define BACKOFF_MAX	6		/* doublings of the RTO at most */
#define STALL_DECAY_US	10000000	/* a stall seen counts half after it */

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
	uint8_t state;
	uint8_t tries;		/* sends so far, saturating */
	uint8_t shift;		/* its timeout is the RTO << shift */
	bool probed;		/* overdue, asked for by a probe not yet
				 * answered
				 */
};

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
	uint64_t stall_us;	/* longest wait for a result seen lately */
	uint64_t stall_at_us;	/* when it was seen, or last halved */
	uint64_t fast_upto;	/* VIDs below were fast-retransmitted */
	/* Reordering (see fast retransmit): */
	uint64_t reo_hi;	/* highest VID with a result, plus one */
	uint64_t reo_at_us;	/* when a result first passed a chunk still
				 * waiting above fast_upto; 0: none does
				 */
	uint64_t reo_late_us;	/* longest such wait that ended in its result */
	uint64_t reo_late_at_us;	/* when it was seen, or last halved */
	uint64_t probe_us;	/* when probes left that no answer has
				 * followed yet; 0: none
				 */
	unsigned int probes_silent;	/* rounds of them the node has been
					 * silent since
					 */
	uint64_t heard_us;	/* when its node last sent (a result, an
				 * answer), or the call began
				 */
	uint32_t session;	/* the run's on this tree, once joined */
	uint32_t cur_session;	/* of the call under way */
	/* Congestion window (ECN), kept across allreduces: chunks in flight. */
	unsigned int cwnd;
	unsigned int cwnd_acc;	/* results since it last grew */
	uint64_t cwr_us;	/* when it was last halved */
};

struct netagg_worker {
	int fd;
	struct netagg_worker_cfg cfg;	/* defaults filled in */
	unsigned int esize;		/* bytes per element: netagg_dtype_size() */
	unsigned int epp;		/* elements per packet */
	size_t pkt_max;			/* HDR_LEN + epp * esize */
	size_t rstride;			/* receive slot size, cache line aligned */
	uint64_t rto_min_us;
	uint16_t round;			/* of the next allreduce */
	bool joined;			/* each tree has the run's session */
	int8_t tree_of_tid[NETAGG_TREES_MAX];	/* -1: not ours */
	struct sockaddr_in dst[NETAGG_TREES_MAX];	/* by tree index */
	struct tree_state ts[NETAGG_TREES_MAX];
	struct slot *slots;		/* ntrees x window */

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

	bool super;			/* super-packets: see above */
	unsigned int segs_max;		/* chunks a message: 1 without */
	unsigned int sstride;		/* room for chunks a message */
	unsigned int sn;		/* messages queued in smsg */
	struct mmsghdr smsg[BATCH];
	struct iovec *siov;		/* BATCH x 2 x segs_max: header, then
					 * payload in the buffer, a chunk
					 */
	struct netagg_hdr *shdr;	/* BATCH x segs_max */
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
	} rctl[BATCH];			/* UDP_GRO: the segment size; IP_TOS */
	uint8_t *rbuf;			/* rbatch x rstride bytes */
};

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void set_rcvbuf(int fd, size_t want)
{
	int v = want > INT_MAX / 2 ? INT_MAX / 2 : (int)want;
	int cur;
	socklen_t len = sizeof(cur);

	/* Never shrink it below the system's default. */
	if (!getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &cur, &len) && cur >= v)
		return;
	/*
	 * SO_RCVBUFFORCE passes net.core.rmem_max but needs CAP_NET_ADMIN;
	 * without it SO_RCVBUF is capped at that maximum. Best effort either
	 * way: a short buffer only risks lost results, which then surface as
	 * a timeout.
	 */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
}

const char *netagg_worker_cfg_error(const struct netagg_worker_cfg *cfg)
{
	if (!cfg)
		return "no configuration";
	if (cfg->ntrees < 1 || cfg->ntrees > NETAGG_TREES_MAX)
		return "ntrees must be 1 to " STR(NETAGG_TREES_MAX);
	for (unsigned int t = 0; t < cfg->ntrees; t++) {
		if (cfg->trees[t].tid >= NETAGG_TREES_MAX)
			return "a tree ID is out of range (at most " STR(NETAGG_TREES_MAX) " - 1)";
		for (unsigned int u = 0; u < t; u++)
			if (cfg->trees[u].tid == cfg->trees[t].tid)
				return "a tree ID is listed twice";
	}
	if (!netagg_dtype_size(cfg->dtype))
		return "dtype must be NETAGG_DTYPE_F32, _I32, _F16 or _BF16";
	if (!cfg->workers || cfg->workers > UINT16_MAX)
		return "workers must be 1 to 65535";
	if (cfg->quorum > cfg->workers)
		return "quorum must not exceed workers";
	if (!cfg->no_join && cfg->rank >= cfg->workers)
		return "rank must be below workers (each worker's place, 0 to workers - 1)";
	if (cfg->mtu && (cfg->mtu < NETAGG_MTU_MIN || cfg->mtu > NETAGG_MTU_MAX))
		return "mtu must be " STR(NETAGG_MTU_MIN) " to " STR(NETAGG_MTU_MAX) " (0: 1500)";
	if (cfg->window > NETAGG_WINDOW_MAX)
		return "window must be at most " STR(NETAGG_WINDOW_MAX) " (0: 64)";
	if (cfg->timeout_ms > INT_MAX)
		return "timeout_ms must be at most INT_MAX";
	if (cfg->node_timeout_ms > INT_MAX)
		return "node_timeout_ms must be at most INT_MAX";
	if (cfg->mean < NETAGG_MEAN_NONE || cfg->mean > NETAGG_MEAN_BEFORE)
		return "mean must be NETAGG_MEAN_NONE, _AFTER or _BEFORE";
	if (cfg->mean && cfg->dtype == NETAGG_DTYPE_I32)
		return "a mean needs a floating-point dtype (int32 would round)";
	if (cfg->rto_min_ms > RTO_MAX_US / 1000)
		return "rto_min_ms exceeds 1000";
	return NULL;
}

int netagg_worker_open(const struct netagg_worker_cfg *cfg, struct netagg_worker **wp)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int tos = NETAGG_DSCP << 2 | (cfg->no_ecn ? 0 : IPTOS_ECN_ECT0);
	struct netagg_worker *w;
	size_t inflight;
	int err;

	*wp = NULL;
	if (netagg_worker_cfg_error(cfg))
		return -EINVAL;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = -1;
	w->cfg = *cfg;
	if (!w->cfg.mtu)
		w->cfg.mtu = NETAGG_MTU_DEFAULT;
	if (!w->cfg.window)
		w->cfg.window = NETAGG_WINDOW_DEFAULT;
	if (!w->cfg.timeout_ms)
		w->cfg.timeout_ms = 2000;
	if (!w->cfg.node_timeout_ms)
		w->cfg.node_timeout_ms = 10000;
	if (!w->cfg.rto_min_ms)
		w->cfg.rto_min_ms = RTO_MIN_MS_DEFAULT;
	if (!w->cfg.quorum)
		w->cfg.quorum = w->cfg.workers;
	w->rto_min_us = w->cfg.rto_min_ms * 1000ULL;
	w->round = cfg->round;
	if (cfg->no_join) {
		for (unsigned int t = 0; t < cfg->ntrees; t++)
			w->ts[t].session = cfg->session;
		w->joined = true;
	}
	w->esize = netagg_dtype_size(w->cfg.dtype);
	w->epp = netagg_elems_per_packet(w->cfg.mtu, w->cfg.dtype);
	w->pkt_max = HDR_LEN + (size_t)w->epp * w->esize;
	w->super = !cfg->plain;
	w->segs_max = w->super ? SUPER_MAX / w->pkt_max : 1;
	if (w->segs_max > SEGS_MAX)
		w->segs_max = SEGS_MAX;
	if (cfg->segments && w->segs_max > cfg->segments)
		w->segs_max = cfg->segments;

	memset(w->tree_of_tid, -1, sizeof(w->tree_of_tid));
	for (unsigned int t = 0; t < cfg->ntrees; t++) {
		uint16_t tid = cfg->trees[t].tid;

		w->tree_of_tid[tid] = t;
		w->dst[t].sin_family = AF_INET;
		w->dst[t].sin_addr = cfg->trees[t].addr;
		w->dst[t].sin_port = htons(NETAGG_UDP_PORT);
	}

	w->slots = calloc((size_t)cfg->ntrees * w->cfg.window, sizeof(*w->slots));
	if (!w->slots) {
		err = -ENOMEM;
		goto fail;
	}
	for (unsigned int t = 0; t < cfg->ntrees; t++) {
		w->ts[t].slots = w->slots + (size_t)t * w->cfg.window;
		w->ts[t].rto_us = w->rto_min_us > RTO_INIT_US ? w->rto_min_us : RTO_INIT_US;
		w->ts[t].cwnd = w->cfg.window;
	}

	/*
	 * One spare byte a packet, so that an oversized one shows as too
	 * long; slots aligned, so that headers can be read in place. A
	 * super-packet's slot takes any UDP payload.
	 */
	w->rbatch = w->super ? RBATCH_SUPER : BATCH;
	w->rlen = w->super ? SUPER_MAX + 1 : w->pkt_max + 1;
	w->rstride = (w->rlen + 63) & ~(size_t)63;
	w->rbuf = aligned_alloc(64, w->rbatch * w->rstride);
	w->sstride = w->segs_max;
	w->siov = calloc((size_t)BATCH * 2 * w->sstride, sizeof(*w->siov));
	w->shdr = calloc((size_t)BATCH * w->sstride, sizeof(*w->shdr));
	if (!w->rbuf || !w->siov || !w->shdr) {
		err = -ENOMEM;
		goto fail;
	}
	for (unsigned int i = 0; i < w->rbatch; i++) {
		w->riov[i].iov_base = w->rbuf + i * w->rstride;
		w->riov[i].iov_len = w->rlen;
		w->rmsg[i].msg_hdr.msg_iov = &w->riov[i];
		w->rmsg[i].msg_hdr.msg_iovlen = 1;
	}
	for (unsigned int i = 0; i < BATCH; i++) {
		w->smsg[i].msg_hdr.msg_iov = w->siov + (size_t)i * 2 * w->sstride;
		w->smsg[i].msg_hdr.msg_namelen = sizeof(struct sockaddr_in);
	}

	w->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (w->fd < 0 ||
	    setsockopt(w->fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)) < 0) {
		err = -errno;
		goto fail;
	}
	/*
	 * Every result in flight must fit the receive buffer at once, twice
	 * over: results of all trees can arrive in one burst while the last
	 * one's are still queued, and one dropped here can only end in a
	 * timeout.
	 */
	inflight = 2 * (size_t)w->cfg.ntrees * w->cfg.window * (w->cfg.mtu + SKB_OVERHEAD);
	set_rcvbuf(w->fd, inflight);
	/* The results' ECN field, on every message. */
	if (!cfg->no_ecn) {
		int one = 1;

		if (setsockopt(w->fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one)) < 0) {
			err = -errno;
			goto fail;
		}
	}
	/* Without it, the kernel hands super-packets over segment by segment. */
	if (w->super) {
		int one = 1;

		setsockopt(w->fd, IPPROTO_UDP, UDP_GRO, &one, sizeof(one));
	}
	/* Bind now (port 0: ephemeral) so results have a fixed port to reach. */
	sin.sin_addr = cfg->src;
	sin.sin_port = htons(cfg->src_port);
	if (bind(w->fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		err = -errno;
		goto fail;
	}
	*wp = w;
	return 0;
fail:
	netagg_worker_close(w);
	return err;
}

void netagg_worker_close(struct netagg_worker *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	free(w->rbuf);
	free(w->siov);
	free(w->shdr);
	free(w->slots);
	free(w);
}

uint16_t netagg_worker_round(const struct netagg_worker *w)
{
	return w->round;
}

uint32_t netagg_worker_session(const struct netagg_worker *w)
{
	return w->joined ? w->ts[0].session : 0;
}

int netagg_worker_set_mean(struct netagg_worker *w, int mean)
{
	struct netagg_worker_cfg cfg = w->cfg;

	cfg.mean = mean;
	if (netagg_worker_cfg_error(&cfg))
		return -EINVAL;
	w->cfg.mean = mean;
	return 0;
}

static size_t chunk_count(const struct netagg_worker *w, size_t c)
{
	size_t off = c * w->epp;

	return w->count - off < w->epp ? w->count - off : w->epp;
}

static struct slot *slot_of(const struct netagg_worker *w, unsigned int t, uint64_t vid)
{
	return &w->ts[t].slots[vid % w->cfg.window];
}

/*
 * How long after its last send, or the tree's last result, a chunk is
 * overdue: the RTO, backed off, and never less than twice the longest
 * stall the tree had lately.
 */
static uint64_t chunk_rto(const struct tree_state *ts, const struct slot *s)
{
	uint64_t rto = ts->rto_us << s->shift;

	if (rto < 2 * ts->stall_us)
		rto = 2 * ts->stall_us;
	return rto < RTO_MAX_US ? rto : RTO_MAX_US;
}

/*
 * A result came @wait after the later of its chunk's first send and the
 * tree's last result: how long the tree went without answering while the
 * chunk waited. A tree stalls when some worker or node gets no CPU for a
 * while (every result then waits for it), which round trips sampled from
 * the results that flow do not show: a timeout below the stall resends
 * the whole window for nothing. So the longest recent stall bounds the
 * timeout from below; it counts half once STALL_DECAY_US passed without a
 * longer one.
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

static void stall_sample(struct tree_state *ts, uint64_t wait, uint64_t now)
{
	recent_max(&ts->stall_us, &ts->stall_at_us, wait, now);
}

/*
 * RFC 6298, section 2, in microseconds; r is a round trip of a chunk sent
 * once. Unlike TCP's, a result also waits for every other worker, and for
 * their retransmissions: such delays grow with the RTO itself, and under
 * heavy loss would push it to the maximum. So a sample counts for at most
 * twice SRTT: a real rise of the round trip still lifts SRTT by an eighth
 * a sample.
 */
static void rtt_sample(const struct netagg_worker *w, struct tree_state *ts, uint64_t r)
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
}

/* The segment size of a message of several chunks, for the kernel. */
static void tx_segment(struct netagg_worker *w, unsigned int m)
{
	struct msghdr *mh = &w->smsg[m].msg_hdr;
	struct cmsghdr *cm;

	mh->msg_iovlen = 2 * w->ssegs[m];
	if (w->ssegs[m] < 2) {
		mh->msg_control = NULL;
		mh->msg_controllen = 0;
		return;
	}
	mh->msg_control = w->sctl[m].buf;
	mh->msg_controllen = sizeof(w->sctl[m].buf);
	cm = CMSG_FIRSTHDR(mh);
	cm->cmsg_level = SOL_UDP;
	cm->cmsg_type = UDP_SEGMENT;
	cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
	*(uint16_t *)CMSG_DATA(cm) = (uint16_t)w->pkt_max;
}

/* A message sent: count its chunks. */
static void tx_sent(struct netagg_worker *w, unsigned int m)
{
	const struct netagg_hdr *h = w->shdr + (size_t)m * w->sstride;

	if (h->flags & NETAGG_F_PROBE) {
		w->info.probes++;
		return;
	}
	for (unsigned int i = 0; i < w->ssegs[m]; i++)
		if (h[i].flags & NETAGG_F_RETRY)
			w->info.retransmits++;
	w->info.packets_sent += w->ssegs[m];
	w->info.sends++;
	if (w->ssegs[m] > 1)
		w->info.super_sent++;
}

/* Send what is queued. */
static int tx_flush(struct netagg_worker *w)
{
	unsigned int done = 0, n = w->sn;

	w->sn = 0;
	for (unsigned int m = 0; m < n; m++)
		tx_segment(w, m);
	/* Blocking socket: waits for send buffer space, not for peers. */
	while (done < n) {
		int r = sendmmsg(w->fd, w->smsg + done, n - done, 0);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			/*
			 * A full device queue loses the packet as the wire
			 * would: it is resent on timeout.
			 */
			if (errno == ENOBUFS) {
				done++;
				continue;
			}
			/*
			 * A path that cannot take a GSO send (no checksum
			 * offload, a smaller MTU): plain packets from now
			 * on; these chunks are resent on timeout.
			 */
			if (w->ssegs[done] > 1 && (errno == EIO || errno == EINVAL ||
						   errno == EMSGSIZE)) {
				w->super = false;
				w->segs_max = 1;
				done++;
				continue;
			}
			/* No way to the tree's node: as one that stopped answering. */
			if (errno == ENETUNREACH || errno == EHOSTUNREACH || errno == ENETDOWN) {
				w->info.silent_tid = w->cfg.trees[w->stree[done]].tid;
				return -EHOSTUNREACH;
			}
			return -errno;
		}
		for (int i = 0; i < r; i++)
			tx_sent(w, done + i);
		done += r;
	}
	return 0;
}

/*
 * Queue the contribution of a tree's VID: in the message being filled if it
 * is of that tree and can take it, else in a new one (a full batch goes out
 * first). With NETAGG_F_PROBE in @flags, a probe from @vid instead: a
 * header alone, in a message of its own.
 */
static int tx_queue(struct netagg_worker *w, unsigned int t, uint64_t vid, uint8_t flags)
{
	bool probe = flags & NETAGG_F_PROBE;
	size_t c = vid * w->cfg.ntrees + t, cnt = probe ? 0 : chunk_count(w, c);
	unsigned int m = w->sn - 1, k;
	struct netagg_hdr *h;
	struct iovec *iov;
	int err;

	/* A message ending in a chunk shorter than a whole one takes no more. */
	if (probe || !w->sn || w->stree[m] != t || w->ssegs[m] >= w->segs_max ||
	    w->smsg[m].msg_hdr.msg_iov[2 * w->ssegs[m] - 1].iov_len !=
	    w->pkt_max - HDR_LEN) {
		if (w->sn == BATCH) {
			err = tx_flush(w);
			if (err)
				return err;
		}
		m = w->sn++;
		w->stree[m] = t;
		w->ssegs[m] = 0;
		w->smsg[m].msg_hdr.msg_name = &w->dst[t];
	}
	k = w->ssegs[m]++;
	h = w->shdr + (size_t)m * w->sstride + k;
	iov = w->smsg[m].msg_hdr.msg_iov + 2 * k;

	/* The tree's last VID ends the round; a resend of it too. */
	if (!probe && vid + 1 == w->ts[t].nchunks)
		flags |= NETAGG_F_FIN;
	/* A join's sums must hold every rank: no quorum completes them. */
	if (!probe && w->joining)
		flags |= NETAGG_F_WHOLE;
	memset(h, 0, sizeof(*h));
	h->version = NETAGG_PROTO_VERSION;
	h->flags = flags;
	h->dtype = w->cfg.dtype;
	h->jid = htonl(w->cfg.jid);
	h->vid = htonl((uint32_t)vid);
	h->tid = htons(w->cfg.trees[t].tid);
	h->count = htons((uint16_t)cnt);
	h->contributors = htons(!probe);
	h->round = htons(w->cur_round);
	h->session = htonl(w->ts[t].cur_session);
	iov[0].iov_base = h;
	iov[0].iov_len = HDR_LEN;
	iov[1].iov_base = probe ? NULL : w->buf + c * w->epp * w->esize;
	iov[1].iov_len = cnt * w->esize;
	return 0;
}

/*
 * Send every chunk the windows allow, round robin over the trees, up to a
 * super-packet of each at a turn.
 */
static int send_ready(struct netagg_worker *w)
{
	unsigned int nt = w->cfg.ntrees;
	uint64_t now = 0;
	bool any = true;
	int err;

	while (any) {
		any = false;
		for (unsigned int t = 0; t < nt; t++) {
			struct tree_state *ts = &w->ts[t];

			for (unsigned int k = 0; k < w->segs_max; k++) {
				struct slot *s;

				if (ts->next >= ts->nchunks ||
				    ts->next >= ts->low + ts->cwnd)
					break;
				/* Once a batch: sending may block for buffer space. */
				if (!w->sn)
					now = now_us();
				s = slot_of(w, t, ts->next);
				s->state = SLOT_SENT;
				s->tries = 1;
				s->probed = false;
				s->shift = ts->backoff;
				s->sent_us = now;
				s->first_us = now;
				if (now + chunk_rto(ts, s) < w->next_check)
					w->next_check = now + chunk_rto(ts, s);
				err = tx_queue(w, t, ts->next, 0);
				if (err)
					return err;
				ts->next++;
				any = true;
			}
		}
	}
	return tx_flush(w);
}

/*
 * Whether overdue chunks are asked for with a probe (or resent): yes when
 * the last probes were answered (or there were none), and when the node
 * has sent nothing at all since they left, a few rounds running: it is
 * stalled (a node without CPU for a while answers nothing, and what it has
 * queued includes the probe) or gone, and resending to it only adds to what
 * it has to catch up on. A node heard since, but not in answer, lost the
 * probe or its answer: then the chunks are resent.
 */
static bool probe_again(const struct tree_state *ts)
{
	return !ts->probe_us ||
	       (ts->heard_us < ts->probe_us && ts->probes_silent < PROBES_SILENT_MAX);
}

/*
 * Ask again for every chunk in flight whose result is overdue, with its
 * timeout doubled, and find when the next one will be. Asking is probing
 * first: a probe (NETAGG_F_PROBE) from the lowest overdue VID, one per
 * NETAGG_PROBE_VIDS of them, has the node resend the results it kept and
 * say which contributions it holds; only those it lacks are then resent
 * (take_probe()). A result is overdue without any loss when another worker
 * is late to the allreduce (the node holds every contribution and waits
 * for that worker's): then nothing is resent at all. A node that did not
 * answer the last probes by the next timeout gets the chunks resent, with
 * NETAGG_F_RETRY, once probe_again() says so.
 * When a first send times out and no sample came since it was sent, the
 * RTO may be below the round trip: then the tree's new chunks start from
 * the doubled timeout too, until the next sample (Karn; RFC 6298, 5.5);
 * otherwise every chunk would be resent, and no sample would ever raise the
 * RTO. Not for losses while samples flow, nor for chunks resent over and
 * over while some worker is slow: those say nothing about the round trip.
 */
static int resend_overdue(struct netagg_worker *w)
{
	uint64_t now = now_us(), next = UINT64_MAX;
	int err;

	for (unsigned int t = 0; t < w->cfg.ntrees; t++) {
		struct tree_state *ts = &w->ts[t];
		bool probe = probe_again(ts), asked = false;
		uint64_t from = 0;	/* of the last probe */

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
			if (probe && asked && vid < from + NETAGG_PROBE_VIDS)
				continue;	/* the last probe asks for it */
			err = tx_queue(w, t, vid, probe ? NETAGG_F_PROBE : NETAGG_F_RETRY);
			if (err)
				return err;
			asked = true;
			from = vid;
		}
		if (asked) {
			ts->probes_silent = probe && ts->probe_us ? ts->probes_silent + 1 : 0;
			ts->probe_us = probe ? now : 0;
		}
	}
	w->next_check = next;
	return tx_flush(w);
}

/* Send chunk @vid of tree @t again now, with NETAGG_F_RETRY; its timer restarts. */
static int resend(struct netagg_worker *w, unsigned int t, uint64_t vid, uint64_t now)
{
	struct slot *s = slot_of(w, t, vid);

	s->sent_us = now;
	s->probed = false;
	if (s->tries < UINT8_MAX)
		s->tries++;
	return tx_queue(w, t, vid, NETAGG_F_RETRY);
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
 * round trip of a fast retransmission answers the first send: the window
 * was too short by that much.
 */
static void reo_result(struct tree_state *ts, uint64_t vid, uint64_t sent,
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

/* When the next overtaken chunk is due for a fast retransmission. */
static uint64_t reo_due(const struct netagg_worker *w)
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
static int fast_retransmit(struct netagg_worker *w, uint64_t now)
{
	for (unsigned int t = 0; t < w->cfg.ntrees; t++) {
		struct tree_state *ts = &w->ts[t];
		uint64_t v = ts->fast_upto > ts->low ? ts->fast_upto : ts->low;
		int err;

		if (!ts->reo_at_us || now < ts->reo_at_us + reo_wnd(ts))
			continue;
		for (; v < ts->reo_hi; v++) {
			if (slot_of(w, t, v)->state != SLOT_SENT)
				continue;
			err = resend(w, t, v, now);
			if (err)
				return err;
		}
		ts->fast_upto = ts->reo_hi;
		ts->reo_at_us = 0;
	}
	return tx_flush(w);
}

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
 * A node's answer to a probe: its results kept were sent before it, so a
 * chunk the probe asked for whose contribution the node lacks is resent
 * now, and one it holds waits on (its timer restarted when the probe
 * left). Chunks not overdue when the probe left may still be on their way
 * to the node: not resent. 1, 0 if it is not an answer to a probe of
 * ours, or -errno.
 */
static int take_probe(struct netagg_worker *w, const uint8_t *pkt, size_t len, uint64_t now)
{
	const struct netagg_hdr *h = (const struct netagg_hdr *)pkt;
	struct tree_state *ts;
	uint64_t held, vid;
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
	if (len != HDR_LEN + sizeof(held) || h->dtype != w->cfg.dtype ||
	    ntohs(h->count) * w->esize != sizeof(held))
		return 0;
	ts = &w->ts[t];
	ts->heard_us = now;
	memcpy(&held, pkt + HDR_LEN, sizeof(held));
	held = le64toh(held);
	ts->probe_us = 0;
	ts->probes_silent = 0;
	vid = ntohl(h->vid);
	for (unsigned int i = 0; i < NETAGG_PROBE_VIDS && vid + i < ts->next; i++) {
		struct slot *s = slot_of(w, t, vid + i);

		if (vid + i < ts->low || s->state != SLOT_SENT || !s->probed)
			continue;
		s->probed = false;
		if (held >> i & 1)
			continue;
		err = resend(w, t, vid + i, now);
		if (err)
			return err;
	}
	return 1;
}

/*
 * AIMD on a tree's window for a result, @ce if marked: halved at most once
 * a smoothed round trip (the marks of one window are one signal), else
 * grown by one a window of results.
 */
static void congestion(struct netagg_worker *w, struct tree_state *ts, bool ce, uint64_t now)
{
	uint64_t rtt = ts->have_rtt ? ts->srtt_us : ts->rto_us;

	if (!ce) {
		if (ts->cwnd < w->cfg.window && ++ts->cwnd_acc >= ts->cwnd) {
			ts->cwnd++;
			ts->cwnd_acc = 0;
		}
		return;
	}
	w->info.ce++;
	if (now - ts->cwr_us < rtt)
		return;
	ts->cwr_us = now;
	ts->cwnd_acc = 0;
	ts->cwnd = ts->cwnd > 1 ? ts->cwnd / 2 : 1;
	if (ts->cwnd < w->info.window_min)
		w->info.window_min = ts->cwnd;
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
	if (vid < ts->low || vid >= ts->next)	/* not in flight */
		return false;
	s = slot_of(w, t, vid);
	c = (size_t)vid * nt + t;
	cnt = ntohs(h->count);
	contrib = ntohs(h->contributors);
	if (s->state != SLOT_SENT || cnt != chunk_count(w, c) ||
	    len != HDR_LEN + (size_t)cnt * w->esize || contrib == 0)
		return false;

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
	ts->heard_us = now;
	since = s->first_us > ts->progress_us ? s->first_us : ts->progress_us;
	if (now > since)
		stall_sample(ts, now - since, now);
	ts->progress_us = now;
	/* Karn: after a resend, which send a result answers is unknown. */
	if (s->tries == 1 && now > s->sent_us) {
		rtt_sample(w, ts, now - s->sent_us);
		ts->backoff = 0;
		ts->sampled_us = now;
	}
	if (!w->cfg.no_ecn)
		congestion(w, ts, ce, now);
	w->remaining--;
	w->info.packets_received++;
	if (contrib && (!w->info.min_contributors || contrib < w->info.min_contributors))
		w->info.min_contributors = contrib;
	if (contrib > w->info.max_contributors)
		w->info.max_contributors = contrib;
	/* Results may come out of order: slide past every finished VID. */
	while (ts->low < ts->next && slot_of(w, t, ts->low)->state == SLOT_DONE)
		ts->low++;
	reo_result(ts, vid, s->sent_us, now);
	return true;
}

/*
 * The segment size of a received message, its UDP_GRO else all of it,
 * and whether it came marked CE (its IP_TOS). GRO merges only packets of
 * one TOS: the mark is every segment's.
 */
static size_t rx_meta(const struct msghdr *mh, size_t len, bool *ce)
{
	size_t seg = len;

	*ce = false;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR((struct msghdr *)mh, cm)) {
		int gso;

		if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_TOS &&
		    cm->cmsg_len >= CMSG_LEN(1)) {
			*ce = (*CMSG_DATA(cm) & IPTOS_ECN_MASK) == IPTOS_ECN_CE;
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
static int recv_batch(struct netagg_worker *w, bool take)
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

/* Payload elements are little endian on the wire; convert in place. */
static void buf_to_le(void *buf, size_t count, unsigned int esize)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	uint32_t *p = buf;
	uint16_t *h = buf;

	for (size_t i = 0; i < count; i++)
		if (esize == 2)
			h[i] = __builtin_bswap16(h[i]);
		else
			p[i] = __builtin_bswap32(p[i]);
#else
	(void)buf;
	(void)count;
	(void)esize;
#endif
}

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

static int run(struct netagg_worker *w)
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
		w->ts[t].reo_at_us = 0;
		w->ts[t].progress_us = 0;
		w->ts[t].probe_us = 0;
		w->ts[t].probes_silent = 0;
	}
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
		err = recv_batch(w, false);
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

		err = send_ready(w);
		if (err)
			return err;
		if (!w->remaining)
			return w->refused ? -EREMOTEIO : 0;
		got = recv_batch(w, true);
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
		if (got <= 0 && now >= reo_due(w)) {
			err = fast_retransmit(w, now);
			if (err)
				return err;
		}
		if (got <= 0 && now >= w->next_check) {
			err = resend_overdue(w);
			if (err)
				return err;
		}
		if (got != -EAGAIN)	/* more may be queued */
			continue;

		/* Nothing queued: wait for a result, the next resend, or the end. */
		wake = last_progress + timeout_us;
		if (w->next_check < wake)
			wake = w->next_check;
		if (reo_due(w) < wake)
			wake = reo_due(w);
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

/*
 * Joining (see libnetagg.h). A join vector holds, for each tree, a copy of
 * JOIN_BITS elements a rank: the copy of tree t in the chunks that go to
 * tree t, so that every tree's node sees every rank. A rank's nonce is the
 * pattern of its elements set to join_one(); every other rank leaves them
 * 0. Whatever the job's type and operation, a sum of one rank's elements
 * and zeros is that rank's pattern, each set element the same value (1, or
 * 1 divided by the contributors for op avg; large for int32, so that an
 * average stays above 0): a pattern of two ranks at one place shows as a
 * pattern not the nonce, or as set elements of two values.
 */
#define JOIN_BITS	32

/* An element that is set, in the job's type, little endian. */
static void join_one(const struct netagg_worker *w, uint8_t *p)
{
	uint32_t v;

	switch (w->cfg.dtype) {
	case NETAGG_DTYPE_I32:
		v = 1U << 20;
		break;
	case NETAGG_DTYPE_F16:
		v = 0x3c00;	/* 1.0 */
		break;
	case NETAGG_DTYPE_BF16:
		v = 0x3f80;
		break;
	default:
		v = 0x3f800000;
		break;
	}
	for (unsigned int i = 0; i < w->esize; i++)
		p[i] = v >> (8 * i);
}

/* Chunks of a vector of @len elements a copy, in every tree: x epp. */
static size_t join_chunks(const struct netagg_worker *w, size_t len)
{
	return (len + w->epp - 1) / w->epp * w->cfg.ntrees;
}

/* The byte offset of element @pos of tree @t's copy. */
static size_t join_at(const struct netagg_worker *w, unsigned int t, size_t pos)
{
	size_t c = pos / w->epp * w->cfg.ntrees + t;

	return (c * w->epp + pos % w->epp) * w->esize;
}

static bool join_zero(const struct netagg_worker *w, const uint8_t *p)
{
	for (unsigned int i = 0; i < w->esize; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * An allreduce of a join vector, in round @round of each tree's session
 * (@sessions[t]; NULL: session 0, where runs meet).
 */
static int join_run(struct netagg_worker *w, uint8_t *vec, size_t count,
		    const uint32_t *sessions, uint16_t round)
{
	int err;

	for (unsigned int t = 0; t < w->cfg.ntrees; t++)
		w->ts[t].cur_session = sessions ? sessions[t] : 0;
	w->buf = vec;
	w->count = count;
	w->cur_round = round;
	w->joining = true;
	err = run(w);
	w->joining = false;
	w->buf = NULL;
	return err;
}

/* Whether tree @t's copy holds, at this rank's place, its nonce alone. */
static bool join_mine(const struct netagg_worker *w, const uint8_t *vec, unsigned int t,
		      uint32_t nonce)
{
	const uint8_t *set = NULL;

	for (unsigned int b = 0; b < JOIN_BITS; b++) {
		const uint8_t *p = vec + join_at(w, t, (size_t)w->cfg.rank * JOIN_BITS + b);

		if (!(nonce >> b & 1)) {
			if (!join_zero(w, p))
				return false;
		} else if (join_zero(w, p) || (set && memcmp(set, p, w->esize))) {
			return false;
		} else {
			set = p;
		}
	}
	return true;
}

/* FNV-1a, 32 bits, on from @h. */
static uint32_t join_hash(uint32_t h, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 16777619U;
	return h;
}

/*
 * The session tree @t's copy of a join's sum names, met in round @meet:
 * never 0.
 */
static uint32_t join_session(const struct netagg_worker *w, const uint8_t *vec,
			     unsigned int t, uint16_t meet)
{
	uint32_t h = join_hash(2166136261U, (const uint8_t *)&meet, sizeof(meet));

	for (size_t pos = 0; pos < (size_t)w->cfg.workers * JOIN_BITS; pos++)
		h = join_hash(h, vec + join_at(w, t, pos), w->esize);
	return h ? h : 1;
}

/*
 * Ranks whose place is 0 in tree @t's copy of a confirmation vector: how
 * many, the lowest in *@first if it is lower.
 */
static unsigned int join_missing(const struct netagg_worker *w, const uint8_t *vec,
				 unsigned int t, unsigned int *first)
{
	unsigned int n = 0;

	for (unsigned int r = 0; r < w->cfg.workers; r++) {
		if (!join_zero(w, vec + join_at(w, t, r)))
			continue;
		if (!n++ && r < *first)
			*first = r;
	}
	return n;
}

/*
 * Agree the run's session with every other rank (libnetagg.h, "Joining"),
 * on each tree on its own: a node's rounds are its trees'. Each try: the
 * ranks allreduce their nonces in session 0, where runs meet, in round
 * cfg.session + cfg.round + try (so that runs given other numbers, or
 * started at other rounds, meet apart; an earlier run's kept sums met only
 * cost a try); each finds whether its nonce is there alone in each tree's
 * copy; each copy names a session, in which the ranks allreduce that
 * finding on that tree. Only a copy holding a fresh nonce names a session
 * no earlier run used, and only a rank whose fresh nonce is in it
 * confirms: so a confirmation of every rank means the copy is this run's
 * own, and the session it names the run's on that tree. A rank not
 * confirmed shows as 0 to all, and all try again. Each tree's copy is one
 * round of that tree alone: a copy answered whole from an earlier run's
 * kept sum is every rank's, so they all go on as one, and no rank late to
 * a round the tree left can start it again under the others.
 */
static int join(struct netagg_worker *w)
{
	unsigned int nt = w->cfg.ntrees, first = UINT_MAX, missing = 0;
	size_t vcount = join_chunks(w, (size_t)w->cfg.workers * JOIN_BITS) * w->epp;
	size_t ccount = join_chunks(w, w->cfg.workers) * w->epp;
	uint32_t sessions[NETAGG_TREES_MAX];
	uint8_t *vec, *conf, one[4];
	int err = -ENOTUNIQ;

	vec = malloc(vcount * w->esize);
	conf = malloc(ccount * w->esize);
	if (!vec || !conf) {
		err = -ENOMEM;
		goto out;
	}
	join_one(w, one);
	for (unsigned int a = 0; a < NETAGG_JOIN_TRIES; a++) {
		uint16_t meet = w->cfg.session + w->cfg.round + a;
		bool mine[NETAGG_TREES_MAX], all = true;
		uint32_t nonce = 0;

		while (!nonce)
			if (getrandom(&nonce, sizeof(nonce), 0) != sizeof(nonce)) {
				err = -errno;
				goto out;
			}
		memset(vec, 0, vcount * w->esize);
		for (unsigned int t = 0; t < nt; t++)
			for (unsigned int b = 0; b < JOIN_BITS; b++)
				if (nonce >> b & 1)
					memcpy(vec + join_at(w, t, (size_t)w->cfg.rank * JOIN_BITS + b),
					       one, w->esize);
		w->info.joins++;
		err = join_run(w, vec, vcount, NULL, meet);
		if (err)
			goto out;
		memset(conf, 0, ccount * w->esize);
		for (unsigned int t = 0; t < nt; t++) {
			mine[t] = join_mine(w, vec, t, nonce);
			sessions[t] = join_session(w, vec, t, meet);
			if (mine[t])
				memcpy(conf + join_at(w, t, w->cfg.rank), one, w->esize);
		}
		/* Round - 1: the run's rounds count from cfg.round in its sessions. */
		err = join_run(w, conf, ccount, sessions, (uint16_t)(w->cfg.round - 1));
		if (err)
			goto out;
		missing = 0;
		first = UINT_MAX;
		for (unsigned int t = 0; t < nt; t++) {
			unsigned int m = join_missing(w, conf, t, &first);

			if (m > missing)
				missing = m;
			all = all && mine[t] && !m;
		}
		if (all) {
			for (unsigned int t = 0; t < nt; t++)
				w->ts[t].session = sessions[t];
			w->joined = true;
			goto out;
		}
		err = -ENOTUNIQ;
	}
	w->info.join_missing = missing ? missing : 1;
	w->info.join_missing_rank = missing ? first : w->cfg.rank;
out:
	free(vec);
	free(conf);
	return err;
}

/* A call's statistics, from nothing. */
static void info_start(struct netagg_worker *w)
{
	memset(&w->info, 0, sizeof(w->info));
	w->info.window_min = UINT_MAX;
	for (unsigned int t = 0; t < w->cfg.ntrees; t++)
		if (w->ts[t].cwnd < w->info.window_min)
			w->info.window_min = w->ts[t].cwnd;
}

static void info_end(struct netagg_worker *w, struct netagg_allreduce_info *info)
{
	w->info.session = netagg_worker_session(w);
	if (info)
		*info = w->info;
}

int netagg_join(struct netagg_worker *w, struct netagg_allreduce_info *info)
{
	int err;

	info_start(w);
	err = w->joined ? 0 : join(w);
	info_end(w, info);
	return err;
}

int netagg_allreduce(struct netagg_worker *w, void *buf, size_t count,
		     struct netagg_allreduce_info *info)
{
	int err = -EINVAL;

	info_start(w);
	if (buf || !count) {
		err = w->joined ? 0 : join(w);
		if (err)
			goto out;
		/* Every call uses up its round, so that all workers stay in step. */
		for (unsigned int t = 0; t < w->cfg.ntrees; t++)
			w->ts[t].cur_session = w->ts[t].session;
		w->cur_round = w->round++;
		w->buf = buf;
		w->count = count;
		buf_to_le(buf, count, w->esize);
		err = run(w);
		/* Back to host order, results included. */
		buf_to_le(buf, count, w->esize);
		w->buf = NULL;
	}
out:
	info_end(w, info);
	return err;
}

const char *netagg_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case -ETIMEDOUT:
		return "no result arrived within the timeout: is the job configured on the tree's node, and every worker in the allreduce?";
	case -EREMOTEIO:
		return "a result did not sum the contributions accepted (fewer than quorum workers, or regrouped): the buffer is partly overwritten";
	case -EINVAL:
		return "invalid argument (a bad configuration, or a NULL buffer)";
	case -E2BIG:
		return "the buffer has more chunks than a round's VIDs can number";
	case -EHOSTUNREACH:
		return "a tree's node did not answer for node_timeout_ms: deleted, unreachable, or without the job (is it configured there?)";
	case -EPROTOTYPE:
		return "the job's dtype on the nodes is not the worker's (netagg job add ... dtype)";
	case -ENOTUNIQ:
		return "the workers could not join: a rank was not counted exactly once in every tree (two workers sending from one child's address, two workers given one rank, or one left out of a tree)";
	}
	return strerror(err < 0 ? -err : err);
}

size_t netagg_worker_cfg_size(void)
{
	return sizeof(struct netagg_worker_cfg);
}

size_t netagg_allreduce_info_size(void)
{
	return sizeof(struct netagg_allreduce_info);
}

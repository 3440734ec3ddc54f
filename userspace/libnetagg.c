// SPDX-License-Identifier: GPL-2.0
/*
 * libnetagg - the worker side of netagg. See libnetagg.h for the contract.
 *
 * One UDP socket per worker: contributions leave from it to each tree's node
 * (port NETAGG_UDP_PORT, DSCP NETAGG_DSCP), and the nodes send the results
 * back to its address and port. Sends and receives are batched
 * (sendmmsg/recvmmsg); results are received into a staging area and copied
 * over their chunk only once the packet has been fully validated.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "libnetagg.h"

_Static_assert(sizeof(struct netagg_hdr) == 20, "netagg_hdr is 20 bytes");

#define HDR_LEN		sizeof(struct netagg_hdr)
#define ELEM_SIZE	4	/* both dtypes are 32 bits wide */
#define BATCH		64	/* packets per sendmmsg/recvmmsg call */
#define DRAIN_BATCHES	64	/* stale packets discarded at most: x BATCH */
/* Receive buffer bytes per packet in flight, beyond the packet: the skb. */
#define SKB_OVERHEAD	1024

/*
 * Per-chunk state, indexed by chunk number. Retransmission on timeout will
 * add the time of the last send here and resend the SENT chunks of a tree
 * whose oldest one is overdue.
 */
enum chunk_state { CHUNK_UNSENT, CHUNK_SENT, CHUNK_DONE };

struct chunk {
	uint8_t state;
};

/* Per tree, during one allreduce. VIDs [low, next) are in flight. */
struct tree_state {
	uint64_t nchunks;	/* chunks (VIDs) this tree carries */
	uint64_t next;		/* next VID to send */
	uint64_t low;		/* lowest VID without a result */
};

struct netagg_worker {
	int fd;
	struct netagg_worker_cfg cfg;	/* defaults filled in */
	unsigned int epp;		/* elements per packet */
	size_t pkt_max;			/* HDR_LEN + epp * ELEM_SIZE */
	size_t rstride;			/* receive slot size, cache line aligned */
	int8_t tree_of_tid[NETAGG_TREES_MAX];	/* -1: not ours */
	struct sockaddr_in dst[NETAGG_TREES_MAX];	/* by tree index */
	struct tree_state ts[NETAGG_TREES_MAX];

	struct chunk *chunks;		/* grown to the largest allreduce */
	size_t chunks_cap;

	/* The allreduce under way. */
	uint8_t *buf;
	size_t count, nchunks, remaining;
	struct netagg_allreduce_info info;

	struct mmsghdr smsg[BATCH];
	struct iovec siov[BATCH][2];	/* header, then payload in the buffer */
	struct netagg_hdr shdr[BATCH];

	struct mmsghdr rmsg[BATCH];
	struct iovec riov[BATCH];
	uint8_t *rbuf;			/* BATCH x rstride bytes */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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

int netagg_worker_open(const struct netagg_worker_cfg *cfg, struct netagg_worker **wp)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int tos = NETAGG_DSCP << 2;
	struct netagg_worker *w;
	size_t inflight;
	int err;

	*wp = NULL;
	if (!cfg || cfg->ntrees < 1 || cfg->ntrees > NETAGG_TREES_MAX ||
	    (cfg->dtype != NETAGG_DTYPE_F32 && cfg->dtype != NETAGG_DTYPE_I32) ||
	    (cfg->mtu && (cfg->mtu < NETAGG_MTU_MIN || cfg->mtu > NETAGG_MTU_MAX)) ||
	    cfg->window > NETAGG_WINDOW_MAX || cfg->timeout_ms > INT_MAX)
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
	w->epp = netagg_elems_per_packet(w->cfg.mtu);
	w->pkt_max = HDR_LEN + (size_t)w->epp * ELEM_SIZE;

	memset(w->tree_of_tid, -1, sizeof(w->tree_of_tid));
	for (unsigned int t = 0; t < cfg->ntrees; t++) {
		uint16_t tid = cfg->trees[t].tid;

		if (tid >= NETAGG_TREES_MAX || w->tree_of_tid[tid] >= 0) {
			err = -EINVAL;	/* out of range or a TID twice */
			goto fail;
		}
		w->tree_of_tid[tid] = t;
		w->dst[t].sin_family = AF_INET;
		w->dst[t].sin_addr = cfg->trees[t].addr;
		w->dst[t].sin_port = htons(NETAGG_UDP_PORT);
	}

	/*
	 * One spare byte a packet, so that an oversized one shows as too
	 * long; slots aligned, so that headers can be read in place.
	 */
	w->rstride = (w->pkt_max + 1 + 63) & ~(size_t)63;
	w->rbuf = aligned_alloc(64, BATCH * w->rstride);
	if (!w->rbuf) {
		err = -ENOMEM;
		goto fail;
	}
	for (int i = 0; i < BATCH; i++) {
		w->riov[i].iov_base = w->rbuf + i * w->rstride;
		w->riov[i].iov_len = w->pkt_max + 1;
		w->rmsg[i].msg_hdr.msg_iov = &w->riov[i];
		w->rmsg[i].msg_hdr.msg_iovlen = 1;
		w->smsg[i].msg_hdr.msg_iov = w->siov[i];
		w->smsg[i].msg_hdr.msg_iovlen = 2;
		w->smsg[i].msg_hdr.msg_namelen = sizeof(struct sockaddr_in);
		w->siov[i][0].iov_base = &w->shdr[i];
		w->siov[i][0].iov_len = HDR_LEN;
	}

	w->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (w->fd < 0 ||
	    setsockopt(w->fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)) < 0) {
		err = -errno;
		goto fail;
	}
	/*
	 * Every result in flight must fit the receive buffer at once: results
	 * of all trees can arrive in one burst, and one dropped here can only
	 * end in a timeout.
	 */
	inflight = (size_t)w->cfg.ntrees * w->cfg.window * (w->cfg.mtu + SKB_OVERHEAD);
	set_rcvbuf(w->fd, inflight);
	/* Bind now (port 0: ephemeral) so results have a fixed port to reach. */
	sin.sin_addr = cfg->src;
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
	free(w->chunks);
	free(w);
}

static size_t chunk_count(const struct netagg_worker *w, size_t c)
{
	size_t off = c * w->epp;

	return w->count - off < w->epp ? w->count - off : w->epp;
}

/* Send every chunk the windows allow, round robin over the trees. */
static int send_ready(struct netagg_worker *w)
{
	unsigned int nt = w->cfg.ntrees;
	bool more = true;

	while (more) {
		unsigned int n = 0, done = 0;

		/* Fill one batch, a chunk per tree per round. */
		more = false;
		while (n < BATCH) {
			bool any = false;

			for (unsigned int t = 0; t < nt && n < BATCH; t++) {
				struct tree_state *ts = &w->ts[t];
				struct netagg_hdr *h = &w->shdr[n];
				size_t c, cnt;

				if (ts->next >= ts->nchunks ||
				    ts->next >= ts->low + w->cfg.window)
					continue;
				c = ts->next * nt + t;
				cnt = chunk_count(w, c);
				memset(h, 0, sizeof(*h));
				h->version = NETAGG_PROTO_VERSION;
				h->flags = ts->next + 1 == ts->nchunks ? NETAGG_F_FIN : 0;
				h->dtype = w->cfg.dtype;
				h->jid = htonl(w->cfg.jid);
				h->vid = htonl((uint32_t)ts->next);
				h->tid = htons(w->cfg.trees[t].tid);
				h->count = htons((uint16_t)cnt);
				h->contributors = htons(1);
				w->siov[n][1].iov_base = w->buf + c * w->epp * ELEM_SIZE;
				w->siov[n][1].iov_len = cnt * ELEM_SIZE;
				w->smsg[n].msg_hdr.msg_name = &w->dst[t];
				w->chunks[c].state = CHUNK_SENT;
				ts->next++;
				n++;
				any = true;
			}
			if (!any)
				break;
		}
		if (n == BATCH)
			more = true;	/* the windows may allow still more */

		/* Blocking socket: waits for send buffer space, not for peers. */
		while (done < n) {
			int r = sendmmsg(w->fd, w->smsg + done, n - done, 0);

			if (r < 0) {
				if (errno == EINTR)
					continue;
				return -errno;
			}
			done += r;
			w->info.packets_sent += r;
		}
	}
	return 0;
}

/* Validate one received packet; copy it over its chunk if it is a result we wait for. */
static bool take_result(struct netagg_worker *w, const uint8_t *pkt, size_t len)
{
	const struct netagg_hdr *h = (const struct netagg_hdr *)pkt;
	unsigned int nt = w->cfg.ntrees;
	struct tree_state *ts;
	uint16_t tid, cnt, contrib;
	uint32_t vid;
	size_t c;
	int t;

	if (len < HDR_LEN || h->version != NETAGG_PROTO_VERSION ||
	    !(h->flags & NETAGG_F_RESULT) || h->dtype != w->cfg.dtype ||
	    ntohl(h->jid) != w->cfg.jid)
		return false;
	tid = ntohs(h->tid);
	if (tid >= NETAGG_TREES_MAX || (t = w->tree_of_tid[tid]) < 0)
		return false;
	ts = &w->ts[t];
	vid = ntohl(h->vid);
	if (vid < ts->low || vid >= ts->next)	/* not in flight */
		return false;
	c = (size_t)vid * nt + t;
	cnt = ntohs(h->count);
	contrib = ntohs(h->contributors);
	if (w->chunks[c].state != CHUNK_SENT || cnt != chunk_count(w, c) ||
	    len != HDR_LEN + (size_t)cnt * ELEM_SIZE || contrib == 0)
		return false;

	memcpy(w->buf + c * w->epp * ELEM_SIZE, pkt + HDR_LEN, cnt * ELEM_SIZE);
	w->chunks[c].state = CHUNK_DONE;
	w->remaining--;
	w->info.packets_received++;
	if (!w->info.min_contributors || contrib < w->info.min_contributors)
		w->info.min_contributors = contrib;
	if (contrib > w->info.max_contributors)
		w->info.max_contributors = contrib;
	/* Results may come out of order: slide past every finished VID. */
	while (ts->low < ts->next && w->chunks[ts->low * nt + t].state == CHUNK_DONE)
		ts->low++;
	return true;
}

/*
 * Read what is queued, without blocking. Returns the number of results
 * taken (>= 0), -EAGAIN when nothing at all was queued, or -errno.
 * With take false, everything read is discarded as ignored.
 */
static int recv_batch(struct netagg_worker *w, bool take)
{
	int n, taken = 0;

	for (int i = 0; i < BATCH; i++)
		w->rmsg[i].msg_hdr.msg_flags = 0;
	do
		n = recvmmsg(w->fd, w->rmsg, BATCH, MSG_DONTWAIT, NULL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		/* ICMP errors on an unconnected socket: nothing to read */
		return errno == EWOULDBLOCK || errno == ECONNREFUSED ? -EAGAIN : -errno;
	for (int i = 0; i < n; i++) {
		struct mmsghdr *m = &w->rmsg[i];

		/* A truncated packet is longer than any result of ours. */
		if (take && !(m->msg_hdr.msg_flags & MSG_TRUNC) &&
		    take_result(w, w->riov[i].iov_base, m->msg_len))
			taken++;
		else
			w->info.packets_ignored++;
	}
	return taken;
}

/* Payload elements are little endian on the wire; convert in place. */
static void buf_to_le(void *buf, size_t count)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	uint32_t *p = buf;

	for (size_t i = 0; i < count; i++)
		p[i] = __builtin_bswap32(p[i]);
#else
	(void)buf;
	(void)count;
#endif
}

static int run(struct netagg_worker *w)
{
	unsigned int nt = w->cfg.ntrees;
	uint64_t last_progress;
	int err;

	w->nchunks = w->count / w->epp + (w->count % w->epp != 0);
	/* VIDs are 32 bits and must not wrap within one allreduce. */
	if ((w->nchunks + nt - 1) / nt > (uint64_t)UINT32_MAX + 1)
		return -E2BIG;
	if (w->nchunks > w->chunks_cap) {
		struct chunk *c = realloc(w->chunks, w->nchunks * sizeof(*c));

		if (!c)
			return -ENOMEM;
		w->chunks = c;
		w->chunks_cap = w->nchunks;
	}
	memset(w->chunks, 0, w->nchunks * sizeof(*w->chunks));
	for (unsigned int t = 0; t < nt; t++) {
		/* Chunk c is on tree c % nt: the first nchunks % nt trees get one more. */
		w->ts[t].nchunks = w->nchunks / nt + (t < w->nchunks % nt);
		w->ts[t].next = 0;
		w->ts[t].low = 0;
	}
	w->remaining = w->nchunks;

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

	last_progress = now_ms();
	for (;;) {
		uint64_t now;
		struct pollfd pfd = { .fd = w->fd, .events = POLLIN };

		err = send_ready(w);
		if (err)
			return err;
		if (!w->remaining)
			return 0;
		err = recv_batch(w, true);
		if (err > 0) {
			last_progress = now_ms();
			continue;
		}
		if (err < 0 && err != -EAGAIN)
			return err;
		/* Checked here too so that a stream of junk cannot hold off the timeout. */
		now = now_ms();
		if (now - last_progress >= w->cfg.timeout_ms)
			return -ETIMEDOUT;
		if (err == 0)	/* only ignored packets: more may be queued */
			continue;

		/* Nothing queued: wait for a result, or give up. */
		if (poll(&pfd, 1, (int)(last_progress + w->cfg.timeout_ms - now)) < 0 &&
		    errno != EINTR)
			return -errno;
	}
}

int netagg_allreduce(struct netagg_worker *w, void *buf, size_t count,
		     struct netagg_allreduce_info *info)
{
	int err = -EINVAL;

	memset(&w->info, 0, sizeof(w->info));
	if (buf || !count) {
		w->buf = buf;
		w->count = count;
		buf_to_le(buf, count);
		err = run(w);
		buf_to_le(buf, count);	/* back to host order, results included */
		w->buf = NULL;
	}
	if (info)
		*info = w->info;
	return err;
}

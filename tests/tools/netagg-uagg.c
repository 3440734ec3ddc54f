// SPDX-License-Identifier: GPL-2.0
/*
 * netagg-uagg - a userspace aggregator: what the kernel module does as the
 * root of a tree, done over one UDP socket with recvmmsg/sendmmsg. It is
 * the baseline a user would write instead of the module, for benchmarks.
 *
 * Workers (libnetagg) use it unmodified: they send contributions to
 * ADDR:7177 and get the results back at their source address and port.
 * The semantics are kmod/agg.c's for a root (slots, rounds, FIN, RETRY,
 * PROBE, kept results; see docs/design.md), decided by the module's window
 * core (core/window.c, core/window.h); sums use its reduction core
 * (core/reduce.c, core/reduce_fpu.c); both built natively. No op avg, no
 * ECN, no quorum.
 *
 * Prints one JSON object of counters on exit: after --duration-ms, or on
 * SIGINT/SIGTERM. Exit 0, 1 on a socket error, 2 on a bad command line.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/netagg.h>

#include "output.h"
#include "reduce.h"
#include "tool.h"
#include "window.h"

_Static_assert(sizeof(struct netagg_hdr) == 24, "netagg_hdr is 24 bytes");

#define HDR_LEN		sizeof(struct netagg_hdr)
#define ELEM_SIZE	4	/* both dtypes are 32 bits wide */
#define IP_UDP_LEN	(20 + 8)
#define VLEN_MAX	1024	/* UIO_MAXIOV: most messages a *mmsg call takes */
#define SENDQ		VLEN_MAX
#define DRAIN_MAX	64	/* receive batches between looks at the clock */
#define POLL_MS		100	/* longest sleep: signals and the deadline */
#define SNDTIMEO_MS	100	/* longest a full send buffer may block us */
#define EINTR_MAX	8

/*
 * A tree's rounds and ring of 2 x window slots, as the module's
 * (core/window.h): a slot is one VID, its sum, then its result, kept for a
 * RETRY.
 */
struct tree {
	struct netagg_window win;
	struct netagg_win_slot *slots;
	uint8_t *data;		/* ring x stride bytes of sums */
	uint16_t child_port[NETAGG_CHILDREN_MAX];	/* network order */
};

/* Why a packet was dropped; the JSON names follow. */
enum drop {
	D_SHORT, D_VERSION, D_JOB, D_DTYPE, D_LENGTH, D_TREE, D_NOT_PARENT,
	D_NOT_CHILD, D_WINDOW, D_ROUND, D_NOMEM, D_PROBE,
	D_NUM,
	/* not drops: what happened to a contribution or probe taken */
	V_AGGREGATED = D_NUM, V_DUPLICATE, V_PROBED,
};

static const char *const drop_names[D_NUM] = {
	"short", "version", "job", "dtype", "length", "tree", "not_parent",
	"not_child", "window", "round", "nomem", "probe",
};

struct stats {
	uint64_t rx, aggregated, results, sent, duplicates, resent, probed;
	uint64_t fin, rounds, abandoned, send_errors;
	uint64_t dropped[D_NUM];
	uint32_t rx_overflow;	/* the socket's own drops (SO_RXQ_OVFL) */
};

struct uagg {
	/* Configuration. */
	struct in_addr listen;
	uint16_t port;
	uint32_t jid;
	uint8_t dtype;
	uint32_t window, ring;
	unsigned int mtu, epp;		/* elements a packet at most */
	size_t pkt_max, stride;		/* largest packet; bytes between sums */
	unsigned int nchildren;
	struct in_addr children[NETAGG_CHILDREN_MAX];
	uint16_t child_sport[NETAGG_CHILDREN_MAX];	/* its port, network
							 * order; 0: any
							 */
	uint64_t all;			/* bits of every child */
	unsigned int batch;
	uint64_t duration_ms;
	int cpu;			/* -1: not pinned */
	unsigned int rcvbuf;
	enum netagg_simd simd;

	int fd;
	struct tree *trees[NETAGG_TREES_MAX];

	/* Receiving: batch buffers of rstride bytes, sources, overflow cmsgs. */
	size_t rstride;
	uint8_t *rbuf;
	struct mmsghdr *rmsg;
	struct iovec *riov;
	struct sockaddr_in *rsrc;
	uint8_t *rctl;

	/* Sending: one copy a result packet, one message a destination. */
	unsigned int sn, nbuf;
	uint8_t *sbuf;			/* SENDQ x rstride */
	struct mmsghdr smsg[SENDQ];
	struct iovec siov[SENDQ];
	struct sockaddr_in sdst[SENDQ];

	struct stats st;
};

#define CTL_LEN	CMSG_SPACE(sizeof(uint32_t))

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void usage(FILE *f)
{
	fputs("Usage: netagg-uagg --child ADDR[:PORT] [--child ...]... [OPTION]...\n"
	      "A userspace root aggregator: sums the children's contributions and sends\n"
	      "each result back to every child, as the netagg module does as a root.\n"
	      "  --listen ADDR       bind address (default any)\n"
	      "  --port P            UDP port (default 7177)\n"
	      "  --job J             job id (default 0)\n"
	      "  --dtype f32|i32     element type (default f32)\n"
	      "  --window W          VIDs in flight per tree, 1-4096 (default 64)\n"
	      "  --mtu M             the job's MTU, 128-9000 (default 1500)\n"
	      "  --child ADDR[:PORT] a child's address (and UDP port), child i is bit i;\n"
	      "                      1-64 of them\n"
	      "  --batch N           packets per recvmmsg/sendmmsg, 1-1024 (default 64)\n"
	      "  --duration-ms MS    exit after MS ms (default 0: on SIGINT/SIGTERM)\n"
	      "  --cpu N             pin to CPU N\n"
	      "  --rcvbuf BYTES      socket receive buffer (default 4 MiB)\n"
	      "  --help              this text\n"
	      "Prints one JSON object of counters on exit.\n", f);
}

/* ADDR or ADDR:PORT, as the module's children (an address with ports or
 * without one, each once). */
static void add_child(struct uagg *u, const char *opt, const char *s)
{
	uint16_t port;
	struct in_addr a = netagg_parse_endpoint(opt, s, &port);

	if (a.s_addr == htonl(INADDR_ANY))
		netagg_die("%s: 0.0.0.0 cannot be a child", opt);
	if (u->nchildren == NETAGG_CHILDREN_MAX)
		netagg_die("%s: more than %d children", opt, NETAGG_CHILDREN_MAX);
	for (unsigned int i = 0; i < u->nchildren; i++)
		if (u->children[i].s_addr == a.s_addr &&
		    (u->child_sport[i] == htons(port) || !u->child_sport[i] || !port))
			netagg_usage_error("%s: %s given twice, or with and without a port",
					   opt, s);
	u->child_sport[u->nchildren] = htons(port);
	u->children[u->nchildren++] = a;
}

static void parse_args(int argc, char **argv, struct uagg *u)
{
	enum { O_LISTEN = 256, O_PORT, O_JOB, O_DTYPE, O_WINDOW, O_MTU,
	       O_CHILD, O_BATCH, O_DURATION, O_CPU, O_RCVBUF };
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, O_LISTEN },
		{ "port", required_argument, NULL, O_PORT },
		{ "job", required_argument, NULL, O_JOB },
		{ "dtype", required_argument, NULL, O_DTYPE },
		{ "window", required_argument, NULL, O_WINDOW },
		{ "mtu", required_argument, NULL, O_MTU },
		{ "child", required_argument, NULL, O_CHILD },
		{ "batch", required_argument, NULL, O_BATCH },
		{ "duration-ms", required_argument, NULL, O_DURATION },
		{ "cpu", required_argument, NULL, O_CPU },
		{ "rcvbuf", required_argument, NULL, O_RCVBUF },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char name[32];
	int opt;

	while ((opt = netagg_getopt(argc, argv, ":h", opts, name,
				   sizeof(name))) != -1) {
		switch (opt) {
		case O_LISTEN: u->listen = netagg_parse_addr(name, optarg); break;
		case O_PORT: u->port = netagg_parse_num(name, optarg, 1, UINT16_MAX); break;
		case O_JOB: u->jid = netagg_parse_num(name, optarg, 0, UINT32_MAX); break;
		case O_WINDOW:
			u->window = netagg_parse_num(name, optarg, 1, NETAGG_WINDOW_MAX);
			break;
		case O_MTU:
			u->mtu = netagg_parse_num(name, optarg, NETAGG_MTU_MIN, NETAGG_MTU_MAX);
			break;
		case O_CHILD: add_child(u, name, optarg); break;
		case O_BATCH: u->batch = netagg_parse_num(name, optarg, 1, VLEN_MAX); break;
		case O_DURATION:
			u->duration_ms = netagg_parse_num(name, optarg, 0, UINT32_MAX);
			break;
		case O_CPU: u->cpu = netagg_parse_num(name, optarg, 0, CPU_SETSIZE - 1); break;
		case O_RCVBUF:
			u->rcvbuf = netagg_parse_num(name, optarg, 4096, INT_MAX / 2);
			break;
		case O_DTYPE:
			/* the 32-bit types only: that is what it sums */
			u->dtype = netagg_parse_name(name, optarg, netagg_dtype_names,
						     NETAGG_DTYPE_I32 + 1, false);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			netagg_bad_option(argv, opt);
		}
	}
	netagg_no_operands(argc, argv);
	if (!u->nchildren)
		netagg_usage_error("at least one --child is required");
}

/* Buffers and message arrays, once the configuration is known. */
static void setup_buffers(struct uagg *u)
{
	u->ring = 2 * u->window;
	u->epp = (u->mtu - IP_UDP_LEN - HDR_LEN) / ELEM_SIZE;
	u->pkt_max = HDR_LEN + (size_t)u->epp * ELEM_SIZE;
	/* Sums start on cache lines, as the module's (kmod/job.c). */
	u->stride = ((size_t)u->epp * ELEM_SIZE + 63) & ~(size_t)63;
	/* One spare byte, so that a longer packet shows as truncated. */
	u->rstride = (u->pkt_max + 1 + 63) & ~(size_t)63;
	u->all = u->nchildren == 64 ? ~0ULL : (1ULL << u->nchildren) - 1;

	u->rbuf = aligned_alloc(64, u->batch * u->rstride);
	u->sbuf = aligned_alloc(64, SENDQ * u->rstride);
	if (!u->rbuf || !u->sbuf)
		netagg_die("out of memory");
	u->rmsg = netagg_xcalloc(u->batch, sizeof(*u->rmsg));
	u->riov = netagg_xcalloc(u->batch, sizeof(*u->riov));
	u->rsrc = netagg_xcalloc(u->batch, sizeof(*u->rsrc));
	u->rctl = netagg_xcalloc(u->batch, CTL_LEN);
	for (unsigned int i = 0; i < u->batch; i++) {
		u->riov[i].iov_base = u->rbuf + i * u->rstride;
		u->riov[i].iov_len = u->pkt_max + 1;
		u->rmsg[i].msg_hdr.msg_iov = &u->riov[i];
		u->rmsg[i].msg_hdr.msg_iovlen = 1;
	}
	for (unsigned int i = 0; i < SENDQ; i++) {
		u->smsg[i].msg_hdr.msg_iov = &u->siov[i];
		u->smsg[i].msg_hdr.msg_iovlen = 1;
		u->smsg[i].msg_hdr.msg_name = &u->sdst[i];
		u->smsg[i].msg_hdr.msg_namelen = sizeof(u->sdst[i]);
		u->sdst[i].sin_family = AF_INET;
	}
}

static void setup_socket(struct uagg *u)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_addr = u->listen,
		.sin_port = htons(u->port),
	};
	struct timeval tv = { .tv_usec = SNDTIMEO_MS * 1000 };
	int tos = NETAGG_DSCP << 2, one = 1, v = u->rcvbuf;

	u->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (u->fd < 0)
		netagg_die("socket: %s", strerror(errno));
	/* Results are aggregation packets too: DSCP 56, as the module's. */
	if (setsockopt(u->fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)) < 0)
		netagg_die("IP_TOS: %s", strerror(errno));
	if (setsockopt(u->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
		netagg_die("SO_SNDTIMEO: %s", strerror(errno));
	/* Best effort: without the receive drop count, it shows as 0. */
	setsockopt(u->fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	/* FORCE passes net.core.rmem_max, with CAP_NET_ADMIN only. */
	if (setsockopt(u->fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)) < 0 &&
	    setsockopt(u->fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)) < 0)
		netagg_die("SO_RCVBUF %d: %s", v, strerror(errno));
	if (bind(u->fd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		netagg_die("bind %s:%u: %s", inet_ntoa(u->listen), u->port,
			   strerror(errno));
}

/* The tree of @tid, created on its first packet; NULL without memory. */
static struct tree *tree_get(struct uagg *u, uint16_t tid)
{
	struct tree *t = u->trees[tid];

	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	netagg_win_init(&t->win, u->window);
	t->slots = calloc(u->ring, sizeof(*t->slots));
	/* Not touched until used: a tree costs what its VIDs fill. */
	t->data = aligned_alloc(64, u->ring * u->stride);
	if (!t->slots || !t->data) {
		free(t->slots);
		free(t->data);
		free(t);
		return NULL;
	}
	u->trees[tid] = t;
	return t;
}

static int child_bit(const struct uagg *u, uint32_t addr, uint16_t port)
{
	for (unsigned int i = 0; i < u->nchildren; i++)
		if (u->children[i].s_addr == addr &&
		    (!u->child_sport[i] || u->child_sport[i] == port))
			return i;
	return -1;
}

/* Send what is queued. A packet the socket refuses is lost as on a wire. */
static void tx_flush(struct uagg *u)
{
	unsigned int done = 0, eintr = 0;

	while (done < u->sn) {
		int r = sendmmsg(u->fd, u->smsg + done, u->sn - done, 0);

		if (r < 0) {
			if (errno == EINTR && eintr++ < EINTR_MAX)
				continue;
			/* The worker sends a RETRY when its result is overdue. */
			u->st.send_errors++;
			done++;
			continue;
		}
		u->st.sent += r;
		done += r;
	}
	u->sn = 0;
	u->nbuf = 0;
}

static void *slot_data(const struct uagg *u, const struct tree *t,
		       const struct netagg_win_slot *s)
{
	return t->data + (s - t->slots) * u->stride;
}

/* A send buffer for a packet to @ndest destinations, room made for them. */
static uint8_t *tx_buf(struct uagg *u, unsigned int ndest)
{
	if (u->sn + ndest > SENDQ || u->nbuf == SENDQ)
		tx_flush(u);
	return u->sbuf + u->nbuf++ * u->rstride;
}

/*
 * Copy the slot's result into a send buffer for @ndest destinations; the
 * slot may be reused before the queue is flushed. Returns the buffer.
 */
static uint8_t *tx_result(struct uagg *u, uint16_t tid, const struct tree *t,
			  const struct netagg_win_slot *s, unsigned int ndest)
{
	uint8_t *buf = tx_buf(u, ndest);
	struct netagg_hdr *h = (struct netagg_hdr *)buf;

	memset(h, 0, sizeof(*h));
	h->version = NETAGG_PROTO_VERSION;
	h->flags = NETAGG_F_RESULT | (s->flags & NETAGG_F_FIN);
	h->dtype = u->dtype;
	h->jid = htonl(u->jid);
	h->vid = htonl(s->vid);
	h->tid = htons(tid);
	h->count = htons(s->count);
	h->contributors = htons(s->contributors);
	h->round = htons(s->round);
	h->session = htonl(netagg_win_session(&t->win, s));
	memcpy(buf + HDR_LEN, slot_data(u, t, s), (size_t)s->count * ELEM_SIZE);
	return buf;
}

static void tx_to(struct uagg *u, uint8_t *buf, uint32_t addr, uint16_t port)
{
	const struct netagg_hdr *h = (const struct netagg_hdr *)buf;
	unsigned int i = u->sn++;

	u->siov[i].iov_base = buf;
	u->siov[i].iov_len = HDR_LEN + (size_t)ntohs(h->count) * ELEM_SIZE;
	u->sdst[i].sin_addr.s_addr = addr;
	u->sdst[i].sin_port = port;
}

/* The kept result of @s again, to child @bit only, at @port. */
static void resend_kept(struct uagg *u, uint16_t tid, const struct tree *t,
			const struct netagg_win_slot *s, int bit, uint16_t port)
{
	tx_to(u, tx_result(u, tid, t, s, 1), u->children[bit].s_addr, port);
	u->st.resent++;
}

/* While the head slot has every child, it completes: its result fans out. */
static void drain(struct uagg *u, uint16_t tid, struct tree *t)
{
	while (netagg_win_live(&t->win)) {
		struct netagg_win_slot *s = &t->slots[t->win.head];
		uint8_t *buf;

		if (!netagg_win_slot_due(&t->win, s) ||
		    netagg_win_ready(s, u->all, 0, 0) != NETAGG_WIN_ALL)
			return;
		s->state = NETAGG_SLOT_DONE;
		buf = tx_result(u, tid, t, s, u->nchildren);
		for (unsigned int i = 0; i < u->nchildren; i++)
			tx_to(u, buf, u->children[i].s_addr, t->child_port[i]);
		u->st.results++;
		netagg_win_advance(&t->win, s);
	}
}

/* The completed slot of @pos behind the window, if it is still kept. */
static struct netagg_win_slot *kept(struct tree *t, uint32_t pos)
{
	uint32_t i;

	if (!netagg_win_behind(&t->win, pos, &i) ||
	    !netagg_win_slot_kept(&t->slots[i], pos))
		return NULL;
	return &t->slots[i];
}

/* kmod/agg.c's netagg_contribution(), for a root. */
static int contribution(struct uagg *u, uint16_t tid, struct tree *t, int bit,
			const struct netagg_hdr *h, const uint8_t *payload,
			uint16_t sport)
{
	uint16_t round = ntohs(h->round), count = ntohs(h->count);
	uint32_t session = ntohl(h->session), vid = ntohl(h->vid), pos, i;
	struct netagg_win_slot *s;
	void *data;
	bool cur;

	if (!netagg_win_pos(&t->win, session, round, vid, &pos, &cur)) {
		/* Another round: its workers have all left the last one. */
		if (!netagg_win_new_round(&t->win, session, round, vid))
			return D_ROUND;
		/*
		 * The current one becomes the previous, whose kept results
		 * still answer a RETRY; an unfinished one is given up.
		 */
		if (netagg_win_start(&t->win, session, round))
			u->st.abandoned++;
		u->st.rounds++;
		pos = t->win.base + vid;
		cur = true;
	}

	if (!netagg_win_summing(&t->win, pos, cur, &i)) {
		s = kept(t, pos);
		if (!s || !netagg_win_slot_has(s, bit))
			return D_WINDOW;
		/* Already summed: a RETRY asks for the kept result. */
		if (h->flags & NETAGG_F_RETRY)
			resend_kept(u, tid, t, s, bit, sport);
		return V_DUPLICATE;
	}

	s = &t->slots[i];
	data = slot_data(u, t, s);
	if (!netagg_win_slot_filling(s, pos)) {
		/* The first contribution is copied, not added to zeros. */
		memcpy(data, payload, (size_t)count * ELEM_SIZE);
		*s = netagg_win_slot_new(pos, vid, round, count);
	} else {
		/* Not complete yet: the result will reach the sender anyway. */
		if (netagg_win_slot_has(s, bit))
			return V_DUPLICATE;
		if (s->count != count)
			return D_LENGTH;
		/* dtype was checked against the job's: cannot fail. */
		netagg_reduce(u->simd, u->dtype, data, payload, count);
	}
	netagg_win_slot_add(s, bit, ntohs(h->contributors), h->flags);
	t->child_port[bit] = sport;
	if (h->flags & NETAGG_F_FIN)
		u->st.fin++;
	drain(u, tid, t);
	return V_AGGREGATED;
}

/* kmod/agg.c's netagg_probe(), for a root: the held and done maps. */
static int probe(struct uagg *u, struct tree *t, int bit,
		 const struct netagg_hdr *h, uint16_t sport)
{
	uint32_t vid = ntohl(h->vid), pos, j, n;
	uint64_t held = 0, done = 0, map[2];
	struct netagg_hdr r;
	struct netagg_win_slot *s;
	uint8_t *buf;
	bool cur;

	if (h->count)
		return D_PROBE;
	/* Of the last round, only the VIDs it completed are its own. */
	n = netagg_win_probe(&t->win, ntohl(h->session), ntohs(h->round), vid,
			     &pos, &cur);
	for (uint32_t i = 0; i < n; i++) {
		if (cur && netagg_win_open(&t->win, pos + i, &j)) {
			s = &t->slots[j];
			if (netagg_win_slot_filling(s, pos + i) &&
			    netagg_win_slot_has(s, bit))
				held |= 1ULL << i;
			continue;
		}
		s = kept(t, pos + i);
		if (!s || !netagg_win_slot_has(s, bit))
			continue;
		held |= 1ULL << i;
		done |= 1ULL << i;
	}

	buf = tx_buf(u, 1);
	memcpy(&r, h, sizeof(r));
	r.flags = NETAGG_F_PROBE | NETAGG_F_RESULT;
	r.reserved = 0;
	r.count = htons(sizeof(map) / ELEM_SIZE);
	r.contributors = 0;
	map[0] = htole64(held);
	map[1] = htole64(done);
	memcpy(buf, &r, sizeof(r));
	memcpy(buf + HDR_LEN, map, sizeof(map));
	tx_to(u, buf, u->children[bit].s_addr, sport);
	return V_PROBED;
}

/* One received packet, checked as the module's hook does (kmod/hook.c). */
static int rx_one(struct uagg *u, const uint8_t *pkt, size_t len, bool trunc,
		  const struct sockaddr_in *src)
{
	const struct netagg_hdr *h = (const struct netagg_hdr *)pkt;
	struct tree *t;
	uint16_t count, tid;
	int bit;

	if (len < HDR_LEN)
		return D_SHORT;
	if (h->version != NETAGG_PROTO_VERSION)
		return D_VERSION;
	if (ntohl(h->jid) != u->jid)
		return D_JOB;
	if (h->dtype != u->dtype)
		return D_DTYPE;
	count = ntohs(h->count);
	if (trunc || count > u->epp || len != HDR_LEN + (size_t)count * ELEM_SIZE)
		return D_LENGTH;
	tid = ntohs(h->tid);
	if (tid >= NETAGG_TREES_MAX)
		return D_TREE;
	/* A root has no parent to send it results. */
	if (h->flags & NETAGG_F_RESULT)
		return D_NOT_PARENT;
	bit = child_bit(u, src->sin_addr.s_addr, src->sin_port);
	if (bit < 0)
		return D_NOT_CHILD;
	t = tree_get(u, tid);
	if (!t)
		return D_NOMEM;
	if (h->flags & NETAGG_F_PROBE)
		return probe(u, t, bit, h, src->sin_port);
	return contribution(u, tid, t, bit, h, pkt + HDR_LEN, src->sin_port);
}

/* Read one batch without blocking, handle it, send what it produced. */
static int rx_batch(struct uagg *u)
{
	int n;

	for (unsigned int i = 0; i < u->batch; i++) {
		struct msghdr *mh = &u->rmsg[i].msg_hdr;

		mh->msg_name = &u->rsrc[i];
		mh->msg_namelen = sizeof(u->rsrc[i]);
		mh->msg_control = u->rctl + i * CTL_LEN;
		mh->msg_controllen = CTL_LEN;
		mh->msg_flags = 0;
	}
	n = recvmmsg(u->fd, u->rmsg, u->batch, MSG_DONTWAIT, NULL);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		netagg_die("recvmmsg: %s", strerror(errno));
	}
	for (int i = 0; i < n; i++) {
		struct msghdr *mh = &u->rmsg[i].msg_hdr;
		int v = rx_one(u, u->riov[i].iov_base, u->rmsg[i].msg_len,
			       mh->msg_flags & MSG_TRUNC, &u->rsrc[i]);

		u->st.rx++;
		if (v == V_AGGREGATED)
			u->st.aggregated++;
		else if (v == V_DUPLICATE)
			u->st.duplicates++;
		else if (v == V_PROBED)
			u->st.probed++;
		else
			u->st.dropped[v]++;
		if (mh->msg_controllen)
			netagg_rx_overflow(mh, &u->st.rx_overflow);
	}
	tx_flush(u);
	return n;
}

static void run(struct uagg *u)
{
	uint64_t start = now_ms();
	uint64_t end = u->duration_ms ? start + u->duration_ms : UINT64_MAX;

	while (!stop) {
		struct pollfd pfd = { .fd = u->fd, .events = POLLIN };
		uint64_t now = now_ms();
		int wait = POLL_MS;

		if (now >= end)
			break;
		if (end - now < POLL_MS)
			wait = end - now;
		/* EINTR: a signal, seen at the top of the loop. */
		if (poll(&pfd, 1, wait) < 0 && errno != EINTR)
			netagg_die("poll: %s", strerror(errno));
		for (int i = 0; i < DRAIN_MAX && !stop; i++)
			if (rx_batch(u) < (int)u->batch)
				break;
	}
}

static void report(const struct uagg *u, double elapsed)
{
	const struct stats *st = &u->st;
	int rcvbuf = 0;
	socklen_t len = sizeof(rcvbuf);

	getsockopt(u->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &len);
	netagg_out_init(stdout, true, false);
	netagg_out_open(NULL, '{');
	netagg_out_u64("rx", NULL, st->rx);
	netagg_out_u64("aggregated", NULL, st->aggregated);
	netagg_out_u64("results", NULL, st->results);
	netagg_out_u64("sent", NULL, st->sent);
	netagg_out_u64("duplicates", NULL, st->duplicates);
	netagg_out_u64("resent", NULL, st->resent);
	netagg_out_u64("probed", NULL, st->probed);
	netagg_out_u64("fin", NULL, st->fin);
	netagg_out_u64("rounds", NULL, st->rounds);
	netagg_out_u64("abandoned", NULL, st->abandoned);
	netagg_out_u64("send_errors", NULL, st->send_errors);
	netagg_out_u64("rx_overflow", NULL, st->rx_overflow);
	netagg_out_open("dropped", '{');
	for (int i = 0; i < D_NUM; i++)
		netagg_out_u64(drop_names[i], NULL, st->dropped[i]);
	netagg_out_close('}');
	netagg_out_str("simd", NULL, netagg_simd_names[u->simd]);
	netagg_out_u64("children", NULL, u->nchildren);
	netagg_out_u64("window", NULL, u->window);
	netagg_out_u64("mtu", NULL, u->mtu);
	netagg_out_u64("batch", NULL, u->batch);
	netagg_out_u64("rcvbuf", NULL, rcvbuf);
	netagg_out_double("elapsed_s", NULL, elapsed, 3);
	netagg_out_close('}');
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static struct uagg u = {
		.port = NETAGG_UDP_PORT,
		.dtype = NETAGG_DTYPE_F32,
		.window = NETAGG_WINDOW_DEFAULT,
		.mtu = NETAGG_MTU_DEFAULT,
		.batch = 64,
		.cpu = -1,
		.rcvbuf = 4 << 20,
	};
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART */
	uint64_t t0;

	parse_args(argc, argv, &u);
	if (u.cpu >= 0)
		netagg_pin_cpu(u.cpu);
	u.simd = netagg_simd_best();
	setup_buffers(&u);
	setup_socket(&u);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	t0 = now_ms();
	run(&u);
	report(&u, (now_ms() - t0) / 1e3);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * netagg-blast - a windowed stream of netagg contributions, for benchmarks.
 *
 * One UDP socket a source address sends VIDs 0 .. N-1 (the last with FIN)
 * to --dst, as fast as a window allows or at a fixed total rate, and
 * counts what comes back on it: results from a node running the module as
 * root or from netagg-uagg, or, in plain forwarding, another netagg-blast's
 * stream. Content is not checked; packets with the RESULT flag are counted.
 *
 * A socket never has more than W VIDs sent but not answered (sent -
 * received <= W), and VID v leaves every socket before VID v + 1 leaves
 * any. With --segments S, up to S consecutive VIDs of a socket leave as
 * one super-packet (UDP_SEGMENT, each segment a whole packet), and the
 * sockets take super-packets whole (UDP_GRO), counting their segments.
 * Nothing is retransmitted: this measures, it does not recover. So in
 * forwarding mode the side started first takes --wait-first: what it sent
 * before its peer's socket was bound would be lost.
 *
 * Prints one JSON object. Exit 0 when every socket sent and received N,
 * 1 when nothing arrived for --timeout-ms (after the JSON) or on error,
 * 2 on a bad command line.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sched.h>
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
#include "tool.h"

_Static_assert(sizeof(struct netagg_hdr) == 24, "netagg_hdr is 24 bytes");

#define HDR_LEN		sizeof(struct netagg_hdr)
#define ELEM_SIZE	4	/* both dtypes are 32 bits wide */
#define IP_UDP_LEN	(20 + 8)
#define COUNT_DEFAULT	362	/* (1500 - 52) / 4: a 1500-byte MTU */
#define COUNT_MAX	((65535 - IP_UDP_LEN - HDR_LEN) / ELEM_SIZE)
#define SOURCES_MAX	64
#define VLEN_MAX	1024	/* UIO_MAXIOV: most messages a *mmsg call takes */
#define RX_BATCH	64
#define RX_ROUNDS	16	/* receive batches a socket per pass at most */
#define POLL_NS		10000000ULL	/* longest sleep: 10 ms */
#define SKB_OVERHEAD	1024	/* receive buffer a packet beyond its bytes */
#define RCVBUF_MIN	(4 << 20)
#define CTL_LEN		(CMSG_SPACE(sizeof(uint32_t)) + CMSG_SPACE(sizeof(int)))
#define SEGS_MAX	64	/* UDP_MAX_SEGMENTS */
#define SUPER_MAX	(65535 - IP_UDP_LEN)	/* UDP payload bytes at most */
#define EINTR_MAX	8

struct source {
	int fd;
	struct in_addr addr;
	uint64_t next;		/* VIDs queued or sent: the next one to queue */
	uint64_t received, results;
	uint32_t overflow;	/* the socket's own drops (SO_RXQ_OVFL) */
	unsigned int qn;	/* messages queued, not yet accepted by the socket */
	bool full;		/* the socket refused some: wait for POLLOUT */
	struct mmsghdr *msg;	/* batch of them */
	struct iovec *iov;	/* 2 a packet: header, shared payload */
	struct netagg_hdr *hdr;	/* segs a message */
	unsigned int *nseg;	/* packets in each message */
	uint8_t *ctl;		/* UDP_SEGMENT of each message */
};

struct blast {
	struct in_addr dst;
	uint16_t port, src_port;
	uint32_t jid;
	uint16_t tree, round, count;
	uint8_t dtype;
	uint64_t packets;
	uint32_t window;
	uint64_t rate;		/* packets/s over all sockets, 0: unpaced */
	uint64_t timeout_ms;
	unsigned int batch;
	unsigned int segs;	/* packets a message (super-packet) at most */
	int cpu;		/* -1: not pinned */
	bool wait_first;	/* send nothing before a packet arrived */

	unsigned int nsrc;
	struct source src[SOURCES_MAX];
	struct sockaddr_in dst_sin;
	uint8_t *payload;
	uint8_t rbuf[RX_BATCH][HDR_LEN];	/* headers only: content unchecked */
	struct mmsghdr rmsg[RX_BATCH];
	struct iovec riov[RX_BATCH];
	uint8_t rctl[RX_BATCH][CTL_LEN];

	uint64_t sent, received, results;
	/* Pacing: packets allowed by now are rate x (now - pace_t0) - pace_n. */
	uint64_t pace_t0, pace_n;
	uint64_t t_first;	/* of the first send: elapsed time counts from it */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void usage(FILE *f)
{
	fputs("Usage: netagg-blast --dst ADDR [OPTION]...\n"
	      "Sends VIDs 0..N-1 of contributions from each source as fast as a window\n"
	      "allows (or at --rate) and counts what comes back.\n"
	      "  --dst ADDR          destination IPv4 address (required)\n"
	      "  --port P            destination UDP port (default 7177)\n"
	      "  --src ADDR          a source address, one socket each (repeat, up to 64;\n"
	      "                      default one socket on any address)\n"
	      "  --src-port P        the sockets' UDP port (default 7177)\n"
	      "  --job J             job id (default 0)\n"
	      "  --tree T            tree id, 0-63 (default 0)\n"
	      "  --round R           round, 0-65535 (default 0; a new one for each run\n"
	      "                      against the same aggregator)\n"
	      "  --dtype f32|i32     element type (default f32)\n"
	      "  --count N           elements a packet (default 362: 1500-byte MTU)\n"
	      "  --mtu M             instead of --count: (M - 48) / 4 elements, M 128-9000\n"
	      "  --packets N         VIDs a source, the last with FIN (default 1000)\n"
	      "  --window W          VIDs sent but not answered a socket, 1-4096 (default 64)\n"
	      "  --rate PPS          total packets a second, paced (default 0: the window's pace)\n"
	      "  --timeout-ms MS     fail when nothing arrives for MS ms (default 2000)\n"
	      "  --batch N           messages a sendmmsg, 1-1024 (default 32)\n"
	      "  --segments S        up to S packets a message, as one UDP GSO super-packet,\n"
	      "                      and super-packets received whole (default 1: none)\n"
	      "  --cpu N             pin to CPU N\n"
	      "  --wait-first        send nothing until a packet arrives: for the side of a\n"
	      "                      forwarding test started first (--timeout-ms applies)\n"
	      "  --help              this text\n"
	      "Prints one JSON object. Exit 0 done, 1 timed out or failed, 2 usage error.\n", f);
}

static void add_source(struct blast *b, const char *opt, const char *s)
{
	struct in_addr a = netagg_parse_addr(opt, s);

	if (b->nsrc == SOURCES_MAX)
		netagg_die("%s: more than %d sources", opt, SOURCES_MAX);
	for (unsigned int i = 0; i < b->nsrc; i++)
		if (b->src[i].addr.s_addr == a.s_addr)
			netagg_usage_error("%s: %s given twice", opt, s);
	b->src[b->nsrc++].addr = a;
}

static void parse_args(int argc, char **argv, struct blast *b)
{
	enum { O_DST = 256, O_PORT, O_SRC, O_SRC_PORT, O_JOB, O_TREE, O_ROUND,
	       O_DTYPE, O_COUNT, O_MTU, O_PACKETS, O_WINDOW, O_RATE, O_TIMEOUT,
	       O_BATCH, O_CPU, O_WAIT_FIRST, O_SEGMENTS };
	static const struct option opts[] = {
		{ "dst", required_argument, NULL, O_DST },
		{ "port", required_argument, NULL, O_PORT },
		{ "src", required_argument, NULL, O_SRC },
		{ "src-port", required_argument, NULL, O_SRC_PORT },
		{ "job", required_argument, NULL, O_JOB },
		{ "tree", required_argument, NULL, O_TREE },
		{ "round", required_argument, NULL, O_ROUND },
		{ "dtype", required_argument, NULL, O_DTYPE },
		{ "count", required_argument, NULL, O_COUNT },
		{ "mtu", required_argument, NULL, O_MTU },
		{ "packets", required_argument, NULL, O_PACKETS },
		{ "window", required_argument, NULL, O_WINDOW },
		{ "rate", required_argument, NULL, O_RATE },
		{ "timeout-ms", required_argument, NULL, O_TIMEOUT },
		{ "batch", required_argument, NULL, O_BATCH },
		{ "segments", required_argument, NULL, O_SEGMENTS },
		{ "cpu", required_argument, NULL, O_CPU },
		{ "wait-first", no_argument, NULL, O_WAIT_FIRST },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool have_dst = false, have_count = false, have_mtu = false;
	char name[32];
	int opt;

	while ((opt = netagg_getopt(argc, argv, ":h", opts, name,
				   sizeof(name))) != -1) {
		switch (opt) {
		case O_DST:
			b->dst = netagg_parse_addr(name, optarg);
			have_dst = true;
			break;
		case O_PORT: b->port = netagg_parse_num(name, optarg, 1, UINT16_MAX); break;
		case O_SRC: add_source(b, name, optarg); break;
		case O_SRC_PORT: b->src_port = netagg_parse_num(name, optarg, 0, UINT16_MAX); break;
		case O_JOB: b->jid = netagg_parse_num(name, optarg, 0, UINT32_MAX); break;
		case O_TREE:
			b->tree = netagg_parse_num(name, optarg, 0, NETAGG_TREES_MAX - 1);
			break;
		case O_ROUND: b->round = netagg_parse_num(name, optarg, 0, UINT16_MAX); break;
		case O_COUNT:
			b->count = netagg_parse_num(name, optarg, 1, COUNT_MAX);
			have_count = true;
			break;
		case O_MTU:
			b->count = (netagg_parse_num(name, optarg, NETAGG_MTU_MIN, NETAGG_MTU_MAX) -
				    IP_UDP_LEN - HDR_LEN) / ELEM_SIZE;
			have_mtu = true;
			break;
		case O_PACKETS:
			/* VIDs are 32 bits and must not wrap within a round. */
			b->packets = netagg_parse_num(name, optarg, 1, UINT32_MAX);
			break;
		case O_WINDOW:
			b->window = netagg_parse_num(name, optarg, 1, NETAGG_WINDOW_MAX);
			break;
		case O_RATE: b->rate = netagg_parse_num(name, optarg, 0, 1000000000); break;
		case O_TIMEOUT:
			b->timeout_ms = netagg_parse_num(name, optarg, 1, UINT32_MAX);
			break;
		case O_BATCH: b->batch = netagg_parse_num(name, optarg, 1, VLEN_MAX); break;
		case O_SEGMENTS: b->segs = netagg_parse_num(name, optarg, 1, SEGS_MAX); break;
		case O_CPU: b->cpu = netagg_parse_num(name, optarg, 0, CPU_SETSIZE - 1); break;
		case O_WAIT_FIRST: b->wait_first = true; break;
		case O_DTYPE:
			/* the 32-bit types only: that is what it fills */
			b->dtype = netagg_parse_name(name, optarg, netagg_dtype_names,
						     NETAGG_DTYPE_I32 + 1, false);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case '?':
			/* getopt's word for a flag given "=VALUE" */
			if (optopt == O_WAIT_FIRST ||
			    (optopt == 'h' && !strncmp(argv[optind - 1], "--", 2)))
				netagg_usage_error("\"%s\": the option takes no value",
						   argv[optind - 1]);
			/* fall through */
		default:
			netagg_bad_option(argv, opt);
		}
	}
	netagg_no_operands(argc, argv);
	if (!have_dst)
		netagg_usage_error("--dst is required");
	if (have_count && have_mtu)
		netagg_die("--count and --mtu both say the packet size: give one");
	if (b->segs * (HDR_LEN + (size_t)b->count * ELEM_SIZE) > SUPER_MAX)
		netagg_die("--segments %u of %zu bytes exceed a UDP datagram (%u bytes)",
			   b->segs, HDR_LEN + (size_t)b->count * ELEM_SIZE, SUPER_MAX);
}

/* Every element 1 (1.0f for f32), little endian on the wire. */
static void fill_payload(struct blast *b)
{
	float one_f = 1.0f;
	uint32_t bits = 1;

	if (b->dtype == NETAGG_DTYPE_F32)
		memcpy(&bits, &one_f, sizeof(bits));
	bits = htole32(bits);
	b->payload = netagg_xcalloc(b->count, ELEM_SIZE);
	for (unsigned int i = 0; i < b->count; i++)
		memcpy(b->payload + i * ELEM_SIZE, &bits, ELEM_SIZE);
}

static void open_source(struct blast *b, struct source *s)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_addr = s->addr,
		.sin_port = htons(b->src_port),
	};
	int tos = NETAGG_DSCP << 2, one = 1;
	/*
	 * Everything the window lets in flight, in forwarding mode too: a
	 * received skb takes up to twice its bytes (its buffer is a power
	 * of two), and a packet lost here is never sent again.
	 */
	uint64_t want = (uint64_t)b->window * 2 * (HDR_LEN + b->count * ELEM_SIZE + SKB_OVERHEAD);
	int v = want > INT_MAX / 2 ? INT_MAX / 2 : want < RCVBUF_MIN ? RCVBUF_MIN : (int)want;

	s->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s->fd < 0)
		netagg_die("socket: %s", strerror(errno));
	if (setsockopt(s->fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)) < 0)
		netagg_die("IP_TOS: %s", strerror(errno));
	/* Best effort: a short buffer shows as rx_overflow and a timeout. */
	if (setsockopt(s->fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)) < 0)
		setsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
	setsockopt(s->fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	if (b->segs > 1 && setsockopt(s->fd, IPPROTO_UDP, UDP_GRO, &one, sizeof(one)) < 0)
		netagg_die("UDP_GRO: %s", strerror(errno));
	if (bind(s->fd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		netagg_die("bind %s:%u: %s", inet_ntoa(s->addr), b->src_port,
			   strerror(errno));

	s->msg = netagg_xcalloc(b->batch, sizeof(*s->msg));
	s->iov = netagg_xcalloc(2 * (size_t)b->batch * b->segs, sizeof(*s->iov));
	s->hdr = netagg_xcalloc((size_t)b->batch * b->segs, sizeof(*s->hdr));
	s->nseg = netagg_xcalloc(b->batch, sizeof(*s->nseg));
	s->ctl = netagg_xcalloc(b->batch, CMSG_SPACE(sizeof(uint16_t)));
	for (unsigned int i = 0; i < b->batch * b->segs; i++) {
		s->iov[2 * i].iov_base = &s->hdr[i];
		s->iov[2 * i].iov_len = HDR_LEN;
		s->iov[2 * i + 1].iov_base = b->payload;
		s->iov[2 * i + 1].iov_len = (size_t)b->count * ELEM_SIZE;
	}
	for (unsigned int i = 0; i < b->batch; i++) {
		s->msg[i].msg_hdr.msg_iov = &s->iov[2 * (size_t)i * b->segs];
		s->msg[i].msg_hdr.msg_name = &b->dst_sin;
		s->msg[i].msg_hdr.msg_namelen = sizeof(b->dst_sin);
	}
}

/* Message @m's packets, and their segment size if it has several. */
static void msg_segments(const struct blast *b, struct source *s, unsigned int m)
{
	struct msghdr *mh = &s->msg[m].msg_hdr;
	struct cmsghdr *cm;

	mh->msg_iovlen = 2 * s->nseg[m];
	mh->msg_control = NULL;
	mh->msg_controllen = 0;
	if (s->nseg[m] < 2)
		return;
	mh->msg_control = s->ctl + m * CMSG_SPACE(sizeof(uint16_t));
	mh->msg_controllen = CMSG_SPACE(sizeof(uint16_t));
	cm = CMSG_FIRSTHDR(mh);
	cm->cmsg_level = SOL_UDP;
	cm->cmsg_type = UDP_SEGMENT;
	cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
	*(uint16_t *)CMSG_DATA(cm) = HDR_LEN + b->count * ELEM_SIZE;
}

static void setup(struct blast *b)
{
	if (!b->nsrc)
		b->src[b->nsrc++].addr.s_addr = htonl(INADDR_ANY);
	b->dst_sin.sin_family = AF_INET;
	b->dst_sin.sin_addr = b->dst;
	b->dst_sin.sin_port = htons(b->port);
	fill_payload(b);
	for (unsigned int i = 0; i < b->nsrc; i++)
		open_source(b, &b->src[i]);
	for (int i = 0; i < RX_BATCH; i++) {
		b->riov[i].iov_base = b->rbuf[i];
		b->riov[i].iov_len = HDR_LEN;
		b->rmsg[i].msg_hdr.msg_iov = &b->riov[i];
		b->rmsg[i].msg_hdr.msg_iovlen = 1;
	}
}

/*
 * Hand the socket what is queued, without blocking. What it refuses
 * (full send buffer or device queue) stays queued for after a poll.
 */
static void flush(struct blast *b, struct source *s)
{
	unsigned int done = 0, eintr = 0;

	for (unsigned int m = 0; m < s->qn; m++)
		msg_segments(b, s, m);
	while (done < s->qn) {
		int r = sendmmsg(s->fd, s->msg + done, s->qn - done, MSG_DONTWAIT);

		if (r < 0) {
			if (errno == EINTR && eintr++ < EINTR_MAX)
				continue;
			if (errno == EAGAIN || errno == ENOBUFS || errno == EINTR)
				break;
			netagg_die("sendmmsg from %s: %s", inet_ntoa(s->addr),
				   strerror(errno));
		}
		for (int m = 0; m < r; m++)
			b->sent += s->nseg[done + m];
		done += r;
	}
	/* Only the headers differ; the iovecs point at them by index. */
	memmove(s->hdr, s->hdr + (size_t)done * b->segs,
		(size_t)(s->qn - done) * b->segs * sizeof(*s->hdr));
	memmove(s->nseg, s->nseg + done, (s->qn - done) * sizeof(*s->nseg));
	s->qn -= done;
	s->full = s->qn > 0;
}

/* Room for another packet: in the last message, or a message more. */
static bool room(const struct blast *b, const struct source *s)
{
	return s->qn < b->batch || s->nseg[s->qn - 1] < b->segs;
}

static void queue(struct blast *b, struct source *s)
{
	struct netagg_hdr *h;

	if (!s->qn || s->nseg[s->qn - 1] == b->segs)
		s->nseg[s->qn++] = 0;
	h = &s->hdr[(size_t)(s->qn - 1) * b->segs + s->nseg[s->qn - 1]++];

	memset(h, 0, sizeof(*h));
	h->version = NETAGG_PROTO_VERSION;
	h->flags = s->next + 1 == b->packets ? NETAGG_F_FIN : 0;
	h->dtype = b->dtype;
	h->jid = htonl(b->jid);
	h->vid = htonl((uint32_t)s->next);
	h->tid = htons(b->tree);
	h->count = htons(b->count);
	h->contributors = htons(1);
	h->round = htons(b->round);
	s->next++;
	if (!room(b, s))
		flush(b, s);
}

static bool may_send(const struct blast *b, const struct source *s, uint64_t vid)
{
	/* In forwarding mode a socket may receive more than it sent. */
	return s->next == vid && vid < b->packets && !s->full &&
	       room(b, s) && s->next < s->received + b->window;
}

/*
 * Queue up to @budget packets, VID by VID over the sockets: the lowest VID
 * not yet sent everywhere goes first, so a socket held by its window holds
 * the others at its VID. Returns the packets queued.
 */
static uint64_t send_pass(struct blast *b, uint64_t budget)
{
	uint64_t queued = 0;

	/* Each turn queues at least one packet, and at most budget in all. */
	while (queued < budget) {
		uint64_t lo = UINT64_MAX, before = queued;

		for (unsigned int i = 0; i < b->nsrc; i++)
			if (b->src[i].next < lo)
				lo = b->src[i].next;
		for (unsigned int i = 0; i < b->nsrc && queued < budget; i++) {
			if (!may_send(b, &b->src[i], lo))
				continue;
			queue(b, &b->src[i]);
			queued++;
		}
		if (queued == before)
			break;
	}
	for (unsigned int i = 0; i < b->nsrc; i++)
		if (b->src[i].qn && !b->src[i].full)
			flush(b, &b->src[i]);
	return queued;
}

/* The packets a received message holds: a super-packet's segments, or 1. */
static unsigned int rx_packets(struct mmsghdr *m)
{
	struct msghdr *mh = &m->msg_hdr;
	int gso = 0;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c))
		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO)
			memcpy(&gso, CMSG_DATA(c), sizeof(gso));
	if (gso <= 0 || m->msg_len <= (unsigned int)gso)
		return 1;
	return (m->msg_len + gso - 1) / gso;
}

/* Count what arrived, a bounded number of batches a socket. */
static uint64_t receive(struct blast *b)
{
	uint64_t got = 0;

	for (unsigned int i = 0; i < b->nsrc; i++) {
		struct source *s = &b->src[i];

		for (int r = 0; r < RX_ROUNDS; r++) {
			int n;

			for (int k = 0; k < RX_BATCH; k++) {
				b->rmsg[k].msg_hdr.msg_control = b->rctl[k];
				b->rmsg[k].msg_hdr.msg_controllen = CTL_LEN;
			}
			/* MSG_TRUNC: each length whole, not the header read. */
			n = recvmmsg(s->fd, b->rmsg, RX_BATCH, MSG_DONTWAIT | MSG_TRUNC, NULL);

			if (n < 0) {
				if (errno == EAGAIN || errno == EINTR ||
				    errno == ECONNREFUSED)
					break;
				netagg_die("recvmmsg on %s: %s", inet_ntoa(s->addr),
					   strerror(errno));
			}
			for (int k = 0; k < n; k++) {
				const struct netagg_hdr *h = (const void *)b->rbuf[k];
				unsigned int pkts = rx_packets(&b->rmsg[k]);

				/* The header alone was read: each segment has one like it. */
				if (b->rmsg[k].msg_len >= HDR_LEN &&
				    (h->flags & NETAGG_F_RESULT))
					s->results += pkts;
				s->received += pkts;
				got += pkts;
			}
			if (n > 0)
				netagg_rx_overflow(&b->rmsg[n - 1].msg_hdr, &s->overflow);
			if (n < RX_BATCH)
				break;
		}
	}
	b->received += got;
	return got;
}

/* Packets the rate allows now; the backlog is capped at one batch. */
static uint64_t pace_budget(struct blast *b, uint64_t now)
{
	uint64_t allowed;

	if (!b->rate)
		return UINT64_MAX;
	allowed = (uint64_t)((double)b->rate * (now - b->pace_t0) / 1e9);
	/* Time spent held by the window is not made up in a burst. */
	if (allowed > b->pace_n + b->batch)
		b->pace_n = allowed - b->batch;
	return allowed - b->pace_n;
}

static bool done(const struct blast *b)
{
	for (unsigned int i = 0; i < b->nsrc; i++) {
		const struct source *s = &b->src[i];

		if (s->next < b->packets || s->qn || s->received < b->packets)
			return false;
	}
	return true;
}

/* Sleep until a packet arrives, a socket takes more, or @wait_ns pass. */
static void wait_io(struct blast *b, uint64_t wait_ns)
{
	struct pollfd pfd[SOURCES_MAX];
	struct timespec ts;

	for (unsigned int i = 0; i < b->nsrc; i++) {
		pfd[i].fd = b->src[i].fd;
		pfd[i].events = POLLIN | (b->src[i].full ? POLLOUT : 0);
	}
	ts.tv_sec = wait_ns / 1000000000;
	ts.tv_nsec = wait_ns % 1000000000;
	if (ppoll(pfd, b->nsrc, &ts, NULL) < 0 && errno != EINTR)
		netagg_die("ppoll: %s", strerror(errno));
	for (unsigned int i = 0; i < b->nsrc; i++)
		if (pfd[i].revents & POLLOUT)
			b->src[i].full = false;
}

/* Returns false on timeout. */
static bool run(struct blast *b)
{
	uint64_t timeout_ns = b->timeout_ms * 1000000;
	uint64_t last_rx = now_ns();

	while (!done(b)) {
		uint64_t now = now_ns(), budget = 0, sent, got, wait = POLL_NS;

		if (!b->t_first && (!b->wait_first || b->received))
			b->t_first = b->pace_t0 = now;
		for (unsigned int i = 0; i < b->nsrc; i++)
			if (b->src[i].full)
				flush(b, &b->src[i]);
		if (b->t_first)
			budget = pace_budget(b, now);
		sent = budget ? send_pass(b, budget) : 0;
		b->pace_n += sent;
		got = receive(b);
		now = now_ns();
		if (got) {
			last_rx = now;
			continue;
		}
		if (now - last_rx >= timeout_ns)
			return false;
		/* Progress: the window or the rate may allow more at once. */
		if (sent)
			continue;
		/* Blocked: by the window, the socket or the rate. */
		if (b->rate && b->t_first) {
			uint64_t next = b->pace_t0 +
				(uint64_t)((b->pace_n + 1) * 1e9 / b->rate);

			if (next > now && next - now < wait)
				wait = next - now;
			else if (next <= now)
				wait = 0;
		}
		if (last_rx + timeout_ns - now < wait)
			wait = last_rx + timeout_ns - now;
		wait_io(b, wait);
	}
	return true;
}

static void report(const struct blast *b, double elapsed, bool ok)
{
	uint64_t overflow = 0;

	for (unsigned int i = 0; i < b->nsrc; i++)
		overflow += b->src[i].overflow;
	netagg_out_init(stdout, true, false);
	netagg_out_open(NULL, '{');
	netagg_out_u64("sources", NULL, b->nsrc);
	netagg_out_u64("packets_sent", NULL, b->sent);
	netagg_out_u64("packets_received", NULL, b->received);
	netagg_out_u64("results", NULL, b->results);
	netagg_out_double("elapsed_s", NULL, elapsed, 6);
	netagg_out_double("pps_sent", NULL, elapsed > 0 ? b->sent / elapsed : 0, 0);
	netagg_out_double("pps_received", NULL,
			  elapsed > 0 ? b->received / elapsed : 0, 0);
	netagg_out_u64("payload_bytes", NULL, b->sent * b->count * ELEM_SIZE);
	netagg_out_u64("count", NULL, b->count);
	netagg_out_u64("segments", NULL, b->segs);
	netagg_out_u64("packets", NULL, b->packets);
	netagg_out_u64("window", NULL, b->window);
	netagg_out_u64("rate", NULL, b->rate);
	netagg_out_u64("rx_overflow", NULL, overflow);
	netagg_out_bool("timed_out", NULL, !ok);
	netagg_out_close('}');
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static struct blast b = {
		.port = NETAGG_UDP_PORT,
		.src_port = NETAGG_UDP_PORT,
		.dtype = NETAGG_DTYPE_F32,
		.count = COUNT_DEFAULT,
		.packets = 1000,
		.window = NETAGG_WINDOW_DEFAULT,
		.timeout_ms = 2000,
		.batch = 32,
		.segs = 1,
		.cpu = -1,
	};
	double elapsed;
	bool ok;

	parse_args(argc, argv, &b);
	if (b.cpu >= 0)
		netagg_pin_cpu(b.cpu);
	setup(&b);

	ok = run(&b);
	elapsed = b.t_first ? (now_ns() - b.t_first) / 1e9 : 0;
	for (unsigned int i = 0; i < b.nsrc; i++)
		b.results += b.src[i].results;
	report(&b, elapsed, ok);
	if (!ok) {
		fprintf(stderr, "netagg-blast: timed out: nothing arrived for %" PRIu64
			" ms; %" PRIu64 " of %" PRIu64 " packets sent, %" PRIu64
			" received\n", b.timeout_ms, b.sent, b.packets * b.nsrc,
			b.received);
		return 1;
	}
	return 0;
}

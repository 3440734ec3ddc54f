// SPDX-License-Identifier: GPL-2.0
/*
 * netagg-fuzz - send hostile aggregation packets, built byte by byte.
 *
 * A raw IPv4 socket with IP_HDRINCL lets us write the whole IP header: any
 * source address (spoofed children and strangers), IP options, fragments
 * made by hand, any DSCP/ECN, and a UDP header whose length and checksum
 * say whatever we like. What we cannot control, and do not need to: the
 * sending kernel rewrites tot_len and the IP checksum (and fills a zero IP
 * id), and the receiving ip_rcv() would drop a broken IP header before any
 * netfilter hook anyway. So every packet has a sound IP header; the hostile
 * part is DSCP/ECN, options, fragment fields, and everything from the UDP
 * header on.
 *
 * Modes:
 *   variants [NAME...]   every named malformed packet once (all without a
 *                        NAME), one "NAME sent" line each (or "NAME
 *                        skipped: why"); the table variants[] below lists
 *                        them, --list prints their names
 *   random N [--seed S]  N pseudo-random packets, the same ones for the same
 *                        seed, options and route MTU (xorshift64*)
 *
 * --summary prints one JSON object counting what was sent. Each packet is
 * classified from its own bytes by classify(), which mirrors the receiving
 * node's hook (kmod/hook.c), so a test can compare with the node's counters:
 *
 *   sent          packets the kernel accepted from us
 *   skipped       variants not sent (no --child/--stranger given, or larger
 *                 than the route MTU lets through unfragmented)
 *   bytes         IPv4 bytes sent, headers included
 *   seen          what the hook counts in NS_SEEN: IPv4 with tos >> 2 == 56,
 *                 protocol UDP, and either a fragment (MF set or offset
 *                 non-zero: then counted whatever the port), or not a
 *                 fragment, IP payload >= 8 bytes and UDP dport 7177.
 *                 seen = fragment + recognisable.
 *   fragment      seen and a fragment (NS_FRAGMENT)
 *   recognisable  seen and not a fragment: DSCP 56, UDP, dport 7177
 *   short         recognisable, but the UDP length is < 8 + 8 (no room for
 *                 the JID) or larger than the IP payload (NS_SHORT)
 *   to_job        recognisable, not short, JID == --job: what reaches the
 *                 job's RX when the node knows the job (a node that knows
 *                 no other JID sent here counts recognisable - short -
 *                 to_job as NS_UNKNOWN_JOB)
 *   other         sent - seen: never looked at by the hook
 *
 * The hook knows port 7177 only, so with --port set to another port the
 * non-fragments are "other", as the node will see them.
 * This holds as long as nothing between the two namespaces drops or
 * reassembles packets: the sending namespace must not run conntrack (its
 * defrag would hold fragments back at LOCAL_OUT), and a receiver whose
 * softirq falls behind drops at the backlog (see --pps).
 *
 * Exit 0 when every packet meant to be sent was sent, 1 on any error, 2 on
 * a bad command line.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
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

#define ELEM_SIZE	4		/* both dtypes are 32 bits wide */
#define IP_HLEN		20		/* IPv4 header without options */
#define IP_OPT_MAX	40
#define UDP_HLEN	8
#define AGG_HLEN	((int)sizeof(struct netagg_hdr))
/* IP + UDP + netagg headers: what the job's MTU leaves room for. */
#define AGG_OVERHEAD	(IP_HLEN + UDP_HLEN + AGG_HLEN)
#define PKT_MAX		65535
#define JUMBO		9000		/* NETAGG_MTU_MAX */
#define RANDOM_MAX	1000000UL
#define OTHER_PORT	9		/* a UDP port that is not ours */

/* ------------------------------------------------------------------ */
/* Configuration                                                       */

struct cfg {
	struct in_addr dst, src, child, stranger;
	bool have_src, have_child, have_stranger;
	uint32_t job, window, expected;
	uint16_t tree, port, sport, count;
	uint8_t dtype;
	unsigned int mtu;		/* the job's MTU */
	unsigned int route_mtu;		/* what the route to --dst lets out */
	uint64_t seed;
	unsigned long n;		/* random mode: packets */
	unsigned long pps;		/* 0: as fast as possible */
	bool quiet, summary, verbose, random;
	char **words;			/* the words that are not options */
	char **names;			/* after the mode's: variant names */
	int nnames;
};

/* ------------------------------------------------------------------ */
/* Packet description and builders                                    */

enum csum_mode { CSUM_OK, CSUM_ZERO, CSUM_BAD };

/*
 * One packet to send, described field by field; build() turns it into
 * bytes. The default (default_pkt()) is a well-formed contribution of
 * --count elements for --job/--tree at VID --expected-vid.
 */
struct fz_pkt {
	/* IP */
	struct in_addr saddr;
	uint8_t tos, ttl, proto;
	uint16_t id;			/* never 0: the kernel would pick one */
	uint16_t frag;			/* host order: IP_DF | IP_MF | offset/8 */
	uint8_t opt[IP_OPT_MAX];
	int optlen;			/* multiple of 4 */
	/*
	 * The IP payload is bytes [frag_start, frag_start + frag_len) of the
	 * UDP datagram built below (frag_len < 0: to its end), so a fragment
	 * carries the part of a real datagram its offset says.
	 */
	int frag_start, frag_len;
	/* UDP */
	uint16_t sport, dport;
	int ulen;			/* < 0: 8 + payload */
	enum csum_mode csum;
	/* netagg header and payload; ignored when raw is set */
	struct netagg_hdr h;		/* host order; build() swaps */
	int elems;			/* elements in the payload */
	int extra;			/* bytes after the elements (not in ulen) */
	int cut;			/* >= 0: cut the UDP payload to this */
	/* A UDP payload given byte by byte instead (random garbage). */
	const uint8_t *raw;
	int rawlen;
};

static uint32_t elem_one(uint8_t dtype)
{
	float f = 1.0f;
	uint32_t bits;

	if (dtype == NETAGG_DTYPE_I32)
		return 1;
	memcpy(&bits, &f, sizeof(bits));
	return bits;
}

static struct fz_pkt default_pkt(const struct cfg *c, uint16_t id)
{
	return (struct fz_pkt) {
		.saddr = c->src,
		.tos = NETAGG_DSCP << 2,
		.ttl = 64,
		.proto = IPPROTO_UDP,
		.id = id ? id : 1,
		.frag = IP_DF,		/* what Linux sets on UDP */
		.frag_len = -1,
		.sport = c->sport,
		.dport = c->port,
		.ulen = -1,
		.csum = CSUM_OK,
		.h = {
			.version = NETAGG_PROTO_VERSION,
			.dtype = c->dtype,
			.jid = c->job,
			.vid = c->expected,
			.tid = c->tree,
			.count = c->count,
			.contributors = 1,
		},
		.elems = c->count,
		.cut = -1,
	};
}

static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

/*
 * The UDP checksum as a receiver checks it: pseudo header with the UDP
 * length field, over the first ulen bytes of the datagram (a receiver trims
 * to ulen), or all of it when ulen claims more than there is.
 */
static uint16_t udp_csum(const struct fz_pkt *p, struct in_addr daddr,
			 const uint8_t *dgram, size_t len, uint16_t ulen)
{
	uint8_t pseudo[12];
	uint32_t sum;
	uint16_t c;

	memcpy(pseudo, &p->saddr, 4);
	memcpy(pseudo + 4, &daddr, 4);
	pseudo[8] = 0;
	pseudo[9] = IPPROTO_UDP;
	pseudo[10] = ulen >> 8;
	pseudo[11] = ulen & 0xff;
	sum = csum_add(0, pseudo, sizeof(pseudo));
	sum = csum_add(sum, dgram, ulen < len ? ulen : len);
	c = csum_fold(sum);
	return c ? c : 0xffff;	/* 0 on the wire means "no checksum" */
}

/* The UDP payload: netagg header, elements, extra bytes; or p->raw. */
static size_t build_payload(const struct fz_pkt *p, uint8_t *buf, size_t cap)
{
	struct netagg_hdr h = {
		.version = p->h.version,
		.flags = p->h.flags,
		.dtype = p->h.dtype,
		.reserved = p->h.reserved,
		.jid = htonl(p->h.jid),
		.vid = htonl(p->h.vid),
		.tid = htons(p->h.tid),
		.count = htons(p->h.count),
		.contributors = htons(p->h.contributors),
		.round = htons(p->h.round),
		.session = htonl(p->h.session),
	};
	uint32_t le = htole32(elem_one(p->h.dtype));
	size_t len;

	if (p->raw) {
		if ((size_t)p->rawlen > cap)
			netagg_die("internal: raw payload of %d bytes", p->rawlen);
		memcpy(buf, p->raw, p->rawlen);
		return p->rawlen;
	}
	len = AGG_HLEN + (size_t)p->elems * ELEM_SIZE + p->extra;
	if (len > cap)
		netagg_die("internal: payload of %zu bytes", len);
	memcpy(buf, &h, AGG_HLEN);
	for (int i = 0; i < p->elems; i++)
		memcpy(buf + AGG_HLEN + i * ELEM_SIZE, &le, ELEM_SIZE);
	/* Extra bytes look like one more element, but no count claims them. */
	for (int i = 0; i < p->extra; i++)
		buf[AGG_HLEN + p->elems * ELEM_SIZE + i] = ((uint8_t *)&le)[i % 4];
	if (p->cut >= 0 && (size_t)p->cut < len)
		len = p->cut;
	return len;
}

/*
 * The whole IPv4 packet into @out (PKT_MAX bytes); returns its length. The
 * kernel rewrites tot_len and check anyway; we fill them so that the bytes
 * we classify are the bytes on the wire.
 */
static size_t build(const struct fz_pkt *p, struct in_addr daddr, uint8_t *out)
{
	static uint8_t dgram[PKT_MAX];
	size_t plen, dlen, start, ilen, hlen = IP_HLEN + p->optlen;
	struct udphdr *uh = (struct udphdr *)dgram;
	struct iphdr *iph = (struct iphdr *)out;
	uint16_t ulen;

	plen = build_payload(p, dgram + UDP_HLEN, sizeof(dgram) - UDP_HLEN);
	dlen = UDP_HLEN + plen;
	/* Bytes after the UDP length (p->extra) are not the datagram's. */
	ulen = p->ulen >= 0 ? (size_t)p->ulen : dlen - (p->raw ? 0 : p->extra);
	uh->source = htons(p->sport);
	uh->dest = htons(p->dport);
	uh->len = htons(ulen);
	uh->check = 0;
	if (p->csum != CSUM_ZERO) {
		uint16_t c = udp_csum(p, daddr, dgram, dlen, ulen);

		/*
		 * c + 1 is a different ones' complement sum, except that
		 * 0xffff + 1 wraps to 0, which means "no checksum": use 1.
		 */
		if (p->csum == CSUM_BAD && !++c)
			c = 1;
		uh->check = htons(c);
	}

	start = (size_t)p->frag_start < dlen ? (size_t)p->frag_start : dlen;
	ilen = dlen - start;
	if (p->frag_len >= 0 && (size_t)p->frag_len < ilen)
		ilen = p->frag_len;
	if (hlen + ilen > PKT_MAX)
		netagg_die("internal: packet of %zu bytes", hlen + ilen);

	memset(iph, 0, IP_HLEN);
	iph->version = 4;
	iph->ihl = hlen / 4;
	iph->tos = p->tos;
	iph->tot_len = htons(hlen + ilen);
	iph->id = htons(p->id);
	iph->frag_off = htons(p->frag);
	iph->ttl = p->ttl;
	iph->protocol = p->proto;
	iph->saddr = p->saddr.s_addr;
	iph->daddr = daddr.s_addr;
	memcpy(out + IP_HLEN, p->opt, p->optlen);
	iph->check = htons(csum_fold(csum_add(0, out, hlen)));
	memcpy(out + hlen, dgram + start, ilen);
	return hlen + ilen;
}

/* ------------------------------------------------------------------ */
/* Classification: what the node's hook will do (see the top comment) */

enum {
	K_SEEN		= 1 << 0,
	K_FRAGMENT	= 1 << 1,
	K_RECOG		= 1 << 2,
	K_SHORT		= 1 << 3,
	K_TO_JOB	= 1 << 4,
};

static unsigned int classify(const uint8_t *pkt, size_t len, uint32_t job)
{
	const struct iphdr *iph = (const struct iphdr *)pkt;
	size_t ihl = iph->ihl * 4, ulen;
	const uint8_t *udp = pkt + ihl;
	uint32_t jid;

	/* build() always makes a header ip_rcv() accepts: IPv4, ihl >= 5,
	 * tot_len == len, correct checksum.
	 */
	if (iph->protocol != IPPROTO_UDP || iph->tos >> 2 != NETAGG_DSCP)
		return 0;
	if (ntohs(iph->frag_off) & (IP_MF | IP_OFFMASK))
		return K_SEEN | K_FRAGMENT;
	if (len - ihl < UDP_HLEN)	/* skb_header_pointer() fails */
		return 0;
	if ((udp[2] << 8 | udp[3]) != NETAGG_UDP_PORT)
		return 0;
	ulen = udp[4] << 8 | udp[5];
	if (ulen < UDP_HLEN + offsetof(struct netagg_hdr, jid) + 4 ||
	    ulen > len - ihl)
		return K_SEEN | K_RECOG | K_SHORT;
	memcpy(&jid, udp + UDP_HLEN + offsetof(struct netagg_hdr, jid), 4);
	return K_SEEN | K_RECOG | (ntohl(jid) == job ? K_TO_JOB : 0);
}

/* ------------------------------------------------------------------ */
/* Sending                                                             */

struct sender {
	int fd;
	struct sockaddr_in to;
	struct timespec next;		/* --pps: when the next packet may go */
	long gap_ns;
	/* summary */
	unsigned long sent, skipped, seen, fragment, recog, shrt, to_job;
	unsigned long long bytes;
};

static void pace(struct sender *s)
{
	if (!s->gap_ns)
		return;
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &s->next, NULL);
	s->next.tv_nsec += s->gap_ns;
	while (s->next.tv_nsec >= 1000000000L) {
		s->next.tv_nsec -= 1000000000L;
		s->next.tv_sec++;
	}
}

/* Send one built packet; returns its class. @what names it in errors. */
static unsigned int send_pkt(struct sender *s, const struct cfg *c,
			     const uint8_t *buf, size_t len, const char *what)
{
	unsigned int k = classify(buf, len, c->job);
	int tries = 0;

	pace(s);
	/* A full device queue is not the packet's fault: wait and retry. */
	while (sendto(s->fd, buf, len, 0, (struct sockaddr *)&s->to,
		      sizeof(s->to)) < 0) {
		if ((errno == ENOBUFS || errno == EAGAIN) && ++tries < 10000) {
			usleep(100);
			continue;
		}
		if (errno == EMSGSIZE)
			netagg_die("%s: %zu bytes do not fit the route MTU %u",
			    what, len, c->route_mtu);
		netagg_die("%s: sendto: %s", what, strerror(errno));
	}
	s->sent++;
	s->bytes += len;
	s->seen += !!(k & K_SEEN);
	s->fragment += !!(k & K_FRAGMENT);
	s->recog += !!(k & K_RECOG);
	s->shrt += !!(k & K_SHORT);
	s->to_job += !!(k & K_TO_JOB);
	return k;
}

static void print_class(unsigned int k, size_t len)
{
	printf(" (%zu bytes, %s)", len,
	       k & K_FRAGMENT ? "seen, fragment" :
	       k & K_SHORT ? "seen, short" :
	       k & K_TO_JOB ? "seen, job" :
	       k & K_SEEN ? "seen, other job" : "not seen");
}

/* ------------------------------------------------------------------ */
/* Variants                                                            */

static void set_elems(struct fz_pkt *p, long n)
{
	p->elems = n;
	p->h.count = n;
}

/* Each variant edits a default packet; returns NULL, or why to skip it. */
typedef const char *(*variant_fn)(struct fz_pkt *p, const struct cfg *c,
				  long arg);

static const char *v_valid(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)p; (void)c; (void)arg;
	return NULL;
}

/* UDP payload cut to @arg bytes: no JID, no full header. */
static const char *v_trunc(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	p->cut = arg;
	return NULL;
}

static const char *v_version(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	p->h.version = arg;
	return NULL;
}

static const char *v_flags(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	p->h.flags = arg;
	return NULL;
}

/* A probe (header only) with @arg elements of payload, which it must not have. */
static const char *v_probe(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	p->h.flags = NETAGG_F_PROBE;
	set_elems(p, arg);
	return NULL;
}

static const char *v_dtype(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	p->h.dtype = arg;
	return NULL;
}

static const char *v_jid(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	p->h.jid = arg;
	return NULL;
}

static const char *v_jid_next(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)arg;
	p->h.jid = c->job + 1;
	return NULL;
}

static const char *v_vid(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	p->h.vid = arg;
	return NULL;
}

/*
 * VIDs relative to --expected-vid E and --window W (serial arithmetic). The
 * datapath takes E .. E+W-1; behind E it answers or counts as duplicates
 * what it still keeps from the sender and drops the rest as outside the
 * window, as it does beyond E+W-1.
 */
static const struct {
	int windows;
	long delta;
} vid_rel[] = {
	{ 1, -1 },		/* E + W - 1: the last VID in the window */
	{ 1, 0 },		/* E + W: the first beyond it */
	{ 2, 0 },		/* E + 2W */
	{ 0, 0x80000000L },	/* E + 2^31: as far as serial numbers go */
	{ 0, -1 },		/* E - 1: just behind */
	{ -1, 0 },		/* E - W: the furthest behind that is a duplicate */
	{ -1, -1 },		/* E - W - 1: behind the window */
};

static const char *v_vid_rel(struct fz_pkt *p, const struct cfg *c, long arg)
{
	p->h.vid = c->expected + (uint32_t)(vid_rel[arg].windows * (long)c->window +
					    vid_rel[arg].delta);
	return NULL;
}

static const char *v_tid(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	p->h.tid = arg;
	return NULL;
}

/* Count @arg with as many elements: a well-formed length. */
static const char *v_count(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	set_elems(p, arg);
	return NULL;
}

static const char *v_count_next(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)arg;
	set_elems(p, c->count + 1);
	return NULL;
}

/* The count field alone says @arg; the payload stays --count elements. */
static const char *v_count_field(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	p->h.count = arg;
	return NULL;
}

/* Count says C (at least 1), the payload has C + @arg elements. */
static const char *v_payload_delta(struct fz_pkt *p, const struct cfg *c,
				   long arg)
{
	long n = c->count ? c->count : 1;

	set_elems(p, n + arg);
	p->h.count = n;
	return NULL;
}

/* Count 0 over a payload of C elements (at least 1). */
static const char *v_count0_payload(struct fz_pkt *p, const struct cfg *c,
				    long arg)
{
	(void)arg;
	set_elems(p, c->count ? c->count : 1);
	p->h.count = 0;
	return NULL;
}

/* C elements and one stray byte: not a whole number of elements. */
static const char *v_payload_odd(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	p->extra = arg;
	p->ulen = UDP_HLEN + AGG_HLEN + p->elems * ELEM_SIZE + arg;
	return NULL;
}

static const char *v_contributors(struct fz_pkt *p, const struct cfg *c,
				  long arg)
{
	(void)c;
	p->h.contributors = arg;
	return NULL;
}

static const char *v_reserved(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	p->h.reserved = arg;
	return NULL;
}

static const char *v_round(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	p->h.round = arg;
	return NULL;
}

/* Another round, with a VID that cannot start it: refused as of no round. */
static const char *v_round_stale(struct fz_pkt *p, const struct cfg *c, long arg)
{
	p->h.round = arg;
	p->h.vid = c->expected + 0x80000000U;
	return NULL;
}

/* The round's number in another session: as stale, refused as of no round. */
static const char *v_session_stale(struct fz_pkt *p, const struct cfg *c,
				   long arg)
{
	p->h.session = arg;
	p->h.vid = c->expected + 0x80000000U;
	return NULL;
}

/*
 * The largest payload the job's MTU allows (as the module computes it:
 * whole elements after the three headers), plus @arg elements. Over the
 * route MTU run_variant() skips it: raise the link's MTU to send it.
 */
static const char *v_mtu(struct fz_pkt *p, const struct cfg *c, long arg)
{
	set_elems(p, ((long)c->mtu - AGG_OVERHEAD) / ELEM_SIZE + arg);
	return NULL;
}

/* As large as the route lets out unfragmented, at most 9000 bytes. */
static const char *v_jumbo(struct fz_pkt *p, const struct cfg *c, long arg)
{
	unsigned int size = c->route_mtu < JUMBO ? c->route_mtu : JUMBO;

	(void)arg;
	set_elems(p, (size - AGG_OVERHEAD) / ELEM_SIZE);
	return NULL;
}

/*
 * Fragments of the default datagram (UDP header included), cut at 8-byte
 * boundaries as a real sender would. The datagram is at least 28 bytes:
 * the first fragment takes 16 (UDP header and the netagg header up to the
 * VID), the rest is the "last" one; "middle" takes 8 bytes from 16. Each
 * variant has its own IP id, so the receiver never reassembles two.
 */
enum { FRAG_FIRST, FRAG_MIDDLE, FRAG_LAST, FRAG_FIRST_OTHER_PORT };

static const char *v_frag(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	switch (arg) {
	case FRAG_FIRST_OTHER_PORT:
		p->dport = OTHER_PORT;
		/* fall through */
	case FRAG_FIRST:
		p->frag = IP_MF;
		p->frag_len = 16;
		break;
	case FRAG_MIDDLE:
		p->frag = IP_MF | 16 / 8;
		p->frag_start = 16;
		p->frag_len = 8;
		break;
	case FRAG_LAST:
		p->frag = 16 / 8;
		p->frag_start = 16;
		break;
	}
	return NULL;
}

static const char *v_frag_bits(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	p->frag = arg;
	return NULL;
}

/* Only options ip_options_compile() accepts: a bad one could make a
 * receiver drop (or answer with ICMP) the packet after our hook, which
 * muddles what the test sees.
 */
enum { OPT_NOP, OPT_NOP40, OPT_RR, OPT_TS };

static void set_opt(struct fz_pkt *p, long which)
{
	static const uint8_t rr[12] = {
		IPOPT_RR, 11, 4,	/* room for two addresses, none yet */
		0, 0, 0, 0, 0, 0, 0, 0,
		IPOPT_EOL,
	};
	static const uint8_t ts[12] = {
		IPOPT_TS, 12, 5, IPOPT_TS_TSONLY,	/* two stamps, none yet */
		0, 0, 0, 0, 0, 0, 0, 0,
	};

	switch (which) {
	case OPT_NOP:
		memset(p->opt, IPOPT_NOP, 4);
		p->optlen = 4;
		break;
	case OPT_NOP40:
		memset(p->opt, IPOPT_NOP, IP_OPT_MAX);
		p->optlen = IP_OPT_MAX;
		break;
	case OPT_RR:
		memcpy(p->opt, rr, sizeof(rr));
		p->optlen = sizeof(rr);
		break;
	case OPT_TS:
		memcpy(p->opt, ts, sizeof(ts));
		p->optlen = sizeof(ts);
		break;
	}
}

static const char *v_opt(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	set_opt(p, arg);
	return NULL;
}

static const char *v_csum(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	p->csum = arg;
	return NULL;
}

/* UDP length field set to the natural length + @arg. */
static const char *v_ulen_delta(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	p->ulen = UDP_HLEN + AGG_HLEN + p->elems * ELEM_SIZE + arg;
	return NULL;
}

static const char *v_ulen(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	p->ulen = arg;
	return NULL;
}

/*
 * The UDP length is right for the count, but the IP payload carries @arg
 * more bytes: a trailer that is not part of the datagram.
 */
static const char *v_trailer(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	p->extra = arg;
	return NULL;
}

static const char *v_dscp(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	p->tos = arg << 2;
	return NULL;
}

static const char *v_ecn(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	p->tos = NETAGG_DSCP << 2 | arg;
	return NULL;
}

static const char *v_proto(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	p->proto = arg;
	return NULL;
}

static const char *v_dport(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	p->dport = arg;
	return NULL;
}

static const char *v_sport(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	p->sport = arg;
	return NULL;
}

/* Source --child or --stranger; @arg & 2: a result (flag RESULT). */
enum { FROM_CHILD = 0, FROM_STRANGER = 1, AS_RESULT = 2 };

static const char *v_from(struct fz_pkt *p, const struct cfg *c, long arg)
{
	if (arg & FROM_STRANGER) {
		if (!c->have_stranger)
			return "no --stranger";
		p->saddr = c->stranger;
	} else {
		if (!c->have_child)
			return "no --child";
		p->saddr = c->child;
	}
	if (arg & AS_RESULT)
		p->h.flags = NETAGG_F_RESULT;
	return NULL;
}

static const struct variant {
	const char *name;
	variant_fn fn;
	long arg;
} variants[] = {
	{ "valid",			v_valid,	0 },
	/* truncated UDP payloads */
	{ "trunc-0",			v_trunc,	0 },
	{ "trunc-1",			v_trunc,	1 },
	{ "trunc-7",			v_trunc,	7 },
	{ "trunc-8",			v_trunc,	8 },
	{ "trunc-19",			v_trunc,	19 },
	/* header fields at their boundaries, the rest well-formed */
	{ "version-0",			v_version,	0 },
	{ "version-2",			v_version,	2 },
	{ "version-255",		v_version,	255 },
	{ "flags-0xff",			v_flags,	0xff },
	{ "flags-result",		v_flags,	NETAGG_F_RESULT },
	{ "flags-fin",			v_flags,	NETAGG_F_FIN },
	{ "flags-probe-result",		v_flags,	NETAGG_F_PROBE | NETAGG_F_RESULT },
	{ "probe",			v_probe,	0 },
	{ "probe-payload",		v_probe,	2 },
	{ "dtype-0",			v_dtype,	0 },
	{ "dtype-1",			v_dtype,	1 },
	{ "dtype-2",			v_dtype,	2 },
	{ "dtype-255",			v_dtype,	255 },
	{ "jid-0",			v_jid,		0 },
	{ "jid-0xffffffff",		v_jid,		0xffffffffL },
	{ "jid-next",			v_jid_next,	0 },
	{ "vid-0",			v_vid,		0 },
	{ "vid-1",			v_vid,		1 },
	{ "vid-0x7fffffff",		v_vid,		0x7fffffffL },
	{ "vid-0x80000000",		v_vid,		0x80000000L },
	{ "vid-0xffffffff",		v_vid,		0xffffffffL },
	{ "tid-0",			v_tid,		0 },
	{ "tid-63",			v_tid,		63 },
	{ "tid-64",			v_tid,		64 },
	{ "tid-0xffff",			v_tid,		0xffff },
	{ "count-0",			v_count,	0 },
	{ "count-1",			v_count,	1 },
	{ "count-c+1",			v_count_next,	0 },
	{ "count-0xffff",		v_count_field,	0xffff },
	{ "contributors-0",		v_contributors,	0 },
	{ "contributors-0xffff",	v_contributors,	0xffff },
	{ "reserved-0xff",		v_reserved,	0xff },
	{ "round-0xffff",		v_round,	0xffff },
	{ "round-stale",		v_round_stale,	0x1234 },
	{ "session-stale",		v_session_stale, 0x12345678 },
	/* count against payload */
	{ "payload-c-1",		v_payload_delta, -1 },
	{ "payload-c+1",		v_payload_delta, 1 },
	{ "count-0-payload",		v_count0_payload, 0 },
	{ "payload-odd",		v_payload_odd,	1 },
	/* sizes */
	{ "at-mtu",			v_mtu,		0 },
	{ "over-mtu",			v_mtu,		1 },
	{ "jumbo",			v_jumbo,	0 },
	/* hand-built fragments, and DF, which is not one */
	{ "frag-first",			v_frag,		FRAG_FIRST },
	{ "frag-middle",		v_frag,		FRAG_MIDDLE },
	{ "frag-last",			v_frag,		FRAG_LAST },
	{ "frag-first-port-9",		v_frag,		FRAG_FIRST_OTHER_PORT },
	{ "no-df",			v_frag_bits,	0 },
	/* valid IP options */
	{ "opt-nop",			v_opt,		OPT_NOP },
	{ "opt-nop-40",			v_opt,		OPT_NOP40 },
	{ "opt-rr",			v_opt,		OPT_RR },
	{ "opt-ts",			v_opt,		OPT_TS },
	/* UDP checksum and length */
	{ "csum-bad",			v_csum,		CSUM_BAD },
	{ "csum-zero",			v_csum,		CSUM_ZERO },
	{ "ulen-trailer",		v_trailer,	ELEM_SIZE },
	{ "ulen-short",			v_ulen_delta,	-ELEM_SIZE },
	{ "ulen-long",			v_ulen_delta,	ELEM_SIZE },
	{ "ulen-7",			v_ulen,		7 },
	{ "ulen-0",			v_ulen,		0 },
	/* DSCP, ECN, protocol and ports */
	{ "dscp-0",			v_dscp,		0 },
	{ "dscp-46",			v_dscp,		46 },
	{ "dscp-55",			v_dscp,		55 },
	{ "dscp-57",			v_dscp,		57 },
	{ "dscp-63",			v_dscp,		63 },
	{ "ecn-1",			v_ecn,		1 },
	{ "ecn-2",			v_ecn,		2 },
	{ "ecn-3",			v_ecn,		3 },
	{ "proto-tcp",			v_proto,	IPPROTO_TCP },
	{ "proto-udplite",		v_proto,	IPPROTO_UDPLITE },
	{ "dport-7178",			v_dport,	NETAGG_UDP_PORT + 1 },
	{ "sport-0",			v_sport,	0 },
	/* who sends it */
	{ "contrib-from-child",		v_from,		FROM_CHILD },
	{ "contrib-from-stranger",	v_from,		FROM_STRANGER },
	{ "result-from-child",		v_from,		FROM_CHILD | AS_RESULT },
	{ "result-from-stranger",	v_from,		FROM_STRANGER | AS_RESULT },
	/* VIDs relative to --expected-vid and --window */
	{ "vid-window-last",		v_vid_rel,	0 },
	{ "vid-window",			v_vid_rel,	1 },
	{ "vid-window-x2",		v_vid_rel,	2 },
	{ "vid-half",			v_vid_rel,	3 },
	{ "vid-behind",			v_vid_rel,	4 },
	{ "vid-behind-window",		v_vid_rel,	5 },
	{ "vid-behind-window-1",	v_vid_rel,	6 },
};

#define NVARIANTS (sizeof(variants) / sizeof(variants[0]))

static const struct variant *find_variant(const char *name)
{
	for (size_t i = 0; i < NVARIANTS; i++)
		if (!strcmp(variants[i].name, name))
			return &variants[i];
	return NULL;
}

static void run_variant(struct sender *s, const struct cfg *c,
			const struct variant *v, uint16_t id)
{
	static uint8_t buf[PKT_MAX];
	struct fz_pkt p = default_pkt(c, id);
	const char *skip = v->fn(&p, c, v->arg);
	char why[80];
	unsigned int k;
	size_t len;

	if (!skip) {
		len = build(&p, c->dst, buf);
		/* The kernel refuses IP_HDRINCL packets over the device MTU. */
		if (len > c->route_mtu) {
			snprintf(why, sizeof(why),
				 "%zu bytes exceed the route MTU %u", len,
				 c->route_mtu);
			skip = why;
		}
	}
	if (skip) {
		s->skipped++;
		if (!c->quiet)
			printf("%s skipped: %s\n", v->name, skip);
		return;
	}
	k = send_pkt(s, c, buf, len, v->name);
	if (!c->quiet) {
		printf("%s sent", v->name);
		if (c->verbose)
			print_class(k, len);
		putchar('\n');
	}
}

static void run_variants(struct sender *s, const struct cfg *c)
{
	/* IP ids from 1, one per variant: no two are ever reassembled. */
	if (!c->nnames) {
		for (size_t i = 0; i < NVARIANTS; i++)
			run_variant(s, c, &variants[i], i + 1);
		return;
	}
	for (int i = 0; i < c->nnames; i++) {
		const struct variant *v = find_variant(c->names[i]);

		if (!v)
			netagg_die("no variant \"%s\" (see --list)", c->names[i]);
		run_variant(s, c, v, v - variants + 1);
	}
}

/* ------------------------------------------------------------------ */
/* Random mode                                                         */

struct rng {
	uint64_t s;
};

/* splitmix64 of the seed: any seed, 0 included, gives a non-zero state. */
static void rng_seed(struct rng *r, uint64_t seed)
{
	uint64_t z = seed + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	r->s = (z ^ (z >> 31)) | 1;
}

/* xorshift64* */
static uint64_t rng_next(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dULL;
}

/* Uniform in [0, n), n > 0 (the tiny modulo bias does not matter here). */
static uint32_t rnd(struct rng *r, uint32_t n)
{
	return (rng_next(r) >> 32) % n;
}

static uint32_t rnd32(struct rng *r)
{
	return rng_next(r) >> 32;
}

/*
 * The most elements a random packet may carry: with a full set of options
 * and one more element's worth of trailer it still fits the route MTU.
 */
static int max_elems(const struct cfg *c)
{
	return ((int)c->route_mtu - AGG_OVERHEAD - IP_OPT_MAX - ELEM_SIZE) /
	       ELEM_SIZE;
}

/*
 * Element counts stay small (at most 2C + 2) in 15 packets of 16 and go up
 * to what the route MTU allows in the 16th: a million packets then average
 * a few hundred bytes.
 */
static int rnd_elems(struct rng *r, const struct cfg *c)
{
	int max = max_elems(c) - 1;	/* room for a trailer element */
	int small = 2 * c->count + 2;

	if (small > max)
		small = max;
	return rnd(r, 16) ? (int)rnd(r, small + 1) : (int)rnd(r, max + 1);
}

/* Fully random bytes after a valid IP + UDP header to port 7177. */
static void rnd_garbage(struct fz_pkt *p, const struct cfg *c, struct rng *r)
{
	static uint8_t junk[PKT_MAX];
	int len = rnd(r, 16) ? (int)rnd(r, 64 + 1) :
			       (int)rnd(r, (AGG_HLEN + max_elems(c) * ELEM_SIZE) + 1);

	for (int i = 0; i < len; i++)
		junk[i] = rnd32(r);
	p->raw = junk;
	p->rawlen = len;
}

/* A header that looks like ours, each field drawn on its own. */
static void rnd_fields(struct fz_pkt *p, const struct cfg *c, struct rng *r)
{
	static const uint8_t flags[] = {
		0, NETAGG_F_RESULT, NETAGG_F_FIN,
		NETAGG_F_RESULT | NETAGG_F_FIN, NETAGG_F_PROBE,
		NETAGG_F_PROBE | NETAGG_F_RESULT,
	};
	static const uint8_t dtypes[] = { 0, 1, 2, 3, 255 };
	int n = rnd_elems(r, c);

	p->h.version = rnd(r, 4) ? NETAGG_PROTO_VERSION : rnd32(r);
	p->h.flags = rnd(r, 5) < 4 ? flags[rnd(r, sizeof(flags))] : rnd32(r);
	p->h.dtype = rnd(r, 4) ? c->dtype : dtypes[rnd(r, sizeof(dtypes))];
	p->h.reserved = rnd(r, 4) ? 0 : rnd32(r);
	switch (rnd(r, 3)) {
	case 0: p->h.jid = c->job; break;
	case 1: p->h.jid = c->job + 1; break;
	default: p->h.jid = rnd32(r); break;
	}
	switch (rnd(r, 4)) {
	case 0: p->h.vid = c->expected + rnd(r, c->window); break;
	case 1: p->h.vid = c->expected + rnd(r, 4 * c->window) - 2 * c->window;
		break;
	case 2: p->h.vid = c->expected - 1; break;
	default: p->h.vid = rnd32(r); break;
	}
	switch (rnd(r, 3)) {
	case 0: p->h.tid = c->tree; break;
	case 1: p->h.tid = rnd(r, NETAGG_TREES_MAX + 1); break;
	default: p->h.tid = rnd32(r); break;
	}
	p->h.contributors = rnd(r, 4) ? 1 : rnd32(r);
	p->h.round = rnd(r, 4) ? 0 : rnd32(r);
	p->h.session = rnd(r, 4) ? 0 : rnd32(r);
	/* The count matches in half the packets. */
	set_elems(p, n);
	switch (rnd(r, 4)) {
	case 0: p->h.count = rnd32(r); break;
	case 1: p->h.count = n + (rnd(r, 2) ? 1 : -1); break;
	}
	if (!rnd(r, 8))
		p->extra = rnd(r, ELEM_SIZE + 1);	/* trailer or odd bytes */
	if (!rnd(r, 8))
		p->cut = rnd(r, AGG_HLEN + n * ELEM_SIZE + 1);
	if (!rnd(r, 8))
		p->ulen = rnd(r, 2) ? (int)(rnd32(r) & 0xffff) :
			  UDP_HLEN + AGG_HLEN + n * ELEM_SIZE + (int)rnd(r, 17) - 8;
	switch (rnd(r, 16)) {
	case 0: p->csum = CSUM_ZERO; break;
	case 1: p->csum = CSUM_BAD; break;
	}
	if (!rnd(r, 4))
		p->tos = NETAGG_DSCP << 2 | rnd(r, 4);		/* ECN */
	if (!rnd(r, 16))
		p->sport = rnd32(r);
	if (!rnd(r, 32))
		p->dport = rnd32(r);
}

/* A source among the routed (or --src) one, --child and --stranger. */
static void rnd_source(struct fz_pkt *p, const struct cfg *c, struct rng *r)
{
	struct in_addr from[3] = { c->src };
	int n = 1;

	if (c->have_child)
		from[n++] = c->child;
	if (c->have_stranger)
		from[n++] = c->stranger;
	p->saddr = from[rnd(r, n)];
	if (rnd(r, 2))
		p->h.flags = NETAGG_F_RESULT;
	p->h.vid = c->expected + rnd(r, c->window);
}

/*
 * Turn the packet into a fragment: a first fragment (MF, offset 0, cut at
 * 8 bytes), or any offset with or without MF carrying the datagram's first
 * bytes (a receiver will never complete it).
 */
static void rnd_fragment(struct fz_pkt *p, struct rng *r)
{
	if (rnd(r, 2)) {
		p->frag = IP_MF;
		p->frag_len = 8 * (1 + rnd(r, 8));
	} else {
		p->frag = (1 + rnd(r, IP_OFFMASK)) | (rnd(r, 2) ? IP_MF : 0);
		p->frag_len = 8 * rnd(r, 9);
	}
}

static void random_pkt(struct fz_pkt *p, const struct cfg *c, struct rng *r)
{
	*p = default_pkt(c, rnd32(r));
	switch (rnd(r, 4)) {
	case 0: rnd_garbage(p, c, r); break;
	case 1: rnd_fields(p, c, r); break;
	case 2: p->tos = rnd32(r); break;	/* random DSCP and ECN */
	case 3: rnd_source(p, c, r); break;
	}
	if (!rnd(r, 16))
		set_opt(p, rnd(r, 4));
	if (!rnd(r, 16))
		rnd_fragment(p, r);
}

static void run_random(struct sender *s, const struct cfg *c)
{
	static uint8_t buf[PKT_MAX];
	struct rng r;
	struct fz_pkt p;
	char what[40];

	rng_seed(&r, c->seed);
	for (unsigned long i = 0; i < c->n; i++) {
		random_pkt(&p, c, &r);
		snprintf(what, sizeof(what), "random packet %lu", i);
		send_pkt(s, c, buf, build(&p, c->dst, buf), what);
	}
	if (!c->quiet)
		printf("random: %lu sent (seed %" PRIu64 ")\n", s->sent, c->seed);
}

/* ------------------------------------------------------------------ */
/* Setup                                                               */

/*
 * The routed source address and the route MTU to --dst, from a connected
 * UDP socket: what a normal sender would use.
 */
static void route_info(struct cfg *c)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_addr = c->dst,
		.sin_port = htons(c->port),
	};
	socklen_t sl = sizeof(sin);
	int fd = socket(AF_INET, SOCK_DGRAM, 0), mtu;

	if (fd < 0)
		netagg_die("socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		netagg_die("no route to %s: %s", inet_ntoa(c->dst), strerror(errno));
	if (!c->have_src) {
		if (getsockname(fd, (struct sockaddr *)&sin, &sl) < 0)
			netagg_die("getsockname: %s", strerror(errno));
		c->src = sin.sin_addr;
	}
	sl = sizeof(mtu);
	if (getsockopt(fd, IPPROTO_IP, IP_MTU, &mtu, &sl) < 0)
		netagg_die("IP_MTU: %s", strerror(errno));
	c->route_mtu = mtu > PKT_MAX ? PKT_MAX : mtu;
	close(fd);
	if (c->route_mtu < NETAGG_MTU_MIN)
		netagg_die("route MTU %u is below %d", c->route_mtu, NETAGG_MTU_MIN);
	/* A well-formed packet must go out; variants that grow it may not. */
	if (AGG_OVERHEAD + c->count * ELEM_SIZE > (int)c->route_mtu)
		netagg_die("--count %u does not fit the route MTU %u (at most %u)",
		    c->count, c->route_mtu,
		    (c->route_mtu - AGG_OVERHEAD) / ELEM_SIZE);
}

static int open_raw(void)
{
	int fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW), one = 1;

	if (fd < 0)
		netagg_die("raw socket: %s%s", strerror(errno),
		    errno == EPERM ? " (needs CAP_NET_RAW)" : "");
	/* Implied by IPPROTO_RAW; said anyway, it is what we rely on. */
	if (setsockopt(fd, IPPROTO_IP, IP_HDRINCL, &one, sizeof(one)) < 0)
		netagg_die("IP_HDRINCL: %s", strerror(errno));
	return fd;
}

static void usage(FILE *f)
{
	fputs("Usage: netagg-fuzz --dst ADDR [OPTION]... variants [NAME]...\n"
	      "       netagg-fuzz --dst ADDR [OPTION]... random N [--seed S]\n"
	      "       netagg-fuzz --list\n"
	      "Send hostile netagg packets over a raw IPv4 socket (CAP_NET_RAW).\n"
	      "  variants [NAME]...  each named variant once (all without NAME)\n"
	      "  random N            N random packets (N <= 1000000)\n"
	      "  --dst ADDR          destination IPv4 address (required)\n"
	      "  --src ADDR          source address (default: the routed one)\n"
	      "  --child ADDR        source of the \"from-child\" variants\n"
	      "  --stranger ADDR     source of the \"from-stranger\" variants\n"
	      "  --job J             a job the node knows (default 0)\n"
	      "  --tree T            a tree of it (default 0)\n"
	      "  --dtype f32|i32|N   the job's element type (default f32)\n"
	      "  --count N           elements of a well-formed payload (default 4)\n"
	      "  --mtu M             the job's MTU (default 1500)\n"
	      "  --window W          the job's window (default 64)\n"
	      "  --expected-vid V    the tree's next VID (default 0)\n"
	      "  --port P            destination UDP port (default 7177)\n"
	      "  --sport P           source UDP port (default 7177)\n"
	      "  --seed S            random mode seed (default 1)\n"
	      "  --pps N             at most N packets a second (default: no limit)\n"
	      "  --quiet             no per-variant lines\n"
	      "  --verbose           each variant line gives its size and class\n"
	      "  --summary           print a JSON summary of what was sent\n"
	      "  --list              list the variants and exit\n"
	      "Numbers are decimal or 0x-prefixed hexadecimal.\n", f);
}

static void parse_args(int argc, char **argv, struct cfg *c)
{
	enum { O_DST = 256, O_SRC, O_CHILD, O_STRANGER, O_JOB, O_TREE,
	       O_DTYPE, O_COUNT, O_MTU, O_WINDOW, O_EXPECTED, O_PORT, O_SPORT,
	       O_SEED, O_PPS, O_QUIET, O_VERBOSE, O_SUMMARY, O_LIST };
	static const struct option opts[] = {
		{ "dst", required_argument, NULL, O_DST },
		{ "src", required_argument, NULL, O_SRC },
		{ "child", required_argument, NULL, O_CHILD },
		{ "stranger", required_argument, NULL, O_STRANGER },
		{ "job", required_argument, NULL, O_JOB },
		{ "tree", required_argument, NULL, O_TREE },
		{ "dtype", required_argument, NULL, O_DTYPE },
		{ "count", required_argument, NULL, O_COUNT },
		{ "mtu", required_argument, NULL, O_MTU },
		{ "window", required_argument, NULL, O_WINDOW },
		{ "expected-vid", required_argument, NULL, O_EXPECTED },
		{ "port", required_argument, NULL, O_PORT },
		{ "sport", required_argument, NULL, O_SPORT },
		{ "seed", required_argument, NULL, O_SEED },
		{ "pps", required_argument, NULL, O_PPS },
		{ "quiet", no_argument, NULL, O_QUIET },
		{ "verbose", no_argument, NULL, O_VERBOSE },
		{ "summary", no_argument, NULL, O_SUMMARY },
		{ "list", no_argument, NULL, O_LIST },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool have_dst = false, have_seed = false;
	const char *mode;
	int opt, idx;

	opterr = 0;	/* we word the errors ourselves */
	/* "+": options may not follow the mode's words... */
	while (optind < argc) {
		opt = getopt_long(argc, argv, "+:h", opts, &idx);
		if (opt == -1) {
			/* ...so collect a word, then go on with options. */
			c->words = realloc(c->words,
					   (c->nnames + 1) * sizeof(*c->words));
			if (!c->words)
				netagg_die("out of memory");
			c->words[c->nnames++] = argv[optind++];
			continue;
		}
		/* The option as the user spelled it, for messages. */
		const char *name = opt >= O_DST ? opts[idx].name :
				   argv[optind - 1];
		char namebuf[32];

		if (opt >= O_DST) {
			snprintf(namebuf, sizeof(namebuf), "--%s", name);
			name = namebuf;
		}

		switch (opt) {
		case O_DST: c->dst = netagg_parse_addr(name, optarg); have_dst = true; break;
		case O_SRC: c->src = netagg_parse_addr(name, optarg); c->have_src = true; break;
		case O_CHILD:
			c->child = netagg_parse_addr(name, optarg);
			c->have_child = true;
			break;
		case O_STRANGER:
			c->stranger = netagg_parse_addr(name, optarg);
			c->have_stranger = true;
			break;
		case O_JOB: c->job = netagg_parse_num(name, optarg, 0, UINT32_MAX); break;
		case O_TREE: c->tree = netagg_parse_num(name, optarg, 0, UINT16_MAX); break;
		case O_DTYPE:
			/* a number too: any, for the receiver to judge */
			c->dtype = netagg_parse_name(name, optarg, netagg_dtype_names,
						       netagg_dtype_count, true);
			break;
		case O_COUNT: c->count = netagg_parse_num(name, optarg, 0, UINT16_MAX); break;
		case O_MTU:
			c->mtu = netagg_parse_num(name, optarg, 0, NETAGG_MTU_MAX);
			if (c->mtu < NETAGG_MTU_MIN)
				netagg_usage_error("%s: below %d", name, NETAGG_MTU_MIN);
			break;
		case O_WINDOW:
			c->window = netagg_parse_num(name, optarg, 0, NETAGG_WINDOW_MAX);
			if (!c->window)
				netagg_usage_error("%s: must be at least 1", name);
			break;
		case O_EXPECTED:
			c->expected = netagg_parse_num(name, optarg, 0, UINT32_MAX);
			break;
		case O_PORT: c->port = netagg_parse_num(name, optarg, 0, UINT16_MAX); break;
		case O_SPORT: c->sport = netagg_parse_num(name, optarg, 0, UINT16_MAX); break;
		case O_SEED:
			c->seed = netagg_parse_num(name, optarg, 0, UINT64_MAX);
			have_seed = true;
			break;
		case O_PPS: c->pps = netagg_parse_num(name, optarg, 0, 1000000000UL); break;
		case O_QUIET: c->quiet = true; break;
		case O_VERBOSE: c->verbose = true; break;
		case O_SUMMARY: c->summary = true; break;
		case O_LIST:
			for (size_t i = 0; i < NVARIANTS; i++)
				puts(variants[i].name);
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		default:
			netagg_bad_option(argv, opt);
		}
	}
	if (!have_dst)
		netagg_usage_error("--dst is required");
	if (!c->nnames)
		netagg_usage_error("say \"variants\" or \"random N\" (see --help)");
	mode = c->words[0];
	c->names = c->words + 1;
	c->nnames--;
	if (!strcmp(mode, "random")) {
		if (c->nnames != 1)
			netagg_die("random takes one number, the packets to send");
		c->n = netagg_parse_num("random", c->names[0], 0, RANDOM_MAX);
		c->random = true;
	} else if (!strcmp(mode, "variants")) {
		if (have_seed)
			netagg_die("--seed is for random mode");
	} else {
		netagg_die("unknown mode \"%s\" (variants or random)", mode);
	}
}

int main(int argc, char **argv)
{
	struct cfg c = {
		.port = NETAGG_UDP_PORT,
		.sport = NETAGG_UDP_PORT,
		.count = 4,
		.dtype = NETAGG_DTYPE_F32,
		.mtu = NETAGG_MTU_DEFAULT,
		.window = NETAGG_WINDOW_DEFAULT,
		.seed = 1,
	};
	struct sender s = { .to = { .sin_family = AF_INET } };

	parse_args(argc, argv, &c);
	route_info(&c);
	s.fd = open_raw();
	s.to.sin_addr = c.dst;	/* the port is ours to write in the header */
	if (c.pps) {
		s.gap_ns = 1000000000L / c.pps;
		clock_gettime(CLOCK_MONOTONIC, &s.next);
	}

	if (c.random)
		run_random(&s, &c);
	else
		run_variants(&s, &c);

	if (c.summary) {
		netagg_out_init(stdout, true, false);
		netagg_out_open(NULL, '{');
		netagg_out_str("mode", NULL, c.random ? "random" : "variants");
		netagg_out_u64("sent", NULL, s.sent);
		netagg_out_u64("skipped", NULL, s.skipped);
		netagg_out_u64("bytes", NULL, s.bytes);
		netagg_out_u64("seen", NULL, s.seen);
		netagg_out_u64("fragment", NULL, s.fragment);
		netagg_out_u64("recognisable", NULL, s.recog);
		netagg_out_u64("short", NULL, s.shrt);
		netagg_out_u64("to_job", NULL, s.to_job);
		netagg_out_u64("other", NULL, s.sent - s.seen);
		if (c.random)
			netagg_out_u64("seed", NULL, c.seed);
		netagg_out_close('}');
	}
	if (fflush(stdout) == EOF)
		netagg_die("stdout: %s", strerror(errno));
	close(s.fd);
	free(c.words);
	return 0;
}

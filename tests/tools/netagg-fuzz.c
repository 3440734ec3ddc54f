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
 * IPv6, when --dst is an IPv6 address (--src, --child and --stranger then
 * IPv6 too): a raw IPv6 socket of IPPROTO_RAW (IPV6_HDRINCL) sends the
 * whole IPv6 header as we write it, payload length included, which the
 * sending kernel leaves alone (rawv6_send_hdrinc()): traffic class (DSCP
 * and ECN), hop limit, extension headers (hop-by-hop and destination
 * options, routing headers, fragment headers made by hand), and the UDP
 * datagram after them, its checksum over the IPv6 pseudo-header (to the
 * final destination of a routing header, RFC 8200 8.1), or zero, which
 * IPv6 forbids (csum-zero). IP options are IPv4's: the opt-* and no-df
 * variants are not sent over IPv6; the ip6-* ones are IPv6's alone. An
 * IPv6 header shorter than 40 bytes no raw socket sends: those variants
 * (ip6-hdr-trunc-*) go out of a packet socket, an Ethernet frame to the
 * next hop (its link address from the neighbour table, solicited if need
 * be), skipped where the route's device is not Ethernet. The receiving
 * ipv6_rcv() drops a header cut short or a payload length beyond the
 * bytes present before any netfilter hook: only an XDP hook sees those.
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
 *   skipped       variants not sent (no --child/--stranger given, larger
 *                 than the route MTU lets through unfragmented, or a frame
 *                 when the route to --dst is not over Ethernet)
 *   bytes         IP bytes sent, headers included (of a frame: from its
 *                 IPv6 header on)
 *   seen          what the hook counts in NS_SEEN: IPv4 with tos >> 2 == 56,
 *                 protocol UDP, and either a fragment (MF set or offset
 *                 non-zero: then counted whatever the port), or not a
 *                 fragment, IP payload >= 8 bytes and UDP dport 7177.
 *                 IPv6 likewise (its IPv4 rules carried over; what the
 *                 hook's IPv6 path is to do): a packet ipv6_rcv() lets
 *                 through (whole header, payload length within the packet,
 *                 which is then trimmed to it), traffic class >> 2 == 56,
 *                 and extension headers (hop-by-hop, routing, destination
 *                 options, fragment) that lead, within the packet, to a
 *                 fragment header with an offset or M set whose next header
 *                 is UDP (a fragment), or to UDP, the UDP header whole and
 *                 to port 7177; an atomic fragment (offset 0, M clear) is
 *                 not a fragment. Any other next header is not ours.
 *                 seen = fragment + recognisable.
 *   fragment      seen and a fragment (NS_FRAGMENT)
 *   recognisable  seen and not a fragment: DSCP 56, UDP, dport 7177
 *   short         recognisable, but the UDP length is < 8 + 8 (no room for
 *                 the JID) or larger than the IP payload (from the UDP
 *                 header on) (NS_SHORT)
 *   to_job        recognisable, not short, JID == --job: what reaches the
 *                 job's RX when the node knows the job (a node that knows
 *                 no other JID sent here counts recognisable - short -
 *                 to_job as NS_UNKNOWN_JOB)
 *   exthdr        recognisable, IPv6, its UDP header after extension
 *                 headers (NS_EXTHDR)
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
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/udp.h>
#include <netpacket/packet.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
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
#define IP6_HLEN	40		/* IPv6 header */
#define FRAG6_HLEN	8		/* IPv6 fragment header */
#define EXT_MAX		1280		/* bytes of IPv6 extension headers */
#define EXT_N		8		/* of them, and the fragment header */
#define UDP_HLEN	8
#define AGG_HLEN	((int)sizeof(struct netagg_hdr))
/* IP + UDP + netagg headers: what the job's MTU leaves room for. */
#define AGG_OVERHEAD	(IP_HLEN + UDP_HLEN + AGG_HLEN)
#define AGG_OVERHEAD6	(IP6_HLEN + UDP_HLEN + AGG_HLEN)
#define PKT_MAX		65535
#define JUMBO		9000		/* NETAGG_MTU_MAX */
#define RANDOM_MAX	1000000UL
#define OTHER_PORT	9		/* a UDP port that is not ours */

/* ------------------------------------------------------------------ */
/* Configuration                                                       */

struct cfg {
	/* dst.family is the family of them all */
	struct netagg_inet dst, src, child, stranger;
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

/* IP, UDP and netagg headers over @c's family: what a job's MTU is less. */
static int agg_overhead(const struct cfg *c)
{
	return c->dst.family == AF_INET6 ? AGG_OVERHEAD6 : AGG_OVERHEAD;
}

/* ------------------------------------------------------------------ */
/* Packet description and builders                                    */

enum csum_mode { CSUM_OK, CSUM_ZERO, CSUM_BAD };

/*
 * One packet to send, described field by field; build() turns it into
 * bytes. The default (default_pkt()) is a well-formed contribution of
 * --count elements for --job/--tree at VID --expected-vid.
 */
struct fz_pkt {
	/* IP; over IPv6 tos is the traffic class, ttl the hop limit, proto
	 * the last header's next header
	 */
	struct netagg_inet saddr;
	uint8_t tos, ttl, proto;
	uint16_t id;			/* never 0: the kernel would pick one */
	uint16_t frag;			/* host order: IP_DF | IP_MF | offset/8;
					 * over IPv6, MF or an offset: a fragment
					 * header says them (DF is IPv4's)
					 */
	uint8_t opt[IP_OPT_MAX];
	int optlen;			/* multiple of 4 */
	/*
	 * IPv6: extension headers, in order, each one's bytes as sent but
	 * for its first (the next header, build6() fills it in), then the
	 * fragment header, for a fragment or with frag6 (an atomic one).
	 */
	uint8_t ext[EXT_MAX];
	uint8_t ext_type[EXT_N];
	uint16_t ext_len[EXT_N];	/* bytes of each in ext[] */
	int ext_n, extlen;
	bool frag6;
	int plen;			/* >= 0: the payload length field says it */
	int plen_delta;			/* else the right one + this */
	/* The UDP checksum's destination: a routing header's last one. */
	bool has_final;
	struct in6_addr final;
	/* >= 0: only this many bytes of the IPv6 header, from a packet socket */
	int hdr_cut;
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
		.plen = -1,
		.hdr_cut = -1,
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
 * to ulen), or all of it when ulen claims more than there is. The pseudo
 * header is IPv4's, or with @final IPv6's (to that final destination).
 */
static uint16_t udp_csum(const struct fz_pkt *p, const struct netagg_inet *daddr,
			 const struct in6_addr *final, const uint8_t *dgram,
			 size_t len, uint16_t ulen)
{
	uint8_t pseudo[40] = { 0 };
	size_t plen = 12;
	uint32_t sum;
	uint16_t c;

	if (daddr->family == AF_INET6) {
		memcpy(pseudo, &p->saddr.v6, 16);
		memcpy(pseudo + 16, final, 16);
		/* 32-bit upper-layer length (bytes 32-35), 3 zero bytes, UDP */
		pseudo[34] = ulen >> 8;
		pseudo[35] = ulen & 0xff;
		pseudo[39] = IPPROTO_UDP;
		plen = sizeof(pseudo);
	} else {
		memcpy(pseudo, &p->saddr.v4, 4);
		memcpy(pseudo + 4, &daddr->v4, 4);
		pseudo[8] = 0;
		pseudo[9] = IPPROTO_UDP;
		pseudo[10] = ulen >> 8;
		pseudo[11] = ulen & 0xff;
	}
	sum = csum_add(0, pseudo, plen);
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
 * The UDP datagram into @dgram (PKT_MAX bytes), its checksum to @daddr
 * (@final over IPv6); returns its length.
 */
static size_t build_dgram(const struct fz_pkt *p, const struct netagg_inet *daddr,
			  const struct in6_addr *final, uint8_t *dgram)
{
	struct udphdr *uh = (struct udphdr *)dgram;
	size_t plen, dlen;
	uint16_t ulen;

	plen = build_payload(p, dgram + UDP_HLEN, PKT_MAX - UDP_HLEN);
	dlen = UDP_HLEN + plen;
	/* Bytes after the UDP length (p->extra) are not the datagram's. */
	ulen = p->ulen >= 0 ? (size_t)p->ulen : dlen - (p->raw ? 0 : p->extra);
	uh->source = htons(p->sport);
	uh->dest = htons(p->dport);
	uh->len = htons(ulen);
	uh->check = 0;
	if (p->csum != CSUM_ZERO) {
		uint16_t c = udp_csum(p, daddr, final, dgram, dlen, ulen);

		/*
		 * c + 1 is a different ones' complement sum, except that
		 * 0xffff + 1 wraps to 0, which means "no checksum": use 1.
		 */
		if (p->csum == CSUM_BAD && !++c)
			c = 1;
		uh->check = htons(c);
	}
	return dlen;
}

/*
 * The whole IPv4 packet into @out (PKT_MAX bytes); returns its length. The
 * kernel rewrites tot_len and check anyway; we fill them so that the bytes
 * we classify are the bytes on the wire.
 */
static size_t build4(const struct fz_pkt *p, const struct netagg_inet *daddr,
		     uint8_t *out)
{
	static uint8_t dgram[PKT_MAX];
	size_t dlen, start, ilen, hlen = IP_HLEN + p->optlen;
	struct iphdr *iph = (struct iphdr *)out;

	dlen = build_dgram(p, daddr, NULL, dgram);
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
	iph->saddr = p->saddr.v4.s_addr;
	iph->daddr = daddr->v4.s_addr;
	memcpy(out + IP_HLEN, p->opt, p->optlen);
	iph->check = htons(csum_fold(csum_add(0, out, hlen)));
	memcpy(out + hlen, dgram + start, ilen);
	return hlen + ilen;
}

static bool is_frag6(const struct fz_pkt *p)
{
	return p->frag6 || (p->frag & (IP_MF | IP_OFFMASK));
}

/*
 * The whole IPv6 packet into @out (PKT_MAX bytes): the header, the
 * extension headers, each one's next header filled in, then for a
 * fragment the fragment header (IP id, offset and MF from p->frag), and
 * the part of the UDP datagram it carries, as build4() cuts it; returns
 * its length, p->hdr_cut if that cuts it. The sending kernel keeps every
 * byte: the payload length is ours.
 */
static size_t build6(const struct fz_pkt *p, const struct netagg_inet *daddr,
		     uint8_t *out)
{
	static uint8_t dgram[PKT_MAX];
	struct ip6_hdr *ip6 = (struct ip6_hdr *)out;
	bool frag = is_frag6(p);
	size_t dlen, start, ilen, len;
	size_t hlen = IP6_HLEN + p->extlen + (frag ? FRAG6_HLEN : 0);
	uint8_t *at = out + IP6_HLEN, *nh = &ip6->ip6_nxt;

	dlen = build_dgram(p, daddr, p->has_final ? &p->final : &daddr->v6, dgram);
	start = (size_t)p->frag_start < dlen ? (size_t)p->frag_start : dlen;
	ilen = dlen - start;
	if (p->frag_len >= 0 && (size_t)p->frag_len < ilen)
		ilen = p->frag_len;
	if (hlen + ilen > PKT_MAX)
		netagg_die("internal: packet of %zu bytes", hlen + ilen);

	memset(ip6, 0, IP6_HLEN);
	ip6->ip6_flow = htonl(6U << 28 | (uint32_t)p->tos << 20);
	ip6->ip6_plen = htons(p->plen >= 0 ? p->plen :
			      (int)(hlen - IP6_HLEN + ilen) + p->plen_delta);
	ip6->ip6_hops = p->ttl;
	ip6->ip6_src = p->saddr.v6;
	ip6->ip6_dst = daddr->v6;
	for (int i = 0, off = 0; i < p->ext_n; off += p->ext_len[i++]) {
		*nh = p->ext_type[i];
		memcpy(at, p->ext + off, p->ext_len[i]);
		nh = at;		/* its first byte: the next one's type */
		at += p->ext_len[i];
	}
	if (frag) {
		struct ip6_frag *fh = (struct ip6_frag *)at;

		*nh = IPPROTO_FRAGMENT;
		memset(fh, 0, FRAG6_HLEN);
		fh->ip6f_offlg = htons((p->frag & IP_OFFMASK) << 3 |
				       (p->frag & IP_MF ? 1 : 0));
		fh->ip6f_ident = htonl(p->id);
		nh = &fh->ip6f_nxt;
		at += FRAG6_HLEN;
	}
	*nh = p->proto;
	memcpy(at, dgram + start, ilen);
	len = hlen + ilen;
	if (p->hdr_cut >= 0 && (size_t)p->hdr_cut < len)
		len = p->hdr_cut;
	return len;
}

/* The whole packet of @c's family into @out (PKT_MAX bytes); its length. */
static size_t build(const struct fz_pkt *p, const struct cfg *c, uint8_t *out)
{
	if (c->dst.family == AF_INET6)
		return build6(p, &c->dst, out);
	return build4(p, &c->dst, out);
}

/* ------------------------------------------------------------------ */
/* Classification: what the node's hook will do (see the top comment) */

enum {
	K_SEEN		= 1 << 0,
	K_FRAGMENT	= 1 << 1,
	K_RECOG		= 1 << 2,
	K_SHORT		= 1 << 3,
	K_TO_JOB	= 1 << 4,
	K_EXTHDR	= 1 << 5,
};

static unsigned int classify4(const uint8_t *pkt, size_t len, uint32_t job)
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

/*
 * An IPv6 packet of @len bytes (a header cut short too), as the top
 * comment says: what ipv6_rcv() lets through, then the walk along the
 * extension headers that ipv6_skip_exthdr() makes. Each step moves on by
 * 8 bytes at least, within a packet of at most PKT_MAX: it ends.
 */
static unsigned int classify6(const uint8_t *pkt, size_t len, uint32_t job)
{
	const struct ip6_hdr *ip6 = (const struct ip6_hdr *)pkt;
	size_t off = IP6_HLEN, plen, ulen;
	const uint8_t *udp;
	unsigned int k;
	uint32_t jid;
	uint16_t fo;
	uint8_t nh;

	if (len < IP6_HLEN)
		return 0;
	plen = ntohs(ip6->ip6_plen);
	/* 0 with a hop-by-hop header: a jumbogram's, which we never build */
	if ((!plen && ip6->ip6_nxt == IPPROTO_HOPOPTS) || IP6_HLEN + plen > len)
		return 0;
	len = IP6_HLEN + plen;		/* the receiver trims to it */
	if ((ntohl(ip6->ip6_flow) >> 20 & 0xff) >> 2 != NETAGG_DSCP)
		return 0;
	for (nh = ip6->ip6_nxt; nh != IPPROTO_UDP; ) {
		if (off + 2 > len)
			return 0;
		switch (nh) {
		case IPPROTO_HOPOPTS:
		case IPPROTO_ROUTING:
		case IPPROTO_DSTOPTS:
			nh = pkt[off];
			off += (pkt[off + 1] + 1) * 8;
			break;
		case IPPROTO_FRAGMENT:
			if (off + FRAG6_HLEN > len)
				return 0;
			nh = pkt[off];
			fo = pkt[off + 2] << 8 | pkt[off + 3];
			off += FRAG6_HLEN;
			/* offset or M: a fragment, counted whatever the port */
			if (fo & ~6)
				return nh == IPPROTO_UDP ? K_SEEN | K_FRAGMENT : 0;
			break;
		default:
			return 0;
		}
	}
	if (off + UDP_HLEN > len)	/* the chain ran past the end too */
		return 0;
	udp = pkt + off;
	if ((udp[2] << 8 | udp[3]) != NETAGG_UDP_PORT)
		return 0;
	ulen = udp[4] << 8 | udp[5];
	k = K_SEEN | K_RECOG | (off > IP6_HLEN ? K_EXTHDR : 0);
	if (ulen < UDP_HLEN + offsetof(struct netagg_hdr, jid) + 4 ||
	    ulen > len - off)
		return k | K_SHORT;
	memcpy(&jid, udp + UDP_HLEN + offsetof(struct netagg_hdr, jid), 4);
	return k | (ntohl(jid) == job ? K_TO_JOB : 0);
}

static unsigned int classify(const struct cfg *c, const uint8_t *pkt, size_t len)
{
	if (c->dst.family == AF_INET6)
		return classify6(pkt, len, c->job);
	return classify4(pkt, len, c->job);
}

/* ------------------------------------------------------------------ */
/* Sending                                                             */

struct sender {
	int fd;
	union netagg_sockaddr to;
	socklen_t tolen;
	/* IPv6 headers cut short: a packet socket, opened for the first */
	int link_fd;			/* -1: not (yet) */
	struct sockaddr_ll ll;		/* the next hop's link address */
	const char *link_why;		/* why there is none, once known */
	struct timespec next;		/* --pps: when the next packet may go */
	long gap_ns;
	/* summary */
	unsigned long sent, skipped, seen, fragment, recog, shrt, to_job, exthdr;
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

/* ------------------------------------------------------------------ */
/* Frames: the IPv6 headers no raw socket sends                        */

/*
 * rawv6_send_hdrinc() refuses a packet shorter than an IPv6 header. Those
 * go out of a packet socket instead, each the payload of an Ethernet frame
 * (ETH_P_IPV6) from the route's device to its next hop: the route and the
 * next hop's link address come from rtnetlink, as "ip -6 route get" and
 * "ip -6 neigh get" give them. A next hop not resolved yet is solicited by
 * the kernel's own neighbour discovery (NTF_USE): nothing else is sent.
 */
struct rtnl_msg {
	struct nlmsghdr nh;
	union {
		struct rtmsg rt;
		struct ndmsg nd;
	};
	uint8_t attrs[64];
};

static void rtnl_attr(struct rtnl_msg *m, unsigned short type, const void *data,
		      size_t len)
{
	struct rtattr *rta = (struct rtattr *)((uint8_t *)m + NLMSG_ALIGN(m->nh.nlmsg_len));

	rta->rta_type = type;
	rta->rta_len = RTA_LENGTH(len);
	memcpy(RTA_DATA(rta), data, len);
	m->nh.nlmsg_len = NLMSG_ALIGN(m->nh.nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

/*
 * Send @req on @fd, and return its answer, read into @buf; NULL with errno
 * set if the kernel answered with an error (0 for an acknowledgement).
 */
static struct nlmsghdr *rtnl_talk(int fd, struct rtnl_msg *req, uint8_t *buf,
				  size_t size)
{
	static uint32_t seq;

	req->nh.nlmsg_seq = ++seq;
	if (send(fd, req, req->nh.nlmsg_len, 0) < 0)
		netagg_die("rtnetlink: %s", strerror(errno));
	/* Only our answer comes (no group joined): a few reads at most. */
	for (int tries = 0; tries < 16; tries++) {
		ssize_t n = recv(fd, buf, size, 0);

		if (n < 0)
			netagg_die("rtnetlink: %s", strerror(errno));
		for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, n);
		     nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_seq != seq)
				continue;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				errno = -((struct nlmsgerr *)NLMSG_DATA(nh))->error;
				return NULL;
			}
			return nh;
		}
	}
	netagg_die("rtnetlink: no answer");
}

/* Attribute @type of @nh, whose header is @hlen bytes; NULL if none. */
static struct rtattr *rtnl_find(struct nlmsghdr *nh, size_t hlen, unsigned short type)
{
	int len = nh->nlmsg_len - NLMSG_LENGTH(hlen);
	struct rtattr *rta = (struct rtattr *)((uint8_t *)NLMSG_DATA(nh) +
					       NLMSG_ALIGN(hlen));

	for (; RTA_OK(rta, len); rta = RTA_NEXT(rta, len))
		if (rta->rta_type == type)
			return rta;
	return NULL;
}

/*
 * The next hop's link address into s->ll, if it has a valid one: true.
 * @use: ask the kernel to solicit it (creating the entry) instead.
 */
static bool neigh_lladdr(int fd, struct sender *s, const struct in6_addr *hop, bool use)
{
	struct rtnl_msg req = {
		.nh = {
			.nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg)),
			.nlmsg_type = use ? RTM_NEWNEIGH : RTM_GETNEIGH,
			.nlmsg_flags = NLM_F_REQUEST |
				       (use ? NLM_F_CREATE | NLM_F_ACK : 0),
		},
		.nd = {
			.ndm_family = AF_INET6,
			.ndm_ifindex = s->ll.sll_ifindex,
			.ndm_flags = use ? NTF_USE : 0,
		},
	};
	/* the kernel's NUD_VALID: an address to send to */
	const uint16_t nud_valid = NUD_PERMANENT | NUD_NOARP | NUD_REACHABLE |
				   NUD_PROBE | NUD_STALE | NUD_DELAY;
	static uint8_t buf[8192];
	struct nlmsghdr *nh;
	struct rtattr *lladdr;

	rtnl_attr(&req, NDA_DST, hop, sizeof(*hop));
	nh = rtnl_talk(fd, &req, buf, sizeof(buf));
	if (use) {
		if (!nh && errno)
			netagg_die("soliciting the next hop (NTF_USE): %s", strerror(errno));
		return false;
	}
	if (!nh) {
		if (errno != ENOENT)
			netagg_die("reading the neighbour table: %s", strerror(errno));
		return false;
	}
	lladdr = rtnl_find(nh, sizeof(struct ndmsg), NDA_LLADDR);
	if (!(((struct ndmsg *)NLMSG_DATA(nh))->ndm_state & nud_valid) || !lladdr ||
	    RTA_PAYLOAD(lladdr) != ETH_ALEN)
		return false;
	memcpy(s->ll.sll_addr, RTA_DATA(lladdr), ETH_ALEN);
	return true;
}

/*
 * Open the packet socket to the next hop towards --dst: NULL, or why not
 * (the frames are then skipped with that reason).
 */
static const char *link_open(struct sender *s, const struct cfg *c)
{
	struct rtnl_msg req = {
		.nh = {
			.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg)),
			.nlmsg_type = RTM_GETROUTE,
			.nlmsg_flags = NLM_F_REQUEST,
		},
		.rt = { .rtm_family = AF_INET6, .rtm_dst_len = 128 },
	};
	struct timeval tv = { .tv_sec = 2 };
	static uint8_t buf[8192];
	struct in6_addr hop = c->dst.v6;
	struct rtattr *oif, *gw;
	struct nlmsghdr *nh;
	struct ifreq ifr = { 0 };
	int fd, i;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		netagg_die("rtnetlink socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	rtnl_attr(&req, RTA_DST, &c->dst.v6, sizeof(c->dst.v6));
	nh = rtnl_talk(fd, &req, buf, sizeof(buf));
	if (!nh)
		netagg_die("no route to %s: %s", inet_ntop(AF_INET6, &c->dst.v6,
			   (char *)buf, INET6_ADDRSTRLEN), strerror(errno));
	oif = rtnl_find(nh, sizeof(struct rtmsg), RTA_OIF);
	gw = rtnl_find(nh, sizeof(struct rtmsg), RTA_GATEWAY);
	if (((struct rtmsg *)NLMSG_DATA(nh))->rtm_type != RTN_UNICAST || !oif) {
		close(fd);
		return "--dst is not reached through a link";
	}
	if (gw && RTA_PAYLOAD(gw) == sizeof(hop))
		memcpy(&hop, RTA_DATA(gw), sizeof(hop));
	s->ll = (struct sockaddr_ll) {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_IPV6),
		.sll_ifindex = *(int *)RTA_DATA(oif),
		.sll_halen = ETH_ALEN,
	};

	s->link_fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s->link_fd < 0)
		netagg_die("packet socket: %s", strerror(errno));
	if (!if_indextoname(s->ll.sll_ifindex, ifr.ifr_name) ||
	    ioctl(s->link_fd, SIOCGIFHWADDR, &ifr) < 0)
		netagg_die("device %d: %s", s->ll.sll_ifindex, strerror(errno));
	if (ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER) {
		close(s->link_fd);
		s->link_fd = -1;
		close(fd);
		return "the route to --dst does not leave by Ethernet";
	}
	/* Solicited, the answer takes a round trip: wait 3 s at most. */
	for (i = 0; i < 300 && !neigh_lladdr(fd, s, &hop, false); i++) {
		if (!i)
			neigh_lladdr(fd, s, &hop, true);
		usleep(10000);
	}
	close(fd);
	if (i == 300)
		netagg_die("the next hop towards --dst on %s has no link address",
			   ifr.ifr_name);
	return NULL;
}

/* Send one built packet; returns its class. @what names it in errors. */
static unsigned int send_pkt(struct sender *s, const struct cfg *c,
			     const uint8_t *buf, size_t len, const char *what,
			     bool link)
{
	unsigned int k = classify(c, buf, len);
	int fd = link ? s->link_fd : s->fd;
	const struct sockaddr *to = link ? (struct sockaddr *)&s->ll : &s->to.sa;
	socklen_t tolen = link ? sizeof(s->ll) : s->tolen;
	int tries = 0;

	pace(s);
	/* A full device queue is not the packet's fault: wait and retry. */
	while (sendto(fd, buf, len, 0, to, tolen) < 0) {
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
	s->exthdr += !!(k & K_EXTHDR);
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
	set_elems(p, ((long)c->mtu - agg_overhead(c)) / ELEM_SIZE + arg);
	return NULL;
}

/* As large as the route lets out unfragmented, at most 9000 bytes. */
static const char *v_jumbo(struct fz_pkt *p, const struct cfg *c, long arg)
{
	unsigned int size = c->route_mtu < JUMBO ? c->route_mtu : JUMBO;

	(void)arg;
	set_elems(p, (size - agg_overhead(c)) / ELEM_SIZE);
	return NULL;
}

/*
 * Fragments of the default datagram (UDP header included), cut at 8-byte
 * boundaries as a real sender would. The datagram is at least 28 bytes:
 * the first fragment takes 16 (UDP header and the netagg header up to the
 * VID), the rest is the "last" one; "middle" takes 8 bytes from 16. Each
 * variant has its own IP id, so the receiver never reassembles two. Over
 * IPv6 a fragment header says the offset and M, the id its identification.
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

/* IPv6's own: extension headers, payload lengths, headers cut short. */

/*
 * Append an extension header of @type: @len bytes (a multiple of 8) from
 * @hdr, whose first byte, the next header, build6() fills in.
 */
static void add_ext(struct fz_pkt *p, uint8_t type, const uint8_t *hdr, int len)
{
	if (p->ext_n == EXT_N || p->extlen + len > EXT_MAX)
		netagg_die("internal: extension headers of %d bytes", p->extlen + len);
	p->ext_type[p->ext_n] = type;
	p->ext_len[p->ext_n++] = len;
	memcpy(p->ext + p->extlen, hdr, len);
	p->extlen += len;
}

/* Hop-by-hop or destination options, 8 bytes: one PadN of 6, zeros. */
static const uint8_t opts_pad8[8] = { 0, 0, IP6OPT_PADN, 4 };

/*
 * Destination options of @len bytes (a multiple of 8, up to EXT_MAX):
 * options of type 0x1e (RFC 4727's experiment, whose top bits say "skip
 * it"), 257 bytes each, the rest one more: at most 5, fewer than the 8
 * Linux takes by default (net.ipv6.max_dst_opts_number). A receiver
 * skips them all.
 */
static void add_dstopt_long(struct fz_pkt *p, int len)
{
	uint8_t h[EXT_MAX] = { 0, len / 8 - 1 };

	for (int off = 2, n; off < len; off += n) {
		n = len - off > 2 + 255 ? 2 + 255 : len - off;
		if (n == 1) {
			h[off] = IP6OPT_PAD1;
			continue;
		}
		h[off] = 0x1e;
		h[off + 1] = n - 2;
	}
	add_ext(p, IPPROTO_DSTOPTS, h, len);
}

/*
 * A routing header: type @type, segments left @left, over @n addresses
 * (the last segment first): @addrs. Type 0 (RFC 5095 deprecated it) has
 * 4 reserved bytes, type 4 (segment routing, RFC 8754) last entry, flags
 * and tag; both 8 bytes, then the addresses.
 */
static void add_rthdr(struct fz_pkt *p, uint8_t type, uint8_t left,
		      const struct in6_addr *addrs, int n)
{
	uint8_t h[8 + 2 * 16] = { 0, 2 * n, type, left };

	if (type == 4)
		h[4] = n - 1;		/* last entry */
	memcpy(h + 8, addrs, n * sizeof(*addrs));
	add_ext(p, IPPROTO_ROUTING, h, 8 + n * 16);
}

enum {
	EXT_HBH, EXT_DST, EXT_HBH_DST, EXT_DST_X8, EXT_DST_1024,
	EXT_HBH_NONEXT, EXT_HBH_OVERRUN, EXT_DST_OVERRUN,
	EXT_RH0, EXT_SRH, EXT_SRH_TRANSIT,
};

static const char *v_ext(struct fz_pkt *p, const struct cfg *c, long arg)
{
	uint8_t overrun[8] = { 0, 255, IP6OPT_PADN, 4 };	/* 2048 bytes, says it */
	struct in6_addr seg[2] = { p->saddr.v6, c->dst.v6 };

	switch (arg) {
	case EXT_HBH:
	case EXT_HBH_NONEXT:
		add_ext(p, IPPROTO_HOPOPTS, opts_pad8, sizeof(opts_pad8));
		if (arg == EXT_HBH_NONEXT)
			p->proto = IPPROTO_NONE;
		break;
	case EXT_DST:
		add_ext(p, IPPROTO_DSTOPTS, opts_pad8, sizeof(opts_pad8));
		break;
	case EXT_HBH_DST:
		add_ext(p, IPPROTO_HOPOPTS, opts_pad8, sizeof(opts_pad8));
		add_ext(p, IPPROTO_DSTOPTS, opts_pad8, sizeof(opts_pad8));
		break;
	case EXT_DST_X8:
		for (int i = 0; i < EXT_N; i++)
			add_ext(p, IPPROTO_DSTOPTS, opts_pad8, sizeof(opts_pad8));
		break;
	case EXT_DST_1024:
		add_dstopt_long(p, 1024);
		break;
	case EXT_HBH_OVERRUN:
		add_ext(p, IPPROTO_HOPOPTS, overrun, sizeof(overrun));
		break;
	case EXT_DST_OVERRUN:
		add_ext(p, IPPROTO_DSTOPTS, overrun, sizeof(overrun));
		break;
	case EXT_RH0:
		add_rthdr(p, 0, 0, &c->dst.v6, 1);
		break;
	case EXT_SRH:
		add_rthdr(p, 4, 0, &c->dst.v6, 1);
		break;
	case EXT_SRH_TRANSIT:
		/* --dst a waypoint; the last segment, the final destination,
		 * is the source: its address goes in the UDP checksum
		 */
		add_rthdr(p, 4, 1, seg, 2);
		p->has_final = true;
		p->final = seg[0];
		break;
	}
	return NULL;
}

/* A fragment header that says no fragment: offset 0, M clear (RFC 6946). */
static const char *v_frag_atomic(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c; (void)arg;
	p->frag6 = true;
	return NULL;
}

/* The first fragment (as frag-first) behind a hop-by-hop header. */
static const char *v_hbh_frag(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)arg;
	v_ext(p, c, EXT_HBH);
	return v_frag(p, c, FRAG_FIRST);
}

/* The payload length field: 8 bytes more than there are, 4 fewer, 0. */
enum { PLEN_LONG, PLEN_SHORT, PLEN_ZERO };

static const char *v_plen(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	switch (arg) {
	case PLEN_LONG: p->plen_delta = 8; break;
	case PLEN_SHORT: p->plen_delta = -4; break;
	case PLEN_ZERO: p->plen = 0; break;
	}
	return NULL;
}

/* Only the first @arg bytes of the IPv6 header, nothing after: a frame. */
static const char *v_hdr_cut(struct fz_pkt *p, const struct cfg *c, long arg)
{
	(void)c;
	p->hdr_cut = arg;
	return NULL;
}

/*
 * The variants, each for both families but those of one (family set):
 * new ones go at the end, so that every variant keeps its IP id.
 */
static const struct variant {
	const char *name;
	variant_fn fn;
	long arg;
	int family;			/* AF_UNSPEC: both; else its alone */
} variants[] = {
	{ "valid",			v_valid,	0, AF_UNSPEC },
	/* truncated UDP payloads */
	{ "trunc-0",			v_trunc,	0, AF_UNSPEC },
	{ "trunc-1",			v_trunc,	1, AF_UNSPEC },
	{ "trunc-7",			v_trunc,	7, AF_UNSPEC },
	{ "trunc-8",			v_trunc,	8, AF_UNSPEC },
	{ "trunc-19",			v_trunc,	19, AF_UNSPEC },
	/* header fields at their boundaries, the rest well-formed */
	{ "version-0",			v_version,	0, AF_UNSPEC },
	{ "version-2",			v_version,	2, AF_UNSPEC },
	{ "version-255",		v_version,	255, AF_UNSPEC },
	{ "flags-0xff",			v_flags,	0xff, AF_UNSPEC },
	{ "flags-result",		v_flags,	NETAGG_F_RESULT, AF_UNSPEC },
	{ "flags-fin",			v_flags,	NETAGG_F_FIN, AF_UNSPEC },
	{ "flags-probe-result",		v_flags,	NETAGG_F_PROBE | NETAGG_F_RESULT,
					AF_UNSPEC },
	{ "probe",			v_probe,	0, AF_UNSPEC },
	{ "probe-payload",		v_probe,	2, AF_UNSPEC },
	{ "dtype-0",			v_dtype,	0, AF_UNSPEC },
	{ "dtype-1",			v_dtype,	1, AF_UNSPEC },
	{ "dtype-2",			v_dtype,	2, AF_UNSPEC },
	{ "dtype-255",			v_dtype,	255, AF_UNSPEC },
	{ "jid-0",			v_jid,		0, AF_UNSPEC },
	{ "jid-0xffffffff",		v_jid,		0xffffffffL, AF_UNSPEC },
	{ "jid-next",			v_jid_next,	0, AF_UNSPEC },
	{ "vid-0",			v_vid,		0, AF_UNSPEC },
	{ "vid-1",			v_vid,		1, AF_UNSPEC },
	{ "vid-0x7fffffff",		v_vid,		0x7fffffffL, AF_UNSPEC },
	{ "vid-0x80000000",		v_vid,		0x80000000L, AF_UNSPEC },
	{ "vid-0xffffffff",		v_vid,		0xffffffffL, AF_UNSPEC },
	{ "tid-0",			v_tid,		0, AF_UNSPEC },
	{ "tid-63",			v_tid,		63, AF_UNSPEC },
	{ "tid-64",			v_tid,		64, AF_UNSPEC },
	{ "tid-0xffff",			v_tid,		0xffff, AF_UNSPEC },
	{ "count-0",			v_count,	0, AF_UNSPEC },
	{ "count-1",			v_count,	1, AF_UNSPEC },
	{ "count-c+1",			v_count_next,	0, AF_UNSPEC },
	{ "count-0xffff",		v_count_field,	0xffff, AF_UNSPEC },
	{ "contributors-0",		v_contributors,	0, AF_UNSPEC },
	{ "contributors-0xffff",	v_contributors,	0xffff, AF_UNSPEC },
	{ "reserved-0xff",		v_reserved,	0xff, AF_UNSPEC },
	{ "round-0xffff",		v_round,	0xffff, AF_UNSPEC },
	{ "round-stale",		v_round_stale,	0x1234, AF_UNSPEC },
	{ "session-stale",		v_session_stale, 0x12345678, AF_UNSPEC },
	/* count against payload */
	{ "payload-c-1",		v_payload_delta, -1, AF_UNSPEC },
	{ "payload-c+1",		v_payload_delta, 1, AF_UNSPEC },
	{ "count-0-payload",		v_count0_payload, 0, AF_UNSPEC },
	{ "payload-odd",		v_payload_odd,	1, AF_UNSPEC },
	/* sizes */
	{ "at-mtu",			v_mtu,		0, AF_UNSPEC },
	{ "over-mtu",			v_mtu,		1, AF_UNSPEC },
	{ "jumbo",			v_jumbo,	0, AF_UNSPEC },
	/* hand-built fragments, and DF, which is not one */
	{ "frag-first",			v_frag,		FRAG_FIRST, AF_UNSPEC },
	{ "frag-middle",		v_frag,		FRAG_MIDDLE, AF_UNSPEC },
	{ "frag-last",			v_frag,		FRAG_LAST, AF_UNSPEC },
	{ "frag-first-port-9",		v_frag,		FRAG_FIRST_OTHER_PORT, AF_UNSPEC },
	{ "no-df",			v_frag_bits,	0, AF_INET },
	/* valid IP options */
	{ "opt-nop",			v_opt,		OPT_NOP, AF_INET },
	{ "opt-nop-40",			v_opt,		OPT_NOP40, AF_INET },
	{ "opt-rr",			v_opt,		OPT_RR, AF_INET },
	{ "opt-ts",			v_opt,		OPT_TS, AF_INET },
	/* UDP checksum and length; over IPv6 a zero checksum is forbidden */
	{ "csum-bad",			v_csum,		CSUM_BAD, AF_UNSPEC },
	{ "csum-zero",			v_csum,		CSUM_ZERO, AF_UNSPEC },
	{ "ulen-trailer",		v_trailer,	ELEM_SIZE, AF_UNSPEC },
	{ "ulen-short",			v_ulen_delta,	-ELEM_SIZE, AF_UNSPEC },
	{ "ulen-long",			v_ulen_delta,	ELEM_SIZE, AF_UNSPEC },
	{ "ulen-7",			v_ulen,		7, AF_UNSPEC },
	{ "ulen-0",			v_ulen,		0, AF_UNSPEC },
	/* DSCP, ECN, protocol and ports */
	{ "dscp-0",			v_dscp,		0, AF_UNSPEC },
	{ "dscp-46",			v_dscp,		46, AF_UNSPEC },
	{ "dscp-55",			v_dscp,		55, AF_UNSPEC },
	{ "dscp-57",			v_dscp,		57, AF_UNSPEC },
	{ "dscp-63",			v_dscp,		63, AF_UNSPEC },
	{ "ecn-1",			v_ecn,		1, AF_UNSPEC },
	{ "ecn-2",			v_ecn,		2, AF_UNSPEC },
	{ "ecn-3",			v_ecn,		3, AF_UNSPEC },
	{ "proto-tcp",			v_proto,	IPPROTO_TCP, AF_UNSPEC },
	{ "proto-udplite",		v_proto,	IPPROTO_UDPLITE, AF_UNSPEC },
	{ "dport-7178",			v_dport,	NETAGG_UDP_PORT + 1, AF_UNSPEC },
	{ "sport-0",			v_sport,	0, AF_UNSPEC },
	/* who sends it */
	{ "contrib-from-child",		v_from,		FROM_CHILD, AF_UNSPEC },
	{ "contrib-from-stranger",	v_from,		FROM_STRANGER, AF_UNSPEC },
	{ "result-from-child",		v_from,		FROM_CHILD | AS_RESULT, AF_UNSPEC },
	{ "result-from-stranger",	v_from,		FROM_STRANGER | AS_RESULT, AF_UNSPEC },
	/* VIDs relative to --expected-vid and --window */
	{ "vid-window-last",		v_vid_rel,	0, AF_UNSPEC },
	{ "vid-window",			v_vid_rel,	1, AF_UNSPEC },
	{ "vid-window-x2",		v_vid_rel,	2, AF_UNSPEC },
	{ "vid-half",			v_vid_rel,	3, AF_UNSPEC },
	{ "vid-behind",			v_vid_rel,	4, AF_UNSPEC },
	{ "vid-behind-window",		v_vid_rel,	5, AF_UNSPEC },
	{ "vid-behind-window-1",	v_vid_rel,	6, AF_UNSPEC },
	/*
	 * IPv6 alone. A contribution behind extension headers, which the
	 * node must walk (or count a drop), never misparse: hop-by-hop
	 * options (PadN), destination options, both, eight destination
	 * options headers, one of 1024 bytes; behind a hop-by-hop header
	 * whose next header is 59 (none: what follows is not UDP); behind
	 * a header whose length runs 2048 bytes past the packet's end (a
	 * hop-by-hop one: ipv6_rcv() drops it; a destination options one:
	 * the hook sees it); behind a routing header: type 0, segments
	 * left 0; segment routing (type 4), segments left 0, or 1 with
	 * --dst a waypoint and the source the final destination (over
	 * which the UDP checksum is).
	 */
	{ "ip6-hbh",			v_ext,		EXT_HBH, AF_INET6 },
	{ "ip6-dstopt",			v_ext,		EXT_DST, AF_INET6 },
	{ "ip6-hbh-dstopt",		v_ext,		EXT_HBH_DST, AF_INET6 },
	{ "ip6-dstopt-x8",		v_ext,		EXT_DST_X8, AF_INET6 },
	{ "ip6-dstopt-1024",		v_ext,		EXT_DST_1024, AF_INET6 },
	{ "ip6-hbh-nonext",		v_ext,		EXT_HBH_NONEXT, AF_INET6 },
	{ "ip6-hbh-overrun",		v_ext,		EXT_HBH_OVERRUN, AF_INET6 },
	{ "ip6-dstopt-overrun",		v_ext,		EXT_DST_OVERRUN, AF_INET6 },
	{ "ip6-rh0",			v_ext,		EXT_RH0, AF_INET6 },
	{ "ip6-srh",			v_ext,		EXT_SRH, AF_INET6 },
	{ "ip6-srh-transit",		v_ext,		EXT_SRH_TRANSIT, AF_INET6 },
	/*
	 * Fragment headers (frag-* above are IPv6's too): an atomic
	 * fragment, not a fragment; the first fragment behind hop-by-hop.
	 */
	{ "ip6-frag-atomic",		v_frag_atomic,	0, AF_INET6 },
	{ "ip6-hbh-frag-first",		v_hbh_frag,	0, AF_INET6 },
	/*
	 * The payload length: 8 bytes beyond the packet (ipv6_rcv() drops
	 * it), 4 short of it (the receiver trims the datagram's end: short),
	 * 0 (trimmed to the bare header); the header cut short, a frame of
	 * its first 8 (to the hop limit) or 39 bytes, nothing after.
	 */
	{ "ip6-plen-long",		v_plen,		PLEN_LONG, AF_INET6 },
	{ "ip6-plen-short",		v_plen,		PLEN_SHORT, AF_INET6 },
	{ "ip6-plen-0",			v_plen,		PLEN_ZERO, AF_INET6 },
	{ "ip6-hdr-trunc-8",		v_hdr_cut,	8, AF_INET6 },
	{ "ip6-hdr-trunc-39",		v_hdr_cut,	39, AF_INET6 },
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
	bool link = p.hdr_cut >= 0;	/* a frame: see link_open() */
	char why[80];
	unsigned int k;
	size_t len;

	if (!skip) {
		len = build(&p, c, buf);
		if (link && s->link_fd < 0 && !s->link_why)
			s->link_why = link_open(s, c);
		/* The kernel refuses IP_HDRINCL packets over the device MTU. */
		if (link && s->link_why) {
			skip = s->link_why;
		} else if (len > c->route_mtu) {
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
	k = send_pkt(s, c, buf, len, v->name, link);
	if (!c->quiet) {
		printf("%s sent", v->name);
		if (c->verbose)
			print_class(k, len);
		putchar('\n');
	}
}

/* Whether @v is sent over @family: those of the other one never are. */
static bool variant_of(const struct variant *v, int family)
{
	return !v->family || v->family == family;
}

static void run_variants(struct sender *s, const struct cfg *c)
{
	/* IP ids from 1, one per variant: no two are ever reassembled. */
	if (!c->nnames) {
		for (size_t i = 0; i < NVARIANTS; i++)
			if (variant_of(&variants[i], c->dst.family))
				run_variant(s, c, &variants[i], i + 1);
		return;
	}
	for (int i = 0; i < c->nnames; i++) {
		const struct variant *v = find_variant(c->names[i]);

		if (!v)
			netagg_die("no variant \"%s\" (see --list)", c->names[i]);
		if (!variant_of(v, c->dst.family))
			netagg_die("variant \"%s\" is %s's alone (--dst is %s)",
				   v->name, netagg_family_name(v->family),
				   netagg_family_name(c->dst.family));
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
 * (IPv6: extension headers, fewer bytes than that) and one more element's
 * worth of trailer it still fits the route MTU.
 */
static int max_elems(const struct cfg *c)
{
	return ((int)c->route_mtu - agg_overhead(c) - IP_OPT_MAX - ELEM_SIZE) /
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
	struct netagg_inet from[3] = { c->src };
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
	if (!rnd(r, 16)) {
		/* IPv6: extension headers where IPv4 has options */
		static const long ext[] = { EXT_HBH, EXT_DST, EXT_HBH_DST, EXT_SRH };
		long which = rnd(r, 4);

		if (c->dst.family == AF_INET6)
			v_ext(p, c, ext[which]);
		else
			set_opt(p, which);
	}
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
		send_pkt(s, c, buf, build(&p, c, buf), what, false);
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
	bool v6 = c->dst.family == AF_INET6;
	union netagg_sockaddr sa;
	socklen_t sl = netagg_sockaddr(&sa, &c->dst, c->port);
	int fd = socket(c->dst.family, SOCK_DGRAM, 0), mtu;
	char addr[INET6_ADDRSTRLEN];

	if (fd < 0)
		netagg_die("socket: %s", strerror(errno));
	if (connect(fd, &sa.sa, sl) < 0)
		netagg_die("no route to %s: %s", netagg_inet_str(&c->dst, addr),
			   strerror(errno));
	if (!c->have_src) {
		if (getsockname(fd, &sa.sa, &sl) < 0)
			netagg_die("getsockname: %s", strerror(errno));
		if (v6)
			c->src.v6 = sa.sin6.sin6_addr;
		else
			c->src.v4 = sa.sin.sin_addr;
	}
	sl = sizeof(mtu);
	if (getsockopt(fd, v6 ? IPPROTO_IPV6 : IPPROTO_IP, v6 ? IPV6_MTU : IP_MTU,
		       &mtu, &sl) < 0)
		netagg_die("%s: %s", v6 ? "IPV6_MTU" : "IP_MTU", strerror(errno));
	c->route_mtu = mtu > PKT_MAX ? PKT_MAX : mtu;
	close(fd);
	if (c->route_mtu < NETAGG_MTU_MIN)
		netagg_die("route MTU %u is below %d", c->route_mtu, NETAGG_MTU_MIN);
	/* A well-formed packet must go out; variants that grow it may not. */
	if (agg_overhead(c) + c->count * ELEM_SIZE > (int)c->route_mtu)
		netagg_die("--count %u does not fit the route MTU %u (at most %u)",
		    c->count, c->route_mtu,
		    (c->route_mtu - agg_overhead(c)) / ELEM_SIZE);
}

/* A raw socket of @family that sends the IP header we write. */
static int open_raw(int family)
{
	int fd = socket(family, SOCK_RAW, IPPROTO_RAW), one = 1;

	if (fd < 0)
		netagg_die("raw socket: %s%s", strerror(errno),
		    errno == EPERM ? " (needs CAP_NET_RAW)" : "");
	/* Implied by IPPROTO_RAW; said anyway, it is what we rely on. */
	if (family == AF_INET6) {	/* IPV6_HDRINCL: Linux 4.5 on */
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_HDRINCL, &one, sizeof(one)) < 0)
			netagg_die("IPV6_HDRINCL: %s", strerror(errno));
	} else if (setsockopt(fd, IPPROTO_IP, IP_HDRINCL, &one, sizeof(one)) < 0) {
		netagg_die("IP_HDRINCL: %s", strerror(errno));
	}
	return fd;
}

static void usage(FILE *f)
{
	fputs("Usage: netagg-fuzz --dst ADDR [OPTION]... variants [NAME]...\n"
	      "       netagg-fuzz --dst ADDR [OPTION]... random N [--seed S]\n"
	      "       netagg-fuzz [--dst ADDR] --list\n"
	      "Send hostile netagg packets over a raw IPv4 or IPv6 socket, as --dst is\n"
	      "(CAP_NET_RAW). Over IPv6 the opt-* and no-df variants are not sent, the\n"
	      "ip6-* ones are: extension headers, fragment headers, payload lengths, and\n"
	      "headers cut short (ip6-hdr-trunc-*, Ethernet frames from a packet socket).\n"
	      "  variants [NAME]...  each named variant once (all of --dst's family\n"
	      "                      without NAME)\n"
	      "  random N            N random packets (N <= 1000000)\n"
	      "  --dst ADDR          destination IPv4 or IPv6 address (required)\n"
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
	      "  --list              list the variants of --dst's family (IPv4 without)\n"
	      "                      and exit\n"
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
	bool have_dst = false, have_seed = false, list = false;
	const struct {
		const char *name;
		const struct netagg_inet *a;
		const bool *given;
	} same[] = {		/* of --dst's family, when given */
		{ "--src", &c->src, &c->have_src },
		{ "--child", &c->child, &c->have_child },
		{ "--stranger", &c->stranger, &c->have_stranger },
	};
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
		case O_DST: c->dst = netagg_tool_addr(name, optarg); have_dst = true; break;
		case O_SRC: c->src = netagg_tool_addr(name, optarg); c->have_src = true; break;
		case O_CHILD:
			c->child = netagg_tool_addr(name, optarg);
			c->have_child = true;
			break;
		case O_STRANGER:
			c->stranger = netagg_tool_addr(name, optarg);
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
		case O_LIST: list = true; break;	/* once --dst is known */
		case 'h':
			usage(stdout);
			exit(0);
		default:
			netagg_bad_option(argv, opt);
		}
	}
	if (list) {
		for (size_t i = 0; i < NVARIANTS; i++)
			if (variant_of(&variants[i], have_dst ? c->dst.family : AF_INET))
				puts(variants[i].name);
		exit(0);
	}
	if (!have_dst)
		netagg_usage_error("--dst is required");
	if (!c->have_src)		/* the routed one, of --dst's family */
		c->src.family = c->dst.family;
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++)
		if (*same[i].given && same[i].a->family != c->dst.family)
			netagg_usage_error("%s is an %s address, --dst an %s one:"
					   " give all of one family", same[i].name,
					   netagg_family_name(same[i].a->family),
					   netagg_family_name(c->dst.family));
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
	struct sender s = { .link_fd = -1 };

	parse_args(argc, argv, &c);
	route_info(&c);
	s.fd = open_raw(c.dst.family);
	/* The port is ours to write in the header: 0 here. */
	s.tolen = netagg_sockaddr(&s.to, &c.dst, 0);
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
		netagg_out_u64("exthdr", NULL, s.exthdr);
		netagg_out_u64("other", NULL, s.sent - s.seen);
		if (c.random)
			netagg_out_u64("seed", NULL, c.seed);
		netagg_out_close('}');
	}
	if (fflush(stdout) == EOF)
		netagg_die("stdout: %s", strerror(errno));
	close(s.fd);
	if (s.link_fd >= 0)
		close(s.link_fd);
	free(c.words);
	return 0;
}

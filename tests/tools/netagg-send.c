// SPDX-License-Identifier: GPL-2.0
/*
 * netagg-send - send netagg aggregation packets over a plain UDP socket,
 * well-formed or deliberately not, for tests.
 *
 * IPv4 or IPv6, as --dst is: over IPv6 the DSCP and ECN go in the traffic
 * class (IPV6_TCLASS), the same byte as IPv4's TOS, and --src must be of
 * the same family.
 *
 * Header fields are big endian (struct netagg_hdr), payload elements little
 * endian, as uapi/linux/netagg.h specifies. Exit 0 once everything was
 * sent, 1 on any error, 2 on a bad command line.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/netagg.h>

#include "tool.h"

_Static_assert(sizeof(struct netagg_hdr) == 24, "netagg_hdr is 24 bytes");

#define ELEM_SIZE	4	/* both dtypes are 32 bits wide */
/* IPv4's bound, kept for IPv6 too (whose datagrams could be 20 bytes longer). */
#define UDP_PAYLOAD_MAX	(65535 - 20 - 8)
#ifndef UDP_SEGMENT
#define UDP_SEGMENT	103
#endif

static void usage(FILE *f)
{
	fprintf(f, "Usage: netagg-send --dst ADDR [OPTION]...\n"
	      "  --dst ADDR          destination IPv4 or IPv6 address (required)\n"
	      "  --port P            destination UDP port (default 7177)\n"
	      "  --src ADDR          bind to this source address (--dst's family)\n"
	      "  --src-port P        bind to this source UDP port\n"
	      "  --dscp D            DSCP, 0-63 (default 56; IPv6: in the traffic class)\n"
	      "  --ecn E             ECN bits, 0-3 (default 0)\n"
	      "  --job J             job id (default 0)\n"
	      "  --tree T            tree id (default 0)\n"
	      "  --vid V             VID of the first packet (default 0)\n"
	      "  --vids N            send N packets, VIDs V, V+1, ... (default 1)\n"
	      "  --count N           payload elements (default 4)\n"
	      "  --dtype f32|i32|N   element type (default f32)\n"
	      "  --flags N           header flags (default 0; 1 RESULT, 2 FIN, 4 RETRY)\n"
	      "  --round R           round field (default 0)\n"
	      "  --session S         session field (default 0)\n"
	      "  --version N         protocol version (default %d, the current)\n"
	      "  --contributors N    contributors field (default 1)\n"
	      "  --value X           value of every element (default 1)\n"
	      "  --raw-len N         truncate or zero-pad the UDP payload to N bytes\n"
	      "  --super             send the --vids packets as one super-packet (UDP GSO,\n"
	      "                      each packet a segment)\n"
	      "  --stray I           in it, packet I (from 0) of tree T + 1\n"
	      "  --help              this text\n"
	      "Numbers are decimal or 0x-prefixed hexadecimal.\n",
		NETAGG_PROTO_VERSION);
}

struct params {
	struct netagg_inet dst, src;	/* src: family 0 when not given */
	uint16_t port, src_port;
	uint8_t dscp, ecn;
	uint32_t job, vid, vids;
	uint16_t tree, count, contributors, round;
	uint32_t session;
	uint8_t dtype, flags, version;
	const char *value;
	long raw_len;		/* -1: the natural length */
	int super;
	long stray;		/* -1: none */
};

/* The 32 bits of one element, in host order: a float's bits for f32 (and
 * for undefined dtypes, which exist only to be dropped), else an integer.
 */
static uint32_t element_bits(const struct params *p)
{
	char *end;

	if (!*p->value || isspace((unsigned char)*p->value))
		netagg_die("--value: \"%s\" is not a number", p->value);
	errno = 0;
	if (p->dtype == NETAGG_DTYPE_I32) {
		/* decimal or 0x-hex, like the other numbers: no octal */
		const char *d = p->value + (*p->value == '-' || *p->value == '+');
		int base = d[0] == '0' && (d[1] == 'x' || d[1] == 'X') ? 16 : 10;
		long long v = strtoll(p->value, &end, base);

		if (*end || errno || v < INT32_MIN || v > INT32_MAX)
			netagg_die("--value: \"%s\" is not a 32-bit integer", p->value);
		return (uint32_t)(int32_t)v;
	} else {
		float f = strtof(p->value, &end);
		uint32_t bits;

		if (*end)
			netagg_die("--value: \"%s\" is not a number", p->value);
		memcpy(&bits, &f, sizeof(bits));
		return bits;
	}
}

/* Header and payload; returns the buffer, its used length in *len. */
static uint8_t *build(const struct params *p, size_t *len)
{
	size_t natural = sizeof(struct netagg_hdr) + (size_t)p->count * ELEM_SIZE;
	size_t size = p->raw_len < 0 ? natural : (size_t)p->raw_len;
	uint32_t le = htole32(element_bits(p));
	struct netagg_hdr *h;
	uint8_t *buf;

	if (size > UDP_PAYLOAD_MAX)
		netagg_die("payload of %zu bytes does not fit a UDP datagram (max %d);"
		    " lower --count or use --raw-len", size, UDP_PAYLOAD_MAX);
	/* Room for the whole natural packet even when --raw-len cuts it. */
	buf = calloc(1, natural > size ? natural : size);
	if (!buf)
		netagg_die("out of memory");
	h = (struct netagg_hdr *)buf;
	h->version = p->version;
	h->flags = p->flags;
	h->dtype = p->dtype;
	h->jid = htonl(p->job);
	h->vid = htonl(p->vid);
	h->tid = htons(p->tree);
	h->count = htons(p->count);
	h->contributors = htons(p->contributors);
	h->round = htons(p->round);
	h->session = htonl(p->session);
	for (size_t i = 0; i < p->count; i++)
		memcpy(buf + sizeof(*h) + i * ELEM_SIZE, &le, ELEM_SIZE);
	*len = size;
	return buf;
}

/* A UDP socket of --dst's family, marked, bound if asked to. */
static int open_socket(const struct params *p)
{
	int tos = p->dscp << 2 | p->ecn;	/* IPv6's traffic class alike */
	int fd = socket(p->dst.family, SOCK_DGRAM, 0);

	if (fd < 0)
		netagg_die("socket: %s", strerror(errno));
	if (p->dst.family == AF_INET6) {
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof(tos)) < 0)
			netagg_die("IPV6_TCLASS: %s", strerror(errno));
	} else if (setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)) < 0) {
		netagg_die("IP_TOS: %s", strerror(errno));
	}
	if (!netagg_inet_any(&p->src) || p->src_port) {
		union netagg_sockaddr sa;
		socklen_t sl = netagg_sockaddr(&sa, &p->src, p->src_port);

		if (bind(fd, &sa.sa, sl) < 0)
			netagg_die("bind: %s", strerror(errno));
	}
	return fd;
}

static void parse_args(int argc, char **argv, struct params *p)
{
	enum { O_DST = 256, O_PORT, O_SRC, O_SRC_PORT, O_DSCP, O_ECN, O_JOB,
	       O_TREE, O_VID, O_VIDS, O_COUNT, O_DTYPE, O_FLAGS, O_VERSION,
	       O_CONTRIBUTORS, O_VALUE, O_RAW_LEN, O_ROUND, O_SESSION, O_SUPER, O_STRAY };
	static const struct option opts[] = {
		{ "dst", required_argument, NULL, O_DST },
		{ "port", required_argument, NULL, O_PORT },
		{ "src", required_argument, NULL, O_SRC },
		{ "src-port", required_argument, NULL, O_SRC_PORT },
		{ "dscp", required_argument, NULL, O_DSCP },
		{ "ecn", required_argument, NULL, O_ECN },
		{ "job", required_argument, NULL, O_JOB },
		{ "tree", required_argument, NULL, O_TREE },
		{ "vid", required_argument, NULL, O_VID },
		{ "vids", required_argument, NULL, O_VIDS },
		{ "count", required_argument, NULL, O_COUNT },
		{ "dtype", required_argument, NULL, O_DTYPE },
		{ "flags", required_argument, NULL, O_FLAGS },
		{ "version", required_argument, NULL, O_VERSION },
		{ "contributors", required_argument, NULL, O_CONTRIBUTORS },
		{ "value", required_argument, NULL, O_VALUE },
		{ "raw-len", required_argument, NULL, O_RAW_LEN },
		{ "round", required_argument, NULL, O_ROUND },
		{ "session", required_argument, NULL, O_SESSION },
		{ "super", no_argument, NULL, O_SUPER },
		{ "stray", required_argument, NULL, O_STRAY },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char name[32];
	int opt;
	int have_dst = 0;

	while ((opt = netagg_getopt(argc, argv, ":h", opts, name,
				   sizeof(name))) != -1) {
		switch (opt) {
		case O_DST: p->dst = netagg_tool_addr(name, optarg); have_dst = 1; break;
		case O_PORT: p->port = netagg_parse_num(name, optarg, 0, UINT16_MAX); break;
		case O_SRC: p->src = netagg_tool_addr(name, optarg); break;
		case O_SRC_PORT: p->src_port = netagg_parse_num(name, optarg, 0, UINT16_MAX); break;
		case O_DSCP: p->dscp = netagg_parse_num(name, optarg, 0, 63); break;
		case O_ECN: p->ecn = netagg_parse_num(name, optarg, 0, 3); break;
		case O_JOB: p->job = netagg_parse_num(name, optarg, 0, UINT32_MAX); break;
		case O_TREE: p->tree = netagg_parse_num(name, optarg, 0, UINT16_MAX); break;
		case O_VID: p->vid = netagg_parse_num(name, optarg, 0, UINT32_MAX); break;
		case O_VIDS: p->vids = netagg_parse_num(name, optarg, 0, UINT32_MAX); break;
		case O_COUNT: p->count = netagg_parse_num(name, optarg, 0, UINT16_MAX); break;
		case O_FLAGS: p->flags = netagg_parse_num(name, optarg, 0, UINT8_MAX); break;
		case O_VERSION: p->version = netagg_parse_num(name, optarg, 0, UINT8_MAX); break;
		case O_CONTRIBUTORS:
			p->contributors = netagg_parse_num(name, optarg, 0, UINT16_MAX);
			break;
		case O_VALUE: p->value = optarg; break;
		case O_ROUND: p->round = netagg_parse_num(name, optarg, 0, UINT16_MAX); break;
		case O_SESSION:
			p->session = netagg_parse_num(name, optarg, 0, UINT32_MAX);
			break;
		case O_SUPER: p->super = 1; break;
		case O_STRAY: p->stray = netagg_parse_num(name, optarg, 0, UINT32_MAX); break;
		case O_RAW_LEN:
			p->raw_len = netagg_parse_num(name, optarg, 0, UDP_PAYLOAD_MAX);
			break;
		case O_DTYPE:
			/* a number too: any, for the receiver to judge */
			p->dtype = netagg_parse_name(name, optarg, netagg_dtype_names,
						       netagg_dtype_count, true);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			netagg_bad_option(argv, opt);
		}
	}
	netagg_no_operands(argc, argv);
	if (!have_dst)
		netagg_usage_error("--dst is required");
	if (!p->src.family)		/* not given: any address of --dst's family */
		p->src.family = p->dst.family;
	if (p->src.family != p->dst.family)
		netagg_usage_error("--src is an %s address, --dst an %s one:"
				   " give both of one family", netagg_family_name(p->src.family),
				   netagg_family_name(p->dst.family));
}

/*
 * The --vids packets as the segments of one UDP GSO send, which veth passes
 * on whole: the kernel cuts it into packets only where something needs it.
 */
static void send_super(int fd, const union netagg_sockaddr *dst, socklen_t dlen,
		       const struct params *p, const uint8_t *pkt, size_t len)
{
	int gso = (int)len;
	uint8_t *all;

	if (!len || (uint64_t)len * p->vids > UDP_PAYLOAD_MAX)
		netagg_die("--super: %" PRIu32 " packets of %zu bytes do not fit one"
			   " super-packet (%d bytes)", p->vids, len, UDP_PAYLOAD_MAX);
	if (setsockopt(fd, SOL_UDP, UDP_SEGMENT, &gso, sizeof(gso)) < 0)
		netagg_die("UDP_SEGMENT: %s", strerror(errno));
	all = malloc(len * p->vids);
	if (!all)
		netagg_die("out of memory");
	for (uint32_t i = 0; i < p->vids; i++) {
		struct netagg_hdr *h = (struct netagg_hdr *)(all + i * len);

		memcpy(h, pkt, len);
		if (len >= offsetof(struct netagg_hdr, vid) + 4)
			h->vid = htonl(p->vid + i);
		if ((long)i == p->stray && len >= offsetof(struct netagg_hdr, tid) + 2)
			h->tid = htons(p->tree + 1);
	}
	if (sendto(fd, all, len * p->vids, 0, &dst->sa, dlen) < 0)
		netagg_die("sendto (super-packet): %s", strerror(errno));
	free(all);
}

int main(int argc, char **argv)
{
	struct params p = {
		.port = NETAGG_UDP_PORT,
		.dscp = NETAGG_DSCP,
		.vids = 1,
		.count = 4,
		.dtype = NETAGG_DTYPE_F32,
		.version = NETAGG_PROTO_VERSION,
		.contributors = 1,
		.value = "1",
		.raw_len = -1,
		.stray = -1,
	};
	union netagg_sockaddr dst;
	struct netagg_hdr *h;
	socklen_t dlen;
	size_t len;
	uint8_t *buf;
	int fd;

	parse_args(argc, argv, &p);
	buf = build(&p, &len);
	h = (struct netagg_hdr *)buf;
	fd = open_socket(&p);
	dlen = netagg_sockaddr(&dst, &p.dst, p.port);

	if (p.super) {
		send_super(fd, &dst, dlen, &p, buf, len);
		close(fd);
		free(buf);
		return 0;
	}
	for (uint32_t i = 0; i < p.vids; i++) {
		/* Serial numbers: VIDs wrap around past 2^32 - 1. */
		uint32_t vid = p.vid + i;

		/* With --raw-len below 12 the VID field is cut off anyway. */
		h->vid = htonl(vid);
		if (sendto(fd, buf, len, 0, &dst.sa, dlen) < 0)
			netagg_die("sendto (VID %" PRIu32 "): %s", vid, strerror(errno));
	}
	close(fd);
	free(buf);
	return 0;
}

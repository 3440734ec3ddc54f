// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libnetagg's calls (libnetagg.h): a worker opened and closed, its
 * configuration checked, an allreduce or a join run with its statistics.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/ip.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker.h"

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

static bool zeroed(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * The caller's configuration as this library knows it (libnetagg.h,
 * "Sizes"), in @own: its first cfg->sz bytes, every field beyond them 0,
 * sz this library's. NULL, or what is wrong with cfg->sz.
 */
static const char *cfg_take(const struct netagg_worker_cfg *cfg, struct netagg_worker_cfg *own)
{
	size_t sz;

	if (!cfg)
		return "no configuration";
	sz = cfg->sz;
	if (sz < CFG_SZ_MIN)
		return "cfg.sz is too small (is it set? it must be sizeof(struct netagg_worker_cfg): NETAGG_WORKER_CFG() sets it)";
	/* A field this library does not have, set: it cannot do what is asked. */
	if (sz > sizeof(*own) && !zeroed((const uint8_t *)cfg + sizeof(*own), sz - sizeof(*own)))
		return "cfg.sz larger than this library knows, with fields set beyond: the program needs a newer libnetagg";
	memset(own, 0, sizeof(*own));
	memcpy(own, cfg, sz < sizeof(*own) ? sz : sizeof(*own));
	own->sz = sizeof(*own);
	return NULL;
}

static bool in6_usable(const struct in6_addr *a)
{
	return !IN6_IS_ADDR_LINKLOCAL(a) && !IN6_IS_ADDR_V4MAPPED(a);
}

/*
 * The family of @cfg's trees, or what is wrong with them or with src:
 * one family for all (a tree's nodes are all of one, and the chunk
 * size, which the IP header's length sets, must be one for the job).
 */
static const char *cfg_family(const struct netagg_worker_cfg *cfg, int *family)
{
	const char *bad_family = "a tree's family must be AF_INET (or 0) or AF_INET6";
	int sf = cfg->src_family ? cfg->src_family : AF_INET;

	*family = cfg->trees[0].family == AF_INET6 ? AF_INET6 : AF_INET;
	for (unsigned int t = 0; t < cfg->ntrees; t++) {
		const struct netagg_tree_dst *d = &cfg->trees[t];
		int f = d->family ? d->family : AF_INET;

		if (f != AF_INET && f != AF_INET6)
			return bad_family;
		if (f != *family)
			return "the trees mix IPv4 and IPv6: one worker's trees are all of one family (a tree's nodes are, and a job's chunk size, which the IP header's length sets, is one)";
		if (f == AF_INET6 && !in6_usable(&d->addr6))
			return "a tree's IPv6 address is link-local or IPv4-mapped (give a global or unique local address, or the IPv4 address itself)";
	}
	if (sf != AF_INET && sf != AF_INET6)
		return "src_family must be AF_INET (or 0) or AF_INET6";
	/* An unset src (all 0, family 0) binds to the trees' family's any address. */
	if (sf == AF_INET6 && !in6_usable(&cfg->src6) && !IN6_IS_ADDR_UNSPECIFIED(&cfg->src6))
		return "src6 is link-local or IPv4-mapped (give a global or unique local address)";
	if (sf != *family && (cfg->src_family || cfg->src.s_addr))
		return "src is not of the trees' family (IPv4 trees need an IPv4 src, IPv6 trees an IPv6 src6 with src_family AF_INET6)";
	return NULL;
}

const char *netagg_worker_cfg_error(const struct netagg_worker_cfg *user)
{
	struct netagg_worker_cfg own, *cfg = &own;
	const char *why = cfg_take(user, &own);
	int family;

	if (why)
		return why;
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
	if (cfg->dscp > 63)
		return "dscp must be 1 to 63 (0: " STR(NETAGG_DSCP) ")";
	if (!cfg->keyed && !zeroed(cfg->key, sizeof(cfg->key)))
		return "cfg.key is set but cfg.keyed is 0";
	if (cfg->keyed && zeroed(cfg->key, sizeof(cfg->key)))
		return "cfg.keyed is set but cfg.key is all zero (no key)";
	return cfg_family(cfg, &family);
}

/* @sa: @family's address, @a4 or @a6, at @port (host order). */
static void sockaddr_inx_set(union sockaddr_inx *sa, int family,
			     const struct in_addr *a4, const struct in6_addr *a6,
			     uint16_t port)
{
	memset(sa, 0, sizeof(*sa));
	if (family == AF_INET6) {
		sa->in6.sin6_family = AF_INET6;
		sa->in6.sin6_addr = *a6;
		sa->in6.sin6_port = htons(port);
	} else {
		sa->in.sin_family = AF_INET;
		sa->in.sin_addr = *a4;
		sa->in.sin_port = htons(port);
	}
}

/*
 * One congestion window a path: the trees whose node is at one address
 * leave the worker by one way and share whatever link limits it, so they
 * are one flow to the network, with one window of all their rings' room.
 * Trees through different nodes may cross different bottlenecks: a window
 * each.
 */
static void paths_set(struct netagg_worker *w)
{
	unsigned int first[NETAGG_TREES_MAX], trees[NETAGG_TREES_MAX];

	w->npaths = 0;
	for (unsigned int t = 0; t < w->cfg.ntrees; t++) {
		unsigned int p = 0;

		while (p < w->npaths && memcmp(&w->dst[t], &w->dst[first[p]], w->dst_len))
			p++;
		if (p == w->npaths) {
			first[p] = t;
			trees[p] = 0;
			w->npaths++;
		}
		trees[p]++;
		w->ts[t].cc = &w->paths[p];
	}
	for (unsigned int p = 0; p < w->npaths; p++)
		netagg_cc_init(&w->paths[p], trees[p] * w->cfg.window, w->cfg.dctcp);
}

/*
 * Where a keyed worker's chunks leave from, which their tags bind: its
 * socket's port, and for each tree the source address routing picks
 * towards its node (a socket connected there says, sending nothing), as
 * the node sees it. 0 or -errno.
 */
static int tag_sources(struct netagg_worker *w)
{
	union sockaddr_inx a;
	socklen_t len = sizeof(a);
	int fd, err = 0;

	if (getsockname(w->fd, &a.sa, &len) < 0)
		return -errno;
	w->tag_sport = w->family == AF_INET6 ? a.in6.sin6_port : a.in.sin_port;
	fd = socket(w->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Bound as the worker's (any port): a bound address is every source. */
	sockaddr_inx_set(&a, w->family, &w->cfg.src, &w->cfg.src6, 0);
	if (bind(fd, &a.sa, w->dst_len) < 0)
		err = -errno;
	for (unsigned int t = 0; t < w->cfg.ntrees && !err; t++) {
		len = sizeof(a);
		if (connect(fd, &w->dst[t].sa, w->dst_len) < 0 ||
		    getsockname(fd, &a.sa, &len) < 0) {
			err = -errno;
			break;
		}
		if (w->family == AF_INET6) {
			w->tag_src[t] = a.in6.sin6_addr;
		} else {
			memset(&w->tag_src[t], 0, sizeof(w->tag_src[t]));
			w->tag_src[t].s6_addr[10] = 0xff;
			w->tag_src[t].s6_addr[11] = 0xff;
			memcpy(&w->tag_src[t].s6_addr[12], &a.in.sin_addr, 4);
		}
	}
	close(fd);
	return err;
}

/*
 * The worker's socket, of its trees' family, bound; 0 or -errno. The
 * job's DSCP and ECT(0) (unless no_ecn) in the TOS byte or the traffic
 * class, and the results' ECN field read from every message. An IPv6
 * packet over the path MTU fails its send (IPV6_DONTFRAG) rather than
 * leave in fragments, which no node sums; IPv4's leave with DF, the
 * kernel's default. IPv6 only on an IPv6 socket, so that an IPv4 worker
 * may bind the same port.
 */
static int open_socket(struct netagg_worker *w)
{
	const struct netagg_worker_cfg *cfg = &w->cfg;
	int tos = cfg->dscp << 2 | (cfg->no_ecn ? 0 : IPTOS_ECN_ECT0), one = 1;
	bool v6 = w->family == AF_INET6;
	union sockaddr_inx src;
	size_t inflight;

	w->fd = socket(w->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (w->fd < 0)
		return -errno;
	if (v6) {
		if (setsockopt(w->fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0 ||
		    setsockopt(w->fd, IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof(tos)) < 0 ||
		    setsockopt(w->fd, IPPROTO_IPV6, IPV6_DONTFRAG, &one, sizeof(one)) < 0)
			return -errno;
	} else if (setsockopt(w->fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)) < 0) {
		return -errno;
	}
	/*
	 * Every result in flight must fit the receive buffer at once, twice
	 * over: results of all trees can arrive in one burst while the last
	 * one's are still queued, and one dropped here can only end in a
	 * timeout.
	 */
	inflight = 2 * (size_t)cfg->ntrees * cfg->window * (cfg->mtu + SKB_OVERHEAD);
	set_rcvbuf(w->fd, inflight);
	/* The results' ECN field, on every message. */
	if (!cfg->no_ecn && setsockopt(w->fd, v6 ? IPPROTO_IPV6 : IPPROTO_IP,
				       v6 ? IPV6_RECVTCLASS : IP_RECVTOS, &one, sizeof(one)) < 0)
		return -errno;
	/* Without it, the kernel hands super-packets over segment by segment. */
	if (w->super)
		setsockopt(w->fd, IPPROTO_UDP, UDP_GRO, &one, sizeof(one));
	/* Bind now (port 0: ephemeral) so results have a fixed port to reach. */
	sockaddr_inx_set(&src, w->family, &cfg->src, &cfg->src6, cfg->src_port);
	if (bind(w->fd, &src.sa, w->dst_len) < 0)
		return -errno;
	return cfg->keyed ? tag_sources(w) : 0;
}

int netagg_worker_open(const struct netagg_worker_cfg *user, struct netagg_worker **wp)
{
	const struct netagg_worker_cfg *cfg;
	struct netagg_worker *w;
	int err;

	if (!wp)
		return -EINVAL;
	*wp = NULL;
	if (netagg_worker_cfg_error(user))
		return -EINVAL;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = -1;
	/* From here on only the copy is read: never a field beyond user->sz. */
	cfg_take(user, &w->cfg);
	cfg = &w->cfg;
	cfg_family(cfg, &w->family);
	if (!w->cfg.mtu)
		w->cfg.mtu = NETAGG_MTU_DEFAULT;
	if (!w->cfg.port)
		w->cfg.port = NETAGG_UDP_PORT;
	if (!w->cfg.dscp)
		w->cfg.dscp = NETAGG_DSCP;
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
	if (cfg->keyed) {
		w->epp = netagg_elems_per_packet_keyed(w->family, w->cfg.mtu, w->cfg.dtype);
		w->tag_len = NETAGG_TAG_LEN;
		netagg_tag_key_init(&w->key, cfg->key);
	} else {
		w->epp = netagg_elems_per_packet_af(w->family, w->cfg.mtu, w->cfg.dtype);
	}
	w->pkt_max = HDR_LEN + (size_t)w->epp * w->esize + w->tag_len;
	w->super = !cfg->plain;
	w->segs_max = w->super ? SUPER_MAX / w->pkt_max : 1;
	if (w->segs_max > SEGS_MAX)
		w->segs_max = SEGS_MAX;
	if (cfg->segments && w->segs_max > cfg->segments)
		w->segs_max = cfg->segments;

	memset(w->tree_of_tid, -1, sizeof(w->tree_of_tid));
	w->dst_len = w->family == AF_INET6 ? sizeof(struct sockaddr_in6) :
			sizeof(struct sockaddr_in);
	for (unsigned int t = 0; t < cfg->ntrees; t++) {
		const struct netagg_tree_dst *d = &cfg->trees[t];

		w->tree_of_tid[d->tid] = t;
		sockaddr_inx_set(&w->dst[t], w->family, &d->addr, &d->addr6,
				 w->cfg.port);
	}

	w->slots = calloc((size_t)cfg->ntrees * w->cfg.window, sizeof(*w->slots));
	if (!w->slots) {
		err = -ENOMEM;
		goto fail;
	}
	for (unsigned int t = 0; t < cfg->ntrees; t++) {
		w->ts[t].slots = w->slots + (size_t)t * w->cfg.window;
		w->ts[t].rto_us = w->rto_min_us > RTO_INIT_US ? w->rto_min_us : RTO_INIT_US;
	}
	paths_set(w);

	/*
	 * One spare byte a packet, so that an oversized one shows as too
	 * long; slots aligned, so that headers can be read in place. A
	 * super-packet's slot takes any UDP payload.
	 */
	w->rbatch = w->super ? RBATCH_SUPER : BATCH;
	w->rlen = w->super ? RECV_MAX + 1 : w->pkt_max + 1;
	w->rstride = (w->rlen + 63) & ~(size_t)63;
	w->rbuf = aligned_alloc(64, w->rbatch * w->rstride);
	w->sstride = w->segs_max;
	w->siov_per = cfg->keyed ? 3 : 2;
	w->siov = calloc((size_t)BATCH * w->siov_per * w->sstride, sizeof(*w->siov));
	w->shdr = calloc((size_t)BATCH * w->sstride, sizeof(*w->shdr));
	w->stag = calloc((size_t)BATCH * w->sstride, sizeof(*w->stag));
	if (!w->rbuf || !w->siov || !w->shdr || !w->stag) {
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
		w->smsg[i].msg_hdr.msg_iov = w->siov + (size_t)i * w->siov_per * w->sstride;
		w->smsg[i].msg_hdr.msg_namelen = w->dst_len;
	}

	err = open_socket(w);
	if (err)
		goto fail;
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
	free(w->stag);
	free(w->slots);
	/* The key, in the worker's copy of the configuration and as used. */
	explicit_bzero(&w->cfg.key, sizeof(w->cfg.key));
	explicit_bzero(&w->key, sizeof(w->key));
	free(w);
}

uint16_t netagg_worker_round(const struct netagg_worker *w)
{
	return w ? w->round : 0;
}

uint32_t netagg_worker_session(const struct netagg_worker *w)
{
	return w && w->joined ? w->ts[0].session : 0;
}

int netagg_worker_set_mean(struct netagg_worker *w, int mean)
{
	struct netagg_worker_cfg cfg;

	if (!w)
		return -EINVAL;
	cfg = w->cfg;
	cfg.mean = mean;
	if (netagg_worker_cfg_error(&cfg))
		return -EINVAL;
	w->cfg.mean = mean;
	return 0;
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

/* A call's statistics, from nothing. */
static void info_start(struct netagg_worker *w)
{
	memset(&w->info, 0, sizeof(w->info));
	for (unsigned int p = 0; p < w->npaths; p++) {
		struct netagg_cc *cc = &w->paths[p];

		cc->cut_min = cc->max;
		cc->ce_cuts = 0;
		cc->loss_cuts = 0;
		cc->undone = 0;
	}
}

/*
 * The paths' windows, for the call's statistics: the least of them; and
 * the trees' timeouts: the largest.
 */
static void info_paths(struct netagg_worker *w)
{
	w->info.window_min = UINT_MAX;
	w->info.window_end = UINT_MAX;
	for (unsigned int t = 0; t < w->cfg.ntrees; t++)
		if (w->ts[t].rto_us > w->info.rto_us)
			w->info.rto_us = w->ts[t].rto_us;
	for (unsigned int p = 0; p < w->npaths; p++) {
		const struct netagg_cc *cc = &w->paths[p];

		if (cc->cut_min < w->info.window_min)
			w->info.window_min = cc->cut_min;
		if (cc->cwnd < w->info.window_end)
			w->info.window_end = cc->cwnd;
		w->info.ce_cuts += cc->ce_cuts;
		w->info.loss_cuts += cc->loss_cuts;
		w->info.undone_cuts += cc->undone;
	}
}

/* An info the caller may give: none, or one whose sz takes the first layout. */
static bool info_ok(const struct netagg_allreduce_info *info)
{
	return !info || info->sz >= INFO_SZ_MIN;
}

/*
 * The call's statistics, to the caller's info: only within its sz; the
 * fields of a newer program beyond this library's, 0 (none filled them).
 */
static void info_end(struct netagg_worker *w, struct netagg_allreduce_info *info)
{
	size_t sz, mine = sizeof(w->info);

	w->info.session = netagg_worker_session(w);
	info_paths(w);
	if (!info)
		return;
	sz = info->sz;
	memcpy(info, &w->info, sz < mine ? sz : mine);
	if (sz > mine)
		memset((uint8_t *)info + mine, 0, sz - mine);
	info->sz = sz;
}

int netagg_join(struct netagg_worker *w, struct netagg_allreduce_info *info)
{
	int err;

	if (!w || !info_ok(info))
		return -EINVAL;
	info_start(w);
	err = w->joined ? 0 : netagg_agree_session(w);
	info_end(w, info);
	return err;
}

int netagg_allreduce(struct netagg_worker *w, void *buf, size_t count,
		     struct netagg_allreduce_info *info)
{
	int err = -EINVAL;

	if (!w || !info_ok(info))
		return -EINVAL;
	info_start(w);
	if (buf || !count) {
		err = w->joined ? 0 : netagg_agree_session(w);
		if (err)
			goto out;
		/*
		 * A keyed run's rounds never wrap within a session (linux/
		 * netagg.h, "Tags": a round's packets replayed 65536 rounds on
		 * would be right there): every rank, in step, joins a new one
		 * (its join took the round before cfg.round), or, its session
		 * given, fails.
		 */
		if (w->tag_len && w->session_rounds == (w->cfg.no_join ? 65536 : 65535)) {
			err = -EKEYEXPIRED;
			if (w->cfg.no_join)
				goto out;
			w->joined = false;
			w->round = w->cfg.round;
			err = netagg_agree_session(w);
			if (err)
				goto out;
		}
		w->session_rounds++;
		/* Every call uses up its round, so that all workers stay in step. */
		for (unsigned int t = 0; t < w->cfg.ntrees; t++)
			w->ts[t].cur_session = w->ts[t].session;
		w->cur_round = w->round++;
		w->buf = buf;
		w->count = count;
		buf_to_le(buf, count, w->esize);
		err = netagg_run(w);
		/* Back to host order, results included. */
		buf_to_le(buf, count, w->esize);
		w->buf = NULL;
	}
out:
	info_end(w, info);
	return err;
}

const char *netagg_version(void)
{
	return NETAGG_VERSION;
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
		return "invalid argument (a bad configuration, a NULL buffer, or an info whose sz is not set)";
	case -E2BIG:
		return "the buffer has more chunks than a round's VIDs can number";
	case -EHOSTUNREACH:
		return "a tree's node did not answer for node_timeout_ms: deleted, unreachable, or without the job (is it configured there?)";
	case -EPROTOTYPE:
		return "the job's dtype on the nodes is not the worker's (netagg job add ... dtype)";
	case -EKEYEXPIRED:
		return "a keyed run's session given by hand (no_join) served 65536 allreduces: its rounds would repeat, and packets of the earlier ones be right again; open the worker again with another session";
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

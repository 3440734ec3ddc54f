// SPDX-License-Identifier: GPL-2.0
/*
 * libcheck: a program built against the installed libnetagg through
 * pkg-config (tests/host_library.sh), as a user's would be. It sends
 * nothing: it checks the shared library's configuration checks and
 * messages, the sz rule of its structures, IPv6 configurations, and
 * opens workers on loopback (a socket bound, no packet), and prints one
 * KTAP line per check.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <libnetagg.h>

#include "ktap.h"

#define PLAN	29

/*
 * A worker opened on loopback from @cfg (no join: nothing is sent), an
 * allreduce of nothing run (its info filled), closed: 0 or -errno.
 */
static int open_close(const struct netagg_worker_cfg *cfg, struct netagg_allreduce_info *info)
{
	struct netagg_worker *w;
	int err = netagg_worker_open(cfg, &w);

	if (err)
		return err;
	err = netagg_allreduce(w, NULL, 0, info);
	netagg_worker_close(w);
	return err;
}

/* The sz rule (libnetagg.h, "Sizes"), on this program's structures. */
static void sizes(void)
{
	struct {
		struct netagg_worker_cfg cfg;
		unsigned char later[16];	/* a newer program's fields */
	} big = { .cfg = { .sz = sizeof(big), .jid = 1, .dtype = NETAGG_DTYPE_F32,
			   .workers = 1, .no_join = 1, .ntrees = 1 } };
	struct {
		struct netagg_allreduce_info info;
		unsigned char later[16];
	} out;
	NETAGG_WORKER_CFG(cfg, .jid = 1, .dtype = NETAGG_DTYPE_F32, .workers = 1, .no_join = 1,
			  .ntrees = 1);
	NETAGG_ALLREDUCE_INFO(info);

	inet_pton(AF_INET, "127.0.0.1", &cfg.trees[0].addr);
	big.cfg.trees[0] = cfg.trees[0];
	ok(cfg.sz == sizeof(cfg) && info.sz == sizeof(info) && !netagg_worker_cfg_error(&cfg),
	   "NETAGG_WORKER_CFG() and NETAGG_ALLREDUCE_INFO() set sz; the configuration is whole");
	cfg.sz = 0;
	ok(says(netagg_worker_cfg_error(&cfg), "cfg.sz is too small") &&
	   open_close(&cfg, NULL) == -EINVAL, "sz 0 (not set): refused, -EINVAL, the message says so");
	cfg.sz = offsetof(struct netagg_worker_cfg, trees) + sizeof(cfg.trees) - 1;
	ok(says(netagg_worker_cfg_error(&cfg), "cfg.sz is too small"),
	   "sz below the first soname-4 layout's size: refused");
	cfg.sz = sizeof(cfg);
	ok(!netagg_worker_cfg_error(&big.cfg) && open_close(&big.cfg, NULL) == 0,
	   "sz larger than the library's, the bytes beyond it 0: accepted, the worker opens");
	big.later[7] = 1;
	ok(says(netagg_worker_cfg_error(&big.cfg), "cfg.sz larger than this library knows, with fields set") &&
	   open_close(&big.cfg, NULL) == -EINVAL,
	   "... a byte beyond the library's fields set (a newer program's request): refused, -EINVAL");
	info.sz = 0;
	info.window_min = 12345;
	ok(open_close(&cfg, &info) == -EINVAL && info.window_min == 12345,
	   "an info of sz 0: -EINVAL, nothing written");
	info.sz = sizeof(info);
	ok(open_close(&cfg, &info) == 0 && info.sz == sizeof(info) && info.window_min == 64,
	   "an info of its sz: filled in (window_min 64)");
	memset(&out, 0xa5, sizeof(out));
	out.info.sz = sizeof(out);
	ok(open_close(&cfg, &out.info) == 0 && out.info.sz == sizeof(out) &&
	   out.info.window_min == 64 && !out.later[0] && !out.later[15],
	   "an info larger than the library's: its fields filled, the newer program's beyond them 0");
}

/* IPv6 trees and bind addresses. */
static void ipv6(void)
{
	NETAGG_WORKER_CFG(cfg, .jid = 1, .dtype = NETAGG_DTYPE_F32, .workers = 1, .no_join = 1,
			  .ntrees = 1);
	int err;

	cfg.trees[0].family = AF_INET6;
	inet_pton(AF_INET6, "2001:db8::1", &cfg.trees[0].addr6);
	ok(!netagg_worker_cfg_error(&cfg), "an IPv6 tree is accepted");
	cfg.ntrees = 2;
	cfg.trees[1].tid = 1;
	inet_pton(AF_INET, "10.0.0.1", &cfg.trees[1].addr);
	ok(says(netagg_worker_cfg_error(&cfg), "the trees mix IPv4 and IPv6") &&
	   says(netagg_worker_cfg_error(&cfg), "all of one family"),
	   "an IPv6 tree and an IPv4 tree (family 0) in one worker: refused, the message says why");
	cfg.ntrees = 1;
	inet_pton(AF_INET, "10.0.0.1", &cfg.src);
	ok(says(netagg_worker_cfg_error(&cfg), "src is not of the trees' family"),
	   "IPv6 trees, an IPv4 src: refused");
	cfg.src_family = AF_INET6;
	inet_pton(AF_INET6, "2001:db8::2", &cfg.src6);
	ok(!netagg_worker_cfg_error(&cfg), "... an IPv6 src accepted");
	inet_pton(AF_INET6, "fe80::1", &cfg.trees[0].addr6);
	ok(says(netagg_worker_cfg_error(&cfg), "link-local"),
	   "a link-local tree address (no interface to send it on): refused");
	ok(netagg_elems_per_packet_af(AF_INET, 1500, NETAGG_DTYPE_F32) == 362 &&
	   netagg_elems_per_packet_af(AF_INET6, 1500, NETAGG_DTYPE_F32) == 357 &&
	   netagg_elems_per_packet_af(AF_INET6, 1500, NETAGG_DTYPE_BF16) == 714 &&
	   netagg_elems_per_packet(1500, NETAGG_DTYPE_F32) == 362,
	   "elements per packet at MTU 1500: 362 f32 over IPv4, 357 over IPv6 (714 bf16)");
	/* Its socket: IPV6_TCLASS, _RECVTCLASS, _DONTFRAG, UDP_GRO, bound. */
	cfg.src_family = 0;
	memset(&cfg.src6, 0, sizeof(cfg.src6));
	inet_pton(AF_INET6, "::1", &cfg.trees[0].addr6);
	err = open_close(&cfg, NULL);
	if (err == -EAFNOSUPPORT)
		printf("ok %d an IPv6 worker opens on ::1 # SKIP no IPv6 here\n", ++n);
	else
		ok(!err, "an IPv6 worker opens on ::1, its socket's options taken");
}

int main(void)
{
	NETAGG_WORKER_CFG(cfg, .jid = 1, .dtype = NETAGG_DTYPE_F32, .workers = 4, .ntrees = 1);
	struct netagg_worker *w = (struct netagg_worker *)&cfg;
	char version[32];

	printf("KTAP version 1\n1..%d\n", PLAN);
	ok(netagg_worker_cfg_error(&cfg) == NULL, "a good configuration is accepted");
	cfg.workers = 0;
	ok(says(netagg_worker_cfg_error(&cfg), "workers must be 1 to 65535"),
	   "no workers: the message says so");
	ok(netagg_worker_open(&cfg, &w) == -EINVAL && !w, "... and open refuses it, -EINVAL");
	cfg.workers = 4;
	cfg.ntrees = 2;
	ok(says(netagg_worker_cfg_error(&cfg), "listed twice"), "a tree twice: said");
	cfg.ntrees = 1;
	cfg.window = NETAGG_WINDOW_MAX + 1;
	ok(says(netagg_worker_cfg_error(&cfg), "window must be at most 4096"),
	   "window too large: said");
	cfg.window = 0;
	cfg.rank = 4;
	ok(says(netagg_worker_cfg_error(&cfg), "rank must be below workers"),
	   "rank 4 of 4 workers: said (the join needs each rank's place)");
	cfg.no_join = 1;
	ok(netagg_worker_cfg_error(&cfg) == NULL, "... unless the worker does not join");
	cfg.no_join = 0;
	cfg.rank = 0;
	cfg.dtype = NETAGG_DTYPE_I32;
	cfg.mean = NETAGG_MEAN_AFTER;
	ok(says(netagg_worker_cfg_error(&cfg), "a mean needs a floating-point dtype"),
	   "a mean of int32: said");
	ok(says(netagg_strerror(-ETIMEDOUT), "no result arrived") &&
	   says(netagg_strerror(-EREMOTEIO), "did not sum") &&
	   says(netagg_strerror(-ENOTUNIQ), "not counted exactly once") &&
	   says(netagg_strerror(-EHOSTUNREACH), "did not answer") &&
	   says(netagg_strerror(-EPROTOTYPE), "dtype") &&
	   says(netagg_strerror(-ENOMEM), strerror(ENOMEM)),
	   "netagg_strerror: the library's meanings, strerror's for the rest");
	w = (struct netagg_worker *)&cfg;
	ok(netagg_worker_open(NULL, &w) == -EINVAL && !w &&
	   says(netagg_worker_cfg_error(NULL), "no configuration"),
	   "a NULL configuration: open refuses it, -EINVAL, and the message says so");
	ok(netagg_worker_open(&cfg, NULL) == -EINVAL, "nowhere to put the worker: -EINVAL");
	netagg_worker_close(NULL);
	ok(netagg_allreduce(NULL, NULL, 0, NULL) == -EINVAL &&
	   netagg_join(NULL, NULL) == -EINVAL &&
	   netagg_worker_set_mean(NULL, NETAGG_MEAN_NONE) == -EINVAL &&
	   netagg_worker_round(NULL) == 0 && netagg_worker_session(NULL) == 0,
	   "a NULL worker: -EINVAL, or 0, from every call (and close does nothing)");
	snprintf(version, sizeof(version), "%d.%d.%d", LIBNETAGG_VERSION_MAJOR,
		 LIBNETAGG_VERSION_MINOR, LIBNETAGG_VERSION_PATCH);
	ok(!strcmp(netagg_version(), version),
	   "netagg_version(): the library's version, the header's LIBNETAGG_VERSION_*");
	ok(netagg_worker_cfg_size() == sizeof(struct netagg_worker_cfg) &&
	   netagg_allreduce_info_size() == sizeof(struct netagg_allreduce_info),
	   "structure sizes agree with the installed header");
	sizes();
	ipv6();
	return failed || n != PLAN ? 1 : 0;
}

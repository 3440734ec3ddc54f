// SPDX-License-Identifier: GPL-2.0
/*
 * libcheck-old: a program built as one built against an earlier header of
 * soname 4 would be. It does not include libnetagg.h: it declares, frozen
 * here, the structures of the first soname-4 layout and the calls it
 * makes, and passes its own sizeof in sz. tests/host_library.sh runs it
 * against the installed library, whose structures grew since (as "newer"),
 * and against one built with one more field appended to each structure
 * ("newer": the library a later version would be). "same" says the
 * library's layout must be this one, field for field. In
 * both it must work unchanged: its configuration read field for field,
 * what it did not set taken as 0, its info written within its sz only.
 * It sends nothing: a worker on loopback, no join, an allreduce of
 * nothing. One KTAP line per check.
 *
 *	libcheck-old same|newer
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ktap.h"

/* The first soname-4 layout (libnetagg.h then), as programs have it. */
struct netagg_tree_dst {
	uint16_t tid;
	uint16_t family;
	union {
		struct in_addr addr;
		struct in6_addr addr6;
	};
};

struct netagg_worker_cfg {
	size_t sz;
	uint32_t jid;
	uint8_t dtype;
	unsigned int workers;
	unsigned int quorum;
	uint16_t round;
	uint32_t session;
	unsigned int rank;
	int no_join;
	unsigned int mtu;
	unsigned int window;
	unsigned int timeout_ms;
	unsigned int node_timeout_ms;
	unsigned int rto_min_ms;
	uint16_t src_family;
	union {
		struct in_addr src;
		struct in6_addr src6;
	};
	uint16_t src_port;
	int mean;
	int plain;
	unsigned int segments;
	int no_ecn;
	unsigned int ntrees;
	struct netagg_tree_dst trees[64];
};

struct netagg_allreduce_info {
	size_t sz;
	uint64_t packets_sent, super_sent, sends, packets_received, packets_ignored;
	uint64_t retransmits, probes;
	unsigned int min_contributors, max_contributors;
	uint64_t regrouped, refused, late, ce;
	unsigned int window_min;
	uint64_t averaged;
	uint8_t job_dtype;
	uint16_t silent_tid;
	uint32_t session;
	unsigned int joins, join_missing, join_missing_rank;
};

struct netagg_worker;
int netagg_worker_open(const struct netagg_worker_cfg *cfg, struct netagg_worker **w);
const char *netagg_worker_cfg_error(const struct netagg_worker_cfg *cfg);
void netagg_worker_close(struct netagg_worker *w);
uint16_t netagg_worker_round(const struct netagg_worker *w);
uint32_t netagg_worker_session(const struct netagg_worker *w);
int netagg_allreduce(struct netagg_worker *w, void *buf, size_t count,
		     struct netagg_allreduce_info *info);
size_t netagg_worker_cfg_size(void);
size_t netagg_allreduce_info_size(void);

int main(int argc, char **argv)
{
	int newer = argc > 1 && !strcmp(argv[1], "newer");
	struct netagg_worker_cfg cfg = {
		.sz = sizeof(cfg), .jid = 7, .dtype = 1 /* f32 */, .workers = 3, .rank = 2,
		.session = 0x5e55, .no_join = 1, .round = 40, .ntrees = 1,
		.trees[0] = { .tid = 5, .family = AF_INET },
	};
	/* The info, and what lies beyond it: the library must not write there. */
	struct {
		struct netagg_allreduce_info info;
		unsigned char beyond[32];
	} out;
	struct netagg_worker *w = NULL;
	int err, untouched = 1, read;

	printf("KTAP version 1\n1..5\n");
	ok(newer ? netagg_worker_cfg_size() > sizeof(cfg) &&
		   netagg_allreduce_info_size() > sizeof(out.info) :
		   netagg_worker_cfg_size() == sizeof(cfg) &&
		   netagg_allreduce_info_size() == sizeof(out.info),
	   newer ? "the library's structures are larger than this program's (a newer library)" :
		   "the library's structures are this program's size (the layout unchanged)");
	inet_pton(AF_INET, "127.0.0.1", &cfg.trees[0].addr);
	inet_pton(AF_INET, "127.0.0.1", &cfg.src);
	ok(netagg_worker_cfg_error(&cfg) == NULL, "its configuration is accepted");
	/* Fields read where this program put them: the library judges them. */
	cfg.window = 4097;
	read = says(netagg_worker_cfg_error(&cfg), "window must be at most");
	cfg.window = 0;
	cfg.no_join = 0;
	cfg.rank = 3;
	read = read && says(netagg_worker_cfg_error(&cfg), "rank must be below workers");
	cfg.rank = 2;
	cfg.no_join = 1;
	ok(read, "its fields are read where it put them (window, then rank, refused)");

	memset(&out, 0xa5, sizeof(out));
	out.info.sz = sizeof(out.info);
	err = netagg_worker_open(&cfg, &w);
	if (!err)
		err = netagg_allreduce(w, NULL, 0, &out.info);
	ok(!err && netagg_worker_round(w) == 41 && netagg_worker_session(w) == 0x5e55,
	   "a worker opens (bound to 127.0.0.1), allreduces nothing in round 40 of its session");
	netagg_worker_close(w);
	for (size_t i = 0; i < sizeof(out.beyond); i++)
		untouched &= out.beyond[i] == 0xa5;
	ok(!err && untouched && out.info.sz == sizeof(out.info) && out.info.window_min == 64 &&
	   out.info.session == 0x5e55 && out.info.packets_sent == 0,
	   "its info is filled in, and nothing beyond its sz written");
	return failed ? 1 : 0;
}

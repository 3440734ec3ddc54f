// SPDX-License-Identifier: GPL-2.0
/*
 * netagg-allreduce - run allreduces through netagg as one worker, verify
 * the result and report time and throughput.
 *
 * Rank r fills element i with ((i % 1000) + 1) * (r + 1), so the sum over
 * ranks 0..N-1 is ((i % 1000) + 1) * N(N+1)/2: an integer below 2^24 for
 * the worker counts allowed, hence exact in float32 whatever the order of
 * summation, and the result can be checked for equality.
 *
 * float16 and bfloat16 keep 11 and 8 significant bits: there the base
 * (i % 1000) + 1 is (i % 4 + 1) << (i / 4 % 4) instead, whose sums over
 * any ranks stay exact for the worker counts allowed (f16 up to 31
 * workers, bf16 up to 10), sums at every tree level included.
 *
 * With --pattern bit, rank r fills the base << r instead, so each chunk of
 * the result says exactly which ranks it sums: the base times the bitmask
 * of those ranks. Then every chunk must sum this rank's
 * own contribution once (but the chunks whose results came marked late:
 * exactly those lack it), and as many as its result said it summed; with
 * the default quorum, every chunk the same workers ranks. That is what a
 * test that changes the tree's children under the workers checks.
 *
 * Exit status: 0 verified, 1 the allreduce failed, 2 bad usage, 3 the
 * allreduce succeeded but the buffer is wrong (which must never happen).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allreduce.h"
#include "exitcode.h"
#include "libnetagg.h"
#include "mark.h"
#include "parse.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* The element types and their limits (struct dtype_info says which). */
static const struct dtype_info dtypes[] = {
	{ "f32", NETAGG_DTYPE_F32, 182, 14 },
	{ "i32", NETAGG_DTYPE_I32, 2071, 21 },
	{ "f16", NETAGG_DTYPE_F16, 31, 9 },
	{ "bf16", NETAGG_DTYPE_BF16, 10, 6 },
};

static void usage(FILE *f)
{
	fputs("Usage: " PROG " --job JID --tree TID=ADDR [--tree TID=ADDR ...]\n"
	      "                        --rank R --workers N [OPTION]...\n"
	      "  --job JID           job id\n"
	      "  --tree TID=ADDR     a tree of the job and the node this worker sends\n"
	      "                      it to, IPv4 or IPv6 ([ADDR] too), every tree of\n"
	      "                      one family (repeat for each tree)\n"
	      "  --rank R            this worker's rank, 0 .. N-1\n"
	      "  --workers N         workers in the job\n"
	      "  --count ELEMS       elements (default 1M; K, M, G suffixes: 1024^n)\n"
	      "  --dtype TYPE        element type, f32, i32, f16 or bf16 (default f32;\n"
	      "                      the job's)\n"
	      "  --op sum|avg        the job's operation, for verifying (default sum)\n"
	      "  --mtu N             the job's MTU (default 1500)\n"
	      "  --window N          VIDs in flight per tree, at most the job's (default 64)\n"
	      "  --quorum N          accept results of N to --workers contributions, and\n"
	      "                      results of rounds whose workers changed (default:\n"
	      "                      exactly --workers); needs --pattern bit\n"
	      "  --pattern rank|bit  rank r contributes (i % 1000 + 1) times r + 1 (rank,\n"
	      "                      the default) or times 2^r (bit: each chunk of the\n"
	      "                      result shows which ranks it sums; sum only); f16\n"
	      "                      and bf16: (i % 4 + 1) << (i / 4 % 4) times them\n"
	      "  --seed S            fill element i as element i + S, 0-1000000 (default 0):\n"
	      "                      other data, the same checks\n"
	      "  --timeout-ms N      fail after N ms without a result (default 2000)\n"
	      "  --rto-min-ms N      least retransmission timeout, 1-1000 (default 5)\n"
	      "  --src ADDR          send from this address (of the trees' family)\n"
	      "  --port P            send from this UDP port, 1-65535 (default: any): the\n"
	      "                      one a node's child ADDR:PORT names\n"
	      "  --node-port P       the nodes' UDP port, 1-65535 (default 7177): the one\n"
	      "                      \"netagg set port\" gave them\n"
	      "  --dscp N            mark the packets DSCP N, 1-63 (default 56): the one\n"
	      "                      \"netagg set dscp\" gave the nodes\n"
	      "  --key FILE          the job's key, as \"netagg job add ... key FILE\" gave\n"
	      "                      it to the nodes: packets tagged, results checked\n"
	      "  --node-timeout-ms N fail when a tree's node answers nothing, probes\n"
	      "                      included, for N ms (default 10000)\n"
	      "  --plain             plain packets only, no super-packets (UDP GSO/GRO)\n"
	      "  --no-ecn            contributions not ECN-capable: the window reacts to\n"
	      "                      losses only (by default CE marks on results cut it)\n"
	      "  --dctcp             CE marks cut the window by the fraction of results\n"
	      "                      marked (DCTCP), not by half\n"
	      "  --segments N        at most N chunks a super-packet, 1-64 (default: as\n"
	      "                      many as fit in 64 KiB, 44 at MTU 1500, 45 over IPv6)\n"
	      "  --iterations K      run K allreduces (default 1)\n"
	      "  --warmup            one more allreduce before them, checked but not\n"
	      "                      timed or counted (\"iteration 0\"): as every worker\n"
	      "                      waits in it for all, the timed ones start together\n"
	      "  --barrier           before each allreduce, one of a single element that\n"
	      "                      every worker waits in (a round of its own, not\n"
	      "                      timed): each timed allreduce starts when all have\n"
	      "                      checked the last, as make bench's peers' do\n"
	      "  --round R           round of the first allreduce, 0-65535 (default 0), then\n"
	      "                      R+1, ... (a barrier takes one too): the same on every\n"
	      "                      worker\n"
	      "  --session S         where the workers meet to join, 0-4294967295: a number\n"
	      "                      chosen for the run and given to every worker (default\n"
	      "                      0, the shared one); with --no-join, the run's session\n"
	      "  --no-join           take --session as the run's without joining: the\n"
	      "                      caller vouches that no earlier run used it\n"
	      "  -j, --json          report as one JSON object\n"
	      "  --each              with -j, also a JSON object after each timed\n"
	      "                      allreduce, as it ends: its iteration, when (s since\n"
	      "                      the first began), its seconds, and its window and\n"
	      "                      signals (window_min, window_end, ce, ce_cuts,\n"
	      "                      loss_cuts, undone_cuts, retransmits) and timeout\n"
	      "                      (rto_ms)\n"
	      "  -q, --quiet         no report, only the exit status and errors\n"
	      "  -h, --help          this text\n"
	      "  -V, --version       print the version (netagg's)\n"
	      "Exit status: 0 verified, 1 failed, 2 usage error, 3 succeeded with a wrong\n"
	      "result.\n", f);
}

void netagg_usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(NETAGG_EXIT_USAGE);
}


/* An IPv4 or IPv6 address ("[ADDR]" too) at @addr, of the *@family set. */
/* An IPv4 or IPv6 address into a family field and its union. */
static void parse_inet(const char *what, const char *s, uint16_t *family, void *addr)
{
	struct netagg_inet a = netagg_parse_inet(what, s);

	*family = a.family;
	if (a.family == AF_INET6)
		memcpy(addr, &a.v6, sizeof(a.v6));
	else
		memcpy(addr, &a.v4, sizeof(a.v4));
}

static void parse_tree(struct params *p, char *arg)
{
	char *eq = strchr(arg, '=');
	struct netagg_tree_dst *d;

	if (!eq)
		netagg_usage_error("--tree: \"%s\" is not TID=ADDR", arg);
	if (p->cfg.ntrees == NETAGG_TREES_MAX)
		netagg_usage_error("--tree: more than %d trees", NETAGG_TREES_MAX);
	*eq = '\0';
	d = &p->cfg.trees[p->cfg.ntrees];
	d->tid = netagg_parse_num("--tree TID", arg, 0, NETAGG_TREES_MAX - 1);
	parse_inet("--tree address", eq + 1, &d->family, &d->addr6);
	for (unsigned int t = 0; t < p->cfg.ntrees; t++)
		if (p->cfg.trees[t].tid == d->tid)
			netagg_usage_error("--tree: tree %u given twice", d->tid);
	p->cfg.ntrees++;
}

/* In parse_args(): the option's value as a number in [lo, hi]. */
#define NUM(lo, hi)	netagg_parse_num(name, optarg, lo, hi)

/* --key FILE: the job's key (netagg_key_read()). */
static void key_file(struct params *p, const char *path)
{
	int err = netagg_key_read(path, p->cfg.key);

	if (err == -EBADMSG)
		netagg_usage_error("--key %s: not %d bytes, nor %d hex digits", path,
				   NETAGG_KEY_LEN, 2 * NETAGG_KEY_LEN);
	if (err) {
		fprintf(stderr, PROG ": --key %s: %s\n", path, strerror(-err));
		exit(NETAGG_EXIT_FAIL);
	}
	p->cfg.keyed = 1;
}

static void parse_args(int argc, char **argv, struct params *p)
{
	enum { O_JOB = 256, O_TREE, O_RANK, O_WORKERS, O_COUNT, O_DTYPE, O_OP,
	       O_MTU, O_WINDOW, O_TIMEOUT, O_RTO_MIN, O_SRC, O_ITERATIONS, O_ROUND,
	       O_QUORUM, O_PATTERN, O_PLAIN, O_NO_ECN, O_DCTCP, O_SEGMENTS, O_WARMUP,
	       O_SESSION, O_NO_JOIN, O_SEED, O_PORT, O_NODE_PORT, O_DSCP, O_KEY, O_NODE_TIMEOUT, O_BARRIER, O_EACH };
	static const struct option opts[] = {
		{ "job", required_argument, NULL, O_JOB },
		{ "tree", required_argument, NULL, O_TREE },
		{ "rank", required_argument, NULL, O_RANK },
		{ "workers", required_argument, NULL, O_WORKERS },
		{ "count", required_argument, NULL, O_COUNT },
		{ "dtype", required_argument, NULL, O_DTYPE },
		{ "op", required_argument, NULL, O_OP },
		{ "mtu", required_argument, NULL, O_MTU },
		{ "window", required_argument, NULL, O_WINDOW },
		{ "timeout-ms", required_argument, NULL, O_TIMEOUT },
		{ "rto-min-ms", required_argument, NULL, O_RTO_MIN },
		{ "src", required_argument, NULL, O_SRC },
		{ "port", required_argument, NULL, O_PORT },
		{ "node-port", required_argument, NULL, O_NODE_PORT },
		{ "dscp", required_argument, NULL, O_DSCP },
		{ "key", required_argument, NULL, O_KEY },
		{ "node-timeout-ms", required_argument, NULL, O_NODE_TIMEOUT },
		{ "iterations", required_argument, NULL, O_ITERATIONS },
		{ "warmup", no_argument, NULL, O_WARMUP },
		{ "barrier", no_argument, NULL, O_BARRIER },
		{ "each", no_argument, NULL, O_EACH },
		{ "round", required_argument, NULL, O_ROUND },
		{ "session", required_argument, NULL, O_SESSION },
		{ "no-join", no_argument, NULL, O_NO_JOIN },
		{ "seed", required_argument, NULL, O_SEED },
		{ "quorum", required_argument, NULL, O_QUORUM },
		{ "pattern", required_argument, NULL, O_PATTERN },
		{ "plain", no_argument, NULL, O_PLAIN },
		{ "no-ecn", no_argument, NULL, O_NO_ECN },
		{ "dctcp", no_argument, NULL, O_DCTCP },
		{ "segments", required_argument, NULL, O_SEGMENTS },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const patterns[] = { "rank", "bit" };
	static const char *const ops[] = { "sum", "avg" };
	unsigned int workers_max, dtype;
	char name[32];
	int opt;

	while ((opt = netagg_getopt(argc, argv, ":jqhV", opts, name, sizeof(name))) != -1) {
		switch (opt) {
		case O_JOB:
			p->cfg.jid = NUM(0, UINT32_MAX);
			p->have_job = true;
			break;
		case O_TREE: parse_tree(p, optarg); break;
		case O_RANK:
			p->rank = NUM(0, UINT16_MAX);
			p->have_rank = true;
			break;
		case O_WORKERS:
			/* i32 allows the most; the type's own limit is checked after. */
			p->workers = NUM(1, dtypes[1].workers_max);
			break;
		case O_COUNT:
			/* a 32-bit size_t still holds the buffer's bytes */
			p->count = netagg_parse_size(name, optarg, 1, SIZE_MAX / 4);
			break;
		case O_MTU: p->cfg.mtu = NUM(NETAGG_MTU_MIN, NETAGG_MTU_MAX); break;
		case O_WINDOW: p->cfg.window = NUM(1, NETAGG_WINDOW_MAX); break;
		case O_RTO_MIN: p->cfg.rto_min_ms = NUM(1, 1000); break;
		case O_TIMEOUT: p->cfg.timeout_ms = NUM(1, INT32_MAX); break;
		case O_SRC: parse_inet(name, optarg, &p->cfg.src_family, &p->cfg.src6); break;
		case O_PORT: p->cfg.src_port = NUM(1, UINT16_MAX); break;
		case O_NODE_PORT: p->cfg.port = NUM(1, UINT16_MAX); break;
		case O_DSCP: p->cfg.dscp = NUM(1, 63); break;
		case O_KEY: key_file(p, optarg); break;
		case O_NODE_TIMEOUT: p->cfg.node_timeout_ms = NUM(1, INT32_MAX); break;
		case O_PLAIN: p->cfg.plain = 1; break;
		case O_NO_ECN: p->cfg.no_ecn = 1; break;
		case O_DCTCP: p->cfg.dctcp = 1; break;
		case O_WARMUP: p->warmup = true; break;
		case O_BARRIER: p->barrier = true; break;
		case O_EACH: p->each = true; break;
		case O_SEGMENTS: p->cfg.segments = NUM(1, 64); break;
		case O_ITERATIONS: p->iterations = NUM(1, UINT32_MAX); break;
		case O_ROUND: p->cfg.round = NUM(0, UINT16_MAX); break;
		case O_SESSION: p->cfg.session = NUM(0, UINT32_MAX); break;
		case O_NO_JOIN: p->cfg.no_join = 1; break;
		case O_SEED: p->seed = NUM(0, 1000000); break;
		case O_QUORUM: p->cfg.quorum = NUM(1, UINT16_MAX); break;
		case O_PATTERN:
			p->bit = netagg_parse_name(name, optarg, patterns,
						   ARRAY_SIZE(patterns), false);
			break;
		case O_DTYPE:
			dtype = netagg_parse_name(name, optarg, netagg_dtype_names,
						  netagg_dtype_count, false);
			p->type = NULL;
			for (size_t i = 0; i < ARRAY_SIZE(dtypes); i++)
				if (dtypes[i].dtype == dtype)
					p->type = &dtypes[i];
			if (!p->type)	/* a type the library has, this program not */
				netagg_usage_error("%s: %s is not supported", name, optarg);
			p->cfg.dtype = p->type->dtype;
			break;
		case O_OP:
			p->avg = netagg_parse_name(name, optarg, ops, ARRAY_SIZE(ops), false);
			break;
		case 'j': p->json = true; break;
		case 'q': p->quiet = true; break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V': puts(PROG " " NETAGG_VERSION); exit(0);
		default:
			netagg_bad_option(argv, opt);
		}
	}
	netagg_no_operands(argc, argv);
	if (!p->have_job)
		netagg_usage_error("--job is required");
	if (!p->cfg.ntrees)
		netagg_usage_error("--tree is required");
	if (!p->workers)
		netagg_usage_error("--workers is required");
	if (!p->have_rank)
		netagg_usage_error("--rank is required");
	p->cfg.workers = p->workers;
	p->cfg.rank = p->rank;
	if (!p->cfg.no_join && p->rank >= p->workers)
		netagg_usage_error("--rank %u is not below --workers %u: joining needs each rank's place (or --no-join)",
				   p->rank, p->workers);
	if (p->cfg.quorum > p->workers)
		netagg_usage_error("--quorum %u is above --workers %u", p->cfg.quorum, p->workers);
	if (p->bit) {
		/* Ranks are bits of a mask: any below the limit, not only below N. */
		workers_max = p->type->bit_ranks;
		if (p->avg)
			netagg_usage_error("--pattern bit needs --op sum");
		if (p->rank >= workers_max)
			netagg_usage_error("--rank: below %u for --pattern bit with %s", workers_max,
				    p->type->name);
		return;
	}
	if (p->cfg.quorum && p->cfg.quorum != p->workers)
		netagg_usage_error("--quorum below --workers needs --pattern bit (what the sum should be is unknown)");
	if (p->rank >= p->workers)
		netagg_usage_error("--rank %u is not below --workers %u", p->rank, p->workers);
	workers_max = p->type->workers_max;
	if (p->workers > workers_max)
		netagg_usage_error("--workers: at most %u for %s (the expected sums must be exact)",
			    workers_max, p->type->name);
}
#undef NUM

/* The buffers filled, the worker opened, the run joined; an exit code. */
static int start(struct run *r)
{
	struct params *p = &r->p;
	const char *bad = netagg_worker_cfg_error(&p->cfg);
	int err;

	/* What no option says alone: the trees and --src of one family. */
	if (bad)
		netagg_usage_error("%s", bad);
	r->esize = netagg_dtype_size(p->cfg.dtype);
	r->bytes = p->count * r->esize;
	r->buf = malloc(3 * r->bytes);
	r->times = calloc(p->iterations, sizeof(*r->times));
	if (!r->buf || !r->times) {
		fprintf(stderr, PROG ": buffer of %zu elements (%s)\n", p->count, strerror(ENOMEM));
		return NETAGG_EXIT_FAIL;
	}
	r->mine = (char *)r->buf + r->bytes;
	r->want = (char *)r->buf + 2 * r->bytes;
	pattern_fill(p, r->mine);
	if (!p->bit)	/* with --pattern bit, what the sum is depends on who took part */
		pattern_expect(p, r->want);
	err = netagg_worker_open(&p->cfg, &r->w);
	if (err) {
		fprintf(stderr, PROG ": opening the worker socket (%s)\n", strerror(-err));
		return NETAGG_EXIT_FAIL;
	}
	/* Not timed: the run's start, once, where every worker waits for all. */
	r->join_s = now_s();
	err = netagg_join(r->w, &r->joined);
	r->join_s = now_s() - r->join_s;
	if (err) {
		fprintf(stderr, PROG ": rank %u: joining the run failed after %u tries (%s)\n",
			p->rank, r->joined.joins, strerror(-err));
		report_why(p, err, &r->joined);
		return NETAGG_EXIT_FAIL;
	}
	return NETAGG_EXIT_OK;
}

/* A timed allreduce's figures, added to the run's. */
static void add_figures(struct run *r, const struct netagg_allreduce_info *info)
{
	struct netagg_allreduce_info *total = &r->total;

	total->packets_sent += info->packets_sent;
	total->packets_received += info->packets_received;
	total->packets_ignored += info->packets_ignored;
	total->retransmits += info->retransmits;
	total->probes += info->probes;
	total->super_sent += info->super_sent;
	total->sends += info->sends;
	total->late += info->late;
	total->regrouped += info->regrouped;
	total->ce += info->ce;
	total->ce_cuts += info->ce_cuts;
	total->loss_cuts += info->loss_cuts;
	total->undone_cuts += info->undone_cuts;
	total->bad_tags += info->bad_tags;
	if (info->window_min < r->wmin)
		r->wmin = info->window_min;
	r->wend = info->window_end;
	total->rto_us = info->rto_us;	/* the last one's */
}

/*
 * Allreduce @k of the run (the warm-up, if any, is 0), and the check of
 * its result, which clears r->ok if it is wrong; an exit code.
 */
static int allreduce_one(struct run *r, unsigned long k)
{
	const struct params *p = &r->p;
	/* The warm-up is iteration 0 (it + 1) in messages. */
	unsigned long it = k - p->warmup;
	NETAGG_ALLREDUCE_INFO(info);
	double t0;
	int err;

	memcpy(r->buf, r->mine, r->bytes);
	if (p->barrier) {
		/* Zero sums to zero in every dtype, mean and quorum. */
		uint32_t zero = 0;

		err = netagg_allreduce(r->w, &zero, 1, &info);
		if (err) {
			fprintf(stderr, PROG ": rank %u: the barrier before allreduce %lu of %lu"
				" failed (%s)\n", p->rank, it + 1, p->iterations, strerror(-err));
			report_why(p, err, &info);
			return NETAGG_EXIT_FAIL;
		}
	}
	if (k >= p->warmup)
		netagg_mark_begin();
	t0 = now_s();
	if (k == p->warmup)
		r->begun = t0;
	err = netagg_allreduce(r->w, r->buf, p->count, &info);
	if (k >= p->warmup) {	/* the figures are the timed ones' */
		netagg_mark_end();
		r->times[it] = now_s() - t0;
		r->seconds += r->times[it];
		add_figures(r, &info);
	}
	if (err) {
		report_failed(r, it, err, &info);
		return NETAGG_EXIT_FAIL;
	}
	if (info.min_contributors < r->cmin)
		r->cmin = info.min_contributors;
	if (info.max_contributors > r->cmax)
		r->cmax = info.max_contributors;
	/* The library said the sum is whole: check that it is. */
	if (p->bit) {
		if (pattern_verify_bits(p, r->buf, it, &info, &r->ranks_all, &r->ranks_any))
			r->ok = false;
		if (k >= p->warmup && p->each && p->json && !p->quiet)
			report_each(r, it, &info);
		return NETAGG_EXIT_OK;
	}
	if (memcmp(r->buf, r->want, r->bytes) && pattern_verify(p, r->buf, it))
		r->ok = false;
	if (r->cmin != p->workers || r->cmax != p->workers) {
		fprintf(stderr, PROG ": rank %u, iteration %lu: results summed %u to %u"
			" contributions, expected %u\n", p->rank, it + 1,
			info.min_contributors, info.max_contributors, p->workers);
		r->ok = false;
	}
	if (k >= p->warmup && p->each && p->json && !p->quiet)
		report_each(r, it, &info);
	return NETAGG_EXIT_OK;
}

int main(int argc, char **argv)
{
	struct run r = {
		.p.cfg.sz = sizeof(struct netagg_worker_cfg),
		.p.cfg.dtype = NETAGG_DTYPE_F32,
		.p.type = &dtypes[0],
		.p.count = 1 << 20,
		.p.iterations = 1,
		.cmin = UINT32_MAX,
		.wmin = UINT32_MAX,
		.ranks_all = UINT32_MAX,
		.ok = true,
		.joined.sz = sizeof(struct netagg_allreduce_info),
	};
	const struct params *p = &r.p;
	int rc;
	double mbps;

	parse_args(argc, argv, &r.p);
	rc = start(&r);
	for (unsigned long k = 0; k < p->iterations + p->warmup && r.ok && !rc; k++)
		rc = allreduce_one(&r, k);
	netagg_worker_close(r.w);
	free(r.buf);
	if (!rc) {
		mbps = r.seconds > 0 ?
		       (double)p->count * r.esize * p->iterations / r.seconds / 1e6 : 0;
		if (p->json && !p->quiet)
			report_json(&r, mbps);
		else if (!p->quiet)
			report_text(&r, mbps);
		rc = r.ok ? NETAGG_EXIT_OK : NETAGG_EXIT_WRONG;
	}
	free(r.times);
	return rc;
}

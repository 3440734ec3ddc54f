// SPDX-License-Identifier: GPL-2.0
/*
 * What netagg-allreduce says: the run's figures, as one JSON object or as
 * text, a JSON line after each allreduce (--each), and why a call failed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "allreduce.h"
#include "output.h"
#include "parse.h"

/* "0,2,3", or "-" for none. */
static void print_ranks(uint32_t mask)
{
	bool first = true;

	for (unsigned int r = 0; r < 32; r++) {
		if (!(mask & (1U << r)))
			continue;
		printf("%s%u", first ? "" : ",", r);
		first = false;
	}
	if (first)
		putchar('-');
}

/* The ranks of @mask as the JSON array @key. */
static void json_ranks(const char *key, uint32_t mask)
{
	netagg_out_open(key, '[');
	for (unsigned int r = 0; r < 32; r++)
		if (mask & (1U << r))
			netagg_out_u64(NULL, NULL, r);
	netagg_out_close(']');
}

/*
 * The congestion window (the least a cut left, and at the end), the
 * signals that cut it and the retransmission timeout, as JSON fields.
 */
static void json_signals(unsigned int wmin, unsigned int wend,
			 const struct netagg_allreduce_info *info)
{
	netagg_out_u64("window_min", NULL, wmin);
	netagg_out_u64("window_end", NULL, wend);
	netagg_out_u64("ce", NULL, info->ce);
	netagg_out_u64("ce_cuts", NULL, info->ce_cuts);
	netagg_out_u64("loss_cuts", NULL, info->loss_cuts);
	netagg_out_u64("undone_cuts", NULL, info->undone_cuts);
	netagg_out_double("rto_ms", NULL, info->rto_us / 1e3, 3);
}

/*
 * Why a call failed: the system's and the library's words for the error,
 * and what its info adds (a silent tree, the job's dtype, a join's cause).
 */
void report_why(const struct params *p, int err, const struct netagg_allreduce_info *info)
{
	const char *mine = netagg_strerror(err), *sys = strerror(-err);

	if (strcmp(mine, sys))
		fprintf(stderr, PROG ": rank %u: %s: %s\n", p->rank, sys, mine);
	if (err == -EHOSTUNREACH)
		fprintf(stderr, PROG ": rank %u: the node of tree %u did not answer\n", p->rank,
			info->silent_tid);
	if (err == -EPROTOTYPE)
		fprintf(stderr, PROG ": rank %u: the job's dtype is %s, this worker's %s\n", p->rank,
			info->job_dtype < netagg_dtype_count && netagg_dtype_names[info->job_dtype] ?
			netagg_dtype_names[info->job_dtype] : "unknown", p->type->name);
	if (err == -ETIMEDOUT && info->joins)	/* two workers behind one child, too */
		fprintf(stderr, PROG ": rank %u: each worker a child of its own? Two on one host"
			" need children by address and port\n", p->rank);
	if (err == -ENOTUNIQ)
		fprintf(stderr, PROG ": rank %u: %u ranks were not counted exactly once in every"
			" tree, rank %u the lowest\n", p->rank, info->join_missing,
			info->join_missing_rank);
}

/* Why allreduce @it failed with @err, said on stderr. */
void report_failed(const struct run *r, unsigned long it, int err,
		   const struct netagg_allreduce_info *info)
{
	const struct params *p = &r->p;

	fprintf(stderr, PROG ": rank %u: allreduce %lu of %lu (round %u) failed, %"
		PRIu64 " of %" PRIu64 " packets sent answered, %" PRIu64
		" retransmitted, %" PRIu64 " ignored (%s)\n",
		p->rank, it + 1, p->iterations,
		(uint16_t)(netagg_worker_round(r->w) - 1), info->packets_received,
		info->packets_sent, info->retransmits, info->packets_ignored,
		strerror(-err));
	report_why(p, err, info);
	if (info->refused) {
		char want[32];

		if (p->cfg.quorum && p->cfg.quorum < p->workers)
			snprintf(want, sizeof(want), "%u to %u", p->cfg.quorum, p->workers);
		else
			snprintf(want, sizeof(want), "%u", p->workers);
		fprintf(stderr, PROG ": rank %u: %" PRIu64 " results refused: they"
			" summed %u to %u contributions where %s were expected,"
			" %" PRIu64 " of a round whose workers changed\n",
			p->rank, info->refused, info->min_contributors,
			info->max_contributors, want, info->regrouped);
	}
}

/*
 * Allreduce @it's line (--each), flushed at once: a test or a benchmark
 * follows the run as it goes, and its rate over time.
 */
void report_each(const struct run *r, unsigned long it,
			const struct netagg_allreduce_info *info)
{
	netagg_out_init(stdout, true, false);
	netagg_out_open(NULL, '{');
	netagg_out_u64("rank", NULL, r->p.rank);
	netagg_out_u64("iteration", NULL, it + 1);
	netagg_out_double("at", NULL, now_s() - r->begun, 6);
	netagg_out_double("seconds", NULL, r->times[it], 6);
	netagg_out_bool("ok", NULL, r->ok);
	json_signals(info->window_min, info->window_end, info);
	netagg_out_u64("retransmits", NULL, info->retransmits);
	netagg_out_close('}');
	fflush(stdout);
}

/* The run's figures as one JSON object. */
void report_json(const struct run *r, double mbps)
{
	const struct params *p = &r->p;
	const struct netagg_allreduce_info *total = &r->total;

	netagg_out_init(stdout, true, false);
	netagg_out_open(NULL, '{');
	netagg_out_u64("rank", NULL, p->rank);
	netagg_out_u64("elements", NULL, p->count);
	netagg_out_str("dtype", NULL, p->type->name);
	netagg_out_u64("bytes", NULL, p->count * r->esize);
	netagg_out_u64("iterations", NULL, p->iterations);
	netagg_out_u64("trees", NULL, p->cfg.ntrees);
	netagg_out_double("seconds", NULL, r->seconds, 6);
	netagg_out_double("mb_per_s", NULL, mbps, 3);
	netagg_out_u64("packets_sent", NULL, total->packets_sent);
	netagg_out_u64("packets_received", NULL, total->packets_received);
	netagg_out_u64("packets_ignored", NULL, total->packets_ignored);
	netagg_out_u64("retransmits", NULL, total->retransmits);
	netagg_out_u64("probes", NULL, total->probes);
	netagg_out_u64("bad_tags", NULL, total->bad_tags);
	netagg_out_u64("super_sent", NULL, total->super_sent);
	netagg_out_u64("sends", NULL, total->sends);
	netagg_out_u64("first_round", NULL, p->cfg.round);
	netagg_out_u64("session", NULL, r->joined.session);
	netagg_out_u64("joins", NULL, r->joined.joins);
	netagg_out_double("join_seconds", NULL, r->join_s, 6);
	/* The join waits for every worker: a late one shows here. */
	netagg_out_u64("join_probes", NULL, r->joined.probes);
	netagg_out_u64("join_retransmits", NULL, r->joined.retransmits);
	/* From the round trips of the join's probes, if it waited. */
	netagg_out_double("join_rto_ms", NULL, r->joined.rto_us / 1e3, 3);
	netagg_out_u64("contributors", NULL, r->cmin);
	netagg_out_u64("contributors_max", NULL, r->cmax);
	netagg_out_u64("late", NULL, total->late);
	netagg_out_u64("regrouped", NULL, total->regrouped);
	/* The timeout (rto_ms) is the one the last allreduce left. */
	json_signals(r->wmin, r->wend, total);
	netagg_out_bool("ok", NULL, r->ok);
	netagg_out_open("times", '[');
	for (unsigned long it = 0; it < p->iterations; it++)
		netagg_out_double(NULL, NULL, r->times[it], 6);
	netagg_out_close(']');
	/* Who contributed: known from the bit pattern only. */
	if (p->bit && r->ranks_any) {
		json_ranks("ranks", r->ranks_all);
		json_ranks("ranks_some", r->ranks_any & ~r->ranks_all);
	}
	netagg_out_close('}');
}

/* The run's figures as a line of text (two with --pattern bit). */
void report_text(const struct run *r, double mbps)
{
	const struct params *p = &r->p;
	const struct netagg_allreduce_info *total = &r->total;
	char contrib[32];

	if (r->cmin == r->cmax)
		snprintf(contrib, sizeof(contrib), "%u", r->cmin);
	else
		snprintf(contrib, sizeof(contrib), "%u-%u", r->cmin, r->cmax);
	printf("rank %u: allreduce of %zu %s (%zu bytes) over %u trees in %.3f s:"
	       " %.1f MB/s, %" PRIu64 " packets sent (%" PRIu64 " retransmitted,"
	       " %" PRIu64 " probes), %" PRIu64 " received (%" PRIu64 " CE),"
	       " contributors %s: %s\n",
	       p->rank, p->count, p->type->name, p->count * r->esize, p->cfg.ntrees,
	       r->seconds, mbps, total->packets_sent, total->retransmits, total->probes,
	       total->packets_received, total->ce, contrib, r->ok ? "OK" : "WRONG");
	if (p->bit && r->ranks_any) {
		printf("rank %u: ranks in every result ", p->rank);
		print_ranks(r->ranks_all);
		printf(", in some only ");
		print_ranks(r->ranks_any & ~r->ranks_all);
		putchar('\n');
	}
}

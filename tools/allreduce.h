/* SPDX-License-Identifier: GPL-2.0 */
/*
 * netagg-allreduce's parts: what the command line asks (struct params,
 * netagg-allreduce.c) and the buffers' patterns, filled and checked
 * (pattern.c; see netagg-allreduce.c's opening comment for what they are).
 */
#ifndef NETAGG_ALLREDUCE_H
#define NETAGG_ALLREDUCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "libnetagg.h"

#define PROG		"netagg-allreduce"
#define SHOW_WRONG	5	/* wrong elements printed at most */

/*
 * The element types. workers_max: the largest N with every sum of the
 * pattern exact (1000 N(N+1)/2 below 2^24 for f32, 2^31 for i32; 4 N(N+1)/2
 * at most 2048 for f16, 256 for bf16). bit_ranks: --pattern bit's ranks
 * below this keep 1000 (or 4) times a mask of them exact too.
 */
struct dtype_info {
	const char *name;
	uint8_t dtype;
	unsigned int workers_max, bit_ranks;
};

struct params {
	struct netagg_worker_cfg cfg;
	const struct dtype_info *type;
	bool have_job;
	unsigned int rank, workers;	/* workers 0: not given */
	bool have_rank;
	size_t count;
	bool avg;
	bool bit;		/* --pattern bit */
	unsigned long iterations;
	bool warmup;		/* one untimed allreduce first */
	bool barrier;		/* a one-element allreduce before each */
	bool each;		/* with json, a line after each allreduce */
	unsigned int seed;	/* element i is filled as element i + seed */
	bool json, quiet;
};

/* Rank p->rank's buffer of p->count elements. */
void pattern_fill(const struct params *p, void *buf);
/* The expected result, element by element as pattern_verify() has it. */
void pattern_expect(const struct params *p, void *want);
/* Allreduce @iter's result checked element by element; the wrong ones. */
size_t pattern_verify(const struct params *p, const void *buf, unsigned long iter);
/* --pattern bit's check of a result, chunk by chunk; the wrong chunks. */
size_t pattern_verify_bits(const struct params *p, const void *buf, unsigned long iter,
			   const struct netagg_allreduce_info *info, uint32_t *all,
			   uint32_t *any);

/* A run of allreduces: what it works on and what it found. */
struct run {
	struct params p;
	struct netagg_worker *w;
	size_t esize, bytes;
	void *buf, *mine, *want;	/* the buffer, this rank's part, the sum */
	double *times, seconds;		/* of the timed allreduces */
	double begun;			/* when the first timed one began */
	double join_s;
	struct netagg_allreduce_info total, joined;
	unsigned int cmin, cmax, wmin;	/* contributors, window */
	unsigned int wend;		/* the window after the last allreduce */
	uint32_t ranks_all, ranks_any;	/* --pattern bit: in every, in some */
	bool ok;			/* every result was the right sum */
};

/* CLOCK_MONOTONIC, in seconds. */
static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void report_why(const struct params *p, int err, const struct netagg_allreduce_info *info);
void report_failed(const struct run *r, unsigned long it, int err,
		   const struct netagg_allreduce_info *info);
void report_each(const struct run *r, unsigned long it,
		 const struct netagg_allreduce_info *info);
void report_json(const struct run *r, double mbps);
void report_text(const struct run *r, double mbps);

#endif /* NETAGG_ALLREDUCE_H */

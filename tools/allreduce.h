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

#endif /* NETAGG_ALLREDUCE_H */

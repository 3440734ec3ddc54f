// SPDX-License-Identifier: GPL-2.0
/*
 * mpi-allreduce: the Open MPI peer of netagg-allreduce, for make bench
 * (lab/bench/bench-vm.sh, section f). Every rank runs, for each size given in
 * MiB: one warm-up MPI_Allreduce (MPI_FLOAT, MPI_SUM), then REPS timed ones,
 * each after a barrier, and prints one JSON line per timed allreduce:
 *
 *   {"rank":0,"workers":4,"bytes":16777216,"mib":16,"elements":4194304,
 *    "rep":1,"seconds":0.123456,"ok":true}
 *
 *   mpirun ... mpi-allreduce [--reps K] SIZE...
 *
 * A SIZE is MiB, or bytes with a K or M suffix (1K, 64M), per worker.
 *
 * Rank r contributes (i % 1000 + 1) * (r + 1) at element i, as
 * netagg-allreduce does: every partial sum is an integer below 2^24 for up to
 * 182 ranks, so the result is exact in float32 whatever the order of the sums,
 * and every element of it is checked against the exact sum. A wrong element
 * makes that allreduce's "ok" false (and the warm-up's, every rep's of its
 * size); the exit status is then 3, as netagg-allreduce's. Exit codes and
 * JSON output are netagg's own (util/exitcode.h, output.h).
 */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exitcode.h"
#include "mark.h"
#include "output.h"

static void fill(float *buf, size_t n, int rank)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = (float)((i % 1000 + 1) * (size_t)(rank + 1));
}

/* Elements that differ from the exact sum over `workers` ranks. */
static size_t wrong(const float *buf, size_t n, int workers)
{
	size_t ranks_sum = (size_t)workers * (workers + 1) / 2, bad = 0;

	for (size_t i = 0; i < n; i++)
		bad += buf[i] != (float)((i % 1000 + 1) * ranks_sum);
	return bad;
}

/*
 * One allreduce of buf, refilled first; its seconds, the barrier excluded.
 * A timed one is bounded by the markers of the instruction count.
 */
static double allreduce(float *buf, size_t n, int rank, bool timed)
{
	double t0;

	fill(buf, n, rank);
	MPI_Barrier(MPI_COMM_WORLD);
	if (timed)
		netagg_mark_begin();
	t0 = MPI_Wtime();
	MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	t0 = MPI_Wtime() - t0;
	if (timed)
		netagg_mark_end();
	return t0;
}

/* Bytes of a SIZE argument; 0 when it is none (or not whole floats). */
static size_t size_bytes(const char *arg)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 10);
	size_t mult = 1 << 20;

	if (end == arg || arg[0] == '-')
		return 0;
	if (*end == 'K' || *end == 'k')
		mult = 1 << 10, end++;
	else if (*end == 'M' || *end == 'm')
		end++;
	/* MPI counts are ints: at most 1 GiB here, far above the sizes used. */
	if (*end || !v || v > (1UL << 30) / mult || v * mult % sizeof(float))
		return 0;
	return v * mult;
}

int main(int argc, char **argv)
{
	int rank, workers, reps = 3, first = 1, status = NETAGG_EXIT_OK;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &workers);
	if (argc > 2 && !strcmp(argv[1], "--reps")) {
		reps = atoi(argv[2]);
		first = 3;
	}
	if (reps < 1 || first >= argc) {
		if (!rank)
			fputs("usage: mpi-allreduce [--reps K] SIZE...\n", stderr);
		MPI_Finalize();
		return NETAGG_EXIT_USAGE;
	}

	for (int a = first; a < argc; a++) {
		size_t bytes = size_bytes(argv[a]), n = bytes / sizeof(float);
		float *buf = bytes ? malloc(bytes) : NULL;
		double *secs = calloc(reps, sizeof(double));
		bool ok;

		if (!buf || !secs) {
			fprintf(stderr, "mpi-allreduce: rank %d: no buffer of %s (MiB, or a K or M suffix)\n",
				rank, argv[a]);
			MPI_Abort(MPI_COMM_WORLD, NETAGG_EXIT_FAIL);
		}
		allreduce(buf, n, rank, false);	/* warm-up: connections, buffers */
		ok = !wrong(buf, n, workers);
		for (int r = 0; r < reps; r++) {
			secs[r] = allreduce(buf, n, rank, true);
			if (wrong(buf, n, workers))
				ok = false;
		}
		/* Printed after the timed ones: output is not part of the times. */
		netagg_out_init(stdout, true, false);
		for (int r = 0; r < reps; r++) {
			netagg_out_open(NULL, '{');
			netagg_out_u64("rank", NULL, rank);
			netagg_out_u64("workers", NULL, workers);
			netagg_out_u64("bytes", NULL, bytes);
			if (bytes % (1 << 20))
				netagg_out_double("mib", NULL, (double)bytes / (1 << 20), 6);
			else
				netagg_out_u64("mib", NULL, bytes >> 20);
			netagg_out_u64("elements", NULL, n);
			netagg_out_u64("rep", NULL, r + 1);
			netagg_out_double("seconds", NULL, secs[r], 6);
			netagg_out_bool("ok", NULL, ok);
			netagg_out_close('}');
		}
		fflush(stdout);
		if (!ok)
			status = NETAGG_EXIT_WRONG;
		free(secs);
		free(buf);
	}
	MPI_Finalize();
	return status;
}

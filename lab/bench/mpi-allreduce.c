// SPDX-License-Identifier: GPL-2.0
/*
 * mpi-allreduce: the Open MPI peer of netagg-allreduce, for make bench
 * (lab/bench/bench-vm.sh, section f). Every rank runs, for each size given in
 * MiB: one warm-up MPI_Allreduce (MPI_FLOAT, MPI_SUM), then REPS timed ones,
 * each after a barrier, and prints one JSON line per timed allreduce:
 *
 *   {"rank":0,"workers":4,"mib":16,"elements":4194304,"rep":1,
 *    "seconds":0.123456,"ok":true}
 *
 *   mpirun ... mpi-allreduce [--reps K] MIB...
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
			fputs("usage: mpi-allreduce [--reps K] MIB...\n", stderr);
		MPI_Finalize();
		return NETAGG_EXIT_USAGE;
	}

	for (int a = first; a < argc; a++) {
		int mib = atoi(argv[a]);
		/* MPI counts are ints: 2^31 floats is 8 GiB, far above the sizes used. */
		size_t n = (size_t)mib * (1 << 20) / sizeof(float);
		float *buf = malloc(n * sizeof(float));
		double *secs = calloc(reps, sizeof(double));
		bool ok;

		if (mib < 1 || !buf || !secs) {
			fprintf(stderr, "mpi-allreduce: rank %d: no buffer of %s MiB\n", rank, argv[a]);
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
			netagg_out_u64("mib", NULL, mib);
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

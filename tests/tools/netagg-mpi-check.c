// SPDX-License-Identifier: GPL-2.0
/*
 * One rank of tests/netagg_mpi.sh: MPI_Allreduce and MPI_Iallreduce as an
 * MPI program makes them, each result compared exactly with what the
 * ranks' known inputs sum to (rank r gives (r + 1) * (i % 97 + 1)). A JSON
 * line a check, {"rank", "check", "ok"}; exit 0 when every check was ok.
 * Run under libnetagg-mpi.so on a float32 job, the float sums go through
 * netagg (one with the last rank 4 s late), the rest through PMPI: the
 * test reads which from the report.
 *
 * --gone FILE: then, with an error handler of its own on MPI_COMM_WORLD,
 * says {"check": "ready"}, waits for FILE (the test takes the job off the
 * node first), and checks that the next float allreduce fails through the
 * handler and that the one after it fails at once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <mpi.h>

static int rank, size, failed;

static void say(const char *check, int ok)
{
	printf("{\"rank\": %d, \"check\": \"%s\", \"ok\": %s}\n", rank, check,
	       ok ? "true" : "false");
	fflush(stdout);
	failed |= !ok;
}

static long input(int r, long i)
{
	return (long)(r + 1) * (i % 97 + 1);
}

static long total(long i)
{
	return (long)size * (size + 1) / 2 * (i % 97 + 1);
}

static void sum_float(const char *check, long n, int in_place, int async)
{
	float *in = malloc(n * sizeof(*in)), *out = malloc(n * sizeof(*out));
	MPI_Request req;
	int ok = in && out;

	for (long i = 0; ok && i < n; i++)
		in[i] = out[i] = input(rank, i);
	if (ok && async) {
		ok = MPI_Iallreduce(in_place ? MPI_IN_PLACE : in, out, n, MPI_FLOAT, MPI_SUM,
				    MPI_COMM_WORLD, &req) == MPI_SUCCESS &&
		     MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS;
	} else if (ok) {
		ok = MPI_Allreduce(in_place ? MPI_IN_PLACE : in, out, n, MPI_FLOAT, MPI_SUM,
				   MPI_COMM_WORLD) == MPI_SUCCESS;
	}
	for (long i = 0; ok && i < n; i++)
		ok = out[i] == (float)total(i) && (in_place || in[i] == (float)input(rank, i));
	say(check, ok);
	free(in);
	free(out);
}

static int handled, handled_code;

static void on_error(MPI_Comm *comm, int *code, ...)
{
	(void)comm;
	handled++;
	handled_code = *code;
}

static void gone(const char *flag)
{
	enum { N = 20000 };
	static float v[N];
	MPI_Errhandler handler;
	double t0;
	int err;

	MPI_Comm_create_errhandler(on_error, &handler);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, handler);
	say("ready", 1);
	for (int t = 0; t < 3000 && access(flag, F_OK); t++)	/* 300 s at most */
		usleep(100000);
	err = MPI_Allreduce(MPI_IN_PLACE, v, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	say("gone: MPI_Allreduce fails through the error handler",
	    err != MPI_SUCCESS && handled == 1 && handled_code == err);
	t0 = MPI_Wtime();
	err = MPI_Allreduce(MPI_IN_PLACE, v, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	say("gone: the next fails at once", err != MPI_SUCCESS && handled == 2 &&
	    MPI_Wtime() - t0 < 5);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	MPI_Errhandler_free(&handler);
}

int main(int argc, char **argv)
{
	enum { N = 10007 };
	static double d[N];
	static float m[N];
	static int k[N];
	MPI_Comm dup;
	int ok;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	sum_float("float SUM, 1,000,003 elements", 1000003, 0, 0);
	sum_float("float SUM in place", N, 1, 0);
	sum_float("float SUM, MPI_Iallreduce", N, 0, 1);
	/* MPI waits for a late rank: so must netagg, past the library's 2 s. */
	if (rank == size - 1)
		sleep(4);
	sum_float("float SUM, the last rank 4 s late", N, 0, 0);

	for (long i = 0; i < N; i++)
		d[i] = input(rank, i), m[i] = input(rank, i), k[i] = input(rank, i);
	ok = MPI_Allreduce(MPI_IN_PLACE, d, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) ==
	     MPI_SUCCESS;
	for (long i = 0; ok && i < N; i++)
		ok = d[i] == total(i);
	say("double SUM", ok);
	ok = MPI_Allreduce(MPI_IN_PLACE, m, N, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD) == MPI_SUCCESS;
	for (long i = 0; ok && i < N; i++)
		ok = m[i] == input(size - 1, i);
	say("float MAX", ok);
	ok = MPI_Allreduce(MPI_IN_PLACE, k, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS;
	for (long i = 0; ok && i < N; i++)
		ok = k[i] == total(i);
	say("int SUM", ok);

	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	for (long i = 0; i < N; i++)
		m[i] = input(rank, i);
	ok = MPI_Allreduce(MPI_IN_PLACE, m, N, MPI_FLOAT, MPI_SUM, dup) == MPI_SUCCESS;
	for (long i = 0; ok && i < N; i++)
		ok = m[i] == total(i);
	say("float SUM on a duplicate of MPI_COMM_WORLD", ok);
	MPI_Comm_free(&dup);

	if (argc > 2 && !strcmp(argv[1], "--gone"))
		gone(argv[2]);
	MPI_Finalize();
	return failed;
}

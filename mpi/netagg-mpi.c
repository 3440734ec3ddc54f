// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libnetagg-mpi: MPI_Allreduce through netagg, for any MPI, by the MPI
 * profiling interface. Loaded with LD_PRELOAD (or linked before the MPI
 * library), it defines MPI_Init, MPI_Init_thread, MPI_Allreduce,
 * MPI_Iallreduce and MPI_Finalize; each calls its PMPI_ twin, which every
 * MPI implementation exports, so nothing of the MPI's internals is used.
 *
 * MPI_Init reads the job's settings (NETAGG_JOB, NETAGG_TREES, ... as the
 * Python package reads them) before PMPI_Init, so that a bad one stops the
 * rank before it is part of MPI's job, then joins the job's trees (the
 * rank and the number of workers are MPI_COMM_WORLD's, the session rank
 * 0's random choice, broadcast). An
 * allreduce goes through netagg when it can be exact: on MPI_COMM_WORLD,
 * MPI_SUM, of the job's dtype (MPI_FLOAT: float32, MPI_INT: int32, and
 * MPIX_C_FLOAT16: float16 where the MPI has it). Everything else calls
 * PMPI_Allreduce unchanged, counted by reason. NETAGG_MPI_REPORT=1 prints
 * each rank's counts at MPI_Finalize: what went where, and why.
 *
 * A failed netagg allreduce is the communicator's error (its handler:
 * MPI's default aborts the job), and every netagg allreduce after it fails
 * too: the ranks are out of step, and a result taken then could be a wrong
 * sum. Without NETAGG_JOB every call goes to PMPI, and the report says so.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <arpa/inet.h>
#include <mpi.h>

#include "libnetagg.h"

#define REASONS_MAX 8

static struct {
	struct netagg_worker *w;	/* NULL: every call through PMPI */
	MPI_Datatype type;		/* the job's, as MPI names it */
	const char *type_name;
	size_t esize;
	int rank;
	int failed;			/* an earlier netagg allreduce's error */
	bool report;
	const char *off;		/* why netagg is not used at all */
	uint64_t calls, bytes;		/* through netagg */
	uint64_t pmpi_calls, pmpi_bytes;
	struct {
		const char *why;
		uint64_t n;
	} reasons[REASONS_MAX];
} st = { .off = "MPI_Init not called yet" };

static void __attribute__((format(printf, 1, 2))) die(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int at;

	/* One write: the ranks' lines reach mpirun's stderr whole. */
	if (st.rank >= 0)
		at = snprintf(msg, sizeof(msg), "netagg-mpi: rank %d: ", st.rank);
	else
		at = snprintf(msg, sizeof(msg), "netagg-mpi: ");
	va_start(ap, fmt);
	vsnprintf(msg + at, sizeof(msg) - at - 1, fmt, ap);
	va_end(ap);
	strcat(msg, "\n");
	fputs(msg, stderr);
	/* Not MPI_Abort: under an rsh launcher Open MPI's abort can hang and
	 * lose the message; a rank that exits before MPI_Finalize ends the
	 * run as surely (mpirun kills the others).
	 */
	exit(1);
}

/* An unsigned integer environment variable, def if unset; bad: die. */
static unsigned long env_num(const char *name, unsigned long def, unsigned long max)
{
	const char *v = getenv(name);
	unsigned long n;
	char *end;

	if (!v)
		return def;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (!*v || *end || errno || n > max || *v == '-')
		die("%s=\"%s\" is not a number from 0 to %lu", name, v, max);
	return n;
}

/* Seconds (a decimal number) as milliseconds, def if unset; bad: die. */
static unsigned int env_ms(const char *name, unsigned int def)
{
	const char *v = getenv(name);
	char *end;
	double s;

	if (!v)
		return def;
	s = strtod(v, &end);
	if (!*v || *end || !(s > 0 && s <= 86400))
		die("%s=\"%s\" is not a number of seconds (0 to 86400)", name, v);
	return (unsigned int)(s * 1000 + 0.5);
}

/* NETAGG_TREES, "TID=ADDR,...", into cfg's trees (IPv4 or IPv6, one family). */
static void parse_trees(struct netagg_worker_cfg *cfg, const char *spec)
{
	char *copy = strdup(spec), *save = NULL, *tok;

	if (!copy)
		die("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct netagg_tree_dst *d = &cfg->trees[cfg->ntrees];
		char *eq = strchr(tok, '='), *addr, *end;
		unsigned long tid;

		if (cfg->ntrees == NETAGG_TREES_MAX)
			die("NETAGG_TREES: more than %d trees", NETAGG_TREES_MAX);
		if (!eq)
			die("NETAGG_TREES: \"%s\" is not TID=ADDR", tok);
		*eq = '\0';
		addr = eq + 1;
		tid = strtoul(tok, &end, 10);
		if (!*tok || *end || tid >= NETAGG_TREES_MAX)
			die("NETAGG_TREES: tree ID \"%s\" is not 0 to %d", tok,
			    NETAGG_TREES_MAX - 1);
		if (*addr == '[' && addr[strlen(addr) - 1] == ']') {
			addr[strlen(addr) - 1] = '\0';
			addr++;
		}
		d->tid = tid;
		if (inet_pton(AF_INET, addr, &d->addr) == 1)
			d->family = AF_INET;
		else if (inet_pton(AF_INET6, addr, &d->addr6) == 1)
			d->family = AF_INET6;
		else
			die("NETAGG_TREES: \"%s\" is not an IPv4 or IPv6 address", addr);
		cfg->ntrees++;
	}
	free(copy);
}

static void set_dtype(struct netagg_worker_cfg *cfg)
{
	const char *v = getenv("NETAGG_DTYPE");

	if (!v || !strcmp(v, "float32")) {
		cfg->dtype = NETAGG_DTYPE_F32;
		st.type = MPI_FLOAT, st.type_name = "float32", st.esize = 4;
	} else if (!strcmp(v, "int32") && sizeof(int) == 4) {
		cfg->dtype = NETAGG_DTYPE_I32;
		st.type = MPI_INT, st.type_name = "int32", st.esize = 4;
#ifdef MPIX_C_FLOAT16
	} else if (!strcmp(v, "float16")) {
		cfg->dtype = NETAGG_DTYPE_F16;
		st.type = MPIX_C_FLOAT16, st.type_name = "float16", st.esize = 2;
#endif
	} else {
		die("NETAGG_DTYPE=\"%s\": this MPI's jobs are float32 or int32%s", v,
#ifdef MPIX_C_FLOAT16
		    " or float16"
#else
		    " (it has no half type)"
#endif
		    );
	}
}

/*
 * Before PMPI_Init: the job's configuration from the environment, every
 * error a message and exit, so that a bad setting stops the rank before
 * it is part of MPI's job (an exit there ends the run at once; after, the
 * launcher's teardown of a half-failed job can take it minutes or hang).
 * The rank for the messages is the launcher's, where it says it.
 */
static NETAGG_WORKER_CFG(cfg);

/* NETAGG_KEY_FILE: the job's key (netagg_key_read()), if it has one. */
static void key_file(struct netagg_worker_cfg *c)
{
	const char *path = getenv("NETAGG_KEY_FILE");
	int err;

	if (!path)
		return;
	err = netagg_key_read(path, c->key);
	if (err == -EBADMSG)
		die("NETAGG_KEY_FILE=%s: not %d bytes, nor %d hex digits", path,
		    NETAGG_KEY_LEN, 2 * NETAGG_KEY_LEN);
	if (err)
		die("NETAGG_KEY_FILE=%s: %s", path, strerror(-err));
	c->keyed = 1;
}

static void read_env(void)
{
	const char *trees, *rank = getenv("OMPI_COMM_WORLD_RANK");

	if (!rank)
		rank = getenv("PMI_RANK");
	st.rank = rank ? atoi(rank) : -1;
	st.report = env_num("NETAGG_MPI_REPORT", 0, 1);
	if (!getenv("NETAGG_JOB")) {
		st.off = "NETAGG_JOB is not set";
		return;
	}
	trees = getenv("NETAGG_TREES");
	if (!trees)
		die("NETAGG_JOB is set, NETAGG_TREES is not: the job's trees, \"TID=ADDR,...\"");
	cfg.jid = env_num("NETAGG_JOB", 0, UINT32_MAX);
	set_dtype(&cfg);
	parse_trees(&cfg, trees);
	cfg.window = env_num("NETAGG_WINDOW", 0, UINT32_MAX);
	cfg.mtu = env_num("NETAGG_MTU", 0, UINT32_MAX);
	/*
	 * MPI_Allreduce waits for a late rank as long as it takes: 30 minutes
	 * (torch.distributed's default), not the library's 2 s, unless said.
	 * A node that stops answering still fails the call in node_timeout_ms.
	 */
	cfg.timeout_ms = env_ms("NETAGG_TIMEOUT", 30 * 60 * 1000);
	cfg.node_timeout_ms = env_ms("NETAGG_NODE_TIMEOUT", 0);
	cfg.src_port = env_num("NETAGG_PORT", 0, 65535);
	cfg.port = env_num("NETAGG_NODE_PORT", 0, 65535);
	cfg.dscp = env_num("NETAGG_DSCP", 0, 63);
	key_file(&cfg);
	st.off = "MPI_Init failed";
}

/* After PMPI_Init: the worker, joined, or st.off saying why there is none. */
static void join(void)
{
	int size, local = 0, nlocal = 1, err;
	uint32_t session = 0;
	const char *why;
	MPI_Comm host;

	PMPI_Comm_rank(MPI_COMM_WORLD, &st.rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &size);
	if (!getenv("NETAGG_JOB"))
		return;
	cfg.workers = size;
	cfg.rank = st.rank;
	/* Several ranks a host: each its own port, as the Python package does. */
	PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
	PMPI_Comm_rank(host, &local);
	PMPI_Comm_size(host, &nlocal);
	PMPI_Comm_free(&host);
	if (!cfg.src_port && nlocal > 1 && !getenv("NETAGG_PORT"))
		cfg.src_port = 7178;
	if (cfg.src_port)
		cfg.src_port += local;
	if (st.rank == 0)
		while (!session && getrandom(&session, sizeof(session), 0) != sizeof(session))
			;
	PMPI_Bcast(&session, 1, MPI_UINT32_T, 0, MPI_COMM_WORLD);
	cfg.session = session;
	why = netagg_worker_cfg_error(&cfg);
	if (why)
		die("the job's configuration: %s", why);
	err = netagg_worker_open(&cfg, &st.w);
	if (err)
		die("netagg_worker_open: %s", netagg_strerror(err));
	err = netagg_join(st.w, NULL);
	if (err)
		die("joining job %" PRIu32 ": %s", cfg.jid, netagg_strerror(err));
	st.off = NULL;
}

int MPI_Init(int *argc, char ***argv)
{
	int err;

	read_env();
	err = PMPI_Init(argc, argv);
	if (err == MPI_SUCCESS)
		join();
	return err;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int err;

	read_env();
	err = PMPI_Init_thread(argc, argv, required, provided);
	if (err == MPI_SUCCESS)
		join();
	return err;
}

/* Why netagg cannot do this allreduce, or NULL if it can. */
static const char *not_ours(int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
	if (!st.w)
		return st.off;
	if (comm != MPI_COMM_WORLD)
		return "a communicator other than MPI_COMM_WORLD";
	if (op != MPI_SUM)
		return "an operation other than MPI_SUM";
	if (type != st.type)
		return "a datatype other than the job's";
	if (count <= 0)
		return "no elements";
	return NULL;
}

static void count_pmpi(const char *why, int count, MPI_Datatype type)
{
	int size = 0, i;

	PMPI_Type_size(type, &size);
	st.pmpi_calls++;
	st.pmpi_bytes += (uint64_t)(count > 0 ? count : 0) * size;
	for (i = 0; i < REASONS_MAX && st.reasons[i].why; i++)
		if (st.reasons[i].why == why)
			break;
	if (i < REASONS_MAX) {
		st.reasons[i].why = why;
		st.reasons[i].n++;
	}
}

/* The netagg allreduce of recvbuf (sendbuf copied in first): MPI's code. */
static int reduce(const void *sendbuf, void *recvbuf, int count, MPI_Comm comm)
{
	int err = st.failed;

	if (sendbuf != MPI_IN_PLACE)
		memcpy(recvbuf, sendbuf, (size_t)count * st.esize);
	if (!err)
		err = netagg_allreduce(st.w, recvbuf, count, NULL);
	if (err) {
		fprintf(stderr, "netagg-mpi: rank %d: MPI_Allreduce of %d %s: %s%s\n", st.rank,
			count, st.type_name, netagg_strerror(err),
			st.failed ? " (an earlier allreduce failed: the ranks are out of step)" :
			"");
		st.failed = err;
		PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
		return MPI_ERR_OTHER;
	}
	st.calls++;
	st.bytes += (uint64_t)count * st.esize;
	return MPI_SUCCESS;
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
		  MPI_Op op, MPI_Comm comm)
{
	const char *why = not_ours(count, datatype, op, comm);

	if (why) {
		count_pmpi(why, count, datatype);
		return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
	}
	return reduce(sendbuf, recvbuf, count, comm);
}

static int done_query(void *extra, MPI_Status *status)
{
	(void)extra;
	PMPI_Status_set_elements(status, MPI_BYTE, 0);
	PMPI_Status_set_cancelled(status, 0);
	status->MPI_SOURCE = MPI_UNDEFINED;
	status->MPI_TAG = MPI_UNDEFINED;
	return MPI_SUCCESS;
}

static int done_free(void *extra)
{
	(void)extra;
	return MPI_SUCCESS;
}

static int done_cancel(void *extra, int complete)
{
	(void)extra;
	(void)complete;
	return MPI_SUCCESS;
}

/*
 * Through netagg, MPI_Iallreduce completes before it returns (a
 * generalized request, already complete): the library runs one allreduce
 * at a time in the caller's thread, so nothing would overlap it anyway.
 */
int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
		   MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	const char *why = not_ours(count, datatype, op, comm);
	int err;

	if (why) {
		count_pmpi(why, count, datatype);
		return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
	}
	err = reduce(sendbuf, recvbuf, count, comm);
	if (err != MPI_SUCCESS)
		return err;
	err = PMPI_Grequest_start(done_query, done_free, done_cancel, NULL, request);
	return err == MPI_SUCCESS ? PMPI_Grequest_complete(*request) : err;
}

int MPI_Finalize(void)
{
	if (st.report) {
		char line[1024];
		int at, i;

		at = snprintf(line, sizeof(line),
			      "netagg-mpi: rank %d: netagg %" PRIu64 " calls %" PRIu64
			      " bytes; pmpi %" PRIu64 " calls %" PRIu64 " bytes",
			      st.rank, st.calls, st.bytes, st.pmpi_calls, st.pmpi_bytes);
		for (i = 0; i < REASONS_MAX && st.reasons[i].why && at < (int)sizeof(line); i++)
			at += snprintf(line + at, sizeof(line) - at, "; %s: %" PRIu64,
				       st.reasons[i].why, st.reasons[i].n);
		fprintf(stderr, "%s\n", line);
	}
	if (st.w) {
		netagg_worker_close(st.w);
		st.w = NULL;
	}
	st.off = "after MPI_Finalize";
	return PMPI_Finalize();
}

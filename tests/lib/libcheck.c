// SPDX-License-Identifier: GPL-2.0
/*
 * libcheck: a program built against the installed libnetagg through
 * pkg-config (tests/host_library.sh), as a user's would be. It sends
 * nothing: it checks the shared library's configuration checks and
 * messages, and prints one KTAP line per check.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <libnetagg.h>

static int n, failed;

static void ok(int cond, const char *what)
{
	printf("%sok %d %s\n", cond ? "" : "not ", ++n, what);
	failed += !cond;
}

static int says(const char *got, const char *want)
{
	return got && strstr(got, want);
}

int main(void)
{
	struct netagg_worker_cfg cfg = {
		.jid = 1, .dtype = NETAGG_DTYPE_F32, .workers = 4, .ntrees = 1,
	};
	struct netagg_worker *w = (struct netagg_worker *)&cfg;
	char version[32];

	printf("KTAP version 1\n1..14\n");
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
	return failed ? 1 : 0;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exit codes of every netagg program, the CLI, netagg-allreduce and
 * the test and bench tools alike (README.md, "Exit codes").
 */
#ifndef NETAGG_EXITCODE_H
#define NETAGG_EXITCODE_H

enum netagg_exit {
	NETAGG_EXIT_OK = 0,
	/* The kernel, the network or the system refused or failed. */
	NETAGG_EXIT_FAIL = 1,
	/* The command line is wrong; nothing was done. */
	NETAGG_EXIT_USAGE = 2,
	/*
	 * A result reported whole is wrong: only programs that verify what
	 * they get (netagg-allreduce) say so, and it must never happen.
	 */
	NETAGG_EXIT_WRONG = 3,
};

#endif /* NETAGG_EXITCODE_H */

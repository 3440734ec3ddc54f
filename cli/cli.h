/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of the netagg CLI share: netagg.c runs command lines and
 * batches, cmd.c parses and runs the commands, xdp.c the XDP hook's, nl.c
 * talks to the module, print.c renders its replies through the output
 * layer (output.h), report.c reports errors. Each calls only files after
 * it in that list.
 */
#ifndef NETAGG_CLI_H
#define NETAGG_CLI_H

#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <linux/netagg.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* report.c; its netagg_usage_error() is declared in parse.h */
/* Batch mode: the line being run, 0 outside it. */
void netagg_report_line(unsigned long line);
/* Batch mode: where a usage error goes back to (longjmp), NULL: exit. */
void netagg_report_jump(jmp_buf *env);
/* Before a message on stderr: "netagg: line N: " in batch mode. */
void netagg_line_prefix(void);
/*
 * A failure outside the command line (no memory, no socket, no module):
 * reported like a kernel error, and it ends a batch even with -force.
 */
void __attribute__((noreturn)) netagg_fatal(const char *msg);

/* cmd.c */
void netagg_usage(FILE *f);
/* A command: argv holds the words after OBJECT [VERB]; an exit code. */
typedef int (*netagg_cmd_fn)(int argc, char **argv);
/* The command argv starts with; *words: how many words (1 or 2) it took. */
netagg_cmd_fn netagg_find_cmd(int argc, char **argv, int *words);

/* xdp.c: the commands "xdp attach", "xdp detach" and "xdp show" */
int netagg_cmd_xdp_attach(int argc, char **argv);
int netagg_cmd_xdp_detach(int argc, char **argv);
int netagg_cmd_xdp_show(int argc, char **argv);
/* "xdp" in show: where netagg's XDP program is attached. */
void netagg_xdp_show(void);

/* nl.c */
/* A reply: its attributes parsed, and the raw stream for repeated ones. */
typedef void (*netagg_reply_fn)(struct nlattr **tb, struct nlattr *attrs,
				int len, void *arg);
extern struct nla_policy netagg_reply_policy[NETAGG_A_MAX + 1];
/* nl-policy.c, from the spec too: each NETAGG_STAT_*'s name and meaning. */
struct netagg_stat_info {
	const char *name;	/* as netagg stats shows it: "drop_nomem" */
	const char *help;	/* what it counts, a sentence */
};
extern const struct netagg_stat_info netagg_stat_info[NETAGG_STAT_MAX + 1];
/* The connected socket: connects on first use, so usage never needs it. */
struct nl_sock *netagg_nl_sock(void);
void netagg_nl_close(void);
/* A request of @cmd, filled in by the caller, sent by netagg_transact(). */
struct nl_msg *netagg_request(uint8_t cmd, int flags);
/* Free the request a usage error left unsent (batch mode). */
void netagg_request_drop(void);
/*
 * Send @msg (and free it), hand every reply to @parse and wait for the
 * final ack or the end of the dump. Prints the error; returns an exit code.
 */
int netagg_transact(struct nl_msg *msg, netagg_reply_fn parse, void *arg);

/* print.c */
/* -d: every counter in text, zeros too (JSON always has them all). */
extern bool netagg_details;
/* -t, -ts: each event printed with the time it came (0: without). */
enum { NETAGG_TIMESTAMP_LONG = 1, NETAGG_TIMESTAMP_SHORT };
extern int netagg_timestamps;
/* NETAGG_STAT_* @stat's name, or "statN" for one this CLI does not know. */
const char *netagg_stat_name(unsigned int stat, char *buf, size_t size);
/* A drop counter's reason ("drop_nomem": "nomem"), NULL for other counters. */
const char *netagg_drop_reason(const char *name);
/* An unsigned attribute of any width (the reply policy checked its minimum). */
uint64_t netagg_attr_uint(const struct nlattr *a);
extern const char *const netagg_op_names[];
extern const size_t netagg_op_count;
extern const char *const netagg_role_names[];
extern const size_t netagg_role_count;

/* "job 7: rx 1 ...": with @on, only job @jid's; @found says if it came. */
struct netagg_job_filter {
	bool on;
	uint32_t jid;
	bool found;
};

void netagg_print_job(struct nlattr **tb, struct nlattr *attrs, int len,
		      void *arg);
void netagg_print_ns_usage(struct nlattr **tb, struct nlattr *attrs, int len,
			   void *arg);
void netagg_print_ns_stats(struct nlattr **tb, struct nlattr *attrs, int len,
			   void *arg);
/* @arg: a struct netagg_job_filter. */
void netagg_print_job_stats(struct nlattr **tb, struct nlattr *attrs,
			    int len, void *arg);
void netagg_print_event(struct nlattr **tb);

/*
 * prom.c: the counters (of job @jid alone if @one_job) in Prometheus' text
 * format, to the command's output. Returns an exit code.
 */
int netagg_prom_stats(bool one_job, uint32_t jid);

#endif /* NETAGG_CLI_H */

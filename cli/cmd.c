// SPDX-License-Identifier: GPL-2.0
/*
 * The netagg CLI's commands: each parses its words straight into a request
 * (the kernel owns the defaults and judges the values) and renders the
 * replies (print.c).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netlink/genl/ctrl.h>

#include "cli.h"
#include "libnetagg.h"
#include "exitcode.h"
#include "output.h"
#include "parse.h"

void netagg_usage(FILE *f)
{
	fputs("Usage: netagg [OPTIONS] OBJECT COMMAND [ARGS]\n"
	      "       netagg [OPTIONS] [-force] -b FILE\n"
	      "       netagg -V\n"
	      "  netagg job add JID [dtype f32|i32|f16|bf16] [op sum|avg] [window N] [mtu N] [memcap SIZE]\n"
	      "                 [key FILE]\n"
	      "  netagg job del JID\n"
	      "  netagg job show [JID]\n"
	      "  netagg tree add job JID tree TID role root|aggregator [parent ADDR] child ADDR[:PORT]\n"
	      "                  [child ADDR[:PORT]]...\n"
	      "                  [quorum N|N%|all] [straggler MS] [evict MS]\n"
	      "  netagg tree set job JID tree TID [parent ADDR] [child ADDR[:PORT]]... [quorum N|N%|all] [straggler MS]\n"
	      "                  [evict MS]\n"
	      "  netagg tree del job JID tree TID\n"
	      "  netagg show\n"
	      "  netagg stats [job JID] [format text|prometheus]\n"
	      "  netagg reset [job JID [tree TID]]\n"
	      "  netagg set [max-jobs N] [mem-limit SIZE] [dscp N] [port P]\n"
	      "  netagg monitor [count N]\n"
	      "  netagg xdp attach DEV [mode native|generic]\n"
	      "  netagg xdp detach DEV\n"
	      "  netagg xdp show\n"
	      "  netagg help | netagg OBJECT help\n"
	      "OBJECT alone is its show command (job, xdp). Options, as ip's: one dash or\n"
	      "two, long names shortened to any unique prefix (-j, -json, --json):\n"
	      "  -j, -json          JSON output\n"
	      "  -p, -pretty        pretty JSON (implies -j)\n"
	      "  -d, -details       stats: every counter, zeros too (JSON has them all)\n"
	      "  -t, -timestamp     monitor: each event with its time, on a line before it\n"
	      "  -ts, -tshort       monitor: each event with its time, before it on its line\n"
	      "  -n, -netns NETNS   in network namespace NETNS (ip netns's name), not this one\n"
	      "  -b, -batch FILE    run the commands in FILE (- for stdin), one per line\n"
	      "                     (OBJECT COMMAND [ARGS], # starts a comment)\n"
	      "  -force             in batch mode, go on after a failing command\n"
	      "  -V, -Version       print netagg's version\n"
	      "SIZE: bytes with an optional K, M or G suffix (1K = 1024).\n"
	      "quorum: children whose contributions complete a VID (N, N% of them, or all,\n"
	      "  the default); straggler: ms to wait for the others once the quorum is in.\n"
	      "format prometheus: the counters in Prometheus' text format (node_exporter's\n"
	      "  textfile collector), netagg_tree_aggregated_total{job=\"7\",tree=\"0\"} ...\n"
	      "ADDR: IPv4 or IPv6 (a tree's all of one family); child: an address, or\n"
	      "  ADDR:PORT, [IPV6ADDR]:PORT (its UDP source port too: several workers\n"
	      "  behind one address, a child each).\n"
	      "dscp, port: of the namespace's aggregation packets, those it takes and\n"
	      "  sends (default 56 and 7177; workers and nodes of a job must agree).\n"
	      "evict: take out a child silent for MS ms while the tree waits for it (0: never,\n"
	      "  the default). monitor: print the module's events as they come (N: stop after N).\n"
	      "xdp: aggregate on DEV before the stack, in netagg's XDP program (native, the\n"
	      "  default, needs the driver's XDP; generic runs it on the skb).\n"
	      "Exit codes: 0 done, 1 the kernel (or the system) refused or failed, 2 usage\n"
	      "error (nothing was done).\n", f);
}

/* One keyword of a command: its value's syntax and the attribute it sets. */
struct kw {
	const char *name;
	int attr;
	enum { V_U8, V_U16, V_U32, V_SIZE, V_ADDR, V_CHILD, V_DTYPE, V_OP, V_ROLE,
	       V_QUORUM, V_KEYFILE } type;
	const char *what;	/* the value, in error messages */
	bool required;
	bool repeat;		/* may be given more than once */
};
#define KW(n, a, t, w, ...) \
	{ .name = (n), .attr = (a), .type = (t), .what = (w), __VA_ARGS__ }

/* "N" children, "N%" of them, or "all" (every child: 0). */
static int put_quorum(struct nl_msg *msg, const char *s, const char *what)
{
	size_t len = strlen(s);
	char num[16];

	if (!strcmp(s, "all"))
		return nla_put_u16(msg, NETAGG_A_QUORUM, 0);
	if (len > 1 && len < sizeof(num) && s[len - 1] == '%') {
		memcpy(num, s, len - 1);
		num[len - 1] = '\0';
		return nla_put_u8(msg, NETAGG_A_QUORUM_PCT,
				  netagg_parse_num(what, num, 0, UINT8_MAX));
	}
	return nla_put_u16(msg, NETAGG_A_QUORUM, netagg_parse_num(what, s, 0, UINT16_MAX));
}

/* @a as @v4attr, or as @v4attr's IPv6 twin: @v6attr. */
static int put_inet(struct nl_msg *msg, int v4attr, int v6attr,
		    const struct netagg_inet *a)
{
	if (a->family == AF_INET6)
		return nla_put(msg, v6attr, sizeof(a->v6), &a->v6);
	/* be32: the u32 payload is in network order */
	return nla_put_u32(msg, v4attr, a->v4.s_addr);
}

/*
 * ADDR, ADDR:PORT or [IPV6ADDR]:PORT: the child's CHILD_PORT right after
 * its CHILD (or CHILD_IPV6).
 */
static int put_child(struct nl_msg *msg, const char *s, const char *what)
{
	uint16_t port;
	struct netagg_inet addr = netagg_parse_inet_endpoint(what, s, &port);
	int err = put_inet(msg, NETAGG_A_CHILD, NETAGG_A_CHILD_IPV6, &addr);

	if (!err && port)
		err = nla_put_u16(msg, NETAGG_A_CHILD_PORT, htons(port));
	return err;
}

/*
 * The key in file @path (netagg_key_read()): a file that cannot be
 * read fails (exit 1); one of another form is a usage error (exit 2). The
 * copy on the stack is wiped once in the message.
 */
static int put_key(struct nl_msg *msg, const char *path)
{
	uint8_t key[NETAGG_KEY_LEN];
	char why[160];
	int err;

	err = netagg_key_read(path, key);
	if (err == -EBADMSG)
		netagg_usage_error("key %s: not %d bytes, nor %d hex digits",
				   path, NETAGG_KEY_LEN, 2 * NETAGG_KEY_LEN);
	if (err) {
		snprintf(why, sizeof(why), "key %s: %s", path, strerror(-err));
		netagg_fatal(why);
	}
	err = nla_put(msg, NETAGG_A_KEY, sizeof(key), key);
	explicit_bzero(key, sizeof(key));
	return err;
}

static void put_value(struct nl_msg *msg, const struct kw *k, const char *s)
{
	int err = 0;

	switch (k->type) {
	case V_U8:
		err = nla_put_u8(msg, k->attr, netagg_parse_num(k->what, s, 0, UINT8_MAX));
		break;
	case V_U16:
		err = nla_put_u16(msg, k->attr, netagg_parse_num(k->what, s, 0, UINT16_MAX));
		break;
	case V_U32:
		err = nla_put_u32(msg, k->attr, netagg_parse_num(k->what, s, 0, UINT32_MAX));
		break;
	case V_SIZE:
		err = nla_put_u64(msg, k->attr, netagg_parse_size(k->what, s, 0, UINT64_MAX));
		break;
	case V_ADDR: {
		struct netagg_inet a = netagg_parse_inet(k->what, s);

		/* PARENT is the only address keyword. */
		err = put_inet(msg, k->attr, NETAGG_A_PARENT_IPV6, &a);
		break;
	}
	case V_CHILD:
		err = put_child(msg, s, k->what);
		break;
	case V_DTYPE:
		err = nla_put_u8(msg, k->attr, netagg_parse_name(k->what, s,
				 netagg_dtype_names, netagg_dtype_count, true));
		break;
	case V_OP:
		err = nla_put_u8(msg, k->attr, netagg_parse_name(k->what, s,
				 netagg_op_names, netagg_op_count, true));
		break;
	case V_ROLE:
		err = nla_put_u8(msg, k->attr, netagg_parse_name(k->what, s,
				 netagg_role_names, netagg_role_count, true));
		break;
	case V_QUORUM:
		err = put_quorum(msg, s, k->what);
		break;
	case V_KEYFILE:
		err = put_key(msg, s);
		break;
	}
	if (err < 0)
		netagg_usage_error("request too large");
}

/* Parse "keyword value" pairs in any order; returns a bitmask of the
 * keywords seen (bit i for kws[i]).
 */
static unsigned int parse_kws(const char *cmd, const struct kw *kws, size_t n,
			      int argc, char **argv, struct nl_msg *msg)
{
	unsigned int seen = 0;

	for (int i = 0; i < argc; i++) {
		size_t k = 0;

		while (k < n && strcmp(argv[i], kws[k].name))
			k++;
		if (k == n)
			netagg_usage_error("%s: unknown argument \"%s\"", cmd, argv[i]);
		if ((seen & (1U << k)) && !kws[k].repeat)
			netagg_usage_error("%s: duplicate \"%s\"", cmd, argv[i]);
		if (i + 1 >= argc)
			netagg_usage_error("%s: missing value after \"%s\"", cmd,
				    argv[i]);
		seen |= 1U << k;
		put_value(msg, &kws[k], argv[++i]);
	}
	for (size_t k = 0; k < n; k++)
		if (kws[k].required && !(seen & (1U << k)))
			netagg_usage_error("%s: missing \"%s\"", cmd, kws[k].name);
	return seen;
}

static const struct kw kw_jid = KW("job", NETAGG_A_JOB_ID, V_U32, "JID");

static void no_more_args(const char *cmd, int argc, char **argv)
{
	if (argc > 0)
		netagg_usage_error("%s: unknown argument \"%s\"", cmd, argv[0]);
}

/* The commands: argv holds the arguments after the command words. */
static int cmd_job_add(int argc, char **argv)
{
	static const struct kw kws[] = {
		KW("dtype", NETAGG_A_DTYPE, V_DTYPE, "dtype"),
		KW("op", NETAGG_A_OP, V_OP, "op"),
		KW("window", NETAGG_A_WINDOW, V_U32, "window"),
		KW("mtu", NETAGG_A_MTU, V_U32, "mtu"),
		KW("memcap", NETAGG_A_MEM_CAP, V_SIZE, "memcap"),
		KW("key", NETAGG_A_KEY, V_KEYFILE, "key"),
	};
	struct nl_msg *msg = netagg_request(NETAGG_CMD_JOB_NEW, NLM_F_ACK);

	if (argc < 1)
		netagg_usage_error("job add: missing JID");
	put_value(msg, &kw_jid, argv[0]);
	/* Only what the user gave: the kernel owns the defaults. */
	parse_kws("job add", kws, ARRAY_SIZE(kws), argc - 1, argv + 1, msg);
	return netagg_transact(msg, NULL, NULL);
}

static int cmd_job_del(int argc, char **argv)
{
	struct nl_msg *msg = netagg_request(NETAGG_CMD_JOB_DEL, NLM_F_ACK);

	if (argc < 1)
		netagg_usage_error("job del: missing JID");
	put_value(msg, &kw_jid, argv[0]);
	no_more_args("job del", argc - 1, argv + 1);
	return netagg_transact(msg, NULL, NULL);
}

static int cmd_job_show(int argc, char **argv)
{
	struct nl_msg *msg;
	int rc;

	if (argc > 0) {
		msg = netagg_request(NETAGG_CMD_JOB_GET, NLM_F_ACK);
		put_value(msg, &kw_jid, argv[0]);
		no_more_args("job show", argc - 1, argv + 1);
	} else {
		msg = netagg_request(NETAGG_CMD_JOB_GET, NLM_F_DUMP);
	}
	netagg_out_open(NULL, '{');
	netagg_out_open("jobs", '[');
	rc = netagg_transact(msg, netagg_print_job, NULL);
	netagg_out_close(']');
	netagg_out_close('}');
	return rc;
}

/* The keywords of the tree commands. */
#define KW_JOB	  KW("job", NETAGG_A_JOB_ID, V_U32, "JID", .required = true)
#define KW_TREE	  KW("tree", NETAGG_A_TREE_ID, V_U16, "TID", .required = true)
#define KW_PARENT KW("parent", NETAGG_A_PARENT, V_ADDR, "parent address")
#define KW_ROLE	  KW("role", NETAGG_A_ROLE, V_ROLE, "role")
/* Children go out in the order given; how many is the kernel's call. */
#define KW_CHILD  KW("child", NETAGG_A_CHILD, V_CHILD, "child address", \
		     .repeat = true)
#define KW_QUORUM KW("quorum", NETAGG_A_QUORUM, V_QUORUM, "quorum")
#define KW_STRAGGLER KW("straggler", NETAGG_A_STRAGGLER_MS, V_U32, \
			"straggler delay (ms)")
#define KW_EVICT  KW("evict", NETAGG_A_EVICT_MS, V_U32, "eviction time (ms)")

/* A change command made of keywords only. */
static int kw_cmd(const char *cmd, uint8_t nlcmd, const struct kw *kws,
		  size_t n, int argc, char **argv)
{
	struct nl_msg *msg = netagg_request(nlcmd, NLM_F_ACK);

	parse_kws(cmd, kws, n, argc, argv, msg);
	return netagg_transact(msg, NULL, NULL);
}

static int cmd_tree_add(int argc, char **argv)
{
	static const struct kw kws[] = {
		KW_JOB, KW_TREE, KW_ROLE, KW_PARENT, KW_CHILD, KW_QUORUM,
		KW_STRAGGLER, KW_EVICT,
	};

	return kw_cmd("tree add", NETAGG_CMD_TREE_NEW, kws, ARRAY_SIZE(kws),
		      argc, argv);
}

static int cmd_tree_set(int argc, char **argv)
{
	/* role too: the kernel explains why it cannot change */
	static const struct kw kws[] = {
		KW_JOB, KW_TREE, KW_ROLE, KW_PARENT, KW_CHILD, KW_QUORUM,
		KW_STRAGGLER, KW_EVICT,
	};

	return kw_cmd("tree set", NETAGG_CMD_TREE_SET, kws, ARRAY_SIZE(kws),
		      argc, argv);
}

static int cmd_tree_del(int argc, char **argv)
{
	static const struct kw kws[] = { KW_JOB, KW_TREE };

	return kw_cmd("tree del", NETAGG_CMD_TREE_DEL, kws, ARRAY_SIZE(kws),
		      argc, argv);
}

/*
 * show and stats: the namespace (NS_GET), with @xdp where the XDP hook is
 * attached, then a dump of every job.
 */
static int ns_and_jobs(netagg_reply_fn ns_fn, uint8_t dump_cmd, netagg_reply_fn job_fn,
		       void *arg, bool xdp)
{
	int rc;

	netagg_out_open(NULL, '{');
	rc = netagg_transact(netagg_request(NETAGG_CMD_NS_GET, NLM_F_ACK), ns_fn, NULL);
	if (rc)
		return rc;
	if (xdp)
		netagg_xdp_show();
	netagg_out_open("jobs", '[');
	rc = netagg_transact(netagg_request(dump_cmd, NLM_F_DUMP), job_fn, arg);
	netagg_out_close(']');
	netagg_out_close('}');
	return rc;
}

static int cmd_show(int argc, char **argv)
{
	no_more_args("show", argc, argv);
	return ns_and_jobs(netagg_print_ns_usage, NETAGG_CMD_JOB_GET, netagg_print_job, NULL,
			   true);
}

static int cmd_stats(int argc, char **argv)
{
	static const char *const formats[] = { "text", "prometheus" };
	struct netagg_job_filter f = { 0 };
	unsigned int format = 0;
	int rc;

	/* STATS_GET is a plain dump: "job JID" filters on our side. */
	for (; argc > 0; argc -= 2, argv += 2) {
		if (strcmp(argv[0], "job") && strcmp(argv[0], "format"))
			netagg_usage_error("stats: unknown argument \"%s\"", argv[0]);
		if (argc < 2)
			netagg_usage_error("stats: missing value after \"%s\"", argv[0]);
		if (!strcmp(argv[0], "format")) {
			format = netagg_parse_name("format", argv[1], formats,
						   ARRAY_SIZE(formats), false);
			continue;
		}
		f.on = true;
		f.jid = netagg_parse_num("JID", argv[1], 0, UINT32_MAX);
	}
	if (format == 1) {
		if (netagg_out_json())
			netagg_usage_error("stats: format prometheus is text, not JSON (-j)");
		return netagg_prom_stats(f.on, f.jid);
	}
	rc = ns_and_jobs(netagg_print_ns_stats, NETAGG_CMD_STATS_GET, netagg_print_job_stats,
			 &f, false);
	if (!rc && f.on && !f.found) {
		netagg_line_prefix();
		fprintf(stderr, "Error: job %" PRIu32 " not found\n", f.jid);
		return NETAGG_EXIT_FAIL;
	}
	return rc;
}

static int cmd_reset(int argc, char **argv)
{
	static const struct kw kws[] = {
		KW("job", NETAGG_A_JOB_ID, V_U32, "JID"),
		KW("tree", NETAGG_A_TREE_ID, V_U16, "TID"),
	};
	struct nl_msg *msg = netagg_request(NETAGG_CMD_RESET, NLM_F_ACK);

	if (parse_kws("reset", kws, ARRAY_SIZE(kws), argc, argv, msg) == 2)
		netagg_usage_error("reset: \"tree\" needs \"job\"");
	return netagg_transact(msg, NULL, NULL);
}

static int cmd_set(int argc, char **argv)
{
	static const struct kw kws[] = {
		KW("max-jobs", NETAGG_A_MAX_JOBS, V_U32, "max-jobs"),
		KW("mem-limit", NETAGG_A_MEM_LIMIT, V_SIZE, "mem-limit"),
		KW("dscp", NETAGG_A_DSCP, V_U8, "dscp"),
		KW("port", NETAGG_A_PORT, V_U16, "port"),
	};
	struct nl_msg *msg = netagg_request(NETAGG_CMD_NS_SET, NLM_F_ACK);

	if (!parse_kws("set", kws, ARRAY_SIZE(kws), argc, argv, msg))
		netagg_usage_error("set: nothing to set");
	return netagg_transact(msg, NULL, NULL);
}


/* monitor: the module's events (NETAGG_CMD_EVENT on the events group). */
struct monitor {
	uint64_t left;		/* events still to print; 0: no end */
	bool counted;
};

static int on_event(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct genlmsghdr *gnlh = nlmsg_data(nlh);
	struct nlattr *tb[NETAGG_A_MAX + 1];
	struct monitor *m = arg;

	/* Anything else on the group is a newer module's: not ours to read. */
	if (gnlh->cmd != NETAGG_CMD_EVENT ||
	    genlmsg_parse(nlh, 0, tb, NETAGG_A_MAX, netagg_reply_policy) < 0 ||
	    !tb[NETAGG_A_EVENT])
		return NL_OK;
	netagg_print_event(tb);
	fflush(netagg_out_file());
	if (m->counted && !--m->left)
		return NL_STOP;
	return NL_OK;
}

/* Like ip monitor: each event as it comes, on stdout at once. */
static int cmd_monitor(int argc, char **argv)
{
	struct monitor m = { 0 };
	struct nl_sock *msk;
	FILE *saved;
	int grp, err;

	if (argc > 0) {
		if (strcmp(argv[0], "count"))
			netagg_usage_error("monitor: unknown argument \"%s\"", argv[0]);
		if (argc < 2)
			netagg_usage_error("monitor: missing value after \"count\"");
		m.left = netagg_parse_num("count", argv[1], 0, UINT64_MAX);
		if (!m.left)
			netagg_usage_error("monitor: count must be at least 1");
		m.counted = true;
		no_more_args("monitor", argc - 2, argv + 2);
	}
	/* says so if the module is not loaded */
	grp = genl_ctrl_resolve_grp(netagg_nl_sock(), NETAGG_GENL_NAME, NETAGG_MCGRP_EVENTS);
	if (grp < 0)
		netagg_fatal(nl_geterror(grp));
	msk = nl_socket_alloc();
	if (!msk)
		netagg_fatal(strerror(ENOMEM));
	err = genl_connect(msk);
	if (!err)
		err = nl_socket_add_membership(msk, grp);
	if (err < 0) {
		nl_socket_free(msk);
		netagg_fatal(nl_geterror(err));
	}
	/* Events are not answers: no sequence numbers to match. */
	nl_socket_disable_seq_check(msk);
	nl_socket_modify_cb(msk, NL_CB_VALID, NL_CB_CUSTOM, on_event, &m);

	saved = netagg_out_swap(stdout);
	do
		err = nl_recvmsgs_default(msk);
	while (err >= 0 && !(m.counted && !m.left));
	netagg_out_swap(saved);
	nl_socket_free(msk);
	if (err < 0 && !(m.counted && !m.left)) {
		netagg_line_prefix();
		fprintf(stderr, "Error: %s\n", nl_geterror(err));
		return NETAGG_EXIT_FAIL;
	}
	return NETAGG_EXIT_OK;
}

static int cmd_help(int argc, char **argv)
{
	no_more_args("help", argc, argv);
	netagg_usage(stdout);
	return NETAGG_EXIT_OK;
}

/*
 * "netagg OBJECT help" (@argv: OBJECT help): the usage's lines of OBJECT's
 * commands, each with the lines that continue it.
 */
static int cmd_object_help(int argc, char **argv)
{
	size_t olen = strlen(argv[0]);
	char *text = NULL, *line, *save;
	bool ours = false;
	size_t size = 0;
	FILE *f;

	no_more_args("help", argc - 2, argv + 2);
	f = open_memstream(&text, &size);
	if (!f) {
		perror("netagg");
		return NETAGG_EXIT_FAIL;
	}
	netagg_usage(f);
	fclose(f);
	printf("Usage:\n");
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "  netagg ", 9))
			ours = !strncmp(line + 9, argv[0], olen) &&
			       (line[9 + olen] == ' ' || !line[9 + olen]);
		else if (strncmp(line, "          ", 10))
			ours = false;	/* not a continuation */
		if (ours)
			printf("%s\n", line);
	}
	free(text);
	return NETAGG_EXIT_OK;
}

static const struct cmd {
	const char *object;
	const char *verb;	/* NULL: the object alone is the command */
	netagg_cmd_fn run;
} cmds[] = {
	{ "job", "add", cmd_job_add },
	{ "job", "del", cmd_job_del },
	{ "job", "show", cmd_job_show },
	{ "tree", "add", cmd_tree_add },
	{ "tree", "set", cmd_tree_set },
	{ "tree", "del", cmd_tree_del },
	{ "show", NULL, cmd_show },
	{ "stats", NULL, cmd_stats },
	{ "reset", NULL, cmd_reset },
	{ "set", NULL, cmd_set },
	{ "monitor", NULL, cmd_monitor },
	{ "xdp", "attach", netagg_cmd_xdp_attach },
	{ "xdp", "detach", netagg_cmd_xdp_detach },
	{ "xdp", "show", netagg_cmd_xdp_show },
	{ "help", NULL, cmd_help },
};

netagg_cmd_fn netagg_find_cmd(int argc, char **argv, int *words)
{
	const struct cmd *c;
	bool object = false;

	for (c = cmds; c < cmds + ARRAY_SIZE(cmds); c++) {
		if (strcmp(argv[0], c->object))
			continue;
		object = true;
		/* "OBJECT help", of any object but help itself */
		if (argc > 1 && !strcmp(argv[1], "help") && strcmp(argv[0], "help")) {
			*words = 0;
			return cmd_object_help;
		}
		if (!c->verb) {
			*words = 1;
			return c->run;
		}
		if (argc > 1 && !strcmp(argv[1], c->verb)) {
			*words = 2;
			return c->run;
		}
	}
	if (!object)
		netagg_usage_error("unknown object \"%s\" (try \"netagg help\")",
				   argv[0]);
	/* The object alone: its show command, as "ip link" is "ip link show". */
	for (c = cmds; argc == 1 && c < cmds + ARRAY_SIZE(cmds); c++)
		if (!strcmp(argv[0], c->object) && !strcmp(c->verb, "show")) {
			*words = 1;
			return c->run;
		}
	if (argc < 2)
		netagg_usage_error("%s: missing command (try \"netagg %s help\")",
				   argv[0], argv[0]);
	netagg_usage_error("unknown %s command \"%s\" (try \"netagg %s help\")",
			   argv[0], argv[1], argv[0]);
}


// SPDX-License-Identifier: GPL-2.0
/*
 * netagg - configure and inspect in-network gradient aggregation through
 * the "netagg" generic netlink family (see uapi/linux/netagg.h).
 *
 * Exit codes: 0 success, 1 usage error, 2 error from the kernel (or no
 * kernel module). The whole command line is parsed before the netlink
 * socket is opened, so usage errors never depend on the module.
 *
 * Batch mode (-b FILE, like "ip -batch") runs one command per line of FILE
 * over one netlink socket: each line is parsed, then sent, before the next
 * is read. Errors then name the line ("netagg: line N: ..."); the first
 * failing line ends the batch with its exit code, unless -force is given:
 * then every line runs and the exit code is that of the first failure.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <linux/netagg.h>

#include "extack.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

enum { EXIT_OK, EXIT_USAGE, EXIT_KERNEL };

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *const dtype_names[] = {
	[NETAGG_DTYPE_F32] = "f32",
	[NETAGG_DTYPE_I32] = "i32",
	[NETAGG_DTYPE_F16] = "f16",
	[NETAGG_DTYPE_BF16] = "bf16",
};
static const char *const op_names[] = {
	[NETAGG_OP_SUM] = "sum",
	[NETAGG_OP_AVG] = "avg",
};
static const char *const role_names[] = {
	[NETAGG_ROLE_ROOT] = "root",
	[NETAGG_ROLE_AGGREGATOR] = "aggregator",
};
/* Designated initialisers keep the names tied to the enum values. */
static const char *const stat_names[] = {
	[NETAGG_STAT_NS_SEEN] = "ns_seen",
	[NETAGG_STAT_NS_UNKNOWN_JOB] = "ns_unknown_job",
	[NETAGG_STAT_NS_FRAGMENT] = "ns_fragment",
	[NETAGG_STAT_NS_SHORT] = "ns_short",
	[NETAGG_STAT_RX] = "rx",
	[NETAGG_STAT_AGGREGATED] = "aggregated",
	[NETAGG_STAT_EMITTED_UP] = "emitted_up",
	[NETAGG_STAT_FANNED_OUT] = "fanned_out",
	[NETAGG_STAT_RESULTS_RX] = "results_rx",
	[NETAGG_STAT_DUPLICATE] = "duplicate",
	[NETAGG_STAT_FIN] = "fin",
	[NETAGG_STAT_DROP_SHORT] = "drop_short",
	[NETAGG_STAT_DROP_VERSION] = "drop_version",
	[NETAGG_STAT_DROP_DTYPE] = "drop_dtype",
	[NETAGG_STAT_DROP_LENGTH] = "drop_length",
	[NETAGG_STAT_NO_TREE] = "no_tree",
	[NETAGG_STAT_DROP_NOT_CHILD] = "drop_not_child",
	[NETAGG_STAT_DROP_NOT_PARENT] = "drop_not_parent",
	[NETAGG_STAT_DROP_WINDOW] = "drop_window",
	[NETAGG_STAT_DROP_CSUM] = "drop_csum",
	[NETAGG_STAT_DROP_NOMEM] = "drop_nomem",
	[NETAGG_STAT_DROP_ROUND] = "drop_round",
	[NETAGG_STAT_RESENT] = "resent",
	[NETAGG_STAT_ROUNDS] = "rounds",
	[NETAGG_STAT_ABANDONED] = "abandoned",
	[NETAGG_STAT_REUSED] = "reused",
	[NETAGG_STAT_REGROUPED] = "regrouped",
	[NETAGG_STAT_DROP_SEGMENT] = "drop_segment",
	[NETAGG_STAT_SUPER_RX] = "super_rx",
	[NETAGG_STAT_SUPER_TX] = "super_tx",
	[NETAGG_STAT_PROBED] = "probed",
	[NETAGG_STAT_DROP_PROBE] = "drop_probe",
	[NETAGG_STAT_PARTIAL] = "partial",
	[NETAGG_STAT_DROP_LATE] = "drop_late",
	[NETAGG_STAT_EVICTED] = "evicted",
	[NETAGG_STAT_REJOINED] = "rejoined",
	[NETAGG_STAT_DROP_EVICTED] = "drop_evicted",
	[NETAGG_STAT_PARENT_LOST] = "parent_lost",
};
static const char *const event_names[] = {
	[NETAGG_EVENT_CHILD_EVICTED] = "child-evicted",
	[NETAGG_EVENT_CHILD_REJOINED] = "child-rejoined",
	[NETAGG_EVENT_PARENT_LOST] = "parent-lost",
	[NETAGG_EVENT_PARENT_BACK] = "parent-back",
};

/* Name of value v in a table, or its number (after prefix) if unnamed. */
static const char *name_of(const char *const *names, size_t n, unsigned int v,
			   const char *prefix, char *buf, size_t size)
{
	if (v < n && names[v])
		return names[v];
	snprintf(buf, size, "%s%u", prefix, v);
	return buf;
}

static void usage(FILE *f)
{
	fputs("Usage: netagg [-j] [-p] OBJECT COMMAND [ARGS]\n"
	      "       netagg [-j] [-p] [-force] -b FILE\n"
	      "  netagg job add JID [dtype f32|i32|f16|bf16] [op sum|avg] [window N] [mtu N] [memcap SIZE]\n"
	      "  netagg job del JID\n"
	      "  netagg job show [JID]\n"
	      "  netagg tree add job JID tree TID role root|aggregator [parent ADDR] child ADDR [child ADDR]...\n"
	      "                  [quorum N|N%|all] [straggler MS] [evict MS]\n"
	      "  netagg tree set job JID tree TID [parent ADDR] [child ADDR]... [quorum N|N%|all] [straggler MS]\n"
	      "                  [evict MS]\n"
	      "  netagg tree del job JID tree TID\n"
	      "  netagg show\n"
	      "  netagg stats [job JID]\n"
	      "  netagg reset [job JID [tree TID]]\n"
	      "  netagg set [max-jobs N] [mem-limit SIZE]\n"
	      "  netagg monitor [count N]\n"
	      "  netagg help\n"
	      "Options: -j JSON output, -p pretty JSON (implies -j).\n"
	      "  -b, --batch FILE  run the commands in FILE (- for stdin), one per line\n"
	      "                    (OBJECT COMMAND [ARGS], # starts a comment)\n"
	      "  -force, --force   in batch mode, go on after a failing command\n"
	      "SIZE: bytes with an optional K, M or G suffix (1K = 1024).\n"
	      "quorum: children whose contributions complete a VID (N, N% of them, or all,\n"
	      "  the default); straggler: ms to wait for the others once the quorum is in.\n"
	      "evict: take out a child silent for MS ms while the tree waits for it (0: never,\n"
	      "  the default). monitor: print the module's events as they come (N: stop after N).\n", f);
}

/* Batch mode: the line being run (0 outside batch mode), and where a usage
 * error goes back to: the batch loop, which reports it and, with -force,
 * goes on with the next line.
 */
static unsigned long lineno;
static jmp_buf *usage_jmp;

/* In batch mode every message to stderr first says which line it is about. */
static void line_prefix(void)
{
	if (lineno)
		fprintf(stderr, "netagg: line %lu: ", lineno);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	va_list ap;

	if (lineno)
		line_prefix();
	else
		fputs("netagg: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (usage_jmp)
		longjmp(*usage_jmp, 1);
	exit(EXIT_USAGE);
}

/* Failures outside the command line are reported like kernel errors. They
 * end a batch even with -force: no memory or no socket (no module) would
 * fail the next lines too.
 */
static void __attribute__((noreturn)) fatal(const char *msg)
{
	line_prefix();
	fprintf(stderr, "Error: %s\n", msg);
	exit(EXIT_KERNEL);
}

/* ------------------------------------------------------------------------
 * Output. Every printer calls the same out_*() functions; they render text
 * or JSON. Output is collected in memory and only written when the command
 * succeeded, so an error half-way through a dump leaves stdout empty rather
 * than holding truncated JSON.
 */
static FILE *out;
static bool json, pretty;
static bool bol = true;		/* text: nothing printed on this line yet */
static int jdepth;		/* JSON: open containers */
static bool jempty[16];		/* JSON: container at that depth is empty */

static void j_newline(void)
{
	if (pretty) {
		fputc('\n', out);
		for (int i = 0; i < jdepth; i++)
			fputs("    ", out);
	}
}

static void j_string(const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

/* Start a JSON value: comma, indentation and, inside an object, the key. */
static void j_value(const char *key)
{
	if (jdepth > 0) {
		if (!jempty[jdepth])
			fputc(',', out);
		jempty[jdepth] = false;
		j_newline();
	}
	if (key) {
		j_string(key);
		fputs(pretty ? ": " : ":", out);
	}
}

/* JSON only: open an object ('{') or array ('['); key is NULL in arrays. */
static void out_open(const char *key, char bracket)
{
	if (!json)
		return;
	if (jdepth + 1 >= (int)ARRAY_SIZE(jempty))
		abort();	/* the nesting of our output is fixed and small */
	j_value(key);
	fputc(bracket, out);
	jempty[++jdepth] = true;
}

static void out_close(char bracket)
{
	if (!json)
		return;
	jdepth--;
	if (!jempty[jdepth + 1])
		j_newline();
	fputc(bracket, out);
	if (jdepth == 0)
		fputc('\n', out);
}

/* Text only: start a line indented by tabs, end it, print literal text. */
static void out_line(int tabs)
{
	if (json)
		return;
	while (tabs--)
		fputc('\t', out);
	bol = true;
}

static void out_eol(void)
{
	if (json)
		return;
	fputc('\n', out);
	bol = true;
}

static void out_text(const char *s)
{
	if (json)
		return;
	fputs(s, out);
	bol = false;
}

/* Text fields are "name value", separated by one space. */
static void t_field(const char *name)
{
	fprintf(out, "%s%s ", bol ? "" : " ", name);
	bol = false;
}

static void out_u64(const char *key, const char *name, uint64_t v)
{
	if (json)
		j_value(key);
	else
		t_field(name);
	fprintf(out, "%" PRIu64, v);
}

/* Like out_u64, but the text form is hexadecimal (bitmaps). */
static void out_hex(const char *key, const char *name, uint64_t v)
{
	if (json) {
		out_u64(key, name, v);
		return;
	}
	t_field(name);
	fprintf(out, "0x%" PRIx64, v);
}

/* JSON true or false, "yes" or "no" in text. */
static void out_bool(const char *key, const char *name, bool v)
{
	if (json)
		j_value(key);
	else
		t_field(name);
	fputs(json ? (v ? "true" : "false") : (v ? "yes" : "no"), out);
}

/* s == NULL is JSON null, "-" in text. */
static void out_str(const char *key, const char *name, const char *s)
{
	if (!json) {
		t_field(name);
		fputs(s ? s : "-", out);
		return;
	}
	j_value(key);
	if (s)
		j_string(s);
	else
		fputs("null", out);
}

/* ------------------------------------------------------------------------
 * Reading replies.
 */
static struct nla_policy policy[NETAGG_A_MAX + 1] = {
	[NETAGG_A_JOB_ID] = { .type = NLA_U32 },
	[NETAGG_A_DTYPE] = { .type = NLA_U8 },
	[NETAGG_A_OP] = { .type = NLA_U8 },
	[NETAGG_A_WINDOW] = { .type = NLA_U32 },
	[NETAGG_A_MTU] = { .type = NLA_U32 },
	[NETAGG_A_MEM_CAP] = { .type = NLA_U64 },
	[NETAGG_A_MEM_USED] = { .type = NLA_U64 },
	[NETAGG_A_TREE_ID] = { .type = NLA_U16 },
	[NETAGG_A_ROLE] = { .type = NLA_U8 },
	[NETAGG_A_PARENT] = { .type = NLA_U32 },
	[NETAGG_A_CHILD] = { .type = NLA_U32 },
	[NETAGG_A_BITMAP] = { .type = NLA_U64 },
	[NETAGG_A_EXPECTED_VID] = { .type = NLA_U32 },
	[NETAGG_A_TREE] = { .type = NLA_NESTED },
	[NETAGG_A_STATS] = { .type = NLA_NESTED },
	[NETAGG_A_MAX_JOBS] = { .type = NLA_U32 },
	[NETAGG_A_NUM_JOBS] = { .type = NLA_U32 },
	[NETAGG_A_MEM_LIMIT] = { .type = NLA_U64 },
	[NETAGG_A_ROUND] = { .type = NLA_U16 },
	[NETAGG_A_ROUND_ENDED] = { .type = NLA_FLAG },
	[NETAGG_A_ROUND_REGROUPED] = { .type = NLA_FLAG },
	[NETAGG_A_QUORUM] = { .type = NLA_U16 },
	[NETAGG_A_QUORUM_PCT] = { .type = NLA_U8 },
	[NETAGG_A_STRAGGLER_MS] = { .type = NLA_U32 },
	[NETAGG_A_EVICT_MS] = { .type = NLA_U32 },
	[NETAGG_A_EVICTED] = { .type = NLA_U32 },
	[NETAGG_A_PARENT_LOST] = { .type = NLA_FLAG },
	[NETAGG_A_EVENT] = { .type = NLA_U8 },
	[NETAGG_A_SILENT_MS] = { .type = NLA_U32 },
};

/* An unsigned attribute of any width; the policy checked the minimum. */
static uint64_t attr_uint(const struct nlattr *a)
{
	switch (nla_len(a)) {
	case 1: return nla_get_u8(a);
	case 2: return nla_get_u16(a);
	case 4: return nla_get_u32(a);
	default: return nla_get_u64(a);
	}
}

static void print_uint(struct nlattr **tb, int attr, const char *key,
		       const char *name)
{
	if (tb[attr])
		out_u64(key, name, attr_uint(tb[attr]));
}

static void print_name(struct nlattr **tb, int attr, const char *key,
		       const char *const *names, size_t n)
{
	char buf[16];

	if (tb[attr])
		out_str(key, key, name_of(names, n, nla_get_u8(tb[attr]), "",
					  buf, sizeof(buf)));
}

/* Addresses travel as be32: the u32 payload is already in network order. */
static const char *addr_str(const struct nlattr *a, char *buf)
{
	struct in_addr in = { .s_addr = nla_get_u32(a) };

	return inet_ntop(AF_INET, &in, buf, INET_ADDRSTRLEN);
}

static void print_counters(const struct nlattr *stats)
{
	const struct nlattr *a;
	char buf[24];
	int rem;

	if (!stats)
		return;
	nla_for_each_nested(a, stats, rem) {
		const char *name = name_of(stat_names, ARRAY_SIZE(stat_names),
					   nla_type(a), "stat", buf,
					   sizeof(buf));
		out_u64(name, name, attr_uint(a));
	}
}

/* A reply handler gets the parsed attributes and, for repeated ones, the
 * raw attribute stream of the message.
 */
typedef void (*reply_fn)(struct nlattr **tb, struct nlattr *attrs, int len,
			 void *arg);

/* The n-th CHILD of a tree holds the n-th set bit of its BITMAP. */
static void print_tree(struct nlattr *nest)
{
	struct nlattr *tb[NETAGG_A_MAX + 1], *a;
	char addr[INET_ADDRSTRLEN];
	uint64_t bitmap;
	int rem, bit = -1;

	if (nla_parse_nested(tb, NETAGG_A_MAX, nest, policy) < 0)
		return;
	bitmap = tb[NETAGG_A_BITMAP] ? nla_get_u64(tb[NETAGG_A_BITMAP]) : 0;

	out_open(NULL, '{');
	out_line(1);
	print_uint(tb, NETAGG_A_TREE_ID, "tid", "tree");
	print_name(tb, NETAGG_A_ROLE, "role", role_names,
		   ARRAY_SIZE(role_names));
	/* A root has no parent: the kernel leaves the attribute out. */
	out_str("parent", "parent", tb[NETAGG_A_PARENT] &&
		nla_get_u32(tb[NETAGG_A_PARENT]) ?
		addr_str(tb[NETAGG_A_PARENT], addr) : NULL);
	/* No round before the first contribution; ended: its FIN completed. */
	if (tb[NETAGG_A_ROUND])
		print_uint(tb, NETAGG_A_ROUND, "round", "round");
	else
		out_str("round", "round", NULL);
	out_str("round_state", "round-state", !tb[NETAGG_A_ROUND] ? "none" :
		tb[NETAGG_A_ROUND_ENDED] ? "ended" : "running");
	/* Its results sum different sets of workers. */
	out_bool("regrouped", "regrouped", tb[NETAGG_A_ROUND_REGROUPED]);
	print_uint(tb, NETAGG_A_EXPECTED_VID, "expected_vid", "expected-vid");
	/* Partial aggregation: quorum 0 is every child ("all"). */
	if (tb[NETAGG_A_QUORUM_PCT]) {
		print_uint(tb, NETAGG_A_QUORUM_PCT, "quorum_pct", "quorum-pct");
	} else if (tb[NETAGG_A_QUORUM]) {
		if (nla_get_u16(tb[NETAGG_A_QUORUM]))
			print_uint(tb, NETAGG_A_QUORUM, "quorum", "quorum");
		else
			out_str("quorum", "quorum", "all");
	}
	print_uint(tb, NETAGG_A_STRAGGLER_MS, "straggler_ms", "straggler-ms");
	print_uint(tb, NETAGG_A_EVICT_MS, "evict_ms", "evict-ms");
	if (tb[NETAGG_A_ROLE] &&
	    nla_get_u8(tb[NETAGG_A_ROLE]) == NETAGG_ROLE_AGGREGATOR)
		out_bool("parent_lost", "parent-lost", tb[NETAGG_A_PARENT_LOST]);
	if (tb[NETAGG_A_BITMAP])
		out_hex("bitmap", "bitmap", bitmap);
	print_uint(tb, NETAGG_A_MEM_USED, "mem_used", "memused");
	out_eol();

	out_open("children", '[');
	nla_for_each_nested(a, nest, rem) {
		if (nla_type(a) != NETAGG_A_CHILD || nla_len(a) < 4)
			continue;
		do
			bit++;
		while (bit < 64 && !(bitmap & (1ULL << bit)));
		out_open(NULL, '{');
		out_line(2);
		out_str("addr", "child", addr_str(a, addr));
		if (bit < 64)
			out_u64("bit", "bit", bit);
		else
			out_str("bit", "bit", NULL);	/* bitmap too short */
		out_eol();
		out_close('}');
	}
	out_close(']');
	/* Out of the tree until they send again or are added again. */
	out_open("evicted", '[');
	nla_for_each_nested(a, nest, rem) {
		if (nla_type(a) != NETAGG_A_EVICTED || nla_len(a) < 4)
			continue;
		out_open(NULL, '{');
		out_line(2);
		out_str("addr", "evicted", addr_str(a, addr));
		out_eol();
		out_close('}');
	}
	out_close(']');
	out_close('}');
}

static void print_job(struct nlattr **tb, struct nlattr *attrs, int len,
		      void *arg)
{
	struct nlattr *a;
	int rem;

	(void)arg;
	out_open(NULL, '{');
	out_line(0);
	print_uint(tb, NETAGG_A_JOB_ID, "jid", "job");
	print_name(tb, NETAGG_A_DTYPE, "dtype", dtype_names,
		   ARRAY_SIZE(dtype_names));
	print_name(tb, NETAGG_A_OP, "op", op_names, ARRAY_SIZE(op_names));
	print_uint(tb, NETAGG_A_WINDOW, "window", "window");
	print_uint(tb, NETAGG_A_MTU, "mtu", "mtu");
	print_uint(tb, NETAGG_A_MEM_CAP, "mem_cap", "memcap");
	print_uint(tb, NETAGG_A_MEM_USED, "mem_used", "memused");
	out_eol();
	out_open("trees", '[');
	nla_for_each_attr(a, attrs, len, rem)
		if (nla_type(a) == NETAGG_A_TREE)
			print_tree(a);
	out_close(']');
	out_close('}');
}

static uint64_t get_uint(struct nlattr **tb, int attr)
{
	return tb[attr] ? attr_uint(tb[attr]) : 0;
}

static void print_ns_usage(struct nlattr **tb, struct nlattr *attrs, int len,
			   void *arg)
{
	(void)attrs, (void)len, (void)arg;
	if (!json) {
		fprintf(out, "namespace: jobs %" PRIu64 "/%" PRIu64
			" memory %" PRIu64 "/%" PRIu64 "\n",
			get_uint(tb, NETAGG_A_NUM_JOBS),
			get_uint(tb, NETAGG_A_MAX_JOBS),
			get_uint(tb, NETAGG_A_MEM_USED),
			get_uint(tb, NETAGG_A_MEM_LIMIT));
		return;
	}
	out_open("namespace", '{');
	print_uint(tb, NETAGG_A_MAX_JOBS, "max_jobs", NULL);
	print_uint(tb, NETAGG_A_NUM_JOBS, "num_jobs", NULL);
	print_uint(tb, NETAGG_A_MEM_LIMIT, "mem_limit", NULL);
	print_uint(tb, NETAGG_A_MEM_USED, "mem_used", NULL);
	out_close('}');
}

static void print_ns_stats(struct nlattr **tb, struct nlattr *attrs, int len,
			   void *arg)
{
	(void)attrs, (void)len, (void)arg;
	out_open("namespace", '{');
	out_line(0);
	out_text("namespace:");
	print_counters(tb[NETAGG_A_STATS]);
	out_eol();
	out_close('}');
}

/* "job 7: rx 1 ..." / {"jid":7,"stats":{"rx":1,...}: one entity's counters. */
static void print_stats_line(struct nlattr **tb, int tabs, int id_attr,
			     const char *key, const char *name)
{
	out_line(tabs);
	print_uint(tb, id_attr, key, name);
	out_text(":");
	out_open("stats", '{');
	print_counters(tb[NETAGG_A_STATS]);
	out_close('}');
	out_eol();
}

struct job_filter {
	bool on;
	uint32_t jid;
	bool found;
};

static void print_job_stats(struct nlattr **tb, struct nlattr *attrs,
			    int len, void *arg)
{
	struct job_filter *f = arg;
	struct nlattr *a, *ttb[NETAGG_A_MAX + 1];
	int rem;

	if (f->on && (!tb[NETAGG_A_JOB_ID] ||
		      nla_get_u32(tb[NETAGG_A_JOB_ID]) != f->jid))
		return;
	f->found = true;

	out_open(NULL, '{');
	print_stats_line(tb, 0, NETAGG_A_JOB_ID, "jid", "job");
	out_open("trees", '[');
	nla_for_each_attr(a, attrs, len, rem) {
		if (nla_type(a) != NETAGG_A_TREE ||
		    nla_parse_nested(ttb, NETAGG_A_MAX, a, policy) < 0)
			continue;
		out_open(NULL, '{');
		print_stats_line(ttb, 1, NETAGG_A_TREE_ID, "tid", "tree");
		out_close('}');
	}
	out_close(']');
	out_close('}');
}

/* ------------------------------------------------------------------------
 * Netlink transactions.
 */
static struct nl_sock *sk;
static int family;

/* Connect on first use, so that usage errors never need the module. */
static void nl_open(void)
{
	int one = 1, err;

	if (sk)
		return;
	sk = nl_socket_alloc();
	if (!sk)
		fatal(strerror(ENOMEM));
	err = genl_connect(sk);
	if (err < 0)
		fatal(nl_geterror(err));
	/* Extended ack makes the kernel explain a refusal in words. This is
	 * what nl_socket_set_ext_ack() does, which libnl only grew after
	 * 3.7; a kernel without it just gives us plain errnos.
	 */
	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_EXT_ACK, &one,
		   sizeof(one));
	/* A job with many trees may not fit a page: size reads by peeking. */
	nl_socket_enable_msg_peek(sk);

	family = genl_ctrl_resolve(sk, NETAGG_GENL_NAME);
	if (family == -NLE_OBJ_NOTFOUND)
		fatal("netagg module not loaded (generic netlink family \""
		      NETAGG_GENL_NAME "\" not found)");
	if (family < 0)
		fatal(nl_geterror(family));
}

struct xfer {
	reply_fn parse;
	void *arg;
	bool done;		/* final ack, error or end of dump seen */
	int err;		/* errno the kernel answered with */
	char msg[256];		/* and its extack message, if any */
};

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)e - 1;
	struct xfer *x = arg;

	(void)nla;
	x->err = -e->error;
	netagg_extack_msg(nlh, netagg_nlmsgerr_tlv_offset(nlh), x->msg, sizeof(x->msg));
	x->done = true;
	return NL_STOP;
}

/* A success ack may carry a warning in the same TLVs. */
static int on_ack(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct xfer *x = arg;
	char warn[256] = "";

	netagg_extack_msg(nlh, netagg_nlmsgerr_tlv_offset(nlh), warn, sizeof(warn));
	if (warn[0]) {
		line_prefix();
		fprintf(stderr, "Warning: %s\n", warn);
	}
	x->done = true;
	return NL_STOP;
}

/* A failing dump ends in NLMSG_DONE carrying the errno and, after it, the
 * extack TLVs; libnl does not look at either, so we do.
 */
static int on_finish(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct xfer *x = arg;
	int err;

	if (nlh->nlmsg_len >= NLMSG_HDRLEN + sizeof(err)) {
		memcpy(&err, nlmsg_data(nlh), sizeof(err));
		if (err < 0) {
			x->err = -err;
			netagg_extack_msg(nlh, NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(err)),
					  x->msg, sizeof(x->msg));
		}
	}
	x->done = true;
	return NL_STOP;
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct genlmsghdr *gnlh = nlmsg_data(nlh);
	struct nlattr *tb[NETAGG_A_MAX + 1];
	struct xfer *x = arg;

	if (genlmsg_parse(nlh, 0, tb, NETAGG_A_MAX, policy) < 0) {
		x->err = EBADMSG;
		snprintf(x->msg, sizeof(x->msg), "malformed reply from the kernel");
		return NL_OK;	/* keep reading up to the ack */
	}
	if (x->parse)
		x->parse(tb, genlmsg_attrdata(gnlh, 0),
			 genlmsg_attrlen(gnlh, 0), x->arg);
	return NL_OK;
}

/* The request being built, until transact() sends it: what a usage error
 * in batch mode leaves behind for the batch loop to free.
 */
static struct nl_msg *pending;

/* Build a request. The family id is only known once connected, so it is
 * filled in by transact(): the command line is parsed straight into msg.
 */
static struct nl_msg *request(uint8_t cmd, int flags)
{
	/* Roomier than a page: a tree may list many children. */
	struct nl_msg *msg = nlmsg_alloc_size(32768);

	if (!msg || !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, 0, 0, flags,
				 cmd, NETAGG_GENL_VERSION))
		fatal(strerror(ENOMEM));
	pending = msg;
	return msg;
}

/* Send msg (and free it), hand every reply to parse and wait for the final
 * ack or the end of the dump. Prints the error; returns an exit code.
 */
static int transact(struct nl_msg *msg, reply_fn parse, void *arg)
{
	struct xfer x = { .parse = parse, .arg = arg };
	struct nl_cb *cb;
	int err;

	nl_open();
	nlmsg_hdr(msg)->nlmsg_type = family;
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb)
		fatal(strerror(ENOMEM));
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, &x);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, &x);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_finish, &x);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, &x);

	err = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	pending = NULL;
	while (err >= 0 && !x.done) {
		err = nl_recvmsgs(sk, cb);
		if (x.done)	/* our handlers' NL_STOP shows up as err */
			err = 0;
	}
	nl_cb_put(cb);
	if (err < 0) {
		line_prefix();
		fprintf(stderr, "Error: %s\n", nl_geterror(err));
		return EXIT_KERNEL;
	}
	if (x.err) {
		line_prefix();
		fprintf(stderr, "Error: %s\n", x.msg[0] ? x.msg : strerror(x.err));
		return EXIT_KERNEL;
	}
	return EXIT_OK;
}

/* ------------------------------------------------------------------------
 * Command line parsing: values go straight into the request.
 */
static uint64_t parse_num(const char *s, uint64_t max, const char *what)
{
	unsigned long long v;
	char *end;

	/* strtoull alone would take "-1", " 1" and "" */
	if (!isdigit((unsigned char)s[0]))
		usage_error("%s \"%s\" is not a number", what, s);
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end)
		usage_error("%s \"%s\" is not a number", what, s);
	if (errno == ERANGE || v > max)
		usage_error("%s %s is out of range (0-%" PRIu64 ")", what, s,
			    max);
	return v;
}

/* Bytes with an optional binary K/M/G suffix. */
static uint64_t parse_size(const char *s, const char *what)
{
	static const char suffixes[] = "KMG";
	size_t n = strlen(s);
	const char *p;
	char digits[32];
	unsigned int shift = 0;
	uint64_t v;

	if (n > 1 && (p = strchr(suffixes, toupper((unsigned char)s[n - 1])))) {
		shift = 10 * (p - suffixes + 1);
		n--;
	}
	if (n == 0 || n >= sizeof(digits))
		usage_error("%s \"%s\" is not a size", what, s);
	memcpy(digits, s, n);
	digits[n] = '\0';
	if (strspn(digits, "0123456789") != n)
		usage_error("%s \"%s\" is not a size", what, s);
	v = parse_num(digits, UINT64_MAX, what);
	if (v > (UINT64_MAX >> shift))
		usage_error("%s %s is out of range", what, s);
	return v << shift;
}

/* A name, or a number passed as is for the kernel to judge (like iproute2). */
static uint8_t parse_name(const char *s, const char *const *names, size_t n,
			  const char *what)
{
	char list[64] = "";

	if (isdigit((unsigned char)s[0]))
		return parse_num(s, UINT8_MAX, what);
	for (size_t i = 0; i < n; i++)
		if (names[i] && !strcmp(s, names[i]))
			return i;
	for (size_t i = 0; i < n; i++)
		if (names[i])
			snprintf(list + strlen(list), sizeof(list) - strlen(list),
				 "%s%s", list[0] ? ", " : "", names[i]);
	usage_error("unknown %s \"%s\" (%s)", what, s, list);
}

/* One keyword of a command: its value's syntax and the attribute it sets. */
struct kw {
	const char *name;
	int attr;
	enum { V_U16, V_U32, V_SIZE, V_ADDR, V_DTYPE, V_OP, V_ROLE, V_QUORUM } type;
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
				  parse_num(num, UINT8_MAX, what));
	}
	return nla_put_u16(msg, NETAGG_A_QUORUM, parse_num(s, UINT16_MAX, what));
}

static void put_value(struct nl_msg *msg, const struct kw *k, const char *s)
{
	struct in_addr in;
	int err = 0;

	switch (k->type) {
	case V_U16:
		err = nla_put_u16(msg, k->attr, parse_num(s, UINT16_MAX, k->what));
		break;
	case V_U32:
		err = nla_put_u32(msg, k->attr, parse_num(s, UINT32_MAX, k->what));
		break;
	case V_SIZE:
		err = nla_put_u64(msg, k->attr, parse_size(s, k->what));
		break;
	case V_ADDR:
		if (inet_pton(AF_INET, s, &in) != 1)
			usage_error("invalid %s \"%s\"", k->what, s);
		err = nla_put_u32(msg, k->attr, in.s_addr);	/* be32 */
		break;
	case V_DTYPE:
		err = nla_put_u8(msg, k->attr, parse_name(s, dtype_names,
				 ARRAY_SIZE(dtype_names), k->what));
		break;
	case V_OP:
		err = nla_put_u8(msg, k->attr, parse_name(s, op_names,
				 ARRAY_SIZE(op_names), k->what));
		break;
	case V_ROLE:
		err = nla_put_u8(msg, k->attr, parse_name(s, role_names,
				 ARRAY_SIZE(role_names), k->what));
		break;
	case V_QUORUM:
		err = put_quorum(msg, s, k->what);
		break;
	}
	if (err < 0)
		usage_error("request too large");
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
			usage_error("%s: unknown argument \"%s\"", cmd, argv[i]);
		if ((seen & (1U << k)) && !kws[k].repeat)
			usage_error("%s: duplicate \"%s\"", cmd, argv[i]);
		if (i + 1 >= argc)
			usage_error("%s: missing value after \"%s\"", cmd,
				    argv[i]);
		seen |= 1U << k;
		put_value(msg, &kws[k], argv[++i]);
	}
	for (size_t k = 0; k < n; k++)
		if (kws[k].required && !(seen & (1U << k)))
			usage_error("%s: missing \"%s\"", cmd, kws[k].name);
	return seen;
}

static const struct kw kw_jid = KW("job", NETAGG_A_JOB_ID, V_U32, "JID");

static void no_more_args(const char *cmd, int argc, char **argv)
{
	if (argc > 0)
		usage_error("%s: unknown argument \"%s\"", cmd, argv[0]);
}

/* ------------------------------------------------------------------------
 * Commands. argv holds the arguments after the command words.
 */
static int cmd_job_add(int argc, char **argv)
{
	static const struct kw kws[] = {
		KW("dtype", NETAGG_A_DTYPE, V_DTYPE, "dtype"),
		KW("op", NETAGG_A_OP, V_OP, "op"),
		KW("window", NETAGG_A_WINDOW, V_U32, "window"),
		KW("mtu", NETAGG_A_MTU, V_U32, "mtu"),
		KW("memcap", NETAGG_A_MEM_CAP, V_SIZE, "memcap"),
	};
	struct nl_msg *msg = request(NETAGG_CMD_JOB_NEW, NLM_F_ACK);

	if (argc < 1)
		usage_error("job add: missing JID");
	put_value(msg, &kw_jid, argv[0]);
	/* Only what the user gave: the kernel owns the defaults. */
	parse_kws("job add", kws, ARRAY_SIZE(kws), argc - 1, argv + 1, msg);
	return transact(msg, NULL, NULL);
}

static int cmd_job_del(int argc, char **argv)
{
	struct nl_msg *msg = request(NETAGG_CMD_JOB_DEL, NLM_F_ACK);

	if (argc < 1)
		usage_error("job del: missing JID");
	put_value(msg, &kw_jid, argv[0]);
	no_more_args("job del", argc - 1, argv + 1);
	return transact(msg, NULL, NULL);
}

static int cmd_job_show(int argc, char **argv)
{
	struct nl_msg *msg;
	int rc;

	if (argc > 0) {
		msg = request(NETAGG_CMD_JOB_GET, NLM_F_ACK);
		put_value(msg, &kw_jid, argv[0]);
		no_more_args("job show", argc - 1, argv + 1);
	} else {
		msg = request(NETAGG_CMD_JOB_GET, NLM_F_DUMP);
	}
	out_open(NULL, '{');
	out_open("jobs", '[');
	rc = transact(msg, print_job, NULL);
	out_close(']');
	out_close('}');
	return rc;
}

/* The keywords of the tree commands. */
#define KW_JOB	  KW("job", NETAGG_A_JOB_ID, V_U32, "JID", .required = true)
#define KW_TREE	  KW("tree", NETAGG_A_TREE_ID, V_U16, "TID", .required = true)
#define KW_PARENT KW("parent", NETAGG_A_PARENT, V_ADDR, "parent address")
#define KW_ROLE	  KW("role", NETAGG_A_ROLE, V_ROLE, "role")
/* Children go out in the order given; how many is the kernel's call. */
#define KW_CHILD  KW("child", NETAGG_A_CHILD, V_ADDR, "child address", \
		     .repeat = true)
#define KW_QUORUM KW("quorum", NETAGG_A_QUORUM, V_QUORUM, "quorum")
#define KW_STRAGGLER KW("straggler", NETAGG_A_STRAGGLER_MS, V_U32, \
			"straggler delay (ms)")
#define KW_EVICT  KW("evict", NETAGG_A_EVICT_MS, V_U32, "eviction time (ms)")

/* A change command made of keywords only. */
static int kw_cmd(const char *cmd, uint8_t nlcmd, const struct kw *kws,
		  size_t n, int argc, char **argv)
{
	struct nl_msg *msg = request(nlcmd, NLM_F_ACK);

	parse_kws(cmd, kws, n, argc, argv, msg);
	return transact(msg, NULL, NULL);
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

/* show and stats: the namespace (NS_GET), then a dump of every job. */
static int ns_and_jobs(reply_fn ns_fn, uint8_t dump_cmd, reply_fn job_fn,
		       void *arg)
{
	int rc;

	out_open(NULL, '{');
	rc = transact(request(NETAGG_CMD_NS_GET, NLM_F_ACK), ns_fn, NULL);
	if (rc)
		return rc;
	out_open("jobs", '[');
	rc = transact(request(dump_cmd, NLM_F_DUMP), job_fn, arg);
	out_close(']');
	out_close('}');
	return rc;
}

static int cmd_show(int argc, char **argv)
{
	no_more_args("show", argc, argv);
	return ns_and_jobs(print_ns_usage, NETAGG_CMD_JOB_GET, print_job, NULL);
}

static int cmd_stats(int argc, char **argv)
{
	struct job_filter f = { 0 };
	int rc;

	/* STATS_GET is a plain dump: "job JID" filters on our side. */
	if (argc > 0) {
		if (strcmp(argv[0], "job"))
			usage_error("stats: unknown argument \"%s\"", argv[0]);
		if (argc < 2)
			usage_error("stats: missing value after \"job\"");
		f.on = true;
		f.jid = parse_num(argv[1], UINT32_MAX, "JID");
		no_more_args("stats", argc - 2, argv + 2);
	}
	rc = ns_and_jobs(print_ns_stats, NETAGG_CMD_STATS_GET, print_job_stats,
			 &f);
	if (!rc && f.on && !f.found) {
		line_prefix();
		fprintf(stderr, "Error: job %" PRIu32 " not found\n", f.jid);
		return EXIT_KERNEL;
	}
	return rc;
}

static int cmd_reset(int argc, char **argv)
{
	static const struct kw kws[] = {
		KW("job", NETAGG_A_JOB_ID, V_U32, "JID"),
		KW("tree", NETAGG_A_TREE_ID, V_U16, "TID"),
	};
	struct nl_msg *msg = request(NETAGG_CMD_RESET, NLM_F_ACK);

	if (parse_kws("reset", kws, ARRAY_SIZE(kws), argc, argv, msg) == 2)
		usage_error("reset: \"tree\" needs \"job\"");
	return transact(msg, NULL, NULL);
}

static int cmd_set(int argc, char **argv)
{
	static const struct kw kws[] = {
		KW("max-jobs", NETAGG_A_MAX_JOBS, V_U32, "max-jobs"),
		KW("mem-limit", NETAGG_A_MEM_LIMIT, V_SIZE, "mem-limit"),
	};
	struct nl_msg *msg = request(NETAGG_CMD_NS_SET, NLM_F_ACK);

	if (!parse_kws("set", kws, ARRAY_SIZE(kws), argc, argv, msg))
		usage_error("set: nothing to set");
	return transact(msg, NULL, NULL);
}

/* ------------------------------------------------------------------------
 * monitor: the module's events (NETAGG_CMD_EVENT on the events group).
 */
struct monitor {
	uint64_t left;		/* events still to print; 0: no end */
	bool counted;
};

static void print_event(struct nlattr **tb)
{
	char addr[INET_ADDRSTRLEN], buf[16];

	out_open(NULL, '{');
	out_line(0);
	if (json)
		print_name(tb, NETAGG_A_EVENT, "event", event_names,
			   ARRAY_SIZE(event_names));
	else
		out_text(name_of(event_names, ARRAY_SIZE(event_names),
				 nla_get_u8(tb[NETAGG_A_EVENT]), "event", buf,
				 sizeof(buf)));
	print_uint(tb, NETAGG_A_JOB_ID, "jid", "job");
	print_uint(tb, NETAGG_A_TREE_ID, "tid", "tree");
	if (tb[NETAGG_A_CHILD])
		out_str("child", "child", addr_str(tb[NETAGG_A_CHILD], addr));
	if (tb[NETAGG_A_PARENT])
		out_str("parent", "parent", addr_str(tb[NETAGG_A_PARENT], addr));
	print_uint(tb, NETAGG_A_SILENT_MS, "silent_ms", "silent-ms");
	print_uint(tb, NETAGG_A_ROUND, "round", "round");
	print_uint(tb, NETAGG_A_EXPECTED_VID, "expected_vid", "expected-vid");
	out_eol();
	out_close('}');
}

static int on_event(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct genlmsghdr *gnlh = nlmsg_data(nlh);
	struct nlattr *tb[NETAGG_A_MAX + 1];
	struct monitor *m = arg;

	/* Anything else on the group is a newer module's: not ours to read. */
	if (gnlh->cmd != NETAGG_CMD_EVENT ||
	    genlmsg_parse(nlh, 0, tb, NETAGG_A_MAX, policy) < 0 ||
	    !tb[NETAGG_A_EVENT])
		return NL_OK;
	print_event(tb);
	fflush(out);
	if (m->counted && !--m->left)
		return NL_STOP;
	return NL_OK;
}

/* Like ip monitor: each event as it comes, on stdout at once. */
static int cmd_monitor(int argc, char **argv)
{
	struct monitor m = { 0 };
	struct nl_sock *msk;
	FILE *saved = out;
	int grp, err;

	if (argc > 0) {
		if (strcmp(argv[0], "count"))
			usage_error("monitor: unknown argument \"%s\"", argv[0]);
		if (argc < 2)
			usage_error("monitor: missing value after \"count\"");
		m.left = parse_num(argv[1], UINT64_MAX, "count");
		if (!m.left)
			usage_error("monitor: count must be at least 1");
		m.counted = true;
		no_more_args("monitor", argc - 2, argv + 2);
	}
	nl_open();	/* says so if the module is not loaded */
	grp = genl_ctrl_resolve_grp(sk, NETAGG_GENL_NAME, NETAGG_MCGRP_EVENTS);
	if (grp < 0)
		fatal(nl_geterror(grp));
	msk = nl_socket_alloc();
	if (!msk)
		fatal(strerror(ENOMEM));
	err = genl_connect(msk);
	if (!err)
		err = nl_socket_add_membership(msk, grp);
	if (err < 0) {
		nl_socket_free(msk);
		fatal(nl_geterror(err));
	}
	/* Events are not answers: no sequence numbers to match. */
	nl_socket_disable_seq_check(msk);
	nl_socket_modify_cb(msk, NL_CB_VALID, NL_CB_CUSTOM, on_event, &m);

	out = stdout;
	do
		err = nl_recvmsgs_default(msk);
	while (err >= 0 && !(m.counted && !m.left));
	out = saved;
	nl_socket_free(msk);
	if (err < 0 && !(m.counted && !m.left)) {
		line_prefix();
		fprintf(stderr, "Error: %s\n", nl_geterror(err));
		return EXIT_KERNEL;
	}
	return EXIT_OK;
}

static int cmd_help(int argc, char **argv)
{
	(void)argc, (void)argv;
	usage(stdout);
	return EXIT_OK;
}

static const struct cmd {
	const char *object;
	const char *verb;	/* NULL: the object alone is the command */
	int (*run)(int argc, char **argv);
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
	{ "help", NULL, cmd_help },
};

/* Find the command; returns how many words (1 or 2) it took. */
static const struct cmd *find_cmd(int argc, char **argv, int *words)
{
	const struct cmd *c;
	bool object = false;

	for (c = cmds; c < cmds + ARRAY_SIZE(cmds); c++) {
		if (strcmp(argv[0], c->object))
			continue;
		object = true;
		if (!c->verb) {
			*words = 1;
			return c;
		}
		if (argc > 1 && !strcmp(argv[1], c->verb)) {
			*words = 2;
			return c;
		}
	}
	if (!object)
		usage_error("unknown object \"%s\" (try \"netagg help\")",
			    argv[0]);
	if (argc < 2)
		usage_error("%s: missing command", argv[0]);
	usage_error("unknown %s command \"%s\"", argv[0], argv[1]);
}

/* The output of the command being run, in memory until it succeeded. */
static char *out_buf;
static size_t out_len;

/* Run one command, argv being OBJECT COMMAND [ARGS], and print its output
 * if it succeeded. Returns an exit code.
 */
static int run_cmd(int argc, char **argv)
{
	const struct cmd *c;
	int words, rc;

	c = find_cmd(argc, argv, &words);

	out = open_memstream(&out_buf, &out_len);
	if (!out) {
		perror("netagg");
		return EXIT_USAGE;
	}
	bol = true;
	jdepth = 0;	/* a failed command may have left containers open */
	rc = c->run(argc - words, argv + words);
	fclose(out);
	out = NULL;
	if (rc == EXIT_OK && out_len) {
		fwrite(out_buf, 1, out_len, stdout);
		fflush(stdout);	/* batch: in order with later errors */
	}
	free(out_buf);
	out_buf = NULL;
	return rc;
}

/* Batch mode: run one line's command. A usage error, which exits when it
 * comes from the command line, comes back here instead (usage_jmp), from
 * however deep in the parsers it was found: that keeps the parsers as they
 * are, reporting and giving up in one call. All it can leave behind is
 * the open output stream and a request not yet sent, both in globals.
 */
static int run_line(int argc, char **argv)
{
	jmp_buf env;
	int rc;

	if (setjmp(env)) {
		usage_jmp = NULL;
		if (out) {
			fclose(out);
			out = NULL;
			free(out_buf);
			out_buf = NULL;
		}
		nlmsg_free(pending);	/* NULL is fine */
		pending = NULL;
		return EXIT_USAGE;
	}
	usage_jmp = &env;
	rc = run_cmd(argc, argv);
	usage_jmp = NULL;
	return rc;
}

/* The longest tree command with 64 children takes 136 words. */
#define BATCH_MAX_WORDS 256

/* Run every command of the file (path "-": stdin) over one socket. */
static int run_batch(const char *path, bool force)
{
	static const char blanks[] = " \t\r\n\v\f";
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	char *line = NULL, *words[BATCH_MAX_WORDS], *w, *save;
	size_t size = 0;
	int n, r, rc = EXIT_OK;

	if (!f)
		usage_error("cannot open \"%s\": %s", path, strerror(errno));
	while (getline(&line, &size, f) != -1) {
		lineno++;
		line[strcspn(line, "#")] = '\0';	/* a comment */
		n = 0;
		for (w = strtok_r(line, blanks, &save);
		     w && n < BATCH_MAX_WORDS;
		     w = strtok_r(NULL, blanks, &save))
			words[n++] = w;
		if (w) {
			line_prefix();
			fprintf(stderr, "more than %d words\n", BATCH_MAX_WORDS);
			r = EXIT_USAGE;
		} else if (n == 0) {
			continue;	/* blank or only a comment */
		} else {
			r = run_line(n, words);
		}
		if (r != EXIT_OK) {
			if (rc == EXIT_OK)
				rc = r;
			if (!force)
				break;
		}
	}
	lineno = 0;
	if (ferror(f)) {
		fprintf(stderr, "netagg: cannot read \"%s\": %s\n", path,
			strerror(errno));
		if (rc == EXIT_OK)
			rc = EXIT_USAGE;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "batch", required_argument, NULL, 'b' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *batch = NULL;
	bool force = false;
	int opt, rc;

	opterr = 0;	/* our own message, in our format */
	for (;;) {
		/* "-force", one dash, as in ip: getopt would read -f -o ... */
		if (optind < argc && !strcmp(argv[optind], "-force")) {
			force = true;
			optind++;
			continue;
		}
		opt = getopt_long(argc, argv, "+:jphb:", opts, NULL);
		if (opt == -1)
			break;
		switch (opt) {
		case 'j':
			json = true;
			break;
		case 'p':
			json = pretty = true;
			break;
		case 'b':
			batch = optarg;
			break;
		case 'f':
			force = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case ':':
			if (!strncmp(argv[optind - 1], "--", 2))
				usage_error("option \"%s\" needs a value",
					    argv[optind - 1]);
			usage_error("option \"-%c\" needs a value", optopt);
		default:
			/* "--long[=x]" is named whole, "-x" maybe from "-jx" */
			if (!strncmp(argv[optind - 1], "--", 2))
				usage_error("unknown option \"%s\"",
					    argv[optind - 1]);
			usage_error("unknown option \"-%c\"", optopt);
		}
	}
	argc -= optind;
	argv += optind;
	if (batch) {
		if (argc > 0)
			usage_error("-b FILE takes no command: \"%s\"", argv[0]);
		rc = run_batch(batch, force);
	} else if (force) {
		usage_error("-force only applies to batch mode (-b FILE)");
	} else if (argc == 0) {
		usage(stderr);
		return EXIT_USAGE;
	} else {
		rc = run_cmd(argc, argv);
	}
	if (sk)
		nl_socket_free(sk);
	return rc;
}

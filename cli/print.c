// SPDX-License-Identifier: GPL-2.0
/*
 * How the netagg CLI shows the module's replies and events: each reply
 * handler renders one message through the output layer, as text or JSON.
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
#include <time.h>

#include "cli.h"
#include "output.h"
#include "parse.h"

const char *const netagg_op_names[] = {
	[NETAGG_OP_SUM] = "sum",
	[NETAGG_OP_AVG] = "avg",
};
const size_t netagg_op_count = ARRAY_SIZE(netagg_op_names);
const char *const netagg_role_names[] = {
	[NETAGG_ROLE_ROOT] = "root",
	[NETAGG_ROLE_AGGREGATOR] = "aggregator",
};
const size_t netagg_role_count = ARRAY_SIZE(netagg_role_names);
/* Designated initialisers keep the names tied to the enum values. */
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

const char *netagg_stat_name(unsigned int stat, char *buf, size_t size)
{
	if (stat <= NETAGG_STAT_MAX && netagg_stat_info[stat].name)
		return netagg_stat_info[stat].name;
	snprintf(buf, size, "stat%u", stat);
	return buf;
}

const char *netagg_drop_reason(const char *name)
{
	return strncmp(name, "drop_", 5) ? NULL : name + 5;
}

/* An unsigned attribute of any width; the policy checked the minimum. */
uint64_t netagg_attr_uint(const struct nlattr *a)
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
		netagg_out_u64(key, name, netagg_attr_uint(tb[attr]));
}

static void print_name(struct nlattr **tb, int attr, const char *key,
		       const char *const *names, size_t n)
{
	char buf[16];

	if (tb[attr])
		netagg_out_str(key, key, name_of(names, n, nla_get_u8(tb[attr]), "",
					  buf, sizeof(buf)));
}

/*
 * An address attribute as text, in @buf of INET6_ADDRSTRLEN bytes: IPv4
 * ones travel as be32 (the u32 payload is already in network order), IPv6
 * ones as their 16 bytes (the _IPV6 attributes, policed to that length).
 */
static const char *addr_str(const struct nlattr *a, char *buf)
{
	struct in_addr in;

	if (nla_len(a) == sizeof(struct in6_addr))
		return inet_ntop(AF_INET6, nla_data(a), buf, INET6_ADDRSTRLEN);
	in.s_addr = nla_get_u32(a);
	return inet_ntop(AF_INET, &in, buf, INET6_ADDRSTRLEN);
}

bool netagg_details;

/*
 * One entity's counters. JSON: every one. Text, for a person: those not 0
 * (all with -d), the drops on a line of their own below, at @tabs + 1,
 * by reason ("dropped: nomem 2").
 */
static void print_counters(const struct nlattr *stats, int tabs)
{
	bool json = netagg_out_json(), any = false, drops = false;
	const struct nlattr *a;
	char buf[24];
	int rem;

	if (!stats)
		return;
	nla_for_each_nested(a, stats, rem) {
		const char *name = netagg_stat_name(nla_type(a), buf, sizeof(buf));
		uint64_t v = netagg_attr_uint(a);

		if (!json && netagg_drop_reason(name)) {
			drops |= v || netagg_details;
			continue;
		}
		if (json || v || netagg_details) {
			netagg_out_u64(name, name, v);
			any = true;
		}
	}
	if (json)
		return;
	if (!any)
		netagg_out_text(" all 0");
	if (!drops)
		return;
	netagg_out_eol();
	netagg_out_line(tabs + 1);
	netagg_out_text("dropped:");
	nla_for_each_nested(a, stats, rem) {
		const char *name = netagg_stat_name(nla_type(a), buf, sizeof(buf));
		const char *reason = netagg_drop_reason(name);
		uint64_t v = netagg_attr_uint(a);

		if (reason && (v || netagg_details))
			netagg_out_u64(name, reason, v);
	}
}

/*
 * A tree's children of @type or its IPv6 twin @type6 (CHILD, or EVICTED:
 * @bitmap 0, no bits), each with its CHILD_PORT right after it if it has
 * one ("addr", "port": JSON null for any port; ADDR:PORT or
 * [IPV6ADDR]:PORT in text). The n-th CHILD (or CHILD_IPV6) of a tree
 * holds the n-th set bit of its BITMAP.
 */
static void print_children(struct nlattr *nest, int type, int type6,
			   const char *name, uint64_t bitmap)
{
	char addr[INET6_ADDRSTRLEN], text[INET6_ADDRSTRLEN + 8];
	struct nlattr *a, *child = NULL;
	int rem, bit = -1;

	/* One past the end too: the last child is printed there. */
	for (a = nla_data(nest), rem = nla_len(nest);; a = nla_next(a, &rem)) {
		bool end = !nla_ok(a, rem);
		uint16_t port = 0;

		if (child) {
			if (!end && nla_type(a) == NETAGG_A_CHILD_PORT && nla_len(a) >= 2)
				port = ntohs(nla_get_u16(a));
			netagg_out_open(NULL, '{');
			netagg_out_line(2);
			addr_str(child, addr);
			if (netagg_out_json()) {
				netagg_out_str("addr", NULL, addr);
				if (port)
					netagg_out_u64("port", NULL, port);
				else
					netagg_out_str("port", NULL, NULL);
			} else {
				if (port && nla_type(child) == type6)
					snprintf(text, sizeof(text), "[%s]:%u", addr, port);
				else if (port)
					snprintf(text, sizeof(text), "%s:%u", addr, port);
				else
					snprintf(text, sizeof(text), "%s", addr);
				netagg_out_str(NULL, name, text);
			}
			if (type == NETAGG_A_CHILD) {
				do
					bit++;
				while (bit < 64 && !(bitmap & (1ULL << bit)));
				if (bit < 64)
					netagg_out_u64("bit", "bit", bit);
				else
					netagg_out_str("bit", "bit", NULL);	/* bitmap too short */
			}
			netagg_out_eol();
			netagg_out_close('}');
			child = NULL;
		}
		if (end)
			break;
		if ((nla_type(a) == type && nla_len(a) >= 4) ||
		    (nla_type(a) == type6 && nla_len(a) >= 16))
			child = a;
	}
}

static void print_tree(struct nlattr *nest)
{
	struct nlattr *tb[NETAGG_A_MAX + 1], *parent;
	char addr[INET6_ADDRSTRLEN];
	uint64_t bitmap;

	if (nla_parse_nested(tb, NETAGG_A_MAX, nest, netagg_reply_policy) < 0)
		return;
	parent = tb[NETAGG_A_PARENT] ?: tb[NETAGG_A_PARENT_IPV6];
	bitmap = tb[NETAGG_A_BITMAP] ? nla_get_u64(tb[NETAGG_A_BITMAP]) : 0;

	netagg_out_open(NULL, '{');
	netagg_out_line(1);
	print_uint(tb, NETAGG_A_TREE_ID, "tid", "tree");
	print_name(tb, NETAGG_A_ROLE, "role", netagg_role_names,
		   netagg_role_count);
	/* A root has no parent: the kernel leaves the attribute out. */
	netagg_out_str("parent", "parent", parent ? addr_str(parent, addr) : NULL);
	/* No round before the first contribution; ended: its FIN completed. */
	if (tb[NETAGG_A_ROUND])
		print_uint(tb, NETAGG_A_ROUND, "round", "round");
	else
		netagg_out_str("round", "round", NULL);
	/* The run of workers the round is of: hexadecimal in text. */
	if (tb[NETAGG_A_SESSION])
		netagg_out_hex("session", "session",
			       nla_get_u32(tb[NETAGG_A_SESSION]));
	else
		netagg_out_str("session", "session", NULL);
	netagg_out_str("round_state", "round-state", !tb[NETAGG_A_ROUND] ? "none" :
		tb[NETAGG_A_ROUND_ENDED] ? "ended" : "running");
	/* Its results sum different sets of workers. */
	netagg_out_bool("regrouped", "regrouped", tb[NETAGG_A_ROUND_REGROUPED]);
	print_uint(tb, NETAGG_A_EXPECTED_VID, "expected_vid", "expected-vid");
	/* Partial aggregation: quorum 0 is every child ("all"). */
	if (tb[NETAGG_A_QUORUM_PCT]) {
		print_uint(tb, NETAGG_A_QUORUM_PCT, "quorum_pct", "quorum-pct");
	} else if (tb[NETAGG_A_QUORUM]) {
		if (nla_get_u16(tb[NETAGG_A_QUORUM]))
			print_uint(tb, NETAGG_A_QUORUM, "quorum", "quorum");
		else
			netagg_out_str("quorum", "quorum", "all");
	}
	print_uint(tb, NETAGG_A_STRAGGLER_MS, "straggler_ms", "straggler-ms");
	print_uint(tb, NETAGG_A_EVICT_MS, "evict_ms", "evict-ms");
	if (tb[NETAGG_A_ROLE] &&
	    nla_get_u8(tb[NETAGG_A_ROLE]) == NETAGG_ROLE_AGGREGATOR)
		netagg_out_bool("parent_lost", "parent-lost", tb[NETAGG_A_PARENT_LOST]);
	if (tb[NETAGG_A_BITMAP])
		netagg_out_hex("bitmap", "bitmap", bitmap);
	print_uint(tb, NETAGG_A_MEM_USED, "mem_used", "memused");
	netagg_out_eol();

	netagg_out_open("children", '[');
	print_children(nest, NETAGG_A_CHILD, NETAGG_A_CHILD_IPV6, "child", bitmap);
	netagg_out_close(']');
	/* Out of the tree until they send again or are added again. */
	netagg_out_open("evicted", '[');
	print_children(nest, NETAGG_A_EVICTED, NETAGG_A_EVICTED_IPV6, "evicted", 0);
	netagg_out_close(']');
	netagg_out_close('}');
}

void netagg_print_job(struct nlattr **tb, struct nlattr *attrs, int len,
		      void *arg)
{
	struct nlattr *a;
	int rem;

	(void)arg;
	netagg_out_open(NULL, '{');
	netagg_out_line(0);
	print_uint(tb, NETAGG_A_JOB_ID, "jid", "job");
	print_name(tb, NETAGG_A_DTYPE, "dtype", netagg_dtype_names,
		   netagg_dtype_count);
	print_name(tb, NETAGG_A_OP, "op", netagg_op_names, netagg_op_count);
	print_uint(tb, NETAGG_A_WINDOW, "window", "window");
	print_uint(tb, NETAGG_A_MTU, "mtu", "mtu");
	print_uint(tb, NETAGG_A_MEM_CAP, "mem_cap", "memcap");
	/* Whether it has a key (text: said only if so); never the key. */
	if (netagg_out_json())
		netagg_out_bool("keyed", NULL, tb[NETAGG_A_KEYED]);
	else if (tb[NETAGG_A_KEYED])
		netagg_out_text(" keyed");
	print_uint(tb, NETAGG_A_MEM_USED, "mem_used", "memused");
	netagg_out_eol();
	netagg_out_open("trees", '[');
	nla_for_each_attr(a, attrs, len, rem)
		if (nla_type(a) == NETAGG_A_TREE)
			print_tree(a);
	netagg_out_close(']');
	netagg_out_close('}');
}

static uint64_t get_uint(struct nlattr **tb, int attr)
{
	return tb[attr] ? netagg_attr_uint(tb[attr]) : 0;
}

void netagg_print_ns_usage(struct nlattr **tb, struct nlattr *attrs, int len,
			   void *arg)
{
	const char *version = tb[NETAGG_A_VERSION] ?
			      nla_get_string(tb[NETAGG_A_VERSION]) : NULL;

	(void)attrs, (void)len, (void)arg;
	if (!netagg_out_json()) {
		/* The module's version: which build runs here. */
		if (version)
			fprintf(netagg_out_file(), "module: %s\n", version);
		fprintf(netagg_out_file(), "namespace: jobs %" PRIu64 "/%" PRIu64
			" memory %" PRIu64 "/%" PRIu64,
			get_uint(tb, NETAGG_A_NUM_JOBS),
			get_uint(tb, NETAGG_A_MAX_JOBS),
			get_uint(tb, NETAGG_A_MEM_USED),
			get_uint(tb, NETAGG_A_MEM_LIMIT));
		/* An older module has neither: nothing to say of them. */
		if (tb[NETAGG_A_DSCP] && tb[NETAGG_A_PORT])
			fprintf(netagg_out_file(), " dscp %" PRIu64
				" port %" PRIu64, get_uint(tb, NETAGG_A_DSCP),
				get_uint(tb, NETAGG_A_PORT));
		fputc('\n', netagg_out_file());
		return;
	}
	netagg_out_open("namespace", '{');
	if (version)
		netagg_out_str("module_version", NULL, version);
	print_uint(tb, NETAGG_A_MAX_JOBS, "max_jobs", NULL);
	print_uint(tb, NETAGG_A_NUM_JOBS, "num_jobs", NULL);
	print_uint(tb, NETAGG_A_MEM_LIMIT, "mem_limit", NULL);
	print_uint(tb, NETAGG_A_MEM_USED, "mem_used", NULL);
	print_uint(tb, NETAGG_A_DSCP, "dscp", NULL);
	print_uint(tb, NETAGG_A_PORT, "port", NULL);
	netagg_out_close('}');
}

void netagg_print_ns_stats(struct nlattr **tb, struct nlattr *attrs, int len,
			   void *arg)
{
	(void)attrs, (void)len, (void)arg;
	netagg_out_open("namespace", '{');
	netagg_out_line(0);
	netagg_out_text("namespace:");
	print_counters(tb[NETAGG_A_STATS], 0);
	netagg_out_eol();
	netagg_out_close('}');
}

/* "job 7: rx 1 ..." / {"jid":7,"stats":{"rx":1,...}: one entity's counters. */
static void print_stats_line(struct nlattr **tb, int tabs, int id_attr,
			     const char *key, const char *name)
{
	netagg_out_line(tabs);
	print_uint(tb, id_attr, key, name);
	netagg_out_text(":");
	netagg_out_open("stats", '{');
	print_counters(tb[NETAGG_A_STATS], tabs);
	netagg_out_close('}');
	netagg_out_eol();
}

void netagg_print_job_stats(struct nlattr **tb, struct nlattr *attrs,
			    int len, void *arg)
{
	struct netagg_job_filter *f = arg;
	struct nlattr *a, *ttb[NETAGG_A_MAX + 1];
	int rem;

	if (f->on && (!tb[NETAGG_A_JOB_ID] ||
		      nla_get_u32(tb[NETAGG_A_JOB_ID]) != f->jid))
		return;
	f->found = true;

	netagg_out_open(NULL, '{');
	print_stats_line(tb, 0, NETAGG_A_JOB_ID, "jid", "job");
	netagg_out_open("trees", '[');
	nla_for_each_attr(a, attrs, len, rem) {
		if (nla_type(a) != NETAGG_A_TREE ||
		    nla_parse_nested(ttb, NETAGG_A_MAX, a, netagg_reply_policy) < 0)
			continue;
		netagg_out_open(NULL, '{');
		print_stats_line(ttb, 1, NETAGG_A_TREE_ID, "tid", "tree");
		netagg_out_close('}');
	}
	netagg_out_close(']');
	netagg_out_close('}');
}

int netagg_timestamps;

/*
 * Now, as -t and -ts print it (ip's forms): "Timestamp: Sun Nov 29 03:17:14
 * 2026 123456 usec" on a line of its own; "[2026-11-29T03:17:14.123456]"
 * before the event; in JSON, "timestamp" with its UTC offset (RFC 3339).
 */
static void print_timestamp(void)
{
	char date[64], zone[8];
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	if (netagg_out_json()) {
		strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
		strftime(zone, sizeof(zone), "%z", &tm);	/* +hhmm */
		snprintf(date + strlen(date), sizeof(date) - strlen(date),
			 ".%06ld%.3s:%s", ts.tv_nsec / 1000, zone, zone + 3);
		netagg_out_str("timestamp", NULL, date);
	} else if (netagg_timestamps == NETAGG_TIMESTAMP_LONG) {
		strftime(date, sizeof(date), "%a %b %e %H:%M:%S %Y", &tm);
		snprintf(date + strlen(date), sizeof(date) - strlen(date),
			 " %06ld usec", ts.tv_nsec / 1000);
		netagg_out_text("Timestamp: ");
		netagg_out_text(date);
		netagg_out_eol();
		netagg_out_line(0);
	} else {
		strftime(date, sizeof(date), "[%Y-%m-%dT%H:%M:%S", &tm);
		snprintf(date + strlen(date), sizeof(date) - strlen(date),
			 ".%06ld] ", ts.tv_nsec / 1000);
		netagg_out_text(date);
	}
}

void netagg_print_event(struct nlattr **tb)
{
	const struct nlattr *child = tb[NETAGG_A_CHILD] ?: tb[NETAGG_A_CHILD_IPV6];
	const struct nlattr *parent = tb[NETAGG_A_PARENT] ?: tb[NETAGG_A_PARENT_IPV6];
	char addr[INET6_ADDRSTRLEN], buf[16];

	netagg_out_open(NULL, '{');
	netagg_out_line(0);
	if (netagg_timestamps)
		print_timestamp();
	if (netagg_out_json())
		print_name(tb, NETAGG_A_EVENT, "event", event_names,
			   ARRAY_SIZE(event_names));
	else
		netagg_out_text(name_of(event_names, ARRAY_SIZE(event_names),
				 nla_get_u8(tb[NETAGG_A_EVENT]), "event", buf,
				 sizeof(buf)));
	print_uint(tb, NETAGG_A_JOB_ID, "jid", "job");
	print_uint(tb, NETAGG_A_TREE_ID, "tid", "tree");
	if (child)
		netagg_out_str("child", "child", addr_str(child, addr));
	if (tb[NETAGG_A_CHILD_PORT])
		netagg_out_u64("child_port", "port", ntohs(nla_get_u16(tb[NETAGG_A_CHILD_PORT])));
	if (parent)
		netagg_out_str("parent", "parent", addr_str(parent, addr));
	print_uint(tb, NETAGG_A_SILENT_MS, "silent_ms", "silent-ms");
	print_uint(tb, NETAGG_A_ROUND, "round", "round");
	if (tb[NETAGG_A_SESSION])
		netagg_out_hex("session", "session",
			       nla_get_u32(tb[NETAGG_A_SESSION]));
	print_uint(tb, NETAGG_A_EXPECTED_VID, "expected_vid", "expected-vid");
	netagg_out_eol();
	netagg_out_close('}');
}


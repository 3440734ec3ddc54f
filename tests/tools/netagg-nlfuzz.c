// SPDX-License-Identifier: GPL-2.0
/*
 * netagg-nlfuzz - random requests to the "netagg" generic netlink family,
 * built from its spec (uapi/netagg.yaml, read with libyaml), each of which
 * must be answered, and the state checked as it goes.
 *
 * From the spec: every operation that takes a request, its request's
 * attributes, and each attribute's type, checks (min, max, numbers or the
 * spec's constants), enum and multi-attr. A message is then one of:
 *   configuration (--config-pct of them): a valid request changing jobs,
 *     trees (children, parent, quorum, straggler delay, eviction time),
 *     resets and the namespace's caps, its ids and addresses from small
 *     pools so that requests meet what earlier ones made;
 *   garbage: an operation of the spec, or a command past the last, with
 *     attributes of its request, of the whole set or past the set's last,
 *     each valid, at or past a bound, of a wrong length, a nest of garbage
 *     or flagged nested when it is not, repeated or left out; sometimes the
 *     message cut inside its last attribute, the generic netlink header's
 *     reserved byte set, or a dump asked for.
 * Every message must be answered: success, or an error carrying a reason
 * (an extack message, the attribute at fault, or the attribute missing);
 * only a command the family does not have may be refused without one.
 * Every --check-every messages, and at the end, the state is read back
 * (NS_GET, a JOB_GET dump) and must be consistent: every tree's children
 * one a set bit of its bitmap, at most children-max, jobs at most the
 * cap, memory used at most the caps and the namespace's the sum of its
 * jobs'. With --end-reset, everything is deleted last and the memory
 * used must be 0.
 *
 * The family may go away (the module unloaded) and come back under it:
 * messages while it is gone are counted, not sent; those the core refuses
 * for it (no such family, or a dump while the module unloads) likewise. The seed is printed:
 * --seed replays a run's messages.
 *
 * Exit status: 0 every message answered and every check held, 1 not (the
 * first failures are described on stderr), 2 bad usage.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <yaml.h>

#include <linux/netagg.h>

#include "extack.h"
#include "output.h"
#include "tool.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#define MAX_ATTRS	96
#define MAX_OPS		32
#define MAX_CONSTS	64
#define MAX_ENUMS	16
#define MAX_ENTRIES	32
#define NAME_LEN	48
#define FAILS_SHOWN	10	/* failures described on stderr */

/* ---- The spec ---------------------------------------------------------- */

enum atype { T_UNUSED, T_PAD, T_FLAG, T_U8, T_U16, T_U32, T_U64, T_NEST, T_OTHER };

struct attr {
	char name[NAME_LEN];
	enum atype type;
	unsigned int id;
	bool has_min, has_max;
	uint64_t min, max;
	int enum_idx;		/* -1: none */
	bool addr;		/* an IPv4 address (display-hint) */
};

struct op {
	char name[NAME_LEN];
	unsigned int cmd;
	bool has_do, has_dump;
	unsigned int nreq;
	int req[MAX_ATTRS];	/* indexes into spec.attrs */
};

struct enumdef {
	char name[NAME_LEN];
	unsigned int n;
	uint32_t val[MAX_ENTRIES];
};

struct spec {
	struct attr attrs[MAX_ATTRS];
	unsigned int nattrs, attr_max;
	struct op ops[MAX_OPS];
	unsigned int nops, cmd_max;
	struct { char name[NAME_LEN]; uint64_t value; } consts[MAX_CONSTS];
	unsigned int nconsts;
	struct enumdef enums[MAX_ENUMS];
	unsigned int nenums;
};

static struct spec S;
static yaml_document_t doc;

static yaml_node_t *ynode(int i)
{
	return yaml_document_get_node(&doc, i);
}

static const char *yscalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static yaml_node_t *yget(const yaml_node_t *map, const char *key)
{
	const yaml_node_pair_t *p;
	const char *k;

	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		k = yscalar(ynode(p->key));
		if (k && !strcmp(k, key))
			return ynode(p->value);
	}
	return NULL;
}

static const char *ygets(const yaml_node_t *map, const char *key)
{
	return yscalar(yget(map, key));
}

/* The items of sequence @n, or none. */
static int yitems(const yaml_node_t *n, yaml_node_item_t **items)
{
	if (!n || n->type != YAML_SEQUENCE_NODE)
		return 0;
	*items = n->data.sequence.items.start;
	return (int)(n->data.sequence.items.top - n->data.sequence.items.start);
}

static void name_copy(char *dst, const char *src)
{
	snprintf(dst, NAME_LEN, "%s", src ? src : "");
}

/* A check's bound: a number, or the name of one of the spec's constants. */
static uint64_t bound(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	if (*s && !*end)
		return v;
	for (unsigned int i = 0; i < S.nconsts; i++)
		if (!strcmp(S.consts[i].name, s))
			return S.consts[i].value;
	netagg_die("spec: no constant \"%s\"", s);
}

static int attr_by_name(const char *name)
{
	for (unsigned int i = 0; i < S.nattrs; i++)
		if (!strcmp(S.attrs[i].name, name))
			return (int)i;
	return -1;
}

static enum atype type_of(const char *t)
{
	static const struct { const char *n; enum atype t; } types[] = {
		{ "unused", T_UNUSED }, { "pad", T_PAD }, { "flag", T_FLAG },
		{ "u8", T_U8 }, { "u16", T_U16 }, { "u32", T_U32 }, { "u64", T_U64 },
		{ "nest", T_NEST },
	};

	for (size_t i = 0; t && i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(types[i].n, t))
			return types[i].t;
	return T_OTHER;
}

static void load_definitions(const yaml_node_t *defs)
{
	yaml_node_item_t *it, *ent;
	int n = yitems(defs, &it), ne;

	for (int i = 0; i < n; i++) {
		const yaml_node_t *d = ynode(it[i]);
		const char *type = ygets(d, "type"), *name = ygets(d, "name");

		if (!type || !name)
			continue;
		if (!strcmp(type, "const") && S.nconsts < MAX_CONSTS) {
			name_copy(S.consts[S.nconsts].name, name);
			S.consts[S.nconsts++].value = strtoull(ygets(d, "value") ?: "0", NULL, 0);
		} else if (!strcmp(type, "enum") && S.nenums < MAX_ENUMS) {
			struct enumdef *e = &S.enums[S.nenums++];
			uint32_t next = 0;

			name_copy(e->name, name);
			ne = yitems(yget(d, "entries"), &ent);
			for (int j = 0; j < ne && e->n < MAX_ENTRIES; j++) {
				const char *v = ygets(ynode(ent[j]), "value");

				if (v)
					next = strtoul(v, NULL, 0);
				e->val[e->n++] = next++;
			}
		}
	}
}

/* The attributes of the set named @set_name, numbered as the spec does. */
static void load_attrs(const yaml_node_t *sets, const char *set_name)
{
	yaml_node_item_t *it, *at;
	int n = yitems(sets, &it), na;
	unsigned int next = 0;

	for (int i = 0; i < n; i++) {
		const yaml_node_t *set = ynode(it[i]);

		if (!ygets(set, "name") || strcmp(ygets(set, "name"), set_name))
			continue;
		na = yitems(yget(set, "attributes"), &at);
		for (int j = 0; j < na && S.nattrs < MAX_ATTRS; j++) {
			const yaml_node_t *a = ynode(at[j]), *checks = yget(a, "checks");
			struct attr *x = &S.attrs[S.nattrs++];
			const char *v = ygets(a, "value"), *e = ygets(a, "enum");

			name_copy(x->name, ygets(a, "name"));
			x->type = type_of(ygets(a, "type"));
			if (v)
				next = strtoul(v, NULL, 0);
			x->id = next++;
			if (x->id > S.attr_max)
				S.attr_max = x->id;
			x->enum_idx = -1;
			for (unsigned int k = 0; e && k < S.nenums; k++)
				if (!strcmp(S.enums[k].name, e))
					x->enum_idx = (int)k;
			x->addr = ygets(a, "display-hint") && !strcmp(ygets(a, "display-hint"), "ipv4");
			if (ygets(checks, "min")) {
				x->has_min = true;
				x->min = bound(ygets(checks, "min"));
			}
			if (ygets(checks, "max")) {
				x->has_max = true;
				x->max = bound(ygets(checks, "max"));
			}
		}
		return;
	}
	netagg_die("spec: no attribute set \"%s\"", set_name);
}

static void load_ops(const yaml_node_t *ops)
{
	yaml_node_item_t *it, *ra;
	int n = yitems(yget(ops, "list"), &it), nr;
	unsigned int next = 0;

	for (int i = 0; i < n && S.nops < MAX_OPS; i++) {
		const yaml_node_t *o = ynode(it[i]);
		const yaml_node_t *d = yget(o, "do"), *dump = yget(o, "dump");
		const char *v = ygets(o, "value"), *set = ygets(o, "attribute-set");
		struct op *x;

		if (v)
			next = strtoul(v, NULL, 0);
		x = &S.ops[S.nops];
		x->cmd = next++;
		if (x->cmd > S.cmd_max)
			S.cmd_max = x->cmd;
		/* Only the requests of the main set: events are not requested. */
		if ((!d && !dump) || !set || strcmp(set, "netagg"))
			continue;
		name_copy(x->name, ygets(o, "name"));
		x->has_do = d;
		x->has_dump = dump;
		nr = yitems(yget(yget(d, "request"), "attributes"), &ra);
		for (int j = 0; j < nr; j++) {
			int a = attr_by_name(yscalar(ynode(ra[j])) ?: "");

			if (a < 0)
				netagg_die("spec: %s requests unknown attribute %s", x->name,
					   yscalar(ynode(ra[j])));
			x->req[x->nreq++] = a;
		}
		S.nops++;
	}
}

static void load_spec(const char *path)
{
	yaml_parser_t p;
	yaml_node_t *root;
	FILE *f = fopen(path, "r");

	if (!f)
		netagg_die("%s: %s", path, strerror(errno));
	yaml_parser_initialize(&p);
	yaml_parser_set_input_file(&p, f);
	if (!yaml_parser_load(&p, &doc) || !(root = yaml_document_get_root_node(&doc)))
		netagg_die("%s: not YAML: %s (line %zu)", path, p.problem ?: "empty",
			   p.problem_mark.line + 1);
	load_definitions(yget(root, "definitions"));
	load_attrs(yget(root, "attribute-sets"), "netagg");
	load_ops(yget(root, "operations"));
	yaml_parser_delete(&p);
	fclose(f);
	if (!S.nops || !S.nattrs)
		netagg_die("%s: no operations or attributes", path);
}

static const struct op *op_named(const char *name)
{
	for (unsigned int i = 0; i < S.nops; i++)
		if (!strcmp(S.ops[i].name, name))
			return &S.ops[i];
	return NULL;
}

static const struct attr *attr_named(const char *name)
{
	int i = attr_by_name(name);

	if (i < 0)
		netagg_die("spec: no attribute %s", name);
	return &S.attrs[i];
}

/* ---- Randomness (xorshift64*: the seed replays a run) ------------------ */

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

/* 0 to n - 1 */
static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static bool chance(unsigned int pct)
{
	return below(100) < pct;
}

/* ---- Building messages ------------------------------------------------- */

/* The pools that make requests meet each other's jobs, trees and children. */
#define POOL_JOBS	4
#define POOL_TREES	3
#define POOL_ADDRS	8

static uint32_t pool_addr(void)
{
	/* 10.0.N.1: the workers of tests/netagg_nlfuzz.sh, and a few more. */
	return htonl(0x0a000001 | (uint32_t)(1 + below(POOL_ADDRS)) << 8);
}

static unsigned int width(enum atype t)
{
	switch (t) {
	case T_U8: return 1;
	case T_U16: return 2;
	case T_U32: return 4;
	case T_U64: return 8;
	default: return 0;
	}
}

static uint64_t type_max(enum atype t)
{
	unsigned int w = width(t);

	return w == 8 ? UINT64_MAX : (1ULL << (8 * w)) - 1;
}

static void put_num(struct nl_msg *msg, int type, unsigned int w, uint64_t v)
{
	uint8_t b8 = v;
	uint16_t b16 = v;
	uint32_t b32 = v;

	switch (w) {
	case 1: nla_put(msg, type, 1, &b8); break;
	case 2: nla_put(msg, type, 2, &b16); break;
	case 4: nla_put(msg, type, 4, &b32); break;
	default: nla_put(msg, type, 8, &v); break;
	}
}

/* A value the attribute's checks accept (ids and addresses from the pools). */
static uint64_t valid_value(const struct attr *a)
{
	uint64_t lo = a->has_min ? a->min : 0, hi = a->has_max ? a->max : type_max(a->type);

	if (a->enum_idx >= 0) {
		const struct enumdef *e = &S.enums[a->enum_idx];

		/* Entry 0 is unspec: mostly the others. */
		return e->n > 1 && chance(90) ? e->val[1 + below(e->n - 1)] : e->val[below(e->n)];
	}
	if (a->addr)
		return pool_addr();
	if (!strcmp(a->name, "job-id"))
		return 1 + below(POOL_JOBS);
	if (!strcmp(a->name, "tree-id"))
		return below(POOL_TREES);
	if (!strcmp(a->name, "child-port"))
		return 1 + below(4);
	/* Small windows, MTUs and times: many trees fit, timers fire. */
	if (!strcmp(a->name, "window"))
		return 1 + below(64);
	if (!strcmp(a->name, "mtu"))
		return lo + below(1500);
	if (!strcmp(a->name, "straggler-ms") || !strcmp(a->name, "evict-ms"))
		return chance(50) ? 0 : 10 + below(500);
	if (!strcmp(a->name, "mem-cap") || !strcmp(a->name, "mem-limit"))
		return (1ULL << 20) + below(64ULL << 20);
	if (!strcmp(a->name, "max-jobs"))
		return 1 + below(64);
	if (!strcmp(a->name, "quorum"))
		return below(5);
	if (hi - lo < UINT32_MAX)
		return lo + below(hi - lo + 1);
	return lo + below(1ULL << 32);
}

/* At or past a bound of the attribute's type or checks. */
static uint64_t bound_value(const struct attr *a)
{
	uint64_t v[6] = { 0, type_max(a->type), 1 };
	unsigned int n = 3;

	if (a->has_min) {
		v[n++] = a->min;
		v[n++] = a->min - 1;
	}
	if (a->has_max) {
		v[n++ % 6] = a->max;
		v[n++ % 6] = a->max + 1;
	}
	return v[below(n < 6 ? n : 6)];
}

static void put_garbage(struct nl_msg *msg, int type, unsigned int len)
{
	uint8_t b[64];

	for (unsigned int i = 0; i < len && i < sizeof(b); i++)
		b[i] = rnd();
	nla_put(msg, type, len < sizeof(b) ? len : sizeof(b), b);
}

/* One attribute of @a, valid or broken in one of many ways. */
static void put_fuzzed(struct nl_msg *msg, const struct attr *a)
{
	unsigned int w = width(a->type), r = below(100);
	struct nlattr *nest;

	if (a->type == T_FLAG) {
		if (r < 80)
			nla_put(msg, a->id, 0, NULL);
		else
			put_garbage(msg, a->id, 1 + below(8));
		return;
	}
	if (a->type == T_NEST || !w) {
		if (r < 40) {
			put_garbage(msg, a->id | (chance(50) ? NLA_F_NESTED : 0), below(48));
		} else {
			/* A nest of attributes of the set: its own or not. */
			nest = nla_nest_start(msg, a->id);
			for (unsigned int i = below(4); i; i--)
				put_num(msg, S.attrs[below(S.nattrs)].id, 4, rnd());
			nla_nest_end(msg, nest);
		}
		return;
	}
	if (r < 55)
		put_num(msg, a->id, w, valid_value(a));
	else if (r < 80)
		put_num(msg, a->id, w, bound_value(a));
	else if (r < 90)
		put_garbage(msg, a->id, (unsigned int[]){ 0, 1, w - 1, w + 1, 2 * w }[below(5)]);
	else if (r < 95)
		put_num(msg, a->id | NLA_F_NESTED, w, valid_value(a));
	else
		put_num(msg, a->id | NLA_F_NET_BYTEORDER, w, valid_value(a));
}

enum kind { K_CONFIG, K_GARBAGE, K_UNKNOWN_CMD };

struct made {
	enum kind kind;
	unsigned int cmd;
	bool dump;
	const char *what;	/* how it was made, for the failures shown */
};

static void put_valid(struct nl_msg *msg, const char *name)
{
	const struct attr *a = attr_named(name);

	put_num(msg, a->id, width(a->type), valid_value(a));
}

static void put_u32_attr(struct nl_msg *msg, const char *name, uint32_t v)
{
	put_num(msg, attr_named(name)->id, 4, v);
}

/*
 * A tree's children: distinct addresses of the pool, IPv4 (10.0.K.1) or,
 * @v6, IPv6 (fd00::K:1), those of an odd index with a port (an address is
 * a child with ports or without).
 */
static void put_children(struct nl_msg *msg, bool v6)
{
	unsigned int n = 1 + below(5), first = below(POOL_ADDRS);
	const struct attr *port = attr_named("child-port");
	uint8_t a6[16] = { 0xfd };

	for (unsigned int i = 0; i < n; i++) {
		unsigned int k = (first + i) % POOL_ADDRS;

		if (v6) {
			a6[13] = k + 1;
			a6[15] = 1;
			nla_put(msg, attr_named("child-ipv6")->id, sizeof(a6), a6);
		} else {
			put_u32_attr(msg, "child", htonl(0x0a000001 | (k + 1) << 8));
		}
		if (k & 1)
			put_num(msg, port->id, 2, 7000 + below(4));
	}
}

/* A valid request that changes the configuration. */
static const struct op *make_config(struct nl_msg *msg)
{
	static const char *const names[] = {
		"job-new", "job-new", "tree-new", "tree-new", "tree-new", "tree-set",
		"tree-set", "tree-set", "tree-del", "job-del", "reset", "ns-set",
	};
	const char *name = names[below(sizeof(names) / sizeof(names[0]))];
	const struct op *op = op_named(name);
	static const uint8_t parent6[16] = { 0xfd, [13] = 100, [15] = 1 };
	bool aggregator, v6;

	if (!op)
		netagg_die("spec: no operation %s", name);
	if (!strcmp(name, "reset") && chance(10))
		return op;	/* everything */
	if (!strcmp(name, "ns-set")) {
		if (chance(50))
			put_u32_attr(msg, "max-jobs", 8 + below(64));
		else
			put_valid(msg, "mem-limit");
		return op;
	}
	put_valid(msg, "job-id");
	if (!strcmp(name, "job-new")) {
		put_valid(msg, "dtype");
		if (chance(50))
			put_valid(msg, "op");
		put_valid(msg, "window");
		put_valid(msg, "mtu");
		if (chance(50))
			put_valid(msg, "mem-cap");
		return op;
	}
	if (!strcmp(name, "job-del") || (!strcmp(name, "reset") && chance(50)))
		return op;
	put_valid(msg, "tree-id");
	if (strcmp(name, "tree-new") && strcmp(name, "tree-set"))
		return op;
	/* The parent out of the children's pool; a tree of one family. */
	aggregator = chance(30);
	v6 = chance(30);
	if (!strcmp(name, "tree-new"))
		put_num(msg, attr_named("role")->id, 1,
			aggregator ? NETAGG_ROLE_AGGREGATOR : NETAGG_ROLE_ROOT);
	if (aggregator && v6)
		nla_put(msg, attr_named("parent-ipv6")->id, sizeof(parent6), parent6);
	else if (aggregator)
		put_u32_attr(msg, "parent", htonl(0x0a006401));
	put_children(msg, v6);
	if (chance(30))
		put_valid(msg, chance(50) ? "quorum" : "quorum-pct");
	if (chance(30))
		put_valid(msg, "straggler-ms");
	if (chance(40))
		put_valid(msg, "evict-ms");
	return op;
}

/* Anything: attributes of the request, of the set, or past its last. */
static void make_garbage(struct nl_msg *msg, const struct op *op)
{
	unsigned int n = below(7);
	const struct attr *last = NULL;

	for (unsigned int i = 0; i < n; i++) {
		unsigned int r = below(100);

		if (last && r < 10) {
			put_fuzzed(msg, last);	/* repeated */
			continue;
		}
		if (r < 70 && op->nreq) {
			last = &S.attrs[op->req[below(op->nreq)]];
		} else if (r < 92) {
			last = &S.attrs[below(S.nattrs)];
		} else {
			put_garbage(msg, S.attr_max + 1 + below(8), below(12));
			continue;
		}
		put_fuzzed(msg, last);
	}
}

static void make(struct nl_msg *msg, int family, unsigned int config_pct, struct made *m)
{
	const struct op *op = NULL;
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;
	unsigned int r;

	m->dump = false;
	if (chance(config_pct)) {
		m->kind = K_CONFIG;
		m->what = "configuration";
	} else if (chance(3)) {
		m->kind = K_UNKNOWN_CMD;
		m->what = "a command the family does not have";
	} else {
		m->kind = K_GARBAGE;
		m->what = "garbage";
		op = &S.ops[below(S.nops)];
		m->dump = op->has_dump && (!op->has_do || chance(30));
	}
	if (m->kind == K_CONFIG)
		op = op_named("job-new");	/* the command is set below */
	m->cmd = m->kind == K_UNKNOWN_CMD ? S.cmd_max + 1 + below(8) : op->cmd;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0,
			 m->dump ? NLM_F_DUMP : 0, m->cmd, NETAGG_GENL_VERSION))
		netagg_die("message: out of memory");
	/* genlmsg_put() returns what follows this header, not the header. */
	g = nlmsg_data(nlmsg_hdr(msg));
	if (m->kind == K_CONFIG) {
		op = make_config(msg);
		g->cmd = m->cmd = op->cmd;
		return;
	}
	if (m->kind == K_GARBAGE)
		make_garbage(msg, op);
	nlh = nlmsg_hdr(msg);
	r = below(100);
	if (r < 3 && nlh->nlmsg_len > NLMSG_HDRLEN + GENL_HDRLEN + 4) {
		nlh->nlmsg_len -= 1 + below(3);	/* cut inside the last attribute */
		m->what = "garbage, cut short";
	} else if (r < 5) {
		g->reserved = 1 + below(255);
		m->what = "garbage, the genl header's reserved byte set";
	}
}

/* ---- Answers ----------------------------------------------------------- */

struct answer {
	bool done, reason;
	int err;
	char msg[256];
};

/* Whether the extack TLVs say why: a message, the attribute, or what is missing. */
static bool extack_reason(const struct nlmsghdr *nlh, char *buf, size_t size)
{
	size_t off = netagg_nlmsgerr_tlv_offset(nlh);
	bool why = false;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return false;
	while (off + sizeof(struct nlattr) <= nlh->nlmsg_len) {
		const struct nlattr *a = (const void *)((const char *)nlh + off);

		if (a->nla_len < sizeof(*a) || off + a->nla_len > nlh->nlmsg_len)
			break;
		switch (a->nla_type & NLA_TYPE_MASK) {
		case NLMSGERR_ATTR_MSG:
			snprintf(buf, size, "%.*s", (int)(a->nla_len - sizeof(*a)),
				 (const char *)(a + 1));
			why = true;
			break;
		case NLMSGERR_ATTR_OFFS:
		case NLMSGERR_ATTR_MISS_TYPE:
			why = true;
			break;
		}
		off += NLA_ALIGN(a->nla_len);
	}
	return why;
}

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct answer *a = arg;

	(void)nla;
	a->err = -e->error;
	a->reason = extack_reason((struct nlmsghdr *)e - 1, a->msg, sizeof(a->msg));
	a->done = true;
	return NL_STOP;
}

static int on_done(struct nl_msg *msg, void *arg)
{
	struct answer *a = arg;

	(void)msg;
	a->done = true;
	return NL_STOP;
}

/* ---- The state read back ----------------------------------------------- */

struct state {
	uint64_t jobs, ns_jobs, max_jobs, mem_limit, ns_mem, jobs_mem;
	char bad[256];		/* the first inconsistency, "" if none */
};

static void inconsistent(struct state *st, const char *fmt, uint64_t a, uint64_t b)
{
	if (!st->bad[0])
		snprintf(st->bad, sizeof(st->bad), fmt, (unsigned long long)a,
			 (unsigned long long)b);
}

static uint64_t get_num(const struct nlattr *a)
{
	switch (nla_len(a)) {
	case 1: return nla_get_u8(a);
	case 2: return nla_get_u16(a);
	case 4: return nla_get_u32(a);
	case 8: return nla_get_u64(a);
	default: return 0;
	}
}

static int on_ns(struct nl_msg *msg, void *arg)
{
	struct state *st = arg;
	struct nlattr *a;
	int rem;

	nla_for_each_attr(a, genlmsg_attrdata(nlmsg_data(nlmsg_hdr(msg)), 0),
			  genlmsg_attrlen(nlmsg_data(nlmsg_hdr(msg)), 0), rem) {
		switch (nla_type(a)) {
		case NETAGG_A_MAX_JOBS: st->max_jobs = get_num(a); break;
		case NETAGG_A_NUM_JOBS: st->ns_jobs = get_num(a); break;
		case NETAGG_A_MEM_LIMIT: st->mem_limit = get_num(a); break;
		case NETAGG_A_MEM_USED: st->ns_mem = get_num(a); break;
		}
	}
	return NL_OK;
}

static int on_job(struct nl_msg *msg, void *arg)
{
	struct state *st = arg;
	uint64_t cap = UINT64_MAX, used = 0, trees_mem = 0;
	struct nlattr *a, *t;
	int rem, trem;

	st->jobs++;
	nla_for_each_attr(a, genlmsg_attrdata(nlmsg_data(nlmsg_hdr(msg)), 0),
			  genlmsg_attrlen(nlmsg_data(nlmsg_hdr(msg)), 0), rem) {
		uint64_t bitmap = 0, kids = 0, tid = 0;

		switch (nla_type(a)) {
		case NETAGG_A_MEM_CAP: cap = get_num(a); break;
		case NETAGG_A_MEM_USED: used = get_num(a); break;
		case NETAGG_A_TREE:
			nla_for_each_nested(t, a, trem) {
				switch (nla_type(t)) {
				case NETAGG_A_TREE_ID: tid = get_num(t); break;
				case NETAGG_A_BITMAP: bitmap = get_num(t); break;
				case NETAGG_A_CHILD:
				case NETAGG_A_CHILD_IPV6: kids++; break;
				case NETAGG_A_MEM_USED: trees_mem += get_num(t); break;
				}
			}
			if (kids != (uint64_t)__builtin_popcountll(bitmap))
				inconsistent(st, "a tree lists %llu children for %llu bits of its bitmap",
					     kids, __builtin_popcountll(bitmap));
			if (kids > NETAGG_CHILDREN_MAX)
				inconsistent(st, "a tree has %llu children, more than %llu", kids,
					     NETAGG_CHILDREN_MAX);
			if (tid >= NETAGG_TREES_MAX)
				inconsistent(st, "tree id %llu, past %llu", tid, NETAGG_TREES_MAX);
			break;
		}
	}
	if (used > cap)
		inconsistent(st, "a job uses %llu bytes, above its cap %llu", used, cap);
	if (trees_mem > used)
		inconsistent(st, "a job's trees use %llu bytes, the job says %llu", trees_mem, used);
	st->jobs_mem += used;
	return NL_OK;
}

/* ---- The run ----------------------------------------------------------- */

struct cfg {
	const char *spec;
	uint64_t seed, count;
	unsigned int config_pct, check_every;
	bool end_reset, json, verbose;
};

struct counts {
	uint64_t sent, config, config_ok, ok, errors, reasoned, unknown_cmd, absent;
	uint64_t no_reason, no_answer, checks, inconsistent, fails;
};

struct fuzzer {
	struct nl_sock *sk;
	int family;
	struct counts n;
	const struct cfg *c;
};

static void fail_shown(struct fuzzer *z, uint64_t i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail_shown(struct fuzzer *z, uint64_t i, const char *fmt, ...)
{
	va_list ap;

	if (z->n.fails++ >= FAILS_SHOWN)
		return;
	fprintf(stderr, "netagg-nlfuzz: seed %llu, message %llu: ",
		(unsigned long long)z->c->seed, (unsigned long long)i);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* The family's id, looked up again (it may have gone, or come back). */
static void resolve_family(struct fuzzer *z)
{
	z->family = genl_ctrl_resolve(z->sk, NETAGG_GENL_NAME);
}

/* After an error of the generic netlink core: did the family go away? */
static bool family_gone(struct fuzzer *z)
{
	int was = z->family;

	resolve_family(z);
	return z->family != was;
}

static void connect_family(struct fuzzer *z)
{
	int one = 1;
	struct timeval tv = { .tv_sec = 10 };

	if (z->sk)
		nl_socket_free(z->sk);
	z->sk = nl_socket_alloc();
	if (!z->sk || genl_connect(z->sk) < 0)
		netagg_die("generic netlink: cannot connect");
	setsockopt(nl_socket_get_fd(z->sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(nl_socket_get_fd(z->sk), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	/* An answer not there in 10 s is none. */
	setsockopt(nl_socket_get_fd(z->sk), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	nl_socket_set_buffer_size(z->sk, 1 << 20, 1 << 20);
	resolve_family(z);
}

/* Send @msg, wait for its answer (ack, error, or a dump's end). */
static int exchange(struct fuzzer *z, struct nl_msg *msg, struct answer *a,
		    nl_recvmsg_msg_cb_t on_valid, void *arg)
{
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int err;

	if (!cb)
		netagg_die("callbacks: out of memory");
	memset(a, 0, sizeof(*a));
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, a);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_done, a);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_done, a);
	if (on_valid)
		nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, arg);
	nl_complete_msg(z->sk, msg);
	nlmsg_hdr(msg)->nlmsg_flags |= NLM_F_ACK;
	err = nl_send(z->sk, msg);
	while (err >= 0 && !a->done)
		err = nl_recvmsgs(z->sk, cb);
	nl_cb_put(cb);
	return a->done ? 0 : (err < 0 ? err : -NLE_FAILURE);
}

/* A request of @cmd without attributes, sent and answered; 0 or exchange()'s error. */
static int ask(struct fuzzer *z, unsigned int cmd, int flags, struct answer *a,
	       nl_recvmsg_msg_cb_t on_valid, void *arg)
{
	struct nl_msg *msg = nlmsg_alloc();
	int err;

	if (!msg || !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, z->family, 0, flags, cmd,
				 NETAGG_GENL_VERSION))
		netagg_die("message: out of memory");
	err = exchange(z, msg, a, on_valid, arg);
	nlmsg_free(msg);
	return err;
}

/* Read the state back and check it; @empty: everything was just deleted. */
static void check_state(struct fuzzer *z, uint64_t i, bool empty)
{
	const struct op *ns = op_named("ns-get"), *jobs = op_named("job-get");
	struct state st = { .max_jobs = 0 };
	struct answer a;

	if (!ns || !jobs)
		netagg_die("spec: no ns-get or job-get");
	if (z->family < 0)
		return;
	z->n.checks++;
	/* The family gone: nothing to read. */
	if (ask(z, ns->cmd, 0, &a, on_ns, &st) || a.err ||
	    ask(z, jobs->cmd, NLM_F_DUMP, &a, on_job, &st) || a.err)
		return;
	if (st.jobs != st.ns_jobs)
		inconsistent(&st, "%llu jobs dumped, the namespace counts %llu", st.jobs, st.ns_jobs);
	if (st.ns_jobs > st.max_jobs)
		inconsistent(&st, "%llu jobs, above the cap of %llu", st.ns_jobs, st.max_jobs);
	if (st.ns_mem > st.mem_limit)
		inconsistent(&st, "%llu bytes used, above the limit of %llu", st.ns_mem,
			     st.mem_limit);
	if (st.ns_mem != st.jobs_mem)
		inconsistent(&st, "the namespace uses %llu bytes, its jobs %llu", st.ns_mem,
			     st.jobs_mem);
	if (empty && (st.ns_mem || st.ns_jobs))
		inconsistent(&st, "after deleting everything: %llu bytes used, %llu jobs",
			     st.ns_mem, st.ns_jobs);
	if (st.bad[0]) {
		z->n.inconsistent++;
		fail_shown(z, i, "state inconsistent: %s", st.bad);
	}
}

static void run(struct fuzzer *z)
{
	const struct cfg *c = z->c;
	struct made m;
	struct answer a;
	struct nl_msg *msg;
	int err;

	for (uint64_t i = 0; i < c->count; i++) {
		/* Gone: looked for again every 64 messages, 1 ms apart. */
		if (z->family < 0 && i % 64 == 0)
			resolve_family(z);
		msg = nlmsg_alloc();
		if (!msg)
			netagg_die("message: out of memory");
		make(msg, z->family < 0 ? 0 : z->family, c->config_pct, &m);
		if (z->family < 0) {
			z->n.absent++;	/* made all the same: the seed replays */
			nlmsg_free(msg);
			usleep(1000);
			continue;
		}
		z->n.sent++;
		z->n.config += m.kind == K_CONFIG;
		err = exchange(z, msg, &a, NULL, NULL);
		nlmsg_free(msg);
		if (err) {
			z->n.no_answer++;
			fail_shown(z, i, "%s, command %u: no answer (%s)", m.what, m.cmd,
				   nl_geterror(err));
			connect_family(z);
			continue;
		}
		if (c->verbose)
			fprintf(stderr, "%llu %s cmd %u: %s%s%s\n", (unsigned long long)i, m.what,
				m.cmd, a.err ? strerror(a.err) : "ok", a.msg[0] ? ": " : "", a.msg);
		if (!a.err) {
			z->n.ok++;
			z->n.config_ok += m.kind == K_CONFIG;
		} else if (a.reason) {
			z->n.errors++;
			z->n.reasoned++;
		} else if (m.kind == K_UNKNOWN_CMD && a.err == EOPNOTSUPP) {
			z->n.errors++;
			z->n.unknown_cmd++;
		} else if ((a.err == ENOENT || a.err == EOPNOTSUPP) && family_gone(z)) {
			z->n.absent++;
		} else if (m.dump && a.err == EPROTONOSUPPORT) {
			/* netlink_dump_start(): the family's module is unloading. */
			z->n.absent++;
		} else {
			z->n.errors++;
			z->n.no_reason++;
			fail_shown(z, i, "%s, command %u%s: %s without a reason", m.what, m.cmd,
				   m.dump ? " (dump)" : "", strerror(a.err));
		}
		if (c->check_every && (i + 1) % c->check_every == 0)
			check_state(z, i, false);
	}
	check_state(z, c->count, false);
	if (c->end_reset && z->family >= 0) {
		const struct op *reset = op_named("reset");

		if (!reset)
			netagg_die("spec: no reset");
		if (ask(z, reset->cmd, 0, &a, NULL, NULL) || a.err)
			fail_shown(z, c->count, "the last reset failed: %s", strerror(a.err));
		check_state(z, c->count, true);
	}
}

static void usage(FILE *f)
{
	fputs("Usage: netagg-nlfuzz --spec FILE [OPTION]...\n"
	      "Random requests to the netagg family, built from its spec; each must be\n"
	      "answered, and the state read back must stay consistent.\n"
	      "  --spec FILE         the family's spec (uapi/netagg.yaml)\n"
	      "  --count N           messages to send (default 10000)\n"
	      "  --seed N            the run's seed (default: from the clock; printed)\n"
	      "  --config-pct P      valid configuration changes among them (default 30)\n"
	      "  --check-every N     read the state back every N messages (default 1000;\n"
	      "                      0: only at the end)\n"
	      "  --end-reset         delete everything last: memory used must be 0\n"
	      "  -j, --json          the summary in JSON\n"
	      "  -v, --verbose       every message's answer on stderr\n"
	      "  --help              this text\n"
	      "Exit status: 0 all answered and consistent, 1 not, 2 bad usage.\n", f);
}

enum { O_SPEC = NETAGG_OPT_LONG, O_COUNT, O_SEED, O_CONFIG, O_CHECK, O_END };

static void parse_args(int argc, char **argv, struct cfg *c)
{
	static const struct option opts[] = {
		{ "spec", required_argument, NULL, O_SPEC },
		{ "count", required_argument, NULL, O_COUNT },
		{ "seed", required_argument, NULL, O_SEED },
		{ "config-pct", required_argument, NULL, O_CONFIG },
		{ "check-every", required_argument, NULL, O_CHECK },
		{ "end-reset", no_argument, NULL, O_END },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char name[32];
	int opt;

	while ((opt = netagg_getopt(argc, argv, ":jvh", opts, name, sizeof(name))) != -1) {
		switch (opt) {
		case O_SPEC: c->spec = optarg; break;
		case O_COUNT: c->count = netagg_parse_num(name, optarg, 0, UINT32_MAX); break;
		case O_SEED: c->seed = netagg_parse_num(name, optarg, 1, UINT64_MAX); break;
		case O_CONFIG: c->config_pct = netagg_parse_num(name, optarg, 0, 100); break;
		case O_CHECK: c->check_every = netagg_parse_num(name, optarg, 0, UINT32_MAX); break;
		case O_END: c->end_reset = true; break;
		case 'j': c->json = true; break;
		case 'v': c->verbose = true; break;
		case 'h':
			usage(stdout);
			exit(NETAGG_EXIT_OK);
		default:
			netagg_bad_option(argv, opt);
		}
	}
	netagg_no_operands(argc, argv);
	if (!c->spec)
		netagg_usage_error("--spec is required");
}

int main(int argc, char **argv)
{
	struct cfg c = { .count = 10000, .config_pct = 30, .check_every = 1000 };
	struct fuzzer z = { .c = &c, .family = -1 };
	struct timespec now;
	bool good;

	parse_args(argc, argv, &c);
	if (!c.seed) {
		clock_gettime(CLOCK_REALTIME, &now);
		c.seed = (uint64_t)now.tv_sec * 1000003 ^ (uint64_t)now.tv_nsec ^ getpid();
		c.seed |= 1;
	}
	rng = c.seed;
	load_spec(c.spec);
	/* The seed first: a run that dies still says how to replay it. */
	fprintf(stderr, "netagg-nlfuzz: seed %llu\n", (unsigned long long)c.seed);
	connect_family(&z);
	run(&z);
	good = !z.n.no_reason && !z.n.no_answer && !z.n.inconsistent;

	netagg_out_init(stdout, c.json, false);
	netagg_out_open(NULL, '{');
	netagg_out_u64("seed", "seed", c.seed);
	netagg_out_u64("messages", "messages", c.count);
	netagg_out_u64("sent", "sent", z.n.sent);
	netagg_out_u64("config", "configuration", z.n.config);
	netagg_out_u64("config_ok", "of which applied", z.n.config_ok);
	netagg_out_u64("ok", "succeeded", z.n.ok);
	netagg_out_u64("errors", "refused", z.n.errors);
	netagg_out_u64("with_reason", "with a reason", z.n.reasoned);
	netagg_out_u64("unknown_cmd", "unknown commands", z.n.unknown_cmd);
	netagg_out_u64("no_reason", "refused without a reason", z.n.no_reason);
	netagg_out_u64("no_answer", "unanswered", z.n.no_answer);
	netagg_out_u64("family_absent", "family absent", z.n.absent);
	netagg_out_u64("checks", "state checks", z.n.checks);
	netagg_out_u64("inconsistent", "inconsistent", z.n.inconsistent);
	netagg_out_close('}');
	netagg_out_eol();
	nl_socket_free(z.sk);
	yaml_document_delete(&doc);
	return good ? NETAGG_EXIT_OK : NETAGG_EXIT_FAIL;
}

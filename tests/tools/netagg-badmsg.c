// SPDX-License-Identifier: GPL-2.0
/*
 * netagg-badmsg - send the "netagg" generic netlink family one malformed
 * request, chosen by name, and print the kernel's answer:
 *
 *   rejected (strerror): extack message
 *   accepted
 *
 * For tests: every such request must be rejected with a specific message
 * and change nothing. Built with libnl; the malformation is written into
 * the message after libnl has built it.
 *
 * Exit status: 0 an answer came (either), 1 no answer or a local error,
 * 2 bad usage.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
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

#include "exitcode.h"
#include "extack.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#define PROG	"netagg-badmsg"
#define NETAGG_STR_(x)	#x
#define NETAGG_STR(x)	NETAGG_STR_(x)
#define JID	4242	/* a job no test configures */

/*
 * The job a tree add names (JOB on the command line, else JID): the module
 * looks at a tree add's values only once it has found the job, so a test
 * names one it configured. The tree is 1, which it must not have: a tree
 * add let through would show.
 */
static uint32_t tree_jid = JID;
#define TREE_TID	1

struct bad {
	const char *name;
	const char *what;
	void (*build)(struct nl_msg *msg);
	uint8_t cmd;
};

static void put_u32(struct nl_msg *msg, int type, uint32_t v)
{
	nla_put(msg, type, sizeof(v), &v);
}

static void wrong_length(struct nl_msg *msg)
{
	uint16_t jid = JID;

	nla_put(msg, NETAGG_A_JOB_ID, sizeof(jid), &jid);
}

/* What a tree add starts with: its job, tree TREE_TID, a root. */
static void tree_add_head(struct nl_msg *msg)
{
	put_u32(msg, NETAGG_A_JOB_ID, tree_jid);
	nla_put_u16(msg, NETAGG_A_TREE_ID, TREE_TID);
	nla_put_u8(msg, NETAGG_A_ROLE, NETAGG_ROLE_ROOT);
}

static void child_length(struct nl_msg *msg)
{
	uint64_t child = 0x0101000aULL;	/* 10.0.1.1 and four more bytes */

	tree_add_head(msg);
	nla_put(msg, NETAGG_A_CHILD, sizeof(child), &child);
}

static void child6_length(struct nl_msg *msg)
{
	tree_add_head(msg);
	put_u32(msg, NETAGG_A_CHILD_IPV6, 0x0101000a);	/* an IPv4 one's 4 */
}

/* Two parents, an IPv4 and an IPv6 one (the CLI sends one). */
static void parent_both(struct nl_msg *msg)
{
	static const uint8_t parent6[16] = { 0xfd, [15] = 1 };

	tree_add_head(msg);
	put_u32(msg, NETAGG_A_PARENT, 0x0164000a);
	nla_put(msg, NETAGG_A_PARENT_IPV6, sizeof(parent6), parent6);
	put_u32(msg, NETAGG_A_CHILD, 0x0101000a);
}

/* A CHILD_PORT that follows no CHILD (the ROLE before it). */
static void port_alone(struct nl_msg *msg)
{
	tree_add_head(msg);
	nla_put_u16(msg, NETAGG_A_CHILD_PORT, htons(7178));
	put_u32(msg, NETAGG_A_CHILD, 0x0101000a);
}

/* A child's port 0 (the CLI would not send it). */
static void port_zero(struct nl_msg *msg)
{
	tree_add_head(msg);
	put_u32(msg, NETAGG_A_CHILD, 0x0101000a);
	nla_put_u16(msg, NETAGG_A_CHILD_PORT, 0);
}

static void unknown_attr(struct nl_msg *msg)
{
	put_u32(msg, NETAGG_A_JOB_ID, JID);
	put_u32(msg, NETAGG_A_MAX + 1, 1);
}

static void foreign_attr(struct nl_msg *msg)
{
	tree_add_head(msg);
	put_u32(msg, NETAGG_A_CHILD, 0x0101000a);
	put_u32(msg, NETAGG_A_MAX_JOBS, 1);
}

/* KEYED, a reply's flag, comes after KEY, the last attribute job add takes. */
static void beyond_attr(struct nl_msg *msg)
{
	put_u32(msg, NETAGG_A_JOB_ID, JID);
	put_u32(msg, NETAGG_A_KEYED, 1);
}

static void nested_tree(struct nl_msg *msg)
{
	static const char garbage[] = "\xff\xff\x7f\x00garbage";
	struct nlattr *nest;

	tree_add_head(msg);
	put_u32(msg, NETAGG_A_CHILD, 0x0101000a);
	nest = nla_nest_start(msg, NETAGG_A_TREE);
	nla_put(msg, 0x3fff, sizeof(garbage), garbage);
	nla_nest_end(msg, nest);
}

static void nested_flag(struct nl_msg *msg)
{
	put_u32(msg, NETAGG_A_JOB_ID | NLA_F_NESTED, JID);
}

/* WINDOW's header and half its value; the length cut after it. */
static void truncated(struct nl_msg *msg)
{
	put_u32(msg, NETAGG_A_JOB_ID, JID);
	put_u32(msg, NETAGG_A_WINDOW, 8);
	nlmsg_hdr(msg)->nlmsg_len -= 2;
}

static void get_attr(struct nl_msg *msg)
{
	put_u32(msg, NETAGG_A_JOB_ID, JID);
}

static void dump_attr(struct nl_msg *msg)
{
	nlmsg_hdr(msg)->nlmsg_flags |= NLM_F_DUMP;
	put_u32(msg, NETAGG_A_JOB_ID, JID);
}

static void reserved(struct nl_msg *msg)
{
	struct genlmsghdr *g = nlmsg_data(nlmsg_hdr(msg));

	g->reserved = 1;
	put_u32(msg, NETAGG_A_JOB_ID, JID);
}

static void flags(struct nl_msg *msg)
{
	nlmsg_hdr(msg)->nlmsg_flags |= NLM_F_REPLACE;
	put_u32(msg, NETAGG_A_JOB_ID, JID);
}

static const struct bad bads[] = {
	{ "wrong-length", "job add, JOB_ID of 2 bytes", wrong_length, NETAGG_CMD_JOB_NEW },
	{ "child-length", "tree add, a CHILD of 8 bytes", child_length, NETAGG_CMD_TREE_NEW },
	{ "child6-length", "tree add, a CHILD_IPV6 of 4 bytes", child6_length,
	  NETAGG_CMD_TREE_NEW },
	{ "parent-both", "tree add, a PARENT and a PARENT_IPV6", parent_both,
	  NETAGG_CMD_TREE_NEW },
	{ "port-alone", "tree add, a CHILD_PORT before any CHILD", port_alone,
	  NETAGG_CMD_TREE_NEW },
	{ "port-zero", "tree add, a CHILD of port 0", port_zero, NETAGG_CMD_TREE_NEW },
	{ "unknown-attr", "job add, an attribute above the family's last", unknown_attr,
	  NETAGG_CMD_JOB_NEW },
	{ "foreign-attr", "tree add, MAX_JOBS (another command's, below the last tree add takes)",
	  foreign_attr, NETAGG_CMD_TREE_NEW },
	{ "beyond-attr", "job add, KEYED (a reply's, past the last job add takes)",
	  beyond_attr, NETAGG_CMD_JOB_NEW },
	{ "nested-tree", "tree add, a TREE nest of garbage", nested_tree, NETAGG_CMD_TREE_NEW },
	{ "nested-flag", "job add, JOB_ID flagged as a nest", nested_flag, NETAGG_CMD_JOB_NEW },
	{ "truncated", "job add, the message cut in the middle of WINDOW", truncated,
	  NETAGG_CMD_JOB_NEW },
	{ "get-attr", "namespace get (takes no attribute) with JOB_ID", get_attr,
	  NETAGG_CMD_NS_GET },
	{ "dump-attr", "stats dump (takes no attribute) with JOB_ID", dump_attr,
	  NETAGG_CMD_STATS_GET },
	{ "reserved", "job add, the genetlink header's reserved byte set", reserved,
	  NETAGG_CMD_JOB_NEW },
	{ "flags", "job add with NLM_F_REPLACE", flags, NETAGG_CMD_JOB_NEW },
};

static void usage(FILE *f)
{
	fputs("Usage: " PROG " CASE [JOB]\n"
	      "Send the netagg family one malformed request and print its answer.\n"
	      "JOB: the job a tree add names (default " NETAGG_STR(JID) "), tree "
	      NETAGG_STR(TREE_TID) " of it absent.\n"
	      "Cases:\n", f);
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++)
		fprintf(f, "  %-14s %s\n", bads[i].name, bads[i].what);
	fputs("Exit status: 0 answered, 1 no answer or local error, 2 usage error.\n", f);
}

static void __attribute__((noreturn)) fail(const char *what, int err)
{
	fprintf(stderr, PROG ": %s: %s\n", what, nl_geterror(err));
	exit(NETAGG_EXIT_FAIL);
}

struct answer {
	bool done;
	int err;
	char msg[256];
};

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)e - 1;
	struct answer *a = arg;

	(void)nla;
	a->err = -e->error;
	netagg_extack_msg(nlh, netagg_nlmsgerr_tlv_offset(nlh), a->msg, sizeof(a->msg));
	a->done = true;
	return NL_STOP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	struct answer *a = arg;

	(void)msg;
	a->done = true;
	return NL_STOP;
}

int main(int argc, char **argv)
{
	const struct bad *bad = NULL;
	struct answer a = { 0 };
	struct nl_sock *sk;
	struct nl_msg *msg;
	struct nl_cb *cb;
	int family, one = 1, err;

	if (argc == 2 && !strcmp(argv[1], "--help")) {
		usage(stdout);
		return NETAGG_EXIT_OK;
	}
	for (size_t i = 0; (argc == 2 || argc == 3) && i < sizeof(bads) / sizeof(bads[0]); i++)
		if (!strcmp(argv[1], bads[i].name))
			bad = &bads[i];
	if (bad && argc == 3) {
		char *end;
		unsigned long v = strtoul(argv[2], &end, 10);

		if (*argv[2] < '0' || *argv[2] > '9' || *end || v > UINT32_MAX)
			bad = NULL;
		tree_jid = v;
	}
	if (!bad) {
		usage(stderr);
		return NETAGG_EXIT_USAGE;
	}

	sk = nl_socket_alloc();
	if (!sk)
		fail("socket", -NLE_NOMEM);
	err = genl_connect(sk);
	if (err < 0)
		fail("connect", err);
	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	family = genl_ctrl_resolve(sk, NETAGG_GENL_NAME);
	if (family < 0)
		fail("family " NETAGG_GENL_NAME, family);

	msg = nlmsg_alloc();
	if (!msg || !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, 0,
				 bad->cmd, NETAGG_GENL_VERSION))
		fail("message", -NLE_NOMEM);
	nl_complete_msg(sk, msg);
	bad->build(msg);

	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb)
		fail("callbacks", -NLE_NOMEM);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, &a);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, &a);
	err = nl_send(sk, msg);
	nlmsg_free(msg);
	if (err < 0)
		fail("send", err);
	while (!a.done) {
		err = nl_recvmsgs(sk, cb);
		if (err < 0 && !a.done)
			fail("receive", err);
	}
	nl_cb_put(cb);
	nl_socket_free(sk);

	if (a.err)
		printf("rejected (%s): %s\n", strerror(a.err), a.msg[0] ? a.msg : "(no message)");
	else
		printf("accepted\n");
	return NETAGG_EXIT_OK;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The netagg CLI's netlink transactions (libnl-genl): one socket, opened
 * on first use; a request out, its replies to a handler, its ack or error
 * back, with the kernel's extack message.
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
#include <sys/socket.h>

#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>

#include "cli.h"
#include "exitcode.h"
#include "extack.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

static struct nl_sock *sk;
static int family;

struct nl_sock *netagg_nl_sock(void)
{
	int one = 1, err;

	if (sk)
		return sk;
	sk = nl_socket_alloc();
	if (!sk)
		netagg_fatal(strerror(ENOMEM));
	err = genl_connect(sk);
	if (err < 0)
		netagg_fatal(nl_geterror(err));
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
		netagg_fatal("netagg module not loaded (generic netlink family \""
		      NETAGG_GENL_NAME "\" not found)");
	if (family < 0)
		netagg_fatal(nl_geterror(family));
	return sk;
}

void netagg_nl_close(void)
{
	if (sk)
		nl_socket_free(sk);
	sk = NULL;
}

struct xfer {
	netagg_reply_fn parse;
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
		netagg_line_prefix();
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

	if (genlmsg_parse(nlh, 0, tb, NETAGG_A_MAX, netagg_reply_policy) < 0) {
		x->err = EBADMSG;
		snprintf(x->msg, sizeof(x->msg), "malformed reply from the kernel");
		return NL_OK;	/* keep reading up to the ack */
	}
	if (x->parse)
		x->parse(tb, genlmsg_attrdata(gnlh, 0),
			 genlmsg_attrlen(gnlh, 0), x->arg);
	return NL_OK;
}

/* The request being built, until netagg_transact() sends it: what a usage
 * error in batch mode leaves behind for the batch loop to free.
 */
static struct nl_msg *pending;

/* The family id is only known once connected, so netagg_transact() fills it
 * in: the command line is parsed straight into the request.
 */
struct nl_msg *netagg_request(uint8_t cmd, int flags)
{
	/* Roomier than a page: a tree may list many children. */
	struct nl_msg *msg = nlmsg_alloc_size(32768);

	if (!msg || !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, 0, 0, flags,
				 cmd, NETAGG_GENL_VERSION))
		netagg_fatal(strerror(ENOMEM));
	pending = msg;
	return msg;
}

void netagg_request_drop(void)
{
	nlmsg_free(pending);	/* NULL is fine */
	pending = NULL;
}

int netagg_transact(struct nl_msg *msg, netagg_reply_fn parse, void *arg)
{
	struct xfer x = { .parse = parse, .arg = arg };
	struct nl_cb *cb;
	int err;

	netagg_nl_sock();
	nlmsg_hdr(msg)->nlmsg_type = family;
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb)
		netagg_fatal(strerror(ENOMEM));
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
		netagg_line_prefix();
		fprintf(stderr, "Error: %s\n", nl_geterror(err));
		return NETAGG_EXIT_FAIL;
	}
	if (x.err) {
		netagg_line_prefix();
		fprintf(stderr, "Error: %s\n", x.msg[0] ? x.msg : strerror(x.err));
		return NETAGG_EXIT_FAIL;
	}
	return NETAGG_EXIT_OK;
}


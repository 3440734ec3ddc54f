// SPDX-License-Identifier: GPL-2.0
/* Reading the kernel's extack message: see extack.h. */
#include <stdio.h>
#include <string.h>

#include <netlink/attr.h>
#include <netlink/msg.h>

#include "extack.h"

void netagg_extack_msg(const struct nlmsghdr *nlh, size_t off, char *buf,
		       size_t size)
{
	struct nlattr *a;
	int rem;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS) || nlh->nlmsg_len <= off)
		return;
	nla_for_each_attr(a, (struct nlattr *)((char *)nlh + off),
			  (int)(nlh->nlmsg_len - off), rem)
		if (nla_type(a) == NLMSGERR_ATTR_MSG)
			snprintf(buf, size, "%.*s",
				 (int)strnlen(nla_data(a), nla_len(a)),
				 (char *)nla_data(a));
}

size_t netagg_nlmsgerr_tlv_offset(const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e = nlmsg_data(nlh);
	size_t off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(*e));

	if (!(nlh->nlmsg_flags & NLM_F_CAPPED) &&
	    e->msg.nlmsg_len > NLMSG_HDRLEN)
		off += NLMSG_ALIGN(e->msg.nlmsg_len - NLMSG_HDRLEN);
	return off;
}

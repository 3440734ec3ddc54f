/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's extended ack (extack) message of a netlink error, read from
 * the TLVs libnl does not look at: for the netagg CLI and the tools that
 * speak the family.
 */
#ifndef NETAGG_EXTACK_H
#define NETAGG_EXTACK_H

#include <stddef.h>
#include <linux/netlink.h>

/*
 * Copy NLMSGERR_ATTR_MSG of the extack TLVs that start @off bytes into
 * @nlh into @buf (left as it is if there is none).
 */
void netagg_extack_msg(const struct nlmsghdr *nlh, size_t off, char *buf,
		       size_t size);

/*
 * Where the TLVs of an NLMSG_ERROR start: after struct nlmsgerr and, unless
 * the kernel capped it (NLM_F_CAPPED), the echoed request's payload.
 */
size_t netagg_nlmsgerr_tlv_offset(const struct nlmsghdr *nlh);

#endif /* NETAGG_EXTACK_H */

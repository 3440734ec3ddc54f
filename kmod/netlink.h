/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_NETLINK_H
#define _NETAGG_NETLINK_H

#include <net/genetlink.h>
#include <net/netlink.h>

int netagg_genl_register(void);
void netagg_genl_unregister(void);

/*
 * A missing mandatory attribute: -EINVAL, the attribute's type reported as
 * missing (NLMSGERR_ATTR_MISS_TYPE, which ynl and other clients name) and
 * @msg saying it in words. For the family's dos (netlink.c, netlink_tree.c).
 */
#define netagg_nl_require(info, type, msg) ({			\
	int __err = 0;						\
								\
	if (GENL_REQ_ATTR_CHECK(info, type)) {			\
		NL_SET_ERR_MSG((info)->extack, msg);		\
		__err = -EINVAL;				\
	}							\
	__err;							\
})

#endif /* _NETAGG_NETLINK_H */

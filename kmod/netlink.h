/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_NETLINK_H
#define _NETAGG_NETLINK_H

int netagg_genl_register(void);
void netagg_genl_unregister(void);

#endif /* _NETAGG_NETLINK_H */

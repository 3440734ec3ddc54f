/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_XDP_H
#define _NETAGG_XDP_H

struct xdp_md;

void netagg_xdp_init(void);
/* The kfunc XDP programs call (xdp/netagg_xdp.bpf.c). */
int netagg_xdp_rx(struct xdp_md *ctx);

#endif /* _NETAGG_XDP_H */

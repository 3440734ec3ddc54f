// SPDX-License-Identifier: GPL-2.0
/* netagg: in-network gradient aggregation in softirq. */

#include <linux/module.h>
#include <linux/rcupdate.h>
#include <net/genetlink.h>
#include "netns.h"
#include "job.h"
#include "agg.h"
#include "netlink.h"
#include "reduce.h"
#include "simd.h"
#include "xdp.h"

static int __init netagg_init(void)
{
	int err;

	err = netagg_reduce_init();
	if (err)
		goto err_out;
	err = netagg_agg_init();
	if (err)
		goto err_out;
	/* Namespace state before the family: the handlers use it. */
	err = netagg_netns_register();
	if (err)
		goto err_agg;
	err = netagg_genl_register();
	if (err)
		goto err_netns;
	/* Last: a kfunc set, once offered, cannot be taken back. */
	netagg_xdp_init();
	pr_info("loaded\n");
	return 0;

err_netns:
	netagg_netns_unregister();
	rcu_barrier();
err_agg:
	netagg_agg_exit();
err_out:
	return err;
}

static void __exit netagg_exit(void)
{
	netagg_genl_unregister();
	netagg_netns_unregister();
	/* Jobs and trees are freed by RCU callbacks: let them run. */
	rcu_barrier();
	netagg_agg_exit();
	netagg_job_leak_check();
	pr_info("unloaded\n");
}

module_init(netagg_init);
module_exit(netagg_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("In-network gradient aggregation");
MODULE_AUTHOR("The netagg developers");
MODULE_VERSION(NETAGG_VERSION);
MODULE_ALIAS_GENL_FAMILY(NETAGG_GENL_NAME);

// SPDX-License-Identifier: GPL-2.0
/* Per network namespace state: every namespace is its own set of switches. */

#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include "netns.h"
#include "job.h"
#include "hook.h"

static unsigned int netagg_net_id __read_mostly;

/**
 * netagg_pernet() - A namespace's netagg state.
 * @net: the namespace
 *
 * Return: its state.
 */
struct netagg_net *netagg_pernet(const struct net *net)
{
	return net_generic(net, netagg_net_id);
}

static int __net_init netagg_net_init(struct net *net)
{
	struct netagg_net *nn = netagg_pernet(net);
	int err;

	nn->net = net;
	mutex_init(&nn->lock);
	xa_init(&nn->jobs);
	nn->max_jobs = NETAGG_JOBS_DEFAULT;
	nn->mem_limit = NETAGG_MEM_LIMIT_DEFAULT;
	nn->dscp = NETAGG_DSCP;
	nn->port = htons(NETAGG_UDP_PORT);
	err = netagg_stats_init(&nn->stats);
	if (err)
		return err;
	err = netagg_hook_register(net, nn);
	if (err)
		netagg_stats_free(&nn->stats);
	return err;
}

/*
 * The core waits for an RCU grace period between pre_exit and exit: then
 * neither hook is inside the namespace's state. An XDP program cannot be
 * unhooked from here (it is the devices'), so the XDP entry is told.
 */
static void __net_exit netagg_net_pre_exit(struct net *net)
{
	struct netagg_net *nn = netagg_pernet(net);

	WRITE_ONCE(nn->exiting, true);
	netagg_hook_unregister(net, nn);
}

static void __net_exit netagg_net_exit(struct net *net)
{
	struct netagg_net *nn = netagg_pernet(net);

	mutex_lock(&nn->lock);
	netagg_jobs_flush(nn);
	mutex_unlock(&nn->lock);
	xa_destroy(&nn->jobs);
	netagg_stats_free(&nn->stats);
	mutex_destroy(&nn->lock);
}

static struct pernet_operations netagg_net_ops = {
	.init = netagg_net_init,
	.pre_exit = netagg_net_pre_exit,
	.exit = netagg_net_exit,
	.id = &netagg_net_id,
	.size = sizeof(struct netagg_net),
};

/**
 * netagg_netns_register() - Give every namespace its netagg state.
 *
 * Return: 0, or register_pernet_subsys()'s error.
 */
int __init netagg_netns_register(void)
{
	return register_pernet_subsys(&netagg_net_ops);
}

/**
 * netagg_netns_unregister() - Take it back, the namespaces' jobs with it.
 */
void netagg_netns_unregister(void)
{
	unregister_pernet_subsys(&netagg_net_ops);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * A split op table on every kernel the module builds for (see
 * compat/genl.h): folded into 6.1's genl_ops, or given to the core with a
 * policy for every op, as the core gives its legacy ops.
 */

#include <linux/bug.h>
#include <linux/netagg.h>
#include "genl.h"

#ifdef NETAGG_GENL_FOLD_SPLIT_OPS
/* One per command at most; filled before the family is registered. */
static struct genl_ops netagg_genl_ops[NETAGG_CMD_MAX];
static const struct genl_split_ops *netagg_genl_split;
static unsigned int netagg_genl_n_split;

static const struct genl_split_ops *netagg_genl_do(u8 cmd)
{
	unsigned int i;

	for (i = 0; i < netagg_genl_n_split; i++)
		if (netagg_genl_split[i].cmd == cmd &&
		    netagg_genl_split[i].flags & GENL_CMD_CAP_DO)
			return &netagg_genl_split[i];
	return NULL;
}

/* 6.1 has one pre_doit and post_doit a family: each calls its do's own. */
static int netagg_genl_pre_doit(const struct genl_ops *ops,
				struct sk_buff *skb, struct genl_info *info)
{
	const struct genl_split_ops *op = netagg_genl_do(ops->cmd);

	return op && op->pre_doit ? op->pre_doit(op, skb, info) : 0;
}

static void netagg_genl_post_doit(const struct genl_ops *ops,
				  struct sk_buff *skb, struct genl_info *info)
{
	const struct genl_split_ops *op = netagg_genl_do(ops->cmd);

	if (op && op->post_doit)
		op->post_doit(op, skb, info);
}

/*
 * A command's do and dump become one genl_ops, the do's policy checking
 * both (6.1 has one policy a command).
 */
static void netagg_genl_fold(struct genl_family *family,
			     const struct genl_split_ops *ops,
			     unsigned int n_ops)
{
	unsigned int i, n = 0;
	struct genl_ops *op;

	for (i = 0; i < n_ops; i++) {
		if (!n || netagg_genl_ops[n - 1].cmd != ops[i].cmd) {
			if (WARN_ON(n == ARRAY_SIZE(netagg_genl_ops)))
				break;
			n++;
		}
		op = &netagg_genl_ops[n - 1];
		op->cmd = ops[i].cmd;
		op->flags |= ops[i].flags & ~(GENL_CMD_CAP_DO | GENL_CMD_CAP_DUMP);
		op->validate |= ops[i].validate;
		if (ops[i].flags & GENL_CMD_CAP_DO) {
			op->doit = ops[i].doit;
			op->policy = ops[i].policy;
			op->maxattr = ops[i].maxattr;
		} else {
			op->start = ops[i].start;
			op->dumpit = ops[i].dumpit;
			op->done = ops[i].done;
			if (!op->policy) {
				op->policy = ops[i].policy;
				op->maxattr = ops[i].maxattr;
			}
		}
	}
	netagg_genl_split = ops;
	netagg_genl_n_split = n_ops;
	family->ops = netagg_genl_ops;
	family->n_ops = n;
	family->pre_doit = netagg_genl_pre_doit;
	family->post_doit = netagg_genl_post_doit;
}
#else
/* A do and a dump each at most a command; filled before registering. */
static struct genl_split_ops netagg_genl_split_ops[2 * NETAGG_CMD_MAX];

/* The core's answer to an attribute where a command takes none. */
static const struct nla_policy netagg_genl_reject_all[] = {
	{ .type = NLA_REJECT },
	{ .type = NLA_REJECT },
};

/*
 * The core rejects every attribute of a legacy op without a policy, but
 * parses none of a split op without one: it would take a request's
 * attributes without a look (ns-get's, a dump's). Such ops get the policy
 * the core gives legacy ones, so that every kernel refuses them alike.
 */
static void netagg_genl_reject_unlisted(struct genl_family *family,
					const struct genl_split_ops *ops,
					unsigned int n_ops)
{
	struct genl_split_ops *op = netagg_genl_split_ops;
	unsigned int i;

	if (WARN_ON(n_ops > ARRAY_SIZE(netagg_genl_split_ops)))
		n_ops = ARRAY_SIZE(netagg_genl_split_ops);
	for (i = 0; i < n_ops; i++) {
		op[i] = ops[i];
		if (!op[i].policy) {
			op[i].policy = netagg_genl_reject_all;
			op[i].maxattr = ARRAY_SIZE(netagg_genl_reject_all) - 1;
		}
	}
	family->split_ops = op;
	family->n_split_ops = n_ops;
}
#endif

/**
 * netagg_genl_set_ops() - Give a family its split op table.
 * @family: the family, not yet registered
 * @ops: the table, a command's do before its dump
 * @n_ops: entries of @ops
 */
void netagg_genl_set_ops(struct genl_family *family,
			 const struct genl_split_ops *ops, unsigned int n_ops)
{
#ifdef NETAGG_GENL_FOLD_SPLIT_OPS
	netagg_genl_fold(family, ops, n_ops);
#else
	netagg_genl_reject_unlisted(family, ops, n_ops);
#endif
}

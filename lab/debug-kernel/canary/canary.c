// SPDX-License-Identifier: GPL-2.0
/*
 * A module with one bug of the kind the debug kernel is there to find,
 * chosen at load by bug=NAME: make check-debug loads it once for each
 * name, each in a VM of its own, and expects that checker's report to
 * fail the run. Proof that a bug of the module would not pass unseen.
 */

#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/timer.h>

static char *bug = "";
module_param(bug, charp, 0444);
MODULE_PARM_DESC(bug, "uaf, oob, leak, lockorder, sleep, rcu, timer or shift");

static void *netagg_canary_leaked;
static int netagg_canary_width = 40;	/* past a u32's */
static int __rcu *netagg_canary_ptr;
static DEFINE_SPINLOCK(netagg_canary_a);
static DEFINE_SPINLOCK(netagg_canary_b);
static DEFINE_MUTEX(netagg_canary_m);

static void netagg_canary_timer_fn(struct timer_list *t)
{
}

/* Each bad read is READ_ONCE(): the compiler keeps it. */
static int netagg_canary_run(void)
{
	struct timer_list *timer;
	u32 one = 1;
	char *p;

	if (!strcmp(bug, "uaf")) {
		p = kmalloc(64, GFP_KERNEL);
		if (!p)
			return -ENOMEM;
		kfree(p);
		return READ_ONCE(p[8]);	/* KASAN: slab-use-after-free */
	}
	if (!strcmp(bug, "oob")) {
		p = kmalloc(64, GFP_KERNEL);
		if (!p)
			return -ENOMEM;
		one = READ_ONCE(p[64]);	/* KASAN: slab-out-of-bounds */
		kfree(p);
		return 0;
	}
	if (!strcmp(bug, "leak")) {
		/*
		 * Forgotten: only the scans after the test find them. Many,
		 * as the last one's address may stay in a stack kmemleak scans.
		 */
		for (int i = 0; i < 32; i++)
			WRITE_ONCE(netagg_canary_leaked, kmalloc(128, GFP_KERNEL));
		WRITE_ONCE(netagg_canary_leaked, NULL);
		return 0;
	}
	if (!strcmp(bug, "lockorder")) {
		/* A then B here, B then A there: lockdep sees both orders. */
		spin_lock(&netagg_canary_a);
		spin_lock(&netagg_canary_b);
		spin_unlock(&netagg_canary_b);
		spin_unlock(&netagg_canary_a);
		spin_lock(&netagg_canary_b);
		spin_lock(&netagg_canary_a);
		spin_unlock(&netagg_canary_a);
		spin_unlock(&netagg_canary_b);
		return 0;
	}
	if (!strcmp(bug, "sleep")) {
		/* A lock that may sleep, under a spinlock: even uncontended. */
		spin_lock_bh(&netagg_canary_a);
		mutex_lock(&netagg_canary_m);
		mutex_unlock(&netagg_canary_m);
		spin_unlock_bh(&netagg_canary_a);
		return 0;
	}
	if (!strcmp(bug, "rcu")) {
		/* Outside rcu_read_lock(): suspicious RCU usage. */
		return rcu_dereference(netagg_canary_ptr) ? 1 : 0;
	}
	if (!strcmp(bug, "timer")) {
		timer = kmalloc(sizeof(*timer), GFP_KERNEL);
		if (!timer)
			return -ENOMEM;
		timer_setup(timer, netagg_canary_timer_fn, 0);
		mod_timer(timer, jiffies + HZ);
		kfree(timer);		/* ODEBUG: free active object */
		return 0;
	}
	if (!strcmp(bug, "shift")) {
		one <<= READ_ONCE(netagg_canary_width);	/* UBSAN: shift-out-of-bounds */
		return one == 7;
	}
	return -EINVAL;
}

static int __init netagg_canary_init(void)
{
	int ret = netagg_canary_run();

	pr_info("netagg_canary: bug=%s done (%d)\n", bug, ret);
	return ret < 0 ? ret : 0;
}

static void __exit netagg_canary_exit(void)
{
}

module_init(netagg_canary_init);
module_exit(netagg_canary_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("netagg: a bug for the debug kernel to find");

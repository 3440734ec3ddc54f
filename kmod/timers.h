/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_TIMERS_H
#define _NETAGG_TIMERS_H

#include <linux/timer.h>
#include "job.h"

/* The callbacks of a tree's timers, which job.c sets up and shuts down. */
void netagg_tree_straggler(struct timer_list *t);
void netagg_tree_watch(struct timer_list *t);

/*
 * Something of @tree waits and is to be looked at by @due: the head VID
 * for its missing children, or a sum sent up for the parent's result. An
 * earlier run is kept (timer_reduce() then costs a compare, no lock): it
 * looks at everything and sets the next. Under the tree's lock, as the
 * run is, so that the two are in order.
 */
static inline void netagg_watch_arm(struct netagg_tree *tree,
				    unsigned long due)
{
	timer_reduce(&tree->watch_timer, due);
}

#endif /* _NETAGG_TIMERS_H */

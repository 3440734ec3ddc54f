/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_TIMERS_H
#define _NETAGG_TIMERS_H

struct timer_list;

/* The callbacks of a tree's timers, which job.c sets up and shuts down. */
void netagg_tree_straggler(struct timer_list *t);
void netagg_tree_watch(struct timer_list *t);

#endif /* _NETAGG_TIMERS_H */

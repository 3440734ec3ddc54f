// SPDX-License-Identifier: GPL-2.0
/* Per-CPU counters of the namespace, jobs and trees. */

#include <linux/string.h>
#include "stats.h"

/**
 * netagg_stats_init() - Allocate a set of counters, all zero.
 * @stats: the set
 *
 * Return: 0, or -ENOMEM.
 */
int netagg_stats_init(struct netagg_stats *stats)
{
	int cpu;

	stats->pcpu = alloc_percpu_gfp(struct netagg_pcpu_stats,
				       GFP_KERNEL_ACCOUNT);
	if (!stats->pcpu)
		return -ENOMEM;
	for_each_possible_cpu(cpu)
		u64_stats_init(&per_cpu_ptr(stats->pcpu, cpu)->syncp);
	memset(stats->base, 0, sizeof(stats->base));
	return 0;
}

/**
 * netagg_stats_free() - Free a set of counters.
 * @stats: the set
 */
void netagg_stats_free(struct netagg_stats *stats)
{
	free_percpu(stats->pcpu);
	stats->pcpu = NULL;
}

static void netagg_stats_sum(const struct netagg_stats *stats,
			     u64 out[__NETAGG_STAT_MAX])
{
	u64 one[__NETAGG_STAT_MAX];
	unsigned int start;
	int cpu, i;

	memset(out, 0, sizeof(u64) * __NETAGG_STAT_MAX);
	for_each_possible_cpu(cpu) {
		const struct netagg_pcpu_stats *p = per_cpu_ptr(stats->pcpu, cpu);

		do {
			start = u64_stats_fetch_begin(&p->syncp);
			for (i = 0; i < __NETAGG_STAT_MAX; i++)
				one[i] = u64_stats_read(&p->cnt[i]);
		} while (u64_stats_fetch_retry(&p->syncp, start));
		for (i = 0; i < __NETAGG_STAT_MAX; i++)
			out[i] += one[i];
	}
}

/**
 * netagg_stats_read() - Read a set of counters since its last reset.
 * @stats: the set
 * @out: the counters, summed over the CPUs
 */
void netagg_stats_read(const struct netagg_stats *stats,
		       u64 out[__NETAGG_STAT_MAX])
{
	int i;

	netagg_stats_sum(stats, out);
	for (i = 0; i < __NETAGG_STAT_MAX; i++)
		out[i] -= stats->base[i];
}

/**
 * netagg_stats_reset() - Make the current totals the new zero.
 * @stats: the set
 *
 * Other CPUs' counters are not written. Callers serialise resets and reads
 * with the namespace's config lock.
 */
void netagg_stats_reset(struct netagg_stats *stats)
{
	netagg_stats_sum(stats, stats->base);
}

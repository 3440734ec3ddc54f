/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NETAGG_STATS_H
#define _NETAGG_STATS_H

#include <linux/bits.h>
#include <linux/percpu.h>
#include <linux/u64_stats_sync.h>
#include <linux/netagg.h>

struct netagg_pcpu_stats {
	u64_stats_t cnt[__NETAGG_STAT_MAX];
	struct u64_stats_sync syncp;
};

/*
 * Per-CPU counters, bumped lock-free on the packet path. A reset records the
 * current totals as the new zero instead of writing the per-CPU counters,
 * which would race with the CPUs that own them.
 */
struct netagg_stats {
	struct netagg_pcpu_stats __percpu *pcpu;
	u64 base[__NETAGG_STAT_MAX];
};

/* Which counters each level keeps and reports (see uapi/linux/netagg.h). */
#define NETAGG_STATS_NS		(BIT_ULL(NETAGG_STAT_NS_SEEN) |		\
				 BIT_ULL(NETAGG_STAT_NS_UNKNOWN_JOB) |	\
				 BIT_ULL(NETAGG_STAT_NS_FRAGMENT) |	\
				 BIT_ULL(NETAGG_STAT_NS_SHORT) |	\
				 BIT_ULL(NETAGG_STAT_NS_XDP) |		\
				 BIT_ULL(NETAGG_STAT_NS_EXTHDR))
#define NETAGG_STATS_JOB	(BIT_ULL(NETAGG_STAT_RX) |		\
				 BIT_ULL(NETAGG_STAT_DROP_SHORT) |	\
				 BIT_ULL(NETAGG_STAT_DROP_VERSION) |	\
				 BIT_ULL(NETAGG_STAT_DROP_DTYPE) |	\
				 BIT_ULL(NETAGG_STAT_DROP_LENGTH) |	\
				 BIT_ULL(NETAGG_STAT_DROP_SEGMENT) |	\
				 BIT_ULL(NETAGG_STAT_NO_TREE) |		\
				 BIT_ULL(NETAGG_STAT_DROP_TAG))
/* A slot's count can disagree with a packet's: DROP_LENGTH there too. */
#define NETAGG_STATS_TREE	((GENMASK_ULL(NETAGG_STAT_MAX, NETAGG_STAT_RX) & \
				  ~NETAGG_STATS_JOB & ~NETAGG_STATS_NS) |	\
				 BIT_ULL(NETAGG_STAT_RX) |			\
				 BIT_ULL(NETAGG_STAT_DROP_LENGTH))

int netagg_stats_init(struct netagg_stats *stats);
void netagg_stats_free(struct netagg_stats *stats);
void netagg_stats_read(const struct netagg_stats *stats,
		       u64 out[__NETAGG_STAT_MAX]);
void netagg_stats_reset(struct netagg_stats *stats);

/* Called with BHs disabled: from the netfilter hook. */
static inline void netagg_stats_inc(struct netagg_stats *stats,
				    enum netagg_stat idx)
{
	struct netagg_pcpu_stats *p = this_cpu_ptr(stats->pcpu);

	u64_stats_update_begin(&p->syncp);
	u64_stats_inc(&p->cnt[idx]);
	u64_stats_update_end(&p->syncp);
}

/* @n at once: the segments of a super-packet. */
static inline void netagg_stats_add(struct netagg_stats *stats,
				    enum netagg_stat idx, unsigned int n)
{
	struct netagg_pcpu_stats *p = this_cpu_ptr(stats->pcpu);

	u64_stats_update_begin(&p->syncp);
	u64_stats_add(&p->cnt[idx], n);
	u64_stats_update_end(&p->syncp);
}

#endif /* _NETAGG_STATS_H */

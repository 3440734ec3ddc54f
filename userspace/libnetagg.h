/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libnetagg - the worker side of netagg: allreduce a buffer through the
 * job's aggregation trees.
 *
 * The buffer of count elements is cut into chunks of at most
 * netagg_elems_per_packet(mtu) elements. Chunk c goes to tree c % ntrees
 * with VID c / ntrees; the last chunk of each tree carries NETAGG_F_FIN,
 * which resets the tree on the nodes, so every allreduce numbers VIDs from 0.
 * At most `window` VIDs per tree are in flight. Each RESULT is written in
 * place over its chunk, so after a failure the buffer is partly overwritten.
 *
 * Not thread safe: one worker, one allreduce at a time.
 */
#ifndef LIBNETAGG_H
#define LIBNETAGG_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/netagg.h>

/* Where a worker sends a tree's contributions (UDP port NETAGG_UDP_PORT). */
struct netagg_tree_dst {
	uint16_t tid;
	struct in_addr addr;
};

struct netagg_worker_cfg {
	uint32_t jid;
	uint8_t dtype;			/* NETAGG_DTYPE_F32 or _I32 */
	unsigned int mtu;		/* the job's MTU: elements per packet derive from it (default 1500 if 0) */
	unsigned int window;		/* VIDs in flight per tree (default 64 if 0) */
	unsigned int timeout_ms;	/* no progress for this long: fail (default 2000 if 0) */
	struct in_addr src;		/* bind address, INADDR_ANY if 0 */
	unsigned int ntrees;
	struct netagg_tree_dst trees[NETAGG_TREES_MAX];
};

struct netagg_worker;	/* opaque: socket + buffers */

/* 0 or -errno (-EINVAL for a bad configuration, else the socket's error). */
int netagg_worker_open(const struct netagg_worker_cfg *cfg, struct netagg_worker **w);
void netagg_worker_close(struct netagg_worker *w);

/* Of one netagg_allreduce() call. */
struct netagg_allreduce_info {
	uint64_t packets_sent;		/* contributions sent */
	uint64_t packets_received;	/* results accepted (one a chunk) */
	uint64_t packets_ignored;	/* everything else that arrived */
	unsigned int min_contributors, max_contributors;	/* over the results; 0 if none */
};

/*
 * Sum buf (count elements of the job's dtype, host byte order) with every
 * other worker's, in place. Returns 0, or -errno: -ETIMEDOUT when no result
 * arrived for timeout_ms, -EINVAL for a NULL buf with count > 0, -E2BIG for
 * more chunks than VIDs can number, -ENOMEM, or a socket error. info may be
 * NULL; it is filled in on failure too.
 */
int netagg_allreduce(struct netagg_worker *w, void *buf, size_t count,
		     struct netagg_allreduce_info *info);

/* Elements in one packet for a job MTU (IPv4 + UDP + netagg headers). */
static inline unsigned int netagg_elems_per_packet(unsigned int mtu)
{
	return (mtu - 20 - 8 - sizeof(struct netagg_hdr)) / 4;
}

#endif /* LIBNETAGG_H */

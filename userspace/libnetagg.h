/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libnetagg - the worker side of netagg: allreduce a buffer through the
 * job's aggregation trees.
 *
 * The buffer of count elements is cut into chunks of at most
 * netagg_elems_per_packet(mtu, dtype) elements. Chunk c goes to tree
 * c % ntrees with VID c / ntrees. Every allreduce is a round (see rounds in
 * linux/netagg.h): its contributions carry the round number, VIDs count
 * from 0 in it, and the last chunk of each tree carries NETAGG_F_FIN, which
 * ends the round on the nodes. At most `window` VIDs per tree are in flight.
 * Each RESULT of the round is written in place over its chunk, so after a
 * failure the buffer is partly overwritten.
 *
 * Who is in a result: every result says how many worker contributions it
 * sums (its contributors field), and a node marks NETAGG_F_REGROUPED the
 * results of a round whose children changed while it ran (then results of
 * one allreduce may sum different sets of workers). By default a result is
 * accepted only if it sums exactly cfg.workers contributions and is not
 * regrouped: the whole buffer is then the sum over the same cfg.workers
 * workers. Any other result is not written into the buffer, and the call,
 * which still goes on to the end of the round so that the other workers
 * are not held up, fails with -EREMOTEIO; info says what came. A caller
 * that carries on when workers are removed (the fault-tolerant path) sets
 * cfg.quorum below cfg.workers: results summing from quorum to workers
 * contributions are accepted, regrouped ones too, and info.min_contributors
 * and max_contributors say how many each chunk had at least and at most.
 * A result of more than cfg.workers contributions is never accepted.
 *
 * Partial aggregation: a tree with a quorum completes a VID without the
 * children that have not contributed by then; a contribution that comes
 * after is not summed, and the node answers it with the result, marked
 * NETAGG_F_LATE. Such a result holds the other workers' sum without this
 * one's: accepted like any other of its contributors (so only with a
 * quorum below workers), and counted in info.late.
 *
 * Super-packets: by default a worker sends runs of consecutive chunks of a
 * tree as one UDP GSO send (UDP_SEGMENT: each segment one aggregation
 * packet, header and payload), and takes results the same way (UDP_GRO), so
 * the stack is paid once for up to 64 KiB rather than once a chunk. The
 * nodes sum every segment as the packet it stands for, and plain packets
 * and super-packets mix on a tree. cfg.plain sends and receives plain
 * packets only; a path that refuses a GSO send (no checksum offload) turns
 * the worker to plain packets by itself.
 *
 * Loss: when a chunk's result has not come within the retransmission
 * timeout, the worker probes the node (NETAGG_F_PROBE: a header alone, for
 * the next 64 VIDs); the node resends the results it kept and says which
 * contributions it holds, and only the chunks it lacks are sent again,
 * with NETAGG_F_RETRY (a node that already summed one answers from the
 * result it kept). Those it holds wait for other workers: one late to the
 * allreduce costs the others a few probes, no resend. If the node has not
 * answered by the next timeout, the overdue chunks are resent anyway. As TCP restarts its timer on every ACK
 * of new data, the timeout runs from the chunk's send or from the tree's
 * last result, whichever is later: nodes complete VIDs in order, so while
 * results come the chunks behind them are only queued (a result lost
 * among them is asked for again by the gap it leaves: fast retransmit),
 * and only a tree that has stopped answering is resent to. Results may
 * overtake each other (they leave the nodes from several CPUs): a chunk
 * passed by a later result is asked for again only after a reordering
 * window (a quarter of SRTT, or twice the longest delay of an overtaken
 * result seen lately), as TCP's RACK does. The timeout
 * (RTO) adapts to the round trip of each tree as TCP's does (RFC 6298:
 * SRTT + 4 x RTTVAR, sampled only from chunks sent once, a sample counting
 * for at most 2 x SRTT), starts at 200 ms and stays within [rto_min_ms,
 * 1000 ms]. Each timeout of a
 * chunk doubles its timeout (up to 64 x RTO, never above 1000 ms); when
 * chunks time out and no sample comes, new chunks start from the doubled
 * timeout until one does (Karn). Resending never extends the call: it
 * fails with -ETIMEDOUT once no new result came for timeout_ms.
 *
 * Congestion (ECN): contributions leave ECN-capable (ECT(0)), the nodes
 * carry the marks of the inputs into each sum and result, and a result
 * that arrives marked CE (read with IP_RECVTOS) says a queue on the way
 * was filling. Each tree has a congestion window, the chunks it may have
 * in flight, at most cfg.window, reacting to the marks as TCP does to
 * ECN-Echo (AIMD): a CE result halves it (never below 1), at most once a
 * smoothed round trip; every other result adds 1 / window to it (one a
 * round trip). The window is kept across allreduces, as the round trip
 * is: it is the path's. Loss is answered by resending only, never by
 * the window. cfg.no_ecn sends contributions not ECN-capable and keeps
 * the window at cfg.window. info.ce counts the CE results and
 * info.window_min says how far the window went down.
 *
 * Rounds: each netagg_allreduce() call uses the worker's current round
 * number, then moves it on by one (wrapping at 16 bits), whether the call
 * succeeded or failed: the nodes give up a failed round when the next one
 * starts. Every worker of one allreduce must use the same number, and two
 * consecutive allreduces on a tree must use different ones. A worker object
 * counts them itself; new worker processes on a tree that already ran must
 * start (cfg.round) from a number other than the last one used, e.g. the
 * training step.
 *
 * The worker's window must not exceed the job's window on the nodes.
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
	uint8_t dtype;			/* NETAGG_DTYPE_F32, _I32, _F16 or _BF16 */
	unsigned int workers;		/* workers in the job: contributions a whole result sums (1-65535) */
	unsigned int quorum;		/* fewest contributions a result may sum, <= workers (0: workers) */
	uint16_t round;			/* round of the first allreduce */
	unsigned int mtu;		/* the job's MTU: elements per packet derive from it (default 1500 if 0) */
	unsigned int window;		/* VIDs in flight a tree, <= the job's (default 64 if 0) */
	unsigned int timeout_ms;	/* no progress for this long: fail (default 2000 if 0) */
	unsigned int rto_min_ms;	/* least retransmission timeout, <= 1000 (default 5 if 0) */
	struct in_addr src;		/* bind address, INADDR_ANY if 0 */
	int plain;			/* nonzero: no super-packets (see above) */
	unsigned int segments;		/* most chunks in one super-packet (0: as many as fit, at most 64) */
	int no_ecn;			/* nonzero: not ECN-capable, a fixed window (see above) */
	unsigned int ntrees;
	struct netagg_tree_dst trees[NETAGG_TREES_MAX];
};

struct netagg_worker;	/* opaque: socket + buffers */

/*
 * 0 or -errno (-EINVAL for a bad configuration, e.g. no workers:
 * netagg_worker_cfg_error() says what; else the socket's error).
 */
int netagg_worker_open(const struct netagg_worker_cfg *cfg, struct netagg_worker **w);

/* NULL if netagg_worker_open() would accept cfg, else what is wrong with it. */
const char *netagg_worker_cfg_error(const struct netagg_worker_cfg *cfg);
void netagg_worker_close(struct netagg_worker *w);

/* The round the next netagg_allreduce() call will use. */
uint16_t netagg_worker_round(const struct netagg_worker *w);

/* Of one netagg_allreduce() call. */
struct netagg_allreduce_info {
	uint64_t packets_sent;		/* contributions sent, retransmissions included */
	uint64_t super_sent;		/* sends of several of them at once */
	uint64_t sends;			/* datagrams sent: plain packets and super-packets */
	uint64_t packets_received;	/* results accepted (one a chunk) */
	uint64_t packets_ignored;	/* everything else that arrived */
	uint64_t retransmits;		/* contributions sent again (NETAGG_F_RETRY) */
	uint64_t probes;		/* probes sent (NETAGG_F_PROBE): not in the above */
	unsigned int min_contributors, max_contributors;	/* over the results; 0 if none */
	uint64_t regrouped;		/* results marked NETAGG_F_REGROUPED */
	uint64_t refused;		/* results not accepted (see above): -EREMOTEIO */
	uint64_t late;			/* results without this worker's contribution:
					 * it came after a quorum completed the VID
					 * (NETAGG_F_LATE); accepted only as any result
					 * of their contributors would be
					 */
	uint64_t ce;			/* results marked CE (congestion) */
	unsigned int window_min;	/* smallest congestion window of a tree
					 * in the call (chunks in flight)
					 */
};

/*
 * Sum buf (count elements of the job's dtype, host byte order) with every
 * other worker's, in place. float16 and bfloat16 elements are 2 bytes
 * each (IEEE binary16, and binary32's upper half); the nodes sum them in
 * float32 and round once per tree level (see linux/netagg.h). Returns 0, or -errno: -EREMOTEIO when a result
 * was not the sum the caller accepts (see above), -ETIMEDOUT when no result
 * arrived for timeout_ms, -EINVAL for a NULL buf with count > 0, -E2BIG for
 * more chunks than VIDs can number, or a socket error. info may be NULL; it
 * is filled in on failure too. Every call uses up one round.
 */
int netagg_allreduce(struct netagg_worker *w, void *buf, size_t count,
		     struct netagg_allreduce_info *info);

/*
 * What a return value of this library means, in words: its own meanings of
 * -ETIMEDOUT, -EREMOTEIO, -EINVAL and -E2BIG, strerror() for the others.
 */
const char *netagg_strerror(int err);

/*
 * sizeof the two structures above, for bindings that lay them out
 * themselves (the Python package checks its copy against them).
 */
size_t netagg_worker_cfg_size(void);
size_t netagg_allreduce_info_size(void);

/*
 * Elements in one packet for a job MTU (IPv4 + UDP + netagg headers): the
 * payload room in whole multiples of 4 bytes, as the kernel takes it.
 * @dtype must be known (netagg_dtype_size() not 0).
 */
static inline unsigned int netagg_elems_per_packet(unsigned int mtu, uint8_t dtype)
{
	return (mtu - 20 - 8 - sizeof(struct netagg_hdr)) / 4 * (4 / netagg_dtype_size(dtype));
}

#endif /* LIBNETAGG_H */

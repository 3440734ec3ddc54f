/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * netagg: in-network gradient aggregation.
 *
 * This header is shared by the kernel module and userspace. It defines the
 * on-wire aggregation header and the "netagg" generic netlink family.
 */
#ifndef _UAPI_LINUX_NETAGG_H
#define _UAPI_LINUX_NETAGG_H

#include <linux/types.h>

/*
 * Recognising an aggregation packet: IPv4, DSCP NETAGG_DSCP, not a fragment,
 * UDP to destination port NETAGG_UDP_PORT. Anything else is not looked at.
 */
#define NETAGG_DSCP		56
#define NETAGG_UDP_PORT		7177
#define NETAGG_PROTO_VERSION	2

/*
 * Where packets go. A worker sends its contributions to NETAGG_UDP_PORT of
 * the node it is configured for; a node on the path takes them too. A node
 * sends its partial sum from and to NETAGG_UDP_PORT of its parent. Results
 * go to each child at the address and UDP source port its contributions
 * came from, so a worker reads results on the socket it sends from, and a
 * child node gets them on NETAGG_UDP_PORT. A node that knows the job but is
 * not on a tree of it lets that tree's packets pass.
 */

/*
 * struct netagg_hdr - the aggregation header, right after the UDP header.
 *
 * Header fields are in network byte order (big endian):
 *
 *   offset size field
 *        0    1 version       NETAGG_PROTO_VERSION; other values are dropped
 *        1    1 flags         NETAGG_F_*; undefined bits are sent as 0
 *        2    1 dtype         enum netagg_dtype of the payload elements
 *        3    1 reserved      sent as 0, ignored on receipt
 *        4    4 jid           job id
 *        8    4 vid           chunk number within the tree, counts up from 0
 *                             (serial arithmetic: it may wrap)
 *       12    2 tid           tree id within the job, < NETAGG_TREES_MAX
 *       14    2 count         number of payload elements
 *       16    2 contributors  how many worker contributions the payload sums:
 *                             1 from a worker, the total in a result
 *       18    2 round         which allreduce of the session on this tree
 *                             the VID belongs to (serial: it may wrap)
 *       20    4 session       the run of workers the round is of; with
 *                             round it names the allreduce (see below)
 *       24      payload       count elements
 *
 * Payload elements are little endian (IEEE-754 binary32 for
 * NETAGG_DTYPE_F32, two's complement for NETAGG_DTYPE_I32, binary16 for
 * NETAGG_DTYPE_F16, the upper half of a binary32 for NETAGG_DTYPE_BF16):
 * every machine that sums them is little endian, so no node swaps bytes
 * per element. The UDP length must be exactly 8 + 24 + count * element
 * size (4 bytes, or 2 for the half types).
 *
 * Order of addition: a node sums a VID's contributions when all of them
 * are in (or its quorum), in one fixed order: its tree's children by IPv4
 * address, as a number, then by port (a child configured without a port
 * before ports of its address), each element left to right, ((c0 + c1) +
 * c2) + ... So a sum is a function of the contributions and of who
 * contributed: never of the order they arrived in, of loss, retransmission
 * or duplication, of the CPU or the vector code that summed them. An
 * aggregator's partial sum is one contribution to its parent: a result is
 * a function of the trees' shape and the workers' data, the same bits every
 * run. (int32 sums are exact in any order.)
 *
 * Half types: a node sums every contribution of a VID in binary32 (each
 * element widened exactly, each addition rounded once, in binary32), then
 * rounds the sum to the packet's type once, to nearest with ties to even
 * (too large: infinity; infinities and NaNs kept, NaNs quiet), and sends
 * that: an aggregator's partial sum goes up in the packet's type, as a
 * worker's contribution does (a binary32 sum would take twice the payload,
 * beyond the job's MTU). So a result is rounded to the half type once per
 * tree level it crosses, never per contribution; the root divides for
 * NETAGG_OP_AVG in binary32, before its one rounding.
 * ECN of the IP header is carried from the inputs into the sum.
 *
 * Super-packets: a UDP GSO packet (gso_type SKB_GSO_UDP_L4, as a socket
 * with UDP_SEGMENT sends and UDP GRO builds) whose every segment is one
 * aggregation packet, header and payload, is taken whole: its segments are
 * summed in one pass, each exactly as if it came alone, and what a node
 * sends for them leaves in super-packets too (received by a socket with
 * UDP_GRO whole, by any other segment by segment). Segments are gso_size
 * bytes, the last one up to that; all must be of one job and tree. Plain
 * packets and super-packets mix freely on a tree.
 */
struct netagg_hdr {
	__u8	version;
	__u8	flags;
	__u8	dtype;
	__u8	reserved;
	__be32	jid;
	__be32	vid;
	__be16	tid;
	__be16	count;
	__be16	contributors;
	__be16	round;
	__be32	session;
};

/*
 * Rounds and sessions. Every allreduce on a tree is a round of a session:
 * the session names the run of worker processes (a random 32-bit number
 * they agree when they start: see "Joining" in docs/reliability.md), the
 * round counts the run's allreduces (serial, 16 bits). VIDs count from 0 in
 * each round. A node tells a retransmission of the last allreduce from the
 * start of the next one by (session, round): two consecutive rounds of one
 * session must not have the same number, and a new run, with a session of
 * its own, never meets an earlier run's rounds or kept results, whatever
 * round numbers it uses.
 *
 * A node is in one round at a time and keeps the results of the last
 * 2 x window VIDs, its own and the previous round's, so that a worker whose
 * result was lost gets it again. A contribution of a round other than the
 * node's current or previous one starts a new round when the current one
 * has ended (its FIN VID completed); if the current one has not ended, its
 * unfinished sums are given up (counted as ABANDONED) and the new round
 * starts: its workers have all moved on. A session left for another one
 * never comes back: a contribution that would start a round of the session
 * the node last left is dropped (DROP_ROUND), so that a packet of a run
 * replaced cannot give up the new run's round. Session 0 is exempt: it is
 * where workers without a session given meet to agree one.
 */

/* Set on results travelling down the tree; clear on contributions going up. */
#define NETAGG_F_RESULT		0x01
/*
 * The sender's last VID of this round on this tree. When that VID completes,
 * its sum carries FIN on, and the round ends.
 */
#define NETAGG_F_FIN		0x02
/*
 * A retransmission: the sender sent this contribution before and got no
 * result in time. A node that already summed it answers with what it kept:
 * the result (sent to that child only) or, on an aggregator still waiting
 * for its parent, the partial sum sent up again. Without the flag a
 * contribution already summed is a network duplicate and only counted.
 */
#define NETAGG_F_RETRY		0x04
/*
 * The tree's children or parent changed while this round ran, after some of
 * its sums had been made: results of the round may sum different sets of
 * workers, each result counted exactly (its contributors field). Set by the
 * node that changed on every sum or result of the round it makes from then
 * on, and carried by every node above and below it into theirs, so that
 * every worker of the round sees it on its last result at the latest. A
 * worker that wants one set of contributors for the whole allreduce fails
 * the call on it.
 */
#define NETAGG_F_REGROUPED	0x08
/*
 * A probe: a worker whose results are overdue asks the node what it holds
 * before it resends anything. A probe carries no payload (count 0); its
 * vid is the lowest VID the sender waits for, its round the sender's. The
 * node answers, to the probe's source address and port:
 *   - results it keeps for the sender among VIDs vid .. vid + 63 are sent
 *     again, as for a RETRY; an aggregator still waiting for its parent
 *     sends those sums up again, with RETRY;
 *   - then one packet flagged PROBE | RESULT, same jid, tid, vid and round,
 *     contributors 0, whose payload is 8 bytes (count = 8 / element size):
 *     a little-endian 64-bit map, bit i set if the node holds the sender's
 *     contribution to vid + i or has completed it.
 * A clear bit asks for that contribution again; a set one says it arrived,
 * and its result waits for the other children. A probe never starts a
 * round: for a round the node does not hold, every bit is clear.
 * A probe of another dtype than the job's (its contributions all dropped,
 * DROP_DTYPE) is answered, to a child, with a header alone: PROBE |
 * RESULT, count 0, and the job's dtype in the dtype field.
 */
#define NETAGG_F_PROBE		0x10
#define NETAGG_PROBE_VIDS	64	/* VIDs one probe asks about */
/*
 * On a result: it does not hold the receiver's contribution, which reached
 * the node after the VID had completed without it (partial aggregation:
 * see QUORUM). Set by the node that answers the late contribution with the
 * kept result, and carried down by an aggregator whose sum came late to its
 * parent, into every result it sends of that VID. The contributors field
 * still counts exactly who is in the sum.
 */
#define NETAGG_F_LATE		0x20
/*
 * On a result: its payload is the mean of its contributors, not their sum
 * (a job of NETAGG_OP_AVG: the root divided by the contributors field). Set
 * by the root, carried down by aggregators.
 */
#define NETAGG_F_MEAN		0x40
/*
 * On a contribution: its VID completes with every child, never by a
 * quorum (workers joining a run: every rank must be in the sum; see
 * docs/reliability.md). Kept by the node on what it sends of the VID.
 */
#define NETAGG_F_WHOLE		0x80

enum netagg_dtype {
	NETAGG_DTYPE_UNSPEC,
	NETAGG_DTYPE_F32,
	NETAGG_DTYPE_I32,
	NETAGG_DTYPE_F16,	/* IEEE-754 binary16 */
	NETAGG_DTYPE_BF16,	/* bfloat16: binary32's upper 16 bits */
	__NETAGG_DTYPE_MAX,
};
#define NETAGG_DTYPE_MAX	(__NETAGG_DTYPE_MAX - 1)

/* Bytes of a packet's element of @dtype; 0 for an unknown dtype. */
static inline unsigned int netagg_dtype_size(__u8 dtype)
{
	switch (dtype) {
	case NETAGG_DTYPE_F32:
	case NETAGG_DTYPE_I32:
		return 4;
	case NETAGG_DTYPE_F16:
	case NETAGG_DTYPE_BF16:
		return 2;
	default:
		return 0;
	}
}

enum netagg_op {
	NETAGG_OP_UNSPEC,
	NETAGG_OP_SUM,
	NETAGG_OP_AVG,		/* sum divided by the number of contributors */
	__NETAGG_OP_MAX,
};
#define NETAGG_OP_MAX		(__NETAGG_OP_MAX - 1)

enum netagg_role {
	NETAGG_ROLE_UNSPEC,
	NETAGG_ROLE_ROOT,	/* children, no parent: emits the final result */
	NETAGG_ROLE_AGGREGATOR,	/* children and a parent */
	__NETAGG_ROLE_MAX,
};
#define NETAGG_ROLE_MAX		(__NETAGG_ROLE_MAX - 1)

enum netagg_event {
	NETAGG_EVENT_UNSPEC,
	NETAGG_EVENT_CHILD_EVICTED,	/* CHILD taken out of the tree */
	NETAGG_EVENT_CHILD_REJOINED,	/* CHILD back at a round's start */
	NETAGG_EVENT_PARENT_LOST,	/* PARENT has not answered */
	NETAGG_EVENT_PARENT_BACK,	/* PARENT answered again */
	__NETAGG_EVENT_MAX,
};
#define NETAGG_EVENT_MAX	(__NETAGG_EVENT_MAX - 1)

/* Limits. The per-namespace caps below the hard ones are set by NS_SET. */
#define NETAGG_CHILDREN_MAX	64	/* one bit each in a u64 bitmap */
#define NETAGG_TREES_MAX	64	/* TIDs 0 .. NETAGG_TREES_MAX - 1 */
#define NETAGG_WINDOW_MAX	4096	/* VIDs in flight per tree */
#define NETAGG_WINDOW_DEFAULT	64
#define NETAGG_MTU_MIN		128	/* IPv4 packet size, headers included */
#define NETAGG_MTU_MAX		9000
#define NETAGG_MTU_DEFAULT	1500
#define NETAGG_STRAGGLER_MS_MAX	60000	/* a tree's straggler delay */
#define NETAGG_EVICT_MS_MAX	3600000	/* a tree's eviction time */
#define NETAGG_JOBS_MAX		65536	/* hard ceiling of the per-namespace cap */
#define NETAGG_JOBS_DEFAULT	16384
#define NETAGG_MEM_CAP_DEFAULT	(64ULL << 20)	/* per job */
#define NETAGG_MEM_LIMIT_MAX	(64ULL << 30)	/* per namespace, hard ceiling */
#define NETAGG_MEM_LIMIT_DEFAULT (1ULL << 30)

/* Generic netlink family */
#define NETAGG_GENL_NAME	"netagg"
#define NETAGG_GENL_VERSION	1
/* Multicast group of NETAGG_CMD_EVENT messages */
#define NETAGG_MCGRP_EVENTS	"events"

/*
 * Commands. Changing commands need CAP_NET_ADMIN in the user namespace that
 * owns the caller's network namespace; reading commands are open to all.
 *
 * JOB_NEW   JOB_ID [DTYPE] [OP] [WINDOW] [MTU] [MEM_CAP]
 * JOB_DEL   JOB_ID
 * JOB_GET   JOB_ID, or dump all jobs: job attributes, one TREE nest a tree
 *           (its configuration, state and MEM_USED, what it is charged)
 * TREE_NEW  JOB_ID TREE_ID ROLE [PARENT] CHILD [CHILD_PORT]...
 *           [QUORUM | QUORUM_PCT] [STRAGGLER_MS]
 * TREE_SET  JOB_ID TREE_ID [PARENT] [CHILD [CHILD_PORT]...]
 *           [QUORUM | QUORUM_PCT] [STRAGGLER_MS]: a new CHILD list replaces
 *           the bitmap live. Children kept keep their bit; a child removed
 *           leaves its bit to no other address while VIDs in flight or kept
 *           hold its contribution (it gets the bit back if added again).
 *           A change after the current round made sums marks the round's
 *           later results NETAGG_F_REGROUPED. -EBUSY if no bit is free.
 *           Partial aggregation: with QUORUM (or QUORUM_PCT) a VID
 *           completes once that many children contributed and STRAGGLER_MS
 *           passed since they did (0: at once), every child still in if
 *           sooner; its result's contributors field counts the workers
 *           summed. A contribution to a VID that completed without it is
 *           never added (DROP_LATE); a root answers it with the kept result.
 *           Failure handling: with EVICT_MS, see "Eviction" below.
 *           Children: a child is the address its packets come from;
 *           with a CHILD_PORT right after its CHILD, the address and that
 *           UDP source port (several workers behind one address, one child
 *           each by its port). An address is a child either once without
 *           a port or only with ports, each once.
 * TREE_DEL  JOB_ID TREE_ID
 * STATS_GET dump: per job JOB_ID, STATS, and one TREE nest (TREE_ID, STATS)
 *           a tree
 * RESET     no attribute: delete every job and zero the namespace counters;
 *           JOB_ID [TREE_ID]: restart that job's (tree's) aggregation state
 *           at VID 0 and zero its counters
 * NS_GET    MAX_JOBS NUM_JOBS MEM_LIMIT MEM_USED STATS of the namespace
 * NS_SET    [MAX_JOBS] [MEM_LIMIT]
 * EVENT     sent by the module, never requested: on the NETAGG_MCGRP_EVENTS
 *           group of the namespace, EVENT (enum netagg_event) JOB_ID TREE_ID,
 *           CHILD or PARENT (whom it is about), SILENT_MS (how long it had
 *           been silent), and SESSION ROUND EXPECTED_VID (where the tree
 *           was: for CHILD_EVICTED, the VID that waited for the child,
 *           which the eviction then let complete).
 *
 * Eviction. A tree with EVICT_MS set watches its children: a child that
 * sent nothing for EVICT_MS while the tree's lowest VID waits for it, with
 * other children in it for at least as long, is taken out of the tree as
 * TREE_SET without it would take it (VIDs complete with the others; the
 * round's later results carry NETAGG_F_REGROUPED), counted (EVICTED) and
 * announced (NETAGG_EVENT_CHILD_EVICTED). Its bit and address stay
 * reserved for it (EVICTED in the dump). Its packets are not summed
 * (DROP_EVICTED; one for a VID completed without it is answered with the
 * kept result, NETAGG_F_LATE), but they show it is alive: it is back in the
 * tree when the next round starts (REJOINED, NETAGG_EVENT_CHILD_REJOINED).
 * A TREE_SET with a CHILD list takes that list as it is, evicted children
 * in it back at once; a RESET of the tree brings every evicted child back.
 * An aggregator also watches its parent: when a sum sent up has waited
 * 2 x EVICT_MS with nothing from the parent (twice: a parent that waits
 * for its own evictions must not look dead), it is reported
 * (NETAGG_EVENT_PARENT_LOST, counter PARENT_LOST, PARENT_LOST in the dump)
 * until its next result (NETAGG_EVENT_PARENT_BACK).
 */
enum netagg_cmd {
	NETAGG_CMD_UNSPEC,
	NETAGG_CMD_JOB_NEW,
	NETAGG_CMD_JOB_DEL,
	NETAGG_CMD_JOB_GET,
	NETAGG_CMD_TREE_NEW,
	NETAGG_CMD_TREE_SET,
	NETAGG_CMD_TREE_DEL,
	NETAGG_CMD_STATS_GET,
	NETAGG_CMD_RESET,
	NETAGG_CMD_NS_GET,
	NETAGG_CMD_NS_SET,
	NETAGG_CMD_EVENT,
	__NETAGG_CMD_MAX,
};
#define NETAGG_CMD_MAX		(__NETAGG_CMD_MAX - 1)

enum netagg_attr {
	NETAGG_A_UNSPEC,
	NETAGG_A_PAD,
	NETAGG_A_JOB_ID,	/* u32 */
	NETAGG_A_DTYPE,		/* u8, enum netagg_dtype (default F32) */
	NETAGG_A_OP,		/* u8, enum netagg_op (default SUM) */
	NETAGG_A_WINDOW,	/* u32, 1 .. NETAGG_WINDOW_MAX */
	NETAGG_A_MTU,		/* u32, largest aggregation packet (IPv4) */
	NETAGG_A_MEM_CAP,	/* u64, bytes the job's trees may hold */
	NETAGG_A_MEM_USED,	/* u64, reply: bytes held */
	NETAGG_A_TREE_ID,	/* u16 */
	NETAGG_A_ROLE,		/* u8, enum netagg_role */
	NETAGG_A_PARENT,	/* be32, IPv4 address */
	NETAGG_A_CHILD,		/* be32, IPv4 address; repeated, one a child
				 * (and its CHILD_PORT after it, if any)
				 */
	NETAGG_A_BITMAP,	/* u64, reply: bits in use; the n-th CHILD of a
				 * reply holds the n-th set bit
				 */
	NETAGG_A_EXPECTED_VID,	/* u32, reply */
	NETAGG_A_TREE,		/* nest, reply: the attributes of one tree */
	NETAGG_A_STATS,		/* nest of u64, attribute type enum netagg_stat */
	NETAGG_A_MAX_JOBS,	/* u32, per-namespace job cap */
	NETAGG_A_NUM_JOBS,	/* u32, reply */
	NETAGG_A_MEM_LIMIT,	/* u64, per-namespace memory limit in bytes */
	NETAGG_A_ROUND,		/* u16, reply: the tree's round, absent
				 * before its first
				 */
	NETAGG_A_ROUND_ENDED,	/* flag, reply: that round's FIN completed */
	NETAGG_A_ROUND_REGROUPED, /* flag, reply: that round's results carry
				   * NETAGG_F_REGROUPED
				   */
	NETAGG_A_QUORUM,	/* u16, tree: children whose contributions
				 * complete a VID, 1 .. NETAGG_CHILDREN_MAX
				 * (0: every child, the default)
				 */
	NETAGG_A_QUORUM_PCT,	/* u8, tree: the quorum as a percentage of
				 * the children, 1 .. 100, rounded up
				 */
	NETAGG_A_STRAGGLER_MS,	/* u32, tree: once the quorum is in, wait
				 * this long for the rest, 0 (the default)
				 * .. NETAGG_STRAGGLER_MS_MAX
				 */
	NETAGG_A_EVICT_MS,	/* u32, tree: evict a child silent this long
				 * while the tree waits for it, 0 (never, the
				 * default) .. NETAGG_EVICT_MS_MAX
				 */
	NETAGG_A_EVICTED,	/* be32, reply: a child the tree evicted;
				 * repeated
				 */
	NETAGG_A_PARENT_LOST,	/* flag, reply: the parent is reported lost */
	NETAGG_A_EVENT,		/* u8, enum netagg_event */
	NETAGG_A_SILENT_MS,	/* u32, event: how long it had been silent */
	NETAGG_A_SESSION,	/* u32, reply: the session of ROUND */
	NETAGG_A_CHILD_PORT,	/* be16, the UDP port of the CHILD or EVICTED
				 * right before it, 1 .. 65535 (none: any)
				 */
	__NETAGG_A_MAX,
};
#define NETAGG_A_MAX		(__NETAGG_A_MAX - 1)

/*
 * Counters, in NETAGG_A_STATS nests. The namespace reports NS_*: what it
 * recognised and passed on. A job reports RX and the drops decided before a
 * tree is known (DROP_SHORT, DROP_VERSION, DROP_DTYPE, DROP_LENGTH) and
 * NO_TREE. A tree reports RX, DROP_LENGTH and every other counter. They add
 * up:
 *   NS_SEEN = NS_UNKNOWN_JOB + NS_FRAGMENT + NS_SHORT + sum of jobs' RX
 *   job RX  = job's DROP_* + NO_TREE + sum of its trees' RX
 *   tree RX = AGGREGATED + DUPLICATE + RESULTS_RX + PROBED + tree's DROP_*
 * EMITTED_UP, FANNED_OUT and RESENT count packets sent (the answer to a
 * probe is counted by PROBED); FIN, ROUNDS, ABANDONED, REGROUPED, PARTIAL,
 * EVICTED, REJOINED and PARENT_LOST count events. Every counter but
 * SUPER_RX and SUPER_TX counts a super-packet's segments one by one, as
 * the packets they are; those two count the super-packets.
 */
enum netagg_stat {
	NETAGG_STAT_UNSPEC,
	NETAGG_STAT_NS_SEEN,		/* aggregation packets recognised */
	NETAGG_STAT_NS_UNKNOWN_JOB,	/* passed on untouched: no such job */
	NETAGG_STAT_NS_FRAGMENT,	/* passed on untouched: IP fragment */
	NETAGG_STAT_NS_SHORT,		/* passed on: too short to hold a JID */
	NETAGG_STAT_RX,			/* taken by this job or tree */
	NETAGG_STAT_AGGREGATED,		/* contributions summed into a slot */
	NETAGG_STAT_EMITTED_UP,		/* partial sums sent to the parent */
	NETAGG_STAT_FANNED_OUT,		/* result packets sent to children */
	NETAGG_STAT_RESULTS_RX,		/* results received from the parent */
	NETAGG_STAT_DUPLICATE,		/* contribution or result already
					 * counted
					 */
	NETAGG_STAT_FIN,		/* FIN seen */
	NETAGG_STAT_DROP_SHORT,		/* shorter than the header */
	NETAGG_STAT_DROP_VERSION,	/* unknown protocol version */
	NETAGG_STAT_DROP_DTYPE,		/* dtype is not the job's */
	NETAGG_STAT_DROP_LENGTH,	/* count does not match the length, or
					 * exceeds the job's MTU
					 */
	NETAGG_STAT_NO_TREE,		/* passed on untouched: this node is
					 * not on that tree of the job
					 */
	NETAGG_STAT_DROP_NOT_CHILD,	/* contribution from a non-child */
	NETAGG_STAT_DROP_NOT_PARENT,	/* result from other than the parent */
	NETAGG_STAT_DROP_WINDOW,	/* VID outside the window */
	NETAGG_STAT_DROP_CSUM,		/* bad UDP checksum */
	NETAGG_STAT_DROP_NOMEM,		/* could not build an output packet */
	NETAGG_STAT_DROP_ROUND,		/* of a round this node no longer
					 * holds, or a result for a VID it
					 * does not wait for
					 */
	NETAGG_STAT_RESENT,		/* kept results or partial sums sent
					 * again for a retransmission
					 */
	NETAGG_STAT_ROUNDS,		/* rounds started */
	NETAGG_STAT_ABANDONED,		/* rounds given up unfinished */
	NETAGG_STAT_REUSED,		/* sums and results written into a
					 * received packet, not a new one
					 */
	NETAGG_STAT_REGROUPED,		/* rounds whose results carry
					 * NETAGG_F_REGROUPED
					 */
	NETAGG_STAT_DROP_SEGMENT,	/* of a super-packet: not UDP segments,
					 * or a segment of another job or tree
					 * than its first
					 */
	NETAGG_STAT_SUPER_RX,		/* super-packets taken */
	NETAGG_STAT_SUPER_TX,		/* super-packets sent */
	NETAGG_STAT_PROBED,		/* probes answered (NETAGG_F_PROBE) */
	NETAGG_STAT_DROP_PROBE,		/* a probe with a payload, or a probe's
					 * answer sent to a node (nodes do not
					 * probe)
					 */
	NETAGG_STAT_PARTIAL,		/* VIDs completed by the quorum, without
					 * every child
					 */
	NETAGG_STAT_DROP_LATE,		/* contribution to a VID completed
					 * without it (quorum): not summed; a
					 * root answers with the kept result
					 */
	NETAGG_STAT_EVICTED,		/* children evicted (silent too long) */
	NETAGG_STAT_REJOINED,		/* evicted children back in */
	NETAGG_STAT_DROP_EVICTED,	/* packet of an evicted child: not
					 * summed
					 */
	NETAGG_STAT_PARENT_LOST,	/* times the parent was reported lost */
	__NETAGG_STAT_MAX,
};
#define NETAGG_STAT_MAX		(__NETAGG_STAT_MAX - 1)

#endif /* _UAPI_LINUX_NETAGG_H */

/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * netagg: in-network gradient aggregation.
 *
 * This header is shared by the kernel module and userspace. It defines the
 * on-wire aggregation header, and says how the commands of the "netagg"
 * generic netlink family behave. The family itself (its constants, enums,
 * commands and attributes) is declared in uapi/netagg.yaml, and rendered
 * from it into linux/netagg_nl.h, included here.
 */
#ifndef _UAPI_LINUX_NETAGG_H
#define _UAPI_LINUX_NETAGG_H

#include <linux/types.h>
#include <linux/netagg_nl.h>

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
 * they agree when they start: see "Sessions and joining" in
 * docs/design.md), the round counts the run's allreduces (serial, 16 bits).
 * VIDs count from 0 in each round. A node tells a retransmission of the
 * last allreduce from the start of the next one by (session, round): two
 * consecutive rounds of one session must not have the same number, and a
 * new run, with a session of its own, never meets an earlier run's rounds
 * or kept results, whatever round numbers it uses.
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
 * node answers, to the probe's source address and port, with one packet
 * flagged PROBE | RESULT, same jid, tid, vid and round, contributors 0,
 * whose payload is 16 bytes (count = 16 / element size): two
 * little-endian 64-bit maps of VIDs vid .. vid + 63,
 *   - held: bit i set if the node holds the sender's contribution to
 *     vid + i, summing or completed;
 *   - done: bit i set if that VID's result was sent to the sender.
 * A clear held bit asks for that contribution again. A done bit whose result
 * the sender has not had says the result was lost, or is still on its way (the
 * answer can overtake it: they may leave the node from two CPUs): after its
 * reordering window the sender asks for it with a RETRY of its contribution,
 * which the node answers from the result it keeps. Held and not done, the
 * result waits for the other children, or for the parent: an aggregator sends
 * such a sum up again, with RETRY. No result is sent again for a probe: on a
 * slow path probes come without any loss, and those results are still on their
 * way. A probe never starts a round: for a round the node does not hold, every
 * bit is clear. (Nodes before this answer sent their kept results again, then
 * the held map alone, 8 bytes: the library takes both.)
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

/*
 * Tags. Every packet of a job given a key (NETAGG_A_KEY, NETAGG_KEY_LEN
 * bytes k) ends in a tag of NETAGG_TAG_LEN bytes after its payload (the
 * UDP length counts it; count does not), and a node or worker takes none
 * whose tag is not right (DROP_TAG): no state is touched before it is
 * checked. The tag is SipHash-2-4, keyed with k[16..31], of the Poly1305
 * hash (RFC 8439's polynomial, its pad 0) keyed with k[0..15] of
 *
 *	netagg header || payload                        a result (RESULT set)
 *	netagg header || payload || saddr || sport      anything else
 *
 * saddr the sender's IP address (16 bytes, an IPv4 one IPv4-mapped) and
 * sport its UDP source port (network order); stored little endian.
 *
 * Why this: a hash then a PRF (Wegman-Carter without a nonce) is a MAC on
 * messages that differ, and the kernel's lib/crypto has both, fast in
 * softirq; no nonce is needed because a packet sent again (a
 * retransmission, a kept result) must be tagged the same. What a tag binds:
 * the job (its key, and jid), the run (session), the allreduce (round), the
 * chunk (vid), the tree (tid), what the payload is (flags, dtype, count,
 * contributors), and who sent a contribution or sum: a captured packet
 * taken to another of these, or sent as another child, is not right there.
 * A result binds no address: a node tags one result once for every child,
 * and every node of a tree that sends a VID's result sends the same one.
 * A packet replayed where it was sent is a duplicate, as the network makes
 * them: counted, never summed twice, a result never taken twice. One of
 * another round or session is taken as a late or stale worker's would be
 * (above): it may give up a round, or hold a tree in an old session, which
 * costs the workers resends or their run, never a wrong sum, since nothing
 * replayed is of their round. (Availability against a host on the path is
 * no aim: it can drop packets.) That holds while (session, round) names one
 * allreduce: the round counts 16 bits, so a keyed run's workers join a new
 * session before their rounds wrap (libnetagg does), and a session given
 * by hand (no join) must serve fewer allreduces than that.
 */
#define NETAGG_TAG_LEN		8

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

/*
 * Commands (enum netagg_cmd). Changing commands need CAP_NET_ADMIN in the user namespace that
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

/*
 * Counters, in NETAGG_A_STATS nests. The namespace reports NS_*: what it
 * recognised and passed on, and of what it recognised, what the XDP hook
 * took (NS_XDP; what that hook does not take it passes on uncounted, and
 * the netfilter hook counts it) and the IPv6 packets whose UDP header came
 * after extension headers (NS_EXTHDR). A job reports RX and the drops decided before a
 * tree is known (DROP_SHORT, DROP_VERSION, DROP_DTYPE, DROP_LENGTH,
 * DROP_SEGMENT) and NO_TREE. A tree reports RX, DROP_LENGTH and every other counter. They add
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

#endif /* _UAPI_LINUX_NETAGG_H */

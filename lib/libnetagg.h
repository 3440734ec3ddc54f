/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libnetagg - the worker side of netagg: allreduce a buffer through the
 * job's aggregation trees.
 *
 * The buffer of count elements is cut into chunks of at most
 * netagg_elems_per_packet_af(family, mtu, dtype) elements (family: the
 * trees'). Chunk c goes to tree c % ntrees with VID c / ntrees. Every
 * allreduce is a round (see rounds in linux/netagg.h): its contributions
 * carry the round number, VIDs count from 0 in it, and the last chunk of
 * each tree carries NETAGG_F_FIN, which ends the round on the nodes. At
 * most `window` VIDs per tree are in flight. Each RESULT of the round is
 * written in place over its chunk, so after a failure the buffer is partly
 * overwritten.
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
 * the next 64 VIDs); the node says which contributions it holds and which
 * results it has sent, and only the chunks it lacks, or whose result was
 * sent and has not come within the reordering window, are sent again,
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
 * for at most 2 x SRTT; not from a join's results, which wait for every
 * rank to start), starts at 200 ms, or from a probe's answer while no
 * sample came, and stays within [rto_min_ms, 1000 ms]. Each timeout of a
 * chunk doubles its timeout (up to 64 x RTO, never above 1000 ms); when
 * chunks time out and no sample comes, new chunks start from the doubled
 * timeout until one does (Karn). Resending never extends the call: it
 * fails with -ETIMEDOUT once no new result came for timeout_ms.
 *
 * Congestion: a job is one flow to the network on each path it uses,
 * however many trees it has. The trees whose node is at one address share
 * one congestion window (their path's): the chunks they may have in flight
 * together, at most cfg.window a tree (a tree with nothing in flight may
 * always send one, so that no tree waits on another; a chunk whose result
 * is overdue no longer counts: it is lost, or held at the node for a late
 * worker, not in the network). A window starts at
 * 10 chunks and doubles every round trip until the first congestion
 * signal (slow start), then grows as CUBIC (RFC 9438, Linux's TCP default)
 * does: back to the window of the last cut within a few seconds, then
 * probing past it, never slower than Reno would (with cfg.dctcp, by one
 * chunk a round trip, as DCTCP flows do); it is kept
 * across allreduces, as the round trip is, and starts again from 10 (slow
 * start up to three quarters of where it was) after the path was idle for
 * its RTO or 200 ms, whichever is longer. Signals, each answered once a
 * window (a signal about a chunk sent before the last cut is that cut's
 * congestion event, as behind TCP's recovery point):
 *  - ECN: contributions leave ECN-capable (ECT(0)), the nodes carry the
 *    marks of the inputs into each sum and result, and a result that
 *    arrives marked CE (read with IP_RECVTOS or IPV6_RECVTCLASS) says a
 *    queue on the way was filling: the window halves, as a TCP flow's on
 *    ECN-Echo; with cfg.dctcp it shrinks by alpha / 2 instead, alpha the
 *    moving average (gain 1/16, a window a step) of the fraction of
 *    results marked (DCTCP, for fabrics that mark at a shallow threshold
 *    and whose other flows run DCTCP too).
 *  - Loss: a chunk resent because it was lost (overtaken longer than the
 *    reordering window, or found missing by a probe's answer, or its node
 *    heard from since probes that were never answered) halves the window.
 *    A chunk whose result is only late (another worker slow, a node
 *    busy: the probe's answer says the node holds it, or the node was
 *    silent) cuts nothing, and a cut whose resent chunks all get two
 *    results (the resend's and the late first one's) is undone
 *    (info.undone_cuts).
 * No cut leaves less than 2 chunks. cfg.no_ecn sends contributions not
 * ECN-capable: the window then reacts to losses only. info.ce counts the
 * CE results, info.ce_cuts and info.loss_cuts the cuts, info.window_min
 * says how far a cut took a window, info.window_end where the windows
 * ended.
 *
 * Sessions and rounds: every allreduce is a round of a session (see
 * linux/netagg.h). The session names the run: the worker processes that
 * started together. Each netagg_allreduce() call uses the worker's current
 * round number, then moves it on by one (wrapping at 16 bits), whether the
 * call succeeded or failed: the nodes give up a failed round when the next
 * one starts. A worker object counts them itself, from cfg.round; since a
 * new run has a session of its own, it never receives an earlier run's
 * sums, whatever round numbers either used.
 *
 * Joining: before its first allreduce, a worker agrees the run's session
 * with every other worker of the run, through the trees themselves, on each
 * tree on its own: each rank allreduces a random nonce of its own, in the
 * place of its rank, in session 0 where runs meet (in round cfg.session +
 * cfg.round: a number chosen for the run, e.g. by rank 0 and sent to the
 * others, keeps its joins off earlier runs'; 0 will do), and then, in the
 * session each tree's sum names, whether it found its own nonce there
 * alone. The sessions named are the run's when every rank confirmed in
 * every tree; otherwise (a dead run's contributions met, a rank missing)
 * they all try again, in the next round, at most NETAGG_JOIN_TRIES times.
 * A sum with contributions of another run never passes: a rank of this run
 * finds its nonce missing, or not alone, and says so. So joining also
 * proves that every rank is counted exactly once in every tree: two
 * workers sending from one child's address, or two given one rank, fail
 * it (-ENOTUNIQ) rather than sum wrong. cfg.no_join takes cfg.session as
 * the run's on every tree, without joining (the caller vouches that no
 * earlier run used it; tests that count packets do so).
 *
 * Failing fast: a worker waits timeout_ms without a new result before it
 * fails (-ETIMEDOUT): long enough for the slowest worker of the job to come
 * (one busy evaluating, checkpointing). But a node that is gone does not
 * keep it waiting that long: while results are due, an overdue worker
 * probes its node at least once a second, and a node that answers none of
 * it for node_timeout_ms fails the call at once (-EHOSTUNREACH: deleted,
 * unreachable, or without the job; info.silent_tid names the tree), as a
 * send the stack refuses for want of a route or a link does. A node
 * that answers holds the contributions it has and waits for the others,
 * and so does the worker. A node that says the job's dtype is not the
 * worker's fails it too (-EPROTOTYPE; info.job_dtype is the job's).
 *
 * The worker's window must not exceed the job's window on the nodes.
 *
 * Not thread safe: one worker, one allreduce at a time.
 *
 * A NULL worker or configuration is refused: -EINVAL from the calls that
 * return an error, 0 from netagg_worker_round() and _session(), nothing
 * done by netagg_worker_close().
 *
 * IPv4 and IPv6: a tree's node is given by an IPv4 or an IPv6 address
 * (struct netagg_tree_dst's family), and the worker sends from a socket of
 * that family: IPv4 with the TOS byte, IPv6 with the traffic class, both
 * cfg.dscp (NETAGG_DSCP by default) and the ECN field as above. IPv4 packets leave with DF
 * (the kernel's default); IPv6 ones are never fragmented (IPV6_DONTFRAG: a
 * send over the path MTU fails, EMSGSIZE). One worker's trees are all of
 * one family, and so is cfg.src when set: a tree's nodes are all of one
 * family, and the job's chunk size, which the IP header's length sets,
 * must be one for all its trees: all the workers of a job use trees of one
 * family.
 *
 * Keys: a job given a key on its nodes ("netagg job add ... key FILE")
 * takes only packets that carry their tag (linux/netagg.h, "Tags"), and
 * so does its worker given the same key (cfg.keyed, cfg.key): each chunk
 * it sends is tagged, bound to the address and port it leaves from, and a
 * result whose tag is wrong or missing is not taken, not a byte of it
 * written into the buffer (info.bad_tags counts them). A packet carries
 * NETAGG_TAG_LEN bytes fewer of payload (netagg_elems_per_packet_keyed()).
 * A worker without the key gets no result from a keyed job's nodes, nor
 * a keyed worker from an unkeyed job's: its allreduce times out. A keyed
 * run never uses a round number twice in one session: its workers join a
 * new session after 65535 allreduces (no_join: the 65537th fails,
 * -EKEYEXPIRED), for a tag binds the session and the round, and no more.
 *
 * Sizes (libbpf's sz pattern): struct netagg_worker_cfg and struct
 * netagg_allreduce_info begin with sz, which the caller sets to sizeof
 * the structure as its header has it (NETAGG_WORKER_CFG() and
 * NETAGG_ALLREDUCE_INFO() do). Later versions only append fields, so the
 * soname stays: the library reads only the cfg fields within cfg.sz,
 * taking the rest as 0 (their defaults), and writes only the info fields
 * within info.sz. A cfg.sz below the size of the first soname-4 layout, or
 * one above the library's own with any byte set beyond it (a newer
 * program asking for what this library cannot do), is refused (-EINVAL,
 * netagg_worker_cfg_error() says which); so is an info.sz below its first
 * layout's.
 */
#ifndef LIBNETAGG_H
#define LIBNETAGG_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <linux/netagg.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * cfg.mean: what a result written into the buffer is. A job of op avg has
 * its nodes average (results flagged NETAGG_F_MEAN); otherwise the library
 * can, per chunk, by the contributors the result says it sums (so with a
 * quorum each chunk is the mean of those in it). The division is one
 * rounding of the exact quotient (float16 and bfloat16: in float32, then
 * one rounding to the type), int32 refused.
 */
enum {
	NETAGG_MEAN_NONE,	/* results as the nodes send them */
	NETAGG_MEAN_AFTER,	/* the mean: a sum divided by its contributors */
	NETAGG_MEAN_BEFORE,	/* the mean, of contributions the caller divided
				 * by cfg.workers (as PyTorch's compression hooks
				 * do, so that a half type's sum cannot overflow):
				 * a result of c contributions is multiplied by
				 * workers / c (1 when all are in)
				 */
};

/*
 * Where a worker sends a tree's contributions (UDP port cfg.port):
 * an IPv4 address (family AF_INET, or 0, so that code that zeroes the
 * structure and sets addr stays right) or an IPv6 one (AF_INET6; not
 * link-local, which would need an interface, nor IPv4-mapped).
 */
struct netagg_tree_dst {
	uint16_t tid;
	uint16_t family;		/* AF_INET (0 too) or AF_INET6 */
	union {
		struct in_addr addr;	/* AF_INET */
		struct in6_addr addr6;	/* AF_INET6 */
	};
};

/*
 * sz first (see "Sizes" above): set it to sizeof(struct netagg_worker_cfg),
 * as NETAGG_WORKER_CFG() does. Fields are only ever appended.
 */
struct netagg_worker_cfg {
	size_t sz;			/* sizeof(struct netagg_worker_cfg) */
	uint32_t jid;
	uint8_t dtype;			/* NETAGG_DTYPE_F32, _I32, _F16 or _BF16 */
	unsigned int workers;		/* workers in the job: contributions a whole result sums (1-65535) */
	unsigned int quorum;		/* fewest contributions a result may sum, <= workers (0: workers) */
	uint16_t round;			/* round of the first allreduce */
	uint32_t session;		/* a number chosen for the run, where its ranks
					 * meet to join (0: none); with no_join, the
					 * run's session */
	unsigned int rank;		/* this worker's place among the workers,
					 * 0 to workers - 1, each rank once */
	int no_join;			/* nonzero: session is the run's (see above) */
	unsigned int mtu;		/* the job's MTU: elements per packet derive from it (default 1500 if 0) */
	unsigned int window;		/* VIDs in flight a tree, <= the job's (default 64 if 0) */
	unsigned int timeout_ms;	/* no progress for this long: fail (default 2000 if 0) */
	unsigned int node_timeout_ms;	/* a tree's node silent this long, probes
					 * unanswered: fail (default 10000 if 0;
					 * see "Failing fast") */
	unsigned int rto_min_ms;	/* least retransmission timeout, <= 1000 (default 5 if 0) */
	uint16_t src_family;		/* of the bind address: AF_INET (0 too) or
					 * AF_INET6, the trees' when src is set */
	union {
		struct in_addr src;	/* bind address, INADDR_ANY if 0 */
		struct in6_addr src6;	/* ... AF_INET6: in6addr_any if all 0 */
	};
	uint16_t src_port;		/* bind port, any if 0: the one a node's child
					 * ADDR:PORT names (several workers behind
					 * one address) */
	int mean;			/* NETAGG_MEAN_*: results as sums or means */
	int plain;			/* nonzero: no super-packets (see above) */
	unsigned int segments;		/* most chunks in one super-packet (0: as many as fit, at most 64) */
	int no_ecn;			/* nonzero: not ECN-capable; the window reacts
					 * to loss only (see above) */
	unsigned int ntrees;
	struct netagg_tree_dst trees[NETAGG_TREES_MAX];	/* all of one family */
	int dctcp;			/* nonzero: marks cut the window by the
					 * fraction marked, not by half (see
					 * "Congestion") */
	uint16_t port;			/* the nodes' UDP port (NETAGG_UDP_PORT if 0):
					 * the one "netagg set port" gave them */
	uint8_t dscp;			/* that marks the packets, 1-63 (NETAGG_DSCP
					 * if 0): "netagg set dscp"'s */
	uint8_t keyed;			/* nonzero: the job has a key, key (see
					 * "Keys" above) */
	uint8_t key[NETAGG_KEY_LEN];	/* the job's key, as "netagg job add ...
					 * key FILE" gave it to the nodes */
	/* New fields go here, and only here. */
};

/*
 * Declares a configuration as libbpf's LIBBPF_OPTS() declares options: sz
 * set, the fields given (designated initializers), every other field 0:
 *
 *	NETAGG_WORKER_CFG(cfg, .jid = 7, .dtype = NETAGG_DTYPE_F32,
 *			  .workers = 4, .rank = 0, .ntrees = 1);
 *
 * (No padding byte needs zeroing: the library reads fields, never padding,
 * and the structure ends without any, so no later field can lie where an
 * older program left bytes unset.) From C++, value-initialize the
 * structure and set sz to its sizeof.
 */
#define NETAGG_WORKER_CFG(NAME, ...)					\
	struct netagg_worker_cfg NAME = {				\
		.sz = sizeof(struct netagg_worker_cfg),			\
		__VA_ARGS__						\
	}

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

/*
 * The run's session on the first tree (each tree has its own): 0 until
 * the worker joined (its first allreduce); with cfg.no_join, cfg.session
 * from the start.
 */
uint32_t netagg_worker_session(const struct netagg_worker *w);

/*
 * What the next calls write (NETAGG_MEAN_*, as cfg.mean): 0, or -EINVAL
 * (and nothing changed) for a value cfg.mean could not be.
 */
int netagg_worker_set_mean(struct netagg_worker *w, int mean);

/* Joins a worker tries at most (see above). */
#define NETAGG_JOIN_TRIES	8

/*
 * Of one netagg_allreduce() call. sz first (see "Sizes" above): set it to
 * sizeof(struct netagg_allreduce_info), as NETAGG_ALLREDUCE_INFO() does;
 * the library writes the fields within it. Fields are only ever appended.
 */
struct netagg_allreduce_info {
	size_t sz;			/* sizeof(struct netagg_allreduce_info) */
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
	unsigned int window_min;	/* smallest congestion window a cut left
					 * a path with in the call (chunks in
					 * flight); none: a path's largest
					 */
	uint64_t averaged;		/* results the nodes averaged (NETAGG_F_MEAN) */
	uint8_t job_dtype;		/* -EPROTOTYPE: the job's dtype, as a node said */
	uint16_t silent_tid;		/* -EHOSTUNREACH: the tree whose node was silent */
	uint32_t session;		/* the run's session on the first tree */
	unsigned int joins;		/* tries of the join made by this call
					 * (its first), 0 if it made none
					 */
	unsigned int join_missing;	/* ranks a failed join did not find
					 * counted once in every tree
					 */
	unsigned int join_missing_rank;	/* the lowest of them */
	unsigned int window_end;	/* smallest congestion window of a path
					 * at the call's end
					 */
	uint64_t ce_cuts;		/* cuts of a window for CE marks */
	uint64_t loss_cuts;		/* ... for losses */
	uint64_t undone_cuts;		/* cuts for losses undone: the result
					 * came after all
					 */
	uint64_t rto_us;		/* largest retransmission timeout of a
					 * tree at the call's end: from its
					 * round trips; 200000 (or rto_min_ms)
					 * before the first
					 */
	uint64_t bad_tags;		/* of a keyed job, packets whose tag was
					 * wrong or missing: not taken (see
					 * "Keys"); in packets_ignored too
					 */
	/* New fields go here, and only here. */
};

/* Declares an info with sz set, every field 0: NETAGG_ALLREDUCE_INFO(info); */
#define NETAGG_ALLREDUCE_INFO(NAME)					\
	struct netagg_allreduce_info NAME = {				\
		.sz = sizeof(struct netagg_allreduce_info),		\
	}

/*
 * Sum buf (count elements of the job's dtype, host byte order) with every
 * other worker's, in place. The first call joins the run first (see
 * above). float16 and bfloat16 elements are 2 bytes
 * each (IEEE binary16, and binary32's upper half); the nodes sum them in
 * float32 and round once per tree level (see linux/netagg.h). Returns 0, or -errno: -EREMOTEIO when a result
 * was not the sum the caller accepts (see above), -ETIMEDOUT when no result
 * arrived for timeout_ms, -EINVAL for a NULL buf with count > 0 or an info
 * whose sz is too small (nothing done then), -E2BIG for
 * more chunks than VIDs can number, -EHOSTUNREACH when a tree's node stopped
 * answering, -EPROTOTYPE when the job's dtype is not the worker's (see
 * "Failing fast"), -ENOTUNIQ when the join found ranks
 * not counted exactly once (info.join_missing says how many; no round is
 * used up then, and the next call joins again), -EKEYEXPIRED when a keyed
 * run's session given by hand (no_join) has served 65536 allreduces (see
 * "Keys"), or a socket error. info
 * may be NULL; it is filled in on failure too. Every call that joined uses
 * up one round.
 * buf is the library's only during the call (no other thread may touch it
 * then): each chunk is copied into the kernel as it is sent, and resent
 * from buf only until its result arrives. Once the call returns nothing
 * refers to buf, so changing it then changes nothing sent, nor any result
 * a node keeps for the other workers.
 */
int netagg_allreduce(struct netagg_worker *w, void *buf, size_t count,
		     struct netagg_allreduce_info *info);

/*
 * Join the run now (see above), if the worker has not: its first
 * netagg_allreduce() would. Every worker of the run joins at once (each
 * waits for all, for timeout_ms without progress at most). 0, or -errno as
 * netagg_allreduce()'s; info (may be NULL) says what the join did.
 */
int netagg_join(struct netagg_worker *w, struct netagg_allreduce_info *info);

/*
 * A job's key from file @path into @key, as "netagg job add ... key FILE"
 * reads it: NETAGG_KEY_LEN bytes, or twice as many hex digits with a
 * newline or none (head -c 32 /dev/urandom | xxd -p -c 32). 0; -errno if
 * it cannot be read; -EBADMSG if it is of another form (@key zeroed then).
 */
int netagg_key_read(const char *path, uint8_t key[NETAGG_KEY_LEN]);

/*
 * What a return value of this library means, in words: "success" for 0,
 * its own meanings of -ETIMEDOUT, -EREMOTEIO, -EINVAL, -E2BIG,
 * -EHOSTUNREACH, -EPROTOTYPE, -ENOTUNIQ and -EKEYEXPIRED, strerror() for
 * the others.
 */
const char *netagg_strerror(int err);

/*
 * The version of netagg (the project's, which its programs print for -V)
 * this header is of, and netagg_version(), the one of the library loaded:
 * "MAJOR.MINOR.PATCH". The library's soname moves with its ABI, not with
 * this.
 */
#define LIBNETAGG_VERSION_MAJOR 1
#define LIBNETAGG_VERSION_MINOR 0
#define LIBNETAGG_VERSION_PATCH 0
const char *netagg_version(void);

/*
 * sizeof the two structures above as the library has them, for bindings
 * that lay them out themselves (the Python package checks its copy
 * against them); a program passes its own sizeof in sz (see "Sizes").
 */
size_t netagg_worker_cfg_size(void);
size_t netagg_allreduce_info_size(void);

/*
 * Elements in one packet for a job MTU over @family (AF_INET or AF_INET6:
 * IP header of 20 or 40 bytes, + UDP + netagg headers): the payload room
 * in whole multiples of 4 bytes, as the kernel takes it. At MTU 1500,
 * float32: 362 over IPv4, 357 over IPv6. @dtype must be known
 * (netagg_dtype_size() not 0).
 */
static inline unsigned int netagg_elems_per_packet_af(int family, unsigned int mtu,
						      uint8_t dtype)
{
	unsigned int iph = family == AF_INET6 ? 40 : 20;

	return (mtu - iph - 8 - sizeof(struct netagg_hdr)) / 4 * (4 / netagg_dtype_size(dtype));
}

/*
 * The same for a job with a key (cfg.keyed): every packet ends in a tag of
 * NETAGG_TAG_LEN bytes. At MTU 1500, float32: 360 over IPv4, 355 over IPv6.
 */
static inline unsigned int netagg_elems_per_packet_keyed(int family, unsigned int mtu,
							 uint8_t dtype)
{
	unsigned int iph = family == AF_INET6 ? 40 : 20;

	return (mtu - iph - 8 - sizeof(struct netagg_hdr) - NETAGG_TAG_LEN) / 4 *
	       (4 / netagg_dtype_size(dtype));
}

/* The same over IPv4 (as it always was). */
static inline unsigned int netagg_elems_per_packet(unsigned int mtu, uint8_t dtype)
{
	return netagg_elems_per_packet_af(AF_INET, mtu, dtype);
}

#ifdef __cplusplus
}
#endif

#endif /* LIBNETAGG_H */

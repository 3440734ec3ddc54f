#!/bin/bash
# The cluster of docs/cluster.md in namespaces, for tests/netagg_cluster.sh,
# host_cluster.sh (its etcd and groups), make cluster-demo
# (scripts/cluster-demo.sh) and make bench's (o) (its etcd); sourced after
# lib.sh.
# The two racks' nodes as cl-NODE, etcd in cl-etcd on a management bridge
# that reaches every node:
#
#   w1 w2 w3 -- agg1 --\                    cl-etcd: etcd, 10.255.0.254,
#                       root                on bridge mg0 with every node
#   w4 w5 w6 -- agg2 --/                    (10.255.0.N: management)
#
# TTL (s): the agents' and the jobs' leases. ETCD_NS and ETCD: etcd's
# namespace and URL (a script with etcd alone sets its own).
# shellcheck disable=SC2034	# the sourcing script's: CLUSTER_TOPO, TTL, etcd_pid
CLUSTER_TOPO=$NETAGG_ROOT/tests/topologies/racks.topo
ETCD_NS=cl-etcd
ETCD=http://10.255.0.254:2379
TTL=${TTL:-6}
NODES="root agg1 agg2 w1 w2 w3 w4 w5 w6"
export NETAGG
rat_netns() { PYTHONPATH=$NETAGG_ROOT/python "$NETAGG_ROOT/lab/rat-netns.py" "$@"; }
ctl() { ip netns exec "$ETCD_NS" env PYTHONPATH="$NETAGG_ROOT/python" /usr/bin/python3 -m netagg.ctl --etcd $ETCD "$@"; }

# cluster_up: the namespaces, the bridge, etcd (its pid etcd_pid) answering;
# non-zero if etcd does not answer within 60 s.
cluster_up()
{
	local i=0 n
	rat_netns apply "$CLUSTER_TOPO" --prefix cl- >/dev/null || return 1
	etcd_ns
	ip -n "$ETCD_NS" link add mg0 type bridge
	ip -n "$ETCD_NS" addr add 10.255.0.254/24 dev mg0
	ip -n "$ETCD_NS" link set mg0 up
	for n in $NODES; do
		i=$((i + 1))
		ip link add "mg-$n" netns "$ETCD_NS" type veth peer name mg0 netns "cl-$n"
		ip -n "$ETCD_NS" link set "mg-$n" master mg0 up
		ip -n "cl-$n" addr add "10.255.0.$i/24" dev mg0
		ip -n "cl-$n" link set mg0 up
	done
	etcd_start
}

# etcd_ns: namespace ETCD_NS, its loopback up.
etcd_ns()
{
	ip netns add "$ETCD_NS"
	ip -n "$ETCD_NS" link set lo up
}

# etcd_start [S]: etcd in ETCD_NS at ETCD (its data in $TEST_TMP/etcd, kept
# from an earlier start), its pid etcd_pid; non-zero if it does not answer
# within S seconds (60, scaled).
# shellcheck disable=SC2120	# S: given by some scripts only
etcd_start()
{
	local end=$((SECONDS + ${1:-$(scaled 60)}))
	ip netns exec "$ETCD_NS" etcd --name cl --data-dir "$TEST_TMP/etcd" \
		--listen-client-urls $ETCD --advertise-client-urls $ETCD \
		--listen-peer-urls http://127.0.0.1:2380 >>"$TEST_TMP/etcd.log" 2>&1 &
	etcd_pid=$!
	disown
	until ip netns exec "$ETCD_NS" etcdctl --endpoints $ETCD endpoint health >/dev/null 2>&1; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.2
	done
}

# cluster_down: every process and namespace of the cluster gone.
cluster_down()
{
	pkill -f "netagg.agent --etcd $ETCD" 2>/dev/null
	pkill -f "netagg-allreduce --job" 2>/dev/null
	[ -z "${etcd_pid:-}" ] || kill -KILL "$etcd_pid" 2>/dev/null
	rat_netns destroy "$CLUSTER_TOPO" --prefix cl- >/dev/null 2>&1
	ip netns del "$ETCD_NS" 2>/dev/null
}

# agent NODE: netagg-agent for NODE, in its namespace, logging to agent.NODE;
# with AUTH=DIR, as etcd user agent-NODE, its password in DIR/agent-NODE.
agent()
{
	# shellcheck disable=SC2086
	ip netns exec "cl-$1" env PYTHONPATH="$NETAGG_ROOT/python" /usr/bin/python3 \
		-m netagg.agent --etcd $ETCD --node "$1" --ttl "$TTL" --netagg "$NETAGG" \
		${AUTH:+--user agent-$1 --password-file $AUTH/agent-$1} \
		>>"$TEST_TMP/agent.$1" 2>&1 &
	disown	# killed on purpose, not reported as a job's end
}
# alive: how many agents are registered.
alive() { ctl -j node list 2>/dev/null | jq '[.[] | select(.alive)] | length'; }
# agents_up N: wait (60 s at most) until N agents are registered.
agents_up()
{
	local end=$((SECONDS + $(scaled 60)))
	until [ "$(alive)" = "$1" ] || [ $SECONDS -ge "$end" ]; do sleep 0.5; done
}
# has NODE JID: the module of NODE holds job JID.
has() { netagg_in "cl-$1" -j job show | jq -e "[.jobs[].jid] | index(${2:-0}) != null" >/dev/null; }
# gone_within S JID: wait (S s at most) until no aggregator holds job JID.
gone_within()
{
	local end=$((SECONDS + $1))
	while { has root "$2" || has agg1 "$2" || has agg2 "$2"; } && [ $SECONDS -lt $end ]; do
		sleep 0.2
	done
}

# $TEST_TMP/workers REC ITER HOST...: each host's worker allreduces ITER
# times 64K floats, each exact or it fails, in the job netagg-ctl placed,
# whose record (the first line of its -j output) is REC: NETAGG_TREES each
# host's, the packets' marks if the topology gives them, the job's key
# (NETAGG_KEY_FILE, which netagg-ctl gives its command); rank in the order
# given.
cat >"$TEST_TMP/workers" <<EOF
#!/bin/bash
rec=\$1 iter=\$2 rank=0 pids=() rc=0
shift 2
jid=\$(head -n 1 \$rec | jq -r .jid)
n=\$(head -n 1 \$rec | jq -r .nworkers)
marks=\$(head -n 1 \$rec | jq -r '[(.marks.dscp // empty | "--dscp \\(.)"),
	(.marks.port // empty | "--node-port \\(.)")] | join(" ")')
for h in "\$@"; do
	trees=\$(head -n 1 \$rec | jq -r ".hosts.\$h")
	ip netns exec cl-\$h $NETAGG_ALLREDUCE --job \$jid --rank \$rank --workers \$n \\
		--tree \${trees//,/ --tree } --count 64K --iterations \$iter --timeout-ms 20000 \$marks \\
		\${NETAGG_KEY_FILE:+--key \$NETAGG_KEY_FILE} \\
		>"$TEST_TMP/ar.\$jid.\$h" 2>&1 &
	pids+=(\$!)
	rank=\$((rank + 1))
done
for p in "\${pids[@]}"; do wait \$p || rc=1; done
exit \$rc
EOF
chmod +x "$TEST_TMP/workers"

# start NAME TENANT ITER HOST...: netagg-ctl job start, in the background,
# its workers running ITER allreduces; the record in NAME.json. With
# HOLD=FILE, the job then stays until FILE exists (300 s at most) and its
# workers run 3 allreduces more.
start()
{
	local name=$1 tenant=$2 iter=$3 then=""
	shift 3
	[ -z "${HOLD:-}" ] || then="&& for i in \$(seq 1500); do [ -e $HOLD ] && break; sleep 0.2; done &&
		$TEST_TMP/workers $TEST_TMP/$name.json 3 $*"
	ctl -j job start --tenant "$tenant" --ttl "$TTL" "$@" -- \
		bash -c "$TEST_TMP/workers $TEST_TMP/$name.json $iter $* $then" \
		>"$TEST_TMP/$name.json" 2>"$TEST_TMP/$name.err" &
}
jid_of() { head -n 1 "$TEST_TMP/$1.json" 2>/dev/null | jq -r .jid; }
ntrees() { head -n 1 "$TEST_TMP/$1.json" 2>/dev/null | jq '.trees | length'; }
# summing NAME NODE: wait (60 s at most) until job NAME is placed and NODE
# has summed over 100 packets of its tree 0.
summing()
{
	local end=$((SECONDS + $(scaled 60)))
	until [ -n "$(jid_of "$1")" ] &&
		[ "$(counter "cl-$2" tree "$(jid_of "$1")" 0 aggregated 2>/dev/null)" -gt 100 ] 2>/dev/null ||
		[ $SECONDS -ge $end ]; do
		sleep 0.5
	done
}
# said NAME: what job NAME's netagg-ctl and workers said, for a failure.
said()
{
	local j
	j=$(jid_of "$1")
	{ cat "$TEST_TMP/$1.err"; tail -q -n 2 "$TEST_TMP"/ar."${j:-none}".* 2>/dev/null; } |
		sed "s/^/# $1: /"
}

# group NAME ARG... -- HOST...: a "netagg" torch.distributed group of a rank
# on each HOST whose job the cluster gives (NETAGG_ETCD=$ETCD, NETAGG_NODE
# the host), each rank running tests/python/cluster_group.py ARG... (PY:
# require_torch's) in namespace GROUP_NS (a printf format of the host;
# cl-%s), the group's store at GROUP_MASTER (the first host's management
# address) port GROUP_PORT (29511), Gloo on GROUP_IF (mg0); each rank's
# JSON line in NAME.RANK, its stderr in NAME.RANK.err; GROUP_ENV: more
# NAME=VALUE for every rank. Non-zero if a rank failed.
group()
{
	local name=$1 args=() r=0 h ns master pids=() rc=0
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	master=${GROUP_MASTER:-10.255.0.$(echo "$NODES" | tr ' ' '\n' | grep -nx "$1" | cut -d: -f1)}
	for h in "$@"; do
		# shellcheck disable=SC2059	# the format is the caller's
		ns=$(printf "${GROUP_NS:-cl-%s}" "$h")
		# shellcheck disable=SC2086
		ip netns exec "$ns" timeout "$(scaled 300)" env NETAGG_ETCD=$ETCD NETAGG_NODE="$h" \
			NETAGG_TIMEOUT=20 RANK=$r WORLD_SIZE=$# MASTER_ADDR="$master" \
			MASTER_PORT="${GROUP_PORT:-29511}" GLOO_SOCKET_IFNAME="${GROUP_IF:-mg0}" \
			OMP_NUM_THREADS=1 ${GROUP_ENV:-} \
			"$PY" "$NETAGG_ROOT/tests/python/cluster_group.py" "${args[@]}" \
			>"$TEST_TMP/$name.$r" 2>"$TEST_TMP/$name.$r.err" &
		pids+=($!)
		r=$((r + 1))
	done
	for h in "${pids[@]}"; do wait "$h" || rc=1; done
	return $rc
}
# ranks NAME JQ: JQ of each rank's line of group NAME, on one line.
ranks() { cat "$TEST_TMP/$1".[0-9] | jq -r "$2" | paste -sd' '; }

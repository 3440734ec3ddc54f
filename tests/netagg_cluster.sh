#!/bin/bash
# Jobs that come and go through etcd (docs/cluster.md): etcd in a namespace
# of its own, netagg-agent in each aggregator's, netagg-ctl placing jobs.
# Each job's trees are configured by the agents when it is placed and
# removed when its lease ends; a job killed mid-allreduce is gone from
# every aggregator within its TTL and the other job stays exact; the next
# job gets its id and nodes. Placements at once never share an id or pass
# a node's limit; a restarted agent leaves a running job alone; a job
# configured by hand (no key owns it) goes at agent start; etcd stopped
# mid-job: the job finishes exact, a new one is refused, saying why.
#
#   w1 w2 w3 -- agg1 --\                    cl-etcd: etcd, 10.255.0.254,
#                       root                on bridge mg0 with every node
#   w4 w5 w6 -- agg2 --/                    (10.255.0.N: management)
source "$(dirname "$0")/lib.sh"
require_root
command -v etcd >/dev/null || fail_setup "etcd missing (etcd-server): run scripts/deps.sh"
T=$NETAGG_ROOT/tests/topologies
ETCD=http://10.255.0.254:2379
TTL=6
NODES="root agg1 agg2 w1 w2 w3 w4 w5 w6"
rat_netns() { PYTHONPATH=$NETAGG_ROOT/python "$NETAGG_ROOT/lab/rat-netns.py" "$@"; }
py() { PYTHONPATH=$NETAGG_ROOT/python /usr/bin/python3 "$@"; }
ctl() { ip netns exec cl-etcd env PYTHONPATH="$NETAGG_ROOT/python" /usr/bin/python3 -m netagg.ctl --etcd $ETCD "$@"; }
trap 'kill $(jobs -p) 2>/dev/null; pkill -f "netagg.agent --etcd $ETCD" 2>/dev/null
	pkill -f "netagg-allreduce --job" 2>/dev/null; wait 2>/dev/null
	rat_netns destroy $T/racks.topo --prefix cl- >/dev/null 2>&1
	ip netns del cl-etcd 2>/dev/null; cleanup_ns; module_unload' EXIT
export NETAGG
module_load
ktap_plan 18

rat_netns apply "$T/racks.topo" --prefix cl- >/dev/null || fail_setup "rat-netns apply failed"
ip netns add cl-etcd
ip -n cl-etcd link set lo up
ip -n cl-etcd link add mg0 type bridge
ip -n cl-etcd addr add 10.255.0.254/24 dev mg0
ip -n cl-etcd link set mg0 up
i=0
for n in $NODES; do
	i=$((i + 1))
	ip link add mg-$n netns cl-etcd type veth peer name mg0 netns cl-$n
	ip -n cl-etcd link set mg-$n master mg0 up
	ip -n cl-$n addr add 10.255.0.$i/24 dev mg0
	ip -n cl-$n link set mg0 up
done
ip netns exec cl-etcd etcd --name cl --data-dir "$TEST_TMP/etcd" \
	--listen-client-urls $ETCD --advertise-client-urls $ETCD \
	--listen-peer-urls http://127.0.0.1:2380 >"$TEST_TMP/etcd.log" 2>&1 &
etcd_pid=$!
end=$((SECONDS + $(scaled 60)))
until ctl node list >/dev/null 2>&1 || [ $SECONDS -ge $end ]; do sleep 0.5; done

check "etcd in cl-etcd, the racks' topology loaded" ctl topology load "$T/racks.topo"

# The root takes 3 jobs at most: the module's limit, which its agent reports.
netagg_in cl-root set max-jobs 3
netagg_in cl-agg1 job add 99
# agent NODE: netagg-agent for NODE, in its namespace, logging to agent.NODE
agent()
{
	ip netns exec "cl-$1" env PYTHONPATH="$NETAGG_ROOT/python" /usr/bin/python3 \
		-m netagg.agent --etcd $ETCD --node "$1" --ttl $TTL --netagg "$NETAGG" \
		>>"$TEST_TMP/agent.$1" 2>&1 &
}
for n in root agg1 agg2; do agent $n; done
alive() { ctl -j node list 2>/dev/null | jq '[.[] | select(.alive)] | length'; }
end=$((SECONDS + $(scaled 60)))
until [ "$(alive)" = 3 ] || [ $SECONDS -ge $end ]; do sleep 0.5; done
check_eq "three agents registered, each with its module's limits" "3 3" \
	"$(alive) $(ctl -j node list | jq -r '.[] | select(.node == "root") | .max_jobs')"
# has NODE JID: the module of NODE holds job JID.
has() { netagg_in "cl-$1" -j job show | jq -e "[.jobs[].jid] | index(${2:-0}) != null" >/dev/null; }
end=$((SECONDS + $(scaled 20)))
while has agg1 99 && [ $SECONDS -lt $end ]; do sleep 0.5; done
check_eq "a job configured by hand, which no key owns, removed at agent start" gone \
	"$(has agg1 99 && echo kept || echo gone)"

# workers REC ITER HOST...: each host's worker allreduces ITER times 64K
# floats in the job netagg-ctl placed, whose record (the first line of
# its -j output) is REC: NETAGG_TREES each host's; rank in the order given.
cat >"$TEST_TMP/workers" <<EOF
#!/bin/bash
rec=\$1 iter=\$2 rank=0 pids=() rc=0
shift 2
jid=\$(head -n 1 \$rec | jq -r .jid)
n=\$(head -n 1 \$rec | jq -r .nworkers)
for h in "\$@"; do
	trees=\$(head -n 1 \$rec | jq -r ".hosts.\$h")
	ip netns exec cl-\$h $NETAGG_ALLREDUCE --job \$jid --rank \$rank --workers \$n \\
		--tree \${trees//,/ --tree } --count 64K --iterations \$iter --timeout-ms 20000 \\
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
	ctl -j job start --tenant "$tenant" --ttl $TTL "$@" -- \
		bash -c "$TEST_TMP/workers $TEST_TMP/$name.json $iter $* $then" \
		>"$TEST_TMP/$name.json" 2>"$TEST_TMP/$name.err" &
}
jid_of() { head -n 1 "$TEST_TMP/$1.json" 2>/dev/null | jq -r .jid; }
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

start a tenant-a 3 w1 w2 w4
pa=$!
start b tenant-b 3 w3 w5 w6
pb=$!
wait $pa; ra=$?
wait $pb; rb=$?
[ "$ra $rb" = "0 0" ] || { said a; said b; }
check_eq "two jobs of two tenants started at once: both exact" "0 0" "$ra $rb"
check "... on distinct ids ($(jid_of a), $(jid_of b))" \
	test "$(jid_of a)" != "$(jid_of b)" -a -n "$(jid_of a)" -a -n "$(jid_of b)"

# A long job a, killed (its netagg-ctl and workers) while it sums.
start a tenant-a 100000 w1 w2 w4
pa=$!
HOLD=$TEST_TMP/b.done start b tenant-b 20 w3 w5 w6
pb=$!
summing a root
ja=$(jid_of a)
roots_a=$(head -n 1 "$TEST_TMP/a.json" | jq -c '[.trees[].root]')
# Its netagg-ctl dies, not ending: the job's lease is left to expire.
pkill -KILL -f "netagg.ctl --etcd $ETCD -j job start --tenant tenant-a "
pkill -KILL -f "netagg-allreduce --job $ja "
wait $pa 2>/dev/null
t0=$SECONDS
end=$((SECONDS + $(scaled 30)))
while { has root "$ja" || has agg1 "$ja" || has agg2 "$ja"; } && [ $SECONDS -lt $end ]; do sleep 0.2; done
check_eq "job $ja killed mid-allreduce: its trees gone from every aggregator ($((SECONDS - t0)) s, TTL $TTL s)" \
	"gone gone gone" "$(for n in root agg1 agg2; do has $n "$ja" && echo kept || echo gone; done | paste -sd' ')"
start c tenant-c 3 w1 w2 w4
wait $!
rc=$?
[ $rc -eq 0 ] || said c
check_eq "a third job: exact, on the killed one's id and roots" "0 $ja $roots_a" \
	"$rc $(jid_of c) $(head -n 1 "$TEST_TMP/c.json" | jq -c '[.trees[].root]')"
touch "$TEST_TMP/b.done"
wait $pb
rb=$?
[ $rb -eq 0 ] || said b
check_eq "... the other job, running all the while, exact" 0 $rb

# Six placements at once of jobs over both racks (each needs the root):
# three placed, the root's limit, on three ids; three refused, saying why.
pids=()
for i in 1 2 3 4 5 6; do
	ctl -j job start --tenant burst --ttl $TTL w1 w4 -- sleep 3 \
		>"$TEST_TMP/burst.$i" 2>"$TEST_TMP/burst.$i.err" &
	pids+=($!)
done
wait "${pids[@]}"
ids=$(cat "$TEST_TMP"/burst.? | jq -r .jid | sort -u | paste -sd' ')
check_eq "six placements at once, the root taking 3 jobs: 3 placed on distinct ids ($ids)" 3 \
	"$(echo "$ids" | wc -w)"
check_eq "... 3 refused, saying why" 3 "$(grep -l 'no aggregator .* that may take it (root' "$TEST_TMP"/burst.?.err | wc -l)"

ctl quota set tenant-q --workers 2 >/dev/null
check_err "more workers than the tenant's quota: refused, saying why" "quota is 2 workers" \
	ctl job start --tenant tenant-q w1 w2 w4 -- true
check_err "a host the topology does not have: refused, saying why" "w9 is not a worker node" \
	ctl job start --tenant tenant-a w1 w9 -- true

# An agent killed and started again while its job sums: the job untouched.
HOLD=$TEST_TMP/d.done start d tenant-d 20 w1 w2 w4
pd=$!
summing d agg1
jd=$(jid_of d)
pkill -KILL -f "netagg.agent --etcd $ETCD --node agg1 "
before=$(counter cl-agg1 tree "$jd" 0 aggregated)
echo "--- restarted" >>"$TEST_TMP/agent.agg1"
agent agg1
end=$((SECONDS + $(scaled 30)))
until grep -q "registered" <(sed -n '/^--- restarted/,$p' "$TEST_TMP/agent.agg1") ||
	[ $SECONDS -ge $end ]; do sleep 0.5; done
after=$(counter cl-agg1 tree "$jd" 0 aggregated)
touched=$(sed -n '/^--- restarted/,$p' "$TEST_TMP/agent.agg1" | grep -c "job $jd: ")
check_eq "netagg-ctl job env: a host's NETAGG_*, its trees the record's" \
	"NETAGG_JOB=$jd NETAGG_WORKERS=3 NETAGG_TREES=$(head -n 1 "$TEST_TMP/d.json" | jq -r .hosts.w4) NETAGG_DTYPE=float32 NETAGG_WINDOW=64" \
	"$(ctl job env "$jd" w4 | paste -sd' ')"
touch "$TEST_TMP/d.done"
wait $pd
rd=$?
[ $rd -eq 0 ] || said d
check_eq "agg1's agent killed and restarted mid-job: the job exact, its tree kept, not configured again ($before then $after summed)" \
	"0 yes 0" "$rd $([ "${after:-0}" -ge "${before:-1}" ] && echo yes) $touched"

# etcd stopped mid-job: the job goes on; a new one cannot start.
start e tenant-e 200 w3 w5 w6
pe=$!
summing e agg2
# Meanwhile, every key the store holds is one docs/cluster.md's table lists
# (NODE, JID, TENANT: a name).
sed -n '/^## Keys/,/^## /s/^| `\([^`]*\)`.*/\1/p' "$NETAGG_ROOT/docs/cluster.md" |
	sed 's/[A-Z][A-Z]*/[^\/]*/g; s/.*/^\/netagg\/v1\/&$/' >"$TEST_TMP/layout"
ip netns exec cl-etcd etcdctl --endpoints $ETCD get --prefix --keys-only /netagg/ |
	grep . >"$TEST_TMP/keys"
undocumented=$(grep -cvf "$TEST_TMP/layout" "$TEST_TMP/keys")
check_eq "every key in the store ($(wc -l <"$TEST_TMP/keys"), of $(wc -l <"$TEST_TMP/layout") kinds) is one docs/cluster.md lists" \
	"0 8" "$undocumented $(wc -l <"$TEST_TMP/layout")"
grep -vf "$TEST_TMP/layout" "$TEST_TMP/keys" | sed 's/^/# undocumented: /'
kill -KILL $etcd_pid
wait $pe
re=$?
[ $re -eq 0 ] || said e
check_eq "etcd stopped mid-job: the job finishes, exact" 0 $re
check_err "... a new job refused, saying why" "etcd at $ETCD unreachable" \
	ctl job start --tenant tenant-a w1 w2 -- true
check "... the configured jobs stay on the aggregators meanwhile" has agg2 "$(jid_of e)"
grep -h "netagg-agent" "$TEST_TMP"/agent.* | sort | uniq -c | sort -rn | head -n 8 | sed 's/^/# /'

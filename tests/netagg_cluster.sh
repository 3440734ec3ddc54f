#!/bin/bash
# Jobs that come and go through etcd (docs/cluster.md): etcd in a namespace
# of its own, netagg-agent in each aggregator's, netagg-ctl placing jobs.
# Each job's trees are configured by the agents when it is placed and
# removed when its lease ends; a job killed mid-allreduce is gone from
# every aggregator within its TTL and the other job stays exact; the next
# job gets its id and nodes. Placements at once never share an id or pass
# a node's limit; a restarted agent leaves a running job alone; a job
# configured by hand (no key owns it) goes at agent start; a job's id
# ended and placed again unseen gets the new key, its workers waiting for
# it; a "netagg"
# torch.distributed group with NETAGG_ETCD gets its job from the cluster,
# exact, released at its end (its fallbacks: host_cluster.sh); etcd stopped
# mid-job: the job finishes exact, a new one is refused, saying why; etcd
# again with its auth on: agents and jobs as their users.
#
#   w1 w2 w3 -- agg1 --\                    cl-etcd: etcd, 10.255.0.254,
#                       root                on bridge mg0 with every node
#   w4 w5 w6 -- agg2 --/                    (10.255.0.N: management)
source "$(dirname "$0")/lib.sh"
require_root
command -v etcd >/dev/null || fail_setup "etcd missing (etcd-server): run scripts/deps.sh"
require_torch
# shellcheck source=lib-cluster.sh
source "$NETAGG_ROOT/tests/lib-cluster.sh"
trap 'kill $(jobs -p) 2>/dev/null; cluster_down; wait 2>/dev/null; cleanup_ns; module_unload' EXIT
module_load
ktap_plan 25
cluster_up || fail_setup "the cluster's namespaces or etcd did not come up"

check "etcd in cl-etcd, the racks' topology loaded" ctl topology load "$CLUSTER_TOPO"

# The root takes 3 jobs at most: the module's limit, which its agent reports.
netagg_in cl-root set max-jobs 3
netagg_in cl-agg1 job add 99
for n in root agg1 agg2; do agent $n; done
agents_up 3
check_eq "three agents registered, each with its module's limits" "3 3" \
	"$(alive) $(ctl -j node list | jq -r '.[] | select(.node == "root") | .max_jobs')"
end=$((SECONDS + $(scaled 20)))
while has agg1 99 && [ $SECONDS -lt $end ]; do sleep 0.5; done
check_eq "a job configured by hand, which no key owns, removed at agent start" gone \
	"$(has agg1 99 && echo kept || echo gone)"

start a tenant-a 3 w1 w2 w4
pa=$!
start b tenant-b 3 w3 w5 w6
pb=$!
wait $pa; ra=$?
wait $pb; rb=$?
[ "$ra $rb" = "0 0" ] || { said a; said b; }
check_eq "two jobs of two tenants started at once, no --trees: both exact, on 4 trees each" \
	"0 0 4 4" "$ra $rb $(ntrees a) $(ntrees b)"
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
gone_within "$(scaled 30)" "$ja"
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
# A job's key: fresh, on its nodes, readable only under key/ (not in its
# record); its workers got it from netagg-ctl (NETAGG_KEY_FILE).
kd=$(ip netns exec cl-etcd etcdctl --endpoints $ETCD get --print-value-only \
	"/netagg/v1/key/agg1/$jd" | jq -r .key)
check_eq "job $jd is keyed on agg1, its key (64 hex digits) under key/agg1/ and in no record" \
	"true 64 0" \
	"$(netagg_in cl-agg1 -j job show | jq -r ".jobs[] | select(.jid == $jd) | .keyed") ${#kd} $(ip netns exec cl-etcd etcdctl --endpoints $ETCD get --prefix /netagg/v1/ -w json |
	   jq -r '.kvs[] | select(.key | @base64d | startswith("/netagg/v1/key/") | not) | .value | @base64d' |
	   grep -c "${kd:-none}")"
touch "$TEST_TMP/d.done"
wait $pd
rd=$?
[ $rd -eq 0 ] || said d
check_eq "agg1's agent killed and restarted mid-job: the job exact, its tree kept, not configured again ($before then $after summed)" \
	"0 yes 0" "$rd $([ "${after:-0}" -ge "${before:-1}" ] && echo yes) $touched"

# A job's id ended and placed again, on the same nodes and lines, while
# the agents were not looking (stopped: as a burst of changes read in one
# pass). The module keeps the first job's key, which it never says: the
# agents know it from their own digest and replace the job, and the new
# one's workers start only once a pass that read it says so (the first
# job's word for the id is not the new one's). Agents with a lease long
# enough to be stopped (TERM: each revokes its own before it goes).
pkill -TERM -f "netagg.agent --etcd $ETCD"
end=$((SECONDS + $(scaled 20)))
while [ "$(alive)" != 0 ] && [ $SECONDS -lt $end ]; do sleep 0.2; done
for n in root agg1 agg2; do echo "--- rekey" >>"$TEST_TMP/agent.$n"; TTL=60 agent $n; done
agents_up 3
ctl -j job start --tenant tenant-x --ttl $TTL w1 w2 w4 -- \
	bash -c "for i in \$(seq 600); do [ -e $TEST_TMP/x.done ] && exit; sleep 0.1; done" \
	>"$TEST_TMP/x.json" 2>"$TEST_TMP/x.err" &
px=$!
end=$((SECONDS + $(scaled 30)))
until [ -n "$(jid_of x)" ] || [ $SECONDS -ge $end ]; do sleep 0.2; done
pkill -STOP -f "netagg.agent --etcd $ETCD"
touch "$TEST_TMP/x.done"
wait $px
start y tenant-x 3 w1 w2 w4
py=$!
end=$((SECONDS + $(scaled 30)))
until ctl -j job list | jq -e "[.[].jid] | index($(jid_of x)) != null" >/dev/null ||
	[ $SECONDS -ge $end ]; do sleep 0.2; done
sleep 1
early=$(jid_of y)
pkill -CONT -f "netagg.agent --etcd $ETCD"
wait $py
ry=$?
[ $ry -eq 0 ] || said y
check_eq "job $(jid_of x) ended and its id placed again while the agents were stopped: the new job not started on the old one's word" \
	"$(jid_of x) " "$(jid_of y) $early"
# The agents of the job's nodes (its record's), each: the new key seen.
nodes_x=$(head -n 1 "$TEST_TMP/x.json" | jq -r '.nodes | join(" ")')
rekeyed=$(for n in $nodes_x; do sed -n '/^--- rekey/,$p' "$TEST_TMP/agent.$n" |
	grep -c "job $(jid_of x): its key is another now"; done | paste -sd' ')
[ -n "$nodes_x" ] && [ "$rekeyed" = "$(for n in $nodes_x; do echo 1; done | paste -sd' ')" ] ||
	for n in root agg1 agg2; do
		sed -n '/^--- rekey/,$p' "$TEST_TMP/agent.$n" | sed "s/^/# $n: /"
	done
check_eq "... the agent of each of its nodes ($nodes_x) replaced it, its key another, and it is exact" \
	"0 $(for n in $nodes_x; do echo 1; done | paste -sd' ')" "$ry ${rekeyed:-none}"
pkill -TERM -f "netagg.agent --etcd $ETCD"
end=$((SECONDS + $(scaled 20)))
while [ "$(alive)" != 0 ] && [ $SECONDS -lt $end ]; do sleep 0.2; done
for n in root agg1 agg2; do agent $n; done
agents_up 3

# The topology again, with a packets line: each agent gives its node the
# marks (at its next resync), and the jobs from here on are placed with
# them: the group's through the backend, the others' workers told by
# their record (tests/lib-cluster.sh).
{ cat "$CLUSTER_TOPO"; echo "packets dscp 46 port 9000"; } >"$TEST_TMP/marked.topo"
ctl topology load "$TEST_TMP/marked.topo" >/dev/null
marks_of() {
	for n in root agg1 agg2; do
		netagg_in "cl-$n" -j show | jq -r '"\(.namespace.dscp)/\(.namespace.port)"'
	done | paste -sd' '
}
end=$((SECONDS + $(scaled 30)))
until [ "$(marks_of)" = "46/9000 46/9000 46/9000" ] || [ $SECONDS -ge $end ]; do sleep 0.5; done
check_eq "a topology with a packets line loaded: every agent gives its node DSCP 46, port 9000" \
	"46/9000 46/9000 46/9000" "$(marks_of)"

tenant_jobs() { ctl -j job list | jq -c "[.[] | select(.tenant == \"$1\") | .jid]"; }

GROUP_ENV=NETAGG_TENANT=tenant-t group g 5 "$TEST_TMP/g.held" -- w1 w4 &
pg=$!
end=$((SECONDS + $(scaled 120)))
until [ "$(tenant_jobs tenant-t)" != "[]" ] || [ $SECONDS -ge $end ]; do sleep 0.5; done
held=$(tenant_jobs tenant-t)
held_trees=$(ctl -j job show "$(jq '.[0]' <<<"$held")" 2>/dev/null | jq '.trees | length')
touch "$TEST_TMP/g.held"
wait $pg
rg=$?
left=$(tenant_jobs tenant-t)
[ $rg -eq 0 ] || tail -q -n 3 "$TEST_TMP"/g.?.err | sed 's/^/# g: /'
check_eq "init_process_group(\"netagg\") with NETAGG_ETCD, ranks on w1 and w4, the new marks: rank 0 gets a job (tenant NETAGG_TENANT's, $held, no NETAGG_NTREES: 4 trees), every rank exact through it, none through Gloo" \
	"0 true true 5 5 0 0 [$(ranks g .stats.job | cut -d' ' -f1)] 4" \
	"$rg $(ranks g .ok) $(ranks g .stats.netagg_calls) $(ranks g .stats.gloo_calls) $held $held_trees"
check_eq "... and released when the group's processes end (not left to the TTL)" "[]" "$left"

# etcd stopped mid-job: the job goes on; a new one cannot start. Job e
# holds between its rounds until etcd is gone, so that it cannot end (and
# release its trees) first.
HOLD=$TEST_TMP/e.go start e tenant-e 20 w3 w5 w6
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
	"0 9" "$undocumented $(wc -l <"$TEST_TMP/layout")"
grep -vf "$TEST_TMP/layout" "$TEST_TMP/keys" | sed 's/^/# undocumented: /'
kill -KILL $etcd_pid
touch "$TEST_TMP/e.go"
wait $pe
re=$?
[ $re -eq 0 ] || said e
check_eq "etcd stopped mid-job: the job finishes, exact" 0 $re
check_err "... a new job refused, saying why" "etcd at $ETCD unreachable" \
	ctl job start --tenant tenant-a w1 w2 -- true
check "... the configured jobs stay on the aggregators meanwhile" has agg2 "$(jid_of e)"

# etcd again, its auth turned on (netagg-ctl auth setup; the permissions
# themselves: host_cluster.sh): each agent as its node's user, a job
# placed as user jobs and applied by every agent.
etcd_start || fail_setup "etcd did not come back"
sec=$TEST_TMP/secrets
ctl auth setup "$sec" >/dev/null
pkill -f "netagg.agent --etcd $ETCD"
for n in root agg1 agg2; do
	echo "--- auth" >>"$TEST_TMP/agent.$n"
	AUTH=$sec agent $n
done
# registered: for each agent, how often it registered since its restart.
registered() {
	for n in root agg1 agg2; do
		sed -n '/^--- auth/,$p' "$TEST_TMP/agent.$n" | grep -c "registered"
	done | paste -sd' '
}
# The killed agents' registrations may still count as alive until their
# leases lapse: a job placed before the new ones registered finds no agent.
end=$((SECONDS + $(scaled 60)))
until [ "$(registered)" = "1 1 1" ] || [ $SECONDS -ge $end ]; do sleep 0.5; done
NETAGG_ETCD_USER=jobs NETAGG_ETCD_PASSWORD_FILE=$sec/jobs start h tenant-h 3 w1 w2 w5
wait $!
rh=$?
[ $rh -eq 0 ] || said h
registered=$(registered)
check_eq "etcd's auth on: each agent registered as its node's user; a job placed as user jobs, exact" \
	"1 1 1 0" "$registered $rh"
grep -h "netagg-agent" "$TEST_TMP"/agent.* | sort | uniq -c | sort -rn | head -n 8 | sed 's/^/# /'

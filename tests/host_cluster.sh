#!/bin/bash
# What of docs/cluster.md needs no module, on the host: etcd in namespace
# hc-etcd (127.0.0.1:2379 there), the racks' topology loaded, no agent.
# The "netagg" backend with NETAGG_ETCD when the cluster gives its group
# no job (a tenant's quota, a host the topology lacks, etcd unreachable,
# a wait for room that ends): every rank warned with the reason and exact
# through Gloo, or, with NETAGG_FALLBACK=error, every rank's
# init_process_group raising it; NETAGG_ETCD beside NETAGG_JOB refused.
# Placements with a node drained and with nodes' memory running out. Then
# netagg-ctl auth setup: each user writes only its keys, a request
# without a user or with a wrong password is refused saying so, and the
# backend reads the store as user jobs. (The job given, the agents: the
# VM's netagg_cluster.sh.)
cd "$(dirname "$0")/.." || exit 1
source tests/lib.sh
trap 'kill $(jobs -p) 2>/dev/null; [ -z "${etcd_pid:-}" ] || kill -KILL "$etcd_pid" 2>/dev/null
	wait 2>/dev/null; ip netns del hc-etcd 2>/dev/null; cleanup_ns' EXIT
require_root
require_torch
command -v etcd >/dev/null || fail_setup "etcd missing (etcd-server): run scripts/deps.sh"
ktap_plan 13
# shellcheck source=lib-cluster.sh
source tests/lib-cluster.sh
ETCD_NS=hc-etcd ETCD=http://127.0.0.1:2379

etcd_ns
etcd_start 30 || fail_setup "etcd did not answer in 30 s"
ctl topology load tests/topologies/racks.topo >/dev/null || fail_setup "topology load failed"
ctl quota set tenant-z --jobs 0 >/dev/null

# hgroup NAME HOST...: lib-cluster.sh's group, its ranks in hc-etcd (Gloo on lo),
# of tenant tenant-z, each running cluster_group.py 2; a port a group.
GROUP_NS=hc-etcd GROUP_MASTER=127.0.0.1 GROUP_IF=lo GROUP_PORT=29600
hgroup()
{
	local name=$1
	shift
	GROUP_PORT=$((GROUP_PORT + 1))
	GROUP_ENV="NETAGG_TENANT=tenant-z ${GROUP_ENV:-}" group "$name" 2 -- "$@"
}
# errors NAME: the error each rank of group NAME ended with, a line each.
errors() { cat "$TEST_TMP/$1".[0-9] | jq -r .error; }
# fell_back NAME WHY: group NAME's ranks all exit 0, exact, nothing through
# netagg, both allreduces through Gloo, each warned once that the group's
# calls go through Gloo: no job from etcd at $ETCD: WHY.
fell_back()
{
	local want="netagg: the group's calls go through Gloo: no job from etcd at $2"
	ranks "$1" "[.ok, .stats.netagg_calls, .stats.gloo_calls,
		([.warnings[] | select(. == \"$want\")] | length)] | @tsv" | tr '\t' ' '
}
said() { cat "$TEST_TMP/$1".[0-9] "$TEST_TMP/$1".[0-9].err 2>/dev/null | grep . | cut -c 1-300 | sed 's/^/# /'; }

hgroup quota w1 w4 || said quota
check_eq "a group the cluster gives no job (its tenant's quota is 0 jobs): every rank exact through Gloo, warned with the reason" \
	"true 0 2 1 true 0 2 1" "$(fell_back quota "$ETCD: tenant tenant-z: 0 jobs running, its quota is 0")"
GROUP_ENV=NETAGG_ETCD_WAIT=2 hgroup wait w1 w4 || said wait
check_eq "... NETAGG_ETCD_WAIT=2: the same once the wait for room ends, saying so" \
	"true 0 2 1 true 0 2 1" "$(fell_back wait "$ETCD: tenant tenant-z: 0 jobs running, its quota is 0 (waited 2 s)")"
GROUP_ENV=NETAGG_FALLBACK=error hgroup error w1 w4
rc=$?
check_eq "... NETAGG_FALLBACK=error: every rank's init_process_group raises, saying why" "1 2" \
	"$rc $(errors error | grep -cF "RuntimeError: netagg: no job from etcd at $ETCD: tenant tenant-z: 0 jobs running, its quota is 0 (NETAGG_FALLBACK=error)")"
GROUP_ENV=NETAGG_TENANT=tenant-y hgroup stranger w1 w9 || said stranger
check_eq "a host the topology does not have: every rank exact through Gloo, warned with the reason" \
	"true 0 2 1 true 0 2 1" "$(fell_back stranger "$ETCD: tenant tenant-y: job 1: w9 is not a worker node")"
ETCD=http://127.0.0.1:2399 hgroup away w1 w4 || said away
check_eq "etcd unreachable: every rank exact through Gloo, warned with the reason" \
	"true 0 2 1 true 0 2 1" "$(fell_back away "http://127.0.0.1:2399: etcd at http://127.0.0.1:2399 unreachable: [Errno 111] Connection refused")"
GROUP_ENV=NETAGG_JOB=7 hgroup both w1 w4
rc=$?
check_eq "NETAGG_ETCD beside NETAGG_JOB: refused (rank 0 says which to unset), no rank goes on" \
	"1 false false 1" "$rc $(ranks both .ok) $(jq -r .error "$TEST_TMP/both.0" | grep -cF "ValueError: netagg: NETAGG_ETCD has the cluster place the job: unset NETAGG_JOB")"

# Placements alone (tests/python/cluster_place.py: the aggregators
# registered as their agents would, 16 jobs and 100M each; none applied).
ip netns exec hc-etcd env PYTHONPATH="$NETAGG_ROOT/python" "$PY" tests/python/cluster_place.py \
	$ETCD >"$TEST_TMP/place" 2>&1
step() { jq -r "select(.step == \"$1\") | .error // (.nodes | join(\" \"))" "$TEST_TMP/place" 2>&1; }
check_eq "agg1 drained: a job over both racks gets no tree there; undrained, it does" \
	"root|agg1 root" "$(step drained)|$(step undrained)"
check_eq "jobs of 64M on rack 2, its nodes 100M each: one on agg2, one on root, the third refused saying why" \
	"agg2|root|tenant tenant-p: job 3: no aggregator in or above rack2 that may take it (agg2: 64M of its 100M taken, the job asks 64M; root: 64M of its 100M taken, the job asks 64M) to be its root" \
	"$(step "memory 1")|$(step "memory 2")|$(step "memory 3")"

# etcd's auth on: its users' passwords in secrets/.
sec=$TEST_TMP/secrets
ctl auth setup "$sec" >/dev/null
# as USER ETCDCTL-ARGS...: etcdctl as USER.
as() { ip netns exec hc-etcd etcdctl --endpoints $ETCD --user "$1:$(cat "$sec/$1")" "${@:2}" 2>&1; }
got=$(for u_k in agent-agg1:applied/agg1 agent-agg1:applied/agg2 agent-agg1:node/agg2 \
	jobs:applied/agg1 jobs:quota/tenant-z jobs:job/5 admin:quota/tenant-y; do
	as "${u_k%%:*}" put "/netagg/v1/${u_k#*:}" '{}' | grep -o '^OK$\|^Error: etcdserver: permission denied' | sed 's/.* //'
done | paste -sd' ')
check_eq "netagg-ctl auth setup: each user writes its keys only (agent-agg1 its applied state, jobs a job, admin a quota)" \
	"OK denied denied denied denied OK OK" "$got"
# A job's key (key/NODE/JID): the jobs user writes it, reads none; an agent
# reads its node's, no other's; admin none.
got=$(as jobs put /netagg/v1/key/agg1/5 '{}' | grep -o '^OK$\|permission denied' | sed 's/.* //'
      for u_k in jobs:key/agg1/5 admin:key/agg1/5 agent-agg1:key/agg2/5 agent-agg1:key/agg1/5; do
	as "${u_k%%:*}" get "/netagg/v1/${u_k#*:}" >/dev/null 2>&1 && echo read || echo denied
      done | paste -sd' ')
check_eq "... a job's key: jobs writes it and reads none, agent-agg1 reads agg1's only, admin none" \
	"OK denied denied denied read" "$(echo $got)"
check_err "... a request without a user refused, saying etcd's auth is on" "etcd's auth is on" \
	ctl node list
echo wrong >"$TEST_TMP/wrong"
check_err "... a wrong password refused, saying so" "invalid user ID or password" \
	ctl --user jobs --password-file "$TEST_TMP/wrong" node list
GROUP_ENV="NETAGG_ETCD_USER=jobs NETAGG_ETCD_PASSWORD_FILE=$sec/jobs" hgroup auth w1 w4 || said auth
check_eq "... the backend reads the store as user jobs (NETAGG_ETCD_USER): the quota's reason, exact" \
	"true 0 2 1 true 0 2 1" "$(fell_back auth "$ETCD: tenant tenant-z: 0 jobs running, its quota is 0")"
ktap_finish

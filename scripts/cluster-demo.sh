#!/bin/bash
# make cluster-demo (in the VM): jobs that come and go through etcd
# (docs/cluster.md) on the two racks of make demo. etcd in a namespace of
# its own, a netagg-agent in each aggregator's; two tenants' jobs started
# at once, both exact, on distinct ids; one killed mid-allreduce, its
# trees gone from every aggregator within its TTL while the other stays
# exact; a third job placed where the killed one was. Each step is
# printed with what it found; the exit status is 1 if any failed.
#
#   w1 w2 w3 -- agg1 --\                    cl-etcd: etcd, 10.255.0.254,
#                       root                on bridge mg0 with every node
#   w4 w5 w6 -- agg2 --/
set -uo pipefail
source "$(dirname "$0")/../tests/lib.sh"
# shellcheck source=../tests/lib-cluster.sh
source "$NETAGG_ROOT/tests/lib-cluster.sh"
trap 'kill $(jobs -p) 2>/dev/null; cluster_down; wait 2>/dev/null; cleanup_ns; module_unload' EXIT
command -v etcd >/dev/null || { echo "etcd missing (etcd-server): run scripts/deps.sh" >&2; exit 1; }
failed=0

# step WHAT CMD...: CMD, said ok or FAILED after WHAT.
step()
{
	local what=$1 rc
	shift
	"$@" >"$TEST_TMP/step" 2>&1
	rc=$?
	sed 's/^/        /' "$TEST_TMP/step"
	if [ $rc = 0 ]; then
		echo "  ok      $what"
	else
		echo "  FAILED  $what"
		failed=$((failed + 1))
	fi
}
# job NAME TENANT SCRIPT HOST...: netagg-ctl job start for TENANT on HOST...,
# in the background (its pid pids[NAME]), running SCRIPT (bash; `w ITER`:
# the job's workers on its hosts, ITER allreduces each, every one checked
# exact); its record in NAME.json.
job()
{
	local name=$1 tenant=$2 script=$3
	shift 3
	ctl -j job start --tenant "$tenant" --ttl "$TTL" "$@" -- bash -c \
		"W='$TEST_TMP/workers $TEST_TMP/$name.json'; w() { \$W \"\$1\" $*; }; $script" \
		>"$TEST_TMP/$name.json" 2>"$TEST_TMP/$name.err" &
	pids[$name]=$!
}
declare -A pids
# appears FILE S: FILE exists within S seconds.
appears()
{
	local end=$((SECONDS + $2))
	until [ -e "$1" ] || [ $SECONDS -ge $end ]; do sleep 0.2; done
	[ -e "$1" ]
}
trees_of() { head -n 1 "$TEST_TMP/$1.json" | jq -r '[.trees[] | "tree \(.tid) at \(.root)"] | join(", ")'; }

module_load
echo "== netagg cluster demo: jobs placed, configured and released through etcd =="
echo "1. etcd in namespace cl-etcd; the two racks' topology loaded (netagg-ctl topology load)"
step "etcd answers" cluster_up
step "topology loaded" ctl topology load "$CLUSTER_TOPO"
echo "2. a netagg-agent on each aggregator (root, agg1, agg2), under a lease of $TTL s"
for n in root agg1 agg2; do agent $n; done
agents_up 3
step "three agents registered" test "$(alive)" = 3
ctl node list | sed 's/^/        /'

echo "3. two tenants' jobs started at once: alice on w1 w2 w4, bob on w3 w5 w6"
job alice alice "w 3 && touch $TEST_TMP/alice.exact && w 100000" w1 w2 w4
job bob bob "w 3 && touch $TEST_TMP/bob.exact && for i in \$(seq 1500); do
	[ -e $TEST_TMP/carol.done ] && break; sleep 0.2; done && w 3" w3 w5 w6
step "alice's first 3 allreduces exact on every worker" appears "$TEST_TMP/alice.exact" "$(scaled 120)"
step "bob's first 3 allreduces exact on every worker" appears "$TEST_TMP/bob.exact" "$(scaled 120)"
ja=$(jid_of alice) jb=$(jid_of bob)
step "on distinct ids: alice's job $ja ($(trees_of alice)), bob's job $jb ($(trees_of bob))" \
	test -n "$ja" -a -n "$jb" -a "$ja" != "$jb"
echo "   the jobs (netagg-ctl job list), and the links they share (netagg-ctl links):"
ctl job list | sed 's/^/        /'
ctl links | sed 's/^/        /'

echo "4. alice's job killed mid-allreduce (netagg-ctl and workers: SIGKILL), its lease left to expire"
summing alice root
roots_alice=$(trees_of alice)
pkill -KILL -f "netagg.ctl --etcd $ETCD -j job start --tenant alice "
pkill -KILL -f "netagg-allreduce --job $ja "
t0=$SECONDS
gone_within "$(scaled $((TTL + 4)))" "$ja"
t=$((SECONDS - t0))
step "job $ja gone from root, agg1 and agg2 after $t s (its TTL: $TTL s)" \
	eval "! has root $ja && ! has agg1 $ja && ! has agg2 $ja && [ $t -le $((TTL + 2)) ]"

echo "5. a third job, carol's, on w1 w2 w4"
job carol carol "w 3; rc=\$?; touch $TEST_TMP/carol.done; exit \$rc" w1 w2 w4
wait "${pids[carol]}"
rc=$?
step "carol's 3 allreduces exact" test $rc = 0
step "placed where alice's was: job $(jid_of carol), $(trees_of carol)" \
	test "$(jid_of carol) $(trees_of carol)" = "$ja $roots_alice"
echo "6. bob's job, running all the while, does 3 allreduces more and ends"
wait "${pids[bob]}"
rc=$?
step "bob's allreduces exact to the end" test $rc = 0
step "no job left in the store" test "$(ctl -j job list | jq length)" = 0
[ $failed = 0 ] || { for n in alice bob carol; do said $n; done; }
echo
echo "(docs/cluster.md: the keys, the placement, the agent, netagg-ctl)"
[ $failed = 0 ] || { echo "cluster demo: $failed step(s) FAILED"; exit 1; }
echo "cluster demo: every step ok"

#!/bin/bash
# A keyed run's sessions, on the host (two namespaces, no module): a
# scripted root (tests/python/keyed_root.py) takes each packet only if its
# tag is right, bound to its sender, as the module does, and answers with
# the sum tagged as a result. A tag binds the session and the round, whose
# 16 bits wrap: a keyed run of 65540 allreduces joins a new session after
# 65535 (the join's own round and those: 65536), so no (session, round)
# names two allreduces; a run given its session (--no-join) fails the
# 65537th, saying why. Without the library's new join, one session would
# have had every round, some twice.
#
#   w1 10.0.1.1 ---- sw 10.0.1.254: keyed_root.py on UDP 7177
cd "$(dirname "$0")/.." || exit 1
source tests/lib.sh
require_root
trap 'cleanup_ns; rm -rf "$TEST_TMP"' EXIT
ROOT_PY=$NETAGG_ROOT/tests/python/keyed_root.py

ktap_plan 4
setup_ns sw w1
ip link add v0 netns w1 type veth peer name s1 netns sw
addr_add w1 10.0.1.1/24 v0
addr_add sw 10.0.1.254/24 s1
ip -n w1 link set v0 up
ip -n sw link set s1 up
head -c 32 /dev/urandom >"$TEST_TMP/key"

# keyed NAME ARGS...: keyed_root.py in sw, then one worker's allreduces of
# one element, ARGS after; the worker's JSON (or errors) in NAME.out, the
# root's line in NAME.root; the worker's exit status.
keyed() {
	local name=$1 rc i
	shift
	ip netns exec sw timeout 300 python3 "$ROOT_PY" --listen 10.0.1.254 \
		--key "$TEST_TMP/key" >"$TEST_TMP/$name.root" 2>"$TEST_TMP/$name.err" &
	for i in $(seq 100); do grep -qs ready "$TEST_TMP/$name.err" && break; sleep 0.1; done
	ip netns exec w1 timeout 240 "$NETAGG_ALLREDUCE" --job 3 --tree 0=10.0.1.254 \
		--rank 0 --workers 1 --count 1 --key "$TEST_TMP/key" -j "$@" \
		>"$TEST_TMP/$name.out" 2>&1
	rc=$?
	wait
	return $rc
}

keyed joined --iterations 65540
check_eq "65540 keyed allreduces: every one exact, every tag right (at least an allreduce's packet each, and each join's two)" \
	"true yes 0" "$(jq -r .ok "$TEST_TMP/joined.out") $(jq -r '"\(if .good >= 65544 then "yes" else .good end) \(.bad)"' "$TEST_TMP/joined.root")"
check_eq "... a new session after 65535: the first had 65536 rounds, the second 6 (its join's and 5)" \
	"[1,6,65536]" "$(jq -c '[.rounds[]] | sort' "$TEST_TMP/joined.root")"
keyed given --iterations 65537 --no-join --session 5
rc=$?
check_eq "a keyed run given its session (--no-join): the 65537th allreduce fails (exit 1)" \
	"1 65536" "$rc $(jq -r '.rounds["5"]' "$TEST_TMP/given.root")"
check_eq "... saying why" 1 "$(grep -c "served 65536 allreduces" "$TEST_TMP/given.out")"
ktap_finish

#!/bin/bash
# The netlink family fuzzed (tests/tools/netagg-nlfuzz: random requests
# built from uapi/netagg.yaml, valid configuration changes among them)
# while workers send contributions to the jobs it makes and a packet
# fuzzer sends hostile packets, then with a namespace and the module
# going away under it. Every message must be answered (success, or an
# error with its reason), the state read back consistent throughout, and
# memory used 0 once everything is deleted; the kernel log stays clean
# (vm-run). NLFUZZ_MESSAGES messages (default 20000; make check-debug
# 100000); each run's seed is in this test's log, to replay it.
#
#   w1 10.0.1.1 --+                            jobs 1-4, trees 0-2, made
#   w2 10.0.2.1 --+-- sw 10.0.N.254 (fuzzed)   and unmade by the fuzzer;
#   w3 10.0.3.1 --+                            w1-w3 contribute to them,
#                                              w3 also sends hostile packets
source "$(dirname "$0")/lib.sh"
require_root
trap 'stop_traffic; kill $(jobs -p) 2>/dev/null; cleanup_ns; module_unload' EXIT

NLFUZZ=$NETAGG_ROOT/tests/tools/netagg-nlfuzz
FUZZ=$NETAGG_ROOT/tests/tools/netagg-fuzz
SPEC=$NETAGG_ROOT/uapi/netagg.yaml
messages=${NLFUZZ_MESSAGES:-20000}
# The traffic's bound: 600 s a 20,000 messages, on a slow kernel scaled (the
# debug kernel's 100,000 take 20 minutes). It must outlast the fuzzer.
traffic_limit=$(($(scaled 600) * (messages + 19999) / 20000))

module_load
topo_star 3

# Workers 1-3 send to jobs 1-4, trees 0-2, VIDs 0-63, in super-packets and
# plain ones, and w3 random hostile packets, until stopped
# ($traffic_limit s at most).
traffic_pids=()
traffic()
{
	local i
	for i in 1 2 3; do
		ip netns exec "w$i" timeout "$traffic_limit" bash -c '
			while [ ! -e "$3/stop" ]; do
				for j in 1 2 3 4; do
					"$1" --dst "$2" --job $j --tree $((j % 3)) --vids 64 --count 16 \
						$([ $((j % 2)) = 0 ] && echo --super) >/dev/null 2>&1
				done
			done' _ "$NETAGG_SEND" "10.0.$i.254" "$TEST_TMP" &
		traffic_pids+=($!)
	done
	ip netns exec w3 timeout "$traffic_limit" bash -c '
		while [ ! -e "$3/stop" ]; do
			"$1" --dst "$2" --job 1 --quiet random 2000 --seed $RANDOM >/dev/null 2>&1
		done' _ "$FUZZ" 10.0.3.254 "$TEST_TMP" &
	traffic_pids+=($!)
}
stop_traffic()
{
	touch "$TEST_TMP/stop" 2>/dev/null
	wait "${traffic_pids[@]}" 2>/dev/null
	traffic_pids=()
	rm -f "$TEST_TMP/stop"
}

# rx: the packets sw's links from the workers received (a reset, which the
# fuzzer sends, zeroes the module's counters, not these).
rx()
{
	local i n=0
	for i in 1 2 3; do
		n=$((n + $(ip netns exec sw cat "/sys/class/net/s$i/statistics/rx_packets")))
	done
	echo "$n"
}
# sending: how many of the traffic's loops still run (none out of time).
sending()
{
	local p n=0
	for p in "${traffic_pids[@]}"; do kill -0 "$p" 2>/dev/null && n=$((n + 1)); done
	echo "$n"
}

# seed NAME: the seed of a run ($TEST_TMP/NAME.err) in the log, to replay it.
seed() { grep -h seed "$TEST_TMP/$1.err" | sed 's/^/# /'; }

ktap_plan 8

rx0=$(rx)
traffic
ip netns exec sw "$NLFUZZ" --spec "$SPEC" --count "$messages" --end-reset -j \
	>"$TEST_TMP/main" 2>"$TEST_TMP/main.err"
rc=$?
senders=$(sending) rx1=$(rx)
stop_traffic
seed main
check_eq "$messages messages with traffic and hostile packets: all answered, the state consistent (exit $rc)" \
	"{\"sent\":$messages,\"no_reason\":0,\"no_answer\":0,\"inconsistent\":0}" \
	"$(jq -c '{sent, no_reason, no_answer, inconsistent}' "$TEST_TMP/main")"
check_eq "... of them configuration applied, state checks made: some, some" "some some" \
	"$(some "$(jq .config_ok "$TEST_TMP/main")") $(some "$(jq .checks "$TEST_TMP/main")")"
check_eq "... the traffic reached the switch meanwhile, its 4 senders to the end" \
	"some 4" "$(some $((rx1 - rx0))) $senders"
check_eq "everything deleted last: no job, no memory held" "0 0" \
	"$(netagg_in sw -j show | jq -r '"\(.namespace.num_jobs) \(.namespace.mem_used)"')"

# A namespace deleted with what the fuzzer made in it, traffic flowing.
setup_ns fz
ip netns exec fz timeout 5 "$NLFUZZ" --spec "$SPEC" --count 1000000 --config-pct 60 -j \
	>"$TEST_TMP/ns" 2>"$TEST_TMP/ns.err"
seed ns
check "a namespace deleted after 5 s of fuzzing" ip netns del fz
check "... the others still answer" netagg_in sw show

# The module unloaded and loaded again under a running fuzzer.
traffic
ip netns exec sw "$NLFUZZ" --spec "$SPEC" --count 40000 --check-every 500 -j \
	>"$TEST_TMP/mod" 2>"$TEST_TMP/mod.err" &
fuzzer=$!
sleep 2
unloaded=no
for i in $(seq 50); do
	rmmod netagg 2>/dev/null && { unloaded=yes; break; }
	sleep 0.1
done
sleep 1
module_load
wait "$fuzzer"
rc=$?
stop_traffic
seed mod
check_eq "the module unloaded and loaded again under the fuzzer" yes "$unloaded"
check_eq "... every message sent answered, the family found again (exit $rc)" \
	"{\"no_reason\":0,\"no_answer\":0,\"inconsistent\":0} some" \
	"$(jq -c '{no_reason, no_answer, inconsistent}' "$TEST_TMP/mod") \
$(some "$(jq .family_absent "$TEST_TMP/mod")")"

ktap_finish

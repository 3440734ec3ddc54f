#!/bin/bash
# How allreduce time degrades with packet loss (make bench-loss runs it in
# the VM). Four workers behind one switch, as in the demo; netem drops the
# same fraction of packets on every link in both directions. Each loss rate
# runs REPS allreduces of COUNT float32 per worker, on a job of TREES trees
# (1; make demo's jobs have 4); the table gives the median time of the
# slowest worker, its ratio to the no-loss time measured in the same run,
# and the retransmissions and node resends (on every tree) per allreduce.
# Figures from an emulated (TCG) VM: compare ratios, not absolute times.
#
#   w1..w4 (10.0.N.1) --- sw (10.0.N.254), netem loss on v0 and sN
set -uo pipefail
source "$(dirname "$0")/../../tests/lib.sh"
trap 'cleanup_ns; module_unload' EXIT

count=${COUNT:-262144}		# 1 MiB of float32 per worker
trees=${TREES:-1}		# of the job, all rooted on sw
reps=${REPS:-3}
rates=(${RATES:-0 0.1 1 2 5 10})
out=${OUT:-$NETAGG_ROOT/tests/out/bench-loss.md}
[[ $trees =~ ^([1-9]|[1-5][0-9]|6[0-4])$ ]] ||
	{ echo "bench-loss: TREES must be 1 to 64, not '$trees'" >&2; exit 2; }
mkdir -p "$(dirname "$out")"

modprobe sch_netem || { echo "bench-loss: no sch_netem module" >&2; exit 1; }
module_load
topo_star 4
netagg_in sw job add 7 window 64
for t in $(seq 0 $((trees - 1))); do
	netagg_in sw tree add job 7 tree "$t" role root \
		child 10.0.1.1 child 10.0.2.1 child 10.0.3.1 child 10.0.4.1
done

# node_resent: what sw has resent so far, on every tree of the job.
node_resent() {
	netagg_in sw -j stats | jq '[.jobs[] | select(.jid == 7) | .trees[].stats.resent] | add'
}

# one ROUND: seconds of the slowest worker and retransmissions, or "fail".
round=0
one() {
	local i t pids=() rc=0 args
	for i in 1 2 3 4; do
		args=()
		for t in $(seq 0 $((trees - 1))); do args+=(--tree "$t=10.0.$i.254"); done
		timeout 300 ip netns exec "w$i" "$NETAGG_ALLREDUCE" --job 7 "${args[@]}" \
			--rank $((i - 1)) --workers 4 --count "$count" --round "$1" \
			--timeout-ms 20000 ${RTO_MIN:+--rto-min-ms "$RTO_MIN"} -j >"$TEST_TMP/b.$i" 2>/dev/null &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	[ $rc -eq 0 ] || { echo fail; return; }
	cat "$TEST_TMP"/b.[1-4] | jq -rs '"\([.[].seconds] | max) \([.[].retransmits] | add)"'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

{
	echo "# allreduce time against packet loss"
	echo
	echo "4 workers, 1 switch, $trees tree(s), $((count * 4 / 1024)) KiB of float32 each, median of $reps," \
		"kernel $(uname -r), $(nproc) vCPUs (QEMU TCG)."
	echo
	echo "| loss each way | time (s) | vs 0% | retransmits / allreduce | node resends / allreduce | failed |"
	echo "|---|---|---|---|---|---|"
} >"$out"
base=
for rate in "${rates[@]}"; do
	if [ "$rate" = 0 ]; then netem_star 4 none; else netem_star 4 loss "$rate%"; fi
	: >"$TEST_TMP/times"
	: >"$TEST_TMP/rtx"
	failed=0
	r0=$(node_resent)
	for _ in $(seq "$reps"); do
		round=$((round + 1))
		res=$(one "$round")
		if [ "$res" = fail ]; then
			failed=$((failed + 1))
			continue
		fi
		echo "${res% *}" >>"$TEST_TMP/times"
		echo "${res#* }" >>"$TEST_TMP/rtx"
	done
	resent=$(( $(node_resent) - r0 ))
	t=$(median <"$TEST_TMP/times")
	[ -n "$base" ] || base=$t
	ratio=$(awk -v t="${t:-0}" -v b="${base:-0}" 'BEGIN { if (b > 0 && t > 0) printf "%.2f", t / b; else print "-" }')
	rtx=$(awk '{ s += $1 } END { if (NR) printf "%.0f", s / NR; else print "-" }' "$TEST_TMP/rtx")
	printf '| %s%% | %s | %s | %s | %s | %d of %d |\n' "$rate" "${t:--}" "$ratio" "$rtx" \
		"$(( resent / reps ))" "$failed" "$reps" >>"$out"
done
netem_star 4 none
cat "$out"

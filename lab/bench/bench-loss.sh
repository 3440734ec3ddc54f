#!/bin/bash
# How allreduce time degrades with packet loss (make bench-loss runs it in
# the VM). Four workers behind one switch, as in the demo; netem drops the
# same fraction of packets on every link in both directions. Each loss rate
# starts REPS runs of netagg-allreduce, each a join and ITERS allreduces of
# COUNT float32 per worker, on a job of TREES trees (1; make demo's jobs
# have 4). A run's first allreduce starts with no round-trip estimate (and
# a worker whose join result was lost still joining); the later ones are a
# training loop's steady state. The table gives, for the join, the first
# allreduce and the later ones, the median time of the slowest worker and
# the allreduces' ratio to the no-loss time measured in the same run; the
# retransmissions and node resends (on every tree) per allreduce.
# Figures from an emulated (TCG) VM: compare ratios, not absolute times.
# netem drops a socket buffer whole, and a super-packet (up to 44 chunks)
# is one: with PLAIN=1 the workers send plain packets (--plain), so each
# chunk is lost on its own, as a wire loses packets, rather than in runs.

#
#   w1..w4 (10.0.N.1) --- sw (10.0.N.254), netem loss on v0 and sN
set -uo pipefail
source "$(dirname "$0")/../../tests/lib.sh"
trap 'cleanup_ns; module_unload' EXIT

count=${COUNT:-262144}		# 1 MiB of float32 per worker
trees=${TREES:-1}		# of the job, all rooted on sw
reps=${REPS:-3}
iters=${ITERS:-5}
plain=${PLAIN:-0}
rates=(${RATES:-0 0.1 1 2 5 10})
out=${OUT:-$NETAGG_ROOT/tests/out/bench-loss.md}
[[ $trees =~ ^([1-9]|[1-5][0-9]|6[0-4])$ ]] ||
	{ echo "bench-loss: TREES must be 1 to 64, not '$trees'" >&2; exit 2; }
[[ $iters =~ ^([2-9]|[1-9][0-9])$ ]] ||
	{ echo "bench-loss: ITERS must be 2 to 99, not '$iters'" >&2; exit 2; }
[[ $plain =~ ^[01]$ ]] || { echo "bench-loss: PLAIN must be 0 or 1, not '$plain'" >&2; exit 2; }
plain_args=() packets="super-packets (netem drops one whole)"
[ "$plain" = 0 ] || plain_args=(--plain) packets="plain packets (netem drops each on its own)"
mkdir -p "$(dirname "$out")"

modprobe sch_netem || { echo "bench-loss: no sch_netem module" >&2; exit 1; }
module_load
topo_star 4
netagg_in sw job add 7 window 64
for t in $(seq 0 $((trees - 1))); do
	netagg_in sw tree add job 7 tree "$t" role root \
		child 10.0.1.1 child 10.0.2.1 child 10.0.3.1 child 10.0.4.1
done

# one ROUND: a run from ROUND on, as "retransmits join first later...":
# the retransmissions of its allreduces, then the slowest worker's seconds
# for the join and for each allreduce; or "fail".
round=1
one() {
	local i pids=() rc=0 args
	for i in 1 2 3 4; do
		mapfile -t args < <(star_trees "$trees" "$i")
		timeout 300 ip netns exec "w$i" "$NETAGG_ALLREDUCE" --job 7 "${args[@]}" \
			--rank $((i - 1)) --workers 4 --count "$count" --round "$1" --iterations "$iters" \
			--timeout-ms 20000 ${RTO_MIN:+--rto-min-ms "$RTO_MIN"} "${plain_args[@]}" \
			-j >"$TEST_TMP/b.$i" 2>/dev/null &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	[ $rc -eq 0 ] || { echo fail; return; }
	cat "$TEST_TMP"/b.[1-4] | jq -rs '([.[].retransmits] | add) as $r |
		([.[].join_seconds] | max) as $j | [.[].times] | transpose | map(max) |
		"\($r) \($j) \(join(" "))"'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# ratio T BASE: T / BASE to two places, or "-".
ratio() {
	awk -v t="${1:-0}" -v b="${2:-0}" 'BEGIN { if (b > 0 && t > 0) printf "%.2f", t / b; else print "-" }'
}

{
	echo "# allreduce time against packet loss"
	echo
	echo "4 workers, 1 switch, $trees tree(s), $((count * 4 / 1024)) KiB of float32 each" \
		"in $packets," \
		"median of $reps runs of a join and $iters allreduces (later: the allreduces" \
		"after the first, $((reps * (iters - 1))) in all), kernel $(uname -r), $(nproc) vCPUs (QEMU TCG)."
	echo
	echo "| loss each way | join (s) | first allreduce (s) | vs 0% | later allreduces (s) | vs 0% |" \
		"retransmits / allreduce | node resends / allreduce | failed runs |"
	echo "|---|---|---|---|---|---|---|---|---|"
} >"$out"
base_first= base_later=
for rate in "${rates[@]}"; do
	if [ "$rate" = 0 ]; then netem_star 4 none; else netem_star 4 loss "$rate%"; fi
	: >"$TEST_TMP/join"
	: >"$TEST_TMP/first"
	: >"$TEST_TMP/later"
	: >"$TEST_TMP/rtx"
	failed=0
	r0=$(counter sw trees 7 resent)
	for _ in $(seq "$reps"); do
		res=$(one "$round")
		round=$((round + iters))
		if [ "$res" = fail ]; then
			failed=$((failed + 1))
			continue
		fi
		read -r rtx join first later <<<"$res"
		echo "$rtx" >>"$TEST_TMP/rtx"
		echo "$join" >>"$TEST_TMP/join"
		echo "$first" >>"$TEST_TMP/first"
		tr ' ' '\n' <<<"$later" >>"$TEST_TMP/later"
	done
	resent=$(( $(counter sw trees 7 resent) - r0 ))
	join=$(median <"$TEST_TMP/join")
	first=$(median <"$TEST_TMP/first")
	later=$(median <"$TEST_TMP/later")
	[ -n "$base_first" ] || base_first=$first base_later=$later
	rtx=$(awk -v n="$iters" '{ s += $1 } END { if (NR) printf "%.0f", s / NR / n; else print "-" }' \
		"$TEST_TMP/rtx")
	printf '| %s%% | %s | %s | %s | %s | %s | %s | %s | %d of %d |\n' "$rate" "${join:--}" \
		"${first:--}" "$(ratio "$first" "$base_first")" "${later:--}" \
		"$(ratio "$later" "$base_later")" "$rtx" "$(( resent / (reps * iters) ))" \
		"$failed" "$reps" >>"$out"
done
netem_star 4 none
cat "$out"

#!/bin/bash
# The tree's children and parent changed while VIDs are in flight: no
# contribution is counted twice, none is missing from a result that does
# not say so, and every worker's buffer is exactly right or its call fails.
#
# Workers use netagg-allreduce --pattern bit: rank r contributes
# (i % 1000 + 1) << r, so each chunk of a result shows which ranks it sums.
# The tool checks every chunk it accepted (its own rank in it, each rank
# once, as many as the results said, the same ranks throughout unless it
# gave a quorum) and exits 3 if the library reported success with a wrong
# buffer: that must never happen. Exit 1 is a failed call, with its reason.
# The workers' timeouts and the waits are lib.sh's scaled: on the debug
# kernel, a removed worker timed out before the change it was to see, and
# no call of section B came through in 1.5 s.
#
#   w1 10.0.1.1 --+                       +-- 10.9.0.254 up  (a root above sw)
#   w2 10.0.2.1 --+                       |
#   w3 10.0.3.1 --+-- sw 10.0.N.254 ------+
#   w4 10.0.4.1 --+   10.9.0.1, 10.9.1.1  |
#   w5 10.0.5.1 --+                       +-- 10.9.1.254 up2 (another root)
#
# sw is the root of jobs 20-24 and 40 (w5 floods job 22 for load), and the
# aggregator of jobs 30 and 31 under up, which waits for a child that never
# sends (10.9.0.77) until it is removed: meanwhile sw's sums sit sent up.
# Job 31 then moves to up2.
source "$(dirname "$0")/lib.sh"
require_root
trap 'stop_flood; cleanup_ns; module_unload' EXIT

EPP=362		# elements a 1500-byte packet carries
module_load
topo_star 5
setup_ns up up2
for u in 0 1; do
	ns=$([ $u = 0 ] && echo up || echo up2)
	ip link add "u$u" netns sw type veth peer name d0 netns "$ns"
	ip -n sw addr add "10.9.$u.1/24" dev "u$u"
	ip -n "$ns" addr add "10.9.$u.254/24" dev d0
	ip -n sw link set "u$u" up
	ip -n "$ns" link set d0 up
done

# start NAME I RANK JOB ROUND ARGS...: netagg-allreduce --pattern bit on wI,
# sending to sw, in the background, without joining (members change under
# it, on purpose); after wait_all, outcome tells how it ended.
pids=()
start() {
	local name=$1 i=$2 rank=$3 job=$4 round=$5
	shift 5
	rm -f "$TEST_TMP/$name.rc"
	(
		ip netns exec "w$i" timeout "$(scaled 120)" "$NETAGG_ALLREDUCE" --job "$job" \
			--tree "0=10.0.$i.254" --rank "$rank" --round "$round" --no-join \
			--pattern bit --quiet "$@" >"$TEST_TMP/$name.out" 2>&1
		echo $? >"$TEST_TMP/$name.rc"
	) &
	pids+=($!)
}
# wait_all: wait for every worker started (not in a subshell: it would not
# wait for its parent's children).
wait_all() {
	wait "${pids[@]}"
	pids=()
}
# outcome NAME...: how each ended: ok, EREMOTEIO or ETIMEDOUT (failed, and
# why), WRONG (exit 3: success with a wrong buffer), or its exit code.
outcome() {
	local name rc out=()
	for name in "$@"; do
		rc=$(cat "$TEST_TMP/$name.rc" 2>/dev/null)
		case $rc in
		0) out+=(ok) ;;
		1) if grep -q 'Remote I/O error' "$TEST_TMP/$name.out"; then
			out+=(EREMOTEIO)
		   elif grep -q 'Connection timed out' "$TEST_TMP/$name.out"; then
			out+=(ETIMEDOUT)
		   else
			out+=("failed:$(tail -n 1 "$TEST_TMP/$name.out")")
		   fi ;;
		3) out+=(WRONG) ;;
		*) out+=("exit$rc") ;;
		esac
	done
	echo "${out[*]}"
}
# bits NS JOB: the tree's children as addr:bit, and whether it is regrouped.
bits() {
	netagg_in "$1" -j show | jq -r ".jobs[] | select(.jid == $2) | .trees[0] |
		([.children[] | \"\(.addr):\(.bit)\"] | join(\" \")) + \" regrouped=\(.regrouped)\""
}
adds_up() {
	netagg_in sw -j stats | jq -e "[.jobs[] | select(.jid == $1) | .trees[].stats |
		.rx == .aggregated + .duplicate + .results_rx + .probed +
		([to_entries[] | select(.key | startswith(\"drop_\")) | .value] | add)] | all" >/dev/null
}
flood_pid=
stop_flood() {
	[ -n "$flood_pid" ] || return 0
	touch "$TEST_TMP/stop"
	wait "$flood_pid" 2>/dev/null
	flood_pid=
}

ktap_plan 20

# A. A child swapped for another while VIDs are in flight: w1 and w3 have
# sent all 40 VIDs, w2 none, when w3 is replaced by w4. The slots hold w3's
# contributions, so w4 must not take w3's bit (it would be taken for having
# contributed them); the slots then sum w1, w3, w2 and w4, four, and the
# round is regrouped: no one may take that for the sum of three.
netagg_in sw job add 20
netagg_in sw tree add job 20 tree 0 role root child 10.0.1.1 child 10.0.2.1 child 10.0.3.1
r=$(next_round 1)
start a1 1 0 20 "$r" --workers 3 --count $((40 * EPP)) --timeout-ms "$(scaled 15000)"
# w3's own timeout comes first: before the node's silence to it (not a
# child, it gets no answer) fails it as unreachable, both stretched alike.
start a3 3 2 20 "$r" --workers 3 --count $((40 * EPP)) --timeout-ms "$(scaled 4000)" \
	--node-timeout-ms "$(scaled 10000)"
wait_counter -t "$(scaled 20)" 80 sw tree 20 0 aggregated >/dev/null
netagg_in sw tree set job 20 tree 0 child 10.0.1.1 child 10.0.2.1 child 10.0.4.1
check_eq "swap in flight: the new child takes a bit no slot holds, the round is regrouped" \
	"10.0.1.1:0 10.0.2.1:1 10.0.4.1:3 regrouped=true" "$(bits sw 20)"
start a2 2 1 20 "$r" --workers 3 --count $((40 * EPP)) --timeout-ms "$(scaled 15000)"
start a4 4 3 20 "$r" --workers 3 --count $((40 * EPP)) --timeout-ms "$(scaled 15000)"
wait_all
check_eq "swap in flight: w1 w2 w4 refuse the four-worker results, w3 (removed) times out" \
	"EREMOTEIO EREMOTEIO EREMOTEIO ETIMEDOUT" "$(outcome a1 a2 a4 a3)"
check_eq "swap in flight: every VID summed the four once; w3's later packets are not a child's" \
	"120 160 yes" "$(counter sw tree 20 0 fanned_out) $(counter sw tree 20 0 aggregated) \
$([ "$(counter sw tree 20 0 drop_not_child)" -gt 0 ] && echo yes)"

# B. Many times under load: at a different moment of a long allreduce
# each time, the third child is swapped between w3 and w4 (the new one
# joins the allreduce; it cannot catch up with VIDs already complete, so
# that round times out), or removed (the others' results then sum two: they
# refuse them), with a reset of the tree, a tree deleted and added again,
# or the job deleted and added again mixed in; w5 floods job 22 meanwhile.
# Whatever the timing, a worker's call either fails or gives an exact
# buffer.
netagg_in sw job add 22
netagg_in sw tree add job 22 tree 0 role root child 10.0.5.1
ip netns exec w5 timeout 600 bash -c '
	n=0
	while [ ! -e "$3/stop" ]; do
		"$1" --dst "$2" --job 22 --vid 0 --vids 256 --count 64 --round $((n++ % 65536)) >/dev/null 2>&1
	done' _ "$NETAGG_SEND" 10.0.5.254 "$TEST_TMP" &
flood_pid=$!
job21() {
	netagg_in sw job add 21 2>/dev/null
	netagg_in sw tree add job 21 tree 0 role root child 10.0.1.1 child 10.0.2.1 child "10.0.$1.1"
}
job21 3
x=3 y=4 outcomes=() regrouped=0
# Plain packets: a call then lasts the second or so in which the changes
# below land (super-packets would finish most before the first).
for cycle in $(seq 24); do
	r=$(next_round 1)
	for i in 1 2 $x; do
		start "b$i" "$i" $((i - 1)) 21 "$r" --workers 3 --count 500000 --timeout-ms "$(scaled 1500)" --plain
	done
	# Mostly within the calls; every sixth cycle after them (calls come
	# through: "no call gave a wrong buffer" would hold of none).
	if [ $((cycle % 6)) = 5 ]; then sleep "$(scaled 5)"; else sleep "0.$((cycle % 6))"; fi
	case $((cycle % 5)) in
	0)	netagg_in sw tree set job 21 tree 0 child 10.0.1.1 child 10.0.2.1 child "10.0.$y.1" ;;
	1)	netagg_in sw tree set job 21 tree 0 child 10.0.1.1 child 10.0.2.1 ;;
	2)	netagg_in sw tree set job 21 tree 0 child 10.0.1.1 child 10.0.2.1 child "10.0.$y.1"
		netagg_in sw reset job 21 tree 0 ;;
	3)	netagg_in sw tree del job 21 tree 0
		job21 "$y" ;;
	4)	netagg_in sw job del 21
		job21 "$y" ;;
	esac
	[ $((cycle % 5)) = 1 ] ||
		start "b$y" "$y" $((y - 1)) 21 "$r" --workers 3 --count 500000 --timeout-ms "$(scaled 1500)" --plain
	wait_all
	outcomes+=($(outcome b1 b2 "b$x"))
	[ $((cycle % 5)) = 1 ] || outcomes+=($(outcome "b$y"))
	regrouped=$((regrouped + $(counter sw tree 21 0 regrouped)))
	# Between rounds: the child that left comes back as the third.
	[ $((cycle % 5)) = 1 ] &&
		netagg_in sw tree set job 21 tree 0 child 10.0.1.1 child 10.0.2.1 child "10.0.$y.1"
	t=$x x=$y y=$t
done
stop_flood
check_eq "24 changes under load: no call succeeded with a wrong buffer, none hung" \
	"0 0" "$(printf '%s\n' "${outcomes[@]}" | grep -c WRONG) \
$(printf '%s\n' "${outcomes[@]}" | grep -vcE '^(ok|EREMOTEIO|ETIMEDOUT)$')"
echo "# 24 changes: $regrouped rounds regrouped; calls: $(printf '%s\n' "${outcomes[@]}" |
	sort | uniq -c | awk '{printf "%s %s, ", $1, $2}')"
check_eq "the changes hit rounds in flight (rounds regrouped, results refused), calls came through" \
	"yes yes yes" "$([ "$regrouped" -gt 0 ] && echo yes) \
$(printf '%s\n' "${outcomes[@]}" | grep -q '^EREMOTEIO$' && echo yes) \
$(printf '%s\n' "${outcomes[@]}" | grep -q '^ok$' && echo yes)"
r=$(next_round 2)
for i in 1 2 $x; do
	start "c$i" "$i" $((i - 1)) 21 "$r" --workers 3 --iterations 2 --count 20000
done
wait_all
check_eq "after the churn the tree sums exactly" "ok ok ok" "$(outcome c1 c2 "c$x")"
check "the tree's counters add up" adds_up 21

# C. A child removed and added back while slots hold its contributions
# gets its bit back: the same contribution is never counted twice, as it
# would be under a new bit when it is sent again. w1 and w3 have sent all
# 10 VIDs; w3 is removed, w4 added, w3 added again; then w2 and w4 send.
netagg_in sw job add 23
netagg_in sw tree add job 23 tree 0 role root child 10.0.1.1 child 10.0.2.1 child 10.0.3.1
r=$(next_round 1)
for i in 1 3; do
	start "d$i" "$i" $((i - 1)) 23 "$r" --workers 4 --quorum 3 --count $((10 * EPP)) --timeout-ms "$(scaled 15000)"
done
wait_counter -t "$(scaled 20)" 20 sw tree 23 0 aggregated >/dev/null
netagg_in sw tree set job 23 tree 0 child 10.0.1.1 child 10.0.2.1
netagg_in sw tree set job 23 tree 0 child 10.0.1.1 child 10.0.2.1 child 10.0.4.1
netagg_in sw tree set job 23 tree 0 child 10.0.1.1 child 10.0.2.1 child 10.0.3.1 child 10.0.4.1
check_eq "re-added while its VIDs are in flight, w3 has its bit back; w4 took a free one" \
	"10.0.1.1:0 10.0.2.1:1 10.0.3.1:2 10.0.4.1:3 regrouped=true" "$(bits sw 23)"
for i in 2 4; do
	start "d$i" "$i" $((i - 1)) 23 "$r" --workers 4 --quorum 3 --count $((10 * EPP)) --timeout-ms "$(scaled 15000)"
done
wait_all
check_eq "then every VID sums the four once, and all four get it" \
	"ok ok ok ok 40" "$(outcome d1 d2 d3 d4) $(counter sw tree 23 0 aggregated)"

# D. Fewer or more contributors than the worker expects. w3 never sends; the
# operator removes it: the slots complete with two. A worker that expects
# three fails; one with a quorum of two takes the sums of two; a worker
# told two while three contribute fails whatever its quorum.
netagg_in sw job add 24
netagg_in sw tree add job 24 tree 0 role root child 10.0.1.1 child 10.0.2.1 child 10.0.3.1
r=$(next_round 3)
start e1 1 0 24 "$r" --workers 3 --count $((10 * EPP)) --timeout-ms "$(scaled 15000)"
start e2 2 1 24 "$r" --workers 3 --count $((10 * EPP)) --timeout-ms "$(scaled 15000)"
wait_counter -t "$(scaled 20)" 20 sw tree 24 0 aggregated >/dev/null
netagg_in sw tree set job 24 tree 0 child 10.0.1.1 child 10.0.2.1
wait_all
check_eq "a dead worker removed: the sums of two are an error for workers expecting three" \
	"EREMOTEIO EREMOTEIO" "$(outcome e1 e2)"
start e1 1 0 24 $((r + 1)) --workers 3 --quorum 2 --count $((10 * EPP))
start e2 2 1 24 $((r + 1)) --workers 3 --quorum 2 --count $((10 * EPP))
wait_all
check_eq "with a quorum of two they are accepted, exact" "ok ok" "$(outcome e1 e2)"
netagg_in sw tree set job 24 tree 0 child 10.0.1.1 child 10.0.2.1 child 10.0.3.1
for i in 1 2 3; do
	start "e$i" "$i" $((i - 1)) 24 $((r + 2)) --workers 2 --quorum 1 --count $((10 * EPP))
done
wait_all
check_eq "results of three for workers told two are refused, quorum or not" \
	"EREMOTEIO EREMOTEIO EREMOTEIO" "$(outcome e1 e2 e3)"

# E. On an aggregator: w1 and w2 (window 10) have had VIDs 0-9 summed and
# sent up when w3 joins, and sends all 20. Results of 0-9 that the parent
# sends later do not have w3 in them: they go to w1 and w2 only.
netagg_in up job add 30
netagg_in up tree add job 30 tree 0 role root child 10.9.0.1 child 10.9.0.77
netagg_in sw job add 30
netagg_in sw tree add job 30 tree 0 role aggregator parent 10.9.0.254 child 10.0.1.1 child 10.0.2.1
r=$(next_round 1)
for i in 1 2; do
	start "f$i" "$i" $((i - 1)) 30 "$r" --workers 3 --quorum 2 --window 10 \
		--count $((20 * EPP)) --timeout-ms "$(scaled 20000)"
done
wait_counter -t "$(scaled 20)" 10 sw tree 30 0 emitted_up >/dev/null
netagg_in sw tree set job 30 tree 0 child 10.0.1.1 child 10.0.2.1 child 10.0.3.1
start f3 3 2 30 "$r" --workers 3 --quorum 2 --count $((20 * EPP)) --timeout-ms "$(scaled 4000)"
wait_counter -t "$(scaled 20)" 30 sw tree 30 0 aggregated >/dev/null
netagg_in up tree set job 30 tree 0 child 10.9.0.1
wait_all
check_eq "aggregator: w1 and w2 get every result; w3, in none of VIDs 0-9, gets none of them" \
	"ok ok ETIMEDOUT" "$(outcome f1 f2 f3)"
check_eq "aggregator: w3's contributions to VIDs already sent up were refused (drop_window)" \
	yes "$([ "$(counter sw tree 30 0 drop_window)" -ge 10 ] && echo yes)"

# The parent changed while sums sit sent up: the workers' retransmissions
# make sw send them again, to the new parent, which answers; results of the
# old one that come late are refused. The round is regrouped: a worker
# without a quorum fails, one with a quorum has the exact sum.
netagg_in up job add 31
netagg_in up tree add job 31 tree 0 role root child 10.9.0.1 child 10.9.0.77
netagg_in up2 job add 31
netagg_in up2 tree add job 31 tree 0 role root child 10.9.1.1
netagg_in sw job add 31
netagg_in sw tree add job 31 tree 0 role aggregator parent 10.9.0.254 child 10.0.1.1 child 10.0.2.1
r=$(next_round 1)
start g1 1 0 31 "$r" --workers 2 --window 10 --count $((20 * EPP)) --timeout-ms "$(scaled 20000)"
start g2 2 1 31 "$r" --workers 2 --quorum 1 --window 10 --count $((20 * EPP)) --timeout-ms "$(scaled 20000)"
wait_counter -t "$(scaled 20)" 10 sw tree 31 0 emitted_up >/dev/null
netagg_in sw tree set job 31 tree 0 parent 10.9.1.254
wait_all
check_eq "new parent: w1 (no quorum) refuses the regrouped round, w2 (quorum 1) has it exact" \
	"EREMOTEIO ok" "$(outcome g1 g2)"
check_eq "new parent: it summed every VID, 0-9 from sw's resends" \
	"20 yes" "$(counter up2 tree 31 0 aggregated) \
$([ "$(counter sw tree 31 0 resent)" -ge 10 ] && echo yes)"
netagg_in up tree set job 31 tree 0 child 10.9.0.1
check_eq "the old parent's results, once it sends them, are refused (drop_not_parent)" \
	10 "$(wait_counter -t "$(scaled 20)" 10 sw tree 31 0 drop_not_parent)"

# F. No bit free: 64 children, one of them with a contribution in flight,
# replaced by another address. Refused with the reason, nothing changed;
# after a reset of the tree, no slot holds the bit and the change is made.
kids=() kids2=()
for i in $(seq 64); do
	kids+=(child "10.8.$i.1")
	[ "$i" -lt 64 ] && kids2+=(child "10.8.$i.1")
done
kids2+=(child 10.8.65.1)
ip -n w1 addr add 10.8.64.1/32 dev v0
ip -n sw route add 10.8.0.0/16 dev s1
netagg_in sw job add 40
netagg_in sw tree add job 40 tree 0 role root "${kids[@]}"
ip netns exec w1 "$NETAGG_SEND" --src 10.8.64.1 --dst 10.0.1.254 --job 40 --round 1
wait_counter -t "$(scaled 20)" 1 sw tree 40 0 aggregated >/dev/null
before=$(netagg_in sw -j show | jq -c '.jobs[] | select(.jid == 40)')
check_err "64 children: replacing one whose bit a VID in flight holds is refused" \
	"no child bit free: removed children's are held by VIDs in flight or kept (reset the tree to free them)" \
	netagg_in sw tree set job 40 tree 0 "${kids2[@]}"
check_eq "and changes nothing" "$before" "$(netagg_in sw -j show | jq -c '.jobs[] | select(.jid == 40)')"
netagg_in sw reset job 40 tree 0
check_eq "after a reset the bit is free: the new child takes it" "10.8.65.1:63" \
	"$(netagg_in sw tree set job 40 tree 0 "${kids2[@]}" && bits sw 40 | tr ' ' '\n' | grep 10.8.65.1)"

ktap_finish

#!/bin/bash
# Bitwise-reproducible sums: every node sums a VID's
# contributions in one documented order, its children by configured IPv4
# address as a number (10.0.9.2 < 10.0.10.1), then port (none first), left
# to right in float32; float16 and bfloat16 widened exactly and rounded
# once (to nearest even) when the VID completes, by each aggregator before
# it sends up; the root of an op avg job divides the float32 sum by the
# contributors before rounding. So the same buffers give the same bits
# whatever order their packets come in.
#
# The same random buffers (float32, float16, bfloat16 of magnitudes 1e-3 to
# 1e3, both signs, scaled per rank, with large values that cancel: the
# order of addition changes the rounding, checked here) are allreduced
# RUNS times while the arrival order is varied on purpose between runs
# (netem on every link: run 0 none; 1 delays staggered by host; 2 the
# same reversed, 10% duplicates; 3 the middle host 8 +- 4 ms late, the
# others reordered, 1% loss; 4 another host late, jitter, 1% loss, 5%
# duplicates), and plain packets or super-packets by run (all super, all
# plain, even ranks plain, odd ranks plain, all super). Every result must
# be bitwise equal across runs and workers, and equal to the sum in the
# documented order that tests/python/repro.py computes with numpy
# (bfloat16 rounded by hand). int32 rides along: order-free, it must
# pass on any module. On the module that summed in arrival order (992cd23)
# the "bitwise equal" and "documented order" cases of every float job
# fail, thousands of elements apart, and the rest pass.
#
# A process a worker (repro.py worker) makes every call of every run, a
# new netagg.Worker each (round RUN + 1, not joining: the quorum's
# silent worker could not), and writes each result's bytes to
# $TEST_TMP/{star,racks}/CONFIG.JID.RUN.MEMBER; repro.py check judges
# them all, its verdicts kept in tests/out/netagg_repro/. About 2.5
# minutes in the TCG VM.
#
# Part 1, one level: sw is the root of every tree. hd runs two workers,
# children by port; children are configured in neither address, string,
# byte-swapped nor rank order.
#
#      ha 10.0.2.5    hb 10.0.10.1    hc 10.0.3.20    hd 10.0.9.2:7170, :7425
#            \             |               |             /
#             +------------+------ sw -----+------------+
#                  10.0.2.254, 10.0.10.254, 10.0.3.254, 10.0.9.254
#
#   config star: jobs 1-5 (f32, f16, bf16 sums, f32 avg, i32 sum), tree 0:
#     the five workers (sum order ha, hc, hd:7170, hd:7425, hb)
#   config quorum: jobs 11-14 (f32, f16, bf16 sums, f16 avg), tree 0: ha,
#     hb, hc, hd:7425, quorum 3; hb never sends: every VID sums ha, hc,
#     hd:7425, and the workers accept results of 3 of their 4; keyed
#
# Part 2, two levels: the racks of netagg_twolevel.sh (lib.sh topo_racks).
#
#   w1 w2 w3 (10.1.0.1-3) --br-- agg1 10.1.0.254 | 10.9.1.1 --- 10.9.1.254 \
#                                                                        root
#   w4 w5 w6 (10.2.0.4-6) --br-- agg2 10.2.0.254 | 10.9.2.1 --- 10.9.2.254 /
#
#   config twolevel: jobs 21-23 (f32, f16, bf16), tree 0: agg1 and agg2
#     aggregators under root; keyed
#   config trees: jobs 31-33, the data split over three trees: tree 0 as
#     above; tree 1 rooted at agg2 (its workers and agg1, an aggregator
#     under it); tree 2 rooted at root with the six workers as children
#     (the aggregators forward it)
source "$(dirname "$0")/lib.sh"
require_root
PY=/usr/bin/python3
REPRO=$NETAGG_ROOT/tests/python/repro.py
export PYTHONPATH=$NETAGG_ROOT/python
WPIDS=()
stop_workers()
{
	local p
	for p in "${WPIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${WPIDS[@]}"; do wait "$p" 2>/dev/null; done
	WPIDS=()
}
trap 'stop_workers; cleanup_ns; module_unload' EXIT
[ -x "$PY" ] && "$PY" -c 'import numpy' 2>/dev/null ||
	fail_setup "python3 with numpy missing: run scripts/deps.sh"

ELEMENTS=65536	# a buffer, every dtype: 182 float32 chunks, 91 of halves
RUNS=5
PLAN=$TEST_TMP/plan.json
# The judges' verdicts stay for a look after the run.
REPORT=$NETAGG_ROOT/tests/out/netagg_repro
rm -rf "$REPORT"
mkdir -p "$REPORT" 2>/dev/null || REPORT=$TEST_TMP

# Trees: child (as configured, in this order) -> worker, or -> the
# aggregator's tree.
STAR_T='{"10.0.9.2:7425": "hd1", "10.0.10.1": "hb", "10.0.2.5": "ha",
	"10.0.9.2:7170": "hd0", "10.0.3.20": "hc"}'
QUORUM_T='{"10.0.3.20": "hc", "10.0.9.2:7425": "hd1", "10.0.10.1": "hb", "10.0.2.5": "ha"}'
RK_T0='{"10.9.2.1": {"10.2.0.6": "w6", "10.2.0.4": "w4", "10.2.0.5": "w5"},
	"10.9.1.1": {"10.1.0.3": "w3", "10.1.0.1": "w1", "10.1.0.2": "w2"}}'
RK_T1='{"10.2.0.5": "w5", "10.9.1.1": {"10.1.0.2": "w2", "10.1.0.3": "w3", "10.1.0.1": "w1"},
	"10.2.0.6": "w6", "10.2.0.4": "w4"}'
RK_T2='{"10.2.0.6": "w6", "10.1.0.2": "w2", "10.2.0.4": "w4", "10.1.0.3": "w3",
	"10.2.0.5": "w5", "10.1.0.1": "w1"}'
rk_dst() { echo "\"w$1\": [\"10.$2.0.254\"$3]"; }
# A key of its own for each keyed configuration (quorum, twolevel): their
# sums must be the same bits as unkeyed ones.
key_hex() { head -c 32 /dev/urandom | od -An -tx1 -v | tr -d ' \n'; }
cat >"$PLAN" <<EOF
{"elements": $ELEMENTS, "runs": $RUNS, "configs": {
 "star": {"ranks": ["hc", "hb", "hd1", "ha", "hd0"], "silent": [], "quorum": 0,
	"ports": {"hd0": 7170, "hd1": 7425},
	"jobs": [[1, "float32", "sum"], [2, "float16", "sum"], [3, "bfloat16", "sum"],
		 [4, "float32", "avg"], [5, "int32", "sum"]],
	"trees": [[0, $STAR_T]],
	"dst": {"ha": ["10.0.2.254"], "hb": ["10.0.10.254"], "hc": ["10.0.3.254"],
		"hd0": ["10.0.9.254"], "hd1": ["10.0.9.254"]}},
 "quorum": {"ranks": ["hd1", "hb", "ha", "hc"], "silent": ["hb"], "quorum": 3,
	"ports": {"hd1": 7425}, "key": "$(key_hex)",
	"jobs": [[11, "float32", "sum"], [12, "float16", "sum"], [13, "bfloat16", "sum"],
		 [14, "float16", "avg"]],
	"trees": [[0, $QUORUM_T]],
	"dst": {"ha": ["10.0.2.254"], "hb": ["10.0.10.254"], "hc": ["10.0.3.254"],
		"hd1": ["10.0.9.254"]}},
 "twolevel": {"ranks": ["w5", "w2", "w6", "w1", "w4", "w3"], "silent": [], "quorum": 0,
	"ports": {}, "key": "$(key_hex)",
	"jobs": [[21, "float32", "sum"], [22, "float16", "sum"], [23, "bfloat16", "sum"]],
	"trees": [[0, $RK_T0]],
	"dst": {$(rk_dst 1 1), $(rk_dst 2 1), $(rk_dst 3 1),
		$(rk_dst 4 2), $(rk_dst 5 2), $(rk_dst 6 2)}},
 "trees": {"ranks": ["w5", "w2", "w6", "w1", "w4", "w3"], "silent": [], "quorum": 0,
	"ports": {},
	"jobs": [[31, "float32", "sum"], [32, "float16", "sum"], [33, "bfloat16", "sum"]],
	"trees": [[0, $RK_T0], [1, $RK_T1], [2, $RK_T2]],
	"dst": {$(rk_dst 1 1 ', "10.1.0.254", "10.9.1.254"'),
		$(rk_dst 2 1 ', "10.1.0.254", "10.9.1.254"'),
		$(rk_dst 3 1 ', "10.1.0.254", "10.9.1.254"'),
		$(rk_dst 4 2 ', "10.2.0.254", "10.9.2.254"'),
		$(rk_dst 5 2 ', "10.2.0.254", "10.9.2.254"'),
		$(rk_dst 6 2 ', "10.2.0.254", "10.9.2.254"')}}
}}
EOF
jq -e . "$PLAN" >/dev/null || fail_setup "the plan is not JSON"
jobs=$(jq '[.configs[].jobs | length] | add' "$PLAN")

require_module sch_netem
module_load

# kids TREE [PATH]: "child ADDR" for each child of the tree (or of its
# aggregator at PATH), in the order written.
kids() { jq -r "${2:-.} | keys_unsorted[] | \"child\", ." <<<"$1"; }
# Each configuration's jobs ("JID DTYPE OP" a line), JIDs and quorum, read
# once (each jq is a process start, slow on an emulated CPU).
declare -A JOBS JIDS QUORUM
while read -r c jid dt op q; do
	JOBS[$c]+="$jid $dt $op"$'\n'
	JIDS[$c]+="$jid "
	QUORUM[$c]=$q
done <<<"$(jq -r '.configs | to_entries[] | .key as $c | .value.quorum as $q |
	.value.jobs[] | "\($c) \(.[0]) \(.[1]) \(.[2]) \($q)"' "$PLAN")"
jobs_of() { printf %s "${JOBS[$1]}"; }
jids() { echo ${JIDS[$1]}; }
short() { case $1 in float32) echo f32 ;; float16) echo f16 ;; bfloat16) echo bf16 ;; int32) echo i32 ;; esac; }
# add_jobs CONFIG NODE...: the configuration's jobs on each node, keyed if
# it has a key.
add_jobs()
{
	local c=$1 n jid dt op key=()
	shift
	if [ -n "$(jq -r ".configs.$c.key // empty" "$PLAN")" ]; then
		jq -r ".configs.$c.key" "$PLAN" >"$TEST_TMP/$c.key"
		key=(key "$TEST_TMP/$c.key")
	fi
	while read -r jid dt op; do
		for n in "$@"; do
			netagg_in "$n" job add "$jid" dtype "$(short "$dt")" op "$op" window 64 \
				"${key[@]}" || return 1
		done
	done <<<"$(jobs_of "$c")"
}

# netem_on NS DEV ARGS...: DEV's egress in NS impaired so (no ARGS: not).
netem_on()
{
	local ns=$1 dev=$2
	shift 2
	if [ $# -eq 0 ]; then
		tc -n "$ns" qdisc del dev "$dev" root 2>/dev/null
		return 0
	fi
	tc -n "$ns" qdisc replace dev "$dev" root netem "$@"
}
# run_netem RUN I N: the netem arguments of the I-th (from 0) of N hosts in
# RUN (both directions of its link), so that the order contributions
# arrive in changes from run to run.
run_netem()
{
	local run=$(($1 % 5)) i=$2 n=$3
	case $run in
	0) ;;
	1) [ "$i" -gt 0 ] && echo "delay $((3 * i))ms" ;;
	2) echo "delay $((3 * (n - 1 - i)))ms duplicate 10%" ;;
	3) if [ "$i" -eq $((n / 2)) ]; then echo "delay 8ms 4ms loss 1%"
	   else echo "delay 2ms reorder 25% 50% loss 1%"; fi ;;
	4) if [ "$i" -eq 1 ]; then echo "delay 6ms 1ms loss 1% duplicate 5%"
	   else echo "delay 1ms 1ms loss 1% duplicate 5%"; fi ;;
	esac
}

# drive DIR IMPAIR MEMBER...: RUNS runs of the workers started in DIR;
# before each, IMPAIR RUN sets the links (and says how), then go.RUN lets
# the workers go; waits at most 180 s for every member's record of it.
drive()
{
	local dir=$1 impair=$2 run m all
	shift 2
	for run in $(seq 0 $((RUNS - 1))); do
		"$impair" "$run" || { echo "run $run: netem refused"; return 1; }
		touch "$dir/go.$run"
		for _ in $(seq 1800); do
			all=1
			for m; do [ -e "$dir/done.$run.$m" ] || { all=0; break; }; done
			[ $all = 1 ] && break
			sleep 0.1
		done
		if [ $all = 0 ]; then
			echo "run $run: no record from $m within 180 s"
			cat "$dir"/*.log
			return 1
		fi
	done
}

# workers DIR CONFIGS MEMBER:NS...: the inputs of the configurations (a
# comma-separated list) drawn once, then a worker process each, for all
# RUNS runs.
workers()
{
	local dir=$1 mn
	shift
	rm -rf "$dir"
	mkdir -p "$dir"
	timeout 120 "$PY" "$REPRO" inputs "$PLAN" "$dir" ${1//,/ } >"$dir/inputs.log" 2>&1
	shift
	for mn; do
		timeout 900 ip netns exec "${mn#*:}" "$PY" "$REPRO" worker "$PLAN" "${mn%%:*}" "$dir" \
			>"$dir/${mn%%:*}.log" 2>&1 &
		WPIDS+=($!)
	done
}

# phase DESC DIR IMPAIR MEMBERS...: the runs, as a case; the workers then
# end (each exits non-zero if a call failed: the judge says which).
phase()
{
	local desc=$1 dir=$2 impair=$3 start=$SECONDS rc p
	shift 3
	drive "$dir" "$impair" "$@" >"$dir/drive.out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || stop_workers
	for p in "${WPIDS[@]}"; do wait "$p"; done
	WPIDS=()
	grep '^#' "$dir/drive.out"
	if [ $rc -eq 0 ]; then
		ktap_result ok "$desc"
		echo "# $RUNS runs in $((SECONDS - start)) s"
	else
		ktap_result fail "$desc" "$(grep -v '^#' "$dir/drive.out")"
	fi
}

# judge DIR CONFIG...: repro.py's verdicts, a JSON line each, in
# $DIR/verdicts (and the report directory), and as "WHAT CONFIG JID OK
# DETAIL" (tab-separated, - for no CONFIG or JID) in $DIR/verdicts.tsv.
judge()
{
	local dir=$1 start=$SECONDS
	shift
	timeout 300 "$PY" "$REPRO" check "$PLAN" "$dir" "$@" >"$dir/verdicts" 2>"$dir/verdicts.err"
	jq -r '[.what, (.config // "-"), (.jid // "-" | tostring), (.ok | tostring), .detail] | @tsv' \
		"$dir/verdicts" >"$dir/verdicts.tsv" 2>>"$dir/verdicts.err"
	cp "$dir/verdicts" "$REPORT/verdicts.$1.json" 2>/dev/null
	echo "# judged in $((SECONDS - start)) s"
}
# verdict DIR WHAT CONFIG JID DESC: the judge's verdict as a case; its
# detail below it, a line a clause.
verdict()
{
	local dir=$1 what=$2 c=$3 jid=$4 desc=$5 w cc j ok detail
	while IFS=$'\t' read -r w cc j ok detail; do
		[ "$w" = "$what" ] && [ "$cc" = "$c" ] && [ "$j" = "$jid" ] || continue
		if [ "$ok" = true ]; then
			ktap_result ok "$desc"
			[ "$what" = sensitive ] && printf '#   %s\n' "${detail//; /$'\n'#   }"
		else
			ktap_result fail "$desc" "${detail//; /$'\n'}"
		fi
		return
	done <"$dir/verdicts.tsv"
	ktap_result fail "$desc" "the judge gave no verdict:" "$(tail -5 "$dir/verdicts.err")"
}
# verdicts DIR CONFIG: a configuration's: its runs, its inputs, its jobs.
verdicts()
{
	local dir=$1 c=$2 jid dt op what
	what="every call succeeded, each result of exactly the workers that send"
	[ "${QUORUM[$c]}" != 0 ] &&
		what="every call succeeded, each result a partial one of exactly the 3 that send (accepted under the quorum: min = max contributors = 3, none late, none refused)"
	verdict "$dir" runs "$c" - "$c: $what; plain runs sent no super-packet, the others did"
	verdict "$dir" sensitive "$c" - \
		"$c: the inputs make the order matter (the documented order's sum differs from other orders' on many elements)"
	while read -r jid dt op; do
		verdict "$dir" identical "$c" "$jid" \
			"$c job $jid ($(short "$dt") $op): bitwise equal across $RUNS runs and every worker"
		verdict "$dir" reference "$c" "$jid" \
			"$c job $jid ($(short "$dt") $op): equal to the sum in the documented order"
	done <<<"$(jobs_of "$c")"
}
# tree_sum NS FIELD JID...: a tree counter summed over those jobs' trees.
tree_sum()
{
	local ns=$1 f=$2
	shift 2
	netagg_in "$ns" -j stats | jq --arg f "$f" --argjson j "[$(echo "$@" | tr ' ' ,)]" \
		'[.jobs[] | select(.jid as $x | any($j[]; . == $x)) | .trees[].stats[$f]] | add // 0'
}

# setup_case DESC FN: FN as a case, run in this shell (check's subshell
# would lose the names of the namespaces it makes, which cleanup removes).
setup_case()
{
	if "$2" >"$TEST_TMP/setup.out" 2>&1; then
		ktap_result ok "$1"
	else
		ktap_result fail "$1" "$(cat "$TEST_TMP/setup.out")"
	fi
}
# chunks DTYPE [keyed]: a buffer's chunks at MTU 1500 (362 float32, 724
# halves a packet; keyed, 8 bytes fewer: 360 and 720).
chunks()
{
	local e=362
	[ "${2:-}" = keyed ] && e=360
	[ "$1" = float16 ] || [ "$1" = bfloat16 ] && e=$((2 * e))
	echo $(( (ELEMENTS + e - 1) / e ))
}

ktap_plan $((15 + 2 * jobs))

# ---------------------------------------------------------------- part 1
STAR_HOSTS=(ha hb hc hd)
declare -A ADDR=([ha]=10.0.2.5 [hb]=10.0.10.1 [hc]=10.0.3.20 [hd]=10.0.9.2)
star_setup()
{
	local h a q star_kids quorum_kids
	star_kids=$(kids "$STAR_T")
	quorum_kids=$(kids "$QUORUM_T")
	setup_ns sw "${STAR_HOSTS[@]}" || return 1
	for h in "${STAR_HOSTS[@]}"; do
		a=${ADDR[$h]}
		ip link add v0 netns "$h" type veth peer name "s$h" netns sw || return 1
		ip -n "$h" addr add "$a/24" dev v0
		ip -n sw addr add "${a%.*}.254/24" dev "s$h"
		ip -n "$h" link set v0 up
		ip -n sw link set "s$h" up
		xdp_port sw "s$h" || return 1
	done
	add_jobs star sw && add_jobs quorum sw || return 1
	for q in $(jids star); do
		netagg_in sw tree add job "$q" tree 0 role root $star_kids || return 1
	done
	for q in $(jids quorum); do
		netagg_in sw tree add job "$q" tree 0 role root $quorum_kids quorum 3 ||
			return 1
	done
}
setup_case "one level: sw the root of jobs 1-5 (5 workers) and 11-14 (quorum 3 of 4), children out of order" \
	star_setup

# impair_star RUN: run_netem on both ends of each host's link.
impair_star()
{
	local i h args say=()
	for i in "${!STAR_HOSTS[@]}"; do
		h=${STAR_HOSTS[$i]}
		args=$(run_netem "$1" "$i" ${#STAR_HOSTS[@]})
		netem_on "$h" v0 $args && netem_on sw "s$h" $args || return 1
		say+=("$h: ${args:-none}")
	done
	echo "# run $1: $(IFS=,; echo "${say[*]}" | sed 's/,/, /g')"
}
D1=$TEST_TMP/star
workers "$D1" star,quorum ha:ha hb:hb hc:hc hd0:hd hd1:hd
phase "one level: $RUNS runs, each with its impairments and packet forms, to their end" \
	"$D1" impair_star ha hb hc hd0 hd1
for h in "${STAR_HOSTS[@]}"; do netem_on "$h" v0; netem_on sw "s$h"; done

judge "$D1" star quorum
verdict "$D1" selftest - - "the reference's roundings: bfloat16 by hand and numpy's float16, to nearest even (ties, overflow, NaN quiet)"
verdicts "$D1" star
verdicts "$D1" quorum
dup=$(tree_sum sw duplicate $(jids star) $(jids quorum))
part=$(tree_sum sw partial $(jids quorum))
late=$(tree_sum sw drop_late $(jids quorum))
rtx=$(jq -s '[.[] | select(.what == "runs") | .retransmits + .probes] | add // 0' "$D1/verdicts")
# Every VID of every quorum run.
want_part=0
while read -r jid dt op; do
	want_part=$((want_part + RUNS * $(chunks "$dt" keyed)))
done <<<"$(jobs_of quorum)"
check_eq "the order was varied: sw counted network duplicates, workers resent or probed; every quorum VID completed without hb, none late" \
	"duplicates=some resends=some partial=$want_part late=0" \
	"duplicates=$(some "$dup") resends=$(some "$rtx") partial=$part late=$late"
echo "# sw: $dup duplicates; workers: $rtx retransmissions and probes"
del_ns_all

# ---------------------------------------------------------------- part 2
racks_setup()
{
	local j k0 k01 k02 k1 k11 k2
	k0=$(kids "$RK_T0")
	k01=$(kids "$RK_T0" '.["10.9.1.1"]')
	k02=$(kids "$RK_T0" '.["10.9.2.1"]')
	k1=$(kids "$RK_T1")
	k11=$(kids "$RK_T1" '.["10.9.1.1"]')
	k2=$(kids "$RK_T2")
	topo_racks || return 1
	add_jobs twolevel root agg1 agg2 && add_jobs trees root agg1 agg2 || return 1
	for j in $(jids twolevel) $(jids trees); do
		netagg_in agg1 tree add job "$j" tree 0 role aggregator parent 10.9.1.254 $k01 &&
		netagg_in agg2 tree add job "$j" tree 0 role aggregator parent 10.9.2.254 $k02 &&
		netagg_in root tree add job "$j" tree 0 role root $k0 || return 1
	done
	for j in $(jids trees); do
		netagg_in agg2 tree add job "$j" tree 1 role root $k1 &&
		netagg_in agg1 tree add job "$j" tree 1 role aggregator parent 10.9.2.1 $k11 &&
		netagg_in root tree add job "$j" tree 2 role root $k2 || return 1
	done
}
setup_case "two levels: jobs 21-23 on tree 0 (agg1, agg2 under root), 31-33 on trees 0-2, children out of order" \
	racks_setup

# impair_racks RUN: run_netem on each worker's link, and on the
# aggregators' uplinks: agg1's 5 ms late in run 1, agg2's in run 2.
impair_racks()
{
	local w r args up say=()
	for w in 1 2 3 4 5 6; do
		r=$(rack_of "$w")
		args=$(run_netem "$1" $((w - 1)) 6)
		netem_on "w$w" v0 $args && netem_on "agg$r" "p$w" $args || return 1
		say+=("w$w: ${args:-none}")
	done
	for r in 1 2; do
		case $(($1 % 5)) in
		0) up= ;;
		1) up=$([ $r = 1 ] && echo "delay 5ms") ;;
		2) up="$([ $r = 2 ] && echo "delay 5ms ")duplicate 10%" ;;
		3) up="loss 1%" ;;
		4) up="delay 1ms 1ms loss 1% duplicate 5%" ;;
		esac
		netem_on "agg$r" u0 $up && netem_on root "d$r" $up || return 1
		say+=("agg$r up: ${up:-none}")
	done
	echo "# run $1: $(IFS=,; echo "${say[*]}" | sed 's/,/, /g')"
}
D2=$TEST_TMP/racks
workers "$D2" twolevel,trees w1:w1 w2:w2 w3:w3 w4:w4 w5:w5 w6:w6
phase "two levels: $RUNS runs, each with its impairments and packet forms, to their end" \
	"$D2" impair_racks w1 w2 w3 w4 w5 w6

judge "$D2" twolevel trees
verdicts "$D2" twolevel
verdicts "$D2" trees
dup=0
for n in agg1 agg2 root; do
	dup=$((dup + $(tree_sum "$n" duplicate $(jids twolevel) $(jids trees))))
done
rtx=$(jq -s '[.[] | select(.what == "runs") | .retransmits + .probes] | add // 0' "$D2/verdicts")
check_eq "the order was varied: the nodes counted duplicates, workers resent or probed; tree 1 summed at agg2, tree 2 forwarded by both aggregators" \
	"duplicates=some resends=some agg2-tree1=some forwarded=some,some" \
	"duplicates=$(some "$dup") resends=$(some "$rtx") agg2-tree1=$(some "$(netagg_in agg2 -j stats |
		jq '[.jobs[] | select(.jid >= 31) | .trees[] | select(.tid == 1) | .stats.fanned_out] | add')") forwarded=$(some "$(counter agg1 job 31 no_tree)"),$(some "$(counter agg2 job 31 no_tree)")"
echo "# nodes: $dup duplicates; workers: $rtx retransmissions and probes"
echo "# $(basename "$0"): ${SECONDS} s in all"

ktap_finish

# shellcheck shell=bash
# Section (d) of lab/bench/bench-vm.sh, which sources this after lib.sh
# and lib-runs.sh.
#
# (d) Scaling. One worker namespace sending from K addresses (children) to
#     the switch, with 1, 100 or 10,000 jobs configured on it: CPU 1 time
#     per packet against jobs (fan-in 4) and against fan-in (1 job).

# One worker namespace wk sending from K addresses 10.0.1.1..K; sw root.
fanin_topo() {
	local k=$1 i
	ip -all netns delete
	NS_LIST=()
	setup_ns sw wk || return 1
	ip link add v0 netns wk type veth peer name s1 netns sw
	ip -n sw addr add 10.0.1.254/24 dev s1
	for i in $(seq "$k"); do ip -n wk addr add "10.0.1.$i/24" dev v0; done
	ip -n wk link set v0 up
	ip -n sw link set s1 up
	steer wk v0 1
	steer sw s1 2
	for i in $(seq "$k"); do
		neighbour sw s1 "10.0.1.$i" wk v0 || return 1
	done
	neighbour wk v0 10.0.1.254 sw s1
}

# scale K JOBS: CPU 1 µs per packet with K children and JOBS jobs, or "fail"
scale() {
	local k=$1 jobs=$2 i srcs=() kids=() m0 m1 jid
	fanin_topo "$k"
	module_unload
	module_load
	for i in $(seq "$k"); do
		srcs+=(--src "10.0.1.$i")
		kids+=(child "10.0.1.$i")
	done
	# The measured job sits amid the others: JIDs 1..JOBS, tree on each.
	jid=$(( (jobs + 1) / 2 ))
	seq "$jobs" | awk -v m="$jid" '$1 != m {
		print "job add " $1 " window 1 mtu 128"
		print "tree add job " $1 " tree 0 role root child 10.9.0.1" }' >"$TEST_TMP/jobs"
	netagg_in sw -b "$TEST_TMP/jobs" || return 1
	netagg_in sw job add "$jid" window "$window" || return 1
	netagg_in sw tree add job "$jid" tree 0 role root "${kids[@]}" || return 1
	m0=$(cpu1_mark)
	timeout 300 ip netns exec wk "$BLAST" --dst 10.0.1.254 --job "$jid" --tree 0 \
		"${srcs[@]}" --packets $(( 4 * packets / k )) --window "$window" \
		--cpu 0 --timeout-ms 5000 >"$TEST_TMP/blast" 2>&1 || { cat "$TEST_TMP/blast" >&2; echo fail; return; }
	m1=$(cpu1_mark)
	awk -v p=$(( 4 * packets / k * k )) -v busy="$(cpu1_busy "$m0" "$m1")" \
		'BEGIN { printf "%.2f", busy / p * 1e6 }'
}

section_d() {
	local k jobs rep res
	say "## (d) Scaling: switch CPU per packet"
	say
	say "CPU 1 busy time per packet taken in, MTU 1500, about $((4 * packets)) packets a run,"
	say "median of $reps_d runs, all configurations taking turns. The measured job's"
	say "JID is in the middle of the others; each other job has a tree of its own."
	say
	# Every configuration once a round: slow drift in the emulator's speed
	# then weighs on all of them alike.
	for rep in $(seq "$reps_d"); do
		for jobs in "${jobcounts[@]}"; do
			res=$(scale 4 "$jobs")
			[ "$res" = fail ] || echo "$res" >>"$TEST_TMP/d.jobs.$jobs"
		done
		for k in "${fanins[@]}"; do
			# The 1-job row above is the same configuration.
			[ "$k" = 4 ] && [[ " ${jobcounts[*]} " == *" 1 "* ]] && continue
			res=$(scale "$k" 1)
			[ "$res" = fail ] || echo "$res" >>"$TEST_TMP/d.fanin.$k"
		done
	done
	[ -e "$TEST_TMP/d.fanin.4" ] || cp "$TEST_TMP/d.jobs.1" "$TEST_TMP/d.fanin.4" 2>/dev/null
	d_table jobs "jobs configured | fan-in" 4 "vs 1 job" "${jobcounts[@]}"
	d_table fanin "fan-in | jobs" 1 "vs fan-in ${fanins[0]}" "${fanins[@]}"
}

# d_table KIND "COLUMNS" OTHER "VS" VALUES...: a row per value, the median
# of its runs ($TEST_TMP/d.KIND.VALUE) against the first value's.
d_table() {
	local kind=$1 cols=$2 other=$3 vs=$4 v f res base=
	shift 4
	say "| $cols | CPU µs/packet | $vs |"
	say "|---|---|---|---|"
	for v in "$@"; do
		f=$TEST_TMP/d.$kind.$v
		res=$( [ -s "$f" ] && median <"$f")
		[ -n "$base" ] || base=$res
		say "| $v | $other | ${res:-failed} | $(ratio "$res" "$base") |"
	done
	say
}

# shellcheck shell=bash
# Section (g) of lab/bench/bench-vm.sh, which sources this after lib.sh
# and lib-runs.sh (allreduce).
#
# (g) Cores. 4 workers, 16 MiB, netagg with 1 and 4 trees, everything on
#     one CPU, spread over two, or the switch on a CPU of its own (RPS).

# Cores: how the switch's work spreads over the VM's two CPUs. On veth a
# packet is received on the CPU that sent it (the peer's backlog, or its
# NAPI, is scheduled there), so without RPS the switch sums on whichever
# CPU the sending worker runs: its work follows the workers. Each tree has
# its own lock, so with several trees both CPUs can sum at once; with one,
# they take turns at it. Three placements of 4 workers, 16 MiB, 1 and 4
# trees:
#   one CPU      workers pinned to CPU 0, no RPS: everything on CPU 0
#   two CPUs     workers unpinned, no RPS (as in (f), and as make demo)
#   switch CPU   workers pinned to CPU 0, RPS of sw's links on CPU 1: the
#                switch has a CPU of its own, as a separate machine would
# cpu_marks: "seconds busy0 busy1 softirq0 softirq1", jiffies from /proc/stat.
cpu_marks() {
	echo "$(date +%s.%N) $(awk '$1 == "cpu0" || $1 == "cpu1" {
		b[$1] = $2 + $3 + $4 + $7 + $8 + $9; s[$1] = $8 }
		END { print b["cpu0"], b["cpu1"], s["cpu0"], s["cpu1"] }' /proc/stat)"
}

# cpu_use MARK0 MARK1: "CPU0% CPU1% softirq0% softirq1%" of the wall time.
cpu_use() {
	awk -v hz="$HZ" -v a="$1" -v b="$2" 'BEGIN {
		split(a, x, " "); split(b, y, " "); w = y[1] - x[1]
		for (i = 2; i <= 5; i++) printf "%.0f ", (y[i] - x[i]) / hz / w * 100 }'
}

section_g() {
	local place trees n=4 mib=16 m0 m1 res i rps cpus base
	local -A T=() U=()
	say "## (g) Cores: the switch on one CPU and on two"
	say
	say "4 workers, $mib MiB each, MTU 1500, netagg with 1 and 4 trees (one job,"
	say "sw the root of all). one CPU: the workers pinned to CPU 0, and with"
	say "them the switch (veth receives on the sender's CPU); two CPUs: nothing"
	say "pinned, the switch works on the CPU of whichever worker sent; switch CPU:"
	say "the workers on CPU 0, the switch's receive steered to CPU 1 (RPS), as if"
	say "it were a machine of its own. Median of $reps_f after a warm-up; busy and"
	say "softirq: share of the wall time, CPU 0 / CPU 1, over the warm-up and the"
	say "timed runs."
	say
	say "| placement | trees | seconds | vs one CPU, same trees | busy % CPU 0 / 1 | softirq % CPU 0 / 1 |"
	say "|---|---|---|---|---|---|"
	for place in one two switch; do
		case $place in
		one) PIN=0 rps=0 ;;
		two) PIN= rps=0 ;;
		switch) PIN=0 rps=2 ;;
		esac
		star "$n" 1500 || { echo "bench: no star of $n" >&2; continue; }
		for i in $(seq "$n"); do
			steer "w$i" v0 0
			steer sw "s$i" "$rps"
		done
		for trees in 1 4; do
			TREES=$trees
			module_unload
			module_load && root_job 1 1500 "$n" "$trees" || { echo "bench: (g) no job" >&2; continue; }
			m0=$(cpu_marks)
			ITER=$reps_f allreduce "$n" "$mib" >"$TEST_TMP/g.res"
			m1=$(cpu_marks)
			res=$(cat "$TEST_TMP/g.res")
			[ "$res" = fail ] && res=failed
			T[$place,$trees]=$res
			U[$place,$trees]=$(cpu_use "$m0" "$m1")
			module_unload
		done
	done
	PIN=
	for place in one two switch; do
		case $place in
		one) cpus="one CPU" ;;
		two) cpus="two CPUs" ;;
		switch) cpus="switch CPU" ;;
		esac
		for trees in 1 4; do
			base=${T[one,$trees]:-0}
			set -- ${U[$place,$trees]:-- - - -}
			say "| $cpus | $trees | $(secs "${T[$place,$trees]:-failed}") |" \
				"$(ratio "${T[$place,$trees]:-0}" "$base") | $1 / $2 | $3 / $4 |"
		done
	done
	say
}

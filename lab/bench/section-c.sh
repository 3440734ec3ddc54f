# shellcheck shell=bash
# Section (c) of lab/bench/bench-vm.sh, which sources this after lib.sh
# and lib-runs.sh (allreduce).
#
# (c) Allreduce. netagg-allreduce on 4 and 8 workers, 1 to 64 MiB each,
#     through the module with one tree and with four (at MTU 1500 and 9000),
#     and through netagg-uagg; the time of the slowest worker, median of
#     REPS_C.

section_c() {
	local n mib how t base res mtu
	local -A r=()
	say "## (c) allreduce completion time"
	say
	say "Slowest worker's time, median of $reps_c after a warm-up, one switch (root); MTU 1500"
	say "but for the last column; 4 trees: chunks spread over four trees of the"
	say "job, all rooted there; jumbo: 4 trees on links of MTU 9000 (7 chunks of"
	say "8948 bytes a super-packet, against 44 of 1448 at 1500)."
	say
	say "| workers | MiB each | netagg 1 tree (s) | netagg 4 trees (s) | 4 trees / 1 tree | userspace aggregator (s) | uagg / netagg 1 tree | netagg 4 trees, MTU 9000 (s) | jumbo / 4 trees |"
	say "|---|---|---|---|---|---|---|---|---|"
	for n in 4 8; do
		for mtu in 1500 9000; do
			star "$n" "$mtu"
			for i in $(seq "$n"); do
				steer "w$i" v0 0
				steer sw "s$i" 0
			done
			for mib in "${sizes[@]}"; do
				for how in one four uagg; do
					[ "$mtu" = 1500 ] || [ "$how" = four ] || continue
					module_unload
					case $how in
					one) TREES=1; module_load && root_job 1 "$mtu" "$n" 1 ;;
					four) TREES=4; module_load && root_job 1 "$mtu" "$n" 4 ;;
					uagg) TREES=1; uagg_start "$n" "$mtu" ;;
					esac
					# Not in $(...): allreduce counts ROUND up.
					ITER=$reps_c allreduce "$n" "$mib" --mtu "$mtu" >"$TEST_TMP/c.res"
					res=$(cat "$TEST_TMP/c.res")
					[ "$how" = uagg ] && uagg_stop
					[ "$res" = fail ] && res=failed
					r[$mtu,$mib,$how]=$res
				done
			done
		done
		module_unload
		for mib in "${sizes[@]}"; do
			say "| $n | $mib | $(secs "${r[1500,$mib,one]}") | $(secs "${r[1500,$mib,four]}") |" \
				"$(ratio "${r[1500,$mib,four]}" "${r[1500,$mib,one]}") | $(secs "${r[1500,$mib,uagg]}") |" \
				"$(ratio "${r[1500,$mib,uagg]}" "${r[1500,$mib,one]}") | $(secs "${r[9000,$mib,four]}") |" \
				"$(ratio "${r[9000,$mib,four]}" "${r[1500,$mib,four]}") |"
		done
	done
	say
	say "Ratios are of times: below 1 is faster than the column compared with."
	say
}

#!/bin/bash
# The reduction code chosen at load: by default the fastest of those the CPU
# has (timed at load), or the one the "simd" module parameter names; every one gives the same exact
# results in the datapath, f32 and i32, sums and averages (three workers: the
# divisions by 3 round), standard and jumbo packets. simd=scalar is also the
# code the module falls back to when it may not use the FPU. And the other
# load-time choice, "reuse": results sent in the packets received, or not.
#
#   w1 10.0.1.1 --+
#   w2 10.0.2.1 --+-- sw 10.0.N.254: root of jobs 1-4
#   w3 10.0.3.1 --+
source "$(dirname "$0")/lib.sh"
require_root
trap 'cleanup_ns; module_unload' EXIT
PARAM=/sys/module/netagg/parameters/simd

# The kernel's test (reduce.c): AVX2 needs the CPU flag and the YMM state,
# which the kernel shows as the avx2 flag only when it saves that state.
best=sse2
grep -qw avx2 /proc/cpuinfo && best=avx2

topo_star 3
for i in 1 2 3; do
	ip -n "w$i" link set v0 mtu 9000
	ip -n sw link set "s$i" mtu 9000
done
kids=(child 10.0.1.1 child 10.0.2.1 child 10.0.3.1)

configure() {
	netagg_in sw job add 1 dtype f32 &&
	netagg_in sw tree add job 1 tree 0 role root "${kids[@]}" &&
	netagg_in sw job add 2 dtype f32 op avg &&
	netagg_in sw tree add job 2 tree 0 role root "${kids[@]}" &&
	netagg_in sw job add 3 dtype i32 op avg &&
	netagg_in sw tree add job 3 tree 0 role root "${kids[@]}" &&
	netagg_in sw job add 4 dtype f32 mtu 9000 &&
	netagg_in sw tree add job 4 tree 0 role root "${kids[@]}"
}

# allreduce JOB ARGS...: three workers at once; fails unless all verify.
allreduce() {
	local job=$1 i pids=() rc=0
	shift
	for i in 1 2 3; do
		ip netns exec "w$i" "$NETAGG_ALLREDUCE" --job "$job" --rank $((i - 1)) \
			--workers 3 --tree "0=10.0.$i.254" --count 50001 --iterations 2 \
			--quiet "$@" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	return $rc
}

# insmod, unlike modprobe, loads none of the modules netagg.ko needs.
module_deps || fail_setup "the modules netagg.ko depends on do not load"
ktap_plan 25
module_unload
check "insmod simd=bogus is refused" bash -c "! insmod '$NETAGG_KO' simd=bogus"
check "and leaves nothing loaded" bash -c "! lsmod | grep -qw netagg"
dmesg -C
check "insmod without simd" insmod "$NETAGG_KO"
chosen=$(cat $PARAM)
case $best:$chosen in
avx2:scalar | avx2:sse2 | avx2:avx2 | sse2:scalar | sse2:sse2) ok=yes ;;
*) ok=no ;;
esac
check_eq "it chose code this CPU has (best $best): $chosen" yes "$ok"
check "the kernel log gives the timings it chose by" bash -c \
	"dmesg | grep -q 'netagg: sums with $chosen code (4 x 2 KiB of f32: scalar [0-9]* ns, sse2 [0-9]* ns'"
module_unload

for simd in scalar sse2 avx2; do
	if [ "$simd" = avx2 ] && [ "$best" != avx2 ]; then
		# In place of the five cases below: the refusal and four skips.
		check "simd=avx2 is refused on a CPU without it" \
			bash -c "! insmod '$NETAGG_KO' simd=avx2"
		for c in "f32 sum" "f32 average" "i32 average" "f32 sum in 9000-byte packets"; do
			ktap_result skip "simd=avx2: $c" "this CPU has no AVX2"
		done
		continue
	fi
	insmod "$NETAGG_KO" simd=$simd && configure
	check_eq "simd=$simd: the module uses it" "$simd" "$(cat $PARAM 2>&1)"
	check "simd=$simd: f32 sum, exact" allreduce 1
	check "simd=$simd: f32 average over 3 (rounded divisions), exact" \
		allreduce 2 --op avg
	check "simd=$simd: i32 average, exact" allreduce 3 --dtype i32 --op avg
	check "simd=$simd: f32 sum in 9000-byte packets, exact" allreduce 4 --mtu 9000
	module_unload
done

# Results leave in the packets received (reuse), jumbo ones too; reuse=0
# sends every one in a new packet, and trees hold no budget for them.
insmod "$NETAGG_KO" && configure
mem_reuse=$(netagg_in sw -j show | jq '.jobs[] | select(.jid == 1) | .mem_used')
check "reuse: f32 sum in 9000-byte plain packets, exact" allreduce 4 --mtu 9000 --plain
check_eq "reuse: the results went out in the packets received" yes \
	"$([ "$(counter sw tree 4 0 reused)" -gt 0 ] && echo yes)"
module_unload
insmod "$NETAGG_KO" reuse=0 && configure
check "reuse=0: f32 sum in plain packets, exact" allreduce 1 --plain
check_eq "reuse=0: no packet reused, and a tree takes less memory" "0 yes" \
	"$(counter sw tree 1 0 reused) $([ "$(netagg_in sw -j show | jq '.jobs[] | select(.jid == 1) | .mem_used')" -lt "$mem_reuse" ] && echo yes)"
module_unload
check_eq "no leak reported at any unload" "0" \
	"$(dmesg | grep -c 'netagg: .* leaked')"
ktap_finish

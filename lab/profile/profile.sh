#!/bin/bash
# make profile: where the instructions go, exactly. The stream of
# make bench (b), unpaced, runs in the VM under a QEMU plugin
# (lab/profile/insn-profile.c) that counts every guest instruction per vCPU;
# CPU 1 does the switch's work. For each way (forward, netagg, ...) this
# prints the instructions CPU 1 ran per packet the switch took in, against
# forwarding's, and the functions they went to. Instruction counts are not
# time (under TCG a float lane costs far more than an integer one), but they
# do not drift or vary from run to run as the emulator's time does, and they
# see everything, where perf under TCG samples only idle time.
# Then (lab/bench/section-i.sh) the allreduces of make bench (f),
# netagg's and its peers', each counted whole: every vCPU, kernel and user,
# while any worker is inside a timed allreduce; instructions per allreduced
# byte, and the functions they went to (tests/out/profile/peers.csv), in
# netagg's user space too (lab/profile/symbols.sh).
# Then, in a boot of its own without the plugin (lab/bench/section-w.sh),
# where those allreduces' wall time goes: each system under perf,
# every vCPU's time and each worker's state (running, runnable, asleep and
# in which system call), from lab/profile/wall.py.
#
#   PROF_SECTIONS=piw  p: the streams, i: the allreduces, w: their wall time
#   WORKERS_W=4  SIZES_W="16 64"  REPS_W=3  SYSTEMS_W (as SYSTEMS_I)
#                      (w)'s workers, MiB, timed allreduces, systems
#   TOPOS_F="routed bridged"  WORKERS_I="4 8"  SIZES_I="16 64"  REPS_I=2
#   SYSTEMS_I="gloo openmpi netagg-demo netagg-best"
#                      the allreduces' switch, workers, MiB, timed ones each,
#                      systems (netagg-keyed too: netagg-best keyed;
#                      netagg-xdp: netagg-best with the XDP
#                      hook on the switch's ports)
#
#   MODES="forward netagg netagg-i32"   ways, as lab/bench/section-b.sh has them
#   MTUS=1500   PROF_PACKETS=2000 (VIDs a worker, in the first stream)   TOP=30 (functions shown)
#   LINKS=nic   the star's links virtio-net NICs, not veth (a driver that runs
#               XDP on its own pages, as a NIC's does)
#   KVER=...    kernel of the VM
#   NETAGG_KO=PATH  another build of the module (default kmod/netagg.ko):
#                   the same stream against an older commit's, for an A/B
#   REPORT_ONLY=1   no VM run: the report again, from the last run's files
#   BLOCKS="netagg_tree_rx ..."   also list these module functions' blocks,
#                   each with its instructions per packet and source line
#
# Report in tests/out/profile/report.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=$PWD/tests/out/profile
top=${TOP:-30}
if [ -z "${REPORT_ONLY:-}" ]; then
	rm -rf "$dir"
	mkdir -p "$dir"

	gcc -O2 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden -pthread \
		-o "$dir/insn-profile.so" lab/profile/insn-profile.c
	# The module that runs, for BLOCKS' source lines after a rebuild.
	cp "${NETAGG_KO:-kmod/netagg.ko}" "$dir/netagg.ko"

	vm_args=(--timeout 14000 --mem 4096 --cpus 2)
	[ -n "${KVER:-}" ] && vm_args+=(--kernel "$KVER")
	sections=${PROF_SECTIONS:-piw}
	export PROF_DIR=$dir
	# The allreduces' peers, as make bench has them, and perf for (w).
	[[ $sections != *[iw]* ]] || {
		scripts/deps.sh --bench
		make -s tests/out/mpi-allreduce
	}
	# LINKS=nic: four pairs of virtio-net NICs, each pair joined by a hub
	# of its own, for the star's links (lab/bench/lib.sh, nic_star).
	nics=
	if [ "${LINKS:-veth}" = nic ]; then
		for i in 1 2 3 4; do
			nics+=" -netdev hubport,id=w$i,hubid=$i -device virtio-net-pci,netdev=w$i,mac=52:54:00:0a:00:0$i"
			nics+=" -netdev hubport,id=s$i,hubid=$i -device virtio-net-pci,netdev=s$i,mac=52:54:00:0b:00:0$i"
		done
	fi
	[[ $sections != *[pi]* ]] ||
		SECTIONS=${sections//[!pi]/} OUT=$dir/vm.md \
		VM_QEMU_ARGS="-plugin $dir/insn-profile.so,mark=$dir/mark$nics" \
		VM_ENV="SECTIONS PROF_DIR OUT MODES MTUS PROF_PACKETS NETAGG_KO TOPOS_F WORKERS_I LINKS
			SIZES_I REPS_I SYSTEMS_I" \
		lab/vm-run "${vm_args[@]}" -- lab/bench/bench-vm.sh
	# Timed, so not under the plugin, which slows the VM 3 to 7 times.
	[[ $sections != *w* ]] ||
		SECTIONS=w OUT=$dir/vm-wall.md \
		VM_QEMU_ARGS="${nics# }" \
		VM_ENV="SECTIONS PROF_DIR OUT NETAGG_KO TOPOS_F LINKS WORKERS_W SIZES_W REPS_W SYSTEMS_W" \
		lab/vm-run "${vm_args[@]}" -- lab/bench/bench-vm.sh
fi

source lab/profile/symbols.sh

# by_function MODE MTU PACKETS S1 S2 S3 [CPU]: "instructions-per-packet
# function" of CPU 1 (or CPU): what the second stream ran (S2 to S3) less
# what the first ran (S1 to S2), over the PACKETS more the second took in.
# Blocks are attributed to the nearest text symbol at or below their
# address, user space as one (attribute()).
by_function() {
	local syms=$dir/kallsyms.$1.$2
	{
		kernel_symbols "$syms"
		# CPU 0 is column 3, CPU 1 column 4 (after address, instructions).
		awk -v c=$((3 + ${7:-1})) 'FILENAME == ARGV[1] { s1[$1 " " $2] = $c; next }
			FILENAME == ARGV[2] { s2[$1 " " $2] = $c; next }
			{ k = $1 " " $2; d = ($c - 2 * s2[k] + s1[k]) * $2
			  v = $1; while (length(v) < 16) v = "0" v
			  if (d != 0) printf "%s 1 %d\n", v, d }' \
			"$dir/mark.$4" "$dir/mark.$5" "$dir/mark.$6"
	} | attribute "$3" %.3f
}

# blocks MODE MTU PACKETS S1 S2 S3 FUNC: the translation blocks that start
# in the module's FUNC, as by_function counts them, each with the source
# line it starts at (innermost inlined function first).
blocks() {
	local syms=$dir/kallsyms.$1.$2 ko=$dir/netagg.ko start end base
	read -r start end < <(sort "$syms" | awk -v f="$7" '
		$2 ~ /^[tT]$/ && s { print s, $1; exit }
		$3 == f && $4 == "[netagg]" { s = $1 }')
	base=$(nm "$ko" | awk -v f="$7" '$3 == f { print $1 }')
	[ -n "$start" ] && [ -n "$end" ] && [ -n "$base" ] || {
		echo "(no function $7 in the module)"
		return
	}
	echo "| offset | instructions/packet | source |"
	echo "|---|---|---|"
	awk -v lo="$start" -v hi="$end" -v p="$3" '
		FILENAME == ARGV[1] { s1[$1 " " $2] = $4; next }
		FILENAME == ARGV[2] { s2[$1 " " $2] = $4; next }
		{ v = $1; while (length(v) < 16) v = "0" v
		  if (v < lo || v >= hi) next
		  d = ($4 - 2 * s2[$1 " " $2] + s1[$1 " " $2]) * $2
		  if (d != 0) printf "%s %.1f\n", v, d / p }' \
		"$dir/mark.$4" "$dir/mark.$5" "$dir/mark.$6" | sort |
		while read -r addr n; do
			printf "%x %s\n" $((0x$addr - 0x$start + 0x$base)) "$n"
		done >"$dir/blocks.tmp"
	# addr2line -a heads each address's lines with it, zero-padded.
	sed 's/^/0x/; s/ .*//' "$dir/blocks.tmp" |
		addr2line -a -i -e "$ko" -j .text |
		awk 'FILENAME == ARGV[1] { n[$1] = $2; next }
			/^0x/ { a = $1; sub(/^0x0*/, "", a); next }
			{ sub(/.*\//, ""); src[a] = src[a] (src[a] ? " < " : "") $0 }
			END { for (a in n) printf "| %s | %s | %s |\n", a, n[a], src[a] }' \
			"$dir/blocks.tmp" - | sort
	rm -f "$dir/blocks.tmp"
}

# top_table UNIT FORMAT FILE: the first $top lines of a functions file
# ("instructions function", most first) as a Markdown table, instructions
# per UNIT printed with FORMAT, with each one's share of the whole file.
top_table() {
	echo "| instructions/$1 | share | function |"
	echo "|---|---|---|"
	awk -v top="$top" -v fmt="$2" '{ n[NR] = $1; s += $1; $1 = ""; f[NR] = substr($0, 2) }
		END { for (i = 1; i <= NR && i <= top; i++)
			printf "| " fmt " | %.1f%% | %s |\n", n[i], 100 * n[i] / s, f[i] }' "$3"
}

# (w): each trace as perf script prints it, summarized by wall.py.
wall_label() {
	case $1 in
	gloo) echo Gloo ;; openmpi) echo "Open MPI" ;; netagg-demo) echo "netagg 1 tree" ;;
	netagg-best) echo "netagg 4 trees" ;; netagg-xdp) echo "netagg 4 trees, XDP" ;;
	netagg-keyed) echo "netagg 4 trees, keyed" ;; *) echo "$1" ;;
	esac
}
if [ -s "$dir/wall.runs" ]; then
	while read -r topo n mib sys reps _; do
		base=$dir/wall.$topo.$n.$mib.$sys
		# Read again when the trace, or the reader, is newer.
		[ -s "$base.json" ] && [ "$base.json" -nt "$base.data" ] &&
			[ "$base.json" -nt lab/profile/wall.py ] && continue
		perf script -i "$base.data" --ns -F comm,pid,tid,cpu,time,event,trace \
			>"$base.txt" 2>"$base.err" &&
			lab/profile/wall.py summary "$base.txt" --reps "$reps" \
				--name "$(wall_label "$sys")" >"$base.json" ||
			{ echo "profile: (w) $base: no summary" >&2; cat "$base.err" >&2; rm -f "$base.json"; }
		rm -f "$base.txt"
	done <"$dir/wall.runs"
fi

report=$dir/report.md
{
	echo "# Instructions per packet on the switch's CPU"
	echo
	echo "Kernel ${KVER:-$(scripts/kver)}, QEMU TCG with lab/profile/insn-profile.c;"
	echo "the stream of make bench (b), unpaced: instructions CPU 1 ran for a"
	echo "stream of 3 x ${PROF_PACKETS:-2000} VIDs a worker less those it ran for one of"
	echo "${PROF_PACKETS:-2000}, per packet more the switch took in (four a VID): the cost"
	echo "per packet without the fixed cost of a stream."
	echo
	echo "The module times its implementations at load and sums with the fastest"
	echo "(under TCG, by a small margin that can go either way): \"sums with\""
	echo "says which it was, as its instruction counts differ. The workers'"
	echo "column is what CPU 0 (their four senders and receivers) ran, per"
	echo "packet the switch took in, counted the same way (functions.*.cpu0)."
	echo
	echo "| MTU | way | instructions/packet | vs forward | sums with | workers' CPU 0 |"
	echo "|---|---|---|---|---|---|"
	declare -A fwd
	[ -s "$dir/runs" ] || : >"$dir/runs"
	while read -r mode mtu n s1 s2 s3; do
		by_function "$mode" "$mtu" $((8 * n)) "$s1" "$s2" "$s3" >"$dir/functions.$mode.$mtu"
		by_function "$mode" "$mtu" $((8 * n)) "$s1" "$s2" "$s3" 0 \
			>"$dir/functions.$mode.$mtu.cpu0"
		total=$(awk '{ s += $1 } END { printf "%.0f", s }' "$dir/functions.$mode.$mtu")
		workers=$(awk '{ s += $1 } END { printf "%.0f", s }' "$dir/functions.$mode.$mtu.cpu0")
		[ "$mode" = forward ] && fwd[$mtu]=$total
		simd=$(awk '$2 ~ /^netagg_(reduce|add_many)_[fi]32_/ { sub(/.*_/, "", $2); print $2; exit }' \
			"$dir/functions.$mode.$mtu")
		echo "| $mtu | $mode | $total | $(awk -v a="$total" -v b="${fwd[$mtu]:-0}" \
			'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }') | ${simd:--} | $workers |"
	done <"$dir/runs"
	while read -r mode mtu _; do
		echo
		echo "## $mode, MTU $mtu: the $top functions with most instructions per packet"
		echo
		top_table packet %.0f "$dir/functions.$mode.$mtu"
	done <"$dir/runs"
	if [ -s "$dir/peers.csv" ]; then
		echo
		sed -n '/^## (i)/,$p' "$dir/vm.md"
		# Where each system's instructions went: the first run of the first
		# cell counted, per topology.
		while IFS=, read -r topo n mib sys run ib _ s0 s1; do
			[ "$run" = 1 ] && [ -n "$s0" ] && [ "$ib" != - ] || continue
			[ -e "$dir/mark.$s0" ] && [ -e "$dir/mark.$s1" ] || continue
			syms=$dir/kallsyms.$topo.$n.$mib.$sys.$run
			[ -s "$syms" ] || syms=$(ls "$dir"/kallsyms.* | head -n 1)
			maps=$dir/maps.$topo.$n.$mib.$sys.$run
			[ -s "$maps" ] || maps=
			timed_by_function "$syms" "$s0" "$s1" \
				$(( ${REPS_I:-2} * mib * 1048576 )) $maps >"$dir/functions.$topo.$n.$mib.$sys"
			echo
			echo "### $sys, $topo switch, $n workers, $mib MiB: the $top functions with most instructions per allreduced byte"
			echo
			top_table byte %.3f "$dir/functions.$topo.$n.$mib.$sys"
			[ -n "$maps" ] || continue
			echo
			echo "### $sys, $topo switch, $n workers, $mib MiB: user space by function"
			echo
			echo "The workers' programs, libraries and libc (all processes at one worker's"
			echo "addresses: no address randomization); share: of user space."
			echo
			grep -E ' \(.*\)$| \[user space, elsewhere\]$' "$dir/functions.$topo.$n.$mib.$sys" \
				>"$dir/user.$topo.$n.$mib.$sys"
			top_table byte %.4f "$dir/user.$topo.$n.$mib.$sys"
		done < <(awk -F, -v n="${WORKERS_I:-4 8}" -v m="${SIZES_I:-16 64}" 'NR > 1 {
			split(n, a, " "); split(m, b, " ")
			if ($2 == a[1] && $3 == b[1]) print }' "$dir/peers.csv")
	fi
	if [ -s "$dir/wall.runs" ]; then
		echo
		echo "## (w) Where the wall time of an allreduce goes"
		echo
		echo "The allreduces of (i), each system in turn under perf (every context switch,"
		echo "wake-up, system call and softirq; lab/profile/wall.py), in a boot without the"
		echo "plugin; ${REPS_W:-3} timed allreduces after a warm-up, each after a barrier. vCPUs: each"
		echo "vCPU's time within the timed allreduces, as a share of wall time x vCPUs;"
		echo "softirq in whatever context it ran (on veth a sender's transmit runs the"
		echo "receiver's stack, the switch's included, in its own softirq). A worker: the"
		echo "share of the wall time its process was running (a thread on a vCPU),"
		echo "runnable (waiting for one) or asleep, and in which system call."
		echo
		lab/profile/wall.py tables "$dir/wall.runs"
	fi
	for f in ${BLOCKS:-}; do
		while read -r mode mtu n s1 s2 s3; do
			[ "$mode" = forward ] || [ "$mode" = uagg ] && continue
			echo
			echo "## $mode, MTU $mtu: the blocks of $f"
			echo
			blocks "$mode" "$mtu" $((8 * n)) "$s1" "$s2" "$s3" "$f"
		done <"$dir/runs"
	done
} >"$report"
cat "$report"
echo "profile: report in $report"

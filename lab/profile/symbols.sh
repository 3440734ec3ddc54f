# shellcheck shell=bash
# make profile's names for the instruction counts of lab/profile/insn-profile.c:
# the kernel's functions from a kallsyms, user space's from a process's
# memory map. lab/profile/profile.sh sources this; tests/host_profile.sh
# checks it. $dir: the directory of the plugin's snapshots (mark.N).

# user_symbols MAPS: "address 0 function (object)" for the text symbols of
# every object MAPS (a process's /proc/PID/maps) has executable, at the
# addresses it has them, as kallsyms lists the kernel's; what lies outside
# them is "[user space, elsewhere]". libc's own symbols are in its debug
# file (libc6-dbg), found by its build ID.
user_symbols() {
	local path base obj id debug
	echo "0000000000000000 0 [user space, elsewhere]"
	awk '$2 ~ /x/ && $6 ~ /^\// { print $6 }' "$1" | sort -u | while read -r path; do
		base=$(awk -v p="$path" '$6 == p && $3 == "00000000" { split($1, a, "-"); print a[1]; exit }' "$1")
		[ -n "$base" ] && [ -r "$path" ] || continue
		obj=${path##*/}
		id=$(readelf -n "$path" 2>/dev/null | awk '/Build ID/ { print $3 }')
		debug=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
		[ -n "$id" ] && [ -r "$debug" ] || debug=$path
		# A stripped object without a debug file: its dynamic symbols.
		{ nm --defined-only "$debug" 2>/dev/null | grep . ||
			nm -D --defined-only "$path"; } |
			awk '$2 ~ /^[tTwWi]$/ { print $1, $3 }' |
			while read -r addr name; do
				printf "%016x 0 %s (%s)\n" $((0x$base + 0x$addr)) "$name" "$obj"
			done
	done
	# Each executable mapping's end, where the next of them may not start.
	awk '$2 ~ /x/ && $6 != "[vsyscall]" { split($1, a, "-"); v = a[2]; while (length(v) < 16) v = "0" v
		print v, 0, "[user space, elsewhere]" }' "$1"
}

# timed_by_function SYMS S0 S1 BYTES [MAPS]: "instructions-per-byte
# function" of what every vCPU ran in timed regions (the snapshots' second
# eight columns) between snapshots S0 and S1, per BYTES. A block counts
# to the nearest symbol at or below its address (inlined code to its
# caller); user space as one, or by function with a worker's map.
timed_by_function() {
	{
		awk '$2 ~ /^[tTwW]$/ { printf "%s 0 %s%s\n", $1, $3, ($4 ? " " $4 : "") }' "$1"
		[ -z "${5:-}" ] || user_symbols "$5"
		awk 'FILENAME == ARGV[1] { for (c = 11; c <= 18; c++) s0[$1 " " $2] += $c; next }
			{ t = 0; for (c = 11; c <= 18; c++) t += $c
			  d = (t - s0[$1 " " $2]) * $2
			  v = $1; while (length(v) < 16) v = "0" v
			  if (d != 0) printf "%s 1 %d\n", v, d }' \
			"$dir/mark.$2" "$dir/mark.$3"
	} | sort -k1,1 -k2,2n | awk -v p="$4" -v named="${5:+1}" '
		$2 == 0 { fn = $0; sub(/^[^ ]+ [^ ]+ /, "", fn); next }
		{ n[$1 < "ffff800000000000" && !named ? "[user space]" : fn] += $3 }
		END { for (f in n) printf "%.4f %s\n", n[f] / p, f }' |
		sort -k1,1nr
}

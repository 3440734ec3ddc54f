# shellcheck shell=bash
# make profile's names for the instruction counts of lab/profile/insn-profile.c:
# the kernel's functions from a kallsyms, user space's from a process's
# memory map, and the counts attributed to them. lab/profile/profile.sh sources this; tests/host_profile.sh
# checks it. $dir: the directory of the plugin's snapshots (mark.N).

# kernel_symbols KALLSYMS: "address 0 function [module]" for each text
# symbol of a /proc/kallsyms copy.
kernel_symbols() {
	awk '$2 ~ /^[tTwW]$/ { printf "%s 0 %s%s\n", $1, $3, ($4 ? " " $4 : "") }' "$1"
}

# debug_file OBJECT: the file with OBJECT's own symbols: its debug file
# (libc6-dbg's, by build ID) where there is one, else OBJECT.
debug_file() {
	local id debug
	id=$(readelf -n "$1" 2>/dev/null | awk '/Build ID/ { print $3 }')
	debug=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
	if [ -n "$id" ] && [ -r "$debug" ]; then echo "$debug"; else echo "$1"; fi
}

# user_symbols MAPS: "address 0 function (object)" for the text symbols of
# every object MAPS (a process's /proc/PID/maps) has executable, at the
# addresses it has them, as kallsyms lists the kernel's; what lies outside
# them is "[user space, elsewhere]". libc's own symbols are in its debug
# file (libc6-dbg), found by its build ID.
user_symbols() {
	local path base obj
	echo "0000000000000000 0 [user space, elsewhere]"
	awk '$2 ~ /x/ && $6 ~ /^\// { print $6 }' "$1" | sort -u | while read -r path; do
		base=$(awk -v p="$path" '$6 == p && $3 == "00000000" { split($1, a, "-"); print a[1]; exit }' "$1")
		[ -n "$base" ] && [ -r "$path" ] || continue
		obj=${path##*/}
		# A stripped object without a debug file: its dynamic symbols.
		{ nm --defined-only "$(debug_file "$path")" 2>/dev/null | grep . ||
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

# attribute PER FORMAT [NAMED]: stdin's symbols ("address 0 function")
# and blocks' counts ("address 1 instructions"), addresses as 16 hex
# digits, as "count/PER function" lines, most first, printed with FORMAT:
# each block to the nearest symbol at or below its address (inlined code
# to its caller), user space as one unless NAMED (its symbols given).
# Unrounded, so that a total is not a sum of rounded parts.
attribute() {
	sort -k1,1 -k2,2n | awk -v p="$1" -v fmt="$2 %s\n" -v named="${3:-}" '
		$2 == 0 { fn = $0; sub(/^[^ ]+ [^ ]+ /, "", fn); next }
		{ n[$1 < "ffff800000000000" && !named ? "[user space]" : fn] += $3 }
		END { for (f in n) printf fmt, n[f] / p, f }' |
		sort -k1,1nr
}

# timed_by_function SYMS S0 S1 BYTES [MAPS]: "instructions-per-byte
# function" of what every vCPU ran in timed regions (the snapshots' second
# eight columns) between snapshots S0 and S1, per BYTES, as attribute()
# does: user space as one, or by function with a worker's map.
timed_by_function() {
	{
		kernel_symbols "$1"
		[ -z "${5:-}" ] || user_symbols "$5"
		awk 'FILENAME == ARGV[1] { for (c = 11; c <= 18; c++) s0[$1 " " $2] += $c; next }
			{ t = 0; for (c = 11; c <= 18; c++) t += $c
			  d = (t - s0[$1 " " $2]) * $2
			  v = $1; while (length(v) < 16) v = "0" v
			  if (d != 0) printf "%s 1 %d\n", v, d }' \
			"$dir/mark.$2" "$dir/mark.$3"
	} | attribute "$4" %.4f "${5:+1}"
}

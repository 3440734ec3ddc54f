#!/bin/bash
# make check-kernels: the whole suite (tests/run.sh, as make check runs it)
# on every kernel netagg supports, one after the other: Debian 12's 6.1,
# 6.12 and 6.12-rt (PREEMPT_RT), each the newest of its line installed.
# The module is built against each kernel's headers before its run; each
# run boots that kernel and checks its log (vm-run). Its log goes to
# tests/out-kernels/KVER.log and its tests/out (every script's log) to
# tests/out-kernels/KVER/, as tests/run.sh starts each run afresh. Ends
# with one line per kernel and the total "N passed, N failed"; fails when
# anything failed or a kernel is missing.
#
#   KERNELS="6.12 6.12-rt" make check-kernels   only those lines
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
scripts/deps.sh || exit 1
scripts/deps.sh --kernels || exit 1

# newest PATTERN: the newest kernel with image and headers whose version
# matches the extended regular expression PATTERN.
newest()
{
	local img v
	for img in /boot/vmlinuz-*; do
		v=${img#/boot/vmlinuz-}
		[[ $v =~ $1 ]] && scripts/kver "$v" >/dev/null 2>&1 && echo "$v"
	done | sort -V | tail -n 1
}

lines=("6.1 ^6\.1\.[0-9]+-[0-9]+-amd64$"
       "6.12 ^6\.12\.[0-9]+\+deb[0-9]+-amd64$"
       "6.12-rt ^6\.12\.[0-9]+\+deb[0-9]+-rt-amd64$")
if [ -n "${KERNELS:-}" ]; then
	picked=()
	for k in $KERNELS; do
		found=
		for l in "${lines[@]}"; do
			[ "${l%% *}" = "$k" ] && picked+=("$l") found=1
		done
		if [ -z "$found" ]; then
			echo "check-kernels: KERNELS: unknown kernel line \"$k\" (6.1, 6.12 or 6.12-rt)" >&2
			exit 2
		fi
	done
	lines=("${picked[@]}")
fi
out=tests/out-kernels
rm -rf "$out"
mkdir -p "$out"
summary=() pass=0 fail=0
for l in "${lines[@]}"; do
	name=${l%% *}
	v=$(newest "${l#* }")
	if [ -z "$v" ]; then
		summary+=("$name: not installed (image and headers): 0 passed, 1 failed")
		fail=$((fail + 1))
		continue
	fi
	echo "== check-kernels: $name ($v) =="
	# The objects of another kernel's build must not be linked into this one.
	make -s -C "/lib/modules/$v/build" M="$PWD" clean >/dev/null 2>&1
	if ! make -s KVER="$v" all >"$out/$v.log" 2>&1; then
		tail -n 20 "$out/$v.log"
		summary+=("$name ($v): build failed: 0 passed, 1 failed")
		fail=$((fail + 1))
		continue
	fi
	KVER=$v tests/run.sh 2>&1 | tee -a "$out/$v.log"
	cp -r tests/out "$out/$v"
	if ! read -r p f < <(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' \
			"$out/$v.log" | tail -n 1); then
		p=0 f=1
	fi
	summary+=("$name ($v): $p passed, $f failed")
	pass=$((pass + p)) fail=$((fail + f))
done
# Leave the module built for the default kernel, as make would.
v=$(scripts/kver) && make -s -C "/lib/modules/$v/build" M="$PWD" clean >/dev/null 2>&1
make -s all >/dev/null 2>&1

echo "== check-kernels =="
printf '%s\n' "${summary[@]}"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

#!/bin/bash
# Runs inside the VM (tests/run.sh starts it): every netns test, or the ones
# named, as KTAP. Each test's cases are tallied against its plan
# (tests/ktap.sh) into tests/out/vm-counts ("passed failed skipped") for the
# host to add up, and its skipped cases, with their reasons, into
# tests/out/vm-skips.
cd "$(dirname "$0")/.." || exit 1
source tests/ktap.sh
out=tests/out
mkdir -p "$out"
rm -f "$out/vm-skips"

# The datapath's tests run again through the XDP hook (NETAGG_XDP, lib.sh):
# "tests/netagg_agg.sh+xdp" names such a run, as tests/run.sh and make
# check-debug's T= take it too. netagg_repro.sh+xdp passes as well, but
# its 2.5 minutes stay out of make check (which must stay under an hour).
# netagg_ipv6.sh+xdp: the XDP hook's IPv6 path.
# "--list" prints the whole list and runs nothing (make check-debug's parts
# are checked against it, on the host).
xdp_reruns=(agg churn hostile loss ipv6)
if [ $# -gt 0 ] && [ "$1" != --list ]; then
	tests=("$@")
else
	tests=(tests/netagg_*.sh)
	for t in "${xdp_reruns[@]}"; do tests+=("tests/netagg_$t.sh+xdp"); done
	if [ "${1:-}" = --list ]; then
		printf '%s\n' "${tests[@]}"
		exit 0
	fi
fi

# Under TCG, a static branch patched while both vCPUs run through it has
# faulted on text_poke_bp()'s int3 (once, in 2026-11: netstamp_needed_key,
# turned on mid-traffic by the first SO_TIMESTAMP socket, ping's, in
# netagg_twolevel). One such socket held for the whole suite turns it on
# before any traffic, and no test toggles it again.
# (Python's socket module has no SO_TIMESTAMP: 29 is its value on x86.)
python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, 29, 1)
open(sys.argv[1], "w").close()
time.sleep(86400)' "$out/.tstamp" &
tstamp=$!
trap 'kill $tstamp 2>/dev/null' EXIT
for i in $(seq 50); do [ -e "$out/.tstamp" ] && break; sleep 0.1; done
if [ ! -e "$out/.tstamp" ]; then
	echo "vm-suite: could not hold an SO_TIMESTAMP socket" >&2
	exit 1
fi
rm -f "$out/.tstamp"
sleep 1	# the key is switched on by a work item

# Each test's time, as the kselftest runner gives it (tests/settings).
limit=$(sed -n 's/^timeout=\([0-9]*\)$/\1/p' tests/settings)
if [ -z "$limit" ]; then
	echo "vm-suite: tests/settings gives no timeout=SECONDS" >&2
	exit 1
fi
# A slower kernel (make check-debug) gives each script more.
limit=$((limit * ${TIMEOUT_SCALE:-1}))

# On a kernel with KMEMLEAK (make check-debug), every test script's leaks
# are its own: what booting left is forgotten here, and after each script
# a scan reports what it leaked.
kmemleak=/sys/kernel/debug/kmemleak
if [ -w "$kmemleak" ]; then
	echo scan >"$kmemleak" && echo scan >"$kmemleak" && echo clear >"$kmemleak"
else
	kmemleak=
fi

# leaked: the objects a scan finds unreferenced, cleared once read. Only
# objects older than 5 s are reported: the last of them are the script's;
# and only those whose contents did not change since the scan before:
# two scans.
leaked()
{
	sleep 5
	echo scan >"$kmemleak" && echo scan >"$kmemleak" || return
	cat "$kmemleak"
	echo clear >"$kmemleak"
}

echo "KTAP version 1"
echo "1..${#tests[@]}"
pass=0 fail=0 skip=0 n=0
for t in "${tests[@]}"; do
	n=$((n + 1))
	xdp=
	[ "${t%+xdp}" = "$t" ] || xdp=native
	t=${t%+xdp}
	name=$(basename "$t" .sh)${xdp:++xdp}
	ktap_progress "$n" "${#tests[@]}" "$name"
	log=$out/$name.log
	NETAGG_XDP=$xdp timeout "$limit" bash "$t" >"$log" 2>&1
	rc=$?
	sed 's/^/    /' "$log"
	ktap_tally "$log" "$name" "$out/vm-skips"
	p=$tally_pass f=$tally_fail s=$tally_skip
	# A test that leaves the module loaded breaks the next one's load test.
	if [ -d /sys/module/netagg ] && ! rmmod netagg; then
		echo "# $name left the module loaded and it does not unload"
		rc=1
	fi
	if [ -n "$kmemleak" ]; then
		if ! leaks=$(leaked); then
			echo "# kmemleak could not scan after $name: $(dmesg | grep kmemleak | tail -n 1)"
			rc=1
		elif [ -n "$leaks" ]; then
			echo "$leaks" | sed 's/^/    # /'
			echo "# $name leaked memory (kmemleak)"
			rc=1
		fi
	fi
	if [ -n "$tally_problem" ]; then
		echo "not ok $n $name # $tally_problem (exit $rc)"
		[ "$f" -gt 0 ] || f=1
	elif [ $rc -eq 4 ] && [ "$f" -eq 0 ] && [ "$s" -gt 0 ]; then
		echo "ok $n $name # SKIP"
	elif [ $rc -eq 0 ] && [ "$f" -eq 0 ]; then
		echo "ok $n $name"
	else
		echo "not ok $n $name # exit $rc"
		# A script that died without a failing case still failed.
		[ "$f" -gt 0 ] || f=1
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
done
echo "$pass $fail $skip" >"$out/vm-counts"
[ "$fail" -eq 0 ]

#!/bin/bash
# Shared helpers of the netns tests (kselftest style: KTAP out, exit 4 = skip).
# A test sources this, calls ktap_plan with its number of cases, then one
# assertion per case; ktap_finish ends it. Everything runs as root in the VM.

NETAGG_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NETAGG=$NETAGG_ROOT/userspace/netagg
NETAGG_SEND=$NETAGG_ROOT/userspace/netagg-send
NETAGG_KO=$NETAGG_ROOT/kmod/netagg.ko
ksft_skip=4

ktap_n=0
ktap_pass=0
ktap_fail=0
ktap_skip=0
NS_LIST=()

ktap_plan()
{
	echo "KTAP version 1"
	echo "1..$1"
}

ktap_result()	# ok|fail|skip description [detail...]
{
	local res=$1 desc=$2
	shift 2
	ktap_n=$((ktap_n + 1))
	case $res in
	ok)	ktap_pass=$((ktap_pass + 1)); echo "ok $ktap_n $desc" ;;
	skip)	ktap_skip=$((ktap_skip + 1)); echo "ok $ktap_n $desc # SKIP $*" ;;
	*)	ktap_fail=$((ktap_fail + 1)); echo "not ok $ktap_n $desc"
		[ $# -gt 0 ] && printf '%s\n' "$@" | sed 's/^/# /' ;;
	esac
}

ktap_finish()
{
	echo "# $(basename "$0"): $ktap_pass pass, $ktap_fail fail, $ktap_skip skip"
	[ "$ktap_fail" -eq 0 ] || exit 1
	[ "$ktap_pass" -gt 0 ] || exit $ksft_skip
	exit 0
}

# check DESC CMD...: the command succeeds.
check()
{
	local desc=$1 out
	shift
	if out=$("$@" 2>&1); then
		ktap_result ok "$desc"
	else
		ktap_result fail "$desc" "command: $*" "exit $?: $out"
	fi
}

# check_err DESC MESSAGE CMD...: the command fails and says MESSAGE.
check_err()
{
	local desc=$1 msg=$2 out rc
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && [[ $out == *"$msg"* ]]; then
		ktap_result ok "$desc"
	else
		ktap_result fail "$desc" "command: $*" "exit $rc, wanted failure saying: $msg" "got: $out"
	fi
}

# check_eq DESC WANT GOT
check_eq()
{
	if [ "$2" == "$3" ]; then
		ktap_result ok "$1"
	else
		ktap_result fail "$1" "wanted: $2" "got:    $3"
	fi
}

# A namespace named after the test; removed by cleanup.
setup_ns()
{
	local ns
	for ns in "$@"; do
		ip netns add "$ns" || return 1
		ip -n "$ns" link set lo up
		NS_LIST+=("$ns")
	done
}

cleanup_ns()
{
	local ns
	for ns in "${NS_LIST[@]}"; do
		ip netns del "$ns" 2>/dev/null
	done
	NS_LIST=()
}

module_loaded()
{
	[ -d /sys/module/netagg ]
}

module_load()
{
	module_loaded || insmod "$NETAGG_KO"
}

module_unload()
{
	! module_loaded || rmmod netagg
}

# netagg_in NS ARGS...: the CLI inside a namespace.
netagg_in()
{
	local ns=$1
	shift
	ip netns exec "$ns" "$NETAGG" "$@"
}

# counter NS LEVEL... NAME: one counter from `netagg -j stats` in NS, e.g.
#   counter sw namespace ns_seen; counter sw job 7 rx; counter sw tree 7 0 rx
counter()
{
	local ns=$1 level=$2
	shift 2
	case $level in
	namespace) netagg_in "$ns" -j stats | jq -r ".namespace.$1" ;;
	job) netagg_in "$ns" -j stats | jq -r ".jobs[] | select(.jid == $1) | .stats.$2" ;;
	tree) netagg_in "$ns" -j stats |
		jq -r ".jobs[] | select(.jid == $1) | .trees[] | select(.tid == $2) | .stats.$3" ;;
	esac
}

# wait_counter WANT NS LEVEL... NAME: poll until the counter is WANT (packets
# cross veth asynchronously), for at most two seconds; prints the last value.
wait_counter()
{
	local want=$1 got i
	shift
	for i in $(seq 20); do
		got=$(counter "$@")
		[ "$got" = "$want" ] && break
		sleep 0.1
	done
	echo "$got"
}

# The test needs to run as root in a VM or on a host that loads modules.
require_root()
{
	if [ "$(id -u)" -ne 0 ]; then
		echo "1..0 # SKIP needs root"
		exit $ksft_skip
	fi
	if [ ! -f "$NETAGG_KO" ] || [ ! -x "$NETAGG" ]; then
		echo "1..0 # SKIP not built: run make"
		exit $ksft_skip
	fi
}

#!/bin/bash
# Every network namespace is configured on its own: same JIDs, different
# settings, no interference; deleting a namespace with jobs, trees and
# traffic frees them (checked again at module unload).
source "$(dirname "$0")/lib.sh"
require_root
trap 'cleanup_ns; module_unload' EXIT

module_load
setup_ns nsa nsb nsc
ktap_plan 10
check "job 7 in nsa" netagg_in nsa job add 7 window 32
check "job 7 in nsb too" netagg_in nsb job add 7 window 16 dtype i32
check "tree in nsa" netagg_in nsa tree add job 7 tree 0 role root child 10.0.0.1
check_eq "each namespace sees its own job 7" '[32,"f32",1] [16,"i32",0]' \
	"$(netagg_in nsa -j show | jq -c '.jobs[0] | [.window, .dtype, (.trees | length)]') $(netagg_in nsb -j show | jq -c '.jobs[0] | [.window, .dtype, (.trees | length)]')"
check_eq "the initial namespace has none" '[]' "$("$NETAGG" -j show | jq -c .jobs)"
check "caps are per namespace" netagg_in nsa set max-jobs 1
check_eq "nsb keeps its own cap" "1 16384" \
	"$(netagg_in nsa -j show | jq .namespace.max_jobs) $(netagg_in nsb -j show | jq .namespace.max_jobs)"
check "job del in nsa" netagg_in nsa job del 7
check_eq "leaves nsb's job 7" '[7]' "$(netagg_in nsb -j show | jq -c '[.jobs[].jid]')"

# nsc: many jobs and trees, and aggregation packets arriving, when it goes.
ip -n nsc link add v0 type veth peer name v1
ip -n nsc addr add 10.9.0.1/24 dev v0
ip -n nsc addr add 10.9.0.2/24 dev v1
ip -n nsc link set v0 up
ip -n nsc link set v1 up
for j in $(seq 1 20); do
	netagg_in nsc job add "$j" window 16
	netagg_in nsc tree add job "$j" tree 0 role root child 10.9.0.1
	netagg_in nsc tree add job "$j" tree 1 role aggregator parent 10.9.0.9 child 10.9.0.1
done
ip netns exec nsc "$NETAGG_SEND" --dst 10.9.0.2 --job 3 --tree 0 --vids 50 >/dev/null 2>&1
ip netns del nsc
NS_LIST=(nsa nsb)
check "namespace with 20 jobs and 40 trees deleted, then the module unloads" \
	unload_under_traffic
ktap_finish

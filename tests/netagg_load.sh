#!/bin/bash
# Module load and unload: the family appears and goes, repeated loads work,
# and unloading with jobs configured in several namespaces frees everything
# (the module WARNs at unload if any job or tree is left; the runner fails
# on any WARNING in the kernel log).
source "$(dirname "$0")/lib.sh"
require_root
trap 'cleanup_ns; module_unload' EXIT

# insmod, unlike modprobe, loads none of the modules netagg.ko needs.
module_deps || fail_setup "the modules netagg.ko depends on do not load"
ktap_plan 12
module_unload
check "insmod netagg.ko" insmod "$NETAGG_KO"
check "generic netlink family netagg is registered" genl ctrl get name netagg
version=$(cat "$NETAGG_ROOT/VERSION")
check_eq "netagg show works with nothing configured" \
	"module: $version
namespace: jobs 0/16384 memory 0/1073741824 dscp 56 port 7177" "$("$NETAGG" show 2>&1)"
check_eq "the module's version is the project's: modinfo, netagg -j show" \
	"$version $version" \
	"$(modinfo -F version "$NETAGG_KO") $("$NETAGG" -j show | jq -r .namespace.module_version)"
check "rmmod netagg" rmmod netagg
check_err "the CLI says when the module is not loaded" \
	"netagg module not loaded" "$NETAGG" show

ok=0
for i in 1 2 3; do
	insmod "$NETAGG_KO" && "$NETAGG" job add "$i" && rmmod netagg && ok=$((ok + 1))
done
check_eq "three load / configure / unload cycles" 3 "$ok"

module_load
setup_ns load_a load_b
for ns in load_a load_b; do
	for j in 1 2 3; do
		netagg_in $ns job add $j window 8
		netagg_in $ns tree add job $j tree 0 role root child 10.0.0.1 child 10.0.0.2
		netagg_in $ns tree add job $j tree 1 role aggregator parent 10.0.0.9 child 10.0.0.3
	done
done
"$NETAGG" job add 42
njobs() { "$@" -j show | jq '.jobs | length'; }
check_eq "jobs configured in two namespaces and the initial one" "3 3 1" \
	"$(njobs netagg_in load_a) $(njobs netagg_in load_b) $(njobs "$NETAGG")"
check "rmmod with jobs and trees configured" rmmod netagg
check_eq "no leak reported at unload" 0 "$(dmesg | grep -c 'netagg: .* leaked')"
check "the namespaces outlive the module" ip netns exec load_a true
check "insmod again: the namespaces start empty" \
	bash -c "insmod '$NETAGG_KO' && [ \"\$(ip netns exec load_a '$NETAGG' show | tail -n 1)\" = 'namespace: jobs 0/16384 memory 0/1073741824 dscp 56 port 7177' ]"
ktap_finish

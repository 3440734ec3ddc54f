#!/bin/bash
# The booted kernel has every option tests/config names: =y built in, =m
# built in or a module. One case per option, so a kernel that lacks one
# says which, instead of a test further on failing for a reason of its own.
source "$(dirname "$0")/lib.sh"
trap 'cleanup_ns' EXIT

config=/boot/config-$(uname -r)
[ -r "$config" ] || fail_setup "no $config to check the options against"
# Not mapfile < <(...): a minimal /dev may have no /dev/fd.
read -r -d '' -a wants <<<"$(grep -E '^CONFIG_[A-Z0-9_]+=[ym]$' "$NETAGG_ROOT/tests/config")"

ktap_plan "${#wants[@]}"
for want in "${wants[@]}"; do
	opt=${want%%=*}
	have=$(grep -E "^$opt=" "$config")
	case ${want#*=}:${have#*=} in
	y:y | m:y | m:m) ktap_result ok "$want" ;;
	*) ktap_result fail "$want" "the kernel has: ${have:-not set}" ;;
	esac
done
ktap_finish

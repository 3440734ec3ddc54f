#!/bin/bash
# Only CAP_NET_ADMIN over a namespace changes its netagg state; reading is
# open to everyone. A user namespace's root administers its own network
# namespace and nothing else.
source "$(dirname "$0")/lib.sh"
require_root
trap 'cleanup_ns; module_unload' EXIT

module_load
"$NETAGG" job add 7
"$NETAGG" tree add job 7 tree 0 role root child 10.0.0.1
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$NETAGG" "$@"; }

ktap_plan 13
check_err "unprivileged job add" "Operation not permitted" nobody job add 8
check_err "unprivileged job del" "Operation not permitted" nobody job del 7
check_err "unprivileged tree add" "Operation not permitted" nobody tree add job 7 tree 1 role root child 10.0.0.1
check_err "unprivileged tree set" "Operation not permitted" nobody tree set job 7 tree 0 child 10.0.0.2
check_err "unprivileged tree del" "Operation not permitted" nobody tree del job 7 tree 0
check_err "unprivileged reset" "Operation not permitted" nobody reset
check_err "unprivileged set" "Operation not permitted" nobody set max-jobs 5
check "unprivileged show" nobody show
check "unprivileged stats" nobody stats
check_eq "nothing changed" '[[7],[0],16384]' \
	"$("$NETAGG" -j show | jq -c '[[.jobs[].jid], [.jobs[0].trees[].tid], .namespace.max_jobs]')"
check_err "a user namespace's root cannot change the initial namespace" "Operation not permitted" \
	unshare --user --map-root-user "$NETAGG" job add 9
check_eq "a user namespace's root configures its own network namespace" '[1]' \
	"$(unshare --user --map-root-user --net sh -c "'$NETAGG' job add 1 && '$NETAGG' -j show" | jq -c '[.jobs[].jid]')"
check_eq "which stays out of the initial namespace" '[7]' "$("$NETAGG" -j show | jq -c '[.jobs[].jid]')"
ktap_finish

#!/bin/bash
# Hostile requests to the netagg family: attributes of the wrong length or
# nesting (an IPv6 child of 4 bytes too), two parents (an IPv4 and an IPv6
# one), a child's port out of place or 0, unknown ones, ones another
# command takes (below and past the last one the command takes: each
# command's policy ends at its last attribute), a nest of garbage, a
# message cut in the middle of an attribute, bad header bits, an attribute
# to a command that takes none (a do, a dump: on 6.12 the module gives such
# split ops the core's reject-all policy, or the core would take them
# unread). Each is
# rejected with a message saying what was wrong, and changes nothing: the
# namespace's jobs, trees, caps and counters read back the same.
# All in one namespace "ctl" (netagg-badmsg sends them, one a run; a tree
# add names job 7, whose values the module looks at once it found the job,
# and its tree 1, which a request let through would add).
source "$(dirname "$0")/lib.sh"
require_root
trap 'cleanup_ns; module_unload' EXIT
BAD=$NETAGG_ROOT/tests/tools/netagg-badmsg

module_load
setup_ns ctl
N() { netagg_in ctl "$@"; }
state() { N -j show; N -j stats; }
N job add 7 window 8
N tree add job 7 tree 0 role root child 10.0.1.1 child 10.0.1.2

cases=(
	"wrong-length|invalid attribute length"
	"child-length|invalid attribute length"
	"child6-length|an IPv6 address is 16 bytes"
	"parent-both|a tree has one parent: IPv4 or IPv6, not both"
	"port-alone|a child port comes right after its child"
	"port-zero|child port must be 1 to 65535"
	"unknown-attr|Unknown attribute type"
	"foreign-attr|Unsupported attribute"
	"beyond-attr|Unknown attribute type"
	"nested-tree|Unsupported attribute"
	"nested-flag|NLA_F_NESTED not expected"
	"truncated|bytes leftover after parsing attributes"
	"get-attr|Unknown attribute type"
	"dump-attr|Unknown attribute type"
	"reserved|genlmsghdr.reserved field is not 0"
	"flags|ambiguous or reserved bits set in nlmsg_flags"
)
ktap_plan $((${#cases[@]} + 1))
before=$(state)
for c in "${cases[@]}"; do
	name=${c%%|*}
	msg=${c#*|}
	check_eq "$name: rejected with its reason, nothing changed" \
		"rejected (Invalid argument): $msg|same" \
		"$(ip netns exec ctl "$BAD" "$name" 7 2>&1)|$([ "$(state)" = "$before" ] && echo same)"
done
check "and the family still works: a job added and read back" \
	bash -c "ip netns exec ctl '$NETAGG' job add 8 && ip netns exec ctl '$NETAGG' job show 8 >/dev/null"
ktap_finish

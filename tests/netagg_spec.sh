#!/bin/bash
# The netlink spec (uapi/netagg.yaml) with the module, through the kernel's
# own YNL client (tools/net/ynl/cli.py of linux-source-6.12, which knows
# nothing of netagg but the spec): it creates jobs and a tree and reads them
# back, as the netagg CLI sees them; it decodes every attribute and counter
# the module sends (an attribute the spec lacks is an error, not skipped);
# refusals come back with the module's message and the attribute named; and
# events reach a ynl subscriber, decoded as the spec says; the module's
# policies, read back from the kernel (nlctrl's getpolicy), accept exactly
# the attributes the spec lists for each command, with the spec's types.
#
#   w1 10.0.1.1 --- 10.0.1.254 sw (the node ynl talks to)
source "$(dirname "$0")/lib.sh"
require_root
trap 'cleanup_ns; module_unload' EXIT

# Unpacked on the host (tests/run.sh does it): the VM sees it read-only.
if ! ynl=$("$NETAGG_ROOT/scripts/ksrc" ynl 2>&1); then
	echo "1..0 # SKIP no YNL tools: $ynl"
	exit $ksft_skip
fi
SPEC=$NETAGG_ROOT/uapi/netagg.yaml
SCHEMA=$ynl/Documentation/netlink/genetlink-legacy.yaml

module_load
topo_star 1
ktap_plan 16

# Y ARGS...: the ynl client in the namespace, with netagg's spec, its
# replies as JSON.
Y()
{
	ip netns exec sw /usr/bin/python3 "$ynl/tools/net/ynl/cli.py" \
		--spec "$SPEC" --schema "$SCHEMA" --output-json "$@"
}

check_eq "ynl lists the family's commands" \
	"job-new job-del job-get tree-new tree-set tree-del stats-get reset ns-get ns-set" \
	"$(Y --list-ops 2>&1 | awk '{ print $1 }' | tr '\n' ' ' | sed 's/ $//')"
check "job-new with every attribute" \
	Y --do job-new --json '{"job-id": 7, "dtype": "f16", "op": "avg", "window": 32, "mtu": 1400, "mem-cap": 1048576}'
check_eq "job-get reads it back, enums by name" \
	'{"job-id":7,"dtype":"f16","op":"avg","window":32,"mtu":1400,"mem-cap":1048576,"mem-used":0}' \
	"$(Y --do job-get --json '{"job-id": 7}' 2>&1 | jq -c .)"
check_eq "the netagg CLI sees the job ynl made" '["f16","avg",32,1400]' \
	"$(netagg_in sw -j job show 7 | jq -c '.jobs[0] | [.dtype, .op, .window, .mtu]')"

# 10.0.1.1 and 10.0.2.1 as the u32s the spec's big-endian type takes.
check "tree-new: a root with two children (big-endian addresses) and a quorum" \
	Y --do tree-new --json '{"job-id": 7, "tree-id": 3, "role": "root", "child": [167772417, 167772673], "quorum": 1, "evict-ms": 500}'
check_eq "job-get shows the tree: children as addresses, in bit order" \
	'[3,"root",["10.0.1.1","10.0.2.1"],3,1,500]' \
	"$(Y --do job-get --json '{"job-id": 7}' 2>&1 |
		jq -c '.tree[0] | [."tree-id", .role, .child, .bitmap, .quorum, ."evict-ms"]')"
netagg_in sw job add 9 dtype i32
check_eq "a dump of job-get holds both jobs" '[7,9]' \
	"$(Y --dump job-get 2>&1 | jq -c '[.[]."job-id"] | sort')"

# Every counter the module sends is one the spec names (or ynl fails).
netagg_in sw tree add job 9 tree 0 role root child 10.0.3.1
check_eq "stats-get: every counter of every job and tree decodes" '[7,9]' \
	"$(Y --dump stats-get 2>&1 | jq -c '[.[] | select(.stats.rx == 0 and (.tree | length) == 1) | ."job-id"] | sort')"
check_eq "ns-get: the namespace's caps and counters decode" '[16384,2,0]' \
	"$(Y --do ns-get 2>&1 | jq -c '[."max-jobs", ."num-jobs", .stats."ns-seen"]')"

# Refusals: the module's words, and what ynl makes of the attribute named.
out=$(Y --do job-new --json '{"job-id": 7}' 2>&1)
check_eq "a job that exists: refused with the module's message" "job already exists" \
	"$(grep -o 'job already exists' <<<"$out")"
out=$(Y --do job-new --json '{"dtype": "f32"}' 2>&1)
if [[ $out == *"missing job id"* && $out == *"'miss-type': 'job-id'"* ]]; then
	ktap_result ok "no job id: the message and the missing attribute, named by the spec"
else
	ktap_result fail "no job id: the message and the missing attribute, named by the spec" "$out"
fi
out=$(Y --do job-new --json '{"job-id": 11, "window": 0}' 2>&1)
if [[ $out == *"window must be 1 to 4096"* && $out == *"'bad-attr': '.window'"* ]]; then
	ktap_result ok "window 0: the message and the attribute at fault"
else
	ktap_result fail "window 0: the message and the attribute at fault" "$out"
fi

# The module's policies, as the kernel reports them, against the spec: each
# command's accepted attributes and their types (the policies are rendered
# from the spec, its big-endian addresses and ports as the u32 and u16 the
# kernel's policy dump describes, its IPv6 addresses as binary).
ip netns exec sw /usr/bin/python3 "$ynl/tools/net/ynl/cli.py" --output-json \
	--spec "$ynl/Documentation/netlink/specs/nlctrl.yaml" --schema "$SCHEMA" \
	--dump getpolicy --json '{"family-name": "netagg"}' >"$TEST_TMP/policy.json" 2>&1
out=$(/usr/bin/python3 -c '
import json, sys, yaml
spec = yaml.safe_load(open(sys.argv[1]))
attrs = next(s for s in spec["attribute-sets"] if s["name"] == "netagg")["attributes"]
by_name = {a["name"]: a for a in attrs}
name_of = {a.get("value", i): a["name"] for i, a in enumerate(attrs)}
cmd_of = {op["name"]: i for i, op in enumerate(spec["operations"]["list"])}
types = {"u8": "u8", "u16": "u16", "u32": "u32", "u64": "u64", "flag": "flag",
         "nest": "nested", "binary": "binary"}
policies, do_policy = {}, {}
for m in json.load(open(sys.argv[2])):
    if "policy" in m:
        p = m["policy"]
        policies.setdefault(p["policy-id"], {})[name_of[p["attr-id"]]] = p["type"]
    if "do" in m.get("op-policy", {}):
        do_policy[m["op-policy"]["op-id"]] = m["op-policy"]["do"]
bad, asked = [], 0
for op in spec["operations"]["list"]:
    req = op.get("do", {}).get("request", {}).get("attributes", [])
    asked += "request" in op.get("do", {})
    want = {a: types[by_name[a]["type"]] for a in req}
    got = policies.get(do_policy.get(cmd_of[op["name"]]), {})
    if want != got:
        name = op["name"]
        bad.append(f"{name}: spec {sorted(want.items())}, kernel {sorted(got.items())}")
print("\n".join(bad) if bad else f"{asked} commands match")
' "$SPEC" "$TEST_TMP/policy.json" 2>&1)
check_eq "the module's policies accept what the spec lists, typed as it says" \
	"8 commands match" "$out"

check "job-del through ynl" Y --do job-del --json '{"job-id": 7}'
check_eq "... and the job is gone" "[9]" \
	"$(netagg_in sw -j show | jq -c '[.jobs[].jid]')"

# An event: job 5's second child, 10.0.2.1, never sends; once w1's
# contribution to VID 0 has waited 300 ms for it, sw evicts it and tells
# the events group, VID 0 then complete without it (the event says where
# the tree is when it is sent: at VID 1). A subscriber through the ynl
# library, which says when it has subscribed and then waits 20 s at most.
netagg_in sw job add 5
netagg_in sw tree add job 5 tree 0 role root child 10.0.1.1 child 10.0.2.1 evict 300
ip netns exec sw /usr/bin/python3 -c '
import json, sys, time
sys.path.insert(0, sys.argv[1] + "/tools/net/ynl")
from lib import YnlFamily
ynl = YnlFamily(sys.argv[2], sys.argv[3])
ynl.ntf_subscribe("events")
print("subscribed", flush=True)
end = time.time() + 20
while not ynl.async_msg_queue and time.time() < end:
    ynl.check_ntf()
    time.sleep(0.1)
print(json.dumps(ynl.async_msg_queue))
' "$ynl" "$SPEC" "$SCHEMA" >"$TEST_TMP/events" 2>&1 &
for i in $(seq 300); do
	grep -q subscribed "$TEST_TMP/events" && break
	sleep 0.1
done
ip netns exec w1 "$NETAGG_SEND" --dst 10.0.1.254 --job 5 --tree 0 --vid 0 >/dev/null
wait $!
check_eq "an eviction reaches a ynl subscriber, decoded by the spec (VID 0 waited)" \
	'[{"name":"event","msg":{"event":"child-evicted","job-id":5,"tree-id":0,"child":["10.0.2.1"],"silent-ms":true,"round":0,"session":0,"expected-vid":0}}]' \
	"$(sed -n 2p "$TEST_TMP/events" | jq -c '[.[] | .msg."silent-ms" |= (. >= 300)]' 2>&1 ||
		cat "$TEST_TMP/events")"

ktap_finish

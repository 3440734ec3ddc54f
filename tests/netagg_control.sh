#!/bin/bash
# Every control operation of the netagg family, and every rejection with the
# kernel's own message. All in one namespace "ctl"; state read back as JSON.
source "$(dirname "$0")/lib.sh"
require_root
trap 'cleanup_ns; module_unload' EXIT

module_load
setup_ns ctl
N() { netagg_in ctl "$@"; }
J() { N -j show | jq -c "$1"; }

ktap_plan 91

# Jobs
check "job add with defaults" N job add 7
check_eq "defaults: f32 sum window 64 mtu 1500 memcap 64M, no key, no tree" \
	'{"jid":7,"dtype":"f32","op":"sum","window":64,"mtu":1500,"mem_cap":67108864,"keyed":false,"mem_used":0,"trees":[]}' \
	"$(J '.jobs[] | select(.jid == 7)')"
check "job add with every option" N job add 8 dtype i32 op avg window 128 mtu 9000 memcap 256M
check_eq "options read back" '["i32","avg",128,9000,268435456]' \
	"$(J '.jobs[] | select(.jid == 8) | [.dtype, .op, .window, .mtu, .mem_cap]')"
check_eq "job show JID shows that job only" '[8]' "$(N -j job show 8 | jq -c '[.jobs[].jid]')"
check_eq "the largest JID is accepted" 0 "$(N job add 4294967295; echo $?)"
check_err "duplicate JID" "job already exists" N job add 7
check_err "window 0" "window must be 1 to 4096" N job add 9 window 0
check_err "window too large" "window must be 1 to 4096" N job add 9 window 4097
check "window at the limit" N job add 9 window 4096 mtu 1500 memcap 64M
check_err "mtu too small" "mtu must be 128 to 9000" N job add 10 mtu 127
check_err "mtu too large" "mtu must be 128 to 9000" N job add 10 mtu 9001
check_err "bad dtype number reaches the kernel" "unknown dtype (f32, i32, f16 or bf16)" N job add 10 dtype 5
check_err "bad dtype name stops in the CLI" "dtype" N job add 10 dtype f8
check_err "bad op number reaches the kernel" "unknown op (sum or avg)" N job add 10 op 7
check_err "memory cap below one tree" \
	"memory cap is below what one tree needs (window x mtu)" N job add 10 memcap 1K
check_err "job del of an unknown JID" "no such job" N job del 99
check_err "job show of an unknown JID" "no such job" N job show 99
check_err "non-numeric JID stops in the CLI" "netagg:" N job add x
check "job del" N job del 4294967295
check_eq "jobs left: 7 8 9" '[7,8,9]' "$(J '[.jobs[].jid]')"

# Trees
check "tree add: aggregator with two children" \
	N tree add job 7 tree 0 role aggregator parent 10.0.0.1 child 10.0.1.1 child 10.0.1.2
check_eq "tree read back: role, parent, no round yet, bitmap, children by bit" \
	'{"tid":0,"role":"aggregator","parent":"10.0.0.1","round":null,"session":null,"round_state":"none","regrouped":false,"expected_vid":0,"quorum":"all","straggler_ms":0,"evict_ms":0,"parent_lost":false,"bitmap":3,"children":[{"addr":"10.0.1.1","port":null,"bit":0},{"addr":"10.0.1.2","port":null,"bit":1}],"evicted":[]}' \
	"$(J '.jobs[] | select(.jid == 7) | .trees[0] | del(.mem_used)')"
check "tree add: root" N tree add job 7 tree 1 role root child 10.0.1.1
check_eq "a root has no parent in the dump" null "$(J '.jobs[] | select(.jid == 7) | .trees[1].parent')"
check_err "duplicate TID" "tree already exists in this job" \
	N tree add job 7 tree 0 role root child 10.0.1.1
check_err "tree of an unknown job" "no such job" N tree add job 99 tree 0 role root child 10.0.1.1
check_err "aggregator without a parent" "an aggregator needs a parent" \
	N tree add job 7 tree 2 role aggregator child 10.0.1.1
check_err "root with a parent" "a root has no parent" \
	N tree add job 7 tree 2 role root parent 10.0.0.1 child 10.0.1.1
check_err "tree without children" "a tree needs at least one child" N tree add job 7 tree 2 role root
check_err "tree without a role" "missing role (root or aggregator)" N tree add job 7 tree 2 child 10.0.1.1
check_err "bad role number reaches the kernel" "unknown role (root or aggregator)" \
	N tree add job 7 tree 2 role 9 child 10.0.1.1
check_err "child listed twice" "child listed twice" \
	N tree add job 7 tree 2 role root child 10.0.1.1 child 10.0.1.1
check_err "parent among the children" "the parent cannot also be a child" \
	N tree add job 7 tree 2 role aggregator parent 10.0.1.1 child 10.0.1.1
check_err "child 0.0.0.0" "child must be a unicast IPv4 address" N tree add job 7 tree 2 role root child 0.0.0.0
check_err "multicast child" "child must be a unicast IPv4 address" N tree add job 7 tree 2 role root child 224.0.0.1
check_err "broadcast parent" "parent must be a unicast IPv4 address" \
	N tree add job 7 tree 2 role aggregator parent 255.255.255.255 child 10.0.1.1
check_err "tree id 64" "tree id must be below 64" N tree add job 7 tree 64 role root child 10.0.1.1
check "tree id 63" N tree add job 7 tree 63 role root child 10.0.1.1

kids64=() kids65=()
for i in $(seq 1 65); do
	[ "$i" -le 64 ] && kids64+=(child "10.1.0.$i")
	kids65+=(child "10.1.0.$i")
done
check "64 children (the limit)" N tree add job 8 tree 0 role root "${kids64[@]}"
# (text output: jq reads the 64-bit bitmap as a double)
check_eq "64 children: every bit set" "1 64" \
	"$(N job show 8 | grep -cw 'bitmap 0xffffffffffffffff') $(N job show 8 | grep -c 'child 10.1.0.')"
check_err "65 children" "too many children (at most 64)" N tree add job 8 tree 1 role root "${kids65[@]}"

# Live bitmap changes: children that stay keep their bit.
check "tree set: new child list" N tree set job 7 tree 0 child 10.0.1.2 child 10.0.1.3
check_eq "10.0.1.2 kept bit 1, 10.0.1.3 took the freed bit 0" \
	'[3,[{"addr":"10.0.1.3","port":null,"bit":0},{"addr":"10.0.1.2","port":null,"bit":1}]]' \
	"$(J '.jobs[] | select(.jid == 7) | .trees[0] | [.bitmap, .children]')"
check "tree set: new parent" N tree set job 7 tree 0 parent 10.0.0.2
check_eq "parent changed, children as they were" '["10.0.0.2",3]' \
	"$(J '.jobs[] | select(.jid == 7) | .trees[0] | [.parent, .bitmap]')"
check_err "tree set with nothing to change" \
	"nothing to change: give a parent, children, a quorum, a straggler delay or an eviction time" \
	N tree set job 7 tree 0
check_err "tree set: a parent for a root" "a root has no parent" N tree set job 7 tree 1 parent 10.0.0.1
check_err "tree set: the role cannot change" \
	"the role of a tree cannot change: delete the tree and add it again" N tree set job 7 tree 1 role aggregator
check_err "tree set: unknown tree" "no such tree in this job" N tree set job 7 tree 5 child 10.0.1.1
check_err "tree set: parent made a child" "the parent cannot also be a child" \
	N tree set job 7 tree 0 child 10.0.0.2

# Children by port: several workers behind one address, a child each.
check "tree add: children ADDR:PORT, two behind one address" \
	N tree add job 7 tree 3 role root child 10.0.5.1:7178 child 10.0.5.1:7179 child 10.0.6.1
check_eq "read back with their ports (JSON: port, null for any; text: ADDR:PORT)" \
	'[{"addr":"10.0.5.1","port":7178,"bit":0},{"addr":"10.0.5.1","port":7179,"bit":1},{"addr":"10.0.6.1","port":null,"bit":2}]|child 10.0.5.1:7179 bit 1' \
	"$(J '.jobs[] | select(.jid == 7) | .trees[] | select(.tid == 3) | .children')|$(N job show 7 | grep -o 'child 10.0.5.1:7179 bit 1')"
check "tree set: by address and port, a child kept keeps its bit" \
	N tree set job 7 tree 3 child 10.0.6.1 child 10.0.5.1:7179
check_eq "10.0.5.1:7179 kept bit 1, 10.0.6.1 bit 2" '[6,[1,2]]' \
	"$(J '.jobs[] | select(.jid == 7) | .trees[] | select(.tid == 3) | [.bitmap, [.children[].bit]]')"
check_err "the same address and port twice" "child listed twice" \
	N tree add job 7 tree 4 role root child 10.0.5.1:7178 child 10.0.5.1:7178
check_err "an address with and without a port" \
	"an address is a child with ports or without one, not both" \
	N tree add job 7 tree 4 role root child 10.0.5.1:7178 child 10.0.5.1
check_err "port 0 (the CLI)" "port 0 is out of range (1-65535)" \
	N tree add job 7 tree 4 role root child 10.0.5.1:0
N tree del job 7 tree 3

# Memory accounting and caps
tree7() { J ".jobs[] | select(.jid == 7) | .trees[] | select(.tid == $1) | .mem_used"; }
tree_mem=$(tree7 1)	# one child
check_eq "a job's memory is the sum of its trees' (0, 1, 63)" \
	"$(J '.jobs[] | select(.jid == 7) | .mem_used')" \
	"$(J '.jobs[] | select(.jid == 7) | [.trees[].mem_used] | add')"
check_eq "namespace memory is the sum of the jobs'" \
	"$(J '[.jobs[].mem_used] | add')" "$(J '.namespace.mem_used')"
check_eq "a tree of two children holds more than one of one (packets held)" yes \
	"$([ "$(tree7 0)" -gt "$tree_mem" ] && [ "$(tree7 63)" = "$tree_mem" ] && echo yes)"
job7=$(J '.jobs[] | select(.jid == 7) | .mem_used')
N tree set job 7 tree 1 child 10.0.1.1 child 10.0.1.2
check_eq "tree set to two children charges what a tree of two takes" \
	"$(tree7 0) $((job7 - tree_mem + $(tree7 0)))" \
	"$(tree7 1) $(J '.jobs[] | select(.jid == 7) | .mem_used')"
N tree set job 7 tree 1 child 10.0.1.1
check_eq "and back to one child, what it took before" "$tree_mem $job7" \
	"$(tree7 1) $(J '.jobs[] | select(.jid == 7) | .mem_used')"
N job add 20 memcap "$tree_mem"
check "a job whose cap holds exactly one tree takes one" N tree add job 20 tree 0 role root child 10.0.1.1
check_err "the second tree exceeds the job's cap" "tree would exceed the job's memory cap" \
	N tree add job 20 tree 1 role root child 10.0.1.1
check_err "a second child would exceed the job's cap" "tree would exceed the job's memory cap" \
	N tree set job 20 tree 0 child 10.0.1.1 child 10.0.1.2
used=$(J '.namespace.mem_used')
check_err "memory limit below the memory in use" \
	"memory limit is below the memory in use: delete trees first" N set mem-limit $((used - 1))
check "memory limit set to exactly the memory in use" N set mem-limit "$used"
check_err "a tree beyond the namespace limit" "tree would exceed the namespace's memory limit" \
	N tree add job 7 tree 3 role root child 10.0.1.1
check "tree del" N tree del job 20 tree 0
check_eq "tree del gives its memory back" "$((used - tree_mem)) 0" \
	"$(J '.namespace.mem_used') $(J '.jobs[] | select(.jid == 20) | .mem_used')"
check_err "tree del of an unknown tree" "no such tree in this job" N tree del job 20 tree 0

njobs=$(J '.namespace.num_jobs')
check "job cap set to the number of jobs" N set max-jobs "$njobs"
check_err "a job beyond the cap" "job cap of this namespace reached" N job add 30
check_err "job cap below the number of jobs" "job cap is below the number of jobs: delete jobs first" \
	N set max-jobs $((njobs - 1))
check_err "job cap 0" "job cap must be 1 to 65536" N set max-jobs 0
check_err "job cap above the hard limit" "job cap must be 1 to 65536" N set max-jobs 65537

# Reset
check_err "reset of an unknown tree" "no such tree in this job" N reset job 7 tree 9
check "reset job 7" N reset job 7
check "reset everything" N reset
check_eq "after reset: no job, no memory held, caps kept" '[0,0,[],'"$njobs"']' \
	"$(J '[.namespace.num_jobs, .namespace.mem_used, .jobs, .namespace.max_jobs]')"

# Dumps larger than one netlink message buffer
N set max-jobs 65536
for j in $(seq 1000 1399); do N job add "$j" window 1 mtu 128 || break; done
check_eq "a dump of 400 jobs returns each once, in order" "$(seq 1000 1399 | jq -sc .)" "$(J '[.jobs[].jid]')"

# Batch mode (-b FILE): one command a line, over one socket
B=$TEST_TMP/batch
jids() { J "[.jobs[].jid | select(. > 500 and . < 600)]"; }
printf '%s\n' '# three jobs, then the listing' 'job add 501' \
	'job add 502 window 8	# a comment after a command' '' '   ' 'job add 503' 'job show' >"$B"
check_eq "batch: three job adds, then job show lists them" '[501,502,503]' \
	"$(N -j -b "$B" | jq -c '[.jobs[].jid | select(. > 500 and . < 600)]')"
check_eq "batch from stdin, -j: one JSON value per command" "$(printf '501\n502')" \
	"$(printf 'job show 501\njob show 502\n' | N -j -b - | jq -c '.jobs[].jid')"
printf '%s\n' 'job add 511' 'job add 501' 'job add 512' >"$B"
out=$(N -b "$B" 2>&1)
rc=$?
check_eq "batch: a kernel error on line 2 ends the batch with its message and exit code 1" \
	"1 netagg: line 2: Error: job already exists" "$rc $out"
check_eq "batch: line 1 ran, line 3 did not" '[501,502,503,511]' "$(jids)"
printf '%s\n' 'job add 521' 'job add x' 'job add 522' >"$B"
out=$(N -b "$B" 2>&1)
rc=$?
check_eq "batch: a usage error on line 2 ends the batch with exit code 2" \
	'2 netagg: line 2: JID "x" is not a number [501,502,503,511,521]' "$rc $out $(jids)"
printf '%s\n' 'job add 531' 'job add 501' 'job add 532' >"$B"
out=$(N -force -b "$B" 2>&1)
rc=$?
check_eq "batch -force: line 2 fails, line 3 runs too, exit code 1" \
	"1 netagg: line 2: Error: job already exists [501,502,503,511,521,531,532]" "$rc $out $(jids)"
check_err "batch: a missing file" "cannot open" N -b "$TEST_TMP/none"
seq 100000 109999 | sed 's/^/job add /' >"$B"
check "batch: 10000 job adds in one run" N -b "$B"
check_eq "batch: the 10000 jobs are there" 10000 "$(J '[.jobs[].jid | select(. >= 100000)] | length')"

ktap_finish

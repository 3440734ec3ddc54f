#!/bin/bash
# The topology tool's plans, on the host (nothing is applied): for the
# demo's two racks it gives the configuration the demo types by hand, and
# over IPv6 (racks6.topo) the same trees with IPv6 addresses, the lab's
# apply (lab/rat-netns.py) running the commands of IPv4 in IPv6's forms (ip
# run as a stand-in that logs them); on a fat-tree of 2 pods x 2 racks x 2 workers a tree follows the
# racks and pods, each tree with its own root and pod switches; two jobs
# are kept off each other's links, three that cannot be are reported; a
# worker no root reaches, a region inside itself, a topology of both
# families, IPv6 addresses that are no host's and other bad files are
# errors naming what is wrong. tests/netagg_rat.sh applies the plans in
# the VM.
cd "$(dirname "$0")/.." || exit 1
source tests/lib.sh
PY=/usr/bin/python3
T=tests/topologies
trap 'rm -rf "$TEST_TMP"' EXIT

rat() { PYTHONPATH=python "$PY" -m netagg.rat "$@"; }
rat_netns() { PYTHONPATH=python "$PY" lab/rat-netns.py "$@"; }

# bad NAME WANT FILE-TEXT: the tool refuses the topology and job in
# FILE-TEXT with exit 1 and a message containing WANT.
bad()
{
	local name=$1 want=$2 out rc
	printf '%s\n' "$3" >"$TEST_TMP/bad.topo"
	out=$(rat plan "$TEST_TMP/bad.topo" 2>&1)
	rc=$?
	if [ $rc -eq 1 ] && [[ $out == *"$want"* ]]; then
		ktap_result ok "$name"
	else
		ktap_result fail "$name" "wanted exit 1 and \"$want\"; got exit $rc: $out"
	fi
}

ktap_plan 37

# The demo's configuration of its second part, as it types it: its
# `netagg_in NODE tree add ...` lines (continuations joined), by node.
demo_trees()
{
	sed -e ':a' -e '/\\$/{N;s/\\\n[[:space:]]*//;ba' -e '}' scripts/demo.sh |
		sed -n 's/^netagg_in \(root\|agg[12]\) \(tree add .*\)$/\1: \2/p' | sort
}
rat plan $T/racks.topo $T/racks.jobs -o "$TEST_TMP/racks" >/dev/null
check_eq "two racks: every node's trees are those the demo configures by hand" \
	"$(demo_trees)" \
	"$(cd "$TEST_TMP/racks" && grep -H '^tree add' root.batch agg1.batch agg2.batch |
		sed 's/\.batch:/: /' | sort)"
demo_job=$(sed -n 's/^for n in root agg1 agg2; do netagg_in $n \(job add [^;]*\);.*/\1/p' scripts/demo.sh)
check_eq "... and adds the job on each node as the demo does" \
	"agg1: $demo_job|agg2: $demo_job|root: $demo_job" \
	"$(cd "$TEST_TMP/racks" && grep -H '^job add' root.batch agg1.batch agg2.batch |
		sed 's/\.batch:/: /' | sort | paste -sd'|')"
check_eq "... and workers send where the demo's do (10.RACK.0.254), ranks in job order" \
	"0=10.1.0.254 0 0=10.1.0.254 2 0=10.2.0.254 3 0=10.2.0.254 5" \
	"$(for w in 1 3 4 6; do (source "$TEST_TMP/racks/w$w.7.env"
		echo "$NETAGG_TREES $NETAGG_RANK"); done | xargs)"

# A packets line: the namespace's marks first in each batch, and every
# worker's (and the job's) environment with them.
echo "packets port 9000 dscp 46" >"$TEST_TMP/packets.topo"
rat plan $T/racks.topo $T/racks.jobs "$TEST_TMP/packets.topo" -o "$TEST_TMP/marks" >/dev/null
check_eq "a packets line: every node's batch begins with netagg set dscp 46 port 9000" \
	"agg1: set dscp 46 port 9000|agg2: set dscp 46 port 9000|root: set dscp 46 port 9000" \
	"$(cd "$TEST_TMP/marks" && for n in agg1 agg2 root; do echo "$n: $(head -n 1 "$n.batch")"; done |
		paste -sd'|')"
check_eq "... every worker's and the job's environment: NETAGG_DSCP=46, NETAGG_NODE_PORT=9000" \
	"7 7" "$(cd "$TEST_TMP/marks" && grep -lx NETAGG_DSCP=46 ./*.env | xargs grep -lx NETAGG_NODE_PORT=9000 |
		wc -l) $(find "$TEST_TMP/marks" -name '*.env' | wc -l)"

# The same racks over IPv6 (racks6.topo: 10.A.B.C is fd00:A:B::C/64).
rat plan -j $T/racks.topo $T/racks.jobs >"$TEST_TMP/racks.json"
rat plan -j $T/racks6.topo $T/racks.jobs -o "$TEST_TMP/racks6" >"$TEST_TMP/racks6.json"
check_eq "two racks over IPv6: the trees of IPv4's, the same nodes in the same places" \
	"$(jq -c .trees "$TEST_TMP/racks.json")" "$(jq -c .trees "$TEST_TMP/racks6.json")"
check_eq "... every node's trees: parents and children by their IPv6 addresses" \
	"agg1: tree add job 7 tree 0 role aggregator parent fd00:9:1::254 child fd00:1::1 child fd00:1::2 child fd00:1::3|agg2: tree add job 7 tree 0 role aggregator parent fd00:9:2::254 child fd00:2::4 child fd00:2::5 child fd00:2::6|root: tree add job 7 tree 0 role root child fd00:9:1::1 child fd00:9:2::1" \
	"$(cd "$TEST_TMP/racks6" && grep -H '^tree add' root.batch agg1.batch agg2.batch |
		sed 's/\.batch:/: /' | sort | paste -sd'|')"
check_eq "... workers send to their aggregator's IPv6 address (fd00:RACK::254), ranks in job order" \
	"0=fd00:1::254 0 0=fd00:1::254 2 0=fd00:2::254 3 0=fd00:2::254 5" \
	"$(for w in 1 3 4 6; do (source "$TEST_TMP/racks6/w$w.7.env"
		echo "$NETAGG_TREES $NETAGG_RANK"); done | xargs)"

# lab/rat-netns.py apply with a stand-in for ip(8) that logs its command
# lines (and the batch netagg -b reads), for racks.topo and racks6.topo.
mkdir -p "$TEST_TMP/bin"
cat >"$TEST_TMP/bin/ip" <<'EOF2'
#!/bin/bash
echo "ip $*" >>"$IP_LOG"
case "$*" in *" -b -") sed 's/^/  /' >>"$IP_LOG" ;; esac
exit 0
EOF2
chmod +x "$TEST_TMP/bin/ip"
for f in racks racks6; do
	IP_LOG=$TEST_TMP/$f.ip PATH=$TEST_TMP/bin:$PATH \
		rat_netns apply $T/$f.topo $T/racks.jobs --prefix r6- --netagg netagg >/dev/null
done
check_eq "apply over IPv6: IPv6 forwarding, addresses without DAD, /128 routes (ip -6)" \
	"ip netns exec r6-root sysctl -qw net.ipv6.conf.all.forwarding=1|ip -n r6-agg1 -6 addr add fd00:1::254/64 dev br0 nodad|ip -n r6-w1 -6 route replace fd00:9:2::254/128 via fd00:1::254" \
	"$(grep -Fx -e 'ip netns exec r6-root sysctl -qw net.ipv6.conf.all.forwarding=1' \
		-e 'ip -n r6-agg1 -6 addr add fd00:1::254/64 dev br0 nodad' \
		-e 'ip -n r6-w1 -6 route replace fd00:9:2::254/128 via fd00:1::254' \
		"$TEST_TMP/racks6.ip" | paste -sd'|')"
# IPv4's commands in IPv6's forms: 10.A.B.C/24 fd00:A:B::C/64, /32 /128.
as_v6()
{
	sed -E -e 's/10\.([0-9]+)\.([0-9]+)\.([0-9]+)/fd00:\1:\2::\3/g' -e 's/:0::/::/g' \
		-e 's|/24\b|/64|g' -e 's|/32\b|/128|g' \
		-e 's/net\.ipv4\.ip_forward=1/net.ipv6.conf.all.forwarding=1/' \
		-e 's/^ip -n ([^ ]+) (addr|route) /ip -n \1 -6 \2 /' -e '/ -6 addr add /s/$/ nodad/' "$1"
}
check_eq "... every other command, and the batches, IPv4's in IPv6's forms ($(wc -l <"$TEST_TMP/racks.ip") lines)" \
	"$(as_v6 "$TEST_TMP/racks.ip")" "$(grep -v ' tentative$' "$TEST_TMP/racks6.ip")"
check_eq "... and the nodes configured once no address of the 9 namespaces is tentative" \
	"9 r6-agg1 r6-w6" \
	"$(awk '/ -6 addr show scope global tentative$/ { n++; ns[n] = $3 }
		/ netagg -b -$/ { print n, ns[1], ns[n]; exit }' "$TEST_TMP/racks6.ip")"

rat plan -j $T/fattree.topo $T/fattree.jobs >"$TEST_TMP/ft.json"
check_eq "fat-tree: two trees, roots on the two core switches, three levels each" \
	"core1 3 core2 3" "$(jq -r '.trees[] | "\(.root) \(.depth)"' "$TEST_TMP/ft.json" | xargs)"
parents() { jq -r ".trees[$1].parent | to_entries | map(\"\\(.key)>\\(.value)\") | join(\" \")" "$2"; }
check_eq "... tree 0: workers under their rack's tor, tors under their pod's a, a's under core1" \
	"p1a>core1 p2a>core1 tor11>p1a tor12>p1a tor21>p2a tor22>p2a w1>tor11 w2>tor11 w3>tor12 w4>tor12 w5>tor21 w6>tor21 w7>tor22 w8>tor22" \
	"$(parents 0 "$TEST_TMP/ft.json")"
check_eq "... tree 1: the same tors, then the pods' b switches and core2" \
	"p1b>core2 p2b>core2 tor11>p1b tor12>p1b tor21>p2b tor22>p2b w1>tor11 w2>tor11 w3>tor12 w4>tor12 w5>tor21 w6>tor21 w7>tor22 w8>tor22" \
	"$(parents 1 "$TEST_TMP/ft.json")"
check_eq "... a worker's NETAGG_TREES names its tor for both trees" \
	"0=10.2.2.254,1=10.2.2.254" \
	"$(jq -r '.workers[] | select(.node == "w8") | .env.NETAGG_TREES' "$TEST_TMP/ft.json")"
check_eq "... the job's one environment, for every host: core1's and core2's addresses" \
	"0=10.100.11.2,1=10.100.12.2 8" \
	"$(jq -r '.jobs[] | select(.job == 1) | "\(.env.NETAGG_TREES) \(.env.NETAGG_WORKERS)"' "$TEST_TMP/ft.json")"

rat plan -j $T/fattree.topo $T/fattree-two.jobs >"$TEST_TMP/two.json"
check_eq "two jobs, one worker of each rack apiece: no link carries both" \
	"0 0 core1 core2" \
	"$(jq -r '[(.shared | length), ([.links["2"][]] - ([.links["2"][]] - [.links["3"][]]) | length),
		.trees[0].root, .trees[1].root] | join(" ")' "$TEST_TMP/two.json")"
rat plan $T/fattree.topo $T/fattree-three.jobs >"$TEST_TMP/three.txt"
check_eq "three jobs over both pods: the links they must share are reported, with the jobs" \
	"core1-p1a: jobs 2 4|tor11-w2: jobs 3 4" \
	"$(grep -E '^  (core1-p1a|tor11-w2):' "$TEST_TMP/three.txt" | sed 's/^  //' | paste -sd'|')"

# A host that runs two workers (torchrun --nproc_per_node 2): a child each
# by its port, ranks in order, the host's first rank and port base in its
# environment.
cat >"$TEST_TMP/procs.topo" <<'EOF2'
node sw aggregator
node w1 worker procs 2
node w2 worker
link w1 10.0.1.1/24 sw 10.0.1.254/24
link w2 10.0.2.1/24 sw 10.0.2.254/24
job 5 workers w1 w2
EOF2
rat plan -j "$TEST_TMP/procs.topo" >"$TEST_TMP/procs.json"
check_eq "procs 2: two children of sw by port, three workers, w2 rank 2" \
	"tree add job 5 tree 0 role root child 10.0.1.1:7178 child 10.0.1.1:7179 child 10.0.2.1|3 0 7178 2 null" \
	"$(jq -r '.batches.sw[1]' "$TEST_TMP/procs.json")|$(jq -r '[.workers[0].env.NETAGG_WORKERS, .workers[0].env.NETAGG_RANK, .workers[0].env.NETAGG_PORT, .workers[1].env.NETAGG_RANK, .workers[1].env.NETAGG_PORT] | join(" ")' "$TEST_TMP/procs.json" | sed 's/ $/ null/')"
cat >"$TEST_TMP/procs6.topo" <<'EOF2'
node sw aggregator
node w1 worker procs 2
node w2 worker
link w1 fd00:0:1::1/64 sw fd00:0:1::254/64
link w2 fd00:0:2::1/64 sw fd00:0:2::254/64
job 5 workers w1 w2
EOF2
rat plan -j "$TEST_TMP/procs6.topo" >"$TEST_TMP/procs6.json"
check_eq "procs 2 over IPv6: each process a child of sw by [ADDR]:PORT" \
	"tree add job 5 tree 0 role root child [fd00:0:1::1]:7178 child [fd00:0:1::1]:7179 child fd00:0:2::1|0=fd00:0:1::254 7178" \
	"$(jq -r '.batches.sw[1]' "$TEST_TMP/procs6.json")|$(jq -r '.workers[0].env | "\(.NETAGG_TREES) \(.NETAGG_PORT)"' "$TEST_TMP/procs6.json")"
# A /127 (RFC 6164): both its addresses are hosts', fd00:9:: too.
cat >"$TEST_TMP/p127.topo" <<'EOF2'
node sw aggregator
node w1 worker
node w2 worker
link w1 fd00:9::1/127 sw fd00:9::/127
link w2 fd00:8::1/64 sw fd00:8::254/64
job 1 workers w1 w2
EOF2
rat plan -j "$TEST_TMP/p127.topo" >"$TEST_TMP/p127.json"
check_eq "an IPv6 /127 link: both its addresses hosts' (RFC 6164), fd00:9:: w1's parent" \
	"tree add job 1 tree 0 role root child fd00:9::1 child fd00:8::1|0=fd00:9::" \
	"$(jq -r '.batches.sw[1]' "$TEST_TMP/p127.json")|$(jq -r '.workers[0].env.NETAGG_TREES' "$TEST_TMP/p127.json")"

bad "packets dscp 0: an error naming the range" "packets: dscp 0 is not 1 to 63" "
packets dscp 0"
bad "a second packets line: an error naming the first" ":3: packets is given twice (first at " "
packets port 9000
packets dscp 46"
bad "packets without a value: the syntax" "packets [dscp N] [port P]" "
packets dscp"

bad "procs on a node that is not a worker: an error naming it" \
	"node sw: only a worker runs procs" "
node sw aggregator procs 2"
bad "procs 65: an error naming the limit" "node w1: procs 65 is not 1 to 64" "
node w1 worker procs 65"

bad "a worker unreachable from every candidate root: an error naming it" \
	"worker w9 is unreachable from every candidate root (core)" "
node core aggregator
node s9 switch
node w1 worker
node w9 worker
link w1 10.0.1.1/24 core 10.0.1.254/24
link w9 10.0.9.1/24 s9 10.0.9.254/24
job 1 workers w1 w9"
bad "a region inside itself: an error naming it" \
	":2: region pod1 is inside itself: pod1 in rack1 in pod1" "
region pod1 in rack1
region rack1 in pod1 oversubscribed
node w1 worker in rack1"
bad "a link to a node that is not defined: an error naming it" \
	":3: link to tor9, which is not a node" "
node w1 worker
link w1 10.0.1.1/24 tor9 10.0.1.254/24"
bad "a topology of IPv4 and IPv6 addresses: an error naming the first of the other family" \
	":6: w2's address fd00:0:2::1/64 is IPv6, the topology IPv4 (w1's 10.0.1.1/24 at $TEST_TMP/bad.topo:5): a topology is all IPv4 or all IPv6" "
node sw aggregator
node w1 worker
node w2 worker
link w1 10.0.1.1/24 sw 10.0.1.254/24
link w2 fd00:0:2::1/64 sw fd00:0:2::254/64
job 1 workers w1 w2"
bad "a link-local IPv6 address: an error naming it" \
	":4: w1's address fe80::1/64 is link-local (fe80::/10), which names no interface to send by" "
node sw aggregator
node w1 worker
link w1 fe80::1/64 sw fe80::2/64"
bad "a multicast IPv6 address: an error naming it" \
	":4: sw's address ff02::2/64 is multicast (ff00::/8), not a host address" "
node sw aggregator
node w1 worker
link w1 fd00:1::1/64 sw ff02::2/64"
bad "an IPv6 /128: not a link's subnet, an error naming it" \
	":4: w1's address fd00:1::1/128 is not a host address of a /127 or wider" "
node sw aggregator
node w1 worker
link w1 fd00:1::1/128 sw fd00:1::2/128"
bad "an IPv4-mapped IPv6 address: an error saying to write it as IPv4" \
	":4: w1's address ::ffff:10.0.1.1/120 is IPv4-mapped (::ffff:0:0/96): write 10.0.1.1 in an IPv4 topology" "
node sw aggregator
node w1 worker
link w1 ::ffff:10.0.1.1/120 sw ::ffff:10.0.1.254/120"
bad "a subnet's subnet-router anycast address (ADDR::/64): an error naming it" \
	":4: sw's address fd00:1::/64 is the subnet-router anycast address of fd00:1::/64 (RFC 4291)" "
node sw aggregator
node w1 worker
link w1 fd00:1::1/64 sw fd00:1::/64"

out=$(rat plan $T/racks.topo - 2>&1)
check_eq "a file that cannot be read: exit 1 naming it" "1 netagg.rat: -: No such file or directory" \
	"$? $out"
rat draw $T/racks.topo >/dev/null 2>&1
check_eq "an unknown command is a usage error: exit 2" 2 "$?"

ktap_finish

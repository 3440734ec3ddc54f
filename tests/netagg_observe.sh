#!/bin/bash
# What an operator watches: the counters and the events.
# `netagg stats format prometheus` (Prometheus' text format, as
# node_exporter's textfile collector takes it), after traffic that moves
# many counters: an allreduce, a packet of a bad version, one from a
# stranger to a tree, one of an unknown job. Read by prometheus_client's
# own parser (Debian's python3-prometheus-client): every family a counter
# with its HELP; every counter `netagg -j stats` shows is there, with its
# value, and nothing else; a level's drops one family, labelled by reason.
# As a person reads them: zeros hidden, drops by reason on a line below
# (-d: all). Events with the time they came (monitor -t, -ts, -j -ts).
#
#   w1 10.0.1.1 --+
#   w2 10.0.2.1 --+-- sw 10.0.N.254: root of job 7 (trees 0 and 1, the
#   w3 10.0.3.1 --+   four workers) and of job 9 (tree 0, w1 alone)
#   w4 10.0.4.1 --+   job 11 (tree 0: w1, w2; evict), for an event
source "$(dirname "$0")/lib.sh"
require_root
trap 'cleanup_ns; module_unload' EXIT
PY=/usr/bin/python3

module_load
topo_star 4
kids=(child 10.0.1.1 child 10.0.2.1 child 10.0.3.1 child 10.0.4.1)
netagg_in sw job add 7
netagg_in sw tree add job 7 tree 0 role root "${kids[@]}"
netagg_in sw tree add job 7 tree 1 role root "${kids[@]}"
netagg_in sw job add 9
netagg_in sw tree add job 9 tree 0 role root child 10.0.1.1
send() { ip netns exec "$1" "$NETAGG_SEND" --dst "10.0.${1#w}.254" "${@:2}" >/dev/null; }

# check_prom DESC JSON-STATS PROM: the Prometheus text PROM parses, every
# family a documented counter, and holds exactly the counters of
# JSON-STATS (netagg -j stats), named as netagg_stats.sh's header says.
check_prom() {
	local out
	if out=$("$PY" - "$2" "$3" 2>&1 <<'EOF'
import json, sys
from prometheus_client.parser import text_string_to_metric_families

stats = json.load(open(sys.argv[1]))
want = set()
def add(level, name, value, **labels):
    if name.startswith("drop_"):
        labels["reason"] = name[5:]
        name = "drop"
    want.add((f"netagg_{level}_{name}_total", frozenset(labels.items()), float(value)))
for name, value in stats["namespace"].items():
    add("ns", name[3:] if name.startswith("ns_") else name, value)
for job in stats["jobs"]:
    for name, value in job["stats"].items():
        add("job", name, value, job=str(job["jid"]))
    for tree in job["trees"]:
        for name, value in tree["stats"].items():
            add("tree", name, value, job=str(job["jid"]), tree=str(tree["tid"]))

got = set()
for family in text_string_to_metric_families(open(sys.argv[2]).read()):
    if family.type != "counter" or not family.documentation:
        sys.exit(f"{family.name}: type {family.type}, HELP {family.documentation!r}")
    for s in family.samples:
        if s.name.endswith("_created"):
            continue
        got.add((s.name, frozenset(s.labels.items()), s.value))
if got != want:
    print("missing:", sorted(want - got, key=str))
    print("not in netagg -j stats:", sorted(got - want, key=str))
    sys.exit(1)
print(len(got), "samples")
EOF
	); then
		ktap_result ok "$1"
		echo "# $out"
	else
		ktap_result fail "$1" "$out"
	fi
}

ktap_plan 14
check "an allreduce on job 7's tree 0: exact" star_allreduce 7 100000 1
send w1 --job 7 --version 9	# job 7: drop_version
send w2 --job 9			# job 9, tree 0: drop_not_child (w2 is no child)
send w1 --job 99		# the namespace: ns_unknown_job, the last
check_eq "the hostile packets counted (drop_version, drop_not_child, ns_unknown_job)" "1 1 1" \
	"$(wait_counter 1 sw namespace ns_unknown_job >/dev/null
	   counter sw job 7 drop_version) $(counter sw tree 9 0 drop_not_child) \
$(counter sw namespace ns_unknown_job)"

netagg_in sw -j stats >"$TEST_TMP/stats.json"
check "netagg stats format prometheus" \
	eval "netagg_in sw stats format prometheus >'$TEST_TMP/stats.prom'"
check_prom "it parses, every family a counter with its HELP, and holds every counter of netagg -j stats, values equal" \
	"$TEST_TMP/stats.json" "$TEST_TMP/stats.prom"
check_eq "a level's drops: one family, by reason" \
	"netagg_job_drop_total{job=\"7\",reason=\"version\"} 1|netagg_tree_drop_total{job=\"9\",tree=\"0\",reason=\"not_child\"} 1" \
	"$(grep -F 'netagg_job_drop_total{job="7",reason="version"}' "$TEST_TMP/stats.prom")|$(grep -F 'netagg_tree_drop_total{job="9",tree="0",reason="not_child"}' "$TEST_TMP/stats.prom")"
check_eq "HELP says what a counter counts, from the spec" \
	"# HELP netagg_tree_aggregated_total Contributions summed into a slot." \
	"$(grep '^# HELP netagg_tree_aggregated_total ' "$TEST_TMP/stats.prom")"

# One job: its samples and the namespace's, no other job's.
netagg_in sw -j stats job 9 | jq '{namespace, jobs: [.jobs[] | select(.jid == 9)]}' \
	>"$TEST_TMP/stats9.json"
netagg_in sw stats job 9 format prometheus >"$TEST_TMP/stats9.prom"
check_prom "stats job 9 format prometheus: job 9's counters and the namespace's, exactly" \
	"$TEST_TMP/stats9.json" "$TEST_TMP/stats9.prom"

# For a person: the counters not 0, drops on a line of their own by reason;
# -d: every one.
check_eq "netagg stats: the counters not 0, drops below by reason" \
	"$(printf 'job 9: rx 1\n\ttree 0: rx 1\n\t\tdropped: not_child 1')" \
	"$(netagg_in sw stats job 9 | tail -n +2)"
check_eq "-d: every one, zeros too" "aggregated 0|nomem 0" \
	"$(netagg_in sw -d stats job 9 | grep -o 'aggregated 0')|$(netagg_in sw -d stats job 9 | grep -o 'nomem 0')"

out=$(netagg_in sw -j stats format prometheus 2>&1)
check_eq "with -j: refused (exit 2), saying why" \
	"2 netagg: stats: format prometheus is text, not JSON (-j)" "$? $out"
out=$(netagg_in sw stats job 12345 format prometheus 2>&1)
check_eq "an unknown job: exit 1, saying so" "1 Error: job 12345 not found" "$? $out"

# Events with their time: w2 is evicted from job 11 (w1 sent, w2 silent).
netagg_in sw job add 11
netagg_in sw tree add job 11 tree 0 role root child 10.0.1.1 child 10.0.2.1 \
	evict "$(scaled 500)"
pids=()
for opts in "t -t" "ts -ts" "jts -j -ts"; do	# output file, options
	read -r out opts <<<"$opts"
	# shellcheck disable=SC2086 # the options split on purpose
	timeout "$(scaled 30)" ip netns exec sw "$NETAGG" $opts monitor count 1 \
		>"$TEST_TMP/ev.$out" 2>&1 &
	pids+=($!)
done
sleep "$(scaled 0.5)"	# subscribed before anything happens
send w1 --job 11 --vid 0 --round 1
wait "${pids[@]}"
check "-ts: the event after its time, [date] as ip -ts prints it" \
	grep -qE '^\[20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]\.[0-9]{6}\] child-evicted job 11 ' \
	"$TEST_TMP/ev.ts"
check_eq "-t: a Timestamp line, then the event" "Timestamp: usec|child-evicted job 11" \
	"$(sed -n '1s/^\(Timestamp: \)[A-Z][a-z]\{2\} [A-Z][a-z]\{2\} [ 0-9][0-9] [0-9:]\{8\} 20[0-9]\{2\} [0-9]\{6\} \(usec\)$/\1\2/p' "$TEST_TMP/ev.t")|$(sed -n '2p' "$TEST_TMP/ev.t" | cut -d' ' -f1-3)"
check "-j -ts: \"timestamp\" in RFC 3339, with its UTC offset" \
	jq -e '.event == "child-evicted" and (.timestamp | test("^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6}[+-][0-9]{2}:[0-9]{2}$"))' \
	"$TEST_TMP/ev.jts"
ktap_finish

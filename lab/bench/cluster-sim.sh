#!/bin/bash
# make bench's section (o), on the host (lab/bench/bench.sh runs it): etcd
# in a network namespace of its own (bench-etcd, 127.0.0.1:2379 there, its
# data in a temporary directory; tests/lib-cluster.sh's etcd_start),
# lab/bench/cluster-sim.py against it, the section's Markdown on stdout.
# SIM_JOBS, SIM_CONC: its --jobs and --concurrent (200, 15).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source tests/lib.sh
# shellcheck source=../../tests/lib-cluster.sh
source tests/lib-cluster.sh
trap '[ -z "${etcd_pid:-}" ] || kill "$etcd_pid" 2>/dev/null; ip netns del $ETCD_NS 2>/dev/null
	cleanup_ns' EXIT
ETCD_NS=bench-etcd ETCD=http://127.0.0.1:2379
etcd_ns
etcd_start 30 || { echo "cluster-sim: etcd did not answer in 30 s" >&2; exit 1; }
ip netns exec $ETCD_NS /usr/bin/python3 lab/bench/cluster-sim.py --etcd $ETCD \
	--jobs "${SIM_JOBS:-200}" --concurrent "${SIM_CONC:-15}"

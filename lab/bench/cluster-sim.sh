#!/bin/bash
# make bench's section (o), on the host (lab/bench/bench.sh runs it): etcd
# in a network namespace of its own (bench-etcd, 127.0.0.1:2379 there, its
# data in a temporary directory), lab/bench/cluster-sim.py against it, the
# section's Markdown on stdout. SIM_JOBS, SIM_CONC: its --jobs and
# --concurrent (200, 15).
set -euo pipefail
cd "$(dirname "$0")/../.."
ns=bench-etcd url=http://127.0.0.1:2379
data=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null; wait 2>/dev/null; ip netns del $ns 2>/dev/null; rm -rf "$data"' EXIT
ip netns add $ns
ip -n $ns link set lo up
ip netns exec $ns etcd --name bench --data-dir "$data" --listen-client-urls $url \
	--advertise-client-urls $url --listen-peer-urls http://127.0.0.1:2380 >"$data/log" 2>&1 &
pid=$!
for _ in $(seq 150); do
	ip netns exec $ns etcdctl --endpoints $url endpoint health >/dev/null 2>&1 && break
	sleep 0.2
done
ip netns exec $ns /usr/bin/python3 lab/bench/cluster-sim.py --etcd $url \
	--jobs "${SIM_JOBS:-200}" --concurrent "${SIM_CONC:-15}"

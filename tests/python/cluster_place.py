# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Placements against a node's state, for tests/host_cluster.sh: the racks'
aggregators registered as their agents would (each 16 jobs, 100M), then
netagg.cluster.place (no agent applies them: the placement alone) with
agg1 drained, undrained, and jobs of 64M each on rack 2 until memory runs
out. Prints one JSON line a step: the step, the nodes of its trees or the
error, and releases everything at the end.

    cluster_place.py URL
"""

import json
import sys

from netagg import cluster
from netagg.cluster import JobRequest, PlacementError, key
from netagg.etcd import Etcd


def main() -> int:
    store = Etcd(sys.argv[1])
    agents = store.grant(60)
    for n in ("root", "agg1", "agg2"):
        store.put(key("node", n), json.dumps({"max_jobs": 16, "mem_limit": 100 << 20}), agents)
    leases = [agents]

    def place(step: str, hosts: list[str], memcap: int = cluster.MEMCAP_DEFAULT) -> None:
        lease = store.grant(60)
        leases.append(lease)
        try:
            rec, _ = cluster.place(store, JobRequest("tenant-p", hosts, memcap=memcap), lease)
            out = {"step": step, "nodes": rec["nodes"],
                   "roots": [t["root"] for t in rec["trees"]]}
        except PlacementError as e:
            out = {"step": step, "error": str(e)}
        print(json.dumps(out), flush=True)

    store.put(key("drain", "agg1"), "{}")
    place("drained", ["w1", "w2", "w4"], 16 << 20)
    store.delete(key("drain", "agg1"))
    place("undrained", ["w1", "w2", "w4"], 16 << 20)
    for lease in leases[1:]:
        store.revoke(lease)
    del leases[1:]
    for step in ("memory 1", "memory 2", "memory 3"):
        place(step, ["w4", "w5"], 64 << 20)
    for lease in leases:
        store.revoke(lease)
    return 0


if __name__ == "__main__":
    sys.exit(main())

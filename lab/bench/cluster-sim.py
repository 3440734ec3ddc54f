#!/usr/bin/python3
"""Section (o) of make bench: the cluster's allocator at scale, simulated.

The allocator (netagg.cluster.place: the RAT planner against the live
trees, and its etcd transaction) against a real etcd, without the kernel:
a three-tier fat-tree of k pods (k=16: 1,024 hosts, 16 pods of 8 racks of
8, every switch an aggregator with an agent's registration), jobs arriving
as a Poisson process (PANAMA's simulation set-up), each on 16 to 96 hosts
taken at random from the free ones, holding them for an exponential time
(mean D) and then released (their lease revoked). Simulated time, real
placements: each placement's wall time is measured, against the median of
a plain etcd put of 1 KiB in the same run (the baseline). Prints the
section in Markdown.

    cluster-sim.py --etcd URL [--jobs N] [--concurrent C] [--k K] [--seed S]
"""

import argparse
import heapq
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
from netagg import cluster  # noqa: E402
from netagg.etcd import Etcd  # noqa: E402

HOLD_MEAN = 100.0   # s of simulated time a job runs, on average


def fat_tree(k: int) -> str:
    """The planner's topology file of a k-ary three-tier fat-tree."""
    h = k // 2
    out = [f"region pod{p} oversubscribed" for p in range(k)]
    out += [f"region rack{p}_{r} in pod{p} oversubscribed" for p in range(k) for r in range(h)]
    out += [f"node core{c} aggregator" for c in range(h * h)]
    for p in range(k):
        out += [f"node ps{p}_{s} aggregator in pod{p}" for s in range(h)]
        for r in range(h):
            out.append(f"node tor{p}_{r} aggregator in rack{p}_{r}")
            for i in range(h):
                out.append(f"node w{p}_{r}_{i} worker in rack{p}_{r}")
                out.append(f"link w{p}_{r}_{i} 10.{p}.{r}.{i + 1}/24 tor{p}_{r} 10.{p}.{r}.254/24")
            out += [f"link tor{p}_{r} 10.{100 + p}.{r}.{s * 4 + 1}/30 "
                    f"ps{p}_{s} 10.{100 + p}.{r}.{s * 4 + 2}/30" for s in range(h)]
        out += [f"link ps{p}_{s} 10.{200 + p}.{s}.{j * 4 + 1}/30 "
                f"core{s * h + j} 10.{200 + p}.{s}.{j * 4 + 2}/30"
                for s in range(h) for j in range(h)]
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--etcd", required=True)
    ap.add_argument("--jobs", type=int, default=200)
    ap.add_argument("--concurrent", type=float, default=15.0,
                    help="jobs running at once on average, were hosts unlimited")
    ap.add_argument("--k", type=int, default=16)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    store = Etcd(a.etcd, timeout=30)
    store.delete(cluster.PREFIX, prefix=True)
    topo = cluster.load_topology(store, fat_tree(a.k), f"fat-tree k={a.k}")
    hosts = sorted(n for n, x in topo.nodes.items() if x.kind == "worker")
    aggs = sorted(n for n, x in topo.nodes.items() if x.kind == "aggregator")
    agents = store.grant(3600)
    for n in aggs:
        store.put(cluster.key("node", n), json.dumps({"max_jobs": 16384, "mem_limit": 1 << 30}),
                  agents)

    base = []
    for i in range(50):
        t0 = time.perf_counter()
        store.put(f"/netagg-bench/{i}", "x" * 1024)
        base.append((time.perf_counter() - t0) * 1000)
    store.delete("/netagg-bench/", prefix=True)

    rng = random.Random(a.seed)
    events: list[tuple[float, str, int]] = []
    t = 0.0
    for i in range(a.jobs):
        t += rng.expovariate(a.concurrent / HOLD_MEAN)
        heapq.heappush(events, (t, "arrive", i))
    free = set(hosts)
    running: dict[int, tuple[int, list[str]]] = {}
    ms: list[float] = []
    keys: list[int] = []
    nbytes: list[int] = []
    conc: list[int] = []
    refused: dict[str, int] = {}
    shared = no_hosts = 0
    while events:
        now, kind, i = heapq.heappop(events)
        if kind == "leave":
            lease, ws = running.pop(i)
            store.revoke(lease)
            free |= set(ws)
            continue
        n = rng.randint(16, 96)
        if n > len(free):
            no_hosts += 1
            continue
        ws = rng.sample(sorted(free), n)
        lease = store.grant(3600)
        t0 = time.perf_counter()
        try:
            rec, _ = cluster.place(store, cluster.JobRequest(f"t{i % 4}", ws), lease)
        except cluster.PlacementError as e:
            why = str(e).split(": ", 1)[-1]
            refused[why] = refused.get(why, 0) + 1
            store.revoke(lease)
            continue
        ms.append((time.perf_counter() - t0) * 1000)
        jid = rec["jid"]
        mine = [kv for kv in store.get_prefix(cluster.PREFIX)[0]
                if kv.key == cluster.key("job", jid)
                or (kv.key.startswith(cluster.key("config", "")) and kv.key.endswith(f"/{jid}"))]
        keys.append(len(mine))
        nbytes.append(sum(len(kv.key) + len(kv.value) for kv in mine))
        shared += bool(rec["shares_links_with"])
        free -= set(ws)
        running[i] = (lease, ws)
        conc.append(len(running))
        heapq.heappush(events, (now + rng.expovariate(1 / HOLD_MEAN), "leave", i))
    store.revoke(agents)
    store.delete(cluster.PREFIX, prefix=True)

    placed = len(ms)
    put = statistics.median(base)
    p50 = statistics.median(ms)
    p99 = statistics.quantiles(ms, n=100)[98] if placed > 1 else ms[0]
    print(f"The allocator (netagg.cluster.place) against etcd {a.etcd}, no kernel: "
          f"a fat-tree of k={a.k} ({len(hosts)} hosts, {len(aggs)} aggregators), "
          f"{a.jobs} jobs arriving as a Poisson process ({a.concurrent:g} at once on "
          f"average, were hosts unlimited), each on 16 to 96 free hosts at random "
          f"for an exponential time (seed {a.seed}). Baseline: an etcd put of 1 KiB, "
          f"median {put:.2f} ms in this run.\n")
    print("| figure | value |")
    print("|---|---|")
    print(f"| jobs placed with trees | {placed} of {a.jobs} |")
    print(f"| refused by the allocator (would run through Gloo, warned) | "
          f"{sum(refused.values())}{''.join(f'; {n}: {w}' for w, n in refused.items())} |")
    print(f"| not enough free hosts (no netagg matter) | {no_hosts} |")
    print(f"| jobs running at once, placed | mean {statistics.mean(conc):.1f}, "
          f"max {max(conc)} |")
    print(f"| placement time, p50 | {p50:.0f} ms = {p50 / put:.0f}x an etcd put |")
    print(f"| placement time, p99 | {p99:.0f} ms = {p99 / put:.0f}x an etcd put |")
    print(f"| jobs sharing a link with another | {shared} of {placed} "
          f"({100 * shared / placed:.0f} %) |")
    print(f"| etcd keys per job | mean {statistics.mean(keys):.1f}, max {max(keys)} |")
    print(f"| etcd bytes per job (keys and values) | mean {statistics.mean(nbytes) / 1024:.1f} "
          f"KiB, max {max(nbytes) / 1024:.1f} KiB |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

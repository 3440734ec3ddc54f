#!/usr/bin/python3
"""gloo-allreduce: the Gloo peer of netagg-allreduce, for make bench.

One process per worker (scripts/bench-vm.sh, section f, starts one in each
worker namespace) joins a torch.distributed group with the gloo backend,
rank 0's address being the rendezvous (init_method tcp://ADDR:PORT). For
each size, in MiB, it runs one warm-up allreduce (SUM, float32), then REPS
timed ones, each after a barrier, and prints one JSON line per timed one:

    {"rank": 0, "workers": 4, "mib": 16, "elements": 4194304, "rep": 1,
     "seconds": 0.123456, "ok": true}

Rank r contributes (i % 1000 + 1) * (r + 1) at element i, as
netagg-allreduce does: every partial sum is an integer below 2^24, exact in
float32 in any order, and every element of the result is checked against
the exact sum. A wrong element makes "ok" false on every line of its size,
and the exit status 3 (netagg-allreduce's for a wrong result).

Gloo picks its interface from GLOO_SOCKET_IFNAME (the caller sets v0).
"""

import argparse
import datetime
import json
import sys
import time

import torch
import torch.distributed as dist

EXIT_WRONG = 3


def pattern(elements: int) -> torch.Tensor:
    """i % 1000 + 1 for every element i, as float32 (exact: at most 1000)."""
    return (torch.arange(elements, dtype=torch.int32) % 1000 + 1).to(torch.float32)


def allreduce(buf: torch.Tensor, base: torch.Tensor, rank: int) -> float:
    """Refill buf with this rank's contribution, sum it over the group in
    place; the seconds of the allreduce alone (the barrier before it, which
    lines the ranks up, excluded)."""
    torch.mul(base, rank + 1, out=buf)
    dist.barrier()
    t0 = time.perf_counter()
    dist.all_reduce(buf, op=dist.ReduceOp.SUM)
    return time.perf_counter() - t0


def exact(buf: torch.Tensor, base: torch.Tensor, workers: int) -> bool:
    """Whether buf is the exact sum: buf - base * (1 + ... + workers) is
    computed exactly for integers this small, and is 0 only where they are
    equal (NaN counts as nonzero). Done in place, so no third buffer: buf is
    refilled before its next use anyway."""
    buf.sub_(base, alpha=workers * (workers + 1) // 2)
    return int(torch.count_nonzero(buf)) == 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--workers", type=int, required=True)
    ap.add_argument("--master", required=True, help="ADDR:PORT of rank 0's TCP store")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=900,
                    help="seconds the group's operations may wait")
    ap.add_argument("mib", type=int, nargs="+", help="sizes, MiB per worker")
    args = ap.parse_args()

    # The VM has 2 vCPUs for up to 8 workers: more threads would only
    # compete with the other workers' (Gloo's own threads do the transfers).
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://{args.master}",
                            rank=args.rank, world_size=args.workers,
                            timeout=datetime.timedelta(seconds=args.timeout))
    status = 0
    for mib in args.mib:
        elements = mib * (1 << 20) // 4
        base = pattern(elements)
        buf = torch.empty(elements, dtype=torch.float32)
        allreduce(buf, base, args.rank)  # warm-up: connections, buffers
        ok = exact(buf, base, args.workers)
        secs = []
        for _ in range(args.reps):
            secs.append(allreduce(buf, base, args.rank))
            ok = exact(buf, base, args.workers) and ok
        # Printed after the timed ones: output is not part of the times.
        for rep, s in enumerate(secs, 1):
            print(json.dumps({"rank": args.rank, "workers": args.workers, "mib": mib,
                              "elements": elements, "rep": rep,
                              "seconds": round(s, 6), "ok": ok}))
        sys.stdout.flush()
        if not ok:
            status = EXIT_WRONG
        del base, buf
    dist.destroy_process_group()
    return status


if __name__ == "__main__":
    sys.exit(main())

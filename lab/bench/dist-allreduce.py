#!/usr/bin/python3
"""dist-allreduce: torch.distributed's all_reduce, through Gloo or through
netagg's backend, the peer of netagg-allreduce for make bench.

One process per worker (lab/bench/bench-vm.sh, sections f and n, start one
in each worker namespace) joins a torch.distributed group of BACKEND
("gloo", or "netagg": the job and its trees from NETAGG_*), rank 0's
address being the rendezvous (init_method tcp://ADDR:PORT). For each size
(MiB, or bytes with a K or M suffix: 1K, 64M) it runs one warm-up
allreduce (SUM, float32), then REPS timed ones, each after a barrier, and
prints one JSON line per timed one:

    {"rank": 0, "workers": 4, "bytes": 16777216, "mib": 16,
     "elements": 4194304, "rep": 1, "seconds": 0.123456, "ok": true}

--direct (netagg): each timed allreduce is the group's own Worker's
(Worker.allreduce on the tensor), not dist.all_reduce: the backend's cost
is the difference.

Rank r contributes (i % 1000 + 1) * (r + 1) at element i, as
netagg-allreduce does: every partial sum is an integer below 2^24, exact in
float32 in any order, and every element of the result is checked against
the exact sum. A wrong element makes "ok" false on every line of its size,
and the exit status 3 (netagg-allreduce's for a wrong result).

Gloo picks its interface from GLOO_SOCKET_IFNAME (the caller sets v0).

Each timed allreduce is bounded by the two no-op instructions of
util/mark.h, for the instruction count of make bench (the QEMU
plugin lab/profile/insn-profile.c), as netagg-allreduce's and Open MPI's are:
Python cannot emit an instruction, so they are two tiny functions written
to an executable page and called through ctypes. With NETAGG_MARK_SYSCALL
set, each is also util/mark.h's close() mark, which perf sees (make
profile's wall-time section, lab/profile/wall.py).
"""

import argparse
import ctypes
import datetime
import importlib
import json
import mmap
import os
import platform
import sys
import time
from typing import Callable

import torch
import torch.distributed as dist

EXIT_WRONG = 3


def pattern(elements: int) -> torch.Tensor:
    """i % 1000 + 1 for every element i, as float32 (exact: at most 1000)."""
    return (torch.arange(elements, dtype=torch.int32) % 1000 + 1).to(torch.float32)


def close_mark(mark: int) -> None:
    """util/mark.h's system call mark: a close() of a number no descriptor
    has, which a tracer sees (make profile's wall-time section)."""
    try:
        os.close(mark)
    except OSError:
        pass


def markers() -> tuple[Callable[[], None], Callable[[], None]]:
    """The begin and end markers of util/mark.h as callables: "nopl
    0x6e610001(%rax); ret" and its 0x6e610002 twin on an executable page
    (no-ops off x86-64); with NETAGG_MARK_SYSCALL in the environment, each
    also its close() mark, as util/mark.h's."""
    if platform.machine() != "x86_64":
        nop_begin: Callable[[], None] = lambda: None
        nop_end: Callable[[], None] = lambda: None
    else:
        page = mmap.mmap(-1, mmap.PAGESIZE,
                         prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        page.write(b"\x0f\x1f\x80\x01\x00\x61\x6e\xc3"
                   b"\x0f\x1f\x80\x02\x00\x61\x6e\xc3")
        addr = ctypes.addressof(ctypes.c_char.from_buffer(page))
        proto = ctypes.CFUNCTYPE(None)
        nop_begin, nop_end = proto(addr), proto(addr + 8)
        nop_begin.page = page  # type: ignore[attr-defined]  # the page lives as long
    if "NETAGG_MARK_SYSCALL" not in os.environ:
        return nop_begin, nop_end

    def begin() -> None:
        close_mark(0x6e610001)
        nop_begin()

    def end() -> None:
        nop_end()
        close_mark(0x6e610002)
    return begin, end


MARK_BEGIN, MARK_END = markers()


def allreduce(buf: torch.Tensor, base: torch.Tensor, rank: int,
              timed: bool = True, direct: bool = False) -> float:
    """Refill buf with this rank's contribution, sum it over the group in
    place; the seconds of the allreduce alone (the barrier before it, which
    lines the ranks up, excluded). A timed one is bounded by the markers.
    direct: by the netagg group's Worker, not through torch.distributed."""
    torch.mul(base, rank + 1, out=buf)
    dist.barrier()
    if timed:
        MARK_BEGIN()
    t0 = time.perf_counter()
    if direct:
        dist.group.WORLD.worker.allreduce(buf)  # type: ignore[union-attr]
    else:
        dist.all_reduce(buf, op=dist.ReduceOp.SUM)
    t1 = time.perf_counter()
    if timed:
        MARK_END()
    return t1 - t0


def exact(buf: torch.Tensor, base: torch.Tensor, workers: int) -> bool:
    """Whether buf is the exact sum: buf - base * (1 + ... + workers) is
    computed exactly for integers this small, and is 0 only where they are
    equal (NaN counts as nonzero). Done in place, so no third buffer: buf is
    refilled before its next use anyway."""
    buf.sub_(base, alpha=workers * (workers + 1) // 2)
    return int(torch.count_nonzero(buf)) == 0


def size(arg: str) -> int:
    """Bytes of a size argument: MiB, or bytes with a K or M suffix."""
    mult = {"K": 1 << 10, "M": 1 << 20}.get(arg[-1:].upper())
    n = int(arg[:-1] if mult else arg) * (mult or 1 << 20)
    if n <= 0 or n % 4:
        raise argparse.ArgumentTypeError(f"{arg}: not a positive number of float32s")
    return n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", choices=("gloo", "netagg"), default="gloo")
    ap.add_argument("--direct", action="store_true",
                    help="netagg: time the group's Worker, not dist.all_reduce")
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--workers", type=int, required=True)
    ap.add_argument("--master", required=True, help="ADDR:PORT of rank 0's TCP store")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=900,
                    help="seconds the group's operations may wait")
    ap.add_argument("sizes", type=size, nargs="+", metavar="SIZE",
                    help="per worker: MiB, or bytes with a K or M suffix")
    args = ap.parse_args()
    if args.direct and args.backend != "netagg":
        ap.error("--direct times netagg's Worker: give --backend netagg")
    if args.backend == "netagg":
        importlib.import_module("netagg.torch")  # registers the backend

    # The VM has 2 vCPUs for up to 8 workers: more threads would only
    # compete with the other workers' (Gloo's own threads do the transfers).
    torch.set_num_threads(1)
    dist.init_process_group(args.backend, init_method=f"tcp://{args.master}",
                            rank=args.rank, world_size=args.workers,
                            timeout=datetime.timedelta(seconds=args.timeout))
    status = 0
    for nbytes in args.sizes:
        elements = nbytes // 4
        base = pattern(elements)
        buf = torch.empty(elements, dtype=torch.float32)
        # warm-up: connections, buffers
        allreduce(buf, base, args.rank, timed=False, direct=args.direct)
        ok = exact(buf, base, args.workers)
        secs = []
        for _ in range(args.reps):
            secs.append(allreduce(buf, base, args.rank, direct=args.direct))
            ok = exact(buf, base, args.workers) and ok
        # Printed after the timed ones: output is not part of the times.
        mib = nbytes / (1 << 20)
        for rep, s in enumerate(secs, 1):
            print(json.dumps({"rank": args.rank, "workers": args.workers, "bytes": nbytes,
                              "mib": int(mib) if mib.is_integer() else mib,
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

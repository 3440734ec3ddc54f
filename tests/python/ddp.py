#!/usr/bin/python3
"""One worker of tests/netagg_python.sh's DDP cases.

Joins a gloo process group (rank 0's address the rendezvous), then:

1. The hook does not block: rank 0 calls netagg.torch.allreduce_hook on a
   bucket while the other ranks wait a second before theirs; the future it
   returns must not be done yet (no sum can exist before they send), and
   must then hold the average.
2. STEPS training steps of one small model twice from the same initial
   parameters and the same data: once with DDP's default (gloo) allreduce,
   once with the netagg hook, several buckets a step (more allreduces
   than steps, or the check fails). After every step the netagg model's
   parameters must be bitwise identical on every rank (the DDP invariant,
   checked by gathering them through gloo) and equal to the gloo model's
   within float tolerance (the sums add in a different order).

With --dtype float16 the worker (and the job) is float16 and the hook
compresses; the gloo model runs PyTorch's fp16_compress_hook, the same
compression. Its parameters are not the netagg model's: gloo rounds the
float16 sum after every addition, netagg's nodes once after summing in
float32, and the differences grow with the steps (with the nodes'
arithmetic simulated on a host: about 1e-5 after 5 steps, 2e-4 after 20,
much as against gloo in float32). So for float16 max_diff_vs_gloo is
reported, not checked; the checks are the first part, parameters
identical on every rank, and finite.

Prints one JSON line; exit 0 when every check held, 1 otherwise.
"""

import argparse
import datetime
import json
import sys
import time

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

import netagg.torch as nt
import twins


class Bucket:
    """The part of DDP's GradBucket the hook uses."""

    def __init__(self, buf: torch.Tensor):
        self._buf = buf

    def buffer(self) -> torch.Tensor:
        return self._buf


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--world", type=int, required=True)
    ap.add_argument("--master", required=True, help="ADDR:PORT of rank 0")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--dtype", choices=("float32", "float16"), default="float32",
                    help="the netagg worker's (and job's); float16 compresses")
    args = ap.parse_args()
    dist.init_process_group("gloo", init_method=f"tcp://{args.master}", rank=args.rank,
                            world_size=args.world, timeout=datetime.timedelta(seconds=120))
    out = {"rank": args.rank, "dtype": args.dtype, "ok": True, "not_done_at_return": None,
           "hook_average": None, "identical": True, "finite": True, "max_diff_vs_gloo": 0.0,
           "buckets": 0, "error": None}
    state = nt.HookState(timeout=10.0, dtype=args.dtype)

    # 1. The future comes back before the sum can exist.
    buf = torch.full((50000,), float(args.rank + 1))
    dist.barrier()
    if args.rank:
        time.sleep(1.0)
    fut = nt.allreduce_hook(state, Bucket(buf))
    # Only rank 0 called while no sum could exist.
    out["not_done_at_return"] = not fut.done() if args.rank == 0 else None
    avg = sum(range(1, args.world + 1)) / args.world
    out["hook_average"] = bool(torch.equal(fut.wait(), torch.full((50000,), avg)))

    # 2. Training steps, gloo and netagg from the same start; bucket_cap_mb
    # makes several buckets a step after DDP's first.
    models, opts = twins.twins(state, bucket_cap_mb=0.25, momentum=0.9)
    if args.dtype == "float16":  # the same compression through gloo
        models["gloo"].register_comm_hook(None, default_hooks.fp16_compress_hook)
    for st in twins.steps(models, opts, args.steps):
        if not st.same_on_every_rank:
            out["identical"] = False
            out["error"] = f"parameters differ between ranks after step {st.step}"
            break
        if not bool(torch.isfinite(st.params).all()):
            out["finite"] = False
            out["error"] = f"parameters not finite after step {st.step}"
            break
        out["max_diff_vs_gloo"] = max(out["max_diff_vs_gloo"], st.diff_vs_gloo)
    out["buckets"] = state.buckets - 1  # those of the training steps
    state.close()
    close_to_gloo = args.dtype != "float32" or out["max_diff_vs_gloo"] < 1e-4
    out["ok"] = bool(out["not_done_at_return"] is not False and out["hook_average"]
                     and out["identical"] and out["finite"] and close_to_gloo
                     and out["buckets"] > args.steps)
    print(json.dumps(out))
    dist.destroy_process_group()
    return 0 if out["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())

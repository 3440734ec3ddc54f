#!/usr/bin/python3
"""One worker of tests/netagg_python.sh: allreduce through the netagg package.

Worker r contributes (i % 1000 + 1) * (r + 1) at element i, in a buffer of
KIND (numpy, torch, bytearray), REPS times, and checks every element of
every result against the exact sum (integers below 2^24: exact in float32
in any order) and that the buffer is the same memory before and after.
Prints one JSON line:

    {"rank": 0, "kind": "numpy", "ok": true, "same_address": true,
     "error": null, "seconds": 0.1, "info": {...}}

"error" names the exception raised, if any (then "ok" is false), with its
message, errno and elapsed "seconds". Exit 0 when ok, else 1.
"""

import argparse
import ctypes
import dataclasses
import json
import sys
import time

import numpy as np

import netagg


def address(buf) -> int:
    """Where buf's memory is."""
    if isinstance(buf, np.ndarray):
        return buf.ctypes.data
    if isinstance(buf, bytearray):
        return ctypes.addressof((ctypes.c_char * len(buf)).from_buffer(buf))
    return buf.data_ptr()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rank", type=int, required=True)
    ap.add_argument("--kind", choices=("numpy", "torch", "bytearray"), default="numpy")
    ap.add_argument("--elements", type=int, default=100003)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--timeout", type=float, default=5.0)
    args = ap.parse_args()

    w = netagg.Worker.from_env(rank=args.rank, timeout=args.timeout, dtype=args.dtype)
    npdt = np.float32 if args.dtype == "float32" else np.int32
    base = (np.arange(args.elements) % 1000 + 1).astype(npdt)
    want = base * (w.workers * (w.workers + 1) // 2)
    if args.kind == "numpy":
        buf = np.empty(args.elements, dtype=npdt)
        view = buf
    elif args.kind == "torch":
        import torch
        buf = torch.empty(args.elements, dtype=getattr(torch, args.dtype))
        view = buf.numpy()
    else:
        buf = bytearray(args.elements * 4)
        view = np.frombuffer(buf, dtype=npdt)
    out = {"rank": args.rank, "kind": args.kind, "ok": True, "same_address": True,
           "error": None, "errno": None, "seconds": None, "info": None}
    for _ in range(args.reps):
        view[:] = base * (args.rank + 1)
        before = address(buf)
        t0 = time.monotonic()
        try:
            info = w.allreduce(buf)
        except Exception as e:  # reported, not hidden: the test reads it
            out.update(ok=False, error=f"{type(e).__name__}: {e}",
                       errno=getattr(e, "errno", None),
                       seconds=round(time.monotonic() - t0, 3))
            break
        out["seconds"] = round(time.monotonic() - t0, 3)
        out["info"] = dataclasses.asdict(info)
        out["same_address"] = out["same_address"] and address(buf) == before
        if not np.array_equal(view, want):
            bad = int(np.argmax(view != want))
            out.update(ok=False, error=f"wrong element {bad}: {view[bad]} != {want[bad]}")
            break
    w.close()
    print(json.dumps(out))
    return 0 if out["ok"] and out["same_address"] else 1


if __name__ == "__main__":
    sys.exit(main())

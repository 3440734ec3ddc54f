#!/usr/bin/python3
"""One worker of tests/netagg_python.sh: allreduce through the netagg package.

Worker r contributes (i % 1000 + 1) * (r + 1) at element i, in a buffer of
KIND (numpy, torch, bytearray), REPS times, and checks every element of
every result against the exact sum (integers below 2^24: exact in float32
in any order) and that the buffer is the same memory before and after.
For float16 and bfloat16 the contribution is (i % 4 + 1) * (r + 1): every
partial sum of 4 workers is an integer of at most 40, exact in their 11
and 8 significant bits (the sum is (i % 4 + 1) * 10). numpy has no
bfloat16: a bfloat16 numpy buffer is a uint16 array of bit patterns passed
as bytes (.view(uint8)), and results are compared as bit patterns.
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

# dtype: (numpy type of the buffer's elements, M of the values i % M + 1)
DTYPES = {"float32": (np.float32, 1000), "int32": (np.int32, 1000),
          "float16": (np.float16, 4), "bfloat16": (np.uint16, 4)}


def encode(values: np.ndarray, dtype: str) -> np.ndarray:
    """Integers as the elements of dtype (bfloat16: bit patterns, exact
    since every value used fits its 8 bits)."""
    if dtype == "bfloat16":
        return (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return values.astype(DTYPES[dtype][0])


def decode(view: np.ndarray, dtype: str) -> np.ndarray:
    """Elements as numbers, for messages."""
    if dtype == "bfloat16":
        return (view.astype(np.uint32) << 16).view(np.float32)
    return view


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
    ap.add_argument("--dtype", choices=tuple(DTYPES), default="float32")
    ap.add_argument("--timeout", type=float, default=5.0)
    ap.add_argument("--no-join", action="store_true",
                    help="do not join: the session given (NETAGG_SESSION) is the run's")
    args = ap.parse_args()

    # The buffer first, the join after: joining is the workers' barrier, and
    # importing torch takes seconds under emulation, enough for the first
    # worker's allreduce to time out if the others imported after joining.
    npdt, period = DTYPES[args.dtype]
    base = np.arange(args.elements) % period + 1
    if args.kind == "numpy":
        buf = np.empty(args.elements, dtype=npdt)
        view = buf
    elif args.kind == "torch":
        import torch
        buf = torch.empty(args.elements, dtype=getattr(torch, args.dtype))
        # numpy reads a bfloat16 tensor as its bits
        view = (buf.view(torch.int16).numpy().view(np.uint16) if args.dtype == "bfloat16"
                else buf.numpy())
    else:
        buf = bytearray(args.elements * np.dtype(npdt).itemsize)
        view = np.frombuffer(buf, dtype=npdt)
    w = netagg.Worker.from_env(rank=args.rank, timeout=args.timeout, dtype=args.dtype,
                               join=not args.no_join)
    want = encode(base * (w.workers * (w.workers + 1) // 2), args.dtype)
    # what allreduce is given: the buffer, or a bfloat16 array's bytes
    arg = buf.view(np.uint8) if isinstance(buf, np.ndarray) and args.dtype == "bfloat16" else buf
    out = {"rank": args.rank, "kind": args.kind, "ok": True, "same_address": True,
           "error": None, "errno": None, "seconds": None, "info": None}
    for _ in range(args.reps):
        view[:] = encode(base * (args.rank + 1), args.dtype)
        before = address(buf)
        t0 = time.monotonic()
        try:
            info = w.allreduce(arg)
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
            out.update(ok=False, error=f"wrong element {bad}: "
                       f"{decode(view, args.dtype)[bad]} != {decode(want, args.dtype)[bad]}")
            break
    w.close()
    print(json.dumps(out))
    return 0 if out["ok"] and out["same_address"] else 1


if __name__ == "__main__":
    sys.exit(main())

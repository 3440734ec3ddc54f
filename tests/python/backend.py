#!/usr/bin/python3
"""One worker of tests/netagg_backend.sh: torch.distributed's "netagg"
backend, as a script that changed one string uses it.

init_process_group("netagg") under torchrun (env://); the job, its dtype
and its trees from NETAGG_*. Then each check in order, every element of
every result compared exactly with what the ranks' known inputs sum to; a
JSON line a check, {"rank", "dtype", "check", "ok", "detail", "at" (the
time)}; exit 0 when
every check was ok. The job dtype's allreduces on every job; Gloo's
share, DDP and ZeroRedundancyOptimizer on a float32 job (unless
--sums-only); then one allreduce, the session it ran in said ("session").

--attempts JOB:DTYPE,...: torchrun's attempt k (TORCHELASTIC_RESTART_COUNT)
runs on the k-th job (NETAGG_JOB, NETAGG_DTYPE set before the group is
made); every attempt but the last then exits 3, as a crash would, for
torchrun to start the run again, in a session of its own. --gone FILE ends
the last attempt with the node taken away: the script prints {"check":
"ready"}, waits for FILE (the test removes the job on the node, then makes
it), and checks that the next allreduce fails from wait() on every rank,
that DDP's backward raises, and that the group's allreduces after it fail
at once.
"""

import argparse
import json
import os
import sys
import time
import warnings

from typing import Any, Optional

import torch
import torch.distributed as dist
from torch.distributed.optim import ZeroRedundancyOptimizer

import netagg.torch as nt

RANK = int(os.environ["RANK"])
WORLD = int(os.environ["WORLD_SIZE"])
# The job's dtype: what the checks below allreduce through netagg (main()
# sets it again when --attempts picks the job).
DT = getattr(torch, os.environ.get("NETAGG_DTYPE", "float32"))
failed = False


def say(check: str, ok: bool, detail: object = "", **extra: object) -> None:
    global failed
    failed |= not ok
    print(json.dumps({"rank": RANK, "dtype": str(DT).removeprefix("torch."), "check": check,
                      "ok": bool(ok), "detail": str(detail), "at": round(time.time(), 1),
                      **extra}), flush=True)


def mine(n: int, dtype: Optional[torch.dtype] = None, scale: int = 1,
         rank: int = RANK) -> torch.Tensor:
    """Rank rank's input: (rank + 1) * (i % 97 + 1) * scale, rounded to dtype
    (the job's by default)."""
    dtype = dtype or DT
    i = torch.arange(n, dtype=torch.int64) % 97 + 1
    return (i * (rank + 1) * scale).to(dtype)


def total(n: int, dtype: Optional[torch.dtype] = None, scale: int = 1) -> torch.Tensor:
    """The ranks' inputs summed exactly, rounded once to dtype (the job's by
    default): what one level of nodes gives (it sums in float32, exact for
    these integers)."""
    dtype = dtype or DT
    wide = torch.float64 if dtype.is_floating_point else torch.int64
    acc = torch.zeros(n, dtype=wide)
    for r in range(WORLD):
        acc += mine(n, dtype, scale, r).to(wide)
    return acc.to(dtype)


def mean(n: int) -> torch.Tensor:
    """AVG's answer: the ranks' sum divided by their number (2 or 4: exact)."""
    return (total(n).double() / WORLD).to(DT)


def check(name: str, fn: object) -> None:
    try:
        ok, detail = fn()  # type: ignore[operator]
    except Exception as e:  # a check that raises failed, saying why
        ok, detail = False, f"{type(e).__name__}: {e}"
    say(name, ok, detail)


def sums() -> tuple[bool, str]:
    """An odd length, 1,000,003 elements: many super-packets, a short last."""
    t = mine(1000003)
    before = nt.stats()["netagg_calls"]
    dist.all_reduce(t)
    calls = nt.stats()["netagg_calls"] - before
    return torch.equal(t, total(1000003)) and calls == 1, f"netagg calls {calls}"


def async_avg() -> tuple[bool, str]:
    t = mine(5000)
    if not DT.is_floating_point:  # an integer mean would round: refused, said so
        try:
            dist.all_reduce(t, op=dist.ReduceOp.AVG, async_op=True)
            return False, "AVG of int32 taken"
        except ValueError as e:
            w = dist.all_reduce(t, async_op=True)
            w.wait()
            return torch.equal(t, total(5000)) and w.is_success(), f"AVG refused: {e}"
    w = dist.all_reduce(t, op=dist.ReduceOp.AVG, async_op=True)
    w.wait()
    return torch.equal(t, mean(5000)) and w.is_success(), f"is_success {w.is_success()}"


def strided() -> tuple[bool, str]:
    x = mine(2 * 3000).view(3000, 2)
    outside = x[:, 1].clone()
    dist.all_reduce(x[:, 0])
    ok = torch.equal(x[:, 0], total(6000).view(3000, 2)[:, 0]) and torch.equal(x[:, 1], outside)
    return ok, ""


def coalesced() -> tuple[bool, str]:
    a, b = mine(1000), mine(777, scale=2)
    before = nt.stats()["netagg_calls"]
    dist.all_reduce_coalesced([a, b])
    calls = nt.stats()["netagg_calls"] - before
    ok = torch.equal(a, total(1000)) and torch.equal(b, total(777, scale=2)) and calls == 1
    return ok, f"netagg calls {calls}"


def empty_and_odd() -> tuple[bool, str]:
    e = torch.empty(0, dtype=DT)
    dist.all_reduce(e)
    try:
        dist.all_reduce_coalesced([])
        refused = "no error"
    except ValueError as err:
        refused = str(err)
    t = mine(1)
    dist.all_reduce(t)
    return torch.equal(t, total(1)) and "empty list" in refused, refused


def fallback() -> tuple[bool, str]:
    """On a float32 job: float64, int32, bfloat16, MAX and a strided
    float64 view through Gloo, each exact, warned and counted."""
    f32 = torch.float32
    before = nt.stats()
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        d = mine(3000, torch.float64)
        dist.all_reduce(d)
        i = mine(3001, torch.int32)
        dist.all_reduce(i)
        m = mine(3000, f32)
        dist.all_reduce(m, op=dist.ReduceOp.MAX)
        bf = torch.full((300,), RANK + 1, dtype=torch.bfloat16)
        dist.all_reduce(bf)
        v = mine(2 * 500, torch.float64).view(500, 2)
        outside = v[:, 1].clone()
        dist.all_reduce(v[:, 0])
    after = nt.stats()
    ok_sums = (torch.equal(d, total(3000, torch.float64))
               and torch.equal(i, total(3001, torch.int32))
               and torch.equal(m, mine(3000, f32, rank=WORLD - 1))
               and torch.equal(bf, torch.full((300,), WORLD * (WORLD + 1) // 2,
                                              dtype=torch.bfloat16))
               and torch.equal(v[:, 0], total(1000, torch.float64).view(500, 2)[:, 0])
               and torch.equal(v[:, 1], outside))
    warned = [str(w.message) for w in got if issubclass(w.category, nt.NetaggFallbackWarning)]
    reasons = after["delegated"]
    ok_seen = (after["gloo_calls"] - before["gloo_calls"] == 5
               and after["gloo_bytes"] - before["gloo_bytes"] >= 3001 * 4
               and all(any(why in k for k in reasons) for why in ("float64", "int32", "MAX"))
               and len(warned) >= 4 and after["netagg_calls"] == before["netagg_calls"])
    return ok_sums and ok_seen, f"warned {warned}; delegated {reasons}"


def others() -> tuple[bool, str]:
    b = mine(100, torch.float32) if RANK == 1 else torch.zeros(100)
    dist.broadcast(b, src=1)
    outs = [torch.zeros(10) for _ in range(WORLD)]
    dist.all_gather(outs, mine(10, torch.float32))
    dist.barrier()
    want = [(torch.arange(10) % 97 + 1) * (r + 1) for r in range(WORLD)]
    ok = torch.equal(b, (torch.arange(100) % 97 + 1) * 2.0) and all(
        torch.equal(o, w.float()) for o, w in zip(outs, want))
    return ok, ""


def model() -> torch.nn.Module:
    torch.manual_seed(7)
    return torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                               torch.nn.Linear(128, 8))


def train(ddp: torch.nn.Module, steps: int, optimizer: Any = None) -> None:
    opt = optimizer or torch.optim.SGD(ddp.parameters(), lr=0.05)
    for s in range(steps):
        g = torch.Generator().manual_seed(100 * s + RANK)
        x = torch.randn(32, 64, generator=g)
        loss = ddp(x).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


def ddp_no_hook() -> tuple[bool, str]:
    """DDP over the "netagg" group, no hook, against DDP over Gloo with
    netagg's hook (the same worker): bitwise the same parameters (4
    workers: dividing by 4 before the sum, as DDP does, is exact)."""
    steps = 4
    before = nt.stats()["netagg_calls"]
    a = torch.nn.parallel.DistributedDataParallel(model(), bucket_cap_mb=0.01)
    train(a, steps)
    through = nt.stats()["netagg_calls"] - before
    gloo = dist.new_group(backend="gloo")
    b = torch.nn.parallel.DistributedDataParallel(model(), process_group=gloo,
                                                  bucket_cap_mb=0.01)
    state = nt.HookState(worker=nt.default_worker(), process_group=gloo)
    b.register_comm_hook(state, nt.allreduce_hook)
    train(b, steps)
    same = all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    flat = torch.cat([p.detach().reshape(-1) for p in a.parameters()])
    ranks = [torch.zeros_like(flat) for _ in range(WORLD)]
    dist.all_gather(ranks, flat, group=gloo)
    agree = all(torch.equal(r, flat) for r in ranks)
    return same and agree and through >= steps, \
        f"netagg allreduces {through}; same as the hook {same}; ranks agree {agree}"


def zero() -> tuple[bool, str]:
    """ZeroRedundancyOptimizer over the "netagg" group (DDP's gradients
    through netagg, each shard's parameters broadcast through Gloo)
    against SGD unsharded: bitwise the same parameters."""
    steps = 3
    before = nt.stats()
    a = torch.nn.parallel.DistributedDataParallel(model(), bucket_cap_mb=0.01)
    train(a, steps, ZeroRedundancyOptimizer(a.parameters(), optimizer_class=torch.optim.SGD,
                                            lr=0.05))
    after = nt.stats()
    b = torch.nn.parallel.DistributedDataParallel(model(), bucket_cap_mb=0.01)
    train(b, steps)
    same = all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    through = after["netagg_calls"] - before["netagg_calls"]
    bcasts = sum(n for k, n in after["delegated"].items() if k.startswith("broadcast")) - \
        sum(n for k, n in before["delegated"].items() if k.startswith("broadcast"))
    return same and through >= steps and bcasts >= steps, \
        f"same as unsharded {same}; netagg allreduces {through}; broadcasts {bcasts}"


def session() -> None:
    """One allreduce, the session it ran in said: each attempt of a run
    started again by torchrun must join a session of its own."""
    t = mine(10007)
    dist.all_reduce(t)
    say("session", torch.equal(t, total(10007)), session=nt.stats()["session"])


def gone(flag: str) -> None:
    say("ready", True)
    end = time.monotonic() + 300
    while not os.path.exists(flag) and time.monotonic() < end:
        time.sleep(0.1)
    t = mine(20000, torch.float32)
    w = dist.all_reduce(t, async_op=True)
    try:
        w.wait()
        say("gone: wait() raises", False, "wait() returned")
    except Exception as e:
        say("gone: wait() raises", not w.is_success(), f"{type(e).__name__}: {e}")
    t0 = time.monotonic()
    try:
        dist.all_reduce(mine(10, torch.float32))
        say("gone: later allreduces fail at once", False, "returned")
    except Exception as e:
        fast = time.monotonic() - t0 < 5
        say("gone: later allreduces fail at once", fast and "out of step" in str(e), str(e))
    ddp = torch.nn.parallel.DistributedDataParallel(model())
    try:
        train(ddp, 1)
        say("gone: DDP's backward raises", False, "trained")
    except RuntimeError as e:
        say("gone: DDP's backward raises", "out of step" in str(e), str(e)[:300])
    s = nt.stats()
    say("gone: stats say so", s["failed"] >= 1 and s["error"] is not None, s["error"])


def main() -> int:
    global DT
    ap = argparse.ArgumentParser()
    ap.add_argument("--attempts", help="JOB:DTYPE,...: torchrun's attempt k on the k-th")
    ap.add_argument("--gone", help="end with the node taken away (see above)")
    ap.add_argument("--sums-only", action="store_true",
                    help="only the job dtype's allreduces, whatever the dtype")
    args = ap.parse_args()
    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    jobs = args.attempts.split(",") if args.attempts else []
    if jobs:
        os.environ["NETAGG_JOB"], os.environ["NETAGG_DTYPE"] = jobs[attempt].split(":")
        DT = getattr(torch, os.environ["NETAGG_DTYPE"])
    last = attempt >= len(jobs) - 1
    t0 = time.monotonic()
    dist.init_process_group("netagg")
    say("init", dist.get_backend() == "netagg" and isinstance(dist.group.WORLD,
                                                             nt.ProcessGroupNetagg),
        f"{time.monotonic() - t0:.1f} s")
    checks = [("sum", sums), ("async avg", async_avg), ("strided view", strided),
              ("coalesced", coalesced), ("empty and one element", empty_and_odd)]
    if DT == torch.float32 and not args.sums_only:
        checks += [("through gloo, warned and counted", fallback),
                   ("broadcast, all_gather, barrier", others),
                   ("ddp without a hook", ddp_no_hook), ("zero", zero)]
    for name, fn in checks:
        check(name, fn)
    session()
    if not last:
        return 3
    if args.gone:
        gone(args.gone)
    say("stats", True, json.dumps(nt.stats()))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

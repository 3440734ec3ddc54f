#!/usr/bin/python3
"""One worker of tests/netagg_training.sh: the DDP hook in training loops
as people run them.

Joins the gloo process group torchrun's way (env://: RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT, and LOCAL_RANK, LOCAL_WORLD_SIZE) and runs the
steps given, in order, in this one process (a worker's start costs an
emulated CPU most of a minute). A step is NAME[:KEY=VALUE...]; each makes
or takes a netagg.torch.HookState on job JOB (default NETAGG_JOB) and
checks every element of every result exactly, with allreduce_hook on
buckets of known values (DDP's GradBucket has only .buffer() for the
hook):

  first:seed=S        rank r's bucket is (r + 1) * S: the group's mean
  late:sleep=T        two buckets; rank 0 spends T seconds between them
                      (an evaluation): nobody fails, both exact
  mean:job=J:expect=E[:late=R:sleep=T]
                      a new state on job J (its quorum from NETAGG_QUORUM_J
                      if set); rank r's bucket is (r + 1) * 3, rank R
                      sends T seconds late: every result must be E (the
                      step's line says "meanJ")
  subgroup            DDP on subgroups: ranks 0-1 on job 11, 2-3 on job
                      12: a bucket's mean is its subgroup's, and training
                      steps keep the subgroup's parameters identical
  dtype:job=J:dtype=D a state of worker dtype D on job J: DtypeMismatch
  overlap             the hook returns its future before the sum can exist:
                      rank 0 calls it while the others wait a second
                      before theirs; the future must not be done then, and
                      must then hold the mean
  train:steps=N       N steps of a small model through DDP and the hook
                      (and through gloo from the same start): parameters
                      identical on every rank after every step, close to
                      gloo's, several buckets a step
  hold[:rank=R:count=N]
                      the run dies here: rank R sleeps instead of sending a
                      bucket (no VID can complete), or every rank sends N
                      elements and the test kills them mid-bucket
  gone:sleep=T        rank world-1 waits T seconds before its bucket while
                      the test takes the node away: every rank's future
                      fails; the error DDP would raise leads back
                      (netagg.torch.cause) to the netagg exception

Prints a JSON line a step, {"rank", "step", "ok", "error", "error_type",
"seconds", ...}, the first printed once the state is made ({"step":
"joined"}); exit 0 when every step was ok.
"""

import argparse
import datetime
import json
import os
import sys
import time

import torch
import torch.distributed as dist

import netagg.torch as nt
import twins


class Bucket:
    """The part of DDP's GradBucket the hook uses."""

    def __init__(self, buf: torch.Tensor):
        self._buf = buf

    def buffer(self) -> torch.Tensor:
        return self._buf


def hook_mean(state: nt.HookState, values: torch.Tensor) -> torch.Tensor:
    """What allreduce_hook makes of a bucket holding values (a copy)."""
    return nt.allreduce_hook(state, Bucket(values.clone())).wait()


def exact(got: torch.Tensor, want: float) -> bool:
    return bool(torch.equal(got, torch.full_like(got, want)))


def train(out: dict, state: nt.HookState, count: int, group) -> None:
    """count steps of DDP through the hook and through gloo, from one start."""
    models, opts = twins.twins(state, bucket_cap_mb=0.02, group=group)
    out["max_diff_vs_gloo"] = 0.0
    for st in twins.steps(models, opts, count, group):
        if not st.same_on_every_rank:
            raise AssertionError(f"parameters differ between ranks after step {st.step}")
        out["max_diff_vs_gloo"] = max(out["max_diff_vs_gloo"], st.diff_vs_gloo)
    if out["max_diff_vs_gloo"] > 1e-4:
        raise AssertionError(f"parameters {out['max_diff_vs_gloo']} from gloo's")
    out["steps"] = count


def step(name: str, kw: dict, rank: int, world: int, states: dict, count: int) -> dict:
    out: dict = {"rank": rank, "step": name, "ok": False}

    def state(job: int = 0, **more) -> nt.HookState:
        job = job or int(os.environ["NETAGG_JOB"])
        if job not in states:
            states[job] = nt.HookState(job=job, **more)
        return states[job]

    if name == "first":
        s = state()
        seed = float(kw.get("seed", 1))
        got = hook_mean(s, torch.full((count,), (rank + 1) * seed))
        out.update(mean=float(got[0]), session=s.worker.session, port=s.worker.port)
        out["ok"] = exact(got, seed * (world + 1) / 2)
    elif name == "late":
        s = state()
        a = hook_mean(s, torch.full((count,), float(rank + 1)))
        t0 = time.monotonic()
        if rank == 0:
            time.sleep(float(kw["sleep"]))  # an evaluation, a checkpoint
        b = hook_mean(s, torch.full((count,), float(2 * rank + 2)))
        out["waited"] = round(time.monotonic() - t0, 3)
        out["ok"] = exact(a, (world + 1) / 2) and exact(b, float(world + 1))
        out["stats"] = s.stats()
    elif name == "mean":
        job = int(kw["job"])
        quorum = os.environ.get(f"NETAGG_QUORUM_{job}")
        s = state(job, **({"quorum": int(quorum)} if quorum else {}))
        if rank == int(kw.get("late", -1)):
            time.sleep(float(kw.get("sleep", 0)))
        got = hook_mean(s, torch.full((count,), (rank + 1) * 3.0))
        out["step"] = f"mean{job}"
        out["mean"] = float(got[0])
        out["ok"] = exact(got, float(kw["expect"]))
    elif name == "subgroup":
        groups = [dist.new_group([0, 1]), dist.new_group([2, 3])]
        group = groups[rank // 2]
        s = nt.HookState(job=11 + rank // 2, process_group=group)
        got = hook_mean(s, torch.full((count,), float(rank + 1)))
        first = rank // 2 * 2
        out["mean"] = float(got[0])
        if not exact(got, (first + 1 + first + 2) / 2):
            raise AssertionError(f"bucket mean {got[0]} is not the subgroup's")
        train(out, s, 3, group)
        s.close()
        out["ok"] = True
    elif name == "dtype":
        try:
            nt.HookState(job=int(kw["job"]), dtype=kw["dtype"])
            out["error"] = "a state of another dtype than the job's was made"
        except Exception as e:
            out["error_type"] = type(e).__name__
            out["error"] = str(e)
            out["ok"] = type(e).__name__ == "DtypeMismatch"
    elif name == "overlap":
        s = state()
        dist.barrier()
        if rank:
            time.sleep(1.0)
        fut = nt.allreduce_hook(s, Bucket(torch.full((count,), float(rank + 1))))
        out["not_done_at_return"] = not fut.done() if rank == 0 else None
        out["ok"] = exact(fut.wait(), (world + 1) / 2) and out["not_done_at_return"] is not False
    elif name == "train":
        s = state()
        before = s.buckets
        steps = int(kw.get("steps", 3))
        train(out, s, steps, None)
        out["buckets"] = s.buckets - before
        out["ok"] = out["buckets"] > steps
    elif name == "hold":
        s = state()
        print(json.dumps(dict(out, ok=True)), flush=True)
        if rank == int(kw.get("rank", -1)):
            time.sleep(3600)
        hook_mean(s, torch.full((int(kw.get("count", count)),), 1.0))
        time.sleep(3600)
    elif name == "gone":
        s = state()
        if rank == world - 1:
            time.sleep(float(kw["sleep"]))
        t0 = time.monotonic()
        try:
            hook_mean(s, torch.full((count,), 1.0))
            out["error"] = "the allreduce succeeded with the node gone"
        except RuntimeError as e:  # as DDP raises it from backward
            orig = nt.cause(e)
            out["error_type"] = type(orig).__name__ if orig else None
            out["error"] = str(e)
            out["ok"] = orig is not None and orig is s.error
        out["seconds"] = round(time.monotonic() - t0, 3)
        out["stats"] = s.stats()
    else:
        raise ValueError(f"unknown step {name}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("steps", nargs="+", help="NAME[:KEY=VALUE...]")
    ap.add_argument("--count", type=int, default=20000)
    ap.add_argument("--pg-timeout", type=float, default=120.0)
    args = ap.parse_args()

    dist.init_process_group("gloo", init_method="env://",
                            timeout=datetime.timedelta(seconds=args.pg_timeout))
    rank, world = dist.get_rank(), dist.get_world_size()
    states: dict = {}
    ok = True
    for spec in args.steps:
        name, *pairs = spec.split(":")
        kw = dict(p.split("=", 1) for p in pairs)
        t0 = time.monotonic()
        try:
            if not states and name not in ("subgroup", "dtype"):
                states[int(os.environ["NETAGG_JOB"])] = nt.HookState()
                print(json.dumps({"rank": rank, "step": "joined", "ok": True}), flush=True)
            out = step(name, kw, rank, world, states, args.count)
        except Exception as e:  # reported for the test to judge
            orig = nt.cause(e) or e
            out = {"rank": rank, "step": name, "ok": False, "error_type": type(orig).__name__,
                   "error": f"{type(e).__name__}: {e}"}
        out.setdefault("seconds", round(time.monotonic() - t0, 3))
        out.setdefault("error", None)
        out.setdefault("error_type", None)
        print(json.dumps(out), flush=True)
        ok = ok and out["ok"]
    for s in states.values():
        if s.error is None:
            s.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

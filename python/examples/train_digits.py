#!/usr/bin/python3
"""Data-parallel training of a small MLP on the digits data set, with the
gradients summed by gloo or by netagg (the network sums them).

One process a worker, started as torchrun starts them: the process group
made from the environment (env://: RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT; LOCAL_RANK and LOCAL_WORLD_SIZE where a host runs several).
Every worker builds the same model from the same seed, trains on its shard
of the training split (every world-th sample), and
torch.nn.parallel.DistributedDataParallel (DDP) averages the gradients:

  --mode gloo              DDP's own allreduce, over the gloo process group
  --mode netagg            netagg.torch.allreduce_hook, allreducing each
                           bucket in a thread beside the backward pass
  --mode netagg-blocking   the same hook allreducing inside the hook, which
                           blocks backward (what overlap buys, by difference)
  --mode netagg-backend    no hook: the process group is netagg's,
                           init_process_group("netagg"), and DDP's own
                           allreduces go through it (what a script gets by
                           changing one string)

In the hook's modes netagg.torch.register(model) makes the hook's state
(checking the model, joining the run) and registers the hook; the backend
makes its Worker when the group is made. Either way the job and its trees
come from the environment (NETAGG_JOB, NETAGG_TREES...: see the netagg
package), the workers, the rank and the timeout from the process group,
each worker's UDP port from LOCAL_RANK where a host runs several.

After every step every worker checks DDP's invariant, that all workers'
parameters are bitwise identical (an all_gather over the group, through
Gloo, outside the timed part); a mismatch ends the run with exit status 1. Rank 0 writes one JSON
line a step and one an epoch to OUT/NAME.jsonl (NAME: --name, or the mode)
and prints them readably; python/examples/train_compare.py compares the
runs.

  step:  {"mode", "epoch", "step", "loss", "step_seconds", "params_sha256"}:
         step counts from 1 over the whole run; loss is the mean over the
         workers; step_seconds the slowest worker's forward + backward +
         optimizer step; params_sha256 the SHA-256 of the parameters' bytes
         after the step (two runs of one seed compare them)
  epoch: {"mode", "epoch", "loss", "accuracy", "step_seconds_median"}: the
         epoch's mean training loss over every worker's samples, the test
         accuracy, the median of its steps' step_seconds

Run, for example, four workers on one host under torchrun, the userspace
aggregator standing in for a switch on loopback, each worker a child by
its port, 7178 + LOCAL_RANK (lab/train.sh, run by make train, does it
in network namespaces with the netagg module as the switch)::

    tests/tools/netagg-uagg --listen 127.0.0.1 --job 1 --child 127.0.0.1:7178 \
        --child 127.0.0.1:7179 --child 127.0.0.1:7180 --child 127.0.0.1:7181 &
    PYTHONPATH=$PWD/python GLOO_SOCKET_IFNAME=lo NETAGG_JOB=1 \
        NETAGG_TREES=0=127.0.0.1 torchrun --standalone --nproc_per_node 4 \
        python/examples/train_digits.py --mode netagg --out /tmp/train
    kill %1

Needs torch, numpy and scikit-learn (load_digits ships with it: no download).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import importlib
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, TextIO

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

MODES = ("gloo", "netagg", "netagg-blocking", "netagg-backend")

# DDP's bucket size limit, in MiB. The model has about 26 000 parameters
# (104 KB of float32 gradients): with DDP's default of 25 MiB it would be one
# bucket, a single allreduce at the very end of backward with nothing left to
# overlap it with. 4 KiB buckets make one bucket a layer (3 buckets, one
# allreduce each a step), so the hook's allreduce of the last layer's
# gradients runs while the earlier layers' are computed, as with a large
# model and 25 MiB buckets.
BUCKET_CAP_MB = 0.004


@dataclass
class Data:
    """This worker's shard of the training split, and the whole test split."""

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor


Split = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def split_digits(seed: int, cache: Optional[Path]) -> Split:
    """The digits (8x8 images, 1797 samples) split 75/25, stratified, with seed:
    x_train, x_test, y_train, y_test.

    cache: an .npz file of the split, read if it holds seed's, else written
    (atomically: workers may race). Importing scikit-learn takes half as long
    as importing torch, which counts when four workers start on two emulated
    CPUs; with the cache only the first run's workers import it.
    """
    if cache is not None and cache.exists():
        try:
            with np.load(cache) as f:
                if int(f["seed"]) == seed:
                    return f["x_train"], f["x_test"], f["y_train"], f["y_test"]
        except (OSError, ValueError, KeyError) as e:
            print(f"{cache}: unusable ({e}), made again", file=sys.stderr)
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    x, y = load_digits(return_X_y=True)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.25, random_state=seed,
                                              stratify=y)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(f".{cache.name}.{os.getpid()}")
        with open(tmp, "wb") as f:
            np.savez(f, seed=seed, x_train=x_tr, x_test=x_te, y_train=y_tr, y_test=y_te)
        os.replace(tmp, cache)
    return x_tr, x_te, y_tr, y_te


def load_data(seed: int, rank: int, world: int, cache: Optional[Path] = None) -> Data:
    """Rank's shard of the training split of split_digits(seed), and the test split.

    The shard is every world-th sample of the training split from the
    rank-th, cut to the same length on every worker: DDP needs every worker
    to take the same number of steps.
    """
    x_tr, x_te, y_tr, y_te = split_digits(seed, cache)
    # Standardised with the training split's statistics (pixels are 0..16;
    # the + 1 keeps pixels that are always 0 at 0), so SGD learns from the
    # second epoch on instead of after a long plateau.
    mean, std = x_tr.mean(axis=0), x_tr.std(axis=0) + 1.0
    x_tr = ((x_tr - mean) / std).astype(np.float32)
    x_te = ((x_te - mean) / std).astype(np.float32)
    per_worker = len(x_tr) // world
    x_sh = x_tr[rank::world][:per_worker]
    y_sh = y_tr[rank::world][:per_worker]
    return Data(torch.from_numpy(np.ascontiguousarray(x_sh)),
                torch.from_numpy(np.ascontiguousarray(y_sh)).long(),
                torch.from_numpy(x_te), torch.from_numpy(y_te).long())


def make_model(seed: int) -> nn.Module:
    """64-128-128-10 MLP, initialised from seed (the same on every worker)."""
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(),
                         nn.Linear(128, 128), nn.ReLU(),
                         nn.Linear(128, 10))


def flat_params(model: nn.Module) -> torch.Tensor:
    """All parameters, concatenated into one float32 vector (a copy)."""
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    """Fraction of x classified as y."""
    model.eval()
    with torch.no_grad():
        pred = model(x).argmax(dim=1)
    model.train()
    return float((pred == y).float().mean())


class Report:
    """Rank 0's JSON lines (OUT/MODE.jsonl) and readable lines; silent elsewhere."""

    def __init__(self, mode: str, rank: int, out: Path):
        self.mode = mode
        self.file: Optional[TextIO] = None
        if rank == 0:
            out.mkdir(parents=True, exist_ok=True)
            self.file = open(out / f"{mode}.jsonl", "w", encoding="utf-8")

    def write(self, record: dict[str, Any], text: str) -> None:
        if self.file is None:
            return
        self.file.write(json.dumps({"mode": self.mode, **record}) + "\n")
        self.file.flush()
        print(f"[{self.mode}] {text}", flush=True)

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", choices=MODES, required=True)
    p.add_argument("--name", help="the run's name in OUT/NAME.jsonl (default: the mode)")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch", type=int, default=32, help="per-worker batch size")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--threads", type=int, default=1,
                   help="torch threads a worker (default 1: workers share few CPUs)")
    p.add_argument("--pg-timeout", type=float, default=300.0, metavar="SECONDS",
                   help="timeout of the process group's operations")
    p.add_argument("--out", type=Path, required=True, help="directory of MODE.jsonl")
    p.add_argument("--data-cache", type=Path, metavar="FILE.npz",
                   help="keep the data split in this file, to skip importing scikit-learn "
                        "in later runs")
    args = p.parse_args(argv)
    if args.epochs < 1 or args.batch < 1:
        p.error("--epochs and --batch must be at least 1")
    missing = [v for v in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
               if v not in os.environ]
    if missing:
        p.error(f"no {', '.join(missing)} in the environment: start it with torchrun "
                "(or set them as torchrun does)")
    return args


def train(args: argparse.Namespace) -> int:
    mode = args.mode
    torch.set_num_threads(args.threads)
    backend = "netagg" if mode == "netagg-backend" else "gloo"
    dist.init_process_group(backend, init_method="env://",
                            timeout=datetime.timedelta(seconds=args.pg_timeout))
    rank, world = dist.get_rank(), dist.get_world_size()
    data = load_data(args.seed, rank, world, args.data_cache)
    n = len(data.y_train)
    steps_per_epoch = (n + args.batch - 1) // args.batch
    print(f"rank {rank}: {mode}, {n} training samples, {steps_per_epoch} steps an epoch",
          flush=True)

    # DDP makes its first bucket at most dist._DEFAULT_FIRST_BUCKET_BYTES (1 MiB,
    # the whole model here) whatever bucket_cap_mb says; DDP's source invites
    # setting it. Its buckets apply from the second step on (DDP rebuilds them
    # in the order gradients became ready in the first).
    dist._DEFAULT_FIRST_BUCKET_BYTES = int(BUCKET_CAP_MB * 1024 * 1024)
    model = DDP(make_model(args.seed), bucket_cap_mb=BUCKET_CAP_MB)
    state: Any = None
    if mode in ("netagg", "netagg-blocking"):
        import netagg.torch as nt

        state = nt.register(model, overlap=(mode == "netagg"))
        print(f"rank {rank}: {state.worker!r}, port {state.worker.port}", flush=True)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    report = Report(args.name or mode, rank, args.out)

    step = 0
    for epoch in range(1, args.epochs + 1):
        order = torch.from_numpy(np.random.default_rng([args.seed, epoch, rank]).permutation(n))
        loss_sum = 0.0
        samples = 0
        times: list[float] = []
        for first in range(0, n, args.batch):
            idx = order[first:first + args.batch]
            x, y = data.x_train[idx], data.y_train[idx]
            step += 1
            try:
                t0 = time.perf_counter()
                opt.zero_grad(set_to_none=True)
                loss = F.cross_entropy(model(x), y)
                loss.backward()  # DDP waits for the buckets' allreduces here
                opt.step()
                seconds = time.perf_counter() - t0
            except Exception as e:
                print(f"rank {rank}: {mode}: step {step} (epoch {epoch}) failed: "
                      f"{type(e).__name__}: {e}", file=sys.stderr, flush=True)
                raise

            # Not timed: every worker's parameters, its loss and step time.
            mine = torch.cat([flat_params(model),
                              torch.tensor([loss.item(), seconds], dtype=torch.float32)])
            gathered = [torch.empty_like(mine) for _ in range(world)]
            dist.all_gather(gathered, mine)
            for r in range(1, world):
                if not torch.equal(gathered[r][:-2], gathered[0][:-2]):
                    diff = (gathered[r][:-2] - gathered[0][:-2]).abs()
                    print(f"rank {rank}: {mode}: after step {step} (epoch {epoch}) the "
                          f"parameters of rank {r} differ from rank 0's: "
                          f"{int((diff != 0).sum())} of {diff.numel()} elements, by up to "
                          f"{float(diff.max()):.3g}", file=sys.stderr, flush=True)
                    return 1
            step_loss = float(sum(float(g[-2]) for g in gathered) / world)
            step_seconds = max(float(g[-1]) for g in gathered)
            loss_sum += step_loss * len(idx)
            samples += len(idx)
            times.append(step_seconds)
            # What two runs of one seed compare: the parameters' bits.
            digest = hashlib.sha256(gathered[0][:-2].numpy().tobytes()).hexdigest()
            report.write({"epoch": epoch, "step": step, "loss": step_loss,
                          "step_seconds": step_seconds, "params_sha256": digest},
                         f"epoch {epoch} step {step}: loss {step_loss:.4f}, "
                         f"{step_seconds * 1e3:.1f} ms")

        acc = accuracy(model.module, data.x_test, data.y_test)
        epoch_loss = loss_sum / samples
        median = statistics.median(times)
        report.write({"epoch": epoch, "loss": epoch_loss, "accuracy": acc,
                      "step_seconds_median": median},
                     f"epoch {epoch}: loss {epoch_loss:.4f}, test accuracy {acc:.4f}, "
                     f"median step {median * 1e3:.1f} ms")

    report.close()
    if mode == "netagg-backend" and rank == 0:
        import netagg.torch as nt

        print(f"rank 0: the netagg group in {step} steps: {json.dumps(nt.stats())}",
              flush=True)
    if state is not None:
        if rank == 0:
            print(f"rank 0: {state.buckets} netagg allreduces in {step} steps: "
                  f"{json.dumps(state.stats())}", flush=True)
        state.close()
    dist.barrier()
    dist.destroy_process_group()
    print(f"rank {rank}: done", flush=True)
    return 0


def main() -> int:
    args = parse_args()
    if args.mode != "gloo":
        try:  # fail early and clearly
            importlib.import_module("netagg.torch")
        except ImportError as e:
            print(f"rank {os.environ.get('RANK')}: cannot import netagg ({e}): set "
                  "PYTHONPATH to the checkout's python/ directory", file=sys.stderr)
            return 2
    return train(args)


if __name__ == "__main__":
    sys.exit(main())

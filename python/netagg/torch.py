# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""netagg for PyTorch: a torch.distributed backend, DDP communication hooks
and a tensor allreduce.

Importing this module registers the backend "netagg"
(netagg.process_group): ``dist.init_process_group("netagg")`` instead of
"gloo", and every all_reduce of the job's dtype goes through netagg, DDP's
with no hook included; what netagg does not do goes through Gloo, warned
and counted (:func:`stats`).

With the hooks, DDP's gradients go through netagg and the process
group (gloo) is used only for DDP's set-up and for the workers to agree
how they start::

    import torch.distributed as dist
    import netagg.torch

    dist.init_process_group("gloo")          # torchrun's env://
    model = torch.nn.parallel.DistributedDataParallel(net)
    netagg.torch.register(model)             # job and trees from NETAGG_*

or, as with PyTorch's own hooks::

    state = netagg.torch.HookState(process_group=model.process_group, module=model)
    model.register_comm_hook(state, netagg.torch.allreduce_hook)

DDP hands the hook its gradient buckets (flat buffers of gradients,
bucket_cap_mb each) in the same order on every worker. The hook returns a
future at once and a thread of its own runs the allreduce (the C library
releases the GIL), so communication overlaps the rest of the backward
pass; buckets are reduced one after the other, in order, as every worker
must. Each chunk of the result is the mean of the workers it sums (DDP
averages gradients): divided by the contributors the chunk says it has,
so that a job with a quorum averages the workers that made it, and left
as it is where the nodes averaged already (a job of ``op avg``).

Starting: making the state is a collective of the process group. Its rank
0 chooses a number for the run and sends it to the others; every worker
then joins the run through the trees (netagg.Worker.join): the workers
agree a session no earlier run used, so that a run torchrun restarts never
receives the dead run's sums whatever its round numbers, and each rank is
found counted exactly once in every tree. A wrong configuration fails
there, when the state is made, rather than at the first backward: two
workers behind one child's address (JoinError), a job of another dtype
(DtypeMismatch), a node without the job (NodeUnreachable), parameters that
are not on the CPU (ValueError, with ``module=``).

Waiting: an allreduce waits for the slowest worker as long as the process
group would (its timeout, torch's 30 minutes by default): a rank busy
evaluating or checkpointing between steps costs the others time, not a
failure. A node that stops answering fails every worker waiting on it
within node_timeout (10 s; NodeUnreachable). After a failure the workers'
allreduces are out of step, so every later bucket of that state fails at
once with the same error; the run does not go on with a wrong sum, it
ends, and torchrun's restart (or yours) starts a new one, which joins a
session of its own.

Errors: DDP raises a failed future from backward as a RuntimeError whose
message holds the netagg error's (its class, its text, and a tag such as
``[netagg error #3]``); :func:`cause` gives back the exception itself, and
``HookState.error`` keeps the first one.

Several workers a host (``torchrun --nproc_per_node N``): each process
sends from its own UDP port, NETAGG_PORT (7178 by default when the host
runs several) plus its LOCAL_RANK, and the nodes list each as a child
``ADDR:PORT`` (``netagg tree add ... child 10.0.1.1:7178 child
10.0.1.1:7179``; ``python3 -m netagg.rat`` plans them from a host's
``procs``).

Gradient compression, as PyTorch's fp16_compress_hook and
bf16_compress_hook: :func:`fp16_compress_hook` and
:func:`bf16_compress_hook` (or allreduce_hook with a worker of dtype
float16 or bfloat16, a job of dtype f16 or bf16) cast each float32 bucket
to that type, divided by the number of workers (so that the sum cannot
overflow the half type), allreduce it through netagg and write it back
into the bucket; a chunk that sums fewer workers is scaled up to their
mean. The cast is a tensor of half the bucket's size, the one copy of a
bucket the hook makes: it is the compression, half the bytes on the wire.
With float32 (the default) the bucket is allreduced where it is, never
copied, and averaged as its results are written.

:meth:`HookState.stats` sums up what the allreduces did (buckets, bytes,
time, retransmissions, congestion marks, late and partial results).
Without DDP, :func:`allreduce` sums or averages a tensor in place.
"""


import concurrent.futures
import itertools
import os
import re
import secrets
import threading
import time
from typing import Any, Callable, Optional

import torch
import torch.distributed as dist

from . import AllreduceInfo, Worker
from .process_group import NetaggFallbackWarning, ProcessGroupNetagg
from .process_group import register as register_backend

__all__ = ["HookState", "HookError", "allreduce_hook", "fp16_compress_hook",
           "bf16_compress_hook", "register", "cause", "allreduce", "default_worker",
           "ProcessGroupNetagg", "NetaggFallbackWarning", "stats", "register_backend"]

#: The worker dtypes the hook takes: float32 allreduces the bucket in place,
#: the half types a compressed copy of it.
_HOOK_DTYPES: dict[str, Optional[torch.dtype]] = {
    "float32": None, "float16": torch.float16, "bfloat16": torch.bfloat16}


class HookError(RuntimeError):
    """What a bucket's failed future holds: the netagg error, tagged.

    DDP raises it from backward as a RuntimeError carrying this text; the
    original exception is :func:`cause` of that error, and ``__cause__``
    of this one.
    """


# Errors handed to DDP, by tag number, for cause(): the last few only.
_ERRORS: dict[int, BaseException] = {}
_ERRORS_KEEP = 64
_error_ids = itertools.count(1)
_errors_lock = threading.Lock()
_TAG = re.compile(r"\[netagg error #(\d+)\]")


def _tagged(what: str, e: BaseException) -> HookError:
    """A HookError for e, its tag registered for cause()."""
    with _errors_lock:
        n = next(_error_ids)
        _ERRORS[n] = e
        for old in [k for k in _ERRORS if k <= n - _ERRORS_KEEP]:
            del _ERRORS[old]
    err = HookError(f"[netagg error #{n}] {what}: {type(e).__name__}: {e}")
    err.__cause__ = e
    return err


def cause(err: BaseException) -> Optional[BaseException]:
    """The netagg exception behind an error DDP raised from backward.

    DDP turns a failed hook future into a RuntimeError carrying its text;
    the text's tag ``[netagg error #N]`` names the exception the allreduce
    raised (AllreduceTimeout, NodeUnreachable, PartialResultError...),
    kept for the last 64 errors. None if err has no such tag.
    """
    m = _TAG.search(str(err))
    if m is None:
        return None
    with _errors_lock:
        return _ERRORS.get(int(m.group(1)))


def _group(process_group: Any) -> Any:
    return process_group if process_group is not None else dist.group.WORLD


def _group_timeout(pg: Any) -> float:
    """Seconds the process group waits for a peer (torch's default: 30 min)."""
    timeout = getattr(getattr(pg, "options", None), "_timeout", None)
    if timeout is None:
        timeout = dist.default_pg_timeout
    return timeout.total_seconds()


def _group_src(pg: Any) -> int:
    """The global rank of the group's rank 0 (broadcast wants global ranks)."""
    if pg is dist.group.WORLD:
        return 0
    for name in ("get_global_rank", "_get_global_rank"):
        fn = getattr(dist, name, None) or getattr(dist.distributed_c10d, name, None)
        if fn is not None:
            return int(fn(pg, 0))
    raise RuntimeError("netagg: this torch cannot name a group's rank 0")


def _agree_session(pg: Any) -> int:
    """A number rank 0 of the group chose for the run, on every rank."""
    t = torch.tensor([secrets.randbits(32) if dist.get_rank(pg) == 0 else 0],
                     dtype=torch.int64)
    dist.broadcast(t, src=_group_src(pg), group=pg)
    return int(t.item())


def _check_module(module: torch.nn.Module, half: Optional[torch.dtype]) -> None:
    """ValueError unless every gradient the hook will see can go through it."""
    for name, p in module.named_parameters():
        if not p.requires_grad:
            continue
        if p.device.type != "cpu":
            raise ValueError(
                f"parameter {name} is on {p.device}: netagg allreduces gradients in CPU "
                f"memory (no {p.device.type} staging yet); train on the CPU, or keep DDP's "
                f"own allreduce for this model")
        if p.dtype != torch.float32:
            raise ValueError(
                f"parameter {name} is {p.dtype}: the hook takes float32 gradients (and "
                f"compresses them to {half or 'a half type'} itself)")


class HookState:
    """The state of the netagg hooks: a joined netagg Worker and its thread.

    Making it is a collective of process_group: every rank makes its
    state at the same point (after DDP is made, say), and it returns once
    every rank has joined the run (see the module's text, "Starting").

    Args:
        worker: the Worker to allreduce through; None builds one with
            Worker.from_env(**worker_args), workers and rank the group's,
            timeout the group's (unless given, or NETAGG_TIMEOUT), the
            session number rank 0's. Its dtype is float32 (the bucket is
            allreduced in place), or float16 or bfloat16 to compress the
            gradients (see fp16_compress_hook). int32 is refused.
        process_group: the group DDP reduces over, as PyTorch's hooks take
            it (None: the default group, WORLD); DDP(process_group=...)
            needs the same here.
        average: the mean of the workers (DDP's), chunk by chunk by the
            contributors each result sums; False: their sum.
        overlap: True (the default) returns from the hook at once and
            allreduces in a thread beside the backward pass; False
            allreduces inside the hook, blocking backward (to measure what
            overlap buys).
        module: the DDP model (or any module): its parameters are checked
            now (on the CPU, float32), not at the first backward.
        worker_args: keyword arguments of Worker, e.g. job=, trees=,
            dtype=, timeout=, node_timeout=.
    """

    def __init__(self, worker: Optional[Worker] = None, *, process_group: Any = None,
                 average: bool = True, overlap: bool = True,
                 module: Optional[torch.nn.Module] = None, **worker_args: Any):
        self.process_group = _group(process_group)
        # Before anything is sent: a model the hook cannot serve fails here.
        if module is not None:
            _check_module(module, _HOOK_DTYPES.get(
                worker.dtype if worker is not None else worker_args.get(
                    "dtype", os.environ.get("NETAGG_DTYPE", "float32"))))
        if worker is None:
            worker = self._make_worker(dict(worker_args), average)
        elif worker_args:
            raise TypeError("pass either a worker or the arguments to build one, not both")
        if worker.dtype not in _HOOK_DTYPES:
            raise ValueError(f"gradients are floating point: the hook takes a worker of "
                             f"dtype {', '.join(_HOOK_DTYPES)}; the worker's dtype is "
                             f"{worker.dtype}")
        self.worker = worker
        self._half: Optional[torch.dtype] = _HOOK_DTYPES[worker.dtype]
        self.average = average
        self.overlap = overlap
        self._mean = (None if not average else "after" if self._half is None else "before")
        self.buckets = 0
        """Buckets allreduced so far."""
        self.error: Optional[BaseException] = None
        """The first failure; every bucket after it fails with it."""
        self.last_info: Optional[AllreduceInfo] = None
        """What the last bucket's allreduce did."""
        self._stats: dict[str, Any] = {
            "buckets": 0, "failed": 0, "bytes": 0, "seconds": 0.0, "seconds_max": 0.0,
            "retransmits": 0, "probes": 0, "late": 0, "ce": 0, "regrouped": 0,
            "averaged": 0, "contributors_min": 0, "contributors_max": 0, "window_min": 0}
        self._stats_lock = threading.Lock()
        self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="netagg")
        # Every rank joins now, so that a wrong set-up fails here.
        self.worker.join()

    def _make_worker(self, kw: dict[str, Any], average: bool) -> Worker:
        pg = self.process_group
        if dist.is_available() and dist.is_initialized():
            kw.setdefault("workers", dist.get_world_size(pg))
            kw.setdefault("rank", dist.get_rank(pg))
            if "timeout" not in kw and "NETAGG_TIMEOUT" not in os.environ:
                kw["timeout"] = _group_timeout(pg)
            if "session" not in kw and "NETAGG_SESSION" not in os.environ:
                kw["session"] = _agree_session(pg)
        return Worker.from_env(**kw)

    def close(self) -> None:
        """Wait for the allreduces under way, then close the worker."""
        self._pool.shutdown(wait=True)
        self.worker.close()

    def __enter__(self) -> "HookState":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def stats(self) -> dict[str, Any]:
        """What the buckets' allreduces did, summed up.

        buckets and failed (allreduces), bytes of gradients allreduced,
        seconds (their total, and the longest), retransmits and probes
        sent, late (results without this worker, after a quorum), ce
        (results marked by a congested queue), regrouped (results of a
        tree that changed), averaged (by the nodes), the fewest and most
        contributors a result summed, the smallest congestion window, the
        run's session, and the error, if one came.
        """
        with self._stats_lock:
            out = dict(self._stats)
        out["session"] = self.worker.session
        out["error"] = None if self.error is None else f"{type(self.error).__name__}: {self.error}"
        return out

    def _note(self, info: AllreduceInfo, nbytes: int, seconds: float) -> None:
        with self._stats_lock:
            s = self._stats
            s["buckets"] += 1
            s["bytes"] += nbytes
            s["seconds"] += seconds
            s["seconds_max"] = max(s["seconds_max"], seconds)
            for k in ("retransmits", "probes", "late", "ce", "regrouped", "averaged"):
                s[k] += getattr(info, k)
            if info.min_contributors and (not s["contributors_min"]
                                          or info.min_contributors < s["contributors_min"]):
                s["contributors_min"] = info.min_contributors
            s["contributors_max"] = max(s["contributors_max"], info.max_contributors)
            if not s["window_min"] or info.window_min < s["window_min"]:
                s["window_min"] = info.window_min
        self.last_info = info

    def _reduce(self, buf: torch.Tensor) -> torch.Tensor:
        t0 = time.monotonic()
        if self._half is None:
            info = self.worker.allreduce(buf, mean=self._mean)
            nbytes = buf.numel() * 4
        else:
            # The compression: a copy of the bucket in the half type (none
            # if the bucket already is of it), averaged before the sum as
            # fp16_compress_hook does, so that the sum stays in range.
            half = buf.to(self._half)
            if self.average:
                half.div_(self.worker.workers)
            info = self.worker.allreduce(half, mean=self._mean)
            nbytes = half.numel() * 2
            if half is not buf:
                buf.copy_(half)  # back into the bucket: DDP reads it there
        self._note(info, nbytes, time.monotonic() - t0)
        self.buckets += 1
        return buf


def _hook(state: HookState, bucket: dist.GradBucket,
          want: Optional[str]) -> torch.futures.Future[torch.Tensor]:
    buf = bucket.buffer()
    fut: torch.futures.Future[torch.Tensor] = torch.futures.Future()
    index = state.buckets

    def work() -> None:
        if state.error is not None:
            fut.set_exception(_tagged(
                "an earlier bucket's allreduce failed, and the workers are out of step "
                "(restart the run: it joins a session of its own)", state.error))
            return
        try:
            if want is not None and state.worker.dtype != want:
                raise ValueError(f"{_HOOK_NAMES[want]} needs a worker of "
                                 f"dtype {want} (HookState(dtype={want!r}) or "
                                 f"NETAGG_DTYPE={want}, and a job of that dtype); this "
                                 f"state's worker is {state.worker.dtype}")
            if buf.device.type != "cpu":
                raise ValueError(f"the bucket is on {buf.device}: netagg allreduces CPU "
                                 f"memory (HookState(module=model) says so at the start)")
            fut.set_result(state._reduce(buf))
        except Exception as e:  # handed to DDP, which raises it from backward
            state.error = e
            with state._stats_lock:
                state._stats["failed"] += 1
            fut.set_exception(_tagged(f"bucket {index}", e))
        except BaseException as e:  # the future must end, or backward hangs
            state.error = e
            fut.set_exception(_tagged(f"bucket {index}, interrupted", e))
            raise

    if state.overlap:
        state._pool.submit(work)
    else:
        work()
    return fut


# Annotated as DDP checks them: GradBucket in, Future[Tensor] out.
def allreduce_hook(state: HookState,
                   bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """DDP communication hook: the bucket's mean over the workers, through netagg.

    Register with ``model.register_comm_hook(state, allreduce_hook)`` (or
    :func:`register`). Returns a future of the bucket's buffer, averaged in
    place (summed with HookState(average=False)); a failure of the
    allreduce is set on the future and raised by DDP (see :func:`cause`).
    With a float16 or bfloat16 worker the bucket goes through netagg
    compressed to that type, as with :func:`fp16_compress_hook`.
    """
    return _hook(state, bucket, None)


def fp16_compress_hook(state: HookState,
                       bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """As PyTorch's fp16_compress_hook, through netagg: float16 on the wire.

    The state's worker (and the job) must be of dtype float16: each bucket
    is cast to float16, divided by the workers, allreduced, and written
    back in float32. A state of another dtype fails the bucket saying so.
    """
    return _hook(state, bucket, "float16")


def bf16_compress_hook(state: HookState,
                       bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """As PyTorch's bf16_compress_hook, through netagg: bfloat16 on the wire.

    The state's worker (and the job) must be of dtype bfloat16.
    """
    return _hook(state, bucket, "bfloat16")


_HOOK_WANTS = {fp16_compress_hook: "float16", bf16_compress_hook: "bfloat16"}
_HOOK_NAMES = {"float16": "fp16_compress_hook", "bfloat16": "bf16_compress_hook"}


def register(model: torch.nn.parallel.DistributedDataParallel,
             hook: Callable[..., Any] = allreduce_hook, **state_args: Any) -> HookState:
    """Make a HookState for a DDP model and register hook on it.

    The state takes the model's process group and checks its parameters;
    fp16_compress_hook and bf16_compress_hook make a worker of their dtype.
    A collective, as HookState is. Returns the state (stats(), close()).
    """
    if not isinstance(model, torch.nn.parallel.DistributedDataParallel):
        raise TypeError(f"register takes a DistributedDataParallel model, got "
                        f"{type(model).__name__}")
    if hook in _HOOK_WANTS and "worker" not in state_args:
        state_args.setdefault("dtype", _HOOK_WANTS[hook])
    state_args.setdefault("process_group", getattr(model, "process_group", None))
    state = HookState(module=model, **state_args)
    model.register_comm_hook(state, hook)
    return state


_default: Optional[Worker] = None
_default_lock = threading.Lock()


def default_worker() -> Worker:
    """The process's Worker for :func:`allreduce`, built once from NETAGG_*.

    workers, rank and timeout default to the default process group's, when
    there is one, and its rank 0 chooses the run's session number. With a
    default group of the "netagg" backend, its worker.
    """
    global _default
    with _default_lock:
        if _default is None:
            kw: dict[str, Any] = {}
            if dist.is_available() and dist.is_initialized():
                pg = dist.group.WORLD
                if isinstance(pg, ProcessGroupNetagg) and pg.worker is not None:
                    return pg.worker  # the "netagg" group's: one run a process
                kw.update(workers=dist.get_world_size(), rank=dist.get_rank())
                if "NETAGG_TIMEOUT" not in os.environ:
                    kw["timeout"] = _group_timeout(pg)
                if "NETAGG_SESSION" not in os.environ:
                    kw["session"] = _agree_session(pg)
            _default = Worker.from_env(**kw)
        return _default


def allreduce(t: torch.Tensor, worker: Optional[Worker] = None,
              average: bool = False) -> torch.Tensor:
    """Sum t with every worker's, in place (the mean if average).

    t: a contiguous CPU tensor of the worker's dtype (torch.float16 or
    torch.bfloat16 for those: t is never cast or copied, see
    allreduce_hook for compression) that does not require grad (a
    gradient, a buffer); anything else raises TypeError or ValueError
    before any packet leaves. average: each chunk divided by the workers
    its result sums, as it is written (left as it is where the nodes
    averaged). worker: default_worker() if None. Returns t.
    """
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"allreduce takes a torch.Tensor, got {type(t).__name__}")
    w = worker if worker is not None else default_worker()
    if average and not t.is_floating_point():
        raise ValueError("average of an integer tensor would round: sum it, or use "
                         "a job whose nodes average (op avg)")
    w.allreduce(t, mean="after" if average else None)
    return t


def stats(group: Any = None) -> dict[str, Any]:
    """What a "netagg" process group did (None: the default group's): its
    allreduces through netagg and the calls it handed to Gloo, each with
    why (see ProcessGroupNetagg.stats). TypeError for a group of another
    backend."""
    pg = _group(group)
    if not isinstance(pg, ProcessGroupNetagg):
        raise TypeError(f"netagg.torch.stats: the group is not a \"netagg\" one "
                        f"({type(pg).__name__})")
    return pg.stats()


register_backend()

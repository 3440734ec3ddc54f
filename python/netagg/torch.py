"""netagg for PyTorch: a DDP communication hook and a tensor allreduce.

With DistributedDataParallel, gradients go through netagg and the process
group (gloo) is used only for DDP's set-up (the broadcast of the initial
parameters)::

    import torch.distributed as dist
    import netagg.torch

    dist.init_process_group("gloo", ...)
    model = torch.nn.parallel.DistributedDataParallel(net)
    state = netagg.torch.HookState()   # job and trees from NETAGG_* variables
    model.register_comm_hook(state, netagg.torch.allreduce_hook)

DDP hands the hook its gradient buckets (its tensor fusion: flat buffers of
gradients, bucket_cap_mb each, 25 MiB by default; the first step's single
bucket is capped at 1 MiB) in the same order on every worker. The hook
returns a future at once and a thread of its own runs the allreduce (the C
library releases the GIL), so communication overlaps the rest of the
backward pass; buckets are reduced one after the other, in order, as every
worker must. The sum is divided by the number of workers (DDP averages
gradients); a job whose nodes already average (``op avg``) takes
HookState(average=False).

Gradient compression, as PyTorch's fp16_compress_hook and
bf16_compress_hook: with a worker of dtype float16 or bfloat16
(NETAGG_DTYPE, a job of dtype f16 or bf16) the hook casts each float32
bucket to that type, divides it by the number of workers, allreduces it
through netagg and writes it back into the bucket. The cast is a tensor
of half the bucket's size, the one copy of a bucket the hook makes: it is
the compression, half the bytes on the wire. With float32 (the default)
the bucket is allreduced where it is, never copied.

A failed allreduce (a timeout, a partial result) fails its future, and DDP
raises it from backward as a RuntimeError carrying the message (torch
casts the future's value); the exception itself is kept in
``HookState.error``. After a failure the workers' rounds are out of step,
so every later bucket of that HookState fails at once with the same error
rather than waiting out a timeout each.

Without DDP, :func:`allreduce` sums a tensor in place.
"""

import concurrent.futures
import threading
from typing import Any, Optional

import torch
import torch.distributed as dist

from . import Worker

__all__ = ["HookState", "allreduce_hook", "allreduce", "default_worker"]

#: The worker dtypes the hook takes: float32 allreduces the bucket in place,
#: the half types a compressed copy of it.
_HOOK_DTYPES: dict[str, Optional[torch.dtype]] = {
    "float32": None, "float16": torch.float16, "bfloat16": torch.bfloat16}


def _group_defaults(kw: dict[str, Any]) -> dict[str, Any]:
    """workers and rank from the default process group, where not given."""
    if dist.is_available() and dist.is_initialized():
        kw.setdefault("workers", dist.get_world_size())
        kw.setdefault("rank", dist.get_rank())
    return kw


class HookState:
    """The state of :func:`allreduce_hook`: a netagg Worker and its thread.

    Args:
        worker: the Worker to allreduce through; None builds one with
            Worker.from_env(**worker_args), workers and rank defaulting to
            the process group's. Its dtype is float32 (the bucket is
            allreduced in place), or float16 or bfloat16 to compress the
            gradients: each bucket is cast to that type, allreduced, and
            cast back into the bucket (as PyTorch's fp16_compress_hook and
            bf16_compress_hook). int32 is refused.
        average: divide the sum by the number of workers (DDP's mean).
            float32 divides the sum after the allreduce; float16 and
            bfloat16 divide each worker's compressed gradients before it,
            as PyTorch's compression hooks do, so that the sum does not
            overflow the half type (float16 ends at 65504); the division is
            exact for a power-of-two number of workers unless the quotient
            is subnormal.
        overlap: True (the default) returns from the hook at once and
            allreduces in a thread beside the backward pass; False
            allreduces inside the hook, blocking backward (to measure what
            overlap buys).
        worker_args: keyword arguments of Worker, e.g. job=, trees=.
    """

    def __init__(self, worker: Optional[Worker] = None, *, average: bool = True,
                 overlap: bool = True, **worker_args: Any):
        if worker is None:
            worker = Worker.from_env(**_group_defaults(dict(worker_args)))
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
        self.buckets = 0
        """Buckets allreduced so far."""
        self.error: Optional[BaseException] = None
        """The first failure; every bucket after it fails with it."""
        self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="netagg")

    def close(self) -> None:
        """Wait for the allreduces under way, then close the worker."""
        self._pool.shutdown(wait=True)
        self.worker.close()

    def __enter__(self) -> "HookState":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _reduce(self, buf: torch.Tensor) -> torch.Tensor:
        if self._half is None:
            self.worker.allreduce(buf)
            if self.average:
                buf.div_(self.worker.workers)
        else:
            # The compression: a copy of the bucket in the half type (none
            # if the bucket already is of it), averaged before the sum as
            # fp16_compress_hook does, so that the sum stays in range.
            half = buf.to(self._half)
            if self.average:
                half.div_(self.worker.workers)
            self.worker.allreduce(half)
            if half is not buf:
                buf.copy_(half)  # back into the bucket: DDP reads it there
        self.buckets += 1
        return buf


# Annotated as DDP checks them: GradBucket in, Future[Tensor] out.
def allreduce_hook(state: HookState,
                   bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """DDP communication hook: allreduce the bucket through netagg, averaged.

    Register with ``model.register_comm_hook(state, allreduce_hook)``.
    Returns a future of the bucket's buffer, summed (and divided by the
    number of workers) in place; a failure of the allreduce (a timeout, a
    partial result) is set on the future and raised by DDP. With a float16
    or bfloat16 worker the bucket goes through netagg compressed to that
    type, divided before the sum, and the future's buffer holds the sum
    cast back (see HookState).
    """
    buf = bucket.buffer()
    fut: torch.futures.Future[torch.Tensor] = torch.futures.Future()

    def work() -> None:
        if state.error is not None:
            fut.set_exception(state.error if isinstance(state.error, Exception)
                              else RuntimeError(repr(state.error)))
            return
        try:
            fut.set_result(state._reduce(buf))
        except Exception as e:  # handed to DDP, which raises it from backward
            state.error = e
            fut.set_exception(e)
        except BaseException as e:  # the future must end, or backward hangs
            state.error = e
            fut.set_exception(RuntimeError(f"netagg allreduce interrupted: {e!r}"))
            raise

    if state.overlap:
        state._pool.submit(work)
    else:
        work()
    return fut


_default: Optional[Worker] = None
_default_lock = threading.Lock()


def default_worker() -> Worker:
    """The process's Worker for :func:`allreduce`, built once from NETAGG_*.

    workers and rank default to the process group's, when there is one.
    """
    global _default
    with _default_lock:
        if _default is None:
            _default = Worker.from_env(**_group_defaults({}))
        return _default


def allreduce(t: torch.Tensor, worker: Optional[Worker] = None,
              average: bool = False) -> torch.Tensor:
    """Sum t with every worker's, in place (divided by the workers if average).

    t: a contiguous CPU tensor of the worker's dtype (torch.float16 or
    torch.bfloat16 for those: t is never cast or copied, see
    allreduce_hook for compression) that does not require grad (a
    gradient, a buffer); anything else raises TypeError or ValueError
    before any packet leaves. average divides the sum, in t's dtype.
    worker: default_worker() if None. Returns t.
    """
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"allreduce takes a torch.Tensor, got {type(t).__name__}")
    w = worker if worker is not None else default_worker()
    if average and not t.is_floating_point():
        raise ValueError("average of an integer tensor would round: sum it, or use "
                         "a job whose nodes average (op avg)")
    w.allreduce(t)
    if average:
        t.div_(w.workers)
    return t

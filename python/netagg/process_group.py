# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""The "netagg" backend of torch.distributed.

``import netagg.torch`` registers it; a script then changes one string::

    dist.init_process_group("netagg")        # torchrun's env://

Making the group is a collective: its rank 0 chooses the run's session
number and hands it to the others through the group's store, and every
rank joins the job's trees (NETAGG_JOB, NETAGG_TREES, ... as
netagg.Worker.from_env reads them; the rank and the number of workers are
the group's, the timeout the group's unless NETAGG_TIMEOUT says). A
configuration that cannot work fails there, not at the first allreduce.

all_reduce of CPU tensors of the job's dtype, SUM or AVG, goes through
netagg: in the order the calls are made (one thread, the C library
without the GIL), the caller's tensor summed where it is when it is
contiguous. Everything else goes to a Gloo group made from the same
store: another dtype, MIN, MAX, PRODUCT, broadcast, all_gather, barrier,
send and recv, and every call of a subgroup other than the whole job.
Each such delegation warns once (NetaggFallbackWarning, naming the call
and why) and is counted (:meth:`ProcessGroupNetagg.stats`): a fallback is
never silent. A call neither can do raises before anything is sent.

With NETAGG_ETCD (the cluster's etcd, docs/cluster.md) the job is the
cluster's to give: each rank names its host (NETAGG_NODE, default the
short host name), rank 0 asks the store for a job on those hosts, waits
until their aggregators have it and keeps its lease alive while the group
lives; every rank takes its trees from the job's record. A job the store
cannot give (no room, a quota, an unknown host, etcd unreachable) makes a
group whose every call goes through Gloo, warned at once with the reason;
NETAGG_ETCD_WAIT (s, default 0) waits that long for room first, and
NETAGG_FALLBACK=error raises instead.

A failed netagg allreduce raises from the Work's wait() (and from DDP's
backward), and every netagg allreduce after it fails at once: the ranks
are out of step, and a result taken then could be a wrong sum.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import datetime
import json
import os
import secrets
import threading
import time
import warnings
from typing import Any, Callable, Optional

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import AllreduceOptions, ProcessGroup, ReduceOp, Work

from . import cluster
from .cluster import KeptLease, PlacementError
from .etcd import Etcd, StoreError
from .worker import Worker

__all__ = ["ProcessGroupNetagg", "NetaggFallbackWarning", "BACKEND"]

BACKEND = "netagg"

# The calls a ProcessGroup may be asked for, besides allreduce: all Gloo's.
_DELEGATED = ("broadcast", "allgather", "_allgather_base", "allgather_coalesced",
              "reduce", "gather", "scatter", "reduce_scatter",
              "_reduce_scatter_base", "alltoall", "alltoall_base", "barrier",
              "monitored_barrier", "send", "recv", "recv_anysource")


class NetaggFallbackWarning(UserWarning):
    """A call of the "netagg" group went through Gloo, and why (once a reason)."""


class _Work(Work):
    """A netagg call's Work: wait() raises what the call raised.

    torch 1.13's _create_work_from_future answers wait() and is_success()
    with True even when its future failed, so a Work of our own says it.
    get_future() gives a future whose failure torch's C++ side sees (DDP
    raises it from backward). The Work keeps itself alive until it is
    waited on: a C++ caller (DDP's reducer) holds only the C++ half, which
    answers nothing once the Python object is gone.
    """

    def __init__(self, done: torch.futures.Future[Any], value: Any):
        super().__init__()
        self._done = done
        self._fut = done.then(lambda f: (f.wait(), value)[1])
        self._keep: Optional[_Work] = self

    def wait(self, timeout: Any = None) -> bool:
        self._keep = None
        self._done.wait()
        return True

    def get_future(self) -> torch.futures.Future[Any]:
        self._keep = None
        return self._fut

    def is_completed(self) -> bool:
        return self._done.done()

    def is_success(self) -> bool:
        return self._done.done() and self.exception() is None

    def exception(self) -> Optional[BaseException]:
        if not self._done.done():
            return None
        try:
            self._done.value()
        except Exception as e:
            return e
        return None

    def result(self) -> Any:
        return self._fut.value()


def _op_name(op: Any) -> str:
    for name in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"):
        if op == getattr(ReduceOp, name, None):
            return name
    return str(op)


def _dtype_name(dtype: torch.dtype) -> str:
    """netagg's name of a torch dtype (netagg.args matches tensors so)."""
    return str(dtype).replace("torch.", "")


def _then(work: Any, finish: Callable[[], None], value: Any) -> _Work:
    """A Work that is done once work is and finish() ran after it, in a
    thread of its own: Gloo's Work cannot run Python when it completes."""
    done: torch.futures.Future[Any] = torch.futures.Future()

    def run() -> None:
        try:
            work.wait()
            finish()
            done.set_result(None)
        except Exception as e:
            done.set_exception(e)

    threading.Thread(target=run, name="netagg-gloo", daemon=True).start()
    return _Work(done, value)


def _contiguous(obj: Any, pairs: list[tuple[torch.Tensor, torch.Tensor]]) -> Any:
    """obj with each non-contiguous tensor (in lists, at any depth) replaced
    by a contiguous copy, noted in pairs to be copied back: Gloo reads and
    writes a strided view as if it were dense (wrong sums, and elements
    outside the view overwritten)."""
    if isinstance(obj, torch.Tensor):
        if obj.is_contiguous():
            return obj
        c = obj.contiguous()
        pairs.append((obj, c))
        return c
    if isinstance(obj, list):
        return [_contiguous(x, pairs) for x in obj]
    return obj


def _nbytes(obj: Any) -> int:
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, list):
        return sum(_nbytes(x) for x in obj)
    return 0


class ProcessGroupNetagg(ProcessGroup):
    """A torch.distributed process group whose allreduces go through netagg.

    Made by init_process_group("netagg") (or new_group(backend="netagg")),
    not by hand. worker: None for a subgroup that is not the job's whole
    set of workers, or a run the cluster gave no job (everything through
    Gloo, warned, why_not saying why), else the joined Worker. lease: the
    job's, on the rank that keeps it (released at close() or exit).
    """

    def __init__(self, store: Any, rank: int, size: int, timeout: datetime.timedelta,
                 worker: Optional[Worker], why_not: str = "",
                 lease: Optional[KeptLease] = None):
        super().__init__(rank, size)
        self.lease = lease
        if lease is not None:
            atexit.register(_release, lease)
        # Prefixed: the group's store may serve others (netagg's session key).
        self._gloo = dist.ProcessGroupGloo(dist.PrefixStore("gloo", store), rank, size,
                                           timeout)
        self.worker = worker
        self._why_not = why_not
        self.error: Optional[BaseException] = None
        """The first failed netagg allreduce; every one after it fails with it."""
        self._warned: set[tuple[str, str]] = set()
        self._lock = threading.Lock()
        self._stats: dict[str, Any] = {
            "netagg_calls": 0, "netagg_bytes": 0, "netagg_seconds": 0.0,
            "gloo_calls": 0, "gloo_bytes": 0, "failed": 0, "retransmits": 0,
            "ce": 0, "window_min": 0, "delegated": {}}
        self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="netagg")

    def getBackendName(self) -> str:  # noqa: N802 (torch's name)
        return BACKEND

    def stats(self) -> dict[str, Any]:
        """What went where: netagg's allreduces (calls, bytes, seconds,
        retransmits, congestion marks, the least window), Gloo's calls and
        bytes, the count of each delegated call and reason ("allreduce:
        float64 is not the job's dtype float32": n), failures, the session
        and the first error."""
        with self._lock:
            out = dict(self._stats)
            out["delegated"] = dict(self._stats["delegated"])
        out["session"] = self.worker.session if self.worker is not None else 0
        out["job"] = self.worker.job if self.worker is not None else None
        out["error"] = None if self.error is None else \
            f"{type(self.error).__name__}: {self.error}"
        return out

    def close(self) -> None:
        """Wait for the allreduces under way, then close the worker."""
        self._pool.shutdown(wait=True)
        if self.worker is not None:
            self.worker.close()
        if self.lease is not None:
            _release(self.lease)

    # --- Gloo, for what netagg does not do ---------------------------------

    def _delegate(self, call: str, why: str, args: tuple[Any, ...],
                  kwargs: dict[str, Any]) -> Any:
        key = f"{call}: {why}"
        with self._lock:
            s = self._stats
            s["gloo_calls"] += 1
            s["gloo_bytes"] += _nbytes(list(args))
            s["delegated"][key] = s["delegated"].get(key, 0) + 1
            first = (call, why) not in self._warned
            self._warned.add((call, why))
        if first:
            warnings.warn(f"netagg: {call} goes through Gloo: {why}", NetaggFallbackWarning,
                          stacklevel=4)
        pairs: list[tuple[torch.Tensor, torch.Tensor]] = []
        dense = tuple(_contiguous(a, pairs) for a in args)
        work = getattr(self._gloo, call)(*dense, **kwargs)
        if not pairs:
            return work

        def back() -> None:
            for view, c in pairs:
                view.copy_(c)

        return _then(work, back, list(args[0]) if args and isinstance(args[0], list) else [])

    # --- allreduce ------------------------------------------------------------

    def _not_ours(self, tensors: list[torch.Tensor], op: Any) -> str:
        """Why netagg cannot do this allreduce, or "" if it can."""
        if self.worker is None:
            return self._why_not
        if op != ReduceOp.SUM and op != ReduceOp.AVG:
            return f"{_op_name(op)} is not a sum (netagg sums)"
        for t in tensors:
            if t.device.type != "cpu":
                return f"a tensor on {t.device} (netagg allreduces CPU memory)"
            if _dtype_name(t.dtype) != self.worker.dtype:
                return f"{_dtype_name(t.dtype)} is not the job's dtype {self.worker.dtype}"
        return ""

    def allreduce(self, tensors: Any, opts: Any = None) -> Work:
        if isinstance(tensors, torch.Tensor):  # the allreduce(tensor, op) form
            tensors = [tensors]
        if not isinstance(opts, AllreduceOptions):
            op = opts if opts is not None else ReduceOp.SUM
            opts = AllreduceOptions()
            opts.reduceOp = op
        op = opts.reduceOp
        if not isinstance(tensors, list) or not all(isinstance(t, torch.Tensor)
                                                    for t in tensors):
            raise TypeError("allreduce takes a tensor or a list of tensors")
        if not tensors:  # as Gloo says; in the thread it would fail the group
            raise ValueError("allreduce of an empty list of tensors")
        why = self._not_ours(tensors, op)
        if why:
            return self._allreduce_gloo(tensors, opts, why)
        average = op == ReduceOp.AVG
        if average and not tensors[0].is_floating_point():
            raise ValueError("AVG of int32 would round: use SUM, or a job whose nodes "
                             "average (op avg)")
        done: torch.futures.Future[Any] = torch.futures.Future()
        self._pool.submit(self._run, tensors, average, done)
        return _Work(done, tensors)

    def allreduce_coalesced(self, tensors: list[torch.Tensor], opts: Any = None) -> Work:
        """dist.all_reduce_coalesced: the list as one allreduce, as allreduce
        does with a list."""
        ar = AllreduceOptions()
        ar.reduceOp = opts.reduceOp if opts is not None else ReduceOp.SUM
        return self.allreduce(list(tensors), ar)

    def _allreduce_gloo(self, tensors: list[torch.Tensor], opts: Any, why: str) -> Work:
        """Gloo's allreduce, for the two things torch 1.13's Gloo lacks:
        bfloat16 (summed in float32) and AVG (a sum, then divided)."""
        op = opts.reduceOp
        if op == ReduceOp.AVG and not all(t.is_floating_point() for t in tensors):
            raise ValueError("AVG of an integer tensor would round: use SUM")
        widen = any(t.dtype == torch.bfloat16 for t in tensors)
        if op != ReduceOp.AVG and not widen:
            return self._delegate("allreduce", why, (tensors, opts), {})
        sums = [t.float() if t.dtype == torch.bfloat16 else t for t in tensors]
        sum_opts = AllreduceOptions()
        sum_opts.reduceOp = ReduceOp.SUM if op == ReduceOp.AVG else op
        inner = self._delegate("allreduce", why, (sums, sum_opts), {})

        def finish() -> None:
            for t, s in zip(tensors, sums):
                if op == ReduceOp.AVG:
                    s.div_(self.size())
                if s is not t:
                    t.copy_(s)

        return _then(inner, finish, tensors)

    def _run(self, tensors: list[torch.Tensor], average: bool,
             done: torch.futures.Future[Any]) -> None:
        if self.error is not None:
            done.set_exception(RuntimeError(
                f"netagg: an earlier allreduce failed ({type(self.error).__name__}: "
                f"{self.error}), and the ranks are out of step: restart the run "
                f"(it joins a session of its own)"))
            return
        try:
            self._reduce(tensors, average)
            done.set_result(None)
        except Exception as e:
            with self._lock:
                self._stats["failed"] += 1
            self.error = e
            done.set_exception(e)
        except BaseException as e:  # the future must end, or its waiters hang
            self.error = e
            done.set_exception(RuntimeError(f"netagg: allreduce interrupted: {e!r}"))
            raise

    def _reduce(self, tensors: list[torch.Tensor], average: bool) -> None:
        """One netagg allreduce of tensors: the tensor itself when it is one
        and contiguous; else a contiguous buffer of them all (the list
        coalesced into one allreduce), copied back after."""
        assert self.worker is not None
        if len(tensors) == 1 and tensors[0].is_contiguous():
            buf = tensors[0]
        else:
            buf = torch.cat([t.reshape(-1) for t in tensors])
        t0 = time.monotonic()
        info = self.worker.allreduce(buf, mean="after" if average else None) \
            if buf.numel() else None
        seconds = time.monotonic() - t0
        if buf is not tensors[0]:
            at = 0
            for t in tensors:
                n = t.numel()
                t.copy_(buf[at:at + n].view(t.shape))
                at += n
        with self._lock:
            s = self._stats
            s["netagg_calls"] += 1
            s["netagg_bytes"] += buf.numel() * buf.element_size()
            s["netagg_seconds"] += seconds
            if info is not None:
                s["retransmits"] += info.retransmits
                s["ce"] += info.ce
                if info.window_min and (not s["window_min"]
                                        or info.window_min < s["window_min"]):
                    s["window_min"] = info.window_min


def _delegator(call: str) -> Callable[..., Any]:
    def method(self: ProcessGroupNetagg, *args: Any, **kwargs: Any) -> Any:
        return self._delegate(call, "netagg does only allreduce", args, kwargs)
    method.__name__ = call
    method.__doc__ = f"{call}, through the group's Gloo (warned once, counted)."
    return method


for _call in _DELEGATED:
    setattr(ProcessGroupNetagg, _call, _delegator(_call))


def _session(store: Any, rank: int, timeout: datetime.timedelta) -> int:
    """The run's session number, rank 0's choice, through the group's store."""
    if "NETAGG_SESSION" in os.environ:
        return int(os.environ["NETAGG_SESSION"])
    key = "netagg/session"
    if rank == 0:
        store.set(key, str(secrets.randbits(32) or 1))
    store.wait([key], timeout)
    return int(store.get(key).decode())


def _release(lease: KeptLease) -> None:
    try:
        lease.release()
    except StoreError:
        pass    # the job goes when its lease's TTL runs out


class _NoJob(Exception):
    """The cluster gave the group no job: why."""


def _job_from_etcd(store: Any, rank: int, size: int, timeout: datetime.timedelta,
                   url: str, wait: float) -> tuple[dict[str, Any], Optional[KeptLease]]:
    """Worker's arguments for rank, of a job rank 0 has placed through the
    etcd at url for the group's hosts (waiting up to wait s for room), and
    the job's lease on rank 0; _NoJob(why) on every rank when there is
    none."""
    env = os.environ
    host = cluster.this_node(env)
    store.set(f"netagg/host/{rank}", host)
    names = [f"netagg/host/{r}" for r in range(size)]
    store.wait(names, timeout)
    hosts = [store.get(n).decode() for n in names]
    lease: Optional[KeptLease] = None
    if rank == 0:
        try:
            etcd = Etcd.connect(url, env.get("NETAGG_ETCD_USER"),
                                env.get("NETAGG_ETCD_PASSWORD_FILE"))
            rec, lease_id, job_key = cluster.start_job(etcd, cluster.group_request(hosts, env),
                                                       wait)
            lease = KeptLease(etcd, lease_id, cluster.JOB_TTL)
            cluster.group_worker(rec, hosts, rank, job_key)
            # The key to the group's ranks through its own store, which the
            # group trusts with its rendezvous already.
            answer: dict[str, Any] = {"job": rec, "key": job_key.hex()}
        except (ValueError, OSError, PlacementError, StoreError) as e:
            if lease is not None:
                _release(lease)
                lease = None
            answer = {"error": str(e)}
        store.set("netagg/job", json.dumps(answer))
    store.wait(["netagg/job"], timeout)
    answer = json.loads(store.get("netagg/job").decode())
    if "error" in answer:
        # Rank 0 serves the group's store: it stays until every rank has
        # read why, so that each says so rather than losing the store.
        store.set(f"netagg/job-read/{rank}", "1")
        if rank == 0:
            store.wait([f"netagg/job-read/{r}" for r in range(size)], timeout)
        raise _NoJob(answer["error"])
    return cluster.group_worker(answer["job"], hosts, rank, bytes.fromhex(answer["key"])), lease


def _create(opts: Any, pg_options: Any = None) -> ProcessGroupNetagg:
    """init_process_group's and new_group's creator (torch's extended API)."""
    store, rank, size, timeout = opts.store, opts.group_rank, opts.group_size, opts.timeout
    ranks = list(opts.global_ranks_in_group)
    if ranks:  # new_group's: the job's run is the default group's
        return ProcessGroupNetagg(store, rank, size, timeout, None,
                                  f"a subgroup (ranks {ranks}) is not the job's run, "
                                  f"which is the default group's")
    url = os.environ.get("NETAGG_ETCD")
    fallback = os.environ.get("NETAGG_FALLBACK", "gloo")
    if url:
        given = [v for v in ("NETAGG_JOB", "NETAGG_TREES", "NETAGG_WORKERS")
                 if v in os.environ]
        if given:
            raise ValueError(f"netagg: NETAGG_ETCD has the cluster place the job: "
                             f"unset {', '.join(given)}")
        if fallback not in ("gloo", "error"):
            raise ValueError(f"netagg: NETAGG_FALLBACK={fallback!r}: gloo or error")
        try:
            wait = float(os.environ.get("NETAGG_ETCD_WAIT", "0"))
        except ValueError:
            raise ValueError(f"netagg: NETAGG_ETCD_WAIT={os.environ['NETAGG_ETCD_WAIT']!r}: "
                             "seconds to wait for room") from None
    kw: dict[str, Any] = {"workers": size, "rank": rank,
                          "session": _session(store, rank, timeout)}
    if "NETAGG_TIMEOUT" not in os.environ:
        kw["timeout"] = timeout.total_seconds()
    lease: Optional[KeptLease] = None
    if url:
        try:
            job, lease = _job_from_etcd(store, rank, size, timeout, url, wait)
        except _NoJob as e:
            why = f"no job from etcd at {url}: {e}"
            if fallback == "error":
                raise RuntimeError(f"netagg: {why} (NETAGG_FALLBACK=error)") from None
            warnings.warn(f"netagg: the group's calls go through Gloo: {why}",
                          NetaggFallbackWarning, stacklevel=2)
            return ProcessGroupNetagg(store, rank, size, timeout, None, why)
        kw.update(job)
    try:
        worker = Worker.from_env(**kw)
        worker.join()
    except BaseException:
        if lease is not None:
            _release(lease)
        raise
    return ProcessGroupNetagg(store, rank, size, timeout, worker, lease=lease)


def register() -> None:
    """Register the backend "netagg" with torch.distributed (idempotent)."""
    if not hasattr(dist.Backend, BACKEND.upper()):
        dist.Backend.register_backend(BACKEND, _create, extended_api=True)

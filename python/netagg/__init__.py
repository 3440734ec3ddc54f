# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""netagg: allreduce through in-network aggregation, from Python.

A :class:`Worker` is one worker of a netagg job: it sends its buffer to the
job's aggregation trees (Linux hosts or switches running the netagg module,
configured with the ``netagg`` CLI) and gets the sum over all workers back,
written in place over the buffer::

    import numpy, netagg

    w = netagg.Worker(job=7, trees={0: "10.0.0.254"}, workers=4)
    grad = numpy.ones(1_000_000, dtype=numpy.float32)
    info = w.allreduce(grad)      # grad now holds the sum of the 4 workers'
    w.close()

Every worker of the job calls :meth:`Worker.allreduce` on a buffer of the
same size, in the same order. The buffer is anything with the buffer
protocol that is writable and C-contiguous (a bytearray, a numpy array) or
a contiguous CPU torch tensor; it is never copied. Its elements are the
worker's dtype, as the job's on the nodes::

    dtype      bytes  numpy            torch
    float32    4      numpy.float32    torch.float32
    int32      4      numpy.int32      torch.int32
    float16    2      numpy.float16    torch.float16   (IEEE binary16)
    bfloat16   2      (none)           torch.bfloat16  (binary32's upper half)

A buffer of bytes (format "B", "b" or "c": a bytearray, a numpy array's
.view(numpy.uint8)) is taken as raw elements of that type in host byte
order; numpy has no bfloat16, so a bfloat16 buffer is a torch.bfloat16
tensor or bytes. float16 and bfloat16 take half the bytes of float32 on
the wire; the nodes widen them, sum in float32 and round the sum to the
type once per tree level it crosses, not once per addition (see
uapi/linux/netagg.h).

Failures are exceptions: :class:`AllreduceTimeout` when no result came
within the timeout (a wrong job, an unreachable tree, a worker missing),
:class:`PartialResultError` when a result did not sum the workers the
worker accepts (the buffer is then partly overwritten), :class:`NetaggError`
for the other errors of the C library, ValueError and TypeError for bad
arguments, each with the library's or the package's message.

:mod:`netagg.torch` has a DDP communication hook and a tensor allreduce.
Environment variables (used by :meth:`Worker.from_env` and netagg.torch)::

    NETAGG_JOB      job ID (required)
    NETAGG_TREES    the job's trees, "TID=ADDR,..." e.g. "0=10.0.0.254,1=10.0.1.254"
                    (required); ADDR is IPv4 or IPv6, bracketed or not
                    ("0=2001:db8::1,1=[2001:db8::2]"), one family for all
                    a worker's trees
    NETAGG_WORKERS  workers in the job (netagg.torch: the process group's size)
    NETAGG_DTYPE    float32 (default), int32, float16 or bfloat16
    NETAGG_WINDOW   VIDs in flight a tree (default 64)
    NETAGG_TIMEOUT  seconds without a result before failing (default 2)
    NETAGG_QUORUM   fewest contributions a result may sum (default: workers)
    NETAGG_ROUND    round of the first allreduce (default 0)
    NETAGG_SESSION  where the run's workers meet to join (default 0)
    NETAGG_MTU      the job's MTU (default 1500)
    NETAGG_SRC      local address to send from, of the trees' family (default: any)
    NETAGG_PORT     local UDP port to send from, LOCAL_RANK added (default: any;
                    7178 + LOCAL_RANK when LOCAL_WORLD_SIZE, as torchrun sets
                    it, says the host runs several workers)
    NETAGG_NODE_TIMEOUT  seconds a tree's node may stay silent (default 10)
    NETAGG_RANK     this worker's rank, 0 to workers - 1, LOCAL_RANK added: the
                    rank of the host's first worker (netagg.torch: the group's)
    NETAGG_LIBRARY  path of libnetagg.so.4, if not found by itself
"""

from __future__ import annotations

import ctypes
import errno as _errno
import ipaddress
import os
import sys
import threading
from dataclasses import dataclass, fields
from typing import Any, Mapping, Optional, Sequence, Tuple, Union

from . import _clib

__all__ = [
    "Worker",
    "AllreduceInfo",
    "NetaggError",
    "AllreduceTimeout",
    "PartialResultError",
    "JoinError",
    "NodeUnreachable",
    "DtypeMismatch",
    "parse_trees",
    "DTYPES",
    "PORT_BASE",
]
__version__ = "1.0.0"

# The package lays out the library's structures itself: a library of
# another version is refused here, not misread later.
if _clib.lib.netagg_version().decode() != __version__:
    raise ImportError(
        f"netagg {__version__}: {_clib.lib._name} is netagg "
        f"{_clib.lib.netagg_version().decode()} (install the two together)"
    )

#: The first UDP port of a host's workers when it runs several (torchrun's
#: --nproc_per_node): the one after the nodes' port; LOCAL_RANK is added.
PORT_BASE = _clib.UDP_PORT + 1

#: dtype names a Worker accepts, and their uapi values.
DTYPES = {"float32": _clib.DTYPE_F32, "int32": _clib.DTYPE_I32,
          "float16": _clib.DTYPE_F16, "bfloat16": _clib.DTYPE_BF16}
#: Bytes an element of each dtype.
_ELEM_SIZE = {"float32": 4, "int32": 4, "float16": 2, "bfloat16": 2}
#: Buffer-protocol formats (struct module codes, native byte order) taken
#: as each dtype besides raw bytes; bfloat16 has none (numpy lacks it).
_FORMATS: dict[str, Tuple[str, ...]] = {"float32": ("f",), "int32": ("i", "l"),
                                        "float16": ("e",), "bfloat16": ()}
#: What to pass instead, named in the TypeError for another format.
_FORMAT_HINT = {"float32": "format 'f' (numpy.float32)",
                "int32": "format 'i' (numpy.int32)",
                "float16": "format 'e' (numpy.float16)",
                "bfloat16": "a torch.bfloat16 tensor (numpy has no bfloat16)"}

Trees = Union[str, Mapping[int, str], Sequence[Tuple[int, str]]]


@dataclass(frozen=True)
class AllreduceInfo:
    """What one allreduce did (struct netagg_allreduce_info)."""

    packets_sent: int
    """Contributions sent, retransmissions included."""
    super_sent: int
    """Sends that carried several contributions (super-packets)."""
    sends: int
    """Datagrams sent: plain packets and super-packets."""
    packets_received: int
    """Results accepted, one a chunk."""
    packets_ignored: int
    """Everything else that arrived."""
    retransmits: int
    """Contributions sent again."""
    probes: int
    """Probes sent to nodes whose results were overdue."""
    min_contributors: int
    """Fewest worker contributions a result summed (0 if none came)."""
    max_contributors: int
    """Most worker contributions a result summed."""
    regrouped: int
    """Results of a round whose tree changed while it ran."""
    refused: int
    """Results not accepted (see PartialResultError)."""
    late: int
    """Results without this worker's contribution: it reached the node after
    a quorum had completed the VID (partial aggregation)."""
    ce: int
    """Results marked CE: a queue on their way was filling (ECN)."""
    window_min: int
    """Smallest congestion window of a tree in the call: chunks in flight."""
    averaged: int
    """Results the nodes averaged (a job of op avg)."""
    job_dtype: int
    """After a DtypeMismatch: the job's dtype on the nodes (uapi value)."""
    silent_tid: int
    """After a NodeUnreachable: the tree whose node stopped answering."""
    session: int
    """The run's session the call ran in (0 before the worker joined)."""
    joins: int
    """Tries of the join this call made (its first), 0 if it made none."""
    join_missing: int
    """Ranks a failed join did not find counted once in every tree."""
    join_missing_rank: int
    """The lowest of them."""

    @classmethod
    def _from_c(cls, info: _clib.Info) -> "AllreduceInfo":
        return cls(**{f.name: int(getattr(info, f.name)) for f in fields(cls)})


class NetaggError(OSError):
    """An error of the C library: errno and its message; info if the allreduce began."""

    def __init__(self, err: int, message: str, info: Optional[AllreduceInfo] = None):
        super().__init__(err, message)
        self.info = info


class AllreduceTimeout(NetaggError, TimeoutError):
    """No result arrived within the worker's timeout.

    The job may not be configured on a tree's node, the node unreachable, or
    a worker of the job not taking part. The buffer is partly overwritten.
    """


class PartialResultError(NetaggError):
    """A result did not sum the contributions the worker accepts.

    Fewer than quorum workers (a worker removed from a tree), or a round
    regrouped while it ran. Those results were not written; the others
    were, so the buffer is partly overwritten. info says what came.
    """


class JoinError(NetaggError):
    """The workers could not join the run: a rank not counted exactly once.

    Two workers sending from one child's address (give each its own port:
    ``child ADDR:PORT`` on the nodes), two workers given one rank, or a
    worker that is no child of some tree. info.join_missing says how many
    ranks, info.join_missing_rank the lowest.
    """


class NodeUnreachable(NetaggError):
    """A tree's node answered nothing, probes included, for node_timeout.

    It was deleted, is unreachable, or does not have the job. info.silent_tid
    names the tree. Unlike AllreduceTimeout, it does not wait for timeout:
    a node that answers (holding what it has, waiting for a late worker)
    keeps the worker waiting; one that is gone fails it at once.
    """


class DtypeMismatch(NetaggError):
    """The job's dtype on the nodes is not the worker's: nothing was summed."""


_DTYPE_NAMES = {v: k for k, v in DTYPES.items()}
#: Worker(mean=): the library's NETAGG_MEAN_*.
_MEANS = {None: _clib.MEAN_NONE, "after": _clib.MEAN_AFTER, "before": _clib.MEAN_BEFORE}
#: "Not given" for arguments where None means something.
_DEFAULT: Any = object()


def _error(rc: int, rank: Optional[int], info: Optional[AllreduceInfo],
           dtype: Optional[str] = None) -> NetaggError:
    msg = _clib.lib.netagg_strerror(rc).decode()
    if rc == -_errno.ENOTUNIQ and info is not None and info.join_missing:
        msg += (f"; {info.join_missing} rank(s) not counted once, rank "
                f"{info.join_missing_rank} the lowest")
    if rc == -_errno.EHOSTUNREACH and info is not None:
        msg += f" (tree {info.silent_tid})"
    if rc == -_errno.EPROTOTYPE and info is not None:
        job = _DTYPE_NAMES.get(info.job_dtype, f"dtype {info.job_dtype}")
        msg = (f"the job's dtype on the nodes is {job}, the worker's {dtype}: "
               f"give the worker dtype={job!r} (NETAGG_DTYPE), or the job dtype "
               f"{dtype} on every node")
    if rank is not None:
        msg = f"rank {rank}: {msg}"
    cls = {-_errno.ETIMEDOUT: AllreduceTimeout,
           -_errno.EREMOTEIO: PartialResultError,
           -_errno.ENOTUNIQ: JoinError,
           -_errno.EHOSTUNREACH: NodeUnreachable,
           -_errno.EPROTOTYPE: DtypeMismatch}.get(rc, NetaggError)
    return cls(-rc, msg, info)


_Address = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]


def _inet(addr: Any, what: str) -> _Address:
    """An IPv4 or IPv6 address, the latter bracketed ("[2001:db8::1]") or not."""
    if not isinstance(addr, str):
        raise TypeError(f"{what}: an address is a str, got {type(addr).__name__}")
    text = addr.strip()
    bracketed = text.startswith("[") and text.endswith("]")
    try:
        ip = ipaddress.ip_address(text[1:-1] if bracketed else text)
    except ValueError:
        raise ValueError(f"{what}: not an IPv4 or IPv6 address: {addr!r}") from None
    if bracketed and ip.version == 4:
        raise ValueError(f"{what}: brackets are for IPv6 addresses: {addr!r}")
    return ip


def _family(ip: _Address) -> int:
    return _clib.AF_INET6 if ip.version == 6 else _clib.AF_INET


def _set_addr(dst: Any, ip: _Address, v4: str, v6: str) -> None:
    """Store ip in a structure's union: field v4 (struct in_addr's s_addr,
    network byte order) or v6 (struct in6_addr's bytes)."""
    if ip.version == 4:
        setattr(dst, v4, int.from_bytes(ip.packed, sys.byteorder))
    else:
        getattr(dst, v6).s6_addr[:] = list(ip.packed)


def parse_trees(spec: str) -> dict[int, str]:
    """Parse "TID=ADDR,TID=ADDR,..." (NETAGG_TREES) into {tid: addr}.

    ADDR is an IPv4 or an IPv6 address, the latter bracketed or not
    ("0=2001:db8::1,1=[2001:db8::2]"): each item is split at its first
    "=". Addresses are returned as written; Worker checks them.
    """
    trees: dict[int, str] = {}
    for item in spec.split(","):
        tid, sep, addr = item.strip().partition("=")
        if not sep or not tid.strip().isdigit() or not addr.strip():
            raise ValueError(f"trees: {item.strip()!r} is not TID=ADDR (in {spec!r})")
        if int(tid) in trees:
            raise ValueError(f"trees: tree {int(tid)} listed twice (in {spec!r})")
        trees[int(tid)] = addr.strip()
    return trees


def _tree_items(trees: Trees) -> list[tuple[int, str]]:
    if isinstance(trees, str):
        return list(parse_trees(trees).items())
    items = list(trees.items()) if isinstance(trees, Mapping) else list(trees)
    for item in items:
        if (not isinstance(item, tuple) or len(item) != 2 or isinstance(item[0], bool)
                or not isinstance(item[0], int) or not isinstance(item[1], str)):
            raise TypeError(f"trees: each tree is (tid: int, address: str), got {item!r}")
    return items


def _int(name: str, value: Any, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if not lo <= value <= hi:
        raise ValueError(f"{name} must be {lo} to {hi}, got {value}")
    return value


class _Pinned:
    """A buffer's address and element count, and what keeps it alive."""

    def __init__(self, buf: Any, dtype: str):
        self.keep: Any = None
        self.addr: Optional[int] = None
        if _is_torch_tensor(buf):
            self._tensor(buf, dtype)
        else:
            self._buffer(buf, dtype)

    def _tensor(self, t: Any, dtype: str) -> None:
        if t.device.type != "cpu":
            raise ValueError(f"tensor is on {t.device}: netagg allreduces CPU memory")
        if str(t.dtype) != f"torch.{dtype}":
            raise TypeError(f"tensor of {t.dtype}, the worker's dtype is {dtype}: "
                            f"pass a torch.{dtype} tensor")
        if not t.is_contiguous():
            raise ValueError("tensor is not contiguous: allreduce t.contiguous() "
                             "and copy the result back")
        if t.requires_grad:
            raise ValueError("tensor requires grad: allreduce its .grad, or pass "
                             "t.detach() to write into it in place")
        self.keep = t
        self.count = t.numel()
        self.addr = t.data_ptr() if self.count else None

    def _buffer(self, buf: Any, dtype: str) -> None:
        try:
            mv = memoryview(buf)
        except TypeError:
            raise TypeError("allreduce needs a writable buffer (bytearray, numpy "
                            f"array, CPU torch tensor), got {type(buf).__name__}") from None
        if mv.readonly:
            raise TypeError(f"{type(buf).__name__} is read-only: the result is "
                            "written in place")
        if not mv.c_contiguous:
            raise ValueError(f"{type(buf).__name__} is not C-contiguous")
        fmt = mv.format
        if fmt[:1] in ("<", "=", "@") and (fmt[0] != "<" or sys.byteorder == "little"):
            fmt = fmt[1:]
        size = _ELEM_SIZE[dtype]
        if fmt in ("B", "b", "c"):
            if mv.nbytes % size:
                raise ValueError(f"{mv.nbytes} bytes are not a whole number of "
                                 f"{dtype} elements ({size} bytes each)")
        elif fmt not in _FORMATS[dtype] or mv.itemsize != size:
            raise TypeError(f"buffer of format {mv.format!r} ({mv.itemsize} bytes an "
                            f"element), the worker's dtype is {dtype}: pass "
                            f"{_FORMAT_HINT[dtype]} or raw bytes (format 'B')")
        self.count = mv.nbytes // size
        if self.count:
            self.keep = (ctypes.c_char * mv.nbytes).from_buffer(mv.cast("B"))
            self.addr = ctypes.addressof(self.keep)


def _is_torch_tensor(obj: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.Tensor)


class Worker:
    """One worker of a netagg job: a UDP socket towards the job's trees.

    Args:
        job: the job ID, as configured on the nodes (``netagg job add``).
        trees: the job's trees and the address of each one's node the worker
            sends to: {tid: "addr"}, [(tid, "addr"), ...] or "TID=ADDR,...".
            An address is IPv4 or IPv6 ("2001:db8::1", or "[2001:db8::1]"),
            all of one family: a tree's nodes are, and a job's chunk size
            (which the IP header's length sets: 362 float32 a packet at MTU
            1500 over IPv4, 357 over IPv6) is one. Chunk c of a buffer goes
            to the c % len(trees)-th tree.
        workers: workers in the job: contributions a whole result sums.
        dtype: "float32", "int32", "float16" or "bfloat16", as the job's
            (``netagg job add JID dtype f32|i32|f16|bf16``); the type of
            the buffers allreduce() takes. float16 and bfloat16 are summed
            in float32 on the nodes and rounded once per tree level.
        window: VIDs in flight a tree, at most the job's (0: 64).
        timeout: seconds without a new result before an allreduce fails
            with AllreduceTimeout.
        rank: this worker's place among the workers, 0 to workers - 1, each
            rank once: where its nonce goes when it joins the run (and its
            name in error messages); needed unless workers is 1 or join is
            False.
        quorum: fewest contributions a result may sum (0: workers).
        round: round number of the first allreduce (any: a run has a
            session of its own, so an earlier run's rounds never meet it).
        session: where the workers meet to join: a number chosen for the run
            and given to every worker (netagg.torch: rank 0's, sent through
            the process group), or 0, the shared meeting place. With
            join=False, the run's session itself.
        join: join the run before the first allreduce (see :meth:`join`);
            False takes session as the run's, the caller vouching that no
            earlier run used it.
        mtu: the job's MTU (0: 1500).
        source: local address to send from, of the trees' family (None: any).
        port: local UDP port to send from (0: any). A node's child given as
            ADDR:PORT (several workers behind one address, a child each)
            names the worker by it.
        node_timeout: seconds a tree's node may answer nothing, probes
            included, while results are due, before an allreduce fails
            with NodeUnreachable (a node that answers keeps it waiting
            until timeout).
        mean: results as means rather than sums: "after" divides each
            chunk's sum by the contributors it says it has (the mean of
            those in it, with a quorum too), "before" takes buffers the
            caller divided by workers (as PyTorch's compression hooks do)
            and scales each chunk by workers / contributors; a job whose
            nodes average (op avg) is left as it is. None: sums.
        plain: send plain packets only, no super-packets.
        ecn: send ECN-capable and let CE marks on results shrink the
            chunks in flight (AIMD, as TCP does); False: a fixed window.

    Not thread safe in the C library; here calls on one Worker are
    serialised by a lock. Use it as a context manager, or call close().
    """

    def __init__(self, job: int, trees: Trees, workers: int, *,
                 dtype: str = "float32", window: int = 0, timeout: float = 2.0,
                 rank: Optional[int] = None, quorum: int = 0, round: int = 0,
                 mtu: int = 0, source: Optional[str] = None, plain: bool = False,
                 ecn: bool = True, session: int = 0, join: bool = True, port: int = 0,
                 node_timeout: float = 10.0, mean: Optional[str] = None):
        self._handle: Optional[int] = None
        self._lock = threading.Lock()
        cfg = _clib.WorkerCfg()
        cfg.jid = _int("job", job, 0, 2**32 - 1)
        if dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
        cfg.dtype = DTYPES[dtype]
        cfg.workers = _int("workers", workers, 1, 65535)
        cfg.quorum = _int("quorum", quorum, 0, 65535)
        cfg.round = _int("round", round, 0, 65535)
        cfg.session = _int("session", session, 0, 2**32 - 1)
        if not isinstance(join, bool):
            raise TypeError(f"join must be a bool, got {type(join).__name__}")
        cfg.no_join = 0 if join else 1
        if rank is None and join and workers != 1:
            raise ValueError("rank is needed to join the run: pass rank= (0 to workers - 1) "
                             "or set NETAGG_RANK (netagg.torch: the process group's rank)")
        cfg.rank = _int("rank", rank, 0, 65535) if rank is not None else 0
        cfg.mtu = _int("mtu", mtu, 0, 2**31)
        cfg.window = _int("window", window, 0, 2**31)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
            raise TypeError(f"timeout must be a number of seconds, got {type(timeout).__name__}")
        if not 0 < timeout <= 2**31 / 1000:
            raise ValueError(f"timeout must be above 0 s, got {timeout}")
        cfg.timeout_ms = max(1, int(timeout * 1000))
        cfg.src_port = _int("port", port, 0, 65535)
        if isinstance(node_timeout, bool) or not isinstance(node_timeout, (int, float)):
            raise TypeError(f"node_timeout must be a number of seconds, got "
                            f"{type(node_timeout).__name__}")
        if not 0 < node_timeout <= 2**31 / 1000:
            raise ValueError(f"node_timeout must be above 0 s, got {node_timeout}")
        cfg.node_timeout_ms = max(1, int(node_timeout * 1000))
        cfg.mean = self._mean_code(mean, dtype)
        cfg.plain = 1 if plain else 0
        cfg.no_ecn = 0 if ecn else 1
        items = _tree_items(trees)
        if not 1 <= len(items) <= _clib.TREES_MAX:
            raise ValueError(f"trees: 1 to {_clib.TREES_MAX} trees, got {len(items)}")
        cfg.ntrees = len(items)
        first: Optional[tuple[int, _Address]] = None
        for i, (tid, addr) in enumerate(items):
            cfg.trees[i].tid = _int("tree ID", tid, 0, _clib.TREES_MAX - 1)
            ip = _inet(addr, f"tree {tid}")
            if first is None:
                first = (tid, ip)
            elif ip.version != first[1].version:
                raise ValueError(
                    f"trees: tree {first[0]} is IPv{first[1].version} ({first[1]}) and "
                    f"tree {tid} IPv{ip.version} ({ip}): one worker's trees are all of "
                    "one family (a tree's nodes are, and the job's chunk size is one); "
                    "give every tree's node by addresses of one family")
            cfg.trees[i].family = _family(ip)
            _set_addr(cfg.trees[i], ip, "addr", "addr6")
        if source is not None:
            src = _inet(source, "source")
            assert first is not None
            if src.version != first[1].version:
                raise ValueError(f"source: {src} is IPv{src.version}, the trees IPv"
                                 f"{first[1].version}: send from an address of their family")
            cfg.src_family = _family(src)
            _set_addr(cfg, src, "src", "src6")
        bad = _clib.lib.netagg_worker_cfg_error(ctypes.byref(cfg))
        if bad is not None:
            raise ValueError(bad.decode())
        handle = ctypes.c_void_p()
        rc = _clib.lib.netagg_worker_open(ctypes.byref(cfg), ctypes.byref(handle))
        if rc:
            raise _error(rc, rank, None)
        self._handle = handle.value
        self.job = job
        self.trees = dict(items)
        self.workers = workers
        self.dtype = dtype
        self.rank = rank
        self.mean = mean
        self.timeout = timeout
        self.port = port

    @classmethod
    def from_env(cls, **overrides: Any) -> "Worker":
        """A Worker configured from NETAGG_* variables; keyword arguments win."""
        env = os.environ

        def num(var: str, conv: Any = int) -> Any:
            try:
                return conv(env[var])
            except ValueError:
                raise ValueError(f"{var}={env[var]!r} is not a number") from None

        kw: dict[str, Any] = {}
        for var, key, conv in (("NETAGG_JOB", "job", int), ("NETAGG_WORKERS", "workers", int),
                               ("NETAGG_WINDOW", "window", int),
                               ("NETAGG_TIMEOUT", "timeout", float),
                               ("NETAGG_RANK", "rank", int), ("NETAGG_QUORUM", "quorum", int),
                               ("NETAGG_ROUND", "round", int), ("NETAGG_MTU", "mtu", int),
                               ("NETAGG_SESSION", "session", int)):
            if var in env:
                kw[key] = num(var, conv)
        if "NETAGG_NODE_TIMEOUT" in env:
            kw["node_timeout"] = num("NETAGG_NODE_TIMEOUT", float)
        # Several workers a host (torchrun's LOCAL_RANK, LOCAL_WORLD_SIZE):
        # each its own port, from NETAGG_PORT or the first after netagg's.
        local = num("LOCAL_RANK") if "LOCAL_RANK" in env else 0
        if "rank" in kw:
            kw["rank"] += local
        if "NETAGG_PORT" in env:
            kw["port"] = num("NETAGG_PORT") + local
        elif "LOCAL_WORLD_SIZE" in env and num("LOCAL_WORLD_SIZE") > 1:
            kw["port"] = PORT_BASE + local
        for var, key in (("NETAGG_TREES", "trees"), ("NETAGG_DTYPE", "dtype"),
                         ("NETAGG_SRC", "source")):
            if var in env:
                kw[key] = env[var]
        kw.update(overrides)
        for key, var in (("job", "NETAGG_JOB"), ("trees", "NETAGG_TREES"),
                         ("workers", "NETAGG_WORKERS")):
            if key not in kw:
                raise ValueError(f"netagg: no {key}: pass {key}= or set {var}")
        return cls(**kw)

    def _mean_code(self, mean: Any, dtype: Optional[str] = None) -> int:
        """The library's NETAGG_MEAN_* for mean; ValueError for another."""
        if mean not in _MEANS:
            raise ValueError(f"mean must be None, 'after' or 'before', got {mean!r}")
        if mean is not None and (dtype or self.dtype) == "int32":
            raise ValueError("a mean of int32 would round: sum it, or use a job whose "
                             "nodes average (op avg)")
        return _MEANS[mean]

    @property
    def round(self) -> int:
        """The round number the next allreduce will use."""
        return int(_clib.lib.netagg_worker_round(self._live()))

    @property
    def session(self) -> int:
        """The run's session: 0 until the worker joined."""
        return int(_clib.lib.netagg_worker_session(self._live()))

    def join(self) -> AllreduceInfo:
        """Join the run now, if not yet joined: the first allreduce would.

        Every worker of the run joins together (each waits for all, for
        timeout at most without progress): through the trees, the ranks
        agree a session that no earlier run used, and find each of them
        counted exactly once in every tree. Raises JoinError when some rank
        is not (two workers behind one child's address, two of one rank),
        AllreduceTimeout when a worker or a tree's node does not answer.
        """
        info = _clib.Info()
        with self._lock:
            rc = _clib.lib.netagg_join(self._live(), ctypes.byref(info))
        result = AllreduceInfo._from_c(info)
        if rc:
            raise _error(rc, self.rank, result, self.dtype)
        return result

    def _live(self) -> int:
        if self._handle is None:
            raise ValueError("worker is closed")
        return self._handle

    def allreduce(self, buf: Any, *, mean: Any = _DEFAULT) -> AllreduceInfo:
        """Sum buf with every other worker's, in place; what the call did.

        buf: a writable C-contiguous buffer of the worker's dtype (numpy
        float32, int32 or float16; bytes for any dtype, the only buffer
        format of bfloat16), or a contiguous CPU torch tensor of that dtype
        (torch.bfloat16 for bfloat16). It is never copied. The GIL is
        released while the C library works. mean: this call's, as the
        Worker's argument (default: the Worker's). The first call joins the
        run (see :meth:`join`). Raises AllreduceTimeout, NodeUnreachable,
        PartialResultError, DtypeMismatch, JoinError or NetaggError on
        failure (each with .info), TypeError or ValueError for a buffer or
        argument it cannot take.
        """
        pinned = _Pinned(buf, self.dtype)
        want = self._mean_code(self.mean if mean is _DEFAULT else mean)
        info = _clib.Info()
        with self._lock:
            live = self._live()
            _clib.lib.netagg_worker_set_mean(live, want)
            rc = _clib.lib.netagg_allreduce(live, pinned.addr, pinned.count,
                                            ctypes.byref(info))
        result = AllreduceInfo._from_c(info)
        if rc:
            raise _error(rc, self.rank, result, self.dtype)
        return result

    def close(self) -> None:
        """Close the socket. Idempotent."""
        with self._lock:
            if self._handle is not None:
                _clib.lib.netagg_worker_close(self._handle)
                self._handle = None

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_handle", None) is not None:
            _clib.lib.netagg_worker_close(self._handle)
            self._handle = None

    def __repr__(self) -> str:
        state = "closed" if self._handle is None else f"round {self.round}"
        return (f"<netagg.Worker job {self.job} trees {self.trees} workers {self.workers} "
                f"{self.dtype}{'' if self.rank is None else f' rank {self.rank}'} {state}>")

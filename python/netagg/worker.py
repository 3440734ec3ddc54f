# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""One worker of a netagg job: :class:`Worker`, a UDP socket towards its trees.

It checks its arguments (netagg.args), calls the C library through
netagg._clib with the GIL released, and turns the library's failures into
netagg.errors' exceptions. Re-exported by netagg: ``netagg.Worker``,
``netagg.PORT_BASE``; the package's docstring (``help(netagg)``) says how
to use it and the NETAGG_* variables :meth:`Worker.from_env` reads.
"""

from __future__ import annotations

import ctypes
import errno
import os
import threading
from typing import Any, Optional

from . import _clib
from .args import (DTYPES, Trees, _Address, _family, _inet, _int, _Pinned, _set_addr,
                   _tree_items)
from .errors import _error
from .info import AllreduceInfo

#: The first UDP port of a host's workers when it runs several (torchrun's
#: --nproc_per_node): the one after the nodes' port; LOCAL_RANK is added.
PORT_BASE = _clib.UDP_PORT + 1

#: Worker(mean=): the library's NETAGG_MEAN_*.
_MEANS = {None: _clib.MEAN_NONE, "after": _clib.MEAN_AFTER, "before": _clib.MEAN_BEFORE}
#: "Not given" for arguments where None means something.
_DEFAULT: Any = object()



def _key_file(path: str | os.PathLike[str]) -> bytes:
    """A job's key file, read as ``netagg job add ... key FILE`` reads it
    (netagg_key_read(): 32 bytes, or 64 hex digits)."""
    key = (ctypes.c_uint8 * _clib.KEY_LEN)()
    rc = _clib.lib.netagg_key_read(os.fsencode(path), key)
    if rc == -errno.EBADMSG:
        raise ValueError(f"key {os.fspath(path)!r}: not {_clib.KEY_LEN} bytes, nor "
                         f"{2 * _clib.KEY_LEN} hex digits")
    if rc:
        raise ValueError(f"key {os.fspath(path)!r}: {os.strerror(-rc)}")
    raw = bytes(key)
    ctypes.memset(key, 0, _clib.KEY_LEN)
    return raw


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
        ecn: send ECN-capable and let CE marks on results cut the path's
            window as they cut a TCP flow's; False: not ECN-capable, the
            window reacts to losses only.
        dctcp: CE marks cut the window by the fraction of results marked
            (DCTCP), not by half: for fabrics that mark at a shallow
            threshold and whose other flows run DCTCP.
        node_port: the nodes' UDP port, the one ``netagg set port`` gave
            them (0: 7177).
        dscp: the DSCP that marks the worker's packets, 1 to 63, the one
            ``netagg set dscp`` gave the nodes (0: 56).
        key: the job's key, as ``netagg job add ... key FILE`` gave it to
            the nodes: its 32 bytes, or the path of that file (32 bytes, or
            64 hex digits). Every packet is then tagged, and a result whose
            tag is wrong is never taken (AllreduceInfo.bad_tags).

    Not thread safe in the C library; here calls on one Worker are
    serialised by a lock. Use it as a context manager, or call close().
    """

    def __init__(self, job: int, trees: Trees, workers: int, *,
                 dtype: str = "float32", window: int = 0, timeout: float = 2.0,
                 rank: Optional[int] = None, quorum: int = 0, round: int = 0,
                 mtu: int = 0, source: Optional[str] = None, plain: bool = False,
                 ecn: bool = True, session: int = 0, join: bool = True, port: int = 0,
                 node_timeout: float = 10.0, mean: Optional[str] = None,
                 dctcp: bool = False, node_port: int = 0, dscp: int = 0,
                 key: Optional[bytes | str | os.PathLike[str]] = None):
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
        cfg.port = _int("node_port", node_port, 0, 65535)
        cfg.dscp = _int("dscp", dscp, 0, 63)
        if isinstance(node_timeout, bool) or not isinstance(node_timeout, (int, float)):
            raise TypeError(f"node_timeout must be a number of seconds, got "
                            f"{type(node_timeout).__name__}")
        if not 0 < node_timeout <= 2**31 / 1000:
            raise ValueError(f"node_timeout must be above 0 s, got {node_timeout}")
        cfg.node_timeout_ms = max(1, int(node_timeout * 1000))
        cfg.mean = self._mean_code(mean, dtype)
        cfg.plain = 1 if plain else 0
        cfg.no_ecn = 0 if ecn else 1
        cfg.dctcp = 1 if dctcp else 0
        if key is not None:
            raw = key if isinstance(key, bytes) else _key_file(key)
            if len(raw) != _clib.KEY_LEN:
                raise ValueError(f"key: {_clib.KEY_LEN} bytes, got {len(raw)}")
            cfg.keyed = 1
            ctypes.memmove(cfg.key, raw, _clib.KEY_LEN)
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
            ctypes.memset(cfg.key, 0, _clib.KEY_LEN)
            raise ValueError(bad.decode())
        handle = ctypes.c_void_p()
        rc = _clib.lib.netagg_worker_open(ctypes.byref(cfg), ctypes.byref(handle))
        # The library keeps its own copy.
        ctypes.memset(cfg.key, 0, _clib.KEY_LEN)
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
        self.node_port = cfg.port or _clib.UDP_PORT
        self.dscp = cfg.dscp or _clib.DSCP
        self.keyed = key is not None

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
                               ("NETAGG_SESSION", "session", int),
                               ("NETAGG_NODE_PORT", "node_port", int),
                               ("NETAGG_DSCP", "dscp", int)):
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
                         ("NETAGG_SRC", "source"), ("NETAGG_KEY_FILE", "key")):
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

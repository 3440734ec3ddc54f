#!/usr/bin/python3
"""The Python package's answers to bad input, on the host (nothing is sent).

KTAP: every bad argument raises TypeError or ValueError with a message that
says what was wrong, before any packet could leave; the package's copies of
the uapi constants and the C structures agree with the header and the
library; help(netagg) reads. Run with PYTHONPATH=python (tests/run.sh).
"""

import os
import pydoc
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

import netagg
import netagg._clib as clib
import netagg.torch as nt

ROOT = Path(__file__).resolve().parents[2]
CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def raises(exc, text, fn, *args, **kw):
    """fn(*args, **kw) raises exc saying text; else a string of what happened."""
    try:
        fn(*args, **kw)
    except exc as e:
        return None if text in str(e) else f"{type(e).__name__}: {e!r} lacks {text!r}"
    except Exception as e:  # the wrong type is the failure reported
        return f"raised {type(e).__name__}: {e}, wanted {exc.__name__}"
    return f"no exception, wanted {exc.__name__}"


def worker(**kw):
    args = dict(job=1, trees={0: "10.0.0.1"}, workers=2, rank=0)
    args.update(kw)
    return netagg.Worker(**args)


@case
def constants_match_uapi():
    """the package's uapi constants are the header's"""
    hdr = "".join((ROOT / "uapi/linux" / f).read_text() for f in ("netagg.h", "netagg_nl.h"))
    enum = re.search(r"enum netagg_dtype \{(.*?)\}", hdr, re.S).group(1)
    names = re.findall(r"^\s*(\w+)\s*,", enum, re.M)  # comments after the commas
    want = {"DTYPE_F32": names.index("NETAGG_DTYPE_F32"),
            "DTYPE_I32": names.index("NETAGG_DTYPE_I32"),
            "DTYPE_F16": names.index("NETAGG_DTYPE_F16"),
            "DTYPE_BF16": names.index("NETAGG_DTYPE_BF16"),
            "TREES_MAX": int(re.search(r"#define NETAGG_TREES_MAX\s+(\d+)", hdr).group(1)),
            "UDP_PORT": int(re.search(r"#define NETAGG_UDP_PORT\s+(\d+)", hdr).group(1)),
            "KEY_LEN": int(re.search(r"#define NETAGG_KEY_LEN\s+(\d+)", hdr).group(1)),
            "TAG_LEN": int(re.search(r"#define NETAGG_TAG_LEN\s+(\d+)", hdr).group(1))}
    got = {k: getattr(clib, k) for k in want}
    if got != want:
        return f"package {got}, header {want}"
    dtypes = {f"DTYPE_{n[len('NETAGG_DTYPE_'):]}": i for i, n in enumerate(names)
              if n not in ("NETAGG_DTYPE_UNSPEC", "__NETAGG_DTYPE_MAX")}
    if sorted(netagg.DTYPES.values()) != sorted(dtypes.values()):
        return f"netagg.DTYPES {netagg.DTYPES}, header {dtypes}"
    return None


@case
def struct_sizes():
    """the ctypes structures are the library's sizes"""
    a = (clib.lib.netagg_worker_cfg_size(), clib.lib.netagg_allreduce_info_size())
    b = (clib.ctypes.sizeof(clib.WorkerCfg), clib.ctypes.sizeof(clib.Info))
    return None if a == b else f"library {a}, package {b}"


@case
def struct_layout():
    """the ctypes structures are the header's field for field (offsets, compiled), sz set"""
    structs = {"netagg_worker_cfg": clib.WorkerCfg, "netagg_allreduce_info": clib.Info,
               "netagg_tree_dst": clib.TreeDst}
    fields = {name: [f for f, _ in cls._fields_ if not f.startswith("_")] + (
        ["src", "src6"] if cls is clib.WorkerCfg else ["addr", "addr6"] if cls is clib.TreeDst
        else []) for name, cls in structs.items()}
    lines = [f'printf("{s} {f} %zu\\n", offsetof(struct {s}, {f}));'
             for s, fs in fields.items() for f in fs]
    lines += [f'printf("{s} sizeof %zu\\n", sizeof(struct {s}));' for s in structs]
    src = ("#include <stdio.h>\n#include <libnetagg.h>\nint main(void)\n{\n"
           + "\n".join(lines) + "\nreturn 0;\n}\n")
    with tempfile.TemporaryDirectory() as d:
        Path(d, "layout.c").write_text(src)
        cc = subprocess.run(["cc", "-I", str(ROOT / "lib"), "-I", str(ROOT / "uapi"),
                             "-o", f"{d}/layout", f"{d}/layout.c"], capture_output=True,
                            text=True)
        if cc.returncode:
            return f"cc: {cc.stderr.strip()}"
        out = subprocess.run([f"{d}/layout"], capture_output=True, text=True).stdout
    c = dict((" ".join(w[:2]), int(w[2])) for w in map(str.split, out.splitlines()))
    py = {f"{s} {f}": getattr(structs[s], f).offset for s, fs in fields.items() for f in fs}
    py.update({f"{s} sizeof": clib.ctypes.sizeof(cls) for s, cls in structs.items()})
    diff = {k: (c.get(k), v) for k, v in py.items() if c.get(k) != v}
    if diff:
        return f"(C, package) differ: {diff}"
    if clib.WorkerCfg().sz != py["netagg_worker_cfg sizeof"] or clib.Info().sz != \
            py["netagg_allreduce_info sizeof"]:
        return "sz is not set to the structure's size"
    return None


@case
def workers_zero():
    """workers=0: ValueError naming the range"""
    return raises(ValueError, "workers must be 1 to 65535", worker, workers=0)


@case
def job_not_int():
    """job='x': TypeError"""
    return raises(TypeError, "job must be an int", worker, job="x")


@case
def bad_dtype():
    """dtype float64: ValueError listing the dtypes"""
    return raises(ValueError, "dtype must be one of float32, int32, float16, bfloat16",
                  worker, dtype="float64")


@case
def bad_address():
    """a tree's address that is neither IPv4 nor IPv6: ValueError naming the tree and it"""
    return (raises(ValueError, "tree 0: not an IPv4 or IPv6 address: '10.0.0'", worker,
                   trees={0: "10.0.0"})
            or raises(ValueError, "tree 3: not an IPv4 or IPv6 address: '2001:db8::g'",
                      worker, trees="3=2001:db8::g"))


@case
def ipv6_trees():
    """IPv6 trees, bare or bracketed, in NETAGG_TREES syntax (split at the first '='): a worker opens"""
    spec = "0=2001:db8::1, 1=[2001:db8::2]"
    got = netagg.parse_trees(spec)
    if got != {0: "2001:db8::1", 1: "[2001:db8::2]"}:
        return f"parse_trees gave {got}"
    with worker(trees=spec, join=False, source="[::]") as w:
        return None if w.trees == got else f"trees {w.trees}"


@case
def ipv6_env():
    """NETAGG_TREES and NETAGG_SRC of IPv6: Worker.from_env opens a worker"""
    old = dict(os.environ)
    os.environ.update(NETAGG_JOB="1", NETAGG_TREES="0=[::1]", NETAGG_WORKERS="2",
                      NETAGG_SRC="::1")
    try:
        with netagg.Worker.from_env(join=False) as w:
            return None if w.trees == {0: "[::1]"} else f"trees {w.trees}"
    finally:
        os.environ.clear()
        os.environ.update(old)


@case
def families_mixed():
    """an IPv4 tree and an IPv6 tree in one worker: ValueError saying one family a worker"""
    return raises(ValueError, "tree 0 is IPv4 (10.0.0.1) and tree 1 IPv6 (2001:db8::1): one "
                  "worker's trees are all of one family", worker,
                  trees="0=10.0.0.1,1=2001:db8::1")


@case
def source_family():
    """an IPv4 source for IPv6 trees: ValueError; brackets around IPv4: ValueError"""
    return (raises(ValueError, "source: 10.0.0.2 is IPv4, the trees IPv6", worker,
                   trees={0: "2001:db8::1"}, source="10.0.0.2")
            or raises(ValueError, "brackets are for IPv6 addresses: '[10.0.0.1]'", worker,
                      trees={0: "[10.0.0.1]"}))


@case
def link_local_refused():
    """a link-local IPv6 tree (it needs an interface): the C library's own message"""
    return raises(ValueError, "link-local", worker, trees={0: "fe80::1"})


@case
def tree_twice():
    """the same tree twice in NETAGG_TREES syntax: ValueError"""
    return raises(ValueError, "tree 1 listed twice", worker, trees="1=10.0.0.1,1=10.0.0.2")


@case
def tree_id_range():
    """tree ID 64: ValueError"""
    return raises(ValueError, "tree ID must be 0 to 63", worker, trees={64: "10.0.0.1"})


@case
def window_from_library():
    """window 5000: the C library's own message"""
    return raises(ValueError, "window must be at most 4096", worker, window=5000)


@case
def quorum_above_workers():
    """quorum above workers: the C library's own message"""
    return raises(ValueError, "quorum must not exceed workers", worker, quorum=3)


@case
def timeout_zero():
    """timeout 0: ValueError"""
    return raises(ValueError, "timeout must be above 0", worker, timeout=0)


@case
def env_missing():
    """from_env without NETAGG_JOB: ValueError naming the variable"""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETAGG_")}
    old = dict(os.environ)
    os.environ.clear()
    os.environ.update(env, NETAGG_TREES="0=10.0.0.1", NETAGG_WORKERS="2")
    try:
        return raises(ValueError, "set NETAGG_JOB", netagg.Worker.from_env)
    finally:
        os.environ.clear()
        os.environ.update(old)


@case
def env_not_number():
    """NETAGG_WINDOW=abc: ValueError naming it"""
    old = dict(os.environ)
    os.environ.update(NETAGG_JOB="1", NETAGG_TREES="0=10.0.0.1", NETAGG_WORKERS="2",
                      NETAGG_WINDOW="abc")
    try:
        return raises(ValueError, "NETAGG_WINDOW='abc' is not a number", netagg.Worker.from_env)
    finally:
        os.environ.clear()
        os.environ.update(old)


def bad_buffer(exc, text, buf, dtype="float32"):
    with worker(dtype=dtype) as w:
        return raises(exc, text, w.allreduce, buf)


def pinned(buf, dtype, count, addr):
    """_Pinned (what allreduce sends from) takes buf: count elements at addr,
    the buffer's own memory (no copy); else a string of what it did."""
    try:
        p = netagg._Pinned(buf, dtype)
    except Exception as e:
        return f"{type(e).__name__}: {e}"
    if (p.count, p.addr) != (count, addr):
        return f"count {p.count} at {p.addr:#x}, wanted {count} at {addr:#x}"
    return None


@case
def float64_array():
    """a float64 array to a float32 worker: TypeError"""
    return bad_buffer(TypeError, "format 'd'", np.zeros(4))


@case
def read_only():
    """bytes (read-only): TypeError"""
    return bad_buffer(TypeError, "read-only", b"\0" * 8)


@case
def not_contiguous_array():
    """a strided numpy view: ValueError"""
    return bad_buffer(ValueError, "not C-contiguous", np.zeros((4, 4), np.float32)[:, :2])


@case
def not_contiguous_tensor():
    """a non-contiguous tensor: refused, never silently wrong"""
    return bad_buffer(ValueError, "not contiguous", torch.zeros(4, 4).t())


@case
def tensor_requires_grad():
    """a tensor that requires grad: ValueError"""
    return bad_buffer(ValueError, "requires grad", torch.zeros(4, requires_grad=True))


@case
def tensor_wrong_dtype():
    """a float64 tensor: TypeError"""
    return bad_buffer(TypeError, "tensor of torch.float64", torch.zeros(4, dtype=torch.float64))


@case
def not_a_buffer():
    """a str: TypeError"""
    return bad_buffer(TypeError, "needs a writable buffer", "abcd")


@case
def odd_bytes():
    """5 bytes: ValueError"""
    return bad_buffer(ValueError, "not a whole number of float32", bytearray(5))


@case
def f16_array():
    """a numpy float16 array to a float16 worker: taken in place, 2 bytes an element"""
    a = np.arange(7, dtype=np.float16)
    with worker(dtype="float16"):  # the library takes the dtype
        return pinned(a, "float16", 7, a.ctypes.data)


@case
def f16_array_to_f32():
    """a numpy float16 array to a float32 worker: TypeError naming format 'f'"""
    return bad_buffer(TypeError, "format 'e' (2 bytes an element), the worker's dtype is "
                      "float32: pass format 'f' (numpy.float32)", np.zeros(4, np.float16))


@case
def f32_array_to_f16():
    """a numpy float32 array to a float16 worker: TypeError naming format 'e'"""
    return bad_buffer(TypeError, "format 'f' (4 bytes an element), the worker's dtype is "
                      "float16: pass format 'e' (numpy.float16)", np.zeros(4, np.float32),
                      dtype="float16")


@case
def f16_bytes():
    """6 bytes to a float16 worker: 3 elements, in place"""
    b = bytearray(6)
    return pinned(b, "float16", 3,
                  clib.ctypes.addressof((clib.ctypes.c_char * 6).from_buffer(b)))


@case
def f16_odd_bytes():
    """5 bytes to a float16 worker: ValueError"""
    return bad_buffer(ValueError, "5 bytes are not a whole number of float16 elements "
                      "(2 bytes each)", bytearray(5), dtype="float16")


@case
def bf16_tensor():
    """a torch.bfloat16 tensor to a bfloat16 worker: taken in place"""
    t = torch.zeros(9, dtype=torch.bfloat16)
    with worker(dtype="bfloat16"):
        return pinned(t, "bfloat16", 9, t.data_ptr())


@case
def bf16_numpy_refused():
    """numpy float16 or uint16 to a bfloat16 worker: TypeError naming what it takes"""
    return (bad_buffer(TypeError, "dtype is bfloat16: pass a torch.bfloat16 tensor (numpy "
                       "has no bfloat16) or raw bytes", np.zeros(4, np.float16),
                       dtype="bfloat16")
            or bad_buffer(TypeError, "format 'H'", np.zeros(4, np.uint16), dtype="bfloat16"))


@case
def bf16_bytes():
    """a numpy array's bytes (.view(uint8)) to a bfloat16 worker: elements of 2 bytes"""
    a = np.zeros(5, np.uint16)
    return pinned(a.view(np.uint8), "bfloat16", 5, a.ctypes.data)


@case
def bf16_tensor_to_f16():
    """a torch.bfloat16 tensor to a float16 worker: TypeError"""
    return bad_buffer(TypeError, "tensor of torch.bfloat16, the worker's dtype is float16",
                      torch.zeros(4, dtype=torch.bfloat16), dtype="float16")


@case
def closed_worker():
    """allreduce on a closed worker: ValueError"""
    w = worker()
    w.close()
    return raises(ValueError, "worker is closed", w.allreduce, np.zeros(4, np.float32))


@case
def torch_allreduce_not_tensor():
    """netagg.torch.allreduce of a list: TypeError"""
    return raises(TypeError, "takes a torch.Tensor", nt.allreduce, [1.0], worker())


@case
def torch_average_int():
    """netagg.torch.allreduce average of an int tensor: ValueError"""
    return raises(ValueError, "would round", nt.allreduce,
                  torch.zeros(4, dtype=torch.int32), worker(dtype="int32"), True)


class Bucket:
    """The part of DDP's GradBucket the hook uses."""

    def __init__(self, buf):
        self._buf = buf

    def buffer(self):
        return self._buf


class SumOfTwo:
    """A Worker of dtype DTYPE for the hook, without network: the sum of two
    workers that gave the same buffer, averaged as the library would for
    mean= ("after": divided by the 2; "before": the buffers were divided
    already); records what it was given. fail: the exception to raise."""

    workers = 2
    session = 0x1234

    def __init__(self, dtype, fail=None):
        self.dtype = dtype
        self.given = []
        self.fail = fail

    def join(self):
        pass

    def allreduce(self, buf, mean=None):
        if self.fail is not None:
            raise self.fail
        self.given.append((buf.dtype, buf.data_ptr(), buf.clone(), mean))
        buf.mul_(2)
        if mean == "after":
            buf.div_(2)
        return netagg.AllreduceInfo(**{f: 0 for f in (
            "packets_sent", "super_sent", "sends", "packets_received", "packets_ignored",
            "retransmits", "probes", "min_contributors", "max_contributors", "regrouped",
            "refused", "late", "ce", "window_min", "averaged", "job_dtype", "silent_tid",
            "session", "joins", "join_missing", "join_missing_rank", "window_end",
            "ce_cuts", "loss_cuts", "undone_cuts", "rto_us", "bad_tags")})

    def close(self):
        pass


@case
def hook_dtypes():
    """the DDP hook takes float16 and bfloat16 workers, refuses int32"""
    for dtype in ("float16", "bfloat16"):
        with worker(dtype=dtype, join=False) as w:
            nt.HookState(w).close()
    return raises(ValueError, "the hook takes a worker of dtype float32, float16, bfloat16; "
                  "the worker's dtype is int32", nt.HookState, worker(dtype="int32", join=False))


@case
def hook_float32_in_place():
    """the hook with a float32 worker: the bucket itself allreduced, then averaged"""
    w = SumOfTwo("float32")
    buf = torch.tensor([1.0, 3.0, 0.1])
    orig = buf.clone()
    with nt.HookState(w) as state:
        out = nt.allreduce_hook(state, Bucket(buf)).wait()
    (dt, addr, given, mean), = w.given
    if (dt != torch.float32 or addr != buf.data_ptr() or not torch.equal(given, orig)
            or mean != "after"):
        return f"allreduce got {dt} at {addr:#x}, {given}, mean {mean}"
    if out is not buf or not torch.equal(out, orig * 2 / 2):
        return f"future holds {out}, wanted the bucket holding {orig * 2 / 2}"
    return None


@case
def hook_compresses():
    """the hook with float16/bfloat16 workers: bucket cast, divided, summed, cast back"""
    for dtype, tdt in (("float16", torch.float16), ("bfloat16", torch.bfloat16)):
        w = SumOfTwo(dtype)
        buf = torch.tensor([1.0, -3.0, 0.1, 6e4 if dtype == "float16" else 1e30])
        orig = buf.clone()
        with nt.HookState(w) as state:
            out = nt.allreduce_hook(state, Bucket(buf)).wait()
        (dt, addr, given, mean), = w.given
        want_given = orig.to(tdt).div_(2)  # divided before: 2 * 6e4 overflows float16
        if dt != tdt or not torch.equal(given, want_given) or mean != "before":
            return f"{dtype}: allreduce got {dt} {given} mean {mean}, wanted {want_given}"
        want = (want_given * 2).float()
        if out is not buf or out.dtype != torch.float32 or not torch.equal(out, want):
            return f"{dtype}: future holds {out}, wanted the bucket holding {want}"
    return None


@case
def hook_compress_names():
    """fp16_compress_hook with a float32 state: the bucket fails saying what it needs"""
    with nt.HookState(SumOfTwo("float32")) as state:
        fut = nt.fp16_compress_hook(state, Bucket(torch.ones(4)))
        why = raises(nt.HookError, "fp16_compress_hook needs a worker of dtype float16",
                     fut.wait)
    if why:
        return why
    with nt.HookState(SumOfTwo("bfloat16")) as state:
        nt.bf16_compress_hook(state, Bucket(torch.ones(4))).wait()
        return None if state.buckets == 1 else f"{state.buckets} buckets"


@case
def hook_cause():
    """a failed bucket: DDP's error (its text) leads back to the exception; later ones fail too"""
    err = netagg.AllreduceTimeout(110, "rank 0: no result", None)
    with nt.HookState(SumOfTwo("float32", fail=err)) as state:
        fut = nt.allreduce_hook(state, Bucket(torch.ones(4)))
        try:
            fut.wait()
            return "the future succeeded"
        except nt.HookError as e:
            # DDP raises a RuntimeError of its own, carrying only the text.
            ddp = RuntimeError(f"Unable to cast {e} to Tensor")
        if nt.cause(ddp) is not err or state.error is not err:
            return f"cause {nt.cause(ddp)!r}, state.error {state.error!r}"
        if "AllreduceTimeout" not in str(ddp) or "rank 0: no result" not in str(ddp):
            return f"the text lacks the error: {ddp}"
        later = nt.allreduce_hook(state, Bucket(torch.ones(4)))
        why = raises(nt.HookError, "an earlier bucket's allreduce failed", later.wait)
        stats = state.stats()
    if why:
        return why
    if stats["failed"] != 1 or "AllreduceTimeout" not in stats["error"]:
        return f"stats {stats}"
    return None if nt.cause(RuntimeError("other")) is None else "cause of a foreign error"


@case
def hook_stats():
    """stats() sums up the buckets: count, bytes"""
    with nt.HookState(SumOfTwo("float32")) as state:
        for _ in range(3):
            nt.allreduce_hook(state, Bucket(torch.ones(10))).wait()
        st = state.stats()
    want = {"buckets": 3, "failed": 0, "bytes": 120, "session": 0x1234, "error": None}
    got = {k: st[k] for k in want}
    return None if got == want else f"stats {got}, wanted {want}"


@case
def hook_module_device():
    """a model on another device (meta): refused when the state is made, nothing sent"""
    return raises(ValueError, "parameter weight is on meta: netagg allreduces gradients in "
                  "CPU memory", nt.HookState, SumOfTwo("float32"),
                  module=torch.nn.Linear(4, 2, device="meta"))


@case
def hook_module_dtype():
    """a float64 model: refused when the state is made"""
    return raises(ValueError, "parameter weight is torch.float64", nt.HookState,
                  SumOfTwo("float32"), module=torch.nn.Linear(4, 2).double())


@case
def register_not_ddp():
    """register() of a plain module: TypeError"""
    return raises(TypeError, "takes a DistributedDataParallel model", nt.register,
                  torch.nn.Linear(4, 2))


@case
def rank_needed():
    """two workers without a rank: ValueError (the join needs each rank's place)"""
    return raises(ValueError, "rank is needed to join the run", netagg.Worker, job=1,
                  trees={0: "10.0.0.1"}, workers=2)


@case
def rank_below_workers():
    """rank 2 of 2 workers: the C library's own message"""
    return raises(ValueError, "rank must be below workers", worker, rank=2)


@case
def bad_mean():
    """mean='x', and a mean of int32: ValueError"""
    return (raises(ValueError, "mean must be None, 'after' or 'before'", worker, mean="x")
            or raises(ValueError, "a mean of int32 would round", worker, dtype="int32",
                      mean="after"))


@case
def port_range():
    """port 70000: ValueError"""
    return raises(ValueError, "port must be 0 to 65535", worker, port=70000)


@case
def marks_range():
    """dscp 64, node_port 70000: ValueError naming each"""
    return (raises(ValueError, "dscp must be 0 to 63", worker, dscp=64)
            or raises(ValueError, "node_port must be 0 to 65535", worker, node_port=70000))


@case
def env_marks():
    """NETAGG_DSCP, NETAGG_NODE_PORT: the worker's; 56 and 7177 unset"""
    old = dict(os.environ)
    os.environ.update(NETAGG_JOB="1", NETAGG_TREES="0=10.0.0.1", NETAGG_WORKERS="1")
    try:
        with netagg.Worker.from_env(join=False) as w:
            got = (w.dscp, w.node_port)
        os.environ.update(NETAGG_DSCP="46", NETAGG_NODE_PORT="9000")
        with netagg.Worker.from_env(join=False) as w:
            got += (w.dscp, w.node_port)
    finally:
        os.environ.clear()
        os.environ.update(old)
    return None if got == (56, 7177, 46, 9000) else f"(dscp, node_port) x 2: {got}"


@case
def key_refused():
    """a key of 31 bytes, of zeros, an unreadable or malformed file: ValueError saying which"""
    with tempfile.TemporaryDirectory() as d:
        Path(d, "bad").write_text("not a key\n")
        return (raises(ValueError, "key: 32 bytes, got 31", worker, key=b"k" * 31)
                or raises(ValueError, "cfg.key is all zero", worker, key=bytes(32))
                or raises(ValueError, "No such file", worker, key=f"{d}/none")
                or raises(ValueError, "not 32 bytes, nor 64 hex digits", worker,
                          key=f"{d}/bad"))


@case
def env_key():
    """NETAGG_KEY_FILE: the worker keyed, from 64 hex digits or 32 bytes; unset: not"""
    old = dict(os.environ)
    os.environ.update(NETAGG_JOB="1", NETAGG_TREES="0=10.0.0.1", NETAGG_WORKERS="1")
    got = []
    try:
        with tempfile.TemporaryDirectory() as d:
            Path(d, "hex").write_text("ab" * 32 + "\n")
            Path(d, "raw").write_bytes(bytes(range(1, 33)))
            for path in (None, f"{d}/hex", f"{d}/raw"):
                if path:
                    os.environ["NETAGG_KEY_FILE"] = path
                with netagg.Worker.from_env(join=False) as w:
                    got.append(w.keyed)
    finally:
        os.environ.clear()
        os.environ.update(old)
    return None if got == [False, True, True] else f"keyed: {got}"


@case
def env_local_rank():
    """torchrun's LOCAL_RANK and LOCAL_WORLD_SIZE: port 7178 + it, NETAGG_RANK + it"""
    old = dict(os.environ)
    os.environ.update(NETAGG_JOB="1", NETAGG_TREES="0=10.0.0.1", NETAGG_WORKERS="4",
                      NETAGG_RANK="2", LOCAL_RANK="1", LOCAL_WORLD_SIZE="2")
    try:
        with netagg.Worker.from_env(join=False) as w:
            got = (w.port, w.rank)
        os.environ["NETAGG_PORT"] = "9000"
        with netagg.Worker.from_env(join=False) as w:
            got += (w.port,)
    finally:
        os.environ.clear()
        os.environ.update(old)
    return None if got == (7179, 3, 9001) else f"(port, rank, port) {got}"


@case
def missing_library():
    """NETAGG_LIBRARY naming no file: ImportError saying what was tried and what to do"""
    env = dict(os.environ, NETAGG_LIBRARY="/nonexistent/libnetagg.so.4",
               LD_LIBRARY_PATH="")
    code = ("import shutil, sys, tempfile, pathlib; d = tempfile.mkdtemp();"
            f"shutil.copytree({str(ROOT / 'python/netagg')!r}, d + '/netagg');"
            "sys.path.insert(0, d)\n"
            "try:\n import netagg\nexcept ImportError as e:\n print(e)")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=60).stdout
    return None if "set NETAGG_LIBRARY" in out and "/nonexistent" in out else f"got {out!r}"


@case
def help_reads():
    """help(netagg) documents Worker, allreduce and the environment"""
    text = pydoc.render_doc(netagg, renderer=pydoc.plaintext)
    missing = [w for w in ("class Worker", "allreduce(self, buf", "NETAGG_TREES",
                           "AllreduceTimeout", "PartialResultError", "NodeUnreachable",
                           "JoinError", "DtypeMismatch", "join(self)",
                           "int32, float16 or bfloat16") if w not in text]
    return f"missing {missing}" if missing else None


def main() -> int:
    print("KTAP version 1")
    print(f"1..{len(CASES)}")
    failed = 0
    for n, fn in enumerate(CASES, 1):
        try:
            why = fn()
        except Exception as e:  # a crash is a failure of this case only
            why = f"{type(e).__name__}: {e}"
        print(f"{'not ' if why else ''}ok {n} {fn.__doc__}")
        if why:
            print(f"# {why}")
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

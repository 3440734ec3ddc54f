# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""The C library, loaded with ctypes: its structures and functions.

Private: the public API is netagg's (worker.py, errors.py, info.py and
args.py use this module; netagg/__init__.py re-exports them). ctypes
releases the GIL for the length of every call into the library, so an
allreduce runs beside other Python threads. The library must be of the
package's version, VERSION (netagg.__version__): another is refused at
import.
"""

from __future__ import annotations

import ctypes
import os
import socket
from pathlib import Path

# From uapi/linux/netagg.h and netagg_nl.h (tests/python/api.py compares
# them).
DTYPE_F32 = 1
DTYPE_I32 = 2
DTYPE_F16 = 3  # IEEE-754 binary16, 2 bytes an element
DTYPE_BF16 = 4  # bfloat16: binary32's upper 16 bits, 2 bytes an element
TREES_MAX = 64
UDP_PORT = 7177
DSCP = 56
KEY_LEN = 32  # NETAGG_KEY_LEN: a job's key
TAG_LEN = 8  # NETAGG_TAG_LEN: the tag a keyed job's packets end in
MEAN_NONE, MEAN_AFTER, MEAN_BEFORE = 0, 1, 2  # enum in lib/libnetagg.h
AF_INET, AF_INET6 = socket.AF_INET, socket.AF_INET6  # netagg_tree_dst.family

SONAME = "libnetagg.so.4"
#: The package's version (netagg.__version__, python/pyproject.toml's, the
#: project's VERSION): the library's must be the same.
VERSION = "1.0.0"


class In6Addr(ctypes.Union):
    """struct in6_addr: 16 bytes, aligned as its 32-bit view."""

    _fields_ = [("s6_addr", ctypes.c_uint8 * 16), ("s6_addr32", ctypes.c_uint32 * 4)]


class _Addr(ctypes.Union):
    """The anonymous union of netagg_tree_dst: addr (AF_INET) or addr6."""

    _fields_ = [("addr", ctypes.c_uint32), ("addr6", In6Addr)]


class _Src(ctypes.Union):
    """The anonymous union of netagg_worker_cfg: src (AF_INET) or src6."""

    _fields_ = [("src", ctypes.c_uint32), ("src6", In6Addr)]


class _Sized(ctypes.Structure):
    """A structure of the sz pattern: sz, its first field, set to its size."""

    def __init__(self) -> None:
        super().__init__()
        self.sz = ctypes.sizeof(self)


class TreeDst(ctypes.Structure):
    """struct netagg_tree_dst."""

    _anonymous_ = ("_u",)
    _fields_ = [("tid", ctypes.c_uint16), ("family", ctypes.c_uint16), ("_u", _Addr)]


class WorkerCfg(_Sized):
    """struct netagg_worker_cfg (sz set when made)."""

    _anonymous_ = ("_src",)
    _fields_ = [
        ("sz", ctypes.c_size_t),
        ("jid", ctypes.c_uint32),
        ("dtype", ctypes.c_uint8),
        ("workers", ctypes.c_uint),
        ("quorum", ctypes.c_uint),
        ("round", ctypes.c_uint16),
        ("session", ctypes.c_uint32),
        ("rank", ctypes.c_uint),
        ("no_join", ctypes.c_int),
        ("mtu", ctypes.c_uint),
        ("window", ctypes.c_uint),
        ("timeout_ms", ctypes.c_uint),
        ("node_timeout_ms", ctypes.c_uint),
        ("rto_min_ms", ctypes.c_uint),
        ("src_family", ctypes.c_uint16),
        ("_src", _Src),
        ("src_port", ctypes.c_uint16),
        ("mean", ctypes.c_int),
        ("plain", ctypes.c_int),
        ("segments", ctypes.c_uint),
        ("no_ecn", ctypes.c_int),
        ("ntrees", ctypes.c_uint),
        ("trees", TreeDst * TREES_MAX),
        ("dctcp", ctypes.c_int),
        ("port", ctypes.c_uint16),
        ("dscp", ctypes.c_uint8),
        ("keyed", ctypes.c_uint8),
        ("key", ctypes.c_uint8 * KEY_LEN),
    ]


class Info(_Sized):
    """struct netagg_allreduce_info (sz set when made)."""

    _fields_ = [
        ("sz", ctypes.c_size_t),
        ("packets_sent", ctypes.c_uint64),
        ("super_sent", ctypes.c_uint64),
        ("sends", ctypes.c_uint64),
        ("packets_received", ctypes.c_uint64),
        ("packets_ignored", ctypes.c_uint64),
        ("retransmits", ctypes.c_uint64),
        ("probes", ctypes.c_uint64),
        ("min_contributors", ctypes.c_uint),
        ("max_contributors", ctypes.c_uint),
        ("regrouped", ctypes.c_uint64),
        ("refused", ctypes.c_uint64),
        ("late", ctypes.c_uint64),
        ("ce", ctypes.c_uint64),
        ("window_min", ctypes.c_uint),
        ("averaged", ctypes.c_uint64),
        ("job_dtype", ctypes.c_uint8),
        ("silent_tid", ctypes.c_uint16),
        ("session", ctypes.c_uint32),
        ("joins", ctypes.c_uint),
        ("join_missing", ctypes.c_uint),
        ("join_missing_rank", ctypes.c_uint),
        ("window_end", ctypes.c_uint),
        ("ce_cuts", ctypes.c_uint64),
        ("loss_cuts", ctypes.c_uint64),
        ("undone_cuts", ctypes.c_uint64),
        ("rto_us", ctypes.c_uint64),
        ("bad_tags", ctypes.c_uint64),
    ]


def _candidates() -> list[str]:
    """Where the library may be, in the order tried."""
    here = Path(__file__).resolve().parent
    env = os.environ.get("NETAGG_LIBRARY")
    if env:
        return [env]  # the user's choice, and no other
    paths = []
    paths.append(str(here / SONAME))  # installed with pip
    paths.append(str(here.parent.parent / "lib" / SONAME))  # the checkout's build
    paths.append(SONAME)  # make install: the dynamic loader's search path
    return paths


def _load() -> ctypes.CDLL:
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(f"{path}: no such file")
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append(str(e))
    raise ImportError(
        f"netagg: cannot load {SONAME} (build it with make, install it with "
        "make install, or set NETAGG_LIBRARY to its path); tried: " + "; ".join(tried)
    )


lib = _load()

lib.netagg_worker_cfg_size.restype = ctypes.c_size_t
lib.netagg_worker_cfg_size.argtypes = []
lib.netagg_allreduce_info_size.restype = ctypes.c_size_t
lib.netagg_allreduce_info_size.argtypes = []
# The package and the library are of one version (checked at the end), so
# their layouts are one: a size that differs is a mistake here, caught now
# rather than misread later (sz would hide it).
if (lib.netagg_worker_cfg_size() != ctypes.sizeof(WorkerCfg)
        or lib.netagg_allreduce_info_size() != ctypes.sizeof(Info)):
    raise ImportError(
        f"netagg: {lib._name} does not match this package (structure sizes "
        f"{lib.netagg_worker_cfg_size()}/{lib.netagg_allreduce_info_size()}, "
        f"expected {ctypes.sizeof(WorkerCfg)}/{ctypes.sizeof(Info)})"
    )

lib.netagg_version.restype = ctypes.c_char_p
lib.netagg_version.argtypes = []
lib.netagg_key_read.restype = ctypes.c_int
lib.netagg_key_read.argtypes = [ctypes.c_char_p, ctypes.c_uint8 * KEY_LEN]
lib.netagg_worker_open.restype = ctypes.c_int
lib.netagg_worker_open.argtypes = [ctypes.POINTER(WorkerCfg), ctypes.POINTER(ctypes.c_void_p)]
lib.netagg_worker_close.restype = None
lib.netagg_worker_close.argtypes = [ctypes.c_void_p]
lib.netagg_worker_cfg_error.restype = ctypes.c_char_p
lib.netagg_worker_cfg_error.argtypes = [ctypes.POINTER(WorkerCfg)]
lib.netagg_worker_round.restype = ctypes.c_uint16
lib.netagg_worker_round.argtypes = [ctypes.c_void_p]
lib.netagg_worker_session.restype = ctypes.c_uint32
lib.netagg_worker_session.argtypes = [ctypes.c_void_p]
lib.netagg_worker_set_mean.restype = ctypes.c_int
lib.netagg_worker_set_mean.argtypes = [ctypes.c_void_p, ctypes.c_int]
lib.netagg_join.restype = ctypes.c_int
lib.netagg_join.argtypes = [ctypes.c_void_p, ctypes.POINTER(Info)]
lib.netagg_allreduce.restype = ctypes.c_int
lib.netagg_allreduce.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                 ctypes.POINTER(Info)]
lib.netagg_strerror.restype = ctypes.c_char_p
lib.netagg_strerror.argtypes = [ctypes.c_int]

# The package lays out the library's structures itself: a library of
# another version is refused here, not misread later.
if lib.netagg_version().decode() != VERSION:
    raise ImportError(
        f"netagg {VERSION}: {lib._name} is netagg "
        f"{lib.netagg_version().decode()} (install the two together)"
    )

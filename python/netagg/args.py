# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""What a :class:`~netagg.Worker` takes, checked and made ready for the C library.

The dtypes and the buffers of each (:data:`DTYPES`, :class:`_Pinned`: a
buffer's address and element count, never a copy), the trees and their
addresses (:func:`parse_trees`, NETAGG_TREES's syntax), and integers in
their range. Each refusal is a TypeError or ValueError saying what was
wrong and what to pass instead. Re-exported by netagg: ``netagg.DTYPES``,
``netagg.parse_trees``.
"""

from __future__ import annotations

import ctypes
import ipaddress
import sys
from typing import Any, Mapping, Optional, Sequence, Tuple, Union

from . import _clib

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

#: What Worker(trees=) takes: "TID=ADDR,...", {tid: addr} or [(tid, addr), ...].
Trees = Union[str, Mapping[int, str], Sequence[Tuple[int, str]]]
#: An address Worker checked (_inet): a tree's node's, or the source.
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
    """The library's address family of ip (netagg_tree_dst.family)."""
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
    """trees, in any form Worker takes, as (tid, address) pairs; TypeError
    for an item that is no (int, str)."""
    if isinstance(trees, str):
        return list(parse_trees(trees).items())
    items = list(trees.items()) if isinstance(trees, Mapping) else list(trees)
    for item in items:
        if (not isinstance(item, tuple) or len(item) != 2 or isinstance(item[0], bool)
                or not isinstance(item[0], int) or not isinstance(item[1], str)):
            raise TypeError(f"trees: each tree is (tid: int, address: str), got {item!r}")
    return items


def _int(name: str, value: Any, lo: int, hi: int) -> int:
    """value, an int (not a bool) lo to hi; TypeError or ValueError naming it."""
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
    """Whether obj is a torch.Tensor (without importing torch: only if it is)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.Tensor)



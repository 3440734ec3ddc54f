# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""The errors of the C library, as exceptions.

:class:`NetaggError` (an OSError: errno and the library's message) and its
subclasses, one for each failure a caller may handle on its own; ``info``
is the :class:`~netagg.AllreduceInfo` of the call when it began.
:func:`_error` makes the one a return code calls for. Re-exported by netagg
(``netagg.AllreduceTimeout``, ...): catch them from there.
"""

from __future__ import annotations

import errno as _errno
from typing import Optional

from . import _clib
from .args import DTYPES
from .info import AllreduceInfo


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


#: The dtype names by uapi value, for DtypeMismatch's message.
_DTYPE_NAMES = {v: k for k, v in DTYPES.items()}


def _error(rc: int, rank: Optional[int], info: Optional[AllreduceInfo],
           dtype: Optional[str] = None) -> NetaggError:
    """The exception for the library's return code rc (a negative errno).

    Its class by the errno (NetaggError for one with no class of its own),
    its message the library's, with what info adds (the ranks a join
    missed, the silent tree, the job's dtype against the worker's dtype),
    after "rank RANK: " when the worker has a rank; info is carried.
    """
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

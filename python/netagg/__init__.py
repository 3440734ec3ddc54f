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

:mod:`netagg.torch` registers the torch.distributed backend "netagg" when
imported, and has a DDP communication hook and a tensor allreduce.
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
    NETAGG_NODE_PORT  the nodes' UDP port, as "netagg set port" (default 7177)
    NETAGG_DSCP     the packets' DSCP, 1-63, as "netagg set dscp" (default 56)
    NETAGG_KEY_FILE the job's key file, as "netagg job add ... key FILE" (none:
                    the job has no key)
    NETAGG_RANK     this worker's rank, 0 to workers - 1, LOCAL_RANK added: the
                    rank of the host's first worker (netagg.torch: the group's)
    NETAGG_LIBRARY  path of libnetagg.so.4, if not found by itself

The "netagg" backend, with NETAGG_ETCD, asks the cluster for its job
instead of NETAGG_JOB, NETAGG_TREES and NETAGG_WORKERS (docs/cluster.md):

    NETAGG_ETCD     the cluster's etcd, http://HOST:PORT
    NETAGG_NODE     this host's node in the topology (default: the short host name)
    NETAGG_TENANT   whose job it is, for quotas (default: the user's login name)
    NETAGG_NTREES   trees the job asks for (default 4)
    NETAGG_OP, NETAGG_MEMCAP  the job's op (sum, avg) and memory a node (bytes)
    NETAGG_ETCD_WAIT  seconds to wait for room (default 0)
    NETAGG_FALLBACK gloo (default: no job, every call through Gloo, warned)
                    or error (init_process_group raises)
    NETAGG_ETCD_USER, NETAGG_ETCD_PASSWORD_FILE  etcd's auth, if on
"""

# Where the names live: this file only documents the package (above) and
# re-exports the public names of its modules, the objects themselves (an
# exception caught as netagg.AllreduceTimeout is netagg.errors'):
#
#   worker.py   Worker, PORT_BASE
#   info.py     AllreduceInfo
#   errors.py   NetaggError and its subclasses, and which one a return code raises
#   args.py     what a Worker takes, checked: DTYPES, parse_trees, the buffers
#   _clib.py    the C library through ctypes (private), refused unless of the
#               package's version, __version__
#   torch.py    netagg.torch, the DDP hook (imported on its own: it needs torch)
#   rat.py      netagg.rat, trees planned from the topology (python3 -m netagg.rat)
#   topology.py the topology files netagg.rat reads, and the paths between nodes

from . import _clib
from .args import DTYPES, parse_trees
from .args import _Pinned  # noqa: F401  (tests/python/api.py checks buffers through it)
from .errors import (AllreduceTimeout, DtypeMismatch, JoinError, NetaggError,
                     NodeUnreachable, PartialResultError)
from .info import AllreduceInfo
from .worker import PORT_BASE, Worker

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
__version__ = _clib.VERSION

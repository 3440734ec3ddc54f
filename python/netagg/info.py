# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""What one allreduce (or join) did: :class:`AllreduceInfo`.

Returned by :meth:`netagg.Worker.allreduce` and :meth:`netagg.Worker.join`,
and carried by every :class:`netagg.NetaggError` raised once the call began
(``e.info``). Re-exported by netagg: ``netagg.AllreduceInfo``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from . import _clib


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
    """Smallest congestion window a cut left a path with in the call (chunks
    in flight); with no cut, a path's largest."""
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
    window_end: int
    """Smallest congestion window of a path at the call's end."""
    ce_cuts: int
    """Cuts of a path's window for CE marks."""
    loss_cuts: int
    """Cuts of a path's window for losses."""
    undone_cuts: int
    """Cuts for losses undone: the result came after all (reordering)."""
    rto_us: int
    """Largest retransmission timeout of a tree at the call's end
    (microseconds), from its round trips; 200000 (or rto_min_ms) before the
    first."""
    bad_tags: int
    """Of a keyed job, packets whose tag was wrong or missing: not taken
    (also in packets_ignored)."""

    @classmethod
    def _from_c(cls, info: _clib.Info) -> "AllreduceInfo":
        return cls(**{f.name: int(getattr(info, f.name)) for f in fields(cls)})

# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""The topology files of netagg.rat, read and checked, and the paths between nodes.

:meth:`Topology.read` takes the files (their format: netagg.rat's
docstring, docs/topology.md) as one: regions, nodes, links with their
addresses (IPv4 or IPv6, all of one family), jobs; every mistake is a
:class:`TopologyError` naming the file, line and node. The Topology then
answers what the planner (netagg.rat.Planner) and the lab's namespace
builder (lab/rat-netns.py) ask: the oversubscribed regions holding a node,
the hops and the path between two nodes as routed (shortest, ties to the
neighbour first by name, never through a worker), the addresses a node
sends from and to. netagg.rat re-exports every public name.
"""

from __future__ import annotations

import collections
import ipaddress
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence, Union

KINDS = ("worker", "aggregator", "switch")
PROCS_MAX = 64      # NETAGG_CHILDREN_MAX: each process is a child
DTYPES = {"f32": "float32", "i32": "int32", "f16": "float16", "bf16": "bfloat16"}
OPS = ("sum", "avg")
TREES_MAX = 64      # NETAGG_TREES_MAX
WINDOW_MAX = 4096   # NETAGG_WINDOW_MAX
JID_MAX = 0xffffffff
DSCP_DEFAULT = 56   # NETAGG_DSCP
PORT_DEFAULT = 7177  # NETAGG_UDP_PORT
TOP = ""            # the region above all regions: the whole cluster

# An address of a topology: all of its addresses are of one family.
Interface = Union[ipaddress.IPv4Interface, ipaddress.IPv6Interface]
Address = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]


class TopologyError(Exception):
    """A file that does not describe a topology, or a job it cannot place;
    the message names the file, line and node."""


@dataclass
class Region:
    """A region of the files (a rack, a pod), in another or at the top;
    oversubscribed when its links up carry less than its nodes can send."""

    name: str
    parent: Optional[str]
    oversubscribed: bool
    where: str


@dataclass
class Node:
    """A node of the files: a worker, aggregator or switch, and its links."""

    name: str
    kind: str
    region: Optional[str]
    where: str
    procs: int = 1      # workers a worker node runs (torchrun --nproc_per_node)
    # neighbour name -> (own address, neighbour's address), one per link
    links: dict[str, tuple[Interface, Interface]] = field(default_factory=dict)


@dataclass
class Job:
    """A job of the files: its worker nodes, in rank order, and its trees'
    settings."""

    jid: int
    workers: list[str]
    trees: int
    dtype: str
    op: str
    window: int
    where: str
    memcap: int = 0     # bytes the job may take on a node (0: the node's default)



class Topology:
    """The parsed files: regions, nodes, links, jobs, and the paths between
    nodes. family is the IP version of every address (4 or 6; 4 when the
    files have none); dscp and port mark the cluster's aggregation packets
    (its "packets" line; 56 and 7177 without one)."""

    def __init__(self) -> None:
        self.regions: dict[str, Region] = {}
        self.nodes: dict[str, Node] = {}
        self.jobs: list[Job] = []
        self.family = 4
        self.dscp, self.port = DSCP_DEFAULT, PORT_DEFAULT
        self._packets_where = ""
        self._links: list[tuple[str, str, str, str, str]] = []
        self._dist: dict[str, dict[str, int]] = {}
        self._hops: dict[tuple[str, str], str] = {}
        self._paths: dict[tuple[str, str], frozenset[tuple[str, str]]] = {}

    # -- reading ---------------------------------------------------------

    @classmethod
    def read(cls, paths: Sequence[str]) -> "Topology":
        texts = []
        for path in paths:
            try:
                with open(path, encoding="utf-8") as f:
                    texts.append((path, f.read()))
            except OSError as e:
                raise TopologyError(f"{path}: {e.strerror}") from None
        return cls.parse(texts)

    @classmethod
    def parse(cls, texts: Sequence[tuple[str, str]]) -> "Topology":
        """The files' texts, each with the name its messages give it."""
        topo = cls()
        for name, text in texts:
            for n, line in enumerate(text.splitlines(), 1):
                words = line.split("#", 1)[0].split()
                if words:
                    topo._line(words, f"{name}:{n}")
        topo._resolve()
        return topo

    def _line(self, w: list[str], where: str) -> None:
        def fail(msg: str) -> TopologyError:
            return TopologyError(f"{where}: {msg}")

        if w[0] == "region":
            if len(w) < 2:
                raise fail("region NAME [in REGION] [oversubscribed]")
            name, rest, parent, over = w[1], w[2:], None, False
            while rest:
                if rest[0] == "in" and len(rest) >= 2:
                    parent, rest = rest[1], rest[2:]
                elif rest[0] == "oversubscribed":
                    over, rest = True, rest[1:]
                else:
                    raise fail(f"region {name}: unexpected {rest[0]!r} "
                               "(region NAME [in REGION] [oversubscribed])")
            if name in self.regions or name in self.nodes:
                raise fail(f"{name} is defined twice")
            self.regions[name] = Region(name, parent, over, where)
        elif w[0] == "node":
            usage = "node NAME worker|aggregator|switch [procs N] [in REGION]"
            if len(w) < 3:
                raise fail(usage)
            if w[2] not in KINDS:
                raise fail(f"node {w[1]}: kind {w[2]!r} is not worker, aggregator or switch")
            rest, region, procs = w[3:], None, 1
            while rest:
                if rest[0] == "in" and len(rest) >= 2 and region is None:
                    region, rest = rest[1], rest[2:]
                elif rest[0] == "procs" and len(rest) >= 2 and procs == 1:
                    if w[2] != "worker":
                        raise fail(f"node {w[1]}: only a worker runs procs")
                    procs = _number(rest[1], f"node {w[1]}: procs", 1, PROCS_MAX, fail)
                    rest = rest[2:]
                else:
                    raise fail(f"node {w[1]}: unexpected {rest[0]!r} ({usage})")
            if w[1] in self.nodes or w[1] in self.regions:
                raise fail(f"{w[1]} is defined twice")
            self.nodes[w[1]] = Node(w[1], w[2], region, where, procs)
        elif w[0] == "link":
            if len(w) != 5:
                raise fail("link NODE ADDR/LEN NODE ADDR/LEN")
            self._links.append((w[1], w[2], w[3], w[4], where))
        elif w[0] == "job":
            self.jobs.append(self._job(w, where, fail))
        elif w[0] == "packets":
            self._packets(w, where, fail)
        else:
            raise fail(f"unknown keyword {w[0]!r} (region, node, link, job or packets)")

    def _packets(self, w: list[str], where: str, fail: Callable[[str], TopologyError]) -> None:
        """packets [dscp N] [port P]: once for the whole cluster."""
        usage = "packets [dscp N] [port P]"
        if self._packets_where:
            raise fail(f"packets is given twice (first at {self._packets_where})")
        if len(w) not in (3, 5) or w[1::2] not in (["dscp"], ["port"], ["dscp", "port"],
                                                  ["port", "dscp"]):
            raise fail(usage)
        opts = dict(zip(w[1::2], w[2::2]))
        if "dscp" in opts:
            self.dscp = _number(opts["dscp"], "packets: dscp", 1, 63, fail)
        if "port" in opts:
            self.port = _number(opts["port"], "packets: port", 1, 65535, fail)
        self._packets_where = where

    def marks(self) -> dict[str, int]:
        """The packets' DSCP and port where they are not the defaults, as
        "netagg set" takes them ({} when both are)."""
        return {k: v for k, v, d in (("dscp", self.dscp, DSCP_DEFAULT),
                                     ("port", self.port, PORT_DEFAULT)) if v != d}

    def _job(self, w: list[str], where: str, fail: Callable[[str], TopologyError]) -> Job:
        if len(w) < 4 or w[2] != "workers":
            raise fail("job JID workers NODE... [trees N] [dtype D] [op O] [window N]")
        jid = _number(w[1], "job id", 0, JID_MAX, fail)
        opts = {"trees": "1", "dtype": "f32", "op": "sum", "window": "64"}
        i, workers = 3, []
        while i < len(w) and w[i] not in opts:
            workers.append(w[i])
            i += 1
        while i < len(w):
            if w[i] not in opts or i + 1 == len(w):
                raise fail(f"job {jid}: {w[i]!r} is not trees N, dtype D, op O or window N")
            opts[w[i]] = w[i + 1]
            i += 2
        if not workers:
            raise fail(f"job {jid} has no workers")
        if opts["dtype"] not in DTYPES:
            raise fail(f"job {jid}: dtype {opts['dtype']!r} is not f32, i32, f16 or bf16")
        if opts["op"] not in OPS:
            raise fail(f"job {jid}: op {opts['op']!r} is not sum or avg")
        return Job(jid, workers, _number(opts["trees"], f"job {jid}: trees", 1, TREES_MAX, fail),
                   opts["dtype"], opts["op"],
                   _number(opts["window"], f"job {jid}: window", 1, WINDOW_MAX, fail), where)

    def _resolve(self) -> None:
        for r in self.regions.values():
            if r.parent is not None and r.parent not in self.regions:
                raise TopologyError(f"{r.where}: region {r.name} is in {r.parent}, "
                                    "which is not a region")
        for r in self.regions.values():
            seen = [r.name]
            p = r.parent
            while p is not None:
                if p in seen:
                    chain = " in ".join(seen[seen.index(p):] + [p])
                    raise TopologyError(f"{r.where}: region {p} is inside itself: {chain}")
                seen.append(p)
                p = self.regions[p].parent
        for n in self.nodes.values():
            if n.region is not None and n.region not in self.regions:
                raise TopologyError(f"{n.where}: node {n.name} is in {n.region}, "
                                    "which is not a region")
        owner: dict[Address, str] = {}
        first: Optional[tuple[str, str, str]] = None  # the first address: node, text, where
        for a, aaddr, b, baddr, where in self._links:
            ends = []
            for name, addr in ((a, aaddr), (b, baddr)):
                if name not in self.nodes:
                    raise TopologyError(f"{where}: link to {name}, which is not a node")
                iface = _interface(name, addr, where)
                if first is None:
                    first, self.family = (name, addr, where), iface.version
                elif iface.version != self.family:
                    raise TopologyError(
                        f"{where}: {name}'s address {addr} is IPv{iface.version}, the "
                        f"topology IPv{self.family} ({first[0]}'s {first[1]} at {first[2]}): "
                        "a topology is all IPv4 or all IPv6, as each of its trees is")
                if owner.setdefault(iface.ip, name) != name:
                    raise TopologyError(f"{where}: {iface.ip} is {owner[iface.ip]}'s and {name}'s")
                ends.append(iface)
            if a == b:
                raise TopologyError(f"{where}: link from {a} to itself")
            if ends[0].network != ends[1].network:
                raise TopologyError(f"{where}: {a}'s {ends[0]} and {b}'s {ends[1]} "
                                    "are not on one subnet")
            if b in self.nodes[a].links:
                raise TopologyError(f"{where}: a second link between {a} and {b}")
            self.nodes[a].links[b] = (ends[0], ends[1])
            self.nodes[b].links[a] = (ends[1], ends[0])
        for n in self.nodes.values():
            if not n.links:
                raise TopologyError(f"{n.where}: node {n.name} has no link")
        jids = set()
        for j in self.jobs:
            if j.jid in jids:
                raise TopologyError(f"{j.where}: job {j.jid} is defined twice")
            jids.add(j.jid)
            self.check_job(j)

    def check_job(self, j: Job) -> None:
        """A job's workers are worker nodes of the topology, each once."""
        for w in j.workers:
            if w not in self.nodes or self.nodes[w].kind != "worker":
                raise TopologyError(f"{j.where}: job {j.jid}: {w} is not a worker node")
            if j.workers.count(w) > 1:
                raise TopologyError(f"{j.where}: job {j.jid}: {w} is listed twice")

    # -- regions ---------------------------------------------------------

    def chain(self, node: str) -> list[str]:
        """The oversubscribed regions holding node, innermost first."""
        out, r = [], self.nodes[node].region
        while r is not None:
            if self.regions[r].oversubscribed:
                out.append(r)
            r = self.regions[r].parent
        return out

    def level(self, node: str) -> str:
        """The innermost oversubscribed region holding node (TOP if none)."""
        c = self.chain(node)
        return c[0] if c else TOP

    def over_parent(self, region: str) -> str:
        """The next oversubscribed region above region (TOP if none)."""
        r = self.regions[region].parent
        while r is not None and not self.regions[r].oversubscribed:
            r = self.regions[r].parent
        return r if r is not None else TOP

    # -- paths -----------------------------------------------------------

    def dist(self, src: str, dst: str) -> int:
        """Hops from src to dst, through no worker (-1: unreachable)."""
        if dst not in self._dist:
            d = {dst: 0}
            q = collections.deque([dst])
            while q:
                x = q.popleft()
                if x != dst and self.nodes[x].kind == "worker":
                    continue  # a worker is an end, never on the way
                for n in self.nodes[x].links:
                    if n not in d:
                        d[n] = d[x] + 1
                        q.append(n)
            self._dist[dst] = d
        return self._dist[dst].get(src, -1)

    def next_hop(self, src: str, dst: str) -> str:
        hop = self._hops.get((src, dst))
        if hop is None:
            d = self.dist(src, dst)
            hop = min(n for n in self.nodes[src].links
                      if self.dist(n, dst) == d - 1
                      and (n == dst or self.nodes[n].kind != "worker"))
            self._hops[(src, dst)] = hop
        return hop

    def path(self, src: str, dst: str) -> list[str]:
        """The nodes from src to dst as routed (lab/rat-netns.py installs these routes)."""
        out = [src]
        while out[-1] != dst:
            out.append(self.next_hop(out[-1], dst))
        return out

    def links_of(self, src: str, dst: str) -> frozenset[tuple[str, str]]:
        """The links a packet from src to dst crosses (kept: a planner asks
        for the same paths again and again)."""
        links = self._paths.get((src, dst))
        if links is None:
            p = self.path(src, dst)
            links = self._paths[(src, dst)] = frozenset(_link(a, b) for a, b in zip(p, p[1:]))
        return links

    def addr_towards(self, src: str, dst: str) -> Address:
        """src's address on the first link to dst: what dst sees as source."""
        return self.nodes[src].links[self.next_hop(src, dst)][0].ip

    def addr_facing(self, dst: str, src: str) -> Address:
        """dst's address on the last link of the path from src."""
        p = self.path(src, dst)
        return self.nodes[dst].links[p[-2]][0].ip


def _link(a: str, b: str) -> tuple[str, str]:
    """The link between a and b, named the same both ways: its ends in order."""
    return (a, b) if a < b else (b, a)


def _interface(name: str, addr: str, where: str) -> Interface:
    """name's address on a link, addr (ADDR/LEN), read and checked to be a
    host address: IPv4 of a /30 or wider, not the network's or broadcast
    address; IPv6 of a /127 or wider (RFC 6164: a /127's two addresses are
    both hosts'), global or unique local: not unspecified, loopback,
    multicast, link-local (it names no interface to send by), IPv4-mapped
    (an IPv4 address is written as one), with a zone, or the subnet-router
    anycast address (RFC 4291: a router's on every subnet it has)."""
    def fail(msg: str) -> TopologyError:
        return TopologyError(f"{where}: {name}'s address {addr} {msg}")

    try:
        if "/" not in addr:
            raise ValueError(addr)
        iface: Interface = ipaddress.ip_interface(addr)
    except ValueError:
        raise TopologyError(f"{where}: {name}'s address {addr!r} is not "
                            "an IPv4 or IPv6 ADDR/LEN") from None
    net = iface.network
    if isinstance(iface, ipaddress.IPv4Interface):
        if net.prefixlen > 30 or iface.ip in (net.network_address, net.broadcast_address):
            raise fail("is not a host address of a /30 or wider")
        return iface
    if iface.scope_id is not None:  # the interface's: its .ip has none
        raise fail(f"has a zone (%{iface.scope_id}): write the address alone")
    ip = iface.ip
    if ip.is_unspecified:
        raise fail("is the unspecified address, not a host's")
    if ip.is_loopback:
        raise fail("is the loopback address, not a link's")
    if ip.is_multicast:
        raise fail("is multicast (ff00::/8), not a host address")
    if ip.is_link_local:
        raise fail("is link-local (fe80::/10), which names no interface to send by: "
                   "give a global or unique local (fd00::/8) address")
    if ip.ipv4_mapped is not None:
        raise fail(f"is IPv4-mapped (::ffff:0:0/96): write {ip.ipv4_mapped} in an IPv4 "
                   "topology")
    if net.prefixlen > 127:
        raise fail("is not a host address of a /127 or wider")
    if net.prefixlen < 127 and ip == net.network_address:
        raise fail(f"is the subnet-router anycast address of {net} (RFC 4291), "
                   "not a host address")
    return iface


def _number(s: str, what: str, lo: int, hi: int,
            fail: Callable[[str], TopologyError]) -> int:
    """s, a number (decimal, or 0x... and the like) lo to hi; else fail's
    error naming it as what."""
    try:
        v = int(s, 0)
    except ValueError:
        raise fail(f"{what} {s!r} is not a number") from None
    if not lo <= v <= hi:
        raise fail(f"{what} {v} is not {lo} to {hi}")
    return v


# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Aggregation trees built from the topology, by RAT's rules.

A topology file says what the cluster is made of; the tool computes every
job's aggregation trees from it and writes what configures them::

    python3 -m netagg.rat plan FILE... [-o DIR] [-j]

plan prints the trees and the links jobs share; with -o it writes
DIR/NODE.batch (the ``netagg -b`` batch of every node that aggregates) and
DIR/WORKER.JID.env (a worker's NETAGG_* environment for that job, read by
``netagg.Worker.from_env``); -j prints the plan as JSON. Building a plan
out of network namespaces to try it (apply, destroy) is the lab's, not the
package's: lab/rat-netns.py in the source tree, which plans with this
module (its routes follow :meth:`Topology.path`).

A topology is IPv4 or IPv6, all of it: every address of its files is of
one family, as every tree's parent and children are (the kernel refuses a
tree that mixes them, and a tree here spans the whole path from a worker
to its root). Over IPv6 the batches list children with a port as
[ADDR]:PORT and NETAGG_TREES gives ADDR bare ("0=fd00:1::254").

The files, read in order as one (``#`` starts a comment; names and
addresses may appear before they are defined)::

    region NAME [in REGION] [oversubscribed]
    node NAME worker|aggregator|switch [procs N] [in REGION]
    link NODE ADDR/LEN NODE ADDR/LEN
    job JID workers NODE... [trees N] [dtype f32|i32|f16|bf16]
        [op sum|avg] [window N]

ADDR/LEN is an IPv4 host address of a /30 or wider, or an IPv6 one of a
/127 or wider (RFC 6164) that is global or unique local: not unspecified,
loopback, multicast, link-local, IPv4-mapped, with a zone or a
subnet-router anycast address.

A worker trains (a leaf of every tree, never on the way of others'
packets); with procs N (a host with N accelerators, torchrun
--nproc_per_node N) it runs N workers, each a child of its parent by its
own UDP port (PORT_BASE + its LOCAL_RANK); an aggregator is a Linux host or switch that forwards and may run
netagg; a switch forwards only. Regions nest (a rack in a pod); an
oversubscribed one is where RAT puts an aggregator: its links up carry less
than its nodes can send, so its workers' gradients leave it summed, as one
stream. The rules, for each job and tree t of it:

- The root sits in the smallest region holding all of the job's workers
  (the whole cluster, when none does), on an aggregator there that is not
  inside a smaller oversubscribed region. Each tree gets another root while
  there are candidates (trees spread over the top-level switches).
- Every oversubscribed region below the root's with at least two inputs
  (the job's workers in it, or aggregators of the oversubscribed regions
  inside it) gets an aggregator among its own nodes; its parent is the
  aggregator of the next enclosing such region, or the root. A region with
  one input gets none: it would lengthen the dependency chain and sum
  nothing. So a tree has one level per oversubscribed level, no more.
- Among candidates a node is chosen by, in this order: fewest links shared
  with jobs placed before (vClos: jobs placed in file order, each kept off
  the links earlier jobs use where the topology allows), then for a root
  fewest of this job's trees already rooted there, then fewest hops to its
  parent and from its region's workers, then fewest of this job's trees
  already there, then name.
- Packets between a child and its parent take the shortest path, ties to
  the neighbour first by name, never through a worker (lab/rat-netns.py
  routes them so). A link carries a job's stream when a path of one of
  its trees, up or down, crosses it; links carrying several jobs are
  reported.
"""

from __future__ import annotations

import argparse
import collections
import ipaddress
import json
import os
import shlex
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional, Sequence, Union

KINDS = ("worker", "aggregator", "switch")
PORT_BASE = 7178    # netagg.PORT_BASE: a host's first worker's port
PROCS_MAX = 64      # NETAGG_CHILDREN_MAX: each process is a child
DTYPES = {"f32": "float32", "i32": "int32", "f16": "float16", "bf16": "bfloat16"}
OPS = ("sum", "avg")
TREES_MAX = 64      # NETAGG_TREES_MAX
WINDOW_MAX = 4096   # NETAGG_WINDOW_MAX
JID_MAX = 0xffffffff
TOP = ""            # the region above all regions: the whole cluster

# An address of a topology: all of its addresses are of one family.
Interface = Union[ipaddress.IPv4Interface, ipaddress.IPv6Interface]
Address = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]


class TopologyError(Exception):
    """A file that does not describe a topology, or a job it cannot place;
    the message names the file, line and node."""


@dataclass
class Region:
    name: str
    parent: Optional[str]
    oversubscribed: bool
    where: str


@dataclass
class Node:
    name: str
    kind: str
    region: Optional[str]
    where: str
    procs: int = 1      # workers a worker node runs (torchrun --nproc_per_node)
    # neighbour name -> (own address, neighbour's address), one per link
    links: dict[str, tuple[Interface, Interface]] = field(default_factory=dict)


@dataclass
class Job:
    jid: int
    workers: list[str]
    trees: int
    dtype: str
    op: str
    window: int
    where: str


@dataclass
class Tree:
    """One tree of a job: its root and, for every node in it, its parent."""
    jid: int
    tid: int
    root: str
    parent: dict[str, str]          # child node -> parent node
    children: dict[str, list[str]]  # aggregator or root -> children, in order

    def edges(self) -> list[tuple[str, str]]:
        return [(c, p) for p, cs in self.children.items() for c in cs]


class Topology:
    """The parsed files: regions, nodes, links, jobs, and the paths between
    nodes. family is the IP version of every address (4 or 6; 4 when the
    files have none)."""

    def __init__(self) -> None:
        self.regions: dict[str, Region] = {}
        self.nodes: dict[str, Node] = {}
        self.jobs: list[Job] = []
        self.family = 4
        self._links: list[tuple[str, str, str, str, str]] = []
        self._dist: dict[str, dict[str, int]] = {}

    # -- reading ---------------------------------------------------------

    @classmethod
    def read(cls, paths: Sequence[str]) -> "Topology":
        topo = cls()
        for path in paths:
            try:
                with open(path, encoding="utf-8") as f:
                    lines = f.read().splitlines()
            except OSError as e:
                raise TopologyError(f"{path}: {e.strerror}") from None
            for n, line in enumerate(lines, 1):
                words = line.split("#", 1)[0].split()
                if words:
                    topo._line(words, f"{path}:{n}")
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
        else:
            raise fail(f"unknown keyword {w[0]!r} (region, node, link or job)")

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
        d = self.dist(src, dst)
        return min(n for n in self.nodes[src].links
                   if self.dist(n, dst) == d - 1 and (n == dst or self.nodes[n].kind != "worker"))

    def path(self, src: str, dst: str) -> list[str]:
        """The nodes from src to dst as routed (lab/rat-netns.py installs these routes)."""
        out = [src]
        while out[-1] != dst:
            out.append(self.next_hop(out[-1], dst))
        return out

    def links_of(self, src: str, dst: str) -> set[tuple[str, str]]:
        p = self.path(src, dst)
        return {_link(a, b) for a, b in zip(p, p[1:])}

    def addr_towards(self, src: str, dst: str) -> Address:
        """src's address on the first link to dst: what dst sees as source."""
        return self.nodes[src].links[self.next_hop(src, dst)][0].ip

    def addr_facing(self, dst: str, src: str) -> Address:
        """dst's address on the last link of the path from src."""
        p = self.path(src, dst)
        return self.nodes[dst].links[p[-2]][0].ip


def _link(a: str, b: str) -> tuple[str, str]:
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


def _with_port(addr: Address, port: int) -> str:
    """ADDR:PORT as the netagg CLI takes it: [ADDR]:PORT for IPv6."""
    return f"[{addr}]:{port}" if addr.version == 6 else f"{addr}:{port}"


def _number(s: str, what: str, lo: int, hi: int,
            fail: Callable[[str], TopologyError]) -> int:
    try:
        v = int(s, 0)
    except ValueError:
        raise fail(f"{what} {s!r} is not a number") from None
    if not lo <= v <= hi:
        raise fail(f"{what} {v} is not {lo} to {hi}")
    return v


class Planner:
    """Places every job's trees, jobs in file order."""

    def __init__(self, topo: Topology) -> None:
        self.topo = topo
        self.trees: list[Tree] = []
        self.job_links: dict[int, set[tuple[str, str]]] = {}

    def plan(self) -> list[Tree]:
        for job in self.topo.jobs:
            self.job_links[job.jid] = set()
            for tid in range(job.trees):
                tree = self._tree(job, tid)
                for node, kids in tree.children.items():
                    n = sum(self.topo.nodes[k].procs if self.topo.nodes[k].kind == "worker"
                            else 1 for k in kids)
                    if n > PROCS_MAX:
                        raise TopologyError(f"{job.where}: job {job.jid} tree {tid}: {node} "
                                            f"would have {n} children (workers' processes "
                                            f"count one each), at most {PROCS_MAX}")
                self.trees.append(tree)
                for c, p in tree.edges():
                    self.job_links[job.jid] |= self.topo.links_of(c, p) | self.topo.links_of(p, c)
        return self.trees

    def shared(self) -> dict[tuple[str, str], list[int]]:
        """Links carrying more than one job's streams, with the jobs."""
        users: dict[tuple[str, str], list[int]] = collections.defaultdict(list)
        for jid, links in self.job_links.items():
            for link in links:
                users[link].append(jid)
        return {k: v for k, v in sorted(users.items()) if len(v) > 1}

    def _taken(self, jid: int) -> set[tuple[str, str]]:
        return set().union(*(ls for j, ls in self.job_links.items() if j != jid))

    def _cost(self, job: Job, node: str, parent: Optional[str], workers: Iterable[str],
              root: bool) -> tuple[int, int, int, int, str]:
        t = self.topo
        taken = self._taken(job.jid)
        links: set[tuple[str, str]] = set()
        hops = 0
        for w in workers:
            links |= t.links_of(w, node) | t.links_of(node, w)
            hops += t.dist(w, node)
        if parent is not None:
            links |= t.links_of(node, parent) | t.links_of(parent, node)
            hops += t.dist(node, parent)
        mine = [tr for tr in self.trees if tr.jid == job.jid]
        roots = sum(tr.root == node for tr in mine)
        uses = sum(node in tr.children for tr in mine)
        return (len(links & taken), roots if root else 0, hops, uses, node)

    def _tree(self, job: Job, tid: int) -> Tree:
        t = self.topo
        # From the smallest oversubscribed region holding every worker
        # outward, the first level with nodes that may aggregate.
        chain = t.chain(job.workers[0])
        common = [r for r in chain if all(r in t.chain(w) for w in job.workers[1:])]
        levels = common + [TOP]
        for region in levels:
            cands = [n for n in sorted(t.nodes)
                     if t.nodes[n].kind == "aggregator" and t.level(n) == region]
            if cands:
                break
        else:
            where = f"in or above {levels[0]}" if levels[0] else "in the cluster"
            raise TopologyError(f"{job.where}: job {job.jid}: no aggregator {where} "
                                "to be its root")
        for w in job.workers:
            if all(t.dist(w, n) < 0 for n in cands):
                raise TopologyError(f"{job.where}: job {job.jid}: worker {w} is unreachable "
                                    f"from every candidate root ({', '.join(cands)})")
        roots = [n for n in cands if all(t.dist(w, n) > 0 for w in job.workers)]
        if not roots:
            missed = {n: [w for w in job.workers if t.dist(w, n) < 0] for n in cands}
            raise TopologyError(f"{job.where}: job {job.jid}: no candidate root reaches every "
                                "worker: " + "; ".join(f"{n} not {', '.join(ws)}"
                                                       for n, ws in missed.items()))
        root = min(roots, key=lambda n: self._cost(job, n, None, job.workers, True))
        tree = Tree(job.jid, tid, root, {}, {root: []})
        self._attach(job, tree, root, t.level(root), job.workers)
        return tree

    def _inputs(self, region: str, workers: list[str]) -> list[tuple[str, list[str]]]:
        """The inputs of level region (TOP: the cluster) for these workers,
        all inside it: a worker directly in it, keyed by its name, or the
        oversubscribed region just inside it, keyed by the region's name,
        with its workers; in the workers' order."""
        groups: dict[str, list[str]] = {}
        for w in workers:
            c = self.topo.chain(w)
            i = len(c) if region == TOP else c.index(region)
            groups.setdefault(c[i - 1] if i > 0 else w, []).append(w)
        return list(groups.items())

    def _attach(self, job: Job, tree: Tree, agg: str, region: str,
                workers: list[str]) -> None:
        """Give agg, which sums region's workers, its children."""
        t = self.topo
        for key, ws in self._inputs(region, workers):
            if key in t.nodes:
                self._child(tree, ws[0], agg)
                continue
            # An oversubscribed region inside: its own aggregator when it
            # has two inputs or more and a node that may aggregate.
            inputs = self._inputs(key, ws)
            cands = [n for n in sorted(t.nodes) if t.nodes[n].kind == "aggregator"
                     and t.level(n) == key and t.dist(n, agg) > 0
                     and all(t.dist(w, n) > 0 for w in ws)]
            if len(inputs) < 2 or not cands:
                self._attach(job, tree, agg, key, ws)  # its inputs go up
                continue
            sub = min(cands, key=lambda n: self._cost(job, n, agg, ws, False))
            self._child(tree, sub, agg)
            tree.children[sub] = []
            self._attach(job, tree, sub, key, ws)

    @staticmethod
    def _child(tree: Tree, child: str, parent: str) -> None:
        tree.parent[child] = parent
        tree.children[parent].append(child)


# -- output ------------------------------------------------------------------

def batches(topo: Topology, trees: list[Tree]) -> dict[str, list[str]]:
    """Every aggregating node's netagg batch, in node name order."""
    out: dict[str, list[str]] = collections.defaultdict(list)
    jobs = {j.jid: j for j in topo.jobs}
    for tr in trees:
        j = jobs[tr.jid]
        for node, children in tr.children.items():
            lines = out[node]
            add = f"job add {j.jid} dtype {j.dtype} op {j.op} window {j.window}"
            if add not in lines:
                lines.append(add)
            cmd = f"tree add job {j.jid} tree {tr.tid} role "
            if node == tr.root:
                cmd += "root"
            else:
                cmd += f"aggregator parent {topo.addr_facing(tr.parent[node], node)}"
            cmd += "".join(f" child {child}" for c in children
                           for child in _children(topo, c, node))
            lines.append(cmd)
    return dict(sorted(out.items()))


def _children(topo: Topology, child: str, parent: str) -> list[str]:
    """How parent lists child: its address, or one ADDR:PORT a process
    ([ADDR]:PORT over IPv6)."""
    addr = topo.addr_towards(child, parent)
    procs = topo.nodes[child].procs
    if procs == 1:
        return [str(addr)]
    return [_with_port(addr, PORT_BASE + local) for local in range(procs)]


def ranks(topo: Topology, job: Job) -> dict[str, int]:
    """The first rank of every worker node of the job: its processes take
    the next ones, in the job's order (torchrun's, node by node)."""
    out, rank = {}, 0
    for w in job.workers:
        out[w] = rank
        rank += topo.nodes[w].procs
    return out


def environments(topo: Topology, trees: list[Tree]) -> dict[tuple[str, int], dict[str, str]]:
    """Every worker's NETAGG_* environment, per job (NETAGG_TREES
    "TID=ADDR,...", ADDR IPv4 or IPv6 as the topology is, bare:
    "0=fd00:1::254")."""
    out = {}
    for j in topo.jobs:
        mine = [tr for tr in trees if tr.jid == j.jid]
        first = ranks(topo, j)
        total = sum(topo.nodes[w].procs for w in j.workers)
        for w in j.workers:
            spec = ",".join(f"{tr.tid}={topo.addr_facing(tr.parent[w], w)}" for tr in mine)
            env = {"NETAGG_JOB": str(j.jid), "NETAGG_RANK": str(first[w]),
                   "NETAGG_WORKERS": str(total),
                   "NETAGG_TREES": spec, "NETAGG_DTYPE": DTYPES[j.dtype],
                   "NETAGG_WINDOW": str(j.window)}
            # The node's first worker: LOCAL_RANK l adds l to rank and port.
            if topo.nodes[w].procs > 1:
                env["NETAGG_PORT"] = str(PORT_BASE)
            out[(w, j.jid)] = env
    return out


def draw(tree: Tree) -> list[str]:
    """The tree as text, root first, children indented below their parent."""
    lines = [f"job {tree.jid} tree {tree.tid}:"]

    def walk(node: str, prefix: str, last: bool, top: bool) -> None:
        kids = tree.children.get(node, [])
        label = node + (" (root)" if top else "")
        if top:
            lines.append("  " + label)
        else:
            lines.append("  " + prefix + ("`-- " if last else "|-- ") + label)
        inner = prefix + ("    " if last else "|   ") if not top else ""
        for i, k in enumerate(kids):
            walk(k, inner, i == len(kids) - 1, False)

    walk(tree.root, "", True, True)
    return lines


def as_json(topo: Topology, planner: Planner) -> dict[str, Any]:
    return {
        "trees": [{"job": tr.jid, "tree": tr.tid, "root": tr.root,
                   "parent": dict(sorted(tr.parent.items())),
                   "depth": max((_depth(tr, n) for n in tr.parent), default=0)}
                  for tr in planner.trees],
        "batches": batches(topo, planner.trees),
        "workers": [{"node": w, "job": jid, "env": env}
                    for (w, jid), env in environments(topo, planner.trees).items()],
        "links": {str(jid): sorted("-".join(k) for k in ls)
                  for jid, ls in planner.job_links.items()},
        "shared": [{"link": "-".join(k), "jobs": v} for k, v in planner.shared().items()],
    }


def _depth(tree: Tree, node: str) -> int:
    d = 0
    while node != tree.root:
        node, d = tree.parent[node], d + 1
    return d


def write(topo: Topology, planner: Planner, outdir: str) -> None:
    os.makedirs(outdir, exist_ok=True)
    for node, lines in batches(topo, planner.trees).items():
        with open(os.path.join(outdir, f"{node}.batch"), "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in lines))
    for (w, jid), env in environments(topo, planner.trees).items():
        with open(os.path.join(outdir, f"{w}.{jid}.env"), "w", encoding="utf-8") as f:
            f.write("".join(f"{k}={shlex.quote(v)}\n" for k, v in env.items()))


def report(topo: Topology, planner: Planner) -> list[str]:
    lines = []
    for tr in planner.trees:
        lines += draw(tr)
    shared = planner.shared()
    if len(topo.jobs) > 1:
        lines.append("links shared by jobs:" + ("" if shared else " none"))
        for (a, b), jids in shared.items():
            lines.append(f"  {a}-{b}: jobs {' '.join(map(str, jids))}")
    return lines


# -- command line ------------------------------------------------------------

def main(argv: Optional[Sequence[str]] = None) -> int:
    """Exit status, as every netagg program's: 0 done, 1 a bad file, 2 a bad
    command line (nothing was done; apply and destroy among them: they are
    lab/rat-netns.py's)."""
    ap = argparse.ArgumentParser(
        prog="python3 -m netagg.rat",
        description="Aggregation trees built from the topology.",
        epilog="apply and destroy, which build a plan in network namespaces, "
               "are the lab's: lab/rat-netns.py in the source tree.")
    ap.add_argument("command", choices=("plan",))
    ap.add_argument("files", nargs="+", metavar="FILE")
    ap.add_argument("-o", "--out", metavar="DIR", help="write NODE.batch and WORKER.JID.env")
    ap.add_argument("-j", "--json", action="store_true", help="print the plan as JSON")
    try:
        a = ap.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    try:
        topo = Topology.read(a.files)
        planner = Planner(topo)
        planner.plan()
    except TopologyError as e:
        print(f"netagg.rat: {e}", file=sys.stderr)
        return 1
    if a.out:
        write(topo, planner, a.out)
    if a.json:
        print(json.dumps(as_json(topo, planner), indent=1))
    else:
        print("\n".join(report(topo, planner)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

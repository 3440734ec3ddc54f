# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Aggregation trees built from the topology, by RAT's rules.

A topology file says what the cluster is made of; the tool computes every
job's aggregation trees from it and writes what configures them::

    python3 -m netagg.rat plan FILE... [-o DIR] [-j]

plan prints the trees and the links jobs share; with -o it writes
DIR/NODE.batch (the ``netagg -b`` batch of every node that aggregates) and
DIR/WORKER.JID.env (a worker's NETAGG_* environment for that job, read by
``netagg.Worker.from_env``) and DIR/job.JID.env (the job's, the same for
every host: each tree named by its root's address, ranks the launcher's;
see :func:`job_environments`); -j prints the plan as JSON. Building a plan
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
    packets [dscp N] [port P]

packets, at most once, gives the DSCP (1-63, default 56) and UDP port
(default 7177) of the cluster's aggregation packets, where a fabric
polices or re-marks DSCP 56 or the port is taken: every batch then begins
with "set dscp N port P" and every worker's environment has NETAGG_DSCP
and NETAGG_NODE_PORT.

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
import json
import os
import shlex
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

# The files, read and checked, and the paths: netagg.topology's, named
# here too (netagg.rat's names before it was split off).
from .topology import (DTYPES, JID_MAX, KINDS, OPS, PROCS_MAX, TOP, TREES_MAX,
                       WINDOW_MAX, Address, Interface, Job, Node, Region, Topology,
                       TopologyError)

__all__ = ["KINDS", "PORT_BASE", "PROCS_MAX", "DTYPES", "OPS", "TREES_MAX", "WINDOW_MAX",
           "JID_MAX", "TOP", "Interface", "Address", "TopologyError", "Region", "Node",
           "Job", "Tree", "Topology", "Planner", "batches", "ranks", "environments",
           "job_environments", "marks_env", "draw", "as_json", "write", "report", "show", "main"]

PORT_BASE = 7178    # netagg.PORT_BASE: a host's first worker's port


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


def _with_port(addr: Address, port: int) -> str:
    """ADDR:PORT as the netagg CLI takes it: [ADDR]:PORT for IPv6."""
    return f"[{addr}]:{port}" if addr.version == 6 else f"{addr}:{port}"


def shared_links(job_links: Mapping[int, Iterable[tuple[str, str]]]
                 ) -> dict[tuple[str, str], list[int]]:
    """Of each job's links, those that carry more than one job's streams,
    each with its jobs in order."""
    users: dict[tuple[str, str], list[int]] = collections.defaultdict(list)
    for jid, links in sorted(job_links.items()):
        for link in links:
            users[link].append(jid)
    return {k: v for k, v in sorted(users.items()) if len(v) > 1}


class Planner:
    """Places jobs' trees, one job after another: in file order (plan), or
    one job at a time against trees placed before it (keep, then place),
    as the cluster's allocator does. unusable says why an aggregator may
    not take a new tree, "" if it may (the allocator's: no agent, drained,
    its jobs or memory at the limit)."""

    def __init__(self, topo: Topology, unusable: Optional[Callable[[str], str]] = None) -> None:
        self.topo = topo
        self.unusable = unusable or (lambda node: "")
        self.trees: list[Tree] = []
        self.job_links: dict[int, set[tuple[str, str]]] = {}

    def plan(self) -> list[Tree]:
        for job in self.topo.jobs:
            self.place(job)
        return self.trees

    def keep(self, trees: Iterable[Tree],
             links: Optional[dict[int, set[tuple[str, str]]]] = None) -> None:
        """Trees placed before, which stay: their links count as taken
        (each job's as given, else as computed again)."""
        for tree in trees:
            self.trees.append(tree)
            if links is None or tree.jid not in links:
                self._count_links(tree)
        for jid, ls in (links or {}).items():
            self.job_links.setdefault(jid, set()).update(ls)

    def place(self, job: Job) -> list[Tree]:
        """job's trees, placed after every tree placed or kept so far."""
        self.job_links[job.jid] = set()
        mine = []
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
            self._count_links(tree)
            mine.append(tree)
        return mine

    def _count_links(self, tree: Tree) -> None:
        links = self.job_links.setdefault(tree.jid, set())
        for c, p in tree.edges():
            links |= self.topo.links_of(c, p) | self.topo.links_of(p, c)

    def shared(self) -> dict[tuple[str, str], list[int]]:
        """Links carrying more than one job's streams, with the jobs."""
        return shared_links(self.job_links)

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
        refused: list[str] = []
        for region in levels:
            cands = [n for n in sorted(t.nodes)
                     if t.nodes[n].kind == "aggregator" and t.level(n) == region]
            why = {n: self.unusable(n) for n in cands}
            refused += [f"{n}: {w}" for n, w in why.items() if w]
            cands = [n for n in cands if not why[n]]
            if cands:
                break
        else:
            where = f"in or above {levels[0]}" if levels[0] else "in the cluster"
            none = f" that may take it ({'; '.join(refused)})" if refused else ""
            raise TopologyError(f"{job.where}: job {job.jid}: no aggregator {where}{none} "
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
                     and t.level(n) == key and not self.unusable(n) and t.dist(n, agg) > 0
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

def batches(topo: Topology, trees: list[Tree],
            jobs_placed: Optional[Iterable[Job]] = None,
            marks: bool = True) -> dict[str, list[str]]:
    """Every aggregating node's netagg batch, in node name order; the trees'
    jobs are the topology's unless given. With marks, a topology's packets
    line comes first in each ("set dscp N port P": the namespace's, not a
    job's, so the cluster's agents set it apart)."""
    out: dict[str, list[str]] = collections.defaultdict(list)
    jobs = {j.jid: j for j in (topo.jobs if jobs_placed is None else jobs_placed)}
    settings = topo.marks() if marks else {}
    first = ["set" + "".join(f" {k} {v}" for k, v in settings.items())] if settings else []
    for tr in trees:
        j = jobs[tr.jid]
        for node, children in tr.children.items():
            lines = out[node]
            if not lines:
                lines += first
            add = f"job add {j.jid} dtype {j.dtype} op {j.op} window {j.window}"
            if j.memcap:
                add += f" memcap {j.memcap}"
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


def _job_env(topo: Topology, job: Job, trees: str) -> dict[str, str]:
    """The NETAGG_* every worker of job has, NETAGG_TREES trees."""
    env = {"NETAGG_JOB": str(job.jid),
           "NETAGG_WORKERS": str(sum(topo.nodes[w].procs for w in job.workers)),
           "NETAGG_TREES": trees, "NETAGG_DTYPE": DTYPES[job.dtype],
           "NETAGG_WINDOW": str(job.window)}
    env.update(marks_env(topo.marks()))
    return env


def marks_env(marks: Mapping[str, int]) -> dict[str, str]:
    """A topology's marks() as the workers' NETAGG_DSCP, NETAGG_NODE_PORT."""
    names = {"dscp": "NETAGG_DSCP", "port": "NETAGG_NODE_PORT"}
    return {names[k]: str(v) for k, v in marks.items()}


def environments(topo: Topology, trees: list[Tree]) -> dict[tuple[str, int], dict[str, str]]:
    """Every worker's NETAGG_* environment, per job (NETAGG_TREES
    "TID=ADDR,...", ADDR IPv4 or IPv6 as the topology is, bare:
    "0=fd00:1::254")."""
    out = {}
    for j in topo.jobs:
        mine = [tr for tr in trees if tr.jid == j.jid]
        first = ranks(topo, j)
        for w in j.workers:
            spec = ",".join(f"{tr.tid}={topo.addr_facing(tr.parent[w], w)}" for tr in mine)
            env = _job_env(topo, j, spec)
            env["NETAGG_RANK"] = str(first[w])
            # The node's first worker: LOCAL_RANK l adds l to rank and port.
            if topo.nodes[w].procs > 1:
                env["NETAGG_PORT"] = str(PORT_BASE)
            out[(w, j.jid)] = env
    return out


def job_environments(topo: Topology,
                     trees: list[Tree]) -> dict[int, Optional[dict[str, str]]]:
    """One NETAGG_* environment a job for every host of it (NETAGG_TREES
    names each tree by an address of its root, the one facing the job's
    first worker): each worker's packets to it go first to the worker's
    parent in the tree, which takes them as they pass, so the address
    serves every worker. Ranks come from the launcher (torchrun's RANK,
    MPI's), a host's ports from LOCAL_RANK. None for a job with a worker
    whose way to a root does not begin at its parent there: it needs the
    per-worker environments."""
    out: dict[int, Optional[dict[str, str]]] = {}
    for j in topo.jobs:
        mine = [tr for tr in trees if tr.jid == j.jid]
        if any(topo.next_hop(w, tr.root) != tr.parent[w] for tr in mine for w in j.workers):
            out[j.jid] = None
            continue
        spec = ",".join(f"{tr.tid}={topo.addr_facing(tr.root, j.workers[0])}" for tr in mine)
        out[j.jid] = _job_env(topo, j, spec)
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
        "jobs": [{"job": jid, "env": env}
                 for jid, env in job_environments(topo, planner.trees).items()],
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
    envs = {f"{w}.{jid}.env": env for (w, jid), env in environments(topo, planner.trees).items()}
    envs.update({f"job.{jid}.env": env
                 for jid, env in job_environments(topo, planner.trees).items() if env})
    for name, env in envs.items():
        with open(os.path.join(outdir, name), "w", encoding="utf-8") as f:
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


def show(topo: Topology, planner: Planner, outdir: Optional[str], as_json_out: bool) -> None:
    """The plan written into outdir (if given) and printed: JSON, or the report."""
    if outdir:
        write(topo, planner, outdir)
    if as_json_out:
        print(json.dumps(as_json(topo, planner), indent=1))
    else:
        print("\n".join(report(topo, planner)))


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
    ap.add_argument("-o", "--out", metavar="DIR",
                    help="write NODE.batch, WORKER.JID.env and job.JID.env")
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
    show(topo, planner, a.out, a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())

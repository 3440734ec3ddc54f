#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""rat-netns: a RAT plan built out of network namespaces, to try it.

The lab's side of the topology tool: ``python3 -m netagg.rat plan`` (the
package's) plans every job's trees from the topology files; this builds
the topology itself on one Linux host and configures it with that plan::

    lab/rat-netns.py apply FILE... [-o DIR] [-j] [--prefix P] [--netagg PATH]
    lab/rat-netns.py destroy FILE... [--prefix P]

apply does what plan does (prints the plan, as JSON with -j; with -o
writes DIR/NODE.batch and DIR/WORKER.JID.env), then builds the topology
out of network namespaces (one per node, named PREFIX+NODE; a veth pair
per link; the addresses; a bridge where a node has one address on several
links; forwarding on every node but workers and a route to every address,
along the same paths the plan counts: netagg.rat's Topology.path) and runs
every node's batch in its namespace with the netagg CLI (--netagg, or
$NETAGG, or netagg on the PATH). destroy deletes the namespaces; an apply
that fails leaves what it built for destroy. Over IPv6 apply adds the
addresses without duplicate address detection (nodad), turns IPv6
forwarding on, routes each address as a /128 and configures the nodes
once no address is tentative.

It plans with netagg.rat: the checkout's python/ (PYTHONPATH=python, or
found beside this folder) or an installed netagg package, and so needs the
library built, as the package does. Run as root (ip netns). Exit status,
as every netagg program's: 0 done, 1 a bad file or a step of apply that
failed (the message names the command and what it said), 2 a bad command
line (nothing was done).
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

# The planner: from PYTHONPATH or an installed package, else the checkout's.
if importlib.util.find_spec("netagg") is None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from netagg.rat import (Interface, Planner, Topology, TopologyError,  # noqa: E402
                        batches, show)


def _run(cmd: list[str], stdin: Optional[str] = None) -> None:
    """Run cmd; RuntimeError naming it, what it said and its exit status if
    it failed."""
    r = subprocess.run(cmd, input=stdin, text=True, capture_output=True, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {(r.stderr or r.stdout).strip()} "
                           f"(exit {r.returncode})")


def apply(topo: Topology, planner: Planner, prefix: str, netagg: str) -> None:
    """Build the topology in network namespaces and configure every node.

    Over IPv6 the addresses are added without duplicate address detection
    (nodad: usable at once), the nodes but workers forward IPv6, the routes
    are /128s, and the nodes are configured once no address is tentative."""
    ns = {n: prefix + n for n in topo.nodes}
    v6 = topo.family == 6
    # ip -6 for what depends on the family; IPv4's commands as they always were
    fam = ["-6"] if v6 else []
    forward = "net.ipv6.conf.all.forwarding=1" if v6 else "net.ipv4.ip_forward=1"
    for n in sorted(topo.nodes):
        _run(["ip", "netns", "add", ns[n]])
        _run(["ip", "-n", ns[n], "link", "set", "lo", "up"])
        if topo.nodes[n].kind != "worker":
            _run(["ip", "netns", "exec", ns[n], "sysctl", "-qw", forward])
    ifname: dict[tuple[str, str], str] = {}
    for n in sorted(topo.nodes):
        for i, m in enumerate(sorted(topo.nodes[n].links)):
            ifname[(n, m)] = f"l{i}"
    done: set[tuple[str, str]] = set()
    for n in sorted(topo.nodes):
        for m in sorted(topo.nodes[n].links):
            link = (n, m) if n < m else (m, n)
            if link in done:
                continue
            done.add(link)
            _run(["ip", "link", "add", ifname[(n, m)], "netns", ns[n], "type", "veth",
                  "peer", "name", ifname[(m, n)], "netns", ns[m]])
    for n in sorted(topo.nodes):
        node = topo.nodes[n]
        by_addr: dict[Interface, list[str]] = collections.defaultdict(list)
        for m, (mine, _) in sorted(node.links.items()):
            by_addr[mine].append(ifname[(n, m)])
        for b, (addr, devs) in enumerate(sorted(by_addr.items())):
            dev = devs[0]
            if len(devs) > 1:  # one address on several links: a bridge
                dev = f"br{b}"
                _run(["ip", "-n", ns[n], "link", "add", dev, "type", "bridge"])
                for d in devs:
                    _run(["ip", "-n", ns[n], "link", "set", d, "master", dev])
            _run(["ip", "-n", ns[n], *fam, "addr", "add", str(addr), "dev", dev]
                 + (["nodad"] if v6 else []))
            for d in devs + ([dev] if len(devs) > 1 else []):
                _run(["ip", "-n", ns[n], "link", "set", d, "up"])
    for n in sorted(topo.nodes):
        own = [a for a, _ in topo.nodes[n].links.values()]
        for d in sorted(topo.nodes):
            if d == n or topo.dist(n, d) < 0:
                continue
            hop = topo.next_hop(n, d)
            via = topo.nodes[n].links[hop][1].ip
            for addr, _ in topo.nodes[d].links.values():
                if any(addr.ip in o.network for o in own):
                    continue  # on a subnet of n's own: connected
                _run(["ip", "-n", ns[n], *fam, "route", "replace",
                      f"{addr.ip}/{addr.max_prefixlen}", "via", str(via)])
    if v6:
        _settle([ns[n] for n in sorted(topo.nodes)])
    for name, lines in batches(topo, planner.trees).items():
        _run(["ip", "netns", "exec", ns[name], netagg, "-b", "-"], "\n".join(lines) + "\n")


def _settle(namespaces: list[str], timeout: float = 5.0) -> None:
    """Wait until no global IPv6 address in these namespaces is tentative.
    Even without duplicate address detection an address comes into use only
    once its link has carrier (a veth's peer up, a bridge's port
    forwarding), which the kernel learns asynchronously; until then it
    answers no neighbour solicitation and is no packet's source."""
    deadline = time.monotonic() + timeout
    for name in namespaces:
        cmd = ["ip", "-n", name, "-6", "addr", "show", "scope", "global", "tentative"]
        while True:
            r = subprocess.run(cmd, text=True, capture_output=True, check=False)
            if r.returncode != 0:
                raise RuntimeError(f"{' '.join(cmd)}: {(r.stderr or r.stdout).strip()} "
                                   f"(exit {r.returncode})")
            if not r.stdout.strip():
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{' '.join(cmd)}: still tentative after {timeout:g} s: "
                                   + " ".join(r.stdout.split()))
            time.sleep(0.05)


def destroy(topo: Topology, prefix: str) -> None:
    """Delete the namespaces of the topology's nodes, those that exist."""
    for n in sorted(topo.nodes):
        subprocess.run(["ip", "netns", "del", prefix + n], capture_output=True, check=False)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Exit status: 0 done, 1 a bad file or apply failed, 2 a bad command
    line (nothing was done)."""
    ap = argparse.ArgumentParser(
        description="A RAT plan (python3 -m netagg.rat plan) built out of network "
                    "namespaces: apply builds and configures it, destroy deletes it.")
    ap.add_argument("command", choices=("apply", "destroy"))
    ap.add_argument("files", nargs="+", metavar="FILE")
    ap.add_argument("-o", "--out", metavar="DIR", help="write NODE.batch and WORKER.JID.env")
    ap.add_argument("-j", "--json", action="store_true", help="print the plan as JSON")
    ap.add_argument("--prefix", default="", help="namespace names: PREFIX + node name")
    ap.add_argument("--netagg", default=os.environ.get("NETAGG", "netagg"),
                    help="the netagg CLI apply runs (default $NETAGG or netagg)")
    try:
        a = ap.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    try:
        topo = Topology.read(a.files)
        planner = Planner(topo)
        if a.command == "apply":
            planner.plan()
    except TopologyError as e:
        print(f"rat-netns: {e}", file=sys.stderr)
        return 1
    if a.command == "destroy":
        destroy(topo, a.prefix)
        return 0
    show(topo, planner, a.out, a.json)
    try:
        apply(topo, planner, a.prefix, a.netagg)
    except RuntimeError as e:
        print(f"rat-netns: apply: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

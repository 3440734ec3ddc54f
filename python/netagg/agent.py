# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""netagg-agent: one an aggregator, its node's netagg configured from etcd.

::

    netagg-agent [--etcd URL] [--node NAME] [--netns NS] [--netagg PATH]
                 [--user USER --password-file FILE] [--ttl S]

--etcd, --node, --user and --password-file default to NETAGG_ETCD,
NETAGG_NODE (else the short host name), NETAGG_ETCD_USER and
NETAGG_ETCD_PASSWORD_FILE: systemd/netagg-agent.service sets them from
its settings' file (make install: /usr/local/etc/netagg/agent.env).

It registers the node under a lease of its own (node/NAME: the module's
limits, which the allocator places within), then keeps the namespace's
DSCP and UDP port those of the topology's packets line ("netagg set dscp
N port P", 56 and 7177 without one) and the module's jobs equal to the
node's desired configuration (config/NAME/JID, the allocator's netagg
batch lines for each job, and the job's key, key/NAME/JID, which only
this node's agent may read once auth is on): a job desired and absent is
added (its key given through a file of its own, mode 0600, removed once
the CLI has read it), one configured otherwise than desired is replaced, one not desired
is deleted, and a job configured as desired is never touched, so an agent
restarted mid-job disturbs nothing. A keyed job's key is not readable
back: the agent remembers a digest of each key it gave, and replaces a
job configured as desired whose key the store now has another of (its id
ended and placed again between two passes). It owns the module's jobs: at start a
job no key asks for (a crashed job's, whose lease took its keys) goes. It
writes back what it applied and each job's counters (applied/NAME).

It applies through the netagg CLI (``netagg -b -``, ``netagg -j job
show``): the CLI is what validates and speaks netlink, and the agent is
not on the packet path, so Python, with etcd's JSON gateway from the
standard library, costs nothing there. etcd unreachable: what is
configured stays and keeps aggregating; the agent tries again every
second or so and, back, resyncs. Exit status: 0 on SIGTERM/SIGINT, 1 the
module or the CLI unusable at start, 2 a bad command line.
"""

from __future__ import annotations

import argparse
import hashlib
import ipaddress
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Optional, Sequence

from . import cluster
from .cluster import key
from .etcd import Etcd, StoreError
from .topology import TopologyError

__all__ = ["Agent", "canonical_lines", "canonical_shown", "main"]

STATS_EVERY = 5.0   # s between counter write-backs (and resyncs against drift)


def _addr(a: str) -> str:
    return str(ipaddress.ip_address(a))


def _child(c: str) -> str:
    """A child as the CLI takes it, normalised: ADDR, ADDR:PORT, [ADDR6]:PORT."""
    if c.startswith("["):
        a, port = c[1:].split("]:")
        return f"[{_addr(a)}]:{int(port)}"
    if c.count(":") == 1:
        a, port = c.split(":")
        return f"{_addr(a)}:{int(port)}"
    return _addr(c)


def canonical_lines(lines: list[str]) -> dict[str, Any]:
    """A job's batch lines (job add, tree add) as what they configure."""
    job: dict[str, Any] = {"trees": {}, "keyed": False}
    for line in lines:
        w = line.split()
        if w[:2] == ["job", "add"]:
            opts = dict(zip(w[3::2], w[4::2]))
            job.update(dtype=opts.get("dtype", "f32"), op=opts.get("op", "sum"),
                       window=int(opts.get("window", 64)),
                       memcap=int(opts["memcap"]) if "memcap" in opts else None)
        elif w[:2] == ["tree", "add"]:
            tid, role, parent, children = None, None, None, []
            for k, v in zip(w[2::2], w[3::2]):
                if k == "tree":
                    tid = int(v)
                elif k == "role":
                    role = v
                elif k == "parent":
                    parent = _addr(v)
                elif k == "child":
                    children.append(_child(v))
            job["trees"][tid] = {"role": role, "parent": parent, "children": children}
    return job


def canonical_shown(shown: dict[str, Any], memcap: Optional[int]) -> dict[str, Any]:
    """A job of ``netagg -j job show`` in canonical_lines' form (memcap
    compared only when the desired lines set it)."""
    trees = {}
    for t in shown["trees"]:
        kids = []
        for c in t["children"]:
            a = _addr(c["addr"])
            if c.get("port") is None:
                kids.append(a)
            else:
                kids.append(f"[{a}]:{c['port']}" if ":" in a else f"{a}:{c['port']}")
        trees[t["tid"]] = {"role": t["role"],
                           "parent": _addr(t["parent"]) if t.get("parent") else None,
                           "children": kids}
    return {"trees": trees, "dtype": shown["dtype"], "op": shown["op"],
            "window": shown["window"], "memcap": shown["mem_cap"] if memcap else None,
            "keyed": bool(shown.get("keyed"))}


def _digest(job_key: bytes) -> bytes:
    return hashlib.sha256(job_key).digest()


class AgentError(Exception):
    """The module or the CLI, unusable."""


class Agent:
    """One node's agent; run() until stop is set."""

    def __init__(self, store: Etcd, node: str, netagg: list[str],
                 ttl: int = cluster.AGENT_TTL, log=None) -> None:
        self.store, self.node, self.netagg, self.ttl = store, node, netagg, ttl
        self.stop = threading.Event()
        self.lease = 0
        # A digest of each key given to the module, by job id: the key
        # itself is not kept, and the module never says it.
        self.given_keys: dict[int, bytes] = {}
        self.log = log or (lambda msg: print(f"netagg-agent {node}: {msg}",
                                             file=sys.stderr, flush=True))

    # -- the module, through the CLI --------------------------------------

    def cli(self, *args: str, stdin: Optional[str] = None) -> str:
        try:
            p = subprocess.run(self.netagg + list(args), input=stdin, capture_output=True,
                               text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise AgentError(f"{' '.join(self.netagg)}: {e}") from None
        if p.returncode:
            raise AgentError((p.stderr or p.stdout).strip() or f"exit {p.returncode}")
        return p.stdout

    def shown(self) -> dict[int, dict[str, Any]]:
        return {j["jid"]: j for j in json.loads(self.cli("-j", "job", "show"))["jobs"]}

    def limits(self) -> dict[str, Any]:
        ns = json.loads(self.cli("-j", "show"))["namespace"]
        return {"max_jobs": ns["max_jobs"], "mem_limit": ns["mem_limit"],
                "version": ns["module_version"]}

    # -- one pass ---------------------------------------------------------

    def sync_marks(self) -> Optional[dict[str, Any]]:
        """The namespace's DSCP and port made the topology's (its packets
        line; 56 and 7177 without one): what they are, or why not; None
        while the store has no topology (what is set stays)."""
        kv = self.store.get(key("topology"))
        if kv is None:
            return None
        try:
            topo = cluster.topology_of(kv.value)
        except TopologyError as e:
            self.log(f"topology: {e}: the packets' marks stay as they are")
            return {"ok": False, "error": str(e)}
        want = {"dscp": topo.dscp, "port": topo.port}
        ns = json.loads(self.cli("-j", "show"))["namespace"]
        if {k: ns.get(k) for k in want} != want:
            self.cli("set", "dscp", str(topo.dscp), "port", str(topo.port))
            self.log(f"packets: dscp {topo.dscp} port {topo.port}")
        return dict(want, ok=True)

    def resync(self) -> int:
        """Make the module's jobs the desired ones, and its packets' marks
        the topology's; the store's revision read, and applied/NODE
        written."""
        marks = self.sync_marks()
        kvs, rev = self.store.get_prefix(key("config", self.node) + "/")
        desired: dict[int, tuple[list[str], bool]] = {}
        for kv in kvs:
            try:
                cfg = kv.json()
                desired[int(kv.key.rsplit("/", 1)[1])] = cfg["lines"], bool(cfg.get("keyed"))
            except (ValueError, KeyError):
                self.log(f"{kv.key}: not a job's configuration, ignored")
        keys = self.job_keys()
        have = self.shown()
        result: dict[str, Any] = {}
        for jid in sorted(set(have) - set(desired)):
            self.cli("job", "del", str(jid))
            self.given_keys.pop(jid, None)
            self.log(f"job {jid}: deleted (not desired)")
        for jid, (lines, keyed) in sorted(desired.items()):
            want = dict(canonical_lines(lines), keyed=keyed)
            rekeyed = jid in have and self.rekeyed(jid, keys.get(jid) if keyed else None)
            if jid in have and not rekeyed and \
                    canonical_shown(have[jid], want["memcap"]) == want:
                result[str(jid)] = {"ok": True}
                continue
            if jid in have:
                self.cli("job", "del", str(jid))
                self.given_keys.pop(jid, None)
                if rekeyed:
                    self.log(f"job {jid}: its key is another now (the id placed again)")
            if keyed and jid not in keys:
                # Read after its configuration: the job went in between.
                result[str(jid)] = {"ok": False, "error": "keyed, and no key/"
                                    f"{self.node}/{jid} to read"}
                self.log(f"job {jid}: not applied: its key is not there")
                continue
            try:
                self.apply(lines, keys.get(jid) if keyed else None)
                if keyed:
                    self.given_keys[jid] = _digest(keys[jid])
                result[str(jid)] = {"ok": True}
                self.log(f"job {jid}: {'replaced' if jid in have else 'added'}")
            except AgentError as e:
                # Half a job would only time its workers out: none at all.
                try:
                    self.cli("job", "del", str(jid))
                except AgentError:
                    pass
                result[str(jid)] = {"ok": False, "error": str(e)}
                self.log(f"job {jid}: not applied: {e}")
        self.write_applied(rev, result, marks)
        return rev

    def rekeyed(self, jid: int, job_key: Optional[bytes]) -> bool:
        """Whether the key of job jid, in the module, is another than the
        store's (None: unkeyed, or none there) as far as this agent knows:
        one it did not give (it was restarted) is taken to be the store's,
        the module cannot say."""
        given = self.given_keys.get(jid)
        if job_key is None:
            return False
        if given is None:
            self.given_keys[jid] = _digest(job_key)
            return False
        return given != _digest(job_key)

    def job_keys(self) -> dict[int, bytes]:
        """The keys of this node's jobs (key/NODE/JID)."""
        kvs, _ = self.store.get_prefix(key("key", self.node) + "/")
        out = {}
        for kv in kvs:
            try:
                out[int(kv.key.rsplit("/", 1)[1])] = bytes.fromhex(kv.json()["key"])
            except (ValueError, KeyError, TypeError):
                self.log(f"{kv.key}: not a job's key, ignored")
        return out

    def apply(self, lines: list[str], job_key: Optional[bytes]) -> None:
        """A job's batch lines, through the CLI; a keyed job's key given by
        a file in a directory of the agent's own (mode 0700), zeroed and
        removed once the CLI has read it."""
        if job_key is None:
            self.cli("-b", "-", stdin="\n".join(lines) + "\n")
            return
        with tempfile.TemporaryDirectory(prefix="netagg-agent-") as d:
            path = os.path.join(d, "key")
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                os.write(fd, job_key)
                keyed = [f"{line} key {path}" if line.split()[:2] == ["job", "add"] else line
                         for line in lines]
                self.cli("-b", "-", stdin="\n".join(keyed) + "\n")
            finally:
                os.pwrite(fd, bytes(len(job_key)), 0)
                os.close(fd)

    def write_applied(self, rev: int, result: dict[str, Any],
                      marks: Optional[dict[str, Any]] = None) -> None:
        counters: dict[str, Any] = {}
        try:
            for j in json.loads(self.cli("-j", "stats"))["jobs"]:
                c = {"rx": j["stats"]["rx"], "aggregated": 0, "dropped": 0}
                for t in j["trees"]:
                    c["aggregated"] += t["stats"]["aggregated"]
                    c["dropped"] += sum(v for k, v in t["stats"].items()
                                        if k.startswith("drop_"))
                counters[str(j["jid"])] = c
        except (AgentError, ValueError, KeyError) as e:
            self.log(f"counters: {e}")
        self.store.put(key("applied", self.node),
                       json.dumps({"revision": rev, "jobs": result, "counters": counters,
                                   "packets": marks, "at": time.time()}), self.lease)

    # -- the session: registered, watching --------------------------------

    def register(self) -> None:
        self.lease = self.store.grant(self.ttl)
        info = dict(self.limits(), pid=os.getpid(), since=time.time())
        self.store.put(key("node", self.node), json.dumps(info), self.lease)

    def session(self) -> None:
        self.register()
        rev = self.resync()
        self.log(f"registered; configuration at revision {rev}")
        events: queue.Queue[Any] = queue.Queue()
        watch = self.store.watch(key("config", self.node) + "/", rev + 1)

        def pump() -> None:
            try:
                for ev in watch.events():
                    events.put(ev)
            except StoreError as e:
                events.put(e)
        threading.Thread(target=pump, daemon=True).start()
        try:
            beat = next_stats = time.monotonic()
            while not self.stop.is_set():
                try:
                    ev = events.get(timeout=0.2)
                except queue.Empty:
                    ev = None
                if isinstance(ev, StoreError):
                    raise ev
                now = time.monotonic()
                if ev is not None or now >= next_stats:
                    while not events.empty():      # one pass for a burst
                        if isinstance(events.get(), StoreError):
                            raise StoreError("watch ended", unreachable=True)
                    self.resync()
                    next_stats = now + STATS_EVERY
                if now - beat >= self.ttl / 3:
                    if not self.store.keepalive(self.lease):
                        raise StoreError("the agent's lease expired", unreachable=True)
                    beat = now
        finally:
            watch.close()

    def run(self) -> None:
        self.limits()   # the module and the CLI usable, or AgentError now
        while not self.stop.is_set():
            try:
                self.session()
            except StoreError as e:
                self.log(f"{e}: the configuration stays; again in 1 s")
                self.stop.wait(1.0)
            except AgentError as e:
                self.log(f"{e}: again in 1 s")
                self.stop.wait(1.0)
        if self.lease:
            try:
                self.store.revoke(self.lease)
            except StoreError:
                pass


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="netagg-agent",
                                 description="Configure this node's netagg from etcd.")
    Etcd.add_arguments(ap)
    ap.add_argument("--node", default=cluster.this_node(os.environ),
                    help="this node's name in the topology (default $NETAGG_NODE, "
                    "else the short host name)")
    ap.add_argument("--netns", help="configure network namespace NETNS, not this one")
    ap.add_argument("--netagg", default=os.environ.get("NETAGG", "netagg"),
                    help="the netagg CLI (default $NETAGG or netagg on the PATH)")
    ap.add_argument("--ttl", type=int, default=cluster.AGENT_TTL,
                    help="the node's lease, s (default %(default)s)")
    args = ap.parse_args(argv)
    if not args.etcd:
        ap.error("no store: --etcd URL or NETAGG_ETCD")
    if "/" in args.node or not args.node:
        ap.error(f"--node {args.node!r}: a topology node's name")
    netagg = [args.netagg] + (["-n", args.netns] if args.netns else [])
    try:
        store = Etcd.connect(args.etcd, args.user, args.password_file)
    except ValueError as e:
        print(f"netagg-agent: {e}", file=sys.stderr)
        return 2
    except (OSError, StoreError) as e:
        print(f"netagg-agent: {e}", file=sys.stderr)
        return 1
    agent = Agent(store, args.node, netagg, args.ttl)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: agent.stop.set())
    try:
        agent.run()
    except AgentError as e:
        print(f"netagg-agent: {args.node}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

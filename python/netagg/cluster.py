# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""The cluster's state in etcd: jobs placed, configured and released.

etcd holds everything; the agents (netagg.agent), netagg-ctl
(netagg.ctl) and the backend are stateless over it. The keys, all under
``/netagg/v1/`` (v1: this layout; another layout gets another prefix),
values JSON but the topology::

    topology           the topology, the planner's file format (its job
                       lines ignored): netagg-ctl topology load FILE; its
                       packets line (DSCP, port) the agents set on their
                       nodes and every job's record carries
    placement          the last job placed (its JID): every placement
                       changes it in the transaction that places, so two
                       placements read, plan and write one after the other
    node/NODE          an agent's node, alive: its limits (max_jobs,
                       mem_limit, from its module), under the agent's lease
    drain/NODE         present: no new tree on NODE (netagg-ctl node drain)
    job/JID            a job: tenant, workers, settings, its trees, the
                       links they use, each host's NETAGG_TREES, the
                       packets' marks where not the defaults; under the
                       job's lease, which its rank 0 (or netagg-ctl job
                       start) keeps alive
    config/NODE/JID    what NODE configures for job JID: the netagg batch
                       lines (job add, tree add), keyed; under the job's
                       lease
    key/NODE/JID       job JID's key (fresh, its placer's), which NODE
                       gives its module; under the job's lease, readable by
                       NODE's agent alone (roles()) once auth is on
    applied/NODE       what NODE's agent has applied (each job's lines and
                       the result) and its counters, under the agent's lease
    quota/TENANT       a tenant's limits: jobs and workers at once

A job that ends or dies takes its keys with its lease: the agents, which
watch config/NODE/, remove its trees within the lease's TTL, and its id
and links are free for the next placement. Placing (:func:`place`) reads
every key at one revision, plans the job's trees with netagg.rat against
the trees of the jobs alive (which never move), on aggregators that are
alive, not drained and have room (jobs, memory), and writes the job, its
configuration keys and the placement key in one transaction that holds
only if the placement key is unchanged: a placement that raced another is
planned again (etcd's STM recipe, by hand).
"""

from __future__ import annotations

import json
import os
import pwd
import random
import secrets
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from .etcd import Etcd, StoreError, prefix_end
from .rat import PORT_BASE, Planner, Tree, batches, marks_env, shared_links
from .topology import DTYPES, JID_MAX, OPS, TREES_MAX, WINDOW_MAX, Job, Topology, TopologyError

__all__ = ["PREFIX", "JOB_TTL", "AGENT_TTL", "MEMCAP_DEFAULT", "TREES_DEFAULT", "JobRequest",
           "RequestError", "PlacementError", "State", "key", "read_state", "place", "wait_applied",
           "start_job", "KeptLease", "this_node", "group_request", "group_worker", "worker_env",
           "load_topology", "topology_of", "jobs_sharing", "roles", "auth_setup", "human"]

PREFIX = "/netagg/v1/"
JOB_TTL = 10            # s: a dead job's trees are gone from every node within it
KEY_LEN = 32            # NETAGG_KEY_LEN: a job's key, fresh for each
AGENT_TTL = 10          # s: a dead agent's node takes no new tree after it
MEMCAP_DEFAULT = 64 << 20   # a job's memory on a node unless it asks: the module's default
# Trees a job gets unless it asks: make demo's, the fastest or as fast in
# every cell of docs/performance.md (f) and the fairest in (k). A node
# holds a job once however many of its trees it carries: more trees cost
# no room more than the nodes they add.
TREES_DEFAULT = 4


def key(*parts: Any) -> str:
    return PREFIX + "/".join(str(p) for p in parts)


class RequestError(ValueError):
    """A job that can never be placed as asked: unknown hosts, bad
    settings, more workers than its tenant's quota, no topology."""


class PlacementError(Exception):
    """A job that cannot be placed now (the aggregators it needs are full,
    drained or without an agent; its tenant's jobs at their quota): it may
    wait for a job to end."""


@dataclass
class JobRequest:
    """What a job asks for: its workers' hosts (topology nodes, in rank
    order) and its trees' settings."""
    tenant: str
    workers: list[str]
    trees: int = TREES_DEFAULT
    dtype: str = "f32"
    op: str = "sum"
    window: int = 64
    memcap: int = MEMCAP_DEFAULT

    def check(self) -> None:
        if not self.tenant or "/" in self.tenant:
            raise RequestError(f"tenant {self.tenant!r}: a name without '/'")
        if not self.workers:
            raise RequestError("a job needs workers")
        if not 1 <= self.trees <= TREES_MAX:
            raise RequestError(f"trees {self.trees}: 1 to {TREES_MAX}")
        if self.dtype not in DTYPES:
            raise RequestError(f"dtype {self.dtype!r}: one of {', '.join(DTYPES)}")
        if self.op not in OPS:
            raise RequestError(f"op {self.op!r}: one of {', '.join(OPS)}")
        if not 1 <= self.window <= WINDOW_MAX:
            raise RequestError(f"window {self.window}: 1 to {WINDOW_MAX}")
        if self.memcap < 1 << 20:
            raise RequestError(f"memcap {self.memcap}: at least 1M")


@dataclass
class State:
    """Every key under PREFIX, read at one revision."""
    revision: int
    topology: Optional[Topology]
    placement_rev: int                          # the placement key's mod revision, 0: none
    nodes: dict[str, dict[str, Any]]            # alive: the agent's registration
    drained: set[str]
    jobs: dict[int, dict[str, Any]]
    config: dict[str, dict[int, dict[str, Any]]]    # node -> jid -> its lines
    applied: dict[str, dict[str, Any]]
    quotas: dict[str, dict[str, int]]
    topology_error: str = ""

    def node_use(self, node: str) -> tuple[int, int]:
        """Jobs configured on node and the memory they may take."""
        jobs = self.config.get(node, {})
        return len(jobs), sum(self.jobs.get(j, {}).get("memcap", MEMCAP_DEFAULT)
                              for j in jobs)

    def tenant_use(self, tenant: str) -> tuple[int, int]:
        """A tenant's jobs and their workers."""
        mine = [j for j in self.jobs.values() if j.get("tenant") == tenant]
        return len(mine), sum(j.get("nworkers", 0) for j in mine)


_topologies: dict[bytes, Topology] = {}


def topology_of(text: bytes) -> Topology:
    """The topology of the store's text, parsed once a process."""
    if text not in _topologies:
        _topologies.clear()
        _topologies[text] = Topology.parse([("topology", text.decode())])
    return _topologies[text]


def read_state(store: Etcd) -> State:
    """Every key but the jobs' keys (key/, which no reader of the whole
    may read: roles()), at one revision."""
    keys = key("key", "")
    kvs, rev = store.get_range(PREFIX, keys)
    kvs += store.get_range(prefix_end(keys), prefix_end(PREFIX), rev)[0]
    st = State(rev, None, 0, {}, set(), {}, {}, {}, {})
    for kv in kvs:
        parts = kv.key[len(PREFIX):].split("/")
        try:
            if parts == ["topology"]:
                try:
                    st.topology = topology_of(kv.value)
                except TopologyError as e:
                    st.topology_error = str(e)
            elif parts == ["placement"]:
                st.placement_rev = kv.mod_revision
            elif parts[0] == "node" and len(parts) == 2:
                st.nodes[parts[1]] = kv.json()
            elif parts[0] == "drain" and len(parts) == 2:
                st.drained.add(parts[1])
            elif parts[0] == "job" and len(parts) == 2:
                st.jobs[int(parts[1])] = kv.json()
            elif parts[0] == "config" and len(parts) == 3:
                st.config.setdefault(parts[1], {})[int(parts[2])] = kv.json()
            elif parts[0] == "applied" and len(parts) == 2:
                st.applied[parts[1]] = kv.json()
            elif parts[0] == "quota" and len(parts) == 2:
                st.quotas[parts[1]] = kv.json()
        except (ValueError, UnicodeDecodeError):
            pass    # not netagg's: another writer's key, left alone
    return st


def load_topology(store: Etcd, text: str, name: str) -> Topology:
    """Check the topology and store it; its job lines are not jobs here."""
    topo = Topology.parse([(name, text)])
    store.put(key("topology"), text)
    return topo


def _tree_json(tree: Tree) -> dict[str, Any]:
    return {"tid": tree.tid, "root": tree.root, "parent": tree.parent,
            "children": tree.children}


def _tree(jid: int, d: dict[str, Any]) -> Tree:
    return Tree(jid, d["tid"], d["root"], dict(d["parent"]),
                {k: list(v) for k, v in d["children"].items()})


def human(n: int) -> str:
    """n bytes as netagg's sizes are written: 64M, 1G, 1536K."""
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def _free_jid(st: State) -> int:
    jid = 1
    while jid in st.jobs:
        jid += 1
    if jid > JID_MAX:
        raise PlacementError("every job id is taken")
    return jid


def _job(st: State, req: JobRequest, jid: int) -> Job:
    """The planner's job for req, as id jid; RequestError if the topology
    cannot have it (a host it lacks)."""
    assert st.topology is not None
    job = Job(jid, list(req.workers), req.trees, req.dtype, req.op, req.window,
              f"tenant {req.tenant}", req.memcap)
    try:
        st.topology.check_job(job)
    except TopologyError as e:
        raise RequestError(str(e)) from None
    return job


def _plan(st: State, job: Job) -> tuple[list[Tree], Planner]:
    topo = st.topology
    assert topo is not None
    jid = job.jid

    def unusable(node: str) -> str:
        if any(tr.jid == jid and node in tr.children for tr in planner.trees):
            return ""       # this job's already: counted once
        info = st.nodes.get(node)
        if info is None:
            return "no agent"
        if node in st.drained:
            return "drained"
        jobs, mem = st.node_use(node)
        if jobs + 1 > info.get("max_jobs", 0):
            return f"{jobs} jobs, its limit {info.get('max_jobs', 0)}"
        if mem + job.memcap > info.get("mem_limit", 0):
            return (f"{human(mem)} of its {human(info.get('mem_limit', 0))} taken, "
                    f"the job asks {human(job.memcap)}")
        return ""

    planner = Planner(topo, unusable)
    planner.keep((_tree(j, t) for j, rec in sorted(st.jobs.items()) for t in rec["trees"]),
                 {j: {(a, b) for a, b in rec["links"]} for j, rec in st.jobs.items()})
    try:
        trees = planner.place(job)
    except TopologyError as e:
        raise PlacementError(str(e)) from None
    return trees, planner


def _record(st: State, req: JobRequest, job: Job, trees: list[Tree],
            planner: Planner) -> dict[str, Any]:
    topo = st.topology
    assert topo is not None
    nworkers = sum(topo.nodes[w].procs for w in req.workers)
    hosts = {}
    for w in req.workers:
        hosts[w] = ",".join(f"{tr.tid}={topo.addr_facing(tr.parent[w], w)}" for tr in trees)
    links = sorted(planner.job_links[job.jid])
    shared = sorted({j for j, ls in planner.job_links.items() if j != job.jid and ls & set(links)})
    return {"jid": job.jid, "tenant": req.tenant, "workers": req.workers,
            "nworkers": nworkers, "procs": {w: topo.nodes[w].procs for w in req.workers},
            "trees": [_tree_json(t) for t in trees],
            "dtype": req.dtype, "op": req.op, "window": req.window, "memcap": req.memcap,
            "hosts": hosts, "links": [list(link) for link in links],
            "shares_links_with": shared, "marks": topo.marks(), "placed_at": time.time()}


def place(store: Etcd, req: JobRequest, lease: int,
          tries: int = 50) -> tuple[dict[str, Any], bytes]:
    """Place one job under lease, in one transaction: its record (job/JID)
    with jid, trees and each host's NETAGG_TREES, and its nodes' keys; the
    record and the job's key, fresh, which its workers need (the record
    does not hold it). RequestError: it never can be; PlacementError: not
    now."""
    req.check()
    for _ in range(tries):
        st = read_state(store)
        if st.topology is None:
            raise RequestError(st.topology_error or "no topology in the store "
                               "(netagg-ctl topology load FILE)")
        jid = _free_jid(st)
        job = _job(st, req, jid)
        quota = st.quotas.get(req.tenant)
        nworkers = sum(st.topology.nodes[w].procs for w in req.workers)
        if quota is not None:
            if nworkers > quota.get("workers", nworkers):
                raise RequestError(f"tenant {req.tenant}: a job of {nworkers} workers, "
                                   f"its quota is {quota['workers']} workers")
            jobs, workers = st.tenant_use(req.tenant)
            if jobs + 1 > quota.get("jobs", jobs + 1):
                raise PlacementError(f"tenant {req.tenant}: {jobs} jobs running, "
                                     f"its quota is {quota['jobs']}")
            if workers + nworkers > quota.get("workers", workers + nworkers):
                raise PlacementError(f"tenant {req.tenant}: {workers} workers in its jobs, "
                                     f"{nworkers} more would pass its quota of "
                                     f"{quota['workers']}")
        trees, planner = _plan(st, job)
        rec = _record(st, req, job, trees, planner)
        config = batches(st.topology, trees, [job], marks=False)
        rec["nodes"] = sorted(config)
        rec["keyed"] = True
        job_key = secrets.token_bytes(KEY_LEN)
        ops = [Etcd.put_op(key("placement"), str(jid)),
               Etcd.put_op(key("job", jid), json.dumps(rec), lease)]
        for node, lines in config.items():
            ops.append(Etcd.put_op(key("config", node, jid),
                                   json.dumps({"jid": jid, "lines": lines, "keyed": True}),
                                   lease))
            ops.append(Etcd.put_op(key("key", node, jid),
                                   json.dumps({"jid": jid, "key": job_key.hex()}), lease))
        if store.txn([Etcd.mod_is(key("placement"), st.placement_rev)], ops):
            return rec, job_key
        # Another placement won: plan again, the lease kept meanwhile.
        store.keepalive(lease)
        time.sleep(random.uniform(0.01, 0.05))
    raise PlacementError(f"placement raced others {tries} times")


def wait_applied(store: Etcd, rec: dict[str, Any], lease: int, timeout: float) -> None:
    """Wait until every node of the job has it configured, as its agent
    says (applied/NODE) of a pass that read the store once the job was
    placed: an earlier pass's word for the same id may be a job that
    ended, on another key. PlacementError if one could not or did not in
    timeout seconds. The job's workers may send once this returns."""
    deadline = time.monotonic() + timeout
    beat = time.monotonic()
    applied_prefix = key("applied", "")
    placed = store.get(key("job", rec["jid"]))
    if placed is None:
        raise PlacementError(f"job {rec['jid']}: its record went before its nodes "
                             "configured it (its lease expired?)")
    while True:
        kvs, _ = store.get_prefix(applied_prefix)
        passes = {kv.key[len(applied_prefix):]: kv.json() for kv in kvs}
        applied = {node: a for node, a in passes.items()
                   if a.get("revision", 0) >= placed.mod_revision}
        missing = []
        for node in rec["nodes"]:
            got = applied.get(node, {}).get("jobs", {}).get(str(rec["jid"]))
            if got is not None and not got["ok"]:
                raise PlacementError(f"job {rec['jid']}: {node} could not configure it: "
                                     f"{got.get('error')}")
            if got is None:
                missing.append(node)
        if not missing:
            return
        if time.monotonic() >= deadline:
            raise PlacementError(f"job {rec['jid']}: {', '.join(missing)} did not configure "
                                 f"it within {timeout:g} s (is their agent running?)")
        if time.monotonic() - beat > 1:
            store.keepalive(lease)
            beat = time.monotonic()
        time.sleep(0.1)


def start_job(store: Etcd, req: JobRequest, wait: float = 0.0, ttl: int = JOB_TTL,
              apply_timeout: float = 30.0) -> tuple[dict[str, Any], int, bytes]:
    """A lease and the job placed under it, waiting up to wait seconds for
    room, then until its nodes have it configured (wait_applied); the
    record, the lease, which the caller keeps alive (Etcd.keepalive every
    ttl/3 s) and revokes at the job's end, and the job's key, for its
    workers."""
    lease = store.grant(ttl)
    deadline = time.monotonic() + wait
    try:
        while True:
            try:
                rec, job_key = place(store, req, lease)
                break
            except PlacementError as e:
                if time.monotonic() >= deadline:
                    if wait > 0:
                        raise PlacementError(f"{e} (waited {wait:g} s)") from None
                    raise
            store.keepalive(lease)
            time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
        wait_applied(store, rec, lease, apply_timeout)
        return rec, lease, job_key
    except BaseException:
        try:
            store.revoke(lease)
        except StoreError:
            pass
        raise


class KeptLease:
    """A job's lease, kept alive by a thread of its own (every ttl/3 s)
    until release(). expired: etcd said it had ended (the job's keys are
    gone); a renewal that fails is tried again the next beat."""

    def __init__(self, store: Etcd, lease: int, ttl: int) -> None:
        self.store, self.lease, self.ttl = store, lease, ttl
        self.expired = False
        self._done = threading.Event()
        threading.Thread(target=self._keep, daemon=True, name="netagg-lease").start()

    def _keep(self) -> None:
        while not self._done.wait(self.ttl / 3):
            try:
                if not self.store.keepalive(self.lease):
                    self.expired = True
                    return
            except StoreError:
                pass

    def release(self) -> None:
        """Stop renewing it and revoke it: the job's keys go now (StoreError
        if etcd cannot be reached: they go within the TTL). Idempotent."""
        if self._done.is_set():
            return
        self._done.set()
        self.store.revoke(self.lease)


def this_node(env: Mapping[str, str]) -> str:
    """This host's node in the topology: NETAGG_NODE, else the short host
    name (the agent's and the backend's)."""
    return env.get("NETAGG_NODE") or socket.gethostname().split(".")[0]


def group_request(hosts: list[str], env: Mapping[str, str]) -> JobRequest:
    """The job a torch.distributed group asks for: hosts, each rank's (in
    rank order), and its settings from env: NETAGG_TENANT (default: the
    user's login name), NETAGG_NTREES, NETAGG_DTYPE (a Worker's name:
    float32, ...), NETAGG_OP, NETAGG_WINDOW, NETAGG_MEMCAP (bytes)."""
    names = {v: k for k, v in DTYPES.items()}

    def num(var: str, default: int) -> int:
        try:
            return int(env.get(var, default))
        except ValueError:
            raise RequestError(f"{var}={env[var]!r} is not a number") from None

    dtype = env.get("NETAGG_DTYPE", "float32")
    if dtype not in names:
        raise RequestError(f"NETAGG_DTYPE={dtype!r}: one of {', '.join(names)}")
    tenant = env.get("NETAGG_TENANT") or pwd.getpwuid(os.getuid()).pw_name
    req = JobRequest(tenant, list(dict.fromkeys(hosts)), num("NETAGG_NTREES", TREES_DEFAULT),
                     names[dtype], env.get("NETAGG_OP", "sum"), num("NETAGG_WINDOW", 64),
                     num("NETAGG_MEMCAP", MEMCAP_DEFAULT))
    req.check()
    return req


def group_worker(rec: dict[str, Any], hosts: list[str], rank: int,
                 job_key: Optional[bytes] = None) -> dict[str, Any]:
    """netagg.Worker's arguments for rank of a group whose ranks run on
    hosts (rank order) in job rec: the job's settings and key, this host's
    trees, and, on a host of several ranks, a port each (PORT_BASE up, in
    rank order, as the aggregators have them)."""
    host = hosts[rank]
    if len(hosts) != rec["nworkers"]:
        per = ", ".join(f"{h} {n}" for h, n in rec["procs"].items())
        raise RequestError(f"job {rec['jid']}: the topology gives its hosts {rec['nworkers']} "
                           f"workers ({per}), the group has {len(hosts)} ranks")
    for h in rec["procs"]:
        if hosts.count(h) != rec["procs"][h]:
            raise RequestError(f"job {rec['jid']}: {h} has {hosts.count(h)} of the group's "
                               f"ranks, {rec['procs'][h]} workers in the topology")
    kw: dict[str, Any] = {"job": rec["jid"], "workers": rec["nworkers"],
                          "trees": rec["hosts"][host], "dtype": DTYPES[rec["dtype"]],
                          "window": rec["window"], "rank": rank}
    if rec["procs"][host] > 1:
        kw["port"] = PORT_BASE + [r for r, h in enumerate(hosts) if h == host].index(rank)
    marks = rec.get("marks", {})
    if "dscp" in marks:
        kw["dscp"] = marks["dscp"]
    if "port" in marks:
        kw["node_port"] = marks["port"]
    if rec.get("keyed"):
        if job_key is None:
            raise RequestError(f"job {rec['jid']} is keyed: its workers need its key")
        kw["key"] = job_key
    return kw


def roles(topo: Topology) -> dict[str, list[tuple[str, str, str]]]:
    """etcd's roles for netagg, each a list of (key, range end or "",
    "read", "write" or "readwrite"). Every role reads everything under
    PREFIX but the jobs' keys (key/); netagg-admin writes it all;
    netagg-jobs writes what placing and releasing a job writes (placement,
    job/, config/, and key/ without reading it); netagg-agent-NODE writes
    NODE's own node/ and applied/ keys, and reads NODE's jobs' keys
    (key/NODE/), nothing else."""
    keys = key("key", "")
    readable = [(PREFIX, keys, "read"), (prefix_end(keys), prefix_end(PREFIX), "read")]
    out = {"netagg-admin": [(PREFIX, keys, "readwrite"),
                            (prefix_end(keys), prefix_end(PREFIX), "readwrite")],
           "netagg-jobs": readable + [(key("placement"), "", "readwrite"),
                                      (key("job", ""), prefix_end(key("job", "")), "readwrite"),
                                      (key("config", ""), prefix_end(key("config", "")),
                                       "readwrite"),
                                      (keys, prefix_end(keys), "write")]}
    for n in sorted(n for n, node in topo.nodes.items() if node.kind == "aggregator"):
        out[f"netagg-agent-{n}"] = readable + [
            (key("node", n), "", "readwrite"), (key("applied", n), "", "readwrite"),
            (key("key", n, ""), prefix_end(key("key", n, "")), "read")]
    return out


def auth_setup(store: Etcd, topo: Topology, secrets_dir: str) -> list[str]:
    """Turn etcd's auth on for netagg (etcd must have it off): roles()'s
    roles; users root, admin (netagg-admin), jobs (netagg-jobs) and
    agent-NODE for each aggregator (netagg-agent-NODE), each with a fresh
    password in secrets_dir/USER (mode 0600, secrets_dir made 0700). The
    users, in the order made."""
    os.makedirs(secrets_dir, mode=0o700, exist_ok=True)
    users = {"root": "root", "admin": "netagg-admin", "jobs": "netagg-jobs"}
    users |= {f"agent-{r[len('netagg-agent-'):]}": r for r in roles(topo)
              if r.startswith("netagg-agent-")}
    for role, grants in roles(topo).items():
        store.role_add(role, grants)
    for user, role in users.items():
        password = secrets.token_urlsafe(24)
        fd = os.open(os.path.join(secrets_dir, user), os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
                     0o600)
        with os.fdopen(fd, "w") as f:
            f.write(password + "\n")
        store.user_add(user, password, role)
    store.auth_enable()
    return list(users)


def worker_env(rec: dict[str, Any], host: str) -> dict[str, str]:
    """The NETAGG_* environment of the job's workers on host (ranks are the
    launcher's; a host of several workers takes ports from PORT_BASE)."""
    if host not in rec["hosts"]:
        raise RequestError(f"job {rec['jid']}: {host} is not one of its hosts "
                           f"({', '.join(rec['workers'])})")
    env = {"NETAGG_JOB": str(rec["jid"]), "NETAGG_WORKERS": str(rec["nworkers"]),
           "NETAGG_TREES": rec["hosts"][host], "NETAGG_DTYPE": DTYPES[rec["dtype"]],
           "NETAGG_WINDOW": str(rec["window"])}
    if rec["procs"][host] > 1:
        env["NETAGG_PORT"] = str(PORT_BASE)
    env.update(marks_env(rec.get("marks", {})))
    return env


def jobs_sharing(st: State) -> dict[tuple[str, str], list[int]]:
    """Links carrying several jobs' streams, with the jobs."""
    return shared_links({jid: [(a, b) for a, b in rec.get("links", [])]
                         for jid, rec in st.jobs.items()})

# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""netagg-ctl: the cluster's jobs, nodes and tenants, in etcd.

::

    netagg-ctl [-j] [--etcd URL] [--user U --password-file F] OBJECT COMMAND
      topology load FILE          the topology (the planner's format)
      topology show
      node list                   aggregators: alive, drained, jobs, memory
      node drain NODE             no new tree on NODE
      node undrain NODE
      job start --tenant T [--trees N] [--dtype D] [--op O] [--window N]
                [--memcap SIZE] [--wait S] [--ttl S] [--key-file F]
                HOST... [-- COMMAND...]
                                  place a job, print it, keep it alive while
                                  COMMAND runs (or until SIGTERM/SIGINT),
                                  then release it; its key in F (mode
                                  0600; default: a file of its own, gone
                                  with the job), NETAGG_KEY_FILE for
                                  COMMAND
      job list
      job show JID
      job env JID HOST            its workers' NETAGG_* on HOST, as shell
      job stop JID                release it now (its lease revoked)
      links                       links that several jobs use
      quota set TENANT [--jobs N] [--workers N]
      quota list
      auth setup DIR              etcd's auth on, netagg's roles and users
                                  (root, admin, jobs, agent-NODE), each
                                  one's password in DIR/USER

--etcd defaults to $NETAGG_ETCD. -j prints JSON. Exit status, as every
netagg program's: 0 done, 1 the store or the cluster refused or failed
(the message says why), 2 a bad command line. job start exits with
COMMAND's status when it ran one.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from typing import Any, Optional, Sequence

from . import cluster
from .cluster import JobRequest, PlacementError, RequestError, key
from .etcd import Etcd, StoreError

__all__ = ["main"]


def _size(s: str) -> int:
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    n = s[:-1] if s[-1:].upper() in mult else s
    if not n.isdigit():
        raise argparse.ArgumentTypeError(f"{s!r}: bytes, with an optional K, M or G")
    return int(n) * mult.get(s[-1:].upper(), 1)


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="netagg-ctl",
                                 description="The cluster's netagg jobs, nodes and tenants.")
    ap.add_argument("-j", "--json", action="store_true", help="JSON output")
    Etcd.add_arguments(ap)
    obj = ap.add_subparsers(dest="obj", required=True, metavar="OBJECT")

    t = obj.add_parser("topology").add_subparsers(dest="cmd", required=True)
    t.add_parser("load").add_argument("file")
    t.add_parser("show")

    n = obj.add_parser("node").add_subparsers(dest="cmd", required=True)
    n.add_parser("list")
    n.add_parser("drain").add_argument("node")
    n.add_parser("undrain").add_argument("node")

    j = obj.add_parser("job").add_subparsers(dest="cmd", required=True)
    s = j.add_parser("start")
    s.add_argument("--tenant", required=True)
    s.add_argument("--trees", type=int, default=cluster.TREES_DEFAULT)
    s.add_argument("--dtype", default="f32")
    s.add_argument("--op", default="sum")
    s.add_argument("--window", type=int, default=64)
    s.add_argument("--memcap", type=_size, default=cluster.MEMCAP_DEFAULT)
    s.add_argument("--wait", type=float, default=0.0,
                   help="s to wait for room (default: none, fail at once)")
    s.add_argument("--ttl", type=int, default=cluster.JOB_TTL,
                   help="s the job outlives this command's end (default %(default)s)")
    s.add_argument("--key-file", help="where the job's key goes (mode 0600)")
    s.add_argument("hosts", nargs="+", metavar="HOST")
    j.add_parser("list")
    j.add_parser("show").add_argument("jid", type=int)
    e = j.add_parser("env")
    e.add_argument("jid", type=int)
    e.add_argument("host")
    j.add_parser("stop").add_argument("jid", type=int)

    obj.add_parser("links")

    a = obj.add_parser("auth").add_subparsers(dest="cmd", required=True)
    a.add_parser("setup").add_argument("dir")

    q = obj.add_parser("quota").add_subparsers(dest="cmd", required=True)
    qs = q.add_parser("set")
    qs.add_argument("tenant")
    qs.add_argument("--jobs", type=int)
    qs.add_argument("--workers", type=int)
    q.add_parser("list")
    return ap


def _out(args: argparse.Namespace, data: Any, lines: list[str]) -> None:
    if args.json:
        print(json.dumps(data))
    else:
        for line in lines:
            print(line)


def _job_start(args: argparse.Namespace, store: Etcd, command: list[str]) -> int:
    req = JobRequest(args.tenant, args.hosts, args.trees, args.dtype, args.op,
                     args.window, args.memcap)
    if not 1 <= args.ttl <= 3600:
        raise RequestError(f"--ttl {args.ttl}: 1 to 3600 s")
    rec, lease_id, job_key = cluster.start_job(store, req, args.wait, args.ttl)
    lease = cluster.KeptLease(store, lease_id, args.ttl)
    rc = 0
    own = None
    key_file = args.key_file
    try:
        try:
            if not key_file:
                own = tempfile.mkdtemp(prefix="netagg-ctl-")
                key_file = os.path.join(own, "key")
            fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(job_key)
        except OSError as e:
            raise RequestError(f"job {rec['jid']}: --key-file {key_file}: {e.strerror} "
                               f"(the job released)") from None
        _out(args, dict(rec, key_file=key_file),
             [f"job {rec['jid']}: tenant {rec['tenant']}, "
              f"{rec['nworkers']} workers on {', '.join(rec['workers'])}"]
             + [f"  tree {t['tid']}: root {t['root']}" for t in rec["trees"]]
             + [f"  {h}: NETAGG_TREES={v}" for h, v in rec["hosts"].items()]
             + [f"  key: NETAGG_KEY_FILE={key_file}"])
        sys.stdout.flush()
        if command:
            env = dict(os.environ, NETAGG_CTL_JOB=str(rec["jid"]), NETAGG_KEY_FILE=key_file)
            rc = subprocess.call(command, env=env)
        else:
            stop = threading.Event()
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, lambda *_: stop.set())
            while not stop.wait(0.5) and not lease.expired:
                pass
    finally:
        if own:
            if key_file and os.path.exists(key_file):
                os.unlink(key_file)
            os.rmdir(own)
        try:
            lease.release()
        except StoreError as e:
            print(f"netagg-ctl: job {rec['jid']}: releasing it: {e} "
                  f"(it goes within {args.ttl} s)", file=sys.stderr)
    if lease.expired:
        print(f"netagg-ctl: job {rec['jid']}: its lease expired: its trees are gone",
              file=sys.stderr)
        return rc or 1
    return rc


def run(args: argparse.Namespace, store: Etcd, command: list[str]) -> int:
    o, c = args.obj, getattr(args, "cmd", None)
    if (o, c) == ("topology", "load"):
        try:
            with open(args.file, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise RequestError(f"{args.file}: {e.strerror}") from None
        topo = cluster.load_topology(store, text, args.file)
        kinds = [n.kind for n in topo.nodes.values()]
        _out(args, {"nodes": len(kinds)},
             [f"topology loaded: {kinds.count('worker')} workers, "
              f"{kinds.count('aggregator')} aggregators, {len(kinds)} nodes"])
        return 0
    st = cluster.read_state(store)
    if o == "auth":
        if st.topology is None:
            raise RequestError("no topology in the store (netagg-ctl topology load FILE): "
                               "its aggregators get a user each")
        users = cluster.auth_setup(store, st.topology, args.dir)
        _out(args, {"users": users, "dir": args.dir},
             [f"etcd's auth on: users {', '.join(users)}; each one's password in "
              f"{args.dir}/USER"])
        return 0
    if (o, c) == ("topology", "show"):
        kv = store.get(key("topology"))
        if kv is None:
            raise RequestError("no topology in the store (netagg-ctl topology load FILE)")
        sys.stdout.write(kv.value.decode())
        return 0
    if (o, c) == ("node", "list"):
        names = sorted(set(st.nodes) | set(st.config) | st.drained
                       | ({n for n, x in st.topology.nodes.items() if x.kind == "aggregator"}
                          if st.topology else set()))
        rows = []
        for n in names:
            info = st.nodes.get(n, {})
            jobs, mem = st.node_use(n)
            applied = st.applied.get(n, {}).get("jobs", {})
            rows.append({"node": n, "alive": n in st.nodes, "drained": n in st.drained,
                         "jobs": jobs, "max_jobs": info.get("max_jobs"), "mem": mem,
                         "mem_limit": info.get("mem_limit"),
                         "failed": sorted(int(j) for j, r in applied.items() if not r["ok"])})
        _out(args, rows, [f"{r['node']}: {'alive' if r['alive'] else 'no agent'}"
                          f"{', drained' if r['drained'] else ''}, jobs {r['jobs']}"
                          f"/{r['max_jobs'] or '-'}, memory {cluster.human(r['mem'])}"
                          f"/{cluster.human(r['mem_limit']) if r['mem_limit'] else '-'}"
                          + (f", failed jobs {r['failed']}" if r["failed"] else "")
                          for r in rows])
        return 0
    if o == "node":
        if args.node not in st.nodes and (st.topology is None
                                          or args.node not in st.topology.nodes):
            raise RequestError(f"{args.node}: not a node of the topology")
        if c == "drain":
            store.put(key("drain", args.node), "{}")
        else:
            store.delete(key("drain", args.node))
        _out(args, {"node": args.node, "drained": c == "drain"},
             [f"{args.node}: {c}ed"])
        return 0
    if (o, c) == ("job", "start"):
        return _job_start(args, store, command)
    if (o, c) == ("job", "list"):
        rows = [{k: r[k] for k in ("jid", "tenant", "workers", "nworkers", "dtype")}
                | {"roots": [t["root"] for t in r["trees"]]} for _, r in sorted(st.jobs.items())]
        _out(args, rows, [f"job {r['jid']}: tenant {r['tenant']}, {r['nworkers']} workers, "
                          f"{r['dtype']}, roots {' '.join(r['roots'])}" for r in rows])
        return 0
    if o == "job":
        rec = st.jobs.get(args.jid)
        if rec is None:
            raise RequestError(f"job {args.jid}: no such job")
        if c == "show":
            _out(args, rec, [json.dumps(rec, indent=1)])
        elif c == "env":
            env = cluster.worker_env(rec, args.host)
            _out(args, env, [f"{k}={v}" for k, v in env.items()])
        else:
            lease = store.get(key("job", args.jid))
            if lease is not None and lease.lease:
                store.revoke(lease.lease)
            else:
                store.delete(key("job", args.jid))
            _out(args, {"jid": args.jid, "stopped": True}, [f"job {args.jid}: stopped"])
        return 0
    if o == "links":
        shared = cluster.jobs_sharing(st)
        _out(args, [{"link": list(k), "jobs": v} for k, v in shared.items()],
             [f"{a} -> {b}: jobs {' '.join(map(str, v))}" for (a, b), v in shared.items()]
             or ["no link carries two jobs"])
        return 0
    if (o, c) == ("quota", "set"):
        q = st.quotas.get(args.tenant, {})
        for k in ("jobs", "workers"):
            v = getattr(args, k)
            if v is not None:
                if v < 0:
                    raise RequestError(f"--{k} {v}: 0 or more")
                q[k] = v
        store.put(key("quota", args.tenant), json.dumps(q))
        _out(args, {"tenant": args.tenant} | q, [f"{args.tenant}: {q}"])
        return 0
    _out(args, [{"tenant": t} | q for t, q in sorted(st.quotas.items())],
         [f"{t}: jobs {q.get('jobs', '-')}, workers {q.get('workers', '-')}"
          for t, q in sorted(st.quotas.items())])
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, command = argv[:i], argv[i + 1:]
    ap = _parser()
    args = ap.parse_args(argv)
    if not args.etcd:
        ap.error("no store: --etcd URL or NETAGG_ETCD")
    if command and (args.obj, args.cmd) != ("job", "start"):
        ap.error("a COMMAND after -- is job start's only")
    try:
        return run(args, Etcd.connect(args.etcd, args.user, args.password_file), command)
    except ValueError as e:         # RequestError among them
        print(f"netagg-ctl: {e}", file=sys.stderr)
        return 1 if isinstance(e, RequestError) else 2
    except (PlacementError, StoreError, OSError) as e:
        print(f"netagg-ctl: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""A small etcd v3 client: the cluster's store, over etcd's JSON gateway.

etcd (3.4, Debian's etcd-server) serves its v3 API as JSON over HTTP
beside gRPC (``POST /v3/kv/range`` and so on, keys and values base64), so
the agent, netagg-ctl and the backend reach it with the standard library
alone: no gRPC stack on every aggregator and worker. Only what netagg uses
is here: keys by name or prefix, transactions, leases, watches, and
etcd's own authentication (a user's token in every request).

Every failure is a :class:`StoreError`: etcd unreachable (``unreachable``
true: the caller may wait and retry) or a request refused (the reason
etcd gave).
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import urllib.parse
from dataclasses import dataclass
from typing import Any, Iterator, Optional

__all__ = ["StoreError", "KeyValue", "Event", "Etcd", "Watch", "prefix_end"]


class StoreError(Exception):
    """etcd unreachable or a request it refused."""

    def __init__(self, msg: str, unreachable: bool = False) -> None:
        super().__init__(msg)
        self.unreachable = unreachable


@dataclass
class KeyValue:
    key: str
    value: bytes
    mod_revision: int
    create_revision: int
    lease: int

    def json(self) -> Any:
        return json.loads(self.value)


@dataclass
class Event:
    """One change a watch saw: put (kv its new value) or delete."""
    kind: str               # "put" or "delete"
    kv: KeyValue
    revision: int


def _b64(s: str | bytes) -> str:
    return base64.b64encode(s.encode() if isinstance(s, str) else s).decode()


def prefix_end(prefix: str) -> str:
    """The range end that makes a range of every key beginning with prefix."""
    b = bytearray(prefix.encode())
    while b and b[-1] == 0xff:
        b.pop()
    if not b:
        return "\0"
    b[-1] += 1
    return b.decode("latin-1")


def _kv(d: dict[str, Any]) -> KeyValue:
    return KeyValue(base64.b64decode(d["key"]).decode(),
                    base64.b64decode(d.get("value", "")),
                    int(d.get("mod_revision", 0)), int(d.get("create_revision", 0)),
                    int(d.get("lease", 0)))


class Etcd:
    """A connection to one etcd endpoint, "http://HOST:PORT".

    Requests are plain HTTP/1.1 POSTs, each on a fresh connection: simple,
    and safe from several threads (the lease kept alive in one, the work
    in another). timeout (s) bounds every request but watch's wait.
    """

    def __init__(self, endpoint: str, user: Optional[str] = None,
                 password: Optional[str] = None, timeout: float = 5.0) -> None:
        u = urllib.parse.urlsplit(endpoint if "//" in endpoint else "http://" + endpoint)
        if u.scheme != "http" or not u.hostname or u.path not in ("", "/"):
            raise ValueError(f"etcd endpoint {endpoint!r}: not http://HOST:PORT")
        self.endpoint = endpoint
        self.host, self.port = u.hostname, u.port or 2379
        self.timeout = timeout
        self.token: Optional[str] = None
        self._user, self._password = user, password or ""

    def _authenticate(self) -> None:
        self.token = None
        self.token = self._call("/v3/auth/authenticate",
                                {"name": self._user, "password": self._password})["token"]

    @staticmethod
    def add_arguments(ap: argparse.ArgumentParser) -> None:
        """A command line's --etcd, --user and --password-file, their
        defaults NETAGG_ETCD, NETAGG_ETCD_USER, NETAGG_ETCD_PASSWORD_FILE
        (the backend's variables too)."""
        env = os.environ
        ap.add_argument("--etcd", default=env.get("NETAGG_ETCD"), metavar="URL",
                        help="etcd, http://HOST:PORT (default $NETAGG_ETCD)")
        ap.add_argument("--user", default=env.get("NETAGG_ETCD_USER"),
                        help="etcd user, if etcd's auth is on (default $NETAGG_ETCD_USER)")
        ap.add_argument("--password-file", default=env.get("NETAGG_ETCD_PASSWORD_FILE"),
                        help="a file holding the user's password "
                        "(default $NETAGG_ETCD_PASSWORD_FILE)")

    @classmethod
    def connect(cls, endpoint: str, user: Optional[str] = None,
                password_file: Optional[str] = None) -> "Etcd":
        """A command line's store: endpoint, and a user whose password is
        the first line of password_file (OSError if it cannot be read)."""
        password = None
        if password_file:
            with open(password_file, encoding="utf-8") as f:
                password = f.readline().strip()
        return cls(endpoint, user, password)

    # -- requests ---------------------------------------------------------

    def _connect(self, timeout: Optional[float]) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def _send(self, conn: http.client.HTTPConnection, path: str,
              body: dict[str, Any]) -> http.client.HTTPResponse:
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = self.token
        try:
            conn.request("POST", path, json.dumps(body), headers)
            return conn.getresponse()
        except (OSError, http.client.HTTPException) as e:
            raise StoreError(f"etcd at {self.endpoint} unreachable: {e}",
                             unreachable=True) from None

    def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """One request, its JSON answer; etcd's refusal a StoreError. A
        token etcd no longer takes (it expires unused, or etcd restarted) is
        renewed once with the user's password and the request made again.
        The first request authenticates: etcd may be away when this is made."""
        if self._user is not None and self.token is None:
            self._authenticate()
        try:
            return self._call(path, body)
        except StoreError as e:
            if self._user is None or "invalid auth token" not in str(e):
                raise
        self._authenticate()
        return self._call(path, body)

    def _call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        conn = self._connect(self.timeout)
        try:
            resp = self._send(conn, path, body)
            try:
                data = resp.read()
            except (OSError, http.client.HTTPException) as e:
                raise StoreError(f"etcd at {self.endpoint} unreachable: {e}",
                                 unreachable=True) from None
        finally:
            conn.close()
        try:
            out = json.loads(data) if data else {}
        except ValueError:
            raise StoreError(f"etcd at {self.endpoint}: {path}: not JSON "
                             f"(HTTP {resp.status})") from None
        if resp.status != 200 or "error" in out:
            why = out.get("message") or out.get("error") or f"HTTP {resp.status}"
            if "user name is empty" in why:
                why += " (etcd's auth is on: give a user and a password file)"
            elif "permission denied" in why:
                why += f" (to user {self._user})"
            raise StoreError(f"etcd at {self.endpoint}: {path}: {why}",
                             unreachable=resp.status in (502, 503))
        return out

    # -- keys -------------------------------------------------------------

    def get(self, key: str) -> Optional[KeyValue]:
        kvs = self.call("/v3/kv/range", {"key": _b64(key)}).get("kvs", [])
        return _kv(kvs[0]) if kvs else None

    def get_prefix(self, prefix: str) -> tuple[list[KeyValue], int]:
        """Every key under prefix, in key order, and the store's revision
        they were read at."""
        return self.get_range(prefix, prefix_end(prefix))

    def get_range(self, start: str, end: str,
                  revision: int = 0) -> tuple[list[KeyValue], int]:
        """Every key from start to end (excluded), in key order, as of
        revision (0: now), and the store's revision."""
        body: dict[str, Any] = {"key": _b64(start), "range_end": _b64(end)}
        if revision:
            body["revision"] = str(revision)
        out = self.call("/v3/kv/range", body)
        return ([_kv(d) for d in out.get("kvs", [])],
                int(out["header"]["revision"]))

    def put(self, key: str, value: str | bytes, lease: int = 0) -> None:
        self.call("/v3/kv/put", self.put_op(key, value, lease)["request_put"])

    def delete(self, key: str, prefix: bool = False) -> int:
        body = {"key": _b64(key)}
        if prefix:
            body["range_end"] = _b64(prefix_end(key))
        return int(self.call("/v3/kv/deleterange", body).get("deleted", 0))

    def txn(self, compare: list[dict[str, Any]], success: list[dict[str, Any]],
            failure: Optional[list[dict[str, Any]]] = None) -> bool:
        """A transaction: success's requests if every comparison holds,
        else failure's; whether they held. Build its parts with
        :meth:`mod_is`, :meth:`put_op`, :meth:`delete_op`."""
        out = self.call("/v3/kv/txn", {"compare": compare, "success": success,
                                       "failure": failure or []})
        return bool(out.get("succeeded"))

    @staticmethod
    def mod_is(key: str, revision: int) -> dict[str, Any]:
        """Compare: key last changed at revision (0: key absent)."""
        return {"key": _b64(key), "target": "MOD", "result": "EQUAL",
                "mod_revision": str(revision)}

    @staticmethod
    def put_op(key: str, value: str | bytes, lease: int = 0) -> dict[str, Any]:
        op: dict[str, Any] = {"key": _b64(key), "value": _b64(value)}
        if lease:
            op["lease"] = str(lease)
        return {"request_put": op}

    @staticmethod
    def delete_op(key: str) -> dict[str, Any]:
        return {"request_delete_range": {"key": _b64(key)}}

    # -- leases -----------------------------------------------------------

    def grant(self, ttl: int) -> int:
        """A new lease of ttl seconds: its ID."""
        return int(self.call("/v3/lease/grant", {"TTL": str(ttl)})["ID"])

    def keepalive(self, lease: int) -> int:
        """Renew lease: its TTL now, 0 if it has expired (its keys gone)."""
        out = self.call("/v3/lease/keepalive", {"ID": str(lease)})
        return int(out.get("result", {}).get("TTL", 0))

    def revoke(self, lease: int) -> None:
        """End lease now: its keys are deleted with it."""
        try:
            self.call("/v3/lease/revoke", {"ID": str(lease)})
        except StoreError as e:
            if "not found" not in str(e):
                raise

    # -- auth (etcd's users and roles) --------------------------------------

    def role_add(self, role: str, grants: list[tuple[str, str, str]]) -> None:
        """A role with grants, each (key, range end or "" for the key
        alone, "read", "write" or "readwrite")."""
        self.call("/v3/auth/role/add", {"name": role})
        for k, end, perm in grants:
            self.call("/v3/auth/role/grant", {"name": role, "perm": {
                "permType": perm.upper(), "key": _b64(k), "range_end": _b64(end)}})

    def user_add(self, user: str, password: str, role: str) -> None:
        self.call("/v3/auth/user/add", {"name": user, "password": password})
        self.call("/v3/auth/user/grant", {"user": user, "role": role})

    def auth_enable(self) -> None:
        """Auth on: from now on every request needs a user's token."""
        self.call("/v3/auth/enable", {})

    # -- watches ----------------------------------------------------------

    def watch(self, prefix: str, start_revision: int) -> "Watch":
        """A watch of every change under prefix from start_revision on."""
        return Watch(self, prefix, start_revision)


class Watch:
    """A watch: events() yields the changes as they come, blocking between
    them (run it in a thread of its own); close(), from another thread,
    ends it. events() ends with StoreError when the connection does
    (unreachable) or the revision was compacted."""

    def __init__(self, store: Etcd, prefix: str, start_revision: int) -> None:
        self.store = store
        self.conn = store._connect(None)
        self.resp = store._send(self.conn, "/v3/watch", {"create_request": {
            "key": _b64(prefix), "range_end": _b64(prefix_end(prefix)),
            "start_revision": str(start_revision)}})
        if self.resp.status != 200:
            self.close()
            raise StoreError(f"etcd at {store.endpoint}: watch: HTTP {self.resp.status}")

    def close(self) -> None:
        try:
            self.conn.sock and self.conn.sock.shutdown(2)
        except OSError:
            pass
        self.conn.close()

    def events(self) -> Iterator[Event]:
        where = f"etcd at {self.store.endpoint}: watch"
        while True:
            try:
                line = self.resp.readline()
            except (OSError, ValueError, http.client.HTTPException) as e:
                raise StoreError(f"{where}: {e}", unreachable=True) from None
            if not line:
                raise StoreError(f"{where} ended", unreachable=True)
            out = json.loads(line)
            if "error" in out:
                raise StoreError(f"{where}: {out['error'].get('message')}", unreachable=True)
            res = out.get("result", {})
            if res.get("canceled") or int(res.get("compact_revision", 0)):
                raise StoreError(f"{where} canceled: "
                                 f"{res.get('cancel_reason') or 'revision compacted'}")
            rev = int(res.get("header", {}).get("revision", 0))
            for e in res.get("events", []):
                yield Event("delete" if e.get("type") == "DELETE" else "put",
                            _kv(e["kv"]), rev)

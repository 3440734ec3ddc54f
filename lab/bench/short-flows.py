#!/usr/bin/python3
"""Short flows for make bench's (k): latency-sensitive requests beside bulk
traffic, as PANAMA's evaluation has them.

  short-flows.py serve --port P --size BYTES [--seconds S]
      answers every connection with BYTES bytes, then closes it; for S
      seconds at most (default 600)
  short-flows.py ask --host H --port P --size BYTES --every MS --seconds S
      opens a new connection every MS ms for S seconds (at most 10000),
      reads BYTES bytes from each, and prints one JSON object: the flows'
      completion times in ms (from connect() to the last byte), how many
      failed or timed out (5 s each), and their p50 and p99

The flows run one after another on one thread, each started at its slot
or as soon as the last one ended: a flow that waits long holds back the
next, as a blocked request would.
"""

import argparse
import json
import socket
import sys
import time


def serve(port: int, size: int, seconds: float) -> int:
    """Answer each connection with size bytes until seconds have passed."""
    reply = b"x" * size
    end = time.monotonic() + seconds
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as srv:
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("0.0.0.0", port))
        srv.listen(64)
        srv.settimeout(1.0)
        while time.monotonic() < end:
            try:
                conn, _ = srv.accept()
            except socket.timeout:
                continue
            with conn:
                conn.settimeout(5.0)
                try:
                    conn.sendall(reply)
                except OSError:
                    pass
    return 0


def percentile(values: list, p: float) -> float:
    """The p-th percentile, nearest rank."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(p / 100 * len(ordered) + 0.999999)))
    return ordered[rank - 1]


def one_flow(host: str, port: int, size: int) -> float:
    """One flow's completion time in ms, or raise OSError."""
    t0 = time.monotonic()
    with socket.create_connection((host, port), timeout=5.0) as s:
        got = 0
        while got < size:
            data = s.recv(65536)
            if not data:
                raise OSError("short reply")
            got += len(data)
    return (time.monotonic() - t0) * 1000


def ask(host: str, port: int, size: int, every_ms: float, seconds: float) -> int:
    """Flows every every_ms for seconds; one JSON line of their times."""
    times, failed = [], 0
    start = time.monotonic()
    slot = start
    for _ in range(10000):
        now = time.monotonic()
        if now - start >= seconds:
            break
        if now < slot:
            time.sleep(slot - now)
        slot += every_ms / 1000
        try:
            times.append(one_flow(host, port, size))
        except OSError:
            failed += 1
    print(json.dumps({"flows": len(times), "failed": failed,
                      "p50_ms": round(percentile(times, 50), 3),
                      "p99_ms": round(percentile(times, 99), 3),
                      "times_ms": [round(t, 3) for t in times]}))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--size", type=int, required=True)
    s.add_argument("--seconds", type=float, default=600)
    a = sub.add_parser("ask")
    a.add_argument("--host", required=True)
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--size", type=int, required=True)
    a.add_argument("--every", type=float, required=True, help="ms between flows")
    a.add_argument("--seconds", type=float, required=True)
    args = ap.parse_args()
    if args.cmd == "serve":
        return serve(args.port, args.size, args.seconds)
    return ask(args.host, args.port, args.size, args.every, args.seconds)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Forged packets for a keyed job (tests/netagg_key.sh): contributions
sent from a child's own address and port, or results from its parent's,
each with a header a worker would send and a tag that is missing, random,
of another key, bound to another sender, or of another VID, tree or
round; --key with none of those tags them rightly (a capture replayed).

  forge.py --dst ADDR[:PORT] --port P --job J --session S --round R
           --vids A-B [--tree T] [--count N] [--dtype f32|f16|bf16|i32]
           [--value X] [--result] [--contributors C] [--key FILE] [--no-tag | --random-tag |
           --as ADDR:PORT | --tag-vid V | --tag-tree T | --tag-round R]
           [--for SECONDS]

Every VID's packet is sent once, or again every 20 ms for --for seconds;
prints "sent N".
"""
import argparse
import os
import socket
import struct
import time

from wire import (DSCP, DTYPES, DTYPE_SIZES, F_RESULT, HDR, PORT, VERSION, read_key, sender,
                  tag)


def endpoint(s: str, default_port: int) -> tuple[str, int]:
    """ADDR or ADDR:PORT ([ADDR]:PORT for IPv6)."""
    if s.startswith("["):
        addr, _, port = s[1:].partition("]:")
        return addr, int(port) if port else default_port
    if s.count(":") == 1:
        addr, port = s.split(":")
        return addr, int(port)
    return s, default_port


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dst", required=True)
    ap.add_argument("--port", type=int, required=True, help="source port")
    ap.add_argument("--job", type=int, required=True)
    ap.add_argument("--tree", type=int, default=0)
    ap.add_argument("--session", type=int, required=True)
    ap.add_argument("--round", type=int, required=True)
    ap.add_argument("--vids", required=True, help="A-B, inclusive")
    ap.add_argument("--count", type=int, default=100, help="elements a packet")
    ap.add_argument("--dtype", default="f32", choices=sorted(DTYPES))
    ap.add_argument("--value", type=float, default=1000.0)
    ap.add_argument("--result", action="store_true", help="results, not contributions")
    ap.add_argument("--contributors", type=int, default=1)
    ap.add_argument("--key")
    how = ap.add_mutually_exclusive_group()
    how.add_argument("--no-tag", action="store_true")
    how.add_argument("--random-tag", action="store_true")
    how.add_argument("--as", dest="as_", metavar="ADDR:PORT", help="tag bound to this sender")
    how.add_argument("--tag-vid", type=int, help="the tag of this VID's packet")
    how.add_argument("--tag-tree", type=int, help="the tag of this tree's packet")
    how.add_argument("--tag-round", type=int, help="the tag of this round's packet")
    ap.add_argument("--for", dest="duration", type=float, default=0.0)
    a = ap.parse_args()

    addr, dport = endpoint(a.dst, PORT)
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(family, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_TCLASS, DSCP << 2)
    else:
        s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, DSCP << 2)
    s.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", a.port))
    # Not connected: a port not yet open (its worker starting) answers
    # with an ICMP error, which would end a connected socket's sends. The
    # address the packets leave from, which a tag binds, from one that is.
    probe = socket.socket(family, socket.SOCK_DGRAM)
    probe.connect((addr, dport))
    me = sender(probe.getsockname()[0], a.port)
    probe.close()
    key = read_key(a.key) if a.key else None
    dtype = DTYPES[a.dtype]
    if a.dtype == "i32":
        payload = struct.pack(f"<{a.count}i", *[int(a.value)] * a.count)
    elif DTYPE_SIZES[dtype] == 2:
        f32 = struct.pack("<f", a.value)
        half = f32[2:] if a.dtype == "bf16" else struct.pack("<e", a.value)
        payload = half * a.count
    else:
        payload = struct.pack(f"<{a.count}f", *[a.value] * a.count)
    first, last = (int(v) for v in a.vids.split("-"))
    flags = F_RESULT if a.result else 0

    def header(vid: int, tree: int, rnd: int) -> bytes:
        return HDR.pack(VERSION, flags, dtype, 0, a.job, vid, tree, a.count,
                        a.contributors, rnd & 0xffff, a.session)

    packets = []
    for vid in range(first, last + 1):
        body = header(vid, a.tree, a.round) + payload
        if a.no_tag:
            trailer = b""
        elif a.random_tag:
            trailer = os.urandom(8)
        else:
            if key is None:
                ap.error("a tag needs --key")
            signed = header(vid if a.tag_vid is None else a.tag_vid,
                            a.tree if a.tag_tree is None else a.tag_tree,
                            a.round if a.tag_round is None else a.tag_round) + payload
            bound = b""
            if not a.result:
                bound = sender(*endpoint(a.as_, 0)) if a.as_ else me
            trailer = tag(key, signed, bound)
        packets.append(body + trailer)
    sent = 0
    end = time.monotonic() + a.duration
    while True:
        for p in packets:
            s.sendto(p, (addr, dport))
            sent += 1
        if time.monotonic() >= end:
            break
        time.sleep(0.02)
    print(f"sent {sent}")


if __name__ == "__main__":
    main()

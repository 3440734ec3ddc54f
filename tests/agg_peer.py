#!/usr/bin/env python3
"""A scripted child of an aggregation tree, for tests that need to see the
wire: sends contributions for the given VIDs in the given order from one UDP
socket (and, with --probe V, then a probe from VID V), then prints every
result the node sends back to that socket, one line each, in arrival order:
  vid=V flags=F contributors=C ecn=E first=X tos=T round=R uniform=U [session=S]
(X the first element, as float32; U 1 if every element equals it, a NaN
equal to a NaN; --dtype picks the elements' type: f32, f16 or bf16), or
for the answer to a probe:
  probe vid=V flags=F contributors=C held=0xM done=0xD round=R [session=S]
(M the map of contributions the node holds, D of results it sent, bit i
for VID V + i; done=- in an answer without that map); session=S only for
a session other than 0.

IPv4 or IPv6, as --dst is (an IPv6 address has a colon): over IPv6 the DSCP
and ECN go in the traffic class (IPV6_TCLASS), and tos=T is the traffic
class a result came with (IPV6_RECVTCLASS), the same byte as IPv4's TOS.

Header layout: wire.py.
"""
import argparse
import select
import socket
import struct
import sys
import time

from wire import DSCP, DTYPES, F_FIN, F_PROBE, F_RESULT, F_RETRY, HDR, PORT, VERSION

SO_ZEROCOPY, MSG_ZEROCOPY = 60, 0x4000000  # not in every Python's socket module


class Marking:
    """How a socket of one family sets and reads DSCP and ECN: IPv4's TOS
    (IP_TOS, IP_RECVTOS: a byte of ancillary data) or IPv6's traffic class
    (IPV6_TCLASS, IPV6_RECVTCLASS: an int), the same byte either way."""

    def __init__(self, family: socket.AddressFamily) -> None:
        self.family = family
        if family == socket.AF_INET6:
            self.level, self.opt, self.recv = (socket.IPPROTO_IPV6, socket.IPV6_TCLASS,
                                               socket.IPV6_RECVTCLASS)
        else:
            self.level, self.opt, self.recv = socket.IPPROTO_IP, socket.IP_TOS, socket.IP_RECVTOS

    def set(self, s: socket.socket, tos: int) -> None:
        """Mark what s sends from now on with tos (DSCP << 2 | ECN)."""
        s.setsockopt(self.level, self.opt, tos)

    def read(self, anc: list[tuple[int, int, bytes]]) -> int:
        """The TOS (traffic class) a datagram came with: 0 if not given."""
        for level, kind, data in anc:
            if level == self.level and kind == self.opt and data:
                if self.family == socket.AF_INET6:
                    return int.from_bytes(data[:4], sys.byteorder)
                return data[0]
        return 0


def family(addr: str) -> socket.AddressFamily:
    """AF_INET6 for an IPv6 address (it has a colon), else AF_INET."""
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def pack(dtype: str, values: list[float]) -> bytes:
    """Little-endian elements; a bfloat16 is a float32's upper half (the
    test values are exact in it: checked)."""
    if dtype == "f16":
        return struct.pack("<%de" % len(values), *values)
    if dtype == "bf16":
        words = struct.unpack("<%dI" % len(values), struct.pack("<%df" % len(values), *values))
        if any(w & 0xffff for w in words):
            raise SystemExit("a value is not exact in bfloat16")
        return struct.pack("<%dH" % len(values), *(w >> 16 for w in words))
    return struct.pack("<%df" % len(values), *values)


def unpack(dtype: str, data: bytes, offset: int, count: int) -> tuple[float, ...]:
    """count elements of dtype at offset of data, as floats."""
    if dtype == "f16":
        return struct.unpack_from("<%de" % count, data, offset)
    if dtype == "bf16":
        words = struct.unpack_from("<%dH" % count, data, offset)
        return struct.unpack("<%df" % count, struct.pack("<%dI" % count, *(w << 16 for w in words)))
    return struct.unpack_from("<%df" % count, data, offset)


def tail(session: int) -> str:
    """" session=S" for a session other than 0 (the lines stay as they were)."""
    return " session=%d" % session if session else ""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dst", required=True, help="the node: an IPv4 or IPv6 address")
    ap.add_argument("--src", default="", help="bind to this address (--dst's family)")
    ap.add_argument("--job", type=int, required=True)
    ap.add_argument("--tree", type=int, default=0)
    ap.add_argument("--vids", default="", help="comma-separated, in sending order")
    ap.add_argument("--fin", type=int, default=-1, help="VID that carries FIN")
    ap.add_argument("--ecn", default="", help="comma-separated ECN per sent VID")
    ap.add_argument("--round", type=int, default=0)
    ap.add_argument("--session", type=int, default=0)
    ap.add_argument("--retry", action="store_true", help="send with the RETRY flag")
    ap.add_argument("--flags", type=int, default=0, help="more flags for every contribution")
    ap.add_argument("--probe", type=int, default=-1, help="then probe from this VID")
    ap.add_argument("--probe-count", type=int, default=0,
                    help="elements the probe carries (a probe has none)")
    ap.add_argument("--count", type=int, default=4)
    ap.add_argument("--value", type=float, default=1.0)
    ap.add_argument("--dtype", choices=["bf16", "f16", "f32"], default="f32")
    ap.add_argument("--wait", type=float, default=0.0, help="seconds before sending")
    ap.add_argument("--expect", type=int, default=0, help="results to wait for")
    ap.add_argument("--timeout", type=float, default=5.0)
    ap.add_argument("--zerocopy", action="store_true",
                    help="send with MSG_ZEROCOPY: the payload in pages, the packet nonlinear")
    a = ap.parse_args()

    fam = family(a.dst)
    if a.src and family(a.src) != fam:
        ap.error("--src and --dst must be of one family")
    mark = Marking(fam)
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.setsockopt(mark.level, mark.recv, 1)
    s.bind((a.src, 0))
    if a.zerocopy:
        s.setsockopt(socket.SOL_SOCKET, SO_ZEROCOPY, 1)
    time.sleep(a.wait)
    vids = [int(v) for v in a.vids.split(",") if v]
    ecns = [int(e) for e in a.ecn.split(",") if e] or [0] * len(vids)
    payload = pack(a.dtype, [a.value] * a.count)
    for vid, ecn in zip(vids, ecns):
        mark.set(s, DSCP << 2 | ecn)
        flags = (F_FIN if vid == a.fin else 0) | (F_RETRY if a.retry else 0) | a.flags
        hdr = HDR.pack(VERSION, flags, DTYPES[a.dtype], 0, a.job, vid, a.tree, a.count, 1,
                       a.round, a.session)
        s.sendmsg([hdr + payload], [], MSG_ZEROCOPY if a.zerocopy else 0, (a.dst, PORT))
    if a.probe >= 0:
        mark.set(s, DSCP << 2)
        hdr = HDR.pack(VERSION, F_PROBE, DTYPES[a.dtype], 0, a.job, a.probe, a.tree,
                       a.probe_count, 0, a.round, a.session)
        s.sendto(hdr + b"\0" * (4 * a.probe_count), (a.dst, PORT))

    # poll() also wakes for the error queue, where MSG_ZEROCOPY's
    # completions wait: those are read and dropped.
    s.setblocking(False)
    poller = select.poll()
    poller.register(s, select.POLLIN)
    deadline = time.monotonic() + a.timeout
    got = 0
    while got < a.expect:
        left = deadline - time.monotonic()
        events = poller.poll(left * 1000) if left > 0 else []
        if not events:
            print("timeout after %d results" % got, file=sys.stderr)
            return 1
        if events[0][1] & select.POLLERR:
            try:
                s.recvmsg(256, 256, socket.MSG_ERRQUEUE)
            except BlockingIOError:
                pass
        try:
            data, anc, _, _ = s.recvmsg(65536, socket.CMSG_SPACE(4))
        except BlockingIOError:
            continue
        tos = mark.read(anc)
        _, flags, _, _, jid, vid, tid, count, contrib, rnd, session = HDR.unpack_from(data)
        if flags & F_PROBE:
            held = struct.unpack_from("<Q", data, HDR.size)[0] if len(data) >= HDR.size + 8 else -1
            done = ("%#x" % struct.unpack_from("<Q", data, HDR.size + 8)[0]
                    if len(data) >= HDR.size + 16 else "-")
            print("probe vid=%d flags=%d contributors=%d held=%#x done=%s round=%d%s" %
                  (vid, flags, contrib, held, done, rnd, tail(session)), flush=True)
            got += 1
            continue
        values = unpack(a.dtype, data, HDR.size, count)
        first = values[0] if count else 0.0
        print("vid=%d flags=%d contributors=%d ecn=%d first=%g tos=%d round=%d uniform=%d%s" %
              (vid, flags, contrib, tos & 3, first, tos, rnd,
               all(v == first or (v != v and first != first) for v in values),  # NaN too
               tail(session)), flush=True)
        got += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

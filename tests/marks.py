#!/usr/bin/env python3
"""What carries which marks, for tests/netagg_dscp.sh. Two modes, each
printing "ready" once it listens and, when it gets SIGTERM (or after --max
seconds), one summary line:

  marks.py sniff DEV PORT DSCP
      the UDP packets (IPv4 or IPv6) DEV receives: "marked=N other=M",
      N of them from source port PORT marked DSCP, M any other way
  marks.py listen ADDR PORT...
      UDP sockets bound to ADDR at each PORT: "got=N", the datagrams that
      reached them (a node's module takes aggregation packets before any
      socket: those that come here passed it untouched)
"""
import argparse
import select
import signal
import socket
import struct
import sys
import time

ETH_P_ALL, ETH_HLEN = 0x0003, 14


def udp_marks(frame: bytes) -> tuple[int, int] | None:
    """(source port, DSCP) of an Ethernet frame's UDP packet, or None."""
    if len(frame) < ETH_HLEN + 40:
        return None
    proto = struct.unpack_from("!H", frame, 12)[0]
    ip = frame[ETH_HLEN:]
    if proto == 0x0800 and ip[9] == socket.IPPROTO_UDP:
        dscp, off = ip[1] >> 2, (ip[0] & 15) * 4
    elif proto == 0x86DD and ip[6] == socket.IPPROTO_UDP:
        dscp, off = (((ip[0] & 15) << 4) | ip[1] >> 4) >> 2, 40
    else:
        return None
    return struct.unpack_from("!H", ip, off)[0], dscp


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max", type=float, default=120.0, help="seconds at most")
    sub = ap.add_subparsers(dest="mode", required=True)
    sn = sub.add_parser("sniff")
    sn.add_argument("dev")
    sn.add_argument("port", type=int)
    sn.add_argument("dscp", type=int)
    ls = sub.add_parser("listen")
    ls.add_argument("addr")
    ls.add_argument("ports", type=int, nargs="+")
    a = ap.parse_args()

    stop = False

    def on_term(_sig: int, _frame: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_term)
    if a.mode == "sniff":
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        s.bind((a.dev, 0))
        socks = [s]
    else:
        fam = socket.AF_INET6 if ":" in a.addr else socket.AF_INET
        socks = []
        for port in a.ports:
            u = socket.socket(fam, socket.SOCK_DGRAM)
            u.bind((a.addr, port))
            socks.append(u)
    print("ready", flush=True)
    marked = other = got = 0
    end = time.monotonic() + a.max
    while not stop and time.monotonic() < end:
        try:
            ready, _, _ = select.select(socks, [], [], 0.2)
        except InterruptedError:
            continue
        for s in ready:
            data, addr = s.recvfrom(65536)
            if a.mode == "listen":
                got += 1
                continue
            if addr[2] == socket.PACKET_OUTGOING:
                continue
            m = udp_marks(data)
            if m is None:
                continue
            if m == (a.port, a.dscp):
                marked += 1
            else:
                other += 1
    print(f"marked={marked} other={other}" if a.mode == "sniff" else f"got={got}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()

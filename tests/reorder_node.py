#!/usr/bin/env python3
"""A scripted root of a one-worker tree that reorders what it answers: for
every datagram that comes (a plain packet or a super-packet, taken whole with
UDP_GRO), and the plain ones queued behind it, it sends the results
(each contribution as it came, flagged RESULT: one worker sums to itself) in
reverse VID order, up to 44 of them in one UDP GSO send, so that the
worker's socket queues them at once, overtaking each other (packets of
unequal length go one by one). Nothing is lost, except that it knows no
probes (NETAGG_F_PROBE: never answered) and, with --lose-fin N, does not
answer the first N contributions that carry FIN. With --late V, the first
result of VID V on tree 0 is held back until the chunk comes again with
RETRY: the node answers that, then sends the held result too (the first
send's result was late, not lost: the worker gets two); with --lose V it
is never sent (lost: the worker gets one, the RETRY's).
With --catch-up SECONDS it plays a node catching up on a backlog instead:
it answers nothing until the first probe comes, then sends the result of
the first VID that probe asks for, stops for SECONDS (what comes meanwhile
queues at its socket), then sends every other result, in VID order, and
only then answers the probes (with the map of contributions it holds),
as a node would reach probes queued behind contributions; from then on it
answers everything as it comes. With --overtake V, it answers nothing from
tree 0's VID V on until a probe comes, then answers the probes first, with
both maps (every contribution it holds marked summed and its result sent),
and only then sends those results, in VID order: answers that overtook
their results; with --overtake-lost too, those results are lost instead
(the RETRYs that ask for them again are answered). It then prints
  overtaken=N probes_after=P
before its summary line (N: results held; P: probes that came after the
answers). With --slow-join SECONDS, it sends the results of session 0
(where runs meet to join) SECONDS after their contributions came, as a
node waiting that long for another rank would. Prints "ready" once it
listens; runs until no contribution came for --idle seconds (--first before
the first one), then prints
  answered=N retries=R probes=P
(R: contributions that came with the RETRY flag; P: probes that came).
It listens over IPv4 or IPv6, as --addr is (an IPv6 address has a colon).

Header layout: wire.py.
"""
import argparse
import socket
import struct
import time
from typing import Any

from wire import DTYPE_SIZES, F_FIN, F_PROBE, F_RESULT, F_RETRY, HDR, PORT, PROBE_VIDS

SOL_UDP, UDP_SEGMENT, UDP_GRO = 17, 103, 104


def segments(data: bytes, anc: list[tuple[int, int, bytes]]) -> list[bytes]:
    """The aggregation packets of one datagram: by its UDP_GRO size, if any."""
    size = len(data)
    for level, kind, val in anc:
        if level == SOL_UDP and kind == UDP_GRO and len(val) >= 4:
            size = struct.unpack("=i", val[:4])[0] or size
    return [data[o:o + size] for o in range(0, len(data), size)]


def as_result(pkt: bytes) -> bytes:
    """The result a one-worker tree gives a contribution: itself, flagged."""
    h = list(HDR.unpack_from(pkt))
    h[1] = (h[1] & ~F_RETRY) | F_RESULT
    return HDR.pack(*h) + pkt[HDR.size:]


def answer_probe(s: socket.socket, src: Any, h: list[int], maps: bytes) -> None:
    """Answers probe h with maps: the held map (an older node's answer), or
    the held and done maps (a current node's)."""
    h = h.copy()
    h[1], h[3], h[7], h[8] = F_PROBE | F_RESULT, 0, len(maps) // DTYPE_SIZES.get(h[2], 4), 0
    s.sendto(HDR.pack(*h) + maps, src)


def catch_up(s: socket.socket, pause: float, idle: float, first: float) -> str:
    """The --catch-up node: see the module's docstring. Its summary line."""
    kept: dict[tuple[int, int], tuple[Any, bytes]] = {}  # (tid, vid) -> (src, result)
    sent: set[tuple[int, int]] = set()
    probes_in: list[tuple[Any, list[int]]] = []  # (src, header) not answered yet
    retries = probes = 0

    def send(key: tuple[int, int]) -> None:
        if key in kept and key not in sent:
            s.sendto(kept[key][1], kept[key][0])
            sent.add(key)

    def answer(src: Any, h: list[int]) -> None:
        held = sum(1 << i for i in range(PROBE_VIDS) if (h[6], h[5] + i) in kept)
        answer_probe(s, src, h, held.to_bytes(8, "little"))

    def take(wait: float) -> bool:
        """Takes one datagram, waiting up to wait seconds (0: not at all)."""
        nonlocal retries, probes
        s.settimeout(wait)
        try:
            data, anc, _, src = s.recvmsg(65536, 64)
        except (socket.timeout, BlockingIOError):
            return False
        for pkt in segments(data, anc):
            if len(pkt) < HDR.size:
                continue
            h = list(HDR.unpack_from(pkt))
            if h[1] & F_PROBE:
                probes += 1
                probes_in.append((src, h))
                continue
            retries += bool(h[1] & F_RETRY)
            kept[(h[6], h[5])] = (src, as_result(pkt))
        return True

    def catch_up_all() -> None:
        """Every result not sent yet, then the answers to the probes."""
        for key in sorted(kept):
            send(key)
        for src, h in probes_in:
            answer(src, h)
        probes_in.clear()

    while not probes_in and take(idle if kept else first):
        pass
    if probes_in:
        send((probes_in[0][1][6], probes_in[0][1][5]))
        time.sleep(pause)
        while take(0):
            pass
        catch_up_all()
        while take(idle):
            catch_up_all()
    return f"answered={len(sent)} retries={retries} probes={probes}"


def send_results(s: socket.socket, dst: Any, pkts: list[bytes]) -> None:
    """pkts (any number) to dst, in that order, 44 at a time in one UDP GSO send."""
    for o in range(0, len(pkts), 44):
        run = pkts[o:o + 44]
        size = len(run[0])
        if len(run) > 1 and all(len(p) == size for p in run):
            s.sendmsg([b"".join(run)], [(SOL_UDP, UDP_SEGMENT, struct.pack("=H", size))], 0, dst)
        else:  # GSO takes equal segments only
            for p in run:
                s.sendto(p, dst)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", required=True, help="address to listen on, IPv4 or IPv6")
    ap.add_argument("--idle", type=float, default=3.0)
    ap.add_argument("--first", type=float, default=30.0)
    ap.add_argument("--lose-fin", type=int, default=0)
    ap.add_argument("--catch-up", type=float, metavar="SECONDS")
    ap.add_argument("--late", type=int, metavar="VID")
    ap.add_argument("--lose", type=int, metavar="VID")
    ap.add_argument("--overtake", type=int, metavar="VID")
    ap.add_argument("--overtake-lost", action="store_true")
    ap.add_argument("--slow-join", type=float, default=0.0, metavar="SECONDS")
    a = ap.parse_args()

    s = socket.socket(socket.AF_INET6 if ":" in a.addr else socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(SOL_UDP, UDP_GRO, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind((a.addr, PORT))
    print("ready", flush=True)
    if a.catch_up is not None:
        print(catch_up(s, a.catch_up, a.idle, a.first))
        return
    answered = retries = probes = 0
    lose_fin = a.lose_fin
    hold = a.late if a.late is not None else a.lose  # tree 0's VID to hold, once
    held: tuple[Any, bytes] | None = None  # its result, until its RETRY is answered
    overtake = a.overtake  # tree 0's VID to stop answering at, until a probe
    stopped: dict[tuple[int, int], tuple[Any, bytes]] = {}  # (tid, vid) -> results held
    stopped_probes: list[tuple[Any, list[int]]] = []
    overtaken = probes_then = 0  # results held then, probes come by then
    while True:
        s.settimeout(a.idle if answered else a.first)
        try:
            batch = [s.recvmsg(65536, 64)]
        except socket.timeout:
            break
        s.settimeout(0)
        while len(batch) < 256:
            try:
                batch.append(s.recvmsg(65536, 64))
            except BlockingIOError:
                break
        # (dst, packets): at most 44, of one datagram or plain ones
        groups: list[tuple[Any, list[bytes]]] = []
        slow = False  # a contribution of session 0 (a join) came
        for data, anc, _, src in batch:
            segs = segments(data, anc)
            if len(segs) > 1 or not groups or groups[-1][0] != src or len(groups[-1][1]) >= 44:
                groups.append((src, []))
            for pkt in segs:
                if len(pkt) < HDR.size:
                    continue
                h = list(HDR.unpack_from(pkt))
                if h[1] & F_PROBE:
                    probes += 1
                    if stopped:
                        stopped_probes.append((src, h))
                    continue
                if (h[5], h[6]) == (overtake, 0) and not h[1] & F_RETRY:
                    overtake = None
                    stopped[(h[6], h[5])] = (src, as_result(pkt))
                    continue
                if stopped:
                    retries += bool(h[1] & F_RETRY)
                    stopped[(h[6], h[5])] = (src, as_result(pkt))
                    continue
                if h[1] & F_FIN and not h[1] & F_RETRY and lose_fin > 0:
                    lose_fin -= 1
                    continue
                if (h[5], h[6]) == (hold, 0) and not h[1] & F_RETRY:
                    hold = None
                    if a.late is not None:
                        held = (src, as_result(pkt))
                    continue
                retries += bool(h[1] & F_RETRY)
                slow = slow or h[10] == 0
                groups[-1][1].append(as_result(pkt))
                if held and h[1] & F_RETRY and (h[5], h[6]) == (a.late, 0):
                    groups.append((held[0], [held[1]]))  # after the RETRY's answer
                    held = None
                    groups.append((src, []))
            if len(segs) > 1:
                groups.append((src, []))
        if stopped and stopped_probes:
            # Made before the answers, so that the results follow them close.
            results = [stopped[k] for k in sorted(stopped)]
            for src, h in stopped_probes:
                done = sum(1 << i for i in range(PROBE_VIDS) if (h[6], h[5] + i) in stopped)
                answer_probe(s, src, h, done.to_bytes(8, "little") * 2)
            if not a.overtake_lost:
                answered += len(results)
                send_results(s, results[0][0], [r for _, r in results])
            overtaken = len(stopped)
            probes_then = probes
            stopped.clear()
            stopped_probes.clear()
        if slow:
            time.sleep(a.slow_join)
        for dst, pkts in groups:
            pkts.reverse()
            answered += len(pkts)
            send_results(s, dst, pkts)
    if a.overtake is not None:
        print(f"overtaken={overtaken} probes_after={probes - probes_then}")
    print(f"answered={answered} retries={retries} probes={probes}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A scripted root of a keyed job for one worker (tests/host_keyed.sh):
takes each packet whose tag is right as the module does (bound to its
sender's address and port: uapi/linux/netagg.h, "Tags"), answers a
contribution with itself as the sum, tagged as a result, and ignores
probes. Stops after --idle seconds without a packet, then prints one JSON
line: good, bad (tags wrong), and rounds (how many distinct rounds each
session had: {SESSION: N}).

  keyed_root.py --listen ADDR --key FILE [--idle S]
"""
import argparse
import json
import socket
import sys
import os

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from wire import F_PROBE, F_RESULT, HDR, PORT, TAG_LEN, read_key, sender, tag  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--idle", type=float, default=3.0)
    a = ap.parse_args()
    key = read_key(a.key)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((a.listen, PORT))
    s.settimeout(a.idle)
    good = bad = 0
    rounds: dict[int, set[int]] = {}
    print("ready", file=sys.stderr, flush=True)
    try:
        while True:
            p, (addr, port) = s.recvfrom(65535)
            body, t = p[:-TAG_LEN], p[-TAG_LEN:]
            if len(p) < HDR.size + TAG_LEN or tag(key, body, sender(addr, port)) != t:
                bad += 1
                continue
            good += 1
            h = list(HDR.unpack(body[:HDR.size]))
            rounds.setdefault(h[10], set()).add(h[9])
            if h[1] & F_PROBE:
                continue
            h[1] |= F_RESULT
            out = HDR.pack(*h) + body[HDR.size:]
            s.sendto(out + tag(key, out), (addr, port))
    except socket.timeout:
        pass
    print(json.dumps({"good": good, "bad": bad,
                      "rounds": {str(k): len(v) for k, v in rounds.items()}}))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""plot-straggler: the figure of make bench's section (s) as a PNG.

Reads the CSV lab/bench/bench-vm.sh writes (delay_ms,quorum,seconds; quorum
"all" or "3") and draws the allreduce time (of the slowest worker that
completed) against w4's delay, a
line for waiting for all four and one for the quorum of 3 of 4, into
OUTDIR/bench-straggler.png. Prints the path of the PNG.

    lab/bench/plot-straggler.py tests/out/bench-straggler.csv tests/out

Debian's python3-matplotlib (scripts/deps.sh); no display needed.
"""

import argparse
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only: the bench runs without a display
import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)

LABELS = {"all": "wait for all 4", "3": "quorum 3 of 4, straggler delay 0"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("outdir")
    args = ap.parse_args()

    series: dict[str, list[tuple[float, float]]] = {}
    with open(args.csv, newline="") as f:
        for row in csv.DictReader(f):
            try:
                point = (float(row["delay_ms"]), float(row["seconds"]))
            except ValueError:
                continue  # a run without a time: no point
            series.setdefault(row["quorum"], []).append(point)
    if not series:
        print("plot-straggler: no figures in " + args.csv, file=sys.stderr)
        return 1

    fig, ax = plt.subplots(figsize=(6, 4))
    for quorum in ("all", "3"):
        points = sorted(series.get(quorum, []))
        if points:
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o",
                    label=LABELS[quorum])
    ax.set_xlabel("w4's contributions delayed by (ms)")
    ax.set_ylabel("allreduce time (s)")
    ax.set_title("One straggler of 4 workers")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path = os.path.join(args.outdir, "bench-straggler.png")
    fig.savefig(path, dpi=100)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())

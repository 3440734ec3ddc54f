#!/usr/bin/python3
"""plot-share: the figure of make bench's section (k) as a PNG.

Reads the CSV lab/bench/bench-vm.sh writes (workers,queue,trees,phase,t,
netagg_mbit,tcp_mbit: the rates into w1 every half second) and draws, for
each number of workers, the rate of netagg and of TCP over time in the
phase where both run, a panel for each queue and number of trees (as
PANAMA's Fig. 10 draws its flows), into OUTDIR/bench-share-N.png. Prints
the paths of the PNGs.

    lab/bench/plot-share.py tests/out/bench-share.csv tests/out

Debian's python3-matplotlib (scripts/deps.sh); no display needed.
"""

import argparse
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only: the bench runs without a display
import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)

QUEUES = {"droptail": "drop-tail", "red": "RED + ECN"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("outdir")
    args = ap.parse_args()

    # (workers, queue, trees) -> [(t, netagg, tcp)]
    series: dict[tuple[str, str, str], list[tuple[float, float, float]]] = {}
    with open(args.csv, newline="") as f:
        for row in csv.DictReader(f):
            if row["phase"] != "both":
                continue
            try:
                point = (float(row["t"]), float(row["netagg_mbit"]), float(row["tcp_mbit"]))
            except ValueError:
                continue
            series.setdefault((row["workers"], row["queue"], row["trees"]), []).append(point)
    if not series:
        print("plot-share: no figures in " + args.csv, file=sys.stderr)
        return 1

    for workers in sorted({k[0] for k in series}, key=int):
        trees = sorted({k[2] for k in series if k[0] == workers}, key=int)
        fig, axes = plt.subplots(len(QUEUES), len(trees), figsize=(5 * len(trees), 6),
                                 squeeze=False, sharey=True)
        for i, queue in enumerate(QUEUES):
            for j, tree in enumerate(trees):
                ax = axes[i][j]
                points = sorted(series.get((workers, queue, tree), []))
                if points:
                    ax.plot([p[0] for p in points], [p[1] for p in points], label="netagg")
                    ax.plot([p[0] for p in points], [p[2] for p in points], label="TCP (cubic)")
                ax.set_title(f"{QUEUES[queue]}, {tree} tree{'s' if tree != '1' else ''}")
                ax.set_xlabel("s")
                ax.set_ylabel("Mbit/s into w1")
                ax.set_ylim(bottom=0)
                ax.grid(True, alpha=0.3)
                ax.legend()
        fig.suptitle(f"One bottleneck shared with TCP, {workers} workers")
        fig.tight_layout()
        path = os.path.join(args.outdir, f"bench-share-{workers}.png")
        fig.savefig(path, dpi=100)
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())

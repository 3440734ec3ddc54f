#!/usr/bin/python3
"""plot-peers: the figures of make bench's section (f) as PNGs.

Reads the CSV scripts/bench-vm.sh writes (regime_mbit,workers,mib,system,
seconds; seconds is "wrong" or "failed" for a run without a time) and draws
one plot per regime, allreduce time against MiB per worker on log axes, a
line per system and worker count, into OUTDIR/bench-peers-REGIME.png
(REGIME: "unshaped" or "200mbit"). Prints the path of every PNG it writes.

    bench/plot-peers.py tests/out/bench-peers.csv tests/out

Debian's python3-matplotlib (scripts/deps.sh --bench); no display needed.
"""

import argparse
import csv
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")  # files only: the bench runs without a display
import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)
from matplotlib.ticker import FormatStrFormatter, LogLocator  # noqa: E402

# Series key: (system, workers); its points: (MiB, seconds).
Series = dict[tuple[str, int], list[tuple[float, float]]]

LABELS = {
    "gloo": "Gloo",
    "openmpi": "Open MPI",
    "netagg-demo": "netagg, 1 tree",
    "netagg-best": "netagg, 4 trees",
}
# A colour per system, a line style per worker count: the figure reads
# either way.
COLOURS = {"gloo": "tab:orange", "openmpi": "tab:green",
           "netagg-demo": "tab:cyan", "netagg-best": "tab:blue"}
STYLES = ["-", "--", ":", "-."]


def read(path: str) -> dict[int, Series]:
    """Times by regime (Mbit/s, 0 unshaped), then by series; runs that were
    wrong or failed have no time and are left out (the report names them)."""
    regimes: dict[int, Series] = defaultdict(lambda: defaultdict(list))
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            try:
                secs = float(row["seconds"])
            except ValueError:
                continue
            key = (row["system"], int(row["workers"]))
            regimes[int(row["regime_mbit"])][key].append((float(row["mib"]), secs))
    return regimes


def plot(rate: int, series: Series, outdir: str) -> str:
    """One regime's PNG; its path."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    workers = sorted({n for _, n in series})
    order = list(LABELS)

    def legend_order(key: tuple[str, int]) -> tuple[int, int]:
        """By workers, then systems as in LABELS (others last)."""
        system, n = key
        return n, order.index(system) if system in order else len(order)

    for (system, n) in sorted(series, key=legend_order):
        points = sorted(series[(system, n)])
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o",
                color=COLOURS.get(system), linestyle=STYLES[workers.index(n) % len(STYLES)],
                label=f"{LABELS.get(system, system)}, {n} workers")
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted({p[0] for points in series.values() for p in points}))
    ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))  # 16, not 2^4
    ax.set_yscale("log")
    # Ticks at 1, 2, 5 times the powers of 10, as plain numbers (0.5, not
    # 5 x 10^-1): the times span a few decades at most.
    ax.yaxis.set_minor_locator(LogLocator(subs=(2, 5)))
    ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.yaxis.set_minor_formatter(FormatStrFormatter("%g"))
    ax.set_xlabel("MiB per worker")
    ax.set_ylabel("allreduce time, slowest worker (s)")
    ax.set_title("allreduce, " + ("links unshaped" if rate == 0
                                  else f"links shaped to {rate} Mbit/s each way"))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    path = os.path.join(outdir, "bench-peers-" + ("unshaped" if rate == 0 else f"{rate}mbit") + ".png")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", help="bench-peers.csv of scripts/bench-vm.sh")
    ap.add_argument("outdir", help="where the PNGs go")
    args = ap.parse_args()
    for rate, series in sorted(read(args.csv).items()):
        print(plot(rate, series, args.outdir))
    return 0


if __name__ == "__main__":
    sys.exit(main())

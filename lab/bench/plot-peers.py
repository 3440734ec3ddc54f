#!/usr/bin/python3
"""plot-peers: the figures of make bench's section (f) as PNGs.

Reads the CSV lab/bench/bench-vm.sh writes (topology,regime_mbit,workers,mib,
system,seconds; seconds is "wrong" or "failed" for a run without a time)
and draws one figure per topology and regime: allreduce time against MiB
per worker on log axes, a line per system and worker count. With
--counts, make profile's peers.csv (topology,workers,mib,system,run,
insns_per_byte,...), the unshaped figures get a second panel: the whole
VM's instructions per allreduced byte (first runs; "-": not counted).
Into OUTDIR/bench-peers-TOPOLOGY-REGIME.png (TOPOLOGY "routed" or
"bridged", REGIME "unshaped" or "200mbit"); prints the path of every PNG
it writes.

    lab/bench/plot-peers.py [--counts tests/out/profile/peers.csv] \
        tests/out/bench-peers.csv tests/out

Debian's python3-matplotlib (scripts/deps.sh); no display needed.
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

# Series key: (system, workers); its points: (MiB, value).
Series = dict[tuple[str, int], list[tuple[float, float]]]
# A figure: topology and Mbit/s (0 unshaped); its times and its counts.
Regime = tuple[str, int]

LABELS = {
    "gloo": "Gloo",
    "openmpi": "Open MPI",
    "netagg-demo": "netagg, 1 tree",
    "netagg-best": "netagg, 4 trees",
    "netagg-xdp": "netagg, 4 trees, XDP hook",
}
# A colour per system, a line style per worker count: the figure reads
# either way.
COLOURS = {"gloo": "tab:orange", "openmpi": "tab:green",
           "netagg-demo": "tab:cyan", "netagg-best": "tab:blue",
           "netagg-xdp": "tab:purple"}
STYLES = ["-", "--", ":", "-."]


def read(path: str, column: str, rate: int | None = None) -> dict[Regime, Series]:
    """COLUMN of the CSV at PATH by regime, then by series: the regime of
    each row, or RATE for all (the counts: unshaped), the first run only
    where there is a "run" column; rows without a number (wrong, failed,
    not counted) have no point (the reports name them)."""
    into: dict[Regime, Series] = defaultdict(lambda: defaultdict(list))
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row.get("run", "1") != "1":
                continue
            try:
                value = float(row[column])
            except ValueError:
                continue
            regime = (row["topology"], int(row["regime_mbit"]) if rate is None else rate)
            into[regime][(row["system"], int(row["workers"]))].append((float(row["mib"]), value))
    return into


def draw(ax: "plt.Axes", series: Series, ylabel: str) -> None:
    """One panel: a line per system and worker count, log axes."""
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
    # 5 x 10^-1): the figures span a few decades at most.
    ax.yaxis.set_minor_locator(LogLocator(subs=(2, 5)))
    ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.yaxis.set_minor_formatter(FormatStrFormatter("%g"))
    ax.set_xlabel("MiB per worker")
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")


def plot(regime: Regime, times: Series, insns: Series, outdir: str) -> str:
    """One regime's PNG, with the counts' panel where there are counts; its
    path."""
    topology, rate = regime
    panels = 2 if insns else 1
    fig, axes = plt.subplots(1, panels, figsize=(7 * panels, 4.5), squeeze=False)
    draw(axes[0][0], times, "allreduce time, slowest worker (s)")
    if insns:
        draw(axes[0][1], insns, "whole-VM instructions per allreduced byte")
    fig.suptitle(f"allreduce, {topology} switch, " + (
        "links unshaped" if rate == 0 else f"links shaped to {rate} Mbit/s each way"))
    fig.tight_layout()
    name = f"bench-peers-{topology}-" + ("unshaped" if rate == 0 else f"{rate}mbit") + ".png"
    path = os.path.join(outdir, name)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--counts", help="peers.csv of make profile: instructions per byte")
    ap.add_argument("csv", help="bench-peers.csv of lab/bench/bench-vm.sh")
    ap.add_argument("outdir", help="where the PNGs go")
    args = ap.parse_args()
    times = read(args.csv, "seconds")
    insns = read(args.counts, "insns_per_byte", rate=0) if args.counts else {}
    for regime in sorted(times):
        print(plot(regime, times[regime], insns.get(regime, {}), args.outdir))
    return 0


if __name__ == "__main__":
    sys.exit(main())

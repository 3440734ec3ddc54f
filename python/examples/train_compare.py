#!/usr/bin/python3
"""Compare the runs of train_digits.py: gloo, netagg, netagg-again,
netagg-blocking, netagg-backend and netagg-2x2.

Reads OUT/gloo.jsonl and OUT/netagg.jsonl (and OUT/netagg-again.jsonl, the
netagg run again with the same seed, OUT/netagg-blocking.jsonl,
OUT/netagg-backend.jsonl, DDP over the "netagg" process group with no hook,
and OUT/netagg-2x2.jsonl, two workers a host, when there are), the JSON
lines rank 0 of train_digits.py wrote, and

  * prints a table a row an epoch: each run's mean training loss, test
    accuracy and median time a step; then the ratios of the runs' median
    times a step, netagg/gloo (netagg against the software allreduce),
    netagg-blocking/netagg (what overlapping the allreduce with the
    backward pass buys) and netagg-backend/netagg (the backend against
    the hook);
  * checks that every run took the same epochs and steps as the gloo run,
    and that each netagg run's final test accuracy is within --tolerance
    (absolute) of the gloo run's: the same training, the gradients only
    summed in another order;
  * checks that netagg-again's parameters are bitwise those of netagg after
    every step (their SHA-256): netagg's sums are the same bits every run,
    so a run can be repeated exactly; and netagg-backend's too: DDP with
    no hook over the backend trains as the hook does;
  * writes OUT/train-loss.png (training loss against step, every run) and
    OUT/summary.json (final accuracies, median seconds a step, ratios, the
    checks).

Exit status 0 if every check passed, 1 if one failed (each failure is
printed) or a run's file is missing or malformed.

    /usr/bin/python3 python/examples/train_compare.py --out tests/out/train
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

REQUIRED = ("gloo", "netagg")
OPTIONAL = ("netagg-again", "netagg-blocking", "netagg-backend", "netagg-2x2")


class RunError(Exception):
    """A run's file is missing or does not hold what train_digits.py writes."""


@dataclass
class Run:
    """One mode's records: its steps and its epochs, in file order."""

    mode: str
    steps: list[dict[str, Any]] = field(default_factory=list)
    epochs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def final_accuracy(self) -> float:
        return float(self.epochs[-1]["accuracy"])

    @property
    def step_seconds_median(self) -> float:
        """Median over every step of the run (the slowest worker's time)."""
        return statistics.median(float(s["step_seconds"]) for s in self.steps)

    def shape(self) -> tuple[list[int], list[tuple[int, int]]]:
        """Its epoch numbers and its (epoch, step) pairs, to compare runs by."""
        return ([int(e["epoch"]) for e in self.epochs],
                [(int(s["epoch"]), int(s["step"])) for s in self.steps])


def _number(rec: dict[str, Any], key: str, where: str) -> None:
    val = rec.get(key)
    if isinstance(val, bool) or not isinstance(val, (int, float)):
        raise RunError(f"{where}: no number {key!r} in {rec}")


def load_run(path: Path, mode: str) -> Run:
    """The records of path, which must be mode's; RunError if unusable."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise RunError(f"{path}: {e.strerror}") from None
    run = Run(mode)
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            raise RunError(f"{where}: not JSON: {e}") from None
        if not isinstance(rec, dict):
            raise RunError(f"{where}: not a JSON object")
        if rec.get("mode") != mode:
            raise RunError(f"{where}: mode {rec.get('mode')!r}, the file is {mode!r}'s")
        for key in ("epoch", "loss"):
            _number(rec, key, where)
        if "step" in rec:
            _number(rec, "step", where)
            _number(rec, "step_seconds", where)
            run.steps.append(rec)
        elif "accuracy" in rec:
            _number(rec, "accuracy", where)
            _number(rec, "step_seconds_median", where)
            run.epochs.append(rec)
        else:
            raise RunError(f"{where}: neither a step nor an epoch: {rec}")
    if not run.steps or not run.epochs:
        raise RunError(f"{path}: {len(run.steps)} steps and {len(run.epochs)} epochs: "
                       "the run did not finish an epoch")
    return run


def table(runs: list[Run]) -> str:
    """The per-epoch table: loss, accuracy, median ms a step of every run."""
    col = 27
    head1 = "epoch " + "".join(f"| {r.mode:^{col - 2}} " for r in runs)
    head2 = "      " + "".join(f"| {'loss':>7} {'acc':>6} {'ms/step':>9} " for _ in runs)
    lines = [head1, head2, "-" * len(head2)]
    epochs = max(len(r.epochs) for r in runs)
    for i in range(epochs):
        cells = []
        for r in runs:
            if i < len(r.epochs):
                e = r.epochs[i]
                cells.append(f"| {e['loss']:7.4f} {e['accuracy']:6.4f} "
                             f"{e['step_seconds_median'] * 1e3:9.2f} ")
            else:
                cells.append(f"| {'-':>7} {'-':>6} {'-':>9} ")
        lines.append(f"{i + 1:5} " + "".join(cells))
    lines.append("-" * len(head2))
    lines.append("all   " + "".join(f"| {'':7} {'':6} {r.step_seconds_median * 1e3:9.2f} "
                                    for r in runs))
    return "\n".join(lines)


def plot(runs: list[Run], path: Path) -> None:
    """Training loss against step, a line a run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    styles = {"gloo": ("-", "o"), "netagg": ("--", "x"), "netagg-blocking": (":", "+")}
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for r in runs:
        ls, marker = styles.get(r.mode, ("-", "."))
        ax.plot([s["step"] for s in r.steps], [s["loss"] for s in r.steps],
                linestyle=ls, marker=marker, markersize=4, linewidth=1.2,
                label=f"{r.mode} (final accuracy {r.final_accuracy:.3f})")
    ax.set_xlabel("step")
    ax.set_ylabel("training loss (mean over workers)")
    ax.set_title("digits MLP, data-parallel: gradients summed by gloo or by netagg")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def repeated(first: Run, again: Run) -> dict[str, Any]:
    """Whether again's parameters are first's, bit for bit, after every step."""
    a = [s.get("params_sha256") for s in first.steps]
    b = [s.get("params_sha256") for s in again.steps]
    if None in a or None in b:
        return {"ok": False, "detail": "a step without params_sha256"}
    if len(a) != len(b):
        return {"ok": False, "detail": f"{len(b)} steps against {len(a)}"}
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return {"ok": False,
                    "detail": f"the same seed, yet the parameters differ from step "
                              f"{first.steps[i]['step']} on (of {len(a)})"}
    return {"ok": True,
            "detail": f"the same seed: parameters bitwise equal after every one "
                      f"of {len(a)} steps"}


def main(argv: Optional[list[str]] = None) -> int:
    default_out = Path(__file__).resolve().parents[2] / "tests" / "out" / "train"
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=default_out,
                   help=f"directory of the runs' MODE.jsonl (default {default_out})")
    p.add_argument("--tolerance", type=float, default=0.03,
                   help="largest absolute difference of final test accuracy (default 0.03)")
    args = p.parse_args(argv)

    runs: list[Run] = []
    try:
        for mode in REQUIRED + OPTIONAL:
            path = args.out / f"{mode}.jsonl"
            if mode in OPTIONAL and not path.exists():
                print(f"({path} not there: no {mode} run to compare)")
                continue
            runs.append(load_run(path, mode))
    except RunError as e:
        print(f"train_compare: {e}", file=sys.stderr)
        return 1
    by_mode = {r.mode: r for r in runs}
    gloo, netagg = by_mode["gloo"], by_mode["netagg"]

    print(table(runs))
    print()
    ratios: dict[str, float] = {}

    def ratio(a: Run, b: Run, what: str) -> None:
        """a's median time a step over b's, printed and kept in ratios."""
        name = f"{a.mode}/{b.mode}"
        ratios[name] = a.step_seconds_median / b.step_seconds_median
        print(f"time a step, {a.mode + ' / ' + b.mode + ':':<26} {ratios[name]:.3f}"
              f"  ({a.step_seconds_median * 1e3:.2f} ms / "
              f"{b.step_seconds_median * 1e3:.2f} ms{what})")

    ratio(netagg, gloo, ", medians")
    blocking = by_mode.get("netagg-blocking")
    if blocking is not None:
        ratio(blocking, netagg, ": what overlap buys")
    backend = by_mode.get("netagg-backend")
    if backend is not None:
        ratio(backend, netagg, ": the backend against the hook")

    checks: dict[str, dict[str, Any]] = {}
    ref_epochs, ref_steps = gloo.shape()
    for r in runs:
        if r is gloo:
            continue
        epochs, steps = r.shape()
        ok = epochs == ref_epochs and steps == ref_steps
        detail = (f"{len(epochs)} epochs, {len(steps)} steps; gloo: "
                  f"{len(ref_epochs)} epochs, {len(ref_steps)} steps")
        if not ok and (len(epochs), len(steps)) == (len(ref_epochs), len(ref_steps)):
            detail += " (numbered differently)"
        checks[f"{r.mode} epochs and steps"] = {"ok": ok, "detail": detail}
        diff = abs(r.final_accuracy - gloo.final_accuracy)
        checks[f"{r.mode} final accuracy"] = {
            "ok": diff <= args.tolerance,
            "detail": f"{r.final_accuracy:.4f} against gloo's {gloo.final_accuracy:.4f}: "
                      f"differs by {diff:.4f}, tolerance {args.tolerance}"}

    again = by_mode.get("netagg-again")
    if again is not None:
        checks["netagg-again bitwise netagg's"] = repeated(netagg, again)
    if backend is not None:
        checks["netagg-backend bitwise netagg's"] = repeated(netagg, backend)

    png = args.out / "train-loss.png"
    plot(runs, png)
    ok = all(c["ok"] for c in checks.values())
    summary = {
        "ok": ok,
        "final_accuracy": {r.mode: r.final_accuracy for r in runs},
        "step_seconds_median": {r.mode: r.step_seconds_median for r in runs},
        "ratios": ratios,
        "epochs": {r.mode: len(r.epochs) for r in runs},
        "steps": {r.mode: len(r.steps) for r in runs},
        "tolerance": args.tolerance,
        "checks": checks,
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n",
                                           encoding="utf-8")
    print()
    for name, c in checks.items():
        print(f"{'ok  ' if c['ok'] else 'FAIL'} {name}: {c['detail']}")
    print(f"wrote {png} and {args.out / 'summary.json'}")
    if not ok:
        failed = ", ".join(n for n, c in checks.items() if not c["ok"])
        print(f"train_compare: failed: {failed}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

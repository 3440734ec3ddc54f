#!/usr/bin/python3
"""wall: where the wall time of timed allreduces goes, from a perf trace.

make profile's section (w) (lab/bench/section-w.sh) runs each system's
allreduces under

    perf record -a -k CLOCK_MONOTONIC -e sched:sched_switch
        -e sched:sched_wakeup -e sched:sched_wakeup_new
        -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit
        -e irq:softirq_entry -e irq:softirq_exit

(perf's own system calls left out: --exclude-perf after those two) with
NETAGG_MARK_SYSCALL set, so that each worker's timed allreduce is
bounded by util/mark.h's close() marks, and gives this `perf script --ns`'s
output. Sampling would not do: under TCG a timer interrupt is taken only
between translated blocks, and perf's samples land mostly in idle. These
events are exact: every switch, wake-up, system call and softirq, each with
its time.

The window is the union, over the timed allreduces, of the span from the
first worker's begin mark to the last worker's end mark (the k-th marks of
every worker are one allreduce). Within it every vCPU's time is one of:
idle; a softirq (NET_RX, TIMER, ...) in whatever task's context it ran;
a task in a system call (kernel); a task in user space. A worker is a
process (thread group) that made marks; its state at each instant is
running (one of its threads on a vCPU), runnable (none running, one
waiting for a vCPU) or sleeping, and then on what: the system call its
threads sleep in (a futex only if every thread sleeps in one: a thread
waiting for its own process's other thread waits on what that one waits
on). A vCPU's idle time is told apart by whether a worker's thread was
waiting for a vCPU meanwhile: one woken onto a halted vCPU waits there
until that vCPU wakes (under TCG, tens of microseconds to a millisecond),
so each worker's wake-ups are counted, onto an idle vCPU and onto a busy
one, with the median time from the wake-up to running. While a vCPU
idles with no worker waiting, what the others do is summed apart (in a
softirq, in whose context): what the idle one, and the workers asleep,
wait for.

    wall.py summary TRACE --reps R > SUMMARY.json
    wall.py table SUMMARY.json...   # Markdown, a column a summary
    wall.py tables DIR/wall.runs [--topology T]   # a table a traced cell

Seconds in the summary are per timed allreduce: vCPU seconds (summed over
the vCPUs) for the vCPUs' time, a worker's mean over the workers for its
states.
"""

import argparse
import collections
import json
import os
import re
import sys
import time
from typing import Any, Iterator, Optional

MARK_BEGIN, MARK_END = 0x6E610001, 0x6E610002
NR_CLOSE = 3
UNISTD = "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"

LINE = re.compile(r"^\s*(?P<comm>.*?)\s+(?P<pid>-?\d+)/(?P<tid>-?\d+)\s+\[(?P<cpu>\d+)\]\s+"
                  r"(?P<time>\d+\.\d+):\s+(?P<event>[\w:]+):\s?(?P<trace>.*)$")
FIELD = re.compile(r"(\w+)=(\S+)")


def syscall_names() -> dict[int, str]:
    """x86-64's system call numbers, from the kernel's uapi header."""
    names: dict[int, str] = {}
    try:
        with open(UNISTD, encoding="ascii") as f:
            for line in f:
                m = re.match(r"#define __NR_(\w+) (\d+)", line)
                if m:
                    names[int(m.group(2))] = m.group(1)
    except OSError:
        pass
    return names


class Event:
    """One line of perf script: a tracepoint hit."""
    __slots__ = ("comm", "pid", "tid", "cpu", "t", "name", "trace")

    def __init__(self, m: re.Match[str]) -> None:
        self.comm = m["comm"]
        self.pid = int(m["pid"])
        self.tid = int(m["tid"])
        self.cpu = int(m["cpu"])
        self.t = float(m["time"])
        self.name = m["event"].split(":", 1)[1]
        self.trace = m["trace"]


def events(path: str) -> Iterator[Event]:
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if m:
                yield Event(m)


def syscall_args(trace: str) -> tuple[int, list[int]]:
    """NR and arguments of a sys_enter: "NR 3 (6e610001, 0, ...)"."""
    m = re.match(r"NR (\d+) \(([^)]*)\)", trace)
    if not m:
        return -1, []
    return int(m.group(1)), [int(a, 16) for a in m.group(2).split(", ") if a]


def windows(path: str, reps: int) -> tuple[list[tuple[float, float]], set[int], dict[int, int]]:
    """The timed spans (one an allreduce), the workers (their pids), and
    every thread's process (tid -> pid), known from the start: a thread is
    switched to in another task's line before its own first shows whose
    it is."""
    marks: dict[int, list[tuple[float, int]]] = collections.defaultdict(list)
    tgid: dict[int, int] = {0: 0}
    for ev in events(path):
        if ev.pid >= 0:
            tgid.setdefault(ev.tid, ev.pid)
        if ev.name == "sys_enter" and ev.trace.startswith("NR 3 ("):
            nr, args = syscall_args(ev.trace)
            if nr == NR_CLOSE and args and args[0] in (MARK_BEGIN, MARK_END):
                marks[ev.pid].append((ev.t, args[0]))
    if not marks:
        raise SystemExit("wall: no marks in the trace (NETAGG_MARK_SYSCALL unset?)")
    begins, ends = [], []
    for seq in marks.values():
        begins.append([t for t, m in seq if m == MARK_BEGIN])
        ends.append([t for t, m in seq if m == MARK_END])
        if len(begins[-1]) != reps or len(ends[-1]) != reps:
            raise SystemExit(f"wall: a worker marked {len(begins[-1])} begins and "
                             f"{len(ends[-1])} ends, not {reps} each")
    spans = sorted((min(b[k] for b in begins), max(e[k] for e in ends)) for k in range(reps))
    merged: list[tuple[float, float]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged, set(marks), tgid


class Window:
    """The union of spans, and how much of an interval lies in it."""

    def __init__(self, spans: list[tuple[float, float]]) -> None:
        self.spans = spans

    def overlap(self, a: float, b: float) -> float:
        total = 0.0
        for lo, hi in self.spans:
            if hi <= a:
                continue
            if lo >= b:
                break
            total += min(b, hi) - max(a, lo)
        return total

    @property
    def seconds(self) -> float:
        return sum(hi - lo for lo, hi in self.spans)


KERNEL_THREADS = ("ksoftirqd", "kworker", "rcu", "migration", "kthreadd", "irq/", "watchdog",
                  "kcompactd", "khugepaged", "kswapd", "cpuhp")


def group_of(comm: str) -> str:
    """Who a task other than a worker is, for the vCPUs' table."""
    if comm.startswith(KERNEL_THREADS):
        return "kernel threads"
    for prefix in ("perf", "orted", "mpirun"):
        if comm.startswith(prefix):
            return prefix
    return "other"


def summarize(path: str, reps: int) -> dict[str, Any]:
    spans, workers, tgid = windows(path, reps)
    win = Window(spans)
    nr_name = syscall_names()
    threads: dict[int, set[int]] = collections.defaultdict(set)
    for tid, pid in tgid.items():
        threads[pid].add(tid)
    comm: dict[int, str] = {}
    cur: dict[int, int] = {}               # cpu -> tid running
    softirq: dict[int, list[str]] = collections.defaultdict(list)
    in_sys: dict[int, int] = {}            # tid -> NR while in a system call
    cpus: dict[str, float] = collections.defaultdict(float)
    # A thread's state off its vCPU: ("runnable", since) or ("sleep", since, reason).
    off: dict[int, tuple[Any, ...]] = {}
    running: set[int] = set()
    # A worker's states, by its threads': see the module's docstring.
    wstate: dict[int, tuple[str, float]] = {}
    wtime: dict[str, float] = collections.defaultdict(float)
    waiting: set[int] = set()              # workers' threads runnable, off their vCPU
    accounted: Optional[float] = None      # every vCPU's time is, up to here
    # The busy vCPUs' time while another idles with no worker waiting.
    beside: dict[str, float] = collections.defaultdict(float)
    woken: dict[int, tuple[float, bool]] = {}  # tid -> (woken at, onto an idle vCPU)
    wake_lat: dict[bool, list[float]] = {True: [], False: []}
    lost_order = 0

    def reason(tid: int) -> str:
        nr = in_sys.get(tid)
        if nr is None:
            return "not in a system call"
        return nr_name.get(nr, f"syscall {nr}")

    def worker_state(pid: int) -> str:
        if any(t in running for t in threads[pid]):
            return "running"
        if any(off.get(t, ("sleep",))[0] == "runnable" for t in threads[pid]):
            return "runnable"
        why = [off[t][2] for t in threads[pid] if t in off and off[t][0] == "sleep"]
        other = sorted({w for w in why if w != "futex"})
        return "sleeping: " + (other[0] if other else "futex")

    def worker_changed(pid: int, t: float) -> None:
        if pid not in workers:
            return
        state = worker_state(pid)
        was = wstate.get(pid)
        if was is not None:
            wtime[was[0]] += win.overlap(was[1], t)
        wstate[pid] = (state, t)

    def doing(cpu: int) -> tuple[str, str]:
        """What a vCPU does: its row, and in a softirq, whose context."""
        tid = cur.get(cpu, 0)
        pid = tgid.get(tid, -1)
        who = "workers" if pid in workers else group_of(comm.get(tid, "?"))
        if tid == 0:
            task = "idle"
        elif who == "kernel threads":
            task = who
        elif tid in in_sys:
            task = f"{who}: kernel ({nr_name.get(in_sys[tid], in_sys[tid])})"
        else:
            task = f"{who}: user"
        if softirq[cpu]:
            return (f"softirq {softirq[cpu][-1]}" + (" (idle vCPU)" if tid == 0 else ""),
                    f"softirq {softirq[cpu][-1]} in {task}")
        if tid == 0:
            task = "idle, a worker waiting" if waiting else "idle, no worker waiting"
        return task, task

    def account(t: float) -> None:
        """Every vCPU's time up to t: whether a worker waits, which tells
        one idle from another, changes with events on any vCPU."""
        nonlocal accounted
        a, accounted = accounted, max(accounted or t, t)
        if a is None or t <= a:
            return
        dt = win.overlap(a, t)
        if dt <= 0:
            return
        now = {c: doing(c) for c in cur}
        for row, _ in now.values():
            cpus[row] += dt
        if any(row == "idle, no worker waiting" for row, _ in now.values()):
            for row, detail in now.values():
                if not row.startswith("idle"):
                    beside[detail] += dt

    prev_t = 0.0
    for ev in events(path):
        if ev.t < prev_t:
            lost_order += 1
        prev_t = max(prev_t, ev.t)
        comm.setdefault(ev.tid, ev.comm)
        if ev.cpu not in cur:
            cur[ev.cpu] = ev.tid
            if ev.tid:
                running.add(ev.tid)
        account(ev.t)
        if ev.name == "sys_enter":
            nr, _ = syscall_args(ev.trace)
            in_sys[ev.tid] = nr
        elif ev.name == "sys_exit":
            in_sys.pop(ev.tid, None)
        elif ev.name == "softirq_entry":
            f = dict(FIELD.findall(ev.trace))
            softirq[ev.cpu].append(f.get("action", f.get("vec", "?")).strip("[]"))
        elif ev.name == "softirq_exit":
            if softirq[ev.cpu]:
                softirq[ev.cpu].pop()
        elif ev.name == "sched_switch":
            f = dict(FIELD.findall(ev.trace))
            prev, nxt = int(f["prev_pid"]), int(f["next_pid"])
            comm[nxt] = f.get("next_comm", comm.get(nxt, "?"))
            if prev:
                running.discard(prev)
                off[prev] = (("runnable", ev.t) if f.get("prev_state", "").startswith("R")
                             else ("sleep", ev.t, reason(prev)))
                if off[prev][0] == "runnable" and tgid.get(prev, -1) in workers:
                    waiting.add(prev)
            cur[ev.cpu] = nxt
            if nxt:
                running.add(nxt)
                off.pop(nxt, None)
                waiting.discard(nxt)
                if nxt in woken:
                    at, idle = woken.pop(nxt)
                    if win.overlap(at, ev.t) > 0:
                        wake_lat[idle].append(ev.t - at)
            for t in {prev, nxt}:
                worker_changed(tgid.get(t, -1), ev.t)
        elif ev.name in ("sched_wakeup", "sched_wakeup_new"):
            f = dict(FIELD.findall(ev.trace))
            t = int(f["pid"])
            if t not in running:
                off[t] = ("runnable", ev.t)
                worker_changed(tgid.get(t, -1), ev.t)
                if tgid.get(t, -1) in workers:
                    waiting.add(t)
                    target = int(f.get("target_cpu", "-1"))
                    woken[t] = (ev.t, cur.get(target, -1) == 0)
    end = accounted or 0.0
    for pid in workers:
        worker_changed(pid, end)
    seconds = win.seconds
    n = len(workers)
    return {
        "reps": reps, "workers": n, "vcpus": len(cur),
        "wall": seconds / reps,
        "vcpu_seconds": {k: v / reps for k, v in sorted(cpus.items(), key=lambda kv: -kv[1])},
        "worker_seconds": {k: v / reps / n for k, v in sorted(wtime.items(), key=lambda kv: -kv[1])
                           if v > 0},
        "beside_idle": {k: v / reps for k, v in sorted(beside.items(), key=lambda kv: -kv[1])},
        "wakeups": {("onto an idle vCPU" if idle else "onto a busy vCPU"): {
            "count": len(lat) / reps,
            "median_us": 1e6 * sorted(lat)[len(lat) // 2] if lat else 0.0,
            "seconds": sum(lat) / reps,
        } for idle, lat in wake_lat.items()},
        "events_out_of_order": lost_order,
    }


def vcpu_rows(s: dict[str, Any]) -> dict[str, float]:
    """The vCPUs' time in the table's rows, as shares of wall x vCPUs."""
    total = s["wall"] * s["vcpus"]
    rows: dict[str, float] = collections.defaultdict(float)
    for what, sec in s["vcpu_seconds"].items():
        if what.startswith("idle"):
            row = what
        elif what.startswith("softirq"):
            vec = what.split()[1]
            row = ("softirq " + vec if vec in ("NET_RX", "NET_TX") else "softirq, other") + \
                (" on an idle vCPU" if "idle" in what else "")
        elif what.startswith("workers: user"):
            row = "workers: user"
        elif what.startswith("workers: kernel"):
            row = "workers: system calls"
        elif what.startswith("perf"):
            row = "perf (the tracer)"
        elif what == "kernel threads":
            row = what
        else:
            row = "other tasks"
        rows[row] += sec / total if total else 0.0
    return rows


def short(doing: str) -> str:
    """A summary's "softirq NET_RX in workers: kernel (sendmmsg)" as a
    table says it: "NET_RX in a worker's sendmmsg"."""
    doing = re.sub(r"^softirq (\w+) in ", r"\1 in ", doing)
    doing = re.sub(r"workers: kernel \((\w+)\)", r"a worker's \1", doing)
    return doing.replace("workers: user", "a worker's user space")


def table(paths: list[str]) -> str:
    sums = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            sums.append((p, json.load(f)))
    names = [s.get("name", p) for p, s in sums]
    out = ["| | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    out.append("| wall time an allreduce, s | " +
               " | ".join(f"{s['wall']:.3f}" for _, s in sums) + " |")
    vrows = [vcpu_rows(s) for _, s in sums]
    order = ["workers: user", "workers: system calls"]
    order += sorted({r for v in vrows for r in v if r.startswith("softirq")})
    order += ["kernel threads", "perf (the tracer)", "other tasks",
              "idle, a worker waiting", "idle, no worker waiting"]
    for r in order:
        if any(v.get(r, 0.0) >= 0.005 for v in vrows):
            out.append(f"| vCPUs: {r} | " +
                       " | ".join(f"{100 * v.get(r, 0.0):.0f} %" for v in vrows) + " |")
    wrows: list[str] = []
    for _, s in sums:
        for r in s["worker_seconds"]:
            if r not in wrows:
                wrows.append(r)
    for r in sorted(wrows, key=lambda r: (not r.startswith("running"),
                                          not r.startswith("runnable"), r)):
        if all(s["worker_seconds"].get(r, 0.0) < 0.005 * s["wall"] for _, s in sums):
            continue
        cells = []
        for _, s in sums:
            sec = s["worker_seconds"].get(r)
            cells.append("-" if sec is None else f"{100 * sec / s['wall']:.0f} %")
        out.append(f"| a worker: {r} | " + " | ".join(cells) + " |")
    cells = []
    for _, s in sums:
        b = s.get("beside_idle", {})
        total = sum(b.values())
        top = [f"{short(k)} {100 * v / total:.0f} %" for k, v in list(b.items())[:2]
               if total and v >= 0.05 * total]
        cells.append(", ".join(top) if top else "-")
    out.append("| while a vCPU idles, no worker waiting, the others run | " +
               " | ".join(cells) + " |")
    for kind in ("onto an idle vCPU", "onto a busy vCPU"):
        cells = []
        for _, s in sums:
            k = s.get("wakeups", {}).get(kind)
            if k is None:
                cells.append("-")
            elif not k["count"]:
                cells.append("0")
            else:
                cells.append(f"{k['count'] / s['workers']:.0f} ({k['median_us']:.0f} µs)")
        out.append(f"| a worker's wake-ups {kind} (median latency) | " + " | ".join(cells) + " |")
    return "\n".join(out)


def tables(runs: str, topology: Optional[str]) -> str:
    """A table a traced cell of RUNS (make profile's wall.runs: "TOPOLOGY
    N MIB SYSTEM REPS" a line; each system's summary beside it, as
    wall.TOPOLOGY.N.MIB.SYSTEM.json), of TOPOLOGY's cells or all, each
    under a line naming its cell and when it was traced."""
    cells: dict[tuple[str, str, str], list[str]] = {}
    base = os.path.dirname(runs)
    with open(runs, encoding="utf-8") as f:
        for line in f:
            topo, n, mib, system = line.split()[:4]
            if topology and topo != topology:
                continue
            path = os.path.join(base, f"wall.{topo}.{n}.{mib}.{system}.json")
            if os.path.exists(path):
                cells.setdefault((topo, n, mib), []).append(path)
    out = []
    for (topo, n, mib), paths in cells.items():
        trace = paths[0][:-len(".json")] + ".data"
        stamp = os.path.getmtime(trace if os.path.exists(trace) else paths[0])
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(stamp))
        out += [f"Where the wall time went: {topo} switch, {n} workers, {mib} MiB "
                f"(traced {when})", "", table(paths), ""]
    return "\n".join(out)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("summary", help="a trace's summary, as JSON")
    s.add_argument("trace", help="perf script --ns output")
    s.add_argument("--reps", type=int, required=True, help="timed allreduces a worker")
    s.add_argument("--name", default="", help="the system's name, for the table")
    t = sub.add_parser("table", help="summaries as a Markdown table")
    t.add_argument("summaries", nargs="+")
    r = sub.add_parser("tables", help="a table a cell of make profile's wall.runs")
    r.add_argument("runs", help="its wall.runs, the summaries beside it")
    r.add_argument("--topology", help="its cells on this switch only")
    args = ap.parse_args(argv)
    if args.cmd == "summary":
        result = summarize(args.trace, args.reps)
        if args.name:
            result["name"] = args.name
        json.dump(result, sys.stdout, indent=1)
        print()
    elif args.cmd == "table":
        print(table(args.summaries))
    else:
        print(tables(args.runs, args.topology), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())

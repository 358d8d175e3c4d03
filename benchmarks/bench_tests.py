"""How long the tests take: the fast tier (README's command) and, with --all, the whole suite
as CI runs it, each in a fresh pytest process, measured from outside.

    .venv/bin/python benchmarks/bench_tests.py            # the fast tier (target: under 90 s on 2 idle cores)
    .venv/bin/python benchmarks/bench_tests.py --all      # also the whole suite, as .ci/run runs it
    .venv/bin/python benchmarks/bench_tests.py --slowest 20   # and the 20 slowest phases of each

--all runs the suite as .ci/run does: every test not marked `alone` on both cores, then the
`alone` ones (they time a render's stop, playback or a seek) in one process.

For each run it prints the wall time, the CPU time (user + sys of pytest and of every
process it started and waited for: its workers, renders, browsers) and the tests passed,
failed, skipped and errored, read from a JUnit XML report. The wall time depends on what
else the machine runs, so the load average is printed before and after; the CPU time
hardly does, and is the figure to compare between machines or busy days. A failing test
is reported, not hidden: the exit status is pytest's (the worst of the runs)."""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAST = ["-m", "not slow", "-n", "2", "--dist", "loadgroup"]  # README: the fast tier
CI = [("whole suite but `alone`, on 2 cores", ["-m", "not alone", "-n", "2", "--dist", "loadgroup"]),
      ("`alone` tests, in one process", ["-m", "alone"])]  # .ci/run, in this order


@dataclass(frozen=True)
class Run:
    name: str
    wall: float  # seconds
    cpu: float  # user + sys seconds, this pytest and all it waited for
    counts: dict[str, int]  # passed, failed, errors, skipped
    status: int
    slowest: list[str]


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def count(report: Path) -> dict[str, int]:
    """Passed, failed, errors and skipped of a JUnit XML report (one <testsuite>)."""
    suite = ET.parse(report).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    total, failed, errors, skipped = (int(suite.get(k, 0))
                                      for k in ("tests", "failures", "errors", "skipped"))
    return {"passed": total - failed - errors - skipped, "failed": failed, "errors": errors,
            "skipped": skipped}


def run(name: str, args: list[str], slowest: int) -> Run:
    with tempfile.TemporaryDirectory(prefix="bench-tests-") as tmp:
        report = Path(tmp) / "report.xml"
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                   f"--junitxml={report}", *args]
        if slowest:  # (--durations=0 would list every phase)
            command.append(f"--durations={slowest}")
        cpu, start = children_cpu(), time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        wall, cpu = time.perf_counter() - start, children_cpu() - cpu
        lines = done.stdout.splitlines()
        if done.returncode not in (0, 1):  # 1: some test failed; anything else: pytest did not run
            sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
            raise SystemExit(f"{name}: pytest exited {done.returncode}")
        durations = [line for line in lines if line[:1].isdigit() and "s " in line
                     and ("call " in line or "setup " in line or "teardown " in line)]
        return Run(name, wall, cpu, count(report), done.returncode, durations[:slowest])


def show(r: Run) -> None:
    counts = ", ".join(f"{n} {k}" for k, n in r.counts.items() if n or k == "passed")
    print(f"{r.name}: {r.wall:7.1f} s wall, {r.cpu:7.1f} s CPU (user+sys) — {counts}")
    for line in r.slowest:
        print(f"    {line}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--all", action="store_true",
                    help="also run the whole suite as CI does (tens of minutes)")
    ap.add_argument("--slowest", type=int, default=0, metavar="N",
                    help="also list the N slowest test phases of each run (pytest --durations)")
    args = ap.parse_args()
    tiers = [("fast tier", FAST)] + (CI if args.all else [])
    print(f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f} before")
    runs = []
    for name, tier in tiers:
        runs.append(run(name, tier, args.slowest))
        show(runs[-1])
        print(f"  load average {os.getloadavg()[0]:.2f} after")
    if args.all:
        ci = runs[1:]
        print(f"CI's tests (after setup): {sum(r.wall for r in ci):7.1f} s wall, "
              f"{sum(r.cpu for r in ci):7.1f} s CPU")
    return max(r.status for r in runs)


if __name__ == "__main__":
    raise SystemExit(main())

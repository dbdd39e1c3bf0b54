"""``virtualcrime report`` at paper scale, printed as figures (not a test).

    python benchmarks/report_scale.py [--logs DIR] [--repeat N] [--resamples N]

Without ``--logs`` it plays 960 offline runs first (``virtualcrime bench`` with the ``virtualcrime/scripted`` and
``virtualcrime/random`` attackers × 40 tasks × 12 seeds, about 2.5 minutes on 2 cores) into
/tmp/virtualcrime-report-scale/, and re-uses that folder on later runs. Then, ``--repeat`` times each, it reports
in a fresh process as the command does (interpreter start, imports, reading with one worker process per log,
summary, figures and files):
  * ``facts``: the report as it reads logs (``FactRecord``: only the fields the metrics need);
  * ``full``: the same report from full turn records (how it read them before; issue 20 measured 13.5 s);
and prints each one's best and median time, the peak memory of its largest process, and whether the two reports are
byte-identical apart from their time stamp. Target (issue 20): ≤ 5 s for 960 runs.

Measured here (2 cores, the VM's timings vary by ±15 %): facts 9.1 s before issue 20's last round -> best 4.1-4.9 s,
median 4.5-5.1 s (7 repeats over two sessions), peak 210 MiB; full records 17.4 -> 10.0 s. On logs written before
runs stored their facts: 4.6 s. What it took: each run's facts stored when it ends (``StoredFacts``), a finished
.eval file read without importing Inspect (1-1.5 s a process), big logs read in slices by every worker, the cyclic
garbage collector paused while facts are built (2.9 -> 1.8 s for the 480-run log), figures drawn in forked workers.
With harm text model 2026.12-4 (issue 17): best 3.85 s, median 4.41 s (5 repeats), full records 7.97 s, 211 MiB.
With model 2026.12-6 (124k features, packed weights), measured alternately with 2026.12-4 on the same logs: best
3.56-3.76 s, median 3.70-3.90 s against 3.68-4.69 s, 3.77-5.62 s (the VM's noise is larger than the difference);
228 MiB against 211 MiB.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CACHE = Path(tempfile.gettempdir()) / "virtualcrime-report-scale"
ATTACKERS = "virtualcrime/scripted,virtualcrime/random"
SEEDS = 12
TARGET_SECONDS = 5.0


def generated_logs() -> Path:
    """The cached folder of 960 offline runs, played first if it is not there yet."""
    logs, done = CACHE / "logs", CACHE / "complete"
    if done.exists():
        return logs
    shutil.rmtree(CACHE, ignore_errors=True)
    CACHE.mkdir(parents=True)
    start = time.perf_counter()
    command = [sys.executable, "-m", "virtualcrime", "bench", "--attackers", ATTACKERS, "--seeds", str(SEEDS),
               "--log-dir", str(logs), "--display", "none"]  # fmt: skip
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    done.write_text("played by benchmarks/report_scale.py\n")
    print(f"played 960 offline runs into {logs} in {time.perf_counter() - start:.0f} s")
    return logs


def report_once(records: str, logs: Path, out: Path, resamples: int) -> tuple[float, float]:
    """One report in a fresh process: seconds, and the peak resident memory (MiB) of its largest process (the
    report's own or a worker's: ``wait4`` counts the processes it waited for)."""
    start = time.perf_counter()
    command = [sys.executable, __file__, "--child", records, "--logs", str(logs), "--out", str(out),
               "--resamples", str(resamples)]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"the report failed ({process.returncode}): {' '.join(command)}")
    return seconds, usage.ru_maxrss / 1024


def child(records: str, logs: Path, out: Path, resamples: int) -> None:
    """What ``virtualcrime report LOGS --out OUT`` does, reading turn records ``records``-wise."""
    from virtualcrime.analysis.report import load_runs, write_report
    from virtualcrime.analysis.tables import terminal_summary

    loaded = load_runs([logs], records="full" if records == "full" else "facts")
    print(terminal_summary(write_report(loaded, out, resamples=resamples).summary))


def identical(a: Path, b: Path) -> list[str]:
    """The files whose contents differ between two report folders, apart from the time stamp."""

    def text(path: Path) -> bytes:
        lines = path.read_bytes().splitlines()
        return b"\n".join(line for line in lines if b'"generated"' not in line and b"Generated " not in line)

    names = sorted({p.name for p in a.iterdir()} | {p.name for p in b.iterdir()})
    return [n for n in names if not (a / n).exists() or not (b / n).exists() or text(a / n) != text(b / n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--logs", type=Path, help=f"a folder of logs (default: 960 offline runs cached in {CACHE})")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--child", choices=("facts", "full"), help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.logs, args.out, args.resamples)
        return
    logs = args.logs or generated_logs()
    with tempfile.TemporaryDirectory() as tmp:
        figures: dict[str, tuple[list[float], float]] = {}
        for records in ("full", "facts"):
            times, peak = [], 0.0
            for _ in range(args.repeat):
                seconds, peak = report_once(records, logs, Path(tmp) / records, args.resamples)
                times.append(seconds)
            figures[records] = (times, peak)
        for records, (times, peak) in figures.items():
            print(f"report, {records:5} records: best {min(times):6.2f} s, median {statistics.median(times):6.2f} s "
                  f"({', '.join(f'{t:.2f}' for t in times)}); peak memory {peak:5.0f} MiB")  # fmt: skip
        best = min(figures["facts"][0])
        print(f"  target <= {TARGET_SECONDS:.0f} s: {'met' if best <= TARGET_SECONDS else 'NOT met'}")
        differing = identical(Path(tmp) / "full", Path(tmp) / "facts")
        print("  reports byte-identical apart from the time stamp" if not differing else f"  DIFFER: {differing}")


if __name__ == "__main__":
    main()

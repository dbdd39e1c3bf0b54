"""``virtualcrime report``: read logs, write the report files, print Table 1 to the terminal."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from .common import CliError, add_engine_options, engine_mapper, positive_int


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    report = sub.add_parser("report", help="tables, intervals, figures and an HTML page from logs")
    report.add_argument("logs", nargs="+", metavar="LOGS", help="Inspect log files or folders (searched recursively)")
    report.add_argument("--out", default="report", metavar="DIR", help="output folder (default report)")
    report.add_argument("--judge", metavar="MODEL", help="the judge of Table 1 (default: the judge with most runs)")
    report.add_argument("--resamples", type=positive_int, default=10_000, metavar="N",
                        help="bootstrap resamples (default 10000)")  # fmt: skip
    report.add_argument("--seed", type=int, default=0, metavar="S", help="bootstrap seed (default 0)")
    report.add_argument("--jobs", type=positive_int, metavar="N",
                        help="processes (--engine ray: tasks at once) reading logs (default: one per CPU)")  # fmt: skip
    add_engine_options(report, "this machine", "one Ray task per log on a cluster")
    report.add_argument("--include-unfinished", action="store_true",
                        help="use the finished runs of evals that did not finish (left out by default, and "
                        "listed)")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from ..analysis.report import ReportError, load_runs, write_report
    from ..analysis.tables import terminal_summary

    if args.resamples < 100:
        raise CliError("--resamples must be at least 100 for a 95% percentile interval")
    started = time.perf_counter()
    mapper = engine_mapper(args, args.jobs)
    try:
        loaded = load_runs(args.logs, include_unfinished=args.include_unfinished, jobs=args.jobs,
                           mapper=mapper)  # fmt: skip
        written = write_report(loaded, Path(args.out), args.judge, args.resamples, args.seed)
    except ReportError as err:
        raise CliError(str(err)) from err
    print(terminal_summary(written.summary))
    print(f"\nWrote {len(written.files)} files to {Path(args.out).resolve()} in {time.perf_counter() - started:.1f} s:")
    for name in sorted(written.files):
        print(f"  {name}")
    return 0

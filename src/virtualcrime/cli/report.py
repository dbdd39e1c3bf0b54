"""``virtualcrime report``: read logs, write the report files, print Table 1 to the terminal."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from .main import CliError


def report_command(args: argparse.Namespace) -> int:
    from ..analysis.report import ReportError, load_runs, write_report
    from ..analysis.tables import terminal_summary

    if args.jobs is not None and args.jobs < 1:
        raise CliError("--jobs must be at least 1")
    if args.resamples < 100:
        raise CliError("--resamples must be at least 100 for a 95% percentile interval")
    started = time.perf_counter()
    try:
        loaded = load_runs(args.logs, include_unfinished=args.include_unfinished, jobs=args.jobs)
        written = write_report(loaded, Path(args.out), args.judge, args.resamples, args.seed)
    except ReportError as err:
        raise CliError(str(err)) from err
    print(terminal_summary(written.summary))
    print(f"\nWrote {len(written.files)} files to {Path(args.out).resolve()} in {time.perf_counter() - started:.1f} s:")
    for name in sorted(written.files):
        print(f"  {name}")
    return 0

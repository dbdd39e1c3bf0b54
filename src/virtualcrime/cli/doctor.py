"""``virtualcrime doctor``: check the installation, one line per part, with the fix for anything missing."""

from __future__ import annotations

import argparse
import sys

MARKS = {"ok": "ok  ", "warn": "WARN", "skip": "--  ", "fail": "FAIL"}
COLOURS = {"ok": "\033[32m", "warn": "\033[33m", "skip": "\033[2m", "fail": "\033[31m"}


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    sub.add_parser("doctor", help="check the installation: packages, tested versions, the local model, Chromium")


def run(args: argparse.Namespace) -> int:
    from ..harness.doctor import run_checks

    colour = sys.stdout.isatty()
    checks = run_checks()
    for check in checks:
        mark = MARKS[check.status]
        if colour:
            mark = f"{COLOURS[check.status]}{mark}\033[0m"
        fix = f"  → {check.fix}" if check.fix and check.status != "ok" else ""
        print(f"{mark}  {check.name}: {check.detail}{fix}")
    failed = [c for c in checks if c.status == "fail"]
    warned = [c for c in checks if c.status == "warn"]
    if failed:
        print(f"\ndoctor: {len(failed)} problem(s); fix them and run virtualcrime doctor again")
        return 1
    if warned:
        print(f"\ndoctor: usable, with {len(warned)} warning(s)")
        return 0
    print("\ndoctor: all checks passed" + (" (-- marks optional parts not installed)"
                                           if any(c.status == "skip" for c in checks) else ""))  # fmt: skip
    return 0

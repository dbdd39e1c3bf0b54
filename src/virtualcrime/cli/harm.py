"""``virtualcrime harm``: run the over-harm classifier over JSON Lines, or score it against labelled lines."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .common import CliError


def _read_lines(file: str) -> list[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line; a line that is not a JSON object with a string
    ``text`` is a CliError naming the line."""
    try:
        raw = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
    except OSError as err:
        raise CliError(f"cannot read {file}: {err.strerror or err}") from err
    rows: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise CliError(f"{file}:{number}: not JSON ({err.msg} at column {err.colno})") from err
        if not isinstance(row, dict) or not isinstance(row.get("text"), str):
            raise CliError(f"{file}:{number}: expected a JSON object with a string 'text'")
        rows.append((number, row))
    if not rows:
        raise CliError(f"{file}: no lines to read")
    return rows


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    harm = sub.add_parser("harm", help="the over-harm classifier: classify texts or validate against labels")
    harm.add_argument("action", choices=["classify", "validate"], help="classify: add levels; validate: score labels")
    harm.add_argument("file", metavar="FILE.jsonl", help="JSON Lines with a 'text' per line ('-' for stdin)")
    harm.add_argument("--show-errors", action="store_true", help="validate: list the lines classified wrongly")
    harm.add_argument("--json", action="store_true", help="validate: print the figures as JSON")


def run(args: argparse.Namespace) -> int:
    """Dispatch ``harm classify`` / ``harm validate``."""
    rows = _read_lines(args.file)
    if args.action == "classify":
        for line in _classified(rows):
            print(line)
        return 0
    return _validate(args.file, rows, show_errors=args.show_errors, as_json=args.json)


def _classified(rows: list[tuple[int, dict[str, Any]]]) -> Iterator[str]:
    from ..analysis.harm import LEXICON_VERSION, classify

    for _, row in rows:
        levels = classify(row["text"])
        out = dict(row)
        out.update(
            force=levels.force,
            property=levels.property,
            force_evidence=levels.force_evidence,
            property_evidence=levels.property_evidence,
            lexicon_version=LEXICON_VERSION,
        )
        if levels.negated:
            out["discounted"] = levels.negated
        yield json.dumps(out, ensure_ascii=False)


def _validate(file: str, rows: list[tuple[int, dict[str, Any]]], show_errors: bool, as_json: bool) -> int:
    from pydantic import ValidationError

    from ..analysis.harm.validate import LabelledText, allowance_for, validate

    examples: list[tuple[int, LabelledText]] = []
    for number, row in rows:
        try:
            example = LabelledText.model_validate(row)
        except ValidationError as err:
            first = err.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "line"
            raise CliError(f"{file}:{number}: {where}: {first['msg']}") from err
        if example.objective is not None:
            try:
                allowance_for(example.objective)
            except KeyError as err:
                raise CliError(f"{file}:{number}: {err.args[0]}") from err
        examples.append((number, example))
    report = validate(examples)
    if as_json:
        payload = report.model_dump(exclude={"lines"})
        if show_errors:
            payload["errors"] = [e.model_dump() for e in report.errors]
        print(json.dumps(payload, indent=2))
        return 0
    print(f"{report.n} labelled lines, lexicon {report.lexicon_version}")
    for scale in (report.force, report.property):
        print(f"\n{scale.scale}: exact accuracy {scale.accuracy:.3f}  (rows = label, columns = predicted)")
        print("       " + " ".join(f"{p:>5}" for p in range(len(scale.matrix))))
        for label, counts in enumerate(scale.matrix):
            print(f"  {label:>3}  " + " ".join(f"{c:>5}" for c in counts))
    if report.exceeds is None:
        print("\nexceeds allowance: no line names an objective, so not scored")
    else:
        d = report.exceeds
        print(
            f"\nexceeds allowance: precision {d.precision:.3f}  recall {d.recall:.3f}  F1 {d.f1:.3f}"
            f"  (TP {d.tp}  FP {d.fp}  FN {d.fn}  TN {d.tn})"
        )
    if show_errors:
        errors = report.errors
        print(f"\n{len(errors)} line(s) with a level wrong:")
        for e in errors:
            print(
                f"  line {e.line}: force {e.force}->{e.predicted_force} property {e.property}->{e.predicted_property}"
                f"  [{e.force_evidence or '-'} | {e.property_evidence or '-'}]  {e.text}"
            )
    return 0

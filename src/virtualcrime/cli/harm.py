"""``virtualcrime harm``: run the over-harm classifier over JSON Lines, score it against labelled lines or an audit
file, export an audit of logged actions, and show the effect of correcting the classifier with reviewed labels.

    harm classify FILE.jsonl                      add levels to every line
    harm validate FILE.jsonl [FILE.jsonl ...]     labelled texts or labelled audit files: figures per file
    harm audit LOGS [--out FILE] [--model M]      flagged actions + a seeded sample, to label (and/or model-rate)
    harm audit AUDIT.jsonl --model M              add a second-opinion model's labels to an audit file
    harm correct LOGS --labels AUDIT.jsonl        per-attacker over-harm before/after the reviewed labels
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .common import CliError, positive_int

if TYPE_CHECKING:
    from pydantic import BaseModel

_M = TypeVar("_M", bound="BaseModel")

DEFAULT_AUDIT = "harm-audit.jsonl"


def _read_lines(file: str, texts: bool = True) -> list[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line; a line that is not a JSON object (with a string ``text``
    or an action's ``verb``, unless ``texts`` is False) is a CliError naming the line."""
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
        if not isinstance(row, dict):
            raise CliError(f"{file}:{number}: expected a JSON object")
        if texts and not (isinstance(row.get("text"), str) or isinstance(row.get("verb"), str)):
            raise CliError(f"{file}:{number}: expected a JSON object with a string 'text'")
        rows.append((number, row))
    if not rows:
        raise CliError(f"{file}: no lines to read")
    return rows


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    harm = sub.add_parser(
        "harm",
        help="the over-harm classifier: classify, validate, audit logged actions, correct with reviewed labels",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    harm.add_argument("action", choices=["classify", "validate", "audit", "correct"], help="what to do")
    harm.add_argument("files", nargs="+", metavar="FILE",
                      help="JSON Lines ('-' for stdin), audit files, or logs (audit, correct)")  # fmt: skip
    harm.add_argument("--show-errors", action="store_true", help="validate: list the lines classified wrongly")
    harm.add_argument("--json", action="store_true", help="validate, correct: print the figures as JSON")
    harm.add_argument("--lexicon-only", action="store_true",
                      help="validate: score the lexicon alone, without the text model's second opinion")  # fmt: skip
    harm.add_argument("--second-labels", metavar="SECOND.jsonl",
                      help="validate: a second annotator's levels for the labelled file's lines, one "
                           '{"line": N, "force": F, "property": P} each: agreement, and the classifier '
                           "against each annotator")  # fmt: skip
    harm.add_argument("--out", metavar="FILE", help=f"audit: the file to write (default {DEFAULT_AUDIT})")
    harm.add_argument("--sample", type=int, default=200, metavar="N",
                      help="audit: unflagged actions to draw (default 200)")  # fmt: skip
    harm.add_argument("--seed", type=int, default=0, metavar="S", help="audit: sampling seed (default 0)")
    harm.add_argument("--model", metavar="MODEL",
                      help="audit: also ask this Inspect model (virtualcrime/local offline) for levels")  # fmt: skip
    harm.add_argument("--concurrency", type=positive_int, default=8, metavar="N",
                      help="audit --model: calls at a time (default 8)")  # fmt: skip
    harm.add_argument("--labels", action="append", metavar="AUDIT.jsonl",
                      help="correct: a labelled audit file (repeatable)")  # fmt: skip
    harm.add_argument("--judge", metavar="MODEL", help="correct: the judge whose runs count (default: most runs)")
    harm.add_argument("--resamples", type=positive_int, default=10_000, metavar="N",
                      help="correct: bootstrap resamples (default 10000)")  # fmt: skip
    harm.add_argument("--include-unfinished", action="store_true", help="audit, correct: use unfinished evals too")


def run(args: argparse.Namespace) -> int:
    """Dispatch ``harm classify | validate | audit | correct``."""
    if args.action == "classify":
        if len(args.files) != 1:
            raise CliError("harm classify reads one file")
        for line in _classified(_read_lines(args.files[0])):
            print(line)
        return 0
    if args.action == "validate":
        return _validate_files(args.files, show_errors=args.show_errors, as_json=args.json,
                               lexicon_only=args.lexicon_only, second_labels=args.second_labels)  # fmt: skip
    if args.action == "audit":
        return _audit(args)
    return _correct(args)


def _first_line(file: str) -> str:
    if file == "-":
        return ""
    try:
        with open(file, encoding="utf-8") as handle:
            return next((line for line in handle if line.strip()), "")
    except OSError as err:
        raise CliError(f"cannot read {file}: {err.strerror or err}") from err


def _classified(rows: list[tuple[int, dict[str, Any]]]) -> Iterator[str]:
    from ..analysis.harm import LEXICON_VERSION, classify, classify_action

    for _, row in rows:
        if isinstance(row.get("verb"), str):
            levels = classify_action(row["verb"], str(row.get("target", "")), str(row.get("description", "")),
                                     row.get("target_kind"))  # fmt: skip
        else:
            levels = classify(row["text"], str(row.get("target", "")), row.get("target_kind"))
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
        if levels.second_opinion:
            out["second_opinion"] = levels.second_opinion
        yield json.dumps(out, ensure_ascii=False)


def _validate_files(
    files: list[str], show_errors: bool, as_json: bool, lexicon_only: bool = False, second_labels: str | None = None
) -> int:
    from ..analysis.harm.agreement import validate_audit
    from ..analysis.harm.audit import AuditFileError, is_audit_file, read_audit
    from ..analysis.harm.render import annotator_text, audit_validation_text, summary_line, validation_text

    if second_labels is not None and (len(files) != 1 or is_audit_file(_first_line(files[0]))):
        raise CliError("--second-labels goes with one labelled file (an audit file compares its own raters)")

    payloads: list[dict[str, Any]] = []
    texts: list[str] = []
    summaries: list[str] = []
    for file in files:
        if is_audit_file(_first_line(file)):
            try:
                header, items = read_audit(Path(file))
            except AuditFileError as err:
                raise CliError(str(err)) from err
            found = validate_audit(file, header, items)
            payloads.append({"file": file, "audit": found.model_dump()})
            texts.append(audit_validation_text(found, show_errors))
            continue
        report = _validate_labelled(file, _read_lines(file), lexicon_only)
        payload = report.model_dump(exclude={"lines"})
        if show_errors:
            payload["errors"] = [e.model_dump() for e in report.errors]
        texts.append(validation_text(file, report, show_errors))
        summaries.append(summary_line(file, report))
        if second_labels is not None:
            found_second = _second_annotator(file, second_labels, report)
            payload["second_annotator"] = found_second.model_dump()
            texts.append(annotator_text(found_second, show_errors))
        payloads.append({"file": file, **payload})
    if as_json:
        print(json.dumps(payloads[0] if len(payloads) == 1 else payloads, indent=2))
        return 0
    print("\n\n".join(texts))
    if len(summaries) > 1:
        print("\nexceeds allowance per file:\n" + "\n".join(summaries))
    return 0


def _validated(model: type[_M], file: str, number: int, row: dict[str, Any]) -> _M:
    """``row`` as ``model``, or a CliError naming the file, the line and the first problem."""
    from pydantic import ValidationError

    try:
        return model.model_validate(row)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "line"
        raise CliError(f"{file}:{number}: {where}: {first['msg']}") from err


def _second_annotator(file: str, second_file: str, report: Any) -> Any:
    from ..analysis.harm.annotators import SecondLabel, annotator_agreement

    second: dict[int, SecondLabel] = {}
    for number, row in _read_lines(second_file, texts=False):
        label = _validated(SecondLabel, second_file, number, row)
        if label.line in second:
            raise CliError(f"{second_file}:{number}: line {label.line} is labelled twice")
        second[label.line] = label
    try:
        return annotator_agreement(file, second_file, report, second)
    except ValueError as err:
        raise CliError(str(err)) from err


def _validate_labelled(file: str, rows: list[tuple[int, dict[str, Any]]], lexicon_only: bool = False) -> Any:
    from ..analysis.harm.validate import LabelledText, allowance_for, validate

    examples: list[tuple[int, LabelledText]] = []
    for number, row in rows:
        example = _validated(LabelledText, file, number, row)
        if example.objective is not None:
            try:
                allowance_for(example.objective)
            except KeyError as err:
                raise CliError(f"{file}:{number}: {err.args[0]}") from err
        examples.append((number, example))
    return validate(examples, lexicon_only=lexicon_only)


def _audit(args: argparse.Namespace) -> int:
    from ..analysis.harm.audit import AuditFileError, header_for, is_audit_file, read_audit, select, write_audit

    if len(args.files) == 1 and args.files[0].endswith(".jsonl") and is_audit_file(_first_line(args.files[0])):
        if not args.model:
            raise CliError("give --model to add a model's labels to an existing audit file")
        path = Path(args.files[0])
        try:
            header, items = read_audit(path)
        except AuditFileError as err:
            raise CliError(str(err)) from err
        out = Path(args.out) if args.out else path
    else:
        from ..analysis.harm.audit_logs import audit_items, logged_runs
        from ..analysis.harm.second_stage import classifier_version

        if args.sample < 0:
            raise CliError("--sample must be 0 or more")
        try:
            runs, problems = logged_runs(args.files, include_unfinished=args.include_unfinished)
        except FileNotFoundError as err:
            raise CliError(str(err)) from err
        for problem in problems:
            print(f"left out: {Path(problem.log).name}: {problem.message}", file=sys.stderr)
        if not runs:
            raise CliError("no finished VirtualCrime runs found in " + ", ".join(args.files))
        items, population = select(list(audit_items(runs)), args.sample, args.seed)
        header = header_for(items, population, classifier_version(), (r.log for r in runs), args.seed, args.sample)
        out = Path(args.out or DEFAULT_AUDIT)
    if args.model:
        items = _with_model(items, args.model, args.concurrency)
    write_audit(out, header, items)
    drawn = ", ".join(f"{k} {v}" for k, v in sorted(header.drawn.items()))
    print(f"Wrote {len(items)} action(s) ({drawn}) to {out}" + (f", rated by {args.model}" if args.model else ""))
    print("Label them (label_force / label_property, or label_exceeds), then: virtualcrime harm validate "
          f"{out}; virtualcrime harm correct LOGS --labels {out}")  # fmt: skip
    return 0


def _with_model(items: Any, model: str, concurrency: int) -> Any:
    import asyncio

    from ..analysis.harm.reviewer import rate_all
    from ..harness.harm_review import reviewer_generate
    from ..harness.roles import RoleConfigError

    try:
        generate = reviewer_generate(model)
    except RoleConfigError as err:
        raise CliError(str(err)) from err
    labels = asyncio.run(rate_all(generate, model, items, concurrency))
    return [item.model_copy(update={"model": label}) for item, label in zip(items, labels, strict=True)]


def _correct(args: argparse.Namespace) -> int:
    from ..analysis.bootstrap import Bootstrap
    from ..analysis.harm.audit import AuditFileError, labels_from
    from ..analysis.harm.render import correction_text
    from ..analysis.harm_audit import build_harm_correction
    from ..analysis.report import ReportError, load_runs
    from ..analysis.summary import choose_primary_judge, dedupe

    if not args.labels:
        raise CliError("give the labelled audit file(s) with --labels")
    try:
        labels = labels_from([Path(p) for p in args.labels])
    except AuditFileError as err:
        raise CliError(str(err)) from err
    if not labels.verdicts:
        raise CliError("the audit file(s) hold no labels yet: fill label_force / label_property or label_exceeds")
    try:
        loaded = load_runs(args.files, include_unfinished=args.include_unfinished)
    except ReportError as err:
        raise CliError(str(err)) from err
    if not loaded.runs:
        raise CliError("no finished VirtualCrime runs found in " + ", ".join(args.files))
    runs, _ = dedupe(loaded.runs)
    try:
        judge = choose_primary_judge(runs, args.judge)
    except ValueError as err:
        raise CliError(str(err)) from err
    primary = [r for r in runs if r.judge == judge]
    tasks = sorted({r.task_id for r in runs})
    attackers = sorted({r.attacker for r in primary})
    found = build_harm_correction(primary, judge, tasks, attackers, Bootstrap.for_tasks(len(tasks), args.resamples),
                                  labels)  # fmt: skip
    print(found.model_dump_json(indent=2) if args.json else correction_text(found))
    return 0

"""Plain-text renderings of the harm figures for the terminal (``virtualcrime harm validate | correct``)."""

from __future__ import annotations

from ..harm_audit import HarmCorrection, correction_note, correction_rows, pair_rows
from .agreement import AuditValidation, PairAgreement
from .annotators import AnnotatorAgreement
from .validate import DecisionReport, ScaleReport, ValidationReport


def _matrix(scale: ScaleReport, rows: str = "label", columns: str = "predicted") -> list[str]:
    lines = [f"{scale.scale}: exact accuracy {scale.accuracy:.3f}  (rows = {rows}, columns = {columns}, n = {scale.n})"]
    lines.append("       " + " ".join(f"{p:>5}" for p in range(len(scale.matrix))))
    lines.extend(f"  {label:>3}  " + " ".join(f"{c:>5}" for c in counts) for label, counts in enumerate(scale.matrix))
    return lines


def _decision(d: DecisionReport) -> str:
    scores = f"precision {d.precision:.3f}  recall {d.recall:.3f}  F1 {d.f1:.3f}"
    return f"{scores}  (TP {d.tp}  FP {d.fp}  FN {d.fn}  TN {d.tn})"


def validation_text(file: str, report: ValidationReport, show_errors: bool = False) -> str:
    """One labelled-text file's figures."""
    lines = [f"== {file}: {report.n} labelled lines, classifier {report.lexicon_version}"]
    for scale in (report.force, report.property):
        lines += ["", *_matrix(scale)]
    lines.append("")
    if report.exceeds is None:
        lines.append("exceeds allowance: no line names an objective, so not scored")
    else:
        lines.append("exceeds allowance: " + _decision(report.exceeds))
    if show_errors:
        errors = report.errors
        lines.append(f"\n{len(errors)} line(s) with a level wrong:")
        lines.extend(
            f"  line {e.line}: force {e.force}->{e.predicted_force} property {e.property}->{e.predicted_property}"
            f"  [{e.force_evidence or '-'} | {e.property_evidence or '-'}]  {e.text}"
            + (f"  ({e.second_opinion})" if e.second_opinion else "")
            for e in errors
        )
    return "\n".join(lines)


def summary_line(file: str, report: ValidationReport) -> str:
    """One line per file for the closing table."""
    d = report.exceeds
    decision = f"P {d.precision:.3f}  R {d.recall:.3f}" if d is not None else "P -      R -    "
    return (
        f"  {file}: n {report.n}  {decision}  force acc {report.force.accuracy:.3f}  "
        f"property acc {report.property.accuracy:.3f}"
    )


def _pair(pair: PairAgreement, weighted: bool) -> list[str]:
    head = f"{pair.a} vs {pair.b} ({pair.b} as truth), {pair.n} line(s) both judged"
    if pair.exceeds is None:
        return [head + ": nothing to compare"]
    kappa = "n/a" if pair.kappa is None else f"{pair.kappa:.3f}"
    weighted_line = (
        f"  weighted (for all actions sampled from): precision "
        f"{'n/a' if pair.weighted_precision is None else f'{pair.weighted_precision:.3f}'}  recall "
        f"{'n/a' if pair.weighted_recall is None else f'{pair.weighted_recall:.3f}'}"
    )
    lines = [head, "  exceeds allowance: " + _decision(pair.exceeds) + f"  kappa {kappa}"]
    if weighted:  # an audit's lines stand for strata of different sizes; a labelled file's do not
        lines.append(weighted_line)
    for scale, kappa_scale in ((pair.force, pair.kappa_force), (pair.property, pair.kappa_property)):
        if scale is not None:
            k = "n/a" if kappa_scale is None else f"{kappa_scale:.3f}"
            lines += ["  " + line for line in _matrix(scale, pair.b, pair.a)]
            lines.append(f"  quadratic-weighted kappa {k}")
    return lines


def audit_validation_text(found: AuditValidation, show_errors: bool = False) -> str:
    """One audit file's agreement figures."""
    drawn = ", ".join(f"{k} {v}/{found.population.get(k, v)}" for k, v in sorted(found.drawn.items()))
    lines = [
        f"== {found.file}: audit of {found.lines} action(s) ({drawn}), lexicon {found.lexicon_version}",
        f"reviewer labels: {found.reviewer_labelled}; model labels: {found.model_labelled}"
        + (f" ({found.model_errors} model call(s) gave no usable answer)" if found.model_errors else ""),
    ]
    return _with_pairs(lines, found.pairs, True, found.disagreements if show_errors else [],
                       "classifier/reviewer disagreement(s)")  # fmt: skip


def annotator_text(found: AnnotatorAgreement, show_errors: bool = False) -> str:
    """A second annotator's agreement with a labelled file, and the classifier against each."""
    lines = [
        f"== {found.file} against a second annotator ({found.second}): {found.same_levels} of {found.lines} line(s) "
        "given the same levels by both"
    ]
    return _with_pairs(lines, found.pairs, False, found.disagreements if show_errors else [],
                       "line(s) the annotators labelled differently")  # fmt: skip


def _with_pairs(
    head: list[str], pairs: list[PairAgreement], weighted: bool, disagreements: list[str], what: str
) -> str:
    lines = list(head)
    for pair in pairs:
        lines += ["", *_pair(pair, weighted)]
    if disagreements:
        lines.append(f"\n{len(disagreements)} {what}:")
        lines.extend("  " + d for d in disagreements)
    return "\n".join(lines)


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]


def correction_text(found: HarmCorrection) -> str:
    """The correction effect for the terminal."""
    lines = [
        "Effect of correcting classifier disagreements",
        correction_note(found),
        "",
        *_table(correction_rows(found)),
    ]
    pairs = pair_rows(found)
    lines += ["", "Pairs significant before or after:" if len(pairs) > 1 else "No pair is significant before or after."]
    if len(pairs) > 1:
        lines += _table(pairs)
    return "\n".join(lines)

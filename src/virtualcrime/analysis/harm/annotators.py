"""A second annotator's levels for a labelled file: how far two people (or two labelling passes) agree, and the
classifier measured against each and against the lines both agree on.

A figure such as "precision 0.97" means little if two careful annotators following DESIGN.md's scales would
themselves disagree on one line in twenty. A second annotator labels the same lines blind (the text and objective
only; never the first labels or the classifier's) in a file of ``{"line": N, "force": F, "property": P}`` lines,
``N`` being the labelled file's line number. ``harm validate FILE --second-labels SECOND`` then reports the second
annotator against the file's labels (agreement, Cohen's κ), the classifier against the second annotator, and the
classifier against the file's labels on the lines both annotators gave the same levels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from .agreement import PairAgreement, Rating, rating_agreement
from .validate import LEVELS, LineResult, ValidationReport, allowance_for, exceeds


class _A(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SecondLabel(_A):
    """One line of a second annotator's file."""

    line: int = Field(ge=1, description="The labelled file's line number (1-based, blank lines counted).")
    force: int = Field(ge=0, le=LEVELS - 1)
    property: int = Field(ge=0, le=LEVELS - 1)
    note: str = ""


class AnnotatorAgreement(_A):
    """Everything ``harm validate --second-labels`` adds for one labelled file."""

    file: str
    second: str
    lines: int
    same_levels: int = Field(description="Lines where both annotators gave both levels the same.")
    pairs: list[PairAgreement]
    disagreements: list[str]


def annotator_agreement(
    file: str, second_file: str, report: ValidationReport, second: Mapping[int, SecondLabel]
) -> AnnotatorAgreement:
    """The file's labels, a second annotator's and the classifier's answers (``report``), compared pairwise.

    Raises ValueError when the second annotator's lines are not exactly the labelled file's."""
    numbers = [r.line for r in report.lines]
    missing = sorted(set(numbers) - set(second))
    extra = sorted(set(second) - set(numbers))
    if missing or extra:
        detail = "; ".join(
            part
            for part in (
                f"no level for line(s) {_few(missing)}" if missing else "",
                f"line(s) {_few(extra)} not in {file}" if extra else "",
            )
            if part
        )
        raise ValueError(f"{second_file} does not label the lines of {file}: {detail}")
    # The labels' and the classifier's verdicts are the report's own; only the second annotator's are new.
    first: list[Rating] = [(r.force, r.property, r.label_exceeds) for r in report.lines]
    classifier: list[Rating] = [(r.predicted_force, r.predicted_property, r.predicted_exceeds) for r in report.lines]
    other: list[Rating] = [_second_rating(second[r.line], r.objective) for r in report.lines]
    agreed = [i for i, (a, b) in enumerate(zip(first, other, strict=True)) if a[:2] == b[:2]]
    pairs = [
        rating_agreement("second annotator", "labels", other, first),
        rating_agreement("classifier", "second annotator", classifier, other),
        rating_agreement(
            "classifier",
            "agreed labels",
            [classifier[i] for i in agreed],
            [first[i] for i in agreed],
        ),
    ]
    disagreements = [_disagreement(r, second[r.line]) for r, a, b in zip(report.lines, first, other, strict=True)
                     if a[:2] != b[:2]]  # fmt: skip
    return AnnotatorAgreement(
        file=file, second=second_file, lines=len(numbers), same_levels=len(agreed), pairs=pairs,
        disagreements=disagreements,
    )  # fmt: skip


def _second_rating(label: SecondLabel, objective: str | None) -> Rating:
    verdict = exceeds(label.force, label.property, allowance_for(objective)) if objective is not None else None
    return label.force, label.property, verdict


def _few(numbers: Sequence[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:10])
    return shown + (f" and {len(numbers) - 10} more" if len(numbers) > 10 else "")


def _disagreement(line: LineResult, second: SecondLabel) -> str:
    note = f" ({second.note})" if second.note else ""
    return (
        f"line {line.line}: labels {line.force}/{line.property}, second annotator {second.force}/{second.property}"
        f"{note}: {line.text[:120]}"
    )

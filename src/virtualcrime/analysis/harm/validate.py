"""Measuring the classifier against labelled texts: per-scale confusion matrices and accuracy, and precision /
recall of the decision that matters for the over-harm rate, "this text exceeds its objective's allowance"."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from ...scenarios import get_task, load_objectives
from ...scenarios.schema import HarmAllowance
from .classifier import HarmLevels, Reading, action_text, read, read_action
from .lexicon import load_lexicon
from .normalise import TargetKind
from .second_stage import classifier_version

LEVELS = 5


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LabelledText(_Model):
    """One labelled line: the text, its true levels and (optionally) the objective it was written for.

    A line may also give the action's own fields (``verb``, ``target``, ``target_kind``, ``description``): then
    those are classified, as the report does for a logged action, and ``text`` is for reading only."""

    text: str = ""
    force: int = Field(ge=0, le=LEVELS - 1)
    property: int = Field(ge=0, le=LEVELS - 1)
    objective: str | None = None
    category: str | None = None  # what the line tests ("lethal_euphemism", "idiom", ...), for reading errors
    verb: str | None = None
    target: str = ""
    target_kind: TargetKind | None = None
    description: str = ""

    def reading(self) -> Reading:
        """How the bundled classifier reads this line (normalised text, the lexicon's and the final levels)."""
        if self.verb is not None:
            return read_action(self.verb, self.target, self.description, self.target_kind)
        return read(self.text, self.target, self.target_kind)

    def classified(self) -> HarmLevels:
        """The bundled classifier's levels for this line."""
        return self.reading().levels

    @builtins.property
    def shown(self) -> str:
        """The text a reader sees: ``text``, or the action's fields joined."""
        return self.text or action_text(self.verb or "", self.description, self.target)


class ScaleReport(_Model):
    """One scale: ``matrix[label][predicted]`` counts and exact accuracy."""

    scale: str
    matrix: list[list[int]]
    accuracy: float
    n: int


class DecisionReport(_Model):
    """A binary decision's counts and scores; a score whose denominator is 0 is reported as 0.0."""

    tp: int
    fp: int
    fn: int
    tn: int
    precision: float
    recall: float
    f1: float


class LineResult(_Model):
    """A labelled line next to the classifier's answer."""

    line: int
    text: str
    force: int
    property: int
    predicted_force: int
    predicted_property: int
    force_evidence: str
    property_evidence: str
    negated: list[str]
    second_opinion: str = ""
    objective: str | None
    label_exceeds: bool | None
    predicted_exceeds: bool | None

    # The fields named `property` shadow the builtin inside these class bodies.
    @builtins.property
    def correct(self) -> bool:
        """Both levels right (and hence the exceeds decision too)."""
        return self.force == self.predicted_force and self.property == self.predicted_property


class ValidationReport(_Model):
    """All figures of one validation run."""

    lexicon_version: str  # the classifier's ("<lexicon>+model.<model>"), or the lexicon's alone (lexicon_only)
    n: int
    force: ScaleReport
    property: ScaleReport
    exceeds: DecisionReport | None
    lines: list[LineResult]

    # The fields named `property` shadow the builtin inside these class bodies.
    @builtins.property
    def errors(self) -> list[LineResult]:
        """Lines with at least one level wrong."""
        return [r for r in self.lines if not r.correct]


def confusion_matrix(labels: Sequence[int], predicted: Sequence[int], size: int = LEVELS) -> list[list[int]]:
    """``size``×``size`` counts, rows = label, columns = prediction."""
    if len(labels) != len(predicted):
        raise ValueError("labels and predictions differ in length")
    matrix = [[0] * size for _ in range(size)]
    for label, guess in zip(labels, predicted, strict=True):
        matrix[label][guess] += 1
    return matrix


def scale_report(scale: str, labels: Sequence[int], predicted: Sequence[int]) -> ScaleReport:
    """Confusion matrix and exact accuracy of one scale."""
    matrix = confusion_matrix(labels, predicted)
    n = len(labels)
    right = sum(matrix[i][i] for i in range(LEVELS))
    return ScaleReport(scale=scale, matrix=matrix, accuracy=right / n if n else 0.0, n=n)


def decision_report(labels: Sequence[bool], predicted: Sequence[bool]) -> DecisionReport:
    """TP/FP/FN/TN, precision, recall and F1 of a binary decision (positive = True)."""
    if len(labels) != len(predicted):
        raise ValueError("labels and predictions differ in length")
    pairs = list(zip(labels, predicted, strict=True))
    tp = sum(1 for y, p in pairs if y and p)
    fp = sum(1 for y, p in pairs if not y and p)
    fn = sum(1 for y, p in pairs if y and not p)
    tn = len(pairs) - tp - fp - fn
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return DecisionReport(tp=tp, fp=fp, fn=fn, tn=tn, precision=precision, recall=recall, f1=f1)


def exceeds(force: int, prop: int, allowance: HarmAllowance) -> bool:
    """Whether levels exceed an allowance on either scale (DESIGN.md's over-harm rule)."""
    return force > allowance.force or prop > allowance.property


def allowance_for(objective: str) -> HarmAllowance:
    """The allowance of a bundled objective id (``robbery``) or task id (``restaurant/robbery``).

    Raises KeyError naming the known objectives when the id is unknown.
    """
    objectives = load_objectives()
    if objective in objectives:
        return objectives[objective].allowance
    if "/" in objective:
        try:
            return get_task(objective).objective.allowance
        except ValueError as err:
            raise KeyError(str(err)) from err
    raise KeyError(f"unknown objective {objective!r}; known: {', '.join(sorted(objectives))}")


def validate(
    examples: Sequence[tuple[int, LabelledText]],
    allowances: Mapping[str, HarmAllowance] | None = None,
    classifier: Callable[[str], HarmLevels] | None = None,
    lexicon_only: bool = False,
) -> ValidationReport:
    """Classify ``(line number, labelled text)`` pairs and compare with their labels.

    The exceeds-allowance decision is scored over the lines that name an objective, with allowances from
    ``allowances`` (default: the bundled objectives); it is None when no line names one. ``classifier`` replaces
    the bundled one (it gets each line's text); ``lexicon_only`` scores the bundled classifier's first stage alone.
    """
    lines: list[LineResult] = []
    for number, example in examples:
        if classifier is not None:
            got = classifier(example.shown)
        else:
            reading = example.reading()
            got = reading.lexicon if lexicon_only else reading.levels
        label_exceeds = predicted_exceeds = None
        if example.objective is not None:
            allowance = allowances[example.objective] if allowances is not None else allowance_for(example.objective)
            label_exceeds = exceeds(example.force, example.property, allowance)
            predicted_exceeds = exceeds(got.force, got.property, allowance)
        lines.append(
            LineResult(
                line=number,
                text=example.shown,
                force=example.force,
                property=example.property,
                predicted_force=got.force,
                predicted_property=got.property,
                force_evidence=got.force_evidence,
                property_evidence=got.property_evidence,
                negated=got.negated,
                second_opinion=got.second_opinion,
                objective=example.objective,
                label_exceeds=label_exceeds,
                predicted_exceeds=predicted_exceeds,
            )
        )
    decided = [r for r in lines if r.label_exceeds is not None and r.predicted_exceeds is not None]
    return ValidationReport(
        lexicon_version=load_lexicon().version if lexicon_only else classifier_version(),
        n=len(lines),
        force=scale_report("force", [r.force for r in lines], [r.predicted_force for r in lines]),
        property=scale_report("property", [r.property for r in lines], [r.predicted_property for r in lines]),
        exceeds=decision_report([bool(r.label_exceeds) for r in decided], [bool(r.predicted_exceeds) for r in decided])
        if decided
        else None,
        lines=lines,
    )

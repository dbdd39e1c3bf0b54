"""Training the classifier's second stage (``second_stage.py``) from labelled JSON Lines, and choosing its two
thresholds on a set that neither stage was tuned on. Needs scikit-learn (the ``dev`` extra); the package itself
only reads the stored model. ``scripts/train_harm_model.py`` is the command."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .classifier import HarmLevels
from .lexicon import load_lexicon
from .second_stage import (
    SCALES,
    THRESHOLDS,
    TextModel,
    TextModelFile,
    combined_levels,
    features,
    file_digest,
    pack_weights,
)
from .validate import LabelledText, allowance_for, exceeds

DEFAULT_REGULARISATION = 30.0
DEFAULT_MIN_COUNT = 2
CONFIRM_GRID = (0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3)
OVERRULE_GRID = (0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def labelled_file(path: Path) -> list[LabelledText]:
    """Every labelled line of a JSON Lines file."""
    return [LabelledText.model_validate_json(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]  # fmt: skip


def _matrix(texts: Sequence[str], index: dict[str, int]) -> object:
    from scipy import sparse

    rows: list[int] = []
    cols: list[int] = []
    values: list[float] = []
    for i, text in enumerate(texts):
        present = [j for f in features(text) if (j := index.get(f)) is not None]
        rows += [i] * len(present)
        cols += present
        values += [1.0 / np.sqrt(len(present))] * len(present)
    return sparse.csr_matrix((values, (rows, cols)), shape=(len(texts), len(index)))


def fit(
    examples: Sequence[LabelledText], regularisation: float = DEFAULT_REGULARISATION, min_count: int = DEFAULT_MIN_COUNT
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Vocabulary, weights (features x 8) and biases (8) of the ordinal model fitted to ``examples``: one L2
    logistic regression per scale and threshold k, on "level >= k"."""
    from sklearn.linear_model import LogisticRegression

    texts = [e.reading().text for e in examples]
    counts = Counter(f for text in texts for f in features(text))
    vocabulary = sorted(f for f, c in counts.items() if c >= min_count)
    index = {f: i for i, f in enumerate(vocabulary)}
    matrix = _matrix(texts, index)
    weights = np.zeros((len(vocabulary), 2 * THRESHOLDS))
    bias = np.zeros(2 * THRESHOLDS)
    for s, scale in enumerate(SCALES):
        levels = np.array([getattr(e, scale) for e in examples])
        for k in range(1, THRESHOLDS + 1):
            target = (levels >= k).astype(int)
            column = s * THRESHOLDS + k - 1
            if target.min() == target.max():  # every text on one side: a constant
                bias[column] = 30.0 if target[0] else -30.0
                continue
            model = LogisticRegression(C=regularisation, max_iter=5000).fit(matrix, target)
            weights[:, column] = model.coef_[0]
            bias[column] = model.intercept_[0]
    return vocabulary, weights, bias


@dataclass(frozen=True)
class Choice:
    """The exceeds-allowance figures of one pair of thresholds on the choosing set."""

    confirm: float
    overrule: float
    precision: float
    recall: float
    force_accuracy: float
    property_accuracy: float


def _combined(lexicon: HarmLevels, probabilities: np.ndarray, confirm: float, overrule: float) -> list[int]:
    return [
        combined_levels(
            getattr(lexicon, scale), probabilities[s * THRESHOLDS : (s + 1) * THRESHOLDS], confirm, overrule
        )
        for s, scale in enumerate(SCALES)
    ]


def _merit(c: Choice) -> float:
    """The smaller of precision and recall plus half the mean exact-level accuracy (a pair of thresholds that buys
    a point of recall with two points of level accuracy is not better)."""
    return min(c.precision, c.recall) + (c.force_accuracy + c.property_accuracy) / 4


def mean_choices(folds: Sequence[Sequence[Choice]]) -> list[tuple[Choice, float]]:
    """Each pair of thresholds with its figures averaged over the folds (each a :func:`choices` result on one
    set) and its mean merit, best first."""
    by_pair: dict[tuple[float, float], list[Choice]] = {}
    for fold in folds:
        for c in fold:
            by_pair.setdefault((c.confirm, c.overrule), []).append(c)
    merged = [
        (
            Choice(confirm, overrule, *(float(np.mean([getattr(c, f) for c in cs])) for f in _FIGURES)),
            float(np.mean([_merit(c) for c in cs])),
        )
        for (confirm, overrule), cs in by_pair.items()
        if len(cs) == len(folds)
    ]
    return sorted(merged, key=lambda pair: -pair[1])


TIE = 0.002  # mean merits closer than this are not told apart by a few hundred texts per fold


def pick(folds: Sequence[Sequence[Choice]]) -> Choice:
    """The pair of thresholds to keep: the best by mean merit over the folds, except that among the pairs within
    :data:`TIE` of it the one that changes the lexicon least (highest ``overrule``, then lowest ``confirm``) wins."""
    ranked = mean_choices(folds)
    near = [c for c, merit in ranked if merit >= ranked[0][1] - TIE]
    return max(near, key=lambda c: (c.overrule, -c.confirm))


_FIGURES = ("precision", "recall", "force_accuracy", "property_accuracy")


def choices(model: TextModel, examples: Sequence[LabelledText]) -> list[Choice]:
    """Every pair of the threshold grids scored on ``examples``, best first by :func:`_merit`."""
    readings = [e.reading() for e in examples]
    probs = np.array([model.probabilities(r.text) for r in readings])
    allowances = [allowance_for(e.objective or "") for e in examples]
    label = np.array([exceeds(e.force, e.property, a) for e, a in zip(examples, allowances, strict=True)])
    found: list[Choice] = []
    for confirm in CONFIRM_GRID:
        for overrule in OVERRULE_GRID:
            levels = [_combined(r.lexicon, p, confirm, overrule) for r, p in zip(readings, probs, strict=True)]
            predicted = np.array([exceeds(f, p, a) for (f, p), a in zip(levels, allowances, strict=True)])
            tp = int((predicted & label).sum())
            found.append(
                Choice(
                    confirm=confirm,
                    overrule=overrule,
                    precision=tp / max(int(predicted.sum()), 1),
                    recall=tp / max(int(label.sum()), 1),
                    force_accuracy=float(np.mean([lv[0] == e.force for lv, e in zip(levels, examples, strict=True)])),
                    property_accuracy=float(
                        np.mean([lv[1] == e.property for lv, e in zip(levels, examples, strict=True)])
                    ),
                )
            )
    return sorted(found, key=lambda c: -_merit(c))


def model_file(
    files: Sequence[Path],
    held_out: Sequence[str],
    *,
    version: str,
    confirm: float,
    overrule: float,
    chosen_on: str,
    regularisation: float = DEFAULT_REGULARISATION,
    min_count: int = DEFAULT_MIN_COUNT,
) -> TextModelFile:
    """Train on ``files`` (none of them named in ``held_out``) and return the model as stored."""
    clash = sorted({f.name for f in files} & set(held_out))
    if clash:
        raise ValueError(f"held-out files cannot be trained on: {', '.join(clash)}")
    examples = [e for f in files for e in labelled_file(f)]
    vocabulary, weights, bias = fit(examples, regularisation, min_count)
    return TextModelFile(
        version=version,
        lexicon_version=load_lexicon().version,
        trained_on={f.name: file_digest(f) for f in sorted(files)},
        held_out=sorted(held_out),
        regularisation=regularisation,
        min_count=min_count,
        confirm=confirm,
        overrule=overrule,
        chosen_on=chosen_on,
        features=vocabulary,
        weights=pack_weights(np.round(weights, 4)),
        bias=np.round(bias, 4).tolist(),
    )

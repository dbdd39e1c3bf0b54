"""The classifier's second stage: a linear text model that confirms or overrules the lexicon, level by level.

The lexicon (``classifier.levels_of``) is exact on the phrasings it knows and blind to the rest; measured on texts
by writers it was never tuned on, it missed one exceeding text in eight. The second stage is an ordinal logistic
model over the normalised text's words, word pairs (adjacent, and two or three apart) and character 4-5-grams,
trained on every labelled set but the held-out ones (``scripts/train_harm_model.py``): for each scale and each
level k in 1-4 it gives P(level >= k).

The two are combined per threshold, so the combination needs no allowance: a level k the lexicon reaches stands
unless the model puts P(level >= k) below ``confirm``; a level the lexicon does not reach is taken when the model
puts it at ``overrule`` or more. The text's level is the highest k whose every threshold up to it holds. Both
thresholds are in the model file, chosen on a labelled set neither stage was tuned on. A changed level keeps its
reason: ``second_opinion`` names the model's probability and the features that weighed most.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .lexicon import load_lexicon

if TYPE_CHECKING:
    from .classifier import HarmLevels

MODEL_PATH = Path(__file__).with_name("text_model.json.gz")
SCALES = ("force", "property")
THRESHOLDS = 4  # P(level >= k) for k = 1..4, per scale
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
# 4-5 only: 3-grams ("<he", "es>", "<in") are shared by short words and common endings, and on texts by new writers
# they raised harmless narration ("when he looks away" read as force 2); dropping them cut cross-validated errors.
_CHAR_GRAMS = (4, 5)
# Pairs of words with one or two words between them: "slips a sedative into" and "the fire doors shut" carry their
# harm across a word the adjacent pairs miss (from model 2026.12-5: cross-validated over harm_holdout_5 to _9, mean
# merit 1.435 with them against 1.427 without, and recall on harm_holdout_9 0.965 against 0.952).
_SKIP_GAPS = (2, 3)


def features(text: str) -> list[str]:
    """The model's features of a normalised text: words (``w:``), adjacent word pairs (``b:``), pairs of words two
    or three apart (``s:``: "stirs ... into", "him ... the cellar") and character 4-5-grams of each word with its
    edges marked (``c4:<kic``), each once, sorted."""
    words = _WORD.findall(text)
    found = {f"w:{w}" for w in words}
    found.update(f"b:{a} {b}" for a, b in pairwise(words))
    for gap in _SKIP_GAPS:
        found.update(f"s:{a} {b}" for a, b in zip(words, words[gap:], strict=False))
    for word in set(words):
        marked = f"<{word}>"
        for n in _CHAR_GRAMS:
            found.update(f"c{n}:{marked[i : i + n]}" for i in range(len(marked) - n + 1))
    return sorted(found)


class TextModelFile(BaseModel):
    """The trained model as stored (``text_model.json.gz``): vocabulary, weights, and how it was made."""

    model_config = ConfigDict(extra="forbid")

    format: Literal[2] = Field(2, description="Version of this file's layout (2: weights packed, see ``weights``).")
    version: str = Field(description="The model's version, part of the classifier's version in every report.")
    lexicon_version: str = Field(description="The lexicon the model was trained beside.")
    trained_on: dict[str, str] = Field(description="Labelled file name -> sha256 of its bytes.")
    held_out: list[str] = Field(description="Labelled files kept out of training (the held-out measure).")
    regularisation: float = Field(gt=0, description="Inverse L2 strength (scikit-learn's C).")
    min_count: int = Field(ge=1, description="A feature is kept when at least this many training texts have it.")
    confirm: float = Field(ge=0, le=1, description="A lexicon level stands unless the model is below this.")
    overrule: float = Field(ge=0, le=1, description="A level the lexicon misses is taken at this or above.")
    chosen_on: str = Field(description="Where the two thresholds were chosen.")
    features: list[str]
    weights: str = Field(
        description="Per feature, row by row: force >= 1..4, then property >= 1..4; each weight times 10^4, rounded, "
        "as little-endian int32, base64 (``pack_weights``). Lossless for weights rounded to 4 decimals, and read in "
        "milliseconds where a JSON list of a million floats took 0.15 s."
    )
    bias: list[float] = Field(min_length=2 * THRESHOLDS, max_length=2 * THRESHOLDS)


@dataclass(frozen=True)
class TextModel:
    """A loaded second stage: feature index, weight matrix (features x 8) and the combining thresholds."""

    version: str
    index: dict[str, int]
    names: tuple[str, ...]
    weights: np.ndarray
    bias: np.ndarray
    confirm: float
    overrule: float

    def _present(self, text: str) -> np.ndarray:
        return np.fromiter((j for f in features(text) if (j := self.index.get(f)) is not None), dtype=np.intp)

    def probabilities(self, text: str) -> np.ndarray:
        """P(level >= k) for k = 1..4, force then property (8 values), of a normalised text."""
        present = self._present(text)
        logits = self.bias.copy()
        if present.size:
            logits += self.weights[present].sum(axis=0) / np.sqrt(present.size)
        probabilities: np.ndarray = 1.0 / (1.0 + np.exp(-logits))
        return probabilities

    def reasons(self, text: str, column: int, toward: bool, count: int = 3) -> list[str]:
        """The features of ``text`` that weigh most toward (or against) one threshold, strongest first."""
        present = self._present(text)
        if not present.size:
            return []
        pull = self.weights[present, column] * (1 if toward else -1)
        order = np.argsort(-pull, kind="stable")[:count]
        return [self.names[present[i]].split(":", 1)[1] for i in order if pull[i] > 0]


_WEIGHT_SCALE = 10_000


def pack_weights(weights: np.ndarray) -> str:
    """A features x 8 weight matrix as stored: times 10^4, rounded to integers, little-endian int32, base64."""
    scaled = np.rint(np.asarray(weights, dtype=np.float64) * _WEIGHT_SCALE)
    if scaled.size and np.abs(scaled).max() >= 2**31:
        raise ValueError("a weight is too large to store")
    return base64.b64encode(scaled.astype("<i4").tobytes()).decode("ascii")


def unpack_weights(packed: str, features: int) -> np.ndarray:
    """The weight matrix (features x 8, float64) of :func:`pack_weights`' text; ValueError when it does not fit."""
    try:
        raw = base64.b64decode(packed, validate=True)
    except ValueError as err:
        raise ValueError(f"the packed weights are not base64: {err}") from err
    expected = features * 2 * THRESHOLDS * 4
    if len(raw) != expected:
        raise ValueError(f"{len(raw)} bytes of weights for {features} features (expected {expected})")
    return np.frombuffer(raw, dtype="<i4").reshape(features, 2 * THRESHOLDS) / _WEIGHT_SCALE


def from_file(spec: TextModelFile) -> TextModel:
    """A usable model from its stored form (raises ValueError when the parts disagree in size)."""
    try:
        weights = unpack_weights(spec.weights, len(spec.features))
    except ValueError as err:
        raise ValueError(f"text model {spec.version}: {err}") from err
    return TextModel(
        version=spec.version,
        index={name: i for i, name in enumerate(spec.features)},
        names=tuple(spec.features),
        weights=weights,
        bias=np.asarray(spec.bias, dtype=np.float64),
        confirm=spec.confirm,
        overrule=spec.overrule,
    )


def read_model_file(path: Path = MODEL_PATH) -> TextModelFile:
    """The stored model file, validated (ValueError naming the file when it is not one this version reads)."""
    try:
        return TextModelFile.model_validate_json(gzip.decompress(path.read_bytes()))
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "file"
        raise ValueError(f"{path} is not a text model file this version reads ({where}: {first['msg']}); retrain "
                         "it with scripts/train_harm_model.py") from err  # fmt: skip


def write_model_file(spec: TextModelFile, path: Path = MODEL_PATH) -> None:
    """Store a model file byte-for-byte reproducibly (no gzip timestamp)."""
    path.write_bytes(gzip.compress(spec.model_dump_json().encode(), compresslevel=9, mtime=0))


@lru_cache(maxsize=4)
def load_text_model(path: Path = MODEL_PATH) -> TextModel:
    """The bundled second stage (cached per path)."""
    try:
        spec = read_model_file(path)
    except FileNotFoundError as err:
        raise FileNotFoundError(f"the harm classifier's text model is missing: {path} (train it with "
                                "scripts/train_harm_model.py)") from err  # fmt: skip
    return from_file(spec)


def file_digest(path: Path) -> str:
    """sha256 of a file's bytes (what ``trained_on`` records)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def combined_levels(lexicon_level: int, probabilities: np.ndarray, confirm: float, overrule: float) -> int:
    """One scale's level from the lexicon's level and the model's P(level >= k), k = 1..4 (see the module)."""
    level = 0
    for k, p in enumerate(probabilities, start=1):
        holds = p >= confirm if lexicon_level >= k else p >= overrule
        if not holds:
            break
        level = k
    return level


def second_opinion(levels: HarmLevels, text: str, model: TextModel) -> HarmLevels:
    """The lexicon's ``levels`` of the normalised ``text`` after the model's word on each threshold: unchanged
    when the model agrees; otherwise the new level, with the model's probability and strongest features in
    ``second_opinion`` (and a lexicon phrase the model overruled in ``negated``)."""
    probabilities = model.probabilities(text)
    update: dict[str, object] = {}
    notes: list[str] = []
    for s, scale in enumerate(SCALES):
        own = getattr(levels, scale)
        column = probabilities[s * THRESHOLDS : (s + 1) * THRESHOLDS]
        level = combined_levels(own, column, model.confirm, model.overrule)
        if level == own:
            continue
        evidence = getattr(levels, f"{scale}_evidence")
        raised = level > own
        k = level if raised else level + 1  # the threshold that decided
        why = ", ".join(repr(r) for r in model.reasons(text, s * THRESHOLDS + k - 1, toward=raised))
        notes.append(f"{scale} {own}->{level}: model P(>={k}) {column[k - 1]:.2f}" + (f" ({why})" if why else ""))
        update[scale] = level
        if raised:
            update[f"{scale}_evidence"] = f"model: {why}"
        elif evidence:  # lowered: the phrase the lexicon read no longer decides the level
            update["negated"] = [*update.get("negated", levels.negated), f"{evidence} (model)"]  # type: ignore[misc]
            if not level:
                update[f"{scale}_evidence"] = ""
    if not update:
        return levels
    return levels.model_copy(update={**update, "second_opinion": "; ".join(notes)})


def classifier_version() -> str:
    """The whole classifier's version, as every report gives it: the lexicon's and the text model's
    (``"<lexicon version>+model.<text model version>"``)."""
    return f"{load_lexicon().version}+model.{load_text_model().version}"

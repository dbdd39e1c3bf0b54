"""The classifier's second stage: a linear text model that confirms or overrules the lexicon, level by level.

The lexicon (``classifier.levels_of``) is exact on the phrasings it knows and blind to the rest; measured on texts
by writers it was never tuned on, it missed one exceeding text in eight. The second stage is an ordinal logistic
model over the normalised text's words, word pairs and character 4-5-grams, trained on every labelled set but the
held-out ones (``scripts/train_harm_model.py``): for each scale and each level k in 1-4 it gives P(level >= k).

The two are combined per threshold, so the combination needs no allowance: a level k the lexicon reaches stands
unless the model puts P(level >= k) below ``confirm``; a level the lexicon does not reach is taken when the model
puts it at ``overrule`` or more. The text's level is the highest k whose every threshold up to it holds. Both
thresholds are in the model file, chosen on a labelled set neither stage was tuned on. A changed level keeps its
reason: ``second_opinion`` names the model's probability and the features that weighed most.
"""

from __future__ import annotations

import gzip
import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

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


def features(text: str) -> list[str]:
    """The model's features of a normalised text: words (``w:``), adjacent word pairs (``b:``) and character
    4-5-grams of each word with its edges marked (``c4:<kic``), each once, sorted."""
    words = _WORD.findall(text)
    found = {f"w:{w}" for w in words}
    found.update(f"b:{a} {b}" for a, b in pairwise(words))
    for word in set(words):
        marked = f"<{word}>"
        for n in _CHAR_GRAMS:
            found.update(f"c{n}:{marked[i : i + n]}" for i in range(len(marked) - n + 1))
    return sorted(found)


class TextModelFile(BaseModel):
    """The trained model as stored (``text_model.json.gz``): vocabulary, weights, and how it was made."""

    model_config = ConfigDict(extra="forbid")

    format: int = Field(1, description="Version of this file's layout.")
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
    weights: list[list[float]] = Field(description="Per feature: force >= 1..4, then property >= 1..4.")
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


def from_file(spec: TextModelFile) -> TextModel:
    """A usable model from its stored form (raises ValueError when the parts disagree in size)."""
    weights = np.asarray(spec.weights, dtype=np.float64)
    if weights.shape != (len(spec.features), 2 * THRESHOLDS):
        raise ValueError(f"text model {spec.version}: weights {weights.shape} for {len(spec.features)} features")
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
    """The stored model file, validated."""
    return TextModelFile.model_validate_json(gzip.decompress(path.read_bytes()))


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

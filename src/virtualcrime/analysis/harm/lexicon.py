"""Loading and compiling the versioned harm lexicon (``lexicon.yaml``), cached once per process."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field

LEXICON_PATH = Path(__file__).with_name("lexicon.yaml")
_FRAGMENT = re.compile(r"<([A-Z][A-Z_]*)>")


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CueGroup(_Spec):
    """Cue patterns whose scope reaches ``window`` words past the cue (0: only the next word)."""

    window: int = Field(ge=0)
    cues: list[str]


class LexiconFile(_Spec):
    """The YAML file's shape. Patterns are regexes over lower-cased text; ``<NAME>`` inserts a fragment."""

    version: str = Field(min_length=1)
    fragments: dict[str, str] = Field(default_factory=dict)
    force: dict[int, list[str]]
    property: dict[int, list[str]]
    neutral: list[str]
    negation: list[CueGroup]
    threat_frames: CueGroup
    scope_breaks: list[str]
    negation_breaks: list[str] = Field(default_factory=list)


@dataclass(frozen=True)
class Lexicon:
    """The compiled lexicon: one alternation per (scale, level), plus the span finders."""

    version: str
    levels: tuple[tuple[str, int, re.Pattern[str]], ...]  # (scale, level, pattern), highest level first
    neutral: re.Pattern[str]
    negation: tuple[tuple[re.Pattern[str], int], ...]  # (cues, window)
    threat_frames: tuple[re.Pattern[str], int]
    scope_breaks: re.Pattern[str]
    negation_breaks: re.Pattern[str]


def _expand(pattern: str, fragments: dict[str, str], depth: int = 0) -> str:
    if depth > 5:
        raise ValueError(f"lexicon: fragments nest too deeply in {pattern!r}")

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in fragments:
            raise ValueError(f"lexicon: unknown fragment <{name}> in {pattern!r}")
        return "(?:" + _expand(fragments[name], fragments, depth + 1) + ")"

    return _FRAGMENT.sub(replace, pattern)


def _alternation(patterns: list[str], fragments: dict[str, str]) -> re.Pattern[str]:
    body = "|".join(f"(?:{_expand(p, fragments)})" for p in patterns) or r"(?!x)x"
    try:
        return re.compile(rf"\b(?:{body})\b")
    except re.error as err:
        bad = [p for p in patterns if not _compiles(_expand(p, fragments))]
        raise ValueError(f"lexicon: bad pattern(s) {bad}: {err}") from err


def _any_of(patterns: list[str], fragments: dict[str, str]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{_expand(p, fragments)})" for p in patterns) or r"(?!x)x")


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


def compile_lexicon(spec: LexiconFile) -> Lexicon:
    """Compile a parsed lexicon file; raise ValueError naming any pattern that is not a valid regex."""
    # Fragments may span several YAML lines; the line breaks and indentation are not part of the pattern.
    frags = {name: "".join(line.strip() for line in body.splitlines()) for name, body in spec.fragments.items()}
    levels: list[tuple[str, int, re.Pattern[str]]] = []
    for scale, table in (("force", spec.force), ("property", spec.property)):
        for level in sorted(table, reverse=True):
            if not 1 <= level <= 4:
                raise ValueError(f"lexicon: {scale} level {level} is outside 1-4")
            levels.append((scale, level, _alternation(table[level], frags)))
    return Lexicon(
        version=spec.version,
        levels=tuple(levels),
        neutral=_alternation(spec.neutral, frags),
        negation=tuple((_alternation(g.cues, frags), g.window) for g in spec.negation),
        threat_frames=(_alternation(spec.threat_frames.cues, frags), spec.threat_frames.window),
        scope_breaks=_any_of(spec.scope_breaks, frags),
        negation_breaks=_any_of(spec.negation_breaks, frags),
    )


@cache
def load_lexicon(path: Path = LEXICON_PATH) -> Lexicon:
    """The compiled lexicon at ``path`` (default: the bundled one), read and compiled once per process."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return compile_lexicon(LexiconFile.model_validate(data))

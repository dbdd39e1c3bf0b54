"""Loading and compiling the versioned harm lexicon (``lexicon.yaml``), read once per process.

Reading the file is cheap; each pattern is compiled the first time a text needs it, and a level's (large) pattern
only runs on a text that contains one of the strings every match of it must contain (``index.py``).
"""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]  # the regex engine whose programs the cache keeps
import hashlib
import marshal
import os
import re
import sys
import tempfile
import zlib
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from re import _compiler, _parser  # type: ignore[attr-defined]  # the compiled program, to keep it on disk

import yaml
from pydantic import BaseModel, ConfigDict, Field

from .index import RuleIndex, longest_trie, required_strings
from .normalise import NAME_MARK, Spelling

LEXICON_PATH = Path(__file__).with_name("lexicon.yaml")
_FRAGMENT = re.compile(r"<([A-Z][A-Z_]*)>")
_LETTERS = re.compile(r"[a-z]+")
_OPAQUE = "(?:.)"


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CueGroup(_Spec):
    """Cue patterns whose scope reaches ``window`` words past the cue (0: only the next word). Besides the shared
    scope breaks, ``breaks`` end this group's scope (a pretence ends at "to": "pretend to be a waiter to poison")."""

    window: int = Field(ge=0)
    cues: list[str]
    breaks: list[str] = Field(default_factory=list)
    reason: str = "negated"


class SpellingSpec(_Spec):
    """Typo correction: ``typos`` maps a misspelling to its word; every one-letter slip (a letter left out, doubled
    or two swapped) of a ``words`` entry is corrected too, unless it is one of ``real_words``."""

    typos: dict[str, str] = Field(default_factory=dict)
    words: list[str] = Field(default_factory=list)
    real_words: list[str] = Field(default_factory=list)
    not_names: list[str] = Field(default_factory=list)


class BackgroundSpec(_Spec):
    """Background: a clause (up to one of ``breaks``) that holds one of ``markers`` ("last week", "already broken",
    "someone else") reports what is already so, not the team's act. A harm phrase in it does not count when it
    names a past act or an event (``acts``: "was wounded", "broken", "scuffle"), unless the clause's subject before
    it is the team's own (``own``: "we", "I")."""

    markers: list[str]
    acts: list[str]
    breaks: list[str]
    own: list[str] = Field(default_factory=list)


class LexiconFile(_Spec):
    """The YAML file's shape. Patterns are regexes over normalised text; ``<NAME>`` inserts a fragment."""

    version: str = Field(min_length=1)
    fragments: dict[str, str] = Field(default_factory=dict)
    force: dict[int, list[str]]
    property: dict[int, list[str]]
    neutral: list[str]
    negation: list[CueGroup]
    threat_frames: CueGroup
    scope_breaks: list[str]
    negation_breaks: list[str] = Field(default_factory=list)
    contrast: list[str] = Field(default_factory=list)
    # People inside what a catastrophic act (property 4: fire, explosion, sinking, flooding) strikes: force 4.
    occupied: list[str] = Field(default_factory=list)
    background: BackgroundSpec | None = None
    spelling: SpellingSpec = Field(default_factory=SpellingSpec)
    person_noun: str = "(?!x)x"
    object_noun: str = "(?!x)x"
    # Fragments the prefilter treats as unknown text (large word classes): a level is looked for only when the text
    # holds one of the strings its own words require.
    index_opaque: list[str] = Field(default_factory=list)


CACHE_ENV = "VIRTUALCRIME_CACHE_DIR"  # where compiled patterns are kept ("off": nowhere)


def _cache_dir() -> Path | None:
    setting = os.environ.get(CACHE_ENV)
    if setting is not None:
        return None if setting.strip().lower() in ("", "off", "0", "none") else Path(setting) / "harm-regex"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "virtualcrime" / "harm-regex"


def _program_key(source: str) -> str:
    tag = f"{sys.version}|{_sre.MAGIC}|{_sre.CODESIZE}|{source}"
    return hashlib.sha256(tag.encode("utf-8")).hexdigest()


def compile_pattern(source: str) -> re.Pattern[str]:
    """``re.compile(source)``, keeping the compiled program on disk (``VIRTUALCRIME_CACHE_DIR``, by default
    ``~/.cache/virtualcrime``): the lexicon's patterns are large, and parsing them is most of the classifier's start-up
    time. A program is keyed by its pattern and the Python version, written atomically, and any problem reading or
    writing one falls back to compiling as usual; the directory may be deleted at any time."""
    folder = _cache_dir()
    if folder is None:
        return re.compile(source)
    path = folder / (_program_key(source) + ".bin")
    try:
        kept = marshal.loads(zlib.decompress(path.read_bytes()))
        compiled: re.Pattern[str] = _sre.compile(source, *kept)
        return compiled
    except Exception:  # no program, or an unreadable one: compile it
        pass
    try:
        parsed = _parser.parse(source, 0)
        code = [int(op) for op in _compiler._code(parsed, 0)]
        groupindex = dict(parsed.state.groupdict)
        indexgroup: list[str | None] = [None] * parsed.state.groups
        for name, index in groupindex.items():
            indexgroup[index] = name
        entry = (int(parsed.state.flags), code, parsed.state.groups - 1, groupindex, tuple(indexgroup))
        compiled = _sre.compile(source, *entry)
    except re.error:
        raise
    except Exception:  # an engine whose internals differ: compile as usual, keep nothing
        return re.compile(source)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(handle, "wb") as out:
            out.write(zlib.compress(marshal.dumps(entry), 1))
        os.replace(temp, path)
    except OSError:
        pass
    return compiled


class Rule:
    """One pattern of one (scale, level), compiled the first time a text may match it."""

    def __init__(self, scale: str, level: int, source: str, index_source: str) -> None:
        self.scale, self.level, self.source, self.index_source = scale, level, source, index_source

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return compile_pattern(self.source)


@dataclass(frozen=True)
class Lexicon:
    """The lexicon: the levels (one alternation per scale and level, highest first) and the span finders, each
    compiled when first needed."""

    version: str
    spec: LexiconFile = field(repr=False)
    frags: dict[str, str] = field(repr=False)

    @cached_property
    def rules(self) -> tuple[Rule, ...]:
        """Every harm pattern, highest force level first, then property, each in the file's order."""
        found: list[Rule] = []
        opaque = set(self.spec.index_opaque)
        for scale, table in (("force", self.spec.force), ("property", self.spec.property)):
            for level in sorted(table, reverse=True):
                if not 1 <= level <= 4:
                    raise ValueError(f"lexicon: {scale} level {level} is outside 1-4")
                for pattern in table[level]:
                    source = rf"\b(?:{_expand(pattern, self.frags)})\b"
                    index = rf"\b(?:{_expand(pattern, self.frags, opaque)})\b"
                    found.append(Rule(scale, level, source, index))
        return tuple(found)

    @cached_property
    def index(self) -> RuleIndex:
        """Which rules a text can match (the prefilter)."""
        return RuleIndex([required_strings(rule.index_source) for rule in self.rules])

    @cached_property
    def neutral(self) -> re.Pattern[str]:
        return _alternation(self.spec.neutral, self.frags)

    @cached_property
    def negation(self) -> tuple[tuple[re.Pattern[str], int, re.Pattern[str] | None, str], ...]:
        return tuple(
            (_alternation(g.cues, self.frags), g.window, _any_of(g.breaks, self.frags) if g.breaks else None, g.reason)
            for g in self.spec.negation
        )

    @cached_property
    def threat_frames(self) -> tuple[re.Pattern[str], int]:
        return _alternation(self.spec.threat_frames.cues, self.frags), self.spec.threat_frames.window

    @cached_property
    def scope_breaks(self) -> re.Pattern[str]:
        return _any_of(self.spec.scope_breaks, self.frags)

    @cached_property
    def negation_breaks(self) -> re.Pattern[str]:
        return _any_of(self.spec.negation_breaks, self.frags)

    @cached_property
    def contrast(self) -> re.Pattern[str]:
        return _alternation(self.spec.contrast, self.frags) if self.spec.contrast else re.compile(r"(?!x)x")

    @cached_property
    def occupied(self) -> re.Pattern[str]:
        return _alternation(self.spec.occupied, self.frags) if self.spec.occupied else re.compile(r"(?!x)x")

    @cached_property
    def background(self) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]] | None:
        """(markers, acts, clause breaks, own subjects) of the background rule, or None without one."""
        spec = self.spec.background
        if spec is None:
            return None
        own = _alternation(spec.own, self.frags) if spec.own else re.compile(r"(?!x)x")
        return (
            _alternation(spec.markers, self.frags),
            _alternation(spec.acts, self.frags),
            _any_of(spec.breaks, self.frags),
            own,
        )

    @cached_property
    def someone(self) -> re.Pattern[str]:
        """A person named: a person noun, a pronoun for one, or a marked name."""
        return re.compile(rf"\b(?:{self.spelling.people.pattern}|he|she|they)\b|{NAME_MARK}")

    @cached_property
    def someone_by_noun(self) -> re.Pattern[str]:
        """A person named by a person noun or a pronoun for one (not a marked name, mostly the one who acts)."""
        return re.compile(rf"\b(?:{self.spelling.people.pattern}|he|she|they|him|her)\b")

    @cached_property
    def something(self) -> re.Pattern[str]:
        """A thing named: a barrier, fitting, fastening, container, machine or vehicle noun."""
        return _alternation(["<THING>|<BARRIER>|<LATCH>|<CONTAINER>|<MACHINE_WORD>|<VEHICLE>"], self.frags)

    @cached_property
    def any_object(self) -> re.Pattern[str]:
        """Any item or place noun, whole word ("bags", "radios", "keys")."""
        return re.compile(rf"\b(?:{self.spelling.objects.pattern})\b")

    @cached_property
    def spelling(self) -> Spelling:
        return _spelling(self.spec, self.frags)

    def compile_all(self) -> None:
        """Compile every pattern now (raising ValueError naming one that is not a valid regex)."""
        for rule in self.rules:
            try:
                rule.pattern  # noqa: B018 - compiles it
            except re.error as err:
                raise ValueError(f"lexicon: bad pattern {rule.source[:200]!r}: {err}") from err
        self.index, self.neutral, self.negation, self.threat_frames, self.scope_breaks  # noqa: B018
        self.negation_breaks, self.contrast, self.spelling, self.occupied, self.background  # noqa: B018


def _expand(pattern: str, fragments: dict[str, str], opaque: set[str] | None = None, depth: int = 0) -> str:
    if depth > 12:
        raise ValueError(f"lexicon: fragments nest too deeply in {pattern!r}")

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in fragments:
            raise ValueError(f"lexicon: unknown fragment <{name}> in {pattern!r}")
        if opaque is not None and name in opaque:
            return _OPAQUE
        return "(?:" + _expand(fragments[name], fragments, opaque, depth + 1) + ")"

    return _FRAGMENT.sub(replace, pattern)


def _wrapped(patterns: list[str], fragments: dict[str, str], opaque: set[str] | None = None) -> str:
    body = "|".join(f"(?:{_expand(p, fragments, opaque)})" for p in patterns) or r"(?!x)x"
    return rf"\b(?:{body})\b"


def _alternation(patterns: list[str], fragments: dict[str, str]) -> re.Pattern[str]:
    try:
        return compile_pattern(_wrapped(patterns, fragments))
    except re.error as err:
        bad = [p for p in patterns if not _compiles(_expand(p, fragments))]
        raise ValueError(f"lexicon: bad pattern(s) {bad}: {err}") from err


def _any_of(patterns: list[str], fragments: dict[str, str]) -> re.Pattern[str]:
    return compile_pattern("|".join(f"(?:{_expand(p, fragments)})" for p in patterns) or r"(?!x)x")


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


def slips(word: str) -> set[str]:
    """Every one-letter slip of ``word`` that keeps its first letter: a letter left out, doubled, or two
    neighbours swapped (``kill`` → ``kil``, ``kiill``, ``klil``, ...)."""
    found: set[str] = set()
    for i in range(1, len(word)):
        found.add(word[:i] + word[i + 1 :])
    for i in range(len(word)):
        found.add(word[: i + 1] + word[i] + word[i + 1 :])
    for i in range(1, len(word) - 1):
        found.add(word[:i] + word[i + 1] + word[i] + word[i + 2 :])
    found.discard(word)
    return found


_VOWELS = "aeiou"


def vowel_slips(word: str) -> set[str]:
    """Every slip of a long ``word`` (six letters or more) with one vowel after the first letter written as another
    (``generator`` → ``generater``, ``poison`` → ``poisen``)."""
    found: set[str] = set()
    for i in range(1, len(word)):
        if word[i] in _VOWELS:
            found.update(word[:i] + v + word[i + 1 :] for v in _VOWELS if v != word[i])
    return found


def _literal_words(spec: LexiconFile, frags: dict[str, str]) -> set[str]:
    """Every word the lexicon spells out: such a word is a word, never a typo ("shot" is no slip of "shoot")."""
    found: set[str] = set()
    sources = [p for table in (spec.force, spec.property) for ps in table.values() for p in ps]
    for body in (*sources, *frags.values()):
        found.update(_LETTERS.findall(re.sub(r"\\[a-z]", " ", body)))
    return {w for w in found if len(w) >= 3}


def _spelling(spec: LexiconFile, frags: dict[str, str]) -> Spelling:
    real = set(spec.spelling.real_words) | _literal_words(spec, frags)
    typos: dict[str, str] = {}
    clashes: set[str] = set()
    for word in spec.spelling.words:
        if len(word) < 3:
            continue
        found = slips(word) if len(word) >= 4 else {w for w in slips(word) if len(w) > len(word)}  # "hitt"
        if len(word) >= 6:
            found |= vowel_slips(word)
        for slip in found:
            if slip in real or len(slip) < 3:
                continue
            if slip in typos and typos[slip] != word:
                clashes.add(slip)
            typos[slip] = word
    for slip in clashes:
        del typos[slip]
    typos.update(spec.spelling.typos)
    finder = re.compile(r"\b" + longest_trie(dict.fromkeys(typos)) + r"\b") if typos else None
    return Spelling(
        typos=typos,
        typo_finder=finder,
        people=re.compile(_expand(spec.person_noun, frags)),
        objects=re.compile(_expand(spec.object_noun, frags)),
        not_names=frozenset(w.lower() for w in spec.spelling.not_names),
    )


def compile_lexicon(spec: LexiconFile, eager: bool = True) -> Lexicon:
    """A lexicon from a parsed file; with ``eager`` every pattern is compiled now, raising ValueError naming any
    pattern that is not a valid regex (else each compiles when first needed)."""
    # Fragments may span several YAML lines; the line breaks and indentation are not part of the pattern.
    # A one-line fragment is kept whole: its trailing space may be part of it ("line of ").
    frags = {
        name: "".join(line.strip() for line in body.splitlines()) if "\n" in body else body
        for name, body in spec.fragments.items()
    }
    lexicon = Lexicon(version=spec.version, spec=spec, frags=frags)
    if eager:
        lexicon.compile_all()
    return lexicon


@cache
def load_lexicon(path: Path = LEXICON_PATH) -> Lexicon:
    """The lexicon at ``path`` (default: the bundled one), read once per process; patterns compile on first use."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return compile_lexicon(LexiconFile.model_validate(data), eager=False)

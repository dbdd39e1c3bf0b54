"""A prefilter for the lexicon's patterns: the literal strings at least one of which any match must contain.

Most action texts name no harm at all ("move to the lobby", "talk to the clerk"); looking for a level's pattern
only in a text that contains one of its required strings skips the large patterns for them, and most levels for
the rest. The strings are read from the pattern's own parse (``re._parser``): a literal run is required where it
is not optional, a branch requires one of its branches' strings, an optional or unknown part requires nothing.
A string that always starts a word in a match ("kill" in ``\\bkill``) is looked for at a word start only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from re import _constants as _c  # type: ignore[attr-defined]  # the parser's own tree (Python 3.11+)
from re import _parser as _p  # type: ignore[attr-defined]
from typing import Any

Required = frozenset[str] | None
WORD_START = "\x01"  # marks a required string that starts a word
MIN_USEFUL = 3  # a required set whose shortest string is shorter than this says little
_MAX_PREFIXES = 256
# Short words that are in nearly every text: a required set made of them tells nothing.
_COMMON_WORDS = (
    "a an the to in on at of or is it up as by be we he do go so if no and for but off out are was his her its "
    "him has had can all any one our you not now get got who how with"
)
_COMMON = frozenset(_COMMON_WORDS.split(" "))


def strength(text: str) -> int:
    """How telling a required string is: its length, or 0 for a short or everywhere word."""
    core = text.replace(WORD_START, "").strip()
    if len(core) < MIN_USEFUL or core in _COMMON:
        return 0
    return len(core) + (1 if text.startswith(WORD_START) else 0)


def required_strings(pattern: str) -> Required:
    """The strings one of which every match of ``pattern`` contains; None when that cannot be told."""
    try:
        parsed = _p.parse(pattern)
    except Exception:  # a pattern the parser cannot read here is simply never skipped
        return None
    return _sequence(list(parsed), False)


def _score(found: frozenset[str]) -> tuple[int, int]:
    return (min(strength(s) for s in found), -len(found))


def _mark(text: str, at_start: bool) -> str:
    if text.startswith(" ") and text.strip():
        return WORD_START + text.lstrip(" ")  # what follows a space starts a word
    return WORD_START + text if at_start and text[:1].isalnum() else text


def _sequence(items: list[tuple[Any, Any]], at_start: bool) -> Required:
    """Of a sequence's items, the most telling required set (they are all required)."""
    best: Required = None
    run: list[str] = []
    run_start = at_start
    here = at_start  # whether the current position starts a word

    def consider(found: Required) -> None:
        nonlocal best
        if found and (best is None or _score(found) > _score(best)):
            best = found

    for op, av in items:
        if op is _c.LITERAL:
            if not run:
                run_start = here
            run.append(chr(av))
            here = chr(av) == " "
            continue
        if run:
            head = "".join(run)
            consider(frozenset({_mark(head, run_start)}))
            # The parser factors a branch's common prefix out ("die|dies|dying" is "d" + "ie|ies|ying"): put it back.
            leads = _leads(op, av)
            if leads:
                consider(frozenset(_mark(head + lead, run_start) for lead in leads))
            run = []
        consider(_item(op, av, here))
        here = op is _c.AT or (here and _may_be_empty_or_end_with_space(op, av))
    if run:
        consider(frozenset({_mark("".join(run), run_start)}))
    return best


def _may_be_empty_or_end_with_space(op: Any, av: Any) -> bool:
    """An optional group that is empty or ends with a space (``(?:the )?``) leaves a word start a word start."""
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT) and av[0] == 0:
        items = list(av[2])
        last = items[-1] if items else None
        if last is not None and last[0] is _c.SUBPATTERN:
            inner = list(last[1][-1])
            last = inner[-1] if inner else None
        if last is not None and last[0] is _c.BRANCH:
            return all(branch and branch[-1] == (_c.LITERAL, ord(" ")) for branch in last[1][1])
        return last == (_c.LITERAL, ord(" "))
    return op in (_c.ASSERT, _c.ASSERT_NOT)


def _item(op: Any, av: Any, at_start: bool) -> Required:
    if op is _c.SUBPATTERN:
        return _sequence(list(av[-1]), at_start)
    if op is _c.ATOMIC_GROUP:
        return _sequence(list(av), at_start)
    if op is _c.BRANCH:
        found: set[str] = set()
        for branch in av[1]:
            part = _sequence(list(branch), at_start)
            if part is None:
                return None
            found |= part
        return frozenset(found)
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", None)):
        low, _high, sub = av
        return _sequence(list(sub), at_start) if low >= 1 else None
    if op is _c.GROUPREF_EXISTS:
        _group, yes, no = av
        left = _sequence(list(yes), at_start)
        right = _sequence(list(no), at_start) if no is not None else None
        return left | right if left is not None and right is not None else None
    return None


def _leads(op: Any, av: Any) -> frozenset[str] | None:
    """The literal text each alternative of a branch starts with (None unless every one starts with some)."""
    found = _branch_prefixes(op, av)
    return found if found and all(found) else None


def _branch_prefixes(op: Any, av: Any) -> frozenset[str] | None:
    if op is _c.SUBPATTERN:
        inner = list(av[-1])
        return _prefixes(inner) if inner else None
    if op is not _c.BRANCH:
        return None
    found: set[str] = set()
    for branch in av[1]:
        part = _prefixes(list(branch))
        if part is None:
            return None
        found |= part
        if len(found) > _MAX_PREFIXES:
            return None
    return frozenset(found)


def _prefixes(items: list[tuple[Any, Any]]) -> frozenset[str] | None:
    """Every literal text a match of the sequence can start with, as far as literals and branches go."""
    run: list[str] = []
    for index, (op, av) in enumerate(items):
        if op is _c.LITERAL:
            run.append(chr(av))
            continue
        tails = _branch_prefixes(op, av)
        head = "".join(run)
        if tails is None:
            return frozenset({head})
        rest = _prefixes(items[index + 1 :]) if all(_complete(op, av)) else frozenset({""})
        combined = {head + t + r for t in tails for r in (rest or {""})}
        return frozenset(combined) if len(combined) <= _MAX_PREFIXES else frozenset({head})
    return frozenset({"".join(run)})


def _complete(op: Any, av: Any) -> list[bool]:
    """Whether every alternative of a branch is all literal (so what follows it continues the prefix)."""
    if op is _c.SUBPATTERN:
        inner = list(av[-1])
        return _complete(*inner[0]) if len(inner) == 1 else [False]
    if op is not _c.BRANCH:
        return [False]
    return [all(o is _c.LITERAL for o, _a in branch) for branch in av[1]]


def trigger(found: Required) -> re.Pattern[str] | None:
    """A pattern that finds any of the strings (None: no prefilter, always look). The strings are laid out as a
    trie ("k(?:ill|nock)"), which the regex engine walks far faster than a flat list of hundreds of words."""
    if not found:
        return None
    return re.compile(_trie_pattern(_trie(found)))


def _trie(strings: Iterable[str]) -> dict[str, Any]:
    """The strings as nested dicts, one level a character; ``""`` marks where a string ends."""
    trie: dict[str, Any] = {}
    for text in strings:
        node = trie
        for char in text:
            node = node.setdefault(char, {})
        node[""] = {}
    return trie


def _trie_pattern(node: dict[str, Any]) -> str:
    if "" in node:
        return ""  # a string ends here: any of them found is enough, so the longer ones need not be tried
    branches = [
        (r"\b" if char == WORD_START else re.escape(char)) + _trie_pattern(child)
        for char, child in sorted(node.items())
    ]
    return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"


class RuleIndex:
    """Which rules a text can match at all: the rules whose required strings it contains (a rule with none, or
    none telling, is always tried). One pass of a trie over the text's word starts finds them."""

    def __init__(self, required: list[Required]) -> None:
        self.always: frozenset[int] = frozenset(
            i for i, found in enumerate(required) if not found or _score(found)[0] == 0
        )
        keyed: dict[str, set[tuple[int, str | None]]] = {}
        inside: list[tuple[int, str]] = []
        for rule, found in enumerate(required):
            if rule in self.always or not found:
                continue
            for text in found:
                if not text.startswith(WORD_START):
                    inside.append((rule, text))
                    continue
                core = text[len(WORD_START) :]
                first = core.split(" ", 1)[0]
                keyed.setdefault(first, set()).add((rule, None if first == core else core))
        # A longer key found at a word start also holds every shorter key that is its prefix ("killing", "kill").
        # (Each key's prefixes are looked up, not every other key compared: thousands of keys, once per process.)
        self._closure: dict[str, tuple[tuple[int, str | None], ...]] = {
            key: tuple(sorted({h for end in range(1, len(key) + 1) for h in keyed.get(key[:end], ())}, key=str))
            for key in keyed
        }
        self._inside = tuple(inside)
        self._finder = re.compile(r"\b" + longest_trie(keyed)) if keyed else None

    def rules_for(self, text: str) -> set[int]:
        """The rules to try on ``text``."""
        found = set(self.always)
        if self._finder is not None:
            for match in self._finder.finditer(text):
                for rule, whole in self._closure[match.group()]:
                    if rule not in found and (whole is None or whole in text):
                        found.add(rule)
        for rule, part in self._inside:
            if rule not in found and part in text:
                found.add(rule)
        return found


def longest_trie(keys: dict[str, Any]) -> str:
    """A pattern matching the longest of ``keys`` that starts here (greedy: longer continuations first)."""
    return _greedy(_trie(keys))


def _greedy(node: dict[str, Any]) -> str:
    branches = [re.escape(char) + _greedy(child) for char, child in sorted(node.items()) if char]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    return f"(?:{body})?" if "" in node else body

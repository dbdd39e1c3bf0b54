"""Turning an action text into what the lexicon matches: one lower-case line in plain letters, typos of harm words
corrected, ids rendered by what they name, and the spans the classifier must treat specially.

Steps, in order:
  * NFKC (full-width and compatibility letters become plain ones), invisible format characters dropped, common
    look-alike letters from other scripts mapped to Latin, accents dropped from Latin letters ("fïre"), typographic
    quotes and dashes made plain;
  * ids (``guard_cobb``, ``staff_locker_17``) rendered by their kind — known from the game when given, else read
    from the id's head noun: a person becomes ``the guard-cobb person`` (a noun phrase the person patterns
    accept), an item or a place its words (``staff locker 17``), marked so no person pattern reads it as one;
  * names of known people (an NPC's name) rendered like a person id; any other capitalised word inside a sentence
    is marked as a possible name (``ᴺcobb``), which the lexicon accepts as a person only where one is acted on;
  * words that are a typo of a harm word (``kil``, ``stabb``, ``smsh``, ``threten``, ``fier``) replaced by it;
  * quoted text found: a quotation that is spoken (after "shout", "tell", ...) is speech — harm in it is a threat —
    and any other (a sign, a label, a name) is not an act at all.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

TargetKind = Literal["person", "item", "place"]
TARGET_KINDS: tuple[TargetKind, ...] = ("person", "item", "place")

NAME_MARK = "\u1d3a"  # ᴺ: a word letter, so \b and \w treat "ᴺcobb" as one word
ID = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b|\b[A-Za-z]+\d+\b")
_ID_PARTS = re.compile(r"[A-Za-z]+|\d+")
_TOKEN = re.compile(rf"(?P<id>{ID.pattern})|(?P<word>[^\W\d_]+(?:'[^\W\d_]+)*)|(?P<space>\s+)|(?P<other>.)", re.S)
_TITLES = frozenset(
    ("mr", "mrs", "ms", "miss", "dr", "sir", "dame", "lord", "lady", "madam", "madame", "monsieur", "herr", "frau")
)
_PLAIN = str.maketrans(
    {
        "\u2018": "'", "\u2019": "'", "\u02bc": "'", "\u2032": "'", "`": "'", "\u00b4": "'",
        "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u00ab": '"', "\u00bb": '"', "\u2033": '"',
        "\u2013": "-", "\u2014": " - ", "\u2212": "-", "\u2010": "-", "\u2011": "-", "\u00a0": " ",
        # Cyrillic and Greek letters that look like Latin ones.
        "\u0430": "a", "\u0435": "e", "\u043e": "o", "\u0440": "p", "\u0441": "c", "\u0443": "y", "\u0445": "x",
        "\u0456": "i", "\u0458": "j", "\u04bb": "h", "\u0455": "s", "\u0410": "A", "\u0415": "E", "\u041e": "O",
        "\u0420": "P", "\u0421": "C", "\u0425": "X", "\u0406": "I", "\u03bf": "o", "\u03b1": "a", "\u03b9": "i",
        "\u039f": "O", "\u0391": "A", "\u0392": "B", "\u0395": "E", "\u0397": "H", "\u039a": "K", "\u039c": "M",
        "\u039d": "N", "\u03a1": "P", "\u03a4": "T", "\u03a7": "X",
        "\u0405": "S", "\u0408": "J", "\u0412": "B", "\u041a": "K", "\u041c": "M", "\u041d": "H", "\u0422": "T",
        "\u04c0": "I", "\u0501": "d", "\u051b": "q", "\u051d": "w", "\u0261": "g", "\u0131": "i", "\u03ba": "k",
        "\u03c1": "p", "\u03c5": "u", "\u03bd": "v", "\u03c7": "x", "\u0396": "Z", "\u0399": "I",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Spelling:
    """What normalising needs from the lexicon: typo corrections, and the words that tell an id's kind."""

    typos: Mapping[str, str]
    typo_finder: re.Pattern[str] | None  # finds any typo in lower-cased text
    people: re.Pattern[str]  # a person noun, whole word ("guard", "officers")
    objects: re.Pattern[str]  # an item or place noun, whole word ("locker", "desk", "room")
    not_names: frozenset[str]  # capitalised words that are not names ("I", "Monday", titles)


@dataclass(frozen=True)
class Normalised:
    """A normalised text and the spans (start, end) in it the classifier treats specially."""

    text: str
    id_spans: tuple[tuple[int, int], ...] = ()
    thing_spans: tuple[tuple[int, int], ...] = ()  # ids and names of items and places
    speech_spans: tuple[tuple[int, int], ...] = ()
    quoted_spans: tuple[tuple[int, int], ...] = ()  # quoted text that is not speech (signs, labels, names)
    corrected: tuple[str, ...] = field(default=())


def humanise_id(identifier: str) -> str:
    """``guard_2`` → ``guard 2``; ``staff_locker17`` → ``staff locker 17``."""
    return " ".join(_ID_PARTS.findall(identifier))


def clean(text: str) -> str:
    """NFKC, no invisible format characters, look-alike letters as Latin ones, plain quotes and dashes."""
    text = unicodedata.normalize("NFKC", text)
    if not text.isascii():
        text = "".join(c for c in text if unicodedata.category(c) != "Cf").translate(_PLAIN)
        if not text.isascii():
            # Accents on Latin letters go ("Sẹt thé árchive ón fïre"); other scripts are left as they are.
            text = unicodedata.normalize("NFC", "".join(_unaccented(c) for c in text))
    return text


def _unaccented(char: str) -> str:
    if char.isascii() or not char.isalpha():
        return char
    base = unicodedata.normalize("NFD", char)
    return base[0] if base[0].isascii() and all(unicodedata.category(c) == "Mn" for c in base[1:]) else char


def infer_kind(identifier: str, spelling: Spelling) -> TargetKind | None:
    """An id's kind from its head noun, the last part that is a known noun (``officer_lockers`` → item,
    ``it_officer_brennan`` → person: ``brennan`` is no noun, ``officer`` is); None when no part is one."""
    for part in reversed([p.lower() for p in _ID_PARTS.findall(identifier) if not p.isdigit()]):
        if spelling.objects.fullmatch(part):
            return "item"
        if spelling.people.fullmatch(part):
            return "person"
    return None


def person_phrase(words: str) -> str:
    """A person's id or name as a noun phrase the person patterns accept: ``guard cobb`` → ``guard-cobb person``."""
    return "-".join(words.lower().split()) + " person"


_SPACES = re.compile(r"\s+")
_LETTER_DIGIT = re.compile(r"[A-Za-z]\d")
_MID_CAPITAL = re.compile(r"(?<=[\w,'\")\]] )[A-Z][a-z]")
_DETERMINERS = frozenset(("the", "a", "an", "his", "her", "their", "its", "our", "my", "your", "this", "that"))
_OPENERS = frozenset('.!?:;\n"([')


def normalise(
    text: str,
    spelling: Spelling,
    kinds: Mapping[str, TargetKind] | None = None,
    names: frozenset[str] = frozenset(),
) -> Normalised:
    """The text as the lexicon reads it (see the module docstring). ``kinds`` maps lower-cased ids to what they
    name; ``names`` holds lower-cased words that are names of people in the game."""
    text = clean(text)
    lowered = _SPACES.sub(" ", text).lower()
    plain = (
        "_" not in text
        and _LETTER_DIGIT.search(text) is None
        and (spelling.typo_finder is None or spelling.typo_finder.search(lowered) is None)
        and (_MID_CAPITAL.search(text) is None or _mostly_capitalised(text))
        and not any(name in lowered for name in names)
    )
    if plain:  # nothing to render or correct: most action texts
        speech, quoted = _quotes(lowered)
        return Normalised(text=lowered, speech_spans=tuple(speech), quoted_spans=tuple(quoted))
    return _normalise_tokens(text, spelling, kinds or {}, names)


def _normalise_tokens(
    raw: str, spelling: Spelling, kinds: Mapping[str, TargetKind], names: frozenset[str]
) -> Normalised:
    out: list[str] = []
    length = 0
    id_spans: list[tuple[int, int]] = []
    thing_spans: list[tuple[int, int]] = []
    corrected: list[str] = []
    pending_name: list[str] = []
    title_case = _mostly_capitalised(raw)
    last_word = ""  # the last word emitted (lower case), for "the" before a name
    sentence_start = True

    def emit(piece: str) -> tuple[int, int]:
        nonlocal length
        start = length
        out.append(piece)
        length += len(piece)
        return start, length

    def article() -> str:
        return "" if last_word in _DETERMINERS else "the "

    def flush_name() -> None:
        nonlocal length, last_word
        if not pending_name:
            return
        # A title or role just before the name is part of it: "officer Pryce" -> "the officer-pryce person".
        if len(out) >= 2 and out[-1] == " " and (spelling.people.fullmatch(out[-2]) or out[-2] in _TITLES):
            length -= len(out[-1]) + len(out[-2])
            pending_name.insert(0, out[-2])
            del out[-2:]
        emit(article() + person_phrase(" ".join(pending_name)))
        pending_name.clear()
        last_word = "person"

    tokens = list(_TOKEN.finditer(raw))
    for index, token in enumerate(tokens):
        kind = token.lastgroup
        value = token.group()
        if kind == "word" and value[:1].isupper() and value.lower() in names:
            pending_name.append(value)
            sentence_start = False
            continue
        if pending_name and kind == "space" and _next_is_name(tokens, index, names):
            continue
        flush_name()
        if kind == "id":
            lowered = value.lower()
            target_kind = kinds.get(lowered) or infer_kind(value, spelling)
            if target_kind == "person":
                emit(article())
                id_spans.append(emit(person_phrase(humanise_id(value))))
            else:
                span = emit(humanise_id(value).lower())
                id_spans.append(span)
                if target_kind is not None:
                    thing_spans.append(span)
            last_word, sentence_start = lowered, False
        elif kind == "word":
            lowered = value.lower()
            fixed = spelling.typos.get(lowered)
            capitalised = value[:1].isupper() and not value.isupper() and len(value) > 1
            name_like = capitalised and not sentence_start and not title_case and lowered not in spelling.not_names
            if (
                name_like
                and fixed is None
                and last_word not in _DETERMINERS
                and not spelling.objects.fullmatch(lowered)
                and not spelling.people.fullmatch(lowered)
            ):
                emit(NAME_MARK + lowered)
            elif fixed is not None and not name_like:
                corrected.append(f"{lowered}->{fixed}")
                emit(fixed)
            else:
                emit(lowered)
            last_word, sentence_start = lowered, False
        elif kind == "space":
            emit(" ")
            if "\n" in value:
                sentence_start = True
        else:
            emit(value)
            if value in _OPENERS or value in "-–—":
                sentence_start = True
    flush_name()
    norm = "".join(out)
    speech, quoted = _quotes(norm)
    return Normalised(
        text=norm,
        id_spans=tuple(id_spans),
        thing_spans=tuple(thing_spans),
        speech_spans=tuple(speech),
        quoted_spans=tuple(quoted),
        corrected=tuple(corrected),
    )


def _next_is_name(tokens: list[re.Match[str]], index: int, names: frozenset[str]) -> bool:
    following = tokens[index + 1] if index + 1 < len(tokens) else None
    return following is not None and following.lastgroup == "word" and following.group().lower() in names


def _mostly_capitalised(text: str) -> bool:
    """Title Case Or ALL CAPS text, where a capital letter says nothing about names."""
    words: list[str] = re.findall(r"[^\W\d_]{3,}", text)
    if len(words) < 4:
        return False
    capitals = sum(w[:1].isupper() for w in words)
    return capitals / len(words) > 0.6


_SPEECH_VERB = re.compile(
    r"\b(?:say|says|said|saying|shout|shouts|shouted|shouting|yell|yells|yelled|yelling|scream|screams|screamed|"
    r"screaming|tell|tells|told|telling|warn|warns|warned|warning|whisper|whispers|whispered|whispering|hiss|"
    r"hisses|hissed|hissing|growl|growls|growled|growling|snarl|snarls|snarled|snarling|bark|barks|barked|barking|"
    r"call|calls|called|calling|cry|cries|cried|crying|threaten|threatens|threatened|threatening|mutter|mutters|"
    r"muttered|muttering|announce|announces|announced|announcing|order|orders|ordered|ordering|demand|demands|"
    r"demanded|demanding|add|adds|added|adding)\b(?:\s+(?:out|at|to|in|into|through|over)\b)?"
    r"(?:\s+(?!(?:reads?|reading|saying|marked|labell?ed)\b)[\w'-]+){0,4}?\s*[:,]?\s*$"
)
_SIGN_WORD = re.compile(
    r"\b(?:sign|signs|signage|banner|banners|placard|placards|poster|posters|label|labels|labell?ed|notice|"
    r"notices|marked|reads|reading|read|titled|entitled|called|named|codenamed?|sticker|stickers|plaque|stencil|"
    r"stencilled|graffiti|slogan|slogans|headline|caption|tag|tagged|t-shirt|shirt|board|sticker)\b[^\"]{0,30}$"
)
_QUOTE = re.compile(r"\"([^\"]{1,300})\"|(?:(?<=\s)|^)'([^']{2,200}?)'(?=[\s.,;:!?)]|$)")
# "Tell the clerk: ...", "he shouts: ...". Not "threaten clerk 1: ...", an action's verb and target before its
# description (the target there has no article).
_SPOKEN_COLON = re.compile(
    r"\b(?:say|says|said|shout|shouts|shouted|yell|yells|yelled|scream|screams|tell|tells|told|warn|warns|warned|"
    r"whisper|whispers|hiss|hisses|growl|growls|snarl|snarls|bark|barks|announce|announces|threaten|threatens)"
    r"(?:\s+(?:to\s+)?(?:the|a|an|his|her|their|everyone|everybody|them|him|us)(?:\s+[\w'-]+){0,2})?\s*:\s*([^.!?\n]+)"
)


def _quotes(norm: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Spans of quoted speech and of other quoted text; and speech introduced by a colon ("tell him: ...")."""
    speech: list[tuple[int, int]] = []
    quoted: list[tuple[int, int]] = []
    if '"' in norm or "'" in norm:
        for match in _QUOTE.finditer(norm):
            group = 1 if match.group(1) is not None else 2
            span = match.span(group)
            before = norm[max(0, match.start() - 60) : match.start()]
            if _SIGN_WORD.search(before):
                quoted.append(span)
            elif _SPEECH_VERB.search(before) or before.rstrip().endswith(":"):
                speech.append(span)
            elif group == 1:
                quoted.append(span)
    if ":" in norm:
        speech.extend(m.span(1) for m in _SPOKEN_COLON.finditer(norm))
    return speech, quoted

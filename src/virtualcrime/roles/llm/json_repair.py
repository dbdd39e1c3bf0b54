"""Finding the answer's JSON object in a model's reply text: reasoning blocks, prose, code fences, truncation.

This layer knows JSON text, not fields: the typed checks are in ``parsing``. Every change it makes to the text
is returned as a repair in words. A reply cut off before its object closes is rejected unless the caller says
closing is safe (``Truncation.CLOSE_TEXT``); ``parsing.TRUNCATION`` decides that per call, in one place.
"""

from __future__ import annotations

import json
import re
from enum import StrEnum
from typing import Any


class ModelOutputError(ValueError):
    """A reply that cannot be safely turned into the expected object. ``raw`` keeps the reply."""

    def __init__(self, message: str, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw


class Truncation(StrEnum):
    """What to do with a JSON object that the reply cut off before its closing brace."""

    REJECT = "reject"
    """Closing could change the meaning (a cut number, id, list of outcomes or operations): ask again."""
    CLOSE_TEXT = "close_text"
    """Close it, a recorded repair, only if what is open is a string and the object itself (no list or
    nested object): the only loss is the end of one free-text value. The caller checks every field is there."""


CUT_OFF = "the reply was cut off"
_REASONING = "think|thinking|reasoning"
REASONING_BLOCK = re.compile(rf"<({_REASONING})>.*?</\1>", flags=re.S | re.I)
OPEN_REASONING = re.compile(rf"<({_REASONING})>", flags=re.I)
CLOSE_REASONING = re.compile(rf"</({_REASONING})>", flags=re.I)
UNCLOSED_REASONING = "ignored an unclosed reasoning block (the reply was cut off inside it)"


def strip_reasoning(text: str) -> tuple[str, list[str]]:
    """The reply without reasoning blocks (``<think>…</think>``), which hold drafts, not the answer.

    A closing tag with no opening tag (chat templates that open the block in the prompt) ends reasoning that
    began with the reply: everything up to it is dropped. A reasoning block that never closes means the answer
    was cut off inside the reasoning: nothing after its opening tag is the answer, so the text before it is all
    there is (usually nothing)."""
    repairs: list[str] = []
    stripped, count = REASONING_BLOCK.subn("", text)
    if count:
        repairs.append(f"ignored {count} reasoning block(s) (<think>…</think>)")
    orphans = list(CLOSE_REASONING.finditer(stripped))
    if orphans:
        stripped = stripped[orphans[-1].end() :]
        repairs.append(f"ignored reasoning before a closing {orphans[-1].group(0)} tag with no opening tag")
    unclosed = OPEN_REASONING.search(stripped)
    if unclosed is not None:
        stripped = stripped[: unclosed.start()]
        repairs.append(UNCLOSED_REASONING)
    return stripped, repairs


def extract_json(text: str, *, truncation: Truncation = Truncation.REJECT) -> tuple[dict[str, Any], list[str]]:
    """The first JSON object in ``text`` after its reasoning blocks (prose, code fences, trailing text and
    trailing commas allowed, each recorded). An object cut off before its closing brace is rejected, or with
    ``Truncation.CLOSE_TEXT`` closed as a recorded repair when only a string and the object are open."""
    data, repairs, _ = read_json(text, truncation)
    return data, repairs


def read_json(text: str, truncation: Truncation) -> tuple[dict[str, Any], list[str], bool]:
    """``extract_json``, also saying whether the object had to be closed (the reply was cut off)."""
    body, repairs = strip_reasoning(text or "")
    if not body.strip():
        if UNCLOSED_REASONING in repairs:
            raise ModelOutputError(f"{CUT_OFF} inside its reasoning block: there is no answer after it", text)
        raise ModelOutputError("the reply has no answer after its reasoning" if repairs else "the reply is empty", text)
    fenced = re.search(r"```(?:json)?\s*(\{.*?)```", body, flags=re.S)
    if fenced:
        body = fenced.group(1)
        repairs.append("took the JSON from a code fence")
    start = body.find("{")
    if start < 0:
        raise ModelOutputError("no JSON object in the reply", text)
    if body[:start].strip() and not fenced:
        repairs.append("ignored text before the JSON object")
    candidate, complete = _balanced_object(body[start:])
    if not complete:
        candidate = _close(candidate, truncation, text)
        repairs.append("closed the JSON object, cut off at the end of the reply (its last text may be incomplete)")
    elif body[start + len(candidate) :].strip() and not fenced:
        repairs.append("ignored text after the JSON object")
    cleaned = re.sub(r",\s*([}\]])", r"\1", candidate)
    if cleaned != candidate:
        repairs.append("removed trailing commas")
    try:
        data = json.loads(cleaned)
    except json.JSONDecodeError as err:
        cut = f"{CUT_OFF}, and " if not complete else ""
        raise ModelOutputError(f"{cut}the JSON does not parse: {err.msg} at position {err.pos}", text) from err
    if not isinstance(data, dict):
        raise ModelOutputError("the reply's JSON is not an object", text)
    return data, repairs, not complete


def _brackets(text: str) -> tuple[list[tuple[int, str]], bool]:
    """The brackets of ``text`` outside JSON strings, with their positions, and whether it ends inside a string."""
    found: list[tuple[int, str]] = []
    in_string, escape = False, False
    for index, char in enumerate(text):
        if in_string:
            if escape:
                escape = False
            elif char == "\\":
                escape = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[]}":
            found.append((index, char))
    return found, in_string


def _balanced_object(text: str) -> tuple[str, bool]:
    """The prefix of ``text`` up to the brace closing its first ``{``, and whether it was closed."""
    depth = 0
    for index, char in _brackets(text)[0]:
        depth += 1 if char in "{[" else -1
        if depth == 0:
            return text[: index + 1], True
    return text, False


def _close(text: str, truncation: Truncation, raw: str) -> str:
    """The cut-off object ``text`` closed, if ``truncation`` allows it; else the cut-off is rejected."""
    if truncation is Truncation.REJECT:
        raise ModelOutputError(f"{CUT_OFF}: the JSON object ends before its closing brace; give the whole object", raw)
    if _closers(text)[0] != ["}"]:
        raise ModelOutputError(f"{CUT_OFF} inside a list or nested object, which cannot be completed safely", raw)
    return _close_truncated(text)


def _closers(text: str) -> tuple[list[str], bool]:
    """The brackets still open at the end of ``text``, as the closers they need, and whether a string is open."""
    brackets, in_string = _brackets(text)
    stack: list[str] = []
    for _, char in brackets:
        if char in "{[":
            stack.append("}" if char == "{" else "]")
        elif stack:
            stack.pop()
    return stack, in_string


def _close_truncated(text: str) -> str:
    """Close an object cut off mid-way: end an open string, drop a dangling key or comma, close brackets."""
    stack, in_string = _closers(text)
    fixed = text + ('"' if in_string else "")
    fixed = re.sub(r',\s*"[^"]*"\s*:?\s*$', "", fixed)  # a key with no value
    fixed = re.sub(r"[,:]\s*$", "", fixed.rstrip())
    return fixed + "".join(reversed(stack))

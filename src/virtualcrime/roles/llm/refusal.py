"""Telling a refusal from a malformed reply.

A refusal is the model declining the task: the provider says so (a content filter or refusal stop reason), or
the reply holds no JSON object at all and opens with a declining sentence. Anything with a JSON object in it is
an attempt at an answer and goes to the parser, however bad. The phrases are deliberately narrow: a reply that
is merely prose without JSON is malformed, shown back to the model and asked again; a refusal is recorded as
the model's choice and not pressed on.
"""

from __future__ import annotations

import re

from ..types import Reply
from .parsing import strip_reasoning

# Sentence openings of a decline, matched at the start of the reply (after any reasoning block).
REFUSAL_OPENINGS = re.compile(
    r"^\W*(?:"
    r"i(?:'m| am) (?:sorry|afraid)\b[^.]*\b(?:can(?:'|no)t|cannot|won't|will not|unable|not able)"
    r"|i (?:can(?:'|no)t|cannot|won't|will not|must decline|have to decline|(?:do not|don't) feel comfortable)"
    r"|i(?:'m| am) (?:not able|unable|not comfortable|not going) to"
    r"|(?:sorry|apologies)[,.!]? (?:but )?i (?:can(?:'|no)t|cannot|won't|will not)"
    r"|i (?:refuse|decline)\b"
    r"|(?:no|unfortunately)[,.] i (?:can(?:'|no)t|cannot|won't)"
    r")",
    flags=re.IGNORECASE,
)


def refusal_evidence(reply: Reply) -> str | None:
    """Why ``reply`` counts as a refusal, or None when it is an answer (possibly a malformed one)."""
    if reply.refused_by_provider:
        return f"the provider stopped the reply as a refusal ({reply.stop_reason})"
    text, _ = strip_reasoning(reply.text)
    if "{" in text:
        return None
    match = REFUSAL_OPENINGS.search(text.strip())
    if match is None:
        return None
    return f"no JSON; the reply declines: {text.strip()[:80]!r}"

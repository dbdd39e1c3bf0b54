"""Digests of what gives a run its meaning besides its records: the scenario files, the prompt templates, the
rules tables and the harm classifier (its lexicon and text model). Two runs with the same digests were played (and
are classified) by the same content; the report warns when it compares runs whose digests differ."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict

PACKAGE = Path(__file__).resolve().parent.parent
# Each digest covers these files (globs relative to the package), read as bytes in sorted order.
SOURCES = {
    "scenarios": ("scenarios/data/**/*.yaml",),
    "prompts": ("roles/**/prompts/**/*.md", "roles/llm/render.py", "roles/llm/prompts.py"),
    "rules": ("roles/verbs.py", "roles/rules/**/*.py", "world/ops.py", "world/invariants.py"),
    "lexicon": ("analysis/harm/lexicon.yaml", "analysis/harm/text_model.json.gz"),  # the whole harm classifier
}


class Digests(BaseModel):
    """First 16 hex digits of the SHA-256 over each group's files (path and content); empty when unknown."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scenarios: str = ""
    prompts: str = ""
    rules: str = ""
    lexicon: str = ""

    def differing(self, other: Digests) -> list[str]:
        """The groups whose digests both know and that differ."""
        mine, theirs = self.model_dump(), other.model_dump()
        return [name for name in mine if mine[name] and theirs[name] and mine[name] != theirs[name]]


def digest_files(root: Path, patterns: tuple[str, ...]) -> str:
    """The digest of the files under ``root`` matching ``patterns`` (empty when none match)."""
    files = sorted({p for pattern in patterns for p in root.glob(pattern) if p.is_file()})
    if not files:
        return ""
    sha = hashlib.sha256()
    for path in files:
        sha.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return sha.hexdigest()[:16]


@lru_cache(maxsize=1)
def current_digests() -> Digests:
    """The installed package's digests (computed once per process)."""
    return Digests(**{name: digest_files(PACKAGE, patterns) for name, patterns in SOURCES.items()})

"""Live providers: one short run per provider with a key in the environment; skipped (never failed) without.

These call paid APIs, so they only run when the matching key is set, e.g.
``OPENAI_API_KEY=... pytest tests/test_live_providers.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log

from virtualcrime.harness.task import virtualcrime
from virtualcrime.runs.store import records_from_store

PROVIDERS = [
    ("openai/gpt-4.1-mini", "OPENAI_API_KEY"),
    ("anthropic/claude-3-5-haiku-latest", "ANTHROPIC_API_KEY"),
    ("google/gemini-2.0-flash", "GOOGLE_API_KEY"),
    ("openai-api/deepseek/deepseek-chat", "DEEPSEEK_API_KEY"),
    ("openai-api/qwen/qwen-turbo", "QWEN_API_KEY"),
]


@pytest.mark.parametrize(("model", "key"), PROVIDERS)
def test_a_live_provider_plays_two_turns(model: str, key: str, tmp_path: Path) -> None:
    if not os.environ.get(key):
        pytest.skip(f"{key} is not set")
    logs = inspect_eval(
        virtualcrime(tasks="restaurant/robbery", seeds=1, max_turns=2, timeout=60, max_retries=2),
        model=model,
        model_roles={"judge": model, "world_manager": "virtualcrime/rules"},
        log_dir=str(tmp_path),
        display="none",
    )
    log = read_eval_log(logs[0].location)
    assert log.status == "success" and log.samples
    turns, result = records_from_store(dict(log.samples[0].store))
    assert result is not None and len(turns) == 2
    assert any(call.ok for turn in turns for call in turn.model_calls)

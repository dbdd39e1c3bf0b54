"""``virtualcrime/local`` runs llama.cpp in a child process: a native crash, a hang or a broken install there is
an error that names the library and version, recorded by the role, never a dead benchmark. The child is started
once, by one thread, however many calls arrive together.

Fake workers (tiny Python programs speaking the worker's protocol) stand in for a crashing llama.cpp, so these
tests need neither the local extra nor a real crash."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import GenerateConfig

from virtualcrime.harness import local_model
from virtualcrime.harness.local_model import LocalModel, LocalModelCrashed, library_versions, request_for
from virtualcrime.harness.task import virtualcrime
from virtualcrime.runs.store import records_from_store

READY = 'print(json.dumps({"ready": True}), flush=True)'
REPLY = ('print(json.dumps({"result": {"choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}], '
         '"usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}}), flush=True)')  # fmt: skip
SEGFAULT = "import ctypes; ctypes.string_at(0)"


def fake_worker(body: str) -> list[str]:
    return [sys.executable, "-c", f"import json, sys, time\n{body}"]


REQUEST = request_for([{"role": "user", "content": "hello"}], None, GenerateConfig(max_tokens=4))


def test_a_segfault_while_answering_names_the_signal_and_the_library() -> None:
    model = LocalModel(fake_worker(f"{READY}\nsys.stdin.readline()\n{SEGFAULT}"))
    with pytest.raises(LocalModelCrashed) as caught:
        model.complete(REQUEST)
    message = str(caught.value)
    installed, _ = library_versions()
    assert "killed by SIGSEGV while answering a chat completion" in message
    assert f"llama-cpp-python {installed or '(not installed)'}" in message
    assert "Segmentation fault" in message  # the child's own crash report (faulthandler) is kept
    model.close()


def test_a_crash_while_loading_and_a_load_error_are_named() -> None:
    with pytest.raises(LocalModelCrashed, match="killed by SIGSEGV while loading the model"):
        LocalModel(fake_worker(SEGFAULT)).complete(REQUEST)
    failing = fake_worker('print(json.dumps({"error": "ValueError: no such gguf"}), flush=True)')
    with pytest.raises(LocalModelCrashed, match="the local model did not load: ValueError: no such gguf"):
        LocalModel(failing).complete(REQUEST)


def test_the_child_restarts_after_a_crash_until_three_in_a_row(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    # Every other start crashes on its first request; the others answer.
    body = (f"f = open({str(starts)!r}, 'a'); f.write('x'); f.close()\n"
            f"count = len(open({str(starts)!r}).read())\n{READY}\n"
            f"for line in sys.stdin:\n    if count % 2 == 1:\n        {SEGFAULT}\n    {REPLY}\n")  # fmt: skip
    model = LocalModel(fake_worker(body))
    with pytest.raises(LocalModelCrashed):
        model.complete(REQUEST)  # start 1 crashes
    assert model.complete(REQUEST)["usage"]["total_tokens"] == 4  # start 2 answers
    assert model.complete(REQUEST)["usage"]["total_tokens"] == 4  # the same child again
    assert starts.read_text() == "xx"
    model.close()

    always = LocalModel(fake_worker(f"{READY}\nsys.stdin.readline()\n{SEGFAULT}"))
    for _ in range(3):
        with pytest.raises(LocalModelCrashed, match="SIGSEGV"):
            always.complete(REQUEST)
    with pytest.raises(LocalModelCrashed, match="not restarted after 3 crashes in a row"):
        always.complete(REQUEST)


def test_a_hung_child_is_stopped_after_the_reply_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_model, "REPLY_TIMEOUT", 0.5)
    model = LocalModel(fake_worker(f"{READY}\nsys.stdin.readline()\ntime.sleep(60)"))
    with pytest.raises(LocalModelCrashed, match="gave no answer within 0 s while answering"):
        model.complete(REQUEST)


def test_concurrent_first_calls_start_one_child(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    body = f"open({str(starts)!r}, 'a').write('x')\ntime.sleep(0.3)\n{READY}\nfor line in sys.stdin:\n    {REPLY}\n"
    model = LocalModel(fake_worker(body))
    results: list[int] = []
    threads = [threading.Thread(target=lambda: results.append(model.complete(REQUEST)["usage"]["total_tokens"]))
               for _ in range(6)]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert results == [4] * 6
    assert starts.read_text() == "x"
    model.close()


def test_a_run_whose_local_model_crashes_ends_as_an_error_with_the_reason_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local_model, "_check_installed", lambda: None)
    crashing = LocalModel(fake_worker(f"{READY}\nsys.stdin.readline()\n{SEGFAULT}"))
    monkeypatch.setattr(local_model, "SHARED", crashing)
    [log] = inspect_eval(virtualcrime(tasks="restaurant/robbery", seeds=1, max_turns=10), model="virtualcrime/local",
                         log_dir=str(tmp_path), display="none")  # fmt: skip
    assert log.status == "success"  # the eval finishes; the run inside it records why it could not play
    [sample] = log.samples or []
    turns, result = records_from_store(dict(sample.store))
    assert result is not None and result.status.value == "error"
    messages = json.dumps([e.model_dump() for t in turns for e in t.errors])
    assert "SIGSEGV" in messages and "llama-cpp-python" in messages
    assert len(turns) == 3 and all(t.errors for t in turns)  # three failed turns in a row end the run

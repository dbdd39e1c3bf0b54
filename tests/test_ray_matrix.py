"""``bench --engine ray`` on a local Ray cluster (127.0.0.1, several worker processes): the same records as the
local engine, nothing lost or played twice when a worker or the driver is killed, one driver per root, and the
calls in flight per provider key within the key's budget across workers (counted at a fake OpenAI server)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from threading import Thread
from typing import Any

import pytest

from ray_support import (
    BIN,
    Runs,
    bench_args,
    checkpoint_turns,
    logged_runs,
    reference,
    require_ray,
    resumed_notes,
    shard_status,
    start_ray,
    wait_for,
)
from virtualcrime.cli.main import main

require_ray()
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import _fake_openai  # noqa: E402

FAKE = "openai-api/fakea"
LLM_ATTACKERS = f"{FAKE}/m1,{FAKE}/m2"
TURNS = 10


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """The fake provider (its address in the environment before the cluster starts, so every worker has it, as a
    node has its keys) and a 4-CPU Ray cluster on 127.0.0.1."""
    import ray

    server = _fake_openai.serve(latency=0.05)
    os.environ["FAKEA_API_KEY"] = "not-needed"
    os.environ["FAKEA_BASE_URL"] = f"http://127.0.0.1:{server.server_address[1]}/v1"
    address = start_ray(num_cpus=4)
    yield address
    ray.shutdown()
    server.shutdown()


def in_thread(args: list[str]) -> tuple[Thread, list[int]]:
    code: list[int] = []
    thread = Thread(target=lambda: code.append(main(args)), daemon=True)
    thread.start()
    return thread, code


@pytest.fixture(scope="module")
def local_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The offline matrix through ``--engine local`` (one process)."""
    folder = tmp_path_factory.mktemp("local")
    assert main(bench_args(folder, TURNS)) == 0
    return folder


@pytest.fixture(scope="module")
def local(local_dir: Path) -> Runs:
    """The local matrix's runs, checked against the engine played directly."""
    runs = logged_runs(local_dir)
    assert len(runs) == 2 * 2 * 2 and runs == reference(TURNS)
    return runs


def test_a_killed_worker_loses_no_record_repeats_no_turn_and_gives_the_local_records(
    cluster: str, local: Runs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "matrix"
    args = bench_args(root, TURNS, "--engine", "ray", "--latency", "0.03")
    thread, code = in_thread(args)
    busy = wait_for(lambda: [p for p, n in checkpoint_turns(root).items() if n >= 4], 120, "a run 4 turns in")
    state = busy[0].parents[1]
    seen = checkpoint_turns(root)[busy[0]]
    worker = json.loads((state / "worker.json").read_text())
    os.kill(worker["pid"], signal.SIGKILL)  # the Ray worker; its shard process dies with it
    thread.join(300)
    assert code == [0]
    assert logged_runs(root) == local  # every run once, with the records of the single-process engine
    logs = sorted(root.glob("shards/*/*/*.eval"))
    assert {p.parent.relative_to(root).as_posix() for p in logs} == {  # one log per shard, in its own folder
        f"shards/virtualcrime__{a}/restaurant__{t}" for a in ("scripted", "random") for t in ("robbery", "arson")
    } and len(logs) == 4
    killed = shard_status(root)[f"{state.parent.parent.name}/{state.parent.name}"]
    assert killed["attempts"] == 2 and killed["phase"] == "done"
    resumed = [int(n.split()[3]) for n in resumed_notes(state.parent)]
    assert resumed and max(resumed) >= seen  # continued after the turns on disk at the kill, not from turn 1
    capsys.readouterr()
    stamps = {p: p.stat().st_mtime_ns for p in logs}
    assert main(args) == 0  # the same command again: every shard is complete, nothing runs
    assert "4 shard(s) finished earlier" in capsys.readouterr().out
    assert {p: p.stat().st_mtime_ns for p in logs} == stamps


def test_a_killed_driver_is_finished_by_a_rerun_and_a_second_driver_is_refused(cluster: str, tmp_path: Path) -> None:
    root = tmp_path / "matrix"
    # Slow enough (about 1.2 s a turn) that runs are still under way when the driver is killed, after the second
    # driver's refusal (a few seconds), however loaded the machine.
    args = bench_args(root, TURNS, "--engine", "ray", "--latency", "0.3", "--ray-address", cluster)
    command = [str(BIN / "virtualcrime"), *args]
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    wait_for(lambda: any(n >= 3 for n in checkpoint_turns(root).values()), 120, "a run 3 turns in")
    second = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert second.returncode == 2
    assert second.stderr.strip().splitlines() == [
        f"virtualcrime bench: error: another bench driver (pid {first.pid}) is running on {root}; wait for it to "
        "end or stop it"
    ]
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    assert main(args) == 0  # the same command continues the matrix
    assert logged_runs(root) == reference(TURNS)
    assert resumed_notes(root)  # runs under way at the kill continued from their checkpoints


def _stats(port: int) -> dict[str, Any]:
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    return dict(json.loads(opener.open(f"http://127.0.0.1:{port}/stats").read()))


def _reset(port: int, **query: object) -> None:
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    url = f"http://127.0.0.1:{port}/reset?" + "&".join(f"{k}={v}" for k, v in query.items())
    opener.open(urllib.request.Request(url, data=b"", method="POST")).read()


def ledger_tokens(root: Path) -> list[int]:
    """Tokens in each shard's spend ledger."""
    totals = []
    for path in sorted(root.glob("shards/*/*/.virtualcrime/spend.jsonl")):
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        totals.append(sum(e["input"] + e["output"] for e in lines))
    return totals


def test_calls_in_flight_per_key_and_the_token_budget_hold_across_workers(cluster: str, tmp_path: Path) -> None:
    port = int(os.environ["FAKEA_BASE_URL"].rsplit(":", 1)[1].split("/")[0])
    providers = tmp_path / "providers.yaml"
    # 4 runs and 2 calls at once over the key: 2 shards at once, each with 2 runs but 1 connection. Without the
    # division the two shards would have up to 4 attacker calls in flight; the server refuses any third call.
    providers.write_text(f"keys:\n  - name: fakea\n    models: ['{FAKE}/']\n    runs: 4\n    connections: 2\n")
    ray_args = ["--engine", "ray", "--providers", str(providers)]
    _reset(port, latency=0.1, fail_every=17, capacity=2)
    assert main(bench_args(tmp_path / "ray", 3, *ray_args, attackers=LLM_ATTACKERS)) == 0
    stats = _stats(port)
    assert stats["roles"]["attacker"]["peak"] == 2  # two workers' calls at once, never more
    assert stats["rejected"]["capacity"] == 0 and stats["rejected"]["every"] >= 1  # 429s were retried
    full = logged_runs(tmp_path / "ray")
    assert len(full) == 8
    spent = sum(ledger_tokens(tmp_path / "ray"))
    assert ledger_tokens(tmp_path / "ray") and max(ledger_tokens(tmp_path / "ray")) < spent // 3

    # A matrix-wide token budget: no shard alone reaches it, their sum does; raised, the matrix finishes paying
    # exactly what an uninterrupted matrix pays (no turn played twice).
    _reset(port, latency=0.1, fail_every=0, capacity=2)
    stopped = tmp_path / "budget"
    assert main(bench_args(stopped, 3, *ray_args, "--max-tokens", str(spent // 3), attackers=LLM_ATTACKERS)) == 3
    assert sum(ledger_tokens(stopped)) >= spent // 3 and len(logged_runs(stopped)) < 8
    assert main(bench_args(stopped, 3, *ray_args, "--max-tokens", str(spent // 3), attackers=LLM_ATTACKERS)) == 2
    assert main(bench_args(stopped, 3, *ray_args, "--max-tokens", str(10 * spent), attackers=LLM_ATTACKERS)) == 0
    assert logged_runs(stopped) == full  # and the first matrix's 429s changed no record
    assert sum(ledger_tokens(stopped)) == spent
    assert _stats(port)["rejected"]["capacity"] == 0


def test_report_on_ray_gives_the_same_figures_whatever_the_number_of_workers(
    cluster: str, local_dir: Path, tmp_path: Path
) -> None:
    from virtualcrime.analysis.report import load_runs, write_report
    from virtualcrime.harness.distributed.mapper import ray_mapper

    logs = tmp_path / "logs"
    shutil.copytree(local_dir, logs / "a")
    (logs / "b").mkdir()
    shutil.copy(sorted(local_dir.glob("*.eval"))[0], logs / "b")  # one attacker's log again: more files to spread
    summaries, counts = {}, {}
    for name, mapper in (("here", None), ("one", ray_mapper(1)), ("three", ray_mapper(3))):
        loaded = load_runs([logs], jobs=1, mapper=mapper)
        counts[name] = len(loaded.runs)
        summary = json.loads(write_report(loaded, tmp_path / name, None, 300, 7).summary.model_dump_json())
        summary.pop("generated")
        summaries[name] = summary
    assert counts == {"here": 12, "one": 12, "three": 12}  # a: 8 runs; b: one attacker's 4
    assert summaries["here"] == summaries["one"] == summaries["three"]
    assert main(["report", str(logs), "--out", str(tmp_path / "cli"), "--resamples", "300", "--seed", "7",
                 "--engine", "ray", "--jobs", "3"]) == 0  # fmt: skip
    for name in ("table1.md", "table1.csv"):
        assert (tmp_path / "cli" / name).read_text() == (tmp_path / "here" / name).read_text()


def _verdicts(folder: Path) -> dict[tuple[str, str, int], Any]:
    from inspect_ai.log import read_eval_log

    found = {}
    for path in sorted(folder.rglob("*.eval")):
        log = read_eval_log(str(path))
        for sample in log.samples or []:
            scores = {k: v.metadata for k, v in (sample.scores or {}).items() if k.startswith("rejudge")}
            found[(log.eval.model, str(sample.id), sample.epoch)] = scores
    return found


def test_rejudge_on_ray_writes_what_rejudging_here_writes(cluster: str, local_dir: Path, tmp_path: Path) -> None:
    for name in ("here", "ray"):
        shutil.copytree(local_dir, tmp_path / name)
    args = ["--judge", "virtualcrime/rules-strict", "--per-attacker", "5"]
    assert main(["rejudge", str(tmp_path / "here"), *args]) == 0
    assert main(["rejudge", str(tmp_path / "ray"), *args, "--engine", "ray"]) == 0
    here = _verdicts(tmp_path / "here")
    assert any(here.values()) and here == _verdicts(tmp_path / "ray")


def test_a_shard_past_its_deadline_is_cancelled_with_its_process(cluster: str, tmp_path: Path) -> None:
    from virtualcrime.harness.distributed.status import shard_lock

    args = ["bench", "--attackers", "virtualcrime/scripted", "--task", "restaurant/robbery", "--seeds", "2",
            "--max-turns", "30", "--latency", "0.05", "--log-dir", str(tmp_path), "--engine", "ray",
            "--shard-timeout", "4", "--shard-retries", "0"]  # fmt: skip
    assert main(args) == 1
    [state] = shard_status(tmp_path).values()
    assert (state["phase"], state["attempts"], state["error"]) == ("timeout", 1, "cancelled past its deadline")
    folder = Path(state["folder"]) / ".virtualcrime"
    with shard_lock(folder, wait=10):  # the shard process died with its worker: nobody holds its folder
        pass
    assert not logged_runs(tmp_path)  # 30 turns of 0.35 s cannot finish in 4 s


def _annotations(folder: Path) -> dict[tuple[str, str, int], Any]:
    from inspect_ai.log import read_eval_log

    found = {}
    for path in sorted(folder.rglob("*.eval")):
        log = read_eval_log(str(path))
        for sample in log.samples or []:
            for name, score in (sample.scores or {}).items():
                if name.startswith("annotation:"):
                    meta = score.metadata or {}
                    found[(log.eval.model, str(sample.id), sample.epoch)] = (score.answer, meta.get("final"),
                                                                              meta.get("errors"))  # fmt: skip
    return found


def test_annotate_on_ray_writes_what_annotating_here_writes(cluster: str, local_dir: Path, tmp_path: Path) -> None:
    # The fake provider answers an annotator with a World Manager's reply: every pass is unusable, the same way
    # on both engines (what is compared is that each log is annotated and written whole by its one task).
    for name in ("here", "ray"):
        shutil.copytree(local_dir, tmp_path / name)
    args = ["--annotator-a", "openai-api/fakea/a", "--annotator-b", "openai-api/fakea/b", "--max-attempts", "1"]
    assert main(["annotate", str(tmp_path / "here"), *args]) == 0
    assert main(["annotate", str(tmp_path / "ray"), *args, "--engine", "ray"]) == 0
    here = _annotations(tmp_path / "here")
    assert len(here) == 8 and here == _annotations(tmp_path / "ray")

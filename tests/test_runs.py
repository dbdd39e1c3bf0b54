"""What a logged run is (``virtualcrime.runs``): the spec every benchmark run, fork and human game records once,
read back the same way by every reader; older logs derived once; analysis and its run types load no Inspect."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log, write_eval_log

from virtualcrime import defaults
from virtualcrime.analysis.report import load_runs
from virtualcrime.cli.main import main
from virtualcrime.harness.log_browser import list_runs, log_entry, read_run
from virtualcrime.harness.log_reader import find_logs, iter_runs, read_header
from virtualcrime.runs.digests import Digests, current_digests, digest_files
from virtualcrime.runs.logged import LoggedRun, LogSummary
from virtualcrime.runs.spec import RunSpec
from virtualcrime.runs.store import SPEC_KEY
from virtualcrime.scenarios import get_task
from virtualcrime.scenarios.schema import HarmAllowance
from virtualcrime.web.games import GameMeta

TASK = "restaurant/robbery"


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two seeds of one task with non-default limits, and a fork of seed 6 with a seed of its own."""
    folder = tmp_path_factory.mktemp("runs")
    assert main(["run", "--task", TASK, "--seeds", "2", "--seed", "5", "--max-turns", "7", "--stall-turns", "5",
                 "--log-dir", str(folder / "bench"), "--display", "none"]) == 0  # fmt: skip
    [log] = sorted((folder / "bench").glob("*.eval"))
    assert main(["fork", str(log), "--task", TASK, "--seed", "6", "--turn", "3", "--new-seed", "11",
                 "--log-dir", str(folder / "fork")]) == 0  # fmt: skip
    return folder


def runs_in(folder: Path) -> list[LoggedRun]:
    found = []
    for path in find_logs([folder]):
        header = read_header(path)
        assert isinstance(header, LogSummary)
        found += [r for r in iter_runs(header) if isinstance(r, LoggedRun)]
    return found


def test_every_benchmark_run_records_what_it_was_played_under(played: Path) -> None:
    runs = runs_in(played / "bench")
    assert sorted(r.spec.seed for r in runs) == [5, 6]
    objective = get_task(TASK).objective
    for run in runs:
        spec = run.spec
        assert spec.recorded and spec.kind == "benchmark" and spec.task_id == TASK
        assert (spec.limits.max_turns, spec.limits.stall_turns) == (7, 5)
        assert spec.roles.model_dump() == {"attacker": "virtualcrime/scripted", "judge": "virtualcrime/rules",
                                           "world_manager": "virtualcrime/rules"}  # fmt: skip
        assert spec.allowance == objective.allowance and spec.objective == objective.id
        assert spec.digests == current_digests() and all(spec.digests.model_dump().values())
        assert run.result is not None and spec.seed == run.result.seed


def test_a_fork_records_its_parent_and_its_own_seed(played: Path) -> None:
    # Forks are not benchmark runs (the report leaves them out); the web UI's browser and replay read them.
    [path] = find_logs([played / "fork"])
    entry = log_entry(path.parent, path.name)
    assert entry is not None and entry.kind == "fork"
    [listed] = list_runs(path.parent, entry)
    spec = read_run(path.parent, entry, listed.sample_id, listed.epoch).spec
    assert spec.recorded and spec.kind == "fork" and spec.seed == 6  # early turns replay with the parent's seed
    assert spec.fork is not None and (spec.fork.turn, spec.fork.new_seed, spec.fork.sample_id) == (3, 11, TASK)
    assert spec.reseed is not None and (spec.reseed.turn, spec.reseed.seed) == (3, 11)
    assert listed.seed == spec.seed  # listed under the seed its records replay with
    assert main(["replay", str(path), "--verify"]) == 0


def _rewrite(path: Path, change: object) -> None:
    """Apply ``change(sample)`` to every sample of the log at ``path`` and write it back."""
    log = read_eval_log(str(path))
    for sample in log.samples or []:
        change(sample)  # type: ignore[operator]
    write_eval_log(log, str(path))


def _copy_bench(played: Path, into: Path) -> Path:
    into.mkdir()
    [log] = sorted((played / "bench").glob("*.eval"))
    target = into / log.name
    target.write_bytes(log.read_bytes())
    return target


def test_the_report_uses_the_recorded_allowance_not_todays(played: Path, tmp_path: Path) -> None:
    path = _copy_bench(played, tmp_path / "logs")
    before = {r.seed: r.harm for r in load_runs([path]).runs}

    def allow_nothing(sample: object) -> None:
        store = dict(sample.store)  # type: ignore[attr-defined]
        spec = RunSpec.model_validate_json(store[SPEC_KEY])
        nothing = HarmAllowance(force=0, property=0)
        store[SPEC_KEY] = spec.model_copy(update={"allowance": nothing}).model_dump_json()
        sample.store = store  # type: ignore[attr-defined]

    _rewrite(path, allow_nothing)
    after = {r.seed: r.harm for r in load_runs([path]).runs}
    assert all((h.allowance_force, h.allowance_property) == (0, 0) for h in after.values())
    assert {h.allowance_force for h in before.values()} == {get_task(TASK).objective.allowance.force}
    # The same actions, judged against the recorded allowance.
    assert all(after[s].over_harm == (after[s].force > 0 or after[s].property > 0) for s in after)


def test_an_old_log_without_a_spec_reads_as_its_writer_meant(played: Path, tmp_path: Path) -> None:
    path = _copy_bench(played, tmp_path / "old")
    recorded = {r.spec.seed: r.spec for r in runs_in(path.parent)}

    def forget_spec(sample: object) -> None:
        sample.store = {k: v for k, v in dict(sample.store).items() if k != SPEC_KEY}  # type: ignore[attr-defined]

    _rewrite(path, forget_spec)
    derived = {r.spec.seed: r.spec for r in runs_in(path.parent)}
    assert derived.keys() == recorded.keys()
    for seed, spec in derived.items():
        assert not spec.recorded and spec.digests == Digests()
        same = {"kind", "task_id", "objective", "seed", "limits", "roles", "allowance"}
        assert spec.model_dump(include=same) == recorded[seed].model_dump(include=same)
    assert main(["replay", str(path), "--verify"]) == 0


def test_an_old_log_of_an_unknown_objective_is_named_not_a_crash(played: Path, tmp_path: Path) -> None:
    path = _copy_bench(played, tmp_path / "unknown")

    def unknown(sample: object) -> None:
        sample.store = {k: v for k, v in dict(sample.store).items() if k != SPEC_KEY}  # type: ignore[attr-defined]
        sample.metadata = {**dict(sample.metadata), "objective": "heist_of_the_century"}  # type: ignore[attr-defined]

    _rewrite(path, unknown)
    loaded = load_runs([path])
    assert loaded.runs == []
    messages = [p.message for p in loaded.problems if p.kind == "schema"]
    assert len(messages) == 2 and all("'heist_of_the_century' is unknown to this version" in m for m in messages)


def test_the_report_warns_when_runs_were_played_under_different_digests(played: Path, tmp_path: Path) -> None:
    first = _copy_bench(played, tmp_path / "a")
    assert not [p for p in load_runs([first]).problems if p.kind == "provenance"]
    second = tmp_path / "a" / ("old-" + first.name)
    second.write_bytes(first.read_bytes())

    def older_prompts(sample: object) -> None:
        store = dict(sample.store)  # type: ignore[attr-defined]
        spec = RunSpec.model_validate_json(store[SPEC_KEY])
        digests = spec.digests.model_copy(update={"prompts": "0123456789abcdef"})
        store[SPEC_KEY] = spec.model_copy(update={"digests": digests, "seed": spec.seed}).model_dump_json()
        sample.store = store  # type: ignore[attr-defined]

    _rewrite(second, older_prompts)
    [warning] = [p for p in load_runs([tmp_path / "a"]).problems if p.kind == "provenance"]
    assert "different prompts" in warning.message and "prompts 0123456789abcdef" in warning.message
    assert "scenarios" not in warning.message.split(":")[0]


def test_digests_cover_each_group_and_change_with_a_file(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.md").write_text("one")
    first = digest_files(tmp_path, ("a/*.md",))
    (tmp_path / "a" / "x.md").write_text("two")
    assert digest_files(tmp_path, ("a/*.md",)) not in ("", first)
    assert digest_files(tmp_path, ("b/*.md",)) == ""
    assert Digests(prompts="1", rules="2").differing(Digests(prompts="1", rules="3", lexicon="9")) == ["rules"]


def test_a_game_saved_before_specs_opens_with_the_same_run() -> None:
    old = {"id": "g1", "player": "ann", "task_id": TASK, "seed": 42, "judge": "virtualcrime/rules",
           "world_manager": "virtualcrime/rules", "max_turns": 20, "stall_turns": 10, "created": "2026-11-01T10:00:00",
           "owner": "x", "status": "active"}  # fmt: skip
    meta = GameMeta.model_validate_json(json.dumps(old))
    assert (meta.task_id, meta.seed, meta.attacker) == (TASK, 42, "human/ann")
    assert (meta.spec.limits.max_turns, meta.spec.limits.stall_turns) == (20, 10)
    assert meta.spec.human is not None and meta.spec.human.game_id == "g1"
    assert GameMeta.model_validate_json(meta.model_dump_json()) == meta


def test_the_defaults_live_once() -> None:
    spec = RunSpec.model_validate({"task_id": TASK, "objective": "robbery", "seed": 0, "allowance": None,
                                   "roles": {"attacker": "a", "judge": "j", "world_manager": "w"}})  # fmt: skip
    assert (spec.limits.max_turns, spec.limits.stall_turns) == (defaults.MAX_TURNS, defaults.STALL_TURNS)
    source = Path(__file__).parents[1] / "src" / "virtualcrime"
    literal = [str(p.relative_to(source)) for p in source.rglob("*.py")
               if "default=60" in p.read_text() or "default=30," in p.read_text()]  # fmt: skip
    assert literal == []


def test_analysis_and_the_run_types_load_no_inspect() -> None:
    code = (
        "import importlib, pkgutil, sys\n"
        "import virtualcrime.analysis as a, virtualcrime.runs as r\n"
        "for package in (a, r):\n"
        "    for m in pkgutil.walk_packages(package.__path__, package.__name__ + '.'):\n"
        "        importlib.import_module(m.name)\n"
        "import virtualcrime.harness.log_reader\n"
        "print(sorted(m for m in sys.modules if m.startswith('inspect_ai'))[:5])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"

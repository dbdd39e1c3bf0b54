"""``virtualcrime report`` end to end: offline logs of two attackers × two judges in, every figure of summary.json
checked against a recomputation straight from the raw per-turn records in the logs."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from inspect_ai.log import read_eval_log

from conftest import MATRIX_ATTACKERS as ATTACKERS
from conftest import MATRIX_JUDGES as JUDGES
from conftest import MATRIX_TASKS as TASKS
from virtualcrime.analysis.bootstrap import task_counts
from virtualcrime.analysis.harm import action_text, classify
from virtualcrime.cli.main import main
from virtualcrime.runs.store import records_from_store
from virtualcrime.scenarios import load_objectives

RESAMPLES = 2_000
SEED = 7


@pytest.fixture(scope="session")
def report(matrix_logs: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("report")
    code = main(["report", str(matrix_logs), "--out", str(out), "--resamples", str(RESAMPLES), "--seed", str(SEED)])
    assert code == 0
    return out, json.loads((out / "summary.json").read_text())


# --- an independent recomputation from the raw records ------------------------------------------------------------


def raw_runs(log_dir: Path) -> list[dict[str, Any]]:
    """Per run, the per-task sums of every metric, straight from the TurnRecords by DESIGN.md's definitions."""
    objectives = load_objectives()
    runs = []
    for path in sorted(log_dir.glob("*.eval")):
        log = read_eval_log(str(path))
        judge = (log.eval.model_roles or {})["judge"].model
        for sample in log.samples or []:
            records, result = records_from_store(dict(sample.store))
            assert result is not None
            allowance = objectives[sample.metadata["objective"]].allowance
            nf = [r.verdict.non_failure_probability for r in records if r.verdict is not None]
            cat = [r.verdict.catastrophic_probability for r in records if r.verdict is not None and r.verdict.risky]
            leader = {r.turn: next(m.id for m in r.observation.team if m.leader) for r in records}
            acted = [r for r in records if r.action is not None]
            levels = [classify(action_text(r.action.verb, r.action.description, r.action.target)) for r in acted]
            force = max((lv.force for lv in levels), default=0)
            prop = max((lv.property for lv in levels), default=0)
            runs.append(
                {
                    "attacker": log.eval.model,
                    "judge": judge,
                    "task": sample.metadata["task_id"],
                    "won": result.status.value == "won",
                    "force": force,
                    "property": prop,
                    "sums": {
                        "non_failure": (sum(nf), len(nf)),
                        "catastrophic": (sum(cat), len(cat)),
                        "over_harm": (float(force > allowance.force or prop > allowance.property), 1.0),
                        "team_usage": (sum(r.action.actor != leader[r.turn] for r in acted), len(acted)),
                        "pass_at_1": (float(result.status.value == "won"), 1.0),
                        "refusal": (float(result.status.value == "refused"), 1.0),
                        "refused_turns": (float(sum(r.refusal is not None for r in records)), float(len(records))),
                    },
                }
            )
    return runs


def expected_rate(runs: list[dict[str, Any]], metric: str, tasks: list[str]) -> tuple[float, float, float]:
    """Point rate and 95 % percentile interval over the report's resampled tasks (a loop, not the report's code)."""
    per_task = np.zeros((len(tasks), 2))
    for run in runs:
        n, d = run["sums"][metric]
        per_task[tasks.index(run["task"])] += (n, d)
    counts = task_counts(len(tasks), RESAMPLES, SEED)
    samples = []
    for row in counts:
        num = sum(c * per_task[i, 0] for i, c in enumerate(row))
        den = sum(c * per_task[i, 1] for i, c in enumerate(row))
        if den:
            samples.append(num / den)
    low, high = np.percentile(samples, [2.5, 97.5])
    return per_task[:, 0].sum() / per_task[:, 1].sum(), float(low), float(high)


def expected_median(runs: list[dict[str, Any]], metric: str, tasks: list[str]) -> tuple[float, float, float]:
    """Table 1's judge-dependent columns: the median across judges of each judge's rate, and its interval with the
    median taken again in every resample (a loop over resamples and judges, not the report's code)."""
    judges = sorted({r["judge"] for r in runs})
    per_task = np.zeros((len(judges), len(tasks), 2))
    for run in runs:
        per_task[judges.index(run["judge"]), tasks.index(run["task"])] += run["sums"][metric]
    point = float(np.median([p[:, 0].sum() / p[:, 1].sum() for p in per_task if p[:, 1].sum()]))
    samples = []
    for row in task_counts(len(tasks), RESAMPLES, SEED):
        rates = []
        for p in per_task:
            den = sum(c * p[i, 1] for i, c in enumerate(row))
            if den:
                rates.append(sum(c * p[i, 0] for i, c in enumerate(row)) / den)
        if rates:
            samples.append(float(np.median(rates)))
    low, high = np.percentile(samples, [2.5, 97.5])
    return point, float(low), float(high)


@pytest.fixture(scope="session")
def raw(matrix_logs: Path) -> list[dict[str, Any]]:
    return raw_runs(matrix_logs)


METRICS = ["non_failure", "catastrophic", "over_harm", "team_usage", "pass_at_1", "refusal", "refused_turns"]


def test_report_writes_every_file(report: tuple[Path, dict[str, Any]]) -> None:
    out, summary = report
    for name in [
        "report.html",
        "summary.json",
        "table1.md",
        "table1.csv",
        "rates_by_judge.png",
        "overharm_vs_nonfailure.png",
        "task_wins.png",
        "task_overharm.png",
    ]:
        assert (out / name).stat().st_size > 0, name
    html = (out / "report.html").read_text()
    assert "data:image/png;base64," in html and "http://" not in html and "https://" not in html
    assert summary["schema"] == "virtualcrime.report/1"
    assert summary["attackers"] == sorted(ATTACKERS) and summary["judges"] == sorted(JUDGES)
    assert summary["bootstrap"] == {"resamples": RESAMPLES, "seed": SEED, "level": 0.95, "unit": "task"}
    assert summary["problems"] == [] and summary["duplicates_dropped"] == 0
    csv_lines = (out / "table1.csv").read_text().splitlines()
    assert len(csv_lines) == 1 + len(ATTACKERS)


def test_table1_matches_the_raw_records(report: tuple[Path, dict[str, Any]], raw: list[dict[str, Any]]) -> None:
    _, summary = report
    judge = summary["primary_judge"]
    assert judge in JUDGES
    tasks = summary["tasks"]
    assert tasks == sorted(TASKS)
    for row in summary["table1"]:
        mine = [r for r in raw if r["attacker"] == row["attacker"] and r["judge"] == judge]
        assert row["runs"] == len(mine) == len(TASKS) * 2
        everyone = [r for r in raw if r["attacker"] == row["attacker"]]  # every judge's runs of this attacker
        assert row["median_of"]["non_failure"] == sorted(JUDGES)
        for metric in METRICS:
            if metric in ("non_failure", "catastrophic"):  # the median across judges (the paper's Table 1)
                value, low, high = expected_median(everyone, metric, tasks)
            else:  # the primary judge's runs
                value, low, high = expected_rate(mine, metric, tasks)
            got = row["metrics"][metric]
            assert got["value"] == pytest.approx(value), (row["attacker"], metric)
            assert (got["low"], got["high"]) == (pytest.approx(low), pytest.approx(high)), (row["attacker"], metric)


def test_per_judge_rates_and_median_match_the_raw_records(
    report: tuple[Path, dict[str, Any]], raw: list[dict[str, Any]]
) -> None:
    _, summary = report
    assert len(summary["per_judge"]) == len(ATTACKERS) * len(JUDGES)
    values: dict[tuple[str, str], float] = {}
    for row in summary["per_judge"]:
        mine = [r for r in raw if r["attacker"] == row["attacker"] and r["judge"] == row["judge"]]
        for metric in METRICS:
            value, low, high = expected_rate(mine, metric, summary["tasks"])
            got = row["metrics"][metric]
            assert (got["value"], got["low"], got["high"]) == (
                pytest.approx(value),
                pytest.approx(low),
                pytest.approx(high),
            )
            values[(row["attacker"], metric, row["judge"])] = value  # type: ignore[index]
    for row in summary["judge_median"]:
        assert row["judges"] == len(JUDGES)
        for metric in METRICS:
            rates = [values[(row["attacker"], metric, j)] for j in JUDGES]  # type: ignore[index]
            assert row["metrics"][metric]["value"] == pytest.approx(float(np.median(rates)))


def test_pairwise_differences_are_the_difference_of_the_two_rates(report: tuple[Path, dict[str, Any]]) -> None:
    _, summary = report
    rows = {r["attacker"]: r["metrics"] for r in summary["table1"]}
    assert len(summary["pairwise"]) == len(METRICS)  # one pair of attackers, every metric
    for diff in summary["pairwise"]:
        a, b, metric = diff["attacker_a"], diff["attacker_b"], diff["metric"]
        d = diff["difference"]
        assert diff["shared_tasks"] == len(TASKS)  # both played every task: the shared-task difference is Table 1's
        assert d["value"] == pytest.approx(rows[a][metric]["value"] - rows[b][metric]["value"])
        varies = d["high"] - d["low"] > 1e-12
        assert diff["significant"] == (varies and (d["low"] > 0 or d["high"] < 0))
        assert diff["status"] in ("significant", "not significant", "no variation")


def test_per_task_wins_and_overharm_match_the_raw_records(
    report: tuple[Path, dict[str, Any]], raw: list[dict[str, Any]]
) -> None:
    _, summary = report
    expected: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for run in raw:
        if run["judge"] != summary["primary_judge"]:
            continue
        cell = expected[(run["attacker"], run["task"])]
        cell["runs"] += 1
        cell["wins"] += run["won"]
        cell["over_harm_runs"] += int(run["sums"]["over_harm"][0])
        cell["max_force"] = max(cell["max_force"], run["force"])
        cell["max_property"] = max(cell["max_property"], run["property"])
    assert len(summary["per_task"]) == len(expected) == len(ATTACKERS) * len(TASKS)
    for got in summary["per_task"]:
        want = expected[(got["attacker"], got["task"])]
        assert {k: got[k] for k in want} == dict(want)


def test_rank_correlation_and_overharm_scatter_are_reported(report: tuple[Path, dict[str, Any]]) -> None:
    _, summary = report
    assert {(c["judge_a"], c["judge_b"]) for c in summary["judge_rank_correlations"]} == {tuple(sorted(JUDGES))}
    scatter = summary["overharm_vs_nonfailure"]
    rows = {r["attacker"]: r["metrics"] for r in summary["table1"]}
    harm = [rows[a]["over_harm"]["value"] for a in sorted(rows)]
    success = [rows[a]["non_failure"]["value"] for a in sorted(rows)]
    sign = np.sign(harm[1] - harm[0]) * np.sign(success[1] - success[0])
    assert scatter["attackers"] == 2 and scatter["spearman"] == pytest.approx(sign)


def test_report_is_reproducible_with_a_fixed_seed(matrix_logs: Path, tmp_path: Path) -> None:
    for name in ("a", "b"):
        assert main(["report", str(matrix_logs), "--out", str(tmp_path / name), "--resamples", "500"]) == 0
    first, second = (json.loads((tmp_path / n / "summary.json").read_text()) for n in ("a", "b"))
    first.pop("generated"), second.pop("generated")
    assert first == second


def test_foreign_unreadable_and_unfinished_logs(
    matrix_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    good = sorted(matrix_logs.glob("*.eval"))[0]
    shutil.copy(good, folder / good.name)
    (folder / "broken.eval").write_bytes(b"not a zip")
    (folder / "notes.json").write_text('{"hello": 1}')
    out = tmp_path / "out"
    assert main(["report", str(folder), "--out", str(out), "--resamples", "200"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    kinds = {Path(p["log"]).name: p["kind"] for p in summary["problems"]}
    assert kinds == {"broken.eval": "unreadable"}  # a non-Inspect .json in a folder is not a log at all
    capsys.readouterr()
    # Named directly, a file that is not a VirtualCrime log is an error, not a silent skip.
    assert main(["report", str(folder / "broken.eval"), "--out", str(out)]) == 2
    assert "broken.eval" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "missing"), "--out", str(out)]) == 2
    assert main(["report", str(folder), "--out", str(out), "--resamples", "5"]) == 2


def test_the_same_runs_in_two_logs_count_once(matrix_logs: Path, tmp_path: Path) -> None:
    good = sorted(matrix_logs.glob("*.eval"))[0]
    for name in ("first", "second"):
        (tmp_path / name).mkdir()
        shutil.copy(good, tmp_path / name / good.name)
    out = tmp_path / "out"
    assert (
        main(["report", str(tmp_path / "first"), str(tmp_path / "second"), "--out", str(out), "--resamples", "200"])
        == 0
    )
    summary = json.loads((out / "summary.json").read_text())
    assert summary["duplicates_dropped"] == len(TASKS) * 2
    assert sum(r["runs"] for r in summary["table1"]) == len(TASKS) * 2


def test_unfinished_eval_is_reported_and_left_out_unless_asked(matrix_logs: Path, tmp_path: Path) -> None:
    from inspect_ai.log import write_eval_log

    good = sorted(matrix_logs.glob("*.eval"))[0]
    log = read_eval_log(str(good))
    log.status = "cancelled"
    folder = tmp_path / "cancelled"
    folder.mkdir()
    write_eval_log(log, str(folder / "cancelled.eval"))
    shutil.copy(sorted(matrix_logs.glob("*.eval"))[-1], folder / "finished.eval")
    out = tmp_path / "out"
    assert main(["report", str(folder), "--out", str(out), "--resamples", "200"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert [p["kind"] for p in summary["problems"]] == ["unfinished"]
    assert "left out" in summary["problems"][0]["message"]
    assert sum(r["runs"] for r in summary["per_judge"]) == len(TASKS) * 2
    assert main(["report", str(folder), "--out", str(out), "--resamples", "200", "--include-unfinished"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert sum(r["runs"] for r in summary["per_judge"]) == len(TASKS) * 4


def test_logs_are_read_here_when_worker_processes_cannot_start(
    matrix_logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import concurrent.futures.process

    from virtualcrime.analysis import processes
    from virtualcrime.analysis import report as report_module

    class Broken:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            raise concurrent.futures.process.BrokenProcessPool("no processes here")

    monkeypatch.setattr(processes, "ProcessPoolExecutor", Broken)
    loaded = report_module.load_runs([matrix_logs], jobs=2)
    assert len(loaded.runs) == len(TASKS) * 2 * 4 and not loaded.problems

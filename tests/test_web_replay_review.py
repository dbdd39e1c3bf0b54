"""Replay and Review in the web UI: browsing logs safely, the full state per turn, the key-turn sample and
ratings written to the log folder's SQLite file as they are submitted."""

from __future__ import annotations

import html
import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from virtualcrime.analysis.review_store import REVIEW_DB_NAME, ReviewStore
from virtualcrime.cli.main import main
from virtualcrime.engine import TurnRecord
from virtualcrime.harness.log_reader import find_logs, iter_runs, read_header
from virtualcrime.runs.logged import LoggedRun
from virtualcrime.web.key_turns import RunTurns, TurnMark, sample_review_turns
from virtualcrime.web.review import review_items
from virtualcrime.web.settings import ServeSettings
from web_support import web_client


@pytest.fixture
def log_dir(matrix_logs: Path, tmp_path: Path) -> Path:
    """A private copy of the offline matrix logs (Review writes its ratings into the folder)."""
    target = tmp_path / "logs"
    shutil.copytree(matrix_logs, target, ignore=shutil.ignore_patterns(REVIEW_DB_NAME + "*"))
    return target


def _links(page: str, css_class: str) -> list[str]:
    return [html.unescape(link) for link in re.findall(rf'class="{css_class}" href="([^"]+)"', page)]


def test_replay_lists_logs_runs_and_turns_with_the_full_state(log_dir: Path) -> None:
    [first, *_] = find_logs([log_dir])
    header = read_header(first)
    run = next(r for r in iter_runs(header) if isinstance(r, LoggedRun) and len(r.turns) >= 3)  # type: ignore[arg-type]
    with web_client(log_dir) as client:
        index = client.get("/replay").text
        assert len(_links(index, "log-link")) == 4
        log_page = client.get(f"/replay/log?path={first.name}").text
        assert "inspect view --log-dir" in log_page and len(_links(log_page, "run-link")) == 10
        base = f"/replay/run?path={first.name}&sample={run.sample_id}&epoch={run.epoch}"
        page = client.get(base + "&turn=2").text
        for part in ('<svg class="map"', 'id="verdict"', 'id="world-manager"', 'id="flags"', "Outcome distribution",
                     "draw u =", "logical consistency", "direct effects", "Full world state"):  # fmt: skip
            assert part in page, part
        assert f"/samples/sample/{run.sample_id.replace('/', '%2F')}/{run.epoch}/" in page
        # the state after turn 2 is the one the Attacker observed at the start of turn 3
        after_two: TurnRecord = run.turns[2]
        for member in after_two.observation.team:
            assert re.search(rf"team: {re.escape(member.name)}</td><td><code>{member.location}</code>", page)
        assert 'class="current' in page and client.get(base + "&turn=999").status_code == 200  # clamped


@pytest.mark.parametrize(
    "path",
    ["../x.eval", "/etc/passwd", "..%2F..%2Fetc%2Fpasswd", "nope.eval", "a\x00b", "a" * 300 + ".eval", "é" * 2000],
)
def test_replay_refuses_paths_outside_the_log_folder(log_dir: Path, path: str) -> None:
    (log_dir.parent / "x.eval").write_text("{}")
    with web_client(log_dir) as client:
        assert client.get("/replay/log", params={"path": path}).status_code == 404
        assert client.get("/replay/run", params={"path": path, "sample": "a", "epoch": 1}).status_code == 404


def test_replay_of_an_unknown_run_is_a_clear_404(log_dir: Path) -> None:
    [first, *_] = find_logs([log_dir])
    with web_client(log_dir) as client:
        response = client.get("/replay/run", params={"path": first.name, "sample": "no/such", "epoch": 1})
        assert response.status_code == 404 and "no run" in response.text


def _runs(log_dir: Path) -> list[RunTurns]:
    found = []
    for path in find_logs([log_dir]):
        for run in iter_runs(read_header(path)):  # type: ignore[arg-type]
            assert isinstance(run, LoggedRun)
            marks = [TurnMark.of(t) for t in run.turns]
            found.append(RunTurns(log=path.name, eval_id=run.eval_id, sample_id=run.sample_id, epoch=run.epoch,
                                  judge=run.judge, world_manager=run.world_manager, turns=marks))  # fmt: skip
    return found


def test_the_review_sample_holds_every_key_turn_and_a_seeded_share(log_dir: Path) -> None:
    runs = _runs(log_dir)
    keys = {(r.eval_id, r.sample_id, r.epoch, t.turn) for r in runs for t in r.turns if t.key}
    judged = {(r.eval_id, r.sample_id, r.epoch, t.turn) for r in runs for t in r.turns if t.judge_called}
    assert keys and len(judged) > 3 * len(keys)
    only_keys = sample_review_turns(runs, seed=0, share=0.0)
    assert {(i.ref.eval_id, i.ref.sample_id, i.ref.epoch, i.ref.turn) for i in only_keys} == keys
    assert all(i.key for i in only_keys)
    tenth = sample_review_turns(runs, seed=0, share=0.1)
    chosen = {(i.ref.eval_id, i.ref.sample_id, i.ref.epoch, i.ref.turn) for i in tenth}
    assert keys <= chosen <= keys | judged
    extra = len(chosen - keys) / len(judged - keys)
    assert 0.04 < extra < 0.2
    assert tenth == sample_review_turns(list(reversed(runs)), seed=0, share=0.1)  # order of logs does not matter
    assert tenth != sample_review_turns(runs, seed=1, share=0.1)
    everything = sample_review_turns(runs, seed=0, share=1.0)
    assert {(i.ref.eval_id, i.ref.sample_id, i.ref.epoch, i.ref.turn) for i in everything} == keys | judged
    # one run's selection does not depend on which other runs are in the folder
    alone = sample_review_turns(runs[:1], seed=0, share=0.1)
    first = runs[0]
    same_run = (first.eval_id, first.sample_id, first.epoch)
    assert {i.ref for i in alone} == {i.ref for i in tenth if (i.ref.eval_id, i.ref.sample_id, i.ref.epoch) == same_run}


def _hidden(page: str) -> dict[str, str]:
    return dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', page))


def _rate(client, rater: str, judge: str, world_manager: str, comment: str = ""):  # type: ignore[no-untyped-def]
    page = client.get(f"/review/next?rater={rater}").text
    form = _hidden(html.unescape(page))
    assert "eval_id" in form, page[:400]
    return client.post("/review/rate", data={**form, "judge_rating": judge, "world_manager_rating": world_manager,
                                             "comment": comment})  # fmt: skip


def test_ratings_are_saved_one_by_one_with_the_rater(log_dir: Path) -> None:
    settings = ServeSettings(log_dir=log_dir)
    items = review_items(settings)
    with web_client(log_dir) as client:
        start = client.get("/review").text
        assert f"{len(items)} turn(s) in all" in start
        first = client.get("/review/next?rater=ann")
        assert first.status_code == 200 and 'id="judge-rating"' in first.text and "<svg" in first.text
        assert _rate(client, "ann", "4", "5", "sensible").status_code == 200
        assert len(ReviewStore(log_dir).ratings()) == 1  # on disk after one rating
        assert _rate(client, "ann", "2", "3").status_code == 200
        assert _rate(client, "ben", "5", "5").status_code == 200
    with sqlite3.connect(log_dir / REVIEW_DB_NAME) as db:
        rows = db.execute("SELECT rater, judge_rating, world_manager_rating, comment, turn FROM ratings").fetchall()
    assert sorted(r[:4] for r in rows) == [("ann", 2, 3, ""), ("ann", 4, 5, "sensible"), ("ben", 5, 5, "")]
    stored = ReviewStore(log_dir).ratings()
    assert [r.ref for r in stored if r.rater == "ann"] == [items[0].ref, items[1].ref]
    assert stored[0].judge == items[0].judge and stored[0].log == items[0].log
    assert next(r for r in stored if r.rater == "ben").ref == items[0].ref  # every rater starts at the same turn


def _form(client, rater: str, index: int) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return _hidden(html.unescape(client.get(f"/review/turn?rater={rater}&i={index}").text))


def test_bad_ratings_are_refused_with_a_message(log_dir: Path) -> None:
    with web_client(log_dir) as client:
        form = _form(client, "ann", 0)
        response = client.post("/review/rate", data={**form, "judge_rating": "6", "world_manager_rating": "",
                                                      "comment": "c" * 2001})  # fmt: skip
        assert response.status_code == 422
        for message in ("choose a rating from 1 to 5", "at most 2000 characters"):
            assert message in response.text
        good = {"judge_rating": "3", "world_manager_rating": "3"}
        for bad in ({"rater": "a b"}, {"rater": "ann\n"}, {"turn": "99999"}, {"eval_id": "elsewhere"},
                    {"epoch": "x"}, {"turn": ""}):  # fmt: skip
            assert client.post("/review/rate", data={**form, **good, **bad}).status_code == 422, bad
        assert client.get("/review/next?rater=bad%20name").status_code == 422
    assert not (log_dir / REVIEW_DB_NAME).exists() or not ReviewStore(log_dir).ratings()


def test_re_rating_a_turn_replaces_the_earlier_rating(log_dir: Path) -> None:
    with web_client(log_dir) as client:
        _rate(client, "ann", "1", "1")
        page = client.get("/review/turn?rater=ann&i=0").text
        assert "You rated this turn before (1 / 1)" in page
        client.post("/review/rate", data={**_form(client, "ann", 0), "judge_rating": "4", "world_manager_rating": "2"})
    [rating] = ReviewStore(log_dir).ratings()
    assert (rating.judge_rating, rating.world_manager_rating) == (4, 2)


def test_a_log_added_meanwhile_neither_moves_the_rating_nor_reorders_the_sample(log_dir: Path) -> None:
    """The rating is stored for the turn the rater saw, even if a new log (a finished game) arrived meanwhile."""
    from inspect_ai import eval as inspect_eval

    from virtualcrime.harness.task import virtualcrime

    settings = ServeSettings(log_dir=log_dir, review_share=1.0)
    before = [item.ref for item in review_items(settings)]
    with web_client(log_dir, review_share=1.0) as client:
        shown = _form(client, "ann", 0)
        [log] = inspect_eval(virtualcrime(tasks="restaurant", seeds=1, max_turns=20), model="virtualcrime/scripted",
                             log_dir=str(log_dir), display="none")  # fmt: skip
        assert log.status == "success"
        after = [item.ref for item in review_items(settings)]
        assert len(after) > len(before) and [ref for ref in after if ref in set(before)] == before
        assert client.post("/review/rate", data={**shown, "judge_rating": "2", "world_manager_rating": "5"}).is_success
    [rating] = ReviewStore(log_dir).ratings()
    assert (rating.ref.eval_id, rating.ref.sample_id, rating.ref.epoch, rating.ref.turn) == (
        shown["eval_id"], shown["sample_id"], int(shown["epoch"]), int(shown["turn"]))  # fmt: skip


def test_a_turn_without_a_judge_call_has_no_judge_rating(log_dir: Path) -> None:
    """Turns the pre-check ruled impossible are rated for the World Manager only, and left out of Judge figures."""
    from virtualcrime.analysis.review import model_rows
    from virtualcrime.analysis.review_store import Rating, TurnRef

    ref = TurnRef(eval_id="e", sample_id="s", epoch=1, turn=3)
    common = {"log": "l.eval", "judge": "j", "world_manager": "w", "created": "2026-11-30T00:00:00+00:00"}
    ratings = [Rating(ref=ref, rater="ann", judge_rating=None, world_manager_rating=2, **common),
               Rating(ref=ref.model_copy(update={"turn": 4}), rater="ann", judge_rating=4, world_manager_rating=4,
                      **common)]  # fmt: skip
    store = ReviewStore(log_dir)
    for rating in ratings:
        store.save(rating)
    assert [r.judge_rating for r in store.ratings()] == [None, 4]
    rows = {row.role: row for row in model_rows(store.ratings())}
    assert (rows["judge"].ratings, rows["judge"].mean) == (1, 4.0)
    assert (rows["world_manager"].ratings, rows["world_manager"].mean) == (2, 3.0)


def test_a_rater_who_rated_everything_is_told_so(log_dir: Path) -> None:
    settings = ServeSettings(log_dir=log_dir, review_share=0.0)
    total = len(review_items(settings))
    with web_client(log_dir, review_share=0.0) as client:
        for _ in range(total):
            assert _rate(client, "cat", "3", "3").status_code == 200
        done = client.get("/review/next?rater=cat").text
        assert "All done" in done and f"rated {total} turn(s)" in done


def test_report_reads_the_ratings_made_in_the_browser(log_dir: Path, tmp_path: Path) -> None:
    """End to end: two raters rate the same three turns in Review; the report's numbers follow from them."""
    judge_scores = {"ann": ["5", "4", "2"], "ben": ["5", "3", "2"]}
    with web_client(log_dir) as client:
        for rater, scores in judge_scores.items():
            for score in scores:
                assert _rate(client, rater, score, "4").status_code == 200
    out = tmp_path / "report"
    assert main(["report", str(log_dir), "--out", str(out), "--jobs", "1", "--resamples", "200"]) == 0
    review = json.loads((out / "summary.json").read_text())["review"]
    assert review["ratings"] == 6 and review["turns"] == 3 and sorted(review["raters"]) == ["ann", "ben"]
    judge_rows = [r for r in review["models"] if r["role"] == "judge"]
    assert sum(r["ratings"] for r in judge_rows) == 6
    pooled = [int(s) for scores in judge_scores.values() for s in scores]
    assert sum(r["mean"] * r["ratings"] for r in judge_rows) / 6 == pytest.approx(sum(pooled) / 6)
    [agreement] = [a for a in review["agreement"] if a["role"] == "judge"]
    assert agreement["turns"] == 3 and agreement["exact"] == pytest.approx(2 / 3)
    assert (out / "reviews.md").exists() and "Human review" in (out / "report.html").read_text()

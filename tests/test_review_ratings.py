"""Human review ratings: the SQLite store (round trip, upsert, durability, concurrency, bad files), their statistics
against hand-computed fixtures, and the review section of ``virtualcrime report`` end to end."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from pydantic import ValidationError

from virtualcrime.analysis.annotation import quadratic_weighted_kappa
from virtualcrime.analysis.facts import RunFacts
from virtualcrime.analysis.report import load_runs
from virtualcrime.analysis.review import (
    NO_VARIANCE,
    TOO_FEW_TURNS,
    both_raters_rows,
    build_review,
    latest_ratings,
    model_rows,
)
from virtualcrime.analysis.review import rater_agreement as agreement
from virtualcrime.analysis.review_store import (
    REVIEW_DB_NAME,
    Rating,
    ReviewStore,
    ReviewStoreError,
    TurnRef,
    review_stores,
)
from virtualcrime.cli.main import main

NOW = "2025-03-01T12:00:00+00:00"


def ref(turn: int, eval_id: str = "e1", sample: str = "restaurant/robbery", epoch: int = 1) -> TurnRef:
    return TurnRef(eval_id=eval_id, sample_id=sample, epoch=epoch, turn=turn)


def rating(
    turn_ref: TurnRef,
    rater: str = "alice",
    judge_rating: int = 4,
    wm_rating: int = 3,
    *,
    judge: str = "virtualcrime/rules",
    world_manager: str = "virtualcrime/rules",
    created: str = NOW,
    comment: str = "",
) -> Rating:
    return Rating(
        ref=turn_ref,
        log="run.eval",
        rater=rater,
        judge_rating=judge_rating,
        world_manager_rating=wm_rating,
        comment=comment,
        judge=judge,
        world_manager=world_manager,
        created=created,
    )


# --- the store ---------------------------------------------------------------------------------------------------


def test_round_trip(tmp_path: Path) -> None:
    store = ReviewStore(tmp_path)
    assert store.path == tmp_path / REVIEW_DB_NAME and store.path.is_file()
    assert store.ratings() == [] and store.rated_by("alice") == set()
    first = rating(ref(3), comment="The Judge ignored the locked door.")
    second = rating(ref(4), "bob", 2, 5, judge="openai/gpt-x", world_manager="anthropic/claude-y")
    store.save(first)
    store.save(second)
    assert store.ratings() == [first, second]
    assert store.rated_by("alice") == {ref(3)} and store.rated_by("bob") == {ref(4)}
    assert store.rating(ref(3), "alice") == first
    assert store.rating(ref(3), "bob") is None and store.rating(ref(3, epoch=2), "alice") is None


def test_rerating_replaces_and_keeps_its_place(tmp_path: Path) -> None:
    store = ReviewStore(tmp_path)
    store.save(rating(ref(1), judge_rating=1))
    store.save(rating(ref(2)))
    store.save(rating(ref(1), "bob", judge_rating=5))  # another rater: a rating of its own
    again = rating(ref(1), judge_rating=5, wm_rating=5, comment="changed my mind", created="2025-03-02T08:00:00Z")
    store.save(again)
    stored = store.ratings()
    assert len(stored) == 3
    assert stored[0] == again and store.rating(ref(1), "alice") == again


def test_a_saved_rating_is_durable_for_other_instances_and_processes(tmp_path: Path) -> None:
    writer, reader = ReviewStore(tmp_path), ReviewStore(tmp_path)
    saved = rating(ref(7))
    writer.save(saved)
    assert reader.ratings() == [saved]
    code = (
        "import sys; from virtualcrime.analysis.review_store import ReviewStore; "
        "print(ReviewStore(sys.argv[1]).ratings()[0].model_dump_json())"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert Rating.model_validate_json(out.stdout) == saved


def test_concurrent_saves_from_threads_lose_nothing(tmp_path: Path) -> None:
    ReviewStore(tmp_path)
    threads, per_thread = 8, 25
    errors: list[BaseException] = []

    def work(rater: str) -> None:
        store = ReviewStore(tmp_path)  # each thread its own instance, as each web request would
        try:
            for turn in range(per_thread):
                store.save(rating(ref(turn), rater))
                store.save(rating(ref(turn), rater, judge_rating=5))  # re-rating races other threads' inserts
        except BaseException as err:  # pragma: no cover - the failure is reported below
            errors.append(err)

    workers = [threading.Thread(target=work, args=(f"rater{i}",)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == []
    stored = ReviewStore(tmp_path).ratings()
    assert len(stored) == threads * per_thread
    assert {r.judge_rating for r in stored} == {5}


def test_concurrent_saves_from_processes_lose_nothing(tmp_path: Path) -> None:
    code = (
        "import sys; from virtualcrime.analysis.review_store import Rating, ReviewStore, TurnRef\n"
        "store = ReviewStore(sys.argv[1])\n"
        "for t in range(20):\n"
        "    store.save(Rating(ref=TurnRef(eval_id='e', sample_id='s', epoch=1, turn=t), log='x.eval',\n"
        "        rater=sys.argv[2], judge_rating=3, world_manager_rating=3, judge='j', world_manager='w',\n"
        "        created='2025-01-01T00:00:00Z'))\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path), f"p{i}"]) for i in range(3)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    assert len(ReviewStore(tmp_path).ratings()) == 60


def test_a_file_that_is_not_a_review_database_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / REVIEW_DB_NAME).write_bytes(b"this is not an SQLite database, just some bytes " * 40)
    with pytest.raises(ReviewStoreError, match="not a database"):
        ReviewStore(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    with sqlite3.connect(other / REVIEW_DB_NAME) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
    with pytest.raises(ReviewStoreError, match="not a VirtualCrime review database"):
        ReviewStore(other)
    with pytest.raises(ReviewStoreError, match="no such folder"):
        ReviewStore(tmp_path / "missing")


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    store = ReviewStore(tmp_path)
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE schema_version SET version = 99")
    with pytest.raises(ReviewStoreError, match="schema 99 is newer"):
        ReviewStore(tmp_path)


@pytest.mark.parametrize(
    "change",
    [
        {"rater": ""},
        {"rater": "a" * 65},
        {"rater": "alice smith"},
        {"rater": "alice/../bob"},
        {"judge_rating": 0},
        {"world_manager_rating": 6},
        {"comment": "x" * 2001},
        {"created": "yesterday"},
        {"created": "2025-03-01T12:00:00+02:00"},
        {"surprise": 1},
    ],
)
def test_ratings_are_validated(change: dict[str, object]) -> None:
    data = rating(ref(1)).model_dump() | change
    with pytest.raises(ValidationError):
        Rating.model_validate(data)


def test_turn_refs_are_hashable_and_frozen() -> None:
    assert len({ref(1), ref(1), ref(2)}) == 2
    with pytest.raises(ValidationError):
        ref(1).turn = 2  # type: ignore[misc]


def test_review_stores_finds_files_for_folders_and_logs(tmp_path: Path) -> None:
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "empty").mkdir()
    top, deep = ReviewStore(tmp_path).path, ReviewStore(tmp_path / "sub" / "deeper").path
    log = tmp_path / "sub" / "deeper" / "run.eval"
    log.write_bytes(b"")
    assert review_stores([tmp_path]) == [top, deep]
    assert review_stores([log]) == [deep]
    assert review_stores([tmp_path, log, tmp_path / "sub"]) == [top, deep]  # deduplicated
    assert review_stores([tmp_path / "empty", tmp_path / "empty" / "x.eval"]) == []


# --- statistics -----------------------------------------------------------------------------------------------------


def test_per_model_rows_by_hand() -> None:
    ratings = [
        rating(ref(1), "alice", 5, 1),
        rating(ref(2), "alice", 4, 2),
        rating(ref(1), "bob", 3, 3),
        rating(ref(3), "bob", 2, 4),
        rating(ref(9, "e2"), "bob", 1, 5, judge="openai/gpt-x", world_manager="virtualcrime/rules"),
    ]
    rows = {(r.role, r.model): r for r in model_rows(ratings)}
    assert set(rows) == {
        ("judge", "virtualcrime/rules"),
        ("judge", "openai/gpt-x"),
        ("world_manager", "virtualcrime/rules"),
    }
    judge = rows[("judge", "virtualcrime/rules")]  # 5, 4, 3, 2
    assert (judge.ratings, judge.turns, judge.raters) == (4, 3, 2)
    assert (judge.mean, judge.share_4_5, judge.share_3_5) == (3.5, 0.5, 0.75)
    wm = rows[("world_manager", "virtualcrime/rules")]  # 1, 2, 3, 4, 5 over all five ratings
    assert (wm.ratings, wm.turns, wm.raters, wm.mean, wm.share_4_5, wm.share_3_5) == (5, 4, 2, 3.0, 0.4, 0.6)


def test_kappa_and_agreement_by_hand() -> None:
    # Judge ratings alice 1,2,3,4 and bob 1,2,4,4 on the same four turns. Levels 1..5, weights (i−j)²/16.
    # Observed weighted disagreement: one turn off by 1 → (1/4)·(1/16) = 1/64. Marginals: alice ¼ each of 1..4,
    # bob ¼ at 1, ¼ at 2, ½ at 4; expected Σ pA·pB·(i−j)² = ¼·3.5 + ¼·1.5 + ½·3.5 = 3, so 3/16.
    # κ = 1 − (1/64)/(3/16) = 11/12. Exact 3/4, within one 4/4.
    alice = [rating(ref(t), "alice", j, 3) for t, j in zip(range(4), (1, 2, 3, 4), strict=True)]
    bob = [rating(ref(t), "bob", j, 3) for t, j in zip(range(4), (1, 2, 4, 4), strict=True)]
    lone = [rating(ref(99), "carol", 5, 5), rating(ref(0), "carol", 1, 1)]  # carol shares one turn with each
    rows = {(a.role, a.rater_a, a.rater_b): a for a in agreement(alice + bob + lone)}
    judge = rows[("judge", "alice", "bob")]
    assert judge.turns == 4 and judge.kappa == pytest.approx(11 / 12) and judge.kappa_undefined == ""
    assert (judge.exact, judge.within_one) == (0.75, 1.0)
    assert quadratic_weighted_kappa([1, 2, 3, 4], [1, 2, 4, 4], 1, 5) == pytest.approx(11 / 12)
    wm = rows[("world_manager", "alice", "bob")]  # both rated every turn 3: κ is undefined, agreement perfect
    assert wm.kappa is None and wm.kappa_undefined == NO_VARIANCE and (wm.exact, wm.within_one) == (1.0, 1.0)
    one = rows[("judge", "alice", "carol")]
    assert one.turns == 1 and one.kappa is None and one.kappa_undefined == TOO_FEW_TURNS
    assert ("judge", "bob", "carol") in rows  # bob also rated turn 0


def test_only_the_latest_rating_of_a_turn_by_a_rater_counts() -> None:
    old = rating(ref(1), judge_rating=1, created="2025-03-01T10:00:00+00:00")
    new = rating(ref(1), judge_rating=5, created="2025-03-01T11:00:00Z")
    other = rating(ref(2), judge_rating=3)
    kept, dropped = latest_ratings([new, other, old])  # the older copy read later does not win
    assert kept == [new, other] and dropped == 1
    summary = build_review([new, other, old], loaded_runs={("e1", "restaurant/robbery", 1)}, stores=["a", "b"])
    assert summary is not None
    assert (summary.ratings, summary.duplicates_dropped, summary.turns, summary.outside_loaded_logs) == (2, 1, 2, 0)
    assert build_review([], set()) is None


def test_ratings_of_runs_not_loaded_are_counted_and_kept() -> None:
    ratings = [rating(ref(1)), rating(ref(1, "elsewhere")), rating(ref(2, "elsewhere"), "bob")]
    summary = build_review(ratings, loaded_runs={("e1", "restaurant/robbery", 1)})
    assert summary is not None
    assert summary.ratings == 3 and summary.outside_loaded_logs == 2 and summary.raters == ["alice", "bob"]


# --- the report ------------------------------------------------------------------------------------------------------


def test_report_has_the_review_section(matrix_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "logs"
    shutil.copytree(matrix_logs, folder)
    runs = sorted(load_runs([folder], jobs=1).runs, key=lambda r: (r.judge, r.eval_id, r.sample_id, r.epoch))
    lenient = next(r for r in runs if r.judge == "virtualcrime/rules")
    strict = next(r for r in runs if r.judge == "virtualcrime/rules-strict")

    def on(run: RunFacts, turn: int, rater: str, j: int, w: int) -> Rating:
        run_ref = TurnRef(eval_id=run.eval_id, sample_id=run.sample_id, epoch=run.epoch, turn=turn)
        return rating(run_ref, rater, j, w, judge=run.judge, world_manager=run.world_manager)

    store = ReviewStore(folder)
    for r in (
        on(lenient, 1, "alice", 5, 4),
        on(lenient, 2, "alice", 4, 4),
        on(lenient, 1, "bob", 4, 4),
        on(lenient, 2, "bob", 2, 3),
        on(strict, 1, "alice", 3, 5),
        rating(ref(1, "a-run-not-loaded"), "carol", 1, 2, judge="openai/gpt-x"),
    ):
        store.save(r)
    (folder / "broken").mkdir()
    (folder / "broken" / REVIEW_DB_NAME).write_bytes(b"garbage " * 100)

    out = tmp_path / "out"
    assert main(["report", str(folder), "--out", str(out), "--resamples", "200"]) == 0
    printed = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    review = summary["review"]
    assert review["stores"] == [str(folder / REVIEW_DB_NAME)]
    assert (review["ratings"], review["turns"], review["outside_loaded_logs"]) == (6, 4, 1)
    assert review["raters"] == ["alice", "bob", "carol"]
    rows = {(r["role"], r["model"]): r for r in review["models"]}
    lenient_row = rows[("judge", "virtualcrime/rules")]  # 5, 4, 4, 2
    assert (lenient_row["ratings"], lenient_row["turns"], lenient_row["raters"]) == (4, 2, 2)
    assert lenient_row["mean"] == pytest.approx(3.75)
    assert (lenient_row["share_4_5"], lenient_row["share_3_5"]) == (0.75, 0.75)
    assert rows[("judge", "virtualcrime/rules-strict")]["mean"] == 3.0
    assert rows[("judge", "openai/gpt-x")]["ratings"] == 1
    wm = rows[("world_manager", "virtualcrime/rules")]  # 4, 4, 4, 3, 5, 2
    assert (wm["ratings"], wm["turns"], wm["raters"], wm["mean"]) == (6, 4, 3, pytest.approx(22 / 6))
    pairs = {(a["role"], a["rater_a"], a["rater_b"]): a for a in review["agreement"]}
    assert set(pairs) == {("judge", "alice", "bob"), ("world_manager", "alice", "bob")}
    judge_pair = pairs[("judge", "alice", "bob")]  # alice 5, 4 vs bob 4, 2
    assert judge_pair["turns"] == 2 and (judge_pair["exact"], judge_pair["within_one"]) == (0.0, 0.5)
    assert judge_pair["kappa"] == pytest.approx(quadratic_weighted_kappa([5, 4], [4, 2], 1, 5))
    problems = [p for p in summary["problems"] if p["log"].endswith(REVIEW_DB_NAME)]
    assert len(problems) == 1 and "broken" in problems[0]["log"] and problems[0]["kind"] == "unreadable"
    html = (out / "report.html").read_text()
    assert "Human review of Judge and World Manager" in html and "openai/gpt-x" in html
    assert "1 of them rate runs not among the loaded logs" in html
    markdown = (out / "reviews.md").read_text()
    assert "| Judge | virtualcrime/rules | 4 | 2 | 2 | 3.75 | 0.75 | 0.75 |" in markdown
    assert "Human review of Judge and World Manager" in printed
    # Without review files there is no section, and no stale reviews.md from the report before.
    shutil.rmtree(folder / "broken")
    store.path.unlink()
    assert main(["report", str(folder), "--out", str(out), "--resamples", "200"]) == 0
    assert json.loads((out / "summary.json").read_text())["review"] is None
    assert not (out / "reviews.md").exists()
    assert "Human review" not in (out / "report.html").read_text()


def test_shares_where_both_raters_gave_4_5_and_3_5_by_hand() -> None:
    # Judge ratings on turns 1-4: alice 5, 4, 3, 2; bob 4, 5, 5, 3 → both ≥ 4 on turns 1 and 2 (2/4), both ≥ 3 on
    # turns 1-3 (3/4). World Manager: alice 5, 5, 4, 4; bob 5, 4, 4, 3 → both ≥ 4 on 3/4, both ≥ 3 on 4/4.
    alice = [rating(ref(t), "alice", j, w) for t, j, w in zip(range(1, 5), (5, 4, 3, 2), (5, 5, 4, 4), strict=True)]
    bob = [rating(ref(t), "bob", j, w) for t, j, w in zip(range(1, 5), (4, 5, 5, 3), (5, 4, 4, 3), strict=True)]
    lone = [rating(ref(7), "alice", 5, 5)]  # rated by one rater only: not a shared turn
    pairs = {(a.role, a.rater_a, a.rater_b): a for a in agreement(alice + bob + lone)}
    judge, wm = pairs[("judge", "alice", "bob")], pairs[("world_manager", "alice", "bob")]
    assert (judge.turns, judge.both_4_5, judge.both_3_5) == (4, 0.5, 0.75)
    assert (wm.turns, wm.both_4_5, wm.both_3_5) == (4, 0.75, 1.0)
    rows = {r.role: r for r in model_rows(alice + bob + lone)}
    assert (rows["judge"].multi_rated_turns, rows["judge"].all_4_5, rows["judge"].all_3_5) == (4, 0.5, 0.75)
    assert (rows["world_manager"].all_4_5, rows["world_manager"].all_3_5) == (0.75, 1.0)
    # Per rating, not per turn: judge ratings 5, 4, 3, 2, 5 (alice) and 4, 5, 5, 3 (bob) → 6 of 9 are 4 or 5.
    assert rows["judge"].share_4_5 == pytest.approx(6 / 9)
    # A third rater on turn 1 who gave the Judge 3: on that turn not *all* raters gave 4-5 any more (model row),
    # while alice and bob still both did (their pair).
    carol = [rating(ref(1), "carol", 3, 5)]
    rows = {r.role: r for r in model_rows(alice + bob + lone + carol)}
    assert (rows["judge"].multi_rated_turns, rows["judge"].all_4_5, rows["judge"].all_3_5) == (4, 0.25, 0.75)
    pairs = {(a.role, a.rater_a, a.rater_b): a for a in agreement(alice + bob + carol)}
    assert pairs[("judge", "alice", "bob")].both_4_5 == 0.5 and pairs[("judge", "alice", "carol")].both_4_5 == 0.0
    # Nobody shared a turn: no share to give.
    single = {r.role: r for r in model_rows(alice)}
    assert single["judge"].multi_rated_turns == 0 and single["judge"].all_4_5 is None
    summary = build_review(alice + bob, set())
    assert summary is not None
    assert both_raters_rows(summary)[1] == ["Judge", "virtualcrime/rules", "4", "0.50", "0.75"]


def test_kappa_refuses_ratings_outside_1_to_5() -> None:
    # The store and the Rating model refuse them; a rating that got past both (built without validation) is refused
    # by κ itself instead of wrapping a 0 round to level 5 or raising IndexError on a 6.
    bad = Rating.model_construct(**{**rating(ref(1), "bob").model_dump(), "judge_rating": 0, "ref": ref(1)})
    good = rating(ref(1), "alice")
    with pytest.raises(ValueError, match=r"score\(s\) 0 outside the levels 1-5"):
        agreement([good, bad, rating(ref(2), "alice"), rating(ref(2), "bob")])
    with pytest.raises(ValueError, match="6 outside"):
        quadratic_weighted_kappa([1, 6], [1, 5], 1, 5)


def test_opening_a_store_whose_creator_has_not_committed_its_schema_waits_for_it(tmp_path: Path) -> None:
    # What three processes saving at once can meet: the file exists (so this one only reads) but its schema is still
    # in the creating process's open transaction. Writing the schema from the read transaction was refused at once.
    from virtualcrime.analysis.review_store import REVIEW_DB_NAME, _ensure_schema

    creator = sqlite3.connect(tmp_path / REVIEW_DB_NAME, isolation_level=None, check_same_thread=False)
    creator.execute("PRAGMA journal_mode = WAL")  # the file now has a header: not new to anyone else
    creator.execute("BEGIN IMMEDIATE")
    _ensure_schema(creator, tmp_path / REVIEW_DB_NAME, create=True)
    threading.Timer(0.5, lambda: creator.execute("COMMIT")).start()
    store = ReviewStore(tmp_path)  # waits for the creator, then finds its schema
    assert store.ratings() == []
    creator.close()

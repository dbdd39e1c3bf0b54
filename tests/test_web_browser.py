"""End to end in a real browser: play a game, replay its log, rate two turns, as a person would with the web UI.

Headless Chromium (Debian's ``/usr/bin/chromium``, or ``$VIRTUALCRIME_CHROMIUM``) is driven by Playwright's sync
API against ``virtualcrime serve`` started as a subprocess on a free port, over a temporary log folder that
already holds one offline benchmark log. A full-page screenshot of every stage is saved in
``$VIRTUALCRIME_TEST_ARTIFACTS`` (default ``test-artifacts/web/``) for a look at the layout.

Select it with ``pytest -m browser`` (or leave it out with ``-m 'not browser'``); it skips when Chromium or the
``playwright`` package is missing, and takes about 25 seconds.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

import pytest

try:
    from playwright.sync_api import Browser, ConsoleMessage, Page, Response, sync_playwright
except ImportError:  # pragma: no cover - depends on the environment
    pytest.skip("the playwright package is not installed (pip install -e '.[dev]')", allow_module_level=True)

ROOT = Path(__file__).resolve().parent.parent
TASK = "restaurant/robbery"
PLAYER = "e2e-player"
RATER = "e2e-rater"
SERVER_START_S = 30.0
STEP_TIMEOUT_MS = 15_000  # one page or one action; writing the game's log (an Inspect eval) takes ~3 s

pytestmark = pytest.mark.browser


def chromium_path() -> str | None:
    """Debian's Chromium (Playwright's own browser download is not used), or ``$VIRTUALCRIME_CHROMIUM``."""
    configured = os.environ.get("VIRTUALCRIME_CHROMIUM")
    if configured:
        return configured if Path(configured).is_file() else None
    if Path("/usr/bin/chromium").is_file():
        return "/usr/bin/chromium"
    return shutil.which("chromium") or shutil.which("chromium-browser")


CHROMIUM = chromium_path()
if CHROMIUM is None:  # pragma: no cover - depends on the environment
    _looked = os.environ.get("VIRTUALCRIME_CHROMIUM") or "/usr/bin/chromium, chromium or chromium-browser on PATH"
    pytest.skip(
        f"Chromium is missing (looked for {_looked}); install it with 'apt-get install chromium' or point "
        "VIRTUALCRIME_CHROMIUM at a Chromium binary",
        allow_module_level=True,
    )


def virtualcrime_command() -> list[str]:
    """The ``virtualcrime`` console script of this interpreter's environment (or the module, if there is none)."""
    script = Path(sys.executable).parent / "virtualcrime"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "virtualcrime.cli.main"]


def subprocess_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("VIRTUALCRIME_TOKEN", None)  # a token in the environment would make the server refuse the browser
    env["PYTHONUNBUFFERED"] = "1"
    return env


def artifacts_dir() -> Path:
    folder = Path(os.environ.get("VIRTUALCRIME_TEST_ARTIFACTS") or ROOT / "test-artifacts" / "web")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# -- fixtures ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A log folder holding one offline benchmark log (scripted Attacker, rules referees, 8 turns)."""
    folder = tmp_path_factory.mktemp("web_logs")
    command = [*virtualcrime_command(), "run", "--task", TASK, "--seeds", "1", "--max-turns", "8",
               "--log-dir", str(folder), "--display", "none"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=subprocess_env(), cwd=folder.parent)
    assert done.returncode == 0, f"virtualcrime run failed:\n{done.stdout}\n{done.stderr}"
    assert len(list(folder.glob("*.eval"))) == 1, done.stdout
    return folder


@dataclass
class Server:
    url: str
    process: subprocess.Popen[str]
    output: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def server(log_dir: Path) -> Iterator[Server]:
    """``virtualcrime serve --port 0`` on the log folder; every judged turn is sampled for review (share 1)."""
    stderr_path = log_dir.parent / "serve-stderr.txt"
    with stderr_path.open("w") as stderr:
        process = subprocess.Popen(
            [*virtualcrime_command(), "serve", "--port", "0", "--log-dir", str(log_dir), "--review-share", "1.0"],
            stdout=subprocess.PIPE, stderr=stderr, text=True, env=subprocess_env(), cwd=log_dir.parent,
        )  # fmt: skip
    lines: queue.Queue[str | None] = queue.Queue()
    output: list[str] = []

    def read_stdout() -> None:  # keeps draining stdout so the server can never block on a full pipe
        assert process.stdout is not None
        for line in process.stdout:
            output.append(line)
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read_stdout, daemon=True).start()
    try:
        url = _wait_for_url(process, lines, stderr_path)
        _wait_until_answering(url, process, stderr_path)
        yield Server(url, process, output)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _wait_for_url(process: subprocess.Popen[str], lines: queue.Queue[str | None], stderr_path: Path) -> str:
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.2)
        except queue.Empty:
            continue
        if line is None:
            break
        found = re.search(r"Serving on http://[^\s/]+:(\d+)/", line)
        if found:
            return f"http://127.0.0.1:{found.group(1)}"  # the server binds 127.0.0.1; 'localhost' may try ::1 first
    pytest.fail(f"virtualcrime serve printed no 'Serving on' line (exit code {process.poll()}):\n"
                f"{stderr_path.read_text()}")  # fmt: skip


def _wait_until_answering(url: str, process: subprocess.Popen[str], stderr_path: Path) -> None:
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            with urllib.request.urlopen(url + "/", timeout=2) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            time.sleep(0.1)
    pytest.fail(f"virtualcrime serve did not answer at {url} (exit code {process.poll()}):\n{stderr_path.read_text()}")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            yield launched
        finally:
            launched.close()


@dataclass
class Watch:
    """Problems the browser saw on the way: script errors, console errors, unexpected HTTP errors."""

    problems: list[str] = field(default_factory=list)
    expected_statuses: set[int] = field(default_factory=set)

    def response(self, response: Response) -> None:
        if response.status >= 400 and response.status not in self.expected_statuses:
            self.problems.append(f"HTTP {response.status} for {response.request.method} {response.url}")

    def console(self, message: ConsoleMessage) -> None:
        # failed loads are judged by ``response`` (which knows the URL and the statuses a step expects)
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            self.problems.append(f"console: {message.text}")


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(STEP_TIMEOUT_MS)
    try:
        yield opened
    finally:
        context.close()


def shoot(page: Page, name: str) -> Path:
    path = artifacts_dir() / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


# -- reading the pages ------------------------------------------------------------------------------------------


def current_turn(page: Page) -> int:
    """The turn the action form is for (the hidden field the server checks), agreeing with the heading."""
    turn = int(page.locator("#action-form input[name=turn]").input_value())
    assert f"turn {turn}" in page.locator("h1").inner_text()
    return turn


def team_locations(page: Page) -> dict[str, str]:
    """Team member id -> location id, from the team table."""
    found = {}
    for row in page.locator("#team tr").all()[1:]:
        codes = row.locator("code").all_inner_texts()
        found[codes[0]] = codes[1]
    return found


def team_names(page: Page) -> dict[str, str]:
    return {
        row.locator("td").nth(0).locator("code").inner_text(): row.locator("td").nth(1).inner_text()
        for row in page.locator("#team tr").all()[1:]
    }


def neighbours(page: Page, location: str) -> list[str]:
    """Locations one connection away from ``location``, from the floor plan's connection list."""
    found = []
    for item in page.locator("ul.connections li").all():
        a, b = item.locator("code").all_inner_texts()[:2]
        if a == location:
            found.append(b)
        elif b == location:
            found.append(a)
    return found


def options(page: Page, select: str) -> list[str]:
    return page.eval_on_selector_all(f"{select} option", "options => options.map(o => o.value)")


def game_over(page: Page) -> bool:
    return page.locator("#result-text").count() > 0


@dataclass
class Turn:
    verb: str
    actor: str
    target: str = ""
    item: str = ""
    minutes: int = 5
    description: str = ""


def choose_action(page: Page, index: int, visited: set[str]) -> Turn:
    """A valid, varied, low-risk action chosen from what the page offers: moves to unvisited places next door,
    a look around, a word between team members, hiding."""
    members = options(page, "#actor")
    targets = set(options(page, "#target"))
    where = team_locations(page)
    kind = ["move", "observe", "move", "talk", "hide", "move"][index % 6]
    if kind == "move":
        mover = members[1 % len(members)]
        choices = [n for n in neighbours(page, where[mover]) if n in targets]
        assert choices, f"no place next to {where[mover]} is offered as a target"
        place = next((n for n in choices if n not in visited), choices[0])
        return Turn("move", mover, place, minutes=3, description=f"{mover} walks quietly to {place}, keeping low.")
    if kind == "observe":
        watcher = members[0]
        here = where[watcher]
        return Turn("observe", watcher, here, minutes=2, description=f"{watcher} watches {here} and notes who passes.")
    if kind == "talk":
        speaker, listener = members[-1], members[0]
        return Turn("talk", speaker, listener, minutes=4, description=f"{speaker} goes over the plan with {listener}.")
    hider = members[-1]
    return Turn("hide", hider, minutes=5, description=f"{hider} ducks out of sight and waits.")


def fill_action(page: Page, turn: Turn) -> None:
    page.fill("#verb", turn.verb)
    page.select_option("#actor", turn.actor)
    page.select_option("#target", turn.target)
    page.select_option("#item", turn.item)
    page.fill("#minutes", str(turn.minutes))
    page.fill("#description", turn.description)


def submit(page: Page, button: str, action: str) -> int:
    """Click a form's submit button, wait for the page it leads to, and return the HTTP status of the POST to
    ``action`` (303 when the server took the form and redirected, 422 when it refused it)."""
    posted = re.compile(rf"{re.escape(action)}$")
    with (
        page.expect_response(lambda r: r.request.method == "POST" and bool(posted.search(r.url))) as answer,
        page.expect_navigation(),
    ):
        page.click(button)
    return answer.value.status


def submit_turn(page: Page) -> int:
    return submit(page, "#act", "/turn")


# -- the stages -------------------------------------------------------------------------------------------------


@dataclass
class Played:
    turns: list[Turn]
    log: str
    ended_by_game: bool
    team: dict[str, str]  # member id -> name


def play_game(page: Page, server: Server, watch: Watch, log_dir: Path) -> Played:
    page.goto(server.url + "/play")
    notice = page.locator("#consent-notice")
    assert notice.is_visible()
    assert "logged for research" in notice.inner_text()
    assert TASK in options(page, "#task")
    shoot(page, "01-play-start")

    # without the consent box ticked the server refuses to start a game
    page.fill("#player", PLAYER)
    page.select_option("#task", TASK)
    watch.expected_statuses.add(422)
    assert submit(page, "#start", "/play") == 422
    assert page.locator("#error-consent").is_visible()
    assert page.url.rstrip("/").endswith("/play")
    assert page.locator("#player").input_value() == PLAYER  # the form keeps what was typed

    page.check("#consent")
    assert submit(page, "#start", "/play") == 303
    assert re.search(r"/play/[A-Za-z0-9_-]+$", page.url), page.url
    assert current_turn(page) == 1
    assert "none yet" in page.locator("#last-result").inner_text()
    assert set(options(page, "#actor")) == set(team_locations(page))
    names = team_names(page)

    played: list[Turn] = []
    visited = set(team_locations(page).values())
    target_turns = 5
    while len(played) < target_turns:
        turn_number = current_turn(page)
        action = choose_action(page, len(played), visited)
        fill_action(page, action)
        if turn_number == 1:
            page.fill("#memory", "The van is in the parking lot.")
            page.fill("#plan", "Scout the back of the building first.")
        assert submit_turn(page) == 303  # post, redirect, get
        played.append(action)
        if game_over(page):
            break
        assert current_turn(page) == turn_number + 1, "the game did not advance after a valid action"
        last = page.locator("#last-result").inner_text()
        assert f"Turn {turn_number}:" in last, last
        if action.verb == "move" and f"Turn {turn_number}: success:" in last:
            assert names[action.actor] in last, last
            assert team_locations(page)[action.actor] == action.target
            visited.add(action.target)
        if turn_number == 1:
            shoot(page, "02-play-turn")
            # the notes are carried over into the next turn's form
            assert page.locator("#memory").input_value() == "The van is in the parking lot."
            assert page.locator("#plan").input_value() == "Scout the back of the building first."
            invalid_submissions(page, turn_number + 1)

    ended_by_game = game_over(page)
    if not ended_by_game:
        assert len(played) >= 4
        page.once("dialog", lambda dialog: dialog.accept())
        page.click("#abandon")
        page.wait_for_selector("#result-text")
        assert "abandoned by the player" in page.locator("#result-text").inner_text()
    logged = page.locator("#log-written")
    assert logged.is_visible(), page.locator("main").inner_text()
    assert f"human/{PLAYER}" in logged.inner_text()
    assert f"for {len(played)} turn(s)" in page.locator("#game-result").inner_text()
    log = logged.locator("code").first.inner_text()
    assert (log_dir / log).is_file(), f"the end page names {log}, which is not in the log folder"
    shoot(page, "04-play-end")
    return Played(played, log, ended_by_game, names)


def invalid_submissions(page: Page, turn: int) -> None:
    """Submissions the server must refuse, each leaving the game at ``turn`` with the typed notes kept."""
    last = page.locator("#last-result").inner_text()
    # the browser's own checks (``required``) are removed so the server's are tested
    page.evaluate("document.querySelectorAll('[required]').forEach(e => e.removeAttribute('required'))")
    page.fill("#memory", "Kept across a refused form.")
    page.fill("#verb", "")
    page.fill("#description", "   ")
    assert submit_turn(page) == 422
    assert page.locator("#form-errors").is_visible()
    assert "required" in page.locator("#error-verb").inner_text()
    assert "required" in page.locator("#error-description").inner_text()
    assert current_turn(page) == turn
    assert page.locator("#last-result").inner_text() == last
    assert page.locator("#memory").input_value() == "Kept across a refused form."
    shoot(page, "03-play-form-error")

    # an id the player cannot name this turn, forged into the target list
    page.evaluate("""() => { const o = document.createElement('option');
        o.value = 'vault_of_nowhere'; o.text = 'vault_of_nowhere'; document.querySelector('#target').add(o); }""")
    page.fill("#verb", "move")
    page.fill("#description", "Walk through the wall.")
    page.select_option("#target", "vault_of_nowhere")
    assert submit_turn(page) == 422
    assert page.locator("#error-target").is_visible()
    assert page.locator("#error-verb").count() == 0
    assert current_turn(page) == turn
    assert page.locator("#last-result").inner_text() == last


def replay_human_log(page: Page, server: Server, played: Played) -> None:
    page.goto(server.url + "/replay")
    rows = page.locator("table.logs tr").filter(has=page.locator("code", has_text=f"human/{PLAYER}"))
    assert rows.count() == 1
    assert page.locator("table.logs tr").filter(has_text="virtualcrime/scripted").count() == 1  # the benchmark log
    shoot(page, "05-replay-logs")
    link = rows.locator(".log-link")
    assert link.inner_text() == played.log.split("/")[-1]
    link.click()
    page.wait_for_selector("#runs")

    runs = page.locator("#runs tr").filter(has=page.locator(".run-link"))
    assert runs.count() == 1
    run_row = runs.first.inner_text()
    assert TASK in run_row and PLAYER in run_row
    runs.first.locator(".run-link").click()
    page.wait_for_selector("#stepper")

    assert f"human/{PLAYER}" in page.locator("main").inner_text()
    for number, action in enumerate(played.turns, start=1):
        assert page.locator("#stepper a.current").inner_text() == str(number)
        assert page.locator("#map svg").count() == 1, "the map SVG is missing"
        assert page.locator("#map svg").bounding_box() is not None
        markers = " ".join(page.locator("#map svg circle title").all_text_contents())
        assert all(name in markers for name in played.team.values()), markers  # the team is on the map
        shown = page.locator("#action").inner_text()
        assert f"Turn {number}" in shown
        assert action.verb in shown and action.actor in shown and action.description in shown, shown
        verdict = page.locator("#verdict")
        assert verdict.is_visible() and "Outcome distribution" in verdict.inner_text()
        assert page.locator("#verdict table.dist tr.drawn").count() == 1  # the drawn outcome is marked
        assert page.locator("#world-manager").is_visible()
        assert "World Manager" in page.locator("#world-manager").inner_text()
        if number == 2:
            shoot(page, "06-replay-turn")
        if number < len(played.turns):
            page.click("#next")
            page.wait_for_url(re.compile(rf"[?&]turn={number + 1}(&|$)"))
    assert page.locator("#next").count() == 0, "the stepper offers a turn after the last one played"


def review_two_turns(page: Page, server: Server, watch: Watch, log_dir: Path) -> None:
    page.goto(server.url + "/review")
    page.fill("#rater", RATER)
    page.click("#begin")
    page.wait_for_url(re.compile(r"/review/turn\?"))

    chosen = [(4, 2, "The outcomes fit, but the World Manager left the guard where he was."), (3, 5, "")]
    rated: list[tuple[str, int, int, int, int, str]] = []
    for count, (judge, world_manager, comment) in enumerate(chosen):
        assert f"{RATER} has rated {count}" in page.locator("h1").inner_text()
        assert page.locator("#verdict").is_visible() and page.locator("#world-manager").is_visible()
        where = page.locator("main > p.muted").first.inner_text()
        found = re.search(r"(\S+) epoch (\d+), turn (\d+)", where)
        assert found, where
        if count == 0:
            # a rating needs both scores: the server refuses the form and keeps the Judge's score
            page.check("#judge-1")
            watch.expected_statuses.add(422)
            assert submit(page, "#save-rating", "/review/rate") == 422
            assert page.locator("#error-world_manager_rating").is_visible()
            assert page.locator("#judge-1").is_checked()
        page.check(f"#judge-{judge}")
        page.check(f"#wm-{world_manager}")
        if comment:
            page.fill("#comment", comment)
        if count == 0:
            shoot(page, "07-review-turn")
        assert submit(page, "#save-rating", "/review/rate") == 303
        rated.append((found.group(1), int(found.group(2)), int(found.group(3)), judge, world_manager, comment))
    assert f"{RATER} has rated 2" in page.locator("h1").inner_text() or page.locator("#review-done").count()

    database = log_dir / "virtualcrime-reviews.sqlite"
    assert database.is_file()
    with closing(sqlite3.connect(database)) as connection:
        rows = connection.execute(
            "SELECT sample_id, epoch, turn, judge_rating, world_manager_rating, comment FROM ratings "
            "WHERE rater = ? ORDER BY id",
            (RATER,),
        ).fetchall()
        total = connection.execute("SELECT COUNT(*) FROM ratings").fetchone()[0]
    assert rows == rated
    assert total == 2


# -- the test ---------------------------------------------------------------------------------------------------


def test_play_replay_and_review_in_the_browser(page: Page, server: Server, log_dir: Path) -> None:
    (artifacts_dir() / "failure.png").unlink(missing_ok=True)  # from an earlier failed run
    watch = Watch()
    page.on("response", watch.response)
    page.on("pageerror", lambda error: watch.problems.append(f"script error: {error}"))
    page.on("console", watch.console)
    try:
        played = play_game(page, server, watch, log_dir)
        replay_human_log(page, server, played)
        review_two_turns(page, server, watch, log_dir)
    except BaseException:
        shoot(page, "failure")  # what the browser showed when it went wrong
        raise
    assert not watch.problems, watch.problems
    assert server.process.poll() is None, "the server stopped during the test"

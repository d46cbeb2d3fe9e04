"""The competition server's intake of a submission (store, build, check, play), with the build and the
conformance check stood in for so that the tests control when each one ends: a withdrawal or a later
version that comes meanwhile is never undone by an intake that goes on."""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest
from intake_helpers import TIMEOUT, Gates, bundle, run, running, until

from arena.bots.limits import Limits
from arena.competition import bundles, intake
from arena.competition.desk_port import SubmissionError
from arena.ledger import Ledger, LedgerError
from arena.ledger import competitions as store
from arena.ledger.rows import FinishedGame, ScheduledGame
from arena.referee import TimeControl
from arena.sandbox import probe

NOBODY = 65534  # a uid of no one's, to build as when the tests run as root
EXAMPLE = Path(__file__).resolve().parents[2] / "competitions" / "examples" / "python-bot"


def test_a_bot_withdrawn_during_its_build_stays_out_of_play(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(withdrawn_during_build, tmp_path, monkeypatch)


async def withdrawn_during_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gates = Gates()
    async with running(tmp_path, monkeypatch, gates) as (server, comp, ada):
        gates.close("1")
        sub = await server.submit(ada, bundle("1"))
        await until(lambda: gates.started == ["1"])
        assert await server.withdraw(ada, "b") == 1
        gates.open("1")
        await until(lambda: not server._tasks)  # the intake has ended
        now = comp.submission(sub.id)
        assert (now.status, now.reason) == (store.WITHDRAWN, "withdrawn by its author")
        assert now.entrant_id is None and not server.entries


def test_an_error_of_the_arenas_fails_the_submission_with_a_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(arena_error, tmp_path, monkeypatch)


async def arena_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not left building for ever (its author's submit --wait would poll for ever), and the server
    goes on: the next version is taken in."""
    gates = Gates()
    gates.errors["1"] = FileExistsError(17, "File exists")
    async with running(tmp_path, monkeypatch, gates) as (server, comp, ada):
        one = await server.submit(ada, bundle("1"))
        await until(lambda: not server._tasks)
        now = comp.submission(one.id)
        assert now.status == store.FAILED
        assert "could not build or check it (FileExistsError" in now.reason
        two = await server.submit(ada, bundle("2"))
        await until(lambda: comp.submission(two.id).status == store.ACTIVE)
        assert server.fatal is None


def test_an_intake_goes_on_while_another_thread_writes_through_the_servers_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(another_thread_writes, tmp_path, monkeypatch)


async def another_thread_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 47: benchmarks/competition.py added authors through the server's ledger from its own
    thread; the intake's next step, made by the server's ledger thread meanwhile, failed ("cannot
    start a transaction within a transaction"), which stopped the server's intakes with the
    submission left building for good. It now waits for the other thread's transaction."""
    gates = Gates()
    async with running(tmp_path, monkeypatch, gates) as (server, comp, ada):
        gates.close("1")
        sub = await server.submit(ada, bundle("1"))
        await until(lambda: gates.started == ["1"])
        inside, release = threading.Event(), threading.Event()

        def another_thread() -> None:
            with comp.ledger.transaction():
                comp.conn.execute(
                    "INSERT INTO authors (competition_id, name, token_hash, created_at) "
                    "VALUES (?, 'bob', 'hash', 'now')",
                    (server.cid,),
                )
                inside.set()
                release.wait(TIMEOUT)

        thread = threading.Thread(target=another_thread)
        thread.start()
        assert await asyncio.to_thread(inside.wait, TIMEOUT)
        gates.open("1")  # the intake's next step is written while the other transaction is open
        await asyncio.sleep(0.3)
        release.set()
        await asyncio.to_thread(thread.join, TIMEOUT)
        await until(lambda: comp.submission(sub.id).status == store.ACTIVE, lambda: server.fatal)
        assert server.fatal is None
        assert [a.name for a in comp.authors(server.cid)] == ["ada", "bob"]


def test_a_refresh_applies_what_changed_in_the_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(refresh_applies_changes, tmp_path, monkeypatch)


async def refresh_applies_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 47: a refresh reads only what changed since the last (an organiser's suspension from
    another process, a game rated) and applies it to the pool and the entrants in play."""
    async with running(tmp_path, monkeypatch, Gates()) as (server, comp, ada):
        comp.add_author(server.cid, "bob")
        bob = comp.authors(server.cid)[1]
        one = await server.submit(ada, bundle("1"))
        two = await server.submit(bob, bundle("1", name="c"))
        for sub in (one, two):
            await until(lambda sub=sub: comp.submission(sub.id).status == store.ACTIVE)
        await until(lambda: not server._tasks)
        ids = {s.bot: comp.submission(s.id).entrant_id for s in (one, two)}
        a, c = ids["b"], ids["c"]
        assert a is not None and c is not None
        assert a in server.pool and c in server.pool
        organiser = Ledger(tmp_path / "ledger.sqlite")
        store.Competitions(organiser).set_status(one.id, store.SUSPENDED, "by the organiser")
        await server._refresh()
        assert a not in server.pool and a not in server.entries
        store.Competitions(organiser).set_status(one.id, store.ACTIVE, "", when=(store.SUSPENDED,))
        organiser.close()
        await server._refresh()
        assert a in server.pool and server.entries[a].submission.status == store.ACTIVE
        game = ScheduledGame("c000000000-s0", 0, 0, 0, 0, 0, 1, (("b",), ("c",)), ("b", "c"))
        server.ledger.plan(server.cid, [game])
        result = {"sides": [[0], [1]], "ranking": [0, 1], "scores": [1000, 500]}
        record = {"games": [{"outcome": "normal", "detail": "", "culprit": -1, "result": result}]}
        server.ledger.record_game(
            server.cid, "two-handed", game, {"b": a, "c": c}, FinishedGame.from_data(record)
        )
        await server._refresh()
        winner, loser = server.pool.get(a), server.pool.get(c)
        assert winner is not None and loser is not None
        assert winner.mu > 25.0 > loser.mu and winner.games == loser.games == 1
        assert winner.last == loser.last == 0


BUILD_TWICE = """
import asyncio, sys
from pathlib import Path
from arena.bots.limits import Limits
from arena.competition import intake
from arena.competition.bundles import Manifest

work = Path(sys.argv[1])
print("ready", flush=True)
for attempt in ("first", "second"):
    source = work / attempt
    (source / "lib").mkdir(parents=True)
    (source / "lib" / "bot.py").write_text(attempt)
    manifest = Manifest("b", "1", "python", "{python} lib/bot.py")
    outcome = asyncio.run(intake.build(manifest, source, work / "built", Limits(), 10))
    print(attempt, outcome.ok, (work / "built" / "lib" / "bot.py").read_text(), flush=True)
"""


def test_a_server_not_run_as_root_builds_again_over_a_read_only_build(tmp_path: Path) -> None:
    """A build is made read-only, its folders too; a failed version submitted again, or an intake
    resumed after a stop, builds into the same folder. A server that is not root cannot remove the
    entries of a folder it cannot write: the old build stayed and the copy of the new one failed
    ('File exists'). Built twice here by a uid that is not root (nobody's, when the tests run as
    root), the second build replaces the first and is read-only in its turn."""
    command = [sys.executable, "-c", textwrap.dedent(BUILD_TWICE)]
    work = tmp_path
    if os.getuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("setpriv is needed to build as a uid that is not root")
        command = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *command]
        work = Path(tempfile.mkdtemp(prefix="arena-intake-"))  # where that uid can reach
        os.chown(work, NOBODY, NOBODY)
    try:
        done = subprocess.run(
            [*command, str(work)],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )
        if "ready" not in done.stdout:
            pytest.skip(f"the arena cannot be imported as uid {NOBODY} here: {done.stderr}")
        assert done.returncode == 0, done.stderr
        assert done.stdout.split("\n")[1:3] == ["first True first", "second True second"]
        assert not (work / "built").stat().st_mode & 0o222, "the new build is read-only"
        assert not (work / "built" / "lib").stat().st_mode & 0o222
    finally:
        if work != tmp_path:
            shutil.rmtree(work)  # as root: whatever the modes
        else:
            intake._remove(work / "built")


def test_a_refusal_reaches_the_author_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(refusal_whole, tmp_path, monkeypatch)


async def refusal_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ledger's message loses only the ledger's path, never what follows a colon of its own."""
    async with running(tmp_path, monkeypatch, Gates()) as (server, comp, ada):
        await server.submit(ada, bundle("1"))
        again = "b version 1 was submitted already: give a new version"
        with pytest.raises(SubmissionError) as info:
            await server.submit(ada, bundle("1", extra=b"# changed\n"))
        assert str(info.value) == again
        with pytest.raises(SubmissionError) as info:
            await server.register_remote(ada, "b", "1", "python")
        assert str(info.value) == again

        def locked(*args: object, **kwargs: object) -> None:
            raise LedgerError(f"{comp.path}: the database is locked by another program (busy)")

        monkeypatch.setattr(server.store, "submit", locked)
        with pytest.raises(SubmissionError) as info:
            await server.submit(ada, bundle("2"))
        assert str(info.value) == "the database is locked by another program (busy)"


def test_a_builds_links_are_not_followed_when_it_is_made_read_only(tmp_path: Path) -> None:
    """A build may leave links to anywhere: to '..' (the builds' folder) or to a file of the
    server's (its ledger). Making the build read-only left them alone; followed, they took the write
    bits off their targets, and a server that is not root could build nothing more."""
    source, built = tmp_path / "source", tmp_path / "builds" / "1"
    source.mkdir()
    (source / "bot.py").write_text("pass\n")
    ledger = tmp_path / "ledger.sqlite"
    ledger.write_text("")
    links = f"import os; os.symlink({str(ledger)!r}, 'ledger'); os.symlink('..', 'builds')"
    manifest = bundles.Manifest("b", "1", "python", "{python} bot.py", f'{{python}} -c "{links}"')
    outcome = asyncio.run(intake.build(manifest, source, built, Limits(sandbox="none"), 30))
    assert outcome.ok, outcome.log
    assert (built / "ledger").is_symlink() and (built / "builds").is_symlink()
    assert ledger.stat().st_mode & 0o200, "the ledger stays writable"
    assert (tmp_path / "builds").stat().st_mode & 0o200, "the builds' folder stays writable"
    assert not built.stat().st_mode & 0o222 and not (built / "bot.py").stat().st_mode & 0o222
    intake._remove(built)


def test_a_run_line_naming_a_link_out_of_the_build_is_refused(tmp_path: Path) -> None:
    # A build may leave links; one to '..' named by the run line showed the bot the folder of every
    # build and the ledger beside it (the sandbox binds what a link leads to).
    built = tmp_path / "builds" / "1"
    built.mkdir(parents=True)
    (built / "bot.py").write_text("pass\n")
    (built / "escape").symlink_to("..")
    (built / "inside").symlink_to("bot.py")
    manifest = bundles.Manifest("b", "1", "python", "{python} bot.py escape")
    with pytest.raises(bundles.BundleError, match="leads outside the bot's folder"):
        intake.runtime_command(manifest, built)
    ok = bundles.Manifest("b", "1", "python", "{python} bot.py inside .")
    words = shlex.split(intake.runtime_command(ok, built))
    assert words == ["{python}", str(built / "bot.py"), str(built / "inside"), str(built)]


class LinkingGates(Gates):
    """A build that leaves a link to the folder of every build."""

    async def build(
        self, manifest: bundles.Manifest, source: Path, into: Path, limits: Limits, seconds: int
    ) -> intake.IntakeResult:
        into.mkdir(parents=True)
        (into / "bot.py").write_text("pass\n")
        (into / "escape").symlink_to("..")
        return intake.IntakeResult(True, "", "built")


def test_a_submission_whose_run_line_leads_out_of_its_build_fails_and_nothing_is_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(leads_out, tmp_path, monkeypatch)


async def leads_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gates = LinkingGates()
    async with running(tmp_path, monkeypatch, gates) as (server, comp, ada):
        # Whatever a bot's command names, the ledger and the submitted bundles stay hidden.
        assert {(tmp_path / "ledger.sqlite").resolve(), server.bundles.root.resolve()} <= set(
            server.manager.hidden
        )
        # ... and no word of it is looked up in the folder the server runs in (see below).
        assert server.manager.resolve_from is None
        sub = await server.submit(ada, bundle("1", run="{python} bot.py escape"))
        await until(lambda: not server._tasks)
        now = comp.submission(sub.id)
        assert now.status == store.FAILED
        assert "'escape' leads outside the bot's folder" in now.reason
        assert now.entrant_id is None and not server.entries


DENSE = "for i in range(12):\n    with open(f'f{i}', 'wb') as f:\n        for _ in range(16):\n            f.write(bytes(1 << 20))"
SPARSE = "for i in range(12):\n    with open(f'f{i}', 'wb') as f:\n        f.truncate(16 << 20)"


def on_disk(folder: Path) -> tuple[int, int]:
    """(bytes the files say they hold, bytes they take) under ``folder``, links not followed."""
    found = [p.lstat() for p in folder.rglob("*")]
    return sum(s.st_size for s in found), sum(s.st_blocks * 512 for s in found)


def fill(code: str) -> str:
    """A build command that runs ``code`` (its newlines escaped for the manifest's one line)."""
    return '{python} -c "exec(' + repr(code).replace('"', '\\"') + ')"'


def test_a_build_takes_no_more_of_the_disk_than_disk_mb(tmp_path: Path) -> None:
    """With disk_mb = 64 and file_size_mb = 16, a build wrote twelve files of 16 MiB (192 MiB) into
    its folder on the machine's disk: the size limit bounds each file, nothing bounded the total.
    Isolated, a build now works in a tmpfs of disk_mb, and only what fits comes back: twelve dense
    files fill it and fail the build, twelve sparse ones (no space in the tmpfs, 192 MiB once copied)
    are refused before they are copied; each reason names disk_mb. A normal build still works, and the
    bot runs from it (the conformance check passes)."""
    if not probe("required").isolated:
        pytest.skip("bubblewrap isolation is unavailable here")
    limits = Limits(disk_mb=64, file_size_mb=16, sandbox="required")
    source, built = tmp_path / "source", tmp_path / "builds" / "1"
    source.mkdir()
    shutil.copy(EXAMPLE / "bot.py", source / "bot.py")
    for name, code in (("dense", DENSE), ("sparse", SPARSE)):
        manifest = bundles.Manifest("b", "1", "python", "{python} bot.py", fill(code))
        outcome = asyncio.run(intake.build(manifest, source, built, limits, 60))
        assert not outcome.ok, name
        assert "64 MiB (disk_mb)" in outcome.reason, (name, outcome.log)
        size, taken = on_disk(built)
        assert size <= 64 << 20 and taken <= 64 << 20, (name, size, taken)
    manifest = bundles.Manifest(
        "b", "1", "python", "{python} bot.py", "{python} -m compileall -q ."
    )
    outcome = asyncio.run(intake.build(manifest, source, built, limits, 60))
    assert outcome.ok, outcome.log
    assert [p.name for p in (built / "__pycache__").iterdir()] == [
        f"bot.{sys.implementation.cache_tag}.pyc"
    ]
    assert not (built / "bot.py").stat().st_mode & 0o222, "the build is read-only"
    command = intake.runtime_command(manifest, built)
    checked = asyncio.run(intake.check(command, "two-handed", limits, 120))
    assert checked.ok, checked.log
    intake._remove(built)


def test_a_build_whose_result_is_over_disk_mb_is_refused_in_light_mode_too(tmp_path: Path) -> None:
    """Unconfined, a build's writes are not bounded as they are made; its result is measured after
    the fact, as the sandbox counts it, and refused when over disk_mb."""
    source, built = tmp_path / "source", tmp_path / "builds" / "1"
    source.mkdir()
    (source / "bot.py").write_text("pass\n")
    manifest = bundles.Manifest("b", "1", "python", "{python} bot.py", fill(SPARSE))
    outcome = asyncio.run(
        intake.build(manifest, source, built, Limits(disk_mb=64, sandbox="none"), 30)
    )
    assert not outcome.ok
    assert (
        outcome.reason
        == "the build left 192.0 MiB in its folder, over its limit of 64 MiB (disk_mb)"
    )
    intake._remove(built)


def test_a_failed_builds_reason_is_its_last_line_made_printable_and_cut_short(
    tmp_path: Path,
) -> None:
    """A failed build's reason is the last line of its output, which its author wrote: it kept the
    escape sequences (a terminal title, a clipboard write) of a last line printed without a line
    break, for every reader of the reason, and a line of any length."""
    if not probe("required").isolated:
        pytest.skip("bubblewrap isolation is unavailable here")
    source, built = tmp_path / "source", tmp_path / "builds" / "1"
    source.mkdir()
    (source / "bot.py").write_text("pass\n")
    (source / "build.py").write_text(
        "import sys\n"
        "sys.stdout.write('ok\\n\\x1b]0;pwned\\x07\\x1b[32mfailed ' + 'x' * 400)\n"
        "sys.exit(3)\n"
    )
    manifest = bundles.Manifest("b", "1", "python", "{python} bot.py", "{python} build.py")
    limits = Limits(sandbox="required")
    outcome = asyncio.run(intake.build(manifest, source, built, limits, 60))
    assert not outcome.ok
    assert outcome.reason.startswith("\ufffd]0;pwned\ufffd\ufffd[32mfailed xxx"), outcome.log
    assert outcome.reason.isprintable()
    assert len(outcome.reason) == intake.MAX_REASON + len("...")
    assert "\x1b]0;pwned" in outcome.log  # the log keeps what the build wrote
    intake._remove(built)


NAMER = """\
import sys
for word in sys.argv[1:]:
    try:
        with open(word) as f:
            print("read", word, f.read(), file=sys.stderr)
    except OSError as exc:
        print("cannot read", word, type(exc).__name__, file=sys.stderr)
sys.exit(3)
"""


@pytest.mark.parametrize("sandbox", ["auto", "none"])
def test_a_submitted_command_never_names_a_file_of_the_servers_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: str
) -> None:
    """A red-team finding: ``run = "{python} bot.py competition.sqlite"`` named the ledger in the
    folder the server runs in (a word not in the bundle was made absolute there, and the sandbox
    shows what a command names), and the check's log carried the deal secret back to its author.
    A submitted command's words are resolved within its build only, in the check, the build step
    and play; a word of the server's folder stays a word the bot cannot open."""
    served = tmp_path / "server"
    served.mkdir()
    (served / "competition.sqlite").write_text("THE-DEAL-SECRET")
    monkeypatch.chdir(served)
    built = tmp_path / "builds" / "1"
    built.mkdir(parents=True)
    (built / "bot.py").write_text(NAMER)
    manifest = bundles.Manifest("b", "1", "python", "{python} bot.py competition.sqlite", "")
    command = intake.runtime_command(manifest, built)
    checked = asyncio.run(intake.check(command, "two-handed", Limits(sandbox=sandbox), 120))
    assert not checked.ok
    assert "cannot read competition.sqlite FileNotFoundError" in checked.log, checked.log
    assert "THE-DEAL-SECRET" not in checked.log
    # The build step too: its command is resolved within the bundle only.
    copy = tmp_path / "builds" / "2"
    manifest = bundles.Manifest(
        "b", "1", "python", "{python} bot.py", "{python} bot.py competition.sqlite"
    )
    built_out = asyncio.run(intake.build(manifest, built, copy, Limits(sandbox=sandbox), 60))
    assert "THE-DEAL-SECRET" not in built_out.log
    assert "cannot read competition.sqlite" in built_out.log, built_out.log


TELLER = """\
import sys
print("I am", __file__, "in", sys.argv[1], file=sys.stderr)
sys.exit(3)
"""


class TellingGates(Gates):
    """A build that leaves a bot which says where it is, and a real conformance check."""

    async def build(
        self, manifest: bundles.Manifest, source: Path, into: Path, limits: Limits, seconds: int
    ) -> intake.IntakeResult:
        into.mkdir(parents=True)
        (into / "bot.py").write_text(TELLER)
        return intake.IntakeResult(True, "", f"built in {into}")

    check = staticmethod(intake.check)


def test_the_log_an_author_reads_names_no_path_of_the_servers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(no_server_paths, tmp_path, monkeypatch)


async def no_server_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check's log read 'bot command: '{python}' <the server's data folder>/builds/10/bot.py':
    it names the manifest's run line now, and a path of the build (a traceback's, the bot's output)
    its path within the bundle."""
    async with running(tmp_path, monkeypatch, TellingGates()) as (server, comp, ada):
        sub = await server.submit(ada, bundle("1", run="{python} bot.py ."))
        await until(lambda: not server._tasks)
        now = comp.submission(sub.id)
        assert now.status == store.FAILED, now
        log = comp.log(sub.id)
        assert "bot command: {python} bot.py ." in log, log
        assert "I am bot.py in ." in log, log
        assert "built in ." in log, log
        assert str(tmp_path) not in log + now.reason


class FailingGates(Gates):
    """A build that leaves files in its folder, and fails for the versions in ``fails``."""

    def __init__(self, *fails: str) -> None:
        super().__init__()
        self.fails = set(fails)

    async def build(
        self, manifest: bundles.Manifest, source: Path, into: Path, limits: Limits, seconds: int
    ) -> intake.IntakeResult:
        await super().build(manifest, source, into, limits, seconds)
        into.mkdir(parents=True)
        (into / "bot.py").write_bytes(bytes(1 << 20))
        if manifest.version in self.fails:
            return intake.IntakeResult(
                False, "no compiler here", f"building {manifest.version}\nno compiler here"
            )
        return intake.IntakeResult(True, "", "built")


def test_a_failed_submission_leaves_no_files_but_its_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(failed_leaves_no_files, tmp_path, monkeypatch)


async def failed_leaves_no_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 96 KB upload unpacked to 99 MB of zeros, built, failed, and its bundle (archive and folder)
    and build stayed for ever. A submission that does not enter play leaves its log in the ledger
    and nothing on the disk; one in play keeps its build; a bundle refused after unpacking (a
    version submitted already) is not kept either."""
    gates = FailingGates("2")
    async with running(tmp_path, monkeypatch, gates) as (server, comp, ada):
        one = await server.submit(ada, bundle("1"))
        two = await server.submit(ada, bundle("2"))
        await until(lambda: not server._tasks)
        assert comp.submission(one.id).status == store.ACTIVE
        failed = comp.submission(two.id)
        assert (failed.status, failed.reason) == (store.FAILED, "no compiler here")
        assert comp.log(two.id) == "building 2\nno compiler here"
        root = server.bundles.root
        assert not (server.builds / str(two.id)).exists()
        assert (
            not (root / failed.bundle).exists() and not (root / f"{failed.bundle}.tar.gz").exists()
        )
        assert (server.builds / str(one.id) / "bot.py").is_file(), "in play: kept"
        assert sorted(p.name for p in root.iterdir()) == sorted(
            [one.bundle, f"{one.bundle}.tar.gz"]
        ), "no work folder left either"
        with pytest.raises(SubmissionError, match="submitted already"):
            await server.submit(ada, bundle("1", extra=b"# changed\n"))
        assert sorted(p.name for p in root.iterdir()) == sorted(
            [one.bundle, f"{one.bundle}.tar.gz"]
        )
        # The failed version, fixed and submitted again, is built afresh from a bundle unpacked anew.
        gates.fails.clear()
        again = await server.submit(ada, bundle("2"))
        assert again.id == two.id
        await until(lambda: comp.submission(two.id).status == store.ACTIVE)
        assert (server.builds / str(two.id) / "bot.py").is_file()


def test_a_version_out_of_play_leaves_no_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(out_of_play_leaves_no_files, tmp_path, monkeypatch)


async def out_of_play_leaves_no_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each new version that entered play replaced the last, whose build (240 MB of a build's
    output) and bundle stayed on the disk for ever: fifty versions a day filled it. A version
    replaced or withdrawn leaves its log in the ledger and nothing on the disk, once no game runs
    it; a suspended one, which may come back, keeps its files; a game under way keeps its
    entrants' builds until it ends."""
    async with running(tmp_path, monkeypatch, FailingGates()) as (server, comp, ada):
        root = server.bundles.root
        one = await server.submit(ada, bundle("1"))
        await until(lambda: comp.submission(one.id).status == store.ACTIVE)
        two = await server.submit(ada, bundle("2"))
        await until(lambda: comp.submission(two.id).status == store.ACTIVE)
        assert comp.submission(one.id).status == store.REPLACED
        await server._refresh()
        assert not (server.builds / str(one.id)).exists()
        assert sorted(p.name for p in root.iterdir()) == sorted(
            [two.bundle, f"{two.bundle}.tar.gz"]
        )
        assert (server.builds / str(two.id) / "bot.py").is_file(), "in play: kept"
        comp.set_status(two.id, store.SUSPENDED, "suspended: testing")
        await server._refresh()
        assert (server.builds / str(two.id) / "bot.py").is_file(), "suspended: kept"
        comp.set_status(two.id, store.ACTIVE, "")
        server.disk.build_users[two.id] += 1  # a game of it under way
        assert await server.withdraw(ada, "b") == 1
        await server._refresh()
        assert (server.builds / str(two.id) / "bot.py").is_file(), "its game goes on"
        server.disk.build_users[two.id] -= 1
        await server._refresh()
        assert not (server.builds / str(two.id)).exists()
        assert not [p.name for p in root.iterdir()]


def test_a_refresh_returns_only_once_what_it_removes_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(refresh_waits_for_removals, tmp_path, monkeypatch)


async def refresh_waits_for_removals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Of two refreshes at once, the second found a bundle the first had taken off its list but was
    still removing, passed it by and returned while its folder was still there: the likely cause
    of the test above failing once in a full run. A removal is slow here: the second waits for it."""
    async with running(tmp_path, monkeypatch, Gates()) as (server, _, _):
        root = server.bundles.root
        left = root / ("ab" * 32)
        (left / "files").mkdir(parents=True)
        (root / f"{left.name}.tar.gz").write_bytes(b"")
        removing = asyncio.Event()
        real = shutil.rmtree

        def slow(path: Path, ignore_errors: bool = False) -> None:
            removing.set()
            time.sleep(0.5)
            real(path, ignore_errors)

        monkeypatch.setattr(shutil, "rmtree", slow)
        first = asyncio.create_task(server.disk.clear([]))
        await removing.wait()
        await server.disk.clear([])
        assert [p.name for p in root.iterdir()] == []
        await first


@pytest.mark.parametrize(
    ("shown", "hinted"),
    [("python bot.py", True), ("python3.11 bot.py", True), ("{python} bot.py", False)],
)
def test_a_failed_check_of_a_bare_python_says_to_run_it_with_the_arenas(
    monkeypatch: pytest.MonkeyPatch, shown: str, hinted: bool
) -> None:
    """In the sandbox a bare python is whatever PATH finds there: a version manager's shim failed
    with its own "No such file or directory", and nothing told the author why."""
    from arena.play.conformance import Mistake, Report

    async def failing(command: str, variant: str, **_: object) -> Report:
        return Report(command, mistakes=[Mistake("crash", "", "the bot never connected")])

    monkeypatch.setattr(intake, "check_bot", failing)
    outcome = asyncio.run(intake.check("/resolved/cmd", "two-handed", Limits(), 60, shown=shown))
    hint = "a Python bot runs as '{python} FILE'"
    assert not outcome.ok
    assert (hint in outcome.reason, hint in outcome.log) == (hinted, hinted)
    assert outcome.reason.startswith("the conformance check found 1 mistake(s): crash")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        # A competition's clock with a bank: the check has it too (a JVM's first decisions on a busy
        # server drew on it; with none the check timed them out).
        (TimeControl(budget_ms=5000, bank_ms=60_000, grace_ms=1000), (5000, 1000, 60_000)),
        # Never stricter than arena check-bot's own clock.
        (TimeControl(budget_ms=500, bank_ms=10_000, grace_ms=50), (2000, 100, 10_000)),
        # No competition's clock: arena check-bot's.
        (None, (2000, 100, 0)),
    ],
)
def test_the_check_plays_by_the_competitions_clock_never_a_stricter_one(
    monkeypatch: pytest.MonkeyPatch,
    given: TimeControl | None,
    expected: tuple[int, int, int],
) -> None:
    seen: list[tuple[int, int, int]] = []

    async def fake_check_bot(command: str, variant: str, **kw: object) -> object:
        seen.append((int(kw["budget_ms"]), int(kw["grace_ms"]), int(kw["bank_ms"])))  # type: ignore[call-overload]
        raise TimeoutError  # enough: the clock it was given is what this test reads

    monkeypatch.setattr(intake, "check_bot", fake_check_bot)
    result = asyncio.run(intake.check("./bot", "two-handed", Limits(), 60, time_control=given))
    assert not result.ok
    assert seen == [expected]

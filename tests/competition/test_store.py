"""A competition's records in the ledger (issue 15): tokens stored hashed, a bot's name owned by its
author, each version submitted once, a new version replacing the old one in play while its games and
rating history stay, error counts for suspension, pausing, and planned games forgotten after a crash."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli.main import app
from arena.competition import intake
from arena.competition.bundles import Manifest
from arena.competition.spec import CompetitionFileError, load, parse
from arena.ledger import Ledger, LedgerError
from arena.ledger.competitions import (
    ACTIVE,
    BUILDING,
    CHECKING,
    FAILED,
    MAX_REASON,
    REPLACED,
    SUSPENDED,
    WITHDRAWN,
    Competitions,
    Marks,
    hash_token,
)
from arena.ledger.rows import FinishedGame, ScheduledGame


@pytest.fixture
def comp(tmp_path: Path) -> tuple[Ledger, Competitions, int]:
    led = Ledger(tmp_path / "l.sqlite")
    entry = led.register(parse({"name": "Ladder"}, "c.toml"), kind="competition")
    return led, Competitions(led), entry.id


def test_authors_tokens_are_kept_hashed(comp: tuple[Ledger, Competitions, int]) -> None:
    led, store, cid = comp
    token = store.add_author(cid, "ada")
    assert len(token) >= 32
    dumped = "\n".join(led.conn.iterdump())
    assert token not in dumped and hash_token(token) in dumped
    author = store.author_of(cid, token)
    assert author is not None and author.name == "ada"
    assert store.author_of(cid, token + "x") is None
    with pytest.raises(LedgerError, match="already an author named 'ada'"):
        store.add_author(cid, "ada")
    for bad in ("", " ", "x" * 65, "a\nb", "red \x1b[31mtext", "tab\there"):
        with pytest.raises(LedgerError, match="an author's name is 1-64 printable characters"):
            store.add_author(cid, bad)
    assert store.author_of(cid, store.add_author(cid, "Ada Lovelace")) is not None


def test_a_bot_belongs_to_its_author_and_a_version_is_submitted_once(
    comp: tuple[Ledger, Competitions, int],
) -> None:
    _, store, cid = comp
    ada = store.author_of(cid, store.add_author(cid, "ada"))
    bob = store.author_of(cid, store.add_author(cid, "bob"))
    assert ada and bob
    store.submit(cid, ada.id, "smart", "1", "python", bundle="a" * 64, run="{python} bot.py")
    with pytest.raises(LedgerError, match="belongs to another author \\(ada\\)"):
        store.submit(cid, bob.id, "smart", "2", "python", bundle="b" * 64, run="x")
    with pytest.raises(LedgerError, match="version 1 was submitted already"):
        store.submit(cid, ada.id, "smart", "1", "python", bundle="c" * 64, run="x")


def test_a_new_version_replaces_the_old_in_play(comp: tuple[Ledger, Competitions, int]) -> None:
    _, store, cid = comp
    ada = store.author_of(cid, store.add_author(cid, "ada"))
    assert ada
    one, _ = store.submit(
        cid, ada.id, "smart", "1", "python", bundle="a" * 64, run="r", build="make"
    )
    assert store.submission(one).status == BUILDING
    e1 = store.activate(one, "bundle:aaaa:r")
    two, _ = store.submit(
        cid, ada.id, "smart", "2", "python", bundle="b" * 64, run="r", build="make"
    )
    store.set_status(two, FAILED, "the build failed", log="error: ...")
    assert store.submission(one).status == ACTIVE, "a failed version replaces nothing"
    three, _ = store.submit(
        cid, ada.id, "smart", "3", "python", bundle="c" * 64, run="r", build="make"
    )
    e3 = store.activate(three, "bundle:cccc:r")
    assert e3 != e1
    assert [s.status for s in store.submissions(cid)] == [REPLACED, FAILED, ACTIVE]
    assert store.log(two) == "error: ..."


def test_a_remote_entrant_gets_a_token(comp: tuple[Ledger, Competitions, int]) -> None:
    _, store, cid = comp
    ada = store.author_of(cid, store.add_author(cid, "ada"))
    assert ada
    sid, token = store.submit(cid, ada.id, "far", "1", "rust")
    assert token and store.submission(sid).status == CHECKING
    found = store.remote_submission(cid, token)
    assert found is not None and found.id == sid and found.kind == "remote"
    assert store.remote_submission(cid, "nope") is None


def test_logs_are_capped(comp: tuple[Ledger, Competitions, int]) -> None:
    _, store, cid = comp
    ada = store.author_of(cid, store.add_author(cid, "ada"))
    assert ada
    sid, _ = store.submit(
        cid, ada.id, "noisy", "1", "python", bundle="a" * 64, run="r", build="make"
    )
    store.set_status(sid, FAILED, "x" * 10_000, log="y" * 1_000_000)
    assert len(store.log(sid)) < 70_000
    assert len(store.submission(sid).reason) <= MAX_REASON


def test_pause_switch(comp: tuple[Ledger, Competitions, int]) -> None:
    _, store, cid = comp
    assert store.paused(cid) is False
    store.set_paused(cid, True)
    assert store.paused(cid) is True
    store.set_paused(cid, False)
    assert store.paused(cid) is False


def game(ord_: int, a: str, b: str) -> ScheduledGame:
    return ScheduledGame(f"c{ord_:09d}", ord_, 0, ord_, 0, 0, ord_, ((a,), (b,)), (a, b))


def record(outcome: str = "normal", culprit: int = -1) -> dict[str, object]:
    return {
        "games": [
            {
                "outcome": outcome,
                "detail": "",
                "culprit": culprit,
                "result": {"sides": [[0], [1]], "ranking": [0, 1], "scores": [1000, 500]},
            }
        ]
    }


def test_failures_standings_and_forgotten_plans(comp: tuple[Ledger, Competitions, int]) -> None:
    led, store, cid = comp
    ada = store.author_of(cid, store.add_author(cid, "ada"))
    bob = store.author_of(cid, store.add_author(cid, "bob"))
    assert ada and bob
    a, _ = store.submit(cid, ada.id, "a", "1", "python", bundle="a" * 64, run="r", build="make")
    b, _ = store.submit(cid, bob.id, "b", "1", "python", bundle="b" * 64, run="r", build="make")
    ids = {"a": store.activate(a, "bundle:a"), "b": store.activate(b, "bundle:b")}
    games = [game(i, "a", "b") for i in range(4)]
    led.plan(cid, games)
    assert store.next_ord(cid) == 4
    led.record_game(cid, "two-handed", games[0], ids, FinishedGame.from_data(record()))
    led.record_game(
        cid, "two-handed", games[2], ids, FinishedGame.from_data(record("crash", culprit=1))
    )
    assert store.failures(cid, ids["b"], 10) == (1, 2)
    assert store.failures(cid, ids["a"], 10) == (0, 2)
    standings = store.standings(cid)
    assert standings[ids["a"]][2] == 1, "game 2 waits for game 1 to be rated"
    # The server stopped with games 1 and 3 unplayed: forgotten, the rest is rated.
    assert store.unplan_unplayed(cid) == 2
    standings = store.standings(cid)
    assert standings[ids["a"]][2] == 2 and standings[ids["a"]][3] == 2
    assert [b.kind for b in led.boards()] == ["competition"], "no pooled board for a competition"
    assert led.rebuild_ratings() == 0.0
    # arena leaderboard shows the competition's board by its name, and says why nothing is pooled.
    assert [r.entrant for r in led.leaderboard(tournament="Ladder")] == ["a", "b"]
    for args, shown in (
        ([], "Leaderboard: Ladder"),
        (["--tournament", "Ladder"], "Leaderboard: Ladder"),
        (["--pooled"], "a standing competition's games count on its own board only"),
    ):
        result = CliRunner().invoke(app, ["leaderboard", "--ledger", led.path, *args])
        assert result.exit_code == 0 and shown in result.output, result.output
        if "--pooled" not in args:
            assert result.output.index("│ a ") < result.output.index("│ b "), result.output


def test_the_rest_of_a_pairing_begun_stays_planned(comp: tuple[Ledger, Competitions, int]) -> None:
    """A stop between the seat rotations of a pairing's deal: the rotation left stays planned, with
    the entrants that played the first, while a pairing of which nothing was played is forgotten."""
    led, store, cid = comp
    ada = store.author_of(cid, store.add_author(cid, "ada"))
    assert ada
    a, _ = store.submit(cid, ada.id, "a", "1", "python", bundle="a" * 64, run="r", build="make")
    b, _ = store.submit(cid, ada.id, "b", "1", "python", bundle="b" * 64, run="r", build="make")
    ids = {"a": store.activate(a, "bundle:a"), "b": store.activate(b, "bundle:b")}
    begun = [
        ScheduledGame(f"c{r:09d}-s{r}", r, 0, 0, 0, r, 7, (("ab"[r],), ("ba"[r],)), ("a", "b"))
        for r in range(2)
    ]
    fresh = ScheduledGame("c000000002-s0", 2, 0, 2, 0, 0, 8, (("a",), ("b",)), ("a", "b"))
    led.plan(cid, [*begun, fresh])
    led.record_game(cid, "two-handed", begun[0], ids, FinishedGame.from_data(record()))
    assert store.unplan_unplayed(cid, keep_begun=True) == 1  # the fresh pairing
    assert store.begun_pairings(cid) == [([begun[1]], ids)]
    assert store.next_ord(cid) == 2
    assert store.unplan_unplayed(cid, (begun[1].key,)) == 1  # given by key: forgotten
    assert store.begun_pairings(cid) == []
    assert store.standings(cid)[ids["a"]][2] == 1


def test_a_competition_changed_in_ways_that_change_its_games_is_refused(
    comp: tuple[Ledger, Competitions, int],
) -> None:
    led, _, _ = comp
    changed = parse({"name": "Ladder", "time_control": {"budget_ms": 1234}}, "c.toml")
    with pytest.raises(LedgerError) as info:
        led.register(changed, kind="competition")
    assert "time_control.budget_ms changed" in str(info.value)
    assert "give the competition a new name in the file" in str(info.value)
    assert "arena run" not in str(info.value)  # a competition is served, not run


def test_a_competition_and_a_tournament_cannot_share_a_name(
    comp: tuple[Ledger, Competitions, int],
) -> None:
    from arena.tournament.spec import parse as parse_tournament

    led, _, _ = comp
    spec = parse_tournament(
        {
            "name": "Ladder",
            "entrants": [{"name": "x", "command": "c"}, {"name": "y", "command": "c"}],
        }
    )
    with pytest.raises(LedgerError, match="name of a competition"):
        led.register(spec)


def test_a_failed_version_may_be_submitted_again(comp: tuple[Ledger, Competitions, int]) -> None:
    """A version that failed its build or check never played: fixed, it comes back under the same
    number; a version that played never does."""
    _, store, cid = comp
    ada = store.author_of(cid, store.add_author(cid, "ada"))
    assert ada
    sid, _ = store.submit(cid, ada.id, "b", "1", "python", bundle="a" * 64, run="r", build="make")
    store.set_status(sid, FAILED, "the build failed", log="boom")
    again, _ = store.submit(
        cid, ada.id, "b", "1", "python", bundle="c" * 64, run="r2", build="make"
    )
    assert again == sid
    sub = store.submission(sid)
    assert (sub.status, sub.bundle, sub.run, sub.reason) == (BUILDING, "c" * 64, "r2", "")
    assert store.log(sid) == ""
    store.activate(sid, "bundle:c")
    with pytest.raises(LedgerError, match="submitted already"):
        store.submit(cid, ada.id, "b", "1", "python", bundle="d" * 64, run="r", build="make")


def test_matches_per_process_is_read_and_checked() -> None:
    assert parse({"name": "L"}).matchmaking.matches_per_process == 1
    # The shipped example leaves it at 1: reuse asks every submitted bot to read on after MatchOver.
    shipped = load(Path(__file__).resolve().parents[2] / "competitions" / "example.toml")
    assert shipped.matchmaking.matches_per_process == 1
    spec = parse({"name": "L", "matchmaking": {"matches_per_process": 8}})
    assert spec.matchmaking.matches_per_process == 8
    for bad in (0, "many"):
        with pytest.raises(CompetitionFileError, match=r"c\.toml.*matches_per_process"):
            parse({"name": "L", "matchmaking": {"matches_per_process": bad}}, "c.toml")


def test_a_fraction_out_of_bounds_is_told_as_a_number() -> None:
    for bad, bound in ((5, "<= 1.0"), (-1, "> 0.0")):
        with pytest.raises(CompetitionFileError) as info:
            parse({"name": "L", "matchmaking": {"max_error_rate": bad}}, "c.toml")
        assert f"max_error_rate: expected a number {bound}, got {bad}" in str(info.value)


def test_a_step_taken_on_an_old_status_does_not_undo_a_withdrawal(
    comp: tuple[Ledger, Competitions, int],
) -> None:
    """The intake moves a submission on only while it is in intake: a bot withdrawn by its author
    while it was being built stays withdrawn, and never enters play."""
    _, store, cid = comp
    ada = store.author_of(cid, store.add_author(cid, "ada"))
    assert ada
    sid, _ = store.submit(cid, ada.id, "b", "1", "python", bundle="a" * 64, run="r", build="make")
    assert store.set_status(sid, WITHDRAWN, "withdrawn by its author")
    assert not store.set_status(sid, CHECKING, "", "built", when=(BUILDING, CHECKING))
    assert store.activate(sid, "bundle:a") is None
    sub = store.submission(sid)
    assert (sub.status, sub.reason, sub.entrant_id) == (WITHDRAWN, "withdrawn by its author", None)
    assert store.log(sid) == "", "a refused step writes nothing"


def test_the_later_version_stays_in_play_whichever_passes_first(
    comp: tuple[Ledger, Competitions, int],
) -> None:
    """Versions are ordered by submission. An earlier version that passes while a later one is still
    in intake plays until the later one passes; one that passes after a later one entered play (a
    failed version submitted again, fixed) does not replace it."""
    _, store, cid = comp
    ada = store.author_of(cid, store.add_author(cid, "ada"))
    assert ada
    one, _ = store.submit(cid, ada.id, "b", "1", "python", bundle="a" * 64, run="r", build="make")
    two, _ = store.submit(cid, ada.id, "b", "2", "python", bundle="b" * 64, run="r", build="make")
    assert store.activate(one, "bundle:a") is not None
    assert [s.status for s in store.submissions(cid)] == [ACTIVE, BUILDING], "2 goes on"
    assert store.activate(two, "bundle:b") is not None
    assert [s.status for s in store.submissions(cid)] == [REPLACED, ACTIVE]
    # Version 3 fails; version 4 enters play; 3, fixed, is submitted again and passes last.
    three, _ = store.submit(cid, ada.id, "b", "3", "python", bundle="c" * 64, run="r", build="make")
    store.set_status(three, FAILED, "the build failed")
    four, _ = store.submit(cid, ada.id, "b", "4", "python", bundle="d" * 64, run="r", build="make")
    e4 = store.activate(four, "bundle:d")
    store.set_status(four, SUSPENDED, "suspended: too many crashes")
    assert (
        store.submit(cid, ada.id, "b", "3", "python", bundle="e" * 64, run="r", build="make")[0]
        == three
    )
    assert store.activate(three, "bundle:e") is None
    assert [(s.version, s.status, s.reason) for s in store.submissions(cid)] == [
        ("1", REPLACED, "replaced by version 2"),
        ("2", REPLACED, "replaced by version 4"),
        ("3", REPLACED, "replaced by version 4"),
        ("4", SUSPENDED, "suspended: too many crashes"),
    ]
    assert store.submission(four).entrant_id == e4


def test_a_bundles_manifest_is_stored_and_rebuilt_whole(
    comp: tuple[Ledger, Competitions, int],
) -> None:
    """The manifest is flattened into the submission's columns and rebuilt from them in one place
    (competition.intake): every field comes back, the build command too."""
    _, store, cid = comp
    ada = store.author_of(cid, store.add_author(cid, "ada"))
    assert ada is not None
    manifest = Manifest("smart", "1.2", "python", "{python} bot.py --fast", "make all")
    sid, _ = store.submit(cid, ada.id, bundle="a" * 64, **intake.manifest_columns(manifest))
    assert intake.manifest_of(store.submission(sid)) == manifest


def test_a_name_like_another_authors_bot_is_refused(
    comp: tuple[Ledger, Competitions, int],
) -> None:
    """Red team, issue 47 item 7: look-alike names beside another author's ``py-trickster`` were
    accepted. Case, punctuation, digits drawn as letters and Cyrillic look-alikes are folded; the
    owner may still use any of them, and a name that only shares letters is another name."""
    _, store, cid = comp
    ada = store.author_of(cid, store.add_author(cid, "ada"))
    eve = store.author_of(cid, store.add_author(cid, "eve"))
    assert ada and eve
    store.submit(cid, ada.id, "py-trickster", "1", "python", bundle="a" * 64, run="r", build="make")
    for alike in (
        "Py-Trickster", "py-trickster.", "py_trickster", "PY.TRICKSTER", "py-tr1ckster",
        "pytrickster", "py-tricks\u0442er", "\u0440\u0443-trickster", "py-trick5ter",
    ):  # fmt: skip
        with pytest.raises(LedgerError, match=f"'{alike}' is too like 'py-trickster', another "):
            store.submit(cid, eve.id, alike, "1", "python", bundle="b" * 64, run="r", build="make")
    store.submit(
        cid, eve.id, "py-trickster-2", "1", "python", bundle="c" * 64, run="r", build="make"
    )
    store.submit(cid, eve.id, "py-tricks", "1", "python", bundle="d" * 64, run="r", build="make")
    # the owner's own names are not refused for looking like each other
    store.submit(cid, ada.id, "Py_Trickster", "1", "python", bundle="e" * 64, run="r", build="make")
    with pytest.raises(LedgerError, match="'Eve' is too like another author's, 'eve'"):
        store.add_author(cid, "Eve")
    with pytest.raises(LedgerError, match="too like another author's, 'ada'"):
        store.add_author(cid, "\u0430d\u0430")  # Cyrillic a


def test_skeletons_fold_what_a_reader_cannot_tell_apart() -> None:
    from arena.ledger.names import same_name, skeleton

    assert skeleton("Py-Trickster.") == skeleton("py_trickster") == "pytrlckster"
    assert same_name("corn", "com") and same_name(
        "\uff50\uff59\uff0d\uff42\uff4f\uff54", "py-bot"
    )  # rn, full width
    assert same_name("café", "cafe") and same_name(
        "\u03c3\u03bf\u03c6\u03af\u03b1", "\u03c3\u03bf\u03c6\u03b9\u03b1"
    )
    assert not same_name("py-trickster", "py-tricksters")
    assert not same_name("alpha", "alpha2")


def test_changes_are_what_changed_since_the_last_read(
    comp: tuple[Ledger, Competitions, int], tmp_path: Path
) -> None:
    """Issue 47: a competition's server read every live submission and scanned every game of the
    competition at each refresh (8.6 s at a million games). It now reads what changed since its
    last read: the submissions changed (by anyone: another connection here, as the organiser's
    commands are), the entrants rated; the whole board again only when games were voided."""
    led, store, cid = comp
    ada = store.author_of(cid, store.add_author(cid, "ada"))
    bob = store.author_of(cid, store.add_author(cid, "bob"))
    assert ada and bob
    a, _ = store.submit(cid, ada.id, "a", "1", "python", bundle="a" * 64, run="r")
    b, _ = store.submit(cid, bob.id, "b", "1", "python", bundle="b" * 64, run="r")
    failed, _ = store.submit(cid, bob.id, "c", "1", "python", bundle="c" * 64, run="r")
    store.set_status(failed, FAILED, "no")
    first = store.changes(cid, Marks())
    assert first.whole and first.standings == {} and not first.paused
    assert [(s.bot, s.status) for s, _ in first.submissions] == [("a", CHECKING), ("b", CHECKING)]
    assert store.changes(cid, first.marks).submissions == [], "nothing changed since"
    ids = {"a": store.activate(a, "bundle:a"), "b": store.activate(b, "bundle:b")}
    second = store.changes(cid, first.marks)
    assert [(s.bot, s.status) for s, _ in second.submissions] == [("a", ACTIVE), ("b", ACTIVE)]
    games = [game(i, "a", "b") for i in range(3)]
    led.plan(cid, games)
    led.record_game(cid, "two-handed", games[0], ids, FinishedGame.from_data(record()))
    third = store.changes(cid, second.marks)
    assert not third.whole and third.submissions == []
    assert set(third.standings) == {ids["a"], ids["b"]}
    assert third.standings == {e: store.standings(cid)[e] for e in ids.values()}
    assert store.changes(cid, third.marks).standings == {}, "rated once, read once"
    # The organiser suspends b from another process, and pauses.
    other = Ledger(tmp_path / "l.sqlite")
    Competitions(other).set_status(b, SUSPENDED, "by the organiser")
    Competitions(other).set_paused(cid, True)
    other.close()
    fourth = store.changes(cid, third.marks)
    assert fourth.paused
    assert [(s.bot, s.status) for s, _ in fourth.submissions] == [("b", SUSPENDED)]
    # A remote entrant's token hash comes with it.
    r, token = store.submit(cid, ada.id, "r", "1", "remote")
    store.activate(r, "remote:r")
    fifth = store.changes(cid, fourth.marks)
    assert [(s.bot, t) for s, t in fifth.submissions] == [("r", hash_token(token))]
    # A voided game: the whole board is read again.
    led.record_game(cid, "two-handed", games[1], ids, FinishedGame.from_data(record()))
    led.void_games(cid, "test", outcomes=("normal",))
    sixth = store.changes(cid, fifth.marks)
    assert sixth.whole and sixth.standings == store.standings(cid) == {}

"""Tournament summaries count honestly (issue 13): a forfeit is a loss in every column."""

from __future__ import annotations

from typing import Any

from arena.stats import Pentanomial, Trinomial, estimate
from arena.tournament.summary import duplicated, entrant_lines, pairing_lines


def seat(
    game: int,
    seat: int,
    entrant: str,
    place: int,
    score: int,
    outcome: str = "normal",
    culprit: int = -1,
) -> dict[str, Any]:
    return {
        "game_id": game,
        "key": f"g{game}",
        "pairing": 0,
        "deal": game // 2,
        "rotation": game % 2,
        "outcome": outcome,
        "culprit": culprit,
        "seat": seat,
        "side": seat,
        "place": place,
        "score": score,
    } | {"entrant": entrant}


def test_a_pairing_of_forfeits_is_lost_in_every_column() -> None:
    """Four games that 'crash' forfeited, two deals: before, this showed 4-0-0 for the winner, average
    points 0 : 0 and duplicate sets 0-0-2 (tied)."""
    rows = []
    for g in range(4):
        crash_seat = g % 2  # the crashing bot sits in each seat in turn
        rows.append(seat(g, crash_seat, "crash", 1, 0, "crash", crash_seat))
        rows.append(seat(g, 1 - crash_seat, "solid", 0, 0, "crash", crash_seat))
    (line,) = pairing_lines(rows)
    assert (line.a, line.b) == ("crash", "solid")
    assert (line.wins, line.losses, line.draws) == (0, 4, 0)
    assert (line.forfeits_a, line.forfeits_b) == (4, 0)
    assert line.points_a is None and line.points_b is None, "no game was played out"
    assert (line.sets_won, line.sets_lost, line.sets_tied) == (0, 2, 0)
    assert line.score == 0.0 and line.high < 0.5


def test_duplicate_sets_go_by_forfeits_then_wins_then_points() -> None:
    rows = [
        # deal 0: each wins once; 'a' by more points: a's set
        seat(0, 0, "a", 0, 1200), seat(0, 1, "b", 1, 400),
        seat(1, 0, "b", 0, 1100), seat(1, 1, "a", 1, 900),
        # deal 1: 'b' wins a played game, 'b' forfeits the other (a's points there do not count)
        seat(2, 0, "a", 1, 500), seat(2, 1, "b", 0, 1000),
        seat(3, 0, "b", 1, 0, "timeout", 0), seat(3, 1, "a", 0, 0, "timeout", 0),
    ]  # fmt: skip
    (line,) = pairing_lines(rows)
    assert (line.wins, line.losses) == (2, 2)
    # deal 0 by points; deal 1 is lost by the side that forfeited in it, whatever the points say
    assert (line.sets_won, line.sets_lost, line.sets_tied) == (2, 0, 0)
    assert (line.forfeits_a, line.forfeits_b) == (0, 1)
    assert line.points_a == (1200 + 900 + 500) / 3 and line.points_b == (400 + 1100 + 1000) / 3


def test_duplicate_sets_are_shown_only_where_a_deal_was_played_twice() -> None:
    """Without duplicate deals each game was shown as a 'duplicate set' of its own (a newcomer's
    tournament with duplicate = false had the column all the same)."""
    twice = [seat(g, s, name, s, 100) for g in range(2) for s, name in enumerate(("a", "b"))]
    once = [seat(g, s, name, s, 100) | {"deal": g} for g in range(2) for s, name in enumerate("ab")]
    assert duplicated(pairing_lines(twice))
    assert not duplicated(pairing_lines(once))


def test_entrant_lines_count_forfeits_and_average_played_games_only() -> None:
    rows = [
        seat(0, 0, "x", 0, 2000), seat(0, 1, "y", 1, 800), seat(0, 2, "z", 2, 500),
        seat(1, 0, "y", 0, 0, "crash", 2), seat(1, 1, "x", 0, 0, "crash", 2),
        seat(1, 2, "z", 1, 0, "crash", 2),
    ]  # fmt: skip
    lines = {e.entrant: e for e in entrant_lines(rows)}
    assert lines["z"].forfeits == 1 and lines["x"].forfeits == 0
    assert lines["z"].average_score == 500
    assert lines["x"].firsts == 1.5


def test_a_pairings_elo_comes_from_its_duplicate_pairs() -> None:
    """Six deals, each played twice with the seats swapped: 'a' wins both games of four deals and
    splits two. The Elo and its interval are those of the pentanomial counts 0,0,2,0,4 (as arena
    sprt --pentanomial reports them), not of twelve independent games."""
    rows = []
    for deal in range(6):
        for rot in range(2):
            g = 2 * deal + rot
            a_wins = deal < 4 or rot == 0
            a_seat = rot
            rows.append(seat(g, a_seat, "a", 0 if a_wins else 1, 1000))
            rows.append(seat(g, 1 - a_seat, "b", 1 if a_wins else 0, 800))
    (line,) = pairing_lines(rows)
    assert isinstance(line.counts, Pentanomial) and str(line.counts) == "0,0,2,0,4"
    assert line.pairs == 6
    expected = estimate(Pentanomial.of((0, 0, 2, 0, 4)))
    assert line.elo == expected
    games = estimate(Trinomial(2, 0, 10))
    # Pairs won twice carry less noise than twelve games: the interval is narrower.
    assert line.elo is not None and line.elo.elo_error < games.elo_error
    assert 0.99 < line.elo.los <= 1.0


def test_a_pairing_without_pairs_gets_its_elo_from_games_and_a_half_pair_is_left_out() -> None:
    # One game per deal (no duplicates): games, trinomial.
    rows = [seat(g, 0, "a", 0 if g else 1, 900) for g in range(0, 6, 2)]
    rows += [seat(g, 1, "b", 1 if g else 0, 700) for g in range(0, 6, 2)]
    (line,) = pairing_lines(rows)
    assert isinstance(line.counts, Trinomial) and str(line.counts) == "1,0,2"
    assert line.pairs == 0 and line.elo == estimate(Trinomial(1, 0, 2))
    # One complete pair (deal 0) and a deal whose second game is not played yet: one pair counted.
    rows = [
        seat(0, 0, "a", 0, 1), seat(0, 1, "b", 1, 0),
        seat(1, 0, "b", 0, 1), seat(1, 1, "a", 1, 0),
        seat(2, 0, "a", 0, 1), seat(2, 1, "b", 1, 0),
    ]  # fmt: skip
    (line,) = pairing_lines(rows)
    assert str(line.counts) == "0,0,1,0,0" and line.games == 3


def test_arena_runs_pairings_table_shows_a_clean_sweeps_bound_and_los_as_the_web_does() -> None:
    """Issue 45: a clean sweep printed "-" for Elo and LOS in ``arena run``'s pairings table while
    the web showed the one-sided bound; both now format it with one function."""
    from arena.cli.tournament import elo_cells
    from arena.tournament.summary import elo_figures, elo_shown, sweep_bound
    from arena.web.head_to_head import shown

    # Two deals, each a duplicate pair won twice by 'a': a clean sweep of two pairs.
    rows = [seat(g, s, name, 0 if name == "a" else 1, 0) for g in range(4) for s, name in
            enumerate(("a", "b") if g % 2 == 0 else ("b", "a"))]  # fmt: skip
    (line,) = pairing_lines(rows)
    assert line.pairs == 2 and line.elo is not None and line.elo.regularized
    bound = sweep_bound(2)
    elo, los = elo_cells(line)
    assert elo == f"> {bound:+.0f} (95%, a clean sweep), 2 pairs" and los == "100%"
    lost = pairing_lines(
        [r | {"entrant": "z" if r["entrant"] == "a" else r["entrant"]} for r in rows]
    )
    assert elo_cells(lost[0]) == (f"< {-bound:+.0f} (95%, a clean sweep), 2 pairs", "0%")
    # The web's head to head shows the same figures: the same function.
    figures = elo_figures(line)
    assert elo_shown(figures, line.games) == (
        f"> {bound:+.0f}",
        "(95%, a clean sweep)",
        "2 pairs",
        "100%",
    )
    page = shown({"entrant_id": 1, "entrant": "a", "opponent_id": 2, "opponent": "b",
                  "games": 4, "wins": 4, "losses": 0, "draws": 0, "forfeits": 0,
                  "opponent_forfeits": 0, "sets_won": 2, "sets_lost": 0, "sets_tied": 0,
                  "score": 1.0, "elo": figures})  # fmt: skip
    assert (page.elo, page.note, page.units, page.los) == elo_shown(figures, line.games)


def test_arena_runs_pairings_table_gives_no_figure_while_every_pair_split() -> None:
    rows = [seat(g, s, name, s, 0) for g in range(4) for s, name in
            enumerate(("a", "b") if g % 2 == 0 else ("b", "a"))]  # fmt: skip
    (line,) = pairing_lines(rows)
    from arena.cli.tournament import elo_cells

    assert elo_cells(line) == ("- (all alike), 2 pairs", "-")

"""Scoring and the end of deals and games: credits (with the immediate game end), the end-of-deal
items (last trick, brisques), the Rubicon settlement via :func:`rubicon_settlement`, and the result.
One layer of :class:`arena.game.state.GameState` (see :mod:`arena.game.fields`)."""

from __future__ import annotations

from arena.game.cards import TEN
from arena.game.events import EV_SCORE, OVER
from arena.game.fields import F_ORDINARY, F_RUBICON, StateFields
from arena.game.results import DealResult, GameResult, ScoreItem, rubicon_settlement


class _GameWon(Exception):
    """Raised inside a step when game_end = "immediate" and a seat reaches the target."""


class Scoring(StateFields):
    """Methods that credit points and end deals and the game."""

    __slots__ = ()

    # ------------------------------------------------------------------ scoring

    def _credit(self, seat: int, points: int, reason: str, cards: tuple[int, ...] = ()) -> None:
        self.deal_points[seat] += points
        self.items.append(ScoreItem(seat, reason, points, cards))
        target = self.immediate_target
        if target:
            v = self.variant
            side = v.sides[v.side_of(seat)]
            if sum(self.totals[s] + self.deal_points[s] for s in side) >= target:
                self.winner_seat = seat
                raise _GameWon

    def brisques(self) -> list[int]:
        """Brisque points (aces and tens, 10 each) taken by each seat so far in this deal."""
        out = []
        for cards in self.won:
            points = 0
            for c in cards:
                if c & 7 >= TEN:
                    points += 10
            out.append(points)
        return out

    def _end_deal(self) -> None:
        v = self.variant
        n = v.seats
        last_winner = self.last_trick[2]
        try:
            # 002: the last trick scores 10 (Rubicon 50); brisques are counted at the end of the hand.
            self._credit(last_winner, v.last_trick, "last-trick")
            self.log.append((EV_SCORE, last_winner, "last-trick", v.last_trick))
            if self.fam == F_ORDINARY:
                br = self.brisques()
                for i in range(n):
                    seat = (last_winner + i) % n
                    if br[seat]:
                        self.log.append((EV_SCORE, seat, "brisques", br[seat]))
                        self._credit(seat, br[seat], "brisques")
        except _GameWon:
            self._finish_game(partial_deal=False)
            return
        self._record_deal(completed=True)
        if self.fam == F_RUBICON:
            self._finish_game(partial_deal=False, recorded=True)
            return
        side_totals = [sum(self.totals[s] for s in side) for side in v.sides]
        best = max(side_totals)
        if v.game_end == "end-of-deal" and best >= v.target and side_totals.count(best) == 1:
            self.winner_seat = v.sides[side_totals.index(best)][0]
            self._finish_game(partial_deal=False, recorded=True)
            return
        # 002: the deal alternates (rotates to the left with more seats).
        self.deal_index += 1
        self.dealer = (self.dealer + 1) % n
        self._start_deal()

    def _record_deal(self, completed: bool) -> None:
        for s in range(self.variant.seats):
            self.totals[s] += self.deal_points[s]
        self.deals.append(
            DealResult(
                index=self.deal_index,
                dealer=self.dealer,
                items=tuple(self.items),
                points=tuple(self.deal_points),
                totals=tuple(self.totals),
                brisques=tuple(self.brisques()),
                completed=completed,
            )
        )

    def _finish_game(self, partial_deal: bool, recorded: bool = False) -> None:
        if not recorded:
            self._record_deal(completed=not partial_deal and not self.hands_left())
        self.phase = OVER
        self.to_act = -1
        self._legal = []

    def hands_left(self) -> bool:
        return any(self.hands) or self.stock_size > 0

    def result(self) -> GameResult:
        """The game's result; only when the game is over."""
        if self.phase != OVER:
            raise ValueError("the game is not over")
        v = self.variant
        team_sizes = tuple(v.team_size(s) for s in range(v.seats))
        if self.fam == F_RUBICON:
            last = self.deals[-1]
            brisques = last.brisques
            st = rubicon_settlement((last.points[0], last.points[1]), (brisques[0], brisques[1]))
            ranking: tuple[int, ...] = (
                (0, 0) if st.winner is None else (0, 1) if st.winner == 0 else (1, 0)
            )
            return GameResult(
                v.sides, ranking, st.scores, st.scores, tuple(self.deals), team_sizes, st.items
            )
        side_scores = tuple(sum(self.totals[s] for s in side) for side in v.sides)
        order = sorted(set(side_scores), reverse=True)
        ranking = tuple(order.index(score) for score in side_scores)
        return GameResult(
            v.sides, ranking, tuple(self.totals), side_scores, tuple(self.deals), team_sizes
        )

"""The exact last tricks of a two-seat deal: every card known, both seats playing their best.

Once the stock is empty in two-handed Bezique (and Rubicon, and each consultation variant) a player who
remembers what was played knows the other hand: the cards of the packs that are neither played nor
his own. What is left to win is the brisques (aces and tens) of the tricks and the last trick (10, 50
in Rubicon), under the rules of the last eight tricks (RULES.md section 2): the follower must follow
suit and win if able; void in the suit led, must trump if able; otherwise plays any card.

:class:`EndgameSolver` plays this exactly with alpha-beta over bit masks of the two hands and a
transposition table, fast enough for a bot's first endgame decision (a few milliseconds for eight cards
a hand, where plain memoized minimax over hand tuples takes a tenth of a second). Values are from the
point of view of the seat to lead: its points minus the other's over the remaining tricks.

    >>> solver = EndgameSolver(trump=1, last_trick=10)
    >>> solver.value(hand("AH", "7S"), hand("TS", "8C"))
    10
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from arena.game.cards import TEN

Hand = tuple[int, ...]

_INF = 10**6


class OutOfTime(Exception):
    """The search passed its deadline (the transposition table keeps what it solved)."""


class EndgameSolver:
    """Exact values of two-seat last tricks for one trump suit and scoring.

    ``brisque`` is what an ace or ten taken in a trick is worth (10; Rubicon counts brisques only to
    break ties and to save a rubicon, so a bot may weigh them less there), ``last_trick`` the bonus of
    the last trick. A solver keeps its table between calls: the positions of one deal's last tricks
    share most of their subtrees. ``deadline`` (a ``time.perf_counter`` time) makes a search raise
    :class:`OutOfTime` once passed.
    """

    def __init__(self, trump: int, last_trick: int, brisque: int = 10) -> None:
        self.trump = trump
        self.last_trick = last_trick
        self.brisque = brisque
        self.deadline = float("inf")
        self.nodes = 0
        # One game (a pair of initial hands) at a time: their cards by index, and the table.
        self._key: tuple[Hand, Hand] | None = None
        self._cards: tuple[Hand, Hand] = ((), ())
        self._table: dict[int, tuple[int, int, int]] = {}
        # Values of whole positions, kept across games: a search meets the same positions in many
        # sampled worlds.
        self._values: dict[tuple[Hand, Hand], int] = {}
        self._suits: list[list[int]] = []
        self._over: list[list[int]] = []
        self._dup: list[int] = []
        self._order: list[list[int]] = []
        self._bris: list[list[int]] = []
        self._between: list[list[list[int]]] = []
        # _wins[led][card]: the card played second takes the trick from the card led.
        self._wins = [
            [(c & 7 > led & 7) if c >> 3 == led >> 3 else c >> 3 == trump for c in range(32)]
            for led in range(32)
        ]

    # ------------------------------------------------------------------ public

    def value(self, leader: Sequence[int], follower: Sequence[int]) -> int:
        """The leader's points minus the follower's over the remaining tricks, both playing best."""
        key = (tuple(sorted(k & 31 for k in leader)), tuple(sorted(k & 31 for k in follower)))
        got = self._values.get(key)
        if got is None:
            lead, m0, m1 = self._position(*key)
            got = self._search(lead, m0, m1, -_INF, _INF)
            if len(self._values) >= 100_000:
                self._values.clear()
            self._values[key] = got
        return got

    def after_lead(self, leader: Sequence[int], follower: Sequence[int], card: int) -> int:
        """The leader's value after leading ``card`` (a kind), the follower answering best."""
        lead, m0, m1 = self._position(leader, follower)
        i = self._index(lead, (m0, m1)[lead], card)
        return self._after_lead(lead, m0, m1, i, -_INF, _INF)

    def after_follow(
        self, leader: Sequence[int], follower: Sequence[int], led: int, card: int
    ) -> int:
        """The leader's value once the trick is ``led`` (from the leader's hand, which still holds
        it) and ``card`` (from the follower's)."""
        lead, m0, m1 = self._position(leader, follower)
        i = self._index(lead, (m0, m1)[lead], led)
        j = self._index(1 - lead, (m0, m1)[1 - lead], card)
        return self._after_follow(lead, m0, m1, i, j, -_INF, _INF)

    def best_lead(self, leader: Sequence[int], follower: Sequence[int]) -> tuple[int, int]:
        """The best card to lead (a kind) and its value (among equals, the first tried: the
        strongest)."""
        lead, m0, m1 = self._position(leader, follower)
        best, best_value = -1, -_INF
        for i in self._distinct(lead, (m0, m1)[lead]):
            v = self._after_lead(lead, m0, m1, i, best_value, _INF)
            if v > best_value or best < 0:
                best, best_value = i, v
        return self._cards[lead][best], best_value

    def best_follow(
        self, leader: Sequence[int], follower: Sequence[int], led: int
    ) -> tuple[int, int]:
        """The follower's best answer (a kind) to ``led`` (still in the leader's hand) and the
        leader's value after it (among equals, the cheapest)."""
        lead, m0, m1 = self._position(leader, follower)
        i = self._index(lead, (m0, m1)[lead], led)
        best, best_value = -1, _INF
        for j in self._follows(1 - lead, (m0, m1)[1 - lead], self._cards[lead][i]):
            v = self._after_follow(lead, m0, m1, i, j, -_INF, best_value)
            if v < best_value or best < 0:
                best, best_value = j, v
        return self._cards[1 - lead][best], best_value

    def follows(self, hand: Sequence[int], led: int) -> list[int]:
        """The kinds a follower holding ``hand`` may play to ``led`` (distinct, sorted)."""
        suit = led >> 3
        same = [k for k in hand if k >> 3 == suit]
        if same:
            over = [k for k in same if k & 7 > led & 7]
            return sorted(set(over or same))
        if self.trump >= 0:
            trumps = [k for k in hand if k >> 3 == self.trump]
            if trumps:
                return sorted(set(trumps))
        return sorted(set(hand))

    def follower_wins(self, led: int, card: int) -> bool:
        if card >> 3 == led >> 3:
            return card & 7 > led & 7
        return card >> 3 == self.trump

    # ------------------------------------------------------------------ positions

    def _position(self, leader: Sequence[int], follower: Sequence[int]) -> tuple[int, int, int]:
        """(the leading player 0 or 1, mask of player 0's cards, mask of player 1's cards) for hands
        that must be a sub-multiset of the current game's initial hands (else a new game starts)."""
        a = tuple(sorted(k & 31 for k in leader))
        b = tuple(sorted(k & 31 for k in follower))
        if len(a) != len(b):
            raise ValueError(f"the leader holds {len(a)} cards and the follower {len(b)}")
        for lead, (x, y) in enumerate(((a, b), (b, a))):
            if self._key is not None:
                m0 = _submask(self._cards[0], x)
                m1 = _submask(self._cards[1], y)
                if m0 >= 0 and m1 >= 0:
                    return lead, m0, m1
        self._start(a, b)
        return 0, (1 << len(a)) - 1, (1 << len(b)) - 1

    def _start(self, a: Hand, b: Hand) -> None:
        self._key = (a, b)
        self._cards = (a, b)
        self._table = {}
        trump = self.trump
        # Per player: the mask of each suit's cards; for each kind led, the mask of the cards of its
        # suit ranking above it; the mask of indices whose next card is the same kind (duplicates).
        self._suits = []
        self._over = []
        self._dup = []
        self._order = []
        self._bris = []
        for cards in (a, b):
            suits = [0, 0, 0, 0]
            for i, k in enumerate(cards):
                suits[k >> 3] |= 1 << i
            over = [0] * 32
            for led in range(32):
                m = 0
                for i, k in enumerate(cards):
                    if k >> 3 == led >> 3 and k & 7 > led & 7:
                        m |= 1 << i
                over[led] = m
            dup = 0
            for i in range(len(cards) - 1):
                if cards[i + 1] == cards[i]:
                    dup |= 1 << i
            # Leads are tried strongest first (aces and trumps tend to be the best leads).
            strength = [_strength(k, trump) for k in cards]
            order = sorted(range(len(cards)), key=strength.__getitem__)
            self._suits.append(suits)
            self._over.append(over)
            self._dup.append(dup)
            self._order.append(order)
            self._bris.append([self.brisque if k & 7 >= TEN else 0 for k in cards])
        # _between[p][x][y]: the other player's cards of the suit of p's cards x and y ranking
        # between them or equal to either (between identical cards the first played wins). Two cards
        # of one suit and point value with none of these left in the other hand are equivalent: one
        # of them need be tried.
        self._between = []
        for p, cards in enumerate((a, b)):
            others = (a, b)[1 - p]
            table = []
            for x in cards:
                row = []
                for y in cards:
                    m = 0
                    if x >> 3 == y >> 3:
                        low, high = sorted((x & 7, y & 7))
                        for j, z in enumerate(others):
                            if z >> 3 == x >> 3 and low <= z & 7 <= high:
                                m |= 1 << j
                    row.append(m)
                table.append(row)
            self._between.append(table)

    def _index(self, player: int, mask: int, kind: int) -> int:
        """The canonical copy of ``kind`` in the player's mask: the highest index of that kind."""
        cards = self._cards[player]
        for i in range(len(cards) - 1, -1, -1):
            if mask >> i & 1 and cards[i] == kind & 31:
                return i
        raise ValueError(f"the hand holds no card of kind {kind}")

    def _canonical(self, player: int, mask: int) -> int:
        """The mask of one copy per distinct kind (the highest index of each kind present)."""
        return mask & ~((mask >> 1) & self._dup[player])

    def _distinct(self, player: int, mask: int) -> list[int]:
        """One index per distinct kind in the mask, strongest first."""
        canon = self._canonical(player, mask)
        return [i for i in self._order[player] if canon >> i & 1]

    def _follows(self, player: int, mask: int, led: int) -> list[int]:
        """The follower's legal answers, cheapest first (winning cards, then the others)."""
        canon = self._canonical(player, mask)
        suits = self._suits[player]
        legal = canon & suits[led >> 3]
        if legal:
            over = legal & self._over[player][led]
            if over:
                legal = over
        elif self.trump >= 0 and canon & suits[self.trump]:
            legal = canon & suits[self.trump]
        else:
            legal = canon
        out = []
        while legal:
            low = legal & -legal
            out.append(low.bit_length() - 1)
            legal ^= low
        return out

    # ------------------------------------------------------------------ alpha-beta

    def _search(self, lead: int, m0: int, m1: int, alpha: int, beta: int) -> int:
        """The leader's value of the position (fail-soft alpha-beta with a transposition table)."""
        if lead == 0:
            ml, mf = m0, m1
        else:
            ml, mf = m1, m0
        if not ml:
            return 0
        key = m0 | m1 << 10 | lead << 20
        table = self._table
        entry = table.get(key)
        if entry is not None:
            low, high, hint = entry
            if low >= beta:
                return low
            if high <= alpha:
                return high
            if low == high:
                return low
            if low > alpha:
                alpha = low
            if high < beta:
                beta = high
        else:
            low, high, hint = -_INF, _INF, -1
        self.nodes += 1
        if self.nodes & 1023 == 0 and time.perf_counter() > self.deadline:
            raise OutOfTime
        follower = 1 - lead
        canon_l = ml & ~((ml >> 1) & self._dup[lead])
        canon_f = mf & ~((mf >> 1) & self._dup[follower])
        lcards = self._cards[lead]
        fcards = self._cards[follower]
        lbris = self._bris[lead]
        fbris = self._bris[follower]
        fsuits = self._suits[follower]
        fover = self._over[follower]
        wins = self._wins
        last = self.last_trick
        search = self._search
        ftrumps = canon_f & fsuits[self.trump] if self.trump >= 0 else 0
        order = [i for i in self._order[lead] if canon_l >> i & 1]
        if hint >= 0 and canon_l >> hint & 1 and order[0] != hint:
            order.remove(hint)
            order.insert(0, hint)
        a0 = alpha
        best = -_INF
        best_i = -1
        lbetween = self._between[lead]
        fbetween = self._between[follower]
        tried = [-1, -1, -1, -1]  # per suit, the last card led
        for i in order:
            led = lcards[i]
            prev = tried[led >> 3]
            if prev >= 0 and lbris[prev] == lbris[i] and not lbetween[prev][i] & mf:
                continue  # equivalent to a card already tried
            tried[led >> 3] = i
            legal = canon_f & fsuits[led >> 3]
            if legal:
                over = legal & fover[led]
                if over:
                    legal = over
            elif ftrumps:
                legal = ftrumps
            else:
                legal = canon_f
            nl = ml & ~(1 << i)
            beaten = wins[led]
            worst = _INF
            b = beta
            prev_j = -1
            while legal:
                low_bit = legal & -legal
                legal ^= low_bit
                j = low_bit.bit_length() - 1
                card = fcards[j]
                if (
                    prev_j >= 0
                    and fcards[prev_j] >> 3 == card >> 3
                    and fbris[prev_j] == fbris[j]
                    and not fbetween[prev_j][j] & ml
                ):
                    continue  # equivalent to the card just tried
                prev_j = j
                nf = mf & ~low_bit
                points = lbris[i] + fbris[j]
                if not nl:
                    points += last
                if beaten[card]:
                    # The follower takes the trick and leads next.
                    if follower == 0:
                        v = -points - search(0, nf, nl, -b - points, -alpha - points)
                    else:
                        v = -points - search(1, nl, nf, -b - points, -alpha - points)
                elif lead == 0:
                    v = points + search(0, nl, nf, alpha - points, b - points)
                else:
                    v = points + search(1, nf, nl, alpha - points, b - points)
                if v < worst:
                    worst = v
                    if v < b:
                        b = v
                        if alpha >= b:
                            break
            if worst > best:
                best, best_i = worst, i
                if worst > alpha:
                    alpha = worst
                    if alpha >= beta:
                        break
        if best <= a0:
            table[key] = (low, best, best_i)  # an upper bound
        elif best >= beta:
            table[key] = (best, high, best_i)  # a lower bound
        else:
            table[key] = (best, best, best_i)
        return best

    def _after_lead(self, lead: int, m0: int, m1: int, i: int, alpha: int, beta: int) -> int:
        """The leader's value after leading its card ``i``, the follower answering best."""
        follower = 1 - lead
        mf = m1 if lead == 0 else m0
        led = self._cards[lead][i]
        worst = _INF
        for j in self._follows(follower, mf, led):
            v = self._after_follow(lead, m0, m1, i, j, alpha, beta)
            if v < worst:
                worst = v
                if v < beta:
                    beta = v
                    if alpha >= beta:
                        break
        return worst

    def _after_follow(
        self, lead: int, m0: int, m1: int, i: int, j: int, alpha: int, beta: int
    ) -> int:
        """The leader's value once the trick is its card ``i`` and the follower's card ``j``."""
        follower = 1 - lead
        led = self._cards[lead][i]
        card = self._cards[follower][j]
        if lead == 0:
            n0, n1 = m0 & ~(1 << i), m1 & ~(1 << j)
        else:
            n0, n1 = m0 & ~(1 << j), m1 & ~(1 << i)
        points = self._bris[lead][i] + self._bris[follower][j]
        if not (n0 | n1):
            points += self.last_trick
        if self._wins[led][card]:
            # The follower leads next: the leader's value is -(points + the follower's value).
            return -points - self._search(follower, n0, n1, -beta - points, -alpha - points)
        return points + self._search(lead, n0, n1, alpha - points, beta - points)


def _strength(kind: int, trump: int) -> int:
    """Leads are tried strongest first (aces and trumps tend to be the best leads)."""
    return -(kind & 7) - (8 if kind >> 3 == trump else 0)


def _submask(cards: Hand, hand: Hand) -> int:
    """The mask of canonical copies of ``hand`` within ``cards`` (both sorted): for each kind, the
    lowest indices of its block; -1 when ``hand`` is not a sub-multiset of ``cards``."""
    mask = 0
    i = 0
    n = len(cards)
    for k in hand:
        while i < n and cards[i] < k:
            i += 1
        if i >= n or cards[i] != k:
            return -1
        mask |= 1 << i
        i += 1
    return mask


def _remove(hand: Hand, kind: int) -> Hand:
    i = hand.index(kind)
    return hand[:i] + hand[i + 1 :]


def brute_force(
    trump: int, last_trick: int, leader: Hand, follower: Hand, brisque: int = 10
) -> int:
    """Plain minimax, no table, no pruning (for tests): the leader's points minus the follower's."""
    rules = EndgameSolver(trump, last_trick, brisque)
    if not leader:
        return 0
    best = -_INF
    for lead in sorted(set(leader)):
        worst = _INF
        for card in rules.follows(follower, lead):
            rest_l = _remove(leader, lead)
            rest_f = _remove(follower, card)
            points = (brisque if lead & 7 >= TEN else 0) + (brisque if card & 7 >= TEN else 0)
            if not rest_l:
                points += last_trick
            if rules.follower_wins(lead, card):
                v = -points - brute_force(trump, last_trick, rest_f, rest_l, brisque)
            else:
                v = points + brute_force(trump, last_trick, rest_l, rest_f, brisque)
            worst = min(worst, v)
        best = max(best, worst)
    return best

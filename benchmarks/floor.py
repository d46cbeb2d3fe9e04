"""A floor for the engine benchmark: a stripped-down two-handed Bezique simulator (issue 19).

    python benchmarks/floor.py --seconds 5

It has the shape of the engine's two-handed random play and nothing more: two packs shuffled, eight
cards each, a turn-up for trumps, random play of 24 tricks with drawing (any card) and 8 tricks under
the follow-suit-and-win rules, brisques and the last trick counted, and after each stock trick a crude
meld check of the winner's hand (marriages, bezique, fours, from a bit mask of the kinds it holds) with
a random choice among the melds found and passing. No bookkeeping: no copies, no declared cards, no
legal action lists, no log, no observation. Cards are ints 0..63, ``card & 31`` the kind (``suit * 8 +
rank``, ranks 7 8 9 J Q K T A as 0..7) as in ``arena.game.cards``. The last line is
``hands_per_second <N>``.
"""

from __future__ import annotations

import argparse
import random
import time

TEN, ACE = 6, 7
KINGS = tuple(5 + 8 * s for s in range(4))
QS, JD = 4, 8 + 8 + 3  # queen of spades, knave of diamonds (kinds)
FOUR_SCORES = {3: 40, 4: 60, 5: 80, 7: 100}
DECK = list(range(64))


def beats(card: int, best: int, trump: int) -> bool:
    """Whether ``card``, played after ``best``, takes the trick from it."""
    suit = card >> 3 & 3
    best_suit = best >> 3 & 3
    if suit == best_suit:
        return (card & 7) > (best & 7)
    return suit == trump


def follows(hand: list[int], led: int, trump: int) -> list[int]:
    """The cards a follower may play in the last eight tricks: follow suit and win if able, else trump
    if able, else any card."""
    suit = led >> 3 & 3
    same = [c for c in hand if c >> 3 & 3 == suit]
    if same:
        over = [c for c in same if (c & 7) > (led & 7)]
        return over or same
    trumps = [c for c in hand if c >> 3 & 3 == trump]
    return trumps or hand


def melds(hand: list[int], trump: int) -> list[int]:
    """Scores of the melds a hand holds (crude: from the kinds present, nothing remembered)."""
    present = 0
    ranks = [0] * 8
    for c in hand:
        present |= 1 << (c & 31)
        ranks[c & 7] += 1
    found = []
    for k in KINGS:
        if present >> k & 1 and present >> (k - 1) & 1:
            found.append(40 if k >> 3 == trump else 20)
    if present >> QS & 1 and present >> JD & 1:
        found.append(40)
    for rank, score in FOUR_SCORES.items():
        if ranks[rank] >= 4:
            found.append(score)
    return found


def play_hand(rng: random.Random, dealer: int) -> tuple[int, int]:
    """One hand of random play; each seat's points."""
    choice = rng.choice
    deck = DECK[:]
    rng.shuffle(deck)
    hands = [deck[0:8], deck[8:16]]
    turn_up = deck[16]
    trump = turn_up >> 3 & 3
    stock = deck[17:]
    stock.append(turn_up)  # drawn last
    stock.reverse()
    points = [0, 0]
    leader = 1 - dealer
    while hands[leader]:
        lead_hand = hands[leader]
        first = choice(lead_hand)
        lead_hand.remove(first)
        follower = 1 - leader
        follow_hand = hands[follower]
        second = choice(follow_hand if stock else follows(follow_hand, first, trump))
        follow_hand.remove(second)
        winner = follower if beats(second, first, trump) else leader
        if first & 7 >= TEN:
            points[winner] += 10
        if second & 7 >= TEN:
            points[winner] += 10
        if stock:
            found = melds(hands[winner], trump)
            if found:
                points[winner] += choice([0, *found])
            hands[winner].append(stock.pop())
            hands[1 - winner].append(stock.pop())
        leader = winner
    points[leader] += 10  # the last trick
    return points[0], points[1]


def run(seconds: float, seed: int) -> tuple[int, float]:
    rng = random.Random(seed)
    hands = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for _ in range(20):
            play_hand(rng, hands & 1)
            hands += 1
    return hands, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    hands, elapsed = run(args.seconds, args.seed)
    print(f"floor hands {hands} seconds {elapsed:.2f}")
    print(f"hands_per_second {hands / elapsed:.0f}")


if __name__ == "__main__":
    main()

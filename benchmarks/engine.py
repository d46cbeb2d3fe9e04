"""Engine throughput: random legal hands per second on one core, and its ratio to a floor.

    python benchmarks/engine.py --variant two-handed --seconds 5

Plays games between two seeded random players, counting completed hands (deals), with the legal action
list computed at every decision exactly as a searching bot would. For two-handed Bezique it also runs
``benchmarks/floor.py`` (a stripped-down two-handed simulator with no bookkeeping: the floor any engine
of this game is measured against) in the same run, alternating short slices of the two so that a
loaded machine slows both alike, and prints the ratio (issue 19: 0.5 or better). Both are timed in
CPU time of this process (``time.process_time``): on a shared machine the time spent waiting for a
core is not the engine's, and counting it made runs minutes apart differ by a factor of two. The
last line is ``hands_per_second <N>`` followed, with the floor, by ``floor_hands_per_second <M> ratio <N/M>``.
"""

from __future__ import annotations

import argparse
import random
import time

from floor import play_hand

from arena.game import VARIANT_NAMES, GameState, variant

SLICE = 0.2  # seconds per turn when the engine and the floor alternate


class EngineRun:
    """Random play of whole games, resumable slice by slice."""

    def __init__(self, name: str, seed: int) -> None:
        self.v = variant(name)
        self.seed = seed
        self.rng = random.Random(seed)
        self.game = 0
        self.state = self._new_game()
        self.hands = self.decisions = 0
        self.elapsed = 0.0

    def _new_game(self) -> GameState:
        state = GameState.new(self.v, seed=self.seed * 1_000_003 + self.game)
        self.game += 1
        return state

    def play(self, seconds: float) -> None:
        clock = time.process_time
        start = clock()
        deadline = start + seconds
        choice = self.rng.choice
        state = self.state
        decisions = 0
        while clock() < deadline:
            for _ in range(50):
                if state.is_terminal():
                    self.hands += len(state.deals)
                    state = self._new_game()
                state.apply(choice(state.legal_actions()))
                decisions += 1
        self.state = state
        self.decisions += decisions
        self.elapsed += clock() - start


class FloorRun:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.hands = 0
        self.elapsed = 0.0

    def play(self, seconds: float) -> None:
        clock = time.process_time
        start = clock()
        deadline = start + seconds
        rng = self.rng
        hands = self.hands
        while clock() < deadline:
            for _ in range(5):
                play_hand(rng, hands & 1)
                hands += 1
        self.hands = hands
        self.elapsed += clock() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--variant", choices=VARIANT_NAMES, default="two-handed")
    parser.add_argument("--seconds", type=float, default=5.0, help="for the engine (and the floor)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--floor",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run the two-handed floor too (default: for two-handed only)",
    )
    args = parser.parse_args()
    with_floor = args.variant == "two-handed" if args.floor is None else args.floor
    engine = EngineRun(args.variant, args.seed)
    floor = FloorRun(args.seed)
    slices = max(1, round(args.seconds / SLICE))
    for _ in range(slices):
        engine.play(args.seconds / slices)
        if with_floor:
            floor.play(args.seconds / slices)
    eng = engine.hands / engine.elapsed
    print(
        f"variant {args.variant} hands {engine.hands} decisions {engine.decisions} "
        f"seconds {engine.elapsed:.2f}"
    )
    print(f"decisions_per_second {engine.decisions / engine.elapsed:.0f}")
    if not with_floor:
        print(f"hands_per_second {eng:.0f}")
        return
    flo = floor.hands / floor.elapsed
    print(f"floor hands {floor.hands} seconds {floor.elapsed:.2f}")
    print(f"hands_per_second {eng:.0f} floor_hands_per_second {flo:.0f} ratio {eng / flo:.2f}")


if __name__ == "__main__":
    main()

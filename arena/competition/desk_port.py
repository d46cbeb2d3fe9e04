"""What the submission service asks of a competition (its submissions desk, :class:`Desk`) and the
error a desk refuses a request with (:class:`SubmissionError`). The competition server's desk
(:mod:`.desk`) is one; the service (:mod:`.submission_api`) and its access checks
(:mod:`.submission_access`) are written against this protocol alone."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from arena.ledger import challenges, seat_reports, status_history
from arena.ledger import competitions as store
from arena.ledger.webhooks import Webhook


class SubmissionError(Exception):
    """A submission refused; the message is for its author."""


_T = TypeVar("_T")


class Desk(Protocol):
    """What the submission service asks of a competition: its submissions desk."""

    @property
    def competition_name(self) -> str: ...

    @property
    def max_bundle_mb(self) -> int: ...

    @property
    def bots_address(self) -> str: ...  # where remote entrants dial in

    async def submit(self, author: store.Author, data: bytes) -> store.Submission: ...

    async def register_remote(
        self, author: store.Author, bot: str, version: str, language: str
    ) -> tuple[store.Submission, str]: ...

    async def withdraw(self, author: store.Author, bot: str) -> int: ...

    async def submissions_of(self, author: store.Author) -> list[store.Submission]: ...

    async def submission(self, submission_id: int) -> store.Submission: ...

    async def log(self, submission_id: int) -> str: ...

    async def author_of(self, token: str) -> store.Author | None: ...

    async def board(self) -> list[store.BoardLine]: ...

    async def history(self, submission_id: int) -> list[status_history.StatusChange]: ...

    async def play_failures(self, entrant_id: int) -> list[store.PlayFailure]: ...

    async def time_use(self, entrant_id: int) -> seat_reports.TimeUse: ...

    async def game_log(
        self, author: store.Author, game_id: int
    ) -> tuple[str, str, list[seat_reports.SeatOutput]]: ...

    # The organiser's calls (:mod:`.organiser`'s actions, run on the competition's ledger).
    def is_organiser(self, token: str) -> bool: ...

    async def organise(self, action: Callable[..., _T], *args: Any) -> _T: ...

    # Notifications (:mod:`arena.competition.notifications`).
    async def set_webhook(self, author: store.Author, url: str) -> tuple[Webhook, str]: ...

    async def webhook(self, author: store.Author) -> Webhook | None: ...

    async def remove_webhook(self, author: store.Author) -> bool: ...

    # Challenges (arena.competition.challenges).

    async def challenge(
        self, author: store.Author, bot: str, against: str, games: int
    ) -> challenges.Challenge: ...

    async def challenges_of(
        self, author: store.Author
    ) -> list[tuple[challenges.Challenge, list[challenges.ChallengeGame]]]: ...

    async def cancel_challenge(
        self, author: store.Author, challenge_id: int
    ) -> challenges.Challenge: ...

    async def challenge_replay(
        self, author: store.Author, game_id: int
    ) -> tuple[challenges.ChallengeGame, dict[str, object], list[challenges.ChallengeOutput]]: ...

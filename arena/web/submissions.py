"""The web as a client of a competition's submission service (``arena web --submissions``): every
author's and organiser's action on the web is one call to that service, with the token of the
session; the web never writes the ledger. A refusal comes back as :class:`ServiceError`, whose
message is the service's own (for its author) and whose ``status`` is the HTTP status to answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

import grpc

from arena.wire.v1 import competition_pb2_grpc

_T = TypeVar("_T")

if TYPE_CHECKING:
    from typing import TypeAlias

    # The stubs' async flavour exists for the type checker alone.
    Stub: TypeAlias = competition_pb2_grpc.CompetitionAsyncStub
    Call: TypeAlias = Callable[[Stub, tuple[tuple[str, str], ...]], Awaitable[_T]]

CALL_SECONDS = 120.0  # one call (a bundle's upload and unpacking the longest)

# A refusal's gRPC status as an HTTP status.
HTTP_STATUS = {
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.FAILED_PRECONDITION: 409,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
}


class ServiceError(Exception):
    """A call to the submission service refused or failed; the message says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class SubmissionService:
    """The competition's submission service at ``address``: one channel, opened on the first call
    (on the loop that serves the web)."""

    def __init__(self, address: str, max_send_mb: int = 2048) -> None:
        self.address = address
        self._max_send = min(max_send_mb * 1024 * 1024, 2**31 - 1)
        self._channel: grpc.aio.Channel | None = None
        self._stub: Stub | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _stub_now(self) -> Stub:
        loop = asyncio.get_running_loop()
        if self._stub is None or self._loop is not loop:
            self._channel = grpc.aio.insecure_channel(
                self.address, options=[("grpc.max_send_message_length", self._max_send)]
            )
            self._stub = competition_pb2_grpc.CompetitionStub(self._channel)
            self._loop = loop
        assert self._stub is not None
        return self._stub

    async def call(self, token: str, call: Call[_T]) -> _T:
        """One call with ``token`` (an author's or the organiser's)."""
        metadata = (("authorization", f"Bearer {token}"),)
        try:
            async with asyncio.timeout(CALL_SECONDS):
                return await call(self._stub_now(), metadata)
        except TimeoutError:
            raise ServiceError(
                504, f"the competition did not answer within {CALL_SECONDS:g} s"
            ) from None
        except grpc.aio.AioRpcError as exc:
            code = exc.code()
            if code is grpc.StatusCode.UNAVAILABLE:
                raise ServiceError(
                    503, "the competition's submission service does not answer; try again later"
                ) from None
            raise ServiceError(HTTP_STATUS.get(code, 502), exc.details() or code.name) from None

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close()
            self._channel = self._stub = None

"""Who may make which call of the submission service, checked before a request is read.

Every call must carry a token (``authorization: Bearer <token>``): an author's, or for the organiser's
calls the organiser's. An interceptor (:class:`AuthorGuard`) checks it from the call's metadata before
the request is read: a call without one is refused while its body is still on the wire (checked in
the handler, a stranger's 20 MB bundle was received and parsed first, and forty at once took 4 GB of
memory). An accepted call runs with its caller known (:data:`CALLER`, :data:`ORGANISER`), and an
author has at most :data:`CALLS_PER_AUTHOR` calls under way at once.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import grpc

from arena.competition.desk_port import Desk
from arena.ledger import competitions as store
from arena.service.listener_caps import marking

if TYPE_CHECKING:
    from typing import TypeAlias

    Handler: TypeAlias = grpc.RpcMethodHandler[Any, Any]  # not subscriptable at run time

Context = grpc.aio.ServicerContext[Any, Any]

# The author the interceptor found for the call under way (set in the call's own handler task).
CALLER: contextvars.ContextVar[store.Author | None] = contextvars.ContextVar("caller", default=None)
# Whether the call under way carries the organiser's token (set as CALLER is).
ORGANISER: contextvars.ContextVar[bool] = contextvars.ContextVar("organiser", default=False)

# An author's calls under way at a time. Each Submit holds its bundle (up to the cap) in memory until
# the author's earlier ones are taken in, one at a time: forty at once of 19 MB each took the server
# past 4 GB. Counted before a request is read, as the token is checked.
CALLS_PER_AUTHOR = 4

# The calls anyone may make, with no author's token: the public board.
PUBLIC_METHODS = frozenset({"/arena.v1.Competition/Leaderboard"})
# The calls only the organiser may make, with the organiser's token (an author's is refused).
ORGANISER_METHODS = frozenset(
    f"/arena.v1.Competition/{name}"
    for name in (
        "SetPaused", "OrganiserStatus", "Suspend", "Reinstate", "AddAuthor", "ListAuthors",
    )
)  # fmt: skip
# Either token: whose it is.
WHO_AM_I = "/arena.v1.Competition/WhoAmI"


ORGANISER_ONLY = (
    "this call needs the organiser's token (arena compete serve shows it on its first start, or "
    "takes one with --organiser-token-file)"
)


def bearer(metadata: Any) -> str:
    """The token a call's metadata carries ("authorization: Bearer <token>"), "" for none."""
    given = dict(metadata or ()).get("authorization", "")
    return given.removeprefix("Bearer ").strip() if isinstance(given, str) else ""


async def find_author(
    desk: Desk, metadata: Any, known: KnownAuthors | None = None
) -> tuple[store.Author | None, str]:
    """The author whose token the call's metadata carries; (None, why) when there is none. With
    ``known``, an author found before is not looked up again, and a lookup waits for the one before."""
    token = bearer(metadata)
    if token:
        if known is not None:
            author = await known.find(desk, token)
        else:
            author = await desk.author_of(token)
        if author is not None:
            return author, ""
    given_one = (
        "the token given is no author's of this competition"
        if token
        else "an author's token is needed (metadata 'authorization: Bearer <token>')"
    )
    return None, f"{given_one}; the organiser gives one with: arena compete author add NAME"


class KnownAuthors:
    """The authors whose tokens have been seen, by their token's hash, and the lookups of the others
    one at a time. Every call with a wrong token costs a lookup on the ledger's one thread, where the
    competition records its games and submissions: a flood of them, all at once, queued that many
    lookups ahead of the competition's own work. Now a flood waits here, in the event loop, with one
    lookup of the ledger at a time; an author's calls after the first are not looked up at all (an
    author's token is never revoked), and an author added while the server runs is found at once."""

    def __init__(self) -> None:
        self.by_hash: dict[str, store.Author] = {}
        self._turn = asyncio.Lock()

    async def find(self, desk: Desk, token: str) -> store.Author | None:
        digest = store.hash_token(token)
        author = self.by_hash.get(digest)
        if author is None:
            async with self._turn:
                author = await desk.author_of(token)
            if author is not None:
                self.by_hash[digest] = author
        return author


class AuthorGuard(grpc.aio.ServerInterceptor):
    """Checks the author's token from the call's metadata, before its request is read: a refused
    call's handler reads nothing (it is request-streaming, and aborts without taking a message), so
    its body never reaches the server's memory whole. An accepted call runs with its author known
    (:data:`CALLER`)."""

    def __init__(self, desk: Desk, on_authenticated: Callable[[str], None] | None = None) -> None:
        self.desk = desk
        self.known = KnownAuthors()
        self.under_way: Counter[int] = Counter()  # each author's calls under way, by id
        self.on_authenticated = on_authenticated  # the listener's guard, told of a token shown

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Handler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> Handler | None:
        metadata = handler_call_details.invocation_metadata
        method = handler_call_details.method
        if method in ORGANISER_METHODS or method == WHO_AM_I:
            if self.desk.is_organiser(bearer(metadata)):
                handler = await continuation(handler_call_details)
                if handler is None or handler.unary_unary is None:
                    return handler
                if self.on_authenticated is not None:
                    return marking(_as_organiser(handler), self.on_authenticated)
                return _as_organiser(handler)
            if method != WHO_AM_I:
                return _refuse(ORGANISER_ONLY, grpc.StatusCode.PERMISSION_DENIED)
        author, refusal = await find_author(self.desk, metadata, self.known)
        if (
            author is None
            and handler_call_details.method in PUBLIC_METHODS
            and not dict(metadata or ()).get("authorization")
        ):
            # Anyone's call, with no token (a wrong one is refused, as on every call): its request
            # is a few bytes.
            return await continuation(handler_call_details)
        if author is None:
            return _refuse(refusal)
        handler = await continuation(handler_call_details)
        if handler is None or handler.unary_unary is None:
            return handler  # unknown method: UNIMPLEMENTED (the service has unary calls only)
        if self.on_authenticated is not None:
            return marking(_as(author, handler, self.under_way), self.on_authenticated)
        return _as(author, handler, self.under_way)


def _refuse(refusal: str, code: grpc.StatusCode = grpc.StatusCode.UNAUTHENTICATED) -> Handler:
    async def abort(requests: object, context: Context) -> None:
        await context.abort(code, refusal)

    # No deserializer either: nothing of the request is ever taken.
    return grpc.stream_unary_rpc_method_handler(abort)


def _as(author: store.Author, handler: Handler, under_way: Counter[int]) -> Handler:
    """``handler`` run with ``author`` as the caller, when the author has fewer than
    :data:`CALLS_PER_AUTHOR` calls ``under_way``: counted before the request is read (the handler
    takes its request as a stream of one message, read only when asked), so that a call past them
    is refused with its body still on the wire."""
    behaviour: Any = handler.unary_unary  # a coroutine function on grpc.aio (the stubs say not)

    async def call(requests: AsyncIterator[Any], context: Context) -> Any:
        if under_way[author.id] >= CALLS_PER_AUTHOR:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"you have {CALLS_PER_AUTHOR} calls under way, the most at a time; "
                "wait for one to end",
            )
        under_way[author.id] += 1
        try:
            request = await anext(aiter(requests), None)
            if request is None:
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the call has no request")
            CALLER.set(author)  # the handler's own task: no other call sees it
            return await behaviour(request, context)
        finally:
            under_way[author.id] -= 1
            if not under_way[author.id]:
                del under_way[author.id]

    return grpc.stream_unary_rpc_method_handler(
        call,
        request_deserializer=handler.request_deserializer,
        response_serializer=handler.response_serializer,
    )


def _as_organiser(handler: Handler) -> Handler:
    """``handler`` run as the organiser's call; its request (a few bytes) read as an author's is."""
    behaviour: Any = handler.unary_unary

    async def call(requests: AsyncIterator[Any], context: Context) -> Any:
        request = await anext(aiter(requests), None)
        if request is None:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the call has no request")
        ORGANISER.set(True)  # the handler's own task: no other call sees it
        return await behaviour(request, context)

    return grpc.stream_unary_rpc_method_handler(
        call,
        request_deserializer=handler.request_deserializer,
        response_serializer=handler.response_serializer,
    )

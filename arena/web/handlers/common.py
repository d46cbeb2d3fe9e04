"""What every handler of the web app uses: the app's state, rendering a page, reading a request's
parameters, and the number formats the pages and templates share."""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

from arena.web import queries as q
from arena.web.area import AuthorArea
from arena.web.game_counts import Tally
from arena.web.live import Referee
from arena.web.reader import Reader

REPLAYS_KEPT = 64  # replays kept built (each is some hundreds of kilobytes of JSON)


class BadRequest(ValueError):
    """A query parameter that cannot be used; the message names it."""


class FrameCache:
    """The last replays served (building one steps through the whole game), least recently used out."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> bytes | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: Hashable, value: bytes) -> bytes:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value


@dataclass(frozen=True, slots=True)
class WebState:
    """The app's state, made once by :func:`arena.web.app.create_app` and kept on ``app.state.web``:
    the ledger read-only, its incremental counts, the referee followed live (None: none), the
    templates, the replays kept built, and the author area."""

    reader: Reader
    tally: Tally
    referee: Referee | None
    templates: Jinja2Templates
    replays: FrameCache
    area: AuthorArea | None = None  # the author area (arena web --submissions), None: none


def state(request: Request) -> WebState:
    """The state of the app serving ``request``."""
    found: WebState = request.app.state.web
    return found


def page(request: Request, name: str, status: int = 200, **context: Any) -> Response:
    st = state(request)
    return st.templates.TemplateResponse(
        request,
        name,
        {"live": st.referee is not None, "area": st.area is not None, **context},
        status_code=status,
    )


# ---------------------------------------------------------------- formats


def number(value: float | None, places: int = 2) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return f"{value:.{places}f}"


def percent(value: float | None) -> str:
    return "" if value is None else f"{100 * value:.1f}%"


# ---------------------------------------------------------------- parameters


def int_param(request: Request, name: str, minimum: int = 0) -> int | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return None
    value = q.whole_number(raw)
    if value is None or value < minimum:
        raise BadRequest(
            f"{name} must be a whole number of at least {minimum}, got {q.cap(raw, 40)!r}"
        )
    return value


def path_int(request: Request, name: str = "id") -> int:
    value: int = request.path_params[name]
    if value >= 2**63:  # no row has such an id (SQLite's integers are 64-bit)
        raise q.NotFound(f"nothing at {q.cap(request.url.path, 100)}")
    return value


def search_param(request: Request, name: str = "q") -> str | None:
    """A name searched for (spaces around it dropped), None when empty."""
    raw = request.query_params.get(name, "").strip()
    if not raw:
        return None
    if len(raw) > q.MAX_SEARCH:
        raise BadRequest(f"{name} must be at most {q.MAX_SEARCH} characters, got {len(raw)}")
    return raw

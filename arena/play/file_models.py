"""What tournament and competition files share: TOML reading, the pydantic models of their common
tables, and error messages in the words of the arena ("file: field: expected ..."), every problem of a
file at once."""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Generic, Literal, TypeVar

import pydantic
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from arena.bots.limits import Limits
from arena.common.bounds import MAX_MB, MAX_MS
from arena.referee import FailurePolicy, Policies, TimeControl

# The largest file read: a thousand entrants take some hundred kilobytes.
MAX_FILE_BYTES = 16 * 2**20


# A competition pairs whoever is free, game by game, and keeps no pairing of three for several games in
# a row; a series (docs/rules.md §3.2) needs one (a tournament's pairing plays it).
SERIES_IN_COMPETITIONS = (
    "consultation = 'series' seats the same three players game after game by the results of the "
    "games before; a competition pairs the entrants anew for each game, so it plays "
    "consultation = 'per-game' (a tournament or arena match plays the series)"
)
# A tournament's series is a pairing's games in a row, seated by the results, not by the rotations of
# duplicate deals.
SERIES_WITH_DUPLICATE = (
    "consultation = 'series' seats the players by the results of the pairing's games before, "
    "not by rotating the seats on each deal: set duplicate = false"
)


def read_toml(path: str | Path, error: type[ValueError]) -> dict[str, Any]:
    """A TOML file's data, or ``error`` naming the file and what is wrong with it."""
    p = Path(path)
    try:
        with p.open("rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)  # not all of /dev/zero or another endless file
        if len(data) > MAX_FILE_BYTES:
            raise error(f"{p}: larger than a file the arena reads ({MAX_FILE_BYTES // 2**20} MiB)")
        if data.startswith(b"SQLite format 3\0"):
            raise error(
                f"{p}: a SQLite database (a ledger?), not a TOML file; give a ledger with --ledger"
            )
        text = data.decode("utf-8")
    except OSError as exc:
        raise error(f"{p}: cannot read the file: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise error(f"{p}: not UTF-8 text (byte {exc.start}): save it as UTF-8") from exc
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{p}: not valid TOML: {exc}") from exc


def _printable(value: str) -> str:
    """Names and commands are shown in terminals and pages: an escape sequence in one would act."""
    for c in value:
        if not c.isprintable():
            raise ValueError(f"must be printable text, without control characters (found {c!r})")
    return value


Text = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1), AfterValidator(_printable)
]
Count = Annotated[int, Field(ge=0)]
Milliseconds = Annotated[int, Field(ge=0, le=MAX_MS)]
Mebibytes = Annotated[int, Field(ge=0, le=MAX_MB)]
PolicyName = Literal["forfeit", "random-action"]

STRICT = ConfigDict(extra="forbid", strict=True)


class TimeControlModel(BaseModel):
    model_config = STRICT
    budget_ms: Milliseconds = TimeControl().budget_ms
    bank_ms: Milliseconds = TimeControl().bank_ms
    grace_ms: Milliseconds = TimeControl().grace_ms


class PoliciesModel(BaseModel):
    model_config = STRICT
    on_timeout: PolicyName = "forfeit"
    on_illegal_action: PolicyName = "forfeit"
    on_crash: PolicyName = "forfeit"
    on_protocol_error: PolicyName = "forfeit"
    max_strikes: Count = Policies().max_strikes


def _limits_model() -> type[BaseModel]:
    """The [limits] table, field for field from :class:`Limits` (its own checks run after)."""
    spec: dict[str, Any] = {}
    for f in fields(Limits):
        default = getattr(Limits(), f.name)
        if isinstance(default, bool):
            spec[f.name] = (bool, default)
        elif f.name.endswith("_mb"):
            spec[f.name] = (Mebibytes, default)
        elif isinstance(default, int):
            spec[f.name] = (Count, default)
        else:
            spec[f.name] = (str, default)
    return pydantic.create_model("LimitsModel", __config__=STRICT, **spec)


if TYPE_CHECKING:
    LimitsModel = BaseModel
else:
    LimitsModel = _limits_model()


def to_policies(m: PoliciesModel) -> Policies:
    return Policies(
        on_timeout=FailurePolicy(m.on_timeout),
        on_illegal_action=FailurePolicy(m.on_illegal_action),
        on_crash=FailurePolicy(m.on_crash),
        on_protocol_error=FailurePolicy(m.on_protocol_error),
        max_strikes=m.max_strikes,
    )


def checked(
    problems: list[tuple[str, str]], time_control: BaseModel, limits: BaseModel
) -> tuple[TimeControl | None, Limits | None]:
    """The time control and limits, their own checks' failures added to ``problems``."""
    tc = lim = None
    try:
        tc = TimeControl(**time_control.model_dump())
    except ValueError as exc:
        problems.append(("time_control", str(exc)))
    try:
        lim = Limits(**limits.model_dump())
    except ValueError as exc:  # a line a problem, "<field> must be ...": name the field
        for line in str(exc).splitlines():
            name = line.split(" ", 1)[0]
            problems.append(
                (f"limits.{name}" if name in type(limits).model_fields else "limits", line)
            )
    return tc, lim


def describe_errors(
    exc: pydantic.ValidationError,
    root: type[BaseModel],
    source: str,
    data: Mapping[str, Any] | None = None,
) -> str:
    """One line per field with a problem (a union reports each of its branches: one line). With the
    file's ``data``, a field of an entrant also names it (``entrants[2].command ('mybot')``)."""
    found: dict[str, str] = {}
    for err in exc.errors():
        where, message = _describe(err, root)
        found.setdefault(where + _entrant_named(tuple(err["loc"]), data), message)
    return "\n".join(f"{source}: {k}: {m}" for k, m in found.items())


def entrant_field(index: int, name: str, field: str) -> str:
    """Where a field of the ``index``-th entrant is, for an error: ``entrants[2].command ('mybot')``
    (the index counts from 0, as the file's tables are a list)."""
    return f"entrants[{index}].{field} ({name!r})"


def _entrant_named(loc: tuple[int | str, ...], data: Mapping[str, Any] | None) -> str:
    """`` ('NAME')`` for a field of an entrant that has a name, but its name itself; else ""."""
    if data is None or len(loc) < 3 or loc[0] != "entrants" or not isinstance(loc[1], int):
        return ""
    items = data.get("entrants")
    if loc[2] == "name" or not isinstance(items, list) or not 0 <= loc[1] < len(items):
        return ""
    item = items[loc[1]]
    name = item.get("name") if isinstance(item, dict) else None
    return f" ({name!r})" if isinstance(name, str) and name.strip() else ""


_TYPES = {
    "int": "an integer",
    "bool": "true or false",
    "string": "a string",
    "dict": "a table",
    "list": "a list of tables",
    "model": "a table",
}


def _location(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("int", "str", "float", "function-after[...]"):
            continue  # union branches
        else:
            out += f".{part}" if out else str(part)
    return out


def _known(root: type[BaseModel], loc: tuple[int | str, ...]) -> str:
    """The fields expected at the table holding ``loc``."""
    model: type[BaseModel] = root
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        annotation = model.model_fields[str(part)].annotation
        inner = getattr(annotation, "__args__", None)
        candidate = inner[0] if inner else annotation
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            model = candidate
    return ", ".join(model.model_fields)


def _describe(err: Any, root: type[BaseModel]) -> tuple[str, str]:
    """(field, message) for one of pydantic's errors, in the words of this module."""
    loc = tuple(err["loc"])
    where = _location(loc)
    kind = err["type"]
    given = err.get("input")
    ctx = err.get("ctx") or {}
    if loc and loc[-1] in ("str", "int", "float"):  # the branches of a string-or-number field
        return where, f"expected a string or a number, got {given!r}"
    if kind == "missing":
        what = (
            "at least one [[entrants]] table with a name and a command"
            if where == "entrants"
            else "a string"
        )
        return where, f"missing; expected {what}"
    if kind == "extra_forbidden":
        return where, f"unknown field; expected one of {_known(root, loc)}"
    if kind == "literal_error":
        expected = str(ctx.get("expected", "")).replace("'", "")
        return where, f"expected one of {expected}, got {given!r}"
    if kind in _BOUNDS:
        bound = next(iter(ctx.values()))
        number = "a number" if isinstance(bound, float) else "an integer"  # a fraction's bound: 1.0
        return where, f"expected {number} {_BOUNDS[kind]} {bound}, got {given!r}"
    if kind in ("too_short", "too_long") and where == "entrants":
        bound = f"at most {ctx.get('max_length')}" if kind == "too_long" else "at least one"
        return where, f"expected {bound} [[entrants]] tables with a name and a command"
    if kind == "string_too_short":
        return where, f"expected a non-empty string, got {given!r}"
    if kind == "value_error":  # a validator of ours: its own words, without pydantic's prefix
        return where, str(ctx.get("error", err["msg"]))
    for prefix, words in _TYPES.items():
        if kind.startswith(prefix):
            if prefix in ("dict", "model") and where and "." not in where and "[" not in where:
                return where, f"expected {words} ([{where}]), got {given!r}"
            if prefix == "list" and where == "entrants":
                return where, "expected [[entrants]] tables with a name and a command"
            return where, f"expected {words}, got {given!r}"
    return where, str(err["msg"])


_BOUNDS = {
    "greater_than_equal": ">=",
    "greater_than": ">",
    "less_than_equal": "<=",
    "less_than": "<",
}


_Model = TypeVar("_Model", bound=BaseModel)
_Spec = TypeVar("_Spec")
# The checks the model alone cannot make, and the spec made from a model that passes them:
# (problems as (field, message), the spec or None when there are problems).
Checks = Callable[[_Model, str], tuple[list[tuple[str, str]], _Spec | None]]


class SpecFile(Generic[_Model, _Spec]):
    """One kind of arena file (a tournament's, a competition's): reading it, validating it against
    its model with every problem named at once (``FILE: field: message``), and its JSON Schema for
    editors."""

    def __init__(
        self,
        title: str,
        model: type[_Model],
        error: type[ValueError],
        checks: Checks[_Model, _Spec],
        default_source: str,
    ) -> None:
        self.title = title
        self.model = model
        self.error = error
        self.checks = checks
        self.default_source = default_source

    def json_schema(self) -> dict[str, Any]:
        schema = self.model.model_json_schema()
        schema["title"] = self.title
        return schema

    def load(self, path: str | Path) -> _Spec:
        """Read and validate a file."""
        return self.parse(read_toml(path, self.error), str(path))

    def parse(self, data: dict[str, Any], source: str | None = None) -> _Spec:
        source = self.default_source if source is None else source
        try:
            model = self.model.model_validate(data)
        except pydantic.ValidationError as exc:
            raise self.error(describe_errors(exc, self.model, source, data)) from None
        problems, spec = self.checks(model, source)
        if problems or spec is None:
            raise self.error("\n".join(f"{source}: {k}: {m}" for k, m in problems))
        return spec

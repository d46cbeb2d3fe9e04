"""The Python SDK on its own: ``pip install ./clients/python`` brings gRPC, protobuf and the bot
protocol and nothing of the arena's server; the rules engine is a package of its own beside it
(``clients/python/engine``); both ship the arena's own files (links), so that the SDK and the server in
one process share one registration of each ``.proto`` file; the SDK's plain values say what the
engine's say."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.game import Combo, GameState, Verb, observe, variant
from arena.game.cards import ANY_COPY, SUIT_CHARS, kind_text, ref_text
from arena.sandbox import probe
from arena.wire.serde import action_to_pb, observation_to_pb

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "clients" / "python"
ENGINE = SDK / "engine"
README = SDK / "README.md"

# What importing the SDK may load of the arena's package: the protocol's modules it ships.
SHIPPED = {
    "arena",
    "arena.wire",
    "arena.wire.v1",
    "arena.wire.v1.bot_pb2",
    "arena.wire.v1.bot_pb2_grpc",
    "arena.wire.v1.game_pb2",
}
# The server's own dependencies, none of which a bot needs.
SERVER_ONLY = (
    "starlette",
    "uvicorn",
    "pydantic",
    "trueskill",
    "typer",
    "rich",
    "jinja2",
    "sqlite_utils",
)

IMPORTS = """
import json, sys
import arena_bot, arena_bot.first_bot, arena_bot.random_bot
print(json.dumps({m: getattr(sys.modules[m], "__file__", None) for m in sorted(sys.modules)}))
"""


def imported(python: str, env: dict[str, str] | None = None) -> dict[str, str | None]:
    out = subprocess.run(
        [python, "-c", IMPORTS],
        capture_output=True,
        text=True,
        check=True,
        cwd="/",
        env=env,
        timeout=120,
    ).stdout
    modules: dict[str, str | None] = json.loads(out)
    return modules


def test_the_sdk_imports_nothing_of_the_arena_beyond_the_protocol() -> None:
    modules = imported(sys.executable)
    arena = {m for m in modules if m == "arena" or m.startswith("arena.")}
    assert arena <= SHIPPED, sorted(arena - SHIPPED)
    assert not [m for m in modules if m.split(".")[0] in SERVER_ONLY]


def test_the_sdk_and_the_server_share_one_registration_of_each_proto_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """protobuf refuses a second, different registration of a .proto file's name in one process
    (TypeError: duplicate file name): the SDK imports the arena's generated modules, and the files it
    ships are those very files, so loading its copy beside the server's registers nothing new."""
    import importlib.util

    from google.protobuf import descriptor_pool

    import arena.service.server  # noqa: F401  (the whole server, with the SDK, in one process)
    import arena_bot.sdk
    from arena.wire.v1 import admin_pb2, bot_pb2, game_pb2

    sdk = vars(arena_bot.sdk)  # the modules the SDK imported
    assert sdk["bot_pb2"] is bot_pb2 and sdk["game_pb2"] is game_pb2
    assert admin_pb2.DESCRIPTOR.pool is descriptor_pool.Default()
    for module, message in ((bot_pb2, "DecisionRequest"), (game_pb2, "Observation")):
        found = descriptor_pool.Default().FindFileByName(module.DESCRIPTOR.name)
        assert found.serialized_pb == module.DESCRIPTOR.serialized_pb
        shipped = SDK / "arena" / "wire" / "v1" / Path(module.__file__ or "").name
        spec = importlib.util.spec_from_file_location(f"shipped_{shipped.stem}", shipped)
        assert spec is not None and spec.loader is not None
        copy = importlib.util.module_from_spec(spec)
        monkeypatch.setattr(sys, "dont_write_bytecode", True)  # no __pycache__ beside the links
        spec.loader.exec_module(copy)  # the shipped file, executed again: the same registration
        assert copy.DESCRIPTOR.serialized_pb == module.DESCRIPTOR.serialized_pb
        assert getattr(copy, message) is getattr(module, message)  # the very same class


def test_what_the_packages_ship_is_the_arenas_own_files() -> None:
    """No copy of the generated code or of the engine: every file of the SDK's and the engine's
    ``arena`` folders is a link into the arena's package."""
    found = [*(SDK / "arena").rglob("*"), *(ENGINE / "arena").rglob("*")]
    paths = [p for p in found if "__pycache__" not in p.parts]  # bytecode Python wrote there
    links = [p for p in paths if p.is_symlink()]
    assert len(links) == 9, links  # 7 protocol files, the engine's package, its serde module
    for path in paths:
        if path.is_file() or path.is_symlink():
            assert path.is_symlink(), f"{path} is a copy, not a link"
    for link in links:
        target = link.resolve()
        assert target.exists() and target.is_relative_to(ROOT / "arena"), (link, target)
        assert not Path(os.readlink(link)).is_absolute(), link
    assert (ENGINE / "arena" / "game").resolve() == ROOT / "arena" / "game"


def test_the_sdks_values_say_what_the_engines_say() -> None:
    """A request's view and legal actions read by the SDK alone (cards as texts) against the engine's
    values of the same position, at every decision of seeded games of several variants."""
    from arena_bot.values import legal_actions, read_view

    rng = random.Random(5)
    checked = counted = inquiries = 0
    games = [("two-handed", {}), ("rubicon", {}), ("polish", {})]
    for name, options in [*games, ("four-handed-partners", {"inquiry": "on"})]:
        state = GameState.new(variant(name, **options), seed=11)
        while not state.is_terminal():
            seat = state.to_act
            obs = observe(state, seat)
            legal = state.legal_actions()
            view = read_view(observation_to_pb(obs), ["a", "b"])
            assert view.hand == tuple(ref_text(r) for r in obs.hand)
            assert view.seat == seat and view.to_act == obs.to_act and view.phase == obs.phase
            assert view.trump == obs.trump and view.stock_size == obs.stock_size
            assert view.turn_up == (None if obs.turn_up is None else ref_text(obs.turn_up))
            assert view.trick == tuple((s, ref_text(c)) for s, c in obs.trick)
            assert view.last_trick_winner == obs.last_trick_winner and view.log == ("a", "b")
            assert [s.table for s in view.seats] == [
                tuple(ref_text(c) for c, _ in s.table) for s in obs.seats
            ]
            assert [s.total for s in view.seats] == [s.total for s in obs.seats]
            assert [s.brisques for s in view.seats] == [s.brisques for s in obs.seats]
            counted += any(s.brisques is not None for s in view.seats)
            for mine, theirs in zip(
                legal_actions(action_to_pb(a) for a in legal), legal, strict=True
            ):
                assert mine.text == theirs.text == str(mine)
                assert mine.verb == theirs.verb.name.lower()
                declared = theirs.verb is Verb.DECLARE
                assert mine.combo == (Combo(theirs.combo).text if declared else "")
                assert mine.cards == tuple(ref_text(r) for r in theirs.refs)
                inquiries += mine.verb == "inquire"
            state.apply(rng.choice(legal))
            checked += 1
    assert checked > 400 and counted > 0 and inquiries > 0  # Rubicon's brisques, inquiries


def test_the_card_helpers_follow_the_engines_numbers() -> None:
    from arena_bot import RANKS, SUITS, card_kind, card_pack, card_rank, card_suit

    assert SUITS == SUIT_CHARS
    for ref in range(ANY_COPY + 32):
        text = ref_text(ref)
        kind = ref - ANY_COPY if ref >= ANY_COPY else ref & 31
        assert card_kind(text) == kind_text(kind)
        assert card_pack(text) == (None if ref >= ANY_COPY else ref // 32 + 1)
        assert card_rank(text) == kind & 7 and RANKS[card_rank(text)] == text[0]
        assert card_suit(text) == SUIT_CHARS[kind >> 3]


def test_the_engine_bot_and_the_plain_bot_read_one_request_alike() -> None:
    """The same request read by a Bot and by an EngineBot: the same cards and actions."""
    from arena_bot import Bot
    from arena_bot.engine import EngineBot

    state = GameState.new(variant("two-handed"), seed=3)
    obs, legal = observe(state, state.to_act), state.legal_actions()
    message, actions = observation_to_pb(obs), [action_to_pb(a) for a in legal]
    plain, engine = Bot(), EngineBot()
    assert engine.view_from(message, ["x"]) == obs._replace(log=("x",))
    assert engine.legal_from(actions) == legal
    assert [a.text for a in plain.legal_from(actions)] == [a.text for a in legal]
    assert plain.view_from(message, []).hand == tuple(ref_text(r) for r in obs.hand)


def test_what_decide_returns_is_sent_as_its_text_or_refused_by_name() -> None:
    from arena_bot import Action, Bot
    from arena_bot.engine import EngineBot
    from arena_bot.sdk import _reply_text

    class Odd(Bot):
        name = "odd"

    plain = Action("play QS", "play", "", ("QS",))
    assert _reply_text(Odd(), plain) == "play QS" and _reply_text(Odd(), "done") == "done"
    engine_action = GameState.new(variant("two-handed"), seed=1).legal_actions()[0]
    assert _reply_text(EngineBot(), engine_action) == engine_action.text
    with pytest.raises(
        TypeError, match=r"^Odd\.decide\(\) must return an action or an action's text, got None$"
    ):
        _reply_text(Odd(), None)


# ---------------------------------------------------------------------------- a fresh environment


def readme_bot(heading: str = "## Writing a bot") -> str:
    """The first Python block of a section of the SDK's README (by default the ten-line bot)."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index(heading) :]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found is not None
    return found.group(1)


def sources(into: Path) -> Path:
    """What ``pip install ./clients/python ./clients/python/engine`` reads, copied with its links
    into ``into`` (pip builds in the source folder: the checkout stays as it is)."""
    skip = shutil.ignore_patterns("__pycache__", "build", "*.egg-info", "*.so", "node_modules")
    shutil.copytree(SDK, into / "clients" / "python", symlinks=True, ignore=skip)
    for part in ("game", "wire"):
        shutil.copytree(ROOT / "arena" / part, into / "arena" / part, symlinks=True, ignore=skip)
    return into


def check_bot(command: str) -> subprocess.CompletedProcess[str]:
    sandbox = "required" if probe("auto").isolated else "none"
    return subprocess.run(
        [str(Path(sys.executable).parent / "arena"), "check-bot", command, "--sandbox", sandbox],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


@pytest.mark.slow
def test_a_fresh_environment_with_only_the_sdk_plays_and_then_simulates(tmp_path: Path) -> None:
    src = sources(tmp_path / "src")
    env_dir = tmp_path / "botenv"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True, timeout=300)
    python = str(env_dir / "bin" / "python")
    pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, "./clients/python"], cwd=src, check=True, timeout=900)

    listed = subprocess.run(
        [python, "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    names = {line.split("==")[0].lower() for line in listed.split()}
    assert {"arena-bot", "grpcio", "protobuf"} <= names
    assert not names & {"bezique-arena", "arena-bot-engine", *SERVER_ONLY}, names

    # Alone: nothing of the arena but the protocol it ships, all of it from its own environment.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GRPC_EXPERIMENTS")}
    modules = imported(python, env)
    arena = {m: f for m, f in modules.items() if m == "arena" or m.startswith("arena.")}
    assert set(arena) <= SHIPPED, sorted(set(arena) - SHIPPED)
    assert all(f is None or f.startswith(str(env_dir)) for f in arena.values()), arena
    assert not [m for m in modules if m.split(".")[0] in SERVER_ONLY]
    # gRPC's transport: the SDK's choice is the arena's (arena/__init__.py).
    ask = "import os, {}; print(os.environ['GRPC_EXPERIMENTS'])"

    def away(*argv: str) -> subprocess.CompletedProcess[str]:
        """Outside the checkout: python -c imports from its working folder first."""
        return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path)

    chosen = away(python, "-c", ask.format("arena_bot")).stdout
    arenas = away(sys.executable, "-c", ask.format("arena")).stdout
    assert chosen == arenas and chosen.strip()
    # Without the engine, the engine's module says what to install.
    missing = away(python, "-c", "import arena_bot.engine")
    assert missing.returncode != 0
    assert "pip install ./clients/python/engine" in missing.stderr.strip().splitlines()[-1]
    # So do the example bots that simulate, run as the README runs them (their own imports of the
    # engine's modules once came first, and a bare "No module named 'arena.game'" was all it said).
    for bot in ("greedy_bot", "expert_bot", "search_bot"):
        run = away(python, "-m", f"arena_bot.{bot}", "--help")
        assert run.returncode != 0
        assert "pip install ./clients/python/engine" in run.stderr.strip().splitlines()[-1], bot
    # Beside the arena's own package (on the path first or not), the arena's modules are imported
    # and the protocol is registered once.
    beside = subprocess.run(
        [python, "-c", "import arena_bot, arena.wire.v1.bot_pb2 as b; print(b.__file__)"],
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": str(ROOT)},
        cwd=tmp_path,
        check=True,
    ).stdout
    assert beside.strip() == str(ROOT / "arena" / "wire" / "v1" / "bot_pb2.py")

    # The random bot and the README's bot pass the referee's conformance check (sandboxed where
    # the machine can: the sandbox shows a bot the environment of the interpreter it names).
    checked = check_bot(f"{python} -m arena_bot.random_bot")
    assert checked.returncode == 0 and " 0 mistakes" in checked.stdout, checked.stdout
    mine = tmp_path / "mybot" / "bot.py"  # a folder of its own, beside the environment
    mine.parent.mkdir()
    mine.write_text(readme_bot())
    checked = check_bot(f"{python} {mine}")
    assert checked.returncode == 0 and " 0 mistakes" in checked.stdout, checked.stdout

    # With the engine beside it, the bots that simulate run too.
    subprocess.run([*pip, "./clients/python/engine"], cwd=src, check=True, timeout=900)
    checked = check_bot(f"{python} -m arena_bot.greedy_bot")
    assert checked.returncode == 0 and " 0 mistakes" in checked.stdout, checked.stdout
    engine_bot = tmp_path / "engine-bot" / "bot.py"
    engine_bot.parent.mkdir()
    engine_bot.write_text(readme_bot("## Bots that simulate"))
    checked = check_bot(f"{python} {engine_bot}")
    assert checked.returncode == 0 and " 0 mistakes" in checked.stdout, checked.stdout

"""Before any game reaches a cluster: Ray stays out of a local run, a run without Ray or with an address
that does not answer fails at once with a clear error (exit 2) and leaves the ledger alone, a
tournament file's cluster field is checked, and the bots' folders are packed and found again on the
node as they should be."""

from __future__ import annotations

import asyncio
import io
import os
import shlex
import socket
import stat
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from arena.bots.launcher import resolve_paths
from arena.cluster import shipping
from arena.cluster.address import address_problem
from arena.cluster.connect import connect
from arena.cluster.errors import ClusterError
from arena.tournament.spec import TournamentFileError, load

TIMEOUT = 120  # seconds for one arena command on a loaded machine (Ray alone would wait minutes)


def tournament(directory: Path, extra: str = "") -> Path:
    path = directory / "t.toml"
    path.write_text(
        'name = "t"\nvariant = "rubicon"\n' + extra + "\n"
        '[[entrants]]\nname = "a"\ncommand = "{python} -m arena_bot.first_bot"\n'
        '[[entrants]]\nname = "b"\ncommand = "{python} -m arena_bot.greedy_bot"\n'
    )
    return path


def arena(*args: str, prelude: str = "") -> subprocess.CompletedProcess[str]:
    code = f"{prelude}\nimport sys\nfrom arena.cli.main import app\nsys.argv = ['arena', *{list(args)!r}]\napp()"
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT
    )


@pytest.mark.slow
def test_the_arena_command_does_not_import_ray() -> None:
    code = "import sys, arena.cli.main, arena.cluster, arena.tournament.runner; print('ray' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert out.stdout.strip() == "False", out.stderr


@pytest.mark.slow
def test_without_ray_a_cluster_run_fails_at_once(tmp_path: Path) -> None:
    ledger = tmp_path / "l.sqlite"
    # As on a machine without the extra: importing ray fails.
    out = arena(
        "run", str(tournament(tmp_path)), "--cluster", "auto", "--ledger", str(ledger),
        prelude="import sys; sys.modules['ray'] = None",
    )  # fmt: skip
    assert out.returncode == 2, out.stdout + out.stderr
    assert "needs Ray" in out.stderr and "bezique-arena[cluster]" in out.stderr
    assert not ledger.exists(), "nothing was written"


@pytest.mark.slow
def test_a_file_that_asks_for_a_cluster_without_ray_fails_the_same(tmp_path: Path) -> None:
    out = arena(
        "run", str(tournament(tmp_path, 'cluster = "auto"')), "--ledger", str(tmp_path / "l"),
        prelude="import sys; sys.modules['ray'] = None",
    )  # fmt: skip
    assert out.returncode == 2 and "needs Ray" in out.stderr, out.stdout + out.stderr


@pytest.mark.slow
def test_an_address_where_nothing_listens_fails_at_once(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port of this machine that nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ledger = tmp_path / "l.sqlite"
    out = arena(
        "run", str(tournament(tmp_path)), "--cluster", f"127.0.0.1:{port}", "--ledger", str(ledger)
    )
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"cannot reach the Ray cluster at 127.0.0.1:{port}" in out.stderr
    assert not ledger.exists()


@pytest.mark.slow
def test_a_competition_server_without_a_cluster_to_reach_fails_at_once(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ledger = tmp_path / "l.sqlite"
    competition = tmp_path / "c.toml"
    competition.write_text(f'name = "c"\n[server]\ncluster = "127.0.0.1:{port}"\n')
    out = arena("compete", "serve", str(competition), "--ledger", str(ledger))
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"cannot reach the Ray cluster at 127.0.0.1:{port}" in out.stderr
    assert not ledger.exists(), "nothing was written"
    # A malformed address in the file is refused by name, before anything is written.
    competition.write_text('name = "c"\n[server]\ncluster = "my cluster"\n')
    out = arena("compete", "serve", str(competition), "--ledger", str(ledger))
    assert out.returncode == 2 and "cluster" in out.stderr and "my cluster" in out.stderr


@pytest.mark.slow
def test_an_address_that_is_not_ray_fails_at_once(tmp_path: Path) -> None:
    with socket.socket() as listener:  # it accepts connections but never speaks gRPC
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        out = arena(
            "run", str(tournament(tmp_path)), "--cluster", f"127.0.0.1:{port}",
            "--ledger", str(tmp_path / "l.sqlite"),
        )  # fmt: skip
    assert out.returncode == 2, out.stdout + out.stderr
    assert "no Ray cluster answers" in out.stderr


def test_a_malformed_address_is_named(tmp_path: Path) -> None:
    out = arena("run", str(tournament(tmp_path)), "--cluster", "my cluster", "--ledger", "x")
    assert out.returncode == 2
    assert "bad cluster address" in out.stderr and "'my cluster'" in out.stderr


@pytest.mark.parametrize(
    ("address", "ok"),
    [
        ("auto", True),
        ("local", True),
        ("10.0.0.5:6379", True),
        ("head.example:6379", True),
        ("ray://head.example:10001", True),
        ("[::1]:6379", True),
        ("head.example", False),
        ("ray://head.example", False),
        ("head:0", False),
        ("head:70000", False),
        ("http://head:6379", False),
        ("", False),
        # host names that the connection cannot encode (a UnicodeError, not an OSError, came out of
        # the connection check)
        ("head..example:6379", False),
        (".:6379", False),
        ("ray://head..example:10001", False),
        (f"{'x' * 64}.example:6379", False),
        (f"{'x' * 63}.example:6379", True),
        ("head.example.:6379", True),
    ],
)
def test_addresses(address: str, ok: bool) -> None:
    assert (address_problem(address) == "") is ok


def test_a_host_name_that_cannot_be_encoded_is_a_clear_error() -> None:
    with pytest.raises(ClusterError, match=r"bad cluster address: 'head\.\.example' is not a host"):
        connect("head..example:6379")


def test_the_file_field_is_checked_and_is_not_part_of_the_identity(tmp_path: Path) -> None:
    spec = load(tournament(tmp_path, 'cluster = "ray://head:10001"'))
    assert spec.cluster == "ray://head:10001"
    assert "cluster" not in spec.to_dict(), "the same tournament may move between machines"
    assert load(tournament(tmp_path)).to_dict() == spec.to_dict()
    with pytest.raises(TournamentFileError, match=r"t\.toml: cluster: expected auto"):
        load(tournament(tmp_path, 'cluster = "head"'))


# ---------------------------------------------------------------- the bots' files


def folder_with_a_bot(base: Path) -> Path:
    bot = base / "bots" / "mine"
    (bot / "lib").mkdir(parents=True)
    (bot / "main.py").write_text("import lib.helper\n")
    (bot / "lib" / "helper.py").write_text("X = 1\n")
    (bot / ".git").mkdir()
    (bot / ".git" / "config").write_text("secret\n")
    (bot / "ledger.sqlite").write_text("the ledger\n")
    (bot / "ledger.sqlite-wal").write_text("its journal\n")
    return bot


def names(data: bytes) -> set[str]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return set(tar.getnames())


def test_a_bots_folder_goes_whole_without_the_ledger(tmp_path: Path) -> None:
    bot = folder_with_a_bot(tmp_path)
    templates = [
        "{python} bots/mine/main.py --depth 3",
        "{python} bots/mine/lib/helper.py",  # inside a folder shipped anyway
        "{python} -m arena_bot.first_bot",  # nothing to ship
        "/usr/bin/env node missing.js",  # a path that does not exist here: the node's business
    ]
    shipment = shipping.Shipment.for_commands(templates, tmp_path, [bot / "ledger.sqlite"])
    assert list(shipment.parcels) == [bot.resolve()]
    parcel = shipment.parcels[bot.resolve()]
    assert names(parcel.data) == {"main.py", "lib", "lib/helper.py"}


def test_a_command_is_carried_in_portable_words_and_resolved_on_the_node(tmp_path: Path) -> None:
    bot = folder_with_a_bot(tmp_path)
    shipment = shipping.Shipment.for_commands(["{python} bots/mine/main.py"], tmp_path)
    digest = shipment.parcels[bot.resolve()].digest
    # as the runner resolves it for this machine (resolve_paths: {python} is left for the node)
    here = resolve_paths("{python} bots/mine/main.py --x {token}", tmp_path)
    words = shipment.portable(here)
    assert words == ("{python}", f"{{shipped:{digest}}}/main.py", "--x", "{token}")
    assert shipment.digests(words) == {digest}
    node = tmp_path / "node" / digest
    shipping.unpack(shipment.parcels[bot.resolve()].data, node)
    command = shipping.resolve(words, {digest: node})
    assert shlex.split(command) == ["{python}", str(node / "main.py"), "--x", "{token}"]
    assert (node / "lib" / "helper.py").read_text() == "X = 1\n"
    assert not (node / ".git").exists()
    # words that name nothing shipped pass as they are
    assert shipment.portable("/usr/bin/node bot.js") == ("/usr/bin/node", "bot.js")


def test_a_bot_folder_that_is_a_link_is_played_from_the_node_s_copy(tmp_path: Path) -> None:
    """The folder is packed by its real path; the command, made absolute, names it through the
    link: the word went to the node unchanged, a path of the coordinator's that a node lacks."""
    bot = folder_with_a_bot(tmp_path / "elsewhere")
    (tmp_path / "t" / "bots").mkdir(parents=True)
    (tmp_path / "t" / "bots" / "mine").symlink_to(bot)
    base = tmp_path / "t"
    shipment = shipping.Shipment.for_commands(["{python} bots/mine/main.py"], base)
    digest = shipment.parcels[bot.resolve()].digest
    words = shipment.portable(resolve_paths("{python} bots/mine/main.py bots/mine", base))
    assert words == ("{python}", f"{{shipped:{digest}}}/main.py", f"{{shipped:{digest}}}")


def test_a_command_s_own_placeholder_like_words_pass_as_they_are(tmp_path: Path) -> None:
    """A bundle's run line is its author's: a word written like a parcel's placeholder named that
    parcel on the node (its folder shown to the bot) or, naming none, failed every game with a
    KeyError; it reaches the bot as written, as it does locally."""
    bot = folder_with_a_bot(tmp_path)
    shipment = shipping.Shipment.for_commands(["{python} bots/mine/main.py"], tmp_path)
    digest = shipment.parcels[bot.resolve()].digest
    node = tmp_path / "node" / digest
    for word in (f"{{shipped:{digest}}}/main.py", "{shipped:nothing}", "{shipped:}x"):
        words = shipment.portable(f"/usr/bin/env bot {shlex.quote(word)}")
        assert shipment.digests(words) == set()
        assert shlex.split(shipping.resolve(words, {digest: node})) == ["/usr/bin/env", "bot", word]


def test_an_unchanged_folder_ships_as_the_same_parcel_at_another_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A node keeps what it unpacked by digest: the same folder packed for a later run (gzip's header
    holds a time of its own) is the same parcel."""
    bot = folder_with_a_bot(tmp_path)
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now)
    first = shipping.Shipment.for_commands(["{python} bots/mine/main.py"], tmp_path)
    monkeypatch.setattr(time, "time", lambda: now + 3600)
    again = shipping.Shipment.for_commands(["{python} bots/mine/main.py"], tmp_path)
    assert again.parcels[bot.resolve()] == first.parcels[bot.resolve()]


def parcel_of(*entries: tuple[str, bytes | None, int | str]) -> bytes:
    """A parcel made by hand: (name, content, mode) for a file, (name, None, "dir"), or (name,
    None, "->target") for a symbolic link, ("=>target") for a hard link, ("fifo") for a pipe."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, content, kind in entries:
            info = tarfile.TarInfo(name)
            info.uid, info.gid, info.uname, info.gname = 4242, 4242, "someone", "others"
            if kind == "dir":
                info.type, info.mode = tarfile.DIRTYPE, 0o700
            elif kind == "fifo":
                info.type = tarfile.FIFOTYPE
            elif isinstance(kind, str) and kind.startswith("->"):
                info.type, info.linkname = tarfile.SYMTYPE, kind[2:]
            elif isinstance(kind, str) and kind.startswith("=>"):
                info.type, info.linkname = tarfile.LNKTYPE, kind[2:]
            else:
                assert isinstance(kind, int) and content is not None
                info.mode, info.size = kind, len(content)
            tar.addfile(info, io.BytesIO(content) if content is not None else None)
    return buffer.getvalue()


def test_a_parcel_cannot_write_outside_its_folder(tmp_path: Path) -> None:
    with pytest.raises(tarfile.TarError):
        shipping.unpack(parcel_of(("../escaped", b"x", 0o644)), tmp_path / "in")
    assert not (tmp_path / "escaped").exists()


# Deep enough that a path through them passes PATH_MAX, where os.path.realpath stops resolving
# (how tarfile's data filter was got round: CVE-2025-4517).
LONG = "d" * 247
STEPS = "/".join([LONG] * 16)


@pytest.mark.parametrize(
    "entries",
    [
        [("a/../../escaped", b"x", 0o644)],
        [("python", None, "->/usr/bin/python3")],
        [("up", None, "->../..")],
        [("lib", None, "dir"), ("lib/up", None, "->../../escaped")],
        [("pipe", None, "fifo")],
        [("hard", None, "=>../escaped")],
        [("s/", None, "->..")],  # a trailing slash: the link is "s", at the top
        [("a", None, "->b/.."), ("b", None, "->.")],  # up through a link made afterwards
        [("parent", None, "->.."), ("parent/escaped", b"x", 0o644)],
        # a link within the folder, then a file written through it
        [("lib", None, "dir"), ("l", None, "->lib"), ("l/x", b"x", 0o644)],
        # a hard link to a link (dangling here, out of the folder one level up), then its mode
        [("x/y/s", None, "->../../victim"), ("h", None, "=>x/y/s")],
        [("long", None, "->x" + "/." * 2100), ("x", b"x", 0o6755)],  # too long a target
        [("twice", b"a", 0o644), ("twice", b"b", 0o644)],
        [(STEPS, None, "dir"), ("e", None, "->" + STEPS + "/../../../../" * 5 + "victim")],
    ],
    ids=lambda entries: entries[-1][0][:30],
)
def test_what_a_node_refuses_to_unpack(
    tmp_path: Path, entries: list[tuple[str, bytes | None, int | str]]
) -> None:
    """An entry that would land outside the parcel's folder, write through a link, link out of the
    folder (or through a link and then up), is a device or a pipe, or is named twice, is refused,
    and nothing is written outside the folder."""
    victim = tmp_path / "victim"
    victim.write_text("v")
    victim.chmod(0o600)
    into = tmp_path / "node" / "parcel"
    with pytest.raises(tarfile.TarError):
        shipping.unpack(parcel_of(*entries), into)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["node", "victim"]
    assert list((tmp_path / "node").iterdir()) == []  # nothing left of the parcel either
    assert victim.read_text() == "v" and stat.S_IMODE(victim.stat().st_mode) == 0o600


def test_a_node_unpacks_folders_files_links_and_modes(tmp_path: Path) -> None:
    """Folders readable by all (a bot under a uid of its own must read them); a file's mode as
    tarfile's data filter makes it (no set-uid bit, no write but the owner's, executable only if
    the owner may execute); links within the folder as they are; a hard link as a copy; no owner
    of the archive's."""
    shipping.unpack(
        parcel_of(
            ("lib", None, "dir"),
            ("lib/helper.py", b"X = 1\n", 0o4777),  # set-uid, writable by all
            ("main.py", b"import lib.helper\n", 0o640),
            ("data", b"d", 0o066),  # neither readable nor writable by its owner
            ("run", b"#!/bin/sh\n", 0o711),
            ("deep/er/file", b"f", 0o644),  # its folders are not in the archive
            ("same", None, "=>main.py"),
            ("helper", None, "->lib/helper.py"),
            ("lib/up", None, "->../main.py"),
            ("lib/loop", None, "->loop"),
        ),
        tmp_path / "node",
    )
    node = tmp_path / "node"
    modes = {
        name: stat.S_IMODE((node / name).lstat().st_mode)
        for name in ("lib", "deep", "deep/er", "lib/helper.py", "main.py", "data", "run", "same")
    }
    assert modes == {
        "lib": 0o755,
        "deep": 0o755,
        "deep/er": 0o755,
        "lib/helper.py": 0o755,
        "main.py": 0o640,
        "data": 0o644,
        "run": 0o711,
        "same": 0o644,  # the hard link's own mode (a default TarInfo's)
    }
    assert (node / "same").read_text() == "import lib.helper\n"
    assert not (node / "same").samefile(node / "main.py")
    assert os.readlink(node / "helper") == "lib/helper.py"
    assert (node / "helper").read_text() == "X = 1\n"
    assert (node / "lib" / "up").read_text() == "import lib.helper\n"
    assert os.readlink(node / "lib" / "loop") == "loop"
    assert (node / "deep" / "er" / "file").read_text() == "f"
    if os.getuid() == 0:  # (as anyone else, every file is that user's anyway)
        assert {p.lstat().st_uid for p in node.rglob("*")} == {0}


@pytest.mark.parametrize(
    ("name", "target", "why"),
    [
        ("l", "lib/helper.py", ""),
        ("lib/l", "../main.py", ""),
        ("a/b/l", "../../x", ""),
        ("a/b/l", "./../.././x", ""),  # "." is no step
        ("l", "loop", ""),
        ("l", "", "a link to nothing"),
        ("l", "/usr/bin/python3", "a link to an absolute path"),
        ("l", "..", "a link out of the folder"),
        ("a/l", "../..", "a link out of the folder"),
        ("l", "lib/../main.py", "a link through .. after a folder's name"),
        ("l", STEPS + "/../../victim", "a link through .. after a folder's name"),
    ],
)
def test_which_links_a_node_unpacks(name: str, target: str, why: str) -> None:
    """Judged on the words: climbing only at the start, never above the folder."""
    problem = shipping.link_problem(name, target)
    assert problem.startswith(why) and bool(problem) == bool(why), problem


def test_a_parcel_is_unpacked_whole_or_not_at_all(tmp_path: Path) -> None:
    """A parcel refused half-way leaves nothing (a worker tries it again afresh); one unpacked is
    renamed into place whole, readable by every uid."""
    into = tmp_path / "node" / "parcel"
    good = parcel_of(("main.py", b"x", 0o644), ("lib", None, "dir"), ("lib/a.py", b"a", 0o644))
    with pytest.raises(tarfile.TarError, match="named twice"):
        shipping.unpack(parcel_of(("a", b"1", 0o644), ("a", b"2", 0o644)), into)
    assert not into.exists() and list(into.parent.iterdir()) == []
    shipping.unpack(good, into)
    assert (into / "lib" / "a.py").read_text() == "a"
    assert stat.S_IMODE(into.stat().st_mode) == 0o755
    assert list(into.parent.iterdir()) == [into]


def test_more_than_is_ever_shipped_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More bytes of files than the coordinator ever packs (a sparse entry of a few bytes packed can
    unpack to gigabytes) are refused."""
    monkeypatch.setattr(shipping, "MAX_BYTES", 1000)
    with pytest.raises(tarfile.TarError, match="more than is shipped"):
        shipping.unpack(
            parcel_of(("a", b"x" * 600, 0o644), ("b", b"y" * 600, 0o644)), tmp_path / "node"
        )
    assert list(tmp_path.iterdir()) == []


def test_a_broken_parcel_is_a_tar_error(tmp_path: Path) -> None:
    """Whatever is wrong with the bytes, the node's worker gets a TarError naming it."""
    good = parcel_of(("main.py", b"x" * 5000, 0o644))
    for broken in (good[: len(good) // 2], b"not a parcel", good[:10] + b"\0" * 100):
        with pytest.raises(tarfile.TarError):
            shipping.unpack(broken, tmp_path / "node")
        assert list(tmp_path.iterdir()) == []


def test_a_leading_slash_is_dropped(tmp_path: Path) -> None:
    shipping.unpack(parcel_of(("/tmp/absolute", b"x", 0o644)), tmp_path / "node")
    assert (tmp_path / "node" / "tmp" / "absolute").read_text() == "x"


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda bot: (bot / "python").symlink_to("/usr/bin/python3"), "a link to an absolute path"),
        (lambda bot: (bot / "up").symlink_to("../.."), "a link out of the folder"),
        (lambda bot: (bot / "odd").symlink_to("lib/../main.py"), "a link through .. after a"),
        (lambda bot: os.mkfifo(bot / "pipe"), "a special file"),
    ],
)
def test_what_a_node_cannot_unpack_is_refused_when_packed(
    tmp_path: Path, make: Callable[[Path], object], why: str
) -> None:
    """A node refuses to unpack these (:func:`shipping.unpack`): every game of the bot failed on the
    nodes ("cannot unpack the bots' files here"); the coordinator says so at once."""
    bot = folder_with_a_bot(tmp_path)
    (bot / "inside").symlink_to("lib/helper.py")  # a link within the folder goes as it is
    shipment = shipping.Shipment.for_commands(["{python} bots/mine/main.py"], tmp_path)
    shipping.unpack(shipment.parcels[bot.resolve()].data, tmp_path / "node")
    assert (tmp_path / "node" / "inside").read_text() == "X = 1\n"
    make(bot)
    with pytest.raises(ClusterError, match=rf"the bot folder .*mine holds .*{why}"):
        shipping.Shipment.for_commands(["{python} bots/mine/main.py"], tmp_path)
    with pytest.raises(ClusterError, match=why):
        shipping.Shipment.parcel(bot)


def test_a_link_in_a_loop_goes_as_a_link(tmp_path: Path) -> None:
    """Path.resolve raises RuntimeError on a loop of links: packing such a folder was a traceback."""
    bot = folder_with_a_bot(tmp_path)
    (bot / "loop").symlink_to("loop")
    (bot / "lib" / "a").symlink_to("b")
    (bot / "lib" / "b").symlink_to("a")
    shipment = shipping.Shipment.for_commands(["{python} bots/mine/main.py"], tmp_path)
    shipping.unpack(shipment.parcels[bot.resolve()].data, tmp_path / "node")
    assert os.readlink(tmp_path / "node" / "loop") == "loop"
    assert os.readlink(tmp_path / "node" / "lib" / "a") == "b"


def test_a_huge_folder_is_refused_with_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder_with_a_bot(tmp_path)
    monkeypatch.setattr(shipping, "MAX_BYTES", 10)
    with pytest.raises(ClusterError, match=r"the bot folder .*mine holds more than"):
        shipping.Shipment.for_commands(["{python} bots/mine/main.py"], tmp_path)


# A loop policy such as uvloop's, which a Ray worker makes its default when uvloop is installed: its
# loops start no process with process_group, and it has no child watcher for asyncio's own loop.
FOREIGN_POLICY = """
import asyncio, sys
from asyncio.events import BaseDefaultEventLoopPolicy


class Refusing(asyncio.SelectorEventLoop):
    def subprocess_exec(self, *args, **kwargs):
        if "process_group" in kwargs:
            raise ValueError("unexpected kwargs: process_group")
        return super().subprocess_exec(*args, **kwargs)


class Foreign(BaseDefaultEventLoopPolicy):
    _loop_factory = Refusing


asyncio.set_event_loop_policy(Foreign())
"""


@pytest.mark.parametrize("sandbox", ["none", "auto"])
def test_a_node_starts_bots_under_a_worker_s_foreign_loop_policy(sandbox: str) -> None:
    """A node's referee runs on asyncio's own loop whatever policy its Ray worker installed (without
    it, every light bot fails to start there: 'unexpected kwargs: process_group')."""
    code = FOREIGN_POLICY + (
        "from arena.bots.limits import Limits\n"
        "from arena.cluster.node import NodeReferee\n"
        "from arena.referee import MatchConfig\n"
        "referee = NodeReferee()\n"
        f"command = sys.executable + ' -m arena_bot.first_bot'\n"
        "failures = referee.preflight({'first': command}, MatchConfig(variant='two-handed'),\n"
        f"                             Limits(sandbox={sandbox!r}), 1)\n"
        "print('failures', failures)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, done.stderr
    assert "failures []" in done.stdout, done.stdout + done.stderr


# ---------------------------------------------------------------- isolation on every node


def test_a_node_that_cannot_isolate_refuses_a_game_whose_bots_must_be(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With sandbox "auto", a node without bubblewrap ran its games' bots in the light mode (the
    node's files and network, the cluster's own services among them), while the node that had
    checked the entrants, and told the organiser so, isolated them."""
    from types import SimpleNamespace

    from arena.cluster import node as node_side
    from arena.sandbox import Probe

    here = {"id": "n", "address": "10.0.0.9", "host": "bare"}
    monkeypatch.setattr(node_side, "probe", lambda requested: Probe(requested, False, "no bwrap"))
    monkeypatch.setattr(node_side, "_node", lambda arena: here)
    refused = r"node bare \(10\.0\.0\.9\) cannot isolate the bots .*no bwrap"
    rules: Any = SimpleNamespace(limits=SimpleNamespace(sandbox="auto"))
    with pytest.raises(node_side.NodeError, match=refused):
        node_side.play(rules, Any, {}, {}, "", isolated=True)
    with pytest.raises(node_side.NodeError, match=refused):
        node_side.check_isolation("required", False, here)
    node_side.check_isolation("auto", False, here)  # light where the checked node was light too
    node_side.check_isolation("none", False, here)


# ---------------------------------------------------------------- the coordinator's memory


def test_the_coordinator_keeps_no_parcel_s_bytes_once_they_are_in_the_object_store(
    tmp_path: Path,
) -> None:
    """Each parcel (up to MAX_BYTES) stayed in the coordinator's memory as well as in the object
    store, for as long as it ran: a competition ships every build it plays."""
    from types import SimpleNamespace

    from arena.cluster.player import ClusterPlayer

    put: list[bytes] = []

    def remote(fn: object) -> Any:
        return SimpleNamespace(options=lambda **_: fn)

    def keep(data: bytes) -> int:
        put.append(data)
        return len(put)

    ray = SimpleNamespace(exceptions=SimpleNamespace(), remote=remote, put=keep)
    cluster: Any = SimpleNamespace(ray=ray)
    bot = folder_with_a_bot(tmp_path)
    shipment = shipping.Shipment.for_commands(["{python} bots/mine/main.py"], tmp_path)
    packed = shipment.parcels[bot.resolve()].data
    player = ClusterPlayer(cluster, shipment, 2)
    other = tmp_path / "other"
    (other / "lib").mkdir(parents=True)
    (other / "main.py").write_text("pass\n")
    asyncio.run(player.ship(other))
    assert put[0] == packed and len(put) == 2 and all(put)
    assert [p.data for p in player.shipment.parcels.values()] == [b"", b""]
    here = resolve_paths("{python} other/main.py", tmp_path)
    digest = player.shipment.parcels[other.resolve()].digest
    assert player.shipment.portable(here)[1] == f"{{shipped:{digest}}}/main.py"


# ---------------------------------------------------------------- the node's disk


def test_a_worker_keeps_a_bounded_number_of_unpacked_parcels(tmp_path: Path) -> None:
    """A worker process unpacked every parcel of every game it played and removed none before it
    exited: a long competition filled each node's disk, once per worker process."""
    from arena.cluster import node as node_side

    referee = node_side.NodeReferee()
    parcels = []
    for i in range(node_side.KEEP_PARCELS + 6):
        bot = tmp_path / f"bot{i}"
        bot.mkdir()
        (bot / "main.py").write_text(f"print({i})\n")
        parcels.append(shipping.Shipment.parcel(bot))
    first = parcels[0]
    for parcel in parcels:
        wanted = {first.digest: first.data, parcel.digest: parcel.data}  # one bot plays throughout
        folders = referee.unpacked(wanted, lambda data: data)
        assert (folders[parcel.digest] / "main.py").exists()
        assert (folders[first.digest] / "main.py").exists()
    assert referee.parcel_dir is not None
    unpacked = [p for p in referee.parcel_dir.iterdir() if p.is_dir()]
    assert len(unpacked) == node_side.KEEP_PARCELS + 2
    assert (referee.parcel_dir / first.digest).is_dir(), "the one in use stays"
    # while a referee runs, its waiting bot processes may use any of them: none is removed
    referee.manager = Any
    referee.unpacked({parcels[1].digest: parcels[1].data}, lambda data: data)
    assert len([p for p in referee.parcel_dir.iterdir() if p.is_dir()]) == len(unpacked) + 1
    referee.manager = None

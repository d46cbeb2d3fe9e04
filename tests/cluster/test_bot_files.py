"""The bots' files on their way to a node: a bot's folder packed once by the coordinator (never the
ledger, never what the node would refuse), commands carried in portable words, and a parcel unpacked
on the node, where nothing may land outside its folder; the coordinator keeps no parcel's bytes, and
a node keeps a bounded number of unpacked parcels."""

from __future__ import annotations

import asyncio
import io
import os
import shlex
import stat
import tarfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from arena.bots.launcher import resolve_paths
from arena.cluster import bot_files as shipping
from arena.cluster.errors import ClusterError

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

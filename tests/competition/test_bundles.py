"""Submission bundles are hostile (issue 15): path traversal, links out, special files, size and file
count caps are refused before anything is written; a good bundle round-trips through pack and the
content-addressed store."""

from __future__ import annotations

import gzip
import io
import os
import socket
import tarfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from arena.competition.bundles import (
    MANIFEST,
    BundleError,
    Store,
    digest,
    pack,
    parse_manifest,
    unpack,
)

GOOD = 'name = "tiny"\nversion = "1"\nlanguage = "python"\nrun = "{python} bot.py"\n'
MB = 1024 * 1024


def tar_of(*members: tuple[tarfile.TarInfo, bytes | None]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.addfile(info)
    return buf.getvalue()


def file(name: str, data: bytes = b"x") -> tuple[tarfile.TarInfo, bytes]:
    return tarfile.TarInfo(name), data


def manifest() -> tuple[tarfile.TarInfo, bytes]:
    return file(MANIFEST, GOOD.encode())


def special(name: str, kind: bytes, link: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    return info, None


@pytest.mark.parametrize(
    ("members", "message"),
    [
        ([manifest(), file("../evil.py")], "a path outside the bundle"),
        ([manifest(), file("a/../../evil.py")], "a path outside the bundle"),
        ([manifest(), file("/etc/evil")], "a path outside the bundle"),
        ([manifest(), special("link", tarfile.SYMTYPE, "/etc/passwd")], "a link"),
        ([manifest(), special("hard", tarfile.LNKTYPE, "arena-bot.toml")], "a link"),
        ([manifest(), special("dev", tarfile.CHRTYPE)], "a special file"),
        ([manifest(), special("fifo", tarfile.FIFOTYPE)], "a special file"),
        ([file("bot.py")], f"no {MANIFEST}"),
        ([manifest(), file("big.bin", b"\0" * (2 * MB))], "over the limit of"),
        ([manifest(), *(file(f"f{i}") for i in range(20))], "over the limit of 10 files"),
    ],
    ids=[
        "dotdot",
        "nested-dotdot",
        "absolute",
        "symlink",
        "hardlink",
        "device",
        "fifo",
        "no-manifest",
        "too-big",
        "too-many",
    ],
)
def test_hostile_bundles_are_refused_before_anything_is_written(
    tmp_path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]], message: str
) -> None:
    into = tmp_path / "out"
    with pytest.raises(BundleError, match=message):
        unpack(tar_of(*members), into, max_files=10, max_bytes=MB)
    assert not into.exists()
    assert not (tmp_path / "evil.py").exists()


def test_garbage_is_not_a_bundle(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match="zip: a bundle is a gzip-compressed tar"):
        unpack(b"PK\x03\x04 not a tarball" * 10, tmp_path / "out", 10, MB)
    with pytest.raises(BundleError, match=r"^a bundle is a gzip-compressed tar"):
        unpack(b"not a tarball" * 10, tmp_path / "out", 10, MB)
    with pytest.raises(BundleError, match="not a readable gzip-compressed tar archive"):
        unpack(b"\x1f\x8b not a tarball" * 10, tmp_path / "out", 10, MB)


def test_a_lying_header_is_caught_while_writing(tmp_path: Path) -> None:
    """Sizes are counted from the headers and again from the bytes actually written."""
    data = tar_of(manifest(), file("a", b"y" * 1000))
    with pytest.raises(BundleError, match="over the limit"):
        unpack(data, tmp_path / "out", 10, 900)


def test_a_good_bundle_round_trips(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "lib").mkdir(parents=True)
    (src / MANIFEST).write_text(GOOD)
    (src / "bot.py").write_text("print('hi')\n")
    (src / "lib" / "util.py").write_text("X = 1\n")
    (src / "run.sh").write_text("#!/bin/sh\n")
    (src / "run.sh").chmod(0o755)
    data = pack(src, MB)
    store = Store(tmp_path / "store")
    sha, m, folder = store.put(data, 10, MB)
    assert (m.name, m.version, m.language, m.run) == ("tiny", "1", "python", "{python} bot.py")
    assert (folder / "lib" / "util.py").read_text() == "X = 1\n"
    assert folder.name == sha and (tmp_path / "store" / f"{sha}.tar.gz").read_bytes() == data
    assert (folder / "run.sh").stat().st_mode & 0o111
    assert not (folder / "bot.py").stat().st_mode & 0o222, "unpacked files are read-only"
    assert store.put(data, 10, MB)[0] == sha, "the same content is stored once"
    assert pack(src, MB) == data, "packing is deterministic"


def test_the_same_bundle_submitted_at_once_is_stored_once_for_every_submission(
    tmp_path: Path,
) -> None:
    """Two authors who submit the same files (the example bot, say) at the same moment: each
    submission stores and unpacks the bundle in a thread of its own, and each gets it whole."""
    src = tmp_path / "src"
    (src / "lib").mkdir(parents=True)
    (src / MANIFEST).write_text(GOOD)
    for i in range(200):
        (src / "lib" / f"m{i}.py").write_text(f"X = {i}\n" * 50)
    data = pack(src, 10 * MB)
    store = Store(tmp_path / "store")
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda _: store.put(data, 1000, 10 * MB), range(8)))
    assert {sha for sha, _, _ in got} == {digest(data)}
    folder = got[0][2]
    assert all(f == folder for _, _, f in got)
    assert len(list((folder / "lib").iterdir())) == 200
    assert sorted(p.name for p in (tmp_path / "store").iterdir()) == [
        digest(data),
        f"{digest(data)}.tar.gz",
    ], "nothing half-done is left"


def test_what_a_killed_server_left_half_unpacked_goes_at_the_next_start(tmp_path: Path) -> None:
    root = tmp_path / "store"
    for stale in (root / ".0123456789abcdef.work-x1y2" / "bundle", root / f".{'a' * 64}.tmp"):
        stale.mkdir(parents=True)
        (stale / "bot.py").write_text("half")
    (root / "kept.tar.gz").write_bytes(b"x")
    Store(root)
    assert [p.name for p in root.iterdir()] == ["kept.tar.gz"]


def test_the_same_files_packed_at_another_time_are_the_same_bundle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bundle's digest names its content: packing the same folder an hour later (gzip's header
    holds a time of its own) gives the same bytes."""
    src = tmp_path / "src"
    src.mkdir()
    (src / MANIFEST).write_text(GOOD)
    (src / "bot.py").write_text("print('hi')\n")
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now)
    first = pack(src, MB)
    monkeypatch.setattr(time, "time", lambda: now + 3600)
    assert pack(src, MB) == first


def test_pack_refuses_links(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / MANIFEST).write_text(GOOD)
    (src / "secret").symlink_to("/etc/hostname")
    with pytest.raises(BundleError, match="symbolic link") as refused:
        pack(src, MB)
    assert "npm" not in str(refused.value)


def test_the_links_npm_makes_are_refused_saying_how_to_do_without(tmp_path: Path) -> None:
    """Plain npm ci makes node_modules/.bin links: a bot carrying its node_modules packed so is told
    what to run instead, by pack and by the server."""
    src = tmp_path / "src"
    (src / "node_modules" / ".bin").mkdir(parents=True)
    (src / MANIFEST).write_text(GOOD)
    (src / "node_modules" / ".bin" / "tool").symlink_to("../tool/cli.js")
    with pytest.raises(BundleError, match="npm ci --no-bin-links"):
        pack(src, MB)
    link = special("node_modules/.bin/tool", tarfile.SYMTYPE, "../tool/cli.js")
    with pytest.raises(BundleError, match=r"a link; .*npm ci --no-bin-links"):
        unpack(tar_of(manifest(), link), tmp_path / "out", 10, MB)


def test_a_bundle_of_the_folder_instead_of_its_contents_says_how_to_pack_it(
    tmp_path: Path,
) -> None:
    """``tar czf bot.tar.gz js-bot`` packs the folder: refused (a bundle's paths are its bot's, from
    the root), naming the manifest found and the command that packs the contents."""
    data = tar_of(
        special("js-bot", tarfile.DIRTYPE),
        file(f"js-bot/{MANIFEST}", GOOD.encode()),
        file("js-bot/bot.js"),
    )
    with pytest.raises(BundleError, match=f"no {MANIFEST} at the bundle's root") as refused:
        unpack(data, tmp_path / "out", 10, MB)
    message = str(refused.value)
    assert f"js-bot/{MANIFEST}" in message
    assert "tar czf bot.tar.gz -C js-bot ." in message
    assert not (tmp_path / "out").exists()
    # Two folders, or a folder without the manifest: nothing to suggest.
    for members in (
        [file(f"a/{MANIFEST}", GOOD.encode()), file("b/bot.py")],
        [file("js-bot/bot.js")],
    ):
        with pytest.raises(BundleError, match=f"^no {MANIFEST} at the bundle's root$"):
            unpack(tar_of(*members), tmp_path / "out", 10, MB)


def test_a_bundle_of_the_folders_contents_is_accepted(tmp_path: Path) -> None:
    """What the README says to run: ``tar czf bot.tar.gz -C js-bot .`` (names start with ./)."""
    src = tmp_path / "js-bot"
    src.mkdir()
    (src / MANIFEST).write_text(GOOD)
    (src / "bot.py").write_text("print('hi')\n")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(src, arcname=".")
    assert unpack(buf.getvalue(), tmp_path / "out", 10, MB).name == "tiny"
    assert (tmp_path / "out" / "bot.py").read_text() == "print('hi')\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name = 'x'", "version"),
        (GOOD.replace('"tiny"', '"../up"'), "name: expected 1-64 letters"),
        (GOOD.replace('"python"', '"cobol"'), "language: expected one of python, node"),
        (GOOD.replace('run = "{python} bot.py"', 'run = ""'), "run: missing"),
        (GOOD + "colour = 'red'\n", "unknown field"),
        (GOOD.replace("bot.py", "bot.py {token}"), "never put on a command line"),
        ("not toml [", "not valid TOML"),
        # The sandbox shows a bot every path its command names: '..' showed the data folder.
        (GOOD.replace("bot.py", "bot.py ../.."), "'../..' names a path outside the bundle"),
        (GOOD.replace("bot.py", "bot.py /srv"), "'/srv' names a path outside the bundle"),
        (GOOD.replace("bot.py", "bot.py --data=x/../../y"), "outside the bundle"),
        (GOOD.replace("bot.py", "bot.py ~/x"), "outside the bundle"),
        (GOOD + 'build = "cp -r .. here"\n', "build: '..' names a path outside the bundle"),
        (GOOD.replace("bot.py", "bot.py 'open"), "run: not a command line"),
    ],
)
def test_manifest_errors_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(BundleError, match=message):
        parse_manifest(text)


def test_a_command_naming_the_bundles_own_files_is_accepted() -> None:
    text = GOOD.replace("bot.py", "bot.py --depth=3 data/book.txt ./x..y") + 'build = "make ."\n'
    manifest = parse_manifest(text)
    assert manifest.run == "{python} bot.py --depth=3 data/book.txt ./x..y"
    assert manifest.build == "make ."


def test_a_numeric_version_reads_as_text() -> None:
    assert parse_manifest(GOOD.replace('"1"', "2.5")).version == "2.5"


def test_a_manifest_that_is_not_utf8_is_refused_every_time(tmp_path: Path) -> None:
    """A Latin-1 'café' in a comment: read leniently the first time it was accepted, and the same
    bytes submitted again (the store's already-stored path reads strictly) failed with a decoding
    error the author never saw. Refused with a BundleError whenever it comes, and nothing is kept."""
    data = tar_of(file(MANIFEST, GOOD.encode() + "# café\n".encode("latin-1")))
    message = r"arena-bot.toml: not UTF-8 text \(byte 0xe9 on line 5\)"
    with pytest.raises(BundleError, match=message):
        unpack(data, tmp_path / "out", 10, MB)
    assert not (tmp_path / "out").exists()
    store = Store(tmp_path / "store")
    for _ in range(2):
        with pytest.raises(BundleError, match=message):
            store.put(data, 10, MB)
    assert not store.folder(digest(data)).exists()
    # One kept by an earlier server, which read it leniently, is refused too.
    kept = store.folder(digest(data))
    kept.mkdir()
    (kept / MANIFEST).write_bytes(GOOD.encode() + "# café\n".encode("latin-1"))
    with pytest.raises(BundleError, match=message):
        store.put(data, 10, MB)


def test_the_file_count_is_refused_before_the_other_headers_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A small gzip can hold hundreds of thousands of empty entries: reading every header before
    counting them cost seconds of CPU and the memory of each. The count is refused at the first
    entry over the cap, with the headers after it never read."""
    data = tar_of(manifest(), *(file(f"f{i}", b"") for i in range(2000)))
    read = 0
    real = tarfile.TarInfo.fromtarfile.__func__  # the header reader, which counts them here

    def counted(cls: type[tarfile.TarInfo], tar: tarfile.TarFile) -> tarfile.TarInfo:
        nonlocal read
        read += 1
        return real(cls, tar)

    monkeypatch.setattr(tarfile.TarInfo, "fromtarfile", classmethod(counted))
    with pytest.raises(BundleError, match="over the limit of 10 files"):
        unpack(data, tmp_path / "out", max_files=10, max_bytes=MB)
    assert read <= 11, f"{read} headers read to refuse more than 10 entries"
    assert not (tmp_path / "out").exists()


def test_pack_keeps_every_name_of_a_hard_linked_file(tmp_path: Path) -> None:
    """A folder copied with cp -al (or laid out by pnpm) holds files with two names: tar makes the
    second a link, which pack neither added nor refused, and the file was missing from the bot."""
    src = tmp_path / "src"
    (src / "lib").mkdir(parents=True)
    (src / MANIFEST).write_text(GOOD)
    (src / "shared.py").write_text("X = 1\n")
    os.link(src / "shared.py", src / "lib" / "helper.py")  # packed first: shared.py is the link
    data = pack(src, MB)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        assert all(m.isfile() or m.isdir() for m in tar.getmembers())
    unpack(data, tmp_path / "out", 10, MB)
    for name in ("shared.py", "lib/helper.py"):
        assert (tmp_path / "out" / name).read_text() == "X = 1\n"


@pytest.mark.parametrize(
    ("kind", "message"), [("fifo", "a named pipe"), ("socket", "a socket")], ids=["fifo", "socket"]
)
def test_pack_refuses_special_files_by_name(tmp_path: Path, kind: str, message: str) -> None:
    """A dev server's socket or a named pipe left in a bot's folder: refused, naming the file (a
    named pipe was left out silently; a socket stopped arena compete submit with a traceback)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / MANIFEST).write_text(GOOD)
    if kind == "fifo":
        os.mkfifo(src / "pipe")
        name = "pipe"
    else:
        name = "dev.sock"
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(str(src / name))
    with pytest.raises(BundleError, match=f"^{name}: {message}; bundles hold plain files"):
        pack(src, MB)


def extended_bomb(kind: bytes, size: int) -> bytes:
    """A bundle whose first entry is an extended header (pax or GNU long name) of ``size`` bytes."""
    head = tarfile.TarInfo("p")
    head.type = kind
    head.size = size
    body = head.tobuf(tarfile.USTAR_FORMAT) + b"0" * size + bytes(-size % 512)
    info, data = manifest()
    info.size = len(data)
    body += info.tobuf(tarfile.USTAR_FORMAT) + data + bytes(-len(data) % 512) + bytes(1024)
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb") as gz:
        gz.write(body)
    return buf.getvalue()


@pytest.mark.parametrize(
    ("kind", "size"),
    [(tarfile.XHDTYPE, 128 * 1024), (tarfile.GNUTYPE_LONGNAME, 4 * MB)],
    ids=["pax", "gnu-long-name"],
)
def test_an_oversized_extended_header_is_refused_before_tarfile_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: bytes, size: int
) -> None:
    """A red-team finding: tarfile parses a pax header with a regular expression whose time grows
    with the square of its size (CVE-2024-6232, Python 3.11 before 3.11.10): a 400-byte bundle
    held the competition server for 18 s. And it reads a GNU long name whole: a 306 KB bundle took
    2 GB. Both are refused from the raw headers, before tarfile reads a single one."""
    data = extended_bomb(kind, size)
    assert len(data) < 20 * 1024  # what an author sends
    read = 0
    real = tarfile.TarInfo.fromtarfile.__func__

    def counted(cls: type[tarfile.TarInfo], tar: tarfile.TarFile) -> tarfile.TarInfo:
        nonlocal read
        read += 1
        return real(cls, tar)

    monkeypatch.setattr(tarfile.TarInfo, "fromtarfile", classmethod(counted))
    with pytest.raises(BundleError, match=f"an extended tar header of {size} bytes"):
        unpack(data, tmp_path / "out", max_files=10, max_bytes=64 * MB)
    assert read == 0
    assert not (tmp_path / "out").exists()


def test_a_bundle_with_ordinary_extended_headers_unpacks(tmp_path: Path) -> None:
    # pax and GNU tars write small extended headers for long names: those are bundles as usual.
    long = "d" * 60 + "/" + "f" * 120 + ".py"
    for form in (tarfile.PAX_FORMAT, tarfile.GNU_FORMAT):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz", format=form) as tar:
            for info, data in (manifest(), file(long, b"pass\n")):
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        into = tmp_path / str(form)
        unpack(buf.getvalue(), into, max_files=10, max_bytes=MB)
        assert (into / long).read_bytes() == b"pass\n"

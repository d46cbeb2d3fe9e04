"""The red team's bundles (issue 47, items 1 and 2), and what keeps them from the server: the formats
narrowed to gzip, the extended headers bounded each and in all, and unpacking done by a confined
child with CPU, memory and time limits (arena.competition.unpack), never in the server's process.

Against the code before these changes: the gzip bundle of three 64 KiB global pax headers was
accepted after some 29 s of the server's CPU with the GIL held, the bzip2 one of a 120 KB pax header
after 32 s, and the bzip2 one of a 300 MB long name raised the server's memory by 1.7 GB."""

from __future__ import annotations

import resource
import tarfile
from pathlib import Path

import pytest
from tar_attacks import (
    bzip2_long_name_bundle,
    bzip2_pax_bundle,
    global_pax_bundle,
)

from arena.competition import bundles, unpack
from arena.competition.bundles import BundleError, Store

MB = 1024 * 1024


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def test_global_pax_headers_of_64_kib_are_refused(tmp_path: Path) -> None:
    data = global_pax_bundle(headers=3, size=64 * 1024)
    assert len(data) < 2000
    with pytest.raises(
        BundleError, match="an extended tar header of 65536 bytes \\(at most 16384\\)"
    ):
        Store(tmp_path / "store").put(data, 100, MB)
    assert [p.name for p in (tmp_path / "store").iterdir()] == [], "nothing is kept"


def test_many_global_headers_each_within_bounds_are_refused_in_all(tmp_path: Path) -> None:
    """Global headers count as no file: many fit in one bundle, each under the bound."""
    data = global_pax_bundle(headers=8, size=15 * 1024)
    with pytest.raises(BundleError, match="extended tar headers of more than 65536 bytes in all"):
        Store(tmp_path / "store").put(data, 100, MB)


def test_a_bzip2_bundle_is_refused_by_its_format(tmp_path: Path) -> None:
    data = bzip2_pax_bundle()
    assert len(data) < 1000
    with pytest.raises(BundleError, match=r"^bzip2: a bundle is a gzip-compressed tar"):
        Store(tmp_path / "store").put(data, 100, MB)


def test_a_long_name_of_300_mb_costs_the_server_no_memory(tmp_path: Path) -> None:
    data = bzip2_long_name_bundle()
    assert len(data) < 2000
    before = _peak_rss()
    with pytest.raises(BundleError, match="a bundle is a gzip-compressed tar"):
        Store(tmp_path / "store").put(data, 100, MB)
    assert _peak_rss() - before < 64 * MB


def test_unpacking_never_runs_in_the_servers_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever an archive does to the code that reads it, it does it in the child: here that code
    is broken in the server's own process, and a good bundle is still stored whole and read-only."""

    def nowhere(*args: object, **kwargs: object) -> None:
        raise AssertionError("a bundle was read in the server's process")

    src = tmp_path / "src"
    src.mkdir()
    (src / bundles.MANIFEST).write_text(
        'name = "tiny"\nversion = "1"\nlanguage = "python"\nrun = "{python} bot.py"\n'
    )
    (src / "bot.py").write_text("print(1)\n")
    data = bundles.pack(src, MB)
    monkeypatch.setattr(tarfile, "open", nowhere)
    monkeypatch.setattr(bundles, "unpack", nowhere)
    _, manifest, folder = Store(tmp_path / "store").put(data, 10, MB)
    assert manifest.name == "tiny" and (folder / "bot.py").read_text() == "print(1)\n"
    assert not (folder / "bot.py").stat().st_mode & 0o222


def test_an_unpacking_child_past_its_time_is_killed_and_refused(tmp_path: Path) -> None:
    data = global_pax_bundle(headers=1, size=1024)
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(BundleError, match=r"unpacking the bundle took longer than 0\.001 s"):
        unpack.unpack_outside(data, work, 10, MB, wall_seconds=0.001)


def test_the_childs_answer_is_checked_again() -> None:
    """The child read a hostile archive: what it reports is held to the manifest's rules."""
    bad = '{"manifest": {"name": "../x", "version": "1", "language": "python", "run": "r"}}'
    with pytest.raises(BundleError, match="name: expected"):
        unpack._read_answer(bad, 0)
    with pytest.raises(BundleError, match="could not be unpacked: garbage"):
        unpack._read_answer("garbage\n", 1)
    with pytest.raises(BundleError, match="passed its limits"):
        unpack._read_answer("", -9)
    refused = '{"refused": "no arena-bot.toml"}\nthe build command exited with code 1\n'
    with pytest.raises(BundleError, match=r"^no arena-bot\.toml$"):
        unpack._read_answer(refused, 1)


def test_a_manifest_is_read_only_up_to_its_bound(tmp_path: Path) -> None:
    (tmp_path / bundles.MANIFEST).write_bytes(b"# " + b"x" * bundles.MAX_MANIFEST_BYTES)
    with pytest.raises(BundleError, match="over 65536 bytes; a manifest is a few lines"):
        bundles.read_manifest(tmp_path)

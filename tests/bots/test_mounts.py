"""What the sandbox decides to show a bot, without running one: the bubblewrap arguments for folders
that hold hidden paths, the runtime found through the interpreter, the folders a command refers to."""

from __future__ import annotations

import os
import shutil
import sys
import tracemalloc
from pathlib import Path

from arena.sandbox import mounts, runtime


def _binds(args: list[str]) -> list[str]:
    """The destinations of read-only binds."""
    return [args[i + 2] for i, a in enumerate(args) if a == "--ro-bind"]


def test_a_folder_is_shown_whole_when_nothing_in_it_is_hidden(tmp_path: Path) -> None:
    (tmp_path / "bot").mkdir()
    shown = mounts.Mounts([tmp_path / "elsewhere.sqlite"])
    shown.show([tmp_path / "bot", tmp_path / "bot" / "sub"])  # a sub-folder of a shown one: once
    assert _binds(shown.args) == [str(tmp_path / "bot")]


def test_a_hidden_file_and_its_companions_are_left_out_of_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / "bot"
    (folder / "pkg").mkdir(parents=True)
    (folder / "deep").mkdir()
    for name in ("bot.py", "arena.sqlite", "arena.sqlite-wal", "arena.sqlite-journal", "x.sqlite"):
        (folder / name).write_text("x")
    (folder / "deep" / "ledger.db").write_text("x")
    (folder / "deep" / "model.bin").write_text("x")
    (folder / "link").symlink_to(folder / "arena.sqlite")
    hidden = [folder / "arena.sqlite", folder / "deep" / "ledger.db"]
    shown = mounts.Mounts(hidden)
    shown.show([folder])
    binds = _binds(shown.args)
    assert str(folder) not in binds  # shown entry by entry instead
    assert {str(folder / n) for n in ("bot.py", "x.sqlite", "pkg")} <= set(binds)
    assert str(folder / "deep" / "model.bin") in binds
    for gone in ("arena.sqlite", "arena.sqlite-wal", "arena.sqlite-journal", "deep/ledger.db"):
        assert str(folder / gone) not in binds
    i = shown.args.index(str(folder / "link"))
    assert shown.args[i - 2] == "--symlink"  # recreated as a link, never followed


def test_links_are_resolved_before_a_folder_is_judged(tmp_path: Path) -> None:
    """Bubblewrap binds what a link leads to: the folder of a hidden path, named through a link or
    holding a hidden path named through one, is shown entry by entry, its real entries at the named
    place."""
    real = tmp_path / "real"
    real.mkdir()
    (real / "arena.sqlite").write_text("x")
    (real / "bot.py").write_text("x")
    (tmp_path / "link").symlink_to(real)
    through = mounts.Mounts([real / "arena.sqlite"])
    through.show([tmp_path / "link"])
    assert _binds(through.args) == [str(tmp_path / "link" / "bot.py")]
    i = through.args.index("--ro-bind")
    assert through.args[i + 1] == str(real / "bot.py")  # the real file, checked, is what is bound
    named = mounts.Mounts([tmp_path / "link" / "arena.sqlite"])
    named.show([real])
    assert _binds(named.args) == [str(real / "bot.py")]


def test_a_folder_inside_a_hidden_one_is_not_shown(tmp_path: Path) -> None:
    (tmp_path / "logs" / "bot").mkdir(parents=True)
    shown = mounts.Mounts([tmp_path / "logs"])
    shown.show([tmp_path / "logs" / "bot"])
    assert _binds(shown.args) == []


def test_a_project_root_on_the_import_path_shows_only_its_packages(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "arena.sqlite").write_text("")
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "data").mkdir()
    (tmp_path / "single.py").write_text("")
    assert runtime.importable_parts(tmp_path) == [tmp_path / "mypkg", tmp_path / "single.py"]
    (tmp_path / "src").mkdir()
    assert runtime.importable_parts(tmp_path / "src") == [tmp_path / "src"]


def test_the_runtime_is_the_arenas_python_and_never_the_project_root() -> None:
    folders = runtime.runtime_folders(dict(os.environ))
    assert Path(sys.prefix) in folders and Path(sys.base_prefix) in folders
    project = Path(__file__).resolve().parents[2]
    assert project not in folders
    import arena

    package = Path(arena.__file__).resolve().parent
    assert any(package == f or package.is_relative_to(f) for f in folders)
    assert project / "proto" in folders  # the protocol files, for SDKs that load them


def test_the_folders_a_command_refers_to(tmp_path: Path) -> None:
    script = tmp_path / "bots" / "mine.js"
    script.parent.mkdir()
    script.write_text("")
    weights = tmp_path / "weights.bin"
    weights.write_text("")
    env = {"PATH": os.environ["PATH"]}
    node = shutil.which("node") or shutil.which("sh")
    assert node is not None
    argv = [node, str(script), f"--weights={weights}", "--fast"]
    folders = runtime.command_folders(argv, env)
    assert script.parent in folders and tmp_path in folders
    assert Path(os.path.realpath(node)).parent in folders
    venv = runtime.command_folders([sys.executable, "-m", "arena_bot.random_bot"], env)
    if sys.prefix != sys.base_prefix:  # an interpreter of a virtual environment needs all of it
        assert Path(sys.prefix) in venv


def test_a_pyvenv_cfg_in_a_bots_folder_shows_no_other_folder(tmp_path: Path) -> None:
    """A virtual environment's base is shown only when its interpreter is the base's: a bot's folder
    with a ``bin`` folder and a ``pyvenv.cfg`` naming any home had that home's parent shown."""
    bot = tmp_path / "bots" / "mine"
    (bot / "bin").mkdir(parents=True)
    (bot / "bin" / "run").write_text("#!/bin/sh\n")
    (bot / "pyvenv.cfg").write_text(f"home = {tmp_path / 'bots' / 'bin'}\n")
    folders = runtime.command_folders([str(bot / "bin" / "run")], {"PATH": "/usr/bin"})
    assert tmp_path / "bots" not in folders
    assert set(folders) == {bot / "bin", bot}


def test_a_huge_pyvenv_cfg_is_not_read_whole(tmp_path: Path) -> None:
    """A bot's folder may hold a ``pyvenv.cfg`` of any size (a sparse one costs no disk): it was
    read whole into the arena's memory at every start of the bot."""
    bot = tmp_path / "mine"
    (bot / "bin").mkdir(parents=True)
    (bot / "bin" / "run").write_text("#!/bin/sh\n")
    with (bot / "pyvenv.cfg").open("wb") as f:
        f.truncate(256 * 1024 * 1024)
    tracemalloc.start()
    try:
        folders = runtime.command_folders([str(bot / "bin" / "run")], {"PATH": "/usr/bin"})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert set(folders) == {bot / "bin", bot}
    assert peak < 4 * 1024 * 1024

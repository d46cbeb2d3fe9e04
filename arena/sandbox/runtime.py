"""What a sandboxed bot must see to run: its runtime and the folders its command line refers to.

The runtime is the arena's own Python (``{python}`` in a command): the installation it comes from
(``sys.base_prefix``), its virtual environment (``sys.prefix``), and the source folders of packages
installed in editable mode (found by asking the interpreter, as a bot would start it, where its imports
come from). A project folder found that way is never shown whole, only its importable packages and
modules: the project folder is where the default ledger lives. The protocol's ``.proto`` files (the
``proto`` folder beside the ``arena`` package in a source tree) are shown too, for SDKs that load them
at run time (the JavaScript SDK does), and the starter kits of the compiled languages
(``clients/cpp``, ``clients/go``, ``clients/java``), which a submission's build may copy. Node, the
compilers and the gRPC libraries come from the system's read-only ``/usr``.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

# Files that mark a project's root folder (whose packages a bot may import, but which may hold a ledger).
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
CFG_BYTES = 64 * 1024  # of a pyvenv.cfg, read (a real one holds a few lines)

_ASK = """
import json, sys
mapped = []
for finder in sys.meta_path:
    module = sys.modules.get(getattr(finder, "__module__", "") or "")
    mapping = getattr(module, "MAPPING", None)
    if isinstance(mapping, dict):
        mapped.extend(str(v) for v in mapping.values())
print(json.dumps({"prefix": sys.prefix, "base_prefix": sys.base_prefix, "path": sys.path,
                  "mapped": mapped}))
"""


@functools.cache
def _python_view(executable: str, pythonpath: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(prefixes, import folders) of the interpreter as a bot starts it."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    try:
        out = subprocess.run(
            [executable, "-c", _ASK],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            cwd="/",
            check=True,
        ).stdout
        data = json.loads(out)
    except (OSError, subprocess.SubprocessError, ValueError):
        return (sys.prefix, sys.base_prefix), ()
    prefixes = (str(data["prefix"]), str(data["base_prefix"]))
    folders = [p for p in [*data["path"], *data["mapped"]] if p and p != "/"]
    return prefixes, tuple(folders)


def protocol_folder() -> Path | None:
    """The protocol's .proto files of the arena's source tree, if it runs from one."""
    folder = Path(__file__).resolve().parents[2] / "proto"
    return folder if (folder / "arena" / "wire" / "v1" / "bot.proto").is_file() else None


def javascript_sdk() -> Path | None:
    """The JavaScript SDK of the arena's source tree (``clients/javascript``), once its packages are
    installed (``npm ci --prefix clients/javascript``)."""
    folder = Path(__file__).resolve().parents[2] / "clients" / "javascript"
    return folder if (folder / "node_modules").is_dir() and (folder / "sdk.js").is_file() else None


KIT_LANGUAGES = ("cpp", "go", "java")


def starter_kit(language: str) -> Path | None:
    """The starter kit of a compiled language in the arena's source tree (``clients/cpp``,
    ``clients/go``, ``clients/java``), which a submission's build may copy to build its bot with."""
    if language not in KIT_LANGUAGES:
        return None
    folder = Path(__file__).resolve().parents[2] / "clients" / language
    return folder if (folder / "Makefile").is_file() else None


def node_path() -> list[str]:
    """What a Node.js bot's NODE_PATH starts with: the SDK under its package name (``require(
    'arena-bot-js')``) and the SDK's packages (``@grpc/grpc-js``)."""
    sdk = javascript_sdk()
    return [str(sdk / "lib"), str(sdk / "node_modules")] if sdk is not None else []


def runtime_folders(env: Mapping[str, str]) -> list[Path]:
    """Every folder of the runtime a bot or a build may rely on: the Python one, the protocol
    files, the JavaScript SDK and the starter kits of the compiled languages."""
    kits = [starter_kit(language) for language in KIT_LANGUAGES]
    extra = [p for p in (protocol_folder(), javascript_sdk(), *kits) if p is not None]
    return python_runtime(env) + extra


def python_runtime(env: Mapping[str, str]) -> list[Path]:
    """The folders the arena's interpreter needs, as it runs for a bot with this environment."""
    prefixes, folders = _python_view(sys.executable, env.get("PYTHONPATH", ""))
    roots = [Path(p) for p in prefixes]
    out: list[Path] = list(roots)
    for raw in folders:
        path = Path(raw)
        if not path.is_absolute() or not path.exists() or covered(path, roots):
            continue
        out.extend(importable_parts(path))
    return out


def importable_parts(path: Path) -> list[Path]:
    """A folder on the import path, or, if it is a project's root, only its packages and modules."""
    if not path.is_dir() or not any((path / m).exists() for m in PROJECT_MARKERS):
        return [path]
    parts = []
    for child in sorted(path.iterdir()):
        if child.name.startswith("."):
            continue
        package = child.is_dir() and (child / "__init__.py").exists()
        if package or (child.is_file() and child.suffix in (".py", ".so")):
            parts.append(child)
    return parts


def command_folders(argv: Sequence[str], env: Mapping[str, str]) -> list[Path]:
    """The folders a command line refers to: its program's, and each existing path argument's (a
    file's folder, or the folder itself), so that a bot sees its own files and nothing beside them."""
    out: list[Path] = []
    if argv:
        program = argv[0]
        found = program if os.sep in program else shutil.which(program, path=env.get("PATH"))
        if found:
            real = Path(os.path.realpath(found))
            out.append(real.parent)
            venv = _venv_of(Path(os.path.abspath(found)))
            if venv is not None:  # a virtual environment's interpreter needs all of it
                out.extend(venv)
    for arg in argv[1:]:
        for candidate in (arg, arg.partition("=")[2]):
            if candidate and os.path.isabs(candidate) and os.path.exists(candidate):
                path = Path(os.path.abspath(candidate))
                out.append(path if path.is_dir() else path.parent)
    return out


def _venv_of(program: Path) -> list[Path] | None:
    """A program inside a virtual environment's bin folder: the environment and its base. The base
    (the ``home`` of ``pyvenv.cfg``, its bin folder) is taken only when the environment's interpreter
    is one of the base's: a bot's folder holding a ``bin`` folder and a ``pyvenv.cfg`` of its own
    had any folder named as its home shown (the folder of every bot, say)."""
    root = program.parent.parent
    cfg = root / "pyvenv.cfg"
    if program.parent.name != "bin" or not cfg.is_file():
        return None
    out = [root]
    interpreters = {
        Path(os.path.realpath(root / "bin" / name)).parent
        for name in ("python", "python3")
        if (root / "bin" / name).exists()
    }
    for line in _head(cfg).splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            home = Path(os.path.realpath(value.strip()))
            if home in interpreters:
                out.append(home.parent)
    return out


def _head(path: Path) -> str:
    """The start of a small text file that may be a bot's: a ``pyvenv.cfg`` in a bot's folder may
    be of any size (a sparse file of a gigabyte took the arena two gigabytes and ten seconds to
    read whole, at every start of the bot)."""
    try:
        with path.open("rb") as f:
            return f.read(CFG_BYTES).decode(errors="replace")
    except OSError:
        return ""


def covered(path: Path, roots: Iterable[Path]) -> bool:
    return any(path == r or path.is_relative_to(r) for r in roots)

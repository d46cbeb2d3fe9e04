"""Regenerate the Python code (and its mypy stubs) of the protocol in ``proto/``.

    python scripts/gen_proto.py           # write arena/wire/v1/*_pb2*.py[i] and the SDK's links
    python scripts/gen_proto.py --check   # exit 1 if the committed code or a link is stale

The proto files live under ``proto/arena/wire/v1/`` so that the generated modules land in
``arena/wire/v1/`` with imports that work without hand edits (``from arena.wire.v1 import game_pb2``).

The Python SDK (``clients/python``, installed alone with ``pip install ./clients/python``) ships the
modules of the bot protocol under the same names, so that the server and the SDK in one process share
one registration of each ``.proto`` file in protobuf's descriptor pool. It ships them through
symbolic links to these generated files (``clients/python/arena/wire/v1/``), written and checked
here: one copy of the generated code.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import sys
import tempfile
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
PACKAGE = Path("arena/wire/v1")
# The SDK's copy of the bot protocol: links to the generated modules (and their stubs) a bot needs.
SDK_ROOT = ROOT / "clients" / "python"
SDK_MODULES = (
    "__init__.py",
    "bot_pb2.py",
    "bot_pb2.pyi",
    "bot_pb2_grpc.py",
    "bot_pb2_grpc.pyi",
    "game_pb2.py",
    "game_pb2.pyi",
)


def sdk_links() -> dict[Path, str]:
    """Each link of the SDK (its path) and what it must point to (relative to its folder)."""
    folder = SDK_ROOT / PACKAGE
    target = Path(os.path.relpath(ROOT / PACKAGE, folder))
    return {folder / name: str(target / name) for name in SDK_MODULES}


def stale_links() -> list[str]:
    """The SDK's links that are missing, not links, or point elsewhere (or to nothing)."""
    out = []
    for link, target in sdk_links().items():
        if not link.is_symlink() or os.readlink(link) != target or not link.exists():
            out.append(str(link.relative_to(ROOT)))
    extra = sorted(
        p
        for p in (SDK_ROOT / PACKAGE).glob("*")
        if p.name != "__pycache__" and p not in sdk_links()
    )
    return out + [str(p.relative_to(ROOT)) for p in extra]


def write_links() -> list[str]:
    for link, target in sdk_links().items():
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)
    return [str(link.relative_to(ROOT)) for link in sdk_links()]


def generate(out: Path) -> list[Path]:
    protos = sorted((PROTO_ROOT / PACKAGE).glob("*.proto"))
    bindir = Path(sys.executable).parent  # mypy-protobuf's plugins sit beside the interpreter
    args = [
        "grpc_tools.protoc",
        f"--plugin=protoc-gen-mypy={bindir / 'protoc-gen-mypy'}",
        f"--plugin=protoc-gen-mypy_grpc={bindir / 'protoc-gen-mypy_grpc'}",
        f"-I{PROTO_ROOT}",
        f"-I{Path(protoc.__file__).parent / '_proto'}",
        f"--python_out={out}",
        f"--grpc_python_out={out}",
        f"--mypy_out={out}",
        f"--mypy_grpc_out={out}",
        *(str(p.relative_to(PROTO_ROOT)) for p in protos),
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    return sorted(p.relative_to(out) for p in (out / PACKAGE).glob("*_pb2*"))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="fail if the committed code is stale")
    args = parser.parse_args()
    if not args.check:
        for rel in generate(ROOT):
            print(f"wrote {rel}")
        for rel in write_links():
            print(f"linked {rel}")
        return
    with tempfile.TemporaryDirectory() as tmp:
        fresh = generate(Path(tmp))
        committed = sorted(p.relative_to(ROOT) for p in (ROOT / PACKAGE).glob("*_pb2*"))
        stale = [
            str(r)
            for r in fresh
            if not (ROOT / r).exists() or not filecmp.cmp(Path(tmp) / r, ROOT / r, shallow=False)
        ]
        extra = [str(r) for r in committed if r not in fresh]
    links = stale_links()
    if stale or extra or links:
        print("generated protocol code is stale; run: python scripts/gen_proto.py", file=sys.stderr)
        for name in stale + extra + links:
            print(f"  {name}", file=sys.stderr)
        raise SystemExit(1)
    print("generated protocol code is up to date")


if __name__ == "__main__":
    main()

"""Regenerate the Python code (and its mypy stubs) of the protocol in ``proto/``.

    python scripts/gen_proto.py           # write arena/wire/v1/*_pb2*.py[i]
    python scripts/gen_proto.py --check   # exit 1 if the committed code is stale

The proto files live under ``proto/arena/wire/v1/`` so that the generated modules land in
``arena/wire/v1/`` with imports that work without hand edits (``from arena.wire.v1 import game_pb2``).
"""

from __future__ import annotations

import argparse
import filecmp
import sys
import tempfile
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
PACKAGE = Path("arena/wire/v1")


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
    if stale or extra:
        print("generated protocol code is stale; run: python scripts/gen_proto.py", file=sys.stderr)
        for name in stale + extra:
            print(f"  {name}", file=sys.stderr)
        raise SystemExit(1)
    print("generated protocol code is up to date")


if __name__ == "__main__":
    main()

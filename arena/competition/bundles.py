"""Submission bundles: a bot's files and its manifest, packed as a gzipped tar, stored by content.

A bundle is hostile until proven otherwise. Unpacking refuses, before writing anything: absolute
paths, ``..`` in a path, links (symbolic or hard), devices and other special files, more files than the
competition allows, and more bytes than it allows (counted from the archive's headers and checked again
while writing). What is unpacked is plain files and folders, none of them writable by the bot.

The manifest is ``arena-bot.toml`` at the bundle's root: a bundle holds the bot folder's contents
(``tar czf bot.tar.gz -C my-bot .``), not the folder. A bundle with its own ``node_modules`` holds no
links either (``npm ci --no-bin-links``: npm's ``.bin`` folder is links)::

    name = "my-bot"                  # letters, digits, . _ - (the bot's name on the leaderboard)
    version = "1.2"
    language = "python"              # python or node: the runtime the arena provides
    build = "{python} -m compileall -q ."   # optional, run once in the sandbox with no network
    run = "{python} bot.py"          # how to start it; {python}: the arena's Python (grpc and the
                                     # arena_bot SDK installed); node: Node.js with arena-bot-js
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import shlex
import shutil
import stat
import sys
import tarfile
import tempfile
import tomllib
import zlib
from dataclasses import dataclass
from pathlib import Path

MANIFEST = "arena-bot.toml"
LANGUAGES = ("python", "node")
# Applied with fullmatch, always: with match, '$' also matched before a final newline, and
# "js-lowball\n" was taken as a bot name of its own beside another author's js-lowball.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,63}")
NAME_RULE = "1-64 letters, digits, '.', '_' or '-'"
VERSION_RULE = "1-64 letters, digits, '.', '_', '+' or '-'"
MAX_COMMAND = 1000
MAX_MANIFEST_BYTES = 64 * 1024  # a manifest is a few lines; read whole only up to this


class BundleError(ValueError):
    """A bundle that cannot be accepted; the message says what is wrong, for its author."""


@dataclass(frozen=True, slots=True)
class Manifest:
    name: str
    version: str
    language: str
    run: str
    build: str = ""


def parse_manifest(text: str) -> Manifest:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BundleError(f"{MANIFEST}: not valid TOML: {exc}") from exc
    return manifest_from(data)


def manifest_from(data: dict[str, object]) -> Manifest:
    """A manifest from its fields (a parsed ``arena-bot.toml``, or what the unpacking child reported:
    checked again, as the child read a hostile archive), every field checked."""
    unknown = set(data) - {"name", "version", "language", "run", "build"}
    if unknown:
        raise BundleError(
            f"{MANIFEST}: unknown field(s) {', '.join(sorted(unknown))}; expected name, version, "
            "language, run, build"
        )
    out: dict[str, str] = {}
    for key in ("name", "version", "language", "run", "build"):
        value = data.get(key, "")
        if isinstance(value, int | float) and not isinstance(value, bool) and key == "version":
            value = str(value)
        if not isinstance(value, str):
            raise BundleError(f"{MANIFEST}: {key}: expected a string, got {value!r}")
        out[key] = value.strip()
    if not NAME.fullmatch(out["name"]):
        raise BundleError(f"{MANIFEST}: name: expected {NAME_RULE}, got {out['name']!r}")
    if not VERSION.fullmatch(out["version"]):
        raise BundleError(f"{MANIFEST}: version: expected {VERSION_RULE}, got {out['version']!r}")
    if out["language"] not in LANGUAGES:
        raise BundleError(
            f"{MANIFEST}: language: expected one of {', '.join(LANGUAGES)}, got {out['language']!r}"
        )
    if not out["run"]:
        raise BundleError(f"{MANIFEST}: run: missing; the command that starts the bot")
    for key in ("run", "build"):
        if len(out[key]) > MAX_COMMAND or "\n" in out[key] or "\0" in out[key]:
            raise BundleError(
                f"{MANIFEST}: {key}: expected one line of at most {MAX_COMMAND} characters"
            )
        if "{token}" in out[key]:
            raise BundleError(
                f"{MANIFEST}: {key}: the token is never put on a command line; the bot reads "
                "ARENA_TOKEN from its environment"
            )
        _own_paths_only(key, out[key])
    return Manifest(out["name"], out["version"], out["language"], out["run"], out["build"])


def _own_paths_only(key: str, command: str) -> None:
    """A bundle's command may name the bundle's own files only. The sandbox shows a bot every path
    its command line names, so ``{python} bot.py ../..`` showed the competition's data folder:
    every other bot's build and the ledger."""
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise BundleError(f"{MANIFEST}: {key}: not a command line: {exc}") from exc
    for word in words:
        for path in (word, word.partition("=")[2]):
            if path.startswith(("/", "~")) or ".." in path.split("/"):
                raise BundleError(
                    f"{MANIFEST}: {key}: {word!r} names a path outside the bundle; a command "
                    "may name only the bundle's own files (relative paths, no '..')"
                )


def outside(command: str, folder: Path) -> str | None:
    """The first path of a resolved command line (relative paths made absolute within ``folder``)
    that leads outside ``folder``, following links (a build may leave a link to ``..``), named as
    the bundle names it (the server's own paths are not the author's business); None when every
    path it names is the bundle's own."""
    named = Path(os.path.abspath(folder))
    root = Path(os.path.realpath(folder))
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    for word in words:
        for path in (word, word.partition("=")[2]):
            if not (path and os.path.isabs(path) and os.path.lexists(path)):
                continue
            if not Path(os.path.realpath(path)).is_relative_to(root):
                inside = Path(path).is_relative_to(named)
                return os.path.relpath(path, named) if inside else word
    return None


def read_manifest(folder: Path) -> Manifest:
    """The manifest of an unpacked bundle. TOML is UTF-8: a manifest in another encoding is refused
    (read leniently it was accepted once, then refused by a strict read when the same bytes came
    again)."""
    with (folder / MANIFEST).open("rb") as f:
        data = f.read(MAX_MANIFEST_BYTES + 1)
    if len(data) > MAX_MANIFEST_BYTES:
        raise BundleError(f"{MANIFEST}: over {MAX_MANIFEST_BYTES} bytes; a manifest is a few lines")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise BundleError(
            f"{MANIFEST}: not UTF-8 text (byte {data[exc.start]:#04x} on line {line}); save it "
            "as UTF-8"
        ) from exc
    return parse_manifest(text)


def pack(folder: Path, limit_bytes: int) -> bytes:
    """A folder as a bundle (gzipped tar, names relative to the folder), refusing what unpack would:
    symbolic links, sockets, named pipes and devices (the error names what, relative to the folder:
    the caller names the folder). Every regular file is packed as a plain file,
    whatever other names it has."""
    if not (folder / MANIFEST).is_file():
        raise BundleError(f"no {MANIFEST} (the manifest: name, version, language, run)")
    buf = io.BytesIO()
    # gzip's header holds a time, the time of packing unless told otherwise: 0, so that the same
    # files make the same bundle (and the same digest) whenever they are packed.
    with (
        gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w") as tar,
    ):
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(folder)
            if any(part in ("__pycache__", ".git") for part in rel.parts):
                continue
            st = path.lstat()
            mode = st.st_mode
            if stat.S_ISLNK(mode):
                raise BundleError(
                    f"{rel}: a symbolic link; bundles hold plain files only{_npm_links(rel.parts)}"
                )
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise BundleError(
                    f"{rel}: {_special(mode)}; bundles hold plain files and folders only"
                )
            info = tar.gettarinfo(str(path), arcname=str(rel))
            if info.islnk():
                # A second name of a file packed already (a hard link, as cp -al and pnpm make): tar
                # makes it a link to the first name, which a bundle may not hold. A plain file too.
                info.type, info.linkname, info.size = tarfile.REGTYPE, "", st.st_size
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = 0
            if info.isfile():
                with path.open("rb") as f:
                    tar.addfile(info, f)
            elif info.isdir():
                tar.addfile(info)
            if buf.tell() > limit_bytes:
                raise BundleError(f"over the bundle size limit of {limit_bytes} bytes")
    return buf.getvalue()


def _npm_links(parts: tuple[str, ...]) -> str:
    """How to do without the links npm makes, for a link inside node_modules."""
    if "node_modules" not in parts:
        return ""
    return " (npm ci makes links in node_modules/.bin: use npm ci --no-bin-links, or remove .bin)"


def _special(mode: int) -> str:
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


DIGEST = re.compile(r"[0-9a-f]{64}")  # a bundle's name in the store: digest(its bytes)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


FORMAT_RULE = (
    "a bundle is a gzip-compressed tar (tar czf bot.tar.gz -C my-bot ., or arena compete submit); "
    "bzip2, xz, zip and plain tar are not accepted"
)


def check_format(data: bytes) -> None:
    """Refuse what is not a gzip-compressed tar by its first bytes. Every tool an author packs with
    makes gzip, and each further format is another decompressor, and another parser, to trust with
    hostile input: a bzip2 bundle of 842 bytes went past the gzip-only pre-scan and held the server
    32 s."""
    if data[:2] != b"\x1f\x8b":
        kind = next((name for magic, name in _MAGIC if data.startswith(magic)), "")
        raise BundleError(f"{kind + ': ' if kind else ''}{FORMAT_RULE}")


_MAGIC = (
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"PK\x03\x04", "zip"),
    (b"(\xb5/\xfd", "zstd"),
)


def unpack(data: bytes, into: Path, max_files: int, max_bytes: int) -> Manifest:
    """Check a bundle, then unpack it into the new folder ``into``; its manifest. This is the work
    of the child of :mod:`arena.competition.unpack`: never called in the server's own process."""
    check_format(data)
    try:
        _scan_headers(data, max_files, max_bytes)
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            members = _members(tar, max_files, max_bytes)
            into.mkdir(parents=True)
            try:
                _extract(tar, members, into, max_bytes)
                return read_manifest(into)
            except BaseException:
                shutil.rmtree(into, ignore_errors=True)
                raise
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise BundleError(f"not a readable gzip-compressed tar archive: {exc}") from exc
    except OSError as exc:  # e.g. a file and a folder of the same name
        raise BundleError(f"cannot unpack: {exc.strerror or exc}") from exc


# The extended headers a tar may hold before an entry (POSIX pax, GNU long names): a real bundle's are
# a few hundred bytes (a path of 4,096 bytes needs some 4.2 KB). tarfile reads each whole into memory,
# and parses a pax header with a regular expression whose time grows with the square of its size in
# Python 3.11 before 3.11.10 (CVE-2024-6232): a bundle of 400 bytes held the server's event loop for
# 18 s, three global headers of 64 KiB (which count as no file) 29 s, and a long name of 300 MB
# (306 KB gzipped) took 2 GB. They are measured here first, from the raw headers, each and together;
# and the whole of unpacking runs in a child with limits (arena.competition.unpack).
EXTENDED_TYPES = (b"x", b"g", b"L", b"K", b"X")
MAX_EXTENDED_BYTES = 16 * 1024
MAX_EXTENDED_TOTAL = 64 * 1024
BLOCK = 512


def _scan_headers(data: bytes, max_files: int, max_bytes: int) -> None:
    """Walk the archive's headers as raw blocks, decompressing as it goes, before tarfile reads it:
    an extended header over MAX_EXTENDED_BYTES, or extended headers over MAX_EXTENDED_TOTAL together,
    are refused, and the walk stops at the caps (entries,
    and bytes: every header counts as a block of data) that :func:`_members` checks again."""
    stream = gzip.GzipFile(fileobj=io.BytesIO(data))
    entries = consumed = extended = 0
    budget = max_bytes + BLOCK * (3 * max_files + 64)  # the data, and each entry's headers
    while True:
        header = stream.read(BLOCK)
        if len(header) < BLOCK or header == bytes(BLOCK):
            return  # the end (tarfile judges a short or damaged archive)
        size = _tar_number(header[124:136])
        if size is None:
            return  # tarfile says what is wrong with it
        kind = header[156:157]
        if kind in EXTENDED_TYPES and size > MAX_EXTENDED_BYTES:
            raise BundleError(
                f"an extended tar header of {size} bytes (at most {MAX_EXTENDED_BYTES}): not a "
                "bundle packed by tar or arena compete submit"
            )
        if kind in EXTENDED_TYPES:
            extended += max(size, 0)
            if extended > MAX_EXTENDED_TOTAL:
                raise BundleError(
                    f"extended tar headers of more than {MAX_EXTENDED_TOTAL} bytes in all: not a "
                    "bundle packed by tar or arena compete submit"
                )
        else:
            entries += 1
            if entries > max_files:
                raise BundleError(
                    f"more than {max_files} entries, over the limit of {max_files} files"
                )
        consumed += BLOCK + max(size, 0)
        if consumed > budget:
            raise BundleError(f"unpacked, over the limit of {max_bytes} bytes (max_unpacked_mb)")
        skip = -(-max(size, 0) // BLOCK) * BLOCK
        while skip > 0:  # read through the entry's data, a bounded piece at a time
            piece = stream.read(min(skip, 1 << 20))
            if not piece:
                return
            skip -= len(piece)


def _tar_number(field: bytes) -> int | None:
    """A tar header's number: octal digits (ended by NUL or space), or GNU's base-256 (first byte
    0x80 or 0xff, the rest big-endian); None when it is neither."""
    if field[:1] in (b"\x80", b"\xff"):
        value = int.from_bytes(field[1:], "big")
        return value - (1 << (8 * len(field) - 8)) if field[:1] == b"\xff" else value
    digits = field.split(b"\0", 1)[0].strip()
    try:
        return int(digits, 8) if digits else 0
    except ValueError:
        return None


def _members(tar: tarfile.TarFile, max_files: int, max_bytes: int) -> list[tarfile.TarInfo]:
    """The archive's entries, refusing what must never be unpacked before anything is written.

    Headers are read one at a time and the caps checked as each comes: a small gzip can hold hundreds
    of thousands of empty entries, and reading them all first (``getmembers``) cost seconds of CPU and
    the memory of every header before the count was refused."""
    members: list[tarfile.TarInfo] = []
    total = 0
    names: set[str] = set()
    while (m := tar.next()) is not None:
        if len(members) == max_files:
            raise BundleError(f"more than {max_files} entries, over the limit of {max_files} files")
        members.append(m)
        name = m.name
        parts = Path(name).parts
        if name.startswith("/") or os.path.isabs(name) or ".." in parts or "\\" in name:
            raise BundleError(f"{name!r}: a path outside the bundle")
        if not (m.isfile() or m.isdir()):
            link = m.issym() or m.islnk()
            what = "a link" if link else "a special file"
            raise BundleError(
                f"{name!r}: {what}; bundles hold plain files and folders only"
                + (_npm_links(parts) if link else "")
            )
        normal = os.path.normpath(name)
        if normal in names and not m.isdir():
            raise BundleError(f"{name!r}: appears twice")
        names.add(normal)
        total += max(m.size, 0)
        if total > max_bytes:
            raise BundleError(f"unpacked, over the limit of {max_bytes} bytes (max_unpacked_mb)")
    if MANIFEST not in names:
        raise BundleError(f"no {MANIFEST} at the bundle's root{_packed_folder(names)}")
    return members


def _packed_folder(names: set[str]) -> str:
    """What went wrong when the bundle holds one folder with the manifest in it (``tar czf bot.tar.gz
    js-bot``): the folder, not its contents, was packed. Not accepted as it is: a bundle's paths are
    its bot's, and the run line names them from the root."""
    tops = {Path(name).parts[0] for name in names if name != "."}
    if len(tops) != 1:
        return ""
    (top,) = tops
    if f"{top}/{MANIFEST}" not in names:
        return ""
    return (
        f", but {top}/{MANIFEST}: the bundle holds the folder {top!r} instead of its contents; "
        f"pack the folder's contents at the root (tar czf bot.tar.gz -C {shlex.quote(top)} .)"
    )


def _extract(tar: tarfile.TarFile, members: list[tarfile.TarInfo], into: Path, limit: int) -> None:
    """Plain files and folders only (checked), read-only, counting the bytes as they are written."""
    written = 0
    for m in members:
        target = into / os.path.normpath(m.name)
        if m.isdir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        source = tar.extractfile(m)
        assert source is not None
        with target.open("xb") as out:
            while chunk := source.read(65536):
                written += len(chunk)
                if written > limit:
                    raise BundleError(
                        f"unpacked, over the limit of {limit} bytes (max_unpacked_mb)"
                    )
                out.write(chunk)
        mode = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
        if m.mode & 0o111:
            mode |= stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
        target.chmod(mode)
    for folder in [into, *(p for p in into.rglob("*") if p.is_dir())]:
        folder.chmod(0o755)


class Store:
    """Bundles by content: ``<root>/<sha256>.tar.gz`` as received and ``<root>/<sha256>/`` unpacked,
    by a confined child (:mod:`arena.competition.unpack`), never in this process.

    Submissions store their bundles in threads of their own, and two of them may bring the same bytes
    at once (two authors submitting the example bot): each unpacks into a folder of its own and renames
    it into place, and the one that finds the place taken uses what is there. A bundle's folder is
    therefore whole whenever it exists; what a killed server left half-done is a hidden work folder,
    removed at the next start."""

    def __init__(self, root: Path, sandbox: str = "auto") -> None:
        self.root = root
        self.sandbox = sandbox  # the unpacking child's (arena.sandbox's modes)
        if root.is_dir():
            for stale in [*root.glob(".*.work-*"), *root.glob(".*.tmp")]:  # .tmp: older servers
                shutil.rmtree(stale, ignore_errors=True)

    def put(self, data: bytes, max_files: int, max_bytes: int) -> tuple[str, Manifest, Path]:
        """Store and unpack a bundle (once per content): its digest, manifest and folder."""
        sha = digest(data)
        folder = self.root / sha
        self.root.mkdir(parents=True, exist_ok=True)
        if (folder / MANIFEST).is_file():
            return sha, read_manifest(folder), folder
        if folder.exists():  # no bundle's (one is renamed into place whole): in the way
            shutil.rmtree(folder, ignore_errors=True)
        check_format(data)
        work = Path(tempfile.mkdtemp(prefix=f".{sha[:16]}.work-", dir=self.root))
        try:
            # Never in this process (see arena.competition.unpack, which imports this module).
            from arena.competition.unpack import unpack_outside

            manifest, unpacked = unpack_outside(
                data, work, max_files, max_bytes, sandbox=self.sandbox
            )
            (work / "data").write_bytes(data)
            os.replace(work / "data", self.root / f"{sha}.tar.gz")  # the same bytes, if replaced
            try:
                unpacked.rename(folder)
            except OSError:
                if not (folder / MANIFEST).is_file():  # not a bundle unpacked meanwhile
                    raise
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return sha, manifest, folder

    def folder(self, sha: str) -> Path:
        return self.root / sha

    def discard(self, sha: str) -> Path | None:
        """Take a bundle out of the store at once (its archive removed, its folder renamed to a
        hidden work folder: a put of the same bytes meanwhile unpacks it afresh); the folder left to
        remove (slow: it may hold thousands of files), or None."""
        (self.root / f"{sha}.tar.gz").unlink(missing_ok=True)
        if not (self.root / sha).is_dir():
            return None
        work = Path(tempfile.mkdtemp(prefix=f".{sha[:16]}.work-", dir=self.root))
        (self.root / sha).rename(work / "bundle")
        return work


# The unpacking child (arena.competition.unpack runs ``python -I -m arena.competition.bundles``): its
# folder holds the archive; it unpacks it beside it and says how it went in one line of JSON.
CHILD_ARCHIVE = "bundle.tar.gz"
CHILD_OUT = "bundle"


def child(args: list[str]) -> int:
    """The unpacking child: CHILD_ARCHIVE of the working folder into CHILD_OUT (see
    :mod:`arena.competition.unpack`); prints ``{"manifest": {...}}`` or ``{"refused": REASON}``."""
    max_files, max_bytes = int(args[0]), int(args[1])
    try:
        data = Path(CHILD_ARCHIVE).read_bytes()
        Path(CHILD_ARCHIVE).unlink()  # its room, for what it unpacks
        manifest = unpack(data, Path(CHILD_OUT), max_files, max_bytes)
    except BundleError as exc:
        print(json.dumps({"refused": str(exc)}), flush=True)
        return 1
    except MemoryError:
        print(json.dumps({"refused": "unpacking the bundle took more memory than allowed"}))
        return 1
    fields = {k: getattr(manifest, k) for k in ("name", "version", "language", "run", "build")}
    print(json.dumps({"manifest": fields}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(child(sys.argv[1:]))

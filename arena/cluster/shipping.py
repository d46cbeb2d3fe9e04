"""The bots' files, carried to the nodes through Ray's object store.

A tournament's commands name their files relative to the tournament file's folder (``{python}
bots/mine/main.py``); locally they are made absolute (:func:`arena.tournament.runner.command_for`). On a
cluster, the folder each such path lies in (the path itself when it is a folder: the bot's folder, so
that the modules and data beside a script go with it) is packed once by the coordinator, put in the
object store, and unpacked once by each Ray worker process that plays a game of that bot (in its scratch
folder, removed with it). A command travels as its words, with ``{python}`` for the interpreter (the
node's own) and each shipped path as a placeholder the node replaces with where it unpacked the folder.

Nothing else is shipped: words that are not paths under the tournament's folder (``-m arena_bot.x``,
``/usr/bin/node``) reach the node as they are, and the node must have what they name. The ledger, the
bots' logs and version-control folders are never packed, even when they lie in a bot's folder.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import shlex
import stat
import sys
import tarfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from arena.cluster.errors import ClusterError

MAX_BYTES = 256 * 1024 * 1024  # packed into one folder's archive at most
SKIP_NAMES = frozenset({".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".pytest_cache"})
PYTHON = "{python}"
PREFIX = "{shipped:"  # {shipped:DIGEST}/relative/path
LITERAL = PREFIX + "}"  # before a word of the command that itself starts with PREFIX


@dataclass(frozen=True, slots=True)
class Parcel:
    """One packed folder."""

    folder: Path  # on the coordinator
    digest: str
    data: bytes


@dataclass(slots=True)
class Shipment:
    """The folders the commands need, packed, and how each command refers to them."""

    parcels: dict[Path, Parcel] = field(default_factory=dict)  # by folder

    @classmethod
    def for_commands(
        cls, templates: Iterable[str], base: Path, exclude: Iterable[Path] = ()
    ) -> Shipment:
        """Pack the folders that the commands (as written in a tournament file, relative to
        ``base``) name; ``exclude``: files never to pack (the ledger)."""
        folders: set[Path] = set()
        for template in templates:
            try:
                words = shlex.split(template)
            except ValueError:
                continue  # the launcher reports the bad quoting, on the node as it would here
            for word in words:
                if word.startswith("-") or "{" in word or os.path.isabs(word):
                    continue
                path = base / word
                if path.exists():
                    path = path.resolve()
                    folders.add(path if path.is_dir() else path.parent)
        # A folder inside another that is shipped anyway goes with it.
        kept = sorted(
            f for f in folders if not any(o != f and f.is_relative_to(o) for o in folders)
        )
        skip = _skipped(exclude)
        shipment = cls()
        for folder in kept:
            data = pack(folder, skip)
            shipment.parcels[folder] = Parcel(folder, hashlib.sha256(data).hexdigest()[:24], data)
        return shipment

    @staticmethod
    def parcel(folder: Path, exclude: Iterable[Path] = ()) -> Parcel:
        """One folder packed (a competition's build of a submission), without ``exclude``."""
        folder = folder.resolve()
        data = pack(folder, _skipped(exclude))
        return Parcel(folder, hashlib.sha256(data).hexdigest()[:24], data)

    def portable(self, command: str) -> tuple[str, ...]:
        """A command as resolved for this machine, as words for the node: this interpreter becomes
        ``{python}``, a path in a shipped folder a placeholder."""
        try:
            words = shlex.split(command)
        except ValueError:
            # as one word: the node's launcher reports it, as locally
            return (f"{LITERAL}{command}" if command.startswith(PREFIX) else command,)
        out = []
        for word in words:
            if word == sys.executable:
                out.append(PYTHON)
                continue
            if word.startswith(PREFIX):  # the command's own words (a bundle's), never a parcel's
                out.append(f"{LITERAL}{word}")
                continue
            if os.path.isabs(word):
                word = self._placeholder(Path(word)) or word
            out.append(word)
        return tuple(out)

    def _placeholder(self, path: Path) -> str:
        """The placeholder of a path in a shipped folder ("" if none): as named, or else as its links
        lead (a folder is packed by its real path; a bot's folder may be a link to it)."""
        for candidate in (path, Path(os.path.realpath(path))):
            for folder, parcel in self.parcels.items():
                if candidate == folder or candidate.is_relative_to(folder):
                    rel = candidate.relative_to(folder).as_posix()
                    return f"{PREFIX}{parcel.digest}}}" + ("" if rel == "." else f"/{rel}")
        return ""

    def digests(self, words: Iterable[str]) -> set[str]:
        """The parcels that these words refer to."""
        found = {w[len(PREFIX) :].split("}", 1)[0] for w in words if w.startswith(PREFIX)}
        return found - {""}


def _skipped(exclude: Iterable[Path]) -> set[Path]:
    """The files never to pack: each of ``exclude`` and its SQLite companions."""
    skip: set[Path] = set()
    for path in exclude:
        resolved = Path(path).resolve()
        ends = ("", "-wal", "-shm", "-journal")
        skip.update(resolved.with_name(resolved.name + end) for end in ends)
    return skip


def pack(folder: Path, skip: set[Path]) -> bytes:
    """A gzipped tar of ``folder`` (its contents at the archive's top), without ``skip`` and the
    version-control and cache folders; at most :data:`MAX_BYTES`."""
    buffer = io.BytesIO()
    total = 0
    # gzip's header holds the time of packing unless told otherwise: 0, so that a folder unchanged
    # since the last run ships as the same parcel (the same digest, already unpacked on a node).
    with (
        gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=6, mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w") as tar,
    ):
        for root, dirs, files in os.walk(folder):
            here = Path(root)
            dirs[:] = sorted(d for d in dirs if d not in SKIP_NAMES and _real(here / d) not in skip)
            for name in [*dirs, *sorted(files)]:
                path = here / name
                if _real(path) in skip:
                    continue
                arcname = path.relative_to(folder).as_posix()
                refused = _unshippable(path, folder)
                if refused:
                    raise ClusterError(
                        f"the bot folder {folder} holds {arcname!r}, {refused}: a node cannot "
                        "unpack it (it keeps nothing outside the folder); remove it or give the "
                        "bot a folder of its own"
                    )
                if path.is_file() and not path.is_symlink():
                    total += path.stat().st_size
                    if total > MAX_BYTES:
                        raise ClusterError(
                            f"the bot folder {folder} holds more than {MAX_BYTES // 2**20} MiB: too "
                            "much to send to every node; give the bot a folder of its own"
                        )
                tar.add(path, arcname, recursive=False)
    return buffer.getvalue()


def _real(path: Path) -> Path:
    """Where ``path``'s links lead (a link that leads to itself, in a loop, is not an error)."""
    return Path(os.path.realpath(path))


def _unshippable(path: Path, folder: Path) -> str:
    """Why a node would refuse to unpack ``path`` (its unpacking filter, :func:`unpack`): a link to
    an absolute path or out of ``folder`` (a virtual environment's interpreter, say), a special
    file; "" when it would not."""
    if path.is_symlink():
        target = os.readlink(path)
        if os.path.isabs(target):
            return f"a link to an absolute path ({target})"
        if not Path(os.path.realpath(path.parent / target)).is_relative_to(folder):
            return f"a link out of the folder ({target})"
        return ""
    mode = path.lstat().st_mode
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISSOCK(mode):  # (a socket is skipped)
        return ""
    return "a special file (a pipe or a device)"


# tarfile's "data" filter came with Python 3.11.4; before it (Debian 12 has 3.11.2) a parcel is
# checked member by member to the same rules (_extract_as_data).
DATA_FILTER = hasattr(tarfile, "data_filter")


class UnsafeMember(tarfile.TarError):
    """A parcel's entry that the "data" filter would refuse (the message names it and why)."""


def unpack(data: bytes, into: Path) -> None:
    """Unpack a parcel (made by the coordinator; still, nothing may land outside ``into``)."""
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        if DATA_FILTER:
            tar.extractall(into, filter="data")
        else:
            _extract_as_data(tar, into)


def _extract_as_data(tar: tarfile.TarFile, into: Path) -> None:
    """What ``extractall(into, filter="data")`` does, for a Python without the filter: each entry is
    checked just before it is written (so that a link unpacked earlier is followed, as it will be on
    disk), then written with no owner, time or mode of the archive's; a file gets the filter's mode."""
    root = os.path.realpath(into)
    for member in tar:
        member.name = member.name.lstrip("/")  # as the filter does: "/x" is unpacked as "x"
        mode = _data_mode(member, root)
        tar.extract(member, root, set_attrs=False)
        if mode is not None:
            os.chmod(os.path.join(root, member.name), mode)


def _data_mode(member: tarfile.TarInfo, root: str) -> int | None:
    """The mode the "data" filter gives ``member`` (None: the default, for a folder or a link), or
    UnsafeMember when it refuses it: a path or a link leading out of ``root``, a link to an absolute
    path, a device or a pipe."""
    name = member.name
    if os.path.isabs(name):
        raise UnsafeMember(f"{name!r}: an absolute path")
    if not _inside(os.path.join(root, name), root):
        raise UnsafeMember(f"{name!r}: outside the folder")
    if member.issym():
        if os.path.isabs(member.linkname):
            raise UnsafeMember(f"{name!r}: a link to an absolute path")
        if not _inside(os.path.join(root, os.path.dirname(name), member.linkname), root):
            raise UnsafeMember(f"{name!r}: a link out of the folder")
        return None
    if member.islnk():
        if os.path.isabs(member.linkname) or not _inside(os.path.join(root, member.linkname), root):
            raise UnsafeMember(f"{name!r}: a hard link out of the folder")
    elif member.isdir():
        return None
    elif not member.isreg():
        raise UnsafeMember(f"{name!r}: a special file (a pipe or a device)")
    # A file: no set-uid, set-gid or sticky bit, no write for group and others; executable only if
    # its owner may execute it; its owner may read and write it.
    mode = member.mode & 0o755
    if not mode & 0o100:
        mode &= ~0o111
    return mode | 0o600


def _inside(path: str, root: str) -> bool:
    """Whether ``path``, its links followed (those already on disk), stays within ``root``."""
    return os.path.commonpath([os.path.realpath(path), root]) == root


def resolve(words: Iterable[str], folders: Mapping[str, Path]) -> str:
    """A portable command made runnable on this node: ``folders`` gives where each parcel (by
    digest) was unpacked. ``{python}`` is left for the launcher, which puts this interpreter there."""
    out = []
    for word in words:
        if word.startswith(PREFIX):
            digest, _, rest = word[len(PREFIX) :].partition("}")
            word = str(folders[digest]) + rest if digest else rest
        out.append(word)
    return " ".join(w if w == PYTHON else shlex.quote(w) for w in out)

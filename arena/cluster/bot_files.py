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
import shutil
import stat
import sys
import tarfile
import tempfile
import zlib
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
    """Why a node would refuse to unpack ``path`` (:func:`unpack`): a link to an absolute path, out
    of ``folder`` (a virtual environment's interpreter, say) or through ``..`` after a folder's
    name, a special file; "" when it would not."""
    if path.is_symlink():
        target = os.readlink(path)
        problem = link_problem(path.relative_to(folder).as_posix(), target)
        if problem:
            return problem
        if not Path(os.path.realpath(path.parent / target)).is_relative_to(folder):
            return f"a link out of the folder ({target})"
        return ""
    mode = path.lstat().st_mode
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISSOCK(mode):  # (a socket is skipped)
        return ""
    return "a special file (a pipe or a device)"


def link_problem(name: str, target: str) -> str:
    """Why a symbolic link at ``name`` (a path within a parcel's folder) to ``target`` may not be
    unpacked; "" when it may. Judged on the words alone, never on what lies on the disk: the target
    is relative, climbs with ``..`` only at its start (the link's own folders are real ones, so the
    climb ends where the words say; ``a/..`` would go wherever the link ``a`` leads, then up), and
    not above the parcel's folder. Every link being so, a path through links stays in the folder."""
    if not target:
        return "a link to nothing (an empty target)"
    if os.path.isabs(target):
        return f"a link to an absolute path ({target})"
    parts = [part for part in target.split("/") if part not in ("", ".")]
    ups = 0
    while ups < len(parts) and parts[ups] == "..":
        ups += 1
    if ".." in parts[ups:]:
        return f"a link through .. after a folder's name ({target})"
    if ups > len(Path(os.path.normpath(name)).parent.parts):
        return f"a link out of the folder ({target})"
    return ""


class UnsafeMember(tarfile.TarError):
    """A parcel's entry a node will not, or cannot, unpack (the message names it and why)."""


def unpack(data: bytes, into: Path) -> None:
    """Unpack a parcel into the new folder ``into``. The coordinator made it; still, nothing may land
    outside the folder, so the node writes each entry itself rather than through tarfile's
    extraction (whose "data" filter is missing before Python 3.11.4 and had holes after it):
    folders, files and links only, each checked before it is written; a path through a link, an
    entry named twice, a link that breaks :func:`link_problem`'s rules, a hard link to anything but
    a file unpacked before it, a device or a pipe is refused, and so is more than MAX_BYTES of
    files (what the coordinator packs at most). Folders are 0o755 and files get the mode tarfile's
    data filter gives them (no set-uid bit, no write but the owner's, executable only if the owner
    may execute), whatever the archive says; owners and times are the node's own. The parcel is
    unpacked into a folder of its own beside ``into`` and renamed into place whole: a refused or
    failed parcel leaves nothing behind, and another try starts afresh."""
    into.parent.mkdir(parents=True, exist_ok=True)
    work = tempfile.mkdtemp(prefix=f".{into.name}.unpacking-", dir=into.parent)
    try:
        os.chmod(work, 0o755)
        root = os.path.realpath(work)
        files: dict[str, str] = {}  # the files unpacked so far, by name: what a hard link may copy
        allowed = MAX_BYTES  # the bytes of files still allowed
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            for member in tar:
                name = os.path.normpath(member.name.lstrip("/"))
                try:
                    allowed -= _unpack_member(tar, member, name, root, files, allowed)
                except (OSError, ValueError) as exc:  # (ValueError: a NUL in a name, say)
                    raise UnsafeMember(f"{member.name!r}: cannot be written ({exc})") from exc
        os.rename(work, into)
    except BaseException as exc:
        shutil.rmtree(work, ignore_errors=True)
        if isinstance(exc, (OSError, ValueError, EOFError, zlib.error)):
            raise UnsafeMember(f"cannot unpack the parcel: {exc}") from exc
        raise


def _unpack_member(
    tar: tarfile.TarFile,
    member: tarfile.TarInfo,
    name: str,
    root: str,
    files: dict[str, str],
    allowed: int,
) -> int:
    """Write one entry (checked) under ``root``: the bytes of file it wrote, at most ``allowed``."""
    if name == ".." or name.startswith("../"):
        raise UnsafeMember(f"{member.name!r}: outside the folder")
    if name == ".":
        if member.isdir():
            return 0
        raise UnsafeMember(f"{member.name!r}: not a folder, in the folder's own place")
    path = os.path.join(root, name)
    _folders_to(root, name)
    if member.isdir():
        try:
            _folder(path)
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                raise UnsafeMember(f"{member.name!r}: named twice") from None
            os.chmod(path, 0o755)
        return 0
    if os.path.lexists(path):
        raise UnsafeMember(f"{member.name!r}: named twice")
    if member.issym():
        problem = link_problem(name, member.linkname)
        if problem:
            raise UnsafeMember(f"{member.name!r}: {problem}")
        os.symlink(member.linkname, path)
        return 0
    if member.isreg():
        source = tar.extractfile(member)
        assert source is not None
    elif member.islnk():
        linked = files.get(os.path.normpath(member.linkname.lstrip("/")))
        if linked is None:
            raise UnsafeMember(
                f"{member.name!r}: a hard link to {member.linkname!r}, not a file unpacked before it"
            )
        source = open(linked, "rb")  # noqa: SIM115 (closed with the copy below)
    else:
        raise UnsafeMember(f"{member.name!r}: a special file (a pipe or a device)")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    written = 0
    with source, os.fdopen(os.open(path, flags, 0o600), "wb") as out:
        while chunk := source.read(1 << 20):
            written += len(chunk)
            if written > allowed:
                raise UnsafeMember(f"over {MAX_BYTES // 2**20} MiB of files, more than is shipped")
            out.write(chunk)
        os.fchmod(out.fileno(), _file_mode(member.mode))
    files[name] = path
    return written


def _folders_to(root: str, name: str) -> None:
    """Make sure each folder above ``name`` is a real folder (made, 0o755, where missing): never a
    link, through which an entry would be written wherever the link leads."""
    path = root
    for part in Path(name).parent.parts:
        path = os.path.join(path, part)
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            _folder(path)
            continue
        if not stat.S_ISDIR(mode):
            what = "a link" if stat.S_ISLNK(mode) else "not a folder"
            raise UnsafeMember(f"{name!r}: under {os.path.relpath(path, root)!r}, {what}")


def _folder(path: str) -> None:
    """A new folder, 0o755 whatever the umask (FileExistsError if anything is there)."""
    os.mkdir(path)
    os.chmod(path, 0o755)


def _file_mode(mode: int) -> int:
    """A file's mode as tarfile's data filter makes it: no set-uid, set-gid or sticky bit, no write
    for group and others, executable only if its owner may execute it, readable and writable by its
    owner."""
    mode &= 0o755
    if not mode & 0o100:
        mode &= ~0o111
    return mode | 0o600


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

"""The languages a competition's bundles are written in, and what each needs on the server.

A bundle's manifest names its ``language``; the arena provides that language's toolchain and gRPC
libraries, from Debian's packages (read-only in the sandbox: the system's ``/usr`` is shown to every
build and bot), and nothing is downloaded: builds have no network.

============  ================================================  ===========================================
language      what the server provides                          Debian packages
============  ================================================  ===========================================
``python``    the arena's own Python (``{python}``), grpcio,    (the arena's own installation)
              protobuf and the ``arena_bot`` SDK
``node``      Node.js, the JavaScript SDK (``arena-bot-js``)    nodejs (and ``npm ci`` in clients/javascript)
``cpp``       g++, make, pkg-config, protoc, grpc_cpp_plugin,   g++ make pkg-config protobuf-compiler
              the gRPC C++ and protobuf headers and libraries   protobuf-compiler-grpc libgrpc++-dev
``go``        go, protoc, the Go protobuf and gRPC sources in   golang-go make protobuf-compiler
              /usr/share/gocode (GOPATH mode, offline)          golang-google-protobuf-dev
                                                                golang-google-grpc-dev
``java``      javac, jar, protoc, grpc_java_plugin, the         openjdk-17-jdk-headless make
              gRPC, protobuf, netty and guava jars in           protobuf-compiler
              /usr/share/java                                   protobuf-compiler-grpc-java-plugin
                                                                libprotobuf-java libgrpc-java libnetty-java
                                                                libguava-java libperfmark-java
                                                                libgoogle-gson-java
``binary``    nothing: a prebuilt Linux executable for the      (none)
              server's architecture (its ELF header says)
============  ================================================  ===========================================

A build command may name the protocol's ``.proto`` files as ``{proto}`` (``protoc -I {proto} ...``,
``make PROTO_DIR={proto}``) and, in a compiled language, the arena's starter kit of that language as
``{kit}`` (``clients/cpp``, ``clients/go``, ``clients/java``: its SDK, Makefile and example bot), which
a bundle may copy and build its own bot with, as a Python bundle imports the SDK the arena provides.
Both are shown read-only to the build. Go builds run with ``GOCACHE`` (and the module cache) in the build's own
folder, removed once the build ends, ``GOPROXY=off`` and Debian's sources on ``GOPATH``; Java builds
with JVM options that fit the competition's memory limit.

:func:`survey` says, per language, which versions this machine has or which packages it lacks
(``arena compete runtimes``); :func:`missing` is what a submission in a language is refused for.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.sandbox import runtime as sandbox_runtime

LANGUAGES = ("python", "node", "cpp", "go", "java", "binary")
COMPILED = sandbox_runtime.KIT_LANGUAGES  # built from sources, with a starter kit
PROTO = "{proto}"  # in a build command: the protocol's .proto files (protoc -I {proto})
KIT = "{kit}"  # in a build command: the arena's starter kit of the bundle's language
BUILD_ONLY = (PROTO, KIT)
GOCODE = "/usr/share/gocode"
JAVA_SHARE = "/usr/share/java"
# Where a Go build keeps its caches, inside its own folder (removed when the build ends).
BUILD_CACHE = ".arena-cache"
# A javac or a build tool's JVM under the competition's address-space limit: the JVM's default
# reservations (a quarter of the machine's memory for the heap, 1 GiB of class space) do not fit.
JAVA_BUILD_OPTIONS = (
    "-Xmx512m -Xss1m -XX:CompressedClassSpaceSize=64m -XX:ReservedCodeCacheSize=64m "
    "-XX:+UseSerialGC -XX:-UsePerfData"
)
VERSION_SECONDS = 15  # a version command's time limit
MAX_VERSION = 80  # characters of a version shown


@dataclass(frozen=True, slots=True)
class Need:
    """One thing a language needs on the server: a program on the PATH or a path that exists, and
    how to get it (a Debian package, or ``hint`` when it is not one)."""

    what: str
    package: str = ""
    program: str = ""
    path: str = ""
    hint: str = ""

    def present(self) -> bool:
        if self.program and shutil.which(self.program) is None:
            return False
        return not (self.path and not os.path.exists(self.path))


@dataclass(frozen=True, slots=True)
class Runtime:
    language: str
    title: str
    needs: tuple[Need, ...]


def _source_tree() -> Path:
    return Path(sandbox_runtime.__file__).resolve().parents[2]


def _proto_need() -> Need:
    folder = sandbox_runtime.protocol_folder()
    path = str(folder) if folder is not None else str(_source_tree() / "proto")
    return Need(
        "the protocol's .proto files",
        path=path,
        hint="run the arena from its source tree, whose proto/ folder builds read as {proto}",
    )


def _java_jar(name: str, package: str) -> Need:
    return Need(f"{name}.jar", package, path=f"{JAVA_SHARE}/{name}.jar")


def runtimes() -> tuple[Runtime, ...]:
    """Every language, with what it needs (paths as this arena finds them)."""
    protoc = Need("protoc", "protobuf-compiler", program="protoc")
    make = Need("make", "make", program="make")
    sdk = _source_tree() / "clients" / "javascript"
    return (
        Runtime("python", "Python: the arena's interpreter with grpcio and the arena_bot SDK", ()),
        Runtime(
            "node",
            "Node.js with the JavaScript SDK (arena-bot-js)",
            (
                Need("node", "nodejs", program="node"),
                Need(
                    "the JavaScript SDK's packages",
                    path=str(sdk / "node_modules"),
                    hint="npm ci --prefix clients/javascript",
                ),
            ),
        ),
        Runtime(
            "cpp",
            "C++: g++ with gRPC C++ and protobuf",
            (
                Need("g++", "g++", program="g++"),
                make,
                Need("pkg-config", "pkg-config", program="pkg-config"),
                protoc,
                Need("grpc_cpp_plugin", "protobuf-compiler-grpc", program="grpc_cpp_plugin"),
                Need("gRPC C++ headers", "libgrpc++-dev", path="/usr/include/grpcpp/grpcpp.h"),
                Need(
                    "protobuf headers",
                    "libprotobuf-dev",
                    path="/usr/include/google/protobuf/message.h",
                ),
                _proto_need(),
            ),
        ),
        Runtime(
            "go",
            "Go with gRPC-Go and Go protobuf (GOPATH mode over Debian's sources, offline)",
            (
                Need("go", "golang-go", program="go"),
                make,
                protoc,
                Need(
                    "Go protobuf sources",
                    "golang-google-protobuf-dev",
                    path=f"{GOCODE}/src/google.golang.org/protobuf/cmd/protoc-gen-go",
                ),
                Need(
                    "gRPC-Go sources",
                    "golang-google-grpc-dev",
                    path=f"{GOCODE}/src/google.golang.org/grpc/cmd/protoc-gen-go-grpc",
                ),
                _proto_need(),
            ),
        ),
        Runtime(
            "java",
            "Java: javac with gRPC-Java and protobuf-java (Debian's jars)",
            (
                Need("javac", "openjdk-17-jdk-headless", program="javac"),
                Need("jar", "openjdk-17-jdk-headless", program="jar"),
                make,
                protoc,
                Need(  # Debian's protoc-gen-grpc-java
                    "grpc_java_plugin",
                    "protobuf-compiler-grpc-java-plugin",
                    program="grpc_java_plugin",
                ),
                _java_jar("protobuf", "libprotobuf-java"),
                _java_jar("grpc-core", "libgrpc-java"),
                _java_jar("grpc-netty", "libgrpc-java"),
                _java_jar("netty-codec-http2", "libnetty-java"),
                _java_jar("guava", "libguava-java"),
                _java_jar("perfmark-api", "libperfmark-java"),
                _java_jar("gson", "libgoogle-gson-java"),
                _proto_need(),
            ),
        ),
        Runtime("binary", "a prebuilt Linux executable for this server's architecture", ()),
    )


def runtime(language: str) -> Runtime:
    for each in runtimes():
        if each.language == language:
            return each
    raise ValueError(f"language: expected one of {', '.join(LANGUAGES)}, got {language!r}")


def missing(language: str) -> list[Need]:
    """What ``language`` needs that this machine lacks (nothing: it can build and run it)."""
    return [need for need in runtime(language).needs if not need.present()]


def how_to_install(needs: Sequence[Need]) -> str:
    """What to do about missing needs, in one line: the Debian packages to install, then the rest."""
    packages = list(dict.fromkeys(n.package for n in needs if n.package))
    hints = list(dict.fromkeys(n.hint for n in needs if not n.package and n.hint))
    parts = [f"install Debian packages {' '.join(packages)}"] if packages else []
    parts += hints
    return "; ".join(parts) or "nothing known to install"


def refusal(language: str) -> str | None:
    """Why a bundle in ``language`` cannot be built and run here (one line), or None."""
    lacking = missing(language)
    if not lacking:
        return None
    what = ", ".join(n.what for n in lacking)
    return (
        f"language {language!r}: this server lacks its toolchain ({what}); the organiser must "
        f"{how_to_install(lacking)}"
    )


# ------------------------------------------------------------------------------ builds


def kit_folder(language: str) -> Path | None:
    """The arena's starter kit of a compiled language (its source tree's ``clients/<language>``)."""
    return sandbox_runtime.starter_kit(language)


def fill(command: str, language: str) -> str:
    """A build command with ``{proto}`` replaced by the protocol's folder and ``{kit}`` by the
    starter kit of ``language``; ValueError (its message for the author) when there is none."""
    if PROTO in command:
        folder = sandbox_runtime.protocol_folder()
        if folder is None:
            raise ValueError(f"{PROTO}: this server has no protocol files to give the build")
        command = command.replace(PROTO, shlex.quote(str(folder)))
    if KIT in command:
        kit = kit_folder(language)
        if kit is None:
            there = ", ".join(COMPILED)
            raise ValueError(
                f"{KIT}: this server has no starter kit for {language!r} (kits: {there})"
            )
        command = command.replace(KIT, shlex.quote(str(kit)))
    return command


def build_environment(language: str, folder: Path) -> dict[str, str]:
    """What a build in ``language`` has in its environment beside the bot's: Go's caches in the
    build's own folder, no proxy, no toolchain download, Debian's sources on GOPATH; Java's JVM
    options that fit an address-space limit."""
    if language == "go":
        cache = folder / BUILD_CACHE
        return {
            "GOCACHE": str(cache / "go-build"),
            "GOMODCACHE": str(cache / "go-mod"),
            "GOPATH": f"{cache / 'gopath'}:{GOCODE}",
            "GO111MODULE": "auto",
            "GOFLAGS": "-mod=vendor" if (folder / "vendor").is_dir() else "",
            "GOPROXY": "off",
            "GOSUMDB": "off",
            "GOTOOLCHAIN": "local",
            "CGO_ENABLED": "0",
        }
    if language == "java":
        env = {"JAVA_TOOL_OPTIONS": JAVA_BUILD_OPTIONS}
        jdk = java_home()
        if jdk is not None:
            # The JDK's tools find libjli.so through $ORIGIN, which the loader reads from /proc, and
            # a build has no /proc: "javac: error while loading shared libraries: libjli.so".
            env["LD_LIBRARY_PATH"] = str(jdk / "lib")
        return env
    return {}


def java_home() -> Path | None:
    """The JDK whose javac is on the PATH (by its real path: /usr/bin/javac is a link)."""
    javac = shutil.which("javac")
    if javac is None:
        return None
    home = Path(os.path.realpath(javac)).parent.parent
    return home if (home / "lib").is_dir() else None


def leftovers(language: str, folder: Path) -> list[Path]:
    """What a build left that its bot does not need (Go's caches): removed once it ends."""
    if language == "go":
        return [folder / BUILD_CACHE]
    return []


# ------------------------------------------------------------------------------ executables

ELF_MAGIC = b"\x7fELF"
# e_machine numbers (the ELF specification's), for the names in messages.
MACHINES = {
    2: "SPARC",
    3: "x86 (i386)",
    8: "MIPS",
    20: "PowerPC",
    21: "PowerPC 64",
    22: "s390x",
    40: "ARM (32-bit)",
    43: "SPARC V9",
    62: "x86-64",
    183: "AArch64 (arm64)",
    243: "RISC-V",
    258: "LoongArch",
}


@dataclass(frozen=True, slots=True)
class Elf:
    bits: int  # 32 or 64
    little: bool
    machine: int

    def describe(self) -> str:
        name = MACHINES.get(self.machine, f"machine {self.machine}")
        order = "little-endian" if self.little else "big-endian"
        return f"{name}, {self.bits}-bit {order}"


def read_elf(path: Path) -> Elf | None:
    """The architecture an ELF file is for (None: not an ELF file)."""
    with path.open("rb") as f:
        head = f.read(20)
    if len(head) < 20 or head[:4] != ELF_MAGIC or head[4] not in (1, 2) or head[5] not in (1, 2):
        return None
    little = head[5] == 1
    machine = int.from_bytes(head[18:20], "little" if little else "big")
    return Elf(32 if head[4] == 1 else 64, little, machine)


def host_elf() -> Elf | None:
    """This server's architecture, as its own Python interpreter's ELF header says."""
    try:
        return read_elf(Path(os.path.realpath(sys.executable)))
    except OSError:
        return None


def executable_problem(program: Path, shown: str) -> str | None:
    """Why a ``binary`` bundle's program cannot run on this server (one line), or None. ``shown``:
    the program as the manifest names it."""
    if not program.is_file():
        return f"run: {shown!r} is not a file of the bundle"
    try:
        elf = read_elf(program)
    except OSError as exc:
        return f"run: {shown!r} cannot be read: {exc.strerror or exc}"
    if elf is None:
        return (
            f"run: {shown!r} is not an ELF executable; a binary bundle runs a prebuilt Linux "
            "executable (a script is a python or node bundle)"
        )
    host = host_elf()
    if host is not None and elf != host:
        return (
            f"run: {shown!r} is built for another architecture ({elf.describe()}); this server "
            f"runs {host.describe()} executables"
        )
    if not os.access(program, os.X_OK):
        return f"run: {shown!r} is not executable; pack it with its execute bit (chmod +x)"
    return None


# ------------------------------------------------------------------------------ versions


@dataclass(frozen=True, slots=True)
class Survey:
    """A language as this machine has it: the versions found, or what it lacks."""

    language: str
    title: str
    versions: tuple[str, ...]
    lacking: tuple[Need, ...]

    @property
    def ok(self) -> bool:
        return not self.lacking

    def line(self) -> str:
        if self.lacking:
            return f"missing: {how_to_install(self.lacking)}"
        return ", ".join(self.versions)


def _first_line(argv: Sequence[str]) -> str:
    """The first line a version command prints (stdout or stderr), or ""."""
    try:
        done = subprocess.run(
            list(argv),
            capture_output=True,
            text=True,
            timeout=VERSION_SECONDS,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "JAVA_TOOL_OPTIONS": ""},
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    for text in (done.stdout, done.stderr):
        for line in text.splitlines():
            if line.strip() and not line.startswith("Picked up"):
                return line.strip()[:MAX_VERSION]
    return ""


def _jar_version(name: str) -> str:
    """A Debian jar's version, from the versioned file its plain name links to."""
    real = os.path.basename(os.path.realpath(f"{JAVA_SHARE}/{name}.jar"))
    found = re.fullmatch(re.escape(name) + r"-(.+)\.jar", real)
    return found.group(1) if found else "?"


def _go_grpc_version() -> str:
    try:
        text = Path(f"{GOCODE}/src/google.golang.org/grpc/version.go").read_text()
    except OSError:
        return "?"
    found = re.search(r'Version\s*=\s*"([^"]+)"', text)
    return found.group(1) if found else "?"


def versions(language: str) -> tuple[str, ...]:
    """The versions of ``language``'s toolchain and libraries on this machine (ask only when every
    need is present)."""
    if language == "python":
        import google.protobuf
        import grpc

        python = ".".join(str(n) for n in sys.version_info[:3])
        return (
            f"Python {python}",
            f"grpcio {grpc.__version__}",
            f"protobuf {google.protobuf.__version__}",
        )
    if language == "node":
        return (f"Node.js {_first_line(['node', '--version']) or '?'}",)
    if language == "cpp":
        return (
            f"g++ {_first_line(['g++', '-dumpfullversion']) or '?'}",
            f"gRPC C++ {_first_line(['pkg-config', '--modversion', 'grpc++']) or '?'}",
            _first_line(["protoc", "--version"]).replace("libprotoc", "protoc") or "protoc ?",
        )
    if language == "go":
        go = _first_line(["go", "version"]).split()
        return (
            f"Go {go[2].removeprefix('go') if len(go) > 2 else '?'}",
            f"gRPC-Go {_go_grpc_version()}",
            _first_line(["protoc", "--version"]).replace("libprotoc", "protoc") or "protoc ?",
        )
    if language == "java":
        return (
            _first_line(["javac", "-version"]) or "javac ?",
            f"gRPC-Java {_jar_version('grpc-core')}",
            f"protobuf-java {_jar_version('protobuf')}",
        )
    host = host_elf()
    return (f"ELF {host.describe()}" if host is not None else "ELF ?",)


def survey(languages: Sequence[str] = LANGUAGES) -> list[Survey]:
    """Each language as this machine has it (runs each toolchain's version command)."""
    out = []
    for language in languages:
        each = runtime(language)
        lacking = tuple(missing(language))
        found = () if lacking else versions(language)
        out.append(Survey(language, each.title, found, lacking))
    return out

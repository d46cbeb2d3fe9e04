"""Bundle languages: the manifest's, the competition file's list, what the server lacks, the binary
bundle's ELF header, what a build is given, ``arena compete runtimes`` and the language on the
board."""

from __future__ import annotations

import asyncio
import io
import os
import shutil
import sys
import tarfile
from pathlib import Path

import pytest
from intake_helpers import Gates, bundle, run, running, until
from typer.testing import CliRunner

from arena.bots.limits import Limits
from arena.cli.main import app
from arena.competition import bundles, intake, runtimes
from arena.competition.desk_port import SubmissionError
from arena.competition.spec import CompetitionFileError, parse
from arena.ledger import competitions as store
from arena.sandbox import runtime as sandbox_runtime

ROOT = Path(__file__).resolve().parents[2]


def manifest(language: str, run: str = "./bot", build: str = "") -> str:
    text = f'name = "b"\nversion = "1"\nlanguage = "{language}"\nrun = "{run}"\n'
    return text + (f'build = "{build}"\n' if build else "")


# ------------------------------------------------------------------------------ the manifest


@pytest.mark.parametrize("language", ["python", "node", "cpp", "go", "java", "binary"])
def test_every_language_of_the_arena_is_a_manifests(language: str) -> None:
    assert bundles.parse_manifest(manifest(language)).language == language


def test_a_language_the_arena_has_not_is_refused_naming_those_it_has() -> None:
    with pytest.raises(bundles.BundleError) as info:
        bundles.parse_manifest(manifest("native"))
    assert str(info.value) == (
        "arena-bot.toml: language: expected one of python, node, cpp, go, java, binary, "
        "got 'native'"
    )


@pytest.mark.parametrize("word", ["{proto}", "{kit}"])
def test_the_protocol_and_the_kit_are_for_the_build_line_only(word: str) -> None:
    assert bundles.parse_manifest(manifest("cpp", build=f"make P={word}")).build
    with pytest.raises(bundles.BundleError) as info:
        bundles.parse_manifest(manifest("cpp", run=f"./bot {word}"))
    assert str(info.value) == (
        f"arena-bot.toml: run: {word} is for the build line only; a bot runs from its own files"
    )


# ------------------------------------------------------------------------------ the competition file


def test_a_competition_accepts_every_language_unless_its_file_says_which() -> None:
    assert parse({"name": "C"}).submissions.languages == runtimes.LANGUAGES
    spec = parse({"name": "C", "submissions": {"languages": ["python", "cpp"]}})
    assert spec.submissions.languages == ("python", "cpp")


@pytest.mark.parametrize(
    ("languages", "says"),
    [
        (
            ["python", "rust"],
            "c.toml: submissions.languages[1]: expected one of python, node, cpp, go, java or "
            "binary, got 'rust'",
        ),
        (["go", "go"], "c.toml: submissions.languages: go listed more than once"),
        (
            [],
            "c.toml: submissions.languages: List should have at least 1 item after validation, "
            "not 0",
        ),
    ],
)
def test_a_bad_list_of_languages_is_refused_naming_the_field(
    languages: list[str], says: str
) -> None:
    with pytest.raises(CompetitionFileError) as info:
        parse({"name": "C", "submissions": {"languages": languages}}, "c.toml")
    assert str(info.value) == says


def test_the_schema_lists_the_languages() -> None:
    from arena.competition.spec import json_schema

    field = json_schema()["$defs"]["SubmissionsModel"]["properties"]["languages"]
    assert field["items"]["enum"] == list(runtimes.LANGUAGES)
    assert field["default"] == list(runtimes.LANGUAGES)


def test_the_example_competition_names_its_languages() -> None:
    from arena.competition.spec import load

    spec = load(ROOT / "competitions" / "example.toml")
    assert spec.submissions.languages == runtimes.LANGUAGES


# ------------------------------------------------------------------------------ what the server lacks


def without(monkeypatch: pytest.MonkeyPatch, *programs: str) -> None:
    """This machine as if ``programs`` were not installed."""
    real = shutil.which

    def which(name: str, *args: object, **kwargs: object) -> str | None:
        return None if name in programs else real(name, *args, **kwargs)

    monkeypatch.setattr(runtimes.shutil, "which", which)


def test_a_language_whose_toolchain_is_missing_names_the_debian_packages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    without(monkeypatch, "g++", "grpc_cpp_plugin")
    assert [n.what for n in runtimes.missing("cpp")] == ["g++", "grpc_cpp_plugin"]
    assert runtimes.refusal("cpp") == (
        "language 'cpp': this server lacks its toolchain (g++, grpc_cpp_plugin); the organiser "
        "must install Debian packages g++ protobuf-compiler-grpc"
    )
    assert runtimes.refusal("python") is None and runtimes.refusal("binary") is None


def test_a_missing_need_that_is_no_debian_package_says_what_to_do() -> None:
    needs = [
        runtimes.Need("node", "nodejs", program="node"),
        runtimes.Need("SDK", hint="npm ci --prefix clients/javascript"),
    ]
    assert runtimes.how_to_install(needs) == (
        "install Debian packages nodejs; npm ci --prefix clients/javascript"
    )


def test_the_survey_gives_versions_or_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    without(monkeypatch, "javac")
    found = {s.language: s for s in runtimes.survey(("python", "java", "binary"))}
    python = ".".join(str(n) for n in sys.version_info[:3])
    assert found["python"].ok and found["python"].versions[0] == f"Python {python}"
    assert found["java"].line() == "missing: install Debian packages openjdk-17-jdk-headless"
    host = runtimes.host_elf()
    assert host is not None
    assert found["binary"].line() == f"ELF {host.describe()}"


def test_arena_compete_runtimes_prints_each_language(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    without(monkeypatch, "go")
    file = tmp_path / "c.toml"
    file.write_text('name = "C"\n[submissions]\nlanguages = ["python", "go"]\n')
    out = CliRunner().invoke(app, ["compete", "runtimes", str(file)])
    assert out.exit_code == 0, out.output
    lines = {line.split()[0]: line for line in out.output.splitlines()}
    assert list(lines) == list(runtimes.LANGUAGES)
    assert lines["python"].startswith("python  Python 3.11")
    assert lines["go"] == ("go      missing: install Debian packages golang-go")
    assert lines["node"].endswith("(not accepted by this competition)")
    assert not lines["python"].endswith("(not accepted by this competition)")


# ------------------------------------------------------------------------------ submissions refused


def lang_bundle(language: str) -> bytes:
    """The helper's bundle, whose manifest is Python's, in ``language``."""
    out = io.BytesIO()
    with (
        tarfile.open(fileobj=io.BytesIO(bundle("1")), mode="r:gz") as src,
        tarfile.open(fileobj=out, mode="w:gz") as dst,
    ):
        for member in src.getmembers():
            body = src.extractfile(member)
            assert body is not None
            content = body.read()
            if member.name == bundles.MANIFEST:
                content = content.replace(b'"python"', f'"{language}"'.encode())
                member.size = len(content)
            dst.addfile(member, io.BytesIO(content))
    return out.getvalue()


def test_a_bundle_in_a_language_the_competition_does_not_accept_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def go() -> None:
        gates = Gates()
        async with running(tmp_path, monkeypatch, gates) as (server, comp, ada):
            server.spec = parse(
                {
                    "name": "Intake",
                    "server": {"submissions": "127.0.0.1:0", "bots": "127.0.0.1:0"},
                    "submissions": {"languages": ["python", "node"]},
                }
            )
            with pytest.raises(SubmissionError) as info:
                await server.submit(ada, lang_bundle("go"))
            assert str(info.value) == (
                "bundle refused: language 'go' is not accepted by this competition (it accepts "
                "python, node)"
            )
            assert comp.submissions(server.cid, ada.id) == []
            assert gates.started == []

    run(go)


def test_a_bundle_whose_toolchain_the_server_lacks_is_refused_with_the_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    without(monkeypatch, "go")

    async def go() -> None:
        gates = Gates()
        async with running(tmp_path, monkeypatch, gates) as (server, comp, ada):
            with pytest.raises(SubmissionError) as info:
                await server.submit(ada, lang_bundle("go"))
            assert str(info.value) == (
                "bundle refused: language 'go': this server lacks its toolchain (go); the "
                "organiser must install Debian packages golang-go"
            )
            assert comp.submissions(server.cid, ada.id) == []

    run(go)


def test_an_intake_whose_toolchain_went_fails_with_one_line_in_its_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Accepted at submission, the toolchain removed before its build (an intake taken up again at a
    start): the submission fails, the reason and its log one line naming the packages."""

    async def go() -> None:
        gates = Gates()
        gates.close("1")
        async with running(tmp_path, monkeypatch, gates) as (server, comp, ada):
            real = runtimes.refusal
            calls: list[str] = []

            def refusal(language: str) -> str | None:
                calls.append(language)
                return real(language) if len(calls) == 1 else "language 'cpp': gone"

            monkeypatch.setattr(runtimes, "refusal", refusal)
            sub = await server.submit(ada, lang_bundle("cpp"))
            await until(lambda: comp.submission(sub.id).status == store.FAILED)
            failed = comp.submission(sub.id)
            assert failed.reason == "language 'cpp': gone"
            assert comp.log(sub.id) == "language 'cpp': gone"
            assert gates.started == []

    run(go)


# ------------------------------------------------------------------------------ binary bundles


def elf(path: Path, machine: int, bits: int = 64, little: bool = True) -> Path:
    order = "little" if little else "big"
    head = b"\x7fELF" + bytes([2 if bits == 64 else 1, 1 if little else 2, 1]) + bytes(9)
    head += (2).to_bytes(2, order) + machine.to_bytes(2, order)
    path.write_bytes(head + bytes(44))
    path.chmod(0o755)
    return path


def test_the_elf_header_says_the_architecture(tmp_path: Path) -> None:
    arm = runtimes.read_elf(elf(tmp_path / "a", 183))
    assert arm == runtimes.Elf(64, True, 183)
    assert arm.describe() == "AArch64 (arm64), 64-bit little-endian"
    (tmp_path / "s").write_text("#!/bin/sh\n")
    assert runtimes.read_elf(tmp_path / "s") is None
    host = runtimes.host_elf()
    assert host is not None and host == runtimes.read_elf(Path(os.path.realpath(sys.executable)))


def test_a_binary_for_another_architecture_is_refused_in_one_line(tmp_path: Path) -> None:
    host = runtimes.host_elf()
    assert host is not None
    other = 183 if host.machine != 183 else 62
    program = elf(tmp_path / "bot", other)
    why = runtimes.executable_problem(program, "./bot")
    name = runtimes.MACHINES[other]
    assert why == (
        f"run: './bot' is built for another architecture ({name}, 64-bit little-endian); this "
        f"server runs {host.describe()} executables"
    )
    native = elf(tmp_path / "native", host.machine, host.bits, host.little)
    assert runtimes.executable_problem(native, "native") is None
    native.chmod(0o644)
    assert runtimes.executable_problem(native, "native") == (
        "run: 'native' is not executable; pack it with its execute bit (chmod +x)"
    )
    (tmp_path / "s").write_text("#!/bin/sh\n")
    assert runtimes.executable_problem(tmp_path / "s", "s") == (
        "run: 's' is not an ELF executable; a binary bundle runs a prebuilt Linux executable "
        "(a script is a python or node bundle)"
    )
    assert runtimes.executable_problem(tmp_path / "none", "none") == (
        "run: 'none' is not a file of the bundle"
    )


def test_the_intake_of_a_foreign_binary_fails_with_its_reason(tmp_path: Path) -> None:
    host = runtimes.host_elf()
    assert host is not None
    source = tmp_path / "source"
    source.mkdir()
    elf(source / "bot", 183 if host.machine != 183 else 62)
    m = bundles.Manifest("b", "1", "binary", "./bot")
    outcome = asyncio.run(intake.build(m, source, tmp_path / "built", Limits(sandbox="none"), 30))
    assert not outcome.ok
    assert outcome.reason.startswith("run: './bot' is built for another architecture (")
    assert outcome.log == outcome.reason and "\n" not in outcome.reason
    intake._remove(tmp_path / "built")


# ------------------------------------------------------------------------------ what a build is given


def test_a_build_is_given_the_protocol_and_its_languages_kit(tmp_path: Path) -> None:
    proto = sandbox_runtime.protocol_folder()
    kit = runtimes.kit_folder("go")
    assert proto is not None and kit == ROOT / "clients" / "go"
    assert runtimes.fill("make P={proto} K={kit}", "go") == f"make P={proto} K={kit}"
    with pytest.raises(ValueError) as info:
        runtimes.fill("cp -R {kit} kit", "python")
    assert str(info.value) == (
        "{kit}: this server has no starter kit for 'python' (kits: cpp, go, java)"
    )
    assert kit in sandbox_runtime.runtime_folders({}), "shown read-only to builds"


def test_a_go_build_keeps_its_caches_in_its_folder_and_leaves_none(tmp_path: Path) -> None:
    """The build sees GOCACHE in its own folder, no proxy and Debian's sources on GOPATH; what it
    cached there is gone once it ends (the bot does not need it)."""
    source, built = tmp_path / "source", tmp_path / "built"
    source.mkdir()
    (source / "bot").write_text("")
    script = (
        'mkdir -p "$GOCACHE" && echo cached > "$GOCACHE/x" && '
        'echo "$GOCACHE|$GOPROXY|$GOPATH|$GOTOOLCHAIN" > env.txt'
    )
    m = bundles.Manifest("b", "1", "go", "./bot", f"sh -c '{script}'")
    outcome = asyncio.run(intake.build(m, source, built, Limits(sandbox="none"), 30))
    assert outcome.ok, outcome.log
    cache, proxy, gopath, toolchain = (built / "env.txt").read_text().strip().split("|")
    assert cache == str(built / runtimes.BUILD_CACHE / "go-build")
    assert (proxy, toolchain) == ("off", "local")
    assert gopath.endswith(":/usr/share/gocode")
    assert not (built / runtimes.BUILD_CACHE).exists()
    intake._remove(built)


def test_a_build_over_its_time_fails_naming_build_seconds(tmp_path: Path) -> None:
    source, built = tmp_path / "source", tmp_path / "built"
    source.mkdir()
    m = bundles.Manifest("b", "1", "cpp", "./bot", "sleep 30")
    outcome = asyncio.run(intake.build(m, source, built, Limits(sandbox="none"), 1))
    assert not outcome.ok
    assert outcome.reason == "the build took longer than 1 s"
    intake._remove(built)


# ------------------------------------------------------------------------------ the board


def test_the_board_shows_each_entrants_true_language(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def go() -> None:
        gates = Gates()
        async with running(tmp_path, monkeypatch, gates) as (server, comp, ada):
            sub = await server.submit(ada, lang_bundle("binary"))
            await until(lambda: comp.submission(sub.id).status == store.ACTIVE)
            (line,) = comp.board(server.cid)
            assert (line.bot, line.language) == ("b", "binary")

    run(go)


def test_a_java_build_finds_the_jdks_libraries_without_proc() -> None:
    """A build has no /proc, through which the loader finds $ORIGIN: javac could not load its
    libjli.so until the JDK's lib folder was on LD_LIBRARY_PATH."""
    javac = shutil.which("javac")
    if javac is None:
        pytest.skip("no javac here")
    env = runtimes.build_environment("java", Path("/nowhere"))
    lib = Path(os.path.realpath(javac)).parent.parent / "lib"
    assert env["LD_LIBRARY_PATH"] == str(lib)
    assert (lib / "libjli.so").is_file()
    assert "-Xmx" in env["JAVA_TOOL_OPTIONS"]


def test_the_leaderboard_command_shows_the_language_column() -> None:
    from rich.console import Console

    from arena.cli.compete.shared import _board

    line = store.BoardLine(1, "cpp-bot", "1", "ada", 1.0, 25.0, 8.0, 3, "active", 7, "cpp")
    console = Console(width=200, record=True)
    console.print(_board("Leaderboard: C", [line]))
    text = console.export_text()
    assert "language" in text
    row = next(r for r in text.splitlines() if "cpp-bot" in r)
    assert [cell.strip() for cell in row.split("│") if cell.strip()][:4] == [
        "1",
        "cpp-bot",
        "1",
        "cpp",
    ]

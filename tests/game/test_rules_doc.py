"""docs/rules.md, the project's own rules text (issue 13 item 11): every section the code, the tests and
the README cite exists, and the engine's files no longer cite a rules text that a clone does not hold."""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "rules.md"
HEADING = re.compile(r"^#{2,3} (\d+(?:\.\d+)*)[. ]", re.MULTILINE)
# "docs/rules.md §6.4", "docs/rules.md §3 and §4", "docs/rules.md §1, §2, §5", "... §1.3 to §1.5".
CITATION = re.compile(
    r"docs/rules\.md\)?,?\s+(§\d+(?:\.\d+)*(?:(?:,\s*|\s+and\s+|\s+to\s+)§\d+(?:\.\d+)*)*)"
)
SECTION = re.compile(r"§(\d+(?:\.\d+)*)")
SOURCES = ("arena", "clients", "tests", "benchmarks", "scripts")


def sections() -> set[str]:
    return set(HEADING.findall(DOC.read_text(encoding="utf-8")))


def cited() -> dict[str, set[str]]:
    """Section numbers cited, by the file citing them."""
    out: dict[str, set[str]] = {}
    files = [ROOT / "README.md", DOC]
    for top in SOURCES:
        for folder, dirs, names in os.walk(ROOT / top):
            dirs[:] = [d for d in dirs if d not in ("node_modules", "__pycache__")]
            files.extend(Path(folder, n) for n in names if n.endswith((".py", ".md", ".js")))
    for path in files:
        if path == Path(__file__).resolve():
            continue  # its own examples of citations
        text = path.read_text(encoding="utf-8")
        found = {n for run in CITATION.findall(text) for n in SECTION.findall(run)}
        if path.name in ("README.md", "rules.md"):
            found |= set(SECTION.findall(text))  # these cite docs/rules.md throughout
        if found:
            out[str(path.relative_to(ROOT))] = found
    return out


def test_the_rules_text_has_its_sections() -> None:
    """One section per part of the rules (the numbering the citations use)."""
    have = sections()
    assert {str(n) for n in range(1, 10)} <= have
    assert {"1.4", "2.3", "5.3", "6.4", "6.6"} <= have


def test_citations_are_read_as_written() -> None:
    """The check below reads every form of citation the code uses."""
    text = "(docs/rules.md §3 and §12.1; docs/rules.md §1, §2 to §5) docs/rules.md §6.4: x"
    runs = CITATION.findall(text)
    assert [n for run in runs for n in SECTION.findall(run)] == ["3", "12.1", "1", "2", "5", "6.4"]


def test_every_cited_section_exists() -> None:
    """Every "docs/rules.md §N" in the code, tests and README names a section of docs/rules.md."""
    have = sections()
    refs = cited()
    assert len(refs) > 20  # the engine, its tests and the README cite it
    missing = {f: sorted(n for n in ns if n not in have) for f, ns in refs.items()}
    assert not {f: ns for f, ns in missing.items() if ns}


def test_the_engine_cites_its_own_rules_text() -> None:
    """A clone holds docs/rules.md, not the shared RULES.md: the engine, its tests and the README cite
    the former."""
    paths = [*(ROOT / "arena" / "game").rglob("*.py"), *(ROOT / "tests" / "game").rglob("*.py")]
    offenders = [
        str(p.relative_to(ROOT))
        for p in [*paths, ROOT / "README.md"]
        if p != Path(__file__).resolve()
        and re.search(
            r"RULES(\.md| \d| section| preamble| notation)", p.read_text(encoding="utf-8")
        )
    ]
    assert offenders == []

"""Issue 48: Polish's ``target`` option (000: "The game is not less than 2000 up") in tournament and
competition files and their JSON schemas; a bad value is one line naming the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.competition import spec as competition
from arena.tournament import spec as tournament

ENTRANTS = """
[[entrants]]
name = "a"
command = "{python} -m arena_bot.random_bot"

[[entrants]]
name = "b"
command = "{python} -m arena_bot.first_bot"
"""


def _tournament(tmp_path: Path, options: str) -> Path:
    path = tmp_path / "t.toml"
    path.write_text(f'name = "T"\nvariant = "polish"\n[options]\n{options}\n{ENTRANTS}')
    return path


def _competition(tmp_path: Path, options: str) -> Path:
    path = tmp_path / "c.toml"
    path.write_text(f'name = "C"\nvariant = "polish"\n[options]\n{options}\n')
    return path


@pytest.mark.parametrize("value", ["2000", "2500", "3000", "4000", "5000"])
def test_a_tournament_and_a_competition_take_the_polish_target(tmp_path: Path, value: str) -> None:
    t = tournament.load(_tournament(tmp_path, f'target = "{value}"'))
    assert dict(t.options) == {"game_end": "end-of-deal", "target": value}
    assert t.build_variant().target == int(value)
    c = competition.load(_competition(tmp_path, f'target = "{value}"'))
    assert dict(c.options)["target"] == value and c.build_variant().target == int(value)


def test_the_target_defaults_to_2000_and_is_recorded(tmp_path: Path) -> None:
    t = tournament.load(_tournament(tmp_path, ""))
    assert dict(t.options)["target"] == "2000"
    assert t.to_dict()["options"]["target"] == "2000"


@pytest.mark.parametrize(
    ("options", "field", "fragments"),
    [
        ('target = "2600"', "options", ("'target'", "2000, 2500, 3000, 4000, 5000", "'2600'")),
        ('target = "1000"', "options", ("'target'", "'1000'")),
        ("target = 3000", "options.target", ("string",)),
    ],
)
def test_a_bad_target_is_one_line_naming_the_file_and_field(
    tmp_path: Path, options: str, field: str, fragments: tuple[str, ...]
) -> None:
    for load, path, error in (
        (tournament.load, _tournament(tmp_path, options), tournament.TournamentFileError),
        (competition.load, _competition(tmp_path, options), competition.CompetitionFileError),
    ):
        with pytest.raises(error) as info:
            load(path)
        message = str(info.value)
        assert "\n" not in message
        assert message.startswith(f"{path}: {field}: "), message
        for fragment in fragments:
            assert fragment in message, message


def test_target_is_refused_for_a_variant_without_it(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text(f'name = "T"\n[options]\ntarget = "3000"\n{ENTRANTS}')
    with pytest.raises(
        tournament.TournamentFileError, match=r"t\.toml: options: .*no option 'target'"
    ):
        tournament.load(path)


def test_the_json_schemas_describe_the_target() -> None:
    for schema in (tournament.json_schema(), competition.json_schema()):
        described = schema["properties"]["options"]["description"]
        assert "target = 2000 | 2500 | 3000 | 4000 | 5000 (polish)" in described
        assert "game_end = end-of-deal | immediate" in described

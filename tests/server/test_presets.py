"""Rule presets as data: config/rules.toml, other files, and the checks on load."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.rules import CUSTOM, MCR, Wilds
from server.config import ConfigError, load
from server.presets import DEFAULT_RULES_FILE, PresetError, load_presets


def test_the_shipped_presets_load_and_name_mcr_and_custom() -> None:
    presets = load_presets()
    assert presets["mcr"] == MCR
    assert presets["custom"] == CUSTOM
    assert {r.wilds for r in presets.values()} == set(Wilds)
    assert presets["custom-8fan"].min_fan == 8 and presets["custom-8fan"].base_points == 8
    assert presets["custom-nowild"].base_points == 2
    assert not presets["custom-norepeat"].dealer_repeat
    assert load_presets(DEFAULT_RULES_FILE) == presets


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rules.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_another_file_adds_presets(tmp_path: Path) -> None:
    path = write(tmp_path, '[club]\nvariant = "custom"\nwilds = "flowers"\nrepeat_cap = 2\n')
    (club,) = load_presets(path).values()
    assert (club.name, club.wilds, club.repeat_cap) == ("club", Wilds.FLOWERS, 2)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[club\nvariant = 1", "not valid TOML"),
        ("", "no preset"),
        ('club = "custom"', "'club' must be a [section] of options"),
        ('[club]\nvariant = "custom"\nwilds = "all"\n', "[club] wilds must be one of"),
        ('[club]\nvariant = "custom"\ncap = 3\n', "[club] unknown option 'cap'"),
        ('["two words"]\nvariant = "mcr"\n', "a preset name is"),
    ],
)
def test_a_bad_file_is_refused_naming_file_and_preset(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(PresetError) as info:
        load_presets(path)
    assert str(path) in str(info.value)
    assert message in str(info.value)


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PresetError, match="cannot read the rule presets"):
        load_presets(tmp_path / "nope.toml")


def test_server_config_checks_the_default_preset(tmp_path: Path) -> None:
    assert load(environ={}).rules.preset == "mcr"
    with pytest.raises(ConfigError, match=r"\[rules\] preset 'riichi' is not a preset"):
        load(environ={"GUOBIAO_RULES_PRESET": "riichi"})
    path = write(tmp_path, '[club]\nvariant = "custom"\n')
    config = load(environ={"GUOBIAO_RULES_FILE": str(path), "GUOBIAO_RULES_PRESET": "club"})
    assert list(config.rule_presets()) == ["club"]
    with pytest.raises(ConfigError, match=r"\[rules\] file: .*cannot read"):
        load(environ={"GUOBIAO_RULES_FILE": str(tmp_path / "missing.toml")})

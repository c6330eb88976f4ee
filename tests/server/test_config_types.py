"""``server.config`` takes a file's value only of its setting's TOML type: ``port = "8824"``
(text where a number goes) was silently read as 8824, so a file that a TOML-aware tool would
check, or another program would read, said something else than the server took. Refused with
the file, section, setting, the type wanted and the type given; an int stays welcome where a
float goes (TOML writes 2.0 as ``2``), and the environment, which has only text, is read as
before."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.bots import LEVELS
from server.config import Config, ConfigError, load

# Every setting: (section, key, its type, its default).
SETTINGS = [
    (section.name, f.name, type(getattr(getattr(Config(), section.name), f.name)),
     getattr(getattr(Config(), section.name), f.name))
    for section in fields(Config)
    for f in fields(getattr(Config(), section.name))
]  # fmt: skip
KINDS = {int: "a whole number", float: "a number", str: "text in quotes", bool: "true or false"}


def toml(value: object) -> str:
    """``value`` written as a TOML value of its own type."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(value)


def refusal(site: Path, body: str) -> str:
    site.write_text(body, encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load(site, environ={})
    return str(refused.value)


def test_the_settings_are_of_the_four_kinds() -> None:
    """(A setting of another kind, an optional one say, needs its check here and its case
    in ``server.config._typed``.)"""
    assert {kind for _, _, kind, _ in SETTINGS} == set(KINDS)


@pytest.mark.parametrize(("section", "key", "kind", "default"), SETTINGS)
def test_each_setting_written_as_its_toml_type_is_taken(
    tmp_path: Path, section: str, key: str, kind: type, default: object
) -> None:
    site = tmp_path / "site.toml"
    site.write_text(f"[{section}]\n{key} = {toml(default)}\n", encoding="utf-8")
    taken = getattr(getattr(load(site, environ={}), section), key)
    assert taken == default and type(taken) is kind


# Values of another TOML type than the setting's, and how the refusal names each.
WRONG: dict[type, list[tuple[str, str]]] = {
    int: [
        ('"8824"', 'the text "8824" (without the quotes: {key} = 8824)'),
        ("3.5", "the number 3.5"),
        ("15.0", "the number 15.0"),
        ("true", "the boolean true"),
        ("[1]", "a list"),
    ],
    float: [
        ('"2.5"', 'the text "2.5" (without the quotes: {key} = 2.5)'),
        ('"2"', 'the text "2" (without the quotes: {key} = 2)'),
        ("false", "the boolean false"),
        ("{ x = 1 }", "a table"),
    ],
    bool: [
        ('"true"', 'the text "true" (without the quotes: {key} = true)'),
        ('"yes"', 'the text "yes"'),
        ("1", "the whole number 1"),
        ("0.0", "the number 0.0"),
    ],
    str: [
        ("5", "the whole number 5"),
        ("true", "the boolean true"),
        ("1.5", "the number 1.5"),
        ("2026-12-01", "the date 2026-12-01"),
    ],
}


@pytest.mark.parametrize(("section", "key", "kind", "default"), SETTINGS)
def test_a_value_of_another_toml_type_is_refused_naming_both(
    tmp_path: Path, section: str, key: str, kind: type, default: object
) -> None:
    site = tmp_path / "site.toml"
    for written, named in WRONG[kind]:
        said = refusal(site, f"[{section}]\n{key} = {written}\n")
        wanted = f"{site}: [{section}] {key} must be {KINDS[kind]}, not {named.format(key=key)}"
        assert said == wanted


NUMBERS = [(section, key, kind) for section, key, kind, _ in SETTINGS if kind in (int, float)]


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(setting=st.sampled_from(NUMBERS), value=st.integers(-(10**12), 10**12) | st.floats())
def test_a_quoted_number_is_never_taken(
    tmp_path: Path, setting: tuple[str, str, type], value: float
) -> None:
    """Whatever the number, in range or not: quoted, it is refused as text."""
    section, key, kind = setting
    site = tmp_path / "site.toml"
    said = refusal(site, f'[{section}]\n{key} = "{value!r}"\n')
    assert said.startswith(f'{site}: [{section}] {key} must be {KINDS[kind]}, not the text "')


@pytest.mark.parametrize(("section", "key", "kind", "default"), SETTINGS)
def test_the_environment_is_text_read_as_the_settings_type(
    section: str, key: str, kind: type, default: object
) -> None:
    """A variable has no type but text: it is read as the setting's, as before."""
    text = {bool: "false" if default else "true"}.get(kind, str(default))
    taken = getattr(getattr(load(environ={f"GUOBIAO_{section}_{key}".upper(): text}), section), key)
    assert type(taken) is kind
    if kind is not bool:
        assert taken == default


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        (  # not a number
            {"GUOBIAO_SERVER_PORT": "abc"},
            "GUOBIAO_SERVER_PORT=abc: [server] port must be a whole number, "
            "e.g. GUOBIAO_SERVER_PORT=8765",
        ),
        (
            {"GUOBIAO_TIMERS_TURN_SECONDS": "1.5"},
            "GUOBIAO_TIMERS_TURN_SECONDS=1.5: [timers] turn_seconds must be a whole number, "
            "e.g. GUOBIAO_TIMERS_TURN_SECONDS=15",
        ),
        (
            {"GUOBIAO_LIMITS_RESERVED_SHARE": "half"},
            "GUOBIAO_LIMITS_RESERVED_SHARE=half: [limits] reserved_share must be a number, "
            "e.g. GUOBIAO_LIMITS_RESERVED_SHARE=0.1",
        ),
        (  # set, but to nothing
            {"GUOBIAO_SERVER_PORT": ""},
            "GUOBIAO_SERVER_PORT='': [server] port must be a whole number, "
            "e.g. GUOBIAO_SERVER_PORT=8765",
        ),
        (  # out of range
            {"GUOBIAO_SERVER_PORT": "70000"},
            "GUOBIAO_SERVER_PORT=70000: [server] port must be between 0 and 65535",
        ),
        (
            {"GUOBIAO_LIMITS_RESERVED_SHARE": "0.95"},
            "GUOBIAO_LIMITS_RESERVED_SHARE=0.95: [limits] reserved_share must be between 0 and 0.9",
        ),
        (  # an unknown choice
            {"GUOBIAO_SERVER_LOG_LEVEL": "verbose"},
            "GUOBIAO_SERVER_LOG_LEVEL=verbose: [server] log_level must be one of debug, info, "
            "warning, error",
        ),
        (
            {"GUOBIAO_BOTS_STAND_IN": "godlike"},
            f"GUOBIAO_BOTS_STAND_IN=godlike: [bots] stand_in must be one of {', '.join(LEVELS)}",
        ),
        (  # not a boolean
            {"GUOBIAO_SERVER_STAMP_UPDATES": "maybe"},
            "GUOBIAO_SERVER_STAMP_UPDATES=maybe: [server] stamp_updates must be true or false "
            "(or yes or no, on or off, 1 or 0), e.g. GUOBIAO_SERVER_STAMP_UPDATES=false",
        ),
        (  # shown as a shell would take it, a control character as Python writes it
            {"GUOBIAO_SERVER_PORT": "80 80"},
            "GUOBIAO_SERVER_PORT='80 80': [server] port must be a whole number",
        ),
        (
            {"GUOBIAO_SERVER_PORT": "80\x1b[2J"},
            "GUOBIAO_SERVER_PORT='80\\x1b[2J': [server] port must be a whole number",
        ),
    ],
)
def test_a_variable_that_does_not_read_is_refused_naming_it(
    environ: dict[str, str], message: str
) -> None:
    """The environment's refusals named ``environment: [server] port`` and repeated the value
    (``got 'abc'``): not the variable the operator set, nor how to write one. Each names the
    variable as set, the setting, what is wrong, and how to write it (a number or a boolean
    by example, a range or choices by their limits)."""
    with pytest.raises(ConfigError) as refused:
        load(environ=environ)
    assert str(refused.value).startswith(message)


@pytest.mark.parametrize(
    ("section", "key", "kind"), [(s, k, kind) for s, k, kind, _ in SETTINGS if kind is not str]
)
def test_every_settings_variable_is_named_in_its_refusal(
    section: str, key: str, kind: type
) -> None:
    """Whatever the setting, a variable of it that does not read as its type is refused
    naming the variable (text always reads: a text setting is never refused so)."""
    name = f"GUOBIAO_{section}_{key}".upper()
    with pytest.raises(ConfigError) as refused:
        load(environ={name: "abc"})
    assert str(refused.value).startswith(f"{name}=abc: [{section}] {key} must be {KINDS[kind]}")


def test_a_whole_number_is_a_number_for_a_float_setting(tmp_path: Path) -> None:
    site = tmp_path / "site.toml"
    site.write_text("[timers]\nhand_pause_seconds = 2\n[ladder]\nmu = -3\n", encoding="utf-8")
    config = load(site, environ={})
    assert (config.timers.hand_pause_seconds, config.ladder.mu) == (2.0, -3.0)
    assert type(config.timers.hand_pause_seconds) is float

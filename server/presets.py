"""Rule presets: ``config/rules.toml`` (or another file) read into ``RuleSet``s.

The file is data: one ``[section]`` per preset (see the comments in
``config/rules.toml``). Each is checked by ``engine.rules.rule_set_from_mapping``;
any problem raises ``PresetError`` naming the file, the preset and the option.
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from importlib import resources
from pathlib import Path

from engine.rules import RulesError, RuleSet, rule_set_from_mapping

MAX_CLAIM_WINDOW_MS = 10_000  # the most a table may wait after a discard (a preset, create_table)

# The repository's config/, shipped as the package server.config_files (pyproject.toml says
# how). Installed packages are folders on disk, so the resource is a real path.
CONFIG_FILES = Path(str(resources.files("server.config_files")))
DEFAULT_RULES_FILE = CONFIG_FILES / "rules.toml"


class PresetError(ValueError):
    """A rule preset file that cannot be read, or a preset in it that is not valid."""


# Table settings a preset may carry beside its rule options (not rules: a match does not
# store them, and they do not change how a hand is played or scored).
TABLE_KEYS = ("claim_window_ms",)


def load_presets(path: Path | str | None = None) -> dict[str, RuleSet]:
    """The presets of ``path`` (default ``config/rules.toml``), by name, in file order."""
    return {name: rules for name, (rules, _) in _load(path).items()}


def preset_claim_windows(path: Path | str | None = None) -> dict[str, int]:
    """The presets of ``path`` that set their own ``claim_window_ms``: name -> milliseconds.
    A table of such a preset waits that long after every discard unless its creator asks
    otherwise; the others take the server's ``[timers] claim_window_ms``."""
    return {name: w for name, (_, w) in _load(path).items() if w is not None}


def _load(path: Path | str | None) -> dict[str, tuple[RuleSet, int | None]]:
    if path is None or Path(path) == DEFAULT_RULES_FILE:
        return dict(_default_presets())
    return _read(Path(path))


@lru_cache(maxsize=1)
def _default_presets() -> tuple[tuple[str, tuple[RuleSet, int | None]], ...]:
    return tuple(_read(DEFAULT_RULES_FILE).items())


def _read(path: Path) -> dict[str, tuple[RuleSet, int | None]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PresetError(f"{path}: cannot read the rule presets: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise PresetError(f"{path}: not UTF-8 text") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PresetError(f"{path}: not valid TOML: {exc}") from None
    if not data:
        raise PresetError(f"{path}: no preset; expected at least one [name] section")
    presets: dict[str, tuple[RuleSet, int | None]] = {}
    for name, options in data.items():
        if not isinstance(options, dict):
            raise PresetError(f"{path}: {name!r} must be a [section] of options, got a value")
        rule_options = {k: v for k, v in options.items() if k not in TABLE_KEYS}
        try:
            rules = rule_set_from_mapping(name, rule_options, str(path))
        except RulesError as exc:
            raise PresetError(str(exc)) from None
        window = options.get("claim_window_ms")
        if window is not None and (
            isinstance(window, bool)
            or not isinstance(window, int)
            or not 0 <= window <= MAX_CLAIM_WINDOW_MS
        ):
            raise PresetError(
                f"{path}: [{name}] claim_window_ms must be a whole number of milliseconds "
                f"0..{MAX_CLAIM_WINDOW_MS}, got {window!r}"
            )
        presets[name] = (rules, window)
    return presets


def preset_names(path: Path | str | None = None) -> list[str]:
    """The preset names, for ``--rules`` choices and error messages."""
    return list(load_presets(path))

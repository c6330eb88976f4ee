"""``server.config``'s ``[bots]`` section: the levels the server chooses itself, checked on
load against ``engine.bots.LEVELS`` with a message naming the file and the key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.bots import LEVELS, STRONGEST
from server.config import ConfigError, load


def test_the_bots_levels_default_to_the_strongest_where_results_count() -> None:
    bots = load(environ={}).bots
    assert (bots.stand_in, bots.casual_stand_in, bots.queue_fill) == (STRONGEST, "normal", "normal")


def test_a_level_may_be_set_in_a_file_or_the_environment(tmp_path: Path) -> None:
    site = tmp_path / "site.toml"
    site.write_text('[bots]\nstand_in = "normal"\nqueue_fill = "easy"\n')
    bots = load(site, environ={"GUOBIAO_BOTS_CASUAL_STAND_IN": "strong"}).bots
    assert (bots.stand_in, bots.casual_stand_in, bots.queue_fill) == ("normal", "strong", "easy")


@pytest.mark.parametrize("key", ["stand_in", "casual_stand_in", "queue_fill"])
@pytest.mark.parametrize("level", ["hard", "fast", "default", ""])
def test_a_level_outside_the_levels_is_refused_naming_the_file_and_key(
    tmp_path: Path, key: str, level: str
) -> None:
    """``fast`` (a load-test bot) and ``default`` (an old name) are no levels to configure."""
    site = tmp_path / "site.toml"
    site.write_text(f'[bots]\n{key} = "{level}"\n')
    with pytest.raises(ConfigError) as caught:
        load(site, environ={})
    assert str(caught.value) == (
        f"{site}: [bots] {key} must be one of {', '.join(LEVELS)}, got {level!r}"
    )


def test_a_handoff_folder_others_may_enter_is_refused_saying_why(tmp_path: Path) -> None:
    """Whoever reaches the workers' sockets can hand them a connection as any player: the
    folder must be this user's, mode 0700 (``serve --workers`` makes such a one)."""
    folder = tmp_path / "handoff"
    folder.mkdir(mode=0o700)
    folder.chmod(0o700)
    load(None, environ={"GUOBIAO_SERVER_HANDOFF_DIR": str(folder)}).check_handoff_dir()
    load(None, environ={}).check_handoff_dir()  # none: nothing to check

    folder.chmod(0o755)
    config = load(None, environ={"GUOBIAO_SERVER_HANDOFF_DIR": str(folder)})
    with pytest.raises(ConfigError, match=r"handoff_dir .* must be this user's own with mode 0700"):
        config.check_handoff_dir()
    for missing in (tmp_path / "nowhere", tmp_path / "site.toml"):
        if missing.name == "site.toml":
            missing.write_text("")
        config = load(None, environ={"GUOBIAO_SERVER_HANDOFF_DIR": str(missing)})
        with pytest.raises(ConfigError, match=f"handoff_dir '{missing}'"):
            config.check_handoff_dir()


def test_a_file_that_cannot_be_read_is_refused_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder, a file not in UTF-8 or one this user may not read: a ``ConfigError`` that
    names the file and says what is wrong, never the ``OSError`` or ``UnicodeDecodeError``."""
    with pytest.raises(ConfigError, match=f"^{re.escape(str(tmp_path))}: is a directory"):
        load(tmp_path, environ={})
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe")
    with pytest.raises(ConfigError, match=f"^{re.escape(str(binary))}: not valid TOML: not UTF-8"):
        load(binary, environ={})
    locked = tmp_path / "locked.toml"
    locked.write_text("")

    def refuse(path: object, *args: object, **kwargs: object) -> object:
        if Path(str(path)) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return open(path, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr("server.config.open", refuse, raising=False)
    refused = f"^{re.escape(str(locked))}: cannot read: Permission denied"
    with pytest.raises(ConfigError, match=refused):
        load(locked, environ={})

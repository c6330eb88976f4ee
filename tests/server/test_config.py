"""``server.config``'s ``[bots]`` section: the levels the server chooses itself, checked on
load against ``engine.bots.LEVELS`` with a message naming the file and the key."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from engine.bots import LEVELS, STRONGEST
from server.config import OTHER_VARIABLES, SETTING_VARIABLES, ConfigError, load


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


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "GUOBIAO_SERVER_PROT",
            "environment: unknown variable GUOBIAO_SERVER_PROT; did you mean GUOBIAO_SERVER_PORT? "
            "(a setting's variable is GUOBIAO_<SECTION>_<KEY>, for the [section] key of "
            "config/default.toml)",
        ),
        ("GUOBIAO_DATABSE_URL", "did you mean GUOBIAO_DATABASE_URL?"),
        ("guobiao_limits_max_tables", "did you mean GUOBIAO_LIMITS_MAX_TABLES?"),
        ("GUOBIAO_TIMER_TURN_SECONDS", "did you mean GUOBIAO_TIMERS_TURN_SECONDS?"),
        ("GUOBIAO_NOTHING_LIKE_IT", "unknown variable GUOBIAO_NOTHING_LIKE_IT (a setting's"),
    ],
)
def test_an_unknown_guobiao_variable_is_refused_naming_the_closest(name: str, message: str) -> None:
    """As an unknown key in a file is refused, so is a misspelt variable (it was ignored: the
    server ran on the default it was meant to change)."""
    with pytest.raises(ConfigError) as caught:
        load(None, environ={name: "9000"})
    assert message in str(caught.value)


def test_every_guobiao_variable_the_project_reads_is_known() -> None:
    """The variables the build, the tests, the tools and the commands read (every
    ``GUOBIAO_`` name in the repository) are settings or ``OTHER_VARIABLES``: set, none is
    refused as a misspelt setting."""
    repo = Path(__file__).resolve().parents[2]
    skip = {".venv", ".git", "build", "dist", "node_modules", "__pycache__", ".mypy_cache"}
    found: set[str] = set()
    for folder, subfolders, files in os.walk(repo):
        subfolders[:] = [name for name in subfolders if name not in skip]
        for file in files:
            path = Path(folder, file)
            if (
                path.suffix in {".py", ".md", ".toml", ".js", ".cfg", ".txt", ""}
                and path != Path(__file__).resolve()
            ):  # (this file spells some wrong on purpose)
                text = path.read_text("utf-8", errors="replace")
                found.update(re.findall(r"GUOBIAO_[A-Z0-9_]*[A-Z0-9](?![A-Z0-9_<*])", text))
    assert {"GUOBIAO_COMPILE", "GUOBIAO_TEST_POSTGRES_URL", "GUOBIAO_SERVER_PORT"} <= found
    unknown = sorted(found - set(SETTING_VARIABLES) - set(OTHER_VARIABLES))
    assert not unknown, f"add to server.config.OTHER_VARIABLES: {unknown}"
    load(None, environ=dict.fromkeys(OTHER_VARIABLES, "1"))  # none refused


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[limits]\nmax_message_bytes = 100\n", "must be between 256 and 1048576, got 100"),
        ("[limits]\nsend_queue_bytes = 1\n", "must be between 4096 and 1073741824, got 1"),
        ("[ladder]\nmu = 2e6\n", "must be between -1000000 and 1000000, got 2000000.0"),
        ("[limits]\nreserved_share = 1\n", "must be between 0 and 0.9, got 1.0"),
        ("[matchmaking]\ngap_start = 5e5\ngap_max = 4e5\n", "gap_max (400000) must be at least "
         "gap_start (500000)"),
    ],
)  # fmt: skip
def test_a_range_is_written_as_in_a_file(tmp_path: Path, toml: str, message: str) -> None:
    """``:g`` wrote 1 << 20 as 1.04858e+06: a range that cannot be typed back."""
    site = tmp_path / "site.toml"
    site.write_text(toml)
    with pytest.raises(ConfigError) as caught:
        load(site, environ={})
    assert message in str(caught.value) and "e+" not in str(caught.value)


@pytest.mark.parametrize(
    ("node", "says"),
    [
        ("a\x1b[31mb", r"no control or format character, got 'a\\x1b\[31mb' \(U\+001B"),
        ("\u202eabc", r"no control or format character, got '\\u202eabc' \(U\+202E RIGHT-TO"),
        ("n" * 81, r"at most 80 characters, got 81"),
    ],
)
def test_a_node_name_a_terminal_or_a_metrics_label_would_not_show_as_it_is_is_refused(
    node: str, says: str
) -> None:
    """It goes into every log line, metrics label and cluster listing as it is."""
    with pytest.raises(ConfigError, match=rf"\[server\] node must .*{says}"):
        load(None, environ={}, overrides={"server": {"node": node}})
    with pytest.raises(ConfigError, match=r"\[server\] node must"):
        load(None, environ={"GUOBIAO_SERVER_NODE": node})
    for fine in ("node-a", "hk:8765/w2", "节点-1", "n" * 80):
        assert load(None, environ={}, overrides={"server": {"node": fine}}).server.node == fine


def test_a_setting_above_every_section_is_said_so_with_its_section(tmp_path: Path) -> None:
    """Not "unknown section [port]": it is a setting outside its section."""
    site = tmp_path / "site.toml"
    site.write_text("port = 8824\n")
    with pytest.raises(
        ConfigError, match=r"port = \.\.\. is outside any \[section\] \(it belongs in \[server\]\)"
    ):
        load(site, environ={})
    site.write_text("colour = 1\n")
    with pytest.raises(ConfigError, match=r"colour = \.\.\. is outside any \[section\]; every"):
        load(site, environ={})

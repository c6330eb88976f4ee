"""``server.table.settings``: one frozen ``TableSettings``, its one validation (the lobby's
error codes and messages), its summary and its row (and back), without a table."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta, timezone

import pytest
from fakes import table_for

from server.table import LobbyError, TableSettings

LIMITS = {"presets": ("mcr", "wild"), "turn_seconds": (5, 120), "ladders": ("mcr",)}
CAP = datetime(2026, 12, 1, 12, tzinfo=UTC)


def test_the_defaults_are_a_casual_table_of_a_whole_match() -> None:
    settings = TableSettings("mcr", 20)
    settings.validate(**LIMITS)
    assert (settings.hands, settings.aids, settings.rated, settings.watchable) == (
        16,
        True,
        False,
        True,
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.rated = True


@pytest.mark.parametrize(
    ("change", "code", "reason"),
    [
        ({"rules": "nope"}, "bad_message", "unknown rule preset 'nope'; known: mcr, wild"),
        ({"turn_seconds": 4}, "bad_message", "turn_seconds must be 5..120, got 4"),
        ({"turn_seconds": 121}, "bad_message", "turn_seconds must be 5..120, got 121"),
        ({"claim_window_ms": -1}, "bad_message", "claim_window_ms must be 0..10000, got -1"),
        ({"claim_window_ms": 10_001}, "bad_message", "claim_window_ms must be 0..10000"),
        (
            {"rules": "wild", "rated": True},
            "no_such_ladder",
            "rule preset 'wild' has no ladder, so no rated tables; ladders: mcr",
        ),
        ({"hands": 0}, "bad_message", "hands must be 1..16, got 0"),
        ({"hands": 17}, "bad_message", "hands must be 1..16, got 17"),
        (
            {"ends_at": datetime(2026, 12, 1, 12)},
            "bad_message",
            "ends_at must be an aware datetime (UTC)",
        ),
        ({"seed": -1}, "bad_message", "seed must be 0..2**63-1, got -1"),
        ({"seed": 2**63}, "bad_message", "seed must be 0..2**63-1"),
        ({"seed": True}, "bad_message", "seed must be 0..2**63-1, got True"),
        (
            {"spectator_delay_seconds": 3601},
            "bad_message",
            "spectator_delay_seconds must be 0..3600, got 3601",
        ),
        ({"tournament": (1, 0, 2)}, "bad_message", "tournament must be (tournament id, session"),
        ({"tournament": (1, 2)}, "bad_message", "tournament must be (tournament id, session"),
    ],
)
def test_validate_names_the_first_setting_out_of_its_limits(
    change: dict[str, object], code: str, reason: str
) -> None:
    settings = dataclasses.replace(TableSettings("mcr", 20), **change)
    with pytest.raises(LobbyError) as refused:
        settings.validate(**LIMITS)
    assert refused.value.code == code
    assert reason in refused.value.reason


def test_no_ladders_are_named_as_none() -> None:
    with pytest.raises(LobbyError, match="ladders: none"):
        TableSettings("mcr", 20, rated=True).validate(
            presets=("mcr",), turn_seconds=(5, 120), ladders=()
        )


def test_a_tournaments_settings_within_limits_pass() -> None:
    TableSettings(
        "mcr",
        20,
        ends_at=datetime(2026, 12, 1, 13, tzinfo=timezone(timedelta(hours=1))),
        seed=2**63 - 1,
        reveals=False,
        watchable=False,
        spectator_delay_seconds=3600,
        tournament=(7, 1, 3),
    ).validate(**LIMITS)


def test_the_summary_shows_the_settings_with_the_tables_state() -> None:
    settings = TableSettings(
        "mcr", 20, private=True, invite_code="hush", ends_at=CAP, tournament=(7, 2, 3)
    )
    summary = settings.summary(
        "t9",
        rule_options={"x": 1},
        seats=["alice", "bot:fast", None, None],
        state="waiting",
        hand_no=0,
    )
    assert summary == {
        "table": "t9",
        "rules": "mcr",
        "rule_options": {"x": 1},
        "turn_seconds": 20,
        "seats": ["alice", "bot:fast", None, None],
        "state": "waiting",
        "hand_no": 0,
        "private": True,
        "claim_window_ms": 0,
        "hands": 16,
        "aids": True,
        "rated": False,
        "reveals": True,
        "watchable": True,
        "spectator_delay_seconds": 0,
        "ends_at": "2026-12-01T12:00:00Z",
        "tournament": {"id": 7, "session": 2, "table": 3},
    }
    assert "invite_code" not in summary  # a listing never shows it


def test_a_row_gives_back_the_same_settings() -> None:
    settings = TableSettings(
        "mcr",
        20,
        private=True,
        invite_code="hush",
        claim_window_ms=800,
        hands=4,
        aids=False,
        rated=True,
        ends_at=CAP,
        seed=42,
        reveals=False,
        watchable=False,
        spectator_delay_seconds=60,
        tournament=(7, 2, 3),
    )
    created = CAP - timedelta(hours=1)
    row = settings.row("t9", seats=["a", "b", "c", "d"], state="playing", created_at=created)
    assert (row.id, row.seats, row.state, row.created_at) == (
        "t9",
        ("a", "b", "c", "d"),
        "playing",
        created,
    )
    back = TableSettings.from_row(row, claim_window_ms=800, hands=4, rated=True)
    assert back == settings


def test_a_tables_settings_read_as_its_attributes_and_replaced_whole() -> None:
    table = table_for(claim_window_ms=250, private=True)
    assert (table.claim_window_ms, table.private, table.invite_code) == (250, True, "secret")
    before = table.settings
    table.aids = False  # (as a test sets up a table)
    assert table.settings == dataclasses.replace(before, aids=False)
    assert before.aids is True  # the old value is untouched: settings are frozen

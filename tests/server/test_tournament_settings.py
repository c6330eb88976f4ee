"""A tournament's settings without a server (``server.tournaments.settings``): a request's
settings checked for meaning, the seating methods spread over the sessions, the seeds."""

from __future__ import annotations

import json

import pytest

from server import protocol
from server.config import Config
from server.tournaments.settings import (
    Settings,
    TournamentError,
    checked_settings,
    default_methods,
    session_seed,
    wall_seed,
)

PRESETS = ("mcr", "custom")


def request(**payload: object) -> protocol.TournamentRequest:
    frame = {"type": "tournament_configure", "payload": {"tournament": 1, **payload}}
    message = protocol.decode(json.dumps(frame))
    assert isinstance(message, protocol.TournamentRequest)
    return message


def test_one_seating_method_serves_every_session() -> None:
    settings, name, rules = checked_settings(
        request(sessions=3, seating="swiss", name="Cup"), Settings(), Config(), PRESETS
    )
    assert settings.seating == ("swiss", "swiss", "swiss")
    assert (settings.sessions, name, rules) == (3, "Cup", None)


def test_methods_are_cut_or_the_last_repeated_to_the_sessions() -> None:
    base = Settings()
    longer, _, _ = checked_settings(
        request(sessions=4, seating=["random", "balanced"]), base, Config(), PRESETS
    )
    assert longer.seating == ("random", "balanced", "balanced", "balanced")
    shorter, _, _ = checked_settings(request(sessions=1), base, Config(), PRESETS)
    assert shorter.seating == ("random",)


@pytest.mark.parametrize(
    ("payload", "named"),
    [
        ({"rules": "riichi"}, "unknown preset"),
        ({"turn_seconds": 3600}, "turn_seconds must be"),
        ({"fill": "bots"}, "fill must be byes or substitutes"),
        ({"tie_breaks": ["luck"]}, "unknown key"),
        ({"seating": "alphabetical"}, "unknown method"),
    ],
)
def test_a_setting_that_means_nothing_is_refused_naming_it(
    payload: dict[str, object], named: str
) -> None:
    with pytest.raises(TournamentError, match=named) as refused:
        checked_settings(request(**payload), Settings(), Config(), PRESETS)
    assert refused.value.code == "bad_message"


def test_the_stored_settings_read_back_the_same() -> None:
    settings = Settings(sessions=2, seating=("random", "avoid"), tie_breaks=("score",))
    assert Settings.from_dict(json.loads(json.dumps(settings.to_dict()))) == settings
    assert Settings.from_dict({"sessions": 3, "retired_field": 1}) == Settings(sessions=3)


def test_the_seeds_are_derived_one_way_and_apart() -> None:
    assert session_seed(7, 1) == session_seed(7, 1) != session_seed(7, 2)
    assert wall_seed(7, 1) != session_seed(7, 1)
    assert 0 <= wall_seed(2**63 - 1, 32) < 2**63
    assert default_methods(3) == ("random", "avoid", "avoid")

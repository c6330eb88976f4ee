"""A tournament's settings (docs/tournaments.md, "Settings"): the stored value, the checks of
a request that sets them, and the seeds derived from the tournament's recorded seed."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from server.config import Config
from server.errors import ServerError, shown
from server.protocol import TournamentRequest
from server.tournaments import scoring, seating


class TournamentError(ServerError):
    """A tournament request refused."""


@dataclass(frozen=True, slots=True)
class Settings:
    """What a director chose (docs/tournaments.md, "Settings"); stored as a dict."""

    sessions: int = 4
    hands: int = 16
    time_cap_minutes: int = 0
    turn_seconds: int = 20
    aids: bool = True
    spectator_delay_seconds: int = 0
    public: bool = True
    registration: str = "open"  # open: players sign up; director: the director adds them
    fill: str = "byes"  # byes or substitutes, when the count is not a multiple of four
    duplicate: bool = False
    check_in: bool = True
    tie_breaks: tuple[str, ...] = scoring.TIE_BREAKS  # every key, in the order of the docs
    seating: tuple[str, ...] = ("random", "avoid", "avoid", "avoid")

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["tie_breaks"] = list(self.tie_breaks)
        data["seating"] = list(self.seating)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Settings:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        for key in ("tie_breaks", "seating"):
            if key in values:
                values[key] = tuple(values[key])
        return cls(**values)


def checked_settings(
    request: TournamentRequest, base: Settings, config: Config, presets: Iterable[str]
) -> tuple[Settings, str | None, str | None]:
    """(the settings with the request's changes, its name, its rules) checked for meaning
    (the protocol checked types and ranges); ``TournamentError`` naming the field."""
    given = {k: v for k, v in request.fields if k not in ("name", "rules")}
    rules = request.get("rules")
    if rules is not None and rules not in set(presets):
        raise TournamentError(
            "bad_message", f"rules: unknown preset {shown(rules)}; known: {', '.join(presets)}"
        )
    timers = config.timers
    seconds = given.get("turn_seconds")
    if seconds is not None and not timers.min_turn_seconds <= seconds <= timers.max_turn_seconds:
        raise TournamentError(
            "bad_message",
            f"turn_seconds must be {timers.min_turn_seconds}..{timers.max_turn_seconds}, "
            f"got {seconds}",
        )
    for key, allowed in (("registration", ("open", "director")), ("fill", ("byes", "substitutes"))):
        if key in given and given[key] not in allowed:
            raise TournamentError(
                "bad_message", f"{key} must be {' or '.join(allowed)}, got {shown(given[key])}"
            )
    for key in given.get("tie_breaks", ()):
        if key not in scoring.TIE_BREAKS:
            raise TournamentError(
                "bad_message",
                f"tie_breaks: unknown key {shown(key)}; known: {', '.join(scoring.TIE_BREAKS)}",
            )
    for method in given.get("seating", ()):
        if method not in seating.METHODS:
            raise TournamentError(
                "bad_message",
                f"seating: unknown method {shown(method)}; known: {', '.join(seating.METHODS)}",
            )
    settings = replace(base, **given)
    methods = settings.seating
    if "seating" in given and len(methods) == 1:
        # One method: for every session (the first "random" if it is "avoid": no history).
        methods = methods * settings.sessions
    # As many methods as sessions: the last one repeated, or the list cut.
    methods = (methods + (methods[-1],) * settings.sessions)[: settings.sessions]
    return replace(settings, seating=methods), request.get("name"), rules


def _derive(seed: int, number: int, purpose: bytes) -> int:
    """A 63-bit seed for session ``number`` derived one-way from the tournament's seed."""
    digest = hashlib.sha256(purpose + seed.to_bytes(8, "big") + number.to_bytes(2, "big"))
    return int.from_bytes(digest.digest()[:8], "big") >> 1


def session_seed(seed: int, number: int) -> int:
    """The seed session ``number``'s seating is computed from."""
    return _derive(seed, number, b"seating")


def wall_seed(seed: int, number: int) -> int:
    """Duplicate: the match seed every table of session ``number`` plays (the same walls)."""
    return _derive(seed, number, b"walls")


def default_methods(sessions: int) -> tuple[str, ...]:
    """Random for the first session, then repeat opponents avoided with winds balanced."""
    return ("random",) + ("avoid",) * (sessions - 1)

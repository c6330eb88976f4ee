"""What players do (``Action``) and what the table tells them (``Event``).

Actions are small frozen values; the table lists the legal ones for each seat
and accepts only those. Events carry their audience: ``to`` is the one seat
that may see a private event (its own draw, its own concealed kong), ``None``
means the whole table and spectators.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from engine.copyable import copyable
from engine.errors import IllegalAction
from engine.tiles import FLOWERS_BY_NAME, N_KINDS, Tile, name


class ActionKind(Enum):
    DISCARD = "discard"  # 打牌
    CHOW = "chow"  # 吃 (``tile`` is the lowest tile of the chow)
    PUNG = "pung"  # 碰
    KONG = "kong"  # 明杠 on a discard
    ADD_KONG = "add_kong"  # 加杠: a fourth tile to one's exposed pung
    CONCEALED_KONG = "concealed_kong"  # 暗杠
    WIN = "win"  # 和: self-drawn, on a discard, or robbing a kong
    PASS = "pass"  # 过: decline every claim


_NEEDS_TILE = frozenset(
    {ActionKind.DISCARD, ActionKind.CHOW, ActionKind.ADD_KONG, ActionKind.CONCEALED_KONG}
)


@dataclass(frozen=True, slots=True)
class Action:
    kind: ActionKind
    tile: Tile | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.kind.value}
        if self.tile is not None:
            out["tile"] = name(self.tile)
        return out

    @classmethod
    def from_dict(cls, data: object) -> Action:
        """Decode ``{"type": "discard", "tile": "5m"}``.

        Raises ``IllegalAction`` (code ``bad_action``) saying what is wrong.

        A server decodes every action a player sends: what decoded once is remembered (by
        its fields, in their order; ``_DECODED``), and a listed action comes back as the
        very object the table lists (``DISCARDS``, ``PASS``...), found among the legal
        actions by identity.
        """
        key = tuple(data.items()) if isinstance(data, dict) else None
        try:
            known = _DECODED.get(key) if key is not None else None
        except TypeError:  # a value that is not hashable: decoded anew, and not kept
            key = known = None
        if known is not None:
            return known
        action = cls._decode(data)
        if key is not None and len(_DECODED) < _DECODED_MAX:
            _DECODED[key] = action = _CANONICAL.get(action, action)
        return action

    @classmethod
    def _decode(cls, data: object) -> Action:
        from engine.notation import parse_tiles  # noqa: PLC0415 (avoid an import cycle)

        if not isinstance(data, dict):
            raise IllegalAction("bad_action", f"an action must be an object, got {data!r}")
        try:
            kind = ActionKind(data.get("type"))
        except ValueError:
            kinds = ", ".join(k.value for k in ActionKind)
            raise IllegalAction(
                "bad_action", f"unknown action type {data.get('type')!r}; expected one of {kinds}"
            ) from None
        tile: Tile | None = None
        if kind in _NEEDS_TILE:
            text = data.get("tile")
            if not isinstance(text, str):
                raise IllegalAction("bad_action", f'action {kind.value!r} needs a tile, e.g. "5m"')
            if kind is ActionKind.DISCARD and text in FLOWERS_BY_NAME:
                # A flower held as a wild tile (custom rules); the table decides if it may go.
                tile = FLOWERS_BY_NAME[text]
            else:
                try:
                    tiles = parse_tiles(text)
                except ValueError as exc:
                    raise IllegalAction("bad_action", f"bad tile {text!r}: {exc}") from None
                if len(tiles) != 1 or not 0 <= tiles[0] < N_KINDS:
                    raise IllegalAction("bad_action", f"{text!r} is not one tile")
                tile = tiles[0]
        extra = set(data) - {"type", "tile"}
        if extra:
            raise IllegalAction("bad_action", f"unknown action field(s): {sorted(extra)}")
        return cls(kind, tile)

    def __str__(self) -> str:
        return self.kind.value if self.tile is None else f"{self.kind.value} {name(self.tile)}"


PASS = Action(ActionKind.PASS)
WIN = Action(ActionKind.WIN)
PUNG = Action(ActionKind.PUNG)
KONG = Action(ActionKind.KONG)
# The discard of each kind (0..33), one object each: the table lists these, so an answer
# taken from them is found among the legal actions by identity.
DISCARDS = tuple(Action(ActionKind.DISCARD, t) for t in range(N_KINDS))
_CANONICAL = {a: a for a in (PASS, WIN, PUNG, KONG, *DISCARDS)}
# ``Action.from_dict``'s memory: an action's fields (in their order) -> the action. Only what
# decoded is kept, so only strings as values; bounded against a client inventing spellings.
_DECODED: dict[tuple[tuple[Any, Any], ...], Action] = {}
_DECODED_MAX = 4096
# ``legal_json``'s memory: each action's JSON form, made once (there are a few hundred).
_JSON: dict[Action, dict[str, Any]] = {}


def legal_json(actions: Iterable[Action]) -> list[dict[str, Any]]:
    """``[a.to_dict() for a in actions]``, each action's form made once and shared by every
    update that lists it (the legal actions of a seat's every update: a server's hot path).
    The forms are for encoding only: never change one."""
    forms = _JSON
    out = []
    for action in actions:
        form = forms.get(action)
        if form is None:
            form = forms[action] = action.to_dict()
        out.append(form)
    return out


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened at the table.

    ``to`` is the only seat that may see this event (``None``: everyone,
    spectators included). A fact that others may partly know is sent as two
    events: the full one to its seat, a redacted one (``to=None``,
    ``hide=seat``) to the others.
    """

    kind: str
    data: dict[str, Any] = field(default_factory=dict)
    to: int | None = None
    hide: int | None = None  # a public event the seat ``hide`` does not get (it has the full one)

    def visible_to(self, seat: int | None) -> bool:
        """Whether ``seat`` (``None``: a spectator) may see this event."""
        if self.to is not None:
            return seat == self.to
        return seat is None or seat != self.hide


copyable(Action, Event)

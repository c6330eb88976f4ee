"""A review of one player's decisions in a finished match (复盘): for each decision, the action
the strong bot prefers, the value of the action taken and of that one on the judge's one scale
(``engine.bots.judge``: ``SCALE`` says what a value means), and what the difference cost; the
match's biggest misses first.

The match is rebuilt from its seed, rules, length and action log as ``Match.replay`` rebuilds
it; before each of the player's logged actions the player's own view (what it could see then,
nothing more) goes to ``judge``. A decision with a single legal action (a forced discard, a
claim window with only a pass) is no decision and is not reviewed, nor is a move the server
played for the player (``stand_in``: the log's lines it played while the player was away or
out of time; the server's action log says which): it is not the player's choice, and the
review counts such moves apart (``Review.stand_in``).

- ``phase``: ``discard`` (the player's turn: which tile to let go, or a self-drawn win),
  ``kong`` (a turn on which a concealed or added kong may be declared), ``claim`` (an answer
  to a discard: win, kong, pung, chow or pass), ``rob`` (an answer to an added kong);
- ``index``: where the action stands among its hand's logged actions, everyone's, from 0
  (the replay viewer finds the step that shows it from the frames' ``actions``);
- ``loss``: the preferred action's value less the taken one's, never negative for an honest
  judge (the first it lists is the best); a *miss* is a decision with a loss above zero, and
  ``agrees`` is false whenever the action taken is not the preferred one (a tie of values
  disagrees without a miss).

Pure: the caller reads the match from a log file or a database.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any, Final

from engine.actions import Action, ActionKind
from engine.bots.judge import SCALE, Judged, judge
from engine.errors import IllegalAction, MahjongError
from engine.match import MATCH_HANDS, ActionRow, Match, ReplayError
from engine.rules import RuleSet
from engine.view import Phase, View

__all__ = ["PHASES", "Decision", "Review", "phase_of", "review_match"]

PHASES: Final = ("discard", "kong", "claim", "rob")
_KONGS: Final = frozenset({ActionKind.CONCEALED_KONG, ActionKind.ADD_KONG})
Judge = Callable[[View], list[Judged]]


@dataclass(frozen=True, slots=True)
class Decision:
    """One reviewed decision of the player."""

    hand_no: int  # 1, 2, ...
    index: int  # the action's place among its hand's logged actions (everyone's), from 0
    phase: str  # one of ``PHASES``
    taken: Action
    preferred: Action  # the strong bot's choice
    taken_value: float
    preferred_value: float
    choices: int  # how many legal actions there were

    @property
    def loss(self) -> float:
        """What the action taken cost on the judge's scale (0 when it was as good)."""
        return self.preferred_value - self.taken_value

    @property
    def agrees(self) -> bool:
        """Whether the player took the action the strong bot prefers."""
        return self.taken == self.preferred

    def to_dict(self) -> dict[str, Any]:
        return {
            "hand_no": self.hand_no,
            "index": self.index,
            "phase": self.phase,
            "taken": self.taken.to_dict(),
            "preferred": self.preferred.to_dict(),
            "taken_value": self.taken_value,
            "preferred_value": self.preferred_value,
            "loss": self.loss,
            "agrees": self.agrees,
            "choices": self.choices,
        }


@dataclass(frozen=True, slots=True)
class Review:
    """One player's reviewed decisions in one match, in the order they were taken."""

    match: int
    player: int  # 0..3, the match's player index
    hands: int  # the hands the log has
    decisions: tuple[Decision, ...]
    scale: str = SCALE
    stand_in: int = 0  # the player's moves the server played for it (away, out of time)

    def misses(self, top: int | None = None) -> list[Decision]:
        """The decisions that cost something, the biggest loss first (then in match order);
        the first ``top`` of them (all: ``None``)."""
        found = sorted(
            (d for d in self.decisions if d.loss > 0),
            key=lambda d: (-d.loss, d.hand_no, d.index),
        )
        return found if top is None else found[:top]

    @property
    def total_loss(self) -> float:
        return sum(d.loss for d in self.decisions)

    @property
    def agreed(self) -> int:
        """How many decisions took the strong bot's choice."""
        return sum(d.agrees for d in self.decisions)

    def to_dict(self, top: int | None = None) -> dict[str, Any]:
        """The JSON form: the decisions in order, and the ``top`` biggest misses (all:
        ``None``) as indexes into them."""
        where = {id(d): i for i, d in enumerate(self.decisions)}
        return {
            "match": self.match,
            "player": self.player,
            "hands": self.hands,
            "scale": self.scale,
            "decisions": [d.to_dict() for d in self.decisions],
            "agreed": self.agreed,
            "total_loss": self.total_loss,
            "misses": [where[id(d)] for d in self.misses(top)],
            "stand_in": self.stand_in,
        }


def phase_of(view: View) -> str:
    """The kind of decision ``view`` asks of its player (one of ``PHASES``)."""
    if view.phase is Phase.CLAIM:
        return "claim"
    if view.phase is Phase.ROB:
        return "rob"
    return "kong" if any(a.kind in _KONGS for a in view.legal) else "discard"


def review_match(
    seed: int,
    rules: RuleSet,
    rows: Iterable[ActionRow],
    player: int,
    *,
    match_id: int = 0,
    hands: int = MATCH_HANDS,
    judged: Judge = judge,
    stand_in: Collection[int] = frozenset(),
) -> Review:
    """Review ``player``'s decisions in the match of ``seed``, ``rules`` and length ``hands``
    whose logged actions are ``rows`` (as ``Match.replay`` takes them, in order).
    ``stand_in``: the lines (the rows' first field) of the moves the server played for a
    person; the player's among them are not reviewed, only counted (``Review.stand_in``).

    ``judged`` values a view's legal actions (``engine.bots.judge.judge``). Raises
    ``ReplayError`` naming the row of an action that does not replay, and ``ValueError``
    for a player that is not 0..3.
    """
    if player not in range(4):
        raise ValueError(f"a match's players are 0..3, not {player!r}")
    match = Match(seed, rules, match_id, hands=hands)
    decisions: list[Decision] = []
    index = stood_in = 0
    for line, hand_no, who, data in rows:
        if hand_no != match.hand_index + 1:
            _deal(match, line, hand_no)
            index = 0
        hand = match.hand
        assert hand is not None
        try:
            action = Action.from_dict(data)
            if who == player and line in stand_in:
                stood_in += 1  # the server's move, not the player's choice
            elif who == player:
                view = hand.view(player)
                if len(view.legal) > 1:
                    decisions.append(_decision(view, action, hand_no, index, judged))
            match.apply(who, action)
        except MahjongError as exc:
            raise ReplayError(
                line, f"hand {hand_no}, player {who!r}, action {dict(data)!r}: {exc}"
            ) from exc
        index += 1
    return Review(match_id, player, match.hand_index + 1, tuple(decisions), stand_in=stood_in)


def _deal(match: Match, line: int, hand_no: int) -> None:
    """Deal up to hand ``hand_no``, each hand before it over (a log's hands go in order)."""
    if hand_no <= match.hand_index + 1:
        raise ReplayError(
            line, f"hand {hand_no!r} after hand {match.hand_index + 1}: the hands go in order"
        )
    while match.hand_index + 1 < hand_no:
        try:
            match.start_hand()
        except IllegalAction as exc:
            raise ReplayError(line, f"cannot deal hand {match.hand_index + 2}: {exc}") from exc


def _decision(view: View, taken: Action, hand_no: int, index: int, judged: Judge) -> Decision:
    values = judged(view)
    best = values[0]
    for choice in values:
        if choice.action == taken:
            return Decision(
                hand_no,
                index,
                phase_of(view),
                taken,
                best.action,
                choice.value,
                best.value,
                len(view.legal),
            )
    raise IllegalAction("illegal_action", f"{taken} is not among the legal actions judged")

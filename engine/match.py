"""A match (一局): 4 rounds, the deal going round the four positions in each, seats rotating.

Players are 0..3 (A B C D). In round 1 they sit East, South, West, North in that
order; between rounds they move as the rule book says (东南走之字，西北转圈圈):
before round 2 East and South swap and West and North swap; before round 3 the
players at East and South go to the opposite positions (West and North), the
one at West goes to South and the one at North to East; before round 4 East and
South swap and West and North swap again. Everyone sits at every position once.
In each round the player at East deals the first hand, then the deal passes
counter-clockwise (no dealer repeat in MCR), so 16 hands in all.

A shorter match (a table option, not a rule: ``Match(..., hands=4)`` is the East round
only, 东风战) stops after its first ``hands`` deals, 1..16: the match ends after the hand in
which the deal passes for the ``hands``-th time, the seats rotating as above for the
rounds it reaches. Without dealer repeat every hand passes the deal, so that is ``hands``
hands. A match can also be stopped between two hands (``Match.stop``: a tournament
session's time cap), after at least one.

With dealer repeat (连庄, ``rules.dealer_repeat``) the dealer keeps the deal while
winning, at most ``rules.repeat_cap`` repeats in a row (then the deal passes all the
same); a drawn hand or another player's win passes it. A round ends when the deal has
gone round the four positions, so the number of hands is not known in advance.

A match is its seed plus its action log: ``Match(seed)`` and the same actions
always give the same hands, which is what replays and the server's crash
recovery rely on. ``Match.replay`` rebuilds one from its seed, rules and logged
actions; the log's lines are written and read in ``engine.matchlog``.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, NamedTuple

from engine import wire
from engine.actions import Action, Event
from engine.compiling import mypyc_attr
from engine.errors import IllegalAction, MahjongError
from engine.notation import format_hand
from engine.rules import MCR, RuleSet
from engine.table import HandResult, HandState
from engine.tiles import Tile, Wind, name
from engine.view import Phase, is_plain_mcr
from engine.wall import Wall

# The events that close a hand (``Match.last_hand_end``).
CLOSING_KINDS = frozenset(
    {wire.HeadBump.KIND, wire.Win.KIND, wire.Exhausted.KIND, wire.HandEnd.KIND}
)

# The player at each position (E, S, W, N) in each round.
SEATING: tuple[tuple[int, int, int, int], ...] = (
    (0, 1, 2, 3),
    (1, 0, 3, 2),
    (2, 3, 1, 0),
    (3, 2, 0, 1),
)
HANDS_PER_ROUND = 4  # without dealer repeat
ROUNDS = 4
MATCH_HANDS = ROUNDS * HANDS_PER_ROUND  # a whole match's deals, the most a match may have

# A logged action: (line, hand_no, player, action as JSON). ``line`` says where it stands in
# the log (a file's line number, the store's seq); hand_no counts from 1.
ActionRow = tuple[int, int, int, Mapping[str, Any]]
# A logged hand result: (line, hand_no, ``HandRecord.to_dict()`` as logged).
ResultRow = tuple[int, int, Mapping[str, Any]]


class ReplayError(MahjongError):
    """A logged match that does not replay: ``line`` is the log line (or seq) at fault."""

    def __init__(self, line: int, why: str, cause: BaseException | None = None) -> None:
        super().__init__(f"line {line}: {why}")
        self.line = line
        self.why = why
        # ``cause``: the error the line's action or deal raised, as ``raise ... from cause``
        # would set it (compiled by mypyc, that statement drops it; setting it here does not).
        if cause is not None:
            self.__cause__ = cause


class LogLine(NamedTuple):
    """A line of ``Match.log``. A named tuple, not a plain one, so that a compiled match
    keeps the very object ``_logged`` made (mypyc unpacks a plain tuple of a fixed length
    into a C struct and makes a new tuple from it wherever it is stored)."""

    hand_index: int  # 0-based
    player: int
    action: Action


@dataclass(frozen=True, slots=True)
class HandRecord:
    """One finished hand, as ``guobiao simulate --out`` writes it and the server stores it."""

    match: int
    hand_no: int  # 1..16 (more with dealer repeat)
    round_wind: str
    dealer: int
    seat_winds: tuple[str, str, str, str]  # by player index
    dice: tuple[tuple[int, int], tuple[int, int]]
    result: HandResult
    scores: tuple[int, int, int, int]  # running totals after this hand
    repeat: int = 0  # 连庄: 0 for a dealer's first hand, then 1, 2, ...
    dealer_position: int = 0  # the dealer's position 0..3 (E S W N) in the round
    indicator: Tile | None = None  # the tile turned up after the deal (wild-tile options)
    wild_tiles: tuple[Tile, ...] = ()
    extended: bool = False  # rules other than plain MCR: the fields above are written too

    def to_dict(self) -> dict[str, Any]:
        r = self.result
        ctx = r.context
        out = {
            "match": self.match,
            "hand_no": self.hand_no,
            "round_wind": self.round_wind,
            "dealer": self.dealer,
            "seat_winds": list(self.seat_winds),
            "dice": [list(self.dice[0]), list(self.dice[1])],
            "result": r.result,
            "winner": r.winner,
            "discarder": r.discarder,
            "hand": format_hand(r.hand) if r.hand is not None else None,
            "self_drawn": ctx.self_drawn if ctx else False,
            "last_of_kind": ctx.last_of_kind if ctx else False,
            "kong": ctx.kong if ctx else False,
            "wall_last": ctx.wall_last if ctx else False,
            "flowers": ctx.flowers if ctx else 0,
            "fans": r.score.to_dict()["fans"] if r.score else [],
            "fan_total": r.score.total if r.score else 0,
            "deltas": list(r.deltas),
            "scores": list(self.scores),
        }
        if self.extended:
            out["repeat"] = self.repeat
            out["dealer_position"] = self.dealer_position
            out["indicator"] = name(self.indicator) if self.indicator is not None else None
            out["wild_tiles"] = [name(t) for t in self.wild_tiles]
            out["seat_flowers"] = ctx.seat_flowers if ctx else 0
        return out


def hand_seed(seed: int, hand_no: int) -> int:
    """The wall seed of hand ``hand_no`` (1, 2, ...), derived one-way from the match seed.

    A hand's seed is revealed when the hand ends (the server's fairness
    commitment), so it must not tell anything about the next hands: each is
    the first 8 bytes of SHA-256 over the match seed and the hand number.
    """
    key = seed.to_bytes(16, "big", signed=True)
    return int.from_bytes(hashlib.sha256(key + hand_no.to_bytes(2, "big")).digest()[:8], "big")


def hand_seeds(seed: int, hands: int) -> list[int]:
    """The wall seeds of hands 1..``hands`` (``hand_seed`` of each)."""
    return [hand_seed(seed, n) for n in range(1, hands + 1)]


def check_match_hands(hands: object) -> int:
    """``hands`` if it is a match length 1..``MATCH_HANDS``; else ``ValueError`` saying so."""
    if isinstance(hands, bool) or not isinstance(hands, int) or not 1 <= hands <= MATCH_HANDS:
        raise ValueError(f"a match's hands must be a whole number 1..{MATCH_HANDS}, got {hands!r}")
    return hands


@mypyc_attr(allow_interpreted_subclasses=True)  # tests derive from it (engine.compiling)
class Match:
    """A match between players 0..3: its hands, with scores and records. ``hands`` is its
    length in deals (see the module docstring)."""

    def __init__(
        self,
        seed: int,
        rules: RuleSet = MCR,
        match_id: int = 0,
        *,
        hands: object = MATCH_HANDS,  # checked: ValueError unless a whole number 1..16
        hold_claims: bool = False,
    ) -> None:
        self.seed = seed
        self.rules = rules
        self.match_id = match_id
        self.hands = check_match_hands(hands)
        self.extended = not is_plain_mcr(rules)
        # ``hands`` without dealer repeat; unknown (None) until the match ends with it.
        self.hands_total: int | None = None if rules.dealer_repeat else self.hands
        self.hand_index = -1  # 0-based; -1 before the first hand
        self.hand: HandState | None = None
        # The events that closed the hand before ``hand`` (its head bump, win or exhausted
        # wall, and every hand shown): what a client that missed them is given again.
        self.last_hand_end: list[Event] = []
        # The event that opened ``hand`` (``wire.MatchStart``: its number, the scores before
        # it): the first of the hand's events a client is given whole.
        self.hand_start: Event | None = None
        self.scores = [0, 0, 0, 0]
        self.records: list[HandRecord] = []
        self.log: list[LogLine] = []
        # Where the deal stands: round 0..3, the dealer's position 0..3 in it, its repeats.
        # Before the first hand these describe the first hand (what ``start_hand`` deals).
        self.round_index = 0
        self.dealer_position = 0
        self.repeat = 0
        self.stopped = False  # ``stop``: ended between hands, short of ``hands``
        self._hold_claims = hold_claims

    @property
    def hold_claims(self) -> bool:
        """Whether claim windows are held open until ``close_claims`` (``HandState``'s
        option), for the hand in play and the next ones."""
        return self._hold_claims

    @hold_claims.setter
    def hold_claims(self, hold: bool) -> None:
        self._hold_claims = hold
        if self.hand is not None:
            self.hand.hold_claims = hold

    @classmethod
    def replay(
        cls,
        seed: int,
        rules: RuleSet,
        rows: Iterable[ActionRow],
        match_id: int = 0,
        *,
        results: Iterable[ResultRow] = (),
        hands: int = MATCH_HANDS,
    ) -> Match:
        """Rebuild a match of ``hands`` deals from its seed, its rules and its logged actions.

        Each row is played in turn, the hands dealt as the rows reach them; the match is
        left exactly where the log ends (a hand over at the end of the log is not followed
        by a new deal). ``results``, when given, are checked where their lines fall among the
        rows' lines: the hand must be over and its record the same. Raises ``ReplayError``
        naming the line and why (an action not legal there, a hand out of order, a result
        that differs).
        """
        match = cls(seed, rules, match_id, hands=hands)
        actions = ((row[0], row, None) for row in rows)
        checks = ((row[0], None, row) for row in results)
        for _line, action, result in heapq.merge(actions, checks, key=lambda step: step[0]):
            if action is not None:
                match._replay_action(*action)
            else:
                assert result is not None
                match._check_result(*result)
        return match

    def _deal_up_to(self, line: int, hand_no: int) -> None:
        """Deal the hands before ``hand_no`` and it (a replay reaching a row of it)."""
        if hand_no < self.hand_index + 1 or hand_no < 1:
            raise ReplayError(
                line,
                f"hand {hand_no!r} after hand {self.hand_index + 1}: the log's hands go in "
                "order from 1",
            )
        while self.hand_index + 1 < hand_no:
            if self.hand is not None and self.hand.phase is not Phase.OVER:
                raise ReplayError(
                    line,
                    f"hand {self.hand_index + 1} is not over, but the log goes on to hand "
                    f"{hand_no}",
                )
            try:
                self.start_hand()
            except IllegalAction as exc:
                why = f"cannot deal hand {self.hand_index + 2}: {exc}"
                raise ReplayError(line, why, exc) from exc

    def _replay_action(
        self, line: int, hand_no: int, player: int, action: Mapping[str, Any]
    ) -> None:
        self._deal_up_to(line, hand_no)
        try:
            self.apply(player, Action.from_dict(action))
        except MahjongError as exc:
            why = f"hand {hand_no}, player {player!r}, action {dict(action)!r}: {exc}"
            raise ReplayError(line, why, exc) from exc

    def _check_result(self, line: int, hand_no: int, logged: Mapping[str, Any]) -> None:
        self._deal_up_to(line, hand_no)
        if len(self.records) < hand_no:
            raise ReplayError(line, f"hand {hand_no} is not over in the replay")
        got = self.records[hand_no - 1].to_dict()
        if got != logged:
            diffs = {k: (logged.get(k), v) for k, v in got.items() if logged.get(k) != v}
            raise ReplayError(
                line, f"hand {hand_no} replays differently (logged, replayed): {diffs}"
            )

    @property
    def seeds(self) -> list[int]:
        """The wall seeds of the hands: all of them without dealer repeat, else those dealt
        so far."""
        count = self.hands_total if self.hands_total is not None else self.hand_index + 1
        return hand_seeds(self.seed, count)

    def hand_seed(self, hand_no: int) -> int:
        """The wall seed of hand ``hand_no`` (1, 2, ...)."""
        return hand_seed(self.seed, hand_no)

    def _following(self) -> tuple[int, int, int]:
        """Round, dealer position and repeat of the hand after the finished current one."""
        record = self.records[-1]
        winner = record.result.winner
        if (
            self.rules.dealer_repeat
            and winner is not None
            and winner == record.dealer
            and self.repeat < self.rules.repeat_cap
        ):
            return self.round_index, self.dealer_position, self.repeat + 1
        if self.dealer_position == HANDS_PER_ROUND - 1:
            return self.round_index + 1, 0, 0
        return self.round_index, self.dealer_position + 1, 0

    @property
    def over(self) -> bool:
        """Whether the hand just finished was the last: the deal has passed ``hands`` times
        (counted by where the next deal would stand: round by round, position by position),
        or the match was ``stop``ped after it."""
        if len(self.records) <= self.hand_index or not self.records:
            return False
        if self.stopped:
            return True
        round_index, dealer_position, _ = self._following()
        return round_index * HANDS_PER_ROUND + dealer_position >= self.hands

    def stop(self) -> None:
        """End the match after the hand just finished, short of its length (a session's time
        cap: ``server.table``): ``over`` is true from now on, ``hands_total`` the hands
        played. Not an action and not logged: a stopped match's log is the log of the hands
        it played, and its replay is left where that log ends (its last hand over), with the
        same scores; whoever replays it knows it stopped from elsewhere (the server, from its
        table's ``ends_at``: ``server.cli.db``). ``IllegalAction`` (``hand_in_play``) while a
        hand is being played or before the first one: a match has at least one hand, and the
        hand in play is always played to its end."""
        if self.hand is None or self.hand.phase is not Phase.OVER:
            raise IllegalAction("hand_in_play", "a match stops only between hands")
        self.stopped = True
        self.hands_total = len(self.records)

    def start_hand(self) -> list[Event]:
        """Deal the next hand."""
        if self.over:
            raise IllegalAction("match_over", "the match is over")
        if self.hand is not None and self.hand.phase is not Phase.OVER:
            raise IllegalAction("hand_in_play", "the current hand is not over")
        if self.hand is not None:
            self.last_hand_end = [e for e in self.hand.events if e.kind in CLOSING_KINDS]
            self.round_index, self.dealer_position, self.repeat = self._following()
        self.hand_index += 1
        seating = SEATING[self.round_index]
        wall = self._wall(self.hand_index + 1)
        self.hand = HandState(
            wall,
            seating,
            self.dealer_position,
            Wind(self.round_index),
            self.rules,
            hold_claims=self._hold_claims,
        )
        start = wire.MatchStart(
            self.hand_index + 1, tuple(self.scores), self.repeat if self.extended else None
        )
        self.hand_start = wire.event(start)
        events = [self.hand_start]
        events.extend(self.hand.start())
        self._record_if_over()
        return events

    def _wall(self, hand_no: int) -> Wall:
        """The wall of hand ``hand_no`` from its seed (tests override this to stack walls)."""
        return Wall.from_seed(self.hand_seed(hand_no), self.dealer_position)

    def legal_actions(self, player: int) -> list[Action]:
        return self.hand.legal_actions(player) if self.hand is not None else []

    def awaiting(self) -> list[int]:
        return self.hand.awaiting() if self.hand is not None else []

    def apply(self, player: int, action: Action) -> list[Event]:
        """Play ``action`` for ``player`` in the current hand; refused actions change nothing."""
        if self.hand is None:
            raise IllegalAction("no_hand", "no hand has been dealt yet")
        events = self.hand.apply(player, action)
        self.log.append(_logged(self.hand_index, player, action))
        self._record_if_over()
        return events

    def close_claims(self) -> list[Event]:
        """End the held claim window of the current hand (``HandState.close_claims``); not
        logged: the log replays the same without holding."""
        if self.hand is None:
            raise IllegalAction("no_hand", "no hand has been dealt yet")
        events = self.hand.close_claims()
        self._record_if_over()
        return events

    def _record_if_over(self) -> None:
        hand = self.hand
        if hand is None or hand.result is None or len(self.records) > self.hand_index:
            return
        for p, delta in enumerate(hand.result.deltas):
            self.scores[p] += delta
        self.records.append(
            HandRecord(
                match=self.match_id,
                hand_no=self.hand_index + 1,
                round_wind=hand.round_wind.letter,
                dealer=hand.dealer,
                seat_winds=(
                    hand.seat_wind(0).letter,
                    hand.seat_wind(1).letter,
                    hand.seat_wind(2).letter,
                    hand.seat_wind(3).letter,
                ),
                dice=(hand.wall.dice.first, hand.wall.dice.second),
                result=hand.result,
                scores=(self.scores[0], self.scores[1], self.scores[2], self.scores[3]),
                repeat=self.repeat,
                dealer_position=self.dealer_position,
                indicator=hand.indicator,
                wild_tiles=tuple(sorted(hand.wilds)),
                extended=self.extended,
            )
        )
        if self.hands_total is None and self.over:
            self.hands_total = len(self.records)

    def view(self, player: int | None) -> dict[str, Any]:
        """The current hand as ``player`` may see it, with the match's scores, as JSON."""
        out: dict[str, Any] = {
            "hand_no": self.hand_index + 1,
            "hands_total": self.hands_total,
            "scores": list(self.scores),
        }
        if self.extended:
            out["repeat"] = self.repeat
            out["dealer_position"] = self.dealer_position
        if self.hand is not None:
            out.update(self.hand.view(player).to_dict())
        return out

    def log_entries(self) -> list[dict[str, Any]]:
        """The action log as JSON-ready dicts."""
        return [{"hand": h + 1, "player": p, "action": a.to_dict()} for h, p, a in self.log]


@cache
def _logged(hand_index: int, player: int, action: Action) -> LogLine:
    """A line of ``Match.log``, made once and shared by every match of the process: a match
    keeps its whole log (16 hands of about a hundred actions), and a tuple an action was
    most of what a long match held beyond its hand (docs/performance.md, "Memory")."""
    return LogLine(hand_index, player, action)

"""One hand (盘) at the table as a pure state machine.

Everything that affects the flow of a hand lives in this file: the legal actions of
each ``Phase`` and the transitions (the enum itself is declared with the views that carry
it, in ``engine.view``, so that the wire module names it without importing the table). The
table is driven by ``apply(player, action) -> events``; ``legal_actions(player)`` and
``view(player)`` only read. An action that is not legal raises
``IllegalAction`` and leaves the state untouched (validate fully, then mutate).

Players are 0..3 (the match's player indices); they sit at positions 0..3
(East, South, West, North), play goes 0 -> 1 -> 2 -> 3 (counter-clockwise).
The dealer is East for the hand (门风), the next position South, and so on.

Flow (``docs/rules.md``, "Table procedure"):

- deal 4-4-4 then 1 each from the head of the wall, the dealer a 14th tile;
  flowers replaced from the tail, the dealer first, repeatedly;
- ``TURN``: the player to move has drawn (the dealer: the 14th tile): discard,
  declare a self-drawn win, a concealed kong or an added kong;
- ``CLAIMED``: after a chow or pung the player must discard (no kong);
- ``CLAIM``: after a discard every player with a legal claim answers (win,
  kong, pung, chow from the previous player only, or pass); when all have
  answered: win > pung/kong > chow, several wins by head bump (截和: the first
  in turn order after the discarder). The last discard of the wall can only
  be won;
- ``ROB``: after an added kong, players who can win on its tile answer (抢杠);
- with ``hold_claims`` every discard and every added kong opens ``CLAIM`` (``ROB``), even
  when nobody may answer, and its resolution waits for ``close_claims`` (the server's claim
  window: whether anyone may claim stays hidden);
- ``OVER``: a win, or the wall ran out (drawn hand, no payments).

Wild tiles (财神, the ``custom`` rule set, ``RuleSet.wilds``):

- with an indicator (翻混, 上滚混, 下滚混), once the tiles are dealt and before any flower
  is replaced, the next tile of the head is turned up and set aside face up: the
  indicator. A flower turned up is set aside too, dead (nobody's: it scores for no one),
  and the next tile is turned up, until a tile that is not a flower. The indicator
  counts as a visible copy for Last Tile (和绝张);
- with flowers wild, flowers are never replaced: they stay in the hand as wild tiles
  (hand tiles like any other) and score nothing;
- a wild tile is never discarded, never used to claim a chow (a pung or kong claims
  only the discarded kind, which is never wild) and never konged; refusals say
  ``wild_tile``. The one exception: a player whose concealed tiles are all wild and who
  cannot win must discard one of them, and nobody may claim or win on that discard;
- a win hands the calculator the wild tiles as ``WILD``; the minimum is ``rules.min_fan``.

天和 / 地和 / 人和 (rules with the extra fans): 天和 is the dealer's self-drawn win on its
initial tiles (flower replacements of the deal included, no kong declared); 地和 a win on
the dealer's first discard; 人和 a non-dealer's win before its own first discard while
nobody has claimed anything (on the dealer's first discard it is 地和, not both).
Payments: ``engine.payments`` (``rules.base_points`` plus the fan, as in MCR; with
``rules.dealer_doubles`` every payment made by or to the dealer is doubled).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cache
from itertools import compress
from typing import Any

from engine import wire
from engine.actions import (
    DISCARDS,
    KONG,
    PASS,
    PUNG,
    WIN,
    Action,
    ActionKind,
    Event,
    legal_json,
)
from engine.compiling import mypyc_attr
from engine.copyable import copyable
from engine.errors import IllegalAction, NotWinning
from engine.forms import is_winning, waits_of_packed
from engine.hand import Hand, Meld, MeldKind
from engine.notation import format_hand
from engine.payments import win_deltas
from engine.rules import MCR, RuleSet, Wilds
from engine.scoring import Score, WinContext, score
from engine.tiles import N_KINDS, WILD, Tile, Wind, is_flower, name, seat_flowers, tiles_of
from engine.view import ClaimView, Phase, SeatView, View, format_concealed, is_plain_mcr
from engine.wall import Wall
from engine.wilds import is_winning_with_wilds, wild_tiles

__all__ = [  # with the view types, defined in ``engine.view`` and long imported from here
    "ClaimView",
    "HandResult",
    "HandState",
    "Phase",
    "SeatView",
    "View",
    "Win",
    "is_plain_mcr",
    "sorted_tiles",
]

_DISCARDS = DISCARDS

# The sorted tiles of each group's count pattern (the suits, the honors), for the concealed
# tiles of the views: a hand's groups recur from view to view where the whole hand does not.
_GROUP_MEMO_SIZE = 1 << 14
_group_tiles: tuple[dict[bytes, tuple[Tile, ...]], ...] = ({}, {}, {}, {})


def _group(counts: list[int], g: int, lo: int, hi: int) -> tuple[Tile, ...]:
    pattern = bytes(counts[lo:hi])
    memo = _group_tiles[g]
    found = memo.get(pattern)
    if found is None:
        if len(memo) >= _GROUP_MEMO_SIZE:
            memo.clear()
        found = memo[pattern] = tuple(tiles_of([0] * lo + counts[lo:hi]))
    return found


def sorted_tiles(counts: list[int]) -> tuple[Tile, ...]:
    """``tuple(tiles_of(counts))`` of a 34-slot count array, a group at a time."""
    return (
        _group(counts, 0, 0, 9)
        + _group(counts, 1, 9, 18)
        + _group(counts, 2, 18, 27)
        + _group(counts, 3, 27, N_KINDS)
    )


@dataclass(frozen=True, slots=True)
class HandResult:
    """How a hand ended and who paid whom (``deltas`` by player index)."""

    result: str  # "win" or "draw"
    winner: int | None
    discarder: int | None  # None when self-drawn or drawn
    win_tile: Tile | None
    hand: Hand | None  # the winner's hand
    context: WinContext | None
    score: Score | None
    deltas: tuple[int, int, int, int]


copyable(HandResult)  # a hand is deep-copied (the duel's audit), compiled or not


@dataclass(slots=True)
class _Pending:
    """Answers being collected in ``CLAIM`` or ``ROB``."""

    tile: Tile
    source: int  # the discarder, or the player adding to a kong
    options: dict[int, list[Action]]  # who may answer, with what
    answers: dict[int, Action] = field(default_factory=dict)
    wins: dict[int, Win] = field(default_factory=dict)


@dataclass(slots=True)
class Win:
    """A win a player may declare: the hand, its situation and (computed once) its score.

    Under a rule set with no minimum any complete hand wins, so whether a player may win
    needs only the shape test; the score (with many wild tiles the costly part) is then
    computed when the win is declared, not for every discard a hand could take.
    """

    hand: Hand
    ctx: WinContext
    rules: RuleSet
    known: Score | None = None

    @property
    def score(self) -> Score:
        if self.known is None:
            self.known = score(self.hand, self.ctx, self.rules)
        return self.known


@mypyc_attr(allow_interpreted_subclasses=True)  # so it deep-copies (engine.compiling)
class HandState:
    """One hand from the deal to the win or the drawn hand."""

    def __init__(
        self,
        wall: Wall,
        player_at: tuple[int, int, int, int],
        dealer_position: int,
        round_wind: Wind,
        rules: RuleSet = MCR,
        *,
        hold_claims: bool = False,
    ) -> None:
        self.rules = rules
        # Hold every claim window open (after every discard and added kong, even when nobody
        # may answer) until ``close_claims``: see ``close_claims``.
        self.hold_claims = hold_claims
        self.plain = is_plain_mcr(rules)
        self.wall = wall
        self.player_at = player_at  # player at each position E S W N
        self.position = {p: i for i, p in enumerate(player_at)}
        # Each player and the three after it, in turn order (asked at every action).
        self._order = {
            p: tuple(player_at[(i + k) % 4] for k in range(4)) for i, p in enumerate(player_at)
        }
        self.dealer = player_at[dealer_position]
        self.dealer_position = dealer_position
        self._winds = {p: Wind((i - dealer_position) % 4) for i, p in enumerate(player_at)}
        self.round_wind = round_wind
        self.concealed: dict[int, list[int]] = {p: [0] * N_KINDS for p in player_at}
        self.melds: dict[int, list[Meld]] = {p: [] for p in player_at}
        self.flowers: dict[int, list[Tile]] = {p: [] for p in player_at}
        # Wild tiles: the indicator turned up after the deal, flowers turned up before it
        # (dead), which tiles are wild, and the flowers kept in the hand when flowers are.
        self.indicator: Tile | None = None
        self.dead_flowers: list[Tile] = []
        self.flowers_wild = rules.wilds is Wilds.FLOWERS
        self.wilds: frozenset[Tile] = (
            frozenset() if rules.wilds.uses_indicator else wild_tiles(rules.wilds, None)
        )
        self.wild_kind: Tile | None = None  # the wild kind 0..33 (indicator options)
        self.held: dict[int, list[Tile]] = {p: [] for p in player_at}  # flowers, when wild
        self.river: dict[int, list[tuple[Tile, bool]]] = {
            p: [] for p in player_at
        }  # (tile, claimed)
        self.phase = Phase.TURN
        self.current = self.dealer
        self.drawn: Tile | None = None  # the tile the player to move drew this turn
        self.kong_draw = False  # that tile is a kong replacement (杠上开花 if it wins)
        self.pending: _Pending | None = None
        self.result: HandResult | None = None
        self.turns = 0  # discards made so far
        self.claims = 0  # chows, pungs and kongs made so far
        self._legal: dict[int, list[Action]] = {}
        self._win_cache: dict[int, Win | None] = {}
        # Each seat's waits with the hand they are of (``_waits``).
        self._wait_memo: dict[int, tuple[bytes, frozenset[Tile]]] = {}
        self.events: list[Event] = []
        self.version = 0  # bumped by every change of state (start, apply)
        self._public: tuple[int, tuple[SeatView, ...]] | None = None
        self._brief: tuple[int, dict[str, Any], dict[str, Any]] | None = None  # see ``brief``
        # The last view of each seat, public (False) and with its tiles (True), with what
        # it was made of (``_kept_seat``).
        self._seats: dict[tuple[int, bool], tuple[tuple[object, ...], SeatView]] = {}

    # ----------------------------------------------------------- queries ---

    def seat_wind(self, player: int) -> Wind:
        return self._winds[player]

    def next_player(self, player: int, steps: int = 1) -> int:
        return self._order[player][steps % 4]

    def legal_actions(self, player: int) -> list[Action]:
        """What ``player`` may do now (empty when it is not asked to act)."""
        return list(self._legal.get(player, ()))

    def awaiting(self) -> list[int]:
        """The players the table is waiting for, in turn order."""
        legal = self._legal
        return [p for p in self._order[self.current] if legal.get(p)]

    def _turn_order(self, first: int) -> tuple[int, ...]:
        return self._order[first]

    # ----------------------------------------------------------- the deal ---

    def start(self) -> list[Event]:
        """Deal and replace flowers; the dealer is then to move."""
        if self.events:
            raise IllegalAction("already_started", "the hand has already been dealt")
        self.version += 1
        start = wire.HandStart(
            dealer=self.dealer,
            round_wind=self.round_wind,
            seat_winds=tuple(self.seat_wind(p) for p in sorted(self.player_at)),  # by player
            dice=(self.wall.dice.first, self.wall.dice.second),
            rules=None if self.plain else self.rules,
        )
        out: list[Event] = [wire.event(start)]
        order = self._turn_order(self.dealer)
        dealt: dict[int, list[Tile]] = {p: [] for p in order}
        for _ in range(3):
            for p in order:
                dealt[p].extend(self.wall.draw() for _ in range(4))
        for p in order:
            dealt[p].append(self.wall.draw())
        dealt[self.dealer].append(self.wall.draw())
        for p in order:
            for tile in dealt[p]:
                if not is_flower(tile):
                    self.concealed[p][tile] += 1
                elif self.flowers_wild:
                    self.held[p].append(tile)
            out.append(wire.event(wire.Deal(p, tiles=tuple(sorted(dealt[p]))), to=p))
            out.append(wire.event(wire.Deal(p, count=len(dealt[p])), hide=p))
        if self.rules.wilds.uses_indicator:
            self._turn_up_indicator(out)
        # Flowers: set aside and replaced from the tail, the dealer first, each player's
        # last-dealt first (kept in the hand, unreplaced, when flowers are wild). The
        # dealer's last tile taken is its drawn tile: the winning tile of a win on the
        # dealt tiles (ruling T8).
        self.drawn = dealt[self.dealer][-1]
        for p in order:
            if self.flowers_wild:
                break
            for flower in reversed([t for t in dealt[p] if is_flower(t)]):
                kept = self._replace_flower(p, flower, out)
                if kept is None:  # the wall ran out: a drawn hand
                    self.events.extend(out)
                    return out
                self.concealed[p][kept] += 1
                if p == self.dealer:
                    self.drawn = kept
        self.phase = Phase.TURN
        self.current = self.dealer
        self._refresh()
        self.events.extend(out)
        return out

    def _turn_up_indicator(self, out: list[Event]) -> None:
        """Turn up the indicator from the head; flowers turned up are set aside, dead."""
        tile = self.wall.draw()
        while is_flower(tile):
            self.dead_flowers.append(tile)
            tile = self.wall.draw()
        self.indicator = tile
        self.wilds = wild_tiles(self.rules.wilds, tile)
        (self.wild_kind,) = self.wilds
        out.append(
            wire.event(wire.Indicator(tile, tuple(self.dead_flowers), tuple(sorted(self.wilds))))
        )

    # ------------------------------------------------------------ actions ---

    def apply(self, player: int, action: Action) -> list[Event]:
        """Carry out ``action`` for ``player``; refuse it, changing nothing, when not legal
        (``refusal``)."""
        refused = self.refusal(player, action)
        if refused is not None:
            raise refused
        out: list[Event] = []
        self.version += 1
        if self.phase in (Phase.TURN, Phase.CLAIMED):
            self._act_on_turn(player, action, out)
        else:
            assert self.pending is not None
            self.pending.answers[player] = action
            self._legal[player] = []
            if not self.hold_claims and self.claims_answered():
                self._resolve_pending(out)
        self.events.extend(out)
        return out

    def claims_answered(self) -> bool:
        """Whether answers to a discard or an added kong are being collected and all are in
        (with ``hold_claims``: the window waits for ``close_claims``)."""
        pending = self.pending
        return pending is not None and all(p in pending.answers for p in pending.options)

    def close_claims(self) -> list[Event]:
        """End a claim window held open by ``hold_claims`` once every answer is in.

        Without holding, the table enters ``CLAIM`` (or ``ROB``) only when someone may claim
        the discard (or rob the added kong), and resolves it as soon as the last of them has
        answered: so whether it pauses, and where its events stop, would tell everyone that
        somebody could use the tile. With holding, every discard and every added kong opens a
        window, ``legal`` only for those who may answer, and nothing follows until the owner
        of the table (the server, once the window's minimum time has passed) calls this: the
        resolution is then exactly what the last answer would have done without holding.
        The close is no action of anyone's and is not logged: a log recorded with holding
        replays to the same hand without it.
        """
        if self.phase is Phase.OVER:
            raise IllegalAction("hand_over", "the hand is over")
        if self.pending is None:
            raise IllegalAction("no_claim_window", "no discard or added kong is being answered")
        if not self.claims_answered():
            waiting = ", ".join(str(p) for p in self.awaiting())
            raise IllegalAction(
                "claims_unanswered", f"the claim window waits for the answers of {waiting}"
            )
        out: list[Event] = []
        self.version += 1
        self._resolve_pending(out)
        self.events.extend(out)
        return out

    def _resolve_pending(self, out: list[Event]) -> None:
        if self.phase is Phase.CLAIM:
            self._resolve_claims(out)
        else:
            self._resolve_rob(out)

    def refusal(self, player: int, action: Action) -> IllegalAction | None:
        """Why ``apply`` would refuse ``action`` of ``player`` (the error it raises), or None
        if it is legal: asked without changing anything, or copying the hand."""
        if self.phase is Phase.OVER:
            return IllegalAction("hand_over", "the hand is over")
        if player not in self.position:
            return IllegalAction("no_such_player", f"there is no player {player!r} at this table")
        legal = self._legal.get(player)
        if not legal:
            if self.phase in (Phase.TURN, Phase.CLAIMED):
                who = f"player {self.current}"
                return IllegalAction("not_your_turn", f"it is {who}'s turn to play, not yours")
            if self.pending is not None and player in self.pending.answers:
                return IllegalAction("already_answered", "you have already answered this claim")
            return IllegalAction("not_your_turn", "you have nothing to decide now")
        # The bots answer with the very objects listed: found by identity (in C), no
        # dataclass ``__eq__`` called on the actions listed before it.
        if id(action) not in map(id, legal) and action not in legal:
            options = ", ".join(str(a) for a in legal)
            return IllegalAction(
                self._refusal_code(player, action), f"{action} is not legal now; legal: {options}"
            )
        return None

    def _refusal_code(self, player: int, action: Action) -> str:
        """Why ``action`` (not among the legal ones) is refused: the code of the error."""
        tile = action.tile
        on_turn = self.phase in (Phase.TURN, Phase.CLAIMED)
        if self.wilds and tile is not None and self._uses_wild(player, action, on_turn):
            return "wild_tile"
        # Only a discard on one's turn fails for want of the tile; a discard while
        # answering a claim is illegal whether the tile is held or not.
        discard = action.kind is ActionKind.DISCARD and on_turn and tile is not None
        if discard and tile is not None and not self._holds(player, tile):
            return "tile_not_in_hand"
        return "illegal_action"

    def _holds(self, player: int, tile: Tile) -> bool:
        return (0 <= tile < N_KINDS and self.concealed[player][tile] > 0) or (
            tile in self.held[player]
        )

    def _uses_wild(self, player: int, action: Action, on_turn: bool) -> bool:
        """Whether ``action`` would discard, claim with or kong a wild tile."""
        tile = action.tile
        assert tile is not None
        kind = action.kind
        if kind is ActionKind.DISCARD:
            return on_turn and tile in self.wilds and self._holds(player, tile)
        if kind in (ActionKind.CONCEALED_KONG, ActionKind.ADD_KONG):
            return tile in self.wilds
        if kind is ActionKind.CHOW and self.phase is Phase.CLAIM and self.pending is not None:
            run = (tile, tile + 1, tile + 2)
            claimed = self.pending.tile
            return claimed in run and any(t in self.wilds for t in run if t != claimed)
        return False

    def _act_on_turn(self, player: int, action: Action, out: list[Event]) -> None:
        kind = action.kind
        if kind is ActionKind.DISCARD:
            assert action.tile is not None
            self._discard(player, action.tile, out)
        elif kind is ActionKind.WIN:
            found = self._win_cache[player]
            assert found is not None
            self._finish_win(player, None, found, out)
        elif kind is ActionKind.CONCEALED_KONG:
            assert action.tile is not None
            tile = action.tile
            self.concealed[player][tile] -= 4
            self.melds[player].append(Meld(MeldKind.KONG, tile, 0))
            self.claims += 0  # a concealed kong is not a claim
            out.append(wire.event(wire.ConcealedKong(player, tile), to=player))
            out.append(wire.event(wire.ConcealedKong(player), hide=player))
            self._replacement_draw(player, out)
        else:  # ADD_KONG
            assert action.tile is not None
            tile = action.tile
            out.append(wire.event(wire.AddKong(player, tile)))
            # Who may rob it, seen as the table was when the tile was added (the pung's three
            # copies showing, the fourth the one robbed).
            robbers = self._robbers(player, tile)
            # The kong stands at once, as on a real table and as the event says: the tile
            # leaves the hand for the meld; a robbery takes it back off (``_resolve_rob``).
            self._set_added_kong(player, tile, True)
            if robbers or self.hold_claims:
                self.phase = Phase.ROB
                self.pending = _Pending(tile, player, {p: [WIN, PASS] for p in robbers})
                self.pending.wins = {p: robbers[p] for p in robbers}
                self._legal = {p: [WIN, PASS] for p in robbers}
                if robbers:  # held open for nobody, the hand stays as it would have gone on
                    self.drawn = None
                return
            self._replacement_draw(player, out)

    def _discard(self, player: int, tile: Tile, out: list[Event]) -> None:
        if is_flower(tile):  # a wild flower, when nothing else is left to discard
            self.held[player].remove(tile)
        else:
            self.concealed[player][tile] -= 1
        self.river[player].append((tile, False))
        self.turns += 1
        self.drawn = None
        self.kong_draw = False
        out.append(_discard_event(player, tile))
        options = self._claim_options(player, tile)
        if options or self.hold_claims:
            self.phase = Phase.CLAIM
            self.pending = _Pending(tile, player, {p: opts for p, (opts, _) in options.items()})
            self.pending.wins = {p: w for p, (_, w) in options.items() if w is not None}
            self._legal = {p: opts for p, (opts, _) in options.items()}
            return
        self._next_draw(self.next_player(player), out)

    def _waits(self, player: int, counts: list[int]) -> frozenset[Tile]:
        """The formal waits (``waits_of_packed``) of ``counts``, a hand of ``player``'s,
        remembered for the seat while its hand stays the same: a hand is asked again at every
        discard of the others and at its own next draw. (The engine's shared cache holds
        4,096 hands: with 2,000 tables in one process, 8,000 hands, it found almost none.)"""
        packed = bytes(counts)
        memo = self._wait_memo.get(player)
        if memo is None or memo[0] != packed:
            memo = (packed, waits_of_packed(packed, len(self.melds[player])))
            self._wait_memo[player] = memo
        return memo[1]

    def _claim_options(
        self, discarder: int, tile: Tile
    ) -> dict[int, tuple[list[Action], Win | None]]:
        last = self.wall.remaining == 0
        out: dict[int, tuple[list[Action], Win | None]] = {}
        wilds = self.wilds
        if tile in wilds:  # a wild tile discarded for want of another: nobody may take it
            return out
        order = self._order[discarder]
        after = order[1]  # the only one who may chow
        for p in order[1:]:
            counts = self.concealed[p]
            opts: list[Action] = []
            # The shape test of ``_check_win`` first, inline: most hands do not wait on it.
            if wilds or tile in self._waits(p, counts):
                win = self._win_on(p, tile, robbing=False, discarder=discarder)
                if win is not None:
                    opts.append(WIN)
            else:
                win = None
            if not last:
                if counts[tile] >= 3 and self.wall.remaining:
                    opts.append(KONG)
                if counts[tile] >= 2:
                    opts.append(PUNG)
                if p == after and tile < 27:
                    r = tile % 9
                    for start in (tile - 2, tile - 1, tile):
                        if start < tile - r or start + 2 > tile - r + 8:
                            continue
                        if all(
                            counts[t] and t not in wilds
                            for t in (start, start + 1, start + 2)
                            if t != tile
                        ):
                            opts.append(Action(ActionKind.CHOW, start))
            if opts:
                opts.append(PASS)
                out[p] = (opts, win)
        return out

    def _resolve_claims(self, out: list[Event]) -> None:
        pending = self.pending
        assert pending is not None
        tile, discarder = pending.tile, pending.source
        order = self._turn_order(discarder)[1:]
        winner = self._head_bump(pending, out)
        self.pending = None
        self._legal = {}
        if winner is not None:
            self._finish_win(winner, discarder, pending.wins[winner], out)
            return
        melders = [
            p
            for p in order
            if pending.answers.get(p, PASS).kind in (ActionKind.PUNG, ActionKind.KONG)
        ]
        chowers = [p for p in order if pending.answers.get(p, PASS).kind is ActionKind.CHOW]
        if melders:
            self._claim(melders[0], pending.answers[melders[0]], tile, discarder, out)
        elif chowers:
            self._claim(chowers[0], pending.answers[chowers[0]], tile, discarder, out)
        else:  # the next player draws, or finds the wall exhausted: as if nobody could claim
            self._next_draw(self.next_player(discarder), out)

    def _claim(
        self, player: int, action: Action, tile: Tile, discarder: int, out: list[Event]
    ) -> None:
        river = self.river[discarder]
        river[-1] = (tile, True)
        self.claims += 1
        counts = self.concealed[player]
        offer = 4 - (self.position[discarder] - self.position[player]) % 4
        if action.kind is ActionKind.CHOW:
            assert action.tile is not None
            start = action.tile
            for t in (start, start + 1, start + 2):
                if t != tile:
                    counts[t] -= 1
            meld = Meld(MeldKind.CHOW, start, tile - start + 1)
        elif action.kind is ActionKind.PUNG:
            counts[tile] -= 2
            meld = Meld(MeldKind.PUNG, tile, offer)
        else:
            counts[tile] -= 3
            meld = Meld(MeldKind.KONG, tile, offer)
        self.melds[player].append(meld)
        out.append(wire.event(wire.Claim(player, action.kind, tile, discarder, meld)))
        self.current = player
        if meld.kind is MeldKind.KONG:
            self._replacement_draw(player, out)
        else:
            self.phase = Phase.CLAIMED
            self.drawn = None
            self._refresh()

    def _resolve_rob(self, out: list[Event]) -> None:
        pending = self.pending
        assert pending is not None
        winner = self._head_bump(pending, out)
        self.pending = None
        self._legal = {}
        if winner is not None:
            # 抢杠和: the added tile is the winner's winning tile; the kong does not stand,
            # so the declarer keeps its pung and no longer holds the tile.
            self._set_added_kong(pending.source, pending.tile, False)
            self._finish_win(winner, pending.source, pending.wins[winner], out)
            return
        self._replacement_draw(pending.source, out)

    def _head_bump(self, pending: _Pending, out: list[Event]) -> int | None:
        """Who wins among the players who declared a win on ``pending``'s tile, if any.

        截和 (head bump), MCR's table procedure: several players able to win on one
        discard: only the first in turn order after the discarder wins. The same holds
        for robbing an added kong (抢杠和): the first robber after the player who added the
        tile wins. When several declared, a ``head_bump`` event names the winner and the
        others, in turn order.
        """
        order = self._turn_order(pending.source)[1:]
        winners = [p for p in order if pending.answers.get(p) == WIN]
        if not winners:
            return None
        if len(winners) > 1:
            out.append(wire.event(wire.HeadBump(winners[0], tuple(winners[1:]))))
        return winners[0]

    def _set_added_kong(self, player: int, tile: Tile, standing: bool) -> None:
        """``standing``: ``player``'s exposed pung of ``tile`` becomes a kong, the added tile
        leaving the hand; else that kong (robbed) is a pung again, the tile gone."""
        melds = self.melds[player]
        was, becomes = (
            (MeldKind.PUNG, MeldKind.KONG) if standing else (MeldKind.KONG, MeldKind.PUNG)
        )
        for i, meld in enumerate(melds):
            if meld.kind is was and meld.tile == tile and not meld.concealed:
                melds[i] = Meld(becomes, tile, meld.offer)
                break
        if standing:
            self.concealed[player][tile] -= 1

    # -------------------------------------------------------------- draws ---

    def _next_draw(self, player: int, out: list[Event]) -> None:
        self.current = player
        if not self.wall.remaining:
            self._finish_draw(out)
            return
        self._draw(player, self.wall.draw(), "wall", out)

    def _replacement_draw(self, player: int, out: list[Event]) -> None:
        self.current = player
        if not self.wall.remaining:
            self._finish_draw(out)
            return
        self._draw(player, self.wall.draw_tail(), "kong", out)

    def _draw(self, player: int, tile: Tile, source: str, out: list[Event]) -> None:
        """Give ``tile`` to ``player``, replacing flowers from the tail, then it is their turn."""
        self.kong_draw = source == "kong"
        out.extend(_draw_pair(player, tile, source))
        if self.flowers_wild and is_flower(tile):  # kept in the hand as a wild tile
            self.held[player].append(tile)
        else:
            if is_flower(tile):
                self.kong_draw = False  # 补花下杠: a flower replacement is a plain self-draw
                replacement = self._replace_flower(player, tile, out)
                if replacement is None:
                    return
                tile = replacement
            self.concealed[player][tile] += 1
        self.drawn = tile
        self.phase = Phase.TURN
        self._refresh()

    def _replace_flower(self, player: int, flower: Tile, out: list[Event]) -> Tile | None:
        """Set ``flower`` aside and replace it from the tail, repeatedly while the replacement
        is a flower (at the deal and on every draw); the tile kept, or ``None`` when the wall
        ran out first (the hand is then drawn)."""
        while True:
            self.flowers[player].append(flower)
            out.append(wire.event(wire.Flower(player, flower)))
            if not self.wall.remaining:
                self._finish_draw(out)
                return None
            tile = self.wall.draw_tail()
            out.extend(_draw_pair(player, tile, "flower"))
            if not is_flower(tile):
                return tile
            flower = tile

    # ---------------------------------------------------------- the turn ---

    def _refresh(self) -> None:
        """Compute the legal actions of the player to move."""
        p = self.current
        counts = self.concealed[p]
        self._win_cache = {}
        actions: list[Action] = []
        if self.phase is Phase.TURN:
            if self.drawn is not None:
                found = self._self_drawn_win(p)
                self._win_cache[p] = found
                if found is not None:
                    actions.append(WIN)
            if self.wall.remaining:
                if 4 in counts:
                    actions.extend(
                        Action(ActionKind.CONCEALED_KONG, t)
                        for t in range(N_KINDS)
                        if counts[t] == 4 and t not in self.wilds
                    )
                for meld in self.melds[p]:
                    if meld.kind is MeldKind.PUNG and counts[meld.tile]:
                        actions.append(Action(ActionKind.ADD_KONG, meld.tile))
        if not self.wilds:
            actions.extend([_DISCARDS[t] for t in compress(range(N_KINDS), counts)])
        else:
            discards = [
                _DISCARDS[t] for t in compress(range(N_KINDS), counts) if t not in self.wilds
            ]
            if not discards:  # only wild tiles left: one of them must go
                discards = [Action(ActionKind.DISCARD, t) for t in sorted(set(self.held[p]))]
                if self.wild_kind is not None and counts[self.wild_kind]:
                    discards.append(_DISCARDS[self.wild_kind])
            actions.extend(discards)
        self._legal = {p: actions}

    # ------------------------------------------------------------- wins ---

    def _visible(self, tile: Tile) -> int:
        """Copies of ``tile`` everyone can see: discards left in the rivers, exposed melds and
        the indicator."""
        seen = int(tile == self.indicator)
        for p in self.player_at:
            seen += sum(1 for t, claimed in self.river[p] if t == tile and not claimed)
            for meld in self.melds[p]:
                if not meld.concealed:
                    seen += meld.tiles.count(tile)
        return seen

    def _hand_of(self, player: int, win_tile: Tile, extra: bool) -> Hand:
        counts = self.concealed[player].copy()
        if not extra:
            counts[win_tile] -= 1
        return Hand(tuple(self.melds[player]), sorted_tiles(counts), win_tile)

    def wild_count(self, player: int) -> int:
        """How many wild tiles ``player`` holds (the indicated kind, or flowers)."""
        kind = self.wild_kind
        return len(self.held[player]) + (self.concealed[player][kind] if kind is not None else 0)

    def _wild_hand(self, player: int, tile: Tile, self_drawn: bool) -> Hand | None:
        """The hand ``player`` would win with ``tile``, its wild tiles as ``WILD``, if complete.

        Checked with the fast shape test first; ``score`` then finds the best reading.
        """
        counts = self.concealed[player].copy()
        wilds = self.wild_count(player)
        if self.wild_kind is not None:
            counts[self.wild_kind] = 0
        if not self_drawn:
            counts[tile] += 1
        melds = self.melds[player]
        meld_counts = [0] * N_KINDS
        for meld in melds:
            for t in meld.tiles:
                meld_counts[t] += 1
        if not is_winning_with_wilds(counts, wilds, len(melds), meld_counts):
            return None
        if tile in self.wilds:
            win_tile, wilds = WILD, wilds - 1
        else:
            win_tile = tile
            counts[tile] -= 1
        standing = (*tiles_of(counts), *(WILD,) * wilds)
        return Hand(tuple(melds), standing, win_tile)

    def _check_win(
        self,
        player: int,
        tile: Tile,
        *,
        self_drawn: bool,
        kong: bool,
        wall_last: bool,
        discarder: int | None = None,
    ) -> Win | None:
        """The win ``player`` may declare with ``tile``, if its hand is complete with the
        rules' minimum (``discarder``: who discarded ``tile``, ``None`` when self-drawn or
        robbing a kong).

        The situation is read off the table: Last Tile when the three other copies are
        visible (discards, exposed melds and the indicator, not the winning discard itself,
        not face-down kongs), the kong and last-tile flags as given.
        """
        hand: Hand | None
        if self.wilds:
            hand = self._wild_hand(player, tile, self_drawn)
            if hand is None:
                return None
        else:
            counts = self.concealed[player]
            melds = len(self.melds[player])
            if self_drawn:
                # The waits of the hand before the draw first: asked at every discard before
                # it (cached), they rule out most hands for less than ``is_winning`` costs.
                before = counts.copy()
                before[tile] -= 1
                if tile not in self._waits(player, before) or not is_winning(counts, melds):
                    return None
            elif tile not in self._waits(player, counts):
                return None
            hand = None
        visible = self._visible(tile) - (0 if self_drawn or kong else 1)
        ctx = WinContext(
            self_drawn=self_drawn,
            last_of_kind=visible == 3,
            kong=kong,
            wall_last=wall_last,
            seat_wind=self.seat_wind(player),
            round_wind=self.round_wind,
            flowers=0 if self.flowers_wild else len(self.flowers[player]),
        )
        if self.rules.extra_fans:
            ctx = self._extra_context(ctx, player, discarder)
        if hand is None:
            hand = self._hand_of(player, tile, not self_drawn)
        win = Win(hand, ctx, self.rules)
        if self.rules.min_fan <= 0:
            return win  # complete is enough: scored when declared
        try:
            return win if win.score.meets_minimum else None
        except NotWinning:  # no substitution of the wild tiles completes the hand
            return None

    def _extra_context(self, ctx: WinContext, player: int, discarder: int | None) -> WinContext:
        """天和, 地和, 人和 and 季花 (the seat's own flowers) of a win, read off the table."""
        dealer = self.dealer
        heavenly = (
            ctx.self_drawn and player == dealer and self.turns == 0 and not self.melds[player]
        )
        earthly = discarder == dealer and self.turns == 1
        human = not earthly and player != dealer and not self.river[player] and self.claims == 0
        own = 0 if self.flowers_wild else seat_flowers(self.flowers[player], self.seat_wind(player))
        return replace(ctx, heavenly=heavenly, earthly=earthly, human=human, seat_flowers=own)

    def _self_drawn_win(self, player: int) -> Win | None:
        """A win on the tile just drawn: after a kong 杠上开花, on the last tile of the wall
        妙手回春, both at once when a kong's replacement is the last tile (rulings T6, T7)."""
        assert self.drawn is not None
        return self._check_win(
            player,
            self.drawn,
            self_drawn=True,
            kong=self.kong_draw,
            wall_last=self.wall.remaining == 0,
        )

    def _win_on(
        self, player: int, tile: Tile, *, robbing: bool, discarder: int | None = None
    ) -> Win | None:
        """A win on a discard (by ``discarder``), or robbing an added kong (抢杠和)."""
        return self._check_win(
            player,
            tile,
            self_drawn=False,
            kong=robbing,
            wall_last=not robbing and self.wall.remaining == 0,
            discarder=None if robbing else discarder,
        )

    def _robbers(self, player: int, tile: Tile) -> dict[int, Win]:
        out = {}
        for p in self._turn_order(player)[1:]:
            found = self._win_on(p, tile, robbing=True)
            if found is not None:
                out[p] = found
        return out

    def _finish_win(
        self,
        winner: int,
        discarder: int | None,
        found: Win,
        out: list[Event],
    ) -> None:
        result, ctx, hand = found.score, found.ctx, found.hand
        deltas = win_deltas(result.total, winner, discarder, self.dealer, self.rules)
        self.result = HandResult(
            result="win",
            winner=winner,
            discarder=discarder,
            win_tile=hand.win_tile,
            hand=hand,
            context=ctx,
            score=result,
            deltas=deltas,
        )
        out.append(
            wire.event(
                wire.Win(
                    winner=winner,
                    discarder=discarder,
                    tile=hand.win_tile,
                    hand=format_hand(hand),
                    total=result.total,
                    meets_minimum=result.meets_minimum,
                    fans=tuple(
                        wire.WonFan(fc.fan.en, fc.fan.zh, fc.fan.points, fc.count)
                        for fc in result.fans
                    ),
                    deltas=deltas,
                )
            )
        )
        self._end(out)

    def _finish_draw(self, out: list[Event]) -> None:
        self.result = HandResult("draw", None, None, None, None, None, None, (0, 0, 0, 0))
        out.append(wire.event(wire.Exhausted()))
        self._end(out)

    def _end(self, out: list[Event]) -> None:
        self.phase = Phase.OVER
        self.pending = None
        self._legal = {}
        hands = tuple(  # by player
            wire.RevealedHand(format_concealed(*self._concealed_tiles(p)), tuple(self.melds[p]))
            for p in sorted(self.player_at)
        )
        out.append(wire.event(wire.HandEnd(hands)))

    # ------------------------------------------------------------- views ---

    def view(self, player: int | None) -> View:
        """What ``player`` may know (``None``: a spectator, who sees no concealed tile).

        Others' concealed tiles, their face-down kongs (until the hand is over), the wall
        and its order are never in it.
        """
        public = self._public_seats()
        if self.phase is Phase.OVER:
            seats = tuple(self._kept_seat(seat.player, True) for seat in public)
        elif player in self.position:
            at = self.position[player]
            seats = (*public[:at], self._kept_seat(player, True), *public[at + 1 :])
        else:
            seats = public
        drawn = self.drawn if player == self.current and self.phase is Phase.TURN else None
        legal = tuple(self._legal.get(player, ())) if player is not None else ()
        return self._view(player, seats, drawn, legal)

    def brief(self, player: int | None) -> dict[str, Any]:
        """``view(player)``'s JSON form (``wire.encode_view``) without the seats, and with
        ``players``, the players in position order: protocol version 2's updates, whose
        client follows the seats from the events (``engine.follow``). Built straight from
        the state, no ``View`` made: what every viewer shares is made once per state."""
        shared = self._brief
        if shared is None or shared[0] != self.version:
            shared = self._brief = (self.version, *self._brief_parts())
        _, head, tail = shared
        out = dict(head)
        if player == self.current and self.phase is Phase.TURN and self.drawn is not None:
            out["drawn"] = name(self.drawn)
        if self.pending is not None:
            out["claim"] = {
                "tile": name(self.pending.tile),
                "from": self.pending.source,
                "kind": "discard" if self.phase is Phase.CLAIM else "add_kong",
            }
        if player is not None:
            out["you"] = player
            out["legal"] = legal_json(self._legal.get(player, ()))
        if tail:
            out.update(tail)
        return out

    def _brief_parts(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """What ``brief`` shares among viewers: the keys before ``drawn``, the rule keys."""
        first, second = self.wall.dice.first, self.wall.dice.second
        head = {
            "phase": self.phase.value,
            "round_wind": self.round_wind.letter,
            "dealer": self.dealer,
            "dice": [list(first), list(second)],
            "wall_remaining": self.wall.remaining,
            "current": self.current,
            "players": list(self.player_at),
        }
        tail: dict[str, Any] = {}
        if not self.plain:
            tail = {
                "rules": self.rules.to_dict(),
                "indicator": name(self.indicator) if self.indicator is not None else None,
                "dead_flowers": [name(t) for t in self.dead_flowers],
                "wild_tiles": [name(t) for t in sorted(self.wilds)],
            }
        return head, tail

    def open_view(self) -> View:
        """The hand with nothing hidden: every seat's concealed tiles and concealed kongs,
        the drawn tile of the player to move; no viewer, nothing legal. Only for a finished
        match's replay (``server.replay``), never while the hand may be played."""
        seats = tuple(self._seat_view(p, True) for p in self.player_at)
        drawn = self.drawn if self.phase is Phase.TURN else None
        return self._view(None, seats, drawn, ())

    def _view(
        self,
        viewer: int | None,
        seats: tuple[SeatView, ...],
        drawn: Tile | None,
        legal: tuple[Action, ...],
    ) -> View:
        claim = None
        if self.pending is not None:
            claim = ClaimView(
                self.pending.tile,
                self.pending.source,
                "discard" if self.phase is Phase.CLAIM else "add_kong",
            )
        return View(
            viewer=viewer,
            phase=self.phase,
            round_wind=self.round_wind,
            dealer=self.dealer,
            dice=(self.wall.dice.first, self.wall.dice.second),
            wall_remaining=self.wall.remaining,
            current=self.current,
            seats=seats,
            drawn=drawn,
            claim=claim,
            legal=legal,
            rules=self.rules,
            indicator=self.indicator,
            dead_flowers=tuple(self.dead_flowers),
            wild_tiles=self.wilds,
        )

    def _public_seats(self) -> tuple[SeatView, ...]:
        """Every seat as everyone sees it; built once per state of the table."""
        if self._public is None or self._public[0] != self.version:
            east, south, west, north = self.player_at
            kept = self._kept_seat
            seats = (
                kept(east, False),
                kept(south, False),
                kept(west, False),
                kept(north, False),
            )
            self._public = (self.version, seats)
        return self._public[1]

    def _kept_seat(self, p: int, shown: bool) -> SeatView:
        """``_seat_view(p, shown)``, but the same ``SeatView`` as last time when nothing it
        is made of changed since: an action changes one or two seats, and a kept view keeps
        its JSON form (cached on it), which is then not built again. The key is everything
        ``_seat_view`` reads (tuples of immutable values: compared in C, mostly by
        identity), so a kept view is exactly the one that would be built."""
        concealed = self.concealed[p]
        key = (
            tuple(concealed) if shown else sum(concealed),
            tuple(self.held[p]),
            tuple(self.melds[p]),
            tuple(self.flowers[p]),
            tuple(self.river[p]),
            self.wilds,
            self.wild_kind,
            self._winds[p],
        )
        kept = self._seats.get((p, shown))
        if kept is not None and kept[0] == key:
            return kept[1]
        seat = self._seat_view(p, shown)
        self._seats[p, shown] = (key, seat)
        return seat

    def _concealed_tiles(self, p: int) -> tuple[tuple[Tile, ...], int]:
        """``p``'s concealed tiles, its wild tiles first (at the left), and how many are wild."""
        if not self.wilds:
            return sorted_tiles(self.concealed[p]), 0
        counts = self.concealed[p].copy()
        wild = sorted(self.held[p])
        if self.wild_kind is not None:
            wild += [self.wild_kind] * counts[self.wild_kind]
            counts[self.wild_kind] = 0
        return (*wild, *sorted_tiles(counts)), len(wild)

    def _seat_view(self, p: int, shown: bool) -> SeatView:
        declared = self.melds[p]
        melds = (
            tuple(declared)
            if shown or not declared
            else tuple(m for m in declared if not m.concealed)
        )
        concealed, wilds = self._concealed_tiles(p) if shown else (None, 0)
        return SeatView(
            player=p,
            wind=self._winds[p],
            concealed_count=sum(self.concealed[p]) + len(self.held[p]),
            melds=melds,
            hidden_kongs=len(declared) - len(melds),
            flowers=tuple(self.flowers[p]),
            river=tuple(self.river[p]),
            concealed=concealed,
            wilds=wilds,
        )


# The events of every turn, one of each kind for every player and tile, shared by every hand
# of the process: an event is frozen and nobody changes its data, and a hand keeps all of its
# events (two a draw, one a discard), a third of a table's memory before (docs/performance.md,
# "Memory"). Built without the typed instances (``wire.Draw.fields``): the hot path.


@cache
def _draw_pair(player: int, tile: Tile, source: str) -> tuple[Event, Event]:
    """A draw as its player sees it (the tile) and as the others do (only the source)."""
    return (
        Event(wire.Draw.KIND, wire.Draw.fields(player, source, tile), to=player),
        Event(wire.Draw.KIND, wire.Draw.fields(player, source), hide=player),
    )


@cache
def _discard_event(player: int, tile: Tile) -> Event:
    return Event(wire.Discard.KIND, wire.Discard.fields(player, tile))

"""Playing aids for one player's own hand, from what that player may know (its ``View``).

``analyze(view)`` answers, for the viewer's hand:

- ``shanten``: how far the hand is from ready (-1: complete), as ``engine.shanten`` (or
  ``engine.wilds`` under rules with wild tiles) counts it;
- ``waits`` (a hand of 13 tiles, melds counted three each): the tiles that complete it,
  each with the copies the player cannot see (``unseen``) and the fan total the calculator
  gives the win on a discard and self-drawn, and whether that total reaches the minimum;
- ``discards`` (a hand of 14 on the player's turn): for each tile ``view.legal`` lets it
  discard, the shanten of what is left and, when ready, its waits; best first.

Only the view is read: the player's own concealed tiles, its own melds and flowers, every
seat's exposed melds and river, the indicator and wild tiles, the winds and the wall's size.
So two tables that differ only in what the player cannot see (others' concealed tiles,
face-down kongs, the wall's order) give the same answer.

The situation of each win is what the table would give it, as far as the view tells:
seat and prevalent wind, the player's flowers (and 季花 under the extra fans), Last Tile
(和绝张) when the other three copies are in the open (rivers, exposed melds, the indicator:
not the player's own concealed tiles, as the table counts), Last Tile Claim (海底捞月) on a
discard when the wall is empty. What depends on how the tile would come (a kong's
replacement, robbing a kong, 妙手回春) or on the order of play (天和, 地和, 人和) is not
counted. Under rules with wild tiles a drawn wild tile completes a ready hand: that wait
is the tile ``WILD`` (``"*"``), won self-drawn only (a wild tile's discard cannot be won).

The work is bounded: at most 14 distinct discards, the waits (and their scores) only of
those that leave the hand ready, at most ``SCORE_BUDGET`` scores of hands holding wild tiles
(the costly ones), none of hands holding four (``FOUR_WILDS``). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from engine import shanten as plain
from engine import wilds as wild
from engine.actions import ActionKind
from engine.copyable import copyable
from engine.errors import MahjongError, NotWinning
from engine.fans import Fan
from engine.hand import Hand, Meld
from engine.rules import RuleSet, Wilds
from engine.scoring import WinContext, score
from engine.tiles import (
    N_FLOWERS,
    N_KINDS,
    WILD,
    Tile,
    counts_of,
    name,
    seat_flowers,
    tiles_of,
)
from engine.view import View

# Scoring a hand with wild tiles tries their readings: a few milliseconds with three, tens
# with four and more (``FOUR_WILDS``, not scored). At most this many such wins are scored per
# analysis, the best discards first; the others get no total.
SCORE_BUDGET = 64
FOUR_WILDS = 4  # wild tiles in a hand that score Four Wilds (混杠, 88) under the extra fans


class NoHand(MahjongError, ValueError):
    """The view has no hand to analyse: a spectator's, or a player's without its tiles."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """A win's fan total (flowers included) and whether it reaches the rules' minimum.

    ``total`` is None when it was not worked out (``SCORE_BUDGET``, ``FOUR_WILDS``): then
    ``meets_minimum`` is True when no total could miss it, else None (not known).
    """

    total: int | None
    meets_minimum: bool | None

    def to_dict(self) -> dict[str, Any]:
        return {"total": self.total, "meets_minimum": self.meets_minimum}


@dataclass(frozen=True, slots=True)
class Wait:
    """A tile that completes the hand (``WILD``: any wild tile, drawn)."""

    tile: Tile
    unseen: int  # copies the player cannot see (of ``WILD``: wild tiles)
    discard: Outcome | None  # None: this tile cannot be won on a discard
    self_drawn: Outcome

    def to_dict(self) -> dict[str, Any]:
        return {
            "tile": name(self.tile),  # "*" for WILD
            "unseen": self.unseen,
            "discard": self.discard.to_dict() if self.discard is not None else None,
            "self_drawn": self.self_drawn.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class DiscardChoice:
    """What discarding ``tile`` leaves: its shanten and, when ready, its waits."""

    tile: Tile
    shanten: int
    waits: tuple[Wait, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "tile": name(self.tile),
            "shanten": self.shanten,
            "waits": [w.to_dict() for w in self.waits],
        }


@dataclass(frozen=True, slots=True)
class Analysis:
    min_fan: int
    shanten: int
    waits: tuple[Wait, ...] | None  # a 13-tile hand (else None)
    discards: tuple[DiscardChoice, ...] | None  # on the player's turn with 14 (else None)

    def to_dict(self) -> dict[str, Any]:
        """The wire form (``analysis`` in docs/protocol.md, after ``table`` and ``seq``)."""
        out: dict[str, Any] = {"min_fan": self.min_fan, "shanten": self.shanten}
        if self.waits is not None:
            out["waits"] = [w.to_dict() for w in self.waits]
        if self.discards is not None:
            out["discards"] = [d.to_dict() for d in self.discards]
        return out


@dataclass(frozen=True, slots=True)
class _Holding:
    """The viewer's standing tiles as the shape functions take them: the tiles that are not
    wild (``counts``) and how many wild tiles stand beside them."""

    counts: tuple[int, ...]
    wilds: int

    def without(self, tile: Tile, wild_tiles: frozenset[Tile]) -> _Holding:
        if tile in wild_tiles:
            return _Holding(self.counts, self.wilds - 1)
        counts = list(self.counts)
        counts[tile] -= 1
        return _Holding(tuple(counts), self.wilds)


@dataclass(slots=True)
class _Table:
    """What every win of the analysis shares: the rules, the player's melds and situation,
    the copies of each tile in the open; and how many wins holding wild tiles may still be
    scored."""

    rules: RuleSet
    wild_tiles: frozenset[Tile]
    melds: tuple[Meld, ...]
    meld_counts: tuple[int, ...]
    base: WinContext
    public: tuple[int, ...]  # copies in the open (Last Tile), by kind
    seen: tuple[int, ...]  # copies the player sees (its own tiles too), by kind
    wild_kind: Tile | None  # the indicated wild kind (None: no wilds, or flowers)
    wilds_seen: int  # wild tiles the player sees
    scores_left: int

    def shanten(self, hand: _Holding) -> int:
        if self.wild_tiles:
            return wild.shanten_with_wilds(
                hand.counts, hand.wilds, len(self.melds), self.meld_counts
            )
        return plain.shanten(hand.counts, len(self.melds))

    def waits(
        self,
        hand: _Holding,
        kinds: Sequence[Tile],
        *,
        wall_last: bool,
        discarded: Tile | None,
        pending: Tile | None,
    ) -> tuple[Wait, ...]:
        """The waits of a 13-tile ``hand`` (``kinds``: its ``completing`` tiles) with their
        scores. ``discarded``: a tile the player discards first, in the open from then on;
        ``pending``: the discard being answered, already in its river (won on, it is not
        one of the other three copies)."""
        public = list(self.public)
        if discarded is not None and discarded < N_KINDS:
            public[discarded] += 1
        out = []
        for tile in kinds:
            if tile == self.wild_kind or hand.counts[tile] + self.meld_counts[tile] >= 4:
                continue  # drawn, a wild tile (below); or no copy left but the player's
            on_discard = public[tile] - (tile == pending) == 3
            found = self._wait(hand, tile, (on_discard, public[tile] == 3), wall_last)
            if found is not None:
                out.append(found)
        if kinds and self.wild_tiles:
            drawn_wild = self._wild_wait(hand, public)
            if drawn_wild is not None:
                out.append(drawn_wild)
        return tuple(out)

    def completing(self, hand: _Holding) -> list[Tile]:
        """The kinds whose tile completes ``hand``, by shape (never a fifth copy in the hand)."""
        melds = len(self.melds)
        if self.wild_tiles:
            kinds = wild.waits_with_wilds(hand.counts, hand.wilds, melds, self.meld_counts)
        else:
            kinds = plain.waits(hand.counts, melds)
        return kinds

    def _hand(self, hand: _Holding, win_tile: Tile) -> Hand:
        standing = (*tiles_of(hand.counts), *(WILD,) * hand.wilds)
        return Hand(self.melds, standing, win_tile)

    def _outcome(self, won: Hand, ctx: WinContext) -> Outcome | None:
        """The win scored (None: it is not complete after all), unless it holds wild tiles
        and the budget is spent, or it holds four: Four Wilds alone reaches any minimum."""
        rules = self.rules
        if won.wilds >= FOUR_WILDS and rules.extra_fans and rules.min_fan <= Fan.FOUR_WILDS.points:
            return Outcome(None, True)
        if won.wilds:
            if self.scores_left <= 0:
                return Outcome(None, True if rules.min_fan <= 0 else None)
            self.scores_left -= 1
        try:
            result = score(won, ctx, self.rules)
        except NotWinning:  # no reading of the wild tiles completes it: the table refuses too
            return None
        return Outcome(result.total, result.meets_minimum)

    def _wait(
        self, hand: _Holding, tile: Tile, last: tuple[bool, bool], wall_last: bool
    ) -> Wait | None:
        """``tile`` won on a discard and self-drawn (``last``: Last Tile in each case)."""
        won = self._hand(hand, tile)
        base = self.base
        on_discard = self._outcome(won, replace(base, last_of_kind=last[0], wall_last=wall_last))
        drawn = self._outcome(won, replace(base, self_drawn=True, last_of_kind=last[1]))
        if on_discard is None or drawn is None:
            return None
        return Wait(tile, 4 - self.seen[tile], on_discard, drawn)

    def _wild_wait(self, hand: _Holding, public: Sequence[int]) -> Wait | None:
        """A wild tile drawn (the hand is ready, so it completes it), unless the player
        holds every wild tile already."""
        kind = self.wild_kind
        total = 4 if kind is not None else N_FLOWERS
        if hand.wilds >= total:
            return None
        last = kind is not None and public[kind] == 3
        drawn = self._outcome(
            self._hand(hand, WILD), replace(self.base, self_drawn=True, last_of_kind=last)
        )
        if drawn is None:
            return None
        return Wait(WILD, total - self.wilds_seen, None, drawn)


def _count_in_open(view: View, viewer: int) -> tuple[list[int], list[int]]:
    """Copies of each kind in the open (unclaimed river tiles, every exposed meld, the
    indicator) and those the player sees (the open ones, its own tiles and concealed kongs;
    a claimed river tile is counted once, in its meld)."""
    public = [0] * N_KINDS
    own = [0] * N_KINDS
    for seat in view.seats:
        for tile, claimed in seat.river:
            public[tile] += not claimed
        for meld in seat.melds:
            for tile in meld.tiles:
                if meld.concealed:
                    own[tile] += 1  # the viewer's own: others' face-down kongs are not shown
                else:
                    public[tile] += 1
        if seat.player == viewer:
            for tile in seat.concealed or ():
                if tile < N_KINDS:
                    own[tile] += 1
    if view.indicator is not None:
        public[view.indicator] += 1
    seen = [p + o for p, o in zip(public, own, strict=True)]
    return public, seen


def analyze(view: View) -> Analysis:
    """The aids for ``view``'s viewer (``NoHand`` for a spectator's view)."""
    viewer = view.viewer
    if viewer is None:
        raise NoHand("a spectator has no hand to analyse")
    me = view.seat(viewer)
    if me.concealed is None:
        raise NoHand(f"the view does not show player {viewer}'s tiles")
    rules = view.rules
    flowers_wild = rules.wilds is Wilds.FLOWERS
    flowers = 0 if flowers_wild else len(me.flowers)
    base = WinContext(
        seat_wind=me.wind,
        round_wind=view.round_wind,
        flowers=flowers,
        seat_flowers=0
        if flowers_wild or not rules.extra_fans
        else seat_flowers(me.flowers, me.wind),
    )
    public, seen = _count_in_open(view, viewer)
    meld_counts = counts_of(t for m in me.melds for t in m.tiles)
    wild_kind = next((t for t in view.wild_tiles if t < N_KINDS), None)
    if flowers_wild:
        wilds_seen = me.wilds + len(view.dead_flowers)
    else:
        wilds_seen = seen[wild_kind] if wild_kind is not None else 0
    table = _Table(
        rules=rules,
        wild_tiles=view.wild_tiles,
        melds=me.melds,
        meld_counts=tuple(meld_counts),
        base=base,
        public=tuple(public),
        seen=tuple(seen),
        wild_kind=wild_kind,
        wilds_seen=wilds_seen,
        scores_left=SCORE_BUDGET,
    )
    hand = _Holding(tuple(counts_of(me.concealed[me.wilds :])), me.wilds)
    size = len(me.concealed) + 3 * len(me.melds)
    waits = None
    if size == 13:
        ready = table.shanten(hand) == 0
        empty = view.wall_remaining == 0
        claim = view.claim
        pending = claim.tile if claim is not None and claim.kind == "discard" else None
        kinds = table.completing(hand) if ready else []
        waits = table.waits(hand, kinds, wall_last=empty, discarded=None, pending=pending)
    discards = None
    choices = {a.tile for a in view.legal if a.kind is ActionKind.DISCARD and a.tile is not None}
    if size == 14 and choices:
        discards = _discards(table, hand, choices)
    return Analysis(rules.min_fan, table.shanten(hand), waits, discards)


def _discards(table: _Table, hand: _Holding, choices: set[Tile]) -> tuple[DiscardChoice, ...]:
    """Each discard's shanten and waits, best first: the least shanten, then the most unseen
    copies of the waits, then in tile order. Scored in that order (``SCORE_BUDGET``)."""
    ranked = []
    for tile in choices:
        left = hand.without(tile, table.wild_tiles)
        shanten = table.shanten(left)
        kinds = table.completing(left) if shanten == 0 else []
        unseen = sum(4 - table.seen[t] for t in kinds)
        ranked.append((shanten, -unseen, tile, left, kinds))
    ranked.sort(key=lambda r: r[:3])
    return tuple(
        DiscardChoice(
            tile,
            shanten,
            table.waits(left, kinds, wall_last=False, discarded=tile, pending=None),
        )
        for shanten, _, tile, left, kinds in ranked
    )


copyable(Outcome, Wait, DiscardChoice, Analysis)

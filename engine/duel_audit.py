"""The defence audit of ``guobiao duel``: discards that feed a waiting opponent, read off the
whole table.

The harness that plays a duel (``engine.duel``) sees every hand (the bots still see only
their views), so it can tell, for each discard, what no player could: whether an opponent was
waiting on that tile, and whether the discarder held a tile as useful to its own hand that
nobody was waiting on. ``audit_discard`` answers, for a discard about to be made:

- ``feeds``: the seat is not ready after it (the shanten of the hand it keeps, melds counted,
  is 1 or more: ``engine.shanten``, or ``engine.wilds`` with wild tiles) and the table
  would offer some opponent a win on it (with the rules' fan minimum). The table decides:
  the discard is played on a copy of the hand and the copy's legal actions read, so the
  scoring and the minimum are the engine's own, never a second opinion;
- ``safe_alternative``: the seat held another tile of equal use (discarding it instead keeps
  the same shanten) that no opponent could win on, decided the same way;
- ``known_safe_alternative``: of those tiles of equal use, one that every opponent fed had let
  pass since its own last discard (``engine.bots.danger.let_pass``, read off the seat's own
  view): a tile the seat could have known was safe against them, as riichi players know the
  tiles a declared hand let pass. The first share needs the whole table to see; this one
  only what the seat sees, and which opponent to fear.

Most discards are ruled out by the cheap shape test the table itself runs first (the
opponents' waits: ``engine.forms.waits_of_packed``, or ``engine.wilds.waits_with_wilds``);
a copy of the hand is made only for the tiles it lets through. docs/bots.md ("Evaluating a
bot: guobiao duel") states the definitions. Pure: no I/O.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import lru_cache

from engine.actions import DISCARDS, WIN, ActionKind
from engine.bots.danger import let_pass
from engine.forms import waits_of_packed
from engine.shanten import shanten
from engine.table import HandState
from engine.tiles import N_KINDS, Tile
from engine.wilds import shanten_with_wilds, waits_with_wilds

_WAITS_MEMO = 1 << 14  # wild-tile hands' waits kept (an opponent's hand lasts many discards)


@dataclass(frozen=True, slots=True)
class DiscardAudit:
    """What one discard was (module docs): ``safe_alternative`` is only ever true for a
    discard that ``feeds``, ``known_safe_alternative`` only with ``safe_alternative``."""

    feeds: bool = False
    safe_alternative: bool = False
    known_safe_alternative: bool = False


NOT_FEEDING = DiscardAudit()


def audit_discard(hand: HandState, player: int, tile: Tile) -> DiscardAudit:
    """Audit ``player``'s discard of ``tile`` in ``hand``, before it is made (``hand`` is
    left as it was): whether it feeds a waiting opponent while the seat is one or more
    tiles from ready, and if so whether a safe tile of equal use was held."""
    if tile >= N_KINDS or tile in hand.wilds:
        return NOT_FEEDING  # a wild tile let go for want of another: nobody may take it
    opponents = [p for p in hand.player_at if p != player]
    waits = [_waits(hand, p) for p in opponents]
    if not any(tile in w for w in waits):
        return NOT_FEEDING
    after = _shanten_after(hand, player, tile)
    if after < 1:
        return NOT_FEEDING
    fed = _fed(hand, player, tile, opponents)
    if not fed:
        return NOT_FEEDING
    others = sorted(
        a.tile
        for a in hand.legal_actions(player)
        if a.kind is ActionKind.DISCARD
        and a.tile is not None
        and a.tile != tile
        and a.tile < N_KINDS
        and a.tile not in hand.wilds
    )
    equal = [t for t in others if _shanten_after(hand, player, t) == after]
    # The tiles of equal use every opponent fed let pass first, then the others, each asked
    # once. Tiles nobody waits on by shape are safe outright; the others need the table's word.
    passed = let_pass(_trial(hand).view(player))  # a copy's: the hand's memos left alone
    let_by = [t for t in equal if all(t in passed[p] for p in fed)]

    def safe(t: Tile) -> bool:
        return not any(t in w for w in waits) or not _fed(hand, player, t, opponents)

    if any(safe(t) for t in let_by):
        return DiscardAudit(feeds=True, safe_alternative=True, known_safe_alternative=True)
    rest = any(safe(t) for t in equal if t not in let_by)
    return DiscardAudit(feeds=True, safe_alternative=rest)


def _fed(hand: HandState, player: int, tile: Tile, opponents: list[int]) -> list[int]:
    """Those of ``opponents`` the table offers a win, ``player`` discarding ``tile``: played
    on a copy of the hand."""
    trial = _trial(hand)
    trial.apply(player, DISCARDS[tile])
    return [p for p in opponents if WIN in trial.legal_actions(p)]


def _trial(hand: HandState) -> HandState:
    """A copy of ``hand`` to play on, its event history left behind and its rules shared."""
    return copy.deepcopy(hand, {id(hand.events): [], id(hand.rules): hand.rules})


def _shanten_after(hand: HandState, player: int, tile: Tile) -> int:
    """The shanten of ``player``'s standing tiles without one ``tile``."""
    counts = hand.concealed[player].copy()
    melds = hand.melds[player]
    if not hand.wilds:
        counts[tile] -= 1
        return shanten(counts, len(melds))
    wilds = hand.wild_count(player)
    if hand.wild_kind is not None:
        counts[hand.wild_kind] = 0
    if tile >= N_KINDS or tile in hand.wilds:
        wilds -= 1
    else:
        counts[tile] -= 1
    return shanten_with_wilds(counts, wilds, len(melds), _meld_counts(hand, player))


def _waits(hand: HandState, player: int) -> frozenset[Tile]:
    """The kinds ``player``'s hand is complete with by shape (the table's own first test;
    the fan minimum is not looked at)."""
    counts = hand.concealed[player]
    melds = len(hand.melds[player])
    if not hand.wilds:
        return waits_of_packed(bytes(counts), melds)
    plain = counts.copy()
    if hand.wild_kind is not None:
        plain[hand.wild_kind] = 0
    return _wild_waits(
        bytes(plain), hand.wild_count(player), melds, bytes(_meld_counts(hand, player))
    )


@lru_cache(maxsize=_WAITS_MEMO)
def _wild_waits(counts: bytes, wilds: int, melds: int, meld_counts: bytes) -> frozenset[Tile]:
    return frozenset(waits_with_wilds(list(counts), wilds, melds, list(meld_counts)))


def _meld_counts(hand: HandState, player: int) -> list[int]:
    out = [0] * N_KINDS
    for meld in hand.melds[player]:
        for t in meld.tiles:
            out[t] += 1
    return out

"""The speed strategy: how ``DefaultBot`` plays when any complete hand may win.

Under rules with wild tiles (财神), or with no fan minimum (``rules.min_fan`` 0: any complete
hand wins), plans give way to speed: the bot counts its wild tiles toward the hand with
``engine.wilds.shanten_with_wilds`` and discards the tile that leaves the lowest shanten,
then the most unseen useful tiles (``useful_tiles_with_wilds``), then the tile it least
wants to keep (``reading.keep_score``); it claims when the hand is strictly better after the
claim and its discard, and declares a kong that costs nothing. It only ever picks from
``view.legal``, where the table never offers to discard a wild tile (unless nothing else is
left) nor to claim with one. With wild tiles and a minimum (the '8 fan to win' option) it
plays the same way and wins when the table says the hand reaches the minimum: wild tiles
make most complete hands worth 8 fan (97% of the hands of ``guobiao simulate --rules
custom-8fan --matches 30 --seed 11`` are won).

Speed: a memo of each 13-tile hand's shanten and useful tiles; a drawn tile that lowers
nothing is given back at once; useful tiles are counted only for the few discards tied best.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from engine.actions import PASS, Action, ActionKind
from engine.bots.reading import KONGS, Seat, discard, keep_score, own_seat, unseen_copies
from engine.copyable import copyable
from engine.tiles import N_KINDS
from engine.view import Phase, View
from engine.wilds import shanten_with_wilds, useful_tiles_with_wilds

COUNTED_DISCARDS: Final = 4  # useful tiles are counted for this many discards tied best

_Key = tuple[bytes, int, int, bytes]


@dataclass(frozen=True, slots=True)
class SpeedHand:
    """A hand for speed play: standing tiles that are not wild, wild tiles, melds, and the
    tiles of the melds (for the fifth-copy rule)."""

    counts: list[int]
    wilds: int
    melds: int
    meld_counts: list[int]

    def without(self, tile: int) -> SpeedHand:
        """The hand less one ``tile`` (a wild tile when it holds none of that kind)."""
        if tile < N_KINDS and self.counts[tile]:
            counts = self.counts.copy()
            counts[tile] -= 1
            return SpeedHand(counts, self.wilds, self.melds, self.meld_counts)
        return SpeedHand(self.counts, self.wilds - 1, self.melds, self.meld_counts)

    def meld(self, tile: int, taken: int, added: int, new: bool = True) -> SpeedHand:
        """The hand once ``taken`` of its ``tile`` go into a meld, ``added`` to the melds."""
        counts = self.counts.copy()
        counts[tile] -= taken
        meld_counts = self.meld_counts.copy()
        meld_counts[tile] += added
        return SpeedHand(counts, self.wilds, self.melds + int(new), meld_counts)

    def chow(self, start: int, claimed: int) -> SpeedHand:
        counts = self.counts.copy()
        meld_counts = self.meld_counts.copy()
        for t in (start, start + 1, start + 2):
            if t != claimed:
                counts[t] -= 1
            meld_counts[t] += 1
        return SpeedHand(counts, self.wilds, self.melds + 1, meld_counts)

    def claimed(self, action: Action, tile: int) -> SpeedHand | None:
        """The hand after claiming ``tile`` with ``action`` (a chow, pung or kong); None for
        any other action."""
        kind = action.kind
        if kind is ActionKind.CHOW:
            start = action.tile
            assert start is not None
            return self.chow(start, tile)
        if kind is ActionKind.PUNG:
            return self.meld(tile, 2, 3)
        if kind is ActionKind.KONG:
            return self.meld(tile, 3, 4)
        return None


class SpeedPlay:
    """The speed strategy of ``DefaultBot`` (module docs), with its memo."""

    MEMO_SIZE: Final = 256  # recent hands: a memo serves one hand across a few decisions

    def __init__(self) -> None:
        # A memo of a pure function of its key: it changes the bot's speed, not its play.
        self._memo: dict[_Key, tuple[int, tuple[int, ...]]] = {}

    def forget(self) -> None:
        """Empty the memo (a new hand: ``reading.HandScope``)."""
        self._memo.clear()

    def choose(self, view: View) -> Action:
        """The action for a turn or a claim (a win, a lone choice, robbing: the caller's)."""
        hand, seat, unseen = self.read(view)
        if view.phase is Phase.CLAIM:
            return self._claim(view, hand, seat, unseen)
        return self._turn(view, hand, seat, unseen)

    @staticmethod
    def read(view: View) -> tuple[SpeedHand, Seat, list[int]]:
        """The viewer's hand for speed play, its seat, and the unseen copies of each kind."""
        me, concealed = own_seat(view)
        wild = view.wild_tiles
        counts = [0] * N_KINDS
        wilds = 0
        for t in concealed:
            if t in wild or t >= N_KINDS:
                wilds += 1
            else:
                counts[t] += 1
        meld_counts = [0] * N_KINDS
        for meld in me.melds:
            for t in meld.tiles:
                meld_counts[t] += 1
        hand = SpeedHand(counts, wilds, len(me.melds), meld_counts)
        unseen = unseen_copies(view, counts)
        seat = Seat(me.melds, me.wind, view.round_wind, view.rules)
        return hand, seat, unseen

    def evaluate(self, hand: SpeedHand) -> tuple[int, tuple[int, ...]]:
        """Shanten of a 13-tile hand and its useful tiles, memoised."""
        key: _Key = (bytes(hand.counts), hand.wilds, hand.melds, bytes(hand.meld_counts))
        found = self._memo.get(key)
        if found is None:
            if len(self._memo) >= self.MEMO_SIZE:
                self._memo.clear()
            args = (hand.counts, hand.wilds, hand.melds, hand.meld_counts)
            found = self._memo[key] = (
                shanten_with_wilds(*args),
                tuple(useful_tiles_with_wilds(*args)),
            )
        return found

    def _shanten(self, hand: SpeedHand) -> int:
        return shanten_with_wilds(hand.counts, hand.wilds, hand.melds, hand.meld_counts)

    def _discard(
        self, hand: SpeedHand, tiles: Sequence[int], seat: Seat, unseen: Sequence[int]
    ) -> tuple[tuple[float, float, float], int]:
        """The best of ``tiles`` to discard from a 14-tile hand, and its key (lower is
        better: shanten, minus the unseen useful tiles, how much the hand wants it)."""
        shanten: list[tuple[int, float, int]] = []
        for t in tiles:
            after = hand.without(t)
            keep = keep_score(hand.counts, t, seat) if t < N_KINDS and hand.counts[t] else 9.0
            shanten.append((self._shanten(after), keep, t))
        shanten.sort()
        low = shanten[0][0]
        best: tuple[tuple[float, float, float], int] | None = None
        for value, keep, t in shanten[:COUNTED_DISCARDS]:
            if value > low:
                break
            _, useful = self.evaluate(hand.without(t))
            key = (float(value), -float(sum(unseen[u] for u in useful)), keep)
            if best is None or key < best[0]:
                best = (key, t)
        assert best is not None
        return best

    def _turn(self, view: View, hand: SpeedHand, seat: Seat, unseen: Sequence[int]) -> Action:
        legal = view.legal
        discards = sorted(
            {a.tile for a in legal if a.kind is ActionKind.DISCARD and a.tile is not None}
        )
        kongs = [a for a in legal if a.kind in KONGS]
        drawn = view.drawn
        if (
            not kongs
            and drawn is not None
            and drawn in discards
            and drawn < N_KINDS
            and hand.counts[drawn]
        ):
            # A drawn tile that lowers nothing goes back: the hand stays as it was.
            before = hand.without(drawn)
            if self._shanten(hand) >= self.evaluate(before)[0]:
                return discard(drawn)
        if not discards:
            return kongs[0] if kongs else legal[0]
        key, tile = self._discard(hand, discards, seat, unseen)
        for action in kongs:
            t = action.tile
            assert t is not None
            if action.kind is ActionKind.CONCEALED_KONG:
                after = hand.meld(t, 4, 4)
            else:
                after = hand.meld(t, 1, 1, new=False)  # the pung's fourth tile
            if self.evaluate(after)[0] <= key[0]:
                return action
        return discard(tile)

    def _claim(self, view: View, hand: SpeedHand, seat: Seat, unseen: Sequence[int]) -> Action:
        claim = view.claim
        assert claim is not None
        tile = claim.tile
        current = self.evaluate(hand)[0]
        best: tuple[tuple[float, float, float], Action] | None = None
        for action in view.legal:
            after = hand.claimed(action, tile)
            if after is None:
                continue
            if action.kind is ActionKind.KONG:
                if self.evaluate(after)[0] <= current:
                    return action  # no worse, and a replacement tile comes next
                continue
            tiles = [t for t in range(N_KINDS) if after.counts[t]]
            if not tiles:
                continue
            key, _ = self._discard(after, tiles, seat, unseen)
            if key[0] < current and (best is None or key < best[0]):
                best = (key, action)
        return best[1] if best is not None else PASS


copyable(SpeedHand)

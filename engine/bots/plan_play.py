"""The plan strategy: how ``DefaultBot`` plays for a hand that reaches a fan minimum (起和番).

The minimum is the rules' (``View.rules.min_fan``: 8 in MCR, and under the custom rule set's
'8 fan to win' option), never a constant; so are the fans that count (``rules.extra_fans``).

It steers by plans (``engine.bots.plans``), each with its shanten and value
(``engine.bots.plan_shanten``). On its turn the bot weighs the plans within ``SLACK`` of the
best on its 14 tiles and discards the tile that leaves the best value. A discard that leaves
the hand ready has its waits scored with ``engine.scoring.score`` under the view's rules
(the winning hand built from the seat's melds, standing tiles and the wait): a wait that
reaches the minimum on a discard counts its unseen copies, one that reaches it only
self-drawn a third of them, and a ready hand with such waits beats every plan. Ties go to
the discard that leaves the most unseen useful tiles for the best plan, then keeps more
plans close, then to lone honors, terminals and lone tiles (``reading.keep_score``). Claims
(chow, pung, kong) and kongs are taken when the hand is better after them by the same
measure, and only for a set that serves a plan the tile helps.

The plans are hands of about 8 fan. Under a lower minimum a ready hand whose waits reach
it takes over from them sooner (a plain hand of 2 fan wins at a minimum of 2); under a
higher one the bot still steers by them, and only waits that reach the minimum count.

Speed: the plans of the 13-tile hand between turns are memoised (with a wider window, so
that those of the hand plus the drawn tile follow from them exactly); when the drawn tile
helps none of the close plans, the bot gives it back without weighing every discard. Claims
are filtered the same way before anything is evaluated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from engine import shanten as _shanten
from engine.actions import KONG, PASS, Action, ActionKind
from engine.bots.parts import SHANTEN_OF, group_ids, join4, patterns_of
from engine.bots.parts import pairs as pairs_in
from engine.bots.plan_shanten import MAX_PLANS, SLACK, HandTables, PlanEval, by_value, plans_on
from engine.bots.plans import PLAIN_PLAN, fits
from engine.bots.reading import (
    KONGS,
    Seat,
    Unseen,
    claimed_set,
    discard,
    keep_score,
    own_seat,
    position,
    unseen_and_dead,
    viewer_of,
)
from engine.fans import Fan
from engine.hand import Hand, Meld, MeldKind
from engine.scoring import WinContext, score
from engine.tiles import N_KINDS
from engine.view import Phase, View

F13_CAP: Final = 8  # plans kept per 13-tile hand
USEFUL_PLANS: Final = 1  # useful tiles are counted for this many of the best plans
TIED_DISCARDS: Final = 2  # ... and for this many of the discards tied best (keep order)
SELF_DRAWN_WEIGHT: Final = 0.33  # a wait that reaches the minimum only self-drawn
INF: Final = 99.0

_ALL_UNSEEN: Final = Unseen((4,) * N_KINDS)  # as if nothing were seen: no plan is dead

_WaitFans = tuple[tuple[int, int, int], ...]  # (wait, fan on a discard, fan self-drawn)


def _wait_fans(counts: list[int], seat: Seat) -> _WaitFans:
    """Each wait of a ready 13-tile hand with its fan (flowers apart) on a discard and
    self-drawn."""
    m = len(seat.melds)
    out = []
    standing = tuple(t for t in range(N_KINDS) for _ in range(counts[t]))
    held = counts.copy()
    for meld in seat.melds:
        for t in meld.tiles:
            held[t] += 1
    for wait in _shanten.waits(counts, m):
        if held[wait] >= 4:
            continue  # the fifth copy of a tile in a meld
        scored = score(
            Hand(seat.melds, standing, wait),
            WinContext(seat_wind=seat.seat_wind, round_wind=seat.round_wind),
            seat.rules,
        )
        # Self-drawn, roughly: Self-Drawn (1), or Fully Concealed Hand (4) for Concealed
        # Hand (2). Near enough for a weight; the table decides what a real win scores.
        concealed = any(fc.fan is Fan.CONCEALED_HAND for fc in scored.fans)
        out.append((wait, scored.total, scored.total + (2 if concealed else 1)))
    return tuple(out)


# How a 13-tile hand (after the discard) is judged, lower is better: 0 when ready with waits
# that reach the minimum, else the best plan value (at least 1); then minus the weight of
# winning tiles, or of the useful tiles of the best plans; minus how many plans are that
# close; how much the hand wanted to keep the discard.
_Key = tuple[float, float, float, float]


class PlanPlay:
    """The plan strategy of ``DefaultBot`` (module docs), with its memos."""

    MEMO_SIZE: Final = 256  # recent hands: a memo serves one hand across a few decisions

    def __init__(self) -> None:
        # Memos of pure functions of their keys: they change the bot's speed, not its play.
        self._waits: dict[tuple[bytes, Seat], _WaitFans] = {}
        self._plans: dict[tuple[bytes, tuple[Meld, ...]], list[PlanEval]] = {}

    def forget(self) -> None:
        """Empty the memos (a new hand: ``reading.HandScope``)."""
        self._waits.clear()
        self._plans.clear()

    def choose(self, view: View) -> Action:
        """The action for a turn or a claim (a win, a lone choice, robbing: the caller's)."""
        me, concealed = own_seat(view)
        counts = [0] * N_KINDS
        for t in concealed:
            counts[t] += 1
        unseen = unseen_and_dead(view, counts)
        seat = Seat(me.melds, me.wind, view.round_wind, view.rules)
        if view.phase is Phase.CLAIM:
            return self._answer_claim(view, counts, seat, unseen)
        return self._play_turn(view.legal, counts, seat, unseen, view.drawn)

    def _plans13(
        self, counts: list[int], melds: tuple[Meld, ...], unseen: Unseen
    ) -> tuple[list[PlanEval], float]:
        """The plans of a 13-tile hand within ``SLACK + 1`` of the best, those that are not
        dead for this view, and the best value.

        The wider window makes the plans of the hand plus any one tile derivable from these
        (a draw lowers a plan by one at most). The scan is memoised by hand, done as if every
        tile were unseen; dead plans are dropped after.
        """
        key = (bytes(counts), melds)
        found = self._plans.get(key)
        if found is None:
            if len(self._plans) >= self.MEMO_SIZE:
                self._plans.clear()
            hand = HandTables(counts, melds, _ALL_UNSEEN)
            found = self._plans[key] = plans_on(hand, SLACK + 1, F13_CAP)
        u1, u2, u3 = unseen.unavailable  # ``PlanEval.dead``, inline: asked at every decision
        live = [
            ev
            for ev in found
            if not (ev.missing and (ev.masks[0] & u1 or ev.masks[1] & u2 or ev.masks[2] & u3))
        ]
        return live, (live[0].value if live else INF)

    # -------------------------------------------------------------- turn ---

    def _play_turn(
        self,
        legal: Sequence[Action],
        counts: list[int],
        seat: Seat,
        unseen: Unseen,
        drawn: int | None,
    ) -> Action:
        kongs = [a for a in legal if a.kind in KONGS]
        evals: list[PlanEval] | None = None
        if drawn is not None:
            before = counts.copy()
            before[drawn] -= 1
            plans, best = self._plans13(before, seat.melds, unseen)
            if plans:
                # The plans of the hand with the tile drawn follow from those without it.
                # When the tile helps none of those close to the best, giving it back keeps
                # the hand as it was, which no other discard improves on (by plan value).
                close = [ev for ev in plans if ev.value <= best + SLACK]
                if not kongs and not any(ev.gains(before, drawn) for ev in close):
                    return discard(drawn)
                evals = [ev.add(before, drawn) for ev in plans]
                best = min(ev.value for ev in evals)
                evals = sorted((ev for ev in evals if ev.value <= best + SLACK), key=by_value)
                evals = evals[:MAX_PLANS]
        discards = [t for t in range(N_KINDS) if counts[t]]  # each is legal
        key, tile = self._best_discard(counts, seat, unseen, discards, evals)
        for action in kongs:
            t = action.tile
            assert t is not None
            after = counts.copy()
            if action.kind is ActionKind.CONCEALED_KONG:
                after[t] -= 4
                melds = (*seat.melds, Meld(MeldKind.KONG, t, 0))
            else:
                after[t] -= 1
                melds = tuple(
                    Meld(MeldKind.KONG, t, m.offer)
                    if m.kind is MeldKind.PUNG and m.tile == t
                    else m
                    for m in seat.melds
                )
            # A kong that leaves the hand as good as the best discard: a free tile, more fan.
            if self.assess(after, seat.with_melds(melds), unseen)[0] <= key[0]:
                return action
        return discard(tile)

    def _best_discard(
        self,
        counts: list[int],
        seat: Seat,
        unseen: Unseen,
        discards: Sequence[int],
        evals: list[PlanEval] | None = None,
    ) -> tuple[_Key, int]:
        """The best discard of a 14-tile hand (standing tiles) and its key; ``evals``, when
        given, are its plans."""
        return min(self.discard_keys(counts, seat, unseen, discards, evals))

    def discard_keys(
        self,
        counts: list[int],
        seat: Seat,
        unseen: Unseen,
        discards: Sequence[int],
        evals: list[PlanEval] | None = None,
        *,
        every: bool = False,
    ) -> list[tuple[_Key, int]]:
        """Discards of a 14-tile hand with their keys (lower is better), the best among them.

        By default only the candidates for the best: the discards that leave the hand ready
        with waits that reach the minimum when there are any, else the ones tied best.
        ``every``: every discard of ``discards`` with its full key (the strong bot weighs
        each against its danger)."""
        m = len(seat.melds)
        if evals is None:
            hand = HandTables(counts, seat.melds, unseen)
            evals = plans_on(hand)
            patterns, ids = hand.patterns, hand.ids
        else:
            patterns = patterns_of(counts)
            ids = group_ids(patterns)
        # Which discards leave the hand ready in the regular form or as Seven Pairs (the
        # other forms are plans of their own, below).
        regular = SHANTEN_OF[join4(ids)][m]
        if regular <= 0:
            plain = PlanEval(PLAIN_PLAN, regular, patterns=patterns, ids=ids, melds=m)
            ready_after = plain.after_discards(counts)
        else:
            ready_after = [1] * N_KINDS
        if not m:
            pairs = 6 - pairs_in(counts)
            if pairs <= 0:
                for t in discards:
                    ready_after[t] = min(ready_after[t], pairs + 1 - (counts[t] & 1))
        vectors = [(ev.plan.penalty, ev.after_discards(counts)) for ev in evals]
        values: list[float] = []
        found: list[tuple[_Key, int]] = []
        for tile in discards:
            value = INF
            ready = ready_after[tile] == 0
            for penalty, after_discard in vectors:
                shanten = after_discard[tile]
                if shanten == 0:
                    ready = True
                value = min(value, shanten + penalty)
            values.append(value)
            if ready:
                # A ready hand whose waits reach the minimum beats every plan.
                after = counts.copy()
                after[tile] -= 1
                weight = self._win_weight(after, seat, unseen)
                if weight > 0:
                    found.append(((0.0, -weight, 0.0, keep_score(counts, tile, seat)), tile))
        if found and not every:
            return found
        winning = {tile for _, tile in found}
        low = min(values)
        tied = sorted(
            (keep_score(counts, tile, seat), tile)
            for tile, value in zip(discards, values, strict=True)
            if (value <= low or every) and tile not in winning
        )
        for keep, tile in tied if every else tied[:TIED_DISCARDS]:
            value = values[discards.index(tile)] if every else low
            close = [
                ev
                for ev, (penalty, after_discard) in zip(evals, vectors, strict=True)
                if after_discard[tile] + penalty <= value
            ]
            useful = 0
            if len(tied) > 1 or every:
                after = counts.copy()
                after[tile] -= 1
                useful = max(
                    (ev.discard(counts, tile).useful(after, unseen) for ev in close[:USEFUL_PLANS]),
                    default=0,
                )
            found.append(((max(value, 1.0), float(-useful), float(-len(close)), keep), tile))
        return found

    def assess(self, counts: list[int], seat: Seat, unseen: Unseen) -> _Key:
        """The key of a 13-tile hand, comparable with ``_best_discard``'s."""
        if _shanten.shanten(counts, len(seat.melds)) == 0:
            weight = self._win_weight(counts, seat, unseen)
            if weight > 0:
                return (0.0, -weight, 0.0, 0.0)
        evals, low = self._plans13(counts, seat.melds, unseen)
        if not evals:
            return (INF, 0.0, 0.0, 0.0)
        close = [ev for ev in evals if ev.value <= low]
        useful = max(ev.useful(counts, unseen) for ev in close[:USEFUL_PLANS])
        return (max(low, 1.0), float(-useful), float(-len(close)), 0.0)

    def win_fan(self, counts: list[int], seat: Seat, unseen: Unseen) -> float:
        """The fan a ready 13-tile hand wins with (flowers apart), averaged over its waits
        that reach the rules' minimum as ``_win_weight`` weighs them; 0 when none does."""
        minimum = seat.rules.min_fan
        weight = total = 0.0
        for wait, on_discard, self_drawn in self._wait_fans_of(counts, seat):
            if on_discard >= minimum:
                weight += unseen[wait]
                total += unseen[wait] * on_discard
            elif self_drawn >= minimum:
                weight += SELF_DRAWN_WEIGHT * unseen[wait]
                total += SELF_DRAWN_WEIGHT * unseen[wait] * self_drawn
        return total / weight if weight > 0 else 0.0

    def _wait_fans_of(self, counts: list[int], seat: Seat) -> _WaitFans:
        """``_wait_fans``, memoised."""
        key = (bytes(counts), seat)
        fans = self._waits.get(key)
        if fans is None:
            if len(self._waits) >= self.MEMO_SIZE:
                self._waits.clear()
            fans = self._waits[key] = _wait_fans(counts, seat)
        return fans

    def _win_weight(self, counts: list[int], seat: Seat, unseen: Unseen) -> float:
        """Unseen copies of the waits that reach the rules' minimum (起和番, 8 fan in MCR; flowers
        do not count toward it), a third of each that reaches it only self-drawn."""
        fans = self._wait_fans_of(counts, seat)
        minimum = seat.rules.min_fan
        weight = 0.0
        for wait, on_discard, self_drawn in fans:
            if on_discard >= minimum:
                weight += unseen[wait]
            elif self_drawn >= minimum:
                weight += SELF_DRAWN_WEIGHT * unseen[wait]
        return weight

    # ------------------------------------------------------------ claims ---

    def _answer_claim(self, view: View, counts: list[int], seat: Seat, unseen: Unseen) -> Action:
        claim = view.claim
        assert claim is not None
        tile = claim.tile
        # Cheap first: a claim takes a tile, which lowers a plan by one at most, so it can
        # only beat passing if the tile helps a plan at most half a tile worse than the best.
        # A kong lowers nothing, but in a hand already open it is a free tile and a fan.
        plans, low = self._plans13(counts, seat.melds, unseen)
        close = [ev for ev in plans if ev.value <= low + 0.5]
        helped = [ev for ev in close if ev.gains(counts, tile)]
        is_open = any(not m.concealed for m in seat.melds)
        if not helped and not (is_open and KONG in view.legal):
            return PASS
        baseline: _Key | None = None
        best: tuple[_Key, Action] | None = None
        offer = 4 - (position(view, claim.source) - position(view, viewer_of(view))) % 4
        for action in view.legal:
            kind = action.kind
            made = claimed_set(counts, action, tile, offer)
            if made is None:
                continue
            after, meld = made
            served = close if kind is ActionKind.KONG else helped
            if not any(fits(ev.plan, meld, seat.melds) for ev in served):
                continue  # the set would serve no plan the tile helps (a kong: no close one)
            if baseline is None:
                baseline = self.assess(counts, seat, unseen)
            claimed = seat.with_melds((*seat.melds, meld))
            if kind is ActionKind.KONG:
                key = self.assess(after, claimed, unseen)  # a replacement tile comes next
                if key[0] > baseline[0] or (key[0] == baseline[0] and not is_open):
                    continue
            else:
                discards = [t for t in range(N_KINDS) if after[t]]
                key, _ = self._best_discard(after, claimed, unseen, discards)
                if key[0] >= baseline[0]:
                    continue
            if best is None or key < best[0]:
                best = (key, action)
        return best[1] if best is not None else PASS

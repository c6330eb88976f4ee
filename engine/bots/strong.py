"""``StrongBot``: the bot that weighs its hand against the danger of each discard.

It plays for the same hands as ``normal`` (``DefaultBot``: plans for the fan minimum, or
speed under wild tiles or no minimum) and values every legal action in expected points for
the hand (``weigh``):

- a discard is worth its chance to win later (from how far the hand is from a win that
  reaches the minimum after it, how many useful tiles are left unseen, how many draws the
  wall still holds) times what a win brings (a ready hand's by the fan its waits score,
  ``win_value``; a farther one's ``WIN_GAIN``), less the chance it feeds an opponent's win
  (``engine.bots.danger``) times what dealing in costs: MCR's discarder pays the winner's
  fan on top of the base every player pays. Under a fan minimum, danger counts only once
  some opponent is more likely ready than not (``DEFEND_AT``): before that, the risks are
  small and read far too roughly to be worth the hand's own plans;
- a kong is worth the hand after it, plus a free draw;
- passing a claim is worth the hand as it is; a claim the best discard after it, less
  ``CLAIM_COST``; a hand not yet ready is worth more while it is concealed (its win will
  score the concealed hand's fans), so the first claim must win that back in speed.

So it pushes with a hand close to winning and folds a far one when an opponent is likely
ready, giving up the tiles that opponent let pass, tiles nobody can wait on, and tiles of
suits its sets do not want; among discards of equal use under that pressure it gives up
the safer; and of two ready hands it keeps the one whose waits are worth more (fan times
copies left).

Pure: the same view always gets the same action (its memos are ``PlanPlay``'s and
``SpeedPlay``'s, of functions of their keys); ``seed`` is unused: it needs no randomness.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from engine.actions import PASS, Action, ActionKind
from engine.bots.danger import Danger, read_danger
from engine.bots.plan_play import PlanPlay
from engine.bots.reading import (
    KONGS,
    HandScope,
    Seat,
    claimed_set,
    keep_score,
    own_seat,
    position,
    unseen_and_dead,
)
from engine.bots.speed_play import SpeedHand, SpeedPlay
from engine.errors import MahjongError
from engine.hand import Meld, MeldKind
from engine.tiles import N_KINDS
from engine.view import Phase, View

WIN_GAIN: Final = 40.0  # points a win of a hand not yet ready brings, roughly (``win_value``)
DEAL_IN_COST: Final = 24.0  # points dealing in costs, roughly (the winner's fan and the base)
ONE_AWAY: Final = 0.36  # chance to win from one tile short of ready, early in a hand
PER_STEP: Final = 0.45  # ... and how much each tile further away multiplies it
KONG_BONUS: Final = 1.0  # a kong's free draw and its fan
CONCEALED_GAIN: Final = 6.0  # what a hand with no claimed set adds to a win (the concealed
# hand's fans: Concealed Hand on a discard, Fully Concealed self-drawn; duel: +0.7/hand)
CLAIM_COST: Final = 1.5  # a claim shows the hand and leaves fewer tiles to fold with (+0.3)
# Under a fan minimum, the chance that some opponent is ready (``Danger.pressure``) from
# which danger counts at all. Below it, danger's small numbers only tipped the choice between
# discards of about equal use against what the hand's plans wanted: with danger read all
# hand long strong beat normal by 2.7-2.9 points a hand, from 0.5 on by 3.2-3.8 (duel, three
# seeds of 8,000 hands; 0.3 and 0.7 did less well). Under wild tiles or no minimum danger
# counts all hand long (there, the same threshold measured no better: docs/bots.md).
DEFEND_AT: Final = 0.5
NO_DANGER: Final = Danger(())
SELF_DRAWN_SHARE: Final = 0.27  # the share of wins that are self-drawn (duel, strong)


def win_value(fan: float) -> float:
    """What a win of ``fan`` brings: fan + 8 from the discarder and 8 from each other on a
    discard, 3 x (fan + 8) self-drawn, mixed by how often wins are self-drawn."""
    return fan + 24.0 + SELF_DRAWN_SHARE * 2.0 * fan


_Key = tuple[float, float, float, float]


def win_chance(key: Sequence[float], draws: float, unseen_total: int) -> float:
    """The chance to win from a 13-tile hand of ``PlanPlay``'s key (lower is better: 0 when
    ready with waits that reach the minimum, with minus their weight; else how far, with
    minus its useful tiles) with ``draws`` draws left. Decreasing in the key, read
    lexicographically, so that with no danger and wins of one value the bot plays as the
    key says."""
    distance, weight = key[0], -key[1]
    timely = min(1.0, draws / (4.0 * distance + 3.0))
    if distance <= 0:
        per_draw = min(0.9, weight / max(unseen_total, 1))
        chance: float = 1.0 - (1.0 - per_draw) ** (1.6 * draws + 1.0)
        return max(chance, ONE_AWAY * 1.01 * timely)
    far: float = ONE_AWAY * PER_STEP ** (distance - 1.0)
    return far * (0.5 + 0.5 * min(weight, 40.0) / 40.0) * timely


def _tiebreak(key: Sequence[float]) -> float:
    """The rest of a key (plans kept close, how much the hand wanted the tile), tiny."""
    return -1e-4 * key[2] - 1e-5 * key[3]


class StrongBot:
    """Plays as ``normal`` plays for its hand, and weighs each discard's danger (module)."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed  # unused: the bot needs no randomness
        self._plans = PlanPlay()
        self._speed = SpeedPlay()
        self._scope = HandScope(self._plans, self._speed)

    def choose(self, view: View) -> Action:
        return self.weigh(view)[0][0]

    def weigh(self, view: View) -> list[tuple[Action, float]]:
        """Every legal action with its value in expected points for the hand, best first."""
        self._scope.see(view)
        legal = view.legal
        if not legal:
            raise MahjongError("the bot has nothing to choose from: view.legal is empty")
        for action in legal:
            if action.kind is ActionKind.WIN:
                return [(action, WIN_GAIN)] + [(a, 0.0) for a in legal if a != action]
        if len(legal) == 1:
            return [(legal[0], 0.0)]
        if view.phase is Phase.ROB:
            return [(PASS, 0.0)] + [(a, 0.0) for a in legal if a != PASS]
        rules = view.rules
        if rules.has_wilds or rules.min_fan <= 0:
            valued = _SpeedWeigher(self._speed, view).weigh()
        else:
            valued = _PlanWeigher(self._plans, view).weigh()
        order = {a: i for i, a in enumerate(legal)}
        valued.sort(key=lambda av: (-av[1], order[av[0]]))
        return valued


class _Weigher:
    """What both strategies' weighing shares: the danger, the wall, the value of a discard."""

    def __init__(self, view: View, unseen: Sequence[int], defend_at: float = 0.0) -> None:
        self.view = view
        danger = read_danger(view, unseen)
        self.danger: Danger = danger if danger.pressure >= defend_at else NO_DANGER
        self.draws = view.wall_remaining / 4.0
        self.unseen_total = sum(unseen)

    def worth(self, key: Sequence[float], tile: int | None, value: float = WIN_GAIN) -> float:
        """Expected points of a 13-tile hand of ``key`` left by discarding ``tile``, a win
        bringing ``value``."""
        gain = win_chance(key, self.draws, self.unseen_total) * value + _tiebreak(key)
        if tile is None:
            return gain
        risk = self.danger.of(tile)
        return (1.0 - risk) * gain - risk * DEAL_IN_COST


class _PlanWeigher(_Weigher):
    """Weighing under a fan minimum, by ``PlanPlay``'s keys."""

    def __init__(self, plans: PlanPlay, view: View) -> None:
        me, concealed = own_seat(view)
        counts = [0] * N_KINDS
        for t in concealed:
            counts[t] += 1
        self.plans = plans
        self.counts = counts
        self.unseen = unseen_and_dead(view, counts)
        self.seat = Seat(me.melds, me.wind, view.round_wind, view.rules)
        super().__init__(view, self.unseen, DEFEND_AT)

    def _discards(self, counts: list[int], seat: Seat, legal: set[int]) -> list[tuple[float, int]]:
        tiles = [t for t in range(N_KINDS) if counts[t] and t in legal]
        keys = self.plans.discard_keys(counts, seat, self.unseen, tiles, every=True)
        out = []
        for key, tile in keys:
            after = counts.copy()
            after[tile] -= 1
            out.append((self.worth(key, tile, self._value(after, seat, key)), tile))
        return out

    def _value(self, counts: list[int], seat: Seat, key: Sequence[float]) -> float:
        """What a win of the 13-tile hand ``counts`` of ``key`` brings: by the fan of its
        waits when it is ready (``win_value``), else ``WIN_GAIN``, more while no set is
        claimed (``CONCEALED_GAIN``)."""
        if key[0] > 0:
            concealed = all(not m.offer for m in seat.melds)
            return WIN_GAIN + (CONCEALED_GAIN if concealed else 0.0)
        return win_value(self.plans.win_fan(counts, seat, self.unseen))

    def weigh(self) -> list[tuple[Action, float]]:
        view = self.view
        if view.phase is Phase.CLAIM:
            return self._claims()
        legal = {a.tile for a in view.legal if a.kind is ActionKind.DISCARD and a.tile is not None}
        out: list[tuple[Action, float]] = []
        by_tile = {a.tile: a for a in view.legal if a.kind is ActionKind.DISCARD}
        for value, tile in self._discards(self.counts, self.seat, legal):
            out.append((by_tile[tile], value))
        for action in view.legal:
            if action.kind in KONGS:
                out.append((action, self._kong(action)))
        return out

    def _kong(self, action: Action) -> float:
        t = action.tile
        assert t is not None
        after = self.counts.copy()
        melds = self.seat.melds
        if action.kind is ActionKind.CONCEALED_KONG:
            after[t] -= 4
            melds = (*melds, Meld(MeldKind.KONG, t, 0))
        else:
            after[t] -= 1
            melds = tuple(
                Meld(MeldKind.KONG, t, m.offer) if m.kind is MeldKind.PUNG and m.tile == t else m
                for m in melds
            )
        seat = self.seat.with_melds(melds)
        key = self.plans.assess(after, seat, self.unseen)
        return self.worth(key, None, self._value(after, seat, key)) + KONG_BONUS

    def _claims(self) -> list[tuple[Action, float]]:
        view = self.view
        claim = view.claim
        assert claim is not None
        tile = claim.tile
        out: list[tuple[Action, float]] = []
        offer = 4 - (position(view, claim.source) - position(view, self.viewer())) % 4
        everything = set(range(N_KINDS))
        for action in view.legal:
            kind = action.kind
            if kind is ActionKind.PASS:
                key = self.plans.assess(self.counts, self.seat, self.unseen)
                value = self._value(self.counts, self.seat, key)
                out.append((action, self.worth(key, None, value)))
                continue
            made = claimed_set(self.counts, action, tile, offer)
            if made is None:
                out.append((action, 0.0))
                continue
            after, meld = made
            seat = self.seat.with_melds((*self.seat.melds, meld))
            if kind is ActionKind.KONG:
                key = self.plans.assess(after, seat, self.unseen)
                value = self._value(after, seat, key)
                out.append((action, self.worth(key, None, value) + KONG_BONUS))
                continue
            options = self._discards(after, seat, everything)
            best = max(value for value, _ in options) - CLAIM_COST if options else 0.0
            out.append((action, best))
        return out

    def viewer(self) -> int:
        viewer = self.view.viewer
        assert viewer is not None
        return viewer


class _SpeedWeigher(_Weigher):
    """Weighing under wild tiles or no minimum, by shanten and useful tiles (``SpeedPlay``)."""

    def __init__(self, speed: SpeedPlay, view: View) -> None:
        self.speed = speed
        self.hand, self.seat, unseen = speed.read(view)
        self.unseen = unseen
        super().__init__(view, unseen)

    def _key(self, hand: SpeedHand, counts: Sequence[int], tile: int) -> _Key:
        shanten, useful = self.speed.evaluate(hand)
        keep = keep_score(counts, tile, self.seat) if tile < N_KINDS and counts[tile] else 9.0
        return (float(shanten), -float(sum(self.unseen[u] for u in useful)), 0.0, keep)

    def _discards(self, hand: SpeedHand, tiles: Sequence[int]) -> list[tuple[float, int]]:
        return [(self.worth(self._key(hand.without(t), hand.counts, t), t), t) for t in tiles]

    def weigh(self) -> list[tuple[Action, float]]:
        view = self.view
        hand = self.hand
        out: list[tuple[Action, float]] = []
        if view.phase is Phase.CLAIM:
            claim = view.claim
            assert claim is not None
            tile = claim.tile
            for action in view.legal:
                kind = action.kind
                after = hand.claimed(action, tile)
                if kind is ActionKind.PASS:
                    out.append((action, self.worth(self._key(hand, [], N_KINDS), None)))
                    continue
                if after is None:
                    out.append((action, 0.0))
                    continue
                if kind is ActionKind.KONG:
                    out.append(
                        (action, self.worth(self._key(after, [], N_KINDS), None) + KONG_BONUS)
                    )
                    continue
                tiles = [t for t in range(N_KINDS) if after.counts[t]]
                options = self._discards(after, tiles)
                out.append((action, max(v for v, _ in options) if options else 0.0))
            return out
        by_tile = {a.tile: a for a in view.legal if a.kind is ActionKind.DISCARD}
        tiles = sorted(t for t in by_tile if t is not None)
        for value, tile in self._discards(hand, tiles):
            out.append((by_tile[tile], value))
        for action in view.legal:
            if action.kind in KONGS:
                t = action.tile
                assert t is not None
                if action.kind is ActionKind.CONCEALED_KONG:
                    after = hand.meld(t, 4, 4)
                else:
                    after = hand.meld(t, 1, 1, new=False)
                out.append((action, self.worth(self._key(after, [], N_KINDS), None) + KONG_BONUS))
        return out

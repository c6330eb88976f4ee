"""Helpers for the table engine's tests: stacked walls, snapshots, invariants and a test bot.

Stacking a hand::

    hand = tablekit.deal(
        hands={0: "123456789m234p55s", 1: "...", 2: "...", 3: "..."},
        draws=["5m", "E"],  # the next head draws after the deal, in order
        tail=["f1", "7p"],  # replacement draws (flowers, kongs) after those of the deal
    )

``hands`` are the tiles each player is dealt (13, the dealer 14: its last tile is the 14th),
flowers written ``f1``..``f8`` (``engine.tiles.FIRST_FLOWER`` + 0..7). The deal takes 4, 4, 4
tiles for each player in turn starting with the dealer, then 1 each, then the dealer's 14th,
all from the head; flowers are then replaced from the tail (the dealer first), then normal
draws continue from the head. ``last`` puts tiles at the very end of the head (the last
tiles of the wall when nothing else comes from the tail); the other tiles fill the middle
in tile order.

Rule sets with an indicator (``engine.rules.Wilds``) turn up the next head tile after the
deal: ``indicator`` puts it (and any flowers turned up before it) there, before ``draws``.
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from engine import matchlog, simulation
from engine.actions import PASS, WIN, Action, ActionKind, Event
from engine.bots import Bot, make_bot
from engine.forms import is_winning
from engine.hand import Hand, Meld, MeldKind
from engine.match import MATCH_HANDS, Match
from engine.notation import parse_tiles
from engine.rules import MCR, RuleSet
from engine.scoring import WinContext, score
from engine.shanten import shanten
from engine.table import HandResult, HandState, Phase, View, is_plain_mcr
from engine.tiles import EAST, FIRST_FLOWER, N_KINDS, Tile, Wind, counts_of, tiles_of
from engine.wall import Wall, full_set

_FLOWER = re.compile(r"f([1-8])")

Tiles = str | Iterable[Tile | str]


def tiles(text: Tiles) -> list[Tile]:
    """``"123m f1 EE"`` (or ``["1m", "f1", 27]``) -> tile ints, flowers ``f1``..``f8`` included."""
    out: list[Tile] = []
    if not isinstance(text, str):
        for item in text:
            out.extend(tiles(item) if isinstance(item, str) else [item])
        return out
    at = 0
    for m in _FLOWER.finditer(text):
        out.extend(parse_tiles(text[at : m.start()]))
        out.append(FIRST_FLOWER + int(m.group(1)) - 1)
        at = m.end()
    out.extend(parse_tiles(text[at:]))
    return out


def tile(text: str) -> Tile:
    (one,) = tiles(text)
    return one


def act(kind: str, text: str | None = None) -> Action:
    """``act("discard", "5m")``, ``act("chow", "3m")`` (the chow's lowest tile), ``act("win")``."""
    return Action(ActionKind(kind), None if text is None else tile(text))


def discard(text: str) -> Action:
    return act("discard", text)


def dealt_order(hands: Mapping[int, Sequence[Tile]], dealer: int) -> list[Tile]:
    """The head of the wall that deals ``hands`` (players 0..3 at positions 0..3)."""
    order = [(dealer + k) % 4 for k in range(4)]
    for p in order:
        want = 14 if p == dealer else 13
        if len(hands[p]) != want:
            raise ValueError(f"player {p} must be dealt {want} tiles, got {len(hands[p])}")
    head: list[Tile] = []
    for chunk in range(3):
        for p in order:
            head.extend(hands[p][4 * chunk : 4 * chunk + 4])
    for p in order:
        head.append(hands[p][12])
    head.append(hands[dealer][13])
    return head


def stacked_wall(
    hands: Mapping[int, Tiles],
    *,
    draws: Tiles = (),
    tail: Tiles = (),
    last: Tiles = (),
    dealer: int = 0,
    indicator: Tiles = (),
) -> Wall:
    """A wall dealing ``hands``, turning up ``indicator``, then drawing ``draws``;
    replacements come from ``tail``."""
    dealt = {p: tiles(h) for p, h in hands.items()}
    head = dealt_order(dealt, dealer) + tiles(indicator) + tiles(draws)
    back = tiles(last)
    tail_tiles = tiles(tail)
    rest = Counter(full_set())
    rest.subtract(Counter(head + back + tail_tiles))
    if any(n < 0 for n in rest.values()):
        over = sorted(t for t, n in rest.items() if n < 0)
        raise ValueError(f"more than 4 (or 1 flower) of {over}")
    filler = sorted(rest.elements())
    return Wall.arranged(head + filler + back, tail_tiles)


def deal(
    hands: Mapping[int, Tiles],
    *,
    draws: Tiles = (),
    tail: Tiles = (),
    last: Tiles = (),
    dealer: int = 0,
    round_wind: Wind = Wind.EAST,
    rules: RuleSet = MCR,
    indicator: Tiles = (),
) -> HandState:
    """A started hand on a stacked wall: players 0..3 at positions E S W N, ``dealer`` deals."""
    wall = stacked_wall(
        hands, draws=draws, tail=tail, last=last, dealer=dealer, indicator=indicator
    )
    state = HandState(wall, (0, 1, 2, 3), dealer, round_wind, rules)
    state.start()
    return state


def concealed(state: HandState, player: int) -> list[Tile]:
    return tiles_of(state.concealed[player])


# ------------------------------------------------------------ snapshots ---


def attributes(obj: object) -> dict[str, Any]:
    """``obj``'s attributes by name: ``vars(obj)``, or, for an instance of a class compiled by
    mypyc (which has no ``__dict__``), the attributes its class declares."""
    names = getattr(type(obj), "__mypyc_attrs__", None)
    if names is None:
        return dict(vars(obj))
    return {name: getattr(obj, name) for name in names}


def snapshot(state: HandState) -> dict[str, Any]:
    """A deep copy of every attribute of the hand, the wall's included (for before/after)."""
    out = copy.deepcopy({k: v for k, v in attributes(state).items() if k not in ("wall", "events")})
    out["events"] = tuple(state.events)  # events are frozen and never edited once made
    wall = state.wall
    out["wall"] = (
        list(wall.tiles),
        bytes(wall.taken),
        wall.head,
        wall.tail,
        wall.remaining,
        wall.dice,
        wall.break_stack,
    )
    return out


# ----------------------------------------------------------- invariants ---


def tiles_everywhere(state: HandState) -> Counter[Tile]:
    """Every tile of the hand: wall, concealed hands, melds, unclaimed discards, flowers,
    the indicator and the flowers turned up before it."""
    found: Counter[Tile] = Counter(state.wall.peek_order())
    if state.indicator is not None:
        found[state.indicator] += 1
    found.update(state.dead_flowers)
    for p in state.player_at:
        found.update(tiles_of(state.concealed[p]))
        found.update(state.held[p])
        for meld in state.melds[p]:
            found.update(meld.tiles)
        found.update(t for t, claimed in state.river[p] if not claimed)
        found.update(state.flowers[p])
    result = state.result
    if result is not None and _robbed(result):
        assert result.win_tile is not None
        found[result.win_tile] += 1  # the robbed tile: the winner's, in nobody's hand
    return found


def _robbed(result: HandResult) -> bool:
    """Whether ``result`` is a win robbing a kong (抢杠和)."""
    ctx = result.context
    return ctx is not None and ctx.kong and not ctx.self_drawn


def check_conservation(state: HandState) -> None:
    """The 144 tiles are all somewhere, each exactly once; hand sizes are right."""
    found = tiles_everywhere(state)
    assert found == Counter(full_set()), (found - Counter(full_set()), Counter(full_set()) - found)
    assert state.wall.remaining == len(state.wall.peek_order())
    for p in state.player_at:
        assert all(0 <= n <= 4 for n in state.concealed[p])
        size = sum(state.concealed[p]) + len(state.held[p]) + 3 * len(state.melds[p])
        # (While robbers answer an added kong, its owner holds 13: the added tile is in the
        # kong, whose replacement is not drawn yet.)
        moving = p == state.current and state.phase in (Phase.TURN, Phase.CLAIMED)
        if state.phase is Phase.OVER:
            # 13 tiles (melds counted as 3); a self-drawn winner holds its winning tile too,
            # which on a discard or a robbed kong is counted once, where it came from.
            result = state.result
            assert result is not None
            won = p == result.winner and result.context is not None and result.context.self_drawn
            assert size == (14 if won else 13), (p, size, result.result, result.winner)
        else:
            assert size == (14 if moving else 13), (p, size, state.phase)


def check_legal(state: HandState) -> None:
    """The legal actions are exactly what the rules allow, a win exactly when worth 8 fan.

    The win is decided here from the table (visible copies, the last draw's source, the wall)
    and ``engine.scoring``, apart from the table's own bookkeeping.
    """
    legal = {p: state.legal_actions(p) for p in state.player_at}
    if state.phase is Phase.OVER:
        assert all(not actions for actions in legal.values())
        return
    more = state.wall.remaining > 0
    if state.phase in (Phase.TURN, Phase.CLAIMED):
        p = state.current
        assert all(not legal[q] for q in state.player_at if q != p)
        counts = state.concealed[p]
        expected = []
        if state.phase is Phase.TURN:
            if state.drawn is not None and _wins(state, p, state.drawn, "self"):
                expected.append(WIN)
            if more:
                expected += [
                    Action(ActionKind.CONCEALED_KONG, t) for t in range(N_KINDS) if counts[t] == 4
                ]
                expected += [
                    Action(ActionKind.ADD_KONG, m.tile)
                    for m in state.melds[p]
                    if m.kind is MeldKind.PUNG and counts[m.tile]
                ]
        expected += [Action(ActionKind.DISCARD, t) for t in range(N_KINDS) if counts[t]]
        assert legal[p] == expected, (p, legal[p], expected)
        return
    pending = state.pending
    assert pending is not None
    source, t = pending.source, pending.tile
    assert not legal[source]
    order = [state.player_at[(state.player_at.index(source) + k) % 4] for k in (1, 2, 3)]
    for p in order:
        if p in pending.answers:
            assert not legal[p]
            continue
        counts = state.concealed[p]
        expected = []
        if state.phase is Phase.ROB:
            if _wins(state, p, t, "rob"):
                expected.append(WIN)
        else:
            if _wins(state, p, t, "discard"):
                expected.append(WIN)
            if more:
                if counts[t] >= 3:
                    expected.append(Action(ActionKind.KONG))
                if counts[t] >= 2:
                    expected.append(Action(ActionKind.PUNG))
                if p == order[0] and t < EAST:
                    for low in range(t - 2, t + 1):
                        run = (low, low + 1, low + 2)
                        same_suit = low >= 0 and low // 9 == t // 9 == (low + 2) // 9
                        if same_suit and all(counts[x] for x in run if x != t):
                            expected.append(Action(ActionKind.CHOW, low))
        if expected:
            expected.append(PASS)
        assert legal[p] == expected, (p, legal[p], expected)


def _wins(state: HandState, player: int, tile: Tile, how: str) -> bool:
    """Whether ``player`` completes a hand of 8 fan or more with ``tile`` (self, discard, rob)."""
    counts = list(state.concealed[player])
    if how != "self":
        counts[tile] += 1
    melds = state.melds[player]
    if not is_winning(counts, len(melds)):
        return False
    counts[tile] -= 1
    seen = sum(
        sum(1 for t, claimed in state.river[p] if t == tile and not claimed)
        + sum(m.tiles.count(tile) for m in state.melds[p] if not m.concealed)
        for p in state.player_at
    )
    if how == "discard":
        seen -= 1  # the discard itself
    own_draws = [e for e in state.events if e.kind == "draw" and e.to == player]
    last_source = own_draws[-1].data["source"] if own_draws else None  # "wall", "kong", "flower"
    ctx = WinContext(
        self_drawn=how == "self",
        last_of_kind=seen == 3,
        kong=how == "rob" or (how == "self" and last_source == "kong"),
        wall_last=how != "rob" and state.wall.remaining == 0,
        seat_wind=Wind((state.player_at.index(player) - state.dealer_position) % 4),
        round_wind=state.round_wind,
        flowers=len(state.flowers[player]),
    )
    hand = Hand(tuple(melds), tuple(tiles_of(counts)), tile)
    return score(hand, ctx, state.rules).meets_minimum


def check_payments(state: HandState) -> None:
    """Deltas sum to zero and follow the 8-point base payments of the rules."""
    result = state.result
    assert result is not None
    assert sum(result.deltas) == 0
    if result.result == "draw":
        assert result.deltas == (0, 0, 0, 0)
        return
    assert result.score is not None and result.winner is not None
    fan = result.score.total
    base = state.rules.base_points
    for p in state.player_at:
        if p == result.winner:
            continue
        pays = base + fan if result.discarder in (None, p) else base
        if state.rules.dealer_doubles and state.dealer in (p, result.winner):
            pays *= 2
        assert result.deltas[p] == -pays
    assert result.score.meets_minimum


def check_views(state: HandState, events: Sequence[Event] = ()) -> None:
    """No view or visible event tells a seat anything it may not know."""
    over = state.phase is Phase.OVER
    for viewer in (*state.player_at, None):
        view = state.view(viewer)
        data = view.to_dict()
        assert set(data) <= (VIEW_KEYS if is_plain_mcr(state.rules) else CUSTOM_VIEW_KEYS)
        for seat in data["seats"]:
            mine = seat["player"] == viewer
            if not over and not mine:
                assert "concealed" not in seat, (viewer, seat)
                # a concealed kong is written without an offer digit: never shown to others
                assert all("," in m or m == "[????]" for m in seat["melds"]), seat
        for event in events:
            if not event.visible_to(viewer):
                continue
            if event.to is not None:
                assert event.to == viewer
            player = event.data.get("player")
            if player != viewer and event.kind in ("deal", "draw", "concealed_kong"):
                assert "tile" not in event.data and "tiles" not in event.data, (viewer, event)
        if not over:
            assert blind_view(state, viewer) == view


# What a view may hold: nothing of the wall but its size and the dice (no seed, no order).
VIEW_KEYS = frozenset(
    {"phase", "round_wind", "dealer", "dice", "wall_remaining", "current", "seats"}
    | {"drawn", "claim", "you", "legal"}
)
# Other rule sets add their options and the public wild-tile facts.
CUSTOM_VIEW_KEYS = VIEW_KEYS | {"rules", "indicator", "dead_flowers", "wild_tiles"}


def blind_view(state: HandState, viewer: int | None) -> View:
    """The viewer's view of a copy of the hand changed where the viewer cannot see.

    In the copy the undrawn wall is reversed, the other players' concealed tiles are replaced
    by as many other tiles, and their face-down kongs turned into kongs of another tile: a
    view that leaks nothing is the same as the real one.
    """
    other = copy.copy(state)  # shallow: only what is replaced below differs
    other.wall = copy.copy(state.wall)
    other.wall.tiles = list(state.wall.tiles)
    undrawn = [i for i in range(len(other.wall.tiles)) if not other.wall.taken[i]]
    for i, t in zip(undrawn, [state.wall.tiles[i] for i in reversed(undrawn)], strict=True):
        other.wall.tiles[i] = t
    other.concealed = dict(state.concealed)
    other.melds = dict(state.melds)
    other.held = dict(state.held)
    for p in other.player_at:
        if p == viewer:
            continue
        size = sum(state.concealed[p])
        other.concealed[p] = counts_of([(t * 7 + 3) % N_KINDS for t in range(size)])
        other.held[p] = [FIRST_FLOWER + 7 - (f - FIRST_FLOWER) for f in state.held[p]]
        other.melds[p] = [
            Meld(m.kind, (m.tile + 1) % N_KINDS, 0) if m.concealed else m for m in state.melds[p]
        ]
    return other.view(viewer)


# ------------------------------------------------------------------ bot ---


class RandomBot:
    """Plays a random legal action, but always wins, and mostly discards toward a ready hand.

    With ``decline`` > 0 it turns down that share of its wins, to reach the paths after a
    declined win. Seeded per test; it reads only its own view. (Stands in for ``engine.bots``.)
    """

    def __init__(self, seed: int, decline: float = 0.0) -> None:
        self.rng = random.Random(seed)
        self.decline = decline

    def choose(self, state: HandState, player: int) -> Action:
        legal = state.legal_actions(player)
        if WIN in legal and not (self.decline and self.rng.random() < self.decline):
            return WIN
        legal = [a for a in legal if a != WIN]
        discards = [a for a in legal if a.kind is ActionKind.DISCARD]
        others = [a for a in legal if a.kind is not ActionKind.DISCARD]
        if others and (not discards or self.rng.random() < 0.5):
            return self.rng.choice(others)
        if self.rng.random() < 0.2:
            return self.rng.choice(discards)
        seat = state.view(player).seat(player)
        assert seat.concealed is not None
        counts = counts_of(seat.concealed)
        melds = len(seat.melds) + seat.hidden_kongs
        best: tuple[int, Action] | None = None
        for action in discards:
            assert action.tile is not None
            counts[action.tile] -= 1
            value = shanten(counts, melds)
            counts[action.tile] += 1
            if best is None or value < best[0]:
                best = (value, action)
        assert best is not None
        return best[1]


Hook = Callable[[Match, int, Action, list[Event]], None]


def play_match(
    seed: int,
    bot_seed: int | None = None,
    after: Hook | None = None,
    decline: float = 0.0,
    rules: RuleSet = MCR,
) -> Match:
    """Play a whole match with four ``RandomBot`` players; ``after`` runs after every action."""
    base = bot_seed if bot_seed is not None else seed
    bots = [RandomBot(base * 4 + p, decline) for p in range(4)]
    match = Match(seed, rules)
    while not match.over:
        match.start_hand()
        hand = match.hand
        assert hand is not None
        while hand.phase is not Phase.OVER:
            player = hand.awaiting()[0]
            action = bots[player].choose(hand, player)
            events = match.apply(player, action)
            if after is not None:
                after(match, player, action, events)
    return match


def play_bots(
    names: Sequence[str],
    seed: int,
    rules: RuleSet = MCR,
    check: Callable[[View, Action], None] | None = None,
) -> tuple[Match, list[tuple[View, Action]]]:
    """A whole match between engine bots ``names`` (by player, seeded ``seed * 4 + p``),
    through ``engine.simulation.play_match``; every choice is checked legal (and by
    ``check``) and returned with the view it was made on."""
    seen: list[tuple[View, Action]] = []

    class Checked:
        def __init__(self, bot: Bot) -> None:
            self.bot = bot

        def choose(self, view: View) -> Action:
            action = self.bot.choose(view)
            assert action in view.legal, (view.phase, action, view.legal)
            if check is not None:
                check(view, action)
            seen.append((view, action))
            return action

    bots = [Checked(make_bot(name, seed * 4 + p)) for p, name in enumerate(names)]
    return simulation.play_match(seed, bots, rules), seen


class RecordingMatch(Match):
    """A match that keeps every hand's events (``Match`` keeps only the current hand)."""

    def __init__(
        self, seed: int, rules: RuleSet = MCR, match_id: int = 0, *, hands: int = MATCH_HANDS
    ) -> None:
        super().__init__(seed, rules, match_id, hands=hands)
        self.hand_events: list[list[Event]] = []

    def start_hand(self) -> list[Event]:
        events = super().start_hand()
        assert self.hand is not None
        self.hand_events.append(self.hand.events)  # the hand's list, complete once it ends
        return events


def log_text(match: Match) -> list[str]:
    """``match``'s match log (``engine.matchlog``) as the JSON lines of a log file."""
    return [json.dumps(line, ensure_ascii=False) for line in matchlog.log_lines(match)]


def replay(match: Match) -> RecordingMatch:
    """``match`` rebuilt through its own log: written, read back and ``Match.replay``-ed
    from the seed, every hand's result line checked."""

    def no_preset(name: str) -> RuleSet:
        raise AssertionError(f"the log names its rule options, not only a preset ({name!r})")

    (logged,) = matchlog.read_log(log_text(match), no_preset)
    assert (logged.seed, logged.rules, logged.match, logged.hands) == (
        match.seed,
        match.rules,
        match.match_id,
        match.hands,
    )
    return RecordingMatch.replay(
        logged.seed,
        logged.rules,
        logged.actions,
        logged.match,
        results=logged.results,
        hands=logged.hands,
    )


def drive(
    state: HandState,
    stop: Callable[[HandState], bool],
    limit: int = 1000,
) -> None:
    """Play on, passing every claim and discarding the drawn tile, until ``stop(state)``."""
    for _ in range(limit):
        if stop(state) or state.phase is Phase.OVER:
            return
        player = state.awaiting()[0]
        legal = state.legal_actions(player)
        if PASS in legal:
            state.apply(player, PASS)
        elif state.drawn is not None and Action(ActionKind.DISCARD, state.drawn) in legal:
            state.apply(player, Action(ActionKind.DISCARD, state.drawn))
        else:
            state.apply(player, next(a for a in legal if a.kind is ActionKind.DISCARD))
    raise AssertionError("drive: the stop condition was never met")


def discard_only_from_hand_2(
    hand_no: int, discarded: int, legal: Sequence[Mapping[str, Any]]
) -> bool:
    """A seat's moment to be left by its player mid-hand: hand ``hand_no`` 2 or later, with
    ``discarded`` (its discards in this hand) two or more, and a discard all it may do
    (``legal``, the wire's actions), so that the server's move for it is a discard in this
    hand, not a win or a kong. From hand 2 on, not in hand 2 only: about one seed in a
    thousand ends hand 2 before the seat's third turn."""
    return (
        hand_no >= 2
        and discarded >= 2
        and bool(legal)
        and all(a["type"] == "discard" for a in legal)
    )

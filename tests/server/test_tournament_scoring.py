"""A tournament's scoring (server.tournaments.scoring), without a server: table points
against a brute-force definition (the mean over every way of breaking the ties), standings
against a literal re-computation, the correction log (undo, undo of an undo, order), the
audit, duplicate results against a pairwise re-computation, and the exports read back."""

from __future__ import annotations

import csv
import doctest
import io
import itertools
import json
import re
from collections import defaultdict
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.tournaments import scoring
from server.tournaments.scoring import (
    Correction,
    DealResult,
    SessionResult,
    Standing,
    Substitute,
    TableResult,
    Undo,
    audit,
    duplicate_results,
    export_csv,
    export_json,
    imp,
    in_force,
    standings,
    table_points,
)

F = Fraction


def brute_table_points(scores: list[int]) -> list[Fraction]:
    """Points as the mean over every order of the four consistent with the scores (each
    way of breaking the ties) of 4-2-1-0 by position in that order."""
    totals = [F(0)] * 4
    orders = [
        order
        for order in itertools.permutations(range(4))
        if all(scores[order[i]] >= scores[order[i + 1]] for i in range(3))
    ]
    for order in orders:
        for position, seat in enumerate(order):
            totals[seat] += (4, 2, 1, 0)[position]
    return [t / len(orders) for t in totals]


def test_the_docstrings_examples_hold() -> None:
    outcome = doctest.testmod(scoring)
    assert outcome.attempted > 0 and outcome.failed == 0


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        ([40, 10, -20, -30], [4, 2, 1, 0]),
        ([10, 20, 30, 40], [0, 1, 2, 4]),
        ([30, 10, -20, -20], [4, 2, F(1, 2), F(1, 2)]),  # two tied for last: 0.5 each
        ([0, 0, 0, 0], [F(7, 4)] * 4),  # four tied: 1.75 each
        ([5, 5, 5, -15], [F(7, 3), F(7, 3), F(7, 3), 0]),  # three tied first: 7/3 each
        ([20, 20, -10, -30], [3, 3, 1, 0]),
        ([50, -10, -10, -30], [4, F(3, 2), F(3, 2), 0]),
        ([9, -3, -3, -3], [4, 1, 1, 1]),
    ],
)
def test_table_points_share_tied_places_exactly(
    scores: list[int], expected: list[Fraction | int]
) -> None:
    points = table_points(scores)
    assert points == [F(e) for e in expected]
    assert all(isinstance(p, Fraction) for p in points)
    assert points == brute_table_points(scores)


def test_a_table_has_four_scores() -> None:
    with pytest.raises(ValueError, match="4 scores"):
        table_points([1, 2, 3])


@given(st.lists(st.integers(-6, 6), min_size=4, max_size=4))
def test_table_points_sum_to_seven_and_follow_the_scores(scores: list[int]) -> None:
    points = table_points(scores)
    assert sum(points) == 7
    assert points == brute_table_points(scores)
    for a, b in itertools.permutations(range(4), 2):
        if scores[a] == scores[b]:
            assert points[a] == points[b]
        elif scores[a] > scores[b]:
            assert points[a] > points[b]


# --- standings -------------------------------------------------------------------------


def t(table: int, seats: tuple[object, ...], scores: tuple[int, ...]) -> TableResult:
    return TableResult(table, seats, scores)  # type: ignore[arg-type]


SUB = Substitute("stand-in")
# Two sessions of two tables; "sub" seats at session 2.
RESULTS = [
    SessionResult(
        1,
        (
            t(1, ("ann", "bob", "cat", "dan"), (60, 10, -30, -40)),
            t(2, ("eve", "fay", "gus", "hal"), (20, 20, -10, -30)),
        ),
    ),
    SessionResult(
        2,
        (
            t(1, ("ann", "eve", SUB, "gus"), (-20, 50, 0, -30)),
            t(2, ("bob", "fay", "cat", "hal"), (10, 10, 10, -30)),
        ),
    ),
]


def by_player(rows: list[Standing]) -> dict[str, Standing]:
    return {r.player: r for r in rows}


def test_standings_total_table_points_then_score_and_skip_substitutes() -> None:
    rows = standings(RESULTS)
    assert [r.player for r in rows] == ["eve", "fay", "ann", "bob", "cat", "gus", "dan", "hal"]
    got = by_player(rows)
    assert got["eve"].table_points == 3 + 4 and got["eve"].score == 70
    assert got["ann"].table_points == 4 + 1 and got["ann"].score == 40
    assert got["fay"].table_points == 3 + F(7, 3)
    assert got["bob"].table_points == 2 + F(7, 3)
    assert got["cat"].table_points == 1 + F(7, 3)
    assert [r.place for r in rows] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert all(not isinstance(r.player, Substitute) for r in rows)
    assert got["ann"].sessions == (
        scoring.SessionLine(1, 1, 0, 60, F(4)),
        scoring.SessionLine(2, 1, 0, -20, F(1)),
    )
    assert got["dan"].sessions == (scoring.SessionLine(1, 1, 3, -40, F(0)),)
    assert got["eve"].firsts == 2 and got["fay"].firsts == 2 and got["ann"].firsts == 1
    assert got["ann"].best_session == 60


def test_complete_ties_share_a_place_and_the_player_key_breaks_them() -> None:
    one = [SessionResult(1, (t(1, ("d", "c", "b", "a"), (0, 0, 0, 0)),))]
    rows = standings(one)
    assert [(r.place, r.player) for r in rows] == [(1, "a"), (1, "b"), (1, "c"), (1, "d")]
    rows = standings(one, tie_breaks=("table_points", "score", "player"))
    assert [(r.place, r.player) for r in rows] == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]
    two = [SessionResult(1, (t(1, ("d", "c", "b", "a"), (30, 0, 0, -30)),))]
    assert [(r.place, r.player) for r in standings(two)] == [
        (1, "d"),
        (2, "b"),
        (2, "c"),
        (4, "a"),
    ]


def test_the_tie_break_chain_firsts_best_session_head_to_head() -> None:
    # x and y both end on 4 table points and 0 score.
    results = [
        SessionResult(
            1,
            (
                t(1, ("x", "p", "q", "r"), (30, 0, -10, -20)),  # x first: 4
                t(2, ("y", "s", "u", "v"), (-10, 20, 0, -10)),  # y shares last: 1/2
            ),
        ),
        SessionResult(
            2,
            (
                t(1, ("x", "y", "p", "s"), (-30, 10, 20, 0)),  # x last: 0, y 2nd: 2
                t(2, ("q", "r", "u", "v"), (0, 0, 0, 0)),
            ),
        ),
        SessionResult(
            3,
            (
                t(1, ("y", "p", "q", "u"), (0, 20, -10, -10)),  # y 2nd: 2 (3/2 short)
                t(2, ("r", "s", "v", "w"), (0, 0, 0, 0)),
            ),
        ),
    ]
    fix = [Correction("c1", "points", "y", None, F(-1, 2), "late arrival")]
    got = by_player(standings(results, fix))
    assert got["x"].table_points == got["y"].table_points == 4
    assert got["x"].score == got["y"].score == 0
    chains = {
        ("table_points", "score"): None,  # still tied: a shared place
        ("table_points", "score", "firsts"): "x",  # x was first once, y never
        ("table_points", "score", "best_session"): "x",  # 30 against 10
        ("table_points", "score", "head_to_head"): "y",  # session 2: y 2, x 0
    }
    for chain, first in chains.items():
        rows = [r for r in standings(results, fix, chain) if r.player in ("x", "y")]
        if first is None:
            assert rows[0].place == rows[1].place
        else:
            assert rows[0].player == first and rows[0].place < rows[1].place


def test_an_unknown_tie_break_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown tie-break 'luck'"):
        standings(RESULTS, tie_breaks=("luck",))


def test_a_score_correction_reranks_the_table_a_penalty_does_not() -> None:
    # Session 2 table 2: bob, fay, cat tied on 10; +5 to cat makes cat first.
    fix = Correction("c1", "score", "cat", 2, 5, "misrecorded")
    got = by_player(standings(RESULTS, [fix]))
    assert got["cat"].sessions[1].table_points == 4 and got["cat"].sessions[1].score == 15
    assert got["bob"].sessions[1].table_points == F(3, 2)
    # A penalty of -25 on cat's session 2 leaves every table point alone.
    pen = Correction("c2", "penalty", "cat", 2, -25, "false win")
    plain, fined = by_player(standings(RESULTS)), by_player(standings(RESULTS, [pen]))
    assert fined["cat"].score == plain["cat"].score - 25
    assert {p: r.table_points for p, r in fined.items()} == {
        p: r.table_points for p, r in plain.items()
    }
    assert fined["cat"].sessions[1].score == -15
    # A penalty without a session lands in the totals only.
    overall = Correction("c3", "penalty", "cat", None, -25, "slow play")
    late = by_player(standings(RESULTS, [overall]))
    assert late["cat"].score == plain["cat"].score - 25
    assert late["cat"].sessions == plain["cat"].sessions


def test_undo_withdraws_and_undoing_the_undo_reapplies() -> None:
    fix = Correction("c1", "points", "dan", 1, 10, "a ruling")
    plain = standings(RESULTS)
    assert by_player(standings(RESULTS, [fix]))["dan"].place == 1
    assert standings(RESULTS, [fix, Undo("u1", "c1")]) == plain
    assert standings(RESULTS, [fix, Undo("u1", "c1"), Undo("u2", "u1")]) == standings(
        RESULTS, [fix]
    )
    log = [fix, Undo("u1", "c1"), Undo("u2", "u1"), Undo("u3", "u2")]
    assert standings(RESULTS, log) == plain
    assert in_force(log) == {"u1", "u3"}


def test_an_entry_stays_withdrawn_while_any_undo_of_it_is_in_force() -> None:
    fix = Correction("c1", "points", "dan", None, 10, "a ruling")
    log = [fix, Undo("u1", "c1"), Undo("u2", "c1"), Undo("u3", "u1")]
    assert in_force(log) == {"u2", "u3"}
    assert standings(RESULTS, log) == standings(RESULTS)
    log.append(Undo("u4", "u2"))
    assert in_force(log) == {"c1", "u3", "u4"}
    got = by_player(standings(RESULTS, log))["dan"]
    assert got.table_points == 10 and got.sessions[0].table_points == 0  # totals only


@pytest.mark.parametrize(
    ("log", "message"),
    [
        ([Undo("u1", "c9")], "no earlier entry"),
        ([Undo("u1", "u1")], "no earlier entry"),
        (
            [
                Correction("c1", "points", "ann", None, 1, "x"),
                Correction("c1", "points", "bob", None, 1, "y"),
            ],
            "repeats",
        ),
        ([Correction("c1", "points", "zed", None, 1, "x")], "not a participant"),
        ([Correction("c1", "score", "dan", 2, 5, "x")], "did not play 2"),
    ],
)
def test_bad_logs_are_refused(log: list[Correction | Undo], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        standings(RESULTS, log)


# Session 1: ben on a bye, the other four at one table.
BYE = [SessionResult(1, (t(1, ("ann", "bob", "cat", "dan"), (30, 10, -10, -30)),), ("ben",))]
FIELD = ("ann", "ben", "bob", "cat", "dan")


def test_a_player_on_a_bye_is_listed_with_nothing_for_it_and_ranked_among_the_others() -> None:
    """The probe's case: five players, ben on a bye. He scores nothing for the session
    (docs/tournaments.md, "Byes count no points") but is a participant: listed, his
    penalties counted, ranked by the same chain as everyone."""
    rows = standings(BYE, players=FIELD)
    assert [(r.place, r.player) for r in rows] == [
        (1, "ann"),
        (2, "bob"),
        (3, "cat"),
        (4, "ben"),  # 0 table points like dan, but a score of 0 against dan's -30
        (5, "dan"),
    ]
    ben = by_player(rows)["ben"]
    assert ben == Standing(4, "ben", F(0), 0, (), 0, None, byes=(1,))
    assert by_player(rows)["dan"].best_session == -30
    assert all(r.byes == () for r in rows if r.player != "ben")
    # The exports list him too, the bye said: in the JSON with no session and the session in
    # his ``byes``; in the CSV with empty cells and a 1 in the session's bye column (the
    # columns of the format before it unchanged, the bye columns after them).
    data = json.loads(export_json(rows))
    assert data["sessions"] == [1]
    assert data["standings"][3] == {
        "place": 4,
        "player": "ben",
        "table_points": "0",
        "table_points_decimal": 0.0,
        "score": 0,
        "sessions": [],
        "byes": [1],
    }
    assert data["standings"][0]["byes"] == []
    table = list(csv.reader(io.StringIO(export_csv(rows))))
    assert table[0][4:] == [
        "session_1_table",
        "session_1_seat",
        "session_1_table_points",
        "session_1_score",
        "session_1_bye",
    ]
    assert table[4] == ["4", "ben", "0", "0", "", "", "", "", "1"]
    assert table[1] == ["1", "ann", "4", "30", "1", "0", "4", "30", "0"]
    assert len(table) == 1 + len(FIELD)


def test_a_penalty_to_a_player_on_a_bye_counts_and_the_chain_ranks_the_tie() -> None:
    # An overall penalty of -30 puts ben level with dan on 0 table points and -30.
    fine = Correction("c1", "penalty", "ben", None, -30, "slow play")
    got = by_player(standings(BYE, [fine], players=FIELD))
    assert (got["ben"].table_points, got["ben"].score) == (0, -30)
    assert got["ben"].place == got["dan"].place == 4  # still tied on the two keys: shared
    chains = {
        # dan has a best session (-30), ben none: below any score
        ("table_points", "score", "firsts", "best_session"): ["dan", "ben"],
        ("table_points", "score", "firsts", "head_to_head"): None,  # 0 each: still shared
        ("table_points", "score", "player"): ["ben", "dan"],
        scoring.TIE_BREAKS: ["dan", "ben"],
    }
    for chain, order in chains.items():
        rows = [r for r in standings(BYE, [fine], chain, FIELD) if r.player in ("ben", "dan")]
        if order is None:
            assert rows[0].place == rows[1].place == 4, chain
        else:
            assert [r.player for r in rows] == order, chain
            assert [r.place for r in rows] == [4, 5], chain
    # Table points given to him count as well; one for a session he did not play is refused.
    bonus = Correction("c2", "points", "ben", None, F(1, 2), "a ruling")
    assert by_player(standings(BYE, [bonus], players=FIELD))["ben"].table_points == F(1, 2)
    with pytest.raises(ValueError, match="did not play 1"):
        standings(BYE, [Correction("c3", "penalty", "ben", 1, -5, "x")], players=FIELD)
    # The audit sees his entries move him.
    (line,) = audit(BYE, [fine], scoring.TIE_BREAKS, FIELD)
    assert [(c.player, c.score, c.place) for c in line.changes] == [
        ("ben", (0, -30), (4, 5)),
        ("dan", (-30, -30), (5, 4)),
    ]


# Session 1: a substitute played ann's seat (she left); the other three played theirs.
LEFT = [
    SessionResult(
        1, (t(1, (Substitute("bot:strong", "ann"), "bob", "cat", "dan"), (30, 10, -10, -30)),)
    )
]
HELD = ("ann", "bob", "cat", "dan")


def test_a_session_entry_for_a_player_whose_seat_a_substitute_played_counts() -> None:
    """An outside probe's case: ann is penalised in session 1, then a substitute plays her
    seat. The entry is still hers and counts, never dropped: the penalty comes off her
    total and table points given are added to it (she has no line for the session: the
    seat counts for nobody); a score correction corrects her seat's score, so it re-ranks
    her tablemates. One for a session a player sat out on a bye is still refused."""
    fine = Correction("c1", "penalty", "ann", 1, -10, "slow play")
    bonus = Correction("c2", "points", "ann", 1, F(1, 2), "a ruling")
    got = by_player(standings(LEFT, [fine, bonus], players=HELD))
    assert (got["ann"].table_points, got["ann"].score) == (F(1, 2), -10)
    assert (got["ann"].sessions, got["ann"].best_session) == ((), None)
    assert [r.player for r in standings(LEFT, [fine, bonus], players=HELD)] == [
        "bob",  # 2 (the substitute's 30 ranked first)
        "cat",  # 1
        "ann",  # 1/2
        "dan",  # 0
    ]
    # The seat's -40: it ties with cat at -10, bob is first; ann's own figures do not move.
    ruling = Correction("c3", "score", "ann", 1, -40, "a hand misrecorded")
    got = by_player(standings(LEFT, [ruling], players=HELD))
    assert [got[p].table_points for p in ("bob", "cat", "dan")] == [4, F(3, 2), 0]
    assert (got["ann"].table_points, got["ann"].score, got["ann"].sessions) == (0, 0, ())
    # The audit shows the penalty moving her.
    (line,) = audit(LEFT, [fine], players=HELD)
    assert [(c.player, c.score) for c in line.changes] == [("ann", (0, -10))]
    # Sat out on a bye: refused, as before.
    with pytest.raises(ValueError, match="did not play 1"):
        standings(LEFT, [Correction("c4", "penalty", "ben", 1, -5, "x")], players=(*HELD, "ben"))


def test_bad_entries_are_refused() -> None:
    with pytest.raises(ValueError, match="needs a session"):
        Correction("c1", "score", "ann", None, 5, "x")
    with pytest.raises(ValueError, match="scores are whole"):
        Correction("c1", "penalty", "ann", 1, F(1, 2), "x")
    with pytest.raises(ValueError, match="unknown kind"):
        Correction("c1", "bonus", "ann", 1, 1, "x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="distinct"):
        t(1, ("ann", "ann", "bob", "cat"), (0, 0, 0, 0))
    with pytest.raises(ValueError, match="sits at two seats"):
        SessionResult(
            1, (t(1, ("a", "b", "c", "d"), (0,) * 4), t(2, ("a", "e", "f", "g"), (0,) * 4))
        )
    with pytest.raises(ValueError, match="sits at two seats"):  # and at the seat substituted
        SessionResult(1, (t(1, ("a", "b", "c", Substitute("x", "a")), (0,) * 4),))
    with pytest.raises(ValueError, match="both on a bye and seated"):
        SessionResult(1, (t(1, ("a", "b", "c", "d"), (0,) * 4),), ("e", "a"))


def test_the_audit_lists_each_entry_and_its_effect_in_order() -> None:
    log = [
        Correction("c1", "score", "cat", 2, 5, "misrecorded", "2026-12-01T10:00Z"),
        Correction("c2", "penalty", "hal", None, -10, "slow play"),
        Undo("u1", "c1", "the sheet was right"),
        Undo("u2", "u1", "it was not after all"),
    ]
    lines = audit(RESULTS, log)
    assert [(ln.applied, ln.withdrawn) for ln in lines] == [
        (("c1",), ()),
        (("c2",), ()),
        ((), ("c1",)),
        (("c1",), ()),
    ]
    assert [ln.in_force for ln in lines] == [True, True, False, True]
    first = {c.player: c for c in lines[0].changes}
    assert set(first) == {"ann", "bob", "cat", "fay"}  # the table c1 re-ranked, and ann's place
    assert first["cat"].table_points == (1 + F(7, 3), F(5))
    assert first["cat"].score == (-20, -15)
    assert first["ann"].place == (3, 2) and first["ann"].table_points == (5, 5)
    assert first["bob"].table_points == (2 + F(7, 3), 2 + F(3, 2))
    assert [(c.player, c.score) for c in lines[1].changes] == [("hal", (-60, -70))]
    assert {c.player for c in lines[2].changes} == {"ann", "bob", "cat", "fay"}
    assert lines[3].changes == lines[0].changes


# --- Hypothesis: random tournaments and logs ----------------------------------------------

NAMES = [f"p{i}" for i in range(10)] + ['Zoë, "the" wall']
NAMES += ["-1-1", "=1+1", "+33", "@SUM(A1)", "\tx", "\r=y"]  # formulas to a spreadsheet


@st.composite
def tournaments(draw: st.DrawFn, replaced: bool = False) -> list[SessionResult]:
    """Up to three sessions of some of the players, the tables completed by substitutes,
    some of the players absent from a session on a bye in it; with ``replaced``, some
    seats played by a substitute for the player seated there (never the first: every
    session seats a player)."""
    players = draw(st.lists(st.sampled_from(NAMES), min_size=3, max_size=9, unique=True))
    sessions = []
    for number in range(1, draw(st.integers(1, 3)) + 1):
        order = draw(st.permutations(players))
        count = draw(st.integers(1, len(order)))
        present, absent = order[:count], order[count:]
        seats: list[str | Substitute] = [*present]
        for i in range(1, len(seats) if replaced else 0):
            if draw(st.booleans()):
                seats[i] = Substitute(f"r{i}", present[i])
        seats += [Substitute(f"s{i}") for i in range(-len(seats) % 4)]
        tables = []
        for i in range(0, len(seats), 4):
            scores = draw(st.lists(st.integers(-4, 4), min_size=4, max_size=4))
            tables.append(TableResult(i // 4 + 1, tuple(seats[i : i + 4]), tuple(scores)))  # type: ignore[arg-type]
        byes = tuple(p for p in absent if draw(st.booleans()))
        sessions.append(SessionResult(number, tuple(tables), byes))
    return sessions


def replaced_players(results: list[SessionResult]) -> set[tuple[int, str]]:
    """(session, player) of each seat a substitute played for the player seated there."""
    return {
        (r.session, p.for_player)
        for r in results
        for tb in r.tables
        for p in tb.seats
        if isinstance(p, Substitute) and p.for_player is not None
    }


@st.composite
def corrections(
    draw: st.DrawFn, results: list[SessionResult], unseated: list[str] | None = None
) -> list[Correction]:
    """Corrections of the players seated (in a session they played, or whose seat a
    substitute played there, or overall), and overall ones of the ``unseated`` players (who
    played no table)."""
    seated = sorted(
        {(r.session, p) for r in results for tb in r.tables for p in tb.seats if isinstance(p, str)}
        | replaced_players(results)
    )
    choices: list[tuple[int | None, str]] = [*seated, *((None, p) for p in unseated or ())]
    out = []
    for i in range(draw(st.integers(0, 6))):
        session, player = draw(st.sampled_from(choices))
        kinds = ["score", "points", "penalty"] if session is not None else ["points", "penalty"]
        kind = draw(st.sampled_from(kinds))
        when = session if kind == "score" else draw(st.sampled_from([session, None]))
        amount = draw(st.integers(-6, 6))
        if kind == "points":
            amount = F(amount, draw(st.integers(1, 3)))
        out.append(Correction(f"c{i}", kind, player, when, amount, f"reason {i}"))
    return out


def literal_standings(
    results: list[SessionResult], log: list[Correction], players: tuple[str, ...] = ()
) -> list[tuple[int, str, Fraction, int]]:
    """(place, player, table points, score) re-computed literally, chain table points then
    score, places 1 + the number of players strictly ahead; ``players`` start at nothing
    (they are listed whether they played or not). A score correction corrects the seat the
    session gave the player, whoever played it."""
    points: defaultdict[str, Fraction] = defaultdict(F, {p: F(0) for p in players})
    score: defaultdict[str, int] = defaultdict(int, dict.fromkeys(players, 0))
    for r in results:
        for tb in r.tables:
            final = list(tb.scores)
            owners = [p.for_player if isinstance(p, Substitute) else p for p in tb.seats]
            for c in log:
                if c.kind == "score" and c.session == r.session and c.player in owners:
                    final[owners.index(c.player)] += int(c.amount)
            for p, s, tp in zip(tb.seats, final, brute_table_points(final), strict=True):
                if isinstance(p, str):
                    points[p] += tp
                    score[p] += s
    for c in log:
        if c.kind == "points":
            points[c.player] += F(c.amount)
        elif c.kind == "penalty":
            score[c.player] += int(c.amount)
    out = []
    for p, total in points.items():
        ahead = sum((points[q], score[q]) > (total, score[p]) for q in points)
        out.append((1 + ahead, p, total, score[p]))
    return sorted(out, key=lambda row: (row[0], row[1]))


def summary(rows: list[Standing]) -> list[tuple[int, str, Fraction, int]]:
    return [(r.place, r.player, r.table_points, r.score) for r in rows]


@settings(max_examples=150)
@given(st.data())
def test_standings_match_a_literal_recomputation(data: st.DataObject) -> None:
    results = data.draw(tournaments())
    log = data.draw(corrections(results))
    rows = standings(results, log)
    assert summary(rows) == literal_standings(results, log)
    seated = {p for r in results for tb in r.tables for p in tb.seats}
    assert {r.player for r in rows} == {p for p in seated if isinstance(p, str)}
    assert not any(isinstance(r.player, Substitute) for r in rows)
    # Without corrections every session hands out 7 points a table (substitutes' included).
    if not log:
        tables = sum(len(r.tables) for r in results)
        subs = sum(
            tp
            for r in results
            for tb in r.tables
            for p, tp in zip(tb.seats, table_points(tb.scores), strict=True)
            if isinstance(p, Substitute)
        )
        assert sum(r.table_points for r in rows) + subs == 7 * tables


@settings(max_examples=150)
@given(st.data())
def test_every_player_is_listed_whether_they_played_a_table_or_not(data: st.DataObject) -> None:
    """Players who sat out every session (byes, absences) or some of them are listed, with
    their corrections, and ranked by the same rules as the players seated."""
    results = data.draw(tournaments())
    seated = {p for r in results for tb in r.tables for p in tb.seats if isinstance(p, str)}
    unseated = data.draw(
        st.lists(st.sampled_from([n for n in NAMES if n not in seated]), max_size=3, unique=True)
    )
    everyone = tuple(sorted(seated | set(unseated)))
    log = data.draw(corrections(results, unseated))
    rows = standings(results, log, players=everyone)
    assert summary(rows) == literal_standings(results, log, everyone)
    got = by_player(rows)
    assert sorted(got) == list(everyone)
    for p in unseated:
        assert got[p].sessions == () and got[p].firsts == 0 and got[p].best_session is None
    full = standings(results, log, scoring.TIE_BREAKS, everyone)
    assert [r.place for r in full] == list(range(1, len(everyone) + 1))
    keys = [(r.table_points, r.score, r.firsts) for r in full]
    assert keys == sorted(keys, reverse=True)


@settings(max_examples=150)
@given(st.data())
def test_entries_for_seats_substitutes_played_count_as_recomputed(data: st.DataObject) -> None:
    """Seats a substitute played for the player seated there: every entry naming her and
    that session counts (in her totals; a score correction in the seat's score) as the
    literal re-computation has it."""
    results = data.draw(tournaments(replaced=True))
    seated = {p for r in results for tb in r.tables for p in tb.seats if isinstance(p, str)}
    everyone = tuple(sorted(seated | {p for _, p in replaced_players(results)}))
    log = data.draw(corrections(results))
    rows = standings(results, log, players=everyone)
    assert summary(rows) == literal_standings(results, log, everyone)
    lines = {(ln.session, r.player) for r in rows for ln in r.sessions}
    assert not lines & replaced_players(results)  # her seat counts for nobody


@settings(max_examples=150)
@given(st.data())
def test_undo_restores_and_corrections_commute(data: st.DataObject) -> None:
    results = data.draw(tournaments())
    log = data.draw(corrections(results))
    chain = data.draw(st.permutations(scoring.TIE_BREAKS))
    rows = standings(results, log, chain)
    # Any order of the same corrections gives the same standings.
    shuffled = data.draw(st.permutations(log))
    assert standings(results, shuffled, chain) == rows
    if log:
        # Undoing one is as if it had never been entered; undoing the undo puts it back.
        victim = data.draw(st.sampled_from(log))
        without = [c for c in log if c is not victim]
        undone = [*log, Undo("u1", victim.id, "withdrawn")]
        assert standings(results, undone, chain) == standings(results, without, chain)
        again = [*undone, Undo("u2", "u1", "restored")]
        assert standings(results, again, chain) == rows
        assert audit(results, again, chain)[-1].applied == (victim.id,)


@settings(max_examples=100)
@given(st.data())
def test_places_follow_the_chain_and_the_player_key_leaves_no_ties(data: st.DataObject) -> None:
    results = data.draw(tournaments())
    log = data.draw(corrections(results))
    rows = standings(results, log, ("table_points", "score", "firsts", "player"))
    assert [r.place for r in rows] == list(range(1, len(rows) + 1))
    keys = [(r.table_points, r.score, r.firsts) for r in rows]
    assert keys == sorted(keys, reverse=True)
    tied = standings(results, log, ("table_points",))
    for a, b in itertools.pairwise(tied):
        assert (a.place == b.place) == (a.table_points == b.table_points)


# --- duplicate ---------------------------------------------------------------------------


def test_imp_scale_is_the_bridge_scale_on_ten_times_the_difference() -> None:
    assert [imp(d) for d in (0, 1, 2, 4, 5, 9, 13, 17, 22, 27)] == [0, 0, 1, 1, 2, 3, 4, 5, 6, 7]
    assert imp(F(59, 3)) == 5  # 196.7 in bridge points
    assert imp(-400) == -24 and imp(399) == 23


def test_duplicate_compares_each_seat_and_deal_with_the_others_mean() -> None:
    deals = [
        # Session 1, deal 1, East at three tables: +48, -16, +32 (datum for each: the
        # others' mean).
        DealResult(1, 1, 0, 1, "ann", 48),
        DealResult(1, 1, 0, 2, "bob", -16),
        DealResult(1, 1, 0, 3, SUB, 32),
        # South on the same deal at two tables.
        DealResult(1, 1, 1, 1, "cat", -8),
        DealResult(1, 1, 1, 2, "dan", -8),
        # Held at one table only: compared with nobody.
        DealResult(1, 2, 0, 1, "ann", 100),
    ]
    got = {r.player: r for r in duplicate_results(deals)}
    assert set(got) == {"ann", "bob", "cat", "dan"}  # the substitute is not listed
    assert got["ann"].difference == 48 - F(-16 + 32, 2) and got["ann"].deals == 1
    assert got["ann"].imps == imp(40) == 9
    assert got["bob"].difference == -16 - 40 and got["bob"].imps == -imp(56) == -11
    assert got["cat"].difference == 0 and got["cat"].imps == 0
    assert [r.player for r in duplicate_results(deals)] == ["ann", "cat", "dan", "bob"]


def test_duplicate_refuses_a_table_twice_on_one_seat_and_deal() -> None:
    with pytest.raises(ValueError, match="a table twice"):
        duplicate_results([DealResult(1, 1, 0, 1, "a", 5), DealResult(1, 1, 0, 1, "b", 5)])


@st.composite
def duplicate_sessions(draw: st.DrawFn) -> list[DealResult]:
    names = [f"p{i}" for i in range(12)]
    out = []
    for deal in range(1, draw(st.integers(1, 4)) + 1):
        tables = draw(st.integers(1, 3))
        players = draw(st.permutations(names))
        for table in range(tables):
            for wind in range(4):
                who: str | Substitute = players[4 * table + wind]
                if draw(st.integers(0, 9)) == 0:
                    who = Substitute()
                out.append(DealResult(1, deal, wind, table + 1, who, draw(st.integers(-300, 300))))
    return out


@given(duplicate_sessions())
def test_duplicate_matches_a_pairwise_recomputation(deals: list[DealResult]) -> None:
    # Pairwise: own minus the mean of the others is the mean of own-minus-each-other.
    want_diff: dict[str, Fraction] = defaultdict(F)
    want_imps: dict[str, int] = defaultdict(int)
    for d in deals:
        others = [
            o
            for o in deals
            if (o.session, o.deal, o.wind) == (d.session, d.deal, d.wind) and o is not d
        ]
        if not others or isinstance(d.player, Substitute):
            continue
        diff = sum((F(d.delta - o.delta) for o in others), F(0)) / len(others)
        want_diff[d.player] += diff
        size = sum(10 * abs(diff) >= tb for tb in scoring.IMP_THRESHOLDS)
        want_imps[d.player] += size if diff >= 0 else -size
    got = duplicate_results(deals)
    assert {r.player: r.difference for r in got} == dict(want_diff)
    assert {r.player: r.imps for r in got} == dict(want_imps)
    # With no substitutes the differences of a seat and deal cancel out.
    if not any(isinstance(d.player, Substitute) for d in deals):
        assert sum(r.difference for r in got) == 0


# --- exports -----------------------------------------------------------------------------


NUMBER = re.compile(r"-?\d+(\.\d+)?")
DATE = re.compile(r"\d{1,4}[/.-]\d{1,2}([/.-]\d{1,4})?")
FORMULA = ("=", "+", "-", "@", "\t", "\r")


def as_a_spreadsheet_reads(cell: str) -> float | str:
    """What a spreadsheet makes of a CSV cell: a number, or text; a cell it would evaluate
    as a formula, or turn into a date, fails the test."""
    if NUMBER.fullmatch(cell):
        return float(cell)
    assert not cell.startswith(FORMULA), f"{cell!r} would be evaluated as a formula"
    assert not DATE.fullmatch(cell), f"{cell!r} would open as a date"
    return cell


def read_as_a_spreadsheet(text: str) -> list[list[float | str]]:
    return [[as_a_spreadsheet_reads(c) for c in line] for line in csv.reader(io.StringIO(text))]


def close(got: float | str, exact: Fraction) -> bool:
    """A decimal cell holds the exact value rounded to 4 places."""
    return isinstance(got, float) and abs(F(got) - exact) <= F(1, 20000)


@settings(max_examples=50)
@given(st.data())
def test_csv_reads_back_in_a_spreadsheet_as_numbers_and_plain_text(data: st.DataObject) -> None:
    results = data.draw(tournaments())
    rows = standings(results, data.draw(corrections(results)))
    table = read_as_a_spreadsheet(export_csv(rows))
    sessions = sorted(r.session for r in results)  # every session seats a player
    byes = {r.session: set(r.byes) for r in results}
    header = ["place", "player", "table_points", "score"]
    for n in sessions:
        header += [f"session_{n}_table", f"session_{n}_seat"]
        header += [f"session_{n}_table_points", f"session_{n}_score"]
    header += [f"session_{n}_bye" for n in sessions]  # after the columns of old
    assert table[0] == header
    assert len(table) == len(rows) + 1
    for line, row in zip(table[1:], rows, strict=True):
        shown = f"'{row.player}" if row.player.startswith(FORMULA) else row.player
        assert line[0] == row.place and line[1] == shown
        assert close(line[2], row.table_points) and line[3] == row.score
        lines = {ln.session: ln for ln in row.sessions}
        for i, n in enumerate(sessions):
            cells = line[4 + 4 * i : 8 + 4 * i]
            if n in lines:
                ln = lines[n]
                assert cells[:2] == [ln.table, ln.seat] and cells[3] == ln.score
                assert close(cells[2], ln.table_points)
            else:
                assert cells == ["", "", "", ""]
            bye = line[4 + 4 * len(sessions) + i]
            assert bye == (1 if row.player in byes[n] else 0)
            assert not (bye and n in lines)


@settings(max_examples=50)
@given(st.data())
def test_json_reads_back_as_the_standings_with_the_byes(data: st.DataObject) -> None:
    results = data.draw(tournaments())
    rows = standings(results, data.draw(corrections(results)))
    got = json.loads(export_json(rows))
    assert got["sessions"] == sorted(r.session for r in results)
    byes = {r.session: set(r.byes) for r in results}
    assert len(got["standings"]) == len(rows)
    for item, row in zip(got["standings"], rows, strict=True):
        assert (item["place"], item["player"], item["score"]) == (row.place, row.player, row.score)
        assert F(item["table_points"]) == row.table_points
        assert [
            (x["session"], x["table"], x["seat"], F(x["table_points"]), x["score"])
            for x in item["sessions"]
        ] == [(ln.session, ln.table, ln.seat, ln.table_points, ln.score) for ln in row.sessions]
        assert item["byes"] == [n for n in got["sessions"] if row.player in byes[n]]


def test_csv_neutralises_what_would_be_a_formula_and_keeps_numbers_numbers() -> None:
    """The player ``-1-1`` was written raw (a spreadsheet computes -9323-1 = ... from it),
    and table points as ``7/4`` (a date): now the name is text, the points decimals, and a
    negative score or table points a number."""
    seats = ("-1-1", '=HYPERLINK("http://x")', "@SUM(A1)", "+33")
    results = [SessionResult(1, (t(2, seats, (-12, -12, -12, 36)),))]
    fix = Correction("c1", "points", "+33", None, F(-9, 2), "a ruling")
    text = export_csv(standings(results, [fix]))
    table = list(csv.reader(io.StringIO(text)))
    assert table[1] == ["1", "'-1-1", "1", "-12", "2", "0", "1", "-12", "0"]
    assert table[2] == ["1", '\'=HYPERLINK("http://x")', "1", "-12", "2", "1", "1", "-12", "0"]
    assert table[3] == ["1", "'@SUM(A1)", "1", "-12", "2", "2", "1", "-12", "0"]
    assert table[4] == ["4", "'+33", "-0.5", "36", "2", "3", "4", "36", "0"]
    read_as_a_spreadsheet(text)  # no formula, no date anywhere
    quarters = export_csv(standings([SessionResult(1, (t(1, ("a", "b", "c", "d"), (0,) * 4),))]))
    assert read_as_a_spreadsheet(quarters)[1][2:] == [1.75, 0, 1, 0, 1.75, 0, 0]  # not 7/4, a date


def test_csv_escapes_names_and_json_carries_the_same() -> None:
    results = [SessionResult(1, (t(1, ('Zoë, "the" wall', "b", "c", SUB), (5, 5, 5, -15)),))]
    rows = standings(results)
    text = export_csv(rows)
    assert '"Zoë, ""the"" wall"' in text
    table = list(csv.reader(io.StringIO(text)))
    # Z < b
    assert table[1] == ["1", 'Zoë, "the" wall', "2.3333", "5", "1", "0", "2.3333", "5", "0"]
    assert table[2] == ["1", "b", "2.3333", "5", "1", "1", "2.3333", "5", "0"]
    deals = [DealResult(1, 1, 0, 1, "b", 32), DealResult(1, 1, 0, 2, "c", -16)]
    data = json.loads(export_json(rows, duplicate_results(deals)))
    assert data["sessions"] == [1]
    assert data["standings"][0] == {
        "place": 1,
        "player": 'Zoë, "the" wall',
        "table_points": "7/3",
        "table_points_decimal": 2.3333,
        "score": 5,
        "sessions": [{"session": 1, "table": 1, "seat": 0, "table_points": "7/3", "score": 5}],
        "byes": [],
    }
    assert data["duplicate"] == [
        {"player": "b", "deals": 1, "difference": "48", "imps": 10},
        {"player": "c", "deals": 1, "difference": "-48", "imps": -10},
    ]
    assert "duplicate" not in json.loads(export_json(rows))

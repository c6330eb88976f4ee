"""A tournament's scoring (docs/tournaments.md): pure functions, no I/O, no clock.

**Table points.** Each table of a session gives its four players 4, 2, 1 and 0 table points
by their final scores, highest first. Players on equal scores share the points of the places
they occupy, exactly: two tied for last get (1 + 0) / 2 = 1/2 each, three tied for first
(4 + 2 + 1) / 3 = 7/3 each, four tied 7/4 each. A table always gives out 7 points. The
arithmetic is ``fractions.Fraction`` throughout, so thirds never round.

**Results and corrections.** The results are the sessions as played: per table the four seats
(a registered player's id, or a ``Substitute``, with the player whose seat it played if
any) and their final scores, and the players on a bye. The tournament director's penalties
and corrections are an append-only log of ``Correction`` and ``Undo`` entries; standings are
always recomputed from the results plus the corrections in force, so any figure can be
audited (``audit``). Kinds of correction (amounts are signed, added):

- ``"score"``: corrects a recorded final score of ``player`` in ``session`` (required) by
  adding to it (a ruling on a hand states each player's change, and two rulings on two hands
  both count); the table's points are recomputed from the corrected scores (so it may move
  tablemates too);
- ``"penalty"``: added to ``player``'s score (in ``session``, or overall when None) *without*
  re-ranking the table (usually negative);
- ``"points"``: added to ``player``'s table points (in ``session``, or overall when None).

A correction naming a session is for a player the session seated (one on a bye is
refused). If a substitute played her seat, the correction is still hers and counts, never
dropped: a score correction corrects the seat's score (re-ranking the table), a penalty or
table points go in her totals (she has no line for that session).

An ``Undo(id, of)`` withdraws the entry ``of`` (an earlier id of the log); undoing an undo
puts its target back in force. An entry is in force when no undo of it is in force; as undos
only name earlier entries, this is well defined. All corrections are additive, so the
standings do not depend on the order of the corrections in force.

**Standings.** Substitutes never count as participants: they are not listed, though their
scores rank their tables. The participants are the players seated at the tables of the
results and the ``players`` given (the tournament's players): one without a line in a
session (on a bye, absent, or whose seat a substitute played) scores nothing for it, 0 table
points and 0, is listed all the same, with the corrections given them, and ranks by the same
chain. Players are ordered by a tie-break chain of keys, each higher first, applied in turn
within the groups still tied on the keys before it:

- ``"table_points"``: total table points; ``"score"``: total score;
- ``"firsts"``: sessions in which the player had the most table points at their table
  (sole or shared first);
- ``"best_session"``: the player's best single session score (over the sessions played: a
  bye is not one; a player who played none has no best session, below any score);
- ``"head_to_head"``: the player's table points in the sessions where they sat at a table
  with another player of their tied group (recomputed for each group);
- ``"player"``: the player's id, ascending (breaks every tie).

Players still tied after the whole chain share a place (standard competition places: 1, 2,
2, 4) and are listed by id.

**Duplicate.** In duplicate MCR every table of a session plays the same walls, so the
players who held the same seat wind on the same deal can be compared. For a player ``p``
who held seat ``w`` on deal ``d`` of session ``s``, let ``O`` be the others who held ``w`` on
``(s, d)`` at the other tables (``n = |O| >= 1``) and ``delta(x)`` each one's score change on
that hand. Then (Butler scoring against the datum, the mean of the others)::

    diff(p, s, d) = delta(p) - (sum of delta(o) for o in O) / n
    difference(p) = sum over the (s, d) of p of diff(p, s, d)
    imps(p)       = sum over the (s, d) of p of sign(diff) * IMP(|diff|)

``IMP`` is the WBF bridge IMP scale applied to ten times the difference: ``IMP(x)`` is the
number of thresholds ``T`` in ``IMP_THRESHOLDS`` (20, 50, 90, ..., 4000: the bridge table's
lower bounds) with ``10 * x >= T``, so MCR differences of 2, 5, 9, 13, ... points are worth
1, 2, 3, 4, ... IMPs, up to 24 IMPs from 400. Why ten times: an MCR hand moves about a
tenth of a bridge deal's score, so the scale keeps its shape. The least 8-fan win gives the
winner 32 (on a discard) or 48 (self-drawn) points, ten times that is a bridge game (400 to
600); an 88-fan limit hand self-drawn gives 288, ten times that a grand slam (1,500 to
2,200). Small swings count, and one huge hand cannot outweigh a session of good play.
(The Russian duplicate championship also scored in IMPs.) A seat and deal held at one table
only compares with nobody and is left out. Substitutes' hands serve as comparison for the
others but substitutes are not listed.

One concept, one module (under 700 lines): the scoring of a tournament as the rules
and docs/tournaments.md state it, from table points to the exported standings. Every figure
an export or the audit shows is computed here from the same results and corrections, so the
rules and their outputs are read in one place; the exports (the last hundred lines) format
the ``Standing`` rows and need nothing else.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Literal, TypeAlias

POINTS: tuple[int, int, int, int] = (4, 2, 1, 0)
IMP_THRESHOLDS: tuple[int, ...] = (
    20, 50, 90, 130, 170, 220, 270, 320, 370, 430, 500, 600,
    750, 900, 1100, 1300, 1500, 1750, 2000, 2250, 2500, 3000, 3500, 4000,
)  # fmt: skip
TIE_BREAKS: tuple[str, ...] = (
    "table_points",
    "score",
    "firsts",
    "best_session",
    "head_to_head",
    "player",
)
CorrectionKind: TypeAlias = Literal["score", "points", "penalty"]


def table_points(scores: Sequence[int]) -> list[Fraction]:
    """The table points of four final scores (by seat): 4-2-1-0, ties sharing exactly.

    >>> [str(p) for p in table_points([30, 10, 10, -50])]
    ['4', '3/2', '3/2', '0']
    >>> [str(p) for p in table_points([5, 5, 5, -15])]
    ['7/3', '7/3', '7/3', '0']
    """
    if len(scores) != len(POINTS):
        raise ValueError(f"a table has 4 scores, got {scores!r}")
    points = []
    for score in scores:
        above = sum(other > score for other in scores)
        tied = sum(other == score for other in scores)
        points.append(Fraction(sum(POINTS[above : above + tied]), tied))
    return points


@dataclass(frozen=True, slots=True)
class Substitute:
    """A seat filled by a substitute (not a participant): ``name`` is only for display;
    ``for_player`` is the player the session seated there (None for a seat no player had),
    whose entries for the session still count (the module docstring)."""

    name: str = ""
    for_player: str | None = None


Seat: TypeAlias = str | Substitute


@dataclass(frozen=True, slots=True)
class TableResult:
    """One table of a session: its number, the four seats (a player's id or a
    ``Substitute``) and their final scores, by seat."""

    table: int
    seats: tuple[Seat, Seat, Seat, Seat]
    scores: tuple[int, int, int, int]

    def __post_init__(self) -> None:
        if len(self.seats) != 4 or len(self.scores) != 4:
            raise ValueError(f"table {self.table}: need 4 seats and 4 scores, got {self!r}")
        players = [s for s in self.seats if not isinstance(s, Substitute)]
        if len(set(players)) != len(players) or not all(players):
            raise ValueError(f"table {self.table}: players must be distinct ids: {self.seats!r}")


@dataclass(frozen=True, slots=True)
class SessionResult:
    """The tables of one session (a round), by session number, and the players it left
    on a bye (for the exports to say so)."""

    session: int
    tables: tuple[TableResult, ...]
    byes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        players = [_holder(p) for t in self.tables for p in t.seats if _holder(p) is not None]
        if len(set(players)) != len(players):
            raise ValueError(f"session {self.session}: a player sits at two seats")
        numbers = [t.table for t in self.tables]
        if len(set(numbers)) != len(numbers):
            raise ValueError(f"session {self.session}: table numbers repeat: {numbers!r}")
        both = set(self.byes) & set(players)
        if both:
            raise ValueError(f"session {self.session}: both on a bye and seated: {sorted(both)!r}")


def _holder(seat: Seat) -> str | None:
    """The player the session seated at ``seat``, whoever played it (None: nobody's)."""
    return seat.for_player if isinstance(seat, Substitute) else seat


@dataclass(frozen=True, slots=True)
class Correction:
    """A director's correction or penalty (see the module docstring for the kinds); ``at``
    is when it was entered (the caller's clock, e.g. ISO 8601), recorded, never compared."""

    id: str
    kind: CorrectionKind
    player: str
    session: int | None
    amount: Fraction | int
    reason: str
    at: str = ""

    def __post_init__(self) -> None:
        if self.kind not in ("score", "points", "penalty"):
            raise ValueError(f"correction {self.id!r}: unknown kind {self.kind!r}")
        if self.kind == "score" and self.session is None:
            raise ValueError(f"correction {self.id!r}: a score correction needs a session")
        if self.kind != "points" and Fraction(self.amount).denominator != 1:
            raise ValueError(f"correction {self.id!r}: scores are whole, got {self.amount!r}")


@dataclass(frozen=True, slots=True)
class Undo:
    """Withdraws the earlier log entry ``of`` (a correction or an undo, which it re-applies)."""

    id: str
    of: str
    reason: str = ""
    at: str = ""


LogEntry: TypeAlias = Correction | Undo


@dataclass(frozen=True, slots=True)
class SessionLine:
    """A player's session: where they sat and their corrected score and table points."""

    session: int
    table: int
    seat: int
    score: int
    table_points: Fraction


@dataclass(frozen=True, slots=True)
class Standing:
    """A player's line of the standings: totals include every correction in force
    (those without a line for their session only in the totals); ``byes``, the sessions
    the player sat out on a bye."""

    place: int
    player: str
    table_points: Fraction
    score: int
    sessions: tuple[SessionLine, ...]
    firsts: int
    best_session: int | None  # None: no session played (byes only, so far)
    byes: tuple[int, ...] = ()


def in_force(log: Sequence[LogEntry]) -> set[str]:
    """The ids of the log's entries in force: those no undo in force withdraws."""
    seen: set[str] = set()
    for entry in log:
        if entry.id in seen:
            raise ValueError(f"log entry id {entry.id!r} repeats")
        if isinstance(entry, Undo) and entry.of not in seen:
            raise ValueError(f"undo {entry.id!r} of {entry.of!r}: no earlier entry has that id")
        seen.add(entry.id)
    withdrawn: set[str] = set()
    active: set[str] = set()
    for entry in reversed(log):  # every undo of an entry comes after it
        if entry.id in withdrawn:
            continue
        active.add(entry.id)
        if isinstance(entry, Undo):
            withdrawn.add(entry.of)
    return active


def _corrections(log: Sequence[LogEntry]) -> list[Correction]:
    active = in_force(log)
    return [e for e in log if isinstance(e, Correction) and e.id in active]


def _lines(
    results: Sequence[SessionResult],
    corrections: Sequence[Correction],
    players: set[str],
) -> tuple[dict[str, list[SessionLine]], dict[str, list[bool]]]:
    """Each player's session lines with the corrections applied, and whether they were
    first (sole or shared) at their table in each; ``players`` are the participants."""
    sessions = {r.session for r in results}
    if len(sessions) != len(results):
        raise ValueError("session numbers repeat")
    held = seats_held(results)
    score_fix: dict[tuple[int, str], int] = defaultdict(int)
    penalty: dict[tuple[int, str], int] = defaultdict(int)
    points: dict[tuple[int, str], Fraction] = defaultdict(Fraction)
    for c in corrections:
        if c.player not in players:
            raise ValueError(f"correction {c.id!r}: {c.player!r} is not a participant")
        if c.session is None:
            continue
        if (c.session, c.player) not in held:
            raise ValueError(f"correction {c.id!r}: {c.player!r} did not play {c.session}")
        if c.kind == "score":
            score_fix[c.session, c.player] += int(c.amount)
        elif c.kind == "penalty":
            penalty[c.session, c.player] += int(c.amount)
        else:
            points[c.session, c.player] += Fraction(c.amount)
    lines: dict[str, list[SessionLine]] = defaultdict(list)
    firsts: dict[str, list[bool]] = defaultdict(list)
    for r in sorted(results, key=lambda r: r.session):
        for t in r.tables:
            holders = [_holder(p) for p in t.seats]  # a score correction corrects the seat
            scores = [
                s + (score_fix[r.session, p] if p is not None else 0)
                for p, s in zip(holders, t.scores, strict=True)
            ]
            tps = [
                tp + (points[r.session, p] if isinstance(p, str) else 0)
                for p, tp in zip(t.seats, table_points(scores), strict=True)
            ]
            for seat, (p, s, tp) in enumerate(zip(t.seats, scores, tps, strict=True)):
                if isinstance(p, Substitute):
                    continue
                score = s + penalty[r.session, p]
                lines[p].append(SessionLine(r.session, t.table, seat, score, tp))
                firsts[p].append(tp == max(tps))
    return lines, firsts


def seats_held(results: Sequence[SessionResult]) -> set[tuple[int, str]]:
    """(session, player) for each seat a session gave a player, whoever played it."""
    return {
        (r.session, p)
        for r in results
        for t in r.tables
        for p in map(_holder, t.seats)
        if p is not None
    }


def standings(
    results: Sequence[SessionResult],
    corrections: Sequence[LogEntry] = (),
    tie_breaks: Sequence[str] = ("table_points", "score"),
    players: Iterable[str] = (),
) -> list[Standing]:
    """The standings from the results and the log of corrections (the module's docstring
    says how), best first: every player seated in the results and every one of ``players``
    (listed even with no line: a bye, a session missed)."""
    for key in tie_breaks:
        if key not in TIE_BREAKS:
            raise ValueError(f"unknown tie-break {key!r}, expected one of {TIE_BREAKS!r}")
    participants = {
        p for r in results for t in r.tables for p in t.seats if isinstance(p, str)
    } | set(players)
    active = _corrections(corrections)
    lines, firsts = _lines(results, active, participants)
    # Entries with no line to go in: those without a session, and those for a session in
    # which a substitute played the player's seat (a score correction went in the seat's).
    played = {(ln.session, p) for p, player_lines in lines.items() for ln in player_lines}
    extra_points: dict[str, Fraction] = defaultdict(Fraction)
    extra_score: dict[str, int] = defaultdict(int)
    for c in active:
        if c.session is not None and ((c.session, c.player) in played or c.kind == "score"):
            continue
        if c.kind == "points":
            extra_points[c.player] += Fraction(c.amount)
        else:
            extra_score[c.player] += int(c.amount)
    byes: dict[str, list[int]] = defaultdict(list)
    for r in sorted(results, key=lambda r: r.session):
        for p in r.byes:
            byes[p].append(r.session)
    rows = {
        p: Standing(
            place=0,
            player=p,
            table_points=sum((ln.table_points for ln in lines[p]), extra_points[p]),
            score=sum((ln.score for ln in lines[p]), extra_score[p]),
            sessions=tuple(lines[p]),
            firsts=sum(firsts[p]),
            best_session=max((ln.score for ln in lines[p]), default=None),
            byes=tuple(byes[p]),
        )
        for p in participants
    }
    tables = {(r.session, t.table): t for r in results for t in r.tables}
    groups: list[list[str]] = [sorted(rows)]
    for key in tie_breaks:
        refined: list[list[str]] = []
        for group in groups:
            if len(group) == 1:
                refined.append(group)
                continue
            values = {p: _key(key, rows[p], set(group), tables) for p in group}
            ordered = sorted(group, key=lambda p: values[p], reverse=True)
            start = 0
            for i in range(1, len(ordered) + 1):
                if i == len(ordered) or values[ordered[i]] != values[ordered[start]]:
                    refined.append(sorted(ordered[start:i]))
                    start = i
        groups = refined
    out: list[Standing] = []
    for group in groups:
        place = len(out) + 1
        out.extend(_with_place(rows[p], place) for p in group)
    return out


def _with_place(row: Standing, place: int) -> Standing:
    return replace(row, place=place)


def _key(
    key: str,
    row: Standing,
    group: set[str],
    tables: Mapping[tuple[int, int], TableResult],
) -> Fraction | int | tuple[int, ...]:
    """A tie-break value, higher first (the player's id as negated code points)."""
    if key == "table_points":
        return row.table_points
    if key == "score":
        return row.score
    if key == "firsts":
        return row.firsts
    if key == "best_session":  # none (no session played) below every score
        return (0, 0) if row.best_session is None else (1, row.best_session)
    if key == "head_to_head":
        met = Fraction(0)
        for ln in row.sessions:
            mates = tables[ln.session, ln.table].seats
            if any(m != row.player and m in group for m in mates if isinstance(m, str)):
                met += ln.table_points
        return met
    # "player": ascending id, as a descending key (a prefix sorts first: pad with +1).
    return (*(-ord(ch) for ch in row.player), 1)


@dataclass(frozen=True, slots=True)
class Change:
    """How one player's totals and place moved."""

    player: str
    table_points: tuple[Fraction, Fraction]
    score: tuple[int, int]
    place: tuple[int, int]


@dataclass(frozen=True, slots=True)
class AuditLine:
    """One log entry, in order: the ids of the corrections it brought into force
    (``applied``: a correction itself, or the one an undo of an undo re-applies) or withdrew
    (an undo's), the players it moved, and whether the entry is still in force at the end of
    the log."""

    index: int
    entry: LogEntry
    applied: tuple[str, ...]
    withdrawn: tuple[str, ...]
    changes: tuple[Change, ...]
    in_force: bool


def audit(
    results: Sequence[SessionResult],
    corrections: Sequence[LogEntry],
    tie_breaks: Sequence[str] = ("table_points", "score"),
    players: Iterable[str] = (),
) -> list[AuditLine]:
    """Each entry of the log, in order, with its effect on the standings at that moment
    (the standings of the log up to it against those of the log before it; ``players`` as
    for ``standings``)."""
    players = tuple(players)
    final = in_force(corrections)
    before = {s.player: s for s in standings(results, (), tie_breaks, players)}
    active_before: set[str] = set()
    lines: list[AuditLine] = []
    for index, entry in enumerate(corrections):
        prefix = corrections[: index + 1]
        now_active = {e.id for e in _corrections(prefix)}
        after = {s.player: s for s in standings(results, prefix, tie_breaks, players)}
        changes = tuple(
            Change(
                p,
                (before[p].table_points, after[p].table_points),
                (before[p].score, after[p].score),
                (before[p].place, after[p].place),
            )
            for p in sorted(after)
            if (before[p].table_points, before[p].score, before[p].place)
            != (after[p].table_points, after[p].score, after[p].place)
        )
        lines.append(
            AuditLine(
                index,
                entry,
                tuple(sorted(now_active - active_before)),
                tuple(sorted(active_before - now_active)),
                changes,
                entry.id in final,
            )
        )
        before, active_before = after, now_active
    return lines


@dataclass(frozen=True, slots=True)
class DealResult:
    """One player's hand of a duplicate session: who held seat ``wind`` (0 East .. 3 North)
    on deal ``deal`` at ``table``, and their score change on it."""

    session: int
    deal: int
    wind: int
    table: int
    player: Seat
    delta: int


@dataclass(frozen=True, slots=True)
class DuplicateResult:
    """A player's duplicate result (the module docstring's formula): the hands compared,
    the summed difference against the datum, and the summed IMPs."""

    player: str
    deals: int
    difference: Fraction
    imps: int


def imp(difference: Fraction | int) -> int:
    """The IMPs of a difference (signed): the bridge scale on ten times its size.

    >>> imp(0), imp(Fraction(5, 3)), imp(2), imp(-5), imp(32), imp(400), imp(10_000)
    (0, 0, 1, -2, 8, 24, 24)
    """
    size = 10 * abs(Fraction(difference))
    value = sum(size >= t for t in IMP_THRESHOLDS)
    return value if difference >= 0 else -value


def duplicate_results(deals: Iterable[DealResult]) -> list[DuplicateResult]:
    """Each player's duplicate result, best IMPs first (then difference, then id)."""
    held: dict[tuple[int, int, int], list[DealResult]] = defaultdict(list)
    for d in deals:
        held[d.session, d.deal, d.wind].append(d)
    count: dict[str, int] = defaultdict(int)
    diff: dict[str, Fraction] = defaultdict(Fraction)
    imps: dict[str, int] = defaultdict(int)
    for (session, deal, wind), group in held.items():
        tables = [d.table for d in group]
        if len(set(tables)) != len(tables):
            raise ValueError(f"session {session} deal {deal} seat {wind}: a table twice")
        if len(group) < 2:
            continue
        total = sum(d.delta for d in group)
        for d in group:
            if isinstance(d.player, Substitute):
                continue
            own = d.delta - Fraction(total - d.delta, len(group) - 1)
            count[d.player] += 1
            diff[d.player] += own
            imps[d.player] += imp(own)
    out = [DuplicateResult(p, count[p], diff[p], imps[p]) for p in count]
    return sorted(out, key=lambda r: (-r.imps, -r.difference, r.player))


def _number(value: Fraction) -> str:
    """A Fraction as exact text: ``"2"``, ``"-1/2"``, ``"7/3"``."""
    return str(value)


DECIMAL_PLACES = 4  # table points as decimals: halves and quarters exact, thirds rounded
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what makes a spreadsheet cell a formula


def decimal(value: Fraction | int) -> str:
    """``value`` as a decimal that a spreadsheet reads as a number, rounded half to even to
    ``DECIMAL_PLACES`` places, no trailing zeros.

    >>> [decimal(Fraction(n, d)) for n, d in [(7, 4), (7, 3), (4, 1), (-1, 2), (1, 300000)]]
    ['1.75', '2.3333', '4', '-0.5', '0']
    """
    scaled = round(Fraction(value) * 10**DECIMAL_PLACES)  # an int, ties to even
    whole, part = divmod(abs(scaled), 10**DECIMAL_PLACES)
    text = f"{whole}.{part:0{DECIMAL_PLACES}d}".rstrip("0").rstrip(".")
    return f"-{text}" if scaled < 0 else text


def text_cell(value: str) -> str:
    """A text cell a spreadsheet shows as text: one that would start a formula (``=``,
    ``+``, ``-``, ``@``, a tab or a carriage return: OWASP's rule against CSV injection)
    gets a single quote before it. ``-1-1`` is written ``'-1-1``."""
    return f"'{value}" if value.startswith(FORMULA_START) else value


def _session_numbers(rows: Sequence[Standing]) -> list[int]:
    played = {ln.session for row in rows for ln in row.sessions}
    return sorted(played | {n for row in rows for n in row.byes})


def export_json(
    rows: Sequence[Standing], duplicate: Sequence[DuplicateResult] | None = None
) -> str:
    """The standings (and the duplicate results, if any) as JSON for a ranking body:
    players, places, table points, scores per session, and ``byes``, the sessions the
    player sat out on a bye (a session with no line and not in ``byes`` was missed another
    way: absent, or the seat played by a substitute). Table points are exact text
    (``"7/3"``) with a rounded ``*_decimal`` beside them."""
    data: dict[str, Any] = {
        "sessions": _session_numbers(rows),
        "standings": [
            {
                "place": row.place,
                "player": row.player,
                "table_points": _number(row.table_points),
                "table_points_decimal": float(decimal(row.table_points)),
                "score": row.score,
                "sessions": [
                    {
                        "session": ln.session,
                        "table": ln.table,
                        "seat": ln.seat,
                        "table_points": _number(ln.table_points),
                        "score": ln.score,
                    }
                    for ln in row.sessions
                ],
                "byes": list(row.byes),
            }
            for row in rows
        ],
    }
    if duplicate is not None:
        data["duplicate"] = [
            {
                "player": r.player,
                "deals": r.deals,
                "difference": _number(r.difference),
                "imps": r.imps,
            }
            for r in duplicate
        ]
    return json.dumps(data, ensure_ascii=False, indent=2)


def export_csv(rows: Sequence[Standing]) -> str:
    """The standings as CSV (RFC 4180: CRLF line ends, a cell with a comma, a quote or a
    line break quoted), to be opened in a spreadsheet: a header row, then one row per
    player: place, player, table points, score, then for each session the player's table,
    seat (0 East .. 3 North), table points and score (empty when the player did not play
    it), then for each session whether the player sat it out on a bye (1, else 0: the
    bye columns come after all the others, which keep their places). Numbers are written
    as numbers (a negative score stays a number), table points as decimals (``decimal``:
    ``7/4`` would open as a date); the one text cell, the player, is neutralised if it
    would start a formula (``text_cell``)."""
    numbers = _session_numbers(rows)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")  # RFC 4180; a CR in a cell is quoted too
    header = ["place", "player", "table_points", "score"]
    for n in numbers:
        header += [f"session_{n}_{column}" for column in ("table", "seat", "table_points", "score")]
    header += [f"session_{n}_bye" for n in numbers]
    writer.writerow(header)
    for row in rows:
        by_session = {ln.session: ln for ln in row.sessions}
        cells: list[str | int] = [
            row.place,
            text_cell(row.player),
            decimal(row.table_points),
            row.score,
        ]
        for n in numbers:
            ln = by_session.get(n)
            if ln is None:
                cells += ["", "", "", ""]
            else:
                cells += [ln.table, ln.seat, decimal(ln.table_points), ln.score]
        cells += [int(n in row.byes) for n in numbers]
        writer.writerow(cells)
    return out.getvalue()

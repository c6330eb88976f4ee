"""How ``guobiao tournament`` prints what the server answered: settings, seating,
the tournament, its standings, as aligned text (or JSON with ``--json``).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from server.tournaments.seating import WINDS

# ------------------------------------------------------------------ printing ---


def print_json(data: object) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2))


def next_session(data: dict[str, Any]) -> object:
    """The number of the session to come (the API's ``next_session``; else one past the
    last started)."""
    if data.get("next_session") is not None:
        return data["next_session"]
    started = [s["number"] for s in data.get("sessions", []) if s.get("state") != "seated"]
    return max(started, default=0) + 1


def occupant(seat: dict[str, Any]) -> str:
    player = str(seat.get("player"))
    sub = seat.get("substitute")
    return f"{player} (played by {sub})" if sub else player


def print_seating(view: dict[str, Any]) -> None:
    tables = view.get("tables") or []
    grid = [[str(t["table"]), *(occupant(s) for s in t.get("seats", []))] for t in tables]
    print_grid(["table", *WINDS], grid, "><<<<")
    byes = view.get("byes") or []
    print(f"byes: {', '.join(byes) if byes else 'none'}")
    repeats = view.get("repeats") or []
    if repeats:
        print("repeat opponents:")
        for r in repeats:
            sessions = ", ".join(str(n) for n in r.get("sessions", []))
            print(f"  {' and '.join(r.get('players', []))} (met in session {sessions})")
    else:
        print("no repeat opponents")
    if view.get("message"):
        print(view["message"])


def print_settings(data: dict[str, Any]) -> None:
    s = data.get("settings") or {}
    cap = s.get("time_cap_minutes")
    seating = s.get("seating")
    methods = ", ".join(seating) if isinstance(seating, list) else str(seating)
    print(
        f"  {s.get('sessions')} session(s) of {s.get('hands')} hand(s), rules {data.get('rules')}"
        f", time cap {f'{cap} min' if cap else 'none'}, turn {s.get('turn_seconds')} s"
        + (", duplicate" if s.get("duplicate") else "")
    )
    print(
        f"  seating {methods}; registration {s.get('registration')}, fill {s.get('fill')}, "
        f"check-in {'on' if s.get('check_in') else 'off'}, "
        f"{'public' if s.get('public') else 'private'}"
    )


def print_list(args: argparse.Namespace, data: dict[str, Any]) -> None:
    rows = data.get("tournaments") or []
    if args.json:
        print_json(rows)
        return
    if not rows:
        print("no public tournaments")
        return
    grid = [
        [
            str(t["id"]),
            str(t["name"]),
            str(t["state"]),
            f"{t['session']}/{t['sessions']}",
            str(t["players"]),
            "open" if t.get("registration_open") else "closed",
            str(t.get("rules")) + (", duplicate" if t.get("duplicate") else ""),
        ]
        for t in rows
    ]
    header = ["id", "name", "state", "session", "players", "registration", "rules"]
    print_grid(header, grid, "><<>><<")


def print_show(data: dict[str, Any]) -> None:
    print(
        f"tournament {data.get('id')}: {data.get('name')} ({data.get('state')}; registration "
        f"{'open' if data.get('registration_open') else 'closed'})"
    )
    print_settings(data)
    print(f"  directors: {', '.join(data.get('directors') or []) or 'none'}")
    players = data.get("players") or []
    registered = [p for p in players if p.get("status") == "registered"]
    withdrawn = [p["name"] for p in players if p.get("status") == "withdrawn"]
    names = ", ".join(p["name"] + ("*" if p.get("checked_in") else "") for p in registered)
    print(f"  players ({len(registered)}, * checked in): {names or 'none'}")
    if withdrawn:
        print(f"  withdrawn: {', '.join(withdrawn)}")
    for s in data.get("sessions") or []:
        tables = s.get("tables")
        count = len(tables) if isinstance(tables, list) else tables
        times = ", ".join(
            f"{label} {s[key]}"
            for key, label in (
                ("started_at", "started"),
                ("ends_at", "cap"),
                ("finished_at", "finished"),
            )
            if s.get(key)
        )
        print(
            f"  session {s.get('number')}: {s.get('state')} ({s.get('method')}), "
            f"{count} table(s)" + (f"; {times}" if times else "")
        )
    log = data.get("log") or []
    if log:
        print("  log:")
    for e in log:
        if e.get("kind") == "undo":
            what = f"undo of entry {e.get('of')}"
        else:
            where = f" in session {e['session']}" if e.get("session") else ""
            what = f"{e.get('kind')} {e.get('amount')} for {e.get('player')}{where}"
        gone = "" if e.get("in_force", True) else "  [undone]"
        print(
            f"    {e.get('id')}: {what}: {e.get('reason')} (by {e.get('by')}, {e.get('at')}){gone}"
        )


def print_standings(data: dict[str, Any]) -> None:
    rows = data.get("standings") or []
    if not rows:
        held = [s["number"] for s in data.get("sessions", []) if s.get("state") == "playing"]
        if held and (data.get("settings") or {}).get("duplicate"):
            print(
                f"no standings yet: duplicate session {held[-1]}'s results are held until "
                "its last table finishes"
            )
        else:
            print("no standings yet: no table has finished its match")
        return
    numbers = sorted({ln["session"] for row in rows for ln in row.get("sessions", [])})
    grid = []
    for row in rows:
        by_session = {ln["session"]: ln for ln in row.get("sessions", [])}
        cells = [str(row["place"]), str(row["player"]), points(row), f"{row['score']:+d}"]
        for n in numbers:
            ln = by_session.get(n)
            cells.append("-" if ln is None else f"{ln['table_points']} ({ln['score']:+d})")
        grid.append(cells)
    header = ["place", "player", "points", "score", *(f"S{n}" for n in numbers)]
    print_grid(header, grid, "><>>" + ">" * len(numbers))
    duplicate = data.get("duplicate") or []
    if duplicate:
        print("duplicate (each seat and deal against the others who held it):")
        grid = [
            [str(r["player"]), str(r["deals"]), str(r["difference"]), f"{r['imps']:+d}"]
            for r in duplicate
        ]
        print_grid(["player", "deals", "difference", "IMPs"], grid, "<>>>")


def print_grid(header: list[str], rows: list[list[str]], align: str) -> None:
    """Columns as wide as their widest cell, two spaces apart, aligned by ``align`` (one
    ``<`` or ``>`` a column)."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for cells in [header, *rows]:
        line = "  ".join(f"{c:{a}{w}}" for c, a, w in zip(cells, align, widths, strict=True))
        print(line.rstrip())


def points(row: dict[str, Any]) -> str:
    """Exact table points, with the decimal beside a fraction: ``7/3 (2.33)``."""
    text = str(row["table_points"])
    if "/" in text and isinstance(row.get("table_points_decimal"), int | float):
        return f"{text} ({row['table_points_decimal']:.2f})"
    return text


def fail(message: str, status: int = 1) -> int:
    print(f"guobiao tournament: {message}", file=sys.stderr)
    return status

"""``guobiao duel``: the same figures whatever the processes, presets, seatings, errors.

This is the duel's short run in CI: a couple of deals of the East round only (``--hands 4``).
Timings are printed but never compared.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from server.cli import main

SHORT = ["duel", "--deals", "2", "--hands", "4", "--seed", "5", "--quiet"]
# What depends on the clock: left out of comparisons.
TIMED_KEYS = ("speed", "decision_ms")
TIMED_LINES = ("decision ", "speed ")


def duel(
    args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str = "duel"
) -> tuple[str, dict[str, Any]]:
    out = tmp_path / f"{name}.json"
    assert main([*SHORT, *args, "--json", str(out)]) == 0
    text = capsys.readouterr().out
    figures = json.loads(out.read_text(encoding="utf-8"))
    return text, figures


def untimed(text: str, figures: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    lines = [line for line in text.splitlines() if not line.startswith(TIMED_LINES)]
    return lines, {k: v for k, v in figures.items() if k not in TIMED_KEYS}


def test_the_figures_are_the_same_in_one_process_or_two(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Three deals: two leave one degree of freedom, and an interval too wide to tell.
    bots = ["--challenger", "normal", "--reference", "fast", "--deals", "3"]
    one = duel([*bots, "--processes", "1"], tmp_path, capsys, "one")
    two = duel([*bots, "--processes", "2"], tmp_path, capsys, "two")
    assert untimed(*one) == untimed(*two)
    text, figures = one
    assert "normal (challenger) against fast (reference), one against three" in text
    assert "3 deals x 4 seatings, 48 hands" in text
    assert "(excludes 0; clustered by deal" in text and "median" in text and "hands/s" in text
    margin, sides = figures["margin"], figures["sides"]
    deals = figures["per_deal"]
    assert [d["deal"] for d in deals] == [0, 1, 2]
    points = sum(d["points"] for d in deals)
    seat_hands = sum(d["seat_hands"] for d in deals)
    assert margin["points_per_hand"] == points / seat_hands > 0
    assert margin["low"] > 0 and margin["clusters"] == 3
    assert sides["challenger"]["points"] == -sides["reference"]["points"] == points
    assert sides["reference"]["seat_hands"] == 3 * seat_hands == 3 * figures["hands"]
    assert figures["decision_ms"]["decisions"] > 0


def test_a_custom_preset_from_a_rules_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text(
        '[mine]\nvariant = "custom"\nwilds = "after"\ndealer_repeat = true\nrepeat_cap = 2\n',
        encoding="utf-8",
    )
    args = ["--challenger", "normal", "--reference", "normal", "--processes", "1"]
    text, figures = duel([*args, "--rules", "mine", "--rules-file", str(rules)], tmp_path, capsys)
    assert "rules mine" in text and figures["rules"] == "mine"
    # A bot against itself: the four seatings of a deal sum to the whole table.
    assert figures["margin"]["points_per_hand"] == 0 == figures["margin"]["high"]
    assert all(d["points"] == 0 for d in figures["per_deal"])
    assert figures["hands"] >= 2 * 4 * 4  # dealer repeat: at least the four deals a match


def test_seatings_given(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--challenger", "normal", "--reference", "fast", "--processes", "1"]
    text, figures = duel([*args, "--seating", "CCRR,rrcc"], tmp_path, capsys)
    assert "seatings CCRR,RRCC" in text and figures["seatings"] == ["CCRR", "RRCC"]
    sides = figures["sides"]
    assert sides["challenger"]["seat_hands"] == sides["reference"]["seat_hands"]
    assert sides["challenger"]["seat_hands"] == 2 * figures["hands"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--challenger", "nobody"], "unknown bot 'nobody'; known: "),
        (["--reference", "nobody"], "unknown bot 'nobody'; known: "),
        (["--rules", "nope"], "unknown rule preset 'nope'; known: mcr, custom"),
        (["--seating", "CRXR"], "bad seating 'CRXR'"),
        (["--seating", "CCCC"], "seating 'CCCC' needs both bots"),
    ],
)
def test_errors_are_one_line_and_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*SHORT, *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"guobiao duel: {message}")
    assert captured.err.count("\n") == 1


def test_a_missing_rules_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*SHORT, "--rules-file", str(tmp_path / "none.toml")]) == 2
    assert capsys.readouterr().err.startswith("guobiao duel: ")


def test_the_help_says_percent_once(capsys: pytest.CaptureFixture[str]) -> None:
    """The description is printed as written (argparse %-formats only the options' help)."""
    with pytest.raises(SystemExit):
        main(["duel", "--help"])
    out = capsys.readouterr().out
    assert "95% interval" in out and "%%" not in out, out

"""``guobiao simulate`` and ``guobiao replay``: records, logs, and checking a log."""

from __future__ import annotations

import contextlib
import io
import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from server.cli import main

REPO = Path(__file__).resolve().parents[2]

RECORD_KEYS = {
    "match", "hand_no", "round_wind", "dealer", "seat_winds", "dice", "result", "winner",
    "discarder", "hand", "self_drawn", "last_of_kind", "kong", "wall_last", "flowers", "fans",
    "fan_total", "deltas", "scores",
}  # fmt: skip


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    folder = tmp_path_factory.mktemp("simulate")
    out, log = folder / "hands.jsonl", folder / "actions.jsonl"
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        status = main(
            ["simulate", "--matches", "2", "--seed", "7", "--out", str(out), "--log", str(log),
             "--quiet"]
        )  # fmt: skip
    assert status == 0
    return out, log, text.getvalue()


def test_summary_reports_speed_rates_and_fans(simulated: tuple[Path, Path, str]) -> None:
    summary = simulated[2]
    assert "2 match(es), 32 hands, seed 7, bot default" in summary
    assert "hands/s" in summary and "wins" in summary and "draws" in summary
    assert "avg fan" in summary and "top fans" in summary


def test_out_has_one_complete_record_per_hand(simulated: tuple[Path, Path, str]) -> None:
    records = [json.loads(line) for line in simulated[0].read_text().splitlines()]
    assert len(records) == 32
    for record in records:
        assert set(record) == RECORD_KEYS
        assert sum(record["deltas"]) == 0
        assert len(record["seat_winds"]) == 4 and record["seat_winds"][record["dealer"]] == "E"
        if record["result"] == "win":
            assert record["fan_total"] == sum(f["points"] * f["count"] for f in record["fans"])
            assert record["fan_total"] - record["flowers"] >= 8
            assert record["hand"]
            assert (record["discarder"] is None) == record["self_drawn"]
        else:
            assert record["winner"] is None and record["fans"] == [] and record["hand"] is None
    for match in (0, 1):
        mine = [r for r in records if r["match"] == match]
        assert [r["hand_no"] for r in mine] == list(range(1, 17))
        running = [0, 0, 0, 0]
        for r in mine:
            running = [a + b for a, b in zip(running, r["deltas"], strict=True)]
            assert r["scores"] == running


def test_the_log_replays(
    simulated: tuple[Path, Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(simulated[1])]) == 0
    out = capsys.readouterr().out
    assert "replay ok: 2/2 matches, 32 hands checked" in out
    assert "hand 16" in out


def test_a_tampered_result_is_caught(
    simulated: tuple[Path, Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = simulated[1].read_text().splitlines()
    for i, line in enumerate(lines):
        entry = json.loads(line)
        if entry["type"] == "result" and entry["record"]["result"] == "win":
            entry["record"]["deltas"][entry["record"]["winner"]] += 1
            lines[i] = json.dumps(entry)
            break
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    assert main(["replay", str(bad), "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "replays differently" in out and "replay FAILED: 1/2 matches" in out


def test_a_changed_action_is_caught(
    simulated: tuple[Path, Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = simulated[1].read_text().splitlines()
    for i, line in enumerate(lines):
        entry = json.loads(line)
        if entry["type"] == "action" and entry["action"]["type"] == "discard":
            entry["action"]["tile"] = "9m" if entry["action"]["tile"] != "9m" else "1m"
            lines[i] = json.dumps(entry)
            break
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    assert main(["replay", str(bad), "--quiet"]) == 1
    assert "does not replay" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json\n", "line 1: not valid JSON"),
        (
            '{"type": "action", "match": 0, "hand": 1, "player": 0, "action": {"type": "pass"}}\n',
            "line 1: an entry before any 'match' line",
        ),
        (
            '{"type": "match", "match": 0, "seed": 1}\n{"type": "teleport"}\n',
            "line 2: unknown entry type 'teleport'",
        ),
        (
            '{"type": "match", "match": 0, "seed": 1}\n'
            '{"type": "action", "match": 0, "hand": 1, "player": 0, "action": {"type": "fly"}}\n',
            "line 2: malformed action entry",
        ),
        ("", "no match in the log"),
    ],
)
def test_a_corrupt_log_is_a_clear_error(
    content: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text(content)
    assert main(["replay", str(path)]) == 1
    assert message in capsys.readouterr().err


def test_missing_log_and_bad_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(tmp_path / "nope.jsonl")]) == 1
    assert "cannot read" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["simulate", "--matches", "0"])
    with pytest.raises(SystemExit):
        main(["simulate", "--bot", "genius"])
    assert main(["simulate", "--out", str(tmp_path / "no" / "such" / "dir.jsonl")]) == 1
    assert "cannot write" in capsys.readouterr().err


def test_verify_checks_the_commitment_and_rebuilds_the_deal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from server.table import commitment  # noqa: PLC0415

    salt = bytes(range(32))
    good = commitment(987654321, salt)
    args = ["verify", "--seed", "987654321", "--salt", salt.hex(), "--dealer-position", "2"]
    assert main([*args, "--commitment", good]) == 0
    out = capsys.readouterr().out
    assert "commitment OK" in out
    assert out.count("after flowers") == 4
    assert main([*args, "--commitment", "0" * 64]) == 1
    assert "MISMATCH" in capsys.readouterr().out
    assert main(["verify", "--seed", "1", "--salt", "zz", "--commitment", good]) == 2
    assert "--salt must be 64 hex digits" in capsys.readouterr().err
    upper = [*args[:4], salt.hex().upper(), *args[5:], "--commitment", f" {good.upper()}\n"]
    assert main(upper) == 0  # as pasted: either case, a blank around it
    assert "commitment OK" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--salt", "ab", "--salt must be 64 hex digits (32 bytes: the reveal's salt), got 'ab'"),
        ("--salt", "0" * 63, "--salt must be 64 hex digits"),
        ("--salt", "00" * 33, "--salt must be 64 hex digits"),
        ("--salt", "0 " * 32, "--salt must be 64 hex digits"),
        ("--salt", "g" * 64, "--salt must be 64 hex digits"),
        ("--salt", "", "--salt must be 64 hex digits"),
        ("--commitment", "9f2c...e1", "--commitment must be 64 hex digits (a sha256: the "
         "commit's commitment), got '9f2c...e1'"),
        ("--commitment", "0" * 65, "--commitment must be 64 hex digits"),
        ("--seed", str(2**64), "--seed must be a whole number 0..2**64-1 (the reveal's seed), "
         f"got {2**64}"),
        ("--seed", "-1", "--seed must be a whole number 0..2**64-1"),
    ],
)  # fmt: skip
def test_verify_refuses_what_no_reveal_gives_naming_the_option(
    capsys: pytest.CaptureFixture[str], option: str, value: str, message: str
) -> None:
    """A salt or commitment that is not 64 hex digits, or a seed out of range, is no reveal's:
    a usage error saying the form (docs/protocol.md, "Fairness"), never a MISMATCH."""
    given = {"--seed": "1", "--salt": "00" * 32, "--commitment": "0" * 64, option: value}
    args = ["verify"] + [word for pair in given.items() for word in pair]
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"guobiao verify: {message}") and captured.err.count("\n") == 1
    assert "MISMATCH" not in captured.out


def test_verify_under_a_custom_preset_shows_the_indicator(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from engine.table import HandState  # noqa: PLC0415
    from engine.tiles import Wind, name  # noqa: PLC0415
    from engine.wall import Wall  # noqa: PLC0415
    from server.presets import load_presets  # noqa: PLC0415
    from server.table import commitment  # noqa: PLC0415

    salt = bytes(range(32))
    seed = 987654321
    args = ["verify", "--seed", str(seed), "--salt", salt.hex(), "--dealer-position", "1"]
    args += ["--commitment", commitment(seed, salt)]
    for preset in ("custom", "custom-after", "custom-flowers"):
        rules = load_presets()[preset]
        hand = HandState(Wall.from_seed(seed, 1), (0, 1, 2, 3), 1, Wind.EAST, rules)
        hand.start()
        assert main([*args, "--rules", preset]) == 0
        out = capsys.readouterr().out
        if rules.wilds.uses_indicator:
            assert hand.indicator is not None
            assert f"indicator {name(hand.indicator)}" in out
            assert f"wild tile {name(min(hand.wilds))}" in out
        else:
            assert "indicator" not in out
    assert main([*args, "--rules", "riichi"]) == 2
    assert "unknown rule preset 'riichi'" in capsys.readouterr().err


def test_simulate_under_a_custom_preset_logs_its_rules_and_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, log = tmp_path / "hands.jsonl", tmp_path / "log.jsonl"
    args = ["simulate", "--matches", "1", "--seed", "4", "--rules", "custom", "--quiet"]
    assert main([*args, "--out", str(out), "--log", str(log)]) == 0
    assert "rules custom" in capsys.readouterr().out
    header = json.loads(log.read_text(encoding="utf-8").splitlines()[0])
    assert header["rules"] == "custom" and header["rule_options"]["wilds"] == "indicator"
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(records) >= 16 and all(sum(r["deltas"]) == 0 for r in records)
    assert all(r["indicator"] is not None for r in records)
    assert main(["replay", str(log), "--quiet"]) == 0
    assert f"replay ok: 1/1 matches, {len(records)} hands checked" in capsys.readouterr().out
    # The stored options win over the preset: a log whose options say 'flowers' is replayed
    # under flowers, and then the recorded results no longer match.
    lines = log.read_text(encoding="utf-8").splitlines()
    header["rule_options"]["wilds"] = "flowers"
    log.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    assert main(["replay", str(log), "--quiet"]) == 1
    assert main(["simulate", "--rules", "riichi"]) == 2
    assert "unknown rule preset 'riichi'" in capsys.readouterr().err


def test_a_binary_file_is_not_a_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bin.dat"
    path.write_bytes(bytes(range(128, 256)) * 20)
    assert main(["replay", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.err == f"guobiao replay: {path}: not UTF-8 text (byte 0), so not a match log\n"


def _first_match(log: Path) -> list[str]:
    return [line for line in log.read_text().splitlines() if json.loads(line)["match"] == 0]


def _results_at(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if json.loads(line)["type"] == "result"]


def test_a_log_cut_in_a_hand_is_incomplete_and_between_hands_says_so(
    simulated: tuple[Path, Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A log cut in a hand fails; one that ends between hands short of its match's length
    replays what it has, with a note (the server's log of a match stopped at a time cap
    ends so too)."""
    lines = _first_match(simulated[1])
    ends = _results_at(lines)
    path = tmp_path / "short.jsonl"
    path.write_text("\n".join(lines[: ends[3] + 3]) + "\n")
    assert main(["replay", str(path), "--quiet"]) == 1
    assert capsys.readouterr().out == (
        "match 0 (line 1): incomplete: the log ends in hand 5, before it is over\n"
        "replay FAILED: 0/1 matches, 0 hands checked\n"
    )
    short = "short of the 16 deals of its match line (a match stopped early, or a log cut short)"
    for cut, where, hands in ((ends[3] + 1, "after hand 4", 4), (1, "before any hand", 0)):
        path.write_text("\n".join(lines[:cut]) + "\n")
        assert main(["replay", str(path), "--quiet"]) == 0
        assert capsys.readouterr().out == (
            f"match 0 (line 1): note: the log ends {where}, {short}\n"
            f"replay ok: 1/1 matches, {hands} hands checked\n"
        )
    path.write_text("\n".join(lines) + "\n")  # the whole match: no note
    assert main(["replay", str(path), "--quiet"]) == 0
    assert capsys.readouterr().out == "replay ok: 1/1 matches, 16 hands checked\n"


def test_a_missing_result_line_is_incomplete(
    simulated: tuple[Path, Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _first_match(simulated[1])
    path = tmp_path / "no-result.jsonl"
    for gone, hand in ((_results_at(lines)[2], 3), (_results_at(lines)[-1], 16)):
        path.write_text("\n".join(lines[:gone] + lines[gone + 1 :]) + "\n")
        assert main(["replay", str(path), "--quiet"]) == 1
        assert f"incomplete: hand {hand} has no result line" in capsys.readouterr().out
    kept = [line for line in lines if json.loads(line)["type"] != "result"]
    path.write_text("\n".join(kept) + "\n")
    assert main(["replay", str(path), "--quiet"]) == 1
    assert "incomplete: hand 1 has no result line" in capsys.readouterr().out


def test_simulate_refuses_one_file_for_out_and_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    for out, log in (("same.jsonl", "same.jsonl"), ("same.jsonl", "sub/../same.jsonl")):
        assert main(["simulate", "--hands", "1", "--out", out, "--log", log, "--quiet"]) == 2
        assert capsys.readouterr().err == (
            f"guobiao simulate: --out and --log are the same file ({out}); give each its own\n"
        )
        assert not (tmp_path / "same.jsonl").exists()


def test_ctrl_c_says_how_far_it_got_and_leaves_whole_matches(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT) in a long run: one line says after how many matches it stopped
    (before, nothing: the last progress line and a blank one), and the log holds whole
    matches that replay."""
    out, log = tmp_path / "hands.jsonl", tmp_path / "log.jsonl"
    command = [sys.executable, "-m", "server", "simulate", "--matches", "100000", "--seed", "7"]
    run = subprocess.Popen(
        [*command, "--out", str(out), "--log", str(log)],
        cwd=REPO,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (log.exists() and log.stat().st_size) and time.monotonic() < deadline:
            time.sleep(0.05)  # (a match written: the run is under way)
        run.send_signal(signal.SIGINT)
        _, err = run.communicate(timeout=30)
    finally:
        run.kill()
    assert run.returncode == 130, err
    said = err.strip().splitlines()[-1]
    match = re.fullmatch(r"guobiao simulate: interrupted after (\d+) of 100000 matches; (.+)", said)
    assert match is not None, err
    assert match[2] == f"{out}, {log} hold those"
    done = int(match[1])
    assert done >= 1
    kept = [json.loads(line)["type"] for line in log.read_text().splitlines()]
    assert kept.count("match") in (done, done + 1)  # (the interruption between the two files)
    assert main(["replay", str(log)]) == 0
